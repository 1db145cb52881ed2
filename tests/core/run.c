/* run.c - RAII: acquire -> scope -> bind fence + holder -> body -> shutdown
   BEFORE release. Every exit code, both legs always run, nothing masked. */
#include "harness.h"

static void fix_init(fix *f) {
    fix_setup(f, "run", 0, 5000);
    f->s.acquire_token = 42;
}

typedef struct body_ctx {
    int rc;                 /* what the body returns */
    int ran;
    int64_t fence;          /* read from the scope */
    const int64_t *fence_ptr;
    ldl_lock *holder;
    int held_inside;
    int action;             /* 1 release, 2 dispose, 3 advance clock past deadline, 4 renew fails via tick */
    fix *f;
} body_ctx;

static int body(void *scope, void *user) {
    body_ctx *b = (body_ctx *)user;
    b->ran++;
    ev("body");
    b->fence_ptr = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
    b->fence = b->fence_ptr ? *b->fence_ptr : -1;
    b->holder = (ldl_lock *)ldl_scope_get((ldl_scope *)scope, "lock:holder");
    b->held_inside = ldl_lock_held(&b->f->l);
    switch (b->action) {
    case 1: ldl_lock_release(&b->f->l); break;
    case 2: ldl_lock_dispose(&b->f->l); break;
    case 3: b->f->c.now += 1000; break;
    case 4: b->f->s.renew_rc = 0; ldl_lock_tick(&b->f->l); break;
    default: break;
    }
    return b->rc;
}

static void t_ok_order_and_fence(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f;
    ev_reset();
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_OK);
    CHECK_STR(ev_log(), "acquire;scope;value;value;body;shutdown;release;");
    CHECK_EQ(b.ran, 1);
    CHECK_EQ(b.fence, 42);
    CHECK(b.holder == &f.l);
    CHECK_EQ(b.held_inside, 1);
    CHECK_EQ(r.body_rc, 0);
    CHECK_EQ(r.shutdown_rc, 0);
    CHECK_EQ(r.release_rc, 1);
    CHECK_EQ(r.lost_reason, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_RELEASED);
    CHECK_EQ(f.s.released[0], 42);
    CHECK_EQ(ldl_scope_live_children(&f.fc.root), 0);   /* back to baseline */
    /* a second run gets a higher fence */
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, NULL), LDL_OK);
    CHECK_EQ(b.fence, 43);
}

static int names_body(void *scope, void *user) {
    int *ok = (int *)user;
    const int64_t *fp = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "fence");
    ldl_lock *hp = (ldl_lock *)ldl_scope_get((ldl_scope *)scope, "me");
    *ok = fp && *fp >= 1 && hp && ldl_lock_fencing_token(hp) == *fp;
    return 0;
}

static void t_custom_names_bound(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; int ok = 0;
    fix_init(&f);
    f.d.token_name = "fence"; f.d.holder_name = "me";
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_run(&f.l, names_body, &ok, NULL), LDL_OK);
    CHECK_EQ(ok, 1);
}

static void t_null_body(void) {
    fix f; ldl_run_result r;
    fix_init(&f);
    r.body_rc = 99;
    CHECK_EQ(ldl_lock_run(&f.l, NULL, NULL, &r), RUN_RC(LDL_EINVAL));
    CHECK_EQ(f.s.acquire_calls, 0);
    CHECK_EQ(r.body_rc, 0);
    CHECK_EQ(ldl_lock_run(NULL, body, NULL, NULL), LDL_ESTATE);
}

static void t_not_acquired(void) {
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f;
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), RUN_RC(LDL_ENOTACQUIRED));   /* async: does nothing */
    CHECK_EQ(b.ran, 0);
    CHECK_EQ(f.fc.scope_calls, 0);
    CHECK_EQ(f.s.release_calls, 0);
    CHECK_EQ(r.body_rc, 0);
    /* a malformed grant too */
    f.s.acquire_rc = 1; f.s.acquire_token = 0;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), RUN_RC(LDL_ENOTACQUIRED));
    CHECK_EQ(b.ran, 0);
    CHECK_EQ(f.s.acquire_calls, t_async ? 0 : 2);   /* run with a non-blocking store applies nothing, calls nothing */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
}

static void t_scope_null(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f;
    f.fc.fail_scope = 1;
    ev_reset();
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EFENCE);
    CHECK_STR(ev_log(), "acquire;scope;release;");
    CHECK_EQ(b.ran, 0);
    CHECK_EQ(r.release_rc, 1);
    CHECK_EQ(r.shutdown_rc, 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
}

static void t_bind_fails(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    int at;
    for (at = 1; at <= 2; at++) {           /* the fence bind, then the holder bind */
        fix f; body_ctx b; ldl_run_result r;
        fix_init(&f);
        memset(&b, 0, sizeof b); b.f = &f;
        f.fc.fail_value_at = at;
        ev_reset();
        CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EFENCE);
        CHECK_STR(ev_log(), at == 1 ? "acquire;scope;value;shutdown;release;"
                                    : "acquire;scope;value;value;shutdown;release;");
        CHECK_EQ(b.ran, 0);
        CHECK_EQ(r.release_rc, 1);
        CHECK_EQ(ldl_scope_live_children(&f.fc.root), 0);
        CHECK_EQ(ldl_lock_state(&f.l), LDL_RELEASED);
    }
}

