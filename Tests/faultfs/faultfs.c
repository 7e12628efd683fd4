/* faultfs: an LD_PRELOAD shim for storage-failure tests (issue 10, item 1).
 *
 * While the file $EMBER_FAULT_DIR/.fault exists, write(), pwrite(), pwrite64(), fsync() and
 * fdatasync() on any file under $EMBER_FAULT_DIR fail with the errno .fault names: "EIO" (a
 * failing device), "EROFS" (a file system remounted read-only), else ENOSPC (a full disk);
 * statvfs() of a path under the directory then reports a read-only or full file system. Everything else passes through. The test process creates and
 * removes .fault to turn the fault on and off while the program under test runs.
 *
 * Build: cc -shared -fPIC -O1 -o faultfs.so faultfs.c -ldl
 * Use:   LD_PRELOAD=./faultfs.so EMBER_FAULT_DIR=/tmp/dir program
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

/* The errno named by $EMBER_FAULT_DIR/.fault, or 0 when there is none. */
static int fault_kind(void) {
    const char *dir = getenv("EMBER_FAULT_DIR");
    if (dir == NULL || dir[0] == '\0') return 0;
    char flag[4096];
    snprintf(flag, sizeof flag, "%s/.fault", dir);
    int ffd = open(flag, O_RDONLY | O_CLOEXEC);
    if (ffd < 0) return 0;
    char kind[8] = {0};
    ssize_t r = read(ffd, kind, sizeof kind - 1);
    close(ffd);
    if (r >= 5 && strncmp(kind, "EROFS", 5) == 0) return EROFS;
    if (r >= 3 && strncmp(kind, "EIO", 3) == 0) return EIO;
    return ENOSPC;
}

/* The errno to fail an operation on `fd` with, or 0 to let it through. */
static int fault_for(int fd) {
    const char *dir = getenv("EMBER_FAULT_DIR");
    if (dir == NULL || dir[0] == '\0') return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    size_t dl = strlen(dir);
    if (strncmp(target, dir, dl) != 0 || target[dl] != '/') return 0;
    char flag[4096];
    snprintf(flag, sizeof flag, "%s/.fault", dir);
    if (strcmp(target, flag) == 0) return 0;
    return fault_kind();
}

#define NEXT(name) static __typeof__(name) *real; if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t count) {
    NEXT(write);
    int e = fault_for(fd);
    if (e) { errno = e; return -1; }
    return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t off) {
    NEXT(pwrite);
    int e = fault_for(fd);
    if (e) { errno = e; return -1; }
    return real(fd, buf, count, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t off) {
    NEXT(pwrite64);
    int e = fault_for(fd);
    if (e) { errno = e; return -1; }
    return real(fd, buf, count, off);
}

int fsync(int fd) {
    NEXT(fsync);
    int e = fault_for(fd);
    if (e) { errno = e; return -1; }
    return real(fd);
}

int fdatasync(int fd) {
    NEXT(fdatasync);
    int e = fault_for(fd);
    if (e) { errno = e; return -1; }
    return real(fd);
}

/* The file system under $EMBER_FAULT_DIR looks the part: read-only under EROFS, no space left
 * under ENOSPC (a program that asks statvfs why a write failed gets a consistent answer). */
static void fake_statvfs(const char *path, struct statvfs *buf) {
    const char *dir = getenv("EMBER_FAULT_DIR");
    if (dir == NULL || dir[0] == '\0' || path == NULL || strncmp(path, dir, strlen(dir)) != 0) return;
    int kind = fault_kind();
    if (kind == EROFS) buf->f_flag |= ST_RDONLY;
    if (kind == ENOSPC) { buf->f_bavail = 0; buf->f_bfree = 0; }
}

int statvfs(const char *path, struct statvfs *buf) {
    NEXT(statvfs);
    int rc = real(path, buf);
    if (rc == 0) fake_statvfs(path, buf);
    return rc;
}
