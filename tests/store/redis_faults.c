/* tests/store/redis_faults.c -- the Redis adapter under contention and faults, against real
 * redis-server processes this program starts, pauses, kills and restarts itself:
 *   contention   NPROC processes x NROUND fenced read-modify-writes over one key
 *   SIGSTOP      a holder paused past its TTL: taken over with a higher fence, its late write
 *                rejected, its lock LOST (LEASE_EXPIRED or HEARTBEAT_FAILED)
 *   SIGKILL      a holder killed: the lease frees only after its TTL, the next token is higher
 *   restart      redis-server crashed (SIGKILL) and restarted with appendonly yes +
 *                appendfsync always between grants: tokens keep rising, EVALSHA falls back to
 *                EVAL on the emptied script cache; the same crash without AOF makes tokens go
 *                back, which is exactly what ldl_redis_check_durability warns about
 *   server down  a hung server (SIGSTOP) and a dead one: acquire answers no grant within the
 *                context's timeout, renew makes the lock LOST with STORE_ERROR, nothing hangs
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"

#define NPROC  4
#define NROUND 50

static rs_server g_srv;
static char g_res[400];         /* the fenced resource file */

/* ------------------------------------------------------------ a lock on its own connection */
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

typedef struct client {
    redisContext *c;
    ldl_redis r;
    ldl_store s;
    ldl_lock lk;
    int lost_calls;
    int lost_reason;
} client;

static void on_lost(void *user, int reason)
{
    client *cl = (client *)user;
    cl->lost_calls++;
    cl->lost_reason = reason;
}

static int client_open(client *cl, const char *key, uint32_t ttl_ms, uint32_t timeout_ms)
{
    ldl_lock_desc d;
    memset(cl, 0, sizeof *cl);
    cl->c = rs_connect(&g_srv, timeout_ms);
    if (!cl->c) return -1;
    if (ldl_redis_init(&cl->r, cl->c, NULL) != LDL_OK) return -1;
    cl->s = ldl_redis_store(&cl->r);
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = key;
    d.ttl_ms = ttl_ms;
    d.store = &cl->s;
    d.on_lost = on_lost;
    d.user = cl;
    return ldl_lock_init(&cl->lk, &d) == LDL_OK ? 0 : -1;
}

static void client_close(client *cl)
{
    ldl_lock_dispose(&cl->lk);
    if (cl->c) redisFree(cl->c);
    cl->c = NULL;
}

/* acquire, retrying every few ms until granted or the deadline; 1 granted */
static int acquire_within(client *cl, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    for (;;) {
        if (ldl_lock_acquire(&cl->lk) == 1) return 1;
        if (st_now_ms() >= end) return 0;
        st_sleep_ms(2);
    }
}

/* ------------------------------------------------------------ contention */
static int contention_worker(void *arg, int in, int out)
{
    client cl;
    int i, bad = 0;
    (void)arg; (void)in; (void)out;
    if (client_open(&cl, "contended", 2000, 2000) != 0) return 100;
    for (i = 0; i < NROUND; i++) {
        int64_t f, v;
        if (!acquire_within(&cl, 5000)) { bad |= 1; break; }
        f = ldl_lock_fencing_token(&cl.lk);
        fenced_enter(g_res);
        if (fenced_read(g_res, f, &v) == 1) {
            st_sleep_ms(1);                 /* widen the window a broken lock would lose in */
            if (fenced_write(g_res, f, v + 1) == 1 && ldl_lock_poll(&cl.lk) == 1)
                fenced_completed(g_res);
            else
                bad |= 2;
        } else {
            bad |= 4;
        }
        fenced_leave(g_res);
        if (ldl_lock_release(&cl.lk) != 1) bad |= 8;
    }
    client_close(&cl);
    return bad;
}

