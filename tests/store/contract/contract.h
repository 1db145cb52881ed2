/* tests/store/contract/contract.h -- THE adapter contract suite (issue 31 item 3): one test
 * body, compiled once per adapter (contract_<adapter>.c), run in both views of the adapter
 * (the synchronous ldl_store and the non-blocking ldl_async_store) against the real server
 * and, where the contract needs a reply a real server never sends, the adapter's hostile
 * fake. Every client is an ldl_view (adapters/lite_di_lock_view.h): the body pumps, waits
 * and asks for the durability report through the view's ops, never through an adapter's
 * own names. Test code, header-only; include after lite_di_lock.h, tests/store/fenced.h,
 * the adapter's header and adapters/lite_di_lock_view.h.
 *
 * THE FIXTURE (what an adapter's program fills; the body never names an adapter)
 *   ct_client   one client of a store in one view, filled from an attached ldl_view by
 *               ct_attach(c, &view, is_async): the sync ldl_store, or the
 *               ldl_async_store driven by the view's wait + pump, and its
 *               ldl_store_ext (inspect).
 *   ct_fx       the adapter's name, the view ("sync" / "async"), two clients a and b of ONE
 *               real store, the TTL, count() (the store's records, read from the side:
 *               keys, rows), and open(which) / close(which): the special clients the
 *               checklist needs (a hostile fake, a frozen server, a foreign file ...).
 *               open answers NULL when it made the client, else the reason the item
 *               cannot apply to this adapter ("n/a: reason" is printed; never silent).
 *               ct_fx_init(f, adapter, v, bound, count, open, close) fills what every
 *               adapter fills alike (a 3 s TTL, the view's name as the keys' tag).
 *
 * THE CASES (the checklist of docs/adapters.md; the case name is what the doc cites)
 *   fence_rising        grants carry fences >= 1, strictly rising per key, across clients
 *   second_holder       a held key is refused to the other client and to the holder again
 *   stale_renew         renew by a stale token answers 0; by the holder's token 1
 *   release_frees       release answers 1, the other client acquires at once; a second
 *                       release of the same token answers 0
 *   long_key            a key of LDL_KEY_MAX-1 bytes (behind the fixture's longest prefix)
 *                       is granted, released, and acquirable by the other client at once
 *   inspect_readonly    inspect of a missing key answers 0 and creates no record
 *   unproven_answer     (fake) a reply that does not prove it answers this request: a store
 *                       error, no token, and a lock's job never runs
 *   reply_bounded       (fake) a 4.5 MB reply tree (or the fake's equivalent): refused, the
 *                       calling process stays under 32 MB of RSS
 *   bounded_wait        a frozen server: sync, the call answers a store error within the
 *                       fixture's bound; async, no wait (5 ms) + pump takes over 100 ms, and
 *                       a lock's acquire ends (not held) within its TTL + 1 s
 *   missing_store       inspection of a store that does not exist: refused, nothing created
 *   foreign_storage     storage another user or role may write: refused, no fence handed out
 *   durability_report   the view's durability op claims LDL_SURVIVES_FAILOVER only with a
 *                       standby that has every grant (the fixture's setup says how many: 0
 *                       everywhere; PostgreSQL's has only a logical walsender streaming as
 *                       sync); a view that answers LDL_EUNSUPPORTED is n/a with its why
 *
 * OUTPUT: one line per case ("  ok   CASE VIEW", "  FAIL CASE VIEW", "  n/a  CASE VIEW:
 * reason"), then exactly one "ADAPTER: N passed, M failed" (cases; n/a counted in neither).
 * Exit status: 0 when M == 0. */
#ifndef LDL_TESTS_STORE_CONTRACT_H
#define LDL_TESTS_STORE_CONTRACT_H

#include <sys/resource.h>

/* a call the shim gave up waiting for (a test failure, never a store answer) */
#define CT_NOANSWER (-9999)
#define CT_RSS_MAX_KB (32L * 1024L)
#define CT_PUMP_MAX_MS 100   /* a 5 ms wait + one pump against a frozen server, on a loaded 2-core box */

enum { CT_FAKE_UNPROVEN = 1, CT_FAKE_TREE, CT_FROZEN, CT_MISSING, CT_FOREIGN, CT_DURABILITY };

