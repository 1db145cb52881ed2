/* pg_build.c -- the PG adapter compiles clean as C99 (gcc, clang), as C++17 and
 * with LDL_STATIC, and answers bad arguments without a server. No server needed.
 * Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

int main(void)
{
    ldl_pg p;
    ldl_store s;
    int64_t t = 9;
    PGconn *dead = PQconnectdb("host=127.0.0.1 port=1 connect_timeout=1");

    CHECK(ldl_pg_init(&p, NULL, NULL) == LDL_EINVAL);
    CHECK(ldl_pg_init(NULL, dead, NULL) == LDL_EINVAL);
    CHECK(ldl_pg_init(&p, dead, "bad\"name") == LDL_EINVAL);
    CHECK(ldl_pg_init(&p, dead, "x;y") == LDL_EINVAL);
    CHECK(ldl_pg_init(&p, dead, "") == LDL_EINVAL);
    CHECK(ldl_pg_init(&p, dead, NULL) == LDL_ESTORE);        /* valid name, no server */
    CHECK(ldl_pg_init(&p, dead, "s.t") == LDL_ESTORE);
    s = ldl_pg_store(&p);
    CHECK(s.acquire && s.renew && s.release && s.ctx == &p);
    CHECK(s.acquire(s.ctx, "k", 1000, &t) < 0 && t == 0);
    CHECK(s.acquire(s.ctx, "k", 1000, NULL) < 0);
    CHECK(s.acquire(s.ctx, NULL, 1000, &t) < 0);
    CHECK(s.acquire(s.ctx, "k", 0, &t) < 0);
    CHECK(s.renew(s.ctx, "k", 5, 1000) < 0);
    CHECK(s.release(s.ctx, "k", 5) < 0);
    s = ldl_pg_store(NULL);
    CHECK(!s.acquire && !s.renew && !s.release && !s.ctx);
    PQfinish(dead);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