static void test_contention(void)
{
    st_child ch[NPROC];
    fenced_stats st;
    static int64_t log[NPROC * NROUND + 8];
    size_t n = 0;
    int i;
    uint64_t t0 = st_now_ms();

    ST_CHECK(fenced_create(g_res) == 0, "%s", "fenced_create");
    for (i = 0; i < NPROC; i++)
        ST_CHECK(st_fork(&ch[i], contention_worker, NULL) == 0, "fork worker %d", i);
    for (i = 0; i < NPROC; i++) {
        int rc = st_join(&ch[i], 60000);
        ST_CHECK(rc == 0, "contention worker %d exit %d", i, rc);
    }
    ST_CHECK(fenced_stats_get(g_res, &st) == 0, "%s", "stats");
    ST_CHECK(fenced_log(g_res, log, sizeof log / sizeof log[0], &n) == 0, "%s", "log");
    ST_CHECK(st.completed == NPROC * NROUND, "completed %lld, want %d", (long long)st.completed, NPROC * NROUND);
    ST_CHECK(st.value == st.completed && st.writes == st.completed,
             "value %lld writes %lld completed %lld must agree", (long long)st.value,
             (long long)st.writes, (long long)st.completed);
    ST_CHECK(st.rejected == 0, "rejected %lld stale operations under plain contention", (long long)st.rejected);
    ST_CHECK(st.max_inside == 1, "max inside at once %lld, want 1", (long long)st.max_inside);
    ST_CHECK(n == (size_t)st.writes && fenced_log_increasing(log, n), "%s",
             "accepted write fences not strictly increasing");
    fprintf(stderr, "contention: %d x %d rounds, %llu ms, last fence %lld\n", NPROC, NROUND,
            (unsigned long long)(st_now_ms() - t0), (long long)st.last_write);
}

/* ------------------------------------------------------------ SIGSTOP */
#define PAUSE_TTL 300

static int paused_worker(void *arg, int in, int out)
{
    client cl;
    int64_t f, v;
    int bad = 0, c;
    (void)arg;
    if (client_open(&cl, "paused", PAUSE_TTL, 2000) != 0) return 100;
    if (!acquire_within(&cl, 5000)) return 101;
    f = ldl_lock_fencing_token(&cl.lk);
    if (fenced_read(g_res, f, &v) != 1) return 102;
    st_send(out, 'r');
    /* hold it, heartbeating, until told to write (the parent pauses us meanwhile) */
    for (;;) {
        c = st_recv(in, 10);
        if (c == 'g') break;
        if (c != -1) return 103;
        ldl_lock_poll(&cl.lk);
    }
    /* the late write of a holder that did not check: the fence must refuse it */
    if (fenced_write(g_res, f, v + 1) != 0) bad |= 1;
    ldl_lock_poll(&cl.lk);
    if (ldl_lock_state(&cl.lk) != LDL_LOST) bad |= 2;
    if (ldl_lock_reason(&cl.lk) != LDL_REASON_LEASE_EXPIRED &&
        ldl_lock_reason(&cl.lk) != LDL_REASON_HEARTBEAT_FAILED) bad |= 4;
    if (cl.lost_calls != 1) bad |= 8;
    fprintf(stderr, "paused holder: fence %lld, late write refused, state %s, reason %s\n", (long long)f,
            ldl_state_name(ldl_lock_state(&cl.lk)), ldl_reason_name(ldl_lock_reason(&cl.lk)));
    if (ldl_lock_release(&cl.lk) != 0) bad |= 16;   /* the store must refuse the stale token */
    client_close(&cl);
    return bad;
}

static void test_sigstop(void)
{
    st_child ch;
    client me;
    fenced_stats st;
    int64_t f1, f2, v = -1;
    int rc;

    ST_CHECK(fenced_create(g_res) == 0, "%s", "fenced_create");
    ST_CHECK(client_open(&me, "paused", PAUSE_TTL, 2000) == 0, "%s", "open");
    ST_CHECK(st_fork(&ch, paused_worker, NULL) == 0, "%s", "fork");
    ST_CHECK(st_recv(ch.from_child, 5000) == 'r', "%s", "holder ready");
    fenced_stats_get(g_res, &st);
    f1 = st.high;
    /* while it heartbeats, two TTLs pass and nobody else gets the lock */
    st_sleep_ms(2 * PAUSE_TTL);
    ST_CHECK(ldl_lock_acquire(&me.lk) == 0, "%s", "lease lapsed although its holder heartbeats");

    kill(ch.pid, SIGSTOP);
    st_sleep_ms(PAUSE_TTL + PAUSE_TTL / 2);
    rc = ldl_lock_acquire(&me.lk);
    f2 = ldl_lock_fencing_token(&me.lk);
    ST_CHECK(rc == 1 && f2 > f1, "takeover from the paused holder = %d, fence %lld after %lld", rc,
             (long long)f2, (long long)f1);
    ST_CHECK(fenced_read(g_res, f2, &v) == 1 && fenced_write(g_res, f2, v + 1) == 1, "%s",
             "new holder's write accepted");
    st_send(ch.to_child, 'g');
    kill(ch.pid, SIGCONT);
    rc = st_join(&ch, 10000);
    ST_CHECK(rc == 0, "paused holder's checks failed: bits %d (1 late write accepted, 2 not LOST, "
             "4 wrong reason, 8 on_lost count, 16 stale release answered)", rc);
    fenced_stats_get(g_res, &st);
    ST_CHECK(st.writes == 1 && st.last_write == f2 && st.rejected == 1,
             "resource: writes %lld last %lld rejected %lld", (long long)st.writes,
             (long long)st.last_write, (long long)st.rejected);
    ST_CHECK(ldl_lock_tick(&me.lk) == 1, "%s", "new holder still holds after the old one woke");
    ST_CHECK(ldl_lock_release(&me.lk) == 1, "%s", "new holder releases");
    client_close(&me);
}

