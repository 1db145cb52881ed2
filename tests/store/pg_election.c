/* pg_election.c -- issue 12 (leader election) on a real PostgreSQL:
 *   owner     the owner stored with the lease and read back by inspect: synchronous,
 *             the non-blocking view's submit_owned then a synchronous inspect, and
 *             the unnamed (pooler) mode; a free, released or expired key answers 0;
 *             owner bytes validated and passed as a parameter; a grant without an
 *             owner hides the previous owner; a malformed inspect reply is
 *             LDL_ESTORE with nothing made up; owner columns of a wrong shape are
 *             refused at init.
 *   oldtable  a table created by v0.1 (three columns): plain locks and inspect work
 *             (owner ""), the ext has no acquire_owned / submit_owned, so a lock with
 *             an owner fails at ldl_lock_init; the documented ALTER turns owners on,
 *             and an ldl_pg initialised before it keeps working.
 *   rideout   every postgres process SIGSTOPped (less than the trust window) while
 *             the leader renews: the lease is kept with ride_out_ms, lost without.
 *             Synchronous store: the program bounds each call with a socket timeout
 *             (SIGALRM -> shutdown()) and reconnects without blocking; non-blocking
 *             view: the program drops a request older than 400 ms and rebinds a
 *             connection opened with PQconnectStart.
 *   campaign  three processes (two synchronous, one non-blocking) campaign for one key
 *             with owners; the leader is SIGKILLed and restarted, or SIGSTOPped past
 *             or within its TTL, round after round; then every process that lost is
 *             steered to lead again (the others step down). Each logs its trust
 *             windows [start, start + ttl - drift) on CLOCK_MONOTONIC; the parent
 *             checks that no two overlap, that fences rise at every takeover, that
 *             every loss is followed by a later lead of the same process, and that
 *             the owner inspect reported for a token is the process that logged it.
 * Run through tests/store/with_pg.sh (as root or as the server's user: it signals
 * the server's processes). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"
#include <dirent.h>
#include <sys/time.h>

#define T_OWN  "ldl_elect"
#define T_OLD  "ldl_elect_v01"
#define T_RIDE "ldl_elect_ride"
#define T_CAMP "ldl_elect_camp"
#define V01_CREATE(t) "CREATE TABLE " t " (key text PRIMARY KEY, token bigint NOT NULL " \
                      "CHECK (token >= 1), expires_at timestamptz NOT NULL)"

static uint64_t t_begin;
static void phase(const char *what)
{
    fprintf(stderr, "election: %s done at %llu ms\n", what, (unsigned long long)(st_now_ms() - t_begin));
}

/* ------------------------------------------------------------ owner / inspect */
static int inspect(ldl_store_ext *x, const char *key, ldl_holder *h)
{
    memset(h, 0x5a, sizeof *h);             /* nothing may survive from before */
    return ldl_store_inspect(x, key, h);
}

static int zeroed(const ldl_holder *h)
{
    return h->token == 0 && h->ttl_left_ms == 0 && h->owner[0] == '\0';
}

/* the desc every lock here starts from: the reference container, key, TTL, store */
static void desc_of(ldl_lock_desc *d, ldl_scope *root, ldl_scope *pool, const char *key, uint32_t ttl,
                    const ldl_store *s, const ldl_async_store *as)
{
    memset(d, 0, sizeof *d);
    ldl_scope_init(root, pool, 2);
    d->container = ldl_scope_container(root);
    d->key = key;
    d->ttl_ms = ttl;
    d->store = s;
    d->async_store = as;
}

static int lock_with(ldl_lock *l, ldl_scope *root, ldl_scope *pool, const char *key, uint32_t ttl,
                     const ldl_store *s, const ldl_async_store *as, const ldl_store_ext *x,
                     const char *owner)
{
    ldl_lock_desc d;
    desc_of(&d, root, pool, key, ttl, s, as);
    d.store_ext = x;
    d.owner = owner;
    return ldl_lock_init(l, &d);
}

/* apply the crafted reply of `sql` with the adapter's parser */
static int holder_of(PGconn *c, ldl_pg *pg, const char *sql, ldl_holder *h)
{
    PGresult *r = PQexec(c, sql);
    int rc = -9;
    memset(h, 0, sizeof *h);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK) rc = ldl__pg_holder(pg, r, h);
    else fprintf(stderr, "holder_of(%s): %s", sql, PQerrorMessage(c));
    PQclear(r);
    return rc;
}

