/* settings.host, .ssl, .ssl_ca_file and .auth_token: the defaults, every refusal with its code and
 * message, and a database opened on a host nothing answers at (writes queue locally, close
 * cancels their callbacks, the tree stays local, nothing leaks); in a core-only libember, the
 * refusal of every host. Clients talking to a running server are tested with `ember serve` in
 * Tests/remote (make test-remote). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

/* Opens with `host` and `ssl`; expects NULL with `code` and a message containing `message`. */
static void refused(const char *host, bool ssl, int32_t code, const char *message) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    ember_settings_init(&s);
    s.host = host;
    s.ssl = ssl;
    db = ember_db_open(&s, &err);
    CHECK(db == NULL);
    CHECK_ERR(err, code);
    if (!strstr(err.message, message)) {
        test_failures++;
        fprintf(stderr, "FAIL [%s]: host \"%s\": message \"%s\" lacks \"%s\"\n", test_current, host, err.message, message);
    }
    ember_db_release(db);
}

static void host_defaults(void) {
    ember_settings s;
    memset(&s, 0x5a, sizeof s);
    ember_settings_init(&s);
    CHECK(s.host == NULL);
    CHECK(s.ssl);   /* Firebase's default: TLS with the system's roots, anonymous */
    CHECK(s.ssl_ca_file == NULL);
    CHECK(s.auth_token == NULL);
}

/* Opens with a valid host and the given CA file and token; expects NULL with `code`. */
static void refused_credentials(const char *ca, const char *token, int32_t code, const char *message) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    ember_settings_init(&s);
    s.host = "127.0.0.1:8080";
    s.ssl_ca_file = ca;
    s.auth_token = token;
    db = ember_db_open(&s, &err);
    CHECK(db == NULL);
    CHECK_ERR(err, code);
    if (!strstr(err.message, message)) {
        test_failures++;
        fprintf(stderr, "FAIL [%s]: message \"%s\" lacks \"%s\"\n", test_current, err.message, message);
    }
    ember_db_release(db);
}

static void host_credentials(void) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    refused_credentials("/nonexistent/ca.pem", NULL, EMBER_ERR_INVALID_ARGUMENT, "Cannot read the trusted certificates file");
    refused_credentials("\xff.pem", NULL, EMBER_ERR_INVALID_ARGUMENT, "settings.ssl_ca_file is not valid UTF-8");
    refused_credentials(NULL, "", EMBER_ERR_INVALID_ARGUMENT, "Invalid auth token");
    refused_credentials(NULL, "two words", EMBER_ERR_INVALID_ARGUMENT, "Invalid auth token");
    refused_credentials(NULL, "\xff", EMBER_ERR_INVALID_ARGUMENT, "settings.auth_token is not valid UTF-8");
    /* TLS (the default) with the system's roots and a token opens: the connection is made in
     * the background. */
    ember_settings_init(&s);
    s.host = "127.0.0.1:9";
    s.auth_token = "header.payload.signature";
    db = ember_db_open(&s, &err);
    CHECK(db != NULL);
    if (db) CHECK(ember_db_close(db, &err));
    ember_db_release(db);
}

