/* lite_di_lock_redis_cluster.h -- Redis Cluster routing for lite_di_lock_redis.h
   (needs hiredis, POSIX).

   Every lock key lives in ONE hash slot (all of its Redis keys, lease, fence
   and v0.2 owner, carry the hash tag {P:K}), so a lock is served by the
   master that owns that slot.
   This header keeps the slot map, opens one connection per master and sends
   each call through lite_di_lock_redis.h's own public API on that master's
   connection (one ldl_redis / ldl_redis_async per master): the scripts, the
   nonce check, the reply bounds and the cancel rule are that header's.

     ldl_redis_cluster        synchronous (ldl_store): blocking contexts.
     ldl_redis_cluster_async  non-blocking (ldl_async_store): one NON-blocking
                              context per master, every master pumped by one
                              pump call; nothing in it waits.

   QUICK START (synchronous)

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_REDIS_IMPLEMENTATION
       #include "adapters/lite_di_lock_redis.h"
       #define LDL_REDIS_CLUSTER_IMPLEMENTATION
       #include "adapters/lite_di_lock_redis_cluster.h"

       static ldl_redis_cluster rc;          (about 29 KiB: the slot table and 16 nodes)
       if (ldl_redis_cluster_init(&rc, "10.0.0.1:7000,10.0.0.2:7000", "myapp", 500) != LDL_OK)
           puts(ldl_redis_cluster_why(&rc));
       ldl_store store = ldl_redis_cluster_store(&rc);
       desc.store = &store;
       ...
       ldl_redis_cluster_free(&rc);          (closes every connection it opened)

   QUICK START (non-blocking)

       static ldl_redis_cluster_req reqs[2 * NLOCKS + 64];
       static ldl_redis_cluster_async ra;
       ldl_redis_cluster_async_init(&ra, "10.0.0.1:7000", "game", 500, reqs, 2 * NLOCKS + 64);
       ldl_async_store as = ldl_redis_cluster_async_store(&ra);
       desc.async_store = &as;
       for (;;) { ldl_redis_cluster_async_pump(&ra); ...ldl_lock_poll each lock... }

   SEEDS: "host:port[,host:port...]", numeric IPv4 / IPv6 addresses. The
   non-blocking view refuses a host name (LDL_EINVAL) and never resolves
   anything; the synchronous view resolves host-name seeds at init only.
   After init every address comes from a map or a redirect, and one naming a
   host is refused in both views (decision 0106). Init reads the slot
   map (CLUSTER SLOTS) from the first seed that answers -- init BLOCKS, at
   most timeout_ms per seed -- and connects to every master the map names.
   The adapter OWNS these connections (hiredis allocates them): masters come
   and go in a failover, so it opens the new ones itself.

   ROUTING. The slot of a lock key is CRC16 (XMODEM, as the cluster spec
   defines it) of the hash tag of "{P:K}:lease", modulo 16384, computed here
   (ldl_redis_cluster_keyslot; the tests compare it with CLUSTER KEYSLOT).
     MOVED slot host:port  the map is read again (CLUSTER SLOTS, from the node
                           that answered MOVED) and the call goes ONCE more,
                           to the new owner. A second MOVED is LDL_ESTORE.
     ASK slot host:port    (a slot being migrated, the key already moved):
                           synchronous view: the call, once, on the target,
                           ASKING before each attempt (the EVAL retry after
                           NOSCRIPT too). Non-blocking view: the base adapter's
                           pipeline has no room for ASKING, so the request is
                           PARKED until a map read (every 50 ms) names a new
                           owner for the slot, then sent once to it; a renew
                           waits as long as its TTL (the lock cancels it at its
                           lease's deadline first), anything else 2 x
                           timeout_ms, then LDL_ESTORE.
     TRYAGAIN              (acquire's two keys during a migration when they are
                           not all on one side): synchronous view LDL_ESTORE;
                           non-blocking view parked like ASK.
   A redirect is an error reply, so it is never a grant; every answer that is
   taken is the nonce-checked answer of the node that ran the script. Routing
   reads the Redis adapter's structured error (ldl_redis_last_error, and per
   request ldl_redis_async_on_error), never its why text.

   ANSWERS as lite_di_lock_redis.h: 1, 0, negative (LDL_ESTORE, LDL_EINVAL,
   LDL_ENOSPC). ldl_redis_cluster_why() / ldl_redis_cluster_async_why() keep the
   text of the last error (a master's why, prefixed with its address).

   LINK FAILURES. Synchronous view: a master whose connection failed is
   reconnected at its next call (at most once a second per master), after a
   map refresh. Non-blocking view: a failed master's live requests complete
   with LDL_ESTORE (base adapter), the map is refreshed and the master is
   reconnected at most once a second, all inside pumps.
   ldl_redis_cluster_async_fail_stalled(&ra, ms) drops every master that has
   not answered for ms (a SIGSTOPped or partitioned node); without it, its
   leases simply expire at their deadlines by the lock's clock and other
   masters go on being served.

   FAILOVER (read docs/redis-cluster.md): replication is asynchronous, so a
   promoted replica may miss the latest lease and fence writes: a lease can
   be granted twice. The FENCE does not repeat (v0.3, decision 0115): every
   grant's token is max(stored + 1, E * 2^32), E = the master's config epoch
   (cluster_my_epoch of CLUSTER INFO; each node's last epoch is kept with its
   replication ID, which the acquire script checks, since a promotion always
   changes it). A promoted replica always takes an epoch above the old
   master's, so its tokens are above every token the old master granted, even
   when the counter it inherited lagged (tests/store/redis_failover.c). The
   ACL needs +info +cluster|info. Limits: every client of the cluster must be v0.3; fewer
   than 2^32 grants of one key per epoch; an epoch above 2^31 - 1 refuses
   grants (an error reply, LDL_ESTORE). ldl_redis_cluster_set_wait()
   (synchronous view) makes every grant and renewal wait for replicas with
   WAIT: it narrows that window, it does not close it (measured cost in the
   doc).

   MAP READS go through short-lived connections of the adapter's own (never a
   lock connection); the synchronous view uses the Redis adapter's bounded
   exchange (ldl_redis_command: a wall-clock limit of timeout_ms per read).
   The reader refuses an array of more than 16384 elements, a string of more
   than 256 bytes or more than 300,000 objects before allocating. Refused
   maps: a host name, a port outside 1..65535, overlapping ranges, a slot
   uncovered, too many nodes (O(16384) whatever the reply). An accepted map
   REBUILDS the node table (nodes with requests in flight kept; a node added
   for one ASK is not kept) and is trusted wholesale: any node's map may
   re-route every slot (docs/redis-cluster.md). WAIT goes through
   ldl_redis_command too (at most the WAIT timeout plus timeout_ms).

   MEMORY: hiredis allocates the contexts; the non-blocking view also mallocs,
   per master, a pool of nreqs ldl_redis_req for its ldl_redis_async. Both are
   freed by _free / _async_free.

   THE CORE'S OP. The non-blocking view gives each master's ldl_redis_async an
   ldl_op of its own per request, marks it in flight with the core's public
   ldl_op_begin and reads its answer after each pump with ldl_op_result
   (decision 0103). Submit only ops that come from an ldl_lock (as the core
   does).

   VERBS (decision 0105): _async_why, _async_stats, _async_drop (every request
   answered LDL_ESTORE at once, every master link dropped; how many). No
   _rebind: the view owns its connections. _set_clock / _async_set_clock: an
   ldl_clock for call limits and pacing (all-zero = built-in).

   OPTIONS
     LDL_REDIS_CLUSTER_IMPLEMENTATION  in exactly one .c/.cpp file, after
                                 LDL_REDIS_IMPLEMENTATION's include
     LDL_REDIS_CLUSTER_NODES     nodes (masters and replicas) remembered (default 16)
     LDL_REDIS_CLUSTER_API       defaults to LDL_API (static with LDL_STATIC)
     LDL_NO_ASYNC                leaves the non-blocking view out
*/
#ifndef LITE_DI_LOCK_REDIS_CLUSTER_H
#define LITE_DI_LOCK_REDIS_CLUSTER_H

#include "lite_di_lock_redis.h"

#ifndef LDL_REDIS_CLUSTER_API
#define LDL_REDIS_CLUSTER_API LDL_API
#endif
#ifndef LDL_REDIS_CLUSTER_NODES
#define LDL_REDIS_CLUSTER_NODES 16
#endif
#define LDL_REDIS_CLUSTER_SLOTS 16384
#define LDL_REDIS_CLUSTER_HOST_MAX 64
#define LDL_REDIS_CLUSTER_WHY_MAX 200

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_redis_cluster_stats {
    uint64_t moved;          /* MOVED replies seen */
    uint64_t ask;            /* ASK replies seen (followed in the synchronous view) */
    uint64_t tryagain;       /* TRYAGAIN replies seen */
    uint64_t refreshes;      /* slot maps read */
    uint64_t retries;        /* calls sent a second time after a redirect */
    uint64_t reconnects;     /* master connections opened again */
    uint64_t wait_short;     /* WAIT answered fewer replicas than asked (call failed) */
} ldl_redis_cluster_stats;

typedef struct ldl__rc_node {       /* private */
    char          _host[LDL_REDIS_CLUSTER_HOST_MAX];
    int           _port;
    redisContext *_c;               /* NULL: not connected */
    uint64_t      _tried_ms;        /* last (re)connect attempt */
    int           _master;          /* owns slots in the current map */
    ldl_redis     _r;               /* synchronous view */
#ifndef LDL_NO_ASYNC
    ldl_redis_async _ra;            /* non-blocking view */
    ldl_redis_req  *_reqs;          /* its request pool (malloc) */
#endif
} ldl__rc_node;

typedef struct ldl__rc_budget {     /* private: bounds one CLUSTER SLOTS reply */
    const void *_dflt;              /* hiredis' own reply builders */
    long        _left;              /* objects still allowed */
    int         _refused;
} ldl__rc_budget;

typedef struct ldl__rc_map {        /* private */
    ldl__rc_node  _n[LDL_REDIS_CLUSTER_NODES];
    int           _nn;
    unsigned char _slot[LDL_REDIS_CLUSTER_SLOTS];   /* node index + 1; 0 = unknown */
    char          _prefix[LDL_REDIS_PREFIX_MAX];
    uint32_t      _timeout_ms;
    int           _stale;
    int           _async;
    uint64_t      _refresh_ms;      /* last map read started (synchronous view) */
    int           _wait_n;          /* synchronous view: WAIT after grants and renewals */
    uint32_t      _wait_ms;
    int           _numeric;         /* host names refused everywhere (non-blocking view) */
    int           _ask_node;        /* synchronous view: a node added for one ASK, else -1 */
    ldl_clock     _clock;           /* zero = the built-in monotonic clock */
    ldl_redis_cluster_stats _stats;
    char          _why[LDL_REDIS_CLUSTER_WHY_MAX];
} ldl__rc_map;

