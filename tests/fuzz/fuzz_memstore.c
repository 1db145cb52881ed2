/* fuzz_memstore.c -- differential fuzzer: the header's MemoryStore (an
   open-addressing hash table with backward-shift deletion) against a naive
   model (one plain array entry per key, linear search), answer by answer
   (issue 4, gate 2).

   Input: byte 0 picks the capacity (1..8 slots) and the clock origin; then
   each byte picks acquire / renew / release / live / clock move, on one of
   ten keys (all colliding heavily at these capacities) or on an invalid key
   (empty, too long), with a TTL and a token chosen to hit the edges (the
   current token, an older one, 0, negative, another key's). Every answer of
   the store must equal the model's, and live() must equal the model's count
   of unexpired leases after every step.

   The model follows SPEC.md and the header's documented MemoryStore rules:
   - one token counter per store: every grant gets last + 1, for any key;
   - acquire grants iff the key is free or its lease expired (now >= expiry);
     LDL_ENOSPC only when every slot holds an unexpired lease of another key;
   - renew answers 1 only for the key's current token while unexpired;
   - release answers 1 for the key's current token and frees it; for a lease
     that expired and was not retaken SPEC.md allows either answer (its slot
     may have been reused by another key), so the model accepts 0 or 1 there
     and forgets the lease either way (an expired lease is free in both);
   - bad key (empty, >= LDL_KEY_MAX bytes) or ttl 0: LDL_EINVAL; token < 1: 0.
*/
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *fm_p;
static size_t fm_n, fm_i;
static uint8_t fm_u8(void) { return fm_i < fm_n ? fm_p[fm_i++] : 0; }

#define FM_KEYS 10
#define FM_MAXSLOTS 8

static uint64_t fm_clock;
static uint64_t fm_now(void *ctx) { (void)ctx; return fm_clock; }
static void fm_adv(uint64_t d) { fm_clock = fm_clock > UINT64_MAX - d ? UINT64_MAX : fm_clock + d; }

typedef struct { int used; int64_t tok; uint64_t exp; } fm_entry;
static struct {
    fm_entry e[FM_KEYS];
    int64_t last;
    size_t n;
    int64_t issued[64]; int nissued;     /* tokens seen, to replay stale ones */
} M;

static long fm_step;
static void fm_fail(const char *what, long got, long want) {
    fprintf(stderr, "fuzz_memstore: MISMATCH at step %ld: %s (store %ld, model %ld), clock=%llu slots=%zu\n",
            fm_step, what, got, want, (unsigned long long)fm_clock, M.n);
    abort();
}

static uint64_t fm_expiry(uint64_t now, uint32_t ttl) {
    return (now > UINT64_MAX - ttl) ? UINT64_MAX : now + ttl;
}

static size_t fm_live(void) {
    size_t i, c = 0;
    for (i = 0; i < FM_KEYS; i++) if (M.e[i].used && fm_clock < M.e[i].exp) c++;
    return c;
}

static int fm_acquire(int k, uint32_t ttl, int64_t *tok) {
    size_t i, others = 0;
    if (ttl == 0) return LDL_EINVAL;
    if (M.e[k].used && fm_clock < M.e[k].exp) return 0;
    for (i = 0; i < FM_KEYS; i++)
        if ((int)i != k && M.e[i].used && fm_clock < M.e[i].exp) others++;
    if (others >= M.n) return LDL_ENOSPC;
    M.e[k].used = 1;
    M.e[k].tok = ++M.last;
    M.e[k].exp = fm_expiry(fm_clock, ttl);
    *tok = M.e[k].tok;
    return 1;
}

static int fm_renew(int k, int64_t tok, uint32_t ttl) {
    if (ttl == 0) return LDL_EINVAL;
    if (tok < 1) return 0;
    if (!M.e[k].used || M.e[k].tok != tok || fm_clock >= M.e[k].exp) return 0;
    M.e[k].exp = fm_expiry(fm_clock, ttl);
    return 1;
}

/* returns the answer, or 2 for "0 or 1 allowed" */
static int fm_release(int k, int64_t tok) {
    int expired;
    if (tok < 1) return 0;
    if (!M.e[k].used || M.e[k].tok != tok) return 0;
    expired = fm_clock >= M.e[k].exp;
    M.e[k].used = 0;
    return expired ? 2 : 1;
}

