/* sqlite_faults.c -- faults on a SQLite store shared by processes of one host:
 *   - a holder SIGKILLed inside its own fenced write transaction: the next holder waits
 *     only for the lease (a clean 0 until the TTL, never a stuck lock), and the killed
 *     transaction left nothing;
 *   - a holder SIGSTOPped past its TTL (2 s), continued after its successor wrote: its lock
 *     says LEASE_EXPIRED and its late fenced write is refused;
 *   - a holder SIGSTOPped INSIDE its write transaction: the others get a store error
 *     after busy_ms (never a grant), and get the key once it continues;
 *   - a second boot, simulated by changing the stored boot identity: the lease is
 *     expired whatever its expires_ms says, the next token is above the last one;
 *   - the durability that is in force (ldl_sqlite_check_durability) on this file system.
 * argv[1]: the parent of the temp dir (/dev/shm for tmpfs). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"
#include <sys/vfs.h>

static char db_path[600];
static int on_tmpfs;

/* ------------------------------------------------------------ SIGKILL inside a transaction */
static int killed_holder(void *arg, int in, int out)
{
    ldl_sqlite sq = {0};
    sqt_lock t;
    int64_t f;
    (void)arg;
    if (ldl_sqlite_open(&sq, db_path, NULL, 0) != LDL_OK) return 10;
    if (sqt_lock_init(&t, &sq, "killed", 3000, 1000) != 0) return 11;
    if (ldl_lock_acquire(&t.lock) != 1) return 12;
    f = ldl_lock_fencing_token(&t.lock);
    if (!sqt_exec(ldl_sqlite_db(&sq), "BEGIN IMMEDIATE")) return 13;
    if (ldl_sqlite_fence(&sq, "killed-res", f) != 1) return 14;
    if (!sqt_exec(ldl_sqlite_db(&sq), "UPDATE res SET v = 999, writer = 1 WHERE id = 1")) return 15;
    st_send(out, (char)('0' + f));          /* inside the transaction now; wait to be killed */
    st_recv(in, 60000);
    return 16;
}

static void test_sigkill(void)
{
    st_child c;
    ldl_sqlite sq = {0};
    ldl_store s;
    int64_t tok = 0;
    int rc, got, zeros = 0, errors = 0;
    uint64_t t0;
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, 0) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    s = ldl_sqlite_store(&sq);
    ST_CHECK(st_fork(&c, killed_holder, NULL) == 0, "fork");
    got = st_recv(c.from_child, 20000);
    ST_CHECK(got == '1', "the holder got fence 1 and is inside its transaction (%d)", got);
    ST_CHECK(kill(c.pid, SIGKILL) == 0, "SIGKILL");
    ST_CHECK(st_join(&c, 10000) == -1, "killed by the signal");
    /* right after the kill: no stuck lock -- a clean 0 while the lease lives */
    t0 = st_now_ms();
    for (;;) {
        rc = s.acquire(s.ctx, "killed", 2000, &tok);
        if (rc == 1) break;
        if (rc == 0) zeros++;
        else errors++;
        if (st_now_ms() - t0 > 20000) break;
        st_sleep_ms(50);
    }
    ST_CHECK(zeros >= 1, "a clean 0 while the dead holder's lease lived (%d)", zeros);
    ST_CHECK(errors == 0, "no store error after the kill (%d; %s)", errors, ldl_sqlite_why(&sq));
    ST_CHECK(rc == 1 && tok == 2, "granted after the TTL with token 2: rc %d token %lld", rc, (long long)tok);
    ST_CHECK(sqt_int(ldl_sqlite_db(&sq), "SELECT v FROM res WHERE id = 1", NULL) == 0,
             "the killed transaction's write is gone");
    ST_CHECK(sqt_int(ldl_sqlite_db(&sq), "SELECT count(*) FROM ldl_lease_fence WHERE resource = 'killed-res'", NULL) == 0,
             "and so is its fence mark");
    ST_CHECK(sqt_fenced_rmw(&sq, "killed-res", tok, 2) == 1, "the next holder writes");
    ST_CHECK(s.release(s.ctx, "killed", tok) == 1, "release");
    ldl_sqlite_close(&sq);
}