typedef struct ldl_redis_cluster { ldl__rc_map _m; } ldl_redis_cluster;

/* CRC16 slot (0..16383) of a Redis key name as the cluster hashes it (its hash
   tag if it has a non-empty one) */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_keyslot(const char *name, size_t len);

/* v0.4: after init, drive this adapter through ONE interface,
   adapters/lite_di_lock_view.h (ldl_view_redis_cluster, ldl_view_redis_cluster_async): its ops do what
   the calls marked DEPRECATED below do. Those stay in v0.4 unchanged and
   leave the public surface in v0.5 (CHANGELOG lists each replacement;
   tools/api-deprecated.txt). */
/* --- synchronous view --------------------------------------------------- */
/* seeds "host:port[,...]"; prefix as for ldl_redis_init; timeout_ms > 0: the
   connect and command timeout of every connection. BLOCKS (connects, reads
   the map). LDL_OK, LDL_EINVAL (bad argument) or LDL_ESTORE (no seed answered
   with a map that covers all 16384 slots); why says why. Call _free after
   any answer. */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_init(ldl_redis_cluster *rc, const char *seeds,
                                                 const char *prefix, uint32_t timeout_ms);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API ldl_store ldl_redis_cluster_store(ldl_redis_cluster *rc);
/* v0.2 holder identity (HOLDER IDENTITY in lite_di_lock_redis.h): acquire_owned
   and inspect, routed like every call (the owner key {P:K}:owner shares the
   lock's hash tag); submit_owned NULL */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API ldl_store_ext ldl_redis_cluster_ext(ldl_redis_cluster *rc);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_why(const ldl_redis_cluster *rc);
/* read the map again now (blocking); LDL_OK or LDL_ESTORE */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_refresh(ldl_redis_cluster *rc);
/* the slot of lock key `key` under this adapter's prefix, -1 on a bad key */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_slot(const ldl_redis_cluster *rc, const char *key);
/* "host:port" of the master the map names for lock key `key` ("" unknown) */
LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_master(const ldl_redis_cluster *rc, const char *key,
                                                           char *buf, size_t n);
LDL_REDIS_CLUSTER_API const ldl_redis_cluster_stats *ldl_redis_cluster_stats_get(const ldl_redis_cluster *rc);
/* Synchronous view only, off by default (replicas 0). After a grant or a renewal,
   send WAIT replicas timeout_ms on the master's connection; when fewer replicas
   acknowledged, a grant is released again and the call answers LDL_ESTORE (why
   says so), a renewal answers LDL_ESTORE (the lock goes LOST). Narrows the
   failover window, does not close it: read docs/redis-cluster.md. */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_set_wait(ldl_redis_cluster *rc, int replicas, uint32_t timeout_ms);
/* the clock call limits and reconnect pacing are measured with (after init;
   all-zero = the built-in monotonic clock) */
LDL_REDIS_CLUSTER_API void ldl_redis_cluster_set_clock(ldl_redis_cluster *rc, ldl_clock clock);
/* ldl_redis_check_durability asked of EVERY master the map names (blocking,
   one CONFIG GET round per master): 1 only when every master answers 1;
   0 when one answers 0 (why names it and what to change); negative when
   one cannot be asked (why names it). Replicas are asynchronous: a failover
   can still lose the fence, so this never speaks for a promotion. */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_check_durability(ldl_redis_cluster *rc, char *why, size_t why_len);
/* closes every connection; the struct may be init'ed again */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API void ldl_redis_cluster_free(ldl_redis_cluster *rc);

#ifndef LDL_NO_ASYNC
/* --- non-blocking view -------------------------------------------------- */
typedef struct ldl_redis_cluster_req {      /* one request; private */
    ldl_op    _inner;               /* the op given to the master's ldl_redis_async */
    ldl_op   *_op;                  /* the lock's op */
    size_t    _next;                /* free list, index + 1 */
    int       _state;               /* 0 free, 1 sent, 2 parked (waits for a map) */
    int       _kind, _node, _tries;
    int       _ekind;               /* LDL_REDIS_ERR_* of its last answer (the master's hook) */
    uint64_t  _gen;                 /* parked: waits for a map read after this generation */
    uint64_t  _parked_ms;
    uint32_t  _ttl_ms;
    int64_t   _token;
    char      _key[LDL_KEY_MAX];
    char      _owner[LDL_OWNER_MAX];  /* an owned acquire's owner (copied at submit) */
} ldl_redis_cluster_req;

typedef struct ldl_redis_cluster_async {
    ldl__rc_map            _m;
    ldl_redis_cluster_req *_reqs;
    size_t                 _nreqs, _free;
    redisContext          *_ctl;     /* non-blocking CLUSTER SLOTS read, NULL when none */
    ldl__rc_budget         _ctl_budget;
    int                    _ctl_node;
    uint64_t               _ctl_start, _gen, _want, _ctl_after;
} ldl_redis_cluster_async;

/* as ldl_redis_cluster_init (BLOCKS while it reads the first map, then opens
   non-blocking connections); reqs: nreqs caller-owned slots, 2 x locks + a
   margin. Every master also gets a pool of nreqs ldl_redis_req (malloc). */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_init(ldl_redis_cluster_async *ra, const char *seeds,
                                                       const char *prefix, uint32_t timeout_ms,
                                                       ldl_redis_cluster_req *reqs, size_t nreqs);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API ldl_async_store ldl_redis_cluster_async_store(ldl_redis_cluster_async *ra);
/* v0.2 holder identity: submit_owned only (inspect from a synchronous
   ldl_redis_cluster) */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API ldl_store_ext ldl_redis_cluster_async_ext(ldl_redis_cluster_async *ra);
/* pumps every master (ldl_redis_async_pump), the map read, the reconnects and
   the redirects; never waits. Answers the completions delivered (>= 0). */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_pump(ldl_redis_cluster_async *ra);
/* drops every master with requests unanswered for more than ms; how many */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fail_stalled(ldl_redis_cluster_async *ra, uint32_t ms);
/* the sockets to wait on: up to n (fd, events) pairs, answers how many */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fds(const ldl_redis_cluster_async *ra, int *fds,
                                                      int *events, int n);
/* decision 0105's verb: every sent and parked request answered LDL_ESTORE at
   once, every master link dropped (reconnected inside later pumps); how many */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_drop(ldl_redis_cluster_async *ra);
LDL_REDIS_CLUSTER_API void ldl_redis_cluster_async_set_clock(ldl_redis_cluster_async *ra, ldl_clock clock);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_async_why(const ldl_redis_cluster_async *ra);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API const ldl_redis_cluster_stats *ldl_redis_cluster_async_stats(const ldl_redis_cluster_async *ra);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API void ldl_redis_cluster_async_free(ldl_redis_cluster_async *ra);
/* The fenced write, non-blocking view (issue 31): routed to the master the map
   names for the mark's slot and queued on that master's pipeline behind the
   locks' requests (ldl_redis_async_fence: same script, same nonce proof, same
   bounds, same answers). Every declared key must share the mark's slot (put
   {resource} in its name), else LDL_EINVAL and nothing is sent. No redirect
   is followed: a MOVED or ASK means the script did not run there; done gets
   LDL_ESTORE, the map is read again, and the caller may submit again.
   LDL_OK: done(ctx, rc, reply) follows exactly once, from inside a pump (or
   _drop / _free, with LDL_ESTORE); negative: nothing queued, done not called. */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fence(ldl_redis_cluster_async *ra, const char *resource,
                                                        int64_t fence, int nkeys, const int *keyidx, int argc,
                                                        const char **argv, const size_t *argvlen,
                                                        ldl_redis_fence_fn done, void *ctx);
#endif /* LDL_NO_ASYNC */

/* --- fenced writes (issue 19; decision 0110; FENCED WRITES in
   lite_di_lock_redis.h: the script, the mark's name, the answers) ----------
   Synchronous view. The call goes to the master of the MARK's slot (the
   slot of "{R}:P:mark": its hash tag is R when R has no '}'). Every declared
   key must hash to that same slot -- put "{R}" in your key names -- else the
   call answers LDL_EINVAL with a why naming the key's index and both slots,
   BEFORE anything is sent. Routing as every call of this view: MOVED reads
   the map again and sends once more to the new owner, ASK sends once to the
   target with ASKING first, TRYAGAIN is LDL_ESTORE (a redirect means the
   script did not run, so the second send cannot write twice). *reply_out as
   ldl_redis_fence: yours to freeReplyObject. */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_fence(ldl_redis_cluster *rc, const char *resource, int64_t fence,
                                                  int nkeys, const int *keyidx, int argc, const char **argv,
                                                  const size_t *argvlen, redisReply **reply_out);
/* the slot of resource R's mark under this adapter's prefix; -1 on a bad name */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_fence_slot(const ldl_redis_cluster *rc, const char *resource);

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_CLUSTER_H */

/* ====================================================================== */
#ifdef LDL_REDIS_CLUSTER_IMPLEMENTATION
#ifndef LITE_DI_LOCK_REDIS_CLUSTER_C
#define LITE_DI_LOCK_REDIS_CLUSTER_C

