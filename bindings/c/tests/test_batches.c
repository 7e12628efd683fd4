/* Write batches: every write kind, atomic commit, commit once, errors. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void batch_commit(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_batch *b = ember_batch_new(db, &err);
    ember_document *d;
    latch done;
    const char *fields[] = {"m"};
    latch_init(&done);
    set_json(db, "c/u", "{\"a\":1}");
    set_json(db, "c/del", "{\"a\":1}");
    CHECK(b != NULL);
    CHECK(ember_batch_set(b, "c/s", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS, "{\"t\":\"serverTimestamp\"}", EMBER_NTS, &err)); CHECK_OK(err);
    CHECK(ember_batch_merge(b, "c/u", EMBER_FORMAT_JSON, "{\"m\":2,\"ignored\":3}", EMBER_NTS, NULL, 0, fields, 1, &err)); CHECK_OK(err);
    CHECK(ember_batch_update(b, "c/u", EMBER_FORMAT_JSON, "{\"a\":5}", EMBER_NTS, NULL, 0, &err)); CHECK_OK(err);
    CHECK(ember_batch_delete(b, "c/del", &err)); CHECK_OK(err);
    d = ember_doc_get(db, "c/s", EMBER_SOURCE_CACHE, &err);
    CHECK(d == NULL); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);   /* nothing applied before commit */
    CHECK(ember_batch_commit(b, latch_write_cb, &done, &err)); CHECK_OK(err);
    CHECK(latch_wait(&done, 1));
    CHECK(done.last_code == EMBER_OK);
    d = ember_doc_get(db, "c/u", EMBER_SOURCE_DEFAULT, &err);
    CHECK_STR(doc_json(d), "{\"a\":5,\"m\":2}");
    ember_document_release(d);
    d = ember_doc_get(db, "c/del", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d && !ember_document_exists(d));
    ember_document_release(d);
    /* committed once */
    CHECK(!ember_batch_set(b, "c/s", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_batch_commit(b, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_batch_release(b);
    ember_db_release(db);
    latch_destroy(&done);
}

static void batch_rejected_atomically(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_batch *b = ember_batch_new(db, &err);
    ember_document *d;
    latch done;
    latch_init(&done);
    CHECK(ember_batch_set(b, "c/a", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_update(b, "c/missing", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_commit(b, latch_write_cb, &done, &err));
    CHECK(latch_wait(&done, 1));
    CHECK(done.last_code == EMBER_ERR_NOT_FOUND);
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d && !ember_document_exists(d));
    ember_document_release(d);
    ember_batch_release(b);
    ember_db_release(db);
    latch_destroy(&done);
}

static void batch_errors(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_batch *b = ember_batch_new(db, &err);
    latch done;
    int i;
    latch_init(&done);
    CHECK(!ember_batch_set(b, "c", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_merge(b, "c/a", EMBER_FORMAT_JSON, "{", 1, NULL, 0, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_update(b, "c/a", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_delete(b, "c/a/b", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_set(NULL, "c/a", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_commit(NULL, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    for (i = 0; i < 500; i++) CHECK(ember_batch_delete(b, "c/a", &err));
    CHECK(!ember_batch_delete(b, "c/a", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_batch_release(b);
    /* an empty batch commits */
    b = ember_batch_new(db, &err);
    CHECK(ember_batch_commit(b, latch_write_cb, &done, &err)); CHECK_OK(err);
    CHECK(latch_wait(&done, 1));
    CHECK(done.last_code == EMBER_OK);
    ember_batch_release(b);
    ember_batch_release(NULL);
    ember_db_release(db);
    latch_destroy(&done);
}

void run_batches(void) {
    RUN(batch_commit);
    RUN(batch_rejected_atomically);
    RUN(batch_errors);
}
