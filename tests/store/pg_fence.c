/* pg_fence.c -- the fenced-write protocol on PostgreSQL (issue 19): ldl_pg_fence
 * on a real server, started by tests/store/with_pg.sh, and through a real
 * pgbouncer in transaction pooling (tests/store/with_pgbouncer.sh tx2rr: then
 * LDL_PGB_MODE is set, init uses LDL_PG_UNNAMED and the checks that need a
 * superuser on the lock's own connection run on LDL_PG_DIRECT).
 *   - answers: first fence passes, equal passes, lower is refused, a rolled-back
 *     transaction leaves the mark unchanged, outside a transaction (idle or
 *     failed) refused with a why and nothing written;
 *   - hostile input: quotes, NUL-free binary (valid and invalid in the client
 *     encoding), 1 KB and over the limit, fence 0, negative, INT64_MAX;
 *   - init: LDL_PG_FENCE creates only the fence table, the 57-byte name limit,
 *     a statement lost on the session (DEALLOCATE ALL, PQreset) is prepared
 *     again without breaking the caller's transaction (direct only);
 *   - hostile tables (direct only): a fence table pre-created by another role
 *     with a trigger, one of ours with a trigger, rules, RLS, wrong shapes,
 *     UNLOGGED, a PUBLIC write grant: refused at init, nothing written; an
 *     operator planted on the search_path is never called;
 *   - a writer holding a real lease on the PG store, SIGSTOPped past its
 *     lease and continued after its successor wrote: refused, the table holds
 *     the successor's data;
 *   - a writer SIGSTOPped inside its fenced transaction (checked, not yet
 *     committed): its successor's check waits (lock_timeout: LDL_ESTORE
 *     55P03), the paused write commits first, the successor's retry last;
 *   - two transactions with fences 5 and 6 in either order on two connections
 *     (a barrier: the second is seen waiting on the row lock in
 *     pg_stat_activity before the first ends), READ COMMITTED, REPEATABLE
 *     READ and SERIALIZABLE: exactly the documented answers, no deadlock, no
 *     lost update;
 *   - 4 processes x 60 rounds of interleaved fences on one resource, some
 *     transactions rolled back: the accepted writes are fence-monotonic in
 *     commit order, every refused fence was below an accepted one, the mark is
 *     the highest committed fence; then every process with one equal fence:
 *     all pass.
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"
#include <signal.h>

#define TABLE "ldl_fz"                  /* the lease table's name: the fence table is ldl_fz_fence */
static const char *mode;                /* NULL direct, else the pgbouncer mode */
static unsigned flags;                  /* LDL_PG_UNNAMED behind the pooler */
static const char *fqt;                 /* the fence table, qualified, for the checks */

/* a connection for checks: the server's own (superuser) */
static PGconn *direct(void)
{
    const char *d = getenv("LDL_PG_DIRECT");
    PGconn *c;
    if (!mode) return pgt_connect("");
    c = PQconnectdb(d ? d : "");
    if (PQstatus(c) != CONNECTION_OK) fprintf(stderr, "direct: %s", PQerrorMessage(c));
    pgt_exec(c, "SET search_path = pool, public");      /* the pooled role's schema */
    return c;
}

static int fence_init(ldl_pg *p, PGconn *c)
{
    int rc = ldl_pg_init_ex(p, c, TABLE, flags | LDL_PG_FENCE);
    if (rc != LDL_OK) fprintf(stderr, "fence init: %d %s\n", rc, ldl_pg_why(p));
    return rc;
}

/* the mark of `res` by a check connection; 0 when there is no row */
static int64_t mark_of(PGconn *chk, const char *res)
{
    char sql[256];
    int64_t v;
    snprintf(sql, sizeof sql, "SELECT COALESCE((SELECT fence FROM %s WHERE resource = $1), 0)", fqt);
    v = pgt_int(chk, sql, res);
    return v;
}

/* one fenced transaction: BEGIN, fence, (write), COMMIT or ROLLBACK */
static int fenced_tx(PGconn *c, ldl_pg *p, const char *res, int64_t f, int commit)
{
    int rc;
    if (!pgt_exec(c, "BEGIN")) return -100;
    rc = ldl_pg_fence(p, res, f);
    pgt_exec(c, rc == 1 && commit ? "COMMIT" : "ROLLBACK");
    return rc;
}

