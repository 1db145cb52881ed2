/* pg_session_design.c -- the statements of decision 0217 (PostgreSQL sessions, issue 34
 * item 3), run as they are written there against a real PostgreSQL
 * (tests/store/with_pg.sh). NOT the adapter: adapters/lite_di_lock_pg.h has no sessions
 * yet (decision 0217 says why and what that build must carry). This program is what makes the design's claims
 * checked before any of it lands in the adapter:
 *   - a session lock's acquire grants when the row is free (released, an expired
 *     per-lock lease, a session expired or deleted) in the same statement, and its token
 *     is the lease row's token + 1 (the fence: never deleted, strictly rising);
 *   - it refuses while the holder's session is alive, and on its own session's key;
 *   - the session renew is one UPDATE that succeeds only while the session is unexpired;
 *   - a renew in flight (its UPDATE done, not yet committed) is never overtaken: an
 *     acquire that meets it answers "held" at once, without waiting for it;
 *   - a session created, and granted the key, after an acquire's snapshot is not taken
 *     for a deleted one by that acquire;
 *   - 1,000 locks on one session: one UPDATE renews them all; the session row deleted by
 *     hand frees every key at once, each taken by another client with a higher fence;
 *   - per-lock and session rows on one table; inspect reports a row of a dead session
 *     as free; the fenced-write check (ldl_pg_fence) takes a session lock's fence as is.
 * Every statement goes out as ONE unnamed statement with parameters (PQexecParams), as
 * LDL_PG_UNNAMED and pgbouncer's transaction pooling need; run under
 * tests/store/with_pgbouncer.sh (LDL_PGB_MODE set) it goes through the pooler, the two
 * races left out. Breaks: tests/mutants/pg_session.txt.
 * Last line: "N passed, N failed". */
#ifndef PGSD_STATEMENTS_ONLY     /* bench/bench_pg.c takes the statements alone */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"
#endif

#define PT "\"ldl_sd\".\"lease\""           /* the lease table, with the session column */
#define PS "\"ldl_sd\".\"lease_session\""   /* the session table: "<table>_session" */
#define NOW "pg_catalog.clock_timestamp()"
#define TTL(n) NOW " OPERATOR(pg_catalog.+) ($" #n \
    "::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval)"

/* the table shapes (decision 0217, "Storage") */
static const char *const setup[] = {      /* the schema: as the table owner, or (behind
                                            pgbouncer) as a superuser for the pooler's role */
    "SET client_min_messages = warning",
    "DROP SCHEMA IF EXISTS ldl_sd CASCADE",
    "CREATE SCHEMA ldl_sd",
    NULL
};
static const char *const setup_tables[] = {
    "CREATE TABLE " PT " (key pg_catalog.text PRIMARY KEY, "
    "token pg_catalog.int8 NOT NULL CHECK (token OPERATOR(pg_catalog.>=) 1::pg_catalog.int8), "
    "expires_at pg_catalog.timestamptz NOT NULL, owner pg_catalog.text, owner_token pg_catalog.int8, "
    "session pg_catalog.uuid)",
    "CREATE TABLE " PS " (id pg_catalog.uuid PRIMARY KEY, expires_at pg_catalog.timestamptz NOT NULL)",
    NULL
};

/* open a session: $1 ttl ms; answers its id */
static const char sql_open[] =
    "INSERT INTO " PS " (id, expires_at) VALUES (pg_catalog.gen_random_uuid(), " TTL(1) ") RETURNING id";

/* the session renew: $1 id, $2 ttl ms; one row while the session is unexpired */
static const char sql_renew[] =
    "UPDATE " PS " AS s SET expires_at = " TTL(2) " "
    "WHERE s.id OPERATOR(pg_catalog.=) $1::pg_catalog.uuid "
    "AND s.expires_at OPERATOR(pg_catalog.>) " NOW " RETURNING 1";

/* the CTEs both acquires share: the row as our snapshot saw it, the row locked (its
   latest version), the holder's session row as the snapshot has it, and the holder's
   session locked only if it is expired at its latest version -- SKIP LOCKED: a session
   row being renewed (or taken by another acquire) right now counts as alive */
