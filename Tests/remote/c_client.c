/* The C client process of the mixed-language tests (Tests/remote/README.md has the protocol).
 *
 *   c_client HOST COLLECTION NAME NAME1,NAME2,...   the rounds: listen, set COLLECTION/NAME in
 *                                                   rounds 1 and 2, wait for every named client
 *   c_client queue HOST PATH COLLECTION N           a durable client (server down): N increments
 *                                                   of COLLECTION/counter and N documents, queued,
 *                                                   then closed without waiting
 *   c_client drain HOST PATH                        the same file reopened: waits (90 s at most)
 *                                                   until every queued write is acknowledged
 *   c_client kill-writer HOST COLLECTION PREFIX N PACE_MS TOTAL
 *                                                   the server-kill test (test_kill.py): listens
 *                                                   to COLLECTION, then every PACE_MS merges
 *                                                   PREFIX<i> with {"i": i} and n += 1 (i < N)
 *                                                   without waiting; prints `write I T`, `ack I T`
 *                                                   (T: CLOCK_MONOTONIC ns), `offline`/`online`;
 *                                                   waits (90 s at most) for every ack and a
 *                                                   current snapshot of TOTAL documents, nothing
 *                                                   pending; prints `final PREFIX<i> n` and `done`
 *
 * Responsible for: driving libember over settings.host from C as the other languages' clients
 * do; every wait is bounded; exit status 2 (state on stderr) on a timeout or an error. */
#define _POSIX_C_SOURCE 200809L
#include "ember.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_NAMES 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int synced = 0;
static int own_pending = -1;            /* -1: own document not seen yet */
static char pending_seq[256] = "";      /* "true,false,..." repeats dropped */
static int last_pending = -1;
static const char *names[MAX_NAMES];
static int rounds[MAX_NAMES];
static int name_count = 0;
static const char *me = "";
static char listener_error[EMBER_ERROR_MESSAGE_SIZE + 16] = "";

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *why, const ember_error *err) {
    int i;
    pthread_mutex_lock(&mu);
    fprintf(stderr, "c client %s: %s%s%s; synced=%d pending=[%s]", me, why, err ? ": " : "", err ? err->message : "",
            synced, pending_seq);
    for (i = 0; i < name_count; i++) fprintf(stderr, " %s=%d", names[i], rounds[i]);
    fprintf(stderr, "\n");
    pthread_mutex_unlock(&mu);
    exit(2);
}

/* The query listener (event thread): the server's first answer, each client's round, and the
 * own document's pending flag. */
static void on_snapshot(void *ctx, const ember_snapshot *snap, const ember_error *error) {
    size_t i, n;
    int k;
    (void)ctx;
    pthread_mutex_lock(&mu);
    if (error) {
        snprintf(listener_error, sizeof listener_error, "%d %s", (int)error->code, error->message);
        pthread_mutex_unlock(&mu);
        return;
    }
    if (!ember_snapshot_is_from_cache(snap)) synced = 1;
    n = ember_snapshot_size(snap);
    for (i = 0; i < n; i++) {
        const ember_document *doc = ember_snapshot_document(snap, i);
        const char *id = ember_document_id(doc);
        char *round = ember_document_get(doc, "round", EMBER_FORMAT_JSON, NULL, NULL);
        for (k = 0; k < name_count; k++) {
            if (strcmp(names[k], id) == 0) rounds[k] = round ? atoi(round) : 0;
        }
        ember_free(round);
        if (strcmp(id, me) == 0) {
            int p = ember_document_has_pending_writes(doc) ? 1 : 0;
            if (p != last_pending && strlen(pending_seq) < sizeof pending_seq - 8) {
                if (last_pending != -1) strcat(pending_seq, ",");
                strcat(pending_seq, p ? "true" : "false");
                last_pending = p;
            }
            own_pending = p;
        }
    }
    pthread_mutex_unlock(&mu);
}

/* Every name's document at `*round` and none of ours pending (a listener error ends the run). */
static int round_reached(void *round) {
    int k, ok = own_pending == 0;
    if (listener_error[0]) { pthread_mutex_unlock(&mu); die("listener error", NULL); }
    for (k = 0; k < name_count; k++) ok = ok && rounds[k] >= *(int *)round;
    return ok;
}

/* Polls `ready(arg)` under the mutex every `poll_ms` until it is true; past `seconds`, calls
 * `explain` (if any, under the mutex) and dies with `what`. */
static void wait_until(int (*ready)(void *), void *arg, double seconds, int poll_ms, void (*explain)(void),
                       const char *what) {
    double deadline = now_s() + seconds;
    for (;;) {
        int ok;
        pthread_mutex_lock(&mu);
        ok = ready(arg);
        if (!ok && now_s() > deadline) {
            if (explain) explain();
            pthread_mutex_unlock(&mu);
            die(what, NULL);
        }
        pthread_mutex_unlock(&mu);
        if (ok) return;
        sleep_ms(poll_ms);
    }
}

