/* tests/store/redis_cluster.c -- adapters/lite_di_lock_redis_cluster.h against a real Redis
 * Cluster this program creates: 6 redis-server processes on 127.0.0.1 (random free ports, the
 * bus port + 10000 free too), `redis-cli --cluster create ... --cluster-replicas 1
 * --cluster-yes` (3 masters, one replica each), stopped at the end.
 *   keyslot     client CRC16 slots == CLUSTER KEYSLOT for 3,000 names (braces, empty tags)
 *   hostile     a seed answering "*2147483647" or a map with holes: init refuses, no crash
 *   conformance the shared store conformance body (tests/store/conformance.h), synchronous
 *   control     one plain ldl_redis on one master: most keys answer MOVED (LDL_ESTORE)
 *   sync1000    1,000 keys over all masters, synchronous: acquire, second acquire refused,
 *               renew, release; every master served a share
 *   async1000   1,000 locks through the lock (non-blocking view), held over renewals, released
 *   migrate     a slot migrated (SETSLOT MIGRATING/IMPORTING + MIGRATE) while its key is held
 *               and renewed: ASK followed with ASKING, then MOVED; tokens keep rising
 *   amoved      non-blocking view: a held lock's slot moved, renewals follow MOVED
 *   aask        non-blocking view: renewals in the ASK window wait for the new owner
 *   contention  4 processes x 3 fenced resources (one per master), synchronous view
 *   sigstop     a master SIGSTOPped 2.5 s under 300 non-blocking locks: its leases LOST at
 *               their deadlines with LEASE_EXPIRED, the others held; pump time printed
 *   syncstop    the same with the synchronous view (30 locks, 4 s): only its leases lost
 *   wait        ldl_redis_cluster_set_wait(1 replica): granted with the replica up; with it
 *               SIGSTOPped, no grant and the unacknowledged lease handed back
 *   failover    CLUSTER FAILOVER of a master with 50 held leases: what happens is printed
 *   takeover    replica frozen while a grant is made, master SIGKILLed, CLUSTER FAILOVER
 *               TAKEOVER: the lease is granted again (the documented hazard, observed), with a
 *               higher token (epoch fences, decision 0115; tests/store/redis_failover.c)
 *   issue 24    aask_long: a renew parked in a 3 s ASK window (timeout_ms 200) is kept;
 *               ask_noscript: ASKING before the EVAL retry; last_error: MOVED as values;
 *               adrop: the drop verb; coverage: a master frozen past cluster-node-timeout
 *               loses healthy masters' leases with full coverage yes, none with no
 * Run through tests/store/with_redis_cluster.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/conformance.h"

#include "tests/store/redis_cluster_server.h"

/* ------------------------------------------------------------ lock plumbing */
static uint64_t g_now;
static uint64_t frame_clock(void *ctx) { (void)ctx; return g_now; }
static void tick(void) { g_now = st_now_ms(); }
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

static int lock_init(ldl_lock *lk, const ldl_store *s, const ldl_async_store *as, const char *key, uint32_t ttl)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = key;
    d.ttl_ms = ttl;
    d.store = s;
    d.async_store = as;
    d.clock.now_ms = as ? frame_clock : NULL;
    return ldl_lock_init(lk, &d);
}

/* ------------------------------------------------------------ keyslot */
static void test_keyslot(void)
{
    redisContext *c = conn(0);
    int i, bad = 0, n = 0;
    static ldl_redis_cluster rc;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, NULL, 1000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    for (i = 0; i < 3000 && c; i++) {
        char name[96];
        redisReply *r;
        switch (i % 6) {
        case 0: snprintf(name, sizeof name, "key:%d", i * 7919); break;
        case 1: snprintf(name, sizeof name, "{ldl:k%d}:lease", i); break;
        case 2: snprintf(name, sizeof name, "x{}y%d", i); break;            /* empty tag: whole name */
        case 3: snprintf(name, sizeof name, "a{b%d}c{d}", i); break;
        case 4: snprintf(name, sizeof name, "{%d", i); break;              /* no closing brace */
        default: snprintf(name, sizeof name, "z}{%d}q", i * 31); break;
        }
        r = rs_cmd(c, "CLUSTER", "KEYSLOT", name, NULL);
        if (rs_int(r, -1) != ldl_redis_cluster_keyslot(name, strlen(name))) bad++;
        n++;
    }
    for (i = 0; i < 500 && c; i++) {                      /* the adapter's lock-key slot */
        char key[64], name[96];
        snprintf(key, sizeof key, "k}{%d", i);
        snprintf(name, sizeof name, "{ldl:%s}:fence", key);
        if (rs_int(rs_cmd(c, "CLUSTER", "KEYSLOT", name, NULL), -1) != ldl_redis_cluster_slot(&rc, key)) bad++;
        n++;
    }
    ST_CHECK(n == 3500 && bad == 0, "keyslot: %d of %d names differ from CLUSTER KEYSLOT", bad, n);
    ldl_redis_cluster_free(&rc);
    if (c) redisFree(c);
}

/* the shared store conformance body, two cluster adapters as the two clients (its awkward
   keys, braces included, land on every master) */
static void test_conformance(void)
{
    static ldl_redis_cluster ca, cb;
    conf_env e;
    ST_CHECK(ldl_redis_cluster_init(&ca, g_seeds, "conf", 1000) == LDL_OK &&
             ldl_redis_cluster_init(&cb, g_seeds, "conf", 1000) == LDL_OK, "conformance init");
    memset(&e, 0, sizeof e);
    e.name = "redis-cluster";
    e.a = ldl_redis_cluster_store(&ca);
    e.b = ldl_redis_cluster_store(&cb);
    e.ttl_ms = 300;
    e.sleep_ms = conf_real_sleep;
    e.tokens_per_key = 1;
    conf_run(&e);
    ldl_redis_cluster_free(&ca);
    ldl_redis_cluster_free(&cb);
}

/* a plain single-node adapter on a cluster: the symptom, the control */
static void test_control(void)
{
    redisContext *c = conn(0);
    ldl_redis r;
    ldl_store s;
    int i, yes = 0, err = 0, moved = 0;
    ST_CHECK(c && ldl_redis_init(&r, c, "ctl") == LDL_OK, "control init");
    s = ldl_redis_store(&r);
    for (i = 0; i < 300 && c; i++) {
        char key[32];
        int64_t t = 0;
        int rc;
        snprintf(key, sizeof key, "c%d", i);
        rc = s.acquire(s.ctx, key, 5000, &t);
        if (rc == 1) yes++;
        else if (rc < 0) { err++; moved += strstr(ldl_redis_why(&r), "MOVED") != NULL; }
    }
    printf("  control: one master alone: %d of 300 granted, %d errors (%d MOVED)\n", yes, err, moved);
    ST_CHECK(yes > 0 && moved > 100 && yes + err == 300, "control: a single-node adapter must see MOVED");
    if (c) redisFree(c);
}

