/* lite_di_lock_sqlite.h -- SQLite store for lite_di_lock.h (needs libsqlite3).

   Lease locks with fencing tokens for many processes on ONE host, with no
   server: the lease table lives in a SQLite file that every process opens.
   The token lives in an ordinary table row that is never deleted, so it
   survives process crashes, restarts and (with the default settings) power
   loss; a lease written in an earlier boot is expired, and tokens keep rising
   across reboots. Also: the fenced-write protocol for a resource kept in a
   SQLite database (ldl_sqlite_fence, inside the caller's own transaction).

   QUICK START

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_SQLITE_IMPLEMENTATION
       #include "adapters/lite_di_lock_sqlite.h"

       ldl_sqlite sq;
       if (ldl_sqlite_open(&sq, "/var/lib/app/locks.db", NULL, LDL_SQLITE_CREATE) != LDL_OK)
           puts(ldl_sqlite_why(&sq));
       ldl_store store = ldl_sqlite_store(&sq);
       desc.store = &store;              (the lock copies the struct; leave
                                          desc.clock zero: see THE CLOCK)
       ... ldl_lock_init(&lock, &desc); ldl_lock_acquire(&lock); ...
       ldl_sqlite_close(&sq);            (after the last lock using it is disposed)

   or, on a connection of your own (the adapter never changes its settings):

       sqlite3 *db;  sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
       ldl_sqlite_init(&sq, db, NULL);   ...   ldl_sqlite_close(&sq);  sqlite3_close(db);

   Link with -lsqlite3 (Debian: libsqlite3-dev). Needs SQLite 3.35 or later
   (RETURNING), POSIX clock_gettime and Linux's /proc boot id.

   THE TABLES (in the "main" database of the connection; TABLE defaults to
   ldl_lease; the fence table is TABLE_fence)

       CREATE TABLE "ldl_lease" (key TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL
         CHECK (typeof(token) = 'integer' AND token >= 1), expires_ms INTEGER NOT NULL
         CHECK (typeof(expires_ms) = 'integer'), boot TEXT NOT NULL, owner TEXT)
       CREATE TABLE "ldl_lease_fence" (resource TEXT PRIMARY KEY NOT NULL, fence INTEGER
         NOT NULL CHECK (typeof(fence) = 'integer' AND fence >= 1))

   (each on one line, single spaces: init compares the stored text exactly.)
   One row per key, created on the first acquire and never deleted: the row IS
   the fence counter. Every call is ONE transaction of its own (BEGIN
   IMMEDIATE, one statement, COMMIT), and an answer is 1 only after COMMIT
   succeeded. acquire inserts the row or, when the lease has expired or was
   written in another boot, bumps its token by one in the same statement
   (INSERT .. ON CONFLICT .. DO UPDATE .. WHERE expired RETURNING token);
   renew pushes expires_ms forward only while key, token and boot match and
   the lease is unexpired; release sets expires_ms to -1 while key and token
   match. A token at INT64_MAX cannot be bumped (the CHECK refuses the REAL
   that SQLite would make of it): a store error, never a wrapped token.

   THE CLOCK (decision 0801): expires_ms is CLOCK_MONOTONIC in milliseconds,
   read by the calling process inside the write transaction -- the same clock
   as the core's built-in one, so the lock's local deadline and the store's
   expiry run on one clock (CLOCK_BOOTTIME would expire a lease across a
   suspend while its holder's CLOCK_MONOTONIC deadline had not passed).
   Every lease row also stores the boot identity (/proc/sys/kernel/random/
   boot_id, read at init); a lease of another boot is expired whatever its
   expires_ms says. Processes in different time namespaces (CLONE_NEWTIME)
   see different CLOCK_MONOTONIC offsets: do not share one file between them.

   ldl_sqlite_init(s, db, table): db is the caller's open connection; table
   NULL means "ldl_lease"; a name is [A-Za-z_][A-Za-z0-9_]{0,62}, not starting
   with "sqlite_" (else LDL_EINVAL, nothing touched). init creates both tables
   when missing (it checks in a read transaction first, which does not queue
   for the write lock, and takes BEGIN IMMEDIATE only to create), and
   refuses (LDL_ESTORE, ldl_sqlite_why says why): a file that is not a SQLite database; a read-only
   database or connection; a connection inside a transaction; a view, index
   or anything but a table in the name's place; a table whose stored CREATE
   text is not exactly the adapter's (another shape); a trigger on either
   table (main or temp); an index of its own on either table; storage
   another local user may write (decision 0804, why "foreign file: ..."):
   the database file (symlinks resolved) or its -wal, -shm or -journal owned
   by another uid than this process's or root's, or writable by group or
   others, a side file that is a symlink, the directory holding the file
   owned by another uid or writable by group or others (sticky or not), a
   directory above it owned by another uid or writable by others and not
   sticky (and, for ldl_sqlite_open, a symlinked path's own link and
   directories). Statements are
   prepared once (SQLITE_PREPARE_PERSISTENT) and kept until ldl_sqlite_close.

   ldl_sqlite_open(s, path, table, flags): the convenience init that opens a
   connection of its own (SQLITE_OPEN_READWRITE, and SQLITE_OPEN_CREATE with
   LDL_SQLITE_CREATE; a missing file is an error without it), sets its
   settings, then calls ldl_sqlite_init. flags:
     LDL_SQLITE_CREATE   create the file when missing
     (default)           journal_mode=WAL (kept in the file) and
                         synchronous=FULL: the fence survives a crash and a
                         power loss (decision 0802), and readers never wait
                         for the writer (in rollback-journal mode a writer
                         that waits to commit holds PENDING, which blocks
                         every new reader: under contention, starvation)
     LDL_SQLITE_KEEP_JOURNAL  the file's journal mode as it is (a new file:
                         rollback journal, "delete"), synchronous=FULL: as
                         safe against power loss
     LDL_SQLITE_INSPECT  (alone) read-only inspection: no file, table or
                         pragma is created or set; a missing path is
                         LDL_ESTORE "no such store: ...", missing tables
                         "no such table: ..."; only ldl_sqlite_ext(s).inspect
                         answers, store calls and the fence refuse. The
                         connection is read-write with PRAGMA query_only = 1
                         (a read-only one would leave -wal and -shm behind)
     LDL_SQLITE_FAST     journal_mode=WAL, synchronous=NORMAL: no fsync per
                         commit. It survives a process crash, but A POWER LOSS
                         (or kernel crash) CAN LOSE THE LAST COMMITS: a token
                         already granted can be granted again after the
                         reboot, so two holders can write with one fence.
                         Only where that is acceptable.
   ldl_sqlite_check_durability(s) reads what is in force on the connection
   (journal_mode, synchronous, the file system) and answers
   LDL_SQLITE_POWER_SAFE (2), LDL_SQLITE_CRASH_SAFE (1: survives a process
   crash only -- WAL+NORMAL, synchronous=OFF, rollback journal with NORMAL, a
   file on tmpfs or ramfs, which a reboot empties), LDL_SQLITE_NOT_SAFE (0:
   journal_mode MEMORY or OFF, an in-memory or temporary database) or a
   negative error; ldl_sqlite_why(s) names the settings in every case.

   BUSY (decision 0803): a call that finds the database locked by another
   writer retries (sleeps of 1..8 ms) for at most busy_ms (default
   LDL_SQLITE_BUSY_MS = 200 ms; ldl_sqlite_set_busy_ms, 1..60000), then
   answers LDL_ESTORE ("database locked ...") -- never a grant. A key held by
   another process is a clean 0 at once: nothing waits for a lease. A busy
   handler of the caller's on the connection runs first, inside every
   attempt: leave it unset or shorter than busy_ms. Any write transaction on
   the file blocks every process's store calls while it is open (SQLite has
   one writer): keep fenced transactions short, or keep the lease table in a
   file of its own.

   THE CONNECTION: one ldl_sqlite serves one thread at a time. Store calls
   refuse (LDL_ESTORE, nothing run) while the connection is inside a
   transaction of the caller's: a lease taken there would be undone by its
   ROLLBACK. Never carry a connection across fork(): open it in the child.

   THE FENCED-WRITE PROTOCOL (a resource in a SQLite database)
   ldl_sqlite_fence(s, resource, fence), on the connection that writes the
   resource, INSIDE the caller's own transaction (BEGIN IMMEDIATE; it refuses
   to run outside one: LDL_ESTATE), before or after the protected writes and
   before COMMIT:
       INSERT INTO main."TABLE_fence" AS f (resource, fence) VALUES (?1, ?2)
       ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence
       WHERE f.fence <= excluded.fence RETURNING fence
   answers 1: this transaction may write; the resource's mark is now `fence`
   (and, SQLite having one writer, no other transaction can move it before
   this one ends); 0: stale -- a higher fence has written: ROLLBACK; or a
   negative error (LDL_EINVAL: fence outside [1, INT64_MAX], resource NULL,
   empty or LDL_SQLITE_RESOURCE_MAX bytes or longer; LDL_ESTATE: outside a
   transaction; LDL_ESTORE: SQLite error). An equal fence passes (one holder
   writes many times), a lower one fails, a first fence for a new resource
   passes. The mark commits or rolls back with the caller's writes. A
   resource is guarded by ONE lock key: fences of different keys are not
   comparable (each key counts on its own), so never guard one resource with
   two keys. The lease table and the resource may be in different files: use
   an ldl_sqlite initialised on the resource's connection for the fence.

   HOLDER IDENTITY (SPEC's ldl_store_ext): ldl_sqlite_ext(s) gives
   acquire_owned (stores the owner, 1..LDL_OWNER_MAX-1 bytes of printable
   ASCII, else LDL_EINVAL before anything runs; every grant writes the owner
   column, NULL without one) and inspect (token, ms left by this host's
   CLOCK_MONOTONIC, owner; 1 held, 0 free: no row, released, expired or of
   another boot; LDL_ESTORE for a row of the wrong shape).

   THE NON-BLOCKING SHAPE: ldl_sqlite_async_store(s) is the same store as an
   ldl_async_store that answers inside every submit (as the MemoryStore's
   view): for a program built on the non-blocking contract, such as ldl-run.
   Each submit runs the synchronous call, so it waits as long as that does
   (an fsync, at most busy_ms for a locked file): it is not non-blocking I/O.
   ldl_sqlite_async_ext(s) adds submit_owned to inspect.

   ANSWERS: exactly 1 yes, 0 no, negative on any error (LDL_ESTORE: SQLite
   error, locked past busy_ms, a reply of the wrong shape; LDL_EINVAL: bad
   argument). ldl_sqlite_why(s) is the last error text ("" when none).

   OPTIONS
     LDL_SQLITE_IMPLEMENTATION  in exactly one .c/.cpp file, after the core header
     LDL_STATIC                 makes the functions static (as in the core header)
     LDL_SQLITE_BUSY_MS         the default busy bound (200 ms)

   ldl_sqlite_store(s) points at s: do not move it while a lock uses it.
*/
#ifndef LITE_DI_LOCK_SQLITE_H
#define LITE_DI_LOCK_SQLITE_H

