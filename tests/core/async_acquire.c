/* async_acquire.c - init with a non-blocking store, and acquire: in flight, the grant applied by each call, its window, the ACQUIRING timeout, refusals and the fence
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
static void t_init_async_with_store_einval(void) {
    afix f; script_store ss; ldl_store st;
    afix_prepare(&f, T0);
    script_init(&ss);
    st = script_of(&ss);
    f.d.store = &st;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL);
    CHECK(strstr(ldl_lock_why(&f.l), "store") != NULL);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ss.acquire_calls, 0);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 0);
}

static void t_init_async_missing_method_einval(void) {
    int which;
    for (which = 0; which < 4; which++) {
        afix f;
        afix_prepare(&f, T0);
        if (which == 0) f.as.acquire = NULL;
        if (which == 1) f.as.renew = NULL;
        if (which == 2) f.as.release = NULL;
        if (which == 3) f.as.cancel = NULL;
        CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL);
        CHECK(strcmp(ldl_lock_why(&f.l), "ok") != 0);
        CHECK(strstr(ldl_lock_why(&f.l), "async_store") != NULL);
    }
}

static void t_init_async_with_timers_einval(void) {
    fake_timers ft;
    int which;
    for (which = 0; which < 3; which++) {
        afix f;
        afix_prepare(&f, T0);
        memset(&ft, 0, sizeof ft);
        if (which == 0) f.d.timers = fake_timers_of(&ft);    /* full timers */
        if (which == 1) f.d.timers.ctx = &ft;                /* only ctx: not all-zero */
        if (which == 2) { f.d.timers = fake_timers_of(&ft); f.d.timers.clear_timeout = NULL; }
        CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL);
        CHECK(strcmp(ldl_lock_why(&f.l), "ok") != 0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
        CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 0);
        CHECK_EQ(ft.set_calls, 0);
    }
}

/* after a failed init there is no async store: the v0.1 rules hold */
static void t_failed_init_behaves_disposed(void) {
    afix f;
    ldl_run_result r;
    afix_prepare(&f, T0);
    f.as.cancel = NULL;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL);
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, &r), LDL_ESTATE);
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), LDL_ESTATE);
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.submits[1] + f.s.submits[2] + f.s.submits[3], 0);
}

/* the struct is copied at init; ctx may be NULL */
static void t_init_copies_struct_ctx_null_ok(void) {
    afix f;
    afix_prepare(&f, T0);
    as_nullctx = &f.s;
    f.as.ctx = NULL;
    afix_init(&f);
    memset(&f.as, 0, sizeof f.as);          /* the caller's copy is gone */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    afix_end(&f, 1);
    as_nullctx = NULL;
}

