/* Built against an installed Ember with pkg-config (make test-install). */
#include <ember.h>
#include <stdio.h>

static void on_city(void *ctx, const ember_document *doc, const ember_error *error) {
    (void)ctx;
    if (error) { printf("error: %s\n", error->message); return; }
    if (ember_document_exists(doc)) {
        char *json = ember_document_data(doc, EMBER_FORMAT_JSON, NULL, NULL);
        printf("%s%s: %s\n", ember_document_has_pending_writes(doc) ? "local " : "server ", ember_document_id(doc), json);
        ember_free(json);
    }
}

int main(void) {
    ember_error err;
    ember_db *db = ember_db_open(NULL, &err);
    if (!db) { printf("open failed: %s\n", err.message); return 1; }
    ember_listener_token t = ember_doc_listen(db, "cities/SF", 0, on_city, NULL, NULL, &err);
    ember_doc_set(db, "cities/SF", EMBER_FORMAT_JSON, "{\"name\":\"San Francisco\",\"pop\":860000}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    ember_listener_remove(t);
    ember_db_release(db);
    return (int)ember_instance_count();
}