static void test_owner(PGconn *c)
{
    ldl_pg pg, pu;
    ldl_store s;
    ldl_store_ext x, xu;
    ldl_holder h;
    ldl_scope root, pool[2];
    ldl_lock l;
    int64_t f, g, t = 0;
    char o63[64], o64[65];
    int rc;

    pgt_exec(c, "DROP TABLE IF EXISTS " T_OWN);
    ST_CHECK(ldl_pg_init(&pg, c, T_OWN) == LDL_OK, "init: %s", ldl_pg_why(&pg));
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM pg_attribute WHERE attrelid = '" T_OWN "'::regclass "
                     "AND NOT attisdropped AND attnum > 0", NULL) == 5, "a new table has 5 columns");
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM pg_attribute WHERE attrelid = '" T_OWN "'::regclass "
                     "AND NOT attnotnull AND ((attname = 'owner' AND atttypid = 'text'::regtype) OR "
                     "(attname = 'owner_token' AND atttypid = 'int8'::regtype))", NULL) == 2,
             "owner text and owner_token bigint, both nullable");
    s = ldl_pg_store(&pg);
    x = ldl_pg_ext(&pg);
    ST_CHECK(x.acquire_owned && x.inspect && !x.submit_owned && x.ctx == &pg, "ldl_pg_ext: acquire_owned + inspect");

    rc = inspect(&x, "never-used", &h);
    ST_CHECK(rc == 0 && zeroed(&h), "a key without a row is free: %d", rc);

    ST_CHECK(lock_with(&l, &root, pool, "k1", 5000, &s, NULL, &x, "node-a:4242") == LDL_OK, "lock: %s", ldl_lock_why(&l));
    ST_CHECK(ldl_lock_acquire(&l) == 1, "owned acquire: %s", ldl_pg_why(&pg));
    f = ldl_lock_fencing_token(&l);
    rc = inspect(&x, "k1", &h);
    ST_CHECK(rc == 1 && h.token == f && strcmp(h.owner, "node-a:4242") == 0 && h.ttl_left_ms >= 1 &&
             h.ttl_left_ms <= 5000, "inspect: %d token %lld (fence %lld) owner '%s' ttl_left %u", rc,
             (long long)h.token, (long long)f, h.owner, h.ttl_left_ms);
    ST_CHECK(pgt_int(c, "SELECT owner_token FROM " T_OWN " WHERE key = 'k1' AND owner = 'node-a:4242'", NULL) == f,
             "the row carries the owner and owner_token = the fence");
    ST_CHECK(ldl_lock_tick(&l) == 1 && inspect(&x, "k1", &h) == 1 && strcmp(h.owner, "node-a:4242") == 0,
             "a renew keeps the owner");
    ST_CHECK(ldl_lock_release(&l) == 1, "release");
    rc = inspect(&x, "k1", &h);
    ST_CHECK(rc == 0 && zeroed(&h), "a released key is free: %d", rc);
    ldl_lock_dispose(&l);

    /* a grant without an owner (a plain lock, as a v0.1 client's) hides the last owner */
    ST_CHECK(lock_with(&l, &root, pool, "k1", 5000, &s, NULL, NULL, NULL) == LDL_OK, "plain lock");
    ST_CHECK(ldl_lock_acquire(&l) == 1, "plain acquire");
    g = ldl_lock_fencing_token(&l);
    rc = inspect(&x, "k1", &h);
    ST_CHECK(rc == 1 && h.token == g && g > f && h.owner[0] == '\0',
             "after a plain grant: %d token %lld owner '%s' (want \"\")", rc, (long long)h.token, h.owner);
    ST_CHECK(ldl_lock_release(&l) == 1, "release");
    ldl_lock_dispose(&l);

    /* expired */
    rc = x.acquire_owned(x.ctx, "k2", 60, "short", &t);
    ST_CHECK(rc == 1 && t >= 1, "owned acquire, 60 ms: %d", rc);
    st_sleep_ms(150);
    rc = inspect(&x, "k2", &h);
    ST_CHECK(rc == 0 && zeroed(&h), "an expired lease is free: %d", rc);

    /* owner bytes: validated; passed as a parameter, stored verbatim */
    memset(o63, 'x', 63); o63[63] = '\0';
    memset(o64, 'y', 64); o64[64] = '\0';
    ST_CHECK(x.acquire_owned(x.ctx, "k3", 5000, "", &t) == LDL_EINVAL && t == 0, "empty owner: EINVAL");
    ST_CHECK(x.acquire_owned(x.ctx, "k3", 5000, "a\001b", &t) == LDL_EINVAL, "control byte: EINVAL");
    ST_CHECK(x.acquire_owned(x.ctx, "k3", 5000, "a\177", &t) == LDL_EINVAL, "DEL: EINVAL");
    ST_CHECK(x.acquire_owned(x.ctx, "k3", 5000, o64, &t) == LDL_EINVAL && strstr(ldl_pg_why(&pg), "owner"),
             "64 bytes: EINVAL (%s)", ldl_pg_why(&pg));
    ST_CHECK(pgt_int(c, "SELECT count(*) FROM " T_OWN " WHERE key = 'k3'", NULL) == 0, "nothing was sent");
    ST_CHECK(x.acquire_owned(x.ctx, "k3", 5000, o63, &t) == 1, "63 bytes: granted");
    ST_CHECK(inspect(&x, "k3", &h) == 1 && strcmp(h.owner, o63) == 0, "63 bytes read back");
    ST_CHECK(s.release(s.ctx, "k3", t) == 1, "release k3");
    ST_CHECK(x.acquire_owned(x.ctx, "k4", 5000, "x'); DROP TABLE " T_OWN "; --", &t) == 1, "quotes granted");
    ST_CHECK(inspect(&x, "k4", &h) == 1 && strcmp(h.owner, "x'); DROP TABLE " T_OWN "; --") == 0,
             "quotes stored verbatim: '%s'", h.owner);
    ST_CHECK(s.release(s.ctx, "k4", t) == 1, "release k4 (the table is still there)");
    ST_CHECK(x.acquire_owned(x.ctx, "k5", 5000, " ~nud-7", &t) == 1 &&
             inspect(&x, "k5", &h) == 1 && strcmp(h.owner, " ~nud-7") == 0, "printable ASCII owner read back");
    rc = x.acquire_owned(x.ctx, "k7", 5000, "n\xc5\x93ud", &g);
    ST_CHECK(rc == LDL_EINVAL && g == 0 && inspect(&x, "k7", &h) == 0, "a UTF-8 owner: EINVAL %d, nothing sent", rc);
    rc = x.acquire_owned(x.ctx, "k7", 5000, "csi\x9b" "2J", &g);
    ST_CHECK(rc == LDL_EINVAL && g == 0 && inspect(&x, "k7", &h) == 0, "a C1 owner: EINVAL %d", rc);

    /* what the table holds is checked before it is reported */
    ST_CHECK(pgt_exec(c, "UPDATE " T_OWN " SET owner = 'bad' || chr(1) WHERE key = 'k5'"), "control byte in the row");
    rc = inspect(&x, "k5", &h);
    ST_CHECK(rc == LDL_ESTORE && zeroed(&h), "an owner with a control byte: %d, nothing made up", rc);
    ST_CHECK(pgt_exec(c, "UPDATE " T_OWN " SET owner = repeat('z', 64) WHERE key = 'k5'"), "64-byte owner in the row");
    rc = inspect(&x, "k5", &h);
    ST_CHECK(rc == LDL_ESTORE && zeroed(&h), "a 64-byte owner: %d", rc);
    ST_CHECK(pgt_exec(c, "UPDATE " T_OWN " SET owner = repeat('z', 63) WHERE key = 'k5'"), "63-byte owner");
    ST_CHECK(inspect(&x, "k5", &h) == 1 && strlen(h.owner) == 63, "a 63-byte owner is reported");
    ST_CHECK(pgt_exec(c, "UPDATE " T_OWN " SET owner_token = owner_token + 1 WHERE key = 'k5'"), "owner_token moved");
    ST_CHECK(inspect(&x, "k5", &h) == 1 && h.token == t && h.owner[0] == '\0',
             "an owner written for another token is not reported ('%s')", h.owner);
    ST_CHECK(inspect(&x, "", &h) == LDL_EINVAL && x.inspect(x.ctx, "", &h) == LDL_EINVAL, "an empty key: EINVAL");

    /* the reply parser on crafted replies */
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 10::int8", &h) == -1, "two columns: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int4, 10::int8, 'x'::text", &h) == -1, "int4 token: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT NULL::int8, 10::int8, 'x'::text", &h) == -1, "NULL token: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 0::int8, 10::int8, 'x'::text", &h) == -1, "token 0: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT -3::int8, 10::int8, 'x'::text", &h) == -1, "negative token: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, NULL::int8, 'x'::text", &h) == -1, "NULL ms: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 10::int8, 'x'::varchar", &h) == -1, "varchar owner: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 10::int8, 'x'::text FROM generate_series(1, 2)", &h) == -1,
             "two rows: malformed");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 10::int8, 'x'::text WHERE false", &h) == 0, "no row: free");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 10::int8, NULL::text", &h) == 1 && h.token == 5 &&
             h.ttl_left_ms == 10 && h.owner[0] == '\0', "NULL owner: \"\"");
    ST_CHECK(holder_of(c, &pg, "SELECT 5::int8, 99999999999::int8, 'w'::text", &h) == 1 &&
             h.ttl_left_ms == UINT32_MAX && strcmp(h.owner, "w") == 0, "ms past UINT32_MAX: clamped");

    /* the unnamed (pooler) mode: the same two statements, sent as text */
    ST_CHECK(ldl_pg_init_ex(&pu, c, T_OWN, LDL_PG_UNNAMED) == LDL_OK, "unnamed init");
    xu = ldl_pg_ext(&pu);
    ST_CHECK(xu.acquire_owned && xu.acquire_owned(xu.ctx, "k6", 5000, "unnamed-1", &t) == 1 &&
             inspect(&xu, "k6", &h) == 1 && h.token == t && strcmp(h.owner, "unnamed-1") == 0,
             "unnamed: owned acquire + inspect (%s)", ldl_pg_why(&pu));
    ST_CHECK(inspect(&xu, "never-used", &h) == 0, "unnamed: free key");
}

/* pump a non-blocking view until the lock's acquire (poll) or release answers */
static int a_wait(ldl_pg_async *pa, ldl_lock *l, int rc, int release)
{
    uint64_t t0 = st_now_ms();
    while (rc == LDL_EINPROGRESS && st_now_ms() - t0 < 5000) {
        ldl_pg_async_pump(pa);
        st_sleep_ms(1);
        rc = release ? ldl_lock_release(l) : ldl_lock_poll(l);
    }
    return rc;
}

