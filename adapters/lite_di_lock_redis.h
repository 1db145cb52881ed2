/* lite_di_lock_redis.h -- Redis store for lite_di_lock.h (needs hiredis, POSIX).

   Lease locks with fencing tokens kept in Redis. Each call is ONE Lua script,
   atomic on the server; the fence counter is a plain Redis integer that never
   expires and is never deleted. Two views of one adapter:

     ldl_redis        synchronous (ldl_store): each call is one round trip on a
                      BLOCKING redisContext.
     ldl_redis_async  non-blocking (ldl_async_store, core v0.2): many locks
                      share one NON-BLOCKING redisContext, their requests are
                      pipelined in order and a pump the program calls every
                      frame does the I/O. Nothing in it ever waits.

   QUICK START (synchronous)

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_REDIS_IMPLEMENTATION
       #include "adapters/lite_di_lock_redis.h"

       struct timeval tv = { 0, 500000 };                    (500 ms)
       redisContext *c = redisConnectWithTimeout("127.0.0.1", 6379, tv);
       if (!c || c->err) { ...cannot connect... }
       redisSetTimeout(c, tv);              (see TIMEOUTS: per read, not per call)
       ldl_redis r;
       if (ldl_redis_init(&r, c, "myapp") != LDL_OK) puts(ldl_redis_why(&r));
       ldl_store store = ldl_redis_store(&r);
       desc.store = &store;                 (the lock copies the struct)

   QUICK START (non-blocking: a frame loop, thousands of locks, one connection)

       redisContext *c = redisConnectNonBlock("127.0.0.1", 6379);  (numeric IP)
       static ldl_redis_req reqs[2 * NLOCKS + 64];
       ldl_redis_async ra;
       ldl_redis_async_init(&ra, c, "game", reqs, sizeof reqs / sizeof reqs[0]);
       ldl_async_store as = ldl_redis_async_store(&ra);
       desc.async_store = &as;              (per lock; timers must stay zero)
       ... ldl_lock_acquire(&lock[i]) answers 1, 0 or LDL_EINPROGRESS ...
       for (;;) {                                         (every frame)
           if (ldl_redis_async_pump(&ra) < 0) ...the link failed: see RECONNECTING...
           for (i = 0; i < NLOCKS; i++) ldl_lock_poll(&lock[i]);
           ...
       }
       int events, fd = ldl_redis_async_fd(&ra, &events); (for poll/epoll: wait on
                                            fd for LDL_WANT_READ / LDL_WANT_WRITE)

   Compile with -I<dir holding lite_di_lock.h>, link with -lhiredis.
   Written against hiredis 0.14 (Debian 12); uses only its public API
   (redisAppendFormattedCommand, redisBufferWrite, redisBufferRead, redisReaderFeed, the reader's
   object hooks) and the context's public fields (fd, flags, obuf, reader).

   THE KEYS of lock key K under prefix P:

       {P:K}:lease   the lease: holds the decimal token, expires after the TTL
       {P:K}:fence   the fence counter: INCRed once per grant, never expires,
                     never deleted
       {P:K}:owner   v0.2, only once an owned acquire ran: "<token> <owner>" of
                     the last owned grant; never expires, overwritten by the
                     next owned grant (see HOLDER IDENTITY)

   The prefix must be non-empty and must not contain ':', '{' or '}' (init
   answers LDL_EINVAL). Then the mapping is injective -- P is the text between
   '{' and the first ':', K everything after it up to the final "}:lease" --
   so different (P, K) pairs always give different Redis keys, and both keys
   of one lock carry the same, non-empty hash tag (Redis Cluster hashes the
   text between the first '{' and the next '}', which is the same in both
   names), so they land in one slot. K is sent as binary-safe arguments,
   never pasted into command text: quotes, spaces, braces, ':' and UTF-8 are
   fine in K.

   THE SCRIPTS (EVALSHA; on NOSCRIPT, e.g. after a restart, a failover or a
   SCRIPT FLUSH emptied the script cache, the same call goes once more as
   EVAL, which also caches the script again):

       acquire  if the lease key exists: no. Else INCR the fence key, SET the
                lease key to the new token with PX ttl, answer the token as a
                decimal string (exact for the whole int64 range).
       renew    PEXPIRE the lease key only if it still holds this token.
       release  DEL the lease key only if it still holds this token.
       acquire, owned (v0.2)  as acquire, and SET the owner key to
                "<token> <owner>" in the same script.
       inspect (v0.2)  read the lease key, its PTTL and the owner key in one
                script; changes nothing.
       acquire with epoch fences (v0.3, the Cluster view; decision 0115)  the
                token is max(stored + 1, E * 2^32), E the node's config epoch.

   Every call carries a NONCE (a 64-bit value, 16 hex digits, new per call)
   and every answer carries it: the lock scripts answer the string
   "<nonce> <answer>" (v0.3, decision 0118), inspect and the fenced write
   the array { nonce, answer... }. The adapter accepts
   an answer only when the nonce is the one it sent for that call, so a reply
   meant for someone else (a command the program pipelined on the same
   connection, a reply left over from a timed-out call) can never be taken
   as a grant: it is an error, and the connection is marked failed.

   ANSWERS: exactly 1 yes, 0 no, negative on any failure: LDL_ESTORE for an
   error reply (WRONGTYPE, OOM, NOPERM, MOVED, NOSCRIPT twice...), a reply of
   the wrong shape or nonce, a token outside [1, INT64_MAX], a lost or
   timed-out connection; LDL_EINVAL for a bad argument (NULL, empty key, key
   of LDL_KEY_MAX bytes or more, ttl 0); LDL_ENOSPC when the non-blocking
   request pool is full. acquire writes *token_out only when it answers 1.
   ldl_redis_why() / ldl_redis_async_why() keep the text of the LAST error
   (a server's error reply such as "MOVED 3999 10.0.0.2:6379" or "NOPERM ...",
   a timeout, a refused send): the lock only sees "no grant" or STORE_ERROR.
   The same error as VALUES: ldl_redis_last_error() / _async_last_error()
   answer { kind LDL_REDIS_ERR_*, slot, addr } (MOVED / ASK carry the slot and
   "host:port"); route on these, never on the text. In the non-blocking view
   ldl_redis_async_on_error() shows a router each request's own error.

   A LOCK CONNECTION IS NOT SHARED. The adapter must own its redisContext:
   do not send your own commands on it. The synchronous view refuses to send
   (LDL_ESTORE, why says so) when the context has output pending or unread
   input (buffered by hiredis or already in the socket); the nonce catches a
   reply still on its way. The non-blocking view refuses such a context at
   init. One ldl_redis or ldl_redis_async serves one thread at a time.

   TIMEOUTS (synchronous view). hiredis' redisSetTimeout sets SO_RCVTIMEO /
   SO_SNDTIMEO: a limit PER read() or write(), not per command. A server that
   drips its reply a byte at a time would keep a plain hiredis call waiting
   forever. The adapter reads the reply itself and, after each read, checks
   the time spent on the call against the context's timeout, and waits (poll)
   before each read at most for what is left: a call gives up after about the
   timeout, marks the context failed and answers LDL_ESTORE. Times are taken
   from the adapter's clock (ldl_redis_set_clock; all-zero = the built-in
   monotonic clock). ldl_redis_command() sends a command of the caller's
   (CLUSTER SLOTS, WAIT...) through the same exchange with the caller's reply
   bounds and a wall-clock limit per call. A call never frees a frozen frame:
   the non-blocking view is the one whose every call is bounded by a few
   system calls that never wait.

   THE PHANTOM LEASE. A command that timed out on the client may still run on
   the server later (a server paused by SIGSTOP, a GC'd VM, a congested link
   delivers it when it resumes): an acquire the client gave up on can still
   create a lease that nobody holds, and that blocks the key for one TTL.
   The synchronous view cannot prevent it (the connection is failed and the
   late answer is never read). The non-blocking view keeps reading: a
   cancelled acquire whose late answer is a grant is released by the adapter
   with its token at once (the SPEC's cancel rule), so the key is free again
   as soon as the server has answered -- unless the program dropped the link
   first (ldl_redis_async_fail / _reconnect): then the lease lapses at its TTL.

   REPLY SIZE. hiredis 0.14 sets no limit: a hostile "*2147483647" header
   makes it reserve 16 GB. Both views install the adapter's own reply hooks on
   the context's reader (forwarding to hiredis' own builders): an array of
   more than LDL__REDIS_ARRAY_MAX (16) elements and a string longer than
   LDL_REDIS_REPLY_MAX bytes are refused before anything is allocated, and a
   reply still incomplete after LDL_REDIS_REPLY_MAX buffered bytes fails the
   link. Every reply also has a budget of its own, by default and in both
   views (decision 0119): LDL_REDIS_REPLY_OBJECTS (256) parsed objects and
   LDL_REDIS_REPLY_TOTAL (128 KiB: its strings plus 16 bytes an object and 8
   an array element); the object past it is refused and the call or link
   fails (a 16-ary tree 5 deep, a million objects from 4.5 MB of input, stays
   under 32 MB of RSS). What the adapter cannot bound: one read's worth of buffered input
   (16 KiB per read, drained at once), and replies to commands the program
   sends itself on the connection with hiredis' own redisCommand (the hooks
   stay installed, so the element bound holds for those too).

   THE CONNECTION belongs to the caller: the adapter never connects, frees it,
   or changes its settings (it installs its reply hooks on the context's reader
   and, on a reply out of step, marks the context failed: c->err =
   REDIS_ERR_PROTOCOL, errstr "ldl: ..."). After a timeout, a lost connection
   or such a mark, every later call answers LDL_ESTORE at once without sending
   anything; call redisReconnect(c) (same pointer, nothing to re-init) to
   carry on (synchronous view; hiredis 0.14 drops the command timeout on
   reconnect, so set it again), or ldl_redis_async_reconnect(&ra).
   Ignore SIGPIPE in your program: hiredis writes with plain write().

   RECONNECTING (non-blocking view). A failed link (I/O error, EOF, a reply out
   of step, a refused reply) completes every live request with LDL_ESTORE --
   renews make their locks LOST (STORE_ERROR), acquires answer no -- and pump
   answers negative until ldl_redis_async_reconnect(&ra), which calls
   redisReconnect(c) (non-blocking again; a host NAME is resolved with a
   blocking getaddrinfo, so connect by numeric address) and waits for the
   connect inside later pumps. The verbs every non-blocking view shares
   (decision 0105): _why, _stats, _drop (every queued and in-flight request
   answered LDL_ESTORE at once, the link dead; answers how many) and
   _rebind(&ra, c) (a NEW connection; all that is pending answered LDL_ESTORE
   first, so no reply is ever matched to another lock's request). Requests submitted while the connect is under
   way are queued and go out once it completes. ldl_redis_async_fail(&ra, why)
   drops the link on purpose, e.g. when ldl_redis_async_stalled_ms() says the
   server has not answered for longer than you accept (otherwise leases simply
   expire at their deadline by the lock's own clock: nothing ever waits).

   THE REQUEST POOL (non-blocking view) is caller-owned storage: nreqs
   ldl_redis_req (about LDL_KEY_MAX + LDL_OWNER_MAX + 48 bytes each). A lock has at most one
   request of its own in flight, but hand-backs (fire-and-forget releases),
   requests a lock cancelled and re-sent while the server was slow, and the
   adapter's own releases of cancelled grants also occupy a slot until their
   reply arrives. Size it at 2 x locks + a margin. When it is full a submit
   answers LDL_ENOSPC (nothing queued, why says so): an acquire answers no
   grant, a renew makes its lock LOST with STORE_ERROR, a hand-back is lost
   (the lease then lapses at its TTL). Never blocks, never grows.

   DURABILITY (read docs/redis.md). A fence only protects a resource while it
   never goes backwards. On a single Redis that needs `appendonly yes` and
   `appendfsync always`, and no `allkeys-*` eviction under a maxmemory limit.
   Replication is asynchronous: a failover can lose both the lease and the
   latest fence values. ldl_redis_check_durability() reads CONFIG GET and
   tells whether this server keeps the fence across a restart.

   LEAST PRIVILEGE. An ACL user limited to the adapter's keys and commands
   works (prefix "ldl"; for another prefix P use ~{P:*):
       ACL SETUSER ldl on >secret resetkeys ~{ldl:* resetchannels -@all
           +evalsha +eval +exists +incr +persist +get +set +pexpire +del +pttl
   (the scripts' own commands are checked against the ACL too; SCRIPT LOAD is
   never needed: the EVAL fallback caches the scripts; +pttl is for inspect). Add +config|get for
   ldl_redis_check_durability, which otherwise answers LDL_ESTORE and says
   CONFIG GET was refused. Epoch fences (ldl_redis_set_epoch_fences, which the
   Cluster view turns on) add +info +cluster|info.

   HOLDER IDENTITY (v0.2). ldl_redis_ext(&r) gives the synchronous view's
   ldl_store_ext: acquire_owned (desc.owner with desc.store_ext) and inspect
   (ldl_store_inspect: 1 held with token, ttl_left_ms = the lease key's PTTL
   on the server's clock, owner; 0 free). ldl_redis_async_ext(&ra) gives the
   non-blocking view's: submit_owned only (inspect would wait for a reply).
   The owner is 1 to LDL_OWNER_MAX-1 bytes without control bytes (< 0x20,
   0x7F), else LDL_EINVAL. It lives in a third key, {P:K}:owner, as
   "<token> <owner>": inspect reports it only when that token is the one the
   lease key holds, so an owner left from an earlier grant is never taken
   for the current holder's; a lease taken without an owner (plain acquire,
   a v0.1 client) inspects with owner "". The lease key and what the renew,
   release and plain acquire scripts do are the v0.1 ones (v0.3 only made
   the acquire script cheaper, decision 0117), so v0.1, v0.2 and v0.3
   clients share keys. A reply of the wrong shape or
   content (token, PTTL not in [0, UINT32_MAX], owner bytes or length) is
   LDL_ESTORE: never a made-up holder. Decision 0104.

   RIDING OUT (v0.2, desc.ride_out_ms). The lock retries a renew that answered
   an error while the lease is trusted; the retries must reach the server.
   Synchronous view: after a timeout every call answers LDL_ESTORE at once, so
   reconnect a failed context in your loop (if (c->err) redisReconnect(c) and
   redisSetTimeout again). Non-blocking view: a renew to a stalled server just
   stays in flight; fail the link when ldl_redis_async_stalled_ms() passes your
   limit and ldl_redis_async_reconnect() when the pump answers negative.
   tests/store/redis_election.c does both (docs/redis.md).

   OPTIONS
     LDL_REDIS_IMPLEMENTATION   in exactly one .c/.cpp file, after the core header
     LDL_STATIC                 makes the functions static (as in the core header)
     LDL_REDIS_PREFIX_MAX       bytes for the prefix including the NUL (default 64)
     LDL_REDIS_REPLY_MAX        bytes one reply string may use, and bytes of a
                                reply still incomplete (default 4096)
     LDL_REDIS_REPLY_OBJECTS    objects one reply may have (default 256)
     LDL_REDIS_REPLY_TOTAL      bytes one whole reply may use: its strings plus
                                16 an object and 8 an array element (default 131072)
     LDL_REDIS_PUMP_READS       read() calls one pump makes at most (default 64,
                                16 KiB each)
     LDL_NO_ASYNC               (the core's switch) leaves the non-blocking view out
*/
#ifndef LITE_DI_LOCK_REDIS_H
#define LITE_DI_LOCK_REDIS_H

#include "lite_di_lock.h"
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LDL_REDIS_API
#define LDL_REDIS_API LDL_API
#endif

