/* fuzz_election.c -- state-machine fuzzer for the leader-election options
   (issue 12): the retry schedule, ride-out, campaign, events and counters,
   the raw answer, holder identity. An oracle checks every step.

   The first input bytes pick a configuration: ttl / heartbeat / drift,
   manual or timer mode, a synchronous scripted store or a deferred
   non-blocking one (its answers are held until a pump step), retry
   (base / cap / give_up / seed), ride_out_ms, campaign, on_event (recording,
   optionally calling back into the lock), owner with a store_ext. Every
   following byte is one step: acquire, release, run (its wait budget),
   tick, poll, valid_ms, due_in_ms, dispose, fire the armed timer, move the
   clock (forward; rarely backward), pump the store. The store's answers come from the script too:
   1, 0, negative, malformed, fresh / duplicated / regressed / missing
   tokens, slow (the clock moves inside the call) and late ones.

   The oracle is a model of what SPEC.md and the LEADER ELECTION section of
   the header's top doc promise for each applied store answer: the state,
   the fence, the trust start, the counters, the raw answer, the exact event
   sequence, the on_lost / on_leading calls, the timers the lock arms, the
   store calls it makes (and when), and due_in_ms / valid_ms. What the doc
   leaves to the lock (the jittered delay) is checked against its bounds and
   then remembered. Independently of the model it keeps:
     - the trust bound: a lock that answers "held" (poll/tick 1, valid_ms
       > 0) does so only while now < pre + ttl - drift, pre being the clock
       before the latest store answer 1 for that token (ride-out never
       extends trust);
     - a lease ledger: every token the store granted is released or handed
       back exactly once by the end, never one it did not grant;
     - the grants' fences strictly increase.
   No re-entry from store calls here (fuzz_lock.c covers it); calls from
   on_event must answer LDL_ESTATE and change nothing.

   A violation prints a line and abort()s. Built two ways (mk/reliability.mk):
   with -fsanitize=fuzzer (libFuzzer) and with tests/fuzz/fuzz_replay.c (a
   plain main() replaying the corpus, under any compiler and valgrind).
   FZ_TRACE=1 prints each step. */
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
static const uint8_t *in_p;
static size_t in_n, in_i;
static uint8_t in8(void) { return in_i < in_n ? in_p[in_i++] : 0; }

#define EL_KEY   "el-key"
#define EL_OWNER "node-a"
#define ANY_NEXT 0xFFFFFFFEu   /* expected next_ms: the lock's draw, checked against bounds */
#define MAXE     48
#define MAXQ     8
#define MAXL     512

typedef struct { int64_t tok; unsigned opens, rels; } el_lease;
typedef struct { uint32_t lo, hi; int fail, retry; unsigned epoch; } el_arm;   /* an expected set_timeout */

static struct {
    /* configuration */
    uint32_t ttl, hb, drift, window, base, cap, give_up, ride;
    uint64_t seed;
    int timers, async, campaign, events, hook_calls, owner;
    ldl_lock lock;
    uint64_t clock;
    long step;

    /* the model: what the lock must show */
    int st;                 /* ldl_state */
    int dead;
    int64_t cur;            /* HELD: the fence */
    int64_t L;              /* highest token accepted */
    int64_t owed;           /* LOST: not handed back yet */
    uint64_t start;         /* the trust start */
    uint64_t ride_next;     /* HELD, manual mode: a ride-out renew waits until this */
    int reason, raw;
    ldl_counters cnt;
    int competing, retrying;
    int sched_known;
    uint64_t sched, sched_from;   /* the next attempt; the clock when it was scheduled */
    uint32_t sched_hi;            /* its largest allowed delay */
    uint32_t round_n;
    uint64_t give_up_at;
    int64_t last_grant;           /* (b), kept apart from L */
    int64_t lead_last;            /* the last fence on_leading saw */
    uint64_t ind_pre;             /* independent: latest pre of a store answer 1 for cur */
    /* the request slot (non-blocking store) */
    int fl_kind, fl_answered, fl_rc;
    int64_t fl_tok;
    uint64_t fl_pre;
    int64_t rel_tok;
    ldl_op *op;

    /* what the current step must see */
    ldl_event ee[MAXE]; uint32_t ee_hi[MAXE]; unsigned ee_ep[MAXE]; int nee, ge;
    unsigned epoch;               /* counts schedules: a draw learnt late names its own */
    el_arm arm[MAXQ]; int narm, arm_i;
    int64_t hback[MAXQ]; int nhback, hback_i;
    int lost[MAXQ]; int nlost, lost_i;
    int64_t lead[MAXQ]; int nlead, lead_i;
    int cancels_want, cancels;
    int attempt_ok, attempt_sched;   /* an acquire call may come; 1 = a scheduled one */
    uint64_t att_pre;
    int renew_ok;
    uint64_t renew_pre;
    int urel_ok;
    int ret;                         /* what the lock call answers */

    /* fakes */
    uintptr_t armed, handles;
    uint64_t armed_at;
    uint32_t armed_delay;
    void (*fire)(void *); void *fire_arg;
    int in_hook, in_store;
    int in_run, run_wait, run_fenced, run_sleeps;   /* inside ldl_lock_run: its wait, its scope */
    el_lease lease[MAXL]; int nlease, ledger_full;
    int64_t tokgen;
    ldl_store_ext ext;
} S;

static int el_trace = -1;
#define TRACE(...) do { if (el_trace > 0) fprintf(stderr, __VA_ARGS__); } while (0)

static void el_fail(const char *what) {
    fprintf(stderr, "fuzz_election: INVARIANT VIOLATED at step %ld: %s\n"
            "  lock: state=%s reason=%s token=%lld raw=%d | model: state=%s cur=%lld L=%lld "
            "start=%llu clock=%llu sched=%llu(%d) give_up_at=%llu\n"
            "  ttl=%u hb=%u drift=%u timers=%d async=%d base=%u cap=%u give_up=%u ride=%u "
            "campaign=%d events=%d hook=%d owner=%d\n",
            S.step, what, ldl_state_name(ldl_lock_state(&S.lock)),
            ldl_reason_name(ldl_lock_reason(&S.lock)), (long long)ldl_lock_fencing_token(&S.lock),
            ldl_lock_raw_answer(&S.lock), ldl_state_name(S.st), (long long)S.cur, (long long)S.L,
            (unsigned long long)S.start, (unsigned long long)S.clock,
            (unsigned long long)S.sched, S.sched_known, (unsigned long long)S.give_up_at,
            S.ttl, S.hb, S.drift, S.timers, S.async, S.base, S.cap, S.give_up, S.ride,
            S.campaign, S.events, S.hook_calls, S.owner);
    abort();
}
#define CHECK(c, what) do { if (!(c)) el_fail(what); } while (0)

static int within(uint64_t s, uint64_t now, uint32_t w) { return now >= s && now - s < w; }

/* ------------------------------------------------------------ ledger */
static void ledger_open(int64_t tok) {
    int i;
    for (i = 0; i < S.nlease; i++) if (S.lease[i].tok == tok) { S.lease[i].opens++; return; }
    if (S.nlease == MAXL) { S.ledger_full = 1; return; }
    S.lease[S.nlease].tok = tok; S.lease[S.nlease].opens = 1; S.lease[S.nlease].rels = 0;
    S.nlease++;
}
static void ledger_release(int64_t tok) {
    int i;
    CHECK(tok >= 1, "release of a token < 1");
    for (i = 0; i < S.nlease; i++) {
        if (S.lease[i].tok != tok) continue;
        CHECK(S.lease[i].rels < S.lease[i].opens, "a token released more often than the store granted it");
        S.lease[i].rels++;
        return;
    }
    CHECK(S.ledger_full, "release of a token the store never granted");
}

/* after dispose: every grant went back exactly once */
static void ledger_balanced(void) {
    const el_lease *ls = S.lease, *end = S.lease + S.nlease;
    for (; ls < end && ls->rels == ls->opens; ls++) {}
    if (ls == end) return;
    fprintf(stderr, "token %lld: %u grant(s), %u release(s)\n", (long long)ls->tok, ls->opens, ls->rels);
    el_fail("the lease ledger does not balance after dispose");
}

