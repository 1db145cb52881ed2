/* tests/store/redis_fixes.c -- what a new user hit with the Redis adapter, against a real
 * redis-server (and a hostile TCP server) this program starts:
 *   names      the key mapping is injective: prefixes with ':', '{', '}' or empty are refused,
 *              the colliding pairs cannot be built, both keys of a lock share one
 *              non-empty hash tag
 *   shared     a connection with output pending, an unread reply, or a reply on its way is
 *              never read as a grant (the GET 41 impostor of the issue)
 *   hostile    the synchronous view against wrong types, wrong nonces, "*2147483647" and a
 *              server that drips its reply (the per-call bound)
 *   acl        the documented least-privilege ACL line works (both views, NOSCRIPT included),
 *              a key outside it and CONFIG are refused with a clear why
 *   why        server errors are visible through ldl_redis_why
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"

static rs_server g_srv;

/* the hash tag Redis Cluster would hash: text between the first '{' and the next '}' */
static int hash_tag(const char *name, char *out, size_t cap)
{
    const char *o = strchr(name, '{'), *c;
    if (!o) return 0;
    c = strchr(o + 1, '}');
    if (!c || c == o + 1 || (size_t)(c - o - 1) >= cap) return 0;
    memcpy(out, o + 1, (size_t)(c - o - 1));
    out[c - o - 1] = 0;
    return 1;
}

static void test_names(redisContext *c)
{
    static const char *const bad[] = { "", "app:jobs", "}x", "t}", "{a", "a{b}", ":" };
    static const char *const good[] = { "app", "ldl", "a-b_c.d", "t" };
    ldl_redis r;
    ldl_redis_async ra;
    ldl_redis_req reqs[2];
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ST_CHECK(ldl_redis_init(&r, c, bad[i]) == LDL_EINVAL && ldl_redis_why(&r)[0] != 0,
                 "prefix \"%s\" accepted", bad[i]);
        ST_CHECK(ldl_redis_async_init(&ra, c, bad[i], reqs, 2) == LDL_EINVAL, "async prefix \"%s\" accepted", bad[i]);
    }
    for (i = 0; i < sizeof good / sizeof good[0]; i++)
        ST_CHECK(ldl_redis_init(&r, c, good[i]) == LDL_OK, "prefix \"%s\" refused: %s", good[i], ldl_redis_why(&r));

    /* the pair: (app, jobs:nightly) and (app:jobs, nightly) both mapped to
       {app:jobs:nightly}:lease. The second prefix is refused; under "app" the keys
       "jobs:nightly", "jobs" and "nightly" are three independent locks with three fences */
    {
        static const char *const keys[] = { "jobs:nightly", "jobs", "nightly", "jobs:" };
        ldl_redis app;
        ldl_store s;
        int64_t t[4];
        ldl_redis_init(&app, c, "app");
        s = ldl_redis_store(&app);
        for (i = 0; i < 4; i++) {
            t[i] = 0;
            ST_CHECK(s.acquire(s.ctx, keys[i], 5000, &t[i]) == 1 && t[i] == 1,
                     "key %s: granted token %lld (another lock's fence?)", keys[i], (long long)t[i]);
        }
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{app:jobs:nightly}:lease", "{app:jobs}:lease", "{app:nightly}:lease",
                               "{app:jobs:}:lease", NULL), -9) == 4, "%s", "four lease keys");
        for (i = 0; i < 4; i++) ST_CHECK(s.release(s.ctx, keys[i], t[i]) == 1, "release %s", keys[i]);
    }
    /* keys that start with or hold '}' or '{': both names share one non-empty hash tag */
    {
        static const char *const keys[] = { "}", "}x", "x}", "{", "{}", "a:b}c" };
        ldl_redis tp;
        ldl_store s;
        ldl_redis_init(&tp, c, "t");
        s = ldl_redis_store(&tp);
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char lease[200], fence[200], tl[200], tf[200];
            int64_t t = 0;
            snprintf(lease, sizeof lease, "{t:%s}:lease", keys[i]);
            snprintf(fence, sizeof fence, "{t:%s}:fence", keys[i]);
            ST_CHECK(hash_tag(lease, tl, sizeof tl) && hash_tag(fence, tf, sizeof tf) && strcmp(tl, tf) == 0 &&
                     tl[0] != 0, "key %s: hash tags '%s' / '%s'", keys[i], tl, tf);
            ST_CHECK(s.acquire(s.ctx, keys[i], 5000, &t) == 1, "acquire %s", keys[i]);
            ST_CHECK(rs_int(rs_cmd(c, "EXISTS", lease, fence, NULL), -9) == 2, "names of %s", keys[i]);
            ST_CHECK(s.release(s.ctx, keys[i], t) == 1, "release %s", keys[i]);
        }
    }
}

