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

   v0.2 (issue 9): the high nibble of the first byte also picks the store.
   8..13: a deferred scripted non-blocking store (refuses, malformed returns,
   answers inside the submit or queued and completed by pump steps in any
   order, late yeses, re-entry from submit and cancel; see "the deferred
   async store" below) with extra invariants on the one request slot and a
   ledger shared by lock and store. 15: the MemoryStore's synchronous and
   non-blocking views side by side, every observable must agree. Else: the
   synchronous scripted store as before.

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
#include "lite_di_lock.h"         /* the declarations first (they pick the clock) */
#include "lifecycle_edges.h"     /* the transition oracle: before the implementation */
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

/* a request the async store queued: attached to the lock's op until it is
   completed or cancelled, then detached (the store owns its outcome) */
#define FZ_MAXQ 32
typedef struct { int kind; ldl_op *op; int64_t tok; uint64_t pre; int handback; } fz_req;

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

    /* non-blocking stores (v0.2): mode 0 = the scripted synchronous store,
       1 = the deferred scripted async store, 2 = parity of the MemoryStore's
       synchronous and non-blocking views */
    int mode;
    ldl_op *op;            /* the op the lock submits (the same one every time) */
    fz_req q[FZ_MAXQ]; int nq;   /* queued requests, attached (op) or detached */
    int in_complete;       /* inside ldl_op_complete */
    unsigned nlost, cancels, ureleases;   /* ureleases: user releases (state RELEASING) */
    int64_t tokgen;        /* fresh tokens for the async store */
    struct { int has, kind, rc; int64_t tok; uint64_t pre; } rec;  /* answered, not applied */
    int rel_ans, rel_applied;   /* a release that applies a recorded (or timed-out) release answers rel_ans */
    int ans_applied, ans_want;  /* what applying leaves in ldl_lock_answer() */
    unsigned cuts;         /* re-entrant releases (they set ldl_lock_answer() to 0) */
    int reason_keep;       /* the applied answer or timeout leaves the reason untouched */
    unsigned lostre;       /* on_lost re-entered the lock */
    int acq_nogrant;       /* the last acquire answer was no grant at all (reason untouched) */
    int acq_reason;        /* the reason when that acquire was submitted */
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

static fz_req *fz_attached_req(void);

static void fz_move_clock(uint8_t b) {
    uint64_t base = H.start;
    if (H.mode == 1) {   /* the boundaries of the request in flight too */
        fz_req *rq = fz_attached_req();
        if (rq && (b & 0x80)) base = rq->pre;
        if (b % 16 == 13) { H.clock = base + H.ttl - 1u; return; }   /* RELEASING's timeout */
        if (b % 16 == 14) { H.clock = base + H.ttl; return; }
    }
    switch (b % 16) {
    case 0:  H.clock += 1; break;
    case 1:  H.clock += H.hb ? H.hb - 1u : 0u; break;
    case 2:  H.clock = base + H.hb; break;                 /* heartbeat exactly due */
    case 3:  H.clock = base + H.hb - 1u; break;
    case 4:  H.clock = base + H.window - 1u; break;        /* last trusted ms */
    case 5:  H.clock = base + H.window; break;             /* deadline exactly */
    case 6:  H.clock += (uint64_t)1 << 40; break;          /* huge jump */
    case 7:  H.clock -= 1; break;                          /* backwards */
    case 8:  H.clock -= (uint64_t)H.ttl + 5u; break;       /* far backwards */
    case 9:  H.clock = UINT64_MAX - (b >> 4); break;       /* near the top */
    case 10: H.clock += UINT64_MAX / 2u; break;            /* half the range: wraps later */
    case 11: H.clock += (uint64_t)H.ttl; break;
    case 12: H.clock = base + H.hb + 1u; break;
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
static void fz_aop(int op);

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
        if (tok >= 1 && ans == 1) {          /* a no names no lease (even when cut) */
            ls = fz_lease_of(tok, 1);
            if (ls) ls->opens++;
        }
        if (intr && ans == 1 && tok >= 1 && H.disposed && H.nhandback < 8) H.handback_ok[H.nhandback++] = tok;
        /* v0.2: a grant whose window closed during the call (a slow store) is
           refused and handed back; only an accepted grant raises the floor */
        if (!intr) fz_eval_grant(ans, tok, pre, H.clock);
        H.acq_nogrant = !intr && (ans != 1 || tok < 1);
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

/* ------------------------------------------------------------ the deferred async store (mode 1)
   A scripted non-blocking store. Each submit either refuses (a negative
   return: nothing queued), answers with a malformed positive return (the
   request stays queued: the lock must cancel it), answers inside the call
   (before or after re-entering the lock, possibly after a slow clock move:
   a late answer), or queues the request. The script's pump steps complete
   queued requests in any order, any number of steps later, with any answer
   (sometimes a second, ignored completion). A cancelled request stays queued
   detached: when it completes, an ACQUIRE answer that carries a token in
   [1, INT64_MAX] is released by the store itself (SPEC's cancel rule).
   submit and cancel may re-enter the lock. Every release (the lock's and the
   store's own) goes through the lease ledger. */
static int fz_ledger_full;
static void fz_ledger_open(int64_t tok) {
    fz_lease *ls = fz_lease_of(tok, 1);
    if (ls) ls->opens++; else fz_ledger_full = 1;
}
static void fz_ledger_release(int64_t token, const char *who) {
    fz_lease *ls;
    FZ_CHECK(token >= 1, who);
    ls = fz_lease_of(token, 0);
    if (!ls) { FZ_CHECK(fz_ledger_full, "release of a token the store never granted"); return; }
    FZ_CHECK(ls->releases < ls->opens, "a token released twice across lock and store (ledger overdrawn)");
    ls->releases++;
}

static int fz_attached(void) {
    int i, n = 0;
    for (i = 0; i < H.nq; i++) if (H.q[i].op) n++;
    return n;
}
static fz_req *fz_attached_req(void) {
    int i;
    for (i = 0; i < H.nq; i++) if (H.q[i].op) return &H.q[i];
    return NULL;
}

/* tokens for async acquire answers: mostly fresh and unique, so the ledger
   tells every lease apart */
static int64_t fz_a_token(uint8_t a, uint8_t t) {
    int64_t base;
    switch ((a >> 3) & 7) {
    case 0: case 1: case 2: case 3:
        base = H.tokgen > H.L ? H.tokgen : H.L;
        H.tokgen = base < INT64_MAX - 8 ? base + 1 + (t & 3) : INT64_MAX;
        return H.tokgen;
    case 4: return H.L;                                /* no advance */
    case 5: return H.L - 1;                            /* regressed */
    case 6: return (t & 1) ? 0 : (t & 2) ? INT64_MAX : INT64_MIN + (t >> 2);
    default: return -1 - (int64_t)(t >> 1);
    }
}

static void fz_eval_renew(int rc, uint64_t pre) {
    if (rc == 1) H.start = pre;      /* a late yes then fails the deadline check: LEASE_EXPIRED */
    else H.expect_lost = rc == 0 ? LDL_REASON_HEARTBEAT_FAILED : LDL_REASON_STORE_ERROR;
}

static void fz_complete(ldl_op *op, int rc, int64_t tok, int twice) {
    H.in_complete++;
    ldl_op_complete(op, rc, tok);
    if (twice) ldl_op_complete(op, 1, 987654321987LL);   /* the first answer stands */
    H.in_complete--;
    FZ_CHECK(ldl_lock_pending(&H.lock) == 1, "ldl_lock_pending() is not 1 after ldl_op_complete");
}

static int fz_a_submit(int kind, ldl_op *op, const char *key, int64_t token, uint32_t ttl) {
    static const int neg[4] = { -1, LDL_ESTORE, INT_MIN, LDL_EINPROGRESS };   /* a store's own EINPROGRESS is an error */
    static const int pos[4] = { 1, 2, INT_MAX, 7 };
    uint8_t s = fz_u8(), r = fz_u8();
    int st = ldl_lock_state(&H.lock), saved_int = H.interrupted, intr, ret = LDL_OK, inside = 0;
    int rc = 0, handback = kind == LDL_OP_RELEASE && st != LDL_RELEASING;
    int64_t atok = 0;
    uint64_t pre = H.clock;
    FZ_CHECK(H.in_complete == 0, "a submit from inside ldl_op_complete");
    FZ_CHECK(op != NULL && (const char *)op >= (const char *)&H.lock &&
             (const char *)(op + 1) <= (const char *)(&H.lock + 1), "submit: the op does not live inside the lock");
    if (!H.op) H.op = op;
    FZ_CHECK(op == H.op, "submit: another op than before (one request slot per lock)");
    FZ_CHECK(fz_attached() == 0, "a second request submitted while one is in flight");
    FZ_CHECK(ldl_lock_pending(&H.lock) == 1, "a submit while ldl_lock_pending() is 0");
    FZ_CHECK(strcmp(key, FZ_KEY) == 0, "submit: wrong key");
    switch (kind) {
    case LDL_OP_ACQUIRE:
        FZ_CHECK(!H.disposed, "async acquire after dispose");
        fz_grant_check_end();
        FZ_CHECK(ttl == H.ttl, "async acquire: wrong ttl");
        FZ_CHECK(st == LDL_ACQUIRING, "async acquire while not ACQUIRING");
        H.acquires++;
        H.acq_reason = ldl_lock_reason(&H.lock);
        break;
    case LDL_OP_RENEW:
        FZ_CHECK(!H.disposed, "async renew after dispose");
        FZ_CHECK(ttl == H.ttl, "async renew: wrong ttl");
        FZ_CHECK(st == LDL_HELD, "async renew while not HELD");
        FZ_CHECK(H.grant_active && token == H.cur && token >= 1, "async renew of a token that is not the active grant");
        FZ_CHECK(fz_trusted(H.clock), "async renew after the local deadline");
        H.renews++;
        break;
    default:
        FZ_CHECK(kind == LDL_OP_RELEASE, "submit of an unknown kind");
        fz_ledger_release(token, "async release of a token < 1");
        if (H.disposed && !H.dispose_running)
            FZ_CHECK(handback, "a user release submitted after dispose");
        H.releases++;
        if (!handback) H.ureleases++;
        break;
    }
    FZ_TRACE("async submit kind=%d tok=%lld s=%u r=%u clock=%llu\n", kind, (long long)token, s, r,
             (unsigned long long)H.clock);
    if (H.nq == FZ_MAXQ && (s & 7) != 2 && (s & 7) != 3) s = 0;   /* queue full: refuse */
    H.in_store++;
    H.interrupted = 0;
    switch (s & 7) {
    case 0: ret = neg[(s >> 3) & 3]; break;                      /* refused: nothing queued */
    case 2: case 3: inside = 1; break;                           /* answered inside the call */
    default:                                                     /* queued (case 1: malformed return) */
        if ((s & 7) == 1) ret = pos[(s >> 3) & 3];
        H.q[H.nq].kind = kind; H.q[H.nq].op = op; H.q[H.nq].tok = token;
        H.q[H.nq].pre = pre; H.q[H.nq].handback = handback; H.nq++;
        break;
    }
    if (inside) {
        uint8_t a = fz_u8(), t = fz_u8();
        rc = fz_answer(a);
        if (kind == LDL_OP_ACQUIRE) atok = fz_a_token(a, t);
        if (!(r & 8)) fz_complete(op, rc, atok, (t & 0x80) != 0);
        if (kind != LDL_OP_RELEASE && (r & 7) == 7)
            H.clock += (uint64_t)(r >> 4) * (H.ttl / 8u + 1u);  /* a slow answer: maybe late */
        if ((r >> 6) == 3) { H.lostre += (unsigned)handback; fz_reenter(fz_u8()); }
        if (r & 8) fz_complete(op, rc, atok, (t & 0x80) != 0);
    } else if ((r >> 6) == 3) {
        H.lostre += (unsigned)handback;   /* a hand-back's re-entry changes the outer call */
        fz_reenter(fz_u8());
    }
    H.in_store--;
    intr = H.interrupted;
    H.interrupted = saved_int;
    switch (kind) {
    case LDL_OP_ACQUIRE:
        /* the lock hands back a token it was granted but cannot use (an
           interrupted call too; a no names no lease of ours: decision 0003) */
        if (inside && atok >= 1 && rc == 1) fz_ledger_open(atok);
        if (inside && !intr) fz_eval_grant(rc, atok, pre, H.clock);
        H.acq_nogrant = !intr && (inside ? rc != 1 || atok < 1 : ret != LDL_OK);
        break;
    case LDL_OP_RENEW:
        if (!intr) {
            if (inside) fz_eval_renew(rc, pre);
            else if (ret != LDL_OK) H.expect_lost = LDL_REASON_STORE_ERROR;
        }
        break;
    default:
        H.last_release_ans = inside ? rc : ret != LDL_OK ? -1 : 0;
        break;
    }
    return ret;
}

static int fz_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl) {
    (void)ctx; return fz_a_submit(LDL_OP_ACQUIRE, op, key, 0, ttl);
}
static int fz_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl) {
    (void)ctx; return fz_a_submit(LDL_OP_RENEW, op, key, token, ttl);
}
static int fz_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    (void)ctx; return fz_a_submit(LDL_OP_RELEASE, op, key, token, H.ttl);
}