/* the non-blocking view's submit_owned, read back by a synchronous inspect */
static void test_owner_async(PGconn *c)
{
    PGconn *ac = pgt_connect("");
    ldl_pg pg, apg;
    ldl_pg_req reqs[4];
    ldl_pg_async pa;
    ldl_async_store as;
    ldl_store_ext x, ax;
    ldl_holder h;
    ldl_scope root, pool[2];
    ldl_lock l;
    int rc = 0;

    ST_CHECK(ldl_pg_init(&pg, c, T_OWN) == LDL_OK, "init (inspect side)");
    ST_CHECK(ldl_pg_init(&apg, ac, T_OWN) == LDL_OK && ldl_pg_async_init(&pa, &apg, reqs, 4) == LDL_OK,
             "async view: %s", ldl_pg_why(&apg));
    as = ldl_pg_async_store(&pa);
    ax = ldl_pg_async_ext(&pa);
    x = ldl_pg_ext(&pg);
    ST_CHECK(ax.submit_owned && !ax.acquire_owned && !ax.inspect && ax.ctx == &pa, "ldl_pg_async_ext: submit_owned");
    ST_CHECK(lock_with(&l, &root, pool, "ak1", 5000, NULL, &as, &ax, "pipelined-9") == LDL_OK, "lock: %s",
             ldl_lock_why(&l));
    rc = a_wait(&pa, &l, ldl_lock_acquire(&l), 0);
    ST_CHECK(rc == 1, "pipelined owned grant: %d (%s)", rc, ldl_pg_why(&apg));
    rc = inspect(&x, "ak1", &h);
    ST_CHECK(rc == 1 && h.token == ldl_lock_fencing_token(&l) && strcmp(h.owner, "pipelined-9") == 0,
             "sync inspect of the pipelined grant: %d token %lld owner '%s'", rc, (long long)h.token, h.owner);
    rc = a_wait(&pa, &l, ldl_lock_release(&l), 1);
    ST_CHECK(rc == 1 && inspect(&x, "ak1", &h) == 0, "released: %d", rc);
    ldl_lock_dispose(&l);
    PQfinish(ac);
}

/* ------------------------------------------------------------ a table from v0.1 */
static void refused_shape(PGconn *c, const char *cols, const char *what)
{
    char sql[512];
    ldl_pg pg;
    int rc;
    pgt_exec(c, "DROP TABLE IF EXISTS ldl_elect_bad");
    snprintf(sql, sizeof sql, "CREATE TABLE ldl_elect_bad (key text PRIMARY KEY, token bigint NOT NULL, "
             "expires_at timestamptz NOT NULL%s)", cols);
    ST_CHECK(pgt_exec(c, sql), "create %s", what);
    rc = ldl_pg_init(&pg, c, "ldl_elect_bad");
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_pg_why(&pg), "columns") != NULL, "%s refused: %d (%s)", what, rc,
             ldl_pg_why(&pg));
}

static void test_old_table(PGconn *c)
{
    PGconn *ac = pgt_connect("");
    ldl_pg old, now, apg;
    ldl_pg_req reqs[2];
    ldl_pg_async pa;
    ldl_store s;
    ldl_store_ext x, ax;
    ldl_holder h;
    pgt_lock t;
    ldl_scope root, pool[2];
    ldl_lock l;
    int64_t f, tok = 0;
    int rc;

    pgt_exec(c, "DROP TABLE IF EXISTS " T_OLD);
    ST_CHECK(pgt_exec(c, V01_CREATE(T_OLD)), "the v0.1 table");
    ST_CHECK(ldl_pg_init(&old, c, T_OLD) == LDL_OK, "init accepts it: %s", ldl_pg_why(&old));
    s = ldl_pg_store(&old);
    x = ldl_pg_ext(&old);
    ST_CHECK(!x.acquire_owned && !x.submit_owned && x.inspect, "ext: inspect only");
    ST_CHECK(pgt_lock_init(&t, &old, "v1", 5000, 1000) == 0, "plain lock");
    ST_CHECK(ldl_lock_acquire(&t.lock) == 1 && ldl_lock_tick(&t.lock) == 1, "plain acquire + renew");
    f = ldl_lock_fencing_token(&t.lock);
    rc = inspect(&x, "v1", &h);
    ST_CHECK(rc == 1 && h.token == f && h.owner[0] == '\0' && h.ttl_left_ms >= 1 && h.ttl_left_ms <= 5000,
             "inspect on a v0.1 table: %d token %lld owner '%s'", rc, (long long)h.token, h.owner);
    ST_CHECK(ldl_lock_release(&t.lock) == 1 && inspect(&x, "v1", &h) == 0, "release; free");
    ldl_lock_dispose(&t.lock);
    rc = lock_with(&l, &root, pool, "v1", 5000, &s, NULL, &x, "node-b");
    ST_CHECK(rc == LDL_EINVAL && strstr(ldl_lock_why(&l), "acquire_owned") != NULL,
             "a lock with an owner fails at init: %d (%s)", rc, ldl_lock_why(&l));
    ldl_lock_dispose(&l);
    rc = ldl__pg_acquire_owned(&old, "v1", 5000, "node-b", &tok);
    ST_CHECK(rc == LDL_EUNSUPPORTED && tok == 0 && strstr(ldl_pg_why(&old), "ALTER TABLE") != NULL,
             "the owned acquire itself: %d (%s)", rc, ldl_pg_why(&old));
    ST_CHECK(ldl_pg_init(&apg, ac, T_OLD) == LDL_OK && ldl_pg_async_init(&pa, &apg, reqs, 2) == LDL_OK, "async view");
    ax = ldl_pg_async_ext(&pa);
    ST_CHECK(!ax.submit_owned && !ax.acquire_owned && !ax.inspect, "async ext: nothing on a v0.1 table");

    /* init still refuses what is not the adapter's */
    refused_shape(c, ", owner text", "owner without owner_token");
    refused_shape(c, ", owner_token bigint", "owner_token without owner");
    refused_shape(c, ", owner integer, owner_token bigint", "an integer owner");
    refused_shape(c, ", owner text NOT NULL, owner_token bigint", "a NOT NULL owner");
    refused_shape(c, ", owner text, owner_token integer", "an integer owner_token");
    refused_shape(c, ", owner text, owner_token bigint, extra text", "a sixth column");
    refused_shape(c, ", holder text, owner_token bigint", "another name");

    /* the documented opt-in */
    ST_CHECK(pgt_exec(c, "ALTER TABLE " T_OLD " ADD COLUMN owner text, ADD COLUMN owner_token bigint"), "ALTER");
    ST_CHECK(ldl_pg_init(&now, c, T_OLD) == LDL_OK, "init after the ALTER: %s", ldl_pg_why(&now));
    x = ldl_pg_ext(&now);
    ST_CHECK(x.acquire_owned != NULL, "owners on");
    rc = x.acquire_owned(x.ctx, "v2", 100, "after-alter", &tok);
    ST_CHECK(rc == 1 && inspect(&x, "v2", &h) == 1 && h.token == tok && strcmp(h.owner, "after-alter") == 0,
             "owned grant after the ALTER: %d owner '%s'", rc, h.owner);
    st_sleep_ms(200);
    /* the ldl_pg initialised before the ALTER (as a v0.1 client) takes the expired key */
    ST_CHECK(pgt_lock_init(&t, &old, "v2", 5000, 1000) == 0 && ldl_lock_acquire(&t.lock) == 1,
             "the older ldl_pg still grants: %s", ldl_pg_why(&old));
    rc = inspect(&x, "v2", &h);
    ST_CHECK(rc == 1 && h.token == ldl_lock_fencing_token(&t.lock) && h.token > tok && h.owner[0] == '\0',
             "its grant shows no owner (not the previous one): %d '%s'", rc, h.owner);
    ST_CHECK(ldl_lock_release(&t.lock) == 1, "release");
    ldl_lock_dispose(&t.lock);
    PQfinish(ac);
}

