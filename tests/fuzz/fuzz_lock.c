/* fuzz_lock.c -- state-machine fuzzer for the lock lifecycle, with an
   invariant oracle (issue 4, gate 1).

   The input bytes are a script. The first bytes pick a configuration (TTL,
   heartbeat, drift, timer or manual mode, clock origin); every following
   byte picks an operation: acquire / release / tick / poll / run / dispose /
   valid_ms / a timer fire / a clock move (forward, exact deadline and
   heartbeat boundaries, huge jumps, backwards, near UINT64_MAX). The store,
   the timers and the DI container are scripted too and adversarial: any
   answer, any token, no token written, clock moves inside a store call (a
   slow store), re-entry into the lock from inside a store call, from the run
   body and from on_lost (including dispose mid-call), and timers that cannot
   be armed.

   The oracle never looks at private fields. It watches what crosses the
   vtables (store, timers, container, on_lost, body) plus the public getters,
   and after every step (and at every callback) checks the invariants of
   SPEC.md listed in issue 4. Any violation prints a line and abort()s, which
   libFuzzer reports as a crash and the replay build (fuzz_replay.c) as a
   non-zero exit.

   Built two ways (mk/reliability.mk):
     clang -fsanitize=fuzzer,address,undefined            -> libFuzzer binary
     cc fuzz_lock.c fuzz_replay.c (no libFuzzer, -DFZ_REPLAY) -> corpus replay
*/
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------ input */
static const uint8_t *fz_p;
static size_t fz_n, fz_i;
static uint8_t fz_u8(void) { return fz_i < fz_n ? fz_p[fz_i++] : 0; }
static int fz_more(void) { return fz_i < fz_n; }

/* ------------------------------------------------------------ oracle state */
#define FZ_MAXLEASE 256
#define FZ_MAXSCOPE 16
#define FZ_KEY "fz-key"

typedef struct { int64_t tok; unsigned opens, releases; } fz_lease;

typedef struct {
    int      used, open, shut;
    int64_t *fence;        /* pointer bound under token_name */
    int64_t  fence_val;    /* its value at bind */
    void    *holder;       /* pointer bound under holder_name */
    int      nbind;
} fz_scope;

static struct {
    /* configuration */
    uint32_t ttl, hb, drift, window;
    int timer_mode, init_ok;
    ldl_lock lock;
    uint64_t clock;

    /* the grant the lock is supposed to hold */
    int64_t L;             /* highest token the lock must have accepted */
    int64_t cur;           /* token of the active grant, 0 = none */
    uint64_t start;        /* clock read before the last good acquire/renew */
    int grant_active;
    int lost_fired;        /* on_lost calls for the active grant */
    int closed_by_release; /* release/dispose called while HELD with it */
    int expect_lost;       /* reason on_lost must fire with, 0 = none */
    int64_t unarm_tok;     /* TIMER_UNARMABLE: token that must be handed back first */

    /* lifecycle flags */
    int disposed;          /* ldl_lock_dispose was called */
    int dispose_running;
    int64_t handback_ok[8]; int nhandback; /* tokens a post-dispose hand-back may name */

    /* nesting */
    int in_store;          /* depth of store calls */
    int in_lost;           /* inside on_lost */
    int depth;             /* harness-driven nesting of lock calls */
    int interrupted;       /* a release/dispose re-entered the current store call */

    /* ledger */
    fz_lease lease[FZ_MAXLEASE]; int nlease;

    /* timers */
    uintptr_t next_handle, armed;   /* armed handle, 0 = none */
    void (*armed_fire)(void *); void *armed_arg;
    void (*last_fire)(void *); void *last_arg;

    /* container */
    fz_scope scope[FZ_MAXSCOPE]; int nscope;
    int in_run, body_running, body_returned, body_ran;
    fz_scope *run_scope;
    int lost_in_run;
    int held_at_return, trusted_at_return;

    /* per-step counters */
    unsigned renews, releases, acquires;
    int last_release_ans;
    long step;
} H;

static void fz_fail(const char *what) {
    fprintf(stderr, "fuzz_lock: INVARIANT VIOLATED at step %ld: %s\n"
            "  state=%s reason=%s token=%lld oracle: cur=%lld L=%lld start=%llu clock=%llu "
            "ttl=%u hb=%u drift=%u timer_mode=%d\n",
            H.step, what, ldl_state_name(ldl_lock_state(&H.lock)),
            ldl_reason_name(ldl_lock_reason(&H.lock)),
            (long long)ldl_lock_fencing_token(&H.lock), (long long)H.cur, (long long)H.L,
            (unsigned long long)H.start, (unsigned long long)H.clock,
            H.ttl, H.hb, H.drift, H.timer_mode);
    abort();
}
static int fz_trace = -1;
#define FZ_TRACE(...) do { if (fz_trace > 0) { fprintf(stderr, "%*s", 2 * H.depth, ""); fprintf(stderr, __VA_ARGS__); } } while (0)
#define FZ_CHECK(c, what) do { if (!(c)) fz_fail(what); } while (0)

static int fz_trusted(uint64_t now) { return now >= H.start && now - H.start < H.window; }

