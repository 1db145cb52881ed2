/* pg_hostile.c -- the PostgreSQL adapter against another role in the same
 * database, on a real server. The lock runs as ldl_app (not a superuser) with
 * search_path = evil, pg_catalog, app, where the role ldl_evil owns schema evil
 * and fills it with operators and functions that would hand out a second
 * grant (*, +, <=, >, = and clock_timestamp()) and log every call, plus a
 * table of the default name. Checked:
 *   - the hostile path is live: the unqualified v0.1 expression calls evil's
 *     operator (a control, so the checks below can fail);
 *   - through the adapter (sync and non-blocking) a held key is never granted
 *     twice, the row's expiry is the server's now + TTL, and no evil function
 *     ever runs;
 *   - the default table name resolves to evil.ldl_lease: init refuses it (not
 *     the role's), and refuses tables that are not the adapter's (trigger,
 *     extra column, row level security, extra UNIQUE, view, partitioned);
 *   - a foreign prepared statement under the adapter's name fails init.
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define APP "user=ldl_app options='-c search_path=evil,pg_catalog,app'"

static const char *setup_su[] = {
    "SET client_min_messages = warning",
    "DROP SCHEMA IF EXISTS evil CASCADE",
    "DROP SCHEMA IF EXISTS app CASCADE",
    "DROP ROLE IF EXISTS ldl_evil",
    "DROP ROLE IF EXISTS ldl_app",
    "CREATE ROLE ldl_evil LOGIN",
    "CREATE ROLE ldl_app LOGIN",
    "CREATE SCHEMA evil AUTHORIZATION ldl_evil",
    "CREATE SCHEMA app AUTHORIZATION ldl_app",
    "GRANT USAGE ON SCHEMA evil TO ldl_app",
    NULL
};

/* what the other role does, as itself */
static const char *setup_evil[] = {
    "CREATE TABLE evil.ran (what text)",
    "GRANT INSERT, SELECT ON evil.ran TO PUBLIC",
    "CREATE FUNCTION evil.mul_i(bigint, interval) RETURNS interval LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('mul_i'); RETURN interval '-1 hour'; END $$",
    "CREATE OPERATOR evil.* (LEFTARG = bigint, RIGHTARG = interval, FUNCTION = evil.mul_i)",
    "CREATE FUNCTION evil.mul_f(float8, interval) RETURNS interval LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('mul_f'); RETURN interval '-1 hour'; END $$",
    "CREATE OPERATOR evil.* (LEFTARG = float8, RIGHTARG = interval, FUNCTION = evil.mul_f)",
    "CREATE FUNCTION evil.pl(timestamptz, interval) RETURNS timestamptz LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('pl'); RETURN '-infinity'; END $$",
    "CREATE OPERATOR evil.+ (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = evil.pl)",
    "CREATE FUNCTION evil.le(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('le'); RETURN true; END $$",
    "CREATE OPERATOR evil.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.le)",
    "CREATE FUNCTION evil.gt(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('gt'); RETURN true; END $$",
    "CREATE OPERATOR evil.> (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = evil.gt)",
    "CREATE FUNCTION evil.eq(text, text) RETURNS boolean LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('eq'); RETURN true; END $$",
    "CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.eq)",
    "CREATE FUNCTION evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS "
    "$$ BEGIN INSERT INTO evil.ran VALUES ('clock'); RETURN '2000-01-01'; END $$",
    "CREATE TABLE evil.ldl_lease (key text PRIMARY KEY, token bigint NOT NULL, expires_at timestamptz NOT NULL)",
    "GRANT ALL ON evil.ldl_lease TO ldl_app",
    NULL
};

static int64_t evil_ran(PGconn *su)
{
    return pgt_int(su, "SELECT count(*) FROM evil.ran", NULL);
}

static void control(PGconn *app, PGconn *su)
{
    /* the v0.1 expression, unqualified, on this search_path: evil's operator answers */
    int64_t before = evil_ran(su);
    int64_t neg = pgt_int(app, "SELECT (extract(epoch FROM 5::int8 * interval '1 millisecond'))::bigint", NULL);
    ST_CHECK(neg == -3600, "control: the unqualified expression gave %lld s (evil's -1 hour)", (long long)neg);
    ST_CHECK(evil_ran(su) > before, "control: evil's function ran as the lock's role");
    ST_CHECK(pgt_exec(su, "TRUNCATE evil.ran"), "truncate evil.ran");
}

