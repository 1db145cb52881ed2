/* pg_grants.c -- who else may write the lock table (issue 24 items 9, 10), on a
 * real server with a real third role. The lock runs as ldl_gapp; ldl_gthird is
 * another login role that was granted rights on the table.
 *   attack    the grant is dangerous: on an initialised table (owned by an
 *             owner role, then by the superuser) the lock's fence reaches 5,
 *             the table's owner grants UPDATE to ldl_gthird, which resets the
 *             row, and the next grant carries fence 2. A new init of that
 *             table is refused, naming the role and the right.
 *   refused   INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER, table- or column-
 *             level, to PUBLIC, to a role, to a group a role inherits from, to
 *             a group the lock role shares with the third role; a table owned
 *             by another role that is not a superuser. Nothing is written.
 *   accepted  no grants; SELECT and REFERENCES to anyone; writes granted to a
 *             member of the owner (a NOINHERIT one too: it can SET ROLE) or of
 *             the lock role; the usual DBA set-up (the superuser creates the
 *             table and grants the lock role SELECT, INSERT, UPDATE).
 *   limit     what init cannot see: a member of pg_write_all_data may write
 *             every table; init accepts (docs/postgres.md says so).
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define APP "user=ldl_gapp"
#define SHAPE "(key text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 1), " \
              "expires_at timestamptz NOT NULL, owner text, owner_token bigint)"

static const char *setup_su[] = {
    "SET client_min_messages = warning",
    "DROP SCHEMA IF EXISTS g CASCADE",
    "CREATE ROLE ldl_gapp LOGIN",                   /* the lock's role */
    "CREATE ROLE ldl_gthird LOGIN",                 /* a third role */
    "CREATE ROLE ldl_gowner NOLOGIN",               /* owns the tables: the lock's group */
    "GRANT ldl_gowner TO ldl_gapp",
    "CREATE ROLE ldl_ggroup NOLOGIN",               /* a group the third role inherits */
    "GRANT ldl_ggroup TO ldl_gthird",
    "CREATE ROLE ldl_gwriters NOLOGIN",             /* a group of the lock AND the third role */
    "GRANT ldl_gwriters TO ldl_gapp, ldl_gthird",
    "CREATE ROLE ldl_gni LOGIN NOINHERIT",          /* a NOINHERIT member of the owner */
    "GRANT ldl_gowner TO ldl_gni",
    "CREATE ROLE ldl_gsub LOGIN",                   /* a member of the lock's role */
    "GRANT ldl_gapp TO ldl_gsub",
    "CREATE ROLE ldl_gother NOLOGIN",               /* another owner, not the lock's */
    "CREATE SCHEMA g AUTHORIZATION ldl_gowner",
    "GRANT USAGE ON SCHEMA g TO PUBLIC",
    "GRANT CREATE ON SCHEMA g TO ldl_gother",
    NULL
};

static const char *cleanup_su[] = {
    "DROP SCHEMA g CASCADE",
    "DROP ROLE ldl_gsub", "DROP ROLE ldl_gni", "DROP ROLE ldl_gwriters", "DROP ROLE ldl_ggroup",
    "DROP ROLE ldl_gthird", "DROP ROLE ldl_gother", "DROP ROLE ldl_gowner", "DROP ROLE ldl_gapp",
    NULL
};

/* g.<name> of the adapter's shape, created by owner (NULL: the superuser),
   then `grants` run as the owner (each %s is the table's name; may be NULL) */
static int make_table(PGconn *su, const char *name, const char *owner, const char *grants)
{
    char sql[1024], t[64];
    int ok = 1;
    snprintf(t, sizeof t, "g.%s", name);
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", t);
    ok &= pgt_exec(su, sql);
    if (owner) { snprintf(sql, sizeof sql, "SET ROLE %s", owner); ok &= pgt_exec(su, sql); }
    snprintf(sql, sizeof sql, "CREATE TABLE %s " SHAPE, t);
    ok &= pgt_exec(su, sql);
    if (grants) { snprintf(sql, sizeof sql, grants, t, t, t, t); ok &= pgt_exec(su, sql); }
    ok &= pgt_exec(su, "RESET ROLE");
    return ok;
}

