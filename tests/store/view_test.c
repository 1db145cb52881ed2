/* tests/store/view_test.c -- adapters/lite_di_lock_view.h against REAL servers (issue 31
 * item 2): every attach function, in every view, driven only through the view.
 *
 *   ./view_test memory | sqlite [DIR]           no server
 *   tests/store/with_redis.sh ./view_test redis        a redis-server (redis_server.h)
 *   tests/store/with_redis_cluster.sh ./view_test cluster   six nodes (redis_cluster_server.h)
 *   tests/store/with_pg.sh './view_test pg'             a throwaway PostgreSQL
 *   tests/store/with_etcd.sh ./view_test etcd          one etcd member (etcd_common.h)
 *
 * For each view: the ops table has no NULL member; NULL arguments answer LDL_EINVAL; a
 * lock acquires, renews and releases through v.store or v.async, the loop made only of
 * v.ops (fds + timeout_ms with our own poll(2), or wait; pump; ldl_lock_poll; pump again);
 * why is never NULL; the non-blocking views' stats move; drop answers a live request
 * LDL_ESTORE; rebind (where the view has it) gives a new fd and works; the durability
 * bits (PostgreSQL with no standby: CRASH|POWER; Redis with its defaults: 0; SQLite by
 * default: CRASH|POWER); the fenced write through the one ldl_fenced desc answers 1, then
 * 0 for a stale fence (Redis, Redis Cluster, PostgreSQL, SQLite, etcd). Last line:
 * "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_cluster_server.h"
#include "tests/store/pg_common.h"
#include "tests/store/etcd_common.h"
#include "tests/store/sqlite_common.h"
#include "adapters/lite_di_lock_view.h"

#define CASE_S 90

static ldl_scope g_root, g_pool[16];     /* ONE scope serves every lock of the suite */
static int g_seen_events;                /* LDL_WANT_* the fds asked for since the last reset */

static int lock_init(ldl_lock *l, ldl_view *v, int async_face, const char *key, const char *owner)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    memset(l, 0, sizeof *l);
    d.container = ldl_scope_container(&g_root);
    d.key = key;
    d.ttl_ms = 6000;
    if (async_face) d.async_store = &v->async; else d.store = &v->store;
    if (owner) { d.owner = owner; d.store_ext = &v->ext; }
    return ldl_lock_init(l, &d);
}

/* a caller's own poll(2) on the view's fds and timeout (at most max_ms), noting the events
   they asked for. Written here on purpose rather than calling the header's ldl__view_poll:
   it shows that fds + timeout_ms alone drive a loop, and a fault in the header's loop (which
   the views' wait uses) turns the use_wait turns red without hiding behind this one. */
static void own_poll(ldl_view *v, int max_ms)
{
    ldl_view_fd f[16];
    struct pollfd p[16];
    int n = v->ops->fds(v->self, f, 16), i;
    long t = v->ops->timeout_ms(v->self);
    if (n < 0) n = 0;
    for (i = 0; i < n; i++) {
        p[i].fd = f[i].fd;
        p[i].events = (short)(((f[i].events & LDL_WANT_READ) ? POLLIN : 0) |
                              ((f[i].events & LDL_WANT_WRITE) ? POLLOUT : 0));
        p[i].revents = 0;
        g_seen_events |= f[i].events;
    }
    (void)poll(p, (nfds_t)n, t < 0 || t > max_ms ? max_ms : (int)t);
}

/* one turn of an event loop made of the view's ops only: wait for readiness (own_poll, or
   the view's wait), pump, poll the lock, pump */
static void turn(ldl_view *v, ldl_lock *l, int use_wait)
{
    if (use_wait) (void)v->ops->wait(v->self, 20);
    else own_poll(v, 20);
    (void)v->ops->pump(v->self);
    if (l) (void)ldl_lock_poll(l);
    (void)v->ops->pump(v->self);
}

/* turns until the lock has no request in flight (or ms passed); 1 when settled */
static int settle(ldl_view *v, ldl_lock *l, int use_wait, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    do {
        turn(v, l, use_wait);
        if (!ldl_lock_pending(l) && ldl_lock_state(l) != LDL_ACQUIRING &&
            ldl_lock_state(l) != LDL_RELEASING) return 1;
    } while (st_now_ms() < end);
    return 0;
}

/* the ops table and the argument checks every view shares */
static void check_ops(ldl_view *v, const char *name)
{
    const ldl_view_ops *o = v->ops;
    ldl_view_fd f[2];
    ldl_view_stats st;
    char why[16];
    ST_CHECK(o != NULL, "%s: ops", name);
    if (!o) return;
    ST_CHECK(o->name && strcmp(o->name, name) == 0, "%s: ops->name is %s", name, o->name ? o->name : "NULL");
    ST_CHECK(o->pump && o->fds && o->timeout_ms && o->wait && o->drop && o->rebind && o->why &&
             o->stats && o->durability && o->fenced && o->close, "%s: an op is NULL", name);
    ST_CHECK(v->self != NULL, "%s: self", name);
    ST_CHECK(o->nonblocking ? v->async.acquire && v->async.renew && v->async.release && v->async.cancel
                            : v->store.acquire && v->store.renew && v->store.release,
             "%s: the lock-facing store is filled", name);
    ST_CHECK(o->why(v->self) != NULL, "%s: why never NULL", name);
    ST_CHECK(o->fds(v->self, NULL, 2) == LDL_EINVAL, "%s: fds(NULL) answers EINVAL", name);
    ST_CHECK(o->fds(v->self, f, 0) == LDL_EINVAL, "%s: fds(n 0) answers EINVAL", name);
    ST_CHECK(o->stats(v->self, NULL) == LDL_EINVAL, "%s: stats(NULL) answers EINVAL", name);
    ST_CHECK(o->stats(v->self, &st) == LDL_OK, "%s: stats answers OK", name);
    ST_CHECK(o->wait(v->self, -1) == LDL_EINVAL, "%s: wait(-1) answers EINVAL", name);
    ST_CHECK(o->fenced(v->self, NULL) == LDL_EINVAL, "%s: fenced(NULL) answers EINVAL", name);
    why[0] = 'x';
    (void)o->durability(v->self, why, 0);                /* why_len 0: nothing written */
    ST_CHECK(why[0] == 'x', "%s: durability wrote into a why of length 0", name);
    if (!o->nonblocking) {
        ST_CHECK(o->pump(v->self) == 0 && o->fds(v->self, f, 2) == 0 && o->timeout_ms(v->self) == -1 &&
                 o->wait(v->self, 5) == 0 && o->drop(v->self) == 0,
                 "%s: a synchronous view has no I/O of its own", name);
    }
}

