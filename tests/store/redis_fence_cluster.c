/* tests/store/redis_fence_cluster.c -- fenced writes (issue 19) through the Redis Cluster
 * view, against a real 6-node cluster (3 masters + 1 replica each) this program creates:
 *   slots        the mark's slot (ldl_redis_cluster_fence_slot) is CLUSTER KEYSLOT of its
 *                name, and "{R}..." keys share it, hostile names (braces, quotes) included
 *   protocol     first / equal / lower / higher fences on the master that owns the slot;
 *                the reply's type passes through (status, nil, integer)
 *   cross-slot   a key in another slot than the mark's: LDL_EINVAL with a why, and no node
 *                ran a script (INFO commandstats of every master unchanged)
 *   command err  a command failing inside the script leaves the mark where it was
 *   migration    the slot moving: ASK followed (ASKING), then MOVED followed; the mark moved
 *                along keeps refusing a stale fence on the new master
 *   SIGSTOP      a holder (lock through the Cluster view) paused past its lease, continued
 *                after its successor wrote: its fenced write is refused, the key holds the
 *                successor's data
 *   durability   ldl_redis_cluster_check_durability asks every master: 0 with the test
 *                cluster's appendonly no (why names a master), 1 once every master has
 *                appendonly yes + appendfsync always, 0 again when ONE master falls back to
 *                everysec (why names that master's port)
 *   async        the non-blocking view's fenced write (ldl_redis_cluster_async_fence):
 *                first / lower fences routed to the mark's master, cross-slot and NULL
 *                completion refused before anything is sent; after the slot moved under a
 *                map read before the move, a MOVED answers LDL_ESTORE once, the map is read
 *                again and the next submit lands on the new master; a write still queued
 *                when the view is freed completes LDL_ESTORE exactly once
 * Run through tests/store/with_redis_cluster.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_cluster_server.h"

/* ------------------------------------------------------------ helpers */
static long evals_everywhere(void)
{
    long n = 0;
    int i;
    for (i = 0; i < NN; i++) {
        redisContext *c = conn(i);
        if (c) { n += rs_cmd_calls(c, "eval") + rs_cmd_calls(c, "evalsha"); redisFree(c); }
    }
    return n;
}

/* a reply of node i to a command (caller frees) */
static redisReply *on_node(int i, const char *a0, const char *a1, const char *a2)
{
    redisContext *c = conn(i);
    redisReply *r = c ? rs_cmd(c, a0, a1, a2, NULL) : NULL;
    if (c) redisFree(c);
    return r;
}

/* GET key on the master of its slot */
static int get_is(ldl_redis_cluster *rc, const char *key, const char *want)
{
    (void)rc;
    return rs_is(on_node(master_of_slot(ldl_redis_cluster_keyslot(key, strlen(key))), "GET", key, NULL), want);
}

static int fence3(ldl_redis_cluster *rc, const char *res, int64_t f, int nkeys, redisReply **out, const char *a0, ...)
{
    const char *argv[16];
    int argc = 0;
    va_list ap;
    const char *s = a0;
    va_start(ap, a0);
    while (s && argc < 16) { argv[argc++] = s; s = va_arg(ap, const char *); }
    va_end(ap);
    return ldl_redis_cluster_fence(rc, res, f, nkeys, NULL, argc, argv, NULL, out);
}

static int keyslot_of(const char *name)
{
    redisReply *r = on_node(0, "CLUSTER", "KEYSLOT", name);
    int s = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -2;
    if (r) freeReplyObject(r);
    return s;
}

