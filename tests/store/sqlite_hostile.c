/* sqlite_hostile.c -- bad input for the SQLite adapter, each answered with a clear error
 * and a why, nothing changed, no crash, no leak (also run under valgrind):
 * a file that is not SQLite; a same-named table of another shape (and a fence table of
 * another shape); a view, an index of its own, a trigger (main and temp) on the table;
 * a database locked by another writer for longer than busy_ms; a COMMIT a reader keeps
 * from landing (no grant); a read-only connection,
 * a read-only file (opened by an unprivileged user), a missing file or directory; init
 * inside the caller's transaction. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"

static int64_t file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* init on a fresh file prepared by `setup`; answers init's code, why copied out */
static int init_after(const char *name, const char *setup, char *why, size_t n, int64_t *objects)
{
    char p[600];
    sqlite3 *db;
    ldl_sqlite sq = {0};
    int rc;
    sqt_path(p, sizeof p, name);
    db = sqt_open(p, 0);
    if (!db) return -999;
    if (setup && !sqt_exec(db, setup)) { sqlite3_close(db); return -998; }
    rc = ldl_sqlite_init(&sq, db, NULL);
    snprintf(why, n, "%s", ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    if (objects) *objects = sqt_int(db, "SELECT count(*) FROM sqlite_master", NULL);
    sqlite3_close(db);
    return rc;
}

#define LEASE_SQL "CREATE TABLE \"ldl_lease\" (key TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL " \
    "CHECK (typeof(token) = 'integer' AND token >= 1), expires_ms INTEGER NOT NULL " \
    "CHECK (typeof(expires_ms) = 'integer'), boot TEXT NOT NULL, owner TEXT)"

static void test_shapes(void)
{
    static const struct { const char *name, *setup, *why; int64_t objects; } cases[] = {
        { "foreign.db", "CREATE TABLE ldl_lease (key TEXT PRIMARY KEY, token INTEGER, expires_ms INTEGER)", "another shape", 2 },
        { "foreign2.db", "CREATE TABLE \"LDL_LEASE\" (key TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL)", "another shape", 2 },
        { "nocase.db", "CREATE TABLE \"ldl_lease\" (key TEXT COLLATE NOCASE PRIMARY KEY NOT NULL, token INTEGER NOT NULL "
          "CHECK (typeof(token) = 'integer' AND token >= 1), expires_ms INTEGER NOT NULL "
          "CHECK (typeof(expires_ms) = 'integer'), boot TEXT NOT NULL, owner TEXT)", "another shape", 2 },
        { "extra.db", LEASE_SQL "; ALTER TABLE ldl_lease ADD COLUMN x INTEGER", "another shape", 2 },
        { "view.db", "CREATE TABLE other (key TEXT, token INTEGER); CREATE VIEW ldl_lease AS SELECT * FROM other", "not a table", 2 },
        { "trigger.db", LEASE_SQL "; CREATE TRIGGER t AFTER UPDATE ON ldl_lease BEGIN UPDATE ldl_lease SET token = 1; END",
          "triggers", 3 },
        { "trigger2.db", LEASE_SQL "; CREATE TRIGGER t BEFORE INSERT ON ldl_lease BEGIN SELECT 1; END", "triggers", 3 },
        { "temptrig.db", LEASE_SQL "; CREATE TEMP TRIGGER t AFTER UPDATE ON main.ldl_lease BEGIN SELECT 1; END", "triggers", 2 },
        { "index.db", LEASE_SQL "; CREATE UNIQUE INDEX i ON ldl_lease (token)", "index", 3 },
        { "fence.db", LEASE_SQL "; CREATE TABLE ldl_lease_fence (resource TEXT PRIMARY KEY, fence REAL)", "another shape", 4 },
        { "fencetrig.db", "CREATE TABLE \"ldl_lease_fence\" (resource TEXT PRIMARY KEY NOT NULL, fence INTEGER NOT NULL "
          "CHECK (typeof(fence) = 'integer' AND fence >= 1)); CREATE TRIGGER ft BEFORE UPDATE ON ldl_lease_fence "
          "BEGIN SELECT RAISE(IGNORE); END", "triggers", 3 },
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[512];
        int64_t objects = -1;
        int rc = init_after(cases[i].name, cases[i].setup, why, sizeof why, &objects);
        ST_CHECK(rc == LDL_ESTORE, "%s: init = %d, want LDL_ESTORE", cases[i].name, rc);
        ST_CHECK(strstr(why, cases[i].why) != NULL, "%s: why '%s' names '%s'", cases[i].name, why, cases[i].why);
        ST_CHECK(objects == cases[i].objects, "%s: nothing created or changed (%lld schema objects)",
                 cases[i].name, (long long)objects);
    }
    {   /* a temp table of the same name shadows nothing: every statement names main */
        char p[600];
        sqlite3 *db = sqt_open(sqt_path(p, sizeof p, "temp.db"), 0);
        ldl_sqlite sq = {0};
        ldl_store s;
        int64_t t = 0;
        ST_CHECK(db && sqt_exec(db, "CREATE TEMP TABLE ldl_lease (key TEXT, token INTEGER)"), "a temp ldl_lease");
        ST_CHECK(ldl_sqlite_init(&sq, db, NULL) == LDL_OK, "init beside it: %s", ldl_sqlite_why(&sq));
        s = ldl_sqlite_store(&sq);
        ST_CHECK(s.acquire(s.ctx, "tk", 1000, &t) == 1 && t == 1, "acquire");
        ST_CHECK(sqt_int(db, "SELECT count(*) FROM temp.ldl_lease", NULL) == 0 &&
                 sqt_int(db, "SELECT token FROM main.ldl_lease WHERE key = 'tk'", NULL) == 1, "the row is in main");
        ldl_sqlite_close(&sq);
        sqlite3_close(db);
    }
    {   /* the exact shape, created by hand from the header's text, is accepted */
        char why[512];
        int rc = init_after("exact.db", LEASE_SQL, why, sizeof why, NULL);
        ST_CHECK(rc == LDL_OK, "the header's own CREATE text: %d (%s)", rc, why);
    }
}

static void test_not_sqlite(void)
{
    char p[600], why[512];
    const char junk[] = "this is not a database, it is a text file that is long enough to have a header......."
                        "......................................................................";
    FILE *f = fopen(sqt_path(p, sizeof p, "junk.db"), "wb");
    ldl_sqlite sq = {0};
    int rc;
    ST_CHECK(f && fwrite(junk, 1, sizeof junk, f) == sizeof junk && fclose(f) == 0, "write junk");
    rc = init_after("junk.db", NULL, why, sizeof why, NULL);
    ST_CHECK(rc == LDL_ESTORE && strstr(why, "not a SQLite database"), "init on junk: %d (%s)", rc, why);
    rc = ldl_sqlite_open(&sq, p, NULL, 0);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "not a SQLite database") && ldl_sqlite_db(&sq) == NULL,
             "open on junk: %d (%s)", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    ST_CHECK(file_size(p) == (int64_t)sizeof junk, "junk untouched (%lld bytes)", (long long)file_size(p));
}

