/* tests/chaos/chaos.c -- a randomized fault campaign against a real store (issue 14).
 *
 *   chaos redis|pg|etcd SEED ROUNDS DIR   the campaign, then the five planted controls
 *                                         (etcd with CHAOS_ETCD_SESSION=1: every client's locks
 *                                         on a session, issue 34; unset: a lease per lock)
 *   chaos rcluster SEED ROUNDS DIR        Redis Cluster failover rounds (CHAOS_FAILOVER=1 only;
 *                                         run.sh redis-cluster-failover, decision 0405)
 *
 * One program, three roles, all forked from the orchestrator:
 *   clients   NCLIENT processes, each driving NKEYS locks (the same keys for everybody) over
 *             ONE store connection: kind 0 the synchronous adapter in manual mode, kind 1 the
 *             non-blocking view (manual mode, the only one SPEC allows), kind 2 the synchronous
 *             adapter in timer mode. Each grant is held for a random while, with fenced writes
 *             to the resource while ldl_lock_poll() == 1 and ldl_lock_valid_ms() > 0.
 *   resource  one process on a unix datagram socket: per key it keeps the highest fence and
 *             rejects lower ones; it logs every write it accepted or rejected.
 *   the real resource (issue 19): beside it, some writes go into the store under test itself,
 *             through the adapter's fenced-write helper, each accepted one appended to a log in
 *             the same transaction / script call; after the run the orchestrator dumps that
 *             log into DIR/X/real.log (see "the real resource" below).
 *   nemesis   the orchestrator itself: ROUNDS faults at random times from a seeded PRNG.
 * Every client appends its history (one write(2) per record, so a SIGKILL loses nothing) to
 * DIR/main/h-<pid>.log; tests/chaos/check.py judges it. The controls write DIR/ctl-X (X = l, c, r, k,
 * u) and must be flagged by the checker. Times are CLOCK_MONOTONIC milliseconds (one host).
 * Run through tests/chaos/run.sh (temp dir, pid files, cleanup trap). */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include "tests/store/redis_server.h"
#include "tests/store/pg_common.h"
#include "tests/store/redis_cluster_server.h"
#include <sys/un.h>
#include <sys/prctl.h>
#include <dirent.h>

#define NCLIENT 5
#define NKEYS   3
/* the lock's timings: variables since etcd (ST_ETCD) needs its own -- a lease is whole
   seconds, at least 2 s with etcd's default election timeout -- set once in main() */
static uint32_t g_ttl = 400u, g_hb = 100u, g_drift = 40u;
#define TTL     g_ttl
#define HB      g_hb
#define DRIFT   g_drift
#define ETCD_TTL 2000u               /* etcd: the lease the server keeps IS the lock's TTL */
#define ETCD_HB   500u
#define BACK_MAX (DRIFT / 2)         /* the largest backward clock step the nemesis makes */
#define OFFBASE 1000000000LL         /* lock clock = real ms + OFFBASE + the client's offset */
#define SLOW_ONE_IN 200              /* one write in SLOW_ONE_IN is delivered late */
#define PG_OPTS "connect_timeout=2 tcp_user_timeout=1000 keepalives=1 " \
                "options='-c statement_timeout=1000 -c lock_timeout=500'"
#define PG_TABLE "ldl_chaos"
/* the real resource's connection: a fenced writer waits at most this long for the fence row a
   stopped writer holds locked, so its client's locks keep their heartbeats */
#define PG_WOPTS "connect_timeout=2 tcp_user_timeout=1000 keepalives=1 " \
                 "options='-c statement_timeout=1000 -c lock_timeout=150'"
#define REAL_ONE_IN 3                /* one write in REAL_ONE_IN (and every late one) also goes to
                                        the real resource */
#ifndef CHAOS_FENCED                 /* -DCHAOS_FENCED=0: the campaign's real writes skip the fence
                                        check (an experiment: check (6) must then fail) */
#define CHAOS_FENCED 1
#endif

/* ST_ETCD (issue 21): a 3-member etcd cluster in network namespaces, started by run.sh through
   tests/store/with_etcd_cluster.sh --netns (the whole campaign runs in the client namespace).
   TTL 2000 ms: etcd's lease is whole seconds and at least 2 s, and the lease the server keeps
   must be the lock's TTL for check (5). Faults: server-stop pauses one member (the leader one
   time in two), server-kill SIGKILLs the leader and restarts it on its data dir, drop-conn and
   backend-kill become "partition" (a member's peer cable pulled, the leader one time in two).
   No real resource (the etcd adapter has no fenced-write helper), so no control u. */
/* ST_RCLUSTER (issue 20, decision 0405): a 6-node Redis Cluster (3 masters, one replica each,
   cluster-node-timeout RC_NODE_TIMEOUT) started by the campaign itself (redis_cluster_server.h),
   only with failover rounds (run.sh redis-cluster-failover). Clients use the Cluster views
   (ldl_redis_cluster, ldl_redis_cluster_async: epoch-ordered fences, decision 0115); every
   client's real writes go through a synchronous view of its own (ldl_redis_cluster_fence: the
   non-blocking view has no fenced write). The campaign's keys and their resources' marks are
   picked so that ONE master owns all of them: that master is the one every failover takes
   down. See rc_failover_round(). */
enum { ST_REDIS = 0, ST_PG = 1, ST_ETCD = 2, ST_RCLUSTER = 3 };
enum { K_SYNC = 0, K_ASYNC = 1, K_TIMER = 2 };

/* the campaign's lock keys (ST_RCLUSTER: picked on one master, see rc_pick_keys) */
static char g_keys[NKEYS][16] = { "k0", "k1", "k2" };
#define RC_NODE_TIMEOUT "2000"       /* cluster-node-timeout (ms) of the failover rounds */
#define RC_CALL_MS 150               /* the Cluster views' connect and command timeout */
static char g_rc_seeds[NN * 24];     /* every node: a respawned client finds a live one */
static int g_rc_slot = -1;           /* the slot of g_keys[0]'s lease: its master is the victim */

static volatile sig_atomic_t g_quit;
static void on_term(int sig) { (void)sig; g_quit = 1; }

/* ------------------------------------------------------------ a seeded PRNG (splitmix64) */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rnd_in(uint64_t *s, uint64_t lo, uint64_t hi) { return lo + rnd(s) % (hi - lo + 1); }

/* ------------------------------------------------------------ the resource server */
typedef struct res_key { char key[64]; int64_t high; } res_key;

static int res_main(const char *dir)
{
    struct sockaddr_un a;
    res_key keys[32];
    int nkeys = 0, fd, logfd;
    char path[400];
    memset(keys, 0, sizeof keys);
    fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s/res.sock", dir);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("res bind"); return 1; }
    snprintf(path, sizeof path, "%s/res.log", dir);
    logfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (logfd < 0) return 1;
    signal(SIGTERM, on_term);
    while (!g_quit) {
        struct pollfd p;
        char buf[256], key[64], holder[64], out[320];
        struct sockaddr_un from;
        socklen_t flen = sizeof from;
        long long tok, t0, seq;
        ssize_t n;
        int i, acc, len;
        p.fd = fd; p.events = POLLIN; p.revents = 0;
        if (poll(&p, 1, 100) <= 0) continue;
        n = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &flen);
        if (n <= 0) continue;
        buf[n] = 0;
        if (sscanf(buf, "%63s %lld %63s %lld %lld", key, &tok, holder, &t0, &seq) != 5) continue;
        for (i = 0; i < nkeys && strcmp(keys[i].key, key) != 0; i++) {}
        if (i == nkeys && nkeys < 32) { snprintf(keys[i].key, sizeof keys[i].key, "%s", key); nkeys++; }
        acc = tok >= 1 && i < 32 && tok >= keys[i].high;
        if (acc) keys[i].high = tok;
        len = snprintf(out, sizeof out, "%llu %s %lld %s %lld %d\n", (unsigned long long)st_now_ms(),
                       key, tok, holder, t0, acc);
        if (write(logfd, out, (size_t)len) != len) return 1;
        len = snprintf(out, sizeof out, "%lld %d", seq, acc);
        (void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
    }
    close(logfd);
    close(fd);
    return 0;
}

static pid_t res_start(const char *dir)
{
    pid_t pid;
    char pf[400];
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        _exit(res_main(dir));
    }
    if (pid > 0) {
        FILE *f;
        snprintf(pf, sizeof pf, "%s/chaos-res-%d.pid", getenv("LDL_TEST_DIR"), (int)pid);
        if ((f = fopen(pf, "w")) != NULL) { fprintf(f, "%d\n", (int)pid); fclose(f); }
        st_sleep_ms(50);                    /* the socket is bound before the first client */
    }
    return pid;
}

static void unpidfile(pid_t pid, const char *what)
{
    char pf[400];
    snprintf(pf, sizeof pf, "%s/chaos-%s-%d.pid", getenv("LDL_TEST_DIR"), what, (int)pid);
    remove(pf);
}

/* ------------------------------------------------------------ a client */
typedef struct client client;

typedef struct tmr { int on; uint64_t due; void (*fire)(void *); void *arg; } tmr;

typedef struct cl_lock {
    client  *cl;
    int      idx;
    char     key[48];
    ldl_lock lk;
    ldl_store       ws;             /* the wrappers the lock calls */
    ldl_async_store was;
    int64_t  held;                  /* token of the grant being held (0 = none) */
    int      gseq;                  /* grants so far */
    int      lost;                  /* on_lost calls since the last grant */
    uint64_t acq_sl, acq_sr;        /* start' of the last acquire request (lock clock, real) */
    uint64_t hold_until, next_try, next_write;
    uint64_t dl;                    /* the lock's deadline last logged (lock clock) */
} cl_lock;

typedef struct wreq {               /* one write to the real resource */
    struct client *c;
    int      used;                  /* a non-blocking one in flight */
    int      idx, fenced;
    int64_t  tok;
    uint64_t t0;                    /* decided at (real ms) */
    long long seq;
    char     holder[64], res[128], payload[160];
} wreq;
#define NWPEND 8                    /* non-blocking real writes in flight, per client */

struct client {
    int      store, kind, id;
    uint32_t ttl, hb, drift;
    int      hfd;                   /* history */
    const char *dir;
    int64_t  off;                   /* clock offset (ms) */
    uint64_t last_l, last_r;        /* the last clock read (lock clock, real) */
    uint64_t last_back;             /* real time of the last backward step applied */
    uint64_t rng;
    int64_t *repeat;                /* control: a store that repeats its first token */
    uint32_t leak;                  /* control: the store is asked for leak x the TTL */
    /* the store */
    redisContext   *rc;
    ldl_redis       rr;
    ldl_redis_async ra;
    ldl_redis_req   rreq[64];
    PGconn         *pc;
    ldl_pg          pg;
    ldl_pg_async    pa;
    ldl_pg_req      preq[64];
    ldl_redis_cluster       rcs;    /* ST_RCLUSTER: the synchronous view (kinds 0, 2) */
    ldl_redis_cluster_async rca;    /* the non-blocking view (kind 1) */
    ldl_redis_cluster_req   rcreq[64];
    ldl_redis_cluster       wrcs;   /* its real resource: a synchronous view of its own */
    int             rcs_on, rca_on, wrcs_on;
    ldl_etcd        et;             /* etcd (ST_ETCD): the cluster's members, this client's list */
    ldl_etcd_async  ea;
    ldl_etcd_req    ereq[2 * NKEYS + 4];
    char            ewhy[LDL__ETCD_ERR_MAX]; /* the non-blocking view's why last logged ("Y -1") */
    uint64_t        eka, esg;       /* its session keepalives / grants last logged ("S") */
    ldl_store       real;
    ldl_async_store areal;
    /* the real resource: a connection of its own (the PostgreSQL lock refuses to run inside a
       transaction, and the non-blocking views own theirs) */
    redisContext   *wrc;
    ldl_redis       wr;
    PGconn         *wpc;
    ldl_pg          wpg;
    uint64_t        wnext_reconn;
    char            tag[32];        /* resources are named TAG/KEY; TAG = the history dir's name */
    wreq            wpend[NWPEND];
    uint64_t        next_reconn;
    tmr             timers[2 * NKEYS];
    cl_lock         L[NKEYS];
    int             nlocks;
    int             resfd;
    struct sockaddr_un res;
    long long       wseq;
    int             ctl;            /* control pipe from the nemesis, -1 = none */
};

/* one log line "<CLOCK_MONOTONIC ms> <fmt...>\n" in ONE write(2): a SIGKILL between two
   records loses nothing, and records of one file never interleave. A log that cannot be
   written ends the process (a history with holes could hide a violation). */
static void rec(int fd, const char *fmt, ...)
{
    char buf[400];
    int n, m;
    va_list ap;
    n = snprintf(buf, sizeof buf, "%llu ", (unsigned long long)st_now_ms());
    va_start(ap, fmt);
    m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n += m < (int)(sizeof buf - (size_t)n - 1) ? m : (int)(sizeof buf - (size_t)n - 2);
    buf[n++] = '\n';
    if (write(fd, buf, (size_t)n) != n) _exit(90);
}
#define hlog(c, ...) rec((c)->hfd, __VA_ARGS__)     /* a client's history */
#define nlog(k, ...) rec((k)->nlog, __VA_ARGS__)    /* the nemesis' log */

static uint64_t clk_now(void *ctx)
{
    client *c = (client *)ctx;
    uint64_t r = st_now_ms();
    c->last_r = r;
    c->last_l = (uint64_t)((int64_t)r + OFFBASE + c->off);
    return c->last_l;
}

/* timers for timer mode, due in real time; fired from the client's loop */
static uintptr_t t_set(void *ctx, void (*fire)(void *), void *arg, uint32_t delay)
{
    client *c = (client *)ctx;
    size_t i;
    for (i = 0; i < sizeof c->timers / sizeof c->timers[0]; i++) {
        if (!c->timers[i].on) {
            c->timers[i].on = 1;
            c->timers[i].due = st_now_ms() + delay;
            c->timers[i].fire = fire;
            c->timers[i].arg = arg;
            return (uintptr_t)(i + 1);
        }
    }
    return 0;
}
static void t_clear(void *ctx, uintptr_t h)
{
    client *c = (client *)ctx;
    if (h >= 1 && h <= sizeof c->timers / sizeof c->timers[0]) c->timers[h - 1].on = 0;
}
static void timers_run(client *c)
{
    size_t i;
    uint64_t now = st_now_ms();
    for (i = 0; i < sizeof c->timers / sizeof c->timers[0]; i++) {
        if (c->timers[i].on && c->timers[i].due <= now) {
            c->timers[i].on = 0;
            c->timers[i].fire(c->timers[i].arg);
        }
    }
}

