/* options.c - ldl_lock_init validation: every field, every bad value, and
   ldl_lock_why naming the field. A failed init behaves as disposed. */
#include "harness.h"

static int why_has(const ldl_lock *l, const char *field) {
    return strncmp(ldl_lock_why(l), field, strlen(field)) == 0;
}

/* init must fail with EINVAL, name `field`, and leave a disposed lock that
   never touches the store */
static void expect_bad(ldl_lock_desc *d, script_store *s, const char *field) {
    ldl_lock l;
    int before = s->acquire_calls + s->release_calls + s->renew_calls;
    CHECK_EQ(ldl_lock_init(&l, d), LDL_EINVAL);
    if (!CHECK(why_has(&l, field))) chk_note("why: %s (want %s)", ldl_lock_why(&l), field);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_release(&l), 0);
    CHECK_EQ(ldl_lock_held(&l), 0);
    CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    ldl_lock_dispose(&l);
    ldl_lock_dispose(&l);
    CHECK_EQ(s->acquire_calls + s->release_calls + s->renew_calls, before);
}


static void t_failed_init_run_is_estate(void) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc; script_store s; fake_clock c = {0};
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300);
    d.ttl_ms = 0;
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_EINVAL);
    CHECK_EQ(ldl_lock_run(&l, nop_body, NULL, NULL), LDL_ESTATE);
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&l), UINT32_MAX);
    CHECK_EQ(s.acquire_calls, 0);
}

static void t_null_args(void) {
    ldl_lock l;
    CHECK_EQ(ldl_lock_init(NULL, NULL), LDL_EINVAL);
    CHECK_EQ(ldl_lock_init(&l, NULL), LDL_EINVAL);
    CHECK(why_has(&l, "desc"));
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_STR(ldl_lock_why(NULL), "lock: NULL");
    CHECK_EQ(ldl_lock_acquire(NULL), LDL_ESTATE);
    CHECK_EQ(ldl_lock_release(NULL), 0);
    CHECK_EQ(ldl_lock_tick(NULL), 0);
    CHECK_EQ(ldl_lock_poll(NULL), 0);
    ldl_lock_dispose(NULL);
    /* the rest of the guard's DEAD column for a NULL lock (issue 25; M: the
       DUE or VALID row's DEAD cell reading GO: a NULL dereference) */
    CHECK_EQ(ldl_lock_valid_ms(NULL), 0);
    CHECK_EQ(ldl_lock_due_in_ms(NULL), UINT32_MAX);
    CHECK_EQ(ldl_lock_run(NULL, nop_body, NULL, NULL), LDL_ESTATE);
}

static void t_container(void) {
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300); d.container.scope = NULL; expect_bad(&d, &s, "container");
    desc_for(&d, &fc, &s, &c, "k", 300); d.container.value = NULL; expect_bad(&d, &s, "container");
    desc_for(&d, &fc, &s, &c, "k", 300); d.container.shutdown = NULL; expect_bad(&d, &s, "container");
}

static void t_key(void) {
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    char longkey[LDL_KEY_MAX + 1], maxkey[LDL_KEY_MAX];
    ldl_lock l;
    memset(longkey, 'a', LDL_KEY_MAX); longkey[LDL_KEY_MAX] = 0;       /* LDL_KEY_MAX bytes: too long */
    memset(maxkey, 'b', LDL_KEY_MAX - 1); maxkey[LDL_KEY_MAX - 1] = 0;  /* the maximum */
    script_init(&s);
    desc_for(&d, &fc, &s, &c, NULL, 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, "", 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, longkey, 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, "a\nb", 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, "tab\there", 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, "del\x7f", 300); expect_bad(&d, &s, "key");
    desc_for(&d, &fc, &s, &c, "\x01", 300); expect_bad(&d, &s, "key");
    /* the maximum length is fine and is copied in exactly */
    desc_for(&d, &fc, &s, &c, maxkey, 300);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    CHECK_STR(ldl_lock_why(&l), "ok");
    maxkey[0] = 'Z';                          /* the lock keeps its own copy */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ((long long)strlen(s.last_key), LDL_KEY_MAX - 1);
    CHECK_EQ(s.last_key[0], 'b');
    /* UTF-8, spaces, quotes are allowed */
    desc_for(&d, &fc, &s, &c, "caf\xc3\xa9 'x' {y};--", 300);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
}

