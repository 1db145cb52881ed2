/* main.c - the core suite: implementation, runner, fakes, suite list, and the
   two passes (sync, then async: see harness.h). */
#define LITE_DI_LOCK_IMPLEMENTATION
#define CHECK_IMPLEMENTATION
#include "harness.h"

/* ------------------------------------------------------------ runner */
int t_async;
static int t_skipped_modes;

void t_run(const char *name, void (*fn)(void)) {
    chk_begin(name);
    ev_reset();
    lost_calls = 0;
    lost_last_reason = -1;
    fn();
    (void)chk_end();
}

void t_skip(const char *why) { (void)why; chk_skip(); }

int t_skip_mode(int timer_mode) {
    if (!timer_mode || !t_async) return 0;
    t_skipped_modes++;
    return 1;
}

/* ------------------------------------------------------------ event log */
static char ev_buf[4096];
static size_t ev_len;
void ev(const char *what) {
    size_t n = strlen(what);
    if (ev_len + n + 2 >= sizeof ev_buf) return;
    memcpy(ev_buf + ev_len, what, n);
    ev_len += n;
    ev_buf[ev_len++] = ';';
    ev_buf[ev_len] = 0;
}
void ev_reset(void) { ev_len = 0; ev_buf[0] = 0; }
const char *ev_log(void) { return ev_buf; }

/* ------------------------------------------------------------ clock */
uint64_t fake_now(void *ctx) { return ((fake_clock *)ctx)->now; }
ldl_clock fake_clock_of(fake_clock *c) { ldl_clock k; k.now_ms = fake_now; k.ctx = c; return k; }

/* ------------------------------------------------------------ timers */
static uintptr_t ft_set(void *ctx, void (*fire)(void *), void *arg, uint32_t delay) {
    fake_timers *ft = (fake_timers *)ctx;
    int i;
    ft->set_calls++;
    ft->last_delay = delay;
    ev("set");
    if (ft->fail_next) { ft->fail_next--; return 0; }
    for (i = 0; i < FT_MAX; i++) {
        if (!ft->t[i].live) {
            ft->t[i].h = ++ft->next;
            ft->t[i].fire = fire; ft->t[i].arg = arg; ft->t[i].live = 1;
            return ft->t[i].h;
        }
    }
    return 0;
}
static void ft_clear(void *ctx, uintptr_t h) {
    fake_timers *ft = (fake_timers *)ctx;
    int i;
    ft->clear_calls++;
    ev("clear");
    for (i = 0; i < FT_MAX; i++) if (ft->t[i].live && ft->t[i].h == h) ft->t[i].live = 0;
}
ldl_timers fake_timers_of(fake_timers *ft) {
    ldl_timers t; t.set_timeout = ft_set; t.clear_timeout = ft_clear; t.ctx = ft; return t;
}
int fake_timers_armed(const fake_timers *ft) {
    int i, n = 0;
    for (i = 0; i < FT_MAX; i++) n += ft->t[i].live;
    return n;
}
int fake_timers_fire(fake_timers *ft) {
    int i, n = 0;
    uintptr_t upto = ft->next;     /* only timers armed before this call */
    for (i = 0; i < FT_MAX; i++) {
        if (ft->t[i].live && ft->t[i].h <= upto) {
            ft->t[i].live = 0;       /* one-shot: spent before it runs */
            ev("fire");
            ft->t[i].fire(ft->t[i].arg);
            n++;
        }
    }
    return n;
}

/* ------------------------------------------------------------ scripted store */
static void st_tick_clock(script_store *s) { if (s->clock) s->clock->now += s->call_ms; }
static void st_hook(script_store *s, store_hook *h) {
    store_hook f = *h;
    if (!f) return;
    if (s->hook_once) *h = NULL;
    f(s);
}
static int st_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *out) {
    script_store *s = (script_store *)ctx;
    s->acquire_calls++;
    ev("acquire");
    strncpy(s->last_key, key, LDL_KEY_MAX - 1);
    s->last_key[LDL_KEY_MAX - 1] = 0;
    s->last_ttl = ttl;
    st_tick_clock(s);
    if (s->write_token) { *out = s->acquire_token; if (s->auto_token) s->acquire_token++; }
    st_hook(s, &s->on_acquire);
    return s->acquire_rc;
}
static int st_renew(void *ctx, const char *key, int64_t token, uint32_t ttl) {
    script_store *s = (script_store *)ctx;
    (void)key;
    if (s->renew_calls < 32) s->renewed[s->renew_calls] = token;
    s->renew_calls++;
    s->last_ttl = ttl;
    ev("renew");
    st_tick_clock(s);
    st_hook(s, &s->on_renew);
    return s->renew_rc;
}
static int st_release(void *ctx, const char *key, int64_t token) {
    script_store *s = (script_store *)ctx;
    (void)key;
    if (s->release_calls < 32) s->released[s->release_calls] = token;
    s->release_calls++;
    ev("release");
    st_hook(s, &s->on_release);
    return s->release_rc;
}
void script_init(script_store *s) {
    memset(s, 0, sizeof *s);
    s->acquire_rc = 1; s->write_token = 1; s->acquire_token = 1; s->auto_token = 1;
    s->renew_rc = 1; s->release_rc = 1; s->hook_once = 1;
}
ldl_store script_of(script_store *s) {
    ldl_store st; st.acquire = st_acquire; st.renew = st_renew; st.release = st_release; st.ctx = s; return st;
}