static fz_lease *fz_lease_of(int64_t tok, int create) {
    int i;
    for (i = 0; i < H.nlease; i++) if (H.lease[i].tok == tok) return &H.lease[i];
    if (!create) return NULL;
    if (H.nlease == FZ_MAXLEASE) return NULL;     /* table full: stop tracking */
    H.lease[H.nlease].tok = tok; H.lease[H.nlease].opens = 0; H.lease[H.nlease].releases = 0;
    return &H.lease[H.nlease++];
}

/* ------------------------------------------------------------ clock */
static uint64_t fz_now(void *ctx) { (void)ctx; return H.clock; }

static void fz_move_clock(uint8_t b) {
    switch (b % 16) {
    case 0:  H.clock += 1; break;
    case 1:  H.clock += H.hb ? H.hb - 1u : 0u; break;
    case 2:  H.clock = H.start + H.hb; break;              /* heartbeat exactly due */
    case 3:  H.clock = H.start + H.hb - 1u; break;
    case 4:  H.clock = H.start + H.window - 1u; break;     /* last trusted ms */
    case 5:  H.clock = H.start + H.window; break;          /* deadline exactly */
    case 6:  H.clock += (uint64_t)1 << 40; break;          /* huge jump */
    case 7:  H.clock -= 1; break;                          /* backwards */
    case 8:  H.clock -= (uint64_t)H.ttl + 5u; break;       /* far backwards */
    case 9:  H.clock = UINT64_MAX - (b >> 4); break;       /* near the top */
    case 10: H.clock += UINT64_MAX / 2u; break;            /* half the range: wraps later */
    case 11: H.clock += (uint64_t)H.ttl; break;
    case 12: H.clock = H.start + H.hb + 1u; break;
    default: H.clock += (uint64_t)(b >> 4); break;
    }
}

/* ------------------------------------------------------------ timers */
static uintptr_t fz_set_timeout(void *ctx, void (*fire)(void *), void *arg, uint32_t delay) {
    (void)ctx;
    FZ_CHECK(H.in_store == 0, "set_timeout called from inside a store call");
    FZ_CHECK(H.armed == 0, "a second heartbeat timer armed while one is armed (must be ONE one-shot)");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD, "timer armed while not HELD");
    FZ_CHECK(ldl_lock_fencing_token(&H.lock) == H.cur && H.cur >= 1, "timer armed for a token the oracle did not grant");
    FZ_CHECK(delay == H.hb, "timer armed for a delay other than heartbeat_ms");
    H.last_fire = fire; H.last_arg = arg;
    if ((fz_u8() & 15) == 15) {                   /* cannot arm */
        H.expect_lost = LDL_REASON_TIMER_UNARMABLE;
        H.unarm_tok = H.cur;
        return 0;
    }
    H.armed = ++H.next_handle;
    H.armed_fire = fire; H.armed_arg = arg;
    return H.armed;
}

static void fz_clear_timeout(void *ctx, uintptr_t h) {
    (void)ctx;
    FZ_CHECK(h != 0 && h <= H.next_handle, "clear_timeout of a handle never issued");
    if (h == H.armed) H.armed = 0;
}

/* ------------------------------------------------------------ re-entry */
enum { OP_ACQUIRE, OP_RELEASE, OP_TICK, OP_POLL, OP_RUN, OP_DISPOSE, OP_VALID, OP_FIRE,
       OP_CLOCK, OP_STALE_FIRE, OP_NOP, OP__N };

static void fz_op(int op);

/* called from inside a store call, the body or on_lost */
static void fz_reenter(uint8_t b) {
    int op;
    if (H.depth >= 3) return;
    switch (b % 8) {
    case 0: op = OP_ACQUIRE; break;
    case 1: op = OP_RELEASE; break;
    case 2: op = OP_TICK; break;
    case 3: op = OP_POLL; break;
    case 4: op = OP_RUN; break;
    case 5: op = OP_DISPOSE; break;
    case 6: op = OP_VALID; break;
    default: op = OP_FIRE; break;
    }
    fz_op(op);
}

/* ------------------------------------------------------------ store */
static void fz_grant_check_end(void);

static int fz_within(uint64_t start, uint64_t now) { return now >= start && now - start < H.window; }

/* an acquire answer the lock applies at `now` (its submit started at `pre`):
   the whitelist shape, the fence advance, then the window. 1 = the oracle's
   new active grant. */
static int fz_eval_grant(int ans, int64_t tok, uint64_t pre, uint64_t now) {
    if (ans != 1 || tok < 1 || tok <= H.L || !fz_within(pre, now)) return 0;
    FZ_CHECK(!H.grant_active, "a new grant while the oracle still has an active one");
    H.L = tok; H.cur = tok; H.start = pre;
    H.grant_active = 1; H.lost_fired = 0; H.closed_by_release = 0;
    return 1;
}

static void fz_store_entry(const char *key, const char *what) {
    FZ_CHECK(strcmp(key, FZ_KEY) == 0, what);
    FZ_CHECK(H.armed == 0, "a store call was made while a heartbeat timer is armed (disarm FIRST)");
}

static int fz_answer(uint8_t b) {
    static const int ans[8] = { 1, 1, 1, 0, -1, 2, INT_MIN, INT_MAX };
    return ans[b & 7];
}