/* ------------------------------------------------------------ a shared connection */
static void test_shared(redisContext *admin)
{
    redisContext *c = rs_connect(&g_srv, 2000), *holder_c = rs_connect(&g_srv, 2000);
    ldl_redis r, holder;
    ldl_store s, hs;
    int64_t t = -777, ht = 0, fence_before;
    void *rep = NULL;
    int rc;
    ST_CHECK(c && holder_c, "%s", "connect");
    if (!c || !holder_c) return;
    ldl_redis_init(&r, c, NULL);
    ldl_redis_init(&holder, holder_c, NULL);
    s = ldl_redis_store(&r);
    hs = ldl_redis_store(&holder);
    ST_CHECK(hs.acquire(hs.ctx, "imp", 10000, &ht) == 1, "%s", "the real holder");
    fence_before = rs_int(rs_cmd(admin, "GET", "{ldl:imp}:fence", NULL), -1);   /* a string: -1 */
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "x", "41", NULL), "OK"), "%s", "set x 41");

    /* 1. the program appended its own GET and has not sent it: refused, nothing sent */
    ST_CHECK(redisAppendCommand(c, "GET x") == REDIS_OK, "%s", "append GET");
    rc = s.acquire(s.ctx, "imp", 1000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == -777 && strstr(ldl_redis_why(&r), "output pending"),
             "pending output: %d token %lld why %s", rc, (long long)t, ldl_redis_why(&r));
    ST_CHECK(redisGetReply(c, &rep) == REDIS_OK && rep, "%s", "the program's own GET still works");
    if (rep) freeReplyObject(rep);

    /* 2. sent, and its reply waits in the socket: refused */
    ST_CHECK(redisAppendCommand(c, "GET x") == REDIS_OK, "%s", "append GET 2");
    {
        int done = 0;
        while (!done) if (redisBufferWrite(c, &done) != REDIS_OK) break;
    }
    st_sleep_ms(50);
    rc = s.acquire(s.ctx, "imp", 1000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == -777 && strstr(ldl_redis_why(&r), "unread reply"),
             "unread reply: %d token %lld why %s", rc, (long long)t, ldl_redis_why(&r));
    rep = NULL;
    ST_CHECK(redisGetReply(c, &rep) == REDIS_OK && rep && ((redisReply *)rep)->type == REDIS_REPLY_STRING,
             "%s", "the GET reply is still the program's");
    if (rep) freeReplyObject(rep);

    /* 2b. already read by hiredis into its buffer, not parsed: refused */
    ST_CHECK(redisAppendCommand(c, "GET x") == REDIS_OK && redisAppendCommand(c, "GET x") == REDIS_OK, "%s", "two GETs");
    rep = NULL;
    ST_CHECK(redisGetReply(c, &rep) == REDIS_OK && rep, "%s", "first GET");
    if (rep) freeReplyObject(rep);
    st_sleep_ms(50);
    rc = s.acquire(s.ctx, "imp", 1000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == -777, "second reply pending: %d token %lld why %s", rc, (long long)t,
             ldl_redis_why(&r));
    rep = NULL;
    if (redisGetReply(c, &rep) == REDIS_OK && rep) freeReplyObject(rep);

    /* 3. the reply is still on its way (BLPOP answers nil after 1 s): our read gets it
       first, it is not ours (wrong type, no nonce): no grant, the connection is marked failed */
    ST_CHECK(redisAppendCommand(c, "BLPOP nolist 1") == REDIS_OK, "%s", "append BLPOP");
    {
        int done = 0;
        while (!done) if (redisBufferWrite(c, &done) != REDIS_OK) break;
    }
    rc = s.acquire(s.ctx, "imp", 1000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == -777 && c->err != 0 && strstr(ldl_redis_why(&r), "out of step"),
             "reply on its way: %d token %lld err %d why %s", rc, (long long)t, c->err, ldl_redis_why(&r));
    ST_CHECK(s.renew(s.ctx, "imp", ht, 1000) == LDL_ESTORE, "%s", "nothing more on a marked connection");
    ST_CHECK(rs_reconnect(c, 2000) == REDIS_OK, "%s", "reconnect clears the mark");

    /* 3b. the case exactly: GET x (41) pipelined, the real holder's lease in place */
    ST_CHECK(redisAppendCommand(c, "GET x") == REDIS_OK, "%s", "append GET 3");
    {
        int done = 0;
        while (!done) if (redisBufferWrite(c, &done) != REDIS_OK) break;
    }
    rc = s.acquire(s.ctx, "imp", 1000, &t);
    ST_CHECK(rc != 1 && t == -777, "the impostor: %d token %lld (why %s)", rc, (long long)t, ldl_redis_why(&r));
    ST_CHECK(rs_int(rs_cmd(admin, "PTTL", "{ldl:imp}:lease", NULL), -9) > 0, "%s", "the holder's lease stands");
    ST_CHECK(hs.renew(hs.ctx, "imp", ht, 10000) == 1, "%s", "the real holder still renews");
    (void)fence_before;
    ST_CHECK(rs_reconnect(c, 2000) == REDIS_OK, "%s", "reconnect");
    ST_CHECK(s.acquire(s.ctx, "imp", 1000, &t) == 0, "%s", "a clean connection: occupied");
    ST_CHECK(hs.release(hs.ctx, "imp", ht) == 1, "%s", "holder releases");
    redisFree(c);
    redisFree(holder_c);
}

