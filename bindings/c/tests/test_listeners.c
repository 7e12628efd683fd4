/* Listeners: document and query events (metadata, changes with indexes), options, borrowed
 * snapshots kept with retain, removal (idempotent, from inside the callback), ctx_free. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

typedef struct rec {
    latch events;
    latch freed;
    int exists, pending, from_cache, size;
    char data[512];
    char changes[512];
    ember_listener_token token;
    int remove_self_at;      /* remove its own token on this event (1-based), 0: never */
    int close_db_at;
    ember_db *db;
    ember_snapshot *kept;
} rec;

static void rec_init(rec *r) {
    memset(r, 0, sizeof *r);
    latch_init(&r->events);
    latch_init(&r->freed);
}

static void rec_destroy(rec *r) {
    latch_destroy(&r->events);
    latch_destroy(&r->freed);
}

static void on_free(void *ctx) { latch_add(&((rec *)ctx)->freed, 0, NULL); }

static void on_doc(void *ctx, const ember_document *doc, const ember_error *error) {
    rec *r = ctx;
    int n = latch_count(&r->events) + 1;
    if (doc) {
        r->exists = ember_document_exists(doc);
        r->pending = ember_document_has_pending_writes(doc);
        r->from_cache = ember_document_is_from_cache(doc);
        snprintf(r->data, sizeof r->data, "%s", r->exists ? doc_json(doc) : "-");
    }
    if (r->remove_self_at == n) { ember_listener_remove(r->token); ember_listener_remove(r->token); }
    latch_add(&r->events, error ? error->code : 0, error ? error->message : NULL);
}

static void on_query(void *ctx, const ember_snapshot *s, const ember_error *error) {
    rec *r = ctx;
    size_t i;
    int n = latch_count(&r->events) + 1;
    if (s) {
        r->size = (int)ember_snapshot_size(s);
        r->pending = ember_snapshot_has_pending_writes(s);
        r->from_cache = ember_snapshot_is_from_cache(s);
        r->changes[0] = '\0';
        for (i = 0; i < ember_snapshot_change_count(s); i++) {
            ember_document_change c;
            char one[64];
            ember_snapshot_change(s, i, &c, NULL);
            snprintf(one, sizeof one, "%s%c%s:%d>%d", i ? " " : "", "AMR"[c.type], ember_document_id(c.document),
                     c.old_index == EMBER_NPOS ? -1 : (int)c.old_index, c.new_index == EMBER_NPOS ? -1 : (int)c.new_index);
            strncat(r->changes, one, sizeof r->changes - strlen(r->changes) - 1);
        }
        if (!r->kept) r->kept = ember_snapshot_retain(s);
    }
    if (r->remove_self_at == n) ember_listener_remove(r->token);
    if (r->close_db_at == n) ember_db_close(r->db, NULL);
    latch_add(&r->events, error ? error->code : 0, error ? error->message : NULL);
}

static void document_listener(void) {
    ember_error err;
    ember_db *db = open_db();
    rec r;
    rec_init(&r);
    r.token = ember_doc_listen(db, "c/a", EMBER_LISTEN_INCLUDE_METADATA_CHANGES, on_doc, &r, on_free, &err);
    CHECK(r.token != 0); CHECK_OK(err);
    CHECK(latch_wait(&r.events, 1));
    CHECK(!r.exists && !r.from_cache);
    CHECK(ember_db_disable_network(db, &err));
    CHECK(latch_wait(&r.events, 2));   /* metadata: now from cache */
    CHECK(r.from_cache);
    set_json(db, "c/a", "{\"x\":1}");
    CHECK(latch_wait(&r.events, 3));
    CHECK(r.exists && r.pending);
    CHECK_STR(r.data, "{\"x\":1}");
    CHECK(ember_db_enable_network(db, &err));
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err));
    sleep_ms(20);
    CHECK(!r.pending && !r.from_cache);
    ember_listener_remove(r.token);
    ember_listener_remove(r.token);   /* idempotent */
    CHECK(latch_wait(&r.freed, 1));
    set_json(db, "c/a", "{\"x\":2}");
    sleep_ms(20);
    CHECK(latch_count(&r.freed) == 1);
    ember_db_release(db);
    rec_destroy(&r);
}

