/* tests/store/conformance.h -- ONE store conformance body, run against every store
 * (MemoryStore, Redis, PostgreSQL). Test code, header-only, uses tests/store/fenced.h.
 *
 * HOW TO USE
 *   #define _POSIX_C_SOURCE 200809L
 *   #define LITE_DI_LOCK_IMPLEMENTATION      (in exactly one .c, as usual)
 *   #include "lite_di_lock.h"
 *   #include "tests/store/conformance.h"
 *
 *   conf_env e;  memset(&e, 0, sizeof e);
 *   e.name     = "redis";
 *   e.a        = <ldl_store view of client A>;   two clients of ONE store, so "b cannot
 *   e.b        = <ldl_store view of client B>;   take what a holds" is a real contention test
 *   e.ttl_ms   = 300;                            short; the body sleeps ~10 x ttl in total
 *   e.sleep_ms = fn;  e.ctx = ...;               lets time pass: nanosleep for a server, a
 *                                                fake-clock advance for MemoryStore
 *   e.clock    = <the clock the store runs on>;  given to every ldl_lock the body makes;
 *                                                zero = built-in monotonic (real servers)
 *   e.tokens_per_key = 1;                        1 when tokens rise per key only (Redis, PG);
 *                                                0 when one counter spans all keys (MemoryStore)
 *   conf_run(&e);                                counts through ST_CHECK; then st_report()
 *
 *   The store must be EMPTY (no key the body uses may exist): the body uses fixed keys,
 *   because "the exact key round-trips" cannot be tested with a prefix glued on.
 *
 * WHAT IT PROVES (store level, then through the real ldl_lock lifecycle)
 *   grant / contention / not re-entrant, token in [1, INT64_MAX]; renew by the holder yes,
 *   by a wrong token no; release by a wrong token no and the key stays held; release yes
 *   then a second release no; stale renew/release after release no; re-acquire gives a
 *   higher token; renew really extends the lease; expiry steal with a higher token and the
 *   old holder's renew/release refused; awkward keys (quotes, spaces, braces, ";--", SQL,
 *   UTF-8, LDL_KEY_MAX-1 bytes and neighbours differing only in the last byte) are all
 *   independent and round-trip exactly; ldl_lock acquire/tick/release/run, LEASE_EXPIRED
 *   after a pause, HEARTBEAT_FAILED when the store forgot the lease.
 */
#ifndef LDL_TESTS_STORE_CONFORMANCE_H
#define LDL_TESTS_STORE_CONFORMANCE_H

#include "fenced.h"

typedef struct conf_env {
    const char *name;
    ldl_store   a, b;
    uint32_t    ttl_ms;
    void      (*sleep_ms)(void *ctx, uint32_t ms);
    void       *ctx;
    ldl_clock   clock;
    int         tokens_per_key;
} conf_env;

/* the sleep_ms hook for a real server: time passes for real */
static ST__UNUSED void conf_real_sleep(void *ctx, uint32_t ms) { (void)ctx; st_sleep_ms(ms); }

/* ------------------------------------------------------------ a tiny test container */
/* Enough of ldl_container for run(): scopes with a few bindings, counted. */
typedef struct conf__binding { const char *name; void *value; } conf__binding;
typedef struct conf__scope {
    int used;
    int nbind;
    conf__binding bind[4];
} conf__scope;
typedef struct conf__box {
    conf__scope scopes[2];
    int live;
    int shutdowns;
} conf__box;

static void *conf__scope_new(void *self)
{
    conf__box *b = (conf__box *)self;
    int i;
    for (i = 0; i < 2; i++) {
        if (!b->scopes[i].used) {
            memset(&b->scopes[i], 0, sizeof b->scopes[i]);
            b->scopes[i].used = 1;
            b->live++;
            return &b->scopes[i];
        }
    }
    return NULL;
}
static int conf__value(void *scope, const char *name, void *value)
{
    conf__scope *s = (conf__scope *)scope;
    if (!s || s->nbind >= 4) return -1;
    s->bind[s->nbind].name = name;
    s->bind[s->nbind].value = value;
    s->nbind++;
    return 0;
}
static int conf__shutdown(void *scope)
{
    conf__scope *s = (conf__scope *)scope;
    if (!s || !s->used) return -1;
    s->used = 0;
    return 0;
}
static void *conf__lookup(void *scope, const char *name)
{
    conf__scope *s = (conf__scope *)scope;
    int i;
    for (i = 0; i < s->nbind; i++)
        if (strcmp(s->bind[i].name, name) == 0) return s->bind[i].value;
    return NULL;
}
static ldl_container conf__container(conf__box *box)
{
    ldl_container c;
    memset(&c, 0, sizeof c);
    memset(box, 0, sizeof *box);
    c.scope = conf__scope_new;
    c.value = conf__value;
    c.shutdown = conf__shutdown;
    c.self = box;
    return c;
}