/* ------------------------------------------------------------ the model */
static void e_push(int kind, int raw, int reason, int64_t tok, uint32_t lat, uint32_t next, uint32_t hi) {
    ldl_event *e;
    if (!S.events) return;
    CHECK(S.nee < MAXE, "oracle: too many events in one step");
    e = &S.ee[S.nee];
    e->kind = kind; e->raw = raw; e->reason = reason; e->token = tok;
    e->latency_ms = lat; e->next_ms = next;
    S.ee_hi[S.nee] = hi;
    S.ee_ep[S.nee] = S.epoch;
    S.nee++;
}

static uint32_t m_lat(uint64_t pre, uint64_t now) {
    uint64_t d = now >= pre ? now - pre : 0;
    uint32_t ms = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    if (ms > S.cnt.worst_latency_ms) S.cnt.worst_latency_ms = ms;
    return ms;
}

/* the n-th retry's ceiling: min(cap, base * 2^n) */
static uint32_t m_ceiling(uint32_t n) {
    uint64_t c = S.base;
    uint32_t k;
    for (k = 0; k < n && c < S.cap; k++) c *= 2u;
    return c > S.cap ? S.cap : (uint32_t)c;
}

static void m_expect_arm(uint32_t lo, uint32_t hi, int retry, int *fail) {
    uint8_t b = in8();
    CHECK(S.narm < MAXQ, "oracle: too many timers in one step");
    S.arm[S.narm].lo = lo; S.arm[S.narm].hi = hi; S.arm[S.narm].retry = retry;
    S.arm[S.narm].fail = (b & 31) == 31;
    S.arm[S.narm].epoch = S.epoch;
    *fail = S.arm[S.narm].fail;
    S.narm++;
}

static void m_round(uint64_t now) {
    S.round_n = 0;
    S.give_up_at = S.give_up ? now + S.give_up : 0;
}

/* the next attempt after one that did not grant (or a campaign's loss): the
   expected next_ms (ANY_NEXT or UINT32_MAX); *gave_up */
static uint32_t m_schedule(uint64_t now, int *gave_up, uint32_t *hi_out) {
    uint32_t hi;
    int fail;
    *gave_up = 0; *hi_out = 0;
    S.retrying = 0; S.sched_known = 0;
    S.epoch++;
    if (!S.competing || S.dead) return UINT32_MAX;
    hi = m_ceiling(S.round_n);
    if (S.round_n < UINT32_MAX) S.round_n++;
    if (S.give_up_at) {
        if (now + 1 >= S.give_up_at) { *gave_up = 1; S.competing = 0; return UINT32_MAX; }
        if (S.give_up_at - 1 - now < hi) hi = (uint32_t)(S.give_up_at - 1 - now);
    }
    if (S.timers) {
        m_expect_arm(1, hi, 1, &fail);
        if (fail) { *gave_up = 1; S.competing = 0; return UINT32_MAX; }
    }
    S.retrying = 1; S.sched_from = now; S.sched_hi = hi;
    *hi_out = hi;
    return ANY_NEXT;
}

/* the lock drew delay d for the schedule of `epoch`: learnt if that is still
   the model's current one (the model runs ahead of the lock within a call) */
static void m_sched_learn(uint32_t d, unsigned epoch, const char *who) {
    if (epoch != S.epoch) return;
    CHECK(S.retrying, who);
    CHECK(d >= 1 && d <= S.sched_hi, "retry delay outside [1, min(cap, base*2^n), give_up - 1 - now]");
    if (S.sched_known) CHECK(S.sched == S.sched_from + d, "two different delays for one scheduled attempt");
    S.sched = S.sched_from + d; S.sched_known = 1;
}

static void m_stop(void) { S.competing = 0; S.retrying = 0; S.sched_known = 0; S.epoch++; }

static void m_handback(int64_t tok) {
    if (tok < 1) return;
    S.cnt.handbacks++;
    e_push(LDL_EV_HANDED_BACK, 0, 0, tok, 0, 0, 0);
    CHECK(S.nhback < MAXQ, "oracle: too many hand-backs");
    S.hback[S.nhback++] = tok;
    if (S.async) S.cancels_want++;   /* fire-and-forget: submitted, then cancelled (unless refused) */
}

/* the request in the slot is detached: in flight = the store is told */
static void m_cancel(void) {
    if (S.fl_kind && !S.fl_answered) S.cancels_want++;
    S.fl_kind = 0; S.fl_answered = 0;
}

static void m_refused(int raw, int reason, int64_t tok, uint32_t lat, uint64_t now) {
    int gave_up;
    uint32_t hi, next = m_schedule(now, &gave_up, &hi);
    e_push(LDL_EV_REFUSED, raw, reason, tok, lat, next, hi);
    if (gave_up) e_push(LDL_EV_GAVE_UP, 0, 0, 0, 0, 0, 0);
}

static void m_lose(int reason, int hand_back, uint64_t now) {
    int64_t lost = S.cur;
    S.owed = S.cur; S.cur = 0; S.st = LDL_LOST; S.reason = reason;
    S.cnt.losses[reason & 7]++;
    S.ride_next = 0;
    m_cancel();
    e_push(LDL_EV_LOST, 0, reason, lost, 0, 0, 0);
    if ((hand_back || S.competing) && S.owed) {
        int64_t t = S.owed;
        S.owed = 0;
        m_handback(t);
    }
    if (S.competing) {
        int gave_up;
        uint32_t hi;
        m_round(now);
        (void)m_schedule(now, &gave_up, &hi);
        if (gave_up) e_push(LDL_EV_GAVE_UP, 0, 0, 0, 0, 0, 0);
    }
    CHECK(S.nlost < MAXQ, "oracle: too many losses");
    S.lost[S.nlost++] = reason;
}

/* arm the heartbeat (or a ride-out retry) timer: 0 = could not (LOST) */
static int m_arm(uint32_t ms, uint64_t now) {
    int fail;
    if (!S.timers) return 1;
    m_expect_arm(ms, ms, 0, &fail);
    if (fail) { m_lose(LDL_REASON_TIMER_UNARMABLE, 1, now); return 0; }
    return 1;
}

/* an acquire answer applied at `now` (state ACQUIRING) */
static int m_granted(int rc, int64_t tok, uint64_t pre, uint64_t now) {
    uint32_t lat = m_lat(pre, now);
    S.st = LDL_IDLE;
    S.raw = rc;
    if (rc != 1 || tok < 1) {
        if (rc == 0) S.cnt.contention++; else S.cnt.store_errors++;
        m_refused(rc, 0, 0, lat, now);
        return 0;
    }
    if (tok <= S.L || !within(pre, now, S.window)) {
        S.reason = tok <= S.L ? LDL_REASON_FENCE_REGRESSED : LDL_REASON_LEASE_EXPIRED;
        S.cnt.refused++;
        m_handback(tok);
        m_refused(rc, S.reason, tok, lat, now);
        return 0;
    }
    CHECK(tok > S.last_grant, "oracle: grants' fences do not increase");
    S.last_grant = tok;
    S.L = tok; S.cur = tok; S.start = pre; S.ind_pre = pre; S.ride_next = 0;
    S.reason = LDL_REASON_NONE; S.st = LDL_HELD;
    S.cnt.grants++;
    if (!S.campaign) S.competing = 0;
    e_push(LDL_EV_GRANTED, rc, 0, tok, lat, 0, 0);
    if (!m_arm(S.hb, now)) return 0;
    CHECK(S.nlead < MAXQ, "oracle: too many grants");
    S.lead[S.nlead++] = tok;
    return 1;
}

/* a renew answer applied at `now` (state HELD). deadline 0: acquire applies
   it (a late yes changes nothing) */