/* ------------------------------------------------------------ freezing the server */
/* every process of the server: the postmaster (data/postmaster.pid next to
   $LDL_PG_CTL) and its children (from /proc); answers how many */
static int pg_pids(pid_t *out, int max)
{
    char path[600], line[256];
    const char *ctl = getenv("LDL_PG_CTL");
    const char *slash = ctl ? strrchr(ctl, '/') : NULL;
    FILE *f;
    pid_t pm = 0;
    DIR *d;
    struct dirent *e;
    int n = 0;
    if (!slash) return 0;
    snprintf(path, sizeof path, "%.*s/data/postmaster.pid", (int)(slash - ctl), ctl);
    f = fopen(path, "r");
    if (!f) return 0;
    if (fgets(line, sizeof line, f)) pm = (pid_t)atoi(line);
    fclose(f);
    if (pm <= 0) return 0;
    out[n++] = pm;
    d = opendir("/proc");
    if (!d) return n;
    while ((e = readdir(d)) != NULL && n < max) {
        char buf[512], *rp;
        int ppid = 0;
        char st;
        size_t got;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f) continue;
        got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = '\0';
        rp = strrchr(buf, ')');              /* the command may hold spaces and parens */
        if (rp && sscanf(rp + 1, " %c %d", &st, &ppid) == 2 && ppid == (int)pm)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

typedef struct freeze {
    pid_t pids[64];
    int n;
    uint32_t ms;
} freeze;

/* a child of its own: SIGSTOP every pid, 's', wait ms (less when the test
   sends a byte, or dies: EOF), SIGCONT every pid, 'c'. So nothing stays
   stopped when the test is killed meanwhile. */
static int freezer(void *arg, int in, int out)
{
    freeze *z = (freeze *)arg;
    int i;
    for (i = 0; i < z->n; i++) kill(z->pids[i], SIGSTOP);
    st_send(out, 's');
    (void)st_recv(in, z->ms);
    for (i = z->n; i-- > 0;) kill(z->pids[i], SIGCONT);
    st_send(out, 'c');
    return 0;
}

static int freeze_start(st_child *ch, freeze *z)
{
    if (st_fork(ch, freezer, z) != 0) return -1;
    if (st_recv(ch->from_child, 5000) != 's') { st_join(ch, 5000); return -1; }
    return 0;
}

/* thaw now (if still frozen) and reap; 0 when it ran to its end */
static int freeze_end(st_child *ch)
{
    st_send(ch->to_child, 't');
    return st_join(ch, 5000);
}

/* one process (a campaigner) for ms */
static void freeze_pid(pid_t pid, uint32_t ms)
{
    st_child ch;
    freeze z;
    z.pids[0] = pid;
    z.n = 1;
    z.ms = ms;
    if (freeze_start(&ch, &z) == 0) (void)st_recv(ch.from_child, ms + 5000);
    ST_CHECK(freeze_end(&ch) == 0, "freeze %d for %u ms", (int)pid, ms);
}

static int start_freeze(st_child *ch, freeze *z, PGconn *c, uint32_t ms)
{
    int i, ours = 0;
    z->n = pg_pids(z->pids, 64);
    z->ms = ms;
    for (i = 0; i < z->n; i++) ours |= z->pids[i] == (pid_t)PQbackendPID(c);
    ST_CHECK(z->n >= 3 && ours, "the server's processes (%d), our backend %d among them", z->n, PQbackendPID(c));
    if (z->n < 3 || !ours) return -1;
    return freeze_start(ch, z);
}

/* ------------------------------------------------------------ ride-out, synchronous */
/* The synchronous store with a socket timeout: a frozen server still ACKs TCP, so
   libpq would wait until it resumes. A program bounds the call itself: SIGALRM
   shuts the socket down (libpq then answers "server closed the connection"), and
   a bad connection is reset with PQresetStart/PQresetPoll under the same bound. */
#define WD_MS 400
static volatile sig_atomic_t wd_fd = -1;
static void wd_alarm(int sig)
{
    int fd = (int)wd_fd;
    (void)sig;
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
}
static void wd_set(int fd, uint32_t ms)      /* ms 0: disarm */
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)(ms / 1000);
    it.it_value.tv_usec = (suseconds_t)((ms % 1000) * 1000);
    if (ms == 0) wd_fd = -1;                /* first: a late SIGALRM finds nothing to cut */
    setitimer(ITIMER_REAL, &it, NULL);
    if (ms != 0) wd_fd = fd;
}

/* one step of a non-blocking connect or reset: PQconnectPoll / PQresetPoll
   only once the socket is ready for what the last step asked */
static PostgresPollingStatusType nb_step(PGconn *c, PostgresPollingStatusType st, int reset, int wait_ms)
{
    struct pollfd pf;
    pf.fd = PQsocket(c);
    pf.events = (short)(st == PGRES_POLLING_READING ? POLLIN : POLLOUT);
    pf.revents = 0;
    if (pf.fd < 0 || poll(&pf, 1, wait_ms) != 1) return st;
    return reset ? PQresetPoll(c) : PQconnectPoll(c);
}

typedef struct bstore {
    PGconn *c;
    ldl_store in;
    int resets;
} bstore;

static int b_pre(bstore *b)
{
    if (PQstatus(b->c) != CONNECTION_OK) {
        uint64_t end = st_now_ms() + WD_MS;
        PostgresPollingStatusType st = PGRES_POLLING_WRITING;
        b->resets++;
        if (!PQresetStart(b->c)) return -1;
        while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED && st_now_ms() < end)
            st = nb_step(b->c, st, 1, 5);
        if (st != PGRES_POLLING_OK) return -1;
    }
    wd_set(PQsocket(b->c), WD_MS);
    return 0;
}
/* one bounded call: kind LDL_OP_* */
static int b_call(void *ctx, int kind, const char *key, int64_t tok, uint32_t ttl, int64_t *tok_out)
{
    bstore *b = (bstore *)ctx;
    int rc;
    if (tok_out) *tok_out = 0;
    if (b_pre(b) != 0) return LDL_ESTORE;
    rc = kind == LDL_OP_ACQUIRE ? b->in.acquire(b->in.ctx, key, ttl, tok_out)
       : kind == LDL_OP_RENEW   ? b->in.renew(b->in.ctx, key, tok, ttl)
                                : b->in.release(b->in.ctx, key, tok);
    wd_set(-1, 0);
    return rc;
}
static int b_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *tok)
{
    return b_call(ctx, LDL_OP_ACQUIRE, key, 0, ttl, tok);
}
static int b_renew(void *ctx, const char *key, int64_t tok, uint32_t ttl)
{
    return b_call(ctx, LDL_OP_RENEW, key, tok, ttl, NULL);
}
static int b_release(void *ctx, const char *key, int64_t tok)
{
    return b_call(ctx, LDL_OP_RELEASE, key, tok, 0, NULL);
}

typedef struct rider {
    ldl_scope root, pool[2];
    ldl_lock lock;
    int renew_errors, lost;
} rider;

static void r_event(void *user, const ldl_event *ev)
{
    rider *r = (rider *)user;
    if (ev->kind == LDL_EV_RENEW_ERROR) r->renew_errors++;
    if (ev->kind == LDL_EV_LOST) r->lost++;
}

#define R_TTL 6000
#define R_HB 2000
#define R_RIDE 250
#define R_FREEZE 1200

