/* async_release.c - release through a non-blocking store: in flight, answered, the RELEASING timeout, what it cancels or drops first
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* HELD -release-> RELEASING (release in flight) -answer-> RELEASED; release
   from RELEASING sends nothing and answers LDL_EINPROGRESS until the answer */
static void t_release_in_flight_then_answer(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.c.now = T0 + 10;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ST(f), LDL_RELEASING);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(ldl_lock_held(&f.l), 0);
    CHECK_EQ(f.s.q[as_last(&f.s)].token, 5);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_poll(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_tick(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 0);
    CHECK_EQ(f.s.cancels, 0);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ST(f), LDL_RELEASING);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 0);                 /* RELEASED: no store call */
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
    CHECK_EQ(lost_calls, 0);
    /* RELEASED by release may acquire again */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    afix_end(&f, 1);
}

/* the pump loop of the Precisions ends with the store's answer, mapped */
static void t_release_loop_ends_with_store_answer(void) {
    static const struct { int rc, want; } cases[] = {
        { 1, 1 }, { 0, 0 }, { -1, LDL_ESTORE }, { LDL_ESTATE, LDL_ESTORE }, { 2, LDL_ESTORE }
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        afix f; afix_setup(&f, T0);
        int rc, spins = 0;
        (void)held(&f, 5);
        while ((rc = ldl_lock_release(&f.l)) == LDL_EINPROGRESS && spins < 10) {
            if (++spins == 3) defer_answer(&f.s, as_last(&f.s), cases[i].rc, 0);
        }
        CHECK_EQ(rc, cases[i].want);
        CHECK_EQ(spins, 3);
        CHECK_EQ(ldl_lock_answer(&f.l), cases[i].want);
        CHECK_EQ(ST(f), LDL_RELEASED);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
        afix_end(&f, 1);
    }
}

/* poll applies a release answer: RELEASED, poll 0, the answer kept */
static void t_release_answer_applied_by_poll_and_acquire(void) {
    int call;
    for (call = 0; call < 2; call++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, as_last(&f.s), 0, 0);
        if (call == 0) {
            CHECK_EQ(ldl_lock_poll(&f.l), 0);
            CHECK_EQ(ST(f), LDL_RELEASED);
            CHECK_EQ(ldl_lock_answer(&f.l), 0);
        } else {                                         /* RELEASED, then acquire's own work */
            CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
            CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 2);
        }
        CHECK_EQ(ldl_lock_pending(&f.l), call);
        afix_end(&f, 1);
    }
}

/* RELEASING -now >= start'+ttl, no answer-> RELEASED: cancel, LDL_ESTORE */
static void t_releasing_timeout_boundary(void) {
    int call;
    for (call = 0; call < 5; call++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.c.now = T0 + 10;
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(ldl_lock_due_in_ms(&f.l), TTL);
        f.c.now = T0 + 10 + TTL - 1;
        CHECK_EQ(ldl_lock_due_in_ms(&f.l), 1);
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(ldl_lock_poll(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(f.s.cancels, 0);
        f.c.now = T0 + 10 + TTL;
        CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
        ev_reset();
        switch (call) {
        case 0: CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE); break;
        case 1: CHECK_EQ(ldl_lock_poll(&f.l), 0); break;
        case 2: CHECK_EQ(ldl_lock_tick(&f.l), 0); break;
        case 4: CHECK_EQ(ldl_lock_valid_ms(&f.l), 0); break;
        default: CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS); break;
        }
        CHECK_EQ(ST(f), call == 3 ? LDL_ACQUIRING : LDL_RELEASED);
        CHECK_EQ(ldl_lock_answer(&f.l), call == 3 ? LDL_EINPROGRESS : LDL_ESTORE);
        CHECK_STR(ev_log(), call == 3 ? "cancel:rel;acq;" : "cancel:rel;");
        CHECK_EQ(as_live_kind(&f.s, LDL_OP_RELEASE), 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);        /* never sent again */
        afix_end(&f, 1);
    }
}

/* the two timeouts in the counters, as ldl_counters documents them: a request
   that timed out in flight is a store error (ACQUIRING and RELEASING alike),
   and an acquire's timeout counts its wait in worst_latency_ms (a release's
   does not: release answers carry no latency).
   M: either timeout not counted in store_errors; the acquire timeout not
   measured. */
static void t_timeouts_in_counters(void) {
    afix f; afix_setup(&f, T0);
    const ldl_counters *k = ldl_lock_counters(&f.l);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + WIN + 7;                              /* noticed 7 ms late */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_raw_answer(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(k->store_errors, 1);
    CHECK_EQ(k->worst_latency_ms, WIN + 7);
    CHECK_EQ(k->attempts, 1);
    CHECK_EQ(k->contention, 0);
    (void)held(&f, 5);
    CHECK_EQ(k->worst_latency_ms, WIN + 7);             /* an answer at once: 0 ms */
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    f.c.now += TTL + 50;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_raw_answer(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(k->store_errors, 2);
    CHECK_EQ(k->releases, 1);
    CHECK_EQ(k->worst_latency_ms, WIN + 7);             /* release: no latency */
    afix_end(&f, 1);
}

/* ACQUIRING -release-> RELEASED: cancel, 0, reason unchanged; the store hands
   back a late grant; acquire may follow */
static void t_release_from_acquiring(void) {
    afix f; afix_setup(&f, T0);
    int r;
    held_then_released(&f, 5);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 3);             /* regressed */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    r = as_last(&f.s);
    ev_reset();
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);   /* unchanged */
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_STR(ev_log(), "cancel:acq;");
    CHECK_EQ(as_live(&f.s), 0);
    defer_answer(&f.s, r, 1, 9);                         /* late: the store's */
    CHECK_EQ(rel_count(&f.s, 9), 1);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 6);             /* 9 never raised the floor */
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    afix_end(&f, 1);
}

