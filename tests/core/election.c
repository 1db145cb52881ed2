/* election.c - [election]: the retry schedule, ride-out, campaign, events,
   counters, the raw answer and holder identity (issue 12), on the fakes.
   Every option here is off in every other suite: a zeroed desc keeps the
   behaviour those suites pin. */
#include "harness.h"

/* ------------------------------------------------------------ an event recorder */
#define EREC_MAX 64
typedef struct erec {
    int n;
    ldl_event e[EREC_MAX];
    ldl_lock *lock;                  /* for re-entry from the hook */
    int reenter;                     /* 1: the hook calls into the lock */
    int reentry_bad;                 /* a re-entrant call that did not answer as the guard says */
    int leading;                     /* on_leading calls */
    int64_t fences[8];
    int undocumented;                /* events with a field their kind does not document */
} erec;

static erec rec;

/* the event fields each kind documents (the table at ldl_event in the
   header); every other field must read 0. 1 = as documented. */
static int ev_fields_documented(const ldl_event *e) {
    int raw = 0, reason = 0, token = 0, lat = 0, next = 0;
    switch (e->kind) {
    case LDL_EV_ATTEMPT:     break;
    case LDL_EV_GRANTED:     raw = token = lat = 1; break;
    case LDL_EV_REFUSED:     raw = reason = token = lat = next = 1; break;
    case LDL_EV_RENEWED:     raw = token = lat = 1; break;
    case LDL_EV_RENEW_ERROR: raw = token = lat = next = 1; break;
    case LDL_EV_LOST:        reason = token = 1; break;
    case LDL_EV_RELEASED:    raw = token = 1; break;
    case LDL_EV_HANDED_BACK: token = 1; break;
    case LDL_EV_GAVE_UP:     break;
    default:                 return 0;
    }
    return (raw || e->raw == 0) && (reason || e->reason == 0) && (token || e->token == 0) &&
           (lat || e->latency_ms == 0) && (next || e->next_ms == 0);
}

static void on_event(void *user, const ldl_event *ev) {
    erec *r = &rec;
    (void)user;
    if (r->n < EREC_MAX) r->e[r->n++] = *ev;
    if (!ev_fields_documented(ev)) r->undocumented++;
    if (r->reenter && r->lock) {
        int st = ldl_lock_state(r->lock);
        if (ldl_lock_acquire(r->lock) != LDL_ESTATE) r->reentry_bad++;
        if (ldl_lock_release(r->lock) != LDL_ESTATE) r->reentry_bad++;
        if (ldl_lock_tick(r->lock) != LDL_ESTATE) r->reentry_bad++;
        if (ldl_lock_poll(r->lock) != LDL_ESTATE) r->reentry_bad++;
        ldl_lock_dispose(r->lock);
        if (ldl_lock_state(r->lock) != st) r->reentry_bad++;
    }
}

static void on_leading(void *user, int64_t fence) {
    (void)user;
    if (rec.leading < 8) rec.fences[rec.leading] = fence;
    rec.leading++;
    ev("on_leading");
}

#ifndef LDL_NO_ELECTION
static int kinds_are(const int *want, int n) {
    int i;
    if (rec.n != n) return 0;
    for (i = 0; i < n; i++) if (rec.e[i].kind != want[i]) return 0;
    return 1;
}

/* a fixture lock with the election fields set by the caller, then re-init */
static void efix(fix *f, int timers, uint32_t base, uint32_t cap, uint32_t give_up, uint64_t seed) {
    fix_setup(f, "job", timers, 1000);
    f->d.retry.base_ms = base;
    f->d.retry.cap_ms = cap;
    f->d.retry.give_up_ms = give_up;
    f->d.retry.seed = seed;
    f->d.on_event = on_event;
    f->d.on_leading = on_leading;
    memset(&rec, 0, sizeof rec);
    rec.lock = &f->l;
    CHECK_EQ(ldl_lock_init(&f->l, &f->d), LDL_OK);
}

/* advance to the next scheduled attempt and poll; the poll's answer */
static int step_to_next(fix *f) {
    uint32_t due = ldl_lock_due_in_ms(&f->l);
    if (due == UINT32_MAX) return -100;
    f->c.now += due;
    return ldl_lock_poll(&f->l);
}

#endif

