/*
 * ember.h: the C ABI of Ember, an embeddable realtime document store (Firestore-like).
 *
 * Responsible for: the whole contract between C (and C++, Python, ...) callers and libember.
 * Hand-written; C99 and C++17 clean. Conventions (docs/c-abi.md):
 *
 *  - Names: ember_<object>_<verb>. Objects are opaque. Enum-like types are fixed-width integers.
 *  - Errors: every function that can fail takes `ember_error *err` last (may be NULL), returns
 *    false / NULL / 0 on failure and fills err->code (EMBER_ERR_*, 0 = ok) and err->message.
 *    On success err->code is set to EMBER_OK. No thread-local "last error", nothing global.
 *    Nothing traps: NULL arguments, invalid UTF-8, bad paths, malformed values, invalid queries,
 *    use after close all come back as error codes.
 *  - Ownership follows the name: _open/_new/_copy/_get(...) of objects return OWNED references,
 *    released with the one function named on each; accessors return BORROWED pointers valid while
 *    their parent lives; returned `char *` buffers are OWNED and freed with ember_free().
 *    Releasing NULL does nothing. Reference-counted objects (document, snapshot) have _retain.
 *  - Threads: every function may be called from any thread. Callbacks run on the database's
 *    event thread (one per database, callbacks one at a time, in order) and may call back into
 *    this ABI, including removing their own listener.
 *  - Listeners: adding one returns a token (never 0). ember_listener_remove(token) is idempotent;
 *    when it returns, the callback is not running and never runs again. An optional ctx_free runs
 *    once the listener is gone.
 *  - Leak checks: ember_instance_count() is the number of live Ember objects.
 *  - Strings: every `const char *` argument (paths, ids, field paths, tree paths, settings.path,
 *    index JSON) is NUL-terminated UTF-8 and ends at its first NUL, so it cannot hold one;
 *    bindings whose strings can (Python, C++) refuse such a string before the call instead of
 *    passing what precedes the NUL. Values (`const void *data, size_t len`) carry an explicit
 *    length and are read whole: a NUL byte in JSON text is an error, a string value or map key
 *    may hold NULs. EMBER_NTS as a length means the data is NUL-terminated text. Values nest at
 *    most 20 maps/arrays below the document (64 in ember_value_convert); deeper input is
 *    INVALID_ARGUMENT, never a stack overflow.
 *
 * Values cross the ABI in one of two exact formats (ember_format), chosen per call:
 *
 *  EMBER_FORMAT_MSGPACK  MessagePack. int families -> int64 (uint64 above INT64_MAX is an error),
 *                        float32/float64 -> double, str -> string (UTF-8), bin -> bytes,
 *                        nil, bool, array, map (string keys). Extension types:
 *                          -1  timestamp  MessagePack's standard timestamp (32/64/96-bit; Ember
 *                                         keeps microseconds; years 1..9999); written as 96-bit
 *                           1  reference  the document path as UTF-8 ("cities/SF")
 *                           2  geopoint   latitude then longitude, big-endian IEEE 754 doubles
 *  EMBER_FORMAT_JSON     JSON text (UTF-8). An integer literal is an int64, a number with a
 *                        fraction or exponent is a double (1 is an int, 1.0 a double; output
 *                        writes doubles with ".0"). Types JSON lacks are one-key objects:
 *                          {"$double": "NaN" | "Infinity" | "-Infinity" | "-0.0"}
 *                          {"$timestamp": "2024-05-01T12:00:00.000001Z"}   RFC 3339, UTC, us
 *                          {"$bytes": "aGVsbG8="}                          base64
 *                          {"$ref": "cities/SF"}                           document reference
 *                          {"$geo": [37.77, -122.42]}                      latitude, longitude
 *                          {"$map": {"$weird": 1}}                         a map with a '$' key
 *                        Input lengths may be EMBER_NTS for NUL-terminated text. Returned JSON
 *                        is NUL-terminated (the length excludes the NUL).
 *
 * Field transforms (serverTimestamp, increment, arrayUnion, arrayRemove, delete) are not values:
 * as in Firestore's own Write message (`update` + `update_transforms`), they travel in a
 * separate TRANSFORMS document, in the same format as the data: a map from field path (dotted,
 * with `backquotes` for odd names, as in ember_doc_update) to one operation:
 *
 *      "serverTimestamp"            the commit time (reads as null until acknowledged)
 *      "delete"                     remove the field (merge and update only)
 *      {"increment": 1}             add an int or double (int + int saturates)
 *      {"arrayUnion": [1, "a"]}     append the elements not already present
 *      {"arrayRemove": [1]}         remove every equal element
 *
 *   e.g. ember_doc_merge(db, "cities/SF", EMBER_FORMAT_JSON, "{\"name\":\"SF\"}", EMBER_NTS,
 *            "{\"visits\":{\"increment\":1},\"updated\":\"serverTimestamp\"}", EMBER_NTS,
 *            NULL, 0, NULL, NULL, &err);
 *
 * Limits (Firestore's): nesting depth 20, no array directly in an array, 1 MiB per document,
 * 500 writes per batch or transaction; the decoders refuse input nested deeper than 64.
 */
#ifndef EMBER_H
#define EMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 6
#define EMBER_VERSION_PATCH 0
/** X*1000000 + Y*1000 + Z, as SQLITE_VERSION_NUMBER. */
#define EMBER_VERSION_NUMBER 6000
#define EMBER_VERSION_STRING "0.6.0"

/** EMBER_VERSION_NUMBER of the library actually loaded (compare with the header's). */
int32_t ember_libversion_number(void);
/** "0.6.0" of the library loaded. Static storage: never free. */
const char *ember_libversion(void);

/* ---------------------------------------------------------------- errors */

