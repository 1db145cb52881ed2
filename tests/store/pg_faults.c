/* pg_faults.c -- the PostgreSQL adapter under faults, on a real server:
 *   1. SIGSTOP the holder past its TTL, SIGCONT: another process took over with a
 *      higher fence, the paused one's late write is rejected by the resource and
 *      its lock reports LOST (LEASE_EXPIRED or HEARTBEAT_FAILED).
 *   2. SIGKILL a heartbeating holder: the lease frees after about one TTL, the
 *      next token is higher.
 *   3. Restart (fast) and crash (immediate, WAL replay) PostgreSQL between
 *      grants: the old connection answers errors, PQreset() and the adapter
 *      re-prepares by itself; tokens keep rising (the row survived).
 *   4. A renew that cannot get through: blocked by a row lock (lock_timeout in
 *      the conninfo ends it) and server stopped: the lock reports STORE_ERROR;
 *      acquire answers no grant within the connection's timeouts; nothing hangs.
 * Run through tests/store/with_pg.sh (needs LDL_PG_CTL). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define TABLE "ldl_faults"
/* the timeouts a real deployment should set: connect, unacked TCP, statement, row lock */
#define TIMEOUTS "connect_timeout=2 tcp_user_timeout=1000 keepalives=1 " \
                 "options='-c statement_timeout=1500 -c lock_timeout=500'"
static char res_path[512];

static int64_t row_token(PGconn *c, const char *key)
{
    return pgt_int(c, "SELECT token FROM " TABLE " WHERE key = $1", key);
}

/* ------------------------------------------------------------ 1. SIGSTOP */
static int paused_holder(void *arg, int in, int out)
{
    PGconn *c = pgt_connect(TIMEOUTS);
    ldl_pg pg = {0};
    pgt_lock t;
    int64_t f, v = -1;
    int bad = 0, rc, st, why;
    (void)arg;
    if (ldl_pg_init(&pg, c, TABLE) != LDL_OK || pgt_lock_init(&t, &pg, "paused", 800, 250) != 0) return 100;
    if (ldl_lock_acquire(&t.lock) != 1) return 101;
    f = ldl_lock_fencing_token(&t.lock);
    if (fenced_read(res_path, f, &v) != 1) return 102;
    st_send(out, 'g');
    if (st_recv(in, 30000) != 'w') return 103;      /* SIGSTOP / SIGCONT happen here */
    /* the late write, as a holder that did not look at its lock would do it */
    rc = fenced_write(res_path, f, v + 1);
    if (rc != 0) { fprintf(stderr, "paused: late write answered %d, want 0 (rejected)\n", rc); bad |= 1; }
    rc = ldl_lock_poll(&t.lock);
    st = ldl_lock_state(&t.lock);
    why = ldl_lock_reason(&t.lock);
    if (rc != 0 || st != LDL_LOST || (why != LDL_REASON_LEASE_EXPIRED && why != LDL_REASON_HEARTBEAT_FAILED)) {
        fprintf(stderr, "paused: poll %d state %s reason %s\n", rc, ldl_state_name(st), ldl_reason_name(why));
        bad |= 2;
    }
    if (t.lost_calls != 1 || t.lost_reason != why) { fprintf(stderr, "paused: on_lost %d\n", t.lost_calls); bad |= 4; }
    rc = ldl_lock_release(&t.lock);     /* the successor's lease must not be touched */
    if (rc != 0) { fprintf(stderr, "paused: release of the lost lease = %d, want 0\n", rc); bad |= 8; }
    ldl_lock_dispose(&t.lock);
    PQfinish(c);
    return bad;
}

