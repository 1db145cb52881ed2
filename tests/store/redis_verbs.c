/* tests/store/redis_verbs.c -- the Redis adapter's verbs and values (issue 24, "what the
 * suites do not yet see" and item 11), against a real redis-server this program starts
 * and, where a real one cannot misbehave, tests/store/redis_fake_node.py:
 *   live       _reconnect, _rebind and _drop on a LIVE link with requests in flight (the
 *              server paused by CLIENT PAUSE) and queued: each answers LDL_ESTORE at once,
 *              and the locks that come after get their OWN answers (token == the lease key)
 *   nonce      a node that replays reply #1 while two requests are in flight: the second is
 *              never a grant, the link is dropped (the nonce advances per call)
 *   values     MOVED as values (kind, slot, address) in both views, the on_error hook, a
 *              WRONGTYPE as LDL_REDIS_ERR_SERVER
 *   clock      stalled_ms and the call limit measured on the adapter's ldl_clock
 *   command    ldl_redis_command: a call bounded by call_ms against a paused server
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_fake.h"
#include "tests/store/redis_locks.h"

static rs_server g_srv;

static redisContext *nb_connect(int port)
{
    redisContext *c = redisConnectNonBlock("127.0.0.1", port);
    return c && !c->err ? c : NULL;
}

static void pump_for(ldl_redis_async *ra, ldl_lock *l, int n, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        int i;
        tick();
        ldl_redis_async_pump(ra);
        for (i = 0; i < n; i++) ldl_lock_poll(&l[i]);
        st_sleep_ms(2);
    }
}

static int pause_server(uint32_t ms)
{
    char t[16];
    redisContext *c = rs_connect(&g_srv, 2000);
    int ok;
    snprintf(t, sizeof t, "%u", (unsigned)ms);
    ok = c && rs_is(rs_cmd(c, "CLIENT", "PAUSE", t, NULL), "OK");
    if (c) redisFree(c);
    return ok;
}

/* the token the lease key of lock key k holds on the server (prefix "vb"), 0 when none */
static long long lease_of(const char *k)
{
    char name[64];
    redisContext *c = rs_connect(&g_srv, 2000);
    redisReply *r;
    long long v = 0;
    snprintf(name, sizeof name, "{vb:%s}:lease", k);
    r = c ? rs_cmd(c, "GET", name, NULL) : NULL;
    if (r && r->type == REDIS_REPLY_STRING) v = atoll(r->str);
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return v;
}

