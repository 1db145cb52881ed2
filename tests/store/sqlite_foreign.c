/* sqlite_foreign.c -- storage another local user can write is refused (issue 31, decision
 * 0804). A real second local user (created here with useradd when run as root, as CI does;
 * removed at the end) plays the foe:
 *   - the attack itself: a 0666 database; the foe, in a process of its own uid, rewrites
 *     the token to 1. ldl_sqlite_open and ldl_sqlite_init then refuse the file (LDL_ESTORE,
 *     a why naming file and mode), a lock over it hands out no fence, and nothing in the
 *     file was changed by the refusal;
 *   - the control: at 0644 the foe's same UPDATE fails (read-only), and the file is used;
 *   - a database, -wal, -shm or -journal owned by the foe, or writable by group/others;
 *   - a symlink to the foe's file; a symlink of the foe's in a sticky directory;
 *   - a directory the foe owns, or that group/others may write (sticky or not);
 *   - accepted: 0600 / 0644 files of this user, a temp dir under sticky /tmp, a symlink
 *     of ours in a sticky directory pointing at a file of ours.
 * Not root: the mode checks only (no second user). argv[1]: the parent of the temp dir.
 * Last line: "N passed, N failed". */
#define _GNU_SOURCE
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char foe_name[32];
static uid_t foe_uid;
static gid_t foe_gid;
static int have_foe;

static void foe_remove(void)
{
    char cmd[96];
    if (!have_foe) return;
    have_foe = 0;
    snprintf(cmd, sizeof cmd, "userdel %s 2>/dev/null", foe_name);
    if (system(cmd) != 0) fprintf(stderr, "userdel %s failed\n", foe_name);
}

static void foe_create(void)
{
    char cmd[160];
    struct passwd *pw;
    snprintf(foe_name, sizeof foe_name, "ldlsqfoe%ld", (long)getpid() % 100000);
    snprintf(cmd, sizeof cmd, "useradd -M -r -U -s /usr/sbin/nologin %s", foe_name);
    if (system(cmd) != 0 || !(pw = getpwnam(foe_name))) {
        fprintf(stderr, "useradd %s failed: the second-user checks cannot run\n", foe_name);
        exit(2);
    }
    foe_uid = pw->pw_uid;
    foe_gid = pw->pw_gid;
    have_foe = 1;
    atexit(foe_remove);
}

/* the foe, in a process of its own uid (setpriv, then the sqlite3 shell: a process of its
   own, no connection of ours inherited): run `sql` on the file; 0 it succeeded */
static int as_foe(const char *path, const char *sql)
{
    char cmd[1200];
    int rc;
    snprintf(cmd, sizeof cmd, "setpriv --reuid=%lu --regid=%lu --clear-groups sqlite3 -bail "
             "-cmd '.timeout 2000' '%s' '%s' >/dev/null 2>&1", (unsigned long)foe_uid,
             (unsigned long)foe_gid, path, sql);
    rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? (WEXITSTATUS(rc) == 0 ? 0 : 1) : -1;
}

/* the database and its side files back to `mode` */
static void set_modes(const char *db, mode_t mode)
{
    static const char *const sfx[4] = { "", "-wal", "-shm", "-journal" };
    char p[700];
    int k;
    for (k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s%s", db, sfx[k]);
        chmod(p, mode);
    }
}

/* take and release `key` n times through a lock; the last fence (0: none) */
static int64_t run_lock(const char *path, const char *key, int n)
{
    ldl_sqlite sq;
    sqt_lock t;
    int64_t f = 0;
    int i;
    if (ldl_sqlite_open(&sq, path, NULL, LDL_SQLITE_CREATE) != LDL_OK) return -1;
    if (sqt_lock_init(&t, &sq, key, 5000, 1000) != 0) { ldl_sqlite_close(&sq); return -1; }
    for (i = 0; i < n; i++) {
        if (ldl_lock_acquire(&t.lock) != 1) { f = -1; break; }
        f = ldl_lock_fencing_token(&t.lock);
        ldl_lock_release(&t.lock);
    }
    ldl_lock_dispose(&t.lock);
    ldl_sqlite_close(&sq);
    return f;
}

/* ldl_sqlite_open refuses `path`, its why mentions `want`; and a lock over the refused
   adapter hands out no fence */