typedef struct ct_client {
    ldl_view         v;                         /* the adapter's view (lite_di_lock_view.h) */
    ldl_store        s;                         /* sync view */
    ldl_async_store  as;                        /* async view (s unused) */
    int            (*pump)(void *pctx, int wait_ms);
    void            *pctx;
    ldl_store_ext    ext;
    int              is_async;
    uint32_t         max_ms;                    /* the shim's patience (default 10 s) */
    int              open_rc;                   /* open(): the adapter's init answer;
                                                   CT_NOANSWER: the fixture's setup failed */
    uint64_t         pump_max_ms;               /* the longest wait + pump seen (shim, lock loop) */
    ldl_store        shim;                      /* filled by ct_store() */
} ct_client;

typedef struct ct_probe {
    int      bits;                              /* CT_DURABILITY: the report */
    int      failover;                          /* 1: the report claims failover survival */
    int      standbys;                          /* the promotable standbys the setup has */
    int      created;                           /* CT_MISSING: 1 when the attempt created anything */
    char     why[1024];
} ct_probe;

typedef struct ct_fx ct_fx;
struct ct_fx {
    const char *adapter;
    const char *view;                           /* "sync" or "async" */
    int         is_async;
    ct_client   a, b;
    uint32_t    ttl_ms;
    uint32_t    frozen_bound_ms;                /* a sync call's bound against a frozen server */
    long      (*count)(ct_fx *f);               /* the store's records (keys, rows); -1 error */
    const char *(*open)(ct_fx *f, int which, ct_client *out, ct_probe *p);
    void      (*close)(ct_fx *f, int which, ct_client *c);
    void       *user;
    char        keys[8];                        /* a per-view tag mixed into the keys */
    int         passed, failed, na;
};

/* one view's fixture (v 0: sync, 1: async), zeroed, then what every adapter fills alike:
   the names, a 3 s TTL, the view as the keys' tag, the adapter's bound and its callbacks */
ST_FN void ct_fx_init(ct_fx *f, const char *adapter, int v, uint32_t frozen_bound_ms, long (*count)(ct_fx *f),
                      const char *(*open)(ct_fx *f, int which, ct_client *out, ct_probe *p),
                      void (*close)(ct_fx *f, int which, ct_client *c))
{
    memset(f, 0, sizeof *f);
    f->adapter = adapter;
    f->view = v ? "async" : "sync";
    f->is_async = v;
    f->ttl_ms = 3000;
    f->frozen_bound_ms = frozen_bound_ms;
    f->count = count;
    f->open = open;
    f->close = close;
    snprintf(f->keys, sizeof f->keys, "%s", f->view);
}

/* ------------------------------------------------------------ a fake that writes its port */
/* start `python3 SCRIPT PORTFILE` (a fake of a protocol); its port once it listens, or -1.
   Its pid goes to *pid and to a .pid file in $LDL_TEST_DIR (the with_*.sh trap's backstop). */
ST_FN int ct_start_fake(const char *script, pid_t *pid, char *dir, size_t dirlen)
{
    char portfile[600], log[600], pidfile[600], line[32];
    uint64_t end;
    FILE *fp = NULL;
    *pid = 0;
    if (st_tmpdir(dir, dirlen, "ctfake") != 0) return -1;
    snprintf(portfile, sizeof portfile, "%s/port", dir);
    snprintf(log, sizeof log, "%s/fake.log", dir);
    snprintf(pidfile, sizeof pidfile, "%s.pid", dir);
    {
        char *argv[4];
        argv[0] = (char *)"python3";
        argv[1] = (char *)script;
        argv[2] = portfile;
        argv[3] = NULL;
        *pid = st_spawn(argv, log, pidfile);
    }
    end = st_now_ms() + 15000;
    while (*pid > 0 && !(fp = fopen(portfile, "r")) && st_now_ms() < end) st_sleep_ms(20);
    if (!fp) { fprintf(stderr, "ct_start_fake: %s did not start, see %s\n", script, log); return -1; }
    line[0] = 0;
    if (!fgets(line, sizeof line, fp)) line[0] = 0;
    fclose(fp);
    return atoi(line) > 0 ? atoi(line) : -1;
}