/* ------------------------------------------------------------ 1,000 keys, synchronous */
static void test_sync1000(void)
{
    static ldl_redis_cluster rc;
    static int64_t tok[1000];
    ldl_store s;
    int i, yes = 0, refused = 0, renewed = 0, released = 0, per[NN];
    memset(per, 0, sizeof per);
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "s1k", 1000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    s = ldl_redis_cluster_store(&rc);
    for (i = 0; i < 1000; i++) {
        char key[32], addr[80];
        int64_t t = 0;
        snprintf(key, sizeof key, "k%d", i);
        if (s.acquire(s.ctx, key, 10000, &t) == 1 && t >= 1) { yes++; tok[i] = t; }
        if (s.acquire(s.ctx, key, 10000, &t) == 0) refused++;
        if (s.renew(s.ctx, key, tok[i], 10000) == 1) renewed++;
        ldl_redis_cluster_master(&rc, key, addr, sizeof addr);
        if (node_of_addr(addr) >= 0) per[node_of_addr(addr)]++;
    }
    for (i = 0; i < 1000; i++) {
        char key[32];
        snprintf(key, sizeof key, "k%d", i);
        if (s.release(s.ctx, key, tok[i]) == 1) released++;
    }
    {
        int masters = 0, minshare = 1000;
        for (i = 0; i < NN; i++) if (per[i]) { masters++; if (per[i] < minshare) minshare = per[i]; }
        printf("  sync1000: granted %d, refused %d, renewed %d, released %d over %d masters (smallest share %d)\n",
               yes, refused, renewed, released, masters, minshare);
        ST_CHECK(yes == 1000 && refused == 1000 && renewed == 1000 && released == 1000,
                 "sync1000: %d %d %d %d (%s)", yes, refused, renewed, released, ldl_redis_cluster_why(&rc));
        ST_CHECK(masters == 3 && minshare > 200, "sync1000: keys on %d masters, smallest share %d", masters, minshare);
    }
    ldl_redis_cluster_free(&rc);
}

/* ------------------------------------------------------------ 1,000 locks, non-blocking */
#define AN 1000
static ldl_lock g_al[AN];
static ldl_redis_cluster_req g_areq[2 * AN + 64];
static ldl_redis_cluster_async g_ra;

static void frames(ldl_redis_cluster_async *ra, ldl_lock *l, int n, uint32_t ms, uint32_t *max_pump)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        uint64_t t0 = st_now_ms();
        int i;
        tick();
        ldl_redis_cluster_async_pump(ra);
        for (i = 0; i < n; i++) ldl_lock_poll(&l[i]);
        if (max_pump && st_now_ms() - t0 > *max_pump) *max_pump = (uint32_t)(st_now_ms() - t0);
        st_sleep_ms(5);
    }
}

static void test_async1000(void)
{
    static char keys[AN][16];
    ldl_async_store as;
    int i, pend, held = 0, still = 0, free_after = 0;
    uint64_t end;
    ST_CHECK(ldl_redis_cluster_async_init(&g_ra, g_seeds, "a1k", 1000, g_areq, 2 * AN + 64) == LDL_OK,
             "async init: %s", ldl_redis_cluster_async_why(&g_ra));
    as = ldl_redis_cluster_async_store(&g_ra);
    tick();
    for (i = 0; i < AN; i++) {
        snprintf(keys[i], sizeof keys[i], "a%d", i);
        lock_init(&g_al[i], NULL, &as, keys[i], 1000);
        ldl_lock_acquire(&g_al[i]);
    }
    end = st_now_ms() + 5000;
    do {
        tick();
        ldl_redis_cluster_async_pump(&g_ra);
        for (pend = 0, i = 0; i < AN; i++) pend += ldl_lock_poll(&g_al[i]) == LDL_EINPROGRESS;
        st_sleep_ms(2);
    } while (pend && st_now_ms() < end);
    for (i = 0; i < AN; i++) held += ldl_lock_state(&g_al[i]) == LDL_HELD;
    frames(&g_ra, g_al, AN, 2500, NULL);                 /* >= 3 renewals each at ttl 1000 */
    for (i = 0; i < AN; i++) still += ldl_lock_state(&g_al[i]) == LDL_HELD;
    for (i = 0; i < AN; i++) ldl_lock_release(&g_al[i]);
    frames(&g_ra, g_al, AN, 300, NULL);
    {   /* every key free again: a fresh synchronous adapter gets each one */
        static ldl_redis_cluster rc;
        ldl_store s;
        ldl_redis_cluster_init(&rc, g_seeds, "a1k", 1000);
        s = ldl_redis_cluster_store(&rc);
        for (i = 0; i < AN; i++) {
            int64_t t;
            if (s.acquire(s.ctx, keys[i], 100, &t) == 1) free_after++;
        }
        ldl_redis_cluster_free(&rc);
    }
    printf("  async1000: held %d, still held after 2.5 s %d, free after release %d\n", held, still, free_after);
    ST_CHECK(held == AN && still == AN && free_after == AN, "async1000: %d %d %d (%s)", held, still, free_after,
             ldl_redis_cluster_async_why(&g_ra));
    for (i = 0; i < AN; i++) ldl_lock_dispose(&g_al[i]);
    ldl_redis_cluster_async_free(&g_ra);
}

/* ------------------------------------------------------------ slot migration */
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

/* move slot from node a to node b; keys: the names to MIGRATE (NULL-terminated) */
static int migrate_begin(int slot, int a, int b)
{
    char s[16];
    snprintf(s, sizeof s, "%d", slot);
    return cmd_ok(b, "CLUSTER", "SETSLOT", s, "IMPORTING", g_n[a].id) &&
           cmd_ok(a, "CLUSTER", "SETSLOT", s, "MIGRATING", g_n[b].id);
}
static int migrate_keys(int a, int b, const char *k1, const char *k2)
{
    redisContext *c = conn(a);
    redisReply *r = c ? rs_cmd(c, "MIGRATE", "127.0.0.1", g_n[b].portstr, "", "0", "5000", "KEYS", k1, k2, NULL) : NULL;
    int ok = r && r->type == REDIS_REPLY_STATUS;
    if (r && !ok) fprintf(stderr, "  MIGRATE: %s\n", r->str ? r->str : "?");
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}
static int migrate_end(int slot, int b)
{
    char s[16];
    int i, ok = 1;
    snprintf(s, sizeof s, "%d", slot);
    ok &= cmd_ok(b, "CLUSTER", "SETSLOT", s, "NODE", g_n[b].id);
    for (i = 0; i < NN; i++)             /* every other master (replicas refuse SETSLOT) */
        if (i != b && node_info_has(i, "NODES", "myself,master")) ok &= cmd_ok(i, "CLUSTER", "SETSLOT", s, "NODE", g_n[b].id);
    return ok;
}

static int other_master(int a)
{
    int s;
    for (s = 0; s < 16384; s += 1000) { int m = master_of_slot(s); if (m >= 0 && m != a) return m; }
    return -1;
}