#ifndef LDL_REDIS_PREFIX_MAX
#define LDL_REDIS_PREFIX_MAX 64
#endif
#ifndef LDL_REDIS_REPLY_MAX
#define LDL_REDIS_REPLY_MAX 4096
#endif
/* the budget of ONE reply, by default (issue 31): parsed objects, and bytes
   (its strings, plus 16 an object and 8 an array element) */
#ifndef LDL_REDIS_REPLY_OBJECTS
#define LDL_REDIS_REPLY_OBJECTS 256
#endif
#ifndef LDL_REDIS_REPLY_TOTAL
#define LDL_REDIS_REPLY_TOTAL 131072
#endif
#ifndef LDL_REDIS_PUMP_READS
#define LDL_REDIS_PUMP_READS 64
#endif
#define LDL_REDIS_WHY_MAX 160
#define LDL_REDIS_ADDR_MAX 64

/* the KIND of the last error (ldl_redis_last_error): a value the Cluster view
   routes on, never a text it parses (hiredis' err + errstr are the model) */
#define LDL_REDIS_ERR_NONE        0
#define LDL_REDIS_ERR_ARG         1   /* a bad argument: nothing was sent */
#define LDL_REDIS_ERR_IO          2   /* the link: lost, timed out, refused to connect, dropped */
#define LDL_REDIS_ERR_PROTOCOL    3   /* a reply refused (size), out of step (nonce) or malformed */
#define LDL_REDIS_ERR_SERVER      4   /* an error reply that is not one of the four below */
#define LDL_REDIS_ERR_MOVED       5   /* "MOVED slot addr": slot and addr are set */
#define LDL_REDIS_ERR_ASK         6   /* "ASK slot addr": slot and addr are set */
#define LDL_REDIS_ERR_TRYAGAIN    7
#define LDL_REDIS_ERR_CLUSTERDOWN 8
#define LDL_REDIS_ERR_FULL        9   /* the non-blocking request pool is full */

/* LDL_WANT_READ / LDL_WANT_WRITE (the events ldl_redis_async_fd answers) are
   defined once, in lite_di_lock.h. */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_redis_error {    /* the last error as values (ldl_redis_last_error) */
    int  kind;                      /* LDL_REDIS_ERR_* */
    int  slot;                      /* MOVED / ASK: the slot; else -1 */
    char addr[LDL_REDIS_ADDR_MAX];  /* MOVED / ASK: "host:port" as the server wrote it; else "" */
} ldl_redis_error;

/* bounds of one exchange through ldl_redis_command; a zero field = the default */
typedef struct ldl_redis_limits {
    int      elements;              /* most elements of one array (default 16) */
    size_t   string_bytes;          /* longest string (default LDL_REDIS_REPLY_MAX) */
    long     objects;               /* most objects in one reply (default
                                       LDL_REDIS_REPLY_OBJECTS, and LDL_REDIS_REPLY_TOTAL
                                       bytes; set: this many objects, bytes unbounded
                                       but by objects x string_bytes) */
    size_t   reply_bytes;           /* most bytes of a reply still incomplete (default
                                       LDL_REDIS_REPLY_MAX) */
    uint32_t call_ms;               /* wall-clock limit of the call (default: the context's
                                       timeout, redisSetTimeout) */
} ldl_redis_limits;

typedef struct ldl_redis ldl_redis;
struct ldl_redis {                  /* private: complete so the caller owns the storage */
    redisContext *_c;
    const redisReplyObjectFunctions *_dflt;  /* hiredis' own reply builders */
    uint64_t      _nonce;           /* the last nonce sent */
    size_t        _plen;
    int           _refused;         /* a reply hook refused a reply (size) */
    int           _asking;          /* send ASKING before every attempt (Cluster view) */
    int           _epoch;           /* grants take the config epoch (Cluster view, decision 0115) */
    uint32_t      _ep_e;            /* the node's last config epoch and replication ID ("": none) */
    char          _ep_r[41];
    long          _left;            /* objects the reply being read may still have */
    size_t        _bleft;           /* and bytes */
    const ldl_redis_limits *_lim;   /* the bounds of the exchange under way */
    ldl_clock     _clock;           /* zero = the built-in monotonic clock */
    ldl_redis_error _err;
    char          _prefix[LDL_REDIS_PREFIX_MAX];
    char          _why[LDL_REDIS_WHY_MAX];
};

#ifndef LDL_NO_ASYNC                /* the non-blocking view needs the core's v0.2 contract */
typedef struct ldl_redis_req ldl_redis_req;
struct ldl_redis_req {              /* one queued request; private */
    ldl_op   *_op;                  /* the lock's slot; NULL once cancelled or for the
                                       adapter's own release of a cancelled grant */
    size_t    _next;                /* FIFO / free-list link: index + 1, 0 = none */
    int       _kind;                /* LDL_OP_*; 0 = free */
    int       _eval;                /* sent again as EVAL after NOSCRIPT */
    uint32_t  _ttl_ms;
    int64_t   _token;
    uint64_t  _nonce;
    char      _key[LDL_KEY_MAX];
    char      _owner[LDL_OWNER_MAX];  /* an owned acquire's owner (copied at submit) */
};

typedef struct ldl_redis_stats {    /* counters of a non-blocking adapter, since init */
    uint64_t submitted;             /* requests queued (the adapter's own releases too) */
    uint64_t answered;              /* replies matched to a request */
    uint64_t write_calls;           /* write() calls (through redisBufferWrite) */
    uint64_t read_calls;            /* read() calls, EAGAIN included */
    uint64_t noscript;              /* requests sent again as EVAL */
    uint64_t handed_back;           /* cancelled grants the adapter released */
    uint64_t refused_full;          /* submits refused: pool full */
    uint64_t link_failures;
    size_t   live;                  /* requests waiting for a reply now */
    size_t   max_live;
} ldl_redis_stats;

typedef struct ldl_redis_async ldl_redis_async;
struct ldl_redis_async {            /* private: complete so the caller owns the storage */
    ldl_redis       _r;             /* prefix, context, nonce, why */
    ldl_redis_req  *_reqs;
    size_t          _nreqs;
    size_t          _free;          /* free list head, index + 1 */
    size_t          _head, _tail;   /* in-order FIFO of requests in the pipeline */
    int             _link;          /* LDL__REDIS_CONNECTING / _UP / _FAILED */
    uint64_t        _progress_ms;   /* last reply, or when the FIFO became non-empty */
    ldl_redis_stats _stats;
    void          (*_on_error)(void *ctx, ldl_op *op, const ldl_redis_error *e);
    void           *_on_error_ctx;
    uint64_t        _fx_gen;        /* fenced writes: link_failures + 1 of the link the
                                       script was sent on as EVAL; 0 = not yet */
};

#endif /* LDL_NO_ASYNC */

/* v0.4: after init, drive this adapter through ONE interface,
   adapters/lite_di_lock_view.h (ldl_view_redis, ldl_view_redis_async): its ops do what
   the calls marked DEPRECATED below do. Those stay in v0.4 unchanged and
   leave the public surface in v0.5 (CHANGELOG lists each replacement;
   tools/api-deprecated.txt). */
/* --- synchronous view --------------------------------------------------- */
/* r, c non-NULL; c a blocking context. prefix NULL = "ldl", else 1 to
   LDL_REDIS_PREFIX_MAX-1 bytes without ':', '{' or '}'. Sends nothing.
   LDL_OK or LDL_EINVAL (ldl_redis_why says why). */
LDL_REDIS_API int        ldl_redis_init(ldl_redis *r, redisContext *c, const char *prefix);
/* the adapter view; ctx = r, which must outlive every lock using it */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API ldl_store  ldl_redis_store(ldl_redis *r);
/* the last error's text ("" when none); never NULL */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API const char *ldl_redis_why(const ldl_redis *r);
/* Reads CONFIG GET appendonly / appendfsync / maxmemory / maxmemory-policy.
   1: the fence survives a restart or crash of THIS server (AOF on, fsync
      always, nothing can evict the fence key);
   0: it may not; why says what to change;
   negative (LDL_ESTORE): the server could not be asked (CONFIG refused by an
      ACL, disabled or renamed; connection down); why says what happened.
   why may be NULL; it is always NUL-terminated when why_len > 0.
   Replication is never covered: see docs/redis.md. Synchronous view only. */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int        ldl_redis_check_durability(ldl_redis *r, char *why, size_t why_len);
/* v0.2 holder identity: acquire_owned and inspect (submit_owned NULL);
   ctx = r (see HOLDER IDENTITY) */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API ldl_store_ext ldl_redis_ext(ldl_redis *r);
/* the last error as values (kind NONE when the last call succeeded); never NULL */
LDL_REDIS_API const ldl_redis_error *ldl_redis_last_error(const ldl_redis *r);
/* the clock the adapter measures call limits (and the non-blocking view's
   stalls) with; all-zero = the built-in monotonic clock (the default) */
LDL_REDIS_API void ldl_redis_set_clock(ldl_redis *r, ldl_clock clock);
/* For the Cluster view under ASK: while on, every script attempt (the EVAL
   retry after NOSCRIPT too) is preceded by ASKING on the same connection. */
LDL_REDIS_API void ldl_redis_set_asking(ldl_redis *r, int on);
/* For the Cluster view (decision 0115): while on, a grant's token is
   max(stored + 1, E * 2^32), E = the node's config epoch (CLUSTER INFO inside
   the script; the ACL needs +cluster|info). Off (the default) outside Cluster
   mode. The non-blocking view: ldl_redis_async_set_epoch_fences. */
LDL_REDIS_API void ldl_redis_set_epoch_fences(ldl_redis *r, int on);
/* One command of the caller's (CLUSTER SLOTS, ASKING, WAIT...) through the
   synchronous view's bounded exchange: the reply hooks refuse, before
   allocating, what exceeds `lim` (NULL = the defaults), and the whole call
   gives up after lim->call_ms (then the context is marked failed). LDL_OK
   with *reply (the caller frees it; an error reply is a reply: its kind is
   also in ldl_redis_last_error), LDL_ESTORE (why says so) or LDL_EINVAL. */
LDL_REDIS_API int ldl_redis_command(ldl_redis *r, const ldl_redis_limits *lim, int argc,
                                    const char **argv, const size_t *lens, redisReply **reply);

#ifndef LDL_NO_ASYNC
/* --- non-blocking view -------------------------------------------------- */
/* ra, c, reqs non-NULL, nreqs >= 1; c a NON-blocking context (redisConnectNonBlock)
   with nothing pending on it; prefix as for ldl_redis_init. Sends nothing.
   LDL_OK or LDL_EINVAL (ldl_redis_async_why says why). A context that has
   already failed is accepted: pump answers negative until a reconnect. */
LDL_REDIS_API int  ldl_redis_async_init(ldl_redis_async *ra, redisContext *c, const char *prefix,
                                        ldl_redis_req *reqs, size_t nreqs);
/* the adapter view; ctx = ra, which must outlive every lock using it */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API ldl_async_store ldl_redis_async_store(ldl_redis_async *ra);
/* v0.2 holder identity: submit_owned only (acquire_owned and inspect NULL:
   inspect a key from a synchronous ldl_redis); ctx = ra */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API ldl_store_ext ldl_redis_async_ext(ldl_redis_async *ra);
/* Non-blocking I/O only: finishes a connect under way, writes what is queued,
   reads what arrived (at most LDL_REDIS_PUMP_READS reads) and completes what
   was answered. >= 0: answers completed. Negative (LDL_ESTORE): the link failed
   (now or earlier) and every live request was completed with LDL_ESTORE. */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int  ldl_redis_async_pump(ldl_redis_async *ra);
/* the socket (-1 when the link failed) and, in *events (may be NULL), the
   LDL_WANT_READ | LDL_WANT_WRITE the pump waits for */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int  ldl_redis_async_fd(const ldl_redis_async *ra, int *events);
/* the last error's text ("" when none); never NULL */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API const char *ldl_redis_async_why(const ldl_redis_async *ra);
/* ms since the link last made progress while requests wait for a reply; 0 when
   nothing waits. A stall meter: drop a frozen link with ldl_redis_async_fail. */
LDL_REDIS_API uint32_t ldl_redis_async_stalled_ms(const ldl_redis_async *ra);
/* fail the link now: every live request completes with LDL_ESTORE, the context
   is marked failed (c->err). why may be NULL. */
LDL_REDIS_API void ldl_redis_async_fail(ldl_redis_async *ra, const char *why);
/* fail the link if it is not failed yet, then redisReconnect(c) (non-blocking);
   LDL_OK (the connect completes inside later pumps) or LDL_ESTORE */
LDL_REDIS_API int  ldl_redis_async_reconnect(ldl_redis_async *ra);
/* counters since init (live, max_live, write and read calls, ...) */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API const ldl_redis_stats *ldl_redis_async_stats(const ldl_redis_async *ra);
/* The verbs every non-blocking view shares (decision 0105):
   _drop: every queued and in-flight request answered LDL_ESTORE at once, the
   link treated as dead (as _fail); answers how many requests were answered.
   _rebind: a NEW connection c (non-blocking, nothing pending) replaces the old
   one: everything pending on the old one is answered LDL_ESTORE first, so no
   reply can ever be matched to another lock's request; the connect completes
   inside later pumps. LDL_OK, or LDL_EINVAL with nothing changed. The old
   context stays the caller's (marked failed). */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int  ldl_redis_async_drop(ldl_redis_async *ra);
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int  ldl_redis_async_rebind(ldl_redis_async *ra, redisContext *c);
LDL_REDIS_API const ldl_redis_error *ldl_redis_async_last_error(const ldl_redis_async *ra);
LDL_REDIS_API void ldl_redis_async_set_clock(ldl_redis_async *ra, ldl_clock clock);
/* ldl_redis_set_epoch_fences for the non-blocking view (Cluster view) */
LDL_REDIS_API void ldl_redis_async_set_epoch_fences(ldl_redis_async *ra, int on);
/* For a router (the Cluster view): fn(ctx, op, e) is called for each request
   answered with an error (error reply or link failure), just before its
   ldl_op_complete: the error of THAT request, as values. fn NULL = none. */
LDL_REDIS_API void ldl_redis_async_on_error(ldl_redis_async *ra,
                                            void (*fn)(void *ctx, ldl_op *op, const ldl_redis_error *e),
                                            void *ctx);
#endif /* LDL_NO_ASYNC */