#define HOLDER_CTES(k) \
    "snap AS (SELECT l.token FROM " PT " AS l WHERE l.key OPERATOR(pg_catalog.=) $" #k "::pg_catalog.text), " \
    "cur AS (SELECT l.token, l.session FROM " PT " AS l " \
    "WHERE l.key OPERATOR(pg_catalog.=) $" #k "::pg_catalog.text FOR UPDATE), " \
    "seen AS (SELECT h.id FROM " PS " AS h, cur WHERE h.id OPERATOR(pg_catalog.=) cur.session), " \
    "gone AS (SELECT h.id FROM " PS " AS h, cur WHERE h.id OPERATOR(pg_catalog.=) cur.session " \
    "AND h.expires_at OPERATOR(pg_catalog.<=) " NOW " FOR SHARE OF h SKIP LOCKED) "

/* the free test of the conflicting row l: a per-lock row by its own expiry; a session row
   when the row did not change since our snapshot (so its session row, written before the
   grant that named it, was in the snapshot if it existed) and the session is missing or
   expired-and-not-being-renewed */
#define ROW_FREE \
    "CASE WHEN l.session IS NULL THEN l.expires_at OPERATOR(pg_catalog.<=) " NOW " " \
    "ELSE EXISTS (SELECT 1 FROM snap, cur WHERE snap.token OPERATOR(pg_catalog.=) cur.token " \
    "AND cur.token OPERATOR(pg_catalog.=) l.token) " \
    "AND (NOT EXISTS (SELECT 1 FROM seen) OR EXISTS (SELECT 1 FROM gone)) END"

/* acquire of a session lock: $1 key, $2 session id, $3 ttl ms (the session's). One
   statement: extends our own session (so the server's expiry is after this statement,
   hence after the lock's start), then inserts or takes the row. Answers (1, token)
   granted, (1, NULL) held by another, (0, NULL) our session is gone. */
static const char sql_acq_s[] =
    "WITH me AS (UPDATE " PS " AS s SET expires_at = " TTL(3) " "
    "WHERE s.id OPERATOR(pg_catalog.=) $2::pg_catalog.uuid "
    "AND s.expires_at OPERATOR(pg_catalog.>) " NOW " RETURNING s.id), "
    HOLDER_CTES(1) ", "
    "ins AS (INSERT INTO " PT " AS l (key, token, expires_at, session) "
    "SELECT $1::pg_catalog.text, 1::pg_catalog.int8, 'infinity'::pg_catalog.timestamptz, me.id FROM me "
    "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
    "expires_at = 'infinity'::pg_catalog.timestamptz, session = EXCLUDED.session "
    "WHERE " ROW_FREE " RETURNING l.token) "
    "SELECT (SELECT pg_catalog.count(*) FROM me), (SELECT ins.token FROM ins)";

/* acquire of a per-lock lease on a table with sessions: $1 key, $2 ttl ms */
static const char sql_acq_l[] =
    "WITH " HOLDER_CTES(1) " "
    "INSERT INTO " PT " AS l (key, token, expires_at) "
    "VALUES ($1::pg_catalog.text, 1::pg_catalog.int8, " TTL(2) ") "
    "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
    "expires_at = " TTL(2) ", session = NULL "
    "WHERE " ROW_FREE " RETURNING l.token";

/* release of a session lock: $1 key, $2 token, $3 session id */
static const char sql_rel_s[] =
    "UPDATE " PT " AS l SET expires_at = '-infinity'::pg_catalog.timestamptz, session = NULL "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
    "AND l.session OPERATOR(pg_catalog.=) $3::pg_catalog.uuid RETURNING l.token";

/* end a session (the program's close): every lock on it is free to others at once */
static const char sql_end[] =
    "UPDATE " PS " AS s SET expires_at = '-infinity'::pg_catalog.timestamptz "
    "WHERE s.id OPERATOR(pg_catalog.=) $1::pg_catalog.uuid RETURNING 1";

/* inspect: token and ms left while held (per-lock: its expiry; session: the session's) */
static const char sql_inspect[] =
    "SELECT l.token, pg_catalog.ceil(pg_catalog.date_part('epoch'::pg_catalog.text, "
    "CASE WHEN l.session IS NULL THEN l.expires_at ELSE s.expires_at END OPERATOR(pg_catalog.-) c.now) "
    "OPERATOR(pg_catalog.*) 1000::pg_catalog.float8)::pg_catalog.int8 "
    "FROM (SELECT " NOW " AS now) AS c, " PT " AS l LEFT JOIN " PS " AS s "
    "ON s.id OPERATOR(pg_catalog.=) l.session "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND CASE WHEN l.session IS NULL THEN l.expires_at OPERATOR(pg_catalog.>) c.now "
    "ELSE COALESCE(s.expires_at OPERATOR(pg_catalog.>) c.now, false) END";

