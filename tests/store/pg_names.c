/* pg_names.c -- ldl_pg_init's table-name validation and the adapter's care for
 * the caller's connection: bad names answer an error and create nothing; an
 * UNLOGGED/TEMP or wrongly shaped table is refused; a connection inside the
 * caller's transaction is refused and left as it was; an error inside a store
 * call leaves the connection idle and usable; statements come back after
 * PQreset and DEALLOCATE ALL; racing inits on a new table all succeed.
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

static int64_t ntables(PGconn *c)
{
    return pgt_int(c, "SELECT count(*) FROM pg_catalog.pg_class WHERE relkind = 'r' "
                      "AND relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)", NULL);
}

static void bad_names(PGconn *c)
{
    static char long64[80], long63[80];
    const char *bad[20];
    int n = 0, i;
    int64_t before = ntables(c), after;
    int64_t nrel_before = pgt_int(c, "SELECT count(*) FROM pg_class", NULL);
    ldl_pg p = {0};

    memset(long64, 'a', 64); long64[64] = 0;   /* one byte over the server's identifier limit */
    bad[n++] = "";
    bad[n++] = "a\"b";
    bad[n++] = "x\"; DROP TABLE ldl_lease; --";
    bad[n++] = "a;b";
    bad[n++] = "t'q";
    bad[n++] = "a b";
    bad[n++] = "ldl-lease";
    bad[n++] = "1abc";
    bad[n++] = long64;
    bad[n++] = "a.b.c";
    bad[n++] = "a.";
    bad[n++] = ".a";
    bad[n++] = "public.";
    bad[n++] = "na\xc3\xafve";
    bad[n++] = "tab\n";
    bad[n++] = "a.1b";
    for (i = 0; i < n; i++) {
        int rc = ldl_pg_init(&p, c, bad[i]);
        ST_CHECK(rc == LDL_EINVAL, "bad table name #%d answered %d, want LDL_EINVAL", i, rc);
        /* the failed ldl_pg must answer errors, never a grant */
        {
            ldl_store s = ldl_pg_store(&p);
            int64_t t = 5;
            rc = s.acquire(s.ctx, "k", 1000, &t);
            ST_CHECK(rc < 0 && t == 0, "acquire through a failed init #%d = %d token %lld", i, rc, (long long)t);
        }
    }
    after = ntables(c);
    ST_CHECK(before >= 0 && after == before, "bad names created tables: %lld -> %lld",
             (long long)before, (long long)after);
    ST_CHECK(nrel_before >= 0 && pgt_int(c, "SELECT count(*) FROM pg_class", NULL) == nrel_before,
             "no relation of any kind created by the bad names");
    ST_CHECK(ldl_pg_init(&p, NULL, NULL) == LDL_EINVAL, "NULL connection");
    ST_CHECK(ldl_pg_init(NULL, c, NULL) == LDL_EINVAL, "NULL ldl_pg");
    {
        ldl_store s = ldl_pg_store(NULL);
        ST_CHECK(!s.acquire && !s.renew && !s.release, "store of NULL is all-zero");
    }

    /* good names: 63 bytes, schema-qualified, case kept exactly */
    memset(long63, 'b', 63); long63[63] = 0;
    ST_CHECK(ldl_pg_init(&p, c, long63) == LDL_OK, "63-byte name: %s", ldl_pg_why(&p));
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM pg_class WHERE relname = $1", long63) == 1, "63-byte table exists");
    ST_CHECK(pgt_exec(c, "CREATE SCHEMA IF NOT EXISTS ldl_s"), "schema");
    ST_CHECK(ldl_pg_init(&p, c, "ldl_s.Lease_2") == LDL_OK, "schema-qualified: %s", ldl_pg_why(&p));
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM pg_class WHERE oid = to_regclass('ldl_s.\"Lease_2\"')", NULL) == 1,
             "case kept: ldl_s.\"Lease_2\" exists");
    ST_CHECK(ldl_pg_init(&p, c, "nosuchschema.t") == LDL_ESTORE, "missing schema answers LDL_ESTORE");
    ST_CHECK(ldl_pg_init(&p, c, NULL) == LDL_OK, "default name: %s", ldl_pg_why(&p));
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM pg_class WHERE relname = 'ldl_lease' AND relpersistence = 'p' "
                        "AND relnamespace = 'public'::regnamespace", NULL) == 1,
             "default table ldl_lease exists and is logged");
    {   /* the default table's shape */
        ST_CHECK(pgt_int(c, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'ldl_lease' AND table_schema = 'public' "
                            "AND ((column_name = 'key' AND data_type = 'text') OR (column_name = 'token' AND "
                            "data_type = 'bigint') OR (column_name = 'expires_at' AND data_type = "
                            "'timestamp with time zone'))", NULL) == 3, "ldl_lease columns");
    }
}