/* ------------------------------------------------------------ SIGKILL */
#define KILL_TTL 400

static int killed_worker(void *arg, int in, int out)
{
    client cl;
    int64_t v;
    (void)arg; (void)in;
    if (client_open(&cl, "killed", KILL_TTL, 2000) != 0) return 100;
    if (!acquire_within(&cl, 5000)) return 101;
    if (fenced_read(g_res, ldl_lock_fencing_token(&cl.lk), &v) != 1) return 102;
    st_send(out, 'r');
    for (;;) { ldl_lock_poll(&cl.lk); st_sleep_ms(5); }   /* heartbeat until killed */
}

static void test_sigkill(void)
{
    st_child ch;
    client me;
    fenced_stats st;
    uint64_t t0, dt;
    int64_t f1, f2;
    int rc;

    ST_CHECK(fenced_create(g_res) == 0, "%s", "fenced_create");
    ST_CHECK(client_open(&me, "killed", KILL_TTL, 2000) == 0, "%s", "open");
    ST_CHECK(st_fork(&ch, killed_worker, NULL) == 0, "%s", "fork");
    ST_CHECK(st_recv(ch.from_child, 5000) == 'r', "%s", "holder ready");
    fenced_stats_get(g_res, &st);
    f1 = st.high;
    st_sleep_ms(KILL_TTL + KILL_TTL / 2);
    ST_CHECK(ldl_lock_acquire(&me.lk) == 0, "%s", "lease lapsed although its holder heartbeats");
    kill(ch.pid, SIGKILL);
    t0 = st_now_ms();
    rc = st_join(&ch, 5000);
    ST_CHECK(rc == -1, "killed holder exit %d", rc);
    ST_CHECK(ldl_lock_acquire(&me.lk) == 0, "%s", "lease freed at once by a SIGKILL");
    rc = acquire_within(&me, 3 * KILL_TTL);
    dt = st_now_ms() - t0;
    f2 = ldl_lock_fencing_token(&me.lk);
    ST_CHECK(rc == 1 && f2 > f1, "after the TTL: %d fence %lld after %lld", rc, (long long)f2, (long long)f1);
    /* the last renew was at most one heartbeat (ttl/3) before the kill */
    ST_CHECK(dt >= KILL_TTL / 2 && dt <= KILL_TTL + 250, "lease freed %llu ms after the kill, want "
             "[%d, %d]", (unsigned long long)dt, KILL_TTL / 2, KILL_TTL + 250);
    ST_CHECK(ldl_lock_release(&me.lk) == 1, "%s", "release");
    client_close(&me);
    fprintf(stderr, "sigkill: lease freed %llu ms after the kill (ttl %d)\n", (unsigned long long)dt, KILL_TTL);
}

/* ------------------------------------------------------------ restart */

/* three grant/release cycles on `key`; answers the last token (0 on failure) */
static int64_t grants(ldl_store *s, const char *key, int n)
{
    int64_t t = 0;
    int i;
    for (i = 0; i < n; i++) {
        if (s->acquire(s->ctx, key, 5000, &t) != 1) return 0;
        if (s->release(s->ctx, key, t) != 1) return 0;
    }
    return t;
}

