/* Durable storage through the C ABI: ember_db_open at a path (reopen round trips of documents
 * and pending writes, persistence off), the errors of locked / damaged / missing paths and bad
 * cache sizes, ember_clear_persistence, and the offline index manager. */
#define _XOPEN_SOURCE 700
#include "harness.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_dir[256];
static char tmp_path[320];

/* A fresh directory and a database path inside it. */
static const char *temp_path(void) {
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ember-ctest-XXXXXX");
    CHECK(mkdtemp(tmp_dir) != NULL);
    snprintf(tmp_path, sizeof tmp_path, "%s/app.ember", tmp_dir);
    return tmp_path;
}

/* Clears the database files (the empty lock file stays, as documented) and removes the directory. */
static void temp_done(void) {
    ember_error err;
    char lock[340];
    CHECK(ember_clear_persistence(tmp_path, &err)); CHECK_OK(err);
    snprintf(lock, sizeof lock, "%s.lock", tmp_path);
    unlink(lock);
    CHECK(rmdir(tmp_dir) == 0);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static ember_db *open_at(const char *path, bool persistence, ember_error *err) {
    ember_settings s;
    ember_settings_init(&s);
    s.path = path;
    s.persistence = persistence;
    return ember_db_open(&s, err);
}

static void reopen_round_trip(void) {
    ember_error err;
    const char *path = temp_path();
    ember_db *db = open_at(path, true, &err);
    ember_document *d;
    char *written, *mp;
    size_t written_len = 0, len = 0;
    CHECK(db != NULL); CHECK_OK(err);
    CHECK(ember_db_is_persistent(db));
    CHECK(file_exists(path));
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"pop\":860000}");
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_OK(err);
    d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL);
    written = d ? ember_document_data(d, EMBER_FORMAT_MSGPACK, &written_len, &err) : NULL;
    CHECK(written != NULL);
    ember_document_release(d);
    /* a write queued while offline stays pending across the restart */
    CHECK(ember_db_disable_network(db, &err));
    set_json(db, "cities/LA", "{\"name\":\"Los Angeles\"}");
    CHECK(ember_db_close(db, &err)); CHECK_OK(err);
    ember_db_release(db);

    db = open_at(path, true, &err);
    CHECK(db != NULL); CHECK_OK(err);
    CHECK(ember_db_disable_network(db, &err));
    d = ember_doc_get(db, "cities/SF", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL && ember_document_exists(d));
    if (d) CHECK_STR(field_json(d, "name"), "\"San Francisco\"");
    /* read from the file: its stored bytes are handed on as they are, in either format */
    if (d) CHECK_STR(doc_json(d), "{\"name\":\"San Francisco\",\"pop\":860000}");
    mp = d ? ember_document_data(d, EMBER_FORMAT_MSGPACK, &len, &err) : NULL;
    CHECK(mp != NULL && written != NULL && len == written_len && memcmp(mp, written, len) == 0);
    ember_free(mp);
    ember_free(written);
    ember_document_release(d);
    /* (the queue was sent when the database opened: pending or acknowledged by now) */
    d = ember_doc_get(db, "cities/LA", EMBER_SOURCE_CACHE, &err);
    CHECK(d != NULL && ember_document_exists(d));
    ember_document_release(d);
    CHECK(ember_db_enable_network(db, &err));
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_OK(err);
    d = ember_doc_get(db, "cities/LA", EMBER_SOURCE_SERVER, &err);
    CHECK(d != NULL && ember_document_exists(d) && !ember_document_has_pending_writes(d));
    ember_document_release(d);
    ember_db_release(db);
    temp_done();
    CHECK(!file_exists(path));
}

static void memory_cache_over_file(void) {
    ember_error err;
    const char *path = temp_path();
    ember_db *db = open_at(path, false, &err);
    ember_document *d;
    CHECK(db != NULL); CHECK_OK(err);
    CHECK(!ember_db_is_persistent(db));
    set_json(db, "c/a", "{\"x\":1}");
    CHECK(ember_db_wait_for_pending_writes(db, NULL, NULL, &err)); CHECK_OK(err);
    ember_db_release(db);
    /* the backend's documents are in the file; the cache started empty */
    db = open_at(path, false, &err);
    CHECK(db != NULL);
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_CACHE, &err);
    CHECK(d == NULL || !ember_document_exists(d));
    ember_document_release(d);
    d = ember_doc_get(db, "c/a", EMBER_SOURCE_SERVER, &err);
    CHECK(d != NULL && ember_document_exists(d));
    ember_document_release(d);
    ember_db_release(db);
    temp_done();
}