static void no_second_grant(PGconn *app, PGconn *su)
{
    PGconn *app2 = pgt_connect(APP);
    ldl_pg a = {0}, b = {0};
    ldl_store sa, sb;
    int64_t ta = 0, tb = 0;
    int rc;
    rc = ldl_pg_init(&a, app, "app.lease");
    ST_CHECK(rc == LDL_OK, "init app.lease as ldl_app: %d (%s)", rc, ldl_pg_why(&a));
    rc = ldl_pg_init_ex(&b, app2, "app.lease", LDL_PG_UNNAMED);
    ST_CHECK(rc == LDL_OK, "init app.lease, unnamed: %d (%s)", rc, ldl_pg_why(&b));
    sa = ldl_pg_store(&a);
    sb = ldl_pg_store(&b);
    rc = sa.acquire(sa.ctx, "k", 60000, &ta);
    ST_CHECK(rc == 1 && ta == 1, "first acquire = %d token %lld (%s)", rc, (long long)ta, ldl_pg_why(&a));
    rc = sb.acquire(sb.ctx, "k", 60000, &tb);
    ST_CHECK(rc == 0 && tb == 0, "second acquire of a held key = %d token %lld (want 0)", rc, (long long)tb);
    {
        int64_t left = pgt_int(su, "SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint "
                                   "FROM app.lease WHERE key = 'k'", NULL);
        ST_CHECK(left > 58000 && left <= 60000, "expiry is the server's now + 60 s: %lld ms left", (long long)left);
    }
    ST_CHECK(sb.renew(sb.ctx, "k", ta + 1, 60000) == 0, "renew with a wrong token = 0");
    ST_CHECK(sb.renew(sb.ctx, "other", ta, 60000) == 0, "renew of another key = 0");
    ST_CHECK(sa.renew(sa.ctx, "k", ta, 60000) == 1, "renew = 1");
    ST_CHECK(sb.release(sb.ctx, "k", ta + 1) == 0, "release with a wrong token = 0");

    /* the non-blocking view on the same hostile path */
    {
        static ldl_pg_req reqs[8];
        ldl_pg_async pa;
        ldl_async_store as;
        pgt_alock l;
        uint64_t end = st_now_ms() + 5000;
        ST_CHECK(ldl_pg_async_init(&pa, &b, reqs, 8) == LDL_OK, "async init (%s)", ldl_pg_why(&b));
        as = ldl_pg_async_store(&pa);
        ST_CHECK(pgt_alock_init(&l, &as, "k", 60000, 20000) == 0, "async lock");
        ST_CHECK(ldl_lock_acquire(&l.lock) == LDL_EINPROGRESS, "async acquire in flight");
        while (ldl_lock_pending(&l.lock) && st_now_ms() < end) {
            (void)ldl_pg_async_pump(&pa);
            (void)ldl_lock_poll(&l.lock);
            st_sleep_ms(1);
        }
        ST_CHECK(ldl_lock_state(&l.lock) == LDL_IDLE && ldl_lock_answer(&l.lock) == 0 &&
                 ldl_lock_raw_answer(&l.lock) == 0,
                 "async acquire of the held key answered 0, not a store error (state %s, raw %d: %s)",
                 ldl_state_name(ldl_lock_state(&l.lock)), ldl_lock_raw_answer(&l.lock), ldl_pg_why(&b));
        ldl_lock_dispose(&l.lock);
    }
    ST_CHECK(sa.release(sa.ctx, "k", ta) == 1, "release = 1");
    ST_CHECK(evil_ran(su) == 0, "no evil function ran (%lld calls)", (long long)evil_ran(su));
    PQfinish(app2);
}

