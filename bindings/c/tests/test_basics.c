/* Version, error codes, buffers, value conversion (exact both ways, every error), paths, ids. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void version(void) {
    CHECK(ember_libversion_number() == EMBER_VERSION_NUMBER);
    CHECK_STR(ember_libversion(), EMBER_VERSION_STRING);
    CHECK(EMBER_VERSION_NUMBER == EMBER_VERSION_MAJOR * 1000000 + EMBER_VERSION_MINOR * 1000 + EMBER_VERSION_PATCH);
}

static void error_codes(void) {
    CHECK_STR(ember_error_code_name(EMBER_OK), "OK");
    CHECK_STR(ember_error_code_name(EMBER_ERR_INVALID_ARGUMENT), "INVALID_ARGUMENT");
    CHECK_STR(ember_error_code_name(EMBER_ERR_FAILED_PRECONDITION), "FAILED_PRECONDITION");
    CHECK_STR(ember_error_code_name(EMBER_ERR_UNAUTHENTICATED), "UNAUTHENTICATED");
    CHECK_STR(ember_error_code_name(999), "UNKNOWN");
    CHECK_STR(ember_error_code_name(-1), "UNKNOWN");
    ember_free(NULL);
}

/* JSON -> JSON through MessagePack, expecting `expected` back. */
static void roundtrip(const char *json, const char *expected) {
    ember_error err;
    size_t mlen = 0, jlen = 0;
    char *mp = ember_value_convert(json, EMBER_NTS, EMBER_FORMAT_JSON, EMBER_FORMAT_MSGPACK, &mlen, &err);
    char *back;
    CHECK_OK(err);
    CHECK(mp != NULL);
    if (!mp) return;
    back = ember_value_convert(mp, mlen, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, &jlen, &err);
    CHECK_OK(err);
    CHECK_STR(back, expected);
    CHECK(back && strlen(back) == jlen);
    ember_free(mp);
    ember_free(back);
}

static void values_are_exact(void) {
    roundtrip("1", "1");
    roundtrip("1.0", "1.0");
    roundtrip("-0", "0");
    roundtrip("{\"$double\":\"-0.0\"}", "{\"$double\":\"-0.0\"}");
    roundtrip("{\"$double\":\"NaN\"}", "{\"$double\":\"NaN\"}");
    roundtrip("9223372036854775807", "9223372036854775807");
    roundtrip("-9223372036854775808", "-9223372036854775808");
    roundtrip("1e2", "100.0");
    roundtrip("{\"$bytes\":\"AAEC/w==\"}", "{\"$bytes\":\"AAEC/w==\"}");
    roundtrip("{\"$timestamp\":\"2024-05-01T12:00:00.000001Z\"}", "{\"$timestamp\":\"2024-05-01T12:00:00.000001Z\"}");
    roundtrip("{\"$ref\":\"cities/SF\"}", "{\"$ref\":\"cities/SF\"}");
    roundtrip("{\"$geo\":[37.77,-122.42]}", "{\"$geo\":[37.77,-122.42]}");
    roundtrip("{\"$map\":{\"$x\":1}}", "{\"$map\":{\"$x\":1}}");
    roundtrip("{\"b\":[1,2.5,\"x\",null,true],\"a\":{}}", "{\"a\":{},\"b\":[1,2.5,\"x\",null,true]}");
    roundtrip("\"h\\u00e9llo \\ud83d\\ude00\"", "\"h\xc3\xa9llo \xf0\x9f\x98\x80\"");
}

