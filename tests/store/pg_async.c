/* pg_async.c -- the PostgreSQL adapter's non-blocking view (ldl_pg_async) on a
 * real server, many locks pipelined on one connection:
 *   many      2,000 locks: acquire, renew through three heartbeats, release
 *   midpipe   a statement that errors between grants in one pipeline never
 *             turns an earlier reported grant into a rolled-back one
 *   stopped   backend SIGSTOPped with leases held: pump and poll stay short
 *             (the maxima are printed, not asserted), leases LOST at their
 *             deadline, cancelled acquires handed back after SIGCONT
 *   restart   server restart mid-flight: every live request completes with
 *             LDL_ESTORE, non-blocking reconnect + rebind, fences advance
 *   contend   4 processes x 100 locks, a fenced resource per key
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define NMANY 2000
#define TABLE "ldl_async"

static uint64_t max_pump_us, max_poll_us;
static int pump_neg;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* wait for the adapter's socket at most wait_ms, as a frame loop would */
static void idle(ldl_pg_async *pa, int wait_ms)
{
    int ev = 0, fd = ldl_pg_async_fd(pa, &ev);
    struct pollfd pf;
    if (fd < 0 || ev == 0) { st_sleep_ms((uint32_t)wait_ms); return; }
    pf.fd = fd;
    pf.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
    pf.revents = 0;
    (void)poll(&pf, 1, wait_ms);
}

/* one frame: one pump, then poll every lock; renews counts renew answers
   applied while HELD (per lock, may be NULL) */
static int frame(ldl_pg_async *pa, pgt_alock *ls, int n, int *renews)
{
    uint64_t t0 = now_us(), t1;
    int rc = ldl_pg_async_pump(pa), i;
    t1 = now_us();
    if (t1 - t0 > max_pump_us) max_pump_us = t1 - t0;
    if (rc < 0) pump_neg++;
    for (i = 0; i < n; i++) {
        int was = ldl_lock_state(&ls[i].lock) == LDL_HELD && ldl_lock_pending(&ls[i].lock);
        uint64_t a = now_us(), b;
        (void)ldl_lock_poll(&ls[i].lock);
        b = now_us();
        if (b - a > max_poll_us) max_poll_us = b - a;
        if (renews && was && !ldl_lock_pending(&ls[i].lock) && ldl_lock_state(&ls[i].lock) == LDL_HELD)
            renews[i]++;
    }
    return rc;
}

static int count_state(pgt_alock *ls, int n, int state)
{
    int i, k = 0;
    for (i = 0; i < n; i++) k += ldl_lock_state(&ls[i].lock) == state;
    return k;
}

static int any_pending(pgt_alock *ls, int n)
{
    int i;
    for (i = 0; i < n; i++) if (ldl_lock_pending(&ls[i].lock)) return 1;
    return 0;
}

static int open_async(PGconn **c, ldl_pg *pg, ldl_pg_async *pa, ldl_async_store *as,
                      ldl_pg_req *reqs, size_t nreqs, const char *table)
{
    int rc;
    /* every request is its own transaction: with synchronous_commit on, one
       WAL flush each, and this shared test machine's disk, not the adapter,
       sets the pace (a few hundred per second). The suite checks behaviour,
       not durability (pg_faults does that), so its sessions do not wait for
       the flush. */
    *c = pgt_connect("options='-c synchronous_commit=off'");
    if (PQstatus(*c) != CONNECTION_OK) return -1;
    rc = ldl_pg_init(pg, *c, table);
    ST_CHECK(rc == LDL_OK, "ldl_pg_init = %d (%s)", rc, ldl_pg_why(pg));
    rc = ldl_pg_async_init(pa, pg, reqs, nreqs);
    ST_CHECK(rc == LDL_OK, "ldl_pg_async_init = %d (%s)", rc, ldl_pg_why(pg));
    *as = ldl_pg_async_store(pa);
    return rc == LDL_OK ? 0 : -1;
}

/* ------------------------------------------------------------ many */
static ldl_pg_req many_reqs[NMANY * 2];   /* two per lock: a live request and a cancelled one */