static int64_t rows(PGconn *su, const char *name)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM g.%s", name);
    return pgt_int(su, sql, NULL);
}

/* acquire and release "k" until its fence is `upto`; the last token */
static int64_t cycle(ldl_store *s, int64_t upto)
{
    int64_t t = 0;
    while (t < upto) {
        if (s->acquire(s->ctx, "k", 60000, &t) != 1 || s->release(s->ctx, "k", t) != 1) return -1;
    }
    return t;
}

/* the fence reset, then the refusal at the next init */
static void attack(PGconn *su, PGconn *app, PGconn *third, const char *name, const char *owner)
{
    const char *who = owner ? owner : "the superuser";
    char sql[256], t[64];
    ldl_pg pg = {0}, again = {0};
    ldl_store s;
    int64_t tok = 0;
    int rc;
    snprintf(t, sizeof t, "g.%s", name);
    ST_CHECK(make_table(su, name, owner, owner ? NULL : "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gapp"),
             "attack: %s owned by %s", t, who);
    rc = ldl_pg_init(&pg, app, t);
    ST_CHECK(rc == LDL_OK, "attack: %s owned by %s, no other writer: accepted (%d, %s)", t, who, rc,
             ldl_pg_why(&pg));
    if (rc != LDL_OK) return;
    s = ldl_pg_store(&pg);
    tok = cycle(&s, 5);
    ST_CHECK(tok == 5, "attack: fence 5 on %s (%lld)", t, (long long)tok);
    /* the owner grants UPDATE (only) to a third role, which resets every row */
    if (owner) { snprintf(sql, sizeof sql, "SET ROLE %s", owner); pgt_exec(su, sql); }
    snprintf(sql, sizeof sql, "GRANT UPDATE ON %s TO ldl_gthird", t);
    ST_CHECK(pgt_exec(su, sql) && pgt_exec(su, "RESET ROLE"), "attack: GRANT UPDATE TO ldl_gthird");
    snprintf(sql, sizeof sql, "UPDATE %s SET token = 1, expires_at = '-infinity'", t);
    ST_CHECK(pgt_exec(third, sql), "attack: ldl_gthird resets the row");
    rc = s.acquire(s.ctx, "k", 60000, &tok);
    ST_CHECK(rc == 1 && tok == 2, "attack (control): the already initialised lock's next grant "
             "carries fence 2 after 5 (%d, %lld): a grant after init is not seen", rc, (long long)tok);
    /* the next process start refuses the table */
    rc = ldl_pg_init(&again, app, t);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&again), "ldl_gthird holds UPDATE") != NULL,
             "attack: init of %s (%s's) with UPDATE granted to ldl_gthird refused (%d, %s)", t, who, rc,
             ldl_pg_why(&again));
    ST_CHECK(PQtransactionStatus(app) == PQTRANS_IDLE, "attack: connection idle after the refusal");
}

typedef struct gcase {
    const char *name, *owner, *grants;
    int ok;                     /* 1: init must accept */
    const char *why;            /* refused: a substring of the why */
} gcase;

