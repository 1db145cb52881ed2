/* pg_durability.c -- ldl_pg_check_durability (adapters/lite_di_lock_pg.h, DURABILITY)
 * against a real primary and a real streaming standby (issue 20). Every answer comes
 * from server settings made for real (ALTER SYSTEM + reload, SET, a stopped standby,
 * a role without pg_read_all_stats), never from a stub:
 *   sync       a sync standby streaming, defaults           CRASH|FAILOVER
 *              synchronous_commit remote_apply              CRASH|FAILOVER
 *              synchronous_commit remote_write / local      CRASH only, why names it
 *              synchronous_commit off                       0, why names it twice
 *   fsync      fsync = off                                  FAILOVER only, why "fsync"
 *   fpw        full_page_writes = off                       FAILOVER only, why "full_page_writes"
 *   async      synchronous_standby_names = ''               CRASH only, why "asynchronous"
 *   nostandby  the standby stopped (names still set)        CRASH only, why "no synchronous standby";
 *              an acquire (non-blocking view) stays pending until the standby streams again
 *   logical    the standby stopped, a logical walsender (pg_recvlogical) streaming
 *              as "sync" under synchronous_standby_names '*'  CRASH only, why "no
 *              synchronous standby": nothing it feeds can be promoted (issue 31)
 *   rights     a role without pg_read_all_stats             LDL_ESTORE, why "pg_monitor";
 *              the same role with synchronous_commit local  CRASH (the rows are not needed);
 *              GRANT pg_monitor                             CRASH|FAILOVER
 *   standby    connected to the standby                     LDL_ESTORE, why "standby"
 *   busy       inside a caller's transaction / conn down    LDL_ESTORE, nothing sent
 * Run as: LDL_PG_WAL_LEVEL=logical tests/store/with_pg_standby.sh sync ./pg_durability
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define C LDL_PG_SURVIVES_CRASH
#define F LDL_PG_SURVIVES_FAILOVER

/* "$LDL_PG_HA verb"; 0 on success */
static int ha(const char *verb)
{
    char buf[512];
    const char *h = getenv("LDL_PG_HA");
    if (!h || !*h) { fprintf(stderr, "LDL_PG_HA is not set: run me through tests/store/with_pg_standby.sh\n"); exit(2); }
    snprintf(buf, sizeof buf, "%s %s", h, verb);
    fflush(stdout);
    fflush(stderr);
    return system(buf) == 0 ? 0 : -1;
}

/* one text value of a query; "" on error */
static void text1(PGconn *c, const char *sql, char *out, size_t n)
{
    PGresult *r = PQexec(c, sql);
    out[0] = 0;
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 1)
        snprintf(out, n, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
}

/* ALTER SYSTEM SET name = value on the primary (admin), reload, and wait until the
   session of `c` sees it (a reload reaches each backend asynchronously) */
static int set_system(PGconn *admin, PGconn *c, const char *name, const char *value)
{
    char sql[256], got[128];
    uint64_t end = st_now_ms() + 20000;
    snprintf(sql, sizeof sql, "ALTER SYSTEM SET %s = '%s'", name, value);
    if (!pgt_exec(admin, sql) || !pgt_exec(admin, "SELECT pg_reload_conf()")) return 0;
    snprintf(sql, sizeof sql, "SELECT current_setting('%s')", name);
    do {
        text1(c, sql, got, sizeof got);
        if (strcmp(got, value) == 0) return 1;
        st_sleep_ms(20);
    } while (st_now_ms() < end);
    fprintf(stderr, "set_system: %s still '%s', want '%s'\n", name, got, value);
    return 0;
}

static int check(ldl_pg *p, char *why, size_t n)
{
    int rc = ldl_pg_check_durability(p, why, n);
    printf("  check = %d: %s\n", rc, why);
    return rc;
}