static void test_migrate(void)
{
    static ldl_redis_cluster rc, rc2;
    ldl_store s, s2;
    int64_t t1 = 0, t2 = 0, t0 = 0, tx = 0;
    int slot, a, b, r_before, r_mig, r_ask, r_moved, other, again;
    const ldl_redis_cluster_stats *st;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "mig", 1000) == LDL_OK, "init");
    ST_CHECK(ldl_redis_cluster_init(&rc2, g_seeds, "mig", 1000) == LDL_OK, "init 2");
    s = ldl_redis_cluster_store(&rc);
    s2 = ldl_redis_cluster_store(&rc2);
    slot = ldl_redis_cluster_slot(&rc, "moving");
    a = master_of_slot(slot);
    b = other_master(a);
    ST_CHECK(a >= 0 && b >= 0, "masters for the migration");
    ST_CHECK(s.acquire(s.ctx, "moving", 20000, &t0) == 1, "first grant");
    ST_CHECK(s.release(s.ctx, "moving", t0) == 1, "first release");
    ST_CHECK(s.acquire(s.ctx, "moving", 20000, &t1) == 1 && t1 > t0, "held: token %lld", (long long)t1);
    r_before = s.renew(s.ctx, "moving", t1, 20000);
    ST_CHECK(migrate_begin(slot, a, b), "SETSLOT IMPORTING/MIGRATING");
    r_mig = s.renew(s.ctx, "moving", t1, 20000);            /* keys still on a */
    ST_CHECK(migrate_keys(a, b, "{mig:moving}:lease", "{mig:moving}:fence"), "MIGRATE");
    r_ask = s.renew(s.ctx, "moving", t1, 20000);            /* a answers ASK: ASKING on b */
    other = s2.acquire(s2.ctx, "moving", 20000, &tx);       /* nobody else gets it meanwhile */
    ST_CHECK(migrate_end(slot, b), "SETSLOT NODE");
    r_moved = s.renew(s.ctx, "moving", t1, 20000);          /* the map is stale: MOVED */
    again = s2.acquire(s2.ctx, "moving", 20000, &tx);
    ST_CHECK(s.release(s.ctx, "moving", t1) == 1, "release after the move: %s", ldl_redis_cluster_why(&rc));
    ST_CHECK(s2.acquire(s2.ctx, "moving", 20000, &t2) == 1, "grant on the new master: %s", ldl_redis_cluster_why(&rc2));
    st = ldl_redis_cluster_stats_get(&rc);
    printf("  migrate slot %d node %d -> %d: renew before %d, migrating %d, ASK window %d (ask %llu), "
           "after %d (moved %llu); rival during/after %d/%d; tokens %lld < %lld < %lld\n",
           slot, a, b, r_before, r_mig, r_ask, (unsigned long long)st->ask, r_moved,
           (unsigned long long)st->moved, other, again, (long long)t0, (long long)t1, (long long)t2);
    ST_CHECK(r_before == 1 && r_mig == 1 && r_ask == 1 && r_moved == 1, "renewals across the migration");
    ST_CHECK(st->ask >= 1 && st->moved >= 1, "ASK and MOVED were seen and followed");
    ST_CHECK(other <= 0 && again == 0, "a rival never got the held key (%d, %d)", other, again);
    ST_CHECK(t2 > t1 && t1 > t0, "tokens keep rising across the migration");
    ldl_redis_cluster_free(&rc);
    ldl_redis_cluster_free(&rc2);
}

/* non-blocking: a held lock whose slot moves between two frames follows MOVED */
static void test_amoved(void)
{
    static ldl_redis_cluster_req reqs[64];
    static ldl_redis_cluster_async ra;
    ldl_async_store as;
    ldl_lock lk;
    int slot, a, b, held0, held1;
    int64_t t0;
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "am", 1000, reqs, 64) == LDL_OK, "init");
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    lock_init(&lk, NULL, &as, "roaming", 1000);
    ldl_lock_acquire(&lk);
    frames(&ra, &lk, 1, 200, NULL);
    held0 = ldl_lock_acquire(&lk) == 1 || ldl_lock_state(&lk) == LDL_HELD;
    t0 = ldl_lock_fencing_token(&lk);
    slot = ldl_redis_cluster_slot((ldl_redis_cluster *)(void *)&ra._m, "roaming");
    a = master_of_slot(slot);
    b = other_master(a);
    ST_CHECK(migrate_begin(slot, a, b) && migrate_keys(a, b, "{am:roaming}:lease", "{am:roaming}:fence") &&
             migrate_end(slot, b), "slot moved");
    frames(&ra, &lk, 1, 2500, NULL);
    held1 = ldl_lock_state(&lk) == LDL_HELD && ldl_lock_fencing_token(&lk) == t0;
    printf("  amoved: held before %d, after 2.5 s of renewals %d, moved %llu retries %llu\n", held0, held1,
           (unsigned long long)ldl_redis_cluster_async_stats(&ra)->moved,
           (unsigned long long)ldl_redis_cluster_async_stats(&ra)->retries);
    ST_CHECK(held0 && held1 && ldl_redis_cluster_async_stats(&ra)->moved >= 1, "non-blocking renewals follow MOVED: %s",
             ldl_redis_cluster_async_why(&ra));
    ldl_lock_release(&lk);
    frames(&ra, &lk, 1, 100, NULL);
    ldl_lock_dispose(&lk);
    ldl_redis_cluster_async_free(&ra);
}

/* non-blocking: a renewal that lands in the ASK window (keys moved, slot not handed over
   yet) waits for the new owner instead of failing. One case: prefix P, key K, the view's
   timeout, the lock's TTL, how long the window stays open */
static void aask_case(const char *name, const char *prefix, const char *key, uint32_t timeout_ms,
                      uint32_t ttl, uint32_t window_ms)
{
    static ldl_redis_cluster_req reqs[64];
    static ldl_redis_cluster_async ra;
    ldl_async_store as;
    ldl_lock lk;
    char lease[64], fence[64];
    int slot, a, b, held0, held1;
    int64_t t0;
    const ldl_redis_cluster_stats *st;
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, prefix, timeout_ms, reqs, 64) == LDL_OK, "init");
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    lock_init(&lk, NULL, &as, key, ttl);               /* renewals every ttl / 3 */
    ldl_lock_acquire(&lk);
    frames(&ra, &lk, 1, 300, NULL);
    held0 = ldl_lock_state(&lk) == LDL_HELD;
    t0 = ldl_lock_fencing_token(&lk);
    slot = ldl_redis_cluster_slot((ldl_redis_cluster *)(void *)&ra._m, key);
    a = master_of_slot(slot);
    b = other_master(a);
    snprintf(lease, sizeof lease, "{%s:%s}:lease", prefix, key);
    snprintf(fence, sizeof fence, "{%s:%s}:fence", prefix, key);
    ST_CHECK(migrate_begin(slot, a, b) && migrate_keys(a, b, lease, fence), "keys moved");
    frames(&ra, &lk, 1, window_ms, NULL);              /* a renewal answered ASK: parked */
    ST_CHECK(migrate_end(slot, b), "slot handed over");
    frames(&ra, &lk, 1, 2500, NULL);
    held1 = ldl_lock_state(&lk) == LDL_HELD && ldl_lock_fencing_token(&lk) == t0;
    st = ldl_redis_cluster_async_stats(&ra);
    printf("  %s: held before %d, after a %u ms ASK window (timeout_ms %u, TTL %u) %d (%s %s); ask %llu moved %llu "
           "retries %llu refreshes %llu\n", name, held0, (unsigned)window_ms, (unsigned)timeout_ms, (unsigned)ttl, held1,
           ldl_state_name(ldl_lock_state(&lk)), ldl_reason_name(ldl_lock_reason(&lk)), (unsigned long long)st->ask,
           (unsigned long long)st->moved, (unsigned long long)st->retries, (unsigned long long)st->refreshes);
    ST_CHECK(held0 && held1 && st->ask >= 1 && st->retries >= 1, "%s: a renewal in the ASK window is not lost "
             "while its lease lasts: %s", name, ldl_redis_cluster_async_why(&ra));
    ldl_lock_release(&lk);
    frames(&ra, &lk, 1, 100, NULL);
    ldl_lock_dispose(&lk);
    ldl_redis_cluster_async_free(&ra);
}

static void test_aask(void) { aask_case("aask", "ak", "asked", 1000, 3000, 1200); }

/* ------------------------------------------------------------ contention */
static char g_res[3][300];
static const char *g_ckeys[3];