typedef struct conf__lost { int calls; int reason; } conf__lost;
static void conf__on_lost(void *user, int reason)
{
    conf__lost *l = (conf__lost *)user;
    l->calls++;
    l->reason = reason;
}

static int conf__lock(ldl_lock *lk, const conf_env *e, const ldl_store *st, const char *key,
                      conf__box *box, conf__lost *lost)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    memset(lost, 0, sizeof *lost);
    d.container = conf__container(box);
    d.key = key;
    d.ttl_ms = e->ttl_ms;
    d.store = st;
    d.clock = e->clock;
    d.on_lost = conf__on_lost;
    d.user = lost;
    return ldl_lock_init(lk, &d);
}

/* ------------------------------------------------------------ store-level checks */
#define CONF__SENTINEL ((int64_t)-777)

static int64_t conf__grant(const conf_env *e, const ldl_store *s, const char *key, const char *what)
{
    int64_t t = CONF__SENTINEL;
    int rc = s->acquire(s->ctx, key, e->ttl_ms, &t);
    ST_CHECK(rc == 1, "[%s] %s: acquire(\"%s\") = %d, want 1", e->name, what, key, rc);
    ST_CHECK(rc == 1 && t >= 1 && t <= INT64_MAX, "[%s] %s: token %lld out of [1, INT64_MAX]",
             e->name, what, (long long)t);
    return rc == 1 ? t : 0;
}

static void conf__refused(const conf_env *e, const ldl_store *s, const char *key, const char *what)
{
    int64_t t = CONF__SENTINEL;
    int rc = s->acquire(s->ctx, key, e->ttl_ms, &t);
    ST_CHECK(rc == 0, "[%s] %s: acquire(\"%s\") = %d, want 0", e->name, what, key, rc);
    ST_CHECK(t == CONF__SENTINEL || t == 0,
             "[%s] %s: a refused acquire wrote token %lld", e->name, what, (long long)t);
}

static void conf_basic(const conf_env *e)
{
    const ldl_store *a = &e->a, *b = &e->b;
    const char *k = "conf-basic";
    int64_t t1, t2;
    int rc;

    t1 = conf__grant(e, a, k, "basic grant");
    conf__refused(e, b, k, "contention (other client)");
    conf__refused(e, a, k, "not re-entrant (same client)");

    rc = a->renew(a->ctx, k, t1, e->ttl_ms);
    ST_CHECK(rc == 1, "[%s] renew by holder = %d, want 1", e->name, rc);
    rc = b->renew(b->ctx, k, t1 + 1, e->ttl_ms);
    ST_CHECK(rc == 0, "[%s] renew with a wrong token = %d, want 0", e->name, rc);
    rc = b->release(b->ctx, k, t1 + 1);
    ST_CHECK(rc == 0, "[%s] release with a wrong token = %d, want 0", e->name, rc);
    conf__refused(e, b, k, "still held after a wrong release");
    rc = b->renew(b->ctx, "conf-basic-other", t1, e->ttl_ms);
    ST_CHECK(rc == 0, "[%s] renew of a key never acquired = %d, want 0", e->name, rc);

    rc = a->release(a->ctx, k, t1);
    ST_CHECK(rc == 1, "[%s] release by holder = %d, want 1", e->name, rc);
    rc = a->release(a->ctx, k, t1);
    ST_CHECK(rc == 0, "[%s] second release of the same token = %d, want 0", e->name, rc);
    rc = a->renew(a->ctx, k, t1, e->ttl_ms);
    ST_CHECK(rc == 0, "[%s] stale renew after release = %d, want 0", e->name, rc);

    t2 = conf__grant(e, b, k, "re-acquire after release");
    ST_CHECK(t2 > t1, "[%s] re-acquire token %lld not above %lld", e->name, (long long)t2, (long long)t1);
    rc = a->release(a->ctx, k, t1);
    ST_CHECK(rc == 0, "[%s] stale release while another holds = %d, want 0", e->name, rc);
    rc = a->renew(a->ctx, k, t1, e->ttl_ms);
    ST_CHECK(rc == 0, "[%s] stale renew while another holds = %d, want 0", e->name, rc);
    conf__refused(e, a, k, "stale release did not free the key");
    rc = b->release(b->ctx, k, t2);
    ST_CHECK(rc == 1, "[%s] release of the re-acquired lease = %d, want 1", e->name, rc);
}

