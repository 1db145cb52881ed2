#define _DEFAULT_SOURCE 1 /* madvise, MADV_HUGEPAGE */
/* bench_core.c - rows 1, 2 and the x86-64 sizeof part of row 5 of `make bench`.
   Every row is a pair measured side by side in this one process: the library
   figure and its anchor, each the median of BENCH_REPS repetitions (default 7).
   Prints markdown table rows: | row | measure | ours | anchor | ratio | target | verdict |
   The implementation lives in ldl_impl.c (its own translation unit, no LTO),
   as an stb user builds it, so nothing is inlined into the timing loops. */
#include "lite_di_lock.h"
#include "bench_util.h"
#include <stdio.h>
#include <sys/mman.h>

static volatile uint64_t sink;

/* ---------------------------------------------------------------- clocks */
static uint64_t frame_now(void *ctx) { return *(const uint64_t *)ctx; }  /* a game loop's frame clock */

static inline uint64_t bare_mono_ms(void) {    /* what the built-in clock does */
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---------------------------------------------------------------- container */
static ldl_scope g_root, g_pool[4];

static ldl_lock_desc base_desc(const char *key, uint32_t ttl) {
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&g_root);
    d.key = key;
    d.ttl_ms = ttl;
    return d;
}

static void die(const char *what) { fprintf(stderr, "bench_core: %s\n", what); exit(1); }

static void row(const char *id, const char *what, const char *ours, const char *anchor,
                const char *ratio, const char *target, const char *verdict) {
    printf("| %s | %s | %s | %s | %s | %s | %s |\n", id, what, ours, anchor, ratio, target, verdict);
    fflush(stdout);
}

/* ---------------------------------------------------------------- row 1 */
#define HOT_N 2000000u   /* per sub-block; 10 sub-blocks per side per repetition */

static double t_getters(ldl_lock *l, int bare) {
    uint64_t t0, acc = 0;
    unsigned i;
    t0 = bench_ns();
    if (!bare) {
        for (i = 0; i < HOT_N; i++) {
            BENCH_OPAQUE(l);
            acc += (uint64_t)ldl_lock_state(l) + (uint64_t)ldl_lock_held(l) +
                   (uint64_t)ldl_lock_fencing_token(l) + (uint64_t)ldl_lock_reason(l);
        }
    } else {                                 /* the same four loads, by hand */
        for (i = 0; i < HOT_N; i++) {
            BENCH_OPAQUE(l);
            acc += (uint64_t)l->_state + (uint64_t)(l->_state == LDL_HELD) +
                   (uint64_t)l->_token + (uint64_t)l->_reason;
        }
    }
    sink += acc;
    return (double)(bench_ns() - t0) / HOT_N;
}

static double t_poll_mono(ldl_lock *l, int bare) {
    uint64_t t0, acc = 0;
    unsigned i, n = HOT_N / 4;
    t0 = bench_ns();
    if (!bare) for (i = 0; i < n; i++) { BENCH_OPAQUE(l); acc += (uint64_t)ldl_lock_poll(l); }
    else       for (i = 0; i < n; i++) { acc += bare_mono_ms(); }
    sink += acc;
    return (double)(bench_ns() - t0) / n;
}

static uint64_t (*volatile g_frame_fn)(void *) = frame_now;   /* an opaque indirect call */

static double t_poll_frame(ldl_lock *l, uint64_t *frame, int bare) {
    uint64_t t0, acc = 0;
    unsigned i;
    t0 = bench_ns();
    if (!bare) for (i = 0; i < HOT_N; i++) { ++*frame; BENCH_OPAQUE(l); acc += (uint64_t)ldl_lock_poll(l); }
    else {
        uint64_t (*fn)(void *) = g_frame_fn;
        for (i = 0; i < HOT_N; i++) { ++*frame; BENCH_OPAQUE(fn); acc += fn(frame); }
    }
    sink += acc;
    return (double)(bench_ns() - t0) / HOT_N;
}

/* one repetition of a hot pair: 10 interleaved sub-blocks of each side, so
   load changes on a shared machine hit both sides alike; out: ns per call */
#define SUB 10
typedef double (*hot_fn)(ldl_lock *l, uint64_t *frame, int bare);
static double h_getters(ldl_lock *l, uint64_t *f, int bare) { (void)f; return t_getters(l, bare); }
static double h_mono(ldl_lock *l, uint64_t *f, int bare) { (void)f; return t_poll_mono(l, bare); }
static double h_frame(ldl_lock *l, uint64_t *f, int bare) { return t_poll_frame(l, f, bare); }