static int rider_init(rider *r, const ldl_store *s, const ldl_async_store *as, const char *key, int ride)
{
    ldl_lock_desc d;
    memset(r, 0, sizeof *r);
    desc_of(&d, &r->root, r->pool, key, R_TTL, s, as);
    d.heartbeat_ms = R_HB;
    d.ride_out_ms = ride ? R_RIDE : 0;
    d.on_event = r_event;
    d.user = r;
    return ldl_lock_init(&r->lock, &d);
}

static void ride_sync(int ride)
{
    PGconn *c = pgt_connect(""), *h = NULL;
    ldl_pg pg, hp;
    bstore b;
    ldl_store s;
    ldl_store_ext hx;
    ldl_holder hd;
    rider r;
    st_child fz;
    freeze z;
    const char *key = ride ? "sync-ride" : "sync-plain";
    uint64_t t0, cont_at = 0;
    uint32_t renewals;
    int64_t f;
    int rc, always = 1, thawed = 0;

    ST_CHECK(ldl_pg_init(&pg, c, T_RIDE) == LDL_OK, "init: %s", ldl_pg_why(&pg));
    b.c = c;
    b.in = ldl_pg_store(&pg);
    b.resets = 0;
    s.acquire = b_acquire; s.renew = b_renew; s.release = b_release; s.ctx = &b;
    ST_CHECK(rider_init(&r, &s, NULL, key, ride) == LDL_OK, "lock");
    ST_CHECK(ldl_lock_acquire(&r.lock) == 1, "grant");
    f = ldl_lock_fencing_token(&r.lock);
    renewals = ldl_lock_counters(&r.lock)->renewals;
    if (start_freeze(&fz, &z, c, R_FREEZE) != 0) { ldl_lock_dispose(&r.lock); PQfinish(c); return; }
    rc = ldl_lock_tick(&r.lock);               /* a renew that meets the frozen server */
    if (ride)
        ST_CHECK(rc == 1 && ldl_lock_held(&r.lock) && ldl_lock_raw_answer(&r.lock) < 0 && r.renew_errors >= 1 &&
                 ldl_lock_counters(&r.lock)->store_errors >= 1,
                 "sync ride-out: the renew error keeps the lease (%d, %s, raw %d)", rc,
                 ldl_state_name(ldl_lock_state(&r.lock)), ldl_lock_raw_answer(&r.lock));
    else
        ST_CHECK(rc == 0 && ldl_lock_state(&r.lock) == LDL_LOST &&
                 ldl_lock_reason(&r.lock) == LDL_REASON_STORE_ERROR && r.lost == 1,
                 "sync, no ride-out: the renew error loses the lease (%d, %s, %s)", rc,
                 ldl_state_name(ldl_lock_state(&r.lock)), ldl_reason_name(ldl_lock_reason(&r.lock)));
    t0 = st_now_ms();
    for (;;) {
        int p = ldl_lock_poll(&r.lock);
        if (ride && p != 1) always = 0;
        if (!thawed && st_recv(fz.from_child, 10) == 'c') { thawed = 1; cont_at = st_now_ms(); }
        if (thawed && (!ride || ldl_lock_counters(&r.lock)->renewals > renewals)) break;
        if (st_now_ms() - t0 > 10000) break;
        if (thawed) st_sleep_ms(10);
    }
    ST_CHECK(st_join(&fz, 5000) == 0 && thawed, "the server was frozen %u ms and thawed", R_FREEZE);
    if (ride) {
        ST_CHECK(always && ldl_lock_held(&r.lock) && ldl_lock_fencing_token(&r.lock) == f &&
                 ldl_lock_counters(&r.lock)->renewals > renewals && r.lost == 0,
                 "sync ride-out: held throughout, renewed after the thaw (%llu ms after SIGCONT), same fence "
                 "(held %d, renewals %u, errors %d, resets %d)", (unsigned long long)(st_now_ms() - cont_at),
                 ldl_lock_held(&r.lock), ldl_lock_counters(&r.lock)->renewals, r.renew_errors, b.resets);
        h = pgt_connect("");
        ST_CHECK(ldl_pg_init(&hp, h, T_RIDE) == LDL_OK, "inspect side");
        hx = ldl_pg_ext(&hp);
        rc = inspect(&hx, key, &hd);
        ST_CHECK(rc == 1 && hd.token == f, "the server still has the lease: %d token %lld", rc, (long long)hd.token);
        ST_CHECK(ldl_lock_release(&r.lock) == 1, "release");
        PQfinish(h);
    } else {
        ST_CHECK(ldl_lock_release(&r.lock) == 1, "the lost lease is handed back after the thaw (its TTL had not run out)");
    }
    ldl_lock_dispose(&r.lock);
    PQfinish(c);
}