/* ------------------------------------------------------------ SIGSTOP past the TTL */
static int stopped_holder(void *arg, int in, int out)
{
    ldl_sqlite sq = {0};
    sqt_lock t;
    int64_t f;
    int rc;
    (void)arg;
    if (ldl_sqlite_open(&sq, db_path, NULL, 0) != LDL_OK) return 10;
    if (sqt_lock_init(&t, &sq, "stopped", 2000, 600) != 0) return 11;
    if (ldl_lock_acquire(&t.lock) != 1) return 12;
    f = ldl_lock_fencing_token(&t.lock);
    st_send(out, (char)f);
    if (st_recv(in, 60000) != 'w') return 13;   /* the parent stops us here, then continues us */
    if (ldl_lock_poll(&t.lock) != 0 || ldl_lock_reason(&t.lock) != LDL_REASON_LEASE_EXPIRED) return 14;
    rc = sqt_fenced_rmw(&sq, "stopped-res", f, 1);   /* the late write: must be refused */
    if (rc != 0) return 15;
    ldl_lock_dispose(&t.lock);
    ldl_sqlite_close(&sq);
    return 0;
}

static void test_sigstop(void)
{
    st_child c;
    ldl_sqlite sq = {0};
    ldl_store s;
    int64_t tok = 0, f1;
    int rc;
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, 0) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    s = ldl_sqlite_store(&sq);
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "UPDATE res SET v = 0, writer = -1, fence = 0"), "reset res");
    ST_CHECK(st_fork(&c, stopped_holder, NULL) == 0, "fork");
    f1 = st_recv(c.from_child, 20000);
    ST_CHECK(f1 >= 1, "the holder got a fence (%lld)", (long long)f1);
    ST_CHECK(kill(c.pid, SIGSTOP) == 0, "SIGSTOP");
    rc = s.acquire(s.ctx, "stopped", 3000, &tok);
    ST_CHECK(rc == 0, "held while its lease lives: %d", rc);
    st_sleep_ms(2600);                       /* past the 2000 ms TTL */
    rc = s.acquire(s.ctx, "stopped", 3000, &tok);
    ST_CHECK(rc == 1 && tok > f1, "the successor: rc %d token %lld > %lld", rc, (long long)tok, (long long)f1);
    ST_CHECK(sqt_fenced_rmw(&sq, "stopped-res", tok, 2) == 1, "the successor writes");
    ST_CHECK(kill(c.pid, SIGCONT) == 0, "SIGCONT");
    st_send(c.to_child, 'w');
    rc = st_join(&c, 20000);
    ST_CHECK(rc == 0, "the late holder: LEASE_EXPIRED and its write refused (exit %d)", rc);
    ST_CHECK(sqt_int(ldl_sqlite_db(&sq), "SELECT writer FROM res WHERE id = 1", NULL) == 2 &&
             sqt_int(ldl_sqlite_db(&sq), "SELECT v FROM res WHERE id = 1", NULL) == 1,
             "the resource holds the successor's write only");
    ST_CHECK(sqt_int(ldl_sqlite_db(&sq), "SELECT fence FROM ldl_lease_fence WHERE resource = 'stopped-res'", NULL) == tok,
             "the mark is the successor's fence");
    ST_CHECK(s.release(s.ctx, "stopped", tok) == 1, "release");
    ldl_sqlite_close(&sq);
}

/* ------------------------------------------------------------ SIGSTOP inside the transaction */
static int stuck_writer(void *arg, int in, int out)
{
    sqlite3 *db = sqt_open(db_path, SQLITE_OPEN_READWRITE);
    (void)arg;
    if (!db || !sqt_exec(db, "BEGIN IMMEDIATE; UPDATE res SET v = v WHERE id = 1")) return 10;
    st_send(out, 'l');
    if (st_recv(in, 60000) != 'c') return 11;
    if (!sqt_exec(db, "COMMIT")) return 12;
    sqlite3_close(db);
    return 0;
}