/* ------------------------------------------------------------ slots */
static void test_slots(ldl_redis_cluster *rc)
{
    static const char *names[] = { "report:42", "it's \"q\"", "{x}y", "}lead", "a}b", "tail{" };
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char mark[256], data[256];
        int s = ldl_redis_cluster_fence_slot(rc, names[i]);
        snprintf(mark, sizeof mark, "{%s}:fc:mark", names[i]);
        snprintf(data, sizeof data, "{%s}:data", names[i]);
        ST_CHECK(s >= 0 && s == keyslot_of(mark), "mark slot of \"%s\": %d, server %d", names[i], s, keyslot_of(mark));
        if (!strchr(names[i], '}'))
            ST_CHECK(s == keyslot_of(data), "\"{R}:data\" shares the mark's slot for \"%s\"", names[i]);
    }
    ST_CHECK(ldl_redis_cluster_fence_slot(rc, "") == -1 && ldl_redis_cluster_fence_slot(rc, NULL) == -1 &&
             ldl_redis_cluster_fence_slot(NULL, "x") == -1, "%s", "bad names: -1");
}

/* ------------------------------------------------------------ the protocol */
static void test_protocol(ldl_redis_cluster *rc)
{
    redisReply *rep = NULL;
    int rc_;
    rc_ = fence3(rc, "cp", 5, 1, &rep, "SET", "{cp}:data", "five", NULL);
    ST_CHECK(rc_ == 1 && rep && rep->type == REDIS_REPLY_STATUS, "first fence: %d %s", rc_, ldl_redis_cluster_why(rc));
    if (rep) freeReplyObject(rep);
    rep = NULL;
    rc_ = fence3(rc, "cp", 5, 1, &rep, "SET", "{cp}:data", "five-b", "GET", NULL);
    ST_CHECK(rc_ == 1 && rep && rep->type == REDIS_REPLY_STRING && strcmp(rep->str, "five") == 0,
             "equal fence, bulk reply: %d", rc_);
    if (rep) freeReplyObject(rep);
    rep = NULL;
    rc_ = fence3(rc, "cp", 5, 1, &rep, "SET", "{cp}:new", "x", "GET", NULL);
    ST_CHECK(rc_ == 1 && rep && rep->type == REDIS_REPLY_NIL, "nil reply: %d", rc_);
    if (rep) freeReplyObject(rep);
    rep = NULL;
    rc_ = fence3(rc, "cp", 4, 1, &rep, "SET", "{cp}:data", "four", NULL);
    ST_CHECK(rc_ == 0 && rep == NULL && get_is(rc, "{cp}:data", "five-b"), "lower refused: %d", rc_);
    rc_ = fence3(rc, "cp", 6, 1, &rep, "INCR", "{cp}:n", NULL);
    ST_CHECK(rc_ == 1 && rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1, "higher, integer reply: %d", rc_);
    if (rep) freeReplyObject(rep);
    ST_CHECK(get_is(rc, "{cp}:fc:mark", "6"), "%s", "the mark on the slot's master is 6");
    /* two keys, both tagged */
    rc_ = fence3(rc, "cp", 6, 2, NULL, "DEL", "{cp}:new", "{cp}:n", NULL);
    ST_CHECK(rc_ == 1, "two tagged keys: %d %s", rc_, ldl_redis_cluster_why(rc));
    /* the command fails inside: the mark stays */
    rep = NULL;
    rc_ = fence3(rc, "cp", 9, 1, &rep, "INCR", "{cp}:data", NULL);
    ST_CHECK(rc_ == LDL_ESTORE && rep && rep->type == REDIS_REPLY_ERROR && get_is(rc, "{cp}:fc:mark", "6"),
             "failing command: %d, mark unmoved", rc_);
    if (rep) freeReplyObject(rep);
}