#ifndef LDL_NO_ELECTION
/* ------------------------------------------------------------ options */
static void t_options_refused(void) {
    fix f;
    ldl_memstore ms; ldl_memstore_slot sl[4];
    ldl_store_ext x;
    fix_setup(&f, "job", 0, 0);
#define REFUSED(stmt, text) do { fix_setup(&f, "job", 0, 0); stmt; \
        CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL); \
        CHECK_MSG(strstr(ldl_lock_why(&f.l), text) != NULL, "why: %s", ldl_lock_why(&f.l)); } while (0)
    REFUSED(f.d.retry.cap_ms = 10, "retry: base_ms is 0");
    REFUSED(f.d.retry.give_up_ms = 10, "retry: base_ms is 0");
    REFUSED(f.d.retry.seed = 7, "retry: base_ms is 0");
    REFUSED((f.d.retry.base_ms = 20, f.d.retry.cap_ms = 10), "retry.cap_ms");
    REFUSED((f.d.retry.base_ms = 20, f.d.retry.sleep_ctx = &f), "sleep_ctx");
    REFUSED(f.d.ride_out_ms = 295, "ride_out_ms");            /* window is 295 */
    REFUSED(f.d.campaign = 1, "campaign: needs retry.base_ms");
    REFUSED((f.d.retry.base_ms = 5, f.d.campaign = 2), "campaign: 0 or 1");
    REFUSED(f.d.owner = "", "owner: empty");
    REFUSED(f.d.owner = "bad\001owner", "owner: printable ASCII only");
    REFUSED(f.d.owner = "csi\233[2J", "owner: printable ASCII only");         /* C1 CSI */
    REFUSED(f.d.owner = "bidi\342\200\256x", "owner: printable ASCII only");  /* U+202E */
    REFUSED(f.d.owner = "del\177", "owner: printable ASCII only");
    REFUSED(f.d.owner = "0123456789012345678901234567890123456789012345678901234567890123",
            "owner: longer");
    REFUSED(f.d.owner = "alice", "owner: needs store_ext");
    /* an ext without the method this store kind needs */
    ldl_memstore_init(&ms, sl, 4, fake_clock_of(&f.c));
    x = ldl_memstore_ext(&ms);
    x.acquire_owned = NULL; x.submit_owned = NULL;
    REFUSED((f.d.owner = "alice", f.d.store_ext = &x), "owner: store_ext has no");
#undef REFUSED
    /* the edges that are accepted */
    fix_setup(&f, "job", 0, 0);
    f.d.ride_out_ms = 294;
    f.d.retry.base_ms = 1;
    f.d.campaign = 1;
    f.d.owner = "012345678901234567890123456789012345678901234567890123456789012";  /* 63 */
    f.d.store = NULL; f.d.async_store = NULL;    /* the default MemoryStore brings its ext */
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    ldl_lock_dispose(&f.l);
}

/* ------------------------------------------------------------ the schedule */
static void t_schedule_bounds_and_cap(void) {
    fix f;
    int round, n, over_half = 0;
    efix(&f, 0, 10, 80, 0, 42);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    CHECK_EQ(f.s.acquire_calls, 1);
    for (round = 0; round < 40; round++) {
        uint64_t ceil = 10;
        uint32_t due = ldl_lock_due_in_ms(&f.l);
        for (n = 0; n < round && ceil < 80; n++) ceil *= 2;
        if (ceil > 80) ceil = 80;
        CHECK_MSG(due >= 1 && due <= ceil, "retry %d: delay %u outside [1, %u]", round, due, (unsigned)ceil);
        if (round >= 3 && due > 40) over_half++;
        /* not yet due: poll makes no attempt */
        if (due > 1) {
            f.c.now += due - 1;
            CHECK_EQ(ldl_lock_poll(&f.l), 0);
            CHECK_EQ(f.s.acquire_calls, 1 + round);
            f.c.now += 1;
        } else {
            f.c.now += due;
        }
        CHECK_EQ(ldl_lock_poll(&f.l), 0);
        CHECK_EQ(f.s.acquire_calls, 2 + round);
    }
    CHECK_MSG(over_half > 5, "the capped delays never reached the top half (%d)", over_half);
    /* every refusal was an event with the next delay */
    CHECK_EQ(rec.e[1].kind, LDL_EV_REFUSED);
    CHECK_EQ(rec.e[1].raw, 0);
    CHECK(rec.e[1].next_ms >= 1 && rec.e[1].next_ms <= 10);
    CHECK_EQ(ldl_lock_counters(&f.l)->attempts, 41);
    CHECK_EQ(ldl_lock_counters(&f.l)->contention, 41);
}

/* full jitter: the first delays of many rounds spread over [1, base] */
static void t_schedule_spread_and_seed(void) {
    fix f;
    int i, lo = 0, hi = 0;
    uint32_t first[50];
    efix(&f, 0, 100, 0, 0, 7);
    f.s.acquire_rc = 0;
    for (i = 0; i < 50; i++) {
        CHECK_EQ(ldl_lock_acquire(&f.l), 0);      /* each acquire begins a new round */
        first[i] = ldl_lock_due_in_ms(&f.l);
        CHECK(first[i] >= 1 && first[i] <= 100);
        lo += first[i] <= 25;
        hi += first[i] > 75;
    }
    CHECK_MSG(lo >= 3 && hi >= 3, "50 draws not spread: %d in the low quarter, %d in the high", lo, hi);
    /* the same seed draws the same schedule; another seed another one */
    efix(&f, 0, 100, 0, 0, 7);
    f.s.acquire_rc = 0;
    for (i = 0; i < 50; i++) {
        ldl_lock_acquire(&f.l);
        CHECK_EQ(ldl_lock_due_in_ms(&f.l), first[i]);
    }
    efix(&f, 0, 100, 0, 0, 8);
    f.s.acquire_rc = 0;
    for (i = lo = 0; i < 50; i++) {
        ldl_lock_acquire(&f.l);
        lo += ldl_lock_due_in_ms(&f.l) == first[i];
    }
    CHECK_MSG(lo < 25, "seed 8 repeated seed 7's schedule (%d of 50)", lo);
}

