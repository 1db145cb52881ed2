/* tests/store/redis_async.c -- the Redis adapter's non-blocking view (ldl_redis_async) through
 * the lock (desc.async_store), against real redis-server processes this program starts:
 *   many       10,000 locks on one connection: acquire all, hold through >= 3 heartbeats
 *              with every lease renewed, release all, every key free at the end
 *   sigstop    the server frozen 3 s with 1,000 leases held: pumps and polls stay short (max
 *              printed), every lease LOST with LEASE_EXPIRED at its deadline by the lock's clock,
 *              late grants handed back after SIGCONT, every key free again
 *   hostile    a TCP server answering wrong types, wrong nonces, extra / missing replies,
 *              garbage, "*2147483647": the link fails cleanly, no grant, no crash (ASan)
 *   flush      SCRIPT FLUSH with a pipeline in flight: every request still answered right
 *   restart    SIGKILL + restart (AOF) mid-flight: every live request fails, reconnect,
 *              tokens keep rising, nothing hangs
 *   contention 4 processes x 250 locks, non-blocking, fenced resources
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"

static rs_server g_srv;

/* ------------------------------------------------------------ a frame clock for the locks */
static uint64_t g_now;                       /* read once per frame */
static uint64_t frame_clock(void *ctx) { (void)ctx; return g_now; }
static void tick_clock(void) { g_now = st_now_ms(); }

static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

typedef struct lost_rec { int calls; int reason; uint64_t at; } lost_rec;
static void on_lost(void *user, int reason)
{
    lost_rec *r = (lost_rec *)user;
    r->calls++;
    r->reason = reason;
    r->at = g_now;
}

static int lock_init(ldl_lock *lk, const ldl_async_store *as, const char *key, uint32_t ttl, lost_rec *lr)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = key;
    d.ttl_ms = ttl;
    d.async_store = as;
    d.clock.now_ms = frame_clock;
    d.on_lost = lr ? on_lost : NULL;
    d.user = lr;
    return ldl_lock_init(lk, &d);
}

static redisContext *connect_nb(int port)
{
    redisContext *c = redisConnectNonBlock("127.0.0.1", port);
    if (c && c->err) { redisFree(c); return NULL; }
    return c;
}

/* pump until the adapter has nothing live (or ms pass); answers the last pump result */
static int drain(ldl_redis_async *ra, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    int rc = 0;
    do {
        rc = ldl_redis_async_pump(ra);
        if (rc < 0) return rc;
        if (ldl_redis_async_stats(ra)->live == 0) return rc;
        st_sleep_ms(1);
    } while (st_now_ms() < end);
    return rc;
}

static long count_keys(redisContext *admin, const char *pattern)
{
    redisReply *r = rs_cmd(admin, "KEYS", pattern, NULL);
    long n = -1;
    if (r && r->type == REDIS_REPLY_ARRAY) n = (long)r->elements;
    if (r) freeReplyObject(r);
    return n;
}

/* ------------------------------------------------------------ many: 10,000 on one connection */
#define MANY 10000
static ldl_lock g_many[MANY];
static lost_rec g_many_lost[MANY];
static ldl_redis_req g_reqs[2 * MANY + 64];

