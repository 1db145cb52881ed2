/* pg_rebind.c -- the non-blocking view given up on a LIVE link, on a real
 * server (issue 24, "what the suites do not yet see"), and its why and stats
 * (issue 24 item 11). A helper transaction holds a row lock, so the requests
 * sent on the first connection are truly in flight (the backend waits on the
 * lock) when the link is given up:
 *   rebind    two acquires in flight and one queued, then rebind to a new
 *             connection: all three answer LDL_ESTORE at once (before any
 *             pump), the queued one never reaches the server, a new lock's
 *             answer on the new connection is its own (its token is the
 *             server's), and the old pipeline's late answers reach no lock;
 *   same      rebind to the very connection still in pipeline mode: refused,
 *             its request answered LDL_ESTORE at once, the view dead until a
 *             rebind to a fresh connection;
 *   drop      one in flight, one queued: drop answers 2, both LDL_ESTORE at
 *             once, the pump and submits refuse, no socket, rebind recovers;
 *   why/stats every init refusal has a why; submitted, answered, failed,
 *             handed_back, refused_full, link_failures, live, max_live count
 *             exactly what happened.
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define TABLE "ldl_rebind"
#define NREQS 16

static ldl_pg_req reqs[NREQS];

static void frames(ldl_pg_async *pa, pgt_alock *ls, int n, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    int i;
    while (st_now_ms() < end) {
        (void)ldl_pg_async_pump(pa);
        for (i = 0; i < n; i++) (void)ldl_lock_poll(&ls[i].lock);
        st_sleep_ms(2);
    }
}

/* frames until lock l is no longer pending (or timeout_ms) */
static void settle(ldl_pg_async *pa, pgt_alock *l, uint32_t timeout_ms)
{
    uint64_t end = st_now_ms() + timeout_ms;
    while (ldl_lock_pending(&l->lock) && st_now_ms() < end) {
        (void)ldl_pg_async_pump(pa);
        (void)ldl_lock_poll(&l->lock);
        st_sleep_ms(2);
    }
}

/* the helper's transaction locks the row of `key` */
static int hold_row(PGconn *helper, const char *key)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT token FROM " TABLE " WHERE key = '%s' FOR UPDATE", key);
    return pgt_exec(helper, "BEGIN") && pgt_exec(helper, sql);
}

/* until backend `pid` waits on a lock (the request is on the server) */
static int waits_on_lock(PGconn *chk, int pid)
{
    char p[24];
    uint64_t end = st_now_ms() + 10000;
    snprintf(p, sizeof p, "%d", pid);
    while (st_now_ms() < end) {
        if (pgt_int(chk, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int "
                         "AND wait_event_type = 'Lock'", p) == 1) return 1;
        st_sleep_ms(10);
    }
    return 0;
}

static int estore_now(pgt_alock *l)
{
    (void)ldl_lock_poll(&l->lock);
    if (!(!ldl_lock_pending(&l->lock) && ldl_lock_state(&l->lock) != LDL_HELD &&
           ldl_lock_raw_answer(&l->lock) == LDL_ESTORE))
        fprintf(stderr, "estore_now: pending %d state %s answer %d raw %d\n", ldl_lock_pending(&l->lock),
                ldl_state_name(ldl_lock_state(&l->lock)), ldl_lock_answer(&l->lock), ldl_lock_raw_answer(&l->lock));
    return !ldl_lock_pending(&l->lock) && ldl_lock_state(&l->lock) != LDL_HELD &&
           ldl_lock_raw_answer(&l->lock) == LDL_ESTORE;
}

