/* Transactions: read then write, abort with a reason, refused writes, contention retries. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

typedef struct tx_ctx {
    int calls;
    ember_db *db;
    int interfere;        /* write the read document from outside, this many times */
    ember_transaction *kept;
} tx_ctx;

static bool increment(ember_transaction *tx, void *p, ember_error *err) {
    tx_ctx *c = p;
    ember_document *d = ember_transaction_get(tx, "c/counter", err);
    char *v;
    char data[64];
    long n = 0;
    c->calls++;
    c->kept = tx;
    if (!d) return false;
    v = ember_document_get(d, "n", EMBER_FORMAT_JSON, NULL, NULL);
    if (v) { n = strtol(v, NULL, 10); ember_free(v); }
    ember_document_release(d);
    if (c->interfere > 0) {
        c->interfere--;
        snprintf(data, sizeof data, "{\"n\":%ld}", 1000 + n);
        set_json(c->db, "c/counter", data);
        ember_db_wait_for_pending_writes(c->db, NULL, NULL, NULL);
    }
    snprintf(data, sizeof data, "{\"n\":%ld}", n + 1);
    return ember_transaction_set(tx, "c/counter", EMBER_FORMAT_JSON, data, EMBER_NTS, NULL, 0, err);
}

static void transaction_commits(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    tx_ctx c = {0, NULL, 0, NULL};
    c.db = db;
    set_json(db, "c/counter", "{\"n\":41}");
    CHECK(ember_db_run_transaction(db, 0, increment, &c, &err)); CHECK_OK(err);
    CHECK(c.calls == 1);
    d = ember_doc_get(db, "c/counter", EMBER_SOURCE_DEFAULT, &err);
    CHECK_STR(field_json(d, "n"), "42");
    ember_document_release(d);
    ember_db_release(db);
}

static void transaction_retries(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_document *d;
    tx_ctx c = {0, NULL, 2, NULL};
    c.db = db;
    set_json(db, "c/counter", "{\"n\":1}");
    CHECK(ember_db_run_transaction(db, 5, increment, &c, &err)); CHECK_OK(err);
    CHECK(c.calls == 3);
    d = ember_doc_get(db, "c/counter", EMBER_SOURCE_DEFAULT, &err);
    CHECK_STR(field_json(d, "n"), "2002");
    ember_document_release(d);
    c.calls = 0;
    c.interfere = 10;
    CHECK(!ember_db_run_transaction(db, 2, increment, &c, &err)); CHECK_ERR(err, EMBER_ERR_ABORTED);
    CHECK(c.calls == 2);
    ember_db_release(db);
}

static bool abort_with_reason(ember_transaction *tx, void *p, ember_error *err) {
    (void)tx; (void)p;
    err->code = EMBER_ERR_PERMISSION_DENIED;
    strcpy(err->message, "not today");
    return false;
}

static bool abort_silently(ember_transaction *tx, void *p, ember_error *err) {
    (void)tx; (void)p; (void)err;
    return false;
}

static bool ignore_refused_write(ember_transaction *tx, void *p, ember_error *err) {
    ember_error mine;
    (void)p; (void)err;
    ember_transaction_set(tx, "bad", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &mine);
    return true;
}

static bool write_then_read(ember_transaction *tx, void *p, ember_error *err) {
    ember_document *d;
    (void)p;
    if (!ember_transaction_delete(tx, "c/a", err)) return false;
    if (!ember_transaction_update(tx, "c/b", EMBER_FORMAT_JSON, "{\"x\":1}", EMBER_NTS, NULL, 0, err)) return false;
    if (!ember_transaction_merge(tx, "c/b", EMBER_FORMAT_JSON, "{\"y\":1}", EMBER_NTS, NULL, 0, NULL, 0, err)) return false;
    d = ember_transaction_get(tx, "c/a", err);   /* reads must come first */
    ember_document_release(d);
    return d != NULL;
}

static void transaction_errors(void) {
    ember_error err;
    ember_db *db = open_db();
    CHECK(!ember_db_run_transaction(db, 0, abort_with_reason, NULL, &err)); CHECK_ERR(err, EMBER_ERR_PERMISSION_DENIED);
    CHECK_STR(err.message, "not today");
    CHECK(!ember_db_run_transaction(db, 0, abort_silently, NULL, &err)); CHECK_ERR(err, EMBER_ERR_ABORTED);
    CHECK(!ember_db_run_transaction(db, 0, ignore_refused_write, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_run_transaction(db, 0, write_then_read, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_run_transaction(db, 0, NULL, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_run_transaction(db, -1, abort_silently, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_transaction_get(NULL, "c/a", &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_transaction_set(NULL, "c/a", EMBER_FORMAT_JSON, "{}", 2, NULL, 0, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_disable_network(db, &err));
    CHECK(!ember_db_run_transaction(db, 0, abort_silently, NULL, &err)); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    ember_db_release(db);
}

void run_transactions(void) {
    RUN(transaction_commits);
    RUN(transaction_retries);
    RUN(transaction_errors);
}