/* ------------------------------------------------------------ cross-slot */
static void test_cross_slot(ldl_redis_cluster *rc)
{
    long before = evals_everywhere();
    const char *argv[5];
    int keyidx[2], rc_, s1, s2;
    argv[0] = "SET"; argv[1] = "plain-key-elsewhere"; argv[2] = "v";
    s1 = ldl_redis_cluster_fence_slot(rc, "xs");
    s2 = ldl_redis_cluster_keyslot(argv[1], strlen(argv[1]));
    ST_CHECK(s1 != s2, "%s", "the test key is in another slot");
    rc_ = ldl_redis_cluster_fence(rc, "xs", 1, 1, NULL, 3, argv, NULL, NULL);
    ST_CHECK(rc_ == LDL_EINVAL && strstr(ldl_redis_cluster_why(rc), "slot") && strstr(ldl_redis_cluster_why(rc), "refused"),
             "key in another slot refused: %d %s", rc_, ldl_redis_cluster_why(rc));
    /* the second key of two is the foreign one */
    argv[0] = "MSET"; argv[1] = "{xs}:a"; argv[2] = "1"; argv[3] = "{other}:b"; argv[4] = "2";
    keyidx[0] = 1; keyidx[1] = 3;
    rc_ = ldl_redis_cluster_fence(rc, "xs", 1, 2, keyidx, 5, argv, NULL, NULL);
    ST_CHECK(rc_ == LDL_EINVAL && strstr(ldl_redis_cluster_why(rc), "argv[3]"), "second key foreign: %d %s", rc_,
             ldl_redis_cluster_why(rc));
    ST_CHECK(ldl_redis_cluster_fence(rc, "xs", 0, 0, NULL, 1, argv, NULL, NULL) == LDL_EINVAL, "%s", "fence 0");
    ST_CHECK(ldl_redis_cluster_fence(rc, "", 1, 0, NULL, 1, argv, NULL, NULL) == LDL_EINVAL, "%s", "empty resource");
    ST_CHECK(ldl_redis_cluster_fence(rc, "xs", 1, 5, NULL, 5, argv, NULL, NULL) == LDL_EINVAL, "%s", "nkeys too big");
    ST_CHECK(evals_everywhere() == before, "nothing was sent to any node (%ld scripts run, %ld before)",
             evals_everywhere(), before);
    ST_CHECK(rs_int(on_node(master_of_slot(s1), "EXISTS", "{xs}:fc:mark", NULL), -1) == 0, "%s", "no mark created");
    /* the same write with tagged keys goes through */
    argv[3] = "{xs}:b";
    ST_CHECK(ldl_redis_cluster_fence(rc, "xs", 1, 2, keyidx, 5, argv, NULL, NULL) == 1, "tagged MSET: %s",
             ldl_redis_cluster_why(rc));
}

/* ------------------------------------------------------------ migration */
static int cmd_ok(int node, const char *a0, const char *a1, const char *a2, const char *a3, const char *a4)
{
    redisContext *c = conn(node);
    redisReply *r = c ? rs_cmd(c, a0, a1, a2, a3, a4, NULL) : NULL;
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (r && !ok) fprintf(stderr, "  node %d: %s %s: %s\n", node, a0, a1, r->str);
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}