/* ------------------------------------------------------------ answers */
static void answers(void)
{
    PGconn *c = pgt_connect(""), *chk = direct();
    ldl_pg p, plain;
    ldl_store s;
    int64_t t = 0;
    char big[LDL_PG_RESOURCE_MAX + 1], bin[128], hi[129];
    int i, rc;

    ST_CHECK(fence_init(&p, c) == LDL_OK, "init with LDL_PG_FENCE");
    ST_CHECK(pgt_int(chk, "SELECT (to_regclass('ldl_fz_fence') IS NOT NULL AND to_regclass('ldl_fz') IS NULL)::int",
                     NULL) == 1,
             "LDL_PG_FENCE creates the fence table only (no lease table)");
    ST_CHECK(strstr(ldl_pg_fence_sql(&p), "_fence\" AS f (resource, fence)") != NULL &&
             strstr(ldl_pg_fence_sql(&p), "OPERATOR(pg_catalog.<=)") != NULL,
             "ldl_pg_fence_sql is the qualified statement: %s", ldl_pg_fence_sql(&p));
    ST_CHECK(strcmp(ldl_pg_fence_sql(NULL), "") == 0, "ldl_pg_fence_sql(NULL) is \"\"");
    s = ldl_pg_store(&p);
    ST_CHECK(s.acquire(s.ctx, "k", 1000, &t) == LDL_ESTORE && t == 0,
             "a fence-only ldl_pg's lease calls answer LDL_ESTORE");
    ST_CHECK(ldl_pg_init_ex(&plain, c, "fz_lease", flags) == LDL_OK, "a plain init");
    pgt_exec(c, "BEGIN");
    ST_CHECK(ldl_pg_fence(&plain, "r", 1) == LDL_EINVAL && strstr(ldl_pg_why(&plain), "LDL_PG_FENCE"),
             "ldl_pg_fence on an ldl_pg without LDL_PG_FENCE: LDL_EINVAL (%s)", ldl_pg_why(&plain));
    pgt_exec(c, "ROLLBACK");
    ST_CHECK(ldl_pg_fence(NULL, "r", 1) == LDL_EINVAL, "NULL ldl_pg");

    /* outside a transaction: refused, nothing written */
    rc = ldl_pg_fence(&p, "ans", 5);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "outside a transaction"),
             "outside a transaction: LDL_ESTORE with a why (%d %s)", rc, ldl_pg_why(&p));
    ST_CHECK(mark_of(chk, "ans") == 0, "outside a transaction: nothing written");
    pgt_exec(c, "BEGIN");
    PQclear(PQexec(c, "SELECT 1/0"));
    rc = ldl_pg_fence(&p, "ans", 5);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "failed"),
             "in a failed transaction: LDL_ESTORE (%d %s)", rc, ldl_pg_why(&p));
    pgt_exec(c, "ROLLBACK");

    /* in pipeline mode (an ldl_pg_async's, or the caller's own): refused, nothing sent */
    ST_CHECK(PQenterPipelineMode(c) == 1, "pipeline mode on");
    rc = ldl_pg_fence(&p, "ans", 5);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "pipeline"), "in pipeline mode: LDL_ESTORE (%d %s)",
             rc, ldl_pg_why(&p));
    ST_CHECK(PQexitPipelineMode(c) == 1 && mark_of(chk, "ans") == 0, "pipeline mode: nothing was sent");

    /* the answers */
    ST_CHECK(fenced_tx(c, &p, "ans", 5, 1) == 1 && mark_of(chk, "ans") == 5, "a first fence passes; mark 5");
    ST_CHECK(strcmp(ldl_pg_why(&p), "") == 0, "why is empty after a 1");
    ST_CHECK(fenced_tx(c, &p, "ans", 5, 1) == 1 && mark_of(chk, "ans") == 5, "an equal fence passes");
    rc = fenced_tx(c, &p, "ans", 4, 1);
    ST_CHECK(rc == 0 && strstr(ldl_pg_why(&p), "stale"), "a lower fence is refused: 0 (%s)", ldl_pg_why(&p));
    ST_CHECK(mark_of(chk, "ans") == 5, "the refused fence left the mark");
    ST_CHECK(fenced_tx(c, &p, "ans", 9, 0) == 1 && mark_of(chk, "ans") == 5,
             "a rolled-back transaction leaves the mark unchanged");
    ST_CHECK(fenced_tx(c, &p, "ans", 6, 1) == 1 && mark_of(chk, "ans") == 6, "a higher fence passes");
    pgt_exec(c, "BEGIN");
    ST_CHECK(ldl_pg_fence(&p, "ans", 7) == 1 && ldl_pg_fence(&p, "ans", 7) == 1 &&
             ldl_pg_fence(&p, "ans", 6) == 0 && ldl_pg_fence(&p, "ans", 8) == 1,
             "inside one transaction: equal passes twice, lower refused, higher passes");
    pgt_exec(c, "COMMIT");
    ST_CHECK(mark_of(chk, "ans") == 8, "the mark is 8");

    /* bad arguments: LDL_EINVAL, nothing sent (the transaction stays usable) */
    memset(big, 'x', sizeof big);
    big[LDL_PG_RESOURCE_MAX] = '\0';                      /* 1024 bytes: over the limit */
    pgt_exec(c, "BEGIN");
    ST_CHECK(ldl_pg_fence(&p, "ans", 0) == LDL_EINVAL, "fence 0: LDL_EINVAL");
    ST_CHECK(ldl_pg_fence(&p, "ans", -1) == LDL_EINVAL, "fence -1: LDL_EINVAL");
    ST_CHECK(ldl_pg_fence(&p, "ans", INT64_MIN) == LDL_EINVAL, "fence INT64_MIN: LDL_EINVAL");
    ST_CHECK(ldl_pg_fence(&p, NULL, 5) == LDL_EINVAL, "resource NULL: LDL_EINVAL");
    ST_CHECK(ldl_pg_fence(&p, "", 5) == LDL_EINVAL, "resource empty: LDL_EINVAL");
    ST_CHECK(ldl_pg_fence(&p, big, 5) == LDL_EINVAL && strstr(ldl_pg_why(&p), "LDL_PG_RESOURCE_MAX"),
             "resource of 1024 bytes: LDL_EINVAL (%s)", ldl_pg_why(&p));
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS, "bad arguments sent nothing: the transaction is intact");
    big[LDL_PG_RESOURCE_MAX - 1] = '\0';                  /* 1023 bytes: the largest */
    ST_CHECK(ldl_pg_fence(&p, big, 3) == 1, "resource of 1023 bytes passes");
    ST_CHECK(ldl_pg_fence(&p, "it's \"quoted\"; DROP TABLE x; --", 2) == 1, "resource with quotes passes");
    for (i = 0; i < 127; i++) bin[i] = (char)(i + 1);    /* 0x01..0x7F */
    bin[127] = '\0';
    ST_CHECK(ldl_pg_fence(&p, bin, 4) == 1, "resource of NUL-free binary (0x01..0x7f) passes");
    ST_CHECK(ldl_pg_fence(&p, "max", INT64_MAX) == 1, "fence INT64_MAX passes");
    ST_CHECK(ldl_pg_fence(&p, "max", INT64_MAX) == 1, "fence INT64_MAX again (equal) passes");
    ST_CHECK(ldl_pg_fence(&p, "max", INT64_MAX - 1) == 0, "fence INT64_MAX-1 after it: refused");
    pgt_exec(c, "COMMIT");
    ST_CHECK(mark_of(chk, big) == 3 && mark_of(chk, "it's \"quoted\"; DROP TABLE x; --") == 2 &&
             mark_of(chk, bin) == 4 && mark_of(chk, "max") == INT64_MAX,
             "each hostile name is its own row, stored exactly");
    for (i = 0; i < 128; i++) hi[i] = (char)(0x80 + i);  /* not UTF-8 */
    hi[128] = '\0';
    pgt_exec(c, "BEGIN");
    rc = ldl_pg_fence(&p, hi, 5);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "encoding") != NULL,
             "resource invalid in the client encoding: LDL_ESTORE (%d %s)", rc, ldl_pg_why(&p));
    pgt_exec(c, "ROLLBACK");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM ldl_fz_fence", NULL) == 5, "five rows: nothing else was written");

    /* the name limit: the fence table's name is the table's + "_fence" */
    {
        ldl_pg q;
        char n58[59], n57[58];
        memset(n58, 'n', 58); n58[58] = '\0';
        memset(n57, 'n', 57); n57[57] = '\0';
        ST_CHECK(ldl_pg_init_ex(&q, c, n58, flags | LDL_PG_FENCE) == LDL_EINVAL &&
                 strstr(ldl_pg_why(&q), "57"), "a 58-byte table name with LDL_PG_FENCE: LDL_EINVAL");
        ST_CHECK(ldl_pg_init_ex(&q, c, n57, flags | LDL_PG_FENCE) == LDL_OK, "57 bytes: fine (%s)",
                 ldl_pg_why(&q));
        ST_CHECK(fenced_tx(c, &q, "r", 1, 1) == 1, "and it fences");
        ST_CHECK(ldl_pg_init_ex(&q, c, TABLE, flags | LDL_PG_FENCE | 8u | 2u) == LDL_EINVAL, "unknown flags refused");
    }

    /* a session that lost the statement (named mode only): prepared again,
       the caller's transaction unharmed */
    if (!(flags & LDL_PG_UNNAMED)) {
        pgt_exec(c, "DEALLOCATE ALL");
        pgt_exec(c, "BEGIN");
        rc = ldl_pg_fence(&p, "ans", 8);
        ST_CHECK(rc == LDL_ESTORE && PQtransactionStatus(c) == PQTRANS_INERROR,
                 "DEALLOCATE ALL behind our back: that call fails (%d %s)", rc, ldl_pg_why(&p));
        pgt_exec(c, "ROLLBACK");
        ST_CHECK(fenced_tx(c, &p, "ans", 8, 1) == 1, "the next call prepares again and passes (%s)",
                 ldl_pg_why(&p));
        PQreset(c);
        ST_CHECK(fenced_tx(c, &p, "ans", 9, 1) == 1 && mark_of(chk, "ans") == 9,
                 "after PQreset: prepared inside the transaction, passes (%s)", ldl_pg_why(&p));
        {                                           /* a foreign statement of our name */
            char sql[256];
            PQreset(c);
            snprintf(sql, sizeof sql, "PREPARE %s AS SELECT 1::bigint AS fence", p._stmt[0]);
            pgt_exec(c, sql);
            rc = fenced_tx(c, &p, "ans", 10, 1);
            ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "foreign"),
                     "a foreign statement holding the name is never run (%d %s)", rc, ldl_pg_why(&p));
            ST_CHECK(mark_of(chk, "ans") == 9, "and nothing moved");
        }
    }
    PQfinish(c);
    PQfinish(chk);
}