static void test_many(redisContext *admin)
{
    redisContext *c = connect_nb(g_srv.port);
    ldl_redis_async ra;
    ldl_async_store as;
    static char keys[MANY][16];
    const ldl_redis_stats *st;
    uint64_t end, w0, hb_start, pump_max = 0, poll_max = 0;
    long evalsha0, evalsha1;
    int i, held, frames = 0, in_progress = 0, bad_poll = 0;
    uint64_t writes_hold, answered_hold;

    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) return;
    ST_CHECK(ldl_redis_async_init(&ra, c, "many", g_reqs, sizeof g_reqs / sizeof g_reqs[0]) == LDL_OK,
             "init: %s", ldl_redis_async_why(&ra));
    as = ldl_redis_async_store(&ra);
    st = ldl_redis_async_stats(&ra);
    tick_clock();
    for (i = 0; i < MANY; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        if (lock_init(&g_many[i], &as, keys[i], 1500, &g_many_lost[i]) != LDL_OK) { ST_CHECK(0, "lock init %d", i); return; }
    }
    /* acquire all: every submit queued, nothing answered yet */
    for (i = 0; i < MANY; i++) in_progress += ldl_lock_acquire(&g_many[i]) == LDL_EINPROGRESS;
    ST_CHECK(in_progress == MANY, "acquire answered LDL_EINPROGRESS %d times, want %d", in_progress, MANY);
    ST_CHECK(st->live == MANY, "live %lu after submitting", (unsigned long)st->live);
    end = st_now_ms() + 20000;
    held = 0;
    while (held < MANY && st_now_ms() < end) {
        ST_CHECK(ldl_redis_async_pump(&ra) >= 0, "pump: %s", ldl_redis_async_why(&ra));
        tick_clock();
        for (held = 0, i = 0; i < MANY; i++) held += ldl_lock_poll(&g_many[i]) == 1;
    }
    ST_CHECK(held == MANY, "held %d of %d", held, MANY);
    ST_CHECK(count_keys(admin, "{many:*}:lease") == MANY, "%s", "lease keys on the server");
    /* hold through >= 3 heartbeats (TTL 1500, heartbeat 500): 2.2 s of frames */
    evalsha0 = rs_cmd_calls(admin, "evalsha");
    w0 = st->write_calls;
    answered_hold = st->answered;
    hb_start = st_now_ms();
    end = hb_start + 2200;
    while (st_now_ms() < end) {
        uint64_t t0 = st_now_ms(), t1, t2;
        if (ldl_redis_async_pump(&ra) < 0) { ST_CHECK(0, "pump: %s", ldl_redis_async_why(&ra)); break; }
        t1 = st_now_ms();
        tick_clock();
        for (i = 0; i < MANY; i++) bad_poll += ldl_lock_poll(&g_many[i]) != 1;
        t2 = st_now_ms();
        if (t1 - t0 > pump_max) pump_max = t1 - t0;
        if (t2 - t1 > poll_max) poll_max = t2 - t1;
        frames++;
        st_sleep_ms(2);
    }
    evalsha1 = rs_cmd_calls(admin, "evalsha");
    writes_hold = st->write_calls - w0;
    answered_hold = st->answered - answered_hold;
    ST_CHECK(bad_poll == 0, "%d polls answered not held while holding", bad_poll);
    for (held = 0, i = 0; i < MANY; i++) held += ldl_lock_state(&g_many[i]) == LDL_HELD && g_many_lost[i].calls == 0;
    ST_CHECK(held == MANY, "%d of %d still held after 2.2 s (TTL 1.5 s: each renewed)", held, MANY);
    /* each lock renewed at least 3 times: the server ran >= 3 renews per lock */
    ST_CHECK(evalsha1 - evalsha0 >= 3L * MANY && answered_hold >= 3u * MANY,
             "renews in 2.2 s: %ld EVALSHA, %llu answers, want >= %d", evalsha1 - evalsha0,
             (unsigned long long)answered_hold, 3 * MANY);
    {   /* every lease's server TTL was pushed forward: PTTL of a sample near the full TTL */
        long long pttl = rs_int(rs_cmd(admin, "PTTL", "{many:k777}:lease", NULL), -9);
        ST_CHECK(pttl > 500 && pttl <= 1500, "PTTL of a held lease %lld", pttl);
    }
    fprintf(stderr, "many: %d locks, %d frames in 2.2 s; renew answers %llu; write() calls %llu "
            "(%.1f per heartbeat round of %d); max pump %llu ms, max %d polls %llu ms\n", MANY, frames,
            (unsigned long long)answered_hold, (unsigned long long)writes_hold,
            (double)writes_hold * (double)MANY / (double)(answered_hold ? answered_hold : 1), MANY,
            (unsigned long long)pump_max, MANY, (unsigned long long)poll_max);
    /* release all */
    {
        int pending = 0, ones = 0;
        for (i = 0; i < MANY; i++) pending += ldl_lock_release(&g_many[i]) == LDL_EINPROGRESS;
        ST_CHECK(pending == MANY, "release in progress %d", pending);
        ST_CHECK(drain(&ra, 20000) >= 0 && st->live == 0, "drain releases: %s", ldl_redis_async_why(&ra));
        for (i = 0; i < MANY; i++) ones += ldl_lock_release(&g_many[i]) == 1;
        ST_CHECK(ones == MANY, "release answered 1 for %d of %d", ones, MANY);
    }
    ST_CHECK(count_keys(admin, "{many:*}:lease") == 0, "%s", "lease keys left after release");
    ST_CHECK(count_keys(admin, "{many:*}:fence") == MANY, "%s", "fence keys");
    for (i = 0; i < MANY; i++) ldl_lock_dispose(&g_many[i]);
    ST_CHECK(st->refused_full == 0 && st->link_failures == 0, "%s", "no refusals, no link failure");
    redisFree(c);
}

/* ------------------------------------------------------------ sigstop */
#define FROZEN 1000
#define LATE   200
#define FTTL   1000
static ldl_lock g_fz[FROZEN + LATE];
static lost_rec g_fz_lost[FROZEN + LATE];
static uint64_t g_fz_deadline[FROZEN];

