/* tests/store/redis_election.c -- leader election (issue 12) over the Redis adapter, against
 * a real redis-server this program starts, pauses and resumes itself:
 *   owner      holder identity: an owned acquire (sync, and non-blocking via submit_owned)
 *              read back by inspect from another connection; a free key inspects 0; a lease
 *              taken without an owner (the v0.1 path) inspects with owner "" although an
 *              older owner key is still there; owner bytes validated; SHAs; NOSCRIPT
 *   malformed  inspect fails closed: keys written by something else (a token that is not
 *              one, a lease without expiry, an owner with a control byte or too long, a wrong
 *              type) and the hostile server's replies answer LDL_ESTORE, never a holder
 *   cancel     a cancelled owned acquire whose grant comes late is handed back by the adapter
 *   ride-out   a leader whose redis-server is SIGSTOPped for 1.5 s (trust window 2.97 s)
 *              keeps its lease with ride_out_ms set and loses it (STORE_ERROR) without; the
 *              synchronous view with a 200 ms command timeout (reconnecting after a timeout)
 *              and the non-blocking view (a stall meter drops the link, then a reconnect)
 *   cluster    the same through adapters/lite_di_lock_redis_cluster.h on a 3-master cluster:
 *              one key per master, owned acquire (sync and non-blocking) and inspect routed,
 *              the owner key on the lease's master
 *   campaign   three processes campaigning for one key; the leader SIGSTOPped or SIGKILLed
 *              (and a new process started in its place) in 12 rounds; every process logs its
 *              trust windows [grant, start + ttl - drift) on CLOCK_MONOTONIC to the parent,
 *              which checks that no two overlap, that every takeover has a higher fence,
 *              that every process that lost led again, and on_leading counts
 * No timed assertions: the pauses only have to be shorter (or longer) than the windows they
 * are compared with, by margins of a second or more.
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_cluster_server.h"

static rs_server g_srv;

static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

static void base_desc(ldl_lock_desc *d, const char *key, uint32_t ttl)
{
    memset(d, 0, sizeof *d);
    d->container.scope = nop_scope;
    d->container.value = nop_value;
    d->container.shutdown = nop_shutdown;
    d->key = key;
    d->ttl_ms = ttl;
}

/* a synchronous adapter on its own connection */
typedef struct sconn {
    redisContext *c;
    ldl_redis r;
    ldl_store s;
    ldl_store_ext x;
} sconn;

static int sconn_open(sconn *k, uint32_t timeout_ms)
{
    memset(k, 0, sizeof *k);
    k->c = rs_connect(&g_srv, timeout_ms);
    if (!k->c || ldl_redis_init(&k->r, k->c, NULL) != LDL_OK) return -1;
    k->s = ldl_redis_store(&k->r);
    k->x = ldl_redis_ext(&k->r);
    return 0;
}

/* the lock desc takes k's store, ext and the owner */
static void sconn_owned(ldl_lock_desc *d, sconn *k, const char *owner)
{
    d->store = &k->s;
    d->store_ext = &k->x;
    d->owner = owner;
}

static void sconn_close(sconn *k)
{
    if (k->c) redisFree(k->c);
    k->c = NULL;
}

/* GET name as text into out[n] ("" when missing) */
static void get_text(redisContext *c, const char *name, char *out, size_t n)
{
    redisReply *r = rs_cmd(c, "GET", name, NULL);
    out[0] = 0;
    if (r && r->type == REDIS_REPLY_STRING) snprintf(out, n, "%s", r->str);
    if (r) freeReplyObject(r);
}

/* ------------------------------------------------------------ owner and inspect (sync) */
static void test_owner_sync(redisContext *admin)
{
    int irc;
    sconn a, b;
    ldl_lock lk;
    ldl_lock_desc d;
    ldl_holder h;
    int64_t f, t = 0, t2 = 0;
    char text[160], want[160], o63[64], o64[65];
    if (sconn_open(&a, 2000) != 0 || sconn_open(&b, 2000) != 0) {
        ST_CHECK(0, "%s", "connect");
        return;
    }
    base_desc(&d, "own1", 5000);
    sconn_owned(&d, &a, "node-a:4242");
    /* init into irc first: ST_CHECK's other arguments (ldl_lock_why) read the lock,
       and the order a call evaluates its arguments in is unspecified */
    irc = ldl_lock_init(&lk, &d);
    ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
    ST_CHECK(ldl_lock_acquire(&lk) == 1, "owned acquire: %s", ldl_redis_why(&a.r));
    f = ldl_lock_fencing_token(&lk);

    /* read back from another connection */
    memset(&h, 0x55, sizeof h);
    ST_CHECK(ldl_store_inspect(&b.x, "own1", &h) == 1, "inspect held: %s", ldl_redis_why(&b.r));
    ST_CHECK(h.token == f, "inspect token %lld, want %lld", (long long)h.token, (long long)f);
    ST_CHECK(strcmp(h.owner, "node-a:4242") == 0, "inspect owner \"%s\"", h.owner);
    ST_CHECK(h.ttl_left_ms > 0 && h.ttl_left_ms <= 5000, "inspect ttl %u", (unsigned)h.ttl_left_ms);
    /* the owner key: "<token> <owner>", no expiry (decision 0104) */
    snprintf(want, sizeof want, "%lld node-a:4242", (long long)f);
    get_text(admin, "{ldl:own1}:owner", text, sizeof text);
    ST_CHECK(strcmp(text, want) == 0, "owner key \"%s\", want \"%s\"", text, want);
    ST_CHECK(rs_int(rs_cmd(admin, "PTTL", "{ldl:own1}:owner", NULL), -9) == -1, "%s", "owner key never expires");
    /* contention: an owned acquire of a held key answers 0 and leaves the owner alone */
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own1", 5000, "intruder", &t) == 0 && t == 0, "%s", "owned acquire of a held key");
    ST_CHECK(ldl_store_inspect(&b.x, "own1", &h) == 1 && strcmp(h.owner, "node-a:4242") == 0, "owner after contention \"%s\"", h.owner);
    /* renew (the v0.1 script) keeps the owner */
    ST_CHECK(ldl_lock_tick(&lk) == 1, "%s", "renew");
    ST_CHECK(ldl_store_inspect(&b.x, "own1", &h) == 1 && h.token == f && strcmp(h.owner, "node-a:4242") == 0,
             "%s", "owner after renew");
    ST_CHECK(ldl_lock_release(&lk) == 1, "%s", "release");
    ldl_lock_dispose(&lk);

    /* free: 0 and a zeroed holder; a key never used: 0 */
    memset(&h, 0x55, sizeof h);
    ST_CHECK(ldl_store_inspect(&b.x, "own1", &h) == 0, "%s", "inspect after release");
    ST_CHECK(h.token == 0 && h.ttl_left_ms == 0 && h.owner[0] == 0, "%s", "free holder zeroed");
    ST_CHECK(ldl_store_inspect(&b.x, "never-used", &h) == 0, "%s", "inspect of a never-used key");
    ST_CHECK(rs_int(rs_cmd(admin, "EXISTS", "{ldl:never-used}:lease", "{ldl:never-used}:owner",
                           "{ldl:never-used}:fence", NULL), -9) == 0, "%s", "inspect writes nothing");

    /* a plain acquire (the v0.1 script) after an owned one: owner "" although the old owner
       key is still there (its token is not the lease's) */
    ST_CHECK(b.s.acquire(b.s.ctx, "own1", 5000, &t2) == 1 && t2 > f, "plain acquire %lld", (long long)t2);
    get_text(admin, "{ldl:own1}:owner", text, sizeof text);
    ST_CHECK(strcmp(text, want) == 0, "stale owner key kept: \"%s\"", text);
    ST_CHECK(ldl_store_inspect(&a.x, "own1", &h) == 1 && h.token == t2 && h.owner[0] == 0,
             "v0.1 lease inspects token %lld owner \"%s\"", (long long)h.token, h.owner);
    /* and v0.1 / v0.2 exclude each other on one key, one fence */
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own1", 5000, "v2", &t) == 0, "%s", "owned blocked by a v0.1 lease");
    ST_CHECK(b.s.release(b.s.ctx, "own1", t2) == 1, "%s", "v0.1 release");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own1", 5000, "v2", &t) == 1 && t == t2 + 1, "owned after %lld: %lld",
             (long long)t2, (long long)t);
    ST_CHECK(b.s.acquire(b.s.ctx, "own1", 5000, &t2) == 0, "%s", "v0.1 blocked by an owned lease");
    ST_CHECK(b.s.release(b.s.ctx, "own1", t) == 1, "%s", "v0.1 release of an owned lease by its token");
    ST_CHECK(ldl_store_inspect(&a.x, "own1", &h) == 0, "%s", "free again");

    /* owner bytes: 1..LDL_OWNER_MAX-1 of printable ASCII (0x20..0x7E) */
    memset(o63, 'o', 63); o63[63] = 0;
    memset(o64, 'o', 64); o64[64] = 0;
    t = -7;
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, "", &t) == LDL_EINVAL && t == -7, "%s", "empty owner");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, NULL, &t) == LDL_EINVAL, "%s", "NULL owner");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, o64, &t) == LDL_EINVAL, "%s", "64-byte owner");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, "a\001b", &t) == LDL_EINVAL, "%s", "owner with 0x01");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, "a\177", &t) == LDL_EINVAL, "%s", "owner with 0x7F");
    ST_CHECK(rs_int(rs_cmd(admin, "EXISTS", "{ldl:own2}:fence", NULL), -9) == 0, "%s", "refused owners sent nothing");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, o63, &t) == 1, "%s", "63-byte owner");
    ST_CHECK(ldl_store_inspect(&b.x, "own2", &h) == 1 && strcmp(h.owner, o63) == 0, "%s", "63-byte owner read back");
    ST_CHECK(a.s.release(a.s.ctx, "own2", t) == 1, "%s", "release own2");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, "m\xc3\xbcller 1", &t) == LDL_EINVAL, "%s", "UTF-8 owner refused");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, "csi\x9b" "2J", &t) == LDL_EINVAL, "%s", "C1 CSI owner refused");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "own2", 5000, " ~ {x}'\"", &t) == 1, "%s", "printable ASCII edges granted");
    ST_CHECK(ldl_store_inspect(&b.x, "own2", &h) == 1 && strcmp(h.owner, " ~ {x}'\"") == 0,
             "printable owner read back \"%s\"", h.owner);
    ST_CHECK(a.s.release(a.s.ctx, "own2", t) == 1, "%s", "release own2 again");

    /* the request size the header and docs/redis.md give */
    ST_CHECK(sizeof(ldl_redis_req) <= LDL_KEY_MAX + LDL_OWNER_MAX + 48, "ldl_redis_req is %u bytes",
             (unsigned)sizeof(ldl_redis_req));
    /* the views pair with their own store kind: the non-blocking ext has no acquire_owned */
    {
        ldl_redis_async ra;
        ldl_redis_req rq[2];
        ldl_store_ext ax;
        redisContext *nc = redisConnectNonBlock("127.0.0.1", g_srv.port);
        ST_CHECK(nc && ldl_redis_async_init(&ra, nc, NULL, rq, 2) == LDL_OK, "%s", "async init");
        ax = ldl_redis_async_ext(&ra);
        ST_CHECK(ax.acquire_owned == NULL && ax.inspect == NULL && ax.submit_owned != NULL, "%s", "async ext members");
        ST_CHECK(b.x.submit_owned == NULL && b.x.acquire_owned && b.x.inspect, "%s", "sync ext members");
        base_desc(&d, "own3", 5000);
        d.store = &a.s;
        d.store_ext = &ax;
        d.owner = "x";
        irc = ldl_lock_init(&lk, &d);
        ST_CHECK(irc == LDL_EINVAL, "sync store with the async ext: %s", ldl_lock_why(&lk));
        ldl_lock_dispose(&lk);
        ST_CHECK(ldl_store_inspect(&ax, "own3", &h) == LDL_EUNSUPPORTED, "%s", "async inspect unsupported");
        if (nc) redisFree(nc);
    }
    sconn_close(&a);
    sconn_close(&b);
}

