/* LD_PRELOAD shim for scripts/bench --store: counts fsync(2) and fdatasync(2) calls of the
 * process, and the time they took, for fsyncs_now() to read through ctypes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic long long calls, nanos;

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int timed(int (*real)(int), int fd) {
    long long started = now();
    int result = real(fd);
    atomic_fetch_add(&nanos, now() - started);
    atomic_fetch_add(&calls, 1);
    return result;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return timed(real, fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return timed(real, fd);
}

long long fsync_calls(void) { return calls; }
long long fsync_nanos(void) { return nanos; }
