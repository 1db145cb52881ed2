/* async_reentry.c - re-entry from inside a submit, a cancel, a hand-back or on_lost
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* release inside the acquire submit, the request still queued: RELEASED at
   once, the acquire answers 0 and is cancelled; the store hands back the late
   grant: the token released exactly once, by the store */
static void t_release_inside_acquire_submit_queued(void) {
    afix f; afix_setup(&f, T0);
    f.s.on_submit = hk_release;
    f.s.re_state = -1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(f.s.re[0], 0);
    CHECK_EQ(f.s.re_state, LDL_RELEASED);                /* readable at once */
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(as_live(&f.s), 0);
    CHECK_STR(ev_log(), "acq;cancel:acq;");
    defer_answer(&f.s, 0, 1, 9);
    CHECK_EQ(rel_count(&f.s, 9), 1);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* release inside the acquire submit, the grant answered inside the submit
   (before or after the re-entry): the lock hands it back once; it never
   raises the fence floor; acquire may follow (RELEASED by release) */
static void t_release_inside_acquire_submit_answered(void) {
    int after;
    for (after = 0; after < 2; after++) {
        afix f; afix_setup(&f, T0);
        f.s.on_submit = hk_release;
        f.s.hook_after_answer = after;
        f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = 1; f.s.inline_tok[LDL_OP_ACQUIRE] = 9;
        CHECK_EQ(ldl_lock_acquire(&f.l), 0);
        CHECK_EQ(f.s.re[0], 0);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
        CHECK_EQ(rel_count(&f.s, 9), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        f.s.inline_on[LDL_OP_ACQUIRE] = 0;
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, as_last(&f.s), 1, 8);         /* 9 was not accepted */
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 8);
        afix_end(&f, 1);
    }
}

/* dispose inside the acquire submit: terminal at once; tick/poll/release
   re-entered after it answer 0, acquire LDL_ESTATE, run LDL_EUNSUPPORTED;
   after the outermost call returns no store holds the op */
static void t_dispose_inside_acquire_submit(void) {
    int mode;
    for (mode = 0; mode < 3; mode++) {       /* queued; answered after; answered before */
        afix f; afix_setup(&f, T0);
        f.s.on_submit = hk_dispose;
        if (mode) {
            f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = 1; f.s.inline_tok[LDL_OP_ACQUIRE] = 9;
            f.s.hook_after_answer = mode == 2;
        }
        CHECK_EQ(ldl_lock_acquire(&f.l), 0);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(f.s.re[1], 0);
        CHECK_EQ(f.s.re[2], 0);
        CHECK_EQ(f.s.re[3], 0);
        CHECK_EQ(f.s.re[4], LDL_ESTATE);
        CHECK_EQ(f.s.re[5], LDL_EUNSUPPORTED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK(ldl_lock_answer(&f.l) != LDL_EINPROGRESS);
        if (!mode) defer_answer(&f.s, 0, 1, 9);          /* the store's hand-back */
        CHECK_EQ(rel_count(&f.s, 9), 1);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
        CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
        afix_end(&f, 1);
    }
}

/* release / dispose inside the renew submit: RELEASED at once, the pending
   tick answers 0, the renewing token handed back exactly once, no on_lost */
static void t_release_dispose_inside_renew_submit(void) {
    int mode;
    for (mode = 0; mode < 6; mode++) {       /* release|dispose x queued|answered-after|before */
        afix f; afix_setup(&f, T0);
        int disp = mode >= 3, m = mode % 3;
        (void)held(&f, 5);
        f.s.on_submit = disp ? hk_dispose : hk_release;
        f.s.hook_kind = LDL_OP_RENEW;
        if (m) {                             /* a renew no answered after, a yes before */
            f.s.inline_on[LDL_OP_RENEW] = 1; f.s.inline_rc[LDL_OP_RENEW] = m == 1 ? 0 : 1;
            f.s.hook_after_answer = m == 2;
        }
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), disp ? LDL_REASON_DISPOSED : LDL_REASON_RELEASED);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), disp ? LDL_ESTATE : LDL_EINPROGRESS);
        afix_end(&f, 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
    }
}

/* release / dispose inside the user's own release submit: the release already
   went out, so nothing is sent again; the answer is never left EINPROGRESS */