static void hot_pair(const char *id, const char *what, const char *anchor_what, hot_fn fn, ldl_lock *l,
                     uint64_t *frame, double limit, const char *target) {
    int reps = bench_reps(), r, k;
    double a[99], b[99], d[99], ours, anc, diff;
    char o[64], an[96], ra[64];
    for (r = 0; r < reps; r++) {
        double sa = 0, sb = 0;
        for (k = 0; k < SUB; k++) { sa += fn(l, frame, 0); sb += fn(l, frame, 1); }
        a[r] = sa / SUB; b[r] = sb / SUB; d[r] = a[r] - b[r];
    }
    ours = bench_median(a, reps); anc = bench_median(b, reps); diff = bench_median(d, reps);
    snprintf(o, sizeof o, "%.2f ns", ours);
    snprintf(an, sizeof an, "%.2f ns (%s)", anc, anchor_what);
    snprintf(ra, sizeof ra, "%+.2f ns", diff);
    row(id, what, o, an, ra, target, diff <= limit ? "met" : "MISSED");
}

/* issue 12: the election options must not touch poll's fast path (1d), and
   what the event hook costs per acquire+release with a no-op hook (1e) */
static uint64_t g_events;
static void count_event(void *user, const ldl_event *ev) { (void)user; (void)ev; g_events++; }

static ldl_lock *g_cyc[2];
static double t_cycle(ldl_lock *unused, uint64_t *frame, int bare) {
    ldl_lock *l = g_cyc[bare ? 0 : 1];       /* bare: events off; else: events on */
    uint64_t t0, acc = 0;
    unsigned i, n = HOT_N / 20;
    (void)unused; (void)frame;
    t0 = bench_ns();
    for (i = 0; i < n; i++) {
        BENCH_OPAQUE(l);
        acc += (uint64_t)ldl_lock_acquire(l);
        acc += (uint64_t)ldl_lock_release(l);
    }
    sink += acc;
    return (double)(bench_ns() - t0) / n;
}

static void row1_election(uint64_t *frame) {
    static ldl_lock le, off, on;
    static ldl_memstore_slot sl[8];
    static ldl_memstore ms;
    ldl_store st;
    ldl_lock_desc d = base_desc("hot-election", 4000000000u);
    ldl_clock builtin = { NULL, NULL };
    d.clock.now_ms = frame_now; d.clock.ctx = frame;
    d.retry.base_ms = 10; d.retry.give_up_ms = 1000; d.ride_out_ms = 100; d.campaign = 1;
    d.on_event = count_event; d.owner = "bench";
    if (ldl_lock_init(&le, &d) != LDL_OK || ldl_lock_acquire(&le) != 1) die("row1 init election");
    hot_pair("1d", "ldl_lock_poll, held, not due, frame clock, every election option on",
             "bare indirect call of the same clock", h_frame, &le, frame, 2.0, "<= +2 ns");
    if (ldl_lock_held(&le) != 1) die("row1d: lock lost during the run");
    ldl_lock_dispose(&le);

    if (ldl_memstore_init(&ms, sl, 8, builtin) != LDL_OK) die("row1e memstore");
    st = ldl_memstore_store(&ms);
    d = base_desc("cyc-off", 3600000u);
    d.store = &st;
    if (ldl_lock_init(&off, &d) != LDL_OK) die("row1e init off");
    d.key = "cyc-on";
    d.on_event = count_event;
    if (ldl_lock_init(&on, &d) != LDL_OK) die("row1e init on");
    g_cyc[0] = &off; g_cyc[1] = &on;
    g_events = 0;
    hot_pair("1e", "acquire+release, MemoryStore, on_event set (a no-op hook: 4 events)",
             "the same cycle without on_event", t_cycle, &on, frame, 1e9, "measured");
    if (g_events == 0) die("row1e: no events");
    ldl_lock_dispose(&off); ldl_lock_dispose(&on);
}