#ifndef PGSD_STATEMENTS_ONLY
/* ---- helpers: one statement, up to 3 text parameters */
static PGresult *q(PGconn *c, const char *sql, const char *a, const char *b, const char *d)
{
    const char *v[3];
    int n = d ? 3 : b ? 2 : a ? 1 : 0;
    v[0] = a; v[1] = b; v[2] = d;
    return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
}

static int open_session(PGconn *c, const char *ttl, char id[64])
{
    PGresult *r = q(c, sql_open, ttl, NULL, NULL);
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    if (ok) snprintf(id, 64, "%s", PQgetvalue(r, 0, 0));
    else fprintf(stderr, "open: %s", PQresultErrorMessage(r));
    PQclear(r);
    return ok;
}

/* session acquire: token (>= 1) granted, 0 held by another, -1 own session gone, -2 error */
static int64_t acq_s(PGconn *c, const char *key, const char *sid, const char *ttl)
{
    PGresult *r = q(c, sql_acq_s, key, sid, ttl);
    int64_t v = -2;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        if (strcmp(PQgetvalue(r, 0, 0), "0") == 0) v = -1;
        else v = PQgetisnull(r, 0, 1) ? 0 : (int64_t)strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    } else {
        fprintf(stderr, "acq_s(%s): %s", key, PQresultErrorMessage(r));
    }
    PQclear(r);
    return v;
}

/* a statement answering 0 or 1 row of one integer: the value, 0 for no row, -2 error */
static int64_t one(PGconn *c, const char *sql, const char *a, const char *b, const char *d)
{
    PGresult *r = q(c, sql, a, b, d);
    int64_t v = -2;
    if (PQresultStatus(r) == PGRES_TUPLES_OK)
        v = PQntuples(r) == 1 ? (int64_t)strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    else
        fprintf(stderr, "one: %s", PQresultErrorMessage(r));
    PQclear(r);
    return v;
}

#define acq_l(c, key, ttl) one(c, sql_acq_l, key, ttl, NULL)
#define renew(c, sid, ttl) one(c, sql_renew, sid, ttl, NULL)
#define inspect(c, key) one(c, sql_inspect, key, NULL, NULL)

static int64_t rel_s(PGconn *c, const char *key, int64_t tok, const char *sid)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", (long long)tok);
    return one(c, sql_rel_s, key, t, sid);
}