static void test_sigstop(redisContext *admin)
{
    redisContext *c = connect_nb(g_srv.port);
    ldl_redis_async ra;
    ldl_async_store as;
    static char keys[FROZEN + LATE][16];
    const ldl_redis_stats *st;
    uint64_t end, stop_at, pump_max = 0, poll_max = 0, prev = 0;
    int i, n, early = 0, late_loss = 0, wrong_reason = 0, not_lost = 0;

    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) return;
    ST_CHECK(ldl_redis_async_init(&ra, c, "frozen", g_reqs, sizeof g_reqs / sizeof g_reqs[0]) == LDL_OK, "%s", "init");
    as = ldl_redis_async_store(&ra);
    st = ldl_redis_async_stats(&ra);
    tick_clock();
    for (i = 0; i < FROZEN + LATE; i++) {
        snprintf(keys[i], sizeof keys[i], "%c%d", i < FROZEN ? 'h' : 'l', i);
        lock_init(&g_fz[i], &as, keys[i], FTTL, &g_fz_lost[i]);
    }
    for (i = 0; i < FROZEN; i++) ldl_lock_acquire(&g_fz[i]);
    end = st_now_ms() + 10000;
    for (n = 0; n < FROZEN && st_now_ms() < end; ) {
        ldl_redis_async_pump(&ra);
        tick_clock();
        for (n = 0, i = 0; i < FROZEN; i++) n += ldl_lock_poll(&g_fz[i]) == 1;
        st_sleep_ms(1);
    }
    ST_CHECK(n == FROZEN, "held %d of %d before the freeze", n, FROZEN);

    kill(g_srv.pid, SIGSTOP);
    stop_at = st_now_ms();
    /* acquires for other keys while frozen: they time out; their grants arrive after SIGCONT */
    tick_clock();
    for (i = FROZEN; i < FROZEN + LATE; i++) ldl_lock_acquire(&g_fz[i]);
    for (i = 0; i < FROZEN; i++) g_fz_deadline[i] = g_now + ldl_lock_valid_ms(&g_fz[i]);
    while (st_now_ms() - stop_at < 3000) {
        uint64_t t0 = st_now_ms(), t1, t2;
        ST_CHECK(ldl_redis_async_pump(&ra) >= 0, "pump while frozen: %s", ldl_redis_async_why(&ra));
        t1 = st_now_ms();
        tick_clock();
        for (i = 0; i < FROZEN + LATE; i++) {
            int was = ldl_lock_state(&g_fz[i]);
            int rc = ldl_lock_poll(&g_fz[i]);
            if (i >= FROZEN) continue;
            if (was == LDL_HELD && rc == 1) {
                uint32_t v = ldl_lock_valid_ms(&g_fz[i]);   /* an answer that slipped in moves it */
                if (v) g_fz_deadline[i] = g_now + v;
            } else if (was == LDL_HELD) {
                if (g_now < g_fz_deadline[i]) early++;              /* lost before its deadline */
                if (prev >= g_fz_deadline[i]) late_loss++;          /* a frame at/after it kept it */
                if (ldl_lock_reason(&g_fz[i]) != LDL_REASON_LEASE_EXPIRED) wrong_reason++;
            }
        }
        t2 = st_now_ms();
        if (t1 - t0 > pump_max) pump_max = t1 - t0;
        if (t2 - t1 > poll_max) poll_max = t2 - t1;
        prev = g_now;
        st_sleep_ms(1);
    }
    for (i = 0; i < FROZEN; i++)
        not_lost += !(ldl_lock_state(&g_fz[i]) == LDL_LOST && g_fz_lost[i].calls == 1 &&
                      g_fz_lost[i].reason == LDL_REASON_LEASE_EXPIRED);
    ST_CHECK(not_lost == 0, "%d of %d leases not LOST once with LEASE_EXPIRED", not_lost, FROZEN);
    ST_CHECK(early == 0 && late_loss == 0 && wrong_reason == 0,
             "losses: %d before the deadline, %d after a frame past it, %d other reasons", early,
             late_loss, wrong_reason);
    for (n = 0, i = FROZEN; i < FROZEN + LATE; i++)
        n += ldl_lock_state(&g_fz[i]) == LDL_IDLE && ldl_lock_fencing_token(&g_fz[i]) == 0 && !ldl_lock_pending(&g_fz[i]);
    ST_CHECK(n == LATE, "%d of %d acquires timed out to IDLE while frozen", n, LATE);
    ST_CHECK(st->live > 0, "%s", "requests waiting while frozen");
    fprintf(stderr, "sigstop: frozen 3 s with %d leases + %d acquires; live %lu; max pump %llu ms, "
            "max %d polls %llu ms; stalled %u ms\n", FROZEN, LATE, (unsigned long)st->live,
            (unsigned long long)pump_max, FROZEN + LATE, (unsigned long long)poll_max,
            (unsigned)ldl_redis_async_stalled_ms(&ra));
    ST_CHECK(ldl_redis_async_stalled_ms(&ra) >= 2000, "stall meter %u ms", (unsigned)ldl_redis_async_stalled_ms(&ra));

    /* the LOST leases are released (RELEASING) before the server comes back */
    for (i = 0; i < FROZEN; i++) ldl_lock_release(&g_fz[i]);
    kill(g_srv.pid, SIGCONT);
    ST_CHECK(drain(&ra, FTTL) >= 0 && st->live == 0, "late answers drained: live %lu (%s)",
             (unsigned long)st->live, ldl_redis_async_why(&ra));
    /* right away (the late grants were made a few ms ago with PX 1000): nothing is held */
    ST_CHECK(count_keys(admin, "{frozen:*}:lease") == 0, "lease keys left after SIGCONT: %ld",
             count_keys(admin, "{frozen:*}:lease"));
    ST_CHECK(st->handed_back == LATE, "cancelled grants released by the adapter: %llu, want %d",
             (unsigned long long)st->handed_back, LATE);
    tick_clock();
    for (n = 0, i = FROZEN; i < FROZEN + LATE; i++) {
        ldl_lock_poll(&g_fz[i]);
        n += ldl_lock_state(&g_fz[i]) == LDL_IDLE && ldl_lock_fencing_token(&g_fz[i]) == 0;
    }
    ST_CHECK(n == LATE, "a late grant was trusted: %d of %d idle", n, LATE);
    for (n = 0, i = 0; i < FROZEN; i++) { ldl_lock_release(&g_fz[i]); n += ldl_lock_state(&g_fz[i]) == LDL_RELEASED; }
    ST_CHECK(n == FROZEN, "%d of %d released", n, FROZEN);
    for (i = 0; i < FROZEN + LATE; i++) ldl_lock_dispose(&g_fz[i]);
    ST_CHECK(drain(&ra, 2000) >= 0, "%s", "drain");
    redisFree(c);
}

