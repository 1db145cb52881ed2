/* bench/bench_redis_cluster.c -- `make bench-redis-cluster` (not part of make test).
 * Lock lifecycles (acquire granted + release answered) per second over a 3-master Redis
 * Cluster (adapters/lite_di_lock_redis_cluster.h) vs one redis-server
 * (adapters/lite_di_lock_redis.h), same client count, same machine, all on loopback:
 *   A  non-blocking: P client processes x L locks each, pipelined, frame loop
 *   S  synchronous:  P client processes, one lock loop each
 *   W  synchronous over the cluster with ldl_redis_cluster_set_wait(1 replica, 100 ms)
 * and the latency of a lifecycle (median of the per-process means). Every row runs
 * BENCH_SECS seconds (default 3). Run through tests/store/with_redis_cluster.sh.
 *   E  the epoch read's cost (issue 20, decision 0115): ONE client on ONE master of the
 *      cluster, its keys all in that master's slots, the single-node adapter with epoch
 *      fences off (today's grant script) and on (the Cluster view's), rounds interleaved
 *      (BENCH_EPOCH_REPS, default 3; medians): lifecycles/s synchronous (depth 1) and
 *      non-blocking (L locks pipelined), and the master's server time per EVALSHA
 *      (INFO commandstats, mean of acquire + release). */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_cluster_server.h"

#define P 4
#define L 250
static rs_server g_single;
static uint32_t g_secs = 3;
static int g_mode;             /* 0 single, 1 cluster, 2 cluster + WAIT */

static uint64_t g_now;
static uint64_t frame_clock(void *ctx) { (void)ctx; return g_now; }
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_tok;
static void *nop_scope(void *self) { (void)self; return &g_tok; }

static void desc_init(ldl_lock_desc *d, const char *key)
{
    memset(d, 0, sizeof *d);
    d->container.scope = nop_scope;
    d->container.value = nop_value;
    d->container.shutdown = nop_shutdown;
    d->key = key;
    d->ttl_ms = 5000;
}

/* writes the lifecycle count to out as text */
static void answer(int out, unsigned long n)
{
    char b[32];
    int k = snprintf(b, sizeof b, "%lu\n", n);
    if (write(out, b, (size_t)k) < 0) { /* the parent reads EOF */ }
}

static int async_client(void *arg, int in, int out)
{
    static ldl_lock lk[L];
    static char keys[L][24];
    static int phase[L];
    static ldl_redis_req rreq[2 * L + 64];
    static ldl_redis_cluster_req creq[2 * L + 64];
    static ldl_redis_async ra;
    static ldl_redis_cluster_async rca;
    ldl_async_store as;
    redisContext *c = NULL;
    unsigned long done = 0;
    uint64_t end;
    int i, me = (int)(intptr_t)arg;
    (void)in;
    if (g_mode == 0) {
        c = redisConnectNonBlock("127.0.0.1", g_single.port);
        if (!c || ldl_redis_async_init(&ra, c, "bn", rreq, 2 * L + 64) != LDL_OK) return 2;
        as = ldl_redis_async_store(&ra);
    } else {
        if (ldl_redis_cluster_async_init(&rca, g_seeds, "bn", 1000, creq, 2 * L + 64) != LDL_OK) return 2;
        as = ldl_redis_cluster_async_store(&rca);
    }
    g_now = st_now_ms();
    for (i = 0; i < L; i++) {
        ldl_lock_desc d;
        snprintf(keys[i], sizeof keys[i], "a%d_%d", me, i);
        desc_init(&d, keys[i]);
        d.async_store = &as;
        d.clock.now_ms = frame_clock;
        if (ldl_lock_init(&lk[i], &d) != LDL_OK) return 3;
    }
    end = st_now_ms() + g_secs * 1000u;
    while ((g_now = st_now_ms()) < end) {
        if (g_mode == 0) ldl_redis_async_pump(&ra); else ldl_redis_cluster_async_pump(&rca);
        for (i = 0; i < L; i++) {                 /* phase: 0 idle, 1 acquiring, 2 releasing */
            int rc;
            if (phase[i] == 0) rc = ldl_lock_acquire(&lk[i]);
            else if ((rc = ldl_lock_poll(&lk[i])) == LDL_EINPROGRESS) continue;
            if (rc == LDL_EINPROGRESS) { phase[i] = 1; continue; }
            if (phase[i] == 2) { done += ldl_lock_answer(&lk[i]) == 1; phase[i] = 0; continue; }
            phase[i] = 0;
            if (rc != 1) continue;
            rc = ldl_lock_release(&lk[i]);
            if (rc == LDL_EINPROGRESS) phase[i] = 2;
            else done += rc == 1;
        }
    }
    answer(out, done);
    for (i = 0; i < L; i++) ldl_lock_dispose(&lk[i]);
    if (g_mode == 0) redisFree(c); else ldl_redis_cluster_async_free(&rca);
    return 0;
}