static int worker(void *arg, int in, int out)
{
    static ldl_redis_cluster rc;
    ldl_store s;
    ldl_lock lk[3];
    int i, k, bad = 0;
    (void)arg; (void)in; (void)out;
    if (ldl_redis_cluster_init(&rc, g_seeds, "con", 1000) != LDL_OK) return 2;
    s = ldl_redis_cluster_store(&rc);
    for (k = 0; k < 3; k++) if (lock_init(&lk[k], &s, NULL, g_ckeys[k], 2000) != LDL_OK) return 3;
    for (i = 0; i < 150; i++) {
        k = i % 3;
        if (ldl_lock_acquire(&lk[k]) == 1) {
            int64_t f = ldl_lock_fencing_token(&lk[k]), v;
            fenced_enter(g_res[k]);
            if (fenced_read(g_res[k], f, &v) == 1 && fenced_write(g_res[k], f, v + 1) == 1 && ldl_lock_poll(&lk[k]) == 1)
                fenced_completed(g_res[k]);
            fenced_leave(g_res[k]);
            if (ldl_lock_release(&lk[k]) != 1) bad++;
        }
    }
    for (k = 0; k < 3; k++) ldl_lock_dispose(&lk[k]);
    ldl_redis_cluster_free(&rc);
    return bad ? 4 : 0;
}

static void test_contention(void)
{
    static ldl_redis_cluster rc;
    st_child ch[4];
    int i, k, rcs = 0;
    char dir[256];
    static char keybuf[3][32];
    /* three keys on three different masters */
    ldl_redis_cluster_init(&rc, g_seeds, "con", 1000);
    st_tmpdir(dir, sizeof dir, "fenced");
    for (k = 0, i = 0; k < 3 && i < 10000; i++) {
        char key[32], addr[80];
        int j, dup = 0;
        snprintf(key, sizeof key, "res%d", i);
        ldl_redis_cluster_master(&rc, key, addr, sizeof addr);
        for (j = 0; j < k; j++) {
            char a2[80];
            ldl_redis_cluster_master(&rc, keybuf[j], a2, sizeof a2);
            dup |= strcmp(a2, addr) == 0;
        }
        if (dup) continue;
        snprintf(keybuf[k], sizeof keybuf[k], "%s", key);
        g_ckeys[k] = keybuf[k];
        snprintf(g_res[k], sizeof g_res[k], "%s/res%d", dir, k);
        fenced_create(g_res[k]);
        k++;
    }
    ldl_redis_cluster_free(&rc);
    ST_CHECK(k == 3, "three keys on three masters");
    for (i = 0; i < 4; i++) st_fork(&ch[i], worker, NULL);
    for (i = 0; i < 4; i++) { int r = st_join(&ch[i], 120000); if (r != 0) rcs++; }
    ST_CHECK(rcs == 0, "contention: %d workers failed", rcs);
    for (k = 0; k < 3; k++) {
        fenced_stats fs;
        static int64_t log[1000];
        size_t n = 0;
        fenced_stats_get(g_res[k], &fs);
        fenced_log(g_res[k], log, 1000, &n);
        printf("  contention %s: writes %lld value %lld completed %lld rejected %lld max_inside %lld\n", g_ckeys[k],
               (long long)fs.writes, (long long)fs.value, (long long)fs.completed, (long long)fs.rejected,
               (long long)fs.max_inside);
        ST_CHECK(fs.writes > 0 && fs.value == fs.writes && fs.completed == fs.writes && fs.rejected == 0 &&
                 fs.max_inside == 1 && fenced_log_increasing(log, n), "fenced resource %d", k);
    }
}

/* ------------------------------------------------------------ SIGSTOP a master */
#define ZN 300
static ldl_lock g_zl[ZN];
static ldl_redis_cluster_req g_zreq[2 * ZN + 64];

static void test_sigstop(void)
{
    static ldl_redis_cluster_async ra;
    static char keys[ZN][16];
    static int on_victim[ZN];
    ldl_async_store as;
    int i, victim, nv = 0, lost_ok = 0, others_ok = 0, wrong = 0;
    uint32_t max_pump = 0;
    uint64_t stop_at, end;
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "zz", 1000, g_zreq, 2 * ZN + 64) == LDL_OK, "init");
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    for (i = 0; i < ZN; i++) {
        snprintf(keys[i], sizeof keys[i], "z%d", i);
        lock_init(&g_zl[i], NULL, &as, keys[i], 1000);
        ldl_lock_acquire(&g_zl[i]);
    }
    end = st_now_ms() + 3000;
    while (st_now_ms() < end) {
        int pend = 0;
        tick();
        ldl_redis_cluster_async_pump(&ra);
        for (i = 0; i < ZN; i++) pend += ldl_lock_poll(&g_zl[i]) == LDL_EINPROGRESS;
        if (!pend) break;
        st_sleep_ms(2);
    }
    victim = master_of_slot(ldl_redis_cluster_slot((ldl_redis_cluster *)(void *)&ra._m, keys[0]));
    for (i = 0; i < ZN; i++) {
        on_victim[i] = master_of_slot(ldl_redis_cluster_slot((ldl_redis_cluster *)(void *)&ra._m, keys[i])) == victim;
        nv += on_victim[i];
        if (ldl_lock_state(&g_zl[i]) != LDL_HELD) wrong++;
    }
    ST_CHECK(wrong == 0 && victim >= 0, "sigstop: all %d held before (%d not)", ZN, wrong);
    stop_at = st_now_ms();
    kill(g_n[victim].pid, SIGSTOP);
    frames(&ra, g_zl, ZN, 2500, &max_pump);
    for (i = 0; i < ZN; i++) {
        if (on_victim[i]) lost_ok += ldl_lock_state(&g_zl[i]) == LDL_LOST && ldl_lock_reason(&g_zl[i]) == LDL_REASON_LEASE_EXPIRED;
        else others_ok += ldl_lock_state(&g_zl[i]) == LDL_HELD;
    }
    kill(g_n[victim].pid, SIGCONT);
    printf("  sigstop node %d for %llu ms: %d of %d leases on it LOST (LEASE_EXPIRED), %d of %d others held; "
           "longest frame %u ms\n", victim, (unsigned long long)(st_now_ms() - stop_at), lost_ok, nv, others_ok,
           ZN - nv, max_pump);
    ST_CHECK(nv > 0 && lost_ok == nv && others_ok == ZN - nv, "sigstop: only the frozen master's leases are lost");
    /* not a speed target: a frame that waited on the frozen master would last at least the
       command timeout (1000 ms) */
    ST_CHECK(max_pump < 1000, "no frame blocked on the frozen master (longest %u ms)", max_pump);
    frames(&ra, g_zl, ZN, 500, NULL);
    for (i = 0; i < ZN; i++) ldl_lock_release(&g_zl[i]);
    frames(&ra, g_zl, ZN, 300, NULL);
    for (i = 0; i < ZN; i++) ldl_lock_dispose(&g_zl[i]);
    ldl_redis_cluster_async_free(&ra);
}

/* the replica of master node m, -1 when none */
static int replica_of(int m)
{
    int i, replica = -1;
    for (i = 0; i < NN; i++) if (i != m && node_info_has(i, "NODES", "myself,slave")) {
        redisContext *c = conn(i);
        redisReply *r = c ? rs_cmd(c, "CLUSTER", "NODES", NULL) : NULL;
        if (r && r->type == REDIS_REPLY_STRING) {
            char *line = strstr(r->str, "myself");
            char *ls = line;
            while (ls && ls > r->str && ls[-1] != '\n') ls--;
            if (line && strstr(ls, g_n[m].id) && strstr(ls, g_n[m].id) < strchr(ls, '\n')) replica = i;
        }
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
    }
    return replica;
}