static void t_schedule_give_up(void) {
    fix f;
    int rc, guard = 0;
    uint64_t began = 1000;
    efix(&f, 0, 10, 40, 100, 3);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    while (ldl_lock_retrying(&f.l) && guard++ < 1000) {
        rc = step_to_next(&f);
        CHECK_EQ(rc, 0);
        CHECK_MSG(f.c.now < began + 100, "an attempt at %llu, past the give-up deadline %llu",
                  (unsigned long long)f.c.now, (unsigned long long)(began + 100));
    }
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    CHECK_EQ(rec.e[rec.n - 1].kind, LDL_EV_GAVE_UP);
    CHECK_EQ(rec.e[rec.n - 2].kind, LDL_EV_REFUSED);
    CHECK_EQ(rec.e[rec.n - 2].next_ms, UINT32_MAX);
    /* nothing more: later polls make no attempt */
    rc = f.s.acquire_calls;
    f.c.now += 10000;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, rc);
    CHECK(rc >= 4);
}

/* a poll that comes late, after the give-up deadline, makes no attempt (the
   fuzzer's regress-giveup-late-poll) */
static void t_give_up_late_poll(void) {
    fix f;
    int calls;
    efix(&f, 0, 10, 0, 100, 1);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    calls = f.s.acquire_calls;
    f.s.acquire_rc = 1;
    f.c.now += 500;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, calls);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(rec.e[rec.n - 1].kind, LDL_EV_GAVE_UP);
    f.c.now += 500;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, calls);
}

static void t_retry_grants_later(void) {
    fix f;
    efix(&f, 0, 10, 0, 0, 1);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(step_to_next(&f), 0);
    f.s.acquire_rc = 1;
    CHECK_EQ(step_to_next(&f), 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(rec.leading, 1);
    CHECK_EQ(rec.fences[0], ldl_lock_fencing_token(&f.l));
    CHECK_EQ(ldl_lock_answer(&f.l), 1);
    /* a retry round ends at its grant: a later loss does not compete again */
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
}

static void t_release_stops_the_schedule(void) {
    fix f;
    efix(&f, 0, 10, 0, 0, 1);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(f.s.release_calls, 0);
    f.c.now += 100000;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, 1);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);
    /* dispose too */
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    ldl_lock_dispose(&f.l);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
}

static void t_retry_timer_mode(void) {
    fix f;
    SYNC_ONLY("timer mode: a non-blocking store is manual-mode only");
    efix(&f, 1, 10, 0, 0, 5);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    CHECK(f.ft.last_delay >= 1 && f.ft.last_delay <= 10);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), UINT32_MAX);     /* the timer has the work */
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, 1);
    CHECK_EQ(fake_timers_fire(&f.ft), 1);                /* attempt 2: no */
    CHECK_EQ(f.s.acquire_calls, 2);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    CHECK(f.ft.last_delay >= 1 && f.ft.last_delay <= 20);
    f.s.acquire_rc = 1;
    CHECK_EQ(fake_timers_fire(&f.ft), 1);                /* attempt 3: granted */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);               /* now the heartbeat */
    CHECK_EQ(f.ft.last_delay, 100);
    /* release in timer mode while retrying disarms */
    ldl_lock_release(&f.l);
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 0);
    CHECK_EQ(fake_timers_armed(&f.ft), 0);
    /* a retry timer that cannot be armed gives up */
    f.ft.fail_next = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(rec.e[rec.n - 1].kind, LDL_EV_GAVE_UP);
}

/* ------------------------------------------------------------ ride-out */
static void ride_fix(fix *f, int timers, uint32_t ride) {
    fix_setup(f, "job", timers, 0);
    f->d.ride_out_ms = ride;
    f->d.on_event = on_event;
    memset(&rec, 0, sizeof rec);
    CHECK_EQ(ldl_lock_init(&f->l, &f->d), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f->l), 1);
}