/* --- fenced writes (issue 19; decision 0110) ------------------------------
   A high-water MARK per resource name, compared, raised and the caller's
   write command run in ONE script, atomically on the server:

       1. GET the mark (a key of another type: the script's WRONGTYPE error,
          nothing changed; a value that is not a fence: an error, nothing
          changed);
       2. mark > fence: answer 0 (stale); nothing runs, nothing changes;
       3. when the mark will change, the ACL check (Redis 7): the user may
          SET the mark, else an error and nothing runs;
       4. the command runs with redis.pcall; if it answers an error, the
          script answers that error and the mark is NOT raised (Redis does
          not roll a script back; this order means a failing command can
          never leave a raised mark behind);
       5. only then the mark is SET to the fence (skipped when equal);
          answer 1 with the command's reply.
   Equal fence passes (one holder writes many times), a lower one fails, the
   first fence for a new resource passes. Fences of different lock keys are
   not comparable: guard one resource with one lock key's fences.

   THE MARK'S NAME for resource R under prefix P is "{R}:P:mark" (one string
   key holding the decimal fence; never expires, never deleted). R is 1 to
   LDL_REDIS_FENCE_NAME_MAX-1 bytes, any byte but NUL (quotes, braces,
   spaces, UTF-8 and binary are fine: sent as a binary-safe argument). The
   mapping is injective (P has no ':', '{' or '}'), and never meets the lock's
   own keys ("{P:K}:lease" / ":fence" / ":owner"). In Redis Cluster the
   mark's hash tag is R when R has no '}': put "{R}" in the names of the keys
   the command writes ("{report:42}:body") and they share the mark's slot.
   ldl_redis_fence_mark() writes the name out.

   THE COMMAND: argv[0..argc-1] (argv[0] the command name; argvlen NULL =
   strlen of each), 1 to LDL_REDIS_FENCE_ARGS arguments. Its keys are DECLARED
   to the script (KEYS): keyidx[0..nkeys-1] are the indices in argv of the
   arguments that are key names (keyidx NULL: argv[1..nkeys], right for SET,
   HSET, INCR, DEL k1 k2, LPUSH...; MSET k1 v1 k2 v2 needs keyidx {1, 3}).
   A declared key equal to the mark's name is refused (LDL_EINVAL).

   ANSWERS: 1 the command ran and the mark is now `fence`: *reply_out is the
   command's reply exactly as the server gave it (type included: status,
   integer, bulk, nil, array); 0 stale: nothing ran, nothing changed,
   *reply_out NULL; negative:
     LDL_EINVAL  bad argument, nothing sent: NULL, resource empty or too long,
                 fence < 1, argc outside 1..LDL_REDIS_FENCE_ARGS, nkeys < 0
                 or an index outside 1..argc-1, a key equal to the mark
                 (Cluster: a key in another slot than the mark's);
     LDL_ESTORE  everything else, why says what: the link (as every call;
                 after a timeout the write's fate is unknown), an error reply
                 of the script (WRONGTYPE at the mark's name, a mark that
                 holds no fence, NOPERM, MOVED...: nothing changed), a reply
                 of the wrong shape or nonce (the connection is dropped), and
                 THE COMMAND'S OWN ERROR (WRONGTYPE on your key, an unknown
                 command...): then ldl_redis_last_error()->kind is
                 LDL_REDIS_ERR_COMMAND, the mark did not move, and *reply_out
                 is that error reply (REDIS_REPLY_ERROR, its text as the server
                 wrote it).
   *reply_out, when not NULL, is YOURS: freeReplyObject() it. reply_out may be
   NULL (the reply is then freed here). The reply must fit the adapter's
   reply bounds (REPLY SIZE: arrays of at most 16 elements, strings of at
   most LDL_REDIS_REPLY_MAX bytes), else LDL_ESTORE and the connection is
   dropped -- the write may have happened, as after any lost reply.
   The per-call nonce rule holds: the script answers { nonce, 1, reply },
   { nonce, 0 } or { nonce, -1, error }, and an answer with another nonce is
   never taken (LDL_ESTORE, connection dropped).
   ACL: +eval +evalsha +get +set, read-write access to the marks' names
   (e.g. ~{*}:ldl:mark; a read-only %R~ pattern makes the server refuse the
   whole EVAL), and the command's own rights on its keys. Before the command
   runs, the script asks the ACL (Redis 7) whether this user may SET the mark:
   if not, NOPERM and nothing ran (an equal fence, which rewrites nothing,
   passes). The non-blocking view: the first fenced write on each link goes as
   EVAL, the rest as EVALSHA; a NOSCRIPT (the script cache emptied under a
   live link) answers that write LDL_ESTORE -- it did not run -- instead of
   sending it again behind writes submitted after it. */
#ifndef LDL_REDIS_FENCE_NAME_MAX
#define LDL_REDIS_FENCE_NAME_MAX 1025     /* bytes of a resource name, including the NUL */
#endif
#ifndef LDL_REDIS_FENCE_ARGS
#define LDL_REDIS_FENCE_ARGS 64           /* most arguments of a fenced command, its name included */
#endif
#define LDL_REDIS_ERR_COMMAND 10          /* the fenced command itself answered an error (mark unmoved) */

/* the completion of one non-blocking fenced write: rc and reply as
   ldl_redis_fence answers them (reply non-NULL only for 1 and for the
   command's own error; yours to freeReplyObject). Called from inside a pump
   (or _fail / _drop / _rebind / _reconnect, with LDL_ESTORE), exactly once
   per accepted submit; it may submit again, never pump or free. */
typedef void (*ldl_redis_fence_fn)(void *ctx, int rc, redisReply *reply);

/* the mark's name "{R}:P:mark" into buf[n] (NUL-terminated); its length, 0 on
   a bad resource or a buffer too small (needs strlen(R) + prefix + 9) */
LDL_REDIS_API size_t ldl_redis_fence_mark(const ldl_redis *r, const char *resource, char *buf, size_t n);
/* the fenced write, synchronous view: one round trip (EVALSHA; EVAL once on
   NOSCRIPT), bounded as every call; answers above */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int ldl_redis_fence(ldl_redis *r, const char *resource, int64_t fence,
                                  int nkeys, const int *keyidx, int argc, const char **argv,
                                  const size_t *argvlen, redisReply **reply_out);
#ifndef LDL_NO_ASYNC
/* the fenced write, non-blocking view: queued in the same in-order pipeline as
   the locks' requests (one pool slot until answered; the arguments are copied,
   so they need not outlive the call). LDL_OK: done(ctx, rc, reply) follows
   exactly once; negative (LDL_EINVAL, LDL_ESTORE link failed, LDL_ENOSPC pool
   full): nothing queued, done is not called. done must not be NULL. */
/* DEPRECATED (v0.4): the view */
LDL_REDIS_API int ldl_redis_async_fence(ldl_redis_async *ra, const char *resource, int64_t fence,
                                        int nkeys, const int *keyidx, int argc, const char **argv,
                                        const size_t *argvlen, ldl_redis_fence_fn done, void *ctx);
#endif

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_H */

/* ====================================================================== */
#ifdef LDL_REDIS_IMPLEMENTATION
#ifndef LITE_DI_LOCK_REDIS_C
#define LITE_DI_LOCK_REDIS_C

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LDL__REDIS_ARRAY_MAX  16
#define LDL__REDIS_CONNECTING 0
#define LDL__REDIS_UP         1
#define LDL__REDIS_FAILED     2
/* '{' prefix ':' key '}' ':fence' NUL */
#define LDL__REDIS_KEYBUF (LDL_REDIS_PREFIX_MAX + LDL_KEY_MAX + 16)
/* the adapter's request kinds beyond LDL_OP_ACQUIRE / _RENEW / _RELEASE */
#define LDL__REDIS_OWNED   4        /* acquire that stores an owner */
#define LDL__REDIS_INSPECT 5        /* read token, PTTL, owner */
#define LDL__REDIS_GRANTS(kind) ((kind) == LDL_OP_ACQUIRE || (kind) == LDL__REDIS_OWNED)

/* The scripts. Every lock script answers ONE string, "<nonce> <value>"
   (v0.3, decision 0118; v0.2 answered the table { nonce, value }, which cost
   Redis 7.0 about 5,000 instructions per call to turn into a reply); the
   nonce is the last ARGV, and ldl__redis_judge parses the string exactly.
   Inspect keeps the table (its token is read from a key anyone may have
   written: a flat form of it would need a length prefix; not a hot path).
   Their SHA1s below are checked against the server's SCRIPT LOAD by
   tests/store/redis_adapter.c; a stale SHA would still work (NOSCRIPT -> EVAL
   every time) but slower, so the test keeps them honest. */
/* the grant, shared by the plain and the owned acquire; NONCE_ARG is the ARGV
   index of the nonce. v0.3 (decision 0117): the token text comes from the INCR
   reply (exact below 2^53) instead of a GET, which is kept only above it.
   The keys and what they hold are the v0.1 ones, so v0.1, v0.2 and v0.3
   clients share keys. */
#define LDL__REDIS_GRANT_LUA(NONCE_ARG) \
    "local n = ARGV[" NONCE_ARG "]\n" \
    "if redis.call('EXISTS', KEYS[1]) == 1 then return n .. ' 0' end\n" \
    "local t = redis.call('INCR', KEYS[2])\n" \
    "if t < 1 then return redis.error_reply('ERR ldl: fence counter below 1') end\n" \
    "redis.call('PERSIST', KEYS[2])\n" \
    "local s = t < 9007199254740992 and string.format('%d', t) or redis.call('GET', KEYS[2])\n" \
    "redis.call('SET', KEYS[1], s, 'PX', ARGV[1])\n"
/* The Cluster view's grant (decision 0115): the token is max(stored + 1,
   E * 2^32), E = this master's config epoch. A replica promoted by a failover
   takes an epoch above the old master's, so its tokens are above every token
   the old master granted even when the counter it inherited lagged.
   CLUSTER INFO (cluster_my_epoch) costs the server a walk of all 16384 slots,
   so the adapter keeps the last (E, replication ID) the node answered and
   sends them (E_ARG, R_ARG); the script trusts E only while the node's
   master_replid (INFO replication) is still R: a promotion always makes a new
   replication ID, so a cached E is never used across a failover of its node.
   Otherwise it reads CLUSTER INFO and answers "<nonce> <token> <E> <replid>" for
   the adapter to keep. E above 2^31 - 1 (E * 2^32 would pass INT64_MAX) or
   unreadable: an error reply, nothing changed. The compare is exact: in Lua
   numbers below 2^53, above it on the decimal texts. */
#define LDL__REDIS_GRANT_EPOCH_LUA(NONCE_ARG, E_ARG, R_ARG) \
    "local n = ARGV[" NONCE_ARG "]\n" \
    "if redis.call('EXISTS', KEYS[1]) == 1 then return n .. ' 0' end\n" \
    "local r = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')\n" \
    "local e, f = tonumber(ARGV[" E_ARG "]), false\n" \
    "if not r or r ~= ARGV[" R_ARG "] then\n" \
    "  e, f = tonumber(string.match(redis.call('CLUSTER', 'INFO'), 'cluster_my_epoch:(%d+)')), true\n" \
    "end\n" \
    "if not e or not r or e > 2147483647 then return redis.error_reply('ERR ldl: config epoch unreadable or above 2^31-1') end\n" \
    "local t = redis.call('INCR', KEYS[2])\n" \
    "if t < 1 then return redis.error_reply('ERR ldl: fence counter below 1') end\n" \
    "local b, s, up = e * 4294967296, nil, false\n" \
    "if t < 9007199254740992 then\n" \
    "  if t < b then t, up = b, true end\n" \
    "  s = string.format('%d', t)\n" \
    "else\n" \
    "  s = redis.call('GET', KEYS[2])\n" \
    "  local u = string.format('%d', b)\n" \
    "  if #s < #u or (#s == #u and s < u) then s, up = u, true end\n" \
    "end\n" \
    "if up then redis.call('SET', KEYS[2], s) else redis.call('PERSIST', KEYS[2]) end\n" \
    "redis.call('SET', KEYS[1], s, 'PX', ARGV[1])\n"
#define LDL__REDIS_GRANT_EPOCH_RET \
    "if f then return n .. ' ' .. s .. ' ' .. string.format('%d', e) .. ' ' .. r end\n" \
    "return n .. ' ' .. s\n"
static const char ldl__redis_acquire_lua[] =
    LDL__REDIS_GRANT_LUA("2")
    "return n .. ' ' .. s\n";
static const char ldl__redis_acquire_sha[] = "e6c9371f5147fa2e23d90db72201d66c19d3f315";
static const char ldl__redis_acquire_epoch_lua[] =
    LDL__REDIS_GRANT_EPOCH_LUA("4", "2", "3")
    LDL__REDIS_GRANT_EPOCH_RET;
static const char ldl__redis_acquire_epoch_sha[] = "ce6b22761d2db360352467ee49b837584a6b7a55";

/* renew and release answer "1" only when the token matched AND the command
   answered 1 (after a GET in the same script it always does); a number
   concatenated into the answer would cost Lua a tostring (~2,000 instructions) */
static const char ldl__redis_renew_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 1 then\n"
    "  return ARGV[3] .. ' 1'\n"
    "end\n"
    "return ARGV[3] .. ' 0'\n";
static const char ldl__redis_renew_sha[] = "1dfa45a43c125ad9bd973580c94da6dc61d1b3fd";

static const char ldl__redis_release_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('DEL', KEYS[1]) == 1 then\n"
    "  return ARGV[2] .. ' 1'\n"
    "end\n"
    "return ARGV[2] .. ' 0'\n";
static const char ldl__redis_release_sha[] = "2177db74a31520189899ff2391be3ac4b21b2d0e";

/* v0.2 holder identity (decision 0104). The owned acquire is the acquire
   above plus the owner key, "<token> <owner>", which never expires: inspect
   trusts it only while its token is the lease's, so it needs no renew or
   release of its own and the three scripts above keep the v0.1 semantics. */
static const char ldl__redis_owned_lua[] =
    LDL__REDIS_GRANT_LUA("3")
    "redis.call('SET', KEYS[3], s .. ' ' .. ARGV[2])\n"
    "return n .. ' ' .. s\n";
static const char ldl__redis_owned_sha[] = "43d1ab3e889b65e75d3b6c18f8e0dffdb24eaf7a";
static const char ldl__redis_owned_epoch_lua[] =
    LDL__REDIS_GRANT_EPOCH_LUA("5", "3", "4")
    "redis.call('SET', KEYS[3], s .. ' ' .. ARGV[2])\n"
    LDL__REDIS_GRANT_EPOCH_RET;
static const char ldl__redis_owned_epoch_sha[] = "62ad8a27ff38a166329f3c3630e97c6381bf149e";

/* { nonce, 0 } free, or { nonce, token, pttl, owner } ("" when the owner key
   is missing or names another token) */
static const char ldl__redis_inspect_lua[] =
    "local n = ARGV[1]\n"
    "local t = redis.call('GET', KEYS[1])\n"
    "if not t then return {n, 0} end\n"
    "local o = redis.call('GET', KEYS[2])\n"
    "local w = ''\n"
    "if o and string.sub(o, 1, #t + 1) == t .. ' ' then w = string.sub(o, #t + 2) end\n"
    "return {n, t, redis.call('PTTL', KEYS[1]), w}\n";
static const char ldl__redis_inspect_sha[] = "9c4fab5e68958dc5f14c7252da8ea12d83390002";

/* ------------------------------------------------------------ small helpers */
/* a then b into out[cap], cut to fit, always NUL-terminated (cap > 0) */
static void ldl__redis_cat(char *out, size_t cap, const char *a, const char *b) {
    size_t n = 0;
    for (; a && *a && n + 1 < cap; a++) out[n++] = *a;
    for (; b && *b && n + 1 < cap; b++) out[n++] = *b;
    out[n] = 0;
}

/* the last error: its kind (slot -1, no address) and its text a then b */
static void ldl__redis_say(ldl_redis *r, int kind, const char *a, const char *b) {
    r->_err.kind = kind;
    r->_err.slot = -1;
    r->_err.addr[0] = 0;
    ldl__redis_cat(r->_why, sizeof r->_why, a, b);
}

/* an error reply: its text as the why, its kind (and a redirect's slot and
   address) as values */
static void ldl__redis_server_error(ldl_redis *r, const char *s) {
    const char *p;
    int kind = LDL_REDIS_ERR_SERVER;
    long slot = 0;
    size_t n = 0;
    if (!s) s = "";
    ldl__redis_say(r, kind, "server: ", s);
    if (strncmp(s, "TRYAGAIN", 8) == 0) { r->_err.kind = LDL_REDIS_ERR_TRYAGAIN; return; }
    if (strncmp(s, "CLUSTERDOWN", 11) == 0) { r->_err.kind = LDL_REDIS_ERR_CLUSTERDOWN; return; }
    if (strncmp(s, "MOVED ", 6) == 0) { kind = LDL_REDIS_ERR_MOVED; p = s + 6; }
    else if (strncmp(s, "ASK ", 4) == 0) { kind = LDL_REDIS_ERR_ASK; p = s + 4; }
    else return;
    if (*p < '0' || *p > '9') return;              /* malformed: stays SERVER */
    for (; *p >= '0' && *p <= '9'; p++) if ((slot = slot * 10 + (*p - '0')) > 16383) return;
    if (*p++ != ' ') return;
    while (p[n] && p[n] != ' ' && p[n] != '\r' && p[n] != '\n') n++;
    if (n == 0 || n >= sizeof r->_err.addr) return;
    memcpy(r->_err.addr, p, n);
    r->_err.addr[n] = 0;
    r->_err.slot = (int)slot;
    r->_err.kind = kind;
}

