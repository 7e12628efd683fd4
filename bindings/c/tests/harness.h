/* A tiny assert harness for the C tests of libember: CHECK / CHECK_OK / CHECK_ERR, a latch for
 * waiting on callbacks, and helpers. Each area file defines run_<area>(); main.c runs them. */
#ifndef EMBER_TEST_HARNESS_H
#define EMBER_TEST_HARNESS_H

#include "ember.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int test_failures;
extern int test_checks;
extern const char *test_current;

#define CHECK(cond) do { test_checks++; if (!(cond)) { test_failures++; \
    fprintf(stderr, "FAIL %s:%d [%s]: %s\n", __FILE__, __LINE__, test_current, #cond); } } while (0)
#define CHECK_OK(err) do { test_checks++; if ((err).code != EMBER_OK) { test_failures++; \
    fprintf(stderr, "FAIL %s:%d [%s]: error %d %s\n", __FILE__, __LINE__, test_current, (int)(err).code, (err).message); } } while (0)
#define CHECK_ERR(err, expected) do { test_checks++; if ((err).code != (expected)) { test_failures++; \
    fprintf(stderr, "FAIL %s:%d [%s]: expected code %d, got %d (%s)\n", __FILE__, __LINE__, test_current, \
            (int)(expected), (int)(err).code, (err).message); } else if ((err).message[0] == '\0') { test_failures++; \
    fprintf(stderr, "FAIL %s:%d [%s]: error %d without a message\n", __FILE__, __LINE__, test_current, (int)(expected)); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); test_checks++; \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) { test_failures++; \
    fprintf(stderr, "FAIL %s:%d [%s]: \"%s\" != \"%s\"\n", __FILE__, __LINE__, test_current, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

/* Every test ends with the instance counter back at zero. */
#define RUN(fn) do { test_current = #fn; if (test_selected(#fn)) { fn(); test_expect_no_instances(); } } while (0)

int test_selected(const char *name);
/* Whether this libember has remote support (settings.host); a core-only build
 * (EMBER_CORE_ONLY=1, make test-c-core) refuses every host with EMBER_ERR_UNIMPLEMENTED. */
extern int remote_support;
void test_expect_no_instances(void);

/* A counter with a condition variable, for callbacks on the event thread. */
typedef struct latch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    int last_code;
    char last_message[EMBER_ERROR_MESSAGE_SIZE];
} latch;

void latch_init(latch *l);
void latch_destroy(latch *l);
void latch_add(latch *l, int code, const char *message);
/* Waits until count >= n (at most 10 s); returns whether it got there. */
int latch_wait(latch *l, int n);
/* The same with another bound, for waits on a lot of work (slow under valgrind). */
int latch_wait_for(latch *l, int n, int seconds);
int latch_count(latch *l);
/* An ember_write_cb whose ctx is a latch. */
void latch_write_cb(void *ctx, const ember_error *error);

/* JSON of a document's data / a field (static buffer, valid until the next call). */
const char *doc_json(const ember_document *doc);
const char *field_json(const ember_document *doc, const char *field);
/* Sets a document from JSON and checks it succeeded. */
void set_json(ember_db *db, const char *path, const char *json);
ember_db *open_db(void);
void sleep_ms(int ms);

void run_basics(void);
void run_db(void);
void run_documents(void);
void run_batches(void);
void run_transactions(void);
void run_queries(void);
void run_listeners(void);
void run_threads(void);
void run_storage(void);
void run_tree(void);
void run_boundary(void);
void run_events(void);
void run_fidelity(void);
void run_rules(void);
void run_remote(void);

#endif
