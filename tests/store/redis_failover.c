/* tests/store/redis_failover.c -- issue 20: fences across UNCLEAN failovers of a real Redis
 * Cluster (6 redis-server processes on 127.0.0.1 started by this program: 3 masters, one
 * replica each, cluster-node-timeout 2 s; tests/store/with_redis_cluster.sh is the backstop).
 *
 * One round = one unclean failover of the master M that owns the round's keys:
 *   1. a few lifecycles on the keys (replicated: WAIT 1), the replica R SIGSTOPped, the
 *      replication link cut (CLIENT KILL TYPE replica), then ONE more grant per key on M:
 *      grants the replica never receives (its counters really lag);
 *   2. M SIGKILLed, R resumed: the cluster notices past cluster-node-timeout and promotes R
 *      by itself (CLUSTER FAILOVER TAKEOVER only if it has not within 25 s: counted);
 *   3. the next grant of every key on R is compared with every token granted before:
 *      equal = a REPEATED fence, lower = a REGRESSED one;
 *   4. M restarted on its dir and port: it rejoins as R's replica; the next round kills R.
 * Two phases, the same rounds:
 *   before  today's (v0.2) grant script: a plain ldl_redis on the slot's master, epoch
 *           fences off. Repeats are COUNTED and printed (the hazard README names); the test
 *           only asks for at least one (proof that the replica's counter really lagged).
 *   after   ldl_redis_cluster (epoch-ordered fences, decision 0115): 0 repeated or regressed
 *           fences, or the test fails.
 * LDL_FAILOVER_ROUNDS=N (default 2 per phase) for the docs' figure.
 *
 *   edge    a separate one-node cluster: CLUSTER SET-CONFIG-EPOCH 3000000 (E * 2^32 above 2^53:
 *           the script's exact text compare), 2^31 - 1 (the largest base, 9223372032559808512,
 *           still an int64), 2^31 (refused: LDL_ESTORE, the counter unchanged); a legacy
 *           counter (57) jumps to E * 2^32, a counter above it keeps rising by one, a TTL put
 *           on the fence key is removed; the epoch scripts' SHA1s match SCRIPT LOAD.
 *           A cached epoch under a replication ID the node does not have is not used.
 *   acl     on that node: the documented Cluster ACL line (+info +cluster|info) grants; the
 *           same line without +cluster|info, or without +info, answers LDL_ESTORE (NOPERM) and
 *           changes nothing.
 * Run through tests/store/with_redis_cluster.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include <stdlib.h>
#include "tests/store/redis_cluster_server.h"

#define NK 4                                /* keys per round, all on the victim master */

static int cmd_ok(int node, const char *a0, const char *a1, const char *a2, const char *a3, const char *a4)
{
    redisContext *c = conn(node);
    redisReply *r = c ? rs_cmd(c, a0, a1, a2, a3, a4, NULL) : NULL;
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (r && !ok) fprintf(stderr, "  node %d: %s %s %s: %s\n", node, a0, a1, a2 ? a2 : "", r->str);
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}

/* cluster_my_epoch of node i, -1 when unreadable */
static long long my_epoch(int i)
{
    redisContext *c = conn(i);
    redisReply *r = c ? rs_cmd(c, "CLUSTER", "INFO", NULL) : NULL;
    long long e = -1;
    const char *p;
    if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, "cluster_my_epoch:")) != NULL)
        e = atoll(p + 17);
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return e;
}

/* the replica of master m (its CLUSTER NODES "myself" line names m's id), -1 when none */
static int replica_of(int m)
{
    int i, replica = -1;
    for (i = 0; i < NN; i++) {
        redisContext *c;
        redisReply *r;
        if (i == m || g_n[i].pid <= 0) continue;
        c = conn(i);
        r = c ? rs_cmd(c, "CLUSTER", "NODES", NULL) : NULL;
        if (r && r->type == REDIS_REPLY_STRING) {
            char *line = strstr(r->str, "myself,slave");
            char *ls = line, *end;
            while (ls && ls > r->str && ls[-1] != '\n') ls--;
            end = line ? strchr(line, '\n') : NULL;
            if (line && g_n[m].id[0] && strstr(ls, g_n[m].id) && (!end || strstr(ls, g_n[m].id) < end)) replica = i;
        }
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
    }
    return replica;
}