static void test_locked(void)
{
    char p[600];
    ldl_sqlite sq = {0};
    ldl_store s;
    sqlite3 *other;
    int64_t tok = 5, t1 = 0;
    int rc;
    uint64_t t0, took;
    ST_CHECK(ldl_sqlite_open(&sq, sqt_path(p, sizeof p, "locked.db"), NULL, LDL_SQLITE_CREATE) == LDL_OK, "open");
    s = ldl_sqlite_store(&sq);
    ST_CHECK(s.acquire(s.ctx, "held", 60000, &t1) == 1, "a held key");
    other = sqt_open(p, SQLITE_OPEN_READWRITE);
    ST_CHECK(other && sqt_exec(other, "BEGIN IMMEDIATE"), "another writer takes the write lock");
    t0 = st_now_ms();
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    took = st_now_ms() - t0;
    ST_CHECK(rc == LDL_ESTORE && tok == 0, "acquire while locked: %d token %lld, want LDL_ESTORE and no token", rc, (long long)tok);
    ST_CHECK(strstr(ldl_sqlite_why(&sq), "locked") && strstr(ldl_sqlite_why(&sq), "200 ms"), "why: %s", ldl_sqlite_why(&sq));
    ST_CHECK(took >= 190, "it waited its busy bound first (%llu ms)", (unsigned long long)took);
    ST_CHECK(s.renew(s.ctx, "held", t1, 60000) == LDL_ESTORE, "renew while locked: a store error");
    ST_CHECK(s.release(s.ctx, "held", t1) == LDL_ESTORE, "release while locked: a store error");
    ST_CHECK(ldl_sqlite_set_busy_ms(&sq, 20) == LDL_OK, "busy_ms 20");
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "20 ms"), "with busy_ms 20: %d (%s)", rc, ldl_sqlite_why(&sq));
    {   /* init on a locked file: the read checks pass, nothing waits for the write lock */
        ldl_sqlite q2 = {0};
        rc = ldl_sqlite_open(&q2, p, NULL, 0);
        ST_CHECK(rc == LDL_OK, "init beside a writer (tables present): %d (%s)", rc, ldl_sqlite_why(&q2));
        ldl_sqlite_close(&q2);
    }
    ST_CHECK(sqt_exec(other, "ROLLBACK"), "the other writer lets go");
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    ST_CHECK(rc == 1 && tok == 1, "then granted: %d token %lld", rc, (long long)tok);
    /* a held key: a clean 0, nothing waited for */
    rc = s.acquire(s.ctx, "held", 1000, &tok);
    ST_CHECK(rc == 0, "a held key is a clean 0: %d", rc);
    ST_CHECK(s.release(s.ctx, "k", 1) == 1 && s.release(s.ctx, "held", t1) == 1, "release both");
    /* inside the caller's transaction: refused, the transaction left as it was */
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "BEGIN"), "the caller's BEGIN");
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "inside a transaction"), "acquire inside BEGIN: %d (%s)", rc,
             ldl_sqlite_why(&sq));
    ST_CHECK(!sqlite3_get_autocommit(ldl_sqlite_db(&sq)), "the caller's transaction is still open");
    {
        ldl_sqlite q3 = {0};
        rc = ldl_sqlite_init(&q3, ldl_sqlite_db(&sq), NULL);
        ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&q3), "inside a transaction"), "init inside BEGIN: %d", rc);
        ldl_sqlite_close(&q3);
    }
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "ROLLBACK"), "the caller's ROLLBACK");
    ST_CHECK(s.acquire(s.ctx, "k", 1000, &tok) == 1, "granted after it");
    sqlite3_close(other);
    ldl_sqlite_close(&sq);
}

