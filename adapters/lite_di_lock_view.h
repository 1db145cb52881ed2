/* lite_di_lock_view.h -- one interface for every store adapter (v0.4, issue 31)

   Every adapter of lite_di_lock.h (Redis, Redis Cluster, PostgreSQL, etcd,
   SQLite, and the header's own MemoryStore) fills the same `ldl_view`: the
   lock-facing store (synchronous `store` or non-blocking `async`), its
   extensions (`ext`: holder identity, inspect), and one table of operations
   (`ops`) with the same verbs for every store. An event loop, a CLI or a
   test that holds an ldl_view needs no per-store branch after the line that
   attaches the adapter. The shape follows hiredis's event hooks (async.h:
   each adapter fills the same hooks in one attach call); the decision and
   what was rejected are in docs/decisions/0020-one-view.md, and the contract
   each adapter meets is docs/adapters.md.

   USE: include it AFTER the headers of the adapters you use (it may be
   included again after more adapters: each adapter's attach functions are
   defined once, when its header has been seen). It adds no symbols: the
   attach functions are static inline, and each op calls the adapter's own
   public functions.

       #include "lite_di_lock.h"
       #include "adapters/lite_di_lock_redis.h"
       #include "adapters/lite_di_lock_view.h"

       ldl_view v;
       ldl_view_redis_async(&v, &ra);          the only store-specific line
       desc.async_store = &v.async;            (v outlives every lock on it)
       for (;;) {                              the loop, for ANY store:
           ldl_view_fd fds[8];
           int n = v.ops->fds(v.self, fds, 8); register fds[i].fd / .events
           long t = v.ops->timeout_ms(v.self); wait at most t ms (-1: none)
           v.ops->pump(v.self);                after readiness or timeout
           ldl_lock_poll(&lock) for each lock; poll() queues requests in the
                                               view's buffer: they are
                                               written by the NEXT pump, so
                                               pump once more after polling
                                               (or wait for a writable event)
       }
       v.ops->close(v.self);

   THE RETURN CONVENTION, once for every op: negative = an ldl_result code
   (LDL_EINVAL bad argument, LDL_ESTORE the store failed or answered what
   does not prove itself, LDL_EUNSUPPORTED this view has no such verb --
   ops are never NULL in an attached view, so a caller never tests for
   NULL); >= 0 = the op's count or answer as written beside it. why(self)
   then says what happened, and never answers NULL.

   EVENT LOOPS (epoll, kqueue, libuv, a game loop's select):
   - The fds can CHANGE: after a reconnect, a rebind, a drop, a Cluster
     redirect or a new etcd connection. Ask `fds` again after every pump and
     re-register what differs (epoll: EPOLL_CTL_DEL the old fd before it is
     closed, EPOLL_CTL_ADD the new one). `fds` answers 0 while a link is
     down. A Redis, PostgreSQL or etcd view stays down after a drop until
     you rebind it to a new connection; the Cluster view opens its masters
     again inside later pumps (its timeout_ms keeps them coming).
   - Edge-triggered readiness is safe only if you pump until the view has
     nothing left to read: one pump reads a bounded amount (Redis:
     LDL_REDIS_PUMP_READS reads; etcd: LDL_ETCD_BATCH exchanges), so a pump
     that answered > 0 may have left bytes in the socket. Pump again while it
     answers > 0, or use level-triggered readiness (the simple choice).
   - A request queued by ldl_lock_poll (renew, acquire, release) waits in
     the view's buffer until the next pump or a writable event: pump after
     polling the locks, or register the fds' LDL_WANT_WRITE interest.
   - One ldl_scope (the reference container) serves every lock of the loop;
     each lock's run() makes its own child scope.

   THE FENCED WRITE, one call shape for every store (`fenced`): see
   ldl_fenced below. 1 = written, 0 = refused (a higher fence already
   wrote, or on etcd the lock key no longer holds this fence: a stale
   holder; nothing was written), negative = an error (nothing known about
   the write when LDL_ESTORE: the reply was lost).

   DURABILITY, one report for every store (`durability`): an OR of the
   LDL_SURVIVES_* bits below, each set only when the store proves it NOW
   (a standby that cannot be promoted counts for nothing), or negative when
   it could not tell; why names what takes a bit away. */
