/* bench_store.h - the lifecycle loop shared by bench_redis.c and bench_pg.c:
   one ldl_lock over a real store, acquire+release (2 round trips) or a full
   ldl_lock_run() (the same 2 round trips plus the scope work), timed for a
   fixed number of lifecycles after a warm-up. Prints "<mode> <lifecycles/s>". */
#ifndef BENCH_STORE_H
#define BENCH_STORE_H
#include "lite_di_lock.h"
#include "bench_util.h"
#include <stdio.h>

static int bs_body(void *scope, void *user) {
    const int64_t *f = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
    *(int64_t *)user += f ? *f : 0;
    return f ? 0 : 1;
}

/* ops lifecycles; mode "acqrel" or "run"; answers lifecycles per second, < 0 on a failure */
static double bs_lifecycles(const ldl_store *st, const char *key, const char *mode, long ops) {
    static ldl_scope root, pool[2];
    ldl_lock lock;
    ldl_lock_desc d;
    int64_t fsum = 0;
    long i;
    uint64_t t0 = 0;
    int run = strcmp(mode, "run") == 0;
    memset(&d, 0, sizeof d);
    if (ldl_scope_init(&root, pool, 2) != LDL_OK) return -1;
    d.container = ldl_scope_container(&root);
    d.key = key;
    d.ttl_ms = 30000;
    d.store = st;
    if (ldl_lock_init(&lock, &d) != LDL_OK) { fprintf(stderr, "init: %s\n", ldl_lock_why(&lock)); return -1; }
    for (i = -ops / 10 - 1; i < ops; i++) {        /* the first tenth warms up */
        if (i == 0) t0 = bench_ns();
        if (run) {
            int rc = ldl_lock_run(&lock, bs_body, &fsum, NULL);
            if (rc != LDL_OK) { fprintf(stderr, "run: %s\n", ldl_strerror(rc)); return -1; }
        } else {
            if (ldl_lock_acquire(&lock) != 1) { fprintf(stderr, "acquire failed\n"); return -1; }
            if (ldl_lock_release(&lock) != 1) { fprintf(stderr, "release failed\n"); return -1; }
        }
    }
    {
        double r = (double)ops * 1e9 / (double)(bench_ns() - t0);
        ldl_lock_dispose(&lock);
        return r;
    }
}
#endif
