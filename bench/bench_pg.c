/* bench_pg.c CONNINFO MODE ARGS -- the PostgreSQL adapter in `make bench` (row 4).
     acqrel OPS | run OPS          lifecycles/s of one ldl_lock, synchronous store
     pipe K SECS [unnamed]         lifecycles/s with K locks in flight on ONE
                                   connection (non-blocking view): every lock
                                   cycles acquire -> held -> release
     frame K SECS [stop]           K locks held on one connection; the cost of one
                                   frame (one pump + K polls) over SECS seconds,
                                   prints "median_us p99_us max_us"; with "stop"
                                   the server backend is SIGSTOPped meanwhile */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define LDL_PG_IMPLEMENTATION
#include "bench_store.h"
#include "adapters/lite_di_lock_pg.h"
#include <poll.h>
#include <signal.h>
#include <sys/types.h>

typedef struct bp_lock {
    ldl_scope root, pool[2];
    ldl_lock  lock;
} bp_lock;

static int bp_init(bp_lock *b, const ldl_async_store *as, const char *key, uint32_t ttl, uint32_t hb) {
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    ldl_scope_init(&b->root, b->pool, 2);
    d.container = ldl_scope_container(&b->root);
    d.key = key;
    d.ttl_ms = ttl;
    d.heartbeat_ms = hb;
    d.async_store = as;
    if (ldl_lock_init(&b->lock, &d) != LDL_OK) { fprintf(stderr, "lock init: %s\n", ldl_lock_why(&b->lock)); return -1; }
    return 0;
}

