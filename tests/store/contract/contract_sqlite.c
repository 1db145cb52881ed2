/* contract_sqlite.c -- the adapter contract suite (contract.h) against the SQLite adapter:
 * a temp database file (no server), the synchronous store and the non-blocking view (which
 * answers inside each submit). The "frozen server" is another connection holding the write
 * lock (BEGIN EXCLUSIVE); the foreign storage a 0666 file owned by another uid (run as root,
 * as CI does; another user's file cannot be made otherwise: then n/a). Last line:
 * "sqlite: N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"
#include "adapters/lite_di_lock_view.h"
#include "tests/store/contract/contract.h"

typedef struct sq_fx {
    char        path[600];
    ldl_sqlite  sa, sb, sx;
    sqlite3    *locker;
} sq_fx;

static void sq_client(ct_fx *f, ct_client *c, ldl_sqlite *s)
{
    ldl_view v;
    if (ldl_view_sqlite(&v, s) != LDL_OK) { c->open_rc = CT_NOANSWER; return; }
    ct_attach(c, &v, f->is_async);   /* the view fills both faces: SQLite answers inside each submit */
}

static long sq_count(ct_fx *f)
{
    sq_fx *q = (sq_fx *)f->user;
    sqlite3 *db = sqt_open(q->path, SQLITE_OPEN_READONLY);
    long n = db ? (long)sqt_int(db, "SELECT count(*) FROM ldl_lease", NULL) : -1;
    sqlite3_close(db);
    return n;
}

static const char *sq_open(ct_fx *f, int which, ct_client *c, ct_probe *p)
{
    sq_fx *q = (sq_fx *)f->user;
    char path[700];
    struct stat st;
    switch (which < 0 ? -which : which) {
    case CT_FAKE_UNPROVEN:
        return "no wire and no reply to forge: the answer is the row this process reads and writes under "
               "BEGIN IMMEDIATE (the hostile local party is another user's file: foreign_storage)";
    case CT_FAKE_TREE:
        return "no reply to bound: a local file, rows read by column type";
    case CT_DURABILITY:                       /* the shared file: no standby anywhere */
        if (which < 0) return NULL;
        c->open_rc = ldl_sqlite_open(&q->sx, q->path, NULL, 0);
        if (c->open_rc != LDL_OK) c->open_rc = CT_NOANSWER; else sq_client(f, c, &q->sx);
        p->standbys = 0;
        return NULL;
    case CT_FROZEN:
        q->locker = sqt_open(q->path, 0);
        if (!q->locker || !sqt_exec(q->locker, "BEGIN EXCLUSIVE")) { c->open_rc = CT_NOANSWER; return NULL; }
        c->open_rc = ldl_sqlite_open(&q->sx, q->path, NULL, 0);
        sq_client(f, c, &q->sx);
        return NULL;
    case CT_MISSING:
        sqt_path(path, sizeof path, "missing/nothing.db");
        {   /* a path in a missing directory, then a missing file in an existing one: both
               refused, neither created (the adapter's LDL_SQLITE_INSPECT) */
            int rc1, rc2;
            rc1 = ldl_sqlite_open(&q->sx, path, NULL, LDL_SQLITE_INSPECT);
            p->created = stat(path, &st) == 0;
            ldl_sqlite_close(&q->sx);
            sqt_path(path, sizeof path, "nothing.db");
            rc2 = ldl_sqlite_open(&q->sx, path, NULL, LDL_SQLITE_INSPECT);
            p->created |= stat(path, &st) == 0;
            snprintf(p->why, sizeof p->why, "%.500s", ldl_sqlite_why(&q->sx));
            printf("       inspect a missing store: %d, %d (%s), file %s\n", rc1, rc2, p->why,
                   p->created ? "created" : "not created");
            c->open_rc = rc1 == LDL_OK ? rc1 : rc2;
            if (c->open_rc == LDL_OK) sq_client(f, c, &q->sx);
        }
        {   /* and ldl-run --status on a path that does not exist (when the suite is given it) */
            const char *cli = getenv("LDL_CONTRACT_CLI");
            char cmd[1600];
            int rc;
            if (cli && *cli) {
                sqt_path(path, sizeof path, "nothere.db");
                snprintf(cmd, sizeof cmd, "'%s' --sqlite '%s' --status K >/dev/null 2>&1", cli, path);
                rc = system(cmd);
                rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
                p->created |= stat(path, &st) == 0;
                printf("       ldl-run --status --sqlite on a missing path: exit %d, file %s\n", rc,
                       stat(path, &st) == 0 ? "created" : "not created");
                if (rc != 69) { ldl_sqlite_close(&q->sx); c->open_rc = LDL_OK; memset(&c->s, 0, sizeof c->s); }
            }
        }
        return NULL;
    case CT_FOREIGN:
        if (geteuid() != 0) return "needs root to make a file another uid owns (CI runs as root)";
        sqt_path(path, sizeof path, "foreign.db");
        remove(path);
        {
            sqlite3 *db = sqt_open(path, 0);
            int ok = db && sqt_exec(db, "CREATE TABLE t(x)");
            sqlite3_close(db);
            if (!ok || chown(path, 65534, 65534) != 0 || chmod(path, 0666) != 0) { c->open_rc = CT_NOANSWER; return NULL; }
        }
        c->open_rc = ldl_sqlite_open(&q->sx, path, NULL, 0);
        if (c->open_rc == LDL_OK) sq_client(f, c, &q->sx);
        else printf("       foreign file refused: %s\n", ldl_sqlite_why(&q->sx));
        return NULL;
    default:
        return "no such item";
    }
}

static void sq_close(ct_fx *f, int which, ct_client *c)
{
    sq_fx *q = (sq_fx *)f->user;
    (void)c;
    ldl_sqlite_close(&q->sx);
    memset(&q->sx, 0, sizeof q->sx);
    if (which == CT_FROZEN && q->locker) {
        sqt_exec(q->locker, "ROLLBACK");
        sqlite3_close(q->locker);
        q->locker = NULL;
    }
}

int main(int argc, char **argv)
{
    static sq_fx q;
    ct_fx fx[2];
    const ct_fx *views[2];
    int v;
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    sqt_setup(argc, argv, "contract-sqlite");
    sqt_path(q.path, sizeof q.path, "lease.db");
    for (v = 0; v < 2; v++) {
        ct_fx *f = &fx[v];
        /* frozen_bound_ms: busy_ms 200 by default, and the rest of the call */
        ct_fx_init(f, "sqlite", v, 1000, sq_count, sq_open, sq_close);
        f->user = &q;
        ST_CHECK(ldl_sqlite_open(&q.sa, q.path, NULL, LDL_SQLITE_CREATE) == LDL_OK, "open a: %s", ldl_sqlite_why(&q.sa));
        ST_CHECK(ldl_sqlite_open(&q.sb, q.path, NULL, 0) == LDL_OK, "open b: %s", ldl_sqlite_why(&q.sb));
        sq_client(f, &f->a, &q.sa);
        sq_client(f, &f->b, &q.sb);
        ct_run_view(f);
        ldl_sqlite_close(&q.sa);
        ldl_sqlite_close(&q.sb);
        views[v] = f;
    }
    sqt_cleanup();
    return ct_report("sqlite", views, 2);
}