static void test_sigstop(PGconn *c, ldl_pg *pg)
{
    st_child ch;
    pgt_lock t;
    int64_t fa, fb, v = -1, log[4];
    size_t n = 0;
    fenced_stats st;
    int rc;

    ST_CHECK(fenced_create(res_path) == 0, "resource");
    ST_CHECK(st_fork(&ch, paused_holder, NULL) == 0, "fork");
    rc = st_recv(ch.from_child, 10000);
    ST_CHECK(rc == 'g', "paused holder got the lock (%d)", rc);
    if (rc != 'g') { st_join(&ch, 1000); return; }
    kill(ch.pid, SIGSTOP);
    fa = row_token(c, "paused");
    ST_CHECK(fa >= 1, "holder's token %lld", (long long)fa);
    ST_CHECK(pgt_lock_init(&t, pg, "paused", 800, 250) == 0, "lock B");
    rc = ldl_lock_acquire(&t.lock);
    ST_CHECK(rc == 0, "B cannot take it while the paused lease is live (%d)", rc);
    st_sleep_ms(800 + 250);
    rc = ldl_lock_acquire(&t.lock);
    fb = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(rc == 1 && fb > fa, "B takes over after the TTL: %d token %lld (paused %lld)", rc, (long long)fb, (long long)fa);
    ST_CHECK(fenced_read(res_path, fb, &v) == 1 && fenced_write(res_path, fb, v + 1) == 1, "B's write accepted");
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "B releases");
    ldl_lock_dispose(&t.lock);
    kill(ch.pid, SIGCONT);
    st_send(ch.to_child, 'w');
    rc = st_join(&ch, 15000);
    ST_CHECK(rc == 0, "paused holder: late write rejected, LOST reported, successor untouched (exit %d)", rc);
    ST_CHECK(fenced_stats_get(res_path, &st) == 0, "stats");
    ST_CHECK(st.writes == 1 && st.value == 1 && st.rejected == 1, "resource: writes %lld value %lld rejected %lld",
             (long long)st.writes, (long long)st.value, (long long)st.rejected);
    ST_CHECK(fenced_log(res_path, log, 4, &n) == 0 && n == 1 && log[0] == fb, "only B's fence in the log");
    unlink(res_path);
}

/* ------------------------------------------------------------ 2. SIGKILL */
static int killed_holder(void *arg, int in, int out)
{
    PGconn *c = pgt_connect(TIMEOUTS);
    ldl_pg pg = {0};
    pgt_lock t;
    (void)arg; (void)in;
    if (ldl_pg_init(&pg, c, TABLE) != LDL_OK || pgt_lock_init(&t, &pg, "killed", 1000, 300) != 0) return 100;
    if (ldl_lock_acquire(&t.lock) != 1) return 101;
    st_send(out, 'g');
    for (;;) {                              /* heartbeat until killed */
        if (ldl_lock_poll(&t.lock) != 1) return 102;
        st_sleep_ms(10);
    }
}

static void test_sigkill(PGconn *c, ldl_pg *pg)
{
    st_child ch;
    pgt_lock t;
    int64_t fk, fn = 0;
    uint64_t t_kill, waited;
    int rc, got = 0;

    ST_CHECK(st_fork(&ch, killed_holder, NULL) == 0, "fork");
    rc = st_recv(ch.from_child, 10000);
    ST_CHECK(rc == 'g', "holder got the lock (%d)", rc);
    st_sleep_ms(700);                      /* it renewed at least twice */
    fk = row_token(c, "killed");
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM " TABLE " WHERE key = 'killed' AND expires_at > clock_timestamp() "
                        "+ interval '450 milliseconds'", NULL) == 1, "the heartbeat pushed expires_at forward");
    kill(ch.pid, SIGKILL);
    t_kill = st_now_ms();
    rc = st_join(&ch, 5000);
    ST_CHECK(rc == -1, "holder died by the signal (%d)", rc);
    ST_CHECK(pgt_lock_init(&t, pg, "killed", 1000, 300) == 0, "lock");
    rc = ldl_lock_acquire(&t.lock);
    ST_CHECK(rc == 0, "the killed holder's lease is still live right after the kill (%d)", rc);
    while (st_now_ms() - t_kill < 3000) {
        if (ldl_lock_acquire(&t.lock) == 1) { got = 1; break; }
        st_sleep_ms(20);
    }
    waited = st_now_ms() - t_kill;
    fn = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(got && fn > fk, "granted after the kill: %d token %lld (killed %lld)", got, (long long)fn, (long long)fk);
    /* the last renew was at most one heartbeat (300 ms) before the kill */
    ST_CHECK(waited >= 1000 - 300 - 50 && waited <= 1000 + 700, "lease freed %llu ms after the kill (TTL 1000)",
             (unsigned long long)waited);
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "release");
    ldl_lock_dispose(&t.lock);
}