static int m_renewed(int rc, uint64_t pre, uint64_t now, int deadline) {
    uint32_t lat = m_lat(pre, now);
    S.raw = rc;
    if (rc != 1) {
        if (rc != 0) S.cnt.store_errors++;
        if (rc != 0 && S.ride && within(S.start, now, S.window)) {
            uint32_t left = (uint32_t)(S.window - (now - S.start));
            uint32_t next = S.ride < left ? S.ride : left;
            S.ride_next = now + next;
            e_push(LDL_EV_RENEW_ERROR, rc, 0, S.cur, lat, next, 0);
            return m_arm(next, now);
        }
        m_lose(rc == 0 ? LDL_REASON_HEARTBEAT_FAILED : LDL_REASON_STORE_ERROR, 0, now);
        return 0;
    }
    if (!within(pre, now, S.window)) {
        if (!deadline) return 1;
        m_lose(LDL_REASON_LEASE_EXPIRED, 0, now);
        return 0;
    }
    S.start = pre; S.ride_next = 0;
    S.cnt.renewals++;
    e_push(LDL_EV_RENEWED, rc, 0, S.cur, lat, 0, 0);
    return m_arm(S.hb, now);
}

static int m_released(int rc, int64_t tok) {
    S.st = LDL_RELEASED;
    S.raw = rc;
    if (rc != 1 && rc != 0) S.cnt.store_errors++;
    e_push(LDL_EV_RELEASED, rc, 0, tok, 0, 0, 0);
    return rc == 1 ? 1 : rc == 0 ? 0 : LDL_ESTORE;
}

/* what an applying call does first (non-blocking store): the recorded answer
   or the ACQUIRING / RELEASING timeout. drop: 1 release/dispose, 2 acquire */
static void m_apply(int drop, uint64_t now) {
    if (!S.fl_kind) return;
    if (S.fl_answered) {
        int kind = S.fl_kind;
        S.fl_kind = 0; S.fl_answered = 0;
        if (kind == LDL_OP_ACQUIRE) (void)m_granted(S.fl_rc, S.fl_tok, S.fl_pre, now);
        else if (kind == LDL_OP_RENEW) { if (drop != 1) (void)m_renewed(S.fl_rc, S.fl_pre, now, drop == 0); }
        else S.ret = m_released(S.fl_rc, S.rel_tok);
        return;
    }
    if (S.st == LDL_ACQUIRING && !within(S.fl_pre, now, S.window)) {
        S.st = LDL_IDLE; S.raw = LDL_EINPROGRESS; S.cnt.store_errors++;
        m_cancel();
        m_refused(LDL_EINPROGRESS, 0, 0, m_lat(S.fl_pre, now), now);
    } else if (S.st == LDL_RELEASING && !within(S.fl_pre, now, S.ttl)) {
        S.st = LDL_RELEASED; S.raw = LDL_EINPROGRESS; S.cnt.store_errors++;
        m_cancel();
        S.ret = LDL_ESTORE;
    }
}

/* an attempt: the ATTEMPT event, then the store's acquire */
static void m_attempt(uint64_t now, int scheduled) {
    S.cnt.attempts++;
    e_push(LDL_EV_ATTEMPT, 0, 0, 0, 0, 0, 0);
    S.st = LDL_ACQUIRING;
    S.attempt_ok = 1; S.attempt_sched = scheduled; S.att_pre = now;
    S.ret = LDL_EINPROGRESS;   /* the store call sets the answer */
}

/* 1: an attempt; 0: the poll or timer came at or after the give-up deadline */
static int m_try(uint64_t now) {
    S.retrying = 0; S.epoch++;
    if (S.give_up_at && now >= S.give_up_at) {
        S.competing = 0;
        S.ret = 0;
        e_push(LDL_EV_GAVE_UP, 0, 0, 0, 0, 0, 0);
        return 0;
    }
    m_attempt(now, 1);
    return 1;
}

static void m_renew(uint64_t now) {
    S.renew_ok = 1; S.renew_pre = now;
    S.ret = 1;                 /* the store call sets the answer */
}

/* HELD at now: the deadline, then a renew if asked or due */
static int m_beat(uint64_t now, int renew_now) {
    if (!within(S.start, now, S.window)) { m_lose(LDL_REASON_LEASE_EXPIRED, 0, now); return 0; }
    if (S.fl_kind) return 1;
    if (renew_now || (!S.timers && now - S.start >= S.hb && now >= S.ride_next)) { m_renew(now); return -1; }
    return 1;
}

/* ------------------------------------------------------------ answers */
/* a token above the store's counter, saturating */
static int64_t tok_above(int64_t n) { return S.tokgen < INT64_MAX - n ? S.tokgen + n : INT64_MAX; }

static int64_t el_token(uint8_t a, uint8_t t, int *write) {
    *write = 1;
    switch (a >> 5) {
    case 0: case 1: case 2: case 3: {
        int64_t base = S.tokgen > S.L ? S.tokgen : S.L;
        S.tokgen = base < INT64_MAX - 8 ? base + 1 + (t & 3) : INT64_MAX;
        return S.tokgen;
    }
    case 4: return S.L;                          /* duplicated: no advance */
    case 5: return S.L - 1 - (t & 1);            /* regressed */
    case 6: if (t & 1) { *write = 0; return 0; } return (t & 2) ? INT64_MAX : -(int64_t)(t >> 2);
    default: return (t & 1) ? 0 : tok_above(1);
    }
}

static int el_answer(uint8_t a) {
    static const int neg[4] = { -1, LDL_ESTORE, INT_MIN, LDL_EINPROGRESS };
    switch (a & 15) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: return 1;
    case 7: case 8: return 0;
    case 9: case 10: case 11: return neg[(a >> 4) & 3];
    case 12: return (a & 16) ? 2 : INT_MAX;
    default: return (a & 32) ? 1 : 0;
    }
}

/* a slow store: the clock moves inside the call */
static void el_slow(uint8_t b) {
    if ((b & 7) == 7) S.clock += (uint64_t)((b >> 3) & 7) * (S.ttl / 6u + 1u);
}

/* ------------------------------------------------------------ checks at callbacks */
static void el_events_caught_up(const char *where) {
    CHECK(S.ge == S.nee, where);
}

static void el_check_acquire_call(const char *key, uint32_t ttl) {
    CHECK(!S.in_hook, "a store call from inside on_event");
    CHECK(!S.in_store, "a store call from inside a store call");
    CHECK(S.attempt_ok, "an acquire attempt the schedule did not call for (early, after release/dispose/give-up, or not competing)");
    CHECK(strcmp(key, EL_KEY) == 0 && ttl == S.ttl, "acquire: wrong key or ttl");
    /* no attempt at or after the give-up deadline, however late the poll or
       timer comes (regress-giveup-late-poll) */
    if (S.attempt_sched && S.give_up_at)
        CHECK(S.clock < S.give_up_at, "a scheduled attempt at or after give_up_ms from the round's start");
    el_events_caught_up("acquire called before the ATTEMPT event (or with events missing)");
    S.attempt_ok = 0;
}

static void el_check_renew_call(const char *key, int64_t token, uint32_t ttl) {
    CHECK(!S.in_hook, "a store call from inside on_event");
    CHECK(!S.in_store, "a store call from inside a store call");
    CHECK(S.renew_ok, "a renew the model did not call for (not due, ride-out retry early, or timer mode poll)");
    CHECK(strcmp(key, EL_KEY) == 0 && ttl == S.ttl, "renew: wrong key or ttl");
    CHECK(token == S.cur && token >= 1, "renew of a token that is not the held fence");
    CHECK(within(S.start, S.clock, S.window), "renew past the local deadline");
    S.renew_ok = 0;
}

/* 1: the user's release, 0: a hand-back */
static int el_check_release_call(const char *key, int64_t token) {
    CHECK(!S.in_hook, "a store call from inside on_event");
    CHECK(!S.in_store, "a store call from inside a store call");
    CHECK(strcmp(key, EL_KEY) == 0, "release: wrong key");
    ledger_release(token);
    if (ldl_lock_state(&S.lock) == LDL_RELEASING) {
        CHECK(S.urel_ok && token == S.rel_tok, "a user release the model did not call for");
        S.urel_ok = 0;
        return 1;
    }
    CHECK(S.hback_i < S.nhback && S.hback[S.hback_i] == token, "a hand-back of a token the model did not hand back");
    S.hback_i++;
    if (S.events)
        CHECK(S.ge >= 1 && S.ee[S.ge - 1].kind == LDL_EV_HANDED_BACK && S.ee[S.ge - 1].token == token,
              "a hand-back not announced by its HANDED_BACK event just before");
    return 0;
}

