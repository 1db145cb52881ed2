/* tests/store/fenced.h -- shared helpers for the store test suites (Redis, PostgreSQL,
 * MemoryStore). Header-only, every function `static`, POSIX only. Test code, not shipped.
 *
 * HOW TO USE
 *   #define _POSIX_C_SOURCE 200809L      (before ANY include; the helpers need POSIX)
 *   #include "tests/store/fenced.h"
 *
 *   1. Checks.   ST_CHECK(cond, "fmt", ...) counts one pass or one fail and prints the
 *                failures with file:line. End main() with `return st_report();`, which
 *                prints the mandatory last line "N passed, N failed" and answers the exit
 *                code (0 only when nothing failed). Child processes do not share the
 *                counters: a child answers through its exit code (see st_child below).
 *
 *   2. Time.     st_now_ms() (CLOCK_MONOTONIC), st_sleep_ms(ms).
 *                st_case("name", seconds): a per-case time limit (issue 37). Until the next
 *                    st_case (or st_case("", 0)), a case that runs past `seconds` prints
 *                    "TIMEOUT: case NAME ran past its N s bound" and the summary line (one
 *                    more failed), SIGKILLs the children st_fork made, removes the dir
 *                    in st__case_rmdir (when set), and exits 124.
 *                st_ignore_sigpipe(): call it first in main(). A write to a dead child's pipe
 *                or to a socket the server closed (hiredis 0.14 uses plain write()) must come
 *                back as EPIPE, not kill the test before it prints its summary line.
 *
 *   3. Processes.
 *                st_child c; st_fork(&c, fn, arg);   runs `int fn(void *arg, int in, int out)`
 *                    in a forked child with two pipes (in: parent -> child, out: child ->
 *                    parent); the child _exit()s with fn's answer (0 = the child's checks
 *                    passed). Make every connection (hiredis, libpq) INSIDE the child.
 *                st_send(fd, 'x') / st_recv(fd, timeout_ms) exchange one byte (-1 = timeout/EOF).
 *                st_join(&c, timeout_ms) waits; answers the exit code, or -1 when it was
 *                    killed by a signal or timed out (then it is SIGKILLed and reaped).
 *                st_free_port()  a free TCP port on 127.0.0.1 (bind port 0, read it, close).
 *                st_spawn(argv, logfile, pidfile) fork+exec a server in the background with
 *                    stdout/stderr to logfile; when pidfile is non-NULL its pid is written
 *                    there so a shell `trap` can kill it even if this process dies.
 *                st_wait_port(port, timeout_ms)  1 once 127.0.0.1:port accepts a connection.
 *                st_stop(pid, sig, timeout_ms)   send sig (SIGTERM/SIGKILL), wait, escalate
 *                    to SIGKILL after the timeout; answers 0 once reaped.
 *                st_tmpdir(buf, n, tag)  mkdtemp under $LDL_TEST_DIR (else $TMPDIR, else /tmp).
 *
 *   4. The fenced resource: a file that plays the downstream system a lock protects.
 *                fenced_create(path)              fresh, zeroed resource.
 *                fenced_read(path, fence, &v)     1 = accepted (fence >= highest seen; the
 *                                                 fence becomes the highest seen), 0 = rejected
 *                                                 as stale, -1 = I/O error.
 *                fenced_write(path, fence, v)     1 = accepted: fence >= highest seen AND
 *                                                 strictly above the last accepted write's
 *                                                 fence; the value is stored, `writes` counts
 *                                                 it and the fence is appended to the log.
 *                                                 0 = rejected (counted in `rejected`).
 *                fenced_enter(path) / fenced_leave(path)  bracket a critical section; the
 *                                                 resource records the highest number of
 *                                                 processes ever inside at once (max_inside):
 *                                                 mutual exclusion means max_inside == 1.
 *                fenced_completed(path)           count one critical section that completed
 *                                                 while its lock was still held.
 *                fenced_stats_get(path, &st)      read every counter.
 *                fenced_log(path, out, max, &n)   the accepted write fences, in order.
 *                Every call takes an exclusive fcntl() lock on the file for its own duration
 *                only, so a read-modify-write done as fenced_read + fenced_write is NOT
 *                atomic by itself: only the lease (and the fence) make it safe. That is the
 *                point: lost updates show up as value != writes or as rejections.
 *
 *   Typical contention worker:
 *       if (ldl_lock_acquire(&lk) == 1) {
 *           int64_t f = ldl_lock_fencing_token(&lk), v;
 *           fenced_enter(p);
 *           if (fenced_read(p, f, &v) == 1 && fenced_write(p, f, v + 1) == 1 && ldl_lock_poll(&lk) == 1)
 *               fenced_completed(p);
 *           fenced_leave(p);
 *           ldl_lock_release(&lk);
 *       }
 *   and the parent asserts: value == writes == completed, rejected == 0, max_inside == 1,
 *   log strictly increasing.
 */
