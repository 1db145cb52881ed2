/* memstore.c - the in-process MemoryStore: contention, expiry steal with a
   higher token, stale renew/release refused, slot reuse, capacity full
   fails closed, clock injected, live count. */
#include "harness.h"

typedef struct ms_fix {
    ldl_memstore ms; ldl_memstore_slot slots[8]; fake_clock c; ldl_store st;
} ms_fix;

static void ms_init(ms_fix *f, size_t n) {
    memset(f, 0, sizeof *f);
    f->c.now = 100;
    CHECK_EQ(ldl_memstore_init(&f->ms, f->slots, n, fake_clock_of(&f->c)), LDL_OK);
    f->st = ldl_memstore_store(&f->ms);
}

static int acq(ms_fix *f, const char *k, uint32_t ttl, int64_t *tok) {
    *tok = 0;
    return f->st.acquire(f->st.ctx, k, ttl, tok);
}

static void t_init_args(void) {
    ldl_memstore ms; ldl_memstore_slot s[2]; ldl_clock bad;
    int dummy;
    CHECK_EQ(ldl_memstore_init(&ms, s, 0, fake_clock_of(NULL)), LDL_EINVAL);
    CHECK_EQ(ldl_memstore_init(&ms, NULL, 2, fake_clock_of(NULL)), LDL_EINVAL);
    CHECK_EQ(ldl_memstore_init(NULL, s, 2, fake_clock_of(NULL)), LDL_EINVAL);
    bad.now_ms = NULL; bad.ctx = &dummy;
    CHECK_EQ(ldl_memstore_init(&ms, s, 2, bad), LDL_EINVAL);
    bad.ctx = NULL;                                   /* zero clock = built-in */
    CHECK_EQ(ldl_memstore_init(&ms, s, 2, bad), LDL_OK);
    CHECK_EQ(ldl_memstore_live(&ms), 0);
}

static void t_contention_and_tokens(void) {
    ms_fix f; int64_t t1, t2, t3;
    ms_init(&f, 8);
    CHECK_EQ(acq(&f, "a", 100, &t1), 1);
    CHECK_EQ(t1, 1);
    CHECK_EQ(acq(&f, "a", 100, &t2), 0);              /* held */
    CHECK_EQ(t2, 0);
    CHECK_EQ(acq(&f, "b", 100, &t2), 1);              /* one counter for all keys */
    CHECK_EQ(t2, 2);
    CHECK_EQ(ldl_memstore_live(&f.ms), 2);
    CHECK_EQ(f.st.release(f.st.ctx, "a", t1), 1);
    CHECK_EQ(f.st.release(f.st.ctx, "a", t1), 0);     /* second release of the same token */
    CHECK_EQ(acq(&f, "a", 100, &t3), 1);              /* release then re-acquire: higher */
    CHECK_EQ(t3, 3);
    CHECK_EQ(ldl_memstore_live(&f.ms), 2);
}

static void t_expiry_steal_and_stale(void) {
    ms_fix f; int64_t t1, t2;
    ms_init(&f, 8);
    CHECK_EQ(acq(&f, "k", 100, &t1), 1);
    f.c.now += 99;
    CHECK_EQ(f.st.renew(f.st.ctx, "k", t1, 100), 1);   /* now expires at 299 */
    f.c.now += 99;
    CHECK_EQ(acq(&f, "k", 100, &t2), 0);
    CHECK_EQ(ldl_memstore_live(&f.ms), 1);
    f.c.now += 1;                                      /* 299: expired */
    CHECK_EQ(ldl_memstore_live(&f.ms), 0);
    CHECK_EQ(f.st.renew(f.st.ctx, "k", t1, 100), 0);   /* no renew after expiry */
    CHECK_EQ(acq(&f, "k", 100, &t2), 1);               /* steal */
    CHECK(t2 > t1);
    CHECK_EQ(f.st.renew(f.st.ctx, "k", t1, 100), 0);   /* stale renew refused */
    CHECK_EQ(f.st.release(f.st.ctx, "k", t1), 0);      /* stale release refused */
    CHECK_EQ(f.st.renew(f.st.ctx, "k", t2, 100), 1);
    CHECK_EQ(f.st.renew(f.st.ctx, "k", 0, 100), 0);
    CHECK_EQ(f.st.renew(f.st.ctx, "k", -1, 100), 0);
    CHECK_EQ(f.st.renew(f.st.ctx, "nope", t2, 100), 0);
    CHECK_EQ(f.st.release(f.st.ctx, "k", t2), 1);
}