#ifndef LITE_DI_LOCK_VIEW_H
#define LITE_DI_LOCK_VIEW_H

#include "lite_di_lock.h"
#if defined(LDL_NO_ASYNC) || defined(LDL_NO_ELECTION)
#error "lite_di_lock_view.h needs the non-blocking stores and the store extensions"
#endif
#include <poll.h>
#include <string.h>

#define LDL_SURVIVES_CRASH    1   /* the store's process crashes and restarts */
#define LDL_SURVIVES_POWER    2   /* the host loses power (the data was fsync'ed) */
#define LDL_SURVIVES_FAILOVER 4   /* a replica that has every grant is promoted */

typedef struct ldl_view_fd {
    int fd;                       /* a socket to wait on */
    int events;                   /* LDL_WANT_READ | LDL_WANT_WRITE */
} ldl_view_fd;

typedef struct ldl_view_stats {   /* counters since attach/init; 0 = not counted by this view */
    uint64_t submitted;           /* requests accepted (hand-backs included) */
    uint64_t answered;            /* requests the store answered */
    uint64_t failed;              /* requests completed LDL_ESTORE without an answer */
    uint64_t handed_back;         /* cancelled grants the view released */
    uint64_t refused_full;        /* submits refused: no free request slot */
    uint64_t link_failures;       /* links given up (failed, dropped, rebound, reconnected) */
    uint64_t live;                /* requests in flight now */
    uint64_t max_live;
} ldl_view_stats;

/* The fenced write: `resource` names what the fence protects, `fence` is
   the holder's token. Where the store runs the caller's write atomically
   with the check (Redis, Redis Cluster, etcd), the write is argv:
     Redis:  the command, e.g. {"SET","k","v"}; keyidx[0..nkeys-1] say
             which argv are key names (routing, ACL); `resource` names the
             mark;
     etcd:   {"put", target, value} or {"delete", target}; target is an
             etcd key as is (no prefix); `resource` is the LOCK key, whose
             create revision must equal the fence;
   PostgreSQL and SQLite check (and raise the mark) inside the caller's own
   open transaction on the view's connection: argc is 0 and the caller
   commits its writes after a 1.
   reply (synchronous Redis views): when non-NULL, *reply receives the
   command's redisReply (yours to freeReplyObject), else it is freed.
   Non-blocking views: done(ctx, rc, reply) follows exactly once after an
   LDL_OK answer, from inside a pump; the desc must stay valid until then. */
typedef struct ldl_fenced {
    const char   *resource;
    int64_t       fence;
    int           argc;
    const char  **argv;
    const size_t *argvlen;        /* NULL = strlen of each argv */
    int           nkeys;
    const int    *keyidx;
    void        **reply;
    void        (*done)(void *ctx, int rc, void *reply);
    void         *ctx;
} ldl_fenced;

typedef struct ldl_view_ops {
    const char *name;             /* "redis", "redis-async", "pg", ... */
    int   nonblocking;            /* 1: `async` is the lock-facing store; 0: `store` */
    /* non-blocking I/O: >= 0 requests completed; negative: the link failed
       (every live request was completed LDL_ESTORE). Synchronous views: 0. */
    int   (*pump)(void *self);
    /* up to n sockets and their interest; how many (0: none now) */
    int   (*fds)(void *self, ldl_view_fd *out, int n);
    /* ms until the view needs a pump without readiness; -1: none */
    long  (*timeout_ms)(void *self);
    /* block at most max_ms for readiness or the view's timeout; >= 0 */
    int   (*wait)(void *self, int max_ms);
    /* every queued and in-flight request answered LDL_ESTORE now; how many */
    int   (*drop)(void *self);
    /* a new connection (the adapter's own type: redisContext *, PGconn *,
       ldl_etcd *) replaces the old, which stays the caller's; everything
       pending on the old is answered LDL_ESTORE first */
    int   (*rebind)(void *self, void *conn);
    const char *(*why)(const void *self);
    int   (*stats)(const void *self, ldl_view_stats *out);
    int   (*durability)(void *self, char *why, size_t why_len);
    int   (*fenced)(void *self, const ldl_fenced *w);
    /* closes what the view owns (idempotent); caller-owned connections stay */
    void  (*close)(void *self);
} ldl_view_ops;