static int fz_store_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *out) {
    uint8_t a = fz_u8(), t = fz_u8(), r = fz_u8();
    int ans = fz_answer(a), write = 1, saved_int = H.interrupted;
    int64_t tok = 0;
    uint64_t pre = H.clock;
    (void)ctx;
    FZ_CHECK(!H.disposed, "store.acquire after dispose");
    fz_grant_check_end();              /* the previous grant, if any, has ended by now */
    fz_store_entry(key, "acquire: wrong key");
    FZ_CHECK(ttl == H.ttl, "acquire: wrong ttl");
    FZ_CHECK(out && *out == 0, "acquire: token_out not zeroed before the call");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_ACQUIRING, "store.acquire while state is not ACQUIRING");
    H.acquires++;
    FZ_TRACE("store.acquire a=%u t=%u r=%u clock=%llu\n", a, t, r, (unsigned long long)H.clock);
    switch ((a >> 3) & 7) {
    case 0: case 1: case 2: tok = (H.L < INT64_MAX - 300) ? H.L + 1 + (t & 3) : INT64_MAX; break;
    case 3: tok = H.L; break;                          /* no advance */
    case 4: tok = H.L - 1; break;                      /* regressed */
    case 5: tok = (t & 1) ? 0 : -1 - (int64_t)(t >> 1); break;
    case 6: tok = (t & 1) ? INT64_MAX : INT64_MIN; break;
    default: write = 0; break;                         /* answers without a token */
    }
    if (write) *out = tok; else tok = 0;
    H.in_store++;
    H.interrupted = 0;
    if ((r & 7) == 7) H.clock += (uint64_t)(r >> 3) * (H.ttl / 8u + 1u);   /* slow store */
    if ((r >> 6) == 3) fz_reenter((uint8_t)(r >> 3));
    H.in_store--;
    {
        int intr = H.interrupted;
        fz_lease *ls;
        H.interrupted = saved_int;
        if (tok >= 1 && (ans == 1 || intr)) {
            ls = fz_lease_of(tok, 1);
            if (ls) ls->opens++;
        }
        if (intr && tok >= 1 && H.disposed && H.nhandback < 8) H.handback_ok[H.nhandback++] = tok;
        /* v0.2: a grant whose window closed during the call (a slow store) is
           refused and handed back; only an accepted grant raises the floor */
        if (!intr) fz_eval_grant(ans, tok, pre, H.clock);
    }
    return ans;
}

static int fz_store_renew(void *ctx, const char *key, int64_t token, uint32_t ttl) {
    uint8_t a = fz_u8(), r = fz_u8();
    int ans = fz_answer(a), saved_int = H.interrupted, intr;
    uint64_t pre = H.clock;
    (void)ctx;
    FZ_CHECK(!H.disposed, "store.renew after dispose");
    fz_store_entry(key, "renew: wrong key");
    FZ_CHECK(ttl == H.ttl, "renew: wrong ttl");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD, "store.renew while not HELD");
    FZ_CHECK(H.grant_active && token == H.cur && token >= 1, "renew of a token that is not the active grant");
    FZ_CHECK(fz_trusted(H.clock), "renew after the local deadline (or with the clock behind start)");
    H.renews++;
    FZ_TRACE("store.renew tok=%lld ans=%d r=%u\n", (long long)token, ans, r);
    H.in_store++;
    H.interrupted = 0;
    if ((r & 7) == 7) H.clock += (uint64_t)(r >> 3) * (H.ttl / 8u + 1u);
    if ((r >> 6) == 3) fz_reenter((uint8_t)(r >> 3));
    H.in_store--;
    intr = H.interrupted;
    H.interrupted = saved_int;
    if (intr) {
        if (H.disposed && H.nhandback < 8) H.handback_ok[H.nhandback++] = token;
    } else if (ans == 1) {
        H.start = pre;
    } else {
        H.expect_lost = ans == 0 ? LDL_REASON_HEARTBEAT_FAILED : LDL_REASON_STORE_ERROR;
    }
    return ans;
}

static int fz_store_release(void *ctx, const char *key, int64_t token) {
    uint8_t a = fz_u8(), r = fz_u8();
    int ans = fz_answer(a);
    fz_lease *ls;
    (void)ctx;
    if (H.disposed && !H.dispose_running) {
        int i, ok = 0;
        for (i = 0; i < H.nhandback; i++)
            if (H.handback_ok[i] == token) { H.handback_ok[i] = 0; ok = 1; break; }
        FZ_CHECK(ok, "store.release after dispose that is not the hand-back of an in-flight grant");
    }
    fz_store_entry(key, "release: wrong key");
    /* run(): the child scope is shut down BEFORE the release. The body (and
       on_lost) may release the lock themselves: that is the caller's call. */
    if (H.in_run && H.run_scope && H.run_scope->open && !H.body_running && !H.in_lost)
        fz_fail("store.release while the run's child scope is still open (shutdown must come BEFORE release)");
    FZ_CHECK(token >= 1, "store.release of a token < 1");
    ls = fz_lease_of(token, 0);
    FZ_CHECK(ls != NULL, "store.release of a token the store never granted");
    if (ls->opens < FZ_MAXLEASE) {
        FZ_CHECK(ls->releases < ls->opens, "store.release twice for the same lease (ledger overdrawn)");
        ls->releases++;
    }
    H.releases++;
    /* run()'s own release leg closes the grant without a harness call */
    if (H.grant_active && token == H.cur && !H.lost_fired && ldl_lock_state(&H.lock) == LDL_RELEASING)
        H.closed_by_release = 1;
    FZ_TRACE("store.release tok=%lld ans=%d r=%u\n", (long long)token, ans, r);
    H.last_release_ans = ans;
    H.in_store++;
    if ((r & 7) == 7) H.clock += (uint64_t)(r >> 3);
    if ((r >> 6) == 3) fz_reenter((uint8_t)(r >> 3));
    H.in_store--;
    return ans;
}

