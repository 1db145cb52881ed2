/* bench_pg.c CONNINFO MODE ARGS -- the PostgreSQL adapter in `make bench` (row 4).
     acqrel OPS | run OPS          lifecycles/s of one ldl_lock, synchronous store
     pipe K SECS [unnamed]         lifecycles/s with K locks in flight on ONE
                                   connection (non-blocking view): every lock
                                   cycles acquire -> held -> release
     rawpipe K SECS                the anchor of "pipe": plain libpq, the adapter's
                                   own prepared statements, K keys cycling acquire
                                   -> release, each statement followed by its own
                                   PQpipelineSync, as a libpq user would write it
     frame K SECS [stop]           K locks held on one connection; the cost of one
                                   frame (one pump + K polls) over SECS seconds,
                                   prints "median_us p99_us max_us"; with "stop"
                                   the server backend is SIGSTOPped meanwhile
     fence SECS                    one-row UPDATE transactions: plain, with the
                                   fence check pipelined with the write, with the
                                   check alone (ldl_pg_fence); prints the three
                                   rates "plain with alone" in tx/s
     session K ROUNDS              issue 34 item 3 (decision 0216): K leases held
                                   on one connection (the non-blocking view), then
                                   ROUNDS heartbeat rounds: every lock ticked at
                                   once (K renews pipelined, one Sync each), pumped
                                   until all answered -- vs ROUNDS times what a
                                   session renew would be, ONE UPDATE of a session
                                   row (its own transaction) on a second
                                   connection; and (decision 0217) the REAL session
                                   renew: K locks held on one session row through
                                   the statements of tests/store/pg_session_design.c
                                   (acquired pipelined, a commit each), each round
                                   renewed by that design's one UPDATE (prepared)
                                   on a third connection. Prints "renews_ms
                                   renews_cpu_ms session_ms session_cpu_ms real_ms
                                   real_cpu_ms", medians per round, then
                                   "acquire: per-lock K in MS ms, session K in MS ms"
                                   (the K acquires of each kind, wall) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define LDL_PG_IMPLEMENTATION
#include "bench_store.h"
#include "adapters/lite_di_lock_pg.h"
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#define PGSD_STATEMENTS_ONLY
#include "tests/store/pg_session_design.c"   /* the session statements of decision 0217 */

typedef struct bp_lock {
    ldl_scope root, pool[2];
    ldl_lock  lock;
} bp_lock;

static int bp_init(bp_lock *b, const ldl_async_store *as, const char *key, uint32_t ttl, uint32_t hb) {
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    ldl_scope_init(&b->root, b->pool, 2);
    d.container = ldl_scope_container(&b->root);
    d.key = key;
    d.ttl_ms = ttl;
    d.heartbeat_ms = hb;
    d.async_store = as;
    if (ldl_lock_init(&b->lock, &d) != LDL_OK) { fprintf(stderr, "lock init: %s\n", ldl_lock_why(&b->lock)); return -1; }
    return 0;
}