static void refused_tables(PGconn *c)
{
    ldl_pg p = {0};
    int rc;
    ST_CHECK(pgt_exec(c, "CREATE UNLOGGED TABLE ldl_unlogged (key text PRIMARY KEY, token bigint NOT NULL, "
                         "expires_at timestamptz NOT NULL)"), "create unlogged");
    rc = ldl_pg_init(&p, c, "ldl_unlogged");
    ST_CHECK(rc == LDL_ESTORE, "UNLOGGED table answered %d, want LDL_ESTORE", rc);
    ST_CHECK(pgt_exec(c, "CREATE TEMP TABLE ldl_temp (key text PRIMARY KEY, token bigint NOT NULL, "
                         "expires_at timestamptz NOT NULL)"), "create temp");
    rc = ldl_pg_init(&p, c, "ldl_temp");
    ST_CHECK(rc == LDL_ESTORE, "TEMP table answered %d, want LDL_ESTORE", rc);
    ST_CHECK(pgt_exec(c, "CREATE TABLE ldl_wrong (key integer PRIMARY KEY, token bigint, expires_at timestamptz)"),
             "create wrong");
    rc = ldl_pg_init(&p, c, "ldl_wrong");
    ST_CHECK(rc == LDL_ESTORE, "wrongly shaped table answered %d, want LDL_ESTORE", rc);
    ST_CHECK(pgt_exec(c, "CREATE TABLE ldl_nopk (key text, token bigint, expires_at timestamptz)"), "create nopk");
    rc = ldl_pg_init(&p, c, "ldl_nopk");
    ST_CHECK(rc == LDL_ESTORE, "table without a unique key answered %d, want LDL_ESTORE", rc);
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_IDLE, "connection idle after refused inits");
}

