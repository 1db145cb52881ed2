/* examples/epoll_leases.c -- 1,000 leases on ONE network store from ONE epoll loop, through
 * the one interface every adapter fills (adapters/lite_di_lock_view.h; docs/event-loops.md).
 *
 *   make examples-view
 *   ./build/view/epoll_leases --store redis --addr 127.0.0.1:6379
 *   ./build/view/epoll_leases --store pg    --addr "host=127.0.0.1 dbname=postgres"
 *   ./build/view/epoll_leases --store etcd  --addr http://127.0.0.1:2379
 *
 * Options: --leases N (1000), --seconds S (5), --ttl MS (6000), --et (edge-triggered epoll;
 * default level-triggered), --rebind S (after S seconds, at a moment when no acquire or
 * release is in flight -- a cut one leaves its key held in the store until its TTL -- rebind
 * the view to a NEW connection: the fd changes and is re-registered; a renewal it cuts is
 * sent again after ride_out_ms), --check (exit 1 unless every lease is held at the
 * end, the loop woke on the fds registered after a rebind, and every lease was released),
 * --churn (every frame one held lease is released, as a room closing, until 2 s before the
 * end; the loop asks for it again within a second).
 *
 * The store is chosen on ONE line (attach_store); after it nothing in the loop knows which
 * store it drives: it asks the view for its fds and timeout, waits in epoll, pumps, polls
 * every lock and pumps again (the requests the polls queued go out now, not a frame later).
 * One ldl_scope serves every lock. At 60 frames a second it measures the CPU time of each
 * frame (CLOCK_THREAD_CPUTIME_ID: the loop's work, not its waiting) and prints p50 / p99. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include "adapters/lite_di_lock_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define MAX_LEASES 4000
#define MAX_FDS    64
#define FRAME_US   16667

static uint64_t clock_us(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ the store-specific part */
static const char *g_addr;
static void *g_conn;                          /* the connection the view runs on now */
static void *(*g_fresh)(void);               /* a NEW connection for a rebind */
static void (*g_free)(void *conn);           /* close one the view no longer uses */

static ldl_redis_async g_ra;
static ldl_redis_req   g_rreq[2 * MAX_LEASES + 64];
static void *redis_fresh(void) {
    char host[64];
    const char *c = strrchr(g_addr, ':');
    size_t n = c ? (size_t)(c - g_addr) : 0;
    if (!c || n >= sizeof host) return NULL;
    memcpy(host, g_addr, n); host[n] = 0;
    return redisConnectNonBlock(host, atoi(c + 1));
}
static void redis_free(void *c) { redisFree((redisContext *)c); }

static ldl_pg       g_pg;
static ldl_pg_async g_pa;
static ldl_pg_req   g_preq[2 * MAX_LEASES + 64];
static void *pg_fresh(void) {        /* blocking connect: a real loop would drive PQconnectStart */
    PGconn *c = PQconnectdb(g_addr);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "pg: %s", PQerrorMessage(c)); PQfinish(c); return NULL; }
    return c;
}
static void pg_free(void *c) { PQfinish((PGconn *)c); }

static ldl_etcd       g_etcd[2];
static int            g_etcd_n;
static ldl_etcd_async g_ea;
static ldl_etcd_req   g_ereq[2 * MAX_LEASES + 64];
static void *etcd_fresh(void) {
    ldl_etcd_config cfg;
    ldl_etcd *e = &g_etcd[g_etcd_n++ % 2];
    memset(&cfg, 0, sizeof cfg);
    cfg.endpoints = g_addr;
    cfg.prefix = "epoll/";
    return ldl_etcd_init(e, &cfg) == LDL_OK ? e : NULL;
}
static void etcd_free(void *e) { ldl_etcd_close((ldl_etcd *)e); }

