/* tests/store/etcd_cluster.c -- adapters/lite_di_lock_etcd.h against a real 3-member etcd
 * cluster (issue 21). Run through tests/store/with_etcd_cluster.sh, which starts the members
 * and hands over a control script (kill / stop / pause / restart / leader / partition).
 *
 *   etcd_cluster cluster [case]   (members on 127.0.0.1)
 *     control     the planted control: a holder whose renew answers 1 without asking etcd;
 *                 once etcd lets its lease go a contender takes the key, and the exclusivity
 *                 check below must catch the two trusted holders (else the suite fails)
 *     leaderkill  two rounds: the leader SIGKILLed while 12 locks on 6 keys (a holder and a
 *                 contender each) hold, renew and contend; then restarted on its old data dir
 *     pause       a follower SIGSTOPped 4 s (no lock lost: its clients move on), then the
 *                 HAZARD: the leader SIGSTOPped 2.5 s, then 9 s (a new leader is elected under
 *                 it): on etcd 3.4.23 this gave two trusted holders in some runs
 *                 (etcd-io/etcd#15247); those overlaps are counted and printed, not failed
 *     slow        the leader, then a follower, answering slowly: SIGSTOP 300 ms / SIGCONT
 *                 300 ms for 6 s, from a forked child, while the locks renew
 *     restart     every member SIGKILLed at once and restarted; every member stopped cleanly
 *                 (SIGTERM) and restarted; every member SIGKILLed and left down 5 s (the
 *                 holders lose their leases): a fresh key's grant after each restart is above
 *                 every fence before (the revision survives through the WAL), every key held
 *                 again
 *   etcd_cluster partition   (with_etcd_cluster.sh --netns: members in their own namespaces)
 *     leader      a client attached only to the leader; the leader's peer cable pulled: no
 *                 renew succeeds after the cut, the lock is not trusted past its deadline, a client
 *                 on the majority side takes the key with a higher fence; healed: the old
 *                 holder's release does not touch the new holder's key
 *     follower    the same with the client attached only to a follower
 *     failover    a client holding through every endpoint, its current member the leader;
 *                 the leader cut off: the renewals move to the majority, the lock stays held
 *     control     the leader round with A's renew lying after the cut: must be caught
 *
 * What every case checks, on every answer (one process, one monotonic clock, calls made
 * one after the other, so the checks are exact):
 *   exclusive  whenever a lock is granted or renewed, no other lock on the same key still
 *              trusts its lease (ldl_lock_valid_ms() == 0): never two holders trusted at once
 *   fences     every grant's fence is above every fence granted before it, on any key
 *              (etcd's revision is cluster-wide and linearizable)
 *   progress   after each fault healed, every key is held again
 * The figures (losses by reason, time until every key is held again, fences before and
 * after) are printed as "figure:" lines; docs/TESTING.md quotes a run. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include "tests/store/fenced.h"
#include "tests/store/etcd_case.h"

#define NKEYS 6
#define PER_KEY 2
#define MAXCL 16
#define TTL_MS 4000u
#define RETRY_MS 250u
#define STEP_MS 20u

/* ------------------------------------------------------------ the control script */
static const char *g_ctl;
static int g_trace;                /* LDL_ETCD_TRACE=1: one line per renew and per fault */

static int ctl(const char *verb, int member)
{
    char cmd[600];
    int rc;
    if (member > 0) snprintf(cmd, sizeof cmd, "'%s' %s %d", g_ctl, verb, member);
    else snprintf(cmd, sizeof cmd, "'%s' %s", g_ctl, verb);
    if (g_trace) printf("trace %llu ctl %s %d\n", (unsigned long long)(st_now_ms() % 100000u), verb, member);
    rc = system(cmd);
    if (g_trace) printf("trace %llu ctl done\n", (unsigned long long)(st_now_ms() % 100000u));
    return (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
}

/* the number the harness prints for `VERB ARG` (its first line); 0 when it fails */
static long ctl_number(const char *verb, int arg)
{
    char cmd[600], line[32];
    FILE *p;
    long v = 0;
    snprintf(cmd, sizeof cmd, "'%s' %s %d", g_ctl, verb, arg);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (fgets(line, sizeof line, p)) v = atol(line);
    if (pclose(p) != 0) v = 0;
    return v;
}

/* the leader's index (1..3), waiting up to wait_s seconds; 0 when none */
static int ctl_leader(int wait_s)
{
    long l = ctl_number("wait-leader", wait_s);
    return (l >= 1 && l <= 3) ? (int)l : 0;
}

static pid_t ctl_pid(int member) { return (pid_t)ctl_number("pid", member); }

static const char *endpoint(int member)
{
    char name[32];
    const char *v;
    snprintf(name, sizeof name, "LDL_ETCD_ENDPOINT_%d", member);
    v = getenv(name);
    return v ? v : "";
}

/* ------------------------------------------------------------ clients */
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

/* the planted control: a store between the lock and etcd whose renew, once `lie` is set,
   answers 1 without asking etcd. The exclusivity check must catch the holder that keeps
   trusting a lease etcd has let go (the suite fails if it does not). */
typedef struct lying_store {
    ldl_store inner;
    int lie;
} lying_store;
static int lying_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out)
{
    lying_store *l = (lying_store *)ctx;
    return l->inner.acquire(l->inner.ctx, key, ttl_ms, token_out);
}
static int lying_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms)
{
    lying_store *l = (lying_store *)ctx;
    if (l->lie) return 1;
    return l->inner.renew(l->inner.ctx, key, token, ttl_ms);
}
static int lying_release(void *ctx, const char *key, int64_t token)
{
    lying_store *l = (lying_store *)ctx;
    return l->inner.release(l->inner.ctx, key, token);
}