static void refused(const char *path, const char *want, const char *what)
{
    ldl_sqlite sq;
    sqt_lock t;
    int rc = ldl_sqlite_open(&sq, path, NULL, 0);
    ST_CHECK(rc == LDL_ESTORE, "%s: open refuses (got %d: %s)", what, rc, ldl_sqlite_why(&sq));
    ST_CHECK(strstr(ldl_sqlite_why(&sq), "foreign file") && strstr(ldl_sqlite_why(&sq), want),
             "%s: the why says \"%s\" (%s)", what, want, ldl_sqlite_why(&sq));
    if (sqt_lock_init(&t, &sq, "k", 5000, 1000) == 0) {
        int a = ldl_lock_acquire(&t.lock);
        ST_CHECK(a != 1 && ldl_lock_fencing_token(&t.lock) == 0,
                 "%s: no fence through the refused adapter (acquire %d, fence %lld)", what, a,
                 (long long)ldl_lock_fencing_token(&t.lock));
        ldl_lock_dispose(&t.lock);
    }
    ldl_sqlite_close(&sq);
    {   /* init on a connection of the caller's refuses too */
        sqlite3 *db = sqt_open(path, SQLITE_OPEN_READWRITE);
        if (db) {
            rc = ldl_sqlite_init(&sq, db, NULL);
            ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), want),
                     "%s: init refuses too (got %d: %s)", what, rc, ldl_sqlite_why(&sq));
            ldl_sqlite_close(&sq);
            sqlite3_close(db);
        }
    }
}

static void accepted(const char *path, const char *what)
{
    ldl_sqlite sq;
    int rc = ldl_sqlite_open(&sq, path, NULL, 0);
    ST_CHECK(rc == LDL_OK, "%s: accepted (got %d: %s)", what, rc, ldl_sqlite_why(&sq));
    ldl_sqlite_close(&sq);
}

static int64_t token_of(const char *path, const char *key)
{
    sqlite3 *db = sqt_open(path, SQLITE_OPEN_READONLY);
    int64_t v = db ? sqt_int(db, "SELECT token FROM ldl_lease WHERE key = ?1", key) : INT64_MIN;
    sqlite3_close(db);
    return v;
}

static void touch(const char *p, mode_t mode)
{
    FILE *f = fopen(p, "a");
    if (f) fclose(f);
    chmod(p, mode);
}