#include "lite_di_lock.h"
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LDL_SQLITE_API
#define LDL_SQLITE_API LDL_API
#endif

#ifndef LDL_SQLITE_BUSY_MS
#define LDL_SQLITE_BUSY_MS 200
#endif
#if LDL_SQLITE_BUSY_MS < 1 || LDL_SQLITE_BUSY_MS > 60000
#error "LDL_SQLITE_BUSY_MS must be in 1..60000"
#endif

/* ldl_sqlite_open flags */
#define LDL_SQLITE_CREATE 1u
#define LDL_SQLITE_KEEP_JOURNAL 2u
#define LDL_SQLITE_FAST   4u
#define LDL_SQLITE_INSPECT 8u           /* read-only inspection: creates and changes nothing */

/* ldl_sqlite_check_durability answers */
#define LDL_SQLITE_NOT_SAFE   0
#define LDL_SQLITE_CRASH_SAFE 1
#define LDL_SQLITE_POWER_SAFE 2

#define LDL_SQLITE_RESOURCE_MAX 4096    /* bytes of a resource name, including the NUL */
#define LDL__SQLITE_NAME_MAX 72         /* a table name (63) + "_fence" + NUL */
#define LDL__SQLITE_BOOT_MAX 40         /* a boot id: 36 characters + NUL */
#define LDL__SQLITE_ERR_MAX 512
#define LDL__SQLITE_NSTMT 8             /* begin, commit, rollback, acquire, renew,
                                           release, inspect, fence */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_sqlite {              /* caller-owned; fields are private */
    sqlite3      *_db;
    sqlite3_stmt *_st[LDL__SQLITE_NSTMT];
    int           _ok;                   /* 1 after a successful init */
    int           _own;                  /* 1: ldl_sqlite_open opened _db */
    int           _ro;                   /* 1: opened with LDL_SQLITE_INSPECT (inspect only) */
    uint32_t      _busy_ms;
    char          _table[LDL__SQLITE_NAME_MAX];
    char          _boot[LDL__SQLITE_BOOT_MAX];
    char          _err[LDL__SQLITE_ERR_MAX];
} ldl_sqlite;

/* v0.4: after init, drive this adapter through ONE interface,
   adapters/lite_di_lock_view.h (ldl_view_sqlite): its ops do what
   the calls marked DEPRECATED below do. Those stay in v0.4 unchanged and
   leave the public surface in v0.5 (CHANGELOG lists each replacement;
   tools/api-deprecated.txt). */
LDL_SQLITE_API int         ldl_sqlite_init(ldl_sqlite *s, sqlite3 *db, const char *table);
LDL_SQLITE_API int         ldl_sqlite_open(ldl_sqlite *s, const char *path, const char *table,
                                           unsigned flags);
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API void        ldl_sqlite_close(ldl_sqlite *s);   /* idempotent */
LDL_SQLITE_API int         ldl_sqlite_set_busy_ms(ldl_sqlite *s, uint32_t ms);
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API ldl_store   ldl_sqlite_store(ldl_sqlite *s);
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API ldl_store_ext ldl_sqlite_ext(ldl_sqlite *s);   /* owner + inspect; after init */
LDL_SQLITE_API sqlite3    *ldl_sqlite_db(const ldl_sqlite *s);
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API const char *ldl_sqlite_why(const ldl_sqlite *s);   /* never NULL */
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API int         ldl_sqlite_check_durability(ldl_sqlite *s);
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API int         ldl_sqlite_fence(ldl_sqlite *s, const char *resource, int64_t fence);
#ifndef LDL_NO_ASYNC
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API ldl_async_store ldl_sqlite_async_store(ldl_sqlite *s);  /* answers inside every submit */
/* DEPRECATED (v0.4): the view */
LDL_SQLITE_API ldl_store_ext ldl_sqlite_async_ext(ldl_sqlite *s);      /* submit_owned, inspect */
#endif

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_SQLITE_H */

/* ==================================================================== */
#ifdef LDL_SQLITE_IMPLEMENTATION
#ifndef LITE_DI_LOCK_SQLITE_C
#define LITE_DI_LOCK_SQLITE_C

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/vfs.h>
#endif
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#ifndef S_ISVTX
#define S_ISVTX 01000                   /* the sticky bit (XSI) */
#endif

#if !defined(CLOCK_MONOTONIC)
#error "lite_di_lock_sqlite.h needs clock_gettime(CLOCK_MONOTONIC): include lite_di_lock.h first, or define _POSIX_C_SOURCE=200112L"
#endif

#define LDL__SQ_BEGIN 0
#define LDL__SQ_COMMIT 1
#define LDL__SQ_ROLLBACK 2
#define LDL__SQ_ACQ 3
#define LDL__SQ_REN 4
#define LDL__SQ_REL 5
#define LDL__SQ_INS 6
#define LDL__SQ_FEN 7