static void fz_a_cancel(void *ctx, ldl_op *op) {
    int i, saved_int = H.interrupted;
    uint8_t r;
    (void)ctx;
    FZ_CHECK(H.in_complete == 0, "cancel from inside ldl_op_complete");
    FZ_CHECK(op != NULL && op == H.op, "cancel of an op the lock never submitted");
    H.cancels++;
    for (i = 0; i < H.nq; i++) if (H.q[i].op == op) H.q[i].op = NULL;   /* detached */
    FZ_TRACE("async cancel\n");
    r = fz_u8();
    if ((r & 15) == 15) {
        H.in_store++;
        H.interrupted = 0;
        H.lostre++;                   /* a re-entry that can change the outer call's course */
        fz_reenter((uint8_t)(r >> 4));
        H.in_store--;
        /* cut while a malformed renew answer was being detached: no loss */
        if (H.interrupted && ldl_lock_state(&H.lock) == LDL_RELEASED) H.expect_lost = 0;
    }
    H.interrupted = saved_int;
}

/* the store's pump: complete queued request i */
static void fz_complete_req(int i) {
    fz_req rq = H.q[i];
    uint8_t a = fz_u8(), t = fz_u8();
    int rc = fz_answer(a);
    int64_t tok = rq.kind == LDL_OP_ACQUIRE ? fz_a_token(a, t) : 0;
    memmove(&H.q[i], &H.q[i + 1], (size_t)(H.nq - i - 1) * sizeof H.q[0]);
    H.nq--;
    FZ_TRACE("async complete kind=%d attached=%d rc=%d tok=%lld\n", rq.kind, rq.op != NULL, rc, (long long)tok);
    if (rq.op) {
        FZ_CHECK(!rq.handback, "a fire-and-forget hand-back was still attached when the store answered");
        FZ_CHECK(!H.disposed, "a store still holds the op after dispose");
        if (rq.kind == LDL_OP_ACQUIRE && rc == 1 && tok >= 1) fz_ledger_open(tok);
        fz_complete(rq.op, rc, tok, (t & 0x80) != 0);
        H.rec.has = 1; H.rec.kind = rq.kind; H.rec.rc = rc; H.rec.tok = tok; H.rec.pre = rq.pre;
        if (rq.kind == LDL_OP_RELEASE) H.last_release_ans = rc;
    } else if (rq.kind == LDL_OP_ACQUIRE && tok >= 1) {
        fz_ledger_open(tok);                       /* the store's own release of a */
        fz_ledger_release(tok, "store-side release");  /* cancelled acquire's grant */
    }
}

