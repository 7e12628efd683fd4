/* Seeds 001/003/004 (access data offline), "Disable and enable network access" and "Listen to
 * offline data", with seed 000's query listener: while the network is disabled, writes are
 * applied locally and queued, listeners serve the cache (is_from_cache), a get from the cache
 * answers what it has; enabling the network sends the queued writes.
 *
 *   Swift: db.collection("cities").whereField("state", isEqualTo: "CA")
 *            .addSnapshotListener(includeMetadataChanges: true) { querySnapshot, error in
 *              for diff in snapshot.documentChanges where diff.type == .added {
 *                print("New city: \(diff.document.data())") }
 *              let source = snapshot.metadata.isFromCache ? "local cache" : "server"
 *              print("Metadata: Data fetched from \(source)") }
 *          Firestore.firestore().disableNetwork { (error) in // Do offline things }
 *          Firestore.firestore().enableNetwork { (error) in // Do online things }
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_snapshot *snapshot, const ember_error *error) {
    size_t i;
    (void)ctx;
    if (error != NULL) {
        printf("Error retrieving snapshot: %s\n", ember_error_code_name(error->code));
        event_seen();
        return;
    }
    for (i = 0; i < ember_snapshot_change_count(snapshot); i++) {
        ember_document_change dc;
        ember_snapshot_change(snapshot, i, &dc, NULL);
        if (dc.type == EMBER_CHANGE_ADDED) {
            printf("New city: ");
            print_data(dc.document);
            printf("\n");
        }
    }
    printf("Metadata: Data fetched from %s%s\n", ember_snapshot_is_from_cache(snapshot) ? "local cache" : "server",
           ember_snapshot_has_pending_writes(snapshot) ? " (pending writes)" : "");
    event_seen();
}

static void on_written(void *ctx, const ember_error *error) {
    printf("write %s acknowledged: %s\n", (const char *)ctx, ember_error_code_name(error->code));
    event_seen();
}

static void get_from_cache(ember_db *db, const char *path) {
    ember_error err;
    ember_document *doc = ember_doc_get(db, path, EMBER_SOURCE_DEFAULT, &err);
    if (doc == NULL) {
        printf("get %s: %s\n", path, ember_error_code_name(err.code));
        return;
    }
    printf("get %s: from_cache=%d exists=%d\n", path, (int)ember_document_is_from_cache(doc), (int)ember_document_exists(doc));
    ember_document_release(doc);
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *query;
    ember_listener_token token;

    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"state\":\"CA\"}");
    wait_writes(db);

    query = ember_query_new(db, "cities", &err);
    check(&err, "ember_query_new");
    ember_query_where(query, "state", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "\"CA\"", EMBER_NTS, &err);
    check(&err, "ember_query_where");
    token = ember_query_listen(query, EMBER_LISTEN_INCLUDE_METADATA_CHANGES, on_snapshot, NULL, NULL, &err);
    check(&err, "ember_query_listen");
    wait_events(2);                       /* SF from the cache at once, then the server's answer */

    printf("-- disableNetwork\n");
    ember_db_disable_network(db, &err);
    check(&err, "ember_db_disable_network");
    wait_events(3);                       /* the same result, now from the cache */

    /* Do offline things */
    printf("-- offline write\n");
    ember_doc_set(db, "cities/LA", EMBER_FORMAT_JSON, "{\"name\":\"Los Angeles\",\"state\":\"CA\"}", EMBER_NTS,
                  NULL, 0, on_written, "LA", &err);
    check(&err, "ember_doc_set");
    wait_events(4);
    settle();                             /* queued: no acknowledgement while offline */
    get_from_cache(db, "cities/LA");      /* the cache has the local write */
    get_from_cache(db, "cities/NOPE");    /* offline, not in the cache: an error */
    {
        ember_document *doc = ember_doc_get(db, "cities/NOPE", EMBER_SOURCE_CACHE, &err);
        printf("get cities/NOPE from the cache: %s\n", doc ? "answered (does not exist)" : ember_error_code_name(err.code));
        ember_document_release(doc);
    }

    /* Do online things */
    printf("-- enableNetwork\n");
    ember_db_enable_network(db, &err);
    check(&err, "ember_db_enable_network");
    wait_events(5);                       /* from the server again, LA still pending */
    wait_events(7);                       /* LA acknowledged: its write callback and a metadata event */
    settle();

    ember_listener_remove(token);
    ember_query_release(query);
    return finish(db);
}