/* ------------------------------------------------------------ the synchronous scripted store */
static int el_do_acquire(int64_t *tok_out) {
    uint8_t a = in8(), t = in8(), s = in8();
    int rc = el_answer(a), write;
    int64_t tok = el_token(a, t, &write);
    el_slow(s);
    if (write) *tok_out = tok; else tok = *tok_out;
    CHECK(write || *tok_out == 0, "token_out not zeroed before the acquire call");
    TRACE("  store acquire -> rc=%d tok=%lld clock=%llu\n", rc, (long long)tok, (unsigned long long)S.clock);
    if (rc == 1 && tok >= 1) ledger_open(tok);
    S.ret = m_granted(rc == LDL_EINPROGRESS ? LDL_ESTORE : rc, tok, S.att_pre, S.clock);
    return rc;
}

static int el_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *tok_out) {
    (void)ctx;
    CHECK(!S.owner, "store.acquire called although an owner is set (acquire_owned expected)");
    el_check_acquire_call(key, ttl);
    return el_do_acquire(tok_out);
}

static int el_acquire_owned(void *ctx, const char *key, uint32_t ttl, const char *owner, int64_t *tok_out) {
    CHECK(ctx == &S, "acquire_owned: wrong ctx");
    CHECK(S.owner && owner && strcmp(owner, EL_OWNER) == 0, "acquire_owned: not the desc's owner");
    el_check_acquire_call(key, ttl);
    return el_do_acquire(tok_out);
}

static int el_renew(void *ctx, const char *key, int64_t token, uint32_t ttl) {
    uint8_t a, s;
    int rc;
    (void)ctx;
    el_check_renew_call(key, token, ttl);
    a = in8(); s = in8();
    rc = el_answer(a);
    el_slow(s);
    if (rc == 1) S.ind_pre = S.renew_pre;
    TRACE("  store renew -> rc=%d clock=%llu\n", rc, (unsigned long long)S.clock);
    S.ret = m_renewed(rc == LDL_EINPROGRESS ? LDL_ESTORE : rc, S.renew_pre, S.clock, 1);
    return rc;
}

static int el_release(void *ctx, const char *key, int64_t token) {
    int rc = el_answer(in8());
    (void)ctx;
    if (el_check_release_call(key, token)) {
        TRACE("  store release -> rc=%d\n", rc);
        S.ret = m_released(rc == LDL_EINPROGRESS ? LDL_ESTORE : rc, token);
    }
    return rc;
}

/* ------------------------------------------------------------ the deferred non-blocking store
   A submit refuses (negative: nothing queued), returns a malformed positive
   value (the lock must cancel), answers inside the call, or queues: then a
   pump step answers the one attached request, maybe twice (the first answer
   stands), any number of steps later. Hand-backs are accepted and then
   cancelled by the lock (fire-and-forget). */
static void el_complete(ldl_op *op, int rc, int64_t tok, int twice) {
    ldl_op_complete(op, rc, tok);
    if (twice) ldl_op_complete(op, 1, tok_above(1000));   /* ignored */
}

static int el_submit(int kind, ldl_op *op, const char *key, int64_t token, uint32_t ttl) {
    static const int neg[4] = { -1, LDL_ESTORE, INT_MIN, LDL_EINPROGRESS };
    uint8_t m = in8();
    int user_rel = 0;
    CHECK(op != NULL, "submit: NULL op");
    if (!S.op) S.op = op;
    CHECK(op == S.op, "submit: another op than before (one slot per lock)");
    CHECK(ldl_lock_pending(&S.lock), "submit while ldl_lock_pending() is 0");
    switch (kind) {
    case LDL_OP_ACQUIRE: el_check_acquire_call(key, ttl); break;
    case LDL_OP_RENEW:   el_check_renew_call(key, token, ttl); break;
    default:
        user_rel = el_check_release_call(key, token);
        if (!user_rel) {   /* a hand-back: accepted (then cancelled) or refused */
            if ((m & 7) == 0) { S.cancels_want--; return -1; }
            return LDL_OK;
        }
        break;
    }
    TRACE("  submit kind=%d m=%u\n", kind, m);
    switch (m & 7) {
    case 0: {                                           /* refused */
        int rc = neg[(m >> 3) & 3];
        int ap = rc == LDL_EINPROGRESS ? LDL_ESTORE : rc;
        if (kind == LDL_OP_ACQUIRE) S.ret = m_granted(ap, 0, S.att_pre, S.clock);
        else if (kind == LDL_OP_RENEW) S.ret = m_renewed(ap, S.renew_pre, S.clock, 1);
        else S.ret = m_released(ap, token);
        return rc;
    }
    case 1:                                             /* malformed: the lock cancels */
        S.cancels_want++;
        if (kind == LDL_OP_ACQUIRE) S.ret = m_granted(LDL_ESTORE, 0, S.att_pre, S.clock);
        else if (kind == LDL_OP_RENEW) S.ret = m_renewed(LDL_ESTORE, S.renew_pre, S.clock, 1);
        else S.ret = m_released(LDL_ESTORE, token);
        return (m & 8) ? 2 : INT_MAX;
    case 2: case 3: {                                   /* answered inside */
        uint8_t a = in8(), t = in8();
        int rc = el_answer(a), write, ap;
        int64_t tok = kind == LDL_OP_ACQUIRE ? el_token(a, t, &write) : 0;
        el_complete(op, rc, tok, (t & 0x80) != 0);
        el_slow(in8());
        ap = rc == LDL_EINPROGRESS ? LDL_ESTORE : rc;
        if (kind == LDL_OP_ACQUIRE) {
            if (rc == 1 && tok >= 1) ledger_open(tok);
            S.ret = m_granted(ap, tok, S.att_pre, S.clock);
        } else if (kind == LDL_OP_RENEW) {
            if (rc == 1) S.ind_pre = S.renew_pre;
            S.ret = m_renewed(ap, S.renew_pre, S.clock, 1);
        } else {
            S.ret = m_released(ap, token);
        }
        return LDL_OK;
    }
    default:                                            /* queued */
        S.fl_kind = kind; S.fl_answered = 0;
        if (kind == LDL_OP_ACQUIRE) { S.fl_pre = S.att_pre; S.ret = LDL_EINPROGRESS; }
        else if (kind == LDL_OP_RENEW) { S.fl_pre = S.renew_pre; S.ret = 1; }
        else { S.fl_pre = S.clock; S.st = LDL_RELEASING; S.ret = LDL_EINPROGRESS; }
        return LDL_OK;
    }
}

static int el_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl) {
    (void)ctx;
    CHECK(!S.owner, "async acquire called although an owner is set (submit_owned expected)");
    return el_submit(LDL_OP_ACQUIRE, op, key, 0, ttl);
}
static int el_a_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl, const char *owner) {
    CHECK(ctx == &S, "submit_owned: wrong ctx");
    CHECK(S.owner && owner && strcmp(owner, EL_OWNER) == 0, "submit_owned: not the desc's owner");
    return el_submit(LDL_OP_ACQUIRE, op, key, 0, ttl);
}
static int el_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl) {
    (void)ctx; return el_submit(LDL_OP_RENEW, op, key, token, ttl);
}
static int el_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    (void)ctx; return el_submit(LDL_OP_RELEASE, op, key, token, S.ttl);
}
static void el_a_cancel(void *ctx, ldl_op *op) {
    (void)ctx;
    CHECK(!S.in_hook, "cancel from inside on_event");
    CHECK(op == S.op, "cancel of an op the lock never submitted");
    S.cancels++;
}

