/* contract_pg.c -- the adapter contract suite (contract.h) against the PostgreSQL adapter: a
 * real primary with a synchronous streaming standby and wal_level = logical
 * (tests/store/with_pg_standby.sh sync, LDL_PG_WAL_LEVEL=logical), the synchronous ldl_pg and
 * the non-blocking ldl_pg_async. The frozen server is the client's own backend under SIGSTOP;
 * the foreign storage a lease table PUBLIC may write; the durability report is taken with the
 * physical standby stopped and only a logical walsender (pg_recvlogical) streaming as sync,
 * the setup of tests/store/pg_durability.c's test_logical. missing_store runs
 * `ldl-run --status --pg --table ct_typo` ($LDL_CONTRACT_CLI) when it is given.
 * Last line: "pg: N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"
#include "adapters/lite_di_lock_view.h"
#include "tests/store/contract/contract.h"

#define TABLE "ct_lease"

typedef struct pg_side {
    PGconn       *c;
    ldl_pg        p;
    ldl_pg_async  pa;
    ldl_pg_req    reqs[16];
} pg_side;

static pg_side A, B, X;
static PGconn *ADMIN;
static int frozen_pid;

/* a side on its own connection, in the fixture's view; the adapter's init answer */
static int pg_side_open(ct_fx *f, pg_side *s, const char *table, ct_client *c)
{
    ldl_view v;
    int rc;
    memset(s, 0, sizeof *s);
    s->c = pgt_connect("");
    if (PQstatus(s->c) != CONNECTION_OK) return CT_NOANSWER;
    rc = ldl_pg_init(&s->p, s->c, table);
    if (rc != LDL_OK) { printf("       init %s: %s\n", table, ldl_pg_why(&s->p)); return rc; }
    if (f->is_async) {
        rc = ldl_pg_async_init(&s->pa, &s->p, s->reqs, 16);
        if (rc != LDL_OK || ldl_view_pg_async(&v, &s->pa) != LDL_OK) return CT_NOANSWER;
    } else if (ldl_view_pg(&v, &s->p) != LDL_OK) {
        return CT_NOANSWER;
    }
    ct_attach(c, &v, f->is_async);
    return LDL_OK;
}

static void pg_side_close(pg_side *s)
{
    if (s->c) PQfinish(s->c);
    memset(s, 0, sizeof *s);
}

static long pg_count(ct_fx *f)
{
    (void)f;
    return (long)pgt_int(ADMIN, "SELECT count(*) FROM " TABLE, NULL);
}

static int ha(const char *verb)
{
    char buf[512];
    const char *h = getenv("LDL_PG_HA");
    if (!h || !*h) return -1;
    snprintf(buf, sizeof buf, "%s %s", h, verb);
    fflush(stdout);
    fflush(stderr);
    return system(buf) == 0 ? 0 : -1;
}

/* the durability setup: the physical standby stopped, only a logical walsender
   (pg_recvlogical) streaming as sync -- tests/store/pg_durability.c's test_logical */
static char RL_PIDFILE[300];
static int rl_pid;

static void pg_durability_setup(ct_fx *f, ct_client *c)
{
    char cmd[1024];
    const char *tmp = getenv("LDL_TEST_DIR") ? getenv("LDL_TEST_DIR") : "/tmp";
    uint64_t end;
    int64_t n = 0;
    FILE *fp;
    if (pgt_int(ADMIN, "SELECT (current_setting('wal_level') = 'logical')::int", NULL) != 1 || !getenv("LDL_PG_HA")) {
        fprintf(stderr, "run me through LDL_PG_WAL_LEVEL=logical tests/store/with_pg_standby.sh sync\n");
        c->open_rc = CT_NOANSWER;
        return;
    }
    if (ha("stop-standby") != 0) { c->open_rc = CT_NOANSWER; return; }
    snprintf(RL_PIDFILE, sizeof RL_PIDFILE, "%s/ct_recvlogical.%ld.pid", tmp, (long)getpid());
    snprintf(cmd, sizeof cmd,
             "port=$($LDL_PG_HA primary-port) && rl=$(ls /usr/lib/postgresql/*/bin/pg_recvlogical | tail -n 1) && "
             "{ \"$rl\" -d \"host=127.0.0.1 port=$port user=ldl dbname=postgres application_name=ct_logical_rx\" "
             "--slot ct_logical --create-slot --if-not-exists --start -s 1 -f /dev/null "
             ">/dev/null 2>&1 & echo $! > %s; }", RL_PIDFILE);
    if (system(cmd) != 0) c->open_rc = CT_NOANSWER;
    rl_pid = 0;
    if ((fp = fopen(RL_PIDFILE, "r")) != NULL) { if (fscanf(fp, "%d", &rl_pid) != 1) rl_pid = 0; fclose(fp); }
    end = st_now_ms() + 30000;
    do {
        n = pgt_int(ADMIN, "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'ct_logical_rx' "
                    "AND state = 'streaming' AND sync_state IN ('sync', 'quorum')", NULL);
        if (n == 1) break;
        st_sleep_ms(50);
    } while (st_now_ms() < end);
    if (n != 1) { fprintf(stderr, "the logical walsender does not stream as sync\n"); c->open_rc = CT_NOANSWER; }
    if (c->open_rc == CT_NOANSWER) return;
    if (pg_side_open(f, &X, TABLE, c) != LDL_OK) c->open_rc = CT_NOANSWER;
}