static void row1(void) {
    static ldl_lock lm, lf;
    static ldl_memstore_slot sl[4];
    static ldl_memstore ms;
    static uint64_t frame = 1;
    ldl_store st;
    ldl_lock_desc d = base_desc("hot", 3600000u);      /* 1 h TTL: the heartbeat is never due */
    ldl_clock builtin = { NULL, NULL };
    if (ldl_memstore_init(&ms, sl, 4, builtin) != LDL_OK) die("row1 memstore");
    st = ldl_memstore_store(&ms);
    d.store = &st;
    if (ldl_lock_init(&lm, &d) != LDL_OK || ldl_lock_acquire(&lm) != 1) die("row1 init mono");
    d = base_desc("hot-frame", 4000000000u);           /* frames: never due within the run */
    d.clock.now_ms = frame_now; d.clock.ctx = &frame;
    if (ldl_lock_init(&lf, &d) != LDL_OK || ldl_lock_acquire(&lf) != 1) die("row1 init frame");

    hot_pair("1a", "4 hot getters (state, held, token, reason) per call", "the same 4 field loads by hand",
             h_getters, &lm, &frame, 0.5, "a field read each");
    hot_pair("1b", "ldl_lock_poll, held, not due, built-in clock", "bare clock_gettime(MONOTONIC) -> ms",
             h_mono, &lm, &frame, 2.0, "<= +2 ns");
    hot_pair("1c", "ldl_lock_poll, held, not due, frame-counter clock", "bare indirect call of the same clock",
             h_frame, &lf, &frame, 2.0, "<= +2 ns");
    if (ldl_lock_held(&lm) != 1 || ldl_lock_held(&lf) != 1) die("row1: lock lost during the run");
    ldl_lock_dispose(&lm); ldl_lock_dispose(&lf);
    row1_election(&frame);
}

/* ---------------------------------------------------------------- row 2 */
typedef struct world {
    size_t n;                  /* keys in play */
    char (*keys)[16];
    int64_t *tok;              /* store-direct tokens */
    ldl_memstore_slot *slots;
    ldl_memstore ms;
    ldl_store st;
    ldl_lock *locks;           /* one lock per key */
} world;

static uint64_t xs(uint64_t *s) { uint64_t x = *s; x ^= x << 13; x ^= x >> 7; x ^= x << 17; return *s = x; }

/* BENCH_HUGEPAGES=1: back the big arrays with transparent huge pages (2 MB), as a
   program holding 1e6 keys may choose to; separates TLB misses from cache misses */
static void *big_alloc(size_t bytes) {
    const char *hp = getenv("BENCH_HUGEPAGES");
    if (hp && hp[0] == '1') {
        size_t al = (size_t)2 << 20, sz = (bytes + al - 1) / al * al;
        void *p = aligned_alloc(al, sz);
        if (p) (void)madvise(p, sz, MADV_HUGEPAGE);
        return p;
    }
    return malloc(bytes);
}

static void world_init(world *w, size_t n, ldl_clock clk) {
    size_t i, ns = n * 2 < 2 ? 2 : n * 2;
    w->n = n;
    w->keys = (char (*)[16])big_alloc(n * sizeof *w->keys);
    w->tok = (int64_t *)big_alloc(n * sizeof *w->tok);
    w->slots = (ldl_memstore_slot *)big_alloc(ns * sizeof *w->slots);
    w->locks = (ldl_lock *)big_alloc(n * sizeof *w->locks);
    if (!w->keys || !w->tok || !w->slots || !w->locks) die("out of memory");
    memset(w->tok, 0, n * sizeof *w->tok);
    if (ldl_memstore_init(&w->ms, w->slots, ns, clk) != LDL_OK) die("memstore_init");
    w->st = ldl_memstore_store(&w->ms);
    for (i = 0; i < n; i++) {
        ldl_lock_desc d = base_desc(w->keys[i], 3600000u);
        snprintf(w->keys[i], sizeof w->keys[i], "job:%07u", (unsigned)(i % 10000000u));
        d.store = &w->st;
        d.clock = clk;
        if (ldl_lock_init(&w->locks[i], &d) != LDL_OK) die(ldl_lock_why(&w->locks[i]));
    }
}

static void world_free(world *w) {
    size_t i;
    for (i = 0; i < w->n; i++) ldl_lock_dispose(&w->locks[i]);
    free(w->keys); free(w->tok); free(w->slots); free(w->locks);
}