static void t_ttl_heartbeat_drift(void) {
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    ldl_lock l;
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 0); expect_bad(&d, &s, "ttl_ms");
    /* ttl 3: default heartbeat 1, default drift 2, 2 < 3-1 fails */
    desc_for(&d, &fc, &s, &c, "k", 3); expect_bad(&d, &s, "drift_ms");
    /* ttl 2: default heartbeat 0 */
    desc_for(&d, &fc, &s, &c, "k", 2); expect_bad(&d, &s, "heartbeat_ms");
    /* with all defaults the smallest valid TTL is 4 */
    desc_for(&d, &fc, &s, &c, "k", 4); CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    /* heartbeat * 2 <= ttl: exactly half is fine, one more is not */
    desc_for(&d, &fc, &s, &c, "k", 1000); d.heartbeat_ms = 500; d.drift_ms = 499;
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    desc_for(&d, &fc, &s, &c, "k", 1000); d.heartbeat_ms = 501; expect_bad(&d, &s, "heartbeat_ms");
    /* drift < ttl - heartbeat */
    desc_for(&d, &fc, &s, &c, "k", 1000); d.heartbeat_ms = 500; d.drift_ms = 500; expect_bad(&d, &s, "drift_ms");
    /* 64-bit arithmetic: a huge heartbeat must not wrap into validity */
    desc_for(&d, &fc, &s, &c, "k", UINT32_MAX); d.heartbeat_ms = 0x80000000u; expect_bad(&d, &s, "heartbeat_ms");
    desc_for(&d, &fc, &s, &c, "k", UINT32_MAX); d.heartbeat_ms = 0x7FFFFFFFu; d.drift_ms = UINT32_MAX;
    expect_bad(&d, &s, "drift_ms");
    desc_for(&d, &fc, &s, &c, "k", UINT32_MAX);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
}

static void t_store_clock_timers_names(void) {
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    ldl_store bad; fake_timers ft; int dummy = 0;
    script_init(&s);
    /* the synchronous store's own checks (async_store cleared in both passes) */
    bad = script_of(&s); bad.renew = NULL;
    desc_for(&d, &fc, &s, &c, "k", 300); d.async_store = NULL; d.store = &bad; expect_bad(&d, &s, "store");
    bad = script_of(&s); bad.acquire = NULL;
    desc_for(&d, &fc, &s, &c, "k", 300); d.async_store = NULL; d.store = &bad; expect_bad(&d, &s, "store");
    bad = script_of(&s); bad.release = NULL;
    desc_for(&d, &fc, &s, &c, "k", 300); d.async_store = NULL; d.store = &bad; expect_bad(&d, &s, "store");
    desc_for(&d, &fc, &s, &c, "k", 300); d.clock.now_ms = NULL; d.clock.ctx = &dummy; expect_bad(&d, &s, "clock");
    memset(&ft, 0, sizeof ft);
    desc_for(&d, &fc, &s, &c, "k", 300); d.timers = fake_timers_of(&ft); d.timers.clear_timeout = NULL;
    expect_bad(&d, &s, "timers");
    desc_for(&d, &fc, &s, &c, "k", 300); d.timers = fake_timers_of(&ft); d.timers.set_timeout = NULL;
    expect_bad(&d, &s, "timers");
    desc_for(&d, &fc, &s, &c, "k", 300); d.timers.ctx = &ft; expect_bad(&d, &s, "timers");
}

