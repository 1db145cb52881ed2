/* reentry.c - a store, a timer or on_lost that re-enters the lock. */
#include "harness.h"

static void fix_init(fix *f, int timers) { fix_setup(f, "re", timers, 0); }

static int state_inside;
static void release_inside(script_store *s) { s->reentry_rc = ldl_lock_release(s->lock); state_inside = ldl_lock_state(s->lock); }
static void dispose_inside(script_store *s) { ldl_lock_dispose(s->lock); state_inside = ldl_lock_state(s->lock); s->reentry_rc = ldl_lock_tick(s->lock) + ldl_lock_poll(s->lock); }
static void tick_inside(script_store *s) { s->reentry_rc = ldl_lock_tick(s->lock); }
static void acquire_inside(script_store *s) { s->reentry_rc = ldl_lock_acquire(s->lock); }

static void t_release_inside_renew(void) {
    int tm;
    for (tm = 0; tm <= 1; tm++) {                     /* manual mode, then timer mode */
        fix f;
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_init(&f, tm);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        f.s.on_renew = release_inside;
        state_inside = -1;
        lost_calls = 0;
        ev_reset();
        CHECK_EQ(ldl_lock_tick(&f.l), 0);             /* the pending tick answers 0 */
        CHECK_EQ(f.s.reentry_rc, 0);                  /* the re-entrant release answers 0 */
        CHECK_EQ(state_inside, LDL_RELEASED);         /* readable immediately */
        CHECK_EQ(f.s.release_calls, 1);               /* the renewing lease handed back once */
        CHECK_EQ(f.s.released[0], 1);
        CHECK_STR(ev_log(), tm ? "clear;renew;release;" : "renew;release;");   /* no timer re-armed */
        CHECK_EQ(fake_timers_armed(&f.ft), 0);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);          /* RELEASED by release: may acquire */
    }
}

static void t_dispose_inside_renew_even_if_renew_fails(void) {
    int rcs[] = { 1, 0, -1, 2 };
    size_t i;
    for (i = 0; i < 4; i++) {
        fix f; fix_init(&f, 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        f.s.on_renew = dispose_inside;
        f.s.renew_rc = rcs[i];
        lost_calls = 0;
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(f.s.reentry_rc, 0);                  /* tick/poll after dispose: 0 */
        CHECK_EQ(state_inside, LDL_RELEASED);
        CHECK_EQ(f.s.release_calls, 1);               /* whatever renew answered */
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
        ldl_lock_dispose(&f.l);
        CHECK_EQ(f.s.release_calls, 1);
    }
}

static void t_reentrant_calls_inside_renew_and_release(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.on_renew = tick_inside;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(f.s.reentry_rc, LDL_ESTATE);
    CHECK_EQ(f.s.renew_calls, 1);
    f.s.on_renew = acquire_inside;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(f.s.reentry_rc, LDL_ESTATE);
    f.s.on_release = acquire_inside;
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.reentry_rc, LDL_ESTATE);
    CHECK_EQ(f.s.acquire_calls, 1);
    /* dispose from inside release: still one store call */
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.on_release = dispose_inside;
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.release_calls, 2);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
}

static ldl_lock *lost_lock;
static int lost_action;
static int lost_inner_rc;
static void on_lost_reenter(void *user, int reason) {
    (void)user;
    lost_calls++;
    lost_last_reason = reason;
    CHECK_EQ(ldl_lock_state(lost_lock), LDL_LOST);       /* already LOST */
    if (lost_action == 1) lost_inner_rc = ldl_lock_release(lost_lock);
    if (lost_action == 2) ldl_lock_dispose(lost_lock);
    if (lost_action == 3) lost_inner_rc = ldl_lock_acquire(lost_lock);
}