/* ------------------------------------------------------------ 3. restart / crash */
static void test_restart(void)
{
    PGconn *c = pgt_connect(TIMEOUTS);
    ldl_pg pg = {0};
    pgt_lock t;
    int64_t t1, t2, t3 = 0;
    uint64_t t0;
    int rc, got = 0;

    ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "init: %s", ldl_pg_why(&pg));
    /* a TTL that outlives a crash + start even on a slow machine; nobody waits
       for it: dispose hands the lease back once the connection is reset */
    ST_CHECK(pgt_lock_init(&t, &pg, "restart", 10000, 3000) == 0, "lock");
    ST_CHECK(ldl_lock_acquire(&t.lock) == 1, "grant before restart");
    t1 = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "release before restart");

    ST_CHECK(pgt_ctl("restart") == 0, "pg_ctl restart");
    rc = ldl_lock_acquire(&t.lock);
    ST_CHECK(rc == 0 && ldl_lock_fencing_token(&t.lock) == 0, "acquire on the severed connection: no grant (%d)", rc);
    ST_CHECK(PQstatus(c) == CONNECTION_BAD, "libpq noticed: %s", ldl_pg_why(&pg));
    PQreset(c);
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "PQreset after restart");
    rc = ldl_lock_acquire(&t.lock);
    t2 = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(rc == 1 && t2 > t1, "grant after restart: %d token %lld (before %lld) %s", rc, (long long)t2,
             (long long)t1, ldl_pg_why(&pg));
    ST_CHECK(t2 == t1 + 1, "the row survived the restart: %lld then %lld", (long long)t1, (long long)t2);

    /* crash while HELD: WAL replay keeps the committed token; the lease is
       still there (until its TTL) and the next grant is higher */
    ST_CHECK(pgt_ctl("crash") == 0 && pgt_ctl("start") == 0, "crash + start");
    rc = ldl_lock_tick(&t.lock);
    ST_CHECK(rc == 0 && ldl_lock_state(&t.lock) == LDL_LOST && ldl_lock_reason(&t.lock) == LDL_REASON_STORE_ERROR,
             "renew over the dead connection: %d state %s reason %s", rc, ldl_state_name(ldl_lock_state(&t.lock)),
             ldl_reason_name(ldl_lock_reason(&t.lock)));
    PQreset(c);
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "PQreset after crash");
    ST_CHECK(row_token(c, "restart") == t2, "token %lld survived the crash", (long long)t2);
    ldl_lock_dispose(&t.lock);      /* hands t2 back over the reset connection */
    ST_CHECK(pgt_lock_init(&t, &pg, "restart", 10000, 3000) == 0, "lock 2");
    t0 = st_now_ms();
    while (st_now_ms() - t0 < 2000) {
        if (ldl_lock_acquire(&t.lock) == 1) { got = 1; break; }
        st_sleep_ms(20);
    }
    t3 = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(got && t3 > t2, "grant after crash (the lost lease was handed back): token %lld (before %lld)",
             (long long)t3, (long long)t2);
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "release after crash");
    ldl_lock_dispose(&t.lock);
    PQfinish(c);
}