/* IDLE -acquire-> ACQUIRING (in flight); acquire answers LDL_EINPROGRESS */
static void t_acquire_in_flight(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);                 /* 0 before any */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ST(f), LDL_ACQUIRING);
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(ldl_lock_held(&f.l), 0);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    CHECK_STR(f.s.q[0].key, "ak");
    CHECK_EQ(f.s.q[0].ttl, TTL);
    /* one request in flight: nothing starts a second */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_poll(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_tick(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
    CHECK_EQ(as_live(&f.s), 1);
    CHECK_STR(ev_log(), "acq;");
    afix_end(&f, 1);
}

/* ACQUIRING -answer: a grant by the whitelist, in its window-> HELD; the answer
   is recorded by ldl_op_complete and applied at the next call */
static void t_grant_recorded_then_applied_by_poll(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + 10;
    defer_answer(&f.s, 0, 1, 5);
    CHECK_EQ(ST(f), LDL_ACQUIRING);                     /* nothing applied yet */
    CHECK_EQ(ldl_lock_pending(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), WIN - 10);       /* start = start' = T0 */
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* every applying call applies a recorded grant first, then does its own work */
static void t_grant_applied_by_each_call(void) {
    int call;
    for (call = 0; call < 5; call++) {
        afix f; afix_setup(&f, T0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, 0, 1, 5);
        f.c.now = T0 + 10;
        switch (call) {
        case 0:   /* acquire: HELD, then acquire from HELD */
            CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
            CHECK_EQ(ST(f), LDL_HELD);
            CHECK_EQ(ldl_lock_answer(&f.l), 1);
            CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 1);
            break;
        case 1:   /* tick: HELD, then renew now */
            CHECK_EQ(ldl_lock_tick(&f.l), 1);
            CHECK_EQ(ST(f), LDL_HELD);
            CHECK_EQ(f.s.submits[LDL_OP_RENEW], 1);
            CHECK_EQ(f.s.q[1].token, 5);
            break;
        case 2:   /* valid_ms: HELD, counted from start' */
            CHECK_EQ(ldl_lock_valid_ms(&f.l), WIN - 10);
            CHECK_EQ(ST(f), LDL_HELD);
            break;
        case 3:   /* release: HELD, then the user's own release */
            CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
            CHECK_EQ(ST(f), LDL_RELEASING);
            CHECK_STR(ev_log(), "acq;rel:5;");
            CHECK_EQ(as_live_kind(&f.s, LDL_OP_RELEASE), 1);
            defer_answer(&f.s, 1, 1, 0);
            CHECK_EQ(ldl_lock_release(&f.l), 1);
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
            break;
        default:  /* dispose: HELD, then released fire-and-forget */
            ldl_lock_dispose(&f.l);
            CHECK_EQ(ST(f), LDL_RELEASED);
            CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
            CHECK_EQ(ldl_lock_answer(&f.l), 1);         /* stays 1 from the grant */
            CHECK_STR(ev_log(), "acq;rel:5;cancel:rel;");
            break;
        }
        CHECK_EQ(rel_count(&f.s, 5), call >= 3 ? 1 : 0);
        afix_end(&f, 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
    }
}

/* the grant's window: applied at start'+ttl-drift-1 -> HELD with 1 ms left */
static void t_grant_applied_last_open_ms(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + 10;
    defer_answer(&f.s, 0, 1, 5);
    f.c.now = T0 + WIN - 1;
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(rel_count(&f.s, 5), 0);
    afix_end(&f, 1);
}

/* applied at start'+ttl-drift: refused, handed back exactly once, LEASE_EXPIRED,
   IDLE, token 0, acquire's answer 0; through every applying call */
static void t_grant_applied_first_closed_ms(void) {
    int call;
    for (call = 0; call < 5; call++) {
        afix f; afix_setup(&f, T0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        f.c.now = T0 + 10;
        defer_answer(&f.s, 0, 1, 5);
        f.c.now = T0 + WIN;
        ev_reset();
        switch (call) {
        case 0: CHECK_EQ(ldl_lock_poll(&f.l), 0); break;
        case 1: CHECK_EQ(ldl_lock_tick(&f.l), 0); break;
        case 2: CHECK_EQ(ldl_lock_valid_ms(&f.l), 0); break;
        case 3: CHECK_EQ(ldl_lock_release(&f.l), 0); break;   /* then IDLE: nothing to release */
        default: CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS); break;  /* then a new request */
        }
        CHECK_EQ(ST(f), call == 4 ? LDL_ACQUIRING : LDL_IDLE);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        CHECK_EQ(ldl_lock_answer(&f.l), call == 4 ? LDL_EINPROGRESS : 0);
        CHECK_EQ(rel_count(&f.s, 5), 1);                     /* handed back once */
        CHECK_EQ(lost_calls, 0);                             /* never HELD */
        CHECK_STR(ev_log(), call == 4 ? "rel:5;cancel:rel;acq;" : "rel:5;cancel:rel;");
        CHECK_EQ(as_live_kind(&f.s, LDL_OP_RELEASE), 0);     /* fire-and-forget */
        afix_end(&f, 1);
        CHECK_EQ(rel_count(&f.s, 5), 1);
    }
}

/* dispose with a recorded grant that is already late: refused and handed back
   once (not a second time as a disposed lease) */
static void t_dispose_recorded_late_grant(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 1, 5);
    f.c.now = T0 + WIN;
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ST(f), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* start' is the clock read just BEFORE the submit: a submit that takes 50 ms
   does not extend the window */
static void t_start_prime_read_before_submit(void) {
    int late;
    for (late = 0; late < 2; late++) {
        afix f; afix_setup(&f, T0);
        f.s.submit_ms = 50;
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        CHECK_EQ(f.c.now, T0 + 50);
        defer_answer(&f.s, 0, 1, 5);
        f.c.now = T0 + WIN - 1 + (uint64_t)late;
        CHECK_EQ(ldl_lock_valid_ms(&f.l), late ? 0 : 1);
        CHECK_EQ(ST(f), late ? LDL_IDLE : LDL_HELD);
        CHECK_EQ(rel_count(&f.s, 5), late);
        afix_end(&f, 1);
    }
}

/* ACQUIRING -now >= start'+ttl-drift, no answer-> IDLE: cancel, reason
   unchanged, answer 0; the store hands back a late grant itself */
static void t_acquiring_timeout_boundary(void) {
    afix f; afix_setup(&f, T0);
    held_then_released(&f, 3);                          /* reason RELEASED before */
    f.c.now = T0 + 500;
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    f.c.now = T0 + 500 + WIN - 1;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 1);
    CHECK_EQ(ldl_lock_poll(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ST(f), LDL_ACQUIRING);
    CHECK_EQ(f.s.cancels, 0);
    f.c.now = T0 + 500 + WIN;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    ev_reset();
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_STR(ev_log(), "cancel:acq;");
    CHECK_EQ(as_live(&f.s), 0);
    /* the late answer reaches the store, which hands the grant back */
    defer_answer(&f.s, as_nth(&f.s, LDL_OP_ACQUIRE, 1), 1, 7);
    CHECK_STR(ev_log(), "cancel:acq;shb:7;");
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(lost_calls, 0);
    afix_end(&f, 1);
}

/* the timeout through each applying call; acquire then proceeds as from IDLE */
static void t_acquiring_timeout_each_call(void) {
    int call;
    for (call = 0; call < 5; call++) {
        afix f; afix_setup(&f, T0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        f.c.now = T0 + WIN;
        switch (call) {
        case 0: CHECK_EQ(ldl_lock_tick(&f.l), 0); CHECK_EQ(ST(f), LDL_IDLE); break;
        case 1: CHECK_EQ(ldl_lock_valid_ms(&f.l), 0); CHECK_EQ(ST(f), LDL_IDLE); break;
        case 2: CHECK_EQ(ldl_lock_release(&f.l), 0); CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0); break;
        case 3:
            CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);   /* a new request */
            CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 2);
            CHECK_STR(ev_log(), "acq;cancel:acq;acq;");
            CHECK_EQ(ST(f), LDL_ACQUIRING);
            break;
        default:
            ldl_lock_dispose(&f.l);
            CHECK_EQ(ldl_lock_answer(&f.l), 0);
            break;
        }
        CHECK_EQ(f.s.cancels_live, 1);
        CHECK_EQ(as_live_kind(&f.s, LDL_OP_ACQUIRE), call == 3 ? 1 : 0);
        defer_answer(&f.s, 0, 1, 9);                     /* late grant: the store's */
        CHECK_EQ(rel_count(&f.s, 9), 1);
        afix_end(&f, 1);
    }
}