/* mode 0: store vtable release+acquire with all n keys held (load 0.5)
   mode 1: ldl_lock_acquire + ldl_lock_release of a random lock
   mode 2: ldl_lock_run of a random lock (scope, 2 binds, body, shutdown, release) */
static int64_t g_fence_sum;
static int body_fn(void *scope, void *user) {
    const int64_t *f = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
    (void)user;
    if (!f) return 1;
    g_fence_sum += *f;
    return 0;
}

static double t_world(world *w, int mode, size_t ops) {
    uint64_t t0, seed = 0x9E3779B97F4A7C15ull;
    size_t k, n = w->n;
    t0 = bench_ns();
    if (mode == 0) {
        for (k = 0; k < ops; k++) {
            size_t j = (size_t)(xs(&seed) % n);
            if (w->st.release(w->st.ctx, w->keys[j], w->tok[j]) != 1) die("store release");
            if (w->st.acquire(w->st.ctx, w->keys[j], 3600000u, &w->tok[j]) != 1) die("store acquire");
        }
    } else if (mode == 1) {
        for (k = 0; k < ops; k++) {
            ldl_lock *l = &w->locks[xs(&seed) % n];
            if (ldl_lock_acquire(l) != 1) die("lock acquire");
            if (ldl_lock_release(l) != 1) die("lock release");
        }
    } else {
        for (k = 0; k < ops; k++) {
            ldl_lock *l = &w->locks[xs(&seed) % n];
            if (ldl_lock_run(l, body_fn, NULL, NULL) != LDL_OK) die("lock run");
        }
    }
    return (double)ops * 1e9 / (double)(bench_ns() - t0);
}

/* the memory floor at n keys: per op, read a random lock's key (as acquire must),
   then one slot whose index depends on it (as the hash lookup does), and the
   next op's choice depends on that slot: two dependent random reads per op,
   latency-bound, no lock logic */
static double t_floor(world *w, size_t ops) {
    uint64_t t0, seed = 0x9E3779B97F4A7C15ull, acc = 0;
    size_t k, n = w->n, ns = w->ms._n;
    t0 = bench_ns();
    for (k = 0; k < ops; k++) {
        const ldl_lock *l = &w->locks[xs(&seed) % n];
        size_t idx = (size_t)((xs(&seed) ^ (uint64_t)(unsigned char)l->_key[10]) % ns);
        uint64_t t = (uint64_t)w->slots[idx]._token;
        acc += t;
        seed += (t & 1u);          /* the next op waits for this one, as a caller's loop does */
    }
    sink += acc;
    return (double)ops * 1e9 / (double)(bench_ns() - t0);
}

static void fmt_rate(char *b, size_t n, double r) {
    if (r >= 1e6) snprintf(b, n, "%.2f M/s", r / 1e6);
    else snprintf(b, n, "%.0f k/s", r / 1e3);
}