static void t_names_are_the_containers_business(void) {
    /* SPEC.md sets no rule on the names: init takes any; a container that
       refuses one (here: the same name twice) makes run() answer EFENCE */
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    ldl_lock l; ldl_run_result r;
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "k", 300); d.token_name = "same"; d.holder_name = "same";
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    CHECK_EQ(ldl_lock_run(&l, nop_body, NULL, &r), LDL_EFENCE);
    CHECK_EQ(r.release_rc, 1);
    CHECK_EQ(s.release_calls, 1);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    desc_for(&d, &fc, &s, &c, "k", 300); d.holder_name = "lock:fence";   /* the default token name */
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    CHECK_EQ(ldl_lock_run(&l, nop_body, NULL, &r), LDL_EFENCE);
}

static void t_store_struct_copied(void) {
    /* the store struct (ldl_store, or ldl_async_store in the async pass) is
       copied at init: a temporary that is then clobbered is fine */
    ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    ldl_store tmp; ldl_async_store atmp; ldl_lock l;
    script_init(&s);
    desc_for(&d, &fc, NULL, &c, "k", 300);
    tmp = script_of(&s);
    memset(&atmp, 0, sizeof atmp);
#ifndef LDL_NO_ASYNC
    atmp = script_async_of(&s);
#endif
    if (t_async) d.async_store = &atmp; else d.store = &tmp;
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    memset(&tmp, 0, sizeof tmp);
    memset(&atmp, 0, sizeof atmp);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(s.acquire_calls, 1);
}

static void t_default_store_and_clock(void) {
    /* NULL store: a fresh in-process MemoryStore per lock; zero clock: built-in */
    ldl_lock a, b;
    ldl_lock_desc d;
    fake_container fc;
    SYNC_ONLY("no store given: the built-in store is a synchronous MemoryStore");
    desc_for(&d, &fc, NULL, NULL, "same-key", 60000);
    CHECK_EQ(ldl_lock_init(&a, &d), LDL_OK);
    CHECK_EQ(ldl_lock_init(&b, &d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&b), 1);      /* independent stores */
    CHECK_EQ(ldl_lock_fencing_token(&a), 1);
    CHECK(ldl_lock_valid_ms(&a) > 0 && ldl_lock_valid_ms(&a) <= 60000);
    CHECK_EQ(ldl_lock_release(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_fencing_token(&a), 2);
    ldl_lock_dispose(&a);
    ldl_lock_dispose(&b);
}

#ifdef LDL_NO_ASYNC
/* LDL_NO_ASYNC: a non-blocking store is refused at init, with a why that
   names the switch, and nothing of the lock changes (decision 0006) */
static void t_noasync_refuses_async_store(void) {
    fix f;
    ldl_async_store as;
    memset(&as, 0, sizeof as);
    fix_setup(&f, "na", 0, 1000);
    f.d.store = NULL;
    f.d.async_store = &as;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL);
    CHECK(strstr(ldl_lock_why(&f.l), "LDL_NO_ASYNC") != NULL);
    CHECK_EQ(ldl_lock_acquire(&f.l), LDL_ESTATE);
    CHECK_EQ(f.s.acquire_calls, 0);
}
#endif

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
/* the whole manual-mode lifecycle on a lock whose storage was `fill` before init
   M: ldl_lock_init without one of its resets: `l->_depth = 0` or
      `l->_hooked = 0` (every call
      answers LDL_ESTATE), `l->_op._phase = LDL__OP_IDLE` (pending reads 1),
      `l->_answer = 0`, `l->_reason = LDL_REASON_NONE`, `l->_last = 0`
      (0x5A...: token 1 refused as FENCE_REGRESSED), `l->_async = 0` (the sync
      store is called as an async one), `l->_timer = 0` (disarm calls a NULL
      clear_timeout), `l->_owed = 0`, `l->_key[0] = 0` / the key's NUL. */
