/* heartbeat.c - timer mode (one chained one-shot, never an interval, an
   unarmable timer loses the lease), manual mode (poll renews only when
   due), the local deadline with drift, valid_ms and due_in_ms. */
#include "harness.h"

static void fix_init(fix *f, int timers) { fix_setup(f, "hb", timers, 1000); }

static void t_timer_chain_one_shot(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix f; fix_init(&f, 1);
    int i;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(f.ft.set_calls, 1);
    CHECK_EQ(f.ft.last_delay, 100);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    for (i = 0; i < 5; i++) {
        f.c.now += 100;
        CHECK_EQ(fake_timers_fire(&f.ft), 1);       /* the one armed timer */
        CHECK_EQ(f.s.renew_calls, i + 1);
        CHECK_EQ(fake_timers_armed(&f.ft), 1);      /* re-armed once: a chain */
        CHECK_EQ(f.ft.set_calls, i + 2);
        CHECK_EQ(f.s.renewed[i], 1);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    }
    CHECK_EQ(f.ft.clear_calls, 0);                  /* a fired one-shot is not cleared */
    /* poll in timer mode never renews */
    f.c.now += 99;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 5);
}

static void t_manual_tick_in_timer_mode_keeps_one(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix f; fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    ev_reset();
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_STR(ev_log(), "clear;renew;set;");        /* old cleared, exactly one re-armed */
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
}

static void t_renew_failure_stops_chain(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix f; fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.renew_rc = 0;
    f.c.now += 100;
    CHECK_EQ(fake_timers_fire(&f.ft), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(fake_timers_armed(&f.ft), 0);          /* any loss disarms */
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(lost_last_reason, LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(fake_timers_fire(&f.ft), 0);
    CHECK_EQ(f.s.renew_calls, 1);
}

static void t_renew_answers(void) {
    int answers[] = { 0, -1, 2, INT_MIN, INT_MAX, -12 };
    int reasons[] = { LDL_REASON_HEARTBEAT_FAILED, LDL_REASON_STORE_ERROR, LDL_REASON_STORE_ERROR,
                      LDL_REASON_STORE_ERROR, LDL_REASON_STORE_ERROR, LDL_REASON_STORE_ERROR };
    size_t i;
    for (i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        fix f; fix_init(&f, 0);
        lost_calls = 0;
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        f.s.renew_rc = answers[i];
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
        CHECK_EQ(ldl_lock_reason(&f.l), reasons[i]);
        CHECK_EQ(lost_calls, 1);
        CHECK_EQ(lost_last_reason, reasons[i]);
        CHECK_EQ(ldl_lock_tick(&f.l), 0);           /* LOST: no more renews */
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(f.s.renew_calls, 1);
        CHECK_EQ(lost_calls, 1);                    /* once */
    }
}

static void t_unarmable_at_rearm(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix f; fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.ft.fail_next = 1;
    f.c.now += 100;
    ev_reset();
    CHECK_EQ(fake_timers_fire(&f.ft), 1);
    /* hand back at once, THEN on_lost */
    CHECK_STR(ev_log(), "fire;renew;set;release;on_lost;");
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_TIMER_UNARMABLE);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(f.s.released[0], 1);
    CHECK_EQ(ldl_lock_release(&f.l), 0);            /* no second store call */
    CHECK_EQ(f.s.release_calls, 1);
    /* a manual tick that hits an unarmable timer answers 0 */
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.ft.fail_next = 1;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_TIMER_UNARMABLE);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);
}

static void t_unarmable_at_grant(void) {
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    fix f; fix_init(&f, 1);
    f.ft.fail_next = 1;
    ev_reset();
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_STR(ev_log(), "acquire;set;release;on_lost;");
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);
}

static void t_manual_poll_renews_only_when_due(void) {
    fix f; fix_init(&f, 0);
    int frame;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);            /* start 1000 */
    for (frame = 0; frame < 99; frame++) {         /* 1001..1099: not due */
        f.c.now++;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
    }
    CHECK_EQ(f.s.renew_calls, 0);
    f.c.now = 1100;                                 /* exactly heartbeat_ms later */
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 1);
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 1);
    f.c.now = 1199;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 1);
    f.c.now = 1200;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 2);
}

static uint64_t reads;
static uint64_t counting_now(void *ctx) { reads++; return ((fake_clock *)ctx)->now; }

static void t_poll_reads_clock_once(void) {
    fix f; fix_init(&f, 0);
    f.d.clock.now_ms = counting_now;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    reads = 0;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);               /* not due */
    CHECK_EQ(reads, 1);
    f.c.now += 100;
    reads = 0;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);               /* due: renews with the same reading, */
    CHECK_EQ(reads, 2);                             /* then one read to apply the yes (v0.2) */
    CHECK_EQ(f.s.renew_calls, 1);
}