static void t_release_dispose_inside_release_submit(void) {
    int mode;
    for (mode = 0; mode < 4; mode++) {
        afix f; afix_setup(&f, T0);
        int rc;
        (void)held(&f, 5);
        f.s.on_submit = mode & 1 ? hk_dispose : hk_release;
        f.s.hook_kind = LDL_OP_RELEASE;
        if (mode & 2) { f.s.inline_on[LDL_OP_RELEASE] = 1; f.s.inline_rc[LDL_OP_RELEASE] = 1; }
        rc = ldl_lock_release(&f.l);
        CHECK(rc != LDL_EINPROGRESS);
        CHECK(rc == 0 || rc == 1);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK(ldl_lock_answer(&f.l) != LDL_EINPROGRESS);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(lost_calls, 0);
        afix_end(&f, 1);
    }
}

/* acquire, tick, poll re-entered from a submit answer LDL_ESTATE; run
   LDL_EUNSUPPORTED; valid_ms applies nothing; no second request */
static void t_reentrant_calls_inside_submits(void) {
    int kind;
    for (kind = LDL_OP_ACQUIRE; kind <= LDL_OP_RELEASE; kind++) {
        afix f; afix_setup(&f, T0);
        int subs;
        if (kind != LDL_OP_ACQUIRE) (void)held(&f, 5);
        f.c.now = T0 + HB;
        f.s.on_submit = hk_calls;
        f.s.hook_kind = kind;
        /* the answer arrives inside the submit before the re-entry: valid_ms
           must not apply it */
        f.s.inline_on[kind] = 1; f.s.inline_rc[kind] = 1; f.s.inline_tok[kind] = 5;
        f.s.hook_after_answer = 1;
        subs = f.s.submits[1] + f.s.submits[2] + f.s.submits[3];
        if (kind == LDL_OP_ACQUIRE) CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        if (kind == LDL_OP_RENEW) CHECK_EQ(ldl_lock_tick(&f.l), 1);
        if (kind == LDL_OP_RELEASE) CHECK_EQ(ldl_lock_release(&f.l), 1);
        CHECK_EQ(f.s.submits[1] + f.s.submits[2] + f.s.submits[3], subs + 1);
        CHECK_EQ(f.s.re[0], LDL_ESTATE);
        CHECK_EQ(f.s.re[1], LDL_ESTATE);
        CHECK_EQ(f.s.re[2], LDL_ESTATE);
        CHECK_EQ(f.s.re[3], LDL_EUNSUPPORTED);
        CHECK_EQ(f.s.re[4], LDL_EUNSUPPORTED);
        CHECK_EQ(f.s.re[5], f.s.re_state);               /* valid_ms changed no state */
        CHECK_EQ(f.s.re[6], 1);                          /* and left the answer recorded */
        if (kind == LDL_OP_ACQUIRE) CHECK_EQ(f.s.re_valid, 0);   /* not HELD yet */
        if (kind == LDL_OP_RENEW) CHECK_EQ(f.s.re_valid, WIN - HB);
        CHECK_EQ(ST(f), kind == LDL_OP_RELEASE ? LDL_RELEASED : LDL_HELD);
        CHECK_EQ(lost_calls, 0);
        afix_end(&f, 1);
    }
}

/* re-entry from cancel: release from ACQUIRING cancels; inside that cancel
   acquire/tick/poll answer LDL_ESTATE, run LDL_EUNSUPPORTED */