/* the new scripts' SHAs are what the server computes; NOSCRIPT falls back to EVAL */
static void test_scripts(redisContext *admin)
{
    static const char *const lua[2] = { ldl__redis_owned_lua, ldl__redis_inspect_lua };
    static const char *const sha[2] = { ldl__redis_owned_sha, ldl__redis_inspect_sha };
    sconn a;
    ldl_holder h;
    int64_t t = 0;
    int i;
    for (i = 0; i < 2; i++) {
        redisReply *r = rs_cmd(admin, "SCRIPT", "LOAD", lua[i], NULL);
        ST_CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, sha[i]) == 0,
                 "script %d: server SHA %s, header says %s", i, r && r->str ? r->str : "(none)", sha[i]);
        if (r) freeReplyObject(r);
    }
    if (sconn_open(&a, 2000) != 0) { ST_CHECK(0, "%s", "connect"); return; }
    ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush");
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "noscript", 5000, "n1", &t) == 1, "owned after FLUSH: %s", ldl_redis_why(&a.r));
    ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush 2");
    ST_CHECK(ldl_store_inspect(&a.x, "noscript", &h) == 1 && h.token == t && strcmp(h.owner, "n1") == 0,
             "inspect after FLUSH: %s", ldl_redis_why(&a.r));
    ST_CHECK(a.s.release(a.s.ctx, "noscript", t) == 1, "%s", "release");
    sconn_close(&a);
}

/* the ACL line of the header and docs/redis.md: +pttl is what inspect adds */
static void test_acl(redisContext *admin)
{
    static const char *const line[] = { "ACL", "SETUSER", "ldl-owner", "on", ">secret", "resetkeys", "~{ldl:*",
        "resetchannels", "-@all", "+evalsha", "+eval", "+exists", "+incr", "+persist", "+get", "+set",
        "+pexpire", "+del", "+pttl", NULL };
    const char *argv[24];
    size_t lens[24];
    int n, with;
    for (with = 1; with >= 0; with--) {
        redisContext *u;
        redisReply *rr;
        ldl_redis r;
        ldl_store_ext x;
        ldl_store s;
        ldl_holder h;
        int64_t t = 0;
        int rc;
        for (n = 0; line[n]; n++) { argv[n] = line[n]; lens[n] = strlen(line[n]); }
        if (!with) n--;                              /* the same line without +pttl */
        rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldl-owner", NULL), 0);
        rr = (redisReply *)redisCommandArgv(admin, n, argv, lens);
        ST_CHECK(rs_is(rr, "OK"), "ACL SETUSER (+pttl %d)", with);
        u = rs_connect(&g_srv, 2000);
        if (!ST_CHECK(u && rs_is(rs_cmd(u, "AUTH", "ldl-owner", "secret", NULL), "OK"), "%s", "AUTH")) {
            if (u) redisFree(u);
            continue;
        }
        ST_CHECK(rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "flush: EVAL as the ACL user");
        ldl_redis_init(&r, u, NULL);
        x = ldl_redis_ext(&r);
        s = ldl_redis_store(&r);
        ST_CHECK(x.acquire_owned(x.ctx, "acl-owner", 5000, "acl", &t) == 1, "owned acquire as the ACL user: %s",
                 ldl_redis_why(&r));
        rc = ldl_store_inspect(&x, "acl-owner", &h);
        if (with)
            ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "acl") == 0, "inspect as the ACL user: %d %s", rc,
                     ldl_redis_why(&r));
        else
            ST_CHECK(rc == LDL_ESTORE && h.token == 0 && (strstr(ldl_redis_why(&r), "NOPERM") ||
                                                          strstr(ldl_redis_why(&r), "can't run this command")),
                     "inspect without +pttl: %d %s", rc, ldl_redis_why(&r));
        ST_CHECK(s.release(s.ctx, "acl-owner", t) == 1, "release as the ACL user: %s", ldl_redis_why(&r));
        redisFree(u);
    }
    rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldl-owner", NULL), 0);
}

/* the keys are the lock's own (issue 31; docs/redis.md "Least privilege"): the lock's user
   (the documented line, ~{ldl:*) takes, renews, inspects and releases, and cannot touch an
   application's keys, nor lock under the application's prefix; the application's user
   (~app:*) cannot read, write, delete or script the lock's keys; an observer with ~{ldl:*
   and read commands only can inspect and cannot take. The lease is unchanged by every
   refused attempt. Real ACL users on the real server. */
