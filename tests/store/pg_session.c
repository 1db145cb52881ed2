/* pg_session.c -- PostgreSQL sessions in the adapter (decision 0217, issue 34 item 3),
 * through the lock core, against a real PostgreSQL (tests/store/with_pg.sh):
 *   - ldl_pg_session's refusals, each its own case: a table without the session column,
 *     bad arguments, a second session_ms, the caller's transaction, the non-blocking view;
 *     the sixth lease-table column only as `session uuid` (nullable, after the owner
 *     columns); the session table held to the lease table's hardening (columns, keys,
 *     UNLOGGED, a view, triggers, rules, row level security, a foreign writer, a foreign
 *     owner, a name too long), at init and again at ldl_pg_session;
 *   - a lock whose ttl_ms == session_ms: granted on the session (its row names the
 *     session, expires_at 'infinity'), renewed by the session's UPDATE, released; the
 *     same with LDL_PG_UNNAMED; mixed with per-lock leases on one ldl_pg;
 *   - a session that expired or was deleted: every lock on it lost at its next renew,
 *     each on_lost once, never revived by the next session; inspect reports its rows free;
 *   - 1,000 locks on one session, the session row deleted by hand: all lost, each
 *     on_lost once, each key taken by another client with a higher fence;
 *   - the two snapshot races of decision 0217 through the adapter's own statements, and
 *     the session extended by its acquire and by its renew;
 *   - the non-blocking view, its locks on a scripted clock: renews due together ride ONE
 *     session UPDATE, renews submitted after an UPDATE was sent wait for the next
 *     (decision 1013 rule 1), a cancelled waiting renew is unlinked, 999 renews one
 *     UPDATE, the session row deleted (all lost once each, the session final for the
 *     view); on the session shape without a session, per-lock leases as before.
 * Breaks: tests/mutants/pg_session.txt (make mutants-sessions-pg).
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define T  "ldl_ss.lease"
#define V2 "key text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 1), " \
           "expires_at timestamptz NOT NULL, owner text, owner_token bigint"
#define GOOD_S "CREATE TABLE ldl_ss.lease_session (id uuid PRIMARY KEY, expires_at timestamptz NOT NULL)"

static PGconn *h;   /* the helper: superuser, straight to the server */

static int fresh(const char *lease_cols)
{
    char sql[512];
    int ok = pgt_exec(h, "SET client_min_messages = warning") &&
             pgt_exec(h, "DROP SCHEMA IF EXISTS ldl_ss CASCADE") && pgt_exec(h, "CREATE SCHEMA ldl_ss");
    if (lease_cols) {
        snprintf(sql, sizeof sql, "CREATE TABLE " T " (%s)", lease_cols);
        ok = ok && pgt_exec(h, sql);
    }
    return ok;
}

/* the session shape: the v0.2 table and the opt-in column */
static int fresh_session_shape(void)
{
    return fresh(V2) && pgt_exec(h, "ALTER TABLE " T " ADD COLUMN session uuid");
}

static int64_t row_int(const char *sql, const char *key)
{
    return pgt_int(h, sql, key);
}

/* init answers rc and its why contains want */
static void init_refused(const char *name, int want_rc, const char *want)
{
    PGconn *c = pgt_connect("");
    ldl_pg p;
    int rc = ldl_pg_init(&p, c, T);
    ST_CHECK(rc == want_rc && strstr(ldl_pg_why(&p), want) != NULL,
             "%s: init answers %d (got %d): %s", name, want_rc, rc, ldl_pg_why(&p));
    PQfinish(c);
}

/* a hostile session table: refused at init, and at ldl_pg_session when it turns
   hostile after init */
static void session_table_refused(const char *name, const char *make, const char *after, const char *want)
{
    PGconn *c;
    ldl_pg p;
    int rc;
    st_case(name, 20);
    ST_CHECK(fresh_session_shape() && pgt_exec(h, make), "%s: set up", name);
    init_refused(name, LDL_ESTORE, want);
    if (!after) return;
    ST_CHECK(fresh_session_shape(), "%s: a good table again", name);
    c = pgt_connect("");
    ST_CHECK(ldl_pg_init(&p, c, T) == LDL_OK, "%s: init on the good table: %s", name, ldl_pg_why(&p));
    ST_CHECK(pgt_exec(h, after), "%s: the session table turns hostile after init", name);
    rc = ldl_pg_session(&p, 5000);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), want) != NULL,
             "%s: ldl_pg_session refuses it (got %d): %s", name, rc, ldl_pg_why(&p));
    PQfinish(c);
}

static int held_row_is_session(const char *key)
{
    return row_int("SELECT (session IS NOT NULL AND expires_at = 'infinity')::int FROM " T " WHERE key = $1", key) == 1;
}