static void t_ride_out_keeps_then_expires(void) {
    fix f;
    ride_fix(&f, 0, 20);
    f.s.renew_rc = LDL_ESTORE;
    f.c.now = 100;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* renew error: still held */
    CHECK_EQ(f.s.renew_calls, 1);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(ldl_lock_raw_answer(&f.l), LDL_ESTORE);
    CHECK_EQ(rec.e[rec.n - 1].kind, LDL_EV_RENEW_ERROR);
    CHECK_EQ(rec.e[rec.n - 1].next_ms, 20);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 20);
    f.c.now = 119;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 1);                        /* waits for the ride-out */
    f.c.now = 120;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    CHECK_EQ(f.s.renew_calls, 2);
    /* still failing: retried every 20 ms, never trusted past 0 + 295 */
    while (f.c.now < 294) {
        f.c.now += 20;
        if (f.c.now >= 295) break;
        CHECK_EQ(ldl_lock_poll(&f.l), 1);
        CHECK(ldl_lock_valid_ms(&f.l) == 295 - f.c.now);
    }
    CHECK_EQ(lost_calls, 0);
    f.c.now = 295;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(ldl_lock_counters(&f.l)->losses[LDL_REASON_LEASE_EXPIRED], 1);
    CHECK(ldl_lock_counters(&f.l)->store_errors >= 9);
}

static void t_ride_out_recovers(void) {
    fix f;
    ride_fix(&f, 0, 20);
    f.s.renew_rc = 2;                                    /* malformed rides out too */
    f.c.now = 100;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);
    f.s.renew_rc = 1;
    f.c.now = 120;
    CHECK_EQ(ldl_lock_poll(&f.l), 1);                    /* renewed: start = 120 */
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 295);
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 100);
    CHECK_EQ(rec.e[rec.n - 1].kind, LDL_EV_RENEWED);
    CHECK_EQ(ldl_lock_counters(&f.l)->renewals, 1);
    /* a clean 0 loses at once, ride-out or not */
    f.s.renew_rc = 0;
    f.c.now = 220;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_HEARTBEAT_FAILED);
}

static void t_ride_out_off_loses(void) {
    fix f;
    ride_fix(&f, 0, 0);
    f.s.renew_rc = LDL_ESTORE;
    f.c.now = 100;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_STORE_ERROR);
    CHECK_EQ(ldl_lock_counters(&f.l)->losses[LDL_REASON_STORE_ERROR], 1);
}

static void t_ride_out_near_deadline(void) {
    fix f;
    ride_fix(&f, 0, 50);
    f.s.renew_rc = -1;
    f.c.now = 280;                                       /* 15 ms of trust left */
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(rec.e[rec.n - 1].next_ms, 15);              /* never past the deadline */
    CHECK_EQ(ldl_lock_due_in_ms(&f.l), 15);
    f.c.now = 295;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
}

static void t_ride_out_timer_mode(void) {
    fix f;
    SYNC_ONLY("timer mode: a non-blocking store is manual-mode only");
    ride_fix(&f, 1, 20);
    f.s.renew_rc = -1;
    f.c.now = 100;
    CHECK_EQ(fake_timers_fire(&f.ft), 1);                /* the heartbeat: error */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(fake_timers_armed(&f.ft), 1);
    CHECK_EQ(f.ft.last_delay, 20);
    f.s.renew_rc = 1;
    f.c.now = 120;
    CHECK_EQ(fake_timers_fire(&f.ft), 1);
    CHECK_EQ(f.s.renew_calls, 2);
    CHECK_EQ(f.ft.last_delay, 100);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 295);
}

/* ------------------------------------------------------------ campaign */
static void t_campaign_loses_and_wins_again(void) {
    fix f;
    int64_t first;
    fix_setup(&f, "job", 0, 0);
    f.d.retry.base_ms = 10;
    f.d.retry.seed = 9;
    f.d.campaign = 1;
    f.d.on_leading = on_leading;
    f.d.on_event = on_event;
    memset(&rec, 0, sizeof rec);
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    f.s.auto_token = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    first = ldl_lock_fencing_token(&f.l);
    CHECK_EQ(rec.leading, 1);
    f.s.renew_rc = 0;
    f.c.now = 100;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);                    /* lost */
    CHECK_EQ(ldl_lock_state(&f.l), LDL_LOST);
    CHECK_EQ(lost_calls, 1);
    CHECK_EQ(f.s.release_calls, 1);                      /* handed back at once */
    CHECK_EQ(f.s.released[0], first);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    f.s.acquire_rc = 0;                                  /* someone else leads a while */
    CHECK_EQ(step_to_next(&f), 0);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_IDLE);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    f.s.acquire_rc = 1; f.s.renew_rc = 1;
    CHECK_EQ(step_to_next(&f), 1);                       /* leads again */
    CHECK_EQ(rec.leading, 2);
    CHECK(rec.fences[1] > rec.fences[0]);
    /* step down: release, then no attempt until acquire */
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    f.c.now += 100000;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    CHECK_EQ(f.s.acquire_calls, 3);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);                 /* told to compete again */
    CHECK_EQ(rec.leading, 3);
    /* a loss by the local deadline also competes again */
    f.c.now += 295;
    CHECK_EQ(ldl_lock_poll(&f.l), 0);
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(ldl_lock_retrying(&f.l), 1);
    CHECK_EQ(step_to_next(&f), 1);
    CHECK_EQ(rec.leading, 4);
    CHECK(rec.fences[3] > rec.fences[2]);
}