/* ------------------------------------------------------------ a client from a view */
/* the view's pump: wait for readiness (at most wait_ms), then pump */
ST_FN int ct__view_pump(void *pctx, int wait_ms)
{
    ldl_view *v = (ldl_view *)pctx;
    if (wait_ms > 0) (void)v->ops->wait(v->self, wait_ms);
    return v->ops->pump(v->self);
}
/* fill c from an attached view; is_async picks the face the body drives (a view may fill
   both: SQLite's answers inside each submit). c must not move afterwards (pctx = &c->v). */
ST_FN void ct_attach(ct_client *c, const ldl_view *v, int is_async)
{
    c->v = *v;
    c->is_async = is_async;
    c->s = v->store;
    c->as = v->async;
    c->ext = v->ext;
    c->pump = ct__view_pump;
    c->pctx = &c->v;
}

/* ------------------------------------------------------------ the async shim */
/* pump until op is answered: its answer (and *tok, when tok), or CT_NOANSWER */
ST_FN int ct__wait(ct_client *c, ldl_op *op, int64_t *tok)
{
    uint64_t end = st_now_ms() + (c->max_ms ? c->max_ms : 10000u);
    int rc;
    while (!ldl_op_result(op, &rc, tok)) {
        uint64_t t0 = st_now_ms(), d;
        if (t0 > end) {
            c->as.cancel(c->as.ctx, op);
            return CT_NOANSWER;
        }
        c->pump(c->pctx, 5);
        d = st_now_ms() - t0;
        if (d > c->pump_max_ms) c->pump_max_ms = d;
    }
    return rc;
}
/* a fresh op in flight (the header's ldl_op_begin; store_data zeroed too) */
ST_FN void ct__fly(ldl_op *op)
{
    memset(op, 0, sizeof *op);
    ldl_op_begin(op);
}
ST_FN int ct__acq(void *ctx, const char *key, uint32_t ttl, int64_t *tok)
{
    ct_client *c = (ct_client *)ctx;
    ldl_op op;
    int rc;
    *tok = 0;
    ct__fly(&op);
    rc = c->as.acquire(c->as.ctx, &op, key, ttl);
    return rc != LDL_OK ? rc : ct__wait(c, &op, tok);
}
ST_FN int ct__ren(void *ctx, const char *key, int64_t t, uint32_t ttl)
{
    ct_client *c = (ct_client *)ctx;
    ldl_op op;
    int rc;
    ct__fly(&op);
    rc = c->as.renew(c->as.ctx, &op, key, t, ttl);
    return rc != LDL_OK ? rc : ct__wait(c, &op, NULL);
}
ST_FN int ct__rel(void *ctx, const char *key, int64_t t)
{
    ct_client *c = (ct_client *)ctx;
    ldl_op op;
    int rc;
    ct__fly(&op);
    rc = c->as.release(c->as.ctx, &op, key, t);
    return rc != LDL_OK ? rc : ct__wait(c, &op, NULL);
}

/* the client as a blocking ldl_store: itself (sync), or submit-then-pump (async) */
ST_FN ldl_store *ct_store(ct_client *c)
{
    if (!c->is_async) return &c->s;
    c->shim.acquire = ct__acq;
    c->shim.renew = ct__ren;
    c->shim.release = ct__rel;
    c->shim.ctx = c;
    return &c->shim;
}

/* ------------------------------------------------------------ a lock's job */
typedef struct ct__box { int scopes; } ct__box;
ST_FN void *ct__scope(void *self) { ct__box *b = (ct__box *)self; b->scopes++; return b; }
ST_FN int ct__value(void *scope, const char *name, void *value) { (void)scope; (void)name; (void)value; return 0; }
ST_FN int ct__shutdown(void *scope) { (void)scope; return 0; }
ST_FN int ct__job(void *scope, void *user) { (void)scope; (*(int *)user)++; return 0; }

/* run a job under an ldl_lock on client c: sync, ldl_lock_run; async, acquire then poll
   (pumping) until the request resolves, the job runs only when HELD. Answers the number of
   times the job ran; *rc the lock's answer (run's, or the resolved acquire's). */