static void test_settings(PGconn *admin)
{
    PGconn *c = pgt_connect("");
    ldl_pg p;
    char why[1024];
    int rc;
    ST_CHECK(ldl_pg_init(&p, c, "ldl_dur") == LDL_OK, "init: %s", ldl_pg_why(&p));

    puts("sync: a synchronous standby streaming, defaults");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F) && strstr(why, "crash: yes") && strstr(why, "failover: yes"), "sync: %d %s", rc, why);

    ST_CHECK(pgt_exec(c, "SET synchronous_commit = remote_apply"), "%s", "set remote_apply");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F), "remote_apply: %d %s", rc, why);

    ST_CHECK(pgt_exec(c, "SET synchronous_commit = remote_write"), "%s", "set remote_write");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "remote_write"), "remote_write: %d %s", rc, why);

    ST_CHECK(pgt_exec(c, "SET synchronous_commit = local"), "%s", "set local");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "synchronous_commit is local"), "local: %d %s", rc, why);

    ST_CHECK(pgt_exec(c, "SET synchronous_commit = off"), "%s", "set off");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == 0 && strstr(why, "crash: no; synchronous_commit is off") &&
             strstr(why, "failover: no; synchronous_commit is off"), "off: %d %s", rc, why);
    ST_CHECK(pgt_exec(c, "RESET synchronous_commit"), "%s", "reset");

    /* a why shorter than the text: truncated, terminated, nothing past it */
    {
        char small[12];
        memset(small, 'x', sizeof small);
        rc = ldl_pg_check_durability(&p, small, 10);
        ST_CHECK(rc == (C | F) && strlen(small) == 9 && small[10] == 'x', "short why: %d", rc);
        ST_CHECK(ldl_pg_check_durability(&p, NULL, 0) == (C | F), "%s", "why NULL");
    }

    puts("fsync: fsync = off");
    ST_CHECK(set_system(admin, c, "fsync", "off"), "%s", "fsync off");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == F && strstr(why, "fsync is off"), "fsync off: %d %s", rc, why);
    ST_CHECK(set_system(admin, c, "fsync", "on"), "%s", "fsync on");

    puts("fpw: full_page_writes = off");
    ST_CHECK(set_system(admin, c, "full_page_writes", "off"), "%s", "fpw off");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == F && strstr(why, "full_page_writes is off"), "fpw off: %d %s", rc, why);
    ST_CHECK(set_system(admin, c, "full_page_writes", "on"), "%s", "fpw on");

    puts("async: synchronous_standby_names = ''");
    ST_CHECK(set_system(admin, c, "synchronous_standby_names", ""), "%s", "names empty");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "asynchronous"), "async: %d %s", rc, why);
    ST_CHECK(set_system(admin, c, "synchronous_standby_names", "*"), "%s", "names *");
    ST_CHECK(ha("wait-sync") == 0, "%s", "sync again");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F), "sync again: %d %s", rc, why);

    puts("nostandby: the standby stopped");
    ST_CHECK(ha("stop-standby") == 0, "%s", "stop standby");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "no synchronous standby is streaming"), "no standby: %d %s", rc, why);
    {   /* the price: a grant's commit waits for a synchronous standby (non-blocking view) */
        PGconn *ac = pgt_connect("");
        static ldl_pg_req reqs[8];
        ldl_pg ap;
        ldl_pg_async pa;
        ldl_async_store as;
        pgt_alock l;
        uint64_t end;
        int ok = ldl_pg_init(&ap, ac, "ldl_dur") == LDL_OK &&
                 ldl_pg_async_init(&pa, &ap, reqs, 8) == LDL_OK;
        ST_CHECK(ok, "%s", "async view");
        as = ldl_pg_async_store(&pa);
        ST_CHECK(ok && pgt_alock_init(&l, &as, "wait", 60000, 0) == 0, "%s", "lock");
        ST_CHECK(ok && ldl_lock_acquire(&l.lock) == LDL_EINPROGRESS, "%s", "acquire submitted");
        end = st_now_ms() + 1500;
        while (ok && st_now_ms() < end) { (void)ldl_pg_async_pump(&pa); (void)ldl_lock_poll(&l.lock); st_sleep_ms(5); }
        ST_CHECK(ldl_lock_pending(&l.lock) && ldl_lock_state(&l.lock) == LDL_ACQUIRING,
                 "no standby: the grant waits (state %d)", ldl_lock_state(&l.lock));
        ST_CHECK(ha("start-standby") == 0 && ha("wait-sync") == 0, "%s", "standby back");
        end = st_now_ms() + 50000;
        while (ok && ldl_lock_pending(&l.lock) && st_now_ms() < end) {
            (void)ldl_pg_async_pump(&pa); (void)ldl_lock_poll(&l.lock); st_sleep_ms(5);
        }
        ST_CHECK(ldl_lock_state(&l.lock) == LDL_HELD && ldl_lock_fencing_token(&l.lock) >= 1,
                 "standby back: the waiting grant arrives (state %d)", ldl_lock_state(&l.lock));
        while (ldl_lock_release(&l.lock) == LDL_EINPROGRESS && st_now_ms() < end + 5000) {
            (void)ldl_pg_async_pump(&pa); st_sleep_ms(2);
        }
        ldl_lock_dispose(&l.lock);
        (void)ldl_pg_async_drop(&pa);
        PQfinish(ac);
    }
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F), "standby back: %d %s", rc, why);

    puts("busy: inside a transaction block of the caller's, then the connection down");
    ST_CHECK(pgt_exec(c, "BEGIN"), "%s", "begin");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == LDL_ESTORE && strstr(why, "unknown") && strstr(why, "transaction"), "in tx: %d %s", rc, why);
    ST_CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS, "%s", "the caller's transaction untouched");
    ST_CHECK(pgt_exec(c, "ROLLBACK"), "%s", "rollback");
    {
        char sql[96];
        snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", PQbackendPID(c));
        ST_CHECK(pgt_exec(admin, sql), "%s", "terminate");
        st_sleep_ms(200);
        rc = check(&p, why, sizeof why);
        ST_CHECK(rc == LDL_ESTORE && strstr(why, "unknown"), "conn down: %d %s", rc, why);
    }
    PQfinish(c);
}