#define LDL__SQ_LEASE_COLS "(key TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL " \
    "CHECK (typeof(token) = 'integer' AND token >= 1), expires_ms INTEGER NOT NULL " \
    "CHECK (typeof(expires_ms) = 'integer'), boot TEXT NOT NULL, owner TEXT)"
#define LDL__SQ_FENCE_COLS "(resource TEXT PRIMARY KEY NOT NULL, fence INTEGER NOT NULL " \
    "CHECK (typeof(fence) = 'integer' AND fence >= 1))"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ errors */
static void ldl__sq_err(ldl_sqlite *s, const char *what, const char *detail) {
    size_t n = 0, cap = sizeof s->_err - 1;
    const char *parts[3];
    int k;
    parts[0] = what; parts[1] = ": "; parts[2] = detail ? detail : "";
    for (k = 0; k < 3; k++) {           /* cut to fit; one line */
        const char *p = parts[k];
        for (; *p && n < cap; p++) s->_err[n++] = (*p == '\n' || *p == '\t') ? ' ' : *p;
    }
    s->_err[n] = '\0';
}

/* the connection's last message, with what we were doing */
static void ldl__sq_err_db(ldl_sqlite *s, const char *what, int rc) {
    char buf[LDL__SQLITE_ERR_MAX];
    int prim = rc & 0xff;
    const char *m = s->_db ? sqlite3_errmsg(s->_db) : sqlite3_errstr(rc);
    if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
        snprintf(buf, sizeof buf, "database locked by another connection for longer than "
                 "busy_ms (%lu ms): %s", (unsigned long)s->_busy_ms, m);
    else if (prim == SQLITE_NOTADB)
        snprintf(buf, sizeof buf, "not a SQLite database: %s", m);
    else if (prim == SQLITE_READONLY)
        snprintf(buf, sizeof buf, "read-only database (file permissions, a read-only "
                 "connection or file system): %s", m);
    else
        snprintf(buf, sizeof buf, "%s", m);
    ldl__sq_err(s, what, buf);
}

LDL_SQLITE_API const char *ldl_sqlite_why(const ldl_sqlite *s) {
    return s ? s->_err : "ldl_sqlite: NULL";
}

LDL_SQLITE_API sqlite3 *ldl_sqlite_db(const ldl_sqlite *s) {
    return s ? s->_db : NULL;
}

/* ------------------------------------------------------------ time and boot */
/* CLOCK_MONOTONIC in ms (decision 0801); -1 when the clock fails */
static int64_t ldl__sq_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000L);
}

/* this boot's identity: 36 characters of [0-9a-f-]; 0 ok, -1 not readable */
static int ldl__sq_read_boot(char *out, size_t cap) {
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    char buf[64];
    size_t n, i;
    if (!f) return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) n--;
    if (n != 36 || n >= cap) return -1;
    for (i = 0; i < n; i++) {
        char c = buf[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return -1;
    }
    memcpy(out, buf, n);
    out[n] = '\0';
    return 0;
}

/* ------------------------------------------------------------ stepping with a bound */
/* step a statement, retrying while the database is busy until `deadline`
   (CLOCK_MONOTONIC ms): sleeps of 1, 2, 4, 8, 8 .. ms. Answers the last
   sqlite3_step code. */
static int ldl__sq_step(sqlite3_stmt *st, int64_t deadline) {
    int nap = 1;
    for (;;) {
        int rc = sqlite3_step(st), prim = rc & 0xff;
        int64_t now;
        if (prim != SQLITE_BUSY && prim != SQLITE_LOCKED) return rc;
        now = ldl__sq_now();
        if (now < 0 || now >= deadline) return rc;
        sqlite3_reset(st);
        if (now + nap > deadline) nap = (int)(deadline - now);
        sqlite3_sleep(nap > 0 ? nap : 1);
        if (nap < 8) nap *= 2;
    }
}

/* prepare, retrying while reading the schema finds the database busy */
static int ldl__sq_prep(sqlite3 *db, const char *sql, unsigned flags, sqlite3_stmt **st,
                        int64_t deadline) {
    int nap = 1;
    for (;;) {
        int rc = sqlite3_prepare_v3(db, sql, -1, flags, st, NULL), prim = rc & 0xff;
        int64_t now;
        if (prim != SQLITE_BUSY && prim != SQLITE_LOCKED) return rc;
        sqlite3_finalize(*st);
        *st = NULL;
        now = ldl__sq_now();
        if (now < 0 || now >= deadline) return rc;
        sqlite3_sleep(nap);
        if (nap < 8) nap *= 2;
    }
}

/* a PRAGMA (or any one-row statement) with the busy bound; its first column's
   text into out (may be NULL). Answers SQLITE_ROW, SQLITE_DONE or the error. */
