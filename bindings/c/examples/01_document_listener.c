/* Seed 000 (get realtime updates), "Listen to a document": the listener's first event is the
 * current state of the document, then one event per change of its contents.
 *
 *   C++: doc_ref.AddSnapshotListener([](const DocumentSnapshot& snapshot, Error error, ...) {
 *          if (error == Error::kErrorOk) {
 *            if (snapshot.exists()) std::cout << "Current data: " << snapshot << std::endl;
 *            else std::cout << "Current data: null" << std::endl;
 *          } else std::cout << "Listen failed: " << error << std::endl; });
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_document *snapshot, const ember_error *error) {
    (void)ctx;
    if (error == NULL) {
        if (ember_document_exists(snapshot)) {
            printf("Current data: ");
            print_data(snapshot);
            printf("\n");
        } else {
            printf("Current data: null\n");
        }
    } else {
        printf("Listen failed: %s\n", ember_error_code_name(error->code));
    }
    event_seen();
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_listener_token token = ember_doc_listen(db, "cities/SF", 0, on_snapshot, NULL, NULL, &err);
    check(&err, "ember_doc_listen");
    wait_events(1);                       /* the initial snapshot: SF does not exist yet */

    printf("-- set cities/SF\n");
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"state\":\"CA\"}");
    wait_events(2);
    wait_writes(db);                      /* the acknowledgement changes metadata only: no event */

    printf("-- update population\n");
    ember_doc_update(db, "cities/SF", EMBER_FORMAT_JSON, "{\"population\":860000}", EMBER_NTS,
                     NULL, 0, NULL, NULL, &err);
    check(&err, "ember_doc_update");
    wait_events(3);
    wait_writes(db);

    printf("-- delete cities/SF\n");
    ember_doc_delete(db, "cities/SF", NULL, NULL, &err);
    check(&err, "ember_doc_delete");
    wait_events(4);
    wait_writes(db);
    settle();

    ember_listener_remove(token);
    return finish(db);
}