/* ------------------------------------------------------------ hostile, synchronous view */
/* sc: the hostile server's scenario (tests/store/redis_server.h); grant: the answer is taken
   (token 77); oos: the reply is not this call's (the connection is marked failed), else ours
   but malformed (LDL_ESTORE, the connection kept); epoch: the adapter's epoch fences on */
typedef struct hsync_case { int sc; int grant; int oos; int epoch; const char *why; } hsync_case;

static void test_hostile_sync(void)
{
    static const hsync_case cases[] = {
        { 'G', 1, 0, 0, "" },              { 'i', 0, 1, 0, "out of step" },
        { 'n', 0, 1, 0, "out of step" },   { 'a', 0, 1, 0, "reply refused" },
        { 'e', 0, 1, 0, "" },              { 'd', 0, 1, 0, "longer than" },
        { 't', 0, 0, 0, "malformed" },
        /* the string answer's own malformations (decision 0118) */
        { 'S', 0, 1, 0, "out of step" },   { 'A', 0, 1, 0, "out of step" },
        { 'B', 0, 1, 0, "out of step" },   { 'X', 0, 0, 0, "malformed" },
        { 'z', 0, 0, 0, "malformed" },     { 'p', 0, 0, 0, "malformed" },
        { 'o', 0, 0, 0, "malformed" },     { 'O', 0, 0, 0, "malformed" },
        { 'E', 0, 0, 0, "malformed" },     { 'F', 0, 0, 0, "malformed" },   /* epoch fields, view off */
        /* the epoch view's grant: E and the replication ID are checked before anything is kept */
        { 'F', 1, 0, 1, "" },              { 'G', 1, 0, 1, "" },
        { 'H', 0, 0, 1, "malformed" },     { 'L', 0, 0, 1, "malformed" },
        { 'U', 0, 0, 1, "malformed" },     { 'Y', 0, 0, 1, "malformed" },
        { 'V', 0, 0, 1, "malformed" },
    };
    rs_hostile h;
    size_t k;
    ST_CHECK(rs_hostile_start(&h) == 0, "%s", "hostile server");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const hsync_case *hc = &cases[k];
        redisContext *c;
        ldl_redis r;
        ldl_store s;
        int64_t t = -777;
        uint64_t t0;
        int rc;
        rs_hostile_next(&h, hc->sc);
        c = rs_connect_port(h.port, 300);
        ST_CHECK(c != NULL, "connect %c", hc->sc);
        if (!c) continue;
        ldl_redis_init(&r, c, NULL);
        if (hc->epoch) {
            ldl_redis_set_epoch_fences(&r, 1);
            r._ep_e = 3;                                   /* a cache the answer must not touch */
            memset(r._ep_r, 'c', 40);
            r._ep_r[40] = 0;
        }
        s = ldl_redis_store(&r);
        t0 = st_now_ms();
        rc = s.acquire(s.ctx, "k", 1000, &t);
        if (hc->grant) {
            ST_CHECK(rc == 1 && t == 77 && c->err == 0, "%c: control grant: %d token %lld why %s", hc->sc, rc,
                     (long long)t, ldl_redis_why(&r));
            if (hc->sc == 'F')
                ST_CHECK(r._ep_e == 7 && strcmp(r._ep_r, "0123456789abcdef0123456789abcdef01234567") == 0,
                         "F: the epoch and replication ID kept (%u %s)", (unsigned)r._ep_e, r._ep_r);
            if (hc->sc == 'G' && hc->epoch)
                ST_CHECK(r._ep_e == 3 && r._ep_r[0] == 'c', "%s", "G: a grant without the epoch keeps the cache");
        } else {
            ST_CHECK(rc < 0 && t == -777, "scenario %c: %d token %lld", hc->sc, rc, (long long)t);
            ST_CHECK(hc->oos ? c->err != 0 : c->err == 0, "scenario %c: connection %s (err %d)", hc->sc,
                     hc->oos ? "must be marked failed" : "must be kept", c->err);
            if (hc->epoch)
                ST_CHECK(r._ep_e == 3 && strspn(r._ep_r, "c") == 40, "scenario %c: the epoch cache changed (%u %s)",
                         hc->sc, (unsigned)r._ep_e, r._ep_r);
        }
        ST_CHECK(strstr(ldl_redis_why(&r), hc->why) != NULL, "scenario %c: why \"%s\", want \"%s\"", hc->sc,
                 ldl_redis_why(&r), hc->why);
        fprintf(stderr, "hostile sync %c%s: %d in %llu ms, why \"%s\"\n", hc->sc, hc->epoch ? " (epoch)" : "", rc,
                (unsigned long long)(st_now_ms() - t0), ldl_redis_why(&r));
        rs_hostile_answered(&h, 8000);
        rs_hostile_done(&h);
        redisFree(c);
    }
    /* renew and release: "1" is yes, "0" no, anything else ours but malformed (decision 0118) */
    for (k = 0; k < 8; k++) {
        static const char sc[8] = { '1', 'G', 'R', '2', '1', 'G', 'R', '2' };
        redisContext *c;
        ldl_redis r;
        ldl_store s;
        int rc, rel = k >= 4;
        rs_hostile_next(&h, sc[k]);
        c = rs_connect_port(h.port, 300);
        ST_CHECK(c != NULL, "connect %c", sc[k]);
        if (!c) continue;
        ldl_redis_init(&r, c, NULL);
        s = ldl_redis_store(&r);
        rc = rel ? s.release(s.ctx, "k", 5) : s.renew(s.ctx, "k", 5, 1000);
        if (sc[k] == '1')
            ST_CHECK(rc == 1, "%s: \"1\" is yes: %d (%s)", rel ? "release" : "renew", rc, ldl_redis_why(&r));
        else
            ST_CHECK(rc == LDL_ESTORE && c->err == 0 && strstr(ldl_redis_why(&r), "malformed"),
                     "%s: scenario %c is malformed, the connection kept: %d err %d (%s)", rel ? "release" : "renew",
                     sc[k], rc, c->err, ldl_redis_why(&r));
        rs_hostile_answered(&h, 8000);
        rs_hostile_done(&h);
        redisFree(c);
    }
    rs_hostile_stop(&h);
}