static int bp_cmp_u(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* plain libpq: K keys, each cycling acquire -> release, pipelined on c */
static int raw_send(PGconn *c, const ldl_pg *p, long i, int64_t tok) {
    char key[40], num[24];
    const char *v[2];
    snprintf(key, sizeof key, "bench-raw-%ld-%ld", (long)getpid(), i);   /* fresh keys each run */
    v[0] = key;
    if (tok > 0) snprintf(num, sizeof num, "%lld", (long long)tok);
    else snprintf(num, sizeof num, "10000");
    v[1] = num;
    if (PQsendQueryPrepared(c, p->_stmt[tok > 0 ? 2 : 0], 2, v, NULL, NULL, 0) != 1) return -1;
    return PQpipelineSync(c) == 1 ? 0 : -1;
}

static int raw_pipe(PGconn *c, const ldl_pg *p, long k, double secs) {
    long *fifo = (long *)calloc((size_t)k, sizeof *fifo), head = 0, n = 0, i, done = 0;
    int64_t *tok = (int64_t *)calloc((size_t)k, sizeof *tok), got = 0;
    int have = 0, counting = 0, nulls;
    uint64_t t0 = bench_ns(), end = t0 + (uint64_t)(secs * 1e9), warm = t0 + (uint64_t)(secs * 1e8);
    if (!fifo || !tok || PQsetnonblocking(c, 1) != 0 || PQenterPipelineMode(c) != 1) return 1;
    for (i = 0; i < k; i++) { if (raw_send(c, p, i, 0) != 0) return 1; fifo[(head + n++) % k] = i; }
    while (bench_ns() < end) {
        struct pollfd pf;
        PGresult *r;
        if (!counting && bench_ns() >= warm) { counting = 1; done = 0; t0 = bench_ns(); }
        pf.fd = PQsocket(c);
        pf.events = (short)(POLLIN | (PQflush(c) == 1 ? POLLOUT : 0));
        pf.revents = 0;
        (void)poll(&pf, 1, 1);
        if (PQconsumeInput(c) != 1) { fprintf(stderr, "rawpipe: %s", PQerrorMessage(c)); return 1; }
        for (nulls = 0; !PQisBusy(c) && nulls < 3;) {
            ExecStatusType st;
            r = PQgetResult(c);
            if (!r) { nulls++; continue; }      /* the end of one statement's results */
            nulls = 0;
            st = PQresultStatus(r);
            if (st == PGRES_TUPLES_OK) {
                have = PQntuples(r) == 1;
                got = have ? (int64_t)strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
            } else if (st == PGRES_PIPELINE_SYNC) {
                long key = fifo[head];
                head = (head + 1) % k;
                if (tok[key] > 0) { tok[key] = 0; done++; }          /* a release answered */
                else if (have) tok[key] = got;                       /* granted: release next */
                if (raw_send(c, p, key, tok[key]) != 0) return 1;
                fifo[(head + k - 1) % k] = key;
                have = 0;
            } else {
                fprintf(stderr, "rawpipe: %s", PQresultErrorMessage(r));
            }
            PQclear(r);
        }
    }
    printf("%.1f\n", (double)done * 1e9 / (double)(bench_ns() - t0));
    PQfinish(c);
    free(fifo);
    free(tok);
    return 0;
}

static uint64_t bp_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int bp_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fz_cmd(PGconn *c, const char *sql);
static int fz_ok(PGresult *r, ExecStatusType want);

/* ---- the real session (decision 0217): the design's tables on a fresh connection *c,
   one session row (10 s), K keys acquired on it with the design's acquire statement,
   pipelined (one Sync, so one commit, each, as the adapter sends its own); the renew
   prepared as "bench_sd_renew". *ms: the K acquires, wall. */
static int sd_setup(const char *conninfo, PGconn **c, char sid[64], long k, double *ms) {
    long i, answered = 0, granted = 0;
    PGresult *r;
    const char *v[3];
    char key[40];
    uint64_t t0;
    *c = PQconnectdb(conninfo);
    if (PQstatus(*c) != CONNECTION_OK) return 1;
    for (i = 0; setup[i]; i++) if (!fz_cmd(*c, setup[i])) return 1;
    for (i = 0; setup_tables[i]; i++) if (!fz_cmd(*c, setup_tables[i])) return 1;
    v[0] = "10000";
    r = PQexecParams(*c, sql_open, 1, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) { PQclear(r); return 1; }
    snprintf(sid, 64, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    if (!fz_ok(PQprepare(*c, "bench_sd_acq", sql_acq_s, 0, NULL), PGRES_COMMAND_OK) ||
        !fz_ok(PQprepare(*c, "bench_sd_renew", sql_renew, 0, NULL), PGRES_COMMAND_OK))
        return 1;
    t0 = bench_ns();
    if (PQenterPipelineMode(*c) != 1) return 1;
    v[1] = sid;
    v[2] = "10000";
    for (i = 0; i < k; i++) {
        snprintf(key, sizeof key, "bench-sd-%ld", i);
        v[0] = key;
        if (PQsendQueryPrepared(*c, "bench_sd_acq", 3, v, NULL, NULL, 0) != 1 || PQpipelineSync(*c) != 1) return 1;
    }
    while (answered < k) {
        r = PQgetResult(*c);
        if (!r) continue;                 /* the end of one statement's results */
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) answered++;
        else if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 1)) granted++;
        else if (PQresultStatus(r) != PGRES_TUPLES_OK) fprintf(stderr, "bench_pg session acquire: %s", PQresultErrorMessage(r));
        PQclear(r);
    }
    *ms = (double)(bench_ns() - t0) / 1e6;
    if (PQexitPipelineMode(*c) != 1 || granted != k) {
        fprintf(stderr, "bench_pg session: %ld of %ld session acquires granted\n", granted, k);
        return 1;
    }
    return 0;
}