/* ------------------------------------------------------------ ride-out, non-blocking */
static void ride_async(int ride)
{
    PGconn *c = pgt_connect_nb("", 5000), *nc = NULL, *h;
    ldl_pg pg, hp;
    ldl_pg_req reqs[4];
    ldl_pg_async pa;
    ldl_async_store as;
    ldl_store_ext hx;
    ldl_holder hd;
    rider r;
    st_child fz;
    freeze z;
    const char *key = ride ? "async-ride" : "async-plain";
    const char *ci = getenv("LDL_PG_CONNINFO");
    PostgresPollingStatusType cst = PGRES_POLLING_WRITING;
    uint64_t t0, pend = 0, conn_at = 0, cont_at = 0;
    uint32_t renewals;
    int64_t f;
    int rc, always = 1, thawed = 0, drops = 0, rebinds = 0, dead = 0;

    ST_CHECK(c && ldl_pg_init(&pg, c, T_RIDE) == LDL_OK && ldl_pg_async_init(&pa, &pg, reqs, 4) == LDL_OK,
             "async view");
    if (!c) return;
    as = ldl_pg_async_store(&pa);
    ST_CHECK(rider_init(&r, NULL, &as, key, ride) == LDL_OK, "lock");
    rc = a_wait(&pa, &r.lock, ldl_lock_acquire(&r.lock), 0);
    ST_CHECK(rc == 1, "grant");
    f = ldl_lock_fencing_token(&r.lock);
    renewals = ldl_lock_counters(&r.lock)->renewals;
    if (start_freeze(&fz, &z, c, R_FREEZE) != 0) { ldl_lock_dispose(&r.lock); PQfinish(c); return; }
    ST_CHECK(ldl_lock_tick(&r.lock) == 1 && ldl_lock_pending(&r.lock), "renew in flight to the frozen server");
    t0 = st_now_ms();
    for (;;) {
        uint64_t now = st_now_ms();
        if (!dead) ldl_pg_async_pump(&pa);
        rc = ldl_lock_poll(&r.lock);
        if (ride && rc != 1) always = 0;
        if (!ride && ldl_lock_state(&r.lock) == LDL_LOST && thawed && !dead) break;
        /* the program's policy: a request unanswered for 400 ms means the link is gone */
        if (!dead && ldl_lock_pending(&r.lock)) {
            if (!pend) pend = now;
            else if (now - pend > WD_MS) {
                ldl_pg_async_drop(&pa);
                PQfinish(c);
                c = NULL;
                dead = 1;
                drops++;
                pend = 0;
            }
        } else {
            pend = 0;
        }
        if (dead) {                         /* reconnect, never blocking */
            if (!nc) {
                char buf[1024];
                snprintf(buf, sizeof buf, "%s", ci ? ci : "");
                nc = PQconnectStart(buf);
                cst = PGRES_POLLING_WRITING;
                conn_at = now;
            } else {
                cst = nb_step(nc, cst, 0, 0);
                if (cst == PGRES_POLLING_OK) {
                    ST_CHECK(ldl_pg_async_rebind(&pa, nc) == LDL_OK, "rebind: %s", ldl_pg_why(&pg));
                    c = nc;
                    nc = NULL;
                    dead = 0;
                    rebinds++;
                } else if (cst == PGRES_POLLING_FAILED || now - conn_at > 600) {
                    PQfinish(nc);
                    nc = NULL;
                }
            }
        }
        if (!thawed && st_recv(fz.from_child, 2) == 'c') { thawed = 1; cont_at = st_now_ms(); }
        if (thawed && ride && !dead && ldl_lock_counters(&r.lock)->renewals > renewals) break;
        if (st_now_ms() - t0 > 10000) break;
        if (thawed) st_sleep_ms(2);
    }
    ST_CHECK(st_join(&fz, 5000) == 0 && thawed, "the server was frozen %u ms and thawed", R_FREEZE);
    ST_CHECK(drops >= 1, "the program dropped the link (%d)", drops);
    if (ride) {
        ST_CHECK(always && ldl_lock_held(&r.lock) && ldl_lock_fencing_token(&r.lock) == f &&
                 ldl_lock_counters(&r.lock)->renewals > renewals && r.renew_errors >= 1 && r.lost == 0,
                 "non-blocking ride-out: held throughout, renewed on the new link %llu ms after SIGCONT "
                 "(errors %d, drops %d, rebinds %d)", (unsigned long long)(st_now_ms() - cont_at),
                 r.renew_errors, drops, rebinds);
        h = pgt_connect("");
        ST_CHECK(ldl_pg_init(&hp, h, T_RIDE) == LDL_OK, "inspect side");
        hx = ldl_pg_ext(&hp);
        rc = inspect(&hx, key, &hd);
        ST_CHECK(rc == 1 && hd.token == f, "the server still has the lease: %d", rc);
        PQfinish(h);
    } else {
        ST_CHECK(ldl_lock_state(&r.lock) == LDL_LOST && ldl_lock_reason(&r.lock) == LDL_REASON_STORE_ERROR &&
                 r.lost == 1, "non-blocking, no ride-out: lost with STORE_ERROR (%s, %s)",
                 ldl_state_name(ldl_lock_state(&r.lock)), ldl_reason_name(ldl_lock_reason(&r.lock)));
    }
    /* hand the lease back over a live link */
    t0 = st_now_ms();
    while (dead && st_now_ms() - t0 < 5000) {
        if (!nc) { nc = PQconnectStart(ci ? ci : ""); cst = PGRES_POLLING_WRITING; }
        else if ((cst = nb_step(nc, cst, 0, 2)) == PGRES_POLLING_OK) {
            ldl_pg_async_rebind(&pa, nc);
            c = nc; nc = NULL; dead = 0;
        } else if (cst == PGRES_POLLING_FAILED) { PQfinish(nc); nc = NULL; }
        st_sleep_ms(2);
    }
    rc = a_wait(&pa, &r.lock, ldl_lock_release(&r.lock), 1);
    ST_CHECK(rc == 1, "release = %d", rc);
    ldl_lock_dispose(&r.lock);
    if (nc) PQfinish(nc);
    if (c) PQfinish(c);
}

/* ------------------------------------------------------------ campaign */
#define C_KEY "leader"
#define C_TTL 1000
#define C_HB 300
#define C_DRIFT 20
#define C_W (C_TTL - C_DRIFT)
#define C_PROCS 3
#define C_ROUNDS 12

static char c_dir[256];
static int c_slot, c_logfd = -1, c_bad;
static st_child c_kids[C_PROCS];
static uint64_t c_last;              /* the lock's last clock read */
static int64_t c_granted;

static uint64_t c_clock(void *ctx)
{
    (void)ctx;
    c_last = st_now_ms();
    return c_last;
}

static void c_log(const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && write(c_logfd, buf, (size_t)n) != n) c_bad |= 1;   /* one write: one whole line */
}

/* runs inside the lock, right after the clock read that applied the answer:
   start = that read - latency (the clock read just before the store call) */
static void c_event(void *user, const ldl_event *ev)
{
    (void)user;
    if (ev->kind == LDL_EV_GRANTED) {
        c_granted = ev->token;
        c_log("G %d %lld %llu %llu\n", c_slot, (long long)ev->token, (unsigned long long)c_last,
              (unsigned long long)(c_last - ev->latency_ms));
    } else if (ev->kind == LDL_EV_RENEWED) {
        c_log("R %d %lld %llu\n", c_slot, (long long)ev->token, (unsigned long long)(c_last - ev->latency_ms));
    } else if (ev->kind == LDL_EV_LOST) {
        c_log("L %d %lld %llu %d\n", c_slot, (long long)ev->token, (unsigned long long)st_now_ms(), ev->reason);
    }
}

static void c_leading(void *user, int64_t fence)
{
    (void)user;
    if (fence != c_granted) c_bad |= 2;   /* on_leading carries the fence just granted */
}

/* one campaigner: 'd' step down, 'a' compete again, 'q' quit */
static int campaigner(void *arg, int in, int out)
{
    char path[300], owner[16];
    int async = c_slot == 2, want = 0;
    uint64_t claimed = 0;
    PGconn *c = async ? pgt_connect_nb("", 5000) : pgt_connect("");
    ldl_pg pg;
    ldl_pg_req reqs[4];
    ldl_pg_async pa;
    ldl_store s;
    ldl_async_store as;
    ldl_store_ext x;
    ldl_scope root, pool[2];
    ldl_lock l;
    ldl_lock_desc d;
    int j;
    (void)arg;
    for (j = 0; j < C_PROCS; j++)           /* the others' pipes: so each sees EOF when the test dies */
        if (j != c_slot && c_kids[j].pid > 0) { close(c_kids[j].to_child); close(c_kids[j].from_child); }
    snprintf(path, sizeof path, "%s/slot%d.log", c_dir, c_slot);
    c_logfd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (c_logfd < 0 || !c || ldl_pg_init(&pg, c, T_CAMP) != LDL_OK) return 10;
    if (async) {
        if (ldl_pg_async_init(&pa, &pg, reqs, 4) != LDL_OK) return 11;
        as = ldl_pg_async_store(&pa);
        x = ldl_pg_async_ext(&pa);
    } else {
        s = ldl_pg_store(&pg);
        x = ldl_pg_ext(&pg);
    }
    snprintf(owner, sizeof owner, "p%d", c_slot);
    desc_of(&d, &root, pool, C_KEY, C_TTL, async ? NULL : &s, async ? &as : NULL);
    d.heartbeat_ms = C_HB;
    d.drift_ms = C_DRIFT;
    d.clock.now_ms = c_clock;
    d.retry.base_ms = 20;
    d.retry.cap_ms = 160;
    d.campaign = 1;
    d.on_leading = c_leading;
    d.on_event = c_event;
    d.owner = owner;
    d.store_ext = &x;
    if (ldl_lock_init(&l, &d) != LDL_OK) { fprintf(stderr, "campaigner: %s\n", ldl_lock_why(&l)); return 12; }
    (void)ldl_lock_acquire(&l);
    st_send(out, 'r');
    for (;;) {
        struct pollfd pf;
        uint32_t due;
        int r;
        if (async) ldl_pg_async_pump(&pa);
        if (ldl_lock_poll(&l) == 1) {        /* the lock's own claim: trusted until now + valid_ms */
            uint32_t v = ldl_lock_valid_ms(&l);
            if (v > 0 && c_last + v != claimed) {
                claimed = c_last + v;
                c_log("V %d %lld %llu\n", c_slot, (long long)ldl_lock_fencing_token(&l),
                      (unsigned long long)claimed);
            }
        }
        if (want && ldl_lock_acquire(&l) != LDL_ESTATE) want = 0;
        due = ldl_lock_due_in_ms(&l);
        pf.fd = in; pf.events = POLLIN; pf.revents = 0;
        r = poll(&pf, 1, async ? 1 : (int)(due < 5 ? due : 5));
        if (r == 1) {
            char cmd = 0;
            ssize_t n = read(in, &cmd, 1);
            if (n <= 0 || cmd == 'q') {
                if (ldl_lock_held(&l))
                    c_log("E %d %lld %llu\n", c_slot, (long long)ldl_lock_fencing_token(&l),
                          (unsigned long long)st_now_ms());
                ldl_lock_dispose(&l);
                if (async) ldl_pg_async_pump(&pa);
                PQfinish(c);
                close(c_logfd);
                return n <= 0 ? 13 : c_bad;
            }
            if (cmd == 'd') {               /* step down: trust ends before the release is sent */
                if (ldl_lock_held(&l))
                    c_log("E %d %lld %llu\n", c_slot, (long long)ldl_lock_fencing_token(&l),
                          (unsigned long long)st_now_ms());
                (void)ldl_lock_release(&l);
            } else if (cmd == 'a') {
                want = 1;
            }
        }
    }
}