static void live_rebind(PGconn *chk, PGconn *helper)
{
    PGconn *c1, *c2, *c3;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock ls[5];            /* a, b in flight; c queued; d, e on later links */
    const ldl_pg_stats *st;
    ldl_pg_stats before;
    int i, rc, pid;
    c1 = pgt_connect("");
    ST_CHECK(ldl_pg_init(&pg, c1, TABLE) == LDL_OK, "init (%s)", ldl_pg_why(&pg));
    ST_CHECK(ldl_pg_async_init(&pa, &pg, reqs, NREQS) == LDL_OK, "async init (%s)", ldl_pg_async_why(&pa));
    as = ldl_pg_async_store(&pa);
    st = ldl_pg_async_stats(&pa);
    ST_CHECK(st && st->submitted == 0 && st->live == 0 && st->link_failures == 0, "stats start at zero");
    for (i = 0; i < 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "r-%c", 'a' + i);
        ST_CHECK(pgt_alock_init(&ls[i], &as, key, 60000, 20000) == 0, "lock %s", key);
    }
    pid = PQbackendPID(c1);
    ST_CHECK(hold_row(helper, "r-a"), "helper locks the row r-a");
    ST_CHECK(ldl_lock_acquire(&ls[0].lock) == LDL_EINPROGRESS && ldl_lock_acquire(&ls[1].lock) == LDL_EINPROGRESS,
             "acquire a, b");
    for (i = 0; i < 5; i++) (void)ldl_pg_async_pump(&pa);
    ST_CHECK(waits_on_lock(chk, pid), "a is on the server, waiting for the row lock (b behind it)");
    ST_CHECK(ldl_lock_acquire(&ls[2].lock) == LDL_EINPROGRESS, "acquire c: queued, not pumped");
    ST_CHECK(st->live == 3 && st->max_live == 3 && st->submitted == 3 && st->batches >= 1,
             "stats: 3 live (%zu), 3 submitted (%llu)", st->live, (unsigned long long)st->submitted);
    ST_CHECK(ldl_lock_pending(&ls[0].lock) && ldl_lock_pending(&ls[1].lock) && ldl_lock_pending(&ls[2].lock),
             "a, b, c pending");
    c2 = pgt_connect("");
    before = *st;
    rc = ldl_pg_async_rebind(&pa, c2);
    ST_CHECK(rc == LDL_OK, "rebind the live view to a new connection (%d, %s)", rc, ldl_pg_async_why(&pa));
    /* at once: no pump in between */
    ST_CHECK(estore_now(&ls[0]) && estore_now(&ls[1]) && estore_now(&ls[2]),
             "a, b (in flight) and c (queued) answered LDL_ESTORE at once (answers %d %d %d)",
             ldl_lock_answer(&ls[0].lock), ldl_lock_answer(&ls[1].lock), ldl_lock_answer(&ls[2].lock));
    ST_CHECK(st->failed == before.failed + 3 && st->live == 0 && st->link_failures == before.link_failures + 1,
             "stats: 3 failed (%llu), none live (%zu), one link given up (%llu)",
             (unsigned long long)(st->failed - before.failed), st->live,
             (unsigned long long)(st->link_failures - before.link_failures));
    /* a new lock on the new link gets its own answer */
    ST_CHECK(ldl_lock_acquire(&ls[3].lock) == LDL_EINPROGRESS, "acquire d on the new link");
    settle(&pa, &ls[3], 10000);
    ST_CHECK(ldl_lock_state(&ls[3].lock) == LDL_HELD &&
             ldl_lock_fencing_token(&ls[3].lock) == pgt_int(chk, "SELECT token FROM " TABLE " WHERE key = 'r-d'", NULL),
             "d held with the server's token for r-d (%lld; %s)", (long long)ldl_lock_fencing_token(&ls[3].lock),
             ldl_pg_async_why(&pa));
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key = 'r-c'", NULL) == 0,
             "c never reached the server");
    if (st_failed()) {          /* the rest would only wait out its timeouts */
        (void)pgt_exec(helper, "ROLLBACK");
        for (i = 0; i < 5; i++) ldl_lock_dispose(&ls[i].lock);
        PQfinish(c1);
        PQfinish(c2);
        return;
    }
    /* the old pipeline completes on the server; nothing of it reaches a lock */
    ST_CHECK(pgt_exec(helper, "COMMIT"), "helper commits");
    frames(&pa, ls, 4, 300);
    ST_CHECK(estore_now(&ls[0]) && estore_now(&ls[1]) && estore_now(&ls[2]) &&
             ldl_lock_state(&ls[3].lock) == LDL_HELD && !ldl_lock_pending(&ls[3].lock),
             "after the old pipeline finished: a, b, c unchanged, d still held");
    PQfinish(c1);               /* its late answers, unread */

    /* rebind to the very connection, still in pipeline mode: refused */
    ST_CHECK(hold_row(helper, "r-e"), "helper locks r-e");
    ST_CHECK(ldl_lock_acquire(&ls[4].lock) == LDL_EINPROGRESS, "acquire e");
    for (i = 0; i < 5; i++) (void)ldl_pg_async_pump(&pa);
    ST_CHECK(waits_on_lock(chk, PQbackendPID(c2)), "e is on the server, waiting for the row lock");
    ST_CHECK(ldl_lock_release(&ls[3].lock) == LDL_EINPROGRESS, "release d: queued");
    rc = ldl_pg_async_rebind(&pa, c2);
    ST_CHECK(rc == LDL_ESTORE && ldl_pg_async_why(&pa)[0] != '\0',
             "rebind to the same live connection refused (%d, %s)", rc, ldl_pg_async_why(&pa));
    (void)ldl_lock_poll(&ls[3].lock);
    ST_CHECK(!ldl_lock_pending(&ls[3].lock) && ldl_lock_answer(&ls[3].lock) == LDL_ESTORE,
             "d's release answered LDL_ESTORE at once (%d)", ldl_lock_answer(&ls[3].lock));
    ST_CHECK(estore_now(&ls[4]), "e (in flight) answered LDL_ESTORE at once");
    ST_CHECK(ldl_pg_async_pump(&pa) < 0 && ldl_pg_async_fd(&pa, NULL) == -1, "the view is dead");
    ST_CHECK(pgt_exec(helper, "ROLLBACK"), "helper rolls back");
    PQfinish(c2);
    c3 = pgt_connect("");
    ST_CHECK(ldl_pg_async_rebind(&pa, c3) == LDL_OK, "rebind to a fresh connection (%s)", ldl_pg_async_why(&pa));
    for (i = 0; i < 5; i++) if (!ldl_lock_pending(&ls[i].lock) && ldl_lock_state(&ls[i].lock) != LDL_HELD)
        (void)ldl_lock_acquire(&ls[i].lock);
    for (i = 0; i < 5; i++) settle(&pa, &ls[i], 10000);
    for (rc = 0, i = 0; i < 5; i++) {
        char key[16];
        snprintf(key, sizeof key, "r-%c", 'a' + i);
        if (ldl_lock_state(&ls[i].lock) != LDL_HELD) continue;
        rc += ldl_lock_fencing_token(&ls[i].lock) == pgt_int(chk, "SELECT token FROM " TABLE " WHERE key = $1", key)
              ? 1 : 100;
    }
    /* r-a, r-b (and r-e, r-d) were granted by the abandoned links (to nobody)
       or never released: held until their TTL, so only c gets its key now */
    ST_CHECK(rc == 1 && ldl_lock_state(&ls[2].lock) == LDL_HELD,
             "on the fresh link c holds r-c, and every held lock has the server's token (%d)", rc);
    for (i = 0; i < 5; i++) ldl_lock_dispose(&ls[i].lock);
    frames(&pa, ls, 0, 200);
    PQfinish(c3);
}

