/* libFuzzer target: the query builder. The input is a byte stream decoded into a sequence of
 * builder calls on one query (where with a field and a value from small tables or from the
 * input, composite filters, order-by, limits, cursors, copies), then the query is run against
 * the cache. Every refused call must carry an error; nothing may crash or leak. */
#include "fuzz.h"

static const char *const fields[] = {"n", "s", "m.k", "a", "t", "__name__", "`odd.f`", "missing"};
static const char *const values[] = {
    "1", "2.5", "\"x\"", "null", "true", "[1,2]", "[\"x\",\"y\"]", "[]", "{\"k\":1}",
    "{\"$double\":\"NaN\"}", "{\"$ref\":\"c/a\"}", "\"c/b\"", "{\"$timestamp\":\"2024-05-01T12:00:00Z\"}",
    "[null]", "[1,2,3,4,5,6,7,8,9,10,11]"};
#define N_FIELDS (sizeof fields / sizeof *fields)
#define N_VALUES (sizeof values / sizeof *values)

static const char *pick_field(reader *r, char *buf) {
    uint8_t b = rd_byte(r);
    if (b < 0xf0) return fields[b % N_FIELDS];
    rd_chunk(r, buf);
    return buf;
}

static const char *pick_value(reader *r, char *buf) {
    uint8_t b = rd_byte(r);
    if (b < 0xe0) return values[b % N_VALUES];
    rd_chunk(r, buf);
    return buf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    fuzz_open();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    char fbuf[257], vbuf[257];
    ember_error err;
    ember_query *q = rd_byte(&r) & 1 ? ember_query_new_collection_group(fuzz_db, "c", &err)
                                      : ember_query_new(fuzz_db, "c", &err);
    ember_filter *filters[4] = {NULL, NULL, NULL, NULL};
    size_t n_filters = 0, i;
    int steps = 0;
    FUZZ_ASSERT(q != NULL, "query");
    while (r.n > 0 && steps++ < 32) {
        uint8_t op = rd_byte(&r);
        bool ok = true;
        switch (op % 10) {
        case 0: case 1: {
            const char *f = pick_field(&r, fbuf);
            ember_op o = (ember_op)(rd_byte(&r) % 11);   /* 10 is out of range */
            const char *v = pick_value(&r, vbuf);
            ok = ember_query_where(q, f, o, EMBER_FORMAT_JSON, v, EMBER_NTS, &err);
            break;
        }
        case 2: {
            const char *f = pick_field(&r, fbuf);
            ember_op o = (ember_op)(rd_byte(&r) % 10);
            const char *v = pick_value(&r, vbuf);
            if (n_filters < 4) {
                ember_filter *fl = ember_filter_field(f, o, EMBER_FORMAT_JSON, v, EMBER_NTS, &err);
                if (fl) filters[n_filters++] = fl; else ok = false;
            }
            break;
        }
        case 3: {
            ember_filter *fl = (op & 0x10 ? ember_filter_or : ember_filter_and)(
                (const ember_filter *const *)filters, n_filters, &err);
            if (!fl) { ok = false; break; }
            if (!ember_query_where_filter(q, fl, &err)) ok = false;
            ember_filter_release(fl);
            break;
        }
        case 4: ok = ember_query_order_by(q, pick_field(&r, fbuf), op & 0x10, &err); break;
        case 5: ok = ember_query_limit(q, (int64_t)(int8_t)rd_byte(&r), &err); break;
        case 6: ok = ember_query_limit_to_last(q, (int64_t)(int8_t)rd_byte(&r), &err); break;
        case 7: {
            ember_cursor c = (ember_cursor)(rd_byte(&r) % 5);
            ok = ember_query_cursor(q, c, EMBER_FORMAT_JSON, pick_value(&r, vbuf), EMBER_NTS, &err);
            break;
        }
        case 8: {
            ember_document *doc = ember_doc_get(fuzz_db, op & 0x10 ? "c/a" : "c/b", EMBER_SOURCE_CACHE, &err);
            FUZZ_ASSERT(doc != NULL, "cursor document");
            ok = ember_query_cursor_document(q, (ember_cursor)(rd_byte(&r) % 4), doc, &err);
            ember_document_release(doc);
            break;
        }
        default: {
            ember_query *copy = ember_query_copy(q);
            FUZZ_ASSERT(copy != NULL, "copy");
            ember_query_release(q);
            q = copy;
            break;
        }
        }
        if (!ok) fuzz_expect_error(&err);
    }
    {
        ember_snapshot *s = ember_query_get(q, EMBER_SOURCE_CACHE, &err);
        if (!s) fuzz_expect_error(&err);
        else {
            size_t n = ember_snapshot_size(s);
            for (i = 0; i < n; i++) FUZZ_ASSERT(ember_snapshot_document(s, i) != NULL, "document in range");
            FUZZ_ASSERT(ember_snapshot_document(s, n) == NULL, "document out of range");
            ember_snapshot_release(s);
        }
    }
    for (i = 0; i < n_filters; i++) ember_filter_release(filters[i]);
    ember_query_release(q);
    fuzz_expect_no_new_objects();
    return 0;
}