typedef struct ldl_view {
    const ldl_view_ops *ops;
    void           *self;         /* the adapter's struct */
    ldl_store       store;        /* synchronous views (zero otherwise) */
    ldl_async_store async;        /* non-blocking views (zero otherwise) */
    ldl_store_ext   ext;          /* holder identity and inspect, as the adapter has them */
} ldl_view;

/* ---- shared pieces (private) ---- */
LDL__INLINE int  ldl__view_zero(void *s) { (void)s; return 0; }
LDL__INLINE int  ldl__view_nowait(void *s, int max_ms) { (void)s; return max_ms < 0 ? LDL_EINVAL : 0; }
LDL__INLINE long ldl__view_never(void *s) { (void)s; return -1; }
LDL__INLINE int  ldl__view_nofds(void *s, ldl_view_fd *o, int n) { (void)s; return !o || n < 1 ? LDL_EINVAL : 0; }
LDL__INLINE int  ldl__view_norebind(void *s, void *c) { (void)s; (void)c; return LDL_EUNSUPPORTED; }
LDL__INLINE int  ldl__view_nofence(void *s, const ldl_fenced *w) { (void)s; return w ? LDL_EUNSUPPORTED : LDL_EINVAL; }
LDL__INLINE int  ldl__view_nostats(const void *s, ldl_view_stats *o) {
    (void)s; if (!o) return LDL_EINVAL; memset(o, 0, sizeof *o); return LDL_OK;
}
LDL__INLINE void ldl__view_noclose(void *s) { (void)s; }
LDL__INLINE int  ldl__view_nodur(void *s, char *why, size_t n, const char *text) {
    (void)s;
    if (why && n) { size_t k = strlen(text); if (k >= n) k = n - 1; memcpy(why, text, k); why[k] = 0; }
    return LDL_EUNSUPPORTED;
}
LDL__INLINE void ldl__view_say(char *why, size_t n, const char *text) {
    if (why && n) { size_t k = strlen(text); if (k >= n) k = n - 1; memcpy(why, text, k); why[k] = 0; }
}
/* the ops table of a synchronous view: no I/O of its own (pump, fds, timeout,
   wait, drop, rebind answer "nothing") and no stats; what differs is named */
#define LDL__VIEW_SYNC_OPS(name, why, durability, fenced, close)                   \
    { name, 0, ldl__view_zero, ldl__view_nofds, ldl__view_never, ldl__view_nowait, \
      ldl__view_zero, ldl__view_norebind, why, ldl__view_nostats, durability, fenced, close }
/* wait on a view's own fds and timeout with poll(2); answers ready fds (>= 0) */
LDL__INLINE int ldl__view_poll(int (*fds)(void *, ldl_view_fd *, int), long (*timeout_ms)(void *),
                               void *self, int max_ms) {
    ldl_view_fd f[16];
    struct pollfd p[16];
    int n, i, rc;
    long t;
    if (max_ms < 0) return LDL_EINVAL;
    n = fds(self, f, 16);
    t = timeout_ms(self);
    if (t >= 0 && t < max_ms) max_ms = (int)t;
    if (n < 0) n = 0;
    for (i = 0; i < n; i++) {
        p[i].fd = f[i].fd;
        p[i].events = (short)(((f[i].events & LDL_WANT_READ) ? POLLIN : 0) |
                              ((f[i].events & LDL_WANT_WRITE) ? POLLOUT : 0));
        p[i].revents = 0;
    }
    rc = poll(p, (nfds_t)n, max_ms);
    return rc < 0 ? 0 : rc;           /* EINTR: the caller pumps and waits again */
}
/* copy a native stats struct's shared fields (every adapter names them alike) */
#define LDL__VIEW_STATS(o, s, FAILED)                                              \
    do { memset((o), 0, sizeof *(o));                                             \
         (o)->submitted = (s)->submitted; (o)->answered = (s)->answered;          \
         (o)->handed_back = (s)->handed_back; (o)->refused_full = (s)->refused_full; \
         (o)->live = (uint64_t)(s)->live; (o)->max_live = (uint64_t)(s)->max_live; \
         FAILED } while (0)

