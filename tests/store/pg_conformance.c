/* pg_conformance.c -- the shared store conformance body (tests/store/conformance.h)
 * against a real PostgreSQL, through two connections (two clients of one store).
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"
#include "tests/store/pg_common.h"


int main(void)
{
    PGconn *ca = pgt_connect("application_name=conf_a");
    PGconn *cb = pgt_connect("application_name=conf_b");
    ldl_pg pa = {0}, pb = {0};
    conf_env e;
    int rc;

    ST_CHECK(PQstatus(ca) == CONNECTION_OK && PQstatus(cb) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    /* the body needs an empty store: a table of its own, fresh */
    ST_CHECK(pgt_exec(ca, "SET client_min_messages = warning"), "quiet notices");
    ST_CHECK(pgt_exec(ca, "DROP TABLE IF EXISTS ldl_conformance"), "drop old table");
    rc = ldl_pg_init(&pa, ca, "ldl_conformance");
    ST_CHECK(rc == LDL_OK, "ldl_pg_init a = %d (%s)", rc, ldl_pg_why(&pa));
    rc = ldl_pg_init(&pb, cb, "ldl_conformance");
    ST_CHECK(rc == LDL_OK, "ldl_pg_init b = %d (%s)", rc, ldl_pg_why(&pb));
    if (st_failed()) return st_report();

    memset(&e, 0, sizeof e);
    e.name = "postgres";
    e.a = ldl_pg_store(&pa);
    e.b = ldl_pg_store(&pb);
    e.ttl_ms = 300;
    e.sleep_ms = conf_real_sleep;
    e.tokens_per_key = 1;
    conf_run(&e);

    /* what the body left in the table: one row per key, never deleted; no
       lease still live (everything was released or expired) */
    {
        int64_t rows = pgt_int(ca, "SELECT count(*) FROM ldl_conformance", NULL);
        int64_t live = pgt_int(ca, "SELECT count(*) FROM ldl_conformance WHERE expires_at > clock_timestamp()", NULL);
        int64_t max_key = pgt_int(ca, "SELECT max(octet_length(key)) FROM ldl_conformance", NULL);
        int64_t inj = pgt_int(ca, "SELECT count(*) FROM ldl_conformance WHERE key = $1",
                              "'; DROP TABLE ldl_lease;--");
        ST_CHECK(rows >= 16, "rows kept after release: %lld", (long long)rows);
        ST_CHECK(live == 0, "live leases after the body: %lld", (long long)live);
        ST_CHECK(max_key == LDL_KEY_MAX - 1, "longest key stored: %lld bytes", (long long)max_key);
        ST_CHECK(inj == 1, "the injection-looking key stored verbatim: %lld", (long long)inj);
    }
    if (st_failed()) fprintf(stderr, "last adapter errors: a=[%s] b=[%s]\n", ldl_pg_why(&pa), ldl_pg_why(&pb));
    PQfinish(ca);
    PQfinish(cb);
    return st_report();
}