/** Error codes: gRPC / Firestore status codes. New codes may be added after 16. */
enum {
    EMBER_OK = 0,
    EMBER_ERR_CANCELLED = 1,           /* operation cancelled (e.g. database closed before the ack) */
    EMBER_ERR_UNKNOWN = 2,
    EMBER_ERR_INVALID_ARGUMENT = 3,    /* NULL, bad UTF-8, bad path, malformed value, invalid query */
    EMBER_ERR_DEADLINE_EXCEEDED = 4,   /* no answer in time */
    EMBER_ERR_NOT_FOUND = 5,           /* update of a missing document; missing field or data */
    EMBER_ERR_ALREADY_EXISTS = 6,
    EMBER_ERR_PERMISSION_DENIED = 7,
    EMBER_ERR_RESOURCE_EXHAUSTED = 8,
    EMBER_ERR_FAILED_PRECONDITION = 9, /* use after close; object in the wrong state */
    EMBER_ERR_ABORTED = 10,            /* transaction lost to contention (after its retries) */
    EMBER_ERR_OUT_OF_RANGE = 11,       /* index past the end */
    EMBER_ERR_UNIMPLEMENTED = 12,
    EMBER_ERR_INTERNAL = 13,
    EMBER_ERR_UNAVAILABLE = 14,        /* offline: a read the cache cannot answer, a transaction */
    EMBER_ERR_DATA_LOSS = 15,
    EMBER_ERR_UNAUTHENTICATED = 16
};

#define EMBER_ERROR_MESSAGE_SIZE 504

/** Filled by a failing call. The message is UTF-8, NUL-terminated, truncated to fit. */
typedef struct ember_error {
    int32_t code;                              /* EMBER_OK or EMBER_ERR_* */
    char message[EMBER_ERROR_MESSAGE_SIZE];    /* "" when code is EMBER_OK */
} ember_error;

/** "OK", "INVALID_ARGUMENT", ...; "UNKNOWN" for a code outside the table. Static storage. */
const char *ember_error_code_name(int32_t code);

/* ---------------------------------------------------------------- memory, values, paths */

/** Frees a buffer returned by this library (char * results). NULL does nothing. */
void ember_free(void *buffer);

/** Number of live Ember objects (databases, queries, filters, batches, documents, snapshots,
 *  listeners). Tests assert it is back to 0 after releasing everything. */
int64_t ember_instance_count(void);

typedef int32_t ember_format;
enum { EMBER_FORMAT_MSGPACK = 0, EMBER_FORMAT_JSON = 1 };

/** Pass as a length for NUL-terminated text. */
#define EMBER_NTS ((size_t)-1)

/** Decodes one value in `from` and encodes it in `to` (also validates: same format both ways).
 *  Returns an OWNED buffer (ember_free), its length in *out_len (may be NULL); NULL on error. */
char *ember_value_convert(const void *data, size_t len, ember_format from, ember_format to,
                          size_t *out_len, ember_error *err);

enum { EMBER_PATH_INVALID = 0, EMBER_PATH_COLLECTION = 1, EMBER_PATH_DOCUMENT = 2 };

/** Validates a slash-separated path: EMBER_PATH_DOCUMENT (even number of segments),
 *  EMBER_PATH_COLLECTION (odd), or EMBER_PATH_INVALID with err filled. One leading and one
 *  trailing slash are ignored ("/cities/SF/" is "cities/SF"); "//" inside a path is invalid. */
int32_t ember_path_kind(const char *path, ember_error *err);

/** Writes a new random 20-character document id (Firestore's alphabet) and a NUL to out[21]. */
void ember_auto_id(char out[21]);

/* ---------------------------------------------------------------- database */

typedef struct ember_db ember_db;

#define EMBER_CACHE_SIZE_UNLIMITED ((int64_t)-1)
#define EMBER_CACHE_SIZE_DEFAULT ((int64_t)104857600) /* 100 MiB */

typedef struct ember_settings {
    /** Where the database lives: one SQLite file (WAL; beside it `<path>-wal`, `<path>-shm` and
     *  `<path>.lock`), created when missing, restored as it was when it exists. NULL: in memory,
     *  nothing on disk. */
    const char *path;
    /** With a path: true keeps the client's cache, pending writes and listen targets in the file
     *  too (durable: pending writes survive a restart; without a host, the cache is the
     *  in-process backend's own table and each online write is committed in one transaction
     *  before the call returns); false keeps them in memory (Firestore's MemoryCacheSettings;
     *  the backend's documents stay in the file). Ignored without a path. */
    bool persistence;
    /** Cache size threshold in bytes: >= 1 MiB, or EMBER_CACHE_SIZE_UNLIMITED; 0 = default
     *  (EMBER_CACHE_SIZE_DEFAULT). Least-recently-used documents that no listener and no pending
     *  write holds are removed when the cache grows past it (durable caches of a server, with
     *  `host`). Without a host, the file keeps one copy of each document, which is the database
     *  itself and is never collected. */
    int64_t cache_size_bytes;
    /** The server the documents sync with, as "host:port" ("127.0.0.1:8080", "[::1]:8080"):
     *  `ember serve` or the Firestore emulator, database projects/demo-ember/databases/(default).
     *  BORROWED: read during ember_db_open only (the caller keeps ownership). NULL: the
     *  in-process backend. With a host, path still holds the durable cache and pending writes
     *  (sent when the server is reachable); the tree (ember_ref_*) syncs with database_host
     *  when it is set, else it stays in this process. Several servers (instances of one
     *  `ember serve --postgres` deployment) as a comma-separated list of IP addresses,
     *  "10.0.0.1:8080,10.0.0.2:8080" (at most 16; localhost is 127.0.0.1): the client uses the
     *  first that answers and, when its connection fails, moves on to the next that answers,
     *  resuming its listeners there. */
    const char *host;
    /** Whether the connection to host uses TLS: true by default (Firebase's default, so
     *  ember_settings_init sets true), for `ember serve --tls-cert ...`. Set false for a
     *  plaintext server (the emulator, an `ember serve` without --tls-cert). Ignored without a
     *  host. A server that cannot be reached (TLS against a plaintext server, nothing
     *  listening) is no error: writes stay pending and each failed attempt is one line on
     *  stderr, "ember: could not reach the server at HOST (TLS on|off): ..." with the cause and
     *  the next retry (naming this setting when TLS met a plaintext server); at most one line a
     *  second, written by an Ember thread that a full or closed stderr neither blocks nor kills
     *  (SIGPIPE is held off while it writes). */
    bool ssl;
    /** With ssl: a PEM file of the certificates the server's is verified against (a private CA,
     *  a self-signed server); NULL: the system's roots. BORROWED, read during ember_db_open. */
    const char *ssl_ca_file;
    /** With a host: the caller's ID token (a JWT), sent as `authorization: Bearer <token>` on
     *  every call, for a server whose security rules decide by request.auth; NULL: anonymous.
     *  BORROWED, read during ember_db_open (a refreshed token needs a new ember_db_open). (host,
     *  ssl, ssl_ca_file and auth_token were added to the first 0.1.0 header: code compiled
     *  against that header must be recompiled.) */
    const char *auth_token;
    /** The server the tree (ember_ref_*) syncs with, as "host:port": the tree port of `ember
     *  serve` (`--database-port`, 9000 by default), over the Realtime Database's realtime
     *  protocol, in the namespace "demo-ember". ssl, ssl_ca_file and auth_token apply to it as
     *  to host. BORROWED, read during ember_db_open. NULL: the tree stays in this process.
     *  Offline first: writes show at once and wait for the server; observers serve the cache
     *  until it answers. (Added after auth_token: code compiled against an older header must be
     *  recompiled.) */
    const char *database_host;
} ember_settings;