/* ---- the MemoryStore (both faces: store and async) ---- */
LDL__INLINE const char *ldl__view_ms_why(const void *s) { (void)s; return ""; }
LDL__INLINE int ldl__view_ms_dur(void *s, char *why, size_t n) {
    ldl__view_say(why, n, "in-process MemoryStore: every lease ends with the process");
    (void)s; return 0;
}
LDL__INLINE int ldl_view_memstore(ldl_view *v, ldl_memstore *ms) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("memory", ldl__view_ms_why, ldl__view_ms_dur, ldl__view_nofence, ldl__view_noclose);
    if (!v || !ms) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = ms;
    v->store = ldl_memstore_store(ms);
    v->async = ldl_memstore_async_store(ms);
    v->ext = ldl_memstore_ext(ms);
    return LDL_OK;
}
#endif /* LITE_DI_LOCK_VIEW_H */

/* ==================================================================== */
/* Each adapter's attach functions, defined once its header has been seen.
   Each answers LDL_OK (v filled) or LDL_EINVAL (v or the adapter NULL).
   The adapter struct must be initialised already and outlive v. */

#if defined(LITE_DI_LOCK_REDIS_H) && !defined(LDL__VIEW_REDIS)
#define LDL__VIEW_REDIS
LDL__INLINE const char *ldl__vr_why(const void *s) { return ldl_redis_why((const ldl_redis *)s); }
LDL__INLINE int ldl__vr_dur(void *s, char *why, size_t n) {
    int rc = ldl_redis_check_durability((ldl_redis *)s, why, n);
    return rc < 0 ? rc : rc == 1 ? (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER) : 0;
}
LDL__INLINE int ldl__vr_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc < 1 || !w->argv) return LDL_EINVAL;
    return ldl_redis_fence((ldl_redis *)s, w->resource, w->fence, w->nkeys, w->keyidx,
                           w->argc, w->argv, w->argvlen, (redisReply **)w->reply);
}
LDL__INLINE int ldl_view_redis(ldl_view *v, ldl_redis *r) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("redis", ldl__vr_why, ldl__vr_dur, ldl__vr_fenced, ldl__view_noclose);
    if (!v || !r) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = r;
    v->store = ldl_redis_store(r);
    v->ext = ldl_redis_ext(r);
    return LDL_OK;
}
LDL__INLINE int ldl__vra_pump(void *s) { return ldl_redis_async_pump((ldl_redis_async *)s); }
LDL__INLINE int ldl__vra_fds(void *s, ldl_view_fd *o, int n) {
    int ev = 0, fd = ldl_redis_async_fd((const ldl_redis_async *)s, &ev);
    if (!o || n < 1) return LDL_EINVAL;
    if (fd < 0) return 0;
    o[0].fd = fd; o[0].events = ev;
    return 1;
}
LDL__INLINE long ldl__vra_timeout(void *s) {
    /* a link that is down reconnects from the pump: come back soon */
    int ev = 0;
    return ldl_redis_async_fd((const ldl_redis_async *)s, &ev) < 0 ? 50 : -1;
}
LDL__INLINE int ldl__vra_drop(void *s) { return ldl_redis_async_drop((ldl_redis_async *)s); }
LDL__INLINE int ldl__vra_rebind(void *s, void *c) {
    return ldl_redis_async_rebind((ldl_redis_async *)s, (redisContext *)c);
}
LDL__INLINE const char *ldl__vra_why(const void *s) { return ldl_redis_async_why((const ldl_redis_async *)s); }
LDL__INLINE int ldl__vra_stats(const void *s, ldl_view_stats *o) {
    const ldl_redis_stats *st = ldl_redis_async_stats((const ldl_redis_async *)s);
    if (!o || !st) return LDL_EINVAL;
    LDL__VIEW_STATS(o, st, o->link_failures = st->link_failures;);
    return LDL_OK;
}
LDL__INLINE int ldl__vra_dur(void *s, char *why, size_t n) {
    return ldl__view_nodur(s, why, n, "ask a synchronous view (CONFIG GET would queue behind the locks' requests)");
}
LDL__INLINE void ldl__vra_done(void *ctx, int rc, redisReply *reply) {
    const ldl_fenced *w = (const ldl_fenced *)ctx;
    w->done(w->ctx, rc, reply);
}
LDL__INLINE int ldl__vra_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc < 1 || !w->argv || !w->done) return LDL_EINVAL;
    return ldl_redis_async_fence((ldl_redis_async *)s, w->resource, w->fence, w->nkeys, w->keyidx,
                                 w->argc, w->argv, w->argvlen, ldl__vra_done, (void *)w);
}
LDL__INLINE int ldl__vra_wait(void *s, int max_ms) {
    return ldl__view_poll(ldl__vra_fds, ldl__vra_timeout, s, max_ms);
}
LDL__INLINE int ldl_view_redis_async(ldl_view *v, ldl_redis_async *ra) {
    static const ldl_view_ops ops = {
        "redis-async", 1, ldl__vra_pump, ldl__vra_fds, ldl__vra_timeout, ldl__vra_wait,
        ldl__vra_drop, ldl__vra_rebind, ldl__vra_why, ldl__vra_stats,
        ldl__vra_dur, ldl__vra_fenced, ldl__view_noclose };
    if (!v || !ra) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = ra;
    v->async = ldl_redis_async_store(ra);
    v->ext = ldl_redis_async_ext(ra);
    return LDL_OK;
}
#endif

