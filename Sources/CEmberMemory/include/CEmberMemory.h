#ifndef CEMBER_MEMORY_H
#define CEMBER_MEMORY_H

/* A memory hint the Swift core needs and Swift cannot express. Internal to libember: not part of
 * the C ABI (static inline: no symbol). */

/* Asks the CPU to start loading, for reading, the cache lines (64 bytes) that hold the `bytes`
 * bytes from `p`, without waiting for them. A hint only: no load is made and an address outside
 * the process never faults, so `p` may point anywhere (a pass over many heap objects prefetches
 * the next ones' memory while it works on the current one, so that their cache misses overlap).
 * Only the lines the range touches: a pass bound by memory pays for every line it asks for. */
static inline void ember_prefetch_range(const void *p, long bytes) {
    unsigned long first = (unsigned long)p & ~63UL, end = (unsigned long)p + (unsigned long)bytes;
    for (unsigned long line = first; line < end; line += 64) __builtin_prefetch((const void *)line, 0, 3);
}

#endif
