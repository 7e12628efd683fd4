/* Shared by the libFuzzer targets of libember (bindings/c/fuzz): one database opened once per
 * process, a trap helper, and a byte reader for turning fuzz input into calls.
 *
 * A finding is: a crash or sanitizer report inside libember, a call that fails without an error
 * code and message, a broken round trip, or Ember objects left alive after an input. */
#ifndef EMBER_FUZZ_H
#define EMBER_FUZZ_H

#include "ember.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ember_db *fuzz_db;
static int64_t fuzz_baseline;

/* Stops the run with a message (libFuzzer saves the input as a crash). */
#define FUZZ_ASSERT(cond, what) do { if (!(cond)) { \
    fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, __FILE__, __LINE__); abort(); } } while (0)

/* A failing call must say why. */
static inline void fuzz_expect_error(const ember_error *err) {
    FUZZ_ASSERT(err->code != EMBER_OK, "a call failed with EMBER_OK");
    FUZZ_ASSERT(err->message[0] != '\0', "an error without a message");
    FUZZ_ASSERT(strlen(err->message) < EMBER_ERROR_MESSAGE_SIZE, "unterminated message");
}

/* The database every input uses: opened once, with a few documents. */
static inline void fuzz_open(void) {
    ember_error err;
    fuzz_db = ember_db_open(NULL, &err);
    FUZZ_ASSERT(fuzz_db != NULL, "ember_db_open");
    ember_doc_set(fuzz_db, "c/a", EMBER_FORMAT_JSON, "{\"n\":1,\"s\":\"x\",\"m\":{\"k\":[1,2]},\"t\":true}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    ember_doc_set(fuzz_db, "c/b", EMBER_FORMAT_JSON, "{\"n\":2.5,\"s\":\"y\",\"a\":[\"x\",\"y\"]}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    ember_doc_set(fuzz_db, "c/a/sub/z", EMBER_FORMAT_JSON, "{\"n\":null}", EMBER_NTS, NULL, 0, NULL, NULL, &err);
    ember_db_wait_for_pending_writes(fuzz_db, NULL, NULL, &err);
    fuzz_baseline = ember_instance_count();
}

/* Objects made for one input are released by its end (listeners are not used by the targets
 * that call this). */
static inline void fuzz_expect_no_new_objects(void) {
    FUZZ_ASSERT(ember_instance_count() == fuzz_baseline, "Ember objects left alive after an input");
}

/* Reads the input piece by piece; past the end it yields zeros / empty strings. */
typedef struct reader { const uint8_t *p; size_t n; } reader;

static inline uint8_t rd_byte(reader *r) {
    uint8_t b;
    if (r->n == 0) return 0;
    b = *r->p++;
    r->n--;
    return b;
}

/* A length-prefixed chunk (length byte, then up to that many bytes), copied and NUL-terminated
 * into buf (which holds 257 bytes); returns its length. */
static inline size_t rd_chunk(reader *r, char *buf) {
    size_t len = rd_byte(r);
    if (len > r->n) len = r->n;
    memcpy(buf, r->p, len);
    buf[len] = '\0';
    r->p += len;
    r->n -= len;
    return len;
}

#endif