typedef struct client {
    lying_store ls;                /* used only by the control cases */
    ldl_etcd e;
    ldl_lock lk;
    char     name[16];
    int      key;                  /* index into g_keys */
    int      ok;
    uint64_t next_try;
    uint64_t deadline;             /* now + valid_ms at the last answer that held */
    uint64_t grants, losses, renews;
    uint64_t lost_by[8];           /* per LDL_REASON_* */
    uint64_t max_call_ms;          /* the slowest store call (poll that renewed, acquire) */
} client;

static client g_cl[MAXCL];
static int g_ncl;
static char g_keys[NKEYS][48];
static int64_t g_top_fence;        /* the highest fence granted so far, any key */
static int64_t g_key_fence[NKEYS]; /* the last fence granted per key */
static long g_violations;
static int g_control;              /* 1 while a planted control runs: exclusivity hits are expected */
static long g_control_hits;
static int g_hazard;               /* 1 while the stalled-leader hazard runs: overlaps are etcd's */
static long g_hazard_hits;
static long g_hazard_grants;       /* of those: grants made while another holder still trusted */
static uint64_t g_grants_total;
static uint64_t g_gap_start[NKEYS]; /* when the key was last seen held by nobody; 0 = held */
static uint64_t g_max_gap[NKEYS];   /* the longest time a key was held by nobody */

/* key: an index into g_keys; keystr, when not NULL, a key of its own (kept as a pointer) */
static int client_init2(client *c, const char *name, int key, const char *keystr, const char *endpoints,
                        uint32_t ttl, uint32_t call_ms, int lying)
{
    ldl_etcd_config cfg;
    ldl_lock_desc d;
    ldl_store s;
    int rc;
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->key = key;
    memset(&cfg, 0, sizeof cfg);
    cfg.endpoints = endpoints;
    /* bounds of their own (not the adapter's defaults): one attempt 500 ms, a call 2 s, so a
       renew (due ttl/3 after the last) always answers inside a 4 s TTL's window */
    cfg.attempt_ms = 500;
    cfg.call_ms = call_ms ? call_ms : 2000;
    rc = ldl_etcd_init(&c->e, &cfg);       /* first: the why below reads what init wrote */
    if (!ST_CHECK(rc == LDL_OK, "%s: ldl_etcd_init(%s): %s", name, endpoints, ldl_etcd_why(&c->e)))
        return 0;
    s = ldl_etcd_store(&c->e);
    if (lying) {
        c->ls.inner = s;
        s.acquire = lying_acquire;
        s.renew = lying_renew;
        s.release = lying_release;
        s.ctx = &c->ls;
    }
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = keystr ? keystr : g_keys[key];
    d.ttl_ms = ttl;
    d.store = &s;
    rc = ldl_lock_init(&c->lk, &d);        /* first: the why below reads what init wrote */
    if (!ST_CHECK(rc == LDL_OK, "%s: ldl_lock_init: %s", name, ldl_lock_why(&c->lk))) {
        ldl_etcd_close(&c->e);
        return 0;
    }
    c->ok = 1;
    return 1;
}

static int client_init(client *c, const char *name, int key, const char *endpoints, uint32_t ttl)
{
    return client_init2(c, name, key, NULL, endpoints, ttl, 0, 0);
}

static void client_close(client *c)
{
    if (!c->ok) return;
    ldl_lock_dispose(&c->lk);
    ldl_etcd_close(&c->e);
    c->ok = 0;
}

static void close_all(void)
{
    int i;
    for (i = 0; i < g_ncl; i++) client_close(&g_cl[i]);
    g_ncl = 0;
}

/* no other lock on c's key may still trust its lease now */
static void check_exclusive(const client *c, const char *what)
{
    int j;
    for (j = 0; j < g_ncl; j++) {
        client *o = &g_cl[j];
        uint32_t v;
        if (o == c || !o->ok || o->key != c->key) continue;
        v = ldl_lock_valid_ms(&o->lk);
        if (v > 0 && g_control) {
            g_control_hits++;
            printf("control: caught %s %s key %s (fence %lld) while %s still trusts fence %lld for %u ms\n",
                   c->name, what, g_keys[c->key], (long long)ldl_lock_fencing_token(&c->lk), o->name,
                   (long long)ldl_lock_fencing_token(&o->lk), (unsigned)v);
        } else if (v > 0 && g_hazard) {
            g_hazard_hits++;
            if (strcmp(what, "granted") == 0) g_hazard_grants++;
            printf("hazard: %s %s key %s (fence %lld) while %s still trusts fence %lld for %u ms\n",
                   c->name, what, g_keys[c->key], (long long)ldl_lock_fencing_token(&c->lk), o->name,
                   (long long)ldl_lock_fencing_token(&o->lk), (unsigned)v);
        } else if (v > 0) {
            g_violations++;
            ST_CHECK(0, "two holders trusted at once: %s %s key %s (fence %lld) while %s still "
                     "trusts fence %lld for %u ms", c->name, what, g_keys[c->key],
                     (long long)ldl_lock_fencing_token(&c->lk), o->name,
                     (long long)ldl_lock_fencing_token(&o->lk), (unsigned)v);
        }
    }
}