/* ------------------------------------------------------------ WAIT */
static void test_wait(void)
{
    static ldl_redis_cluster rc, plain;
    ldl_store s, p;
    int m, r, i, k = 0, got_with = 0, got_frozen, free_after;
    int64_t t = 0, t2 = 0;
    char keys[2][16], addr[80];
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "wt", 1000) == LDL_OK, "init");
    ST_CHECK(ldl_redis_cluster_init(&plain, g_seeds, "wt", 1000) == LDL_OK, "init");
    ST_CHECK(ldl_redis_cluster_set_wait(&rc, 1, 300) == LDL_OK, "set_wait");
    s = ldl_redis_cluster_store(&rc);
    p = ldl_redis_cluster_store(&plain);
    m = master_of_slot(ldl_redis_cluster_slot(&rc, "w0"));
    for (i = 0; k < 2 && i < 5000; i++) {                   /* two keys on the same master */
        snprintf(keys[k], sizeof keys[k], "w%d", i);
        ldl_redis_cluster_master(&rc, keys[k], addr, sizeof addr);
        if (node_of_addr(addr) == m) k++;
    }
    r = replica_of(m);
    ST_CHECK(k == 2 && r >= 0, "wait: keys and replica");
    if (r < 0) return;
    got_with = s.acquire(s.ctx, keys[0], 5000, &t);
    ST_CHECK(got_with == 1 && s.renew(s.ctx, keys[0], t, 5000) == 1, "WAIT 1 with the replica up: granted, renewed");
    kill(g_n[r].pid, SIGSTOP);
    got_frozen = s.acquire(s.ctx, keys[1], 5000, &t2);
    free_after = p.acquire(p.ctx, keys[1], 1000, &t2);       /* the unacknowledged grant was released */
    ST_CHECK(s.renew(s.ctx, keys[0], t, 5000) == LDL_ESTORE, "renewal without the replica: refused");
    kill(g_n[r].pid, SIGCONT);
    printf("  wait: replica %d frozen: acquire %d (wait_short %llu, \"%s\"), key free again %d\n", r, got_frozen,
           (unsigned long long)ldl_redis_cluster_stats_get(&rc)->wait_short, ldl_redis_cluster_why(&rc), free_after);
    ST_CHECK(got_frozen == LDL_ESTORE && free_after == 1, "WAIT 1 with the replica frozen: no grant, lease handed back");
    s.release(s.ctx, keys[0], t);
    ldl_redis_cluster_free(&rc);
    ldl_redis_cluster_free(&plain);
}

/* synchronous view: a frozen master costs its own calls a timeout each; locks on the other
   masters keep their leases (the map is read from the healthy masters first) */
static void test_sync_sigstop(void)
{
    static ldl_redis_cluster rc;
    static ldl_lock lk[30];
    static char keys[30][16];
    static int on_victim[30];
    ldl_store s;
    int i, victim, nv = 0, victims_held = 0, others_held = 0;
    uint64_t end;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "ss", 200) == LDL_OK, "init");
    s = ldl_redis_cluster_store(&rc);
    victim = -1;
    for (i = 0; i < 30; i++) {
        char addr[80];
        snprintf(keys[i], sizeof keys[i], "ss%d", i);
        lock_init(&lk[i], &s, NULL, keys[i], 3000);
        ST_CHECK(ldl_lock_acquire(&lk[i]) == 1, "sync sigstop: acquire %s", keys[i]);
        ldl_redis_cluster_master(&rc, keys[i], addr, sizeof addr);
        if (victim < 0) victim = node_of_addr(addr);
        on_victim[i] = node_of_addr(addr) == victim;
        nv += on_victim[i];
    }
    kill(g_n[victim].pid, SIGSTOP);
    end = st_now_ms() + 4000;
    while (st_now_ms() < end) {
        for (i = 0; i < 30; i++) ldl_lock_poll(&lk[i]);
        st_sleep_ms(20);
    }
    for (i = 0; i < 30; i++) {
        if (on_victim[i]) victims_held += ldl_lock_state(&lk[i]) == LDL_HELD;
        else others_held += ldl_lock_state(&lk[i]) == LDL_HELD;
    }
    kill(g_n[victim].pid, SIGCONT);
    printf("  sync sigstop node %d for 4 s: %d of %d leases on it still held, %d of %d others held\n", victim,
           victims_held, nv, others_held, 30 - nv);
    ST_CHECK(nv > 0 && victims_held == 0 && others_held == 30 - nv, "sync view: only the frozen master's leases are lost");
    for (i = 0; i < 30; i++) { ldl_lock_release(&lk[i]); ldl_lock_dispose(&lk[i]); }
    ldl_redis_cluster_free(&rc);
}

/* ------------------------------------------------------------ CLUSTER FAILOVER */
#define FA 50
static ldl_lock g_fl[FA];
static ldl_redis_cluster_req g_freq[2 * FA + 16];

static void test_failover(void)
{
    static ldl_redis_cluster rc;
    static ldl_redis_cluster_async ra;
    static int64_t tok[50], atok[FA];
    static char keys[50][16], akeys[FA][16];
    ldl_store s;
    ldl_async_store as;
    int na = 0, aheld0 = 0, aheld1 = 0;
    int i, k = 0, victim, replica = -1, renewed = 0, refused = 0, promoted = 0;
    int64_t maxold = 0, t;
    char addr[80];
    uint64_t end;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "fo", 1000) == LDL_OK, "init");
    s = ldl_redis_cluster_store(&rc);
    victim = master_of_slot(ldl_redis_cluster_slot(&rc, "f0"));
    for (i = 0; k < 50 && i < 5000; i++) {
        snprintf(keys[k], sizeof keys[k], "f%d", i);
        ldl_redis_cluster_master(&rc, keys[k], addr, sizeof addr);
        if (node_of_addr(addr) != victim) continue;
        if (s.acquire(s.ctx, keys[k], 30000, &tok[k]) == 1) { if (tok[k] > maxold) maxold = tok[k]; k++; }
    }
    ST_CHECK(k == 50, "50 leases held on master %d", victim);
    /* and FA non-blocking locks on the same master, kept alive by frames throughout */
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "fa", 1000, g_freq, 2 * FA + 16) == LDL_OK, "async init");
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    for (i = 0; na < FA && i < 5000; i++) {
        snprintf(akeys[na], sizeof akeys[na], "fa%d", i);
        ldl_redis_cluster_master(&rc, akeys[na], addr, sizeof addr);
        if (node_of_addr(addr) != victim) continue;
        lock_init(&g_fl[na], NULL, &as, akeys[na], 1500);
        ldl_lock_acquire(&g_fl[na]);
        na++;
    }
    frames(&ra, g_fl, na, 300, NULL);
    for (i = 0; i < na; i++) { atok[i] = ldl_lock_fencing_token(&g_fl[i]); aheld0 += ldl_lock_state(&g_fl[i]) == LDL_HELD; }
    replica = replica_of(victim);
    ST_CHECK(replica >= 0, "the victim's replica");
    if (replica < 0) { ldl_redis_cluster_free(&rc); return; }
    ST_CHECK(cmd_ok(replica, "CLUSTER", "FAILOVER", NULL, NULL, NULL), "CLUSTER FAILOVER");
    end = st_now_ms() + 15000;
    while (st_now_ms() < end && !(promoted = node_info_has(replica, "NODES", "myself,master")))
        frames(&ra, g_fl, na, 50, NULL);
    ST_CHECK(promoted, "replica promoted");
    frames(&ra, g_fl, na, 2000, NULL);                       /* >= 2 renewals after the promotion */
    for (i = 0; i < na; i++) aheld1 += ldl_lock_state(&g_fl[i]) == LDL_HELD && ldl_lock_fencing_token(&g_fl[i]) == atok[i];
    printf("  failover, non-blocking: %d of %d held before, %d still held with the same token 2 s after the "
           "promotion (moved %llu, retries %llu)\n", aheld0, na, aheld1,
           (unsigned long long)ldl_redis_cluster_async_stats(&ra)->moved,
           (unsigned long long)ldl_redis_cluster_async_stats(&ra)->retries);
    ST_CHECK(na == FA && aheld0 == na && aheld1 == na, "non-blocking locks survive a graceful failover: %s",
             ldl_redis_cluster_async_why(&ra));
    for (i = 0; i < na; i++) ldl_lock_release(&g_fl[i]);
    frames(&ra, g_fl, na, 200, NULL);
    for (i = 0; i < na; i++) ldl_lock_dispose(&g_fl[i]);
    ldl_redis_cluster_async_free(&ra);
    for (i = 0; i < k; i++) {
        if (s.renew(s.ctx, keys[i], tok[i], 30000) == 1) renewed++;
        if (s.acquire(s.ctx, keys[i], 30000, &t) == 0) refused++;
    }
    ldl_redis_cluster_master(&rc, keys[0], addr, sizeof addr);
    printf("  failover node %d -> replica %d: after promotion %d of %d held leases renewed on the new master "
           "(%s), %d of %d rival acquires refused, moved %llu refreshes %llu\n", victim, replica, renewed, k, addr,
           refused, k, (unsigned long long)ldl_redis_cluster_stats_get(&rc)->moved,
           (unsigned long long)ldl_redis_cluster_stats_get(&rc)->refreshes);
    ST_CHECK(renewed == k && refused == k && node_of_addr(addr) == replica,
             "a manual (graceful) failover keeps every lease: %s", ldl_redis_cluster_why(&rc));
    for (i = 0; i < k; i++) s.release(s.ctx, keys[i], tok[i]);
    ST_CHECK(s.acquire(s.ctx, keys[0], 1000, &t) == 1 && t > tok[0], "the fence kept rising across the failover");
    ldl_redis_cluster_free(&rc);
}