/** Fills the defaults: in memory (path NULL), persistence true (takes effect once a path is
 *  set), EMBER_CACHE_SIZE_DEFAULT, the in-process backend (host NULL), ssl true with the
 *  system's roots (ssl_ca_file NULL), anonymous (auth_token NULL), a local tree (database_host
 *  NULL). A zero-filled struct is
 *  valid too (persistence false, ssl false). */
void ember_settings_init(ember_settings *settings);

/** Opens a database with its own in-process backend, or with its documents synced with
 *  settings->host. settings may be NULL (defaults). Thread: any (the caller waits; the
 *  connection to a host is made in the background, so an unreachable server is no error here:
 *  writes queue until it answers). Returns an OWNED handle released with ember_db_release; NULL
 *  on error:
 *    EMBER_ERR_INVALID_ARGUMENT      cache_size_bytes under 1 MiB (and not UNLIMITED), bad UTF-8;
 *                                    a host that is empty or not "host:port" (no port, a port
 *                                    outside 1-65535, a scheme, a space, an IPv6 address
 *                                    without brackets); an ssl_ca_file that cannot be read;
 *                                    an auth_token that is empty, longer than 16 KiB or holds
 *                                    a space or control character
 *    EMBER_ERR_UNIMPLEMENTED         a library built without remote support (EMBER_CORE_ONLY)
 *    EMBER_ERR_FAILED_PRECONDITION   the path is open in another instance (this process or
 *                                    another): "... is locked" (a crashed process leaves no lock)
 *    EMBER_ERR_DATA_LOSS             the file is damaged or truncated (the message names it)
 *    EMBER_ERR_UNAVAILABLE           the directory does not exist
 *    EMBER_ERR_PERMISSION_DENIED     the directory or file is not writable */
ember_db *ember_db_open(const ember_settings *settings, ember_error *err);

/** Closes the database (Firestore's terminate: the file and its lock are released, so the path
 *  may be reopened or cleared afterwards): every listener ends (its ctx_free runs before this returns), unacked
 *  write callbacks get EMBER_ERR_CANCELLED, callbacks already posted run, the event thread
 *  stops. Idempotent. Afterwards every call on the database (and its queries) fails with
 *  EMBER_ERR_FAILED_PRECONDITION. May be called from any thread, including from a callback (then
 *  the callback must not use its ctx after the call: its ctx_free has run). The handle stays
 *  valid until ember_db_release. When it returns, no Ember thread works for this database any
 *  more (a commit in flight at the in-process backend has finished); with a host, the
 *  connection to the server has stopped too (calls in flight get 2 s, then it is cancelled;
 *  what was not acknowledged stays queued in a durable cache). */
bool ember_db_close(ember_db *db, ember_error *err);

/** Closes (if needed) and releases the caller's handle. NULL does nothing. Queries that still
 *  hold the database keep their memory valid but fail with EMBER_ERR_FAILED_PRECONDITION. */
void ember_db_release(ember_db *db);

/** Network switch: while disabled, writes queue, listeners serve the cache (is_from_cache). */
bool ember_db_disable_network(ember_db *db, ember_error *err);
bool ember_db_enable_network(ember_db *db, ember_error *err);

/**
 * Completion of a write, a batch commit or ember_db_wait_for_pending_writes: error->code is
 * EMBER_OK when the backend acknowledged, else why it did not (e.g. EMBER_ERR_CANCELLED when
 * the database closed first). `error` is BORROWED for the call.
 * @warning Runs on the database's event thread; may call back into the ABI.
 * Runs exactly once when the call that took it returned true; never when it returned false.
 */
typedef void (*ember_write_cb)(void *ctx, const ember_error *error);

/** Calls `cb` once every write made so far is acknowledged (or failed). cb NULL: blocks the
 *  calling thread until then instead (refused with EMBER_ERR_FAILED_PRECONDITION from a
 *  callback, where it would wait for itself). With a host, as in Firebase, it keeps waiting
 *  while the server is unreachable (the writes stay queued and are sent once it answers; the
 *  reason is on stderr, see ember_settings.ssl). */
bool ember_db_wait_for_pending_writes(ember_db *db, ember_write_cb cb, void *ctx, ember_error *err);

/* ---------------------------------------------------------------- writes to documents */

/*
 * All writes are applied locally at once (listeners see them, with has_pending_writes, before
 * the call returns to its caller's next event) and sent to the backend when the network is on.
 * `path` is a document path ("cities/SF"). `data`/`transforms` are in `format`; transforms may
 * be NULL (with length 0). `cb` (may be NULL) runs on the event thread when the backend answers.
 * Each returns false (and `cb` never runs) when the write is refused at once.
 */

/** Replaces the document with `data` (a map). "delete" transforms are refused. */
bool ember_doc_set(ember_db *db, const char *path, ember_format format,
                   const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                   ember_write_cb cb, void *ctx, ember_error *err);

/** The ids of the collections directly under the document `parent_path` (NULL or "" for the
 *  root) that hold a document, sorted, as an array of strings in `format`: an OWNED buffer
 *  (ember_free). Online the backend's, offline the cache's; collections created by local writes
 *  not yet acknowledged are included. e.g. ["cities","users"]. */
char *ember_db_list_collection_ids(ember_db *db, const char *parent_path, ember_format format,
                                   size_t *out_len, ember_error *err);

/** Firestore's create: a set that fails (ALREADY_EXISTS, "Document already exists: <path>") when
 *  the document exists at the backend; one write, rolled back locally like any refused write.
 *  Same arguments as ember_doc_set. */
bool ember_doc_create(ember_db *db, const char *path, ember_format format,
                      const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                      ember_write_cb cb, void *ctx, ember_error *err);