/* the one store-specific step: open, init the adapter's non-blocking view, attach */
static int attach_store(const char *kind, size_t nreq, ldl_view *v) {
    if (strcmp(kind, "redis") == 0) {
        g_fresh = redis_fresh; g_free = redis_free;
        g_conn = redis_fresh();
        return g_conn && ldl_redis_async_init(&g_ra, (redisContext *)g_conn, "epoll", g_rreq, nreq) == LDL_OK
               ? ldl_view_redis_async(v, &g_ra) : LDL_ESTORE;
    }
    if (strcmp(kind, "pg") == 0) {
        g_fresh = pg_fresh; g_free = pg_free;
        g_conn = pg_fresh();
        if (!g_conn || ldl_pg_init(&g_pg, (PGconn *)g_conn, "epoll_lease") != LDL_OK) return LDL_ESTORE;
        return ldl_pg_async_init(&g_pa, &g_pg, g_preq, nreq) == LDL_OK ? ldl_view_pg_async(v, &g_pa) : LDL_ESTORE;
    }
    if (strcmp(kind, "etcd") == 0) {
        g_fresh = etcd_fresh; g_free = etcd_free;
        g_conn = etcd_fresh();
        return g_conn && ldl_etcd_async_init(&g_ea, (ldl_etcd *)g_conn, g_ereq, nreq) == LDL_OK
               ? ldl_view_etcd_async(v, &g_ea) : LDL_ESTORE;
    }
    return LDL_EINVAL;
}

/* ------------------------------------------------------------ epoll: the fds as the view has them now */
static int        g_ep;
static ldl_view_fd g_reg[MAX_FDS];            /* what epoll has registered */
static int        g_nreg;
static int        g_et;                       /* 1: EPOLLET */
static unsigned long g_fd_changes;            /* fds added or removed after the first sync */

static uint32_t epoll_bits(int events) {
    return (uint32_t)(((events & LDL_WANT_READ) ? EPOLLIN : 0) | ((events & LDL_WANT_WRITE) ? EPOLLOUT : 0) |
                      (g_et ? EPOLLET : 0));
}
/* ask the view for its fds and make epoll's set equal to them: DEL what is gone (before
   the caller closes it), MOD what changed, ADD what is new. An fd curl closed and
   reopened under the same number is no longer in epoll: MOD answers ENOENT, so ADD it. */
static void sync_fds(ldl_view *v, int first) {
    ldl_view_fd now[MAX_FDS];
    int n = v->ops->fds(v->self, now, MAX_FDS), i, j;
    struct epoll_event ev;
    if (n < 0) n = 0;
    for (i = 0; i < g_nreg; i++) {
        for (j = 0; j < n && now[j].fd != g_reg[i].fd; j++) { }
        if (j == n) { epoll_ctl(g_ep, EPOLL_CTL_DEL, g_reg[i].fd, &ev); if (!first) g_fd_changes++; }
    }
    for (j = 0; j < n; j++) {
        memset(&ev, 0, sizeof ev);
        ev.events = epoll_bits(now[j].events);
        ev.data.fd = now[j].fd;
        for (i = 0; i < g_nreg && g_reg[i].fd != now[j].fd; i++) { }
        if (i == g_nreg) {
            if (epoll_ctl(g_ep, EPOLL_CTL_ADD, now[j].fd, &ev) != 0 && errno == EEXIST)
                epoll_ctl(g_ep, EPOLL_CTL_MOD, now[j].fd, &ev);
            if (!first) g_fd_changes++;
        } else if (g_reg[i].events != now[j].events) {
            if (epoll_ctl(g_ep, EPOLL_CTL_MOD, now[j].fd, &ev) != 0 && errno == ENOENT)
                epoll_ctl(g_ep, EPOLL_CTL_ADD, now[j].fd, &ev);
        }
    }
    memcpy(g_reg, now, (size_t)n * sizeof now[0]);
    g_nreg = n;
}

/* pump after readiness: edge-triggered, pump again while the pump completes requests (one
   pump reads a bounded amount, and no new edge comes for bytes already in the socket) */
static void pump(ldl_view *v) {
    int k = 0;
    while (v->ops->pump(v->self) > 0 && g_et && ++k < 64) { }
}

/* ------------------------------------------------------------ the loop */
static ldl_lock g_lock[MAX_LEASES];
static char     g_key[MAX_LEASES][16];
static uint32_t g_frame_cpu[60 * 600];
static unsigned long g_lost;
static void on_lost(void *user, int reason) { (void)user; (void)reason; g_lost++; }