/* ------------------------------------------------------------ hostile tables (direct only) */
#define FAPP "user=ldl_fapp options='-c search_path=fevil,pg_catalog,fapp -c client_min_messages=warning'"
static const char *hostile_setup[] = {
    "SET client_min_messages = warning",
    "DROP SCHEMA IF EXISTS fevil CASCADE", "DROP SCHEMA IF EXISTS fapp CASCADE",
    "DROP ROLE IF EXISTS ldl_fevil", "DROP ROLE IF EXISTS ldl_fapp",
    "CREATE ROLE ldl_fevil LOGIN", "CREATE ROLE ldl_fapp LOGIN",
    "CREATE SCHEMA fevil AUTHORIZATION ldl_fevil", "CREATE SCHEMA fapp AUTHORIZATION ldl_fapp",
    "GRANT USAGE, CREATE ON SCHEMA fevil TO ldl_fapp",
    "SET ROLE ldl_fevil",
    "CREATE TABLE fevil.ran (what text)",
    "GRANT INSERT, SELECT ON fevil.ran TO PUBLIC",
    "CREATE FUNCTION fevil.le(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO fevil.ran VALUES ('le'); RETURN true; END $$",
    "CREATE OPERATOR fevil.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = fevil.le)",
    "CREATE FUNCTION fevil.trg() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO fevil.ran VALUES ('trigger'); NEW.fence := 1; RETURN NEW; END $$",
    /* another role's fence table, with a trigger, where the lock's search_path finds it first */
    "CREATE TABLE fevil.t1_fence (resource text PRIMARY KEY, fence bigint NOT NULL CHECK (fence >= 1))",
    "CREATE TRIGGER t BEFORE INSERT OR UPDATE ON fevil.t1_fence FOR EACH ROW EXECUTE FUNCTION fevil.trg()",
    "GRANT ALL ON fevil.t1_fence TO ldl_fapp",
    "RESET ROLE",
    NULL
};

