/* sqlite_contention.c -- 8 processes x many rounds over ONE key in one SQLite file, each
 * doing a fenced read-modify-write on a SQLite resource (a table in the same file,
 * written only inside BEGIN IMMEDIATE .. ldl_sqlite_fence .. COMMIT) while it holds the
 * lock, and after each round trying a write with its previous, older fence.
 * Invariants: the trust windows ([grant returned, release called], CLOCK_MONOTONIC in ns, one
 * clock for every process) never overlap; the accepted fences are strictly rising
 * (exactly 1, 2, 3, ...); every stale write is refused (0 accepted); v == rounds; never
 * two processes inside the critical section (tests/store/fenced.h) at once.
 * argv[1]: the parent of the temp dir (/dev/shm for tmpfs). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"

#define NPROC 8
#define ROUNDS 100
#define KEY "contended"
static char db_path[600], res_path[600];

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct window { int64_t from, to, fence; int writer; } window;

static int worker(void *arg, int in, int out)
{
    int id = (int)(intptr_t)arg, done = 0, tries = 0, errs = 0;
    int64_t prev = 0;
    uint64_t end;
    ldl_sqlite sq = {0};
    sqt_lock t;
    window w[ROUNDS];
    (void)in;
    if (ldl_sqlite_open(&sq, db_path, NULL, 0) != LDL_OK) { fprintf(stderr, "w%d open: %s\n", id, ldl_sqlite_why(&sq)); return 10; }
    /* the caller's own BEGIN IMMEDIATE waits on its own busy handler; the adapter's
       bound is raised too, so that a loaded CI disk cannot fail a round */
    sqlite3_busy_timeout(ldl_sqlite_db(&sq), 10000);
    ldl_sqlite_set_busy_ms(&sq, 10000);
    if (sqt_lock_init(&t, &sq, KEY, 10000, 3000) != 0) return 11;
    srand((unsigned)(id * 7919 + 1));
    end = st_now_ms() + 120000;
    while (done < ROUNDS && st_now_ms() < end) {
        int rc = ldl_lock_acquire(&t.lock);
        tries++;
        if (rc == 1) {
            int64_t f = ldl_lock_fencing_token(&t.lock), v = -1;
            w[done].from = now_ns();     /* after the grant returned */
            w[done].fence = f;
            w[done].writer = id;
            fenced_enter(res_path);
            if (fenced_read(res_path, f, &v) == 1 && fenced_write(res_path, f, v + 1) == 1) {
                int r = sqt_fenced_rmw(&sq, "counter", f, id);
                if (r != 1) { fprintf(stderr, "w%d: fenced write with the held fence %lld = %d (%s)\n", id, (long long)f, r, ldl_sqlite_why(&sq)); return 15; }
                if (ldl_lock_poll(&t.lock) == 1) fenced_completed(res_path);
            }
            fenced_leave(res_path);
            w[done].to = now_ns();       /* before release is called */
            done++;
            if (ldl_lock_release(&t.lock) != 1) { fprintf(stderr, "w%d: release != 1 (%s)\n", id, ldl_sqlite_why(&sq)); return 12; }
            if (prev >= 1) {     /* a stale write: its previous fence is below the mark now */
                int r = sqt_fenced_rmw(&sq, "counter", prev, id);
                if (r != 0) { fprintf(stderr, "w%d: stale write with fence %lld = %d, want 0\n", id, (long long)prev, r); return 16; }
            }
            prev = f;
        } else if (rc != 0) {
            errs++;              /* a store error is never a grant; try again */
        } else {
            st_sleep_ms((uint32_t)(1 + rand() % 3));
        }
    }
    ldl_lock_dispose(&t.lock);
    ldl_sqlite_close(&sq);
    if (done != ROUNDS) fprintf(stderr, "w%d: %d of %d rounds (%d tries, %d store errors)\n", id, done, ROUNDS, tries, errs);
    if (write(out, w, sizeof w[0] * (size_t)done) != (ssize_t)(sizeof w[0] * (size_t)done)) return 17;
    return done == ROUNDS ? 0 : 14;
}

static int by_from(const void *a, const void *b)
{
    const window *x = (const window *)a, *y = (const window *)b;
    return x->from < y->from ? -1 : x->from > y->from;
}