static void fz_pump(uint8_t b) {
    if (H.nq == 0) return;
    if ((b & 7) == 7) { while (H.nq) fz_complete_req(0); }
    else fz_complete_req((int)((unsigned)(b >> 3) % (unsigned)H.nq));
}

/* what an applying call does first (SPEC Precisions): the recorded answer,
   or the ACQUIRING / RELEASING timeout. Updates the oracle's grant and
   returns the state the lock must be in before the call's own work. */
static int fz_a_preapply(int drop_renew) {   /* 1: release/dispose, 2: acquire */
    int st = ldl_lock_state(&H.lock);
    fz_req *rq = fz_attached_req();
    H.rel_ans = 0; H.rel_applied = 0; H.ans_applied = 0; H.reason_keep = 0;
    if (H.rec.has) {
        H.rec.has = 0;
        switch (H.rec.kind) {
        case LDL_OP_ACQUIRE:
            FZ_CHECK(st == LDL_ACQUIRING, "a recorded acquire answer while not ACQUIRING");
            H.ans_applied = 1;
            H.reason_keep = H.rec.rc != 1 || H.rec.tok < 1;     /* no grant at all */
            H.ans_want = fz_eval_grant(H.rec.rc, H.rec.tok, H.rec.pre, H.clock);
            return H.ans_want ? LDL_HELD : LDL_IDLE;
        case LDL_OP_RENEW:
            FZ_CHECK(st == LDL_HELD, "a recorded renew answer while not HELD");
            if (drop_renew == 1) return LDL_HELD;
            if (drop_renew == 2 && H.rec.rc == 1) {   /* acquire: no deadline check, and a */
                if (fz_within(H.rec.pre, H.clock)) H.start = H.rec.pre;   /* late yes changes nothing */
                return LDL_HELD;
            }
            fz_eval_renew(H.rec.rc, H.rec.pre);
            return H.rec.rc == 1 && fz_within(H.rec.pre, H.clock) ? LDL_HELD : LDL_LOST;
        default:
            FZ_CHECK(st == LDL_RELEASING, "a recorded release answer while not RELEASING");
            H.rel_ans = H.rec.rc == 1 ? 1 : H.rec.rc == 0 ? 0 : LDL_ESTORE;
            H.rel_applied = 1;
            H.ans_applied = 1; H.ans_want = H.rel_ans;
            return LDL_RELEASED;
        }
    }
    if (rq && rq->kind == LDL_OP_ACQUIRE && !fz_within(rq->pre, H.clock)) {
        H.ans_applied = 1; H.ans_want = 0;             /* timed out: reason unchanged */
        H.reason_keep = 1;
        return LDL_IDLE;
    }
    if (rq && rq->kind == LDL_OP_RELEASE && !(H.clock >= rq->pre && H.clock - rq->pre < H.ttl)) {
        H.rel_ans = LDL_ESTORE; H.rel_applied = 1;
        H.ans_applied = 1; H.ans_want = LDL_ESTORE;
        return LDL_RELEASED;
    }
    return st;
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
    FZ_CHECK(H.in_complete == 0, "on_lost from inside ldl_op_complete");
    H.nlost++;
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
    if ((r & 3) == 3) { H.lostre++; fz_reenter((uint8_t)(r >> 2)); }
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
static uint32_t fz_until(uint64_t start, uint64_t now, uint32_t w) {
    return (now >= start && now - start < w) ? (uint32_t)(w - (now - start)) : 0;
}

/* mode 1: the store's view of the slot agrees with the lock's */
static void fz_check_async(int st) {
    int pend = ldl_lock_pending(&H.lock), natt = fz_attached(), i, kind;
    fz_req *rq = fz_attached_req();
    uint32_t due = ldl_lock_due_in_ms(&H.lock), want;
    FZ_CHECK(natt <= 1, "more than one request in flight");
    for (i = 0; i < H.nq; i++)
        FZ_CHECK(!(H.q[i].op && H.q[i].handback), "a fire-and-forget hand-back still holds the slot after the call");
    FZ_CHECK(!(natt && H.rec.has), "an answered request and one in flight at once");
    FZ_CHECK(pend == (natt || H.rec.has), "ldl_lock_pending() disagrees with the store's view of the slot");
    kind = rq ? rq->kind : H.rec.has ? H.rec.kind : 0;
    if (kind) FZ_CHECK(st == (kind == LDL_OP_ACQUIRE ? LDL_ACQUIRING : kind == LDL_OP_RENEW ? LDL_HELD : LDL_RELEASING),
                       "the request in flight does not match the state");
    else FZ_CHECK(st != LDL_ACQUIRING && st != LDL_RELEASING, "ACQUIRING/RELEASING with nothing in flight");
    if (H.rec.has) want = 0;
    else if (st == LDL_ACQUIRING) want = fz_until(rq->pre, H.clock, H.window);
    else if (st == LDL_RELEASING) want = fz_until(rq->pre, H.clock, H.ttl);
    else if (st == LDL_HELD) {
        want = fz_until(H.start, H.clock, H.window);
        if (want && !rq) {
            uint64_t el = H.clock - H.start;
            uint32_t beat = el >= H.hb ? 0 : (uint32_t)(H.hb - el);
            if (beat < want) want = beat;
        }
    } else want = UINT32_MAX;
    FZ_CHECK(due == want, "due_in_ms is not what SPEC's table says for this slot and state");
    if (ldl_lock_answer(&H.lock) == LDL_EINPROGRESS)
        FZ_CHECK(st == LDL_ACQUIRING || st == LDL_RELEASING, "ldl_lock_answer() is EINPROGRESS with nothing pending");
    if (st != LDL_HELD && !pend) FZ_CHECK(ldl_lock_valid_ms(&H.lock) == 0, "valid_ms not 0 while not HELD");
    if (H.disposed) FZ_CHECK(natt == 0 && !pend, "after dispose a store still holds the op");
}

static void fz_check_step(void) {
    int st = ldl_lock_state(&H.lock);
    int64_t tok = ldl_lock_fencing_token(&H.lock);
    uint32_t due;
    FZ_CHECK(st >= LDL_IDLE && st <= LDL_LOST, "state is not one of the six");
    if (H.mode == 1) fz_check_async(st);
    else FZ_CHECK(st != LDL_ACQUIRING && st != LDL_RELEASING, "transient state left behind after a call");
    FZ_CHECK(ldl_lock_held(&H.lock) == (st == LDL_HELD), "held() disagrees with state()");
    if (st == LDL_HELD) {
        FZ_CHECK(tok >= 1, "HELD with a token < 1");
        FZ_CHECK(H.grant_active && tok == H.cur, "HELD with a token the oracle did not see granted");
        FZ_CHECK(!H.disposed, "HELD after dispose");
        if (H.timer_mode) FZ_CHECK(H.armed != 0, "HELD in timer mode without the heartbeat armed");
        due = ldl_lock_due_in_ms(&H.lock);
        if (H.mode == 1) {
            /* checked in fz_check_async */
        } else if (!fz_trusted(H.clock)) {
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
        if (H.mode != 1) {
            FZ_CHECK(ldl_lock_due_in_ms(&H.lock) == UINT32_MAX, "due_in_ms not UINT32_MAX while not HELD");
            FZ_CHECK(ldl_lock_valid_ms(&H.lock) == 0, "valid_ms not 0 while not HELD");
        }
    }
    if (H.disposed) FZ_CHECK(st == LDL_RELEASED, "state after dispose is not RELEASED");
    FZ_CHECK(H.expect_lost == 0, "a renew failed / timer was unarmable but on_lost never fired");
    fz_grant_check_end();
}

/* ------------------------------------------------------------ operations, non-blocking store (mode 1) */
static void fz_aop(int op) {
    int nested = H.in_store > 0, dead = H.disposed || !H.init_ok;
    int st0 = ldl_lock_state(&H.lock), st1 = st0, st, rc, reason1, trusted1;
    unsigned renews0 = H.renews, releases0 = H.releases, acquires0 = H.acquires;
    unsigned cuts0 = H.cuts, lostre0 = H.lostre, nlost0 = H.nlost, sent0 = H.renews + H.acquires + H.ureleases, ureleases0 = H.ureleases;
    int applies = !dead && !nested && op != OP_RUN;
    fz_req *att;
    uint64_t now0, start1;
    FZ_TRACE("aop %d state=%s clock=%llu nested=%d\n", op, ldl_state_name(st0), (unsigned long long)H.clock, nested);
    H.depth++;
    if (applies) st1 = fz_a_preapply(op == OP_RELEASE || op == OP_DISPOSE ? 1 : op == OP_ACQUIRE ? 2 : 0);
    att = fz_attached_req();
    now0 = H.clock;
    start1 = H.start;
    trusted1 = st1 == LDL_HELD && fz_trusted(now0);
    reason1 = ldl_lock_reason(&H.lock);
    /* a grant applied by release/dispose is then closed by them */
    if ((op == OP_RELEASE || op == OP_DISPOSE) && !dead) {
        if (applies) { if (st1 == LDL_HELD && H.grant_active && !H.lost_fired) H.closed_by_release = 1; }
        else fz_mark_release();
    }
    switch (op) {
    case OP_ACQUIRE:
        rc = ldl_lock_acquire(&H.lock);
        st = ldl_lock_state(&H.lock);
        if (H.lostre != lostre0) break;      /* on_lost (fired while applying) ran the lock */
        if (dead || nested || (st1 != LDL_IDLE && st1 != LDL_RELEASED)) {
            FZ_CHECK(rc == LDL_ESTATE, "async acquire not LDL_ESTATE when not allowed");
            FZ_CHECK(H.acquires == acquires0, "async acquire submitted when not allowed");
        } else {
            FZ_CHECK(rc == 1 || rc == 0 || rc == LDL_EINPROGRESS, "async acquire answered outside {1, 0, EINPROGRESS}");
            FZ_CHECK(H.acquires == acquires0 + 1, "async acquire did not submit exactly once");
            if (rc == 1) FZ_CHECK(st == LDL_HELD && H.grant_active && ldl_lock_fencing_token(&H.lock) == H.cur,
                                  "async acquire answered 1 but is not HELD with the grant");
            if (rc == LDL_EINPROGRESS) FZ_CHECK(st == LDL_ACQUIRING && fz_attached() == 1,
                                                "acquire answered EINPROGRESS but no acquire is in flight");
            if (rc == 0) FZ_CHECK(st != LDL_HELD && st != LDL_ACQUIRING, "async acquire answered 0 but HELD/ACQUIRING");
            if (rc == 0 && H.acq_nogrant)
                FZ_CHECK(ldl_lock_reason(&H.lock) == H.acq_reason, "an answer that is no grant changed the reason");
            FZ_CHECK(ldl_lock_answer(&H.lock) == rc, "ldl_lock_answer() is not acquire's answer");
        }
        break;
    case OP_RELEASE:
        rc = ldl_lock_release(&H.lock);
        st = ldl_lock_state(&H.lock);
        if (nested) {
            FZ_CHECK(rc == 0, "re-entrant release did not answer 0");
            if (!dead && (st0 == LDL_HELD || st0 == LDL_LOST || st0 == LDL_ACQUIRING || st0 == LDL_RELEASING)) {
                FZ_CHECK(st == LDL_RELEASED, "re-entrant release: not RELEASED at once");
                H.interrupted = 1;
            }
            H.cuts++;
            break;
        }
        if (dead) {
            FZ_CHECK(rc == 0 && H.ureleases == ureleases0, "release after dispose answered or sent something");
            break;
        }
        FZ_CHECK(H.nlost == nlost0, "release fired on_lost");
        if (H.lostre != lostre0) break;    /* a cancel re-entered the lock */
        switch (st1) {
        case LDL_IDLE: case LDL_RELEASED:
            FZ_CHECK(rc == (H.rel_applied ? H.rel_ans : 0),
                     "release: not the applied release answer (or 0 with nothing to release)");
            FZ_CHECK(H.ureleases == ureleases0 && st == st1, "release with nothing to release sent something");
            break;
        case LDL_ACQUIRING:
            FZ_CHECK(rc == 0 && st == LDL_RELEASED, "release from ACQUIRING: not 0 and RELEASED");
            FZ_CHECK(H.ureleases == ureleases0 && fz_attached() == 0, "release from ACQUIRING: the acquire was not cancelled");
            FZ_CHECK(ldl_lock_reason(&H.lock) == reason1, "release from ACQUIRING changed the reason");
            break;
        case LDL_RELEASING:
            FZ_CHECK(rc == LDL_EINPROGRESS && st == LDL_RELEASING && H.ureleases == ureleases0,
                     "release from RELEASING (in flight) did not answer EINPROGRESS without sending");
            break;
        default:   /* HELD, LOST */
            FZ_CHECK(rc == 1 || rc == 0 || rc == LDL_ESTORE || rc == LDL_EINPROGRESS, "release answered outside {1,0,ESTORE,EINPROGRESS}");
            if (rc == LDL_EINPROGRESS) FZ_CHECK(st == LDL_RELEASING && fz_attached() == 1, "release EINPROGRESS without a release in flight");
            else FZ_CHECK(st == LDL_RELEASED, "release did not end RELEASED");
            if (st1 == LDL_HELD) FZ_CHECK(H.releases >= releases0 + 1, "release from HELD sent no release");
            if (st1 == LDL_LOST) FZ_CHECK(ldl_lock_reason(&H.lock) == reason1, "release from LOST changed the loss reason");
            if (rc == 1 || rc == LDL_ESTORE)
                FZ_CHECK(rc == (H.last_release_ans == 1 ? 1 : H.last_release_ans == 0 ? 0 : LDL_ESTORE),
                         "release answer does not map the store's answer");
            break;
        }
        FZ_CHECK(ldl_lock_answer(&H.lock) == rc, "ldl_lock_answer() is not release's answer");
        break;
    case OP_TICK: case OP_POLL:
        rc = op == OP_TICK ? ldl_lock_tick(&H.lock) : ldl_lock_poll(&H.lock);
        st = ldl_lock_state(&H.lock);
        if (dead) { FZ_CHECK(rc == 0, "tick/poll after dispose did not answer 0"); break; }
        if (nested) {
            FZ_CHECK(rc == LDL_ESTATE && H.renews == renews0, "re-entrant tick/poll did not answer LDL_ESTATE");
            break;
        }
        if (H.nlost != nlost0) FZ_CHECK(rc == 0, "tick/poll lost the lease during the call but did not answer 0");
        if (H.ans_applied && H.lostre == lostre0 && H.cuts == cuts0) {
            FZ_CHECK(ldl_lock_answer(&H.lock) == H.ans_want, "ldl_lock_answer() is not the answer tick/poll applied");
            if (H.reason_keep) FZ_CHECK(ldl_lock_reason(&H.lock) == reason1, "a no-grant answer or the ACQUIRING timeout changed the reason");
        }
        if (st == LDL_HELD) FZ_CHECK(fz_trusted(H.clock), "HELD at or after start + ttl - drift after tick/poll");
        if (H.lostre != lostre0) break;
        switch (st1) {
        case LDL_ACQUIRING: case LDL_RELEASING:
            FZ_CHECK(rc == LDL_EINPROGRESS && st == st1, "tick/poll while ACQUIRING/RELEASING did not answer EINPROGRESS");
            FZ_CHECK(H.renews + H.acquires + H.ureleases == sent0, "tick/poll sent a request while one is in flight");
            break;
        case LDL_HELD:
            if (!trusted1) {
                FZ_CHECK(rc == 0 && st != LDL_HELD && H.renews == renews0, "tick/poll past the deadline renewed or kept the lease");
                FZ_CHECK(fz_attached() == 0, "the renew in flight was not cancelled at the deadline");
            } else if (att) {
                FZ_CHECK(rc == 1 && st == LDL_HELD && H.renews == renews0, "tick/poll with a renew in flight: not 1, or a second request");
            } else {
                int due = op == OP_TICK || now0 - start1 >= H.hb;
                FZ_CHECK(H.renews == renews0 + (unsigned)due, "async tick/poll: renew not exactly when due");
                FZ_CHECK(rc == 0 || rc == 1, "tick/poll while HELD answered neither 0 nor 1");
                if (rc == 1) FZ_CHECK(st == LDL_HELD, "tick/poll answered 1 while not HELD");
            }
            break;
        default:
            FZ_CHECK(rc == 0, "tick/poll while not HELD answered non-zero");
            FZ_CHECK(H.renews + H.acquires + H.ureleases == sent0, "tick/poll while not HELD sent a request");
            break;
        }
        break;
    case OP_VALID: {
        uint32_t v = ldl_lock_valid_ms(&H.lock);
        FZ_CHECK(v <= H.ttl, "valid_ms exceeds the TTL");
        if (applies && H.ans_applied && H.lostre == lostre0 && H.cuts == cuts0)
            FZ_CHECK(ldl_lock_answer(&H.lock) == H.ans_want, "ldl_lock_answer() is not the answer valid_ms applied");
        if (dead || st1 != LDL_HELD) FZ_CHECK(v == 0, "valid_ms non-zero while not HELD");
        else if (!trusted1) {
            FZ_CHECK(v == 0, "valid_ms non-zero past the deadline");
            if (applies && H.lostre == lostre0) FZ_CHECK(ldl_lock_state(&H.lock) != LDL_HELD, "valid_ms past the deadline left HELD");
        } else FZ_CHECK(v == H.window - (now0 - start1), "valid_ms != start + ttl - drift - now");
        break;
    }
    case OP_DISPOSE: {
        int was_disposed = H.disposed;
        H.disposed = 1;
        if (!nested) H.dispose_running++;
        ldl_lock_dispose(&H.lock);
        if (!nested) H.dispose_running--;
        st = ldl_lock_state(&H.lock);
        if (!(was_disposed && nested))   /* nested in a dispose: a no-op mid-way */
            FZ_CHECK(st == LDL_RELEASED, "dispose did not leave RELEASED");
        if (nested && !was_disposed && H.init_ok) H.interrupted = 1;
        if (!nested) {
            FZ_CHECK(fz_attached() == 0 && !ldl_lock_pending(&H.lock), "after dispose a store still holds the op");
            FZ_CHECK(ldl_lock_answer(&H.lock) != LDL_EINPROGRESS, "ldl_lock_answer() is EINPROGRESS after dispose");
            FZ_CHECK(H.nlost == nlost0, "dispose fired on_lost");
            H.rec.has = 0;
        }
        break;
    }
    case OP_RUN: {
        ldl_run_result res;
        unsigned n0 = H.renews + H.acquires + H.releases + H.cancels;
        int pend0 = ldl_lock_pending(&H.lock);
        memset(&res, 0x5a, sizeof res);
        rc = ldl_lock_run(&H.lock, fz_body, &H, &res);
        FZ_CHECK(rc == (H.init_ok ? LDL_EUNSUPPORTED : LDL_ESTATE), "run with a non-blocking store: not LDL_EUNSUPPORTED");
        FZ_CHECK(res.body_rc == 0 && res.release_rc == 0 && res.shutdown_rc == 0 && res.lost_reason == 0,
                 "run with a non-blocking store left a result that is not zero");
        FZ_CHECK(H.renews + H.acquires + H.releases + H.cancels == n0, "run with a non-blocking store called the store");
        FZ_CHECK(ldl_lock_state(&H.lock) == st0 && ldl_lock_pending(&H.lock) == pend0, "run with a non-blocking store changed the lock");
        break;
    }
    default:
        break;
    }
    H.depth--;
}

/* ------------------------------------------------------------ operations */
static void fz_op(int op) {
    int st0 = ldl_lock_state(&H.lock), rc, reason0 = ldl_lock_reason(&H.lock);
    int nested = H.in_store > 0;            /* re-entry from inside a store call */
    uint64_t now0 = H.clock;
    int trusted0 = st0 == LDL_HELD && fz_trusted(now0);
    unsigned renews0 = H.renews, releases0 = H.releases, acquires0 = H.acquires;
    int dead = H.disposed || !H.init_ok;
    if (H.mode == 1 && op <= OP_VALID) { fz_aop(op); return; }
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
            if (rc == 0 && H.acquires == acquires0 + 1 && H.acq_nogrant)
                FZ_CHECK(ldl_lock_reason(&H.lock) == reason0, "an answer that is no grant changed the reason");
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
    if (H.mode == 1) { fz_op(OP_POLL); return; }   /* fz_aop checks "renew exactly when due" */
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
    /* the store: c0's high nibble (8..13 the deferred async store, 15 the
       MemoryStore parity run, else the synchronous scripted store) */
    H.mode = (c0 >> 4) >= 8 && (c0 >> 4) <= 13 ? 1 : (c0 >> 4) == 15 ? 2 : 0;
    if (H.mode && ((c3 >> 3) & 7) != 7) H.timer_mode = 0;   /* rarely: timers with an async store, refused */
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

/* ------------------------------------------------------------ mode 2: MemoryStore parity
   Two locks on the same clock, each over its own MemoryStore: one through
   ldl_memstore_store (synchronous), one through ldl_memstore_async_store
   (answers inside every submit). The same script drives both; every answer,
   state, reason, token, ldl_lock_answer, due_in_ms, on_lost count and
   reason, and the stores' live counts must agree, and the async lock must
   never be left pending. A third party takes the key in both stores when it
   expired, so renews fail the same way too. */
static struct { unsigned nlost[2]; int reason[2]; } P;
static const int fz_p_id[2] = { 0, 1 };
static void fz_p_lost(void *user, int reason) {
    int k = *(const int *)user;
    P.nlost[k]++;
    P.reason[k] = reason;
}

static void fz_parity(void) {
    ldl_memstore ms[2];
    ldl_memstore_slot slots[2][2];
    ldl_store ss, raw[2];
    ldl_async_store as;
    ldl_lock lk[2];
    ldl_lock_desc d;
    ldl_clock ck;
    int64_t rc[2];
    int i, k, n;
    memset(&P, 0, sizeof P);
    ck.now_ms = fz_now; ck.ctx = &H;
    for (k = 0; k < 2; k++) {
        FZ_CHECK(ldl_memstore_init(&ms[k], slots[k], 2, ck) == LDL_OK, "parity: memstore init");
        raw[k] = ldl_memstore_store(&ms[k]);
    }
    ss = raw[0];
    as = ldl_memstore_async_store(&ms[1]);
    memset(&d, 0, sizeof d);
    d.container.scope = fz_scope_new; d.container.value = fz_scope_value;
    d.container.shutdown = fz_scope_shutdown; d.container.self = &H;
    d.key = FZ_KEY;
    d.ttl_ms = H.ttl;
    d.heartbeat_ms = H.hb == H.ttl / 3 ? 0 : H.hb;
    d.drift_ms = H.drift == H.ttl / 100 + 2 ? 0 : H.drift;
    d.clock = ck;
    d.on_lost = fz_p_lost;
    d.store = &ss; d.user = (void *)&fz_p_id[0];
    rc[0] = ldl_lock_init(&lk[0], &d);
    d.store = NULL; d.async_store = &as; d.user = (void *)&fz_p_id[1];
    rc[1] = ldl_lock_init(&lk[1], &d);
    FZ_CHECK(rc[0] == rc[1] && strcmp(ldl_lock_why(&lk[0]), ldl_lock_why(&lk[1])) == 0, "parity: init differs");
    if (rc[0] != LDL_OK) return;
    for (i = 0; fz_more() && i < 400; i++) {
        uint8_t b = fz_u8();
        H.step = i;
        n = 2;
        switch (b % 10) {
        case 0: case 1:
            for (k = 0; k < 2; k++) rc[k] = ldl_lock_acquire(&lk[k]);
            if (rc[0] == 1) H.start = H.clock;
            break;
        case 2: for (k = 0; k < 2; k++) rc[k] = ldl_lock_release(&lk[k]); break;
        case 3:
            for (k = 0; k < 2; k++) rc[k] = ldl_lock_tick(&lk[k]);
            if (rc[0] == 1) H.start = H.clock;
            break;
        case 4: case 5: for (k = 0; k < 2; k++) rc[k] = ldl_lock_poll(&lk[k]); break;
        case 6: for (k = 0; k < 2; k++) rc[k] = ldl_lock_valid_ms(&lk[k]); break;
        case 7: case 8: fz_move_clock(fz_u8()); n = 0; break;
        default:
            if ((b >> 4) == 15) {
                for (k = 0; k < 2; k++) { ldl_lock_dispose(&lk[k]); rc[k] = 0; }
            } else if ((b >> 4) >= 12) {         /* a third party takes the key if free */
                int64_t t[2] = { 0, 0 };
                for (k = 0; k < 2; k++) rc[k] = raw[k].acquire(raw[k].ctx, FZ_KEY, H.ttl, &t[k]);
                FZ_CHECK(t[0] == t[1], "parity: third-party token differs");
            } else if ((b >> 4) == 11) {
                ldl_run_result res;
                rc[0] = LDL_EUNSUPPORTED;
                rc[1] = ldl_lock_run(&lk[1], fz_body, &H, &res);
            } else {
                for (k = 0; k < 2; k++) rc[k] = ldl_lock_due_in_ms(&lk[k]);
            }
            break;
        }
        (void)n;
        FZ_TRACE("parity step %d: %lld %lld state %s %s\n", b % 10, (long long)rc[0], (long long)rc[1],
                 ldl_state_name(ldl_lock_state(&lk[0])), ldl_state_name(ldl_lock_state(&lk[1])));
        FZ_CHECK(rc[0] == rc[1], "parity: the answers differ (sync MemoryStore vs its async view)");
        FZ_CHECK(ldl_lock_state(&lk[0]) == ldl_lock_state(&lk[1]), "parity: states differ");
        FZ_CHECK(ldl_lock_reason(&lk[0]) == ldl_lock_reason(&lk[1]), "parity: reasons differ");
        FZ_CHECK(ldl_lock_fencing_token(&lk[0]) == ldl_lock_fencing_token(&lk[1]), "parity: tokens differ");
        FZ_CHECK(ldl_lock_answer(&lk[0]) == ldl_lock_answer(&lk[1]), "parity: ldl_lock_answer differs");
        FZ_CHECK(ldl_lock_due_in_ms(&lk[0]) == ldl_lock_due_in_ms(&lk[1]), "parity: due_in_ms differs");
        FZ_CHECK(P.nlost[0] == P.nlost[1] && P.reason[0] == P.reason[1], "parity: on_lost differs");
        FZ_CHECK(!ldl_lock_pending(&lk[0]) && !ldl_lock_pending(&lk[1]), "parity: a MemoryStore lock left pending");
        FZ_CHECK(ldl_memstore_live(&ms[0]) == ldl_memstore_live(&ms[1]), "parity: live leases differ");
    }
    for (k = 0; k < 2; k++) ldl_lock_dispose(&lk[k]);
    FZ_CHECK(ldl_memstore_live(&ms[0]) == ldl_memstore_live(&ms[1]), "parity: live leases differ after dispose");
    FZ_CHECK(P.nlost[0] == P.nlost[1], "parity: on_lost counts differ after dispose");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ldl_lock_desc d;
    ldl_store st;
    ldl_async_store ast;
    int rc, i;
    memset(&H, 0, sizeof H);
    fz_ledger_full = 0;
    if (fz_trace < 0) fz_trace = getenv("FZ_TRACE") != NULL;
    fz_p = data; fz_n = size; fz_i = 0;
    fz_config();
    if (H.mode == 2) { fz_parity(); return 0; }

    memset(&d, 0, sizeof d);
    st.acquire = fz_store_acquire; st.renew = fz_store_renew; st.release = fz_store_release; st.ctx = &H;
    d.container.scope = fz_scope_new; d.container.value = fz_scope_value;
    d.container.shutdown = fz_scope_shutdown; d.container.self = &H;
    d.key = FZ_KEY;
    d.ttl_ms = H.ttl;
    d.heartbeat_ms = H.hb == H.ttl / 3 ? 0 : H.hb;
    d.drift_ms = H.drift == H.ttl / 100 + 2 ? 0 : H.drift;
    d.store = &st;
    if (H.mode == 1) {
        ast.acquire = fz_a_acquire; ast.renew = fz_a_renew; ast.release = fz_a_release;
        ast.cancel = fz_a_cancel; ast.ctx = NULL;          /* ctx may be NULL */
        d.store = NULL;
        d.async_store = &ast;
    }
    d.clock.now_ms = fz_now; d.clock.ctx = &H;
    if (H.timer_mode) { d.timers.set_timeout = fz_set_timeout; d.timers.clear_timeout = fz_clear_timeout; }
    d.on_lost = fz_on_lost; d.user = &H;
    rc = ldl_lock_init(&H.lock, &d);
    {   /* the oracle's own validity rule (SPEC: checked after defaults, 64-bit) */
        int valid = H.ttl > 0 && H.hb >= 1 && (uint64_t)H.hb * 2u <= H.ttl &&
                    (uint64_t)H.drift < (uint64_t)H.ttl - H.hb && !(H.mode == 1 && H.timer_mode);
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
        case 8: if (H.mode == 1) fz_pump(fz_u8()); else fz_op(OP_FIRE); break;
        case 9: case 10: fz_op(OP_CLOCK); break;
        default: if (H.mode == 1) fz_pump(fz_u8()); else fz_op(OP_STALE_FIRE); break;
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
    /* the store runs its queue to completion: every request is detached by
       now, and a cancelled grant is released by the store itself */
    while (H.nq) fz_complete_req(0);
    FZ_CHECK(!ldl_lock_pending(&H.lock), "pending after dispose");
    for (i = 0; i < H.nlease; i++)
        if (H.lease[i].releases != H.lease[i].opens) {
            fprintf(stderr, "fuzz_lock: lease token %lld granted %u time(s), released %u time(s)\n",
                    (long long)H.lease[i].tok, H.lease[i].opens, H.lease[i].releases);
            fz_fail("lease ledger does not balance after dispose: a grant was forgotten");
        }
    return 0;
}