static int sync_client(void *arg, int in, int out)
{
    static ldl_redis_cluster rc;
    ldl_redis r;
    ldl_store s;
    ldl_lock lk;
    ldl_lock_desc d;
    redisContext *c = NULL;
    char key[24];
    unsigned long done = 0;
    uint64_t end;
    (void)in;
    if (g_mode == 0) {
        c = rs_connect(&g_single, 1000);
        if (!c || ldl_redis_init(&r, c, "bn") != LDL_OK) return 2;
        s = ldl_redis_store(&r);
    } else {
        if (ldl_redis_cluster_init(&rc, g_seeds, "bn", 1000) != LDL_OK) return 2;
        if (g_mode == 2) ldl_redis_cluster_set_wait(&rc, 1, 100);
        s = ldl_redis_cluster_store(&rc);
    }
    snprintf(key, sizeof key, "s%d", (int)(intptr_t)arg);
    desc_init(&d, key);
    d.store = &s;
    if (ldl_lock_init(&lk, &d) != LDL_OK) return 3;
    end = st_now_ms() + g_secs * 1000u;
    while (st_now_ms() < end)
        if (ldl_lock_acquire(&lk) == 1 && ldl_lock_release(&lk) == 1) done++;
    answer(out, done);
    ldl_lock_dispose(&lk);
    if (g_mode == 0) redisFree(c); else ldl_redis_cluster_free(&rc);
    return 0;
}

static double run_row(int (*fn)(void *, int, int), int mode, unsigned long *per)
{
    st_child ch[P];
    unsigned long total = 0;
    int i;
    g_mode = mode;
    for (i = 0; i < P; i++) st_fork(&ch[i], fn, (void *)(intptr_t)i);
    for (i = 0; i < P; i++) {
        char b[32];
        ssize_t n = 0, k;
        uint64_t until = st_now_ms() + g_secs * 1000u + 20000u;
        while (n < (ssize_t)sizeof b - 1 && st_now_ms() < until) {
            k = read(ch[i].from_child, b + n, sizeof b - 1 - (size_t)n);
            if (k <= 0) break;
            n += k;
            if (b[n - 1] == '\n') break;
        }
        b[n > 0 ? n : 0] = 0;
        per[i] = strtoul(b, NULL, 10);
        total += per[i];
        if (st_join(&ch[i], 20000) != 0) fprintf(stderr, "client %d failed\n", i);
    }
    return (double)total / (double)g_secs;
}

/* ------------------------------------------------------------ E: the epoch read's cost */
static int g_em = -1;                          /* the master the E rows run on */
static char g_ekeys[L + 1][24];                /* [L]: the synchronous row's own key */

static int epoch_keys(void)
{
    static ldl_redis_cluster rc;
    char addr[80];
    int i, k = 0;
    if (ldl_redis_cluster_init(&rc, g_seeds, "be", 1000) != LDL_OK) return -1;
    for (i = 0; k < L + 1 && i < 100000; i++) {
        char key[24];
        snprintf(key, sizeof key, "e%d", i);
        ldl_redis_cluster_master(&rc, key, addr, sizeof addr);
        if (g_em < 0) g_em = node_of_addr(addr);
        if (g_em >= 0 && node_of_addr(addr) == g_em) memcpy(g_ekeys[k++], key, sizeof key);
    }
    ldl_redis_cluster_free(&rc);
    return k == L + 1 ? 0 : -1;
}