static void test_acl_own(redisContext *admin)
{
    static const char *const lockline[] = { "ACL", "SETUSER", "ldl-own", "on", ">s1", "resetkeys", "~{ldl:*",
        "resetchannels", "-@all", "+evalsha", "+eval", "+exists", "+incr", "+persist", "+get", "+set",
        "+pexpire", "+del", "+pttl", NULL };
    const char *argv[24];
    size_t lens[24];
    redisContext *lu, *au, *ou;
    ldl_redis r, ra, ro;
    ldl_store s, sa;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 0, t2 = 0;
    int n, rc;
    rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldl-own", "app-own", "obs-own", NULL), 0);
    for (n = 0; lockline[n]; n++) { argv[n] = lockline[n]; lens[n] = strlen(lockline[n]); }
    ST_CHECK(rs_is((redisReply *)redisCommandArgv(admin, n, argv, lens), "OK"), "%s", "ACL SETUSER ldl-own");
    ST_CHECK(rs_is(rs_cmd(admin, "ACL", "SETUSER", "app-own", "on", ">s2", "resetkeys", "~app:*", "resetchannels",
                          "+@all", NULL), "OK"), "%s", "ACL SETUSER app-own ~app:* +@all");
    /* a read-only key selector (%R~{ldl:*) cannot serve: EVAL declares its keys read-write, so
       the server refuses the inspect script itself (seen: NOPERM). Read-only by commands: */
    ST_CHECK(rs_is(rs_cmd(admin, "ACL", "SETUSER", "obs-own", "on", ">s3", "resetkeys", "~{ldl:*", "resetchannels",
                          "-@all", "+evalsha", "+eval", "+exists", "+get", "+pttl", NULL), "OK"),
             "%s", "ACL SETUSER obs-own ~{ldl:* with read commands only");
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "app:data", "precious", NULL), "OK"), "%s", "the application's key");
    lu = rs_connect(&g_srv, 2000);
    au = rs_connect(&g_srv, 2000);
    ou = rs_connect(&g_srv, 2000);
    if (!ST_CHECK(lu && au && ou && rs_is(rs_cmd(lu, "AUTH", "ldl-own", "s1", NULL), "OK") &&
                  rs_is(rs_cmd(au, "AUTH", "app-own", "s2", NULL), "OK") &&
                  rs_is(rs_cmd(ou, "AUTH", "obs-own", "s3", NULL), "OK"), "%s", "AUTH as the three users"))
        goto out;
    ldl_redis_init(&r, lu, NULL);
    s = ldl_redis_store(&r);
    x = ldl_redis_ext(&r);
    ST_CHECK(x.acquire_owned(x.ctx, "own-job", 60000, "lock user", &t) == 1 && s.renew(s.ctx, "own-job", t, 60000) == 1,
             "the lock's user takes and renews: %s", ldl_redis_why(&r));
    /* the lock's user cannot touch the application's keys */
    {
        redisReply *e1 = rs_cmd(lu, "GET", "app:data", NULL), *e2 = rs_cmd(lu, "SET", "app:data", "x", NULL),
                   *e3 = rs_cmd(lu, "DEL", "app:data", NULL);
        ST_CHECK(e1 && e1->type == REDIS_REPLY_ERROR && strstr(e1->str, "NOPERM") && e2 && e2->type == REDIS_REPLY_ERROR &&
                 e3 && e3->type == REDIS_REPLY_ERROR, "%s", "the lock's user: GET, SET, DEL app:data answer NOPERM");
        if (e1) freeReplyObject(e1);
        if (e2) freeReplyObject(e2);
        if (e3) freeReplyObject(e3);
    }
    ldl_redis_init(&ra, lu, "app");
    sa = ldl_redis_store(&ra);
    rc = sa.acquire(sa.ctx, "own-job", 5000, &t2);
    ST_CHECK(rc == LDL_ESTORE && t2 == 0 && (strstr(ldl_redis_why(&ra), "NOPERM") || strstr(ldl_redis_why(&ra), "no permission")),
             "the lock's user under the application's prefix: LDL_ESTORE (%d: %s)", rc, ldl_redis_why(&ra));
    /* the application's user cannot touch the lock's keys */
    {
        static const char *const cmds[][4] = { { "SET", "{ldl:own-job}", "1", NULL }, { "DEL", "{ldl:own-job}", NULL, NULL },
            { "GET", "{ldl:own-job}", NULL, NULL }, { "PEXPIRE", "{ldl:own-job}", "1", NULL },
            { "INCR", "{ldl:own-job}:fence", NULL, NULL } };
        size_t i;
        int refused = 0;
        for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            redisReply *e = rs_cmd(au, cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3]);
            if (e && e->type == REDIS_REPLY_ERROR && strstr(e->str, "NOPERM")) refused++;
            else fprintf(stderr, "  app user %s %s: not refused\n", cmds[i][0], cmds[i][1]);
            if (e) freeReplyObject(e);
        }
        ST_CHECK(refused == 5, "the application's user: SET, DEL, GET, PEXPIRE, INCR on the lock's keys all NOPERM (%d)",
                 refused);
        {
            redisReply *e = rs_cmd(au, "EVAL", "return redis.call('SET', KEYS[1], '1')", "1", "{ldl:own-job}", NULL);
            ST_CHECK(e && e->type == REDIS_REPLY_ERROR, "%s", "the application's user: a script on the lock's key refused");
            if (e) freeReplyObject(e);
        }
    }
    {
        ldl_redis rb;
        ldl_store sb;
        int64_t t3 = 0;
        ldl_redis_init(&rb, au, NULL);
        sb = ldl_redis_store(&rb);
        rc = sb.release(sb.ctx, "own-job", t);
        ST_CHECK(rc == LDL_ESTORE, "the application's user through the adapter: release refused (%d: %s)", rc,
                 ldl_redis_why(&rb));
        rc = sb.acquire(sb.ctx, "own-job", 5000, &t3);
        ST_CHECK(rc == LDL_ESTORE && t3 == 0, "and acquire refused (%d)", rc);
    }
    /* the observer: inspect yes, take no */
    ldl_redis_init(&ro, ou, NULL);
    {
        ldl_store_ext ox = ldl_redis_ext(&ro);
        ldl_store os = ldl_redis_store(&ro);
        int64_t t4 = 0;
        rc = ldl_store_inspect(&ox, "own-job", &h);
        ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "lock user") == 0, "the observer (read commands only) inspects: %d %s", rc,
                 ldl_redis_why(&ro));
        rc = os.acquire(os.ctx, "obs-job", 5000, &t4);
        ST_CHECK(rc == LDL_ESTORE && t4 == 0, "the observer cannot take a lock (%d: %s)", rc, ldl_redis_why(&ro));
    }
    rc = ldl_store_inspect(&x, "own-job", &h);
    ST_CHECK(rc == 1 && h.token == t && h.ttl_left_ms > 50000, "the lease is as the lock's user left it (%d, token %lld)", rc,
             (long long)h.token);
    ST_CHECK(rs_is(rs_cmd(admin, "GET", "app:data", NULL), "precious"), "%s", "the application's key is as it was");
    ST_CHECK(s.release(s.ctx, "own-job", t) == 1, "the lock's user releases: %s", ldl_redis_why(&r));
out:
    if (lu) redisFree(lu);
    if (au) redisFree(au);
    if (ou) redisFree(ou);
    rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldl-own", "app-own", "obs-own", NULL), 0);
    rs_int(rs_cmd(admin, "DEL", "app:data", NULL), 0);
}