/** Set with merge: fields == NULL (n_fields 0) merges every field given in `data` (nested maps
 *  merge field by field, SetOptions.merge()); otherwise only the listed field paths are
 *  written (SetOptions.mergeFields), each must be in data or transforms. */
bool ember_doc_merge(ember_db *db, const char *path, ember_format format,
                     const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                     const char *const *fields, size_t n_fields,
                     ember_write_cb cb, void *ctx, ember_error *err);

/** Updates the fields of an existing document: `data` is a map whose KEYS ARE FIELD PATHS
 *  ("address.city", "`odd.name`"); values replace the field at that path. At least one field
 *  in data or transforms. Fails (to cb) with EMBER_ERR_NOT_FOUND when the document is missing. */
bool ember_doc_update(ember_db *db, const char *path, ember_format format,
                      const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                      ember_write_cb cb, void *ctx, ember_error *err);

bool ember_doc_delete(ember_db *db, const char *path, ember_write_cb cb, void *ctx, ember_error *err);

/* ---------------------------------------------------------------- document snapshots */

typedef struct ember_document ember_document;

typedef int32_t ember_source;
enum {
    EMBER_SOURCE_DEFAULT = 0, /* the backend when online, else the cache */
    EMBER_SOURCE_SERVER = 1,  /* the backend only (EMBER_ERR_UNAVAILABLE offline) */
    EMBER_SOURCE_CACHE = 2    /* the cache only */
};

/** Reads a document (blocking the caller until the answer; safe from a callback). Returns an
 *  OWNED snapshot (ember_document_release) that may say the document does not exist; NULL on
 *  error (e.g. EMBER_ERR_UNAVAILABLE offline when the cache does not have it). */
ember_document *ember_doc_get(ember_db *db, const char *path, ember_source source, ember_error *err);

/** Adds a reference to a document snapshot (owned or borrowed); returns it. NULL gives NULL. */
ember_document *ember_document_retain(const ember_document *doc);
/** Drops one reference. NULL does nothing. */
void ember_document_release(const ember_document *doc);

bool ember_document_exists(const ember_document *doc);
/** The document's id ("SF") and full path ("cities/SF"): BORROWED, valid while `doc` lives. */
const char *ember_document_id(const ember_document *doc);
const char *ember_document_path(const ember_document *doc);
/** Local writes not yet acknowledged are applied to this document. */
bool ember_document_has_pending_writes(const ember_document *doc);
/** The snapshot came from the cache (offline, cache source, or not yet confirmed). */
bool ember_document_is_from_cache(const ember_document *doc);
/** When the backend created / last updated the document: microseconds since the Unix epoch, 0
 *  when unknown (a document that does not exist, or whose only state is a local write not yet
 *  acknowledged). */
int64_t ember_document_create_time(const ember_document *doc);
int64_t ember_document_update_time(const ember_document *doc);

/** All fields as one map. OWNED buffer (ember_free); NULL with EMBER_ERR_NOT_FOUND when the
 *  document does not exist. Pending server timestamps read as null. */
char *ember_document_data(const ember_document *doc, ember_format format, size_t *out_len,
                          ember_error *err);
/** One field by field path. OWNED buffer; NULL with EMBER_ERR_NOT_FOUND when absent. */
char *ember_document_get(const ember_document *doc, const char *field_path, ember_format format,
                         size_t *out_len, ember_error *err);

/* ---------------------------------------------------------------- write batches */

typedef struct ember_batch ember_batch;

/** A batch of up to 500 writes committed atomically. OWNED (ember_batch_release). */
ember_batch *ember_batch_new(ember_db *db, ember_error *err);
void ember_batch_release(ember_batch *batch);

/** Same arguments and rules as ember_doc_*; the write is checked now, applied at commit. */
bool ember_batch_set(ember_batch *batch, const char *path, ember_format format,
                     const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                     ember_error *err);
/** A read check (optimistic transactions built on a batch): the whole batch fails unless the
 *  document's update time is still `update_time` (ember_document_update_time of the read;
 *  FAILED_PRECONDITION), or, with 0, unless it still does not exist (ALREADY_EXISTS). */
bool ember_batch_verify(ember_batch *batch, const char *path, int64_t update_time, ember_error *err);
/** A create in the batch (the whole batch fails with ALREADY_EXISTS when the document exists). */
bool ember_batch_create(ember_batch *batch, const char *path, ember_format format,
                        const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                        ember_error *err);
bool ember_batch_merge(ember_batch *batch, const char *path, ember_format format,
                       const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                       const char *const *fields, size_t n_fields, ember_error *err);
bool ember_batch_update(ember_batch *batch, const char *path, ember_format format,
                        const void *data, size_t data_len, const void *transforms, size_t transforms_len,
                        ember_error *err);
bool ember_batch_delete(ember_batch *batch, const char *path, ember_error *err);

/** Applies every write at once. A batch commits once: later calls on it fail with
 *  EMBER_ERR_FAILED_PRECONDITION. An empty batch commits (cb gets EMBER_OK). */
bool ember_batch_commit(ember_batch *batch, ember_write_cb cb, void *ctx, ember_error *err);

/* ---------------------------------------------------------------- transactions */

typedef struct ember_transaction ember_transaction;

/**
 * The body of a transaction. Reads (ember_transaction_get) must come before writes. Return
 * true to commit; false to abort, with the reason in `err` (BORROWED; if left at EMBER_OK the
 * transaction fails with EMBER_ERR_ABORTED). `tx` is BORROWED for the call only.
 * @warning Runs on the thread that called ember_db_run_transaction, possibly several times
 * (once per attempt): keep side effects out of it.
 */
typedef bool (*ember_transaction_fn)(ember_transaction *tx, void *ctx, ember_error *err);

/** Runs `fn` until its commit succeeds, at most `max_attempts` times (0: 5) when documents it
 *  read changed. Blocks the caller. Refused with EMBER_ERR_UNAVAILABLE while the network is
 *  disabled; EMBER_ERR_ABORTED after the last lost attempt. */
bool ember_db_run_transaction(ember_db *db, int32_t max_attempts, ember_transaction_fn fn,
                              void *ctx, ember_error *err);

/** Reads a document at the backend. OWNED snapshot (ember_document_release); NULL on error. */
ember_document *ember_transaction_get(ember_transaction *tx, const char *path, ember_error *err);