/* ------------------------------------------------------------ 4. unreachable */
static void test_unreachable(void)
{
    PGconn *c = pgt_connect(TIMEOUTS), *h = pgt_connect(""), *c2;
    ldl_pg pg = {0}, pg2 = {0};
    pgt_lock t, u;
    int64_t f;
    uint64_t t0, dt;
    int rc;

    ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "init: %s", ldl_pg_why(&pg));

    /* a renew blocked behind another session's row lock: lock_timeout ends it */
    ST_CHECK(pgt_lock_init(&t, &pg, "blocked", 5000, 1000) == 0, "lock");
    ST_CHECK(ldl_lock_acquire(&t.lock) == 1, "grant");
    f = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(pgt_exec(h, "BEGIN") && pgt_exec(h, "SELECT * FROM " TABLE " WHERE key = 'blocked' FOR UPDATE"),
             "row locked by another session");
    t0 = st_now_ms();
    rc = ldl_lock_tick(&t.lock);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && ldl_lock_reason(&t.lock) == LDL_REASON_STORE_ERROR && t.lost_calls == 1,
             "blocked renew: %d reason %s", rc, ldl_reason_name(ldl_lock_reason(&t.lock)));
    ST_CHECK(dt >= 400 && dt < 2000, "blocked renew gave up after %llu ms (lock_timeout 500)", (unsigned long long)dt);
    ST_CHECK(PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE, "connection usable after the timeout");
    ST_CHECK(pgt_exec(h, "ROLLBACK"), "unlock row");
    rc = ldl_lock_release(&t.lock);
    ST_CHECK(rc == 1, "the lost lease is handed back once the row is free (%d)", rc);
    ST_CHECK(row_token(c, "blocked") == f, "token unchanged");
    ldl_lock_dispose(&t.lock);

    /* server stopped under a held lock */
    ST_CHECK(pgt_lock_init(&t, &pg, "stopped", 3000, 1000) == 0, "lock");
    ST_CHECK(ldl_lock_acquire(&t.lock) == 1, "grant");
    f = ldl_lock_fencing_token(&t.lock);
    ST_CHECK(pgt_ctl("stop") == 0, "pg_ctl stop");
    t0 = st_now_ms();
    rc = ldl_lock_tick(&t.lock);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && ldl_lock_state(&t.lock) == LDL_LOST && ldl_lock_reason(&t.lock) == LDL_REASON_STORE_ERROR,
             "renew with the server down: %d state %s reason %s", rc, ldl_state_name(ldl_lock_state(&t.lock)),
             ldl_reason_name(ldl_lock_reason(&t.lock)));
    ST_CHECK(t.lost_calls == 1 && t.lost_reason == LDL_REASON_STORE_ERROR, "on_lost(STORE_ERROR) once");
    ST_CHECK(dt < 2000, "renew failed in %llu ms", (unsigned long long)dt);
    rc = ldl_lock_release(&t.lock);
    ST_CHECK(rc == LDL_ESTORE, "release with the server down = %d (want LDL_ESTORE)", rc);

    ST_CHECK(pgt_lock_init(&u, &pg, "stopped", 3000, 1000) == 0, "lock u");
    t0 = st_now_ms();
    rc = ldl_lock_acquire(&u.lock);
    ST_CHECK(rc == 0 && ldl_lock_state(&u.lock) == LDL_IDLE, "acquire with the server down: %d", rc);
    PQreset(c);
    ST_CHECK(PQstatus(c) == CONNECTION_BAD, "reconnect refused while down");
    rc = ldl_lock_acquire(&u.lock);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0, "acquire after a failed reconnect: %d", rc);
    ST_CHECK(dt < 3000, "no grant, answered within the connect timeout: %llu ms", (unsigned long long)dt);
    c2 = pgt_connect(TIMEOUTS);
    rc = ldl_pg_init(&pg2, c2, TABLE);
    ST_CHECK(rc == LDL_ESTORE, "init on a connection that could not connect = %d", rc);

    /* back up: a fresh grant, higher than the lease that was cut off */
    ST_CHECK(pgt_ctl("start") == 0, "pg_ctl start");
    PQreset(c);
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "reconnected");
    t0 = st_now_ms();
    rc = 0;
    while (st_now_ms() - t0 < 5000) {
        rc = ldl_lock_acquire(&u.lock);
        if (rc == 1) break;
        st_sleep_ms(20);
    }
    ST_CHECK(rc == 1 && ldl_lock_fencing_token(&u.lock) > f, "grant after the server came back: token %lld (cut off %lld)",
             (long long)ldl_lock_fencing_token(&u.lock), (long long)f);
    ST_CHECK(ldl_lock_release(&u.lock) == 1, "release");
    ldl_lock_dispose(&u.lock);
    ldl_lock_dispose(&t.lock);
    PQfinish(c2);
    PQfinish(h);
    PQfinish(c);
}

int main(void)
{
    char dir[256];
    PGconn *c = pgt_connect("");
    ldl_pg pg = {0};
    uint64_t t0 = st_now_ms();

    ST_CHECK(PQstatus(c) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(c, "SET client_min_messages = warning");
    ST_CHECK(pgt_exec(c, "DROP TABLE IF EXISTS " TABLE), "fresh table");
    ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "init: %s", ldl_pg_why(&pg));
    ST_CHECK(st_tmpdir(dir, sizeof dir, "ldl-pg-faults") == 0, "tmpdir");
    snprintf(res_path, sizeof res_path, "%s/resource", dir);

    test_sigstop(c, &pg);
    fprintf(stderr, "faults: sigstop done at %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    test_sigkill(c, &pg);
    fprintf(stderr, "faults: sigkill done at %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    PQfinish(c);                 /* the next tests restart the server */
    test_restart();
    fprintf(stderr, "faults: restart done at %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    test_unreachable();
    fprintf(stderr, "faults: unreachable done at %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    rmdir(dir);
    return st_report();
}