/* acquire, renew, release one lock through the view; answers the grant's fence (0 none) */
static int64_t lifecycle(ldl_view *v, int async_face, int use_wait, const char *name, const char *key)
{
    static ldl_lock l;
    int rc;
    int64_t tok = 0;
    /* init first, then check: ST_CHECK's other arguments (the why) read the object, and the
       order a call evaluates its arguments in is unspecified (so in every check below) */
    rc = lock_init(&l, v, async_face, key, NULL);
    if (!ST_CHECK(rc == LDL_OK, "%s: lock_init: %s", name, ldl_lock_why(&l)))
        return 0;
    g_seen_events = 0;
    rc = ldl_lock_acquire(&l);
    ST_CHECK(rc == 1 || (async_face && rc == LDL_EINPROGRESS), "%s: acquire answered %d", name, rc);
    if (rc == LDL_EINPROGRESS) ST_CHECK(settle(v, &l, use_wait, 10000), "%s: the acquire settles", name);
    ST_CHECK(ldl_lock_held(&l), "%s: held after the acquire (state %s, why %s, view why %s)", name,
             ldl_state_name(ldl_lock_state(&l)), ldl_lock_why(&l), v->ops->why(v->self));
    tok = ldl_lock_fencing_token(&l);
    ST_CHECK(tok >= 1, "%s: a fence %lld", name, (long long)tok);
    if (v->ops->nonblocking && !use_wait)     /* the answer was waited for on the view's fds */
        ST_CHECK(g_seen_events & (LDL_WANT_READ | LDL_WANT_WRITE), "%s: the fds asked for readiness "
                 "while a request was in flight (seen %d)", name, g_seen_events);
    rc = ldl_lock_tick(&l);
    if (async_face) ST_CHECK(settle(v, &l, use_wait, 10000), "%s: the renew settles", name);
    ST_CHECK(ldl_lock_held(&l) && ldl_lock_counters(&l)->renewals >= 1,
             "%s: renewed (tick %d, renewals %u, state %s)", name, rc, ldl_lock_counters(&l)->renewals,
             ldl_state_name(ldl_lock_state(&l)));
    rc = ldl_lock_release(&l);
    if (rc == LDL_EINPROGRESS) ST_CHECK(settle(v, &l, use_wait, 10000), "%s: the release settles", name);
    else ST_CHECK(rc == 1, "%s: release answered %d", name, rc);
    ST_CHECK(ldl_lock_state(&l) == LDL_RELEASED && ldl_lock_raw_answer(&l) == 1,
             "%s: released with the store's yes (state %s, raw %d)", name,
             ldl_state_name(ldl_lock_state(&l)), ldl_lock_raw_answer(&l));
    ST_CHECK(v->ops->why(v->self) != NULL, "%s: why never NULL", name);
    ldl_lock_dispose(&l);
    return tok;
}

/* the non-blocking views: the counters move; drop answers a live acquire LDL_ESTORE */
static void stats_move(ldl_view *v, const char *name, int counted, const ldl_view_stats *before)
{
    ldl_view_stats st;
    ST_CHECK(v->ops->stats(v->self, &st) == LDL_OK, "%s: stats", name);
    if (counted)
        ST_CHECK(st.submitted >= before->submitted + 3 && st.answered >= before->answered + 3 &&
                 st.max_live >= 1, "%s: stats moved (submitted %llu -> %llu, answered %llu -> %llu)", name,
                 (unsigned long long)before->submitted, (unsigned long long)st.submitted,
                 (unsigned long long)before->answered, (unsigned long long)st.answered);
}

