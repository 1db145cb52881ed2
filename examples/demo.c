/* demo.c - `make demo`: why a lease lock needs a fencing token.

   Two workers share one in-process MemoryStore and compete for the lock
   "nightly-report" on simulated time (no sleeping: the demo runs in a blink
   but prints the timeline as if it took 12 seconds). Worker A wins, writes,
   then freezes (a long GC pause, a SIGSTOP, a swapped-out VM) past its
   lease. Worker B takes over with a higher fence. When A wakes up it still
   tries to finish its write -- and the report store rejects it, because it
   remembers the highest fence it has seen. Exit status 0 only if the stale
   write was rejected. */
#define LITE_DI_LOCK_IMPLEMENTATION      /* this file also holds the implementation */
#include "lite_di_lock.h"
#include <stdarg.h>
#include <stdio.h>

/* ---------------------------------------------------------------- time */
static uint64_t sim_ms;                                  /* the simulated clock */
static uint64_t sim_now(void *ctx) { (void)ctx; return sim_ms; }

static void say(const char *who, const char *fmt, ...) {
    va_list ap;
    printf("[t=%5.1fs] %-9s ", (double)sim_ms / 1000.0, who);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* ---------------------------------------------------------------- the fenced resource */
typedef struct report_store {
    int64_t highest_fence;       /* the highest fence ever accepted */
    char    content[256];
    int     accepted, rejected;
} report_store;

/* the resource side of the fencing contract: reject any fence below the highest */
static int report_write(report_store *r, const char *who, int64_t fence, const char *text) {
    if (fence < r->highest_fence) {
        r->rejected++;
        say("reports", "write \"%s\" from %s with fence %lld -> REJECTED (stale: %lld < %lld)",
            text, who, (long long)fence, (long long)fence, (long long)r->highest_fence);
        return -1;
    }
    r->highest_fence = fence;
    snprintf(r->content, sizeof r->content, "%s (by %s, fence %lld)", text, who, (long long)fence);
    r->accepted++;
    say("reports", "write \"%s\" from %s with fence %lld -> accepted", text, who, (long long)fence);
    return 0;
}

/* ---------------------------------------------------------------- workers */
typedef struct worker {
    const char *name;
    ldl_lock    lock;
    int         paused;          /* frozen: does not run at all */
} worker;

static void on_lost(void *user, int reason) {
    worker *w = (worker *)user;
    say(w->name, "on_lost: the lease is gone (%s)", ldl_reason_name(reason));
}

static report_store reports;

typedef struct b_job { worker *w; } b_job;

/* worker B's critical section, run through ldl_lock_run(): the fence comes
   out of the child scope, guaranteed >= 1 or this body never runs */
static int b_body(void *scope, void *user) {
    b_job *job = (b_job *)user;
    const int64_t *fence = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
    say(job->w->name, "in the critical section with fence %lld", (long long)*fence);
    return report_write(&reports, job->w->name, *fence, "nightly report v2");
}

int main(void) {
    ldl_memstore ms;
    ldl_memstore_slot slots[4];
    ldl_store store;
    ldl_clock clock;
    ldl_scope root, pool[2];
    ldl_lock_desc d = {0};
    worker a = {0}, b = {0};
    int64_t a_fence = 0;
    int b_done = 0, rc;
    b_job job;

    clock.now_ms = sim_now;
    clock.ctx = NULL;
    ldl_memstore_init(&ms, slots, 4, clock);
    store = ldl_memstore_store(&ms);
    ldl_scope_init(&root, pool, 2);

    d.container = ldl_scope_container(&root);
    d.key = "nightly-report";
    d.ttl_ms = 3000;             /* heartbeat every 1000 ms (ttl/3), drift 32 ms */
    d.store = &store;
    d.clock = clock;
    d.on_lost = on_lost;
    a.name = "worker-A"; d.user = &a;
    if (ldl_lock_init(&a.lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&a.lock)); return 1; }
    b.name = "worker-B"; d.user = &b;
    if (ldl_lock_init(&b.lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&b.lock)); return 1; }

    printf("lite_di_lock %s demo: two workers, one lock \"nightly-report\", TTL 3.0 s, heartbeat 1.0 s\n",
           LDL_VERSION);
    printf("The report store keeps the highest fence it has seen and rejects lower ones.\n\n");

    for (sim_ms = 0; sim_ms <= 12000; sim_ms += 100) {
        /* ---- worker A: a hand-driven lifecycle (acquire, poll every frame) */
        if (sim_ms == 2100) {
            a.paused = 1;
            say(a.name, "FREEZES (a 5 s GC pause / SIGSTOP): no heartbeat, no polling");
        }
        if (sim_ms == 7100) {
            a.paused = 0;
            say(a.name, "wakes up, unaware that 5 s passed, and finishes its write");
            report_write(&reports, a.name, a_fence, "nightly report v1, final part");
            rc = ldl_lock_poll(&a.lock);
            say(a.name, "polls its lock -> %s: state %s, reason %s", rc == 1 ? "held" : "not held",
                ldl_state_name(ldl_lock_state(&a.lock)), ldl_reason_name(ldl_lock_reason(&a.lock)));
            say(a.name, "(its local deadline passed while frozen: it never renewed a dead lease)");
            rc = ldl_lock_release(&a.lock);
            say(a.name, "releases its old lease -> store answers %d (that lease expired and was taken over)", rc);
        }
        if (!a.paused && sim_ms < 7100) {
            if (sim_ms == 0) {
                rc = ldl_lock_acquire(&a.lock);
                a_fence = ldl_lock_fencing_token(&a.lock);
                say(a.name, "acquire -> %s, fence %lld", rc == 1 ? "granted" : "refused", (long long)a_fence);
                report_write(&reports, a.name, a_fence, "nightly report v1, part 1");
            } else if (ldl_lock_held(&a.lock)) {
                uint32_t before = ldl_lock_valid_ms(&a.lock);
                ldl_lock_poll(&a.lock);                 /* renews when the heartbeat is due */
                if (ldl_lock_valid_ms(&a.lock) > before)
                    say(a.name, "heartbeat: lease renewed, valid for another %u ms",
                        (unsigned)ldl_lock_valid_ms(&a.lock));
            }
        }

        /* ---- worker B: tries once a second with ldl_lock_run() */
        if (!b_done && sim_ms % 1000 == 500) {
            ldl_run_result r;
            job.w = &b;
            rc = ldl_lock_run(&b.lock, b_body, &job, &r);
            if (rc == LDL_ENOTACQUIRED) {
                say(b.name, "tries the lock -> busy (%s), will retry", ldl_strerror(rc));
            } else {
                say(b.name, "run() finished: %s; child scope shut down, lease released (store answered %d)",
                    ldl_strerror(rc), r.release_rc);
                b_done = 1;
            }
        }
    }

    printf("\nFinal report: %s\n", reports.content);
    printf("Writes accepted: %d, rejected: %d. Highest fence seen: %lld.\n",
           reports.accepted, reports.rejected, (long long)reports.highest_fence);
    if (reports.rejected == 1 && reports.highest_fence == 2) {
        printf("The frozen worker's late write was REJECTED by its fence: the report is B's, intact.\n");
        return 0;
    }
    printf("UNEXPECTED: the stale write was not rejected.\n");
    return 1;
}