/* ------------------------------------------------------------ hostile server */
typedef struct hostile_case { int sc; int grant; int link_fails; const char *what; const char *why; } hostile_case;

static void test_hostile(void)
{
    static const hostile_case cases[] = {
        { 'G', 1, 0, "a correct grant (control)", "" },
        { 'i', 0, 1, "an integer where a string is due", "out of step" },
        { 'n', 0, 1, "a wrong nonce", "out of step" },
        { 'x', 1, 1, "an extra reply after a correct one", "nobody asked" },
        { 'm', 0, 1, "no reply, then the connection closed", "closed" },
        { 'g', 0, 1, "garbage", "Protocol error" },
        { 'a', 0, 1, "*2147483647", "reply refused" },
        { 'b', 0, 1, "a 1 GB bulk string", "LDL_REDIS_REPLY_MAX" },
        { 's', 0, 1, "a status reply", "out of step" },
        { 't', 0, 0, "the right nonce with token -5", "malformed" },
        { 'e', 0, 1, "arrays nested 12 deep", "nested" },
        /* the string answer's own malformations (decision 0118) */
        { 'S', 0, 1, "no space after the nonce", "out of step" },
        { 'A', 0, 1, "the v0.2 array shape", "out of step" },
        { 'B', 0, 1, "the right text as a status reply", "out of step" },
        { 'X', 0, 0, "extra bytes after the token", "malformed" },
        { 'z', 0, 0, "a leading zero", "malformed" },
        { 'p', 0, 0, "a plus sign", "malformed" },
        { 'o', 0, 0, "20 digits", "malformed" },
        { 'O', 0, 0, "INT64_MAX + 1", "malformed" },
        { 'F', 0, 0, "epoch fields, epoch view off", "malformed" },
    };
    rs_hostile h;
    size_t k;
    ldl_redis_req reqs[8];
    ST_CHECK(rs_hostile_start(&h) == 0, "%s", "hostile server");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const hostile_case *hc = &cases[k];
        redisContext *c;
        ldl_redis_async ra;
        ldl_async_store as;
        ldl_lock lk;
        lost_rec lr;
        uint64_t end, pump_max = 0;
        int neg = 0, answered;
        memset(&lr, 0, sizeof lr);
        rs_hostile_next(&h, hc->sc);
        c = connect_nb(h.port);
        ST_CHECK(c != NULL, "%s: connect", hc->what);
        if (!c) continue;
        ST_CHECK(ldl_redis_async_init(&ra, c, NULL, reqs, 8) == LDL_OK, "%s: init", hc->what);
        as = ldl_redis_async_store(&ra);
        tick_clock();
        lock_init(&lk, &as, "hostile", 400, &lr);
        ST_CHECK(ldl_lock_acquire(&lk) == LDL_EINPROGRESS, "%s: acquire", hc->what);
        answered = 0;
        end = st_now_ms() + 1500;
        while (st_now_ms() < end) {
            uint64_t t0 = st_now_ms();
            int rc = ldl_redis_async_pump(&ra);
            if (st_now_ms() - t0 > pump_max) pump_max = st_now_ms() - t0;
            if (rc < 0) neg = 1;
            tick_clock();
            ldl_lock_poll(&lk);
            if (!answered && hc->sc == 'm' && rs_hostile_answered(&h, 1)) {
                answered = 1;
                st_sleep_ms(500);        /* the acquire times out (ttl 400) with no reply */
                tick_clock();
                ldl_lock_poll(&lk);
                ST_CHECK(ldl_lock_state(&lk) == LDL_IDLE && !ldl_lock_pending(&lk),
                         "missing reply: state %d pending %d", ldl_lock_state(&lk), ldl_lock_pending(&lk));
                rs_hostile_done(&h);     /* now close it: EOF */
                end = st_now_ms() + 1500;
            }
            if (neg || (!ldl_lock_pending(&lk) && hc->sc != 'm' && hc->sc != 'x')) break;
            st_sleep_ms(2);
        }
        if (!answered) {
            ST_CHECK(hc->sc != 'm', "%s", "missing reply: the hostile server never got the request");
            rs_hostile_answered(&h, 3000);
            rs_hostile_done(&h);
        }
        if (hc->grant) {
            ST_CHECK(ldl_lock_fencing_token(&lk) == 77 || lr.calls == 1,
                     "%s: the correct grant was not taken (state %s)", hc->what, ldl_state_name(ldl_lock_state(&lk)));
        } else {
            ST_CHECK(ldl_lock_state(&lk) != LDL_HELD && ldl_lock_fencing_token(&lk) == 0 && lr.calls == 0,
                     "%s: GRANTED (state %s token %lld)", hc->what, ldl_state_name(ldl_lock_state(&lk)),
                     (long long)ldl_lock_fencing_token(&lk));
            ST_CHECK(ldl_lock_answer(&lk) == 0, "%s: acquire answer %d", hc->what, ldl_lock_answer(&lk));
        }
        if (hc->link_fails) {
            if (!neg) { st_sleep_ms(20); neg = ldl_redis_async_pump(&ra) < 0; }
            ST_CHECK(neg, "%s: the link did not fail", hc->what);
            ST_CHECK(ldl_redis_async_why(&ra)[0] != 0 && c->err != 0, "%s: why '%s' err %d", hc->what,
                     ldl_redis_async_why(&ra), c->err);
            ST_CHECK(ldl_redis_async_fd(&ra, NULL) == -1, "%s: fd of a failed link", hc->what);
        } else {
            ST_CHECK(!neg, "%s: link failed: %s", hc->what, ldl_redis_async_why(&ra));
        }
        ST_CHECK(strstr(ldl_redis_async_why(&ra), hc->why) != NULL, "%s: why \"%s\", want it to say \"%s\"",
                 hc->what, ldl_redis_async_why(&ra), hc->why);
        fprintf(stderr, "hostile %c (%s): state %s, link %s, why \"%s\", max pump %llu ms\n", hc->sc,
                hc->what, ldl_state_name(ldl_lock_state(&lk)), neg ? "failed" : "up", ldl_redis_async_why(&ra),
                (unsigned long long)pump_max);
        ldl_lock_dispose(&lk);
        redisFree(c);
    }
    rs_hostile_stop(&h);
}