static void on_grant(client *c, uint64_t call_ms)
{
    int64_t f = ldl_lock_fencing_token(&c->lk);
    c->grants++;
    g_grants_total++;
    if (call_ms > c->max_call_ms) c->max_call_ms = call_ms;
    if (f <= g_top_fence) g_violations++;
    ST_CHECK(f > g_top_fence, "%s: fence %lld granted after fence %lld (must rise)", c->name,
             (long long)f, (long long)g_top_fence);
    ST_CHECK(f > g_key_fence[c->key], "%s: key %s fence %lld after %lld", c->name,
             g_keys[c->key], (long long)f, (long long)g_key_fence[c->key]);
    if (f > g_top_fence) g_top_fence = f;
    g_key_fence[c->key] = f;
    check_exclusive(c, "granted");
}

/* one step of one client: poll while held (renews when due), else retry acquire */
static void client_step(client *c)
{
    uint64_t t0 = st_now_ms(), t1;
    int st;
    if (!c->ok) return;
    st = ldl_lock_state(&c->lk);
    if (st == LDL_HELD) {
        uint32_t due = ldl_lock_due_in_ms(&c->lk);
        int r = ldl_lock_poll(&c->lk);
        t1 = st_now_ms();
        if (due == 0 && t1 - t0 > c->max_call_ms) c->max_call_ms = t1 - t0;
        if (due == 0 && g_trace)
            printf("trace %llu %s renew -> %d (%llu ms, member %d) %s\n", (unsigned long long)(t0 % 100000u),
                   c->name, r, (unsigned long long)(t1 - t0), ldl_etcd_member(&c->e), ldl_etcd_why(&c->e));
        if (r == 1) {
            uint64_t dl = t1 + ldl_lock_valid_ms(&c->lk);
            if (dl > c->deadline + 50u) c->renews++;
            c->deadline = dl;
            check_exclusive(c, "renewed");
        } else {
            int why = ldl_lock_reason(&c->lk);
            c->losses++;
            if (why >= 0 && why < 8) c->lost_by[why]++;
        }
        return;
    }
    if (st == LDL_LOST) (void)ldl_lock_release(&c->lk);     /* hand the lease back, RELEASED */
    if (t0 < c->next_try) return;
    {
        int r = ldl_lock_acquire(&c->lk);
        t1 = st_now_ms();
        c->next_try = t1 + RETRY_MS;
        if (r == 1) {
            c->deadline = t1 + ldl_lock_valid_ms(&c->lk);
            on_grant(c, t1 - t0);
        }
    }
}

static int key_held(int key)
{
    int i;
    for (i = 0; i < g_ncl; i++)
        if (g_cl[i].ok && g_cl[i].key == key && ldl_lock_held(&g_cl[i].lk)) return 1;
    return 0;
}

/* every client one step, then the per-key gaps (time held by nobody) */
static void step_all(void)
{
    int i, k;
    uint64_t now;
    for (i = 0; i < g_ncl; i++) client_step(&g_cl[i]);
    now = st_now_ms();
    for (k = 0; k < NKEYS; k++) {
        if (!key_held(k)) {
            if (g_gap_start[k] == 0) g_gap_start[k] = now;
        } else if (g_gap_start[k] != 0) {
            if (now - g_gap_start[k] > g_max_gap[k]) g_max_gap[k] = now - g_gap_start[k];
            g_gap_start[k] = 0;
        }
    }
}

static uint64_t max_gap(void)
{
    uint64_t m = 0;
    int k;
    for (k = 0; k < NKEYS; k++)
        if (g_max_gap[k] > m) m = g_max_gap[k];
    return m;
}

static void pump_for(uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        step_all();
        st_sleep_ms(STEP_MS);
    }
}

static int all_held(void)
{
    int k;
    for (k = 0; k < NKEYS; k++)
        if (!key_held(k)) return 0;
    return 1;
}

/* pump until every key is held (or max_ms); answers the ms it took, or -1 */
static long pump_until_held(uint32_t max_ms)
{
    uint64_t t0 = st_now_ms(), end = t0 + max_ms;
    while (st_now_ms() < end) {
        step_all();
        if (all_held()) return (long)(st_now_ms() - t0);
        st_sleep_ms(STEP_MS);
    }
    return -1;
}

static uint64_t total_losses(void)
{
    uint64_t n = 0;
    int i;
    for (i = 0; i < g_ncl; i++) n += g_cl[i].losses;
    return n;
}

static void print_losses(const char *tag)
{
    uint64_t by[8], renews = 0;
    int i, r;
    memset(by, 0, sizeof by);
    for (i = 0; i < g_ncl; i++)
        for (r = 0; r < 8; r++) by[r] += g_cl[i].lost_by[r];
    for (i = 0; i < g_ncl; i++) renews += g_cl[i].renews;
    printf("figure: %s: %llu renewals, losses %llu (heartbeat_failed %llu, store_error %llu, lease_expired %llu)\n",
           tag, (unsigned long long)renews, (unsigned long long)total_losses(), (unsigned long long)by[LDL_REASON_HEARTBEAT_FAILED],
           (unsigned long long)by[LDL_REASON_STORE_ERROR], (unsigned long long)by[LDL_REASON_LEASE_EXPIRED]);
}

static void reset_counters(void)
{
    int i;
    memset(g_gap_start, 0, sizeof g_gap_start);
    memset(g_max_gap, 0, sizeof g_max_gap);
    for (i = 0; i < g_ncl; i++) {
        g_cl[i].losses = g_cl[i].grants = g_cl[i].renews = g_cl[i].max_call_ms = 0;
        memset(g_cl[i].lost_by, 0, sizeof g_cl[i].lost_by);
    }
}

