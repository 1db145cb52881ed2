/* examples/elector.c -- leader election in campaign mode, with every event printed.
 *
 * Three terminals, one leader: start it three times with different names, watch one lead
 * (it prints "LEADING with fence N", then a line of fenced work every second), kill it
 * (kill -9: another takes over once its lease ran out in Redis; Ctrl-C: it steps down, so
 * another takes over at its next attempt), and watch the hand-over in the events.
 *
 *   make examples-elector                             (needs hiredis)
 *   redis-server --port 6379                          (terminal 0)
 *   ./build/examples/elector --redis 127.0.0.1:6379 --name alpha     (terminals 1, 2, 3:
 *   ./build/examples/elector --redis 127.0.0.1:6379 --name bravo      one of them with
 *   ./build/examples/elector --redis 127.0.0.1:6379 --name charlie --async     --async)
 *   ./build/examples/elector --memory                 (no Redis: three electors in one process)
 *
 * Options: --redis HOST:PORT (numeric address), --name NAME (default: pid-<pid>; stored with
 * the lease as its owner, so a blocking follower prints who leads), --key KEY (default
 * "elector"), --ttl MS (default 3000), --async (the non-blocking Redis view: one loop that
 * pumps, polls and waits in poll(2) on the socket; it stores the owner but cannot inspect
 * without waiting, so its follower lines show the last store answer), --memory (no Redis:
 * see run_memory below). SIGINT/SIGTERM: step down (release), dispose, exit 0.
 *
 * The lock does the electing (desc.campaign = 1): ldl_lock_acquire is called ONCE; after
 * that ldl_lock_poll makes each attempt when it is due (jittered backoff, desc.retry),
 * renews while leading, rides out brief store errors (desc.ride_out_ms) and, after a loss,
 * competes again by itself. The program only calls poll, sleeps as long as
 * ldl_lock_due_in_ms allows, and does the leader's work while poll answers 1.
 *
 * Each line: the time (s.ms of CLOCK_MONOTONIC, so the three terminals of one host compare;
 * simulated ms with --memory), the name, then what happened. EVENT lines are ldl_event:
 * kind, the store's raw answer (1 yes, 0 no = someone else leads, < 0 a store error), the
 * token, the reason, the store call's latency and the ms to the next try.
 */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

/* one elector: its lock, and what the prints need */
typedef struct elector {
    const char *name;
    ldl_lock lock;
    ldl_clock clock;            /* the lock's clock: the stamps use it too */
    uint64_t next_line;         /* when the next once-a-second line is due */
    int64_t fence;              /* the fence we lead with, 0 = following */
    int down;                   /* --memory: "crashed", not polling */
} elector;

