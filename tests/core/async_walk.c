/* async_walk.c - a seeded random walk over the non-blocking lifecycle with an oracle
   (SPEC "Non-blocking stores (v0.2)" and its Precisions). The deferred
   fake and the fixture: async_fake.h. */
#include "async_fake.h"

#ifndef LDL_NO_ASYNC
/* ============================================================ a seeded walk with the oracle
   Random calls, clock steps, answers (any order, late, refused, regressed),
   refusals and re-entry, over many seeds. After every step: the fake saw no
   breach (one request per op, store_data untouched, complete ran no logic);
   a poll that answers 1 is inside the window of some yes this lock got;
   on_lost only with the state already LOST. At the end: dispose, no store
   holds the op, every granted token released exactly once. */
static uint32_t walk_rng;
static uint32_t walk_next(void) {
    walk_rng ^= walk_rng << 13; walk_rng ^= walk_rng >> 17; walk_rng ^= walk_rng << 5;
    return walk_rng;
}
static int walk_bad_lost;
static void walk_lost(void *user, int reason) {
    int st;
    count_lost(user, reason);
    /* LOST; or RELEASED when a release/dispose re-entered from the cancel of
       the renew the loss cut short (the loss came first; see the report) */
    st = ldl_lock_state((ldl_lock *)user);
    if (st != LDL_LOST && st != LDL_RELEASED) { walk_bad_lost++; ev("BAD-LOST"); }
}
static void t_seeded_walk(void) {
    uint32_t seed;
    int bad_window = 0, bad_audit = 0, bad_fake = 0, bad_live = 0, held_seen = 0, late_seen = 0;
    const char *only = getenv("ASYNC_WALK_SEED");
    for (seed = 1; seed <= 2000; seed++) {
        afix f;
        int step, yes_known = 0;
        uint64_t last_yes_at = 0;
        int64_t next_tok = 10;
        uint64_t at[AS_MAXQ];
        if (only && (uint32_t)atoi(only) != seed) continue;
        afix_prepare(&f, T0);
        f.d.on_lost = walk_lost;
        afix_init(&f);
        walk_rng = seed * 2654435761u + 1;
        walk_bad_lost = 0;
        for (step = 0; step < 60 && f.s.n < AS_MAXQ - 4; step++) {
            uint32_t r = walk_next() % 100;
            int n0 = f.s.n, i, rc;
            if (r < 12) (void)ldl_lock_acquire(&f.l);
            else if (r < 18) (void)ldl_lock_release(&f.l);
            else if (r < 24) (void)ldl_lock_tick(&f.l);
            else if (r < 36) {
                rc = ldl_lock_poll(&f.l);
                if (rc == 1) {
                    held_seen++;
                    if (!yes_known || f.c.now >= last_yes_at + WIN) bad_window++;
                }
            }
            else if (r < 40) (void)ldl_lock_valid_ms(&f.l);
            else if (r < 41) ldl_lock_dispose(&f.l);
            else if (r < 60) f.c.now += walk_next() % 120;
            else if (r < 88) {                           /* answer a request, any order */
                int live[AS_MAXQ], nl = 0, pick, k;
                for (i = 0; i < f.s.n; i++) if (f.s.q[i].st != RQ_DONE) live[nl++] = i;
                if (nl) {
                    pick = live[walk_next() % (uint32_t)nl];
                    k = (int)(walk_next() % 10);
                    rc = k < 6 ? 1 : k < 8 ? 0 : k < 9 ? -1 : 2;
                    if (f.s.q[pick].kind == LDL_OP_ACQUIRE) {
                        int64_t tok = next_tok;
                        next_tok += 10;
                        if (walk_next() % 8 == 0 && next_tok > 30) tok = next_tok - 25;  /* regressed, unique */
                        if (f.s.q[pick].st == RQ_LIVE && rc == 1 && f.s.q[pick].op) {
                            if (!yes_known || at[pick] > last_yes_at) last_yes_at = at[pick];
                            yes_known = 1;
                        }
                        defer_answer(&f.s, pick, rc, tok);
                    } else {
                        if (f.s.q[pick].kind == LDL_OP_RENEW && f.s.q[pick].st == RQ_LIVE && rc == 1) {
                            if (!yes_known || at[pick] > last_yes_at) last_yes_at = at[pick];
                            yes_known = 1;
                        }
                        defer_answer(&f.s, pick, rc, 0);
                    }
                }
            }
            else if (r < 92) f.s.refuse_rc[1 + walk_next() % 3] = (walk_next() & 1) ? -1 : 2;
            else if (r < 95) {
                memset(f.s.refuse_rc, 0, sizeof f.s.refuse_rc);
                f.s.inline_on[1 + walk_next() % 3] ^= 1;
                for (i = 1; i <= 3; i++) { f.s.inline_rc[i] = (walk_next() % 3) ? 1 : 0; f.s.inline_tok[i] = next_tok; }
                next_tok += 1000;
            }
            else if (r < 97) { f.s.on_submit = (walk_next() & 1) ? hk_release : hk_dispose; f.s.hook_kind = 0; }
            else { f.s.on_cancel = (walk_next() & 1) ? hk_release : hk_dispose; f.s.cancel_hook_kind = 0; }
            /* the submit clock of every new request (start' is read just before it;
               the fake moves no clock here) */
            for (i = n0; i < f.s.n; i++) at[i] = f.c.now;
            /* an inline yes counts as a yes too */
            for (i = n0; i < f.s.n; i++)
                if (f.s.inline_on[f.s.q[i].kind] && f.s.inline_rc[f.s.q[i].kind] == 1 && f.s.q[i].kind != LDL_OP_RELEASE) {
                    if (!yes_known || at[i] > last_yes_at) last_yes_at = at[i];
                    yes_known = 1;
                }
            if (f.s.violations) break;
        }
        late_seen += ldl_lock_reason(&f.l) == LDL_REASON_LEASE_EXPIRED;
        ldl_lock_dispose(&f.l);
        bad_live += as_live(&f.s) != 0;
        /* the store's pump delivers every answer still outstanding, as grants */
        {
            int i;
            for (i = 0; i < f.s.n; i++)
                if (f.s.q[i].st == RQ_DETACHED && f.s.q[i].kind == LDL_OP_ACQUIRE) { defer_answer(&f.s, i, 1, next_tok); next_tok += 10; }
        }
        bad_fake += f.s.violations != 0;
        if (f.s.violations && bad_fake == 1) printf("    seed %u: fake: %s\n", (unsigned)seed, f.s.violation);
        if (!audit_ok(&f.s)) { bad_audit++; if (bad_audit == 1) printf("    seed %u: audit failed\n", (unsigned)seed); }
        if (walk_bad_lost) printf("    seed %u: on_lost with state %d\n", (unsigned)seed, ldl_lock_state(&f.l));
        CHECK_EQ(walk_bad_lost, 0);
        if (only) {
            int i;
            printf("    log: %s\n", ev_log());
            for (i = 0; i < f.s.ntk; i++) printf("    tok %lld granted %d released %d\n", (long long)f.s.tk[i].tok, f.s.tk[i].granted, f.s.tk[i].released);
        }
    }
    CHECK_EQ(bad_fake, 0);
    CHECK_EQ(bad_live, 0);
    CHECK_EQ(bad_audit, 0);
    CHECK_EQ(bad_window, 0);
    if (getenv("ASYNC_WALK_STATS")) printf("    walk: held %d late %d\n", held_seen, late_seen);
    CHECK(held_seen > 100);                              /* the walk does reach HELD */
    CHECK(late_seen > 0);
}

void suite_async_walk(void) {
    RUN(t_seeded_walk);
}
#endif /* LDL_NO_ASYNC */