#include <arpa/inet.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the view's clock (ldl_redis_cluster_set_clock), the built-in one when none was given */
static uint64_t ldl__rc_now_ms(const ldl__rc_map *m) {
    struct timespec ts;
    if (m->_clock.now_ms) return m->_clock.now_ms(m->_clock.ctx);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void ldl__rc_say4(ldl__rc_map *m, const char *a, const char *b, const char *c, const char *d) {
    size_t n = 0;
    const char *p[4];
    int i;
    p[0] = a; p[1] = b; p[2] = c; p[3] = d;
    for (i = 0; i < 4; i++)
        for (; p[i] && *p[i] && n + 1 < sizeof m->_why; p[i]++) m->_why[n++] = *p[i];
    m->_why[n] = 0;
}

static void ldl__rc_say(ldl__rc_map *m, const char *a, const char *b, const char *c) {
    ldl__rc_say4(m, a, b, c, NULL);
}

/* the call kinds beyond LDL_OP_ACQUIRE / _RENEW / _RELEASE (v0.2 holder identity) */
#define LDL__RC_OWNED   4
#define LDL__RC_INSPECT 5

/* the slot table stores node index + 1 in a byte */
typedef char ldl__rc_check_nodes[(LDL_REDIS_CLUSTER_NODES >= 1 && LDL_REDIS_CLUSTER_NODES <= 255) ? 1 : -1];

/* ------------------------------------------------------------ bounded map replies
   A map read goes through short-lived contexts of our own, whose reader gets these
   builders: hiredis' own ones, refusing (before allocating) an array of more than 16384
   elements, a string of more than 256 bytes, or more than LDL__RC_OBJECTS objects in one
   reply. (hiredis 0.14 sets no limit of its own.) */
#define LDL__RC_OBJECTS 300000L
#ifndef LDL_NO_ASYNC                /* the synchronous view reads maps with ldl_redis_command */
static const redisReplyObjectFunctions *ldl__rc_dflt(const redisReadTask *t) {
    return (const redisReplyObjectFunctions *)((ldl__rc_budget *)t->privdata)->_dflt;
}
static int ldl__rc_spend(const redisReadTask *t, int ok) {
    ldl__rc_budget *b = (ldl__rc_budget *)t->privdata;
    if (!ok || --b->_left < 0) { b->_refused = 1; return 0; }
    return 1;
}
static void *ldl__rc_mk_str(const redisReadTask *t, char *str, size_t len) {
    return ldl__rc_spend(t, len <= 256) ? ldl__rc_dflt(t)->createString(t, str, len) : NULL;
}
static void *ldl__rc_mk_array(const redisReadTask *t, int n) {
    return ldl__rc_spend(t, n <= LDL_REDIS_CLUSTER_SLOTS) ? ldl__rc_dflt(t)->createArray(t, n) : NULL;
}
static void *ldl__rc_mk_int(const redisReadTask *t, long long v) {
    return ldl__rc_spend(t, 1) ? ldl__rc_dflt(t)->createInteger(t, v) : NULL;
}
static void *ldl__rc_mk_nil(const redisReadTask *t) {
    return ldl__rc_spend(t, 1) ? ldl__rc_dflt(t)->createNil(t) : NULL;
}
static void ldl__rc_free_obj(void *o) { freeReplyObject(o); }
static const redisReplyObjectFunctions ldl__rc_fns = {
    ldl__rc_mk_str, ldl__rc_mk_array, ldl__rc_mk_int, ldl__rc_mk_nil, ldl__rc_free_obj
};

/* install the bounded builders on a context of our own; 0 ok, -1 out of memory */
static int ldl__rc_bound(redisContext *c, ldl__rc_budget *b) {
    redisReader *fresh = redisReaderCreate();
    if (!fresh || !c->reader) { if (fresh) redisReaderFree(fresh); return -1; }
    b->_dflt = fresh->fn;                     /* hiredis' static table: outlives the reader */
    redisReaderFree(fresh);
    b->_left = LDL__RC_OBJECTS;
    b->_refused = 0;
    c->reader->fn = (redisReplyObjectFunctions *)&ldl__rc_fns;
    c->reader->privdata = b;
    return 0;
}
#endif

/* ------------------------------------------------------------ CRC16 / slots */
static unsigned ldl__rc_crc16(const char *s, size_t n) {
    unsigned crc = 0;
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        crc ^= (unsigned)(unsigned char)s[i] << 8;
        for (b = 0; b < 8; b++) crc = (crc & 0x8000u) ? ((crc << 1) ^ 0x1021u) & 0xFFFFu : (crc << 1) & 0xFFFFu;
    }
    return crc;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_keyslot(const char *name, size_t len) {
    size_t s, e;
    if (!name) return 0;
    for (s = 0; s < len && name[s] != '{'; s++) {}
    if (s < len) {
        for (e = s + 1; e < len && name[e] != '}'; e++) {}
        if (e < len && e > s + 1) return (int)(ldl__rc_crc16(name + s + 1, e - s - 1) & 16383u);
    }
    return (int)(ldl__rc_crc16(name, len) & 16383u);
}

/* slot of lock key under prefix; -1 on a bad key */
static int ldl__rc_slot(const ldl__rc_map *m, const char *key) {
    char buf[LDL_REDIS_PREFIX_MAX + LDL_KEY_MAX + 16];
    size_t k, p, n = 0;
    if (!key) return -1;
    k = strlen(key);
    if (k == 0 || k >= LDL_KEY_MAX) return -1;
    p = strlen(m->_prefix);
    buf[n++] = '{';
    memcpy(buf + n, m->_prefix, p); n += p;
    buf[n++] = ':';
    memcpy(buf + n, key, k); n += k;
    memcpy(buf + n, "}:lease", 7); n += 7;
    return ldl_redis_cluster_keyslot(buf, n);
}

/* ------------------------------------------------------------ nodes
   An entry with _port 0 is free. The table is rebuilt from every accepted
   map (ldl__rc_apply): a node the map no longer names is forgotten unless
   requests wait on it; an ASK target is never kept (synchronous view). */
static int ldl__rc_find(const ldl__rc_map *m, const char *host, size_t hlen, int port) {
    int i;
    for (i = 0; i < m->_nn; i++)
        if (m->_n[i]._port == port && strlen(m->_n[i]._host) == hlen && memcmp(m->_n[i]._host, host, hlen) == 0)
            return i;
    return -1;
}

/* a numeric IPv4 or IPv6 address (nothing to resolve) */
static int ldl__rc_numeric(const char *host, size_t hlen) {
    char h[LDL_REDIS_CLUSTER_HOST_MAX];
    unsigned char a[16];
    if (hlen == 0 || hlen >= sizeof h) return 0;
    memcpy(h, host, hlen);
    h[hlen] = 0;
    return inet_pton(AF_INET, h, a) == 1 || inet_pton(AF_INET6, h, a) == 1;
}

static int ldl__rc_add(ldl__rc_map *m, const char *host, size_t hlen, int port) {
    int i;
    if (hlen == 0 || hlen >= LDL_REDIS_CLUSTER_HOST_MAX || port <= 0 || port > 65535) return -1;
    if (m->_numeric && !ldl__rc_numeric(host, hlen)) return -1;
    i = ldl__rc_find(m, host, hlen, port);
    if (i >= 0) return i;
    for (i = 0; i < m->_nn && m->_n[i]._port != 0; i++) {}
    if (i == m->_nn) {
        if (m->_nn >= LDL_REDIS_CLUSTER_NODES) return -1;
        m->_nn++;
    }
    memset(&m->_n[i], 0, sizeof m->_n[i]);
    memcpy(m->_n[i]._host, host, hlen);
    m->_n[i]._host[hlen] = 0;
    m->_n[i]._port = port;
    return i;
}

/* requests wait on node i (its connection must stay) */
static int ldl__rc_busy(const ldl__rc_map *m, int i) {
#ifndef LDL_NO_ASYNC
    return m->_async && m->_n[i]._c && ldl_redis_async_stats(&m->_n[i]._ra)->live > 0;
#else
    (void)m; (void)i;
    return 0;
#endif
}

static void ldl__rc_drop(ldl__rc_node *n) {
    if (n->_c) redisFree(n->_c);
    n->_c = NULL;
}

/* forget node i: its connection closed, its entry free */
static void ldl__rc_forget(ldl__rc_map *m, int i) {
    ldl__rc_drop(&m->_n[i]);
#ifndef LDL_NO_ASYNC
    free(m->_n[i]._reqs);
#endif
    memset(&m->_n[i], 0, sizeof m->_n[i]);
    while (m->_nn > 0 && m->_n[m->_nn - 1]._port == 0) m->_nn--;
}

static void ldl__rc_addr(const ldl__rc_node *n, char *buf, size_t cap) {
    char p[16];
    int v = n->_port, k = 0, j;
    size_t o = 0, i;
    char t[16];
    do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v && k < 15);
    for (j = 0; j < k; j++) p[j] = t[k - 1 - j];
    p[k] = 0;
    if (cap == 0) return;
    for (i = 0; n->_host[i] && o + 1 < cap; i++) buf[o++] = n->_host[i];
    if (o + 1 < cap) buf[o++] = ':';
    for (i = 0; p[i] && o + 1 < cap; i++) buf[o++] = p[i];
    buf[o] = 0;
}

static struct timeval ldl__rc_tv(uint32_t ms) {
    struct timeval tv;
    tv.tv_sec = (time_t)(ms / 1000u);
    tv.tv_usec = (suseconds_t)((ms % 1000u) * 1000u);
    return tv;
}

