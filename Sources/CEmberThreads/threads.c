#define _GNU_SOURCE
#include "CEmberThreads.h"

#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#include <sys/syscall.h>

int ember_current_cpu(void) {
    return sched_getcpu();
}

int ember_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

int ember_move_off_cpu(int tid, int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    cpu_set_t original, others;
    if (sched_getaffinity(tid, sizeof original, &original) != 0) return 0;
    others = original;
    CPU_CLR(cpu, &others);
    if (!CPU_ISSET(cpu, &original) || CPU_COUNT(&others) == 0) return 0;
    if (sched_setaffinity(tid, sizeof others, &others) != 0) return 0;
    if (sched_setaffinity(tid, sizeof original, &original) != 0) {
        /* The allowed CPUs changed meanwhile (a cpuset, a CPU taken offline): rather than leave
         * the thread pinned to `others`, give it the caller's own set. */
        cpu_set_t mine;
        if (sched_getaffinity(0, sizeof mine, &mine) == 0) (void)sched_setaffinity(tid, sizeof mine, &mine);
    }
    return 1;
}

unsigned long long ember_affinity(int tid) {
    cpu_set_t set;
    if (sched_getaffinity(tid, sizeof set, &set) != 0) return 0;
    unsigned long long mask = 0;
    for (int cpu = 0; cpu < 64; cpu++) if (CPU_ISSET(cpu, &set)) mask |= 1ULL << cpu;
    return mask;
}

int ember_set_affinity(int tid, unsigned long long mask) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < 64; cpu++) if (mask & (1ULL << cpu)) CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0 ? 0 : -1;
}

#else
int ember_current_cpu(void) { return -1; }
int ember_thread_id(void) { return 0; }
int ember_move_off_cpu(int tid, int cpu) { (void)tid; (void)cpu; return 0; }
unsigned long long ember_affinity(int tid) { (void)tid; return 0; }
int ember_set_affinity(int tid, unsigned long long mask) { (void)tid; (void)mask; return -1; }
#endif