/* ------------------------------------------------------------ inspect fails closed */
static void test_malformed(redisContext *admin)
{
    static const struct { const char *lease; const char *px; const char *owner; const char *what; } bad[] = {
        { "abc", "5000", NULL, "lease holds no token" },
        { "0",   "5000", NULL, "token 0" },
        { "-3",  "5000", NULL, "negative token" },
        { "9223372036854775808", "5000", NULL, "token above INT64_MAX" },
        { "7",   NULL,   NULL, "lease without expiry (PTTL -1)" },
        { "7",   "5000", "7 bad\001owner", "owner with a control byte" },
        { "7",   "5000", "7 bad\177", "owner with 0x7F" },
        { "7",   "5000", "7 oooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooo",
          "owner of 64 bytes" },
    };
    sconn a;
    ldl_holder h;
    size_t k;
    if (sconn_open(&a, 2000) != 0) { ST_CHECK(0, "%s", "connect"); return; }
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        redisReply *r;
        int rc;
        rs_int(rs_cmd(admin, "DEL", "{ldl:tamper}:lease", "{ldl:tamper}:owner", NULL), 0);
        r = bad[k].px ? rs_cmd(admin, "SET", "{ldl:tamper}:lease", bad[k].lease, "PX", bad[k].px, NULL)
                      : rs_cmd(admin, "SET", "{ldl:tamper}:lease", bad[k].lease, NULL);
        ST_CHECK(rs_is(r, "OK"), "set %s", bad[k].what);
        if (bad[k].owner) ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:tamper}:owner", bad[k].owner, NULL), "OK"), "%s", "set owner");
        memset(&h, 0x55, sizeof h);
        rc = ldl_store_inspect(&a.x, "tamper", &h);
        ST_CHECK(rc == LDL_ESTORE, "%s: inspect %d, want LDL_ESTORE", bad[k].what, rc);
        ST_CHECK(h.token == 0 && h.ttl_left_ms == 0 && h.owner[0] == 0, "%s: holder not zeroed", bad[k].what);
        ST_CHECK(a.c->err == 0, "%s: a malformed answer with our nonce keeps the link", bad[k].what);
    }
    /* the controls: an owner key naming another token, and an empty owner, read as "" */
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:tamper}:lease", "7", "PX", "5000", NULL), "OK"), "%s", "set");
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:tamper}:owner", "8 someone", NULL), "OK"), "%s", "set");
    ST_CHECK(ldl_store_inspect(&a.x, "tamper", &h) == 1 && h.token == 7 && h.owner[0] == 0, "other token's owner: \"%s\"", h.owner);
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:tamper}:owner", "7 ", NULL), "OK"), "%s", "set");
    ST_CHECK(ldl_store_inspect(&a.x, "tamper", &h) == 1 && h.token == 7 && h.owner[0] == 0, "%s", "empty owner");
    ST_CHECK(rs_is(rs_cmd(admin, "SET", "{ldl:tamper}:owner", "7 ok owner", NULL), "OK"), "%s", "set");
    ST_CHECK(ldl_store_inspect(&a.x, "tamper", &h) == 1 && strcmp(h.owner, "ok owner") == 0, "%s", "control owner");
    /* a wrong type: the server's error, LDL_ESTORE */
    rs_int(rs_cmd(admin, "DEL", "{ldl:tamper}:lease", NULL), 0);
    rs_int(rs_cmd(admin, "HSET", "{ldl:tamper}:lease", "f", "v", NULL), 0);
    ST_CHECK(ldl_store_inspect(&a.x, "tamper", &h) == LDL_ESTORE && h.token == 0, "%s", "wrong type");
    ST_CHECK(strstr(ldl_redis_why(&a.r), "WRONGTYPE") != NULL, "why: %s", ldl_redis_why(&a.r));
    rs_int(rs_cmd(admin, "DEL", "{ldl:tamper}:lease", "{ldl:tamper}:owner", NULL), 0);
    sconn_close(&a);
}

/* the hostile server's replies (shapes an inspect never answers with) */
static void test_hostile(void)
{
    static const char scen[] = "Gintgse";
    rs_hostile hs;
    size_t k;
    if (!ST_CHECK(rs_hostile_start(&hs) == 0, "%s", "hostile server")) return;
    for (k = 0; k < sizeof scen - 1; k++) {
        redisContext *c;
        ldl_redis r;
        ldl_store_ext x;
        ldl_holder h;
        int rc;
        rs_hostile_next(&hs, scen[k]);
        c = rs_connect_port(hs.port, 500);
        ST_CHECK(c != NULL, "connect %c", scen[k]);
        if (!c) continue;
        ldl_redis_init(&r, c, NULL);
        x = ldl_redis_ext(&r);
        memset(&h, 0x55, sizeof h);
        rc = ldl_store_inspect(&x, "k", &h);
        ST_CHECK(rc == LDL_ESTORE, "inspect, scenario %c: %d, want LDL_ESTORE (why %s)", scen[k], rc, ldl_redis_why(&r));
        ST_CHECK(h.token == 0 && h.owner[0] == 0, "scenario %c: holder not zeroed", scen[k]);
        rs_hostile_answered(&hs, 8000);
        rs_hostile_done(&hs);
        redisFree(c);
    }
    {   /* the control: the owned acquire reads the hostile server's correct grant */
        redisContext *c;
        ldl_redis r;
        ldl_store_ext x;
        int64_t t = 0;
        rs_hostile_next(&hs, 'G');
        c = rs_connect_port(hs.port, 500);
        if (ST_CHECK(c != NULL, "%s", "connect G")) {
            ldl_redis_init(&r, c, NULL);
            x = ldl_redis_ext(&r);
            ST_CHECK(x.acquire_owned(x.ctx, "k", 1000, "me", &t) == 1 && t == 77, "control grant %lld: %s",
                     (long long)t, ldl_redis_why(&r));
            rs_hostile_answered(&hs, 8000);
            rs_hostile_done(&hs);
            redisFree(c);
        }
    }
    rs_hostile_stop(&hs);
}

/* ------------------------------------------------------------ the non-blocking view */
static redisContext *connect_nb(void)
{
    redisContext *c = redisConnectNonBlock("127.0.0.1", g_srv.port);
    if (c && c->err) { redisFree(c); return NULL; }
    return c;
}

/* acquire through a pumped non-blocking store: 1 once HELD (within ms) */
static void pump_single(void *ra) { ldl_redis_async_pump((ldl_redis_async *)ra); }
static void pump_cluster(void *ra) { ldl_redis_cluster_async_pump((ldl_redis_cluster_async *)ra); }
static int acquire_pumped(ldl_lock *lk, void (*pump)(void *), void *ra, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    ldl_lock_acquire(lk);
    while (ldl_lock_state(lk) == LDL_ACQUIRING && st_now_ms() < end) {
        pump(ra);
        ldl_lock_poll(lk);
        st_sleep_ms(1);
    }
    return ldl_lock_state(lk) == LDL_HELD;
}

/* a cancelled owned acquire whose grant comes after SIGCONT: the adapter hands it back */
static void test_cancel_owned(redisContext *admin)
{
    int irc;
    redisContext *nc = connect_nb();
    ldl_redis_async ra;
    ldl_redis_req rq[4];
    ldl_async_store as;
    ldl_store_ext ax;
    ldl_lock lk;
    ldl_lock_desc d;
    uint64_t end;
    if (!ST_CHECK(nc && ldl_redis_async_init(&ra, nc, NULL, rq, 4) == LDL_OK, "%s", "async init")) return;
    as = ldl_redis_async_store(&ra);
    ax = ldl_redis_async_ext(&ra);
    base_desc(&d, "cancelled", 5000);
    d.async_store = &as;
    d.store_ext = &ax;
    d.owner = "late";
    irc = ldl_lock_init(&lk, &d);
    ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
    end = st_now_ms() + 2000;                       /* connected first (the fd waits to read) */
    for (;;) {
        int ev = 0;
        if (ldl_redis_async_pump(&ra) < 0 || ldl_redis_async_fd(&ra, &ev) < 0 || (ev & LDL_WANT_READ) ||
            st_now_ms() >= end)
            break;
        st_sleep_ms(1);
    }
    kill(g_srv.pid, SIGSTOP);
    ST_CHECK(ldl_lock_acquire(&lk) == LDL_EINPROGRESS, "%s", "acquire in flight");
    ldl_redis_async_pump(&ra);                      /* written */
    ST_CHECK(ldl_lock_release(&lk) == 0 && ldl_lock_state(&lk) == LDL_RELEASED, "%s", "release cancels");
    kill(g_srv.pid, SIGCONT);
    end = st_now_ms() + 5000;
    while (st_now_ms() < end && (ldl_redis_async_stats(&ra)->live > 0 || ldl_redis_async_stats(&ra)->handed_back == 0)) {
        if (ldl_redis_async_pump(&ra) < 0) break;
        st_sleep_ms(1);
    }
    ST_CHECK(ldl_redis_async_stats(&ra)->handed_back == 1, "handed back %llu",
             (unsigned long long)ldl_redis_async_stats(&ra)->handed_back);
    ST_CHECK(rs_int(rs_cmd(admin, "EXISTS", "{ldl:cancelled}:lease", NULL), -9) == 0, "%s", "the late owned grant was released");
    ldl_lock_dispose(&lk);
    redisFree(nc);
}

/* the phantom lease, owned: a synchronous owned acquire that timed out still runs when the
   server resumes, and inspect names the owner that gave up on it (docs/redis.md) */