/* etcd (diagnostics for check (5), decision 0407): a synchronous call's answer that is not a
   clean grant / refusal / renew is logged with the adapter's why -- "Y IDX RC WHY..." (the
   checker ignores it; its liveness report prints it) */
static void why_log(client *c, int idx, int rc)
{
    if (c->store == ST_ETCD) hlog(c, "Y %d %d %s", idx, rc, ldl_etcd_why(&c->et));
}

/* the store wrappers: they log each call with start' = the lock's last clock read */
static int w_acquire(void *ctx, const char *key, uint32_t ttl, int64_t *tok)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    int rc;
    l->acq_sl = c->last_l; l->acq_sr = c->last_r;
    rc = c->real.acquire(c->real.ctx, key, c->leak ? ttl * c->leak : ttl, tok);
    if (rc == 1 && c->repeat) {                       /* control: repeat the first token */
        if (*c->repeat == 0) *c->repeat = *tok; else *tok = *c->repeat;
    }
    hlog(c, "a %d %llu %llu %d %lld", l->idx, (unsigned long long)l->acq_sl,
         (unsigned long long)l->acq_sr, rc, rc == 1 ? (long long)*tok : 0LL);
    if (rc != 0 && rc != 1) why_log(c, l->idx, rc);
    return rc;
}
static int w_renew(void *ctx, const char *key, int64_t tok, uint32_t ttl)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    uint64_t sl = c->last_l, sr = c->last_r;
    int rc = c->real.renew(c->real.ctx, key, tok, c->leak ? ttl * c->leak : ttl);
    hlog(c, "r %d %llu %llu %d %lld", l->idx, (unsigned long long)sl, (unsigned long long)sr, rc, (long long)tok);
    if (rc != 1) why_log(c, l->idx, rc);
    return rc;
}
static int w_release(void *ctx, const char *key, int64_t tok)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    int rc = c->real.release(c->real.ctx, key, tok);
    hlog(c, "l %d %lld %d", l->idx, (long long)tok, rc);
    return rc;
}
static int wa_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    int rc;
    l->acq_sl = c->last_l; l->acq_sr = c->last_r;
    rc = c->areal.acquire(c->areal.ctx, op, key, ttl);
    hlog(c, "a %d %llu %llu %d 0", l->idx, (unsigned long long)l->acq_sl, (unsigned long long)l->acq_sr, rc);
    return rc;
}
static int wa_renew(void *ctx, ldl_op *op, const char *key, int64_t tok, uint32_t ttl)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    uint64_t sl = c->last_l, sr = c->last_r;
    int rc = c->areal.renew(c->areal.ctx, op, key, tok, ttl);
    /* 'R': submitted; the answer comes later through ldl_op_complete, unseen here */
    hlog(c, "R %d %llu %llu %d %lld", l->idx, (unsigned long long)sl, (unsigned long long)sr, rc, (long long)tok);
    return rc;
}
static int wa_release(void *ctx, ldl_op *op, const char *key, int64_t tok)
{
    cl_lock *l = (cl_lock *)ctx;
    client *c = l->cl;
    int rc = c->areal.release(c->areal.ctx, op, key, tok);
    hlog(c, "l %d %lld %d", l->idx, (long long)tok, rc);
    return rc;
}
static void wa_cancel(void *ctx, ldl_op *op)
{
    cl_lock *l = (cl_lock *)ctx;
    l->cl->areal.cancel(l->cl->areal.ctx, op);
}

static void on_lost(void *user, int reason)
{
    cl_lock *l = (cl_lock *)user;
    client *c = l->cl;
    l->lost++;
    hlog(c, "L %d %d %llu %llu", l->idx, reason, (unsigned long long)c->last_l, (unsigned long long)c->last_r);
}