/* ------------------------------------------------------------ SCRIPT FLUSH mid-pipeline */
#define NFLUSH 3000
static void test_flush(redisContext *admin)
{
    redisContext *c = connect_nb(g_srv.port);
    ldl_redis_async ra;
    ldl_async_store as;
    static char keys[NFLUSH][16];
    const ldl_redis_stats *st;
    int i, n, round;
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) return;
    ldl_redis_async_init(&ra, c, "flush", g_reqs, sizeof g_reqs / sizeof g_reqs[0]);
    as = ldl_redis_async_store(&ra);
    st = ldl_redis_async_stats(&ra);
    tick_clock();
    for (i = 0; i < NFLUSH; i++) {
        snprintf(keys[i], sizeof keys[i], "f%d", i);
        lock_init(&g_many[i], &as, keys[i], 5000, NULL);
    }
    ldl_lock_acquire(&g_many[0]);                  /* warm the script cache */
    drain(&ra, 2000);
    ldl_lock_release(&g_many[0]);
    drain(&ra, 2000);
    ST_CHECK(ldl_lock_release(&g_many[0]) == 1, "%s", "warm-up lifecycle");
    for (round = 0; round < 2; round++) {
        /* round 0: the flush lands while the pipeline is being executed;
           round 1: before it, so every first attempt meets NOSCRIPT */
        uint64_t ns0 = st->noscript;
        if (round == 1) ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush");
        for (i = 0; i < NFLUSH; i++) ldl_lock_acquire(&g_many[i]);
        ldl_redis_async_pump(&ra);                 /* the pipeline goes out */
        if (round == 0) ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush");
        ST_CHECK(drain(&ra, 10000) >= 0 && st->live == 0, "drain: %s", ldl_redis_async_why(&ra));
        tick_clock();
        for (n = 0, i = 0; i < NFLUSH; i++) n += ldl_lock_poll(&g_many[i]) == 1;
        ST_CHECK(n == NFLUSH, "round %d: held %d of %d", round, n, NFLUSH);
        fprintf(stderr, "flush round %d: %llu of %d requests met NOSCRIPT and went again as EVAL\n", round,
                (unsigned long long)(st->noscript - ns0), NFLUSH);
        if (round == 1) ST_CHECK(st->noscript - ns0 >= 1, "%s", "no NOSCRIPT after a flush");
        /* renew half, release the other half, with the release script flushed again */
        ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush 2");
        for (i = 0; i < NFLUSH; i++) {
            if (i % 2) ldl_lock_tick(&g_many[i]);
            else ldl_lock_release(&g_many[i]);
        }
        ST_CHECK(drain(&ra, 10000) >= 0 && st->live == 0, "drain 2: %s", ldl_redis_async_why(&ra));
        tick_clock();
        for (n = 0, i = 0; i < NFLUSH; i++)
            n += (i % 2) ? ldl_lock_poll(&g_many[i]) == 1 : ldl_lock_release(&g_many[i]) == 1;
        ST_CHECK(n == NFLUSH, "round %d: renewed or released right %d of %d", round, n, NFLUSH);
        for (i = 1; i < NFLUSH; i += 2) ldl_lock_release(&g_many[i]);
        ST_CHECK(drain(&ra, 10000) >= 0, "%s", "drain 3");
        for (n = 0, i = 1; i < NFLUSH; i += 2) n += ldl_lock_release(&g_many[i]) == 1;
        ST_CHECK(n == NFLUSH / 2, "round %d: released %d", round, n);
        ST_CHECK(count_keys(admin, "{flush:*}:lease") == 0, "%s", "lease keys left");
    }
    for (i = 0; i < NFLUSH; i++) ldl_lock_dispose(&g_many[i]);
    redisFree(c);
}