#if defined(LITE_DI_LOCK_REDIS_CLUSTER_H) && !defined(LDL__VIEW_REDIS_CLUSTER)
#define LDL__VIEW_REDIS_CLUSTER
LDL__INLINE const char *ldl__vc_why(const void *s) { return ldl_redis_cluster_why((const ldl_redis_cluster *)s); }
LDL__INLINE int ldl__vc_dur(void *s, char *why, size_t n) {
    int rc = ldl_redis_cluster_check_durability((ldl_redis_cluster *)s, why, n);   /* every master */
    return rc < 0 ? rc : rc == 1 ? (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER) : 0;   /* never FAILOVER */
}
LDL__INLINE int ldl__vc_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc < 1 || !w->argv) return LDL_EINVAL;
    return ldl_redis_cluster_fence((ldl_redis_cluster *)s, w->resource, w->fence, w->nkeys, w->keyidx,
                                   w->argc, w->argv, w->argvlen, (redisReply **)w->reply);
}
LDL__INLINE void ldl__vc_close(void *s) { ldl_redis_cluster_free((ldl_redis_cluster *)s); }
LDL__INLINE int ldl_view_redis_cluster(ldl_view *v, ldl_redis_cluster *rc) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("redis-cluster", ldl__vc_why, ldl__vc_dur, ldl__vc_fenced, ldl__vc_close);
    if (!v || !rc) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = rc;
    v->store = ldl_redis_cluster_store(rc);
    v->ext = ldl_redis_cluster_ext(rc);
    return LDL_OK;
}
LDL__INLINE int ldl__vca_pump(void *s) { return ldl_redis_cluster_async_pump((ldl_redis_cluster_async *)s); }
LDL__INLINE int ldl__vca_fds(void *s, ldl_view_fd *o, int n) {
    int fds[64], ev[64], k, i;
    if (!o || n < 1) return LDL_EINVAL;
    k = ldl_redis_cluster_async_fds((const ldl_redis_cluster_async *)s, fds, ev, n < 64 ? n : 64);
    for (i = 0; i < k; i++) { o[i].fd = fds[i]; o[i].events = ev[i]; }
    return k < 0 ? 0 : k;
}
LDL__INLINE long ldl__vca_timeout(void *s) { (void)s; return 50; } /* map reads, reconnects, parked requests */
LDL__INLINE int ldl__vca_drop(void *s) { return ldl_redis_cluster_async_drop((ldl_redis_cluster_async *)s); }
LDL__INLINE const char *ldl__vca_why(const void *s) {
    return ldl_redis_cluster_async_why((const ldl_redis_cluster_async *)s);
}
LDL__INLINE int ldl__vca_stats(const void *s, ldl_view_stats *o) {
    const ldl_redis_cluster_stats *st = ldl_redis_cluster_async_stats((const ldl_redis_cluster_async *)s);
    if (!o || !st) return LDL_EINVAL;
    memset(o, 0, sizeof *o);
    o->link_failures = st->reconnects;
    return LDL_OK;
}
LDL__INLINE void ldl__vca_done(void *ctx, int rc, redisReply *reply) {
    const ldl_fenced *w = (const ldl_fenced *)ctx;
    w->done(w->ctx, rc, reply);
}
LDL__INLINE int ldl__vca_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc < 1 || !w->argv || !w->done) return LDL_EINVAL;
    return ldl_redis_cluster_async_fence((ldl_redis_cluster_async *)s, w->resource, w->fence, w->nkeys,
                                         w->keyidx, w->argc, w->argv, w->argvlen, ldl__vca_done, (void *)w);
}
LDL__INLINE int ldl__vca_dur(void *s, char *why, size_t n) {
    return ldl__view_nodur(s, why, n, "ask a synchronous ldl_redis_cluster view (it asks every master)");
}
LDL__INLINE void ldl__vca_close(void *s) { ldl_redis_cluster_async_free((ldl_redis_cluster_async *)s); }
LDL__INLINE int ldl__vca_wait(void *s, int max_ms) {
    return ldl__view_poll(ldl__vca_fds, ldl__vca_timeout, s, max_ms);
}
LDL__INLINE int ldl_view_redis_cluster_async(ldl_view *v, ldl_redis_cluster_async *ra) {
    static const ldl_view_ops ops = {
        "redis-cluster-async", 1, ldl__vca_pump, ldl__vca_fds, ldl__vca_timeout, ldl__vca_wait,
        ldl__vca_drop, ldl__view_norebind, ldl__vca_why, ldl__vca_stats,
        ldl__vca_dur, ldl__vca_fenced, ldl__vca_close };
    if (!v || !ra) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = ra;
    v->async = ldl_redis_cluster_async_store(ra);
    v->ext = ldl_redis_cluster_async_ext(ra);
    return LDL_OK;
}
#endif