/** Buffered writes, committed when `fn` returns true. A refused write also fails the commit. */
bool ember_transaction_set(ember_transaction *tx, const char *path, ember_format format,
                           const void *data, size_t data_len, const void *transforms,
                           size_t transforms_len, ember_error *err);
bool ember_transaction_merge(ember_transaction *tx, const char *path, ember_format format,
                             const void *data, size_t data_len, const void *transforms,
                             size_t transforms_len, const char *const *fields, size_t n_fields,
                             ember_error *err);
bool ember_transaction_update(ember_transaction *tx, const char *path, ember_format format,
                              const void *data, size_t data_len, const void *transforms,
                              size_t transforms_len, ember_error *err);
bool ember_transaction_delete(ember_transaction *tx, const char *path, ember_error *err);

/* ---------------------------------------------------------------- queries */

typedef struct ember_query ember_query;
typedef struct ember_filter ember_filter;
typedef struct ember_snapshot ember_snapshot;

typedef int32_t ember_op;
enum {
    EMBER_OP_LESS_THAN = 0,             /* <  */
    EMBER_OP_LESS_THAN_OR_EQUAL = 1,    /* <= */
    EMBER_OP_EQUAL = 2,                 /* == */
    EMBER_OP_NOT_EQUAL = 3,             /* != */
    EMBER_OP_GREATER_THAN = 4,          /* >  */
    EMBER_OP_GREATER_THAN_OR_EQUAL = 5, /* >= */
    EMBER_OP_ARRAY_CONTAINS = 6,
    EMBER_OP_ARRAY_CONTAINS_ANY = 7,    /* value: a non-empty array (at most 30) */
    EMBER_OP_IN = 8,                    /* value: a non-empty array (at most 30) */
    EMBER_OP_NOT_IN = 9                 /* value: a non-empty array (at most 10) */
};

typedef int32_t ember_cursor;
enum {
    EMBER_CURSOR_START_AT = 0,
    EMBER_CURSOR_START_AFTER = 1,
    EMBER_CURSOR_END_AT = 2,
    EMBER_CURSOR_END_BEFORE = 3
};

/** The field path of a document's id (FieldPath.documentId()); its operands may be plain ids
 *  (strings) or references. */
#define EMBER_DOCUMENT_ID "__name__"

/** A query over one collection ("cities", "cities/SF/landmarks"). OWNED (ember_query_release);
 *  it keeps the database's handle alive. Builder calls change the query in place; the first
 *  rule broken is reported by that call (and leaves the query unchanged). */
ember_query *ember_query_new(ember_db *db, const char *collection_path, ember_error *err);
/** A query over every collection with this id (no '/'). OWNED. */
ember_query *ember_query_new_collection_group(ember_db *db, const char *collection_id, ember_error *err);
/** An independent copy (OWNED), e.g. to branch a query. NULL gives NULL. */
ember_query *ember_query_copy(const ember_query *query);
void ember_query_release(ember_query *query);

/** Adds `field op value` (ANDed with the others). `value` is one value in `format`. */
bool ember_query_where(ember_query *query, const char *field_path, ember_op op, ember_format format,
                       const void *value, size_t value_len, ember_error *err);
/** Adds a (composite) filter. The filter is only read: the caller keeps and releases it. */
bool ember_query_where_filter(ember_query *query, const ember_filter *filter, ember_error *err);
bool ember_query_order_by(ember_query *query, const char *field_path, bool descending, ember_error *err);
/** The first n (limit) or the last n (limit_to_last, needs an order-by when run); n > 0. */
bool ember_query_limit(ember_query *query, int64_t n, ember_error *err);
bool ember_query_limit_to_last(ember_query *query, int64_t n, ember_error *err);
/** Sets a cursor from values: `values` is an ARRAY in `format`, one per order-by, in order. */
bool ember_query_cursor(ember_query *query, ember_cursor cursor, ember_format format,
                        const void *values, size_t values_len, ember_error *err);
/** Sets a cursor at a document snapshot (its values in the query's full order). */
bool ember_query_cursor_document(ember_query *query, ember_cursor cursor, const ember_document *doc,
                                 ember_error *err);

/** A field comparison, for composing with ember_filter_and/_or. OWNED (ember_filter_release). */
ember_filter *ember_filter_field(const char *field_path, ember_op op, ember_format format,
                                 const void *value, size_t value_len, ember_error *err);
/** AND / OR of filters (only read: the caller still releases them). n may be 0 (matches all). */
ember_filter *ember_filter_and(const ember_filter *const *filters, size_t n, ember_error *err);
ember_filter *ember_filter_or(const ember_filter *const *filters, size_t n, ember_error *err);
void ember_filter_release(ember_filter *filter);

/** Runs the query once (blocking; safe from a callback). OWNED snapshot (ember_snapshot_release). */
ember_snapshot *ember_query_get(const ember_query *query, ember_source source, ember_error *err);
/** Counts the matching documents at the backend (blocking). EMBER_ERR_UNAVAILABLE offline. */
bool ember_query_count(const ember_query *query, int64_t *out_count, ember_error *err);

/* ---------------------------------------------------------------- query snapshots */

#define EMBER_NPOS ((size_t)-1)

typedef int32_t ember_change_type;
enum { EMBER_CHANGE_ADDED = 0, EMBER_CHANGE_MODIFIED = 1, EMBER_CHANGE_REMOVED = 2 };

/** One document change. Order within a snapshot: removed, added, modified; indexes replay step
 *  by step on the previous list. old_index is EMBER_NPOS for added, new_index for removed. */
typedef struct ember_document_change {
    ember_change_type type;
    const ember_document *document; /* BORROWED from the snapshot: the changed document itself
                                       (its new state; for REMOVED its last one), which is not
                                       always the snapshot's document at new_index */
    size_t old_index;
    size_t new_index;
} ember_document_change;

ember_snapshot *ember_snapshot_retain(const ember_snapshot *snapshot);
void ember_snapshot_release(const ember_snapshot *snapshot);
/** Number of documents. */
size_t ember_snapshot_size(const ember_snapshot *snapshot);
/** The i-th document in query order: BORROWED from the snapshot; NULL when i is out of range. */
const ember_document *ember_snapshot_document(const ember_snapshot *snapshot, size_t i);
size_t ember_snapshot_change_count(const ember_snapshot *snapshot);
/** Fills *out with change i; false (EMBER_ERR_OUT_OF_RANGE) past the end. */
bool ember_snapshot_change(const ember_snapshot *snapshot, size_t i, ember_document_change *out,
                           ember_error *err);
