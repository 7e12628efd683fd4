/* What google-cloud-firestore code needs from the C ABI: a create that is one
 * write with the exists=false precondition (ALREADY_EXISTS from the backend), and the backend's
 * create and update times of a document. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void create_is_one_write_with_a_precondition(void) {
    ember_db *db = open_db();
    ember_error err;
    latch l;
    latch_init(&l);
    CHECK(ember_doc_create(db, "c/a", EMBER_FORMAT_JSON, "{\"v\":1}", EMBER_NTS, NULL, 0, latch_write_cb, &l, &err));
    CHECK_OK(err);
    CHECK(latch_wait(&l, 1));
    CHECK(l.last_code == EMBER_OK);
    CHECK(ember_doc_create(db, "c/a", EMBER_FORMAT_JSON, "{\"v\":2}", EMBER_NTS, NULL, 0, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 2));
    CHECK(l.last_code == EMBER_ERR_ALREADY_EXISTS);
    CHECK(strstr(l.last_message, "Document already exists") != NULL);
    ember_document *d = ember_doc_get(db, "c/a", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d != NULL);
    if (d) { CHECK_STR(doc_json(d), "{\"v\":1}"); ember_document_release(d); }
    /* In a batch: the whole batch fails. */
    ember_batch *b = ember_batch_new(db, &err);
    CHECK(ember_batch_set(b, "c/b", EMBER_FORMAT_JSON, "{\"v\":1}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_create(b, "c/a", EMBER_FORMAT_JSON, "{\"v\":3}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_commit(b, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 3));
    CHECK(l.last_code == EMBER_ERR_ALREADY_EXISTS);
    ember_batch_release(b);
    d = ember_doc_get(db, "c/b", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d != NULL && !ember_document_exists(d));
    ember_document_release(d);
    /* Bad input: NULL path, bad path, closed database. */
    CHECK(!ember_doc_create(db, NULL, EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_create(db, "c", EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_batch_create(NULL, "c/x", EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_db_close(db, &err);
    CHECK(!ember_doc_create(db, "c/z", EMBER_FORMAT_JSON, "{}", EMBER_NTS, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_db_release(db);
    latch_destroy(&l);
}

static void document_times(void) {
    ember_db *db = open_db();
    ember_error err;
    latch l;
    latch_init(&l);
    CHECK(ember_document_create_time(NULL) == 0 && ember_document_update_time(NULL) == 0);
    ember_db_disable_network(db, &err);
    CHECK(ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{\"v\":1}", EMBER_NTS, NULL, 0, latch_write_cb, &l, &err));
    ember_document *d = ember_doc_get(db, "c/t", EMBER_SOURCE_CACHE, &err);
    CHECK(d && ember_document_create_time(d) == 0);      /* only a local write: unknown */
    ember_document_release(d);
    ember_db_enable_network(db, &err);
    CHECK(latch_wait(&l, 1));
    d = ember_doc_get(db, "c/t", EMBER_SOURCE_DEFAULT, &err);
    int64_t created = d ? ember_document_create_time(d) : 0;
    CHECK(created > 1700000000000000LL);                 /* microseconds since the epoch */
    CHECK(d && ember_document_update_time(d) == created);
    ember_document_release(d);
    CHECK(ember_doc_set(db, "c/t", EMBER_FORMAT_JSON, "{\"v\":2}", EMBER_NTS, NULL, 0, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 2));
    d = ember_doc_get(db, "c/t", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d && ember_document_create_time(d) == created && ember_document_update_time(d) > created);
    ember_document_release(d);
    d = ember_doc_get(db, "c/missing", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d && ember_document_create_time(d) == 0 && ember_document_update_time(d) == 0);
    ember_document_release(d);
    ember_db_close(db, &err);
    ember_db_release(db);
    latch_destroy(&l);
}


static void list_collection_ids_and_verify(void) {
    ember_db *db = open_db();
    ember_error err;
    set_json(db, "cities/SF", "{\"n\":1}");
    set_json(db, "users/u", "{\"n\":1}");
    set_json(db, "cities/SF/landmarks/a", "{\"n\":1}");
    set_json(db, "cities/LA/museums/m", "{\"n\":1}");
    latch l;
    latch_init(&l);
    CHECK(ember_db_wait_for_pending_writes(db, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 1));
    size_t len = 0;
    char *ids = ember_db_list_collection_ids(db, NULL, EMBER_FORMAT_JSON, &len, &err);
    CHECK_STR(ids, "[\"cities\",\"users\"]");
    ember_free(ids);
    ids = ember_db_list_collection_ids(db, "cities/LA", EMBER_FORMAT_JSON, NULL, &err);
    CHECK_STR(ids, "[\"museums\"]");
    ember_free(ids);
    CHECK(ember_db_list_collection_ids(db, "cities", EMBER_FORMAT_JSON, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_list_collection_ids(NULL, NULL, EMBER_FORMAT_JSON, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* verify: the batch applies only while the document is as read. */
    ember_document *d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_DEFAULT, &err);
    int64_t t = d ? ember_document_update_time(d) : 0;
    ember_document_release(d);
    ember_batch *b = ember_batch_new(db, &err);
    CHECK(ember_batch_verify(b, "cities/SF", t, &err));
    CHECK(ember_batch_set(b, "cities/NY", EMBER_FORMAT_JSON, "{\"n\":2}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_commit(b, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 2) && l.last_code == EMBER_OK);
    ember_batch_release(b);
    set_json(db, "cities/SF", "{\"n\":3}");
    b = ember_batch_new(db, &err);
    CHECK(ember_batch_verify(b, "cities/SF", t, &err));
    CHECK(ember_batch_verify(b, "cities/none", 0, &err));
    CHECK(ember_batch_set(b, "cities/BOS", EMBER_FORMAT_JSON, "{\"n\":2}", EMBER_NTS, NULL, 0, &err));
    CHECK(ember_batch_commit(b, latch_write_cb, &l, &err));
    CHECK(latch_wait(&l, 3) && l.last_code == EMBER_ERR_FAILED_PRECONDITION);
    ember_batch_release(b);
    d = ember_doc_get(db, "cities/BOS", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d && !ember_document_exists(d));
    ember_document_release(d);
    ember_db_close(db, &err);
    CHECK(ember_db_list_collection_ids(db, NULL, EMBER_FORMAT_JSON, NULL, &err) == NULL);
    CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_db_release(db);
    latch_destroy(&l);
}

void run_fidelity(void) {
    RUN(create_is_one_write_with_a_precondition);
    RUN(document_times);
    RUN(list_collection_ids_and_verify);
}
