/* async_renew.c - the heartbeat through a non-blocking store: renews in flight, their answers, late yeses and the deadline
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* HELD -heartbeat due, nothing in flight-> HELD (renew in flight) */
static void t_renew_submitted_when_due(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + HB - 1;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 0);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
    CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
    CHECK_EQ(f.s.q[as_last(&f.s)].ttl, TTL);
    CHECK_STR(f.s.q[as_last(&f.s)].key, "ak");
    CHECK_EQ(ST(f), LDL_HELD);                           /* still HELD while it flies */
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);                  /* a renew never changes it */
    afix_end(&f, 1);
}

/* poll/tick never start a second request while one is in flight */
static void t_no_second_request_while_renew_flies(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    f.c.now = T0 + 150;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    f.c.now = T0 + 250;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
    CHECK_EQ(as_live(&f.s), 1);
    afix_end(&f, 1);
}

/* tick renews now (nothing in flight); start' is the clock before that submit */
static void t_tick_renews_now(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + 1;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + 20;
    CHECK_EQ(ldl_lock_valid_ms(&f.l), WIN - 19);         /* start = T0 + 1 */
    afix_end(&f, 1);
}

/* HELD(renew in flight) -answer 1-> HELD, start = start' of that renew; the
   next heartbeat is due at start' + heartbeat */
static void t_renew_yes_moves_start(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    f.c.now = T0 + 120;
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + 150;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), (T0 + HB + WIN) - (T0 + 150));
    f.c.now = T0 + HB + HB - 1;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
    f.c.now = T0 + HB + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 2);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    afix_end(&f, 1);
}

/* renew answered 0 / negative / malformed -> LOST (HEARTBEAT_FAILED /
   STORE_ERROR); on_lost once, at the applying call, never inside
   ldl_op_complete; the token is owed to the next release */
static void t_renew_no_or_error_loses(void) {
    static const struct { int rc, reason; } cases[] = {
        { 0, LDL_REASON_HEARTBEAT_FAILED }, { -1, LDL_REASON_STORE_ERROR },
        { LDL_ESTORE, LDL_REASON_STORE_ERROR }, { 2, LDL_REASON_STORE_ERROR }, { 7, LDL_REASON_STORE_ERROR }
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.c.now = T0 + HB;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        defer_answer(&f.s, as_last(&f.s), cases[i].rc, 0);
        CHECK_EQ(lost_calls, 0);                         /* not from inside complete */
        CHECK_EQ(ST(f), LDL_HELD);
        f.c.now = T0 + HB + 1;
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ST(f), LDL_LOST);
        CHECK_EQ(ldl_lock_reason(&f.l), cases[i].reason);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(lost_last_reason, cases[i].reason);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(lost_calls, 1);                         /* once per lost lease */
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);    /* not from LOST */
        CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
        /* LOST(owed) -release-> RELEASING -answer-> RELEASED, reason kept */
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(ST(f), LDL_RELEASING);
        CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
        defer_answer(&f.s, as_last(&f.s), 1, 0);
        CHECK_EQ(ldl_lock_release(&f.l), 1);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), cases[i].reason);
        CHECK_EQ(ldl_lock_release(&f.l), 0);             /* nothing more */
        CHECK_EQ(rel_count(&f.s, 5), 1);
        afix_end(&f, 1);
        CHECK_EQ(lost_calls, 1);
    }
}

/* answer, then deadline check: a renew yes counts from its start' even when
   the previous lease's deadline has passed (old deadline T0+295, new T0+395) */
static void t_renew_yes_applied_before_deadline_check(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + HB + WIN - 1;
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* a renew yes applied when its own window has closed is late: LOST
   LEASE_EXPIRED, the token owed to the next release */
static void t_renew_yes_applied_late(void) {
    int call;
    for (call = 0; call < 3; call++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.c.now = T0 + HB;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        f.c.now = T0 + HB + 10;
        defer_answer(&f.s, as_last(&f.s), 1, 0);
        f.c.now = T0 + HB + WIN;
        if (call == 0) CHECK_EQ(ldl_lock_poll(&f.l), 0);
        if (call == 1) CHECK_EQ(ldl_lock_tick(&f.l), 0);
        if (call == 2) CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
        CHECK_EQ(ST(f), LDL_LOST);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);          /* tick did not renew a lost lease */
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);        /* owed, not handed back yet */
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
        defer_answer(&f.s, as_last(&f.s), 0, 0);
        CHECK_EQ(ldl_lock_release(&f.l), 0);             /* the store's answer */
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        afix_end(&f, 1);
    }
}

