/* pg_leader.c -- leader election over PostgreSQL: run it in two terminals and
 * watch exactly one of them lead; stop the leader (Ctrl-C hands over at once,
 * Ctrl-Z or kill -9 hands over after the TTL) and watch the other take over
 * with a higher fence.
 *
 *   build:  make examples-pg     (or: cc -I. -I/usr/include/postgresql
 *                                    examples/pg_leader.c -lpq -o pg_leader)
 *   run:    ./build/pg/pg_leader "host=127.0.0.1 dbname=postgres user=me" alice
 *           ./build/pg/pg_leader "host=127.0.0.1 dbname=postgres user=me" bob
 *
 * argv[1] conninfo (default: $LDL_PG_CONNINFO, else libpq's PG* environment),
 * argv[2] a name to print (default: the pid), argv[3] seconds to run (0 = until
 * Ctrl-C). The lease lives in table "ldl_lease", key "leader", TTL 5 s. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static void sleep_ms(uint32_t ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void on_lost(void *user, int reason)
{
    printf("[%s] LOST the lead: %s -- stop leader work NOW\n", (const char *)user, ldl_reason_name(reason));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    /* the timeouts matter: every store call is one blocking round trip */
    const char *base = argc > 1 ? argv[1] : getenv("LDL_PG_CONNINFO");
    char conninfo[1024], name[64];
    long seconds = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    PGconn *conn;
    ldl_pg pg;
    ldl_store store;
    ldl_scope root, pool[1];
    ldl_lock_desc d;
    ldl_lock lock;
    struct sigaction sa;
    uint64_t start = now_ms(), next_try = 0, next_work = 0;
    int was_leader = 0;
    unsigned follower_lines = 0;

    snprintf(conninfo, sizeof conninfo, "%s connect_timeout=3 tcp_user_timeout=3000 "
             "options='-c statement_timeout=3000 -c lock_timeout=1000'", base ? base : "");
    if (argc > 2) snprintf(name, sizeof name, "%s", argv[2]);
    else snprintf(name, sizeof name, "pid %ld", (long)getpid());

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "[%s] cannot connect to PostgreSQL: %s", name, PQerrorMessage(conn));
        PQfinish(conn);
        return 1;
    }
    if (ldl_pg_init(&pg, conn, NULL) != LDL_OK) {    /* e.g. a table that is not the adapter's */
        fprintf(stderr, "[%s] cannot use PostgreSQL: %s\n", name, ldl_pg_why(&pg));
        PQfinish(conn);
        return 1;
    }
    store = ldl_pg_store(&pg);

    ldl_scope_init(&root, pool, 1);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&root);
    d.key = "leader";
    d.ttl_ms = 5000;                   /* heartbeat every ttl/3 by default */
    d.store = &store;
    d.on_lost = on_lost;
    d.user = name;
    if (ldl_lock_init(&lock, &d) != LDL_OK) {
        fprintf(stderr, "[%s] lock: %s\n", name, ldl_lock_why(&lock));
        return 1;
    }
    printf("[%s] started; waiting to lead\n", name);
    fflush(stdout);

    while (!stop_flag && (seconds <= 0 || now_ms() - start < (uint64_t)seconds * 1000u)) {
        uint64_t now = now_ms();
        uint32_t nap = 200;
        if (ldl_lock_poll(&lock) == 1) {                   /* renews when due */
            if (!was_leader) {
                printf("[%s] I am the LEADER now, fence %lld\n", name, (long long)ldl_lock_fencing_token(&lock));
                was_leader = 1;
            }
            if (now >= next_work) {                        /* the leader-only work */
                printf("[%s]   leading: work stamped with fence %lld (valid %u ms more)\n", name,
                       (long long)ldl_lock_fencing_token(&lock), (unsigned)ldl_lock_valid_ms(&lock));
                next_work = now + 1000;
            }
            if (ldl_lock_due_in_ms(&lock) < nap) nap = ldl_lock_due_in_ms(&lock);
        } else {
            if (ldl_lock_state(&lock) == LDL_LOST) ldl_lock_release(&lock);  /* -> RELEASED, may retry */
            if (was_leader) { printf("[%s] follower now\n", name); was_leader = 0; follower_lines = 0; }
            if (now >= next_try) {
                if (PQstatus(conn) == CONNECTION_BAD) PQreset(conn);  /* the adapter re-prepares */
                if (ldl_lock_acquire(&lock) != 1 && (follower_lines++ % 5) == 0) {
                    if (PQstatus(conn) != CONNECTION_OK)
                        printf("[%s] follower: database unreachable: %s", name, PQerrorMessage(conn));
                    else
                        printf("[%s] follower: someone else leads; retrying every second\n", name);
                }
                next_try = now + 1000;
                continue;
            }
        }
        fflush(stdout);
        sleep_ms(nap);
    }
    if (ldl_lock_held(&lock)) printf("[%s] stepping down, handing the lead over\n", name);
    ldl_lock_release(&lock);                               /* the other takes over at once */
    ldl_lock_dispose(&lock);
    PQfinish(conn);
    printf("[%s] bye\n", name);
    return 0;
}
