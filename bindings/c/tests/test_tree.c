/* The tree through the C ABI: refs (navigation, push ids, key errors), set / update / remove /
 * get, event sequences (child_added once per existing child, changed / moved with the previous
 * key, removed, value), query windows (limit refill, limit_to_last, ranges), query errors,
 * removal from inside a callback, remove_all not recursive, snapshots kept with retain. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- an event recorder: "A:key:prev" per child event, "V:json" per value event ---- */

typedef struct recorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int events;
    int freed;
    int errors;
    char log[8192];
} recorder;

typedef struct observer {
    recorder *r;
    char type;                   /* A R C M V */
    int remove_self_after;       /* > 0: remove its own token after that many events */
    int seen;
    ember_listener_token token;
    const ember_tree_snapshot *kept;   /* retained first snapshot (when keep) */
    int keep;
} observer;

static void rec_init(recorder *r) {
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->events = r->freed = r->errors = 0;
    r->log[0] = '\0';
}

static void rec_destroy(recorder *r) {
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
}

static void rec_append(recorder *r, const char *s) {
    size_t n = strlen(r->log);
    snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "", s);
}

static void on_event(void *ctx, const ember_tree_snapshot *snap, const char *prev, const ember_error *error) {
    observer *o = ctx;
    char line[512];
    if (!snap) {
        pthread_mutex_lock(&o->r->mu);
        o->r->errors++;
        o->r->events++;
        pthread_cond_broadcast(&o->r->cv);
        pthread_mutex_unlock(&o->r->mu);
        (void)error;
        return;
    }
    if (o->type == 'V') {
        char *v = ember_tree_snapshot_value(snap, EMBER_FORMAT_JSON, NULL, NULL);
        snprintf(line, sizeof line, "V:%s", v ? v : "?");
        ember_free(v);
    } else if (o->type == 'C' || o->type == 'M') {
        char *v = ember_tree_snapshot_value(snap, EMBER_FORMAT_JSON, NULL, NULL);
        snprintf(line, sizeof line, "%c:%s:%s=%s", o->type, ember_tree_snapshot_key(snap), prev ? prev : "-", v ? v : "?");
        ember_free(v);
    } else {
        snprintf(line, sizeof line, "%c:%s:%s", o->type, ember_tree_snapshot_key(snap), prev ? prev : "-");
    }
    if (o->keep && !o->kept) o->kept = ember_tree_snapshot_retain(snap);
    o->seen++;
    if (o->remove_self_after && o->seen == o->remove_self_after) {
        ember_listener_token t;
        pthread_mutex_lock(&o->r->mu);   /* held by the observing thread until the token is stored */
        t = o->token;
        pthread_mutex_unlock(&o->r->mu);
        ember_listener_remove(t);
    }
    pthread_mutex_lock(&o->r->mu);
    rec_append(o->r, line);
    o->r->events++;
    pthread_cond_broadcast(&o->r->cv);
    pthread_mutex_unlock(&o->r->mu);
}

static void on_free(void *ctx) {
    observer *o = ctx;
    pthread_mutex_lock(&o->r->mu);
    o->r->freed++;
    pthread_cond_broadcast(&o->r->cv);
    pthread_mutex_unlock(&o->r->mu);
}

/* Waits until at least n events arrived (10 s), then 30 ms more so extra events would show. */
static void rec_wait(recorder *r, int n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&r->mu);
    while (r->events < n && pthread_cond_timedwait(&r->cv, &r->mu, &ts) == 0) {}
    pthread_mutex_unlock(&r->mu);
    sleep_ms(30);
}

/* Waits until ctx_free ran n times (10 s); returns whether it did. */
static int rec_wait_freed(recorder *r, int n) {
    struct timespec ts;
    int ok;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&r->mu);
    while (r->freed < n && pthread_cond_timedwait(&r->cv, &r->mu, &ts) == 0) {}
    ok = r->freed == n;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* The log so far, then cleared. */
static const char *rec_take(recorder *r) {
    static char out[8192];
    pthread_mutex_lock(&r->mu);
    snprintf(out, sizeof out, "%s", r->log);
    r->log[0] = '\0';
    r->events = 0;
    pthread_mutex_unlock(&r->mu);
    return out;
}

static ember_listener_token watch(const ember_ref *ref, const ember_tree_query *q, char type, observer *o, recorder *r) {
    ember_error err;
    ember_event_type t = type == 'A' ? EMBER_EVENT_CHILD_ADDED : type == 'R' ? EMBER_EVENT_CHILD_REMOVED
                       : type == 'C' ? EMBER_EVENT_CHILD_CHANGED : type == 'M' ? EMBER_EVENT_CHILD_MOVED : EMBER_EVENT_VALUE;
    memset(o, 0, sizeof *o);
    o->r = r;
    o->type = type;
    o->token = q ? ember_tree_query_observe(q, t, on_event, o, on_free, &err)
                 : ember_ref_observe(ref, t, on_event, o, on_free, &err);
    CHECK(o->token != 0); CHECK_OK(err);
    return o->token;
}