/* rollback journal: a reader's SHARED lock keeps COMMIT from landing; the statement ran,
   the answer must still be no grant, and nothing stays behind */
static void test_commit_blocked(void)
{
    char p[600];
    ldl_sqlite sq = {0};
    ldl_store s;
    sqlite3 *reader;
    int64_t tok = 5;
    int rc;
    ST_CHECK(ldl_sqlite_open(&sq, sqt_path(p, sizeof p, "commit.db"), NULL,
                             LDL_SQLITE_CREATE | LDL_SQLITE_KEEP_JOURNAL) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    ST_CHECK(ldl_sqlite_set_busy_ms(&sq, 50) == LDL_OK, "busy_ms 50");
    s = ldl_sqlite_store(&sq);
    reader = sqt_open(p, SQLITE_OPEN_READWRITE);
    ST_CHECK(reader && sqt_exec(reader, "BEGIN") && sqt_int(reader, "SELECT count(*) FROM ldl_lease", NULL) == 0,
             "a reader holds its read transaction");
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    ST_CHECK(rc == LDL_ESTORE && tok == 0, "COMMIT blocked by a reader: %d token %lld, want LDL_ESTORE and no token",
             rc, (long long)tok);
    ST_CHECK(strstr(ldl_sqlite_why(&sq), "commit") && strstr(ldl_sqlite_why(&sq), "locked"), "why: %s", ldl_sqlite_why(&sq));
    ST_CHECK(sqlite3_get_autocommit(ldl_sqlite_db(&sq)), "the adapter's transaction was rolled back");
    ST_CHECK(sqt_exec(reader, "COMMIT"), "the reader ends");
    ST_CHECK(sqt_int(reader, "SELECT count(*) FROM ldl_lease", NULL) == 0, "no row was written");
    rc = s.acquire(s.ctx, "k", 1000, &tok);
    ST_CHECK(rc == 1 && tok == 1, "then the first grant is token 1: %d %lld", rc, (long long)tok);
    sqlite3_close(reader);
    ldl_sqlite_close(&sq);
}

static int ro_child(void *arg, int in, int out)
{
    ldl_sqlite sq = {0};
    int rc;
    (void)in; (void)out;
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 20;
    rc = ldl_sqlite_open(&sq, (const char *)arg, NULL, 0);
    if (rc != LDL_ESTORE) return 21;
    if (!strstr(ldl_sqlite_why(&sq), "read")) { fprintf(stderr, "ro why: %s\n", ldl_sqlite_why(&sq)); return 22; }
    ldl_sqlite_close(&sq);
    return 0;
}

static void test_files(void)
{
    char p[600], q[600];
    ldl_sqlite sq = {0};
    sqlite3 *db;
    st_child c;
    int rc;
    /* a missing file: an error, and no file made */
    rc = ldl_sqlite_open(&sq, sqt_path(p, sizeof p, "missing.db"), NULL, 0);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "LDL_SQLITE_CREATE"), "missing file: %d (%s)", rc, ldl_sqlite_why(&sq));
    ST_CHECK(file_size(p) == -1, "no file was made");
    rc = ldl_sqlite_open(&sq, sqt_path(q, sizeof q, "no/such/dir.db"), NULL, LDL_SQLITE_CREATE);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "cannot open"), "missing dir: %d (%s)", rc, ldl_sqlite_why(&sq));
    /* a read-only connection */
    ST_CHECK(ldl_sqlite_open(&sq, sqt_path(p, sizeof p, "ro.db"), NULL, LDL_SQLITE_CREATE) == LDL_OK, "make ro.db");
    ldl_sqlite_close(&sq);
    db = sqt_open(p, SQLITE_OPEN_READONLY);
    rc = ldl_sqlite_init(&sq, db, NULL);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "read-only"), "read-only connection: %d (%s)", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    sqlite3_close(db);
    /* a read-only file, opened by a user who may not write it (we are root: drop to nobody) */
    ST_CHECK(chmod(sqt__dir, 0755) == 0 && chmod(p, 0444) == 0, "chmod");
    ST_CHECK(st_fork(&c, ro_child, p) == 0, "fork");
    rc = st_join(&c, 20000);
    ST_CHECK(rc == 0, "read-only file: a store error that says read-only (child exit %d)", rc);
    chmod(p, 0644);
}