static int is_synced(void *arg) { (void)arg; return synced; }

/* Waits (at most 60 s) until the listener's first snapshot from the server has arrived. */
static void wait_synced(void) {
    wait_until(is_synced, NULL, 60, 5, NULL, "timed out waiting for the server's first answer");
}

static ember_db *open_host(const char *host, const char *path) {
    ember_settings s;
    ember_error err;
    ember_db *db;
    ember_settings_init(&s);
    s.host = host;
    s.ssl = false;
    s.path = path;
    db = ember_db_open(&s, &err);
    if (!db) die("ember_db_open", &err);
    return db;
}

static int run_rounds(const char *host, const char *collection, char *list) {
    ember_error err;
    ember_db *db = open_host(host, NULL);
    ember_query *q = ember_query_new(db, collection, &err);
    ember_listener_token token;
    char path[512], data[256];
    char *tok;
    int round, k;
    for (tok = strtok(list, ","); tok && name_count < MAX_NAMES; tok = strtok(NULL, ",")) names[name_count++] = tok;
    if (!q) die("ember_query_new", &err);
    token = ember_query_listen(q, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, on_snapshot, NULL, NULL, &err);
    if (!token) die("ember_query_listen", &err);
    ember_query_release(q);
    wait_synced();
    snprintf(path, sizeof path, "%s/%s", collection, me);
    for (round = 1; round <= 2; round++) {
        snprintf(data, sizeof data, "{\"name\":\"%s\",\"round\":%d,\"lang\":\"c\"}", me, round);
        if (!ember_doc_set(db, path, EMBER_FORMAT_JSON, data, EMBER_NTS, NULL, 0, NULL, NULL, &err)) die("ember_doc_set", &err);
        wait_until(round_reached, &round, 60, 5, NULL, "timed out waiting for a round");
    }
    ember_listener_remove(token);
    pthread_mutex_lock(&mu);
    printf("pending %s\n", pending_seq);
    for (k = 0; k < name_count; k++) printf("saw %s %d\n", names[k], rounds[k]);
    pthread_mutex_unlock(&mu);
    printf("done\n");
    ember_db_release(db);
    return 0;
}

static int run_queue(const char *host, const char *path, const char *collection, int n) {
    ember_error err;
    ember_db *db = open_host(host, path);
    char doc[512], data[64];
    int i;
    snprintf(doc, sizeof doc, "%s/counter", collection);
    for (i = 0; i < n; i++) {
        if (!ember_doc_merge(db, doc, EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"n\":{\"increment\":1}}", EMBER_NTS,
                             NULL, 0, NULL, NULL, &err)) die("ember_doc_merge", &err);
    }
    for (i = 0; i < n; i++) {
        snprintf(doc, sizeof doc, "%s/d%d", collection, i);
        snprintf(data, sizeof data, "{\"i\":%d}", i);
        if (!ember_doc_set(db, doc, EMBER_FORMAT_JSON, data, EMBER_NTS, NULL, 0, NULL, NULL, &err)) die("ember_doc_set", &err);
    }
    if (!ember_db_close(db, &err)) die("ember_db_close", &err);
    ember_db_release(db);
    printf("queued %d\n", 2 * n);
    return 0;
}

static int drained = 0;
static ember_error drain_error;

static void on_drained(void *ctx, const ember_error *error) {
    (void)ctx;
    pthread_mutex_lock(&mu);
    drain_error = *error;
    drained = 1;
    pthread_mutex_unlock(&mu);
}

static int is_drained(void *arg) { (void)arg; return drained; }

static int run_drain(const char *host, const char *path) {
    ember_error err;
    ember_db *db = open_host(host, path);
    if (!ember_db_wait_for_pending_writes(db, on_drained, NULL, &err)) die("ember_db_wait_for_pending_writes", &err);
    printf("waiting\n");
    fflush(stdout);
    wait_until(is_drained, NULL, 90, 10, NULL, "timed out waiting for the queued writes' acknowledgements");
    if (drain_error.code != EMBER_OK) die("the queued writes failed", &drain_error);
    printf("drained\n");
    ember_db_release(db);
    return 0;
}

/* ---- kill-writer ---- */
#define KILL_MAX 1000
static int kill_n[KILL_MAX];            /* n of PREFIX<i> in the last snapshot, -1 missing */
static int kill_acks = 0, kill_size = 0, kill_from_cache = 1, kill_pending = 1, kill_online = 0;
static const char *kill_prefix = "";
static int kill_count = 0;

static unsigned long long mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void on_kill_ack(void *ctx, const ember_error *error) {
    int i = (int)(size_t)ctx;
    pthread_mutex_lock(&mu);
    if (error->code != EMBER_OK) {
        snprintf(listener_error, sizeof listener_error, "write %d: %d %s", i, (int)error->code, error->message);
    } else {
        kill_acks++;
        printf("ack %d %llu\n", i, mono_ns());
        fflush(stdout);
    }
    pthread_mutex_unlock(&mu);
}