static void test_rights(PGconn *admin)
{
    static const char *const setup[] = {
        "SET client_min_messages = warning",
        "DROP SCHEMA IF EXISTS dur CASCADE",
        "DROP ROLE IF EXISTS ldl_dur",
        "CREATE ROLE ldl_dur LOGIN",
        "CREATE SCHEMA dur AUTHORIZATION ldl_dur",
        NULL };
    PGconn *c;
    ldl_pg p;
    char why[1024];
    int rc;
    puts("rights: a role without pg_read_all_stats");
    ST_CHECK(pgt_exec_all(admin, setup), "%s", "role setup");
    c = pgt_connect("user=ldl_dur");
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "%s", "connect as ldl_dur");
    ST_CHECK(ldl_pg_init(&p, c, "dur.t") == LDL_OK, "init as ldl_dur: %s", ldl_pg_why(&p));
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == LDL_ESTORE && strstr(why, "hidden") && strstr(why, "pg_monitor") &&
             strstr(why, "crash: yes"), "hidden: %d %s", rc, why);
    ST_CHECK(pgt_exec(c, "SET synchronous_commit = local"), "%s", "local");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "synchronous_commit is local") && strstr(why, "hidden") &&
             !strstr(why, "no synchronous standby"), "local needs no rows: %d %s", rc, why);
    ST_CHECK(pgt_exec(c, "RESET synchronous_commit"), "%s", "reset");
    {   /* and the adapter itself works without the right */
        ldl_store s = ldl_pg_store(&p);
        int64_t t = 0;
        ST_CHECK(s.acquire(s.ctx, "k", 5000, &t) == 1 && s.release(s.ctx, "k", t) == 1, "%s",
                 "grants without pg_monitor");
    }
    ST_CHECK(pgt_exec(admin, "GRANT pg_monitor TO ldl_dur"), "%s", "grant");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F), "with pg_monitor: %d %s", rc, why);
    PQfinish(c);
}

static void test_standby(void)
{
    char ci[256], port[32];
    FILE *f;
    PGconn *c;
    ldl_pg p;
    char why[1024];
    int rc;
    puts("standby: connected to the standby");
    f = popen("$LDL_PG_HA standby-port", "r");
    port[0] = 0;
    if (f) { if (!fgets(port, sizeof port, f)) port[0] = 0; pclose(f); }
    port[strcspn(port, "\n")] = 0;
    ST_CHECK(port[0] != 0, "%s", "standby port");
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%s user=ldl dbname=postgres connect_timeout=3", port);
    c = PQconnectdb(ci);
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "connect standby: %s", PQerrorMessage(c));
    /* the table exists there (replicated), so init finds it; it cannot write */
    rc = ldl_pg_init(&p, c, "ldl_dur");
    if (rc == LDL_OK) {
        rc = check(&p, why, sizeof why);
        ST_CHECK(rc == LDL_ESTORE && strstr(why, "standby"), "on standby: %d %s", rc, why);
    } else {
        /* init refused there: then check refuses too (not initialised) */
        ST_CHECK(ldl_pg_check_durability(&p, why, sizeof why) == LDL_EINVAL, "standby init %d: %s", rc,
                 ldl_pg_why(&p));
    }
    PQfinish(c);
}