static void drop_live(ldl_view *v, const char *name, const char *key, int counted_now)
{
    static ldl_lock l;
    ldl_view_stats a, b;
    int rc, n;
    ldl_view_fd f[16];
    if (!ST_CHECK(lock_init(&l, v, 1, key, NULL) == LDL_OK, "%s: lock_init", name)) return;
    (void)v->ops->stats(v->self, &a);
    rc = ldl_lock_acquire(&l);
    ST_CHECK(rc == LDL_EINPROGRESS, "%s: the acquire is in flight (%d)", name, rc);
    n = v->ops->drop(v->self);
    ST_CHECK(n >= 1, "%s: drop answered %d live requests", name, n);
    (void)ldl_lock_poll(&l);
    ST_CHECK(!ldl_lock_held(&l) && !ldl_lock_pending(&l) && ldl_lock_raw_answer(&l) == LDL_ESTORE,
             "%s: the dropped acquire answered ESTORE (state %s, raw %d)", name,
             ldl_state_name(ldl_lock_state(&l)), ldl_lock_raw_answer(&l));
    ST_CHECK(ldl_lock_counters(&l)->store_errors >= 1, "%s: counted as a store error", name);
    ST_CHECK(v->ops->why(v->self) != NULL, "%s: why never NULL after a drop", name);
    (void)v->ops->stats(v->self, &b);
    if (counted_now) ST_CHECK(b.link_failures > a.link_failures || b.failed > a.failed,
             "%s: the drop counted (link_failures %llu -> %llu, failed %llu -> %llu)", name,
             (unsigned long long)a.link_failures, (unsigned long long)b.link_failures,
             (unsigned long long)a.failed, (unsigned long long)b.failed);
    (void)f;
    ldl_lock_dispose(&l);
}

/* docs/event-loops.md: a request a lock queued waits in the view until the next pump (the
   view does no I/O in a submit); want_write: meanwhile the fds ask for LDL_WANT_WRITE */
static void queued_until_pump(ldl_view *v, const char *name, const char *key, int want_write)
{
    static ldl_lock l;
    ldl_view_stats a, b;
    ldl_view_fd f[16];
    int rc, n, i, ev = 0;
    if (!ST_CHECK(lock_init(&l, v, 1, key, NULL) == LDL_OK, "%s: lock_init", name)) return;
    (void)v->ops->stats(v->self, &a);
    rc = ldl_lock_acquire(&l);
    ST_CHECK(rc == LDL_EINPROGRESS, "%s: the acquire is queued (%d)", name, rc);
    st_sleep_ms(200);                                /* no pump: nothing goes out */
    (void)ldl_lock_poll(&l);
    (void)v->ops->stats(v->self, &b);
    ST_CHECK(ldl_lock_state(&l) == LDL_ACQUIRING && b.answered == a.answered,
             "%s: unanswered 200 ms later without a pump (state %s, answered %llu -> %llu)", name,
             ldl_state_name(ldl_lock_state(&l)), (unsigned long long)a.answered, (unsigned long long)b.answered);
    n = v->ops->fds(v->self, f, 16);
    for (i = 0; i < n; i++) ev |= f[i].events;
    if (want_write) ST_CHECK(ev & LDL_WANT_WRITE, "%s: the fds ask for LDL_WANT_WRITE while a request waits (%d)", name, ev);
    ST_CHECK(settle(v, &l, 0, 10000) && ldl_lock_held(&l), "%s: the next pumps send it and it is granted", name);
    (void)ldl_lock_release(&l);
    ST_CHECK(settle(v, &l, 0, 10000), "%s: released", name);
    ldl_lock_dispose(&l);
}

/* the first fd the view answers now, -1 none */
static int first_fd(ldl_view *v)
{
    ldl_view_fd f[16];
    return v->ops->fds(v->self, f, 16) >= 1 ? f[0].fd : -1;
}

/* ------------------------------------------------------------ memory */
static void run_memory(void)
{
    int irc;
    static ldl_memstore_slot slots[16];
    ldl_memstore ms;
    ldl_view v;
    static ldl_lock l;
    ldl_clock zero;
    char why[160];
    memset(&zero, 0, sizeof zero);
    st_case("memory", CASE_S);
    ST_CHECK(ldl_memstore_init(&ms, slots, 16, zero) == LDL_OK, "memstore init");
    ST_CHECK(ldl_view_memstore(NULL, &ms) == LDL_EINVAL && ldl_view_memstore(&v, NULL) == LDL_EINVAL,
             "memory: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_memstore(&v, &ms) == LDL_OK, "memory: attach");
    check_ops(&v, "memory");
    lifecycle(&v, 0, 0, "memory", "m1");
    lifecycle(&v, 1, 0, "memory (async face)", "m2");
    irc = lock_init(&l, &v, 1, "m3", "me");
    ST_CHECK(irc == LDL_OK, "memory: an owned lock on the async face: %s", ldl_lock_why(&l));
    ldl_lock_dispose(&l);
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == 0 && why[0], "memory: durability 0 with a why");
    ST_CHECK(v.ops->rebind(v.self, &ms) == LDL_EUNSUPPORTED, "memory: no rebind");
    {
        ldl_fenced w;
        memset(&w, 0, sizeof w);
        ST_CHECK(v.ops->fenced(v.self, &w) == LDL_EUNSUPPORTED, "memory: no fenced write");
    }
    v.ops->close(v.self);
}

/* ------------------------------------------------------------ redis */
static int g_fx_rc[4], g_fx_n;
static void fx_done(void *ctx, int rc, void *reply)
{
    (void)ctx;
    if (g_fx_n < 4) g_fx_rc[g_fx_n] = rc;
    g_fx_n++;
    if (reply) freeReplyObject(reply);
}

