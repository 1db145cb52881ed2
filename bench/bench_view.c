/* bench_view.c -- the cost of the one interface (adapters/lite_di_lock_view.h; issue 31
 * "Measure"), run by bench/view.sh inside tests/store/with_pg.sh + with_redis.sh:
 *
 *   bench_view ROUNDS OPS
 *
 * The pipelined rows of `make bench` (3j Redis, 4c PostgreSQL with synchronous_commit = off:
 * bench_redis.c / bench_pg.c's "inflight" method): 100 locks in flight on ONE connection,
 * each cycling acquire -> release, lifecycles/s over OPS lifecycles after a warm-up. Driven
 * two ways on the same server, in 8 alternating slices of OPS/8 per round (the order flips
 * every slice):
 *   direct  the lock's async store from ldl_*_async_store, the loop calls the adapter's own
 *           ldl_*_async_fd and ldl_*_async_pump;
 *   view    the lock's store is v.async, the loop calls v.ops->fds and v.ops->pump.
 * Prints one line per store: "STORE direct_median view_median ratio_median" where the ratio
 * is the median of the per-round view/direct ratios (paired). Redis: a redis-server started
 * here (tests/store/redis_server.h, no persistence); PostgreSQL: $LDL_PG_CONNINFO. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"
#include "tests/store/pg_common.h"
#include "adapters/lite_di_lock_view.h"

#define NL 100
static ldl_lock      g_locks[NL];
static char          g_keys[NL][16];
static ldl_redis_req g_rreq[2 * NL + 64];
static ldl_pg_req    g_preq[2 * NL + 64];
static ldl_scope     g_root, g_pool[2];

static uint64_t ns_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_d); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

/* the store under test, both ways */
typedef struct target {
    int              redis;          /* 1 redis, 0 pg */
    ldl_redis_async *ra;
    ldl_pg_async    *pa;
    ldl_view         v;
} target;

/* one wait + pump: direct calls the adapter, else the view's ops */
static int g_aa;                         /* BENCH_VIEW_AA=1: the "view" runs are direct too (an A/A control) */
static void wait_pump(target *t, int via) {
    struct pollfd p;
    int ev = 0;
    if (g_aa) via = 0;
    if (via) {
        ldl_view_fd f[1];
        p.fd = t->v.ops->fds(t->v.self, f, 1) == 1 ? f[0].fd : -1;
        ev = p.fd >= 0 ? f[0].events : 0;
    } else {
        p.fd = t->redis ? ldl_redis_async_fd(t->ra, &ev) : ldl_pg_async_fd(t->pa, &ev);
    }
    p.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
    p.revents = 0;
    if (p.fd >= 0) poll(&p, 1, 10);
    if (via) t->v.ops->pump(t->v.self);
    else if (t->redis) ldl_redis_async_pump(t->ra);
    else ldl_pg_async_pump(t->pa);
}

/* lifecycles/s of NL locks in flight, OPS after a warm-up */
static double inflight(target *t, int via, long ops) {
    ldl_async_store direct = t->redis ? ldl_redis_async_store(t->ra) : ldl_pg_async_store(t->pa);
    long done = 0, warm = ops / 10 + NL;
    uint64_t t0 = 0;
    int i, k;
    for (i = 0; i < NL; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        snprintf(g_keys[i], sizeof g_keys[i], "bv%d", i);
        d.container = ldl_scope_container(&g_root);
        d.key = g_keys[i];
        d.ttl_ms = 30000;
        d.async_store = via && !g_aa ? &t->v.async : &direct;
        if (ldl_lock_init(&g_locks[i], &d) != LDL_OK) { fprintf(stderr, "init: %s\n", ldl_lock_why(&g_locks[i])); exit(1); }
    }
    while (done < ops + warm) {
        if (done >= warm && t0 == 0) t0 = ns_now();
        for (i = 0; i < NL; i++) {
            ldl_lock *l = &g_locks[i];
            switch (ldl_lock_state(l)) {
            case LDL_IDLE: case LDL_RELEASED: ldl_lock_acquire(l); break;
            case LDL_ACQUIRING: ldl_lock_poll(l); if (ldl_lock_state(l) == LDL_HELD) ldl_lock_release(l); break;
            case LDL_HELD: ldl_lock_release(l); break;
            case LDL_RELEASING:
                if (ldl_lock_release(l) == 1) { done++; ldl_lock_acquire(l); }
                break;
            default: fprintf(stderr, "bench_view: lock lost (%s)\n", t->v.ops->why(t->v.self)); exit(1);
            }
        }
        wait_pump(t, via);
    }
    t0 = ns_now() - t0;
    for (i = 0; i < NL; i++) ldl_lock_release(&g_locks[i]);
    for (k = 0; k < 2000; k++) {
        int busy = 0;
        wait_pump(t, via);
        for (i = 0; i < NL; i++) { ldl_lock_poll(&g_locks[i]); busy |= ldl_lock_pending(&g_locks[i]); }
        if (!busy) break;
    }
    for (i = 0; i < NL; i++) ldl_lock_dispose(&g_locks[i]);
    return (double)ops * 1e9 / (double)t0;
}