static ssize_t read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int main(int argc, char **argv)
{
    static window all[NPROC * ROUNDS];
    static int64_t log[NPROC * ROUNDS + 8];
    st_child ch[NPROC];
    fenced_stats st;
    size_t n = 0, i, nw = 0;
    int k, seq = 1, overlap = 0;
    uint64_t t0;
    ldl_sqlite sq = {0};
    sqlite3 *db;

    st_ignore_sigpipe();
    sqt_setup(argc, argv, "ldl-sqlite-contend");
    sqt_path(db_path, sizeof db_path, "locks.db");
    sqt_path(res_path, sizeof res_path, "resource");
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, LDL_SQLITE_CREATE) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    db = ldl_sqlite_db(&sq);
    ST_CHECK(sqt_exec(db, SQT_RES_SQL), "resource table");
    ST_CHECK(fenced_create(res_path) == 0, "resource file");
    if (st_failed()) return st_report();

    st_case("contention", 4 * SQT_CASE_S);         /* one case: NPROC workers x ROUNDS */
    t0 = st_now_ms();
    for (k = 0; k < NPROC; k++) ST_CHECK(st_fork(&ch[k], worker, (void *)(intptr_t)k) == 0, "fork %d", k);
    for (k = 0; k < NPROC; k++) {
        ssize_t got = read_all(ch[k].from_child, all + nw, sizeof all[0] * ROUNDS);
        int rc = st_join(&ch[k], 150000);
        ST_CHECK(rc == 0, "worker %d exit %d", k, rc);
        if (got > 0) nw += (size_t)got / sizeof all[0];
    }
    fprintf(stderr, "contention [%s]: %d procs x %d rounds in %llu ms\n", argc > 1 ? argv[1] : "disk",
            NPROC, ROUNDS, (unsigned long long)(st_now_ms() - t0));

    st_case("", 0);
    /* trust windows: sorted by start, each ends before the next begins */
    ST_CHECK(nw == NPROC * ROUNDS, "windows reported %lu", (unsigned long)nw);
    qsort(all, nw, sizeof all[0], by_from);
    for (i = 1; i < nw; i++)
        if (all[i].from <= all[i - 1].to) overlap++;
    ST_CHECK(overlap == 0, "%d trust windows overlap the one before", overlap);
    for (i = 1; i < nw; i++)
        if (all[i].fence <= all[i - 1].fence) break;
    ST_CHECK(i == nw || nw == 0, "fences rise with the windows' order (entry %lu)", (unsigned long)i);

    /* the SQLite resource: exactly one accepted write per grant, fences 1..N in commit order */
    {
        sqlite3_stmt *q = NULL;
        int64_t want = 1;
        ST_CHECK(sqt_int(db, "SELECT v FROM res WHERE id = 1", NULL) == NPROC * ROUNDS, "v == rounds");
        ST_CHECK(sqt_int(db, "SELECT count(*) FROM res_log", NULL) == NPROC * ROUNDS, "one log row per grant: no stale write accepted");
        sqlite3_prepare_v2(db, "SELECT fence FROM res_log ORDER BY n", -1, &q, NULL);
        while (sqlite3_step(q) == SQLITE_ROW) {
            if (sqlite3_column_int64(q, 0) != want) { seq = 0; break; }
            want++;
        }
        sqlite3_finalize(q);
        ST_CHECK(seq, "accepted fences are exactly 1..%d in commit order (stopped at %lld)", NPROC * ROUNDS, (long long)want);
        ST_CHECK(sqt_int(db, "SELECT fence FROM ldl_lease_fence WHERE resource = 'counter'", NULL) == NPROC * ROUNDS,
                 "the mark is the last fence");
        ST_CHECK(sqt_int(db, "SELECT token FROM ldl_lease WHERE key = ?1", KEY) == NPROC * ROUNDS,
                 "the row's token equals the number of grants");
    }
    /* the file resource: mutual exclusion and no lost update */
    ST_CHECK(fenced_stats_get(res_path, &st) == 0, "stats");
    ST_CHECK(st.writes == NPROC * ROUNDS && st.value == st.writes && st.completed == st.writes,
             "writes %lld value %lld completed %lld", (long long)st.writes, (long long)st.value, (long long)st.completed);
    ST_CHECK(st.rejected == 0 && st.max_inside == 1 && st.inside == 0, "rejected %lld max inside %lld",
             (long long)st.rejected, (long long)st.max_inside);
    ST_CHECK(fenced_log(res_path, log, sizeof log / sizeof log[0], &n) == 0 && fenced_log_increasing(log, n), "log");
    ldl_sqlite_close(&sq);
    sqt_cleanup();
    return st_report();
}