/* a table of the lock's own role in fapp: init refuses it, and nothing is written */
static void refused(PGconn *app, PGconn *su, const char *name, const char *ddl, const char *why_has)
{
    ldl_pg p;
    char sql[512];
    int rc;
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS fapp.%s_fence", name);
    pgt_exec(app, sql);
    if (ddl && !pgt_exec(app, ddl)) { ST_CHECK(0, "setup of %s", name); return; }
    snprintf(sql, sizeof sql, "fapp.%s", name);
    rc = ldl_pg_init_ex(&p, app, sql, LDL_PG_FENCE);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), why_has),
             "fence table %s refused at init (%d %s)", name, rc, ldl_pg_why(&p));
    pgt_exec(app, "BEGIN");
    ST_CHECK(ldl_pg_fence(&p, "r", 1) == LDL_EINVAL, "%s: the refused ldl_pg fences nothing", name);
    pgt_exec(app, "ROLLBACK");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM fapp.%s_fence", name);
    ST_CHECK(pgt_int(su, sql, NULL) == 0, "%s: nothing written", name);
}

static void hostile_tables(void)
{
    PGconn *su = pgt_connect(""), *app;
    ldl_pg p;
    int rc;
    if (!pgt_exec_all(su, hostile_setup)) { ST_CHECK(0, "hostile setup"); PQfinish(su); return; }
    app = pgt_connect(FAPP);
    /* found through the search_path: another role's table with a trigger */
    rc = ldl_pg_init_ex(&p, app, "t1", LDL_PG_FENCE);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "owned by a role"),
             "another role's fence table (with a trigger) refused at init (%d %s)", rc, ldl_pg_why(&p));
    ST_CHECK(pgt_int(su, "SELECT count(*) FROM fevil.t1_fence", NULL) == 0 &&
             pgt_int(su, "SELECT count(*) FROM fevil.ran", NULL) == 0, "nothing written, the trigger never ran");
    refused(app, su, "t2",
            "CREATE TABLE fapp.t2_fence (resource text PRIMARY KEY, fence bigint NOT NULL);"
            "CREATE TRIGGER t BEFORE INSERT OR UPDATE ON fapp.t2_fence FOR EACH ROW EXECUTE FUNCTION fevil.trg()",
            "triggers");
    refused(app, su, "t3",
            "CREATE TABLE fapp.t3_fence (resource text PRIMARY KEY, fence bigint NOT NULL);"
            "CREATE RULE r AS ON UPDATE TO fapp.t3_fence DO INSTEAD NOTHING", "rules");
    refused(app, su, "t4",
            "CREATE TABLE fapp.t4_fence (resource text PRIMARY KEY, fence bigint NOT NULL);"
            "ALTER TABLE fapp.t4_fence ENABLE ROW LEVEL SECURITY", "row level security");
    refused(app, su, "t5", "CREATE TABLE fapp.t5_fence (resource text PRIMARY KEY, fence integer NOT NULL)",
            "columns");
    refused(app, su, "t6", "CREATE TABLE fapp.t6_fence (resource text PRIMARY KEY, fence bigint)", "columns");
    refused(app, su, "t7",
            "CREATE TABLE fapp.t7_fence (resource text PRIMARY KEY, fence bigint NOT NULL, extra int)", "columns");
    refused(app, su, "t8", "CREATE TABLE fapp.t8_fence (resource text, fence bigint NOT NULL)", "keys");
    refused(app, su, "t9",
            "CREATE TABLE fapp.t9_fence (resource text PRIMARY KEY, fence bigint NOT NULL UNIQUE)", "keys");
    refused(app, su, "t10",
            "CREATE UNLOGGED TABLE fapp.t10_fence (resource text PRIMARY KEY, fence bigint NOT NULL)", "UNLOGGED");
    refused(app, su, "t11",
            "CREATE TABLE fapp.t11_fence (resource text PRIMARY KEY, fence bigint NOT NULL);"
            "GRANT UPDATE ON fapp.t11_fence TO PUBLIC", "PUBLIC");
    if (pgt_exec(app, "CREATE COLLATION IF NOT EXISTS fapp.ci (provider = icu, locale = 'und-u-ks-level2', "
                 "deterministic = false)"))
        refused(app, su, "t13",
                "CREATE TABLE fapp.t13_fence (resource text COLLATE fapp.ci PRIMARY KEY, fence bigint NOT NULL)",
                "columns");
    else
        ST_CHECK(0, "an ICU collation (PostgreSQL built with ICU)");
    refused(app, su, "t12", "CREATE VIEW fapp.t12_fence AS SELECT 'r'::text AS resource, 1::bigint AS fence WHERE false",
            "not an ordinary table");
    /* the adapter's own table with an operator planted on the search_path */
    rc = ldl_pg_init_ex(&p, app, "fapp.ok", LDL_PG_FENCE);
    ST_CHECK(rc == LDL_OK, "the lock's own fresh fence table is accepted (%s)", ldl_pg_why(&p));
    ST_CHECK(fenced_tx(app, &p, "r", 5, 1) == 1 && fenced_tx(app, &p, "r", 4, 1) == 0 &&
             fenced_tx(app, &p, "r", 5, 1) == 1,
             "with fevil.<= first on the search_path: 5 passes, 4 refused, 5 passes");
    ST_CHECK(pgt_int(su, "SELECT count(*) FROM fevil.ran", NULL) == 0, "the planted operator was never called");
    PQfinish(app);
    PQfinish(su);
}

