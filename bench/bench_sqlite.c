/* bench_sqlite.c -- `make bench-sqlite`: the SQLite adapter beside plain libsqlite3.
 *
 * Per mode (disk WAL+FULL = the default, disk WAL+NORMAL = LDL_SQLITE_FAST, disk rollback
 * journal + FULL = LDL_SQLITE_KEEP_JOURNAL, tmpfs with the default), side by side in each
 * repetition, medians of BENCH_REPS (default 7):
 *   - lifecycle: ldl_lock_acquire + ldl_lock_release through the adapter;
 *   - plain: the same two transactions (BEGIN IMMEDIATE; the adapter's acquire / release
 *     statement; COMMIT) with plain prepared libsqlite3 statements, same file, same pragmas;
 *     the ratio plain time / lifecycle time (goal >= 90 %);
 *   - flock(2) LOCK_EX + LOCK_UN on a file in the same directory, for scale;
 *   - what one renew costs (median, p99 and max of 200 renews per repetition, 2 ms
 *     apart so that each writes a new expires_ms), against a 16.7 ms frame.
 * BENCH_SQLITE_DIR (default /tmp) is the disk; /dev/shm the tmpfs. */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"
#include "bench_util.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#define MAXN 4000

typedef struct mode { const char *name, *dir; unsigned flags; int n; } mode;

static const char *ACQ_SQL =
    "INSERT INTO main.\"ldl_lease\" AS l (key, token, expires_ms, boot, owner) "
    "VALUES (?1, 1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE SET token = l.token + 1, "
    "expires_ms = excluded.expires_ms, boot = excluded.boot, owner = excluded.owner "
    "WHERE l.expires_ms <= ?5 OR l.boot <> excluded.boot RETURNING token";
static const char *REL_SQL =
    "UPDATE main.\"ldl_lease\" SET expires_ms = -1 WHERE key = ?1 AND token = ?2 "
    "AND expires_ms >= 0 RETURNING token";

static int64_t now_ms(void) { return (int64_t)(bench_ns() / 1000000u); }

static int run(sqlite3_stmt *st) {
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) { }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

typedef struct plain { sqlite3 *db; sqlite3_stmt *begin, *commit, *acq, *rel; char boot[40]; } plain;