static void connection_care(PGconn *c)
{
    ldl_pg p = {0};
    ldl_store s;
    int64_t t = 0, t2 = 0;
    int rc;

    ST_CHECK(ldl_pg_init(&p, c, "ldl_care") == LDL_OK, "init ldl_care: %s", ldl_pg_why(&p));
    s = ldl_pg_store(&p);

    /* inside the caller's transaction: refused, nothing sent, the transaction untouched */
    ST_CHECK(pgt_exec(c, "BEGIN"), "begin");
    rc = s.acquire(s.ctx, "care", 5000, &t);
    ST_CHECK(rc < 0 && t == 0, "acquire inside a transaction = %d", rc);
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS, "caller's transaction still open");
    ST_CHECK(pgt_exec(c, "ROLLBACK"), "rollback");

    /* in an aborted transaction: refused; after the caller's ROLLBACK it works */
    ST_CHECK(pgt_exec(c, "BEGIN"), "begin 2");
    {
        PGresult *r = PQexec(c, "SELECT 1/0");
        PQclear(r);
    }
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_INERROR, "caller's transaction failed");
    rc = s.acquire(s.ctx, "care", 5000, &t);
    ST_CHECK(rc < 0, "acquire in a failed transaction = %d", rc);
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_INERROR, "the adapter did not end the caller's transaction");
    ST_CHECK(pgt_exec(c, "ROLLBACK"), "rollback 2");
    rc = s.acquire(s.ctx, "care", 5000, &t);
    ST_CHECK(rc == 1 && t >= 1, "acquire after rollback = %d token %lld (%s)", rc, (long long)t, ldl_pg_why(&p));
    ST_CHECK(s.release(s.ctx, "care", t) == 1, "release care");

    /* a server error inside the store call (token overflow) answers negative and
       leaves the connection idle and usable */
    ST_CHECK(pgt_exec(c, "INSERT INTO ldl_care VALUES ('full', 9223372036854775807, '-infinity')"), "insert max");
    t = 77;
    rc = s.acquire(s.ctx, "full", 5000, &t);
    ST_CHECK(rc < 0 && t == 0, "acquire at INT64_MAX = %d token %lld (want an error, no wrap)", rc, (long long)t);
    ST_CHECK(PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE,
             "connection idle after a failed statement");
    rc = s.acquire(s.ctx, "care", 5000, &t2);
    ST_CHECK(rc == 1 && t2 > t, "acquire after the error = %d token %lld", rc, (long long)t2);
    /* renew/release with tokens no lease carries */
    ST_CHECK(s.renew(s.ctx, "care", 0, 5000) == 0, "renew token 0");
    ST_CHECK(s.release(s.ctx, "care", -1) == 0, "release token -1");
    ST_CHECK(s.renew(s.ctx, "care", INT64_MAX, 5000) == 0, "renew INT64_MAX");
    ST_CHECK(s.renew(s.ctx, "care", t2, 5000) == 1, "renew care");

    /* statements forgotten by the session (DEALLOCATE ALL, same backend): re-prepared */
    ST_CHECK(pgt_exec(c, "DEALLOCATE ALL"), "deallocate");
    rc = s.renew(s.ctx, "care", t2, 5000);
    ST_CHECK(rc == 1, "renew after DEALLOCATE ALL = %d (%s)", rc, ldl_pg_why(&p));
    /* a new backend (PQreset): re-prepared */
    {
        int pid = PQbackendPID(c);
        PQreset(c);
        ST_CHECK(PQstatus(c) == CONNECTION_OK && PQbackendPID(c) != pid, "PQreset gave a new backend");
        rc = s.release(s.ctx, "care", t2);
        ST_CHECK(rc == 1, "release after PQreset = %d (%s)", rc, ldl_pg_why(&p));
    }
    /* two ldl_pg on one connection and one table: both work */
    {
        ldl_pg q = {0};
        ldl_store s2;
        ST_CHECK(ldl_pg_init(&q, c, "ldl_care") == LDL_OK, "second ldl_pg on the same connection: %s", ldl_pg_why(&q));
        s2 = ldl_pg_store(&q);
        rc = s2.acquire(s2.ctx, "care2", 5000, &t);
        ST_CHECK(rc == 1, "second ldl_pg acquire = %d (%s)", rc, ldl_pg_why(&q));
        ST_CHECK(s.renew(s.ctx, "care2", t, 5000) == 1, "first ldl_pg renews the second's lease");
        ST_CHECK(s2.release(s2.ctx, "care2", t) == 1, "second releases");
    }
    /* a connection that never came up */
    {
        PGconn *bad = PQconnectdb("host=127.0.0.1 port=1 connect_timeout=2");
        ST_CHECK(PQstatus(bad) == CONNECTION_BAD, "port 1 refused");
        rc = ldl_pg_init(&p, bad, NULL);
        ST_CHECK(rc == LDL_ESTORE, "init on a dead connection = %d", rc);
        s = ldl_pg_store(&p);
        rc = s.acquire(s.ctx, "x", 1000, &t);
        ST_CHECK(rc < 0 && t == 0, "acquire through it = %d", rc);
        PQfinish(bad);
    }
}

/* what the rows say: server-clock expiry, renew refused once expired even if
   nobody took the key, released rows kept at '-infinity' (never deleted) */