/* ------------------------------------------------------------ container */
static void *fz_scope_new(void *self) {
    fz_scope *s;
    (void)self;
    FZ_CHECK(H.in_run, "container.scope called outside run");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD, "child scope created while not HELD");
    if ((fz_u8() & 15) == 15 || H.nscope == FZ_MAXSCOPE) return NULL;
    s = &H.scope[H.nscope++];
    memset(s, 0, sizeof *s);
    s->used = 1; s->open = 1;
    H.run_scope = s;
    return s;
}

static int fz_scope_value(void *scope, const char *name, void *value) {
    fz_scope *s = (fz_scope *)scope;
    FZ_CHECK(s && s->open, "bind into a scope that is not open");
    if ((fz_u8() & 31) == 31) return -1;            /* bind fails */
    if (strcmp(name, "lock:fence") == 0) {
        FZ_CHECK(value != NULL, "fence bound as NULL");
        s->fence = (int64_t *)value;
        s->fence_val = *s->fence;
    } else if (strcmp(name, "lock:holder") == 0) {
        s->holder = value;
    } else {
        fz_fail("bind of an unexpected name");
    }
    s->nbind++;
    return 0;
}

static int fz_scope_shutdown(void *scope) {
    fz_scope *s = (fz_scope *)scope;
    FZ_CHECK(s && s->used, "shutdown of an unknown scope");
    FZ_CHECK(s->open, "child scope shut down twice");
    if (s->fence) FZ_CHECK(*s->fence == s->fence_val, "bound fence changed before the child scope was shut down");
    s->open = 0; s->shut = 1;
    return (fz_u8() & 31) == 31 ? -7 : 0;
}

/* ------------------------------------------------------------ on_lost */
static void fz_on_lost(void *user, int reason) {
    uint8_t r;
    FZ_CHECK(user == &H, "on_lost user pointer");
    FZ_CHECK(H.grant_active, "on_lost without a grant");
    FZ_CHECK(H.lost_fired == 0, "on_lost fired twice for one grant");
    FZ_CHECK(!H.closed_by_release, "on_lost for a lease that was released or disposed");
    FZ_CHECK(H.in_store == 0, "on_lost from inside a store call");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_LOST || ldl_lock_state(&H.lock) == LDL_RELEASED,
             "on_lost fired while the state is not LOST");
    FZ_CHECK(ldl_lock_fencing_token(&H.lock) == 0, "on_lost while a token is still reported");
    FZ_CHECK(H.armed == 0, "on_lost with the heartbeat still armed");
    switch (reason) {
    case LDL_REASON_HEARTBEAT_FAILED: case LDL_REASON_STORE_ERROR: case LDL_REASON_TIMER_UNARMABLE:
        FZ_CHECK(H.expect_lost == reason, "on_lost reason does not match the store/timer answer");
        break;
    case LDL_REASON_LEASE_EXPIRED:
        FZ_CHECK(H.expect_lost == 0, "LEASE_EXPIRED while a store/timer failure was pending");
        FZ_CHECK(!fz_trusted(H.clock), "LEASE_EXPIRED while the oracle still trusts the lease");
        break;
    default:
        fz_fail("on_lost with a reason that is not a loss reason");
    }
    if (reason == LDL_REASON_TIMER_UNARMABLE) {
        fz_lease *ls = fz_lease_of(H.unarm_tok, 0);
        FZ_CHECK(ls && ls->releases == ls->opens, "TIMER_UNARMABLE: on_lost before the lease was handed back");
    }
    H.expect_lost = 0;
    H.lost_fired = 1;
    if (H.in_run && H.body_running) H.lost_in_run = 1;
    if (H.in_run && H.body_returned && H.run_scope && H.run_scope->open) H.lost_in_run = 1;
    FZ_TRACE("on_lost %s\n", ldl_reason_name(reason));
    H.in_lost++;
    r = fz_u8();
    if ((r & 3) == 3) fz_reenter((uint8_t)(r >> 2));
    H.in_lost--;
}

/* ------------------------------------------------------------ run body */
static int fz_body(void *scope, void *user) {
    fz_scope *s = (fz_scope *)scope;
    uint8_t b;
    int ret = 0;
    FZ_CHECK(user == &H, "body user pointer");
    FZ_CHECK(H.in_run, "body outside run");
    FZ_CHECK(s && s == H.run_scope && s->open, "body got a scope that is not the open child");
    FZ_CHECK(s->fence != NULL && s->holder == &H.lock, "body started without the fence and holder bound");
    FZ_CHECK(*s->fence >= 1 && *s->fence == H.cur, "body started with a fence that is not the granted token");
    FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD && ldl_lock_fencing_token(&H.lock) == *s->fence,
             "body started while not HELD with the bound fence");
    H.body_ran = 1; H.body_running = 1;
    b = fz_u8();
    switch (b % 10) {
    case 0: case 1: break;
    case 2: ret = 1 + (b >> 4); break;
    case 3: H.clock = H.start + H.window + (b >> 4); break;        /* body overran the lease */
    default: fz_reenter((uint8_t)(b >> 4)); break;
    }
    FZ_CHECK(*s->fence == s->fence_val, "fence changed while the body ran");
    H.body_running = 0; H.body_returned = 1;
    H.held_at_return = ldl_lock_state(&H.lock) == LDL_HELD;
    H.trusted_at_return = fz_trusted(H.clock);
    return ret;
}