static int plain_open(plain *p, const char *path, unsigned flags) {
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    memset(p, 0, sizeof *p);
    if (!f || !fgets(p->boot, sizeof p->boot, f)) { if (f) fclose(f); return -1; }
    fclose(f);
    p->boot[36] = '\0';
    if (sqlite3_open_v2(path, &p->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return -1;
    sqlite3_exec(p->db, (flags & LDL_SQLITE_FAST) ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL",
                 NULL, NULL, NULL);
    if (sqlite3_prepare_v3(p->db, "BEGIN IMMEDIATE", -1, SQLITE_PREPARE_PERSISTENT, &p->begin, NULL) ||
        sqlite3_prepare_v3(p->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &p->commit, NULL) ||
        sqlite3_prepare_v3(p->db, ACQ_SQL, -1, SQLITE_PREPARE_PERSISTENT, &p->acq, NULL) ||
        sqlite3_prepare_v3(p->db, REL_SQL, -1, SQLITE_PREPARE_PERSISTENT, &p->rel, NULL)) return -1;
    return 0;
}

static void plain_close(plain *p) {
    sqlite3_finalize(p->begin); sqlite3_finalize(p->commit);
    sqlite3_finalize(p->acq); sqlite3_finalize(p->rel);
    sqlite3_close(p->db);
}

/* acquire + release by hand: the statements and transactions the adapter runs */
static int plain_cycle(plain *p, const char *key) {
    int64_t now, tok = 0;
    int rc;
    if (run(p->begin)) return -1;
    now = now_ms();
    sqlite3_bind_text(p->acq, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(p->acq, 2, now + 30000);
    sqlite3_bind_text(p->acq, 3, p->boot, -1, SQLITE_STATIC);
    sqlite3_bind_null(p->acq, 4);
    sqlite3_bind_int64(p->acq, 5, now);
    rc = sqlite3_step(p->acq);
    if (rc == SQLITE_ROW) tok = sqlite3_column_int64(p->acq, 0);
    run(p->acq);
    if (run(p->commit) || tok < 1) return -1;
    if (run(p->begin)) return -1;
    sqlite3_bind_text(p->rel, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(p->rel, 2, tok);
    run(p->rel);
    return run(p->commit);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void bench_mode(const mode *m) {
    static uint64_t renews[MAXN * 8];
    char dir[512], path[600], fpath[600];
    double life[16], pl[16], fl[16], ratio[16];
    int reps = bench_reps(), r, i, nren = 0, fd;
    ldl_sqlite sq;
    plain p;
    ldl_store store;
    ldl_scope root, pool[2];
    ldl_lock lock;
    ldl_lock_desc d;
    char durab[LDL__SQLITE_ERR_MAX];
    if (reps > 16) reps = 16;
    snprintf(dir, sizeof dir, "%s/ldl-bench-sqlite.XXXXXX", m->dir);
    if (!mkdtemp(dir)) { printf("%-22s cannot make a dir in %s\n", m->name, m->dir); return; }
    snprintf(path, sizeof path, "%s/locks.db", dir);
    snprintf(fpath, sizeof fpath, "%s/flock", dir);
    if (ldl_sqlite_open(&sq, path, NULL, m->flags | LDL_SQLITE_CREATE) != LDL_OK || plain_open(&p, path, m->flags) != 0) {
        printf("%-22s open failed: %s\n", m->name, ldl_sqlite_why(&sq));
        return;
    }
    ldl_sqlite_check_durability(&sq);
    snprintf(durab, sizeof durab, "%s", ldl_sqlite_why(&sq));
    store = ldl_sqlite_store(&sq);
    memset(&d, 0, sizeof d);
    ldl_scope_init(&root, pool, 2);
    d.container = ldl_scope_container(&root);
    d.key = "bench";
    d.ttl_ms = 30000;
    d.store = &store;
    fd = open(fpath, O_RDWR | O_CREAT, 0644);
    for (r = 0; r < reps; r++) {
        uint64_t t0, t1;
        /* lifecycle through the adapter (a fresh lock per cycle, as a job runner would) */
        t0 = bench_ns();
        for (i = 0; i < m->n; i++) {
            ldl_lock_init(&lock, &d);
            if (ldl_lock_acquire(&lock) != 1) { printf("acquire failed: %s\n", ldl_sqlite_why(&sq)); return; }
            ldl_lock_release(&lock);
            ldl_lock_dispose(&lock);
        }
        t1 = bench_ns();
        life[r] = (double)(t1 - t0) / m->n;
        /* the same transactions by hand */
        t0 = bench_ns();
        for (i = 0; i < m->n; i++)
            if (plain_cycle(&p, "plain") != 0) { printf("plain failed: %s\n", sqlite3_errmsg(p.db)); return; }
        t1 = bench_ns();
        pl[r] = (double)(t1 - t0) / m->n;
        ratio[r] = pl[r] / life[r];
        /* flock(2) on the same file system */
        t0 = bench_ns();
        for (i = 0; i < m->n; i++) { flock(fd, LOCK_EX); flock(fd, LOCK_UN); }
        t1 = bench_ns();
        fl[r] = (double)(t1 - t0) / m->n;
        /* renews of one held lease, each timed */
        ldl_lock_init(&lock, &d);
        if (ldl_lock_acquire(&lock) == 1) {
            for (i = 0; i < 200 && nren < (int)(sizeof renews / sizeof renews[0]); i++) {
                /* 2 ms apart (not timed): a renew in the same millisecond writes the
                   same expires_ms, and SQLite skips an unchanged row's write */
                struct timespec gap = { 0, 2000000L };
                nanosleep(&gap, NULL);
                t0 = bench_ns();
                if (ldl_lock_tick(&lock) != 1) break;
                renews[nren++] = bench_ns() - t0;
            }
        }
        ldl_lock_dispose(&lock);
    }
    qsort(renews, (size_t)nren, sizeof renews[0], cmp_u64);
    printf("%-26s lifecycle %8.1f us  plain %8.1f us  plain/lifecycle %5.1f %%  flock %6.2f us\n",
           m->name, bench_median(life, reps) / 1e3, bench_median(pl, reps) / 1e3, 100.0 * bench_median(ratio, reps),
           bench_median(fl, reps) / 1e3);
    if (nren > 0)
        printf("%-26s renew: median %7.1f us  p99 %8.1f us  max %8.1f us  (%d renews; a 60 fps frame is 16667 us)\n",
               "", renews[nren / 2] / 1e3, renews[(size_t)nren * 99 / 100] / 1e3, renews[nren - 1] / 1e3, nren);
    printf("%-26s %s\n", "", durab);
    close(fd);
    plain_close(&p);
    ldl_sqlite_close(&sq);
    {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) printf("cleanup of %s failed\n", dir);
    }
}

int main(void) {
    const char *disk = getenv("BENCH_SQLITE_DIR");
    mode modes[4];
    int i;
    if (!disk || !*disk) disk = "/tmp";
    modes[0].name = "disk, WAL+FULL (default)";  modes[0].dir = disk; modes[0].flags = 0; modes[0].n = 300;
    modes[1].name = "disk, WAL+NORMAL (FAST)";   modes[1].dir = disk; modes[1].flags = LDL_SQLITE_FAST; modes[1].n = 1000;
    modes[2].name = "disk, rollback+FULL";       modes[2].dir = disk; modes[2].flags = LDL_SQLITE_KEEP_JOURNAL; modes[2].n = 300;
    modes[3].name = "tmpfs, WAL+FULL";           modes[3].dir = "/dev/shm"; modes[3].flags = 0; modes[3].n = 1000;
    printf("bench-sqlite: SQLite %s, %d reps, medians; disk = %s\n", sqlite3_libversion(), bench_reps(), disk);
    for (i = 0; i < 4; i++) bench_mode(&modes[i]);
    return 0;
}