/* usec_per_call of EVALSHA on the E master since the last reset (then resets) */
static double e_usec(int reset_only)
{
    redisContext *c = conn(g_em);
    redisReply *r = c && !reset_only ? rs_cmd(c, "INFO", "commandstats", NULL) : NULL;
    double us = 0;
    const char *p;
    if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, "cmdstat_evalsha:")) != NULL &&
        (p = strstr(p, "usec_per_call=")) != NULL)
        us = atof(p + 14);
    if (r) freeReplyObject(r);
    if (c) { rs_is(rs_cmd(c, "CONFIG", "RESETSTAT", NULL), "OK"); redisFree(c); }
    return us;
}

static double e_sync(int epoch, double *us)
{
    redisContext *c = rs_connect_port(g_n[g_em].port, 1000);
    ldl_redis r;
    ldl_store s;
    ldl_lock lk;
    ldl_lock_desc d;
    unsigned long done = 0;
    uint64_t end;
    if (!c || ldl_redis_init(&r, c, "be") != LDL_OK) return 0;
    ldl_redis_set_epoch_fences(&r, epoch);
    s = ldl_redis_store(&r);
    desc_init(&d, g_ekeys[L]);
    d.store = &s;
    if (ldl_lock_init(&lk, &d) != LDL_OK) return 0;
    e_usec(1);
    end = st_now_ms() + g_secs * 1000u;
    while (st_now_ms() < end)
        if (ldl_lock_acquire(&lk) == 1 && ldl_lock_release(&lk) == 1) done++;
    *us = e_usec(0);
    ldl_lock_dispose(&lk);
    redisFree(c);
    return (double)done / (double)g_secs;
}

