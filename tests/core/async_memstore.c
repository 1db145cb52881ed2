/* async_memstore.c - ldl_memstore_async_store: answers inside every submit, parity with the synchronous MemoryStore
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
static void t_memstore_async_answers_inside(void) {
    ldl_memstore ms; ldl_memstore_slot slots[4]; fake_clock c; fake_container fc;
    ldl_lock a, b; ldl_lock_desc d; ldl_async_store as;
    c.now = T0;
    CHECK_EQ(ldl_memstore_init(&ms, slots, 4, fake_clock_of(&c)), LDL_OK);
    as = ldl_memstore_async_store(&ms);
    desc_for(&d, &fc, NULL, &c, "mk", TTL);
    d.async_store = &as;
    CHECK_EQ(ldl_lock_init(&a, &d), LDL_OK);
    CHECK_EQ(ldl_lock_init(&b, &d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_pending(&a), 0);
    CHECK_EQ(ldl_lock_answer(&a), 1);
    CHECK_EQ(ldl_lock_fencing_token(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&b), 0);                   /* contended */
    CHECK_EQ(ldl_lock_state(&b), LDL_IDLE);
    c.now = T0 + HB;
    CHECK_EQ(ldl_lock_poll(&a), 1);                      /* renewed inside the call */
    CHECK_EQ(ldl_lock_pending(&a), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&a), HB);
    CHECK_EQ(ldl_lock_tick(&a), 1);
    CHECK_EQ(ldl_lock_release(&a), 1);
    CHECK_EQ(ldl_lock_answer(&a), 1);
    CHECK_EQ(ldl_lock_pending(&a), 0);
    CHECK_EQ(ldl_memstore_live(&ms), 0);
    CHECK_EQ(ldl_lock_acquire(&b), 1);
    CHECK_EQ(ldl_lock_fencing_token(&b), 2);
    CHECK_EQ(ldl_lock_run(&b, nop_body, NULL, NULL), LDL_EUNSUPPORTED);
    ldl_lock_dispose(&b);                                /* fire-and-forget, answered inside */
    CHECK_EQ(ldl_memstore_live(&ms), 0);
    ldl_lock_dispose(&a);
}

/* the same script through ldl_memstore_store and ldl_memstore_async_store:
   every answer, state, token, reason and ldl_lock_answer equal */
enum { PS_ACQ, PS_REL, PS_TICK, PS_POLL, PS_VALID, PS_DISPOSE };
typedef struct pstep { int who, op; uint32_t dt; } pstep;
static const pstep parity_script[] = {
    {0, PS_ACQ, 0}, {1, PS_ACQ, 0}, {0, PS_POLL, 50}, {0, PS_POLL, 50}, {0, PS_TICK, 10},
    {1, PS_POLL, 0}, {0, PS_VALID, 100}, {0, PS_REL, 0}, {1, PS_ACQ, 0}, {0, PS_ACQ, 0},
    {1, PS_POLL, 400}, {0, PS_ACQ, 0}, {1, PS_TICK, 0}, {1, PS_REL, 0}, {0, PS_POLL, 100},
    {0, PS_POLL, 100}, {1, PS_ACQ, 0}, {0, PS_DISPOSE, 0}, {1, PS_POLL, 0}, {1, PS_REL, 0},
    {1, PS_ACQ, 0}, {1, PS_VALID, 296}, {1, PS_REL, 0}, {1, PS_DISPOSE, 0}
};
#define PS_N (sizeof parity_script / sizeof parity_script[0])
static void parity_run(int async, long long out[][7]) {
    ldl_memstore ms; ldl_memstore_slot slots[4]; fake_clock c; fake_container fc;
    ldl_lock l[2]; ldl_lock_desc d; ldl_async_store as; ldl_store ss;
    size_t i;
    c.now = T0;
    CHECK_EQ(ldl_memstore_init(&ms, slots, 4, fake_clock_of(&c)), LDL_OK);
    as = ldl_memstore_async_store(&ms);
    ss = ldl_memstore_store(&ms);
    desc_for(&d, &fc, NULL, &c, "pk", TTL);
    if (async) d.async_store = &as; else d.store = &ss;
    CHECK_EQ(ldl_lock_init(&l[0], &d), LDL_OK);
    CHECK_EQ(ldl_lock_init(&l[1], &d), LDL_OK);
    for (i = 0; i < PS_N; i++) {
        ldl_lock *k = &l[parity_script[i].who];
        long long rc = 0;
        c.now += parity_script[i].dt;
        switch (parity_script[i].op) {
        case PS_ACQ: rc = ldl_lock_acquire(k); break;
        case PS_REL: rc = ldl_lock_release(k); break;
        case PS_TICK: rc = ldl_lock_tick(k); break;
        case PS_POLL: rc = ldl_lock_poll(k); break;
        case PS_VALID: rc = ldl_lock_valid_ms(k); break;
        default: ldl_lock_dispose(k); break;
        }
        out[i][0] = rc; out[i][1] = ldl_lock_state(k); out[i][2] = ldl_lock_fencing_token(k);
        out[i][3] = ldl_lock_reason(k); out[i][4] = ldl_lock_answer(k); out[i][5] = ldl_lock_pending(k);
        out[i][6] = (long long)ldl_memstore_live(&ms);
    }
}
static void t_memstore_async_parity(void) {
    long long a[PS_N][7], s[PS_N][7];
    size_t i, j;
    int held_seen = 0, lost_seen = 0;
    lost_calls = 0;
    parity_run(0, s);
    CHECK(lost_calls > 0);                               /* the script does lose a lease */
    lost_calls = 0;
    parity_run(1, a);
    for (i = 0; i < PS_N; i++) {
        for (j = 0; j < 7; j++) {
            if (a[i][j] != s[i][j]) {
                char m[96];
                snprintf(m, sizeof m, "step %u field %u: async %lld sync %lld", (unsigned)i, (unsigned)j, a[i][j], s[i][j]);
                CHECK_STR(m, "");
            }
        }
        held_seen += s[i][1] == LDL_HELD;
        lost_seen += s[i][1] == LDL_LOST;
        CHECK_EQ(a[i][5], 0);                            /* never pending */
    }
    CHECK(held_seen > 3);
    CHECK(lost_seen > 0);
}

void suite_async_memstore(void) {
    RUN(t_memstore_async_answers_inside);
    RUN(t_memstore_async_parity);
}
#endif /* LDL_NO_ASYNC */
