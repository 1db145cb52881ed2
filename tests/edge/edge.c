/* edge.c -- edge cases of lite_di_lock.h: clocks that run backwards or sit
   near UINT64_MAX, TTLs near UINT32_MAX, heartbeat exactly TTL/2, the drift
   default, the minimum TTL; plus the targeted tests that kill the mutants in
   tests/mutants/mutants.txt (each names the mutant ids it kills). Built under
   ASan+UBSan by `make edge` (no overflow may trip), plainly for valgrind, and
   against every mutant by `make mutants`. Prints "N passed, N failed" last
   and exits non-zero on any failure.

   Defined behaviour asserted here (from the header and SPEC.md):
   - the lease is trusted while start <= now < start + ttl - drift; a clock
     reading earlier than start is treated as an expired lease (fail closed);
   - defaults: heartbeat = ttl/3, drift = ttl/100 + 2, checked in 64 bits;
   - MemoryStore expiry saturates at UINT64_MAX (a lease granted near the top
     of the clock ends at UINT64_MAX, never wraps to the past). */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ runner */
#include "tests/check.h"      /* CHECK, CHECK_EQ, RUN, chk_report */

/* ------------------------------------------------------------ fakes */
static uint64_t e_clock;
static uint64_t e_now(void *ctx) { (void)ctx; return e_clock; }

static char e_log[512];
static void e_ev(const char *s) { if (strlen(e_log) + strlen(s) + 2 < sizeof e_log) { strcat(e_log, s); strcat(e_log, ";"); } }

/* timers: one table, fired by hand */
static struct { int set, clear, fail_next, armed; uintptr_t next, live; void (*fire)(void *); void *arg; } T;
static uintptr_t e_set(void *ctx, void (*fire)(void *), void *arg, uint32_t delay) {
    (void)ctx; (void)delay;
    T.set++; e_ev("arm");
    if (T.fail_next) { T.fail_next = 0; return 0; }
    T.armed++; T.live = ++T.next; T.fire = fire; T.arg = arg;
    return T.live;
}
static void e_clear(void *ctx, uintptr_t h) {
    (void)ctx;
    T.clear++; e_ev("disarm");
    if (h == T.live) { T.live = 0; T.armed--; }
}
static void e_fire(void) {
    if (T.live) { void (*f)(void *) = T.fire; T.live = 0; T.armed--; f(T.arg); }
}

/* scripted store */
static struct {
    int acq_rc, renew_rc, rel_rc, write;
    int64_t next_tok;
    int acq, renew, rel;
    int64_t released[16]; int nrel;
    uint64_t acq_advance;                 /* clock moved inside acquire (slow store) */
    int armed_at_release;                 /* timers armed when release was called */
    ldl_lock *reenter; int reenter_dispose;
} S;
static int s_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *out) {
    (void)ctx; (void)key; (void)ttl;
    S.acq++; e_ev("acquire");
    if (S.write) *out = S.next_tok++;
    e_clock += S.acq_advance;
    if (S.reenter) { ldl_lock *l = S.reenter; S.reenter = NULL; if (S.reenter_dispose) ldl_lock_dispose(l); else (void)ldl_lock_release(l); }
    return S.acq_rc;
}
static int s_renew(void *ctx, const char *key, int64_t tok, uint32_t ttl) {
    (void)ctx; (void)key; (void)tok; (void)ttl;
    S.renew++; e_ev("renew");
    if (S.reenter) { ldl_lock *l = S.reenter; S.reenter = NULL; if (S.reenter_dispose) ldl_lock_dispose(l); else (void)ldl_lock_release(l); }
    return S.renew_rc;
}
static int s_release(void *ctx, const char *key, int64_t tok) {
    (void)ctx; (void)key;
    S.rel++; e_ev("release");
    S.armed_at_release += T.armed;
    if (S.nrel < 16) S.released[S.nrel++] = tok;
    return S.rel_rc;
}
static ldl_store e_store(void) {
    ldl_store s; s.acquire = s_acquire; s.renew = s_renew; s.release = s_release; s.ctx = NULL; return s;
}