/* grant, renew, release through the lock core; flags 0 or LDL_PG_UNNAMED */
static void lifecycle(unsigned flags)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect("");
    ldl_pg pa, pb;
    pgt_lock la, lb, lp, lm;
    ldl_store_ext x;
    ldl_holder hd;
    int64_t t1;
    char name[64];
    snprintf(name, sizeof name, "grant, renew, release (%s)", flags ? "LDL_PG_UNNAMED" : "named");
    st_case(name, 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init_ex(&pa, a, T, flags) == LDL_OK, "init on the session shape: %s", ldl_pg_why(&pa));
    ST_CHECK(row_int("SELECT (to_regclass('ldl_ss.lease_session') IS NOT NULL)::int", NULL) == 1,
             "init created the session table");
    ST_CHECK(ldl_pg_session(&pa, 3000) == LDL_OK, "ldl_pg_session(3000): %s", ldl_pg_why(&pa));
    ST_CHECK(ldl_pg_session(&pa, 3000) == LDL_OK, "again with the same session_ms: OK");
    ST_CHECK(ldl_pg_init_ex(&pb, b, T, flags) == LDL_OK && ldl_pg_session(&pb, 3000) == LDL_OK,
             "a second client with its own session");
    ST_CHECK(row_int("SELECT count(*) FROM ldl_ss.lease_session", NULL) == 2, "two session rows");
    ST_CHECK(pgt_lock_init(&la, &pa, "s1", 3000, 1000) == 0 && pgt_lock_init(&lb, &pb, "s1", 3000, 1000) == 0,
             "two session locks on one key");
    ST_CHECK(ldl_lock_acquire(&la.lock) == 1, "the first is granted");
    t1 = ldl_lock_fencing_token(&la.lock);
    ST_CHECK(t1 == 1 && held_row_is_session("s1"), "fence 1; the row names the session, expires_at 'infinity'");
    ST_CHECK(ldl_lock_acquire(&lb.lock) == 0, "the other session is refused");
    ST_CHECK(pgt_lock_init(&lp, &pb, "s1", 2000, 500) == 0 && ldl_lock_acquire(&lp.lock) == 0,
             "a per-lock acquire is refused while the session lives");
    ST_CHECK(ldl_lock_tick(&la.lock) == 1 && ldl_lock_tick(&la.lock) == 1, "the session lock renews");
    ST_CHECK(la.store.renew(la.store.ctx, "s1", t1, 2000) == 0,
             "a per-lock renew (another ttl) never renews a session lock's row");
    ST_CHECK(held_row_is_session("s1"), "and leaves it as it was");
    x = ldl_pg_ext(&pb);
    ST_CHECK(x.inspect(x.ctx, "s1", &hd) == 1 && hd.token == 1 && hd.ttl_left_ms > 2000 && hd.ttl_left_ms <= 3000,
             "inspect: held, fence 1, the session's ms left (%u)", (unsigned)hd.ttl_left_ms);
    ST_CHECK(ldl_lock_release(&la.lock) == 1, "release");
    ST_CHECK(row_int("SELECT (session IS NULL AND expires_at = '-infinity')::int FROM " T " WHERE key = $1", "s1") == 1,
             "the row is freed and names no session");
    ST_CHECK(x.inspect(x.ctx, "s1", &hd) == 0, "inspect: free");
    ST_CHECK(ldl_lock_acquire(&lb.lock) == 1 && ldl_lock_fencing_token(&lb.lock) == 2, "the other session takes it, fence 2");
    ST_CHECK(la.store.release(la.store.ctx, "s1", 2) == 0, "a release from another session changes nothing");
    ST_CHECK(ldl_lock_tick(&lb.lock) == 1, "still held");
    ST_CHECK(ldl_lock_release(&lb.lock) == 1, "released");

    /* mixing on one ldl_pg: a per-lock lease beside the session locks */
    ST_CHECK(pgt_lock_init(&lm, &pa, "m1", 2000, 500) == 0 && ldl_lock_acquire(&lm.lock) == 1,
             "a per-lock lease on the same ldl_pg (ttl 2000 != 3000)");
    ST_CHECK(row_int("SELECT (session IS NULL AND expires_at < 'infinity')::int FROM " T " WHERE key = $1", "m1") == 1,
             "its row names no session and has its own expiry");
    ST_CHECK(pgt_lock_init(&la, &pa, "m2", 3000, 1000) == 0 && ldl_lock_acquire(&la.lock) == 1 && held_row_is_session("m2"),
             "and a session lock beside it");
    ST_CHECK(ldl_lock_tick(&lm.lock) == 1 && ldl_lock_tick(&la.lock) == 1, "both renew");
    ST_CHECK(pgt_lock_init(&lb, &pb, "m1", 3000, 1000) == 0 && ldl_lock_acquire(&lb.lock) == 0,
             "a session acquire is refused on the live per-lock lease");
    ST_CHECK(ldl_lock_release(&lm.lock) == 1 && ldl_lock_release(&la.lock) == 1, "both release");
    ST_CHECK(ldl_lock_acquire(&lb.lock) == 1 && ldl_lock_fencing_token(&lb.lock) == 2 && held_row_is_session("m1"),
             "a session takes the released per-lock key, fence 2");
    ST_CHECK(ldl_lock_release(&lb.lock) == 1, "released");

    /* an owner on a session lock */
    {
        ldl_store_ext xa = ldl_pg_ext(&pa);
        int64_t tok = 0;
        ST_CHECK(xa.acquire_owned != NULL && xa.acquire_owned(xa.ctx, "o1", 3000, "host-a", &tok) == 1 &&
                 held_row_is_session("o1"), "acquire_owned on the session");
        ST_CHECK(x.inspect(x.ctx, "o1", &hd) == 1 && strcmp(hd.owner, "host-a") == 0, "inspect shows its owner");
        ST_CHECK(la.store.release(la.store.ctx, "o1", tok) == 1, "released");
    }
    ldl_lock_dispose(&la.lock); ldl_lock_dispose(&lb.lock); ldl_lock_dispose(&lp.lock); ldl_lock_dispose(&lm.lock);
    PQfinish(a);
    PQfinish(b);
}

