/* misc.c - names, version, strerror. */
#include "harness.h"

static void t_names(void) {
    static const char *states[] = { "IDLE", "ACQUIRING", "HELD", "RELEASING", "RELEASED", "LOST" };
    static const char *reasons[] = { "NONE", "RELEASED", "HEARTBEAT_FAILED", "STORE_ERROR",
        "FENCE_REGRESSED", "DISPOSED", "TIMER_UNARMABLE", "LEASE_EXPIRED" };
    int i;
    for (i = 0; i < 6; i++) CHECK_STR(ldl_state_name(i), states[i]);
    for (i = 0; i < 8; i++) CHECK_STR(ldl_reason_name(i), reasons[i]);
    CHECK_STR(ldl_state_name(-1), "?");
    CHECK_STR(ldl_state_name(6), "?");
    CHECK_STR(ldl_reason_name(8), "?");
    CHECK_STR(ldl_reason_name(INT_MIN), "?");
    CHECK_EQ(LDL_IDLE, 0); CHECK_EQ(LDL_ACQUIRING, 1); CHECK_EQ(LDL_HELD, 2);
    CHECK_EQ(LDL_RELEASING, 3); CHECK_EQ(LDL_RELEASED, 4); CHECK_EQ(LDL_LOST, 5);
    CHECK_EQ(LDL_REASON_LEASE_EXPIRED, 7);
}

static void t_strerror(void) {
    int rc;
    const char *seen[13];
    for (rc = 0; rc >= -12; rc--) {
        int j;
        const char *s = ldl_strerror(rc);
        CHECK(s != NULL && s[0] != 0);
        CHECK(strcmp(s, ldl_strerror(1)) != 0);        /* every code has its own text */
        for (j = 0; j < -rc; j++) CHECK(strcmp(seen[j], s) != 0);
        seen[-rc] = s;
    }
    CHECK(ldl_strerror(1) != NULL);
    CHECK(ldl_strerror(-13) != NULL);
    CHECK(ldl_strerror(INT_MIN) != NULL);
}

static void t_version(void) {
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", LDL_VERSION_MAJOR, LDL_VERSION_MINOR, LDL_VERSION_PATCH);
    CHECK_STR(LDL_VERSION, v);
    CHECK_STR(LDL_VERSION, "0.3.0");
}

static void t_getters_plain_reads(void) {
    ldl_lock l; ldl_lock_desc d; fake_container fc; script_store s; fake_clock c = {0};
    const ldl_lock *cl = &l;
    script_init(&s);
    desc_for(&d, &fc, &s, &c, "g", 300);
    ldl_lock_init(&l, &d);
    s.acquire_token = 77;
    ldl_lock_acquire(&l);
    CHECK_EQ(ldl_lock_state(cl), LDL_HELD);
    CHECK_EQ(ldl_lock_held(cl), 1);
    CHECK_EQ(ldl_lock_fencing_token(cl), 77);
    CHECK_EQ(ldl_lock_reason(cl), LDL_REASON_NONE);
}

/* every code has its own text (SPEC: "static text for every code above")
   M: ldl_strerror without the LDL_EINPROGRESS case. */
static void t_strerror_einprogress(void) {
    const char *u = ldl_strerror(-9999);
    CHECK(ldl_strerror(LDL_EINPROGRESS) != NULL);
    CHECK(strcmp(ldl_strerror(LDL_EINPROGRESS), u) != 0);
    CHECK(strcmp(ldl_strerror(LDL_EINPROGRESS), ldl_strerror(LDL_ESTORE)) != 0);
}

void suite_misc(void) {
    RUN(t_names);
    RUN(t_strerror);
    RUN(t_version);
    RUN(t_getters_plain_reads);
    RUN(t_strerror_einprogress);
}