static void live_drop(PGconn *chk, PGconn *helper)
{
    PGconn *c1, *c2;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock f, g;
    const ldl_pg_stats *st;
    int rc, i;
    c1 = pgt_connect("");
    ST_CHECK(ldl_pg_init(&pg, c1, TABLE) == LDL_OK && ldl_pg_async_init(&pa, &pg, reqs, NREQS) == LDL_OK,
             "drop: init (%s)", ldl_pg_why(&pg));
    as = ldl_pg_async_store(&pa);
    st = ldl_pg_async_stats(&pa);
    ST_CHECK(pgt_exec(chk, "UPDATE " TABLE " SET expires_at = '-infinity' WHERE key = 'r-a'"), "free r-a");
    ST_CHECK(pgt_alock_init(&f, &as, "r-a", 60000, 20000) == 0 && pgt_alock_init(&g, &as, "r-g", 60000, 20000) == 0,
             "drop: locks");
    ST_CHECK(hold_row(helper, "r-a"), "drop: helper locks r-a");
    ST_CHECK(ldl_lock_acquire(&f.lock) == LDL_EINPROGRESS, "acquire f");
    for (i = 0; i < 5; i++) (void)ldl_pg_async_pump(&pa);
    ST_CHECK(waits_on_lock(chk, PQbackendPID(c1)), "f waits on the server");
    ST_CHECK(ldl_lock_acquire(&g.lock) == LDL_EINPROGRESS, "acquire g: queued");
    rc = ldl_pg_async_drop(&pa);
    ST_CHECK(rc == 2, "drop answers 2 (%d)", rc);
    ST_CHECK(estore_now(&f) && estore_now(&g), "f, g answered LDL_ESTORE at once");
    ST_CHECK(st->failed == 2 && st->live == 0 && st->link_failures == 1, "stats: 2 failed, 0 live, 1 link given up");
    ST_CHECK(ldl_pg_async_pump(&pa) < 0 && ldl_pg_async_fd(&pa, NULL) == -1, "after drop: pump refuses, no socket");
    ST_CHECK(ldl_lock_acquire(&g.lock) == 0 && ldl_lock_raw_answer(&g.lock) == LDL_ESTORE,
             "after drop: a submit answers LDL_ESTORE at once");
    ST_CHECK(ldl_pg_async_drop(&pa) == 0 && st->link_failures == 1, "a second drop: nothing, counted once");
    ST_CHECK(ldl_pg_async_why(&pa)[0] != '\0', "drop: why (%s)", ldl_pg_async_why(&pa));
    ST_CHECK(pgt_exec(helper, "ROLLBACK"), "drop: helper rolls back");
    PQfinish(c1);
    c2 = pgt_connect("");
    ST_CHECK(ldl_pg_async_rebind(&pa, c2) == LDL_OK, "drop: rebind (%s)", ldl_pg_async_why(&pa));
    ST_CHECK(ldl_lock_acquire(&g.lock) == LDL_EINPROGRESS, "acquire g again");
    settle(&pa, &g, 10000);
    ST_CHECK(ldl_lock_state(&g.lock) == LDL_HELD, "g held on the new link");
    ST_CHECK(ldl_lock_release(&g.lock) == LDL_EINPROGRESS, "release g");
    settle(&pa, &g, 10000);
    ST_CHECK(ldl_lock_answer(&g.lock) == 1 && st->answered == 2 && st->failed == 2,
             "released; stats: 2 answered (%llu), 2 failed", (unsigned long long)st->answered);
    ldl_lock_dispose(&f.lock);
    ldl_lock_dispose(&g.lock);
    PQfinish(c2);
}