static void fm_keyname(int k, char *buf) {   /* into a reused buffer: the store must copy */
    buf[0] = 'k'; buf[1] = (char)('0' + k); buf[2] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ldl_memstore ms;
    ldl_memstore_slot slots[FM_MAXSLOTS];
    ldl_store st;
    ldl_clock clk;
    char keybuf[LDL_KEY_MAX + 8];
    uint8_t c;
    long steps;

    fm_p = data; fm_n = size; fm_i = 0;
    memset(&M, 0, sizeof M);
    c = fm_u8();
    M.n = (size_t)(c & 7) + 1u;
    switch ((c >> 3) & 3) {
    case 0: fm_clock = 0; break;
    case 1: fm_clock = 5000; break;
    case 2: fm_clock = UINT64_MAX - 300u; break;    /* expiries saturate */
    default: fm_clock = (uint64_t)1 << 62; break;
    }
    clk.now_ms = fm_now; clk.ctx = NULL;
    if (ldl_memstore_init(&ms, slots, 0, clk) != LDL_EINVAL) fm_fail("init with 0 slots", 0, LDL_EINVAL);
    if (ldl_memstore_init(&ms, slots, M.n, clk) != LDL_OK) fm_fail("init", -1, 0);
    st = ldl_memstore_store(&ms);

    for (steps = 0; fm_i < fm_n && steps < 2000; steps++) {
        uint8_t op = fm_u8(), kb = fm_u8(), xb = fm_u8();
        int k = kb % FM_KEYS, bad = 0, got, want;
        uint32_t ttl;
        int64_t tok, mtok = 0, stok = 0;
        fm_step = steps;
        fm_keyname(k, keybuf);
        if ((kb >> 4) == 15) { bad = 1; keybuf[0] = 0; }                         /* empty key */
        if ((kb >> 4) == 14) { bad = 1; memset(keybuf, 'x', LDL_KEY_MAX); keybuf[LDL_KEY_MAX] = 0; }
        switch (xb & 7) {                                   /* ttl */
        case 0: ttl = 0; break;
        case 1: ttl = 1; break;
        case 2: ttl = UINT32_MAX; break;
        default: ttl = (uint32_t)(xb >> 3) * 7u + 1u; break;
        }
        switch ((xb >> 3) & 7) {                            /* token for renew/release */
        case 0: case 1: case 2: tok = M.e[k].tok; break;    /* the key's current (maybe freed) */
        case 3: tok = M.nissued ? M.issued[(xb >> 6) % M.nissued] : 1; break;   /* someone's */
        case 4: tok = 0; break;
        case 5: tok = -1; break;
        case 6: tok = M.e[(k + 1) % FM_KEYS].tok; break;
        default: tok = M.last + 1; break;                   /* never issued yet */
        }
        switch (op % 8) {
        case 0: case 1: case 2:
            got = st.acquire(st.ctx, keybuf, ttl, &stok);
            want = bad ? LDL_EINVAL : fm_acquire(k, ttl, &mtok);
            if (got != want) fm_fail("acquire answer", got, want);
            if (got == 1) {
                if (stok != mtok) fm_fail("acquire token", (long)stok, (long)mtok);
                if (M.nissued < 64) M.issued[M.nissued++] = stok;
            }
            break;
        case 3: case 4:
            got = st.renew(st.ctx, keybuf, tok, ttl);
            want = bad ? LDL_EINVAL : fm_renew(k, tok, ttl);
            if (got != want) fm_fail("renew answer", got, want);
            break;
        case 5:
            got = st.release(st.ctx, keybuf, tok);
            want = bad ? LDL_EINVAL : fm_release(k, tok);
            if (want == 2) { if (got != 0 && got != 1) fm_fail("release of an expired lease", got, 2); }
            else if (got != want) fm_fail("release answer", got, want);
            break;
        case 6:
            switch (op >> 5) {
            case 0: fm_adv(1); break;
            case 1: fm_adv(xb); break;
            case 2: fm_adv((uint64_t)xb * 1000u); break;
            /* forward only: the store's clock is monotonic by contract. (A
               clock that runs backwards revives expired leases whose slots may
               already hold another key: no model can predict that without
               copying the hash table; the lock fuzzer and tests/edge cover
               backwards clocks against the lock.) */
            case 3: fm_adv((uint64_t)xb * 1000000u); break;
            case 4: fm_adv(2); break;
            case 5: if (fm_clock < UINT64_MAX - xb) fm_clock = UINT64_MAX - xb; break;
            default: fm_adv(7); break;
            }
            break;
        default: {
            size_t live = ldl_memstore_live(&ms);
            if (live != fm_live()) fm_fail("live()", (long)live, (long)fm_live());
            break;
        }
        }
        if (ldl_memstore_live(&ms) != fm_live()) fm_fail("live() after step", (long)ldl_memstore_live(&ms), (long)fm_live());
        if (ldl_memstore_live(&ms) > M.n) fm_fail("live() above capacity", (long)ldl_memstore_live(&ms), (long)M.n);
    }
    return 0;
}