/* an answer inside the submit is final within the call */
static void t_acquire_answered_inside_submit(void) {
    afix f; afix_setup(&f, T0);
    f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    f.s.inline_rc[LDL_OP_ACQUIRE] = 1; f.s.inline_tok[LDL_OP_ACQUIRE] = 5;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ST(f), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 5);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(as_live(&f.s), 0);
    afix_end(&f, 1);
}

/* refusals the lock does not hand back: no yes, or no valid token; a token
   with a code other than 1 is the store saying no */
static void t_acquire_refusals_not_handed_back(void) {
    static const struct { int rc; int64_t tok; } cases[] = {
        { 0, 0 }, { 0, 7 }, { -1, 7 }, { -1, 0 }, { 2, 7 }, { -5, 7 }, { 1, 0 }, { 1, -3 }, { 1, INT64_MIN }
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        afix f; afix_setup(&f, T0);
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
        defer_answer(&f.s, 0, cases[i].rc, cases[i].tok);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ST(f), LDL_IDLE);
        CHECK_EQ(ldl_lock_answer(&f.l), 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
        CHECK_EQ(lost_calls, 0);
        afix_end(&f, 1);
        CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
    }
}

/* the whitelist's upper edge: INT64_MAX is a valid token */
static void t_acquire_token_int64_max(void) {
    afix f; afix_setup(&f, T0);
    (void)held(&f, INT64_MAX);
    afix_end(&f, 1);
    CHECK_EQ(rel_count(&f.s, INT64_MAX), 1);
}