static void t_on_lost_may_release_or_dispose(void) {
    int action, tm;
    for (tm = 0; tm <= 1; tm++) {          /* the renew fails in a tick, then in a timer fire */
        if (SYNC_ONLY_MODE(tm)) continue;
        for (action = 1; action <= 3; action++) {
            fix f; fix_init(&f, tm);
            f.d.on_lost = on_lost_reenter;
            CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
            lost_lock = &f.l; lost_action = action; lost_calls = 0; lost_inner_rc = 99;
            CHECK_EQ(ldl_lock_acquire(&f.l), 1);
            f.s.renew_rc = 0;
            if (tm) CHECK_EQ(fake_timers_fire(&f.ft), 1);
            else CHECK_EQ(ldl_lock_tick(&f.l), 0);
            CHECK_EQ(lost_calls, 1);
            CHECK_EQ(fake_timers_armed(&f.ft), 0);
            if (action == 1) { CHECK_EQ(lost_inner_rc, 1); CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED); CHECK_EQ(f.s.release_calls, 1); }
            if (action == 2) { CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED); CHECK_EQ(f.s.release_calls, 1); }
            if (action == 3) { CHECK_EQ(lost_inner_rc, LDL_ESTATE); CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST); }
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
            ldl_lock_dispose(&f.l);
            CHECK_EQ(f.s.release_calls, 1);
            CHECK_EQ(lost_calls, 1);                       /* once, never for the dispose */
        }
    }
}

static void t_on_lost_release_after_unarmable(void) {
    /* the lease was already handed back: release inside on_lost makes no call */
    fix f;
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix_init(&f, 1);
    f.d.on_lost = on_lost_reenter;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    lost_lock = &f.l; lost_action = 1; lost_calls = 0;
    f.ft.fail_next = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(lost_inner_rc, 0);
    CHECK_EQ(f.s.release_calls, 1);
}

static void t_on_lost_never_without_grant(void) {
    int tm;
    for (tm = 0; tm <= 1; tm++) {
        fix f;
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_init(&f, tm);
        f.s.acquire_rc = 0;
        ldl_lock_acquire(&f.l);
        ldl_lock_tick(&f.l);
        ldl_lock_poll(&f.l);
        f.c.now += 100000;
        ldl_lock_poll(&f.l);
        ldl_lock_valid_ms(&f.l);
        ldl_lock_release(&f.l);
        ldl_lock_dispose(&f.l);
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(f.s.renew_calls, 0);
        CHECK_EQ(f.s.acquire_calls, 1);
    }
}

