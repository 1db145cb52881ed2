/* game_loop.c - manual mode: a server loop that polls the lock every frame
   and sleeps exactly as long as ldl_lock_due_in_ms() allows (capped by its
   own frame budget). Only the holder runs the "world tick" work.

   Runs for ~1.5 s of real time with a 600 ms lease, so several heartbeats
   happen; prints what it did and exits 0 if it held the lock throughout. */
#define _POSIX_C_SOURCE 200112L          /* nanosleep under -std=c99 */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <stdio.h>
#include <time.h>

static void sleep_ms(uint32_t ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    nanosleep(&ts, NULL);
}

static void on_lost(void *user, int reason) {
    (void)user;
    printf("lost the lock: %s -- stop the leader-only work now\n", ldl_reason_name(reason));
}

int main(void) {
    ldl_scope root;
    ldl_lock lock;
    ldl_lock_desc d = {0};
    uint64_t start, now;
    unsigned frames = 0, world_ticks = 0, sleeps = 0;
    uint32_t frame_budget_ms = 16;      /* ~60 frames per second */

    ldl_scope_init(&root, NULL, 0);     /* no run(): no child scopes needed */
    d.container = ldl_scope_container(&root);
    d.key = "world-simulation";
    d.ttl_ms = 600;                     /* heartbeat 200 ms, drift 8 ms */
    d.on_lost = on_lost;                /* zero clock and timers: built-in clock, manual mode */
    if (ldl_lock_init(&lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&lock)); return 1; }
    if (ldl_lock_acquire(&lock) != 1) { printf("someone else runs the world\n"); return 1; }
    printf("acquired \"world-simulation\" with fence %lld\n", (long long)ldl_lock_fencing_token(&lock));

    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        start = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    }
    for (;;) {
        uint32_t due, nap;
        struct timespec ts;
        /* 1. the per-frame call: a clock read and a compare unless a heartbeat is due */
        if (ldl_lock_poll(&lock) != 1) break;
        /* 2. leader-only work, fenced */
        world_ticks++;
        frames++;
        /* 3. sleep no longer than the lock allows */
        due = ldl_lock_due_in_ms(&lock);
        nap = due < frame_budget_ms ? due : frame_budget_ms;
        if (nap) { sleep_ms(nap); sleeps++; }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
        if (now - start >= 1500) break;
    }
    printf("%u frames, %u world ticks, %u sleeps; still held: %s, fence %lld, valid for %u ms more\n",
           frames, world_ticks, sleeps, ldl_lock_held(&lock) ? "yes" : "no",
           (long long)ldl_lock_fencing_token(&lock), (unsigned)ldl_lock_valid_ms(&lock));
    if (!ldl_lock_held(&lock)) return 1;
    printf("release -> %d\n", ldl_lock_release(&lock));
    ldl_lock_dispose(&lock);
    return 0;
}