static void test_migration(ldl_redis_cluster *rc)
{
    int slot = ldl_redis_cluster_fence_slot(rc, "mv"), a = master_of_slot(slot), b = -1, s, i, rc_;
    char ss[16];
    const ldl_redis_cluster_stats *st;
    uint64_t ask0, moved0;
    for (s = 0; s < 16384 && b < 0; s += 1000) { int m = master_of_slot(s); if (m >= 0 && m != a) b = m; }
    ST_CHECK(a >= 0 && b >= 0, "%s", "two masters");
    if (a < 0 || b < 0) return;
    ST_CHECK(fence3(rc, "mv", 10, 1, NULL, "SET", "{mv}:data", "ten", NULL) == 1, "%s", "written before the move");
    snprintf(ss, sizeof ss, "%d", slot);
    ST_CHECK(cmd_ok(b, "CLUSTER", "SETSLOT", ss, "IMPORTING", g_n[a].id) &&
             cmd_ok(a, "CLUSTER", "SETSLOT", ss, "MIGRATING", g_n[b].id), "%s", "slot migrating");
    {
        redisContext *c = conn(a);
        redisReply *r = c ? rs_cmd(c, "MIGRATE", "127.0.0.1", g_n[b].portstr, "", "0", "5000", "KEYS",
                                   "{mv}:fc:mark", "{mv}:data", NULL) : NULL;
        ST_CHECK(r && r->type == REDIS_REPLY_STATUS, "MIGRATE: %s", r && r->str ? r->str : "?");
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
    }
    ST_CHECK(cmd_ok(b, "SCRIPT", "FLUSH", NULL, NULL, NULL), "%s", "target's script cache emptied");
    st = ldl_redis_cluster_stats_get(rc);
    ask0 = st->ask;
    rc_ = fence3(rc, "mv", 11, 1, NULL, "SET", "{mv}:data", "eleven", NULL);
    ST_CHECK(rc_ == 1 && st->ask > ask0, "in the ASK window: %d (ask %llu) %s", rc_, (unsigned long long)st->ask,
             ldl_redis_cluster_why(rc));
    rc_ = fence3(rc, "mv", 10, 1, NULL, "SET", "{mv}:data", "stale", NULL);
    ST_CHECK(rc_ == 0, "stale in the ASK window, judged by the moved mark: %d %s", rc_, ldl_redis_cluster_why(rc));
    ST_CHECK(cmd_ok(b, "CLUSTER", "SETSLOT", ss, "NODE", g_n[b].id), "%s", "slot handed over");
    for (i = 0; i < NN; i++)
        if (i != b && node_info_has(i, "NODES", "myself,master")) cmd_ok(i, "CLUSTER", "SETSLOT", ss, "NODE", g_n[b].id);
    moved0 = st->moved;
    rc_ = fence3(rc, "mv", 12, 1, NULL, "SET", "{mv}:data", "twelve", NULL);
    ST_CHECK(rc_ == 1 && st->moved > moved0, "MOVED followed: %d (moved %llu) %s", rc_, (unsigned long long)st->moved,
             ldl_redis_cluster_why(rc));
    ST_CHECK(rs_is(on_node(b, "GET", "{mv}:data", NULL), "twelve") && rs_is(on_node(b, "GET", "{mv}:fc:mark", NULL), "12"),
             "%s", "data and mark on the new master");
    ST_CHECK(fence3(rc, "mv", 11, 1, NULL, "SET", "{mv}:data", "stale", NULL) == 0, "%s", "stale after the move");
}

/* ------------------------------------------------------------ durability */
static void set_all_masters(const char *k, const char *v)
{
    int i;
    for (i = 0; i < NN; i++)
        if (node_info_has(i, "NODES", "myself,master")) cmd_ok(i, "CONFIG", "SET", k, v, NULL);
}

static void test_durability(ldl_redis_cluster *rc)
{
    char why[512];
    int a = ldl_redis_cluster_check_durability(rc, why, sizeof why), m;
    ST_CHECK(a == 0 && strstr(why, "master 127.0.0.1:") && strstr(why, "appendonly"), "appendonly no: %d %s", a, why);
    set_all_masters("appendonly", "yes");
    set_all_masters("appendfsync", "always");
    a = ldl_redis_cluster_check_durability(rc, why, sizeof why);
    ST_CHECK(a == 1 && strstr(why, "all 3 masters"), "every master durable: %d %s", a, why);
    m = master_of_slot(ldl_redis_cluster_keyslot("dur", 3));
    ST_CHECK(m >= 0 && cmd_ok(m, "CONFIG", "SET", "appendfsync", "everysec", NULL), "%s", "one master everysec");
    a = ldl_redis_cluster_check_durability(rc, why, sizeof why);
    ST_CHECK(a == 0 && m >= 0 && strstr(why, g_n[m].portstr) && strstr(why, "appendfsync"),
             "one master not durable: %d %s", a, why);
    ST_CHECK(ldl_redis_cluster_check_durability(NULL, why, sizeof why) == LDL_EINVAL, "%s", "NULL adapter");
    set_all_masters("appendfsync", "everysec");
    set_all_masters("appendonly", "no");
}

