/* Seed 000, "Events for metadata changes": with MetadataChanges::kInclude (C:
 * EMBER_LISTEN_INCLUDE_METADATA_CHANGES) the listener also sees changes of the snapshot's
 * metadata only: here the acknowledgement of a local write (has_pending_writes true -> false)
 * and the network going off and on (is_from_cache).
 *
 *   C++: doc_ref.AddSnapshotListener(MetadataChanges::kInclude,
 *          [](const DocumentSnapshot& snapshot, Error error, const std::string& errorMsg) { ... });
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_document *snapshot, const ember_error *error) {
    (void)ctx;
    if (error == NULL) {
        printf("has_pending_writes=%d is_from_cache=%d data=",
               (int)ember_document_has_pending_writes(snapshot), (int)ember_document_is_from_cache(snapshot));
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
    ember_listener_token token = ember_doc_listen(db, "cities/SF", EMBER_LISTEN_INCLUDE_METADATA_CHANGES,
                                                  on_snapshot, NULL, NULL, &err);
    check(&err, "ember_doc_listen");
    wait_events(1);

    printf("-- set: a local event, then the acknowledgement (metadata only)\n");
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\"}");
    wait_events(3);

    printf("-- network off: the same data, now from the cache\n");
    ember_db_disable_network(db, &err);
    check(&err, "ember_db_disable_network");
    wait_events(4);

    printf("-- network on: from the server again\n");
    ember_db_enable_network(db, &err);
    check(&err, "ember_db_enable_network");
    wait_events(5);
    settle();

    ember_listener_remove(token);
    return finish(db);
}
