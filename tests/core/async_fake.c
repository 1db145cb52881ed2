/* async_fake.c - the deferred non-blocking store and the fixture (see
   async_fake.h). */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
snap snap_of(const astore *s) {
    snap x;
    x.state = ldl_lock_state(s->lock); x.answer = ldl_lock_answer(s->lock);
    x.reason = ldl_lock_reason(s->lock); x.token = ldl_lock_fencing_token(s->lock);
    x.lost = lost_calls; x.subs = s->submits[1] + s->submits[2] + s->submits[3];
    x.cancels = s->cancels; x.evlen = strlen(ev_log());
    return x;
}
int snap_same(snap a, snap b) {
    return a.state == b.state && a.answer == b.answer && a.reason == b.reason && a.token == b.token &&
           a.lost == b.lost && a.subs == b.subs && a.cancels == b.cancels && a.evlen == b.evlen;
}

void as_violate(astore *s, const char *what) {
    s->violations++;
    if (!s->violation[0]) snprintf(s->violation, sizeof s->violation, "%s", what);
    ev(what);
}

int as_tk(astore *s, int64_t tok) {
    int i;
    for (i = 0; i < s->ntk; i++) if (s->tk[i].tok == tok) return i;
    if (s->ntk == AS_MAXQ) return AS_MAXQ - 1;
    s->tk[s->ntk].tok = tok; s->tk[s->ntk].granted = 0; s->tk[s->ntk].released = 0; s->tk[s->ntk].refused = 0;
    return s->ntk++;
}
void as_released(astore *s, int64_t tok) { s->tk[as_tk(s, tok)].released++; }
void as_granted(astore *s, int rc, int64_t tok) { if (rc == 1 && tok >= 1) s->tk[as_tk(s, tok)].granted++; }

/* releases of `tok`: the lock's release submits plus the store's own hand-backs */
int rel_count(const astore *s, int64_t tok) {
    int i;
    for (i = 0; i < s->ntk; i++) if (s->tk[i].tok == tok) return s->tk[i].released;
    return 0;
}
/* every granted token released exactly once; no token released twice (a
   token whose release submit was refused with a negative answer may stay
   unreleased: that release was a store error, the lease runs out) */
int audit_ok(const astore *s) {
    int i;
    for (i = 0; i < s->ntk; i++) {
        if (s->tk[i].released > 1) return 0;
        if (s->tk[i].granted && s->tk[i].released != 1 && !(s->tk[i].refused && !s->tk[i].released)) return 0;
    }
    return 1;
}

int as_live(const astore *s) {
    int i, n = 0;
    for (i = 0; i < s->n; i++) n += s->q[i].st == RQ_LIVE;
    return n;
}
int as_live_kind(const astore *s, int kind) {
    int i, n = 0;
    for (i = 0; i < s->n; i++) n += s->q[i].st == RQ_LIVE && s->q[i].kind == kind;
    return n;
}
int as_last(const astore *s) { return s->n - 1; }
/* the index of the nth (0-based) request of `kind`, or -1 */
int as_nth(const astore *s, int kind, int nth) {
    int i;
    for (i = 0; i < s->n; i++) if (s->q[i].kind == kind && nth-- == 0) return i;
    return -1;
}

const char *kind_name(int k) {
    return k == LDL_OP_ACQUIRE ? "acq" : k == LDL_OP_RENEW ? "renew" : k == LDL_OP_RELEASE ? "rel" : "?";
}

/* the store's pump delivers request i's answer */
void defer_answer(astore *s, int i, int rc, int64_t tok) {
    as_req *r = &s->q[i];
    if (i < 0 || i >= s->n) { as_violate(s, "bad-index"); return; }
    if (r->st == RQ_LIVE) {
        snap before;
        if (r->op->store_data != r->tag) as_violate(s, "store_data-touched");
        r->st = RQ_DONE;
        if (r->kind == LDL_OP_ACQUIRE) as_granted(s, rc, tok);
        if (s->lock) before = snap_of(s);
        else memset(&before, 0, sizeof before);
        ldl_op_complete(r->op, rc, r->kind == LDL_OP_ACQUIRE ? tok : 0);
        if (s->lock) {
            if (!snap_same(before, snap_of(s))) as_violate(s, "complete-ran-lock-logic");
            if (ldl_lock_pending(s->lock) != 1) as_violate(s, "complete-not-pending");
        }
    } else if (r->st == RQ_DETACHED) {
        /* cancelled: the store owns the outcome and never touches the op */
        r->st = RQ_DONE;
        if (r->kind == LDL_OP_ACQUIRE) {
            as_granted(s, rc, tok);
            if (tok >= 1) {
                char b[48];
                snprintf(b, sizeof b, "shb:%lld", (long long)tok);
                ev(b);
                as_released(s, tok);
            }
        }
    } else {
        as_violate(s, "answer-twice");
    }
}

