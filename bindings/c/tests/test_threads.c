/* Threads: remove from another thread while the callback runs, close from another thread while
 * callbacks run, 8 threads using one database. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <stdatomic.h>

typedef struct slow {
    atomic_int running;
    atomic_int calls;
    atomic_int after_remove;
    atomic_int removed;
    atomic_int freed;
} slow;

static void slow_cb(void *ctx, const ember_snapshot *s, const ember_error *e) {
    slow *w = ctx;
    (void)s; (void)e;
    if (atomic_load(&w->removed)) atomic_fetch_add(&w->after_remove, 1);
    atomic_store(&w->running, 1);
    atomic_fetch_add(&w->calls, 1);
    sleep_ms(2);
    atomic_store(&w->running, 0);
}

static void slow_free(void *ctx) { atomic_fetch_add(&((slow *)ctx)->freed, 1); }

static void remove_while_running(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    slow w;
    ember_listener_token t;
    int i;
    memset(&w, 0, sizeof w);
    t = ember_query_listen(q, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, slow_cb, &w, slow_free, &err);
    for (i = 0; i < 20; i++) {
        char path[32];
        snprintf(path, sizeof path, "c/d%d", i);
        set_json(db, path, "{}");
    }
    while (atomic_load(&w.running) == 0) sleep_ms(1);
    ember_listener_remove(t);
    CHECK(atomic_load(&w.running) == 0);   /* not running when remove returned */
    atomic_store(&w.removed, 1);
    sleep_ms(30);
    CHECK(atomic_load(&w.after_remove) == 0);   /* and never again */
    ember_query_release(q);
    ember_db_release(db);
    CHECK(atomic_load(&w.freed) == 1);
}

typedef struct closer { ember_db *db; int delay_ms; } closer;

static void *close_later(void *p) {
    closer *c = p;
    sleep_ms(c->delay_ms);
    ember_db_close(c->db, NULL);
    return NULL;
}

static void close_from_other_thread(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    slow w[3];
    pthread_t th;
    closer c;
    int i, refused = 0;
    memset(w, 0, sizeof w);
    for (i = 0; i < 3; i++) ember_query_listen(q, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, slow_cb, &w[i], slow_free, &err);
    c.db = db;
    c.delay_ms = 15;
    pthread_create(&th, NULL, close_later, &c);
    for (i = 0; i < 400; i++) {
        char path[32];
        snprintf(path, sizeof path, "c/d%d", i % 50);
        if (!ember_doc_set(db, path, EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err)) {
            CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
            refused++;
        }
        if (i % 20 == 0) sleep_ms(1);
    }
    pthread_join(th, NULL);
    for (i = 0; i < 3; i++) {
        CHECK(atomic_load(&w[i].freed) == 1);
        CHECK(atomic_load(&w[i].running) == 0);
        atomic_store(&w[i].removed, 1);
    }
    sleep_ms(10);
    for (i = 0; i < 3; i++) CHECK(atomic_load(&w[i].after_remove) == 0);
    CHECK(refused > 0);
    ember_query_release(q);
    ember_db_release(db);
}

typedef struct worker { ember_db *db; int id; int failures; } worker;

static void *work(void *p) {
    worker *w = p;
    ember_error err;
    int i;
    for (i = 0; i < 100; i++) {
        char path[64], data[64];
        ember_document *d;
        snprintf(path, sizeof path, "t%d/d%d", w->id, i);
        snprintf(data, sizeof data, "{\"i\":%d,\"t\":%d}", i, w->id);
        if (!ember_doc_set(w->db, path, EMBER_FORMAT_JSON, data, EMBER_NTS, NULL, 0, NULL, NULL, &err)) w->failures++;
        d = ember_doc_get(w->db, path, EMBER_SOURCE_CACHE, &err);
        if (!d || !ember_document_exists(d)) w->failures++;
        ember_document_release(d);
        if (i % 25 == 0) {
            ember_query *q = ember_query_new(w->db, "shared", &err);
            ember_snapshot *s = ember_query_get(q, EMBER_SOURCE_DEFAULT, &err);
            if (!s) w->failures++;
            ember_snapshot_release(s);
            ember_query_release(q);
            snprintf(path, sizeof path, "shared/t%d-%d", w->id, i);
            if (!ember_doc_set(w->db, path, EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)) w->failures++;
        }
    }
    return NULL;
}

static void count_cb(void *ctx, const ember_snapshot *s, const ember_error *e) {
    (void)e;
    if (s) atomic_store((atomic_int *)ctx, (int)ember_snapshot_size(s));
}