/* ------------------------------------------------------------ a paused writer */
#define LEASE_TABLE "ldl_fz_lease"
#define SP_RES "sigstop"

static void setup_data(PGconn *chk)
{
    pgt_exec(chk, "SET client_min_messages = warning");
    pgt_exec(chk, "CREATE TABLE IF NOT EXISTS fz_data (resource text PRIMARY KEY, who text, fence bigint)");
    pgt_exec(chk, "CREATE TABLE IF NOT EXISTS fz_log (id bigserial PRIMARY KEY, resource text, fence bigint, who int)");
    pgt_exec(chk, "CREATE TABLE IF NOT EXISTS fz_try (who int, round int, fence bigint, rc int, committed bool)");
    if (mode) pgt_exec(chk, "GRANT ALL ON fz_data, fz_log, fz_try, fz_log_id_seq TO PUBLIC");
}

/* one fenced write of fz_data: BEGIN; fence; UPDATE; COMMIT (ROLLBACK unless 1) */
static int write_data(PGconn *c, ldl_pg *p, const char *res, const char *who, int64_t f)
{
    char fs[24];
    const char *vals[3];
    PGresult *r;
    int rc;
    if (!pgt_exec(c, "BEGIN")) return -100;
    rc = ldl_pg_fence(p, res, f);
    if (rc == 1) {
        snprintf(fs, sizeof fs, "%lld", (long long)f);
        vals[0] = res; vals[1] = who; vals[2] = fs;
        r = PQexecParams(c, "INSERT INTO fz_data VALUES ($1, $2, $3) ON CONFLICT (resource) "
                         "DO UPDATE SET who = EXCLUDED.who, fence = EXCLUDED.fence", 3, NULL, vals, NULL, NULL, 0);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) rc = -101;
        PQclear(r);
    }
    pgt_exec(c, rc == 1 ? "COMMIT" : "ROLLBACK");
    return rc;
}

static int paused_child(void *arg, int in, int out)
{
    PGconn *lc = pgt_connect(""), *rc_ = pgt_connect("");
    ldl_pg lease, fp;
    pgt_lock lk;
    int64_t f;
    int rc;
    (void)arg;
    if (ldl_pg_init_ex(&lease, lc, LEASE_TABLE, flags) != LDL_OK || fence_init(&fp, rc_) != LDL_OK) return 20;
    if (pgt_lock_init(&lk, &lease, "fz-key", 1000, 0) != 0 || ldl_lock_acquire(&lk.lock) != 1) return 21;
    f = ldl_lock_fencing_token(&lk.lock);
    st_send(out, 'r');                          /* holding; about to write: the parent pauses us here */
    if (st_recv(in, 120000) != 'g') return 22;
    rc = write_data(rc_, &fp, SP_RES, "paused", f);
    fprintf(stderr, "paused writer: fence %lld answered %d (%s)\n", (long long)f, rc, ldl_pg_why(&fp));
    ldl_lock_dispose(&lk.lock);
    PQfinish(lc);
    PQfinish(rc_);
    return rc == 0 ? 0 : 30 + (rc < 0 ? 9 : rc);
}

static void paused_writer(void)
{
    PGconn *chk = direct(), *lc = pgt_connect(""), *rc_ = pgt_connect("");
    ldl_pg lease, fp;
    pgt_lock lk;
    st_child ch;
    int64_t f;
    char sql[256];
    setup_data(chk);
    if (ldl_pg_init_ex(&lease, lc, LEASE_TABLE, flags) != LDL_OK || fence_init(&fp, rc_) != LDL_OK) {
        ST_CHECK(0, "paused writer: init (%s)", ldl_pg_why(&lease));
        return;
    }
    ST_CHECK(st_fork(&ch, paused_child, NULL) == 0, "fork the writer");
    ST_CHECK(st_recv(ch.from_child, 60000) == 'r', "the writer holds the lease");
    ST_CHECK(kill(ch.pid, SIGSTOP) == 0, "SIGSTOP the writer");
    st_sleep_ms(1600);                          /* past its 1000 ms lease */
    ST_CHECK(pgt_lock_init(&lk, &lease, "fz-key", 5000, 0) == 0 && ldl_lock_acquire(&lk.lock) == 1,
             "the successor acquires once the paused lease lapsed");
    f = ldl_lock_fencing_token(&lk.lock);
    ST_CHECK(write_data(rc_, &fp, SP_RES, "successor", f) == 1, "the successor's fenced write (fence %lld)",
             (long long)f);
    st_send(ch.to_child, 'g');
    ST_CHECK(kill(ch.pid, SIGCONT) == 0, "continue the writer");
    ST_CHECK(st_join(&ch, 60000) == 0, "the continued writer's fenced write was refused (answer 0)");
    snprintf(sql, sizeof sql, "SELECT fence FROM fz_data WHERE resource = '%s' AND who = 'successor'", SP_RES);
    ST_CHECK(pgt_int(chk, sql, NULL) == f && mark_of(chk, SP_RES) == f,
             "the table holds the successor's data and mark (%lld)", (long long)f);
    ldl_lock_dispose(&lk.lock);
    PQfinish(chk); PQfinish(lc); PQfinish(rc_);
}

