/* pg_fence_build.c -- the fenced-write section of the PG adapter compiles clean as
 * C99 (gcc, clang, -Wconversion -Wshadow), C11, C++17, with LDL_STATIC and with
 * LDL_NO_ASYNC, and answers bad arguments without a server (nothing is sent).
 * Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#include "tests/check.h"

int main(void)
{
    ldl_pg p;
    PGconn *dead = PQconnectdb("host=127.0.0.1 port=1 connect_timeout=1");

    CHECK(ldl_pg_fence(NULL, "r", 1) == LDL_EINVAL);
    memset(&p, 0, sizeof p);
    CHECK(ldl_pg_fence(&p, "r", 1) == LDL_EINVAL);                 /* never initialised */
    CHECK(strstr(ldl_pg_why(&p), "LDL_PG_FENCE") != NULL);
    CHECK(strcmp(ldl_pg_fence_sql(&p), "") == 0);
    CHECK(strcmp(ldl_pg_fence_sql(NULL), "") == 0);
    CHECK(ldl_pg_init_ex(&p, dead, NULL, LDL_PG_FENCE) == LDL_ESTORE);  /* no server */
    CHECK(ldl_pg_fence(&p, "r", 1) == LDL_EINVAL);                 /* init failed: not usable */
    CHECK(ldl_pg_init_ex(&p, dead, "bad\"name", LDL_PG_FENCE) == LDL_EINVAL);
    CHECK(ldl_pg_init_ex(&p, dead, NULL, LDL_PG_FENCE | 4u) == LDL_EINVAL);
    CHECK(ldl_pg_init_ex(&p, dead, NULL, LDL_PG_FENCE | LDL_PG_UNNAMED) == LDL_ESTORE);
    /* a fence-ready ldl_pg on a dead connection: bad arguments first, then the connection */
    p._fence = 1;
    p._conn = dead;
    CHECK(ldl_pg_fence(&p, NULL, 1) == LDL_EINVAL);
    CHECK(ldl_pg_fence(&p, "", 1) == LDL_EINVAL);
    CHECK(ldl_pg_fence(&p, "r", 0) == LDL_EINVAL);
    CHECK(ldl_pg_fence(&p, "r", -5) == LDL_EINVAL);
    CHECK(ldl_pg_fence(&p, "r", INT64_MIN) == LDL_EINVAL);
    CHECK(ldl_pg_fence(&p, "r", INT64_MAX) == LDL_ESTORE);         /* valid: the connection is down */
    PQfinish(dead);
    return chk_report();
}