static void many(PGconn *chk)
{
    PGconn *c;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock *ls = (pgt_alock *)calloc(NMANY, sizeof *ls);
    int *renews = (int *)calloc(NMANY, sizeof *renews);
    int i, inprog = 0, ok = 0, min_renews = 1 << 30;
    uint64_t t0, end;
    char key[32];
    if (!ls || !renews || open_async(&c, &pg, &pa, &as, many_reqs, NMANY * 2, TABLE) != 0) {
        ST_CHECK(0, "many: setup");
        free(ls); free(renews);
        return;
    }
    for (i = 0; i < NMANY; i++) {
        snprintf(key, sizeof key, "many-%d", i);
        if (pgt_alock_init(&ls[i], &as, key, 6000, 1000) != 0) { ST_CHECK(0, "lock init %d", i); goto out; }
    }
    max_pump_us = max_poll_us = 0;
    t0 = st_now_ms();
    for (i = 0; i < NMANY; i++) inprog += ldl_lock_acquire(&ls[i].lock) == LDL_EINPROGRESS;
    ST_CHECK(inprog == NMANY, "every acquire answered LDL_EINPROGRESS (%d of %d)", inprog, NMANY);
    end = st_now_ms() + 15000;
    while (count_state(ls, NMANY, LDL_HELD) < NMANY && st_now_ms() < end) {
        frame(&pa, ls, NMANY, NULL);
        idle(&pa, 2);
    }
    ST_CHECK(count_state(ls, NMANY, LDL_HELD) == NMANY, "all %d held (%d) in %llu ms (%s)", NMANY,
             count_state(ls, NMANY, LDL_HELD), (unsigned long long)(st_now_ms() - t0), ldl_pg_why(&pg));
    printf("many: %d acquires on one connection in %llu ms; max pump %llu us, max poll %llu us\n", NMANY,
           (unsigned long long)(st_now_ms() - t0), (unsigned long long)max_pump_us,
           (unsigned long long)max_poll_us);
    for (i = 0; i < NMANY; i++) ok += ldl_lock_fencing_token(&ls[i].lock) >= 1;
    ST_CHECK(ok == NMANY, "every held lock has a fence >= 1");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key LIKE 'many-%' "
                          "AND expires_at > clock_timestamp()", NULL) == NMANY,
             "the table holds %d live leases", NMANY);

    /* three heartbeats at 1 s: run frames for 3.4 s */
    max_pump_us = max_poll_us = 0;
    t0 = st_now_ms();
    while (st_now_ms() < t0 + 3400) {
        frame(&pa, ls, NMANY, renews);
        idle(&pa, 2);
    }
    for (i = 0; i < NMANY; i++) if (renews[i] < min_renews) min_renews = renews[i];
    ST_CHECK(min_renews >= 3, "every lock renewed at least 3 times (min %d)", min_renews);
    ST_CHECK(count_state(ls, NMANY, LDL_HELD) == NMANY, "all still held after the heartbeats");
    for (ok = 0, i = 0; i < NMANY; i++) ok += ls[i].lost_calls;
    ST_CHECK(ok == 0, "no on_lost (%d)", ok);
    {   /* renewed leases reach past what the acquire alone gave (< 2.6 s left) */
        int64_t left = pgt_int(chk, "SELECT (min(extract(epoch FROM expires_at - clock_timestamp())) * 1000)::bigint "
                                    "FROM " TABLE " WHERE key LIKE 'many-%'", NULL);
        ST_CHECK(left > 3500, "the server's leases were pushed forward: min %lld ms left", (long long)left);
    }
    printf("many: heartbeats: max pump %llu us, max poll %llu us\n", (unsigned long long)max_pump_us,
           (unsigned long long)max_poll_us);

    /* release all */
    for (inprog = 0, i = 0; i < NMANY; i++) inprog += ldl_lock_release(&ls[i].lock) == LDL_EINPROGRESS;
    ST_CHECK(inprog == NMANY, "every release answered LDL_EINPROGRESS (%d)", inprog);
    end = st_now_ms() + 15000;
    while (any_pending(ls, NMANY) && st_now_ms() < end) {
        frame(&pa, ls, NMANY, NULL);
        idle(&pa, 2);
    }
    for (ok = 0, i = 0; i < NMANY; i++)
        ok += ldl_lock_state(&ls[i].lock) == LDL_RELEASED && ldl_lock_answer(&ls[i].lock) == 1;
    ST_CHECK(ok == NMANY, "all released with answer 1 (%d)", ok);
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key LIKE 'many-%' "
                          "AND expires_at = '-infinity'", NULL) == NMANY, "every row released on the server");
    ST_CHECK(pump_neg == 0, "no pump failed");
