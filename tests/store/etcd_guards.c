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
    int rc, inflight = 0, attempt, missed = 0;
    long keys, leases;
    char key[32];

    etcdt_cfg(&c, M.url, "cancel/");
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK && ldl_etcd_init(&e2, &c) == LDL_OK, "[cancel %s] init", name);
    ST_CHECK(ldl_etcd_async_init(&ea, &e, reqs, 8) == LDL_OK, "[cancel %s] async init", name);
    as = ldl_etcd_async_store(&ea);
    /* On a loaded machine the exchange can be sent and answered inside one pump (the
       process preempted between libcurl's send and its read): then the moment was missed,
       the lock is HELD, and the attempt is released and made again with another key. */
    for (attempt = 0; attempt < 8 && !inflight; attempt++) {
        snprintf(key, sizeof key, "c-%s-%d", name, attempt);
        memset(&d, 0, sizeof d);
        memset(&box, 0, sizeof box);
        d.container = conf__container(&box);
        d.key = key;
        d.ttl_ms = 8000;                  /* the key must be free long before the lease ends */
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
        if (inflight) break;
        missed++;
        while (ldl_lock_state(&lock) == LDL_ACQUIRING && st_now_ms() < end + 5000) {
            ldl_etcd_async_wait(&ea, 5);
            ldl_etcd_async_pump(&ea);
            ldl_lock_poll(&lock);
        }
        ldl_lock_release(&lock);
        settle(&ea, 5000);
        while (ldl_lock_state(&lock) == LDL_RELEASING && st_now_ms() < end + 10000) {
            ldl_etcd_async_wait(&ea, 5);
            ldl_etcd_async_pump(&ea);
            ldl_lock_poll(&lock);
        }
        ldl_lock_dispose(&lock);
        settle(&ea, 5000);
    }
    if (missed) printf("figure: cut at the %s: the moment was missed %d time(s) (answered within one pump)\n", name, missed);
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
    printf("figure: cut at the %s: key free and lease revoked %llu ms after the cut (ttl 8000 ms)\n", name,
           (unsigned long long)t_free);
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
    int rc;
    memset(prefix, 'p', 62);
    prefix[62] = '/';
    prefix[63] = '\0';
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    memset(owner, 'o', sizeof owner - 1);
    owner[sizeof owner - 1] = '\0';
    ST_CHECK(strlen(prefix) == 63 && strlen(key) == 127 && strlen(owner) == 63, "the maxima: 63 + 127, owner 63");
    etcdt_cfg(&c, M.url, prefix);
    rc = ldl_etcd_init(&e, &c);            /* first: the why below reads what init wrote */
    ST_CHECK(rc == LDL_OK, "[longkey] init with a 63-byte prefix: %s", ldl_etcd_why(&e));
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

/* the value of etcd key k (raw, decoded) into out; 1 found, 0 absent, -1 error */
static int get_value(const char *k, char *out, size_t cap)
{
    char k64[256], body[400], reply[4096];
    cJSON *j, *kvs, *v;
    int rc = -1;
    out[0] = '\0';
    if (ldl__etcd_b64enc((const unsigned char *)k, strlen(k), k64, sizeof k64) != 0) return -1;
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", k64);
    if (etcdt_post(M.url, "/v3/kv/range", body, reply, sizeof reply) != 200) return -1;
    j = cJSON_Parse(reply);
    kvs = cJSON_GetObjectItemCaseSensitive(j, "kvs");
    if (j && !kvs) rc = 0;
    else if (cJSON_GetArraySize(kvs) == 1) {
        long n;
        v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(kvs, 0), "value");
        n = ldl__etcd_b64dec(v && cJSON_IsString(v) ? v->valuestring : "", (unsigned char *)out, cap - 1);
        if (n >= 0) { out[n] = '\0'; rc = 1; }
    }
    cJSON_Delete(j);
    return rc;
}

static int fenced(ldl_etcd *e, int64_t fence, const char *value, int del)
{
    ldl_etcd_write w;
    memset(&w, 0, sizeof w);
    w.key = "res";
    w.fence = fence;
    w.target = "data/x";
    w.value = value;
    w.value_len = value ? strlen(value) : 0;
    w.del = del;
    return ldl_etcd_fenced(e, &w);
}

