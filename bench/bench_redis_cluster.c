/* bench/bench_redis_cluster.c -- `make bench-redis-cluster` (not part of make test).
 * Lock lifecycles (acquire granted + release answered) per second over a 3-master Redis
 * Cluster (adapters/lite_di_lock_redis_cluster.h) vs one redis-server
 * (adapters/lite_di_lock_redis.h), same client count, same machine, all on loopback:
 *   A  non-blocking: P client processes x L locks each, pipelined, frame loop
 *   S  synchronous:  P client processes, one lock loop each
 *   W  synchronous over the cluster with ldl_redis_cluster_set_wait(1 replica, 100 ms)
 * and the latency of a lifecycle (median of the per-process means). Every row runs
 * BENCH_SECS seconds (default 3). Run through tests/store/with_redis_cluster.sh. */
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
    rs_stop(&g_single);
    stop_cluster();
    return 0;
}