/* the session expires: its lock is lost once, never revived by the next session */
static void expiry(void)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect("");
    ldl_pg pa, pb;
    pgt_lock la, l2, lb;
    ldl_store_ext x;
    ldl_holder hd;
    st_case("a session that expires: lost once, never revived", 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&pa, a, T) == LDL_OK && ldl_pg_session(&pa, 800) == LDL_OK, "an 800 ms session");
    ST_CHECK(ldl_pg_init(&pb, b, T) == LDL_OK && ldl_pg_session(&pb, 5000) == LDL_OK, "another client's session");
    x = ldl_pg_ext(&pb);
    ST_CHECK(pgt_lock_init(&la, &pa, "e1", 800, 200) == 0 && ldl_lock_acquire(&la.lock) == 1, "granted on it");
    {
        ldl_store sa = ldl_pg_store(&pa);
        int64_t tok = 0;
        ST_CHECK(sa.acquire(sa.ctx, "e3", 800, &tok) == 1, "e3 on it too");
    }
    st_sleep_ms(1000);
    ST_CHECK(x.inspect(x.ctx, "e1", &hd) == 0, "inspect: a row of an expired session is free");
    ST_CHECK(ldl_lock_tick(&la.lock) == 0 && la.lost_calls == 1, "the next renew loses it, on_lost once (%d)", la.lost_calls);
    ST_CHECK(pgt_lock_init(&l2, &pa, "e2", 800, 200) == 0 && ldl_lock_acquire(&l2.lock) == 1,
             "the next session acquire opens a new session");
    ST_CHECK(row_int("SELECT count(*) FROM ldl_ss.lease_session", NULL) == 3, "a third session row");
    ST_CHECK(ldl_lock_tick(&la.lock) == 0 && la.lost_calls == 1, "the lost lock stays lost, on_lost still once");
    ST_CHECK(la.store.renew(la.store.ctx, "e1", 1, 800) == 0,
             "the old lock's renew is not answered by the new session");
    ST_CHECK(pgt_lock_init(&lb, &pb, "e1", 5000, 1000) == 0 && ldl_lock_acquire(&lb.lock) == 1 &&
             ldl_lock_fencing_token(&lb.lock) == 2, "another client takes the key with fence 2");
    ST_CHECK(ldl_lock_tick(&l2.lock) == 1, "the new session's lock renews");
    {
        ldl_store sb = ldl_pg_store(&pb);
        int64_t tok = 0;
        ST_CHECK(sb.acquire(sb.ctx, "e3", 5001, &tok) == 1 && tok == 2,
                 "a per-lock acquire takes the dead session's other key, fence 2");
        ST_CHECK(row_int("SELECT (session IS NULL)::int FROM " T " WHERE key = $1", "e3") == 1,
                 "its row names no session any more");
        ST_CHECK(sb.acquire(sb.ctx, "e3", 5000, &tok) == 0, "a session acquire is refused on that live lease");
    }
    ldl_lock_dispose(&la.lock); ldl_lock_dispose(&l2.lock); ldl_lock_dispose(&lb.lock);
    PQfinish(a);
    PQfinish(b);
}

/* the session row deleted while a new one serves other locks: the old locks are
   lost, the new session's are not */
static void deleted_then_new(void)
{
    PGconn *a = pgt_connect("");
    ldl_pg pa;
    pgt_lock l1, l2;
    char sid[64];
    PGresult *r;
    st_case("a deleted session's lock is not renewed by the next session", 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&pa, a, T) == LDL_OK && ldl_pg_session(&pa, 5000) == LDL_OK, "a session");
    ST_CHECK(pgt_lock_init(&l1, &pa, "d1", 5000, 1000) == 0 && ldl_lock_acquire(&l1.lock) == 1, "d1 on it");
    r = PQexec(h, "SELECT id::text FROM ldl_ss.lease_session");
    snprintf(sid, sizeof sid, "%s", PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    ST_CHECK(pgt_int(h, "WITH d AS (DELETE FROM ldl_ss.lease_session WHERE id = $1::uuid RETURNING 1) "
                        "SELECT count(*) FROM d", sid) == 1, "the session row deleted by hand");
    ST_CHECK(pgt_lock_init(&l2, &pa, "d2", 5000, 1000) == 0 && ldl_lock_acquire(&l2.lock) == 1,
             "an acquire opens a new session and is granted");
    ST_CHECK(ldl_lock_tick(&l1.lock) == 0 && l1.lost_calls == 1, "d1 is lost at its next renew, on_lost once");
    ST_CHECK(ldl_lock_tick(&l2.lock) == 1 && l2.lost_calls == 0, "d2 on the new session renews");
    ldl_lock_dispose(&l1.lock); ldl_lock_dispose(&l2.lock);
    PQfinish(a);
}

/* the adapter's two snapshot races (decision 0217 "the free test"), with its own
   statement text (named or not, the text is the same) */
static void races(void)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect(""), *c = pgt_connect("");
    ldl_pg pa, pb, pc;
    ldl_store sb;
    int64_t tok = -1;
    char sid[64];
    PGresult *r;
    st_case("a renew in flight is never overtaken", 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&pa, a, T) == LDL_OK && ldl_pg_session(&pa, 400) == LDL_OK, "a 400 ms session");
    ST_CHECK(ldl_pg_init(&pb, b, T) == LDL_OK && ldl_pg_session(&pb, 5000) == LDL_OK, "another client's");
    sb = ldl_pg_store(&pb);
    {
        ldl_store sa = ldl_pg_store(&pa);
        ST_CHECK(sa.acquire(sa.ctx, "k6", 400, &tok) == 1 && tok == 1, "k6 on the short session");
    }
    snprintf(sid, sizeof sid, "%s", pa._sid);
    ST_CHECK(pgt_exec(h, "BEGIN"), "a renew transaction opens");
    ST_CHECK(pgt_int(h, "WITH u AS (UPDATE ldl_ss.lease_session SET expires_at = clock_timestamp() + interval '10 s' "
                        "WHERE id = $1::uuid RETURNING 1) SELECT count(*) FROM u", sid) == 1,
             "the renew's UPDATE is done, not yet committed");
    st_sleep_ms(700);                               /* past the expiry the snapshot still has */
    {
        uint64_t t0 = st_now_ms();
        int rc = sb.acquire(sb.ctx, "k6", 5000, &tok);
        ST_CHECK(rc == 0, "a session acquire meeting the renew in flight answers held (got %d, token %lld)",
                 rc, (long long)tok);
        ST_CHECK(st_now_ms() - t0 < 1000, "and does not wait for it (%llu ms)", (unsigned long long)(st_now_ms() - t0));
        ST_CHECK(sb.acquire(sb.ctx, "k6", 2000, &tok) == 0, "the per-lock acquire too");
    }
    ST_CHECK(pgt_exec(h, "COMMIT"), "the renew commits");
    ST_CHECK(sb.acquire(sb.ctx, "k6", 5000, &tok) == 0, "the renewed session still holds the key");

    st_case("a session born after an acquire's snapshot is not taken for a deleted one", 30);
    {
        const char *v[4];
        int got = -1;
        ldl_store sa = ldl_pg_store(&pa);
        ST_CHECK(sa.acquire(sa.ctx, "k7", 400, &tok) == 1, "k7 on the short session");
        st_sleep_ms(700);                           /* that session is dead: k7 is free */
        ST_CHECK(pgt_exec(h, "BEGIN") && pgt_exec(h, "SELECT 1 FROM " T " WHERE key = 'k7' FOR UPDATE"),
                 "k7's row locked by a transaction");
        v[0] = "k7"; v[1] = pb._sid; v[2] = "5000"; v[3] = NULL;
        ST_CHECK(PQsendQueryParams(b, LDL__PG_SQL(&pb, LDL__PG_SACQ), 4, NULL, v, NULL, NULL, 0) == 1,
                 "the adapter's session acquire of k7 sent");
        st_sleep_ms(300);                           /* its snapshot taken, it waits on the row */
        ST_CHECK(ldl_pg_init(&pc, c, T) == LDL_OK && ldl_pg_session(&pc, 5000) == LDL_OK,
                 "a new session opens after that snapshot");
        v[1] = pc._sid;
        r = PQexecParams(h, LDL__PG_SQL(&pc, LDL__PG_SACQ), 4, NULL, v, NULL, NULL, 0);
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
        ST_CHECK(row_int("SELECT token FROM " T " WHERE key = $1", "k7") == 2, "k7 held with fence 2");
    }
    PQfinish(a);
    PQfinish(b);
    PQfinish(c);
}