static int ldl__sq_pragma(sqlite3 *db, const char *sql, uint32_t busy_ms, char *out, size_t cap) {
    sqlite3_stmt *st = NULL;
    int64_t deadline = ldl__sq_now() + (int64_t)busy_ms;
    int rc = ldl__sq_prep(db, sql, 0, &st, deadline);
    if (out && cap) out[0] = '\0';
    if (rc != SQLITE_OK) return rc;
    rc = ldl__sq_step(st, deadline);
    if (rc == SQLITE_ROW && out && cap && sqlite3_column_text(st, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rc = sqlite3_errcode(db) ? sqlite3_errcode(db) : rc;
    sqlite3_finalize(st);
    return rc;
}

/* run one of the transaction statements (no rows); SQLITE_DONE on success */
static int ldl__sq_run(ldl_sqlite *s, int which, int64_t deadline) {
    sqlite3_stmt *st = s->_st[which];
    int rc = ldl__sq_step(st, deadline);
    sqlite3_reset(st);
    return rc;
}

static void ldl__sq_rollback(ldl_sqlite *s) {
    if (!sqlite3_get_autocommit(s->_db)) {
        sqlite3_stmt *st = s->_st[LDL__SQ_ROLLBACK];
        if (st) { (void)sqlite3_step(st); sqlite3_reset(st); }
        else (void)sqlite3_exec(s->_db, "ROLLBACK", NULL, NULL, NULL);
    }
}


/* ------------------------------------------------------------ files others can write (decision 0804) */
/* a file or directory that another user owns or may write lets that user
   rewrite the token (or swap the file, or plant a -journal that SQLite rolls
   "back" into it). Trusted owners: this process's euid and root. */
static int ldl__sq_foreign(ldl_sqlite *s, const char *what, const char *path,
                           const struct stat *st, int dir_sticky_ok) {
    char buf[LDL__SQLITE_ERR_MAX];
    uid_t me = geteuid();
    int wr = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (st->st_uid != me && st->st_uid != 0) {
        snprintf(buf, sizeof buf, "%s %.300s is owned by uid %lu, not by this user (uid %lu) or "
                 "root: that user could rewrite the token", what, path,
                 (unsigned long)st->st_uid, (unsigned long)me);
        ldl__sq_err(s, "foreign file", buf);
        return -1;
    }
    if (wr && !(dir_sticky_ok && (st->st_mode & S_ISVTX))) {
        snprintf(buf, sizeof buf, "%s %.300s is writable by %s (mode %04lo): another user could "
                 "%s; chmod go-w it", what, path,
                 (st->st_mode & S_IWOTH) ? "others" : "its group",
                 (unsigned long)(st->st_mode & 07777),
                 S_ISDIR(st->st_mode) ? "swap the database or plant a -journal beside it"
                                      : "rewrite the token");
        ldl__sq_err(s, "foreign file", buf);
        return -1;
    }
    return 0;
}

/* the directory `dir` and every directory above it: owned by this user or
   root; the first must not be writable by others at all (they could create
   the -wal, -shm or -journal name) unless sticky_ok; the ones above may be
   sticky (/tmp: their entries are not others' to rename) */
static int ldl__sq_guard_dirs(ldl_sqlite *s, const char *dir, int sticky_ok) {
    char p[PATH_MAX];
    size_t n = strlen(dir);
    int first = !sticky_ok;
    struct stat st;
    if (n == 0 || n >= sizeof p) { ldl__sq_err(s, "foreign file", "path too long"); return -1; }
    memcpy(p, dir, n + 1);
    for (;;) {
        char *slash;
        if (stat(p[0] ? p : "/", &st) != 0) {
            ldl__sq_err(s, "foreign file", "cannot stat a directory of the database's path");
            return -1;
        }
        if (ldl__sq_foreign(s, "directory", p[0] ? p : "/", &st, !first) != 0) return -1;
        first = 0;
        if (!p[0] || strcmp(p, "/") == 0) return 0;
        slash = strrchr(p, '/');
        if (!slash) return 0;
        *slash = '\0';
    }
}

/* the directory part of `path` as an absolute path (the cwd prefixed to a
   relative one); 0 ok */
static int ldl__sq_dir_of(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    size_t n;
    if (!slash) return getcwd(out, cap) ? 0 : -1;
    n = slash == path ? 1 : (size_t)(slash - path);
    if (path[0] == '/') {
        if (n >= cap) return -1;
        memcpy(out, path, n);
        out[n] = '\0';
        return 0;
    }
    if (!getcwd(out, cap)) return -1;
    if (strlen(out) + 1 + n >= cap) return -1;
    strcat(out, "/");
    strncat(out, path, n);
    return 0;
}

/* the database file of the connection (SQLite names it with every symlink
   resolved), its -wal, -shm and -journal (those that exist; never a
   symlink: SQLite makes none), and the directories above it; `given`
   (ldl_sqlite_open's path, may be NULL), when a symlink, adds the
   directories above the link (whoever may write there can swap it).
   In-memory and temporary databases have no file: nothing to check. */
static int ldl__sq_guard(ldl_sqlite *s, sqlite3 *db, const char *given) {
    static const char *const sfx[4] = { "", "-wal", "-shm", "-journal" };
    const char *file = sqlite3_db_filename(db, "main");
    char f[PATH_MAX + 16], dir[PATH_MAX];
    struct stat st;
    int k;
    if (!file || !*file) return 0;
    if (given && lstat(given, &st) == 0 && S_ISLNK(st.st_mode)) {
        st.st_mode &= ~(mode_t)(S_IWGRP | S_IWOTH);  /* a link's own mode means nothing */
        if (ldl__sq_foreign(s, "the symlink", given, &st, 0) != 0) return -1;
        if (ldl__sq_dir_of(given, dir, sizeof dir) != 0) {
            ldl__sq_err(s, "foreign file", "cannot name the directory of the symlink");
            return -1;
        }
        /* a sticky directory (/tmp) keeps others from replacing a link of ours */
        if (ldl__sq_guard_dirs(s, dir, 1) != 0) return -1;
    }
    for (k = 0; k < 4; k++) {
        if (strlen(file) + strlen(sfx[k]) >= sizeof f) { ldl__sq_err(s, "foreign file", "path too long"); return -1; }
        snprintf(f, sizeof f, "%s%s", file, sfx[k]);
        if (lstat(f, &st) != 0) {
            if (k > 0 && errno == ENOENT) continue;
            ldl__sq_err(s, "foreign file", "cannot stat the database file");
            return -1;
        }
        if (k == 0 && S_ISLNK(st.st_mode) && stat(f, &st) != 0) {
            ldl__sq_err(s, "foreign file", "cannot stat the database file");
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(dir, sizeof dir, "%.300s is not a regular file%s", f,
                     S_ISLNK(st.st_mode) ? " (a symlink)" : "");
            ldl__sq_err(s, "foreign file", dir);
            return -1;
        }
        if (ldl__sq_foreign(s, k == 0 ? "the database" : "the database's", f, &st, 0) != 0) return -1;
    }
    if (ldl__sq_dir_of(file, dir, sizeof dir) != 0) {
        ldl__sq_err(s, "foreign file", "cannot name the database's directory");
        return -1;
    }
    return ldl__sq_guard_dirs(s, dir, 0);
}

/* ------------------------------------------------------------ one store call */
/* the statement's reply: at most one row of one INTEGER >= 1. Answers 1 (a
   row, *tok set), 0 (no row) or LDL_ESTORE (error or wrong shape). */
static int ldl__sq_token_reply(ldl_sqlite *s, sqlite3_stmt *st, int64_t deadline, int64_t *tok) {
    int rc = ldl__sq_step(st, deadline), out;
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) { ldl__sq_err_db(s, "exec", rc); return LDL_ESTORE; }
    if (sqlite3_column_count(st) != 1 || sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
        sqlite3_column_int64(st, 0) < 1) {
        ldl__sq_err(s, "reply", "not one INTEGER token >= 1");
        return LDL_ESTORE;
    }
    *tok = sqlite3_column_int64(st, 0);
    out = 1;
    rc = ldl__sq_step(st, deadline);          /* RETURNING: the statement ends here */
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_ROW) ldl__sq_err(s, "reply", "more than one row");
        else ldl__sq_err_db(s, "exec", rc);
        out = LDL_ESTORE;
    }
    return out;
}

/* BEGIN IMMEDIATE; bind (the clock read inside the write lock); the statement;
   COMMIT. Answers 1 (and *tok) only after COMMIT succeeded. */
static int ldl__sq_call(ldl_sqlite *s, int which, const char *key, int64_t token,
                        uint32_t ttl_ms, const char *owner, int64_t *tok) {
    sqlite3_stmt *st;
    int64_t deadline, now, got = 0;
    int rc, out;
    if (!s->_ok) { ldl__sq_err(s, "exec", "ldl_sqlite not initialised"); return LDL_ESTORE; }
    if (s->_ro) { ldl__sq_err(s, "exec", "opened for inspection only (LDL_SQLITE_INSPECT)"); return LDL_ESTORE; }
    if (!sqlite3_get_autocommit(s->_db)) {
        ldl__sq_err(s, "exec", "the connection is inside a transaction of the caller's "
                    "(a lease taken there would be undone by its ROLLBACK)");
        return LDL_ESTORE;
    }
    now = ldl__sq_now();
    if (now < 0) { ldl__sq_err(s, "clock", "clock_gettime(CLOCK_MONOTONIC) failed"); return LDL_ESTORE; }
    deadline = now + (int64_t)s->_busy_ms;
    rc = ldl__sq_run(s, LDL__SQ_BEGIN, deadline);
    if (rc != SQLITE_DONE) { ldl__sq_err_db(s, "begin", rc); ldl__sq_rollback(s); return LDL_ESTORE; }
    now = ldl__sq_now();                      /* inside the write lock: in commit order */
    if (now < 0) {
        ldl__sq_rollback(s);
        ldl__sq_err(s, "clock", "clock_gettime(CLOCK_MONOTONIC) failed");
        return LDL_ESTORE;
    }
    st = s->_st[which];
    rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (which == LDL__SQ_ACQ) {
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, now + (int64_t)ttl_ms);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 3, s->_boot, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = owner ? sqlite3_bind_text(st, 4, owner, -1, SQLITE_STATIC)
                                        : sqlite3_bind_null(st, 4);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, now);
    } else if (which == LDL__SQ_REN) {
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, token);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 3, now + (int64_t)ttl_ms);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 4, s->_boot, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, now);
    } else {
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, token);
    }
    if (rc != SQLITE_OK) {
        ldl__sq_err_db(s, "bind", rc);
        out = LDL_ESTORE;
    } else {
        out = ldl__sq_token_reply(s, st, deadline, &got);
        if (out == 1 && which != LDL__SQ_ACQ && got != token) {
            ldl__sq_err(s, "reply", "token mismatch");
            out = LDL_ESTORE;
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (out < 0) { ldl__sq_rollback(s); return out; }
    /* COMMIT waits for readers to finish (rollback journal): its own bound */
    now = ldl__sq_now();
    rc = ldl__sq_run(s, LDL__SQ_COMMIT, (now < 0 ? deadline : now) + (int64_t)s->_busy_ms);
    if (rc != SQLITE_DONE) {
        ldl__sq_err_db(s, "commit", rc);
        ldl__sq_rollback(s);
        return LDL_ESTORE;
    }
    if (out == 1 && tok) *tok = got;
    return out;
}

static int ldl__sq_key_ok(const char *key) {
    size_t n = strlen(key);
    return n >= 1 && n < LDL_KEY_MAX;
}

static int ldl__sq_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    if (token_out) *token_out = 0;
    if (!ctx || !key || !token_out || ttl_ms == 0 || !ldl__sq_key_ok(key)) return LDL_EINVAL;
    return ldl__sq_call((ldl_sqlite *)ctx, LDL__SQ_ACQ, key, 0, ttl_ms, NULL, token_out);
}