static double e_async(int epoch, double *us)
{
    static ldl_lock lk[L];
    static int phase[L];
    static ldl_redis_req rreq[2 * L + 64];
    static ldl_redis_async ra;
    ldl_async_store as;
    redisContext *c = redisConnectNonBlock("127.0.0.1", g_n[g_em].port);
    unsigned long done = 0;
    uint64_t end;
    int i;
    if (!c || ldl_redis_async_init(&ra, c, "be", rreq, 2 * L + 64) != LDL_OK) return 0;
    ldl_redis_async_set_epoch_fences(&ra, epoch);
    as = ldl_redis_async_store(&ra);
    g_now = st_now_ms();
    for (i = 0; i < L; i++) {
        ldl_lock_desc d;
        desc_init(&d, g_ekeys[i]);
        d.async_store = &as;
        d.clock.now_ms = frame_clock;
        phase[i] = 0;
        if (ldl_lock_init(&lk[i], &d) != LDL_OK) return 0;
    }
    e_usec(1);
    end = st_now_ms() + g_secs * 1000u;
    while ((g_now = st_now_ms()) < end) {
        ldl_redis_async_pump(&ra);
        for (i = 0; i < L; i++) {                 /* phase: 0 idle, 1 acquiring, 2 releasing */
            int rc;
            if (phase[i] == 0) rc = ldl_lock_acquire(&lk[i]);
            else if ((rc = ldl_lock_poll(&lk[i])) == LDL_EINPROGRESS) continue;
            if (rc == LDL_EINPROGRESS) { phase[i] = 1; continue; }
            if (phase[i] == 2) { done += ldl_lock_answer(&lk[i]) == 1; phase[i] = 0; continue; }
            phase[i] = 0;
            if (rc != 1) continue;
            rc = ldl_lock_release(&lk[i]);
            if (rc == LDL_EINPROGRESS) phase[i] = 2;
            else done += rc == 1;
        }
    }
    *us = e_usec(0);
    end = st_now_ms() + 3000;                  /* hand every lease back: the next row starts free */
    while ((g_now = st_now_ms()) < end) {
        int busy = 0;
        ldl_redis_async_pump(&ra);
        for (i = 0; i < L; i++) {
            int st = ldl_lock_poll(&lk[i]) == LDL_EINPROGRESS;
            if (!st && ldl_lock_state(&lk[i]) == LDL_HELD) st = ldl_lock_release(&lk[i]) == LDL_EINPROGRESS;
            busy += st;
        }
        if (!busy) break;
    }
    for (i = 0; i < L; i++) ldl_lock_dispose(&lk[i]);
    redisFree(c);
    return (double)done / (double)g_secs;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double med(double *v, int n) { qsort(v, (size_t)n, sizeof *v, dcmp); return v[n / 2]; }

static void epoch_rows(void)
{
    double rate[2][2][16], us[2][2][16], m[2][2], u[2][2];
    const char *e = getenv("BENCH_EPOCH_REPS");
    int reps = e && atoi(e) > 0 && atoi(e) <= 16 ? atoi(e) : 3, k, ep, w;
    if (epoch_keys() != 0) { printf("  E  not run: no master for the keys\n"); return; }
    for (k = 0; k < reps; k++)
        for (ep = 0; ep < 2; ep++) {
            rate[0][ep][k] = e_sync(ep, &us[0][ep][k]);
            rate[1][ep][k] = e_async(ep, &us[1][ep][k]);
        }
    for (w = 0; w < 2; w++)
        for (ep = 0; ep < 2; ep++) { m[w][ep] = med(rate[w][ep], reps); u[w][ep] = med(us[w][ep], reps); }
    printf("  E  epoch read, 1 client on master %d, synchronous (depth 1): %9.0f lifecycles/s without, %9.0f with "
           "(x%.3f); server %.2f / %.2f us per EVALSHA (%+.2f us)\n", g_em, m[0][0], m[0][1],
           m[0][1] / (m[0][0] > 0 ? m[0][0] : 1), u[0][0], u[0][1], u[0][1] - u[0][0]);
    printf("  E  epoch read, 1 client on master %d, non-blocking (%d locks pipelined): %9.0f lifecycles/s without, "
           "%9.0f with (x%.3f); server %.2f / %.2f us per EVALSHA (%+.2f us)  [medians of %d interleaved rounds]\n",
           g_em, L, m[1][0], m[1][1], m[1][1] / (m[1][0] > 0 ? m[1][0] : 1), u[1][0], u[1][1], u[1][1] - u[1][0],
           reps);
}

int main(void)
{
    unsigned long per[P];
    double a0, a1, s0, s1, s2;
    const char *e = getenv("BENCH_SECS");
    st_ignore_sigpipe();
    if (e && atoi(e) > 0) g_secs = (uint32_t)atoi(e);
    if (start_cluster() != 0 || rs_start(&g_single, "single", 0) != 0) {
        fprintf(stderr, "bench: servers did not start\n");
        stop_cluster();
        return 1;
    }
    printf("bench_redis_cluster: %d client processes, %u s per row, loopback, 2-core shared VM\n", P, g_secs);
    if (getenv("BENCH_EPOCH_ONLY")) {             /* the E rows alone */
        epoch_rows();
        rs_stop(&g_single);
        stop_cluster();
        return 0;
    }
    a0 = run_row(async_client, 0, per);
    printf("  A  non-blocking, %d x %d locks, one redis-server      : %9.0f lifecycles/s\n", P, L, a0);
    a1 = run_row(async_client, 1, per);
    printf("  A  non-blocking, %d x %d locks, 3-master cluster       : %9.0f lifecycles/s (x%.2f)\n", P, L, a1, a1 / a0);
    s0 = run_row(sync_client, 0, per);
    printf("  S  synchronous, %d x 1 lock, one redis-server         : %9.0f lifecycles/s (%.0f us each)\n", P, s0,
           1e6 * P / (s0 > 0 ? s0 : 1));
    s1 = run_row(sync_client, 1, per);
    printf("  S  synchronous, %d x 1 lock, 3-master cluster          : %9.0f lifecycles/s (%.0f us each)\n", P, s1,
           1e6 * P / (s1 > 0 ? s1 : 1));
    s2 = run_row(sync_client, 2, per);
    printf("  W  synchronous + WAIT 1 replica, 3-master cluster     : %9.0f lifecycles/s (%.0f us each, x%.2f of S)\n",
           s2, 1e6 * P / (s2 > 0 ? s2 : 1), s2 / (s1 > 0 ? s1 : 1));
    epoch_rows();
    rs_stop(&g_single);
    stop_cluster();
    return 0;
}