/* ---- session (decision 0216): K pipelined renews per heartbeat vs one session-row UPDATE
   (a logged table, so the UPDATE commits durably as a lease row does) */
static int session_bench(const char *conninfo, ldl_pg_async *pa, bp_lock *ls, long k, int rounds) {
    double rw[64], rc[64], sw[64], sc[64], xw[64], xc[64], acq_lock_ms, acq_sess_ms = 0;
    PGconn *s2 = PQconnectdb(conninfo), *s3 = NULL;
    char sid[64];
    const char *xv[2];
    uint64_t acq0;
    long i, held = 0;
    int r;
    uint64_t end = bench_ns() + 60000000000ull;
    if (rounds < 1 || rounds > 64 || PQstatus(s2) != CONNECTION_OK) return 1;
    if (!fz_cmd(s2, "DROP TABLE IF EXISTS ldl_bench_session") ||
        !fz_cmd(s2, "CREATE TABLE ldl_bench_session (id int PRIMARY KEY, expires timestamptz)") ||
        !fz_cmd(s2, "INSERT INTO ldl_bench_session VALUES (1, now())"))
        return 1;
    acq0 = bench_ns();
    for (i = 0; i < k; i++) (void)ldl_lock_acquire(&ls[i].lock);
    while (held < k && bench_ns() < end) {
        (void)ldl_pg_async_pump(pa);
        for (held = 0, i = 0; i < k; i++) held += ldl_lock_poll(&ls[i].lock) == 1;
    }
    if (held < k) { fprintf(stderr, "bench_pg session: only %ld of %ld held\n", held, k); return 1; }
    acq_lock_ms = (double)(bench_ns() - acq0) / 1e6;
    if (sd_setup(conninfo, &s3, sid, k, &acq_sess_ms) != 0) return 1;
    for (r = 0; r < rounds; r++) {
        uint64_t t0 = bench_ns(), c0 = bp_cpu_ns();
        long pending;
        for (i = 0; i < k; i++) (void)ldl_lock_tick(&ls[i].lock);      /* K renews submitted */
        do {
            (void)ldl_pg_async_pump(pa);
            pending = (long)ldl_pg_async_stats(pa)->live;     /* renews awaiting their Sync */
            if (pending) {
                int ev = 0, fd = ldl_pg_async_fd(pa, &ev);
                struct pollfd pf;
                pf.fd = fd;
                pf.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
                pf.revents = 0;
                if (fd >= 0 && ev) (void)poll(&pf, 1, 1);
            }
        } while (pending && bench_ns() < t0 + 30000000000ull);
        for (held = 0, i = 0; i < k; i++) held += ldl_lock_poll(&ls[i].lock) == 1;   /* one apply each */
        rw[r] = (double)(bench_ns() - t0) / 1e6;
        rc[r] = (double)(bp_cpu_ns() - c0) / 1e6;
        if (held < k) { fprintf(stderr, "bench_pg session: %ld of %ld held after round %d\n", held, k, r); return 1; }
        t0 = bench_ns();
        c0 = bp_cpu_ns();
        if (!fz_cmd(s2, "UPDATE ldl_bench_session SET expires = now() + interval '10 seconds' WHERE id = 1"))
            return 1;
        sw[r] = (double)(bench_ns() - t0) / 1e6;
        sc[r] = (double)(bp_cpu_ns() - c0) / 1e6;
        xv[0] = sid;
        xv[1] = "10000";
        t0 = bench_ns();
        c0 = bp_cpu_ns();
        {   /* the real session renew: one UPDATE of the session row, K locks ride it */
            PGresult *x = PQexecPrepared(s3, "bench_sd_renew", 2, xv, NULL, NULL, 0);
            int ok = PQresultStatus(x) == PGRES_TUPLES_OK && PQntuples(x) == 1;
            if (!ok) fprintf(stderr, "bench_pg session renew: %s", PQresultErrorMessage(x));
            PQclear(x);
            if (!ok) return 1;
        }
        xw[r] = (double)(bench_ns() - t0) / 1e6;
        xc[r] = (double)(bp_cpu_ns() - c0) / 1e6;
    }
    {   /* every session lock still held: K rows naming the live session */
        const char *v[1];
        PGresult *x;
        v[0] = sid;
        x = PQexecParams(s3, "SELECT pg_catalog.count(*) FROM " PT " AS l, " PS " AS s "
                         "WHERE l.session = $1::uuid AND s.id = l.session AND s.expires_at > pg_catalog.clock_timestamp()",
                         1, NULL, v, NULL, NULL, 0);
        held = PQresultStatus(x) == PGRES_TUPLES_OK ? atol(PQgetvalue(x, 0, 0)) : -1;
        PQclear(x);
        if (held != k) { fprintf(stderr, "bench_pg session: %ld of %ld session locks held\n", held, k); return 1; }
    }
    qsort(rw, (size_t)rounds, sizeof rw[0], bp_cmp_d);
    qsort(rc, (size_t)rounds, sizeof rc[0], bp_cmp_d);
    qsort(sw, (size_t)rounds, sizeof sw[0], bp_cmp_d);
    qsort(sc, (size_t)rounds, sizeof sc[0], bp_cmp_d);
    qsort(xw, (size_t)rounds, sizeof xw[0], bp_cmp_d);
    qsort(xc, (size_t)rounds, sizeof xc[0], bp_cmp_d);
    printf("%.3f %.3f %.3f %.3f %.3f %.3f\n", rw[rounds / 2], rc[rounds / 2], sw[rounds / 2], sc[rounds / 2],
           xw[rounds / 2], xc[rounds / 2]);
    printf("acquire: per-lock %ld in %.1f ms, session %ld in %.1f ms\n", k, acq_lock_ms, k, acq_sess_ms);
    (void)fz_cmd(s2, "DROP TABLE ldl_bench_session");
    (void)fz_cmd(s3, "DROP SCHEMA ldl_sd CASCADE");
    PQfinish(s3);
    PQfinish(s2);
    return 0;
}