static void row_semantics(PGconn *c)
{
    ldl_pg p = {0};
    ldl_store s;
    int64_t t = 0, left;
    int rc;
    ST_CHECK(ldl_pg_init(&p, c, "ldl_rows") == LDL_OK, "init ldl_rows: %s", ldl_pg_why(&p));
    s = ldl_pg_store(&p);
    ST_CHECK(s.acquire(s.ctx, "r", 60000, &t) == 1 && t == 1, "first grant of a key is token 1 (%lld)", (long long)t);
    left = pgt_int(c, "SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint "
                      "FROM ldl_rows WHERE key = 'r'", NULL);
    ST_CHECK(left > 59000 && left <= 60000, "expires_at is server now + TTL: %lld ms left", (long long)left);
    ST_CHECK(s.release(s.ctx, "r", t) == 1, "release");
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM ldl_rows WHERE key = 'r' AND expires_at = '-infinity' AND token = 1",
                     NULL) == 1, "released row kept with expires_at = -infinity");
    ST_CHECK(s.acquire(s.ctx, "r", 150, &t) == 1 && t == 2, "re-grant bumps the same row to 2 (%lld)", (long long)t);
    st_sleep_ms(300);
    rc = s.renew(s.ctx, "r", t, 5000);
    ST_CHECK(rc == 0, "renew after expiry (key not retaken) = %d, want 0", rc);
    ST_CHECK(s.acquire(s.ctx, "r", 5000, &t) == 1 && t == 3, "expired lease re-granted as 3 (%lld)", (long long)t);
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM ldl_rows", NULL) == 1, "one row per key");
    /* a key that is not valid UTF-8: an error, never a grant; the connection stays usable */
    {
        int64_t bad = 5;
        rc = s.acquire(s.ctx, "bad\xff\xfekey", 5000, &bad);
        ST_CHECK(rc < 0 && bad == 0, "invalid UTF-8 key answered %d token %lld (want an error)", rc, (long long)bad);
        ST_CHECK(PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE, "usable after the bad key");
    }
    ST_CHECK(s.release(s.ctx, "r", 3) == 1, "release 3");
}

/* several processes init the same new table at once: all succeed. Several
   rounds, each on a table that does not exist yet: the loser of the CREATE
   race sees 23505, 42P07 or 42710 depending on timing (CI once saw 42710). */
static int racer(void *arg, int in, int out)
{
    PGconn *c;
    ldl_pg p = {0};
    int rc;
    (void)out;
    c = pgt_connect("");
    if (st_recv(in, 10000) != 'g') return 3;
    rc = ldl_pg_init(&p, c, (const char *)arg);
    if (rc != LDL_OK) fprintf(stderr, "racer: %d %s\n", rc, ldl_pg_why(&p));
    PQfinish(c);
    return rc == LDL_OK ? 0 : 1;
}

static void init_race(PGconn *c)
{
    st_child ch[6];
    int i, round, ok = 0;
    for (round = 0; round < 8; round++) {
        ST_CHECK(pgt_exec(c, "DROP TABLE IF EXISTS ldl_race"), "drop ldl_race");
        for (i = 0; i < 6; i++) st_fork(&ch[i], racer, (void *)"ldl_race");
        st_sleep_ms(150);   /* let every child connect */
        for (i = 0; i < 6; i++) st_send(ch[i].to_child, 'g');
        for (i = 0; i < 6; i++) ok += st_join(&ch[i], 20000) == 0;
    }
    ST_CHECK(ok == 48, "concurrent inits of a new table: %d of 48 succeeded (8 rounds of 6)", ok);
}

int main(void)
{
    PGconn *c = pgt_connect("");
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(c, "SET client_min_messages = warning");
    /* re-runnable on the same server: start from none of this file's tables */
    ST_CHECK(pgt_exec(c, "DROP TABLE IF EXISTS ldl_unlogged, ldl_temp, ldl_wrong, ldl_nopk, ldl_care, ldl_race, ldl_rows, "
                         "ldl_lease, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") &&
             pgt_exec(c, "DROP SCHEMA IF EXISTS ldl_s CASCADE"), "clean slate");
    bad_names(c);
    refused_tables(c);
    connection_care(c);
    row_semantics(c);
    init_race(c);
    PQfinish(c);
    return st_report();
}