/* the acquire and the renew each extend the session (so its expiry is after the
   lock's start, whatever the session's age) */
static void extends(void)
{
    PGconn *a = pgt_connect("");
    ldl_pg pa;
    pgt_lock l1;
    st_case("the session acquire and renew extend the session", 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&pa, a, T) == LDL_OK && ldl_pg_session(&pa, 1000) == LDL_OK, "a 1000 ms session");
    st_sleep_ms(700);
    ST_CHECK(pgt_lock_init(&l1, &pa, "x1", 1000, 300) == 0 && ldl_lock_acquire(&l1.lock) == 1,
             "a lock granted 700 ms after the session opened");
    st_sleep_ms(600);                                   /* 1300 ms after the open */
    ST_CHECK(ldl_lock_tick(&l1.lock) == 1, "renews: the acquire extended the session");
    st_sleep_ms(600);                                   /* 1900 ms after the open */
    ST_CHECK(ldl_lock_tick(&l1.lock) == 1, "renews again: the renew extended it");
    ldl_lock_dispose(&l1.lock);
    PQfinish(a);
}

/* the non-blocking view on a table of the session shape, without a session of its
   own: per-lock leases through the session-aware statements, refused on a key a
   session holds */
static void async_shape(void)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect("");
    ldl_pg p, pb;
    static ldl_pg_req reqs[8];
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock l, m;
    ldl_store sb;
    int64_t tok = 0;
    uint64_t end;
    int rc;
    st_case("the non-blocking view on the session shape, without a session", 30);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&pb, b, T) == LDL_OK && ldl_pg_session(&pb, 5000) == LDL_OK, "a session client");
    sb = ldl_pg_store(&pb);
    ST_CHECK(sb.acquire(sb.ctx, "a-held", 5000, &tok) == 1, "it holds a key on its session");
    ST_CHECK(ldl_pg_init(&p, a, T) == LDL_OK && ldl_pg_async_init(&pa, &p, reqs, 8) == LDL_OK,
             "the non-blocking view attaches: %s", ldl_pg_why(&p));
    as = ldl_pg_async_store(&pa);
    rc = ldl_pg_session(&p, 5000);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "pipeline"),
             "ldl_pg_session on the connection the view owns answers LDL_ESTORE (%d): %s", rc, ldl_pg_why(&p));
    ST_CHECK(pgt_alock_init(&l, &as, "a1", 3000, 1000) == 0 && pgt_alock_init(&m, &as, "a-held", 3000, 1000) == 0, "locks");
    ST_CHECK(ldl_lock_acquire(&l.lock) == LDL_EINPROGRESS && ldl_lock_acquire(&m.lock) == LDL_EINPROGRESS, "acquires in flight");
    for (end = st_now_ms() + 3000; st_now_ms() < end && (ldl_lock_pending(&l.lock) || ldl_lock_pending(&m.lock));) {
        (void)ldl_pg_async_pump(&pa); (void)ldl_lock_poll(&l.lock); (void)ldl_lock_poll(&m.lock); st_sleep_ms(1);
    }
    ST_CHECK(ldl_lock_held(&l.lock) && ldl_lock_fencing_token(&l.lock) == 1, "a1 granted, fence 1");
    ST_CHECK(row_int("SELECT (session IS NULL AND expires_at < 'infinity')::int FROM " T " WHERE key = $1", "a1") == 1,
             "a per-lock lease");
    ST_CHECK(!ldl_lock_held(&m.lock), "the key the session holds is refused");
    rc = ldl_lock_tick(&l.lock);
    for (end = st_now_ms() + 3000; st_now_ms() < end && ldl_lock_pending(&l.lock);) {
        (void)ldl_pg_async_pump(&pa); (void)ldl_lock_poll(&l.lock); st_sleep_ms(1);
    }
    ST_CHECK(rc != 0 && ldl_lock_held(&l.lock), "it renews");
    rc = ldl_lock_release(&l.lock);
    for (end = st_now_ms() + 3000; st_now_ms() < end && ldl_lock_pending(&l.lock);) {
        (void)ldl_pg_async_pump(&pa); (void)ldl_lock_poll(&l.lock); st_sleep_ms(1);
    }
    ST_CHECK(ldl_lock_state(&l.lock) == LDL_RELEASED &&
             row_int("SELECT (expires_at = '-infinity')::int FROM " T " WHERE key = $1", "a1") == 1,
             "it releases (%d)", rc);
    ldl_lock_dispose(&l.lock); ldl_lock_dispose(&m.lock);
    PQfinish(a);
    PQfinish(b);
}

/* ---- the non-blocking view with a session: the locks on a scripted clock */
static uint64_t NOW = 1000000;
static uint64_t sclock(void *ctx) { (void)ctx; return NOW; }

/* a lock of the non-blocking view on the scripted clock */
static int alock_init(pgt_alock *t, const ldl_async_store *as, const char *key, uint32_t ttl_ms, uint32_t hb_ms)
{
    ldl_clock c;
    memset(&c, 0, sizeof c);
    c.now_ms = sclock;
    return pgt_alock_init_clock(t, as, key, ttl_ms, hb_ms, c);
}

static int npending(pgt_alock *ls, int from, int to)
{
    int i, k = 0;
    for (i = from; i < to; i++) k += ldl_lock_pending(&ls[i].lock);
    return k;
}