#if defined(LITE_DI_LOCK_PG_H) && !defined(LDL__VIEW_PG)
#define LDL__VIEW_PG
LDL__INLINE const char *ldl__vp_why(const void *s) { return ldl_pg_why((const ldl_pg *)s); }
LDL__INLINE int ldl__vp_dur(void *s, char *why, size_t n) {
    int rc = ldl_pg_check_durability((ldl_pg *)s, why, n);
    if (rc < 0) return rc;
    return ((rc & LDL_PG_SURVIVES_CRASH) ? (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER) : 0) |
           ((rc & LDL_PG_SURVIVES_FAILOVER) ? LDL_SURVIVES_FAILOVER : 0);
}
LDL__INLINE int ldl__vp_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc != 0) return LDL_EINVAL;   /* the write is the caller's transaction */
    return ldl_pg_fence((ldl_pg *)s, w->resource, w->fence);
}
LDL__INLINE int ldl_view_pg(ldl_view *v, ldl_pg *p) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("pg", ldl__vp_why, ldl__vp_dur, ldl__vp_fenced, ldl__view_noclose);
    if (!v || !p) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = p;
    v->store = ldl_pg_store(p);
    v->ext = ldl_pg_ext(p);
    return LDL_OK;
}
LDL__INLINE int ldl__vpa_pump(void *s) { return ldl_pg_async_pump((ldl_pg_async *)s); }
LDL__INLINE int ldl__vpa_fds(void *s, ldl_view_fd *o, int n) {
    int ev = 0, fd = ldl_pg_async_fd((const ldl_pg_async *)s, &ev);
    if (!o || n < 1) return LDL_EINVAL;
    if (fd < 0) return 0;
    o[0].fd = fd; o[0].events = ev;
    return 1;
}
LDL__INLINE int ldl__vpa_drop(void *s) { return ldl_pg_async_drop((ldl_pg_async *)s); }
LDL__INLINE int ldl__vpa_rebind(void *s, void *c) { return ldl_pg_async_rebind((ldl_pg_async *)s, (PGconn *)c); }
LDL__INLINE const char *ldl__vpa_why(const void *s) { return ldl_pg_async_why((const ldl_pg_async *)s); }
LDL__INLINE int ldl__vpa_stats(const void *s, ldl_view_stats *o) {
    const ldl_pg_stats *st = ldl_pg_async_stats((const ldl_pg_async *)s);
    if (!o || !st) return LDL_EINVAL;
    LDL__VIEW_STATS(o, st, o->failed = st->failed; o->link_failures = st->link_failures;);
    return LDL_OK;
}
LDL__INLINE int ldl__vpa_dur(void *s, char *why, size_t n) {
    return ldl__view_nodur(s, why, n, "ask a synchronous view (the non-blocking connection is in pipeline mode)");
}
LDL__INLINE int ldl__vpa_wait(void *s, int max_ms) {
    return ldl__view_poll(ldl__vpa_fds, ldl__view_never, s, max_ms);
}
LDL__INLINE int ldl_view_pg_async(ldl_view *v, ldl_pg_async *pa) {
    static const ldl_view_ops ops = {
        "pg-async", 1, ldl__vpa_pump, ldl__vpa_fds, ldl__view_never, ldl__vpa_wait,
        ldl__vpa_drop, ldl__vpa_rebind, ldl__vpa_why, ldl__vpa_stats,
        ldl__vpa_dur, ldl__view_nofence, ldl__view_noclose };
    if (!v || !pa) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = pa;
    v->async = ldl_pg_async_store(pa);
    v->ext = ldl_pg_async_ext(pa);
    return LDL_OK;
}
#endif

