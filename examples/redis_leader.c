/* examples/redis_leader.c -- leader election over Redis: run it in two terminals, watch one
 * lead, stop it (Ctrl-C hands over at once; kill -9 hands over after the TTL), watch the
 * other take over with a higher fencing token.
 *
 *   make examples-redis
 *   redis-server --port 6379 --appendonly yes --appendfsync always     (terminal 0)
 *   ./build/redis/redis_leader                                          (terminals 1 and 2)
 *
 * Arguments (all optional): [host] [port] [seconds to run, 0 = until Ctrl-C]
 * Environment: LDL_REDIS_HOST, LDL_REDIS_PORT, LDL_TTL_MS (default 3000), LDL_KEY, LDL_PREFIX
 * (default "ldl"; no ':', '{' or '}').
 * Its connection is the lock's alone (the adapter refuses to send on a shared one).
 *
 * Only the leader does the "work" (here: prints a line every half second with its fence,
 * which a real program would pass to whatever it writes to). The loop owns its timing:
 * it calls ldl_lock_poll() every iteration and sleeps as long as ldl_lock_due_in_ms() allows.
 */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(uint32_t ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    nanosleep(&ts, NULL);
}

static void on_lost(void *user, int reason)
{
    (void)user;
    printf("[%d] LOST leadership: %s\n", (int)getpid(), ldl_reason_name(reason));
    fflush(stdout);
}

static const char *arg_or_env(int argc, char **argv, int i, const char *env, const char *def)
{
    const char *e;
    if (argc > i) return argv[i];
    e = getenv(env);
    return (e && *e) ? e : def;
}

int main(int argc, char **argv)
{
    const char *host = arg_or_env(argc, argv, 1, "LDL_REDIS_HOST", "127.0.0.1");
    int port = atoi(arg_or_env(argc, argv, 2, "LDL_REDIS_PORT", "6379"));
    long run_s = atol(arg_or_env(argc, argv, 3, "LDL_RUN_SECONDS", "0"));
    uint32_t ttl = (uint32_t)atol(arg_or_env(0, argv, 9, "LDL_TTL_MS", "3000"));
    const char *key = arg_or_env(0, argv, 9, "LDL_KEY", "example-leader");
    struct timeval tv = { 0, 500000 };    /* connect and command timeout: 500 ms */
    redisContext *c;
    ldl_redis r;
    ldl_store store;
    ldl_scope root, pool[2];
    ldl_lock lock;
    ldl_lock_desc d;
    char why[256];
    uint64_t end, next_work = 0;
    int was_leader = 0;

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);             /* hiredis writes to a socket the server may have closed */
    setvbuf(stdout, NULL, _IOLBF, 0);

    c = redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to redis at %s:%d: %s\n", host, port, c ? c->errstr : "out of memory");
        return 1;
    }
    redisSetTimeout(c, tv);               /* per read; the adapter bounds a whole call to ~2x */
    if (ldl_redis_init(&r, c, getenv("LDL_PREFIX")) != LDL_OK) {   /* NULL = "ldl" */
        fprintf(stderr, "adapter init: %s\n", ldl_redis_why(&r));
        return 1;
    }
    if (ldl_redis_check_durability(&r, why, sizeof why) != 1)
        printf("[%d] warning: %s\n", (int)getpid(), why);
    store = ldl_redis_store(&r);

    ldl_scope_init(&root, pool, 2);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&root);
    d.key = key;
    d.ttl_ms = ttl;
    d.store = &store;
    d.on_lost = on_lost;
    if (ldl_lock_init(&lock, &d) != LDL_OK) {
        fprintf(stderr, "lock init: %s\n", ldl_lock_why(&lock));
        return 1;
    }
    printf("[%d] FOLLOWER: waiting for \"%s\" on %s:%d (ttl %u ms)\n", (int)getpid(), key, host,
           port, (unsigned)ttl);

    end = run_s > 0 ? now_ms() + (uint64_t)run_s * 1000u : 0;
    while (!g_stop && (end == 0 || now_ms() < end)) {
        uint32_t nap;
        if (c->err) {                     /* the connection failed: try again next round */
            printf("[%d] connection failed (%s): reconnecting\n", (int)getpid(), ldl_redis_why(&r));
            if (redisReconnect(c) == REDIS_OK) redisSetTimeout(c, tv);
        }
        if (!ldl_lock_held(&lock)) {
            int st = ldl_lock_state(&lock);
            if (st == LDL_LOST) ldl_lock_release(&lock);   /* hand back, so we can try again */
            if (was_leader) { printf("[%d] FOLLOWER again\n", (int)getpid()); was_leader = 0; }
            if (ldl_lock_acquire(&lock) == 1) {
                printf("[%d] LEADER fence=%lld\n", (int)getpid(), (long long)ldl_lock_fencing_token(&lock));
                was_leader = 1;
                next_work = 0;
            } else {
                sleep_ms(ttl / 10 + 1);   /* not the leader: try again soon */
                continue;
            }
        }
        if (ldl_lock_poll(&lock) == 1 && now_ms() >= next_work) {
            printf("[%d] leading: work with fence %lld (lease valid %u ms more)\n", (int)getpid(),
                   (long long)ldl_lock_fencing_token(&lock), (unsigned)ldl_lock_valid_ms(&lock));
            next_work = now_ms() + 500;
        }
        nap = ldl_lock_due_in_ms(&lock);
        sleep_ms(nap > 100 ? 100 : nap);
    }
    if (ldl_lock_held(&lock)) {
        int rc = ldl_lock_release(&lock);
        printf("[%d] stepped down (release answered %d)\n", (int)getpid(), rc);
    }
    ldl_lock_dispose(&lock);
    redisFree(c);
    return 0;
}
