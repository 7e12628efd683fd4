/* libFuzzer target: the value decoders. The first byte picks the entry point; the rest is the
 * value: MessagePack or JSON through ember_value_convert (with the round trip checked: a value
 * decoded once must re-encode and decode to the same JSON), or as the data / transforms of
 * ember_doc_set, ember_doc_merge and ember_doc_update. */
#include "fuzz.h"

static void round_trip(const uint8_t *data, size_t len, ember_format from) {
    ember_error err;
    size_t json_len = 0, mp_len = 0, json2_len = 0;
    char *json, *mp, *json2;
    json = ember_value_convert(data, len, from, EMBER_FORMAT_JSON, &json_len, &err);
    if (!json) { fuzz_expect_error(&err); return; }
    FUZZ_ASSERT(err.code == EMBER_OK, "success with an error code");
    FUZZ_ASSERT(strlen(json) == json_len, "JSON length or NUL");
    mp = ember_value_convert(json, json_len, EMBER_FORMAT_JSON, EMBER_FORMAT_MSGPACK, &mp_len, &err);
    FUZZ_ASSERT(mp != NULL, "JSON written by Ember does not decode");
    json2 = ember_value_convert(mp, mp_len, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, &json2_len, &err);
    FUZZ_ASSERT(json2 != NULL, "MessagePack written by Ember does not decode");
    FUZZ_ASSERT(json2_len == json_len && memcmp(json, json2, json_len) == 0, "round trip changed the value");
    ember_free(json);
    ember_free(mp);
    ember_free(json2);
}

static void write_doc(const uint8_t *data, size_t len, int kind, ember_format format) {
    ember_error err;
    bool ok;
    /* Split the input: data, then transforms, at a position given by the first byte. */
    size_t cut = len ? (size_t)data[0] % (len + 1) : 0;
    const uint8_t *body = len ? data + 1 : data;
    size_t body_len = len ? len - 1 : 0;
    if (cut > body_len) cut = body_len;
    switch (kind) {
    case 0:
        ok = ember_doc_set(fuzz_db, "f/doc", format, body, cut, body + cut, body_len - cut, NULL, NULL, &err);
        break;
    case 1:
        ok = ember_doc_merge(fuzz_db, "f/doc", format, body, cut, body_len > cut ? body + cut : NULL, body_len - cut,
                             NULL, 0, NULL, NULL, &err);
        break;
    default:
        ok = ember_doc_update(fuzz_db, "f/doc", format, body, body_len, NULL, 0, NULL, NULL, &err);
        break;
    }
    if (!ok) fuzz_expect_error(&err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    fuzz_open();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t mode;
    if (size == 0) return 0;
    mode = data[0] % 8;
    data++;
    size--;
    switch (mode) {
    case 0: case 1: round_trip(data, size, EMBER_FORMAT_MSGPACK); break;
    case 2: case 3: round_trip(data, size, EMBER_FORMAT_JSON); break;
    case 4: write_doc(data, size, 0, EMBER_FORMAT_MSGPACK); break;
    case 5: write_doc(data, size, 1, EMBER_FORMAT_JSON); break;
    case 6: write_doc(data, size, 2, EMBER_FORMAT_MSGPACK); break;
    default: write_doc(data, size, 0, EMBER_FORMAT_JSON); break;
    }
    return 0;
}