/* ------------------------------------------------------------ live */
#define LN 10
static void live_case(int how)       /* 0 reconnect, 1 rebind, 2 drop */
{
    static const char *const names[3] = { "reconnect", "rebind", "drop" };
    static ldl_redis_req reqs[4 * LN + 8];
    static ldl_lock a[LN], b[LN];
    static char ka[LN][16], kb[LN][16];
    ldl_redis_async ra;
    ldl_async_store as;
    redisContext *c = nb_connect(g_srv.port), *c2 = NULL;
    int i, rc = 0, pend = 0, held_a = 0, own = 0, held_b = 0, n = 0;
    ST_CHECK(c && ldl_redis_async_init(&ra, c, "vb", reqs, 4 * LN + 8) == LDL_OK, "init");
    as = ldl_redis_async_store(&ra);
    tick();
    pump_for(&ra, NULL, 0, 50);                          /* connected */
    ST_CHECK(pause_server(700), "CLIENT PAUSE");
    for (i = 0; i < LN; i++) {
        snprintf(ka[i], sizeof ka[i], "%s-a%d", names[how], i);
        snprintf(kb[i], sizeof kb[i], "%s-b%d", names[how], i);
        lock_async(&a[i], &as, ka[i], 5000);
        lock_async(&b[i], &as, kb[i], 5000);
        ldl_lock_acquire(&a[i]);
        if (i == LN / 2) pump_for(&ra, a, i + 1, 30);  /* the first half sent: in flight */
    }
    ST_CHECK(ldl_redis_async_stats(&ra)->live == LN, "%d requests live (in flight and queued)",
             (int)ldl_redis_async_stats(&ra)->live);
    if (how == 0) rc = ldl_redis_async_reconnect(&ra);
    else if (how == 1) { c2 = nb_connect(g_srv.port); rc = ldl_redis_async_rebind(&ra, c2); }
    else { n = ldl_redis_async_drop(&ra); rc = ldl_redis_async_reconnect(&ra); }
    for (i = 0; i < LN; i++) {                           /* answered at once: no pump between */
        pend += ldl_lock_poll(&a[i]) == LDL_EINPROGRESS;
        held_a += ldl_lock_state(&a[i]) == LDL_HELD;
    }
    ST_CHECK(rc == LDL_OK && pend == 0 && held_a == 0 && ldl_redis_async_stats(&ra)->live == 0,
             "%s: every queued and in-flight request answered LDL_ESTORE at once (%d pending, %d held, %d live)",
             names[how], pend, held_a, (int)ldl_redis_async_stats(&ra)->live);
    if (how == 2) ST_CHECK(n == LN, "drop answered %d of %d", n, LN);
    for (i = 0; i < LN; i++) ldl_lock_acquire(&b[i]);    /* new locks, new link */
    for (i = 0; i < 300 && held_b < LN; i++) {           /* the pause ends after 0.7 s */
        int j;
        pump_for(&ra, b, LN, 10);
        for (j = 0, held_b = 0; j < LN; j++) held_b += ldl_lock_state(&b[j]) == LDL_HELD;
    }
    held_b = 0;
    for (i = 0; i < LN; i++) {
        held_b += ldl_lock_state(&b[i]) == LDL_HELD;
        own += ldl_lock_state(&b[i]) == LDL_HELD && lease_of(kb[i]) == ldl_lock_fencing_token(&b[i]);
    }
    for (i = 0; i < LN; i++) held_a += ldl_lock_state(&a[i]) == LDL_HELD;
    printf("  live %s: %d requests live, all answered at once; after it %d of %d new locks held, %d with their "
           "own token, %d old ones held\n", names[how], LN, held_b, LN, own, held_a);
    ST_CHECK(held_b == LN && own == LN && held_a == 0, "%s: none matched to another lock's request", names[how]);
    for (i = 0; i < LN; i++) ldl_lock_release(&b[i]);
    pump_for(&ra, b, LN, 200);
    for (i = 0; i < LN; i++) { ldl_lock_dispose(&a[i]); ldl_lock_dispose(&b[i]); }
    redisFree(c);
    if (c2) redisFree(c2);
}

static void test_live(void)
{
    ldl_redis_req reqs[2];
    ldl_redis_async ra;
    redisContext *c = nb_connect(g_srv.port), *blocking = rs_connect(&g_srv, 1000);
    live_case(0);
    live_case(1);
    live_case(2);
    /* a bad rebind changes nothing */
    ST_CHECK(c && ldl_redis_async_init(&ra, c, "vb", reqs, 2) == LDL_OK, "init");
    ST_CHECK(ldl_redis_async_rebind(&ra, NULL) == LDL_EINVAL && ldl_redis_async_rebind(&ra, blocking) == LDL_EINVAL,
             "rebind refuses a NULL or blocking context");
    ST_CHECK(ra._r._c == c && ldl_redis_async_pump(&ra) >= 0, "and keeps the old link");
    redisFree(c);
    if (blocking) redisFree(blocking);
}

/* ------------------------------------------------------------ nonce */
static void test_nonce(void)
{
    static ldl_redis_req reqs[8];
    static ldl_lock l[2];
    rf_node f;
    ldl_redis_async ra;
    ldl_async_store as;
    redisContext *c;
    int neg = 0;
    uint64_t end;
    ST_CHECK(rf_start(&f, "replay", NULL) == 0, "fake node");
    c = nb_connect(f.port);
    ST_CHECK(c && ldl_redis_async_init(&ra, c, "vb", reqs, 8) == LDL_OK, "init");
    as = ldl_redis_async_store(&ra);
    tick();
    lock_async(&l[0], &as, "first", 5000);
    lock_async(&l[1], &as, "second", 5000);
    ldl_lock_acquire(&l[0]);
    ldl_lock_acquire(&l[1]);                              /* two in flight, in one write */
    end = st_now_ms() + 2000;
    while (st_now_ms() < end && !neg) {
        tick();
        neg = ldl_redis_async_pump(&ra) < 0;
        ldl_lock_poll(&l[0]);
        ldl_lock_poll(&l[1]);
        st_sleep_ms(2);
    }
    ldl_lock_poll(&l[0]);
    ldl_lock_poll(&l[1]);
    printf("  nonce: reply #1 replayed for request #2: first %s token %lld, second %s, link dropped %d (%s)\n",
           ldl_state_name(ldl_lock_state(&l[0])), (long long)ldl_lock_fencing_token(&l[0]),
           ldl_state_name(ldl_lock_state(&l[1])), neg, ldl_redis_async_why(&ra));
    ST_CHECK(ldl_lock_state(&l[0]) == LDL_HELD && ldl_lock_fencing_token(&l[0]) == 77, "the first request's own answer");
    ST_CHECK(ldl_lock_state(&l[1]) != LDL_HELD, "a replayed reply is never a grant: the nonce advances per call");
    ST_CHECK(neg && ldl_redis_async_last_error(&ra)->kind == LDL_REDIS_ERR_PROTOCOL, "the link was dropped (out of step)");
    ldl_lock_dispose(&l[0]);
    ldl_lock_dispose(&l[1]);
    redisFree(c);
    rf_stop(&f);
}

