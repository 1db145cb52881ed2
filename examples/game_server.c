/* examples/game_server.c -- a 60 fps game server that owns 1,000 rooms through Redis leases,
 * all on ONE non-blocking connection: no frame ever waits on Redis.
 *
 *   make examples-redis
 *   redis-server --port 6379 --appendonly yes --appendfsync always      (terminal 0)
 *   ./build/redis/game_server                       (terminal 1: takes every free room)
 *   ./build/redis/game_server 127.0.0.1 6379 20     (terminal 2: gets the rooms the first
 *                                                    one gives up or loses)
 *   kill -STOP <redis-server pid>; sleep 3; kill -CONT <pid>    (frames stay short; the
 *                                                    leases expire by the server's own clock)
 *
 * Arguments (all optional): [host (numeric)] [port] [seconds, 0 = until Ctrl-C] [rooms]
 * Environment: LDL_TTL_MS (default 3000), LDL_PREFIX (default "game").
 *
 * The adapter is driven through the one interface every store fills (adapters/
 * lite_di_lock_view.h, docs/event-loops.md): after the attach line nothing below names Redis
 * but the reconnect's new context. Each frame: v.ops->pump (non-blocking I/O: sends the
 * queued requests, completes the answered ones), then ldl_lock_poll() for every room
 * (applies answers, renews when the heartbeat is due, notices a passed deadline), then
 * "simulates" the rooms it holds (here: adds the fence to a checksum, as a real server would
 * pass it to whatever it writes), then v.ops->pump again (the renewals the polls queued go
 * out now, not a frame later).
 * A room that is neither held nor waiting for an answer is asked for again once a second.
 * The frame waits for the next tick in poll() on the view's fds, so answers are read as soon
 * as they arrive. A failed link is replaced (at most once a second) by a new connection
 * through v.ops->rebind; the fd changes, and the wait asks the view for it every time. Every second it prints the rooms held and the frame-time
 * percentiles of the work part (pump + polls + simulation); at the end the whole run.
 */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "adapters/lite_di_lock_view.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROOMS 10000
#define FRAME_US  16667                 /* 60 fps */

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope;
static void *nop_scope(void *self) { (void)self; return &g_scope; }

typedef struct room {
    ldl_lock lock;
    char     key[24];
    uint64_t retry_at_us;               /* when to ask again after a "no" */
} room;

static room          g_rooms[MAX_ROOMS];
static unsigned long g_estate;          /* acquires refused as LDL_ESTATE: 0 in a good loop */
static unsigned long g_lost;            /* rooms lost (on_lost: its reason is an int, LDL_REASON_*) */
static void on_lost(void *user, int reason) { (void)user; (void)reason; g_lost++; }
static ldl_redis_req g_reqs[2 * MAX_ROOMS + 64];
static uint32_t      g_frame_us[600000];    /* every frame's work time, for the percentiles */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* p50 / p99 / p99.9 / max of v[0..n) (sorted in place) into out */
static void percentiles(uint32_t *v, size_t n, char *out, size_t cap) {
    if (n == 0) { snprintf(out, cap, "no frames"); return; }
    qsort(v, n, sizeof *v, cmp_u32);
    snprintf(out, cap, "p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms over %lu frames",
             v[n / 2] / 1000.0, v[(n * 99) / 100] / 1000.0, v[(n * 999) / 1000] / 1000.0,
             v[n - 1] / 1000.0, (unsigned long)n);
}