/* ------------------------------------------------------------ least privilege */
static int pump_until_idle(ldl_redis_async *ra, ldl_lock *lk, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        if (ldl_redis_async_pump(ra) < 0) return -1;
        ldl_lock_poll(lk);
        if (!ldl_lock_pending(lk)) return 0;
        st_sleep_ms(1);
    }
    return -2;
}
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

static void test_acl(redisContext *admin)
{
    redisContext *u, *un;
    ldl_redis r, other;
    ldl_store s, so;
    char why[300];
    int64_t t = 0;
    int rc;
    /* exactly the line in the header and docs/redis.md */
    ST_CHECK(rs_is(rs_cmd(admin, "ACL", "SETUSER", "ldl", "on", ">secret", "resetkeys", "~{ldl:*", "resetchannels",
                          "-@all", "+evalsha", "+eval", "+exists", "+incr", "+persist", "+get", "+set", "+pexpire",
                          "+del", NULL), "OK"), "%s", "ACL SETUSER");
    u = rs_connect(&g_srv, 2000);
    ST_CHECK(u && rs_is(rs_cmd(u, "AUTH", "ldl", "secret", NULL), "OK"), "%s", "AUTH ldl");
    if (!u) return;
    ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush: the EVAL fallback must work too");
    ldl_redis_init(&r, u, NULL);
    s = ldl_redis_store(&r);
    ST_CHECK(s.acquire(s.ctx, "acl", 5000, &t) == 1, "acquire as the ACL user: %s", ldl_redis_why(&r));
    if (!ST_CHECK(s.renew(s.ctx, "acl", t, 5000) == 1, "renew as the ACL user: %s", ldl_redis_why(&r))) {
        redisReply *l = rs_cmd(admin, "ACL", "LOG", "1", NULL);
        size_t j;
        if (l && l->type == REDIS_REPLY_ARRAY && l->elements == 1)
            for (j = 0; j + 1 < l->element[0]->elements; j += 2)
                if (l->element[0]->element[j + 1]->type == REDIS_REPLY_STRING)
                    fprintf(stderr, "  ACL LOG %s = %s\n", l->element[0]->element[j]->str, l->element[0]->element[j + 1]->str);
        if (l) freeReplyObject(l);
    }
    ST_CHECK(s.release(s.ctx, "acl", t) == 1, "release as the ACL user: %s", ldl_redis_why(&r));
    /* a prefix outside the key pattern: refused, and the why says so */
    ldl_redis_init(&other, u, "other");
    so = ldl_redis_store(&other);
    rc = so.acquire(so.ctx, "acl", 5000, &t);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(&other), "NOPERM"), "outside the pattern: %d why %s", rc,
             ldl_redis_why(&other));
    /* CONFIG denied: a clear negative answer */
    rc = ldl_redis_check_durability(&r, why, sizeof why);
    ST_CHECK(rc == LDL_ESTORE && strstr(why, "CONFIG GET refused") && strstr(why, "+config|get"),
             "durability as the ACL user: %d (%s)", rc, why);
    ST_CHECK(rs_cmd_calls(admin, "eval") >= 3, "%s", "EVAL fallback ran");
    /* the non-blocking view as the same user */
    un = redisConnectNonBlock("127.0.0.1", g_srv.port);
    ST_CHECK(un && !un->err, "%s", "connect nb");
    if (un && !un->err) {
        ldl_redis_req reqs[4];
        ldl_redis_async ra;
        ldl_async_store as;
        ldl_lock lk;
        ldl_lock_desc d;
        void *rep = NULL;
        /* AUTH on the non-blocking context before the adapter takes it */
        {
            struct pollfd p;
            int done = 0;
            p.fd = un->fd; p.events = POLLOUT; p.revents = 0;
            poll(&p, 1, 2000);
            redisAppendCommand(un, "AUTH ldl secret");
            while (!done && redisBufferWrite(un, &done) == REDIS_OK) { }
            while (!rep && redisBufferRead(un) == REDIS_OK && redisGetReplyFromReader(un, &rep) == REDIS_OK)
                if (!rep) { p.events = POLLIN; poll(&p, 1, 100); }
            ST_CHECK(rep && ((redisReply *)rep)->type == REDIS_REPLY_STATUS, "%s", "AUTH nb");
            if (rep) freeReplyObject(rep);
        }
        ST_CHECK(ldl_redis_async_init(&ra, un, NULL, reqs, 4) == LDL_OK, "init: %s", ldl_redis_async_why(&ra));
        as = ldl_redis_async_store(&ra);
        memset(&d, 0, sizeof d);
        d.container.scope = nop_scope; d.container.value = nop_value; d.container.shutdown = nop_shutdown;
        d.key = "acl-nb"; d.ttl_ms = 3000; d.async_store = &as;
        ldl_lock_init(&lk, &d);
        ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush");
        ldl_lock_acquire(&lk);
        ST_CHECK(pump_until_idle(&ra, &lk, 3000) == 0 && ldl_lock_state(&lk) == LDL_HELD,
                 "nb acquire as the ACL user: %s", ldl_redis_async_why(&ra));
        ST_CHECK(ldl_lock_tick(&lk) == 1 && pump_until_idle(&ra, &lk, 3000) == 0 && ldl_lock_poll(&lk) == 1,
                 "%s", "nb renew");
        ldl_lock_release(&lk);
        ST_CHECK(pump_until_idle(&ra, &lk, 3000) == 0 && ldl_lock_answer(&lk) == 1, "nb release: answer %d", ldl_lock_answer(&lk));
        ldl_lock_dispose(&lk);
        redisFree(un);
    }
    redisFree(u);
}