/* where the nemesis finds this client's connection: a port (Redis) or a backend pid (PG) */
static void note_conn(client *c)
{
    char path[400], tmp[420];
    long v = -1;
    FILE *f;
    if (c->ctl < 0) return;
    if (c->store == ST_REDIS) {
        int fd = c->kind == K_ASYNC ? ldl_redis_async_fd(&c->ra, NULL) : (c->rc ? c->rc->fd : -1);
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        if (fd >= 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0) v = ntohs(a.sin_port);
    } else if (c->pc && PQstatus(c->pc) == CONNECTION_OK) {
        v = PQbackendPID(c->pc);
    }
    if (v <= 0) return;
    snprintf(path, sizeof path, "%s/conn-%d", c->dir, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if ((f = fopen(tmp, "w")) == NULL) return;
    fprintf(f, "%ld\n", v);
    fclose(f);
    rename(tmp, path);
}

static void quiet_notices(void *arg, const char *msg) { (void)arg; (void)msg; }

static int etcd_sessions(void)
{
    const char *v = getenv("CHAOS_ETCD_SESSION");
    return v && strcmp(v, "1") == 0;
}

/* etcd: every member, the list rotated by the client's id so the clients start on different
   members; bounds well inside the lock's TTL (a sync client's call stalls its other locks) */
static int store_open_etcd(client *c)
{
    ldl_etcd_config cfg;
    char eps[600], name[40];
    int i, n = 0;
    eps[0] = '\0';
    for (i = 0; i < 3; i++) {
        const char *v;
        snprintf(name, sizeof name, "LDL_ETCD_ENDPOINT_%d", (c->id + i) % 3 + 1);
        if ((v = getenv(name)) == NULL) return -1;
        n += snprintf(eps + n, sizeof eps - (size_t)n, "%s%s", i ? "," : "", v);
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.endpoints = eps;
    cfg.prefix = "chaos/";
    cfg.attempt_ms = 300;
    cfg.call_ms = 1000;
    /* CHAOS_ETCD_SESSION=1 (issue 34, decision 1013): every client's locks on one session
       lease of its own (sync: the ldl_etcd's, per call; non-blocking: the view's, renews
       coalesced); unset: a lease per lock, as before */
    if (etcd_sessions()) cfg.session_ms = ETCD_TTL;
    if (ldl_etcd_init(&c->et, &cfg) != LDL_OK) { fprintf(stderr, "chaos: %s\n", ldl_etcd_why(&c->et)); return -1; }
    if (c->kind == K_ASYNC) {
        if (ldl_etcd_async_init(&c->ea, &c->et, c->ereq, sizeof c->ereq / sizeof c->ereq[0]) != LDL_OK) return -1;
        c->areal = ldl_etcd_async_store(&c->ea);
    } else {
        c->real = ldl_etcd_store(&c->et);
    }
    return 0;
}

/* Redis Cluster: the views need _free after any init answer */
static void store_close_rc(client *c)
{
    if (c->rcs_on) { ldl_redis_cluster_free(&c->rcs); c->rcs_on = 0; }
    if (c->rca_on) { ldl_redis_cluster_async_free(&c->rca); c->rca_on = 0; }
}

static int store_open_rc(client *c)
{
    if (c->kind == K_ASYNC) {
        c->rca_on = 1;
        if (ldl_redis_cluster_async_init(&c->rca, g_rc_seeds, "chaos", RC_CALL_MS, c->rcreq, 64) != LDL_OK)
            return -1;
        c->areal = ldl_redis_cluster_async_store(&c->rca);
    } else {
        c->rcs_on = 1;
        if (ldl_redis_cluster_init(&c->rcs, g_rc_seeds, "chaos", RC_CALL_MS) != LDL_OK) return -1;
        c->real = ldl_redis_cluster_store(&c->rcs);
    }
    return 0;
}

static int store_open(client *c)
{
    if (c->store == ST_ETCD) return store_open_etcd(c);
    if (c->store == ST_RCLUSTER) return store_open_rc(c);
    if (c->store == ST_REDIS) {
        int port = atoi(getenv("CHAOS_REDIS_PORT"));
        if (c->kind == K_ASYNC) {
            c->rc = redisConnectNonBlock("127.0.0.1", port);
            if (!c->rc || ldl_redis_async_init(&c->ra, c->rc, "chaos", c->rreq, 64) != LDL_OK) return -1;
            c->areal = ldl_redis_async_store(&c->ra);
        } else {
            c->rc = rs_connect_port(port, 150);
            if (!c->rc || ldl_redis_init(&c->rr, c->rc, "chaos") != LDL_OK) return -1;
            c->real = ldl_redis_store(&c->rr);
        }
    } else {
        c->pc = pgt_connect(PG_OPTS);
        PQsetNoticeProcessor(c->pc, quiet_notices, NULL);
        if (PQstatus(c->pc) != CONNECTION_OK || ldl_pg_init(&c->pg, c->pc, PG_TABLE) != LDL_OK) return -1;
        if (c->kind == K_ASYNC) {
            if (ldl_pg_async_init(&c->pa, &c->pg, c->preq, 64) != LDL_OK) return -1;
            c->areal = ldl_pg_async_store(&c->pa);
        } else {
            c->real = ldl_pg_store(&c->pg);
        }
    }
    note_conn(c);
    return 0;
}

/* keep the link alive: pump (non-blocking view) and reconnect after a failure */
static void store_service(client *c)
{
    uint64_t now = st_now_ms();
    if (c->store == ST_ETCD) {          /* libcurl reconnects by itself; the view needs its pump */
        if (c->kind == K_ASYNC) {
            const ldl_etcd_stats *st;
            const char *why;
            (void)ldl_etcd_async_pump(&c->ea);
            /* diagnostics (decision 0407): the view's why whenever it changed ("Y -1 0 WHY"),
               and its session counters whenever a keepalive was started or a lease granted
               ("S KEEPALIVES GRANTS"): the record follows the pump that started it */
            why = ldl_etcd_async_why(&c->ea);
            if (why[0] && strcmp(why, c->ewhy) != 0) {
                snprintf(c->ewhy, sizeof c->ewhy, "%s", why);
                hlog(c, "Y -1 0 %s", why);
            }
            st = ldl_etcd_async_stats(&c->ea);
            if (st && (st->keepalives != c->eka || st->session_grants != c->esg)) {
                c->eka = st->keepalives;
                c->esg = st->session_grants;
                hlog(c, "S %llu %llu", (unsigned long long)c->eka, (unsigned long long)c->esg);
            }
        }
        return;
    }
    if (c->store == ST_RCLUSTER) {      /* the views reconnect by themselves (pump / next call) */
        if (c->kind == K_ASYNC) {
            (void)ldl_redis_cluster_async_pump(&c->rca);
            /* a master stopped past 1 s (a failover): its requests answered LDL_ESTORE, its link
               dropped -- an answer of the deposed master resumed later is never taken */
            (void)ldl_redis_cluster_async_fail_stalled(&c->rca, 1000);
        }
        return;
    }
    if (c->store == ST_REDIS && c->kind == K_ASYNC) {
        if (ldl_redis_async_pump(&c->ra) < 0 && now >= c->next_reconn) {
            c->next_reconn = now + 50;
            if (ldl_redis_async_reconnect(&c->ra) == LDL_OK) { hlog(c, "C"); note_conn(c); }
        }
    } else if (c->store == ST_REDIS) {
        if (c->rc->err && now >= c->next_reconn) {
            c->next_reconn = now + 50;
            if (rs_reconnect(c->rc, 150) == REDIS_OK) { hlog(c, "C"); note_conn(c); }
        }
    } else if (c->kind == K_ASYNC) {
        if (ldl_pg_async_pump(&c->pa) < 0 && now >= c->next_reconn) {
            PGconn *nc;
            c->next_reconn = now + 100;
            ldl_pg_async_drop(&c->pa);
            nc = pgt_connect_nb(PG_OPTS, 1000);
            if (nc) {
                PQsetNoticeProcessor(nc, quiet_notices, NULL);
                PQfinish(c->pc);
                c->pc = nc;
                if (ldl_pg_async_rebind(&c->pa, nc) == LDL_OK) { hlog(c, "C"); note_conn(c); }
            }
        }
    } else {
        if (PQstatus(c->pc) == CONNECTION_BAD && now >= c->next_reconn) {
            c->next_reconn = now + 100;
            PQreset(c->pc);
            if (PQstatus(c->pc) == CONNECTION_OK) { hlog(c, "C"); note_conn(c); }
        }
    }
}

/* ------------------------------------------------------------ the real resource (issue 19)
 * Beside the datagram resource, writes into the store under test itself, through the
 * adapter's fenced-write helper, on a connection of the client's own (Redis, non-blocking
 * clients: ldl_redis_async_fence, in their lock connection's pipeline). Resource R is named
 * TAG/KEY (TAG = the history dir's name, KEY = the lock key that guards it). Each accepted
 * write stores its payload "HOLDER WSEQ T0" and appends "FENCE HOLDER WSEQ T0" to R's log
 * in the SAME transaction / script call, so the log holds exactly what the store accepted,
 * in the store's own order; real_dump() writes it into the run dir for check.py (6).
 *   PostgreSQL  public.ldl_chaos_data (resource, payload) and public.ldl_chaos_wlog (id
 *               bigserial, resource, fence, payload): BEGIN; ldl_pg_fence; one statement
 *               that upserts the data row and inserts the log row; COMMIT.
 *   Redis       ldl_redis_fence running RPUSH on the list "chaos:{R}:log" (the script runs
 *               one command: the written key is the log itself).
 * Everything store-specific is in the switches of real_setup, real_open, real_close,
 * real_link, real_write and real_dump: a third store adds one case to each. fenced = 0 is the planted
 * control's broken helper: the same write without the fence check. */
#define PG_DATA "public.ldl_chaos_data"
#define PG_WLOG "public.ldl_chaos_wlog"

/* Redis: the adapter's script runs ONE caller command, so the written key IS the log: the
   list "chaos:{R}:log", hash-tagged on R like the mark "{R}:chaos:mark" (one slot), and each
   write RPUSHes "FENCE HOLDER WSEQ T0" to it; what R holds is the list's last entry */
static void rkey(char *out, size_t n, const char *res, const char *what)
{
    snprintf(out, n, "chaos:{%s}:%s", res, what);
}

static void real_log(client *c, const wreq *w, int rc);
static int real_link(client *c);

/* the script's answer and the RPUSH's reply as real_write answers */
static int redis_answer(int rc, redisReply *rp)
{
    int ok = rc == 1 && rp && rp->type == REDIS_REPLY_INTEGER && rp->integer >= 1;
    if (rp) freeReplyObject(rp);
    return rc == 1 ? (ok ? 1 : -1) : rc == 0 ? 0 : -1;
}

static void redis_fence_done(void *ctx, int rc, redisReply *reply)
{
    wreq *w = (wreq *)ctx;
    real_log(w->c, w, redis_answer(rc, reply));
    w->used = 0;
}

static int real_write_redis(client *c, const wreq *w)
{
    char key[200], entry[200];
    const char *argv[3];
    redisReply *rp = NULL;
    int rc, i;
    rkey(key, sizeof key, w->res, "log");
    snprintf(entry, sizeof entry, "%lld %s", (long long)w->tok, w->payload);
    argv[0] = "RPUSH"; argv[1] = key; argv[2] = entry;
    if (c->kind == K_ASYNC && w->fenced) {
        /* the non-blocking view: queued in the lock connection's own pipeline, answered
           from a later pump (logged then) */
        for (i = 0; i < NWPEND && c->wpend[i].used; i++) {}
        if (i == NWPEND) return -1;
        c->wpend[i] = *w;
        c->wpend[i].c = c;
        c->wpend[i].used = 1;
        if (ldl_redis_async_fence(&c->ra, w->res, w->tok, 1, NULL, 3, argv, NULL, redis_fence_done,
                                  &c->wpend[i]) == LDL_OK) return 2;
        c->wpend[i].used = 0;
        return -1;
    }
    if (real_link(c) != 0) return -1;
    if (w->fenced) rc = ldl_redis_fence(&c->wr, w->res, w->tok, 1, NULL, 3, argv, NULL, &rp);
    else rc = (rp = rs_cmd(c->wrc, "RPUSH", key, entry, NULL)) != NULL ? 1 : -1;   /* no check */
    return redis_answer(rc, rp);
}

/* Redis Cluster: the same list, through the client's synchronous Cluster view (routed to the
   master of the mark's slot: "chaos:{R}:log" shares the mark's hash tag R). The planted
   control's unfenced write goes to that slot's master directly */
static int real_write_rc(client *c, const wreq *w)
{
    char key[200], entry[200];
    const char *argv[3];
    redisReply *rp = NULL;
    int rc;
    rkey(key, sizeof key, w->res, "log");
    snprintf(entry, sizeof entry, "%lld %s", (long long)w->tok, w->payload);
    argv[0] = "RPUSH"; argv[1] = key; argv[2] = entry;
    if (w->fenced) {
        rc = ldl_redis_cluster_fence(&c->wrcs, w->res, w->tok, 1, NULL, 3, argv, NULL, &rp);
    } else {
        int node = master_of_slot(ldl_redis_cluster_keyslot(key, strlen(key)));
        redisContext *nc = node >= 0 ? conn(node) : NULL;
        rc = nc && (rp = rs_cmd(nc, "RPUSH", key, entry, NULL)) != NULL ? 1 : -1;   /* no check */
        if (nc) redisFree(nc);
    }
    return redis_answer(rc, rp);
}

static int real_dump_redis(redisContext *radm, const char *res, FILE *lf)
{
    char key[200];
    redisReply *rp;
    size_t j;
    int ok;
    rkey(key, sizeof key, res, "log");
    rp = rs_cmd(radm, "LRANGE", key, "0", "-1", NULL);
    ok = rp && rp->type == REDIS_REPLY_ARRAY;
    for (j = 0; ok && j < rp->elements; j++) {
        ok = rp->element[j]->type == REDIS_REPLY_STRING;
        if (ok) fprintf(lf, "%s %lu %s\n", res, (unsigned long)j, rp->element[j]->str);
    }
    if (rp) freeReplyObject(rp);
    return ok;
}

/* a PQexec whose command tag must be `want` (a failed transaction's COMMIT answers ROLLBACK) */
static int pg_cmd(PGconn *pc, const char *sql, const char *want)
{
    PGresult *r = PQexec(pc, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(r), want) == 0;
    PQclear(r);
    return ok;
}

/* once per server, by the orchestrator: the tables the writes need */
static int real_setup(int store, redisContext *radm, PGconn *padm)
{
    (void)radm;
    switch (store) {
    case ST_REDIS:
        return 0;                           /* keys need no set-up */
    case ST_ETCD:
        return 0;                           /* etcd has no fenced-write helper: no real resource */
    case ST_RCLUSTER:
        return 0;
    case ST_PG: {
        ldl_pg fp;
        if (!pg_cmd(padm, "CREATE TABLE IF NOT EXISTS " PG_DATA
                    " (resource text PRIMARY KEY, payload text NOT NULL)", "CREATE TABLE") ||
            !pg_cmd(padm, "CREATE TABLE IF NOT EXISTS " PG_WLOG " (id bigserial PRIMARY KEY, "
                    "resource text NOT NULL, fence bigint NOT NULL, payload text NOT NULL)", "CREATE TABLE"))
            return -1;
        /* the fence table, created once here rather than by five clients at once */
        if (ldl_pg_init_ex(&fp, padm, PG_TABLE, LDL_PG_FENCE) != LDL_OK) {
            fprintf(stderr, "chaos: fence table: %s\n", ldl_pg_why(&fp));
            return -1;
        }
        return 0;
    }
    default:
        return -1;
    }
}

static int real_open(client *c)
{
    switch (c->store) {
    case ST_ETCD:
        return 0;                           /* (no real resource, see real_setup) */
    case ST_RCLUSTER:
        c->wrcs_on = 1;
        return ldl_redis_cluster_init(&c->wrcs, g_rc_seeds, "chaos", RC_CALL_MS) == LDL_OK ? 0 : -1;
    case ST_REDIS:
        c->wrc = rs_connect_port(atoi(getenv("CHAOS_REDIS_PORT")), 150);
        return c->wrc && ldl_redis_init(&c->wr, c->wrc, "chaos") == LDL_OK ? 0 : -1;
    case ST_PG:
        c->wpc = pgt_connect(PG_WOPTS);
        PQsetNoticeProcessor(c->wpc, quiet_notices, NULL);
        if (PQstatus(c->wpc) != CONNECTION_OK) return -1;
        if (ldl_pg_init_ex(&c->wpg, c->wpc, PG_TABLE, LDL_PG_FENCE) != LDL_OK) {
            fprintf(stderr, "chaos: fenced writer: %s\n", ldl_pg_why(&c->wpg));
            return -1;
        }
        return 0;
    default:
        return -1;
    }
}

static void real_close(client *c)
{
    if (c->wrc) { redisFree(c->wrc); c->wrc = NULL; }
    if (c->wpc) { PQfinish(c->wpc); c->wpc = NULL; }
    if (c->wrcs_on) { ldl_redis_cluster_free(&c->wrcs); c->wrcs_on = 0; }
}

/* a link the nemesis broke is mended before the next write (at most every 100 ms);
   0 when the link is usable */
static int real_link(client *c)
{
    uint64_t now = st_now_ms();
    switch (c->store) {
    case ST_RCLUSTER:
        return 0;                           /* the view reconnects at its next call */
    case ST_REDIS:
        if (!c->wrc->err) return 0;
        if (now < c->wnext_reconn) return -1;
        c->wnext_reconn = now + 100;
        return rs_reconnect(c->wrc, 150) == REDIS_OK ? 0 : -1;
    case ST_PG:
        if (PQstatus(c->wpc) == CONNECTION_OK) return 0;
        if (now < c->wnext_reconn) return -1;
        c->wnext_reconn = now + 100;
        PQreset(c->wpc);
        return PQstatus(c->wpc) == CONNECTION_OK ? 0 : -1;
    default:
        return -1;
    }
}

/* one write w: 1 accepted (committed), 0 refused as stale by the fence check, -1 no
   (certain) answer: an error, a lost link; 2 submitted, real_log()ged when answered */
static int real_write(client *c, const wreq *w)
{
    switch (c->store) {
    case ST_REDIS:
        return real_write_redis(c, w);
    case ST_RCLUSTER:
        return real_write_rc(c, w);
    case ST_PG: {
        char ftxt[24];
        const char *v[3];
        PGresult *r;
        int ok, f = 1;
        if (real_link(c) != 0 || !pg_cmd(c->wpc, "BEGIN", "BEGIN")) return -1;
        if (w->fenced) f = ldl_pg_fence(&c->wpg, w->res, w->tok);     /* the row stays locked */
        if (f == 1) {
            snprintf(ftxt, sizeof ftxt, "%lld", (long long)w->tok);
            v[0] = w->res; v[1] = ftxt; v[2] = w->payload;
            r = PQexecParams(c->wpc,
                "WITH d AS (INSERT INTO " PG_DATA " AS d (resource, payload) VALUES ($1, $3) "
                "ON CONFLICT (resource) DO UPDATE SET payload = EXCLUDED.payload RETURNING 1) "
                "INSERT INTO " PG_WLOG " (resource, fence, payload) SELECT $1, $2::bigint, $3 FROM d",
                3, NULL, v, NULL, NULL, 0);
            ok = PQresultStatus(r) == PGRES_COMMAND_OK && strcmp(PQcmdTuples(r), "1") == 0;
            PQclear(r);
            if (ok) return pg_cmd(c->wpc, "COMMIT", "COMMIT") ? 1 : -1;
            f = -1;
        }
        (void)pg_cmd(c->wpc, "ROLLBACK", "ROLLBACK");
        return f == 0 ? 0 : -1;
    }
    default:
        return -1;
    }
}

/* "F IDX HOLDER TOKEN T0 WSEQ FENCED RC" in the history, when the answer is known */
static void real_log(client *c, const wreq *w, int rc)
{
    hlog(c, "F %d %s %lld %llu %lld %d %d", w->idx, w->holder, (long long)w->tok,
         (unsigned long long)w->t0, w->seq, w->fenced, rc);
}

/* a write to the real resource of lock l with token tok, decided at t0 (real ms): as
   real_write answers */
static int real_put(client *c, cl_lock *l, int64_t tok, uint64_t t0, int fenced)
{
    wreq w;
    int rc;
    if (c->store == ST_ETCD) return -1;     /* no real resource: nothing written, nothing logged */
    memset(&w, 0, sizeof w);
    w.idx = l->idx; w.fenced = fenced; w.tok = tok; w.t0 = t0; w.seq = ++c->wseq;
    snprintf(w.res, sizeof w.res, "%s/%s", c->tag, l->key);
    snprintf(w.holder, sizeof w.holder, "%d:%d:%d:%d", (int)getpid(), c->id, l->idx, l->gseq);
    snprintf(w.payload, sizeof w.payload, "%s %lld %llu", w.holder, w.seq, (unsigned long long)t0);
    rc = real_write(c, &w);
    if (rc != 2) real_log(c, &w, rc);
    return rc;
}

/* after a run, by the orchestrator: what the store accepted for TAG/KEY, each key of keys[],
   into DIR/real.log ("RESOURCE ORDER FENCE HOLDER WSEQ T0", the store's order) and, where
   the data lives apart from the log (PostgreSQL), what it holds into DIR/real-data.log
   ("RESOURCE HOLDER WSEQ T0"). 0 when done */
static int real_dump(int store, redisContext *radm, PGconn *padm, const char *dir, const char *tag,
                     const char *const *keys, int nkeys)
{
    char path[480], res[128];
    FILE *lf, *df = NULL;
    int i, ok = 1;
    snprintf(path, sizeof path, "%s/real.log", dir);
    if ((lf = fopen(path, "w")) == NULL) return -1;
    snprintf(path, sizeof path, "%s/real-data.log", dir);
    if (store == ST_PG && (df = fopen(path, "w")) == NULL) { fclose(lf); return -1; }
    for (i = 0; i < nkeys && ok; i++) {
        snprintf(res, sizeof res, "%s/%s", tag, keys[i]);
        switch (store) {
        case ST_REDIS:
            ok = real_dump_redis(radm, res, lf);
            break;
        case ST_RCLUSTER: {                 /* from the log's master now, after the failovers */
            char key[200];
            int node;
            redisContext *nc;
            rkey(key, sizeof key, res, "log");
            node = master_of_slot(ldl_redis_cluster_keyslot(key, strlen(key)));
            nc = node >= 0 ? conn(node) : NULL;
            ok = nc && real_dump_redis(nc, res, lf);
            if (nc) redisFree(nc);
            break;
        }
        case ST_PG: {
            const char *v[1];
            PGresult *r;
            int j;
            v[0] = res;
            r = PQexecParams(padm, "SELECT id, fence, payload FROM " PG_WLOG
                             " WHERE resource = $1 ORDER BY id", 1, NULL, v, NULL, NULL, 0);
            ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 3;
            for (j = 0; ok && j < PQntuples(r); j++)
                fprintf(lf, "%s %s %s %s\n", res, PQgetvalue(r, j, 0), PQgetvalue(r, j, 1), PQgetvalue(r, j, 2));
            PQclear(r);
            if (!ok) break;
            r = PQexecParams(padm, "SELECT payload FROM " PG_DATA " WHERE resource = $1",
                             1, NULL, v, NULL, NULL, 0);
            ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 1 && PQntuples(r) <= 1;
            if (ok && PQntuples(r) == 1) fprintf(df, "%s %s\n", res, PQgetvalue(r, 0, 0));
            PQclear(r);
            break;
        }
        default:
            ok = 0;
        }
    }
    if (fclose(lf) != 0) ok = 0;
    if (df && fclose(df) != 0) ok = 0;
    if (!ok) fprintf(stderr, "chaos: could not dump the real resource of %s\n", dir);
    return ok ? 0 : -1;
}

static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

static int lock_open(client *c, cl_lock *l, int idx, const char *key)
{
    ldl_lock_desc d;
    memset(l, 0, sizeof *l);
    l->cl = c;
    l->idx = idx;
    snprintf(l->key, sizeof l->key, "%s", key);
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = l->key;
    d.ttl_ms = c->ttl;
    d.heartbeat_ms = c->hb;
    d.drift_ms = c->drift;
    d.clock.now_ms = clk_now;
    d.clock.ctx = c;
    d.on_lost = on_lost;
    d.user = l;
    if (c->kind == K_ASYNC) {
        l->was.acquire = wa_acquire; l->was.renew = wa_renew;
        l->was.release = wa_release; l->was.cancel = wa_cancel; l->was.ctx = l;
        d.async_store = &l->was;
    } else {
        l->ws.acquire = w_acquire; l->ws.renew = w_renew; l->ws.release = w_release; l->ws.ctx = l;
        d.store = &l->ws;
        if (c->kind == K_TIMER) {
            d.timers.set_timeout = t_set; d.timers.clear_timeout = t_clear; d.timers.ctx = c;
        }
    }
    hlog(c, "K %d %s", idx, key);
    if (ldl_lock_init(&l->lk, &d) != LDL_OK) { fprintf(stderr, "lock init: %s\n", ldl_lock_why(&l->lk)); return -1; }
    return 0;
}

static int client_open(client *c, int store, int kind, int id, const char *dir, uint64_t seed, int ctl,
                       uint32_t ttl, uint32_t hb, uint32_t drift)
{
    char path[400];
    memset(c, 0, sizeof *c);
    c->store = store; c->kind = kind; c->id = id; c->dir = dir; c->rng = seed; c->ctl = ctl;
    c->ttl = ttl; c->hb = hb; c->drift = drift;
    snprintf(c->tag, sizeof c->tag, "%s", strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir);
    snprintf(path, sizeof path, "%s/h-%d-%d.log", dir, (int)getpid(), id);
    c->hfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (c->hfd < 0) return -1;
    /* the 8th field: the session's TTL (ms) when this client's locks share a session lease
       (etcd, CHAOS_ETCD_SESSION=1), else 0 -- check (5) bounds a dead holder's key by it */
    hlog(c, "B %d %d %d %u %u %u %d %u", (int)getpid(), id, kind, ttl, hb, drift, store,
         store == ST_ETCD && etcd_sessions() ? ETCD_TTL : 0u);
    hlog(c, "O 0");
    c->resfd = socket(AF_UNIX, SOCK_DGRAM, 0);
    {
        struct sockaddr_un me;
        memset(&me, 0, sizeof me);
        me.sun_family = AF_UNIX;
        snprintf(me.sun_path, sizeof me.sun_path, "%s/c-%d-%d.sock", dir, (int)getpid(), id);
        if (c->resfd < 0 || bind(c->resfd, (struct sockaddr *)&me, sizeof me) != 0) return -1;
    }
    memset(&c->res, 0, sizeof c->res);
    c->res.sun_family = AF_UNIX;
    snprintf(c->res.sun_path, sizeof c->res.sun_path, "%s/res.sock", dir);
    {   /* a client respawned while the nemesis has the server down waits for it */
        uint64_t end = st_now_ms() + 30000;
        while (store_open(c) != 0 || real_open(c) != 0) {
            if (c->rc) { redisFree(c->rc); c->rc = NULL; }
            if (c->pc) { PQfinish(c->pc); c->pc = NULL; }
            store_close_rc(c);
            real_close(c);
            if (st_now_ms() > end) return -1;
            st_sleep_ms(100);
        }
    }
    return 0;
}

/* one fenced write; t0 = the real time read before the caller checked the lock.
   1 accepted, 0 rejected, -1 no answer */
static int res_write(client *c, cl_lock *l, int64_t tok, uint64_t t0)
{
    char buf[256];
    int len, acc = -1;
    long long seq = ++c->wseq;
    uint64_t end = st_now_ms() + 200;
    len = snprintf(buf, sizeof buf, "%s %lld %d:%d:%d:%d %llu %lld", l->key, (long long)tok, (int)getpid(),
                   c->id, l->idx, l->gseq, (unsigned long long)t0, seq);
    if (sendto(c->resfd, buf, (size_t)len, 0, (struct sockaddr *)&c->res, sizeof c->res) != len) return -1;
    while (st_now_ms() < end) {
        struct pollfd p;
        long long s;
        int a;
        ssize_t n;
        p.fd = c->resfd; p.events = POLLIN; p.revents = 0;
        if (poll(&p, 1, 20) <= 0) continue;
        n = recv(c->resfd, buf, sizeof buf - 1, 0);
        if (n <= 0) continue;
        buf[n] = 0;
        if (sscanf(buf, "%lld %d", &s, &a) == 2 && s == seq) { acc = a; break; }
    }
    hlog(c, "W %d %lld %llu %d", l->idx, (long long)tok, (unsigned long long)t0, acc);
    return acc;
}

/* ms the lease is still trusted; logs the lock's deadline (its clock + valid_ms, exact: the
   clock read inside valid_ms is the last one) whenever it moved, so the checker knows which
   renews the lock applied -- the non-blocking view's answers are not visible otherwise */
static uint32_t note_valid(client *c, cl_lock *l)
{
    uint32_t v = ldl_lock_valid_ms(&l->lk);
    if (v > 0 && c->last_l + v != l->dl) {
        l->dl = c->last_l + v;
        hlog(c, "V %d %llu", l->idx, (unsigned long long)l->dl);
    }
    return v;
}

static void note_grant(client *c, cl_lock *l)
{
    int64_t tok = ldl_lock_fencing_token(&l->lk);
    if (tok == l->held) return;
    l->held = tok;
    l->gseq++;
    l->lost = 0;
    hlog(c, "G %d %lld %llu %llu %d", l->idx, (long long)tok, (unsigned long long)l->acq_sl,
         (unsigned long long)l->acq_sr, l->gseq);
    (void)note_valid(c, l);
    l->hold_until = st_now_ms() + rnd_in(&c->rng, 0, TTL);
}

static void lock_step(client *c, cl_lock *l)
{
    uint64_t t0 = st_now_ms();
    int p, st = ldl_lock_state(&l->lk);
    if (st == LDL_RELEASING) { (void)ldl_lock_release(&l->lk); return; }
    p = ldl_lock_poll(&l->lk);
    st = ldl_lock_state(&l->lk);
    if (p == 1) {
        note_grant(c, l);
        if (st_now_ms() >= l->hold_until) {
            hlog(c, "E %d %lld", l->idx, (long long)l->held);
            l->held = 0;
            (void)ldl_lock_release(&l->lk);
            l->next_try = st_now_ms() + rnd_in(&c->rng, 0, 30);
            return;
        }
        if (note_valid(c, l) > 0 && t0 >= l->next_write) {
            /* one write in SLOW_ONE_IN is decided now but delivered late (a slow network):
               the resource must reject it once a newer holder wrote. That one, and one other
               write in REAL_ONE_IN, also goes to the real resource, decided at the same t0 */
            int slow = rnd_in(&c->rng, 1, SLOW_ONE_IN) == 1;
            if (slow) st_sleep_ms((uint32_t)rnd_in(&c->rng, TTL / 2, 2 * TTL));
            (void)res_write(c, l, ldl_lock_fencing_token(&l->lk), t0);
            if (slow || rnd_in(&c->rng, 1, REAL_ONE_IN) == 1)
                (void)real_put(c, l, ldl_lock_fencing_token(&l->lk), t0, CHAOS_FENCED);
            l->next_write = st_now_ms() + rnd_in(&c->rng, 2, 15);
        }
        return;
    }
    if (st == LDL_LOST) {
        hlog(c, "X %d %d %d %lld", l->idx, ldl_lock_reason(&l->lk), l->lost, (long long)l->held);
        l->held = 0;
        (void)ldl_lock_release(&l->lk);
        l->next_try = st_now_ms() + rnd_in(&c->rng, 0, 30);
        return;
    }
    if ((st == LDL_IDLE || st == LDL_RELEASED) && !ldl_lock_pending(&l->lk) && st_now_ms() >= l->next_try) {
        if (ldl_lock_acquire(&l->lk) == 1) note_grant(c, l);
        else if (ldl_lock_state(&l->lk) != LDL_ACQUIRING) l->next_try = st_now_ms() + rnd_in(&c->rng, 1, 20);
    }
}

/* clock steps from the nemesis: 5-byte commands, 'f' or 'b' and a 32-bit amount (ms) */
static void read_ctl(client *c)
{
    unsigned char cmd[5];
    while (c->ctl >= 0 && read(c->ctl, cmd, 5) == 5) {
        uint32_t v = (uint32_t)cmd[1] | (uint32_t)cmd[2] << 8 | (uint32_t)cmd[3] << 16 | (uint32_t)cmd[4] << 24;
        uint64_t now = st_now_ms();
        if (cmd[0] == 'f') {
            c->off += v;
            hlog(c, "O %lld", (long long)c->off);
        } else if (cmd[0] == 'b') {
            /* at most one backward step per TTL, each <= drift/2: inside one trust window the
               lock's clock can lose at most drift/2, so its trust still ends before the store
               frees the lease (SPEC's claim, see docs/TESTING.md) */
            if (v <= BACK_MAX && (c->last_back == 0 || now - c->last_back >= 2 * c->ttl)) {
                c->off -= v;
                c->last_back = now;
                hlog(c, "O %lld", (long long)c->off);
            } else {
                hlog(c, "o %u", v);
            }
        }
    }
}

static int client_main(int store, int kind, int id, const char *dir, uint64_t seed, int ctl)
{
    static client c;
    int i, live;
    uint64_t end;
    signal(SIGTERM, on_term);
    if (client_open(&c, store, kind, id, dir, seed, ctl, TTL, HB, DRIFT) != 0) {
        fprintf(stderr, "chaos client %d: cannot open the store\n", id);
        return 3;
    }
    fcntl(ctl, F_SETFL, O_NONBLOCK);
    for (i = 0; i < NKEYS; i++) {
        if (lock_open(&c, &c.L[i], i, g_keys[i]) != 0) return 4;
    }
    c.nlocks = NKEYS;
    while (!g_quit) {
        read_ctl(&c);
        store_service(&c);
        if (kind == K_TIMER) timers_run(&c);
        for (i = 0; i < NKEYS; i++) lock_step(&c, &c.L[i]);
        st_sleep_ms(2);
    }
    /* the end: release what is held, wait for the answers (bounded), dispose */
    for (i = 0; i < NKEYS; i++) {
        if (ldl_lock_state(&c.L[i].lk) == LDL_HELD) hlog(&c, "E %d %lld", i, (long long)c.L[i].held);
        (void)ldl_lock_release(&c.L[i].lk);
    }
    end = st_now_ms() + 1000;
    do {
        live = 0;
        store_service(&c);
        for (i = 0; i < NKEYS; i++)
            if (ldl_lock_state(&c.L[i].lk) == LDL_RELEASING) { live++; (void)ldl_lock_release(&c.L[i].lk); }
        if (live) st_sleep_ms(2);
    } while (live && st_now_ms() < end);
    for (i = 0; i < NKEYS; i++) ldl_lock_dispose(&c.L[i].lk);
    hlog(&c, "Z");
    return 0;
}

/* ------------------------------------------------------------ the nemesis */
typedef struct proc {
    pid_t    pid;
    int      kind, ctl;
    uint64_t cont_at;               /* 0 = running, else SIGCONT due */
} proc;

typedef struct campaign {
    int      store;
    char     dir[400];
    uint64_t rng, seed;
    proc     cl[NCLIENT];
    int      nlog;
    rs_server srv;
    redisContext *radm;
    PGconn  *padm;
    long     faults[10];
    long     drops_done;            /* drops the server confirmed */
    int      spawned;
} campaign;

static const char *FAULT_NAME[] = {
    "pause<ttl", "pause>ttl", "kill+respawn", "server-stop", "server-kill", "drop-conn",
    "clock-fwd", "clock-back", "backend-kill", "partition"
};
#define NFAULT 9                    /* drawn by weight; "partition" (9) is etcd's, see fault() */

static void spawn_client(campaign *k, int slot)
{
    int fds[2];
    pid_t pid;
    uint64_t seed = k->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(k->spawned + 1));   /* its own stream */
    int kind = slot % 3;
    char pf[400];
    if (pipe(fds) != 0) exit(92);
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        char dir[420];
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        close(fds[1]);
        snprintf(dir, sizeof dir, "%s/main", k->dir);
        _exit(client_main(k->store, kind, slot, dir, seed, fds[0]));
    }
    close(fds[0]);
    if (pid < 0) exit(93);
    k->cl[slot].pid = pid;
    k->cl[slot].kind = kind;
    k->cl[slot].ctl = fds[1];
    k->cl[slot].cont_at = 0;
    snprintf(pf, sizeof pf, "%s/chaos-client-%d.pid", getenv("LDL_TEST_DIR"), (int)pid);
    {
        FILE *f = fopen(pf, "w");
        if (f) { fprintf(f, "%d\n", (int)pid); fclose(f); }
    }
    k->spawned++;
    nlog(k, "spawn %d %d %d", (int)pid, slot, kind);
}

