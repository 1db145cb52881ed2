/* async_slot.c - the request slot itself: ldl_op_complete, pending/answer, due_in_ms, run refusing, two locks, ldl_op_begin/result
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* run answers LDL_EUNSUPPORTED in every situation, NULL body included, and
   applies nothing, does nothing */
static void t_run_unsupported_everywhere(void) {
    int sit;
    for (sit = 0; sit < 9; sit++) {
        afix f; afix_setup(&f, T0);
        ldl_run_result rr;
        int st, pend, subs, cancels, ans;
        switch (sit) {
        case 0: break;                                            /* IDLE */
        case 1: CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS); break;   /* ACQUIRING */
        case 2: CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);          /* answer recorded */
                defer_answer(&f.s, 0, 1, 5); break;
        case 3: (void)held(&f, 5); break;                         /* HELD */
        case 4: (void)held(&f, 5); CHECK_EQ(ldl_lock_tick(&f.l), 1); break; /* renew flies */
        case 5: (void)held(&f, 5); CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS); break;
        case 6: (void)held(&f, 5); f.c.now = T0 + WIN; CHECK_EQ(ldl_lock_poll(&f.l), 0); break; /* LOST */
        case 7: held_then_released(&f, 5); break;                 /* RELEASED */
        default: ldl_lock_dispose(&f.l); break;                   /* disposed */
        }
        if (sit == 2) f.c.now = T0 + WIN;                         /* would be late if applied */
        st = ST(f); pend = ldl_lock_pending(&f.l); ans = ldl_lock_answer(&f.l);
        subs = f.s.submits[1] + f.s.submits[2] + f.s.submits[3]; cancels = f.s.cancels;
        rr.body_rc = 99;
        CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, &rr), LDL_EUNSUPPORTED);
        CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), LDL_EUNSUPPORTED);
        CHECK_EQ(ldl_lock_run(&f.l, NULL, NULL, NULL), LDL_EUNSUPPORTED);
        CHECK_EQ(ST(f), st);
        CHECK_EQ(ldl_lock_pending(&f.l), pend);
        CHECK_EQ(ldl_lock_answer(&f.l), ans);
        CHECK_EQ(f.s.submits[1] + f.s.submits[2] + f.s.submits[3], subs);
        CHECK_EQ(f.s.cancels, cancels);
        CHECK_EQ(f.fc.scope_calls, 0);
        afix_end(&f, 1);
    }
}

/* the first answer stands */
static void t_complete_twice_first_stands(void) {
    afix f, g;
    afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    ldl_op_complete(f.s.q[0].op, 0, 0);
    ldl_op_complete(f.s.q[0].op, 1, 6);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    afix_end(&f, 1);
    afix_setup(&g, T0);
    CHECK_EQ(ldl_lock_acquire(&g.l), LDL_EINPROGRESS);
    defer_answer(&g.s, 0, 0, 0);
    ldl_op_complete(g.s.q[0].op, 1, 6);
    CHECK_EQ(ldl_lock_poll(&g.l), 0);
    CHECK_EQ(ST(g), LDL_IDLE);
    CHECK_EQ(g.s.submits[LDL_OP_RELEASE], 0);
    afix_end(&g, 1);
}

/* an op that is not in flight ignores ldl_op_complete: after a cancel, after
   it was applied, with nothing submitted */
static void t_complete_on_op_not_in_flight(void) {
    afix f; afix_setup(&f, T0);
    ldl_op *op;
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    op = f.s.q[0].op;
    CHECK_EQ(ldl_lock_release(&f.l), 0);                 /* cancelled */
    ldl_op_complete(op, 1, 5);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    /* applied, then a stray answer */
    (void)held(&f, 6);
    ldl_op_complete(op, 0, 0);                           /* nothing in flight */
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);                    /* a real renew follows */
    CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    ldl_op_complete(op, 0, 0);                           /* answered already */
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 0);                                     /* 5 never reached the store's books */
    CHECK_EQ(rel_count(&f.s, 6), 1);
    CHECK_EQ(rel_count(&f.s, 5), 0);
}

/* ldl_op_complete runs no lock logic: a refusal, a late grant, a renew no and
   a renew past the deadline are all only recorded (defer_answer checks the
   lock's visible state, the log and on_lost around every complete) */
static void t_complete_runs_no_lock_logic(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + WIN + 10;
    defer_answer(&f.s, 0, 1, 5);                         /* late: not handed back yet */
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
    CHECK_EQ(ST(f), LDL_ACQUIRING);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    (void)held(&f, 6);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    f.c.now += 1000;
    defer_answer(&f.s, as_last(&f.s), 0, 0);
    CHECK_EQ(lost_calls, 0);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 6);
    CHECK_EQ(f.s.violations, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(lost_calls, 1);
    afix_end(&f, 1);
}