static void lifecycle_over(int fill) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc;
    script_store s;
    fake_clock c;
    lost_calls = 0;
    script_init(&s);
    c.now = 1000;
    desc_for(&d, &fc, &s, &c, "job", 300);
    memset(&l, fill, sizeof l);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    s.lock = &l;
    CHECK_EQ(ldl_lock_state(&l), LDL_IDLE);
    CHECK_EQ(ldl_lock_held(&l), 0);
    CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_pending(&l), 0);
    CHECK_EQ(ldl_lock_answer(&l), 0);
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&l), UINT32_MAX);
    CHECK_EQ(ldl_lock_release(&l), 0);                 /* from IDLE: no store call */
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(s.release_calls + s.renew_calls + s.acquire_calls, 0);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_STR(s.last_key, "job");
    CHECK_EQ(s.last_ttl, 300);
    CHECK_EQ(ldl_lock_state(&l), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&l), 1);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_NONE);
    CHECK_EQ(ldl_lock_pending(&l), 0);
    CHECK_EQ(ldl_lock_answer(&l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 295);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 100);
    c.now += 50;
    CHECK_EQ(ldl_lock_poll(&l), 1);
    CHECK_EQ(s.renew_calls, 0);
    CHECK_EQ(ldl_lock_due_in_ms(&l), 50);
    c.now += 50;
    CHECK_EQ(ldl_lock_poll(&l), 1);                    /* heartbeat due: renews */
    CHECK_EQ(s.renew_calls, 1);
    CHECK_EQ(s.renewed[0], 1);
    CHECK_EQ(ldl_lock_valid_ms(&l), 295);
    CHECK_EQ(ldl_lock_tick(&l), 1);
    CHECK_EQ(s.renew_calls, 2);
    CHECK_EQ(ldl_lock_release(&l), 1);
    CHECK_EQ(s.released[0], 1);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_RELEASED);
    CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    CHECK_EQ(ldl_lock_answer(&l), 1);
    /* a loss, then the owed release */
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ldl_lock_fencing_token(&l), 2);
    s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_state(&l), LDL_LOST);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_release(&l), 1);
    CHECK_EQ(s.release_calls, 2);
    CHECK_EQ(s.released[1], 2);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_HEARTBEAT_FAILED);
    s.renew_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    ldl_lock_dispose(&l);
    CHECK_EQ(s.release_calls, 3);
    CHECK_EQ(s.released[2], 3);
    CHECK_EQ(ldl_lock_reason(&l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_release(&l), 0);
    CHECK_EQ(s.acquire_calls, 3);
    CHECK_EQ(s.release_calls, 3);
}

static void t_init_over_garbage(void) {
    lifecycle_over(0xA5);      /* int64 fields read negative */
    lifecycle_over(0x5A);      /* int64 fields read large positive */
    lifecycle_over(0xFF);
}

/* timer mode: a lock disposed right after init over garbage clears no timer
   it never armed, and one acquire arms exactly one
   M: ldl_lock_init without `l->_timer = 0` (dispose clears a garbage handle). */
static void t_init_over_garbage_timers(void) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc;
    script_store s;
    fake_clock c;
    fake_timers ft;
    SYNC_ONLY("timer mode: a non-blocking store needs manual mode");
    script_init(&s);
    memset(&ft, 0, sizeof ft);
    c.now = 0;
    desc_for(&d, &fc, &s, &c, "tm", 300);
    d.timers = fake_timers_of(&ft);
    memset(&l, 0xA5, sizeof l);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    ldl_lock_dispose(&l);
    CHECK_EQ(ft.clear_calls, 0);
    CHECK_EQ(ft.set_calls, 0);
    CHECK_EQ(s.release_calls, 0);
    memset(&l, 0x5A, sizeof l);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&l), 1);
    CHECK_EQ(ft.set_calls, 1);
    CHECK_EQ(ft.clear_calls, 0);
    CHECK_EQ(fake_timers_armed(&ft), 1);
    CHECK_EQ(ldl_lock_release(&l), 1);
    CHECK_EQ(ft.clear_calls, 1);
    CHECK_EQ(fake_timers_armed(&ft), 0);
}