static void test_stuck_writer(void)
{
    st_child c;
    ldl_sqlite sq = {0};
    ldl_store s;
    int64_t tok = 0;
    int rc;
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, 0) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    ST_CHECK(ldl_sqlite_set_busy_ms(&sq, 100) == LDL_OK, "busy_ms 100");
    s = ldl_sqlite_store(&sq);
    ST_CHECK(st_fork(&c, stuck_writer, NULL) == 0, "fork");
    ST_CHECK(st_recv(c.from_child, 20000) == 'l', "the writer holds the write lock");
    ST_CHECK(kill(c.pid, SIGSTOP) == 0, "SIGSTOP");
    tok = 77;
    rc = s.acquire(s.ctx, "stuck", 3000, &tok);
    ST_CHECK(rc == LDL_ESTORE && tok == 0, "locked past busy_ms: a store error, no token (%d, %lld)", rc, (long long)tok);
    ST_CHECK(strstr(ldl_sqlite_why(&sq), "locked") != NULL, "why: %s", ldl_sqlite_why(&sq));
    ST_CHECK(kill(c.pid, SIGCONT) == 0, "SIGCONT");
    st_send(c.to_child, 'c');
    ST_CHECK(st_join(&c, 20000) == 0, "the writer committed");
    rc = s.acquire(s.ctx, "stuck", 3000, &tok);
    ST_CHECK(rc == 1 && tok == 1, "granted once it is gone: %d token %lld", rc, (long long)tok);
    ST_CHECK(s.release(s.ctx, "stuck", tok) == 1, "release");
    ldl_sqlite_close(&sq);
}

/* ------------------------------------------------------------ a second boot */
static void test_second_boot(void)
{
    ldl_sqlite qa = {0}, qb = {0};
    ldl_store a, b;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t1 = 0, t2 = 0, t3 = 0;
    int rc;
    ST_CHECK(ldl_sqlite_open(&qa, db_path, NULL, 0) == LDL_OK, "open a");
    ST_CHECK(ldl_sqlite_open(&qb, db_path, NULL, 0) == LDL_OK, "open b");
    a = ldl_sqlite_store(&qa);
    b = ldl_sqlite_store(&qb);
    x = ldl_sqlite_ext(&qb);
    ST_CHECK(a.acquire(a.ctx, "boot", 600000, &t1) == 1, "a long lease");
    ST_CHECK(b.acquire(b.ctx, "boot", 1000, &t2) == 0, "held in this boot");
    ST_CHECK(ldl_store_inspect(&x, "boot", &h) == 1 && h.token == t1, "inspect: held");
    /* the lease was written in an earlier boot (whose CLOCK_MONOTONIC ran far ahead) */
    ST_CHECK(sqt_exec(ldl_sqlite_db(&qb), "UPDATE ldl_lease SET boot = '00000000-0000-4000-8000-000000000000', "
                      "expires_ms = 9223372036854775000 WHERE key = 'boot'"), "rewrite the boot id");
    ST_CHECK(ldl_store_inspect(&x, "boot", &h) == 0, "inspect: a lease of another boot is free");
    rc = b.renew(b.ctx, "boot", t1, 1000);
    ST_CHECK(rc == 0, "renew of a lease of another boot = %d", rc);
    rc = b.acquire(b.ctx, "boot", 1000, &t2);
    ST_CHECK(rc == 1 && t2 == t1 + 1, "the next grant: %d token %lld after %lld (fences keep rising)", rc,
             (long long)t2, (long long)t1);
    ST_CHECK(sqt_int(ldl_sqlite_db(&qb), "SELECT count(*) FROM ldl_lease WHERE key = 'boot' AND boot = "
                     "'00000000-0000-4000-8000-000000000000'", NULL) == 0, "the grant wrote this boot's id");
    ST_CHECK(a.renew(a.ctx, "boot", t1, 1000) == 0 && a.release(a.ctx, "boot", t1) == 0, "the old token is refused");
    ST_CHECK(b.release(b.ctx, "boot", t2) == 1, "release");
    /* a fresh row written by a previous boot with a low expires_ms is expired too */
    ST_CHECK(sqt_exec(ldl_sqlite_db(&qb), "INSERT INTO ldl_lease (key, token, expires_ms, boot) VALUES "
                      "('boot2', 41, 9223372036854775000, 'ffffffff-ffff-4fff-bfff-ffffffffffff')"), "old-boot row");
    ST_CHECK(a.acquire(a.ctx, "boot2", 1000, &t3) == 1 && t3 == 42, "token 42 after 41 of the old boot (%lld)", (long long)t3);
    ST_CHECK(a.release(a.ctx, "boot2", t3) == 1, "release");
    ldl_sqlite_close(&qa);
    ldl_sqlite_close(&qb);
}