/* every live node says cluster_state:ok and every replica's link is up */
static int settled(uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        int i, ok = 1;
        for (i = 0; i < NN && ok; i++) {
            redisContext *c = conn(i);
            redisReply *r;
            if (!c) { ok = 0; break; }
            ok &= node_info_has(i, "INFO", "cluster_state:ok");
            r = rs_cmd(c, "INFO", "replication", NULL);
            if (r && r->type == REDIS_REPLY_STRING && strstr(r->str, "role:slave") &&
                !strstr(r->str, "master_link_status:up")) ok = 0;
            if (r) freeReplyObject(r);
            redisFree(c);
        }
        if (ok) return 1;
        st_sleep_ms(100);
    }
    return 0;
}

static void timeout_all(void)
{
    int i;
    for (i = 0; i < NN; i++) if (g_n[i].pid > 0) cmd_ok(i, "CONFIG", "SET", "cluster-node-timeout", "2000", NULL);
}

/* ------------------------------------------------------------ the two grant paths */
typedef struct phase {
    const char *name, *prefix;
    int epoch;                              /* 1: ldl_redis_cluster; 0: a plain ldl_redis (v0.2 script) */
    ldl_redis_cluster rc;
    char keys[NK][24];
    int64_t seen[NK];                       /* the highest token ever granted per key */
    int rounds, repeated, regressed, hit_rounds, takeovers;
} phase;

/* one grant of key k through the phase's path; 1 (token in *t), 0, negative */
static int grant(phase *p, int k, uint32_t ttl, int64_t *t)
{
    if (p->epoch) {
        ldl_store s = ldl_redis_cluster_store(&p->rc);
        return s.acquire(s.ctx, p->keys[k], ttl, t);
    } else {
        int node = master_of_slot(ldl_redis_cluster_slot(&p->rc, p->keys[k])), rc;
        redisContext *c;
        ldl_redis r;
        ldl_store s;
        if (node < 0 || !(c = conn(node))) return LDL_ESTORE;
        ldl_redis_init(&r, c, p->prefix);            /* epoch fences off: today's script */
        s = ldl_redis_store(&r);
        rc = s.acquire(s.ctx, p->keys[k], ttl, t);
        redisFree(c);
        return rc;
    }
}

static int release(phase *p, int k, int64_t t)
{
    if (p->epoch) {
        ldl_store s = ldl_redis_cluster_store(&p->rc);
        return s.release(s.ctx, p->keys[k], t);
    } else {
        int node = master_of_slot(ldl_redis_cluster_slot(&p->rc, p->keys[k])), rc;
        redisContext *c;
        ldl_redis r;
        ldl_store s;
        if (node < 0 || !(c = conn(node))) return LDL_ESTORE;
        ldl_redis_init(&r, c, p->prefix);
        s = ldl_redis_store(&r);
        rc = s.release(s.ctx, p->keys[k], t);
        redisFree(c);
        return rc;
    }
}

/* a token granted: judge it against every earlier one of its key */
static int judge(phase *p, int k, int64_t t)
{
    int bad = 0;
    if (t == p->seen[k]) { p->repeated++; bad = 1; }
    else if (t < p->seen[k]) { p->regressed++; bad = 1; }
    if (t > p->seen[k]) p->seen[k] = t;
    return bad;
}

/* NK keys of phase p on one master; that master's index */
static int pick_keys(phase *p)
{
    int i, k = 0, m = -1;
    char addr[80];
    for (i = 0; k < NK && i < 20000; i++) {
        char key[24];
        snprintf(key, sizeof key, "%s%d", p->prefix, i);
        ldl_redis_cluster_master(&p->rc, key, addr, sizeof addr);
        if (node_of_addr(addr) < 0) continue;
        if (m < 0) m = node_of_addr(addr);
        if (node_of_addr(addr) != m) continue;
        memcpy(p->keys[k++], key, sizeof key);
    }
    return k == NK ? m : -1;
}