/* a pump step: answer the attached request (or poke an idle op: ignored) */
static void el_pump(void) {
    uint8_t a = in8(), t = in8();
    if (!S.op) return;
    if (S.fl_kind && !S.fl_answered) {
        int rc = el_answer(a), write;
        int64_t tok = S.fl_kind == LDL_OP_ACQUIRE ? el_token(a, t, &write) : 0;
        if (S.fl_kind == LDL_OP_ACQUIRE && rc == 1 && tok >= 1) ledger_open(tok);
        if (S.fl_kind == LDL_OP_RENEW && rc == 1) S.ind_pre = S.fl_pre;
        el_complete(S.op, rc, tok, (t & 0x80) != 0);
        S.fl_answered = 1; S.fl_rc = rc; S.fl_tok = tok;
        TRACE("  pump: kind=%d rc=%d tok=%lld\n", S.fl_kind, rc, (long long)tok);
        CHECK(ldl_lock_pending(&S.lock), "ldl_lock_pending() is 0 after an answer was recorded");
    } else if (!S.fl_kind) {
        ldl_op_complete(S.op, 1, tok_above(1));           /* not in flight: ignored */
        CHECK(!ldl_lock_pending(&S.lock), "ldl_op_complete on an idle op was not ignored");
    }
}

/* ------------------------------------------------------------ timers */
static uintptr_t el_set_timeout(void *ctx, void (*fire)(void *), void *arg, uint32_t delay) {
    el_arm *e;
    (void)ctx;
    CHECK(!S.in_hook, "set_timeout from inside on_event");
    CHECK(!S.in_store, "set_timeout from inside a store call");
    CHECK(S.armed == 0, "a second timer armed while one is armed");
    CHECK(S.arm_i < S.narm, "a timer the model did not arm");
    e = &S.arm[S.arm_i++];
    CHECK(delay >= e->lo && delay <= e->hi, "a timer armed for the wrong delay");
    if (e->fail) return 0;
    if (e->retry) m_sched_learn(delay, e->epoch, "a retry timer while no attempt is scheduled");
    S.armed = ++S.handles; S.armed_at = S.clock; S.armed_delay = delay;
    S.fire = fire; S.fire_arg = arg;
    return S.armed;
}

static void el_clear_timeout(void *ctx, uintptr_t h) {
    (void)ctx;
    CHECK(!S.in_hook, "clear_timeout from inside on_event");
    CHECK(h != 0 && h <= S.handles, "clear_timeout of a handle never issued");
    if (h == S.armed) S.armed = 0;
}

/* ------------------------------------------------------------ hooks */
static void el_hook_calls(void) {
    ldl_lock *l = &S.lock;
    ldl_counters c = *ldl_lock_counters(l);
    int st = ldl_lock_state(l), reason = ldl_lock_reason(l), raw = ldl_lock_raw_answer(l);
    int retrying = ldl_lock_retrying(l), pending = ldl_lock_pending(l);
    int64_t tok = ldl_lock_fencing_token(l);
    uint32_t due = ldl_lock_due_in_ms(l), valid = ldl_lock_valid_ms(l);
    S.in_hook = 1;
    /* HOOKED answers LDL_ESTATE; inside dispose (its hand-back) the lock is
       already dead and answers as a disposed one: the guard's DEAD column */
    CHECK(ldl_lock_acquire(l) == LDL_ESTATE, "acquire from on_event did not answer LDL_ESTATE");
    CHECK(ldl_lock_release(l) == (S.dead ? 0 : LDL_ESTATE), "release from on_event did not answer LDL_ESTATE");
    CHECK(ldl_lock_tick(l) == (S.dead ? 0 : LDL_ESTATE), "tick from on_event did not answer LDL_ESTATE");
    CHECK(ldl_lock_poll(l) == (S.dead ? 0 : LDL_ESTATE), "poll from on_event did not answer LDL_ESTATE");
    ldl_lock_dispose(l);
    CHECK(ldl_lock_valid_ms(l) == valid, "valid_ms from on_event is not a plain read");
    CHECK(ldl_lock_due_in_ms(l) == due, "due_in_ms from on_event is not a plain read");
    S.in_hook = 0;
    CHECK(ldl_lock_state(l) == st && ldl_lock_reason(l) == reason && ldl_lock_raw_answer(l) == raw &&
          ldl_lock_retrying(l) == retrying && ldl_lock_pending(l) == pending &&
          ldl_lock_fencing_token(l) == tok, "a call from on_event changed the lock");
    CHECK(memcmp(&c, ldl_lock_counters(l), sizeof c) == 0, "a call from on_event changed the counters");
}

static void el_on_event(void *user, const ldl_event *ev) {
    const ldl_event *w;
    CHECK(user == &S, "on_event: wrong user");
    CHECK(!S.in_hook, "on_event from inside on_event");
    TRACE("  event kind=%d raw=%d reason=%d tok=%lld lat=%u next=%u\n", ev->kind, ev->raw, ev->reason,
          (long long)ev->token, ev->latency_ms, ev->next_ms);
    CHECK(S.ge < S.nee, "an event the model did not expect");
    w = &S.ee[S.ge];
    if (ev->kind != w->kind) {
        fprintf(stderr, "event %d: got kind %d, want %d\n", S.ge, ev->kind, w->kind);
        el_fail("event kinds out of order");
    }
    CHECK(ev->raw == w->raw, "event: raw answer differs");
    CHECK(ev->reason == w->reason, "event: reason differs");
    CHECK(ev->token == w->token, "event: token differs");
    CHECK(ev->latency_ms == w->latency_ms, "event: latency differs");
    if (w->next_ms == ANY_NEXT) {
        CHECK(ev->next_ms >= 1 && ev->next_ms <= S.ee_hi[S.ge], "REFUSED next_ms outside the schedule's bounds");
        m_sched_learn(ev->next_ms, S.ee_ep[S.ge], "REFUSED names a next try but none is scheduled");
    } else {
        CHECK(ev->next_ms == w->next_ms, "event: next_ms differs");
    }
    S.ge++;
    if (S.hook_calls) el_hook_calls();
}

static void el_on_lost(void *user, int reason) {
    CHECK(user == &S, "on_lost: wrong user");
    CHECK(!S.in_hook, "on_lost from inside on_event");
    TRACE("  on_lost %s\n", ldl_reason_name(reason));
    CHECK(S.lost_i < S.nlost, "on_lost fired but the model lost nothing");
    if (S.lost[S.lost_i] != reason) {
        fprintf(stderr, "on_lost(%s), want %s\n", ldl_reason_name(reason), ldl_reason_name(S.lost[S.lost_i]));
        el_fail("on_lost with the wrong reason");
    }
    S.lost_i++;
    CHECK(ldl_lock_state(&S.lock) == LDL_LOST && ldl_lock_fencing_token(&S.lock) == 0,
          "on_lost while the lock is not LOST (or shows a token)");
}

static void el_on_leading(void *user, int64_t fence) {
    CHECK(user == &S, "on_leading: wrong user");
    CHECK(S.lead_i < S.nlead && S.lead[S.lead_i] == fence, "on_leading with a fence the model did not grant");
    S.lead_i++;
    CHECK(fence > S.lead_last, "on_leading: the fences of successive grants do not increase");
    S.lead_last = fence;
    CHECK(ldl_lock_state(&S.lock) == LDL_HELD && ldl_lock_fencing_token(&S.lock) == fence,
          "on_leading while not HELD with that fence");
}

/* ------------------------------------------------------------ after each step */
static uint32_t m_until(uint64_t s, uint64_t now, uint32_t w) {
    return within(s, now, w) ? (uint32_t)(w - (now - s)) : 0;
}

