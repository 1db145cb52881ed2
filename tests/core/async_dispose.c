/* async_dispose.c - dispose in every state and slot phase: never waits, cancels, hands back fire-and-forget
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* dispose in IDLE: no store call; terminal */
static void t_dispose_idle(void) {
    afix f; afix_setup(&f, T0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_STR(ev_log(), "");
    ldl_lock_dispose(&f.l);                              /* idempotent */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    CHECK_STR(ev_log(), "");
    afix_end(&f, 1);
}

/* dispose in ACQUIRING: cancel; the answer EINPROGRESS becomes 0; the store
   hands back the late grant */
static void t_dispose_acquiring(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "acq;cancel:acq;");
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
    CHECK_EQ(as_live(&f.s), 0);                          /* no store holds the op */
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    afix_end(&f, 1);
}

/* dispose in HELD: the lease released fire-and-forget (submitted, cancelled at
   once), reason DISPOSED, the slot not occupied, answer stays 1 */
static void t_dispose_held(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "rel:5;cancel:rel;");
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(as_live(&f.s), 0);
    CHECK_EQ(lost_calls, 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
    afix_end(&f, 1);
}

/* dispose with a renew in flight: cancel the renew, then release fire-and-forget */
static void t_dispose_renew_in_flight(void) {
    afix f; afix_setup(&f, T0);
    int r;
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    r = as_last(&f.s);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "cancel:renew;rel:5;cancel:rel;");
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
    CHECK_EQ(as_live(&f.s), 0);
    defer_answer(&f.s, r, 0, 0);                         /* goes nowhere */
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* dispose in LOST(owed): the owed token released fire-and-forget, loss reason kept */
static void t_dispose_lost_owed(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 0, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "rel:5;cancel:rel;");
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(lost_calls, 1);
    afix_end(&f, 1);
}

/* dispose in RELEASING: the release in flight is cancelled (it already went
   out: nothing sent again); EINPROGRESS becomes 0 */
static void t_dispose_releasing(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "cancel:rel;");
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

/* dispose with a recorded (in-window) grant: HELD, then released
   fire-and-forget, reason DISPOSED, ldl_lock_answer stays 1 from the grant */
static void t_dispose_recorded_grant(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "rel:5;cancel:rel;");
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* dispose with a recorded acquire refusal: answer 0, nothing sent */
static void t_dispose_recorded_refusal(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 0, 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
    CHECK_EQ(f.s.cancels, 0);
    afix_end(&f, 1);
}

/* dispose discards a recorded renew answer: no on_lost, DISPOSED, released once */
static void t_dispose_drops_recorded_renew_answer(void) {
    int rcs[] = { 1, 0, -1 };
    size_t i;
    for (i = 0; i < 3; i++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        defer_answer(&f.s, as_last(&f.s), rcs[i], 0);
        ev_reset();
        ldl_lock_dispose(&f.l);
        CHECK_STR(ev_log(), "rel:5;cancel:rel;");
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        afix_end(&f, 1);
    }
}

/* dispose keeps a recorded release answer: the store's answer, nothing resent */
static void t_dispose_keeps_recorded_release_answer(void) {
    static const struct { int rc, want; } cases[] = { { 1, 1 }, { 0, 0 }, { -1, LDL_ESTORE } };
    size_t i;
    for (i = 0; i < 3; i++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, as_last(&f.s), cases[i].rc, 0);
        ev_reset();
        ldl_lock_dispose(&f.l);
        CHECK_STR(ev_log(), "");
        CHECK_EQ(ldl_lock_answer(&f.l), cases[i].want);
        CHECK_EQ(ST(f), LDL_RELEASED);
        afix_end(&f, 1);
    }
}

/* dispose of an ACQUIRING lock past its timeout, and of a RELEASING lock past
   its timeout: cancel, nothing else; answers 0 and LDL_ESTORE */
static void t_dispose_after_timeouts(void) {
    afix f, g;
    afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + WIN;
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(f.s.cancels_live, 1);
    afix_end(&f, 1);
    afix_setup(&g, T0);
    (void)held(&g, 5);
    CHECK_EQ(ldl_lock_release(&g.l), LDL_EINPROGRESS);
    g.c.now = T0 + TTL;
    ldl_lock_dispose(&g.l);
    CHECK_EQ(ldl_lock_answer(&g.l), LDL_ESTORE);
    CHECK_EQ(g.s.cancels_live, 1);
    CHECK_EQ(g.s.submits[LDL_OP_RELEASE], 1);
    afix_end(&g, 1);
}

/* a refused fire-and-forget hand-back: nothing crashes, nothing left queued */
static void t_dispose_handback_refused(void) {
    int rc;
    for (rc = -1; rc <= 2; rc += 3) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.s.refuse_rc[LDL_OP_RELEASE] = rc;
        ldl_lock_dispose(&f.l);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        CHECK_EQ(as_live(&f.s), 0);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
        afix_end(&f, 0);
    }
}

/* a fire-and-forget hand-back answered inside its submit (before the lock's
   cancel): that answer is ignored, never applied, never kept */
static void t_handback_answer_inside_ignored(void) {
    int rcs[] = { 1, 0, -1 };
    size_t i;
    for (i = 0; i < 3; i++) {
        afix f; afix_setup(&f, T0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, 0, 1, 5);
        f.c.now = T0 + WIN;
        f.s.inline_on[LDL_OP_RELEASE] = 1; f.s.inline_rc[LDL_OP_RELEASE] = rcs[i];
        CHECK_EQ(ldl_lock_poll(&f.l), 0);                /* late: handed back */
        CHECK_EQ(rel_count(&f.s, 5), 1);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(ldl_lock_answer(&f.l), 0);              /* the acquire's, not the hand-back's */
        CHECK_EQ(ST(f), LDL_IDLE);
        CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
        CHECK_EQ(ldl_lock_release(&f.l), 0);             /* IDLE: nothing */
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
        f.s.inline_on[LDL_OP_RELEASE] = 0;
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);   /* the slot is free */
        defer_answer(&f.s, as_last(&f.s), 1, 6);
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        afix_end(&f, 1);
    }
}

/* dispose of a lock RELEASED by release: no store call at all */
static void t_dispose_released(void) {
    afix f; afix_setup(&f, T0);
    held_then_released(&f, 5);
    ev_reset();
    ldl_lock_dispose(&f.l);
    CHECK_STR(ev_log(), "");
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    afix_end(&f, 1);
}

void suite_async_dispose(void) {
    RUN(t_dispose_idle);
    RUN(t_dispose_acquiring);
    RUN(t_dispose_held);
    RUN(t_dispose_renew_in_flight);
    RUN(t_dispose_lost_owed);
    RUN(t_dispose_releasing);
    RUN(t_dispose_recorded_grant);
    RUN(t_dispose_recorded_refusal);
    RUN(t_dispose_drops_recorded_renew_answer);
    RUN(t_dispose_keeps_recorded_release_answer);
    RUN(t_dispose_after_timeouts);
    RUN(t_dispose_handback_refused);
    RUN(t_handback_answer_inside_ignored);
    RUN(t_dispose_released);
}
#endif /* LDL_NO_ASYNC */
