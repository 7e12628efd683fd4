#ifndef CEMBER_MEMORY_H
#define CEMBER_MEMORY_H

/* A memory hint the Swift core needs and Swift cannot express. Internal to libember: not part of
 * the C ABI (static inline: no symbol). */

#include <stddef.h>
#include <stdint.h>

/* Asks the CPU to start loading, for reading, the cache lines (64 bytes) that hold the `bytes`
 * bytes from `p`, without waiting for them. A hint only: no load is made and an address outside
 * the process never faults, so `p` may point anywhere (a pass over many heap objects prefetches
 * the next ones' memory while it works on the current one, so that their cache misses overlap).
 * Only the lines the range touches (none for an empty range): a pass bound by memory pays for
 * every line it asks for. */
static inline void ember_prefetch_range(const void *p, size_t bytes) {
    if (bytes == 0) return;
    uintptr_t first = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + bytes;
    for (uintptr_t line = first; line < end; line += 64) __builtin_prefetch((const void *)line, 0, 3);
}

#endif
