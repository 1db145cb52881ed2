/* pg_failover.c -- fences across an unclean PostgreSQL failover (issue 20, item 2).
 *
 * Run through tests/store/with_pg_standby.sh sync|async: a primary and a streaming
 * standby on loopback, reached through ONE multi-host conninfo
 * (host=127.0.0.1,127.0.0.1 port=A,B target_session_attrs=read-write). Two clients
 * run lock lifecycles (acquire -> hold a few frames -> release, a fresh lock each
 * time, as a new process would) the whole time:
 *   - this process, through the non-blocking view (ldl_pg_async): NKEYS locks
 *     pipelined on one connection; when the link fails it does what the adapter's
 *     docs say: ldl_pg_async_drop, PQfinish, a new connection opened with
 *     PQconnectStart/PQconnectPoll on the same multi-host conninfo, then
 *     ldl_pg_async_rebind;
 *   - a forked child, through the synchronous view (ldl_pg_store) on its own keys,
 *     calling PQreset on the same multi-host conninfo when the server went away.
 * Each round: lifecycles run; on a "paused" round the primary's walsender is
 *   SIGSTOPped first ($LDL_PG_HA pause-link) and lifecycles go on until 30 grants
 *   were acknowledged after the pause or 1.5 s passed (asynchronous replication
 *   acknowledges them; synchronous replication makes them wait), so the standby
 *   really lacks the tail; on a "natural" round nothing is paused. Then, with
 *   requests in flight on both clients, the primary is frozen and SIGKILLed
 *   ($LDL_PG_HA kill-primary), the standby promoted ($LDL_PG_HA promote), a new
 *   standby built from it ($LDL_PG_HA rebuild), and lifecycles go on until every
 *   key was granted twice more.
 * Every grant a client was told about (the adapter answered 1 and the lock held)
 * is recorded per key, in order. A grant whose token is not above every earlier
 * grant of its key is counted: "repeated" when that token was granted before,
 * "regressed" otherwise.
 * What is required follows from the deployment (LDL_PG_STANDBY_MODE and
 * LDL_PG_SYNC_COMMIT, both set by with_pg_standby.sh), and ldl_pg_check_durability
 * must say the same before every round:
 *   safe     sync with synchronous_commit on or remote_apply: the check answers
 *            CRASH|FAILOVER, and 0 repeated and 0 regressed fences are required;
 *   unsafe   async, or sync with synchronous_commit local or off: the check
 *            answers without FAILOVER, and on every paused round the tail
 *            acknowledged during the pause must be granted again after the
 *            failover (repeats > 0: the risk the docs state is real);
 *   (remote_write: the check answers without FAILOVER, the counts are only
 *            printed: the standby has the WAL in its OS, which a kill of the
 *            primary alone does not lose.)
 * The counts are printed per 100 unclean failovers, for paused and for natural
 * rounds. Every key and the child must be granted after every failover (the test
 * saw each failover through). Env: LDL_FAILOVER_ROUNDS (default 4, alternating
 * paused and natural); LDL_FAILOVER_EXPECT=safe|unsafe overrides the requirement
 * (LDL_PG_SYNC_COMMIT=local with LDL_FAILOVER_EXPECT=safe must fail: the gate can).
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/pg_common.h"

#define TABLE     "ldl_failover"
#define NKEYS     12          /* the non-blocking view's keys: f0 .. f11 */
#define CKEYS     4           /* the child's keys: s0 .. s3 */
#define NALL      (NKEYS + CKEYS)
#define TTL_MS    3000
#define MAXG      40000       /* grants recorded per key */
#define MAXROUNDS 1000

typedef struct grant { int64_t token; uint64_t at; } grant;
typedef struct keylog { grant g[MAXG]; size_t n; } keylog;
static keylog logs[NALL];

typedef struct rec { int32_t key; int32_t pad; int64_t token; uint64_t at; } rec;

static const char *mode;
static char recpath[512];

/* "$LDL_PG_HA verb"; 0 on success */
static int ha(const char *verb)
{
    char buf[512];
    const char *h = getenv("LDL_PG_HA");
    int rc;
    if (!h || !*h) {
        fprintf(stderr, "LDL_PG_HA is not set: run me through tests/store/with_pg_standby.sh\n");
        exit(2);
    }
    snprintf(buf, sizeof buf, "%s %s", h, verb);
    fflush(stdout);
    fflush(stderr);
    rc = system(buf);
    if (rc != 0) fprintf(stderr, "ha %s: exit %d\n", verb, rc);
    return rc == 0 ? 0 : -1;
}