/* container: logs scope / shutdown into the event log */
static int C_scope_fail, C_open, C_shut;
static int64_t C_fence_at_bind; static const int64_t *C_fence;
static int c_dummy_scope;
static void *c_scope(void *self) { (void)self; if (C_scope_fail) return NULL; C_open++; e_ev("scope"); return &c_dummy_scope; }
static int c_value(void *scope, const char *name, void *v) {
    (void)scope;
    if (strcmp(name, "lock:fence") == 0) { C_fence = (const int64_t *)v; C_fence_at_bind = *C_fence; }
    return 0;
}
static int C_fence_changed;
static int c_shutdown(void *scope) {
    (void)scope; C_open--; C_shut++; e_ev("shutdown");
    if (C_fence && *C_fence != C_fence_at_bind) C_fence_changed = 1;   /* must hold until shutdown */
    return 0;
}
static ldl_container e_container(void) {
    ldl_container c; memset(&c, 0, sizeof c);
    c.scope = c_scope; c.value = c_value; c.shutdown = c_shutdown; c.self = NULL;
    return c;
}

/* on_lost */
static int L_count, L_reason;
static void e_on_lost(void *user, int reason) { (void)user; L_count++; L_reason = reason; e_ev("on_lost"); }

static void e_reset(void) {
    memset(&T, 0, sizeof T);
    memset(&S, 0, sizeof S);
    S.acq_rc = 1; S.renew_rc = 1; S.rel_rc = 1; S.write = 1; S.next_tok = 1;
    C_scope_fail = 0; C_open = 0; C_shut = 0; C_fence = NULL; C_fence_at_bind = 0;
    L_count = 0; L_reason = 0;
    e_log[0] = 0;
}

static ldl_store e_st;
/* init a lock on the scripted store (or a MemoryStore when ms != NULL) */
static int e_init(ldl_lock *l, uint32_t ttl, uint32_t hb, uint32_t drift, int timers, ldl_memstore *ms) {
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container = e_container();
    d.key = "edge";
    d.ttl_ms = ttl; d.heartbeat_ms = hb; d.drift_ms = drift;
    e_st = ms ? ldl_memstore_store(ms) : e_store();
    d.store = &e_st;
    d.clock.now_ms = e_now;
    if (timers) { d.timers.set_timeout = e_set; d.timers.clear_timeout = e_clear; }
    d.on_lost = e_on_lost;
    return ldl_lock_init(l, &d);
}

/* ================================================================ fork
   Pre-forked workers that init the same lock (same address after fork) on
   the same clock reading, retry.seed 0: their first retry delays must not
   all be equal (the seed mixes in the process id and a nanosecond clock).
   With one explicit seed they must all be equal: the documented reason an
   explicit seed has to differ per process. */
static ldl_lock f_lock;                  /* one address in every child */
static ldl_memstore f_ms;
static ldl_memstore_slot f_slots[2];

static uint32_t f_first_delay(uint64_t seed) {
    ldl_lock_desc d;
    ldl_store st;
    ldl_clock c = { e_now, NULL };
    int64_t t = 0;
    e_clock = 5000;                      /* the same reading in every child */
    if (ldl_memstore_init(&f_ms, f_slots, 2, c) != LDL_OK) return 0;
    st = ldl_memstore_store(&f_ms);
    if (st.acquire(st.ctx, "forked", 1000000, &t) != 1) return 0;   /* held by another */
    memset(&d, 0, sizeof d);
    d.container = e_container();
    d.key = "forked";
    d.ttl_ms = 1000000;
    d.store = &st;
    d.clock = c;
    d.retry.base_ms = 500000;
    d.retry.seed = seed;
    if (ldl_lock_init(&f_lock, &d) != LDL_OK) return 0;
    if (ldl_lock_acquire(&f_lock) != 0) return 0;
    return ldl_lock_due_in_ms(&f_lock);
}