/* SIGCONT what is due, reap what died unexpectedly */
static void service(campaign *k)
{
    int i;
    uint64_t now = st_now_ms();
    for (i = 0; i < NCLIENT; i++) {
        int status;
        if (k->cl[i].cont_at && now >= k->cl[i].cont_at) {
            kill(k->cl[i].pid, SIGCONT);
            k->cl[i].cont_at = 0;
            nlog(k, "cont %d", (int)k->cl[i].pid);
        }
        if (waitpid(k->cl[i].pid, &status, WNOHANG) == k->cl[i].pid) {
            fprintf(stderr, "chaos: client %d exited by itself (status %d): see its history\n",
                    (int)k->cl[i].pid, status);
            exit(94);
        }
    }
}

static void wait_until(campaign *k, uint64_t t)
{
    while (st_now_ms() < t) {
        service(k);
        st_sleep_ms(2);
    }
    service(k);
}

static void send_ctl(proc *p, char op, uint32_t v)
{
    unsigned char cmd[5];
    cmd[0] = (unsigned char)op;
    cmd[1] = (unsigned char)(v & 0xff); cmd[2] = (unsigned char)(v >> 8 & 0xff);
    cmd[3] = (unsigned char)(v >> 16 & 0xff); cmd[4] = (unsigned char)(v >> 24 & 0xff);
    if (write(p->ctl, cmd, 5) != 5) { /* a full pipe: the client is stopped; drop the step */ }
}

