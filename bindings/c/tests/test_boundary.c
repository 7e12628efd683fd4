/* Input at the boundary (issue 10, items 2 and 3): data given with an explicit length is read
 * whole (a NUL byte inside it is not an end: JSON text with one is refused, a string value may hold
 * one); values nested 100,000 deep, in JSON or MessagePack, for documents, queries and the tree, are
 * refused with INVALID_ARGUMENT (no stack overflow). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <stdlib.h>

#define DEEP 100000

/* {"a": [[[...]]]} nested DEEP deep, as JSON text (NUL-terminated; free it). */
static char *deep_json(void) {
    char *j = malloc(2 * DEEP + 16);
    size_t k = 0;
    memcpy(j, "{\"a\":", 5);
    k = 5;
    for (size_t i = 0; i < DEEP; i++) j[k++] = '[';
    for (size_t i = 0; i < DEEP; i++) j[k++] = ']';
    j[k++] = '}';
    j[k] = '\0';
    return j;
}

/* The same as MessagePack: {"a": [[[... nil]]]} (free it; *len receives its length). */
static unsigned char *deep_msgpack(size_t *len) {
    unsigned char *m = malloc(DEEP + 16);
    size_t k = 0;
    m[k++] = 0x81; m[k++] = 0xa1; m[k++] = 'a';
    for (size_t i = 0; i < DEEP; i++) m[k++] = 0x91;
    m[k++] = 0xc0;
    *len = k;
    return m;
}

static void deep_values_are_refused(void) {
    ember_db *db = open_db();
    ember_error err;
    size_t mlen = 0;
    char *json = deep_json();
    unsigned char *mp = deep_msgpack(&mlen);
    CHECK(!ember_doc_set(db, "c/a", EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(db, "c/a", EMBER_FORMAT_MSGPACK, mp, mlen, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_value_convert(json, EMBER_NTS, EMBER_FORMAT_JSON, EMBER_FORMAT_MSGPACK, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_value_convert(mp, mlen, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);

    ember_query *q = ember_query_new(db, "c", &err);
    CHECK(q != NULL);
    CHECK(!ember_query_where(q, "a", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, json + 5, 2 * DEEP, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_query_release(q);

    ember_ref *r = ember_ref_new(db, "t", &err);
    CHECK(r != NULL);
    CHECK(!ember_ref_set(r, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_ref_set(r, EMBER_FORMAT_MSGPACK, mp, mlen, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_ref_release(r);
    free(json);
    free(mp);
    ember_db_close(db, &err);
    ember_db_release(db);
}

static void explicit_lengths_are_read_whole(void) {
    ember_db *db = open_db();
    ember_error err;
    /* A NUL byte inside JSON text given with its length: refused, not cut at the NUL. */
    static const char two[] = "{\"a\":1}\0{\"b\":2}";
    CHECK(!ember_doc_set(db, "c/a", EMBER_FORMAT_JSON, two, sizeof two - 1, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* A string value holding a NUL (MessagePack carries the length) round-trips whole. */
    static const unsigned char doc[] = {0x81, 0xa1, 's', 0xa3, 'a', 0x00, 'b'};
    CHECK(ember_doc_set(db, "c/a", EMBER_FORMAT_MSGPACK, doc, sizeof doc, NULL, 0, NULL, NULL, &err));
    CHECK_OK(err);
    ember_document *d = ember_doc_get(db, "c/a", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL);
    if (d) {
        size_t len = 0;
        char *back = ember_document_data(d, EMBER_FORMAT_MSGPACK, &len, &err);
        CHECK(back != NULL && len == sizeof doc && memcmp(back, doc, len) == 0);
        ember_free(back);
        ember_document_release(d);
    }
    ember_db_close(db, &err);
    ember_db_release(db);
}

void run_boundary(void) {
    RUN(deep_values_are_refused);
    RUN(explicit_lengths_are_read_whole);
}