/* a blocking context to node i (a fresh one); NULL on failure (why set) */
static redisContext *ldl__rc_block_connect(ldl__rc_map *m, int i) {
    struct timeval tv = ldl__rc_tv(m->_timeout_ms);
    redisContext *c = redisConnectWithTimeout(m->_n[i]._host, m->_n[i]._port, tv);
    if (!c || c->err) {
        char where[LDL_REDIS_CLUSTER_HOST_MAX + 8];
        ldl__rc_addr(&m->_n[i], where, sizeof where);
        ldl__rc_say4(m, "connect ", where, ": ", c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    if (redisSetTimeout(c, tv) != REDIS_OK) { redisFree(c); return NULL; }
    return c;
}

/* parse "host:port" (length n) */
static int ldl__rc_hostport(const char *s, size_t n, size_t *hlen, int *port) {
    size_t i, colon = n;
    int v = 0;
    for (i = 0; i < n; i++) if (s[i] == ':') colon = i;
    if (colon == n || colon == 0 || colon + 1 == n || n - colon > 6) return 0;
    for (i = colon + 1; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *hlen = colon;
    *port = v;
    return v > 0 && v <= 65535;
}

/* Apply a CLUSTER SLOTS reply read from node `from`: 1 when accepted. Refused
   (0, why set, nothing changed): not a map, a host name (only numeric addresses
   are accepted from a map), a port outside 1..65535, overlapping slot ranges,
   a slot left uncovered, more than LDL_REDIS_CLUSTER_NODES nodes. Each slot is
   visited at most once before a refusal: O(16384) whatever the reply. An
   accepted map rebuilds the node table: it trusts that node wholesale (any
   node's map may re-route every slot; docs/redis-cluster.md). */
typedef struct ldl__rc_ep { const char *h; size_t hl; int port; int idx; } ldl__rc_ep;
static int ldl__rc_refuse(ldl__rc_map *m, const char *why) {
    ldl__rc_say(m, "map refused: ", why, NULL);
    return 0;
}
static int ldl__rc_apply(ldl__rc_map *m, const redisReply *rep, int from) {
    unsigned char fresh[LDL_REDIS_CLUSTER_SLOTS];   /* endpoint index + 1 */
    ldl__rc_ep ep[LDL_REDIS_CLUSTER_NODES];
    size_t i, covered = 0;
    int nep = 0, k, x;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) return ldl__rc_refuse(m, "CLUSTER SLOTS answered no array");
    memset(fresh, 0, sizeof fresh);
    for (i = 0; i < rep->elements; i++) {
        const redisReply *e = rep->element[i], *mh;
        long long a, b, sl;
        size_t j;
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 || e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER) return ldl__rc_refuse(m, "an entry of the wrong shape");
        a = e->element[0]->integer; b = e->element[1]->integer;
        if (a < 0 || b < a || b >= LDL_REDIS_CLUSTER_SLOTS) return ldl__rc_refuse(m, "a slot range out of 0..16383");
        for (j = 2; j < e->elements; j++) {          /* master first, then its replicas */
            const char *h;
            size_t hl;
            long long port;
            mh = e->element[j];
            if (mh->type != REDIS_REPLY_ARRAY || mh->elements < 2 || mh->element[0]->type != REDIS_REPLY_STRING ||
                mh->element[1]->type != REDIS_REPLY_INTEGER) return ldl__rc_refuse(m, "a node of the wrong shape");
            h = mh->element[0]->str; hl = mh->element[0]->len;
            port = mh->element[1]->integer;
            if (port < 1 || port > 65535) return ldl__rc_refuse(m, "a port outside 1..65535");
            if (hl == 0 || (hl == 1 && h[0] == '?')) {     /* unknown endpoint: the node asked */
                if (from < 0) return ldl__rc_refuse(m, "an unknown endpoint");
                h = m->_n[from]._host; hl = strlen(h);
            } else if (!ldl__rc_numeric(h, hl)) {
                return ldl__rc_refuse(m, "a host name (numeric addresses only: nothing is resolved)");
            }
            for (x = 0; x < nep && !(ep[x].port == (int)port && ep[x].hl == hl && memcmp(ep[x].h, h, hl) == 0); x++) {}
            if (x == nep) {
                if (nep == LDL_REDIS_CLUSTER_NODES) return ldl__rc_refuse(m, "more nodes than LDL_REDIS_CLUSTER_NODES");
                ep[x].h = h; ep[x].hl = hl; ep[x].port = (int)port; ep[x].idx = -1;
                nep++;
            }
            if (j == 2)
                for (sl = a; sl <= b; sl++) {
                    if (fresh[sl]) return ldl__rc_refuse(m, "overlapping slot ranges");
                    fresh[sl] = (unsigned char)(x + 1);
                    covered++;
                }
        }
    }
    if (covered != LDL_REDIS_CLUSTER_SLOTS) return ldl__rc_refuse(m, "CLUSTER SLOTS does not cover every slot");
    /* the table: what the map names, plus nodes requests still wait on */
    for (x = 0; x < nep; x++) ep[x].idx = ldl__rc_find(m, ep[x].h, ep[x].hl, ep[x].port);
    for (k = 0; k < m->_nn; k++) {
        int named = 0;
        if (m->_n[k]._port == 0) continue;
        for (x = 0; x < nep && !named; x++) named = ep[x].idx == k;
        if (!named && !ldl__rc_busy(m, k) && k != from) ldl__rc_forget(m, k);
    }
    for (x = 0; x < nep; x++) {
        int saved = m->_numeric;
        if (ep[x].idx >= 0) continue;
        m->_numeric = 0;                             /* '?' endpoints take a seed's name */
        ep[x].idx = ldl__rc_add(m, ep[x].h, ep[x].hl, ep[x].port);
        m->_numeric = saved;
        if (ep[x].idx < 0) return ldl__rc_refuse(m, "the node table is full (nodes with requests in flight)");
    }
    for (i = 0; i < LDL_REDIS_CLUSTER_SLOTS; i++) m->_slot[i] = (unsigned char)(ep[fresh[i] - 1].idx + 1);
    for (k = 0; k < m->_nn; k++) m->_n[k]._master = 0;
    for (i = 0; i < LDL_REDIS_CLUSTER_SLOTS; i++) m->_n[m->_slot[i] - 1]._master = 1;
    m->_stale = 0;
    m->_stats.refreshes++;
    return 1;
}

/* read the map through a blocking context c (from node `from`) with the Redis
   adapter's bounded exchange; LDL_OK or LDL_ESTORE */
static int ldl__rc_read_map(ldl__rc_map *m, redisContext *c, int from) {
    static const char *const argv[2] = { "CLUSTER", "SLOTS" };
    static const size_t lens[2] = { 7, 5 };
    ldl_redis r;
    ldl_redis_limits lim;
    redisReply *rep = NULL;
    int ok;
    memset(&lim, 0, sizeof lim);
    lim.elements = LDL_REDIS_CLUSTER_SLOTS;
    lim.string_bytes = 256;
    lim.objects = LDL__RC_OBJECTS;
    lim.reply_bytes = (size_t)1 << 22;
    lim.call_ms = m->_timeout_ms;
    if (ldl_redis_init(&r, c, m->_prefix) != LDL_OK) { ldl__rc_say(m, "CLUSTER SLOTS: ", ldl_redis_why(&r), NULL); return LDL_ESTORE; }
    ldl_redis_set_clock(&r, m->_clock);
    if (ldl_redis_command(&r, &lim, 2, (const char **)argv, lens, &rep) != LDL_OK) {
        ldl__rc_say(m, "CLUSTER SLOTS: ", ldl_redis_why(&r), NULL);
        return LDL_ESTORE;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        ldl__rc_say(m, "CLUSTER SLOTS refused: ", rep->str, NULL);
        freeReplyObject(rep);
        return LDL_ESTORE;
    }
    ok = ldl__rc_apply(m, rep, from);
    freeReplyObject(rep);
    return ok ? LDL_OK : LDL_ESTORE;
}

/* a map from any node, preferring `first`, through fresh short-lived blocking
   connections (never a lock connection: their stream stays the adapter's) */
static int ldl__rc_refresh(ldl__rc_map *m, int first) {
    int k, i, nn = m->_nn;
    m->_refresh_ms = ldl__rc_now_ms(m);
    /* `first`, then masters whose lock connection has not failed, then the rest (a
       frozen node costs a timeout: it is asked last) */
    for (k = -1; k < 3 * nn; k++) {
        redisContext *c;
        int rc, pass = k < 0 ? 0 : k / nn + 1, bad;
        i = k < 0 ? first : k % nn;
        if (i < 0 || i >= m->_nn || m->_n[i]._port == 0 || (k >= 0 && i == first)) continue;
        bad = m->_n[i]._c && m->_n[i]._c->err;
        if ((pass == 1 && (!m->_n[i]._master || bad)) || (pass == 2 && (m->_n[i]._master || bad)) ||
            (pass == 3 && !bad)) continue;
        c = ldl__rc_block_connect(m, i);
        if (!c) continue;
        rc = ldl__rc_read_map(m, c, i);
        redisFree(c);
        if (rc == LDL_OK) return LDL_OK;
    }
    if (!m->_why[0]) ldl__rc_say(m, "no node answered CLUSTER SLOTS", NULL, NULL);
    return LDL_ESTORE;
}

static int ldl__rc_setup(ldl__rc_map *m, const char *seeds, const char *prefix, uint32_t timeout_ms,
                         int numeric) {
    const char *s;
    size_t n;
    memset(m, 0, sizeof *m);
    m->_ask_node = -1;
    m->_numeric = numeric;
    if (!prefix) prefix = "ldl";
    n = strlen(prefix);
    if (n == 0 || n >= LDL_REDIS_PREFIX_MAX || strpbrk(prefix, ":{}")) {
        ldl__rc_say(m, "init: bad prefix (1 to LDL_REDIS_PREFIX_MAX-1 bytes, no ':', '{', '}')", NULL, NULL);
        return LDL_EINVAL;
    }
    memcpy(m->_prefix, prefix, n + 1);
    if (!seeds || !*seeds || timeout_ms == 0) {
        ldl__rc_say(m, "init: seeds empty or timeout 0", NULL, NULL);
        return LDL_EINVAL;
    }
    m->_timeout_ms = timeout_ms;
    for (s = seeds; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s), hl;
        int port;
        if (!ldl__rc_hostport(s, len, &hl, &port)) {
            ldl__rc_say(m, "init: bad seed list (want host:port[,host:port...]): ", seeds, NULL);
            return LDL_EINVAL;
        }
        if (numeric && !ldl__rc_numeric(s, hl)) {
            ldl__rc_say(m, "init: a seed is a host name; the non-blocking view takes numeric addresses "
                        "only (it never resolves): ", seeds, NULL);
            return LDL_EINVAL;
        }
        if (ldl__rc_add(m, s, hl, port) < 0) {
            ldl__rc_say(m, "init: too many seeds (LDL_REDIS_CLUSTER_NODES): ", seeds, NULL);
            return LDL_EINVAL;
        }
        s = e ? e + 1 : s + len;
    }
    return ldl__rc_refresh(m, 0);
}

/* ------------------------------------------------------------ synchronous view */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_init(ldl_redis_cluster *rc, const char *seeds,
                                                 const char *prefix, uint32_t timeout_ms) {
    if (!rc) return LDL_EINVAL;
    return ldl__rc_setup(&rc->_m, seeds, prefix, timeout_ms, 0);
}

LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_why(const ldl_redis_cluster *rc) {
    return rc ? rc->_m._why : "NULL adapter";
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_refresh(ldl_redis_cluster *rc) {
    if (!rc) return LDL_EINVAL;
    return ldl__rc_refresh(&rc->_m, -1);
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_slot(const ldl_redis_cluster *rc, const char *key) {
    return rc ? ldl__rc_slot(&rc->_m, key) : -1;
}

LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_master(const ldl_redis_cluster *rc, const char *key,
                                                           char *buf, size_t n) {
    int s;
    if (!buf || n == 0) return "";
    buf[0] = 0;
    if (!rc || (s = ldl__rc_slot(&rc->_m, key)) < 0 || !rc->_m._slot[s]) return buf;
    ldl__rc_addr(&rc->_m._n[rc->_m._slot[s] - 1], buf, n);
    return buf;
}

LDL_REDIS_CLUSTER_API void ldl_redis_cluster_set_clock(ldl_redis_cluster *rc, ldl_clock clock) {
    int n;
    if (!rc) return;
    rc->_m._clock = clock;
    for (n = 0; n < rc->_m._nn; n++) if (rc->_m._n[n]._c) ldl_redis_set_clock(&rc->_m._n[n]._r, clock);
}

LDL_REDIS_CLUSTER_API const ldl_redis_cluster_stats *ldl_redis_cluster_stats_get(const ldl_redis_cluster *rc) {
    return rc ? &rc->_m._stats : NULL;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_set_wait(ldl_redis_cluster *rc, int replicas, uint32_t timeout_ms) {
    if (!rc || replicas < 0 || replicas > 16 || (replicas > 0 && timeout_ms == 0)) return LDL_EINVAL;
    rc->_m._wait_n = replicas;
    rc->_m._wait_ms = timeout_ms;
    return LDL_OK;
}

/* WAIT on node i's connection through the Redis adapter's bounded exchange
   (the call may take the WAIT timeout plus the command timeout); 1 enough
   replicas acknowledged, 0 not (why set) */
static int ldl__rc_wait(ldl__rc_map *m, int i) {
    char n[16], t[16];
    const char *argv[3];
    size_t lens[3];
    ldl_redis_limits lim;
    redisReply *rep = NULL;
    int ok;
    snprintf(n, sizeof n, "%d", m->_wait_n);
    snprintf(t, sizeof t, "%lu", (unsigned long)m->_wait_ms);
    argv[0] = "WAIT"; lens[0] = 4;
    argv[1] = n;      lens[1] = strlen(n);
    argv[2] = t;      lens[2] = strlen(t);
    memset(&lim, 0, sizeof lim);
    lim.call_ms = m->_wait_ms + m->_timeout_ms;
    if (ldl_redis_command(&m->_n[i]._r, &lim, 3, argv, lens, &rep) != LDL_OK) rep = NULL;
    ok = rep && rep->type == REDIS_REPLY_INTEGER && rep->integer >= m->_wait_n;
    if (!ok) {
        m->_stats.wait_short++;
        ldl__rc_say(m, "WAIT: ", rep && rep->type == REDIS_REPLY_ERROR ? rep->str :
                    rep && rep->type == REDIS_REPLY_INTEGER ? "fewer replicas than asked acknowledged "
                    "the write within the timeout" : ldl_redis_why(&m->_n[i]._r), NULL);
    }
    if (rep) freeReplyObject(rep);
    return ok;
}

LDL_REDIS_CLUSTER_API void ldl_redis_cluster_free(ldl_redis_cluster *rc) {
    int i;
    if (!rc) return;
    for (i = 0; i < rc->_m._nn; i++) ldl__rc_drop(&rc->_m._n[i]);
}

/* the node's blocking lock connection, (re)opened if needed; NULL on failure */
static ldl_redis *ldl__rc_sync_node(ldl__rc_map *m, int i) {
    ldl__rc_node *n = &m->_n[i];
    if (n->_c && n->_c->err) {               /* failed earlier: reconnect, at most once a second */
        uint64_t now = ldl__rc_now_ms(m);
        if (now - n->_tried_ms < 1000) { ldl__rc_say(m, "connection down (retried within 1 s): ", n->_c->errstr, NULL); return NULL; }
        ldl__rc_drop(n);
        m->_stats.reconnects++;
    }
    if (!n->_c) {
        n->_tried_ms = ldl__rc_now_ms(m);
        n->_c = ldl__rc_block_connect(m, i);
        if (!n->_c) return NULL;
        if (ldl_redis_init(&n->_r, n->_c, m->_prefix) != LDL_OK) {
            ldl__rc_say(m, "init: ", ldl_redis_why(&n->_r), NULL);
            ldl__rc_drop(n);
            return NULL;
        }
        ldl_redis_set_clock(&n->_r, m->_clock);
        ldl_redis_set_epoch_fences(&n->_r, 1);      /* decision 0115 */
    }
    return &n->_r;
}

/* after a failed attempt on *node (an answer < 0, not LDL_EINVAL): say why, then
   decide. 0: give up with that answer (a link failure, TRYAGAIN, any other error, a
   redirect that is malformed, names a host, or is the second of its kind). 1: retry
   on *node (-1 when no node could be added: the caller answers LDL_ESTORE), with
   *asking set for an ASK. MOVED refreshes the map and retries once; ASK follows once.
   Routes on the Redis adapter's structured last error, never on its why text. */
static int ldl__rc_redirect(ldl__rc_map *m, ldl_redis *r, int slot, int *node, int *moved, int *asked,
                            int *asking) {
    const ldl_redis_error *e;
    size_t hl;
    int port, fresh, ek;
    char where[LDL_REDIS_CLUSTER_HOST_MAX + 8], addr[LDL_REDIS_ADDR_MAX];
    ldl__rc_addr(&m->_n[*node], where, sizeof where);
    ldl__rc_say(m, where, " ", ldl_redis_why(r));
    if (m->_n[*node]._c->err) { m->_stale = 1; return 0; }       /* link failure: not retried */
    e = ldl_redis_last_error(r);
    ek = e->kind;
    memcpy(addr, e->addr, sizeof addr);          /* a refresh may forget this node */
    if (ek == LDL_REDIS_ERR_TRYAGAIN) { m->_stats.tryagain++; return 0; }
    if (ek != LDL_REDIS_ERR_MOVED && ek != LDL_REDIS_ERR_ASK) return 0;
    if (!ldl__rc_hostport(addr, strlen(addr), &hl, &port)) return 0;
    if (!ldl__rc_numeric(addr, hl)) {
        ldl__rc_say(m, "redirect to a host name refused (numeric addresses only): ", addr, NULL);
        return 0;
    }
    fresh = ldl__rc_find(m, addr, hl, port) < 0;
    if (ek == LDL_REDIS_ERR_MOVED) {
        m->_stats.moved++;
        if ((*moved)++) return 0;                     /* bounded: one retry */
        if (ldl__rc_refresh(m, *node) == LDL_OK && m->_slot[slot] - 1 != *node) *node = m->_slot[slot] - 1;
        else *node = ldl__rc_add(m, addr, hl, port);  /* the redirect's own word */
        *asking = 0;
    } else {
        m->_stats.ask++;
        if ((*asked)++) return 0;
        *node = ldl__rc_add(m, addr, hl, port);
        if (fresh && *node >= 0) m->_ask_node = *node;     /* not kept after this call */
        *asking = 1;
    }
    m->_stats.retries++;
    return 1;
}

/* the end of every routed call: a node added for one ASK is not kept */
LDL_REDIS_CLUSTER_API int ldl_redis_cluster_check_durability(ldl_redis_cluster *rc, char *why, size_t why_len) {
    ldl__rc_map *m;
    char one[512], where[LDL_REDIS_CLUSTER_HOST_MAX + 8];
    int i, masters = 0;
    if (why && why_len > 0) why[0] = 0;
    if (!rc) return LDL_EINVAL;
    m = &rc->_m;
    for (i = 0; i < m->_nn; i++) {
        ldl_redis *r;
        int a;
        if (!m->_n[i]._master) continue;
        masters++;
        ldl__rc_addr(&m->_n[i], where, sizeof where);
        r = ldl__rc_sync_node(m, i);
        a = r ? ldl_redis_check_durability(r, one, sizeof one) : LDL_ESTORE;
        if (!r) snprintf(one, sizeof one, "%s", m->_why);
        if (a != 1) {
            if (why && why_len > 0) snprintf(why, why_len, "master %s: %s", where, one);
            if (!r) m->_stale = 1;
            return a;
        }
    }
    if (masters == 0) {
        if (why && why_len > 0) snprintf(why, why_len, "no master in the map");
        return LDL_ESTORE;
    }
    if (why && why_len > 0)
        snprintf(why, why_len, "durable on all %d masters: appendonly yes, appendfsync always, fence key "
                 "not evictable (replicas are asynchronous: a failover can still lose the fence)", masters);
    return 1;
}

static void ldl__rc_end_call(ldl__rc_map *m) {
    if (m->_ask_node >= 0 && !m->_n[m->_ask_node]._master) ldl__rc_forget(m, m->_ask_node);
    m->_ask_node = -1;
}

/* one call routed; MOVED refreshes and retries once, ASK follows once. `owner`
   for LDL__RC_OWNED, `h` for LDL__RC_INSPECT. Routes on the Redis adapter's
   structured last error (ldl_redis_last_error), never on its why text. */
static int ldl__rc_call2(ldl_redis_cluster *rc, int kind, const char *key, int64_t token, uint32_t ttl_ms,
                         const char *owner, int64_t *tok, ldl_holder *h) {
    ldl__rc_map *m = &rc->_m;
    int slot = ldl__rc_slot(m, key), node, moved = 0, asked = 0, asking = 0;
    int grants = kind == LDL_OP_ACQUIRE || kind == LDL__RC_OWNED;
    if (slot < 0 || (kind != LDL_OP_RELEASE && kind != LDL__RC_INSPECT && ttl_ms == 0)) {
        ldl__rc_say(m, "bad argument (key empty or too long, ttl 0)", NULL, NULL);
        return LDL_EINVAL;
    }
    if (!m->_slot[slot] || (m->_stale && ldl__rc_now_ms(m) - m->_refresh_ms >= 1000))
        ldl__rc_refresh(m, -1);                       /* after a link failure: at most once a second */
    node = m->_slot[slot] - 1;
    for (;;) {
        ldl_redis *r;
        ldl_store s;
        ldl_store_ext x;
        int rc_;
        if (node < 0) { ldl__rc_say(m, "no master known for the slot", NULL, NULL); return LDL_ESTORE; }
        r = ldl__rc_sync_node(m, node);
        if (!r) { m->_stale = 1; return LDL_ESTORE; }
        ldl_redis_set_asking(r, asking);              /* ASKING before each attempt, EVAL too */
        s = ldl_redis_store(r);
        x = ldl_redis_ext(r);
        if (kind == LDL_OP_ACQUIRE) rc_ = s.acquire(s.ctx, key, ttl_ms, tok);
        else if (kind == LDL__RC_OWNED) rc_ = x.acquire_owned(x.ctx, key, ttl_ms, owner, tok);
        else if (kind == LDL__RC_INSPECT) rc_ = x.inspect(x.ctx, key, h);
        else if (kind == LDL_OP_RENEW) rc_ = s.renew(s.ctx, key, token, ttl_ms);
        else rc_ = s.release(s.ctx, key, token);
        if (rc_ == 1 && kind != LDL_OP_RELEASE && kind != LDL__RC_INSPECT && m->_wait_n > 0 &&
            !ldl__rc_wait(m, node)) {
            if (grants && !m->_n[node]._c->err) s.release(s.ctx, key, *tok);
            ldl_redis_set_asking(r, 0);
            return LDL_ESTORE;
        }
        ldl_redis_set_asking(r, 0);
        if (rc_ >= 0 || rc_ == LDL_EINVAL) return rc_;
        if (!ldl__rc_redirect(m, r, slot, &node, &moved, &asked, &asking)) return rc_;
    }
}

static int ldl__rc_call(ldl_redis_cluster *rc, int kind, const char *key, int64_t token, uint32_t ttl_ms,
                        const char *owner, int64_t *tok, ldl_holder *h) {
    ldl__rc_map *m = &rc->_m;
    int rc_ = ldl__rc_call2(rc, kind, key, token, ttl_ms, owner, tok, h);
    ldl__rc_end_call(m);
    return rc_;
}

static int ldl__rc_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    int64_t t = 0;
    int rc;
    if (!ctx || !token_out) return LDL_EINVAL;
    rc = ldl__rc_call((ldl_redis_cluster *)ctx, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL, &t, NULL);
    if (rc == 1) *token_out = t;
    return rc;
}
static int ldl__rc_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                 int64_t *token_out) {
    int64_t t = 0;
    int rc;
    if (!ctx || !token_out) return LDL_EINVAL;
    rc = ldl__rc_call((ldl_redis_cluster *)ctx, LDL__RC_OWNED, key, 0, ttl_ms, owner, &t, NULL);
    if (rc == 1) *token_out = t;
    return rc;
}
static int ldl__rc_inspect(void *ctx, const char *key, ldl_holder *out) {
    int64_t t = 0;
    if (!ctx || !out) return LDL_EINVAL;
    return ldl__rc_call((ldl_redis_cluster *)ctx, LDL__RC_INSPECT, key, 0, 0, NULL, &t, out);
}
static int ldl__rc_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    int64_t t = 0;
    if (!ctx) return LDL_EINVAL;
    return ldl__rc_call((ldl_redis_cluster *)ctx, LDL_OP_RENEW, key, token, ttl_ms, NULL, &t, NULL);
}
static int ldl__rc_release(void *ctx, const char *key, int64_t token) {
    int64_t t = 0;
    if (!ctx) return LDL_EINVAL;
    return ldl__rc_call((ldl_redis_cluster *)ctx, LDL_OP_RELEASE, key, token, 0, NULL, &t, NULL);
}