static void query_listener_changes(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    rec r;
    int n;
    rec_init(&r);
    set_json(db, "c/b", "{\"n\":2}");
    set_json(db, "c/d", "{\"n\":4}");
    CHECK(ember_query_order_by(q, "n", false, &err));
    r.token = ember_query_listen(q, 0, on_query, &r, on_free, &err);
    ember_query_release(q);    /* the listener does not need it */
    CHECK(r.token != 0);
    CHECK(latch_wait(&r.events, 1));
    CHECK(r.size == 2);
    CHECK_STR(r.changes, "Ab:-1>0 Ad:-1>1");
    n = latch_count(&r.events);
    set_json(db, "c/c", "{\"n\":3}");
    CHECK(latch_wait(&r.events, n + 1));
    CHECK_STR(r.changes, "Ac:-1>1");
    CHECK(r.pending);
    n = latch_count(&r.events);
    set_json(db, "c/b", "{\"n\":5}");
    CHECK(latch_wait(&r.events, n + 1));
    CHECK_STR(r.changes, "Mb:0>2");
    n = latch_count(&r.events);
    CHECK(ember_doc_delete(db, "c/c", NULL, NULL, &err));
    CHECK(latch_wait(&r.events, n + 1));
    CHECK_STR(r.changes, "Rc:0>-1");
    CHECK(r.size == 2);
    /* the snapshot kept with retain is still readable */
    CHECK(r.kept && ember_snapshot_size(r.kept) == 2);
    CHECK_STR(ember_document_id(ember_snapshot_document(r.kept, 0)), "b");
    ember_snapshot_release(r.kept);
    ember_listener_remove(r.token);
    ember_db_release(db);
    CHECK(latch_count(&r.freed) == 1);
    rec_destroy(&r);
}

static void cache_source_and_metadata(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    rec r, m;
    rec_init(&r);
    rec_init(&m);
    r.token = ember_query_listen(q, EMBER_LISTEN_SOURCE_CACHE, on_query, &r, NULL, &err);
    CHECK(latch_wait(&r.events, 1));   /* at once, from the cache, even empty */
    CHECK(r.size == 0 && r.from_cache);
    m.token = ember_query_listen(q, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, on_query, &m, NULL, &err);
    CHECK(latch_wait(&m.events, 1));
    set_json(db, "c/x", "{}");
    CHECK(latch_wait(&m.events, 3));   /* the write, then its acknowledgement (metadata only) */
    CHECK(!m.pending);
    CHECK_STR(m.changes, "Mx:0>0");
    CHECK(latch_wait(&r.events, 2));
    CHECK(ember_query_listen(q, 4, on_query, &r, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_listen(q, 0, NULL, &r, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_doc_listen(db, "c", 0, on_doc, &r, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_doc_listen(db, "c/x", 0, NULL, &r, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_listener_remove(r.token);
    ember_listener_remove(m.token);
    if (r.kept) ember_snapshot_release(r.kept);
    if (m.kept) ember_snapshot_release(m.kept);
    ember_query_release(q);
    ember_db_release(db);
    rec_destroy(&r);
    rec_destroy(&m);
}

static void remove_from_inside(void) {
    ember_error err;
    ember_db *db = open_db();
    rec r;
    rec_init(&r);
    r.remove_self_at = 2;
    r.token = ember_doc_listen(db, "c/a", 0, on_doc, &r, on_free, &err);
    CHECK(latch_wait(&r.events, 1));
    set_json(db, "c/a", "{\"x\":1}");
    CHECK(latch_wait(&r.events, 2));
    CHECK(latch_wait(&r.freed, 1));   /* ctx_free after the callback that removed it */
    set_json(db, "c/a", "{\"x\":2}");
    set_json(db, "c/a", "{\"x\":3}");
    sleep_ms(30);
    CHECK(latch_count(&r.events) == 2);
    CHECK(latch_count(&r.freed) == 1);
    ember_listener_remove(r.token);
    ember_db_release(db);
    rec_destroy(&r);
}

static void close_ends_listeners(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    rec a, b;
    rec_init(&a);
    rec_init(&b);
    a.token = ember_query_listen(q, 0, on_query, &a, on_free, &err);
    b.token = ember_doc_listen(db, "c/x", 0, on_doc, &b, on_free, &err);
    CHECK(latch_wait(&a.events, 1) && latch_wait(&b.events, 1));
    CHECK(ember_db_close(db, &err));
    CHECK(latch_count(&a.freed) == 1 && latch_count(&b.freed) == 1);   /* before close returned */
    ember_listener_remove(a.token);   /* stale tokens do nothing */
    ember_listener_remove(b.token);
    CHECK(latch_count(&a.freed) == 1);
    if (a.kept) ember_snapshot_release(a.kept);
    ember_query_release(q);
    ember_db_release(db);
    rec_destroy(&a);
    rec_destroy(&b);
}

static void close_from_callback(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    rec a;
    rec_init(&a);
    a.db = db;
    a.close_db_at = 2;
    a.token = ember_query_listen(q, 0, on_query, &a, on_free, &err);
    CHECK(latch_wait(&a.events, 1));
    set_json(db, "c/y", "{}");
    CHECK(latch_wait(&a.events, 2));
    CHECK(latch_wait(&a.freed, 1));
    CHECK(!ember_doc_set(db, "c/z", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    if (a.kept) ember_snapshot_release(a.kept);
    ember_query_release(q);
    ember_db_release(db);
    rec_destroy(&a);
}

void run_listeners(void) {
    RUN(document_listener);
    RUN(query_listener_changes);
    RUN(cache_source_and_metadata);
    RUN(remove_from_inside);
    RUN(close_ends_listeners);
    RUN(close_from_callback);
}