out:
    for (i = 0; i < NMANY; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(c);
    free(ls);
    free(renews);
}

/* ------------------------------------------------------------ midpipe */
static ldl_pg_req mid_reqs[32];

static void midpipe(PGconn *chk)
{
    /* A, an overflowing row, C, an invalid UTF-8 key, D: one pipeline, one batch */
    static const char *keys[5] = { "mid-a", "mid-full", "mid-c", "mid-bad\xff\xfe", "mid-d" };
    static const int grant[5] = { 1, 0, 1, 0, 1 };
    PGconn *c;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock ls[5];
    int i;
    uint64_t end;
    if (open_async(&c, &pg, &pa, &as, mid_reqs, 32, TABLE) != 0) { ST_CHECK(0, "midpipe: setup"); return; }
    ST_CHECK(pgt_exec(chk, "INSERT INTO " TABLE " VALUES ('mid-full', 9223372036854775807, '-infinity')"),
             "row at INT64_MAX");
    for (i = 0; i < 5; i++) {
        ST_CHECK(pgt_alock_init(&ls[i], &as, keys[i], 10000, 3000) == 0, "lock %d", i);
        ST_CHECK(ldl_lock_acquire(&ls[i].lock) == LDL_EINPROGRESS, "acquire %d in flight", i);
    }
    end = st_now_ms() + 10000;
    while (any_pending(ls, 5) && st_now_ms() < end) {
        frame(&pa, ls, 5, NULL);
        idle(&pa, 2);
    }
    for (i = 0; i < 5; i++) {
        int held = ldl_lock_state(&ls[i].lock) == LDL_HELD;
        ST_CHECK(held == grant[i], "%s: state %s, want %s", i == 3 ? "mid-bad" : keys[i],
                 ldl_state_name(ldl_lock_state(&ls[i].lock)), grant[i] ? "HELD" : "IDLE");
        if (grant[i]) {
            char tok[24];
            snprintf(tok, sizeof tok, "%lld", (long long)ldl_lock_fencing_token(&ls[i].lock));
            /* the reported grant is on the server, with that token, unexpired */
            ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key = $1 AND token = "
                                  "(SELECT token FROM " TABLE " WHERE key = $1) AND expires_at > clock_timestamp()",
                             keys[i]) == 1, "%s: grant still on the server", keys[i]);
            {
                int64_t t = pgt_int(chk, "SELECT token FROM " TABLE " WHERE key = $1", keys[i]);
                ST_CHECK(t == ldl_lock_fencing_token(&ls[i].lock), "%s: row token %lld == reported %lld",
                         keys[i], (long long)t, (long long)ldl_lock_fencing_token(&ls[i].lock));
            }
        }
    }
    for (i = 0; i < 5; i++) (void)ldl_lock_release(&ls[i].lock);
    end = st_now_ms() + 10000;
    while (any_pending(ls, 5) && st_now_ms() < end) {
        frame(&pa, ls, 5, NULL);
        idle(&pa, 2);
    }
    for (i = 0; i < 5; i++) if (grant[i]) ST_CHECK(ldl_lock_answer(&ls[i].lock) == 1, "%s released", keys[i]);
    for (i = 0; i < 5; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(c);
}

/* ------------------------------------------------------------ cancel */
/* release from ACQUIRING cancels the acquire: the request still goes out, and
   the adapter releases the grant with its token (the SPEC's cancel rule);
   a submit with no free ldl_pg_req is that operation's store error */
static ldl_pg_req cancel_reqs[2];