/* the non-blocking fenced write through the same desc: queued, answered by done in a pump */
static void redis_fenced_async(ldl_view *v, const char *name, const char *resource, const char *key)
{
    const char *argv[3];
    ldl_fenced w;
    uint64_t end;
    argv[0] = "SET"; argv[1] = key; argv[2] = "v";
    memset(&w, 0, sizeof w);
    w.resource = resource; w.fence = 7; w.argc = 3; w.argv = argv; w.nkeys = 1;
    w.done = fx_done;
    g_fx_n = 0;
    ST_CHECK(v->ops->fenced(v->self, &w) == LDL_OK, "%s: fenced write queued (%s)", name, v->ops->why(v->self));
    for (end = st_now_ms() + 5000; g_fx_n < 1 && st_now_ms() < end;) turn(v, NULL, 1);
    w.fence = 6;
    ST_CHECK(v->ops->fenced(v->self, &w) == LDL_OK, "%s: stale fenced write queued", name);
    for (end = st_now_ms() + 5000; g_fx_n < 2 && st_now_ms() < end;) turn(v, NULL, 1);
    ST_CHECK(g_fx_n == 2 && g_fx_rc[0] == 1 && g_fx_rc[1] == 0,
             "%s: fenced 1 then a stale 0 (n %d: %d %d)", name, g_fx_n, g_fx_rc[0], g_fx_rc[1]);
    w.done = NULL;
    ST_CHECK(v->ops->fenced(v->self, &w) == LDL_EINVAL, "%s: no done answers EINVAL", name);
}

static void redis_fenced_sync(ldl_view *v, const char *name)
{
    const char *argv[3] = { "SET", "{vres}:k", "v" };
    redisReply *rep = NULL;
    ldl_fenced w;
    memset(&w, 0, sizeof w);
    w.resource = "vres"; w.fence = 5; w.argc = 3; w.argv = argv; w.nkeys = 1;
    w.reply = (void **)&rep;
    ST_CHECK(v->ops->fenced(v->self, &w) == 1, "%s: fenced write at 5 answers 1 (%s)", name, v->ops->why(v->self));
    ST_CHECK(rep && rep->type == REDIS_REPLY_STATUS, "%s: the command's reply comes back", name);
    if (rep) freeReplyObject(rep);
    rep = NULL;
    w.fence = 4;
    ST_CHECK(v->ops->fenced(v->self, &w) == 0, "%s: a stale fence 4 answers 0", name);
    ST_CHECK(rep == NULL, "%s: no reply for a stale write", name);
    w.argc = 0;
    ST_CHECK(v->ops->fenced(v->self, &w) == LDL_EINVAL, "%s: a write with no command answers EINVAL", name);
}

static void run_redis(void)
{
    rs_server s;
    redisContext *c, *nc, *nc2;
    ldl_redis r;
    static ldl_redis_req reqs[64];
    ldl_redis_async ra;
    ldl_view v;
    ldl_view_stats st0;
    char why[200];
    int fd0, fd1, rc;
    st_case("redis: start", CASE_S);
    if (!ST_CHECK(rs_start(&s, "view", 0) == 0, "redis-server starts")) return;

    st_case("redis: synchronous view", CASE_S);
    c = rs_connect(&s, 2000);
    ST_CHECK(c && ldl_redis_init(&r, c, "view") == LDL_OK, "redis: init");
    ST_CHECK(ldl_view_redis(NULL, &r) == LDL_EINVAL && ldl_view_redis(&v, NULL) == LDL_EINVAL,
             "redis: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_redis(&v, &r) == LDL_OK, "redis: attach");
    check_ops(&v, "redis");
    ST_CHECK(v.ext.acquire_owned && v.ext.inspect, "redis: ext filled");
    lifecycle(&v, 0, 0, "redis", "r1");
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == 0 && why[0],
             "redis: the default config (no AOF) answers 0 with a why: %s", why);
    redis_fenced_sync(&v, "redis");
    ST_CHECK(v.ops->rebind(v.self, c) == LDL_EUNSUPPORTED, "redis: no rebind in the synchronous view");
    v.ops->close(v.self);
    redisFree(c);

    st_case("redis: non-blocking view", CASE_S);
    nc = redisConnectNonBlock("127.0.0.1", s.port);
    ST_CHECK(nc && ldl_redis_async_init(&ra, nc, "view", reqs, 64) == LDL_OK, "redis-async: init");
    ST_CHECK(ldl_view_redis_async(NULL, &ra) == LDL_EINVAL && ldl_view_redis_async(&v, NULL) == LDL_EINVAL,
             "redis-async: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_redis_async(&v, &ra) == LDL_OK, "redis-async: attach");
    check_ops(&v, "redis-async");
    ST_CHECK(v.ext.submit_owned != NULL, "redis-async: ext.submit_owned");
    (void)v.ops->stats(v.self, &st0);
    lifecycle(&v, 1, 0, "redis-async (fds)", "ra1");
    lifecycle(&v, 1, 1, "redis-async (wait)", "ra2");
    stats_move(&v, "redis-async", 1, &st0);
    queued_until_pump(&v, "redis-async", "rq", 1);
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == LDL_EUNSUPPORTED && why[0],
             "redis-async: durability is the synchronous view's (EUNSUPPORTED, why)");
    redis_fenced_async(&v, "redis-async", "vres2", "{vres2}:k");
    st_case("redis: drop and rebind", CASE_S);
    fd0 = first_fd(&v);
    ST_CHECK(fd0 >= 0, "redis-async: an fd while the link is up");
    ST_CHECK(v.ops->timeout_ms(v.self) == -1, "redis-async: no timeout while the link is up");
    drop_live(&v, "redis-async", "ra3", 1);
    ST_CHECK(first_fd(&v) == -1 && v.ops->fds(v.self, (ldl_view_fd[1]){{0, 0}}, 1) == 0,
             "redis-async: fds answers 0 while the link is down");
    ST_CHECK(v.ops->timeout_ms(v.self) >= 0, "redis-async: a timeout while the link is down");
    nc2 = redisConnectNonBlock("127.0.0.1", s.port);
    rc = v.ops->rebind(v.self, nc2);
    ST_CHECK(rc == LDL_OK, "redis-async: rebind answered %d (%s)", rc, v.ops->why(v.self));
    fd1 = first_fd(&v);
    ST_CHECK(fd1 >= 0 && fd1 != fd0, "redis-async: the fd changed after a rebind (%d -> %d)", fd0, fd1);
    lifecycle(&v, 1, 0, "redis-async (rebound)", "ra4");
    ST_CHECK(v.ops->rebind(v.self, NULL) == LDL_EINVAL, "redis-async: rebind(NULL) answers EINVAL");
    v.ops->close(v.self);
    redisFree(nc);
    redisFree(nc2);
    rs_stop(&s);
}