static int one_round(phase *p)
{
    int k, m, r, promoted = 0, bad = 0, rc;
    int64_t t, lost[NK];
    long long e_old, e_new;
    uint64_t end, t0 = st_now_ms();
    redisContext *c;
    m = master_of_slot(ldl_redis_cluster_slot(&p->rc, p->keys[0]));
    r = m >= 0 ? replica_of(m) : -1;
    if (!ST_CHECK(m >= 0 && r >= 0, "%s: master and replica of the keys (%d, %d)", p->name, m, r)) return -1;
    e_old = my_epoch(m);
    /* 1. replicated lifecycles, then grants the replica never gets */
    for (k = 0; k < NK; k++) {
        rc = grant(p, k, 30000, &t);
        if (!ST_CHECK(rc == 1, "%s: lifecycle grant %s: %d", p->name, p->keys[k], rc)) return -1;
        bad |= judge(p, k, t);
        release(p, k, t);
    }
    c = conn(m);
    ST_CHECK(c && rs_int(rs_cmd(c, "WAIT", "1", "3000", NULL), -1) == 1, "%s: replica caught up", p->name);
    kill(g_n[r].pid, SIGSTOP);
    ST_CHECK(c && rs_int(rs_cmd(c, "CLIENT", "KILL", "TYPE", "replica", NULL), -1) >= 1, "%s: replication link cut",
             p->name);
    if (c) redisFree(c);
    for (k = 0; k < NK; k++) {
        rc = grant(p, k, 30000, &lost[k]);
        if (!ST_CHECK(rc == 1, "%s: the grant before the kill, %s: %d", p->name, p->keys[k], rc)) {
            kill(g_n[r].pid, SIGCONT);
            return -1;
        }
        bad |= judge(p, k, lost[k]);
    }
    /* 2. the master dies uncleanly; the replica is promoted by the cluster itself */
    st_stop(g_n[m].pid, SIGKILL, 5000);
    g_n[m].pid = 0;
    remove(g_n[m].pidfile);
    kill(g_n[r].pid, SIGCONT);
    end = st_now_ms() + 25000;
    while (st_now_ms() < end && !(promoted = node_info_has(r, "NODES", "myself,master"))) st_sleep_ms(100);
    if (!promoted) {                         /* not expected; counted and printed */
        p->takeovers++;
        cmd_ok(r, "CLUSTER", "FAILOVER", "TAKEOVER", NULL, NULL);
        end = st_now_ms() + 15000;
        while (st_now_ms() < end && !(promoted = node_info_has(r, "NODES", "myself,master"))) st_sleep_ms(100);
    }
    if (!ST_CHECK(promoted, "%s: replica %d promoted", p->name, r)) return -1;
    e_new = my_epoch(r);
    /* 3. the next grant of every key, on the promoted replica */
    for (k = 0; k < NK; k++) {
        rc = -1;
        end = st_now_ms() + 20000;
        while (st_now_ms() < end && (rc = grant(p, k, 30000, &t)) != 1) st_sleep_ms(100);
        if (!ST_CHECK(rc == 1, "%s: grant after the failover, %s: %d (%s)", p->name, p->keys[k], rc,
                      ldl_redis_cluster_why(&p->rc))) return -1;
        if (judge(p, k, t)) {
            bad = 1;
            printf("    %s: %s: token %lld granted after the failover, %lld before (lost on the old master)\n",
                   p->name, p->keys[k], (long long)t, (long long)lost[k]);
        }
        release(p, k, t);
    }
    /* 4. the old master back, as the new one's replica */
    ST_CHECK(launch(&g_n[m]) == 0, "%s: old master %d restarted", p->name, m);
    cmd_ok(m, "CONFIG", "SET", "cluster-node-timeout", "2000", NULL);
    ST_CHECK(settled(60000), "%s: the cluster settled with node %d back", p->name, m);
    ST_CHECK(replica_of(r) == m, "%s: node %d rejoined as node %d's replica", p->name, m, r);
    p->rounds++;
    p->hit_rounds += bad;
    printf("  %s round %d: master %d (epoch %lld) killed, replica %d promoted (epoch %lld), %s, %llu ms\n", p->name,
           p->rounds, m, e_old, r, e_new, bad ? "fence REPEATED or REGRESSED" : "every fence above", 
           (unsigned long long)(st_now_ms() - t0));
    return 0;
}

