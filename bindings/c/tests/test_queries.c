/* Queries: every operator, AND/OR, order-by, limits, the four cursors by values and by
 * snapshot, collection groups, count, snapshots' accessors, and the invalid queries. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static char ids_buf[1024];

/* The ids of a snapshot's documents, comma-separated. */
static const char *ids(const ember_snapshot *s) {
    size_t i, n = ember_snapshot_size(s);
    ids_buf[0] = '\0';
    for (i = 0; i < n; i++) {
        if (i) strcat(ids_buf, ",");
        strcat(ids_buf, ember_document_id(ember_snapshot_document(s, i)));
    }
    return ids_buf;
}

static ember_db *cities(void) {
    ember_db *db = open_db();
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"state\":\"CA\",\"pop\":860000,\"tags\":[\"west\",\"coast\"],\"capital\":false}");
    set_json(db, "cities/LA", "{\"name\":\"Los Angeles\",\"state\":\"CA\",\"pop\":3900000,\"tags\":[\"west\"],\"capital\":false}");
    set_json(db, "cities/DC", "{\"name\":\"Washington\",\"state\":null,\"pop\":680000,\"tags\":[\"east\"],\"capital\":true}");
    set_json(db, "cities/TOK", "{\"name\":\"Tokyo\",\"state\":\"TK\",\"pop\":9000000,\"tags\":[],\"capital\":true}");
    set_json(db, "cities/BJ", "{\"name\":\"Beijing\",\"pop\":21500000,\"capital\":true}");
    set_json(db, "cities/SF/landmarks/bridge", "{\"name\":\"Golden Gate\",\"type\":\"bridge\"}");
    set_json(db, "cities/TOK/landmarks/tower", "{\"name\":\"Tokyo Tower\",\"type\":\"tower\"}");
    return db;
}

/* Runs `q` at the backend and returns its ids (then releases q). */
static const char *run(ember_query *q) {
    ember_error err;
    ember_snapshot *s = ember_query_get(q, EMBER_SOURCE_DEFAULT, &err);
    CHECK_OK(err);
    if (!s) { ember_query_release(q); return "<error>"; }
    ids(s);
    ember_snapshot_release(s);
    ember_query_release(q);
    return ids_buf;
}

static ember_query *where(ember_db *db, const char *field, ember_op op, const char *json) {
    ember_error err;
    ember_query *q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_where(q, field, op, EMBER_FORMAT_JSON, json, EMBER_NTS, &err));
    CHECK_OK(err);
    CHECK(ember_query_order_by(q, EMBER_DOCUMENT_ID, false, &err));
    return q;
}

static void operators(void) {
    ember_db *db = cities();
    CHECK_STR(run(where(db, "state", EMBER_OP_EQUAL, "\"CA\"")), "LA,SF");
    CHECK_STR(run(where(db, "state", EMBER_OP_NOT_EQUAL, "\"CA\"")), "TOK");
    CHECK_STR(run(where(db, "pop", EMBER_OP_LESS_THAN, "860000")), "DC");
    CHECK_STR(run(where(db, "pop", EMBER_OP_LESS_THAN_OR_EQUAL, "860000.0")), "DC,SF");
    CHECK_STR(run(where(db, "pop", EMBER_OP_GREATER_THAN, "9000000")), "BJ");
    CHECK_STR(run(where(db, "pop", EMBER_OP_GREATER_THAN_OR_EQUAL, "9000000")), "BJ,TOK");
    CHECK_STR(run(where(db, "tags", EMBER_OP_ARRAY_CONTAINS, "\"west\"")), "LA,SF");
    CHECK_STR(run(where(db, "tags", EMBER_OP_ARRAY_CONTAINS_ANY, "[\"east\",\"coast\"]")), "DC,SF");
    CHECK_STR(run(where(db, "state", EMBER_OP_IN, "[\"TK\",\"CA\"]")), "LA,SF,TOK");
    CHECK_STR(run(where(db, "state", EMBER_OP_NOT_IN, "[\"CA\"]")), "TOK");
    CHECK_STR(run(where(db, "state", EMBER_OP_EQUAL, "null")), "DC");
    CHECK_STR(run(where(db, EMBER_DOCUMENT_ID, EMBER_OP_EQUAL, "\"SF\"")), "SF");
    CHECK_STR(run(where(db, EMBER_DOCUMENT_ID, EMBER_OP_IN, "[\"SF\",{\"$ref\":\"cities/LA\"}]")), "LA,SF");
    ember_db_release(db);
}