/* ------------------------------------------------------------ the non-blocking view */
typedef struct afx { int calls, rc; int rtype; } afx;
static void afx_done(void *ctx, int rc, redisReply *reply)
{
    afx *a = (afx *)ctx;
    a->calls++;
    a->rc = rc;
    a->rtype = reply ? reply->type : -1;
    if (reply) freeReplyObject(reply);
}

/* submit one fenced write and pump until it completes (10 s at most); the answer, or
   the submit's own negative answer */
static int afence(ldl_redis_cluster_async *ra, const char *res, int64_t f, afx *a, const char *k, const char *v)
{
    const char *argv[3];
    uint64_t end = st_now_ms() + 10000;
    int rc_;
    argv[0] = "SET"; argv[1] = k; argv[2] = v;
    memset(a, 0, sizeof *a);
    rc_ = ldl_redis_cluster_async_fence(ra, res, f, 1, NULL, 3, argv, NULL, afx_done, a);
    if (rc_ != LDL_OK) return rc_;
    while (a->calls == 0 && st_now_ms() < end) { ldl_redis_cluster_async_pump(ra); st_sleep_ms(1); }
    return a->calls == 1 ? a->rc : -1000;
}

static void test_async_before(ldl_redis_cluster_async *ra)
{
    afx a;
    long before;
    const char *argv[3] = { "SET", "elsewhere", "x" };
    int rc_ = afence(ra, "am", 5, &a, "{am}:data", "five");
    ST_CHECK(rc_ == 1 && a.rtype == REDIS_REPLY_STATUS, "async first fence: %d %s", rc_, ldl_redis_cluster_async_why(ra));
    rc_ = afence(ra, "am", 4, &a, "{am}:data", "four");
    ST_CHECK(rc_ == 0 && a.rtype == -1 && get_is(NULL, "{am}:data", "five"), "async lower refused: %d", rc_);
    ST_CHECK(get_is(NULL, "{am}:fc:mark", "5"), "%s", "async: the mark on the slot's master is 5");
    before = evals_everywhere();
    memset(&a, 0, sizeof a);
    rc_ = ldl_redis_cluster_async_fence(ra, "am", 6, 1, NULL, 3, argv, NULL, afx_done, &a);
    ST_CHECK(rc_ == LDL_EINVAL && a.calls == 0 && strstr(ldl_redis_cluster_async_why(ra), "slot"),
             "async cross-slot refused before sending: %d %s", rc_, ldl_redis_cluster_async_why(ra));
    argv[1] = "{am}:data";
    rc_ = ldl_redis_cluster_async_fence(ra, "am", 6, 1, NULL, 3, argv, NULL, NULL, NULL);
    ST_CHECK(rc_ == LDL_EINVAL, "async NULL completion refused: %d", rc_);
    rc_ = ldl_redis_cluster_async_fence(ra, "am", 0, 1, NULL, 3, argv, NULL, afx_done, &a);
    ST_CHECK(rc_ == LDL_EINVAL && a.calls == 0, "async fence 0 refused: %d", rc_);
    ST_CHECK(evals_everywhere() == before, "%s", "async refusals sent nothing");
}

/* after test_migration moved "mv" to another master: this view's map predates the move */
static void test_async_after(ldl_redis_cluster_async *ra)
{
    afx a;
    int rc_ = LDL_ESTORE, tries = 0;
    while (rc_ == LDL_ESTORE && tries < 5) {
        uint64_t end = st_now_ms() + 300;
        rc_ = afence(ra, "mv", 13, &a, "{mv}:data", "thirteen");
        tries++;
        while (rc_ == LDL_ESTORE && st_now_ms() < end) { ldl_redis_cluster_async_pump(ra); st_sleep_ms(5); }
    }
    ST_CHECK(rc_ == 1 && tries >= 2 && tries <= 3, "async after the move: %d after %d submits (a MOVED first) %s", rc_,
             tries, ldl_redis_cluster_async_why(ra));
    ST_CHECK(get_is(NULL, "{mv}:data", "thirteen") && get_is(NULL, "{mv}:fc:mark", "13"), "%s",
             "async: data and mark on the new master");
    rc_ = afence(ra, "mv", 12, &a, "{mv}:data", "stale");
    ST_CHECK(rc_ == 0 && get_is(NULL, "{mv}:data", "thirteen"), "async stale after the move: %d", rc_);
}

