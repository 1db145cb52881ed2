/* lifecycle.c - every arrow of the diagram and every forbidden call. */
#include "harness.h"

static void fix_init(fix *f, int timers) { fix_setup(f, "job", timers, 0); }

static void t_idle_acquire_held_release_released(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 1);
    CHECK_STR(f.s.last_key, "job");
    CHECK_EQ(f.s.last_ttl, 300);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(f.s.released[0], 1);
    /* RELEASED by release may acquire again */
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 2);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_NONE);
}

static int seen_state;
static void record_state(script_store *s) { seen_state = ldl_lock_state(s->lock); }

static void t_transient_states(void) {
    fix f; fix_init(&f, 0);
    f.s.on_acquire = record_state;
    seen_state = -1;
    ldl_lock_acquire(&f.l);
    CHECK_EQ(seen_state, LDL_ACQUIRING);
    f.s.on_release = record_state;
    ldl_lock_release(&f.l);
    CHECK_EQ(seen_state, LDL_RELEASING);
}

static void t_no_grant_back_to_idle(void) {
    fix f; fix_init(&f, 0);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    f.s.acquire_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
}

static void t_forbidden_calls(void) {
    fix f; fix_init(&f, 0);
    /* release from IDLE: 0, no store call */
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    /* tick/poll from IDLE: 0, no store call */
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.renew_calls, 0);
    /* acquire from HELD: ESTATE (non-reentrant), nothing changes */
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), RUN_RC(LDL_ESTATE));
    CHECK_EQ(f.s.acquire_calls, 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 1);
    /* acquire from LOST: ESTATE */
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), RUN_RC(LDL_ESTATE));
    /* release from RELEASED: 0, no store call */
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 1);
}

static void t_release_answers(void) {
    fix f; fix_init(&f, 0);
    int answers[] = { 1, 0, -1, 2, INT_MIN, INT_MAX, -12 };
    int want[]    = { 1, 0, LDL_ESTORE, LDL_ESTORE, LDL_ESTORE, LDL_ESTORE, LDL_ESTORE };
    size_t i;
    for (i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        f.s.release_rc = answers[i];
        CHECK_EQ(ldl_lock_release(&f.l), want[i]);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);   /* released locally whatever the store said */
        CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    }
}

static void t_lost_release_once(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
    CHECK_EQ(ldl_lock_fencing_token(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 0);
    f.s.release_rc = 0;
    CHECK_EQ(ldl_lock_release(&f.l), 0);       /* the store says no: fine */
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(f.s.released[0], 1);             /* the last token */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);   /* loss reason kept */
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);           /* once */
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
}

static void t_lost_dispose_releases_once(void) {
    fix f; fix_init(&f, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.renew_rc = -3;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(f.s.released[0], 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);
}

static void t_dispose_from_held(void) {
    int tm;
    for (tm = 0; tm <= 1; tm++) {             /* manual mode, then timer mode */
        fix f;
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_init(&f, tm);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        CHECK_EQ(fake_timers_armed(&f.ft), tm);
        ev_reset();
        ldl_lock_dispose(&f.l);
        CHECK_STR(ev_log(), tm ? "clear;release;" : "release;");   /* disarm, then store.release */
        CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
        CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
        CHECK_EQ(fake_timers_armed(&f.ft), 0);
        CHECK_EQ(lost_calls, 0);              /* never on_lost for dispose */
        /* terminal: everything after is refused or a no-op, no store call */
        CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
        CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), RUN_RC(LDL_ESTATE));
        CHECK_EQ(ldl_lock_tick(&f.l), 0);
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(ldl_lock_release(&f.l), 0);
        ldl_lock_dispose(&f.l);
        CHECK_EQ(f.s.release_calls, 1);
        CHECK_EQ(f.s.renew_calls, 0);
        CHECK_EQ(f.s.acquire_calls, 1);
    }
}

static void t_dispose_from_idle_and_released(void) {
    fix f; fix_init(&f, 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(f.s.release_calls, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    fix_init(&f, 0);
    ldl_lock_acquire(&f.l);
    ldl_lock_release(&f.l);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
}

static void t_release_disarms_first(void) {
    int tm;
    for (tm = 0; tm <= 1; tm++) {
        fix f;
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_init(&f, tm);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        ev_reset();
        CHECK_EQ(ldl_lock_release(&f.l), 1);
        CHECK_STR(ev_log(), tm ? "clear;release;" : "release;");
        CHECK_EQ(fake_timers_armed(&f.ft), 0);
        CHECK_EQ(lost_calls, 0);              /* never on_lost for release */
    }
}

void suite_lifecycle(void) {
    RUN(t_idle_acquire_held_release_released);
    RUN(t_transient_states);
    RUN(t_no_grant_back_to_idle);
    RUN(t_forbidden_calls);
    RUN(t_release_answers);
    RUN(t_lost_release_once);
    RUN(t_lost_dispose_releases_once);
    RUN(t_dispose_from_held);
    RUN(t_dispose_from_idle_and_released);
    RUN(t_release_disarms_first);
}