/* a writer paused INSIDE its fenced transaction (after its check passed, before
   COMMIT) keeps the mark's row locked: its successor's check waits, bounded by
   lock_timeout (LDL_ESTORE, SQLSTATE 55P03); the paused write commits first
   when it continues, and the successor's retry then passes and writes last */
#define SP2_RES "sigstop-inside"
static int paused_inside_child(void *arg, int in, int out)
{
    PGconn *lc = pgt_connect(""), *rc_ = pgt_connect("");
    ldl_pg lease, fp;
    pgt_lock lk;
    int64_t f;
    int rc;
    char fs[24];
    const char *vals[2];
    (void)arg;
    if (ldl_pg_init_ex(&lease, lc, LEASE_TABLE, flags) != LDL_OK || fence_init(&fp, rc_) != LDL_OK) return 20;
    if (pgt_lock_init(&lk, &lease, "fz-key2", 1000, 0) != 0 || ldl_lock_acquire(&lk.lock) != 1) return 21;
    f = ldl_lock_fencing_token(&lk.lock);
    /* (behind the pooler the role's idle_in_transaction_session_timeout is 5 s) */
    if (!pgt_exec(rc_, "BEGIN") || !pgt_exec(rc_, "SET LOCAL idle_in_transaction_session_timeout = '120s'") ||
        ldl_pg_fence(&fp, SP2_RES, f) != 1) return 22;
    st_send(out, 'r');                          /* checked, not yet written: paused here */
    if (st_recv(in, 120000) != 'g') return 23;
    snprintf(fs, sizeof fs, "%lld", (long long)f);
    vals[0] = SP2_RES; vals[1] = fs;
    PQclear(PQexecParams(rc_, "INSERT INTO fz_data VALUES ($1, 'paused', $2) ON CONFLICT (resource) "
                         "DO UPDATE SET who = EXCLUDED.who, fence = EXCLUDED.fence", 2, NULL, vals, NULL, NULL, 0));
    rc = pgt_exec(rc_, "COMMIT");
    st_send(out, rc ? 'c' : 'x');
    ldl_lock_dispose(&lk.lock);
    PQfinish(lc);
    PQfinish(rc_);
    return rc ? 0 : 24;
}

static void paused_inside(void)
{
    PGconn *chk = direct(), *lc = pgt_connect(""), *rc_ = pgt_connect("");
    ldl_pg lease, fp;
    pgt_lock lk;
    st_child ch;
    int64_t f;
    int rc;
    char sql[256];
    if (ldl_pg_init_ex(&lease, lc, LEASE_TABLE, flags) != LDL_OK || fence_init(&fp, rc_) != LDL_OK) {
        ST_CHECK(0, "paused inside: init");
        return;
    }
    ST_CHECK(st_fork(&ch, paused_inside_child, NULL) == 0, "fork the writer");
    ST_CHECK(st_recv(ch.from_child, 60000) == 'r', "the writer's check passed inside its transaction");
    ST_CHECK(kill(ch.pid, SIGSTOP) == 0, "SIGSTOP it there");
    st_sleep_ms(1600);
    ST_CHECK(pgt_lock_init(&lk, &lease, "fz-key2", 10000, 0) == 0 && ldl_lock_acquire(&lk.lock) == 1,
             "the successor acquires");
    f = ldl_lock_fencing_token(&lk.lock);
    pgt_exec(rc_, "BEGIN");
    pgt_exec(rc_, "SET LOCAL lock_timeout = '500ms'");
    rc = ldl_pg_fence(&fp, SP2_RES, f);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&fp), "55P03"),
             "the successor's check waits on the paused transaction's row lock: lock_timeout, LDL_ESTORE (%d %s)",
             rc, ldl_pg_why(&fp));
    pgt_exec(rc_, "ROLLBACK");
    st_send(ch.to_child, 'g');
    ST_CHECK(kill(ch.pid, SIGCONT) == 0, "continue the writer");
    ST_CHECK(st_recv(ch.from_child, 60000) == 'c', "the paused write commits (it was checked first)");
    ST_CHECK(write_data(rc_, &fp, SP2_RES, "successor", f) == 1, "the successor's retry passes and writes");
    ST_CHECK(st_join(&ch, 60000) == 0, "the writer exits");
    snprintf(sql, sizeof sql, "SELECT fence FROM fz_data WHERE resource = '%s' AND who = 'successor'", SP2_RES);
    ST_CHECK(pgt_int(chk, sql, NULL) == f && mark_of(chk, SP2_RES) == f,
             "the successor's write is the last; the mark is its fence");
    ldl_lock_dispose(&lk.lock);
    PQfinish(chk); PQfinish(lc); PQfinish(rc_);
}

/* ------------------------------------------------------------ two transactions, a barrier */
typedef struct two_arg { const char *res, *iso; int64_t f; } two_arg;

/* the second transaction: exit 1 (passed, wrote, committed), 0 (stale), 3
   (LDL_ESTORE with SQLSTATE 40001 in the why), 4 other */