static void cancel_rule(PGconn *chk)
{
    PGconn *c;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock l, m, n;
    int ev = -1, rc;
    uint64_t end;
    if (open_async(&c, &pg, &pa, &as, cancel_reqs, 2, TABLE) != 0) { ST_CHECK(0, "cancel: setup"); return; }
    ST_CHECK(pgt_alock_init(&l, &as, "cancel-1", 60000, 20000) == 0 && pgt_alock_init(&m, &as, "cancel-2", 60000, 20000) == 0 &&
             pgt_alock_init(&n, &as, "cancel-3", 60000, 20000) == 0, "locks");
    ST_CHECK(ldl_lock_acquire(&l.lock) == LDL_EINPROGRESS, "acquire in flight");
    ST_CHECK(ldl_lock_release(&l.lock) == 0 && ldl_lock_state(&l.lock) == LDL_RELEASED,
             "release from ACQUIRING answers 0, RELEASED");
    ST_CHECK(ldl_lock_acquire(&m.lock) == LDL_EINPROGRESS, "a second acquire takes the second ldl_pg_req");
    rc = ldl_lock_acquire(&n.lock);
    ST_CHECK(rc == 0 && ldl_lock_state(&n.lock) == LDL_IDLE, "no free ldl_pg_req: acquire answers 0 at once (%d)", rc);
    ST_CHECK(strstr(ldl_pg_why(&pg), "no free") != NULL, "why: %s", ldl_pg_why(&pg));
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        (void)ldl_pg_async_pump(&pa);
        (void)ldl_lock_poll(&m.lock);
        if (ldl_pg_async_fd(&pa, &ev) >= 0 && ev == 0 && !ldl_lock_pending(&m.lock)) break;
        idle(&pa, 2);
    }
    ST_CHECK(ev == 0, "drained");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key = 'cancel-1' AND token = 1 "
                          "AND expires_at = '-infinity'", NULL) == 1,
             "the cancelled acquire went out, was granted, and the adapter released it");
    ST_CHECK(ldl_lock_state(&m.lock) == LDL_HELD && l.lost_calls == 0, "the other lock is held");
    ST_CHECK(ldl_lock_acquire(&n.lock) == LDL_EINPROGRESS, "with a ldl_pg_req free again, acquire is in flight");
    ldl_lock_dispose(&l.lock);
    ldl_lock_dispose(&m.lock);                  /* fire-and-forget release of cancel-2 */
    ldl_lock_dispose(&n.lock);                  /* cancels cancel-3's acquire */
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        (void)ldl_pg_async_pump(&pa);
        if (ldl_pg_async_fd(&pa, &ev) >= 0 && ev == 0) break;
        idle(&pa, 2);
    }
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key IN ('cancel-2', 'cancel-3') "
                          "AND expires_at = '-infinity'", NULL) == 2,
             "after dispose, both leases were released on the server");
    PQfinish(c);
}

/* ------------------------------------------------------------ stopped */
#define NHELD 50
#define NLATE 20
static ldl_pg_req stop_reqs[256];