/* A document's path and id are made on first use: eight threads asking for them at once all get
 * the same text, at the same address, for the handle's lifetime. */
typedef struct reader { const ember_snapshot *s; const char *path[64]; const char *id[64]; int failures; } reader;

static void *read_paths(void *p) {
    reader *r = p;
    size_t i;
    for (i = 0; i < 64; i++) {
        const ember_document *d = ember_snapshot_document(r->s, i);
        char want[32];
        snprintf(want, sizeof want, "p/d%02d", (int)i);
        r->path[i] = ember_document_path(d);
        r->id[i] = ember_document_id(d);
        if (!r->path[i] || strcmp(r->path[i], want) != 0 || !r->id[i] || strcmp(r->id[i], want + 2) != 0) r->failures++;
    }
    return NULL;
}

static void paths_from_eight_threads(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "p", &err);
    ember_snapshot *s;
    pthread_t th[8];
    reader r[8];
    int i, j;
    for (i = 0; i < 64; i++) {
        char path[32];
        snprintf(path, sizeof path, "p/d%02d", i);
        set_json(db, path, "{}");
    }
    s = ember_query_get(q, EMBER_SOURCE_CACHE, &err);
    CHECK_OK(err);
    CHECK(s && ember_snapshot_size(s) == 64);
    if (!s) { ember_query_release(q); ember_db_release(db); return; }
    for (i = 0; i < 8; i++) { memset(&r[i], 0, sizeof r[i]); r[i].s = s; pthread_create(&th[i], NULL, read_paths, &r[i]); }
    for (i = 0; i < 8; i++) { pthread_join(th[i], NULL); CHECK(r[i].failures == 0); }
    for (i = 1; i < 8; i++)
        for (j = 0; j < 64; j++) { CHECK(r[i].path[j] == r[0].path[j]); CHECK(r[i].id[j] == r[0].id[j]); }
    ember_snapshot_release(s);
    ember_query_release(q);
    ember_db_release(db);
}

static void eight_threads(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "shared", &err);
    pthread_t th[8];
    worker w[8];
    atomic_int seen;
    int i;
    int64_t n = 0;
    atomic_init(&seen, 0);
    ember_listener_token t = ember_query_listen(q, 0, count_cb, &seen, NULL, &err);
    for (i = 0; i < 8; i++) { w[i].db = db; w[i].id = i; w[i].failures = 0; pthread_create(&th[i], NULL, work, &w[i]); }
    for (i = 0; i < 8; i++) { pthread_join(th[i], NULL); CHECK(w[i].failures == 0); }
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_OK(err);
    CHECK(ember_query_count(q, &n, &err)); CHECK(n == 32);
    for (i = 0; i < 100 && atomic_load(&seen) != 32; i++) sleep_ms(5);
    CHECK(atomic_load(&seen) == 32);
    ember_listener_remove(t);
    ember_query_release(q);
    ember_db_release(db);
}


/* Adding listeners while another thread closes the database: an add that fails never has its
 * ctx_free called (the caller keeps the context); one that succeeds has it called once. The
 * close used to end a listener being added, call its ctx_free, and then fail the add. */
typedef struct { atomic_int freed; } race_ctx;
static void race_free(void *p) { atomic_fetch_add(&((race_ctx *)p)->freed, 1); }
static void race_cb(void *ctx, const ember_document *doc, const ember_error *error) { (void)ctx; (void)doc; (void)error; }

static void adds_racing_a_close(void) {
    enum { N = 400 };
    for (int round = 0; round < 40; round++) {
        ember_error err;
        ember_db *db = open_db();
        race_ctx *ctxs = calloc(N, sizeof *ctxs);
        int added[N];
        closer c;
        pthread_t th;
        c.db = db;
        c.delay_ms = 1 + round % 4;
        pthread_create(&th, NULL, close_later, &c);
        for (int i = 0; i < N; i++) {
            atomic_init(&ctxs[i].freed, 0);
            added[i] = ember_doc_listen(db, "c/a", 0, race_cb, &ctxs[i], race_free, &err) != 0;
            if (!added[i]) CHECK(atomic_load(&ctxs[i].freed) == 0);
        }
        pthread_join(th, NULL);
        ember_db_release(db);
        for (int i = 0; i < N; i++) CHECK(atomic_load(&ctxs[i].freed) == (added[i] ? 1 : 0));
        free(ctxs);
    }
}

void run_threads(void) {
    RUN(remove_while_running);
    RUN(close_from_other_thread);
    RUN(eight_threads);
    RUN(paths_from_eight_threads);
    RUN(adds_racing_a_close);
}