static void test_phantom_owned(void)
{
    sconn a, b;
    ldl_holder h;
    int64_t t = -1;
    int rc = 0;
    uint64_t end;
    if (sconn_open(&a, 200) != 0 || sconn_open(&b, 2000) != 0) { ST_CHECK(0, "%s", "connect"); return; }
    kill(g_srv.pid, SIGSTOP);
    ST_CHECK(a.x.acquire_owned(a.x.ctx, "phantom", 5000, "gave-up", &t) == LDL_ESTORE && t == -1,
             "timed-out owned acquire: %s", ldl_redis_why(&a.r));
    kill(g_srv.pid, SIGCONT);
    end = st_now_ms() + 3000;
    while (st_now_ms() < end && (rc = ldl_store_inspect(&b.x, "phantom", &h)) == 0) st_sleep_ms(5);
    ST_CHECK(rc == 1 && h.token >= 1 && strcmp(h.owner, "gave-up") == 0, "phantom: %d owner \"%s\"", rc,
             rc == 1 ? h.owner : "");
    if (rc == 1) b.s.release(b.s.ctx, "phantom", h.token);
    sconn_close(&a);
    sconn_close(&b);
}

/* ------------------------------------------------------------ ride-out */
typedef struct rider {
    int lost_calls, lost_reason;
    int renew_errors;
} rider;

static void rider_lost(void *user, int reason)
{
    rider *r = (rider *)user;
    r->lost_calls++;
    r->lost_reason = reason;
}

static void rider_event(void *user, const ldl_event *ev)
{
    rider *r = (rider *)user;
    if (ev->kind == LDL_EV_RENEW_ERROR) r->renew_errors++;
}

#define RIDE_TTL  3000u         /* window 2968 ms (drift 32) */
#define RIDE_BEAT 600u
#define RIDE_STOP 1500u         /* the server is stopped this long, from just after a renew */

static void ride_desc(ldl_lock_desc *d, const char *key, int ride, rider *rd)
{
    base_desc(d, key, RIDE_TTL);
    d->heartbeat_ms = RIDE_BEAT;
    d->ride_out_ms = ride ? 150 : 0;
    d->on_lost = rider_lost;
    d->on_event = rider_event;
    d->user = rd;
}

static void ride_check(const char *view, int ride, ldl_lock *lk, const rider *rd, int64_t f,
                       uint32_t renewals_after, const char *owner, const char *key)
{
    if (ride) {
        sconn b;
        ldl_holder h;
        ST_CHECK(rd->lost_calls == 0 && ldl_lock_state(lk) == LDL_HELD,
                 "%s ride-out: lost %d (%s), state %s", view, rd->lost_calls, ldl_reason_name(rd->lost_reason),
                 ldl_state_name(ldl_lock_state(lk)));
        ST_CHECK(ldl_lock_fencing_token(lk) == f, "%s ride-out: same fence", view);
        ST_CHECK(rd->renew_errors >= 1 && ldl_lock_counters(lk)->store_errors >= 1,
                 "%s ride-out: renew errors %d, store errors %u", view, rd->renew_errors,
                 (unsigned)ldl_lock_counters(lk)->store_errors);
        ST_CHECK(renewals_after >= 1, "%s ride-out: %u renewals after SIGCONT", view, (unsigned)renewals_after);
        ST_CHECK(ldl_lock_raw_answer(lk) == 1, "%s ride-out: raw answer %d", view, ldl_lock_raw_answer(lk));
        if (sconn_open(&b, 2000) == 0) {
            ST_CHECK(ldl_store_inspect(&b.x, key, &h) == 1 && h.token == f && strcmp(h.owner, owner) == 0,
                     "%s ride-out: inspect token %lld owner \"%s\"", view, (long long)h.token, h.owner);
            sconn_close(&b);
        }
    } else {
        ST_CHECK(ldl_lock_state(lk) == LDL_LOST && rd->lost_calls == 1 && rd->lost_reason == LDL_REASON_STORE_ERROR,
                 "%s without ride-out: state %s, lost %d (%s), want LOST once with STORE_ERROR", view,
                 ldl_state_name(ldl_lock_state(lk)), rd->lost_calls, ldl_reason_name(rd->lost_reason));
        ST_CHECK(rd->renew_errors == 0, "%s without ride-out: %d RENEW_ERROR events", view, rd->renew_errors);
    }
}

/* the pause: the server SIGSTOPped just after the lock's first renew, SIGCONTed RIDE_STOP
   later; pause_step answers 1 once the run is over (the lease lost, or renewed after it) */
typedef struct pause_state { int stopped; uint64_t t_stop, t_cont; uint32_t ren0; } pause_state;

static int pause_step(pause_state *p, ldl_lock *lk)
{
    if (!p->stopped && ldl_lock_counters(lk)->renewals >= 1) {
        kill(g_srv.pid, SIGSTOP);
        p->stopped = 1;
        p->t_stop = st_now_ms();
    }
    if (p->stopped == 1 && st_now_ms() >= p->t_stop + RIDE_STOP) {
        kill(g_srv.pid, SIGCONT);
        p->stopped = 2;
        p->t_cont = st_now_ms();
        p->ren0 = ldl_lock_counters(lk)->renewals;
    }
    return ldl_lock_state(lk) != LDL_HELD ||
           (p->stopped == 2 && ldl_lock_counters(lk)->renewals >= p->ren0 + 1);
}

/* the server runs again; the line with the figures */
static void pause_end(pause_state *p, const char *view, int ride, ldl_lock *lk, const rider *rd)
{
    if (p->stopped == 1) { kill(g_srv.pid, SIGCONT); p->t_cont = st_now_ms(); }
    fprintf(stderr, "ride-out %s %s: stopped %llu ms, %d renew errors, %u store errors\n", view, ride ? "on" : "off",
            (unsigned long long)(p->t_cont - p->t_stop), rd->renew_errors,
            (unsigned)ldl_lock_counters(lk)->store_errors);
}

/* synchronous view, 200 ms command timeout; the loop reconnects a context the adapter failed */
static void test_rideout_sync(int ride)
{
    int irc;
    sconn a;
    ldl_lock lk;
    ldl_lock_desc d;
    rider rd;
    int64_t f;
    uint64_t end;
    pause_state ps;
    const char *key = ride ? "ride-sync-on" : "ride-sync-off";
    memset(&rd, 0, sizeof rd);
    memset(&ps, 0, sizeof ps);
    if (sconn_open(&a, 200) != 0) { ST_CHECK(0, "%s", "connect"); return; }
    ride_desc(&d, key, ride, &rd);
    sconn_owned(&d, &a, "rider-sync");
    irc = ldl_lock_init(&lk, &d);
    ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
    ST_CHECK(ldl_lock_acquire(&lk) == 1, "acquire: %s", ldl_redis_why(&a.r));
    f = ldl_lock_fencing_token(&lk);
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        uint32_t due;
        if (a.c->err) rs_reconnect(a.c, 200);
        ldl_lock_poll(&lk);
        if (pause_step(&ps, &lk)) break;
        due = ldl_lock_due_in_ms(&lk);
        st_sleep_ms(due < 10 ? (due ? due : 1) : 10);
    }
    pause_end(&ps, "sync", ride, &lk, &rd);
    ride_check("sync", ride, &lk, &rd, f, ldl_lock_counters(&lk)->renewals - ps.ren0, "rider-sync", key);
    if (a.c->err) rs_reconnect(a.c, 200);
    ldl_lock_release(&lk);
    ldl_lock_dispose(&lk);
    sconn_close(&a);
}

/* non-blocking view: a stall meter fails the link after 200 ms without progress, the loop
   reconnects (the lock's renew, in flight, answers a store error either way) */