static uint64_t ldl__redis_builtin_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* the adapter's clock (ldl_redis_set_clock), the built-in one when none was given */
static uint64_t ldl__redis_now_ms(const ldl_redis *r) {
    return r->_clock.now_ms ? r->_clock.now_ms(r->_clock.ctx) : ldl__redis_builtin_ms();
}

/* decimal text of v into buf[24]; answers its length */
static size_t ldl__redis_u64(uint64_t v, char *buf) {
    char tmp[24];
    size_t n = 0, i;
    do { tmp[n++] = (char)('0' + (int)(v % 10u)); v /= 10u; } while (v);
    for (i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

/* 16 lower-case hex digits of v into buf[17] */
static void ldl__redis_hex(uint64_t v, char *buf) {
    static const char d[] = "0123456789abcdef";
    int i;
    for (i = 15; i >= 0; i--) { buf[i] = d[v & 15u]; v >>= 4; }
    buf[16] = 0;
}

/* an owner: 1 to LDL_OWNER_MAX-1 bytes of printable ASCII (0x20..0x7E), as
   the core's desc.owner; its length, 0 when it is not one */
static size_t ldl__redis_owner(const char *o, size_t n) {
    size_t i;
    if (!o || n == 0 || n >= LDL_OWNER_MAX) return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)o[i];
        if (c < 0x20 || c > 0x7E) return 0;
    }
    return n;
}

/* strict decimal in [1, INT64_MAX]: digits only, no sign, no leading zero */
static int ldl__redis_token(const char *s, size_t n, int64_t *out) {
    uint64_t v = 0;
    size_t i;
    if (!s || n == 0 || n > 19 || s[0] == '0') return 0;
    for (i = 0; i < n; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9') return 0;
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_C(9223372036854775807) - d) / 10u) return 0;
        v = v * 10u + d;
    }
    if (v < 1) return 0;
    *out = (int64_t)v;
    return 1;
}

/* ------------------------------------------------------------ init, names */
static int ldl__redis_setup(ldl_redis *r, redisContext *c, const char *prefix) {
    size_t n, i;
    redisReader *fresh;
    memset(r, 0, sizeof *r);
    if (!c) { ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: NULL redisContext", NULL); return LDL_EINVAL; }
    if (!prefix) prefix = "ldl";
    n = strlen(prefix);
    if (n == 0 || n >= LDL_REDIS_PREFIX_MAX) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: the prefix must be 1 to LDL_REDIS_PREFIX_MAX-1 bytes", NULL);
        return LDL_EINVAL;
    }
    for (i = 0; i < n; i++) {
        if (prefix[i] == ':' || prefix[i] == '{' || prefix[i] == '}') {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: the prefix must not contain ':', '{' or '}' (key names would "
                           "collide or leave their hash slot)", NULL);
            return LDL_EINVAL;
        }
    }
    /* hiredis keeps its reply builders static: borrow the table from a fresh reader */
    fresh = redisReaderCreate();
    if (!fresh) { ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: out of memory", NULL); return LDL_EINVAL; }
    r->_dflt = fresh->fn;
    redisReaderFree(fresh);
    memcpy(r->_prefix, prefix, n + 1);
    r->_plen = n;
    r->_nonce = ldl__redis_builtin_ms() * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)(uintptr_t)r;
    r->_c = c;
    return LDL_OK;
}

/* "{prefix:key}suffix" into buf; answers its length, 0 on a bad key */
static size_t ldl__redis_name(const ldl_redis *r, const char *key, const char *suffix, char *buf) {
    size_t k, s, n = 0;
    if (!key) return 0;
    k = strlen(key);
    if (k == 0 || k >= LDL_KEY_MAX) return 0;
    s = strlen(suffix);
    buf[n++] = '{';
    memcpy(buf + n, r->_prefix, r->_plen); n += r->_plen;
    buf[n++] = ':';
    memcpy(buf + n, key, k); n += k;
    buf[n++] = '}';
    memcpy(buf + n, suffix, s); n += s;
    buf[n] = 0;
    return n;
}

/* ------------------------------------------------------------ the reply hooks
   Forward to hiredis' own builders, refusing what no answer of ours can be
   before anything is allocated (a NULL makes the reader fail the reply). */
/* one object more in the reply being read, of `bytes` (decision 0119); 0
   (refuse it) when `ok` is 0 or the reply's budget of objects or bytes is
   spent. The reply's first object (the task without a parent) sets the
   budget: the exchange's limits, else LDL_REDIS_REPLY_OBJECTS and
   LDL_REDIS_REPLY_TOTAL -- by default, in every view: a 16-ary tree 5 deep
   (a million objects, 4.5 MB of input) is refused after 256 objects. */
static int ldl__redis_spend(ldl_redis *r, const redisReadTask *t, int ok, size_t bytes) {
    if (!t->parent) {                   /* a caller's own object budget: its bytes follow from it */
        int own = r->_lim && r->_lim->objects > 0;
        r->_left = own ? r->_lim->objects : LDL_REDIS_REPLY_OBJECTS;
        r->_bleft = own ? (size_t)-1 : (size_t)LDL_REDIS_REPLY_TOTAL;
    }
    if (!ok || --r->_left < 0 || r->_bleft < 16 || bytes > r->_bleft - 16) {
        r->_refused = 1;
        return 0;
    }
    r->_bleft -= bytes + 16;
    return 1;
}
static void *ldl__redis_mk_str(const redisReadTask *t, char *s, size_t len) {
    ldl_redis *r = (ldl_redis *)t->privdata;
    size_t most = r && r->_lim && r->_lim->string_bytes ? r->_lim->string_bytes : LDL_REDIS_REPLY_MAX;
    if (!r || !ldl__redis_spend(r, t, len <= most, len)) return NULL;
    return r->_dflt->createString(t, s, len);
}
static void *ldl__redis_mk_array(const redisReadTask *t, int n) {
    ldl_redis *r = (ldl_redis *)t->privdata;
    int most = r && r->_lim && r->_lim->elements ? r->_lim->elements : LDL__REDIS_ARRAY_MAX;
    if (!r || !ldl__redis_spend(r, t, n <= most, n > 0 ? (size_t)n * 8u : 0u)) return NULL;
    return r->_dflt->createArray(t, n);
}
static void *ldl__redis_mk_int(const redisReadTask *t, long long v) {
    ldl_redis *r = (ldl_redis *)t->privdata;
    return r && ldl__redis_spend(r, t, 1, 0) ? r->_dflt->createInteger(t, v) : NULL;
}
static void *ldl__redis_mk_nil(const redisReadTask *t) {
    ldl_redis *r = (ldl_redis *)t->privdata;
    return r && ldl__redis_spend(r, t, 1, 0) ? r->_dflt->createNil(t) : NULL;
}
static void ldl__redis_free_obj(void *o) { freeReplyObject(o); }

static const redisReplyObjectFunctions ldl__redis_fns = {
    ldl__redis_mk_str, ldl__redis_mk_array, ldl__redis_mk_int, ldl__redis_mk_nil, ldl__redis_free_obj
};

/* The hooks are installed only while the adapter parses (one call, one pump) and
   the reader's own settings are put back after, so the context never points
   into an adapter that is gone. */
typedef struct ldl__redis_hooked {
    redisReader *rd;
    redisReplyObjectFunctions *fn;
    void *priv;
} ldl__redis_hooked;

static void ldl__redis_hook(ldl_redis *r, ldl__redis_hooked *h) {
    h->rd = r->_c->reader;
    h->fn = NULL;
    h->priv = NULL;
    if (!h->rd) return;
    h->fn = h->rd->fn;
    h->priv = h->rd->privdata;
    h->rd->fn = (redisReplyObjectFunctions *)&ldl__redis_fns;   /* hiredis never writes it */
    h->rd->privdata = r;
}

static void ldl__redis_unhook(const ldl__redis_hooked *h) {
    if (!h->rd) return;
    h->rd->fn = h->fn;
    h->rd->privdata = h->priv;
}

/* bytes the reader holds but has not turned into a reply yet */
static size_t ldl__redis_unparsed(const redisContext *c) {
    return c->reader && c->reader->len > c->reader->pos ? c->reader->len - c->reader->pos : 0;
}

/* the reader's error, in words (a refused reply says which bound) */
static void ldl__redis_reader_why(ldl_redis *r, const char *errstr) {
    if (r->_refused)
        ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "reply refused: an array of more than 16 elements, a string of "
                       "more than LDL_REDIS_REPLY_MAX bytes, or more than LDL_REDIS_REPLY_OBJECTS objects or "
                       "LDL_REDIS_REPLY_TOTAL bytes in one reply (or the exchange's own bounds; hostile or "
                       "foreign server?)", NULL);
    else
        ldl__redis_say(r, LDL_REDIS_ERR_IO, "connection failed: ", errstr);
}

/* the connection is out of step (or the reply cannot be trusted): mark it failed
   so nothing reads on it any more; redisReconnect clears the mark */
static void ldl__redis_break(ldl_redis *r, int kind, const char *why) {
    redisContext *c = r->_c;
    ldl__redis_say(r, kind, why, NULL);
    if (!c->err) {
        c->err = REDIS_ERR_PROTOCOL;
        ldl__redis_cat(c->errstr, sizeof c->errstr, "ldl: ", why);
    }
}

/* ------------------------------------------------------------ the requests (argv) */
typedef struct ldl__redis_cmd {
    const char *argv[12];
    size_t      lens[12];
    int         argc;
    char        lease[LDL__REDIS_KEYBUF], fence[LDL__REDIS_KEYBUF], owner[LDL__REDIS_KEYBUF];
    char        tok[24], ttl[24], nonce[17], ep[24];
} ldl__redis_cmd;

/* EVALSHA sha nkeys keys... args... nonce (EVAL lua ... when eval); `owner`
   only for LDL__REDIS_OWNED. 0 ok, LDL_EINVAL on a bad key or argument */
static int ldl__redis_build(const ldl_redis *r, ldl__redis_cmd *m, int kind, const char *key,
                            int64_t token, uint32_t ttl_ms, const char *owner, uint64_t nonce,
                            int eval) {
    const char *sha, *lua;
    size_t n, on = 0;
    int a = 0;
    if (!(n = ldl__redis_name(r, key, ":lease", m->lease))) return LDL_EINVAL;
    if (kind == LDL_OP_ACQUIRE && r->_epoch) { sha = ldl__redis_acquire_epoch_sha; lua = ldl__redis_acquire_epoch_lua; }
    else if (kind == LDL__REDIS_OWNED && r->_epoch) { sha = ldl__redis_owned_epoch_sha; lua = ldl__redis_owned_epoch_lua; }
    else if (kind == LDL_OP_ACQUIRE) { sha = ldl__redis_acquire_sha; lua = ldl__redis_acquire_lua; }
    else if (kind == LDL_OP_RENEW) { sha = ldl__redis_renew_sha; lua = ldl__redis_renew_lua; }
    else if (kind == LDL_OP_RELEASE) { sha = ldl__redis_release_sha; lua = ldl__redis_release_lua; }
    else if (kind == LDL__REDIS_OWNED) { sha = ldl__redis_owned_sha; lua = ldl__redis_owned_lua; }
    else { sha = ldl__redis_inspect_sha; lua = ldl__redis_inspect_lua; }
    if (eval) { m->argv[a] = "EVAL"; m->lens[a++] = 4; m->argv[a] = lua; m->lens[a++] = strlen(lua); }
    else { m->argv[a] = "EVALSHA"; m->lens[a++] = 7; m->argv[a] = sha; m->lens[a++] = 40; }
    ldl__redis_hex(nonce, m->nonce);
    if (kind == LDL__REDIS_INSPECT) {
        ldl__redis_name(r, key, ":owner", m->owner);
        m->argv[a] = "2";      m->lens[a++] = 1;
        m->argv[a] = m->lease; m->lens[a++] = n;
        m->argv[a] = m->owner; m->lens[a++] = n;     /* ":owner" is as long as ":lease" */
    } else if (LDL__REDIS_GRANTS(kind)) {
        if (ttl_ms == 0) return LDL_EINVAL;
        if (kind == LDL__REDIS_OWNED && !(on = ldl__redis_owner(owner, owner ? strlen(owner) : 0)))
            return LDL_EINVAL;
        ldl__redis_name(r, key, ":fence", m->fence);
        m->argv[a] = kind == LDL__REDIS_OWNED ? "3" : "2"; m->lens[a++] = 1;
        m->argv[a] = m->lease; m->lens[a++] = n;
        m->argv[a] = m->fence; m->lens[a++] = n;     /* ":fence" is as long as ":lease" */
        if (kind == LDL__REDIS_OWNED) {
            ldl__redis_name(r, key, ":owner", m->owner);
            m->argv[a] = m->owner; m->lens[a++] = n;
        }
        m->argv[a] = m->ttl;   m->lens[a++] = ldl__redis_u64(ttl_ms, m->ttl);
        if (kind == LDL__REDIS_OWNED) { m->argv[a] = owner; m->lens[a++] = on; }
        if (r->_epoch) {       /* the cached epoch and replication ID (decision 0115) */
            m->argv[a] = m->ep;     m->lens[a++] = ldl__redis_u64(r->_ep_r[0] ? r->_ep_e : 0u, m->ep);
            m->argv[a] = r->_ep_r;  m->lens[a++] = strlen(r->_ep_r);
        }
    } else {
        m->argv[a] = "1";      m->lens[a++] = 1;
        m->argv[a] = m->lease; m->lens[a++] = n;
        m->argv[a] = m->tok;   m->lens[a++] = ldl__redis_u64((uint64_t)token, m->tok);
        if (kind == LDL_OP_RENEW) {
            if (ttl_ms == 0) return LDL_EINVAL;
            m->argv[a] = m->ttl; m->lens[a++] = ldl__redis_u64(ttl_ms, m->ttl);
        }
    }
    m->argv[a] = m->nonce; m->lens[a++] = 16;
    m->argc = a;
    return 0;
}

/* Judge a lock script's reply (not an error reply) against its request: one
   bulk string "<nonce> <value>" (decision 0118), parsed exactly -- the 16
   hex digits of THIS call's nonce and one space first, then the value:
     renew, release        "0" or "1"
     acquire, owned        "0" (held) or the token (strict decimal in [1, INT64_MAX])
     the epoch view's      also "<token> <E> <replid>": E strict decimal in
     grants                [0, 2^31 - 1], replid 40 lower-case hex digits (kept)
   LDL__REDIS_OOS: out of step (not a string, or not this call's nonce): the link
   cannot be trusted. Otherwise the answer: 1 (acquire: *tok set), 0, or
   LDL_ESTORE (ours, but malformed: nothing is taken). */
#define LDL__REDIS_OOS (-1000)
/* a strict decimal field of s[0..n) ending at the first space or at n: its
   end (s + n or the space), NULL when it is not 1 to `most` digits without
   a leading zero ("0" itself only when zero_ok) */
static const char *ldl__redis_field(const char *s, size_t n, size_t most, int zero_ok) {
    size_t i = 0;
    while (i < n && s[i] != ' ') {
        if (s[i] < '0' || s[i] > '9') return NULL;
        i++;
    }
    if (i == 0 || i > most || (s[0] == '0' && !(zero_ok && i == 1))) return NULL;
    return s + i;
}

