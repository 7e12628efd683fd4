/* Input at the boundary: data given with an explicit length is read
 * whole (a NUL byte inside it is not an end: JSON text with one is refused, a string value may hold
 * one); values nested 100,000 deep, in JSON or MessagePack, for documents, queries and the tree, are
 * refused with INVALID_ARGUMENT (no stack overflow). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include <pthread.h>
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


/* A size_t length or count past what any buffer holds (a caller's negative int) is refused with
 * INVALID_ARGUMENT; it trapped on a negative count. */
static void impossible_lengths_are_refused(void) {
    ember_error err;
    const char *json = "{\"a\":1}";
    CHECK(ember_value_convert(json, (size_t)-2, EMBER_FORMAT_JSON, EMBER_FORMAT_MSGPACK, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db *db = open_db();
    CHECK(!ember_doc_set(db, "c/a", EMBER_FORMAT_JSON, json, (size_t)-5, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    const char *fields[] = {"a"};
    CHECK(!ember_doc_merge(db, "c/a", EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, 0, fields, (size_t)-5, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_filter_and(NULL, (size_t)-1, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_close(db, &err);
    ember_db_release(db);
}

/* and/or filters nest at most 100 deep: deeper is refused (building, checking and freeing a filter
 * recursed without bound: 5,000 levels overflowed the stack). */
static void deep_filters_are_refused(void) {
    ember_error err;
    ember_filter *f = ember_filter_field("a", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err);
    CHECK(f != NULL);
    int levels = 1;
    for (int i = 0; i < 5000; i++) {
        ember_filter *g = ember_filter_and((const ember_filter *const *)&f, 1, &err);
        if (!g) break;
        ember_filter_release(f);
        f = g;
        levels++;
    }
    CHECK(levels == 100);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_filter_release(f);
}

/* A message cut to fit ember_error ends on a whole character. */
static void cut_messages_stay_utf8(void) {
    ember_error err;
    char field[1200];
    size_t k = 0;
    field[k++] = 'a';
    for (int i = 0; i < 300; i++) { field[k++] = (char)0xe2; field[k++] = (char)0x82; field[k++] = (char)0xac; }  /* the euro sign */
    field[k++] = '*';
    field[k] = 0;
    for (int shift = 0; shift < 3; shift++) {
        memset(err.message, 'x', sizeof err.message);
        CHECK(ember_filter_field(field + shift, EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "1", EMBER_NTS, &err) == NULL);
        size_t n = strlen(err.message);
        CHECK(n > 0 && n < sizeof err.message);
        /* valid UTF-8: every lead byte is followed by its continuation bytes */
        size_t i = 0;
        int ok = 1;
        while (i < n && ok) {
            unsigned char c = (unsigned char)err.message[i];
            size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
            if (len == 0 || i + len > n) { ok = 0; break; }
            for (size_t j = 1; j < len; j++) if (((unsigned char)err.message[i + j] & 0xc0) != 0x80) ok = 0;
            i += len;
        }
        CHECK(ok);
    }
}

/* One transaction handle used from several threads inside its function: the calls are serialized
 * (they raced on the transaction's buffered writes and crashed). */
typedef struct { ember_transaction *tx; int failures; } tx_thread_arg;

static void *tx_writer(void *p) {
    tx_thread_arg *a = p;
    ember_error err;
    for (int i = 0; i < 100; i++) {   /* 400 in all: under the 500-write limit */
        char path[32];
        snprintf(path, sizeof path, "t/d%d", i % 7);
        if (!ember_transaction_set(a->tx, path, EMBER_FORMAT_JSON, "{\"v\":1}", EMBER_NTS, NULL, 0, &err)) a->failures++;
    }
    return NULL;
}

static bool tx_from_threads(ember_transaction *tx, void *ctx, ember_error *err) {
    (void)ctx; (void)err;
    pthread_t th[4];
    tx_thread_arg args[4];
    for (int i = 0; i < 4; i++) { args[i].tx = tx; args[i].failures = 0; pthread_create(&th[i], NULL, tx_writer, &args[i]); }
    int failures = 0;
    for (int i = 0; i < 4; i++) { pthread_join(th[i], NULL); failures += args[i].failures; }
    return failures == 0;
}

static void a_transaction_used_from_several_threads(void) {
    ember_error err;
    ember_db *db = open_db();
    for (int round = 0; round < 5; round++) {
        CHECK(ember_db_run_transaction(db, 0, tx_from_threads, NULL, &err));
        CHECK_OK(err);
    }
    ember_db_close(db, &err);
    ember_db_release(db);
}

void run_boundary(void) {
    RUN(deep_values_are_refused);
    RUN(explicit_lengths_are_read_whole);
    RUN(impossible_lengths_are_refused);
    RUN(deep_filters_are_refused);
    RUN(cut_messages_stay_utf8);
    RUN(a_transaction_used_from_several_threads);
}