/* ------------------------------------------------------------ events, counters, raw */
static void t_events_exact(void) {
    fix f;
    static const int want[] = {
        LDL_EV_ATTEMPT, LDL_EV_REFUSED,                  /* contention */
        LDL_EV_ATTEMPT, LDL_EV_REFUSED,                  /* store error */
        LDL_EV_ATTEMPT, LDL_EV_GRANTED,
        LDL_EV_RENEWED,
        LDL_EV_RELEASED,
        LDL_EV_ATTEMPT, LDL_EV_GRANTED,
        LDL_EV_LOST
    };
    const ldl_counters *c;
    int64_t t1, t2;
    efix(&f, 0, 0, 0, 0, 0);
    f.s.clock = &f.c;
    f.s.call_ms = 7;
    f.s.auto_token = 1;
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(ldl_lock_raw_answer(&f.l), 0);
    f.s.acquire_rc = -5;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);                 /* the same answer to the caller ... */
    CHECK_EQ(ldl_lock_raw_answer(&f.l), -5);             /* ... but not the same raw answer */
    f.s.acquire_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    t1 = ldl_lock_fencing_token(&f.l);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    t2 = ldl_lock_fencing_token(&f.l);
    CHECK(t2 > t1 && t1 >= 1);
    f.s.renew_rc = -2;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_MSG(kinds_are(want, (int)(sizeof want / sizeof want[0])), "events: %d recorded", rec.n);
    CHECK_EQ(rec.e[1].raw, 0);
    CHECK_EQ(rec.e[1].next_ms, UINT32_MAX);              /* no schedule */
    CHECK_EQ(rec.e[3].raw, -5);
    CHECK_EQ(rec.e[5].token, t1);
    CHECK_EQ(rec.e[5].latency_ms, 7);
    CHECK_EQ(rec.e[6].latency_ms, 7);
    CHECK_EQ(rec.e[6].token, t1);
    CHECK_EQ(rec.e[7].raw, 1);
    CHECK_EQ(rec.e[7].token, t1);
    CHECK_EQ(rec.e[9].token, t2);
    CHECK_EQ(rec.e[10].reason, LDL_REASON_STORE_ERROR);
    CHECK_EQ(rec.e[10].token, t2);
    c = ldl_lock_counters(&f.l);
    CHECK_EQ(c->attempts, 4);
    CHECK_EQ(c->grants, 2);
    CHECK_EQ(c->contention, 1);
    CHECK_EQ(c->refused, 0);
    CHECK_EQ(c->renewals, 1);
    CHECK_EQ(c->store_errors, 2);
    CHECK_EQ(c->releases, 1);
    CHECK_EQ(c->handbacks, 0);
    CHECK_EQ(c->losses[LDL_REASON_STORE_ERROR], 1);
    CHECK_EQ(c->worst_latency_ms, 7);
    CHECK_EQ(rec.leading, 2);
    /* the lost lease goes back at the release: counted as the caller's release */
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK_EQ(c->releases, 2);
}

/* every kind once, each with exactly the fields the header's table at
   ldl_event documents for it (the rest read 0; issue 25: ATTEMPT's token
   and latency, LOST's raw and latency, RENEW_ERROR's and RELEASED's reason,
   HANDED_BACK's raw were documented for no kind).
   M: an emit passing a field its kind does not document. */
static void t_event_fields_per_kind(void) {
    fix f;
    int k, seen[10] = {0}, guard = 0;
    efix(&f, 0, 10, 10, 30, 7);
    f.d.ride_out_ms = 20;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    f.s.clock = &f.c;
    f.s.call_ms = 3;
    f.s.acquire_rc = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);                 /* ATTEMPT, REFUSED */
    while (ldl_lock_retrying(&f.l) && guard++ < 100) (void)step_to_next(&f);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);                /* GAVE_UP */
    f.s.acquire_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);                 /* GRANTED */
    f.s.renew_rc = -1;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);                    /* RENEW_ERROR */
    f.s.renew_rc = 1;
    CHECK_EQ(ldl_lock_tick(&f.l), 1);                    /* RENEWED */
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);                    /* LOST */
    CHECK_EQ(ldl_lock_release(&f.l), 1);                 /* RELEASED */
    f.s.acquire_token = 1;                               /* regressed: */
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);                 /* REFUSED, HANDED_BACK */
    ldl_lock_dispose(&f.l);
    for (k = 0; k < rec.n; k++) {
        CHECK_MSG(ev_fields_documented(&rec.e[k]), "event %d (kind %d): raw %d reason %d token %lld latency %u next %u",
                  k, rec.e[k].kind, rec.e[k].raw, rec.e[k].reason, (long long)rec.e[k].token,
                  rec.e[k].latency_ms, rec.e[k].next_ms);
        if (rec.e[k].kind >= 1 && rec.e[k].kind <= 9) seen[rec.e[k].kind]++;
    }
    for (k = 1; k <= 9; k++) CHECK_MSG(seen[k] > 0, "kind %d never seen", k);
    CHECK_EQ(rec.undocumented, 0);
}