static void t_pending_through_lifecycle(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);                 /* in flight */
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);                 /* answered, not applied */
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);                 /* renew in flight */
    defer_answer(&f.s, 1, 1, 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    defer_answer(&f.s, 2, 1, 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    (void)held(&f, 6);
    ldl_lock_dispose(&f.l);                              /* fire-and-forget: no slot */
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    afix_end(&f, 1);
}

static void t_answer_through_lifecycle(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);    /* applied at the next call */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), WIN);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, 1, 1, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);                  /* a renew never changes it */
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    defer_answer(&f.s, 2, 0, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);                  /* nor a failed one */
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 3, 0, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* the answer that ends it sets it */
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_release(&f.l), 0);                 /* a cancel: never EINPROGRESS */
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    afix_end(&f, 1);
}

/* due_in_ms is a pure query: 0 while an answer waits; the request's timeout
   while ACQUIRING / RELEASING; heartbeat or deadline while HELD, only the
   deadline with a renew in flight; UINT32_MAX otherwise */
static void t_due_in_ms_each_situation(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);      /* IDLE */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), WIN);
    f.c.now = T0 + 40;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), WIN - 40);
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);               /* an answer waits */
    CHECK_EQ(ST(f), LDL_ACQUIRING);                      /* and it applied nothing */
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* HELD from start' = T0 */
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), HB - 40);         /* the heartbeat first */
    f.c.now = T0 + HB;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* renew flies */
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), WIN - HB);        /* only the deadline */
    f.c.now = T0 + WIN - 1;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 1);
    f.c.now = T0 + WIN;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    CHECK_EQ(ST(f), LDL_HELD);                           /* pure: not lost by asking */
    CHECK_EQ(f.s.cancels, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* LOST */
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    f.c.now = T0 + 1000;
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), TTL);
    f.c.now = T0 + 1000 + 7;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), TTL - 7);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);      /* RELEASED */
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    afix_end(&f, 1);
}

/* a recorded renew answer makes due_in_ms 0 even long before any deadline */
static void t_due_in_ms_zero_with_recorded_renew(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), WIN);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), HB);
    afix_end(&f, 1);
}

/* two locks on one store, answers delivered out of order: each lock gets its
   own answer, whatever the order */
static void t_two_locks_answers_out_of_order(void) {
    afix f; ldl_lock b;
    int ra, rb;
    afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_init(&b, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    ra = as_last(&f.s);
    CHECK_EQ(ldl_lock_acquire(&b), LDL_EINPROGRESS);
    rb = as_last(&f.s);
    CHECK(f.s.q[ra].op != f.s.q[rb].op);                 /* one slot per lock */
    f.s.lock = &b;
    defer_answer(&f.s, rb, 0, 0);
    f.s.lock = &f.l;
    defer_answer(&f.s, ra, 1, 5);
    CHECK_EQ(ldl_lock_poll(&b), 0);
    CHECK_EQ(ldl_lock_state(&b), LDL_IDLE);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);                    /* A's renew, B's new acquire */
    ra = as_last(&f.s);
    CHECK_EQ(ldl_lock_acquire(&b), LDL_EINPROGRESS);
    rb = as_last(&f.s);
    f.s.lock = &b;
    defer_answer(&f.s, rb, 0, 0);
    f.s.lock = &f.l;
    defer_answer(&f.s, ra, 1, 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_poll(&b), 0);
    ldl_lock_dispose(&b);
    afix_end(&f, 1);
}

/* ldl_op_begin / ldl_op_result: a store's own op, handed to a store below it
   (a router), records that store's answer exactly like a lock's slot does.
   M: ldl_op_result answering before the op was answered; ldl_op_begin not
   arming the op (ldl_op_complete then ignores the answer). */
static void t_op_begin_result(void) {
    ldl_op op;
    int rc = 99;
    int64_t tok = 99;
    memset(&op, 0, sizeof op);
    ldl_op_complete(&op, 1, 5);                       /* never armed: ignored */
    CHECK_EQ(ldl_op_result(&op, &rc, &tok), 0);
    ldl_op_begin(&op);
    CHECK_EQ(ldl_op_result(&op, &rc, &tok), 0);       /* in flight: no answer yet */
    CHECK_EQ(rc, 99);
    ldl_op_complete(&op, 1, 42);
    ldl_op_complete(&op, 0, 7);                       /* the first answer stands */
    CHECK_EQ(ldl_op_result(&op, &rc, &tok), 1);
    CHECK_EQ(rc, 1);
    CHECK_EQ(tok, 42);
    CHECK_EQ(ldl_op_result(&op, NULL, NULL), 1);
    ldl_op_begin(&op);                                /* re-armed: the old answer is gone */
    CHECK_EQ(ldl_op_result(&op, &rc, &tok), 0);
}

void suite_async_slot(void) {
    RUN(t_run_unsupported_everywhere);
    RUN(t_complete_twice_first_stands);
    RUN(t_complete_on_op_not_in_flight);
    RUN(t_complete_runs_no_lock_logic);
    RUN(t_pending_through_lifecycle);
    RUN(t_answer_through_lifecycle);
    RUN(t_due_in_ms_each_situation);
    RUN(t_due_in_ms_zero_with_recorded_renew);
    RUN(t_two_locks_answers_out_of_order);
    RUN(t_op_begin_result);
}
#endif /* LDL_NO_ASYNC */
