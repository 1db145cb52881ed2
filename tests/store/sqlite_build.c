/* sqlite_build.c -- the SQLite adapter compiles clean as C99 (gcc, clang), as C++17 and
 * with LDL_STATIC, and answers bad arguments before it touches any file. No database
 * file is written. Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"
#include "tests/check.h"

int main(void)
{
    static const char *bad[] = { "", "bad\"name", "x;y", "a b", "1abc", "s.t", "sqlite_x", "SQLITE_master",
        "caf\xc3\xa9", "a234567890123456789012345678901234567890123456789012345678901234" };
    ldl_sqlite q;
    ldl_store s;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 9;
    sqlite3 *db = NULL;
    size_t i;

    CHECK(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(ldl_sqlite_init(&q, NULL, NULL) == LDL_EINVAL && ldl_sqlite_why(&q)[0] != '\0');
    CHECK(ldl_sqlite_init(NULL, db, NULL) == LDL_EINVAL);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(ldl_sqlite_init(&q, db, bad[i]) == LDL_EINVAL);
        CHECK(ldl_sqlite_open(&q, "/nonexistent/x.db", bad[i], LDL_SQLITE_CREATE) == LDL_EINVAL);
    }
    CHECK(ldl_sqlite_open(&q, NULL, NULL, 0) == LDL_EINVAL);
    CHECK(ldl_sqlite_open(&q, "", NULL, 0) == LDL_EINVAL);
    CHECK(ldl_sqlite_open(&q, "/nonexistent/x.db", NULL, 16) == LDL_EINVAL);    /* unknown flag */
    CHECK(ldl_sqlite_open(&q, "/nonexistent/x.db", NULL, LDL_SQLITE_INSPECT | LDL_SQLITE_FAST) == LDL_EINVAL);
    CHECK(ldl_sqlite_open(&q, "/nonexistent/x.db", NULL, LDL_SQLITE_INSPECT) == LDL_ESTORE);
    CHECK(strstr(ldl_sqlite_why(&q), "no such store") != NULL);
    CHECK(ldl_sqlite_open(&q, "/nonexistent/x.db", NULL, 0) == LDL_ESTORE);
    CHECK(strstr(ldl_sqlite_why(&q), "LDL_SQLITE_CREATE") != NULL);
    CHECK(ldl_sqlite_db(&q) == NULL);
    /* the store view of an ldl_sqlite that failed init */
    s = ldl_sqlite_store(&q);
    CHECK(s.acquire && s.renew && s.release && s.ctx == &q);
    CHECK(s.acquire(s.ctx, "k", 1000, &t) < 0 && t == 0);
    CHECK(s.acquire(s.ctx, "k", 1000, NULL) < 0);
    CHECK(s.acquire(s.ctx, NULL, 1000, &t) < 0);
    CHECK(s.acquire(s.ctx, "k", 0, &t) < 0);
    CHECK(s.acquire(s.ctx, "", 1000, &t) < 0);
    CHECK(s.renew(s.ctx, "k", 5, 1000) < 0);
    CHECK(s.release(s.ctx, "k", 5) < 0);
    CHECK(s.renew(s.ctx, "k", 0, 1000) == 0 && s.release(s.ctx, "k", -3) == 0);
    x = ldl_sqlite_ext(&q);
    CHECK(!x.acquire_owned && !x.inspect && !x.ctx);
    CHECK(ldl_sqlite_fence(&q, "r", 1) == LDL_EINVAL);
    CHECK(ldl_sqlite_fence(NULL, "r", 1) == LDL_EINVAL);
    CHECK(ldl_sqlite_check_durability(&q) == LDL_EINVAL);
    CHECK(ldl_sqlite_set_busy_ms(&q, 0) == LDL_EINVAL && ldl_sqlite_set_busy_ms(&q, 60001) == LDL_EINVAL);
    CHECK(ldl_sqlite_set_busy_ms(&q, 50) == LDL_OK && ldl_sqlite_set_busy_ms(NULL, 50) == LDL_EINVAL);
    CHECK(ldl_sqlite_why(NULL)[0] != '\0');
    ldl_sqlite_close(&q);
    ldl_sqlite_close(&q);          /* idempotent */
    ldl_sqlite_close(NULL);
    s = ldl_sqlite_store(NULL);
    CHECK(!s.acquire && !s.renew && !s.release && !s.ctx);
    (void)h;
#ifndef LDL_NO_ASYNC
    {
        ldl_async_store as = ldl_sqlite_async_store(&q);
        ldl_store_ext ax = ldl_sqlite_async_ext(&q);
        CHECK(as.acquire && as.renew && as.release && as.cancel && as.ctx == &q);
        CHECK(!ax.submit_owned && !ax.ctx);          /* q failed init */
    }
#endif
    CHECK(LDL_SQLITE_POWER_SAFE == 2 && LDL_SQLITE_CRASH_SAFE == 1 && LDL_SQLITE_NOT_SAFE == 0);
    sqlite3_close(db);
    return chk_report();
}