/* ------------------------------------------------------------ SIGKILL + restart mid-flight */
#define NRS 200
static void test_restart(void)
{
    rs_server aof;
    redisContext *c;
    ldl_redis_async ra;
    ldl_async_store as;
    static char keys[NRS][16];
    static int64_t tok1[NRS];
    const ldl_redis_stats *st;
    uint64_t end;
    int i, n, failed = 0, rc;

    ST_CHECK(rs_start(&aof, "redis-async-aof", 1) == 0, "%s", "start AOF server");
    c = connect_nb(aof.port);
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) { rs_stop(&aof); return; }
    ldl_redis_async_init(&ra, c, "rs", g_reqs, sizeof g_reqs / sizeof g_reqs[0]);
    as = ldl_redis_async_store(&ra);
    st = ldl_redis_async_stats(&ra);
    tick_clock();
    for (i = 0; i < NRS; i++) {
        snprintf(keys[i], sizeof keys[i], "r%d", i);
        lock_init(&g_many[i], &as, keys[i], 1000, &g_many_lost[i]);
        memset(&g_many_lost[i], 0, sizeof g_many_lost[i]);
        ldl_lock_acquire(&g_many[i]);
    }
    drain(&ra, 5000);
    tick_clock();
    for (n = 0, i = 0; i < NRS; i++) { n += ldl_lock_poll(&g_many[i]) == 1; tok1[i] = ldl_lock_fencing_token(&g_many[i]); }
    ST_CHECK(n == NRS, "held %d of %d", n, NRS);
    /* renews in flight, then the server dies */
    for (i = 0; i < NRS; i++) ldl_lock_tick(&g_many[i]);
    ldl_redis_async_pump(&ra);
    kill(aof.pid, SIGKILL);
    end = st_now_ms() + 3000;
    while (st_now_ms() < end && !failed) { failed = ldl_redis_async_pump(&ra) < 0; st_sleep_ms(1); }
    ST_CHECK(failed, "%s", "the link did not fail after SIGKILL");
    ST_CHECK(st->live == 0, "live %lu after the failure", (unsigned long)st->live);
    tick_clock();
    for (n = 0, i = 0; i < NRS; i++) {
        ldl_lock_poll(&g_many[i]);
        n += ldl_lock_state(&g_many[i]) == LDL_LOST || ldl_lock_state(&g_many[i]) == LDL_HELD;
    }
    ST_CHECK(n == NRS, "%s", "states after the failure");
    fprintf(stderr, "restart: link failed (%s); %d renews answered before the kill\n", ldl_redis_async_why(&ra),
            (int)(st->answered - NRS));
    /* submits on a failed link answer at once */
    ST_CHECK(ldl_redis_async_pump(&ra) < 0, "%s", "pump after the failure");
    aof.pid = 0;
    ST_CHECK(rs_restart(&aof) == 0, "%s", "restart");
    ST_CHECK(ldl_redis_async_reconnect(&ra) == LDL_OK, "reconnect: %s", ldl_redis_async_why(&ra));
    /* release every lock (the lost ones owe their token), then acquire again: tokens rise */
    end = st_now_ms() + 10000;
    for (i = 0; i < NRS; i++) ldl_lock_release(&g_many[i]);
    drain(&ra, 5000);
    for (n = 0, i = 0; i < NRS; i++) { rc = ldl_lock_release(&g_many[i]); n += rc == 1 || rc == 0; }
    ST_CHECK(n == NRS, "release after reconnect %d", n);
    for (i = 0; i < NRS; i++) ldl_lock_acquire(&g_many[i]);
    n = 0;
    while (n < NRS && st_now_ms() < end) {
        ST_CHECK(ldl_redis_async_pump(&ra) >= 0, "pump: %s", ldl_redis_async_why(&ra));
        tick_clock();
        for (n = 0, i = 0; i < NRS; i++) {
            rc = ldl_lock_poll(&g_many[i]);
            if (rc == 0 && !ldl_lock_pending(&g_many[i])) ldl_lock_acquire(&g_many[i]);
            n += ldl_lock_state(&g_many[i]) == LDL_HELD;
        }
        st_sleep_ms(2);
    }
    ST_CHECK(n == NRS, "re-acquired %d of %d after the restart", n, NRS);
    for (n = 0, i = 0; i < NRS; i++) n += ldl_lock_fencing_token(&g_many[i]) > tok1[i];
    ST_CHECK(n == NRS, "tokens rose for %d of %d keys", n, NRS);
    for (i = 0; i < NRS; i++) ldl_lock_release(&g_many[i]);
    drain(&ra, 5000);
    for (i = 0; i < NRS; i++) ldl_lock_dispose(&g_many[i]);
    redisFree(c);
    rs_stop(&aof);
}

/* ------------------------------------------------------------ contention */
#define CPROC  4
#define CLOCKS 250
#define CROUND 3
static char g_resdir[300];

static void res_path(char *out, size_t n, int key) { snprintf(out, n, "%s/res%d.bin", g_resdir, key); }