static void log_grant(int key, int64_t token, uint64_t at)
{
    keylog *l = &logs[key];
    if (l->n < MAXG) { l->g[l->n].token = token; l->g[l->n].at = at; l->n++; }
}

/* ------------------------------------------------------------ the child: sync view */
static volatile sig_atomic_t child_stop;

static int child_main(void *arg, int in, int out)
{
    PGconn *c;
    ldl_pg pg;
    int fd, k = 0, inited = 0;
    uint64_t grants = 0, errors = 0, resets = 0;
    (void)arg;
    (void)out;
    fd = open(recpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) { perror("child: open"); return 3; }
    c = pgt_connect("");
    for (;;) {
        struct pollfd pf;
        pf.fd = in; pf.events = POLLIN; pf.revents = 0;
        if (poll(&pf, 1, 0) > 0) break;              /* 'q' or EOF: stop */
        if (PQstatus(c) != CONNECTION_OK) {
            PQreset(c);                              /* the multi-host conninfo again */
            resets++;
            if (PQstatus(c) != CONNECTION_OK) { st_sleep_ms(50); continue; }
        }
        if (!inited) {
            if (ldl_pg_init(&pg, c, TABLE) != LDL_OK) { st_sleep_ms(50); continue; }
            inited = 1;
        }
        {
            pgt_lock t;
            char key[16];
            snprintf(key, sizeof key, "s%d", k);
            if (pgt_lock_init(&t, &pg, key, TTL_MS, 0) != 0) return 4;
            if (ldl_lock_acquire(&t.lock) == 1) {
                rec r;
                memset(&r, 0, sizeof r);
                r.key = NKEYS + k;
                r.token = ldl_lock_fencing_token(&t.lock);
                r.at = st_now_ms();
                if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) return 5;
                grants++;
                (void)ldl_lock_release(&t.lock);
            } else {
                errors++;
            }
            ldl_lock_dispose(&t.lock);
        }
        k = (k + 1) % CKEYS;
    }
    printf("  child (synchronous view): %llu grants, %llu failed acquires, %llu PQreset\n",
           (unsigned long long)grants, (unsigned long long)errors, (unsigned long long)resets);
    close(fd);
    PQfinish(c);
    return 0;
}

/* ------------------------------------------------------------ this process: async view */
enum { S_IDLE, S_ACQ, S_HELD, S_REL };
typedef struct slot {
    pgt_alock l;
    int st, live, hold;
    char key[16];
} slot;

static ldl_pg pg;
static ldl_pg_async pa;
static ldl_pg_req reqs[4 * NKEYS + 8];
static ldl_async_store as;
static slot slots[NKEYS];
static int linkdown;
static PGconn *cur;                  /* the view's connection (ours to PQfinish) */
static uint64_t next_connect, reconnects, rounds_granted[NKEYS];
static unsigned rnd = 12345u;

static unsigned rand_next(void) { rnd = rnd * 1103515245u + 12345u; return (rnd >> 16) & 0x7fff; }

static void slot_finish(slot *s)
{
    ldl_lock_dispose(&s->l.lock);
    s->live = 0;
    s->st = S_IDLE;
}

static void slot_step(int i)
{
    slot *s = &slots[i];
    int rc;
    switch (s->st) {
    case S_IDLE:
        if (pgt_alock_init(&s->l, &as, s->key, TTL_MS, 0) != 0) exit(3);
        s->live = 1;
        rc = ldl_lock_acquire(&s->l.lock);
        if (rc == LDL_EINPROGRESS) { s->st = S_ACQ; return; }
        if (rc != 1) { slot_finish(s); return; }
        /* fall through: granted inside the call */
        s->st = S_ACQ;
        /* FALLTHROUGH */
    case S_ACQ:
        (void)ldl_lock_poll(&s->l.lock);
        if (ldl_lock_state(&s->l.lock) == LDL_HELD) {
            log_grant(i, ldl_lock_fencing_token(&s->l.lock), st_now_ms());
            rounds_granted[i]++;
            s->hold = (int)(rand_next() % 6);
            s->st = S_HELD;
        } else if (!ldl_lock_pending(&s->l.lock)) {
            slot_finish(s);                          /* no grant: try again next frame */
        }
        return;
    case S_HELD:
        if (s->hold-- > 0 && ldl_lock_poll(&s->l.lock) == 1) return;
        s->st = S_REL;
        /* FALLTHROUGH */
    case S_REL:
        if (ldl_lock_release(&s->l.lock) == LDL_EINPROGRESS) return;
        slot_finish(s);
        return;
    }
}