static int ldl__sq_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    if (!ctx || !key || ttl_ms == 0 || !ldl__sq_key_ok(key)) return LDL_EINVAL;
    if (token < 1) return 0;            /* no lease ever carried such a token */
    return ldl__sq_call((ldl_sqlite *)ctx, LDL__SQ_REN, key, token, ttl_ms, NULL, NULL);
}

static int ldl__sq_release(void *ctx, const char *key, int64_t token) {
    if (!ctx || !key || !ldl__sq_key_ok(key)) return LDL_EINVAL;
    if (token < 1) return 0;
    return ldl__sq_call((ldl_sqlite *)ctx, LDL__SQ_REL, key, token, 0, NULL, NULL);
}

/* ------------------------------------------------------------ holder identity */
/* 1..LDL_OWNER_MAX-1 bytes of printable ASCII (as the lock checks desc.owner) */
static int ldl__sq_owner_ok(const char *o, size_t n) {
    size_t i;
    if (n < 1 || n >= LDL_OWNER_MAX) return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)o[i] < 0x20 || (unsigned char)o[i] > 0x7E) return 0;
    return 1;
}

static int ldl__sq_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                 int64_t *token_out) {
    ldl_sqlite *s = (ldl_sqlite *)ctx;
    if (token_out) *token_out = 0;
    if (!owner) return ldl__sq_acquire(ctx, key, ttl_ms, token_out);
    if (!s || !key || !token_out || ttl_ms == 0 || !ldl__sq_key_ok(key)) return LDL_EINVAL;
    if (!ldl__sq_owner_ok(owner, strlen(owner))) {
        ldl__sq_err(s, "owner", "want 1..LDL_OWNER_MAX-1 bytes of printable ASCII");
        return LDL_EINVAL;
    }
    return ldl__sq_call(s, LDL__SQ_ACQ, key, 0, ttl_ms, owner, token_out);
}

static int ldl__sq_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_sqlite *s = (ldl_sqlite *)ctx;
    sqlite3_stmt *st;
    int64_t now, deadline;
    int rc, res = LDL_ESTORE;
    if (!s || !key || !out || !ldl__sq_key_ok(key)) return LDL_EINVAL;
    out->token = 0; out->ttl_left_ms = 0; out->owner[0] = '\0';
    if (!s->_ok) { ldl__sq_err(s, "inspect", "ldl_sqlite not initialised"); return LDL_ESTORE; }
    now = ldl__sq_now();
    if (now < 0) { ldl__sq_err(s, "clock", "clock_gettime(CLOCK_MONOTONIC) failed"); return LDL_ESTORE; }
    deadline = now + (int64_t)s->_busy_ms;
    st = s->_st[LDL__SQ_INS];
    if ((rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC)) != SQLITE_OK) {
        ldl__sq_err_db(s, "bind", rc);
    } else if ((rc = ldl__sq_step(st, deadline)) == SQLITE_DONE) {
        res = 0;
    } else if (rc != SQLITE_ROW) {
        ldl__sq_err_db(s, "inspect", rc);
    } else if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_int64(st, 0) < 1 ||
               sqlite3_column_type(st, 1) != SQLITE_INTEGER || sqlite3_column_type(st, 2) != SQLITE_TEXT ||
               (sqlite3_column_type(st, 3) != SQLITE_TEXT && sqlite3_column_type(st, 3) != SQLITE_NULL)) {
        ldl__sq_err(s, "reply", "a lease row of the wrong shape");
    } else {
        int64_t tok = sqlite3_column_int64(st, 0), exp = sqlite3_column_int64(st, 1);
        const char *boot = (const char *)sqlite3_column_text(st, 2);
        const char *o = (const char *)sqlite3_column_text(st, 3);
        size_t on = o ? (size_t)sqlite3_column_bytes(st, 3) : 0;
        now = ldl__sq_now();
        if (o && !ldl__sq_owner_ok(o, on)) {
            ldl__sq_err(s, "reply", "owner too long or not printable ASCII");
        } else if (!boot || strcmp(boot, s->_boot) != 0 || exp <= now || now < 0) {
            res = 0;                    /* released, expired or of another boot */
        } else {
            int64_t left = exp - now;
            out->token = tok;
            out->ttl_left_ms = left > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)left;
            if (o) { memcpy(out->owner, o, on); out->owner[on] = '\0'; }
            res = 1;
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (res < 0) { out->token = 0; out->ttl_left_ms = 0; out->owner[0] = '\0'; }
    return res;
}