#if defined(LITE_DI_LOCK_ETCD_H) && !defined(LDL__VIEW_ETCD)
#define LDL__VIEW_ETCD
LDL__INLINE const char *ldl__ve_why(const void *s) { return ldl_etcd_why((const ldl_etcd *)s); }
LDL__INLINE int ldl__ve_dur(void *s, char *why, size_t n) {
    return ldl__view_nodur(s, why, n, "etcd: not checked by the adapter (raft commits on a quorum; "
                                      "--unsafe-no-fsync cannot be seen from a client)");
}
LDL__INLINE int ldl__ve_fenced(void *s, const ldl_fenced *w) {
    ldl_etcd_write ew;
    if (!w || !w->argv || w->argc < 2 || w->argc > 3 || !w->argv[0] || !w->argv[1]) return LDL_EINVAL;
    memset(&ew, 0, sizeof ew);
    ew.key = w->resource; ew.fence = w->fence; ew.target = w->argv[1];
    if (w->argc == 2 && strcmp(w->argv[0], "delete") == 0) ew.del = 1;
    else if (w->argc == 3 && strcmp(w->argv[0], "put") == 0 && w->argv[2]) {
        ew.value = w->argv[2];
        ew.value_len = w->argvlen ? w->argvlen[2] : strlen(w->argv[2]);
    } else return LDL_EINVAL;
    return ldl_etcd_fenced((ldl_etcd *)s, &ew);
}
LDL__INLINE void ldl__ve_close(void *s) { ldl_etcd_close((ldl_etcd *)s); }
LDL__INLINE int ldl_view_etcd(ldl_view *v, ldl_etcd *e) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("etcd", ldl__ve_why, ldl__ve_dur, ldl__ve_fenced, ldl__ve_close);
    if (!v || !e) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = e;
    v->store = ldl_etcd_store(e);
    v->ext = ldl_etcd_ext(e);
    return LDL_OK;
}
LDL__INLINE int ldl__vea_pump(void *s) { return ldl_etcd_async_pump((ldl_etcd_async *)s); }
LDL__INLINE int ldl__vea_fds(void *s, ldl_view_fd *o, int n) {
    /* curl's sockets now (curl_multi_fdset: libcurl 7.88 has no curl_multi_waitfds) */
    fd_set r, w, x;
    int maxfd = -1, fd, k = 0;
    CURLM *m = ldl_etcd_async_multi((ldl_etcd_async *)s);
    if (!o || n < 1) return LDL_EINVAL;
    if (!m) return 0;
    FD_ZERO(&r); FD_ZERO(&w); FD_ZERO(&x);
    if (curl_multi_fdset(m, &r, &w, &x, &maxfd) != CURLM_OK) return 0;
    for (fd = 0; fd <= maxfd && k < n; fd++) {
        int ev = (FD_ISSET(fd, &r) ? LDL_WANT_READ : 0) | (FD_ISSET(fd, &w) ? LDL_WANT_WRITE : 0);
        if (ev) { o[k].fd = fd; o[k].events = ev; k++; }
    }
    return k;
}
LDL__INLINE long ldl__vea_timeout(void *s) { return ldl_etcd_async_timeout_ms((ldl_etcd_async *)s); }
LDL__INLINE int ldl__vea_wait(void *s, int max_ms) { return ldl_etcd_async_wait((ldl_etcd_async *)s, max_ms); }
LDL__INLINE int ldl__vea_drop(void *s) { return ldl_etcd_async_drop((ldl_etcd_async *)s); }
LDL__INLINE int ldl__vea_rebind(void *s, void *c) { return ldl_etcd_async_rebind((ldl_etcd_async *)s, (ldl_etcd *)c); }
LDL__INLINE const char *ldl__vea_why(const void *s) { return ldl_etcd_async_why((const ldl_etcd_async *)s); }
LDL__INLINE int ldl__vea_stats(const void *s, ldl_view_stats *o) {
    const ldl_etcd_stats *st = ldl_etcd_async_stats((const ldl_etcd_async *)s);
    if (!o || !st) return LDL_EINVAL;
    LDL__VIEW_STATS(o, st, o->failed = st->failed;);
    return LDL_OK;
}
LDL__INLINE void ldl__vea_close(void *s) { ldl_etcd_async_close((ldl_etcd_async *)s); }
LDL__INLINE int ldl_view_etcd_async(ldl_view *v, ldl_etcd_async *ea) {
    static const ldl_view_ops ops = {
        "etcd-async", 1, ldl__vea_pump, ldl__vea_fds, ldl__vea_timeout, ldl__vea_wait,
        ldl__vea_drop, ldl__vea_rebind, ldl__vea_why, ldl__vea_stats,
        ldl__ve_dur, ldl__view_nofence, ldl__vea_close };
    if (!v || !ea) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = ea;
    v->async = ldl_etcd_async_store(ea);
    v->ext = ldl_etcd_async_ext(ea);
    return LDL_OK;
}
#endif