/* the fenced write: a stale holder's put and delete are refused after a takeover */
static void fence_case(void)
{
    ldl_etcd a, b;
    ldl_etcd_config c;
    ldl_store sa, sb;
    ldl_etcd_write w;
    int64_t ta = 0, tb = 0;
    char v[64];
    int rc;
    etcdt_cfg(&c, M.url, "fence/");
    ldl_etcd_init(&a, &c);
    ldl_etcd_init(&b, &c);
    sa = ldl_etcd_store(&a);
    sb = ldl_etcd_store(&b);
    ST_CHECK(sa.acquire(sa.ctx, "res", 3000, &ta) == 1, "[fence] A acquires");
    rc = fenced(&a, ta, "a1", 0);
    ST_CHECK(rc == 1 && get_value("data/x", v, sizeof v) == 1 && strcmp(v, "a1") == 0,
             "[fence] the holder's put is applied: %d, value '%s' (%s)", rc, v, ldl_etcd_why(&a));
    ST_CHECK(fenced(&a, ta, "a1b", 0) == 1, "[fence] the holder writes again under the same fence");
    /* the takeover: A's lease ends (here: released by key and fence from another client,
       as an expiry would), B acquires with a higher fence */
    ST_CHECK(sb.release(sb.ctx, "res", ta) == 1, "[fence] A's lease ends");
    ST_CHECK(sb.acquire(sb.ctx, "res", 3000, &tb) == 1 && tb > ta, "[fence] B takes over: %lld > %lld",
             (long long)tb, (long long)ta);
    rc = fenced(&b, tb, "b1", 0);
    ST_CHECK(rc == 1, "[fence] the new holder's put = %d (%s)", rc, ldl_etcd_why(&b));
    rc = fenced(&a, ta, "a2", 0);
    ST_CHECK(rc == 0 && ldl_etcd_why(&a)[0], "[fence] the stale holder's put is refused: %d (%s)", rc, ldl_etcd_why(&a));
    rc = fenced(&a, ta, NULL, 1);
    ST_CHECK(rc == 0, "[fence] the stale holder's delete is refused: %d", rc);
    rc = fenced(&a, tb + 1, "a3", 0);
    ST_CHECK(rc == 0, "[fence] a fence above the holder's is refused too (equal, not at-least): %d", rc);
    ST_CHECK(get_value("data/x", v, sizeof v) == 1 && strcmp(v, "b1") == 0, "[fence] the value is the new holder's: '%s'", v);
    rc = fenced(&b, tb, NULL, 1);
    ST_CHECK(rc == 1 && get_value("data/x", v, sizeof v) == 0, "[fence] the holder's delete is applied: %d", rc);
    ST_CHECK(sb.release(sb.ctx, "res", tb) == 1, "[fence] B releases");
    rc = fenced(&b, tb, "b2", 0);
    ST_CHECK(rc == 0 && get_value("data/x", v, sizeof v) == 0, "[fence] after the release nobody writes: %d", rc);
    memset(&w, 0, sizeof w);
    w.key = "res";
    w.target = "data/x";
    ST_CHECK(ldl_etcd_fenced(&a, &w) == LDL_EINVAL && ldl_etcd_why(&a)[0], "[fence] fence 0: EINVAL with a why");
    w.fence = 3;
    w.target = NULL;
    ST_CHECK(ldl_etcd_fenced(&a, &w) == LDL_EINVAL, "[fence] no target: EINVAL");
    w.target = "data/x";
    w.value_len = LDL_ETCD_WRITE_MAX + 1;
    w.value = "x";
    ST_CHECK(ldl_etcd_fenced(&a, &w) == LDL_EINVAL, "[fence] a value over LDL_ETCD_WRITE_MAX: EINVAL");
    {   /* the largest value: one txn of LDL_ETCD_WRITE_MAX bytes */
        static char big[LDL_ETCD_WRITE_MAX];
        int64_t t = 0;
        memset(big, 'v', sizeof big);
        ST_CHECK(sa.acquire(sa.ctx, "res", 3000, &t) == 1, "[fence] A acquires again");
        w.fence = t;
        w.value = big;
        w.value_len = sizeof big;
        rc = ldl_etcd_fenced(&a, &w);
        ST_CHECK(rc == 1, "[fence] a %d-byte value is written: %d (%s)", LDL_ETCD_WRITE_MAX, rc, ldl_etcd_why(&a));
        w.del = 1;
        ST_CHECK(ldl_etcd_fenced(&a, &w) == 1, "[fence] and deleted");
        ST_CHECK(sa.release(sa.ctx, "res", t) == 1, "[fence] A releases");
    }
    ldl_etcd_close(&a);
    ldl_etcd_close(&b);
}