int main(int argc, char **argv)
{
    const char *dir;
    char db[600], p[640], sub[600], sdb[640], link[640];
    int root = geteuid() == 0, rc;
    dir = sqt_setup(argc, argv, "ldl-sqlite-foreign");
    st_case("foreign", SQT_CASE_S);
    if (root) foe_create();
    else fprintf(stderr, "note: not root, no second user: the mode checks only\n");
    ST_CHECK(chmod(dir, 0755) == 0, "chmod the temp dir 0755 (the foe must reach the file)");
    sqt_path(db, sizeof db, "locks.db");

    /* ---------------------------------------------------------------- the attack */
    ST_CHECK(run_lock(db, "job", 3) == 3, "three grants: fences 1 2 3");
    chmod(db, 0600);
    accepted(db, "a 0600 file of this user");
    chmod(db, 0644);
    accepted(db, "a 0644 file of this user");
    if (root) {
        rc = as_foe(db, "UPDATE ldl_lease SET token = 1, expires_ms = -1");
        ST_CHECK(rc == 1, "0644: the foe cannot rewrite the token (child %d)", rc);
        ST_CHECK(token_of(db, "job") == 3, "0644: the token is still 3");
    }
    set_modes(db, 0666);
    if (root) {
        /* while a process of ours has the file open, SQLite keeps -wal and -shm beside it,
           made with the database's mode (0666 too; set_modes did it for any left over from
           the 0644 runs). That is the window the foe writes in. */
        sqlite3 *h = sqt_open(db, SQLITE_OPEN_READWRITE);
        ST_CHECK(h && sqt_int(h, "SELECT count(*) FROM ldl_lease", NULL) == 1, "a connection of ours is open");
        rc = as_foe(db, "UPDATE ldl_lease SET token = 1, expires_ms = -1");
        ST_CHECK(rc == 0, "0666: the foe rewrites the token (setpriv+sqlite3 %d): the attack is real", rc);
        ST_CHECK(token_of(db, "job") == 1, "0666: the token is now 1");
        sqlite3_close(h);
    }
    refused(db, "writable by others (mode 0666)", "a 0666 database");
    ST_CHECK(run_lock(db, "job", 1) == -1, "ldl_sqlite_open (CREATE) refuses it too: no fence 2 again");
    ST_CHECK(token_of(db, "job") == (root ? 1 : 3), "the refusal changed nothing in the file");
    set_modes(db, 0644);
    chmod(db, 0664);
    refused(db, "writable by its group (mode 0664)", "a 0664 database");
    chmod(db, 0644);

    /* ---------------------------------------------------------------- owned by the foe */
    if (root) {
        ST_CHECK(chown(db, foe_uid, foe_gid) == 0, "chown the database to the foe");
        refused(db, "is owned by uid", "a 0644 database owned by the foe");
        ST_CHECK(chown(db, 0, 0) == 0, "chown it back");
        accepted(db, "root's 0644 file again");
    }

    /* ---------------------------------------------------------------- the side files */
    {
        static const char *const sfx[3] = { "-wal", "-shm", "-journal" };
        int k;
        for (k = 0; k < 3; k++) {
            snprintf(p, sizeof p, "%s%s", db, sfx[k]);
            if (k == 2) {   /* a -journal in rollback mode: the file as it stays between calls */
                sqlite3 *h = sqt_open(db, SQLITE_OPEN_READWRITE);
                ST_CHECK(h && sqt_exec(h, "PRAGMA journal_mode = DELETE"), "rollback mode");
                sqlite3_close(h);
            }
            touch(p, 0666);
            {
                char what[64];
                snprintf(what, sizeof what, "a 0666 %s", sfx[k]);
                refused(db, "writable by others", what);
                if (root) {
                    chmod(p, 0644);
                    ST_CHECK(chown(p, foe_uid, foe_gid) == 0, "chown %s to the foe", sfx[k]);
                    snprintf(what, sizeof what, "a %s owned by the foe", sfx[k]);
                    refused(db, "is owned by uid", what);
                }
            }
            unlink(p);
            {   /* a symlink where SQLite makes a file */
                char what[64];
                snprintf(link, sizeof link, "%s.elsewhere", db);
                touch(link, 0600);
                ST_CHECK(symlink(link, p) == 0, "symlink %s", sfx[k]);
                snprintf(what, sizeof what, "a symlink as %s", sfx[k]);
                refused(db, "not a regular file", what);
                unlink(p);
                unlink(link);
            }
        }
        accepted(db, "no side file left: accepted again");
    }

    /* ---------------------------------------------------------------- directories */
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(sdb, sizeof sdb, "%s/locks.db", sub);
    ST_CHECK(mkdir(sub, 0755) == 0 && run_lock(sdb, "d", 1) == 1, "a database in a subdirectory");
    chmod(sub, 0777);
    refused(sdb, "directory", "a 0777 directory");
    chmod(sub, 01777);
    refused(sdb, "writable by others (mode 1777)", "a sticky 1777 directory (others can plant a -journal)");
    chmod(sub, 0775);
    refused(sdb, "writable by its group (mode 0775)", "a 0775 directory");
    {   /* a new file in a 0777 directory: refused before SQLite makes it */
        char ndb[700];
        ldl_sqlite sq;
        struct stat st;
        chmod(sub, 0777);
        snprintf(ndb, sizeof ndb, "%s/new.db", sub);
        rc = ldl_sqlite_open(&sq, ndb, NULL, LDL_SQLITE_CREATE);
        ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "writable by others") && stat(ndb, &st) != 0,
                 "CREATE in a 0777 directory: refused, no file made (%d: %s)", rc, ldl_sqlite_why(&sq));
        ldl_sqlite_close(&sq);
    }
    chmod(sub, 0755);
    accepted(sdb, "the 0755 directory again");
    if (root) {
        ST_CHECK(chown(sub, foe_uid, foe_gid) == 0, "chown the directory to the foe");
        refused(sdb, "is owned by uid", "a directory owned by the foe");
        ST_CHECK(chown(sub, 0, 0) == 0, "chown it back");
    }
    chmod(dir, 0777);
    refused(sdb, "writable by others (mode 0777)", "a 0777 directory two levels up (it can rename sub)");
    chmod(dir, 0755);
    accepted(sdb, "accepted again");

    /* ---------------------------------------------------------------- symlinks */
    snprintf(link, sizeof link, "%s/link.db", dir);
    ST_CHECK(symlink(sdb, link) == 0, "symlink to a file of ours");
    accepted(link, "a symlink of ours to a file of ours");
    chmod(sdb, 0666);
    refused(link, "writable by others", "a symlink to a 0666 file");
    chmod(sdb, 0644);
    if (root) {
        ST_CHECK(chown(sdb, foe_uid, foe_gid) == 0, "chown the target to the foe");
        refused(link, "is owned by uid", "a symlink to the foe's file");
        ST_CHECK(chown(sdb, 0, 0) == 0, "chown it back");
        ST_CHECK(lchown(link, foe_uid, foe_gid) == 0, "lchown the link to the foe");
        {
            ldl_sqlite sq;
            rc = ldl_sqlite_open(&sq, link, NULL, 0);
            ST_CHECK(rc == LDL_ESTORE && strstr(ldl_sqlite_why(&sq), "the symlink"),
                     "a symlink owned by the foe: refused (got %d: %s)", rc, ldl_sqlite_why(&sq));
            ldl_sqlite_close(&sq);
        }
        ST_CHECK(lchown(link, 0, 0) == 0, "lchown it back");
    }
    chmod(dir, 01777);   /* a sticky directory holding our link: others cannot replace it */
    accepted(link, "our symlink in a sticky 1777 directory, to a file in a 0755 one");
    chmod(dir, 0777);
    refused(link, "writable by others", "our symlink in a 0777 directory (anyone can swap it)");
    chmod(dir, 0755);

    st_case("", 0);
    foe_remove();
    if (root) {
        char cmd[96];
        snprintf(cmd, sizeof cmd, "id %s >/dev/null 2>&1", foe_name);
        ST_CHECK(system(cmd) != 0, "the second user is removed");
    }
    sqt_cleanup();
    return st_report();
}