/* ------------------------------------------------------------ redis cluster */
static void run_cluster(void)
{
    int irc;
    static ldl_redis_cluster rc;
    static ldl_redis_cluster_async ra;
    static ldl_redis_cluster_req reqs[64];
    ldl_view v;
    ldl_view_stats a, b;
    char why[200];
    st_case("cluster: start", 180);
    if (!ST_CHECK(start_cluster() == 0, "the cluster starts")) { stop_cluster(); return; }

    st_case("cluster: synchronous view", CASE_S);
    irc = ldl_redis_cluster_init(&rc, g_seeds, "view", 2000);
    ST_CHECK(irc == LDL_OK, "redis-cluster: init (%s)",
             ldl_redis_cluster_why(&rc));
    ST_CHECK(ldl_view_redis_cluster(NULL, &rc) == LDL_EINVAL && ldl_view_redis_cluster(&v, NULL) == LDL_EINVAL,
             "redis-cluster: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_redis_cluster(&v, &rc) == LDL_OK, "redis-cluster: attach");
    check_ops(&v, "redis-cluster");
    lifecycle(&v, 0, 0, "redis-cluster", "c1");
    lifecycle(&v, 0, 0, "redis-cluster", "c2-other-slot");
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == 0 && why[0],
             "redis-cluster: every master with the default config (no AOF) answers 0 with a why: %s", why);
    redis_fenced_sync(&v, "redis-cluster");
    v.ops->close(v.self);
    v.ops->close(v.self);                              /* idempotent */

    st_case("cluster: non-blocking view", CASE_S);
    irc = ldl_redis_cluster_async_init(&ra, g_seeds, "view", 2000, reqs, 64);
    ST_CHECK(irc == LDL_OK, "redis-cluster-async: init (%s)", ldl_redis_cluster_async_why(&ra));
    ST_CHECK(ldl_view_redis_cluster_async(NULL, &ra) == LDL_EINVAL &&
             ldl_view_redis_cluster_async(&v, NULL) == LDL_EINVAL, "redis-cluster-async: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_redis_cluster_async(&v, &ra) == LDL_OK, "redis-cluster-async: attach");
    check_ops(&v, "redis-cluster-async");
    ST_CHECK(v.ops->fds(v.self, (ldl_view_fd[8]){{0, 0}}, 8) >= 3, "redis-cluster-async: an fd per master");
    ST_CHECK(v.ops->timeout_ms(v.self) >= 0, "redis-cluster-async: a timeout (map reads, reconnects)");
    lifecycle(&v, 1, 0, "redis-cluster-async (fds)", "ca1");
    lifecycle(&v, 1, 1, "redis-cluster-async (wait)", "ca2");
    queued_until_pump(&v, "redis-cluster-async", "cq", 0);
    redis_fenced_async(&v, "redis-cluster-async", "vres3", "{vres3}:k");
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == LDL_EUNSUPPORTED && why[0],
             "redis-cluster-async: durability is the synchronous view's (EUNSUPPORTED, why)");
    ST_CHECK(v.ops->rebind(v.self, NULL) == LDL_EUNSUPPORTED, "redis-cluster-async: no rebind (it owns its links)");
    (void)v.ops->stats(v.self, &a);
    drop_live(&v, "redis-cluster-async", "ca3", 0);   /* counted once the masters reconnect */
    {   /* the pumps reconnect every master (paced): the fds come back */
        uint64_t end = st_now_ms() + 10000;
        int n = 0;
        while (st_now_ms() < end && (n = v.ops->fds(v.self, (ldl_view_fd[8]){{0, 0}}, 8)) < 3) turn(&v, NULL, 0);
        ST_CHECK(n >= 3, "redis-cluster-async: every master reconnected inside the pumps (%d fds)", n);
    }
    lifecycle(&v, 1, 0, "redis-cluster-async (after the drop)", "ca4");
    (void)v.ops->stats(v.self, &b);
    ST_CHECK(b.link_failures > a.link_failures, "redis-cluster-async: the reconnects counted (%llu -> %llu)",
             (unsigned long long)a.link_failures, (unsigned long long)b.link_failures);
    v.ops->close(v.self);
    v.ops->close(v.self);
    stop_cluster();
}

/* ------------------------------------------------------------ pg */
static int pg_fenced(ldl_view *v, PGconn *c, int64_t fence, const char *commit)
{
    ldl_fenced w;
    int rc;
    memset(&w, 0, sizeof w);
    w.resource = "vres"; w.fence = fence;
    if (!pgt_exec(c, "BEGIN")) return -100;
    rc = v->ops->fenced(v->self, &w);
    pgt_exec(c, rc == 1 ? commit : "ROLLBACK");
    return rc;
}