/* the why of an answer with our nonce whose value is not exactly what the call expects */
#define LDL__REDIS_MALFORMED "malformed answer (after our nonce, not exactly the 0, 1 or token in [1, INT64_MAX] this call answers)"
static int ldl__redis_judge(const redisReply *rep, int kind, uint64_t nonce, int64_t *tok, ldl_redis *r) {
    char want[17];
    const char *v, *end, *f;
    uint64_t ev = 0;
    size_t i;
    if (!rep || rep->type != REDIS_REPLY_STRING || rep->len < 17 || rep->str[16] != ' ') return LDL__REDIS_OOS;
    ldl__redis_hex(nonce, want);
    if (memcmp(rep->str, want, 16) != 0) return LDL__REDIS_OOS;
    v = rep->str + 17;
    end = rep->str + rep->len;
    if (end - v == 1 && v[0] == '0') return 0;
    if (!LDL__REDIS_GRANTS(kind)) return end - v == 1 && v[0] == '1' ? 1 : LDL_ESTORE;
    if (!(f = ldl__redis_field(v, (size_t)(end - v), 19, 0)) || !ldl__redis_token(v, (size_t)(f - v), tok))
        return LDL_ESTORE;
    if (f == end) return 1;
    /* a grant that read the epoch: " <E> <replid>", only in the epoch view */
    if (!(r && r->_epoch) || !(v = ldl__redis_field(f + 1, (size_t)(end - f - 1), 10, 1)) ||
        end - v != 41 || v[0] != ' ') return LDL_ESTORE;
    for (f = f + 1; f < v; f++) ev = ev * 10u + (uint64_t)(*f - '0');
    if (ev > 2147483647u) return LDL_ESTORE;
    for (i = 1; i <= 40; i++)
        if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f'))) return LDL_ESTORE;
    r->_ep_e = (uint32_t)ev;
    memcpy(r->_ep_r, v + 1, 40);
    r->_ep_r[40] = 0;
    return 1;
}

/* Judge an inspect reply: { nonce, 0 } free, { nonce, token, pttl, owner } held.
   LDL__REDIS_OOS (shape or nonce), 1 (*h filled), 0, or LDL_ESTORE: a token not
   in [1, INT64_MAX], a PTTL not in [0, UINT32_MAX] (-1: a lease key without an
   expiry, which no script of ours writes), an owner that is not one. */
static int ldl__redis_judge_inspect(const redisReply *rep, uint64_t nonce, ldl_holder *h) {
    char want[17];
    const redisReply *t, *p, *o;
    int64_t tok = 0;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || (rep->elements != 2 && rep->elements != 4))
        return LDL__REDIS_OOS;
    ldl__redis_hex(nonce, want);
    if (rep->element[0]->type != REDIS_REPLY_STRING || rep->element[0]->len != 16 ||
        memcmp(rep->element[0]->str, want, 16) != 0) return LDL__REDIS_OOS;
    if (rep->elements == 2)
        return rep->element[1]->type == REDIS_REPLY_INTEGER && rep->element[1]->integer == 0 ? 0 : LDL_ESTORE;
    t = rep->element[1]; p = rep->element[2]; o = rep->element[3];
    if (t->type != REDIS_REPLY_STRING || !ldl__redis_token(t->str, t->len, &tok)) return LDL_ESTORE;
    if (p->type != REDIS_REPLY_INTEGER || p->integer < 0 || p->integer > (long long)UINT32_MAX)
        return LDL_ESTORE;
    if (o->type != REDIS_REPLY_STRING || (o->len > 0 && !ldl__redis_owner(o->str, o->len)))
        return LDL_ESTORE;
    h->token = tok;
    h->ttl_left_ms = (uint32_t)p->integer;
    memcpy(h->owner, o->str, o->len);
    h->owner[o->len] = 0;
    return 1;
}

/* the RESP text of a command into out[cap]; its length, 0 when it does not fit.
   (hiredis' own formatter spends most of a pipelined request's client time in
   sdscatfmt; this one is a few copies.) */
static size_t ldl__redis_resp(int argc, const char *const *argv, const size_t *lens, char *out, size_t cap) {
    size_t n = 0, k;
    int a;
    if (cap < 16) return 0;
    out[n++] = '*';
    n += ldl__redis_u64((uint64_t)argc, out + n);
    out[n++] = '\r'; out[n++] = '\n';
    for (a = 0; a < argc; a++) {
        if (n + 24 + lens[a] + 2 > cap) return 0;
        out[n++] = '$';
        n += ldl__redis_u64((uint64_t)lens[a], out + n);
        out[n++] = '\r'; out[n++] = '\n';
        for (k = 0; k < lens[a]; k++) out[n + k] = argv[a][k];
        n += lens[a];
        out[n++] = '\r'; out[n++] = '\n';
    }
    return n;
}
#define LDL__REDIS_TEXTMAX (3 * LDL__REDIS_KEYBUF + sizeof ldl__redis_owned_epoch_lua + LDL_OWNER_MAX + 256)

/* ------------------------------------------------------------ synchronous view */
LDL_REDIS_API int ldl_redis_init(ldl_redis *r, redisContext *c, const char *prefix) {
    if (!r) return LDL_EINVAL;
    return ldl__redis_setup(r, c, prefix);
}

LDL_REDIS_API const char *ldl_redis_why(const ldl_redis *r) {
    return r ? r->_why : "NULL adapter";
}

/* Something on the connection that is not ours: refuse to send (the reply we would
   read next could be someone else's). 1 = refused. */
static int ldl__redis_foreign(ldl_redis *r) {
    redisContext *c = r->_c;
    char b;
    ssize_t n;
    if (c->obuf && sdslen(c->obuf) > 0) {
        ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "refused to send: the connection has output pending (a lock connection "
                       "is not shared)", NULL);
        return 1;
    }
    if (ldl__redis_unparsed(c) > 0) {
        ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "refused to send: the connection has unread input buffered (a lock "
                       "connection is not shared)", NULL);
        return 1;
    }
    n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) {
        ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "refused to send: an unread reply waits in the socket (a lock "
                       "connection is not shared)", NULL);
        return 1;
    }
    return 0;
}

/* one formatted command (text[0..n), n 0: it did not fit), one reply, on the
   blocking context; NULL on failure (why set). The adapter's one bounded
   exchange: lock scripts, ldl_redis_command and the fenced write all go
   through it. The whole call is bounded by r->_lim's call_ms (else the
   context's timeout), measured on the adapter's clock: each read waits (poll)
   at most for what is left of it. `late` is the why of a timeout. */
static redisReply *ldl__redis_exchange(ldl_redis *r, const char *text, size_t n, const char *late) {
    redisContext *c = r->_c;
    const ldl_redis_limits *lim = r->_lim;
    void *rep = NULL;
    uint64_t t0, limit = lim && lim->call_ms ? lim->call_ms : 0, spent;
    size_t most = lim && lim->reply_bytes ? lim->reply_bytes : LDL_REDIS_REPLY_MAX;
    int done = 0, err;
    /* sock: the limit is the socket's own SO_RCVTIMEO (redisSetTimeout), so the
       FIRST blocking read already waits at most the limit: no poll and no
       getsockopt before it (decision 0117); both only before a later read */
    int sock = !limit, first = 1;
    r->_refused = 0;
    if (n == 0 || redisAppendFormattedCommand(c, text, n) != REDIS_OK) {
        ldl__redis_say(r, LDL_REDIS_ERR_IO, "could not format the command: ", c->errstr);
        return NULL;
    }
    t0 = ldl__redis_now_ms(r);
    do {
        if (redisBufferWrite(c, &done) != REDIS_OK) {
            ldl__redis_say(r, LDL_REDIS_ERR_IO, "connection failed: ", c->errstr);
            return NULL;
        }
    } while (!done);
    for (;;) {
        if (redisGetReplyFromReader(c, &rep) != REDIS_OK) {
            ldl__redis_reader_why(r, c->errstr);
            return NULL;
        }
        if (rep) return (redisReply *)rep;
        if (ldl__redis_unparsed(c) > most) {
            ldl__redis_break(r, LDL_REDIS_ERR_PROTOCOL, "reply larger than LDL_REDIS_REPLY_MAX (or the "
                             "exchange's bound): connection dropped");
            return NULL;
        }
        if (sock && !first) {   /* a reply in pieces: now the limit's value is needed */
            struct timeval tv;
            socklen_t tl = sizeof tv;
            sock = 0;
            if (getsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl) == 0)
                limit = (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;
        }
        spent = ldl__redis_now_ms(r) - t0;
        if (!(sock && first) && limit) {
            struct pollfd p;
            int pr;
            if (spent < limit) {
                p.fd = c->fd; p.events = POLLIN; p.revents = 0;
                pr = poll(&p, 1, (int)(limit - spent > 60000u ? 60000u : limit - spent));
                if (pr < 0 && errno == EINTR) continue;
            } else {
                pr = 0;
            }
            if (pr == 0) {
                ldl__redis_break(r, LDL_REDIS_ERR_IO, late);
                return NULL;
            }
        }
        first = 0;
        errno = 0;
        if (redisBufferRead(c) != REDIS_OK) {
            err = errno;
            if (!r->_refused && (err == EAGAIN || err == EWOULDBLOCK))   /* SO_RCVTIMEO ran out */
                ldl__redis_say(r, LDL_REDIS_ERR_IO, late, NULL);
            else
                ldl__redis_reader_why(r, c->errstr);
            return NULL;
        }
    }
}

/* the checks every synchronous exchange makes first (a connection, blocking,
   nothing foreign on it), then the exchange under the reply hooks and `lim` */
static redisReply *ldl__redis_roundtrip_text(ldl_redis *r, const ldl_redis_limits *lim, const char *text,
                                             size_t n, const char *late) {
    redisContext *c = r->_c;
    ldl__redis_hooked h;
    redisReply *rep;
    if (!c) { ldl__redis_say(r, LDL_REDIS_ERR_IO, "no connection", NULL); return NULL; }
    if (c->err) { ldl__redis_say(r, LDL_REDIS_ERR_IO, "connection failed earlier (reconnect it): ", c->errstr); return NULL; }
    if (!(c->flags & REDIS_BLOCK)) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "the synchronous view needs a blocking redisContext", NULL);
        return NULL;
    }
    if (ldl__redis_foreign(r)) return NULL;
    r->_lim = lim;
    ldl__redis_hook(r, &h);
    rep = ldl__redis_exchange(r, text, n, late);
    ldl__redis_unhook(&h);
    r->_lim = NULL;
    return rep;
}

static redisReply *ldl__redis_roundtrip_lim(ldl_redis *r, const ldl_redis_limits *lim, int argc,
                                            const char **argv, const size_t *lens) {
    char text[LDL__REDIS_TEXTMAX];
    size_t n = ldl__redis_resp(argc, argv, lens, text, sizeof text);
    return ldl__redis_roundtrip_text(r, lim, text, n, "the reply took longer than the call's time limit "
                                     "(a server dripping its reply?): connection dropped");
}

static redisReply *ldl__redis_roundtrip(ldl_redis *r, int argc, const char **argv, const size_t *lens) {
    return ldl__redis_roundtrip_lim(r, NULL, argc, argv, lens);
}

LDL_REDIS_API int ldl_redis_command(ldl_redis *r, const ldl_redis_limits *lim, int argc,
                                    const char **argv, const size_t *lens, redisReply **reply) {
    redisReply *rep;
    int a;
    if (reply) *reply = NULL;
    if (!r || !reply || argc < 1 || argc > 64 || !argv || !lens) return LDL_EINVAL;
    for (a = 0; a < argc; a++) if (!argv[a]) return LDL_EINVAL;
    r->_err.kind = LDL_REDIS_ERR_NONE;
    rep = ldl__redis_roundtrip_lim(r, lim, argc, argv, lens);
    if (!rep) return LDL_ESTORE;
    if (rep->type == REDIS_REPLY_ERROR) ldl__redis_server_error(r, rep->str);
    *reply = rep;
    return LDL_OK;
}

/* ASKING before an attempt (ldl_redis_set_asking); 0 ok, LDL_ESTORE (why set) */
static int ldl__redis_asking(ldl_redis *r) {
    static const char *const argv[1] = { "ASKING" };
    static const size_t lens[1] = { 6 };
    redisReply *rep = ldl__redis_roundtrip(r, 1, (const char **)argv, lens);
    int ok = rep && rep->type == REDIS_REPLY_STATUS;
    if (rep && !ok) {
        if (rep->type == REDIS_REPLY_ERROR) ldl__redis_server_error(r, rep->str);
        else ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "ASKING: unexpected reply", NULL);
    }
    if (rep) freeReplyObject(rep);
    return ok ? 0 : LDL_ESTORE;
}

/* EVALSHA, once more as EVAL on NOSCRIPT; the answer (1, 0, negative).
   `owner` for LDL__REDIS_OWNED, `h` for LDL__REDIS_INSPECT. */
static int ldl__redis_sync(ldl_redis *r, int kind, const char *key, int64_t token, uint32_t ttl_ms,
                           const char *owner, int64_t *tok, ldl_holder *h) {
    ldl__redis_cmd m;
    redisReply *rep;
    int eval, rc;
    r->_err.kind = LDL_REDIS_ERR_NONE;
    for (eval = 0; eval < 2; eval++) {
        uint64_t nonce = ++r->_nonce;
        if (ldl__redis_build(r, &m, kind, key, token, ttl_ms, owner, nonce, eval) != 0) {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "bad argument (key empty or too long, ttl 0)", NULL);
            return LDL_EINVAL;
        }
        if (r->_asking && ldl__redis_asking(r) != 0) return LDL_ESTORE;   /* before EVAL too */
        rep = ldl__redis_roundtrip(r, m.argc, m.argv, m.lens);
        if (!rep) return LDL_ESTORE;
        if (rep->type == REDIS_REPLY_ERROR) {
            int noscript = !eval && rep->str && strncmp(rep->str, "NOSCRIPT", 8) == 0;
            if (!noscript) ldl__redis_server_error(r, rep->str);
            freeReplyObject(rep);
            if (noscript) continue;
            return LDL_ESTORE;
        }
        rc = kind == LDL__REDIS_INSPECT ? ldl__redis_judge_inspect(rep, nonce, h)
                                        : ldl__redis_judge(rep, kind, nonce, tok, r);
        freeReplyObject(rep);
        if (rc == LDL__REDIS_OOS) {
            ldl__redis_break(r, LDL_REDIS_ERR_PROTOCOL, "reply out of step (wrong type or nonce: someone else's reply?): "
                             "connection dropped");
            return LDL_ESTORE;
        }
        if (rc == LDL_ESTORE)
            ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, kind == LDL__REDIS_INSPECT
                           ? "malformed inspect answer (token, PTTL or owner out of range: keys "
                             "written by something else?)"
                           : LDL__REDIS_MALFORMED, NULL);
        return rc;
    }
    return LDL_ESTORE;
}

static int ldl__redis_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    ldl_redis *r = (ldl_redis *)ctx;
    int64_t tok = 0;
    int rc;
    if (!r || !token_out) return LDL_EINVAL;
    rc = ldl__redis_sync(r, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL, &tok, NULL);
    if (rc == 1) *token_out = tok;
    return rc;
}

static int ldl__redis_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                    int64_t *token_out) {
    ldl_redis *r = (ldl_redis *)ctx;
    int64_t tok = 0;
    int rc;
    if (!r || !token_out) return LDL_EINVAL;
    if (!ldl__redis_owner(owner, owner ? strlen(owner) : 0)) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "bad owner (1 to LDL_OWNER_MAX-1 bytes, no control bytes)", NULL);
        return LDL_EINVAL;
    }
    rc = ldl__redis_sync(r, LDL__REDIS_OWNED, key, 0, ttl_ms, owner, &tok, NULL);
    if (rc == 1) *token_out = tok;
    return rc;
}