static void t_reentry_from_cancel_of_acquire(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.s.on_cancel = hk_calls;
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(f.s.re[0], LDL_ESTATE);
    CHECK_EQ(f.s.re[1], LDL_ESTATE);
    CHECK_EQ(f.s.re[2], LDL_ESTATE);
    CHECK_EQ(f.s.re[3], LDL_EUNSUPPORTED);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

/* dispose's cancel re-entered: tick/poll/release answer 0 (during a dispose),
   acquire LDL_ESTATE, run LDL_EUNSUPPORTED; nothing left with the store */
static void t_reentry_from_cancel_during_dispose(void) {
    int sit;
    for (sit = 0; sit < 3; sit++) {          /* ACQUIRING, renew in flight, RELEASING */
        afix f; afix_setup(&f, T0);
        if (sit == 0) CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        if (sit == 1) { (void)held(&f, 5); CHECK_EQ(ldl_lock_tick(&f.l), 1); }
        if (sit == 2) { (void)held(&f, 5); CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS); }
        f.s.on_cancel = hk_dispose;              /* a second dispose, then the calls */
        ldl_lock_dispose(&f.l);
        CHECK_EQ(f.s.re[1], 0);
        CHECK_EQ(f.s.re[2], 0);
        CHECK_EQ(f.s.re[3], 0);
        CHECK_EQ(f.s.re[4], LDL_ESTATE);
        CHECK_EQ(f.s.re[5], LDL_EUNSUPPORTED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(lost_calls, 0);
        if (sit) CHECK_EQ(rel_count(&f.s, 5), 1);
        if (sit == 0) defer_answer(&f.s, 0, 1, 9);
        afix_end(&f, 1);
    }
}

/* release from HELD with a renew in flight: a release or dispose re-entered
   from the renew's cancel takes effect at once; the token goes back once */
static void t_reentry_release_dispose_from_renew_cancel(void) {
    int disp;
    for (disp = 0; disp < 2; disp++) {
        afix f; afix_setup(&f, T0);
        int rc;
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        f.s.on_cancel = disp ? hk_dispose : hk_release;
        rc = ldl_lock_release(&f.l);
        CHECK(rc != LDL_EINPROGRESS);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(lost_calls, 0);
        CHECK(ldl_lock_answer(&f.l) != LDL_EINPROGRESS);
        CHECK_EQ(ldl_lock_acquire(&f.l), disp ? LDL_ESTATE : LDL_EINPROGRESS);
        afix_end(&f, 1);
    }
}

/* the deadline passes with a renew in flight; release or dispose re-entered
   from the renew's cancel: RELEASED, the owed token handed back once, the
   poll answers 0, on_lost exactly once (the loss came before the re-entry;
   the state on_lost then reads is RELEASED, not LOST) */
static void t_reentry_from_cancel_at_deadline(void) {
    int disp;
    for (disp = 0; disp < 2; disp++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        f.s.on_cancel = disp ? hk_dispose : hk_release;
        f.c.now = T0 + WIN;
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(f.s.re_state, LDL_RELEASED);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(lost_calls, 1);                         /* the lease was lost first: once */
        CHECK_EQ(lost_last_reason, LDL_REASON_LEASE_EXPIRED);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ldl_lock_release(&f.l), 0);
        afix_end(&f, 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
    }
}

/* the ACQUIRING timeout's cancel re-entered by acquire: LDL_ESTATE, no second request */
static void t_reentry_from_cancel_at_acquire_timeout(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.s.on_cancel = hk_calls;
    f.c.now = T0 + WIN;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.re[0], LDL_ESTATE);
    CHECK_EQ(f.s.re[1], LDL_ESTATE);
    CHECK_EQ(f.s.re[2], LDL_ESTATE);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    CHECK_EQ(ST(f), LDL_IDLE);
    afix_end(&f, 1);
}

/* the fire-and-forget hand-back of a dispose, re-entered from its submit and
   from its cancel: tick/poll/release 0, acquire LDL_ESTATE; sent once */
static void t_reentry_from_dispose_handback(void) {
    int where;
    for (where = 0; where < 2; where++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        if (where) { f.s.on_cancel = hk_dispose; f.s.cancel_hook_kind = LDL_OP_RELEASE; }
        else { f.s.on_submit = hk_dispose; f.s.hook_kind = LDL_OP_RELEASE; }
        ldl_lock_dispose(&f.l);
        CHECK_EQ(f.s.re[1], 0);
        CHECK_EQ(f.s.re[2], 0);
        CHECK_EQ(f.s.re[3], 0);
        CHECK_EQ(f.s.re[4], LDL_ESTATE);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        afix_end(&f, 1);
    }
}

/* the hand-back of a refused (late) grant, re-entered from its submit:
   acquire/tick/poll LDL_ESTATE; handed back once */
