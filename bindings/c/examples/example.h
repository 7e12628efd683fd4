/* Helpers shared by the C examples (bindings/c/examples): a counter of listener events the main
 * thread waits on with a bounded wait, the seed's example cities, and printing helpers.
 *
 * The examples are the Firestore samples of ../shared/seeds translated to C over ember.h. Their
 * output is compared with the *.expected file beside each one (`make test-c-examples`), so a
 * program prints only what is deterministic: callbacks print as they run on Ember's event
 * thread, and the main thread waits for each expected event before its next step.
 */
#ifndef EMBER_EXAMPLE_H
#define EMBER_EXAMPLE_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "ember.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- events: callbacks count, the main thread waits (at most 5 s per wait) */

static pthread_mutex_t example_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t example_cv = PTHREAD_COND_INITIALIZER;
static int example_events = 0;

/* Called at the end of every callback. */
static inline void event_seen(void) {
    pthread_mutex_lock(&example_mu);
    example_events++;
    pthread_cond_broadcast(&example_cv);
    pthread_mutex_unlock(&example_mu);
}

/* Waits until `n` events in all have been seen; says so on stdout when it times out (which then
 * differs from the expected output). */
static inline void wait_events(int n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    pthread_mutex_lock(&example_mu);
    while (example_events < n) {
        if (pthread_cond_timedwait(&example_cv, &example_mu, &ts) != 0) break;
    }
    if (example_events < n) printf("(timed out waiting for event %d; saw %d)\n", n, example_events);
    pthread_mutex_unlock(&example_mu);
    fflush(stdout);
}

/* Gives an unexpected event the time to show up (and break the expected output). */
static inline void settle(void) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* ---- errors */

/* Exits with a message when `err` holds an error. */
static inline void check(const ember_error *err, const char *what) {
    if (err->code != EMBER_OK) {
        printf("%s failed: %s: %s\n", what, ember_error_code_name(err->code), err->message);
        exit(1);
    }
}

/* ---- writes and reads */

static inline void set_json(ember_db *db, const char *path, const char *json) {
    ember_error err;
    ember_doc_set(db, path, EMBER_FORMAT_JSON, json, EMBER_NTS, NULL, 0, NULL, NULL, &err);
    check(&err, "set");
}

/* Prints the document's data as JSON (Ember's exact notation). */
static inline void print_data(const ember_document *doc) {
    ember_error err;
    char *json = ember_document_data(doc, EMBER_FORMAT_JSON, NULL, &err);
    printf("%s", json ? json : "null");
    ember_free(json);
}

/* Prints one field as its JSON value ("San Francisco" with quotes), or null when absent. */
static inline void print_field(const ember_document *doc, const char *field) {
    char *json = ember_document_get(doc, field, EMBER_FORMAT_JSON, NULL, NULL);
    printf("%s", json ? json : "null");
    ember_free(json);
}

/* Prints a string field without its quotes (as string_value() reads it), or null. */
static inline void print_string(const ember_document *doc, const char *field) {
    char *json = ember_document_get(doc, field, EMBER_FORMAT_JSON, NULL, NULL);
    size_t n = json ? strlen(json) : 0;
    if (n >= 2 && json[0] == '"' && json[n - 1] == '"') printf("%.*s", (int)(n - 2), json + 1);
    else printf("%s", json ? json : "null");
    ember_free(json);
}

/* The example data of the Firestore pages: five cities. */
static inline void add_cities(ember_db *db) {
    set_json(db, "cities/SF", "{\"name\":\"San Francisco\",\"state\":\"CA\",\"country\":\"USA\","
                              "\"capital\":false,\"population\":860000,\"regions\":[\"west_coast\",\"norcal\"]}");
    set_json(db, "cities/LA", "{\"name\":\"Los Angeles\",\"state\":\"CA\",\"country\":\"USA\","
                              "\"capital\":false,\"population\":3900000,\"regions\":[\"west_coast\",\"socal\"]}");
    set_json(db, "cities/DC", "{\"name\":\"Washington D.C.\",\"state\":null,\"country\":\"USA\","
                              "\"capital\":true,\"population\":680000,\"regions\":[\"east_coast\"]}");
    set_json(db, "cities/TOK", "{\"name\":\"Tokyo\",\"state\":null,\"country\":\"Japan\","
                               "\"capital\":true,\"population\":9000000,\"regions\":[\"kanto\",\"honshu\"]}");
    set_json(db, "cities/BJ", "{\"name\":\"Beijing\",\"state\":null,\"country\":\"China\","
                              "\"capital\":true,\"population\":21500000,\"regions\":[\"jingjinji\",\"hebei\"]}");
}

/* Opens an in-memory database, exiting on failure. */
static inline ember_db *open_db(void) {
    ember_error err;
    ember_db *db = ember_db_open(NULL, &err);
    check(&err, "ember_db_open");
    return db;
}

/* Waits until the backend has every write (so the next step starts from a quiet database). */
static inline void wait_writes(ember_db *db) {
    ember_error err;
    ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    check(&err, "ember_db_wait_for_pending_writes");
}

/* Closes and releases the database, then checks that no Ember object is left. */
static inline int finish(ember_db *db) {
    int i;
    ember_db_release(db);
    for (i = 0; i < 200 && ember_instance_count() != 0; i++) settle();
    if (ember_instance_count() != 0) {
        printf("leak: %lld Ember objects alive\n", (long long)ember_instance_count());
        return 1;
    }
    fflush(stdout);
    return 0;
}

#endif
