/* pg_pooler.c -- the PostgreSQL adapter through a real pgbouncer, started by
 * tests/store/with_pgbouncer.sh (LDL_PGB_MODE: tx1, tx2rr, session, session1).
 * Transaction pooling uses LDL_PG_UNNAMED (no named prepared statements);
 * session pooling uses both modes. Checked in every mode:
 *   - the role's timeouts (ALTER ROLE .. SET) apply through the pooler, and
 *     the `options` startup parameter is refused by it (what the docs say);
 *   - init on fresh client connections (with two server connections and
 *     server_round_robin, every other statement lands on another backend);
 *   - a lock's lifecycle, synchronous and non-blocking (pipelined);
 *   - 2-process contention on a fenced resource, synchronous and non-blocking.
 * session1 (pool of one): init while another client holds the only server
 * connection fails with an error that says what happened.
 * Run through with_pg.sh + with_pgbouncer.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define TABLE "ldl_pooled"
static unsigned flags;          /* LDL_PG_UNNAMED in transaction pooling */
static const char *mode;
static char res_path[512];

static int init_pg(ldl_pg *pg, PGconn *c, unsigned fl)
{
    int rc = ldl_pg_init_ex(pg, c, TABLE, fl);
    if (rc != LDL_OK) fprintf(stderr, "[%s] init: %d %s\n", mode, rc, ldl_pg_why(pg));
    return rc;
}

static void settings(void)
{
    PGconn *c = pgt_connect("");
    PGresult *r = PQexec(c, "SHOW statement_timeout");
    ST_CHECK(r && PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "2500ms") == 0,
             "[%s] statement_timeout from ALTER ROLE applies through the pooler (%s)", mode,
             r && PQntuples(r) ? PQgetvalue(r, 0, 0) : PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    {   /* refused on purpose: connect without pgt_connect's complaint */
        char ci[1024];
        snprintf(ci, sizeof ci, "%s options='-c statement_timeout=1000'", getenv("LDL_PG_CONNINFO"));
        c = PQconnectdb(ci);
    }
    ST_CHECK(PQstatus(c) == CONNECTION_BAD && strstr(PQerrorMessage(c), "unsupported startup parameter"),
             "[%s] the pooler refuses the options startup parameter", mode);
    PQfinish(c);
}

static void inits(void)
{
    int i, ok = 0;
    for (i = 0; i < 6; i++) {
        PGconn *c = pgt_connect("");
        ldl_pg pg = {0};
        ldl_store s;
        int64_t t = 0;
        char key[32];
        snprintf(key, sizeof key, "init-%s-%d", mode, i);
        if (init_pg(&pg, c, flags) == LDL_OK) {
            s = ldl_pg_store(&pg);
            ok += s.acquire(s.ctx, key, 5000, &t) == 1 && s.release(s.ctx, key, t) == 1;
        }
        PQfinish(c);
    }
    ST_CHECK(ok == 6, "[%s] 6 inits on fresh connections, each followed by acquire + release (%d)", mode, ok);
    /* named mode: init itself never depends on the server connection that
       prepared the statements (no EXECUTE during init) */
    for (ok = 0, i = 0; i < 4; i++) {
        PGconn *c = pgt_connect("");
        ldl_pg pg = {0};
        ok += init_pg(&pg, c, 0) == LDL_OK;
        PQfinish(c);
    }
    ST_CHECK(ok == 4, "[%s] 4 named-mode inits on fresh connections (%d)", mode, ok);
}

static void lifecycle_sync(unsigned fl)
{
    PGconn *c = pgt_connect("");
    ldl_pg pg = {0};
    pgt_lock t;
    uint64_t end;
    int held = 1;
    if (init_pg(&pg, c, fl) != LDL_OK || pgt_lock_init(&t, &pg, "life-sync", 1500, 300) != 0) {
        ST_CHECK(0, "[%s] sync lifecycle setup", mode);
        PQfinish(c);
        return;
    }
    ST_CHECK(ldl_lock_acquire(&t.lock) == 1, "[%s] sync acquire (%s)", mode, ldl_pg_why(&pg));
    end = st_now_ms() + 1200;           /* four heartbeats */
    while (st_now_ms() < end) { held &= ldl_lock_poll(&t.lock) == 1; st_sleep_ms(20); }
    ST_CHECK(held && t.lost_calls == 0, "[%s] sync: held through the heartbeats (%s)", mode, ldl_pg_why(&pg));
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "[%s] sync release", mode);
    ldl_lock_dispose(&t.lock);
    PQfinish(c);
}

