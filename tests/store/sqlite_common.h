/* tests/store/sqlite_common.h -- helpers shared by the tests/store/sqlite_*.c programs.
 * Test code. Include after lite_di_lock.h and tests/store/fenced.h.
 *
 * Every program takes one optional argument: the directory under which it makes its temp
 * dir ("/dev/shm" for tmpfs; default $LDL_TEST_DIR, else $TMPDIR, else /tmp -- a disk
 * here). sqt_setup() makes the dir, sqt_path() names a file in it. */
#ifndef LDL_TESTS_STORE_SQLITE_COMMON_H
#define LDL_TESTS_STORE_SQLITE_COMMON_H

#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"

/* the per-case bound of the SQLite suites (st_case, issue 37), in seconds: every case
   runs in a few seconds here, under valgrind too; a hang fails by this bound */
#ifndef SQT_CASE_S
#define SQT_CASE_S 30
#endif

static char sqt__dir[512];

/* the temp dir under argv[1] (or the default); exits 2 when it cannot be made */
ST_FN const char *sqt_setup(int argc, char **argv, const char *tag)
{
    if (argc > 1 && argv[1][0]) setenv("LDL_TEST_DIR", argv[1], 1);
    if (st_tmpdir(sqt__dir, sizeof sqt__dir, tag) != 0) {
        fprintf(stderr, "cannot make a temp dir for %s\n", tag);
        exit(2);
    }
    st__case_rmdir = sqt__dir;              /* a case that times out removes it too */
    return sqt__dir;
}

ST_FN const char *sqt_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", sqt__dir, name);
    return buf;
}

/* remove the dir and what the suite left in it (db, -journal, -wal, -shm, resources) */
ST_FN void sqt_cleanup(void)
{
    char cmd[600];
    if (!sqt__dir[0]) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sqt__dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", sqt__dir);
}

/* a plain connection (no busy handler: the adapter's bound is the one tested) */
ST_FN sqlite3 *sqt_open(const char *path, int flags)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, flags ? flags : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqt_open(%s): %s\n", path, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* SQL on a helper connection; 1 when it succeeded */
ST_FN int sqt_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fprintf(stderr, "sqt_exec(%s): %s\n", sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return rc == SQLITE_OK;
}

/* one integer from a query with up to one text parameter; INT64_MIN on error / no row */
ST_FN int64_t sqt_int(sqlite3 *db, const char *sql, const char *param)
{
    sqlite3_stmt *st = NULL;
    int64_t v = INT64_MIN;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqt_int(%s): %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (param) sqlite3_bind_text(st, 1, param, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* a lock over an ldl_sqlite, with the header's reference container */
typedef struct sqt_lock {
    ldl_scope root, pool[2];
    ldl_store store;
    ldl_lock  lock;
    int lost_calls, lost_reason;
} sqt_lock;

ST_FN void sqt__on_lost(void *user, int reason)
{
    sqt_lock *t = (sqt_lock *)user;
    t->lost_calls++;
    t->lost_reason = reason;
}

ST_FN int sqt_lock_init(sqt_lock *t, ldl_sqlite *sq, const char *key, uint32_t ttl_ms, uint32_t hb_ms)
{
    ldl_lock_desc d;
    memset(t, 0, sizeof *t);
    ldl_scope_init(&t->root, t->pool, 2);
    t->store = ldl_sqlite_store(sq);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&t->root);
    d.key = key;
    d.ttl_ms = ttl_ms;
    d.heartbeat_ms = hb_ms;
    d.store = &t->store;
    d.on_lost = sqt__on_lost;
    d.user = t;
    if (ldl_lock_init(&t->lock, &d) != LDL_OK) {
        fprintf(stderr, "ldl_lock_init: %s\n", ldl_lock_why(&t->lock));
        return -1;
    }
    return 0;
}

/* the resource of the fenced-write tests: a table in the same file, written only
   through ldl_sqlite_fence inside BEGIN IMMEDIATE .. COMMIT */
#define SQT_RES_SQL "CREATE TABLE IF NOT EXISTS res (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, " \
    "writer INTEGER NOT NULL, fence INTEGER NOT NULL); " \
    "CREATE TABLE IF NOT EXISTS res_log (n INTEGER PRIMARY KEY, fence INTEGER NOT NULL, writer INTEGER NOT NULL); " \
    "INSERT OR IGNORE INTO res VALUES (1, 0, -1, 0)"

/* one fenced read-modify-write: BEGIN IMMEDIATE; fence; v = v + 1 and a log row; COMMIT
   (or ROLLBACK when stale). Answers the fence call's answer (1 committed, 0 stale and
   rolled back), or a negative value on any error (rolled back). */
ST_FN int sqt_fenced_rmw(ldl_sqlite *sq, const char *resource, int64_t fence, int writer)
{
    sqlite3 *db = ldl_sqlite_db(sq);
    char sql[256];
    int rc;
    if (!sqt_exec(db, "BEGIN IMMEDIATE")) return -100;
    rc = ldl_sqlite_fence(sq, resource, fence);
    if (rc == 1) {
        snprintf(sql, sizeof sql, "UPDATE res SET v = v + 1, writer = %d, fence = %lld WHERE id = 1; "
                 "INSERT INTO res_log (fence, writer) VALUES (%lld, %d)", writer, (long long)fence,
                 (long long)fence, writer);
        if (!sqt_exec(db, sql)) rc = -101;
    }
    if (rc == 1) { if (!sqt_exec(db, "COMMIT")) { sqt_exec(db, "ROLLBACK"); rc = -102; } }
    else sqt_exec(db, "ROLLBACK");
    return rc;
}

#endif /* LDL_TESTS_STORE_SQLITE_COMMON_H */
