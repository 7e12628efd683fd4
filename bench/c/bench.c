/* Ember's C-level benchmarks, printed beside their targets:
 *   1. ember_doc_set of a 5-field document (MessagePack): a call's own cost
 *   2. write -> document listener callback in C: p50 and p99
 * The targets are bench/targets.json's c.doc_set_us, c.doc_listener_p50_us and
 * c.doc_listener_p99_us (all "at most"), passed in by `make bench-c` as the environment
 * variables EMBER_TARGET_DOC_SET_US, ... (the id after "c.", upper case); a missing one prints an
 * error line and the verdict n/a. Build and run: make bench-c (release libember). Timings are
 * reported, never asserted. */
#define _POSIX_C_SOURCE 200809L
#include "ember.h"
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Prints a figure beside its target, EMBER_TARGET_<ID> (id: its bench/targets.json id after
 * "c."), and the verdict in bench/benchlib.py's words: met, MISSED, or n/a without a target. */
static void figure(const char *label, double value, const char *id, const char *unit) {
    char name[64] = "EMBER_TARGET_";
    size_t n = strlen(name);
    const char *text;
    char *end;
    double target;
    for (; *id && n + 1 < sizeof name; id++) name[n++] = (char)toupper((unsigned char)*id);
    name[n] = 0;
    text = getenv(name);
    target = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end) {
        printf("  error: no target in %s (make bench-c passes bench/targets.json's): verdict n/a\n", name);
        printf("  %-44s %10.2f %s   target n/a   n/a\n", label, value, unit);
        return;
    }
    printf("  %-44s %10.2f %s   target <= %g %s   %s\n", label, value, unit, target, unit, value <= target ? "met" : "MISSED");
}

/* {"name": "San Francisco", "state": "CA", "pop": 860000, "area": 121.4, "capital": false} */
static const unsigned char five_fields[] = {
    0x85,
    0xa4, 'n', 'a', 'm', 'e', 0xad, 'S', 'a', 'n', ' ', 'F', 'r', 'a', 'n', 'c', 'i', 's', 'c', 'o',
    0xa5, 's', 't', 'a', 't', 'e', 0xa2, 'C', 'A',
    0xa3, 'p', 'o', 'p', 0xce, 0x00, 0x0d, 0x1f, 0x40,
    0xa4, 'a', 'r', 'e', 'a', 0xcb, 0x40, 0x5e, 0x59, 0x99, 0x99, 0x99, 0x99, 0x9a,
    0xa7, 'c', 'a', 'p', 'i', 't', 'a', 'l', 0xc2};

/* A call's own cost: bursts of 500 sets (a burst's applies wait on Ember's worker, below its
 * queue bound), every write acknowledged between bursts; the median burst's time per call.
 * Then the sustained rate: n sets back to back, where the caller soon waits for the worker and
 * the backend (write, acknowledgement), so it measures the whole pipeline per write. */
