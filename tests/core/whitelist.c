/* whitelist.c - the positive-whitelist matrix: a store answer is a grant
   only if acquire returned exactly 1 AND the token is in [1, INT64_MAX] AND
   it advanced past every token this lock accepted. Each row asserts the
   exact answer, state, token, reason and store calls (hand-backs). */
#include "harness.h"

enum { H_NONE, H_RELEASE, H_DISPOSE, H_ACQUIRE, H_TICK, H_POLL, H_RUN, H_DISPOSE_TICK, H_RELEASE_TWICE };

typedef struct row {
    const char *name;
    int64_t prior;        /* a token accepted (and released) first; 0 = none */
    int rc;               /* acquire's answer */
    int write;            /* write the token? */
    int64_t tok;
    int hook;             /* re-entry from inside the acquire call */
    int unarmable;        /* timer mode with a set_timeout that answers 0 */
    /* expected */
    int want_ret;
    int want_state;
    int64_t want_token;
    int want_reason;      /* a refusal leaves the previous reason untouched */
    int want_handbacks;   /* release calls after the acquire */
    int64_t want_hb_token;
    int want_reentry;     /* what the re-entrant call answered (hooks only) */
} row;


static void hook(script_store *s) {
    int h = s->reentry_rc;   /* the row's hook id is parked here before the call */
    switch (h) {
    case H_RELEASE: s->reentry_rc = ldl_lock_release(s->lock); break;
    case H_DISPOSE: ldl_lock_dispose(s->lock); s->reentry_rc = 0; break;
    case H_ACQUIRE: s->reentry_rc = ldl_lock_acquire(s->lock); break;
    case H_TICK:    s->reentry_rc = ldl_lock_tick(s->lock); break;
    case H_POLL:    s->reentry_rc = ldl_lock_poll(s->lock); break;
    case H_RUN:     s->reentry_rc = ldl_lock_run(s->lock, nop_body, NULL, NULL); break;
    case H_DISPOSE_TICK: ldl_lock_dispose(s->lock); s->reentry_rc = ldl_lock_tick(s->lock) + 10 * ldl_lock_poll(s->lock); break;
    case H_RELEASE_TWICE: s->reentry_rc = ldl_lock_release(s->lock) + 10 * ldl_lock_release(s->lock); break;
    default: break;
    }
}

#define GRANT LDL_HELD
static const row rows[] = {
    /* name                          prior rc        w  tok        hook        ua  ret st          token      reason                      hb hbtok re */
    { "answer 0, token untouched",   0, 0,           0, 0,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 0, token 5",           0, 0,           1, 5,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 2, token 5",           0, 2,           1, 5,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer -1, token 5",          0, -1,          1, 5,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer -1, token untouched",  0, -1,          0, 0,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer INT_MIN, token 5",     0, INT_MIN,     1, 5,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer INT_MAX, token 5",     0, INT_MAX,     1, 5,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token untouched",   0, 1,           0, 0,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token 0",           0, 1,           1, 0,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token -1",          0, 1,           1, -1,        H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token INT64_MIN",   0, 1,           1, INT64_MIN, H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token 1",           0, 1,           1, 1,         H_NONE,     0,  1, GRANT,       1,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 1, token INT64_MAX",   0, 1,           1, INT64_MAX, H_NONE,     0,  1, GRANT,       INT64_MAX, LDL_REASON_NONE,            0, 0,  0 },
    { "token equal to last (7,7)",   7, 1,           1, 7,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_FENCE_REGRESSED, 1, 7,  0 },
    { "token below last (7,3)",      7, 1,           1, 3,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_FENCE_REGRESSED, 1, 3,  0 },
    { "token 1 after INT64_MAX",     INT64_MAX, 1,   1, 1,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_FENCE_REGRESSED, 1, 1,  0 },
    { "token advances (7,8)",        7, 1,           1, 8,         H_NONE,     0,  1, GRANT,       8,         LDL_REASON_NONE,            0, 0,  0 },
    { "answer 2 after 7, token 9",   7, 2,           1, 9,         H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_RELEASED,            0, 0,  0 },
    { "answer 1, token -5 after 7",  7, 1,           1, -5,        H_NONE,     0,  0, LDL_IDLE,    0,         LDL_REASON_RELEASED,            0, 0,  0 },
    { "re-entrant acquire",          0, 1,           1, 4,         H_ACQUIRE,  0,  1, GRANT,       4,         LDL_REASON_NONE,            0, 0,  LDL_ESTATE },
    { "re-entrant tick",             0, 1,           1, 4,         H_TICK,     0,  1, GRANT,       4,         LDL_REASON_NONE,            0, 0,  LDL_ESTATE },
    { "re-entrant poll",             0, 1,           1, 4,         H_POLL,     0,  1, GRANT,       4,         LDL_REASON_NONE,            0, 0,  LDL_ESTATE },
    { "re-entrant run",              0, 1,           1, 4,         H_RUN,      0,  1, GRANT,       4,         LDL_REASON_NONE,            0, 0,  LDL_ESTATE },
    { "release inside, grant 5",     0, 1,           1, 5,         H_RELEASE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            1, 5,  0 },
    { "release inside, answer 2 tok 5", 0, 2,        1, 5,         H_RELEASE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            0, 0,  0 },
    { "release inside, answer 0 untouched", 0, 0,    0, 0,         H_RELEASE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            0, 0,  0 },
    { "release twice inside",        0, 1,           1, 5,         H_RELEASE_TWICE, 0, 0, LDL_RELEASED, 0,    LDL_REASON_NONE,            1, 5,  0 },
    { "dispose inside, grant 5",     0, 1,           1, 5,         H_DISPOSE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            1, 5,  0 },
    { "dispose inside, answer -1 tok 0", 0, -1,      1, 0,         H_DISPOSE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            0, 0,  0 },
    { "dispose inside, grant -5",    0, 1,           1, -5,        H_DISPOSE,  0,  0, LDL_RELEASED, 0,        LDL_REASON_NONE,            0, 0,  0 },
    { "dispose inside, then tick/poll", 0, 1,        1, 5,         H_DISPOSE_TICK, 0, 0, LDL_RELEASED, 0,     LDL_REASON_NONE,            1, 5,  0 },
};
/* timer mode only (a non-blocking store needs manual mode): its own test */
static const row unarmable_row =
    { "grant but timer unarmable",   0, 1,           1, 5,         H_NONE,     1,  0, LDL_LOST,    0,         LDL_REASON_TIMER_UNARMABLE, 1, 5,  0 };