static long read_conn(campaign *k, pid_t pid)
{
    char path[440];
    long v = -1;
    FILE *f;
    snprintf(path, sizeof path, "%s/main/conn-%d", k->dir, (int)pid);
    if ((f = fopen(path, "r")) == NULL) return -1;
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* pg-failover (issue 20): the PostgreSQL campaign with CHAOS_FAILOVER=1, run by run.sh pg-failover
   under tests/store/with_pg_standby.sh sync, whose primary moves between two nodes; see
   failover_round() below */
static int g_failover;

/* pg-failover: the current primary's postmaster.pid. with_pg_standby.sh keeps its nodes in the
   directory of LDL_PG_HA ("DIR/ha"): DIR/state names the primary ("primary=n1"), its data is
   DIR/n1/data. 1 when PATH was set */
static int pg_ha_pidfile(char *path, size_t n)
{
    const char *ha = getenv("LDL_PG_HA"), *slash;
    char st[600], line[64], node[8] = "";
    FILE *f;
    if (!g_failover || !ha || (slash = strrchr(ha, '/')) == NULL || slash - ha > 400) return 0;
    snprintf(st, sizeof st, "%.*s/state", (int)(slash - ha), ha);
    if ((f = fopen(st, "r")) == NULL) return 0;
    while (fgets(line, sizeof line, f))
        if (strcmp(line, "primary=n1\n") == 0 || strcmp(line, "primary=n2\n") == 0) { memcpy(node, line + 8, 2); node[2] = 0; }
    fclose(f);
    if (!node[0]) return 0;                  /* no primary right now */
    snprintf(path, n, "%.*s/%s/data/postmaster.pid", (int)(slash - ha), ha, node);
    return 1;
}

/* every process of the PostgreSQL server: the postmaster and its children */
static int pg_pids(pid_t *out, int max)
{
    char path[600];
    const char *ctl = getenv("LDL_PG_CTL");
    FILE *f;
    long pm = -1;
    int n = 0;
    DIR *d;
    struct dirent *e;
    snprintf(path, sizeof path, "%s", ctl ? ctl : "");
    if (strrchr(path, '/')) strcpy(strrchr(path, '/'), "/data/postmaster.pid");
    if ((f = fopen(path, "r")) == NULL && (!pg_ha_pidfile(path, sizeof path) || (f = fopen(path, "r")) == NULL))
        return 0;
    if (fscanf(f, "%ld", &pm) != 1) pm = -1;
    fclose(f);
    if (pm <= 0) return 0;
    out[n++] = (pid_t)pm;
    if ((d = opendir("/proc")) == NULL) return n;
    while ((e = readdir(d)) != NULL && n < max) {
        char st[600], buf[512], *p;
        long pp;
        FILE *g;
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(st, sizeof st, "/proc/%s/stat", e->d_name);
        if ((g = fopen(st, "r")) == NULL) continue;
        buf[0] = 0;
        if (!fgets(buf, sizeof buf, g)) buf[0] = 0;
        fclose(g);
        p = strrchr(buf, ')');
        if (p && sscanf(p + 2, "%*c %ld", &pp) == 1 && pp == pm) out[n++] = (pid_t)atol(e->d_name);
    }
    closedir(d);
    return n;
}

/* the nemesis' own connection; force = the server was restarted (the old link is dead even
   if nothing said so yet) */
static void admin_reconnect(campaign *k, int force)
{
    if (k->store == ST_ETCD) return;    /* the nemesis acts through $LDL_ETCD_CTL only */
    if (k->store == ST_RCLUSTER) return;    /* a connection per act (conn()), none kept */
    if (k->store == ST_REDIS) {
        if (!k->radm || k->radm->err || force) {
            if (k->radm) redisFree(k->radm);
            k->radm = rs_connect(&k->srv, 500);
        }
    } else if (!k->padm || PQstatus(k->padm) != CONNECTION_OK || force) {
        if (k->padm) PQreset(k->padm); else k->padm = pgt_connect("connect_timeout=3");
    }
}

/* drop a client's connection on the server side; 1 when the server did it */
static int drop_conn(campaign *k, long v)
{
    char arg[64];
    int ok = 0;
    if (k->store == ST_REDIS) {
        redisReply *rp;
        snprintf(arg, sizeof arg, "127.0.0.1:%ld", v);
        if (!k->radm) return 0;
        rp = rs_cmd(k->radm, "CLIENT", "KILL", "ADDR", arg, NULL);
        ok = rp && rp->type == REDIS_REPLY_INTEGER && rp->integer >= 1;   /* clients killed */
        if (rp) freeReplyObject(rp);
    } else if (k->padm) {
        const char *vals[1];
        PGresult *r;
        snprintf(arg, sizeof arg, "%ld", v);
        vals[0] = arg;
        r = PQexecParams(k->padm, "SELECT pg_terminate_backend($1::int)", 1, NULL, vals, NULL, NULL, 0);
        ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
        PQclear(r);
    }
    return ok;
}

/* etcd: the cluster's control script (tests/store/with_etcd_cluster.sh --netns); 0 = done */
static int etcd_ctl(const char *verb, int member)
{
    char cmd[700];
    int rc;
    snprintf(cmd, sizeof cmd, "'%s' %s %d", getenv("LDL_ETCD_CTL"), verb, member);
    rc = system(cmd);
    return (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
}

/* the leader's index 1..3 (waits up to 10 s), 0 when none answered */
static int etcd_leader(void)
{
    char cmd[700], line[32];
    FILE *p;
    int l = 0;
    snprintf(cmd, sizeof cmd, "'%s' wait-leader 10", getenv("LDL_ETCD_CTL"));
    if ((p = popen(cmd, "r")) != NULL) {
        if (fgets(line, sizeof line, p)) l = atoi(line);
        if (pclose(p) != 0) l = 0;
    }
    return l >= 1 && l <= 3 ? l : 0;
}

/* the leader's index 1..3 (waits up to 10 s), else a member picked by r */
static int etcd_target(uint64_t r, int leader)
{
    int l = leader ? etcd_leader() : 0;
    return l ? l : (int)(r % 3) + 1;
}

/* r mapped onto [lo, hi] */
static uint64_t pick(uint64_t r, uint64_t lo, uint64_t hi) { return lo + r % (hi - lo + 1); }

static int stopped_count(campaign *k)
{
    int i, n = 0;
    for (i = 0; i < NCLIENT; i++) n += k->cl[i].cont_at != 0;
    return n;
}

static void fault(campaign *k, int round)
{
    /* weights: pauses, kills, server stop/kill, drops, clock steps */
    static const int W[NFAULT] = { 3, 2, 2, 1, 1, 2, 2, 2, 1 };
    /* exactly four draws per round, whatever happens, so a seed replays the same draws;
       only the adjustments below depend on timing (which clients are stopped right now) */
    uint64_t r_kind = rnd(&k->rng), r_client = rnd(&k->rng), r_dur = rnd(&k->rng), r_quiet = rnd(&k->rng);
    int f, i, t, total = 0, r;
    for (f = 0; f < NFAULT; f++) total += W[f];
    r = (int)pick(r_kind, 0, (uint64_t)total - 1);
    for (f = 0; r >= W[f]; f++) r -= W[f];
    if (f == 8 && (k->store == ST_REDIS || k->store == ST_RCLUSTER)) f = 4;   /* backend-kill is PostgreSQL's */
    /* Redis Cluster: a master killed and restarted in place comes back empty (no persistence
       on the cluster's nodes) -- the failover rounds are its kills; here a stop below the
       node timeout */
    if (f == 4 && k->store == ST_RCLUSTER) f = 3;
    /* etcd: no connection to drop (libcurl reconnects per exchange) and no backend: both
       become a partition, a member's peer cable pulled for a while */
    if ((f == 5 || f == 8) && k->store == ST_ETCD) f = 9;
    if ((f == 0 || f == 1) && stopped_count(k) >= 2) f = 6;
    i = (int)pick(r_client, 0, NCLIENT - 1);
    for (t = 0; t < NCLIENT && k->cl[i].cont_at; t++) i = (i + 1) % NCLIENT;   /* a running one */
    if (k->cl[i].cont_at) f = 6;
    k->faults[f]++;
    nlog(k, "round %d %s %d", round, FAULT_NAME[f], i);
    switch (f) {
    case 0: case 1: {
        uint64_t d = f == 0 ? pick(r_dur, TTL / 4, TTL * 4 / 5) : pick(r_dur, TTL * 6 / 5, TTL * 3);
        kill(k->cl[i].pid, SIGSTOP);
        nlog(k, "stop %d %llu", (int)k->cl[i].pid, (unsigned long long)d);
        k->cl[i].cont_at = st_now_ms() + d;
        break;
    }
    case 2: {
        pid_t pid = k->cl[i].pid;
        int status;
        kill(pid, SIGKILL);
        nlog(k, "kill %d", (int)pid);
        waitpid(pid, &status, 0);
        close(k->cl[i].ctl);
        unpidfile(pid, "client");
        k->cl[i].cont_at = 0;
        spawn_client(k, i);
        if (r_quiet % 4 == 0) {             /* a quiet window: check (5) can judge this kill */
            int j;
            for (j = 0; j < NCLIENT; j++) if (k->cl[j].cont_at) k->cl[j].cont_at = st_now_ms();
            wait_until(k, st_now_ms() + 5);
            nlog(k, "quiet %u", TTL + 1500);
            wait_until(k, st_now_ms() + TTL + 1500);
        }
        break;
    }
    case 3: {
        uint64_t d = pick(r_dur, 50, TTL * 3 / 2);
        if (k->store == ST_ETCD) {          /* one member paused: the leader one time in two */
            int lead = (int)(r_quiet & 1), l = etcd_leader(), m;
            /* the leader at most 800 ms, under etcd's election timeout: a leader stalled past it
               and resumed can revoke leases its successor renewed (etcd-io/etcd#15247, not
               fixed in 3.4.23; tests/store/etcd_cluster.c shows it) -- a fault of etcd, not a
               question for the lock. Followers: any pause. The other time in two the member
               is one of the two followers (decision 0408: a random member was the leader one
               time in three, paused up to 3 s, and its revoke after the resume took a key 210
               ms after its grant); with no leader known, any member, capped as a leader */
            if (lead && l) m = l;
            else if (l) m = (l - 1 + 1 + (int)((r_quiet >> 8) % 2)) % 3 + 1;
            else m = (int)((r_quiet >> 8) % 3) + 1;
            if ((m == l || !l) && d > 800) d = 50 + d % 751;
            if (etcd_ctl("pause", m) != 0) { fprintf(stderr, "chaos: etcd m%d not paused\n", m); exit(95); }
            nlog(k, "sstop %llu m%d", (unsigned long long)d, m);
            wait_until(k, st_now_ms() + d);
            if (etcd_ctl("resume", m) != 0) { fprintf(stderr, "chaos: etcd m%d not resumed\n", m); exit(95); }
        } else if (k->store == ST_RCLUSTER) {   /* the keys' master, below the node timeout */
            int m = master_of_slot(g_rc_slot);
            if (m < 0) { fprintf(stderr, "chaos: no master for the keys' slot\n"); exit(95); }
            kill(g_n[m].pid, SIGSTOP);
            nlog(k, "sstop %llu n%d", (unsigned long long)d, m);
            wait_until(k, st_now_ms() + d);
            kill(g_n[m].pid, SIGCONT);
        } else if (k->store == ST_REDIS) {
            kill(k->srv.pid, SIGSTOP);
            nlog(k, "sstop %llu", (unsigned long long)d);
            wait_until(k, st_now_ms() + d);
            kill(k->srv.pid, SIGCONT);
        } else {
            pid_t pids[128];
            int n = pg_pids(pids, 128), j;
            for (j = 0; j < n; j++) kill(pids[j], SIGSTOP);
            nlog(k, "sstop %llu %d", (unsigned long long)d, n);
            wait_until(k, st_now_ms() + d);
            for (j = n - 1; j >= 0; j--) kill(pids[j], SIGCONT);
        }
        nlog(k, "scont");
        break;
    }
    case 4:
        nlog(k, "skill");
        if (k->store == ST_ETCD) {          /* the leader SIGKILLed, restarted on its data dir */
            int m = etcd_target(r_quiet >> 8, 1);
            if (etcd_ctl("kill", m) != 0 || etcd_ctl("start", m) != 0 || etcd_ctl("wait-healthy", 60) != 0) {
                fprintf(stderr, "chaos: etcd m%d did not restart\n", m);
                exit(95);
            }
            nlog(k, "skilled m%d", m);
        } else if (k->store == ST_REDIS) {
            rs_kill(&k->srv, SIGKILL);
            if (rs_restart(&k->srv) != 0) { fprintf(stderr, "chaos: redis did not restart\n"); exit(95); }
        } else {
            if (pgt_ctl("crash") != 0 || pgt_ctl("start") != 0) { fprintf(stderr, "chaos: pg did not restart\n"); exit(95); }
        }
        nlog(k, "sup");
        admin_reconnect(k, 1);
        break;
    case 5: {   /* the client may be between connections: then nothing is dropped */
        long v = read_conn(k, k->cl[i].pid);
        int ok = 0;
        if (k->store == ST_RCLUSTER) {  /* every client's link to the keys' master ("drop -1":
                                           check (5) then judges no key near it) */
            int m = master_of_slot(g_rc_slot);
            redisContext *nc = m >= 0 ? conn(m) : NULL;
            redisReply *rp = nc ? rs_cmd(nc, "CLIENT", "KILL", "TYPE", "normal", NULL) : NULL;
            ok = rp && rp->type == REDIS_REPLY_INTEGER ? (int)rp->integer : 0;
            if (rp) freeReplyObject(rp);
            if (nc) redisFree(nc);
            nlog(k, "drop -1 %d %d", m >= 0 ? g_n[m].port : -1, ok);
            k->drops_done += ok > 0;
            break;
        }
        admin_reconnect(k, 0);
        if (v > 0 && !(ok = drop_conn(k, v))) {
            admin_reconnect(k, 1);
            ok = drop_conn(k, v);
        }
        nlog(k, "drop %d %ld %d", (int)k->cl[i].pid, v, ok);
        k->drops_done += ok;
        break;
    }
    case 6: {
        uint32_t v = (uint32_t)pick(r_dur, 1, 2 * TTL);
        nlog(k, "step %d %u", (int)k->cl[i].pid, v);
        send_ctl(&k->cl[i], 'f', v);
        break;
    }
    case 7: {
        uint32_t v = (uint32_t)pick(r_dur, 1, BACK_MAX);
        nlog(k, "step %d -%u", (int)k->cl[i].pid, v);
        send_ctl(&k->cl[i], 'b', v);
        break;
    }
    case 8: {   /* SIGKILL one backend: the postmaster resets every session and replays WAL */
        long v = read_conn(k, k->cl[i].pid);
        nlog(k, "skill backend %ld", v);
        if (v > 0) kill((pid_t)v, SIGKILL);
        st_sleep_ms(300);
        nlog(k, "sup");
        admin_reconnect(k, 1);
        break;
    }
    case 9: {   /* etcd: a member's peer cable pulled (the leader one time in two), then
                   plugged back; logged as a server outage for check (5) */
        uint64_t d = pick(r_dur, TTL / 4, TTL * 2);
        int m = etcd_target(r_quiet >> 8, (int)(r_quiet & 1));
        if (etcd_ctl("partition", m) != 0) { fprintf(stderr, "chaos: etcd m%d not cut off\n", m); exit(95); }
        nlog(k, "sstop %llu partition m%d", (unsigned long long)d, m);
        wait_until(k, st_now_ms() + d);
        if (etcd_ctl("heal", m) != 0) { fprintf(stderr, "chaos: etcd m%d not healed\n", m); exit(95); }
        nlog(k, "scont");
        break;
    }
    default: break;
    }
}

static void stop_clients(campaign *k)
{
    int i, status;
    uint64_t end;
    for (i = 0; i < NCLIENT; i++) if (k->cl[i].pid > 0) { kill(k->cl[i].pid, SIGCONT); k->cl[i].cont_at = 0; }
    nlog(k, "end");
    for (i = 0; i < NCLIENT; i++) if (k->cl[i].pid > 0) kill(k->cl[i].pid, SIGTERM);
    end = st_now_ms() + 5000;
    for (i = 0; i < NCLIENT; i++) {
        pid_t pid = k->cl[i].pid;
        if (pid <= 0) continue;
        while (waitpid(pid, &status, WNOHANG) != pid) {
            if (st_now_ms() > end) { kill(pid, SIGKILL); waitpid(pid, &status, 0); break; }
            st_sleep_ms(5);
        }
        unpidfile(pid, "client");
        close(k->cl[i].ctl);
        k->cl[i].pid = 0;
    }
}

static void stop_res(pid_t pid)
{
    st_stop(pid, SIGTERM, 3000);
    unpidfile(pid, "res");
}

/* ------------------------------------------------------------ the planted controls */
typedef struct ctl_pair { client a, b; } ctl_pair;
static ctl_pair g_ctl;

/* a stall of the store past the connection's timeout (a loaded machine) breaks the link:
   it is mended here as in the campaign, so load only makes a control slower */
static int ctl_grant(client *c, cl_lock *l, uint32_t within)
{
    uint64_t end = st_now_ms() + within;
    while (st_now_ms() < end) {
        if (ldl_lock_acquire(&l->lk) == 1) { note_grant(c, l); return 1; }
        store_service(c);
        st_sleep_ms(5);
    }
    return 0;
}

/* a real write of the control, again while it has no answer (a broken link: real_link
   mends it); repeating one is harmless, each is logged with its own number */
static int ctl_real(client *c, cl_lock *l, int64_t tok, int fenced)
{
    uint64_t end = st_now_ms() + 5000;
    int rc;
    while ((rc = real_put(c, l, tok, st_now_ms(), fenced)) < 0 && st_now_ms() < end) st_sleep_ms(20);
    return rc;
}

static void ctl_write(client *c, cl_lock *l)
{
    st_sleep_ms(5);                     /* decided strictly after the other holder knew */
    (void)res_write(c, l, l->held, st_now_ms());
}

/* which: 'l' a client that keeps writing after its loss, 'c' a clock that lies (a large
   backward step the lock cannot see), 'r' a store that repeats a token */
/* 'k': a store whose leases outlive the lock's TTL (a wrapper asks for 5 x the TTL): A, in its
   own process, holds and is SIGKILLed; B, in this one, waits for the key. The nemesis log
   says who lived when, as in the campaign */
static int control_leak(int store, const char *dir)
{
    client *b = &g_ctl.b;
    char path[480];
    int go[2], up[2], status;
    pid_t pid;
    campaign log;
    memset(&log, 0, sizeof log);
    snprintf(path, sizeof path, "%s/nemesis.log", dir);
    if ((log.nlog = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0) return 3;
    if (pipe(go) != 0 || pipe(up) != 0) return 3;
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        client *a = &g_ctl.a;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (client_open(a, store, K_SYNC, 100, dir, 1, -1, TTL, HB, DRIFT) != 0) _exit(3);
        a->leak = 5;
        if (lock_open(a, &a->L[0], 0, "ctl-k") != 0) _exit(4);
        if (st_recv(go[0], 10000) != 'g' || !ctl_grant(a, &a->L[0], 5000)) _exit(5);
        ctl_write(a, &a->L[0]);
        st_send(up[1], 'h');
        for (;;) { st_sleep_ms(10); (void)ldl_lock_poll(&a->L[0].lk); }
    }
    if (pid < 0) return 3;
    nlog(&log, "spawn %d 0 0", (int)pid);
    nlog(&log, "spawn %d 1 0", (int)getpid());
    if (client_open(b, store, K_SYNC, 101, dir, 2, -1, TTL, HB, DRIFT) != 0 ||
        lock_open(b, &b->L[0], 0, "ctl-k") != 0) { kill(pid, SIGKILL); return 4; }
    st_send(go[1], 'g');
    if (st_recv(up[0], 10000) != 'h') { kill(pid, SIGKILL); waitpid(pid, &status, 0); return 5; }
    kill(pid, SIGKILL);
    nlog(&log, "kill %d", (int)pid);
    waitpid(pid, &status, 0);
    if (!ctl_grant(b, &b->L[0], 5 * TTL + 3000)) return 6;   /* only after 5 x TTL */
    ctl_write(b, &b->L[0]);
    ldl_lock_dispose(&b->L[0].lk);
    nlog(&log, "end");
    return 0;
}

/* 'u': a fenced-write helper that skips the check. A holds (token t1) and writes through the
   real helper (accepted), releases; B is granted (t2 > t1) and writes (accepted: the mark is
   t2); A's fenced write with t1 is refused -- the staging checks that, so the helper works --
   then A writes with t1 through the broken helper, which the store accepts after t2: a stale
   write in the store's own log, on every run, whatever the timing (each step waits for the
   previous one's answer) */
static int control_unfenced(int store, const char *dir)
{
    client *a = &g_ctl.a, *b = &g_ctl.b;
    int64_t t1;
    if (client_open(a, store, K_SYNC, 100, dir, 1, -1, TTL, HB, DRIFT) != 0 ||
        client_open(b, store, K_SYNC, 101, dir, 2, -1, TTL, HB, DRIFT) != 0) return 3;
    if (lock_open(a, &a->L[0], 0, "ctl-u") != 0 || lock_open(b, &b->L[0], 0, "ctl-u") != 0) return 4;
    if (!ctl_grant(a, &a->L[0], 5000)) return 5;
    t1 = a->L[0].held;
    if (ctl_real(a, &a->L[0], t1, 1) != 1) return 10;
    hlog(a, "E 0 %lld", (long long)t1);
    a->L[0].held = 0;
    (void)ldl_lock_release(&a->L[0].lk);
    if (!ctl_grant(b, &b->L[0], 5000)) return 6;
    if (b->L[0].held <= t1 || ctl_real(b, &b->L[0], b->L[0].held, 1) != 1) return 11;
    if (ctl_real(a, &a->L[0], t1, 1) != 0) return 12;       /* the real helper refuses */
    if (ctl_real(a, &a->L[0], t1, 0) != 1) return 13;       /* the broken one does not */
    ldl_lock_dispose(&a->L[0].lk);
    ldl_lock_dispose(&b->L[0].lk);
    hlog(a, "Z");
    hlog(b, "Z");
    return 0;
}

/* ------------------------------------------------------------ failover rounds (issue 20)
 * pg-failover: the campaign against tests/store/with_pg_standby.sh sync (a primary and a
 * synchronous streaming standby; every client connects through the multi-host conninfo
 * host=A,B target_session_attrs=read-write and reconnects as after a server kill). One round in
 * FO_EVERY is an unclean failover (in one of two after the primary's walsenders were paused for
 * 50-400 ms, so the standby lags): every process of the primary SIGSTOPped at one instant and
 * SIGKILLed, the standby promoted, a new standby built from it (pg_basebackup) for the next
 * rounds. Meanwhile the clients keep running their lifecycles and fenced writes; the nemesis
 * keeps servicing them (SIGCONTs due) while the control script runs. In the nemesis log:
 * "round N failover -1", "skill failover" (the outage starts: check.py's server span),
 * "failover killed OK", "failover promoted OK", "sup" (a streaming sync standby again).
 * check.py judges the rounds with the usual rules, except that two trust windows that
 * overlap ACROSS a failover are counted and printed, not failed (decision 0404). */
#define FO_EVERY 8                  /* one round in FO_EVERY is a failover */
#define FO_LIMIT 180000u            /* a verb of LDL_PG_HA that takes longer is killed: it failed */
static long g_fo_done, g_fo_restored;
static uint64_t g_fo_ms;

/* "$LDL_PG_HA VERB" in a child, the nemesis servicing its clients meanwhile; 0 on success */
static int ha_run(campaign *k, const char *verb)
{
    const char *ha = getenv("LDL_PG_HA");
    char cmd[1024];
    pid_t pid;
    int status;
    uint64_t end = st_now_ms() + FO_LIMIT;
    if (!ha || !*ha) { fprintf(stderr, "chaos: LDL_PG_HA is not set (run.sh pg-failover)\n"); return -1; }
    snprintf(cmd, sizeof cmd, "%s %s", ha, verb);   /* unquoted, as with_pg_standby.sh says */
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid < 0) return -1;
    for (;;) {
        if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
        if (st_now_ms() > end) { kill(pid, SIGKILL); waitpid(pid, &status, 0); return -1; }
        service(k);
        st_sleep_ms(5);
    }
}

static void failover_round(campaign *k, int round)
{
    uint64_t t0 = st_now_ms();
    int ok;
    /* one failover in two first pauses the primary's walsenders for a while: the standby lags
       (sync: commits wait for it, unacknowledged; async: acknowledged ones it never gets) */
    uint64_t lag = rnd(&k->rng) % 2 ? rnd_in(&k->rng, 50, 400) : 0;
    nlog(k, "round %d failover -1", round);
    if (lag && ha_run(k, "pause-link 2>/dev/null") == 0) {   /* no walsender right now: no lag */
        nlog(k, "failover lag %llu", (unsigned long long)lag);
        wait_until(k, st_now_ms() + lag);
    }
    nlog(k, "skill failover");
    ok = ha_run(k, "kill-primary") == 0;
    nlog(k, "failover killed %d", ok);
    ok = ok && ha_run(k, "promote") == 0;
    nlog(k, "failover promoted %d", ok);
    ok = ok && ha_run(k, "rebuild") == 0;
    if (!ok) {   /* counted and printed; the next rounds need a primary and a standby */
        g_fo_restored++;
        if (ha_run(k, "ensure") != 0) {
            fprintf(stderr, "chaos: no primary and synchronous standby after failover round %d\n", round);
            exit(95);
        }
    }
    nlog(k, "sup");
    admin_reconnect(k, 1);
    g_fo_done += ok;
    g_fo_ms += st_now_ms() - t0;
}


/* ------------------------------------------------------------ Redis Cluster failover rounds
 * redis-cluster-failover (issue 20, decision 0405): ST_RCLUSTER with CHAOS_FAILOVER=1. One round
 * in FO_EVERY is an unclean failover of the master M that owns the campaign's keys and marks:
 *   lag     (one failover in two) M's replica R SIGSTOPped and M's replication link cut
 *           (CLIENT KILL TYPE replica) for 50-400 ms while the clients go on: grants and fenced
 *           writes R never gets (its counters really lag)
 *   down    "skill failover": M SIGKILLed, or SIGSTOPped (a seeded choice, both used); R resumed
 *   promote the cluster promotes R itself past cluster-node-timeout (CLUSTER FAILOVER TAKEOVER
 *           only if it has not within 25 s: counted and printed)
 *   back    M restarted on its dir and port (SIGKILL) or resumed (SIGSTOP, stopped until R was
 *           promoted, i.e. past the node timeout): it rejoins as R's replica
 *   settle  every node cluster_state:ok, every replica linked, M the replica of R; "sup"
 * The nemesis keeps servicing its clients (SIGCONTs due) throughout. */
static unsigned g_rc_stopped;       /* nodes SIGSTOPped right now (asked nothing) */
static long g_rc_kills, g_rc_stops, g_rc_takeovers, g_rc_lags;

static void fo_wait(campaign *k, uint32_t ms)
{
    if (k->spawned) wait_until(k, st_now_ms() + ms);
    else st_sleep_ms(ms);            /* a control: no clients to service */
}

/* a process that is gone: no such pid, or a zombie (not our child: init reaps it) */
static int rc_gone(pid_t pid)
{
    char path[64], buf[256], *p;
    FILE *f;
    int status;
    if (pid <= 0 || waitpid(pid, &status, WNOHANG) == pid || kill(pid, 0) != 0) return 1;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL) return 1;
    buf[0] = 0;
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    fclose(f);
    p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'Z';
}