static void t_refused_yes_events(void) {
    fix f;
    efix(&f, 0, 0, 0, 0, 0);
    f.s.auto_token = 0;
    f.s.acquire_token = 5;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    ldl_lock_release(&f.l);
    rec.n = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);                 /* 5 again: fence regressed */
    CHECK_EQ(rec.n, 3);
    CHECK_EQ(rec.e[1].kind, LDL_EV_HANDED_BACK);
    CHECK_EQ(rec.e[1].token, 5);
    CHECK_EQ(rec.e[2].kind, LDL_EV_REFUSED);
    CHECK_EQ(rec.e[2].reason, LDL_REASON_FENCE_REGRESSED);
    CHECK_EQ(rec.e[2].token, 5);
    CHECK_EQ(ldl_lock_counters(&f.l)->refused, 1);
    CHECK_EQ(ldl_lock_counters(&f.l)->handbacks, 1);
    /* a late yes: its window closed during the call */
    f.s.acquire_token = 6;
    f.s.clock = &f.c;
    f.s.call_ms = 295;
    rec.n = 0;
    CHECK_EQ(ldl_lock_acquire(&f.l), 0);
    CHECK_EQ(rec.e[2].reason, LDL_REASON_LEASE_EXPIRED);
    CHECK_EQ(rec.e[2].latency_ms, 295);
    CHECK_EQ(ldl_lock_counters(&f.l)->refused, 2);
}

static void t_hook_observes_only(void) {
    fix f;
    efix(&f, 0, 0, 0, 0, 0);
    rec.reenter = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_tick(&f.l), 1);
    f.s.renew_rc = 0;
    CHECK_EQ(ldl_lock_tick(&f.l), 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
    CHECK(rec.n >= 5);
    CHECK_EQ(rec.reentry_bad, 0);
    CHECK_EQ(f.s.acquire_calls, 1);
    CHECK_EQ(f.s.release_calls, 1);
    /* the lock still works afterwards */
    rec.reenter = 0;
    f.s.renew_rc = 1;
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_lock_valid_ms(&f.l), 295);
}

/* ------------------------------------------------------------ holder identity */
static void t_owner_and_inspect(void) {
    fake_container fc;
    fake_clock c = {1000};
    ldl_memstore ms;
    ldl_memstore_slot sl[8];
    ldl_store_ext x;
    ldl_lock a, b;
    ldl_lock_desc da, db;
    ldl_holder h;
    memset(&fc, 0, sizeof fc);
    ldl_memstore_init(&ms, sl, 8, fake_clock_of(&c));
    x = ldl_memstore_ext(&ms);
    desc_for(&da, &fc, NULL, &c, "k", 300);
    desc_use_memstore(&da, &ms);
    da.owner = "alice@host-1";
    da.store_ext = &x;
    db = da;
    db.owner = "bob";
    CHECK_EQ(ldl_lock_init(&a, &da), LDL_OK);
    CHECK_EQ(ldl_lock_init(&b, &db), LDL_OK);
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), 0);
    CHECK_EQ(h.token, 0);
    CHECK_EQ(ldl_lock_acquire(&a), 1);
    CHECK_EQ(ldl_lock_acquire(&b), 0);
    c.now += 100;
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), 1);
    CHECK_EQ(h.token, ldl_lock_fencing_token(&a));
    CHECK_STR(h.owner, "alice@host-1");
    CHECK_EQ(h.ttl_left_ms, 200);
    CHECK_EQ(ldl_lock_release(&a), 1);
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), 0);
    CHECK_STR(h.owner, "");
    CHECK_EQ(ldl_lock_acquire(&b), 1);
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), 1);
    CHECK_STR(h.owner, "bob");
    /* an expired lease is nobody's */
    c.now += 300;
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), 0);
    ldl_lock_dispose(&a);
    ldl_lock_dispose(&b);
}