static void t_deadline_uses_start_before_call(void) {
    /* the store call takes 50 ms; trust runs from the read BEFORE the call */
    fix f; fix_init(&f, 0);
    f.s.clock = &f.c; f.s.call_ms = 50;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);            /* start 1000, now 1050 */
    CHECK_EQ(f.c.now, 1050);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 245);         /* 1000 + 295 - 1050 */
    f.c.now = 1294;
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    f.c.now = 1295;                                 /* at the deadline: lost */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(f.s.renew_calls, 0);
    /* a renew also measures from before its call */
    fix_init(&f, 0);
    f.s.clock = &f.c; f.s.call_ms = 50;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);            /* now 1050 */
    f.c.now = 1200;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);               /* start 1200, now 1250 */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 245);
}

static void t_stalled_process_never_renews_dead_lease(void) {
    int tm;
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now += 10000;                               /* paused far past the TTL */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(f.s.renew_calls, 0);                   /* the store is not asked */
    CHECK_EQ(lost_calls, 1);
    /* tick too, in both modes */
    for (tm = 0; tm <= 1; tm++) {
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_init(&f, tm);
        lost_calls = 0;
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        f.c.now += 295;
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(f.s.renew_calls, 0);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
        CHECK_EQ(fake_timers_armed(&f.ft), 0);
        CHECK_EQ(lost_calls, 1);
    }
}

static void t_stalled_timer_mode_never_renews(void) {
    fix f;
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    /* a late timer fire after the deadline: no renew */
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now += 400;
    CHECK_EQ(fake_timers_fire(&f.ft), 1);
    CHECK_EQ(f.s.renew_calls, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    /* poll in timer mode checks the deadline */
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now += 294;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    f.c.now += 1;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(fake_timers_armed(&f.ft), 0);
}

static void t_clock_backwards_fails_closed(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now -= 1;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);          /* poll now */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(f.s.renew_calls, 0);
}

static void t_due_in_ms(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);  /* not held */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 100);         /* manual: next heartbeat */
    f.c.now += 60;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 40);
    f.c.now += 40;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    f.c.now += 500;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 0);
    /* window 151 > heartbeat 150 (init guarantees window > heartbeat) */
    {
        fix g; fix_init(&g, 0);
        g.d.heartbeat_ms = 150; g.d.drift_ms = 149;          /* window 151 */
        CHECK_EQ(ldl_lock_init(&g.l, &g.d), LDL_OK);
        CHECK_EQ(ldl_lock_acquire(&g.l), 1);
        g.c.now += 149;
        CHECK_EQ(ldl_lock_due_in_ms(&g.l), 1);        /* heartbeat in 1, deadline in 2 */
        g.c.now += 1;
        CHECK_EQ(ldl_lock_due_in_ms(&g.l), 0);
    }
}

static void t_due_in_ms_timer_mode(void) {
    fix f;
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    /* timer mode: to the deadline */
    fix_init(&f, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 295);
    f.c.now += 200;
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 95);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 95);
}

static void t_valid_ms_never_exceeds_ttl(void) {
    fix f; fix_init(&f, 0);
    f.d.drift_ms = 0;    /* default drift */
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK(ldl_lock_valid_ms(&f.l) <= 300);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 295);
}

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
/* A synchronous renew yes that comes back after its own window closed
   loses the lease (LEASE_EXPIRED, on_lost once, tick 0) and the token is
   released by the next release, once; one ms less keeps it, counted from
   the renew's start.
   M: ldl__renewed without its window check (tick answers 1, HELD);
   M: ldl__renewed setting `_start` from the clock after the call. */
static void t_sync_renew_late_yes(void) {
    fix f;
    fix_setup(&f, "late", 0, 1000);
    f.s.clock = &f.c;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now = 1100;
    f.s.call_ms = 295;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(f.s.renew_calls, 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(lost_last_reason, LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 0);                /* owed, not yet released */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(f.s.released[0], 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);   /* kept */
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 1);
    /* the same through poll */
    f.s.call_ms = 0;
    f.c.now = 2000;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now = 2100;
    f.s.call_ms = 300;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 2);
    /* one ms less: still HELD, the window counted from the renew's start */
    f.s.call_ms = 0;
    f.c.now = 3000;
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.c.now = 3100;
    f.s.call_ms = 294;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 1);          /* 3100 + 295 - 3394 */
    CHECK_EQ(lost_calls, 2);
}

void suite_heartbeat(void) {
    RUN(t_timer_chain_one_shot);
    RUN(t_manual_tick_in_timer_mode_keeps_one);
    RUN(t_renew_failure_stops_chain);
    RUN(t_renew_answers);
    RUN(t_unarmable_at_rearm);
    RUN(t_unarmable_at_grant);
    RUN(t_manual_poll_renews_only_when_due);
    RUN(t_poll_reads_clock_once);
    RUN(t_deadline_uses_start_before_call);
    RUN(t_stalled_process_never_renews_dead_lease);
    RUN(t_stalled_timer_mode_never_renews);
    RUN(t_clock_backwards_fails_closed);
    RUN(t_due_in_ms);
    RUN(t_due_in_ms_timer_mode);
    RUN(t_valid_ms_never_exceeds_ttl);
    RUN(t_sync_renew_late_yes);
}