static void stopped(PGconn *chk)
{
    PGconn *c;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock ls[NHELD + NLATE];
    char key[32];
    int i, pid, lost = 0, idle_n = 0, ev = -1;
    uint64_t end, t_stop;
    if (open_async(&c, &pg, &pa, &as, stop_reqs, 256, TABLE) != 0) { ST_CHECK(0, "stopped: setup"); return; }
    for (i = 0; i < NHELD + NLATE; i++) {
        snprintf(key, sizeof key, i < NHELD ? "stop-h%d" : "stop-a%d", i);
        ST_CHECK(pgt_alock_init(&ls[i], &as, key, 1500, 300) == 0, "lock %d", i);
    }
    for (i = 0; i < NHELD; i++) (void)ldl_lock_acquire(&ls[i].lock);
    end = st_now_ms() + 10000;
    while (count_state(ls, NHELD, LDL_HELD) < NHELD && st_now_ms() < end) {
        frame(&pa, ls, NHELD, NULL);
        idle(&pa, 2);
    }
    ST_CHECK(count_state(ls, NHELD, LDL_HELD) == NHELD, "stopped: %d held before the stop",
             count_state(ls, NHELD, LDL_HELD));
    pid = PQbackendPID(c);
    ST_CHECK(pid > 0 && kill(pid, SIGSTOP) == 0, "SIGSTOP backend %d", pid);
    t_stop = st_now_ms();
    for (i = NHELD; i < NHELD + NLATE; i++)
        ST_CHECK(ldl_lock_acquire(&ls[i].lock) == LDL_EINPROGRESS, "late acquire %d in flight", i);
    max_pump_us = max_poll_us = 0;
    while (st_now_ms() < t_stop + 2500) {
        frame(&pa, ls, NHELD + NLATE, NULL);
        idle(&pa, 2);
    }
    printf("stopped: backend SIGSTOPped 2.5 s with %d leases held and %d acquires in flight: "
           "max pump %llu us, max poll %llu us\n", NHELD, NLATE,
           (unsigned long long)max_pump_us, (unsigned long long)max_poll_us);
    for (i = 0; i < NHELD; i++)
        lost += ldl_lock_state(&ls[i].lock) == LDL_LOST && ls[i].lost_calls == 1 &&
                ls[i].lost_reason == LDL_REASON_LEASE_EXPIRED;
    ST_CHECK(lost == NHELD, "every held lease LOST (LEASE_EXPIRED, on_lost once): %d of %d", lost, NHELD);
    for (i = NHELD; i < NHELD + NLATE; i++)
        idle_n += ldl_lock_state(&ls[i].lock) == LDL_IDLE && !ldl_lock_pending(&ls[i].lock);
    ST_CHECK(idle_n == NLATE, "every acquire timed out to IDLE: %d of %d", idle_n, NLATE);
    ST_CHECK(kill(pid, SIGCONT) == 0, "SIGCONT");

    /* the late answers arrive: renews are dropped, granted acquires handed back */
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        frame(&pa, ls, NHELD + NLATE, NULL);
        if (ldl_pg_async_fd(&pa, &ev) >= 0 && ev == 0) break;
        idle(&pa, 2);
    }
    ST_CHECK(ev == 0, "the adapter's queue drained after SIGCONT (events %d, %s)", ev, ldl_pg_why(&pg));
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key LIKE 'stop-a%' AND expires_at = '-infinity'",
                     NULL) == NLATE, "the %d late grants were handed back by the adapter", NLATE);
    for (i = NHELD; i < NHELD + NLATE; i++) ST_CHECK(ls[i].lost_calls == 0, "no on_lost for a late grant");
    /* the lost leases' tokens are owed to a release */
    for (i = 0; i < NHELD; i++) (void)ldl_lock_release(&ls[i].lock);
    end = st_now_ms() + 10000;
    while (any_pending(ls, NHELD) && st_now_ms() < end) {
        frame(&pa, ls, NHELD, NULL);
        idle(&pa, 2);
    }
    ST_CHECK(count_state(ls, NHELD, LDL_RELEASED) == NHELD, "the lost leases released");
    ST_CHECK(pgt_int(chk, "SELECT count(*) FROM " TABLE " WHERE key LIKE 'stop-%' AND expires_at > clock_timestamp()",
                     NULL) == 0, "no stop-* lease left on the server");
    for (i = 0; i < NHELD + NLATE; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(c);
}

/* ------------------------------------------------------------ restart */
#define NRST 100
static ldl_pg_req rst_reqs[NRST * 2];