static void row2(void) {
    static const size_t ns[3] = { 1, 1000, 1000000 };
    static const char *const nn[3] = { "1", "1e3", "1e6" };
    static const char *const mname[3] = { "store vtable release+acquire (all keys held)",
                                          "ldl_lock_acquire+release", "ldl_lock_run lifecycle" };
    double rate[3][3], v[3][3][99], floor_r = 0, lock_r = 0;
    int reps = bench_reps(), r, m, i;
    ldl_clock builtin = { NULL, NULL };
    static world w[3];
    size_t j;
    /* BENCH_MAXKEYS=1000 leaves out the 1e6-key world (and 2d): quicker A/B runs */
    const char *mk = getenv("BENCH_MAXKEYS");
    int nw = mk && strtoul(mk, NULL, 10) < 1000000u ? 2 : 3;
    /* all three worlds live at once, and every repetition measures 1, 1e3 and
       1e6 keys back to back, so a change in machine load hits all three */
    for (i = 0; i < nw; i++) {
        world_init(&w[i], ns[i], builtin);
        for (j = 0; j < w[i].n; j++)
            if (w[i].st.acquire(w[i].st.ctx, w[i].keys[j], 3600000u, &w[i].tok[j]) != 1) die("prefill");
    }
    for (m = 0; m < 3; m++) {
        if (m == 1)        /* lock modes: a key is in the store only while its lock holds it */
            for (i = 0; i < nw; i++)
                for (j = 0; j < w[i].n; j++) (void)w[i].st.release(w[i].st.ctx, w[i].keys[j], w[i].tok[j]);
        for (i = 0; i < nw; i++) (void)t_world(&w[i], m, 200000);     /* warm up */
        for (r = 0; r < reps; r++)
            for (i = 0; i < nw; i++) v[m][i][r] = t_world(&w[i], m, ns[i] >= 1000000 ? 1000000 : 2000000);
        for (i = 0; i < nw; i++) rate[i][m] = bench_median(v[m][i], reps);
    }
    if (nw == 3) {
        double fl[99], lk[99];
        for (r = 0; r < reps; r++) { fl[r] = t_floor(&w[2], 1000000); lk[r] = t_world(&w[2], 1, 1000000); }
        floor_r = bench_median(fl, reps); lock_r = bench_median(lk, reps);
    }
    for (i = 0; i < nw; i++) world_free(&w[i]);
    for (m = 0; m < 3; m++) {
        for (i = 0; i < nw; i++) {
            char o[64], an[64], ra[64], what[160], id[8];
            const char *target = "", *verdict = "";
            snprintf(id, sizeof id, "2%c", "abc"[m]);
            snprintf(what, sizeof what, "MemoryStore, %s key%s (%s slots): %s", nn[i], i == 0 ? "" : "s",
                     i == 0 ? "2" : i == 1 ? "2e3" : "2e6", mname[m]);
            fmt_rate(o, sizeof o, rate[i][m]);
            if (i == 0) {
                snprintf(an, sizeof an, "-");
                snprintf(ra, sizeof ra, "%.0f ns/op", 1e9 / rate[i][m]);
                if (m == 1) { target = ">= 10 M/s"; verdict = rate[i][m] >= 10e6 ? "met" : "MISSED"; }
            } else {
                fmt_rate(an, sizeof an, rate[0][m]);
                snprintf(ra, sizeof ra, "%.2fx slower than 1 key", rate[0][m] / rate[i][m]);
                strcat(an, " (1 key)");
                if (i == 2 && m == 1) { target = "<= 3x slower"; verdict = rate[0][m] / rate[i][m] <= 3.0 ? "met" : "MISSED"; }
            }
            row(id, what, o, an, ra, target, verdict);
        }
    }
    if (nw == 3) {
        char o[64], an[96], ra[80];
        fmt_rate(o, sizeof o, lock_r);
        fmt_rate(an, sizeof an, floor_r);
        strcat(an, " (2 dependent random reads: a lock's key, then a slot)");
        snprintf(ra, sizeof ra, "%.0f vs %.0f ns/op (%.2fx the floor)", 1e9 / lock_r, 1e9 / floor_r, floor_r / lock_r);
        row("2d", "MemoryStore, 1e6 keys: ldl_lock_acquire+release vs the memory-latency floor", o, an, ra, "", "");
    }
    {   /* the 1-key lock pair again with a frame-counter clock: the clock's share */
        world w;
        double v[99], c[99];
        uint64_t frame = 1;
        ldl_clock fc; char o[64], an[64], ra[64];
        fc.now_ms = frame_now; fc.ctx = &frame;
        world_init(&w, 1, fc);
        (void)t_world(&w, 1, 500000);
        for (r = 0; r < reps; r++) v[r] = t_world(&w, 1, 2000000);
        world_free(&w);
        world_init(&w, 1, builtin);
        for (r = 0; r < reps; r++) c[r] = t_world(&w, 1, 2000000);
        world_free(&w);
        fmt_rate(o, sizeof o, bench_median(v, reps));
        fmt_rate(an, sizeof an, bench_median(c, reps)); strcat(an, " (built-in clock)");
        snprintf(ra, sizeof ra, "%.0f vs %.0f ns/op", 1e9 / bench_median(v, reps), 1e9 / bench_median(c, reps));
        row("2e", "MemoryStore, 1 key: ldl_lock_acquire+release with a frame-counter clock", o, an, ra, "", "");
    }
}

/* ---------------------------------------------------------------- row 2f/2g: async vs sync view
   The same lifecycle (ldl_lock_acquire + ldl_lock_release of one key) on two
   locks, each on its own MemoryStore of 2 slots: one through the synchronous
   view (ldl_memstore_store), one through the non-blocking view
   (ldl_memstore_async_store, which answers inside every submit). Each
   repetition alternates SUB sub-blocks of each; the ratio is the median of the
   per-repetition ratios (async / sync). */