/* SIGKILL node i and wait (bounded) until it is gone; its pid file removed */
static void rc_kill_node(int i)
{
    uint64_t end = st_now_ms() + 10000;
    if (g_n[i].pid <= 0) return;
    kill(g_n[i].pid, SIGKILL);
    kill(g_n[i].pid, SIGCONT);
    while (!rc_gone(g_n[i].pid) && st_now_ms() < end) st_sleep_ms(5);
    remove(g_n[i].pidfile);
    g_n[i].pid = 0;
    g_rc_stopped &= ~(1u << i);
}

/* the pids the pid files name (a control's child may have restarted a node) */
static void rc_reload_pids(void)
{
    int i;
    for (i = 0; i < NN; i++) {
        FILE *f = fopen(g_n[i].pidfile, "r");
        long v = 0;
        if (f) { if (fscanf(f, "%ld", &v) != 1) v = 0; fclose(f); }
        g_n[i].pid = (pid_t)v;
    }
}

/* every node SIGKILLed, each waited for (bounded), pid files removed */
static void rc_stop_all(void)
{
    int i;
    rc_reload_pids();
    for (i = 0; i < NN; i++) rc_kill_node(i);
}

/* one unclean failover of the master of `slot`; 0 when the cluster is whole again with the old
   master as the new one's replica. stop: SIGSTOP (else SIGKILL); lag: ms the replica lags first */