/* ---- fenced writes (rows 4g-4j): one-row UPDATE transactions on c, three ways
   interleaved in short slices so a load change hits all three alike:
     plain  BEGIN; UPDATE; COMMIT                       3 round trips
     with   BEGIN; [fence check + UPDATE, one pipeline,  3 round trips: the check
            one Sync]; COMMIT or ROLLBACK by the check   goes out with the write
     alone  BEGIN; ldl_pg_fence; UPDATE; COMMIT         4 round trips
   The check is the protocol's own statement (ldl_pg_fence_sql), prepared once;
   every transaction uses the same fence (one holder writing many times: the
   mark's row is updated each time). Prints "plain with alone" in tx/s. */
static int fz_ok(PGresult *r, ExecStatusType want) {
    int ok = r && PQresultStatus(r) == want;
    if (!ok) fprintf(stderr, "bench_pg fence: %s", r ? PQresultErrorMessage(r) : "no result\n");
    PQclear(r);
    return ok;
}

static int fz_cmd(PGconn *c, const char *sql) { return fz_ok(PQexec(c, sql), PGRES_COMMAND_OK); }

static int fz_tx(PGconn *c, ldl_pg *fp, int how) {
    static const char *const upd[1] = { "7" };
    const char *fv[2];
    fv[0] = "bench-resource"; fv[1] = "7";
    if (!fz_cmd(c, "BEGIN")) return -1;
    if (how == 2 && ldl_pg_fence(fp, "bench-resource", 7) != 1) {
        fprintf(stderr, "bench_pg fence: %s\n", ldl_pg_why(fp));
        return -1;
    }
    if (how == 1) {                       /* the check and the write in one round trip */
        PGresult *r;
        int pass = 0, ok = 1, syncs = 0;
        if (PQenterPipelineMode(c) != 1 ||
            PQsendQueryPrepared(c, "bench_fz_fence", 2, fv, NULL, NULL, 0) != 1 ||
            PQsendQueryPrepared(c, "bench_fz_upd", 1, upd, NULL, NULL, 0) != 1 ||
            PQpipelineSync(c) != 1) return -1;
        while (syncs == 0) {
            r = PQgetResult(c);
            if (!r) continue;                 /* the end of one statement's results */
            if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) syncs = 1;
            else if (PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 1) pass = PQntuples(r) == 1;
            else if (PQresultStatus(r) != PGRES_COMMAND_OK) ok = 0;
            PQclear(r);
        }
        if (PQexitPipelineMode(c) != 1) return -1;
        if (!ok || !pass) { fz_cmd(c, "ROLLBACK"); return -1; }   /* stale: never in this bench */
    } else if (!fz_ok(PQexecPrepared(c, "bench_fz_upd", 1, upd, NULL, NULL, 0), PGRES_COMMAND_OK)) {
        return -1;
    }
    return fz_cmd(c, "COMMIT") ? 0 : -1;
}