/* ------------------------------------------------------------ durability in force */
static void test_durability(void)
{
    char p2[600];
    ldl_sqlite sq = {0};
    sqlite3 *db;
    int rc;
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, 0) == LDL_OK, "open");
    rc = ldl_sqlite_check_durability(&sq);
    if (on_tmpfs)
        ST_CHECK(rc == LDL_SQLITE_CRASH_SAFE && strstr(ldl_sqlite_why(&sq), "tmpfs"), "tmpfs: %d %s", rc, ldl_sqlite_why(&sq));
    else
        ST_CHECK(rc == LDL_SQLITE_POWER_SAFE && strstr(ldl_sqlite_why(&sq), "journal_mode=wal synchronous=FULL"),
                 "disk default: %d %s", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    if (on_tmpfs) return;
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, LDL_SQLITE_FAST) == LDL_OK, "open FAST");
    rc = ldl_sqlite_check_durability(&sq);
    ST_CHECK(rc == LDL_SQLITE_CRASH_SAFE && strstr(ldl_sqlite_why(&sq), "synchronous=NORMAL") &&
             strstr(ldl_sqlite_why(&sq), "power loss"), "FAST: %d %s", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    ST_CHECK(ldl_sqlite_open(&sq, sqt_path(p2, sizeof p2, "rollback.db"), NULL,
                             LDL_SQLITE_CREATE | LDL_SQLITE_KEEP_JOURNAL) == LDL_OK, "open KEEP_JOURNAL");
    rc = ldl_sqlite_check_durability(&sq);
    ST_CHECK(rc == LDL_SQLITE_POWER_SAFE && strstr(ldl_sqlite_why(&sq), "journal_mode=delete synchronous=FULL"),
             "rollback journal: %d %s", rc, ldl_sqlite_why(&sq));
    /* the caller weakens its own connection: the check says so */
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "PRAGMA synchronous = OFF"), "synchronous OFF");
    rc = ldl_sqlite_check_durability(&sq);
    ST_CHECK(rc == LDL_SQLITE_CRASH_SAFE && strstr(ldl_sqlite_why(&sq), "synchronous=OFF"), "OFF: %d %s", rc, ldl_sqlite_why(&sq));
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), "PRAGMA journal_mode = MEMORY"), "journal MEMORY");
    rc = ldl_sqlite_check_durability(&sq);
    ST_CHECK(rc == LDL_SQLITE_NOT_SAFE && strstr(ldl_sqlite_why(&sq), "NOT SAFE"), "MEMORY: %d %s", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    db = sqt_open(":memory:", 0);
    ST_CHECK(ldl_sqlite_init(&sq, db, NULL) == LDL_OK, "init on :memory:");
    rc = ldl_sqlite_check_durability(&sq);
    ST_CHECK(rc == LDL_SQLITE_NOT_SAFE && strstr(ldl_sqlite_why(&sq), "in-memory"), ":memory: %d %s", rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    ldl_sqlite sq = {0};
    st_ignore_sigpipe();
    sqt_setup(argc, argv, "ldl-sqlite-faults");
    {   /* tmpfs by what the file system says, not by its name (a CI /dev/shm may differ) */
        struct statfs sf;
        on_tmpfs = argc > 1 && statfs(argv[1], &sf) == 0 && (unsigned long)sf.f_type == 0x01021994UL;
        if (argc > 1 && !on_tmpfs) fprintf(stderr, "note: %s is not tmpfs; the disk checks run there\n", argv[1]);
    }
    sqt_path(db_path, sizeof db_path, "locks.db");
    ST_CHECK(ldl_sqlite_open(&sq, db_path, NULL, LDL_SQLITE_CREATE) == LDL_OK, "create: %s", ldl_sqlite_why(&sq));
    ST_CHECK(sqt_exec(ldl_sqlite_db(&sq), SQT_RES_SQL), "resource table");
    ldl_sqlite_close(&sq);
    if (st_failed()) return st_report();
    /* per-case bounds (issue 37): each case takes a few seconds; a hang fails here */
    st_case("sigkill", SQT_CASE_S); test_sigkill();
    st_case("sigstop", SQT_CASE_S); test_sigstop();
    st_case("stuck_writer", SQT_CASE_S); test_stuck_writer();
    st_case("second_boot", SQT_CASE_S); test_second_boot();
    st_case("durability", SQT_CASE_S); test_durability();
    st_case("", 0);
    fprintf(stderr, "faults [%s]: %s\n", on_tmpfs ? "tmpfs" : "disk", st_failed() ? "FAILED" : "ok");
    sqt_cleanup();
    return st_report();
}