static void test_rideout_async(int ride)
{
    int irc;
    redisContext *nc = connect_nb();
    ldl_redis_async ra;
    ldl_redis_req rq[8];
    ldl_async_store as;
    ldl_store_ext ax;
    ldl_lock lk;
    ldl_lock_desc d;
    rider rd;
    int64_t f = 0;
    uint64_t end;
    pause_state ps;
    const char *key = ride ? "ride-async-on" : "ride-async-off";
    memset(&rd, 0, sizeof rd);
    memset(&ps, 0, sizeof ps);
    if (!ST_CHECK(nc && ldl_redis_async_init(&ra, nc, NULL, rq, 8) == LDL_OK, "%s", "async init")) return;
    as = ldl_redis_async_store(&ra);
    ax = ldl_redis_async_ext(&ra);
    ride_desc(&d, key, ride, &rd);
    d.async_store = &as;
    d.store_ext = &ax;
    d.owner = "rider-async";
    irc = ldl_lock_init(&lk, &d);
    ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
    ST_CHECK(acquire_pumped(&lk, pump_single, &ra, 3000), "async owned acquire: %s", ldl_redis_async_why(&ra));
    f = ldl_lock_fencing_token(&lk);
    {   /* submit_owned stored the owner: read it from a synchronous connection */
        sconn b;
        ldl_holder h;
        if (sconn_open(&b, 2000) == 0) {
            ST_CHECK(ldl_store_inspect(&b.x, key, &h) == 1 && h.token == f && strcmp(h.owner, "rider-async") == 0,
                     "async owner read back: token %lld owner \"%s\"", (long long)h.token, h.owner);
            sconn_close(&b);
        }
    }
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        if (ldl_redis_async_pump(&ra) < 0) ldl_redis_async_reconnect(&ra);
        else if (ldl_redis_async_stalled_ms(&ra) > 200) ldl_redis_async_fail(&ra, "stalled 200 ms");
        ldl_lock_poll(&lk);
        if (pause_step(&ps, &lk)) break;
        st_sleep_ms(2);
    }
    pause_end(&ps, "async", ride, &lk, &rd);
    fprintf(stderr, "ride-out async %s: %llu link failures\n", ride ? "on" : "off",
            (unsigned long long)ldl_redis_async_stats(&ra)->link_failures);
    ride_check("async", ride, &lk, &rd, f, ldl_lock_counters(&lk)->renewals - ps.ren0, "rider-async", key);
    ldl_lock_dispose(&lk);
    end = st_now_ms() + 2000;                        /* let the hand-back go out */
    while (st_now_ms() < end && ldl_redis_async_stats(&ra)->live > 0 && ldl_redis_async_pump(&ra) >= 0)
        st_sleep_ms(1);
    redisFree(nc);
}

/* ------------------------------------------------------------ campaign: three processes */
#define C_TTL    800u
#define C_DRIFT  10u
#define C_WINDOW (C_TTL - C_DRIFT)
#define C_ROUNDS 12
#define C_SLOTS  3
#define C_MAXIV  256

enum { R_LEAD = 1, R_TRUST = 2, R_LOST = 3, R_END = 4, R_BYE = 5 };
typedef struct crec {            /* one record, written atomically to the worker's pipe */
    int32_t kind, slot, pid, reason;
    int64_t fence, t0, t1;
} crec;

static int g_wout = -1, g_wslot, g_wleads;
static uint64_t g_wclock;        /* the lock's last clock read */

/* the lock's clock (CLOCK_MONOTONIC, as st_now_ms), remembering its last read */
static uint64_t w_clock(void *ctx) { (void)ctx; return g_wclock = st_now_ms(); }

static void w_put(int kind, int reason, int64_t fence, uint64_t t0, uint64_t t1)
{
    crec r;
    ssize_t n;
    memset(&r, 0, sizeof r);
    r.kind = kind; r.slot = g_wslot; r.pid = (int32_t)getpid(); r.reason = reason;
    r.fence = fence; r.t0 = (int64_t)t0; r.t1 = (int64_t)t1;
    do { n = write(g_wout, &r, sizeof r); } while (n < 0 && errno == EINTR);
}

/* the trust windows, from the events. The core reads its clock once when it applies an
   answer and emits GRANTED / RENEWED with latency = that read - start (start: its read before
   the call) and no clock read in between, so g_wclock - latency is start exactly and
   start + window the lock's own deadline; a grant is applied (trusted) from g_wclock on,
   after the server granted it. Exact values: a process descheduled inside the hook does
   not stretch its logged window. */
static void w_event(void *user, const ldl_event *ev)
{
    uint64_t now = g_wclock;
    (void)user;
    if (ev->kind == LDL_EV_GRANTED)
        w_put(R_LEAD, 0, ev->token, now, now - ev->latency_ms + C_WINDOW);
    else if (ev->kind == LDL_EV_RENEWED)
        w_put(R_TRUST, 0, ev->token, 0, now - ev->latency_ms + C_WINDOW);
    else if (ev->kind == LDL_EV_LOST)
        w_put(R_LOST, ev->reason, ev->token, now, 0);
}

static void w_leading(void *user, int64_t fence) { (void)user; (void)fence; g_wleads++; }

static int campaign_worker(void *arg, int in, int out)
{
    sconn a;
    ldl_lock lk;
    ldl_lock_desc d;
    char owner[32];
    g_wslot = (int)(intptr_t)arg;
    g_wout = out;
    g_wleads = 0;
    if (sconn_open(&a, 300) != 0) return 10;
    snprintf(owner, sizeof owner, "w%d-%d", g_wslot, (int)getpid());
    base_desc(&d, "elect", C_TTL);
    d.drift_ms = C_DRIFT;
    sconn_owned(&d, &a, owner);
    d.campaign = 1;
    d.retry.base_ms = 40;
    d.retry.cap_ms = 200;
    d.retry.seed = (uint64_t)getpid() * 2654435761u + 1u;
    d.ride_out_ms = 100;
    d.on_event = w_event;
    d.on_leading = w_leading;
    d.clock.now_ms = w_clock;
    if (ldl_lock_init(&lk, &d) != LDL_OK) return 11;
    ldl_lock_acquire(&lk);                          /* the campaign begins */
    for (;;) {
        struct pollfd p;
        uint32_t due;
        int r;
        if (a.c->err) rs_reconnect(a.c, 300);
        ldl_lock_poll(&lk);
        due = ldl_lock_due_in_ms(&lk);
        p.fd = in; p.events = POLLIN; p.revents = 0;
        r = poll(&p, 1, (int)(due < 20 ? due : 20));
        if (r > 0) break;                           /* 'q', or EOF: the parent is gone */
    }
    w_put(R_END, 0, 0, st_now_ms(), 0);             /* trust ends no later than here */
    if (a.c->err) rs_reconnect(a.c, 300);
    ldl_lock_release(&lk);                          /* steps down */
    w_put(R_BYE, 0, g_wleads, 0, 0);
    ldl_lock_dispose(&lk);
    sconn_close(&a);
    return 0;
}

typedef struct civ { int pid, slot, released; int64_t fence, begin, end; } civ;

typedef struct cslot {
    st_child ch;
    int pid;
    int alive;
    int lost_pending;            /* lost, and not led since */
    int bye, bye_leads;
    size_t rbuf_n;
    char rbuf[sizeof(crec) * 8];
} cslot;

static cslot g_slot[C_SLOTS];
static civ g_iv[C_MAXIV];
static size_t g_niv;
static int g_leader = -1;        /* slot whose process leads, by the records read */
static int g_leads_by_pid_ok = 1;
static int g_losses, g_stray;

static civ *iv_find(int pid, int64_t fence)
{
    size_t i;
    for (i = g_niv; i-- > 0;)
        if (g_iv[i].pid == pid && g_iv[i].fence == fence) return &g_iv[i];
    return NULL;
}

static void c_apply(const crec *r)
{
    cslot *s;
    civ *v;
    if (r->slot < 0 || r->slot >= C_SLOTS || r->pid != g_slot[r->slot].pid) { g_stray++; return; }
    s = &g_slot[r->slot];
    switch (r->kind) {
    case R_LEAD:
        if (g_niv < C_MAXIV) {
            v = &g_iv[g_niv++];
            v->pid = r->pid; v->slot = r->slot; v->fence = r->fence; v->begin = r->t0; v->end = r->t1;
            v->released = 0;
        }
        s->lost_pending = 0;
        g_leader = r->slot;
        break;
    case R_TRUST:
        if ((v = iv_find(r->pid, r->fence)) != NULL && r->t1 > v->end) v->end = r->t1;
        break;
    case R_LOST:
        g_losses++;
        s->lost_pending = 1;
        if (g_leader == r->slot) g_leader = -1;
        break;
    case R_END: {
        size_t i;
        for (i = g_niv; i-- > 0;)
            if (g_iv[i].pid == r->pid) {
                if (g_iv[i].end > r->t0) { g_iv[i].end = r->t0; g_iv[i].released = 1; }
                break;
            }
        if (g_leader == r->slot) g_leader = -1;
        break;
    }
    case R_BYE:
        s->bye = 1;
        s->bye_leads = (int)r->fence;
        break;
    default:
        g_stray++;
    }
}

/* read what a slot's pipe holds; 0 on EOF */
static int c_read_slot(cslot *s)
{
    ssize_t n;
    size_t k;
    do { n = read(s->ch.from_child, s->rbuf + s->rbuf_n, sizeof s->rbuf - s->rbuf_n); } while (n < 0 && errno == EINTR);
    if (n <= 0) return n == 0 ? 0 : 1;
    s->rbuf_n += (size_t)n;
    for (k = 0; k + sizeof(crec) <= s->rbuf_n; k += sizeof(crec)) {
        crec r;
        memcpy(&r, s->rbuf + k, sizeof r);
        c_apply(&r);
    }
    memmove(s->rbuf, s->rbuf + k, s->rbuf_n - k);
    s->rbuf_n -= k;
    return 1;
}