static void t_owner_truncated_in_memstore(void) {
    fake_clock c = {0};
    ldl_memstore ms;
    ldl_memstore_slot sl[2];
    ldl_store_ext x;
    ldl_holder h;
    char key[LDL_KEY_MAX];
    int64_t tok = 0;
    size_t i;
    for (i = 0; i + 1 < sizeof key; i++) key[i] = 'k';
    key[sizeof key - 1] = 0;
    key[LDL_KEY_MAX - 6] = 0;                            /* 4 bytes of owner fit */
    ldl_memstore_init(&ms, sl, 2, fake_clock_of(&c));
    x = ldl_memstore_ext(&ms);
    CHECK_EQ(x.acquire_owned(x.ctx, key, 100, "ownername", &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, key, &h), 1);
    CHECK_STR(h.owner, "owne");
    /* a key that fills the buffer keeps no owner at all */
    key[LDL_KEY_MAX - 6] = 'k';
    CHECK_EQ(x.acquire_owned(x.ctx, key, 100, "ownername", &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, key, &h), 1);
    CHECK_STR(h.owner, "");
}

/* a plain acquire (no owner) names no owner, whoever held the key before:
   after a release, and after a takeover of an expired lease (the PostgreSQL
   suite checks the same for its table). An outside mutant that kept the
   previous holder's owner survived every core test (issue 25).
   M: ldl__ms_acquire not clearing the owner byte after the key's NUL. */
static void t_plain_acquire_clears_owner(void) {
    fake_clock c = {0};
    ldl_memstore ms;
    ldl_memstore_slot sl[2];
    ldl_store st;
    ldl_store_ext x;
    ldl_holder h;
    int64_t tok = 0;
    ldl_memstore_init(&ms, sl, 2, fake_clock_of(&c));
    st = ldl_memstore_store(&ms);
    x = ldl_memstore_ext(&ms);
    /* takeover: alice's lease expired, a plain acquire takes the key */
    CHECK_EQ(x.acquire_owned(x.ctx, "job", 100, "alice", &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, "job", &h), 1);
    CHECK_STR(h.owner, "alice");
    c.now += 100;
    CHECK_EQ(st.acquire(st.ctx, "job", 100, &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, "job", &h), 1);
    CHECK_EQ(h.token, tok);
    CHECK_STR(h.owner, "");
    /* after a release: the slot is emptied, a plain acquire fills it again */
    CHECK_EQ(st.release(st.ctx, "job", tok), 1);
    CHECK_EQ(x.acquire_owned(x.ctx, "job", 100, "bob", &tok), 1);
    CHECK_EQ(st.release(st.ctx, "job", tok), 1);
    CHECK_EQ(st.acquire(st.ctx, "job", 100, &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, "job", &h), 1);
    CHECK_STR(h.owner, "");
    /* and an owned takeover replaces a longer owner whole */
    c.now += 100;
    CHECK_EQ(x.acquire_owned(x.ctx, "job", 100, "carol-the-long", &tok), 1);
    c.now += 100;
    CHECK_EQ(x.acquire_owned(x.ctx, "job", 100, "dan", &tok), 1);
    CHECK_EQ(ldl_store_inspect(&x, "job", &h), 1);
    CHECK_STR(h.owner, "dan");
}

static int bad_inspect_rc;
static int bad_inspect(void *ctx, const char *key, ldl_holder *out) {
    size_t i;
    (void)ctx; (void)key;
    out->token = 0;                                      /* 1 without a token */
    for (i = 0; i < LDL_OWNER_MAX; i++) out->owner[i] = 'x';   /* no NUL */
    return bad_inspect_rc;
}

static void t_inspect_refuses_bad_input(void) {
    ldl_store_ext x;
    ldl_holder h;
    memset(&x, 0, sizeof x);
    CHECK_EQ(ldl_store_inspect(NULL, "k", &h), LDL_EINVAL);
    CHECK_EQ(ldl_store_inspect(&x, NULL, &h), LDL_EINVAL);
    CHECK_EQ(ldl_store_inspect(&x, "k", NULL), LDL_EINVAL);
    CHECK_EQ(ldl_store_inspect(&x, "", &h), LDL_EINVAL);
    CHECK_EQ(ldl_store_inspect(&x, "a\tb", &h), LDL_EINVAL);     /* as ldl_lock_init */
    CHECK_EQ(ldl_store_inspect(&x, "a\177", &h), LDL_EINVAL);
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), LDL_EUNSUPPORTED);
    x.inspect = bad_inspect;
    bad_inspect_rc = 1;
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), LDL_ESTORE);
    CHECK_EQ(h.owner[0], 0);
    bad_inspect_rc = 2;
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), LDL_ESTORE);
    bad_inspect_rc = -7;
    CHECK_EQ(ldl_store_inspect(&x, "k", &h), -7);
    CHECK_EQ(h.token, 0);
}
#endif /* LDL_NO_ELECTION */

#ifndef LDL_NO_ELECTION
/* ------------------------------------------------------------ run's wait budget */
static fake_clock *sleep_clock;
static uint64_t slept;
static void fake_sleep(void *ctx, uint32_t ms) { (void)ctx; sleep_clock->now += ms; slept += ms; }
static int grant_after;
static void grant_on_third(script_store *s) { if (++grant_after >= 3) s->acquire_rc = 1; }
static int body_runs;
static int count_body(void *scope, void *user) { (void)scope; (void)user; body_runs++; return 0; }