/* the link failed: drop it, open a new connection on the multi-host conninfo
   without blocking the loop for long, rebind */
static void relink(void)
{
    PGconn *nc, *old;
    if (st_now_ms() < next_connect) return;
    next_connect = st_now_ms() + 100;
    nc = pgt_connect_nb("", 3000);
    if (!nc) return;
    old = cur;
    (void)ldl_pg_async_drop(&pa);
    if (ldl_pg_async_rebind(&pa, nc) != LDL_OK) {
        fprintf(stderr, "rebind: %s\n", ldl_pg_async_why(&pa));
        PQfinish(nc);
        return;
    }
    PQfinish(old);
    cur = nc;
    linkdown = 0;
    reconnects++;
}

static void frame(void)
{
    int i;
    if (linkdown) relink();
    if (!linkdown && ldl_pg_async_pump(&pa) < 0) linkdown = 1;
    for (i = 0; i < NKEYS; i++) slot_step(i);
    if (!linkdown && ldl_pg_async_pump(&pa) < 0) linkdown = 1;
    st_sleep_ms(1);
}

static uint64_t total_granted(void)
{
    uint64_t n = 0;
    int i;
    for (i = 0; i < NKEYS; i++) n += rounds_granted[i];
    return n;
}

/* ------------------------------------------------------------ the checker */
/* a grant whose token is not above every earlier grant of its key */
typedef struct verdict { long repeated, regressed; } verdict;

static void judge(const keylog *l, const uint64_t *kill_at, int rounds, verdict *per_round)
{
    size_t i, j;
    int64_t max = 0;
    for (i = 0; i < l->n; i++) {
        int64_t t = l->g[i].token;
        if (t <= max) {
            int r = 0, seen = 0;
            while (r + 1 < rounds && kill_at[r + 1] <= l->g[i].at) r++;
            for (j = 0; j < i && !seen; j++) seen = l->g[j].token == t;
            if (seen) per_round[r].repeated++; else per_round[r].regressed++;
        }
        if (t > max) max = t;
    }
}