/* the fence must strictly advance: a regressed or equal token is refused,
   FENCE_REGRESSED, handed back at once */
static void t_fence_regressed_handed_back(void) {
    afix f; afix_setup(&f, T0);
    held_then_released(&f, 5);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 3);
    ev_reset();
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_STR(ev_log(), "rel:3;cancel:rel;");
    CHECK_EQ(rel_count(&f.s, 3), 1);
    /* equal is not an advance */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 5);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(rel_count(&f.s, 5), 2);                    /* the user's release + this hand-back */
    /* one more than the floor is */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 6);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);   /* NONE again at each grant */
    ldl_lock_dispose(&f.l);
    CHECK_EQ(rel_count(&f.s, 6), 1);
    CHECK_EQ(rel_count(&f.s, 3), 1);
    afix_end(&f, 0);                                    /* token 5 was granted twice on purpose */
}

/* Order inside a grant: shape, then fence, then window: regressed and late
   reads FENCE_REGRESSED */
static void t_grant_regressed_and_late_reads_fence(void) {
    afix f; afix_setup(&f, T0);
    held_then_released(&f, 5);
    f.c.now = T0 + 1000;
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 3);
    f.c.now = T0 + 1000 + WIN + 50;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(rel_count(&f.s, 3), 1);
    CHECK_EQ(ST(f), LDL_IDLE);
    afix_end(&f, 1);
}

/* only an accepted grant raises the floor: a late one (9) does not, so 7 is
   accepted after it; a regressed one does not either */
static void t_refused_grants_do_not_raise_floor(void) {
    afix f; afix_setup(&f, T0);
    held_then_released(&f, 5);
    f.c.now = T0 + 1000;
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 9);
    f.c.now = T0 + 1000 + WIN;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* late: refused */
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 7);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* 7 > 5: the floor stayed 5 */
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 7);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 6);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* 6 <= 7: regressed */
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, as_last(&f.s), 1, 8);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* 8 > 7: 6 did not raise it */
    afix_end(&f, 1);
}

/* acquire with a recorded refusal: apply (IDLE), then its own work: a new request */
static void t_acquire_applies_then_submits(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 0, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(f.s.submits[LDL_OP_ACQUIRE], 2);
    defer_answer(&f.s, 1, 1, 4);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 4);
    afix_end(&f, 1);
}

/* a negative submit is acquire's store error at once: 0, IDLE, nothing queued */
static void t_acquire_negative_submit(void) {
    afix f; afix_setup(&f, T0);
    f.s.refuse_rc[LDL_OP_ACQUIRE] = -1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(lost_calls, 0);
    f.s.refuse_rc[LDL_OP_ACQUIRE] = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);   /* nothing stuck */
    defer_answer(&f.s, 0, 1, 2);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    afix_end(&f, 1);
}

/* a malformed positive submit answer (the store queued it anyway): a store
   error, and the lock does not leave the op with the store */
static void t_acquire_malformed_submit(void) {
    afix f; afix_setup(&f, T0);
    f.s.refuse_rc[LDL_OP_ACQUIRE] = 2;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    CHECK_EQ(as_live(&f.s), 0);                          /* detached */
    defer_answer(&f.s, 0, 1, 5);                         /* the store hands it back */
    CHECK_EQ(rel_count(&f.s, 5), 1);
    CHECK_EQ(ST(f), LDL_IDLE);
    afix_end(&f, 1);
}

/* a cancelled acquire whose answer is a no carrying a token: the store (not
   the lock) releases it, exactly once */
