/* etcd_guards.c -- the etcd adapter's guards of issues 31 and 37, against a real single
 * etcd member started here (tests/store/etcd_common.h; run through with_etcd.sh):
 *
 *   cancel      issue 37 item 2: an acquire of the non-blocking view, cut by
 *               ldl_lock_release while its lease grant (then, second case: its txn) is in
 *               flight; the grant lands AFTER the cut. The view must hand it back: the key
 *               is free at once (long before the 8 s TTL), the lease is revoked, and a
 *               second client acquires right after.
 *   longkey     issue 31: a 63-byte prefix + a 127-byte key (the documented maxima) and a
 *               63-byte owner are acquired, renewed and released, sync and non-blocking,
 *               and another client acquires right after each release.
 *   why         every store error carries a why (acquire, renew, release, inspect).
 *   fence       issue 31: the fenced write (ldl_etcd_fenced): a txn that compares the
 *               lock key's create_revision with the fence and does the caller's put or
 *               delete. A stale holder's write after a takeover is refused (0), the
 *               holder's own is applied (1).
 *   acl         issue 31: the lock's keys are its own only under the role docs/etcd.md
 *               gives; a read-only user on the prefix can inspect but never acquire, and
 *               cannot write the lock's keys with a plain put either.
 *
 * Every case runs under its own time bound (etcdt_case): a hang fails naming the case.
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"
#include "tests/store/etcd_common.h"

static etcdt_member M;

/* the view's one live request (the test peeks at the adapter's private fields) */
static ldl_etcd_req *live_req(ldl_etcd_req *reqs, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (reqs[i]._live) return &reqs[i];
    return NULL;
}

static void settle(ldl_etcd_async *ea, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (ldl_etcd_async_stats(ea)->live > 0 && st_now_ms() < end) {
        ldl_etcd_async_wait(ea, 5);
        ldl_etcd_async_pump(ea);
    }
}

/* step: LDL__ETCD_S_GRANT or LDL__ETCD_S_PUT -- the exchange in flight at the cut */
static void cancel_case(int step, const char *name)
{
    static ldl_etcd_req reqs[8];
    ldl_etcd e, e2;
    ldl_etcd_config c;
    ldl_etcd_async ea;
    ldl_async_store as;
    ldl_store s2;
    ldl_lock lock;
    ldl_lock_desc d;
    conf__box box;
    ldl_etcd_req *r;
    uint64_t end, t_cut, t_free;
    int64_t tok = 0;
    int rc, inflight = 0;
    long keys, leases;
    char key[32];

    snprintf(key, sizeof key, "c-%s", name);
    etcdt_cfg(&c, M.url, "cancel/");
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK && ldl_etcd_init(&e2, &c) == LDL_OK, "[cancel %s] init", name);
    ST_CHECK(ldl_etcd_async_init(&ea, &e, reqs, 8) == LDL_OK, "[cancel %s] async init", name);
    as = ldl_etcd_async_store(&ea);
    memset(&d, 0, sizeof d);
    memset(&box, 0, sizeof box);
    d.container = conf__container(&box);
    d.key = key;
    d.ttl_ms = 8000;                      /* the key must be free long before the lease ends */
    d.async_store = &as;
    ST_CHECK(ldl_lock_init(&lock, &d) == LDL_OK, "[cancel %s] lock init", name);
    rc = ldl_lock_acquire(&lock);
    ST_CHECK(rc == LDL_EINPROGRESS, "[cancel %s] acquire submitted: %d", name, rc);
    /* pump until the chosen exchange is on the wire and its answer not yet read */
    end = st_now_ms() + 5000;
    while (st_now_ms() < end) {
        r = live_req(reqs, 8);
        if (r && r->_step == step && r->_busy) { inflight = 1; break; }
        if (!r || r->_step > step) break;
        ldl_etcd_async_pump(&ea);
    }
    ST_CHECK(inflight, "[cancel %s] the exchange is in flight before the cut", name);
    t_cut = st_now_ms();
    ldl_lock_release(&lock);                       /* the cut: the lock cancels the acquire */
    ST_CHECK(ldl_lock_state(&lock) == LDL_RELEASED, "[cancel %s] the lock is RELEASED at the cut: %d", name,
             (int)ldl_lock_state(&lock));
    settle(&ea, 5000);                             /* the grant lands after the cut */
    ST_CHECK(ldl_etcd_async_stats(&ea)->live == 0, "[cancel %s] the view finished the cut request", name);
    if (step == LDL__ETCD_S_PUT)
        ST_CHECK(ldl_etcd_async_stats(&ea)->handed_back == 1,
                 "[cancel %s] the txn committed after the cut and the view handed the grant back: %llu",
                 name, (unsigned long long)ldl_etcd_async_stats(&ea)->handed_back);
    keys = etcdt_count(M.url, "cancel/");
    leases = etcdt_leases(M.url);
    t_free = st_now_ms() - t_cut;
    ST_CHECK(keys == 0, "[cancel %s] the key is free at once (%llu ms after the cut; ttl 8 s): %ld keys",
             name, (unsigned long long)t_free, keys);
    ST_CHECK(leases == 0, "[cancel %s] the lease granted after the cut is revoked: %ld leases", name, leases);
    s2 = ldl_etcd_store(&e2);
    rc = s2.acquire(s2.ctx, key, 3000, &tok);
    ST_CHECK(rc == 1 && tok >= 1, "[cancel %s] a second client acquires right after: %d (%s)", name, rc,
             ldl_etcd_why(&e2));
    if (rc == 1) ST_CHECK(s2.release(s2.ctx, key, tok) == 1, "[cancel %s] second client releases", name);
    ldl_lock_dispose(&lock);
    ldl_etcd_async_close(&ea);
    ldl_etcd_close(&e);
    ldl_etcd_close(&e2);
}

