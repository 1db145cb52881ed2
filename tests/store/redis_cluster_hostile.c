/* tests/store/redis_cluster_hostile.c -- adapters/lite_di_lock_redis_cluster.h against a
 * HOSTILE cluster node (tests/store/redis_fake_node.py: what a real node cannot be made to
 * do) and, for the churn case, a real redis-server (issue 24, items 1, 2, 3, 5):
 *   dns       a map naming a host name. This program defines getaddrinfo() itself: a name is
 *             a SILENT resolver (it sleeps LDL_TEST_DNS_MS, default 3000, then fails) and is
 *             counted; numeric addresses go to the real one. The non-blocking view must never
 *             resolve (0 names asked, every pump short); a name seed is refused at init.
 *   drip      a map dripped one byte per 300 ms: one synchronous acquire (timeout 500 ms)
 *             ends within a few timeouts, not after the whole drip
 *   hugeask   ASK then a 4,000,000-element reply to ASKING: refused before allocating (the
 *             process' peak RSS does not grow by the reply's ~280 MB)
 *   churn     maps that name new replica addresses every time: refresh keeps working (the
 *             node table is rebuilt, not grown)
 *   ask15     15 ASKs to distinct dead ports, then MOVED to a real redis-server: granted (ASK
 *             targets are not kept)
 *   overlap   16,384 entries each covering every slot: refused, "overlapping"
 *   bigport   a port of 2^32 + p (an int cast would truncate it to p): refused
 *   answers   scripts answering the lock scripts' string "<nonce> <value>" (decision 0118),
 *             well-formed (the controls: a grant, a grant with the epoch, kept) or not (an
 *             epoch of 2^31, an upper-case replication ID, a leading zero, a trailing space,
 *             a sign, another call's nonce): never a grant, the node's epoch cache unchanged,
 *             in the synchronous and the non-blocking Cluster views
 * Run through tests/store/with_redis.sh (or with_redis_cluster.sh). */
#define _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_fake.h"
#include "tests/store/redis_locks.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <sys/resource.h>

/* ------------------------------------------------------------ a silent resolver */
static int g_names;                 /* host names this process was asked to resolve */
static uint32_t g_dns_ms = 3000;

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res)
{
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    unsigned char a[16];
    void *p;
    if (node && inet_pton(AF_INET, node, a) != 1 && inet_pton(AF_INET6, node, a) != 1) {
        g_names++;
        st_sleep_ms(g_dns_ms);      /* a resolver that never answers, then gives up */
        return EAI_AGAIN;
    }
    p = dlsym(RTLD_NEXT, "getaddrinfo");
    if (!p) return EAI_FAIL;
    memcpy(&real, &p, sizeof real);
    return real(node, service, hints, res);
}

static void seed_of(const rf_node *f, char *buf, size_t n) { snprintf(buf, n, "127.0.0.1:%d", f->port); }

