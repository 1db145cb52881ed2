/* posix_timers.c - timer mode: a real ldl_timers vtable on Linux built from
   timerfd + poll(2). Every grant or renew arms ONE one-shot timerfd for the
   heartbeat; when it fires, the loop calls the lock's fire callback, which
   renews and re-arms (a chain, never an interval). The loop itself never
   calls tick. Runs ~1.2 s with a 300 ms lease; exits 0 when the chained
   heartbeat kept the lease alive and released it cleanly. */
#define _GNU_SOURCE
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <poll.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MAX_TIMERS 4

typedef struct fd_timers {           /* a tiny one-shot timer table */
    struct { int fd; void (*fire)(void *); void *arg; } t[MAX_TIMERS];
    unsigned armed_total, fired_total, cleared_total;
} fd_timers;

static uintptr_t fdt_set(void *ctx, void (*fire)(void *), void *arg, uint32_t delay_ms) {
    fd_timers *ft = (fd_timers *)ctx;
    struct itimerspec its = {{0, 0}, {0, 0}};
    int i, fd;
    for (i = 0; i < MAX_TIMERS && ft->t[i].fd >= 0; i++) {}
    if (i == MAX_TIMERS) return 0;                        /* 0 = could not arm */
    fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) return 0;
    its.it_value.tv_sec = delay_ms / 1000u;                /* it_interval stays 0: one-shot */
    its.it_value.tv_nsec = (long)(delay_ms % 1000u) * 1000000L;
    if (delay_ms == 0) its.it_value.tv_nsec = 1;
    if (timerfd_settime(fd, 0, &its, NULL) != 0) { close(fd); return 0; }
    ft->t[i].fd = fd; ft->t[i].fire = fire; ft->t[i].arg = arg;
    ft->armed_total++;
    return (uintptr_t)(i + 1);                             /* non-zero handle */
}

static void fdt_clear(void *ctx, uintptr_t h) {
    fd_timers *ft = (fd_timers *)ctx;
    int i = (int)h - 1;
    if (i < 0 || i >= MAX_TIMERS || ft->t[i].fd < 0) return;
    close(ft->t[i].fd);
    ft->t[i].fd = -1;
    ft->cleared_total++;
}

/* wait up to timeout_ms for a timer; fire the ones that expired */
static void fdt_run(fd_timers *ft, int timeout_ms) {
    struct pollfd p[MAX_TIMERS];
    int idx[MAX_TIMERS], n = 0, i;
    for (i = 0; i < MAX_TIMERS; i++)
        if (ft->t[i].fd >= 0) { p[n].fd = ft->t[i].fd; p[n].events = POLLIN; idx[n++] = i; }
    if (poll(p, (nfds_t)n, timeout_ms) <= 0) return;
    for (i = 0; i < n; i++) {
        if (p[i].revents & POLLIN) {
            int k = idx[i];
            void (*fire)(void *) = ft->t[k].fire;
            void *arg = ft->t[k].arg;
            close(ft->t[k].fd);                           /* spent before it runs */
            ft->t[k].fd = -1;
            ft->fired_total++;
            fire(arg);                                    /* may arm the next one */
        }
    }
}

static void on_lost(void *user, int reason) {
    (void)user;
    printf("lost: %s\n", ldl_reason_name(reason));
}

int main(void) {
    fd_timers ft;
    ldl_scope root;
    ldl_lock lock;
    ldl_lock_desc d = {0};
    int i, ok;
    for (i = 0; i < MAX_TIMERS; i++) ft.t[i].fd = -1;
    ft.armed_total = ft.fired_total = ft.cleared_total = 0;

    ldl_scope_init(&root, NULL, 0);
    d.container = ldl_scope_container(&root);
    d.key = "cron:cleanup";
    d.ttl_ms = 300;                                       /* heartbeat every 100 ms */
    d.timers.set_timeout = fdt_set;
    d.timers.clear_timeout = fdt_clear;
    d.timers.ctx = &ft;
    d.on_lost = on_lost;
    if (ldl_lock_init(&lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&lock)); return 1; }
    if (ldl_lock_acquire(&lock) != 1) { printf("not acquired\n"); return 1; }
    printf("acquired with fence %lld; the timer chain now keeps the lease alive\n",
           (long long)ldl_lock_fencing_token(&lock));

    for (i = 0; i < 12; i++) {                            /* ~1.2 s of event loop */
        fdt_run(&ft, 100);
        if (ldl_lock_poll(&lock) != 1) break;             /* timer mode: only checks the deadline */
    }
    printf("after ~1.2 s: held=%d, timers armed=%u fired=%u cleared=%u\n",
           ldl_lock_held(&lock), ft.armed_total, ft.fired_total, ft.cleared_total);
    ok = ldl_lock_held(&lock) && ft.fired_total >= 5 && ft.armed_total == ft.fired_total + 1;
    printf("release -> %d (the last armed timer is cleared first)\n", ldl_lock_release(&lock));
    for (i = 0; i < MAX_TIMERS; i++) if (ft.t[i].fd >= 0) ok = 0;   /* nothing left armed */
    ldl_lock_dispose(&lock);
    printf("%s\n", ok ? "chained one-shot heartbeat: ok" : "UNEXPECTED timer behaviour");
    return ok ? 0 : 1;
}