/* a failed init over garbage behaves as disposed (SPEC "Validation and lifetimes")
   M: ldl_lock_init validating before it resets the fields (a failed init
      leaves garbage state/busy/op: acquire does not answer LDL_ESTATE). */
static void t_failed_init_over_garbage(void) {
    ldl_lock l;
    ldl_lock_desc d;
    fake_container fc;
    script_store s;
    fake_clock c;
    script_init(&s);
    c.now = 0;
    desc_for(&d, &fc, &s, &c, "job", 0);           /* ttl 0: invalid */
    memset(&l, 0xA5, sizeof l);
    CHECK_EQ(ldl_lock_init(&l, &d), LDL_EINVAL);
    CHECK(strstr(ldl_lock_why(&l), "ttl_ms") != NULL);
    CHECK_EQ(ldl_lock_state(&l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_fencing_token(&l), 0);
    CHECK_EQ(ldl_lock_pending(&l), 0);
    CHECK_EQ(ldl_lock_answer(&l), 0);
    CHECK_EQ(ldl_lock_acquire(&l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_run(&l, nop_body, NULL, NULL), LDL_ESTATE);
    CHECK_EQ(ldl_lock_tick(&l), 0);
    CHECK_EQ(ldl_lock_poll(&l), 0);
    CHECK_EQ(ldl_lock_release(&l), 0);
    CHECK_EQ(ldl_lock_valid_ms(&l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&l), UINT32_MAX);
    ldl_lock_dispose(&l);
    CHECK_EQ(s.acquire_calls + s.renew_calls + s.release_calls, 0);
    CHECK_EQ(fc.scope_calls, 0);
}

/* re-init with a shorter key: the store sees exactly the short key
   M: ldl__setup copying the key without its NUL (`i <= len` -> `i < len`):
      the lock's key reads "ab" + the rest of the old key. */
static void t_reinit_shorter_key(void) {
    fix f;
    gms g;
    int64_t t;
    fix_setup(&f, "a-much-longer-key", 0, 0);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_STR(f.s.last_key, "a-much-longer-key");
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    f.d.key = "ab";
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_STR(f.s.last_key, "ab");
    CHECK_EQ((long long)strlen(f.s.last_key), 2);
    ldl_lock_dispose(&f.l);
    /* the same through a MemoryStore: the lease is filed under "ab" exactly */
    gms_init(&g, 8);
    f.d.key = "a-much-longer-key";
    desc_use_memstore(&f.d, &g.ms);
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    f.d.key = "ab";
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    t = ldl_lock_fencing_token(&f.l);
    CHECK_EQ(t, 2);
    CHECK(gslot_of(&g, "ab") >= 0);
    CHECK_EQ(gacq(&g, "ab", &t), 0);                   /* held under "ab" */
    CHECK_EQ(grel(&g, "ab", 2), 1);                     /* released under "ab" */
    CHECK_EQ(ldl_lock_tick(&f.l), 0);                   /* the store no longer knows it */
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
}

void suite_options(void) {
    RUN(t_null_args);
    RUN(t_failed_init_run_is_estate);
    RUN(t_container);
    RUN(t_key);
    RUN(t_ttl_heartbeat_drift);
    RUN(t_store_clock_timers_names);
    RUN(t_names_are_the_containers_business);
    RUN(t_store_struct_copied);
    RUN(t_default_store_and_clock);
#ifdef LDL_NO_ASYNC
    RUN(t_noasync_refuses_async_store);
#endif
    RUN(t_init_over_garbage);
    RUN(t_init_over_garbage_timers);
    RUN(t_failed_init_over_garbage);
    RUN(t_reinit_shorter_key);
}