/* n children each report their first delay; answers how many distinct */
static int f_distinct(uint64_t seed, int n, uint32_t *out) {
    int i, k, distinct = 0;
    for (i = 0; i < n; i++) {
        int p[2];
        pid_t pid;
        out[i] = 0;
        if (pipe(p) != 0) return -1;
        pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            uint32_t v = f_first_delay(seed);
            ssize_t w = write(p[1], &v, sizeof v);
            _exit(w == (ssize_t)sizeof v ? 0 : 1);
        }
        close(p[1]);
        if (read(p[0], &out[i], sizeof out[i]) != (ssize_t)sizeof out[i]) out[i] = 0;
        close(p[0]);
        (void)waitpid(pid, NULL, 0);
    }
    for (i = 0; i < n; i++) {
        for (k = 0; k < i; k++) if (out[k] == out[i]) break;
        if (k == i) distinct++;
    }
    return distinct;
}

static void edge_forked_workers_draw_apart(void) {
    uint32_t v[6];
    int i, n;
    e_reset();
#ifdef LDL_NO_ELECTION
    chk_skip(); return;
#endif
    n = f_distinct(0, 6, v);
    for (i = 0; i < 6; i++) CHECK_MSG(v[i] >= 1 && v[i] <= 500000, "child %d: delay %u", i, v[i]);
    CHECK_MSG(n >= 5, "seed 0: only %d distinct first delays among 6 forked workers", n);
    n = f_distinct(42, 6, v);
    CHECK_MSG(n == 1, "seed 42: %d distinct first delays (one seed draws one schedule)", n);
}

/* ================================================================ edges */
static void edge_clock_backwards_fails_closed(void) {
    ldl_lock l;
    e_reset(); e_clock = 1000;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    e_clock = 999;                                   /* one ms before start */
    CHECK_EQ(ldl_lock_due_in_ms(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(S.renew, 0);                            /* store not asked */
    CHECK_EQ(L_count, 1);
    CHECK_EQ(ldl_lock_release(&l), 1);               /* the lost lease is handed back once */
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);   /* loss reason kept */
    /* tick and valid_ms fail closed the same way */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    e_clock = 0;
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    CHECK_EQ(L_count, 2);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 2);
}

static void edge_clock_near_uint64_max(void) {
    ldl_lock l;
    e_reset(); e_clock = UINT64_MAX - 50;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);   /* window 97, hb 33 */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 97);
    e_clock = UINT64_MAX;                            /* 50 ms later: trusted */
    CHECK_EQ(ldl_lock_valid_ms(&l), 47);
    CHECK_EQ(ldl_lock_poll(&l), 1);                  /* hb due: renews */
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 97);             /* start moved to UINT64_MAX */
    e_clock = 5;                                     /* the clock wrapped: reads before start */
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(S.renew, 1);
    ldl_lock_dispose(&l);
}

static void edge_memstore_expiry_saturates(void) {
    ldl_memstore ms; ldl_memstore_slot slots[2]; ldl_store st; ldl_clock c = { e_now, NULL };
    int64_t t = 0, t2 = 0;
    e_reset(); e_clock = UINT64_MAX - 5;
    CHECK_EQ(ldl_memstore_init(&ms, slots, 2, c), LDL_OK);
    st = ldl_memstore_store(&ms);
    CHECK_EQ(st.acquire(st.ctx, "k", UINT32_MAX, &t), 1);    /* expiry saturates at UINT64_MAX */
    CHECK_EQ(ldl_memstore_live(&ms), 1);
    e_clock = UINT64_MAX - 1;
    CHECK_EQ(ldl_memstore_live(&ms), 1);
    CHECK_EQ(st.renew(st.ctx, "k", t, 10), 1);
    e_clock = UINT64_MAX;                            /* now >= expiry: expired */
    CHECK_EQ(ldl_memstore_live(&ms), 0);
    CHECK_EQ(st.renew(st.ctx, "k", t, 10), 0);
    CHECK_EQ(st.acquire(st.ctx, "k", 10, &t2), 1);   /* steal, new token */
    CHECK(t2 > t);
    CHECK_EQ(st.release(st.ctx, "k", t), 0);         /* the old token no longer holds it */
    CHECK_EQ(st.release(st.ctx, "k", t2), 1);
}