/* a round: SLICES slices of each way, alternating (the order flips every slice), so that a
   change of the machine's load hits both; the round's rate of each way is over its slices */
#define SLICES 8
static void run(const char *name, target *t, int rounds, long ops) {
    double dr[64], vr[64], ratio[64];
    int r, k;
    if (rounds > 64) rounds = 64;
    (void)inflight(t, 0, ops / 4);        /* warm both paths once */
    (void)inflight(t, 1, ops / 4);
    for (r = 0; r < rounds; r++) {
        double dt = 0, vt = 0;
        for (k = 0; k < SLICES; k++) {
            if ((k + r) % 2) { vt += ops / SLICES / inflight(t, 1, ops / SLICES); dt += ops / SLICES / inflight(t, 0, ops / SLICES); }
            else             { dt += ops / SLICES / inflight(t, 0, ops / SLICES); vt += ops / SLICES / inflight(t, 1, ops / SLICES); }
        }
        dr[r] = ops / dt; vr[r] = ops / vt;
        ratio[r] = vr[r] / dr[r];
        if (getenv("BENCH_VERBOSE")) fprintf(stderr, "%s round %d: direct %.0f view %.0f (%.3f)\n", name, r, dr[r], vr[r], ratio[r]);
    }
    printf("%s %.0f %.0f %.4f\n", name, median(dr, rounds), median(vr, rounds), median(ratio, rounds));
    fflush(stdout);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    long ops = argc > 2 ? atol(argv[2]) : 20000;
    rs_server s;
    redisContext *c;
    ldl_redis_async ra;
    PGconn *pc;
    ldl_pg pg;
    ldl_pg_async pa;
    target t;
    st_ignore_sigpipe();
    g_aa = getenv("BENCH_VIEW_AA") && atoi(getenv("BENCH_VIEW_AA")) == 1;
    ldl_scope_init(&g_root, g_pool, 2);

    if (rs_start(&s, "bview", 0) != 0) { fprintf(stderr, "bench_view: redis-server did not start\n"); return 1; }
    c = redisConnectNonBlock("127.0.0.1", s.port);
    if (!c || ldl_redis_async_init(&ra, c, "bview", g_rreq, 2 * NL + 64) != LDL_OK) { fprintf(stderr, "redis init\n"); return 1; }
    memset(&t, 0, sizeof t);
    t.redis = 1; t.ra = &ra;
    ldl_view_redis_async(&t.v, &ra);
    run("redis", &t, rounds, ops);
    redisFree(c);
    rs_stop(&s);

    pc = pgt_connect("options=-csynchronous_commit=off");
    if (PQstatus(pc) != CONNECTION_OK || ldl_pg_init(&pg, pc, "bview_lease") != LDL_OK ||
        ldl_pg_async_init(&pa, &pg, g_preq, 2 * NL + 64) != LDL_OK) { fprintf(stderr, "pg init: %s\n", ldl_pg_why(&pg)); return 1; }
    memset(&t, 0, sizeof t);
    t.redis = 0; t.pa = &pa;
    ldl_view_pg_async(&t.v, &pa);
    run("pg", &t, rounds, ops);
    PQfinish(pc);
    return 0;
}
