/* libFuzzer target: paths. The input is split at NUL bytes into strings used as a document path,
 * a collection path, a collection id and field paths: ember_path_kind, ember_doc_get (cache),
 * ember_query_new, ember_query_new_collection_group, ember_doc_delete, ember_document_get and
 * ember_query_order_by. Invalid UTF-8 and odd paths must come back as errors. */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    fuzz_open();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    const char *parts[4] = {"", "", "", ""};
    size_t i, n = 0;
    ember_error err;
    int32_t kind;
    memcpy(text, data, size);
    text[size] = '\0';
    parts[n++] = text;
    for (i = 0; i < size && n < 4; i++) {
        if (text[i] == '\0') parts[n++] = text + i + 1;
    }

    kind = ember_path_kind(parts[0], &err);
    if (kind == EMBER_PATH_INVALID) fuzz_expect_error(&err);
    else FUZZ_ASSERT(kind == EMBER_PATH_DOCUMENT || kind == EMBER_PATH_COLLECTION, "path kind");

    {   /* as a document */
        ember_document *doc = ember_doc_get(fuzz_db, parts[0], EMBER_SOURCE_CACHE, &err);
        if (!doc) fuzz_expect_error(&err);
        else {
            FUZZ_ASSERT(kind == EMBER_PATH_DOCUMENT, "a document read at a non-document path");
            ember_document_release(doc);
        }
        if (kind == EMBER_PATH_DOCUMENT && parts[0][0] == 'z') {
            if (!ember_doc_delete(fuzz_db, parts[0], NULL, NULL, &err)) fuzz_expect_error(&err);
        }
    }
    {   /* as a collection, and a field path to order by */
        ember_query *q = ember_query_new(fuzz_db, parts[1], &err);
        if (!q) fuzz_expect_error(&err);
        else {
            if (!ember_query_order_by(q, parts[2], false, &err)) fuzz_expect_error(&err);
            ember_query_release(q);
        }
        q = ember_query_new_collection_group(fuzz_db, parts[3], &err);
        if (!q) fuzz_expect_error(&err);
        else ember_query_release(q);
    }
    {   /* a field path read from an existing document */
        ember_document *doc = ember_doc_get(fuzz_db, "c/a", EMBER_SOURCE_CACHE, &err);
        char *v;
        FUZZ_ASSERT(doc != NULL, "c/a");
        v = ember_document_get(doc, parts[2], EMBER_FORMAT_JSON, NULL, &err);
        if (!v) fuzz_expect_error(&err);
        ember_free(v);
        ember_document_release(doc);
    }
    free(text);
    fuzz_expect_no_new_objects();
    return 0;
}