/* the names in the temp dir, as one string (to see that nothing was created) */
static void dir_names(char *out, size_t n)
{
    char cmd[700];
    FILE *f;
    size_t got;
    snprintf(cmd, sizeof cmd, "ls -a '%s' | tr '\\n' ' '", sqt__dir);
    out[0] = 0;
    if (!(f = popen(cmd, "r"))) return;
    got = fread(out, 1, n - 1, f);
    out[got] = 0;
    pclose(f);
}

/* LDL_SQLITE_INSPECT (issue 31: inspection is read-only): a missing file, a file without the
   tables, a held key in a WAL file; nothing created or changed, store calls refused */
static void test_inspect(void)
{
    char p[600], q[600], before[2048], after[2048];
    ldl_sqlite sq = {0}, w = {0};
    ldl_store_ext x;
    ldl_holder h;
    struct stat s0, s1;
    int rc;
    int64_t tok = 0;
    sqt_path(p, sizeof p, "inspect-missing.db");
    dir_names(before, sizeof before);
    rc = ldl_sqlite_open(&sq, p, NULL, LDL_SQLITE_INSPECT);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "no such store"), "inspect a missing file: %d (%s)", rc,
             ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    dir_names(after, sizeof after);
    ST_CHECK(strcmp(before, after) == 0, "nothing created: [%s] then [%s]", before, after);
    rc = ldl_sqlite_open(&sq, p, NULL, LDL_SQLITE_INSPECT | LDL_SQLITE_CREATE);
    ST_CHECK(rc == LDL_EINVAL, "INSPECT with CREATE: LDL_EINVAL (%d)", rc);

    /* a SQLite file without the lease tables */
    sqt_path(q, sizeof q, "inspect-other.db");
    {
        sqlite3 *db = sqt_open(q, 0);
        ST_CHECK(db && sqt_exec(db, "CREATE TABLE other (x)"), "a database of something else");
        sqlite3_close(db);
    }
    dir_names(before, sizeof before);
    ST_CHECK(stat(q, &s0) == 0, "stat");
    rc = ldl_sqlite_open(&sq, q, NULL, LDL_SQLITE_INSPECT);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "no such table"), "inspect a file without the tables: %d (%s)",
             rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    dir_names(after, sizeof after);
    ST_CHECK(stat(q, &s1) == 0 && s1.st_size == s0.st_size && s1.st_mtime == s0.st_mtime && strcmp(before, after) == 0,
             "nothing created or written: [%s] then [%s]", before, after);
    {
        sqlite3 *db = sqt_open(q, SQLITE_OPEN_READONLY);
        ST_CHECK(sqt_int(db, "SELECT count(*) FROM sqlite_master", NULL) == 1, "the schema is as it was");
        sqlite3_close(db);
    }

    /* a held key in a WAL file (the holder's connection closed, its lease live) */
    sqt_path(q, sizeof q, "inspect-held.db");
    ST_CHECK(ldl_sqlite_open(&w, q, NULL, LDL_SQLITE_CREATE) == LDL_OK, "the store");
    x = ldl_sqlite_ext(&w);
    ST_CHECK(x.acquire_owned(x.ctx, "job", 60000, "worker 1", &tok) == 1, "a holder with an owner");
    ldl_sqlite_close(&w);
    dir_names(before, sizeof before);
    ST_CHECK(stat(q, &s0) == 0, "stat");
    st_sleep_ms(20);
    rc = ldl_sqlite_open(&sq, q, NULL, LDL_SQLITE_INSPECT);
    ST_CHECK(rc == LDL_OK, "inspect the WAL file: %d (%s)", rc, ldl_sqlite_why(&sq));
    x = ldl_sqlite_ext(&sq);
    rc = x.inspect ? x.inspect(x.ctx, "job", &h) : -100;
    ST_CHECK(rc == 1 && h.token == tok && strcmp(h.owner, "worker 1") == 0 && h.ttl_left_ms > 50000,
             "held: token %lld owner '%s' (%d)", (long long)h.token, h.owner, rc);
    rc = x.inspect ? x.inspect(x.ctx, "nobody", &h) : -100;
    ST_CHECK(rc == 0, "a key never taken: free (%d)", rc);
    {
        ldl_store s = ldl_sqlite_store(&sq);
        int64_t t2 = 0;
        rc = s.acquire(s.ctx, "other", 1000, &t2);
        ST_CHECK(rc == LDL_ESTORE && t2 == 0 && strstr(ldl_sqlite_why(&sq), "inspection only"),
                 "acquire through an inspecting adapter: refused (%d: %s)", rc, ldl_sqlite_why(&sq));
        rc = x.acquire_owned(x.ctx, "job2", 1000, "o", &t2);
        ST_CHECK(rc == LDL_ESTORE, "acquire_owned too (%d)", rc);
        ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "BEGIN") && ldl_sqlite_fence(&sq, "r", 5) == LDL_ESTATE &&
                 sqt_exec(ldl_sqlite_db(&sq), "ROLLBACK"), "the fence too");
        ST_CHECK(sqlite3_exec(ldl_sqlite_db(&sq), "CREATE TABLE t (x)", NULL, NULL, NULL) != SQLITE_OK,
                 "the inspecting connection writes nothing (query_only)");
    }
    ldl_sqlite_close(&sq);
    dir_names(after, sizeof after);
    ST_CHECK(stat(q, &s1) == 0 && s1.st_size == s0.st_size && s1.st_mtime == s0.st_mtime && strcmp(before, after) == 0,
             "after inspecting: no -wal or -shm left, the file unwritten: [%s] then [%s]", before, after);
}