int main(int argc, char **argv) {
    const char *kind = "redis";
    int n = 1000, check = 0, churn = 0, i, held = 0, released = 0;
    double seconds = 5, rebind_at = -1;
    uint32_t ttl = 6000;
    ldl_view v;
    ldl_scope root, pool[4];                  /* ONE scope for every lock */
    ldl_lock_desc d;
    uint64_t t0, t_start, end, next, frame = 0, woke_after_rebind = 0, rebinds = 0, all_held = 0;
    size_t nf = 0;
    struct epoll_event evs[MAX_FDS];
    g_addr = "127.0.0.1:6379";
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--store") && i + 1 < argc) kind = argv[++i];
        else if (!strcmp(argv[i], "--addr") && i + 1 < argc) g_addr = argv[++i];
        else if (!strcmp(argv[i], "--leases") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ttl") && i + 1 < argc) ttl = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--rebind") && i + 1 < argc) rebind_at = atof(argv[++i]);
        else if (!strcmp(argv[i], "--et")) g_et = 1;
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--churn")) churn = 1;
        else { fprintf(stderr, "usage: %s --store redis|pg|etcd --addr ADDR [--leases N] [--seconds S] "
                       "[--ttl MS] [--et] [--rebind S] [--churn] [--check]\n", argv[0]); return 2; }
    }
    if (n < 1 || n > MAX_LEASES) { fprintf(stderr, "--leases 1..%d\n", MAX_LEASES); return 2; }

    if (attach_store(kind, (size_t)(2 * n + 64), &v) != LDL_OK) {   /* the only per-store line */
        fprintf(stderr, "epoll_leases: cannot open %s at %s\n", kind, g_addr);
        return 1;
    }
    ldl_scope_init(&root, pool, 4);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&root);
    d.ttl_ms = ttl;
    d.async_store = &v.async;
    d.on_lost = on_lost;
    d.ride_out_ms = ttl / 20;                 /* a renew cut by a rebind is sent again */
    for (i = 0; i < n; i++) {
        snprintf(g_key[i], sizeof g_key[i], "lease-%d", i);
        d.key = g_key[i];
        if (ldl_lock_init(&g_lock[i], &d) != LDL_OK) { fprintf(stderr, "%s\n", ldl_lock_why(&g_lock[i])); return 1; }
        (void)ldl_lock_acquire(&g_lock[i]);   /* 1, 0 or LDL_EINPROGRESS: the loop applies it */
    }
    g_ep = epoll_create1(0);
    v.ops->pump(v.self);                      /* send the acquires */
    sync_fds(&v, 1);

    t0 = t_start = clock_us(CLOCK_MONOTONIC);
    end = t0 + (uint64_t)(seconds * 1e6);
    for (next = t0 + FRAME_US; next <= end; next += FRAME_US, frame++) {
        uint64_t c0 = clock_us(CLOCK_THREAD_CPUTIME_ID), now;
        /* 1. wait until the frame is due, pumping on readiness */
        while ((now = clock_us(CLOCK_MONOTONIC)) < next) {
            long t = (long)((next - now + 999) / 1000), vt = v.ops->timeout_ms(v.self);
            int k;
            if (vt >= 0 && vt < t) t = vt;
            k = epoll_wait(g_ep, evs, MAX_FDS, (int)t);
            if (k > 0 && rebinds) woke_after_rebind += (uint64_t)k;
            pump(&v);
            sync_fds(&v, 0);
        }
        c0 = clock_us(CLOCK_THREAD_CPUTIME_ID) - c0;   /* the waiting costs no CPU */
        /* 2. the frame: pump, poll every lock, pump again (the polls queued renewals) */
        {
            uint64_t w0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
            pump(&v);
            for (i = 0; i < n; i++) {
                if (ldl_lock_poll(&g_lock[i]) == 0 && !ldl_lock_pending(&g_lock[i]) &&
                    (frame % 60) == (uint64_t)(i % 60))
                    (void)ldl_lock_acquire(&g_lock[i]);   /* free or lost: ask again, once a second */
            }
            if (churn && next + 2000000u < end && ldl_lock_held(&g_lock[frame % (uint64_t)n]))
                (void)ldl_lock_release(&g_lock[frame % (uint64_t)n]);   /* a room closes */
            pump(&v);
            sync_fds(&v, 0);
            if (nf < sizeof g_frame_cpu / sizeof g_frame_cpu[0])
                g_frame_cpu[nf++] = (uint32_t)(clock_us(CLOCK_THREAD_CPUTIME_ID) - w0 + c0);
        }
        /* a rebind: the new connection's fd replaces the old one in epoll before it closes */
        if (!all_held) {
            for (i = 0; i < n && ldl_lock_held(&g_lock[i]); i++) { }
            if (i == n) all_held = clock_us(CLOCK_MONOTONIC);
        }
        if (rebind_at >= 0 && !rebinds && clock_us(CLOCK_MONOTONIC) >= t_start + (uint64_t)(rebind_at * 1e6)) {
            for (i = 0; i < n && ldl_lock_state(&g_lock[i]) != LDL_ACQUIRING &&
                               ldl_lock_state(&g_lock[i]) != LDL_RELEASING; i++) { }
            if (i == n) {                     /* quiet: no acquire or release in flight */
                void *old = g_conn, *fresh = g_fresh();
                if (fresh && v.ops->rebind(v.self, fresh) == LDL_OK) {
                    v.ops->pump(v.self);
                    sync_fds(&v, 0);          /* DEL the old fd before it is closed, ADD the new */
                    g_free(old);
                    g_conn = fresh;
                    rebinds++;
                } else fprintf(stderr, "epoll_leases: rebind failed: %s\n", v.ops->why(v.self));
            }
        }
    }
    for (i = 0; i < n; i++) held += ldl_lock_held(&g_lock[i]);
    /* release every lease, answered inside the loop's own pumps */
    for (i = 0; i < n; i++) (void)ldl_lock_release(&g_lock[i]);
    for (t0 = clock_us(CLOCK_MONOTONIC); clock_us(CLOCK_MONOTONIC) - t0 < 5000000u;) {
        int busy = 0;
        pump(&v);
        for (i = 0; i < n; i++) { (void)ldl_lock_poll(&g_lock[i]); busy |= ldl_lock_state(&g_lock[i]) == LDL_RELEASING; }
        sync_fds(&v, 0);
        if (!busy) break;
        (void)epoll_wait(g_ep, evs, MAX_FDS, 5);
    }
    for (i = 0; i < n; i++) { released += ldl_lock_state(&g_lock[i]) == LDL_RELEASED; ldl_lock_dispose(&g_lock[i]); }
    ldl_scope_shutdown(&root);
    qsort(g_frame_cpu, nf, sizeof g_frame_cpu[0], cmp_u32);
    printf("epoll_leases: %s, %d leases, %s-triggered, %.1f s: all held after %.2f s, held %d/%d at the end, "
           "released %d, lost %lu, rebinds %lu, fd changes %lu, wakeups after the rebind %lu\n", v.ops->name, n,
           g_et ? "edge" : "level", seconds, all_held ? (double)(all_held - t_start) / 1e6 : -1.0, held, n, released, g_lost, (unsigned long)rebinds, g_fd_changes,
           (unsigned long)woke_after_rebind);
    printf("frame CPU at 16.7 ms frames: p50 %.3f ms, p99 %.3f ms, max %.3f ms over %lu frames\n",
           nf ? g_frame_cpu[nf / 2] / 1000.0 : 0.0, nf ? g_frame_cpu[nf * 99 / 100] / 1000.0 : 0.0,
           nf ? g_frame_cpu[nf - 1] / 1000.0 : 0.0, (unsigned long)nf);
    v.ops->close(v.self);
    g_free(g_conn);
    close(g_ep);
    if (check && (held != n || released != n ||
                  (rebind_at >= 0 && (rebinds != 1 || g_fd_changes < 1 || woke_after_rebind < 1)))) {
        printf("epoll_leases: CHECK FAILED\n");
        return 1;
    }
    return 0;
}