/* read records for up to ms, returning early once pred() holds */
static int c_drain(uint32_t ms, int (*pred)(void *), void *arg)
{
    uint64_t end = st_now_ms() + ms;
    for (;;) {
        struct pollfd p[C_SLOTS];
        int i, n = 0, map[C_SLOTS];
        uint64_t now;
        if (pred && pred(arg)) return 1;
        now = st_now_ms();
        if (now >= end) return pred ? pred(arg) : 1;
        for (i = 0; i < C_SLOTS; i++) {
            if (!g_slot[i].alive) continue;
            p[n].fd = g_slot[i].ch.from_child; p[n].events = POLLIN; p[n].revents = 0;
            map[n++] = i;
        }
        if (poll(p, (nfds_t)n, (int)(end - now < 20 ? end - now : 20)) > 0) {
            for (i = 0; i < n; i++)
                if (p[i].revents) c_read_slot(&g_slot[map[i]]);
        }
    }
}

static int pred_leader_is(void *arg) { return g_leader == *(int *)arg; }
static int pred_any_leader(void *arg) { (void)arg; return g_leader >= 0; }
static int pred_lost(void *arg) { return g_slot[*(int *)arg].lost_pending; }
static int pred_all_bye(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < C_SLOTS; i++) if (g_slot[i].alive && !g_slot[i].bye) return 0;
    return 1;
}

static int c_spawn(int slot)
{
    cslot *s = &g_slot[slot];
    memset(s, 0, sizeof *s);
    if (st_fork(&s->ch, campaign_worker, (void *)(intptr_t)slot) != 0) return -1;
    s->pid = (int)s->ch.pid;
    s->alive = 1;
    return 0;
}

/* a killed slot: read what it wrote before it died, then reap it */
static void c_reap_killed(int slot)
{
    cslot *s = &g_slot[slot];
    uint64_t end = st_now_ms() + 3000;
    while (st_now_ms() < end) {
        struct pollfd p;
        p.fd = s->ch.from_child; p.events = POLLIN; p.revents = 0;
        if (poll(&p, 1, 20) > 0 && c_read_slot(s) == 0) break;
    }
    st_join(&s->ch, 5000);
    s->alive = 0;
}

/* the holder by inspect: its (token, owner) must be a logged grant's */
static void c_inspect(sconn *adm)
{
    ldl_holder h;
    int rc = ldl_store_inspect(&adm->x, "elect", &h), tries;
    civ *v = NULL;
    char want[32];
    if (rc == 0) return;                            /* free for a moment: nothing to compare */
    if (!ST_CHECK(rc == 1, "campaign inspect: %d (%s)", rc, ldl_redis_why(&adm->r))) return;
    for (tries = 0; tries < 20 && !v; tries++) {
        size_t i;
        for (i = 0; i < g_niv && !v; i++) if (g_iv[i].fence == h.token) v = &g_iv[i];
        if (!v) c_drain(50, NULL, NULL);
    }
    if (!ST_CHECK(v != NULL, "campaign inspect: token %lld owner \"%s\" was never logged as a grant",
                  (long long)h.token, h.owner)) return;
    snprintf(want, sizeof want, "w%d-%d", v->slot, v->pid);
    ST_CHECK(strcmp(h.owner, want) == 0, "campaign inspect: token %lld owner \"%s\", the grant was %s",
             (long long)h.token, h.owner, want);
}

static int civ_cmp(const void *a, const void *b)
{
    const civ *x = (const civ *)a, *y = (const civ *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->fence < y->fence ? -1 : x->fence > y->fence);
}

static void test_campaign(void)
{
    sconn adm;
    int i, round, ok = 1, kills = 0, stops = 0, extra = 0;
    uint64_t t0 = st_now_ms();
    int64_t worst_gap = -1;       /* the closest takeover of a lease that was not released */
    int slot_leads[C_SLOTS] = { 0, 0, 0 };
    if (sconn_open(&adm, 2000) != 0) { ST_CHECK(0, "%s", "connect"); return; }
    for (i = 0; i < C_SLOTS; i++) ST_CHECK(c_spawn(i) == 0, "spawn %d", i);
    for (round = 0; ok && (round < C_ROUNDS || extra < 4); round++) {
        int L, N = -1, T, kill_round, pend = -1;
        if (round >= C_ROUNDS) {                    /* extra rounds only for a loser still waiting */
            for (i = 0; i < C_SLOTS; i++) if (g_slot[i].lost_pending) pend = i;
            if (pend < 0) break;
            extra++;
        }
        if (!ST_CHECK(c_drain(6000, pred_any_leader, NULL), "round %d: nobody leads", round)) { ok = 0; break; }
        L = g_leader;
        c_inspect(&adm);
        /* the next leader: a loser that has not led since, else the next slot */
        for (i = 1; i < C_SLOTS; i++) if (g_slot[(L + i) % C_SLOTS].lost_pending) { N = (L + i) % C_SLOTS; break; }
        if (N < 0) N = (L + 1 + (round / 2) % 2) % C_SLOTS;
        T = 3 - L - N;
        kill_round = round >= C_ROUNDS || (round % 2) == 1;   /* S K S K ... then K */
        kill(g_slot[T].pid, SIGSTOP);               /* the third stays out of this takeover */
        if (kill_round) {
            kill(g_slot[L].pid, SIGKILL);
            c_reap_killed(L);
            kills++;
        } else {
            kill(g_slot[L].pid, SIGSTOP);
            stops++;
        }
        if (!ST_CHECK(c_drain(8000, pred_leader_is, &N), "round %d: slot %d did not take over from %d", round, N, L))
            ok = 0;
        c_inspect(&adm);
        kill(g_slot[T].pid, SIGCONT);
        if (kill_round) {
            if (!ST_CHECK(c_spawn(L) == 0, "respawn %d", L)) ok = 0;
        } else {
            kill(g_slot[L].pid, SIGCONT);           /* finds its deadline passed: LOST */
            if (!ST_CHECK(c_drain(5000, pred_lost, &L), "round %d: stopped leader %d never saw its loss", round, L))
                ok = 0;
        }
    }
    /* stop: everyone steps down and reports its on_leading count */
    for (i = 0; i < C_SLOTS; i++) {
        if (!g_slot[i].alive) continue;
        kill(g_slot[i].pid, SIGCONT);
        st_send(g_slot[i].ch.to_child, 'q');
    }
    ST_CHECK(c_drain(8000, pred_all_bye, NULL), "%s", "every worker said bye");
    for (i = 0; i < C_SLOTS; i++) {
        if (!g_slot[i].alive) continue;
        while (c_read_slot(&g_slot[i]) > 0) { }
        ST_CHECK(st_join(&g_slot[i].ch, 5000) == 0, "worker %d exit", i);
        g_slot[i].alive = 0;
    }

    /* at most one trusts at any moment; fences rise at every takeover */
    qsort(g_iv, g_niv, sizeof g_iv[0], civ_cmp);
    {
        int64_t max_end = 0;
        size_t k, bad = 0;
        int prev_released = 0;
        for (k = 0; k < g_niv; k++) {
            if (k > 0) {
                int64_t gap = g_iv[k].begin - max_end;
                if (gap < 0 || g_iv[k].fence <= g_iv[k - 1].fence) {
                    if (bad++ < 5)
                        ST_CHECK(0, "campaign: grant %lld (pid %d) at %lld overlaps trust until %lld, or its fence "
                                 "does not rise over %lld", (long long)g_iv[k].fence, g_iv[k].pid,
                                 (long long)g_iv[k].begin, (long long)max_end, (long long)g_iv[k - 1].fence);
                }
                if (!prev_released && (worst_gap < 0 || gap < worst_gap)) worst_gap = gap;
            }
            if (g_iv[k].end > max_end) { max_end = g_iv[k].end; prev_released = g_iv[k].released; }
            slot_leads[g_iv[k].slot]++;
        }
        ST_CHECK(bad == 0, "campaign: %u overlapping or non-rising grants", (unsigned)bad);
    }
    ST_CHECK(g_niv >= (size_t)C_ROUNDS + 1, "campaign: %u grants for %d rounds", (unsigned)g_niv, C_ROUNDS);
    ST_CHECK(stops >= C_ROUNDS / 2 && kills >= C_ROUNDS / 2, "campaign: %d stops, %d kills", stops, kills);
    ST_CHECK(g_stray == 0, "campaign: %d records out of place", g_stray);
    /* each process that lost led again; on_leading counts match the grants */
    {
        size_t k, j;
        for (i = 0; i < C_SLOTS; i++)
            ST_CHECK(!g_slot[i].lost_pending, "campaign: slot %d lost and never led again", i);
        for (k = 0; k < g_niv; k++) {
            int pid = g_iv[k].pid, n = 0;
            for (j = 0; j < g_niv; j++) if (g_iv[j].pid == pid) n++;
            for (i = 0; i < C_SLOTS; i++)
                if (g_slot[i].pid == pid && g_slot[i].bye && g_slot[i].bye_leads != n) g_leads_by_pid_ok = 0;
        }
        ST_CHECK(g_leads_by_pid_ok, "%s", "campaign: on_leading counts differ from the logged grants");
        for (i = 0; i < C_SLOTS; i++)
            ST_CHECK(slot_leads[i] >= 2, "campaign: slot %d led %d times", i, slot_leads[i]);
    }
    fprintf(stderr, "campaign: %u grants, %d losses seen, %d stops, %d kills, %d extra rounds, closest takeover "
            "%lld ms after the previous holder's trust ended, %llu ms\n", (unsigned)g_niv, g_losses, stops, kills, extra,
            (long long)worst_gap, (unsigned long long)(st_now_ms() - t0));
    sconn_close(&adm);
}