ST_FN int ct_run_job(ct_fx *f, ct_client *c, const char *key, int *rc)
{
    ldl_lock lk;
    ldl_lock_desc d;
    ct__box box;
    int ran = 0;
    memset(&d, 0, sizeof d);
    memset(&box, 0, sizeof box);
    d.container.scope = ct__scope;
    d.container.value = ct__value;
    d.container.shutdown = ct__shutdown;
    d.container.self = &box;
    d.key = key;
    d.ttl_ms = f->ttl_ms;
    if (c->is_async) d.async_store = &c->as; else d.store = &c->s;
    if (ldl_lock_init(&lk, &d) != LDL_OK) {
        ST_CHECK(0, "[%s %s] ldl_lock_init: %s", f->adapter, f->view, ldl_lock_why(&lk));
        *rc = LDL_EINVAL;
        return 0;
    }
    if (!c->is_async) {
        *rc = ldl_lock_run(&lk, ct__job, &ran, NULL);
    } else {
        uint64_t end = st_now_ms() + f->ttl_ms + 5000u;
        *rc = ldl_lock_acquire(&lk);
        while (*rc == LDL_EINPROGRESS && st_now_ms() < end) {
            uint64_t t0 = st_now_ms(), d;
            c->pump(c->pctx, 5);                 /* the view's wait (at most 5 ms) + pump */
            d = st_now_ms() - t0;
            if (d > c->pump_max_ms) c->pump_max_ms = d;
            *rc = ldl_lock_poll(&lk);
            if (*rc != 1 && !ldl_lock_pending(&lk)) break;
        }
        if (ldl_lock_held(&lk)) {
            ct__job(NULL, &ran);
            (void)ldl_lock_release(&lk);
            end = st_now_ms() + 5000u;
            while (ldl_lock_pending(&lk) && st_now_ms() < end) { c->pump(c->pctx, 5); (void)ldl_lock_poll(&lk); }
        }
    }
    ldl_lock_dispose(&lk);
    if (c->is_async) c->pump(c->pctx, 0);
    return ran;
}

/* ------------------------------------------------------------ case bookkeeping */
static int ct__f0;
ST_FN void ct__begin(ct_fx *f, const char *name)
{
    (void)f;
    ct__f0 = st_failed();
    st_case(name, 120);
}
ST_FN void ct__end(ct_fx *f, const char *name)
{
    alarm(0);
    if (st_failed() == ct__f0) { f->passed++; printf("  ok   %-18s %s\n", name, f->view); }
    else { f->failed++; printf("  FAIL %-18s %s\n", name, f->view); }
    fflush(stdout);
}
ST_FN void ct__na(ct_fx *f, const char *name, const char *why)
{
    alarm(0);
    f->na++;
    printf("  n/a  %-18s %s: %s\n", name, f->view, why);
    fflush(stdout);
}
ST_FN void ct__key(ct_fx *f, char *buf, size_t n, const char *what)
{
    snprintf(buf, n, "ct-%s-%s", f->keys, what);
}

/* ------------------------------------------------------------ the cases */
ST_FN void ct_fence_rising(ct_fx *f)
{
    ldl_store *a = ct_store(&f->a), *b = ct_store(&f->b);
    char k1[64], k2[64];
    int64_t t[6] = { 0 }, u = 0;
    int i, rc;
    ct__key(f, k1, sizeof k1, "fence1");
    ct__key(f, k2, sizeof k2, "fence2");
    for (i = 0; i < 6; i++) {
        ldl_store *s = (i % 2) ? b : a;
        rc = s->acquire(s->ctx, k1, f->ttl_ms, &t[i]);
        ST_CHECK(rc == 1 && t[i] >= 1, "[%s %s] grant %d on %s = %d token %lld", f->adapter, f->view, i, k1, rc,
                 (long long)t[i]);
        if (i > 0) ST_CHECK(t[i] > t[i - 1], "[%s %s] fence %lld after %lld: not strictly rising", f->adapter,
                            f->view, (long long)t[i], (long long)t[i - 1]);
        ST_CHECK(s->release(s->ctx, k1, t[i]) == 1, "[%s %s] release grant %d", f->adapter, f->view, i);
    }
    /* another key has its own fence, and it is >= 1 too */
    rc = a->acquire(a->ctx, k2, f->ttl_ms, &u);
    ST_CHECK(rc == 1 && u >= 1, "[%s %s] grant on %s = %d token %lld", f->adapter, f->view, k2, rc, (long long)u);
    if (rc == 1) ST_CHECK(a->release(a->ctx, k2, u) == 1, "[%s %s] release %s", f->adapter, f->view, k2);
}