static void restart(void)
{
    PGconn *c, *nc;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_alock ls[NRST];
    int64_t old[NRST];
    char key[32];
    int i, rc, n, neg = 0, up = 0;
    uint64_t end;
    if (open_async(&c, &pg, &pa, &as, rst_reqs, NRST * 2, TABLE) != 0) { ST_CHECK(0, "restart: setup"); return; }
    for (i = 0; i < NRST; i++) {
        snprintf(key, sizeof key, "rst-%d", i);
        ST_CHECK(pgt_alock_init(&ls[i], &as, key, 2000, 600) == 0, "lock %d", i);
        (void)ldl_lock_acquire(&ls[i].lock);
    }
    end = st_now_ms() + 10000;
    while (count_state(ls, NRST, LDL_HELD) < NRST && st_now_ms() < end) {
        frame(&pa, ls, NRST, NULL);
        idle(&pa, 2);
    }
    ST_CHECK(count_state(ls, NRST, LDL_HELD) == NRST, "restart: all held before");
    for (i = 0; i < NRST; i++) {
        old[i] = ldl_lock_fencing_token(&ls[i].lock);
        ST_CHECK(ldl_lock_release(&ls[i].lock) == LDL_EINPROGRESS, "release %d queued", i);
    }
    /* the releases are queued, not yet sent, when the server restarts */
    ST_CHECK(pgt_ctl("restart") == 0, "pg_ctl restart");
    end = st_now_ms() + 5000;
    while (st_now_ms() < end && (rc = ldl_pg_async_pump(&pa)) >= 0) idle(&pa, 5);
    rc = ldl_pg_async_pump(&pa);
    ST_CHECK(rc < 0, "the pump reports the failed link (%d: %s)", rc, ldl_pg_why(&pg));
    for (n = 0, i = 0; i < NRST; i++) {
        int a = ldl_lock_release(&ls[i].lock);
        n += ldl_lock_state(&ls[i].lock) == LDL_RELEASED && !ldl_lock_pending(&ls[i].lock);
        neg += a == LDL_ESTORE;
    }
    ST_CHECK(n == NRST, "every release is final after the failure (%d of %d)", n, NRST);
    ST_CHECK(neg == NRST, "every queued release answered LDL_ESTORE (%d of %d)", neg, NRST);
    ST_CHECK(ldl_lock_acquire(&ls[0].lock) == 0, "a submit on the failed link answers at once (acquire 0)");
    ST_CHECK(ldl_pg_async_fd(&pa, NULL) == -1, "no socket to wait on");

    /* reconnect without blocking, rebind; fences advance past the restart */
    nc = pgt_connect_nb("", 10000);
    ST_CHECK(nc != NULL, "non-blocking reconnect");
    if (!nc) { PQfinish(c); return; }
    PQfinish(c);
    ST_CHECK(ldl_pg_async_rebind(&pa, nc) == LDL_OK, "rebind (%s)", ldl_pg_why(&pg));
    end = st_now_ms() + 15000;
    while (count_state(ls, NRST, LDL_HELD) < NRST && st_now_ms() < end) {
        for (i = 0; i < NRST; i++) {
            int s = ldl_lock_state(&ls[i].lock);
            if ((s == LDL_IDLE || s == LDL_RELEASED) && !ldl_lock_pending(&ls[i].lock))
                (void)ldl_lock_acquire(&ls[i].lock);
        }
        frame(&pa, ls, NRST, NULL);
        idle(&pa, 5);
    }
    for (i = 0; i < NRST; i++) up += ldl_lock_state(&ls[i].lock) == LDL_HELD && ldl_lock_fencing_token(&ls[i].lock) > old[i];
    ST_CHECK(up == NRST, "all re-acquired after the restart with a higher fence (%d of %d; %s)", up, NRST,
             ldl_pg_why(&pg));
    for (i = 0; i < NRST; i++) (void)ldl_lock_release(&ls[i].lock);
    end = st_now_ms() + 10000;
    while (any_pending(ls, NRST) && st_now_ms() < end) {
        frame(&pa, ls, NRST, NULL);
        idle(&pa, 2);
    }
    for (n = 0, i = 0; i < NRST; i++) n += ldl_lock_answer(&ls[i].lock) == 1;
    ST_CHECK(n == NRST, "released on the new connection (%d)", n);
    for (i = 0; i < NRST; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(nc);
}

/* ------------------------------------------------------------ contend */
#define CPROC 4
#define CLOCKS 100
#define CROUNDS 3
static char res_dir[400];

static void res_path(char *buf, size_t n, int i) { snprintf(buf, n, "%s/r%d", res_dir, i); }

static int contender(void *arg, int in, int out)
{
    static ldl_pg_req reqs[CLOCKS * 3];
    static pgt_alock ls[CLOCKS];
    int id = (int)(intptr_t)arg, done[CLOCKS], total = 0, i;
    PGconn *c;
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    char key[32], path[512];
    uint64_t end;
    (void)out;
    if (open_async(&c, &pg, &pa, &as, reqs, CLOCKS * 3, "ldl_acontend") != 0) return 10;
    for (i = 0; i < CLOCKS; i++) {
        snprintf(key, sizeof key, "c-%d", i);
        if (pgt_alock_init(&ls[i], &as, key, 3000, 1000) != 0) return 11;
        done[i] = 0;
    }
    if (st_recv(in, 10000) != 'g') return 12;
    end = st_now_ms() + 90000;
    while (total < CLOCKS * CROUNDS && st_now_ms() < end) {
        if (ldl_pg_async_pump(&pa) < 0) { fprintf(stderr, "c%d: pump: %s\n", id, ldl_pg_why(&pg)); return 13; }
        for (i = 0; i < CLOCKS; i++) {
            ldl_lock *l = &ls[i].lock;
            int s = ldl_lock_state(l);
            if ((s == LDL_IDLE || s == LDL_RELEASED) && !ldl_lock_pending(l)) {
                if (done[i] < CROUNDS) (void)ldl_lock_acquire(l);
                continue;
            }
            if (ldl_lock_poll(l) == 1 && !ldl_lock_pending(l)) {
                int64_t f = ldl_lock_fencing_token(l), v = -1;
                res_path(path, sizeof path, i);
                fenced_enter(path);
                if (fenced_read(path, f, &v) == 1 && fenced_write(path, f, v + 1) == 1 &&
                    ldl_lock_poll(l) == 1) {
                    fenced_completed(path);
                    done[i]++;
                    total++;
                }
                fenced_leave(path);
                (void)ldl_lock_release(l);
            }
        }
        idle(&pa, 1);
    }
    /* let the last releases finish */
    end = st_now_ms() + 5000;
    while (any_pending(ls, CLOCKS) && st_now_ms() < end) {
        if (ldl_pg_async_pump(&pa) < 0) break;
        for (i = 0; i < CLOCKS; i++) (void)ldl_lock_poll(&ls[i].lock);
        idle(&pa, 2);
    }
    for (i = 0; i < CLOCKS; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(c);
    if (total != CLOCKS * CROUNDS) fprintf(stderr, "c%d: %d of %d sections\n", id, total, CLOCKS * CROUNDS);
    return total == CLOCKS * CROUNDS ? 0 : 14;
}

static void contend(void)
{
    st_child ch[CPROC];
    int i, ok = 0, good = 0;
    uint64_t t0;
    char path[512];
    if (st_tmpdir(res_dir, sizeof res_dir, "pgasync") != 0) { ST_CHECK(0, "tmpdir"); return; }
    for (i = 0; i < CLOCKS; i++) {
        res_path(path, sizeof path, i);
        if (fenced_create(path) != 0) { ST_CHECK(0, "fenced_create"); return; }
    }
    for (i = 0; i < CPROC; i++) st_fork(&ch[i], contender, (void *)(intptr_t)i);
    st_sleep_ms(300);
    t0 = st_now_ms();
    for (i = 0; i < CPROC; i++) st_send(ch[i].to_child, 'g');
    for (i = 0; i < CPROC; i++) ok += st_join(&ch[i], 120000) == 0;
    ST_CHECK(ok == CPROC, "contend: %d of %d processes completed their sections", ok, CPROC);
    printf("contend: %d procs x %d locks x %d rounds in %llu ms\n", CPROC, CLOCKS, CROUNDS,
           (unsigned long long)(st_now_ms() - t0));
    for (i = 0; i < CLOCKS; i++) {
        fenced_stats st;
        int64_t log[CPROC * CROUNDS + 4];
        size_t n = 0;
        res_path(path, sizeof path, i);
        if (fenced_stats_get(path, &st) != 0 || fenced_log(path, log, CPROC * CROUNDS + 4, &n) != 0) continue;
        good += st.value == CPROC * CROUNDS && st.writes == st.value && st.completed == st.value &&
                st.rejected == 0 && st.max_inside == 1 && fenced_log_increasing(log, n);
        if (!(st.rejected == 0 && st.max_inside == 1))
            fprintf(stderr, "resource %d: value %lld writes %lld completed %lld rejected %lld max_inside %lld\n", i,
                    (long long)st.value, (long long)st.writes, (long long)st.completed,
                    (long long)st.rejected, (long long)st.max_inside);
    }
    ST_CHECK(good == CLOCKS, "every resource: value == writes == completed == %d, nothing rejected, "
             "one inside at a time, fences increasing (%d of %d)", CPROC * CROUNDS, good, CLOCKS);
}

int main(void)
{
    PGconn *chk;
    st_ignore_sigpipe();
    chk = pgt_connect("");
    ST_CHECK(PQstatus(chk) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(chk, "SET client_min_messages = warning");
    ST_CHECK(pgt_exec(chk, "DROP TABLE IF EXISTS " TABLE ", ldl_acontend"), "clean slate");
    {   /* create the tables once */
        ldl_pg pg = {0};
        ST_CHECK(ldl_pg_init(&pg, chk, TABLE) == LDL_OK && ldl_pg_init(&pg, chk, "ldl_acontend") == LDL_OK,
                 "tables: %s", ldl_pg_why(&pg));
    }
    many(chk);
    midpipe(chk);
    cancel_rule(chk);
    stopped(chk);
    PQfinish(chk);
    restart();
    contend();
    return st_report();
}
