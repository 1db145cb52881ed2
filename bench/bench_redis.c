/* bench_redis.c HOST PORT MODE ... - the Redis rows of `make bench` (bench/redis.sh).
   Synchronous view (one ldl_lock, one blocking hiredis client):
     acqrel|run OPS    lifecycles per second of ldl_lock_acquire+release / ldl_lock_run
     rtt OPS           the anchor for the same client library: round trips per second of
                       EVALSHA <sha of "return 1"> 0 through redisCommandArgv
   Non-blocking view (ldl_redis_async, one non-blocking connection, locks in manual mode):
     frame NLOCKS SECONDS [SERVER_PID]
                       frame cost = one pump + NLOCKS polls, frames every 1 ms, healthy for
                       SECONDS, then (with SERVER_PID) the server SIGSTOPped for 2 s.
                       Prints "healthy_p99_us healthy_max_us frozen_p99_us frozen_max_us
                       healthy_max_cpu_us frozen_max_cpu_us" (wall times, then the frame's
                       own thread CPU time, which leaves out the scheduler's preemptions)"
     renew NLOCKS SECONDS
                       NLOCKS leases (TTL 3 s, heartbeat 1 s) held SECONDS in a 60 fps loop: prints
                       "rounds writes_per_round reads_per_round cpu_us_per_renew renews"
     session NLOCKS ROUNDS
                       issue 34: NLOCKS leases renewed together (ldl_lock_tick, all pipelined)
                       ROUNDS times, then ROUNDS PEXPIREs of one session key: prints
                       "renew_server_us renew_wall_us renew_client_cpu_us pexpire_server_us",
                       each per heartbeat round (server time from INFO commandstats)
     inflight NLOCKS OPS
                       NLOCKS locks cycling acquire -> release on their own keys, all in
                       flight at once on one connection: lifecycles per second
     lua acquire|release   print the adapter's script (redis.sh loads it for redis-benchmark)
   Fenced writes (issue 19):
     fenceset DEPTH OPS
                       SET through the fence script (equal fence; rising fence) vs a plain
                       SET on the same connection, DEPTH deep (1: synchronous view; more:
                       the non-blocking view): prints "equal_rate rising_rate plain_rate" */
#define LDL_REDIS_IMPLEMENTATION
#include "bench_store.h"
#include <hiredis/hiredis.h>
#include "adapters/lite_di_lock_redis.h"
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>

static int bn_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int bn_shutdown(void *s) { (void)s; return 0; }
static int bn_scope_token;
static void *bn_scope(void *self) { (void)self; return &bn_scope_token; }

#define BN_MAXLOCKS 10000
static ldl_lock      bn_locks[BN_MAXLOCKS];
static char          bn_keys[BN_MAXLOCKS][16];
static ldl_redis_req bn_reqs[2 * BN_MAXLOCKS + 64];
static uint32_t      bn_frames[200000];

static int bn_async_setup(const char *host, int port, int n, uint32_t ttl, const char *prefix,
                          redisContext **c, ldl_redis_async *ra, ldl_async_store *as) {
    int i;
    if (n < 1 || n > BN_MAXLOCKS) { fprintf(stderr, "bench_redis: 1..%d locks\n", BN_MAXLOCKS); return -1; }
    *c = redisConnectNonBlock(host, port);
    if (!*c || (*c)->err) { fprintf(stderr, "bench_redis: connect\n"); return -1; }
    if (ldl_redis_async_init(ra, *c, prefix, bn_reqs, (size_t)(2 * n + 64)) != LDL_OK) {
        fprintf(stderr, "bench_redis: init: %s\n", ldl_redis_async_why(ra));
        return -1;
    }
    *as = ldl_redis_async_store(ra);
    for (i = 0; i < n; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        snprintf(bn_keys[i], sizeof bn_keys[i], "b%d", i);
        d.container.scope = bn_scope; d.container.value = bn_value; d.container.shutdown = bn_shutdown;
        d.key = bn_keys[i];
        d.ttl_ms = ttl;
        d.async_store = as;
        if (ldl_lock_init(&bn_locks[i], &d) != LDL_OK) return -1;
    }
    return 0;
}