/* ------------------------------------------------------------ values */
static ldl_op *g_hook_op;
static ldl_redis_error g_hook_err;
static int g_hooks;
static void on_error(void *ctx, ldl_op *op, const ldl_redis_error *e)
{
    (void)ctx;
    g_hooks++;
    g_hook_op = op;
    g_hook_err = *e;
}

static void test_values(void)
{
    static ldl_redis_req reqs[4];
    rf_node f;
    ldl_redis r;
    ldl_redis_async ra;
    ldl_store s;
    ldl_async_store as;
    ldl_op op;
    redisContext *c, *nc;
    const ldl_redis_error *e;
    int64_t t = 0;
    int rc, k, got = 0;
    uint64_t end;
    ST_CHECK(rf_start(&f, "moved", NULL) == 0, "fake node");
    c = rs_connect_port(f.port, 1000);
    ST_CHECK(c && ldl_redis_init(&r, c, "vb") == LDL_OK, "init");
    s = ldl_redis_store(&r);
    rc = s.acquire(s.ctx, "k", 1000, &t);
    e = ldl_redis_last_error(&r);
    printf("  values (sync): %d kind %d slot %d addr %s why %s\n", rc, e->kind, e->slot, e->addr, ldl_redis_why(&r));
    ST_CHECK(rc == LDL_ESTORE && e->kind == LDL_REDIS_ERR_MOVED && e->slot == 3999 &&
             strcmp(e->addr, "127.0.0.1:7002") == 0, "MOVED as values (synchronous view)");
    nc = nb_connect(f.port);
    ST_CHECK(nc && ldl_redis_async_init(&ra, nc, "vb", reqs, 4) == LDL_OK, "async init");
    ldl_redis_async_on_error(&ra, on_error, NULL);
    as = ldl_redis_async_store(&ra);
    memset(&op, 0, sizeof op);
    ldl_op_begin(&op);
    ST_CHECK(as.acquire(as.ctx, &op, "k", 1000) == LDL_OK, "submitted");
    end = st_now_ms() + 2000;
    while (st_now_ms() < end && !(got = ldl_op_result(&op, &k, &t))) { ldl_redis_async_pump(&ra); st_sleep_ms(2); }
    printf("  values (async): answered %d rc %d; hook %d op %d kind %d slot %d addr %s\n", got, k, g_hooks,
           g_hook_op == &op, g_hook_err.kind, g_hook_err.slot, g_hook_err.addr);
    ST_CHECK(got && k == LDL_ESTORE && g_hooks == 1 && g_hook_op == &op && g_hook_err.kind == LDL_REDIS_ERR_MOVED &&
             g_hook_err.slot == 3999 && strcmp(g_hook_err.addr, "127.0.0.1:7002") == 0,
             "the on_error hook sees THIS request's MOVED as values");
    ST_CHECK(ldl_redis_async_last_error(&ra)->kind == LDL_REDIS_ERR_MOVED, "and so does last_error");
    redisFree(nc);
    redisFree(c);
    rf_stop(&f);
    /* a plain error reply on a real server: SERVER, no slot */
    c = rs_connect(&g_srv, 1000);
    rs_is(rs_cmd(c, "SET", "{vb:wrong}:lease", "x", NULL), "OK");
    rs_is(rs_cmd(c, "HSET", "{vb:wrong}:fence", "a", "b", NULL), "1");
    rs_int(rs_cmd(c, "DEL", "{vb:wrong}:lease", NULL), 0);
    ST_CHECK(ldl_redis_init(&r, c, "vb") == LDL_OK, "init");
    s = ldl_redis_store(&r);
    rc = s.acquire(s.ctx, "wrong", 1000, &t);
    e = ldl_redis_last_error(&r);
    ST_CHECK(rc == LDL_ESTORE && e->kind == LDL_REDIS_ERR_SERVER && e->slot == -1 && strstr(ldl_redis_why(&r), "WRONGTYPE"),
             "WRONGTYPE: kind SERVER (%d), why %s", e->kind, ldl_redis_why(&r));
    rc = s.acquire(s.ctx, "fine", 1000, &t);
    ST_CHECK(rc == 1 && ldl_redis_last_error(&r)->kind == LDL_REDIS_ERR_NONE, "a call that succeeds clears the kind");
    s.release(s.ctx, "fine", t);
    redisFree(c);
}

