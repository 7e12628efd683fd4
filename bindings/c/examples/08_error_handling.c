/* Seed 000, "Handle listen errors": a listen can fail, e.g. for an invalid query; after an error
 * the listener receives no more events and need not be removed.
 *
 *   Swift: db.collection("cities").addSnapshotListener { querySnapshot, error in
 *            if let error = error { print("Error retreiving collection: \(error)") } }
 *   C++:   // Snippet coming soon (the seed says so)
 *
 * In C an error reaches you in one of two places: a listener that cannot start (bad path, invalid
 * query, closed database) is refused at once (token 0, `err` filled, ctx_free not called); a
 * listener that started and then fails gets the error in its callback (snapshot NULL), once,
 * and ctx_free runs after it.
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_snapshot *snapshot, const ember_error *error) {
    (void)ctx;
    if (error != NULL) {
        printf("Error retrieving collection: %s\n", ember_error_code_name(error->code));
    } else {
        printf("snapshot of %zu cities\n", ember_snapshot_size(snapshot));
    }
    event_seen();
}

static void report(const char *what, ember_listener_token token, const ember_error *err) {
    if (token == 0) printf("%s: Listen failed: %s: %s\n", what, ember_error_code_name(err->code), err->message);
    else printf("%s: listening\n", what);
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *query;
    ember_listener_token token;

    /* An invalid query: limit_to_last needs an order-by. */
    query = ember_query_new(db, "cities", &err);
    check(&err, "ember_query_new");
    ember_query_limit_to_last(query, 2, &err);
    check(&err, "ember_query_limit_to_last");
    token = ember_query_listen(query, 0, on_snapshot, NULL, NULL, &err);
    report("limit_to_last without order_by", token, &err);

    /* The builder refuses a broken rule at the call that breaks it. */
    if (!ember_query_where(query, "state", EMBER_OP_IN, EMBER_FORMAT_JSON, "[]", EMBER_NTS, &err))
        printf("where state in []: %s: %s\n", ember_error_code_name(err.code), err.message);
    if (!ember_query_limit(query, 0, &err))
        printf("limit 0: %s: %s\n", ember_error_code_name(err.code), err.message);
    ember_query_release(query);

    /* A document listener needs a document path. */
    token = ember_doc_listen(db, "cities", 0, (ember_document_listener_cb)0, NULL, NULL, &err);
    report("ember_doc_listen(\"cities\") without a callback", token, &err);
    token = ember_doc_listen(db, "cities//SF", 0, (ember_document_listener_cb)0, NULL, NULL, &err);
    report("ember_doc_listen(\"cities//SF\")", token, &err);

    /* Unknown flags are refused too. */
    query = ember_query_new(db, "cities", &err);
    check(&err, "ember_query_new");
    token = ember_query_listen(query, 0x80, on_snapshot, NULL, NULL, &err);
    report("flags 0x80", token, &err);

    /* A valid listener; the database closes under it: the listener ends (its ctx_free would run
     * before ember_db_close returns) and its callback never runs again. */
    printf("-- listen to cities, then close the database\n");
    token = ember_query_listen(query, 0, on_snapshot, NULL, NULL, &err);
    check(&err, "ember_query_listen");
    wait_events(1);
    ember_db_close(db, &err);
    check(&err, "ember_db_close");
    settle();
    token = ember_query_listen(query, 0, on_snapshot, NULL, NULL, &err);
    report("after close", token, &err);
    ember_query_release(query);
    return finish(db);
}
