/* tests/pkg/consumer_redis.c HOST PORT KEY -- the Redis adapter as installed or
   as a subproject: "lite_di_lock_redis.h" from the include path the build
   system gives (it pulls in <lite_di_lock.h> and <hiredis/hiredis.h>). One
   lifecycle on a real redis-server, two connections (one per lock). */
#define _POSIX_C_SOURCE 200809L
#ifndef LDL_PKG_USE_LIB
#define LITE_DI_LOCK_IMPLEMENTATION
#endif
#include <lite_di_lock.h>
#define LDL_REDIS_IMPLEMENTATION
#include "lite_di_lock_redis.h"
#include "lifecycle.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct timeval tv = { 2, 0 };
    redisContext *c1, *c2;
    ldl_redis r1, r2;
    ldl_store s1, s2;
    ldl_clock clock = { 0 };    /* the built-in monotonic clock */
    int rc;
    if (argc != 4) { fprintf(stderr, "usage: %s HOST PORT KEY\n", argv[0]); return 2; }
    c1 = redisConnectWithTimeout(argv[1], atoi(argv[2]), tv);
    c2 = redisConnectWithTimeout(argv[1], atoi(argv[2]), tv);
    if (!c1 || c1->err || !c2 || c2->err) { puts("FAIL connect"); return 1; }
    redisSetTimeout(c1, tv);
    redisSetTimeout(c2, tv);
    if (ldl_redis_init(&r1, c1, "pkg") != LDL_OK) { printf("FAIL init: %s\n", ldl_redis_why(&r1)); return 1; }
    if (ldl_redis_init(&r2, c2, "pkg") != LDL_OK) { printf("FAIL init: %s\n", ldl_redis_why(&r2)); return 1; }
    s1 = ldl_redis_store(&r1);
    s2 = ldl_redis_store(&r2);
    rc = ldl_pkg_lifecycle("redis", &s1, &s2, argv[3], clock);
    redisFree(c1);
    redisFree(c2);
    return rc;
}