static int fence_bench(PGconn *c, double secs) {
    ldl_pg fp;
    double rate[3], t[3] = { 0, 0, 0 };
    long n[3] = { 0, 0, 0 };
    int slice, how;
    if (ldl_pg_init_ex(&fp, c, "ldl_lease", LDL_PG_FENCE) != LDL_OK) {
        fprintf(stderr, "bench_pg fence: init: %s\n", ldl_pg_why(&fp));
        return 1;
    }
    if (!fz_cmd(c, "SET client_min_messages = warning") ||
        !fz_cmd(c, "CREATE TABLE IF NOT EXISTS bench_fz (id int PRIMARY KEY, v bigint NOT NULL, fence bigint)") ||
        !fz_cmd(c, "INSERT INTO bench_fz VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING") ||
        !fz_ok(PQprepare(c, "bench_fz_upd", "UPDATE bench_fz SET v = v + 1, fence = $1::bigint WHERE id = 1",
                         0, NULL), PGRES_COMMAND_OK) ||
        !fz_ok(PQprepare(c, "bench_fz_fence", ldl_pg_fence_sql(&fp), 0, NULL), PGRES_COMMAND_OK))
        return 1;
    for (how = 0; how < 3; how++)         /* warm up: plans, the mark's row */
        for (slice = 0; slice < 50; slice++) if (fz_tx(c, &fp, how) != 0) return 1;
    for (slice = 0; slice < 30; slice++) {
        how = slice % 3;
        {
            uint64_t t0 = bench_ns(), end = t0 + (uint64_t)(secs / 30.0 * 1e9);
            while (bench_ns() < end) {
                if (fz_tx(c, &fp, how) != 0) return 1;
                n[how]++;
            }
            t[how] += (double)(bench_ns() - t0);
        }
    }
    for (how = 0; how < 3; how++) rate[how] = (double)n[how] * 1e9 / t[how];
    printf("%.1f %.1f %.1f\n", rate[0], rate[1], rate[2]);
    PQfinish(c);
    return 0;
}