static void test_async_free(void)
{
    static ldl_redis_cluster_async ra;
    static ldl_redis_cluster_req reqs[8];
    const char *argv[3] = { "SET", "{af}:data", "x" };
    afx a;
    int rc_;
    memset(&a, 0, sizeof a);
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "fc", 2000, reqs, 8) == LDL_OK, "%s", "second async view");
    rc_ = ldl_redis_cluster_async_fence(&ra, "af", 3, 1, NULL, 3, argv, NULL, afx_done, &a);
    ST_CHECK(rc_ == LDL_OK && a.calls == 0, "queued: %d", rc_);
    ldl_redis_cluster_async_free(&ra);
    ST_CHECK(a.calls == 1 && a.rc == LDL_ESTORE, "freed with a write queued: %d call(s), rc %d", a.calls, a.rc);
}

/* ------------------------------------------------------------ SIGSTOP */
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

#define PAUSE_TTL 500

static int lock_open(ldl_lock *lk, ldl_store *s)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = "fence-paused";
    d.ttl_ms = PAUSE_TTL;
    d.store = s;
    return ldl_lock_init(lk, &d) == LDL_OK ? 0 : -1;
}

static int acquire_within(ldl_lock *lk, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    for (;;) {
        if (ldl_lock_acquire(lk) == 1) return 1;
        if (st_now_ms() >= end) return 0;
        st_sleep_ms(5);
    }
}

static int paused_worker(void *arg, int in, int out)
{
    static ldl_redis_cluster rc;
    ldl_store s;
    ldl_lock lk;
    int64_t f;
    int rc_;
    (void)arg;
    if (ldl_redis_cluster_init(&rc, g_seeds, "fc", 2000) != LDL_OK) return 100;
    s = ldl_redis_cluster_store(&rc);
    if (lock_open(&lk, &s) != 0 || !acquire_within(&lk, 10000)) return 101;
    f = ldl_lock_fencing_token(&lk);
    st_send(out, 'r');
    if (st_recv(in, 60000) != 'g') return 102;
    rc_ = fence3(&rc, "paused", f, 1, NULL, "SET", "{paused}:data", "old-holder", NULL);
    ldl_lock_dispose(&lk);
    ldl_redis_cluster_free(&rc);
    return rc_ == 0 ? 0 : 10 + (rc_ < 0 ? 1 : 2);
}

static void test_sigstop(ldl_redis_cluster *rc)
{
    st_child ch;
    ldl_store s = ldl_redis_cluster_store(rc);
    ldl_lock lk;
    int64_t f2;
    int rc_;
    ST_CHECK(lock_open(&lk, &s) == 0, "%s", "successor lock");
    ST_CHECK(st_fork(&ch, paused_worker, NULL) == 0, "%s", "fork");
    ST_CHECK(st_recv(ch.from_child, 20000) == 'r', "%s", "holder ready");
    kill(ch.pid, SIGSTOP);
    st_sleep_ms(PAUSE_TTL + PAUSE_TTL / 2);
    ST_CHECK(acquire_within(&lk, 10000) == 1, "%s", "successor takes over");
    f2 = ldl_lock_fencing_token(&lk);
    rc_ = fence3(rc, "paused", f2, 1, NULL, "SET", "{paused}:data", "successor", NULL);
    ST_CHECK(rc_ == 1, "successor's write: %d %s", rc_, ldl_redis_cluster_why(rc));
    st_send(ch.to_child, 'g');
    kill(ch.pid, SIGCONT);
    rc_ = st_join(&ch, 30000);
    ST_CHECK(rc_ == 0, "paused holder's late fenced write: exit %d (0 = refused as stale)", rc_);
    ST_CHECK(get_is(rc, "{paused}:data", "successor"), "%s", "the key holds the successor's data");
    ldl_lock_release(&lk);
    ldl_lock_dispose(&lk);
}