static void t_cancelled_acquire_no_with_token(void) {
    afix f; afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
    defer_answer(&f.s, 0, 0, 7);
    CHECK_STR(ev_log(), "acq;cancel:acq;shb:7;");
    CHECK_EQ(rel_count(&f.s, 7), 1);
    afix_end(&f, 1);
    CHECK_EQ(f.s.submits[LDL_OP_RELEASE], 0);
}

/* a recorded answer beats the request's timeout: an acquire refusal applied
   past start'+ttl-drift needs no cancel; a release answer applied past
   start'+ttl is the store's answer, not LDL_ESTORE */
static void t_recorded_answer_beats_timeout(void) {
    afix f, g;
    afix_setup(&f, T0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_EINPROGRESS);
    defer_answer(&f.s, 0, 0, 0);
    f.c.now = T0 + 5000;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ST(f), LDL_IDLE);
    CHECK_EQ(f.s.cancels, 0);
    afix_end(&f, 1);
    afix_setup(&g, T0);
    (void)held(&g, 5);
    CHECK_EQ(ldl_lock_release(&g.l), LDL_EINPROGRESS);
    defer_answer(&g.s, as_last(&g.s), 1, 0);
    g.c.now = T0 + 5000;
    CHECK_EQ(ldl_lock_release(&g.l), 1);
    CHECK_EQ(ldl_lock_answer(&g.l), 1);
    CHECK_EQ(g.s.cancels, 0);
    afix_end(&g, 1);
}

/* a grant answered inside a submit that took the whole window (the clock moved
   inside the call): late, refused, handed back once, LEASE_EXPIRED; one ms
   less is HELD (the v0.2 lifecycle bullet, through the non-blocking path) */
static void t_inline_grant_after_slow_submit(void) {
    int late;
    for (late = 0; late < 2; late++) {
        afix f; afix_setup(&f, T0);
        f.s.submit_ms = WIN - 1 + (uint32_t)late;
        f.s.inline_on[LDL_OP_ACQUIRE] = 1; f.s.inline_rc[LDL_OP_ACQUIRE] = 1; f.s.inline_tok[LDL_OP_ACQUIRE] = 5;
        CHECK_EQ(ldl_lock_acquire(&f.l), late ? 0 : 1);
        CHECK_EQ(ST(f), late ? LDL_IDLE : LDL_HELD);
        CHECK_EQ(ldl_lock_reason(&f.l), late ? LDL_REASON_LEASE_EXPIRED : LDL_REASON_NONE);
        CHECK_EQ(rel_count(&f.s, 5), late);
        CHECK_EQ(ldl_lock_fencing_token(&f.l), late ? 0 : 5);
        afix_end(&f, 1);
    }
}

void suite_async_acquire(void) {
    RUN(t_init_async_with_store_einval);
    RUN(t_init_async_missing_method_einval);
    RUN(t_init_async_with_timers_einval);
    RUN(t_failed_init_behaves_disposed);
    RUN(t_init_copies_struct_ctx_null_ok);
    RUN(t_acquire_in_flight);
    RUN(t_grant_recorded_then_applied_by_poll);
    RUN(t_grant_applied_by_each_call);
    RUN(t_grant_applied_last_open_ms);
    RUN(t_grant_applied_first_closed_ms);
    RUN(t_dispose_recorded_late_grant);
    RUN(t_start_prime_read_before_submit);
    RUN(t_acquiring_timeout_boundary);
    RUN(t_acquiring_timeout_each_call);
    RUN(t_acquire_answered_inside_submit);
    RUN(t_acquire_refusals_not_handed_back);
    RUN(t_acquire_token_int64_max);
    RUN(t_fence_regressed_handed_back);
    RUN(t_grant_regressed_and_late_reads_fence);
    RUN(t_refused_grants_do_not_raise_floor);
    RUN(t_acquire_applies_then_submits);
    RUN(t_acquire_negative_submit);
    RUN(t_acquire_malformed_submit);
    RUN(t_cancelled_acquire_no_with_token);
    RUN(t_recorded_answer_beats_timeout);
    RUN(t_inline_grant_after_slow_submit);
}
#endif /* LDL_NO_ASYNC */