static void conf_expiry(const conf_env *e)
{
    const ldl_store *a = &e->a, *b = &e->b;
    const char *k = "conf-expiry";
    uint32_t ttl = e->ttl_ms, part = ttl * 6 / 10;
    int64_t t1, t2;
    int rc;

    /* renew really extends: 0.6 ttl, renew, 0.6 ttl -> 1.2 ttl after the grant, still held */
    t1 = conf__grant(e, a, k, "expiry grant");
    e->sleep_ms(e->ctx, part);
    rc = a->renew(a->ctx, k, t1, ttl);
    ST_CHECK(rc == 1, "[%s] renew at 0.6 ttl = %d, want 1", e->name, rc);
    e->sleep_ms(e->ctx, part);
    conf__refused(e, b, k, "renewed lease still held at 1.2 ttl");

    /* let it run out: steal with a higher token, the old holder is refused */
    e->sleep_ms(e->ctx, ttl / 2 + 20);
    t2 = conf__grant(e, b, k, "expiry steal");
    ST_CHECK(t2 > t1, "[%s] steal token %lld not above %lld", e->name, (long long)t2, (long long)t1);
    rc = a->renew(a->ctx, k, t1, ttl);
    ST_CHECK(rc == 0, "[%s] renew by the expired holder = %d, want 0", e->name, rc);
    rc = a->release(a->ctx, k, t1);
    ST_CHECK(rc == 0, "[%s] release by the expired holder = %d, want 0", e->name, rc);
    rc = b->renew(b->ctx, k, t2, ttl);
    ST_CHECK(rc == 1, "[%s] renew by the new holder = %d, want 1", e->name, rc);
    rc = b->release(b->ctx, k, t2);
    ST_CHECK(rc == 1, "[%s] release by the new holder = %d, want 1", e->name, rc);
}

#define CONF__NKEYS 16
static void conf_keys(const conf_env *e)
{
    static char maxa[LDL_KEY_MAX], maxb[LDL_KEY_MAX], maxu[LDL_KEY_MAX];
    const char *keys[CONF__NKEYS];
    int64_t tok[CONF__NKEYS];
    const ldl_store *a = &e->a, *b = &e->b;
    int i, j, n = 0, rc;

    /* LDL_KEY_MAX-1 bytes: two that differ only in the last byte, one ending in UTF-8 */
    memset(maxa, 'k', LDL_KEY_MAX - 1); maxa[LDL_KEY_MAX - 1] = 0;
    memcpy(maxb, maxa, sizeof maxb); maxb[LDL_KEY_MAX - 2] = 'z';
    memcpy(maxu, maxa, sizeof maxu);
    memcpy(maxu + LDL_KEY_MAX - 4, "\xc3\xa9" "e", 3); /* ...k e-acute e: still KEY_MAX-1 bytes */

    keys[n++] = "a";
    keys[n++] = "a b";            /* a store that cuts at the space collides with "a" */
    keys[n++] = "it's";
    keys[n++] = "\"dq\"";
    keys[n++] = "{br}";
    keys[n++] = "br";              /* a store that strips braces collides with "{br}" */
    keys[n++] = "}{x";
    keys[n++] = "a;--";
    keys[n++] = "'; DROP TABLE ldl_lease;--";
    keys[n++] = "%s%n\\";
    keys[n++] = "na\xc3\xafve-\xe6\x97\xa5\xe6\x9c\xac";    /* naive with i-diaeresis, "nihon" */
    keys[n++] = "na\xc3\xafve";
    keys[n++] = maxa;
    keys[n++] = maxb;
    keys[n++] = maxu;
    keys[n++] = "conf basic";      /* not "conf-basic" */

    for (i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "awkward key #%d", i);
        ST_CHECK(strlen(keys[i]) < LDL_KEY_MAX, "key #%d too long", i);
        tok[i] = conf__grant(e, a, keys[i], what);
    }
    /* independent: every one is held now (none was confused with another) */
    for (i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "awkward key #%d held", i);
        conf__refused(e, b, keys[i], what);
        if (!e->tokens_per_key)
            for (j = 0; j < i; j++)
                ST_CHECK(tok[i] != tok[j], "[%s] keys #%d and #%d share token %lld", e->name, i, j,
                         (long long)tok[i]);
    }
    /* round-trip: each renews and releases with its own token, exactly once */
    for (i = 0; i < n; i++) {
        rc = a->renew(a->ctx, keys[i], tok[i], e->ttl_ms);
        ST_CHECK(rc == 1, "[%s] renew awkward key #%d = %d, want 1", e->name, i, rc);
    }
    for (i = 0; i < n; i += 2) {   /* release every other one: the neighbours stay held */
        rc = a->release(a->ctx, keys[i], tok[i]);
        ST_CHECK(rc == 1, "[%s] release awkward key #%d = %d, want 1", e->name, i, rc);
    }
    for (i = 1; i < n; i += 2) {
        char what[64];
        snprintf(what, sizeof what, "awkward key #%d held after neighbour released", i);
        conf__refused(e, b, keys[i], what);
        rc = a->release(a->ctx, keys[i], tok[i]);
        ST_CHECK(rc == 1, "[%s] release awkward key #%d = %d, want 1", e->name, i, rc);
    }
    for (i = 0; i < n; i++) {
        int64_t t2;
        char what[64];
        snprintf(what, sizeof what, "awkward key #%d re-acquire", i);
        t2 = conf__grant(e, b, keys[i], what);
        ST_CHECK(t2 > tok[i], "[%s] key #%d re-acquire token %lld not above %lld", e->name, i,
                 (long long)t2, (long long)tok[i]);
        rc = b->release(b->ctx, keys[i], t2);
        ST_CHECK(rc == 1, "[%s] release awkward key #%d again = %d", e->name, i, rc);
    }
}