typedef struct lease {
    int64_t tok;
    int slot;
    uint64_t apply, start, end;
    uint64_t claim;                  /* the latest deadline the lock claimed (V) */
    char how;                        /* 'L' lost, 'E' stepped down / quit, 'K' killed, 0 open */
} lease;

#define C_MAXL 512
static lease c_leases[C_MAXL];
static int c_nl, c_parse_bad;
static int64_t c_killed[64];
static int c_nkilled;

static lease *c_find(int64_t tok)
{
    int i;
    for (i = 0; i < c_nl; i++) if (c_leases[i].tok == tok) return &c_leases[i];
    return NULL;
}

static void c_read_logs(void)
{
    int s, i;
    c_nl = 0;
    c_parse_bad = 0;
    for (s = 0; s < C_PROCS; s++) {
        char path[300], line[200];
        FILE *f;
        snprintf(path, sizeof path, "%s/slot%d.log", c_dir, s);
        f = fopen(path, "r");
        if (!f) continue;
        while (fgets(line, sizeof line, f)) {
            char k;
            int slot, reason;
            long long tok;
            unsigned long long a, b;
            lease *e;
            if (!strchr(line, '\n')) break;          /* a line still being written */
            k = line[0];
            if (k == 'G' && sscanf(line, "G %d %lld %llu %llu", &slot, &tok, &a, &b) == 4 && c_nl < C_MAXL) {
                if (c_find(tok)) { c_parse_bad++; continue; }
                e = &c_leases[c_nl++];
                e->tok = tok; e->slot = slot; e->apply = a; e->start = b; e->end = UINT64_MAX; e->how = 0;
                e->claim = 0;
            } else if (k == 'R' && sscanf(line, "R %d %lld %llu", &slot, &tok, &a) == 3) {
                e = c_find(tok);
                if (!e || e->slot != slot || a < e->start) c_parse_bad++;
                else e->start = a;
            } else if (k == 'V' && sscanf(line, "V %d %lld %llu", &slot, &tok, &a) == 3) {
                e = c_find(tok);
                if (!e || e->slot != slot) c_parse_bad++;
                else if (a > e->claim) e->claim = a;
                if (e && a > e->start + C_W) {
                    c_parse_bad++;
                    fprintf(stderr, "p%d claimed token %lld until %llu, past start + ttl - drift = %llu\n", slot,
                            tok, a, (unsigned long long)(e->start + C_W));
                }
            } else if ((k == 'L' && sscanf(line, "L %d %lld %llu %d", &slot, &tok, &a, &reason) == 4) ||
                       (k == 'E' && sscanf(line, "E %d %lld %llu", &slot, &tok, &a) == 3)) {
                e = c_find(tok);
                if (!e || e->slot != slot) { c_parse_bad++; continue; }
                if (a < e->end) e->end = a;
                if (!e->how) e->how = k;
            } else {
                c_parse_bad++;
            }
        }
        fclose(f);
    }
    for (i = 0; i < c_nl; i++) {
        int j;
        for (j = 0; j < c_nkilled; j++)
            if (c_leases[i].tok == c_killed[j] && !c_leases[i].how) c_leases[i].how = 'K';
    }
}

/* the slot's last lease ended by a loss (or a kill): it owes a lead */
static int c_owes(int slot, int64_t *last_tok)
{
    int i;
    const lease *last = NULL;
    for (i = 0; i < c_nl; i++)
        if (c_leases[i].slot == slot && (!last || c_leases[i].apply > last->apply)) last = &c_leases[i];
    if (last_tok) *last_tok = last ? last->tok : 0;
    return last && (last->how == 'L' || last->how == 'K');
}

static int c_ever_lost(int slot)
{
    int i;
    for (i = 0; i < c_nl; i++)
        if (c_leases[i].slot == slot && (c_leases[i].how == 'L' || c_leases[i].how == 'K')) return 1;
    return 0;
}

static int64_t c_sample_tok[256];
static int c_sample_slot[256], c_nsample;

/* the holder by the server (inspect): a token >= min (and owned by `slot` when >= 0) */
static int c_wait_holder(ldl_store_ext *x, int64_t min, int slot, uint32_t ms, int *who, int64_t *tok)
{
    uint64_t end = st_now_ms() + ms;
    ldl_holder h;
    do {
        if (ldl_store_inspect(x, C_KEY, &h) == 1 && h.token >= min && h.owner[0] == 'p' &&
            h.owner[1] >= '0' && h.owner[1] < '0' + C_PROCS && h.owner[2] == '\0') {
            int s = h.owner[1] - '0';
            if (c_nsample < 256 && (c_nsample == 0 || c_sample_tok[c_nsample - 1] != h.token)) {
                c_sample_tok[c_nsample] = h.token;
                c_sample_slot[c_nsample++] = s;
            }
            if (slot < 0 || s == slot) { *who = s; *tok = h.token; return 1; }
        }
        st_sleep_ms(5);
    } while (st_now_ms() < end);
    return 0;
}

/* the holder by the server, once its process logged the grant (it trusts it) */
static int c_wait_leader(ldl_store_ext *x, int64_t min, int slot, uint32_t ms, int *who, int64_t *tok)
{
    uint64_t end = st_now_ms() + ms, now, seen;
    for (;;) {
        now = st_now_ms();
        if (!c_wait_holder(x, min, slot, (uint32_t)(end > now ? end - now : 1), who, tok)) break;
        seen = st_now_ms();
        do {
            lease *e;
            c_read_logs();
            e = c_find(*tok);
            if (e && e->slot == *who) return 1;
            st_sleep_ms(5);
        } while (st_now_ms() - seen < 1000);
        min = *tok + 1;                     /* a grant its process did not keep */
        if (st_now_ms() >= end) break;
    }
    return 0;
}


static int c_start(int slot)
{
    c_slot = slot;
    if (st_fork(&c_kids[slot], campaigner, NULL) != 0) return -1;
    return st_recv(c_kids[slot].from_child, 10000) == 'r' ? 0 : -1;
}

static void c_kill(int slot, int64_t tok)
{
    kill(c_kids[slot].pid, SIGKILL);
    (void)st_join(&c_kids[slot], 5000);          /* killed: -1 */
    if (c_nkilled < 64) c_killed[c_nkilled++] = tok;
    ST_CHECK(c_start(slot) == 0, "restart p%d", slot);
}