static void edge_ttl_near_uint32_max(void) {
    ldl_lock l;
    uint32_t ttl = UINT32_MAX, hb = UINT32_MAX / 3, drift = UINT32_MAX / 100 + 2;
    e_reset(); e_clock = 7;
    CHECK_EQ(e_init(&l, ttl, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), ttl - drift);
    CHECK_EQ(ldl_lock_due_in_ms(&l), hb);
    e_clock += hb - 1u;
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(S.renew, 0);
    e_clock += 1;
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(S.renew, 1);
    e_clock += (uint64_t)(ttl - drift) - 1u;         /* last trusted ms */
    CHECK_EQ(ldl_lock_valid_ms(&l), 1);
    e_clock += 1;
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    ldl_lock_dispose(&l);
    /* the largest heartbeat: floor(UINT32_MAX / 2), drift 1 */
    e_reset();
    CHECK_EQ(e_init(&l, UINT32_MAX, UINT32_MAX / 2, 1, 0, NULL), LDL_OK);
    CHECK_EQ(e_init(&l, UINT32_MAX, UINT32_MAX / 2 + 1, 1, 0, NULL), LDL_EINVAL);
    CHECK_EQ(e_init(&l, UINT32_MAX, UINT32_MAX / 2, UINT32_MAX - UINT32_MAX / 2 - 1, 0, NULL), LDL_OK);
    CHECK_EQ(e_init(&l, UINT32_MAX, UINT32_MAX / 2, UINT32_MAX - UINT32_MAX / 2, 0, NULL), LDL_EINVAL);
    CHECK_EQ(e_init(&l, UINT32_MAX, UINT32_MAX, 0, 0, NULL), LDL_EINVAL);   /* hb*2 overflows 32 bits */
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
}

/* kills: hb-off-by-one, renew-every-poll */
static void edge_heartbeat_exactly_half(void) {
    ldl_lock l;
    e_reset(); e_clock = 100;
    CHECK_EQ(e_init(&l, 100, 50, 1, 0, NULL), LDL_OK);
    CHECK_EQ(e_init(&l, 100, 51, 1, 0, NULL), LDL_EINVAL);
    CHECK_EQ(e_init(&l, 101, 51, 1, 0, NULL), LDL_EINVAL);
    CHECK_EQ(e_init(&l, 101, 50, 1, 0, NULL), LDL_OK);
    CHECK_EQ(e_init(&l, 100, 50, 49, 0, NULL), LDL_OK);     /* drift < ttl - hb */
    CHECK_EQ(e_init(&l, 100, 50, 50, 0, NULL), LDL_EINVAL);
    CHECK_EQ(e_init(&l, 100, 50, 1, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 50);
    e_clock = 149;
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(S.renew, 0);                            /* not yet due */
    CHECK_EQ(ldl_lock_due_in_ms(&l), 1);
    e_clock = 150;                                   /* due exactly now */
    CHECK_EQ(ldl_lock_due_in_ms(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(ldl_lock_poll(&l), 1);                  /* same instant: not due again */
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 50);
    ldl_lock_dispose(&l);
}

/* kills: deadline-ignored, deadline-off-by-one, drift-default */
static void edge_drift_default(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 1000, 0, 0, 0, NULL), LDL_OK);       /* hb 333, drift 12 */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 988);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 333);
    S.renew_rc = 1;
    e_clock = 987;                                   /* skipped heartbeats; still trusted */
    CHECK_EQ(ldl_lock_valid_ms(&l), 1);
    CHECK_EQ(ldl_lock_state(&l), LDL_HELD);
    e_clock = 988;                                   /* deadline: lost without asking the store */
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(S.renew, 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(L_count, 1);
    ldl_lock_dispose(&l);
    /* tick past the deadline: no renew either */
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 1000, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    e_clock = 988;
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(S.renew, 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    ldl_lock_dispose(&l);
}

static void edge_minimum_ttl(void) {
    ldl_lock l;
    e_reset(); e_clock = 10;
    CHECK_EQ(e_init(&l, 3, 0, 0, 0, NULL), LDL_EINVAL);      /* hb 1, drift 2: 2 < 2 fails */
    CHECK_EQ(e_init(&l, 2, 0, 0, 0, NULL), LDL_EINVAL);      /* hb 0 */
    CHECK_EQ(e_init(&l, 4, 0, 0, 0, NULL), LDL_OK);          /* hb 1, drift 2, window 2 */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 2);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 1);
    e_clock = 11;
    CHECK_EQ(ldl_lock_poll(&l), 1);                  /* renews at hb 1 */
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 2);
    e_clock = 13;
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    ldl_lock_dispose(&l);
}