static int second_tx(void *arg, int in, int out)
{
    two_arg *a = (two_arg *)arg;
    PGconn *c = pgt_connect("");
    ldl_pg p;
    char sql[128], fs[24];
    const char *vals[3];
    int rc;
    (void)in;
    if (fence_init(&p, c) != LDL_OK) return 5;
    snprintf(sql, sizeof sql, "BEGIN ISOLATION LEVEL %s", a->iso);
    if (!pgt_exec(c, sql) || !pgt_exec(c, "SET LOCAL lock_timeout = '60s'") ||
        !pgt_exec(c, "SET LOCAL statement_timeout = '90s'")) return 6;
    st_send(out, 's');
    rc = ldl_pg_fence(&p, a->res, a->f);
    if (rc == 1) {
        snprintf(fs, sizeof fs, "%lld", (long long)a->f);
        vals[0] = a->res; vals[1] = "second"; vals[2] = fs;
        PQclear(PQexecParams(c, "INSERT INTO fz_data VALUES ($1, $2, $3) ON CONFLICT (resource) "
                             "DO UPDATE SET who = EXCLUDED.who, fence = EXCLUDED.fence", 3, NULL, vals, NULL, NULL, 0));
        if (!pgt_exec(c, "COMMIT")) rc = 7;
    } else {
        pgt_exec(c, "ROLLBACK");
    }
    if (rc < 0) fprintf(stderr, "second: %d %s\n", rc, ldl_pg_why(&p));
    PQfinish(c);
    return rc == 1 ? 1 : rc == 0 ? 0 : rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "40001") ? 3 :
           rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "could not serialize") ? 3 : 4;
}

