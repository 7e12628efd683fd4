/* Writes to documents (set, merge all / fields, update by field paths, delete, every transform)
 * and reads (get with each source, data and fields in both formats), with their error paths. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static ember_document *get(ember_db *db, const char *path) {
    ember_error err;
    ember_document *d = ember_doc_get(db, path, EMBER_SOURCE_CACHE, &err);
    CHECK_OK(err);
    return d;
}

static void set_and_get(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    latch acked;
    latch_init(&acked);
    CHECK(ember_db_disable_network(db, &err));   /* the write stays pending until enabled */
    CHECK(ember_doc_set(db, "cities/SF", EMBER_FORMAT_JSON, "{\"name\":\"San Francisco\",\"pop\":860000,\"area\":121.4,\"one\":1.0}",
                        EMBER_NTS, NULL, 0, latch_write_cb, &acked, &err));
    CHECK_OK(err);
    d = get(db, "cities/SF");
    CHECK(d && ember_document_exists(d));
    CHECK_STR(ember_document_id(d), "SF");
    CHECK_STR(ember_document_path(d), "cities/SF");
    CHECK(ember_document_has_pending_writes(d));
    CHECK(ember_document_is_from_cache(d));
    CHECK_STR(doc_json(d), "{\"area\":121.4,\"name\":\"San Francisco\",\"one\":1.0,\"pop\":860000}");
    CHECK_STR(field_json(d, "one"), "1.0");
    CHECK_STR(field_json(d, "pop"), "860000");
    ember_document_release(d);
    CHECK(ember_db_enable_network(db, &err));
    CHECK(latch_wait(&acked, 1));
    CHECK(acked.last_code == EMBER_OK);
    d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_DEFAULT, &err);
    CHECK_OK(err);
    CHECK(d && !ember_document_has_pending_writes(d) && !ember_document_is_from_cache(d));
    ember_document_release(d);
    d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_SERVER, &err);
    CHECK(d && ember_document_exists(d));
    ember_document_release(d);
    /* A missing document is a snapshot that says so. */
    d = ember_doc_get(db, "cities/LA", EMBER_SOURCE_DEFAULT, &err);
    CHECK_OK(err);
    CHECK(d && !ember_document_exists(d));
    CHECK_STR(ember_document_id(d), "LA");
    CHECK(ember_document_data(d, EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_NOT_FOUND);
    CHECK(ember_document_get(d, "x", EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_NOT_FOUND);
    ember_document_release(d);
    CHECK(ember_doc_get(db, "cities/SF", 9, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
    latch_destroy(&acked);
}

static void msgpack_writes(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    /* {"b": bin[1,2], "t": timestamp 10 s, "r": ref "c/x", "g": geo(1.5, -2.0)} */
    static const unsigned char data[] = {
        0x84,
        0xa1, 'b', 0xc4, 0x02, 0x01, 0x02,
        0xa1, 't', 0xd6, 0xff, 0x00, 0x00, 0x00, 0x0a,
        0xa1, 'r', 0xc7, 0x03, 0x01, 'c', '/', 'x',
        0xa1, 'g', 0xd8, 0x02, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xc0, 0x00, 0, 0, 0, 0, 0, 0};
    size_t len = 0;
    char *mp;
    CHECK(ember_doc_set(db, "c/m", EMBER_FORMAT_MSGPACK, data, sizeof data, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/m");
    CHECK_STR(doc_json(d), "{\"b\":{\"$bytes\":\"AQI=\"},\"g\":{\"$geo\":[1.5,-2.0]},\"r\":{\"$ref\":\"c/x\"},\"t\":{\"$timestamp\":\"1970-01-01T00:00:10.000000Z\"}}");
    mp = ember_document_get(d, "b", EMBER_FORMAT_MSGPACK, &len, &err);
    CHECK(mp && len == 4 && (unsigned char)mp[0] == 0xc4 && mp[2] == 1 && mp[3] == 2);
    ember_free(mp);
    mp = ember_document_data(d, EMBER_FORMAT_MSGPACK, &len, &err);
    CHECK(mp && len > 0 && (unsigned char)mp[0] == 0x84);
    ember_free(mp);
    CHECK(ember_document_data(d, 5, &len, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_document_release(d);
    CHECK(!ember_doc_set(db, "c/m", EMBER_FORMAT_MSGPACK, data, sizeof data - 1, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

static void merge_and_update(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    const char *fields[] = {"a.x", "c"};
    set_json(db, "c/d", "{\"a\":{\"x\":1,\"y\":2},\"b\":true}");
    CHECK(ember_doc_merge(db, "c/d", EMBER_FORMAT_JSON, "{\"a\":{\"x\":10},\"n\":null}", EMBER_NTS, NULL, 0, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/d");
    CHECK_STR(doc_json(d), "{\"a\":{\"x\":10,\"y\":2},\"b\":true,\"n\":null}");
    ember_document_release(d);
    CHECK(ember_doc_merge(db, "c/d", EMBER_FORMAT_JSON, "{\"a\":{\"x\":20,\"y\":30},\"b\":false,\"c\":3}", EMBER_NTS, NULL, 0, fields, 2, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/d");
    CHECK_STR(doc_json(d), "{\"a\":{\"x\":20,\"y\":2},\"b\":true,\"c\":3,\"n\":null}");
    ember_document_release(d);
    CHECK(!ember_doc_merge(db, "c/d", EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, 0, fields, 2, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);   /* c is in the mask but not in the data */
    CHECK(!ember_doc_merge(db, "c/d", EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, NULL, 3, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* update: keys are field paths */
    CHECK(ember_doc_update(db, "c/d", EMBER_FORMAT_JSON, "{\"a.y\":5,\"`odd.key`\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/d");
    CHECK_STR(doc_json(d), "{\"a\":{\"x\":20,\"y\":5},\"b\":true,\"c\":3,\"n\":null,\"odd.key\":1}");
    CHECK_STR(field_json(d, "`odd.key`"), "1");
    CHECK_STR(field_json(d, "a.y"), "5");
    CHECK(ember_document_get(d, "a.zz", EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_NOT_FOUND);
    CHECK(ember_document_get(d, "a..b", EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_document_get(d, NULL, EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_document_release(d);
    CHECK(!ember_doc_update(db, "c/d", EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_update(db, "c/d", EMBER_FORMAT_JSON, "{\"a\":1,\"a.b\":2}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_update(db, "c/d", EMBER_FORMAT_JSON, "{\"a..b\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

static void update_missing_fails_later(void) {
    ember_error err;
    ember_db *db = open_db();
    latch done;
    latch_init(&done);
    CHECK(ember_doc_update(db, "c/none", EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, 0, latch_write_cb, &done, &err));
    CHECK_OK(err);
    CHECK(latch_wait(&done, 1));
    CHECK(done.last_code == EMBER_ERR_NOT_FOUND);
    ember_db_release(db);
    latch_destroy(&done);
}

static void transforms(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    set_json(db, "c/t", "{\"n\":1,\"f\":1.5,\"tags\":[\"a\",\"b\"],\"gone\":1}");
    CHECK(ember_db_disable_network(db, &err));   /* the server timestamp stays pending */
    CHECK(ember_doc_update(db, "c/t", EMBER_FORMAT_JSON, NULL, 0,
        "{\"n\":{\"increment\":2},\"f\":{\"increment\":1},\"tags\":{\"arrayUnion\":[\"b\",\"c\"]},\"gone\":\"delete\",\"at\":\"serverTimestamp\"}",
        EMBER_NTS, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/t");
    CHECK_STR(doc_json(d), "{\"at\":null,\"f\":2.5,\"n\":3,\"tags\":[\"a\",\"b\",\"c\"]}");
    ember_document_release(d);
    CHECK(ember_db_enable_network(db, &err));
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err));
    d = get(db, "c/t");
    CHECK(strstr(field_json(d, "at"), "$timestamp") != NULL);
    ember_document_release(d);
    CHECK(ember_doc_merge(db, "c/t", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS,
        "{\"tags\":{\"arrayRemove\":[\"a\"]},\"at\":\"delete\"}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/t");
    CHECK_STR(doc_json(d), "{\"f\":2.5,\"n\":3,\"tags\":[\"b\",\"c\"],\"x\":1}");
    ember_document_release(d);
    CHECK(ember_doc_set(db, "c/t2", EMBER_FORMAT_JSON, "{\"a\":{\"b\":1}}", EMBER_NTS, "{\"a.c\":{\"increment\":5}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_OK(err);
    d = get(db, "c/t2");
    CHECK_STR(doc_json(d), "{\"a\":{\"b\":1,\"c\":5}}");
    ember_document_release(d);
    /* errors */
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"a\":\"delete\"}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"a\":\"bogus\"}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"a\":{\"increment\":\"x\"}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"a\":{\"arrayUnion\":[[1]]}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, "{\"a\":\"serverTimestamp\"}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "[1]", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"a\":{\"nope\":1}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

static void delete_document(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    set_json(db, "c/x", "{\"a\":1}");
    CHECK(ember_doc_delete(db, "c/x", NULL, NULL, &err)); CHECK_OK(err);
    d = get(db, "c/x");
    CHECK(d && !ember_document_exists(d));
    ember_document_release(d);
    CHECK(!ember_doc_delete(db, "c", NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_delete(db, NULL, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

static void write_errors(void) {
    ember_error err;
    ember_db *db = open_db();
    char *big = malloc(1100000);
    char deep[200];
    int i;
    /* bad paths */
    CHECK(!ember_doc_set(db, "c", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c//d", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/\xc3", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, NULL, EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* bad data */
    CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, "[1]", EMBER_NTS, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, "{\"a\":[[1]]}", EMBER_NTS, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, "{\"\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, NULL, 5, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/d", 3, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* too deep: 25 nested maps */
    for (i = 0; i < 25; i++) { deep[i * 5] = '{'; deep[i * 5 + 1] = '"'; deep[i * 5 + 2] = 'a'; deep[i * 5 + 3] = '"'; deep[i * 5 + 4] = ':'; }
    deep[125] = '1';
    for (i = 0; i < 25; i++) deep[126 + i] = '}';
    deep[151] = '\0';
    CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, deep, EMBER_NTS, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* too large: one 1.1 MB string */
    if (big) {
        memcpy(big, "{\"s\":\"", 6);
        memset(big + 6, 'x', 1100000 - 9);
        memcpy(big + 1100000 - 3, "\"}", 3);
        CHECK(!ember_doc_set(db, "c/d", EMBER_FORMAT_JSON, big, EMBER_NTS, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
        free(big);
    }
    ember_db_release(db);
}

static void document_handles(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d, *r;
    set_json(db, "c/h", "{\"a\":1}");
    d = get(db, "c/h");
    r = ember_document_retain(d);
    CHECK(r == d);
    ember_document_release(d);
    CHECK_STR(ember_document_id(r), "h");   /* still alive through the second reference */
    ember_document_release(r);
    CHECK(ember_document_retain(NULL) == NULL);
    ember_document_release(NULL);
    CHECK(!ember_document_exists(NULL));
    CHECK(ember_document_id(NULL) == NULL);
    CHECK(ember_document_path(NULL) == NULL);
    CHECK(!ember_document_has_pending_writes(NULL));
    CHECK(!ember_document_is_from_cache(NULL));
    CHECK(ember_document_data(NULL, EMBER_FORMAT_JSON, NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_release(db);
}

/* Writes parse ASCII paths straight from the bytes; everything else goes through the full
 * parser. Both must agree: the same paths accepted (and stored under the same canonical path),
 * the same ones refused with the same message as ember_path_kind gives. */
static void write_paths_like_the_parser(void) {
    static const char *const ok[][2] = {
        {"cities/SF", "cities/SF"}, {"/cities/SF2/", "cities/SF2"}, {"cities/SF3/", "cities/SF3"},
        {"/cities/SF4", "cities/SF4"}, {"cities/_x_", "cities/_x_"}, {"cities/__x", "cities/__x"},
        {"cities/x__", "cities/x__"}, {"cities/...", "cities/..."}, {"cities/.x", "cities/.x"},
        {"a/b/c/d", "a/b/c/d"}, {"ciudades/\xc3\xa9", "ciudades/\xc3\xa9"}};
    static const char *const bad[] = {"", "/", "//", "cities", "/cities/", "a/b/c", "//cities/SF", "cities//SF",
                                      "cities/SF//", "cities/.", "cities/..", "./x", "cities/__x__", "__a__/x",
                                      "cities/SF/\xff"};
    size_t i;
    ember_error err, kind_err;
    ember_db *db = open_db();
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ember_document *d;
        CHECK(ember_doc_set(db, ok[i][0], EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
        CHECK_OK(err);
        d = ember_doc_get(db, ok[i][0], EMBER_SOURCE_CACHE, &err);
        CHECK_OK(err);
        CHECK(d && ember_document_exists(d));
        if (d) CHECK_STR(ember_document_path(d), ok[i][1]);
        ember_document_release(d);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!ember_doc_set(db, bad[i], EMBER_FORMAT_JSON, "{\"a\":1}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
        CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
        if (ember_path_kind(bad[i], &kind_err) == EMBER_PATH_INVALID) CHECK_STR(err.message, kind_err.message);
        CHECK(!ember_doc_delete(db, bad[i], NULL, NULL, &err));
        CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    }
    ember_db_release(db);
}

void run_documents(void) {
    RUN(set_and_get);
    RUN(msgpack_writes);
    RUN(merge_and_update);
    RUN(update_missing_fails_later);
    RUN(transforms);
    RUN(delete_document);
    RUN(write_errors);
    RUN(document_handles);
    RUN(write_paths_like_the_parser);
}
