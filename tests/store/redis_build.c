/* tests/store/redis_build.c -- the Redis adapter builds in every language and option it
 * claims (C99, C11, C++17, LDL_STATIC, LDL_NO_ASYNC, -Wconversion) and validates its arguments before it
 * touches the connection, in both views. Needs no server: the contexts point at a closed port. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

int main(void)
{
    struct timeval tv = { 0, 200000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", 1, tv);   /* port 1: refused */
    ldl_redis r;
    ldl_store s;
    char why[128];
    int64_t t = -777;

    CHECK(c != NULL && c->err != 0);
    CHECK(ldl_redis_init(&r, NULL, NULL) == LDL_EINVAL);
    CHECK(ldl_redis_init(&r, c, NULL) == LDL_OK);
    s = ldl_redis_store(&r);
    CHECK(s.acquire != NULL && s.renew != NULL && s.release != NULL && s.ctx == (void *)&r);
    CHECK(s.acquire(s.ctx, "k", 100, &t) == LDL_ESTORE && t == -777);   /* failed context */
    CHECK(s.renew(s.ctx, "k", 1, 100) == LDL_ESTORE);
    CHECK(s.release(s.ctx, "k", 1) == LDL_ESTORE);
    CHECK(s.acquire(s.ctx, "", 100, &t) == LDL_EINVAL);
    CHECK(ldl_redis_check_durability(&r, why, sizeof why) == LDL_ESTORE && why[0] != 0);
    {   /* and through a lock: no grant, IDLE, nothing crashes */
        ldl_scope root, pool[2];
        ldl_lock lk;
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        ldl_scope_init(&root, pool, 2);
        d.container = ldl_scope_container(&root);
        d.key = "k";
        d.ttl_ms = 300;
        d.store = &s;
        CHECK(ldl_lock_init(&lk, &d) == LDL_OK);
        CHECK(ldl_lock_acquire(&lk) == 0 && ldl_lock_state(&lk) == LDL_IDLE);
        ldl_lock_dispose(&lk);
    }
#ifndef LDL_NO_ASYNC
    {   /* the non-blocking view on a context that failed to connect: nothing waits, no grant */
        redisContext *nb = redisConnectNonBlock("127.0.0.1", 1);
        ldl_redis_async ra;
        ldl_redis_req reqs[4];
        ldl_async_store as;
        int ev = -1;
        CHECK(ldl_redis_async_init(&ra, c, NULL, reqs, 4) == LDL_EINVAL);     /* blocking */
        CHECK(ldl_redis_async_init(&ra, nb, "a:b", reqs, 4) == LDL_EINVAL);   /* prefix */
        CHECK(ldl_redis_async_init(&ra, nb, NULL, reqs, 0) == LDL_EINVAL);    /* no pool */
        CHECK(nb != NULL && ldl_redis_async_init(&ra, nb, NULL, reqs, 4) == LDL_OK);
        as = ldl_redis_async_store(&ra);
        CHECK(as.acquire && as.renew && as.release && as.cancel && as.ctx == (void *)&ra);
        if (nb && !nb->err) {                    /* connect refused: seen by the pump */
            int i, rc = 0;
            for (i = 0; i < 200 && rc >= 0; i++) { rc = ldl_redis_async_pump(&ra); if (rc >= 0) { struct timespec ts = { 0, 1000000L }; nanosleep(&ts, NULL); } }
            CHECK(rc < 0);
        } else {
            CHECK(ldl_redis_async_pump(&ra) < 0);
        }
        CHECK(ldl_redis_async_fd(&ra, &ev) == -1 && ev == 0);
        CHECK(ldl_redis_async_why(&ra)[0] != 0);
        CHECK(ldl_redis_async_stats(&ra) != NULL && ldl_redis_async_stats(&ra)->live == 0);
        CHECK(ldl_redis_async_stalled_ms(&ra) == 0);
        {
            ldl_scope root, pool[2];
            ldl_lock lk;
            ldl_lock_desc d;
            memset(&d, 0, sizeof d);
            ldl_scope_init(&root, pool, 2);
            d.container = ldl_scope_container(&root);
            d.key = "k";
            d.ttl_ms = 300;
            d.async_store = &as;
            CHECK(ldl_lock_init(&lk, &d) == LDL_OK);
            CHECK(ldl_lock_acquire(&lk) == 0 && ldl_lock_state(&lk) == LDL_IDLE);   /* submit refused */
            ldl_lock_dispose(&lk);
        }
        if (nb) redisFree(nb);
    }
#endif
    if (c) redisFree(c);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