ST_FN void ct_second_holder(ct_fx *f)
{
    ldl_store *a = ct_store(&f->a), *b = ct_store(&f->b);
    char k[64];
    int64_t t = 0, t2 = 0, t3 = 0;
    int rc;
    ct__key(f, k, sizeof k, "second");
    ST_CHECK(a->acquire(a->ctx, k, f->ttl_ms, &t) == 1 && t >= 1, "[%s %s] a acquires", f->adapter, f->view);
    rc = b->acquire(b->ctx, k, f->ttl_ms, &t2);
    ST_CHECK(rc == 0 && t2 == 0, "[%s %s] b on a held key = %d token %lld, want 0 and no token", f->adapter,
             f->view, rc, (long long)t2);
    rc = a->acquire(a->ctx, k, f->ttl_ms, &t3);
    ST_CHECK(rc == 0 && t3 == 0, "[%s %s] the holder again = %d token %lld, want 0", f->adapter, f->view, rc,
             (long long)t3);
    ST_CHECK(a->release(a->ctx, k, t) == 1, "[%s %s] release", f->adapter, f->view);
}

ST_FN void ct_stale_renew(ct_fx *f)
{
    ldl_store *a = ct_store(&f->a), *b = ct_store(&f->b);
    char k[64];
    int64_t t1 = 0, t2 = 0;
    int rc;
    ct__key(f, k, sizeof k, "stale");
    ST_CHECK(a->acquire(a->ctx, k, f->ttl_ms, &t1) == 1, "[%s %s] a acquires", f->adapter, f->view);
    ST_CHECK(a->renew(a->ctx, k, t1, f->ttl_ms) == 1, "[%s %s] the holder's renew = 1", f->adapter, f->view);
    ST_CHECK(a->release(a->ctx, k, t1) == 1, "[%s %s] a releases", f->adapter, f->view);
    ST_CHECK(b->acquire(b->ctx, k, f->ttl_ms, &t2) == 1 && t2 > t1, "[%s %s] b takes it over", f->adapter, f->view);
    rc = a->renew(a->ctx, k, t1, f->ttl_ms);
    ST_CHECK(rc == 0, "[%s %s] renew by the stale token %lld = %d, want 0", f->adapter, f->view, (long long)t1, rc);
    rc = b->renew(b->ctx, k, t2, f->ttl_ms);
    ST_CHECK(rc == 1, "[%s %s] renew by the new holder = %d", f->adapter, f->view, rc);
    ST_CHECK(b->release(b->ctx, k, t2) == 1, "[%s %s] b releases", f->adapter, f->view);
    rc = b->renew(b->ctx, k, t2, f->ttl_ms);
    ST_CHECK(rc == 0, "[%s %s] renew after release = %d, want 0", f->adapter, f->view, rc);
}

ST_FN void ct_release_frees(ct_fx *f)
{
    ldl_store *a = ct_store(&f->a), *b = ct_store(&f->b);
    char k[64];
    int64_t t = 0, t2 = 0;
    int rc;
    ct__key(f, k, sizeof k, "release");
    ST_CHECK(a->acquire(a->ctx, k, f->ttl_ms, &t) == 1, "[%s %s] a acquires", f->adapter, f->view);
    rc = a->release(a->ctx, k, t);
    ST_CHECK(rc == 1, "[%s %s] release = %d", f->adapter, f->view, rc);
    rc = b->acquire(b->ctx, k, f->ttl_ms, &t2);
    ST_CHECK(rc == 1 && t2 > t, "[%s %s] b right after the release = %d token %lld", f->adapter, f->view, rc,
             (long long)t2);
    rc = a->release(a->ctx, k, t);
    ST_CHECK(rc == 0, "[%s %s] a second release of the same token = %d, want 0", f->adapter, f->view, rc);
    ST_CHECK(b->release(b->ctx, k, t2) == 1, "[%s %s] b releases", f->adapter, f->view);
}