static void t_timer_fire_after_dispose_is_noop(void) {
    fix f;
    void (*fire)(void *); void *arg;
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    fire = f.ft.t[0].fire; arg = f.ft.t[0].arg;
    ldl_lock_dispose(&f.l);
    CHECK_EQ(fake_timers_armed(&f.ft), 0);
    fire(arg);                                         /* a timer that fires anyway */
    CHECK_EQ(f.s.renew_calls, 0);
    CHECK_EQ(f.ft.set_calls, 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    /* and a stale fire after a release does not renew either */
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    fire = f.ft.t[0].fire; arg = f.ft.t[0].arg;
    ldl_lock_release(&f.l);
    fire(arg);
    CHECK_EQ(f.s.renew_calls, 0);
    CHECK_EQ(f.ft.set_calls, 1);
}

static void t_release_inside_dispose_is_immediate(void) {
    /* dispose's own store.release re-enters with release: RELEASED at once */
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.on_release = release_inside;
    state_inside = -1;
    f.s.reentry_rc = 99;
    ldl_lock_dispose(&f.l);
    CHECK_EQ(state_inside, LDL_RELEASED);
    CHECK_EQ(f.s.reentry_rc, 0);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
}

/* the same through the synchronous store (and, in the async pass, its
   answered-inside view): a re-entrant release, then the store answers 0 with
   a token written: nothing is handed back */
static void ss_release_inside(script_store *s) { s->reentry_rc = ldl_lock_release(s->lock); }
static void t_reentrant_release_sync_acquire_no_with_token(void) {
    fix f;
    fix_setup(&f, "sk", 0, 1000);
    f.s.on_acquire = ss_release_inside;
    f.s.acquire_rc = 0;
    f.s.acquire_token = 7;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(f.s.reentry_rc, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(f.s.release_calls, 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 0);
}

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
static int64_t in_token = -1;
static int in_state = -1, in_held = -1, in_tick = -99, in_poll = -99, in_acq = -99, in_rel = -99;
static uint32_t in_valid = 99;
static void read_inside(script_store *s) {
    in_token = ldl_lock_fencing_token(s->lock);
    in_state = ldl_lock_state(s->lock);
    in_held = ldl_lock_held(s->lock);
    in_valid = ldl_lock_valid_ms(s->lock);
}
static void reenter_inside(script_store *s) {
    in_token = ldl_lock_fencing_token(s->lock);
    in_tick = ldl_lock_tick(s->lock);
    in_poll = ldl_lock_poll(s->lock);
    in_acq = ldl_lock_acquire(s->lock);
    in_rel = ldl_lock_release(s->lock);
}
static void reset_inside(void) {
    in_token = -1; in_state = in_held = -1; in_valid = 99;
    in_tick = in_poll = in_acq = in_rel = -99;
}

/* the token read from inside store.release during a release is 0 (the
   lock left HELD before the store call)
   M: ldl__release clearing `l->_token` after the store call instead of
      before it; M: ldl_lock_dispose clearing `l->_token` after the hand-back. */
static void t_token_zero_inside_release(void) {
    fix f;
    fix_setup(&f, "tok", 0, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 1);
    f.s.on_release = read_inside;
    reset_inside();
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(in_token, 0);
    CHECK_EQ(in_state, LDL_RELEASING);
    CHECK_EQ(in_held, 0);
    CHECK_EQ(in_valid, 0);
    /* from LOST (owed) */
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    f.s.on_release = read_inside;
    reset_inside();
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.released[1], 2);
    CHECK_EQ(in_token, 0);
    CHECK_EQ(in_held, 0);
    /* dispose from HELD: the hand-back sees token 0 too */
    f.s.renew_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 3);
    f.s.on_release = read_inside;
    reset_inside();
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.released[2], 3);
    CHECK_EQ(in_token, 0);
    CHECK_EQ(in_state, LDL_RELEASED);
    CHECK_EQ(in_held, 0);
}

/* tick/poll re-entered from the store call of a dispose answer 0, not
   LDL_ESTATE (the lock is already disposed); acquire LDL_ESTATE; release 0
   and no second store call
   M: ldl_lock_dispose setting `l->_dead = 1` only after its hand-back
      (the re-entrant tick/poll meet the INSIDE column: LDL_ESTATE). */
static void t_reentry_during_dispose(void) {
    fix f;
    int from;
    for (from = 0; from < 2; from++) {            /* 0: HELD, 1: LOST with the token owed */
        fix_setup(&f, "disp", 0, 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        if (from == 1) {
            f.s.renew_rc = -1;
            CHECK_EQ(ldl_lock_tick(&f.l), 0);
            CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
        }
        f.s.on_release = reenter_inside;
        reset_inside();
        ldl_lock_dispose(&f.l);
        CHECK_EQ(f.s.release_calls, 1);
        CHECK_EQ(f.s.released[0], 1);
        CHECK_EQ(in_token, 0);
        CHECK_EQ(in_tick, 0);
        CHECK_EQ(in_poll, 0);
        CHECK_EQ(in_acq, LDL_ESTATE);
        CHECK_EQ(in_rel, 0);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), from ? LDL_REASON_STORE_ERROR : LDL_REASON_DISPOSED);
        CHECK_EQ(lost_calls, from);
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(f.s.renew_calls, from);
    }
}

void suite_reentry(void) {
    RUN(t_release_inside_dispose_is_immediate);
    RUN(t_release_inside_renew);
    RUN(t_dispose_inside_renew_even_if_renew_fails);
    RUN(t_reentrant_calls_inside_renew_and_release);
    RUN(t_on_lost_may_release_or_dispose);
    RUN(t_on_lost_release_after_unarmable);
    RUN(t_on_lost_never_without_grant);
    RUN(t_timer_fire_after_dispose_is_noop);
    RUN(t_reentrant_release_sync_acquire_no_with_token);
    RUN(t_token_zero_inside_release);
    RUN(t_reentry_during_dispose);
}