/* ------------------------------------------------------------ an unclean failover
   What asynchronous replication allows, shown rather than claimed: a grant the replica never
   received, the master killed, the replica taking over: the LEASE is granted again (two
   holders), but since v0.3 (decision 0115) with a higher token: the promoted replica's epoch
   is above the old master's, so holder 1's renewal finds another token and fails. */
static void test_takeover(void)
{
    static ldl_redis_cluster h1, h2;
    ldl_store s1, s2;
    int m, r, rc = LDL_ESTORE, promoted = 0, renew1 = -99;
    int64_t ta = 0, tb = 0, tc = 0;
    uint64_t end;
    redisContext *c;
    ST_CHECK(ldl_redis_cluster_init(&h1, g_seeds, "tk", 1000) == LDL_OK, "init");
    s1 = ldl_redis_cluster_store(&h1);
    m = master_of_slot(ldl_redis_cluster_slot(&h1, "split"));
    r = replica_of(m);
    ST_CHECK(m >= 0 && r >= 0, "takeover: master and replica");
    if (m < 0 || r < 0) return;
    ST_CHECK(s1.acquire(s1.ctx, "split", 30000, &ta) == 1 && s1.release(s1.ctx, "split", ta) == 1, "first lifecycle");
    c = conn(m);
    ST_CHECK(rs_int(rs_cmd(c, "WAIT", "1", "2000", NULL), -1) == 1, "replica caught up");
    if (c) redisFree(c);
    /* cut the replication link and keep the replica from reconnecting: the next write stays
       on the master (a replica paused while the bytes are in flight would still get them
       from its socket buffer on SIGCONT: the first attempt of this test showed exactly that) */
    kill(g_n[r].pid, SIGSTOP);
    c = conn(m);
    ST_CHECK(rs_int(rs_cmd(c, "CLIENT", "KILL", "TYPE", "replica", NULL), -1) == 1, "replication link cut");
    if (c) redisFree(c);
    ST_CHECK(s1.acquire(s1.ctx, "split", 30000, &tb) == 1 && tb == ta + 1, "holder 1 granted %lld (replica frozen)",
             (long long)tb);
    st_stop(g_n[m].pid, SIGKILL, 5000);
    g_n[m].pid = 0;
    remove(g_n[m].pidfile);
    kill(g_n[r].pid, SIGCONT);
    ST_CHECK(cmd_ok(r, "CLUSTER", "FAILOVER", "TAKEOVER", NULL, NULL), "CLUSTER FAILOVER TAKEOVER");
    end = st_now_ms() + 15000;
    while (st_now_ms() < end && !(promoted = node_info_has(r, "NODES", "myself,master"))) st_sleep_ms(50);
    ST_CHECK(promoted, "replica took over");
    ldl_redis_cluster_init(&h2, g_seeds, "tk", 1000);
    s2 = ldl_redis_cluster_store(&h2);
    end = st_now_ms() + 10000;
    while (st_now_ms() < end && (rc = s2.acquire(s2.ctx, "split", 30000, &tc)) < 0) st_sleep_ms(100);
    end = st_now_ms() + 10000;
    while (st_now_ms() < end && (renew1 = s1.renew(s1.ctx, "split", tb, 30000)) < 0) st_sleep_ms(100);
    printf("  takeover (replica frozen during a grant, master killed, FAILOVER TAKEOVER): holder 1 token %lld, "
           "holder 2 acquire %d token %lld, holder 1 renew after it %d\n", (long long)tb, rc, (long long)tc, renew1);
    ST_CHECK(rc == 1 && tc > tb && renew1 == 0,
             "observed: the lost grant's lease is granted again, with a higher token (epoch fences); holder 1's "
             "renewal answers no");
    ldl_redis_cluster_free(&h1);
    ldl_redis_cluster_free(&h2);
}

/* ------------------------------------------------------------ a hostile seed
   A "node" that answers CLUSTER SLOTS with "*2147483647" (hiredis 0.14 would reserve 16 GB)
   or with a map that leaves slots uncovered: init refuses, nothing crashes (ASan). */
static int hostile_child(void *arg, int in, int out)
{
    int lfd = (int)(intptr_t)arg, k;
    (void)in; (void)out;
    for (k = 0; k < 2; k++) {
        char buf[512];
        int fd = accept(lfd, NULL, NULL);
        const char *ans;
        if (fd < 0) return 1;
        if (read(fd, buf, sizeof buf) <= 0) { close(fd); continue; }
        ans = k == 0 ? "*2147483647\r\n"
                                 : "*1\r\n*3\r\n:0\r\n:99\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n";
        rs__write_all(fd, ans, strlen(ans));
        st_sleep_ms(300);
        close(fd);
    }
    return 0;
}