#if (LDL_VERSION_MAJOR > 0 || LDL_VERSION_MINOR >= 2) && !defined(LDL_NO_ASYNC)
#define BENCH_HAS_ASYNC 1
#define LIFE_N 100000u   /* lifecycles per sub-block */

static double t_life(ldl_lock *l, unsigned n) {
    uint64_t t0 = bench_ns();
    unsigned i;
    for (i = 0; i < n; i++) {
        BENCH_OPAQUE(l);
        if (ldl_lock_acquire(l) != 1) die("async row: acquire");
        if (ldl_lock_release(l) != 1) die("async row: release");
    }
    return (double)n * 1e9 / (double)(bench_ns() - t0);
}

typedef struct life_pair {
    ldl_memstore ms[2];
    ldl_memstore_slot sl[2][2];
    ldl_store st;
    ldl_async_store as;
    ldl_lock l[2];             /* 0: sync view, 1: async view */
} life_pair;

static void life_pair_init(life_pair *p, ldl_clock clk) {
    ldl_lock_desc d;
    if (ldl_memstore_init(&p->ms[0], p->sl[0], 2, clk) != LDL_OK ||
        ldl_memstore_init(&p->ms[1], p->sl[1], 2, clk) != LDL_OK) die("async row: memstore");
    p->st = ldl_memstore_store(&p->ms[0]);
    p->as = ldl_memstore_async_store(&p->ms[1]);
    d = base_desc("job:0000000", 3600000u);
    d.store = &p->st; d.clock = clk;
    if (ldl_lock_init(&p->l[0], &d) != LDL_OK) die(ldl_lock_why(&p->l[0]));
    d = base_desc("job:0000000", 3600000u);
    d.async_store = &p->as; d.clock = clk;
    if (ldl_lock_init(&p->l[1], &d) != LDL_OK) die(ldl_lock_why(&p->l[1]));
}

static void row2_async(void) {
    static life_pair p[2];
    static uint64_t frame = 1;
    static const char *const id[2] = { "2f", "2g" };
    static const char *const clk_name[2] = { "built-in clock", "frame-counter clock" };
    int reps = bench_reps(), r, k, c;
    ldl_clock builtin = { NULL, NULL }, fc;
    fc.now_ms = frame_now; fc.ctx = &frame;
    life_pair_init(&p[0], builtin);
    life_pair_init(&p[1], fc);
    for (c = 0; c < 2; c++) {
        double a[99], s[99], q[99], ra, rs, rq;
        char o[64], an[96], rt[64], what[200];
        (void)t_life(&p[c].l[0], LIFE_N); (void)t_life(&p[c].l[1], LIFE_N);   /* warm up */
        for (r = 0; r < reps; r++) {
            double sa = 0, ss = 0;
            for (k = 0; k < SUB; k++) {
                if (k & 1) { sa += t_life(&p[c].l[1], LIFE_N); ss += t_life(&p[c].l[0], LIFE_N); }
                else       { ss += t_life(&p[c].l[0], LIFE_N); sa += t_life(&p[c].l[1], LIFE_N); }
            }
            a[r] = sa / SUB; s[r] = ss / SUB; q[r] = a[r] / s[r];
        }
        ra = bench_median(a, reps); rs = bench_median(s, reps); rq = bench_median(q, reps);
        snprintf(what, sizeof what, "MemoryStore, 1 key, %s: acquire+release lifecycles through "
                 "ldl_memstore_async_store vs ldl_memstore_store", clk_name[c]);
        fmt_rate(o, sizeof o, ra);
        fmt_rate(an, sizeof an, rs);
        strcat(an, " (sync view, same loop)");
        snprintf(rt, sizeof rt, "%.1f %% (%.0f vs %.0f ns)", 100.0 * rq, 1e9 / ra, 1e9 / rs);
        row(id[c], what, o, an, rt, c == 0 ? ">= 90 %" : "", c == 0 ? (rq >= 0.90 ? "met" : "MISSED") : "");
        ldl_lock_dispose(&p[c].l[0]); ldl_lock_dispose(&p[c].l[1]);
    }
}
#endif

/* ---------------------------------------------------------------- row 6: instruction counts
   `bench_core ir CASE N` runs N iterations of one case inside ir_case(); run
   under `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=ir_case`
   it gives the instructions per call, free of the machine's noise. The frame
   clock (a plain load through an indirect call) keeps clock_gettime out. */
