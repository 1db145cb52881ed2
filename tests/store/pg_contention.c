/* pg_contention.c -- several processes x many rounds over ONE key on a real
 * PostgreSQL, each doing a fenced read-modify-write on the shared fenced
 * resource (tests/store/fenced.h) while it holds the lock.
 * Invariants: every accepted write carries a fence above all earlier accepted
 * ones (the log is 1, 2, 3, ... since each grant bumps the row's token by one);
 * value == writes == completed sections == procs x rounds; nothing rejected;
 * never two processes inside at once.
 * Run through tests/store/with_pg.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define NPROC 4
#define ROUNDS 100
#define KEY "contended"
static char res_path[512];

static int worker(void *arg, int in, int out)
{
    int id = (int)(intptr_t)arg, done = 0, tries = 0;
    uint64_t end;
    PGconn *c = pgt_connect("");
    ldl_pg pg = {0};
    pgt_lock t;
    (void)in; (void)out;
    if (ldl_pg_init(&pg, c, "ldl_contend") != LDL_OK) { fprintf(stderr, "w%d init: %s\n", id, ldl_pg_why(&pg)); return 10; }
    if (pgt_lock_init(&t, &pg, KEY, 3000, 1000) != 0) return 11;
    srand((unsigned)(id * 7919 + 1));
    end = st_now_ms() + 60000;
    while (done < ROUNDS && st_now_ms() < end) {
        int rc = ldl_lock_acquire(&t.lock);
        tries++;
        if (rc == 1) {
            int64_t f = ldl_lock_fencing_token(&t.lock), v = -1;
            fenced_enter(res_path);
            if (fenced_read(res_path, f, &v) == 1) {
                st_sleep_ms(1);                         /* widen the race window */
                if (fenced_write(res_path, f, v + 1) == 1 && ldl_lock_poll(&t.lock) == 1) {
                    fenced_completed(res_path);
                    done++;
                }
            }
            fenced_leave(res_path);
            if (ldl_lock_release(&t.lock) != 1) { fprintf(stderr, "w%d: release != 1 (%s)\n", id, ldl_pg_why(&pg)); return 12; }
        } else if (rc != 0) {
            fprintf(stderr, "w%d: acquire = %d\n", id, rc);
            return 13;
        } else {
            st_sleep_ms((uint32_t)(rand() % 3));
        }
    }
    ldl_lock_dispose(&t.lock);
    PQfinish(c);
    if (done != ROUNDS) fprintf(stderr, "w%d: %d of %d rounds (%d tries)\n", id, done, ROUNDS, tries);
    return done == ROUNDS ? 0 : 14;
}

int main(void)
{
    static int64_t log[NPROC * ROUNDS + 8];
    char dir[256];
    st_child ch[NPROC];
    fenced_stats st;
    size_t n = 0, i;
    int k, ok = 0, seq = 1;
    uint64_t t0;
    PGconn *c = pgt_connect("");

    ST_CHECK(PQstatus(c) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(c, "SET client_min_messages = warning");
    ST_CHECK(pgt_exec(c, "DROP TABLE IF EXISTS ldl_contend"), "fresh table");
    ST_CHECK(st_tmpdir(dir, sizeof dir, "ldl-pg-contend") == 0, "tmpdir");
    snprintf(res_path, sizeof res_path, "%s/resource", dir);
    ST_CHECK(fenced_create(res_path) == 0, "resource");

    t0 = st_now_ms();
    for (k = 0; k < NPROC; k++) ST_CHECK(st_fork(&ch[k], worker, (void *)(intptr_t)k) == 0, "fork %d", k);
    for (k = 0; k < NPROC; k++) {
        int rc = st_join(&ch[k], 90000);
        ST_CHECK(rc == 0, "worker %d exit %d", k, rc);
        ok += rc == 0;
    }
    fprintf(stderr, "contention: %d procs x %d rounds in %llu ms\n", NPROC, ROUNDS,
            (unsigned long long)(st_now_ms() - t0));

    ST_CHECK(fenced_stats_get(res_path, &st) == 0, "stats");
    ST_CHECK(st.writes == NPROC * ROUNDS, "writes %lld, want %d", (long long)st.writes, NPROC * ROUNDS);
    ST_CHECK(st.value == st.writes, "value %lld != writes %lld (lost update)", (long long)st.value, (long long)st.writes);
    ST_CHECK(st.completed == st.writes, "completed %lld != writes %lld", (long long)st.completed, (long long)st.writes);
    ST_CHECK(st.rejected == 0, "rejected %lld", (long long)st.rejected);
    ST_CHECK(st.max_inside == 1, "max inside at once %lld", (long long)st.max_inside);
    ST_CHECK(st.inside == 0, "still inside %lld", (long long)st.inside);
    ST_CHECK(fenced_log(res_path, log, sizeof log / sizeof log[0], &n) == 0 && n == (size_t)st.writes, "log");
    ST_CHECK(fenced_log_increasing(log, n), "accepted fences strictly increasing");
    for (i = 0; i < n; i++) if (log[i] != (int64_t)(i + 1)) { seq = 0; break; }
    ST_CHECK(seq, "fences are exactly 1..%lu (entry %lu = %lld)", (unsigned long)n, (unsigned long)i,
             (long long)(i < n ? log[i] : -1));
    ST_CHECK(pgt_int(c, "SELECT token FROM ldl_contend WHERE key = $1", KEY) == NPROC * ROUNDS,
             "the row's token equals the number of grants");
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM ldl_contend WHERE expires_at > clock_timestamp()", NULL) == 0,
             "no lease left live");
    unlink(res_path);
    rmdir(dir);
    PQfinish(c);
    return st_report();
}