/* ------------------------------------------------------------ grant bookkeeping */
/* the oracle's active grant ended: exactly one of on_lost / release-or-dispose */
static void fz_grant_check_end(void) {
    if (!H.grant_active) return;
    if (ldl_lock_state(&H.lock) == LDL_HELD && ldl_lock_fencing_token(&H.lock) == H.cur) return;
    if (H.in_store) return;            /* mid-call: let the call finish */
    FZ_CHECK(H.lost_fired + H.closed_by_release == 1,
             "a grant ended without exactly one of: on_lost, release/dispose");
    H.grant_active = 0;
    H.cur = 0;
}

static void fz_mark_release(void) {
    if (H.grant_active && ldl_lock_state(&H.lock) == LDL_HELD && !H.lost_fired)
        H.closed_by_release = 1;
}

/* ------------------------------------------------------------ after-step checks */
static void fz_check_step(void) {
    int st = ldl_lock_state(&H.lock);
    int64_t tok = ldl_lock_fencing_token(&H.lock);
    uint32_t due;
    FZ_CHECK(st >= LDL_IDLE && st <= LDL_LOST, "state is not one of the six");
    FZ_CHECK(st != LDL_ACQUIRING && st != LDL_RELEASING, "transient state left behind after a call");
    FZ_CHECK(ldl_lock_held(&H.lock) == (st == LDL_HELD), "held() disagrees with state()");
    if (st == LDL_HELD) {
        FZ_CHECK(tok >= 1, "HELD with a token < 1");
        FZ_CHECK(H.grant_active && tok == H.cur, "HELD with a token the oracle did not see granted");
        FZ_CHECK(!H.disposed, "HELD after dispose");
        if (H.timer_mode) FZ_CHECK(H.armed != 0, "HELD in timer mode without the heartbeat armed");
        due = ldl_lock_due_in_ms(&H.lock);
        if (!fz_trusted(H.clock)) {
            FZ_CHECK(due == 0, "due_in_ms not 0 past the deadline");
        } else {
            uint64_t el = H.clock - H.start, want = H.window - el;
            if (!H.timer_mode) { uint64_t beat = el >= H.hb ? 0 : H.hb - el; if (beat < want) want = beat; }
            FZ_CHECK(due == want, "due_in_ms is not min(heartbeat, deadline)");
            FZ_CHECK(due <= H.ttl, "due_in_ms exceeds the TTL");
        }
        FZ_CHECK(ldl_lock_reason(&H.lock) == LDL_REASON_NONE, "HELD with a reason other than NONE");
    } else {
        FZ_CHECK(tok == 0, "a token reported while not HELD");
        FZ_CHECK(H.armed == 0, "heartbeat timer still armed while not HELD");
        FZ_CHECK(ldl_lock_due_in_ms(&H.lock) == UINT32_MAX, "due_in_ms not UINT32_MAX while not HELD");
        FZ_CHECK(ldl_lock_valid_ms(&H.lock) == 0, "valid_ms not 0 while not HELD");
    }
    if (H.disposed) FZ_CHECK(st == LDL_RELEASED, "state after dispose is not RELEASED");
    FZ_CHECK(H.expect_lost == 0, "a renew failed / timer was unarmable but on_lost never fired");
    fz_grant_check_end();
}