static int bp_cmp_u(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    PGconn *c;
    ldl_pg p;
    ldl_pg_async pa;
    ldl_async_store as;
    ldl_pg_req *reqs;
    bp_lock *ls;
    long k, i;
    double secs;
    char key[40];
    if (argc < 4) { fprintf(stderr, "usage: bench_pg CONNINFO acqrel|run OPS | pipe|frame K SECS [unnamed|stop]\n"); return 2; }
    c = PQconnectdb(argv[1]);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "bench_pg: connect: %s", PQerrorMessage(c)); return 1; }
    if (strcmp(argv[2], "acqrel") == 0 || strcmp(argv[2], "run") == 0) {
        ldl_store st;
        double rate;
        if (ldl_pg_init(&p, c, "ldl_lease") != LDL_OK) { fprintf(stderr, "bench_pg: init: %s\n", ldl_pg_why(&p)); return 1; }
        st = ldl_pg_store(&p);
        rate = bs_lifecycles(&st, "bench-c", argv[2], atol(argv[3]));
        PQfinish(c);
        if (rate < 0) return 1;
        printf("%.1f\n", rate);
        return 0;
    }
    if (argc < 5) return 2;
    k = atol(argv[3]);
    secs = atof(argv[4]);
    if (k < 1 || k > 100000 || secs <= 0) return 2;
    if (ldl_pg_init_ex(&p, c, "ldl_lease", argc > 5 && strcmp(argv[5], "unnamed") == 0 ? LDL_PG_UNNAMED : 0) != LDL_OK) {
        fprintf(stderr, "bench_pg: init: %s\n", ldl_pg_why(&p));
        return 1;
    }
    reqs = (ldl_pg_req *)calloc((size_t)k * 2, sizeof *reqs);
    ls = (bp_lock *)calloc((size_t)k, sizeof *ls);
    if (!reqs || !ls || ldl_pg_async_init(&pa, &p, reqs, (size_t)k * 2) != LDL_OK) { fprintf(stderr, "bench_pg: async init\n"); return 1; }
    as = ldl_pg_async_store(&pa);
    for (i = 0; i < k; i++) {
        snprintf(key, sizeof key, "bench-%s-%ld", argv[2], i);
        if (bp_init(&ls[i], &as, key, 10000, 3000) != 0) return 1;
    }
    if (strcmp(argv[2], "pipe") == 0) {
        uint64_t t0 = bench_ns(), end = t0 + (uint64_t)(secs * 1e9), warm = t0 + (uint64_t)(secs * 1e8);
        long done = 0;
        int counting = 0;
        while (bench_ns() < end) {
            int got = ldl_pg_async_pump(&pa);
            if (got < 0) { fprintf(stderr, "bench_pg: pump: %s\n", ldl_pg_why(&p)); return 1; }
            if (got == 0) {             /* nothing answered: wait on the socket, as a loop would */
                int ev = 0, fd = ldl_pg_async_fd(&pa, &ev);
                struct pollfd pf;
                pf.fd = fd;
                pf.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
                pf.revents = 0;
                if (fd >= 0 && ev) (void)poll(&pf, 1, 1);
            }
            if (!counting && bench_ns() >= warm) { counting = 1; done = 0; t0 = bench_ns(); }
            for (i = 0; i < k; i++) {
                ldl_lock *l = &ls[i].lock;
                int s = ldl_lock_state(l);
                if (s == LDL_IDLE || s == LDL_RELEASED) {
                    if (!ldl_lock_pending(l)) (void)ldl_lock_acquire(l);
                } else if (s == LDL_RELEASING) {
                    if (ldl_lock_release(l) != LDL_EINPROGRESS) done++;
                } else if (ldl_lock_poll(l) == 1) {
                    int rc = ldl_lock_release(l);
                    if (rc != LDL_EINPROGRESS) done++;
                }
            }
        }
        printf("%.1f\n", (double)done * 1e9 / (double)(bench_ns() - t0));
    } else if (strcmp(argv[2], "frame") == 0) {
        uint64_t *f = (uint64_t *)malloc(sizeof *f * 200000), t0, end;
        long n = 0, held = 0;
        int pid = PQbackendPID(c), stop = argc > 5 && strcmp(argv[5], "stop") == 0;
        for (i = 0; i < k; i++) (void)ldl_lock_acquire(&ls[i].lock);
        end = bench_ns() + 20000000000ull;
        while (held < k && bench_ns() < end) {
            (void)ldl_pg_async_pump(&pa);
            for (held = 0, i = 0; i < k; i++) held += ldl_lock_poll(&ls[i].lock) == 1;
        }
        if (held < k || !f) { fprintf(stderr, "bench_pg: only %ld of %ld held\n", held, k); return 1; }
        if (stop && kill(pid, SIGSTOP) != 0) { perror("bench_pg: SIGSTOP"); return 1; }
        end = bench_ns() + (uint64_t)(secs * 1e9);
        while ((t0 = bench_ns()) < end && n < 200000) {
            (void)ldl_pg_async_pump(&pa);
            for (i = 0; i < k; i++) BENCH_KEEP(ldl_lock_poll(&ls[i].lock));
            f[n++] = bench_ns() - t0;
            {   /* a frame every ~1 ms, as a loop waiting on its fd would */
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
        if (stop) kill(pid, SIGCONT);
        qsort(f, (size_t)n, sizeof *f, bp_cmp_u);
        printf("%.1f %.1f %.1f\n", (double)f[n / 2] / 1e3, (double)f[n * 99 / 100] / 1e3, (double)f[n - 1] / 1e3);
        free(f);
    } else {
        return 2;
    }
    for (i = 0; i < k; i++) ldl_lock_dispose(&ls[i].lock);
    for (i = 0; i < 200; i++) {         /* let the fire-and-forget releases out */
        if (ldl_pg_async_pump(&pa) < 0) break;
        {
            int ev = 0;
            if (ldl_pg_async_fd(&pa, &ev) >= 0 && ev == 0) break;
        }
        {
            struct timespec ts = { 0, 2000000 };
            nanosleep(&ts, NULL);
        }
    }
    PQfinish(c);
    free(ls);
    free(reqs);
    return 0;
}
