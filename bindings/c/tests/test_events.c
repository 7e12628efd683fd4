/* Listener events through the C ABI: each change carries its own document and the
 * changes' indexes replay exactly (docs/semantics.md 8), checked after every snapshot of randomized
 * batches over an ordered, limited query; a listener or observer of every kind removed from
 * inside the first of several due callbacks is never called again. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <stdlib.h>
#include <time.h>

/* ---------------------------------------------------------------- replay */

#define MAXDOCS 64

typedef struct {
    char id[MAXDOCS][16];
    char data[MAXDOCS][64];
    size_t n;
} doc_list;

typedef struct {
    pthread_mutex_t mu;
    doc_list list;          /* the last snapshot's documents, replayed from the changes */
    int snapshots;
    int bad;                /* failures seen on the event thread (reported by the test) */
    char why[256];
} replay_state;

static void list_remove(doc_list *l, size_t i) {
    memmove(l->id[i], l->id[i + 1], (l->n - i - 1) * sizeof l->id[0]);
    memmove(l->data[i], l->data[i + 1], (l->n - i - 1) * sizeof l->data[0]);
    l->n--;
}

static void list_insert(doc_list *l, size_t i, const char *id, const char *data) {
    memmove(l->id[i + 1], l->id[i], (l->n - i) * sizeof l->id[0]);
    memmove(l->data[i + 1], l->data[i], (l->n - i) * sizeof l->data[0]);
    snprintf(l->id[i], sizeof l->id[i], "%s", id);
    snprintf(l->data[i], sizeof l->data[i], "%s", data);
    l->n++;
}

static long list_find(const doc_list *l, const char *id) {
    for (size_t i = 0; i < l->n; i++) if (strcmp(l->id[i], id) == 0) return (long)i;
    return -1;
}

static void fail_replay(replay_state *st, const char *why, const char *id) {
    if (!st->bad) snprintf(st->why, sizeof st->why, "snapshot %d: %s (%s)", st->snapshots, why, id);
    st->bad++;
}

static void on_replay(void *ctx, const ember_snapshot *snap, const ember_error *error) {
    replay_state *st = ctx;
    ember_error err;
    pthread_mutex_lock(&st->mu);
    st->snapshots++;
    if (error) { fail_replay(st, "listener error", error->message); pthread_mutex_unlock(&st->mu); return; }
    doc_list before = st->list, l = st->list;
    size_t nc = ember_snapshot_change_count(snap);
    for (size_t i = 0; i < nc; i++) {
        ember_document_change c;
        if (!ember_snapshot_change(snap, i, &c, &err)) { fail_replay(st, "change", err.message); break; }
        const char *id = ember_document_id(c.document);
        char data[64];
        snprintf(data, sizeof data, "%s", doc_json(c.document));
        long was = list_find(&before, id);
        if (c.type == EMBER_CHANGE_ADDED && was >= 0) fail_replay(st, "ADDED a document that was there", id);
        if (c.type != EMBER_CHANGE_ADDED && was < 0) fail_replay(st, "REMOVED/MODIFIED a document that was not there", id);
        if (c.type != EMBER_CHANGE_ADDED) {
            if (c.old_index >= l.n || strcmp(l.id[c.old_index], id) != 0) { fail_replay(st, "old_index names another document", id); break; }
            list_remove(&l, c.old_index);
        }
        if (c.type != EMBER_CHANGE_REMOVED) {
            if (c.new_index > l.n) { fail_replay(st, "new_index past the end", id); break; }
            list_insert(&l, c.new_index, id, data);
        }
    }
    size_t n = ember_snapshot_size(snap);
    if (n != l.n) fail_replay(st, "replayed list has another size", "");
    for (size_t i = 0; i < n && i < l.n; i++) {
        const ember_document *d = ember_snapshot_document(snap, i);
        if (strcmp(ember_document_id(d), l.id[i]) != 0) { fail_replay(st, "replayed list differs at an id", l.id[i]); break; }
        if (strcmp(doc_json(d), l.data[i]) != 0) { fail_replay(st, "replayed list differs in data", l.id[i]); break; }
    }
    /* Take the snapshot's list as the next base either way (one failure is reported, not all). */
    st->list.n = 0;
    for (size_t i = 0; i < n && i < MAXDOCS; i++) {
        const ember_document *d = ember_snapshot_document(snap, i);
        list_insert(&st->list, i, ember_document_id(d), doc_json(d));
    }
    pthread_mutex_unlock(&st->mu);
}