/* pump and poll locks [from, to) until none of them is pending (3 s at most) */
static void settle(ldl_pg_async *pa, pgt_alock *ls, int from, int to)
{
    uint64_t end = st_now_ms() + 3000;
    int i;
    while (st_now_ms() < end) {
        (void)ldl_pg_async_pump(pa);
        for (i = from; i < to; i++) (void)ldl_lock_poll(&ls[i].lock);
        if (!npending(ls, from, to)) return;
        st_sleep_ms(1);
    }
}

#define NA 10
#define NBIG 1000
static void async_sessions(void)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect("");
    ldl_pg p, pb;
    static ldl_pg_req reqs[2 * NBIG + 8];
    static pgt_alock ls[NBIG];
    pgt_alock extra;
    ldl_pg_async pa;
    ldl_async_store as;
    const ldl_pg_stats *st;
    ldl_store sb;
    char key[32];
    int i, k, held;
    uint64_t u0;

    st_case("the non-blocking view: renews due together ride one session UPDATE", 60);
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init(&p, a, T) == LDL_OK && ldl_pg_session(&p, 3000) == LDL_OK, "a 3000 ms session");
    ST_CHECK(ldl_pg_async_init(&pa, &p, reqs, sizeof reqs / sizeof reqs[0]) == LDL_OK,
             "the non-blocking view takes it: %s", ldl_pg_why(&p));
    as = ldl_pg_async_store(&pa);
    st = ldl_pg_async_stats(&pa);
    for (i = 0; i < NA; i++) {
        snprintf(key, sizeof key, "as-%d", i);
        ST_CHECK(alock_init(&ls[i], &as, key, 3000, 1000) == 0 && ldl_lock_acquire(&ls[i].lock) == LDL_EINPROGRESS,
                 "lock %d acquiring", i);
    }
    settle(&pa, ls, 0, NA);
    for (held = 0, i = 0; i < NA; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NA && held_row_is_session("as-0") && held_row_is_session("as-9"), "10 session locks granted (%d)", held);
    ST_CHECK(st->session_updates == 0, "no session UPDATE yet");

    NOW += 1000;                                        /* every heartbeat due at once */
    for (i = 0; i < NA; i++) (void)ldl_lock_poll(&ls[i].lock);
    ST_CHECK(npending(ls, 0, NA) == NA && st->session_renews == NA, "10 renews submitted (%llu)",
             (unsigned long long)st->session_renews);
    settle(&pa, ls, 0, NA);
    for (held = 0, i = 0; i < NA; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NA && st->session_updates == 1, "all 10 answered by ONE session UPDATE (%llu), held (%d)",
             (unsigned long long)st->session_updates, held);

    NOW += 1000;
    for (i = 0; i < 5; i++) (void)ldl_lock_poll(&ls[i].lock);
    (void)ldl_pg_async_pump(&pa);                       /* UPDATE 2 sent: locks 0-4 ride it */
    ST_CHECK(st->session_updates == 2, "the pump sent UPDATE 2 for the 5 waiting renews");
    for (i = 5; i < NA; i++) (void)ldl_lock_poll(&ls[i].lock);   /* submitted after it was sent */
    ST_CHECK(npending(ls, 5, NA) == 5, "5 more renews submitted after UPDATE 2 was sent");
    ST_CHECK(alock_init(&extra, &as, "as-extra", 3000, 1000) == 0 && ldl_lock_acquire(&extra.lock) == LDL_EINPROGRESS,
             "and an acquire queued beside them (the next pumps send)");
    settle(&pa, ls, 0, 5);
    ST_CHECK(npending(ls, 0, 5) == 0 && st->session_updates == 2, "UPDATE 2 answered locks 0-4");
    for (i = 5; i < NA; i++) (void)ldl_lock_poll(&ls[i].lock);
    ST_CHECK(npending(ls, 5, NA) == 5, "and not one of the renews submitted after it was sent (%d pending)",
             npending(ls, 5, NA));
    settle(&pa, ls, 0, NA);
    for (held = 0, i = 0; i < NA; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NA && st->session_updates == 3, "they rode UPDATE 3 (%llu), all held",
             (unsigned long long)st->session_updates);
    settle(&pa, &extra, 0, 1);
    ST_CHECK(ldl_lock_held(&extra.lock), "the queued acquire was granted");
    ldl_lock_dispose(&extra.lock);

    st_case("the non-blocking view: a cancelled waiting renew", 30);
    NOW += 1000;
    (void)ldl_lock_poll(&ls[0].lock);
    ST_CHECK(ldl_lock_pending(&ls[0].lock), "lock 0's renew waits for an UPDATE");
    ldl_lock_dispose(&ls[0].lock);                      /* cancels it */
    for (k = 0; k < 20; k++) { (void)ldl_pg_async_pump(&pa); st_sleep_ms(1); }
    ST_CHECK(st->session_updates == 3, "no UPDATE is sent for it once cancelled (%llu)",
             (unsigned long long)st->session_updates);
    for (i = 1; i < NA; i++) (void)ldl_lock_poll(&ls[i].lock);
    settle(&pa, ls, 1, NA);
    for (held = 0, i = 1; i < NA; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NA - 1 && st->session_updates == 4, "the others still ride the next one (%llu)",
             (unsigned long long)st->session_updates);

    st_case("the non-blocking view: 1,000 session locks, one UPDATE per heartbeat round", 120);
    for (i = NA; i < NBIG; i++) {
        snprintf(key, sizeof key, "as-%d", i);
        if (alock_init(&ls[i], &as, key, 3000, 1000) == 0) (void)ldl_lock_acquire(&ls[i].lock);
    }
    settle(&pa, ls, NA, NBIG);
    for (held = 0, i = 1; i < NBIG; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NBIG - 1, "999 session locks held (%d)", held);
    u0 = st->session_updates;
    NOW += 1000;
    {
        uint64_t t0 = st_now_ms();
        for (i = 1; i < NBIG; i++) (void)ldl_lock_poll(&ls[i].lock);
        settle(&pa, ls, 1, NBIG);
        printf("figure: 999 session renews on the non-blocking view: %llu session UPDATE(s), %llu ms\n",
               (unsigned long long)(st->session_updates - u0), (unsigned long long)(st_now_ms() - t0));
    }
    for (held = 0, i = 1; i < NBIG; i++) held += ldl_lock_held(&ls[i].lock);
    ST_CHECK(held == NBIG - 1 && st->session_updates - u0 == 1, "999 renews, one UPDATE (%llu), all held (%d)",
             (unsigned long long)(st->session_updates - u0), held);

    st_case("the non-blocking view: the session row deleted by hand", 60);
    ST_CHECK(pgt_int(h, "WITH d AS (DELETE FROM ldl_ss.lease_session RETURNING 1) SELECT count(*) FROM d", NULL) == 1,
             "the session row deleted");
    NOW += 1000;
    for (i = 1; i < NBIG; i++) (void)ldl_lock_poll(&ls[i].lock);
    settle(&pa, ls, 1, NBIG);
    for (k = 0, i = 1; i < NBIG; i++) k += ldl_lock_state(&ls[i].lock) == LDL_LOST && ls[i].lost_calls == 1;
    ST_CHECK(k == NBIG - 1, "every lock LOST at its next renew, on_lost once each (%d)", k);
    NOW += 1000;
    for (i = 1; i < NBIG; i++) (void)ldl_lock_poll(&ls[i].lock);
    for (k = 0, i = 1; i < NBIG; i++) k += ls[i].lost_calls == 1;
    ST_CHECK(k == NBIG - 1, "still once each (%d)", k);
    {
        pgt_alock n;
        int rc;
        ST_CHECK(alock_init(&n, &as, "as-new", 3000, 1000) == 0, "a new session lock");
        rc = ldl_lock_acquire(&n.lock);
        settle(&pa, &n, 0, 1);
        ST_CHECK(!ldl_lock_held(&n.lock) && ldl_lock_raw_answer(&n.lock) == LDL_ESTORE &&
                 strstr(ldl_pg_async_why(&pa), "session was lost"),
                 "its acquire is refused with LDL_ESTORE: the view never opens another session (%d, raw %d): %s",
                 rc, ldl_lock_raw_answer(&n.lock), ldl_pg_async_why(&pa));
        ldl_lock_dispose(&n.lock);
    }
    ST_CHECK(ldl_pg_init(&pb, b, T) == LDL_OK && ldl_pg_session(&pb, 5000) == LDL_OK, "another client");
    sb = ldl_pg_store(&pb);
    for (k = 0, i = 1; i < NBIG; i++) {
        int64_t tok = 0;
        snprintf(key, sizeof key, "as-%d", i);
        k += sb.acquire(sb.ctx, key, 5000, &tok) == 1 && tok == 2;
    }
    ST_CHECK(k == NBIG - 1, "takes every key with fence 2 (%d)", k);
    for (i = 1; i < NBIG; i++) ldl_lock_dispose(&ls[i].lock);
    (void)ldl_pg_async_drop(&pa);
    PQfinish(a);
    PQfinish(b);
}