static void t_reentry_from_refusal_handback(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    f.c.now = T0 + WIN;
    f.s.on_submit = hk_calls;
    f.s.hook_kind = LDL_OP_RELEASE;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.re[0], LDL_ESTATE);
    CHECK_EQ(f.s.re[1], LDL_ESTATE);
    CHECK_EQ(f.s.re[2], LDL_ESTATE);
    CHECK_EQ(f.s.re[3], LDL_EUNSUPPORTED);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(ST(f), LDL_IDLE);
    afix_end(&f, 1);
}

/* on_lost may release or dispose: the renew in flight is already cancelled
   (no second request), the owed token goes back exactly once */
static int lost_action_rc;
static void lost_release(void *user, int reason) { count_lost(user, reason); lost_action_rc = ldl_lock_release((ldl_lock *)user); }
static void lost_dispose(void *user, int reason) { count_lost(user, reason); ldl_lock_dispose((ldl_lock *)user); }
static void t_on_lost_releases_with_renew_in_flight(void) {
    int disp;
    for (disp = 0; disp < 2; disp++) {
        afix f;
        afix_prepare(&f, T0);
        f.d.on_lost = disp ? lost_dispose : lost_release;
        afix_init(&f);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        f.c.now = T0 + WIN;
        lost_action_rc = 99;
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(f.s.violations, 0);                     /* no second request in flight */
        if (!disp) {
            CHECK_EQ(lost_action_rc, LDL_EINPROGRESS);
            CHECK_EQ(ST(f), LDL_RELEASING);
            defer_answer(&f.s, as_last(&f.s), 1, 0);
            CHECK_EQ(ldl_lock_release(&f.l), 1);
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        } else {
            CHECK_EQ(ST(f), LDL_RELEASED);
            CHECK_EQ(as_live(&f.s), 0);
        }
        CHECK_EQ(rel_count(&f.s, 5), 1);
        afix_end(&f, 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
    }
}

/* a release re-entered from the acquire submit, the store then answering a
   NO that carries a token (inside the submit): the store said no, so the lock
   hands nothing back (Precisions: "An answer whose code is not 1 but carries
   a token is NOT handed back by the lock") */
static void t_reentrant_release_acquire_no_with_token(void) {
    int rcs[] = { 0, 2, -1 };
    size_t i;
    for (i = 0; i < 3; i++) {
        afix f; afix_setup(&f, T0);
        f.s.on_submit = hk_release;
        f.s.hook_after_answer = 0;                       /* re-entry, then the answer */
        f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = rcs[i]; f.s.inline_tok[LDL_OP_ACQUIRE] = 7;
        CHECK_EQ(ldl_lock_acquire(&f.l), 0);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
        CHECK_EQ(rel_count(&f.s, 7), 0);
        afix_end(&f, 1);
    }
}

/* a release that applies the RELEASING timeout answers and keeps LDL_ESTORE,
   even when the store's cancel re-enters with a release (which answers 0).
   M: ldl__apply setting _answer before the cancel that may re-enter. */
static void t_release_timeout_cancel_reenters(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 7);
    f.c.now = T0 + 10;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    f.s.on_cancel = hk_release;
    f.c.now = T0 + 10 + TTL;                            /* start' + ttl */
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(f.s.re[0], 0);                             /* the re-entrant one */
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    CHECK_EQ(ST(f), LDL_RELEASED);
    afix_end(&f, 0);
}

void suite_async_reentry(void) {
    RUN(t_release_inside_acquire_submit_queued);
    RUN(t_release_inside_acquire_submit_answered);
    RUN(t_dispose_inside_acquire_submit);
    RUN(t_release_dispose_inside_renew_submit);
    RUN(t_release_dispose_inside_release_submit);
    RUN(t_reentrant_calls_inside_submits);
    RUN(t_reentry_from_cancel_of_acquire);
    RUN(t_reentry_from_cancel_during_dispose);
    RUN(t_reentry_release_dispose_from_renew_cancel);
    RUN(t_reentry_from_cancel_at_deadline);
    RUN(t_reentry_from_cancel_at_acquire_timeout);
    RUN(t_reentry_from_dispose_handback);
    RUN(t_reentry_from_refusal_handback);
    RUN(t_on_lost_releases_with_renew_in_flight);
    RUN(t_reentrant_release_acquire_no_with_token);
    RUN(t_release_timeout_cancel_reenters);
}
#endif /* LDL_NO_ASYNC */