bool ember_snapshot_is_from_cache(const ember_snapshot *snapshot);
/** Local writes not yet acknowledged touch a document of the result. */
bool ember_snapshot_has_pending_writes(const ember_snapshot *snapshot);

/* ---------------------------------------------------------------- listeners */

typedef uint64_t ember_listener_token;

/** Options of a listener (bit flags, 0 = defaults). */
enum {
    EMBER_LISTEN_INCLUDE_METADATA_CHANGES = 1, /* also raise metadata-only changes */
    EMBER_LISTEN_SOURCE_CACHE = 2              /* listen to the cache only, never the backend */
};

/**
 * A document listener's callback: either `doc` (BORROWED for the call: ember_document_retain to
 * keep it; it may say the document does not exist) and error == NULL, or doc == NULL and
 * `error` (BORROWED), after which the listener has ended and the callback never runs again.
 * @warning Runs on the database's event thread, one callback at a time. May call back into
 * the ABI, including ember_listener_remove of its own token.
 */
typedef void (*ember_document_listener_cb)(void *ctx, const ember_document *doc, const ember_error *error);

/**
 * A query listener's callback: `snapshot` (BORROWED for the call: ember_snapshot_retain to keep
 * it) and error == NULL, or snapshot == NULL and the `error` that ended the listener.
 * @warning Runs on the database's event thread, one callback at a time. May call back into
 * the ABI, including ember_listener_remove of its own token.
 */
typedef void (*ember_query_listener_cb)(void *ctx, const ember_snapshot *snapshot, const ember_error *error);

/**
 * Runs when the listener is gone (removed, ended by an error, or its database closed), after
 * its last callback has returned: on the event thread, or on the thread that closes the db.
 */
typedef void (*ember_ctx_free)(void *ctx);

/** Listens to one document. Returns a token (never 0), or 0 with err when refused at once
 *  (then ctx_free is not called). */
ember_listener_token ember_doc_listen(ember_db *db, const char *path, uint32_t flags,
                                      ember_document_listener_cb cb, void *ctx,
                                      ember_ctx_free ctx_free, ember_error *err);

/** Listens to a query (the query is only read: release it when you like). Invalid queries
 *  (e.g. limit_to_last without order-by) are refused here. */
ember_listener_token ember_query_listen(const ember_query *query, uint32_t flags,
                                        ember_query_listener_cb cb, void *ctx,
                                        ember_ctx_free ctx_free, ember_error *err);

/** Stops a listener. Idempotent (unknown and 0 tokens do nothing). When it returns, the
 *  callback is not running and never runs again (from inside the callback itself: it runs no
 *  more after it returns, even when more of its events were already due). The first callback
 *  of a listener or observer added from another thread than the event thread runs only after
 *  the add call has returned; a callback that reads the token the caller stores must still get
 *  it through the caller's own synchronization (a mutex held across the add call and the store). */
void ember_listener_remove(ember_listener_token token);

/* ---------------------------------------------------------------- durable storage: indexes, clearing */

/*
 * Offline query indexes of a durable cache (Firestore's setIndexConfiguration and
 * PersistentCacheIndexManager). On a memory cache (no path, or persistence false) they are
 * accepted and do nothing, as in Firestore. Queries use an index when one serves them and a scan
 * otherwise, with identical results.
 */

/** Builds the indexes of Firestore's index JSON (`{"indexes": [{"collectionGroup": "cities",
 *  "queryScope": "COLLECTION", "fields": [{"fieldPath": "state", "order": "ASCENDING"}]}],
 *  "fieldOverrides": [...]}`), NUL-terminated UTF-8. EMBER_ERR_INVALID_ARGUMENT when malformed. */
bool ember_db_set_index_configuration(ember_db *db, const char *json, ember_error *err);
/** Index auto-creation (off by default): build an index when a query scans many more documents
 *  than it returns (Firestore's heuristic: >= 100 read and more than 2x the result). */
bool ember_db_index_auto_creation(ember_db *db, bool enable, ember_error *err);
/** Deletes every offline index (configured and auto-created). */
bool ember_db_delete_all_indexes(ember_db *db, ember_error *err);
/** Number of offline indexes the cache has (0 for a memory cache); -1 on error. */
int64_t ember_db_index_count(ember_db *db, ember_error *err);
/** Whether the client's cache is durable (a path with persistence). false for NULL or closed. */
bool ember_db_is_persistent(ember_db *db);

/** Deletes the database files at `path` (the file, its WAL and shared memory; the empty
 *  `<path>.lock` stays, since removing it could race with an instance opening the path).
 *  Only while no instance has it open (close it first; ember_db_close is Firestore's terminate):
 *  else EMBER_ERR_FAILED_PRECONDITION. A path with no files succeeds. */
bool ember_clear_persistence(const char *path, ember_error *err);

/* ---------------------------------------------------------------- the tree (Realtime-Database style) */

/*
 * A JSON tree in the same database as the documents (same backend, network switch, event
 * thread). Values are tree values in either format: null, bool, numbers, strings, maps; arrays
 * are stored as maps with keys "0", "1", ... and come back as arrays when their keys are dense
 * (as the Realtime Database does); null children and empty maps vanish. Timestamps, bytes,
 * references and geo points are refused (EMBER_ERR_INVALID_ARGUMENT). Keys: at most 768 bytes,
 * none of . $ # [ ] / or control characters; paths and values together at most 32 levels.
 *
 *   ember_ref *posts = ember_ref_new(db, "posts", &err);
 *   ember_ref *p = ember_ref_push(posts, &err);                     // key: a push id
 *   ember_ref_set(p, EMBER_FORMAT_JSON, "{\"title\":\"Hi\"}", EMBER_NTS, NULL, NULL, &err);
 *   ember_listener_token t = ember_ref_observe(posts, EMBER_EVENT_CHILD_ADDED, on_added, ctx, NULL, &err);
 *   ...; ember_listener_remove(t); ember_ref_release(p); ember_ref_release(posts);
 */

typedef struct ember_ref ember_ref;
typedef struct ember_tree_query ember_tree_query;
typedef struct ember_tree_snapshot ember_tree_snapshot;

/** A location: "posts/abc" (leading, trailing and doubled slashes are ignored); NULL or "" is the
 *  root. OWNED (ember_ref_release); it keeps the database's handle alive. */