/* ------------------------------------------------------------ operations */
static void fz_op(int op) {
    int st0 = ldl_lock_state(&H.lock), rc, reason0 = ldl_lock_reason(&H.lock);
    int nested = H.in_store > 0;            /* re-entry from inside a store call */
    uint64_t now0 = H.clock;
    int trusted0 = st0 == LDL_HELD && fz_trusted(now0);
    unsigned renews0 = H.renews, releases0 = H.releases, acquires0 = H.acquires;
    int dead = H.disposed || !H.init_ok;
    FZ_TRACE("op %d state=%s clock=%llu nested=%d\n", op, ldl_state_name(st0), (unsigned long long)now0, nested);
    H.depth++;
    switch (op) {
    case OP_ACQUIRE:
        rc = ldl_lock_acquire(&H.lock);
        if (dead || nested || (st0 != LDL_IDLE && st0 != LDL_RELEASED)) {
            FZ_CHECK(rc == LDL_ESTATE, "acquire not LDL_ESTATE when not allowed");
            FZ_CHECK(H.acquires == acquires0, "acquire called the store when not allowed");
        } else {
            FZ_CHECK(rc == 0 || rc == 1, "acquire answered neither 0 nor 1");
            /* >= : on_lost (fired inside this acquire when the timer cannot be
               armed) may legally acquire again once a re-entrant release made
               the lock RELEASED */
            FZ_CHECK(H.acquires >= acquires0 + 1, "acquire did not call the store");
            if (rc == 1) FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD && H.grant_active,
                                  "acquire answered 1 but the lock is not HELD with the grant");
            else FZ_CHECK(ldl_lock_state(&H.lock) != LDL_HELD || H.acquires > acquires0 + 1,
                          "acquire answered 0 but HELD (and no nested acquire from on_lost)");
        }
        break;
    case OP_RELEASE:
        fz_mark_release();
        rc = ldl_lock_release(&H.lock);
        if (nested) {
            FZ_CHECK(rc == 0, "re-entrant release did not answer 0");
            if (!dead && (st0 == LDL_HELD || st0 == LDL_LOST || st0 == LDL_ACQUIRING || st0 == LDL_RELEASING)) {
                FZ_CHECK(ldl_lock_state(&H.lock) == LDL_RELEASED, "re-entrant release: not RELEASED at once");
                H.interrupted = 1;
            }
        } else if (dead || st0 == LDL_IDLE || st0 == LDL_RELEASED) {
            FZ_CHECK(rc == 0, "release with nothing to release did not answer 0");
            FZ_CHECK(H.releases == releases0, "release with nothing to release called the store");
        } else {
            FZ_CHECK(rc == 1 || rc == 0 || rc == LDL_ESTORE, "release answered outside {1,0,ESTORE}");
            FZ_CHECK(ldl_lock_state(&H.lock) == LDL_RELEASED, "release did not end RELEASED");
            if (st0 == LDL_LOST) FZ_CHECK(ldl_lock_reason(&H.lock) == reason0, "release from LOST changed the loss reason");
            if (st0 == LDL_HELD) {
                FZ_CHECK(H.releases >= releases0 + 1, "release from HELD did not call store.release");
                FZ_CHECK(ldl_lock_reason(&H.lock) == LDL_REASON_RELEASED ||
                         ldl_lock_reason(&H.lock) == LDL_REASON_DISPOSED, "release from HELD: reason");
            }
            if (H.releases == releases0 + 1)
                FZ_CHECK(rc == (H.last_release_ans == 1 ? 1 : H.last_release_ans == 0 ? 0 : LDL_ESTORE),
                         "release answer does not map the store's answer");
        }
        break;
    case OP_TICK:
        rc = ldl_lock_tick(&H.lock);
        if (dead) FZ_CHECK(rc == 0, "tick after dispose did not answer 0");
        else if (nested) FZ_CHECK(rc == LDL_ESTATE, "re-entrant tick did not answer LDL_ESTATE");
        else if (st0 != LDL_HELD) FZ_CHECK(rc == 0, "tick while not HELD did not answer 0");
        else if (!trusted0) {
            FZ_CHECK(rc == 0 && H.renews == renews0, "tick past the deadline renewed");
        } else {
            /* >= : on_lost fired by this tick may run the lock again (see acquire) */
            FZ_CHECK(H.renews >= renews0 + 1, "tick while HELD did not renew");
            FZ_CHECK(rc == 0 || rc == 1, "tick answered neither 0 nor 1");
            if (rc == 1) FZ_CHECK(ldl_lock_state(&H.lock) == LDL_HELD, "tick answered 1 while not HELD");
        }
        if (dead || nested || st0 != LDL_HELD) FZ_CHECK(H.renews == renews0, "tick renewed when it must not");
        if (!dead && !nested && st0 == LDL_HELD && !trusted0)
            FZ_CHECK(ldl_lock_state(&H.lock) != LDL_HELD, "tick past the deadline left the lock HELD");
        break;
    case OP_POLL:
        rc = ldl_lock_poll(&H.lock);
        if (dead) FZ_CHECK(rc == 0, "poll after dispose did not answer 0");
        else if (nested) FZ_CHECK(rc == LDL_ESTATE, "re-entrant poll did not answer LDL_ESTATE");
        else if (st0 != LDL_HELD) FZ_CHECK(rc == 0, "poll while not HELD did not answer 0");
        else if (!trusted0) {
            FZ_CHECK(rc == 0, "poll past the deadline answered 1");
            FZ_CHECK(H.renews == renews0, "poll past the deadline asked the store");
        } else if (H.timer_mode) {
            FZ_CHECK(H.renews == renews0 && rc == 1, "poll in timer mode renewed or lost");
        }   /* manual mode, trusted: fz_poll_top checks "renew exactly when due" */
        if (dead || nested || st0 != LDL_HELD) FZ_CHECK(H.renews == renews0, "poll renewed when it must not");
        if (!dead && !nested && st0 == LDL_HELD && !trusted0)
            FZ_CHECK(ldl_lock_state(&H.lock) != LDL_HELD, "poll past the deadline left the lock HELD");
        break;
    case OP_RUN: {
        ldl_run_result res;
        int saved_in_run = H.in_run, saved_running = H.body_running, saved_ret = H.body_returned;
        int saved_ran = H.body_ran, saved_lost = H.lost_in_run;
        fz_scope *saved_scope = H.run_scope;
        int nscope0 = H.nscope, i;
        H.in_run = 1; H.body_running = 0; H.body_returned = 0; H.body_ran = 0; H.lost_in_run = 0;
        H.run_scope = NULL;
        memset(&res, 0x5a, sizeof res);
        rc = ldl_lock_run(&H.lock, fz_body, &H, &res);
        if (dead || nested || (st0 != LDL_IDLE && st0 != LDL_RELEASED)) {
            FZ_CHECK(rc == LDL_ESTATE && !H.body_ran, "run not LDL_ESTATE when not allowed");
        } else {
            int clean = res.shutdown_rc == 0 && res.release_rc != LDL_ESTORE;
            FZ_CHECK(res.release_rc == 1 || res.release_rc == 0 || res.release_rc == LDL_ESTORE,
                     "run: release_rc outside {1,0,ESTORE}");
            for (i = nscope0; i < H.nscope; i++)
                FZ_CHECK(!H.scope[i].open, "run returned with its child scope still open");
            if (!H.body_ran) {
                FZ_CHECK(rc == LDL_ENOTACQUIRED || rc == LDL_EFENCE, "run: body never ran but rc says it did");
                FZ_CHECK(res.body_rc == 0, "run: body_rc non-zero though the body never ran");
            } else {
                if (res.body_rc != 0) FZ_CHECK(rc == (clean ? LDL_EBODY : LDL_EAGGREGATE), "run: body failure rc");
                else if (!clean) FZ_CHECK(rc == LDL_ECLEANUP, "run: cleanup failure rc");
                else FZ_CHECK(rc == (res.lost_reason ? LDL_ELOST : LDL_OK), "run: rc vs lost_reason");
                FZ_CHECK((res.lost_reason != 0) == (H.lost_in_run != 0),
                         "run: lost_reason disagrees with on_lost during the body");
                if (H.held_at_return && !H.trusted_at_return)
                    FZ_CHECK(H.lost_in_run, "run: the deadline passed while the body ran but it was not counted as lost");
            }
        }
        H.in_run = saved_in_run; H.body_running = saved_running; H.body_returned = saved_ret;
        H.body_ran = saved_ran; H.lost_in_run = saved_lost; H.run_scope = saved_scope;
        break;
    }
    case OP_DISPOSE: {
        int was_disposed = H.disposed;
        fz_mark_release();
        H.disposed = 1;
        if (!nested) H.dispose_running++;
        ldl_lock_dispose(&H.lock);
        if (!nested) H.dispose_running--;
        /* a dispose nested inside the first dispose's own store.release is an
           idempotent no-op; the outer dispose is still RELEASING then */
        if (!(was_disposed && nested && ldl_lock_state(&H.lock) == LDL_RELEASING))
            FZ_CHECK(ldl_lock_state(&H.lock) == LDL_RELEASED, "dispose did not leave RELEASED");
        if (nested && !was_disposed && H.init_ok) H.interrupted = 1;
        break;
    }
    case OP_VALID: {
        uint32_t v = ldl_lock_valid_ms(&H.lock);
        FZ_CHECK(v <= H.ttl, "valid_ms exceeds the TTL");
        if (st0 != LDL_HELD || dead) FZ_CHECK(v == 0, "valid_ms non-zero while not HELD");
        else if (!trusted0) {
            FZ_CHECK(v == 0, "valid_ms non-zero past the deadline");
            if (!nested) FZ_CHECK(ldl_lock_state(&H.lock) != LDL_HELD, "valid_ms past the deadline left HELD");
        } else FZ_CHECK(v == H.window - (now0 - H.start), "valid_ms != start + ttl - drift - now");
        break;
    }
    case OP_FIRE:
        if (H.armed) {
            void (*f)(void *) = H.armed_fire;
            void *a = H.armed_arg;
            H.armed = 0;                          /* a one-shot is spent when it fires */
            f(a);
            /* the heartbeat fired on a held, trusted lease: it must renew */
            if (!dead && !nested && st0 == LDL_HELD && trusted0)
                FZ_CHECK(H.renews >= renews0 + 1, "heartbeat timer fired on a trusted lease without a renew");
            if (!dead && !nested && st0 == LDL_HELD && !trusted0)
                FZ_CHECK(H.renews == renews0 && ldl_lock_state(&H.lock) != LDL_HELD,
                         "heartbeat timer past the deadline renewed or kept the lease");
        }
        break;
    case OP_STALE_FIRE:                            /* a timer that fires after dispose */
        if (H.disposed && H.last_fire) {
            unsigned n0 = H.renews + H.releases + H.acquires;
            H.last_fire(H.last_arg);
            FZ_CHECK(H.renews + H.releases + H.acquires == n0, "a stale timer after dispose touched the store");
        }
        break;
    case OP_CLOCK:
        fz_move_clock(fz_u8());
        break;
    default:
        break;
    }
    H.depth--;
}