int main(void)
{
    char dir[256], why[1024];
    const char *env_rounds = getenv("LDL_FAILOVER_ROUNDS");
    const char *sc = getenv("LDL_PG_SYNC_COMMIT");
    int rounds = env_rounds ? atoi(env_rounds) : 4, r, i, safe, printonly;
    static uint64_t kill_at[MAXROUNDS], pause_grants[MAXROUNDS];
    static verdict v[MAXROUNDS];
    st_child child;
    PGconn *c;
    int fd;

    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    mode = getenv("LDL_PG_STANDBY_MODE");
    if (!mode || (strcmp(mode, "sync") != 0 && strcmp(mode, "async") != 0)) {
        fprintf(stderr, "pg_failover: run me through tests/store/with_pg_standby.sh sync|async\n");
        return 2;
    }
    if (!sc || !*sc) sc = "on";
    safe = strcmp(mode, "sync") == 0 && (strcmp(sc, "on") == 0 || strcmp(sc, "remote_apply") == 0);
    printonly = strcmp(mode, "sync") == 0 && strcmp(sc, "remote_write") == 0;
    {   /* LDL_FAILOVER_EXPECT=safe|unsafe overrides: shows the gate failing on purpose */
        const char *ex = getenv("LDL_FAILOVER_EXPECT");
        if (ex && strcmp(ex, "safe") == 0) { safe = 1; printonly = 0; }
        else if (ex && strcmp(ex, "unsafe") == 0) { safe = 0; printonly = 0; }
        else if (ex && *ex) { fprintf(stderr, "LDL_FAILOVER_EXPECT: safe or unsafe\n"); return 2; }
    }
    printf("pg_failover: %s replication, synchronous_commit %s: %s\n", mode, sc,
           safe ? "no fence may repeat" : printonly ? "counts printed" : "the paused tail must repeat");
    if (rounds < 1 || rounds > MAXROUNDS) { fprintf(stderr, "LDL_FAILOVER_ROUNDS: 1..%d\n", MAXROUNDS); return 2; }
    if (st_tmpdir(dir, sizeof dir, "pgfo") != 0) { perror("tmpdir"); return 2; }
    snprintf(recpath, sizeof recpath, "%s/child.rec", dir);

    c = cur = pgt_connect("");
    if (!ST_CHECK(PQstatus(c) == CONNECTION_OK, "%s", "connect") ||
        !ST_CHECK(ldl_pg_init(&pg, c, TABLE) == LDL_OK, "init: %s", ldl_pg_why(&pg)))
        return st_report();
    if (!ST_CHECK(ldl_pg_async_init(&pa, &pg, reqs, sizeof reqs / sizeof reqs[0]) == LDL_OK,
                  "async init: %s", ldl_pg_async_why(&pa)))
        return st_report();
    as = ldl_pg_async_store(&pa);
    for (i = 0; i < NKEYS; i++) snprintf(slots[i].key, sizeof slots[i].key, "f%d", i);
    if (st_fork(&child, child_main, NULL) != 0) { perror("fork"); return 2; }

    for (r = 0; r < rounds; r++) {
        int paused = r % 2 == 0;
        uint64_t end, before, t0 = st_now_ms();
        /* the durability check, on a connection of its own (the view's is pipelined) */
        {
            PGconn *dc = pgt_connect("");
            ldl_pg dp;
            int rc = LDL_ESTORE;
            if (PQstatus(dc) == CONNECTION_OK && ldl_pg_init(&dp, dc, TABLE) == LDL_OK)
                rc = ldl_pg_check_durability(&dp, why, sizeof why);
            if (safe)
                ST_CHECK(rc == (LDL_PG_SURVIVES_CRASH | LDL_PG_SURVIVES_FAILOVER),
                         "round %d: check = %d (%s)", r, rc, why);
            else if (strcmp(sc, "off") == 0)
                ST_CHECK(rc == 0, "round %d: check = %d (%s)", r, rc, why);
            else
                ST_CHECK(rc == LDL_PG_SURVIVES_CRASH &&
                         strstr(why, strcmp(mode, "async") == 0 ? "asynchronous" : sc),
                         "round %d: check = %d (%s)", r, rc, why);
            PQfinish(dc);
        }
        /* lifecycles before */
        end = st_now_ms() + 800;
        while (st_now_ms() < end || total_granted() == 0) {
            frame();
            if (st_now_ms() > end + 20000) break;
        }
        if (paused) {
            if (ha("pause-link") != 0) { ST_CHECK(0, "round %d: pause-link", r); break; }
            before = total_granted();
            end = st_now_ms() + 1500;
            while (st_now_ms() < end && total_granted() - before < 30) frame();
            pause_grants[r] = total_granted() - before;
        }
        /* requests in flight on both clients: every slot that is idle submits now */
        for (i = 0; i < NKEYS; i++) if (slots[i].st == S_IDLE) slot_step(i);
        if (!linkdown) (void)ldl_pg_async_pump(&pa);
        kill_at[r] = st_now_ms();
        if (ha("kill-primary") != 0) { ST_CHECK(0, "round %d: kill-primary", r); break; }
        end = st_now_ms() + 200;
        while (st_now_ms() < end) frame();           /* answers already received still count */
        if (ha("promote") != 0) { ST_CHECK(0, "round %d: promote", r); break; }
        if (ha("rebuild") != 0) { ST_CHECK(0, "round %d: rebuild", r); break; }
        /* lifecycles after: until every key was granted twice since the failover */
        memset(rounds_granted, 0, sizeof rounds_granted);
        end = st_now_ms() + 30000;
        for (;;) {
            int done = 1;
            frame();
            for (i = 0; i < NKEYS; i++) done &= rounds_granted[i] >= 2;
            if (done && st_now_ms() > kill_at[r] + 2500) break;
            if (st_now_ms() > end) break;
        }
        for (i = 0; i < NKEYS; i++)
            ST_CHECK(rounds_granted[i] >= 2, "round %d: key f%d granted %llu times after the failover",
                     r, i, (unsigned long long)rounds_granted[i]);
        printf("round %d (%s): %.1f s, %llu grants acknowledged during the pause, relinks so far %llu\n",
               r, paused ? "paused" : "natural", (double)(st_now_ms() - t0) / 1000.0,
               (unsigned long long)pause_grants[r], (unsigned long long)reconnects);
    }
    /* settle the locks, stop the child */
    {
        uint64_t end = st_now_ms() + 5000;
        int busy = 1;
        while (busy && st_now_ms() < end) {
            busy = 0;
            if (!linkdown) (void)ldl_pg_async_pump(&pa);
            for (i = 0; i < NKEYS; i++) {
                if (slots[i].st == S_IDLE) continue;
                if (slots[i].st != S_REL) slots[i].st = S_REL;
                slot_step(i);
                busy |= slots[i].st != S_IDLE;
            }
            st_sleep_ms(1);
        }
        for (i = 0; i < NKEYS; i++) if (slots[i].live) ldl_lock_dispose(&slots[i].l.lock);
    }
    (void)st_send(child.to_child, 'q');
    ST_CHECK(st_join(&child, 60000) == 0, "%s", "child");

    /* the child's grants */
    fd = open(recpath, O_RDONLY);
    if (ST_CHECK(fd >= 0, "%s", "child records")) {
        rec rr;
        while (read(fd, &rr, sizeof rr) == (ssize_t)sizeof rr)
            if (rr.key >= NKEYS && rr.key < NALL) log_grant(rr.key, rr.token, rr.at);
        close(fd);
    }
    unlink(recpath);
    rmdir(dir);
    for (r = 0; r < rounds; r++) {     /* the child saw every failover through */
        size_t n = 0;
        for (i = NKEYS; i < NALL; i++) {
            size_t j;
            uint64_t to = r + 1 < rounds ? kill_at[r + 1] : UINT64_MAX;
            for (j = 0; j < logs[i].n; j++) n += logs[i].g[j].at > kill_at[r] && logs[i].g[j].at < to;
        }
        ST_CHECK(n >= 1, "round %d: the child (synchronous view) was granted after the failover", r);
    }

    /* the verdict */
    for (i = 0; i < NALL; i++) judge(&logs[i], kill_at, rounds, v);
    {
        long rep[2] = { 0, 0 }, reg[2] = { 0, 0 }, hit[2] = { 0, 0 }, nr[2] = { 0, 0 }, grants = 0;
        for (i = 0; i < NALL; i++) grants += (long)logs[i].n;
        for (r = 0; r < rounds; r++) {
            int p = r % 2 == 0 ? 0 : 1;
            printf("  round %d (%s): repeated %ld, regressed %ld\n", r, p ? "natural" : "paused",
                   v[r].repeated, v[r].regressed);
            rep[p] += v[r].repeated;
            reg[p] += v[r].regressed;
            hit[p] += v[r].repeated + v[r].regressed > 0;
            nr[p]++;
        }
        for (i = 0; i < 2; i++) {
            if (!nr[i]) continue;
            printf("pg_failover: %s/%s, %s rounds: %ld unclean failovers, %ld repeated + %ld regressed "
                   "fences = %.1f per 100 unclean failovers (%ld of %ld failovers had one)\n",
                   mode, sc, i ? "natural" : "paused", nr[i], rep[i], reg[i],
                   100.0 * (double)(rep[i] + reg[i]) / (double)nr[i], hit[i], nr[i]);
        }
        printf("pg_failover: %s/%s: %ld grants recorded over %d failovers\n", mode, sc, grants, rounds);
        if (safe) {
            ST_CHECK(rep[0] + rep[1] == 0 && reg[0] + reg[1] == 0,
                     "%ld repeated, %ld regressed fences (must be 0)", rep[0] + rep[1], reg[0] + reg[1]);
        } else if (!printonly) {
            for (r = 0; r < rounds; r += 2)
                ST_CHECK(pause_grants[r] > 0 && v[r].repeated > 0,
                         "round %d: %llu grants acknowledged during the pause, %ld repeated after "
                         "the failover (the lost tail must be granted again)", r,
                         (unsigned long long)pause_grants[r], v[r].repeated);
        }
    }
    ldl_pg_async_drop(&pa);
    PQfinish(cur);
    return st_report();
}