/* 1 held (*out filled), 0 free, negative: a store error or a malformed reply */
static int ldl__redis_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_redis *r = (ldl_redis *)ctx;
    ldl_holder h;
    int rc;
    if (!r || !out) return LDL_EINVAL;
    h.token = 0; h.ttl_left_ms = 0; h.owner[0] = 0;
    rc = ldl__redis_sync(r, LDL__REDIS_INSPECT, key, 0, 0, NULL, NULL, &h);
    if (rc == 1) *out = h;
    return rc;
}

static int ldl__redis_tokcall(ldl_redis *r, int kind, const char *key, int64_t token, uint32_t ttl_ms) {
    int64_t unused = 0;
    char name[LDL__REDIS_KEYBUF];
    if (!r) return LDL_EINVAL;
    if (!ldl__redis_name(r, key, "", name) || (kind == LDL_OP_RENEW && ttl_ms == 0)) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "bad argument (key empty or too long, ttl 0)", NULL);
        return LDL_EINVAL;
    }
    r->_err.kind = LDL_REDIS_ERR_NONE;
    if (token < 1) return 0;             /* no lease ever carries it */
    return ldl__redis_sync(r, kind, key, token, ttl_ms, NULL, &unused, NULL);
}

static int ldl__redis_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    return ldl__redis_tokcall((ldl_redis *)ctx, LDL_OP_RENEW, key, token, ttl_ms);
}

static int ldl__redis_release(void *ctx, const char *key, int64_t token) {
    return ldl__redis_tokcall((ldl_redis *)ctx, LDL_OP_RELEASE, key, token, 0);
}

LDL_REDIS_API ldl_store ldl_redis_store(ldl_redis *r) {
    ldl_store s;
    s.acquire = ldl__redis_acquire;
    s.renew = ldl__redis_renew;
    s.release = ldl__redis_release;
    s.ctx = r;
    return s;
}

LDL_REDIS_API ldl_store_ext ldl_redis_ext(ldl_redis *r) {
    ldl_store_ext x;
    x.acquire_owned = ldl__redis_acquire_owned;
    x.submit_owned = NULL;
    x.inspect = ldl__redis_inspect;
    x.ctx = r;
    return x;
}

LDL_REDIS_API const ldl_redis_error *ldl_redis_last_error(const ldl_redis *r) {
    static const ldl_redis_error none = { LDL_REDIS_ERR_ARG, -1, "" };
    return r ? &r->_err : &none;
}

LDL_REDIS_API void ldl_redis_set_clock(ldl_redis *r, ldl_clock clock) {
    if (r) r->_clock = clock;
}

LDL_REDIS_API void ldl_redis_set_asking(ldl_redis *r, int on) {
    if (r) r->_asking = on != 0;
}

LDL_REDIS_API void ldl_redis_set_epoch_fences(ldl_redis *r, int on) {
    if (r) r->_epoch = on != 0;
}

static void ldl__redis_tell(char *why, size_t why_len, const char *a, const char *b) {
    if (why && why_len > 0) ldl__redis_cat(why, why_len, a, b);
}

/* CONFIG GET name -> value text copied into out[64]; 1 ok, LDL_ESTORE otherwise */
static int ldl__redis_config(ldl_redis *r, const char *name, char *out, char *why, size_t why_len) {
    const char *argv[3];
    size_t lens[3];
    redisReply *rep;
    int rc = LDL_ESTORE;
    argv[0] = "CONFIG"; lens[0] = 6;
    argv[1] = "GET";    lens[1] = 3;
    argv[2] = name;     lens[2] = strlen(name);
    out[0] = 0;
    rep = ldl__redis_roundtrip(r, 3, argv, lens);
    if (!rep) {
        ldl__redis_tell(why, why_len, "durability unknown: ", r->_why);
        return LDL_ESTORE;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        ldl__redis_server_error(r, rep->str);
        ldl__redis_tell(why, why_len, "durability unknown: CONFIG GET refused (an ACL user needs "
                        "+config|get; managed services often rename or disable CONFIG): ", rep->str);
    } else if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
               rep->element[1]->type == REDIS_REPLY_STRING && rep->element[1]->len < 64) {
        memcpy(out, rep->element[1]->str, rep->element[1]->len);
        out[rep->element[1]->len] = 0;
        rc = 1;
    } else {
        ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "unexpected CONFIG GET reply for ", name);
        ldl__redis_tell(why, why_len, "durability unknown: unexpected CONFIG GET reply for ", name);
    }
    freeReplyObject(rep);
    return rc;
}

LDL_REDIS_API int ldl_redis_check_durability(ldl_redis *r, char *why, size_t why_len) {
    char aof[64], fsync_[64], maxmem[64], policy[64];
    if (why && why_len > 0) why[0] = 0;
    if (!r) { ldl__redis_tell(why, why_len, "NULL adapter", NULL); return LDL_EINVAL; }
    if (ldl__redis_config(r, "appendonly", aof, why, why_len) != 1 ||
        ldl__redis_config(r, "appendfsync", fsync_, why, why_len) != 1 ||
        ldl__redis_config(r, "maxmemory", maxmem, why, why_len) != 1 ||
        ldl__redis_config(r, "maxmemory-policy", policy, why, why_len) != 1)
        return LDL_ESTORE;
    if (strcmp(aof, "yes") != 0) {
        ldl__redis_tell(why, why_len, "appendonly is not yes: a restart or crash can forget the "
                        "fence counter and issue a token again (set appendonly yes)", NULL);
        return 0;
    }
    if (strcmp(fsync_, "always") != 0) {
        ldl__redis_tell(why, why_len, "appendfsync is not always: a crash can lose the last "
                        "fence increments (set appendfsync always); it is ", fsync_);
        return 0;
    }
    if (strcmp(maxmem, "0") != 0 && strncmp(policy, "allkeys-", 8) == 0) {
        ldl__redis_tell(why, why_len, "maxmemory is set with an allkeys-* eviction policy: the "
                        "fence key may be evicted (use noeviction or a volatile-* policy); it is ",
                        policy);
        return 0;
    }
    ldl__redis_tell(why, why_len, "durable on this server: appendonly yes, appendfsync always, "
                    "fence key not evictable (replicas are asynchronous: a failover can still "
                    "lose the fence)", NULL);
    return 1;
}

#ifndef LDL_NO_ASYNC
/* ------------------------------------------------------------ non-blocking view */
#define LDL__REDIS_REQ(ra, i) (&(ra)->_reqs[(i) - 1])

static void ldl__redis_fifo_push(ldl_redis_async *ra, size_t i) {
    LDL__REDIS_REQ(ra, i)->_next = 0;
    if (ra->_tail) LDL__REDIS_REQ(ra, ra->_tail)->_next = i;
    else { ra->_head = i; ra->_progress_ms = ldl__redis_now_ms(&ra->_r); }
    ra->_tail = i;
    if (++ra->_stats.live > ra->_stats.max_live) ra->_stats.max_live = ra->_stats.live;
}

static size_t ldl__redis_fifo_pop(ldl_redis_async *ra) {
    size_t i = ra->_head;
    if (!i) return 0;
    ra->_head = LDL__REDIS_REQ(ra, i)->_next;
    if (!ra->_head) ra->_tail = 0;
    ra->_stats.live--;
    return i;
}

static void ldl__redis_req_free(ldl_redis_async *ra, size_t i) {
    ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
    q->_op = NULL;
    q->_kind = 0;
    q->_next = ra->_free;
    ra->_free = i;
}

/* format request i into the context's output buffer and append it to the FIFO;
   0 or LDL_ESTORE (out of memory) */
static int ldl__redis_queue(ldl_redis_async *ra, size_t i) {
    ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
    ldl__redis_cmd m;
    char text[LDL__REDIS_TEXTMAX];
    size_t n;
    if (ldl__redis_build(&ra->_r, &m, q->_kind, q->_key, q->_token, q->_ttl_ms, q->_owner, q->_nonce,
                         q->_eval) != 0)
        return LDL_EINVAL;
    n = ldl__redis_resp(m.argc, m.argv, m.lens, text, sizeof text);
    if (n == 0 || redisAppendFormattedCommand(ra->_r._c, text, n) != REDIS_OK) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "could not queue the command (out of memory?)", NULL);
        return LDL_ESTORE;
    }
    ldl__redis_fifo_push(ra, i);
    ra->_stats.submitted++;
    return 0;
}

/* an error for request q's op: the router's hook sees it as values first */
static void ldl__redis_tell_error(ldl_redis_async *ra, ldl_redis_req *q) {
    if (q->_op && ra->_on_error) ra->_on_error(ra->_on_error_ctx, q->_op, &ra->_r._err);
}

/* fenced writes (issue 19): their request kind and the two hooks below */
#define LDL__REDIS_FENCE 6
static void ldl__redis_fence_end(ldl_redis_async *ra, size_t i, int rc, redisReply *cmd);
static int ldl__redis_fence_match(ldl_redis_async *ra, size_t i, redisReply *rep);

/* fail the link: every live request answered LDL_ESTORE, the context marked
   failed; answers how many requests of locks were answered */
static int ldl__redis_fail(ldl_redis_async *ra, int kind, const char *why) {
    size_t i;
    int n = 0;
    if (ra->_link == LDL__REDIS_FAILED) return 0;
    ra->_link = LDL__REDIS_FAILED;
    ra->_stats.link_failures++;
    ldl__redis_break(&ra->_r, kind, why);
    while ((i = ldl__redis_fifo_pop(ra)) != 0) {
        ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
        if (q->_kind == LDL__REDIS_FENCE) { ldl__redis_fence_end(ra, i, LDL_ESTORE, NULL); n++; continue; }
        if (q->_op) {
            ldl__redis_tell_error(ra, q);
            ldl_op_complete(q->_op, LDL_ESTORE, 0);
            n++;
        }
        ldl__redis_req_free(ra, i);
    }
    return n;
}

/* a non-blocking context with nothing of anyone else's on it; 0 or LDL_EINVAL (why set) */
static int ldl__redis_async_ctx_ok(ldl_redis *r, redisContext *c) {
    if (!c) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: NULL redisContext", NULL);
        return LDL_EINVAL;
    }
    if (c->flags & REDIS_BLOCK) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: the context is blocking (use redisConnectNonBlock)", NULL);
        return LDL_EINVAL;
    }
    if (!c->err && ((c->obuf && sdslen(c->obuf) > 0) || ldl__redis_unparsed(c) > 0)) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "init: the context has output pending or input unread (a lock "
                       "connection is not shared)", NULL);
        return LDL_EINVAL;
    }
    return 0;
}

LDL_REDIS_API int ldl_redis_async_init(ldl_redis_async *ra, redisContext *c, const char *prefix,
                                       ldl_redis_req *reqs, size_t nreqs) {
    size_t i;
    int rc;
    if (!ra) return LDL_EINVAL;
    memset(ra, 0, sizeof *ra);
    rc = ldl__redis_setup(&ra->_r, c, prefix);
    if (rc != LDL_OK) { ra->_link = LDL__REDIS_FAILED; return rc; }
    ra->_link = LDL__REDIS_FAILED;
    if (!reqs || nreqs == 0 || nreqs >= (size_t)-1 / sizeof *reqs) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_ARG, "init: the request pool is empty", NULL);
        return LDL_EINVAL;
    }
    if (ldl__redis_async_ctx_ok(&ra->_r, c) != 0) return LDL_EINVAL;
    memset(reqs, 0, nreqs * sizeof *reqs);
    ra->_reqs = reqs;
    ra->_nreqs = nreqs;
    for (i = nreqs; i >= 1; i--) ldl__redis_req_free(ra, i);
    if (c->err) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "connection failed before init: ", c->errstr);
        return LDL_OK;                   /* FAILED: pump answers negative until a reconnect */
    }
    ra->_link = LDL__REDIS_CONNECTING;
    return LDL_OK;
}

static int ldl__redis_submit(ldl_redis_async *ra, ldl_op *op, int kind, const char *key,
                             int64_t token, uint32_t ttl_ms, const char *owner) {
    ldl_redis_req *q;
    size_t i, k, on = 0;
    int rc;
    if (!ra || !op || !ra->_reqs) return LDL_EINVAL;
    if (!key || (k = strlen(key)) == 0 || k >= LDL_KEY_MAX || (kind != LDL_OP_RELEASE && ttl_ms == 0)) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_ARG, "bad argument (key empty or too long, ttl 0)", NULL);
        return LDL_EINVAL;
    }
    if (kind == LDL__REDIS_OWNED && !(on = ldl__redis_owner(owner, owner ? strlen(owner) : 0))) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_ARG, "bad owner (1 to LDL_OWNER_MAX-1 bytes, no control bytes)", NULL);
        return LDL_EINVAL;
    }
    if (ra->_link == LDL__REDIS_FAILED || ra->_r._c->err) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "link failed (reconnect it): ", ra->_r._c->errstr);
        return LDL_ESTORE;
    }
    if (!LDL__REDIS_GRANTS(kind) && token < 1) {   /* no lease ever carries it */
        ldl_op_complete(op, 0, 0);
        return LDL_OK;
    }
    i = ra->_free;
    if (!i) {
        ra->_stats.refused_full++;
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_FULL, "request pool full (size it at 2 x locks + a margin)", NULL);
        return LDL_ENOSPC;
    }
    q = LDL__REDIS_REQ(ra, i);
    ra->_free = q->_next;
    q->_kind = kind;
    q->_eval = 0;
    q->_token = token;
    q->_ttl_ms = ttl_ms;
    q->_nonce = ++ra->_r._nonce;
    memcpy(q->_key, key, k + 1);
    if (on) memcpy(q->_owner, owner, on);
    q->_owner[on] = 0;
    rc = ldl__redis_queue(ra, i);
    if (rc != 0) { ldl__redis_req_free(ra, i); return rc; }
    q->_op = op;
    op->store_data = (uintptr_t)i;
    return LDL_OK;
}

static int ldl__redis_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    return ldl__redis_submit((ldl_redis_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL);
}
static int ldl__redis_a_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms, const char *owner) {
    return ldl__redis_submit((ldl_redis_async *)ctx, op, LDL__REDIS_OWNED, key, 0, ttl_ms, owner);
}
static int ldl__redis_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    return ldl__redis_submit((ldl_redis_async *)ctx, op, LDL_OP_RENEW, key, token, ttl_ms, NULL);
}
static int ldl__redis_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    return ldl__redis_submit((ldl_redis_async *)ctx, op, LDL_OP_RELEASE, key, token, 0, NULL);
}

/* detach op: its request still goes out; a grant it brings is released here */
static void ldl__redis_a_cancel(void *ctx, ldl_op *op) {
    ldl_redis_async *ra = (ldl_redis_async *)ctx;
    size_t i;
    if (!ra || !op || !ra->_reqs) return;
    i = (size_t)op->store_data;
    if (i >= 1 && i <= ra->_nreqs && LDL__REDIS_REQ(ra, i)->_op == op) LDL__REDIS_REQ(ra, i)->_op = NULL;
}

LDL_REDIS_API ldl_async_store ldl_redis_async_store(ldl_redis_async *ra) {
    ldl_async_store s;
    s.acquire = ldl__redis_a_acquire;
    s.renew = ldl__redis_a_renew;
    s.release = ldl__redis_a_release;
    s.cancel = ldl__redis_a_cancel;
    s.ctx = ra;
    return s;
}