static void t_body_fails(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.rc = 7;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EBODY);
    CHECK_EQ(r.body_rc, 7);
    CHECK_EQ(r.shutdown_rc, 0);
    CHECK_EQ(r.release_rc, 1);
    CHECK_EQ(f.fc.shutdown_calls, 1);
    CHECK_EQ(f.s.release_calls, 1);
    /* the store said no to the release: still clean (not an error) */
    f.s.release_rc = 0;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EBODY);
    CHECK_EQ(r.release_rc, 0);
}

static void t_cleanup_fails(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f;
    f.fc.shutdown_rc = -5;
    ev_reset();
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ECLEANUP);
    CHECK_STR(ev_log(), "acquire;scope;value;value;body;shutdown;release;");  /* release still ran */
    CHECK_EQ(r.shutdown_rc, -5);
    CHECK_EQ(r.release_rc, 1);
    f.fc.shutdown_rc = 0;
    f.s.release_rc = -1;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ECLEANUP);
    CHECK_EQ(r.release_rc, LDL_ESTORE);
    CHECK_EQ(r.shutdown_rc, 0);
    f.s.release_rc = 2;                    /* malformed */
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ECLEANUP);
    CHECK_EQ(r.release_rc, LDL_ESTORE);
}

static void t_aggregate(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.rc = -3;
    f.fc.shutdown_rc = 9;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EAGGREGATE);
    CHECK_EQ(r.body_rc, -3);
    CHECK_EQ(r.shutdown_rc, 9);
    CHECK_EQ(r.release_rc, 1);
    f.fc.shutdown_rc = 0;
    f.s.release_rc = -7;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EAGGREGATE);
    CHECK_EQ(r.release_rc, LDL_ESTORE);
    CHECK_EQ(r.body_rc, -3);
}

static void t_lost_during_body_deadline(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.action = 3;  /* the body stalls past the deadline */
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ELOST);
    CHECK_EQ(r.lost_reason, LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(f.s.renew_calls, 0);
    CHECK_EQ(f.s.release_calls, 1);                  /* the lost lease is still released */
    CHECK_EQ(r.release_rc, 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    /* the fence value stayed what it was when bound */
    CHECK_EQ(b.fence, 42);
}

static void t_lost_during_body_renew(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.action = 4;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ELOST);
    CHECK_EQ(r.lost_reason, LDL_REASON_HEARTBEAT_FAILED);
    /* body failed too: EBODY wins over lost, lost still reported */
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.action = 4; b.rc = 1;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_EBODY);
    CHECK_EQ(r.lost_reason, LDL_REASON_HEARTBEAT_FAILED);
}

static void t_body_releases_or_disposes(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; body_ctx b; ldl_run_result r;
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.action = 1;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_OK);
    CHECK_EQ(r.release_rc, 0);                       /* nothing left to release */
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(r.lost_reason, 0);
    fix_init(&f);
    memset(&b, 0, sizeof b); b.f = &f; b.action = 2;
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_OK);
    CHECK_EQ(r.release_rc, 0);
    CHECK_EQ(r.shutdown_rc, 0);
    CHECK_EQ(f.fc.shutdown_calls, 1);
    CHECK_EQ(f.s.release_calls, 1);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_run(&f.l, body, &b, &r), LDL_ESTATE);
}

static int64_t seen_fence_at_shutdown;
static const int64_t *bound_fence;
static void read_fence_at_teardown(void *arg) { (void)arg; seen_fence_at_shutdown = bound_fence ? *bound_fence : -1; }

static int teardown_body(void *scope, void *user) {
    (void)user;
    bound_fence = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
    ldl_scope_value((ldl_scope *)scope, "resource", NULL);
    ldl_scope_on_teardown((ldl_scope *)scope, "resource", read_fence_at_teardown, NULL);
    return 0;
}

static void t_fence_alive_during_child_shutdown(void) {
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix f; fix_init(&f);
    seen_fence_at_shutdown = 0;
    CHECK_EQ(ldl_lock_run(&f.l, teardown_body, NULL, NULL), LDL_OK);
    CHECK_EQ(seen_fence_at_shutdown, 42);     /* scoped resources die while the fence is valid */
}

void suite_run(void) {
    RUN(t_ok_order_and_fence);
    RUN(t_custom_names_bound);
    RUN(t_null_body);
    RUN(t_not_acquired);
    RUN(t_scope_null);
    RUN(t_bind_fails);
    RUN(t_body_fails);
    RUN(t_cleanup_fails);
    RUN(t_aggregate);
    RUN(t_lost_during_body_deadline);
    RUN(t_lost_during_body_renew);
    RUN(t_body_releases_or_disposes);
    RUN(t_fence_alive_during_child_shutdown);
}