int main(int argc, char **argv) {
    PGconn *c;
    ldl_pg p;
    ldl_pg_async pa;
    ldl_async_store as;
    ldl_pg_req *reqs;
    bp_lock *ls;
    long k, i;
    double secs;
    char key[40];
    if (argc < 4) { fprintf(stderr, "usage: bench_pg CONNINFO acqrel|run OPS | pipe|frame K SECS [unnamed|stop]\n"); return 2; }
    c = PQconnectdb(argv[1]);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "bench_pg: connect: %s", PQerrorMessage(c)); return 1; }
    if (strcmp(argv[2], "fence") == 0) return fence_bench(c, atof(argv[3]) > 0 ? atof(argv[3]) : 2.0);
    if (strcmp(argv[2], "acqrel") == 0 || strcmp(argv[2], "run") == 0) {
        ldl_store st;
        double rate;
        if (ldl_pg_init(&p, c, "ldl_lease") != LDL_OK) { fprintf(stderr, "bench_pg: init: %s\n", ldl_pg_why(&p)); return 1; }
        st = ldl_pg_store(&p);
        rate = bs_lifecycles(&st, "bench-c", argv[2], atol(argv[3]));
        PQfinish(c);
        if (rate < 0) return 1;
        printf("%.1f\n", rate);
        return 0;
    }
    if (argc < 5) return 2;
    k = atol(argv[3]);
    secs = atof(argv[4]);
    if (k < 1 || k > 100000 || secs <= 0) return 2;
    if (ldl_pg_init_ex(&p, c, "ldl_lease", argc > 5 && strcmp(argv[5], "unnamed") == 0 ? LDL_PG_UNNAMED : 0) != LDL_OK) {
        fprintf(stderr, "bench_pg: init: %s\n", ldl_pg_why(&p));
        return 1;
    }
    if (strcmp(argv[2], "rawpipe") == 0) return raw_pipe(c, &p, k, secs);
    reqs = (ldl_pg_req *)calloc((size_t)k * 2, sizeof *reqs);
    ls = (bp_lock *)calloc((size_t)k, sizeof *ls);
    if (!reqs || !ls || ldl_pg_async_init(&pa, &p, reqs, (size_t)k * 2) != LDL_OK) { fprintf(stderr, "bench_pg: async init\n"); return 1; }
    as = ldl_pg_async_store(&pa);
    for (i = 0; i < k; i++) {
        snprintf(key, sizeof key, "bench-%s-%ld-%ld", argv[2], (long)getpid(), i);  /* fresh keys */
        if (bp_init(&ls[i], &as, key, 10000, 3000) != 0) return 1;
    }
    if (strcmp(argv[2], "pipe") == 0) {
        uint64_t t0 = bench_ns(), end = t0 + (uint64_t)(secs * 1e9), warm = t0 + (uint64_t)(secs * 1e8);
        long done = 0;
        int counting = 0;
        while (bench_ns() < end) {
            int got = ldl_pg_async_pump(&pa);
            if (got < 0) { fprintf(stderr, "bench_pg: pump: %s\n", ldl_pg_why(&p)); return 1; }
            if (got == 0) {             /* nothing answered: wait on the socket, as a loop would */
                int ev = 0, fd = ldl_pg_async_fd(&pa, &ev);
                struct pollfd pf;
                pf.fd = fd;
                pf.events = (short)(((ev & LDL_WANT_READ) ? POLLIN : 0) | ((ev & LDL_WANT_WRITE) ? POLLOUT : 0));
                pf.revents = 0;
                if (fd >= 0 && ev) (void)poll(&pf, 1, 1);
            }
            if (!counting && bench_ns() >= warm) { counting = 1; done = 0; t0 = bench_ns(); }
            for (i = 0; i < k; i++) {
                ldl_lock *l = &ls[i].lock;
                int s = ldl_lock_state(l);
                if (s == LDL_IDLE || s == LDL_RELEASED) {
                    if (!ldl_lock_pending(l)) (void)ldl_lock_acquire(l);
                } else if (s == LDL_RELEASING) {
                    if (ldl_lock_release(l) != LDL_EINPROGRESS) done++;
                } else if (ldl_lock_poll(l) == 1) {
                    int rc = ldl_lock_release(l);
                    if (rc != LDL_EINPROGRESS) done++;
                }
            }
        }
        printf("%.1f\n", (double)done * 1e9 / (double)(bench_ns() - t0));
    } else if (strcmp(argv[2], "session") == 0) {
        if (session_bench(argv[1], &pa, ls, k, (int)secs) != 0) return 1;
    } else if (strcmp(argv[2], "frame") == 0) {
        uint64_t *f = (uint64_t *)malloc(sizeof *f * 200000), t0, end;
        long n = 0, held = 0;
        int pid = PQbackendPID(c), stop = argc > 5 && strcmp(argv[5], "stop") == 0;
        for (i = 0; i < k; i++) (void)ldl_lock_acquire(&ls[i].lock);
        end = bench_ns() + 20000000000ull;
        while (held < k && bench_ns() < end) {
            (void)ldl_pg_async_pump(&pa);
            for (held = 0, i = 0; i < k; i++) held += ldl_lock_poll(&ls[i].lock) == 1;
        }
        if (held < k || !f) { fprintf(stderr, "bench_pg: only %ld of %ld held\n", held, k); return 1; }
        if (stop && kill(pid, SIGSTOP) != 0) { perror("bench_pg: SIGSTOP"); return 1; }
        end = bench_ns() + (uint64_t)(secs * 1e9);
        while ((t0 = bench_ns()) < end && n < 200000) {
            (void)ldl_pg_async_pump(&pa);
            for (i = 0; i < k; i++) BENCH_KEEP(ldl_lock_poll(&ls[i].lock));
            f[n++] = bench_ns() - t0;
            {   /* a frame every ~1 ms, as a loop waiting on its fd would */
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
        if (stop) kill(pid, SIGCONT);
        qsort(f, (size_t)n, sizeof *f, bp_cmp_u);
        printf("%.1f %.1f %.1f\n", (double)f[n / 2] / 1e3, (double)f[n * 99 / 100] / 1e3, (double)f[n - 1] / 1e3);
        free(f);
    } else {
        return 2;
    }
    for (i = 0; i < k; i++) ldl_lock_dispose(&ls[i].lock);
    for (i = 0; i < 200; i++) {         /* let the fire-and-forget releases out */
        if (ldl_pg_async_pump(&pa) < 0) break;
        {
            int ev = 0;
            if (ldl_pg_async_fd(&pa, &ev) >= 0 && ev == 0) break;
        }
        {
            struct timespec ts = { 0, 2000000 };
            nanosleep(&ts, NULL);
        }
    }
    PQfinish(c);
    free(ls);
    free(reqs);
    return 0;
}