LDL_REDIS_API ldl_store_ext ldl_redis_async_ext(ldl_redis_async *ra) {
    ldl_store_ext x;
    x.acquire_owned = NULL;
    x.submit_owned = ldl__redis_a_owned;
    x.inspect = NULL;
    x.ctx = ra;
    return x;
}

/* one reply for the head of the FIFO; 1 answered, 0 sent again, negative: fail the link */
static int ldl__redis_match(ldl_redis_async *ra, redisReply *rep) {
    size_t i = ra->_head;
    ldl_redis_req *q;
    int64_t tok = 0;
    int rc;
    if (!i) { ldl__redis_say(&ra->_r, LDL_REDIS_ERR_PROTOCOL, "a reply nobody asked for: link dropped", NULL); return -1; }
    q = LDL__REDIS_REQ(ra, i);
    if (q->_kind == LDL__REDIS_FENCE) return ldl__redis_fence_match(ra, i, rep);
    if (rep->type == REDIS_REPLY_ERROR) {
        if (!q->_eval && rep->str && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
            ldl__redis_fifo_pop(ra);     /* the same request again, as EVAL, at the tail */
            q->_eval = 1;
            ra->_stats.noscript++;
            if (ldl__redis_queue(ra, i) != 0) {
                if (q->_op) ldl_op_complete(q->_op, LDL_ESTORE, 0);
                ldl__redis_req_free(ra, i);
            }
            return 0;
        }
        ldl__redis_server_error(&ra->_r, rep->str);
        ldl__redis_tell_error(ra, q);
        rc = LDL_ESTORE;
    } else {
        rc = ldl__redis_judge(rep, q->_kind, q->_nonce, &tok, &ra->_r);
        if (rc == LDL__REDIS_OOS) {
            ldl__redis_say(&ra->_r, LDL_REDIS_ERR_PROTOCOL, "reply out of step (wrong type or nonce): link dropped", NULL);
            return -1;
        }
        if (rc == LDL_ESTORE) ldl__redis_say(&ra->_r, LDL_REDIS_ERR_PROTOCOL, LDL__REDIS_MALFORMED, NULL);
    }
    ldl__redis_fifo_pop(ra);
    ra->_stats.answered++;
    if (q->_op) {
        ldl_op_complete(q->_op, rc, rc == 1 ? tok : 0);
        ldl__redis_req_free(ra, i);
    } else if (LDL__REDIS_GRANTS(q->_kind) && rc == 1) {
        /* a cancelled grant: release it with its token, in the same slot */
        q->_kind = LDL_OP_RELEASE;
        q->_eval = 0;
        q->_token = tok;
        q->_nonce = ++ra->_r._nonce;
        ra->_stats.handed_back++;
        if (ldl__redis_queue(ra, i) != 0) ldl__redis_req_free(ra, i);
    } else {
        ldl__redis_req_free(ra, i);
    }
    return 1;
}

/* write what is queued until done or the socket is full; 0 or -1 (failed) */
static int ldl__redis_flush(ldl_redis_async *ra) {
    redisContext *c = ra->_r._c;
    int n;
    for (n = 0; n < 16 && c->obuf && sdslen(c->obuf) > 0; n++) {
        size_t before = sdslen(c->obuf);
        int done = 0;
        ra->_stats.write_calls++;
        if (redisBufferWrite(c, &done) != REDIS_OK) {
            ldl__redis_fail(ra, LDL_REDIS_ERR_IO, c->errstr[0] ? c->errstr : "write failed");
            return -1;
        }
        if (done || sdslen(c->obuf) == before) break;   /* all out, or the socket is full */
    }
    return 0;
}

static int ldl__redis_read(ldl_redis_async *ra);

LDL_REDIS_API int ldl_redis_async_pump(ldl_redis_async *ra) {
    redisContext *c;
    ldl__redis_hooked h;
    int answered;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    c = ra->_r._c;
    if (ra->_link == LDL__REDIS_FAILED) return LDL_ESTORE;
    if (c->err) { ldl__redis_fail(ra, LDL_REDIS_ERR_IO, c->errstr); return LDL_ESTORE; }
    if (ra->_link == LDL__REDIS_CONNECTING) {
        struct pollfd p;
        int err = 0;
        socklen_t len = sizeof err;
        p.fd = c->fd; p.events = POLLOUT; p.revents = 0;
        if (poll(&p, 1, 0) < 0) { if (errno == EINTR) return 0; ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "poll failed"); return LDL_ESTORE; }
        if (!p.revents) return 0;                          /* still connecting */
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "connect failed: ", strerror(err ? err : errno));
            ldl__redis_fail(ra, LDL_REDIS_ERR_IO, ra->_r._why);
            return LDL_ESTORE;
        }
        ra->_link = LDL__REDIS_UP;
    }
    if (ldl__redis_flush(ra) != 0) return LDL_ESTORE;
    ldl__redis_hook(&ra->_r, &h);
    answered = ldl__redis_read(ra);
    ldl__redis_unhook(&h);
    if (answered < 0) return LDL_ESTORE;
    /* EVAL retries and releases of cancelled grants queued while reading */
    if (ldl__redis_flush(ra) != 0) return LDL_ESTORE;
    return answered;
}

/* read what arrived and complete what was answered; answers or -1 (failed) */
static int ldl__redis_read(ldl_redis_async *ra) {
    redisContext *c = ra->_r._c;
    char buf[16384];
    int answered = 0, reads;
    for (reads = 0; reads < LDL_REDIS_PUMP_READS; reads++) {
        ssize_t nr = read(c->fd, buf, sizeof buf);
        void *rep = NULL;
        ra->_stats.read_calls++;
        if (nr < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "read failed: ", strerror(errno));
            ldl__redis_fail(ra, LDL_REDIS_ERR_IO, ra->_r._why);
            return LDL_ESTORE;
        }
        if (nr == 0) { ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "the server closed the connection"); return LDL_ESTORE; }
        ra->_r._refused = 0;
        if (redisReaderFeed(c->reader, buf, (size_t)nr) != REDIS_OK) {
            ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "out of memory reading replies");
            return LDL_ESTORE;
        }
        for (;;) {
            int m;
            if (redisReaderGetReply(c->reader, &rep) != REDIS_OK) {
                ldl__redis_reader_why(&ra->_r, c->reader->errstr);
                ldl__redis_fail(ra, ra->_r._err.kind, ra->_r._why);
                return LDL_ESTORE;
            }
            if (!rep) break;
            m = ldl__redis_match(ra, (redisReply *)rep);
            freeReplyObject(rep);
            if (m < 0) { ldl__redis_fail(ra, LDL_REDIS_ERR_PROTOCOL, ra->_r._why); return LDL_ESTORE; }
            answered += m;
        }
        if (answered) ra->_progress_ms = ldl__redis_now_ms(&ra->_r);
        if (ldl__redis_unparsed(c) > LDL_REDIS_REPLY_MAX) {
            ldl__redis_fail(ra, LDL_REDIS_ERR_PROTOCOL, "reply larger than LDL_REDIS_REPLY_MAX: link dropped");
            return LDL_ESTORE;
        }
        if ((size_t)nr < sizeof buf) break;               /* drained */
    }
    return answered;
}

LDL_REDIS_API int ldl_redis_async_fd(const ldl_redis_async *ra, int *events) {
    const redisContext *c;
    int ev = 0;
    if (events) *events = 0;
    if (!ra || !ra->_reqs || ra->_link == LDL__REDIS_FAILED || ra->_r._c->err) return -1;
    c = ra->_r._c;
    if (ra->_link == LDL__REDIS_CONNECTING) ev = LDL_WANT_WRITE;
    else ev = LDL_WANT_READ | ((c->obuf && sdslen(c->obuf) > 0) ? LDL_WANT_WRITE : 0);
    if (events) *events = ev;
    return c->fd;
}

LDL_REDIS_API const char *ldl_redis_async_why(const ldl_redis_async *ra) {
    return ra ? ra->_r._why : "NULL adapter";
}

LDL_REDIS_API uint32_t ldl_redis_async_stalled_ms(const ldl_redis_async *ra) {
    uint64_t d;
    if (!ra || !ra->_head) return 0;
    d = ldl__redis_now_ms(&ra->_r) - ra->_progress_ms;
    return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

LDL_REDIS_API void ldl_redis_async_fail(ldl_redis_async *ra, const char *why) {
    if (!ra || !ra->_reqs) return;
    ldl__redis_fail(ra, LDL_REDIS_ERR_IO, why ? why : "link dropped by the program");
}

LDL_REDIS_API int ldl_redis_async_drop(ldl_redis_async *ra) {
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    return ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "link dropped by the program");
}

LDL_REDIS_API int ldl_redis_async_rebind(ldl_redis_async *ra, redisContext *c) {
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    if (ldl__redis_async_ctx_ok(&ra->_r, c) != 0) return LDL_EINVAL;
    ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "link dropped for a rebind");
    ra->_r._c = c;
    if (c->err) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "rebind: the new connection has failed: ", c->errstr);
        return LDL_OK;                   /* FAILED, as init: pump answers negative */
    }
    ra->_link = LDL__REDIS_CONNECTING;
    return LDL_OK;
}

LDL_REDIS_API const ldl_redis_error *ldl_redis_async_last_error(const ldl_redis_async *ra) {
    return ldl_redis_last_error(ra ? &ra->_r : NULL);
}

LDL_REDIS_API void ldl_redis_async_set_clock(ldl_redis_async *ra, ldl_clock clock) {
    if (ra) ra->_r._clock = clock;
}

LDL_REDIS_API void ldl_redis_async_set_epoch_fences(ldl_redis_async *ra, int on) {
    if (ra) ra->_r._epoch = on != 0;
}

LDL_REDIS_API void ldl_redis_async_on_error(ldl_redis_async *ra,
                                            void (*fn)(void *ctx, ldl_op *op, const ldl_redis_error *e),
                                            void *ctx) {
    if (!ra) return;
    ra->_on_error = fn;
    ra->_on_error_ctx = ctx;
}

LDL_REDIS_API int ldl_redis_async_reconnect(ldl_redis_async *ra) {
    redisContext *c;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    c = ra->_r._c;
    ldl__redis_fail(ra, LDL_REDIS_ERR_IO, "link dropped for a reconnect");
    if (redisReconnect(c) != REDIS_OK || c->err) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "reconnect failed: ", c->errstr);
        return LDL_ESTORE;
    }
    ra->_link = LDL__REDIS_CONNECTING;
    return LDL_OK;
}

LDL_REDIS_API const ldl_redis_stats *ldl_redis_async_stats(const ldl_redis_async *ra) {
    return ra ? &ra->_stats : NULL;
}
#endif /* LDL_NO_ASYNC */

/* ------------------------------------------------------------ fenced writes (issue 19, decision 0110)
   KEYS[1] the mark, KEYS[2..] the command's keys; ARGV[1] the nonce, ARGV[2]
   the fence (canonical decimal), ARGV[3..] the command. Fences are compared
   as decimal text (length, then bytes): Lua numbers are doubles and would
   round fences above 2^53. The order is the point: compare, then the
   command under pcall, and the mark is raised only after the command
   succeeded -- a failing command can never leave a raised mark (a script is
   not rolled back). The ACL check comes before the command, so that the
   final SET cannot be refused after the command has written. */
static const char ldl__redis_fence_lua[] =
    "local n, f = ARGV[1], ARGV[2]\n"
    "local m = redis.call('GET', KEYS[1])\n"
    "if m then\n"
    "  if #m > 19 or not string.match(m, '^[1-9][0-9]*$') or (#m == 19 and m > '9223372036854775807') then\n"
    "    return redis.error_reply('ERR ldl: the fence mark holds no fence value')\n"
    "  end\n"
    "  if #m > #f or (#m == #f and m > f) then return {n, 0} end\n"
    "end\n"
    "if m ~= f and redis.acl_check_cmd and not redis.acl_check_cmd('SET', KEYS[1], f) then\n"
    "  return redis.error_reply('NOPERM ldl: this user may not SET the fence mark')\n"
    "end\n"
    "local r = redis.pcall(unpack(ARGV, 3))\n"
    "if type(r) == 'table' and r.err then return {n, -1, r} end\n"
    "if m ~= f then redis.call('SET', KEYS[1], f) end\n"
    "return {n, 1, r}\n";
static const char ldl__redis_fence_sha[] = "b8da3b84bd1d6f5fe7e2a2581d0121bbd82c3680";

#define LDL__REDIS_MARKBUF (LDL_REDIS_FENCE_NAME_MAX + LDL_REDIS_PREFIX_MAX + 9)
/* room in front of a request's tail for its header (the EVAL form is the longest) */
#define LDL__REDIS_FX_HEAD (sizeof ldl__redis_fence_lua + 64)

/* one fenced write's request: everything after the script name, RESP-formatted
   once at submit, kept until answered (the NOSCRIPT retry sends it again) */
typedef struct ldl__redis_fx {
    ldl_redis_fence_fn fn;          /* non-blocking view: the completion */
    void              *ctx;
    uint64_t           nonce;
    size_t             argc;        /* arguments of the whole EVAL / EVALSHA command */
    size_t             len;         /* bytes of the tail */
    char              *buf;         /* LDL__REDIS_FX_HEAD bytes of room, then the tail */
} ldl__redis_fx;

#ifndef LDL_NO_ASYNC
/* a fenced write's request lives in its pool slot's _key bytes (unused by that kind),
   so the slot keeps its size */
typedef char ldl__redis_check_fx[sizeof(ldl__redis_fx *) <= LDL_KEY_MAX ? 1 : -1];
static ldl__redis_fx *ldl__redis_fx_of(const ldl_redis_req *q) {
    ldl__redis_fx *fx;
    memcpy(&fx, q->_key, sizeof fx);
    return fx;
}
static void ldl__redis_fx_set(ldl_redis_req *q, ldl__redis_fx *fx) { memcpy(q->_key, &fx, sizeof fx); }
#endif

/* the length of a resource name, 0 when it is not one (NULL, empty, too long) */
static size_t ldl__redis_resource(const char *res) {
    size_t k = 0;
    if (!res) return 0;
    while (k < LDL_REDIS_FENCE_NAME_MAX && res[k]) k++;
    return k < LDL_REDIS_FENCE_NAME_MAX ? k : 0;
}

/* "{R}:P:mark" into buf[cap]; its length, 0 on a bad resource or a buffer too small */
static size_t ldl__redis_mark(const ldl_redis *r, const char *res, char *buf, size_t cap) {
    size_t k = ldl__redis_resource(res), n = 0;
    if (!k || !buf || cap < k + r->_plen + 9) return 0;
    buf[n++] = '{';
    memcpy(buf + n, res, k); n += k;
    buf[n++] = '}'; buf[n++] = ':';
    memcpy(buf + n, r->_prefix, r->_plen); n += r->_plen;
    memcpy(buf + n, ":mark", 5); n += 5;
    buf[n] = 0;
    return n;
}

LDL_REDIS_API size_t ldl_redis_fence_mark(const ldl_redis *r, const char *resource, char *buf, size_t n) {
    size_t k;
    if (buf && n) buf[0] = 0;
    if (!r) return 0;
    k = ldl__redis_mark(r, resource, buf, n);
    if (!k && buf && n) buf[0] = 0;
    return k;
}

/* one RESP bulk string into out; its length */
static size_t ldl__redis_bulk(char *out, const char *s, size_t len) {
    size_t n = 0;
    out[n++] = '$';
    n += ldl__redis_u64((uint64_t)len, out + n);
    out[n++] = '\r'; out[n++] = '\n';
    if (len) memcpy(out + n, s, len);
    n += len;
    out[n++] = '\r'; out[n++] = '\n';
    return n;
}