/* wait (max ms) until the adapter's socket has something, then pump */
static void bn_wait_pump(ldl_redis_async *ra, int ms) {
    struct pollfd p;
    int ev = 0;
    p.fd = ldl_redis_async_fd(ra, &ev);
    p.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
    p.revents = 0;
    if (p.fd >= 0) poll(&p, 1, ms);
    ldl_redis_async_pump(ra);
}

/* acquire every lock and pump until all are held; 0 ok */
static int bn_hold_all(ldl_redis_async *ra, int n) {
    int i, held = 0;
    uint64_t end = bench_ns() + 30000000000ull;
    for (i = 0; i < n; i++) ldl_lock_acquire(&bn_locks[i]);
    while (held < n && bench_ns() < end) {
        bn_wait_pump(ra, 5);
        for (held = 0, i = 0; i < n; i++) held += ldl_lock_poll(&bn_locks[i]) == 1;
    }
    if (held < n) fprintf(stderr, "bench_redis: held %d of %d (%s)\n", held, n, ldl_redis_async_why(ra));
    return held == n ? 0 : -1;
}

static void bn_release_all(ldl_redis_async *ra, int n) {
    int i;
    for (i = 0; i < n; i++) ldl_lock_release(&bn_locks[i]);
    for (i = 0; i < 2000 && ldl_redis_async_stats(ra)->live > 0; i++) bn_wait_pump(ra, 5);
    for (i = 0; i < n; i++) ldl_lock_dispose(&bn_locks[i]);
    ldl_redis_async_pump(ra);
}

static int bn_cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t bn_thread_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* frames every 1 ms for ms: one pump + n polls each; wall p99 and max, and the max of the
   frame's own CPU time (the wall max also counts the times the scheduler took the core) */
static void bn_frames_run(ldl_redis_async *ra, int n, uint32_t ms, uint32_t *p99, uint32_t *mx, uint32_t *cpumx) {
    size_t k = 0;
    uint64_t end = bench_ns() + (uint64_t)ms * 1000000u;
    int i;
    *cpumx = 0;
    while (bench_ns() < end && k < sizeof bn_frames / sizeof bn_frames[0]) {
        uint64_t t0 = bench_ns(), c0 = bn_thread_ns(), cpu;
        struct timespec ts = { 0, 1000000L };
        ldl_redis_async_pump(ra);
        for (i = 0; i < n; i++) ldl_lock_poll(&bn_locks[i]);
        bn_frames[k++] = (uint32_t)((bench_ns() - t0) / 1000u);
        cpu = (bn_thread_ns() - c0) / 1000u;
        if (cpu > *cpumx) *cpumx = (uint32_t)cpu;
        nanosleep(&ts, NULL);
    }
    qsort(bn_frames, k, sizeof bn_frames[0], bn_cmp_u32);
    *p99 = k ? bn_frames[(k * 99) / 100] : 0;
    *mx = k ? bn_frames[k - 1] : 0;
}

static int bn_mode_frame(const char *host, int port, int n, int seconds, int pid) {
    redisContext *c;
    ldl_redis_async ra;
    ldl_async_store as;
    uint32_t hp, hm, hc, fp = 0, fm = 0, fc = 0;
    if (bn_async_setup(host, port, n, 3000, "bframe", &c, &ra, &as) != 0 || bn_hold_all(&ra, n) != 0) return 1;
    bn_frames_run(&ra, n, (uint32_t)seconds * 1000u, &hp, &hm, &hc);
    if (pid > 0) {
        kill(pid, SIGSTOP);
        bn_frames_run(&ra, n, 2000, &fp, &fm, &fc);
        kill(pid, SIGCONT);
    }
    bn_release_all(&ra, n);
    printf("%u %u %u %u %u %u\n", hp, hm, fp, fm, hc, fc);
    redisFree(c);
    return 0;
}