static void why_and_stats(PGconn *chk)
{
    static ldl_pg_req one[1];
    ldl_pg pg = {0}, raw;
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock a, b;
    const ldl_pg_stats *st;
    PGconn *c;
    uint64_t end;
    ST_CHECK(ldl_pg_async_why(NULL) != NULL && ldl_pg_async_stats(NULL) == NULL, "NULL: a why, no stats");
    ST_CHECK(ldl_pg_async_init(&pa, NULL, reqs, NREQS) == LDL_EINVAL && strstr(ldl_pg_async_why(&pa), "want") != NULL,
             "init without an ldl_pg: EINVAL, why (%s)", ldl_pg_async_why(&pa));
    memset(&raw, 0, sizeof raw);
    ST_CHECK(ldl_pg_async_init(&pa, &raw, reqs, NREQS) == LDL_EINVAL &&
             strstr(ldl_pg_async_why(&pa), "not initialised") != NULL,
             "init on an ldl_pg never initialised: EINVAL, why (%s)", ldl_pg_async_why(&pa));
    c = pgt_connect("");
    ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "init");
    ST_CHECK(ldl_pg_async_init(&pa, &pg, one, 0) == LDL_EINVAL && ldl_pg_async_why(&pa)[0] != '\0',
             "init with nreqs 0: EINVAL, why (%s)", ldl_pg_async_why(&pa));
    ST_CHECK(ldl_pg_async_init(&pa, &pg, one, 1) == LDL_OK && ldl_pg_async_why(&pa)[0] == '\0',
             "init with one request; why empty");
    as = ldl_pg_async_store(&pa);
    st = ldl_pg_async_stats(&pa);
    ST_CHECK(pgt_exec(chk, "UPDATE " TABLE " SET expires_at = '-infinity' WHERE key IN ('s-a', 's-b')"), "free s-*");
    ST_CHECK(pgt_alock_init(&a, &as, "s-a", 60000, 20000) == 0 && pgt_alock_init(&b, &as, "s-b", 60000, 20000) == 0,
             "locks");
    ST_CHECK(ldl_lock_acquire(&a.lock) == LDL_EINPROGRESS, "acquire a");
    (void)ldl_lock_acquire(&b.lock);
    (void)ldl_lock_poll(&b.lock);
    ST_CHECK(!ldl_lock_pending(&b.lock) && st->refused_full == 1 && strstr(ldl_pg_async_why(&pa), "no free") != NULL,
             "the second submit is refused: pool full (%llu, %s)", (unsigned long long)st->refused_full,
             ldl_pg_async_why(&pa));
    /* a cancels its acquire: the granted token is handed back by the adapter */
    (void)ldl_lock_release(&a.lock);
    end = st_now_ms() + 10000;
    while ((st->handed_back == 0 || st->live != 0) && st_now_ms() < end) {
        (void)ldl_pg_async_pump(&pa);
        (void)ldl_lock_poll(&a.lock);
        st_sleep_ms(2);
    }
    ST_CHECK(st->handed_back == 1 && st->submitted == 2 && st->answered == 2 && st->live == 0 && st->max_live == 1 &&
             st->failed == 0 && st->link_failures == 0 && st->prepares == 1,
             "stats: 1 handed back, 2 submitted, 2 answered, 0 live, max 1, nothing failed, one prepare "
             "(the owned acquire; init prepared the rest on this backend) (%llu %llu %llu %zu %zu)", (unsigned long long)st->handed_back,
             (unsigned long long)st->submitted, (unsigned long long)st->answered, st->live, st->max_live);
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key = 's-a' AND expires_at = '-infinity'", NULL) == 1,
             "the handed-back grant is released on the server");
    ldl_lock_dispose(&a.lock);
    ldl_lock_dispose(&b.lock);
    PQfinish(c);
}

int main(void)
{
    PGconn *chk, *helper;
    st_ignore_sigpipe();
    chk = pgt_connect("");
    helper = pgt_connect("");
    ST_CHECK(PQstatus(chk) == CONNECTION_OK && PQstatus(helper) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(chk, "SET client_min_messages = warning");
    ST_CHECK(pgt_exec(chk, "DROP TABLE IF EXISTS " TABLE), "clean slate");
    {
        ldl_pg pg = {0};
        ST_CHECK(ldl_pg_init(&pg, chk, TABLE) == LDL_OK, "table: %s", ldl_pg_why(&pg));
    }
    ST_CHECK(pgt_exec(chk, "INSERT INTO " TABLE " VALUES ('r-a', 7, '-infinity'), ('r-e', 3, '-infinity')"),
             "rows r-a, r-e, free");
    live_rebind(chk, helper);
    if (!st_failed()) live_drop(chk, helper);
    if (!st_failed()) why_and_stats(chk);
    PQfinish(helper);
    PQfinish(chk);
    return st_report();
}