static void test_hostile(void)
{
    static ldl_redis_cluster rc;
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    st_child ch;
    char seed[32];
    int lfd = socket(AF_INET, SOCK_STREAM, 0), r1, r2;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ST_CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 4) == 0 &&
             getsockname(lfd, (struct sockaddr *)&a, &len) == 0, "hostile listener");
    snprintf(seed, sizeof seed, "127.0.0.1:%d", ntohs(a.sin_port));
    st_fork(&ch, hostile_child, (void *)(intptr_t)lfd);
    close(lfd);
    r1 = ldl_redis_cluster_init(&rc, seed, NULL, 1000);
    printf("  hostile seed: huge array -> %d (%s)\n", r1, ldl_redis_cluster_why(&rc));
    ST_CHECK(r1 == LDL_ESTORE && strstr(ldl_redis_cluster_why(&rc), "refused"), "a huge CLUSTER SLOTS reply is refused");
    ldl_redis_cluster_free(&rc);
    r2 = ldl_redis_cluster_init(&rc, seed, NULL, 1000);
    printf("  hostile seed: map of 100 slots -> %d (%s)\n", r2, ldl_redis_cluster_why(&rc));
    ST_CHECK(r2 == LDL_ESTORE && strstr(ldl_redis_cluster_why(&rc), "cover"), "a map that leaves slots uncovered is refused");
    ldl_redis_cluster_free(&rc);
    st_join(&ch, 5000);
}

/* ------------------------------------------------------------ issue 24 on the real cluster */
/* item 4: a renewal in the ASK window whose target lacks the script: ASKING goes before the
   EVALSHA AND before the EVAL retry (the old code sent the EVAL without it: MOVED back) */
static void test_ask_noscript(void)
{
    static ldl_redis_cluster rc;
    ldl_store s;
    int64_t t1 = 0;
    int slot, a, b, i, ok = 0;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "ans", 1000) == LDL_OK, "init");
    s = ldl_redis_cluster_store(&rc);
    slot = ldl_redis_cluster_slot(&rc, "scripted");
    a = master_of_slot(slot);
    b = other_master(a);
    ST_CHECK(s.acquire(s.ctx, "scripted", 20000, &t1) == 1, "held");
    ST_CHECK(migrate_begin(slot, a, b) && migrate_keys(a, b, "{ans:scripted}:lease", "{ans:scripted}:fence"),
             "keys moved, slot still MIGRATING");
    for (i = 0; i < 4; i++) {
        ST_CHECK(cmd_ok(b, "SCRIPT", "FLUSH", NULL, NULL, NULL), "SCRIPT FLUSH on the target");
        ok += s.renew(s.ctx, "scripted", t1, 20000) == 1;
    }
    printf("  ask+noscript: %d of 4 renewals in the ASK window with the script flushed on the target "
           "(ask %llu, %s)\n", ok, (unsigned long long)ldl_redis_cluster_stats_get(&rc)->ask,
           ok == 4 ? "" : ldl_redis_cluster_why(&rc));
    ST_CHECK(ok == 4, "ASKING precedes the EVAL retry after NOSCRIPT");
    ST_CHECK(migrate_end(slot, b), "slot handed over");
    ST_CHECK(s.release(s.ctx, "scripted", t1) == 1, "release on the new owner");
    ldl_redis_cluster_free(&rc);
}

/* item 11: the Redis adapter's last error as values: MOVED with its slot and address */
static void test_last_error(void)
{
    static ldl_redis_cluster rc;
    ldl_redis r;
    ldl_store s;
    redisContext *c;
    const ldl_redis_error *e;
    char want[32], key[16];
    int i, slot = -1, owner = -1, rcode;
    int64_t t = 0;
    ST_CHECK(ldl_redis_cluster_init(&rc, g_seeds, "le", 1000) == LDL_OK, "init");
    for (i = 0; i < 100; i++) {                         /* a key node 0 does not own */
        snprintf(key, sizeof key, "e%d", i);
        slot = ldl_redis_cluster_slot(&rc, key);
        owner = master_of_slot(slot);
        if (owner >= 0 && owner != 0) break;
    }
    c = conn(0);
    ST_CHECK(c && ldl_redis_init(&r, c, "le") == LDL_OK, "plain adapter on node 0");
    s = ldl_redis_store(&r);
    rcode = s.acquire(s.ctx, key, 5000, &t);
    e = ldl_redis_last_error(&r);
    snprintf(want, sizeof want, "127.0.0.1:%d", owner >= 0 ? g_n[owner].port : 0);
    printf("  last error: acquire %d, kind %d slot %d addr %s (want MOVED %d %s)\n", rcode, e->kind, e->slot,
           e->addr, slot, want);
    ST_CHECK(rcode == LDL_ESTORE && e->kind == LDL_REDIS_ERR_MOVED && e->slot == slot && strcmp(e->addr, want) == 0,
             "MOVED as values: kind, slot, address");
    if (c) redisFree(c);
    ldl_redis_cluster_free(&rc);
}

/* item 6: a non-blocking renew parked in a long ASK window (3 s, with timeout_ms 200: the
   old give-up was 2 x 200 ms) waits for the new owner, bounded by its lease */
static void test_aask_long(void) { aask_case("aask long", "al", "window", 200, 6000, 3000); }

/* decision 0105's verb on the cluster view: every request in flight answered at once */
static void test_adrop(void)
{
    static ldl_redis_cluster_req reqs[64];
    static ldl_redis_cluster_async ra;
    static ldl_lock lk[20];
    static char keys[20][16];
    ldl_async_store as;
    int i, n, pend = 0, held = 0;
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "dr", 1000, reqs, 64) == LDL_OK, "init");
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    for (i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "d%d", i);
        lock_init(&lk[i], NULL, &as, keys[i], 5000);
        ldl_lock_acquire(&lk[i]);                     /* queued; no pump yet */
    }
    n = ldl_redis_cluster_async_drop(&ra);
    for (i = 0; i < 20; i++) pend += ldl_lock_poll(&lk[i]) == LDL_EINPROGRESS;
    frames(&ra, lk, 20, 1500, NULL);                  /* masters reconnect; nothing was granted */
    for (i = 0; i < 20; i++) held += ldl_lock_state(&lk[i]) == LDL_HELD;
    printf("  adrop: 20 acquires in flight, drop answered %d, %d still pending after, %d held after 1.5 s\n", n,
           pend, held);
    ST_CHECK(n == 20 && pend == 0 && held == 0, "drop answers every request at once");
    for (i = 0; i < 20; i++) {
        ldl_lock_acquire(&lk[i]);
    }
    frames(&ra, lk, 20, 1000, NULL);
    for (i = 0, held = 0; i < 20; i++) held += ldl_lock_state(&lk[i]) == LDL_HELD;
    ST_CHECK(held == 20, "after the drop the masters are reconnected and serve (%d of 20)", held);
    for (i = 0; i < 20; i++) ldl_lock_release(&lk[i]);
    frames(&ra, lk, 20, 200, NULL);
    for (i = 0; i < 20; i++) ldl_lock_dispose(&lk[i]);
    ldl_redis_cluster_async_free(&ra);
}

/* item 7: a master frozen longer than cluster-node-timeout. With
   cluster-require-full-coverage yes, every master answers CLUSTERDOWN from the FAIL flag
   until the replica is promoted: leases on HEALTHY masters are lost; with "no" they are
   kept. Node timeout 1000 ms here (the suite's cluster runs 15000). */
#define CN 40
static ldl_lock g_cl[CN];
static ldl_redis_cluster_req g_creq[2 * CN + 16];

static void config_all(const char *name, const char *value)
{
    int i;
    for (i = 0; i < NN; i++) if (g_n[i].pid > 0 && kill(g_n[i].pid, 0) == 0) cmd_ok(i, "CONFIG", "SET", name, value, NULL);
}

/* every node that answers says cluster_state:ok (the takeover test killed one for good) */
static int live_nodes_ok(uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        int i, ok = 1;
        for (i = 0; i < NN; i++) {
            redisContext *c = conn(i);
            if (!c) continue;
            redisFree(c);
            ok &= node_info_has(i, "INFO", "cluster_state:ok");
        }
        if (ok) return 1;
        st_sleep_ms(100);
    }
    return 0;
}