/* 1 once a backend waits on a lock while running the fence statement */
static int waiting_on_lock(PGconn *chk)
{
    uint64_t end = st_now_ms() + 60000;
    while (st_now_ms() < end) {
        if (pgt_int(chk, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'INSERT INTO %_fence%'", NULL) >= 1) return 1;
        st_sleep_ms(20);
    }
    return 0;
}

static void two(const char *iso, int64_t first, int64_t second, int first_commits, int want, int64_t want_mark,
                const char *want_who)
{
    static int n;
    PGconn *c = pgt_connect(""), *chk = direct();
    ldl_pg p;
    st_child ch;
    two_arg a;
    char res[64], sql[256];
    int ex;
    snprintf(res, sizeof res, "two-%d", ++n);
    if (fence_init(&p, c) != LDL_OK) { ST_CHECK(0, "two: init"); return; }
    ST_CHECK(write_data(c, &p, res, "start", 4) == 1, "two %d: start at mark 4", n);
    snprintf(sql, sizeof sql, "BEGIN ISOLATION LEVEL %s", iso);
    pgt_exec(c, sql);
    pgt_exec(c, "SET LOCAL idle_in_transaction_session_timeout = '120s'");
    ST_CHECK(ldl_pg_fence(&p, res, first) == 1, "two %d (%s): the first (%lld) passes", n, iso, (long long)first);
    {
        char fs[24];
        const char *vals[2];
        snprintf(fs, sizeof fs, "%lld", (long long)first);
        vals[0] = res; vals[1] = fs;
        PQclear(PQexecParams(c, "UPDATE fz_data SET who = 'first', fence = $2::bigint WHERE resource = $1",
                             2, NULL, vals, NULL, NULL, 0));
    }
    a.res = res; a.iso = iso; a.f = second;
    ST_CHECK(st_fork(&ch, second_tx, &a) == 0, "fork the second");
    ST_CHECK(st_recv(ch.from_child, 60000) == 's', "two %d: the second began", n);
    ST_CHECK(waiting_on_lock(chk), "two %d: the second (%lld) waits on the mark's row lock", n, (long long)second);
    pgt_exec(c, first_commits ? "COMMIT" : "ROLLBACK");
    ex = st_join(&ch, 90000);
    ST_CHECK(ex == want, "two %d (%s, %lld then %lld, first %s): the second answered %d, want %d", n, iso,
             (long long)first, (long long)second, first_commits ? "commits" : "rolls back", ex, want);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM fz_data WHERE resource = '%s' AND who = '%s' AND fence = %lld",
             res, want_who, (long long)want_mark);
    ST_CHECK(mark_of(chk, res) == want_mark && pgt_int(chk, sql, NULL) == 1,
             "two %d: mark %lld and the data of '%s' (mark %lld)", n, (long long)want_mark, want_who,
             (long long)mark_of(chk, res));
    if (ex == 3) {          /* a serialization failure: the retry gets the protocol's answer */
        PGconn *c2 = pgt_connect("");
        ldl_pg p2;
        int rc;
        fence_init(&p2, c2);
        rc = write_data(c2, &p2, res, "retry", second);
        ST_CHECK(rc == (second >= want_mark ? 1 : 0), "two %d: the retried second answers %d", n, rc);
        PQfinish(c2);
    }
    PQfinish(c); PQfinish(chk);
}

static void two_transactions(void)
{
    PGconn *chk = direct();
    setup_data(chk);
    PQfinish(chk);
    /*   isolation           first second first commits  second's answer  mark  data */
    two("READ COMMITTED",       5,  6,     1,            1,               6,    "second");
    two("READ COMMITTED",       6,  5,     1,            0,               6,    "first");
    two("READ COMMITTED",       6,  5,     0,            1,               5,    "second");
    two("READ COMMITTED",       5,  5,     1,            1,               5,    "second");
    two("REPEATABLE READ",      5,  6,     1,            3,               5,    "first");
    two("REPEATABLE READ",      6,  5,     1,            3,               6,    "first");
    two("REPEATABLE READ",      6,  5,     0,            1,               5,    "second");
    two("SERIALIZABLE",         5,  6,     1,            3,               5,    "first");
    two("SERIALIZABLE",         6,  5,     1,            3,               6,    "first");
}

/* ------------------------------------------------------------ many processes, many rounds */
#define NPROC 4
#define ROUNDS 60
#define IL_RES "interleaved"

static int il_child(void *arg, int in, int out)
{
    int who = (int)(intptr_t)arg, round, bad = 0;
    PGconn *c = pgt_connect(""), *rec = pgt_connect("");
    ldl_pg p;
    unsigned seed = 1234567u + (unsigned)who * 7919u;
    (void)in; (void)out;
    if (fence_init(&p, c) != LDL_OK) return 20;
    for (round = 0; round < ROUNDS + 10; round++) {
        int64_t f;
        int rc, commit;
        char w[16], r[16], fs[24], rcs[8];
        const char *vals[5];
        seed = seed * 1103515245u + 12345u;
        /* rounds < ROUNDS: fences that grow slowly with overlap; the last 10: one equal fence */
        f = round < ROUNDS ? 1 + round / 4 + (int64_t)((seed >> 16) % 5) : 1000;
        commit = round >= ROUNDS || ((seed >> 8) % 6) != 0;
        if (!pgt_exec(c, "BEGIN") || !pgt_exec(c, "SET LOCAL lock_timeout = '60s'") ||
            !pgt_exec(c, "SET LOCAL statement_timeout = '90s'")) { bad++; continue; }
        rc = ldl_pg_fence(&p, IL_RES, f);
        snprintf(w, sizeof w, "%d", who); snprintf(r, sizeof r, "%d", round);
        snprintf(fs, sizeof fs, "%lld", (long long)f); snprintf(rcs, sizeof rcs, "%d", rc);
        if (rc == 1) {
            vals[0] = IL_RES; vals[1] = fs; vals[2] = w;
            PQclear(PQexecParams(c, "INSERT INTO fz_log (resource, fence, who) VALUES ($1, $2, $3)",
                                 3, NULL, vals, NULL, NULL, 0));
            if ((seed >> 4) % 3 == 0) st_sleep_ms(2);          /* hold the mark a little */
        }
        if (rc < 0) { fprintf(stderr, "il %d: %d %s\n", who, rc, ldl_pg_why(&p)); bad++; }
        commit = commit && rc == 1 && pgt_exec(c, "COMMIT");
        if (!commit) pgt_exec(c, "ROLLBACK");
        if (round >= ROUNDS && rc != 1) bad++;                 /* equal fences all pass */
        vals[0] = w; vals[1] = r; vals[2] = fs; vals[3] = rcs; vals[4] = commit ? "t" : "f";
        PQclear(PQexecParams(rec, "INSERT INTO fz_try VALUES ($1, $2, $3, $4, $5)", 5, NULL, vals, NULL, NULL, 0));
    }
    PQfinish(c); PQfinish(rec);
    return bad ? 10 : 0;
}

static void interleaved(void)
{
    PGconn *chk = direct();
    st_child ch[NPROC];
    int i;
    setup_data(chk);
    for (i = 0; i < NPROC; i++) ST_CHECK(st_fork(&ch[i], il_child, (void *)(intptr_t)i) == 0, "fork %d", i);
    for (i = 0; i < NPROC; i++)
        ST_CHECK(st_join(&ch[i], 300000) == 0, "interleaver %d: no errors, its equal fences all passed", i);
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM fz_try", NULL) == NPROC * (ROUNDS + 10), "every attempt recorded");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM fz_try WHERE rc = 1 AND committed", NULL) ==
             pgt_int(chk, "SELECT count(*) FROM fz_log", NULL), "the log holds exactly the committed passes");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM fz_try WHERE rc = 0", NULL) > 0 &&
             pgt_int(chk, "SELECT count(*) FROM fz_try WHERE rc = 1 AND NOT committed", NULL) > 0 &&
             pgt_int(chk, "SELECT count(*) FROM fz_try WHERE rc = 1 AND committed AND round < 60", NULL) > 0,
             "the run mixed refusals, rolled-back passes and committed passes");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM (SELECT fence, lag(fence) OVER (ORDER BY id) AS prev "
                     "FROM fz_log) x WHERE fence < prev", NULL) == 0,
             "the accepted writes are fence-monotonic in commit order");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM fz_try t WHERE rc = 0 AND NOT EXISTS "
                     "(SELECT 1 FROM fz_log l WHERE l.fence > t.fence)", NULL) == 0,
             "every refused fence was below an accepted one");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM fz_log WHERE fence = 1000", NULL) == NPROC * 10,
             "equal fences from every process all passed");
    ST_CHECK(mark_of(chk, IL_RES) == pgt_int(chk, "SELECT max(fence) FROM fz_log", NULL),
             "the mark is the highest committed fence");
    {
        PGconn *c = pgt_connect("");
        ldl_pg p;
        fence_init(&p, c);
        ST_CHECK(fenced_tx(c, &p, IL_RES, 5000, 0) == 1 && mark_of(chk, IL_RES) == 1000,
                 "a rolled-back higher fence leaves the mark at 1000");
        PQfinish(c);
    }
    PQfinish(chk);
}

int main(void)
{
    st_ignore_sigpipe();
    mode = getenv("LDL_PGB_MODE");
    if (mode && strncmp(mode, "tx", 2) == 0) flags = LDL_PG_UNNAMED;
    fqt = mode ? "pool.ldl_fz_fence" : "public.ldl_fz_fence";
    {   /* every run starts clean (with_pg.sh runs several commands on one server) */
        PGconn *chk = direct();
        static const char *clean[] = {
            "SET client_min_messages = warning",
            "DROP TABLE IF EXISTS ldl_fz_fence, ldl_fz_lease, fz_data, fz_log, fz_try, fz_lease, "
            "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn_fence", NULL };
        ST_CHECK(pgt_exec_all(chk, clean), "clean start");
        PQfinish(chk);
    }
    answers();
    if (!mode) hostile_tables();
    paused_writer();
    paused_inside();
    two_transactions();
    interleaved();
    return st_report();
}