/* ------------------------------------------------------------ the fenced-write protocol */
LDL_SQLITE_API int ldl_sqlite_fence(ldl_sqlite *s, const char *resource, int64_t fence) {
    sqlite3_stmt *st;
    int64_t got = 0, now;
    size_t n;
    int rc, out;
    if (!s) return LDL_EINVAL;
    if (!s->_ok) { ldl__sq_err(s, "fence", "ldl_sqlite not initialised"); return LDL_EINVAL; }
    if (s->_ro) { ldl__sq_err(s, "fence", "opened for inspection only (LDL_SQLITE_INSPECT)"); return LDL_ESTATE; }
    if (!resource || (n = strlen(resource)) == 0 || n >= LDL_SQLITE_RESOURCE_MAX) {
        ldl__sq_err(s, "fence", "resource: want 1..LDL_SQLITE_RESOURCE_MAX-1 bytes");
        return LDL_EINVAL;
    }
    if (fence < 1) {
        ldl__sq_err(s, "fence", "fence: want a token in [1, INT64_MAX]");
        return LDL_EINVAL;
    }
    if (sqlite3_get_autocommit(s->_db)) {
        ldl__sq_err(s, "fence", "not inside a transaction: BEGIN IMMEDIATE first, so that the "
                    "check and the protected writes commit together");
        return LDL_ESTATE;
    }
    st = s->_st[LDL__SQ_FEN];
    rc = sqlite3_bind_text(st, 1, resource, (int)n, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, fence);
    now = ldl__sq_now();
    if (rc != SQLITE_OK) {
        ldl__sq_err_db(s, "bind", rc);
        out = LDL_ESTORE;
    } else {
        out = ldl__sq_token_reply(s, st, (now < 0 ? 0 : now) + (int64_t)s->_busy_ms, &got);
        if (out == 1 && got != fence) { ldl__sq_err(s, "reply", "fence mismatch"); out = LDL_ESTORE; }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return out;
}

/* ------------------------------------------------------------ init: the tables */
/* [A-Za-z_][A-Za-z0-9_]{0,62}, not sqlite_*: 1 ok */
static int ldl__sq_name_ok(const char *t) {
    size_t i;
    for (i = 0; t[i]; i++) {
        char c = t[i];
        int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (i >= 63 || !(alpha || (i > 0 && c >= '0' && c <= '9'))) return 0;
    }
    if (i == 0) return 0;
    if (i >= 7) {
        static const char pre[] = "sqlite_";
        size_t k;
        for (k = 0; k < 7; k++) {
            char c = t[k];
            if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            if (c != pre[k]) break;
        }
        if (k == 7) return 0;
    }
    return 1;
}

/* one integer (or -1) from a query with one text parameter */
static int64_t ldl__sq_count(ldl_sqlite *s, const char *sql, const char *param, int64_t deadline) {
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    int rc = ldl__sq_prep(s->_db, sql, 0, &st, deadline);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && (rc = ldl__sq_step(st, deadline)) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    else ldl__sq_err_db(s, "lookup", rc);
    sqlite3_finalize(st);
    return v;
}

/* the table `name` with columns `cols`: exactly ours, with no trigger and no
   index of its own; created when missing if `create`. 0 ok, 1 missing (not
   `create`), -1 refused or error (why set). Inside a transaction: the first
   read of each statement may wait (busy) until `deadline`. */
static int ldl__sq_table(ldl_sqlite *s, const char *name, const char *cols, int create,
                         int64_t deadline) {
    char want[LDL__SQLITE_ERR_MAX], buf[LDL__SQLITE_ERR_MAX];
    sqlite3_stmt *st = NULL;
    int rc, rows = 0, attempt;
    snprintf(want, sizeof want, "CREATE TABLE \"%s\" %s", name, cols);
    for (attempt = 0; attempt < 2; attempt++) {
        int same = 0, table = 0;
        rows = 0;
        rc = ldl__sq_prep(s->_db, "SELECT type, sql FROM main.sqlite_master "
                          "WHERE name = ?1 COLLATE NOCASE", 0, &st, deadline);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        while (rc == SQLITE_OK && (rc = rows ? sqlite3_step(st) : ldl__sq_step(st, deadline)) == SQLITE_ROW) {
            const char *type = (const char *)sqlite3_column_text(st, 0);
            const char *sql = (const char *)sqlite3_column_text(st, 1);
            rows++;
            table = type && strcmp(type, "table") == 0;
            same = table && sql && strcmp(sql, want) == 0;
            rc = SQLITE_OK;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc != SQLITE_DONE) { ldl__sq_err_db(s, "lookup", rc); return -1; }
        if (rows > 1 || (rows == 1 && !table)) {
            snprintf(buf, sizeof buf, "\"%s\" is not a table (a view, index or trigger is in its place)", name);
            ldl__sq_err(s, "table", buf);
            return -1;
        }
        if (rows == 1 && !same) {
            snprintf(buf, sizeof buf, "\"%.63s\" has another shape; want exactly: %.400s", name, want);
            ldl__sq_err(s, "table", buf);
            return -1;
        }
        if (rows == 1) break;
        if (!create) return 1;
        snprintf(buf, sizeof buf, "CREATE TABLE main.\"%s\" %s", name, cols);
        rc = sqlite3_exec(s->_db, buf, NULL, NULL, NULL);
        if (rc != SQLITE_OK) { ldl__sq_err_db(s, "create", rc); return -1; }
    }
    if (rows != 1) { ldl__sq_err(s, "create", "the table did not appear"); return -1; }
    if (ldl__sq_count(s, "SELECT (SELECT count(*) FROM main.sqlite_master WHERE type = 'trigger' "
                      "AND tbl_name = ?1 COLLATE NOCASE) + (SELECT count(*) FROM temp.sqlite_master "
                      "WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE)", name, deadline) != 0) {
        snprintf(buf, sizeof buf, "\"%s\" has triggers (main or temp): they could rewrite the fence", name);
        if (strncmp(s->_err, "lookup", 6) != 0) ldl__sq_err(s, "table", buf);
        return -1;
    }
    if (ldl__sq_count(s, "SELECT count(*) FROM main.sqlite_master WHERE type = 'index' "
                      "AND tbl_name = ?1 COLLATE NOCASE AND sql IS NOT NULL", name, deadline) != 0) {
        snprintf(buf, sizeof buf, "\"%s\" has an index of its own (only the primary key's is the adapter's)", name);
        if (strncmp(s->_err, "lookup", 6) != 0) ldl__sq_err(s, "table", buf);
        return -1;
    }
    return 0;
}

static void ldl__sq_finalize(ldl_sqlite *s) {
    int i;
    for (i = 0; i < LDL__SQLITE_NSTMT; i++) {
        if (s->_st[i]) sqlite3_finalize(s->_st[i]);
        s->_st[i] = NULL;
    }
}

/* prepare statements first..last (LDL__SQ_*); 0 ok, -1 (why set) */
static int ldl__sq_prepare(ldl_sqlite *s, int first, int last) {
    char sql[LDL__SQLITE_ERR_MAX];
    const char *t = s->_table;
    int i, rc;
    for (i = first; i <= last; i++) {
        int n;
        if (i == LDL__SQ_BEGIN) n = snprintf(sql, sizeof sql, "BEGIN IMMEDIATE");
        else if (i == LDL__SQ_COMMIT) n = snprintf(sql, sizeof sql, "COMMIT");
        else if (i == LDL__SQ_ROLLBACK) n = snprintf(sql, sizeof sql, "ROLLBACK");
        else if (i == LDL__SQ_ACQ)
            n = snprintf(sql, sizeof sql,
                "INSERT INTO main.\"%s\" AS l (key, token, expires_ms, boot, owner) "
                "VALUES (?1, 1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE SET token = l.token + 1, "
                "expires_ms = excluded.expires_ms, boot = excluded.boot, owner = excluded.owner "
                "WHERE l.expires_ms <= ?5 OR l.boot <> excluded.boot RETURNING token", t);
        else if (i == LDL__SQ_REN)
            n = snprintf(sql, sizeof sql,
                "UPDATE main.\"%s\" SET expires_ms = ?3 WHERE key = ?1 AND token = ?2 "
                "AND boot = ?4 AND expires_ms > ?5 RETURNING token", t);
        else if (i == LDL__SQ_REL)
            n = snprintf(sql, sizeof sql,
                "UPDATE main.\"%s\" SET expires_ms = -1 WHERE key = ?1 AND token = ?2 "
                "AND expires_ms >= 0 RETURNING token", t);
        else if (i == LDL__SQ_INS)
            n = snprintf(sql, sizeof sql,
                "SELECT token, expires_ms, boot, owner FROM main.\"%s\" WHERE key = ?1", t);
        else
            n = snprintf(sql, sizeof sql,
                "INSERT INTO main.\"%s_fence\" AS f (resource, fence) VALUES (?1, ?2) "
                "ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence "
                "WHERE f.fence <= excluded.fence RETURNING fence", t);
        if (n <= 0 || (size_t)n >= sizeof sql) { ldl__sq_err(s, "prepare", "statement too long"); return -1; }
        rc = ldl__sq_prep(s->_db, sql, SQLITE_PREPARE_PERSISTENT, &s->_st[i],
                          ldl__sq_now() + (int64_t)s->_busy_ms);
        if (rc != SQLITE_OK) { ldl__sq_err_db(s, "prepare", rc); return -1; }
    }
    return 0;
}

static int ldl__sq_init(ldl_sqlite *s, sqlite3 *db, const char *table, int inspect) {
    char fence_table[LDL__SQLITE_NAME_MAX];
    int rc, pass, found = 1;
    if (!s) return LDL_EINVAL;
    memset(s, 0, sizeof *s);
    s->_busy_ms = LDL_SQLITE_BUSY_MS;
    if (!table) table = "ldl_lease";
    if (!ldl__sq_name_ok(table)) {
        ldl__sq_err(s, "init", "bad table name (want [A-Za-z_][A-Za-z0-9_]{0,62}, not sqlite_*)");
        return LDL_EINVAL;
    }
    if (!db) { ldl__sq_err(s, "init", "NULL connection"); return LDL_EINVAL; }
    memcpy(s->_table, table, strlen(table) + 1);
    snprintf(fence_table, sizeof fence_table, "%s_fence", table);
    s->_db = db;
    if (sqlite3_libversion_number() < 3035000) {
        ldl__sq_err(s, "init", "SQLite 3.35 or later is needed (RETURNING)");
        return LDL_ESTORE;
    }
    if (ldl__sq_read_boot(s->_boot, sizeof s->_boot) != 0) {
        ldl__sq_err(s, "init", "cannot read the boot id (/proc/sys/kernel/random/boot_id)");
        return LDL_ESTORE;
    }
    if (!sqlite3_get_autocommit(db)) {
        ldl__sq_err(s, "init", "the connection is inside a transaction of the caller's");
        return LDL_ESTORE;
    }
    if (!inspect && sqlite3_db_readonly(db, "main") != 0) {
        ldl__sq_err(s, "init", "read-only database (file permissions, a read-only connection "
                    "or file system): the lease table must be written");
        return LDL_ESTORE;
    }
    if (ldl__sq_guard(s, db, NULL) != 0) return LDL_ESTORE;
    /* the transaction statements first: the others name tables that may
       not exist yet */
    if (ldl__sq_prepare(s, LDL__SQ_BEGIN, LDL__SQ_ROLLBACK) != 0) { ldl__sq_finalize(s); return LDL_ESTORE; }
    /* first a read transaction (it waits for no writer: a busy file does
       not starve init); the write lock only when a table must be created,
       and then every check again under it */
    for (pass = 0; pass < 2; pass++) {
        int64_t deadline = ldl__sq_now() + (int64_t)s->_busy_ms;
        rc = pass == 0 ? sqlite3_exec(db, "BEGIN DEFERRED", NULL, NULL, NULL) == SQLITE_OK ? SQLITE_DONE : SQLITE_ERROR
                       : ldl__sq_run(s, LDL__SQ_BEGIN, deadline);
        if (rc != SQLITE_DONE) {
            ldl__sq_err_db(s, "init", pass == 0 ? sqlite3_errcode(db) : rc);
            ldl__sq_rollback(s);
            ldl__sq_finalize(s);
            return LDL_ESTORE;
        }
        found = ldl__sq_table(s, table, LDL__SQ_LEASE_COLS, pass, deadline);
        if (found == 0) found = ldl__sq_table(s, fence_table, LDL__SQ_FENCE_COLS, pass, deadline);
        if (found == 1 && inspect) {          /* inspection creates nothing */
            char buf[LDL__SQLITE_ERR_MAX];
            snprintf(buf, sizeof buf, "no such table: \"%s\" (or its _fence table): nothing was created", table);
            ldl__sq_err(s, "inspect", buf);
            found = -1;
        }
        if (found < 0) {
            ldl__sq_rollback(s);
            ldl__sq_finalize(s);
            return LDL_ESTORE;
        }
        rc = ldl__sq_run(s, LDL__SQ_COMMIT, ldl__sq_now() + (int64_t)s->_busy_ms);
        if (rc != SQLITE_DONE) {
            ldl__sq_err_db(s, "init", rc);
            ldl__sq_rollback(s);
            ldl__sq_finalize(s);
            return LDL_ESTORE;
        }
        if (found == 0) break;
    }
    if (ldl__sq_prepare(s, inspect ? LDL__SQ_INS : LDL__SQ_ACQ, inspect ? LDL__SQ_INS : LDL__SQ_FEN) != 0) {
        ldl__sq_finalize(s);
        return LDL_ESTORE;
    }
    s->_err[0] = '\0';
    s->_ro = inspect;
    s->_ok = 1;
    return LDL_OK;
}

LDL_SQLITE_API int ldl_sqlite_init(ldl_sqlite *s, sqlite3 *db, const char *table) {
    return ldl__sq_init(s, db, table, 0);
}

/* ldl_sqlite_open's checks before SQLite sees the path: the arguments, a missing
   store under LDL_SQLITE_INSPECT, a new file in a directory others may write. 0 and
   the open flags in *of, or an answer (why set, nothing made) */
static int ldl__sq_open_check(ldl_sqlite *s, const char *path, const char *table, unsigned flags, int *of) {
    char buf[LDL__SQLITE_ERR_MAX];
    if (!path || !*path) { ldl__sq_err(s, "open", "NULL or empty path"); return LDL_EINVAL; }
    if (flags & ~(LDL_SQLITE_CREATE | LDL_SQLITE_KEEP_JOURNAL | LDL_SQLITE_FAST | LDL_SQLITE_INSPECT) ||
        ((flags & LDL_SQLITE_INSPECT) && flags != LDL_SQLITE_INSPECT)) {
        ldl__sq_err(s, "open", "unknown flags (LDL_SQLITE_INSPECT goes alone)");
        return LDL_EINVAL;
    }
    if (table && !ldl__sq_name_ok(table)) {
        ldl__sq_err(s, "init", "bad table name (want [A-Za-z_][A-Za-z0-9_]{0,62}, not sqlite_*)");
        return LDL_EINVAL;
    }
    if (flags & LDL_SQLITE_INSPECT) {
        /* no such store: say so, before SQLite could make anything of the path */
        struct stat st;
        if (stat(path, &st) != 0 && errno == ENOENT) {
            snprintf(buf, sizeof buf, "no such store: %.300s does not exist (nothing was created)", path);
            ldl__sq_err(s, "inspect", buf);
            return LDL_ESTORE;
        }
    }
    if (flags & LDL_SQLITE_CREATE) {
        /* a new file in a directory others may write would be refused right after
           SQLite made it: refuse first, and make nothing (decision 0804) */
        struct stat st;
        char dir[PATH_MAX];
        if (lstat(path, &st) != 0 && errno == ENOENT &&          /* (a missing directory: SQLite says so) */
            (ldl__sq_dir_of(path, dir, sizeof dir) != 0 || (stat(dir, &st) == 0 && ldl__sq_guard_dirs(s, dir, 0) != 0))) {
            if (!s->_err[0]) ldl__sq_err(s, "foreign file", "cannot name the directory of the path");
            return LDL_ESTORE;
        }
        *of |= SQLITE_OPEN_CREATE;
    }
    return 0;
}

/* a failed open after SQLite opened db: close it, keep only the why */
static int ldl__sq_open_fail(ldl_sqlite *s, sqlite3 *db) {
    char buf[LDL__SQLITE_ERR_MAX];
    memcpy(buf, s->_err, sizeof buf);
    sqlite3_close(db);
    memset(s, 0, sizeof *s);
    memcpy(s->_err, buf, sizeof buf);
    return LDL_ESTORE;
}

LDL_SQLITE_API int ldl_sqlite_open(ldl_sqlite *s, const char *path, const char *table,
                                   unsigned flags) {
    sqlite3 *db = NULL;
    char buf[LDL__SQLITE_ERR_MAX];
    int rc, of = SQLITE_OPEN_READWRITE;
    if (!s) return LDL_EINVAL;
    memset(s, 0, sizeof *s);
    s->_busy_ms = LDL_SQLITE_BUSY_MS;
    if ((rc = ldl__sq_open_check(s, path, table, flags, &of)) != 0) return rc;
    rc = sqlite3_open_v2(path, &db, of, NULL);
    if (rc != SQLITE_OK) {
        snprintf(buf, sizeof buf, "cannot open %.200s: %s%s", path,
                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                 (flags & LDL_SQLITE_CREATE) ? "" : " (a missing file is created only with LDL_SQLITE_CREATE)");
        ldl__sq_err(s, "open", buf);
        sqlite3_close(db);
        return LDL_ESTORE;
    }
    s->_db = db;
    if (ldl__sq_guard(s, db, path) != 0)          /* before anything writes the file */
        return ldl__sq_open_fail(s, db);
    s->_db = NULL;
    if (flags & LDL_SQLITE_INSPECT) {
        /* read-write (a read-only connection on a WAL file leaves -wal and -shm
           behind; the last read-write one removes them at close), but
           query_only: this connection writes nothing, and no pragma is set */
        rc = ldl__sq_pragma(db, "PRAGMA query_only = 1", LDL_SQLITE_BUSY_MS, NULL, 0);
        if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = ldl__sq_init(s, db, table, 1);
        else { s->_db = db; ldl__sq_err_db(s, "inspect", rc); s->_db = NULL; rc = LDL_ESTORE; }
        if (rc != LDL_OK) {
            s->_db = NULL;
            sqlite3_close(db);
            return rc;
        }
        s->_own = 1;
        return LDL_OK;
    }
    rc = ldl__sq_pragma(db, (flags & LDL_SQLITE_FAST) ? "PRAGMA main.synchronous = NORMAL"
                                                       : "PRAGMA main.synchronous = FULL",
                        LDL_SQLITE_BUSY_MS, NULL, 0);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = SQLITE_OK;
    if (rc == SQLITE_OK && (!(flags & LDL_SQLITE_KEEP_JOURNAL) || (flags & LDL_SQLITE_FAST))) {
        char m[16];
        rc = ldl__sq_pragma(db, "PRAGMA main.journal_mode = WAL", LDL_SQLITE_BUSY_MS, m, sizeof m);
        if (rc == SQLITE_ROW) rc = strcmp(m, "wal") == 0 ? SQLITE_OK : SQLITE_ERROR;
        else if (rc == SQLITE_DONE) rc = SQLITE_ERROR;
    }
    if (rc != SQLITE_OK) {
        s->_db = db;
        ldl__sq_err_db(s, "open", rc);
        return ldl__sq_open_fail(s, db);
    }
    rc = ldl_sqlite_init(s, db, table);
    if (rc != LDL_OK) {
        s->_db = NULL;
        sqlite3_close(db);
        return rc;
    }
    s->_own = 1;
    return LDL_OK;
}

LDL_SQLITE_API void ldl_sqlite_close(ldl_sqlite *s) {
    if (!s) return;
    ldl__sq_finalize(s);
    if (s->_own && s->_db) sqlite3_close(s->_db);
    s->_db = NULL;
    s->_own = 0;
    s->_ro = 0;
    s->_ok = 0;
}

LDL_SQLITE_API int ldl_sqlite_set_busy_ms(ldl_sqlite *s, uint32_t ms) {
    if (!s) return LDL_EINVAL;
    if (ms < 1 || ms > 60000) { ldl__sq_err(s, "busy_ms", "want 1..60000"); return LDL_EINVAL; }
    s->_busy_ms = ms;
    return LDL_OK;
}

/* ------------------------------------------------------------ durability */
LDL_SQLITE_API int ldl_sqlite_check_durability(ldl_sqlite *s) {
    char mode[16] = "";
    char buf[LDL__SQLITE_ERR_MAX];
    const char *file, *fs = "", *sname;
    int sync = -1, rc, out;
    if (!s) return LDL_EINVAL;
    if (!s->_ok) { ldl__sq_err(s, "durability", "ldl_sqlite not initialised"); return LDL_EINVAL; }
    rc = ldl__sq_pragma(s->_db, "PRAGMA main.journal_mode", s->_busy_ms, mode, sizeof mode);
    if (rc == SQLITE_ROW) {
        char v[16];
        rc = ldl__sq_pragma(s->_db, "PRAGMA main.synchronous", s->_busy_ms, v, sizeof v);
        if (rc == SQLITE_ROW && v[0] >= '0' && v[0] <= '3' && v[1] == '\0') sync = v[0] - '0';
    }
    if (rc != SQLITE_ROW || !mode[0] || sync < 0) { ldl__sq_err_db(s, "durability", rc); return LDL_ESTORE; }
    sname = sync == 0 ? "OFF" : sync == 1 ? "NORMAL" : sync == 2 ? "FULL" : "EXTRA";
    file = sqlite3_db_filename(s->_db, "main");
#if defined(__linux__)
    if (file && *file) {
        struct statfs sf;
        if (statfs(file, &sf) == 0) {
            if ((unsigned long)sf.f_type == 0x01021994UL) fs = "tmpfs";
            else if ((unsigned long)sf.f_type == 0x858458f6UL) fs = "ramfs";
        }
    }
#endif
    if (!file || !*file || strcmp(mode, "memory") == 0 || strcmp(mode, "off") == 0) {
        out = LDL_SQLITE_NOT_SAFE;
        snprintf(buf, sizeof buf, "journal_mode=%s synchronous=%s%s: NOT SAFE -- a crash can "
                 "corrupt the file or lose the fence", mode, sname,
                 (!file || !*file) ? ", in-memory or temporary database" : "");
    } else if (*fs) {
        out = LDL_SQLITE_CRASH_SAFE;
        snprintf(buf, sizeof buf, "journal_mode=%s synchronous=%s on %s: survives a process "
                 "crash; a reboot empties the file system and the fence restarts at 1", mode, sname, fs);
    } else if (sync >= 2) {
        out = LDL_SQLITE_POWER_SAFE;
        snprintf(buf, sizeof buf, "journal_mode=%s synchronous=%s: survives a process crash and "
                 "a power loss (an fsync per commit)", mode, sname);
    } else {
        out = LDL_SQLITE_CRASH_SAFE;
        snprintf(buf, sizeof buf, "journal_mode=%s synchronous=%s: survives a process crash; a "
                 "power loss can lose the last commits and grant a fence again%s", mode, sname,
                 strcmp(mode, "wal") != 0 || sync == 0 ? " (or corrupt the file)" : "");
    }
    ldl__sq_err(s, "durability", buf);
    return out;
}

/* ------------------------------------------------------------ views */
LDL_SQLITE_API ldl_store ldl_sqlite_store(ldl_sqlite *s) {
    ldl_store st;
    memset(&st, 0, sizeof st);
    if (!s) return st;
    st.acquire = ldl__sq_acquire;
    st.renew = ldl__sq_renew;
    st.release = ldl__sq_release;
    st.ctx = s;
    return st;
}

LDL_SQLITE_API ldl_store_ext ldl_sqlite_ext(ldl_sqlite *s) {
    ldl_store_ext x;
    memset(&x, 0, sizeof x);
    if (!s || !s->_ok) return x;
    x.acquire_owned = ldl__sq_acquire_owned;
    x.inspect = ldl__sq_inspect;
    x.ctx = s;
    return x;
}

#ifndef LDL_NO_ASYNC
/* ------------------------------------------------------------ the non-blocking shape */
/* owner NULL: the plain acquire */
static int ldl__sq_a_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                                   const char *owner) {
    int64_t tok = 0;
    int rc;
    if (!op) return LDL_EINVAL;
    rc = ldl__sq_acquire_owned(ctx, key, ttl_ms, owner, &tok);
    ldl_op_complete(op, rc, tok);
    return LDL_OK;
}
static int ldl__sq_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    return ldl__sq_a_acquire_owned(ctx, op, key, ttl_ms, NULL);
}
static int ldl__sq_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    if (!op) return LDL_EINVAL;
    ldl_op_complete(op, ldl__sq_renew(ctx, key, token, ttl_ms), 0);
    return LDL_OK;
}
static int ldl__sq_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    if (!op) return LDL_EINVAL;
    ldl_op_complete(op, ldl__sq_release(ctx, key, token), 0);
    return LDL_OK;
}
static void ldl__sq_a_cancel(void *ctx, ldl_op *op) { (void)ctx; (void)op; }  /* never in flight */

LDL_SQLITE_API ldl_async_store ldl_sqlite_async_store(ldl_sqlite *s) {
    ldl_async_store a;
    memset(&a, 0, sizeof a);
    if (!s) return a;
    a.acquire = ldl__sq_a_acquire;
    a.renew = ldl__sq_a_renew;
    a.release = ldl__sq_a_release;
    a.cancel = ldl__sq_a_cancel;
    a.ctx = s;
    return a;
}

LDL_SQLITE_API ldl_store_ext ldl_sqlite_async_ext(ldl_sqlite *s) {
    ldl_store_ext x = ldl_sqlite_ext(s);
    if (x.ctx) x.submit_owned = ldl__sq_a_acquire_owned;
    return x;
}
#endif /* LDL_NO_ASYNC */

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_SQLITE_C */
#endif /* LDL_SQLITE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the lite_di_lock.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