static uint32_t m_due(void) {
    uint64_t now = S.clock;
    uint32_t due;
    if (S.dead) return UINT32_MAX;
    if (S.fl_kind && S.fl_answered) return 0;
    if (S.st == LDL_HELD) {
        due = m_until(S.start, now, S.window);
        if (due && !S.timers && !S.fl_kind) {
            uint64_t el = now - S.start;
            uint32_t beat = el >= S.hb ? 0 : (uint32_t)(S.hb - el);
            if (now < S.ride_next && S.ride_next - now > beat) beat = (uint32_t)(S.ride_next - now);
            if (beat < due) due = beat;
        }
        return due;
    }
    if (S.fl_kind && S.st == LDL_ACQUIRING) return m_until(S.fl_pre, now, S.window);
    if (S.fl_kind && S.st == LDL_RELEASING) return m_until(S.fl_pre, now, S.ttl);
    if (S.retrying && !S.timers) {
        CHECK(S.sched_known, "oracle: the next attempt's time is unknown");
        return now >= S.sched ? 0 : (uint32_t)(S.sched - now);
    }
    return UINT32_MAX;
}

static void el_check_step(void) {
    ldl_lock *l = &S.lock;
    const ldl_counters *c = ldl_lock_counters(l);
    int i;
    CHECK(S.ge == S.nee, "an expected event did not come");
    CHECK(S.arm_i == S.narm, "an expected timer was not armed");
    CHECK(S.hback_i == S.nhback, "an expected hand-back did not happen");
    CHECK(S.lost_i == S.nlost, "an expected on_lost did not fire");
    CHECK(S.lead_i == S.nlead, "an expected on_leading did not fire");
    CHECK(!S.attempt_ok, "an attempt that was due did not happen");
    CHECK(!S.renew_ok, "a renew that was due did not happen");
    CHECK(!S.urel_ok, "a release that was due did not happen");
    CHECK(S.cancels == S.cancels_want, "the store's cancel was called a different number of times");
    if (ldl_lock_state(l) != S.st) {
        fprintf(stderr, "state %s, model %s\n", ldl_state_name(ldl_lock_state(l)), ldl_state_name(S.st));
        el_fail("state differs from the model");
    }
    CHECK(ldl_lock_fencing_token(l) == (S.st == LDL_HELD ? S.cur : 0), "fencing token differs from the model");
    CHECK(ldl_lock_reason(l) == S.reason, "reason differs from the model");
    CHECK(ldl_lock_raw_answer(l) == S.raw, "ldl_lock_raw_answer is not the last applied raw answer");
    CHECK(ldl_lock_pending(l) == (S.fl_kind != 0), "ldl_lock_pending differs from the model");
    /* learn the delay of an attempt scheduled in this step (manual mode) */
    if (S.retrying && !S.timers && !S.sched_known) {
        CHECK(S.sched_from == S.clock, "oracle: the clock moved after scheduling");
        m_sched_learn(ldl_lock_due_in_ms(l), S.epoch, "due_in_ms while retrying");
    }
    CHECK(ldl_lock_retrying(l) == S.retrying, "ldl_lock_retrying differs from the model");
    if (c->attempts != S.cnt.attempts) el_fail("counters: attempts");
    if (c->grants != S.cnt.grants) el_fail("counters: grants");
    if (c->contention != S.cnt.contention) el_fail("counters: contention");
    if (c->refused != S.cnt.refused) el_fail("counters: refused");
    if (c->renewals != S.cnt.renewals) el_fail("counters: renewals");
    if (c->store_errors != S.cnt.store_errors) el_fail("counters: store_errors");
    if (c->releases != S.cnt.releases) el_fail("counters: releases");
    if (c->handbacks != S.cnt.handbacks) el_fail("counters: handbacks");
    for (i = 0; i < 8; i++) if (c->losses[i] != S.cnt.losses[i]) el_fail("counters: losses by reason");
    if (c->worst_latency_ms != S.cnt.worst_latency_ms) el_fail("counters: worst latency");
    if (ldl_lock_due_in_ms(l) != m_due()) {
        fprintf(stderr, "due_in_ms %u, model %u\n", ldl_lock_due_in_ms(l), m_due());
        el_fail("due_in_ms differs from the model");
    }
}

/* "held" answered at now: within the trust window of the last answer 1 */
static void el_held_ok(const char *what) {
    CHECK(S.st == LDL_HELD, what);
    CHECK(S.clock < S.ind_pre + S.window,
          "held past pre + ttl - drift of the last store answer 1 (trust extended)");
    CHECK(within(S.start, S.clock, S.window), "held past start + ttl - drift");
}

/* ------------------------------------------------------------ ldl_lock_run: its wait and its scope
   run's wait budget sleeps with retry.sleep_ms until the next scheduled
   attempt, then makes it; the fake sleep moves the clock. The container
   refuses the child scope, so a run that got the lease releases it at once
   (LDL_EFENCE): what is checked here is the wait. */
static int el_body(void *scope, void *user);
static void el_begin(void);

static void el_sleep(void *ctx, uint32_t ms) {
    CHECK(ctx == &S, "sleep_ms: wrong ctx");
    CHECK(S.in_run && S.run_wait, "retry.sleep_ms called outside run's wait budget");
    CHECK(S.retrying, "run sleeps although no attempt is scheduled");
    if (!S.sched_known) {
        CHECK(S.sched_from == S.clock, "oracle: the clock moved after scheduling");
        m_sched_learn(ms, S.epoch, "run sleeps although no attempt is scheduled");
    }
    CHECK(S.clock + ms == S.sched, "run sleeps other than until the scheduled attempt");
    /* one loop round is done: what it was to do happened; the next starts afresh */
    CHECK(S.ge == S.nee && S.arm_i == S.narm && S.hback_i == S.nhback && S.lost_i == S.nlost &&
          S.lead_i == S.nlead && !S.attempt_ok && !S.urel_ok, "run sleeps before its last attempt was done");
    el_begin();
    S.run_sleeps++;
    S.clock += ms;
    TRACE("  run sleeps %u ms -> %llu\n", ms, (unsigned long long)S.clock);
    m_try(S.clock);                 /* run's loop makes the attempt next */
}

static void *el_scope(void *self) {
    CHECK(self == &S, "container.scope: wrong self");
    CHECK(S.in_run && !S.run_fenced, "container.scope called outside run (or twice)");
    CHECK(S.st == LDL_HELD && ldl_lock_state(&S.lock) == LDL_HELD, "run asks for the child scope while not HELD");
    S.run_fenced = 1;
    /* refused: run releases the lease now (ldl_lock_release from HELD) */
    m_stop();
    S.reason = LDL_REASON_RELEASED;
    S.rel_tok = S.cur; S.cur = 0;
    S.st = LDL_RELEASING; S.cnt.releases++;
    S.urel_ok = 1; S.ret = LDL_EINPROGRESS;
    return NULL;
}

/* ------------------------------------------------------------ steps */
enum { OP_ACQUIRE, OP_RELEASE, OP_TICK, OP_POLL, OP_VALID, OP_DUE, OP_DISPOSE, OP_FIRE, OP_CLOCK, OP_PUMP, OP_RUN };

static void el_begin(void) {
    S.nee = S.ge = 0; S.narm = S.arm_i = 0; S.nhback = S.hback_i = 0; S.nlost = S.lost_i = 0;
    S.nlead = S.lead_i = 0; S.cancels = S.cancels_want = 0;
}

static int losses_now(void) {
    int i, n = 0;
    for (i = 0; i < 8; i++) n += (int)S.cnt.losses[i];
    return n;
}

/* tick (renew_now 1) and poll past the fast path */
static int m_heartbeat(int renew_now, uint64_t now) {
    int losses;
    if (S.dead) return 0;
    losses = losses_now();
    m_apply(0, now);
    if (losses_now() != losses) return 0;
    switch (S.st) {
    case LDL_HELD:
        return m_beat(now, renew_now);
    case LDL_ACQUIRING: case LDL_RELEASING:
        return LDL_EINPROGRESS;
    default:
        if (S.retrying && S.sched_known && !S.timers && now >= S.sched) return m_try(now) ? -2 : 0;
        return 0;
    }
}