static void test_restart(void)
{
    rs_server aof, vol;
    redisContext *c;
    ldl_redis r;
    ldl_store s;
    char why[256];
    int64_t prev, t;
    int round;

    /* durable: appendonly yes + appendfsync always, crashed with SIGKILL */
    ST_CHECK(rs_start(&aof, "redis-aof", 1) == 0, "%s", "start AOF server");
    c = rs_connect(&aof, 1000);
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) { rs_stop(&aof); return; }
    ldl_redis_init(&r, c, NULL);
    s = ldl_redis_store(&r);
    ST_CHECK(ldl_redis_check_durability(&r, why, sizeof why) == 1, "durability check on AOF: %s", why);
    prev = grants(&s, "restart", 3);
    ST_CHECK(prev == 3, "tokens before restart: %lld", (long long)prev);
    for (round = 0; round < 2; round++) {
        int rc;
        ST_CHECK(s.acquire(s.ctx, "restart", 5000, &t) == 1 && t > prev, "%s", "grant before crash");
        prev = t;
        ST_CHECK(rs_restart(&aof) == 0, "%s", "restart after SIGKILL");
        rc = s.renew(s.ctx, "restart", t, 5000);
        ST_CHECK(rc < 0, "renew on the connection the crash cut = %d, want negative", rc);
        ST_CHECK(rs_reconnect(c, 1000) == REDIS_OK, "%s", "reconnect");
        ST_CHECK(rs_cmd_calls(c, "eval") <= 0, "%s", "fresh server already ran EVAL");
        /* the lease was persisted too: the holder's renew still works after the restart */
        ST_CHECK(s.renew(s.ctx, "restart", t, 5000) == 1, "%s", "renew after restart (lease in the AOF)");
        ST_CHECK(rs_cmd_calls(c, "eval") == 1, "EVAL fallback count after restart %ld, want 1", rs_cmd_calls(c, "eval"));
        ST_CHECK(s.release(s.ctx, "restart", t) == 1, "%s", "release after restart");
        t = grants(&s, "restart", 2);
        ST_CHECK(t == prev + 2, "tokens after restart %d: %lld, want %lld", round, (long long)t,
                 (long long)(prev + 2));
        prev = t;
    }
    redisFree(c);
    rs_stop(&aof);

    /* the control: no AOF, no snapshots. The check says so, and a crash makes tokens repeat */
    ST_CHECK(rs_start(&vol, "redis-vol", 0) == 0, "%s", "start volatile server");
    c = rs_connect(&vol, 1000);
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) { rs_stop(&vol); return; }
    ldl_redis_init(&r, c, NULL);
    s = ldl_redis_store(&r);
    ST_CHECK(ldl_redis_check_durability(&r, why, sizeof why) == 0, "durability check without AOF: %s", why);
    prev = grants(&s, "restart", 3);
    ST_CHECK(rs_restart(&vol) == 0 && rs_reconnect(c, 1000) == REDIS_OK, "%s", "restart volatile");
    t = grants(&s, "restart", 1);
    ST_CHECK(prev == 3 && t == 1, "without AOF the fence restarts (3 then %lld): the documented limit",
             (long long)t);
    redisFree(c);
    rs_stop(&vol);
}

/* ------------------------------------------------------------ server down */
#define DOWN_TIMEOUT 300