static uint64_t max_call(void)
{
    uint64_t m = 0;
    int i;
    for (i = 0; i < g_ncl; i++)
        if (g_cl[i].max_call_ms > m) m = g_cl[i].max_call_ms;
    return m;
}

/* 12 clients, 2 per key, each with all three members, the list rotated so the clients start
   on different members; the first acquires are spread over one heartbeat, so the renewals
   of the 6 holders are spread too (a fault always has renewals right behind it) */
static int open_clients(const char *tag, uint32_t ttl)
{
    int i;
    uint64_t now = st_now_ms();
    for (i = 0; i < NKEYS * PER_KEY; i++) {
        char eps[600], name[16];
        int a = i % 3 + 1, b = (i + 1) % 3 + 1, c = (i + 2) % 3 + 1;
        snprintf(eps, sizeof eps, "%s,%s,%s", endpoint(a), endpoint(b), endpoint(c));
        snprintf(name, sizeof name, "%s%d", tag, i);
        if (!client_init(&g_cl[i], name, i % NKEYS, eps, ttl)) return 0;
        g_cl[i].next_try = now + (uint64_t)(i % NKEYS) * (ttl / 3u) / NKEYS + (i >= NKEYS ? 60u : 0u);
        g_ncl = i + 1;
    }
    return 1;
}

static void set_keys(const char *tag)
{
    int k;
    for (k = 0; k < NKEYS; k++) {
        snprintf(g_keys[k], sizeof g_keys[k], "cluster/%s/%d", tag, k);
        g_key_fence[k] = 0;
    }
}

/* the fences of the current holders, "k0=F k1=F k2=F" */
static void holder_fences(char *out, size_t n)
{
    int k, i;
    size_t used = 0;
    out[0] = '\0';
    for (k = 0; k < NKEYS; k++) {
        int64_t f = 0;
        for (i = 0; i < g_ncl; i++)
            if (g_cl[i].key == k && ldl_lock_held(&g_cl[i].lk)) f = ldl_lock_fencing_token(&g_cl[i].lk);
        used += (size_t)snprintf(out + used, n > used ? n - used : 0, "%sk%d=%lld", k ? " " : "", k, (long long)f);
        if (used >= n) break;
    }
}

/* ------------------------------------------------------------ cluster cases */
static void test_leaderkill(void)
{
    int round;
    set_keys("kill");
    if (!open_clients("kill", TTL_MS)) { close_all(); return; }
    ST_CHECK(pump_until_held(15000) >= 0, "leaderkill: every key held before the fault");
    pump_for(1500);
    for (round = 1; round <= 2; round++) {
        char before[256], after[256];
        int64_t top = g_top_fence;
        int lead = ctl_leader(30), lead2;
        long back;
        if (!ST_CHECK(lead > 0, "leaderkill %d: a leader", round)) break;
        holder_fences(before, sizeof before);
        reset_counters();
        ST_CHECK(ctl("kill", lead) == 0, "leaderkill %d: SIGKILL member %d", round, lead);
        pump_for(TTL_MS + 2000);
        back = pump_until_held(20000);
        ST_CHECK(back >= 0, "leaderkill %d: every key held again after the leader's death", round);
        lead2 = ctl_leader(30);
        ST_CHECK(lead2 > 0 && lead2 != lead, "leaderkill %d: a new leader (%d, was %d)", round, lead2, lead);
        holder_fences(after, sizeof after);
        printf("figure: leaderkill %d: leader m%d SIGKILLed, new leader m%d; fences before {%s} after {%s}; "
               "top fence %lld -> %lld; longest time a key was held by nobody %llu ms; slowest store call "
               "%llu ms\n", round, lead, lead2, before, after, (long long)top, (long long)g_top_fence,
               (unsigned long long)max_gap(), (unsigned long long)max_call());
        print_losses("leaderkill");
        ST_CHECK(ctl("start", lead) == 0, "leaderkill %d: restart member %d on its data dir", round, lead);
        ST_CHECK(ctl("wait-healthy", 60) == 0, "leaderkill %d: every member healthy again", round);
        ST_CHECK(pump_until_held(15000) >= 0, "leaderkill %d: every key held after the restart", round);
        pump_for(1000);
    }
    close_all();
}

/* the leader SIGSTOPped for ms; a new leader is elected under it (ms > the election timeout) */
static void pause_leader(uint32_t ms, int hazard)
{
    char before[256], after[256];
    int64_t top = g_top_fence;
    int lead = ctl_leader(30), lead2;
    long back;
    if (!ST_CHECK(lead > 0, "pause: a leader before the leader pause")) return;
    pump_for(500);
    reset_counters();
    holder_fences(before, sizeof before);
    ST_CHECK(ctl("pause", lead) == 0, "pause: SIGSTOP leader m%d", lead);
    pump_for(ms);
    ST_CHECK(ctl("resume", lead) == 0, "pause: SIGCONT leader m%d", lead);
    pump_for(3000);                    /* the resumed leader's own lease tick runs meanwhile */
    back = pump_until_held(20000);
    ST_CHECK(back >= 0, "pause: every key held after the leader's %u ms pause", (unsigned)ms);
    lead2 = ctl_leader(30);
    holder_fences(after, sizeof after);
    printf("figure: pause leader m%d %u ms%s: leader after m%d; fences before {%s} after {%s}; top fence "
           "%lld -> %lld; longest time a key was held by nobody %llu ms; slowest store call %llu ms\n",
           lead, (unsigned)ms, hazard ? " (hazard)" : "", lead2, before, after, (long long)top,
           (long long)g_top_fence, (unsigned long long)max_gap(), (unsigned long long)max_call());
    print_losses("pause leader");
    ST_CHECK(ctl("wait-healthy", 60) == 0, "pause: every member healthy after the leader's pause");
}

