/* tests/store/pg_common.h -- helpers shared by the tests/store/pg_*.c programs.
 * Test code. Include after lite_di_lock.h and tests/store/fenced.h; needs the
 * environment set up by tests/store/with_pg.sh (LDL_PG_CONNINFO, LDL_PG_CTL). */
#ifndef LDL_TESTS_STORE_PG_COMMON_H
#define LDL_TESTS_STORE_PG_COMMON_H

#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"

/* the server's conninfo plus extra options ("" for none); NULL env = exit 2:
   a store suite is never skipped silently */
ST_FN PGconn *pgt_connect(const char *extra)
{
    char buf[1024];
    const char *ci = getenv("LDL_PG_CONNINFO");
    PGconn *c;
    if (!ci || !*ci) {
        fprintf(stderr, "LDL_PG_CONNINFO is not set: run me through tests/store/with_pg.sh\n");
        exit(2);
    }
    snprintf(buf, sizeof buf, "%s %s", ci, extra ? extra : "");
    c = PQconnectdb(buf);
    if (PQstatus(c) != CONNECTION_OK)
        fprintf(stderr, "pgt_connect: %s", PQerrorMessage(c));
    return c;
}

/* run SQL on a helper connection; 1 when it succeeded */
ST_FN int pgt_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    int ok = r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
    if (!ok) fprintf(stderr, "pgt_exec(%s): %s", sql, r ? PQresultErrorMessage(r) : PQerrorMessage(c));
    PQclear(r);
    return ok;
}

/* run a NULL-terminated list of statements; 1 when all succeeded */
ST_FN int pgt_exec_all(PGconn *c, const char *const *sql)
{
    int ok = 1;
    for (; *sql; sql++) ok &= pgt_exec(c, *sql);
    return ok;
}

/* one integer from a query with up to one text parameter; INT64_MIN on error/no row */
ST_FN int64_t pgt_int(PGconn *c, const char *sql, const char *param)
{
    const char *vals[1];
    PGresult *r;
    int64_t v = INT64_MIN;
    vals[0] = param;
    r = PQexecParams(c, sql, param ? 1 : 0, NULL, param ? vals : NULL, NULL, NULL, 0);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
        v = (int64_t)strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else if (r && PQresultStatus(r) != PGRES_TUPLES_OK)
        fprintf(stderr, "pgt_int(%s): %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return v;
}

/* "$LDL_PG_CTL <cmd>"; 0 on success */
ST_FN int pgt_ctl(const char *cmd)
{
    char buf[1024];
    const char *ctl = getenv("LDL_PG_CTL");
    if (!ctl || !*ctl) { fprintf(stderr, "LDL_PG_CTL is not set\n"); return -1; }
    snprintf(buf, sizeof buf, "\"%s\" %s", ctl, cmd);
    fflush(stdout);
    fflush(stderr);
    return system(buf) == 0 ? 0 : -1;
}

/* a lock over a PG store, with the header's reference container */
typedef struct pgt_lock {
    ldl_scope root, pool[2];
    ldl_store store;
    ldl_lock  lock;
    int lost_calls, lost_reason;
} pgt_lock;

ST_FN void pgt__on_lost(void *user, int reason)
{
    pgt_lock *t = (pgt_lock *)user;
    t->lost_calls++;
    t->lost_reason = reason;
}

ST_FN int pgt_lock_init(pgt_lock *t, ldl_pg *pg, const char *key, uint32_t ttl_ms, uint32_t hb_ms)
{
    ldl_lock_desc d;
    memset(t, 0, sizeof *t);
    ldl_scope_init(&t->root, t->pool, 2);
    t->store = ldl_pg_store(pg);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&t->root);
    d.key = key;
    d.ttl_ms = ttl_ms;
    d.heartbeat_ms = hb_ms;
    d.store = &t->store;
    d.on_lost = pgt__on_lost;
    d.user = t;
    if (ldl_lock_init(&t->lock, &d) != LDL_OK) {
        fprintf(stderr, "ldl_lock_init: %s\n", ldl_lock_why(&t->lock));
        return -1;
    }
    return 0;
}

/* a lock over the non-blocking view: one scope per lock (the names it binds) */
typedef struct pgt_alock {
    ldl_scope root, pool[2];
    ldl_lock  lock;
    int lost_calls, lost_reason;
    uint64_t lost_at;
} pgt_alock;

ST_FN void pgt__on_lost_a(void *user, int reason)
{
    pgt_alock *t = (pgt_alock *)user;
    t->lost_calls++;
    t->lost_reason = reason;
    t->lost_at = st_now_ms();
}

/* clock: the lock's clock (all-zero: the core's CLOCK_MONOTONIC) */
ST_FN int pgt_alock_init_clock(pgt_alock *t, const ldl_async_store *as, const char *key,
                               uint32_t ttl_ms, uint32_t hb_ms, ldl_clock clock)
{
    ldl_lock_desc d;
    memset(t, 0, sizeof *t);
    ldl_scope_init(&t->root, t->pool, 2);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&t->root);
    d.key = key;
    d.ttl_ms = ttl_ms;
    d.heartbeat_ms = hb_ms;
    d.async_store = as;
    d.clock = clock;
    d.on_lost = pgt__on_lost_a;
    d.user = t;
    if (ldl_lock_init(&t->lock, &d) != LDL_OK) {
        fprintf(stderr, "ldl_lock_init: %s\n", ldl_lock_why(&t->lock));
        return -1;
    }
    return 0;
}

ST_FN int pgt_alock_init(pgt_alock *t, const ldl_async_store *as, const char *key,
                         uint32_t ttl_ms, uint32_t hb_ms)
{
    ldl_clock core;
    memset(&core, 0, sizeof core);
    return pgt_alock_init_clock(t, as, key, ttl_ms, hb_ms, core);
}

/* open a connection without ever blocking: PQconnectStart + PQconnectPoll
   driven by poll(2) with short waits, the way a frame loop would; NULL on
   failure or after timeout_ms */
ST_FN PGconn *pgt_connect_nb(const char *extra, uint32_t timeout_ms)
{
    char buf[1024];
    const char *ci = getenv("LDL_PG_CONNINFO");
    uint64_t end = st_now_ms() + timeout_ms;
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    PGconn *c;
    snprintf(buf, sizeof buf, "%s %s", ci ? ci : "", extra ? extra : "");
    c = PQconnectStart(buf);
    if (!c || PQstatus(c) == CONNECTION_BAD) { PQfinish(c); return NULL; }
    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED && st_now_ms() < end) {
        struct pollfd pf;
        pf.fd = PQsocket(c);
        pf.events = (short)(st == PGRES_POLLING_READING ? POLLIN : POLLOUT);
        pf.revents = 0;
        (void)poll(&pf, 1, 5);          /* a frame's worth at most */
        st = PQconnectPoll(c);
    }
    if (st != PGRES_POLLING_OK) { PQfinish(c); return NULL; }
    return c;
}

#endif /* LDL_TESTS_STORE_PG_COMMON_H */