#ifndef LDL_TESTS_STORE_FENCED_H
#define LDL_TESTS_STORE_FENCED_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#  if !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#    error "define _POSIX_C_SOURCE 200809L before any #include to use tests/store/fenced.h"
#  endif
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#if defined(__GNUC__) || defined(__clang__)
#  define ST__UNUSED __attribute__((unused))
#else
#  define ST__UNUSED
#endif
#define ST_FN static ST__UNUSED

/* ------------------------------------------------------------------ checks */
static int st__passed = 0, st__failed = 0;

ST_FN int st__check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) { st__passed++; return 1; }
    st__failed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    return 0;
}
/* ST_CHECK(cond, "fmt", ...): printf-style message printed on failure; answers cond's truth. */
#define ST_CHECK(cond, ...) st__check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

ST_FN int st_failed(void) { return st__failed; }

ST_FN int st_report(void)
{
    fflush(stderr);
    printf("%d passed, %d failed\n", st__passed, st__failed);
    fflush(stdout);
    return st__failed ? 1 : 0;
}

/* ------------------------------------------------------------------ per-case time limit */
#define ST__KIDS 64
static pid_t st__kids[ST__KIDS];             /* st_fork's live children */
static const char *st__case_name = "";
static const char *st__case_rmdir;           /* a temp dir to remove on a timeout (or NULL) */
static unsigned st__case_s;

ST_FN void st__put(const char *p) { while (*p) { if (write(2, p, 1) < 0) return; p++; } }
ST_FN void st__put_u(unsigned long v)
{
    char b[24];
    int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 23);
    while (n > 0) { char c = b[--n]; if (write(2, &c, 1) < 0) return; }
}

/* SIGALRM: only async-signal-safe calls */
ST_FN void st__case_timeout(int sig)
{
    int k;
    (void)sig;
    st__put("TIMEOUT: case "); st__put(st__case_name); st__put(" ran past its ");
    st__put_u(st__case_s); st__put(" s bound\n");
    for (k = 0; k < ST__KIDS; k++)
        if (st__kids[k] > 0) { kill(st__kids[k], SIGKILL); kill(st__kids[k], SIGCONT); }
    if (st__case_rmdir && st__case_rmdir[0]) {
        pid_t p = fork();
        if (p == 0) {
            char *av[4], *ev[1];
            av[0] = (char *)"rm"; av[1] = (char *)"-rf"; av[2] = (char *)st__case_rmdir; av[3] = NULL;
            ev[0] = NULL;
            execve("/bin/rm", av, ev);
            _exit(127);
        }
        if (p > 0) { int status; waitpid(p, &status, 0); }
    }
    {
        const char *p;
        char line[64];
        int n = 0;
        unsigned long v[2];
        int i;
        v[0] = (unsigned long)st__passed; v[1] = (unsigned long)st__failed + 1;
        for (i = 0; i < 2; i++) {
            char b[24]; int m = 0; unsigned long x = v[i];
            do { b[m++] = (char)('0' + x % 10); x /= 10; } while (x && m < 23);
            while (m > 0) line[n++] = b[--m];
            for (p = i == 0 ? " passed, " : " failed\n"; *p; p++) line[n++] = *p;
        }
        if (write(1, line, (size_t)n) < 0) { }
    }
    _exit(124);
}

ST_FN void st_case(const char *name, unsigned seconds)
{
    struct sigaction sa;
    alarm(0);
    st__case_name = name ? name : "";
    st__case_s = seconds;
    if (!seconds) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = st__case_timeout;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

/* ------------------------------------------------------------------ time */
ST_FN uint64_t st_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

ST_FN void st_sleep_ms(uint32_t ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) { }
}

ST_FN void st_ignore_sigpipe(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}

/* ------------------------------------------------------------------ processes */
typedef struct st_child {
    pid_t pid;
    int   to_child;    /* parent writes here; the child reads its `in` */
    int   from_child;  /* parent reads here; the child writes its `out` */
} st_child;