static void msgpack_forms(void) {
    ember_error err;
    /* int 1 (fixint) and double 1.0 (float64) stay apart. */
    static const unsigned char one_int[] = {0x01};
    static const unsigned char one_double[] = {0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    static const unsigned char bin[] = {0xc4, 0x02, 0x00, 0xff};
    static const unsigned char ts32[] = {0xd6, 0xff, 0x00, 0x00, 0x00, 0x0a};
    char *s = ember_value_convert(one_int, 1, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, NULL, &err);
    CHECK_STR(s, "1"); ember_free(s);
    s = ember_value_convert(one_double, sizeof one_double, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, NULL, &err);
    CHECK_STR(s, "1.0"); ember_free(s);
    s = ember_value_convert(bin, sizeof bin, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, NULL, &err);
    CHECK_STR(s, "{\"$bytes\":\"AP8=\"}"); ember_free(s);
    s = ember_value_convert(ts32, sizeof ts32, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_JSON, NULL, &err);
    CHECK_STR(s, "{\"$timestamp\":\"1970-01-01T00:00:10.000000Z\"}"); ember_free(s);
    /* Same format both ways validates and re-encodes. */
    s = ember_value_convert(bin, sizeof bin, EMBER_FORMAT_MSGPACK, EMBER_FORMAT_MSGPACK, NULL, &err);
    CHECK(s && memcmp(s, bin, sizeof bin) == 0); ember_free(s);
}

static void bad_value(const void *data, size_t len, ember_format f, int code) {
    ember_error err;
    size_t out_len = 12345;
    char *s = ember_value_convert(data, len, f, EMBER_FORMAT_JSON, &out_len, &err);
    CHECK(s == NULL);
    CHECK_ERR(err, code);
    ember_free(s);
}

static void value_errors(void) {
    static const unsigned char bad_utf8_str[] = {0xa2, 0xc3, 0x28};
    static const unsigned char truncated[] = {0xdb, 0xff, 0xff, 0xff, 0xff, 0x61};
    static const unsigned char unknown_ext[] = {0xd4, 0x09, 0x00};
    static const unsigned char big_uint[] = {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const unsigned char huge_map[] = {0xdf, 0x7f, 0xff, 0xff, 0xff};
    unsigned char deep[200];
    char deep_json[300];
    const char bad_utf8_json[] = {'"', (char)0xff, '"', 0};
    int i;
    bad_value("{", EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value("[1,]", EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value("01", EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value("{\"$nope\":1}", EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value("99999999999999999999", EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(bad_utf8_json, EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(bad_utf8_str, sizeof bad_utf8_str, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(truncated, sizeof truncated, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(unknown_ext, sizeof unknown_ext, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(big_uint, sizeof big_uint, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(huge_map, sizeof huge_map, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(truncated, 0, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(truncated, EMBER_NTS, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    bad_value("1", EMBER_NTS, 7, EMBER_ERR_INVALID_ARGUMENT);
    bad_value(NULL, 3, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    for (i = 0; i < 199; i++) deep[i] = 0x91;   /* 199 nested one-element arrays */
    deep[199] = 0xc0;
    bad_value(deep, sizeof deep, EMBER_FORMAT_MSGPACK, EMBER_ERR_INVALID_ARGUMENT);
    for (i = 0; i < 100; i++) { deep_json[i] = '['; deep_json[100 + i] = ']'; }
    deep_json[200] = '\0';
    bad_value(deep_json, EMBER_NTS, EMBER_FORMAT_JSON, EMBER_ERR_INVALID_ARGUMENT);
    /* A NULL err is allowed. */
    CHECK(ember_value_convert("{", 1, EMBER_FORMAT_JSON, EMBER_FORMAT_JSON, NULL, NULL) == NULL);
    /* An unknown output format. */
    {
        ember_error err;
        CHECK(ember_value_convert("1", 1, EMBER_FORMAT_JSON, 42, NULL, &err) == NULL);
        CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    }
}

static void paths_and_ids(void) {
    ember_error err;
    char id[21];
    char long_path[8000];
    int i;
    CHECK(ember_path_kind("cities", &err) == EMBER_PATH_COLLECTION); CHECK_OK(err);
    CHECK(ember_path_kind("cities/SF", &err) == EMBER_PATH_DOCUMENT); CHECK_OK(err);
    CHECK(ember_path_kind("cities/SF/landmarks", &err) == EMBER_PATH_COLLECTION);
    CHECK(ember_path_kind("", &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_path_kind("a//b", &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* One leading and one trailing slash are ignored, as the Apple and C++ SDKs do. */
    CHECK(ember_path_kind("/a", &err) == EMBER_PATH_COLLECTION); CHECK_OK(err);
    CHECK(ember_path_kind("/a/b/", &err) == EMBER_PATH_DOCUMENT); CHECK_OK(err);
    CHECK(ember_path_kind("/", &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_path_kind("a/__x__", &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_path_kind(NULL, &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_path_kind("a/\xff", &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    /* 4,000 ids of one byte: a name of 16 + 4,000 x 2 bytes, past Firestore's 6 KiB. */
    for (i = 0; i < 7999; i++) long_path[i] = (i % 2) ? '/' : 'x';
    long_path[7999] = '\0';
    CHECK(ember_path_kind(long_path, &err) == EMBER_PATH_INVALID); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(strlen(err.message) < EMBER_ERROR_MESSAGE_SIZE);
    ember_auto_id(id);
    CHECK(strlen(id) == 20);
    CHECK(ember_path_kind("c", &err) == EMBER_PATH_COLLECTION);
    ember_auto_id(NULL);
}

/* A core-only library must not load full Foundation (FoundationEssentials at most). With remote
 * support it does: the gRPC stack's SwiftProtobuf imports Foundation (docs/c-abi.md,
 * "Checks"). */
static void no_foundation(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int ember = 0, foundation = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "libember")) ember = 1;   /* libember.so, or the file it links to (libember-c.so) */
        if (strstr(line, "libFoundation.so") || strstr(line, "libFoundationNetworking")) foundation = 1;
    }
    fclose(f);
    CHECK(ember);
    if (!remote_support) CHECK(!foundation);
}

void run_basics(void) {
    RUN(no_foundation);
    RUN(version);
    RUN(error_codes);
    RUN(values_are_exact);
    RUN(msgpack_forms);
    RUN(value_errors);
    RUN(paths_and_ids);
}