#ifndef LDL_NO_ASYNC
/* the non-blocking view of the scripted store. op->store_data points at the
   submit's frame while the scripted method runs (saved and restored, so a
   nested submit on the same op cannot lose it); cancel marks that frame. */
typedef struct sa_frame { int cancelled; } sa_frame;
static int sa_submits, sa_cancels;
static uintptr_t sa_enter(ldl_op *op, sa_frame *f) {
    uintptr_t prev = op->store_data;
    f->cancelled = 0;
    op->store_data = (uintptr_t)f;
    sa_submits++;
    return prev;
}
static int sa_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl) {
    sa_frame f;
    uintptr_t prev = sa_enter(op, &f);
    int64_t tok = 0;
    int rc = st_acquire(ctx, key, ttl, &tok);
    op->store_data = prev;
    if (!f.cancelled) ldl_op_complete(op, rc, tok);
    else if (tok >= 1) (void)st_release(ctx, key, tok);   /* the store owns a cancelled grant */
    return LDL_OK;
}
static int sa_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl) {
    sa_frame f;
    uintptr_t prev = sa_enter(op, &f);
    int rc = st_renew(ctx, key, token, ttl);
    op->store_data = prev;
    if (!f.cancelled) ldl_op_complete(op, rc, 0);
    return LDL_OK;
}
static int sa_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    sa_frame f;
    uintptr_t prev = sa_enter(op, &f);
    int rc = st_release(ctx, key, token);
    op->store_data = prev;
    if (!f.cancelled) ldl_op_complete(op, rc, 0);
    return LDL_OK;
}
static void sa_cancel(void *ctx, ldl_op *op) {
    (void)ctx;
    sa_cancels++;
    if (op->store_data) ((sa_frame *)op->store_data)->cancelled = 1;   /* else: already answered */
}
ldl_async_store script_async_of(script_store *s) {
    ldl_async_store st;
    st.acquire = sa_acquire; st.renew = sa_renew; st.release = sa_release; st.cancel = sa_cancel;
    st.ctx = s;
    return st;
}
#endif /* LDL_NO_ASYNC */

/* ------------------------------------------------------------ fake container */
static void *fc_scope(void *self) {
    fake_container *fc = (fake_container *)self;
    fc->scope_calls++;
    ev("scope");
    if (fc->fail_scope) return NULL;
    return ldl_scope_child(&fc->root);
}
static int fc_value(void *scope, const char *name, void *value) {
    fake_container *fc = (fake_container *)((ldl_scope *)scope)->_root;   /* root is first member */
    fc->value_calls++;
    ev("value");
    if (fc->fail_value_at && fc->value_calls == fc->fail_value_at) return -1;
    return ldl_scope_value((ldl_scope *)scope, name, value);
}
static int fc_shutdown(void *scope) {
    fake_container *fc = (fake_container *)((ldl_scope *)scope)->_root;
    fc->shutdown_calls++;
    ev("shutdown");
    if (ldl_scope_shutdown((ldl_scope *)scope) != 0) return -99;
    return fc->shutdown_rc;
}
static int fc_singleton(void *self, const char *name, void *(*f)(void *), void *arg) {
    return ldl_scope_singleton(&((fake_container *)self)->root, name, f, arg);
}
static int fc_teardown(void *self, const char *name, void (*fn)(void *), void *arg) {
    return ldl_scope_on_teardown(&((fake_container *)self)->root, name, fn, arg);
}
ldl_container fake_container_of(fake_container *fc) {
    ldl_container c;
    memset(fc, 0, sizeof *fc);
    ldl_scope_init(&fc->root, fc->pool, 4);
    c.scope = fc_scope; c.value = fc_value; c.shutdown = fc_shutdown;
    c.singleton_factory = fc_singleton; c.on_teardown = fc_teardown;
    c.self = fc;
    return c;
}

int lost_calls, lost_last_reason;
void count_lost(void *user, int reason) {
    (void)user;
    lost_calls++;
    lost_last_reason = reason;
    ev("on_lost");
}