static int rc_failover(campaign *k, int slot, int stop, uint32_t lag)
{
    int m = master_of_slot(slot), r = m >= 0 ? rcs_replica_of(m, g_rc_stopped) : -1, promoted = 0, ok = 0;
    uint64_t end;
    if (m < 0 || r < 0) {
        fprintf(stderr, "chaos: the slot's master and replica (%d, %d) not found\n", m, r);
        return -1;
    }
    if (lag) {
        redisContext *nc = conn(m);
        kill(g_n[r].pid, SIGSTOP);
        g_rc_stopped |= 1u << r;
        if (nc) { rs_int(rs_cmd(nc, "CLIENT", "KILL", "TYPE", "replica", NULL), 0); redisFree(nc); }
        nlog(k, "failover lag %u n%d n%d", lag, m, r);
        g_rc_lags++;
        fo_wait(k, lag);
    }
    nlog(k, "skill failover %s n%d", stop ? "sigstop" : "sigkill", m);
    if (stop) { kill(g_n[m].pid, SIGSTOP); g_rc_stopped |= 1u << m; g_rc_stops++; }
    else { rc_kill_node(m); g_rc_kills++; }
    if (lag) { kill(g_n[r].pid, SIGCONT); g_rc_stopped &= ~(1u << r); }
    end = st_now_ms() + 25000;
    while (st_now_ms() < end && !(promoted = node_info_has(r, "NODES", "myself,master"))) fo_wait(k, 100);
    if (!promoted) {                    /* not expected; counted and printed */
        redisContext *nc = conn(r);
        g_rc_takeovers++;
        if (nc) { rs_int(rs_cmd(nc, "CLUSTER", "FAILOVER", "TAKEOVER", NULL), 0); redisFree(nc); }
        end = st_now_ms() + 15000;
        while (st_now_ms() < end && !(promoted = node_info_has(r, "NODES", "myself,master"))) fo_wait(k, 100);
    }
    nlog(k, "failover promoted %d n%d", promoted, r);
    /* the old master back (also when the promotion failed: the run then fails, cleanly) */
    if (stop) { kill(g_n[m].pid, SIGCONT); g_rc_stopped &= ~(1u << m); }
    else {
        int att;
        for (att = 0; att < 3 && launch(&g_n[m]) != 0; att++) {
            if (g_n[m].pid > 0) rc_kill_node(m);
            st_sleep_ms(500);
        }
    }
    nlog(k, "failover back n%d %d", m, (int)g_n[m].pid);
    (void)rcs_node_timeout(m, RC_NODE_TIMEOUT);
    end = st_now_ms() + 60000;
    while (promoted && st_now_ms() < end && !(ok = rcs_settled_now(0) && rcs_replica_of(r, 0) == m)) fo_wait(k, 200);
    nlog(k, "sup");
    if (!ok) fprintf(stderr, "chaos: the cluster did not settle after the failover of n%d (promoted %d)\n", m, promoted);
    return ok ? 0 : -1;
}

static void rc_failover_round(campaign *k, int round)
{
    uint64_t t0 = st_now_ms();
    /* two draws, whatever happens: a seed replays them */
    uint64_t r_mode = rnd(&k->rng), r_lag = rnd(&k->rng);
    uint32_t lag = r_lag % 2 ? (uint32_t)pick(r_lag >> 8, 50, 400) : 0;
    nlog(k, "round %d failover -1", round);
    if (rc_failover(k, g_rc_slot, (int)(r_mode & 1), lag) != 0) {
        fprintf(stderr, "chaos: failover round %d: no whole cluster after it\n", round);
        exit(95);
    }
    g_fo_done++;
    g_fo_ms += st_now_ms() - t0;
}

/* the campaign's keys: k<i> whose lease slots AND whose resources' mark slots ("main/k<i>")
   are all owned by one master, so that every failover takes down what the campaign uses;
   g_rc_slot = the first key's lease slot. 0 when found */
static int rc_pick_keys(void)
{
    static int owner[16384];
    ldl_redis_cluster v;
    int i, n = 0, want = -1;
    if (!rcs_slot_owners(0, owner) || ldl_redis_cluster_init(&v, g_rc_seeds, "chaos", 2000) != LDL_OK) {
        fprintf(stderr, "chaos: cannot read the cluster's map\n");
        return -1;
    }
    for (i = 0; i < 100000 && n < NKEYS; i++) {
        char key[16], res[40];
        int ls, ms;
        snprintf(key, sizeof key, "k%d", i);
        snprintf(res, sizeof res, "main/%s", key);
        ls = ldl_redis_cluster_slot(&v, key);
        ms = ldl_redis_cluster_fence_slot(&v, res);
        if (ls < 0 || ms < 0 || owner[ls] < 0 || owner[ls] != owner[ms]) continue;
        if (want < 0) { want = owner[ls]; g_rc_slot = ls; }
        if (owner[ls] != want) continue;
        memcpy(g_keys[n++], key, sizeof key);
    }
    ldl_redis_cluster_free(&v);
    return n == NKEYS ? 0 : -1;
}

/* start the cluster for the campaign: 0 when every node is ok, every replica linked */
static int rc_start(void)
{
    int i, n = 0;
    uint64_t end;
    if (start_cluster() != 0) { fprintf(stderr, "chaos: the Redis Cluster did not start\n"); return -1; }
    for (i = 0; i < NN; i++) {
        (void)rcs_node_timeout(i, RC_NODE_TIMEOUT);
        n += snprintf(g_rc_seeds + n, sizeof g_rc_seeds - (size_t)n, "%s127.0.0.1:%d", i ? "," : "", g_n[i].port);
    }
    end = st_now_ms() + 60000;
    while (st_now_ms() < end && !rcs_settled_now(0)) st_sleep_ms(200);
    if (!rcs_settled_now(0)) { fprintf(stderr, "chaos: the Redis Cluster did not settle\n"); return -1; }
    return rc_pick_keys();
}

/* the failover controls, 'f' and 'o', each with one real failover between two holders:
   'f' a store that repeats a token across the failover (A granted and released before it, B
       after it, the repeat wrapper hands B A's token): the failover must not excuse a repeated
       fence, checks (1) and (2) must flag it;
   'o' a lease lost in the failover (what an asynchronous standby can lose: after the promotion
       the lease row is expired by hand, the fence counter kept): A still trusts its window (TTL
       60 s), B is granted with a higher token and writes, A's write is refused by the resource.
       check.py --counted must find no violation and count the overlap (>= 1): overlaps across
       a failover are reported, not hidden and not failed */
static int control_failover(int store, int which, const char *dir)
{
    client *a = &g_ctl.a, *b = &g_ctl.b;
    static int64_t rep;
    uint32_t ttl = which == 'o' ? 60000 : TTL, hb = which == 'o' ? 20000 : HB;
    char path[480], key[32];
    campaign log;
    int ok;
    memset(&log, 0, sizeof log);
    snprintf(key, sizeof key, "ctl-%c", which);
    snprintf(path, sizeof path, "%s/nemesis.log", dir);
    if ((log.nlog = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0) return 3;
    if (client_open(a, store, K_SYNC, 100, dir, 1, -1, ttl, hb, DRIFT) != 0 ||
        client_open(b, store, K_SYNC, 101, dir, 2, -1, ttl, hb, DRIFT) != 0) return 3;
    if (which == 'f') a->repeat = b->repeat = &rep;
    if (lock_open(a, &a->L[0], 0, key) != 0 || lock_open(b, &b->L[0], 0, key) != 0) return 4;
    if (!ctl_grant(a, &a->L[0], 15000)) return 5;
    ctl_write(a, &a->L[0]);
    if (which == 'f') {
        hlog(a, "E 0 %lld", (long long)a->L[0].held);
        a->L[0].held = 0;
        (void)ldl_lock_release(&a->L[0].lk);
    }
    if (store == ST_RCLUSTER) {         /* the master of the key's slot, SIGKILLed, no lag */
        char lease[64];
        snprintf(lease, sizeof lease, "{chaos:%s}:lease", key);
        ok = rc_failover(&log, ldl_redis_cluster_keyslot(lease, strlen(lease)), 0, 0) == 0;
        if (!ok) return 9;
        if (which == 'o') {             /* the lease lost (DEL: 1 or 0 if the failover lost it), the
                                           fence counter kept */
            int node = master_of_slot(ldl_redis_cluster_keyslot(lease, strlen(lease)));
            redisContext *nc = node >= 0 ? conn(node) : NULL;
            ok = nc && rs_int(rs_cmd(nc, "DEL", lease, NULL), -1) >= 0;
            if (nc) redisFree(nc);
            if (!ok) return 10;
            nlog(&log, "lease-lost ctl-o");
        }
    } else {
        nlog(&log, "skill failover");
        ok = pgt_ctl("failover") == 0;
        nlog(&log, "failover done %d", ok);
        if (!ok) return 9;
        nlog(&log, "sup");
    }
    if (which == 'o' && store == ST_PG) {
        PGconn *adm = pgt_connect("connect_timeout=3");
        ok = PQstatus(adm) == CONNECTION_OK &&
             pg_cmd(adm, "UPDATE public." PG_TABLE " SET expires_at = '-infinity' WHERE key = 'ctl-o'", "UPDATE 1");
        PQfinish(adm);
        if (!ok) return 10;
        nlog(&log, "lease-lost ctl-o");
    }
    if (!ctl_grant(b, &b->L[0], 15000)) return 6;
    if (which == 'o' && b->L[0].held <= a->L[0].held) return 11;
    ctl_write(b, &b->L[0]);                 /* 'f': the same token, accepted again */
    if (which == 'o') ctl_write(a, &a->L[0]);   /* still inside A's window: refused */
    if (a->L[0].held) hlog(a, "E 0 %lld", (long long)a->L[0].held);
    hlog(b, "E 0 %lld", (long long)b->L[0].held);
    ldl_lock_dispose(&a->L[0].lk);
    ldl_lock_dispose(&b->L[0].lk);
    hlog(a, "Z");
    hlog(b, "Z");
    nlog(&log, "end");
    return 0;
}

static int control_main(int store, int which, const char *dir)
{
    client *a = &g_ctl.a, *b = &g_ctl.b;
    static int64_t rep;
    uint32_t ttl = which == 'c' ? 1000 : TTL, hb = which == 'c' ? 500 : HB;
    char key[32];
    if (which == 'f' || which == 'o') return control_failover(store, which, dir);
    snprintf(key, sizeof key, "ctl-%c", which);
    if (client_open(a, store, K_SYNC, 100, dir, 1, -1, ttl, hb, DRIFT) != 0 ||
        client_open(b, store, K_SYNC, 101, dir, 2, -1, ttl, hb, DRIFT) != 0) return 3;
    if (which == 'r') a->repeat = b->repeat = &rep;
    if (lock_open(a, &a->L[0], 0, key) != 0 || lock_open(b, &b->L[0], 0, key) != 0) return 4;
    if (!ctl_grant(a, &a->L[0], 5000)) return 5;
    ctl_write(a, &a->L[0]);
    if (which == 'r') {
        hlog(a, "E 0 %lld", (long long)a->L[0].held);
        a->L[0].held = 0;
        (void)ldl_lock_release(&a->L[0].lk);
        if (!ctl_grant(b, &b->L[0], 5000)) return 6;
        ctl_write(b, &b->L[0]);                 /* the same token, accepted again */
    } else {
        /* A stops polling (a pause); B waits until the store frees the key */
        if (!ctl_grant(b, &b->L[0], 5000)) return 6;
        if (which == 'l') {
            int p = ldl_lock_poll(&a->L[0].lk);
            hlog(a, "X 0 %d %d %lld", ldl_lock_reason(&a->L[0].lk), a->L[0].lost, (long long)a->L[0].held);
            if (p != 0) return 7;
            ctl_write(a, &a->L[0]);             /* broken: writes with the lost token */
        } else {
            /* the lie: step A's clock back so it reads 100 ms after its grant's start */
            clk_now(a);
            a->off -= (int64_t)(a->last_l - a->L[0].acq_sl) - 100;
            hlog(a, "O %lld", (long long)a->off);
            if (note_valid(a, &a->L[0]) == 0) return 8;
            ctl_write(a, &a->L[0]);             /* "valid": the honest real clock says no */
        }
    }
    ldl_lock_dispose(&a->L[0].lk);
    ldl_lock_dispose(&b->L[0].lk);
    hlog(a, "Z");
    hlog(b, "Z");
    return 0;
}

static int run_control(campaign *k, int which)
{
    char dir[440];
    pid_t res, pid;
    int status = 0;
    snprintf(dir, sizeof dir, "%s/ctl-%c", k->dir, which);
    mkdir(dir, 0755);
    res = res_start(dir);
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        _exit(which == 'k' ? control_leak(k->store, dir) :
              which == 'u' ? control_unfenced(k->store, dir) : control_main(k->store, which, dir));
    }
    waitpid(pid, &status, 0);
    if (k->store == ST_RCLUSTER) rc_reload_pids();     /* a failover control restarted a node */
    stop_res(res);
    if (which == 'u') {
        static const char *const keys[] = { "ctl-u" };
        admin_reconnect(k, 1);     /* the server may have restarted unseen */
        if (real_dump(k->store, k->radm, k->padm, dir, "ctl-u", keys, 1) != 0) return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "chaos: control %c could not be staged (status %d)\n", which, status);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ etcd: the leader watcher
 * (decision 0407) A process beside the etcd campaign polls every member's
 * /v3/maintenance/status every WATCH_MS and appends to nemesis.log, in one write(2) each:
 *   "T watch ELECTION_MS"                   once, the cluster's election timeout
 *   "T leader TERM LEADER mN"               each time a term above every term seen so far
 *                                           has a leader (member N said so), T = the reply's
 * An etcd member that becomes leader refreshes EVERY lease to its full TTL plus the election
 * timeout (its lessor's Promote): a dead holder's key then outlives its last keepalive, with no
 * keepalive at all. The nemesis' faults cause most elections (a resumed follower's stale term
 * deposes the leader seconds after the fault), a loaded machine the rest; check (5) bounds a
 * session client's key with them. T is when the reply arrived: at or after the election. */
#define WATCH_MS 50u

typedef struct wbuf { char b[2048]; size_t n; } wbuf;
static size_t watch_sink(char *p, size_t sz, size_t nm, void *ud)
{
    wbuf *w = (wbuf *)ud;
    size_t n = sz * nm;
    if (n > sizeof w->b - 1 - w->n) n = sizeof w->b - 1 - w->n;
    memcpy(w->b + w->n, p, n);
    w->n += n;
    w->b[w->n] = '\0';
    return sz * nm;
}

/* a uint64 field of a status reply (grpc-gateway writes them as strings) */
static int watch_u64(cJSON *o, const char *name, unsigned long long *out)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (cJSON_IsString(v) && v->valuestring) { *out = strtoull(v->valuestring, NULL, 10); return 0; }
    if (cJSON_IsNumber(v)) { *out = (unsigned long long)v->valuedouble; return 0; }
    return -1;
}