static void run_row(const row *r) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc; script_store s; fake_clock c = {0}; fake_timers ft;
    int ret, rel0, failed0 = t_failed_checks;
    script_init(&s);
    memset(&ft, 0, sizeof ft);
    desc_for(&d, &fc, &s, &c, "k", 300);
    if (r->unarmable) d.timers = fake_timers_of(&ft);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    s.lock = &l;
    if (r->prior) {
        s.acquire_token = r->prior; s.auto_token = 0;
        CHECK_EQ(ldl_lock_acquire(&l), 1);
        CHECK_EQ(ldl_lock_release(&l), 1);
    }
    rel0 = s.release_calls;
    s.acquire_rc = r->rc; s.write_token = r->write; s.acquire_token = r->tok; s.auto_token = 0;
    if (r->hook) { s.reentry_rc = r->hook; s.on_acquire = hook; }
    if (r->unarmable) ft.fail_next = 1;
    lost_calls = 0;
    ret = ldl_lock_acquire(&l);
    CHECK_EQ(ret, r->want_ret);
    CHECK_EQ(ldl_lock_state(&l), r->want_state);
    CHECK_EQ(ldl_lock_held(&l), r->want_state == LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&l), r->want_token);
    CHECK_EQ(ldl_lock_reason(&l), r->want_reason);
    CHECK_EQ(s.release_calls - rel0, r->want_handbacks);
    if (r->want_handbacks) CHECK_EQ(s.released[rel0], r->want_hb_token);
    if (r->hook) CHECK_EQ(s.reentry_rc, r->hook == H_RUN ? RUN_RC(r->want_reentry) : r->want_reentry);
    CHECK_EQ(lost_calls, r->unarmable ? 1 : 0);
    /* after the row: a later release makes no further store call unless HELD */
    rel0 = s.release_calls;
    ret = ldl_lock_release(&l);
    if (r->want_state == LDL_HELD) { CHECK_EQ(ret, 1); CHECK_EQ(s.release_calls - rel0, 1); }
    else { CHECK_EQ(ret, 0); CHECK_EQ(s.release_calls - rel0, 0); }
    if (t_failed_checks != failed0) chk_note("in row: %s", r->name);
}

static void t_whitelist_matrix(void) {
    size_t i;
    CHECK(sizeof rows / sizeof rows[0] >= 23);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) run_row(&rows[i]);
}

static void t_whitelist_unarmable_grant(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    run_row(&unarmable_row);
}

static void t_token_zeroed_before_every_call(void) {
    /* a store that answers 1 and never writes: the lock must have zeroed the
       token slot itself, even after an earlier grant wrote one */
    ldl_lock l; ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300);
    ldl_lock_init(&l, &d);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_release(&l), 1);
    s.write_token = 0;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    CHECK_EQ(s.release_calls, 1);
}