void as_enter(astore *s) { if (s->depth++) s->nested++; }
void as_leave(astore *s) { s->depth--; }

int as_submit(astore *s, int kind, ldl_op *op, const char *key, int64_t tok, uint32_t ttl) {
    int i, rc;
    as_req *r;
    char b[64];
    as_enter(s);
    s->submits[kind]++;
    if (kind == LDL_OP_ACQUIRE) snprintf(b, sizeof b, "acq");
    else snprintf(b, sizeof b, "%s:%lld", kind_name(kind), (long long)tok);
    ev(b);
    if (s->clock) s->clock->now += s->submit_ms;
    for (i = 0; i < s->n; i++)
        if (s->q[i].st == RQ_LIVE && s->q[i].op == op) as_violate(s, "second-request-in-flight");
    if (s->refuse_rc[kind] < 0) {            /* refused: nothing queued */
        rc = s->refuse_rc[kind];
        ev("refused");
        if (kind == LDL_OP_RELEASE) s->tk[as_tk(s, tok)].refused++;
        as_leave(s);
        return rc;
    }
    if (s->n == AS_MAXQ) { as_violate(s, "queue-full"); as_leave(s); return -1; }
    r = &s->q[s->n];
    r->kind = kind; r->st = RQ_LIVE; r->token = tok; r->ttl = ttl; r->op = op;
    r->tag = AS_TAG + (uintptr_t)s->n;
    snprintf(r->key, sizeof r->key, "%s", key);
    op->store_data = r->tag;
    s->n++;
    if (kind == LDL_OP_RELEASE) as_released(s, tok);   /* it goes out, cancel or not */
    if (s->refuse_rc[kind] > 0) {             /* malformed: queued, then a bad answer */
        rc = s->refuse_rc[kind];
        as_leave(s);
        return rc;
    }
    if (s->hook_after_answer && s->inline_on[kind]) defer_answer(s, s->n - 1, s->inline_rc[kind], s->inline_tok[kind]);
    if (s->on_submit && (!s->hook_kind || s->hook_kind == kind)) {
        as_hook h = s->on_submit;
        s->on_submit = NULL;
        h(s);
    }
    if (!s->hook_after_answer && s->inline_on[kind] && s->q[r - s->q].st == RQ_LIVE)
        defer_answer(s, (int)(r - s->q), s->inline_rc[kind], s->inline_tok[kind]);
    if (s->inline_on[kind] && kind == LDL_OP_ACQUIRE && s->inline_tok[kind] > 0) s->inline_tok[kind]++;
    as_leave(s);
    return LDL_OK;
}

astore *as_nullctx;   /* the store a NULL-ctx view uses */
astore *as_ctx(void *ctx) { return ctx ? (astore *)ctx : as_nullctx; }

int as_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl) {
    return as_submit(as_ctx(ctx), LDL_OP_ACQUIRE, op, key, 0, ttl);
}
int as_renew(void *ctx, ldl_op *op, const char *key, int64_t tok, uint32_t ttl) {
    return as_submit(as_ctx(ctx), LDL_OP_RENEW, op, key, tok, ttl);
}
int as_release(void *ctx, ldl_op *op, const char *key, int64_t tok) {
    return as_submit(as_ctx(ctx), LDL_OP_RELEASE, op, key, tok, 0);
}
void as_cancel(void *ctx, ldl_op *op) {
    astore *s = as_ctx(ctx);
    int i, found = -1, kind = -1;
    char b[32];
    as_enter(s);
    s->cancels++;
    for (i = 0; i < s->n; i++) if (s->q[i].st == RQ_LIVE && s->q[i].op == op) found = i;
    if (found >= 0) {
        as_req *r = &s->q[found];
        /* the store finds its request through its own word */
        if (op->store_data != r->tag) as_violate(s, "store_data-touched");
        r->st = RQ_DETACHED;
        kind = r->kind;
        s->cancels_live++;
    }
    snprintf(b, sizeof b, "cancel:%s", found >= 0 ? kind_name(kind) : "none");
    ev(b);
    if (s->on_cancel && (!s->cancel_hook_kind || s->cancel_hook_kind == kind)) {
        as_hook h = s->on_cancel;
        s->on_cancel = NULL;
        h(s);
    }
    as_leave(s);
}

