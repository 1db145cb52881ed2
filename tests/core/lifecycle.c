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

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
/* a scripted store sees ttl_ms at acquire and at every renew (poll, tick,
   timer), not the window or the heartbeat
   M: ldl__call passing `l->_window` (ttl - drift) or `l->_heartbeat_ms`
      instead of `l->_ttl_ms` to renew (or to acquire). */
static void t_ttl_to_scripted_store(void) {
    fix f;
    int tm;
    for (tm = 0; tm < 2; tm++) {
        if (SYNC_ONLY_MODE(tm)) continue;
        fix_setup(&f, "ttl", tm, 0);
        f.d.ttl_ms = 1000; f.d.heartbeat_ms = 250; f.d.drift_ms = 40;
        CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
        CHECK_EQ(ldl_lock_acquire(&f.l), 1);
        CHECK_EQ(f.s.last_ttl, 1000);
        f.s.last_ttl = 0;
        f.c.now += 250;
        if (tm) CHECK_EQ(fake_timers_fire(&f.ft), 1);   /* the heartbeat timer renews */
        else CHECK_EQ(ldl_lock_poll(&f.l), 1);          /* poll's heartbeat renews */
        CHECK_EQ(f.s.renew_calls, 1);
        CHECK_EQ(f.s.last_ttl, 1000);
        f.s.last_ttl = 0;
        CHECK_EQ(ldl_lock_tick(&f.l), 1);
        CHECK_EQ(f.s.renew_calls, 2);
        CHECK_EQ(f.s.last_ttl, 1000);
        ldl_lock_dispose(&f.l);
    }
    /* another shape: ttl 777, heartbeat 300, drift 7 */
    fix_setup(&f, "ttl", 0, 0);
    f.d.ttl_ms = 777; f.d.heartbeat_ms = 300; f.d.drift_ms = 7;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(f.s.last_ttl, 777);
    f.s.last_ttl = 0;
    f.c.now += 300;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 1);
    CHECK_EQ(f.s.last_ttl, 777);
}

/* the default store (desc.store NULL): the lease the own MemoryStore files
   ends exactly ttl_ms after the acquire and after each renew. The expiry is
   read from the lock's private own-store slot (no public view of it); the
   observable half: a renew just inside the window succeeds, which a store
   handed the heartbeat (or less) as its ttl would refuse.
   M: as t_ttl_to_scripted_store, on the default store path. */
static void t_ttl_to_default_store(void) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc;
    fake_clock c;
    c.now = 5000;
    desc_for(&d, &fc, NULL, &c, "own", 300);
    d.heartbeat_ms = 100; d.drift_ms = 5;
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(l._own.expires, 5300);
    c.now += 294;                                  /* 1 ms before the lock's deadline */
    CHECK_EQ(ldl_lock_tick(&l), 1);
    CHECK_EQ(l._own.expires, 5594);
    c.now += 100;
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(l._own.expires, 5694);
    CHECK_EQ(ldl_lock_valid_ms(&l), 295);
    CHECK_EQ(ldl_lock_release(&l), 1);
    CHECK_EQ(lost_calls, 0);
}

/* The default store (desc.store NULL) is the lock's own one-key store
   (ldl__own, decision 0014): the MemoryStore's rules for that key, asked
   directly through the lock's private store view. Tokens come from a counter
   that only rises (a release or an expiry never gives a token back); acquire
   grants iff free or expired at the instant; renew only the holder's token
   while unexpired; release by the holder's token, also just after expiry;
   a counter at INT64_MAX answers LDL_ENOSPC, never a wrapped token.
   M: own-steal-unexpired, own-expiry-off-by-one, own-renew-after-expiry,
   own-renew-any-token, own-release-any-token, own-token-reuse, own-no-exhaust. */
static void t_default_store_rules(void) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc;
    fake_clock c;
    ldl_store s;
    int64_t t = 0, t2 = 0;
    c.now = 1000;
    desc_for(&d, &fc, NULL, &c, "own", 300);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    s = l._st.s;
    CHECK(s.ctx == (void *)&l);
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t), 1);
    CHECK_EQ(t, 1);
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t2), 0);        /* held */
    c.now = 1099;
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t2), 0);        /* 1 ms before expiry */
    CHECK_EQ(s.renew(s.ctx, "own", t + 1, 100), 0);        /* not the holder's token */
    CHECK_EQ(s.renew(s.ctx, "own", t, 100), 1);            /* now until 1199 */
    c.now = 1199;
    CHECK_EQ(s.renew(s.ctx, "own", t, 100), 0);            /* expired at the instant */
    CHECK_EQ(s.release(s.ctx, "own", t + 1), 0);            /* not the holder's token */
    CHECK_EQ(s.release(s.ctx, "own", t), 1);               /* just after expiry: still its */
    CHECK_EQ(s.release(s.ctx, "own", t), 0);               /* a second release */
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t2), 1);
    CHECK_EQ(t2, 2);                                       /* the counter, not a reuse */
    c.now = 1299;                                          /* t2 expired: a steal */
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t), 1);
    CHECK_EQ(t, 3);
    CHECK_EQ(s.release(s.ctx, "own", t2), 0);              /* the stolen lease is gone */
    CHECK_EQ(s.renew(s.ctx, "own", t2, 100), 0);
    CHECK_EQ(s.release(s.ctx, "own", t), 1);
    l._own.last = INT64_MAX;                               /* the counter at its end */
    t2 = 0;
    CHECK_EQ(s.acquire(s.ctx, "own", 100, &t2), LDL_ENOSPC);
    CHECK_EQ(t2, 0);
    ldl_lock_dispose(&l);
}

/* ldl_lock_answer after synchronous acquire, release and run: every acquire
   and every user release sets it (run's legs too); a renew never does
   M: ldl_lock_acquire or ldl_lock_release without `l->_answer = rc`;
   M: ldl__renewed / ldl__heartbeat writing `_answer`. */
static int fail_body(void *scope, void *user) { (void)scope; (void)user; return 3; }
static void t_sync_answer(void) {
    fix f;
    fix_setup(&f, "ans", 0, 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
    f.s.renew_rc = 1;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);            /* a renew never changes it */
    f.s.release_rc = 0;
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    f.s.release_rc = -7;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    CHECK_EQ(ldl_lock_release(&f.l), 0);           /* nothing to release: also set */
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    f.s.acquire_rc = 0;
    f.s.release_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    f.s.acquire_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);              /* lost: the answer stays the grant's */
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
}

/* with synchronous stores run's acquire and release legs set it too
   M: as t_sync_answer (run goes through ldl_lock_acquire/_release). */
static void t_sync_answer_run(void) {
    fix f;
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix_setup(&f, "ans", 0, 0);
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_answer(&f.l), 1);            /* the release leg's ack */
    f.s.release_rc = 0;
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);
    f.s.release_rc = -1;
    CHECK_EQ(ldl_lock_run(&f.l, fail_body, NULL, NULL), LDL_EAGGREGATE);
    CHECK_EQ(ldl_lock_answer(&f.l), LDL_ESTORE);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_run(&f.l, nop_body, NULL, NULL), LDL_ENOTACQUIRED);
    CHECK_EQ(ldl_lock_answer(&f.l), 0);            /* the acquire leg's no */
    CHECK_EQ(ldl_lock_pending(&f.l), 0);
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
    RUN(t_ttl_to_scripted_store);
    RUN(t_ttl_to_default_store);
    RUN(t_default_store_rules);
    RUN(t_sync_answer);
    RUN(t_sync_answer_run);
}