static uint64_t g_ir_frame = 1;
static uint64_t (*volatile g_ir_clk)(void *) = frame_now;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void ir_case(int c, ldl_lock *l, unsigned n) {
    unsigned i;
    uint64_t acc = 0;
    switch (c) {
    case 0:  /* poll, held, not due */
        for (i = 0; i < n; i++) { ++g_ir_frame; BENCH_OPAQUE(l); acc += (uint64_t)ldl_lock_poll(l); }
        break;
    case 1: { /* the anchor: bare indirect call of the same clock */
        uint64_t (*fn)(void *) = g_ir_clk;
        for (i = 0; i < n; i++) { ++g_ir_frame; BENCH_OPAQUE(fn); acc += fn(&g_ir_frame); }
        break; }
    case 2:  /* acquire + release */
        for (i = 0; i < n; i++) {
            BENCH_OPAQUE(l);
            if (ldl_lock_acquire(l) != 1 || ldl_lock_release(l) != 1) die("ir: lifecycle");
        }
        break;
    default: /* run lifecycle */
        for (i = 0; i < n; i++) {
            BENCH_OPAQUE(l);
            if (ldl_lock_run(l, body_fn, NULL, NULL) != LDL_OK) die("ir: run");
        }
        break;
    }
    sink += acc;
}

static int ir_main(const char *which, unsigned n) {
    static ldl_memstore ms;
    static ldl_memstore_slot sl[2];
    static ldl_lock l;
    ldl_store st;
    ldl_lock_desc d;
    ldl_clock fc;
    int c;
    fc.now_ms = frame_now; fc.ctx = &g_ir_frame;
    if (ldl_memstore_init(&ms, sl, 2, fc) != LDL_OK) die("ir: memstore");
    d = base_desc("job:0000000", 4000000000u);
    d.clock = fc;
    if (!strcmp(which, "poll") || !strcmp(which, "bare")) {
        c = which[0] == 'p' ? 0 : 1;
        st = ldl_memstore_store(&ms); d.store = &st;
    } else if (!strcmp(which, "sync")) {
        c = 2; st = ldl_memstore_store(&ms); d.store = &st;
    } else if (!strcmp(which, "run")) {
        c = 3; st = ldl_memstore_store(&ms); d.store = &st;
#ifdef BENCH_HAS_ASYNC
    } else if (!strcmp(which, "async")) {
        static ldl_async_store as;
        c = 2; as = ldl_memstore_async_store(&ms); d.async_store = &as;
#endif
    } else {
        return 2;                                     /* unknown, or not in this header */
    }
    if (ldl_lock_init(&l, &d) != LDL_OK) die(ldl_lock_why(&l));
    if (c < 2 && ldl_lock_acquire(&l) != 1) die("ir: acquire");
    ir_case(c, &l, n);
    ldl_lock_dispose(&l);
    return 0;
}

/* ---------------------------------------------------------------- row 5 (sizes here) */
static void row5_sizes(void) {
    char o[96];
    snprintf(o, sizeof o, "%zu B (LDL_KEY_MAX %d)", sizeof(ldl_lock), LDL_KEY_MAX);
    row("5a", "sizeof(ldl_lock), x86-64", o, "-", "-", "", "");
    snprintf(o, sizeof o, "%zu B", sizeof(ldl_memstore_slot));
    row("5b", "sizeof(ldl_memstore_slot), x86-64", o, "-", "-", "", "");
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : "all";
    if (ldl_scope_init(&g_root, g_pool, 4) != LDL_OK) die("scope init");
    if (!strcmp(only, "all") || !strcmp(only, "1")) row1();
    if (!strcmp(only, "ir")) return argc > 3 ? ir_main(argv[2], (unsigned)strtoul(argv[3], NULL, 10)) : 2;
    if (!strcmp(only, "all") || !strcmp(only, "2")) row2();
#ifdef BENCH_HAS_ASYNC
    if (!strcmp(only, "all") || !strcmp(only, "2") || !strcmp(only, "2f")) row2_async();
#endif
    if (!strcmp(only, "all") || !strcmp(only, "5")) row5_sizes();
    if (g_fence_sum < 0) printf("%lld\n", (long long)g_fence_sum);
    return sink == 42 ? 1 : 0;
}