#define NMANY 1000
static void thousand(unsigned flags)
{
    PGconn *a = pgt_connect(""), *b = pgt_connect("");
    ldl_pg pa, pb;
    ldl_store sb;
    ldl_store_ext x;
    pgt_lock *ls = (pgt_lock *)calloc(NMANY, sizeof *ls);
    char key[32];
    int i, granted = 0, renewed = 0, lost = 0, once = 0, free_ = 0, taken = 0, fence1 = 0;
    uint64_t t0;
    st_case("1,000 session locks, the session row deleted by hand", 180);
    ST_CHECK(ls != NULL, "memory");
    if (!ls) return;
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    ST_CHECK(ldl_pg_init_ex(&pa, a, T, flags) == LDL_OK && ldl_pg_session(&pa, 20000) == LDL_OK, "a session");
    ST_CHECK(ldl_pg_init_ex(&pb, b, T, flags) == LDL_OK && ldl_pg_session(&pb, 20000) == LDL_OK, "another client's");
    for (i = 0; i < NMANY; i++) {
        snprintf(key, sizeof key, "many-%d", i);
        if (pgt_lock_init(&ls[i], &pa, key, 20000, 5000) == 0) granted += ldl_lock_acquire(&ls[i].lock) == 1;
    }
    ST_CHECK(granted == NMANY, "1,000 locks on one session (%d)", granted);
    for (i = 0; i < NMANY; i++) fence1 += ldl_lock_fencing_token(&ls[i].lock) == 1;
    ST_CHECK(fence1 == NMANY, "each with fence 1 (%d)", fence1);
    t0 = st_now_ms();
    for (i = 0; i < NMANY; i++) renewed += ldl_lock_tick(&ls[i].lock) == 1;
    ST_CHECK(renewed == NMANY, "each renews (%d)", renewed);
    printf("figure: 1,000 synchronous session renews (one session UPDATE each): %llu ms\n",
           (unsigned long long)(st_now_ms() - t0));
    ST_CHECK(pgt_int(h, "WITH d AS (DELETE FROM ldl_ss.lease_session WHERE id IN "
                        "(SELECT session FROM " T " WHERE key = $1) RETURNING 1) SELECT count(*) FROM d", "many-0") == 1,
             "the session row deleted by hand");
    x = ldl_pg_ext(&pb);
    for (i = 0; i < NMANY; i++) {
        ldl_holder hd;
        snprintf(key, sizeof key, "many-%d", i);
        free_ += x.inspect(x.ctx, key, &hd) == 0;
    }
    ST_CHECK(free_ == NMANY, "inspect reports all 1,000 free (%d)", free_);
    for (i = 0; i < NMANY; i++) lost += ldl_lock_tick(&ls[i].lock) == 0;
    for (i = 0; i < NMANY; i++) (void)ldl_lock_tick(&ls[i].lock);
    for (i = 0; i < NMANY; i++) once += ls[i].lost_calls == 1 && ldl_lock_state(&ls[i].lock) == LDL_LOST;
    ST_CHECK(lost == NMANY, "every lock lost at its next renew (%d)", lost);
    ST_CHECK(once == NMANY, "each on_lost exactly once (%d)", once);
    sb = ldl_pg_store(&pb);
    for (i = 0; i < NMANY; i++) {
        int64_t tok = 0;
        snprintf(key, sizeof key, "many-%d", i);
        taken += sb.acquire(sb.ctx, key, 20000, &tok) == 1 && tok == 2;
    }
    ST_CHECK(taken == NMANY, "another client takes all 1,000, each with fence 2 (%d)", taken);
    for (i = 0; i < NMANY; i++) ldl_lock_dispose(&ls[i].lock);
    free(ls);
    PQfinish(a);
    PQfinish(b);
}