static void composite_filters(void) {
    ember_error err;
    ember_db *db = cities();
    ember_filter *capital = ember_filter_field("capital", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "true", EMBER_NTS, &err);
    ember_filter *big = ember_filter_field("pop", EMBER_OP_GREATER_THAN, EMBER_FORMAT_JSON, "1000000", EMBER_NTS, &err);
    ember_filter *ca = ember_filter_field("state", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "\"CA\"", EMBER_NTS, &err);
    const ember_filter *both[2];
    const ember_filter *nested[2];
    ember_filter *and_f, *or_f, *outer, *empty;
    ember_query *q;
    both[0] = capital; both[1] = big;
    and_f = ember_filter_and(both, 2, &err); CHECK_OK(err);
    or_f = ember_filter_or(both, 2, &err); CHECK_OK(err);
    nested[0] = ca; nested[1] = and_f;
    outer = ember_filter_or(nested, 2, &err); CHECK_OK(err);
    empty = ember_filter_and(NULL, 0, &err); CHECK_OK(err);
    q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_where_filter(q, and_f, &err)); CHECK_OK(err);
    CHECK(ember_query_order_by(q, EMBER_DOCUMENT_ID, false, &err));
    CHECK_STR(run(q), "BJ,TOK");
    q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_where_filter(q, or_f, &err)); CHECK_OK(err);
    CHECK(ember_query_order_by(q, EMBER_DOCUMENT_ID, false, &err));
    CHECK_STR(run(q), "BJ,DC,LA,TOK");
    q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_where_filter(q, outer, &err)); CHECK_OK(err);
    CHECK(ember_query_where_filter(q, empty, &err)); CHECK_OK(err);
    CHECK(ember_query_order_by(q, EMBER_DOCUMENT_ID, false, &err));
    CHECK_STR(run(q), "BJ,LA,SF,TOK");
    CHECK(ember_filter_field("a", 99, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_filter_field("a..b", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_filter_field("a", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "{", EMBER_NTS, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_filter_or(NULL, 2, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    nested[1] = NULL;
    CHECK(ember_filter_or(nested, 2, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_filter_release(capital); ember_filter_release(big); ember_filter_release(ca);
    ember_filter_release(and_f); ember_filter_release(or_f); ember_filter_release(outer); ember_filter_release(empty);
    ember_filter_release(NULL);
    ember_db_release(db);
}

static void order_and_limits(void) {
    ember_error err;
    ember_db *db = cities();
    ember_query *q = ember_query_new(db, "cities", &err);
    ember_query *copy;
    ember_snapshot *s;
    CHECK(ember_query_order_by(q, "pop", true, &err));
    copy = ember_query_copy(q);
    CHECK(ember_query_limit(q, 2, &err)); CHECK_OK(err);
    CHECK_STR(run(q), "BJ,TOK");
    CHECK(ember_query_limit_to_last(copy, 2, &err)); CHECK_OK(err);
    CHECK_STR(run(copy), "SF,DC");
    CHECK(ember_query_copy(NULL) == NULL);
    /* limit_to_last without order-by: refused when run */
    q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_limit_to_last(q, 1, &err));
    s = ember_query_get(q, EMBER_SOURCE_DEFAULT, &err);
    CHECK(s == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_listen(q, 0, (ember_query_listener_cb)0, NULL, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_limit(q, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_limit(q, -5, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_limit_to_last(NULL, 1, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_query_release(q);
    ember_db_release(db);
}

static ember_query *by_pop(ember_db *db) {
    ember_error err;
    ember_query *q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_order_by(q, "pop", false, &err));
    return q;
}

static void cursors(void) {
    ember_error err;
    ember_db *db = cities();
    ember_query *q;
    ember_document *sf;
    /* pops: DC 680k, SF 860k, LA 3.9M, TOK 9M, BJ 21.5M */
    q = by_pop(db); CHECK(ember_query_cursor(q, EMBER_CURSOR_START_AT, EMBER_FORMAT_JSON, "[860000]", EMBER_NTS, &err)); CHECK_OK(err);
    CHECK_STR(run(q), "SF,LA,TOK,BJ");
    q = by_pop(db); CHECK(ember_query_cursor(q, EMBER_CURSOR_START_AFTER, EMBER_FORMAT_JSON, "[860000]", EMBER_NTS, &err));
    CHECK_STR(run(q), "LA,TOK,BJ");
    q = by_pop(db); CHECK(ember_query_cursor(q, EMBER_CURSOR_END_AT, EMBER_FORMAT_JSON, "[3900000]", EMBER_NTS, &err));
    CHECK_STR(run(q), "DC,SF,LA");
    q = by_pop(db); CHECK(ember_query_cursor(q, EMBER_CURSOR_END_BEFORE, EMBER_FORMAT_JSON, "[3900000]", EMBER_NTS, &err));
    CHECK_STR(run(q), "DC,SF");
    sf = ember_doc_get(db, "cities/SF", EMBER_SOURCE_DEFAULT, &err);
    q = by_pop(db); CHECK(ember_query_cursor_document(q, EMBER_CURSOR_START_AFTER, sf, &err)); CHECK_OK(err);
    CHECK_STR(run(q), "LA,TOK,BJ");
    q = by_pop(db); CHECK(ember_query_cursor_document(q, EMBER_CURSOR_END_AT, sf, &err));
    CHECK_STR(run(q), "DC,SF");
    q = by_pop(db); CHECK(ember_query_cursor_document(q, EMBER_CURSOR_START_AT, sf, &err));
    CHECK(ember_query_cursor_document(q, EMBER_CURSOR_END_BEFORE, sf, &err));
    CHECK_STR(run(q), "");
    /* errors */
    q = by_pop(db);
    CHECK(!ember_query_cursor(q, EMBER_CURSOR_START_AT, EMBER_FORMAT_JSON, "[1,2]", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_cursor(q, EMBER_CURSOR_START_AT, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_cursor(q, 9, EMBER_FORMAT_JSON, "[1]", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_cursor_document(q, EMBER_CURSOR_START_AT, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_cursor(q, EMBER_CURSOR_START_AT, EMBER_FORMAT_JSON, "[1]", EMBER_NTS, &err));
    CHECK(!ember_query_order_by(q, "name", false, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_query_release(q);
    ember_document_release(sf);
    sf = ember_doc_get(db, "cities/NONE", EMBER_SOURCE_DEFAULT, &err);
    q = by_pop(db);
    CHECK(!ember_query_cursor_document(q, EMBER_CURSOR_START_AT, sf, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_query_release(q);
    ember_document_release(sf);
    ember_db_release(db);
}

static void groups_and_count(void) {
    ember_error err;
    ember_db *db = cities();
    ember_query *q = ember_query_new_collection_group(db, "landmarks", &err);
    int64_t n = -1;
    CHECK_OK(err);
    CHECK(ember_query_order_by(q, "name", false, &err));
    CHECK(ember_query_count(q, &n, &err)); CHECK_OK(err);
    CHECK(n == 2);
    CHECK_STR(run(q), "bridge,tower");
    q = ember_query_new(db, "cities/SF/landmarks", &err); CHECK_OK(err);
    CHECK_STR(run(q), "bridge");
    q = where(db, "capital", EMBER_OP_EQUAL, "true");
    CHECK(ember_query_count(q, &n, &err)); CHECK(n == 3);
    CHECK(!ember_query_count(q, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_disable_network(db, &err));
    CHECK(!ember_query_count(q, &n, &err)); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    ember_query_release(q);
    CHECK(ember_query_new_collection_group(db, "a/b", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new_collection_group(db, "", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new_collection_group(db, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

static void invalid_queries(void) {
    ember_error err;
    ember_db *db = cities();
    ember_query *q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_new(db, "cities/SF", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new(db, "", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new(db, "\xfe", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "a", EMBER_OP_IN, EMBER_FORMAT_JSON, "[]", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "a", EMBER_OP_IN, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "a", EMBER_OP_LESS_THAN, EMBER_FORMAT_JSON, "null", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "a", -1, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "a", EMBER_OP_EQUAL, EMBER_FORMAT_MSGPACK, "\xc1", 1, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, EMBER_DOCUMENT_ID, EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "\"a/b\"", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, EMBER_DOCUMENT_ID, EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "5", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_where(q, "a", EMBER_OP_NOT_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err));
    CHECK(!ember_query_where(q, "b", EMBER_OP_NOT_IN, EMBER_FORMAT_JSON, "[1]", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(q, "b", EMBER_OP_NOT_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where_filter(q, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_order_by(q, NULL, false, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_query_where(NULL, "a", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* a refused step leaves the query as it was (a != 1): still runnable */
    CHECK_STR(run(q), "");
    ember_query_release(NULL);
    ember_db_release(db);
}

static void snapshot_accessors(void) {
    ember_error err;
    ember_db *db = cities();
    ember_query *q = where(db, "state", EMBER_OP_EQUAL, "\"CA\"");
    ember_snapshot *s, *kept;
    CHECK(ember_db_disable_network(db, &err));
    set_json(db, "cities/SF", "{\"state\":\"CA\"}");
    s = ember_query_get(q, EMBER_SOURCE_CACHE, &err);
    ember_document_change c;
    const ember_document *d;
    CHECK(s != NULL);
    CHECK(ember_snapshot_size(s) == 2);
    CHECK(ember_snapshot_is_from_cache(s));
    CHECK(ember_snapshot_has_pending_writes(s));
    CHECK(ember_snapshot_document(s, 2) == NULL);
    CHECK(ember_snapshot_change_count(s) == 2);
    CHECK(ember_snapshot_change(s, 1, &c, &err)); CHECK_OK(err);
    CHECK(c.type == EMBER_CHANGE_ADDED && c.old_index == EMBER_NPOS && c.new_index == 1);
    CHECK(c.document == ember_snapshot_document(s, 1));
    CHECK(!ember_snapshot_change(s, 2, &c, &err)); CHECK_ERR(err, EMBER_ERR_OUT_OF_RANGE);
    CHECK(!ember_snapshot_change(s, 0, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    d = ember_document_retain(ember_snapshot_document(s, 0));
    kept = ember_snapshot_retain(s);
    ember_snapshot_release(s);
    CHECK(ember_snapshot_size(kept) == 2);
    ember_snapshot_release(kept);
    CHECK_STR(ember_document_id(d), "LA");   /* outlives its snapshot */
    ember_document_release(d);
    CHECK(ember_snapshot_size(NULL) == 0);
    CHECK(ember_snapshot_change_count(NULL) == 0);
    CHECK(ember_snapshot_document(NULL, 0) == NULL);
    CHECK(!ember_snapshot_is_from_cache(NULL));
    CHECK(!ember_snapshot_has_pending_writes(NULL));
    CHECK(ember_snapshot_retain(NULL) == NULL);
    ember_snapshot_release(NULL);
    CHECK(!ember_snapshot_change(NULL, 0, &c, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_get(q, 77, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_get(NULL, 0, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_query_release(q);
    ember_db_release(db);
}

void run_queries(void) {
    RUN(operators);
    RUN(composite_filters);
    RUN(order_and_limits);
    RUN(cursors);
    RUN(groups_and_count);
    RUN(invalid_queries);
    RUN(snapshot_accessors);
}