/* the why of a store call refused for a locked file, through the non-blocking view (what
   ldl-run drives): ldl_sqlite_why names the lock and the bound */
static void test_async_why(void)
{
    char p[600];
    ldl_sqlite sq = {0};
    ldl_async_store a;
    ldl_op op;
    sqlite3 *other;
    int rc = 0, got;
    int64_t tok = -1;
    ST_CHECK(ldl_sqlite_open(&sq, sqt_path(p, sizeof p, "why.db"), NULL, LDL_SQLITE_CREATE) == LDL_OK, "open");
    a = ldl_sqlite_async_store(&sq);
    other = sqt_open(p, SQLITE_OPEN_READWRITE);
    ST_CHECK(other && sqt_exec(other, "BEGIN IMMEDIATE"), "another writer holds the file");
    memset(&op, 0, sizeof op);
    ldl_op_begin(&op);
    ST_CHECK(a.acquire(a.ctx, &op, "k", 1000) == LDL_OK, "submitted");
    got = ldl_op_result(&op, &rc, &tok);
    ST_CHECK(got == 1 && rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "database locked by another connection") &&
             strstr(ldl_sqlite_why(&sq), "busy_ms (200 ms)"), "async acquire on a locked file: %d %d (%s)", got, rc,
             ldl_sqlite_why(&sq));
    sqt_exec(other, "ROLLBACK");
    sqlite3_close(other);
    ldl_sqlite_close(&sq);
}

int main(int argc, char **argv)
{
    st_ignore_sigpipe();
    sqt_setup(argc, argv, "ldl-sqlite-hostile");
    st_case("shapes", SQT_CASE_S); test_shapes();
    st_case("not_sqlite", SQT_CASE_S); test_not_sqlite();
    st_case("locked", SQT_CASE_S); test_locked();
    st_case("commit_blocked", SQT_CASE_S); test_commit_blocked();
    st_case("files", SQT_CASE_S); test_files();
    st_case("inspect", SQT_CASE_S); test_inspect();
#ifndef LDL_NO_ASYNC
    st_case("async_why", SQT_CASE_S); test_async_why();
#endif
    st_case("", 0);
    sqt_cleanup();
    return st_report();
}