/* ------------------------------------------------------------ through ldl_lock */
static int conf__body_rc;
static int conf__body(void *scope, void *user)
{
    ldl_lock *lk = (ldl_lock *)user;
    int64_t *fence = (int64_t *)conf__lookup(scope, "lock:fence");
    void *holder = conf__lookup(scope, "lock:holder");
    conf__body_rc = (fence && *fence == ldl_lock_fencing_token(lk) && *fence >= 1 && holder == lk) ? 0 : 1;
    return conf__body_rc;
}

static void conf_lifecycle(const conf_env *e)
{
    ldl_lock l1, l2;
    conf__box box1, box2;
    conf__lost lost1, lost2;
    const char *k = "conf-lifecycle";
    int64_t f1, f2, f3;
    int rc;

    ST_CHECK(conf__lock(&l1, e, &e->a, k, &box1, &lost1) == LDL_OK, "[%s] lock init 1", e->name);
    ST_CHECK(conf__lock(&l2, e, &e->b, k, &box2, &lost2) == LDL_OK, "[%s] lock init 2", e->name);

    rc = ldl_lock_acquire(&l1);
    ST_CHECK(rc == 1 && ldl_lock_held(&l1), "[%s] lock1 acquire = %d", e->name, rc);
    f1 = ldl_lock_fencing_token(&l1);
    ST_CHECK(f1 >= 1, "[%s] lock1 token %lld", e->name, (long long)f1);
    rc = ldl_lock_acquire(&l2);
    ST_CHECK(rc == 0 && ldl_lock_state(&l2) == LDL_IDLE && ldl_lock_fencing_token(&l2) == 0,
             "[%s] lock2 acquire while held = %d state %d", e->name, rc, ldl_lock_state(&l2));
    rc = ldl_lock_tick(&l1);
    ST_CHECK(rc == 1 && ldl_lock_held(&l1), "[%s] lock1 tick = %d", e->name, rc);
    ST_CHECK(ldl_lock_fencing_token(&l1) == f1, "[%s] tick changed the token", e->name);
    rc = ldl_lock_release(&l1);
    ST_CHECK(rc == 1 && ldl_lock_state(&l1) == LDL_RELEASED, "[%s] lock1 release = %d", e->name, rc);
    ST_CHECK(ldl_lock_reason(&l1) == LDL_REASON_RELEASED, "[%s] reason %d", e->name, ldl_lock_reason(&l1));

    rc = ldl_lock_acquire(&l2);
    f2 = ldl_lock_fencing_token(&l2);
    ST_CHECK(rc == 1 && f2 > f1, "[%s] lock2 acquire after release = %d token %lld (prev %lld)",
             e->name, rc, (long long)f2, (long long)f1);
    rc = ldl_lock_acquire(&l1);
    ST_CHECK(rc == 0, "[%s] lock1 re-acquire while lock2 holds = %d", e->name, rc);

    /* a pause longer than the TTL: lock2 itself says LEASE_EXPIRED, lock1 takes over higher */
    e->sleep_ms(e->ctx, e->ttl_ms + e->ttl_ms / 2);
    rc = ldl_lock_poll(&l2);
    ST_CHECK(rc == 0 && ldl_lock_state(&l2) == LDL_LOST, "[%s] poll after pause = %d state %d",
             e->name, rc, ldl_lock_state(&l2));
    ST_CHECK(ldl_lock_reason(&l2) == LDL_REASON_LEASE_EXPIRED, "[%s] reason %s, want LEASE_EXPIRED",
             e->name, ldl_reason_name(ldl_lock_reason(&l2)));
    ST_CHECK(lost2.calls == 1 && lost2.reason == LDL_REASON_LEASE_EXPIRED,
             "[%s] on_lost calls %d reason %d", e->name, lost2.calls, lost2.reason);
    rc = ldl_lock_acquire(&l1);
    f3 = ldl_lock_fencing_token(&l1);
    ST_CHECK(rc == 1 && f3 > f2, "[%s] takeover after expiry = %d token %lld (prev %lld)", e->name,
             rc, (long long)f3, (long long)f2);
    rc = ldl_lock_release(&l2);
    ST_CHECK(rc == 0 && ldl_lock_state(&l2) == LDL_RELEASED, "[%s] release of the lost lock = %d",
             e->name, rc);
    ST_CHECK(ldl_lock_reason(&l2) == LDL_REASON_LEASE_EXPIRED, "[%s] loss reason kept: %s", e->name,
             ldl_reason_name(ldl_lock_reason(&l2)));
    ST_CHECK(ldl_lock_held(&l1), "[%s] lock2's stale release did not free lock1's lease", e->name);
    conf__refused(e, &e->b, k, "still held by lock1");

    /* the store forgot the lease (released under it): the next heartbeat says HEARTBEAT_FAILED */
    rc = e->b.release(e->b.ctx, k, f3);
    ST_CHECK(rc == 1, "[%s] release of lock1's lease by token = %d", e->name, rc);
    rc = ldl_lock_tick(&l1);
    ST_CHECK(rc == 0 && ldl_lock_state(&l1) == LDL_LOST, "[%s] tick after the lease vanished = %d",
             e->name, rc);
    ST_CHECK(ldl_lock_reason(&l1) == LDL_REASON_HEARTBEAT_FAILED, "[%s] reason %s, want HEARTBEAT_FAILED",
             e->name, ldl_reason_name(ldl_lock_reason(&l1)));
    ST_CHECK(lost1.calls == 1, "[%s] on_lost calls %d", e->name, lost1.calls);
    ldl_lock_dispose(&l1);
    ldl_lock_dispose(&l2);

    /* run(): the body sees the fence and the holder, everything is released after */
    {
        ldl_lock l3;
        conf__box box3;
        conf__lost lost3;
        ldl_run_result res;
        memset(&res, 0, sizeof res);
        ST_CHECK(conf__lock(&l3, e, &e->a, k, &box3, &lost3) == LDL_OK, "[%s] lock init 3", e->name);
        conf__body_rc = -1;
        rc = ldl_lock_run(&l3, conf__body, &l3, &res);
        ST_CHECK(rc == LDL_OK && conf__body_rc == 0, "[%s] run = %d (%s) body %d", e->name, rc,
                 ldl_strerror(rc), conf__body_rc);
        ST_CHECK(res.release_rc == 1 && res.shutdown_rc == 0 && res.lost_reason == 0,
                 "[%s] run legs release %d shutdown %d lost %d", e->name, res.release_rc,
                 res.shutdown_rc, res.lost_reason);
        ST_CHECK(box3.live == 1 && !box3.scopes[0].used && !box3.scopes[1].used,
                 "[%s] run left a child scope open", e->name);
        {
            int64_t t = conf__grant(e, &e->b, k, "free after run");
            ST_CHECK(t > f3, "[%s] token after run %lld not above %lld", e->name, (long long)t, (long long)f3);
            ST_CHECK(e->b.release(e->b.ctx, k, t) == 1, "[%s] release after run", e->name);
        }
        ldl_lock_dispose(&l3);
    }
}

ST_FN void conf_run(const conf_env *e)
{
    uint64_t t0 = st_now_ms();
    int before = st_failed();
    conf_basic(e);
    conf_expiry(e);
    conf_keys(e);
    conf_lifecycle(e);
    fprintf(stderr, "conformance [%s]: %s (%d failures, %llu ms)\n", e->name,
            st_failed() == before ? "ok" : "FAILED", st_failed() - before,
            (unsigned long long)(st_now_ms() - t0));
}

#endif /* LDL_TESTS_STORE_CONFORMANCE_H */