/* the deadline keeps running while a renew is in flight: at start+ttl-drift
   LOST (LEASE_EXPIRED), the renew cancelled, the token owed */
static void t_deadline_while_renew_in_flight(void) {
    int call;
    for (call = 0; call < 3; call++) {
        afix f; afix_setup(&f, T0);
        int r;
        (void)held(&f, 5);
        f.c.now = T0 + HB;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        r = as_last(&f.s);
        f.c.now = T0 + WIN - 1;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
        CHECK_EQ(f.s.cancels, 0);
        f.c.now = T0 + WIN;
        ev_reset();
        if (call == 0) CHECK_EQ(ldl_lock_poll(&f.l), 0);
        if (call == 1) CHECK_EQ(ldl_lock_tick(&f.l), 0);
        if (call == 2) CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
        CHECK_EQ(ST(f), LDL_LOST);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        CHECK_EQ(lost_calls, 1);
        CHECK_STR(ev_log(), "cancel:renew;on_lost;");   /* cancelled, then on_lost */
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(as_live(&f.s), 0);
        /* the renew's late answer goes nowhere */
        defer_answer(&f.s, r, 1, 0);
        CHECK_EQ(ST(f), LDL_LOST);
        CHECK_EQ(ldl_lock_pending(&f.l), 0);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        /* owed to the next release */
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
        defer_answer(&f.s, as_last(&f.s), 1, 0);
        CHECK_EQ(ldl_lock_release(&f.l), 1);
        CHECK_EQ(lost_calls, 1);
        afix_end(&f, 1);
    }
}

/* the deadline with nothing in flight: poll at start+ttl-drift-1 renews (due),
   valid_ms at the deadline loses; the boundary is exact */
static void t_deadline_boundary_nothing_in_flight(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + WIN - 1;
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
    f.c.now = T0 + WIN;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* deadline first: no renew */
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    afix_end(&f, 1);                                     /* dispose hands the owed token back */
    CHECK_EQ(rel_count(&f.s, 5), 1);
}

/* a negative renew submit is renew's store error at once: LOST STORE_ERROR */
static void t_renew_negative_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.refuse_rc[LDL_OP_RENEW] = -1;
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ST(f), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);   /* owed */
    CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
    afix_end(&f, 1);
}

/* a malformed positive renew submit: a store error, and the op is not left with the store */
static void t_renew_malformed_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.refuse_rc[LDL_OP_RENEW] = 3;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ST(f), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

/* poll applies a recorded answer even when nothing is due (the fast path
   must not skip it) */
static void t_poll_applies_recorded_answer_when_not_due(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 0, 0);
    f.c.now = T0 + 1;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
    afix_end(&f, 1);
}

/* answer, then deadline, then own work: a recorded renew yes applied at a
   time its heartbeat is due starts the next renew in the same poll */
static void t_apply_then_own_work_in_one_poll(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + HB + HB;                              /* old deadline alive, new beat due */
    ev_reset();
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_STR(ev_log(), "renew:5;");
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 2);
    /* and a tick with a recorded yes: apply, then renew now */
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + HB + HB + 1;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 3);
    afix_end(&f, 1);
}

/* poll and tick answer 0 when the lease was lost during the call, whatever
   on_lost did (here: release, then acquire again, both answered inside) */
static int reacq_rc[2];
static void lost_then_reacquire(void *user, int reason) {
    ldl_lock *l = (ldl_lock *)user;
    count_lost(user, reason);
    reacq_rc[0] = ldl_lock_release(l);
    reacq_rc[1] = ldl_lock_acquire(l);
}
static void t_poll_zero_when_lost_whatever_on_lost_did(void) {
    int call;
    for (call = 0; call < 2; call++) {
        afix f;
        afix_prepare(&f, T0);
        f.d.on_lost = lost_then_reacquire;
        afix_init(&f);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        defer_answer(&f.s, as_last(&f.s), 0, 0);
        f.s.inline_on[LDL_OP_RELEASE] = 1; f.s.inline_rc[LDL_OP_RELEASE] = 1;
        f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = 1; f.s.inline_tok[LDL_OP_ACQUIRE] = 6;
        CHECK_EQ(call ? ldl_lock_tick(&f.l) : ldl_lock_poll(&f.l), 0);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(reacq_rc[0], 1);
        CHECK_EQ(reacq_rc[1], 1);
        CHECK_EQ(ST(f), LDL_HELD);                       /* on_lost took it again */
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 6);
        afix_end(&f, 1);
    }
}

