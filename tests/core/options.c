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
}