ST_FN int st_fork(st_child *c, int (*fn)(void *arg, int in, int out), void *arg)
{
    int down[2], up[2];
    pid_t pid;
    if (pipe(down) != 0) return -1;
    if (pipe(up) != 0) { close(down[0]); close(down[1]); return -1; }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) { close(down[0]); close(down[1]); close(up[0]); close(up[1]); return -1; }
    if (pid == 0) {
        int rc;
        close(down[1]);
        close(up[0]);
        rc = fn(arg, down[0], up[1]);
        fflush(stdout);
        fflush(stderr);
        _exit(rc & 0xff);
    }
    close(down[0]);
    close(up[1]);
    {
        int k;
        for (k = 0; k < ST__KIDS; k++) if (st__kids[k] <= 0) { st__kids[k] = pid; break; }
    }
    c->pid = pid;
    c->to_child = down[1];
    c->from_child = up[0];
    return 0;
}

ST_FN int st_send(int fd, char byte)
{
    ssize_t n;
    do { n = write(fd, &byte, 1); } while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

/* one byte, or -1 on timeout / EOF / error */
ST_FN int st_recv(int fd, uint32_t timeout_ms)
{
    uint64_t end = st_now_ms() + timeout_ms;
    for (;;) {
        struct pollfd p;
        uint64_t now = st_now_ms();
        int r;
        if (now >= end) return -1;
        p.fd = fd; p.events = POLLIN; p.revents = 0;
        r = poll(&p, 1, (int)(end - now));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        {
            unsigned char b;
            ssize_t n = read(fd, &b, 1);
            if (n < 0 && errno == EINTR) continue;
            return n == 1 ? (int)b : -1;
        }
    }
}

/* wait up to timeout_ms for pid; 1 reaped (status in *st), 0 still running */
ST_FN int st__reap(pid_t pid, uint32_t timeout_ms, int *status)
{
    uint64_t end = st_now_ms() + timeout_ms;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 1;
        if (r < 0 && errno != EINTR) { *status = 0; return 1; } /* not our child any more */
        if (st_now_ms() >= end) return 0;
        st_sleep_ms(5);
    }
}

ST_FN int st_join(st_child *c, uint32_t timeout_ms)
{
    int status = 0, rc;
    if (c->pid <= 0) return -1;
    if (!st__reap(c->pid, timeout_ms, &status)) {
        fprintf(stderr, "st_join: child %d timed out, killing it\n", (int)c->pid);
        kill(c->pid, SIGKILL);
        kill(c->pid, SIGCONT);
        st__reap(c->pid, 5000, &status);
        rc = -1;
    } else if (WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    } else {
        rc = -1;
    }
    {
        int k;
        for (k = 0; k < ST__KIDS; k++) if (st__kids[k] == c->pid) st__kids[k] = 0;
    }
    if (c->to_child >= 0) close(c->to_child);
    if (c->from_child >= 0) close(c->from_child);
    c->to_child = c->from_child = -1;
    c->pid = 0;
    return rc;
}

ST_FN int st_free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd < 0) return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

ST_FN int st_wait_port(int port, uint32_t timeout_ms)
{
    uint64_t end = st_now_ms() + timeout_ms;
    do {
        struct sockaddr_in a;
        int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
        if (fd < 0) return 0;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons((uint16_t)port);
        ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok) return 1;
        st_sleep_ms(10);
    } while (st_now_ms() < end);
    return 0;
}

/* fork+exec argv[0] (PATH lookup) with stdout/stderr appended to logfile; pid or -1 */
ST_FN pid_t st_spawn(char *const argv[], const char *logfile, const char *pidfile)
{
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(logfile ? logfile : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (f) { fprintf(f, "%d\n", (int)pid); fclose(f); }
    }
    return pid;
}

ST_FN int st_stop(pid_t pid, int sig, uint32_t timeout_ms)
{
    int status = 0;
    if (pid <= 0) return -1;
    kill(pid, sig);
    if (sig != SIGCONT) kill(pid, SIGCONT); /* a SIGSTOPped server must wake to die */
    if (st__reap(pid, timeout_ms, &status)) return 0;
    kill(pid, SIGKILL);
    return st__reap(pid, 5000, &status) ? 0 : -1;
}

ST_FN int st_tmpdir(char *buf, size_t n, const char *tag)
{
    const char *base = getenv("LDL_TEST_DIR");
    if (!base || !*base) base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    if ((size_t)snprintf(buf, n, "%s/%s.XXXXXX", base, tag) >= n) return -1;
    return mkdtemp(buf) ? 0 : -1;
}

/* ------------------------------------------------------------------ fenced resource */
typedef struct fenced_stats {
    int64_t high;        /* highest fence ever accepted (read or write) */
    int64_t last_write;  /* fence of the last accepted write */
    int64_t value;       /* the protected value */
    int64_t writes;      /* accepted writes (= entries in the log) */
    int64_t rejected;    /* reads + writes refused as stale */
    int64_t inside;      /* processes between enter and leave now */
    int64_t max_inside;  /* the most ever inside at once */
    int64_t completed;   /* critical sections that completed while held */
} fenced_stats;