static int coverage_round(const char *full, uint32_t ttl, uint32_t ride_out, int hold_promotion, int *n_out,
                          int *clusterdown)
{
    static ldl_redis_cluster_async ra;
    static char keys[CN][16];
    ldl_async_store as;
    int i, k, victim = -1, replica = -1, lost = 0, held0 = 0;
    config_all("cluster-require-full-coverage", full);
    config_all("cluster-node-timeout", "1000");
    for (i = 0; i < NN && victim < 0; i++)              /* a master whose replica is alive */
        if (node_info_has(i, "NODES", "myself,master") && (replica = replica_of(i)) >= 0 && g_n[replica].pid > 0)
            victim = i;
    ST_CHECK(victim >= 0, "coverage: a master with a live replica");
    if (victim < 0) return -1;
    ST_CHECK(ldl_redis_cluster_async_init(&ra, g_seeds, "cv", 300, g_creq, 2 * CN + 16) == LDL_OK, "init: %s",
             ldl_redis_cluster_async_why(&ra));
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    for (i = 0, k = 0; i < CN && k < 5000; k++) {      /* keys on the healthy masters only */
        snprintf(keys[i], sizeof keys[i], "cv%d", k);
        if (master_of_slot(ldl_redis_cluster_slot((ldl_redis_cluster *)(void *)&ra._m, keys[i])) == victim) continue;
        {
            ldl_lock_desc d;
            memset(&d, 0, sizeof d);
            d.container.scope = nop_scope;
            d.container.value = nop_value;
            d.container.shutdown = nop_shutdown;
            d.key = keys[i];
            d.ttl_ms = ttl;
            d.ride_out_ms = ride_out;
            d.async_store = &as;
            d.clock.now_ms = frame_clock;
            ldl_lock_init(&g_cl[i], &d);
        }
        ldl_lock_acquire(&g_cl[i]);
        i++;
    }
    frames(&ra, g_cl, CN, 500, NULL);
    for (i = 0; i < CN; i++) held0 += ldl_lock_state(&g_cl[i]) == LDL_HELD;
    /* hold_promotion: the replica may not fail over, so the FAIL flag (and with full
       coverage, CLUSTERDOWN everywhere) lasts from ~1-2 s until the thaw, whatever the
       machine's load -- a promotion that came between two renews would hide it */
    if (hold_promotion) cmd_ok(replica, "CONFIG", "SET", "cluster-replica-no-failover", "yes", NULL);
    kill(g_n[victim].pid, SIGSTOP);
    frames(&ra, g_cl, CN, 6000, NULL);                  /* FAIL after ~1-2 s, then the promotion */
    *clusterdown = (int)ldl_redis_cluster_async_stats(&ra)->refreshes;
    for (i = 0; i < CN; i++) lost += ldl_lock_state(&g_cl[i]) != LDL_HELD;
    kill(g_n[victim].pid, SIGCONT);
    if (hold_promotion) cmd_ok(replica, "CONFIG", "SET", "cluster-replica-no-failover", "no", NULL);
    printf("  coverage full=%s ttl %u ride_out %u promotion %s: master %d frozen 6 s (node timeout 1000 ms), %d of %d healthy-master "
           "leases held before, %d lost (why: %s)\n", full, (unsigned)ttl, (unsigned)ride_out,
           hold_promotion ? "held" : "allowed", victim, held0, CN, lost,
           ldl_redis_cluster_async_why(&ra));
    ST_CHECK(held0 == CN, "coverage: all held before the freeze");
    for (i = 0; i < CN; i++) ldl_lock_release(&g_cl[i]);
    frames(&ra, g_cl, CN, 300, NULL);
    for (i = 0; i < CN; i++) ldl_lock_dispose(&g_cl[i]);
    ldl_redis_cluster_async_free(&ra);
    ST_CHECK(live_nodes_ok(30000), "the cluster recovered after the freeze");
    *n_out = CN;
    return lost;
}

static void test_coverage(void)
{
    int n = 0, down = 0, lost_yes, lost_no, lost_ride;
    lost_yes = coverage_round("yes", 3000, 0, 1, &n, &down);
    lost_no = coverage_round("no", 3000, 0, 1, &n, &down);
    lost_ride = coverage_round("yes", 6000, 150, 0, &n, &down);
    config_all("cluster-node-timeout", "15000");
    config_all("cluster-require-full-coverage", "no");
    ST_CHECK(lost_yes > 0, "full coverage yes: a frozen master FAILed takes leases on healthy masters (%d lost)", lost_yes);
    ST_CHECK(lost_no == 0, "full coverage no: healthy masters keep their leases (%d lost)", lost_no);
    ST_CHECK(lost_ride == 0, "full coverage yes, ride_out_ms 150, TTL 6 s: the CLUSTERDOWN window is ridden out (%d lost)",
             lost_ride);
}

/* LDL_CLUSTER_TESTS="a b ..." runs only those cases (the mutant suite); unset: all */
static int want(const char *name)
{
    const char *sel = getenv("LDL_CLUSTER_TESTS"), *p;
    size_t n = strlen(name);
    if (!sel) return 1;
    for (p = sel; (p = strstr(p, name)) != NULL; p += n)
        if ((p == sel || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) return 1;
    return 0;
}

int main(void)
{
    uint64_t t0 = st_now_ms();
    st_ignore_sigpipe();
    if (start_cluster() != 0) {
        ST_CHECK(0, "the cluster did not start");
        stop_cluster();
        return st_report();
    }
    printf("  cluster up in %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    st_case("keyslot", RS_CASE_S);
    if (want("keyslot")) test_keyslot();
    st_case("hostile", RS_CASE_S);
    if (want("hostile")) test_hostile();
    st_case("control", RS_CASE_S);
    if (want("control")) test_control();
    st_case("conformance", RS_CASE_S);
    if (want("conformance")) test_conformance();
    st_case("sync1000", RS_CASE_S);
    if (want("sync1000")) test_sync1000();
    st_case("async1000", RS_CASE_S);
    if (want("async1000")) test_async1000();
    st_case("migrate", RS_CASE_S);
    if (want("migrate")) test_migrate();
    st_case("amoved", RS_CASE_S);
    if (want("amoved")) test_amoved();
    st_case("aask", RS_CASE_S);
    if (want("aask")) test_aask();
    st_case("aask_long", RS_CASE_S);
    if (want("aask_long")) test_aask_long();
    st_case("ask_noscript", RS_CASE_S);
    if (want("ask_noscript")) test_ask_noscript();
    st_case("last_error", RS_CASE_S);
    if (want("last_error")) test_last_error();
    st_case("adrop", RS_CASE_S);
    if (want("adrop")) test_adrop();
    st_case("contention", RS_CASE_S);
    if (want("contention")) test_contention();
    st_case("sigstop", RS_CASE_S);
    if (want("sigstop")) test_sigstop();
    st_case("sync_sigstop", RS_CASE_S);
    if (want("sync_sigstop")) test_sync_sigstop();
    st_case("wait", RS_CASE_S);
    if (want("wait")) test_wait();
    st_case("failover", RS_CASE_S);
    if (want("failover")) test_failover();
    st_case("takeover", RS_CASE_S);
    if (want("takeover")) test_takeover();
    st_case("coverage", RS_CASE_S);
    if (want("coverage")) test_coverage();
    stop_cluster();
    printf("  total %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