static const gcase cases[] = {
    /* item 9: another role may write: refused */
    { "upd",      "ldl_gowner", "GRANT UPDATE ON %s TO ldl_gthird", 0, "ldl_gthird holds UPDATE and" },
    { "colupd",   "ldl_gowner", "GRANT UPDATE (token) ON %s TO ldl_gthird", 0, "ldl_gthird holds UPDATE (column token)" },
    { "colins",   "ldl_gowner", "GRANT SELECT ON %s TO ldl_gthird; GRANT INSERT (owner) ON %s TO ldl_gthird", 0,
      "ldl_gthird holds INSERT (column owner)" },
    { "pubins",   "ldl_gowner", "GRANT INSERT ON %s TO PUBLIC", 0, "PUBLIC holds INSERT" },
    { "pubcol",   "ldl_gowner", "GRANT UPDATE (expires_at) ON %s TO PUBLIC", 0, "PUBLIC holds UPDATE (column expires_at)" },
    { "grpdel",   "ldl_gowner", "GRANT DELETE ON %s TO ldl_ggroup", 0, "ldl_ggroup holds DELETE" },
    { "trunc",    "ldl_gowner", "GRANT TRUNCATE ON %s TO ldl_gthird", 0, "ldl_gthird holds TRUNCATE" },
    { "trig",     "ldl_gowner", "GRANT TRIGGER ON %s TO ldl_gthird", 0, "ldl_gthird holds TRIGGER" },
    { "writers",  NULL,         "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gwriters", 0, "ldl_gwriters holds" },
    /* item 10 keeps refusing a non-member owner that is not a superuser */
    { "other",    "ldl_gother", "GRANT ALL ON %s TO ldl_gapp", 0, "owned by a role" },
    /* item 10: superuser-owned, with 9's rule */
    { "su_upd",   NULL, "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gapp; GRANT UPDATE ON %s TO ldl_gthird", 0,
      "ldl_gthird holds UPDATE" },
    { "su_pub",   NULL, "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gapp; GRANT UPDATE (token) ON %s TO PUBLIC", 0,
      "PUBLIC holds UPDATE (column token)" },
    /* accepted */
    { "clean",    "ldl_gowner", NULL, 1, NULL },
    { "reads",    "ldl_gowner", "GRANT SELECT, REFERENCES ON %s TO PUBLIC; GRANT SELECT (key) ON %s TO ldl_gthird; "
                                "GRANT SELECT ON %s TO ldl_ggroup", 1, NULL },
    { "member",   "ldl_gowner", "GRANT ALL ON %s TO ldl_gni; GRANT ALL ON %s TO ldl_gapp", 1, NULL },
    { "sub",      "ldl_gowner", "GRANT UPDATE, DELETE ON %s TO ldl_gsub", 1, NULL },
    { "su_usual", NULL, "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gapp", 1, NULL },
    { "su_sub",   NULL, "GRANT SELECT, INSERT, UPDATE ON %s TO ldl_gapp; GRANT SELECT ON %s TO PUBLIC; "
                        "GRANT UPDATE ON %s TO ldl_gsub", 1, NULL },
};