static void run_pg(void)
{
    int irc;
    PGconn *c, *cf, *ca, *cb;
    ldl_pg pg, fp, pga;
    static ldl_pg_req reqs[64];
    ldl_pg_async pa;
    ldl_view v, vf;
    ldl_view_stats st0;
    ldl_fenced w;
    char why[512];
    int d, fd0, fd1;

    st_case("pg: synchronous view", CASE_S);
    c = pgt_connect("");
    irc = ldl_pg_init(&pg, c, "view_lease");
    ST_CHECK(irc == LDL_OK, "pg: init (%s)", ldl_pg_why(&pg));
    ST_CHECK(ldl_view_pg(NULL, &pg) == LDL_EINVAL && ldl_view_pg(&v, NULL) == LDL_EINVAL,
             "pg: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_pg(&v, &pg) == LDL_OK, "pg: attach");
    check_ops(&v, "pg");
    ST_CHECK(v.ext.acquire_owned && v.ext.inspect, "pg: ext filled");
    lifecycle(&v, 0, 0, "pg", "p1");
    d = v.ops->durability(v.self, why, sizeof why);
    ST_CHECK(d == (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER),
             "pg: no standby: CRASH|POWER only (answered %d: %s)", d, why);
    ST_CHECK(v.ops->rebind(v.self, c) == LDL_EUNSUPPORTED, "pg: no rebind in the synchronous view");

    st_case("pg: fenced write", CASE_S);
    cf = pgt_connect("");
    ST_CHECK(ldl_pg_init_ex(&fp, cf, "view_lease", LDL_PG_FENCE) == LDL_OK, "pg: fence init (%s)", ldl_pg_why(&fp));
    ST_CHECK(ldl_view_pg(&vf, &fp) == LDL_OK, "pg: attach the fence's ldl_pg");
    ST_CHECK(pg_fenced(&vf, cf, 5, "COMMIT") == 1, "pg: fenced write at 5 answers 1 (%s)", vf.ops->why(vf.self));
    ST_CHECK(pg_fenced(&vf, cf, 4, "COMMIT") == 0, "pg: a stale fence 4 answers 0");
    memset(&w, 0, sizeof w);
    w.resource = "vres"; w.fence = 9; w.argc = 1;
    ST_CHECK(vf.ops->fenced(vf.self, &w) == LDL_EINVAL, "pg: a write with argv answers EINVAL");
    PQfinish(cf);
    v.ops->close(v.self);
    PQfinish(c);

    st_case("pg: non-blocking view", CASE_S);
    ca = pgt_connect("");
    irc = ldl_pg_init(&pga, ca, "view_lease");
    if (irc == LDL_OK) irc = ldl_pg_async_init(&pa, &pga, reqs, 64);
    ST_CHECK(irc == LDL_OK, "pg-async: init (%s)", ldl_pg_why(&pga));
    ST_CHECK(ldl_view_pg_async(NULL, &pa) == LDL_EINVAL && ldl_view_pg_async(&v, NULL) == LDL_EINVAL,
             "pg-async: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_pg_async(&v, &pa) == LDL_OK, "pg-async: attach");
    check_ops(&v, "pg-async");
    ST_CHECK(v.ext.submit_owned != NULL, "pg-async: ext.submit_owned");
    (void)v.ops->stats(v.self, &st0);
    lifecycle(&v, 1, 0, "pg-async (fds)", "pa1");
    lifecycle(&v, 1, 1, "pg-async (wait)", "pa2");
    stats_move(&v, "pg-async", 1, &st0);
    queued_until_pump(&v, "pg-async", "pq", 1);
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == LDL_EUNSUPPORTED && why[0],
             "pg-async: durability EUNSUPPORTED with a why");
    memset(&w, 0, sizeof w);
    ST_CHECK(v.ops->fenced(v.self, &w) == LDL_EUNSUPPORTED, "pg-async: no fenced write (pipeline mode)");

    st_case("pg: drop and rebind", CASE_S);
    fd0 = first_fd(&v);
    ST_CHECK(fd0 >= 0 && v.ops->timeout_ms(v.self) == -1, "pg-async: one fd, no timeout");
    drop_live(&v, "pg-async", "pa3", 1);
    cb = pgt_connect_nb("", 5000);
    ST_CHECK(cb != NULL, "pg-async: a new connection");
    ST_CHECK(v.ops->rebind(v.self, cb) == LDL_OK, "pg-async: rebind (%s)", v.ops->why(v.self));
    fd1 = first_fd(&v);
    ST_CHECK(fd1 >= 0 && fd1 != fd0, "pg-async: the fd changed after a rebind (%d -> %d)", fd0, fd1);
    lifecycle(&v, 1, 0, "pg-async (rebound)", "pa4");
    ST_CHECK(v.ops->rebind(v.self, NULL) == LDL_EINVAL, "pg-async: rebind(NULL) answers EINVAL");
    v.ops->close(v.self);
    PQfinish(ca);
    PQfinish(cb);
}

/* ------------------------------------------------------------ etcd */
static void run_etcd(void)
{
    int irc;
    etcdt_member m;
    ldl_etcd_config cfg;
    ldl_etcd e, e2, e3;
    static ldl_etcd_req reqs[16];
    static ldl_etcd_async ea;
    ldl_view v;
    ldl_view_stats st0;
    static ldl_lock l;
    ldl_fenced w;
    const char *put[3] = { "put", "vtarget", "v1" };
    const char *del[2] = { "delete", "vtarget" };
    char why[200];
    int64_t old;
    int rc;
    st_case("etcd: start", CASE_S);
    if (!ST_CHECK(etcdt_start(&m, "view") == 1, "etcd starts")) return;
    etcdt_cfg(&cfg, m.url, "view/");

    st_case("etcd: synchronous view", CASE_S);
    irc = ldl_etcd_init(&e, &cfg);
    ST_CHECK(irc == LDL_OK, "etcd: init (%s)", ldl_etcd_why(&e));
    ST_CHECK(ldl_view_etcd(NULL, &e) == LDL_EINVAL && ldl_view_etcd(&v, NULL) == LDL_EINVAL,
             "etcd: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_etcd(&v, &e) == LDL_OK, "etcd: attach");
    check_ops(&v, "etcd");
    ST_CHECK(v.ext.acquire_owned && v.ext.inspect, "etcd: ext filled");
    lifecycle(&v, 0, 0, "etcd", "e1");
    ST_CHECK(v.ops->durability(v.self, why, sizeof why) == LDL_EUNSUPPORTED && why[0],
             "etcd: durability EUNSUPPORTED with a why");

    st_case("etcd: fenced write", CASE_S);
    ST_CHECK(lock_init(&l, &v, 0, "efence", NULL) == LDL_OK && ldl_lock_acquire(&l) == 1, "etcd: the fence's lock");
    old = ldl_lock_fencing_token(&l);
    memset(&w, 0, sizeof w);
    w.resource = "efence"; w.fence = old; w.argc = 3; w.argv = put;
    rc = v.ops->fenced(v.self, &w);
    ST_CHECK(rc == 1, "etcd: fenced put with the holder's fence answers 1 (%d: %s)", rc, v.ops->why(v.self));
    ST_CHECK(etcdt_count(m.url, "vtarget") == 1, "etcd: the put landed");
    ST_CHECK(ldl_lock_release(&l) == 1 && ldl_lock_acquire(&l) == 1 && ldl_lock_fencing_token(&l) > old,
             "etcd: released and granted again with a higher fence");
    rc = v.ops->fenced(v.self, &w);
    ST_CHECK(rc == 0, "etcd: the stale holder's put answers 0 (%d)", rc);
    w.fence = ldl_lock_fencing_token(&l); w.argc = 2; w.argv = del;
    ST_CHECK(v.ops->fenced(v.self, &w) == 1, "etcd: fenced delete with the new fence answers 1");
    ST_CHECK(etcdt_count(m.url, "vtarget") == 0, "etcd: the delete landed");
    w.argv = put; w.argc = 2;
    ST_CHECK(v.ops->fenced(v.self, &w) == LDL_EINVAL, "etcd: a put with no value answers EINVAL");
    (void)ldl_lock_release(&l);
    ldl_lock_dispose(&l);
    v.ops->close(v.self);
    v.ops->close(v.self);

    st_case("etcd: non-blocking view", CASE_S);
    irc = ldl_etcd_init(&e2, &cfg);
    if (irc == LDL_OK) irc = ldl_etcd_async_init(&ea, &e2, reqs, 16);
    ST_CHECK(irc == LDL_OK, "etcd-async: init (%s)", ldl_etcd_why(&e2));
    ST_CHECK(ldl_view_etcd_async(NULL, &ea) == LDL_EINVAL && ldl_view_etcd_async(&v, NULL) == LDL_EINVAL,
             "etcd-async: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_etcd_async(&v, &ea) == LDL_OK, "etcd-async: attach");
    check_ops(&v, "etcd-async");
    ST_CHECK(v.ext.submit_owned != NULL, "etcd-async: ext.submit_owned");
    (void)v.ops->stats(v.self, &st0);
    lifecycle(&v, 1, 0, "etcd-async (fds)", "ea1");
    lifecycle(&v, 1, 1, "etcd-async (wait)", "ea2");
    stats_move(&v, "etcd-async", 1, &st0);
    queued_until_pump(&v, "etcd-async", "eq", 0);
    memset(&w, 0, sizeof w);
    ST_CHECK(v.ops->fenced(v.self, &w) == LDL_EUNSUPPORTED, "etcd-async: no fenced write");

    st_case("etcd: drop and rebind", CASE_S);
    drop_live(&v, "etcd-async", "ea3", 1);
    ST_CHECK(ldl_etcd_init(&e3, &cfg) == LDL_OK, "etcd: a second client");
    ST_CHECK(v.ops->rebind(v.self, &e3) == LDL_OK, "etcd-async: rebind (%s)", v.ops->why(v.self));
    lifecycle(&v, 1, 0, "etcd-async (rebound)", "ea4");
    ST_CHECK(v.ops->rebind(v.self, NULL) == LDL_EINVAL, "etcd-async: rebind(NULL) answers EINVAL");
    v.ops->close(v.self);
    v.ops->close(v.self);
    ldl_etcd_close(&e2);
    ldl_etcd_close(&e3);
    etcdt_stop(&m);
}

/* ------------------------------------------------------------ sqlite */
static int sq_fenced(ldl_view *v, sqlite3 *db, int64_t fence)
{
    ldl_fenced w;
    int rc;
    memset(&w, 0, sizeof w);
    w.resource = "vres"; w.fence = fence;
    if (!sqt_exec(db, "BEGIN IMMEDIATE")) return -100;
    rc = v->ops->fenced(v->self, &w);
    sqt_exec(db, rc == 1 ? "COMMIT" : "ROLLBACK");
    return rc;
}

static void run_sqlite(int argc, char **argv)
{
    int irc;
    char path[600], why[300];
    ldl_sqlite s;
    ldl_view v;
    static ldl_lock l;
    int d;
    st_case("sqlite", CASE_S);
    sqt_setup(argc, argv, "view");
    sqt_path(path, sizeof path, "locks.db");
    ST_CHECK(ldl_sqlite_open(&s, path, NULL, LDL_SQLITE_CREATE) == LDL_OK, "sqlite: open (%s)", ldl_sqlite_why(&s));
    ST_CHECK(ldl_view_sqlite(NULL, &s) == LDL_EINVAL && ldl_view_sqlite(&v, NULL) == LDL_EINVAL,
             "sqlite: NULL arguments answer EINVAL");
    ST_CHECK(ldl_view_sqlite(&v, &s) == LDL_OK, "sqlite: attach");
    check_ops(&v, "sqlite");
    lifecycle(&v, 0, 0, "sqlite", "s1");
    lifecycle(&v, 1, 0, "sqlite (async face)", "s2");
    irc = lock_init(&l, &v, 1, "s3", "me");
    ST_CHECK(irc == LDL_OK,
             "sqlite: an owned lock on the async face (ext has submit_owned): %s", ldl_lock_why(&l));
    ldl_lock_dispose(&l);
    irc = lock_init(&l, &v, 0, "s4", "me");
    ST_CHECK(irc == LDL_OK, "sqlite: an owned lock on the store: %s", ldl_lock_why(&l));
    ldl_lock_dispose(&l);
    d = v.ops->durability(v.self, why, sizeof why);
    if (argc > 1 && strcmp(argv[1], "/dev/shm") == 0)
        ST_CHECK(d == LDL_SURVIVES_CRASH, "sqlite on tmpfs: CRASH only (%d: %s)", d, why);
    else
        ST_CHECK(d == (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER), "sqlite: the default is CRASH|POWER (%d: %s)", d, why);
    ST_CHECK(sq_fenced(&v, ldl_sqlite_db(&s), 5) == 1, "sqlite: fenced write at 5 answers 1 (%s)", v.ops->why(v.self));
    ST_CHECK(sq_fenced(&v, ldl_sqlite_db(&s), 4) == 0, "sqlite: a stale fence 4 answers 0");
    ST_CHECK(v.ops->rebind(v.self, NULL) == LDL_EUNSUPPORTED, "sqlite: no rebind");
    v.ops->close(v.self);
    v.ops->close(v.self);                              /* idempotent */
    sqt_cleanup();
}

/* ------------------------------------------------------------ examples/epoll_leases.c's smoke:
   view_test example STORE PROGRAM [ARGS...] starts STORE's server (redis, etcd; pg comes from
   with_pg.sh) and runs PROGRAM --store STORE --addr ADDR ARGS... ; it must exit 0 */
static void run_example(int argc, char **argv)
{
    const char *kind = argv[0];
    char cmd[2048], addr[600];
    size_t k;
    int i, rc;
    rs_server rs;
    etcdt_member m;
    int started = 0;
    st_case("example", 120);
    memset(&rs, 0, sizeof rs);
    if (strcmp(kind, "redis") == 0) {
        if (!ST_CHECK(rs_start(&rs, "ex", 0) == 0, "redis-server starts")) return;
        snprintf(addr, sizeof addr, "127.0.0.1:%d", rs.port);
        started = 1;
    } else if (strcmp(kind, "etcd") == 0) {
        if (!ST_CHECK(etcdt_start(&m, "ex") == 1, "etcd starts")) return;
        snprintf(addr, sizeof addr, "%s", m.url);
        started = 2;
    } else if (strcmp(kind, "pg") == 0) {
        const char *ci = getenv("LDL_PG_CONNINFO");
        if (!ST_CHECK(ci && *ci, "LDL_PG_CONNINFO set (run me through with_pg.sh)")) return;
        /* each grant and renewal is its own commit: without the disk wait the smoke's 1,000
           acquires take milliseconds, not seconds (the loop under test is the same) */
        snprintf(addr, sizeof addr, "%s options=-csynchronous_commit=off", ci);
    } else { ST_CHECK(0, "no store %s", kind); return; }
    k = (size_t)snprintf(cmd, sizeof cmd, "%s --store %s --addr '%s'", argv[1], kind, addr);
    for (i = 2; i < argc && k < sizeof cmd; i++) k += (size_t)snprintf(cmd + k, sizeof cmd - k, " %s", argv[i]);
    fflush(stdout);
    rc = system(cmd);
    ST_CHECK(rc == 0, "%s exits 0 (%d)", cmd, rc);
    if (started == 1) rs_stop(&rs);
    if (started == 2) etcdt_stop(&m);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    st_ignore_sigpipe();
    ldl_scope_init(&g_root, g_pool, 16);
    if (strcmp(which, "memory") == 0) run_memory();
    else if (strcmp(which, "redis") == 0) run_redis();
    else if (strcmp(which, "cluster") == 0) run_cluster();
    else if (strcmp(which, "pg") == 0) run_pg();
    else if (strcmp(which, "etcd") == 0) run_etcd();
    else if (strcmp(which, "sqlite") == 0) run_sqlite(argc - 1, argv + 1);
    else if (strcmp(which, "example") == 0 && argc >= 4) run_example(argc - 2, argv + 2);
    else { fprintf(stderr, "usage: view_test memory|redis|cluster|pg|etcd|sqlite [DIR]\n"); return 2; }
    st_case("", 0);
    ST_CHECK(ldl_scope_live_children(&g_root) == 0, "no scope left open");
    return st_report();
}