static void refusals(void)
{
    PGconn *c;
    ldl_pg p, f;
    int rc;

    st_case("ldl_pg_session on a table without the session column", 20);
    ST_CHECK(fresh(V2), "a v0.2 table");
    c = pgt_connect("");
    ST_CHECK(ldl_pg_init(&p, c, T) == LDL_OK, "init");
    rc = ldl_pg_session(&p, 5000);
    ST_CHECK(rc == LDL_EUNSUPPORTED && strstr(ldl_pg_why(&p), "ADD COLUMN session uuid"),
             "answers LDL_EUNSUPPORTED with the fix (%d): %s", rc, ldl_pg_why(&p));
    ST_CHECK(row_int("SELECT (to_regclass('ldl_ss.lease_session') IS NULL)::int", NULL) == 1,
             "and creates nothing");
    PQfinish(c);

    st_case("ldl_pg_session: bad arguments", 20);
    ST_CHECK(ldl_pg_session(NULL, 5000) == LDL_EINVAL, "NULL");
    memset(&p, 0, sizeof p);
    ST_CHECK(ldl_pg_session(&p, 5000) == LDL_EINVAL, "an ldl_pg never initialised");
    ST_CHECK(fresh_session_shape(), "the session-shaped table");
    c = pgt_connect("");
    ST_CHECK(ldl_pg_init(&p, c, T) == LDL_OK, "init: %s", ldl_pg_why(&p));
    ST_CHECK(ldl_pg_session(&p, 0) == LDL_EINVAL, "session_ms 0");
    ST_CHECK(ldl_pg_session(&p, 0x80000000u) == LDL_EINVAL, "session_ms 2^31");
    ST_CHECK(ldl_pg_init_ex(&f, c, T, LDL_PG_FENCE) == LDL_OK && ldl_pg_session(&f, 5000) == LDL_EINVAL,
             "an ldl_pg for fenced writes");
    ST_CHECK(ldl_pg_session(&p, 5000) == LDL_OK, "a session of 5000 ms");
    ST_CHECK(ldl_pg_session(&p, 6000) == LDL_EINVAL, "then another session_ms is refused");

    st_case("ldl_pg_session inside the caller's transaction", 20);
    {
        ldl_pg q;
        ST_CHECK(ldl_pg_init(&q, c, T) == LDL_OK && pgt_exec(c, "BEGIN"), "a transaction open");
        ST_CHECK(ldl_pg_session(&q, 5000) == LDL_ESTORE, "refused: %s", ldl_pg_why(&q));
        ST_CHECK(pgt_exec(c, "ROLLBACK"), "rolled back");
    }

    PQfinish(c);

    st_case("the sixth column only as session uuid", 20);
    ST_CHECK(fresh(V2 ", session text"), "session text");
    init_refused("session text", LDL_ESTORE, "columns are not exactly");
    ST_CHECK(fresh(V2 ", sess uuid"), "sess uuid");
    init_refused("sess uuid", LDL_ESTORE, "columns are not exactly");
    ST_CHECK(fresh(V2 ", session uuid NOT NULL"), "session uuid NOT NULL");
    init_refused("session uuid NOT NULL", LDL_ESTORE, "columns are not exactly");
    ST_CHECK(fresh("key text PRIMARY KEY, token bigint NOT NULL, expires_at timestamptz NOT NULL, session uuid"),
             "session without the owner columns");
    init_refused("session without owner", LDL_ESTORE, "columns are not exactly");
    ST_CHECK(fresh(V2 ", session uuid, extra int"), "a seventh column");
    init_refused("a seventh column", LDL_ESTORE, "columns are not exactly");

    st_case("a lease table name too long for its session table", 20);
    ST_CHECK(fresh(NULL) && pgt_exec(h, "CREATE TABLE ldl_ss.t2345678901234567890123456789012345678901234567890123456 "
                                        "(" V2 ", session uuid)"), "a 56-byte name");
    c = pgt_connect("");
    rc = ldl_pg_init(&p, c, "ldl_ss.t2345678901234567890123456789012345678901234567890123456");
    ST_CHECK(rc == LDL_EINVAL && strstr(ldl_pg_why(&p), "55 bytes"), "init answers LDL_EINVAL (%d): %s", rc, ldl_pg_why(&p));
    PQfinish(c);

    st_case("the longest names: a 63-byte schema, a 55-byte table", 20);
    {
#define S63 "s23456789012345678901234567890123456789012345678901234567890123"
#define T55 "t234567890123456789012345678901234567890123456789012345"
        ldl_store st;
        int64_t tok = 0;
        ST_CHECK(strlen(S63) == 63 && strlen(T55) == 55, "the names' lengths");
        ST_CHECK(pgt_exec(h, "DROP SCHEMA IF EXISTS " S63 " CASCADE") && pgt_exec(h, "CREATE SCHEMA " S63) &&
                 pgt_exec(h, "CREATE TABLE " S63 "." T55 " (" V2 ", session uuid)"), "set up");
        c = pgt_connect("");
        ST_CHECK(ldl_pg_init(&p, c, S63 "." T55) == LDL_OK && ldl_pg_session(&p, 5000) == LDL_OK,
                 "init and ldl_pg_session: every statement fits (%s)", ldl_pg_why(&p));
        st = ldl_pg_store(&p);
        ST_CHECK(st.acquire(st.ctx, "k", 5000, &tok) == 1 && st.renew(st.ctx, "k", tok, 5000) == 1 &&
                 st.release(st.ctx, "k", tok) == 1, "a session lock's acquire, renew, release");
        ST_CHECK(st.acquire(st.ctx, "k", 4000, &tok) == 1 && st.renew(st.ctx, "k", tok, 4000) == 1 &&
                 st.release(st.ctx, "k", tok) == 1, "a per-lock lease's");
        PQfinish(c);
        (void)pgt_exec(h, "DROP SCHEMA " S63 " CASCADE");
    }

    session_table_refused("session table: an extra column",
        "CREATE TABLE ldl_ss.lease_session (id uuid PRIMARY KEY, expires_at timestamptz NOT NULL, x int)",
        "ALTER TABLE ldl_ss.lease_session ADD COLUMN x int", "columns are not exactly id uuid");
    session_table_refused("session table: id text",
        "CREATE TABLE ldl_ss.lease_session (id text PRIMARY KEY, expires_at timestamptz NOT NULL)",
        NULL, "columns are not exactly id uuid");
    session_table_refused("session table: expires_at nullable",
        "CREATE TABLE ldl_ss.lease_session (id uuid PRIMARY KEY, expires_at timestamptz)",
        "ALTER TABLE ldl_ss.lease_session ALTER COLUMN expires_at DROP NOT NULL", "columns are not exactly id uuid");
    session_table_refused("session table: no primary key",
        "CREATE TABLE ldl_ss.lease_session (id uuid NOT NULL, expires_at timestamptz NOT NULL)",
        NULL, "keys are not the adapter's: want PRIMARY KEY (id)");
    session_table_refused("session table: a UNIQUE constraint",
        GOOD_S "; ALTER TABLE ldl_ss.lease_session ADD UNIQUE (expires_at)",
        "ALTER TABLE ldl_ss.lease_session ADD UNIQUE (expires_at)", "keys are not the adapter's: want PRIMARY KEY (id)");
    session_table_refused("session table: a FOREIGN KEY",
        GOOD_S "; CREATE TABLE ldl_ss.other (id uuid PRIMARY KEY); "
        "ALTER TABLE ldl_ss.lease_session ADD FOREIGN KEY (id) REFERENCES ldl_ss.other (id)",
        NULL, "keys are not the adapter's");
    session_table_refused("session table: UNLOGGED",
        "CREATE UNLOGGED TABLE ldl_ss.lease_session (id uuid PRIMARY KEY, expires_at timestamptz NOT NULL)",
        "ALTER TABLE ldl_ss.lease_session SET UNLOGGED", "UNLOGGED or TEMP");
    session_table_refused("session table: a view",
        "CREATE VIEW ldl_ss.lease_session AS SELECT gen_random_uuid() AS id, now() AS expires_at",
        NULL, "not an ordinary table");
    session_table_refused("session table: a trigger",
        GOOD_S "; CREATE FUNCTION ldl_ss.f() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'; "
        "CREATE TRIGGER t BEFORE UPDATE ON ldl_ss.lease_session FOR EACH ROW EXECUTE FUNCTION ldl_ss.f()",
        "CREATE FUNCTION ldl_ss.f() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'; "
        "CREATE TRIGGER t BEFORE UPDATE ON ldl_ss.lease_session FOR EACH ROW EXECUTE FUNCTION ldl_ss.f()",
        "row level security, rules or triggers");
    session_table_refused("session table: a rule",
        GOOD_S "; CREATE RULE r AS ON DELETE TO ldl_ss.lease_session DO INSTEAD NOTHING",
        "CREATE RULE r AS ON DELETE TO ldl_ss.lease_session DO INSTEAD NOTHING",
        "row level security, rules or triggers");
    session_table_refused("session table: row level security",
        GOOD_S "; ALTER TABLE ldl_ss.lease_session ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE ldl_ss.lease_session ENABLE ROW LEVEL SECURITY", "row level security, rules or triggers");
    session_table_refused("session table: a foreign writer (UPDATE to PUBLIC)",
        GOOD_S "; GRANT UPDATE ON ldl_ss.lease_session TO PUBLIC",
        "GRANT UPDATE ON ldl_ss.lease_session TO PUBLIC", "PUBLIC holds UPDATE");
    session_table_refused("session table: a foreign writer (TRUNCATE to PUBLIC)",
        GOOD_S "; GRANT TRUNCATE ON ldl_ss.lease_session TO PUBLIC",
        NULL, "PUBLIC holds TRUNCATE");

    st_case("session table: owned by a role the lock role does not inherit from", 20);
    ST_CHECK(pgt_exec(h, "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ldl_ss_app') "
                         "THEN CREATE ROLE ldl_ss_app LOGIN; END IF; "
                         "IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ldl_ss_other') "
                         "THEN CREATE ROLE ldl_ss_other NOLOGIN; END IF; END $$") &&
             fresh_session_shape() && pgt_exec(h, GOOD_S) &&
             pgt_exec(h, "GRANT USAGE ON SCHEMA ldl_ss TO ldl_ss_app") &&
             pgt_exec(h, "ALTER TABLE " T " OWNER TO ldl_ss_app") &&
             pgt_exec(h, "ALTER TABLE ldl_ss.lease_session OWNER TO ldl_ss_other"), "set up");
    c = pgt_connect("user=ldl_ss_app");
    rc = ldl_pg_init(&p, c, T);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&p), "lease_session\" is owned by a role this role"),
             "init refuses it (%d): %s", rc, ldl_pg_why(&p));
    ST_CHECK(pgt_exec(h, "ALTER TABLE ldl_ss.lease_session OWNER TO ldl_ss_app"), "owned by the lock role");
    ST_CHECK(ldl_pg_init(&p, c, T) == LDL_OK && ldl_pg_session(&p, 5000) == LDL_OK,
             "then init and ldl_pg_session pass as the non-superuser lock role: %s", ldl_pg_why(&p));
    PQfinish(c);
}

int main(void)
{
    st_ignore_sigpipe();
    h = pgt_connect("");
    if (PQstatus(h) != CONNECTION_OK) return 2;
    refusals();
    lifecycle(0);
    lifecycle(LDL_PG_UNNAMED);
    expiry();
    deleted_then_new();
    races();
    extends();
    async_shape();
    async_sessions();
    thousand(0);
    (void)fresh(NULL);
    (void)pgt_exec(h, "DROP SCHEMA ldl_ss CASCADE");
    PQfinish(h);
    return st_report();
}