static int contention_worker(void *arg, int in, int out)
{
    redisContext *c = connect_nb(g_srv.port);
    static ldl_redis_req reqs[4 * CLOCKS];
    static ldl_lock lk[CLOCKS];
    static char keys[CLOCKS][16];
    int done[CLOCKS], total = 0, i, bad = 0;
    ldl_redis_async ra;
    ldl_async_store as;
    uint64_t end = st_now_ms() + 90000;
    (void)arg; (void)in; (void)out;
    if (!c) return 100;
    if (ldl_redis_async_init(&ra, c, "cont", reqs, 4 * CLOCKS) != LDL_OK) return 101;
    as = ldl_redis_async_store(&ra);
    tick_clock();
    for (i = 0; i < CLOCKS; i++) {
        snprintf(keys[i], sizeof keys[i], "c%d", i);
        if (lock_init(&lk[i], &as, keys[i], 2000, NULL) != LDL_OK) return 102;
        done[i] = 0;
    }
    while (total < CLOCKS * CROUND && st_now_ms() < end) {
        if (ldl_redis_async_pump(&ra) < 0) return 103;
        tick_clock();
        for (i = 0; i < CLOCKS; i++) {
            int st = ldl_lock_state(&lk[i]), rc;
            if (done[i] >= CROUND) continue;
            if (st == LDL_IDLE || st == LDL_RELEASED) { ldl_lock_acquire(&lk[i]); continue; }
            if (ldl_lock_poll(&lk[i]) == 1) {
                char p[340];
                int64_t f = ldl_lock_fencing_token(&lk[i]), v;
                res_path(p, sizeof p, i);
                fenced_enter(p);
                if (fenced_read(p, f, &v) == 1 && fenced_write(p, f, v + 1) == 1 && ldl_lock_poll(&lk[i]) == 1)
                    fenced_completed(p);
                else
                    bad |= 2;
                fenced_leave(p);
                rc = ldl_lock_release(&lk[i]);
                if (rc != 1 && rc != LDL_EINPROGRESS) bad |= 4;
                done[i]++;
                total++;
            } else if (ldl_lock_state(&lk[i]) == LDL_LOST) {
                bad |= 8;
                ldl_lock_release(&lk[i]);
            }
        }
        st_sleep_ms(1);
    }
    if (total < CLOCKS * CROUND) bad |= 16;
    for (i = 0; i < CLOCKS; i++) while (ldl_lock_release(&lk[i]) == LDL_EINPROGRESS && st_now_ms() < end + 5000) {
        ldl_redis_async_pump(&ra);
        st_sleep_ms(1);
    }
    for (i = 0; i < CLOCKS; i++) ldl_lock_dispose(&lk[i]);
    drain(&ra, 2000);
    redisFree(c);
    return bad;
}

static void test_contention(void)
{
    st_child ch[CPROC];
    int i, k, bad_keys = 0;
    uint64_t t0 = st_now_ms();
    for (k = 0; k < CLOCKS; k++) {
        char p[340];
        res_path(p, sizeof p, k);
        if (fenced_create(p) != 0) { ST_CHECK(0, "fenced_create %d", k); return; }
    }
    for (i = 0; i < CPROC; i++) ST_CHECK(st_fork(&ch[i], contention_worker, NULL) == 0, "fork %d", i);
    for (i = 0; i < CPROC; i++) {
        int rc = st_join(&ch[i], 120000);
        ST_CHECK(rc == 0, "contention worker %d exit %d (2 fenced op refused, 4 release, 8 lost, "
                 "16 unfinished, 100+ setup)", i, rc);
    }
    for (k = 0; k < CLOCKS; k++) {
        char p[340];
        fenced_stats fs;
        static int64_t log[CPROC * CROUND + 8];
        size_t n = 0;
        res_path(p, sizeof p, k);
        if (fenced_stats_get(p, &fs) != 0 || fenced_log(p, log, sizeof log / sizeof log[0], &n) != 0 ||
            fs.completed != CPROC * CROUND || fs.value != fs.completed || fs.writes != fs.completed ||
            fs.rejected != 0 || fs.max_inside != 1 || n != (size_t)fs.writes || !fenced_log_increasing(log, n)) {
            if (bad_keys++ < 3)
                fprintf(stderr, "key %d: completed %lld value %lld writes %lld rejected %lld max_inside %lld\n", k,
                        (long long)fs.completed, (long long)fs.value, (long long)fs.writes,
                        (long long)fs.rejected, (long long)fs.max_inside);
        }
    }
    ST_CHECK(bad_keys == 0, "%d of %d fenced resources broken", bad_keys, CLOCKS);
    fprintf(stderr, "contention: %d processes x %d locks x %d rounds, non-blocking, %llu ms\n", CPROC, CLOCKS,
            CROUND, (unsigned long long)(st_now_ms() - t0));
}

