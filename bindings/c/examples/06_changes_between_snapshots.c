/* Seed 000, "View changes between snapshots": each query snapshot lists its document changes
 * (added, modified, removed) with the document's old and new index (EMBER_NPOS where none).
 *
 *   C++: for (const DocumentChange& dc : snapshot.DocumentChanges()) {
 *          switch (dc.type()) {
 *            case DocumentChange::Type::kAdded:    std::cout << "New city: " ...
 *            case DocumentChange::Type::kModified: std::cout << "Modified city: " ...
 *            case DocumentChange::Type::kRemoved:  std::cout << "Removed city: " ... } }
 */
#include "example.h"

static void print_index(size_t i) {
    if (i == EMBER_NPOS) printf("npos"); else printf("%zu", i);
}

static void on_snapshot(void *ctx, const ember_snapshot *snapshot, const ember_error *error) {
    size_t i;
    (void)ctx;
    if (error != NULL) {
        printf("Listen failed: %s\n", ember_error_code_name(error->code));
        event_seen();
        return;
    }
    for (i = 0; i < ember_snapshot_change_count(snapshot); i++) {
        ember_document_change dc;
        ember_error err;
        if (!ember_snapshot_change(snapshot, i, &dc, &err)) { check(&err, "ember_snapshot_change"); }
        switch (dc.type) {
        case EMBER_CHANGE_ADDED: printf("New city: "); break;
        case EMBER_CHANGE_MODIFIED: printf("Modified city: "); break;
        case EMBER_CHANGE_REMOVED: printf("Removed city: "); break;
        }
        print_string(dc.document, "name");
        printf(" (old_index ");
        print_index(dc.old_index);
        printf(", new_index ");
        print_index(dc.new_index);
        printf(")\n");
    }
    event_seen();
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    ember_query *query;
    ember_listener_token token;

    add_cities(db);
    wait_writes(db);

    query = ember_query_new(db, "cities", &err);
    check(&err, "ember_query_new");
    ember_query_where(query, "state", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "\"CA\"", EMBER_NTS, &err);
    check(&err, "ember_query_where");
    token = ember_query_listen(query, 0, on_snapshot, NULL, NULL, &err);
    check(&err, "ember_query_listen");
    ember_query_release(query);
    wait_events(1);                       /* the first snapshot: every document is "added" */

    printf("-- add San Diego\n");
    set_json(db, "cities/SD", "{\"name\":\"San Diego\",\"state\":\"CA\"}");
    wait_events(2);
    wait_writes(db);

    printf("-- modify Los Angeles\n");
    ember_doc_update(db, "cities/LA", EMBER_FORMAT_JSON, "{\"population\":3900001}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    check(&err, "ember_doc_update");
    wait_events(3);
    wait_writes(db);

    printf("-- delete San Francisco\n");
    ember_doc_delete(db, "cities/SF", NULL, NULL, &err);
    check(&err, "ember_doc_delete");
    wait_events(4);
    wait_writes(db);
    settle();

    ember_listener_remove(token);
    return finish(db);
}