/* ------------------------------------------------------------ dns */
static void test_dns(void)
{
    static ldl_redis_cluster_req reqs[16];
    static ldl_redis_cluster_async ra;
    rf_node f;
    ldl_async_store as;
    ldl_lock lk;
    char seed[64];
    uint64_t worst = 0, t0, end;
    int rc, names0;
    const char *e;
    ST_CHECK(rf_start(&f, "hostname", NULL) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    g_names = 0;
    rc = ldl_redis_cluster_async_init(&ra, "silent.ldl-test.invalid:7000", NULL, 300, reqs, 16);
    printf("  dns: a host name seed (non-blocking view) -> %d (%s), names resolved %d\n", rc,
           ldl_redis_cluster_async_why(&ra), g_names);
    ST_CHECK(rc == LDL_EINVAL && g_names == 0 && strstr(ldl_redis_cluster_async_why(&ra), "numeric"),
             "the non-blocking view refuses a host name seed before resolving it");
    ldl_redis_cluster_async_free(&ra);

    ST_CHECK(ldl_redis_cluster_async_init(&ra, seed, NULL, 300, reqs, 16) == LDL_OK, "init: %s",
             ldl_redis_cluster_async_why(&ra));
    as = ldl_redis_cluster_async_store(&ra);
    tick();
    lock_async(&lk, &as, "named", 5000);
    names0 = g_names;
    ldl_lock_acquire(&lk);                      /* MOVED here; the next map names a host */
    end = st_now_ms() + 2500;
    while (st_now_ms() < end) {
        t0 = st_now_ms();
        ldl_redis_cluster_async_pump(&ra);
        tick();
        ldl_lock_poll(&lk);
        if (st_now_ms() - t0 > worst) worst = st_now_ms() - t0;
        st_sleep_ms(5);
    }
    e = ldl_redis_cluster_async_why(&ra);
    printf("  dns: map naming a host: worst pump %llu ms (silent resolver %u ms), names resolved %d, "
           "lock %s, refreshes %llu; why: %s\n", (unsigned long long)worst, (unsigned)g_dns_ms,
           g_names - names0, ldl_state_name(ldl_lock_state(&lk)),
           (unsigned long long)ldl_redis_cluster_async_stats(&ra)->refreshes, e);
    ST_CHECK(g_names == names0, "the non-blocking view never resolves a name (%d asked)", g_names - names0);
    ST_CHECK(worst < g_dns_ms, "no pump waited on the resolver (worst %llu ms)", (unsigned long long)worst);
    ST_CHECK(ldl_lock_state(&lk) != LDL_HELD, "no grant from a refused map");
    ldl_lock_dispose(&lk);
    ldl_redis_cluster_async_free(&ra);
    rf_stop(&f);
}

/* ------------------------------------------------------------ drip */
static void test_drip(void)
{
    static ldl_redis_cluster rc;
    rf_node f;
    ldl_store s;
    char seed[64];
    int64_t tok = 0;
    uint64_t t0, took;
    int r;
    ST_CHECK(rf_start(&f, "drip", NULL) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    ST_CHECK(ldl_redis_cluster_init(&rc, seed, NULL, 500) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    s = ldl_redis_cluster_store(&rc);
    t0 = st_now_ms();
    r = s.acquire(s.ctx, "dripped", 5000, &tok);   /* MOVED, then the map is dripped */
    took = st_now_ms() - t0;
    printf("  drip: acquire against a map dripped 1 byte / 300 ms (timeout 500 ms): %d after %llu ms (%s)\n",
           r, (unsigned long long)took, ldl_redis_cluster_why(&rc));
    ST_CHECK(r == LDL_ESTORE, "no grant");
    ST_CHECK(took < 8000, "the acquire is bounded by the map read's time limit (the drip lasts > 40 s)");
    ldl_redis_cluster_free(&rc);
    rf_stop(&f);
}

/* ------------------------------------------------------------ hugeask */
static long peak_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static void test_hugeask(void)
{
    static ldl_redis_cluster rc;
    rf_node f;
    ldl_store s;
    char seed[64];
    int64_t tok = 0;
    long before, after;
    int r;
    ST_CHECK(rf_start(&f, "hugeask", NULL) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    ST_CHECK(ldl_redis_cluster_init(&rc, seed, NULL, 2000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    s = ldl_redis_cluster_store(&rc);
    before = peak_rss_kb();
    r = s.acquire(s.ctx, "asked", 5000, &tok);       /* ASK; ASKING answers 4,000,000 elements */
    after = peak_rss_kb();
    printf("  hugeask: acquire %d, peak RSS %ld -> %ld KiB (%s)\n", r, before, after, ldl_redis_cluster_why(&rc));
    ST_CHECK(r == LDL_ESTORE, "no grant");
    ST_CHECK(after - before < 64 * 1024, "the 4,000,000-element reply was refused before allocating "
             "(peak RSS +%ld KiB)", after - before);
    ldl_redis_cluster_free(&rc);
    rf_stop(&f);
}

/* ------------------------------------------------------------ churn, ask15 */
static void test_churn(void)
{
    static ldl_redis_cluster rc;
    rf_node f;
    char seed[64];
    int i, ok = 0;
    ST_CHECK(rf_start(&f, "churn", NULL) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    ST_CHECK(ldl_redis_cluster_init(&rc, seed, NULL, 1000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    for (i = 0; i < 12; i++) ok += ldl_redis_cluster_refresh(&rc) == LDL_OK;
    printf("  churn: 12 maps, each naming 3 new replica addresses: %d accepted (%s)\n", ok,
           ok == 12 ? "" : ldl_redis_cluster_why(&rc));
    ST_CHECK(ok == 12, "the node table is rebuilt from each map, not grown");
    ldl_redis_cluster_free(&rc);
    rf_stop(&f);
}

static void test_ask15(void)
{
    static ldl_redis_cluster rc;
    rs_server srv;
    rf_node f;
    ldl_store s;
    char seed[64];
    int64_t tok = 0;
    int i, asks = 0, r;
    ST_CHECK(rs_start(&srv, "ask15", 0) == 0, "redis-server");
    ST_CHECK(rf_start(&f, "ask15", srv.portstr) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    ST_CHECK(ldl_redis_cluster_init(&rc, seed, NULL, 1000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
    s = ldl_redis_cluster_store(&rc);
    for (i = 0; i < 15; i++) asks += s.acquire(s.ctx, "churned", 5000, &tok) == LDL_ESTORE;
    ST_CHECK(rc._m._nn == 1, "after 15 ASKs the node table holds the map's one node (%d)", rc._m._nn);
    r = s.acquire(s.ctx, "churned", 5000, &tok);    /* MOVED to the real server */
    printf("  ask15: 15 ASKs to dead ports answered %d x LDL_ESTORE; then MOVED to a real node: %d token %lld (%s)\n",
           asks, r, (long long)tok, r == 1 ? "" : ldl_redis_cluster_why(&rc));
    /* the real node is a plain (non-cluster) redis-server: since v0.3 the Cluster view's grant
       reads the config epoch (CLUSTER INFO, decision 0115), which it refuses -- its error reply,
       naming that server, shows the MOVED was followed just as a grant would */
    ST_CHECK(asks == 15 && (r == 1 || (r == LDL_ESTORE && strstr(ldl_redis_cluster_why(&rc), srv.portstr) &&
                                       strstr(ldl_redis_cluster_why(&rc), "cluster support disabled"))),
             "ASK targets are not kept: a later MOVED to a new master is followed");
    ldl_redis_cluster_free(&rc);
    rf_stop(&f);
    rs_stop(&srv);
}

/* ------------------------------------------------------------ overlap, bigport */
static void test_refused_map(const char *mode, const char *want)
{
    static ldl_redis_cluster rc;
    rf_node f;
    char seed[64];
    uint64_t t0;
    int r;
    ST_CHECK(rf_start(&f, mode, NULL) == 0, "fake node");
    seed_of(&f, seed, sizeof seed);
    t0 = st_now_ms();
    r = ldl_redis_cluster_init(&rc, seed, NULL, 5000);
    printf("  %s: init %d after %llu ms (%s)\n", mode, r, (unsigned long long)(st_now_ms() - t0), ldl_redis_cluster_why(&rc));
    ST_CHECK(r == LDL_ESTORE && strstr(ldl_redis_cluster_why(&rc), want), "%s map refused (\"%s\")", mode, want);
    ldl_redis_cluster_free(&rc);
    rf_stop(&f);
}

/* ------------------------------------------------------------ answers (decision 0118) */
static void test_answers(void)
{
    static const struct { const char *mode, *arg; int grant; const char *why; } cases[] = {
        { "answer", "77", 1, "" },
        { "answer", "77 7 0123456789abcdef0123456789abcdef01234567", 1, "" },
        { "answer", "77 2147483648 0123456789abcdef0123456789abcdef01234567", 0, "malformed" },
        { "answer", "77 7 0123456789ABCDEF0123456789abcdef01234567", 0, "malformed" },
        { "answer", "077", 0, "malformed" },
        { "answer", "77 ", 0, "malformed" },
        { "answer", "+77", 0, "malformed" },
        { "othernonce", "", 0, "out of step" },
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static ldl_redis_cluster rc;
        static ldl_redis_cluster_req reqs[16];
        static ldl_redis_cluster_async ra;
        ldl_async_store as;
        ldl_lock lk;
        rf_node f;
        ldl_store s;
        char seed[64];
        int64_t tok = -777;
        uint64_t end;
        int r, epoch2 = k == 1;
        ST_CHECK(rf_start(&f, cases[k].mode, cases[k].arg) == 0, "fake node");
        seed_of(&f, seed, sizeof seed);
        /* synchronous view */
        ST_CHECK(ldl_redis_cluster_init(&rc, seed, NULL, 1000) == LDL_OK, "init: %s", ldl_redis_cluster_why(&rc));
        s = ldl_redis_cluster_store(&rc);
        r = s.acquire(s.ctx, "k", 5000, &tok);
        printf("  answers: \"<nonce> %s\" (%s): sync %d token %lld, epoch cache %u (%s)\n", cases[k].arg,
               cases[k].mode, r, (long long)tok, rc._m._nn > 0 ? (unsigned)rc._m._n[0]._r._ep_e : 0u,
               ldl_redis_cluster_why(&rc));
        if (cases[k].grant)
            ST_CHECK(r == 1 && tok == 77, "sync: \"%s\" is a grant of 77: %d %lld", cases[k].arg, r, (long long)tok);
        else
            ST_CHECK(r < 0 && tok == -777 && strstr(ldl_redis_cluster_why(&rc), cases[k].why),
                     "sync: \"%s\" (%s) is refused, nothing taken: %d %lld (%s)", cases[k].arg, cases[k].mode, r,
                     (long long)tok, ldl_redis_cluster_why(&rc));
        ST_CHECK(rc._m._nn > 0 && rc._m._n[0]._r._ep_e == (epoch2 ? 7u : 0u),
                 "sync: the epoch cache holds %u (want %u)", rc._m._nn > 0 ? (unsigned)rc._m._n[0]._r._ep_e : 0u,
                 epoch2 ? 7u : 0u);
        ldl_redis_cluster_free(&rc);
        /* non-blocking view */
        ST_CHECK(ldl_redis_cluster_async_init(&ra, seed, NULL, 1000, reqs, 16) == LDL_OK, "async init: %s",
                 ldl_redis_cluster_async_why(&ra));
        as = ldl_redis_cluster_async_store(&ra);
        tick();
        lock_async(&lk, &as, "k", 5000);
        ldl_lock_acquire(&lk);
        end = st_now_ms() + 3000;
        while (st_now_ms() < end && ldl_lock_pending(&lk)) {
            ldl_redis_cluster_async_pump(&ra);
            tick();
            ldl_lock_poll(&lk);
            st_sleep_ms(2);
        }
        if (cases[k].grant)
            ST_CHECK(ldl_lock_state(&lk) == LDL_HELD && ldl_lock_fencing_token(&lk) == 77,
                     "async: \"%s\" is a grant of 77 (state %s)", cases[k].arg, ldl_state_name(ldl_lock_state(&lk)));
        else
            ST_CHECK(ldl_lock_state(&lk) != LDL_HELD && ldl_lock_fencing_token(&lk) == 0,
                     "async: \"%s\" (%s) is never a grant (state %s token %lld)", cases[k].arg, cases[k].mode,
                     ldl_state_name(ldl_lock_state(&lk)), (long long)ldl_lock_fencing_token(&lk));
        ldl_lock_dispose(&lk);
        ldl_redis_cluster_async_free(&ra);
        rf_stop(&f);
    }
}

int main(void)
{
    const char *ms = getenv("LDL_TEST_DNS_MS");
    st_ignore_sigpipe();
    if (ms && atoi(ms) > 0) g_dns_ms = (uint32_t)atoi(ms);
    st_case("dns", RS_CASE_S);
    test_dns();
    st_case("drip", RS_CASE_S);
    test_drip();
    st_case("hugeask", RS_CASE_S);
    test_hugeask();
    st_case("churn", RS_CASE_S);
    test_churn();
    st_case("ask15", RS_CASE_S);
    test_ask15();
    st_case("refused_map", RS_CASE_S);
    test_refused_map("overlap", "overlapping");
    st_case("refused_map", RS_CASE_S);
    test_refused_map("bigport", "port");
    st_case("answers", RS_CASE_S);
    test_answers();
    return st_report();
}