LDL_REDIS_CLUSTER_API ldl_store ldl_redis_cluster_store(ldl_redis_cluster *rc) {
    ldl_store s;
    s.acquire = ldl__rc_acquire;
    s.renew = ldl__rc_renew;
    s.release = ldl__rc_release;
    s.ctx = rc;
    return s;
}

LDL_REDIS_CLUSTER_API ldl_store_ext ldl_redis_cluster_ext(ldl_redis_cluster *rc) {
    ldl_store_ext x;
    x.acquire_owned = ldl__rc_acquire_owned;
    x.submit_owned = NULL;
    x.inspect = ldl__rc_inspect;
    x.ctx = rc;
    return x;
}

#ifndef LDL_NO_ASYNC
/* ------------------------------------------------------------ non-blocking view
   Each cluster request hands its own ldl_op (_inner) to the master's
   ldl_redis_async and looks at it after every pump. The inner op is marked in
   flight with the core's public ldl_op_begin and read back with ldl_op_result;
   the master's on_error hook records each inner op's error kind, on which the
   pump routes (decision 0103). */
#define LDL__RC_REQ(ra, i) (&(ra)->_reqs[(i) - 1])

static void ldl__rc_req_free(ldl_redis_cluster_async *ra, size_t i) {
    ldl_redis_cluster_req *q = LDL__RC_REQ(ra, i);
    q->_state = 0;
    q->_op = NULL;
    q->_next = ra->_free;
    ra->_free = i;
}

/* a master answered one of our inner ops with an error: keep its kind, as a value */
static void ldl__rc_on_error(void *ctx, ldl_op *op, const ldl_redis_error *e) {
    ldl_redis_cluster_req *q = (ldl_redis_cluster_req *)(void *)((char *)op - offsetof(ldl_redis_cluster_req, _inner));
    (void)ctx;
    q->_ekind = e->kind;
}

/* the non-blocking lock connection of node i; 0 ready (maybe still connecting), -1 not */
static int ldl__rc_async_node(ldl_redis_cluster_async *ra, int i) {
    ldl__rc_map *m = &ra->_m;
    ldl__rc_node *n = &m->_n[i];
    uint64_t now = ldl__rc_now_ms(m);
    if (n->_c && !n->_c->err) return 0;
    if (now - n->_tried_ms < 1000 && n->_tried_ms) return -1;
    n->_tried_ms = now;
    if (!n->_reqs) {
        n->_reqs = (ldl_redis_req *)calloc(ra->_nreqs, sizeof *n->_reqs);
        if (!n->_reqs) { ldl__rc_say(m, "out of memory", NULL, NULL); return -1; }
    }
    if (n->_c) {
        m->_stats.reconnects++;
        return ldl_redis_async_reconnect(&n->_ra) == LDL_OK ? 0 : -1;
    }
    n->_c = redisConnectNonBlock(n->_host, n->_port);
    if (!n->_c) { ldl__rc_say(m, "out of memory", NULL, NULL); return -1; }
    if (ldl_redis_async_init(&n->_ra, n->_c, m->_prefix, n->_reqs, ra->_nreqs) != LDL_OK) {
        ldl__rc_say(m, "init: ", ldl_redis_async_why(&n->_ra), NULL);
        redisFree(n->_c);
        n->_c = NULL;
        return -1;
    }
    ldl_redis_async_on_error(&n->_ra, ldl__rc_on_error, ra);
    ldl_redis_async_set_clock(&n->_ra, m->_clock);
    ldl_redis_async_set_epoch_fences(&n->_ra, 1);   /* decision 0115 */
    return n->_c->err ? -1 : 0;
}

/* send request i to the master the map names; LDL_OK or negative (not sent) */
static int ldl__rc_send(ldl_redis_cluster_async *ra, size_t i) {
    ldl_redis_cluster_req *q = LDL__RC_REQ(ra, i);
    ldl__rc_map *m = &ra->_m;
    int slot = ldl__rc_slot(m, q->_key), node, rc;
    ldl_async_store s;
    if (slot < 0) return LDL_EINVAL;
    node = m->_slot[slot] - 1;
    if (node < 0 || ldl__rc_async_node(ra, node) != 0) {
        ldl__rc_say(m, "master of the slot not reachable now", NULL, NULL);
        m->_stale = 1;
        return LDL_ESTORE;
    }
    memset(&q->_inner, 0, sizeof q->_inner);
    ldl_op_begin(&q->_inner);                /* in flight: the master's store records into it */
    q->_node = node;
    q->_state = 1;
    q->_ekind = LDL_REDIS_ERR_NONE;
    s = ldl_redis_async_store(&m->_n[node]._ra);
    if (q->_kind == LDL__RC_OWNED) {
        ldl_store_ext x = ldl_redis_async_ext(&m->_n[node]._ra);
        rc = x.submit_owned(x.ctx, &q->_inner, q->_key, q->_ttl_ms, q->_owner);
    } else if (q->_kind == LDL_OP_ACQUIRE) rc = s.acquire(s.ctx, &q->_inner, q->_key, q->_ttl_ms);
    else if (q->_kind == LDL_OP_RENEW) rc = s.renew(s.ctx, &q->_inner, q->_key, q->_token, q->_ttl_ms);
    else rc = s.release(s.ctx, &q->_inner, q->_key, q->_token);
    if (rc != LDL_OK) {
        ldl__rc_say(m, "master: ", ldl_redis_async_why(&m->_n[node]._ra), NULL);
        q->_state = 0;
    }
    return rc;
}

static int ldl__rc_submit(ldl_redis_cluster_async *ra, ldl_op *op, int kind, const char *key,
                          int64_t token, uint32_t ttl_ms, const char *owner) {
    ldl_redis_cluster_req *q;
    size_t i, k, on = 0;
    int rc;
    if (!ra || !op || !ra->_reqs) return LDL_EINVAL;
    if (!key || (k = strlen(key)) == 0 || k >= LDL_KEY_MAX || (kind != LDL_OP_RELEASE && ttl_ms == 0)) {
        ldl__rc_say(&ra->_m, "bad argument (key empty or too long, ttl 0)", NULL, NULL);
        return LDL_EINVAL;
    }
    if (kind == LDL__RC_OWNED && (!owner || (on = strlen(owner)) == 0 || on >= LDL_OWNER_MAX)) {
        ldl__rc_say(&ra->_m, "bad owner (1 to LDL_OWNER_MAX-1 bytes, no control bytes)", NULL, NULL);
        return LDL_EINVAL;                   /* control bytes: the master's adapter checks */
    }
    i = ra->_free;
    if (!i) { ldl__rc_say(&ra->_m, "request pool full (size it at 2 x locks + a margin)", NULL, NULL); return LDL_ENOSPC; }
    q = LDL__RC_REQ(ra, i);
    ra->_free = q->_next;
    q->_op = op;
    q->_kind = kind;
    q->_tries = 0;
    q->_token = token;
    q->_ttl_ms = ttl_ms;
    memcpy(q->_key, key, k + 1);
    if (on) memcpy(q->_owner, owner, on);
    q->_owner[on] = 0;
    rc = ldl__rc_send(ra, i);
    if (rc != LDL_OK) { ldl__rc_req_free(ra, i); return rc; }
    op->store_data = (uintptr_t)i;
    return LDL_OK;
}

static int ldl__rc_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    return ldl__rc_submit((ldl_redis_cluster_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL);
}
static int ldl__rc_a_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms, const char *owner) {
    return ldl__rc_submit((ldl_redis_cluster_async *)ctx, op, LDL__RC_OWNED, key, 0, ttl_ms, owner);
}
static int ldl__rc_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    return ldl__rc_submit((ldl_redis_cluster_async *)ctx, op, LDL_OP_RENEW, key, token, ttl_ms, NULL);
}
static int ldl__rc_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    return ldl__rc_submit((ldl_redis_cluster_async *)ctx, op, LDL_OP_RELEASE, key, token, 0, NULL);
}