static int ectl(const char *args)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --dial-timeout=3s --command-timeout=5s --endpoints=%s %s >/dev/null 2>&1",
             M.url, args);
    return system(cmd);
}

/* the ACL that makes the lock's keys its own (docs/etcd.md): only the lockers' role may
   write under the prefix. A user who can only read it can inspect the holder, but can
   neither take the key, nor release or renew it, nor fence-write, nor put over it with
   a plain client. Runs last: auth stays enabled on the member. */
static void acl_case(void)
{
    ldl_etcd app, rd;
    ldl_etcd_config c;
    ldl_store sa, sr;
    ldl_store_ext xr;
    ldl_holder h;
    ldl_etcd_write w;
    int64_t t = 0, t2 = 0;
    int rc;
    ST_CHECK(ectl("user add root:rootpw") == 0 && ectl("user add app:apppw") == 0 &&
             ectl("user add reader:readerpw") == 0 && ectl("role add ldl-lockers") == 0 &&
             ectl("role add ldl-readers") == 0 &&
             ectl("role grant-permission ldl-lockers readwrite --prefix=true acl/") == 0 &&
             ectl("role grant-permission ldl-readers read --prefix=true acl/") == 0 &&
             ectl("user grant-role app ldl-lockers") == 0 && ectl("user grant-role reader ldl-readers") == 0 &&
             ectl("auth enable") == 0, "[acl] etcdctl: users, roles, auth enable");
    etcdt_cfg(&c, M.url, "acl/");
    c.user = "app";
    c.password = "apppw";
    ST_CHECK(ldl_etcd_init(&app, &c) == LDL_OK, "[acl] init app");
    c.user = "reader";
    c.password = "readerpw";
    ST_CHECK(ldl_etcd_init(&rd, &c) == LDL_OK, "[acl] init reader");
    sa = ldl_etcd_store(&app);
    sr = ldl_etcd_store(&rd);
    xr = ldl_etcd_ext(&rd);
    rc = ldl_etcd_ext(&app).acquire_owned(&app, "k", 3000, "app-1", &t);
    ST_CHECK(rc == 1 && t >= 1, "[acl] the lockers' user acquires: %d (%s)", rc, ldl_etcd_why(&app));
    rc = xr.inspect(xr.ctx, "k", &h);
    ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "app-1") == 0, "[acl] a reader inspects: %d (%s)", rc,
             ldl_etcd_why(&rd));
    ST_CHECK(sr.release(sr.ctx, "k", t) == LDL_ESTORE && ldl_etcd_why(&rd)[0], "[acl] a reader cannot release: %s",
             ldl_etcd_why(&rd));
    ST_CHECK(ectl("--user reader:readerpw put acl/k stolen") != 0, "[acl] a reader cannot put over the key with etcdctl");
    ST_CHECK(ectl("--user reader:readerpw del acl/k") != 0, "[acl] a reader cannot delete the key with etcdctl");
    memset(&w, 0, sizeof w);
    w.key = "k";
    w.fence = t;                       /* even with the holder's fence */
    w.target = "acl/data";
    rc = ldl_etcd_fenced(&rd, &w);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_etcd_why(&rd), "permission denied"),
             "[acl] a reader's fenced write is refused by etcd: %d (%s)", rc, ldl_etcd_why(&rd));
    ST_CHECK(sa.renew(sa.ctx, "k", t, 3000) == 1, "[acl] the holder still holds it");
    ST_CHECK(sa.release(sa.ctx, "k", t) == 1, "[acl] the holder releases");
    t2 = 5;
    rc = sr.acquire(sr.ctx, "k", 3000, &t2);
    ST_CHECK(rc == LDL_ESTORE && t2 == 0, "[acl] a reader cannot take the free key: %d (%s)", rc, ldl_etcd_why(&rd));
    ST_CHECK(etcdt_count(M.url, "acl/") <= 0, "[acl] nothing left under acl/ (or not readable without auth)");
    ldl_etcd_close(&app);
    ldl_etcd_close(&rd);
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
    etcdt_case("fenced write", 30);
    fence_case();
    etcdt_case("the ACL: a read-only user", 60);
    acl_case();
    etcdt_case_end();
    etcdt_stop(&M);
    curl_global_cleanup();
    return st_report();
}