static void el_clock(uint8_t b) {
    uint64_t to = S.clock;
    switch (b & 15) {
    case 0: to = S.clock + 1; break;
    case 1: to = S.start + S.hb; break;
    case 2: to = S.start + S.window - 1; break;
    case 3: to = S.start + S.window; break;
    case 4: to = S.sched_known ? S.sched - 1 : S.clock + 1; break;
    case 5: to = S.sched_known ? S.sched : S.clock + 2; break;
    case 6: to = S.give_up_at ? S.give_up_at - 1 : S.clock + 3; break;
    case 7: to = S.give_up_at ? S.give_up_at : S.clock + 4; break;
    case 8: to = S.ride_next ? S.ride_next : S.clock + 5; break;
    case 9: to = S.clock + (b >> 4); break;
    case 10: to = S.clock + S.ttl; break;
    case 11: to = S.clock + (uint64_t)S.ttl * (1u + (b >> 4)); break;
    case 12: to = S.fl_kind ? S.fl_pre + S.window : S.clock + S.hb; break;
    case 13: to = S.fl_kind ? S.fl_pre + S.ttl : S.clock + S.drift; break;
    case 14: to = (b & 0x80) ? S.clock - 1 : S.clock + S.base; break;   /* rarely backward */
    default: to = (b & 0x80) && (b & 0x40) ? S.clock - S.ttl : S.clock + S.hb / 2u + 1u; break;
    }
    if ((b & 15) != 14 && (b & 15) != 15 && to < S.clock) to = S.clock;   /* forward only */
    S.clock = to;
    TRACE("  clock -> %llu\n", (unsigned long long)S.clock);
}

static void el_step(int op) {
    ldl_lock *l = &S.lock;
    uint64_t now = S.clock;
    int got = 0, want = 0;
    el_begin();
    switch (op) {
    case OP_ACQUIRE:
        TRACE("acquire @%llu\n", (unsigned long long)now);
        if (S.dead) { want = LDL_ESTATE; }
        else {
            S.ret = LDL_ESTATE;
            m_apply(2, now);
            if (S.st != LDL_IDLE && S.st != LDL_RELEASED) S.ret = LDL_ESTATE;
            else {
                if (S.base) { m_stop(); S.competing = 1; m_round(now); }
                m_attempt(now, 0);
            }
        }
        got = ldl_lock_acquire(l);
        if (!S.dead) want = S.ret;
        CHECK(got == want, "acquire answered other than the model");
        if (got == 1) el_held_ok("acquire answered 1 but the model holds nothing");
        break;
    case OP_TICK:
    case OP_POLL: {
        int r;
        TRACE("%s @%llu\n", op == OP_TICK ? "tick" : "poll", (unsigned long long)now);
        if (S.dead) r = 0;
        else if (op == OP_POLL && S.st == LDL_HELD && !S.fl_kind &&
                 now >= S.start && now - S.start < (S.timers ? S.window : S.hb)) r = 1;
        else if (op == OP_POLL && S.st == LDL_HELD && !S.fl_kind) r = m_beat(now, 0);
        else r = m_heartbeat(op == OP_TICK, now);
        S.ret = r;
        got = op == OP_TICK ? ldl_lock_tick(l) : ldl_lock_poll(l);
        want = r < 0 ? S.ret : r;   /* -1 a renew, -2 an attempt: the store call decided */
        if (got != want) {
            fprintf(stderr, "%s answered %d, model %d\n", op == OP_TICK ? "tick" : "poll", got, want);
            el_fail("tick/poll answered other than the model");
        }
        if (got == 1) el_held_ok("tick/poll answered 1 but the model holds nothing");
        break;
    }
    case OP_VALID: {
        uint32_t v, w = 0;
        TRACE("valid_ms @%llu\n", (unsigned long long)now);
        if (!S.dead) {
            m_apply(0, now);
            if (S.st == LDL_HELD) {
                if (!within(S.start, now, S.window)) m_lose(LDL_REASON_LEASE_EXPIRED, 0, now);
                else w = (uint32_t)(S.window - (now - S.start));
            }
        }
        v = ldl_lock_valid_ms(l);
        if (v != w) { fprintf(stderr, "valid_ms %u, model %u\n", v, w); el_fail("valid_ms differs from the model"); }
        if (v > 0) el_held_ok("valid_ms > 0 but the model holds nothing");
        break;
    }
    case OP_DUE:
        TRACE("due_in_ms @%llu\n", (unsigned long long)now);
        break;   /* el_check_step compares it */
    case OP_RELEASE: {
        int prev = S.st;
        int64_t tok = 0;
        TRACE("release @%llu\n", (unsigned long long)now);
        want = 0;
        if (!S.dead) {
            m_stop();
            S.ret = 0;
            m_apply(1, now);
            if (prev == LDL_RELEASING && S.st == LDL_RELEASED) want = S.ret;
            else if (S.st == LDL_ACQUIRING) { S.st = LDL_RELEASED; m_cancel(); }
            else if (S.st == LDL_RELEASING) want = LDL_EINPROGRESS;
            else if (S.st == LDL_HELD || S.st == LDL_LOST) {
                if (S.st == LDL_HELD) {
                    m_cancel();
                    tok = S.cur; S.cur = 0; S.reason = LDL_REASON_RELEASED;
                } else {
                    tok = S.owed; S.owed = 0;
                }
                if (!tok) S.st = LDL_RELEASED;
                else {
                    S.st = LDL_RELEASING; S.rel_tok = tok; S.cnt.releases++;
                    S.urel_ok = 1; S.ret = LDL_EINPROGRESS;
                    want = -100;   /* the store call decides */
                }
            }
        }
        got = ldl_lock_release(l);
        if (want == -100) want = S.ret;
        if (got != want) { fprintf(stderr, "release answered %d, model %d\n", got, want); el_fail("release answered other than the model"); }
        break;
    }
    case OP_DISPOSE: {
        TRACE("dispose @%llu\n", (unsigned long long)now);
        if (!S.dead) {
            int64_t tok = 0;
            m_stop();
            S.dead = 1;
            m_apply(1, now);
            if (S.st == LDL_HELD) { tok = S.cur; S.reason = LDL_REASON_DISPOSED; }
            else if (S.st == LDL_LOST) tok = S.owed;
            S.cur = 0; S.owed = 0; S.st = LDL_RELEASED; S.ride_next = 0;
            m_cancel();
            m_handback(tok);
        }
        ldl_lock_dispose(l);
        break;
    }
    case OP_FIRE: {
        void (*fire)(void *) = S.fire;
        void *arg = S.fire_arg;
        uint8_t late = in8();
        if (!S.timers || !S.armed) break;
        if (S.clock < S.armed_at + S.armed_delay) S.clock = S.armed_at + S.armed_delay;
        if ((late & 3) == 3) S.clock += late >> 2;
        now = S.clock;
        S.armed = 0;                                   /* spent */
        TRACE("fire @%llu\n", (unsigned long long)now);
        if (!S.dead) {
            if (S.st == LDL_HELD) (void)m_heartbeat(1, now);
            else if (S.retrying) {
                CHECK(S.sched_known && now >= S.sched, "oracle: a retry timer fired early");
                m_try(now);
            }
        }
        fire(arg);
        break;
    }
    case OP_RUN: {
        ldl_run_result res;
        TRACE("run @%llu\n", (unsigned long long)now);
        if (S.async) want = LDL_EUNSUPPORTED;
        else if (S.dead || (S.st != LDL_IDLE && S.st != LDL_RELEASED)) want = LDL_ESTATE;
        else {
            if (S.base) { m_stop(); S.competing = 1; m_round(now); }
            m_attempt(now, 0);
            S.in_run = 1; S.run_wait = S.give_up != 0; S.run_fenced = 0; S.run_sleeps = 0;
            want = -100;
        }
        memset(&res, 0x55, sizeof res);
        got = ldl_lock_run(l, el_body, &S, &res);
        if (want == -100) {
            S.in_run = 0;
            if (S.run_fenced) {
                want = LDL_EFENCE;
                CHECK(res.body_rc == 0 && res.shutdown_rc == 0 && res.lost_reason == 0 &&
                      res.release_rc == S.ret, "run's result does not match the refused scope and the release");
            } else {
                want = LDL_ENOTACQUIRED;
                /* the wait ends only with a grant, or when nothing is scheduled */
                if (S.run_wait) CHECK(!S.retrying, "run stopped waiting while an attempt was still scheduled");
                m_stop();       /* run never competes on */
            }
        }
        if (got != want) { fprintf(stderr, "run answered %d, model %d\n", got, want); el_fail("run answered other than the model"); }
        break;
    }
    case OP_CLOCK:
        el_clock(in8());
        break;
    default:
        if (S.async) el_pump();
        break;
    }
    el_check_step();
}

