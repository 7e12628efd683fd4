/* Runs every C test area (or those named on the command line) and reports the counts. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <time.h>

int test_failures = 0;
int test_checks = 0;
const char *test_current = "";
static int test_argc;
static char **test_argv;
static int tests_run = 0;

int test_selected(const char *name) {
    int i;
    if (test_argc <= 1) { tests_run++; return 1; }
    for (i = 1; i < test_argc; i++) {
        if (strstr(name, test_argv[i])) { tests_run++; return 1; }
    }
    return 0;
}

void test_expect_no_instances(void) {
    int64_t n = ember_instance_count();
    int i;
    /* ctx_free and the last releases may still be running on an event thread being stopped. */
    for (i = 0; i < 200 && n != 0; i++) { sleep_ms(5); n = ember_instance_count(); }
    test_checks++;
    if (n != 0) {
        test_failures++;
        fprintf(stderr, "FAIL [%s]: ember_instance_count() == %lld at the end of the test\n", test_current, (long long)n);
    }
}

void latch_init(latch *l) {
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->count = 0;
    l->last_code = 0;
    l->last_message[0] = '\0';
}

void latch_destroy(latch *l) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
}

void latch_add(latch *l, int code, const char *message) {
    pthread_mutex_lock(&l->mu);
    l->count++;
    l->last_code = code;
    if (message) {
        strncpy(l->last_message, message, sizeof l->last_message - 1);
        l->last_message[sizeof l->last_message - 1] = '\0';
    }
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

int latch_wait(latch *l, int n) {
    return latch_wait_for(l, n, 10);
}

int latch_wait_for(latch *l, int n, int seconds) {
    struct timespec ts;
    int ok;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    pthread_mutex_lock(&l->mu);
    while (l->count < n) {
        if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) != 0) break;
    }
    ok = l->count >= n;
    pthread_mutex_unlock(&l->mu);
    return ok;
}

int latch_count(latch *l) {
    int n;
    pthread_mutex_lock(&l->mu);
    n = l->count;
    pthread_mutex_unlock(&l->mu);
    return n;
}

void latch_write_cb(void *ctx, const ember_error *error) {
    latch_add((latch *)ctx, error->code, error->message);
}

static char json_buf[8192];

const char *doc_json(const ember_document *doc) {
    ember_error err;
    size_t len = 0;
    char *s = ember_document_data(doc, EMBER_FORMAT_JSON, &len, &err);
    if (!s) { snprintf(json_buf, sizeof json_buf, "<error %d: %s>", (int)err.code, err.message); return json_buf; }
    snprintf(json_buf, sizeof json_buf, "%s", s);
    ember_free(s);
    return json_buf;
}

const char *field_json(const ember_document *doc, const char *field) {
    ember_error err;
    char *s = ember_document_get(doc, field, EMBER_FORMAT_JSON, NULL, &err);
    if (!s) { snprintf(json_buf, sizeof json_buf, "<error %d>", (int)err.code); return json_buf; }
    snprintf(json_buf, sizeof json_buf, "%s", s);
    ember_free(s);
    return json_buf;
}

void set_json(ember_db *db, const char *path, const char *json) {
    ember_error err;
    CHECK(ember_doc_set(db, path, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
}

ember_db *open_db(void) {
    ember_error err;
    ember_db *db = ember_db_open(NULL, &err);
    CHECK(db != NULL);
    CHECK_OK(err);
    return db;
}

void sleep_ms(int ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

int remote_support = 0;

/* Opens a database on a host nothing answers at: a core-only libember refuses it. */
static int probe_remote_support(void) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    ember_settings_init(&s);
    s.host = "127.0.0.1:9";
    s.ssl = false;
    db = ember_db_open(&s, &err);
    ember_db_release(db);
    return db != NULL;
}

int main(int argc, char **argv) {
    test_argc = argc;
    test_argv = argv;
    remote_support = probe_remote_support();
    test_expect_no_instances();
    printf("libember %s, %s\n", ember_libversion(), remote_support ? "with remote support" : "core only (no remote support)");
    run_basics();
    run_db();
    run_documents();
    run_batches();
    run_transactions();
    run_queries();
    run_listeners();
    run_threads();
    run_storage();
    run_tree();
    run_boundary();
    run_events();
    run_fidelity();
    run_rules();
    run_remote();
    printf("ember C tests: %d tests, %d checks, %d failures\n", tests_run, test_checks, test_failures);
    return test_failures == 0 ? 0 : 1;
}