static void run_phase(phase *p, int rounds)
{
    int i;
    ST_CHECK(ldl_redis_cluster_init(&p->rc, g_seeds, p->prefix, 1000) == LDL_OK, "init");
    ST_CHECK(pick_keys(p) >= 0, "%s: %d keys on one master", p->name, NK);
    for (i = 0; i < rounds; i++) if (one_round(p) != 0) break;
    printf("  %s: %d unclean failovers, %d with a repeated or regressed fence (%d repeated, %d regressed tokens "
           "of %d keys; %.0f per 100 failovers); takeovers forced %d\n", p->name, p->rounds, p->hit_rounds,
           p->repeated, p->regressed, NK, p->rounds ? 100.0 * p->hit_rounds / p->rounds : 0.0, p->takeovers);
    ldl_redis_cluster_free(&p->rc);
}

/* ------------------------------------------------------------ one node: the edges, the ACL */
static cnode g_e;

static uint64_t g_now;
static uint64_t frame_clock(void *ctx) { (void)ctx; return g_now; }
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

/* the non-blocking view with epoch fences: 8 locks pipelined on one connection, the first
   replies carry the epoch, all tokens at or above E * 2^32; answers how many were granted */
static int async_epoch(int64_t base, uint32_t *cached)
{
    static ldl_lock lk[8];
    static ldl_redis_req reqs[32];
    static ldl_redis_async ra;
    static char keys[8][16];
    ldl_async_store as;
    redisContext *c = redisConnectNonBlock("127.0.0.1", g_e.port);
    int i, ok = 0;
    uint64_t end;
    if (!c || ldl_redis_async_init(&ra, c, NULL, reqs, 32) != LDL_OK) return -1;
    ldl_redis_async_set_epoch_fences(&ra, 1);
    as = ldl_redis_async_store(&ra);
    g_now = st_now_ms();
    for (i = 0; i < 8; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        snprintf(keys[i], sizeof keys[i], "as%d", i);
        d.container.scope = nop_scope; d.container.value = nop_value; d.container.shutdown = nop_shutdown;
        d.key = keys[i]; d.ttl_ms = 5000; d.async_store = &as; d.clock.now_ms = frame_clock;
        ldl_lock_init(&lk[i], &d);
        ldl_lock_acquire(&lk[i]);
    }
    end = st_now_ms() + 5000;
    while ((g_now = st_now_ms()) < end) {
        int held = 0;
        ldl_redis_async_pump(&ra);
        for (i = 0; i < 8; i++) { ldl_lock_poll(&lk[i]); held += ldl_lock_state(&lk[i]) == LDL_HELD; }
        if (held == 8) break;
        st_sleep_ms(1);
    }
    for (i = 0; i < 8; i++)
        ok += ldl_lock_state(&lk[i]) == LDL_HELD && ldl_lock_fencing_token(&lk[i]) >= base &&
              ldl_lock_fencing_token(&lk[i]) < base + 4294967296;
    *cached = ra._r._ep_e;
    for (i = 0; i < 8; i++) ldl_lock_release(&lk[i]);
    end = st_now_ms() + 2000;
    while ((g_now = st_now_ms()) < end) { ldl_redis_async_pump(&ra); for (i = 0; i < 8; i++) ldl_lock_poll(&lk[i]); st_sleep_ms(1); }
    for (i = 0; i < 8; i++) ldl_lock_dispose(&lk[i]);
    redisFree(c);
    return ok;
}

static int edge_epoch(long long epoch)
{
    char s[32];
    uint64_t end;
    redisContext *c = rs_connect_port(g_e.port, 2000);
    int ok = 0;
    if (!c) return 0;
    snprintf(s, sizeof s, "%lld", epoch);
    rs_int(rs_cmd(c, "FLUSHALL", NULL), 0);
    ok = rs_is(rs_cmd(c, "CLUSTER", "RESET", "HARD", NULL), "OK") &&
         rs_is(rs_cmd(c, "CLUSTER", "SET-CONFIG-EPOCH", s, NULL), "OK") &&
         rs_is(rs_cmd(c, "CLUSTER", "ADDSLOTSRANGE", "0", "16383", NULL), "OK");
    redisFree(c);
    end = st_now_ms() + 20000;
    while (ok && st_now_ms() < end) {
        redisContext *d = rs_connect_port(g_e.port, 2000);
        redisReply *r = d ? rs_cmd(d, "CLUSTER", "INFO", NULL) : NULL;
        int up = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");
        if (r) freeReplyObject(r);
        if (d) redisFree(d);
        if (up) return 1;
        st_sleep_ms(100);
    }
    return 0;
}