/* ------------------------------------------------------------ clock, command */
static uint64_t g_fake_ms;
static uint64_t fake_clock(void *ctx) { (void)ctx; return g_fake_ms; }

static void test_clock_command(void)
{
    static ldl_redis_req reqs[4];
    ldl_redis_async ra;
    ldl_redis r;
    ldl_clock clk;
    ldl_op op;
    redisContext *nc = nb_connect(g_srv.port), *c = rs_connect(&g_srv, 5000);
    redisReply *rep = NULL;
    const char *argv[1] = { "PING" };
    size_t lens[1] = { 4 };
    ldl_redis_limits lim;
    uint64_t t0, took;
    uint32_t stalled;
    int rc;
    clk.now_ms = fake_clock;
    clk.ctx = NULL;
    g_fake_ms = 1000;
    ST_CHECK(nc && ldl_redis_async_init(&ra, nc, "vb", reqs, 4) == LDL_OK, "init");
    ldl_redis_async_set_clock(&ra, clk);
    ldl_redis_async_pump(&ra);
    ST_CHECK(pause_server(800), "CLIENT PAUSE");
    memset(&op, 0, sizeof op);
    ldl_op_begin(&op);
    ldl_redis_async_store(&ra).acquire(&ra, &op, "clocked", 1000);
    ldl_redis_async_pump(&ra);
    g_fake_ms += 12345;
    stalled = ldl_redis_async_stalled_ms(&ra);
    printf("  clock: stalled_ms %u after the adapter's clock moved 12345 ms\n", (unsigned)stalled);
    ST_CHECK(stalled == 12345, "stalled_ms is measured on the adapter's ldl_clock");
    ldl_redis_async_drop(&ra);
    redisFree(nc);

    /* ldl_redis_command: one call bounded by call_ms against a server that does not answer */
    st_sleep_ms(900);
    ST_CHECK(c && ldl_redis_init(&r, c, "vb") == LDL_OK, "init");
    memset(&lim, 0, sizeof lim);
    lim.call_ms = 300;
    ST_CHECK(ldl_redis_command(&r, &lim, 1, argv, lens, &rep) == LDL_OK && rep && rep->type == REDIS_REPLY_STATUS,
             "PING through the bounded exchange");
    if (rep) freeReplyObject(rep);
    ST_CHECK(pause_server(1200), "CLIENT PAUSE");
    t0 = st_now_ms();
    rc = ldl_redis_command(&r, &lim, 1, argv, lens, &rep);
    took = st_now_ms() - t0;
    printf("  command: PING to a paused server with call_ms 300: %d after %llu ms (%s)\n", rc,
           (unsigned long long)took, ldl_redis_why(&r));
    ST_CHECK(rc == LDL_ESTORE && !rep && c->err && ldl_redis_last_error(&r)->kind == LDL_REDIS_ERR_IO,
             "given up at the call limit, the context marked failed");
    ST_CHECK(took < 1150, "before the pause ended (%llu ms)", (unsigned long long)took);
    ST_CHECK(ldl_redis_command(&r, &lim, 0, argv, lens, &rep) == LDL_EINVAL, "argc 0 refused");
    redisFree(c);
    st_sleep_ms(1000);
}

int main(void)
{
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "verbs", 0) != 0) { ST_CHECK(0, "redis-server did not start"); return st_report(); }
    st_case("live", RS_CASE_S);
    test_live();
    st_case("nonce", RS_CASE_S);
    test_nonce();
    st_case("values", RS_CASE_S);
    test_values();
    st_case("clock_command", RS_CASE_S);
    test_clock_command();
    rs_stop(&g_srv);
    return st_report();
}