#define FENCED__NFIELDS 8
#define FENCED__HDR ((off_t)(FENCED__NFIELDS * sizeof(int64_t)))

ST_FN int fenced__rw(int fd, int write_it, off_t off, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = write_it ? pwrite(fd, (char *)buf + done, n - done, off + (off_t)done)
                             : pread(fd, (char *)buf + done, n - done, off + (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

/* open + exclusive fcntl lock + read the header; answers the fd or -1 */
ST_FN int fenced__open(const char *path, fenced_stats *st)
{
    struct flock fl;
    int fd = open(path, O_RDWR);
    if (fd < 0) return -1;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) { close(fd); return -1; }
    }
    if (fenced__rw(fd, 0, 0, st, sizeof *st) != 0) { close(fd); return -1; }
    return fd;
}

/* write the header back (when st != NULL), unlock, close */
ST_FN int fenced__close(int fd, fenced_stats *st)
{
    int rc = 0;
    if (st && fenced__rw(fd, 1, 0, st, sizeof *st) != 0) rc = -1;
    close(fd); /* closing releases the fcntl lock */
    return rc;
}

ST_FN int fenced_create(const char *path)
{
    fenced_stats st;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    memset(&st, 0, sizeof st);
    if (fenced__rw(fd, 1, 0, &st, sizeof st) != 0) { close(fd); return -1; }
    close(fd);
    return 0;
}

ST_FN int fenced_read(const char *path, int64_t fence, int64_t *value)
{
    fenced_stats st;
    int fd = fenced__open(path, &st);
    if (fd < 0) return -1;
    if (fence < 1 || fence < st.high) {
        st.rejected++;
        return fenced__close(fd, &st) == 0 ? 0 : -1;
    }
    st.high = fence;
    *value = st.value;
    return fenced__close(fd, &st) == 0 ? 1 : -1;
}

ST_FN int fenced_write(const char *path, int64_t fence, int64_t value)
{
    fenced_stats st;
    int fd = fenced__open(path, &st);
    if (fd < 0) return -1;
    if (fence < 1 || fence < st.high || fence <= st.last_write) {
        st.rejected++;
        return fenced__close(fd, &st) == 0 ? 0 : -1;
    }
    if (fenced__rw(fd, 1, FENCED__HDR + (off_t)(st.writes * (int64_t)sizeof(int64_t)),
                   &fence, sizeof fence) != 0) {
        fenced__close(fd, NULL);
        return -1;
    }
    st.high = fence;
    st.last_write = fence;
    st.value = value;
    st.writes++;
    return fenced__close(fd, &st) == 0 ? 1 : -1;
}

ST_FN int fenced__bump(const char *path, int which)
{
    fenced_stats st;
    int fd = fenced__open(path, &st);
    if (fd < 0) return -1;
    if (which == 0) { if (++st.inside > st.max_inside) st.max_inside = st.inside; }
    else if (which == 1) st.inside--;
    else st.completed++;
    return fenced__close(fd, &st);
}
ST_FN int fenced_enter(const char *path)     { return fenced__bump(path, 0); }
ST_FN int fenced_leave(const char *path)     { return fenced__bump(path, 1); }
ST_FN int fenced_completed(const char *path) { return fenced__bump(path, 2); }

ST_FN int fenced_stats_get(const char *path, fenced_stats *st)
{
    int fd = fenced__open(path, st);
    if (fd < 0) return -1;
    return fenced__close(fd, NULL);
}

ST_FN int fenced_log(const char *path, int64_t *out, size_t max, size_t *n)
{
    fenced_stats st;
    size_t i, cnt;
    int fd = fenced__open(path, &st);
    if (fd < 0) return -1;
    cnt = (size_t)st.writes;
    if (cnt > max) cnt = max;
    for (i = 0; i < cnt; i++) {
        if (fenced__rw(fd, 0, FENCED__HDR + (off_t)(i * sizeof(int64_t)), &out[i], sizeof out[i]) != 0) {
            fenced__close(fd, NULL);
            return -1;
        }
    }
    *n = cnt;
    return fenced__close(fd, NULL);
}

/* 1 when the log is strictly increasing and every entry is >= 1 */
ST_FN int fenced_log_increasing(const int64_t *log, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (log[i] < 1) return 0;
        if (i > 0 && log[i] <= log[i - 1]) return 0;
    }
    return 1;
}

#endif /* LDL_TESTS_STORE_FENCED_H */