static void t_release_after_expiry_not_retaken(void) {
    ms_fix f; int64_t t1;
    ms_init(&f, 8);
    CHECK_EQ(acq(&f, "k", 100, &t1), 1);
    f.c.now += 500;
    CHECK_EQ(f.st.release(f.st.ctx, "k", t1), 1);      /* still the holder's token */
    CHECK_EQ(f.st.release(f.st.ctx, "k", t1), 0);
}

static void t_capacity_fails_closed(void) {
    ms_fix f; int64_t t; char k[8]; int i;
    ms_init(&f, 4);
    for (i = 0; i < 4; i++) {
        snprintf(k, sizeof k, "k%d", i);
        CHECK_EQ(acq(&f, k, 100, &t), 1);
    }
    CHECK_EQ(acq(&f, "extra", 100, &t), LDL_ENOSPC);  /* exactly ENOSPC, no grant */
    CHECK_EQ(t, 0);
    CHECK_EQ(acq(&f, "k1", 100, &t), 0);               /* existing key: just held */
    CHECK_EQ(ldl_memstore_live(&f.ms), 4);
    /* one lease expires: its slot is free for any key */
    f.c.now += 50;
    CHECK_EQ(acq(&f, "k2", 1, &t), 0);
    CHECK_EQ(f.st.renew(f.st.ctx, "k0", 1, 10), 1);     /* k0 now ends at 160 */
    f.c.now += 10;
    CHECK_EQ(acq(&f, "extra", 100, &t), 1);
    CHECK_EQ(t, 5);
    CHECK_EQ(acq(&f, "more", 100, &t), LDL_ENOSPC);
    /* releasing frees a slot */
    CHECK_EQ(f.st.release(f.st.ctx, "k3", 4), 1);
    CHECK_EQ(acq(&f, "more", 100, &t), 1);
    CHECK_EQ(t, 6);
    /* every key still answers exactly right after the shuffling */
    CHECK_EQ(f.st.renew(f.st.ctx, "k1", 2, 100), 1);
    CHECK_EQ(f.st.renew(f.st.ctx, "k2", 3, 100), 1);
    CHECK_EQ(f.st.renew(f.st.ctx, "extra", 5, 100), 1);
    CHECK_EQ(f.st.renew(f.st.ctx, "more", 6, 100), 1);
    CHECK_EQ(f.st.renew(f.st.ctx, "k0", 1, 100), 0);    /* expired and its slot reused */
}

static void t_slot_reuse_many_cycles(void) {
    /* many keys through a small table: removal keeps every chain findable */
    ms_fix f; int64_t toks[6]; char k[16]; int round, i;
    ms_init(&f, 8);
    for (round = 0; round < 200; round++) {
        for (i = 0; i < 6; i++) {
            snprintf(k, sizeof k, "r%d-%d", round % 7, i);
            CHECK_EQ(acq(&f, k, 1000, &toks[i]), 1);
        }
        for (i = 0; i < 6; i++) {
            snprintf(k, sizeof k, "r%d-%d", round % 7, (i * 5) % 6);
            CHECK_EQ(f.st.renew(f.st.ctx, k, toks[(i * 5) % 6], 1000), 1);
        }
        for (i = 5; i >= 0; i--) {
            snprintf(k, sizeof k, "r%d-%d", round % 7, (i + round) % 6);
            CHECK_EQ(f.st.release(f.st.ctx, k, toks[(i + round) % 6]), 1);
        }
        CHECK_EQ(ldl_memstore_live(&f.ms), 0);
    }
}

static void t_bad_keys_and_args(void) {
    ms_fix f; int64_t t; char longkey[LDL_KEY_MAX + 1];
    memset(longkey, 'x', LDL_KEY_MAX); longkey[LDL_KEY_MAX] = 0;
    ms_init(&f, 4);
    CHECK_EQ(acq(&f, NULL, 100, &t), LDL_EINVAL);
    CHECK_EQ(acq(&f, "", 100, &t), LDL_EINVAL);
    CHECK_EQ(acq(&f, longkey, 100, &t), LDL_EINVAL);
    CHECK_EQ(acq(&f, "k", 0, &t), LDL_EINVAL);
    CHECK_EQ(f.st.acquire(f.st.ctx, "k", 100, NULL), LDL_EINVAL);
    CHECK_EQ(f.st.renew(f.st.ctx, NULL, 1, 100), LDL_EINVAL);
    CHECK_EQ(f.st.release(f.st.ctx, NULL, 1), LDL_EINVAL);
    CHECK_EQ(ldl_memstore_live(&f.ms), 0);           /* nothing changed */
    CHECK_EQ(acq(&f, "k", 100, &t), 1);
    CHECK_EQ(t, 1);                                   /* no token was burnt */
}