static void host_refusals(void) {
    refused("", false, EMBER_ERR_INVALID_ARGUMENT, "settings.host is empty");
    refused("\xff\xfe:8080", false, EMBER_ERR_INVALID_ARGUMENT, "settings.host is not valid UTF-8");
    refused("localhost", false, EMBER_ERR_INVALID_ARGUMENT, "no port");
    /* A C string ends at its first NUL: what follows it is never read. */
    refused("127.0.0.1\0:8080", false, EMBER_ERR_INVALID_ARGUMENT, "no port");
    refused("127.0.0.1:", false, EMBER_ERR_INVALID_ARGUMENT, "the port must be a number in 1-65535");
    refused("127.0.0.1:0", false, EMBER_ERR_INVALID_ARGUMENT, "the port must be a number in 1-65535");
    refused("127.0.0.1:65536", false, EMBER_ERR_INVALID_ARGUMENT, "the port must be a number in 1-65535");
    refused("127.0.0.1:-1", false, EMBER_ERR_INVALID_ARGUMENT, "the port must be a number in 1-65535");
    refused(":8080", false, EMBER_ERR_INVALID_ARGUMENT, "no host before the port");
    refused("::1:8080", false, EMBER_ERR_INVALID_ARGUMENT, "IPv6 address in brackets");
    refused("[::1]", false, EMBER_ERR_INVALID_ARGUMENT, "no port");
    refused("http://127.0.0.1:8080", false, EMBER_ERR_INVALID_ARGUMENT, "without a scheme or a path");
    refused("local host:8080", false, EMBER_ERR_INVALID_ARGUMENT, "a space or a control character");
    refused("127.0.0.1:8080\n", false, EMBER_ERR_INVALID_ARGUMENT, "a space or a control character");
    /* With TLS too, a bad host is refused. */
    refused("localhost", true, EMBER_ERR_INVALID_ARGUMENT, "no port");
}

static void host_settings_checked_with_the_others(void) {
    ember_error err;
    ember_settings s;
    ember_settings_init(&s);
    s.host = "127.0.0.1:8080";
    s.ssl = false;
    s.cache_size_bytes = 1000;   /* the other settings are still checked */
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    s.cache_size_bytes = 0;
    s.path = "";
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
}

static void host_unreachable_writes_queue(void) {
    ember_error err;
    ember_settings s;
    ember_db *db;
    ember_document *d;
    ember_ref *tree;
    latch written, tree_written;
    latch_init(&written);
    latch_init(&tree_written);
    memset(&s, 0, sizeof s);   /* zero-filled: ssl false */
    s.host = "127.0.0.1:9";    /* the discard port: nothing listens there */
    db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    CHECK(ember_doc_set(db, "cities/SF", EMBER_FORMAT_JSON, "{\"name\":\"SF\"}", EMBER_NTS, NULL, 0,
                        latch_write_cb, &written, &err));
    CHECK_OK(err);
    d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL);
    if (d) {
        CHECK(ember_document_exists(d));
        CHECK(ember_document_has_pending_writes(d));
        ember_document_release(d);
    }
    /* The tree syncs with the in-process backend: acknowledged without the server. */
    tree = ember_ref_new(db, "posts/p1", &err);
    CHECK(tree != NULL);
    CHECK(ember_ref_set(tree, EMBER_FORMAT_JSON, "{\"title\":\"Hi\"}", EMBER_NTS, latch_write_cb, &tree_written, &err));
    CHECK(latch_wait(&tree_written, 1));
    CHECK(tree_written.last_code == EMBER_OK);
    ember_ref_release(tree);
    CHECK(latch_count(&written) == 0);   /* no server: not acknowledged */
    CHECK(ember_db_close(db, &err)); CHECK_OK(err);
    CHECK(latch_wait(&written, 1));
    CHECK(written.last_code == EMBER_ERR_CANCELLED);
    ember_db_release(db);
    latch_destroy(&written);
    latch_destroy(&tree_written);
}

/* A core-only libember: every host is refused, with a message saying why. */
static void host_without_remote_support(void) {
    refused("127.0.0.1:8080", false, EMBER_ERR_UNIMPLEMENTED, "no remote support");
    refused("localhost", true, EMBER_ERR_UNIMPLEMENTED, "no remote support");
    refused("", false, EMBER_ERR_INVALID_ARGUMENT, "settings.host is empty");
}

void run_remote(void) {
    RUN(host_defaults);
    if (!remote_support) {
        RUN(host_without_remote_support);
        return;
    }
    RUN(host_refusals);
    RUN(host_credentials);
    RUN(host_settings_checked_with_the_others);
    RUN(host_unreachable_writes_queue);
}