/* ------------------------------------------------------------ errors are visible */
static void test_why(redisContext *admin)
{
    redisContext *c = rs_connect(&g_srv, 2000);
    ldl_redis r;
    ldl_store s;
    int64_t t = 0;
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) return;
    ldl_redis_init(&r, c, NULL);
    s = ldl_redis_store(&r);
    ST_CHECK(ldl_redis_why(&r)[0] == 0, "%s", "no error yet");
    ST_CHECK(rs_int(rs_cmd(admin, "RPUSH", "{ldl:why}:lease", "x", NULL), -9) == 1, "%s", "rpush");
    ST_CHECK(s.renew(s.ctx, "why", 1, 1000) == LDL_ESTORE && strstr(ldl_redis_why(&r), "WRONGTYPE"),
             "why after WRONGTYPE: %s", ldl_redis_why(&r));
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:why2}:fence", "-5", NULL), "OK"), "%s", "set fence");
    ST_CHECK(s.acquire(s.ctx, "why2", 1000, &t) == LDL_ESTORE && strstr(ldl_redis_why(&r), "fence counter"),
             "why after a counter below 1: %s", ldl_redis_why(&r));
    redisFree(c);
}

int main(void)
{
    redisContext *admin;
    uint64_t t0 = st_now_ms();
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "redis-fixes", 0) != 0) {
        ST_CHECK(0, "%s", "redis-server did not start");
        return st_report();
    }
    admin = rs_connect(&g_srv, 5000);
    ST_CHECK(admin != NULL, "%s", "admin");
    if (!admin) { rs_stop(&g_srv); return st_report(); }
    st_case("names", RS_CASE_S);
    test_names(admin);
    st_case("shared", RS_CASE_S);
    test_shared(admin);
    st_case("hostile_sync", RS_CASE_S);
    test_hostile_sync();
    st_case("acl", RS_CASE_S);
    test_acl(admin);
    st_case("why", RS_CASE_S);
    test_why(admin);
    redisFree(admin);
    rs_stop(&g_srv);
    fprintf(stderr, "redis_fixes: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