static void test_pause(void)
{
    int lead, fol;
    uint64_t losses;
    set_keys("pause");
    if (!open_clients("pause", 6000u)) { close_all(); return; }
    ST_CHECK(pump_until_held(15000) >= 0, "pause: every key held before the fault");
    pump_for(1000);
    lead = ctl_leader(30);
    if (!ST_CHECK(lead > 0, "pause: a leader")) { close_all(); return; }
    fol = lead % 3 + 1;
    reset_counters();
    ST_CHECK(ctl("pause", fol) == 0, "pause: SIGSTOP follower m%d", fol);
    pump_for(4000);
    ST_CHECK(ctl("resume", fol) == 0, "pause: SIGCONT follower m%d", fol);
    losses = total_losses();
    printf("figure: pause follower m%d 4 s: slowest store call %llu ms\n", fol, (unsigned long long)max_call());
    print_losses("pause follower");
    ST_CHECK(losses == 0, "pause: a paused follower costs no lease (%llu lost)", (unsigned long long)losses);
    ST_CHECK(all_held(), "pause: every key still held");
    pump_for(1500);

    /* the HAZARD: a leader stalled past the election timeout (a new leader is elected under
       it) and then resumed. On etcd 3.4.23 this produced two trusted holders in some runs,
       with 2.5 s and with 9 s stalls (docs/etcd-cluster.md; etcd-io/etcd#15247: a stalled
       leader revoking on resume leases its successor had renewed, fixed upstream by PR 16822,
       3.4 backport PR 17465). Observed, counted and printed, not failed; the fences still rise
       (checked), which is what a fenced resource relies on. */
    g_hazard = 1;
    g_hazard_hits = g_hazard_grants = 0;
    pause_leader(2500, 1);
    printf("figure: pause leader 2.5 s: %ld grant(s) while another holder still trusted its lease "
           "(%ld overlap reports, one per poll)\n", g_hazard_grants, g_hazard_hits);
    g_hazard_hits = g_hazard_grants = 0;
    pause_leader(9000, 1);
    g_hazard = 0;
    printf("figure: pause leader 9 s: %ld grant(s) while another holder still trusted its lease "
           "(%ld overlap reports, one per poll)\n", g_hazard_grants, g_hazard_hits);
    ST_CHECK(ctl("wait-healthy", 60) == 0, "pause: every member healthy again");
    close_all();
}

/* a child that stops and continues pid: stop_ms stopped, run_ms running, until killed */
static pid_t slow_child(pid_t pid, uint32_t stop_ms, uint32_t run_ms)
{
    pid_t ch = fork();
    if (ch == 0) {
        for (;;) {
            if (kill(pid, SIGSTOP) != 0) _exit(1);
            st_sleep_ms(stop_ms);
            kill(pid, SIGCONT);
            st_sleep_ms(run_ms);
        }
    }
    return ch;
}

static void slow_member(int member, const char *role)
{
    pid_t pid = ctl_pid(member), ch;
    char before[256], after[256];
    int64_t top = g_top_fence;
    long back;
    if (!ST_CHECK(pid > 0, "slow: pid of m%d", member)) return;
    holder_fences(before, sizeof before);
    reset_counters();
    ch = slow_child(pid, 300, 300);
    if (!ST_CHECK(ch > 0, "slow: fork")) return;
    pump_for(6000);
    kill(ch, SIGKILL);
    waitpid(ch, NULL, 0);
    kill(pid, SIGCONT);
    back = pump_until_held(20000);
    ST_CHECK(back >= 0, "slow: every key held after the slow %s", role);
    holder_fences(after, sizeof after);
    printf("figure: slow %s m%d (300 ms stopped / 300 ms running, 6 s): fences before {%s} after {%s}; "
           "top fence %lld -> %lld; longest time a key was held by nobody %llu ms; slowest store call "
           "%llu ms\n", role, member, before, after, (long long)top, (long long)g_top_fence,
           (unsigned long long)max_gap(), (unsigned long long)max_call());
    print_losses("slow");
}

static void test_slow(void)
{
    int lead;
    set_keys("slow");
    if (!open_clients("slow", TTL_MS)) { close_all(); return; }
    ST_CHECK(pump_until_held(15000) >= 0, "slow: every key held before the fault");
    pump_for(1000);
    lead = ctl_leader(30);
    if (ST_CHECK(lead > 0, "slow: a leader")) slow_member(lead, "leader");
    ST_CHECK(ctl("wait-healthy", 60) == 0, "slow: healthy after the slow leader");
    lead = ctl_leader(30);
    if (ST_CHECK(lead > 0, "slow: a leader")) slow_member(lead % 3 + 1, "follower");
    ST_CHECK(ctl("wait-healthy", 60) == 0, "slow: healthy after the slow follower");
    close_all();
}