static int64_t fence_of(redisContext *c, const char *key)
{
    char name[128];
    redisReply *r;
    int64_t v = -1;
    snprintf(name, sizeof name, "{ldl:%s}:fence", key);
    r = rs_cmd(c, "GET", name, NULL);
    if (r && r->type == REDIS_REPLY_STRING) v = atoll(r->str);
    if (r) freeReplyObject(r);
    return v;
}

static void set_fence(redisContext *c, const char *key, const char *v, const char *ex)
{
    char name[128];
    snprintf(name, sizeof name, "{ldl:%s}:fence", key);
    if (ex) rs_is(rs_cmd(c, "SET", name, v, "EX", ex, NULL), "OK");
    else rs_is(rs_cmd(c, "SET", name, v, NULL), "OK");
}

static void test_edge(void)
{
    redisContext *c;
    ldl_redis r;
    ldl_store s;
    ldl_store_ext x;
    int64_t t = 0;
    int rc;
    char d[256], key[64];
    redisReply *rep;
    memset(&g_e, 0, sizeof g_e);
    ST_CHECK(st_tmpdir(d, sizeof d, "edge") == 0, "edge dir");
    memcpy(g_e.dir, d, sizeof d);
    snprintf(g_e.pidfile, sizeof g_e.pidfile, "%s.pid", d);
    snprintf(g_e.log, sizeof g_e.log, "%s/redis.log", d);
    g_e.port = pick_port();
    snprintf(g_e.portstr, sizeof g_e.portstr, "%d", g_e.port);
    if (!ST_CHECK(g_e.port > 0 && launch(&g_e) == 0, "edge node started")) return;
    c = rs_connect_port(g_e.port, 2000);
    /* the epoch scripts' SHA1s */
    rep = rs_cmd(c, "SCRIPT", "LOAD", ldl__redis_acquire_epoch_lua, NULL);
    ST_CHECK(rep && rep->type == REDIS_REPLY_STRING && strcmp(rep->str, ldl__redis_acquire_epoch_sha) == 0,
             "epoch acquire SHA1 %s", rep && rep->str ? rep->str : "?");
    if (rep) freeReplyObject(rep);
    rep = rs_cmd(c, "SCRIPT", "LOAD", ldl__redis_owned_epoch_lua, NULL);
    ST_CHECK(rep && rep->type == REDIS_REPLY_STRING && strcmp(rep->str, ldl__redis_owned_epoch_sha) == 0,
             "epoch owned acquire SHA1 %s", rep && rep->str ? rep->str : "?");
    if (rep) freeReplyObject(rep);
    redisFree(c);

    /* E = 7: a legacy counter jumps to 7 * 2^32, then rises by one; a counter above the
       base keeps rising by one; a TTL on the fence key is removed */
    ST_CHECK(edge_epoch(7), "config epoch 7");
    c = rs_connect_port(g_e.port, 2000);
    ldl_redis_init(&r, c, NULL);
    ldl_redis_set_epoch_fences(&r, 1);
    s = ldl_redis_store(&r);
    x = ldl_redis_ext(&r);
    set_fence(c, "legacy", "57", "100");
    rc = s.acquire(s.ctx, "legacy", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_C(7) * 4294967296, "legacy counter 57 at epoch 7: %d %lld", rc, (long long)t);
    ST_CHECK(rs_int(rs_cmd(c, "TTL", "{ldl:legacy}:fence", NULL), 0) == -1, "the raise removed the fence key's TTL");
    ST_CHECK(s.release(s.ctx, "legacy", t) == 1 && s.acquire(s.ctx, "legacy", 5000, &t) == 1 &&
             t == INT64_C(7) * 4294967296 + 1, "then + 1: %lld", (long long)t);
    set_fence(c, "above", "40000000000", "100");                /* above 7 * 2^32 */
    rc = x.acquire_owned(x.ctx, "above", 5000, "edge-owner", &t);
    ST_CHECK(rc == 1 && t == INT64_C(40000000001), "owned, counter above the base: + 1: %d %lld", rc, (long long)t);
    ST_CHECK(rs_int(rs_cmd(c, "TTL", "{ldl:above}:fence", NULL), 0) == -1, "PERSIST on the + 1 path");
    /* the adapter's cache: a stale epoch under a replication ID the node no longer has (as after
       a promotion) is never used: the script reads CLUSTER INFO again */
    ST_CHECK(r._ep_e == 7 && strlen(r._ep_r) == 40, "the node's epoch and replication ID kept (%u)", (unsigned)r._ep_e);
    r._ep_e = 1;
    memset(r._ep_r, 'a', 40);
    set_fence(c, "stale", "5", NULL);
    rc = s.acquire(s.ctx, "stale", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_C(7) * 4294967296 && r._ep_e == 7 &&
             strspn(r._ep_r, "a") < 40,
             "a cached epoch under another replication ID: ignored, read again (%d %lld)", rc, (long long)t);
    ldl_redis_set_epoch_fences(&r, 0);                           /* outside Cluster mode: today's script */
    set_fence(c, "plain", "57", NULL);
    ST_CHECK(s.acquire(s.ctx, "plain", 5000, &t) == 1 && t == 58, "epoch fences off: 57 + 1 (%lld)", (long long)t);
    redisFree(c);

    /* E = 3,000,000: E * 2^32 above 2^53; a counter above 2^53 below the base is raised */
    ST_CHECK(edge_epoch(3000000), "config epoch 3000000");
    c = rs_connect_port(g_e.port, 2000);
    ldl_redis_init(&r, c, NULL);
    ldl_redis_set_epoch_fences(&r, 1);
    set_fence(c, "big", "9007199254741000", NULL);
    rc = s.acquire(s.ctx, "big", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_C(3000000) * 4294967296, "above 2^53, raised: %d %lld", rc, (long long)t);
    set_fence(c, "bigger", "12884901888000005", NULL);           /* above 3,000,000 * 2^32 */
    rc = s.acquire(s.ctx, "bigger", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_C(12884901888000006), "above the base and 2^53: + 1 exactly: %d %lld", rc,
             (long long)t);
    redisFree(c);

    /* E = 2^31 - 1: the largest base; then INT64_MAX - 1 rises to INT64_MAX, then INCR refuses */
    ST_CHECK(edge_epoch(2147483647), "config epoch 2^31 - 1");
    c = rs_connect_port(g_e.port, 2000);
    ldl_redis_init(&r, c, NULL);
    ldl_redis_set_epoch_fences(&r, 1);
    rc = s.acquire(s.ctx, "top", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_C(9223372032559808512), "epoch 2^31 - 1: base %d %lld", rc, (long long)t);
    set_fence(c, "max", "9223372036854775806", NULL);
    rc = s.acquire(s.ctx, "max", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_MAX, "INT64_MAX granted: %d %lld", rc, (long long)t);
    s.release(s.ctx, "max", t);
    rc = s.acquire(s.ctx, "max", 5000, &t);
    ST_CHECK(rc == LDL_ESTORE && fence_of(c, "max") == INT64_MAX, "past INT64_MAX: refused, unchanged (%d, %s)", rc,
             ldl_redis_why(&r));
    redisFree(c);

    /* E = 2^31: refused, nothing changed */
    ST_CHECK(edge_epoch(2147483648LL), "config epoch 2^31");
    c = rs_connect_port(g_e.port, 2000);
    ldl_redis_init(&r, c, NULL);
    ldl_redis_set_epoch_fences(&r, 1);
    set_fence(c, "edge", "57", NULL);
    rc = s.acquire(s.ctx, "edge", 5000, &t);
    printf("  edge: epoch 2^31: acquire %d (%s)\n", rc, ldl_redis_why(&r));
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(&r), "config epoch") && fence_of(c, "edge") == 57 &&
             rs_int(rs_cmd(c, "EXISTS", "{ldl:edge}:lease", NULL), -1) == 0,
             "epoch 2^31: no grant, the counter and the lease untouched");
    redisFree(c);

    /* the ACL: the documented Cluster line grants; without +cluster|info, NOPERM, nothing changed */
    ST_CHECK(edge_epoch(9), "config epoch 9");
    {
        uint32_t cached = 0;
        int n = async_epoch(INT64_C(9) * 4294967296, &cached);
        ST_CHECK(n == 8 && cached == 9, "non-blocking view, epoch fences: %d of 8 granted at 9 * 2^32, epoch %u kept",
                 n, (unsigned)cached);
    }
    {
        int with;   /* 2: the documented line; 1: without +info; 0: without +cluster|info */
        for (with = 2; with >= 0; with--) {
            redisContext *admin = rs_connect_port(g_e.port, 2000), *u = rs_connect_port(g_e.port, 2000);
            ldl_redis ur;
            ldl_store us;
            snprintf(key, sizeof key, "acl%d", with);
            rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldlc", NULL), 0);
            ST_CHECK(rs_is(rs_cmd(admin, "ACL", "SETUSER", "ldlc", "on", ">secret", "resetkeys", "~{ldl:*", "resetchannels",
                                  "-@all", "+evalsha", "+eval", "+exists", "+incr", "+persist", "+get", "+set",
                                  "+pexpire", "+del", "+pttl", with != 0 ? "+cluster|info" : "+pttl",
                                  with != 1 ? "+info" : "+pttl", NULL), "OK"),
                     "ACL SETUSER (case %d)", with);
            ST_CHECK(rs_is(rs_cmd(u, "AUTH", "ldlc", "secret", NULL), "OK"), "AUTH");
            ldl_redis_init(&ur, u, NULL);
            ldl_redis_set_epoch_fences(&ur, 1);
            us = ldl_redis_store(&ur);
            rs_is(rs_cmd(admin, "SCRIPT", "FLUSH", NULL), "OK");     /* the EVAL fallback as the user */
            rc = us.acquire(us.ctx, key, 5000, &t);
            if (with == 2)
                ST_CHECK(rc == 1 && t == INT64_C(9) * 4294967296 && us.renew(us.ctx, key, t, 5000) == 1 &&
                         us.release(us.ctx, key, t) == 1, "ACL with +cluster|info: a grant %d %lld (%s)", rc,
                         (long long)t, ldl_redis_why(&ur));
            else
                ST_CHECK(rc == LDL_ESTORE && (strstr(ldl_redis_why(&ur), "NOPERM") ||
                                           strstr(ldl_redis_why(&ur), "can't run this command")) && fence_of(admin, key) == -1,
                         "ACL without %s: NOPERM, no counter written (%d, %s)", with ? "+info" : "+cluster|info", rc,
                         ldl_redis_why(&ur));
            rs_int(rs_cmd(admin, "ACL", "DELUSER", "ldlc", NULL), 0);
            redisFree(u);
            redisFree(admin);
        }
    }
    st_stop(g_e.pid, SIGTERM, 5000);
    remove(g_e.pidfile);
}