/* the command's k-th key index (keyidx NULL: k + 1) */
static int ldl__redis_keyidx(const int *keyidx, int k) { return keyidx ? keyidx[k] : k + 1; }

/* Check a fenced write's arguments: 0, with the mark in mark[LDL__REDIS_MARKBUF]
   (*mlenp), each argument's length in lens[] and the tail's size bound in *totalp;
   or LDL_EINVAL, why set. */
static int ldl__redis_fx_check(ldl_redis *r, const char *resource, int64_t fence, int nkeys,
                               const int *keyidx, int argc, const char **argv, const size_t *argvlen,
                               char *mark, size_t *mlenp, size_t *lens, size_t *totalp) {
    size_t mlen, total;
    int a, k;
    if (!(mlen = ldl__redis_mark(r, resource, mark, LDL__REDIS_MARKBUF))) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: the resource name must be 1 to "
                       "LDL_REDIS_FENCE_NAME_MAX-1 bytes (nothing sent)", NULL);
        return LDL_EINVAL;
    }
    if (fence < 1) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: the fence must be >= 1 (a token; nothing sent)", NULL);
        return LDL_EINVAL;
    }
    if (!argv || argc < 1 || argc > LDL_REDIS_FENCE_ARGS || nkeys < 0 || nkeys > argc - 1) {
        ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: argc must be 1 to LDL_REDIS_FENCE_ARGS and nkeys 0 to "
                       "argc-1 (nothing sent)", NULL);
        return LDL_EINVAL;
    }
    total = 0;
    for (a = 0; a < argc; a++) {
        if (!argv[a]) {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: a NULL argument (nothing sent)", NULL);
            return LDL_EINVAL;
        }
        lens[a] = argvlen ? argvlen[a] : strlen(argv[a]);
        if (lens[a] > ((size_t)1 << 29) || (a == 0 && lens[a] == 0)) {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: an empty command name or an argument over 512 MiB "
                           "(nothing sent)", NULL);
            return LDL_EINVAL;
        }
        if (lens[a] + 32 > ((size_t)-1 - LDL__REDIS_FX_HEAD) / 4 - total) {   /* 32-bit size_t */
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: the command is too large to send (nothing sent)", NULL);
            return LDL_EINVAL;
        }
        total += lens[a] + 32;
    }
    for (k = 0; k < nkeys; k++) {
        int i = ldl__redis_keyidx(keyidx, k);
        if (i < 1 || i >= argc) {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: a key index outside 1..argc-1 (nothing sent)", NULL);
            return LDL_EINVAL;
        }
        if (lens[i] == mlen && memcmp(argv[i], mark, mlen) == 0) {
            ldl__redis_say(r, LDL_REDIS_ERR_ARG, "fence: the command names the fence mark itself as a key "
                           "(nothing sent)", NULL);
            return LDL_EINVAL;
        }
        total += lens[i] + 32;
    }
    *mlenp = mlen;
    *totalp = total;
    return 0;
}

/* Check the arguments (ldl__redis_fx_check) and format the request's tail
   (numkeys, the mark, the keys, nonce, fence, the command) into a new
   ldl__redis_fx (malloc). 0, or LDL_EINVAL (why set, nothing allocated) or
   LDL_ESTORE (out of memory). */
static int ldl__redis_fx_build(ldl_redis *r, const char *resource, int64_t fence, int nkeys,
                               const int *keyidx, int argc, const char **argv, const size_t *argvlen,
                               uint64_t nonce, ldl__redis_fx **out) {
    char mark[LDL__REDIS_MARKBUF], fen[24], hex[17], *p;
    size_t mlen, total, lens[LDL_REDIS_FENCE_ARGS], fl;
    ldl__redis_fx *fx;
    int a, k, rc;
    *out = NULL;
    rc = ldl__redis_fx_check(r, resource, fence, nkeys, keyidx, argc, argv, argvlen, mark, &mlen, lens, &total);
    if (rc) return rc;
    total += mlen + 32 + 3 * 64;             /* the mark; numkeys, nonce, fence (25 bytes of framing each) */
    fx = (ldl__redis_fx *)malloc(sizeof *fx + LDL__REDIS_FX_HEAD + total);
    if (!fx) {
        ldl__redis_say(r, LDL_REDIS_ERR_IO, "fence: out of memory", NULL);
        return LDL_ESTORE;
    }
    fx->fn = NULL;
    fx->ctx = NULL;
    fx->nonce = nonce;
    fx->argc = (size_t)(2 + 1 + 1 + nkeys + 2 + argc);
    fx->buf = (char *)(fx + 1);
    p = fx->buf + LDL__REDIS_FX_HEAD;
    fl = ldl__redis_u64((uint64_t)(1 + nkeys), fen);
    p += ldl__redis_bulk(p, fen, fl);
    p += ldl__redis_bulk(p, mark, mlen);
    for (k = 0; k < nkeys; k++) {
        int i = ldl__redis_keyidx(keyidx, k);
        p += ldl__redis_bulk(p, argv[i], lens[i]);
    }
    ldl__redis_hex(nonce, hex);
    p += ldl__redis_bulk(p, hex, 16);
    fl = ldl__redis_u64((uint64_t)fence, fen);
    p += ldl__redis_bulk(p, fen, fl);
    for (a = 0; a < argc; a++) p += ldl__redis_bulk(p, argv[a], lens[a]);
    fx->len = (size_t)(p - (fx->buf + LDL__REDIS_FX_HEAD));
    *out = fx;
    return 0;
}

/* the header (EVALSHA sha, or EVAL script) written just in front of the tail;
   answers where the whole command starts, its length in *n */
static const char *ldl__redis_fx_text(ldl__redis_fx *fx, int eval, size_t *n) {
    char head[LDL__REDIS_FX_HEAD];
    size_t h = 0;
    head[h++] = '*';
    h += ldl__redis_u64((uint64_t)fx->argc, head + h);
    head[h++] = '\r'; head[h++] = '\n';
    if (eval) {
        h += ldl__redis_bulk(head + h, "EVAL", 4);
        h += ldl__redis_bulk(head + h, ldl__redis_fence_lua, sizeof ldl__redis_fence_lua - 1);
    } else {
        h += ldl__redis_bulk(head + h, "EVALSHA", 7);
        h += ldl__redis_bulk(head + h, ldl__redis_fence_sha, 40);
    }
    memcpy(fx->buf + LDL__REDIS_FX_HEAD - h, head, h);
    *n = h + fx->len;
    return fx->buf + LDL__REDIS_FX_HEAD - h;
}

/* Judge a fenced write's script reply (not an error reply): 1 (*cmd = the
   command's reply, detached from rep), 0 stale, -1 the command's own error
   (*cmd = that error reply), LDL__REDIS_OOS (shape or nonce: out of step),
   LDL_ESTORE (ours, but malformed). */
static int ldl__redis_fx_judge(redisReply *rep, uint64_t nonce, redisReply **cmd) {
    char want[17];
    const redisReply *v;
    *cmd = NULL;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 2 || rep->elements > 3) return LDL__REDIS_OOS;
    ldl__redis_hex(nonce, want);
    if (rep->element[0]->type != REDIS_REPLY_STRING || rep->element[0]->len != 16 ||
        memcmp(rep->element[0]->str, want, 16) != 0) return LDL__REDIS_OOS;
    v = rep->element[1];
    if (v->type != REDIS_REPLY_INTEGER) return LDL_ESTORE;
    if (rep->elements == 2) return v->integer == 0 ? 0 : LDL_ESTORE;
    if (v->integer == 1 || (v->integer == -1 && rep->element[2]->type == REDIS_REPLY_ERROR)) {
        *cmd = rep->element[2];
        rep->element[2] = NULL;                 /* detached: freeReplyObject skips NULL */
        return v->integer == 1 ? 1 : -1;
    }
    return LDL_ESTORE;
}

/* the command failed inside the script: its text as the why, kind COMMAND */
static void ldl__redis_fx_cmd_error(ldl_redis *r, const redisReply *cmd) {
    ldl__redis_say(r, LDL_REDIS_ERR_COMMAND, "fence: the command failed, the mark did not move: ",
                   cmd && cmd->str ? cmd->str : "");
}

LDL_REDIS_API int ldl_redis_fence(ldl_redis *r, const char *resource, int64_t fence,
                                  int nkeys, const int *keyidx, int argc, const char **argv,
                                  const size_t *argvlen, redisReply **reply_out) {
    ldl__redis_fx *fx = NULL;
    redisReply *rep, *cmd = NULL;
    int eval, rc = LDL_ESTORE;
    if (reply_out) *reply_out = NULL;
    if (!r) return LDL_EINVAL;
    r->_err.kind = LDL_REDIS_ERR_NONE;
    rc = ldl__redis_fx_build(r, resource, fence, nkeys, keyidx, argc, argv, argvlen, ++r->_nonce, &fx);
    if (rc != 0) return rc;
    rc = LDL_ESTORE;
    for (eval = 0; eval < 2; eval++) {
        size_t n;
        const char *text = ldl__redis_fx_text(fx, eval, &n);
        if (r->_asking && ldl__redis_asking(r) != 0) break;       /* Cluster view under ASK */
        rep = ldl__redis_roundtrip_text(r, NULL, text, n, "the reply took longer than the call's time limit "
                                        "(the write's fate is unknown): connection dropped");
        if (!rep) break;
        if (rep->type == REDIS_REPLY_ERROR) {
            int noscript = !eval && rep->str && strncmp(rep->str, "NOSCRIPT", 8) == 0;
            if (!noscript) ldl__redis_server_error(r, rep->str);
            freeReplyObject(rep);
            if (noscript) continue;                                /* it did not run: send as EVAL */
            break;
        }
        rc = ldl__redis_fx_judge(rep, fx->nonce, &cmd);
        freeReplyObject(rep);
        if (rc == LDL__REDIS_OOS) {
            ldl__redis_break(r, LDL_REDIS_ERR_PROTOCOL, "reply out of step (wrong type or nonce: someone else's "
                             "reply?): connection dropped");
            rc = LDL_ESTORE;
        } else if (rc == -1) {
            ldl__redis_fx_cmd_error(r, cmd);
            rc = LDL_ESTORE;
        } else if (rc == LDL_ESTORE) {
            ldl__redis_say(r, LDL_REDIS_ERR_PROTOCOL, "fence: malformed answer", NULL);
        }
        break;
    }
    free(fx);
    if (cmd) {
        if (reply_out) *reply_out = cmd;
        else freeReplyObject(cmd);
    }
    return rc;
}

#ifndef LDL_NO_ASYNC
/* format request i (a fenced write) into the output buffer and append it to the FIFO */
static int ldl__redis_fx_queue(ldl_redis_async *ra, size_t i) {
    ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
    size_t n;
    const char *text = ldl__redis_fx_text(ldl__redis_fx_of(q), q->_eval, &n);
    if (redisAppendFormattedCommand(ra->_r._c, text, n) != REDIS_OK) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "could not queue the command (out of memory?)", NULL);
        return LDL_ESTORE;
    }
    ldl__redis_fifo_push(ra, i);
    ra->_stats.submitted++;
    return 0;
}

/* request i (a fenced write, already out of the FIFO) is done: free its slot,
   then tell its owner (which may submit again) */
static void ldl__redis_fence_end(ldl_redis_async *ra, size_t i, int rc, redisReply *cmd) {
    ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
    ldl__redis_fx *fx = ldl__redis_fx_of(q);
    ldl_redis_fence_fn fn = fx ? fx->fn : NULL;
    void *ctx = fx ? fx->ctx : NULL;
    ldl__redis_fx_set(q, NULL);
    free(fx);
    ldl__redis_req_free(ra, i);
    if (fn) fn(ctx, rc, cmd);
    else if (cmd) freeReplyObject(cmd);
}

/* the reply for the head of the FIFO, a fenced write: 1 answered, -1 out of
   step (the caller fails the link, which answers this request too). A
   NOSCRIPT is an answer (LDL_ESTORE: it did not run): sending it again now
   would put it behind writes submitted after it; the next submit goes as EVAL. */
static int ldl__redis_fence_match(ldl_redis_async *ra, size_t i, redisReply *rep) {
    ldl_redis_req *q = LDL__REDIS_REQ(ra, i);
    redisReply *cmd = NULL;
    int rc;
    if (rep->type == REDIS_REPLY_ERROR) {
        if (rep->str && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
            ra->_fx_gen = 0;
            ra->_stats.noscript++;
            ldl__redis_say(&ra->_r, LDL_REDIS_ERR_SERVER, "fence: NOSCRIPT (the server's script cache was emptied): "
                           "this write did not run, nothing changed; submit it again", NULL);
        } else {
            ldl__redis_server_error(&ra->_r, rep->str);
        }
        rc = LDL_ESTORE;
    } else {
        rc = ldl__redis_fx_judge(rep, q->_nonce, &cmd);
        if (rc == LDL__REDIS_OOS) {
            ldl__redis_say(&ra->_r, LDL_REDIS_ERR_PROTOCOL, "reply out of step (wrong type or nonce): link dropped", NULL);
            return -1;
        }
        if (rc == -1) { ldl__redis_fx_cmd_error(&ra->_r, cmd); rc = LDL_ESTORE; }
        else if (rc == LDL_ESTORE) ldl__redis_say(&ra->_r, LDL_REDIS_ERR_PROTOCOL, "fence: malformed answer", NULL);
    }
    ldl__redis_fifo_pop(ra);
    ra->_stats.answered++;
    ldl__redis_fence_end(ra, i, rc, cmd);
    return 1;
}

LDL_REDIS_API int ldl_redis_async_fence(ldl_redis_async *ra, const char *resource, int64_t fence,
                                        int nkeys, const int *keyidx, int argc, const char **argv,
                                        const size_t *argvlen, ldl_redis_fence_fn done, void *ctx) {
    ldl__redis_fx *fx = NULL;
    ldl_redis_req *q;
    size_t i;
    int rc;
    if (!ra || !ra->_reqs) return LDL_EINVAL;
    if (!done) {
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_ARG, "fence: NULL completion (nothing sent)", NULL);
        return LDL_EINVAL;
    }
    rc = ldl__redis_fx_build(&ra->_r, resource, fence, nkeys, keyidx, argc, argv, argvlen, ra->_r._nonce + 1, &fx);
    if (rc != 0) return rc;
    if (ra->_link == LDL__REDIS_FAILED || ra->_r._c->err) {
        free(fx);
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_IO, "link failed (reconnect it): ", ra->_r._c->errstr);
        return LDL_ESTORE;
    }
    if (!(i = ra->_free)) {
        free(fx);
        ra->_stats.refused_full++;
        ldl__redis_say(&ra->_r, LDL_REDIS_ERR_FULL, "request pool full (size it at 2 x locks + a margin)", NULL);
        return LDL_ENOSPC;
    }
    ra->_r._nonce++;
    fx->fn = done;
    fx->ctx = ctx;
    q = LDL__REDIS_REQ(ra, i);
    ra->_free = q->_next;
    q->_op = NULL;
    q->_kind = LDL__REDIS_FENCE;
    q->_nonce = fx->nonce;
    ldl__redis_fx_set(q, fx);
    /* the first fenced write on each link goes as EVAL (caching the script
       before the EVALSHAs pipelined behind it run) */
    q->_eval = ra->_fx_gen != ra->_stats.link_failures + 1;
    if (ldl__redis_fx_queue(ra, i) != 0) {
        ldl__redis_fx_set(q, NULL);
        free(fx);
        ldl__redis_req_free(ra, i);
        return LDL_ESTORE;
    }
    if (q->_eval) ra->_fx_gen = ra->_stats.link_failures + 1;
    return LDL_OK;
}
#endif /* LDL_NO_ASYNC */

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_C */
#endif /* LDL_REDIS_IMPLEMENTATION */

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