static uint64_t mono_ms(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void say_at(const elector *e, uint64_t t, const char *fmt, ...)
{
    va_list ap;
    printf("%6u.%03u %-8s ", (unsigned)(t / 1000u), (unsigned)(t % 1000u), e->name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}
#define say(e, ...) say_at((e), (e)->clock.now_ms((e)->clock.ctx), __VA_ARGS__)

static const char *event_name(int kind)
{
    static const char *const names[] = { "?", "ATTEMPT", "GRANTED", "REFUSED", "RENEWED",
                                         "RENEW_ERROR", "LOST", "RELEASED", "HANDED_BACK",
                                         "GAVE_UP" };
    return kind >= 1 && kind <= LDL_EV_GAVE_UP ? names[kind] : "?";
}

/* desc.on_event: observe only (calls into the lock from here answer LDL_ESTATE) */
static void on_event(void *user, const ldl_event *ev)
{
    const elector *e = (const elector *)user;
    char next[16] = "none";
    if (ev->next_ms != UINT32_MAX) sprintf(next, "%ums", (unsigned)ev->next_ms);
    say(e, "EVENT %-11s raw=%d token=%lld reason=%s latency=%ums next=%s", event_name(ev->kind),
        ev->raw, (long long)ev->token, ldl_reason_name(ev->reason), (unsigned)ev->latency_ms, next);
}

/* desc.on_leading: every grant, after the lock is HELD */
static void on_leading(void *user, int64_t fence)
{
    elector *e = (elector *)user;
    e->fence = fence;
    e->next_line = 0;                       /* work at once */
    say(e, "LEADING with fence %lld", (long long)fence);
}

/* desc.on_lost: stop the leader's work NOW; the campaign competes again by itself */
static void on_lost(void *user, int reason)
{
    elector *e = (elector *)user;
    say(e, "LOST the lead (%s): following again", ldl_reason_name(reason));
    e->fence = 0;
}

/* the options every elector shares; ttl is the lease, the rest follows from it */
static void election_desc(ldl_lock_desc *d, elector *e, const char *key, uint32_t ttl,
                          ldl_container container)
{
    memset(d, 0, sizeof *d);
    d->container = container;
    d->key = key;
    d->ttl_ms = ttl;                        /* heartbeat = ttl/3, drift = ttl/100 + 2 */
    d->clock = e->clock;
    d->campaign = 1;                        /* compete, lead, after a loss compete again */
    d->retry.base_ms = ttl / 20;            /* full-jitter backoff from ttl/20 ... */
    d->retry.cap_ms = ttl / 2;              /* ... up to ttl/2 between attempts */
    d->ride_out_ms = ttl / 3 / 2;           /* a renew store error: try again after half a
                                               heartbeat, while the lease is still trusted */
    d->on_event = on_event;
    d->on_leading = on_leading;
    d->on_lost = on_lost;
    d->user = e;
}

/* once a second: the leader's fenced work (fence = what poll found, 0 = not
   leading), or a follower's view */
static void every_second(elector *e, int64_t fence, const ldl_store_ext *ext, const char *key)
{
    ldl_holder h;
    uint64_t t = e->clock.now_ms(e->clock.ctx);
    if (t < e->next_line) return;
    e->next_line = t + 1000;
    if (fence) {                            /* a real leader passes the fence downstream */
        /* t was read BEFORE valid_ms, which reads the clock again: a non-zero answer
           means the lease was still trusted at t, so the line stamped t is inside it */
        uint32_t left = ldl_lock_valid_ms(&e->lock);
        if (left == 0) return;              /* lost since poll (a pause): no work */
        say_at(e, t, "working with fence %lld (lease valid %u ms more)", (long long)fence,
               (unsigned)left);
    } else {                                /* who leads: ask the store, without taking it */
        int rc = ext ? ldl_store_inspect(ext, key, &h) : LDL_EUNSUPPORTED;
        if (rc == 1)
            say_at(e, t, "following %s (fence %lld, %u ms left)", h.owner[0] ? h.owner : "?",
                   (long long)h.token, (unsigned)h.ttl_left_ms);
        else if (rc == 0)
            say_at(e, t, "following: nobody leads right now");
        else                                /* no inspect: raw 0 = someone leads, < 0 = error */
            say_at(e, t, "following (last store answer %d)", ldl_lock_raw_answer(&e->lock));
    }
}

/* poll; the fence while leading, else 0 */
static int64_t poll_fence(elector *e)
{
    return ldl_lock_poll(&e->lock) == 1 ? ldl_lock_fencing_token(&e->lock) : 0;
}

/* before dispose: what the lock counted (ldl_lock_counters is a plain read) */
static void bye(const elector *e)
{
    const ldl_counters *n = ldl_lock_counters(&e->lock);
    unsigned k, losses = 0;
    for (k = 0; k < sizeof n->losses / sizeof n->losses[0]; k++) losses += n->losses[k];
    say(e, "bye: %u attempts, %u grants, %u renewals, %u store errors, %u losses, "
        "worst latency %u ms", (unsigned)n->attempts, (unsigned)n->grants,
        (unsigned)n->renewals, (unsigned)n->store_errors, losses, (unsigned)n->worst_latency_ms);
}

/* SIGINT/SIGTERM: step down. release stops the campaign (no attempt until the next
   ldl_lock_acquire) and gives a held lease back: another elector wins its next attempt. */
static void step_down(elector *e)
{
    if (ldl_lock_held(&e->lock)) say(e, "stepping down");
    (void)ldl_lock_release(&e->lock);
}

/* ------------------------------------------------------------ --memory
   Three electors share one MemoryStore and one simulated clock (10 ms steps, no
   sleeping). At 1.5 s the leader "crashes": it stops polling, its lease runs
   out in the store and another elector takes over with a higher fence. At 4 s
   it comes back: its first poll finds the deadline passed (LEASE_EXPIRED) and
   it follows. Exits 0 only if the hand-over happened. */
typedef struct sim { uint64_t now; } sim;
static uint64_t sim_ms(void *ctx) { return ((sim *)ctx)->now; }

static int run_memory(void)
{
    static const char *const names[3] = { "alpha", "bravo", "charlie" };
    static elector el[3];                   /* static: zeroed */
    sim t = { 0 };
    ldl_clock clk = { sim_ms, NULL };
    ldl_memstore ms;
    ldl_memstore_slot slots[4];
    ldl_store store;
    ldl_store_ext ext;
    ldl_scope root;
    int i, crashed = -1;
    int64_t first = 0, second = 0;

    clk.ctx = &t;
    ldl_memstore_init(&ms, slots, 4, clk);
    store = ldl_memstore_store(&ms);
    ext = ldl_memstore_ext(&ms);
    ldl_scope_init(&root, NULL, 0);
    for (i = 0; i < 3; i++) {
        ldl_lock_desc d;
        el[i].name = names[i];
        el[i].clock = clk;
        election_desc(&d, &el[i], "elector", 1000, ldl_scope_container(&root));
        d.store = &store;
        d.store_ext = &ext;                 /* the owner is kept with the lease */
        d.owner = names[i];
        d.retry.seed = (uint64_t)i + 1;     /* the same run every time */
        if (ldl_lock_init(&el[i].lock, &d) != LDL_OK) {
            fprintf(stderr, "lock init: %s\n", ldl_lock_why(&el[i].lock));
            return 1;
        }
        (void)ldl_lock_acquire(&el[i].lock); /* starts competing */
    }
    for (; t.now <= 5000; t.now += 10) {
        if (t.now == 1500)
            for (i = 0; i < 3; i++)
                if (ldl_lock_held(&el[i].lock)) {
                    say(&el[i], "CRASH (stops polling; its lease runs out in the store)");
                    el[i].down = 1;
                    crashed = i;
                    first = el[i].fence;
                }
        if (t.now == 4000 && crashed >= 0) {
            say(&el[crashed], "BACK (polls again)");
            el[crashed].down = 0;
        }
        for (i = 0; i < 3; i++) {
            int64_t fence;
            if (el[i].down) continue;
            fence = poll_fence(&el[i]);
            if (fence && i != crashed && !second && first) second = fence;
            every_second(&el[i], fence, &ext, "elector");
        }
    }
    for (i = 0; i < 3; i++) {
        step_down(&el[i]);
        bye(&el[i]);
        ldl_lock_dispose(&el[i].lock);
    }
    if (first >= 1 && second > first) {
        printf("OK: hand-over from fence %lld to fence %lld\n", (long long)first, (long long)second);
        return 0;
    }
    printf("FAILED: no hand-over (fences %lld, %lld)\n", (long long)first, (long long)second);
    return 1;
}

/* ------------------------------------------------------------ Redis */
/* --async: wait until the socket is ready for what the pump wants, at most ms */
static void wait_socket(const ldl_redis_async *ra, int ms)
{
    int events, fd = ldl_redis_async_fd(ra, &events);   /* -1: the link failed */
    struct pollfd p;
    p.fd = fd;
    p.events = (short)(((events & LDL_WANT_READ) ? POLLIN : 0) |
                       ((events & LDL_WANT_WRITE) ? POLLOUT : 0));
    p.revents = 0;
    (void)poll(&p, fd >= 0 ? 1 : 0, ms);     /* a signal ends it early */
}

static void usage(void)
{
    fprintf(stderr, "usage: elector --redis HOST:PORT [--name NAME] [--key KEY] [--ttl MS] [--async]\n"
                    "       elector --memory\n");
}

int main(int argc, char **argv)
{
    const char *addr = NULL, *name = NULL, *key = "elector";
    char host[64], pidname[32], why[256];
    long ttl_arg = 3000;
    uint32_t ttl, nap;
    uint64_t redial = 0;
    int i, port, async = 0, memory = 0;
    struct timeval tv;
    redisContext *c;
    ldl_redis r;                            /* the synchronous view ... */
    ldl_store store;
    ldl_store_ext ext;                      /* the owner stored with the lease; inspect */
    static ldl_redis_async ra;              /* ... or the non-blocking one */
    static ldl_redis_req reqs[8];           /* its request pool: 2 x locks + a margin */
    ldl_async_store as;
    ldl_scope root;
    ldl_lock_desc d;
    elector e;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--async")) async = 1;
        else if (!strcmp(argv[i], "--memory")) memory = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--redis")) addr = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--name")) name = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--key")) key = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--ttl")) ttl_arg = strtol(argv[++i], NULL, 10);
        else { usage(); return 2; }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (memory) return run_memory();
    if (!addr || !strchr(addr, ':') || strchr(addr, ':') - addr >= (long)sizeof host ||
        ttl_arg < 100 || ttl_arg > 600000) {
        usage();
        return 2;
    }
    memcpy(host, addr, (size_t)(strchr(addr, ':') - addr));
    host[strchr(addr, ':') - addr] = 0;
    port = atoi(strchr(addr, ':') + 1);
    ttl = (uint32_t)ttl_arg;
    if (!name) { sprintf(pidname, "pid-%d", (int)getpid()); name = pidname; }

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);               /* hiredis writes with plain write() */

    /* a blocking call may take ~2x the command timeout: keep that well inside the lease */
    tv.tv_sec = 0;
    tv.tv_usec = (long)(ttl / 4 < 500 ? ttl / 4 : 500) * 1000L;
    c = async ? redisConnectNonBlock(host, port) : redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to redis at %s: %s\n", addr, c ? c->errstr : "out of memory");
        return 1;
    }
    if (async) {
        if (ldl_redis_async_init(&ra, c, NULL, reqs, sizeof reqs / sizeof reqs[0]) != LDL_OK) {
            fprintf(stderr, "adapter init: %s\n", ldl_redis_async_why(&ra));
            return 1;
        }
        as = ldl_redis_async_store(&ra);
        ext = ldl_redis_async_ext(&ra);     /* the owner only: inspect would have to wait */
    } else {
        redisSetTimeout(c, tv);
        if (ldl_redis_init(&r, c, NULL) != LDL_OK) {
            fprintf(stderr, "adapter init: %s\n", ldl_redis_why(&r));
            return 1;
        }
        store = ldl_redis_store(&r);
        ext = ldl_redis_ext(&r);            /* the owner, and inspect for the follower line */
        if (ldl_redis_check_durability(&r, why, sizeof why) != 1)
            printf("warning: %s\n", why);  /* e.g. no AOF: a restart resets the fence */
    }

    memset(&e, 0, sizeof e);
    e.name = name;
    e.clock.now_ms = mono_ms;               /* the built-in clock, readable for the stamps */
    ldl_scope_init(&root, NULL, 0);
    election_desc(&d, &e, key, ttl, ldl_scope_container(&root));
    if (async) d.async_store = &as; else d.store = &store;
    d.store_ext = &ext;
    d.owner = name;                         /* stored with the lease: who leads, for inspect */
    if (ldl_lock_init(&e.lock, &d) != LDL_OK) {
        fprintf(stderr, "lock init: %s\n", ldl_lock_why(&e.lock));
        return 1;
    }
    say(&e, "campaigning for \"%s\" on %s (ttl %u ms, %s)", key, addr, (unsigned)ttl,
        async ? "non-blocking" : "blocking");
    (void)ldl_lock_acquire(&e.lock);        /* once: from now on poll competes */

    while (!g_stop) {
        uint64_t t = mono_ms(NULL);
        /* a failed connection answers errors (the lock rides them out while the lease
           is trusted): redial, at most every 250 ms */
        if (async) {                        /* the store's own I/O, never waits */
            if (ldl_redis_async_pump(&ra) < 0 && t >= redial) {
                say(&e, "link failed (%s): reconnecting", ldl_redis_async_why(&ra));
                (void)ldl_redis_async_reconnect(&ra);
                redial = t + 250;
            }
        } else if (c->err && t >= redial) {
            say(&e, "connection failed (%s): reconnecting", ldl_redis_why(&r));
            if (redisReconnect(c) == REDIS_OK) redisSetTimeout(c, tv);
            redial = t + 250;
        }
        every_second(&e, poll_fence(&e), &ext, key);

        nap = ldl_lock_due_in_ms(&e.lock);  /* UINT32_MAX: nothing due (stepped down) */
        if (nap > 100) nap = 100;           /* wake for the once-a-second line and signals */
        if (async) {
            wait_socket(&ra, (int)nap);
        } else {
            struct timespec ts;
            ts.tv_sec = 0;
            ts.tv_nsec = (long)nap * 1000000L;
            nanosleep(&ts, NULL);           /* a signal ends it early */
        }
    }

    step_down(&e);
    if (async) {                            /* let the release (or a cancelled acquire's
                                               hand-back) reach the server: at most a ttl */
        uint64_t until = mono_ms(NULL) + ttl;
        while ((ldl_lock_pending(&e.lock) || ldl_redis_async_stats(&ra)->live) &&
               mono_ms(NULL) < until && ldl_redis_async_pump(&ra) >= 0) {
            wait_socket(&ra, 10);
            (void)ldl_lock_poll(&e.lock);   /* applies the release answer */
        }
    }
    bye(&e);
    ldl_lock_dispose(&e.lock);
    if (async) (void)ldl_redis_async_pump(&ra);   /* send what dispose handed back */
    redisFree(c);
    return 0;
}