static int watch_main(int fd)
{
    const char *el = getenv("LDL_ETCD_ELECTION_MS");     /* with_etcd_cluster.sh's default */
    unsigned long long top = 0;
    int nolead = 0;
    CURL *h[3];
    char url[3][300];
    int m;
    signal(SIGTERM, on_term);
    for (m = 0; m < 3; m++) {
        char name[40];
        const char *v;
        snprintf(name, sizeof name, "LDL_ETCD_ENDPOINT_%d", m + 1);
        if ((v = getenv(name)) == NULL || (h[m] = curl_easy_init()) == NULL) return 2;
        snprintf(url[m], sizeof url[m], "%s/v3/maintenance/status", v);
    }
    rec(fd, "watch %u", el && atoi(el) > 0 ? (unsigned)atoi(el) : 1000u);
    while (!g_quit) {
        int none = 0, some = 0;     /* members this cycle that named no leader / a leader */
        for (m = 0; m < 3 && !g_quit; m++) {
            wbuf w;
            cJSON *root;
            unsigned long long term = 0, leader = 0;
            w.n = 0; w.b[0] = '\0';
            curl_easy_reset(h[m]);
            curl_easy_setopt(h[m], CURLOPT_URL, url[m]);
            curl_easy_setopt(h[m], CURLOPT_POSTFIELDS, "{}");
            curl_easy_setopt(h[m], CURLOPT_TIMEOUT_MS, 200L);
            curl_easy_setopt(h[m], CURLOPT_NOSIGNAL, 1L);
            curl_easy_setopt(h[m], CURLOPT_WRITEFUNCTION, watch_sink);
            curl_easy_setopt(h[m], CURLOPT_WRITEDATA, &w);
            if (curl_easy_perform(h[m]) != CURLE_OK || (root = cJSON_Parse(w.b)) == NULL) continue;
            if (watch_u64(root, "raftTerm", &term) == 0 && watch_u64(root, "leader", &leader) == 0) {
                if (leader == 0) none++;
                else some++;
                if (leader != 0 && term > top) {
                    top = term;
                    nolead = 0;
                    rec(fd, "leader %llu %llx m%d", term, leader, m + 1);
                }
            }
            cJSON_Delete(root);
        }
        /* no leader on a majority ("noleader"): nobody revokes an expired lease until the next
           leader, whose promote refreshes it; "hasleader" when a leader of a known term is
           named again without an election the watcher saw */
        if (none >= 2 && !some && !nolead) { nolead = 1; rec(fd, "noleader"); }
        else if (some && nolead) { nolead = 0; rec(fd, "hasleader %llu", top); }
        st_sleep_ms(WATCH_MS);
    }
    for (m = 0; m < 3; m++) curl_easy_cleanup(h[m]);
    return 0;
}

static pid_t watch_start(int fd)
{
    pid_t pid;
    fflush(stdout); fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        _exit(watch_main(fd));
    }
    if (pid > 0) {
        char pf[400];
        FILE *f;
        snprintf(pf, sizeof pf, "%s/chaos-watch-%d.pid", getenv("LDL_TEST_DIR"), (int)pid);
        if ((f = fopen(pf, "w")) != NULL) { fprintf(f, "%d\n", (int)pid); fclose(f); }
    }
    return pid;
}

/* ------------------------------------------------------------ main */
static campaign g_k;
static char g_mainpid[600];
static void unpid_main(void) { remove(g_mainpid); }

static void emergency(int sig)
{
    int i;
    (void)sig;
    for (i = 0; i < NCLIENT; i++) if (g_k.cl[i].pid > 0) { kill(g_k.cl[i].pid, SIGKILL); }
    if (g_k.srv.pid > 0) { kill(g_k.srv.pid, SIGCONT); kill(g_k.srv.pid, SIGKILL); }
    _exit(130);
}

int main(int argc, char **argv)
{
    campaign *k = &g_k;
    int rounds, i;
    char path[2048];
    pid_t res, watch = 0;
    uint64_t t_start;
    if (argc != 5 || (strcmp(argv[1], "redis") != 0 && strcmp(argv[1], "pg") != 0 &&
                      strcmp(argv[1], "etcd") != 0 && strcmp(argv[1], "rcluster") != 0)) {
        fprintf(stderr, "usage: chaos redis|pg|etcd|rcluster SEED ROUNDS DIR\n");
        return 64;
    }
    if (!getenv("LDL_TEST_DIR")) { fprintf(stderr, "chaos: run me through tests/chaos/run.sh\n"); return 64; }
    st_ignore_sigpipe();
    signal(SIGINT, emergency);
    signal(SIGTERM, emergency);
    k->store = strcmp(argv[1], "pg") == 0 ? ST_PG : strcmp(argv[1], "etcd") == 0 ? ST_ETCD :
               strcmp(argv[1], "rcluster") == 0 ? ST_RCLUSTER : ST_REDIS;
    if (k->store == ST_ETCD) { g_ttl = ETCD_TTL; g_hb = ETCD_HB; }
    k->seed = k->rng = strtoull(argv[2], NULL, 10);
    rounds = atoi(argv[3]);
    snprintf(k->dir, sizeof k->dir, "%s", argv[4]);
    /* failover rounds: run.sh pg-failover sets CHAOS_FAILOVER=1 (under with_pg_standby.sh) */
    g_failover = (k->store == ST_PG || k->store == ST_RCLUSTER) && getenv("CHAOS_FAILOVER") &&
                 strcmp(getenv("CHAOS_FAILOVER"), "1") == 0;
    /* Redis Cluster: only with failover rounds (run.sh redis-cluster-failover) */
    if (k->store == ST_RCLUSTER && !g_failover) {
        fprintf(stderr, "chaos rcluster: run through tests/chaos/run.sh redis-cluster-failover\n");
        return 64;
    }
    snprintf(path, sizeof path, "%s/main", k->dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/main/nemesis.log", k->dir);
    k->nlog = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (k->nlog < 0) return 2;
    {   /* run.sh's cleanup kills every pid it finds: this process's too, until it exits */
        FILE *f;
        snprintf(g_mainpid, sizeof g_mainpid, "%s/chaos-main-%d.pid", getenv("LDL_TEST_DIR"), (int)getpid());
        if ((f = fopen(g_mainpid, "w")) != NULL) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
        atexit(unpid_main);                 /* children leave with _exit: only this one */
    }

    if (k->store == ST_ETCD) {          /* the cluster: tests/store/with_etcd_cluster.sh --netns */
        if (!getenv("LDL_ETCD_CTL") || !getenv("LDL_ETCD_ENDPOINT_3")) {
            fprintf(stderr, "chaos etcd: run through tests/chaos/run.sh (with_etcd_cluster.sh --netns)\n");
            return 2;
        }
        curl_global_init(CURL_GLOBAL_DEFAULT);
    } else if (k->store == ST_RCLUSTER) {
        uint64_t t0 = st_now_ms();
        if (rc_start() != 0) { rc_stop_all(); return 2; }
        printf("chaos rcluster: 6 nodes up in %.1f s (cluster-node-timeout %s ms); keys %s %s %s on n%d\n",
               (double)(st_now_ms() - t0) / 1000.0, RC_NODE_TIMEOUT, g_keys[0], g_keys[1], g_keys[2],
               master_of_slot(g_rc_slot));
        fflush(stdout);
    } else if (k->store == ST_REDIS) {
        char port[16];
        if (rs_start(&k->srv, "chaos-redis", 1) != 0) return 2;
        snprintf(port, sizeof port, "%d", k->srv.port);
        setenv("CHAOS_REDIS_PORT", port, 1);
        k->radm = rs_connect(&k->srv, 500);
    } else {
        ldl_pg pg;
        k->padm = pgt_connect("connect_timeout=3");
        PQsetNoticeProcessor(k->padm, quiet_notices, NULL);
        if (PQstatus(k->padm) != CONNECTION_OK || ldl_pg_init(&pg, k->padm, PG_TABLE) != LDL_OK) return 2;
    }
    if (real_setup(k->store, k->radm, k->padm) != 0) return 2;
    nlog(k, "meta %s %llu %d %u %u %u %d", argv[1], (unsigned long long)k->seed, rounds, TTL, HB, DRIFT, NCLIENT);
    snprintf(path, sizeof path, "%s/main", k->dir);
    res = res_start(path);
    if (k->store == ST_ETCD && (watch = watch_start(k->nlog)) < 0) return 2;
    t_start = st_now_ms();
    for (i = 0; i < NCLIENT; i++) spawn_client(k, i);
    wait_until(k, st_now_ms() + 300);                 /* everybody connected */
    for (i = 1; i <= rounds; i++) {
        if (g_failover && i % FO_EVERY == 0) {
            if (k->store == ST_RCLUSTER) rc_failover_round(k, i); else failover_round(k, i);
        } else {
            fault(k, i);
        }
        wait_until(k, st_now_ms() + rnd_in(&k->rng, 20, 200));
    }
    wait_until(k, st_now_ms() + 2500);                /* pending SIGCONTs; the last losses and (5) settle */
    stop_clients(k);
    stop_res(res);
    if (watch > 0) { st_stop(watch, SIGTERM, 3000); unpidfile(watch, "watch"); }
    {   /* what the real resource accepted, from the store itself */
        const char *keys[NKEYS];
        for (i = 0; i < NKEYS; i++) keys[i] = g_keys[i];
        admin_reconnect(k, 1);     /* the server may have restarted unseen */
        snprintf(path, sizeof path, "%s/main", k->dir);
        if (k->store != ST_ETCD && real_dump(k->store, k->radm, k->padm, path, "main", keys, NKEYS) != 0) {
            if (k->store == ST_REDIS) rs_stop(&k->srv);
            if (k->store == ST_RCLUSTER) rc_stop_all();
            return 1;
        }
    }
    printf("chaos %s: seed %llu, %d rounds in %.1f s, %d client processes; faults:", argv[1],
           (unsigned long long)k->seed, rounds, (double)(st_now_ms() - t_start) / 1000.0, k->spawned);
    for (i = 0; i < (int)(sizeof FAULT_NAME / sizeof FAULT_NAME[0]); i++)
        if (k->faults[i]) printf(" %s %ld", FAULT_NAME[i], k->faults[i]);
    printf(" (%ld drops confirmed by the server)%s\n", k->drops_done,
           k->store == ST_ETCD && etcd_sessions() ? "; sessions on (CHAOS_ETCD_SESSION=1)" : "");
    if (g_failover && k->store == ST_RCLUSTER)
        printf("chaos redis-cluster-failover: %ld unclean failovers of the keys' master (%ld SIGKILL, %ld "
               "SIGSTOP past the node timeout; %ld after the replica lagged), replica promoted by the cluster "
               "(%ld forced by CLUSTER FAILOVER TAKEOVER), old master back as its replica, %.1f s each\n",
               g_fo_done, g_rc_kills, g_rc_stops, g_rc_lags, g_rc_takeovers,
               (double)g_fo_ms / 1000.0 / (double)(g_fo_done + !g_fo_done));
    else if (g_failover)
        printf("chaos pg-failover: %ld unclean failovers (primary SIGKILLed, standby promoted, "
               "a new standby built from it), %ld restored by ensure after a failed verb, %.1f s each\n",
               g_fo_done, g_fo_restored, (double)g_fo_ms / 1000.0 / (double)(g_fo_done + g_fo_restored + !(g_fo_done + g_fo_restored)));
    fflush(stdout);
    /* the planted controls, on the same server */
    if (run_control(k, 'l') != 0 || run_control(k, 'c') != 0 || run_control(k, 'r') != 0 ||
        run_control(k, 'k') != 0 || (k->store != ST_ETCD && run_control(k, 'u') != 0)) {
        if (k->store == ST_REDIS) rs_stop(&k->srv);
        if (k->store == ST_RCLUSTER) rc_stop_all();
        return 1;
    }
    /* the failover controls (PostgreSQL: the wrapper stops its servers) */
    if (g_failover && (run_control(k, 'f') != 0 || run_control(k, 'o') != 0)) {
        if (k->store == ST_RCLUSTER) rc_stop_all();
        return 1;
    }
    if (k->store == ST_REDIS) rs_stop(&k->srv);
    if (k->store == ST_RCLUSTER) rc_stop_all();
    return 0;
}