/* the non-blocking view: n locks pipelined on one client connection */
static int async_round(ldl_pg_async *pa, pgt_alock *ls, int n, uint32_t hold_ms)
{
    uint64_t end = st_now_ms() + 10000, until;
    int i, held = 0, rel = 0;
    for (i = 0; i < n; i++) (void)ldl_lock_acquire(&ls[i].lock);
    while (st_now_ms() < end) {
        held = 0;
        if (ldl_pg_async_pump(pa) < 0) break;
        for (i = 0; i < n; i++) held += ldl_lock_poll(&ls[i].lock) == 1;
        if (held == n) break;
        st_sleep_ms(1);
    }
    until = st_now_ms() + hold_ms;
    while (held == n && st_now_ms() < until) {
        if (ldl_pg_async_pump(pa) < 0) { held = -1; break; }
        for (i = 0; i < n; i++) if (ldl_lock_poll(&ls[i].lock) != 1) held = -1;
        st_sleep_ms(2);
    }
    for (i = 0; i < n; i++) (void)ldl_lock_release(&ls[i].lock);
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        int pend = 0;
        if (ldl_pg_async_pump(pa) < 0) break;
        for (i = 0; i < n; i++) { (void)ldl_lock_poll(&ls[i].lock); pend += ldl_lock_pending(&ls[i].lock); }
        if (!pend) break;
        st_sleep_ms(1);
    }
    for (i = 0; i < n; i++) rel += ldl_lock_answer(&ls[i].lock) == 1;
    return held == n && rel == n ? 0 : -1;
}

static void lifecycle_async(unsigned fl)
{
    static ldl_pg_req reqs[64];
    static pgt_alock ls[20];
    PGconn *c = pgt_connect("");
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    char key[32];
    int i, rc;
    if (init_pg(&pg, c, fl) != LDL_OK || ldl_pg_async_init(&pa, &pg, reqs, 64) != LDL_OK) {
        ST_CHECK(0, "[%s] async setup: %s", mode, ldl_pg_why(&pg));
        PQfinish(c);
        return;
    }
    as = ldl_pg_async_store(&pa);
    for (i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "life-async-%d", i);
        if (pgt_alock_init(&ls[i], &as, key, 1500, 300) != 0) { ST_CHECK(0, "lock"); return; }
    }
    rc = async_round(&pa, ls, 20, 1000);
    ST_CHECK(rc == 0, "[%s%s] non-blocking: 20 pipelined locks acquired, held through the heartbeats, "
             "released (%s)", mode, fl ? ", unnamed" : "", ldl_pg_why(&pg));
    for (i = 0; i < 20; i++) ST_CHECK(ls[i].lost_calls == 0, "[%s] no on_lost", mode);
    for (i = 0; i < 20; i++) ldl_lock_dispose(&ls[i].lock);
    PQfinish(c);
}

/* 2 processes, one key, fenced read-modify-write: sync or non-blocking */
#define ROUNDS 30
static int worker(void *arg, int in, int out)
{
    static ldl_pg_req reqs[8];
    int async = (int)(intptr_t)arg & 1, id = (int)(intptr_t)arg >> 1, done = 0;
    PGconn *c = pgt_connect("");
    ldl_pg pg = {0};
    ldl_pg_async pa;
    ldl_async_store as;
    pgt_lock t;
    pgt_alock ta;
    ldl_lock *l;
    uint64_t end;
    (void)out;
    if (init_pg(&pg, c, flags) != LDL_OK) return 10;
    if (async) {
        if (ldl_pg_async_init(&pa, &pg, reqs, 8) != LDL_OK) return 11;
        as = ldl_pg_async_store(&pa);
        if (pgt_alock_init(&ta, &as, "contend", 3000, 1000) != 0) return 12;
        l = &ta.lock;
    } else {
        if (pgt_lock_init(&t, &pg, "contend", 3000, 1000) != 0) return 12;
        l = &t.lock;
    }
    srand((unsigned)(id * 7919 + 3));
    if (st_recv(in, 10000) != 'g') return 13;
    end = st_now_ms() + 60000;
    while (done < ROUNDS && st_now_ms() < end) {
        int rc;
        if (async && ldl_pg_async_pump(&pa) < 0) { fprintf(stderr, "w%d: %s\n", id, ldl_pg_why(&pg)); return 14; }
        rc = async && ldl_lock_state(l) != LDL_IDLE && ldl_lock_state(l) != LDL_RELEASED
                 ? ldl_lock_poll(l) : ldl_lock_acquire(l);
        if (rc == 1 && !ldl_lock_pending(l)) {
            int64_t f = ldl_lock_fencing_token(l), v = -1;
            fenced_enter(res_path);
            if (fenced_read(res_path, f, &v) == 1) {
                st_sleep_ms(1);
                if (fenced_write(res_path, f, v + 1) == 1 && ldl_lock_poll(l) == 1) {
                    fenced_completed(res_path);
                    done++;
                }
            }
            fenced_leave(res_path);
            rc = ldl_lock_release(l);
            while (async && rc == LDL_EINPROGRESS) {
                if (ldl_pg_async_pump(&pa) < 0) break;
                st_sleep_ms(1);
                rc = ldl_lock_release(l);
            }
            if (rc != 1) { fprintf(stderr, "w%d: release = %d (%s)\n", id, rc, ldl_pg_why(&pg)); return 15; }
        } else if (rc < 0 && rc != LDL_EINPROGRESS) {
            fprintf(stderr, "w%d: acquire = %d (%s)\n", id, rc, ldl_pg_why(&pg));
            return 16;
        } else {
            st_sleep_ms((uint32_t)(1 + rand() % 3));
        }
    }
    ldl_lock_dispose(l);
    PQfinish(c);
    if (done != ROUNDS) fprintf(stderr, "w%d: %d of %d rounds\n", id, done, ROUNDS);
    return done == ROUNDS ? 0 : 17;
}

