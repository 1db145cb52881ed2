/* pg_build.c -- the PG adapter compiles clean as C99 (gcc, clang), as C++17,
 * with LDL_STATIC and with LDL_NO_ASYNC, and answers bad arguments without a server. No server needed.
 * Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#include "tests/check.h"

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
    /* the strict token parser (private; reached through the implementation) */
    {
        static const char *bad[] = { "", "0", "00", "01", "007", "-1", "+1", " 1", "1 ", "1a", "0x10",
                                     "9223372036854775808", "10000000000000000000", "99999999999999999999" };
        size_t i;
        int64_t v = 5;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(ldl__pg_parse_token(bad[i], &v) != 0 && v == 5);
        CHECK(ldl__pg_parse_token(NULL, &v) != 0);
        CHECK(ldl__pg_parse_token("1", &v) == 0 && v == 1);
        CHECK(ldl__pg_parse_token("10", &v) == 0 && v == 10);
        CHECK(ldl__pg_parse_token("9223372036854775807", &v) == 0 && v == INT64_MAX);
    }
    CHECK(ldl_pg_init_ex(&p, dead, NULL, 2) == LDL_EINVAL);           /* unknown flag */
    CHECK(ldl_pg_why(&p)[0] != '\0' && ldl_pg_why(NULL)[0] != '\0');
#ifndef LDL_NO_ASYNC
    {   /* the non-blocking view without a server */
        ldl_pg_req reqs[2];
        ldl_pg_async pa;
        ldl_async_store as;
        int ev = 7;
        CHECK(ldl_pg_async_init(&pa, &p, reqs, 2) == LDL_EINVAL);     /* p failed init */
        CHECK(ldl_pg_async_init(NULL, &p, reqs, 2) == LDL_EINVAL);
        CHECK(ldl_pg_async_pump(&pa) < 0);
        CHECK(ldl_pg_async_fd(&pa, &ev) == -1 && ev == 0);
        as = ldl_pg_async_store(&pa);
        CHECK(as.acquire && as.renew && as.release && as.cancel && as.ctx == &pa);
        as = ldl_pg_async_store(NULL);
        CHECK(!as.acquire && !as.cancel && !as.ctx);
        CHECK(LDL_WANT_READ == 1 && LDL_WANT_WRITE == 2);
        /* v0.3: why and stats in every language and option */
        CHECK(strstr(ldl_pg_async_why(&pa), "not initialised") != NULL);
        CHECK(ldl_pg_async_why(NULL)[0] != '\0' && ldl_pg_async_stats(NULL) == NULL);
        CHECK(ldl_pg_async_stats(&pa) != NULL && ldl_pg_async_stats(&pa)->submitted == 0 &&
              ldl_pg_async_stats(&pa)->live == 0);
        CHECK(ldl_pg_async_drop(&pa) == 0 && ldl_pg_async_rebind(&pa, dead) == LDL_EINVAL);
    }
#endif
    s = ldl_pg_store(NULL);
    CHECK(!s.acquire && !s.renew && !s.release && !s.ctx);
    PQfinish(dead);
    return chk_report();
}
