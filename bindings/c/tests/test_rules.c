/* Firestore's write rules through the C ABI: an update replaces a map value
 * whole and a transform inside it applies after; a delete inside an update's map value, and merge
 * fields where one is a prefix of another, are INVALID_ARGUMENT; a transform under a merge field
 * missing from the data is valid. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void update_replaces_map_values(void) {
    ember_db *db = open_db();
    ember_error err;
    set_json(db, "c/u", "{\"c\":{\"x\":1,\"d\":[0]},\"keep\":1}");
    /* update({"c": {}}) + transform c.d: what a binding sends for {"c": {"d": arrayUnion([1])}}. */
    CHECK(ember_doc_update(db, "c/u", EMBER_FORMAT_JSON, "{\"c\":{}}", EMBER_NTS,
                           "{\"c.d\":{\"arrayUnion\":[1]}}", EMBER_NTS, NULL, NULL, &err));
    CHECK_OK(err);
    ember_document *d = ember_doc_get(db, "c/u", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL);
    if (d) { CHECK_STR(doc_json(d), "{\"c\":{\"d\":[1]},\"keep\":1}"); ember_document_release(d); }
    /* A delete inside the map value: an error. */
    CHECK(!ember_doc_update(db, "c/u", EMBER_FORMAT_JSON, "{\"c\":{}}", EMBER_NTS, "{\"c.d\":\"delete\"}", EMBER_NTS,
                            NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* A transform at a path the update also sets: an error. */
    CHECK(!ember_doc_update(db, "c/u", EMBER_FORMAT_JSON, "{\"c\":{\"d\":1}}", EMBER_NTS, "{\"c.d\":\"serverTimestamp\"}",
                            EMBER_NTS, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* A top-level delete and a dotted key keep patching. */
    CHECK(ember_doc_update(db, "c/u", EMBER_FORMAT_JSON, "{\"c.e\":2}", EMBER_NTS, "{\"keep\":\"delete\"}", EMBER_NTS,
                           NULL, NULL, &err));
    d = ember_doc_get(db, "c/u", EMBER_SOURCE_CACHE, &err);
    if (d) { CHECK_STR(doc_json(d), "{\"c\":{\"d\":[1],\"e\":2}}"); ember_document_release(d); }
    ember_db_close(db, &err);
    ember_db_release(db);
}

static void merge_field_rules(void) {
    ember_db *db = open_db();
    ember_error err;
    const char *overlap[] = {"b", "b.c"};
    CHECK(!ember_doc_merge(db, "c/m", EMBER_FORMAT_JSON, "{\"a\":1,\"b\":{\"c\":1}}", EMBER_NTS, NULL, 0,
                           overlap, 2, NULL, NULL, &err));
    CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    set_json(db, "c/m", "{\"h\":{\"old\":1},\"k\":1}");
    const char *h[] = {"h"};
    CHECK(ember_doc_merge(db, "c/m", EMBER_FORMAT_JSON, "{}", EMBER_NTS, "{\"h.g\":{\"increment\":5}}", EMBER_NTS,
                          h, 1, NULL, NULL, &err));
    CHECK_OK(err);
    ember_document *d = ember_doc_get(db, "c/m", EMBER_SOURCE_CACHE, &err);
    if (d) { CHECK_STR(doc_json(d), "{\"h\":{\"g\":5},\"k\":1}"); ember_document_release(d); }
    ember_db_close(db, &err);
    ember_db_release(db);
}

void run_rules(void) {
    RUN(update_replaces_map_values);
    RUN(merge_field_rules);
}