ST_FN void ct_long_key(ct_fx *f)
{
    ldl_store *a = ct_store(&f->a), *b = ct_store(&f->b);
    char k[LDL_KEY_MAX];
    int64_t t = 0, t2 = 0;
    int rc, ran = 0, lrc = 0;
    memset(k, 'k', sizeof k);
    memcpy(k, f->keys, strlen(f->keys));
    k[LDL_KEY_MAX - 1] = '\0';
    rc = a->acquire(a->ctx, k, f->ttl_ms, &t);
    ST_CHECK(rc == 1 && t >= 1, "[%s %s] a %d-byte key = %d", f->adapter, f->view, LDL_KEY_MAX - 1, rc);
    rc = a->release(a->ctx, k, t);
    ST_CHECK(rc == 1, "[%s %s] its release = %d", f->adapter, f->view, rc);
    rc = b->acquire(b->ctx, k, f->ttl_ms, &t2);
    ST_CHECK(rc == 1 && t2 > t, "[%s %s] acquirable at once by the other client = %d", f->adapter, f->view, rc);
    if (rc == 1) ST_CHECK(b->release(b->ctx, k, t2) == 1, "[%s %s] released again", f->adapter, f->view);
    /* and through a lock (ldl-run -n's path): the job runs once */
    ran = ct_run_job(f, &f->a, k, &lrc);
    ST_CHECK(ran == 1, "[%s %s] a lock on the long key ran its job %d times (rc %d)", f->adapter, f->view, ran, lrc);
}

ST_FN const char *ct_inspect_readonly(ct_fx *f)
{
    char k[64];
    ldl_holder h;
    long n0, n1;
    int rc;
    ct__key(f, k, sizeof k, "never-taken");
    if (!f->a.ext.inspect) {
        if (f->is_async) return "this view's ldl_store_ext has no inspect (a blocking read); the sync view's is checked";
        ST_CHECK(0, "[%s %s] the synchronous view has no inspect", f->adapter, f->view);
        return NULL;
    }
    n0 = f->count(f);
    memset(&h, 0x5a, sizeof h);
    rc = ldl_store_inspect(&f->a.ext, k, &h);
    n1 = f->count(f);
    ST_CHECK(rc == 0 && h.token == 0, "[%s %s] inspect of a missing key = %d token %lld, want 0", f->adapter, f->view,
             rc, (long long)h.token);
    ST_CHECK(n0 >= 0 && n1 == n0, "[%s %s] records before inspect %ld, after %ld", f->adapter, f->view, n0, n1);
    return NULL;
}

ST_FN void ct_unproven_answer(ct_fx *f, ct_client *c)
{
    ldl_store *s;
    char k[64];
    int64_t t = 0;
    int rc, ran, lrc = 0;
    ct__key(f, k, sizeof k, "unproven");
    s = ct_store(c);
    rc = s->acquire(s->ctx, k, f->ttl_ms, &t);
    ST_CHECK(rc < 0 && rc != CT_NOANSWER, "[%s %s] an unproven grant = %d, want a store error", f->adapter, f->view, rc);
    ST_CHECK(t == 0 || rc != 1, "[%s %s] an unproven grant handed out token %lld", f->adapter, f->view, (long long)t);
    f->close(f, CT_FAKE_UNPROVEN, c);
    if (f->open(f, CT_FAKE_UNPROVEN, c, NULL) != NULL) { ST_CHECK(0, "reopen the fake"); return; }
    ran = ct_run_job(f, c, k, &lrc);
    ST_CHECK(ran == 0, "[%s %s] the job ran %d times on an unproven grant (rc %d)", f->adapter, f->view, ran, lrc);
}

/* the reply tree, in a child of its own (the RSS is that process's) */
typedef struct ct__tree_arg { ct_fx *f; } ct__tree_arg;
ST_FN int ct__tree_child(void *arg, int in, int out)
{
    ct_fx *f = ((ct__tree_arg *)arg)->f;
    ct_client c;
    ct_probe p;
    struct rusage u;
    long r[3];
    int64_t t = 0;
    ldl_store *s;
    (void)in;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    c.is_async = f->is_async;
    r[0] = CT_NOANSWER;
    if (f->open(f, CT_FAKE_TREE, &c, &p) == NULL) {
        s = ct_store(&c);
        r[0] = s->acquire(s->ctx, "ct-tree", f->ttl_ms, &t);
        r[1] = (long)t;
        f->close(f, CT_FAKE_TREE, &c);
    }
    getrusage(RUSAGE_SELF, &u);
    r[2] = u.ru_maxrss;
    return write(out, r, sizeof r) == (ssize_t)sizeof r ? 0 : 1;
}