void as_init(astore *s) { memset(s, 0, sizeof *s); }
ldl_async_store as_of(astore *s) {
    ldl_async_store a;
    a.acquire = as_acquire; a.renew = as_renew; a.release = as_release; a.cancel = as_cancel; a.ctx = s;
    return a;
}

void afix_prepare(afix *f, uint64_t now) {
    memset(f, 0, sizeof *f);
    ev_reset();                             /* loops make several fixtures per test */
    lost_calls = 0;
    lost_last_reason = -1;
    as_init(&f->s);
    desc_for(&f->d, &f->fc, NULL, &f->c, "ak", TTL);
    f->d.user = &f->l;
    f->c.now = now;
    f->s.clock = &f->c;
    f->as = as_of(&f->s);
    f->d.async_store = &f->as;
}
void afix_init(afix *f) {
    CHECK_EQ(ldl_lock_init(&f->l, &f->d), LDL_OK);
    f->s.lock = &f->l;
}
void afix_setup(afix *f, uint64_t now) { afix_prepare(f, now); afix_init(f); }

/* the end of every test: dispose, then the store holds nothing, the fake saw
   no contract breach, and (when `audit`) every granted token was released
   exactly once, lock and store together */
void afix_end(afix *f, int audit) {
    ldl_lock_dispose(&f->l);
    CHECK_EQ(as_live(&f->s), 0);
    CHECK_EQ(ldl_lock_pending(&f->l), 0);
    CHECK_EQ(f->s.nested, 0);
    CHECK_EQ(f->s.violations, 0);
    if (f->s.violations) printf("    fake: %s\n", f->s.violation);
    if (audit) CHECK(audit_ok(&f->s));
}

/* HELD with `tok`: acquire at the clock's now, answered, applied by poll */
int held(afix *f, int64_t tok) {
    int i;
    CHECK_EQ(ldl_lock_acquire(&f->l), LDL_EINPROGRESS);
    i = as_last(&f->s);
    defer_answer(&f->s, i, 1, tok);
    CHECK_EQ(ldl_lock_poll(&f->l), 1);
    CHECK_EQ(ldl_lock_state(&f->l), LDL_HELD);
    CHECK_EQ(ldl_lock_fencing_token(&f->l), tok);
    return i;
}

/* HELD then RELEASED by a user release the store answered 1 */
void held_then_released(afix *f, int64_t tok) {
    (void)held(f, tok);
    CHECK_EQ(ldl_lock_release(&f->l), LDL_EINPROGRESS);
    defer_answer(&f->s, as_last(&f->s), 1, 0);
    CHECK_EQ(ldl_lock_release(&f->l), 1);
    CHECK_EQ(ldl_lock_state(&f->l), LDL_RELEASED);
}
/* re-entry hooks a submit or cancel can run (async_reentry.c, async_walk.c) */
void hk_release(astore *s) { s->re[0] = ldl_lock_release(s->lock); s->re_state = ldl_lock_state(s->lock); }
void hk_dispose(astore *s) {
    ldl_lock_dispose(s->lock);
    s->re_state = ldl_lock_state(s->lock);
    s->re[1] = ldl_lock_tick(s->lock);                   /* during a dispose: 0 */
    s->re[2] = ldl_lock_poll(s->lock);
    s->re[3] = ldl_lock_release(s->lock);
    s->re[4] = ldl_lock_acquire(s->lock);
    s->re[5] = ldl_lock_run(s->lock, nop_body, NULL, NULL);
}
void hk_calls(astore *s) {                        /* the non-reentrant calls */
    s->re_state = ldl_lock_state(s->lock);
    s->re[0] = ldl_lock_acquire(s->lock);
    s->re[1] = ldl_lock_tick(s->lock);
    s->re[2] = ldl_lock_poll(s->lock);
    s->re[3] = ldl_lock_run(s->lock, nop_body, NULL, NULL);
    s->re[4] = ldl_lock_run(s->lock, NULL, NULL, NULL);
    s->re_valid = ldl_lock_valid_ms(s->lock);
    s->re[5] = ldl_lock_state(s->lock);                  /* valid_ms applied nothing */
    s->re[6] = ldl_lock_pending(s->lock);
}

#endif /* LDL_NO_ASYNC */