ember_ref *ember_ref_new(ember_db *db, const char *path, ember_error *err);
/** The location `path` ("a/b", non-empty) below `ref`. OWNED. */
ember_ref *ember_ref_child(const ember_ref *ref, const char *path, ember_error *err);
/** A new child whose key is a push id (20 characters, time-ordered, strictly increasing within
 *  the process: docs/semantics.md 17). Nothing is written. OWNED. */
ember_ref *ember_ref_push(const ember_ref *ref, ember_error *err);
/** The parent location (OWNED); NULL at the root or for NULL. */
ember_ref *ember_ref_parent(const ember_ref *ref);
void ember_ref_release(ember_ref *ref);
/** The last path segment, NULL at the root. BORROWED (valid while `ref` lives). */
const char *ember_ref_key(const ember_ref *ref);
/** The path, "/posts/abc" ("/" at the root). BORROWED. */
const char *ember_ref_path(const ember_ref *ref);

/*
 * Writes are applied locally at once (observers get their events before the next event of the
 * caller) and sent to the backend when the network is on; `cb` (may be NULL) runs on the event
 * thread when the backend acknowledges. Each returns false (and `cb` never runs) when the write
 * is refused at once (invalid key, path or value, closed database).
 */

/* Server values (Firebase's ServerValue) may stand for any value in a write, onDisconnect write
 * or transaction result: {".sv": "timestamp"} (the server's clock in ms since 1970 when it applies
 * the write) and {".sv": {"increment": N}} (the number there plus N, else N). Observers see the
 * client's estimate at once (its clock plus .info/serverTimeOffset; its own number plus N). */

/** Replaces the data at `ref` with one value (null removes it). */
bool ember_ref_set(ember_ref *ref, ember_format format, const void *data, size_t len,
                   ember_write_cb cb, void *ctx, ember_error *err);
/** Multi-path update, atomic for observers: `data` is a map from paths relative to `ref`
 *  ("a/b") to values (null removes). Paths may not contain one another. */
bool ember_ref_update(ember_ref *ref, ember_format format, const void *data, size_t len,
                      ember_write_cb cb, void *ctx, ember_error *err);
/** Removes the data at `ref`. */
bool ember_ref_remove(ember_ref *ref, ember_write_cb cb, void *ctx, ember_error *err);

/** onDisconnect (presence): writes the server applies when this database's connection to it ends
 *  (settings.database_host; with the in-process tree, when the database closes). Registered now
 *  when online, else once the server answers; `cb` (may be NULL, event thread) when the server
 *  holds them or refused them (the rules are checked then and again when they run). set, update
 *  and remove take their values as ember_ref_set / ember_ref_update / ember_ref_remove do;
 *  cancel drops those registered at and below `ref`. */
bool ember_ref_on_disconnect_set(ember_ref *ref, ember_format format, const void *data, size_t len,
                                 ember_write_cb cb, void *ctx, ember_error *err);
bool ember_ref_on_disconnect_update(ember_ref *ref, ember_format format, const void *data, size_t len,
                                    ember_write_cb cb, void *ctx, ember_error *err);
bool ember_ref_on_disconnect_remove(ember_ref *ref, ember_write_cb cb, void *ctx, ember_error *err);
bool ember_ref_on_disconnect_cancel(ember_ref *ref, ember_write_cb cb, void *ctx, ember_error *err);

/*
 * Transactions (Firebase's runTransactionBlock): `update` computes the new value from the current
 * one; Ember writes it only if the location still holds what `update` saw (a compare-and-set by
 * hash at the server), else runs `update` again with the newer value, up to 25 times.
 */

typedef struct ember_tree_tx ember_tree_tx;

/**
 * A transaction's update function. `current` (BORROWED for the call; `current_len` bytes in the
 * transaction's format) is the location's value as this database knows it: null when it knows
 * nothing yet (the first call often sees null; the server's value then comes with the retry).
 * Set the new value with ember_tree_tx_set (not calling it writes `current` unchanged) and return
 * true to write it, or return false to abort (the completion then says not committed, no error).
 * `tx` is BORROWED for the call only.
 * @warning Runs on the database's event thread, possibly several times (once per attempt): keep
 * side effects out of it. It may call the ABI but must not block on it (no ember_ref_get).
 */
typedef bool (*ember_tree_update_fn)(void *ctx, const void *current, size_t current_len, ember_tree_tx *tx);

/** Sets the value the update function writes (`data`/`len` in the transaction's format; null
 *  removes the location). An invalid value is refused here; if the function still returns true
 *  the transaction fails with that error. */
bool ember_tree_tx_set(ember_tree_tx *tx, const void *data, size_t len, ember_error *err);

/**
 * A transaction's completion, once: `error->code` is EMBER_OK when it committed or the update
 * aborted, EMBER_ERR_ABORTED after 25 lost attempts ("The transaction had too many retries"),
 * EMBER_ERR_PERMISSION_DENIED when the server's rules refused it, EMBER_ERR_CANCELLED when the
 * database closed first. `snapshot` (BORROWED for the call; NULL when the transaction failed) is
 * the location's value then. `error` is BORROWED.
 * @warning Runs on the database's event thread; may call back into the ABI. Free `ctx` here.
 */
typedef void (*ember_tree_transaction_cb)(void *ctx, const ember_error *error, bool committed,
                                          const ember_tree_snapshot *snapshot);

/** Starts a transaction at `ref` and returns at once; `done` (required) runs exactly once when
 *  this returns true, never when it returns false. `apply_locally`: each attempt raises local
 *  events at once (as a set would), else observers hear only the committed value. */
bool ember_ref_transaction(ember_ref *ref, ember_format format, bool apply_locally, ember_tree_update_fn update,
                           ember_tree_transaction_cb done, void *ctx, ember_error *err);

/** Reads the value at `ref` once (the backend when online, else what the client has, else
 *  EMBER_ERR_UNAVAILABLE), blocking the caller. OWNED buffer (ember_free), null when nothing is
 *  there; NULL on error. Refused (EMBER_ERR_FAILED_PRECONDITION) from a callback, on the event
 *  thread the answer comes through: observe a value event there instead. */
char *ember_ref_get(const ember_ref *ref, ember_format format, size_t *out_len, ember_error *err);

/* Queries: a location with one order-by, a range and a limit (docs/semantics.md 15-21). Builder
 * calls change the query in place; the first rule broken is reported by that call (and leaves the
 * query unchanged): one order-by; start, end and limit once each; equal_to excludes start and
 * end; limits positive; order_by_key bounds are strings without a key; other bounds are not
 * maps; order_by_child("") and "$key", "$value", "$priority" are errors. */