static void bench_set(ember_db *db, int n) {
    enum { BURST = 500 };
    ember_error err;
    char paths[1000][16];
    int i, b, bursts = n / BURST;
    int64_t t0, *per = malloc(sizeof(int64_t) * (size_t)bursts);
    double per_call;
    for (i = 0; i < 1000; i++) snprintf(paths[i], sizeof paths[i], "cities/c%d", i);
    for (i = 0; i < 2000; i++) ember_doc_set(db, paths[i % 1000], EMBER_FORMAT_MSGPACK, five_fields, sizeof five_fields, NULL, 0, NULL, NULL, &err);
    ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    for (b = 0; b < bursts; b++) {
        t0 = now_ns();
        for (i = 0; i < BURST; i++) {
            if (!ember_doc_set(db, paths[(b * BURST + i) % 1000], EMBER_FORMAT_MSGPACK, five_fields, sizeof five_fields, NULL, 0, NULL, NULL, &err)) {
                fprintf(stderr, "set failed: %s\n", err.message);
                exit(1);
            }
        }
        per[b] = now_ns() - t0;
        ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    }
    qsort(per, (size_t)bursts, sizeof per[0], cmp64);
    figure("1. ember_doc_set, 5 fields (MessagePack)", (double)per[bursts / 2] / BURST / 1000.0, "doc_set_us", "us");
    free(per);
    t0 = now_ns();
    for (i = 0; i < n; i++) ember_doc_set(db, paths[i % 1000], EMBER_FORMAT_MSGPACK, five_fields, sizeof five_fields, NULL, 0, NULL, NULL, &err);
    per_call = (double)(now_ns() - t0) / n / 1000.0;
    ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    printf("     (sustained, %d sets back to back, diagnostic: %.2f us per call, %.2f us per write until acknowledged)\n",
           n, per_call, (double)(now_ns() - t0) / n / 1000.0);
    t0 = now_ns();
    for (i = 0; i < n / 4; i++) {
        ember_doc_set(db, paths[i % 1000], EMBER_FORMAT_JSON,
                      "{\"name\":\"San Francisco\",\"state\":\"CA\",\"pop\":860000,\"area\":121.4,\"capital\":false}",
                      EMBER_NTS, NULL, 0, NULL, NULL, &err);
    }
    printf("     (JSON variant, sustained, diagnostic: %.2f us per call)\n", (double)(now_ns() - t0) / (n / 4) / 1000.0);
    ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
}

static atomic_llong fired_at;
static atomic_int fired;

static void on_doc(void *ctx, const ember_document *doc, const ember_error *error) {
    (void)ctx; (void)doc; (void)error;
    atomic_store(&fired_at, now_ns());
    atomic_fetch_add(&fired, 1);
}

static void bench_listener(ember_db *db, int n) {
    ember_error err;
    int64_t *lat = malloc(sizeof(int64_t) * (size_t)n);
    ember_listener_token t;
    unsigned char doc[sizeof five_fields];
    int i, seen;
    int64_t deadline;
    memcpy(doc, five_fields, sizeof doc);
    t = ember_doc_listen(db, "lat/doc", 0, on_doc, NULL, NULL, &err);
    while (atomic_load(&fired) == 0) {}
    for (i = -1000; i < n; i++) {
        int64_t t0;
        seen = atomic_load(&fired);
        /* A new pop each time: writing identical content raises no event. */
        doc[35] = (unsigned char)(i >> 8);
        doc[36] = (unsigned char)i;
        t0 = now_ns();
        ember_doc_set(db, "lat/doc", EMBER_FORMAT_MSGPACK, doc, sizeof doc, NULL, 0, NULL, NULL, &err);
        deadline = t0 + 1000000000;
        while (atomic_load(&fired) == seen) {
            if (now_ns() > deadline) { fprintf(stderr, "no callback within 1 s (iteration %d)\n", i); exit(1); }
        }
        if (i >= 0) lat[i] = atomic_load(&fired_at) - t0;
        if (i % 64 == 0) ember_db_wait_for_pending_writes(db, NULL, NULL, &err);
    }
    qsort(lat, (size_t)n, sizeof lat[0], cmp64);
    figure("2. write -> document listener callback p50", lat[n / 2] / 1000.0, "doc_listener_p50_us", "us");
    figure("   write -> document listener callback p99", lat[(int)(n * 0.99)] / 1000.0, "doc_listener_p99_us", "us");
    ember_listener_remove(t);
    free(lat);
}

int main(int argc, char **argv) {
    ember_error err;
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    ember_db *db = ember_db_open(NULL, &err);
    if (!db) { fprintf(stderr, "open: %s\n", err.message); return 1; }
    printf("Ember C benchmarks (libember %s)%s\n", ember_libversion(), quick ? " (quick)" : "");
    bench_set(db, quick ? 20000 : 200000);
    bench_listener(db, quick ? 2000 : 20000);
    ember_db_release(db);
    return ember_instance_count() == 0 ? 0 : 1;
}