/* HELD with a renew in flight -release-> the renew is cancelled, then the
   release goes out */
static void t_release_cancels_renew_first(void) {
    afix f; afix_setup(&f, T0);
    int r;
    (void)held(&f, 5);
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    r = as_last(&f.s);
    ev_reset();
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_STR(ev_log(), "cancel:renew;rel:5;");
    CHECK_EQ(ST(f), LDL_RELEASING);
    CHECK_EQ(as_live(&f.s), 1);
    defer_answer(&f.s, r, 1, 0);                         /* the renew's answer goes nowhere */
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* release discards a recorded renew answer (whatever it was) and never fires
   on_lost; the held token is released */
static void t_release_drops_recorded_renew_answer(void) {
    int rcs[] = { 1, 0, -1, 2 };
    size_t i;
    for (i = 0; i < 4; i++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        defer_answer(&f.s, as_last(&f.s), rcs[i], 0);
        ev_reset();
        CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        CHECK_STR(ev_log(), "rel:5;");
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
        defer_answer(&f.s, as_last(&f.s), 1, 0);
        CHECK_EQ(ldl_lock_release(&f.l), 1);
        CHECK_EQ(lost_calls, 0);
        afix_end(&f, 1);
    }
}

/* even a renew yes recorded late is dropped by release: no LOST, no on_lost */
static void t_release_drops_late_renew_yes(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    f.c.now = T0 + 1000;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(lost_calls, 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    afix_end(&f, 1);
}

/* a recorded grant becomes HELD, then release is the user's own release (not
   fire-and-forget: its answer is kept) */
static void t_release_with_recorded_grant(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    ev_reset();
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_STR(ev_log(), "rel:5;");
    CHECK_EQ(ST(f), LDL_RELEASING);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    defer_answer(&f.s, 1, -1, 0);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    afix_end(&f, 1);
}

/* acquire, release and dispose do not check the lease deadline: a HELD lock whose
   deadline passed unobserved is released (RELEASED/DISPOSED, no on_lost) */
static void t_release_dispose_do_not_check_deadline(void) {
    int which;
    for (which = 0; which < 3; which++) {
        afix f; afix_setup(&f, T0);
        (void)held(&f, 5);
        f.c.now = T0 + 5000;
        if (which == 2) {                                /* acquire: ESTATE from HELD, no loss */
            CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
            CHECK_EQ(ST(f), LDL_HELD);
            CHECK_EQ(lost_calls, 0);
            CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
        } else if (which == 0) {
            CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
        } else {
            ldl_lock_dispose(&f.l);
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        }
        CHECK_EQ(lost_calls, 0);
        CHECK_EQ(rel_count(&f.s, 5), 1);
        afix_end(&f, 1);
        CHECK_EQ(lost_calls, 0);
    }
}

/* a negative release submit is release's store error at once: LDL_ESTORE */
static void t_release_negative_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.refuse_rc[LDL_OP_RELEASE] = -1;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(lost_calls, 0);
    f.s.refuse_rc[LDL_OP_RELEASE] = 0;
    CHECK_EQ(ldl_lock_release(&f.l), 0);                 /* no retry */
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);
    CHECK_EQ(rel_count(&f.s, 5), 0);                     /* never queued */
    afix_end(&f, 0);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 1);            /* dispose owes nothing */
}

/* a malformed positive release submit: LDL_ESTORE, the op not left with the store */
static void t_release_malformed_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.refuse_rc[LDL_OP_RELEASE] = 4;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

/* an answer inside the release submit is final within the call */
static void t_release_answered_inside_submit(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    f.s.inline_on[LDL_OP_RELEASE] = 1; f.s.inline_rc[LDL_OP_RELEASE] = 1;
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    afix_end(&f, 1);
}

/* a recorded late grant at release: refused and handed back fire-and-forget,
   then release finds nothing (0) */
static void t_release_with_recorded_late_grant(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    f.c.now = T0 + WIN;
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

void suite_async_release(void) {
    RUN(t_release_in_flight_then_answer);
    RUN(t_release_loop_ends_with_store_answer);
    RUN(t_release_answer_applied_by_poll_and_acquire);
    RUN(t_releasing_timeout_boundary);
    RUN(t_timeouts_in_counters);
    RUN(t_release_from_acquiring);
    RUN(t_release_cancels_renew_first);
    RUN(t_release_drops_recorded_renew_answer);
    RUN(t_release_drops_late_renew_yes);
    RUN(t_release_with_recorded_grant);
    RUN(t_release_dispose_do_not_check_deadline);
    RUN(t_release_negative_submit);
    RUN(t_release_malformed_submit);
    RUN(t_release_answered_inside_submit);
    RUN(t_release_with_recorded_late_grant);
}
#endif /* LDL_NO_ASYNC */