int main(void)
{
    /* behind pgbouncer (tests/store/with_pgbouncer.sh, transaction pooling): every
       statement through the pooler; the helper h goes straight to the server, and the two
       cases that hold a transaction open while other connections run are left out (a
       pool of one server connection cannot serve them) */
    const char *pooled = getenv("LDL_PGB_MODE"), *direct = getenv("LDL_PG_DIRECT");
    PGconn *a = pgt_connect(""), *b = pgt_connect(""), *h = pooled && direct ? PQconnectdb(direct) : pgt_connect("");
    char sa[64], sb[64], sc[64], key[32];
    int64_t t, t2;
    st_ignore_sigpipe();
    if (PQstatus(a) != CONNECTION_OK || PQstatus(b) != CONNECTION_OK || PQstatus(h) != CONNECTION_OK) return 2;
    if (pooled && !direct) return 2;
    if (!pgt_exec_all(h, setup) || (pooled && !pgt_exec(h, "ALTER SCHEMA ldl_sd OWNER TO ldl_pool")) ||
        !pgt_exec_all(pooled ? a : h, setup_tables))
        return 2;
    if (pooled) printf("behind pgbouncer, mode %s\n", pooled);

    st_case("grant and refusal", 20);
    ST_CHECK(open_session(a, "5000", sa) && open_session(b, "5000", sb), "two sessions open");
    t = acq_s(a, "k1", sa, "5000");
    ST_CHECK(t == 1, "first session acquire grants fence 1 (got %lld)", (long long)t);
    ST_CHECK(acq_s(b, "k1", sb, "5000") == 0, "another live session is refused");
    ST_CHECK(acq_l(b, "k1", "5000") == 0, "a per-lock acquire is refused while the session lives");
    ST_CHECK(acq_s(a, "k1", sa, "5000") == 0, "our own session's key is not granted twice");
    ST_CHECK(inspect(h, "k1") == 1, "inspect: held with fence 1");
    ST_CHECK(renew(a, sa, "5000") == 1, "the session renew succeeds while unexpired");

    st_case("release", 20);
    ST_CHECK(rel_s(a, "k1", 1, sb) == 0, "release with another session's id changes nothing");
    ST_CHECK(rel_s(a, "k1", 2, sa) == 0, "release with a wrong token changes nothing");
    ST_CHECK(rel_s(a, "k1", 1, sa) == 1, "release frees the key");
    ST_CHECK(inspect(h, "k1") == 0, "inspect: free after release");
    t = acq_s(b, "k1", sb, "5000");
    ST_CHECK(t == 2, "the next holder's fence is 2 (got %lld)", (long long)t);

    st_case("expiry", 20);
    ST_CHECK(open_session(a, "300", sc), "a short session");
    t = acq_s(a, "k2", sc, "300");
    ST_CHECK(t == 1, "granted on the short session");
    st_sleep_ms(500);
    ST_CHECK(renew(a, sc, "300") == 0, "an expired session is never renewed");
    ST_CHECK(inspect(h, "k2") == 0, "inspect: a row of an expired session is free");
    ST_CHECK(acq_s(a, "k3", sc, "300") == -1, "an acquire on our dead session says so");
    t2 = acq_s(b, "k2", sb, "5000");
    ST_CHECK(t2 == t + 1, "another session takes the key with a higher fence (%lld)", (long long)t2);
    ST_CHECK(acq_l(a, "k2", "5000") == 0 && inspect(h, "k2") == t2, "and holds it");
    ST_CHECK(open_session(a, "300", sc), "a short session again");
    t = acq_s(a, "k4", sc, "300");
    st_sleep_ms(500);
    t2 = acq_l(b, "k4", "5000");
    ST_CHECK(t == 1 && t2 == 2, "a per-lock acquire takes a dead session's key, fence 2 (%lld)", (long long)t2);
    ST_CHECK(acq_s(a, "k4", sb, "5000") == 0, "a session acquire is refused on a live per-lock lease");
    ST_CHECK(acq_l(b, "k5", "300") == 1, "a short per-lock lease");
    st_sleep_ms(500);
    ST_CHECK(open_session(a, "300", sc), "a short session again");
    st_sleep_ms(200);
    ST_CHECK(acq_s(a, "k5", sc, "300") == 2, "a session takes an expired per-lock lease, fence 2");
    st_sleep_ms(200);
    ST_CHECK(renew(a, sc, "5000") == 1, "the acquire extended its own session (opened 400 ms ago with 300)");

    if (!pooled) {
        st_case("a renew in flight is never overtaken", 20);
        ST_CHECK(open_session(a, "400", sc), "a session");
        ST_CHECK(acq_s(a, "k6", sc, "400") == 1, "its lock");
        ST_CHECK(pgt_exec(h, "BEGIN"), "a renew transaction opens");
        ST_CHECK(renew(h, sc, "10000") == 1, "the renew's UPDATE is done, not yet committed");
        st_sleep_ms(600);                           /* past the expiry the snapshot still has */
        {
            uint64_t t0 = st_now_ms();
            t = acq_s(b, "k6", sb, "5000");
            ST_CHECK(t == 0, "an acquire meeting the renew in flight answers held (got %lld)", (long long)t);
            ST_CHECK(st_now_ms() - t0 < 300, "and does not wait for it (%llu ms)", (unsigned long long)(st_now_ms() - t0));
            ST_CHECK(acq_l(b, "k6", "5000") == 0, "the per-lock acquire too");
        }
        ST_CHECK(pgt_exec(h, "COMMIT"), "the renew commits");
        ST_CHECK(acq_s(b, "k6", sb, "5000") == 0, "the renewed session still holds the key");
        ST_CHECK(inspect(h, "k6") == 1, "inspect: held");
        ST_CHECK(one(a, sql_end, sc, NULL, NULL) == 1, "the program ends its session");
        ST_CHECK(acq_s(b, "k6", sb, "5000") == 2, "its key is free at once, fence 2");

        st_case("a session born after the acquire's snapshot is not taken for a deleted one", 20);
        {
            PGconn *c = pgt_connect("");
            char sd[64];
            PGresult *r;
            const char *v[3];
            int got = -1;
            ST_CHECK(open_session(a, "300", sc) && acq_s(a, "k7", sc, "300") == 1, "k7 on a short session");
            st_sleep_ms(500);                         /* that session is dead: k7 is free */
            ST_CHECK(pgt_exec(h, "BEGIN") &&
                     pgt_exec(h, "SELECT 1 FROM " PT " WHERE key = 'k7' FOR UPDATE"), "k7's row locked by a transaction");
            v[0] = "k7"; v[1] = sb; v[2] = "5000";
            ST_CHECK(PQsendQueryParams(b, sql_acq_s, 3, NULL, v, NULL, NULL, 0) == 1, "an acquire of k7 sent");
            st_sleep_ms(300);                         /* its snapshot taken, it waits on the row */
            ST_CHECK(open_session(c, "5000", sd), "a new session opens after that snapshot");
            v[1] = sd;
            r = PQexecParams(h, sql_acq_s, 3, NULL, v, NULL, NULL, 0);
            ST_CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 1) &&
                     strcmp(PQgetvalue(r, 0, 1), "2") == 0, "it takes k7 (fence 2) inside that transaction");
            PQclear(r);
            ST_CHECK(pgt_exec(h, "COMMIT"), "and commits");
            while ((r = PQgetResult(b)) != NULL) {
                if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) got = PQgetisnull(r, 0, 1) ? 0 : 1;
                else fprintf(stderr, "k7: %s", PQresultErrorMessage(r));
                PQclear(r);
            }
            ST_CHECK(got == 0, "the waiting acquire answers held: the new session is alive (got %d)", got);
            ST_CHECK(inspect(h, "k7") == 2, "k7 held with fence 2");
            PQfinish(c);
        }
    }   /* !pooled */

    st_case("1,000 locks on one session, the session row deleted by hand", 120);
    {
        int i, granted = 0, taken = 0, free_ = 0;
        uint64_t t0;
        ST_CHECK(open_session(a, "10000", sc), "a session");
        for (i = 0; i < 1000; i++) {
            snprintf(key, sizeof key, "many-%d", i);
            granted += acq_s(a, key, sc, "10000") == 1;
        }
        ST_CHECK(granted == 1000, "1,000 locks on one session (%d)", granted);
        t0 = st_now_ms();
        ST_CHECK(renew(a, sc, "10000") == 1, "one UPDATE renews them all (%llu ms)",
                 (unsigned long long)(st_now_ms() - t0));
        printf("figure: one session renew for 1,000 locks: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
        ST_CHECK(acq_s(b, "many-7", sb, "5000") == 0, "held while the session lives");
        {
            const char *v[1];
            PGresult *r;
            v[0] = sc;
            r = PQexecParams(h, "DELETE FROM " PS " WHERE id = $1::uuid", 1, NULL, v, NULL, NULL, 0);
            ST_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdTuples(r), "1") == 0,
                     "the session row deleted by hand");
            PQclear(r);
        }
        ST_CHECK(renew(a, sc, "10000") == 0, "the deleted session is never renewed");
        for (i = 0; i < 1000; i++) {
            snprintf(key, sizeof key, "many-%d", i);
            free_ += inspect(h, key) == 0;
            taken += acq_s(b, key, sb, "5000") == 2;
        }
        ST_CHECK(free_ == 1000, "inspect reports all 1,000 free (%d)", free_);
        ST_CHECK(taken == 1000, "another client takes all 1,000, each with fence 2 (%d)", taken);
        ST_CHECK(pgt_int(h, "SELECT pg_catalog.count(*) FROM " PT " WHERE key LIKE 'many-%'", NULL) == 1000,
                 "the 1,000 lease rows (the fences) are still there");
    }

    st_case("fenced writes take a session lock's fence", 20);
    {
        ldl_pg fp;
        PGconn *res = pgt_connect("");
        ST_CHECK(ldl_pg_init_ex(&fp, res, "ldl_sd.lease", LDL_PG_FENCE) == LDL_OK, "fence init: %s", ldl_pg_why(&fp));
        ST_CHECK(pgt_exec(res, "BEGIN") && ldl_pg_fence(&fp, "r", 2) == 1 && pgt_exec(res, "COMMIT"),
                 "the current holder's fence 2 writes");
        ST_CHECK(pgt_exec(res, "BEGIN") && ldl_pg_fence(&fp, "r", 1) == 0 && pgt_exec(res, "ROLLBACK"),
                 "the dead session's fence 1 is refused");
        PQfinish(res);
    }

    (void)pgt_exec(h, "DROP SCHEMA ldl_sd CASCADE");
    PQfinish(a);
    PQfinish(b);
    PQfinish(h);
    return st_report();
}
#endif /* PGSD_STATEMENTS_ONLY */