ST_FN void ct_reply_bounded(ct_fx *f)
{
    st_child ch;
    ct__tree_arg a;
    long r[3] = { 0, 0, 0 };
    ssize_t got;
    a.f = f;
    if (st_fork(&ch, ct__tree_child, &a) != 0) { ST_CHECK(0, "fork"); return; }
    got = read(ch.from_child, r, sizeof r);
    ST_CHECK(st_join(&ch, 60000) == 0 && got == (ssize_t)sizeof r, "[%s %s] the tree child reports", f->adapter,
             f->view);
    printf("       reply tree, %s %s: rc %ld, ru_maxrss %ld KB\n", f->adapter, f->view, r[0], r[2]);
    ST_CHECK(r[0] < 0 && r[0] != CT_NOANSWER && r[1] == 0, "[%s %s] the tree = %ld token %ld, want a store error",
             f->adapter, f->view, r[0], r[1]);
    ST_CHECK(r[2] > 0 && r[2] < CT_RSS_MAX_KB, "[%s %s] RSS %ld KB, want under %ld", f->adapter, f->view, r[2],
             CT_RSS_MAX_KB);
}

ST_FN void ct_bounded_wait(ct_fx *f, ct_client *c)
{
    char k[64];
    uint64_t t0, ms;
    int64_t t = 0;
    int rc;
    ct__key(f, k, sizeof k, "frozen");
    if (!c->is_async) {
        t0 = st_now_ms();
        rc = c->s.acquire(c->s.ctx, k, f->ttl_ms, &t);
        ms = st_now_ms() - t0;
        printf("       frozen server, %s %s: acquire = %d after %llu ms (bound %u)\n", f->adapter, f->view, rc,
               (unsigned long long)ms, f->frozen_bound_ms);
        ST_CHECK(rc < 0, "[%s %s] acquire on a frozen server = %d, want a store error", f->adapter, f->view, rc);
        ST_CHECK(ms <= f->frozen_bound_ms, "[%s %s] it took %llu ms, bound %u", f->adapter, f->view,
                 (unsigned long long)ms, f->frozen_bound_ms);
    } else {
        int ran, lrc = 0;
        t0 = st_now_ms();
        c->pump_max_ms = 0;
        ran = ct_run_job(f, c, k, &lrc);
        ms = st_now_ms() - t0;
        printf("       frozen server, %s %s: the lock's acquire = %d after %llu ms (ttl %u), longest wait + pump "
               "%llu ms\n", f->adapter, f->view, lrc, (unsigned long long)ms, f->ttl_ms,
               (unsigned long long)c->pump_max_ms);
        ST_CHECK(c->pump_max_ms <= CT_PUMP_MAX_MS, "[%s %s] a wait + pump took %llu ms (at most %d: the view's wait "
                 "is 5 ms, a pump must not block)", f->adapter, f->view, (unsigned long long)c->pump_max_ms,
                 CT_PUMP_MAX_MS);
        ST_CHECK(ran == 0 && lrc != 1, "[%s %s] a lock on a frozen server ran %d (rc %d)", f->adapter, f->view, ran, lrc);
        ST_CHECK(ms <= (uint64_t)f->ttl_ms + 1000u, "[%s %s] the acquire took %llu ms, ttl %u", f->adapter, f->view,
                 (unsigned long long)ms, f->ttl_ms);
    }
}

ST_FN void ct_foreign(ct_fx *f, ct_client *c)
{
    int64_t t = 0;
    int rc;
    if (c->open_rc != LDL_OK) {
        ST_CHECK(c->open_rc < 0, "[%s %s] foreign storage: init = %d", f->adapter, f->view, c->open_rc);
        return;
    }
    if (c->is_async ? !c->as.acquire : !c->s.acquire) {
        ST_CHECK(0, "[%s %s] the storage was accepted (init answered LDL_OK)", f->adapter, f->view);
        return;
    }
    {
        ldl_store *s = ct_store(c);
        char k[64];
        ct__key(f, k, sizeof k, "foreign");
        rc = s->acquire(s->ctx, k, f->ttl_ms, &t);
        ST_CHECK(rc != 1 && t == 0, "[%s %s] acquire on foreign storage = %d token %lld, want refused", f->adapter,
                 f->view, rc, (long long)t);
    }
}

/* ------------------------------------------------------------ the body */
typedef void (*ct__special)(ct_fx *f, ct_client *c);