static void t_run_waits_within_budget(void) {
    fix f;
    ldl_run_result r;
    fix_setup(&f, "job", 0, 0);
    f.d.retry.base_ms = 10;
    f.d.retry.give_up_ms = 1000;
    f.d.retry.sleep_ms = fake_sleep;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    sleep_clock = &f.c; slept = 0; grant_after = 0; body_runs = 0;
    f.s.acquire_rc = 0;
    f.s.hook_once = 0;
    f.s.on_acquire = grant_on_third;
    CHECK_EQ(ldl_lock_run(&f.l, count_body, NULL, &r), RUN_RC(LDL_OK));
    if (t_async) return;
    CHECK_EQ(body_runs, 1);
    CHECK_EQ(f.s.acquire_calls, 3);
    CHECK(slept >= 2 && slept <= 10 + 20);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    /* the budget runs out: no grant, nothing left scheduled, never past it */
    f.s.on_acquire = NULL;
    f.s.acquire_rc = 0;
    slept = 0;
    CHECK_EQ(ldl_lock_run(&f.l, count_body, NULL, &r), LDL_ENOTACQUIRED);
    CHECK_EQ(body_runs, 1);
    CHECK(slept < 1000);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
    /* without give_up_ms run tries once */
    f.d.retry.give_up_ms = 0;
    CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_OK);
    f.s.acquire_calls = 0;
    CHECK_EQ(ldl_lock_run(&f.l, count_body, NULL, &r), LDL_ENOTACQUIRED);
    CHECK_EQ(f.s.acquire_calls, 1);
    CHECK_EQ(ldl_lock_retrying(&f.l), 0);
}

#endif /* LDL_NO_ELECTION */

#ifdef LDL_NO_ELECTION
/* the LDL_NO_ELECTION build: every election option is refused at init, and a
   lock without them works as before (the other suites) */
static void noel_sleep(void *ctx, uint32_t ms) { (void)ctx; (void)ms; }
static const ldl_store_ext noel_ext = { NULL, NULL, NULL, NULL };
static void t_no_election_refuses(void) {
    fix f;
#define NOEL(stmt) do { fix_setup(&f, "job", 0, 0); stmt; \
        CHECK_EQ(ldl_lock_init(&f.l, &f.d), LDL_EINVAL); \
        CHECK_MSG(strstr(ldl_lock_why(&f.l), "LDL_NO_ELECTION") != NULL, "why: %s", ldl_lock_why(&f.l)); } while (0)
    NOEL(f.d.retry.base_ms = 10);
    NOEL(f.d.ride_out_ms = 10);
    NOEL((f.d.retry.base_ms = 10, f.d.campaign = 1));
    NOEL(f.d.on_event = on_event);
    NOEL(f.d.on_leading = on_leading);
    NOEL(f.d.owner = "x");
    /* every member of LDL__ELECTION_GROUP, each byte of it counts (the check is
       a table of members, decision 0014): the lowest and the highest byte */
    NOEL(f.d.retry.cap_ms = 1);
    NOEL(f.d.retry.cap_ms = 1u << 24);
    NOEL(f.d.retry.give_up_ms = 1u << 24);
    NOEL(f.d.retry.seed = 1);
    NOEL(f.d.retry.seed = (uint64_t)1 << 63);
    NOEL(f.d.retry.sleep_ms = noel_sleep);
    NOEL(f.d.retry.sleep_ctx = &f);
    NOEL(f.d.ride_out_ms = 1u << 31);
    NOEL(f.d.campaign = 1 << 24);
    NOEL(f.d.store_ext = &noel_ext);
#undef NOEL
}

void suite_election(void) {
    RUN(t_no_election_refuses);
}
#else
void suite_election(void) {
    RUN(t_options_refused);
    RUN(t_schedule_bounds_and_cap);
    RUN(t_schedule_spread_and_seed);
    RUN(t_schedule_give_up);
    RUN(t_give_up_late_poll);
    RUN(t_retry_grants_later);
    RUN(t_release_stops_the_schedule);
    RUN(t_retry_timer_mode);
    RUN(t_ride_out_keeps_then_expires);
    RUN(t_ride_out_recovers);
    RUN(t_ride_out_off_loses);
    RUN(t_ride_out_near_deadline);
    RUN(t_ride_out_timer_mode);
    RUN(t_campaign_loses_and_wins_again);
    RUN(t_events_exact);
    RUN(t_refused_yes_events);
    RUN(t_event_fields_per_kind);
    RUN(t_hook_observes_only);
    RUN(t_owner_and_inspect);
    RUN(t_owner_truncated_in_memstore);
    RUN(t_plain_acquire_clears_owner);
    RUN(t_inspect_refuses_bad_input);
    RUN(t_run_waits_within_budget);
}
#endif