static void test_campaign(PGconn *c)
{
    ldl_pg pg;
    ldl_store_ext x;
    int64_t prev = 0, tok = 0;
    int i, s, who = -1, kills = 0, stops = 0, takeovers = 0, steers = 0, overlaps = 0, fences = 0;
    int led[C_PROCS] = {0};
    st_child fzc;
    freeze fz;
    uint64_t maxend = 0;

    pgt_exec(c, "DROP TABLE IF EXISTS " T_CAMP);
    ST_CHECK(ldl_pg_init(&pg, c, T_CAMP) == LDL_OK, "init: %s", ldl_pg_why(&pg));
    x = ldl_pg_ext(&pg);
    ST_CHECK(st_tmpdir(c_dir, sizeof c_dir, "ldl-pg-election") == 0, "tmpdir");
    for (s = 0; s < C_PROCS; s++) ST_CHECK(c_start(s) == 0, "campaigner p%d started", s);

    /* the chaos: the leader is killed, frozen past its TTL or frozen briefly */
    for (i = 0; i < C_ROUNDS; i++) {
        int act = i % 3;
        if (!c_wait_leader(&x, prev, -1, 10000, &who, &tok)) {
            ST_CHECK(0, "round %d: no leader within 10 s (last token %lld)", i, (long long)prev);
            break;
        }
        if (act == 0) {
            c_kill(who, tok);
            kills++;
            takeovers++;
            prev = tok + 1;
        } else {
            freeze_pid(c_kids[who].pid, act == 1 ? C_TTL + 150 : C_TTL / 5);
            stops++;
            takeovers += act == 1;
            prev = act == 1 ? tok + 1 : tok;
        }
    }
    phase("campaign chaos");

    /* every process that lost leads again; one that never lost is made to lose
       first. The current leader steps down ('d') while the third process is
       frozen, so the one that owes a lead is the only one competing. */
    for (i = 0; i < 16 && !st_failed(); i++) {
        int need = -1, lost_never = 0, third;
        c_read_logs();
        for (s = 0; s < C_PROCS && need < 0; s++) {
            if (c_owes(s, NULL)) need = s;
            else if (!c_ever_lost(s)) { need = s; lost_never = 1; }
        }
        if (need < 0) break;
        if (!c_wait_leader(&x, 0, -1, 5000, &who, &tok)) { ST_CHECK(0, "settle: no leader"); break; }
        if (who == need && lost_never) { c_kill(who, tok); kills++; takeovers++; continue; }
        if (who == need) continue;          /* it won by itself meanwhile: look again */
        third = 3 - who - need;
        fz.pids[0] = c_kids[third].pid;
        fz.n = 1;
        fz.ms = 8000;
        if (freeze_start(&fzc, &fz) != 0) { ST_CHECK(0, "settle: freeze p%d", third); break; }
        st_send(c_kids[who].to_child, 'd');
        ST_CHECK(c_wait_leader(&x, tok + 1, need, 5000, &s, &tok), "settle: p%d leads after p%d steps down",
                 need, who);
        (void)freeze_end(&fzc);
        st_send(c_kids[who].to_child, 'a');
        steers++;
        takeovers++;
    }
    phase("campaign settle");
    for (s = 0; s < C_PROCS; s++) st_send(c_kids[s].to_child, 'q');
    for (s = 0; s < C_PROCS; s++) {
        int rc = st_join(&c_kids[s], 10000);
        ST_CHECK(rc == 0, "campaigner p%d exited cleanly (%d: 1 log write, 2 on_leading fence)", s, rc);
    }

    /* the logs */
    c_read_logs();
    ST_CHECK(c_parse_bad == 0 && c_nl >= takeovers + 1, "logs: %d leases for %d forced takeovers, %d bad lines",
             c_nl, takeovers, c_parse_bad);
    for (i = 1; i < c_nl; i++) {            /* by the instant each lease was applied */
        lease e = c_leases[i];
        int j = i - 1;
        while (j >= 0 && (c_leases[j].apply > e.apply ||
                          (c_leases[j].apply == e.apply && c_leases[j].tok > e.tok))) {
            c_leases[j + 1] = c_leases[j];
            j--;
        }
        c_leases[j + 1] = e;
    }
    for (i = 0; i < c_nl; i++) {
        lease *e = &c_leases[i];
        uint64_t end = e->start + C_W > e->claim ? e->start + C_W : e->claim;
        if (e->end < end) end = e->end;
        led[e->slot]++;
        if (i > 0 && e->apply < maxend) {
            overlaps++;
            fprintf(stderr, "overlap: p%d token %lld trusted from %llu, an earlier lease until %llu\n", e->slot,
                    (long long)e->tok, (unsigned long long)e->apply, (unsigned long long)maxend);
        }
        if (i > 0 && e->tok <= c_leases[i - 1].tok) {
            fences++;
            fprintf(stderr, "fence: token %lld (p%d) after %lld\n", (long long)e->tok, e->slot,
                    (long long)c_leases[i - 1].tok);
        }
        if (!e->how) {
            fprintf(stderr, "lease %lld of p%d never ended\n", (long long)e->tok, e->slot);
            c_parse_bad++;
        }
        if (end > maxend) maxend = end;
    }
    ST_CHECK(overlaps == 0, "no two trust windows overlap (%d leases)", c_nl);
    ST_CHECK(fences == 0, "every takeover has a higher fence");
    ST_CHECK(c_parse_bad == 0, "every lease ended (lost, stepped down, quit or killed); no deadline claimed past "
             "start + ttl - drift");
    for (s = 0; s < C_PROCS; s++)
        ST_CHECK(c_ever_lost(s) && !c_owes(s, NULL) && led[s] >= 2,
                 "p%d lost and led again afterwards (led %d times)", s, led[s]);
    for (i = 0, s = 0; i < c_nsample; i++) {   /* a token no log has: a grant nobody kept */
        lease *e = c_find(c_sample_tok[i]);
        s += e != NULL;
        ST_CHECK(!e || e->slot == c_sample_slot[i], "inspect named p%d for token %lld; the log says p%d",
                 c_sample_slot[i], (long long)c_sample_tok[i], e ? e->slot : -1);
    }
    ST_CHECK(s >= takeovers, "inspect saw the owner of %d logged leases", s);
    fprintf(stderr, "campaign: %d leases (p0 %d, p1 %d, p2 %d), %d kills, %d freezes, %d hand-overs, "
            "%d inspect samples\n", c_nl, led[0], led[1], led[2], kills, stops, steers, c_nsample);
    for (s = 0; s < C_PROCS; s++) {
        char path[300];
        snprintf(path, sizeof path, "%s/slot%d.log", c_dir, s);
        unlink(path);
    }
    rmdir(c_dir);
}

int main(void)
{
    PGconn *c;
    struct sigaction sa;

    st_ignore_sigpipe();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wd_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    t_begin = st_now_ms();
    c = pgt_connect("");
    ST_CHECK(PQstatus(c) == CONNECTION_OK, "connect");
    if (st_failed()) return st_report();
    pgt_exec(c, "SET client_min_messages = warning");

    test_owner(c);
    test_owner_async(c);
    phase("owner");
    test_old_table(c);
    phase("v0.1 table");
    pgt_exec(c, "DROP TABLE IF EXISTS " T_RIDE);
    ride_sync(1);
    ride_sync(0);
    phase("sync ride-out");
    ride_async(1);
    ride_async(0);
    phase("non-blocking ride-out");
    test_campaign(c);
    phase("campaign");
    PQfinish(c);
    return st_report();
}