/* a fresh key acquired after the restart: its fence must be above every fence before */
static int64_t probe_grant(const char *name, uint32_t max_ms)
{
    static client probe;
    static char pkey[48];
    int64_t f = 0;
    uint64_t end = st_now_ms() + max_ms;
    snprintf(pkey, sizeof pkey, "cluster/probe/%s", name);
    /* key index -1: never compared with the clients' keys */
    if (!client_init2(&probe, "probe", -1, pkey, getenv("LDL_ETCD_ENDPOINTS"), TTL_MS, 0, 0)) return 0;
    while (st_now_ms() < end) {
        if (ldl_lock_acquire(&probe.lk) == 1) { f = ldl_lock_fencing_token(&probe.lk); break; }
        step_all();
        st_sleep_ms(RETRY_MS);
    }
    if (f > 0) {
        if (f <= g_top_fence) g_violations++;
        ST_CHECK(f > g_top_fence, "probe %s: fence %lld granted after fence %lld (must rise)", name,
                 (long long)f, (long long)g_top_fence);
        if (f > g_top_fence) g_top_fence = f;
        g_grants_total++;
        ST_CHECK(ldl_lock_release(&probe.lk) == 1, "probe %s: release", name);
    }
    client_close(&probe);
    return f;
}

/* every member down (how: kill or stop), down_ms later every member started again */
static void restart_all(const char *how, uint32_t down_ms)
{
    char before[256], after[256];
    int64_t top = g_top_fence, first_after;
    uint64_t t0, t_up;
    long back;
    int i;
    holder_fences(before, sizeof before);
    reset_counters();
    t0 = st_now_ms();
    for (i = 1; i <= 3; i++) ST_CHECK(ctl(how, i) == 0, "restart: %s m%d", how, i);
    if (down_ms) pump_for(down_ms);   /* the holders' deadlines pass: lost, LEASE_EXPIRED */
    for (i = 1; i <= 3; i++) ST_CHECK(ctl("start", i) == 0, "restart: start m%d", i);
    ST_CHECK(ctl("wait-healthy", 90) == 0, "restart (%s): every member healthy on its old data dir", how);
    t_up = st_now_ms();
    first_after = probe_grant(how, 30000);
    ST_CHECK(first_after > top, "restart (%s): the first grant after (%lld) is above every fence before (%lld)",
             how, (long long)first_after, (long long)top);
    back = pump_until_held(30000);
    ST_CHECK(back >= 0, "restart (%s): every key held again", how);
    holder_fences(after, sizeof after);
    printf("figure: restart all (%s, down %u ms): healthy %llu ms after the first %s; every key held again "
           "%llu ms after that; fences before {%s} after {%s}; top fence %lld -> first grant after %lld\n", how,
           (unsigned)down_ms, (unsigned long long)(t_up - t0), how, (unsigned long long)(st_now_ms() - t_up),
           before, after, (long long)top, (long long)first_after);
    print_losses("restart");
}

static void test_restart(void)
{
    set_keys("wal");
    if (!open_clients("wal", TTL_MS)) { close_all(); return; }
    ST_CHECK(pump_until_held(15000) >= 0, "restart: every key held before the fault");
    pump_for(1000);
    restart_all("kill", 0);
    pump_for(1000);
    restart_all("stop", 0);
    pump_for(1000);
    restart_all("kill", TTL_MS + 1000u);
    close_all();
}

/* the planted control on the healthy cluster: a holder whose renew lies; etcd lets its lease
   run out, a contender takes the key, the exclusivity check must catch the holder */
static void test_control(void)
{
    client *h = &g_cl[0], *c = &g_cl[1];
    uint64_t end;
    set_keys("control");
    g_ncl = 0;
    if (!client_init2(h, "liar", 0, NULL, getenv("LDL_ETCD_ENDPOINTS"), TTL_MS, 0, 1)) return;
    g_ncl = 1;
    if (!client_init(c, "contender", 0, getenv("LDL_ETCD_ENDPOINTS"), TTL_MS)) { close_all(); return; }
    g_ncl = 2;
    ST_CHECK(ldl_lock_acquire(&h->lk) == 1, "control: the liar acquires");
    on_grant(h, 0);
    h->ls.lie = 1;
    g_control = 1;
    g_control_hits = 0;
    end = st_now_ms() + 20000;
    while (st_now_ms() < end && !ldl_lock_held(&c->lk)) { step_all(); st_sleep_ms(STEP_MS); }
    g_control = 0;
    ST_CHECK(ldl_lock_held(&h->lk), "control: the liar still trusts its lease");
    ST_CHECK(ldl_lock_held(&c->lk), "control: the contender took the key once etcd let the lease go");
    ST_CHECK(g_control_hits > 0, "control: the exclusivity check caught two holders (%ld hits)", g_control_hits);
    printf("figure: control: a renew that answers 1 without asking etcd: caught %ld time(s)\n", g_control_hits);
    h->ls.lie = 0;
    close_all();
}

/* ------------------------------------------------------------ partition cases */
/* A: the client on the cut-off side (endpoints a_eps), B: a client on the majority side.
   Cut `cut` off. A must not renew after the cut, must be lost by its deadline; B takes the
   key with a higher fence; healed, A's release leaves B's key alone. */