static void refused_tables(PGconn *app, PGconn *su)
{
    static const struct { const char *name, *sql; } t[] = {
        { "app.trig", "CREATE TABLE app.trig (key text PRIMARY KEY, token bigint NOT NULL, expires_at timestamptz NOT NULL);"
                      "CREATE FUNCTION app.f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;"
                      "CREATE TRIGGER t BEFORE UPDATE ON app.trig FOR EACH ROW EXECUTE FUNCTION app.f()" },
        { "app.extra", "CREATE TABLE app.extra (key text PRIMARY KEY, token bigint NOT NULL, "
                       "expires_at timestamptz NOT NULL, note text)" },
        { "app.rls", "CREATE TABLE app.rls (key text PRIMARY KEY, token bigint NOT NULL, expires_at timestamptz NOT NULL);"
                     "ALTER TABLE app.rls ENABLE ROW LEVEL SECURITY" },
        { "app.uniq", "CREATE TABLE app.uniq (key text PRIMARY KEY, token bigint NOT NULL UNIQUE, "
                      "expires_at timestamptz NOT NULL)" },
        { "app.pkboth", "CREATE TABLE app.pkboth (key text, token bigint NOT NULL, expires_at timestamptz NOT NULL, "
                        "PRIMARY KEY (key, token))" },
        { "app.nullable", "CREATE TABLE app.nullable (key text PRIMARY KEY, token bigint, expires_at timestamptz NOT NULL)" },
        { "app.v", "CREATE VIEW app.v AS SELECT * FROM app.lease" },
        { "app.part", "CREATE TABLE app.part (key text PRIMARY KEY, token bigint NOT NULL, "
                      "expires_at timestamptz NOT NULL) PARTITION BY HASH (key)" },
    };
    size_t i;
    ldl_pg p = {0};
    int rc;
    (void)su;
    /* the default name resolves through search_path to evil's table */
    {
        PGresult *r = PQexec(app, "SELECT c.relnamespace::pg_catalog.regnamespace::pg_catalog.text FROM pg_catalog.pg_class c "
                                "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('ldl_lease')");
        ST_CHECK(r && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "evil") == 0,
                 "control: 'ldl_lease' resolves to evil.ldl_lease for ldl_app");
        PQclear(r);
    }
    rc = ldl_pg_init(&p, app, NULL);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "owned") != NULL,
             "evil's table of the default name refused: %d (%s)", rc, ldl_pg_why(&p));
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        ST_CHECK(pgt_exec(app, t[i].sql), "create %s", t[i].name);
        rc = ldl_pg_init(&p, app, t[i].name);
        ST_CHECK(rc == LDL_ESTORE, "%s refused: %d (%s)", t[i].name, rc, ldl_pg_why(&p));
    }
    /* a table of ldl_app's that is the adapter's shape, made by hand: accepted */
    ST_CHECK(pgt_exec(app, "CREATE TABLE app.byhand (key text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 1), "
                           "expires_at timestamptz NOT NULL)"), "create app.byhand");
    rc = ldl_pg_init(&p, app, "app.byhand");
    ST_CHECK(rc == LDL_OK, "a hand-made table of the right shape is accepted: %d (%s)", rc, ldl_pg_why(&p));
    ST_CHECK(PQtransactionStatus(app) == PQTRANS_IDLE, "connection idle after the refusals");
}

/* docs/postgres.md "Minimum rights": a table owned by a role ldl_app inherits
   from is accepted; DML grants on a table owned by someone else are not */
static void owner_role(PGconn *su)
{
    PGconn *app;
    ldl_pg p = {0};
    int rc;
    ST_CHECK(pgt_exec(su, "DROP SCHEMA IF EXISTS locks CASCADE") && pgt_exec(su, "DROP ROLE IF EXISTS ldl_locks") &&
             pgt_exec(su, "CREATE ROLE ldl_locks NOLOGIN") &&
             pgt_exec(su, "CREATE SCHEMA locks AUTHORIZATION ldl_locks") && pgt_exec(su, "SET ROLE ldl_locks") &&
             pgt_exec(su, "CREATE TABLE locks.ldl_lease (key text PRIMARY KEY, token bigint NOT NULL "
                          "CHECK (token >= 1), expires_at timestamptz NOT NULL)") &&
             pgt_exec(su, "CREATE TABLE locks.granted (key text PRIMARY KEY, token bigint NOT NULL, "
                          "expires_at timestamptz NOT NULL)") &&
             pgt_exec(su, "RESET ROLE") && pgt_exec(su, "GRANT USAGE ON SCHEMA locks TO ldl_app") &&
             pgt_exec(su, "GRANT SELECT, INSERT, UPDATE ON locks.granted TO ldl_app"), "owner role setup");
    app = pgt_connect(APP);
    rc = ldl_pg_init(&p, app, "locks.granted");
    ST_CHECK(rc == LDL_ESTORE, "DML grants on another role's table: refused (%d, %s)", rc, ldl_pg_why(&p));
    rc = ldl_pg_init(&p, app, "locks.ldl_lease");
    ST_CHECK(rc == LDL_ESTORE, "not yet a member of the owner role: refused (%d)", rc);
    ST_CHECK(pgt_exec(su, "GRANT ldl_locks TO ldl_app"), "grant the owner role");
    rc = ldl_pg_init(&p, app, "locks.ldl_lease");
    ST_CHECK(rc == LDL_OK, "member of the owner role: accepted (%d, %s)", rc, ldl_pg_why(&p));
    {
        ldl_store s = ldl_pg_store(&p);
        int64_t t = 0;
        ST_CHECK(s.acquire(s.ctx, "o", 5000, &t) == 1 && s.release(s.ctx, "o", t) == 1, "and it works");
    }
    PQfinish(app);
    ST_CHECK(pgt_exec(su, "DROP SCHEMA locks CASCADE") && pgt_exec(su, "REVOKE ldl_locks FROM ldl_app") &&
             pgt_exec(su, "DROP ROLE ldl_locks"), "owner role cleanup");
}