/* ================================================================ mutant killers */
/* kills: accept-answer-2, accept-any-positive */
static void kill_malformed_acquire(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.acq_rc = 2;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    S.acq_rc = -1;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    S.acq_rc = INT_MAX;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(S.rel, 0);                              /* not a lease: nothing handed back */
    S.acq_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    ldl_lock_dispose(&l);
}

/* kills: accept-token-0, no-token-zeroing */
static void kill_token_zero(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.write = 0;                                     /* answers 1, writes no token */
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    S.write = 1; S.next_tok = 0;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    S.next_tok = -5;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(S.rel, 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_NONE);  /* out-of-range: reason untouched */
    ldl_lock_dispose(&l);
}

/* kills: skip-monotonic, monotonic-allow-equal, forget-regressed-handback */
static void kill_monotonic(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.next_tok = 5;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&l), 5);
    CHECK_EQ(ldl_lock_release(&l), 1);
    S.next_tok = 5;                                  /* same token again */
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(S.rel, 2);
    CHECK_EQ(S.released[1], 5);                      /* handed straight back */
    S.next_tok = 3;                                  /* lower */
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(S.rel, 3);
    CHECK_EQ(S.released[2], 3);
    S.next_tok = 6;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_NONE);
    ldl_lock_dispose(&l);
}

static int k_body(void *scope, void *user) { (void)scope; (void)user; e_ev("body"); return 0; }
static int k_body_release(void *scope, void *user) { (void)scope; (void)ldl_lock_release((ldl_lock *)user); return 0; }

/* kills: release-before-shutdown, fence-not-copied */
static void kill_run_order(void) {
    ldl_lock l;
    ldl_run_result r;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_run(&l, k_body, NULL, &r), LDL_OK);
    CHECK(strcmp(e_log, "acquire;scope;body;shutdown;release;") == 0);
    CHECK_EQ(C_fence_at_bind, 1);
    CHECK_EQ(C_shut, 1);
    CHECK_EQ(r.release_rc, 1);
    /* the body releases the lock itself: the bound fence stays unchanged
       until the child is shut down, and the release leg finds nothing */
    C_fence_changed = 0;
    CHECK_EQ(ldl_lock_run(&l, k_body_release, &l, &r), LDL_OK);
    CHECK_EQ(C_fence_changed, 0);
    CHECK_EQ(C_fence_at_bind, 2);
    CHECK_EQ(r.release_rc, 0);
    /* bind path: scope fails -> no body, lease released */
    e_log[0] = 0; C_scope_fail = 1;
    CHECK_EQ(ldl_lock_run(&l, k_body, NULL, &r), LDL_EFENCE);
    CHECK(strcmp(e_log, "acquire;release;") == 0);
    ldl_lock_dispose(&l);
}