static void partition_round(const char *tag, int cut, const char *a_eps, const char *b_eps, int control)
{
    client *a = &g_cl[0], *b = &g_cl[1];
    uint64_t tp, t_lost = 0, t_b = 0, dl_at_cut, end;
    int64_t fa, fb = 0;
    int a_renewed_after = 0, a_past_deadline = 0, rel;
    set_keys(tag);
    g_ncl = 0;
    if (!client_init2(a, "A", 0, NULL, a_eps, TTL_MS, 0, control)) return;
    g_ncl = 1;
    /* B: TTL 10 s, so the heal and the health wait below (blocking calls of this one thread)
       cannot outlast its trust window before it is asked to renew */
    if (!client_init2(b, "B", 0, NULL, b_eps, 10000u, 0, 0)) { close_all(); return; }
    g_ncl = 2;
    ST_CHECK(ldl_lock_acquire(&a->lk) == 1, "%s: A acquires through %s", tag, a_eps);
    fa = ldl_lock_fencing_token(&a->lk);
    on_grant(a, 0);
    ST_CHECK(ldl_lock_acquire(&b->lk) == 0, "%s: B is refused while A holds", tag);
    /* A renews a few times before the cut */
    end = st_now_ms() + 3000;
    while (st_now_ms() < end) { client_step(a); st_sleep_ms(STEP_MS); }
    ST_CHECK(ldl_lock_held(&a->lk), "%s: A held before the cut", tag);
    a->renews = 0;
    ST_CHECK(ctl("partition", cut) == 0, "%s: pull m%d's peer cable", tag, cut);
    tp = st_now_ms();
    if (control) { a->ls.lie = 1; g_control = 1; g_control_hits = 0; }
    dl_at_cut = tp + ldl_lock_valid_ms(&a->lk);
    /* every 20 ms: A polls (renews when due), B retries every 250 ms */
    end = tp + 40000;
    while (st_now_ms() < end && (t_b == 0 || (t_lost == 0 && !control))) {
        uint64_t before = a->deadline;
        if (ldl_lock_state(&a->lk) == LDL_HELD) {
            client_step(a);
            if (a->deadline > before + 50u && ldl_lock_held(&a->lk)) a_renewed_after = 1;
            if (!ldl_lock_held(&a->lk)) t_lost = st_now_ms();
        }
        /* the lock's own answer: never trusted at or after the deadline it had at the cut
           (its loss may be REPORTED later, when a call B's blocking acquire delayed returns) */
        if (st_now_ms() >= dl_at_cut && ldl_lock_valid_ms(&a->lk) > 0) a_past_deadline = 1;
        if (t_b == 0) {
            client_step(b);
            if (ldl_lock_held(&b->lk)) { t_b = st_now_ms(); fb = ldl_lock_fencing_token(&b->lk); }
        }
        st_sleep_ms(STEP_MS);
    }
    if (control) {
        g_control = 0;
        ST_CHECK(a_renewed_after, "%s (control): the lying renew kept A trusting", tag);
        ST_CHECK(t_b != 0, "%s (control): B took the key", tag);
        ST_CHECK(g_control_hits > 0, "%s (control): the exclusivity check caught A trusting its lease while "
                 "B held the key (%ld hits)", tag, g_control_hits);
        printf("figure: partition %s: the planted lying renew caught %ld time(s); B took the key %lld ms after "
               "the cut\n", tag, g_control_hits, (long long)(t_b ? t_b - tp : 0));
        ST_CHECK(ctl("heal", cut) == 0, "%s: plug m%d's peer cable back", tag, cut);
        ST_CHECK(ctl("wait-healthy", 60) == 0, "%s: every member healthy after the heal", tag);
        a->ls.lie = 0;
        close_all();
        return;
    }
    ST_CHECK(!a_renewed_after, "%s: no renew of A succeeded after the cut", tag);
    ST_CHECK(t_lost != 0, "%s: A lost its lease", tag);
    ST_CHECK(!a_past_deadline && t_lost != 0, "%s: A not trusted past its deadline (%lld ms after the cut), "
             "lost %lld ms after the cut", tag, (long long)(dl_at_cut - tp), (t_lost ? (long long)(t_lost - tp) : -1LL));
    ST_CHECK(t_b != 0, "%s: B (majority side) took the key", tag);
    ST_CHECK(fb > fa, "%s: B's fence %lld above A's %lld", tag, (long long)fb, (long long)fa);
    printf("figure: partition %s: m%d cut off; A (fence %lld) lost %lld ms after the cut (reason %s, its "
           "deadline was %lld ms after); B took the key %lld ms after the cut with fence %lld\n", tag, cut,
           (long long)fa, (long long)(t_lost ? t_lost - tp : 0), ldl_reason_name(ldl_lock_reason(&a->lk)),
           (long long)(dl_at_cut - tp), (long long)(t_b ? t_b - tp : 0), (long long)fb);
    ST_CHECK(ctl("heal", cut) == 0, "%s: plug m%d's peer cable back", tag, cut);
    ST_CHECK(ctl("wait-healthy", 60) == 0, "%s: every member healthy after the heal", tag);
    /* A, lost, releases its old fence: B's key must stay */
    rel = ldl_lock_release(&a->lk);
    ST_CHECK(rel == 0 || rel == 1, "%s: A's release answers 0 or 1 (%d)", tag, rel);
    ST_CHECK(ldl_lock_tick(&b->lk) == 1, "%s: B renews after A's release", tag);
    ST_CHECK(ldl_lock_fencing_token(&b->lk) == fb, "%s: B keeps fence %lld", tag, (long long)fb);
    ST_CHECK(ldl_lock_release(&b->lk) == 1, "%s: B releases", tag);
    close_all();
}

/* A holds through every member, its current member the leader; the leader is cut off: its
   renewals must move to the majority within the call bound and the lock stays held */