/* poll's due check needs the start before the call */
static void fz_poll_top(void) {
    int st0 = ldl_lock_state(&H.lock);
    uint64_t start0 = H.start, now0 = H.clock;
    unsigned renews0 = H.renews;
    int live = !H.disposed && H.init_ok && st0 == LDL_HELD && fz_trusted(now0) && !H.timer_mode;
    fz_op(OP_POLL);
    if (live) {
        if (now0 - start0 >= H.hb) FZ_CHECK(H.renews >= renews0 + 1, "poll: heartbeat due but no renew");
        else FZ_CHECK(H.renews == renews0, "poll renewed before the heartbeat was due");
    }
}

/* ------------------------------------------------------------ one input */
static void fz_config(void) {
    static const uint32_t ttls[16] = { 4, 5, 6, 7, 9, 10, 16, 100, 101, 1000, 30000, 65537,
                                       UINT32_MAX, UINT32_MAX - 1u, 3, 0 };
    uint8_t c0 = fz_u8(), c1 = fz_u8(), c2 = fz_u8(), c3 = fz_u8();
    uint32_t ttl = ttls[c0 & 15], hb, drift;
    switch (c1 & 7) {
    case 0: case 1: hb = 0; break;                 /* default ttl/3 */
    case 2: hb = ttl / 2; break;                   /* exactly TTL/2 */
    case 3: hb = 1; break;
    case 4: hb = ttl / 2 + 1; break;               /* invalid */
    case 5: hb = ttl / 4 ? ttl / 4 : 1; break;
    default: hb = (uint32_t)(c1 >> 3) + 1u; break;
    }
    switch (c2 & 7) {
    case 0: case 1: case 2: drift = 0; break;      /* default ttl/100 + 2 */
    case 3: drift = 1; break;
    case 4: drift = ttl - (hb ? hb : ttl / 3) - 1u; break;  /* largest valid */
    case 5: drift = ttl - (hb ? hb : ttl / 3); break;       /* invalid */
    default: drift = (uint32_t)(c2 >> 3); break;
    }
    H.timer_mode = (c3 & 1) != 0;
    switch ((c3 >> 1) & 3) {
    case 0: H.clock = 0; break;
    case 1: H.clock = 1000; break;
    case 2: H.clock = UINT64_MAX - (uint64_t)(c3 >> 3) * 1000u; break;
    default: H.clock = (uint64_t)1 << 63; break;
    }
    H.ttl = ttl;
    H.hb = hb ? hb : ttl / 3;
    H.drift = drift ? drift : ttl / 100 + 2;
    H.window = H.ttl - H.drift;   /* only meaningful when init succeeds */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ldl_lock_desc d;
    ldl_store st;
    int rc, i;
    memset(&H, 0, sizeof H);
    if (fz_trace < 0) fz_trace = getenv("FZ_TRACE") != NULL;
    fz_p = data; fz_n = size; fz_i = 0;
    fz_config();

    memset(&d, 0, sizeof d);
    st.acquire = fz_store_acquire; st.renew = fz_store_renew; st.release = fz_store_release; st.ctx = &H;
    d.container.scope = fz_scope_new; d.container.value = fz_scope_value;
    d.container.shutdown = fz_scope_shutdown; d.container.self = &H;
    d.key = FZ_KEY;
    d.ttl_ms = H.ttl;
    d.heartbeat_ms = H.hb == H.ttl / 3 ? 0 : H.hb;
    d.drift_ms = H.drift == H.ttl / 100 + 2 ? 0 : H.drift;
    d.store = &st;
    d.clock.now_ms = fz_now; d.clock.ctx = &H;
    if (H.timer_mode) { d.timers.set_timeout = fz_set_timeout; d.timers.clear_timeout = fz_clear_timeout; }
    d.on_lost = fz_on_lost; d.user = &H;
    rc = ldl_lock_init(&H.lock, &d);
    {   /* the oracle's own validity rule (SPEC: checked after defaults, 64-bit) */
        int valid = H.ttl > 0 && H.hb >= 1 && (uint64_t)H.hb * 2u <= H.ttl &&
                    (uint64_t)H.drift < (uint64_t)H.ttl - H.hb;
        FZ_CHECK((rc == LDL_OK) == valid, "init accepted/refused a configuration against the SPEC rule");
        FZ_CHECK(rc == LDL_OK || rc == LDL_EINVAL, "init answered neither OK nor EINVAL");
    }
    H.init_ok = rc == LDL_OK;
    if (!H.init_ok) {
        FZ_CHECK(ldl_lock_state(&H.lock) == LDL_RELEASED, "failed init: state not RELEASED");
        H.disposed = 1;   /* behaves as disposed: no store call ever */
    }

    for (i = 0; fz_more() && i < 400; i++) {
        uint8_t b = fz_u8();
        H.step = i;
        switch (b % 12) {
        case 0: case 1: fz_op(OP_ACQUIRE); break;
        case 2: fz_op(OP_RELEASE); break;
        case 3: fz_op(OP_TICK); break;
        case 4: fz_poll_top(); break;
        case 5: fz_op(OP_RUN); break;
        case 6: if ((b >> 4) == 15) fz_op(OP_DISPOSE); else fz_poll_top(); break;
        case 7: fz_op(OP_VALID); break;
        case 8: fz_op(OP_FIRE); break;
        case 9: case 10: fz_op(OP_CLOCK); break;
        default: fz_op(OP_STALE_FIRE); break;
        }
        fz_check_step();
    }
    /* the end: dispose, then the ledger must balance */
    H.step = -1;
    fz_op(OP_DISPOSE);
    fz_check_step();
    fz_op(OP_STALE_FIRE);
    fz_op(OP_TICK);
    fz_op(OP_POLL);
    fz_op(OP_ACQUIRE);
    for (i = 0; i < H.nlease; i++)
        if (H.lease[i].releases != H.lease[i].opens) {
            fprintf(stderr, "fuzz_lock: lease token %lld granted %u time(s), released %u time(s)\n",
                    (long long)H.lease[i].tok, H.lease[i].opens, H.lease[i].releases);
            fz_fail("lease ledger does not balance after dispose: a grant was forgotten");
        }
    return 0;
}