static void table_cases(PGconn *su, PGconn *app)
{
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gcase *c = &cases[i];
        char t[64];
        ldl_pg pg = {0};
        int rc;
        snprintf(t, sizeof t, "g.%s", c->name);
        if (!make_table(su, c->name, c->owner, c->grants)) { ST_CHECK(0, "create %s", t); continue; }
        rc = ldl_pg_init(&pg, app, t);
        if (c->ok) {
            ldl_store s = ldl_pg_store(&pg);
            ldl_store_ext x = ldl_pg_ext(&pg);
            int64_t tok = 0;
            ldl_holder h;
            ST_CHECK(rc == LDL_OK, "%s accepted (%d, %s)", t, rc, ldl_pg_why(&pg));
            ST_CHECK(rc == LDL_OK && x.acquire_owned && x.acquire_owned(x.ctx, "k", 5000, "me", &tok) == 1 &&
                     tok == 1 && s.renew(s.ctx, "k", tok, 5000) == 1 && x.inspect(x.ctx, "k", &h) == 1 &&
                     strcmp(h.owner, "me") == 0 && s.release(s.ctx, "k", tok) == 1,
                     "%s: acquire_owned, renew, inspect, release work (%s)", t, ldl_pg_why(&pg));
            /* the next holder's owner, then none from a plain grant */
            ST_CHECK(rc == LDL_OK && x.acquire_owned(x.ctx, "k", 5000, "you", &tok) == 1 && tok == 2 &&
                     x.inspect(x.ctx, "k", &h) == 1 && h.token == 2 && strcmp(h.owner, "you") == 0 &&
                     s.release(s.ctx, "k", tok) == 1 && s.acquire(s.ctx, "k", 5000, &tok) == 1 && tok == 3 &&
                     x.inspect(x.ctx, "k", &h) == 1 && h.token == 3 && h.owner[0] == '\0' &&
                     s.release(s.ctx, "k", tok) == 1,
                     "%s: a re-grant shows its own owner, a plain grant none (\"%s\")", t, h.owner);
            if (strcmp(c->name, "clean") == 0) {   /* owners are printable ASCII, both ways */
                tok = 7;
                ST_CHECK(x.acquire_owned(x.ctx, "k2", 5000, "a\x1b[2J", &tok) == LDL_EINVAL && tok == 0 &&
                         x.acquire_owned(x.ctx, "k2", 5000, "\xc2\x9b", &tok) == LDL_EINVAL &&
                         pgt_int(su, "SELECT count(*) FROM g.clean WHERE key = 'k2'", NULL) == 0,
                         "%s: an owner with a control or C1 byte: LDL_EINVAL, nothing written", t);
                ST_CHECK(x.acquire_owned(x.ctx, "k2", 5000, "ok", &tok) == 1, "%s: acquire k2", t);
                ST_CHECK(pgt_exec(su, "UPDATE g.clean SET owner = E'x\\007' WHERE key = 'k2'") &&
                         x.inspect(x.ctx, "k2", &h) == LDL_ESTORE && h.token == 0,
                         "%s: a stored owner with a control byte: inspect answers LDL_ESTORE", t);
            }
        } else {
            ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&pg), c->why) != NULL,
                     "%s refused naming \"%s\" (%d, %s)", t, c->why, rc, ldl_pg_why(&pg));
            ST_CHECK(rows(su, c->name) == 0, "%s: nothing written", t);
            ST_CHECK(PQtransactionStatus(app) == PQTRANS_IDLE, "%s: connection idle", t);
        }
    }
}

/* docs/postgres.md: a right that holds on every table is not the table's to
   refuse (pg_write_all_data, PostgreSQL 14+): accepted, and the role can write */
static void limit_write_all(PGconn *su, PGconn *app, PGconn *third)
{
    ldl_pg pg = {0};
    int rc;
    ST_CHECK(make_table(su, "wall", "ldl_gowner", NULL) && pgt_exec(su, "GRANT pg_write_all_data TO ldl_gthird"),
             "limit: ldl_gthird a member of pg_write_all_data");
    rc = ldl_pg_init(&pg, app, "g.wall");
    ST_CHECK(rc == LDL_OK, "limit: init does not see pg_write_all_data (%d, %s)", rc, ldl_pg_why(&pg));
    ST_CHECK(pgt_exec(third, "UPDATE g.wall SET token = 1"), "limit: and ldl_gthird may write g.wall");
    ST_CHECK(pgt_exec(su, "REVOKE pg_write_all_data FROM ldl_gthird"), "limit: revoke");
}

int main(void)
{
    PGconn *su, *app, *third;
    st_ignore_sigpipe();
    su = pgt_connect("");
    ST_CHECK(PQstatus(su) == CONNECTION_OK, "connect as the superuser");
    if (st_failed()) return st_report();
    ST_CHECK(pgt_exec_all(su, setup_su), "roles and schema");
    app = pgt_connect(APP);
    third = pgt_connect("user=ldl_gthird");
    ST_CHECK(PQstatus(app) == CONNECTION_OK && PQstatus(third) == CONNECTION_OK, "connect as the lock and the third role");
    if (!st_failed()) {
        attack(su, app, third, "fence_owner", "ldl_gowner");
        attack(su, app, third, "fence_su", NULL);
        table_cases(su, app);
        limit_write_all(su, app, third);
    }
    PQfinish(app);
    PQfinish(third);
    ST_CHECK(pgt_exec_all(su, cleanup_su), "cleanup");
    PQfinish(su);
    return st_report();
}