/* ------------------------------------------------------------ configuration */
static void el_config(ldl_lock_desc *d, ldl_store *st, ldl_async_store *as) {
    static const uint32_t ttls[8] = { 30, 60, 100, 300, 1000, 3000, 10000, 45 };
    uint8_t c0 = in8(), c1 = in8(), c2 = in8(), c3 = in8(), c4 = in8(), c5 = in8();
    S.ttl = ttls[c0 & 7];
    switch ((c0 >> 3) & 3) {
    case 0: S.hb = S.ttl / 3; break;
    case 1: S.hb = S.ttl / 2; break;
    case 2: S.hb = S.ttl / 4; break;
    default: S.hb = 1 + (c5 % (S.ttl / 2)); break;
    }
    switch ((c0 >> 5) & 3) {
    case 0: S.drift = S.ttl / 100 + 2; break;
    case 1: S.drift = 1; break;
    case 2: S.drift = S.ttl / 10; break;
    default: S.drift = S.ttl - S.hb - 1; break;
    }
    if (S.drift == 0) S.drift = 1;
    if ((uint64_t)S.drift >= (uint64_t)S.ttl - S.hb) S.drift = S.ttl - S.hb - 1;
    S.window = S.ttl - S.drift;
    S.timers = c1 & 1;
    S.async = !S.timers && (c1 & 2);
    S.campaign = (c1 & 4) != 0;
    S.events = (c1 & 24) != 0;                    /* 3 in 4 */
    S.hook_calls = S.events && (c1 & 32);
    S.owner = (c1 & 64) != 0;
    switch (c2 & 7) {
    case 0: case 1: S.base = 0; break;
    case 2: S.base = 1; break;
    case 3: S.base = 2 + (c2 >> 3) % 8; break;
    case 4: S.base = S.hb; break;
    case 5: S.base = S.ttl; break;
    default: S.base = 1 + (c2 >> 3); break;
    }
    if (S.campaign && !S.base) S.base = 1 + (c2 >> 3);
    S.cap = 0; S.give_up = 0; S.seed = 0;
    if (S.base) {
        switch (c3 & 3) {
        case 0: S.cap = 0; break;
        case 1: S.cap = S.base; break;
        case 2: S.cap = S.base * 4u; break;
        default: S.cap = S.base * (1u + (c3 >> 2)); break;
        }
        switch ((c3 >> 4) & 7) {
        case 0: case 1: case 2: S.give_up = 0; break;
        case 3: S.give_up = 1; break;
        case 4: S.give_up = S.base; break;
        case 5: S.give_up = S.base * 5u; break;
        default: S.give_up = S.ttl * (1u + (c4 & 3)); break;
        }
        S.seed = 1u + c4;
    }
    switch (c5 & 7) {
    case 0: case 1: case 2: S.ride = 0; break;
    case 3: S.ride = 1; break;
    case 4: S.ride = S.hb / 2u + 1u; break;
    case 5: S.ride = S.window - 1u; break;
    default: S.ride = 1 + (c5 >> 3) % S.window; break;
    }
    if (S.ride >= S.window) S.ride = S.window - 1u;

    memset(d, 0, sizeof *d);
    st->acquire = el_acquire; st->renew = el_renew; st->release = el_release; st->ctx = &S;
    as->acquire = el_a_acquire; as->renew = el_a_renew; as->release = el_a_release;
    as->cancel = el_a_cancel; as->ctx = &S;
    d->key = EL_KEY;
    d->ttl_ms = S.ttl; d->heartbeat_ms = S.hb; d->drift_ms = S.drift;
    if (S.async) d->async_store = as; else d->store = st;
    d->clock.now_ms = NULL;
    if (S.timers) { d->timers.set_timeout = el_set_timeout; d->timers.clear_timeout = el_clear_timeout; }
    d->on_lost = el_on_lost; d->on_leading = el_on_leading; d->user = &S;
    if (S.events) d->on_event = el_on_event;
    d->retry.base_ms = S.base; d->retry.cap_ms = S.cap; d->retry.give_up_ms = S.give_up;
    d->retry.seed = S.seed;
    if (S.base) { d->retry.sleep_ms = el_sleep; d->retry.sleep_ctx = &S; }
    d->ride_out_ms = S.ride;
    d->campaign = S.campaign;
    if (S.owner) {
        memset(&S.ext, 0, sizeof S.ext);
        if (S.async) S.ext.submit_owned = el_a_acquire_owned; else S.ext.acquire_owned = el_acquire_owned;
        S.ext.ctx = &S;
        d->owner = EL_OWNER;
        d->store_ext = &S.ext;
    }
    if (S.base && !S.cap) S.cap = S.ttl > S.base ? S.ttl : S.base;   /* the documented default */
}

static uint64_t el_now(void *ctx) { (void)ctx; return S.clock; }
static int el_body(void *scope, void *user) { (void)scope; (void)user; el_fail("run's body ran although the scope was refused"); return 0; }
static int el_value(void *scope, const char *name, void *value) { (void)scope; (void)name; (void)value; return -1; }
static int el_shutdown(void *scope) { (void)scope; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ldl_lock_desc d;
    ldl_store st;
    ldl_async_store as;
    int i;
    memset(&S, 0, sizeof S);
    if (el_trace < 0) el_trace = getenv("FZ_TRACE") != NULL;
    in_p = data; in_n = size; in_i = 0;
    el_config(&d, &st, &as);
    d.clock.now_ms = el_now; d.clock.ctx = &S;
    d.container.scope = el_scope; d.container.value = el_value; d.container.shutdown = el_shutdown;
    d.container.self = &S;
    S.clock = ((uint64_t)1 << 32) + in8();
    if (ldl_lock_init(&S.lock, &d) != LDL_OK) {
        fprintf(stderr, "init refused: %s\n", ldl_lock_why(&S.lock));
        el_fail("init refused a valid configuration");
    }
    S.st = LDL_IDLE;
    TRACE("config ttl=%u hb=%u drift=%u timers=%d async=%d base=%u cap=%u give_up=%u ride=%u campaign=%d events=%d hook=%d owner=%d\n",
          S.ttl, S.hb, S.drift, S.timers, S.async, S.base, S.cap, S.give_up, S.ride, S.campaign,
          S.events, S.hook_calls, S.owner);
    for (i = 0; in_i < in_n && i < 300; i++) {
        uint8_t b = in8();
        S.step = i;
        switch (b % 16) {
        case 0: case 1: el_step(OP_ACQUIRE); break;
        case 2: el_step((b >> 4) == 15 ? OP_DISPOSE : (b >> 4) >= 12 ? OP_RUN : OP_RELEASE); break;
        case 3: el_step(OP_TICK); break;
        case 4: case 5: case 6: el_step(OP_POLL); break;
        case 7: el_step(OP_VALID); break;
        case 8: el_step(OP_DUE); break;
        case 9: case 10: el_step(S.timers ? OP_FIRE : OP_PUMP); break;
        case 11: case 12: case 13: el_step(OP_CLOCK); break;
        default: el_step(S.async ? OP_PUMP : OP_FIRE); break;
        }
    }
    /* the end: dispose; then nothing may reach the store and the ledger balances */
    S.step = -1;
    el_step(OP_DISPOSE);
    el_step(OP_ACQUIRE);
    el_step(OP_POLL);
    el_step(OP_TICK);
    el_step(OP_RELEASE);
    el_step(OP_RUN);
    el_step(OP_DISPOSE);
    CHECK(!ldl_lock_pending(&S.lock), "pending after dispose");
    ledger_balanced();
    return 0;
}