static void t_two_locks_contend(void) {
    ms_fix f; ldl_lock a, b; ldl_lock_desc d; fake_container fc;
    ms_init(&f, 8);
    desc_for(&d, &fc, NULL, &f.c, "shared", 300);
    desc_use_memstore(&d, &f.ms);
    CHECK_EQ(ldl_lock_init(&a, &d), LDL_OK);
    CHECK_EQ(ldl_lock_init(&b, &d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&b), 0);
    CHECK_EQ(ldl_lock_state(&b), LDL_IDLE);
    /* a stalls past its TTL; b steals with a higher token */
    f.c.now += 300;
    CHECK_EQ(ldl_lock_acquire(&b), 1);
    CHECK(ldl_lock_fencing_token(&b) > 1);
    /* a's stale heartbeat: the local deadline already says LOST, no renew */
    CHECK_EQ(ldl_lock_poll(&a), 0);
    CHECK_EQ(ldl_lock_reason(&a), LDL_REASON_LEASE_EXPIRED);
    /* a's release of its old token is refused by the store and hurts nobody */
    CHECK_EQ(ldl_lock_release(&a), 0);
    CHECK_EQ(ldl_lock_held(&b), 1);
    CHECK_EQ(ldl_lock_poll(&b), 1);
    f.c.now += 100;
    CHECK_EQ(ldl_lock_poll(&b), 1);                 /* renewed through the store */
    CHECK_EQ(ldl_memstore_live(&f.ms), 1);
    CHECK_EQ(ldl_lock_release(&b), 1);
    CHECK_EQ(ldl_memstore_live(&f.ms), 0);
}

static void t_renew_refused_when_stolen(void) {
    /* the store (not the lock) noticed the expiry: heartbeat failed */
    ms_fix f; ldl_lock a, b; ldl_lock_desc d; fake_container fc;
    ms_init(&f, 8);
    desc_for(&d, &fc, NULL, &f.c, "shared", 300);
    desc_use_memstore(&d, &f.ms);
    d.drift_ms = 1;
    ldl_lock_init(&a, &d);
    ldl_lock_init(&b, &d);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_release(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&a), 1);            /* token 2 */
    CHECK_EQ(f.st.release(f.st.ctx, "shared", 2), 1);   /* an operator frees it */
    CHECK_EQ(ldl_lock_acquire(&b), 1);
    CHECK_EQ(ldl_lock_tick(&a), 0);
    CHECK_EQ(ldl_lock_reason(&a), LDL_REASON_HEARTBEAT_FAILED);
}

/* index of key k's slot, or -1 (white-box: the slots are caller storage) */
static int slot_of(const ms_fix *f, const char *k) {
    size_t i;
    for (i = 0; i < f->ms._n; i++)
        if (f->slots[i]._token != 0 && strcmp(f->slots[i]._key, k) == 0) return (int)i;
    return -1;
}

static void t_expired_lease_stays_releasable(void) {
    /* SPEC: release answers 1 for the holder's token even just after expiry if
       nobody took the key. A new key whose home slot holds the expired lease
       must take an empty slot instead while one exists. */
    ms_fix f, scratch; int64_t ta, tb; char k[16]; int n, home_a;
    ms_init(&f, 8);
    CHECK_EQ(acq(&f, "a", 100, &ta), 1);
    home_a = slot_of(&f, "a");
    for (n = 0; n < 1000; n++) {                 /* a key with the same home slot */
        ms_init(&scratch, 8);
        snprintf(k, sizeof k, "k%d", n);
        CHECK_EQ(acq(&scratch, k, 100, &tb), 1);
        if (slot_of(&scratch, k) == home_a) break;
    }
    CHECK(n < 1000);
    f.c.now += 100;                              /* a expired, not retaken */
    CHECK_EQ(acq(&f, k, 100, &tb), 1);
    CHECK(slot_of(&f, k) != home_a);
    CHECK_EQ(f.st.release(f.st.ctx, "a", ta), 1);
    CHECK_EQ(f.st.release(f.st.ctx, k, tb), 1);
    CHECK_EQ(ldl_memstore_live(&f.ms), 0);
}

void suite_memstore(void) {
    RUN(t_expired_lease_stays_releasable);
    RUN(t_init_args);
    RUN(t_contention_and_tokens);
    RUN(t_expiry_steal_and_stale);
    RUN(t_release_after_expiry_not_retaken);
    RUN(t_capacity_fails_closed);
    RUN(t_slot_reuse_many_cycles);
    RUN(t_bad_keys_and_args);
    RUN(t_two_locks_contend);
    RUN(t_renew_refused_when_stolen);
}