ST_FN void ct__with(ct_fx *f, const char *name, int which, ct__special fn)
{
    ct_client c;
    ct_probe p;
    const char *na;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    c.is_async = f->is_async;
    ct__begin(f, name);
    na = f->open(f, which, &c, &p);
    if (na) { ct__na(f, name, na); return; }
    if (c.open_rc == CT_NOANSWER) {
        ST_CHECK(0, "[%s %s] %s: the fixture could not set the case up", f->adapter, f->view, name);
        f->close(f, which, &c);
        ct__end(f, name);
        return;
    }
    if (which == CT_DURABILITY) {
        /* the one report of every view: LDL_SURVIVES_* bits, FAILOVER only with a standby that
           has every grant (the fixture's setup says how many: p.standbys) */
        p.bits = c.v.ops ? c.v.ops->durability(c.v.self, p.why, sizeof p.why) : LDL_EUNSUPPORTED;
        if (p.bits == LDL_EUNSUPPORTED) {
            char na[sizeof p.why + 64];
            snprintf(na, sizeof na, "the view has no durability report yet (%.900s)", p.why);
            f->close(f, which, &c);
            ct__na(f, name, na);
            return;
        }
        p.failover = p.bits > 0 && (p.bits & LDL_SURVIVES_FAILOVER) != 0;
        printf("       durability, %s %s: report %d (%s), promotable standbys %d\n", f->adapter, f->view, p.bits,
               p.why, p.standbys);
        ST_CHECK(p.failover == 0 || p.standbys > 0, "[%s %s] the report claims failover with no standby: %d %s",
                 f->adapter, f->view, p.bits, p.why);
        ST_CHECK(p.bits >= 0, "[%s %s] the report = %d (%s)", f->adapter, f->view, p.bits, p.why);
    } else {
        fn(f, &c);
        if (which == CT_MISSING)
            ST_CHECK(p.created == 0, "[%s %s] inspecting a missing store created it (%s)", f->adapter, f->view, p.why);
    }
    f->close(f, which, &c);
    ct__end(f, name);
}

#define CT__CASE(f, name, call) do { ct__begin(f, name); call; ct__end(f, name); } while (0)

ST_FN void ct_run_view(ct_fx *f)
{
    f->a.is_async = f->b.is_async = f->is_async;
    printf("%s, %s view:\n", f->adapter, f->view);
    CT__CASE(f, "fence_rising", ct_fence_rising(f));
    CT__CASE(f, "second_holder", ct_second_holder(f));
    CT__CASE(f, "stale_renew", ct_stale_renew(f));
    CT__CASE(f, "release_frees", ct_release_frees(f));
    CT__CASE(f, "long_key", ct_long_key(f));
    {
        const char *na;
        ct__begin(f, "inspect_readonly");
        na = ct_inspect_readonly(f);
        if (na) ct__na(f, "inspect_readonly", na); else ct__end(f, "inspect_readonly");
    }
    ct__with(f, "unproven_answer", CT_FAKE_UNPROVEN, ct_unproven_answer);
    {
        ct_client c;
        ct_probe p;
        const char *na;
        memset(&c, 0, sizeof c);
        memset(&p, 0, sizeof p);
        ct__begin(f, "reply_bounded");
        /* probe once for n/a in this process (no client kept); the child opens its own */
        na = f->open(f, -CT_FAKE_TREE, &c, &p);
        if (na) ct__na(f, "reply_bounded", na);
        else { ct_reply_bounded(f); ct__end(f, "reply_bounded"); }
    }
    ct__with(f, "bounded_wait", CT_FROZEN, ct_bounded_wait);
    ct__with(f, "missing_store", CT_MISSING, ct_foreign);
    ct__with(f, "foreign_storage", CT_FOREIGN, ct_foreign);
    ct__with(f, "durability_report", CT_DURABILITY, NULL);
}

/* the summary line; the exit status */
ST_FN int ct_report(const char *adapter, const ct_fx *const *views, int n)
{
    int i, p = 0, m = 0;
    for (i = 0; i < n; i++) { p += views[i]->passed; m += views[i]->failed; }
    fflush(stderr);
    printf("%s: %d passed, %d failed\n", adapter, p, m);
    fflush(stdout);
    return m ? 1 : 0;
}

#endif /* LDL_TESTS_STORE_CONTRACT_H */