/* detach: a sent request is cancelled on its master (which releases a late grant) */
static void ldl__rc_a_cancel(void *ctx, ldl_op *op) {
    ldl_redis_cluster_async *ra = (ldl_redis_cluster_async *)ctx;
    ldl_redis_cluster_req *q;
    size_t i;
    if (!ra || !op || !ra->_reqs) return;
    i = (size_t)op->store_data;
    if (i < 1 || i > ra->_nreqs) return;
    q = LDL__RC_REQ(ra, i);
    if (q->_state == 0 || q->_op != op) return;
    if (q->_state == 1) {
        ldl_async_store s = ldl_redis_async_store(&ra->_m._n[q->_node]._ra);
        s.cancel(s.ctx, &q->_inner);
    }
    ldl__rc_req_free(ra, i);
}

LDL_REDIS_CLUSTER_API ldl_async_store ldl_redis_cluster_async_store(ldl_redis_cluster_async *ra) {
    ldl_async_store s;
    s.acquire = ldl__rc_a_acquire;
    s.renew = ldl__rc_a_renew;
    s.release = ldl__rc_a_release;
    s.cancel = ldl__rc_a_cancel;
    s.ctx = ra;
    return s;
}

LDL_REDIS_CLUSTER_API ldl_store_ext ldl_redis_cluster_async_ext(ldl_redis_cluster_async *ra) {
    ldl_store_ext x;
    x.acquire_owned = NULL;
    x.submit_owned = ldl__rc_a_owned;
    x.inspect = NULL;
    x.ctx = ra;
    return x;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_init(ldl_redis_cluster_async *ra, const char *seeds,
                                                       const char *prefix, uint32_t timeout_ms,
                                                       ldl_redis_cluster_req *reqs, size_t nreqs) {
    size_t i;
    int rc, n;
    if (!ra) return LDL_EINVAL;
    memset(ra, 0, sizeof *ra);
    if (!reqs || nreqs == 0 || nreqs >= (size_t)-1 / sizeof(ldl_redis_req)) {
        ldl__rc_say(&ra->_m, "init: the request pool is empty", NULL, NULL);
        return LDL_EINVAL;
    }
    memset(reqs, 0, nreqs * sizeof *reqs);
    ra->_reqs = reqs;
    ra->_nreqs = nreqs;
    for (i = nreqs; i >= 1; i--) ldl__rc_req_free(ra, i);
    rc = ldl__rc_setup(&ra->_m, seeds, prefix, timeout_ms, 1);
    ra->_m._async = 1;
    ra->_ctl_node = -1;
    if (rc != LDL_OK) return rc;
    for (n = 0; n < ra->_m._nn; n++) {            /* connect every master now */
        int s, master = 0;
        for (s = 0; s < LDL_REDIS_CLUSTER_SLOTS && !master; s++) master = ra->_m._slot[s] == n + 1;
        if (master) ldl__rc_async_node(ra, n);
    }
    return LDL_OK;
}

/* how long a parked request waits for a map naming a new owner: a renew as
   long as its own lease could still live (its ttl; the lock cancels it at its
   deadline first), anything else 2 x timeout_ms */
static uint64_t ldl__rc_park_ms(const ldl__rc_map *m, const ldl_redis_cluster_req *q) {
    uint64_t two = 2u * (uint64_t)m->_timeout_ms;
    return q->_kind == LDL_OP_RENEW && q->_ttl_ms > two ? q->_ttl_ms : two;
}

/* advance the non-blocking map read; starts one when the map is stale */
static void ldl__rc_ctl(ldl_redis_cluster_async *ra) {
    ldl__rc_map *m = &ra->_m;
    uint64_t now = ldl__rc_now_ms(m);
    void *rep = NULL;
    if (!ra->_ctl) {
        int k;
        if ((!m->_stale && ra->_want <= ra->_gen) || now < ra->_ctl_after) return;
        for (k = 1; k <= 2 * m->_nn; k++) {           /* next master in turn, else any node */
            int i = (ra->_ctl_node + k + 2 * m->_nn) % m->_nn;
            redisContext *c;
            if (m->_n[i]._port == 0 || (k <= m->_nn && !m->_n[i]._master)) continue;
            c = redisConnectNonBlock(m->_n[i]._host, m->_n[i]._port);
            if (!c) return;
            if (c->err || ldl__rc_bound(c, &ra->_ctl_budget) != 0 ||
                redisAppendCommand(c, "CLUSTER SLOTS") != REDIS_OK) { redisFree(c); continue; }
            ra->_ctl = c;
            ra->_ctl_node = i;
            ra->_ctl_start = now;
            break;
        }
        if (!ra->_ctl) return;
    }
    if (now - ra->_ctl_start > m->_timeout_ms) {      /* this node is slow: the next one */
        redisFree(ra->_ctl);
        ra->_ctl = NULL;
        return;
    }
    {
        int done = 0;
        struct pollfd p;
        p.fd = ra->_ctl->fd; p.events = POLLOUT; p.revents = 0;
        if (poll(&p, 1, 0) <= 0 || !p.revents) return;       /* still connecting */
        if (redisBufferWrite(ra->_ctl, &done) != REDIS_OK) { redisFree(ra->_ctl); ra->_ctl = NULL; return; }
    }
    if (redisBufferRead(ra->_ctl) != REDIS_OK || redisGetReplyFromReader(ra->_ctl, &rep) != REDIS_OK) {
        redisFree(ra->_ctl); ra->_ctl = NULL; return;
    }
    if (!rep) {
        if (ra->_ctl->reader->len > ((size_t)1 << 22)) { redisFree(ra->_ctl); ra->_ctl = NULL; }
        return;
    }
    if (ldl__rc_apply(m, (redisReply *)rep, ra->_ctl_node)) ra->_gen++;
    freeReplyObject(rep);
    redisFree(ra->_ctl);
    ra->_ctl = NULL;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_pump(ldl_redis_cluster_async *ra) {
    ldl__rc_map *m;
    size_t i;
    int n, done = 0;
    uint64_t now;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    m = &ra->_m;
    for (n = 0; n < m->_nn; n++) {
        ldl__rc_node *nd = &m->_n[n];
        if (!nd->_c) continue;
        if (ldl_redis_async_pump(&nd->_ra) < 0 && !nd->_c->err) nd->_c->err = REDIS_ERR_EOF;
    }
    for (i = 1; i <= ra->_nreqs; i++) {
        ldl_redis_cluster_req *q = LDL__RC_REQ(ra, i);
        int rc;
        int64_t tok;
        if (q->_state != 1 || !ldl_op_result(&q->_inner, &rc, &tok)) continue;
        if (rc == LDL_ESTORE) {
            ldl__rc_node *nd = &m->_n[q->_node];
            const char *why = ldl_redis_async_why(&nd->_ra);
            char where[LDL_REDIS_CLUSTER_HOST_MAX + 8];
            ldl__rc_addr(nd, where, sizeof where);
            int k = q->_ekind;                       /* routed on the value, never the text */
            ldl__rc_say(m, where, " ", why);
            m->_stale = 1;
            if (k == LDL_REDIS_ERR_MOVED) m->_stats.moved++;
            else if (k == LDL_REDIS_ERR_ASK) m->_stats.ask++;
            else if (k == LDL_REDIS_ERR_TRYAGAIN) m->_stats.tryagain++;
            if (!nd->_c->err && q->_tries == 0 &&
                (k == LDL_REDIS_ERR_MOVED || k == LDL_REDIS_ERR_ASK || k == LDL_REDIS_ERR_TRYAGAIN)) {
                q->_tries = 1;                       /* a redirect: one more try on a fresh map */
                q->_state = 2;
                q->_gen = ra->_gen;
                q->_parked_ms = ldl__rc_now_ms(m);
                ra->_want = ra->_gen + 1;
                continue;
            }
        }
        ldl_op_complete(q->_op, rc, tok);
        ldl__rc_req_free(ra, i);
        done++;
    }
    ldl__rc_ctl(ra);
    now = ldl__rc_now_ms(m);
    for (i = 1; i <= ra->_nreqs; i++) {           /* parked requests: a newer map, or give up */
        ldl_redis_cluster_req *q = LDL__RC_REQ(ra, i);
        if (q->_state != 2) continue;
        if (now - q->_parked_ms < ldl__rc_park_ms(m, q)) {
            int slot;
            if (ra->_gen <= q->_gen) continue;          /* no newer map yet */
            slot = ldl__rc_slot(m, q->_key);
            if (slot >= 0 && m->_slot[slot] == q->_node + 1) {
                /* same owner (ASK / TRYAGAIN: the slot is being migrated): wait for a
                   map that names the new owner, read again every 50 ms */
                q->_gen = ra->_gen;
                ra->_want = ra->_gen + 1;
                ra->_ctl_after = now + 50;
                continue;
            }
            m->_stats.retries++;
            if (ldl__rc_send(ra, i) == LDL_OK) continue;
        }
        ldl_op_complete(q->_op, LDL_ESTORE, 0);
        ldl__rc_req_free(ra, i);
        done++;
    }
    /* masters whose link failed come back (at most once a second each) */
    for (n = 0; n < m->_nn; n++)
        if (m->_n[n]._c && m->_n[n]._c->err) {
            m->_stale = 1;
            if (m->_n[n]._master) ldl__rc_async_node(ra, n);
        }
    return done;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fail_stalled(ldl_redis_cluster_async *ra, uint32_t ms) {
    int n, k = 0;
    if (!ra) return 0;
    for (n = 0; n < ra->_m._nn; n++) {
        ldl__rc_node *nd = &ra->_m._n[n];
        if (nd->_c && !nd->_c->err && ldl_redis_async_stalled_ms(&nd->_ra) > ms) {
            ldl_redis_async_fail(&nd->_ra, "master stalled: dropped by fail_stalled");
            k++;
        }
    }
    return k;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fds(const ldl_redis_cluster_async *ra, int *fds,
                                                      int *events, int n) {
    int i, k = 0;
    if (!ra || !fds || !events) return 0;
    for (i = 0; i < ra->_m._nn && k < n; i++) {
        int ev, fd;
        if (!ra->_m._n[i]._c) continue;
        fd = ldl_redis_async_fd(&ra->_m._n[i]._ra, &ev);
        if (fd >= 0) { fds[k] = fd; events[k] = ev; k++; }
    }
    return k;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_drop(ldl_redis_cluster_async *ra) {
    size_t i;
    int n, k = 0;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    for (n = 0; n < ra->_m._nn; n++)
        if (ra->_m._n[n]._c) ldl_redis_async_drop(&ra->_m._n[n]._ra);   /* answers every inner op */
    for (i = 1; i <= ra->_nreqs; i++) {
        ldl_redis_cluster_req *q = LDL__RC_REQ(ra, i);
        if (q->_state == 0) continue;
        ldl_op_complete(q->_op, LDL_ESTORE, 0);
        ldl__rc_req_free(ra, i);
        k++;
    }
    ldl__rc_say(&ra->_m, "every master link dropped by the program", NULL, NULL);
    ra->_m._stale = 1;
    return k;
}

LDL_REDIS_CLUSTER_API void ldl_redis_cluster_async_set_clock(ldl_redis_cluster_async *ra, ldl_clock clock) {
    int n;
    if (!ra) return;
    ra->_m._clock = clock;
    for (n = 0; n < ra->_m._nn; n++) if (ra->_m._n[n]._c) ldl_redis_async_set_clock(&ra->_m._n[n]._ra, clock);
}

LDL_REDIS_CLUSTER_API const char *ldl_redis_cluster_async_why(const ldl_redis_cluster_async *ra) {
    return ra ? ra->_m._why : "NULL adapter";
}

LDL_REDIS_CLUSTER_API const ldl_redis_cluster_stats *ldl_redis_cluster_async_stats(const ldl_redis_cluster_async *ra) {
    return ra ? &ra->_m._stats : NULL;
}

LDL_REDIS_CLUSTER_API void ldl_redis_cluster_async_free(ldl_redis_cluster_async *ra) {
    int i;
    if (!ra) return;
    for (i = 0; i < ra->_m._nn; i++) {
        /* fenced writes still queued get their LDL_ESTORE completion first */
        if (ra->_m._n[i]._c && ra->_m._n[i]._reqs) ldl_redis_async_drop(&ra->_m._n[i]._ra);
        ldl__rc_drop(&ra->_m._n[i]);
        free(ra->_m._n[i]._reqs);
        ra->_m._n[i]._reqs = NULL;
    }
    if (ra->_ctl) redisFree(ra->_ctl);
    ra->_ctl = NULL;
}
#endif /* LDL_NO_ASYNC */

/* ------------------------------------------------------------ fenced writes (issue 19, decision 0110)
   The mark's name "{R}:P:mark" is the Redis adapter's rule (ldl_redis_fence_mark);
   built here from the map's prefix so that the slot is known before any node is. */
#define LDL__RC_MARKBUF (LDL_REDIS_FENCE_NAME_MAX + LDL_REDIS_PREFIX_MAX + 9)
static size_t ldl__rc_mark(const ldl__rc_map *m, const char *res, char *buf) {
    size_t k = 0, p = strlen(m->_prefix), n = 0;
    if (!res) return 0;
    while (k < LDL_REDIS_FENCE_NAME_MAX && res[k]) k++;
    if (k == 0 || k >= LDL_REDIS_FENCE_NAME_MAX) return 0;
    buf[n++] = '{';
    memcpy(buf + n, res, k); n += k;
    buf[n++] = '}'; buf[n++] = ':';
    memcpy(buf + n, m->_prefix, p); n += p;
    memcpy(buf + n, ":mark", 5); n += 5;
    buf[n] = 0;
    return n;
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_fence_slot(const ldl_redis_cluster *rc, const char *resource) {
    char mark[LDL__RC_MARKBUF];
    size_t n;
    if (!rc || !(n = ldl__rc_mark(&rc->_m, resource, mark))) return -1;
    return ldl_redis_cluster_keyslot(mark, n);
}

/* the slot every key of the call must share; -1 (why set, nothing sent) when the
   resource is bad, an argument is malformed (the Redis adapter says which) or a
   declared key hashes elsewhere */
static int ldl__rc_fence_slot(ldl__rc_map *m, const char *res, int nkeys, const int *keyidx, int argc,
                              const char **argv, const size_t *argvlen) {
    char mark[LDL__RC_MARKBUF], a[24], b[24], ix[24];
    size_t n = ldl__rc_mark(m, res, mark);
    int slot, k;
    if (!n) { ldl__rc_say(m, "fence: the resource name must be 1 to LDL_REDIS_FENCE_NAME_MAX-1 bytes", NULL, NULL); return -1; }
    slot = ldl_redis_cluster_keyslot(mark, n);
    if (!argv || argc < 1 || argc > LDL_REDIS_FENCE_ARGS || nkeys < 0 || nkeys > argc - 1) {
        ldl__rc_say(m, "fence: argc must be 1 to LDL_REDIS_FENCE_ARGS and nkeys 0 to argc-1 (nothing sent)", NULL, NULL);
        return -1;
    }
    for (k = 0; k < nkeys; k++) {
        int i = keyidx ? keyidx[k] : k + 1, ks;
        if (i < 1 || i >= argc || !argv[i]) {
            ldl__rc_say(m, "fence: a key index outside 1..argc-1 or a NULL key (nothing sent)", NULL, NULL);
            return -1;
        }
        ks = ldl_redis_cluster_keyslot(argv[i], argvlen ? argvlen[i] : strlen(argv[i]));
        if (ks != slot) {
            snprintf(ix, sizeof ix, "%d", i);
            snprintf(a, sizeof a, "%d", ks);
            snprintf(b, sizeof b, "%d", slot);
            ldl__rc_say4(m, "fence: refused before sending: argv[", ix, "] hashes to slot ", a);
            {
                size_t w = strlen(m->_why);
                snprintf(m->_why + w, sizeof m->_why - w, ", the resource's mark to slot %s: put {resource} "
                         "(the mark's hash tag) in the key's name", b);
            }
            return -1;
        }
    }
    return slot;
}

/* one fenced write routed: MOVED refreshes and retries once, ASK follows once
   (a redirect means the script did not run there) */
static int ldl__rc_fence2(ldl_redis_cluster *rc, const char *res, int64_t fence, int nkeys, const int *keyidx,
                          int argc, const char **argv, const size_t *argvlen, redisReply **reply_out) {
    ldl__rc_map *m = &rc->_m;
    int slot = ldl__rc_fence_slot(m, res, nkeys, keyidx, argc, argv, argvlen), node, moved = 0, asked = 0, asking = 0;
    if (slot < 0) return LDL_EINVAL;
    if (fence < 1) { ldl__rc_say(m, "fence: the fence must be >= 1 (nothing sent)", NULL, NULL); return LDL_EINVAL; }
    if (!m->_slot[slot] || (m->_stale && ldl__rc_now_ms(m) - m->_refresh_ms >= 1000))
        ldl__rc_refresh(m, -1);
    node = m->_slot[slot] - 1;
    for (;;) {
        ldl_redis *r;
        int rc_;
        if (node < 0) { ldl__rc_say(m, "no master known for the slot", NULL, NULL); return LDL_ESTORE; }
        r = ldl__rc_sync_node(m, node);
        if (!r) { m->_stale = 1; return LDL_ESTORE; }
        ldl_redis_set_asking(r, asking);
        rc_ = ldl_redis_fence(r, res, fence, nkeys, keyidx, argc, argv, argvlen, reply_out);
        ldl_redis_set_asking(r, 0);
        if (rc_ >= 0 || rc_ == LDL_EINVAL) {
            if (rc_ == LDL_EINVAL) ldl__rc_say(m, ldl_redis_why(r), NULL, NULL);
            return rc_;
        }
        if (!ldl__rc_redirect(m, r, slot, &node, &moved, &asked, &asking)) return rc_;
    }
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_fence(ldl_redis_cluster *rc, const char *resource, int64_t fence,
                                                  int nkeys, const int *keyidx, int argc, const char **argv,
                                                  const size_t *argvlen, redisReply **reply_out) {
    ldl__rc_map *m;
    int rc_;
    if (reply_out) *reply_out = NULL;
    if (!rc) return LDL_EINVAL;
    m = &rc->_m;
    rc_ = ldl__rc_fence2(rc, resource, fence, nkeys, keyidx, argc, argv, argvlen, reply_out);
    ldl__rc_end_call(m);
    return rc_;
}

#ifndef LDL_NO_ASYNC
typedef struct ldl__rc_fx {          /* one routed fenced write, until its completion */
    ldl_redis_cluster_async *ra;
    ldl_redis_fence_fn       done;
    void                    *ctx;
} ldl__rc_fx;

static void ldl__rc_fx_done(void *ctx, int rc, redisReply *reply) {
    ldl__rc_fx fx = *(ldl__rc_fx *)ctx;
    free(ctx);
    if (rc == LDL_ESTORE) {                /* a redirect or a lost link: read the map again */
        ldl__rc_say(&fx.ra->_m, "fence: no answer from the mark's master (a redirect or a lost link); "
                    "the map is read again: submit again", NULL, NULL);
        fx.ra->_m._stale = 1;
        fx.ra->_want = fx.ra->_gen + 1;
    }
    fx.done(fx.ctx, rc, reply);
}

LDL_REDIS_CLUSTER_API int ldl_redis_cluster_async_fence(ldl_redis_cluster_async *ra, const char *resource,
                                                        int64_t fence, int nkeys, const int *keyidx, int argc,
                                                        const char **argv, const size_t *argvlen,
                                                        ldl_redis_fence_fn done, void *ctx) {
    ldl__rc_map *m;
    ldl__rc_fx *fx;
    int slot, node, rc;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    m = &ra->_m;
    if (!done) { ldl__rc_say(m, "fence: NULL completion (nothing sent)", NULL, NULL); return LDL_EINVAL; }
    slot = ldl__rc_fence_slot(m, resource, nkeys, keyidx, argc, argv, argvlen);
    if (slot < 0) return LDL_EINVAL;
    if (fence < 1) { ldl__rc_say(m, "fence: the fence must be >= 1 (nothing sent)", NULL, NULL); return LDL_EINVAL; }
    node = m->_slot[slot] - 1;
    if (node < 0 || ldl__rc_async_node(ra, node) != 0) {
        ldl__rc_say(m, "fence: master of the slot not reachable now (nothing sent)", NULL, NULL);
        m->_stale = 1;
        ra->_want = ra->_gen + 1;
        return LDL_ESTORE;
    }
    fx = (ldl__rc_fx *)malloc(sizeof *fx);
    if (!fx) { ldl__rc_say(m, "out of memory", NULL, NULL); return LDL_ESTORE; }
    fx->ra = ra; fx->done = done; fx->ctx = ctx;
    rc = ldl_redis_async_fence(&m->_n[node]._ra, resource, fence, nkeys, keyidx, argc, argv, argvlen,
                               ldl__rc_fx_done, fx);
    if (rc != LDL_OK) {
        ldl__rc_say(m, "fence: master: ", ldl_redis_async_why(&m->_n[node]._ra), NULL);
        free(fx);
    }
    return rc;
}
#endif /* LDL_NO_ASYNC */

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_CLUSTER_C */
#endif /* LDL_REDIS_CLUSTER_IMPLEMENTATION */

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
