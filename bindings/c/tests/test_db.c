/* Opening (settings), closing, releasing, use after close, network switch, pending writes. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void open_and_release(void) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    ember_settings_init(&s);
    CHECK(s.path == NULL && s.persistence && s.cache_size_bytes == EMBER_CACHE_SIZE_DEFAULT);
    db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    CHECK(ember_instance_count() == 1);
    ember_db_release(db);
    ember_db_release(NULL);
    ember_settings_init(NULL);
    s.cache_size_bytes = EMBER_CACHE_SIZE_UNLIMITED;
    db = ember_db_open(&s, NULL);
    CHECK(db != NULL);
    ember_db_release(db);
}

static void settings_errors(void) {
    ember_error err;
    ember_settings s;
    ember_settings_init(&s);
    s.path = "/nonexistent-ember-dir/x.ember";   /* durable-storage errors: test_storage.c */
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    s.path = "\xff";
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    s.path = NULL;
    s.persistence = false;
    s.cache_size_bytes = 1000;
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    s.cache_size_bytes = -2;
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
}

static void use_after_close(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *q = ember_query_new(db, "c", &err);
    ember_document *d;
    int64_t n = -1;
    CHECK(q != NULL);
    set_json(db, "c/a", "{\"x\":1}");
    CHECK(ember_db_close(db, &err)); CHECK_OK(err);
    CHECK(ember_db_close(db, &err)); CHECK_OK(err);   /* idempotent */
    CHECK(!ember_doc_set(db, "c/a", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_CACHE, &err);
    CHECK(d == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_db_disable_network(db, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_db_enable_network(db, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_query_get(q, EMBER_SOURCE_DEFAULT, &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_query_count(q, &n, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_doc_listen(db, "c/a", 0, NULL, NULL, NULL, &err) == 0); CHECK(err.code != EMBER_OK);
    CHECK(ember_batch_new(db, &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_query_new(db, "c", &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_db_release(db);
    /* The query outlives the database's handle and keeps failing cleanly. */
    CHECK(ember_query_get(q, EMBER_SOURCE_DEFAULT, &err) == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_query_release(q);
}

static void null_handles(void) {
    ember_error err;
    CHECK(!ember_db_close(NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_disable_network(NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_enable_network(NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_wait_for_pending_writes(NULL, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_doc_set(NULL, "a/b", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_doc_get(NULL, "a/b", 0, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_batch_new(NULL, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new(NULL, "c", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_new_collection_group(NULL, "c", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_doc_listen(NULL, "a/b", 0, NULL, NULL, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_query_listen(NULL, 0, NULL, NULL, NULL, &err) == 0); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_run_transaction(NULL, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    ember_listener_remove(0);
    ember_listener_remove(123456789);
}

static void network_switch(void) {
    ember_error err;
    ember_db *db = open_db();
    latch acked;
    ember_document *d;
    latch_init(&acked);
    CHECK(ember_db_disable_network(db, &err)); CHECK_OK(err);
    CHECK(ember_db_disable_network(db, &err)); CHECK_OK(err);
    CHECK(ember_doc_set(db, "c/a", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS, NULL, 0, latch_write_cb, &acked, &err));
    sleep_ms(20);
    CHECK(latch_count(&acked) == 0);   /* queued while offline */
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_DEFAULT, &err);
    CHECK(d != NULL); CHECK_OK(err);
    CHECK(ember_document_is_from_cache(d));
    CHECK(ember_document_has_pending_writes(d));
    ember_document_release(d);
    CHECK(ember_doc_get(db, "c/a", EMBER_SOURCE_SERVER, &err) == NULL); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    CHECK(ember_doc_get(db, "c/missing", EMBER_SOURCE_DEFAULT, &err) == NULL); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    CHECK(ember_db_enable_network(db, &err)); CHECK_OK(err);
    CHECK(latch_wait(&acked, 1));
    CHECK(acked.last_code == EMBER_OK);
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_SERVER, &err);
    CHECK(d && !ember_document_is_from_cache(d) && !ember_document_has_pending_writes(d));
    ember_document_release(d);
    ember_db_release(db);
    latch_destroy(&acked);
}

static void pending_writes(void) {
    ember_error err;
    ember_db *db = open_db();
    latch done, cancelled;
    latch_init(&done);
    latch_init(&cancelled);
    CHECK(ember_db_wait_for_pending_writes(db, latch_write_cb, &done, &err)); CHECK_OK(err);
    CHECK(latch_wait(&done, 1));       /* nothing pending: at once */
    set_json(db, "c/a", "{\"x\":1}");
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_OK(err);   /* blocking form */
    CHECK(ember_db_disable_network(db, &err));
    set_json(db, "c/b", "{\"x\":2}");
    CHECK(ember_db_wait_for_pending_writes(db, latch_write_cb, &cancelled, &err));
    CHECK(ember_doc_set(db, "c/c", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, latch_write_cb, &cancelled, &err));
    ember_db_close(db, &err);
    CHECK(latch_count(&cancelled) == 2);   /* close runs them before returning */
    CHECK(cancelled.last_code == EMBER_ERR_CANCELLED);
    ember_db_release(db);
    latch_destroy(&done);
    latch_destroy(&cancelled);
}

void run_db(void) {
    RUN(open_and_release);
    RUN(settings_errors);
    RUN(use_after_close);
    RUN(null_handles);
    RUN(network_switch);
    RUN(pending_writes);
}
