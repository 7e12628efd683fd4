/* Seed 000, "Listen to multiple documents in a collection": a listener on a query
 * (state == "CA") gets the whole result each time it changes.
 *
 *   C++: db->Collection("cities").WhereEqualTo("state", FieldValue::String("CA"))
 *          .AddSnapshotListener([](const QuerySnapshot& snapshot, Error error, ...) {
 *            std::vector<std::string> cities;
 *            for (const DocumentSnapshot& doc : snapshot.documents())
 *              cities.push_back(doc.Get("name").string_value());
 *            ... });
 */
#include "example.h"

static void on_snapshot(void *ctx, const ember_snapshot *snapshot, const ember_error *error) {
    size_t i;
    (void)ctx;
    if (error == NULL) {
        printf("Current cities in CA:");
        for (i = 0; i < ember_snapshot_size(snapshot); i++) {
            printf(" ");
            print_string(ember_snapshot_document(snapshot, i), "name");
        }
        printf("\n");
    } else {
        printf("Listen failed: %s\n", ember_error_code_name(error->code));
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
    ember_query_release(query);           /* the listener keeps what it needs */
    wait_events(1);

    printf("-- add San Diego\n");
    set_json(db, "cities/SD", "{\"name\":\"San Diego\",\"state\":\"CA\"}");
    wait_events(2);
    wait_writes(db);

    printf("-- Tokyo is not in CA: no event\n");
    set_json(db, "cities/TOK", "{\"name\":\"Tokyo\",\"state\":null}");
    wait_writes(db);
    settle();

    printf("-- LA leaves CA\n");
    ember_doc_update(db, "cities/LA", EMBER_FORMAT_JSON, "{\"state\":\"NV\"}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    check(&err, "ember_doc_update");
    wait_events(3);
    wait_writes(db);
    settle();

    ember_listener_remove(token);
    return finish(db);
}
