/* tests/store/view_build.c -- adapters/lite_di_lock_view.h builds in every language and option
 * it claims (C99 with -Wconversion -Wshadow, C11, clang, C++17, LDL_STATIC) with all five
 * adapters, included twice (once after the MemoryStore alone, once after every adapter: each
 * adapter's attach functions are defined once), and attaching answers LDL_EINVAL for NULLs.
 * Needs no server. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "adapters/lite_di_lock_view.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"
#include "adapters/lite_di_lock_view.h"
#include <stdio.h>

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

int main(void)
{
    static ldl_memstore_slot slots[4];
    ldl_memstore ms;
    ldl_clock zero;
    ldl_view v;
    memset(&zero, 0, sizeof zero);
    CHECK(ldl_memstore_init(&ms, slots, 4, zero) == LDL_OK);
    CHECK(ldl_view_memstore(&v, &ms) == LDL_OK && v.ops->nonblocking == 0);
    CHECK(ldl_view_redis(&v, NULL) == LDL_EINVAL && ldl_view_redis_async(NULL, NULL) == LDL_EINVAL);
    CHECK(ldl_view_redis_cluster(&v, NULL) == LDL_EINVAL && ldl_view_redis_cluster_async(&v, NULL) == LDL_EINVAL);
    CHECK(ldl_view_pg(&v, NULL) == LDL_EINVAL && ldl_view_pg_async(&v, NULL) == LDL_EINVAL);
    CHECK(ldl_view_etcd(&v, NULL) == LDL_EINVAL && ldl_view_etcd_async(&v, NULL) == LDL_EINVAL);
    CHECK(ldl_view_sqlite(&v, NULL) == LDL_EINVAL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