/* the base adapter's reply bounds hold through the Cluster view (issue 37 item 3, decision
   0119): a fenced LRANGE of 17 elements is LDL_ESTORE, 16 is 1 with 16 elements */
static void test_reply_bounds(ldl_redis_cluster *rc)
{
    int n, k, i;
    for (k = 0; k < 3; k++) {
        char key[32], num[16];
        redisReply *rep = NULL;
        int rc_;
        n = k == 1 ? 17 : 16;
        snprintf(key, sizeof key, "{rbc}:l%d", n);
        if (k < 2) {
            int node = master_of_slot(ldl_redis_cluster_keyslot(key, strlen(key)));
            redisContext *c = conn(node);
            if (c) rs_int(rs_cmd(c, "DEL", key, NULL), 0);
            for (i = 0; c && i < n; i++) { snprintf(num, sizeof num, "%d", i); rs_int(rs_cmd(c, "RPUSH", key, num, NULL), 0); }
            if (c) redisFree(c);
        }
        if (k == 2) st_sleep_ms(1100);     /* the dropped link is tried again after 1 s */
        rc_ = fence3(rc, "rbc", 10 + k, 1, &rep, "LRANGE", key, "0", "-1", NULL);
        if (n == 16)
            ST_CHECK(rc_ == 1 && rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 16,
                     "cluster: a fenced LRANGE of 16 is 1 with 16 elements%s (rc %d: %s)", k ? ", after the refusal" : "",
                     rc_, ldl_redis_cluster_why(rc));
        else
            ST_CHECK(rc_ == LDL_ESTORE && rep == NULL && strstr(ldl_redis_cluster_why(rc), "refused"),
                     "cluster: a fenced LRANGE of 17 is LDL_ESTORE (rc %d: %s)", rc_, ldl_redis_cluster_why(rc));
        if (rep) freeReplyObject(rep);
    }
}

int main(void)
{
    static ldl_redis_cluster rc;
    static ldl_redis_cluster_async ra;
    static ldl_redis_cluster_req reqs[16];
    int async_ok = 0;
    st_ignore_sigpipe();
    if (start_cluster() != 0) { ST_CHECK(0, "%s", "cluster start"); stop_cluster(); return st_report(); }
    if (ldl_redis_cluster_init(&rc, g_seeds, "fc", 2000) != LDL_OK) {
        ST_CHECK(0, "init: %s", ldl_redis_cluster_why(&rc));
    } else {
        st_case("slots", RS_CASE_S);
        test_slots(&rc);
        st_case("protocol", RS_CASE_S);
        test_protocol(&rc);
        st_case("cross_slot", RS_CASE_S);
        test_cross_slot(&rc);
        st_case("durability", RS_CASE_S);
        test_durability(&rc);
        st_case("async", RS_CASE_S);
        async_ok = ldl_redis_cluster_async_init(&ra, g_seeds, "fc", 2000, reqs, 16) == LDL_OK;
        ST_CHECK(async_ok, "async init: %s", ldl_redis_cluster_async_why(&ra));
        if (async_ok) test_async_before(&ra);
        st_case("migration", RS_CASE_S);
        test_migration(&rc);
        st_case("async_moved", RS_CASE_S);
        if (async_ok) test_async_after(&ra);
        st_case("async_free", RS_CASE_S);
        test_async_free();
        st_case("reply_bounds", RS_CASE_S);
        test_reply_bounds(&rc);
        st_case("sigstop", RS_CASE_S);
        test_sigstop(&rc);
    }
    ldl_redis_cluster_free(&rc);
    if (async_ok) ldl_redis_cluster_async_free(&ra);
    stop_cluster();
    return st_report();
}
