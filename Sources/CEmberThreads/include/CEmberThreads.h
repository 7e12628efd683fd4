#ifndef CEMBER_THREADS_H
#define CEMBER_THREADS_H

/* What the Swift core needs from Linux's scheduler that Glibc's Swift module does not expose
 * (these calls need _GNU_SOURCE). Internal to libember: not part of the C ABI. */

/* The CPU the calling thread runs on now, or -1 where the system cannot say. Cheap (the vDSO). */
int ember_current_cpu(void);

/* Moves thread `tid` (a thread of this process; 0: the calling thread) off `cpu` when its
 * affinity allows another CPU, and leaves its affinity as it found it: the mask without `cpu`
 * makes the kernel move the thread at once (a sleeping thread is placed on an allowed CPU, where
 * it wakes), and restoring the mask does not move it back. Returns 1 when the mask was changed
 * and restored, 0 when `cpu` is not one the thread may use, the only one it may use, or the calls
 * failed. Three system calls. */
int ember_move_off_cpu(int tid, int cpu);

/* The calling thread's kernel id (for ember_move_off_cpu). */
int ember_thread_id(void);

/* The first 64 CPUs of thread `tid`'s affinity as a bit mask (0: the calling thread); 0 when the
 * call failed. For tests and diagnosis. */
unsigned long long ember_affinity(int tid);

/* Sets thread `tid`'s affinity to the CPUs of `mask` (the first 64); 0 on success, -1 on error.
 * For tests. */
int ember_set_affinity(int tid, unsigned long long mask);

#endif