static void randomized_batches_replay_exactly(void) {
    unsigned seed = (unsigned)time(NULL);
    const char *env = getenv("EMBER_REPLAY_SEED");
    if (env) seed = (unsigned)strtoul(env, NULL, 10);
    printf("randomized_batches_replay_exactly: seed %u (EMBER_REPLAY_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    for (int limit_to_last = 0; limit_to_last < 2; limit_to_last++) {
        ember_db *db = open_db();
        ember_error err;
        replay_state st;
        memset(&st, 0, sizeof st);
        pthread_mutex_init(&st.mu, NULL);
        ember_query *q = ember_query_new(db, "r", &err);
        CHECK(ember_query_order_by(q, "v", rand() % 2, &err));
        CHECK(limit_to_last ? ember_query_limit_to_last(q, 8, &err) : ember_query_limit(q, 8, &err));
        ember_listener_token t = ember_query_listen(q, 0, on_replay, &st, NULL, &err);
        CHECK(t != 0);
        int live[24] = {0};
        for (int b = 0; b < 250; b++) {
            ember_batch *batch = ember_batch_new(db, &err);
            int ops = 1 + rand() % 6, used[24] = {0};
            for (int k = 0; k < ops; k++) {
                int i = rand() % 24;
                if (used[i]) continue;     /* one write per document per batch */
                used[i] = 1;
                char path[32], json[64];
                snprintf(path, sizeof path, "r/d%02d", i);
                if (live[i] && rand() % 3 == 0) {
                    CHECK(ember_batch_delete(batch, path, &err));
                    live[i] = 0;
                } else {
                    snprintf(json, sizeof json, "{\"v\":%d,\"w\":%d}", rand() % 12, rand() % 3);
                    CHECK(ember_batch_set(batch, path, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, 0, &err));
                    live[i] = 1;
                }
            }
            CHECK(ember_batch_commit(batch, NULL, NULL, &err));
            ember_batch_release(batch);
        }
        latch done;
        latch_init(&done);
        CHECK(ember_db_wait_for_pending_writes(db, latch_write_cb, &done, &err));
        /* 250 batches, each a snapshot replayed under the lock: about 10 s under valgrind
           on a loaded 2-core machine, so this wait has a wider bound than the others. */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK(latch_wait_for(&done, 1, 120));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (getenv("EMBER_TEST_TIMES"))
            printf("randomized_batches_replay_exactly: drained in %.2f s\n",
                   (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        pthread_mutex_lock(&st.mu);
        CHECK(st.snapshots > 100);
        if (st.bad) fprintf(stderr, "replay (seed %u, %s): %s\n", seed, limit_to_last ? "limit_to_last" : "limit", st.why);
        CHECK(st.bad == 0);
        pthread_mutex_unlock(&st.mu);
        ember_listener_remove(t);
        ember_query_release(q);
        latch_destroy(&done);
        ember_db_close(db, &err);
        ember_db_release(db);
        pthread_mutex_destroy(&st.mu);
    }
}

/* ---------------------------------------------------------------- removal inside a callback */

/* How a callback removes its own listener or observer. */
enum { BY_TOKEN, BY_REMOVE_OBSERVER, BY_REF_REMOVE_ALL, BY_QUERY_REMOVE_ALL, BY_KINDS };
static const char *const BY_NAME[] = {"ember_listener_remove", "ember_ref_remove_observer",
                                      "ember_ref_remove_all_observers", "ember_tree_query_remove_all_observers"};

typedef struct {
    ember_listener_token token;   /* set by the test after the add call returns */
    int calls;
    int by;
    const ember_ref *ref;
    const ember_tree_query *query;
    latch go;                     /* the test made more events due */
} self_remover;

/* The first call waits until more events are due, then removes its own listener. */
static void self_remove(self_remover *s) {
    int n = __atomic_add_fetch(&s->calls, 1, __ATOMIC_SEQ_CST);
    if (n != 1) return;
    for (int i = 0; i < 2000 && __atomic_load_n(&s->token, __ATOMIC_SEQ_CST) == 0; i++) sleep_ms(5);
    latch_wait(&s->go, 1);
    ember_listener_token t = __atomic_load_n(&s->token, __ATOMIC_SEQ_CST);
    switch (s->by) {
    case BY_REMOVE_OBSERVER: ember_ref_remove_observer(s->ref, t); break;
    case BY_REF_REMOVE_ALL: ember_ref_remove_all_observers(s->ref); break;
    case BY_QUERY_REMOVE_ALL: ember_tree_query_remove_all_observers(s->query); break;
    default: ember_listener_remove(t); break;
    }
}

static void on_doc_rm(void *ctx, const ember_document *doc, const ember_error *e) { (void)doc; (void)e; self_remove(ctx); }
static void on_query_rm(void *ctx, const ember_snapshot *s, const ember_error *e) { (void)s; (void)e; self_remove(ctx); }
static void on_tree_rm(void *ctx, const ember_tree_snapshot *s, const char *prev, const ember_error *e) {
    (void)s; (void)prev; (void)e;
    self_remove(ctx);
}

static void on_keeper(void *ctx, const ember_tree_snapshot *s, const char *prev, const ember_error *e) {
    (void)s; (void)prev; (void)e;
    latch_add(ctx, 0, NULL);
}

static void tree_write(ember_db *db, const char *path, const char *json, int update) {
    ember_error err;
    ember_ref *r = ember_ref_new(db, path, &err);
    CHECK(r != NULL);
    if (update) CHECK(ember_ref_update(r, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, NULL, &err));
    else CHECK(ember_ref_set(r, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, NULL, &err));
    CHECK_OK(err);
    ember_ref_release(r);
}

/* After the events made due so far have run (or been skipped), exactly one call was made. */
static void expect_one_call(ember_db *db, self_remover *s, const char *what) {
    ember_error err;
    latch done;
    latch_init(&done);
    latch_add(&s->go, 0, NULL);
    for (int i = 0; i < 2000 && __atomic_load_n(&s->calls, __ATOMIC_SEQ_CST) == 0; i++) sleep_ms(5);
    CHECK(ember_db_wait_for_pending_writes(db, latch_write_cb, &done, &err));
    CHECK(latch_wait(&done, 1));
    sleep_ms(20);
    int calls = __atomic_load_n(&s->calls, __ATOMIC_SEQ_CST);
    if (calls != 1) fprintf(stderr, "%s: called %d times after removing itself in its first call\n", what, calls);
    CHECK(calls == 1);
    latch_destroy(&done);
    latch_destroy(&s->go);
}

static void removal_inside_first_due_callback(void) {
    static const struct { const char *name; int type; int on_query; const char *setup; const char *change; } tree_cases[] = {
        {"child_added", EMBER_EVENT_CHILD_ADDED, 0, "{\"a\":1,\"b\":2}", "{\"c\":3}"},
        {"child_added (query)", EMBER_EVENT_CHILD_ADDED, 1, "{\"a\":1,\"b\":2}", "{\"c\":3}"},
        {"child_changed", EMBER_EVENT_CHILD_CHANGED, 0, "{\"a\":1,\"b\":2}", "{\"a\":5,\"b\":6}"},
        {"child_removed", EMBER_EVENT_CHILD_REMOVED, 0, "{\"a\":1,\"b\":2,\"c\":3}", "{\"a\":null,\"b\":null}"},
        {"child_moved (query)", EMBER_EVENT_CHILD_MOVED, 1, "{\"a\":1,\"b\":2,\"c\":3}", "{\"a\":10,\"b\":20}"},
        {"value", EMBER_EVENT_VALUE, 0, "{\"a\":1}", "{\"a\":2}"},
        {"value (query)", EMBER_EVENT_VALUE, 1, "{\"a\":1}", "{\"a\":2}"},
    };
    for (size_t k = 0; k < sizeof tree_cases / sizeof tree_cases[0]; k++)
    for (int by = 0; by < BY_KINDS; by++) {
        if (by == BY_REF_REMOVE_ALL && tree_cases[k].on_query) continue;
        if (by == BY_QUERY_REMOVE_ALL && !tree_cases[k].on_query) continue;
        ember_db *db = open_db();
        ember_error err;
        self_remover s;
        char what[128];
        memset(&s, 0, sizeof s);
        s.by = by;
        snprintf(what, sizeof what, "%s observer removed by %s", tree_cases[k].name, BY_NAME[by]);
        latch_init(&s.go);
        tree_write(db, "p", tree_cases[k].setup, 0);
        ember_ref *r = ember_ref_new(db, "p", &err);
        /* A value observer holds the location and tells when its data is known (until then
         * changes raise no child events), so the observer under test sees every change. */
        latch known;
        latch_init(&known);
        ember_listener_token keeper = ember_ref_observe(r, EMBER_EVENT_VALUE, on_keeper, &known, NULL, &err);
        CHECK(keeper != 0);
        CHECK(latch_wait(&known, 1));
        ember_tree_query *q = ember_tree_query_new(r, &err);
        CHECK(ember_tree_query_order_by_value(q, &err));
        s.ref = r;
        s.query = q;
        ember_listener_token t = tree_cases[k].on_query
            ? ember_tree_query_observe(q, (ember_event_type)tree_cases[k].type, on_tree_rm, &s, NULL, &err)
            : ember_ref_observe(r, (ember_event_type)tree_cases[k].type, on_tree_rm, &s, NULL, &err);
        CHECK(t != 0);
        __atomic_store_n(&s.token, t, __ATOMIC_SEQ_CST);
        /* Two more events of this kind (child events come two per update). */
        tree_write(db, "p", tree_cases[k].change, 1);
        if (tree_cases[k].type == EMBER_EVENT_VALUE) tree_write(db, "p", "{\"a\":3}", 1);
        expect_one_call(db, &s, what);
        ember_listener_remove(t);
        ember_listener_remove(keeper);
        latch_destroy(&known);
        ember_tree_query_release(q);
        ember_ref_release(r);
        ember_db_close(db, &err);
        ember_db_release(db);
    }
    for (int query = 0; query < 2; query++) {
        ember_db *db = open_db();
        ember_error err;
        self_remover s;
        memset(&s, 0, sizeof s);
        latch_init(&s.go);
        set_json(db, "c/a", "{\"v\":1}");
        ember_query *q = ember_query_new(db, "c", &err);
        ember_listener_token t = query ? ember_query_listen(q, 0, on_query_rm, &s, NULL, &err)
                                       : ember_doc_listen(db, "c/a", 0, on_doc_rm, &s, NULL, &err);
        CHECK(t != 0);
        __atomic_store_n(&s.token, t, __ATOMIC_SEQ_CST);
        set_json(db, "c/a", "{\"v\":2}");
        set_json(db, "c/a", "{\"v\":3}");
        expect_one_call(db, &s, query ? "query listener" : "document listener");
        ember_listener_remove(t);
        ember_query_release(q);
        ember_db_close(db, &err);
        ember_db_release(db);
    }
}

void run_events(void) {
    RUN(randomized_batches_replay_exactly);
    RUN(removal_inside_first_due_callback);
}