static int want(const char *name)
{
    const char *sel = getenv("LDL_FAILOVER_TESTS");
    return !sel || strstr(sel, name) != NULL;
}

int main(void)
{
    static phase before, after;
    uint64_t t0 = st_now_ms();
    const char *env = getenv("LDL_FAILOVER_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : 2;
    st_ignore_sigpipe();
    if (want("edge")) test_edge();
    if (want("before") || want("after")) {
        if (start_cluster() != 0) {
            ST_CHECK(0, "the cluster did not start");
            stop_cluster();
            return st_report();
        }
        timeout_all();
        ST_CHECK(settled(60000), "every replica's link up before the first round");
        printf("  cluster up in %llu ms; %d unclean failovers per phase\n", (unsigned long long)(st_now_ms() - t0),
               rounds);
        before.name = "before (v0.2 scripts)"; before.prefix = "fb"; before.epoch = 0;
        after.name = "after (epoch fences)"; after.prefix = "fa"; after.epoch = 1;
        if (want("before")) run_phase(&before, rounds);
        if (want("after")) run_phase(&after, rounds);
        if (want("after"))
            ST_CHECK(after.rounds == rounds && after.repeated == 0 && after.regressed == 0,
                     "epoch fences: 0 repeated or regressed fences over %d unclean failovers (%d repeated, %d regressed)",
                     after.rounds, after.repeated, after.regressed);
        if (want("before"))
            ST_CHECK(before.rounds == rounds, "before: %d of %d rounds ran", before.rounds, rounds);
        if (want("before") && want("after"))   /* the lag is real, so the after phase's 0 means something */
            ST_CHECK(before.hit_rounds >= 1, "the scenario makes the replica lag: the v0.2 script repeated or "
                     "regressed a fence in %d of %d failovers", before.hit_rounds, before.rounds);
        printf("FAILOVER-REDIS before %d/%d after %d/%d (failovers with a repeated or regressed fence / unclean "
               "failovers)\n", before.hit_rounds, before.rounds, after.hit_rounds, after.rounds);
        stop_cluster();
    }
    printf("  total %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