/* on_lost exactly once per lost lease, over two leases */
static void t_on_lost_once_per_lease(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 0, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    f.c.now = T0 + 10;
    (void)held(&f, 6);
    f.c.now = T0 + 10 + WIN;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(lost_calls, 2);
    CHECK_EQ(lost_last_reason, LDL_REASON_LEASE_EXPIRED);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(lost_calls, 2);                             /* never for a dispose */
    afix_end(&f, 1);
}

/* a renew answered inside its submit is final within the call: a yes keeps
   HELD from start', a no loses at once (on_lost once, tick 0) */
static void t_renew_answered_inside_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.inline_on[LDL_OP_RENEW] = 1; f.s.inline_rc[LDL_OP_RENEW] = 1;
    f.c.now = T0 + 30;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), HB);              /* next beat at start' + heartbeat */
    f.s.inline_rc[LDL_OP_RENEW] = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ST(f), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    afix_end(&f, 1);
}

/* answer first, then the deadline: a recorded renew no applied after the
   deadline reads HEARTBEAT_FAILED (the answer), not LEASE_EXPIRED */
static void t_recorded_renew_no_past_deadline_reads_answer(void) {
    int rc;
    for (rc = 0; rc >= -1; rc--) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        defer_answer(&f.s, as_last(&f.s), rc, 0);
        f.c.now = T0 + 2000;
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ldl_lock_reason(&f.l), rc == 0 ? LDL_REASON_HEARTBEAT_FAILED : LDL_REASON_STORE_ERROR);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(f.s.cancels, 0);
        afix_end(&f, 1);
    }
}

/* a renew answered yes inside a submit that took the whole window: late, so
   the tick loses the lease (LEASE_EXPIRED, on_lost once, token owed); one ms
   less keeps it HELD from start' */
static void t_inline_renew_after_slow_submit(void) {
    int late;
    for (late = 0; late < 2; late++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.c.now = T0 + 10;
        f.s.submit_ms = WIN - 1 + (uint32_t)late;
        f.s.inline_on[LDL_OP_RENEW] = 1; f.s.inline_rc[LDL_OP_RENEW] = 1;
        CHECK_EQ(ldl_lock_tick(&f.l), late ? 0 : 1);
        CHECK_EQ(ST(f), late ? LDL_LOST : LDL_HELD);
        CHECK_EQ(lost_calls, late);
        if (late) CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        else CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
        f.s.submit_ms = 0;
        f.s.inline_on[LDL_OP_RENEW] = 0;
        if (late) {
            CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);   /* owed */
            CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
        }
        afix_end(&f, 1);
    }
}

/* acquire applies a recorded renew yes whose own window closed, but checks no
   deadline (Precisions: "Only poll, tick and valid_ms then check the lease
   deadline"; a late yes "changes nothing"): HELD, LDL_ESTATE, no on_lost; the
   next poll loses it with LEASE_EXPIRED.
   M: ldl_lock_acquire applying with the deadline check (ldl__apply(l, 0)). */
static void t_acquire_applies_late_renew_without_deadline(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 7);
    f.c.now = T0 + HB;                                  /* heartbeat due: renew in flight */
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    f.c.now = T0 + HB + WIN;                            /* that renew's own window closed */
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(lost_calls, 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                   /* the deadline check finds it */
    CHECK_EQ(ST(f), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);  /* the owed token */
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    afix_end(&f, 1);
}

void suite_async_renew(void) {
    RUN(t_renew_submitted_when_due);
    RUN(t_no_second_request_while_renew_flies);
    RUN(t_tick_renews_now);
    RUN(t_renew_yes_moves_start);
    RUN(t_renew_no_or_error_loses);
    RUN(t_renew_yes_applied_before_deadline_check);
    RUN(t_renew_yes_applied_late);
    RUN(t_deadline_while_renew_in_flight);
    RUN(t_deadline_boundary_nothing_in_flight);
    RUN(t_renew_negative_submit);
    RUN(t_renew_malformed_submit);
    RUN(t_poll_applies_recorded_answer_when_not_due);
    RUN(t_apply_then_own_work_in_one_poll);
    RUN(t_poll_zero_when_lost_whatever_on_lost_did);
    RUN(t_on_lost_once_per_lease);
    RUN(t_renew_answered_inside_submit);
    RUN(t_recorded_renew_no_past_deadline_reads_answer);
    RUN(t_inline_renew_after_slow_submit);
    RUN(t_acquire_applies_late_renew_without_deadline);
}
#endif /* LDL_NO_ASYNC */