static void partition_failover(int lead)
{
    client *a = &g_cl[0];
    char eps[600];
    uint64_t end;
    int o1 = lead % 3 + 1, o2 = (lead + 1) % 3 + 1;
    uint64_t renews;
    set_keys("failover");
    snprintf(eps, sizeof eps, "%s,%s,%s", endpoint(lead), endpoint(o1), endpoint(o2));
    g_ncl = 0;
    /* ttl 6 s (heartbeat 2 s) and a 3.5 s call bound: one renew may span the election */
    if (!client_init2(a, "A", 0, NULL, eps, 6000u, 3500u, 0)) return;
    g_ncl = 1;
    ST_CHECK(ldl_lock_acquire(&a->lk) == 1, "failover: A acquires");
    on_grant(a, 0);
    ST_CHECK(ldl_etcd_member(&a->e) == 0, "failover: A's current member is the leader (%d)", ldl_etcd_member(&a->e));
    reset_counters();
    ST_CHECK(ctl("partition", lead) == 0, "failover: pull m%d's peer cable", lead);
    end = st_now_ms() + 12000;
    while (st_now_ms() < end) { client_step(a); st_sleep_ms(STEP_MS); }
    renews = a->renews;
    ST_CHECK(ldl_lock_held(&a->lk), "failover: A still held 12 s after its leader was cut off (lost: %s)",
             ldl_reason_name(ldl_lock_reason(&a->lk)));
    ST_CHECK(renews >= 3, "failover: A renewed through the majority (%llu renewals)", (unsigned long long)renews);
    ST_CHECK(ldl_etcd_member(&a->e) != 0, "failover: A moved off the cut-off member");
    printf("figure: partition failover: leader m%d cut off; A held for 12 s through %llu renewals, slowest "
           "store call %llu ms, now on member index %d\n", lead, (unsigned long long)renews,
           (unsigned long long)a->max_call_ms, ldl_etcd_member(&a->e));
    ST_CHECK(ctl("heal", lead) == 0, "failover: plug m%d back", lead);
    ST_CHECK(ctl("wait-healthy", 60) == 0, "failover: healthy after the heal");
    ST_CHECK(ldl_lock_release(&a->lk) == 1, "failover: A releases");
    close_all();
}

static void test_partition(void)
{
    int lead, fol;
    char b_eps[600];
    const char *nn = getenv("LDL_ETCD_NETNS");
    if (!ST_CHECK(nn && strcmp(nn, "1") == 0, "partition: run through with_etcd_cluster.sh --netns "
                  "(LDL_ETCD_NETNS=%s): no network namespaces, no partition test", nn ? nn : "unset"))
        return;
    lead = ctl_leader(30);
    if (!ST_CHECK(lead > 0, "partition: a leader")) return;
    snprintf(b_eps, sizeof b_eps, "%s,%s", endpoint(lead % 3 + 1), endpoint((lead + 1) % 3 + 1));
    partition_round("leader", lead, endpoint(lead), b_eps, 0);

    lead = ctl_leader(30);
    if (!ST_CHECK(lead > 0, "partition: a leader after the heal")) return;
    fol = lead % 3 + 1;
    snprintf(b_eps, sizeof b_eps, "%s,%s", endpoint(lead), endpoint(fol % 3 + 1));   /* the other two */
    partition_round("follower", fol, endpoint(fol), b_eps, 0);

    lead = ctl_leader(30);
    if (!ST_CHECK(lead > 0, "partition: a leader before the failover round")) return;
    partition_failover(lead);

    lead = ctl_leader(30);
    if (!ST_CHECK(lead > 0, "partition: a leader before the control round")) return;
    snprintf(b_eps, sizeof b_eps, "%s,%s", endpoint(lead % 3 + 1), endpoint((lead + 1) % 3 + 1));
    partition_round("control", lead, endpoint(lead), b_eps, 1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cluster";
    const char *only = argc > 2 ? argv[2] : NULL;
    uint64_t t0 = st_now_ms();
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_ctl = getenv("LDL_ETCD_CTL");
    g_trace = getenv("LDL_ETCD_TRACE") && strcmp(getenv("LDL_ETCD_TRACE"), "1") == 0;
    if (!g_ctl || !getenv("LDL_ETCD_ENDPOINT_3")) {
        fprintf(stderr, "etcd_cluster: run through tests/store/with_etcd_cluster.sh\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* each case under its own time bound (etcdt_case): a hang fails naming it */
    if (strcmp(mode, "partition") == 0) {
        etcdt_case("partition", 300);
        test_partition();
    } else if (strcmp(mode, "cluster") == 0) {
        etcdt_case("control", 180);
        if (!only || strcmp(only, "control") == 0) test_control();
        etcdt_case("leaderkill", 180);
        if (!only || strcmp(only, "leaderkill") == 0) test_leaderkill();
        etcdt_case("pause", 180);
        if (!only || strcmp(only, "pause") == 0) test_pause();
        etcdt_case("slow", 180);
        if (!only || strcmp(only, "slow") == 0) test_slow();
        etcdt_case("restart", 240);
        if (!only || strcmp(only, "restart") == 0) test_restart();
    } else {
        fprintf(stderr, "usage: etcd_cluster cluster [case] | partition\n");
        curl_global_cleanup();
        return 2;
    }
    etcdt_case_end();
    ST_CHECK(g_violations == 0, "%ld safety violations (two holders trusted at once, a fence that did not rise)",
             g_violations);
    printf("figure: %s: %llu grants, top fence %lld, %ld violations, wall %llu ms\n", mode,
           (unsigned long long)g_grants_total, (long long)g_top_fence, g_violations,
           (unsigned long long)(st_now_ms() - t0));
    curl_global_cleanup();
    return st_report();
}