/* ------------------------------------------------------------ Redis Cluster */
static void test_cluster(void)
{
    int irc;
    static ldl_redis_cluster rc;
    static ldl_redis_cluster_async ra;
    static ldl_redis_cluster_req rq[16];
    char keys[3][16], masters[3][40];
    int nk = 0, i, k;
    ldl_store s;
    ldl_store_ext x;
    uint64_t t0 = st_now_ms();
    if (!ST_CHECK(start_cluster() == 0, "%s", "the cluster did not start")) { stop_cluster(); return; }
    if (!ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, NULL, 2000) == LDL_OK, "cluster init: %s",
                  ldl_redis_cluster_why(&rc))) {
        ldl_redis_cluster_free(&rc);
        stop_cluster();
        return;
    }
    s = ldl_redis_cluster_store(&rc);
    x = ldl_redis_cluster_ext(&rc);
    ST_CHECK(x.acquire_owned && x.inspect && !x.submit_owned, "%s", "cluster ext members");
    for (i = 0; i < 200 && nk < 3; i++) {            /* one key per master */
        char key[16], m[40];
        int dup = 0;
        snprintf(key, sizeof key, "cl%d", i);
        ldl_redis_cluster_master(&rc, key, m, sizeof m);
        for (k = 0; k < nk; k++) dup |= strcmp(masters[k], m) == 0;
        if (dup || !m[0]) continue;
        memcpy(keys[nk], key, sizeof key);
        memcpy(masters[nk], m, sizeof m);
        nk++;
    }
    ST_CHECK(nk == 3, "keys on %d masters", nk);
    for (k = 0; k < nk; k++) {
        ldl_lock lk;
        ldl_lock_desc d;
        ldl_holder h;
        char owner[32], name[48], text[96], want[96];
        int64_t f;
        redisContext *mc;
        snprintf(owner, sizeof owner, "cluster-%s", keys[k]);
        base_desc(&d, keys[k], 5000);
        d.store = &s;
        d.store_ext = &x;
        d.owner = owner;
        irc = ldl_lock_init(&lk, &d);
        ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
        ST_CHECK(ldl_lock_acquire(&lk) == 1, "cluster owned acquire %s: %s", keys[k], ldl_redis_cluster_why(&rc));
        f = ldl_lock_fencing_token(&lk);
        ST_CHECK(ldl_store_inspect(&x, keys[k], &h) == 1 && h.token == f && strcmp(h.owner, owner) == 0,
                 "cluster inspect %s: token %lld owner \"%s\"", keys[k], (long long)h.token, h.owner);
        /* the owner key sits on the lease's master (one hash tag) */
        snprintf(name, sizeof name, "{ldl:%s}:owner", keys[k]);
        snprintf(want, sizeof want, "%lld %s", (long long)f, owner);
        mc = node_of_addr(masters[k]) >= 0 ? conn(node_of_addr(masters[k])) : NULL;
        text[0] = 0;
        if (mc) { get_text(mc, name, text, sizeof text); redisFree(mc); }
        ST_CHECK(strcmp(text, want) == 0, "owner key on %s: \"%s\", want \"%s\"", masters[k], text, want);
        ST_CHECK(ldl_lock_release(&lk) == 1, "%s", "cluster release");
        ST_CHECK(ldl_store_inspect(&x, keys[k], &h) == 0, "%s", "cluster inspect free");
        ldl_lock_dispose(&lk);
    }
    /* the non-blocking view: submit_owned routed, read back with the synchronous inspect */
    if (ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, NULL, 2000, rq, 16) == LDL_OK, "cluster async init: %s",
                 ldl_redis_cluster_async_why(&ra))) {
        ldl_async_store as = ldl_redis_cluster_async_store(&ra);
        ldl_store_ext ax = ldl_redis_cluster_async_ext(&ra);
        ST_CHECK(ax.submit_owned && !ax.acquire_owned && !ax.inspect, "%s", "cluster async ext members");
        for (k = 0; k < nk; k++) {
            ldl_lock lk;
            ldl_lock_desc d;
            ldl_holder h;
            char owner[32];
            uint64_t end;
            snprintf(owner, sizeof owner, "cluster-async-%s", keys[k]);
            base_desc(&d, keys[k], 5000);
            d.async_store = &as;
            d.store_ext = &ax;
            d.owner = owner;
            irc = ldl_lock_init(&lk, &d);
            ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&lk));
            ST_CHECK(acquire_pumped(&lk, pump_cluster, &ra, 5000), "cluster async owned acquire %s: %s", keys[k],
                     ldl_redis_cluster_async_why(&ra));
            ST_CHECK(ldl_store_inspect(&x, keys[k], &h) == 1 && h.token == ldl_lock_fencing_token(&lk) &&
                     strcmp(h.owner, owner) == 0, "cluster async inspect %s: owner \"%s\"", keys[k], h.owner);
            ldl_lock_release(&lk);
            end = st_now_ms() + 5000;
            while (ldl_lock_state(&lk) == LDL_RELEASING && st_now_ms() < end) {
                ldl_redis_cluster_async_pump(&ra);
                ldl_lock_release(&lk);
                st_sleep_ms(1);
            }
            ST_CHECK(ldl_lock_answer(&lk) == 1, "cluster async release %s: %d", keys[k], ldl_lock_answer(&lk));
            ldl_lock_dispose(&lk);
        }
        ldl_redis_cluster_async_free(&ra);
    }
    ldl_redis_cluster_free(&rc);
    stop_cluster();
    fprintf(stderr, "cluster: %llu ms (start included)\n", (unsigned long long)(st_now_ms() - t0));
}

int main(void)
{
    redisContext *admin;
    uint64_t t0 = st_now_ms();
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "redis-election", 0) != 0) {
        ST_CHECK(0, "%s", "redis-server did not start");
        return st_report();
    }
    admin = rs_connect(&g_srv, 5000);
    ST_CHECK(admin != NULL, "%s", "admin");
    if (!admin) { rs_stop(&g_srv); return st_report(); }
    st_case("owner_sync", RS_CASE_S);
    test_owner_sync(admin);
    st_case("scripts", RS_CASE_S);
    test_scripts(admin);
    st_case("acl", RS_CASE_S);
    test_acl(admin);
    st_case("acl_own", RS_CASE_S);
    test_acl_own(admin);
    st_case("malformed", RS_CASE_S);
    test_malformed(admin);
    st_case("hostile", RS_CASE_S);
    test_hostile();
    st_case("cancel_owned", RS_CASE_S);
    test_cancel_owned(admin);
    st_case("phantom_owned", RS_CASE_S);
    test_phantom_owned();
    st_case("rideout_sync", RS_CASE_S);
    test_rideout_sync(1);
    st_case("rideout_sync", RS_CASE_S);
    test_rideout_sync(0);
    st_case("rideout_async", RS_CASE_S);
    test_rideout_async(1);
    st_case("rideout_async", RS_CASE_S);
    test_rideout_async(0);
    st_case("campaign", RS_CASE_S);
    test_campaign();
    st_case("cluster", RS_CASE_S);
    test_cluster();
    redisFree(admin);
    kill(g_srv.pid, SIGCONT);
    rs_stop(&g_srv);
    fprintf(stderr, "redis_election: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