/* a logical walsender is no standby (issue 31): with the physical standby stopped and
   pg_recvlogical streaming as a "sync" walsender, the failover bit must not be set */
static void test_logical(PGconn *admin)
{
    PGconn *c = pgt_connect("");
    ldl_pg p;
    char why[1024], got[64], cmd[1024], pidfile[256];
    const char *tmp = getenv("LDL_TEST_DIR") ? getenv("LDL_TEST_DIR") : "/tmp";
    uint64_t end;
    int rc, pid = 0;
    FILE *f;
    puts("logical: the standby stopped, a logical walsender streaming as sync");
    text1(admin, "SELECT current_setting('wal_level')", got, sizeof got);
    ST_CHECK(strcmp(got, "logical") == 0, "wal_level is '%s': run me with LDL_PG_WAL_LEVEL=logical", got);
    ST_CHECK(ldl_pg_init(&p, c, "ldl_dur") == LDL_OK, "init: %s", ldl_pg_why(&p));
    ST_CHECK(ha("stop-standby") == 0, "%s", "stop standby");
    snprintf(pidfile, sizeof pidfile, "%s/ldl_recvlogical.%ld.pid", tmp, (long)getpid());
    snprintf(cmd, sizeof cmd,
             "port=$($LDL_PG_HA primary-port) && rl=$(ls /usr/lib/postgresql/*/bin/pg_recvlogical | tail -n 1) && "
             "{ \"$rl\" -d \"host=127.0.0.1 port=$port user=ldl dbname=postgres application_name=ldl_logical_rx\" "
             "--slot ldl_dur_logical --create-slot --if-not-exists --start -s 1 -f /dev/null "
             ">/dev/null 2>&1 & echo $! > %s; }", pidfile);
    fflush(stdout);
    ST_CHECK(system(cmd) == 0, "%s", "pg_recvlogical started");
    if ((f = fopen(pidfile, "r")) != NULL) { if (fscanf(f, "%d", &pid) != 1) pid = 0; fclose(f); }
    ST_CHECK(pid > 0, "%s", "pg_recvlogical's pid");
    end = st_now_ms() + 30000;
    do {
        text1(admin, "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'ldl_logical_rx' "
              "AND state = 'streaming' AND sync_state IN ('sync', 'quorum')", got, sizeof got);
        if (strcmp(got, "1") == 0) break;
        st_sleep_ms(50);
    } while (st_now_ms() < end);
    ST_CHECK(strcmp(got, "1") == 0, "the logical walsender streams as sync (%s)", got);
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == C && strstr(why, "no synchronous standby is streaming"),
             "logical walsender: %d %s (want CRASH only: it is no standby)", rc, why);
    if (pid > 0) kill(pid, SIGTERM);
    end = st_now_ms() + 20000;
    do {   /* the slot is dropped once its walsender is gone */
        text1(admin, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'ldl_dur_logical' AND active", got, sizeof got);
        if (strcmp(got, "0") == 0) break;
        st_sleep_ms(50);
    } while (st_now_ms() < end);
    ST_CHECK(pgt_exec(admin, "SELECT pg_drop_replication_slot('ldl_dur_logical')"), "%s", "drop the logical slot");
    remove(pidfile);
    ST_CHECK(ha("start-standby") == 0 && ha("wait-sync") == 0, "%s", "standby back");
    rc = check(&p, why, sizeof why);
    ST_CHECK(rc == (C | F), "standby back: %d %s", rc, why);
    PQfinish(c);
}

int main(void)
{
    PGconn *admin;
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!getenv("LDL_PG_STANDBY_MODE") || strcmp(getenv("LDL_PG_STANDBY_MODE"), "sync") != 0) {
        fprintf(stderr, "pg_durability: run me through tests/store/with_pg_standby.sh sync\n");
        return 2;
    }
    admin = pgt_connect("");
    ST_CHECK(PQstatus(admin) == CONNECTION_OK, "%s", "admin connection");
    test_settings(admin);
    test_logical(admin);
    test_rights(admin);
    test_standby();
    PQfinish(admin);
    return st_report();
}