static void test_server_down(void)
{
    client held, other;
    uint64_t t0, dt;
    int rc;

    ST_CHECK(client_open(&held, "down", 3000, DOWN_TIMEOUT) == 0, "%s", "open held");
    ST_CHECK(client_open(&other, "down2", 3000, DOWN_TIMEOUT) == 0, "%s", "open other");
    ST_CHECK(ldl_lock_acquire(&held.lk) == 1, "%s", "acquire before the outage");

    /* hung server: every call waits for the command timeout, no longer */
    kill(g_srv.pid, SIGSTOP);
    t0 = st_now_ms();
    rc = ldl_lock_acquire(&other.lk);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && ldl_lock_state(&other.lk) == LDL_IDLE, "acquire on a hung server = %d", rc);
    ST_CHECK(dt >= DOWN_TIMEOUT - 50 && dt <= DOWN_TIMEOUT + 250, "hung acquire took %llu ms (timeout %d)",
             (unsigned long long)dt, DOWN_TIMEOUT);
    t0 = st_now_ms();
    rc = ldl_lock_tick(&held.lk);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && ldl_lock_state(&held.lk) == LDL_LOST, "tick on a hung server = %d", rc);
    ST_CHECK(ldl_lock_reason(&held.lk) == LDL_REASON_STORE_ERROR && held.lost_calls == 1 &&
             held.lost_reason == LDL_REASON_STORE_ERROR, "reason %s, on_lost %d",
             ldl_reason_name(ldl_lock_reason(&held.lk)), held.lost_calls);
    ST_CHECK(dt <= DOWN_TIMEOUT + 250, "hung renew took %llu ms", (unsigned long long)dt);
    t0 = st_now_ms();
    rc = ldl_lock_release(&held.lk);   /* the context is marked failed: answers at once */
    dt = st_now_ms() - t0;
    ST_CHECK(rc == LDL_ESTORE && ldl_lock_state(&held.lk) == LDL_RELEASED,
             "release after the failure = %d state %d", rc, ldl_lock_state(&held.lk));
    ST_CHECK(dt <= 50, "release on a failed context took %llu ms", (unsigned long long)dt);
    kill(g_srv.pid, SIGCONT);

    /* dead server: refused at once */
    rs_kill(&g_srv, SIGKILL);
    ST_CHECK(rs_reconnect(other.c, DOWN_TIMEOUT) != REDIS_OK, "%s", "reconnect to a dead server must fail");
    t0 = st_now_ms();
    rc = ldl_lock_acquire(&other.lk);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && dt <= DOWN_TIMEOUT + 250, "acquire on a dead server = %d in %llu ms", rc,
             (unsigned long long)dt);
    {
        redisContext *c = rs_connect(&g_srv, DOWN_TIMEOUT);
        ST_CHECK(c == NULL, "%s", "connect to a dead server succeeded");
        if (c) redisFree(c);
    }
    /* a lock that holds when the server dies: STORE_ERROR on its next heartbeat */
    ST_CHECK(rs_restart(&g_srv) == 0, "%s", "restart");
    ST_CHECK(rs_reconnect(other.c, DOWN_TIMEOUT) == REDIS_OK, "%s", "reconnect");
    ST_CHECK(ldl_lock_acquire(&other.lk) == 1, "%s", "acquire after restart");
    rs_kill(&g_srv, SIGKILL);
    t0 = st_now_ms();
    rc = ldl_lock_tick(&other.lk);
    dt = st_now_ms() - t0;
    ST_CHECK(rc == 0 && ldl_lock_reason(&other.lk) == LDL_REASON_STORE_ERROR && dt <= DOWN_TIMEOUT + 250,
             "tick on a dead server = %d reason %s in %llu ms", rc,
             ldl_reason_name(ldl_lock_reason(&other.lk)), (unsigned long long)dt);
    client_close(&held);
    client_close(&other);
}

int main(void)
{
    uint64_t t0 = st_now_ms(), t;
    char dir[300];
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "redis-faults", 0) != 0) {
        ST_CHECK(0, "%s", "redis-server did not start");
        return st_report();
    }
    snprintf(dir, sizeof dir, "%s", g_srv.dir);
    snprintf(g_res, sizeof g_res, "%s/fenced.bin", dir);

    st_case("contention", RS_CASE_S);
    t = st_now_ms(); test_contention(); fprintf(stderr, "  contention %llu ms\n", (unsigned long long)(st_now_ms() - t));
    st_case("sigstop", RS_CASE_S);
    t = st_now_ms(); test_sigstop();    fprintf(stderr, "  sigstop %llu ms\n", (unsigned long long)(st_now_ms() - t));
    st_case("sigkill", RS_CASE_S);
    t = st_now_ms(); test_sigkill();    fprintf(stderr, "  sigkill %llu ms\n", (unsigned long long)(st_now_ms() - t));
    st_case("restart", RS_CASE_S);
    t = st_now_ms(); test_restart();    fprintf(stderr, "  restart %llu ms\n", (unsigned long long)(st_now_ms() - t));
    st_case("server_down", RS_CASE_S);
    t = st_now_ms(); test_server_down(); fprintf(stderr, "  server down %llu ms\n", (unsigned long long)(st_now_ms() - t));

    rs_stop(&g_srv);
    fprintf(stderr, "redis_faults: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
