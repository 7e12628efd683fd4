/* Seed 000, "Events for local changes": a local write raises an event at once, before the
 * backend has it ("latency compensation"); has_pending_writes tells the two apart.
 *
 *   C++: const char* source = snapshot.metadata().has_pending_writes() ? "Local" : "Server";
 *        if (snapshot.exists())
 *          std::cout << source << " data: " << snapshot.Get("name").string_value() << std::endl;
 *        else std::cout << source << " data: null" << std::endl;
 *
 * Without MetadataChanges the acknowledgement (pending -> committed) raises no event: see
 * 03_metadata_changes.c for the listener that sees it.
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_document *snapshot, const ember_error *error) {
    (void)ctx;
    if (error == NULL) {
        const char *source = ember_document_has_pending_writes(snapshot) ? "Local" : "Server";
        if (ember_document_exists(snapshot)) {
            printf("%s data: ", source);
            print_string(snapshot, "name");
            printf("\n");
        } else {
            printf("%s data: null\n", source);
        }
    } else {
        printf("Listen failed: %s\n", ember_error_code_name(error->code));
    }
    event_seen();
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_listener_token token;

    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"state\":\"CA\"}");
    wait_writes(db);                      /* SF is at the backend before the listener starts */

    token = ember_doc_listen(db, "cities/SF", 0, on_snapshot, NULL, NULL, &err);
    check(&err, "ember_doc_listen");
    wait_events(1);

    printf("-- local write (latency compensation)\n");
    set_json(db, "cities/SF", "{\"name\":\"San Francisco (local)\",\"state\":\"CA\"}");
    wait_events(2);                       /* before the backend acknowledges it */
    wait_writes(db);
    settle();                             /* the acknowledgement alone raises nothing here */

    printf("-- a write while the network is off stays local\n");
    ember_db_disable_network(db, &err);
    check(&err, "ember_db_disable_network");
    set_json(db, "cities/SF", "{\"name\":\"SF\",\"state\":\"CA\"}");
    wait_events(3);
    settle();

    ember_listener_remove(token);
    return finish(db);
}