static void t_fence_monotonic_across_lifecycles(void) {
    ldl_lock l; ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    int i;
    int64_t last = 0;
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300);
    ldl_lock_init(&l, &d);
    s.acquire_token = 10;
    for (i = 0; i < 20; i++) {
        CHECK_EQ(ldl_lock_acquire(&l), 1);
        CHECK(ldl_lock_fencing_token(&l) > last);
        last = ldl_lock_fencing_token(&l);
        CHECK_EQ(ldl_lock_release(&l), 1);
        CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    }
    /* a store that replays an old token is refused and the lease handed back */
    s.acquire_token = 12; s.auto_token = 0;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(s.released[s.release_calls - 1], 12);
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    /* the refusal did not lower the bar: 29 is still refused, 30 is not */
    s.acquire_token = 29;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    s.acquire_token = 30;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_NONE);   /* NONE again at each grant */
    /* the whitelist is also kept across a dispose-free LOST */
    s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    ldl_lock_release(&l);
    s.acquire_token = 30;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_FENCE_REGRESSED);
}

static void t_handback_reentry_is_safe(void) {
    /* the refused grant's hand-back call re-enters the lock */
    ldl_lock l; ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300);
    ldl_lock_init(&l, &d);
    s.lock = &l;
    s.acquire_token = 5; s.auto_token = 0;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_release(&l), 1);
    s.reentry_rc = H_ACQUIRE; s.on_release = hook;
    CHECK_EQ(ldl_lock_acquire(&l), 0);             /* token 5 again: refused */
    CHECK_EQ(s.reentry_rc, LDL_ESTATE);           /* acquire inside the hand-back */
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    s.reentry_rc = H_RELEASE; s.on_release = hook;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(s.reentry_rc, 0);                    /* release inside the hand-back answers 0 ... */
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);   /* ... and takes effect at once */
    s.reentry_rc = H_DISPOSE; s.on_release = hook;
    CHECK_EQ(ldl_lock_acquire(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);   /* disposed inside the hand-back */
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
}

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
/* A synchronous acquire whose store call takes the whole window is refused
   and handed back exactly once (LEASE_EXPIRED, IDLE); one ms less is
   granted and counts from the clock read before the call. The refused
   token does not raise the fence floor.
   M: ldl__granted without its window check, or with `<=` in ldl__within;
   M: ldl__granted raising `l->_last` before the window check;
   M: the grant counting from the clock after the call (valid_ms 295). */
static void t_sync_acquire_takes_window(void) {
    fix f;
    fix_setup(&f, "slow", 0, 1000);
    f.s.clock = &f.c;
    f.s.call_ms = 295;                             /* window = 300 - 5 */
    ev_reset();
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 1);                /* handed back exactly once */
    CHECK_EQ(f.s.released[0], 1);
    CHECK_STR(ev_log(), "acquire;release;");
    CHECK_EQ(lost_calls, 0);                       /* never HELD: no on_lost */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 0);           /* nothing owed */
    CHECK_EQ(f.s.release_calls, 1);
    /* one ms less: granted, and the same token 1 is not "regressed" */
    f.s.call_ms = 294;
    f.s.acquire_token = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);          /* counted from before the call */
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    f.s.call_ms = 0;
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.released[1], 1);
    /* regressed AND late reads FENCE_REGRESSED; still handed back once */
    f.s.call_ms = 400;
    f.s.acquire_token = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(f.s.release_calls, 3);
    CHECK_EQ(f.s.released[2], 1);
}

/* a store that answers LDL_EINPROGRESS (-13) itself -- a synchronous store,
   or a non-blocking one passing -13 to ldl_op_complete inside the submit (the
   async pass) -- answers a negative value: a store error, never "in flight".
   Found by the bench helper: a renew answering -13 left the lock HELD (reason
   NONE), a release answering -13 stuck in RELEASING for good.
   M: ldl__call without the "a store's own -13 is not in flight" line. */
static void t_store_answering_einprogress(void) {
    fix f;
    fix_setup(&f, "minus13", 0, 1000);
    f.s.renew_rc = LDL_EINPROGRESS;
    f.s.release_rc = LDL_EINPROGRESS;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now = 1100;                                   /* heartbeat due */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);     /* the owed token, answered -13 */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    CHECK_EQ(f.s.release_calls, 1);
    /* an acquire answered -13 is no grant */
    f.s.acquire_rc = LDL_EINPROGRESS;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    /* and a HELD lease whose release answers -13 ends RELEASED, not RELEASING */
    f.s.acquire_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
}

void suite_whitelist(void) {
    RUN(t_whitelist_matrix);
    RUN(t_whitelist_unarmable_grant);
    RUN(t_token_zeroed_before_every_call);
    RUN(t_fence_monotonic_across_lifecycles);
    RUN(t_handback_reentry_is_safe);
    RUN(t_sync_acquire_takes_window);
    RUN(t_store_answering_einprogress);
}
