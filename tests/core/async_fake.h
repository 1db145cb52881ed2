/* async_fake.h - the deferred non-blocking store and the fixture every
   tests/core/async_*.c file uses (defined in async_fake.c).
   and its Precisions), written from the SPEC.

   The fake: a deferred async store. Each submit queues a request (kind, key
   copy, token, ttl, the op pointer) and returns; the test answers request i
   whenever it wants with defer_answer(&s, i, rc, token), in any order. It can
   refuse a submit (negative, or a malformed positive after queueing), answer
   inside the submit, move the clock inside the submit, and re-enter the lock
   from inside a submit or a cancel. It keeps the store's side of the
   contract itself: after cancel it never touches the op again, and a
   cancelled ACQUIRE whose later answer carries a token in [1, INT64_MAX]
   (whatever its code) is released by the store ("shb:T" in the log).
   It checks the lock's side: one request in flight per op, store_data never
   touched while in flight, ldl_op_complete runs no lock logic, no store call
   nested inside another, and after dispose no request holds the op.

   Every release (the lock's submits and the store's own hand-backs) is
   counted per token, so a test can say "each granted token released exactly
   once, lock and store together" (audit_ok).

   Numbers: ttl 300, heartbeat 100, drift 5 -> window 295; T0 = 1000. */
#ifndef LDL_TEST_ASYNC_FAKE_H
#define LDL_TEST_ASYNC_FAKE_H
#include "harness.h"
#include <stdint.h>
#include <stdlib.h>

#define T0 1000u
#define TTL 300u
#define HB 100u
#define WIN 295u

#ifndef LDL_NO_ASYNC
#define T0 1000u
#define TTL 300u
#define HB 100u
#define WIN 295u

/* ------------------------------------------------------------ the deferred fake */
enum { RQ_LIVE = 1, RQ_DONE = 2, RQ_DETACHED = 3 };
#define AS_MAXQ 96
#define AS_TAG ((uintptr_t)0x5A000000u)

typedef struct as_req {
    int kind, st;
    int64_t token;           /* renew/release: the token sent */
    uint32_t ttl;
    ldl_op *op;
    uintptr_t tag;           /* what submit wrote into op->store_data */
    char key[LDL_KEY_MAX];
} as_req;

typedef struct astore astore;
typedef void (*as_hook)(astore *s);
struct astore {
    as_req q[AS_MAXQ];
    int n;
    int submits[4];          /* per ldl_op_kind (accepted or not) */
    int cancels;             /* every cancel call */
    int cancels_live;        /* cancels that detached a live request */
    int refuse_rc[4];        /* per kind: non-zero = submit answers this */
    int inline_on[4];        /* per kind: answer inside the submit */
    int inline_rc[4];
    int64_t inline_tok[4];
    as_hook on_submit;       /* run inside a submit (once, then cleared) */
    int hook_kind;           /* 0 = any kind */
    int hook_after_answer;   /* 1: the inline answer comes before the hook */
    as_hook on_cancel;       /* run inside a cancel (once, then cleared) */
    int cancel_hook_kind;    /* 0 = any; else only when cancelling this kind (-1: no live request) */
    ldl_lock *lock;
    fake_clock *clock;
    uint32_t submit_ms;      /* the clock moves this much inside each submit */
    int depth, nested;       /* store methods on the stack; calls made while one was */
    int violations;
    char violation[160];
    struct { int64_t tok; int granted, released, refused; } tk[AS_MAXQ];
    int ntk;
    int re[8];               /* what re-entrant calls answered */
    int re_state;
    uint32_t re_valid;
};

/* the lock's visible state, to prove ldl_op_complete changed none of it */
typedef struct snap { int state, answer, reason, lost, subs, cancels; int64_t token; size_t evlen; } snap;

/* ------------------------------------------------------------ fixture */
typedef struct afix {
    ldl_lock l; ldl_lock_desc d; fake_container fc; fake_clock c; astore s; ldl_async_store as;
} afix;

/* the state names, for short checks */
#define ST(f) ldl_lock_state(&(f).l)

snap snap_of(const astore *s);
int snap_same(snap a, snap b);
void as_violate(astore *s, const char *what);
int as_tk(astore *s, int64_t tok);
void as_released(astore *s, int64_t tok);
void as_granted(astore *s, int rc, int64_t tok);
int rel_count(const astore *s, int64_t tok);
int audit_ok(const astore *s);
int as_live(const astore *s);
int as_live_kind(const astore *s, int kind);
int as_last(const astore *s);
int as_nth(const astore *s, int kind, int nth);
const char *kind_name(int k);
void defer_answer(astore *s, int i, int rc, int64_t tok);
void as_enter(astore *s);
void as_leave(astore *s);
int as_submit(astore *s, int kind, ldl_op *op, const char *key, int64_t tok, uint32_t ttl);
astore *as_ctx(void *ctx);
extern astore *as_nullctx;
int as_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl);
int as_renew(void *ctx, ldl_op *op, const char *key, int64_t tok, uint32_t ttl);
int as_release(void *ctx, ldl_op *op, const char *key, int64_t tok);
void as_cancel(void *ctx, ldl_op *op);
void as_init(astore *s);
ldl_async_store as_of(astore *s);
void afix_prepare(afix *f, uint64_t now);
void afix_init(afix *f);
void afix_setup(afix *f, uint64_t now);
void afix_end(afix *f, int audit);
int held(afix *f, int64_t tok);
void held_then_released(afix *f, int64_t tok);

void hk_release(astore *s);   /* s->re[0] = release */
void hk_dispose(astore *s);   /* dispose, then every call */
void hk_calls(astore *s);     /* the non-reentrant calls */

#endif /* LDL_NO_ASYNC */
#endif /* LDL_TEST_ASYNC_FAKE_H */