/* one lifecycle at the maxima through store s; another client (o) acquires right after */
static void longkey_life(ldl_store *s, ldl_store_ext *x, ldl_store *o, const char *key, const char *owner,
                         const char *view, const char *why_a, const char *why_o)
{
    int64_t t = 0, t2 = 0;
    int rc;
    ldl_holder h;
    const char *want = x && x->acquire_owned ? owner : "";
    rc = x && x->acquire_owned ? x->acquire_owned(x->ctx, key, 3000, owner, &t) : s->acquire(s->ctx, key, 3000, &t);
    ST_CHECK(rc == 1 && t >= 1, "[longkey %s] acquire = %d (%s)", view, rc, why_a);
    ST_CHECK(s->renew(s->ctx, key, t, 3000) == 1, "[longkey %s] renew (%s)", view, why_a);
    if (x && x->inspect) {
        rc = x->inspect(x->ctx, key, &h);
        ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, want) == 0, "[longkey %s] inspect = %d owner '%s'",
                 view, rc, h.owner);
    }
    rc = s->release(s->ctx, key, t);
    ST_CHECK(rc == 1, "[longkey %s] release = %d (%s)", view, rc, why_a);
    rc = o->acquire(o->ctx, key, 3000, &t2);
    ST_CHECK(rc == 1 && t2 > t, "[longkey %s] another client acquires right after the release = %d (%s)", view, rc,
             why_o);
    if (rc == 1) ST_CHECK(o->release(o->ctx, key, t2) == 1, "[longkey %s] the other client releases", view);
}

static void longkey(void)
{
    char prefix[64], key[LDL_KEY_MAX], owner[LDL_OWNER_MAX];
    ldl_etcd e, e2;
    ldl_etcd_config c;
    ldl_store s, o;
    ldl_store_ext x;
    memset(prefix, 'p', 62);
    prefix[62] = '/';
    prefix[63] = '\0';
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    memset(owner, 'o', sizeof owner - 1);
    owner[sizeof owner - 1] = '\0';
    ST_CHECK(strlen(prefix) == 63 && strlen(key) == 127 && strlen(owner) == 63, "the maxima: 63 + 127, owner 63");
    etcdt_cfg(&c, M.url, prefix);
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK, "[longkey] init with a 63-byte prefix: %s", ldl_etcd_why(&e));
    ST_CHECK(ldl_etcd_init(&e2, &c) == LDL_OK, "[longkey] init (other client)");
    s = ldl_etcd_store(&e);
    x = ldl_etcd_ext(&e);
    o = ldl_etcd_store(&e2);
    longkey_life(&s, &x, &o, key, owner, "sync", ldl_etcd_why(&e), ldl_etcd_why(&e2));
    {
        static ldl_etcd_req rq[4];
        ldl_etcd_async ea;
        etcdt_shim sh;
        ldl_store as;
        ldl_store_ext ax;
        ST_CHECK(ldl_etcd_async_init(&ea, &e, rq, 4) == LDL_OK, "[longkey] async init");
        sh.ea = &ea;
        sh.max_ms = 10000;
        as = etcdt_shim_store(&sh);
        ax = ldl_etcd_async_ext(&ea);
        ax.acquire_owned = NULL;                /* the shim has no owned submit: plain acquire */
        longkey_life(&as, &ax, &o, key, owner, "async", ldl_etcd_async_why(&ea), ldl_etcd_why(&e2));
        settle(&ea, 5000);
        ldl_etcd_async_close(&ea);
    }
    ST_CHECK(etcdt_count(M.url, prefix) == 0, "[longkey] nothing left under the prefix");
    ldl_etcd_close(&e);
    ldl_etcd_close(&e2);
}

/* every store error carries a why: each verb against a dead member, why checked per verb */
static void why_case(void)
{
    char eps[64];
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 0;
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d", st_free_port());
    etcdt_cfg(&c, eps, NULL);
    c.call_ms = 500;
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    x = ldl_etcd_ext(&e);
    ST_CHECK(s.acquire(s.ctx, "w", 3000, &t) == LDL_ESTORE && ldl_etcd_why(&e)[0], "[why] acquire: [%s]", ldl_etcd_why(&e));
    ST_CHECK(s.renew(s.ctx, "w", 3, 3000) == LDL_ESTORE && ldl_etcd_why(&e)[0], "[why] renew: [%s]", ldl_etcd_why(&e));
    ST_CHECK(s.release(s.ctx, "w", 3) == LDL_ESTORE && ldl_etcd_why(&e)[0], "[why] release: [%s]", ldl_etcd_why(&e));
    ST_CHECK(x.inspect(x.ctx, "w", &h) == LDL_ESTORE && ldl_etcd_why(&e)[0], "[why] inspect: [%s]", ldl_etcd_why(&e));
    ldl_etcd_close(&e);
}

int main(void)
{
    st_ignore_sigpipe();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    etcdt_case("start etcd", 60);
    if (!etcdt_start(&M, "guards")) { ST_CHECK(0, "start etcd"); return st_report(); }
    etcdt_case("cancel while the lease grant is in flight", 30);
    cancel_case(LDL__ETCD_S_GRANT, "grant");
    etcdt_case("cancel while the acquire txn is in flight", 30);
    cancel_case(LDL__ETCD_S_PUT, "txn");
    etcdt_case("63 + 127 byte key", 60);
    longkey();
    etcdt_case("every store error has a why", 30);
    why_case();
    etcdt_case_end();
    etcdt_stop(&M);
    curl_global_cleanup();
    return st_report();
}