static double bn_cpu_us(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

static int bn_mode_renew(const char *host, int port, int n, int seconds) {
    redisContext *c;
    ldl_redis_async ra;
    ldl_async_store as;
    const ldl_redis_stats *st;
    uint64_t w0, r0, a0, end;
    double cpu0, rounds;
    int i;
    if (bn_async_setup(host, port, n, 3000, "brenew", &c, &ra, &as) != 0 || bn_hold_all(&ra, n) != 0) return 1;
    st = ldl_redis_async_stats(&ra);
    w0 = st->write_calls; r0 = st->read_calls; a0 = st->answered;
    cpu0 = bn_cpu_us();
    end = bench_ns() + (uint64_t)seconds * 1000000000u;
    while (bench_ns() < end) {                 /* a 60 fps frame loop, as a game would run */
        struct timespec ts = { 0, 16666667L };
        ldl_redis_async_pump(&ra);
        for (i = 0; i < n; i++) ldl_lock_poll(&bn_locks[i]);
        nanosleep(&ts, NULL);
    }
    rounds = (double)(st->answered - a0) / (double)n;
    printf("%.2f %.2f %.2f %.3f %llu\n", rounds, (double)(st->write_calls - w0) / rounds,
           (double)(st->read_calls - r0) / rounds, (bn_cpu_us() - cpu0) / (double)(st->answered - a0),
           (unsigned long long)(st->answered - a0));
    bn_release_all(&ra, n);
    redisFree(c);
    return 0;
}

/* the server's own time for one command, from INFO commandstats: the usec= of
   "cmdstat_NAME:calls=..,usec=..," (0 when the command has not run since RESETSTAT) */
static double bn_cmd_usec(redisContext *s, const char *name) {
    redisReply *rep = (redisReply *)redisCommand(s, "INFO commandstats");
    double us = 0;
    char pat[64];
    const char *at;
    snprintf(pat, sizeof pat, "cmdstat_%s:", name);
    if (rep && rep->type == REDIS_REPLY_STRING &&
        (at = strstr(rep->str, pat)) != NULL && (at = strstr(at, "usec=")) != NULL)
        us = atof(at + 5);
    freeReplyObject(rep);
    return us;
}

/* issue 34 item 4: what a heartbeat costs the server and the client with N leases on one
   connection, each renewed by the adapter's own script (all N pipelined), against what
   one session key's PEXPIRE costs (the one request a session renew would be). ROUNDS
   heartbeat rounds each, forced with ldl_lock_tick. Prints
   "renew_server_us_per_round renew_wall_us_per_round renew_client_cpu_us_per_round
    pexpire_server_us_per_round" */
static int bn_mode_session(const char *host, int port, int n, int rounds) {
    redisContext *c, *s;
    ldl_redis_async ra;
    ldl_async_store as;
    const ldl_redis_stats *st;
    double cpu0, renew_us, pexpire_us;
    uint64_t t0, wall = 0, a0;
    int i, r;
    if (bn_async_setup(host, port, n, 30000, "bsess", &c, &ra, &as) != 0 || bn_hold_all(&ra, n) != 0) return 1;
    s = redisConnect(host, port);
    if (!s || s->err) { fprintf(stderr, "bench_redis: connect\n"); return 1; }
    st = ldl_redis_async_stats(&ra);
    freeReplyObject(redisCommand(s, "CONFIG RESETSTAT"));
    cpu0 = bn_cpu_us();
    for (r = 0; r < rounds; r++) {
        uint64_t end = bench_ns() + 30000000000ull;
        a0 = st->answered;
        t0 = bench_ns();
        for (i = 0; i < n; i++) ldl_lock_tick(&bn_locks[i]);     /* every renew due at once */
        while (st->answered - a0 < (uint64_t)n && bench_ns() < end) bn_wait_pump(&ra, 5);
        for (i = 0; i < n; i++) if (ldl_lock_poll(&bn_locks[i]) != 1) { fprintf(stderr, "bench_redis: lost a lease\n"); return 1; }
        wall += bench_ns() - t0;
    }
    renew_us = bn_cmd_usec(s, "evalsha") + bn_cmd_usec(s, "eval");
    cpu0 = bn_cpu_us() - cpu0;
    bn_release_all(&ra, n);
    redisFree(c);
    freeReplyObject(redisCommand(s, "SET {bsess}:session 1 PX 30000"));
    freeReplyObject(redisCommand(s, "CONFIG RESETSTAT"));
    for (r = 0; r < rounds; r++) freeReplyObject(redisCommand(s, "PEXPIRE {bsess}:session 30000"));
    pexpire_us = bn_cmd_usec(s, "pexpire");
    redisFree(s);
    printf("%.1f %.1f %.1f %.2f\n", renew_us / rounds, (double)wall / 1000.0 / rounds, cpu0 / rounds,
           pexpire_us / rounds);
    return 0;
}

static int bn_mode_inflight(const char *host, int port, int n, long ops) {
    redisContext *c;
    ldl_redis_async ra;
    ldl_async_store as;
    long done = 0, warm = ops / 10 + n;
    uint64_t t0 = 0;
    int i;
    if (bn_async_setup(host, port, n, 30000, "bflight", &c, &ra, &as) != 0) return 1;
    while (done < ops + warm) {
        if (done >= warm && t0 == 0) t0 = bench_ns();
        for (i = 0; i < n; i++) {
            ldl_lock *l = &bn_locks[i];
            switch (ldl_lock_state(l)) {
            case LDL_IDLE: case LDL_RELEASED: ldl_lock_acquire(l); break;
            case LDL_ACQUIRING: ldl_lock_poll(l); if (ldl_lock_state(l) == LDL_HELD) ldl_lock_release(l); break;
            case LDL_HELD: ldl_lock_release(l); break;
            case LDL_RELEASING:
                if (ldl_lock_release(l) == 1) { done++; ldl_lock_acquire(l); }   /* the next lifecycle */
                break;
            default: fprintf(stderr, "bench_redis: lock lost (%s)\n", ldl_redis_async_why(&ra)); return 1;
            }
        }
        bn_wait_pump(&ra, 10);
    }
    printf("%.1f\n", (double)ops * 1e9 / (double)(bench_ns() - t0));
    if (getenv("BENCH_VERBOSE"))
        fprintf(stderr, "inflight: %llu requests, %llu write() calls, %llu read() calls, max live %lu\n",
                (unsigned long long)ldl_redis_async_stats(&ra)->submitted,
                (unsigned long long)ldl_redis_async_stats(&ra)->write_calls,
                (unsigned long long)ldl_redis_async_stats(&ra)->read_calls,
                (unsigned long)ldl_redis_async_stats(&ra)->max_live);
    bn_release_all(&ra, n);
    redisFree(c);
    return 0;
}

/* ---------------------------------------------------------------- fenced writes (issue 19)
   fenceset DEPTH OPS: SET {bf}:k <16 bytes> through the fence script vs the plain SET, on
   ONE connection, alternating 8 slices of each so that a load change hits both. DEPTH 1:
   a blocking context, ldl_redis_fence vs redisCommandArgv, one round trip each. DEPTH > 1:
   a non-blocking context, batches of DEPTH: ldl_redis_async_fence x DEPTH then pumps until
   all are answered, vs DEPTH plain SETs appended to the same context, written, and their
   DEPTH replies read. Prints "fenced_equal_rate fenced_rising_rate plain_rate": equal = the
   same fence every time (one holder writing: the mark is not rewritten), rising = a new
   fence per write (the mark is SET each time). */
static const char *bf_argv[3] = { "SET", "{bf}:k", "0123456789abcdef" };
static long bf_done;
static void bf_cb(void *ctx, int rc, redisReply *rep) {
    (void)ctx;
    if (rc == 1) bf_done++;
    else fprintf(stderr, "bench_redis: fenced SET answered %d\n", rc);
    if (rep) freeReplyObject(rep);
}

/* DEPTH plain SETs on the non-blocking context c: append, write all, read all; 0 ok */
static int bf_plain_batch(redisContext *c, int depth) {
    int i, done = 0, got = 0;
    void *rep;
    for (i = 0; i < depth; i++) redisAppendCommandArgv(c, 3, bf_argv, NULL);
    while (!done) {
        struct pollfd p;
        if (redisBufferWrite(c, &done) != REDIS_OK) return -1;
        if (!done) { p.fd = c->fd; p.events = POLLOUT; p.revents = 0; poll(&p, 1, 1000); }
    }
    while (got < depth) {
        struct pollfd p;
        if (redisGetReplyFromReader(c, &rep) != REDIS_OK) return -1;
        if (rep) {
            if (((redisReply *)rep)->type != REDIS_REPLY_STATUS) return -1;
            freeReplyObject(rep);
            got++;
            continue;
        }
        p.fd = c->fd; p.events = POLLIN; p.revents = 0;
        poll(&p, 1, 1000);
        if (redisBufferRead(c) != REDIS_OK) return -1;
    }
    return 0;
}

/* DEPTH fenced SETs through the non-blocking view; 0 ok */
static int bf_fenced_batch(ldl_redis_async *ra, int depth, int64_t *fence, int rising) {
    int i;
    long want = bf_done + depth;
    for (i = 0; i < depth; i++) {
        if (rising) ++*fence;
        if (ldl_redis_async_fence(ra, "bf", *fence, 1, NULL, 3, bf_argv, NULL, bf_cb, NULL) != LDL_OK) return -1;
    }
    while (bf_done < want) {
        if (ldl_redis_async_stats(ra)->live == 0) return -1;
        bn_wait_pump(ra, 1000);
    }
    return 0;
}

static int bn_mode_fenceset(const char *host, int port, int depth, long ops) {
    static ldl_redis_req reqs[1100];
    uint64_t t_eq = 0, t_ri = 0, t_pl = 0, t0;
    int64_t fence = 1;
    long per, k, n;
    int slice;
    if (depth < 1 || depth > 1000 || ops < 16 * depth) { fprintf(stderr, "bench_redis: fenceset DEPTH 1..1000, OPS >= 16 x DEPTH\n"); return 2; }
    per = ops / 8 / depth;                       /* batches per slice */
    {                                            /* a fresh mark: fences start at 1 */
        redisContext *c = redisConnect(host, port);
        redisReply *rep = c && !c->err ? (redisReply *)redisCommand(c, "DEL {bf}:ldlbench:mark") : NULL;
        if (!rep) { fprintf(stderr, "bench_redis: connect\n"); return 1; }
        freeReplyObject(rep);
        redisFree(c);
    }
    if (depth == 1) {
        redisContext *c = redisConnect(host, port);
        ldl_redis r;
        if (!c || c->err || ldl_redis_init(&r, c, "ldlbench") != LDL_OK) { fprintf(stderr, "bench_redis: connect\n"); return 1; }
        for (k = 0; k < per / 10 + 1; k++)        /* warm-up, loads the script */
            if (ldl_redis_fence(&r, "bf", fence, 1, NULL, 3, bf_argv, NULL, NULL) != 1) { fprintf(stderr, "bench_redis: fence: %s\n", ldl_redis_why(&r)); return 1; }
        for (slice = 0; slice < 8; slice++) {
            t0 = bench_ns();
            for (k = 0; k < per; k++) {
                redisReply *rep = (redisReply *)redisCommandArgv(c, 3, bf_argv, NULL);
                if (!rep || rep->type != REDIS_REPLY_STATUS) { fprintf(stderr, "bench_redis: SET\n"); return 1; }
                freeReplyObject(rep);
            }
            t_pl += bench_ns() - t0;
            t0 = bench_ns();
            for (k = 0; k < per; k++)
                if (ldl_redis_fence(&r, "bf", fence, 1, NULL, 3, bf_argv, NULL, NULL) != 1) { fprintf(stderr, "bench_redis: fence: %s\n", ldl_redis_why(&r)); return 1; }
            t_eq += bench_ns() - t0;
            t0 = bench_ns();
            for (k = 0; k < per; k++)
                if (ldl_redis_fence(&r, "bf", ++fence, 1, NULL, 3, bf_argv, NULL, NULL) != 1) { fprintf(stderr, "bench_redis: fence: %s\n", ldl_redis_why(&r)); return 1; }
            t_ri += bench_ns() - t0;
        }
        redisFree(c);
    } else {
        redisContext *c = redisConnectNonBlock(host, port);
        ldl_redis_async ra;
        if (!c || c->err || ldl_redis_async_init(&ra, c, "ldlbench", reqs, (size_t)depth + 8) != LDL_OK) { fprintf(stderr, "bench_redis: connect\n"); return 1; }
        for (k = 0; k < per / 10 + 1; k++)        /* warm-up: the connect, the script */
            if (bf_fenced_batch(&ra, depth, &fence, 0) != 0) { fprintf(stderr, "bench_redis: fenced batch: %s\n", ldl_redis_async_why(&ra)); return 1; }
        for (slice = 0; slice < 8; slice++) {
            t0 = bench_ns();
            for (k = 0; k < per; k++)
                if (bf_plain_batch(c, depth) != 0) { fprintf(stderr, "bench_redis: plain batch\n"); return 1; }
            t_pl += bench_ns() - t0;
            t0 = bench_ns();
            for (k = 0; k < per; k++)
                if (bf_fenced_batch(&ra, depth, &fence, 0) != 0) { fprintf(stderr, "bench_redis: fenced batch: %s\n", ldl_redis_async_why(&ra)); return 1; }
            t_eq += bench_ns() - t0;
            t0 = bench_ns();
            for (k = 0; k < per; k++)
                if (bf_fenced_batch(&ra, depth, &fence, 1) != 0) { fprintf(stderr, "bench_redis: fenced batch: %s\n", ldl_redis_async_why(&ra)); return 1; }
            t_ri += bench_ns() - t0;
        }
        redisFree(c);
    }
    n = per * 8 * depth;
    printf("%.1f %.1f %.1f\n", (double)n * 1e9 / (double)t_eq, (double)n * 1e9 / (double)t_ri,
           (double)n * 1e9 / (double)t_pl);
    return 0;
}

int main(int argc, char **argv) {
    redisContext *c;
    ldl_redis r;
    ldl_store st;
    double rate;
    if (argc == 5 && strcmp(argv[3], "lua") == 0) {   /* the exact script text, for SCRIPT LOAD */
        fputs(strcmp(argv[4], "acquire") == 0 ? ldl__redis_acquire_lua : ldl__redis_release_lua, stdout);
        return 0;
    }
    if (argc >= 6 && strcmp(argv[3], "frame") == 0)
        return bn_mode_frame(argv[1], atoi(argv[2]), atoi(argv[4]), atoi(argv[5]), argc > 6 ? atoi(argv[6]) : 0);
    if (argc == 6 && strcmp(argv[3], "renew") == 0)
        return bn_mode_renew(argv[1], atoi(argv[2]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 6 && strcmp(argv[3], "session") == 0)
        return bn_mode_session(argv[1], atoi(argv[2]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 6 && strcmp(argv[3], "inflight") == 0)
        return bn_mode_inflight(argv[1], atoi(argv[2]), atoi(argv[4]), atol(argv[5]));
    if (argc == 6 && strcmp(argv[3], "fenceset") == 0)
        return bn_mode_fenceset(argv[1], atoi(argv[2]), atoi(argv[4]), atol(argv[5]));
    if (argc != 5) { fprintf(stderr, "usage: bench_redis HOST PORT acqrel|run|rtt OPS | frame NLOCKS S [PID] | renew NLOCKS S | inflight NLOCKS OPS\n"); return 2; }
    c = redisConnect(argv[1], atoi(argv[2]));
    if (!c || c->err) { fprintf(stderr, "bench_redis: connect: %s\n", c ? c->errstr : "oom"); return 1; }
    if (ldl_redis_init(&r, c, "ldlbench") != LDL_OK) { fprintf(stderr, "bench_redis: init\n"); return 1; }
    st = ldl_redis_store(&r);
    if (strcmp(argv[3], "rtt") == 0) {
        redisReply *rep = (redisReply *)redisCommand(c, "SCRIPT LOAD %s", "return 1");
        char sha[41];
        const char *av[3]; size_t al[3];
        long i, ops = atol(argv[4]);
        uint64_t t0 = 0;
        if (!rep || rep->type != REDIS_REPLY_STRING || rep->len != 40) { fprintf(stderr, "bench_redis: SCRIPT LOAD\n"); return 1; }
        memcpy(sha, rep->str, 41);
        freeReplyObject(rep);
        av[0] = "EVALSHA"; al[0] = 7; av[1] = sha; al[1] = 40; av[2] = "0"; al[2] = 1;
        for (i = -ops / 10 - 1; i < ops; i++) {
            if (i == 0) t0 = bench_ns();
            rep = (redisReply *)redisCommandArgv(c, 3, av, al);
            if (!rep || rep->type != REDIS_REPLY_INTEGER) { fprintf(stderr, "bench_redis: EVALSHA\n"); return 1; }
            freeReplyObject(rep);
        }
        printf("%.1f\n", (double)ops * 1e9 / (double)(bench_ns() - t0));
        redisFree(c);
        return 0;
    }
    rate = bs_lifecycles(&st, "bench-c", argv[3], atol(argv[4]));
    redisFree(c);
    if (rate < 0) return 1;
    printf("%.1f\n", rate);
    return 0;
}