#if defined(LITE_DI_LOCK_SQLITE_H) && !defined(LDL__VIEW_SQLITE)
#define LDL__VIEW_SQLITE
LDL__INLINE const char *ldl__vs_why(const void *s) { return ldl_sqlite_why((const ldl_sqlite *)s); }
LDL__INLINE int ldl__vs_dur(void *s, char *why, size_t n) {
    int rc = ldl_sqlite_check_durability((ldl_sqlite *)s);
    ldl__view_say(why, n, ldl_sqlite_why((const ldl_sqlite *)s));   /* names the settings */
    if (rc < 0) return rc;
    return rc == LDL_SQLITE_POWER_SAFE ? (LDL_SURVIVES_CRASH | LDL_SURVIVES_POWER) :
           rc == LDL_SQLITE_CRASH_SAFE ? LDL_SURVIVES_CRASH : 0;
}
LDL__INLINE int ldl__vs_fenced(void *s, const ldl_fenced *w) {
    if (!w || w->argc != 0) return LDL_EINVAL;   /* the write is the caller's transaction */
    return ldl_sqlite_fence((ldl_sqlite *)s, w->resource, w->fence);
}
LDL__INLINE void ldl__vs_close(void *s) { ldl_sqlite_close((ldl_sqlite *)s); }
/* SQLite answers inside every call: the non-blocking face completes inside
   each submit, so both faces are filled and pump has nothing to do */
LDL__INLINE int ldl_view_sqlite(ldl_view *v, ldl_sqlite *s) {
    static const ldl_view_ops ops =
        LDL__VIEW_SYNC_OPS("sqlite", ldl__vs_why, ldl__vs_dur, ldl__vs_fenced, ldl__vs_close);
    if (!v || !s) return LDL_EINVAL;
    memset(v, 0, sizeof *v);
    v->ops = &ops; v->self = s;
    v->store = ldl_sqlite_store(s);
    v->async = ldl_sqlite_async_store(s);
    v->ext = ldl_sqlite_async_ext(s);   /* acquire_owned, inspect AND submit_owned: both faces */
    return LDL_OK;
}
#endif