/* the store structs are copied at init, so a rotating buffer is fine */
static ldl_store desc_store_storage[64];
static int desc_store_n, ms_async_locks;
#ifndef LDL_NO_ASYNC
static ldl_async_store desc_astore_storage[64];
#define DESC_ASYNC(x) , x
#else
#define DESC_ASYNC(x)                  /* one pass: sync stores only */
#endif
static void desc_use(ldl_lock_desc *d, ldl_store st DESC_ASYNC(ldl_async_store ast)) {
    int i = desc_store_n++ % 64;
    d->store = NULL;
    d->async_store = NULL;
#ifndef LDL_NO_ASYNC
    if (t_async) { desc_astore_storage[i] = ast; d->async_store = &desc_astore_storage[i]; return; }
#endif
    desc_store_storage[i] = st; d->store = &desc_store_storage[i];
}
void desc_use_script(ldl_lock_desc *d, script_store *s) {
    desc_use(d, script_of(s) DESC_ASYNC(script_async_of(s)));
}
void desc_use_memstore(ldl_lock_desc *d, ldl_memstore *ms) {
    ms_async_locks += t_async;
    desc_use(d, ldl_memstore_store(ms) DESC_ASYNC(ldl_memstore_async_store(ms)));
}

void desc_for(ldl_lock_desc *d, fake_container *fc, script_store *s, fake_clock *c, const char *key, uint32_t ttl) {
    memset(d, 0, sizeof *d);
    d->container = fake_container_of(fc);
    d->key = key;
    d->ttl_ms = ttl;
    if (s) desc_use_script(d, s);
    if (c) d->clock = fake_clock_of(c);
    d->on_lost = count_lost;
}

void fix_setup(fix *f, const char *key, int timers, uint64_t now) {
    memset(f, 0, sizeof *f);
    script_init(&f->s);
    desc_for(&f->d, &f->fc, &f->s, &f->c, key, 300);
    if (timers) f->d.timers = fake_timers_of(&f->ft);
    f->c.now = now;
    CHECK_EQ(ldl_lock_init(&f->l, &f->d), LDL_OK);
    f->s.lock = &f->l;
}

/* ------------------------------------------------------------ gms */
void gms_init(gms *g, size_t n) {
    memset(g, 0, sizeof *g);
    g->c.now = 1000;
    CHECK_EQ(ldl_memstore_init(&g->ms, g->slots, n, fake_clock_of(&g->c)), LDL_OK);
    g->st = ldl_memstore_store(&g->ms);
}
int gacq(gms *g, const char *k, int64_t *tok) { *tok = 0; return g->st.acquire(g->st.ctx, k, 100, tok); }
int gren(gms *g, const char *k, int64_t tok) { return g->st.renew(g->st.ctx, k, tok, 100); }
int grel(gms *g, const char *k, int64_t tok) { return g->st.release(g->st.ctx, k, tok); }
int gslot_of(const gms *g, const char *k) {   /* white-box: the slots are caller storage */
    size_t i;
    for (i = 0; i < g->ms._n; i++)
        if (g->slots[i]._token != 0 && strcmp(g->slots[i]._key, k) == 0) return (int)i;
    return -1;
}

int nop_body(void *scope, void *user) { (void)scope; (void)user; return 0; }

static void all_suites(void) {
    suite_options();
    suite_whitelist();
    suite_lifecycle();
    suite_heartbeat();
    suite_run();
    suite_memstore();
    suite_container();
    suite_reentry();
    suite_misc();
#ifndef LDL_NO_ASYNC
    suite_async_acquire();
    suite_async_renew();
    suite_async_release();
    suite_async_dispose();
    suite_async_slot();
    suite_async_reentry();
    suite_async_memstore();
    suite_async_walk();
#endif
    suite_election();
}

/* Each pass prints what ran; the last line counts the tests of both passes.
   With LDL_NO_ASYNC (the noasync and firmware builds) there are no
   non-blocking stores, so only the sync pass runs. */
#ifdef LDL_NO_ASYNC
#define N_PASSES 1
static int sa_submits, sa_cancels;
#else
#define N_PASSES 2
#endif
int main(void) {
    static const char *names[2] = { "sync", "async" };
    int pass;
    for (pass = 0; pass < N_PASSES; pass++) {
        int p0 = chk.passed, f0 = chk.failed, s0 = chk.skipped, m0 = t_skipped_modes;
        int sub0 = sa_submits, can0 = sa_cancels, ms0 = ms_async_locks;
        t_async = pass;
        chk_set_label(names[pass]);
        all_suites();
        printf("pass %-5s: %d tests ran (%d passed, %d failed); skipped: %d tests (SYNC_ONLY), %d timer-mode runs",
               names[pass], chk.passed - p0 + chk.failed - f0, chk.passed - p0, chk.failed - f0,
               chk.skipped - s0, t_skipped_modes - m0);
        if (pass) printf("; non-blocking views: %d scripted submits, %d cancels, %d MemoryStore locks",
                         sa_submits - sub0, sa_cancels - can0, ms_async_locks - ms0);
        printf("\n");
    }
    chk_set_label(NULL);
    return chk_report();
}