/* Sets a value and waits for the backend's acknowledgement. */
static void tset(ember_ref *ref, const char *path, const char *json) {
    ember_error err;
    ember_ref *c = path ? ember_ref_child(ref, path, &err) : ref;
    latch acked;
    latch_init(&acked);
    CHECK(c != NULL);
    CHECK(ember_ref_set(c, EMBER_FORMAT_JSON, json, EMBER_NTS, latch_write_cb, &acked, &err)); CHECK_OK(err);
    CHECK(latch_wait(&acked, 1) && acked.last_code == EMBER_OK);
    latch_destroy(&acked);
    if (path) ember_ref_release(c);
}

static char get_buf[4096];

static const char *tget(const ember_ref *ref) {
    ember_error err;
    char *s = ember_ref_get(ref, EMBER_FORMAT_JSON, NULL, &err);
    snprintf(get_buf, sizeof get_buf, "%s", s ? s : "<error>");
    if (!s) fprintf(stderr, "  get: %d %s\n", (int)err.code, err.message);
    ember_free(s);
    return get_buf;
}

static const char *qget(const ember_tree_query *q) {
    ember_error err;
    char *s = ember_tree_query_get(q, EMBER_FORMAT_JSON, NULL, &err);
    snprintf(get_buf, sizeof get_buf, "%s", s ? s : "<error>");
    if (!s) fprintf(stderr, "  query get: %d %s\n", (int)err.code, err.message);
    ember_free(s);
    return get_buf;
}

/* ---- tests ---- */

