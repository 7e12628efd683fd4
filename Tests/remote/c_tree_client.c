/* The C process of the multi-user list test (Tests/remote/test_tree_lists.py).
 *
 *   c_tree_client DATABASE_HOST LIST N TOTAL
 *   c_tree_client --counter DATABASE_HOST PATH N
 *
 * Opens a database whose tree syncs with DATABASE_HOST (settings.database_host, plaintext),
 * observes child_added at LIST (printing `added KEY PREV` or `added KEY -`), pushes N children
 * ({"from": "c", "i": I}), prints `pushed KEY` for each, waits (60 s at most) until it has seen
 * TOTAL children, prints `done`. With --counter it runs N transactions one after another, each
 * adding 1 to the number at PATH (ember_ref_transaction), and prints `done`. Responsible for: driving libember's tree over a server from C
 * as the other languages' clients do; exit status 2 (state on stderr) on a timeout or an error. */
#define _POSIX_C_SOURCE 200809L
#include "ember.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int seen = 0;

/* On Ember's event thread: one line per child, flushed at once. */
static void on_added(void *ctx, const ember_tree_snapshot *snap, const char *prev, const ember_error *error) {
    (void)ctx;
    if (error) { fprintf(stderr, "observer error: %s\n", error->message); return; }
    pthread_mutex_lock(&lock);
    printf("added %s %s\n", ember_tree_snapshot_key(snap), prev ? prev : "-");
    fflush(stdout);
    seen++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void fail(const char *what, const ember_error *err) {
    fprintf(stderr, "%s: %s\n", what, err ? err->message : "");
    exit(2);
}

/* --counter: one transaction at a time, each waited for (30 s at most). */
static int tx_done_flag = 0, tx_code = 0;
static char tx_message[EMBER_ERROR_MESSAGE_SIZE];

static bool increment(void *ctx, const void *current, size_t len, ember_tree_tx *tx) {
    (void)ctx;
    char text[64];
    snprintf(text, sizeof text, "%.*s", (int)len, (const char *)current);
    long n = strcmp(text, "null") == 0 ? 0 : strtol(text, NULL, 10);
    char next[64];
    snprintf(next, sizeof next, "%ld", n + 1);
    return ember_tree_tx_set(tx, next, strlen(next), NULL);
}

static void tx_done(void *ctx, const ember_error *error, bool committed, const ember_tree_snapshot *snap) {
    (void)ctx; (void)snap;
    pthread_mutex_lock(&lock);
    tx_code = error->code ? error->code : (committed ? 0 : -1);
    snprintf(tx_message, sizeof tx_message, "%s", error->message);
    tx_done_flag = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static int counter(const char *host, const char *path, int n) {
    ember_error err;
    ember_settings s;
    ember_settings_init(&s);
    s.database_host = host;
    s.ssl = false;
    ember_db *db = ember_db_open(&s, &err);
    if (!db) fail("open", &err);
    ember_ref *ref = ember_ref_new(db, path, &err);
    if (!ref) fail("ref", &err);
    for (int i = 0; i < n; i++) {
        tx_done_flag = 0;
        if (!ember_ref_transaction(ref, EMBER_FORMAT_JSON, true, increment, tx_done, NULL, &err)) fail("transaction", &err);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 30;
        pthread_mutex_lock(&lock);
        while (!tx_done_flag) {
            if (pthread_cond_timedwait(&changed, &lock, &deadline) != 0) {
                pthread_mutex_unlock(&lock);
                fprintf(stderr, "transaction %d did not complete in 30 s\n", i);
                return 2;
            }
        }
        pthread_mutex_unlock(&lock);
        if (tx_code != 0) { fprintf(stderr, "transaction %d: %d %s\n", i, tx_code, tx_message); return 2; }
    }
    printf("done\n");
    fflush(stdout);
    ember_ref_release(ref);
    ember_db_release(db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--counter") == 0) return counter(argv[2], argv[3], atoi(argv[4]));
    if (argc != 5) { fprintf(stderr, "usage: c_tree_client DATABASE_HOST LIST N TOTAL\n"); return 2; }
    int n = atoi(argv[3]), total = atoi(argv[4]);
    ember_error err;
    ember_settings s;
    ember_settings_init(&s);
    s.database_host = argv[1];
    s.ssl = false;
    ember_db *db = ember_db_open(&s, &err);
    if (!db) fail("open", &err);
    ember_ref *list = ember_ref_new(db, argv[2], &err);
    if (!list) fail("ref", &err);
    ember_listener_token t = ember_ref_observe(list, EMBER_EVENT_CHILD_ADDED, on_added, NULL, NULL, &err);
    if (!t) fail("observe", &err);
    for (int i = 0; i < n; i++) {
        ember_ref *child = ember_ref_push(list, &err);
        if (!child) fail("push", &err);
        char json[64];
        snprintf(json, sizeof json, "{\"from\":\"c\",\"i\":%d}", i);
        if (!ember_ref_set(child, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, NULL, &err)) fail("set", &err);
        pthread_mutex_lock(&lock);
        printf("pushed %s\n", ember_ref_key(child));
        fflush(stdout);
        pthread_mutex_unlock(&lock);
        ember_ref_release(child);
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    pthread_mutex_lock(&lock);
    while (seen < total) {
        if (pthread_cond_timedwait(&changed, &lock, &deadline) != 0) {
            pthread_mutex_unlock(&lock);
            fprintf(stderr, "saw %d of %d children in 60 s\n", seen, total);
            return 2;
        }
    }
    pthread_mutex_unlock(&lock);
    printf("done\n");
    fflush(stdout);
    ember_listener_remove(t);
    ember_ref_release(list);
    ember_db_release(db);
    return 0;
}