static void pg_durability_teardown(void)
{
    uint64_t end;
    if (!RL_PIDFILE[0]) return;
    if (rl_pid > 0) kill(rl_pid, SIGTERM);
    end = st_now_ms() + 20000;
    do {   /* the slot can be dropped once its walsender is gone */
        if (pgt_int(ADMIN, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'ct_logical' AND active",
                    NULL) == 0) break;
        st_sleep_ms(50);
    } while (st_now_ms() < end);
    (void)pgt_exec(ADMIN, "SELECT pg_drop_replication_slot('ct_logical')");
    remove(RL_PIDFILE);
    RL_PIDFILE[0] = 0;
    rl_pid = 0;
    ST_CHECK(ha("start-standby") == 0 && ha("wait-sync") == 0, "%s", "the standby back after the durability case");
}

static const char *pg_open(ct_fx *f, int which, ct_client *c, ct_probe *p)
{
    switch (which < 0 ? -which : which) {
    case CT_FAKE_UNPROVEN:
        return "no fake of the PostgreSQL wire protocol: each answer is a prepared statement's reply checked "
               "for its exact shape (one row of the expected types; pg_hostile.c: another role's operators "
               "and functions never answer for the adapter)";
    case CT_FAKE_TREE:
        return "libpq reads a whole reply before the adapter sees it: the adapter bounds rows and NULLs per "
               "statement (pg_hostile.c), not libpq's buffer";
    case CT_FROZEN:
        if (!f->is_async)
            return "a frozen server still ACKs TCP and libpq has no read deadline: a synchronous call waits "
                   "until it resumes (the header's LIMITS; docs/postgres.md, riding out a frozen server); the "
                   "async view is bounded";
        c->open_rc = pg_side_open(f, &X, TABLE, c);
        if (c->open_rc != LDL_OK) { c->open_rc = CT_NOANSWER; return NULL; }
        frozen_pid = PQbackendPID(X.c);
        if (frozen_pid <= 0 || kill(frozen_pid, SIGSTOP) != 0) { frozen_pid = 0; c->open_rc = CT_NOANSWER; }
        return NULL;
    case CT_MISSING: {
        const char *cli = getenv("LDL_CONTRACT_CLI");
        char cmd[1200];
        int64_t n;
        int rc;
        if (!cli || !*cli)
            return "the adapter's init creates its table by design; set LDL_CONTRACT_CLI to check ldl-run --status";
        snprintf(cmd, sizeof cmd, "'%s' --pg \"$LDL_PG_CONNINFO\" --table ct_typo --status K >/dev/null 2>&1", cli);
        rc = system(cmd);
        rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
        n = pgt_int(ADMIN, "SELECT count(*) FROM pg_class WHERE relname LIKE 'ct_typo%'", NULL);
        p->created = n != 0;
        snprintf(p->why, sizeof p->why, "ldl-run --status --pg --table ct_typo exited %d; relations named ct_typo*: %lld",
                 rc, (long long)n);
        printf("       %s\n", p->why);
        c->open_rc = rc == 69 ? LDL_ESTORE : (rc == 0 ? LDL_OK : CT_NOANSWER);
        return NULL;
    }
    case CT_FOREIGN: {
        pg_side t;
        ct_client tc;
        memset(&tc, 0, sizeof tc);
        (void)pgt_exec(ADMIN, "DROP TABLE IF EXISTS ct_foreign");
        if (pg_side_open(f, &t, "ct_foreign", &tc) != LDL_OK) { c->open_rc = CT_NOANSWER; return NULL; }
        pg_side_close(&t);
        if (!pgt_exec(ADMIN, "GRANT INSERT, UPDATE, DELETE ON ct_foreign TO PUBLIC")) { c->open_rc = CT_NOANSWER; return NULL; }
        c->open_rc = pg_side_open(f, &X, "ct_foreign", c);
        return NULL;
    }
    case CT_DURABILITY:
        if (which < 0) return NULL;
        p->standbys = 0;                      /* the physical standby stopped: nothing to promote */
        if (f->is_async) {                    /* its view says whether it reports (no setup needed) */
            if (pg_side_open(f, &X, TABLE, c) != LDL_OK) c->open_rc = CT_NOANSWER;
            return NULL;
        }
        pg_durability_setup(f, c);
        return NULL;
    default:
        return "no such item";
    }
}

static void pg_close(ct_fx *f, int which, ct_client *c)
{
    (void)f; (void)c;
    if (which == CT_FROZEN && frozen_pid > 0) { kill(frozen_pid, SIGCONT); frozen_pid = 0; }
    pg_side_close(&X);
    if (which == CT_DURABILITY) pg_durability_teardown();
    if (which == CT_FOREIGN) (void)pgt_exec(ADMIN, "DROP TABLE IF EXISTS ct_foreign");
}

int main(void)
{
    ct_fx fx[2];
    const ct_fx *views[2];
    int v;
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    ADMIN = pgt_connect("");
    if (PQstatus(ADMIN) != CONNECTION_OK) { ST_CHECK(0, "admin connection"); return st_report(); }
    (void)pgt_exec(ADMIN, "SET client_min_messages = warning");
    (void)pgt_exec(ADMIN, "DROP TABLE IF EXISTS " TABLE);
    for (v = 0; v < 2; v++) {
        ct_fx *f = &fx[v];
        ct_fx_init(f, "pg", v, 0, pg_count, pg_open, pg_close);
        ST_CHECK(pg_side_open(f, &A, TABLE, &f->a) == LDL_OK, "%s", "client a");
        ST_CHECK(pg_side_open(f, &B, TABLE, &f->b) == LDL_OK, "%s", "client b");
        ct_run_view(f);
        pg_side_close(&A);
        pg_side_close(&B);
        views[v] = f;
    }
    PQfinish(ADMIN);
    return ct_report("pg", views, 2);
}