static int k_body_overrun(void *scope, void *user) { (void)scope; (void)user; e_clock += 1000; return 0; }

/* kills: run-skip-deadline */
static void kill_run_deadline(void) {
    ldl_lock l;
    ldl_run_result r;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_run(&l, k_body_overrun, NULL, &r), LDL_ELOST);
    CHECK_EQ(r.lost_reason, LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(L_count, 1);
    CHECK_EQ(S.renew, 0);
    ldl_lock_dispose(&l);
}

/* kills: on-lost-twice, on-lost-skipped, loss-reason */
static void kill_on_lost_once(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    S.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(L_count, 1);
    CHECK_EQ(L_reason, LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    e_clock += 1000;
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_release(&l), 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(L_count, 1);
    CHECK_EQ(S.rel, 1);                              /* the lost lease released exactly once */
    /* store error */
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    S.renew_rc = 7;                                  /* malformed: a store error */
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(L_reason, LDL_REASON_STORE_ERROR);
    CHECK_EQ(L_count, 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(L_count, 1);
}

/* kills: forget-handback (acquire and renew), handback-twice */
static void kill_handback(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.reenter = &l; S.reenter_dispose = 1; S.next_tok = 9;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(S.released[0], 9);
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 1);
    /* re-entrant release during a renew: the renewed lease is handed back */
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.next_tok = 4;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    S.reenter = &l; S.reenter_dispose = 0;
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(S.released[0], 4);
    CHECK_EQ(L_count, 0);
    CHECK_EQ(ldl_lock_release(&l), 0);
    CHECK_EQ(S.rel, 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 1);
}

/* kills: start-after-call */
static void kill_start_before_call(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);   /* window 97 */
    S.acq_advance = 30;                              /* a slow store */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 67);             /* trust counts from before the call */
    e_clock = 97;
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_LEASE_EXPIRED);
    ldl_lock_dispose(&l);
}