static void contention(int async)
{
    st_child ch[2];
    fenced_stats st;
    int64_t log[2 * ROUNDS + 2];
    size_t n = 0;
    int i, ok = 0;
    char dir[400];
    if (st_tmpdir(dir, sizeof dir, "pgpool") != 0) { ST_CHECK(0, "tmpdir"); return; }
    snprintf(res_path, sizeof res_path, "%s/res", dir);
    if (fenced_create(res_path) != 0) { ST_CHECK(0, "fenced_create"); return; }
    for (i = 0; i < 2; i++) st_fork(&ch[i], worker, (void *)(intptr_t)(i * 2 + async));
    st_sleep_ms(200);
    for (i = 0; i < 2; i++) st_send(ch[i].to_child, 'g');
    for (i = 0; i < 2; i++) ok += st_join(&ch[i], 90000) == 0;
    ST_CHECK(ok == 2, "[%s] %s contention: both workers finished (%d)", mode, async ? "non-blocking" : "sync", ok);
    ST_CHECK(fenced_stats_get(res_path, &st) == 0 && fenced_log(res_path, log, 2 * ROUNDS + 2, &n) == 0, "stats");
    ST_CHECK(st.value == 2 * ROUNDS && st.writes == st.value && st.completed == st.value && st.rejected == 0 &&
             st.max_inside == 1 && fenced_log_increasing(log, n),
             "[%s] %s: value %lld writes %lld completed %lld rejected %lld max_inside %lld", mode,
             async ? "non-blocking" : "sync", (long long)st.value, (long long)st.writes,
             (long long)st.completed, (long long)st.rejected, (long long)st.max_inside);
}

/* session pooling, one server connection, taken: init says what happened */
static void exhausted(void)
{
    PGconn *hold = pgt_connect(""), *c;
    ldl_pg pg = {0};
    int rc;
    ST_CHECK(pgt_exec(hold, "SELECT 1"), "[%s] the first client takes the only server connection", mode);
    c = pgt_connect("");
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "[%s] the second client logs in to the pooler", mode);
    rc = ldl_pg_init(&pg, c, TABLE);
    printf("[%s] init with the pool exhausted: %d (%s)\n", mode, rc, ldl_pg_why(&pg));
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&pg), "query_wait_timeout") != NULL,
             "[%s] init fails and names the pooler's timeout (%s)", mode, ldl_pg_why(&pg));
    PQfinish(c);
    PQfinish(hold);
    /* once the first client leaves, init works */
    c = pgt_connect("");
    ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "[%s] init once the pool has room (%s)", mode, ldl_pg_why(&pg));
    PQfinish(c);
}

int main(void)
{
    st_ignore_sigpipe();
    mode = getenv("LDL_PGB_MODE");
    if (!mode) { fprintf(stderr, "run me through tests/store/with_pgbouncer.sh\n"); return 2; }
    flags = strncmp(mode, "tx", 2) == 0 ? LDL_PG_UNNAMED : 0;
    if (strcmp(mode, "session1") == 0) {
        exhausted();
        return st_report();
    }
    settings();
    inits();
    lifecycle_sync(flags);
    lifecycle_async(flags);
    if (!flags) {                       /* session pooling: the unnamed mode works too */
        lifecycle_sync(LDL_PG_UNNAMED);
        lifecycle_async(LDL_PG_UNNAMED);
    }
    contention(0);
    contention(1);
    return st_report();
}
