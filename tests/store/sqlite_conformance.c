/* sqlite_conformance.c -- the shared store conformance body (tests/store/conformance.h)
 * against a SQLite file in a temp dir (argv[1]: its parent, e.g. /dev/shm), through two
 * connections (two clients of one store). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"
#include "tests/store/sqlite_common.h"

int main(int argc, char **argv)
{
    char path[600];
    ldl_sqlite qa = {0}, qb = {0};
    sqlite3 *db;
    conf_env e;
    int rc;

    sqt_setup(argc, argv, "ldl-sqlite-conf");
    st_case("conformance body", 4 * SQT_CASE_S);   /* one case: the shared body, ~70 calls */
    sqt_path(path, sizeof path, "conf.db");
    rc = ldl_sqlite_open(&qa, path, NULL, LDL_SQLITE_CREATE);
    ST_CHECK(rc == LDL_OK, "ldl_sqlite_open a = %d (%s)", rc, ldl_sqlite_why(&qa));
    /* b on a connection of the caller's */
    db = sqt_open(path, SQLITE_OPEN_READWRITE);
    rc = ldl_sqlite_init(&qb, db, NULL);
    ST_CHECK(rc == LDL_OK, "ldl_sqlite_init b = %d (%s)", rc, ldl_sqlite_why(&qb));
    if (st_failed()) return st_report();

    memset(&e, 0, sizeof e);
    e.name = "sqlite";
    e.a = ldl_sqlite_store(&qa);
    e.b = ldl_sqlite_store(&qb);
    e.ttl_ms = 1000;                 /* an fsync per call on a shared disk: 70 calls must fit one TTL */
    e.sleep_ms = conf_real_sleep;
    e.tokens_per_key = 1;
    conf_run(&e);

    /* what the body left: one row per key, never deleted; no lease still live; the
       awkward keys stored verbatim; this boot's identity on every row */
    {
        int64_t rows = sqt_int(db, "SELECT count(*) FROM ldl_lease", NULL);
        char now[32];
        int64_t live;
        snprintf(now, sizeof now, "%llu", (unsigned long long)st_now_ms());  /* CLOCK_MONOTONIC too */
        live = sqt_int(db, "SELECT count(*) FROM ldl_lease WHERE expires_ms > ?1", now);
        int64_t max_key = sqt_int(db, "SELECT max(length(CAST(key AS BLOB))) FROM ldl_lease", NULL);
        int64_t inj = sqt_int(db, "SELECT count(*) FROM ldl_lease WHERE key = ?1", "'; DROP TABLE ldl_lease;--");
        int64_t boots = sqt_int(db, "SELECT count(DISTINCT boot) FROM ldl_lease", NULL);
        ST_CHECK(live == 0, "live leases after the body: %lld", (long long)live);
        ST_CHECK(rows >= 16, "rows kept after release: %lld", (long long)rows);
        ST_CHECK(max_key == LDL_KEY_MAX - 1, "longest key stored: %lld bytes", (long long)max_key);
        ST_CHECK(inj == 1, "the injection-looking key stored verbatim: %lld", (long long)inj);
        ST_CHECK(boots == 1, "one boot identity on every row: %lld", (long long)boots);
    }
    st_case("", 0);
    if (st_failed()) fprintf(stderr, "last adapter errors: a=[%s] b=[%s]\n", ldl_sqlite_why(&qa), ldl_sqlite_why(&qb));
    ldl_sqlite_close(&qa);
    ldl_sqlite_close(&qb);
    ST_CHECK(sqlite3_close(db) == SQLITE_OK, "the caller's connection closes after ldl_sqlite_close");
    sqt_cleanup();
    return st_report();
}