/** A query on `ref`'s location (ordered by key until told otherwise). OWNED
 *  (ember_tree_query_release); it keeps the database's handle alive. */
ember_tree_query *ember_tree_query_new(const ember_ref *ref, ember_error *err);
/** An independent copy (OWNED). NULL gives NULL. */
ember_tree_query *ember_tree_query_copy(const ember_tree_query *query);
void ember_tree_query_release(ember_tree_query *query);
/** The query's location (OWNED ref). */
ember_ref *ember_tree_query_ref(const ember_tree_query *query);

bool ember_tree_query_order_by_key(ember_tree_query *query, ember_error *err);
bool ember_tree_query_order_by_value(ember_tree_query *query, ember_error *err);
/** Orders by the value at a child path, possibly nested ("metrics/views"). */
bool ember_tree_query_order_by_child(ember_tree_query *query, const char *path, ember_error *err);
bool ember_tree_query_limit_to_first(ember_tree_query *query, int64_t n, ember_error *err);
bool ember_tree_query_limit_to_last(ember_tree_query *query, int64_t n, ember_error *err);

typedef int32_t ember_tree_bound;
enum {
    EMBER_TREE_START_AT = 0,     /* >= (value, key) */
    EMBER_TREE_START_AFTER = 1,  /* >  (without a key: skips every child with that value) */
    EMBER_TREE_END_AT = 2,       /* <= */
    EMBER_TREE_END_BEFORE = 3,   /* <  */
    EMBER_TREE_EQUAL_TO = 4      /* start_at and end_at at once */
};

/** Sets a bound: one value in `format` (null, bool, number or string) and an optional child key
 *  (NULL: none) that breaks ties among children with that value. */
bool ember_tree_query_bound(ember_tree_query *query, ember_tree_bound bound, ember_format format,
                            const void *value, size_t len, const char *key, ember_error *err);

/** Reads the query's window once (blocking, as ember_ref_get). The value's own children come in
 *  the query's order (a map, also for dense integer keys, unless ordered by key). OWNED buffer. */
char *ember_tree_query_get(const ember_tree_query *query, ember_format format, size_t *out_len, ember_error *err);

/* Observers */

typedef int32_t ember_event_type;
enum {
    EMBER_EVENT_CHILD_ADDED = 0,
    EMBER_EVENT_CHILD_REMOVED = 1,
    EMBER_EVENT_CHILD_CHANGED = 2,
    EMBER_EVENT_CHILD_MOVED = 3,
    EMBER_EVENT_VALUE = 4
};

/**
 * A tree observer's callback: `snapshot` (BORROWED for the call: ember_tree_snapshot_retain to
 * keep it) with, for child events, `prev_key`, the key of the previous sibling in the query's
 * order (NULL for the first child, for child_removed and for value events; BORROWED for the
 * call), and error == NULL. Or snapshot == NULL and the `error` that ended the observer.
 * Events for one change come in docs/semantics.md 20's order: child_removed, child_added,
 * child_moved, child_changed, then value. child_added runs once per existing child on attach.
 * @warning Runs on the database's event thread, one callback at a time. May call back into the
 * ABI (writes, observe, remove any observer including its own), but not the blocking reads
 * ember_ref_get / ember_tree_query_get.
 */
typedef void (*ember_tree_event_cb)(void *ctx, const ember_tree_snapshot *snapshot, const char *prev_key,
                                    const ember_error *error);

/** Observes one event type at `ref` (every child, by key). Returns a token (never 0) for
 *  ember_listener_remove / ember_ref_remove_observer, or 0 with err (then ctx_free is not
 *  called). ctx_free (may be NULL) runs once the observer is gone (see ember_ctx_free). */
ember_listener_token ember_ref_observe(const ember_ref *ref, ember_event_type type, ember_tree_event_cb cb,
                                       void *ctx, ember_ctx_free ctx_free, ember_error *err);
/** Observes through a query: events report changes to the query's window (a full limit window
 *  pulls the next child in when one leaves). The query is only read. */
ember_listener_token ember_tree_query_observe(const ember_tree_query *query, ember_event_type type,
                                              ember_tree_event_cb cb, void *ctx, ember_ctx_free ctx_free,
                                              ember_error *err);
/** Removes the observer `token` if it observes `ref`'s location (any query there); else nothing
 *  (Firebase's removeObserver(withHandle:)). ember_listener_remove(token) removes it anywhere.
 *  Both are idempotent; when they return the callback is not running and never runs again. */
void ember_ref_remove_observer(const ember_ref *ref, ember_listener_token token);
/** Removes every observer at `ref`'s location, of any query, but not those on child locations. */
void ember_ref_remove_all_observers(const ember_ref *ref);
/** Removes the observers of this query (same location and parameters) only. */
void ember_tree_query_remove_all_observers(const ember_tree_query *query);

/* Tree snapshots (reference counted) */

ember_tree_snapshot *ember_tree_snapshot_retain(const ember_tree_snapshot *snapshot);
void ember_tree_snapshot_release(const ember_tree_snapshot *snapshot);
/** The location's key, NULL at the root. BORROWED (valid while the snapshot lives). */
const char *ember_tree_snapshot_key(const ember_tree_snapshot *snapshot);
/** Whether anything is at the location (false: the value is null). */
bool ember_tree_snapshot_exists(const ember_tree_snapshot *snapshot);
/** Number of direct children (0 for a leaf or null). */
size_t ember_tree_snapshot_child_count(const ember_tree_snapshot *snapshot);
/** The value in `format` (null when it does not exist): OWNED buffer (ember_free). A query's
 *  value snapshot lists its children in the query's order. */
char *ember_tree_snapshot_value(const ember_tree_snapshot *snapshot, ember_format format, size_t *out_len,
                                ember_error *err);
/** The i-th direct child in the snapshot's order: BORROWED from the snapshot; NULL past the end. */
const ember_tree_snapshot *ember_tree_snapshot_child_at(const ember_tree_snapshot *snapshot, size_t i);
/** The snapshot of the relative path `path` ("a/b"; may not exist). OWNED. */
ember_tree_snapshot *ember_tree_snapshot_child(const ember_tree_snapshot *snapshot, const char *path, ember_error *err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_H */