static void refs_and_keys(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *root = ember_ref_new(db, NULL, &err), *a, *b, *p, *parent;
    char last[21] = "";
    int i;
    CHECK(root != NULL); CHECK_OK(err);
    CHECK(ember_ref_key(root) == NULL);
    CHECK_STR(ember_ref_path(root), "/");
    CHECK(ember_ref_parent(root) == NULL);
    a = ember_ref_new(db, "/posts//abc/", &err);
    CHECK_STR(ember_ref_key(a), "abc");
    CHECK_STR(ember_ref_path(a), "/posts/abc");
    b = ember_ref_child(a, "metrics/views", &err);
    CHECK_STR(ember_ref_path(b), "/posts/abc/metrics/views");
    parent = ember_ref_parent(b);
    CHECK_STR(ember_ref_path(parent), "/posts/abc/metrics");
    ember_ref_release(parent);
    /* push ids: 20 characters, strictly increasing */
    for (i = 0; i < 1000; i++) {
        p = ember_ref_push(a, &err);
        CHECK(p != NULL);
        if (!p) break;
        CHECK(strlen(ember_ref_key(p)) == 20);
        CHECK(strcmp(ember_ref_key(p), last) > 0);
        snprintf(last, sizeof last, "%s", ember_ref_key(p));
        ember_ref_release(p);
    }
    /* bad keys and paths */
    CHECK(ember_ref_child(a, "a.b", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "a$", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "x/#", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "[", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "\x01", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(a, "\xff", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_new(db, "a]", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_new(NULL, "a", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_child(NULL, "a", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_push(NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_key(NULL) == NULL && ember_ref_path(NULL) == NULL);
    {
        /* 33 levels is one too many */
        char deep[200] = "";
        for (i = 0; i < 33; i++) strcat(deep, "a/");
        CHECK(ember_ref_new(db, deep, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    }
    ember_ref_release(NULL);
    ember_ref_release(b);
    ember_ref_release(a);
    ember_ref_release(root);
    ember_db_release(db);
}

static void writes_and_reads(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *root = ember_ref_new(db, "", &err), *posts = ember_ref_new(db, "posts", &err), *x;
    latch acked;
    char *mp;
    size_t n = 0;
    latch_init(&acked);
    CHECK_STR(tget(posts), "null");
    CHECK(ember_ref_set(posts, EMBER_FORMAT_JSON, "{\"x\":{\"a\":1,\"b\":\"s\"},\"y\":[1,2,3],\"z\":{}}", EMBER_NTS,
                        latch_write_cb, &acked, &err));
    CHECK_OK(err);
    CHECK(latch_wait(&acked, 1)); CHECK(acked.last_code == EMBER_OK);
    CHECK_STR(tget(posts), "{\"x\":{\"a\":1,\"b\":\"s\"},\"y\":[1,2,3]}");
    /* multi-path update: nested paths, null deletes */
    CHECK(ember_ref_update(posts, EMBER_FORMAT_JSON, "{\"x/a\":2,\"y\":null,\"w/deep/er\":true}", EMBER_NTS, NULL, NULL, &err));
    CHECK_OK(err);
    CHECK_STR(tget(posts), "{\"w\":{\"deep\":{\"er\":true}},\"x\":{\"a\":2,\"b\":\"s\"}}");
    x = ember_ref_child(posts, "x", &err);
    CHECK_STR(tget(x), "{\"a\":2,\"b\":\"s\"}");
    CHECK(ember_ref_remove(x, NULL, NULL, &err)); CHECK_OK(err);
    CHECK_STR(tget(x), "null");
    /* MessagePack both ways: {"k": 1.5} */
    CHECK(ember_ref_set(x, EMBER_FORMAT_MSGPACK, "\x81\xa1k\xcb\x3f\xf8\0\0\0\0\0\0", 12, NULL, NULL, &err)); CHECK_OK(err);
    mp = ember_ref_get(x, EMBER_FORMAT_MSGPACK, &n, &err);
    CHECK(mp != NULL && n == 12 && memcmp(mp, "\x81\xa1k\xcb\x3f\xf8\0\0\0\0\0\0", 12) == 0);
    ember_free(mp);
    /* a sparse array reads back as a map; a dense one as a list */
    tset(root, "arr", "{\"0\":\"a\",\"1\":\"b\",\"3\":\"d\"}");
    {
        ember_ref *arr = ember_ref_new(db, "arr", &err);
        CHECK_STR(tget(arr), "[\"a\",\"b\",null,\"d\"]");
        tset(arr, NULL, "{\"0\":\"a\",\"9\":\"j\"}");
        CHECK_STR(tget(arr), "{\"0\":\"a\",\"9\":\"j\"}");
        ember_ref_release(arr);
    }
    /* refused values and updates */
    CHECK(!ember_ref_set(x, EMBER_FORMAT_JSON, "{\"a.b\":1}", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_set(x, EMBER_FORMAT_JSON, "{\"t\":{\"$timestamp\":\"2024-05-01T12:00:00Z\"}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_set(x, EMBER_FORMAT_JSON, "{\"a\":", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_set(x, EMBER_FORMAT_JSON, "{\"n\":{\"$double\":\"NaN\"}}", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_update(posts, EMBER_FORMAT_JSON, "{\"a\":1,\"a/b\":2}", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_update(posts, EMBER_FORMAT_JSON, "[1]", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_update(posts, EMBER_FORMAT_JSON, "{\"a#\":1}", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_set(NULL, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_get(x, 7, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* an empty update still answers its callback */
    CHECK(ember_ref_update(posts, EMBER_FORMAT_JSON, "{}", EMBER_NTS, latch_write_cb, &acked, &err));
    CHECK(latch_wait(&acked, 2));
    /* use after close */
    CHECK(ember_db_close(db, &err));
    CHECK(!ember_ref_set(x, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_ref_get(x, EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_ref_new(db, "a", &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_ref_release(x);
    ember_ref_release(posts);
    ember_ref_release(root);
    ember_db_release(db);
    latch_destroy(&acked);
}

static void child_events(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *list = ember_ref_new(db, "list", &err);
    ember_tree_query *q;
    recorder r;
    observer oa, or_, oc, om, ov;
    rec_init(&r);
    tset(list, NULL, "{\"a\":{\"score\":3},\"b\":{\"score\":1},\"c\":{\"score\":2}}");
    q = ember_tree_query_new(list, &err);
    CHECK(ember_tree_query_order_by_child(q, "score", &err)); CHECK_OK(err);
    watch(NULL, q, 'A', &oa, &r);
    rec_wait(&r, 3);
    CHECK_STR(rec_take(&r), "A:b:- A:c:b A:a:c");   /* once per existing child, in order */
    watch(NULL, q, 'R', &or_, &r);
    watch(NULL, q, 'C', &oc, &r);
    watch(NULL, q, 'M', &om, &r);
    watch(list, NULL, 'V', &ov, &r);
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "V:{\"a\":{\"score\":3},\"b\":{\"score\":1},\"c\":{\"score\":2}}");
    /* b moves to the end: moved then changed, with the new previous key */
    tset(list, "b/score", "5");
    rec_wait(&r, 3);
    CHECK_STR(rec_take(&r), "M:b:a={\"score\":5} C:b:a={\"score\":5} V:{\"a\":{\"score\":3},\"b\":{\"score\":5},\"c\":{\"score\":2}}");
    /* a change that keeps the order: changed only */
    tset(list, "c/x", "1");
    rec_wait(&r, 2);
    CHECK_STR(rec_take(&r), "C:c:-={\"score\":2,\"x\":1} V:{\"a\":{\"score\":3},\"b\":{\"score\":5},\"c\":{\"score\":2,\"x\":1}}");
    /* add and remove */
    tset(list, "d", "{\"score\":0}");
    rec_wait(&r, 2);
    CHECK_STR(rec_take(&r), "A:d:- V:{\"a\":{\"score\":3},\"b\":{\"score\":5},\"c\":{\"score\":2,\"x\":1},\"d\":{\"score\":0}}");
    {
        ember_ref *a = ember_ref_child(list, "a", &err);
        CHECK(ember_ref_remove(a, NULL, NULL, &err));
        ember_ref_release(a);
    }
    rec_wait(&r, 2);
    CHECK_STR(rec_take(&r), "R:a:- V:{\"b\":{\"score\":5},\"c\":{\"score\":2,\"x\":1},\"d\":{\"score\":0}}");
    /* a multi-path update is one value event */
    CHECK(ember_ref_update(list, EMBER_FORMAT_JSON, "{\"e/score\":7,\"f/score\":8,\"d\":null}", EMBER_NTS, NULL, NULL, &err));
    rec_wait(&r, 4);
    CHECK_STR(rec_take(&r), "R:d:- A:e:b A:f:e V:{\"b\":{\"score\":5},\"c\":{\"score\":2,\"x\":1},\"e\":{\"score\":7},\"f\":{\"score\":8}}");
    ember_listener_remove(oa.token);
    ember_listener_remove(or_.token);
    ember_listener_remove(oc.token);
    ember_listener_remove(om.token);
    ember_listener_remove(ov.token);
    ember_listener_remove(ov.token);   /* idempotent */
    CHECK(rec_wait_freed(&r, 5));
    ember_tree_query_release(q);
    ember_ref_release(list);
    ember_db_release(db);
    rec_destroy(&r);
}

static void query_windows(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *s = ember_ref_new(db, "scores", &err), *c;
    ember_tree_query *first, *last, *range;
    recorder r;
    observer o1, o2, o3, o4;
    rec_init(&r);
    tset(s, NULL, "{\"a\":10,\"b\":20,\"c\":30,\"d\":40,\"e\":50}");
    first = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_order_by_value(first, &err));
    CHECK(ember_tree_query_limit_to_first(first, 2, &err));
    CHECK_STR(qget(first), "{\"a\":10,\"b\":20}");
    watch(NULL, first, 'A', &o1, &r);
    watch(NULL, first, 'R', &o2, &r);
    rec_wait(&r, 2);
    CHECK_STR(rec_take(&r), "A:a:- A:b:a");
    /* a leaves the full window: the next child is pulled in */
    c = ember_ref_child(s, "a", &err);
    CHECK(ember_ref_remove(c, NULL, NULL, &err));
    ember_ref_release(c);
    rec_wait(&r, 2);
    CHECK_STR(rec_take(&r), "R:a:- A:c:b");
    ember_listener_remove(o1.token);
    ember_listener_remove(o2.token);
    /* limit_to_last keeps the last ones; the value comes in query order */
    last = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_order_by_value(last, &err));
    CHECK(ember_tree_query_limit_to_last(last, 2, &err));
    watch(NULL, last, 'V', &o3, &r);
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "V:{\"d\":40,\"e\":50}");
    tset(s, "b", "60");
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "V:{\"e\":50,\"b\":60}");
    ember_listener_remove(o3.token);
    /* ranges: keys, values with keys, exclusive ends */
    range = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_order_by_key(range, &err));
    CHECK(ember_tree_query_bound(range, EMBER_TREE_START_AFTER, EMBER_FORMAT_JSON, "\"b\"", EMBER_NTS, NULL, &err)); CHECK_OK(err);
    CHECK(ember_tree_query_bound(range, EMBER_TREE_END_BEFORE, EMBER_FORMAT_JSON, "\"e\"", EMBER_NTS, NULL, &err)); CHECK_OK(err);
    CHECK_STR(qget(range), "{\"c\":30,\"d\":40}");
    ember_tree_query_release(range);
    range = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_order_by_value(range, &err));
    CHECK(ember_tree_query_bound(range, EMBER_TREE_START_AT, EMBER_FORMAT_JSON, "40", EMBER_NTS, "d", &err)); CHECK_OK(err);
    CHECK(ember_tree_query_bound(range, EMBER_TREE_END_AT, EMBER_FORMAT_JSON, "50", EMBER_NTS, NULL, &err)); CHECK_OK(err);
    CHECK_STR(qget(range), "{\"d\":40,\"e\":50}");
    ember_tree_query_release(range);
    range = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_order_by_value(range, &err));
    CHECK(ember_tree_query_bound(range, EMBER_TREE_EQUAL_TO, EMBER_FORMAT_JSON, "30", EMBER_NTS, NULL, &err)); CHECK_OK(err);
    CHECK_STR(qget(range), "{\"c\":30}");
    watch(NULL, range, 'A', &o4, &r);
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "A:c:-");
    tset(s, "z", "30");
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "A:z:c");
    ember_ref_remove_all_observers(s);   /* ends o4 (a query at this location) */
    tset(s, "y", "30");
    sleep_ms(30);
    CHECK_STR(rec_take(&r), "");
    {
        /* the copy is independent and reads the same */
        ember_tree_query *cp = ember_tree_query_copy(range);
        ember_ref *back = ember_tree_query_ref(cp);
        CHECK_STR(ember_ref_path(back), "/scores");
        CHECK(ember_tree_query_limit_to_first(cp, 1, &err));
        CHECK_STR(qget(cp), "{\"c\":30}");
        CHECK_STR(qget(range), "{\"c\":30,\"y\":30,\"z\":30}");
        ember_ref_release(back);
        ember_tree_query_release(cp);
    }
    ember_tree_query_release(range);
    ember_tree_query_release(first);
    ember_tree_query_release(last);
    ember_ref_release(s);
    ember_db_release(db);
    rec_destroy(&r);
}

static void query_errors(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *s = ember_ref_new(db, "s", &err);
    ember_tree_query *q = ember_tree_query_new(s, &err);
    observer o;
    recorder r;
    rec_init(&r);
    CHECK(ember_tree_query_order_by_value(q, &err));
    CHECK(!ember_tree_query_order_by_key(q, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_order_by_child(q, "x", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_limit_to_first(q, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_limit_to_last(q, -3, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_limit_to_first(q, 5, &err));
    CHECK(!ember_tree_query_limit_to_last(q, 5, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_bound(q, EMBER_TREE_START_AT, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, &err));
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_START_AFTER, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_EQUAL_TO, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_END_AT, EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_END_AT, EMBER_FORMAT_JSON, "2", EMBER_NTS, "bad.key", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_bound(q, 9, EMBER_FORMAT_JSON, "2", EMBER_NTS, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_bound(q, EMBER_TREE_END_AT, EMBER_FORMAT_JSON, "2", EMBER_NTS, "k", &err)); CHECK_OK(err);
    ember_tree_query_release(q);
    q = ember_tree_query_new(s, &err);
    CHECK(!ember_tree_query_order_by_child(q, "", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_order_by_child(q, "$key", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_order_by_child(q, "$priority", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_order_by_child(q, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_order_by_key(q, &err));
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_START_AT, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_bound(q, EMBER_TREE_START_AT, EMBER_FORMAT_JSON, "\"a\"", EMBER_NTS, "k", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_tree_query_release(q);
    /* bounds without an order-by are priorities (null, numbers, strings): a boolean is refused when run */
    q = ember_tree_query_new(s, &err);
    CHECK(ember_tree_query_bound(q, EMBER_TREE_START_AT, EMBER_FORMAT_JSON, "true", EMBER_NTS, NULL, &err));
    CHECK(ember_tree_query_get(q, EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    memset(&o, 0, sizeof o);
    o.r = &r;
    CHECK(ember_tree_query_observe(q, EMBER_EVENT_VALUE, on_event, &o, on_free, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_tree_query_release(q);
    /* observe errors: type, callback, NULLs; ctx_free not called when refused */
    CHECK(ember_ref_observe(s, 42, on_event, &o, on_free, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_observe(s, EMBER_EVENT_VALUE, NULL, &o, on_free, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_observe(NULL, EMBER_EVENT_VALUE, on_event, &o, on_free, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_new(NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_query_order_by_key(NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_tree_query_copy(NULL) == NULL);
    ember_tree_query_release(NULL);
    ember_ref_remove_all_observers(NULL);
    ember_ref_remove_observer(NULL, 5);
    CHECK(r.freed == 0);
    ember_ref_release(s);
    ember_db_release(db);
    rec_destroy(&r);
}

static void removal_in_callbacks(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *list = ember_ref_new(db, "l", &err), *child = ember_ref_new(db, "l/a", &err), *other = ember_ref_new(db, "m", &err);
    recorder r;
    observer self_remover, on_list, on_child, kept;
    rec_init(&r);
    tset(list, NULL, "{\"a\":{\"v\":1},\"b\":{\"v\":2},\"c\":{\"v\":3}}");
    /* removes itself during the first of three child_added events: the others never arrive */
    memset(&self_remover, 0, sizeof self_remover);
    self_remover.r = &r;
    self_remover.type = 'A';
    self_remover.remove_self_after = 1;
    pthread_mutex_lock(&r.mu);
    self_remover.token = ember_ref_observe(list, EMBER_EVENT_CHILD_ADDED, on_event, &self_remover, on_free, &err);
    pthread_mutex_unlock(&r.mu);
    CHECK(self_remover.token != 0);
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "A:a:-");
    CHECK(rec_wait_freed(&r, 1));

    /* remove_all at a location is not recursive; remove_observer needs the right location */
    watch(list, NULL, 'V', &on_list, &r);
    watch(child, NULL, 'V', &on_child, &r);
    rec_wait(&r, 2);
    rec_take(&r);
    ember_ref_remove_observer(other, on_list.token);   /* wrong location: nothing */
    tset(child, "v", "5");
    rec_wait(&r, 2);
    CHECK(strstr(rec_take(&r), "V:{\"v\":5}") != NULL);
    ember_ref_remove_all_observers(list);
    tset(child, "v", "6");
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "V:{\"v\":6}");
    ember_ref_remove_observer(child, on_child.token);
    ember_ref_remove_observer(child, on_child.token);
    tset(child, "v", "7");
    sleep_ms(30);
    CHECK_STR(rec_take(&r), "");
    CHECK(rec_wait_freed(&r, 3));

    /* a snapshot kept past its callback, with children in order and child paths */
    memset(&kept, 0, sizeof kept);
    kept.r = &r;
    kept.type = 'V';
    kept.keep = 1;
    kept.token = ember_ref_observe(list, EMBER_EVENT_VALUE, on_event, &kept, NULL, &err);
    rec_wait(&r, 1);
    ember_listener_remove(kept.token);
    CHECK(kept.kept != NULL);
    if (kept.kept) {
        const ember_tree_snapshot *s = kept.kept, *c0;
        ember_tree_snapshot *deep;
        char *v;
        CHECK_STR(ember_tree_snapshot_key(s), "l");
        CHECK(ember_tree_snapshot_exists(s));
        CHECK(ember_tree_snapshot_child_count(s) == 3);
        c0 = ember_tree_snapshot_child_at(s, 0);
        CHECK(c0 && strcmp(ember_tree_snapshot_key(c0), "a") == 0);
        CHECK(ember_tree_snapshot_child_at(s, 3) == NULL);
        deep = ember_tree_snapshot_child(s, "b/v", &err);
        CHECK(deep != NULL);
        v = ember_tree_snapshot_value(deep, EMBER_FORMAT_JSON, NULL, &err);
        CHECK_STR(v, "2");
        ember_free(v);
        ember_tree_snapshot_release(deep);
        deep = ember_tree_snapshot_child(s, "zz", &err);
        CHECK(deep && !ember_tree_snapshot_exists(deep) && ember_tree_snapshot_child_count(deep) == 0);
        v = ember_tree_snapshot_value(deep, EMBER_FORMAT_JSON, NULL, &err);
        CHECK_STR(v, "null");
        ember_free(v);
        ember_tree_snapshot_release(deep);
        CHECK(ember_tree_snapshot_child(s, "a.b", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
        ember_tree_snapshot_release(kept.kept);
    }
    CHECK(ember_tree_snapshot_retain(NULL) == NULL);
    ember_tree_snapshot_release(NULL);
    CHECK(ember_tree_snapshot_key(NULL) == NULL && !ember_tree_snapshot_exists(NULL));
    ember_ref_release(other);
    ember_ref_release(child);
    ember_ref_release(list);
    ember_db_release(db);
    rec_destroy(&r);
}

/* A blocking read from a callback is refused; closing the database ends observers (ctx_free). */
typedef struct { ember_ref *ref; int code; latch done; } get_in_cb;

static void get_from_cb(void *ctx, const ember_tree_snapshot *snap, const char *prev, const ember_error *error) {
    get_in_cb *g = ctx;
    ember_error err;
    char *v = ember_ref_get(g->ref, EMBER_FORMAT_JSON, NULL, &err);
    (void)snap; (void)prev; (void)error;
    ember_free(v);
    g->code = err.code;
    latch_add(&g->done, 0, NULL);
}

static void close_ends_observers(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *ref = ember_ref_new(db, "x", &err);
    recorder r;
    observer o;
    get_in_cb g;
    rec_init(&r);
    latch_init(&g.done);
    g.ref = ref;
    g.code = -1;
    CHECK(ember_ref_observe(ref, EMBER_EVENT_VALUE, get_from_cb, &g, NULL, &err) != 0);
    CHECK(latch_wait(&g.done, 1));
    CHECK(g.code == EMBER_ERR_FAILED_PRECONDITION);
    watch(ref, NULL, 'V', &o, &r);
    rec_wait(&r, 1);
    CHECK_STR(rec_take(&r), "V:null");
    CHECK(ember_db_close(db, &err));
    CHECK(r.freed == 1);   /* before close returned */
    CHECK(ember_ref_observe(ref, EMBER_EVENT_VALUE, on_event, &o, on_free, &err) == 0); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_ref_release(ref);
    ember_db_release(db);
    latch_destroy(&g.done);
    rec_destroy(&r);
}

/* Observing child_added right after a set, before the backend acknowledges it: each child is
 * added once (the acknowledged write's data stays in the client's cache until the listen's
 * answer, no remove and re-add). */
static void observe_right_after_set(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *l = ember_ref_new(db, "l", &err);
    recorder r;
    observer o;
    rec_init(&r);
    CHECK(ember_ref_set(l, EMBER_FORMAT_JSON, "{\"a\":1,\"b\":2}", EMBER_NTS, NULL, NULL, &err));
    watch(l, NULL, 'A', &o, &r);
    rec_wait(&r, 2);
    sleep_ms(200);
    CHECK_STR(rec_take(&r), "A:a:- A:b:a");
    ember_listener_remove(o.token);
    ember_ref_release(l);
    ember_db_release(db);
    rec_destroy(&r);
}

/* onDisconnect: bad input is an error (never a trap); valid calls are held (the in-process
 * backend answers at once) and applied when the database closes, a cancel dropping those at and
 * below its location. The applied writes are checked in a durable file reopened after the close. */
static void on_disconnect_writes(void) {
    ember_error err;
    CHECK(!ember_ref_on_disconnect_set(NULL, EMBER_FORMAT_JSON, "1", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_on_disconnect_remove(NULL, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_on_disconnect_cancel(NULL, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    char dir[] = "/tmp/ember-od-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/db.ember", dir);
    ember_settings s;
    ember_settings_init(&s);
    s.path = path;
    ember_db *db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    ember_ref *me = ember_ref_new(db, "presence/me", &err);
    ember_ref *other = ember_ref_new(db, "presence/other", &err);
    ember_ref *seen = ember_ref_new(db, "seen", &err);
    CHECK(!ember_ref_on_disconnect_set(me, EMBER_FORMAT_JSON, "{\"bad", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_on_disconnect_update(seen, EMBER_FORMAT_JSON, "[1]", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_on_disconnect_set(me, 7, "1", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_ref_set(me, EMBER_FORMAT_JSON, "true", EMBER_NTS, NULL, NULL, &err)); CHECK_OK(err);
    CHECK(ember_ref_set(other, EMBER_FORMAT_JSON, "true", EMBER_NTS, NULL, NULL, &err)); CHECK_OK(err);
    latch held;
    latch_init(&held);
    CHECK(ember_ref_on_disconnect_remove(me, latch_write_cb, &held, &err)); CHECK_OK(err);
    CHECK(ember_ref_on_disconnect_update(seen, EMBER_FORMAT_JSON, "{\"me\":\"gone\"}", EMBER_NTS, latch_write_cb, &held, &err)); CHECK_OK(err);
    CHECK(ember_ref_on_disconnect_remove(other, latch_write_cb, &held, &err)); CHECK_OK(err);
    CHECK(ember_ref_on_disconnect_cancel(other, latch_write_cb, &held, &err)); CHECK_OK(err);
    CHECK(latch_wait(&held, 4) && held.last_code == EMBER_OK);
    ember_ref_release(me); ember_ref_release(other); ember_ref_release(seen);
    ember_db_release(db);
    db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    ember_ref *root = ember_ref_new(db, NULL, &err);
    char *json = ember_ref_get(root, EMBER_FORMAT_JSON, NULL, &err);
    CHECK_OK(err);
    CHECK_STR(json, "{\"presence\":{\"other\":true},\"seen\":{\"me\":\"gone\"}}");
    ember_free(json);
    ember_ref_release(root);
    ember_db_release(db);
    latch_destroy(&held);
    CHECK(ember_clear_persistence(path, &err));
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", path);
    remove(lock);
    rmdir(dir);
}

/* A counter transaction's state: the values its update saw, and what the completion said. */
typedef struct {
    latch done;
    int calls;
    int committed;
    int abort;              /* the update returns false */
    int set_bad;            /* the update sets an invalid value and still returns true */
    char seen[8][32];       /* the first values the update saw (JSON) */
    char final_json[64];
} tx_state;

static bool tx_increment(void *ctx, const void *current, size_t len, ember_tree_tx *tx) {
    tx_state *t = ctx;
    if (t->calls < 8) snprintf(t->seen[t->calls], sizeof t->seen[0], "%.*s", (int)len, (const char *)current);
    t->calls++;
    if (t->abort) return false;
    ember_error err;
    if (t->set_bad) {
        CHECK(!ember_tree_tx_set(tx, "{\"a\":", EMBER_NTS, &err));
        CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
        return true;
    }
    long n = strcmp((const char *)current, "null") == 0 ? 0 : strtol((const char *)current, NULL, 10);
    char next[32];
    snprintf(next, sizeof next, "%ld", n + 1);
    CHECK(ember_tree_tx_set(tx, next, strlen(next), &err)); CHECK_OK(err);
    return true;
}

static void tx_done(void *ctx, const ember_error *error, bool committed, const ember_tree_snapshot *snap) {
    tx_state *t = ctx;
    t->committed = committed;
    t->final_json[0] = 0;
    if (snap) {
        size_t n = 0;
        char *json = ember_tree_snapshot_value(snap, EMBER_FORMAT_JSON, &n, NULL);
        if (json) snprintf(t->final_json, sizeof t->final_json, "%.*s", (int)n, json);
        ember_free(json);
    }
    latch_add(&t->done, error->code, error->message);
}

static void tx_value_seen(void *ctx, const ember_tree_snapshot *snap, const char *prev, const ember_error *error) {
    (void)snap; (void)prev;
    latch_add(ctx, error ? error->code : 0, NULL);
}

/* ember_ref_transaction: the update's first call sees null when this database knows nothing, then
 * the backend's value; abort; an invalid value; bad arguments. */
static void tree_transactions(void) {
    ember_error err;
    tx_state t;
    memset(&t, 0, sizeof t);
    latch_init(&t.done);
    CHECK(!ember_ref_transaction(NULL, EMBER_FORMAT_JSON, true, tx_increment, tx_done, &t, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db *db = open_db();
    ember_ref *n = ember_ref_new(db, "counter", &err);
    CHECK(!ember_ref_transaction(n, EMBER_FORMAT_JSON, true, NULL, tx_done, &t, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_transaction(n, EMBER_FORMAT_JSON, true, tx_increment, NULL, &t, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_transaction(n, 9, true, tx_increment, tx_done, &t, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_tree_tx_set(NULL, "1", EMBER_NTS, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);

    /* Five in a row: the first sees null; each commits one more. */
    for (int i = 1; i <= 5; i++) {
        CHECK(ember_ref_transaction(n, EMBER_FORMAT_JSON, true, tx_increment, tx_done, &t, &err)); CHECK_OK(err);
        CHECK(latch_wait(&t.done, i));
        CHECK(t.done.last_code == EMBER_OK && t.committed);
    }
    CHECK(strcmp(t.seen[0], "null") == 0);
    CHECK(strcmp(t.final_json, "5") == 0);
    char *json = ember_ref_get(n, EMBER_FORMAT_JSON, NULL, &err);
    CHECK(json && strcmp(json, "5") == 0);
    ember_free(json);

    /* Abort: not committed, no error, the value as the database knows it (observed here, so
     * known; without an observer it may still be null, as the update's first call sees). */
    latch seen;
    latch_init(&seen);
    ember_listener_token obs = ember_ref_observe(n, EMBER_EVENT_VALUE, tx_value_seen, &seen, NULL, &err);
    CHECK(obs != 0 && latch_wait(&seen, 1));
    t.abort = 1;
    CHECK(ember_ref_transaction(n, EMBER_FORMAT_JSON, true, tx_increment, tx_done, &t, &err)); CHECK_OK(err);
    CHECK(latch_wait(&t.done, 6));
    CHECK(t.done.last_code == EMBER_OK && !t.committed && strcmp(t.final_json, "5") == 0);
    ember_listener_remove(obs);
    latch_destroy(&seen);

    /* An invalid value refused by ember_tree_tx_set fails the transaction with that error. */
    t.abort = 0;
    t.set_bad = 1;
    CHECK(ember_ref_transaction(n, EMBER_FORMAT_JSON, false, tx_increment, tx_done, &t, &err)); CHECK_OK(err);
    CHECK(latch_wait(&t.done, 7));
    CHECK(t.done.last_code == EMBER_ERR_INVALID_ARGUMENT && !t.committed && t.final_json[0] == 0);
    json = ember_ref_get(n, EMBER_FORMAT_JSON, NULL, &err);
    CHECK(json && strcmp(json, "5") == 0);
    ember_free(json);

    ember_ref_release(n);
    ember_db_release(db);
    latch_destroy(&t.done);
}

/* Server values in C writes: {".sv": "timestamp"} and {".sv": {"increment": n}} are filled in
 * when the backend applies the write; a malformed one is refused at once. */
static void server_values(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_ref *likes = ember_ref_new(db, "post/likes", &err);
    ember_ref *at = ember_ref_new(db, "post/at", &err);
    latch acked;
    latch_init(&acked);
    CHECK(ember_ref_set(likes, EMBER_FORMAT_JSON, "{\".sv\":{\"increment\":2}}", EMBER_NTS, latch_write_cb, &acked, &err)); CHECK_OK(err);
    CHECK(ember_ref_set(likes, EMBER_FORMAT_JSON, "{\".sv\":{\"increment\":3}}", EMBER_NTS, latch_write_cb, &acked, &err)); CHECK_OK(err);
    CHECK(ember_ref_set(at, EMBER_FORMAT_JSON, "{\".sv\":\"timestamp\"}", EMBER_NTS, latch_write_cb, &acked, &err)); CHECK_OK(err);
    CHECK(latch_wait(&acked, 3) && acked.last_code == EMBER_OK);
    char *json = ember_ref_get(likes, EMBER_FORMAT_JSON, NULL, &err);
    CHECK(json && strcmp(json, "5") == 0);
    ember_free(json);
    json = ember_ref_get(at, EMBER_FORMAT_JSON, NULL, &err);
    CHECK(json && strtoll(json, NULL, 10) > 1700000000000LL);
    ember_free(json);
    CHECK(!ember_ref_set(at, EMBER_FORMAT_JSON, "{\".sv\":\"tomorrow\"}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "Invalid server value") != NULL);
    ember_ref_release(likes);
    ember_ref_release(at);
    ember_db_release(db);
    latch_destroy(&acked);
}

void run_tree(void) {
    RUN(on_disconnect_writes);
    RUN(tree_transactions);
    RUN(server_values);
    RUN(observe_right_after_set);
    RUN(refs_and_keys);
    RUN(writes_and_reads);
    RUN(child_events);
    RUN(query_windows);
    RUN(query_errors);
    RUN(removal_in_callbacks);
    RUN(close_ends_observers);
}