static void on_kill_snapshot(void *ctx, const ember_snapshot *snap, const ember_error *error) {
    size_t i, n, plen = strlen(kill_prefix);
    int k, from_cache;
    (void)ctx;
    pthread_mutex_lock(&mu);
    if (error) {
        snprintf(listener_error, sizeof listener_error, "%d %s", (int)error->code, error->message);
        pthread_mutex_unlock(&mu);
        return;
    }
    from_cache = ember_snapshot_is_from_cache(snap) ? 1 : 0;
    if (synced && kill_online && from_cache) { printf("offline\n"); fflush(stdout); }
    if (synced && !kill_online && !from_cache) { printf("online\n"); fflush(stdout); }
    if (!from_cache) synced = 1;
    if (synced) kill_online = !from_cache;
    kill_from_cache = from_cache;
    kill_pending = ember_snapshot_has_pending_writes(snap) ? 1 : 0;
    n = ember_snapshot_size(snap);
    kill_size = (int)n;
    for (k = 0; k < kill_count; k++) kill_n[k] = -1;
    for (i = 0; i < n; i++) {
        const ember_document *doc = ember_snapshot_document(snap, i);
        const char *id = ember_document_id(doc);
        if (strncmp(id, kill_prefix, plen) == 0) {
            k = atoi(id + plen);
            if (k >= 0 && k < kill_count) {
                char *v = ember_document_get(doc, "n", EMBER_FORMAT_JSON, NULL, NULL);
                kill_n[k] = v ? atoi(v) : 0;
                ember_free(v);
            }
        }
    }
    pthread_mutex_unlock(&mu);
}

/* Every write acknowledged and the listener current with every document (a listener error
 * ends the run). */
static int kill_total;
static int kill_settled(void *arg) {
    (void)arg;
    if (listener_error[0]) { pthread_mutex_unlock(&mu); die(listener_error, NULL); }
    return kill_acks == kill_count && !kill_from_cache && !kill_pending && kill_size == kill_total;
}

static void kill_explain(void) {
    fprintf(stderr, "acks=%d size=%d from_cache=%d pending=%d\n", kill_acks, kill_size, kill_from_cache, kill_pending);
}

static int run_kill_writer(const char *host, const char *collection, const char *prefix, int count, int pace_ms,
                           int total) {
    ember_error err;
    ember_db *db = open_host(host, NULL);
    ember_query *q = ember_query_new(db, collection, &err);
    ember_listener_token token;
    char path[512], data[64];
    int i;
    if (count < 0 || count > KILL_MAX) die("N out of range", NULL);
    kill_prefix = prefix;
    kill_count = count;
    if (!q) die("ember_query_new", &err);
    token = ember_query_listen(q, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, on_kill_snapshot, NULL, NULL, &err);
    if (!token) die("ember_query_listen", &err);
    ember_query_release(q);
    wait_synced();
    pthread_mutex_lock(&mu);
    printf("listening\n");
    fflush(stdout);
    pthread_mutex_unlock(&mu);
    for (i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s%d", collection, prefix, i);
        snprintf(data, sizeof data, "{\"i\":%d}", i);
        pthread_mutex_lock(&mu);
        printf("write %d %llu\n", i, mono_ns());
        fflush(stdout);
        pthread_mutex_unlock(&mu);
        if (!ember_doc_merge(db, path, EMBER_FORMAT_JSON, data, EMBER_NTS, "{\"n\":{\"increment\":1}}", EMBER_NTS,
                             NULL, 0, on_kill_ack, (void *)(size_t)i, &err)) die("ember_doc_merge", &err);
        sleep_ms(pace_ms);
    }
    kill_total = total;
    wait_until(kill_settled, NULL, 90, 10, kill_explain,
               "timed out waiting for every acknowledgement and a current snapshot of every document");
    ember_listener_remove(token);
    pthread_mutex_lock(&mu);
    for (i = 0; i < count; i++) printf("final %s%d %d\n", prefix, i, kill_n[i]);
    printf("done\n");
    fflush(stdout);
    pthread_mutex_unlock(&mu);
    ember_db_release(db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "queue") == 0) { me = "queue"; return run_queue(argv[2], argv[3], argv[4], atoi(argv[5])); }
    if (argc == 4 && strcmp(argv[1], "drain") == 0) { me = "drain"; return run_drain(argv[2], argv[3]); }
    if (argc == 8 && strcmp(argv[1], "kill-writer") == 0) {
        me = "kill-writer";
        return run_kill_writer(argv[2], argv[3], argv[4], atoi(argv[5]), atoi(argv[6]), atoi(argv[7]));
    }
    if (argc == 5) { me = argv[3]; return run_rounds(argv[1], argv[2], argv[4]); }
    fprintf(stderr, "usage: c_client HOST COLLECTION NAME NAMES | queue HOST PATH COLLECTION N | drain HOST PATH"
                    " | kill-writer HOST COLLECTION PREFIX N PACE_MS TOTAL\n");
    return 64;
}