/* kills: disarm-after-release, no-disarm-on-loss, timer-unarmable-ignored */
static void kill_timers(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 90, 0, 0, 1, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(T.armed, 1);
    e_clock = 30;
    e_fire();                                        /* heartbeat: renew, re-arm once */
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(T.armed, 1);
    CHECK_EQ(ldl_lock_poll(&l), 1);                  /* timer mode: poll never renews */
    CHECK_EQ(S.renew, 1);
    CHECK_EQ(ldl_lock_tick(&l), 1);                  /* manual tick: still exactly one timer */
    CHECK_EQ(T.armed, 1);
    e_log[0] = 0;
    CHECK_EQ(ldl_lock_release(&l), 1);
    CHECK(strcmp(e_log, "disarm;release;") == 0);
    CHECK_EQ(S.armed_at_release, 0);
    CHECK_EQ(T.armed, 0);
    /* a renew that fails disarms */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    S.renew_rc = 0;
    e_fire();
    CHECK_EQ(T.armed, 0);
    CHECK_EQ(L_reason, LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(ldl_lock_release(&l), 1);
    /* a deadline loss disarms */
    S.renew_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    e_clock += 1000;
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(T.armed, 0);
    CHECK_EQ(ldl_lock_release(&l), 1);
    /* unarmable: hand back at once, then on_lost, acquire answers 0 */
    L_count = 0; S.rel = 0; e_log[0] = 0;
    T.fail_next = 1;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_TIMER_UNARMABLE);
    CHECK(strcmp(e_log, "acquire;arm;release;on_lost;") == 0);
    CHECK_EQ(ldl_lock_release(&l), 0);               /* already handed back */
    CHECK_EQ(S.rel, 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(T.armed, 0);
}

/* kills: dispose-no-release, disposed-tick-renews */
static void kill_dispose(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 90, 0, 0, 1, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(T.armed, 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
    CHECK_EQ(S.renew + S.acq, 1);
    if (T.fire) T.fire(T.arg);                       /* a stale timer: no-op */
    CHECK_EQ(S.renew, 0);
    ldl_lock_dispose(&l);
    CHECK_EQ(S.rel, 1);
}

/* kills: memstore-renew-after-expiry, memstore-acquire-unexpired, memstore-release-any-token,
   memstore-per-key-counter, memstore-enospc */
static void kill_memstore(void) {
    ldl_memstore ms; ldl_memstore_slot slots[2]; ldl_store st; ldl_clock c = { e_now, NULL };
    int64_t a = 0, b = 0, x = 0;
    e_reset(); e_clock = 100;
    CHECK_EQ(ldl_memstore_init(&ms, slots, 2, c), LDL_OK);
    st = ldl_memstore_store(&ms);
    CHECK_EQ(st.acquire(st.ctx, "a", 10, &a), 1);
    CHECK_EQ(st.acquire(st.ctx, "a", 10, &x), 0);    /* held */
    CHECK_EQ(st.acquire(st.ctx, "b", 10, &b), 1);
    CHECK(b > a);                                    /* one counter per store */
    CHECK_EQ(st.acquire(st.ctx, "c", 10, &x), LDL_ENOSPC);
    e_clock = 109;
    CHECK_EQ(st.renew(st.ctx, "a", a, 10), 1);       /* a until 119 */
    e_clock = 110;                                   /* b expired exactly now */
    CHECK_EQ(st.renew(st.ctx, "b", b, 10), 0);
    CHECK_EQ(st.renew(st.ctx, "a", b, 10), 0);       /* wrong token */
    CHECK_EQ(st.release(st.ctx, "a", b), 0);
    CHECK_EQ(ldl_memstore_live(&ms), 1);
    CHECK_EQ(st.acquire(st.ctx, "c", 10, &x), 1);    /* b's expired slot reused */
    CHECK(x > b);
    CHECK_EQ(st.release(st.ctx, "a", a), 1);
    CHECK_EQ(st.release(st.ctx, "a", a), 0);         /* second release answers 0 */
    e_clock = 200;
    CHECK_EQ(ldl_memstore_live(&ms), 0);
    CHECK_EQ(st.release(st.ctx, "c", x), 1);         /* expired, not retaken: the holder's token */
}

/* kills: interrupt-not-released */
static void kill_reentrant_release_state(void) {
    ldl_lock l;
    e_reset(); e_clock = 0;
    CHECK_EQ(e_init(&l, 100, 0, 0, 0, NULL), LDL_OK);
    S.reenter = &l; S.reenter_dispose = 0;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(S.rel, 1);
    CHECK_EQ(ldl_lock_acquire(&l), 1);               /* released, not disposed: may acquire again */
    ldl_lock_dispose(&l);
}

int main(void) {
    RUN(edge_clock_backwards_fails_closed);
    RUN(edge_clock_near_uint64_max);
    RUN(edge_memstore_expiry_saturates);
    RUN(edge_ttl_near_uint32_max);
    RUN(edge_heartbeat_exactly_half);
    RUN(edge_drift_default);
    RUN(edge_minimum_ttl);
    RUN(kill_malformed_acquire);
    RUN(kill_token_zero);
    RUN(kill_monotonic);
    RUN(kill_run_order);
    RUN(kill_run_deadline);
    RUN(kill_on_lost_once);
    RUN(kill_handback);
    RUN(kill_start_before_call);
    RUN(kill_timers);
    RUN(kill_dispose);
    RUN(kill_memstore);
    RUN(kill_reentrant_release_state);
    RUN(edge_forked_workers_draw_apart);
    return chk_report();
}