int main(int argc, char **argv) {
    const char *host = argc > 1 ? argv[1] : "127.0.0.1";
    int port = argc > 2 ? atoi(argv[2]) : 6379;
    long seconds = argc > 3 ? atol(argv[3]) : 0;
    int nrooms = argc > 4 ? atoi(argv[4]) : 1000;
    const char *ttl_env = getenv("LDL_TTL_MS"), *prefix = getenv("LDL_PREFIX");
    uint32_t ttl = ttl_env && *ttl_env ? (uint32_t)atol(ttl_env) : 3000;
    redisContext *c;
    ldl_redis_async ra;
    ldl_view v;
    ldl_view_stats vs;
    uint64_t start, next_frame, next_report, next_reconnect = 0, checksum = 0;
    size_t nframes = 0, window_start = 0;
    int i, link_down = 0;

    if (nrooms < 1 || nrooms > MAX_ROOMS) { fprintf(stderr, "rooms: 1..%d\n", MAX_ROOMS); return 2; }
    if (!prefix || !*prefix) prefix = "game";
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);          /* hiredis writes with plain write() */

    c = redisConnectNonBlock(host, port);
    if (!c || c->err) { fprintf(stderr, "connect: %s\n", c ? c->errstr : "out of memory"); return 1; }
    if (ldl_redis_async_init(&ra, c, prefix, g_reqs, (size_t)(2 * nrooms + 64)) != LDL_OK) {
        fprintf(stderr, "init: %s\n", ldl_redis_async_why(&ra));
        return 1;
    }
    ldl_view_redis_async(&v, &ra);       /* the one Redis-specific line of the loop's setup */
    for (i = 0; i < nrooms; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        snprintf(g_rooms[i].key, sizeof g_rooms[i].key, "room:%d", i);
        d.container.scope = nop_scope;
        d.container.value = nop_value;
        d.container.shutdown = nop_shutdown;
        d.key = g_rooms[i].key;
        d.ttl_ms = ttl;
        d.async_store = &v.async;
        d.on_lost = on_lost;
        if (ldl_lock_init(&g_rooms[i].lock, &d) != LDL_OK) {
            fprintf(stderr, "lock init: %s\n", ldl_lock_why(&g_rooms[i].lock));
            return 1;
        }
    }
    printf("game_server: %d rooms, ttl %u ms, one connection to %s:%d, 60 fps\n", nrooms, ttl, host, port);
    fflush(stdout);

    start = now_us();
    next_frame = start;
    next_report = start + 1000000u;
    while (!g_stop && (seconds == 0 || now_us() - start < (uint64_t)seconds * 1000000u)) {
        uint64_t t0 = now_us(), t1;
        int held = 0;
        /* 1. the store's I/O, never waiting */
        if (v.ops->pump(v.self) < 0) {
            if (!link_down) printf("link failed: %s (reconnecting)\n", v.ops->why(v.self));
            link_down = 1;
            if (t0 >= next_reconnect) {                 /* at most once a second */
                redisContext *nc = redisConnectNonBlock(host, port);
                if (nc && v.ops->rebind(v.self, nc) == LDL_OK) {   /* connects inside later pumps */
                    redisFree(c);                       /* the old context is ours again */
                    c = nc;
                } else if (nc) redisFree(nc);
                next_reconnect = t0 + 1000000u;
            }
        } else if (link_down) {
            ldl_view_fd f[1];
            if (v.ops->fds(v.self, f, 1) == 1 && (f[0].events & LDL_WANT_READ)) {   /* connected */
                printf("link up again\n");
                link_down = 0;
            }
        }
        /* 2. every room's lock */
        for (i = 0; i < nrooms; i++) {
            room *r = &g_rooms[i];
            int rc = ldl_lock_poll(&r->lock);
            if (rc == 1) {
                checksum += (uint64_t)ldl_lock_fencing_token(&r->lock);   /* "simulate" the room */
                held++;
            } else if (rc == 0 && !ldl_lock_pending(&r->lock) && t0 >= r->retry_at_us) {
                /* a lost room owes its release first; while that release is in flight
                   (LDL_EINPROGRESS) an acquire would answer LDL_ESTATE, so ask again once
                   it has been answered: poll answers 0 again from RELEASED */
                if (ldl_lock_state(&r->lock) == LDL_LOST &&
                    ldl_lock_release(&r->lock) == LDL_EINPROGRESS) continue;
                if (ldl_lock_acquire(&r->lock) == LDL_ESTATE) g_estate++;
                r->retry_at_us = t0 + 1000000u;
            }
        }
        v.ops->pump(v.self);                           /* send what the polls queued */
        t1 = now_us();
        if (nframes < sizeof g_frame_us / sizeof g_frame_us[0]) g_frame_us[nframes++] = (uint32_t)(t1 - t0);
        if (t1 >= next_report) {
            char p[160];
            static uint32_t win[600];
            size_t n = nframes - window_start;
            if (n > 600) n = 600;
            memcpy(win, g_frame_us + nframes - n, n * sizeof *win);
            percentiles(win, n, p, sizeof p);
            v.ops->stats(v.self, &vs);
            printf("held %d of %d rooms; lost %lu; acquire ESTATE %lu; in flight %lu; frame work %s\n", held, nrooms, g_lost, g_estate,
                   (unsigned long)vs.live, p);
            fflush(stdout);
            window_start = nframes;
            next_report += 1000000u;
        }
        /* 3. wait for the next frame, waking early when the socket has something */
        next_frame += FRAME_US;
        for (;;) {
            uint64_t now = now_us();
            struct pollfd pf;
            ldl_view_fd f[1];
            if (now >= next_frame || g_stop) break;
            if (v.ops->fds(v.self, f, 1) != 1) {       /* the link is down: no fd now */
                struct timespec ts = { 0, 1000000L };
                nanosleep(&ts, NULL);
                continue;
            }
            pf.fd = f[0].fd;                           /* asked every time: a rebind changes it */
            pf.events = (short)(((f[0].events & LDL_WANT_READ) ? POLLIN : 0) | ((f[0].events & LDL_WANT_WRITE) ? POLLOUT : 0));
            pf.revents = 0;
            if (poll(&pf, 1, (int)((next_frame - now + 999) / 1000)) <= 0) continue;
            v.ops->pump(v.self);                       /* answers in as they come */
        }
        if (now_us() > next_frame + 10u * FRAME_US) next_frame = now_us();  /* we were stopped */
    }

    /* step down: release every room, pumping until each release is answered (max 2 s) */
    {
        int released = 0, pending = 1;
        uint64_t end = now_us() + 2000000u;
        char p[160];
        static int answer[MAX_ROOMS];
        for (i = 0; i < nrooms; i++) answer[i] = ldl_lock_release(&g_rooms[i].lock);
        while (pending && now_us() < end) {
            struct timespec ts = { 0, 1000000L };
            v.ops->pump(v.self);
            for (pending = 0, i = 0; i < nrooms; i++) {
                if (answer[i] == LDL_EINPROGRESS) answer[i] = ldl_lock_release(&g_rooms[i].lock);
                pending += answer[i] == LDL_EINPROGRESS;
            }
            nanosleep(&ts, NULL);
        }
        for (i = 0; i < nrooms; i++) released += answer[i] == 1;
        for (i = 0; i < nrooms; i++) ldl_lock_dispose(&g_rooms[i].lock);
        v.ops->pump(v.self);
        percentiles(g_frame_us, nframes, p, sizeof p);
        v.ops->stats(v.self, &vs);
        printf("released %d rooms; whole run: frame work %s; requests %llu, answered %llu, links given up %llu "
               "(checksum %llu)\n", released, p, (unsigned long long)vs.submitted, (unsigned long long)vs.answered,
               (unsigned long long)vs.link_failures, (unsigned long long)checksum);
    }
    redisFree(c);
    return 0;
}
