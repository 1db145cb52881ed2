/* tests/store/redis_cluster_build.c -- the cluster adapter builds in every language and option
 * it claims and refuses bad arguments before any I/O; its CRC16 matches the cluster spec's
 * reference value. Needs no server: the seed is a closed port. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include <stdio.h>

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static ldl_redis_cluster rc;
#ifndef LDL_NO_ASYNC
static ldl_redis_cluster_async ra;
static ldl_redis_cluster_req reqs[4];
#endif

int main(void)
{
    int64_t t = -5;
    ldl_store s;
    /* the cluster spec's example: "123456789" hashes to 0x31C3; slots of well-known names */
    CHECK(ldl_redis_cluster_keyslot("123456789", 9) == (0x31C3 & 16383));
    CHECK(ldl_redis_cluster_keyslot("{user1000}.following", 21) == ldl_redis_cluster_keyslot("user1000", 8));
    CHECK(ldl_redis_cluster_keyslot("foo{}{bar}", 10) != ldl_redis_cluster_keyslot("bar", 3));
    CHECK(ldl_redis_cluster_init(&rc, "127.0.0.1:1", "a:b", 100) == LDL_EINVAL);
    CHECK(ldl_redis_cluster_init(&rc, "nohostport", NULL, 100) == LDL_EINVAL);
    CHECK(ldl_redis_cluster_init(&rc, "127.0.0.1:1", NULL, 0) == LDL_EINVAL);
    CHECK(ldl_redis_cluster_init(&rc, "127.0.0.1:1", NULL, 100) == LDL_ESTORE);   /* refused */
    CHECK(ldl_redis_cluster_why(&rc)[0] != 0);
    s = ldl_redis_cluster_store(&rc);
    CHECK(s.acquire(s.ctx, "", 100, &t) == LDL_EINVAL && t == -5);
    CHECK(s.acquire(s.ctx, "k", 0, &t) == LDL_EINVAL);
    CHECK(s.acquire(s.ctx, "k", 100, &t) == LDL_ESTORE && t == -5);              /* no map */
    ldl_redis_cluster_free(&rc);
#ifndef LDL_NO_ASYNC
    CHECK(ldl_redis_cluster_async_init(&ra, "127.0.0.1:1", NULL, 100, NULL, 4) == LDL_EINVAL);
    CHECK(ldl_redis_cluster_async_init(&ra, "127.0.0.1:1", NULL, 100, reqs, 4) == LDL_ESTORE);
    CHECK(ldl_redis_cluster_async_pump(&ra) == 0);
    ldl_redis_cluster_async_free(&ra);
#endif
    printf("redis_cluster_build: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