/* ------------------------------------------------------------ the API edges */
static void test_api(void)
{
    redisContext *blocking = rs_connect(&g_srv, 1000), *c = connect_nb(g_srv.port);
    ldl_redis_async ra;
    ldl_redis_req reqs[2];
    ldl_async_store as;
    ldl_lock a, b, d;
    int ev = -1, fd;
    ST_CHECK(ldl_redis_async_init(&ra, blocking, NULL, reqs, 2) == LDL_EINVAL && strstr(ldl_redis_async_why(&ra), "blocking"),
             "blocking context refused: %s", ldl_redis_async_why(&ra));
    ST_CHECK(ldl_redis_async_init(&ra, c, NULL, NULL, 2) == LDL_EINVAL, "%s", "no pool");
    ST_CHECK(ldl_redis_async_init(&ra, c, "a:b", reqs, 2) == LDL_EINVAL, "%s", "bad prefix");
    ST_CHECK(redisAppendCommand(c, "PING") == REDIS_OK, "%s", "append");
    ST_CHECK(ldl_redis_async_init(&ra, c, NULL, reqs, 2) == LDL_EINVAL && strstr(ldl_redis_async_why(&ra), "not shared"),
             "pending output refused: %s", ldl_redis_async_why(&ra));
    redisFree(c);
    c = connect_nb(g_srv.port);
    ST_CHECK(ldl_redis_async_init(&ra, c, NULL, reqs, 2) == LDL_OK, "%s", "init");
    fd = ldl_redis_async_fd(&ra, &ev);
    ST_CHECK(fd == c->fd && ev == LDL_WANT_WRITE, "fd while connecting: %d events %d", fd, ev);
    as = ldl_redis_async_store(&ra);
    tick_clock();
    lock_init(&a, &as, "api-a", 1000, NULL);
    lock_init(&b, &as, "api-b", 1000, NULL);
    lock_init(&d, &as, "api-c", 1000, NULL);
    ST_CHECK(ldl_lock_acquire(&a) == LDL_EINPROGRESS && ldl_lock_acquire(&b) == LDL_EINPROGRESS, "%s", "two submits");
    ST_CHECK(ldl_lock_acquire(&d) == 0 && strstr(ldl_redis_async_why(&ra), "pool full"),
             "a full pool answers no grant: %s", ldl_redis_async_why(&ra));
    ST_CHECK(ldl_redis_async_stats(&ra)->refused_full == 1, "%s", "refused_full");
    ldl_redis_async_pump(&ra);
    fd = ldl_redis_async_fd(&ra, &ev);
    ST_CHECK(fd == c->fd && (ev & LDL_WANT_READ), "fd when up: events %d", ev);
    ST_CHECK(drain(&ra, 2000) >= 0, "%s", "drain");
    tick_clock();
    ST_CHECK(ldl_lock_poll(&a) == 1 && ldl_lock_poll(&b) == 1, "%s", "both held");
    /* cancel by release from ACQUIRING: the adapter releases the grant itself */
    ST_CHECK(ldl_lock_release(&a) == LDL_EINPROGRESS, "%s", "release a");
    ST_CHECK(drain(&ra, 2000) >= 0 && ldl_lock_release(&a) == 1, "%s", "released a");
    ST_CHECK(ldl_lock_acquire(&a) == LDL_EINPROGRESS && ldl_lock_release(&a) == 0, "%s", "acquire then cancel");
    ST_CHECK(drain(&ra, 2000) >= 0 && ldl_redis_async_stats(&ra)->handed_back == 1, "handed back %llu",
             (unsigned long long)ldl_redis_async_stats(&ra)->handed_back);
    ST_CHECK(rs_int(rs_cmd(blocking, "EXISTS", "{ldl:api-a}:lease", NULL), -9) == 0, "%s", "cancelled grant released");
    /* the program drops the link: every live request answers LDL_ESTORE */
    ldl_lock_tick(&b);
    ldl_redis_async_fail(&ra, "test drops it");
    tick_clock();
    ST_CHECK(ldl_lock_poll(&b) == 0 && ldl_lock_reason(&b) == LDL_REASON_STORE_ERROR, "%s", "renew failed with the link");
    ST_CHECK(ldl_redis_async_pump(&ra) < 0 && strstr(ldl_redis_async_why(&ra), "test drops it"), "%s", "pump after fail");
    ST_CHECK(ldl_lock_release(&b) == LDL_ESTORE, "%s", "release on a failed link");
    ST_CHECK(ldl_redis_async_reconnect(&ra) == LDL_OK, "%s", "reconnect");
    ST_CHECK(ldl_lock_acquire(&d) == LDL_EINPROGRESS, "%s", "acquire while connecting");
    ST_CHECK(drain(&ra, 3000) >= 0, "%s", "drain");
    tick_clock();
    ST_CHECK(ldl_lock_poll(&d) == 1, "%s", "held after reconnect");
    ldl_lock_dispose(&a); ldl_lock_dispose(&b); ldl_lock_dispose(&d);
    drain(&ra, 2000);
    redisFree(c);
    redisFree(blocking);
}

int main(int argc, char **argv)
{
    uint64_t t0 = st_now_ms(), t;
    redisContext *admin;
    const char *only = argc > 1 ? argv[1] : "";
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "redis-async", 0) != 0) {
        ST_CHECK(0, "%s", "redis-server did not start");
        return st_report();
    }
    snprintf(g_resdir, sizeof g_resdir, "%s", g_srv.dir);
    admin = rs_connect(&g_srv, 5000);
    ST_CHECK(admin != NULL, "%s", "admin connect");
    if (!admin) { rs_stop(&g_srv); return st_report(); }
#define RUN(name, call) if (!*only || strcmp(only, name) == 0) { st_case(name, RS_CASE_S); t = st_now_ms(); call; \
        fprintf(stderr, "  %s %llu ms\n", name, (unsigned long long)(st_now_ms() - t)); }
    RUN("api", test_api());
    RUN("hostile", test_hostile());
    RUN("many", test_many(admin));
    RUN("flush", test_flush(admin));
    RUN("sigstop", test_sigstop(admin));
    RUN("restart", test_restart());
    RUN("contention", test_contention());
    redisFree(admin);
    rs_stop(&g_srv);
    fprintf(stderr, "redis_async: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
