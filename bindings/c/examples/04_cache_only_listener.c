/* Seed 000, "Configure listeners for local changes only": a listener with source cache
 * (C: EMBER_LISTEN_SOURCE_CACHE) is answered from the local cache only and never asks the
 * backend: its first event comes at once, even for an empty cache, and every snapshot says
 * is_from_cache. Local writes reach it; the backend's acknowledgement changes nothing it sees
 * but has_pending_writes (a metadata change, raised with metadata changes included).
 *
 *   Swift: let options = SnapshotListenOptions().withSource(ListenSource.cache)
 *                                               .withIncludeMetadataChanges(true)
 *          db.collection("cities").document("SF").addSnapshotListener(options: options) { ... }
 *   C++:   // Not yet supported in the C++ client library (the seed says so)
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_document *snapshot, const ember_error *error) {
    (void)ctx;
    if (error == NULL) {
        printf("from_cache=%d pending=%d data=", (int)ember_document_is_from_cache(snapshot),
               (int)ember_document_has_pending_writes(snapshot));
        if (ember_document_exists(snapshot)) print_data(snapshot); else printf("null");
        printf("\n");
    } else {
        printf("Listen failed: %s\n", ember_error_code_name(error->code));
    }
    event_seen();
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_listener_token token = ember_doc_listen(
        db, "cities/SF", EMBER_LISTEN_SOURCE_CACHE | EMBER_LISTEN_INCLUDE_METADATA_CHANGES,
        on_snapshot, NULL, NULL, &err);
    check(&err, "ember_doc_listen");
    wait_events(1);                       /* at once, from the (empty) cache */

    printf("-- local write\n");
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\"}");
    wait_events(3);                       /* the write, then its acknowledgement (pending -> 0) */

    printf("-- network off and on: a cache-only listener does not notice\n");
    ember_db_disable_network(db, &err);
    check(&err, "ember_db_disable_network");
    ember_db_enable_network(db, &err);
    check(&err, "ember_db_enable_network");
    settle();

    ember_listener_remove(token);
    return finish(db);
}