static void open_errors(void) {
    ember_error err;
    ember_settings s;
    const char *path = temp_path();
    ember_db *db = open_at(path, true, &err), *second;
    FILE *f;
    CHECK(db != NULL);
    /* locked: a second instance on the same path, and clearing while open */
    second = open_at(path, true, &err);
    CHECK(second == NULL); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(strstr(err.message, "locked") != NULL);
    CHECK(!ember_clear_persistence(path, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(ember_db_close(db, &err));   /* terminate: the lock goes with it */
    second = open_at(path, true, &err);
    CHECK(second != NULL); CHECK_OK(err);
    ember_db_release(second);
    ember_db_release(db);
    temp_done();

    /* damaged: not a database */
    path = temp_path();
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) { fputs("this is not an SQLite database, just some text long enough to have a header......", f); fclose(f); }
    db = open_at(path, true, &err);
    CHECK(db == NULL); CHECK_ERR(err, EMBER_ERR_DATA_LOSS);
    temp_done();

    /* missing directory, empty path, cache sizes */
    CHECK(open_at("/nonexistent-ember-dir/sub/app.ember", true, &err) == NULL); CHECK_ERR(err, EMBER_ERR_UNAVAILABLE);
    CHECK(open_at("", true, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    path = temp_path();
    ember_settings_init(&s);
    s.path = path;
    s.cache_size_bytes = 1048575;
    CHECK(ember_db_open(&s, &err) == NULL); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    s.cache_size_bytes = 1048576;
    db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    ember_db_release(db);
    s.cache_size_bytes = EMBER_CACHE_SIZE_UNLIMITED;
    db = ember_db_open(&s, &err);
    CHECK(db != NULL); CHECK_OK(err);
    ember_db_release(db);
    temp_done();

    CHECK(!ember_clear_persistence(NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    path = temp_path();   /* nothing there yet: clearing succeeds */
    CHECK(ember_clear_persistence(path, &err)); CHECK_OK(err);
    temp_done();
}

static const char *INDEX_JSON =
    "{\"indexes\":[{\"collectionGroup\":\"cities\",\"queryScope\":\"COLLECTION\","
    "\"fields\":[{\"fieldPath\":\"state\",\"order\":\"ASCENDING\"},{\"fieldPath\":\"pop\",\"order\":\"DESCENDING\"}]}],"
    "\"fieldOverrides\":[]}";

static void index_manager(void) {
    ember_error err;
    const char *path = temp_path();
    ember_db *db = open_at(path, true, &err), *mem;
    ember_query *q;
    ember_snapshot *snap;
    int i;
    char doc[64], data[96];
    CHECK(db != NULL);
    for (i = 0; i < 40; i++) {
        snprintf(doc, sizeof doc, "cities/c%02d", i);
        snprintf(data, sizeof data, "{\"state\":\"%s\",\"pop\":%d}", i % 4 == 0 ? "CA" : "NY", i);
        set_json(db, doc, data);
    }
    CHECK(ember_db_index_count(db, &err) == 0); CHECK_OK(err);
    CHECK(ember_db_set_index_configuration(db, INDEX_JSON, &err)); CHECK_OK(err);
    CHECK(ember_db_index_count(db, &err) == 1);
    CHECK(!ember_db_set_index_configuration(db, "{\"indexes\": 3", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_set_index_configuration(db, NULL, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_index_count(db, &err) == 1);   /* a refused configuration changes nothing */

    /* the indexed query from the cache agrees with the count written */
    q = ember_query_new(db, "cities", &err);
    CHECK(ember_query_where(q, "state", EMBER_OP_EQUAL, EMBER_FORMAT_JSON, "\"CA\"", EMBER_NTS, &err));
    snap = ember_query_get(q, EMBER_SOURCE_CACHE, &err);
    CHECK(snap != NULL && ember_snapshot_size(snap) == 10);
    ember_snapshot_release(snap);
    ember_query_release(q);

    CHECK(ember_db_index_auto_creation(db, true, &err)); CHECK_OK(err);
    CHECK(ember_db_index_auto_creation(db, false, &err)); CHECK_OK(err);
    CHECK(ember_db_delete_all_indexes(db, &err)); CHECK_OK(err);
    CHECK(ember_db_index_count(db, &err) == 0);
    CHECK(ember_db_close(db, &err));
    CHECK(!ember_db_set_index_configuration(db, INDEX_JSON, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_db_delete_all_indexes(db, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    CHECK(!ember_db_index_auto_creation(db, true, &err)); CHECK_ERR(err, EMBER_ERR_FAILED_PRECONDITION);
    ember_db_release(db);
    temp_done();

    /* a memory cache accepts (and validates) the configuration and has no indexes */
    mem = open_db();
    CHECK(ember_db_set_index_configuration(mem, INDEX_JSON, &err)); CHECK_OK(err);
    CHECK(!ember_db_set_index_configuration(mem, "[", &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_index_count(mem, &err) == 0);
    CHECK(ember_db_index_auto_creation(mem, true, &err));
    CHECK(ember_db_delete_all_indexes(mem, &err));
    ember_db_release(mem);
    CHECK(!ember_db_set_index_configuration(NULL, INDEX_JSON, &err)); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(ember_db_index_count(NULL, &err) == -1); CHECK_ERR(err, EMBER_ERR_INVALID_ARGUMENT);
    CHECK(!ember_db_is_persistent(NULL));
}

void run_storage(void) {
    RUN(reopen_round_trip);
    RUN(memory_cache_over_file);
    RUN(open_errors);
    RUN(index_manager);
}