static void foreign_statement(PGconn *su)
{
    PGconn *x = pgt_connect(APP), *y = pgt_connect(APP);
    ldl_pg p = {0};
    PGresult *r;
    int i, n, rc, foreign = 0;
    ST_CHECK(ldl_pg_init(&p, x, "app.lease") == LDL_OK, "init on x: %s", ldl_pg_why(&p));
    r = PQexec(x, "SELECT name FROM pg_catalog.pg_prepared_statements WHERE name LIKE 'ldl\\_%'");
    n = r ? PQntuples(r) : 0;
    ST_CHECK(n == 3, "three adapter statements on x (%d)", n);
    for (i = 0; i < n; i++) {
        PGresult *q = PQprepare(y, PQgetvalue(r, i, 0), "SELECT 42::int8 AS token", 0, NULL);
        foreign += q && PQresultStatus(q) == PGRES_COMMAND_OK;
        PQclear(q);
    }
    PQclear(r);
    ST_CHECK(foreign == 3, "another component prepared SELECT 42 under the adapter's names on y");
    rc = ldl_pg_init(&p, y, "app.lease");
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "foreign") != NULL,
             "init on y refuses the foreign statements: %d (%s)", rc, ldl_pg_why(&p));
    {
        ldl_store s = ldl_pg_store(&p);
        int64_t t = 0;
        rc = s.acquire(s.ctx, "f", 1000, &t);
        ST_CHECK(rc < 0 && t == 0, "no token 42 through the failed init (%d, %lld)", rc, (long long)t);
    }
    ST_CHECK(pgt_exec(y, "DEALLOCATE ALL"), "deallocate the foreign statements");
    rc = ldl_pg_init(&p, y, "app.lease");
    ST_CHECK(rc == LDL_OK, "init on y once they are gone: %d (%s)", rc, ldl_pg_why(&p));
    ST_CHECK(evil_ran(su) == 0, "no evil function ran");
    PQfinish(x);
    PQfinish(y);
}

int main(void)
{
    PGconn *su, *evil, *app;
    st_ignore_sigpipe();
    su = pgt_connect("");
    ST_CHECK(PQstatus(su) == CONNECTION_OK, "connect as the superuser");
    if (st_failed()) return st_report();
    ST_CHECK(pgt_exec_all(su, setup_su), "roles and schemas");
    evil = pgt_connect("user=ldl_evil");
    ST_CHECK(PQstatus(evil) == CONNECTION_OK && pgt_exec_all(evil, setup_evil), "the other role's objects");
    app = pgt_connect(APP);
    ST_CHECK(PQstatus(app) == CONNECTION_OK, "connect as ldl_app");
    if (st_failed()) return st_report();
    control(app, su);
    no_second_grant(app, su);
    refused_tables(app, su);
    foreign_statement(su);
    owner_role(su);
    ST_CHECK(evil_ran(su) == 0, "in the end, evil's functions never ran (%lld)", (long long)evil_ran(su));
    PQfinish(app);
    PQfinish(evil);
    /* leave the server as other suites expect it (one ldl_lease, no extra roles) */
    ST_CHECK(pgt_exec(su, "DROP SCHEMA evil, app CASCADE") && pgt_exec(su, "DROP ROLE ldl_evil") &&
             pgt_exec(su, "DROP ROLE ldl_app"), "cleanup");
    PQfinish(su);
    return st_report();
}
