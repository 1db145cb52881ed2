/* lite_di_lock_etcd.h -- etcd store for lite_di_lock.h (needs libcurl and cJSON).

   Lease locks with fencing tokens on etcd (v3 API, 3.4 or later), spoken
   through etcd's JSON gateway over HTTP: a Raft log under the lock, so a
   grant survives the loss of any minority of members, leader changes and
   restarts. Two views of one adapter:

     ldl_etcd         synchronous (ldl_store): one libcurl easy handle, each
                      call a few HTTP exchanges, every call bounded in time.
     ldl_etcd_async   non-blocking (ldl_async_store, core v0.2): requests of
                      many locks in flight at once on one libcurl multi
                      handle, driven by a pump the program calls every frame.
                      Nothing in it ever waits.

   QUICK START (synchronous)

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_ETCD_IMPLEMENTATION
       #include "adapters/lite_di_lock_etcd.h"

       ldl_etcd_config cfg;
       memset(&cfg, 0, sizeof cfg);
       cfg.endpoints = "http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379";
       ldl_etcd e;
       if (ldl_etcd_init(&e, &cfg) != LDL_OK) puts(ldl_etcd_why(&e));
       ldl_store store = ldl_etcd_store(&e);
       desc.store = &store;              (the lock copies the struct)
       ... ldl_lock_init(&lock, &desc); ldl_lock_acquire(&lock); ...
       ldl_etcd_close(&e);               (after the last lock using it is disposed)

   QUICK START (non-blocking, many locks on one multi handle)

       static ldl_etcd_req reqs[2 * NLOCKS + 16];
       ldl_etcd_async ea;
       ldl_etcd_async_init(&ea, &e, reqs, sizeof reqs / sizeof reqs[0]);
       ldl_async_store as = ldl_etcd_async_store(&ea);
       desc.async_store = &as;  desc.store = NULL;   (timers all-zero)
       each frame:  ldl_etcd_async_pump(&ea);  then ldl_lock_poll(&lock[i]) ...
       a loop that sleeps: ldl_etcd_async_wait(&ea, ms) (curl_multi_poll), or
       sleep at most ldl_etcd_async_timeout_ms(&ea)
       ldl_etcd_async_close(&ea);  ldl_etcd_close(&e);

   Link with -lcurl -lcjson (Debian: libcurl4-openssl-dev, libcjson-dev;
   decision 1002).
   Call curl_global_init(CURL_GLOBAL_DEFAULT) once at program start, before
   any thread exists (libcurl's rule; init does it too if nobody did).

   THE MAPPING (decision 1001). Lock key K is the etcd key PREFIX + K (prefix
   default "ldl/"; base64 on the wire, so any byte of K is fine).
     acquire(K, ttl)  POST /v3/lease/grant TTL = ceil(ttl_ms / 1000) s (a
                grant with a shorter TTL is LDL_ESTORE and is revoked); then
                ONE POST /v3/kv/txn: if create_revision(key) == 0, put key
                (value = the owner, "" without one) with that lease, then
                range key; else range key. Fence = the key's create_revision:
                etcd's revision rises cluster-wide with
                every write and is kept in the WAL, so the fence rises per key
                across holders, leader changes and restarts. A success reply
                is a grant only with its PROOF (decision 1010): exactly [put,
                range], the range showing key K carrying THIS call's fresh
                lease with create_revision == mod_revision == the reply's
                header revision and version 1 -- a reply that does not answer
                this request (a canned "succeeded", another key or lease, an
                older key) is LDL_ESTORE and the lease is revoked. If the compare
                failed: when the key's lease is OUR fresh lease (an earlier
                attempt of this same call committed, its answer was lost), it
                is our grant with fence = its create_revision; otherwise the
                answer is 0 and the fresh lease is revoked.
     renew(K, fence, ttl)  range key: its create_revision must be the fence
                and it must carry a lease; then POST /v3/lease/keepalive of
                THAT lease: 1 only if the lease is alive with a TTL (seconds)
                covering ttl_ms; 0 when the key is gone, carries another
                fence, or the lease is gone or too short.
     release(K, fence)  ONE txn: if create_revision(key) == fence, range key
                and delete it (1), else nothing (0); then revoke the lease
                the range named (its failure changes nothing: the key is gone
                and the lease runs out by itself).
     fenced write  ldl_etcd_fenced(e, &w): ONE txn: if create_revision(PREFIX +
                w.key) == w.fence, range it and put (or delete) w.target;
                else range it. 1 written, 0 refused (the key is gone or holds
                another fence: a stale holder), negative on error. The reply
                is proved like the acquire's (decision 1012).
   The lease id lives only in etcd (the key's lease field): the adapter keeps
   no table, so any process (another ldl_etcd, the lock's hand-back of a
   cancelled grant) can renew or release a lease by key and fence alone.

   SESSIONS (opt-in: cfg.session_ms; decision 1013). A lock whose ttl_ms equals
   cfg.session_ms puts its key on ONE lease per view instead of a lease of its
   own; any other lock on the same view keeps its own lease. The session lease
   (TTL = session_ms rounded up to seconds) is granted by the first session
   acquire and revoked by ldl_etcd_close / ldl_etcd_async_close (every key on it
   goes with it).
     acquire    the same proved txn, with the session lease (no grant, no revoke:
                a lost race answers 0 and revokes nothing; a compare failure whose
                key carries the session lease after an attempt that may have
                committed is LDL_ESTORE, never a grant -- that key is left to the
                session). Unless this acquire granted the lease, a keepalive and
                the quorum read follow the put before a grant is answered (an older
                lease's expiry may be close); if they fail the key is deleted and
                the answer is LDL_ESTORE)
     renew      no range of the key: a key on the live session lease is ours (the
                ACL of docs/etcd.md: only our role writes the prefix). A fence not
                above the session lease's grant revision is 0 (a key of an ended
                session). Non-blocking view: the renew WAITS for the next keepalive
                the pump starts -- one started before the submit never answers it --
                and every renew waiting then rides that one keepalive, followed by a
                linearizable read on the same member (a quorum behind the member that
                renewed; etcd 3.4.23's cut-off leader answers keepalives); a renew
                takes no ldl_etcd_req (its op waits in a list). A lease found gone
                answers every session renew 0 and the next acquire grants a new one.
                Synchronous view: per call, the keepalive and the quorum read.
     release    the same fenced delete txn; the session lease is never revoked by it.
   Stats: keepalives, session_renews, session_grants.

   THE MINIMUM TTL. etcd raises a lease shorter than its minimum (1.5 x the
   election timeout, rounded up to whole seconds: 2 s with the default 1000
   ms) and checks for expired leases every 500 ms. The lock itself trusts
   its lease only for ttl_ms - drift from the start of the call, so this is
   the safe side; its cost is paid by a CONTENDER: after a holder dies, the
   key stays taken for up to max(ceil(ttl_ms/1000) s, the minimum) + 0.5 s
   after the holder's last renew (docs/etcd.md).

   MEMBERS. cfg.endpoints is a comma-separated list of 1..LDL_ETCD_MAX_ENDPOINTS
   base URLs (http:// or https://, no path). A call starts on the member
   that answered last and moves to the next one on any failure that proves
   nothing was granted by that member's answer: connection refused or
   reset, attempt timeout (attempt_ms), HTTP status other than 200, a gRPC
   error body ("no leader", "request timed out", ...), a reply of the wrong
   shape. A member that is down, has no leader or is partitioned away is
   thus skipped within the call's bound (call_ms for the whole call, all its
   exchanges included). Retrying is safe: a lease grant whose answer was lost
   runs out by itself, the acquire txn recognises its own earlier commit
   (above), keepalive and range are idempotent; a release txn retried after
   an attempt that may have been applied answers 1 when the key is absent
   (deleted by that attempt, or expired and not retaken: SPEC lets such a
   release answer either) and 0 when another holder has it.

   BOUNDS. Every exchange: CURLOPT_CONNECTTIMEOUT_MS (connect_ms) and
   CURLOPT_TIMEOUT_MS (min(attempt_ms, time left of call_ms)), name
   resolution included (libcurl's threaded resolver, abandoned at the
   bound); every reply body at most LDL_ETCD_REPLY_MAX bytes (the write
   callback refuses the rest: a store error) and at most
   LDL_ETCD_REPLY_NODES JSON values, both by default. Replies are believed
   only when they provably answer this request: HTTP 200, one JSON object
   (cJSON; a name twice in any object is refused),
   every int64 a decimal string as the gateway writes it, the header's
   cluster_id equal to the first one this adapter saw, a range's key equal
   to the key asked for. Anything else is LDL_ESTORE, never a grant.

   REQUEST BODIES are sized for the documented maxima (a 63-byte prefix, a
   127-byte key, a 63-byte owner); init builds every body at those maxima and
   answers LDL_EINVAL with a why if one does not fit, so no call can fail
   later for a key or owner the documentation allows. Every store error sets
   a why.

   AUTH AND TLS. cfg.user / cfg.password: the adapter calls
   /v3/auth/authenticate and sends the token in the Authorization header;
   when etcd says the token is invalid or expired it authenticates again
   once within the call. cfg.cacert, cfg.cert, cfg.key_file go to libcurl as
   CURLOPT_CAINFO, CURLOPT_SSLCERT, CURLOPT_SSLKEY for https:// members
   (peer and host are always verified). The role needs readwrite on the key
   prefix, and no other role may write it (docs/etcd.md: the ACL setup;
   tested with a read-only user, who can inspect but never take, release
   or fence-write).

   HOLDER IDENTITY (SPEC's ldl_store_ext): ldl_etcd_ext(e): acquire_owned
   (the owner, 1..LDL_OWNER_MAX-1 bytes of printable ASCII, is the key's
   value) and inspect (range + timetolive: token = create_revision, ms left
   = the lease's remaining TTL in whole seconds x 1000, owner = the value;
   1 held, 0 free). ldl_etcd_async_ext(ea): submit_owned and inspect (the
   inspect is synchronous, on the ldl_etcd's own handle).

   THE NON-BLOCKING VIEW. ldl_etcd_async_init(ea, e, reqs, nreqs): reqs is
   caller-owned storage for nreqs requests (give each lock two, plus a few
   spare: one in flight, one cancelled or revoking a lost race's lease while
   it finishes; a submit with none free answers LDL_ESTORE); each keeps the
   libcurl easy handle it gets at its first use. With cfg.user the view
   authenticates at init and at _rebind (one blocking exchange); an invalid
   token during pumps is that request's error. A submit only queues; the pump
   starts at most LDL_ETCD_BATCH queued exchanges, then (curl_multi_perform:
   non-blocking I/O only) sends, reads, steps each
   request through its exchanges (grant -> txn [-> revoke]; range ->
   keepalive; txn -> revoke), moves a failed exchange to the next member,
   and completes requests (a lost race is answered 0 before its revoke,
   which finishes detached). A frozen member holds only the requests sent to
   it, each until its attempt timeout; the pump never waits for it.
   ldl_etcd_async_pump answers the number of requests completed (>= 0), or
   negative when the multi handle itself failed. A cancelled ACQUIRE that
   turns out granted is released by the adapter (same req). Verbs as every
   adapter (decision 0105): _why, _stats, _drop (every live request answered
   LDL_ESTORE at once), _rebind (a new ldl_etcd, e.g. other members; the old
   one's pending requests are answered LDL_ESTORE first). _timeout_ms: how
   long the program may sleep before the pump has timed work (-1: none);
   _wait(ea, max_ms): curl_multi_poll on every socket of the view;
   _multi(ea): the CURLM, for a loop that waits on fds of its own too
   (curl_multi_poll's extra_fds) -- cap that wait at _timeout_ms, which is 0
   while submitted exchanges wait for the pump to start them. Every socket
   the adapter opens is close-on-exec, so a child process never inherits a
   member connection.

   ANSWERS: exactly 1 yes, 0 no, negative on any error (LDL_ESTORE: no
   member answered within the bound, HTTP or gRPC error, a reply of the
   wrong shape; LDL_EINVAL: bad argument). ldl_etcd_why(e) is the last error
   text ("" when none).

   OPTIONS
     LDL_ETCD_IMPLEMENTATION  in exactly one .c/.cpp file, after the core header
     LDL_STATIC               makes the functions static (as in the core header)
     LDL_ETCD_MAX_ENDPOINTS   members in cfg.endpoints (default 8)
     LDL_ETCD_REPLY_MAX       bytes of one reply body (default 4096)
     LDL_ETCD_REPLY_NODES     JSON values of one reply (default 128)
     LDL_ETCD_WRITE_MAX       bytes of a fenced write's value or target (default 65536)
     LDL_ETCD_MAX_CONNS       connections of one non-blocking view (default 64;
                              more requests wait inside libcurl for one)
     LDL_ETCD_BATCH           exchanges one pump call starts at most (default 32:
                              a pump's work stays bounded when 1,000 renews fall
                              due in one frame; the rest start in the next pumps)
     LDL_NO_ASYNC             (the core's switch) leaves the non-blocking view out

   One ldl_etcd (and one ldl_etcd_async) serves one thread at a time.
   ldl_etcd_store(e) points at e and ldl_etcd_async_store(ea) at ea: do not
   move them while a lock uses them.
*/
#ifndef LITE_DI_LOCK_ETCD_H
#define LITE_DI_LOCK_ETCD_H

#include "lite_di_lock.h"
#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LDL_ETCD_API
#define LDL_ETCD_API LDL_API
#endif

#ifndef LDL_ETCD_MAX_ENDPOINTS
#define LDL_ETCD_MAX_ENDPOINTS 8
#endif
#if LDL_ETCD_MAX_ENDPOINTS < 1 || LDL_ETCD_MAX_ENDPOINTS > 64
#error "LDL_ETCD_MAX_ENDPOINTS must be in 1..64"
#endif
#ifndef LDL_ETCD_MAX_CONNS
#define LDL_ETCD_MAX_CONNS 64       /* connections the non-blocking view opens at most */
#endif
#ifndef LDL_ETCD_BATCH
#define LDL_ETCD_BATCH 32           /* exchanges one pump call starts at most */
#endif
#if LDL_ETCD_BATCH < 1
#error "LDL_ETCD_BATCH must be at least 1"
#endif
#ifndef LDL_ETCD_WRITE_MAX
#define LDL_ETCD_WRITE_MAX 65536    /* bytes of one fenced write's value (and target) */
#endif
#ifndef LDL_ETCD_REPLY_NODES
#define LDL_ETCD_REPLY_NODES 128    /* JSON values of one parsed reply (the largest the
                                       adapter reads, a txn with a range, has about 40) */
#endif
#if LDL_ETCD_REPLY_NODES < 64
#error "LDL_ETCD_REPLY_NODES must be at least 64"
#endif
#ifndef LDL_ETCD_REPLY_MAX
#define LDL_ETCD_REPLY_MAX 4096
#endif
#if LDL_ETCD_REPLY_MAX < 1024
#error "LDL_ETCD_REPLY_MAX must be at least 1024"
#endif

#define LDL_ETCD_ATTEMPT_MS 1000    /* cfg.attempt_ms default: one exchange with one member */
#define LDL_ETCD_CALL_MS    3000    /* cfg.call_ms default: one store call, every exchange */
#define LDL_ETCD_CONNECT_MS 250     /* cfg.connect_ms default */

#define LDL__ETCD_URL_MAX 128       /* one member's base URL with the NUL */
#define LDL__ETCD_PREFIX_MAX 64
#define LDL__ETCD_CRED_MAX 128      /* user, password */
#define LDL__ETCD_PATH_MAX 256      /* TLS file paths */
#define LDL__ETCD_AUTH_MAX 256      /* the auth token */
/* one request body, sized for the documented maxima: a prefix of LDL__ETCD_PREFIX_MAX-1
   bytes plus a key of LDL_KEY_MAX-1 bytes in base64 (K64) appears at most 4 times (the
   acquire txn: compare, put, the success range, the failure range), an owner of
   LDL_OWNER_MAX-1 bytes in base64 (O64) once, two int64s, and at most 400 bytes of JSON
   around them; ldl_etcd_init builds every body at these maxima and refuses to start
   when one does not fit (decision 1010) */
#define LDL__ETCD_K64_MAX ((LDL__ETCD_PREFIX_MAX - 1 + LDL_KEY_MAX - 1 + 2) / 3 * 4 + 1)
#define LDL__ETCD_O64_MAX ((LDL_OWNER_MAX - 1 + 2) / 3 * 4 + 1)
/* a SESSION key's value (decision 1013, "The acquire with a shared lease"): the owner,
   one separator byte no owner holds (owners are printable ASCII), then the acquire
   call's nonce in LDL__ETCD_NONCE_LEN lowercase hex digits; a per-lock key's value is
   the owner alone. V64: the largest such value in base64 */
#define LDL__ETCD_NONCE_SEP 0x1F
#define LDL__ETCD_NONCE_LEN 16
#define LDL__ETCD_VAL_MAX (LDL_OWNER_MAX - 1 + 1 + LDL__ETCD_NONCE_LEN)
#define LDL__ETCD_V64_MAX ((LDL__ETCD_VAL_MAX + 2) / 3 * 4 + 1)
#define LDL__ETCD_BODY_MAX (4 * LDL__ETCD_K64_MAX + LDL__ETCD_V64_MAX + 2 * 20 + 400)
#define LDL__ETCD_ERR_MAX 320

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_etcd_config {     /* zero = the default, per field */
    const char *endpoints;           /* REQUIRED: "http://h:p[,http://h2:p2...]" */
    const char *prefix;              /* NULL = "ldl/": etcd key = prefix + lock key */
    uint32_t    attempt_ms;          /* 0 = LDL_ETCD_ATTEMPT_MS: one exchange, one member */
    uint32_t    call_ms;             /* 0 = LDL_ETCD_CALL_MS: one store call in all */
    uint32_t    connect_ms;          /* 0 = LDL_ETCD_CONNECT_MS: TCP (+TLS) connect */
    const char *user, *password;     /* NULL = no auth; both or neither */
    const char *cacert;              /* NULL = libcurl's default CA store (https) */
    const char *cert, *key_file;     /* NULL = no client certificate; both or neither */
    uint32_t    session_ms;          /* 0 = no session (a lease per lock). Else SESSIONS
                                        (decision 1013): a lock whose ttl_ms equals it puts
                                        its key on one lease per view, and the non-blocking
                                        view renews them all with one keepalive */
} ldl_etcd_config;

typedef struct ldl_etcd {            /* caller-owned; fields are private */
    CURL       *_easy;
    int         _ok;                 /* 1 after a successful init */
    int         _n;                  /* members */
    int         _cur;                /* the member that answered last */
    uint32_t    _attempt_ms, _call_ms, _connect_ms;
    uint64_t    _cluster;            /* the first cluster_id seen; 0 = none yet */
    char        _ep[LDL_ETCD_MAX_ENDPOINTS][LDL__ETCD_URL_MAX];
    char        _prefix[LDL__ETCD_PREFIX_MAX];
    char        _user[LDL__ETCD_CRED_MAX], _pass[LDL__ETCD_CRED_MAX];
    char        _cacert[LDL__ETCD_PATH_MAX], _cert[LDL__ETCD_PATH_MAX], _keyf[LDL__ETCD_PATH_MAX];
    char        _auth[LDL__ETCD_AUTH_MAX];   /* "" = not authenticated yet */
    size_t      _rlen;
    int         _over;               /* the reply passed LDL_ETCD_REPLY_MAX */
    int         _ambig;              /* an attempt of the last exchange failed after it
                                        may have been applied */
    const char *_post;               /* a body of another size for the next exchanges
                                        (the fenced write's); NULL = _body */
    uint32_t    _session_ms;         /* cfg.session_ms */
    int64_t     _s_lease, _s_rev;    /* the synchronous view's session lease (0 = none yet)
                                        and the header revision of its grant */
    uint64_t    _s_nonce;            /* session acquire calls so far: each call's nonce */
    char        _reply[LDL_ETCD_REPLY_MAX];
    char        _body[LDL__ETCD_BODY_MAX];
    char        _err[LDL__ETCD_ERR_MAX];
} ldl_etcd;

/* the fenced write (issue 31; the fence protocol of decision 0901 in etcd's native form,
   decision 1012): ONE txn that compares the lock key's create_revision with the
   holder's fence and, only if equal, does the caller's put or delete of `target` */
typedef struct ldl_etcd_write {
    const char *key;                 /* the lock key (the adapter adds the prefix) */
    int64_t     fence;               /* the holder's fencing token (>= 1) */
    const char *target;              /* the etcd key written, as is (no prefix added) */
    const void *value;               /* the bytes put (NULL with value_len 0 = empty) */
    size_t      value_len;           /* at most LDL_ETCD_WRITE_MAX */
    int         del;                 /* 1 = delete target (value ignored), 0 = put */
} ldl_etcd_write;

/* v0.4: after init, drive this adapter through ONE interface,
   adapters/lite_di_lock_view.h (ldl_view_etcd, ldl_view_etcd_async): its ops do
   what the calls marked DEPRECATED below do. Those stay in v0.4 unchanged and
   leave the public surface in v0.5 (CHANGELOG lists each replacement;
   tools/api-deprecated.txt). */
LDL_ETCD_API int         ldl_etcd_init(ldl_etcd *e, const ldl_etcd_config *cfg); /* no I/O */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API void        ldl_etcd_close(ldl_etcd *e);                            /* idempotent */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API ldl_store   ldl_etcd_store(ldl_etcd *e);
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API ldl_store_ext ldl_etcd_ext(ldl_etcd *e);     /* acquire_owned + inspect */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API const char *ldl_etcd_why(const ldl_etcd *e); /* never NULL */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API int         ldl_etcd_fenced(ldl_etcd *e, const ldl_etcd_write *w); /* 1 written,
                                                   0 refused (stale fence), negative error */
LDL_ETCD_API int         ldl_etcd_member(const ldl_etcd *e); /* index of the member that
                                                                answered last (0..n-1) */

#ifndef LDL_NO_ASYNC
typedef struct ldl_etcd_async ldl_etcd_async;
typedef struct ldl_etcd_req ldl_etcd_req;
struct ldl_etcd_req {                /* one request; caller-owned storage, private */
    ldl_etcd_req   *_next;           /* free list */
    ldl_etcd_async *_ea;
    ldl_op         *_op;             /* NULL once cancelled (detached) */
    CURL           *_easy;
    int             _kind;           /* LDL_OP_* */
    int             _step;           /* which exchange of the request */
    int             _live;           /* 1 while queued or on the multi handle */
    int             _busy;           /* 1 while on the multi handle */
    int             _queued;         /* 1 while waiting for a pump to start its exchange */
    int             _member;         /* the member of the current exchange */
    int             _tries;          /* members tried in this exchange */
    int             _rc;
    int             _over;
    int             _ambig;          /* an attempt of this exchange may have been applied */
    int             _sess;           /* a session request (ttl == cfg.session_ms) */
    int             _sgrant;         /* this acquire grants the view's session lease */
    int             _ska;            /* the view's session keepalive */
    int             _fresh;          /* this session acquire granted the lease itself */
    uint64_t        _nonce;          /* a session acquire: this call's nonce (per call,
                                        the same in every attempt) */
    int64_t         _token;          /* ACQUIRE: the granted fence; else the caller's */
    int64_t         _lease;
    uint32_t        _ttl;
    uint64_t        _deadline;       /* CLOCK_MONOTONIC ms: the call's bound */
    size_t          _rlen;
    char            _key[LDL_KEY_MAX];
    char            _owner[LDL_OWNER_MAX];
    char            _reply[LDL_ETCD_REPLY_MAX];
    char            _body[LDL__ETCD_BODY_MAX];
};

typedef struct ldl_etcd_stats {      /* counters of a non-blocking view, since init */
    uint64_t submitted;              /* requests accepted (the adapter's hand-backs too) */
    uint64_t answered;               /* requests completed with an answer from etcd */
    uint64_t failed;                 /* requests completed LDL_ESTORE (bound passed, drop) */
    uint64_t handed_back;            /* cancelled grants the adapter released */
    uint64_t refused_full;           /* submits refused: no free ldl_etcd_req */
    uint64_t exchanges;              /* HTTP exchanges finished */
    uint64_t failovers;              /* exchanges moved to another member */
    size_t   live;                   /* requests in flight now */
    size_t   max_live;
    uint64_t keepalives;             /* session keepalives started (decision 1013) */
    uint64_t session_renews;         /* renews submitted on the session (each waits on its
                                        own ldl_op, no ldl_etcd_req: not in `live`) */
    uint64_t session_grants;         /* session leases granted */
} ldl_etcd_stats;

struct ldl_etcd_async {              /* caller-owned; fields are private */
    ldl_etcd       *_e;
    CURLM          *_multi;
    ldl_etcd_req   *_reqs;
    size_t          _nreqs;
    ldl_etcd_req   *_free;
    ldl_etcd_req   *_qhead, *_qtail; /* exchanges waiting for the next pump */
    struct curl_slist *_hdrs;        /* the headers every request sends */
    int             _ok;
    int             _again;          /* a request was (re)added during the pump */
    int64_t         _s_lease, _s_rev; /* the view's session lease (0 = none) and the header
                                        revision of its grant: keys put with it are newer */
    int             _s_granting;     /* a session acquire is granting the lease */
    ldl_etcd_req   *_s_park;         /* session acquires waiting for that grant */
    ldl_op         *_s_wait;         /* session renews waiting for the NEXT keepalive */
    ldl_op         *_s_ride;         /* session renews the keepalive in flight answers */
    ldl_etcd_req   *_s_ka;           /* that keepalive (NULL = none in flight) */
    uint64_t        _s_sent;         /* session keepalives started so far */
    uint64_t        _s_nonce;        /* session acquire calls so far: each call's nonce */
    ldl_etcd_stats  _stats;
    char            _err[LDL__ETCD_ERR_MAX];
};

LDL_ETCD_API int  ldl_etcd_async_init(ldl_etcd_async *ea, ldl_etcd *e, ldl_etcd_req *reqs,
                                      size_t nreqs);
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API void ldl_etcd_async_close(ldl_etcd_async *ea);  /* answers live requests ESTORE */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API ldl_async_store ldl_etcd_async_store(ldl_etcd_async *ea);
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API ldl_store_ext ldl_etcd_async_ext(ldl_etcd_async *ea); /* submit_owned + inspect */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API int  ldl_etcd_async_pump(ldl_etcd_async *ea);   /* requests completed, or < 0 */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API long ldl_etcd_async_timeout_ms(ldl_etcd_async *ea); /* -1: nothing timed */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API int  ldl_etcd_async_wait(ldl_etcd_async *ea, int max_ms); /* curl_multi_poll */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API CURLM *ldl_etcd_async_multi(ldl_etcd_async *ea); /* for curl_multi_poll with fds
                                                   of your own; never add or remove handles */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API int  ldl_etcd_async_drop(ldl_etcd_async *ea);   /* requests answered */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API int  ldl_etcd_async_rebind(ldl_etcd_async *ea, ldl_etcd *e);
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API const char *ldl_etcd_async_why(const ldl_etcd_async *ea);            /* never NULL */
/* DEPRECATED (v0.4): the view */
LDL_ETCD_API const ldl_etcd_stats *ldl_etcd_async_stats(const ldl_etcd_async *ea); /* NULL for NULL */
#endif /* LDL_NO_ASYNC */

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_ETCD_H */

/* ==================================================================== */
#ifdef LDL_ETCD_IMPLEMENTATION
#ifndef LITE_DI_LOCK_ETCD_C
#define LITE_DI_LOCK_ETCD_C

#include <fcntl.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(CLOCK_MONOTONIC)
#error "lite_di_lock_etcd.h needs clock_gettime(CLOCK_MONOTONIC): include lite_di_lock.h first, or define _POSIX_C_SOURCE=200112L"
#endif

/* exchanges (the gateway paths) */
#define LDL__ETCD_GRANT 0
#define LDL__ETCD_TXN 1
#define LDL__ETCD_RANGE 2
#define LDL__ETCD_KEEPALIVE 3
#define LDL__ETCD_REVOKE 4
#define LDL__ETCD_TTL 5
#define LDL__ETCD_AUTH 6

/* what one exchange came to */
#define LDL__ETCD_X_OK 0        /* a 200 reply, parsed: the caller reads it */
#define LDL__ETCD_X_NEXT 1      /* this member failed: try another */
#define LDL__ETCD_X_AUTH 2      /* the token is invalid or expired: authenticate again */
#define LDL__ETCD_X_FATAL 3     /* etcd answered a definitive error: do not retry */

#ifdef __cplusplus
extern "C" {
#endif

static const char *ldl__etcd_path(int x) {
    switch (x) {
    case LDL__ETCD_GRANT: return "/v3/lease/grant";
    case LDL__ETCD_TXN: return "/v3/kv/txn";
    case LDL__ETCD_RANGE: return "/v3/kv/range";
    case LDL__ETCD_KEEPALIVE: return "/v3/lease/keepalive";
    case LDL__ETCD_REVOKE: return "/v3/lease/revoke";
    case LDL__ETCD_TTL: return "/v3/lease/timetolive";
    default: return "/v3/auth/authenticate";
    }
}

static uint64_t ldl__etcd_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ errors */
static void ldl__etcd_seterr(char *dst, size_t cap, const char *what, const char *detail) {
    size_t n = 0;
    const char *parts[3];
    int k;
    parts[0] = what; parts[1] = detail ? ": " : ""; parts[2] = detail ? detail : "";
    for (k = 0; k < 3; k++) {
        const char *p = parts[k];
        for (; *p && n + 1 < cap; p++) {
            unsigned char c = (unsigned char)*p;
            dst[n++] = (c < 0x20 || c > 0x7E) ? '?' : (char)c;   /* one printable line */
        }
    }
    dst[n] = '\0';
}
#define LDL__ETCD_ERR(e, what, detail) ldl__etcd_seterr((e)->_err, sizeof (e)->_err, what, detail)

/* ------------------------------------------------------------ base64 (RFC 4648, padded) */
static const char ldl__etcd_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* encode n bytes; 0 ok, -1 does not fit */
static int ldl__etcd_b64enc(const unsigned char *in, size_t n, char *out, size_t cap) {
    size_t i, o = 0;
    if ((n + 2) / 3 * 4 + 1 > cap) return -1;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8) | in[i + 2];
        out[o++] = ldl__etcd_b64[(v >> 18) & 63]; out[o++] = ldl__etcd_b64[(v >> 12) & 63];
        out[o++] = ldl__etcd_b64[(v >> 6) & 63];  out[o++] = ldl__etcd_b64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        out[o++] = ldl__etcd_b64[(v >> 18) & 63]; out[o++] = ldl__etcd_b64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? ldl__etcd_b64[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return 0;
}

static int ldl__etcd_b64val(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* strict decode (padded, canonical length); the number of bytes, or -1 */
static long ldl__etcd_b64dec(const char *in, unsigned char *out, size_t cap) {
    size_t n = strlen(in), i, o = 0;
    if (n % 4 != 0) return -1;
    for (i = 0; i < n; i += 4) {
        int a = ldl__etcd_b64val(in[i]), b = ldl__etcd_b64val(in[i + 1]);
        int c = in[i + 2] == '=' ? -2 : ldl__etcd_b64val(in[i + 2]);
        int d = in[i + 3] == '=' ? -2 : ldl__etcd_b64val(in[i + 3]);
        uint32_t v;
        if (a < 0 || b < 0 || c == -1 || d == -1) return -1;
        if ((c == -2 || d == -2) && i + 4 != n) return -1;
        if (c == -2 && d != -2) return -1;
        v = ((uint32_t)a << 18) | ((uint32_t)b << 12) | ((uint32_t)(c < 0 ? 0 : c) << 6) |
            (uint32_t)(d < 0 ? 0 : d);
        if (o + 3 > cap) return -1;
        out[o++] = (unsigned char)(v >> 16);
        if (c >= 0) out[o++] = (unsigned char)(v >> 8);
        if (d >= 0) out[o++] = (unsigned char)v;
    }
    return (long)o;
}

/* ------------------------------------------------------------ arguments */
static int ldl__etcd_key_ok(const char *key) {
    size_t n;
    if (!key) return 0;
    n = strlen(key);
    return n >= 1 && n < LDL_KEY_MAX;
}

static int ldl__etcd_owner_ok(const char *owner) {
    size_t n;
    if (!owner) return 0;
    for (n = 0; owner[n]; n++)
        if ((unsigned char)owner[n] < 0x20 || (unsigned char)owner[n] > 0x7E) return 0;
    return n >= 1 && n < LDL_OWNER_MAX;
}

/* the etcd key (prefix + key) in base64 */
static int ldl__etcd_key64(const char *prefix, const char *key, char *out, size_t cap) {
    unsigned char raw[LDL__ETCD_PREFIX_MAX + LDL_KEY_MAX];
    size_t pn = strlen(prefix), kn = strlen(key);
    if (pn + kn > sizeof raw) return -1;
    memcpy(raw, prefix, pn);
    memcpy(raw + pn, key, kn);
    return ldl__etcd_b64enc(raw, pn + kn, out, cap);
}


/* ------------------------------------------------------------ request bodies
   Every variable part is base64 or a decimal number: nothing to escape. The
   auth body (user and password) is built by cJSON. */
static int ldl__etcd_fit(int n, size_t cap) { return n > 0 && (size_t)n < cap ? 0 : -1; }

static int ldl__etcd_body_grant(char *b, size_t cap, uint32_t ttl_ms) {
    unsigned long secs = ((unsigned long)ttl_ms + 999ul) / 1000ul;
    return ldl__etcd_fit(snprintf(b, cap, "{\"TTL\":\"%lu\"}", secs), cap);
}

static int ldl__etcd_body_lease(char *b, size_t cap, int64_t lease) {
    return ldl__etcd_fit(snprintf(b, cap, "{\"ID\":\"%lld\"}", (long long)lease), cap);
}

static int ldl__etcd_body_range(char *b, size_t cap, const char *k64) {
    return ldl__etcd_fit(snprintf(b, cap, "{\"key\":\"%s\"}", k64), cap);
}

/* the session's quorum read (decision 1013): a linearizable count of the prefix key,
   sent after the keepalive to the same member; only its success lets the keepalive
   answer, because on etcd 3.4.23 a leader cut off from the others still answers
   keepalives (measured: tests/store/etcd_session_cluster.c partition) while a
   linearizable read needs a quorum */
static int ldl__etcd_body_quorum(char *b, size_t cap, const char *p64) {
    return ldl__etcd_fit(snprintf(b, cap, "{\"key\":\"%s\",\"count_only\":true}", *p64 ? p64 : "AA=="), cap);
}

/* acquire: create_revision == 0 -> put with the lease, then range the key (in the same
   txn, so at the put's revision: the reply's proof, ldl__etcd_put_proof); else range.
   nonce 0: the value is the owner (a per-lock lease, byte for byte as before sessions);
   else a session put: owner, LDL__ETCD_NONCE_SEP, the nonce in fixed-width hex */
static int ldl__etcd_body_put(char *b, size_t cap, const char *k64, const char *owner,
                              uint64_t nonce, int64_t lease) {
    char o64[LDL__ETCD_V64_MAX];
    unsigned char raw[LDL__ETCD_VAL_MAX + 1];
    size_t n = strlen(owner);
    if (n >= LDL_OWNER_MAX) return -1;
    memcpy(raw, owner, n);
    if (nonce) {
        raw[n++] = LDL__ETCD_NONCE_SEP;
        if (snprintf((char *)raw + n, sizeof raw - n, "%016llx", (unsigned long long)nonce) != LDL__ETCD_NONCE_LEN)
            return -1;
        n += LDL__ETCD_NONCE_LEN;
    }
    if (ldl__etcd_b64enc(raw, n, o64, sizeof o64) != 0) return -1;
    return ldl__etcd_fit(snprintf(b, cap,
        "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\",\"create_revision\":\"0\"}],"
        "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%lld\"}},"
        "{\"request_range\":{\"key\":\"%s\"}}],"
        "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
        k64, k64, o64, (long long)lease, k64, k64), cap);
}

/* release: create_revision == fence -> range, delete; else range (to tell "gone" from
   "someone else's" when an earlier attempt of the same call may have deleted it) */
static int ldl__etcd_body_del(char *b, size_t cap, const char *k64, int64_t fence) {
    return ldl__etcd_fit(snprintf(b, cap,
        "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\",\"create_revision\":\"%lld\"}],"
        "\"success\":[{\"request_range\":{\"key\":\"%s\"}},{\"request_delete_range\":{\"key\":\"%s\"}}],"
        "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
        k64, (long long)fence, k64, k64, k64), cap);
}

/* ------------------------------------------------------------ reading replies */
/* an int64 field as the gateway writes it: absent = 0 (proto3 leaves zero
   out), else a decimal string, no leading zeros, '-' only when neg_ok.
   0 ok, -1 wrong type or form */
static int ldl__etcd_i64(cJSON *obj, const char *name, int neg_ok, int64_t *out) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    const char *s;
    int neg = 0;
    uint64_t acc = 0, lim;
    *out = 0;
    if (!v) return 0;
    if (!cJSON_IsString(v)) return -1;
    s = (v)->valuestring;
    if (*s == '-') { if (!neg_ok) return -1; neg = 1; s++; }
    if (!*s || (s[0] == '0' && s[1])) return -1;
    lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        if (acc > (lim - (uint64_t)(*s - '0')) / 10u) return -1;
        acc = acc * 10u + (uint64_t)(*s - '0');
    }
    if (neg) *out = acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc;
    else *out = (int64_t)acc;
    return 0;
}

/* the uint64 cluster_id */
static int ldl__etcd_u64(cJSON *obj, const char *name, uint64_t *out) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    const char *s;
    uint64_t acc = 0;
    *out = 0;
    if (!v || !cJSON_IsString(v)) return -1;
    s = (v)->valuestring;
    if (!*s || (s[0] == '0' && s[1])) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        if (acc > (UINT64_MAX - (uint64_t)(*s - '0')) / 10u) return -1;
        acc = acc * 10u + (uint64_t)(*s - '0');
    }
    *out = acc;
    return 0;
}

/* the reply header: revision >= 1; cluster_id pinned to the first one seen.
   0 ok, -1 (why in err) */
static int ldl__etcd_header(cJSON *obj, uint64_t *cluster, int64_t *rev, const char **why) {
    cJSON *h = cJSON_GetObjectItemCaseSensitive(obj, "header");
    uint64_t cid;
    if (!cJSON_IsObject(h)) { *why = "reply without a header"; return -1; }
    if (ldl__etcd_i64(h, "revision", 0, rev) != 0 || *rev < 1) {
        *why = "reply header: revision missing or not a decimal string >= 1";
        return -1;
    }
    if (ldl__etcd_u64(h, "cluster_id", &cid) != 0 || cid == 0) {
        *why = "reply header: cluster_id missing or malformed";
        return -1;
    }
    if (*cluster == 0) *cluster = cid;
    else if (*cluster != cid) {
        *why = "reply from another cluster (cluster_id differs from the first one seen)";
        return -1;
    }
    return 0;
}

/* one key-value of a range: the key must be ours. 0 ok, -1 */
typedef struct ldl__etcd_kv {
    int         found;
    int64_t     create, mod, version, lease;
    const char *value64;            /* "" when absent */
} ldl__etcd_kv;

static int ldl__etcd_range_kv(cJSON *r, const char *k64, ldl__etcd_kv *kv, const char **why) {
    cJSON *kvs = cJSON_GetObjectItemCaseSensitive(r, "kvs"), *one, *key, *val;
    int64_t count;
    memset(kv, 0, sizeof *kv);
    kv->value64 = "";
    if (!cJSON_IsObject(r)) { *why = "range reply is not an object"; return -1; }
    if (ldl__etcd_i64(r, "count", 0, &count) != 0) { *why = "range reply: malformed count"; return -1; }
    if (!kvs) {
        if (count != 0) { *why = "range reply: count without kvs"; return -1; }
        return 0;
    }
    if (!cJSON_IsArray(kvs) || cJSON_GetArraySize(kvs) != 1 || count != 1) {
        *why = "range reply: want at most one key-value";
        return -1;
    }
    one = cJSON_GetArrayItem(kvs, 0);
    key = cJSON_GetObjectItemCaseSensitive(one, "key");
    if (!cJSON_IsObject(one) || !cJSON_IsString(key) || strcmp((key)->valuestring, k64) != 0) {
        *why = "range reply names another key";
        return -1;
    }
    if (ldl__etcd_i64(one, "create_revision", 0, &kv->create) != 0 || kv->create < 1 ||
        ldl__etcd_i64(one, "mod_revision", 0, &kv->mod) != 0 ||
        ldl__etcd_i64(one, "version", 0, &kv->version) != 0 ||
        ldl__etcd_i64(one, "lease", 0, &kv->lease) != 0) {
        *why = "range reply: malformed create_revision, mod_revision, version or lease";
        return -1;
    }
    val = cJSON_GetObjectItemCaseSensitive(one, "value");
    if (val) {
        if (!cJSON_IsString(val)) { *why = "range reply: value is not a string"; return -1; }
        kv->value64 = (val)->valuestring;
    }
    kv->found = 1;
    return 0;
}

/* a value the adapter put (decoded from value64 into raw, cap bytes): *olen = the
   owner's length, *nonce = a session value's nonce (0: a per-lock value, the owner
   alone). 0, or -1 (why set) when it is not a value the adapter writes: not base64, an
   owner too long or not printable ASCII, or LDL__ETCD_NONCE_SEP not followed by exactly
   LDL__ETCD_NONCE_LEN lowercase hex digits (a nonce >= 1) */
static int ldl__etcd_value(const char *value64, unsigned char *raw, size_t cap, long *olen,
                           uint64_t *nonce, const char **why) {
    long n = ldl__etcd_b64dec(value64, raw, cap), i, o;
    *olen = 0;
    *nonce = 0;
    if (n < 0) { *why = "the value is not an owner (not base64, or too long)"; return -1; }
    for (o = 0; o < n && raw[o] != LDL__ETCD_NONCE_SEP; o++)
        if (raw[o] < 0x20 || raw[o] > 0x7E) { *why = "the owner is not printable ASCII"; return -1; }
    if (o >= LDL_OWNER_MAX) { *why = "the value is not an owner (too long)"; return -1; }
    *olen = o;
    if (o == n) return 0;                                   /* a per-lock value */
    if (n - o - 1 != LDL__ETCD_NONCE_LEN) { *why = "a session value with a malformed nonce"; return -1; }
    for (i = o + 1; i < n; i++) {
        int d = raw[i] >= '0' && raw[i] <= '9' ? raw[i] - '0' : raw[i] >= 'a' && raw[i] <= 'f' ? raw[i] - 'a' + 10 : -1;
        if (d < 0) { *why = "a session value with a malformed nonce"; return -1; }
        *nonce = (*nonce << 4) | (uint64_t)d;
    }
    if (*nonce == 0) { *why = "a session value with a malformed nonce"; return -1; }
    return 0;
}

/* a session acquire's compare failed on a key that carries the session lease, after an
   attempt that may have committed: 1 when the key's value carries THIS call's nonce (an
   earlier attempt of this call put it: the grant), 0 when it carries another call's
   (a sibling lock, or an earlier call, holds it: the answer is 0), -1 when the value is
   not one the adapter writes on a session key (why set) */
static int ldl__etcd_mine(const char *value64, uint64_t nonce, const char **why) {
    unsigned char raw[LDL__ETCD_VAL_MAX + 4];
    long olen;
    uint64_t got;
    if (ldl__etcd_value(value64, raw, sizeof raw, &olen, &got, why) != 0) return -1;
    if (!got) { *why = "a key on the session lease without a nonce"; return -1; }
    return got == nonce ? 1 : 0;
}

/* the first response of a txn, of the kind `name` ("response_put", ...) */
static cJSON *ldl__etcd_txn_resp(cJSON *root, int i, const char *name) {
    cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "responses"), *r;
    if (!cJSON_IsArray(rs) || cJSON_GetArraySize(rs) <= i) return NULL;
    r = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rs, i), name);
    return cJSON_IsObject(r) ? r : NULL;
}

/* "succeeded": absent = false (proto3); a non-boolean is malformed. 0/1, -1 */
static int ldl__etcd_succeeded(cJSON *root) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "succeeded");
    if (!v) return 0;
    if (!cJSON_IsBool(v)) return -1;
    return cJSON_IsTrue(v) ? 1 : 0;
}

/* THE PROOF that an acquire txn's success reply answers THIS call (decision 1010): the
   txn put the key with the lease this call was just granted, then ranged the key in the
   same txn. etcd applies a txn's operations in order at one revision, the header's; a
   lease id names one lease cluster-wide. So a reply is this call's grant only if it is
   exactly [put, range], and the range shows the key asked for, carrying THIS call's
   lease, created at the header's revision by that very put (create_revision ==
   mod_revision == the header's revision, version 1). A reply that lacks any of these --
   a canned "succeeded", another key, another lease, an older key -- is a store error.
   0 with *fence (= the key's create_revision), or -1 with why */
static int ldl__etcd_put_proof(cJSON *root, const char *k64, int64_t lease, int64_t *fence,
                               const char **why) {
    cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "responses"), *rr;
    ldl__etcd_kv kv;
    int64_t rev = 0;
    *fence = 0;
    if (ldl__etcd_i64(cJSON_GetObjectItemCaseSensitive(root, "header"), "revision", 0, &rev) != 0 || rev < 1) {
        *why = "txn reply: no revision";
        return -1;
    }
    if (!cJSON_IsArray(rs) || cJSON_GetArraySize(rs) != 2 || !ldl__etcd_txn_resp(root, 0, "response_put")) {
        *why = "txn reply: not [put, range] (does not answer this request)";
        return -1;
    }
    rr = ldl__etcd_txn_resp(root, 1, "response_range");
    if (!rr) { *why = "txn reply: no range of the key after the put"; return -1; }
    if (ldl__etcd_range_kv(rr, k64, &kv, why) != 0) return -1;
    if (!kv.found) { *why = "txn reply: the key is absent after the put"; return -1; }
    if (kv.lease != lease) { *why = "txn reply: the key does not carry this call's lease"; return -1; }
    if (kv.create != rev || kv.mod != rev || kv.version != 1) {
        *why = "txn reply: the key was not created by this txn (create_revision, mod_revision, "
               "version vs the header's revision)";
        return -1;
    }
    *fence = kv.create;
    return 0;
}

/* an acquire txn's reply (both views): 1 the grant, proved (*fence); 0 the compare
   failed (*kv: the key as the txn saw it; its value64 lives in root); -1 (why set) */
static int ldl__etcd_put_reply(cJSON *root, const char *k64, int64_t lease, int64_t *fence, ldl__etcd_kv *kv,
                               const char **why) {
    int ok = ldl__etcd_succeeded(root);
    cJSON *rr;
    memset(kv, 0, sizeof *kv);
    kv->value64 = "";
    if (ok == 1) {
        if (ldl__etcd_put_proof(root, k64, lease, fence, why) != 0) ok = -1;
    } else if (ok == 0) {
        rr = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!rr || ldl__etcd_range_kv(rr, k64, kv, why) != 0) { ok = -1; if (!*why) *why = "txn reply: no range response"; }
    } else *why = "txn reply: succeeded is not a boolean";
    return ok;
}

/* no object in the tree holds a name twice (cJSON keeps both; the first would be read),
   and the tree holds at most LDL_ETCD_REPLY_NODES values (*budget counts down): 0 clean,
   -1 a duplicate or too many values. The parse itself is bounded by the reply's bytes
   (LDL_ETCD_REPLY_MAX: cJSON makes at most one value per byte); depth by cJSON's
   nesting limit and the reply size. */
static int ldl__etcd_nodup(const cJSON *j, long *budget) {
    const cJSON *a, *b;
    for (a = j ? j->child : NULL; a; a = a->next) {
        if (--*budget < 0) return -1;
        if (cJSON_IsObject(j) && a->string)
            for (b = a->next; b; b = b->next)
                if (b->string && strcmp(a->string, b->string) == 0) return -1;
        if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && ldl__etcd_nodup(a, budget) != 0) return -1;
    }
    return 0;
}

/* parse exactly len bytes: one JSON value, then only white space; no duplicate names;
   at most LDL_ETCD_REPLY_NODES values (*many = 1 when that bound refused it) */
static cJSON *ldl__etcd_parse(const char *buf, size_t len, const char **end, int *many) {
    cJSON *j;
    long budget = LDL_ETCD_REPLY_NODES - 1;       /* the root is one */
    *many = 0;
    if (len == 0) return NULL;
    j = cJSON_ParseWithLengthOpts(buf, len, end, 0);
    if (!j) return NULL;
    if (*end) {
        const char *p = *end;
        for (; p < buf + len; p++)
            if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') { cJSON_Delete(j); return NULL; }
    }
    if (ldl__etcd_nodup(j, &budget) != 0) { *many = budget < 0; cJSON_Delete(j); return NULL; }
    return j;
}

/* judge one finished exchange: transport result, HTTP status, body.
   LDL__ETCD_X_OK with *root (decref it), else why is set */
static int ldl__etcd_judge(CURLcode cc, long http, const char *buf, size_t len, int over,
                           cJSON **root, const char **why, char *tmp, size_t tmpcap) {
    const char *end = NULL;
    cJSON *j, *code;
    int many = 0;
    *root = NULL;
    if (over) { *why = "reply larger than LDL_ETCD_REPLY_MAX"; return LDL__ETCD_X_NEXT; }
    if (cc != CURLE_OK) {
        snprintf(tmp, tmpcap, "transport: %s", curl_easy_strerror(cc));
        *why = tmp;
        return LDL__ETCD_X_NEXT;
    }
    j = ldl__etcd_parse(buf, len, &end, &many);
    if (http != 200) {
        /* the gateway's error body: {"error": "...", "code": N} (gRPC code) */
        int c = -1;
        const char *msg = "";
        if (j && cJSON_IsObject(j)) {
            cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "error");
            code = cJSON_GetObjectItemCaseSensitive(j, "code");
            if (cJSON_IsNumber(code) && code->valuedouble >= -1e6 && code->valuedouble <= 1e6)
                c = (int)code->valuedouble;
            if (cJSON_IsString(m)) msg = (m)->valuestring;
        }
        snprintf(tmp, tmpcap, "HTTP %ld, gRPC code %d: %.160s", http, c, msg);
        *why = tmp;
        if (j) cJSON_Delete(j);                      /* msg is gone from here on: read tmp */
        if (c == 16 || strstr(tmp, "invalid auth token") || strstr(tmp, "auth token is invalid"))
            return LDL__ETCD_X_AUTH;
        /* definitive: invalid argument, not found, permission denied, failed precondition */
        if (http >= 400 && http < 500 && (c == 3 || c == 5 || c == 7 || c == 9))
            return LDL__ETCD_X_FATAL;
        return LDL__ETCD_X_NEXT;
    }
    if (!j || !cJSON_IsObject(j)) {
        snprintf(tmp, tmpcap, "reply is not a JSON object%s", j ? "" : many ?
                 " (more JSON values than LDL_ETCD_REPLY_NODES)" :
                 " (malformed JSON, a duplicate key, or bytes after the value)");
        *why = tmp;
        if (j) cJSON_Delete(j);
        return LDL__ETCD_X_NEXT;
    }
    /* a streamed (keepalive) error arrives inside a 200 */
    if (cJSON_GetObjectItemCaseSensitive(j, "error")) {
        *why = "the stream answered an error";
        cJSON_Delete(j);
        return LDL__ETCD_X_NEXT;
    }
    *root = j;
    return LDL__ETCD_X_OK;
}

static size_t ldl__etcd_sink(char *buf, size_t *len, int *over, const char *p, size_t n) {
    if (*over || n > (size_t)LDL_ETCD_REPLY_MAX - *len) {
        *over = 1;
        return 0;                                   /* libcurl fails the transfer */
    }
    memcpy(buf + *len, p, n);
    *len += n;
    return n;
}

static size_t ldl__etcd_write_e(char *p, size_t sz, size_t nm, void *ud) {
    ldl_etcd *e = (ldl_etcd *)ud;
    if (nm && sz > (size_t)-1 / nm) { e->_over = 1; return 0; }
    return ldl__etcd_sink(e->_reply, &e->_rlen, &e->_over, p, sz * nm);
}

/* every socket close-on-exec: a child the program forks never holds a member link */
static int ldl__etcd_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose) {
    int fl = fcntl(fd, F_GETFD);
    (void)ud;
    (void)purpose;
    if (fl >= 0) (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    return CURL_SOCKOPT_OK;
}

/* the options every exchange of e (or of an async request) needs */
static int ldl__etcd_setup(const ldl_etcd *e, CURL *h, struct curl_slist *hdrs) {
    int bad = 0;
    bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_POST, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)e->_connect_ms) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, ldl__etcd_sockopt) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075700
    /* a name still resolving when an exchange ends (its bound passed) is left to its
       resolver thread: without this, libcurl joins that thread, and a silent DNS server
       holds the call -- or a pump of the non-blocking view -- for the resolver's own
       timeout (tested: 10 s against a 600 ms call bound; decision 1011) */
    bad |= curl_easy_setopt(h, CURLOPT_QUICK_EXIT, 1L) != CURLE_OK;
#endif
    if (e->_cacert[0]) bad |= curl_easy_setopt(h, CURLOPT_CAINFO, e->_cacert) != CURLE_OK;
    if (e->_cert[0]) {
        bad |= curl_easy_setopt(h, CURLOPT_SSLCERT, e->_cert) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_SSLKEY, e->_keyf) != CURLE_OK;
    }
    return bad ? -1 : 0;
}

/* the headers: JSON, no "Expect: 100-continue", the auth token when there is one */
static struct curl_slist *ldl__etcd_headers(const char *auth) {
    struct curl_slist *l = NULL, *t;
    char line[LDL__ETCD_AUTH_MAX + 20];
    l = curl_slist_append(NULL, "Content-Type: application/json");
    if (!l) return NULL;
    t = curl_slist_append(l, "Expect:");
    if (!t) { curl_slist_free_all(l); return NULL; }
    l = t;
    if (auth && *auth) {
        snprintf(line, sizeof line, "Authorization: %s", auth);
        t = curl_slist_append(l, line);
        if (!t) { curl_slist_free_all(l); return NULL; }
        l = t;
    }
    return l;
}

/* the auth body (user and password, escaped by cJSON) in e->_body; 0, or -1 */
static int ldl__etcd_body_auth(ldl_etcd *e) {
    cJSON *req = cJSON_CreateObject();
    int ok;
    if (!req) return -1;
    ok = cJSON_AddStringToObject(req, "name", e->_user) != NULL &&
         cJSON_AddStringToObject(req, "password", e->_pass) != NULL &&
         cJSON_PrintPreallocated(req, e->_body, (int)sizeof e->_body - 8, 0);  /* cJSON's margin */
    cJSON_Delete(req);
    return ok ? 0 : -1;
}

/* every request body, built at the documented maxima (this prefix, a key of
   LDL_KEY_MAX-1 bytes, an owner of LDL_OWNER_MAX-1 bytes, the largest int64s), fits
   one body buffer: NULL, or what does not fit. Checked at init, so that no call can
   ever fail later for a key or an owner the documentation allows (decision 1010) */
static const char *ldl__etcd_fits(ldl_etcd *e) {
    char key[LDL_KEY_MAX], owner[LDL_OWNER_MAX], k64[LDL__ETCD_K64_MAX];
    memset(key, 0x7E, sizeof key - 1);
    key[sizeof key - 1] = '\0';
    memset(owner, 0x7E, sizeof owner - 1);
    owner[sizeof owner - 1] = '\0';
    if (ldl__etcd_key64(e->_prefix, key, k64, sizeof k64) != 0) return "prefix + key in base64";
    if (ldl__etcd_body_put(e->_body, sizeof e->_body, k64, owner, 0, INT64_MAX) != 0) return "the acquire txn";
    if (ldl__etcd_body_put(e->_body, sizeof e->_body, k64, owner, UINT64_MAX, INT64_MAX) != 0)
        return "the session acquire txn (owner and nonce)";
    if (ldl__etcd_body_del(e->_body, sizeof e->_body, k64, INT64_MAX) != 0) return "the release txn";
    if (ldl__etcd_body_range(e->_body, sizeof e->_body, k64) != 0) return "the range";
    if (ldl__etcd_body_grant(e->_body, sizeof e->_body, UINT32_MAX) != 0) return "the lease grant";
    if (ldl__etcd_body_lease(e->_body, sizeof e->_body, INT64_MAX) != 0) return "a lease body";
    if (e->_user[0] && ldl__etcd_body_auth(e) != 0) return "the auth body (user and password)";
    e->_body[0] = '\0';
    return NULL;
}

/* ------------------------------------------------------------ init */
static int ldl__etcd_copy(char *dst, size_t cap, const char *src) {
    size_t n;
    if (!src) { dst[0] = '\0'; return 0; }
    n = strlen(src);
    if (n >= cap) return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

LDL_ETCD_API int ldl_etcd_init(ldl_etcd *e, const ldl_etcd_config *cfg) {
    const char *p, *prefix;
    size_t i;
    if (!e) return LDL_EINVAL;
    memset(e, 0, sizeof *e);
    if (!cfg || !cfg->endpoints) { LDL__ETCD_ERR(e, "init", "cfg.endpoints is required"); return LDL_EINVAL; }
    /* members: comma-separated base URLs */
    p = cfg->endpoints;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *u;
        if (e->_n == LDL_ETCD_MAX_ENDPOINTS) { LDL__ETCD_ERR(e, "init", "more members than LDL_ETCD_MAX_ENDPOINTS"); return LDL_EINVAL; }
        if (n == 0 || n >= LDL__ETCD_URL_MAX) { LDL__ETCD_ERR(e, "init", "an empty or too long member URL"); return LDL_EINVAL; }
        u = e->_ep[e->_n];
        memcpy(u, p, n);
        u[n] = '\0';
        while (n > 0 && u[n - 1] == '/') u[--n] = '\0';       /* "http://h:p/" is fine */
        if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
            LDL__ETCD_ERR(e, "init", "a member URL must start with http:// or https://");
            return LDL_EINVAL;
        }
        for (i = 0; i < n; i++)
            if ((unsigned char)u[i] <= 0x20 || (unsigned char)u[i] > 0x7E || u[i] == '?' || u[i] == '#') {
                LDL__ETCD_ERR(e, "init", "a member URL holds a space, a control byte, '?' or '#'");
                return LDL_EINVAL;
            }
        if (strchr(u + 8, '/')) { LDL__ETCD_ERR(e, "init", "a member URL must not have a path"); return LDL_EINVAL; }
        e->_n++;
        if (!end) break;
        p = end + 1;
    }
    prefix = cfg->prefix ? cfg->prefix : "ldl/";
    for (i = 0; prefix[i]; i++)
        if ((unsigned char)prefix[i] < 0x20 || (unsigned char)prefix[i] > 0x7E) {
            LDL__ETCD_ERR(e, "init", "prefix: printable ASCII only");
            return LDL_EINVAL;
        }
    if (ldl__etcd_copy(e->_prefix, sizeof e->_prefix, prefix) != 0) { LDL__ETCD_ERR(e, "init", "prefix too long (max 63 bytes)"); return LDL_EINVAL; }
    if (!cfg->user != !cfg->password) { LDL__ETCD_ERR(e, "init", "user and password: both or neither"); return LDL_EINVAL; }
    if (!cfg->cert != !cfg->key_file) { LDL__ETCD_ERR(e, "init", "cert and key_file: both or neither"); return LDL_EINVAL; }
    if ((cfg->user && !*cfg->user) ||
        ldl__etcd_copy(e->_user, sizeof e->_user, cfg->user) != 0 ||
        ldl__etcd_copy(e->_pass, sizeof e->_pass, cfg->password) != 0) {
        LDL__ETCD_ERR(e, "init", "user or password empty or too long (max 127 bytes)");
        return LDL_EINVAL;
    }
    if (ldl__etcd_copy(e->_cacert, sizeof e->_cacert, cfg->cacert) != 0 ||
        ldl__etcd_copy(e->_cert, sizeof e->_cert, cfg->cert) != 0 ||
        ldl__etcd_copy(e->_keyf, sizeof e->_keyf, cfg->key_file) != 0) {
        LDL__ETCD_ERR(e, "init", "a TLS file path is too long (max 255 bytes)");
        return LDL_EINVAL;
    }
    {
        const char *nf = ldl__etcd_fits(e);
        if (nf) {
            LDL__ETCD_ERR(e, "init: a request body at the documented maxima of prefix, key and "
                             "owner does not fit LDL__ETCD_BODY_MAX", nf);
            return LDL_EINVAL;
        }
    }
    e->_attempt_ms = cfg->attempt_ms ? cfg->attempt_ms : LDL_ETCD_ATTEMPT_MS;
    e->_call_ms = cfg->call_ms ? cfg->call_ms : LDL_ETCD_CALL_MS;
    e->_connect_ms = cfg->connect_ms ? cfg->connect_ms : LDL_ETCD_CONNECT_MS;
    e->_session_ms = cfg->session_ms;
    if (e->_attempt_ms > 600000u || e->_call_ms > 600000u || e->_connect_ms > 600000u) {
        LDL__ETCD_ERR(e, "init", "attempt_ms, call_ms, connect_ms: at most 600000");
        return LDL_EINVAL;
    }
    e->_easy = curl_easy_init();
    if (!e->_easy) { LDL__ETCD_ERR(e, "init", "curl_easy_init failed"); return LDL_ESTORE; }
    e->_ok = 1;
    return LDL_OK;
}

static int ldl__etcd_revoke(ldl_etcd *e, int64_t lease, uint64_t deadline);

LDL_ETCD_API void ldl_etcd_close(ldl_etcd *e) {
    if (!e) return;
    if (e->_ok && e->_easy && e->_s_lease > 0)    /* the session's keys go with it */
        (void)ldl__etcd_revoke(e, e->_s_lease, ldl__etcd_now() + e->_call_ms);
    e->_s_lease = 0;
    if (e->_easy) curl_easy_cleanup(e->_easy);
    e->_easy = NULL;
    e->_ok = 0;
}

LDL_ETCD_API const char *ldl_etcd_why(const ldl_etcd *e) { return e ? e->_err : "NULL ldl_etcd"; }
LDL_ETCD_API int ldl_etcd_member(const ldl_etcd *e) { return e ? e->_cur : -1; }

/* ------------------------------------------------------------ one exchange (sync) */
/* POST e->_body to `x` on one member; the judge's verdict (root on OK) */
static int ldl__etcd_once(ldl_etcd *e, int member, int x, uint64_t deadline, cJSON **root,
                          const char **why, char *tmp, size_t tmpcap) {
    char url[LDL__ETCD_URL_MAX + 32];
    struct curl_slist *hdrs;
    uint64_t now = ldl__etcd_now();
    long http = 0, to;
    CURLcode cc;
    int v;
    *root = NULL;
    if (now >= deadline) { *why = "call bound (call_ms) passed"; return LDL__ETCD_X_NEXT; }
    to = (long)(deadline - now);
    if (to > (long)e->_attempt_ms) to = (long)e->_attempt_ms;
    snprintf(url, sizeof url, "%s%s", e->_ep[member], ldl__etcd_path(x));
    hdrs = ldl__etcd_headers(x == LDL__ETCD_AUTH ? NULL : e->_auth);
    if (!hdrs) { *why = "out of memory (headers)"; return LDL__ETCD_X_FATAL; }
    curl_easy_reset(e->_easy);
    if (ldl__etcd_setup(e, e->_easy, hdrs) != 0 ||
        curl_easy_setopt(e->_easy, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(e->_easy, CURLOPT_POSTFIELDS,
                         x == LDL__ETCD_AUTH || !e->_post ? e->_body : e->_post) != CURLE_OK ||
        curl_easy_setopt(e->_easy, CURLOPT_TIMEOUT_MS, to) != CURLE_OK ||
        curl_easy_setopt(e->_easy, CURLOPT_WRITEFUNCTION, ldl__etcd_write_e) != CURLE_OK ||
        curl_easy_setopt(e->_easy, CURLOPT_WRITEDATA, (void *)e) != CURLE_OK) {
        curl_slist_free_all(hdrs);
        *why = "curl_easy_setopt failed";
        return LDL__ETCD_X_FATAL;
    }
    e->_rlen = 0;
    e->_over = 0;
    cc = curl_easy_perform(e->_easy);
    curl_easy_getinfo(e->_easy, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_setopt(e->_easy, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_slist_free_all(hdrs);
    v = ldl__etcd_judge(cc, http, e->_reply, e->_rlen, e->_over, root, why, tmp, tmpcap);
    return v;
}

static int ldl__etcd_authenticate(ldl_etcd *e, int member, uint64_t deadline, const char **why,
                                  char *tmp, size_t tmpcap);

/* one exchange with failover over the members, within the deadline.
   0 with *root, or LDL_ESTORE (why set) */
static int ldl__etcd_x(ldl_etcd *e, int x, uint64_t deadline, cJSON **root) {
    char tmp[LDL__ETCD_ERR_MAX];
    const char *why = "no member answered";
    int tries = 0, authed = 0, m = e->_cur, v;
    char save[LDL__ETCD_BODY_MAX];
    *root = NULL;
    e->_ambig = 0;
    while (tries < 2 * e->_n + 1) {
        if (e->_user[0] && !e->_auth[0]) {
            memcpy(save, e->_body, sizeof save);
            v = ldl__etcd_authenticate(e, m, deadline, &why, tmp, sizeof tmp);
            memcpy(e->_body, save, sizeof save);
            if (v == LDL__ETCD_X_FATAL) break;
            if (v != LDL__ETCD_X_OK) { tries++; m = (m + 1) % e->_n; if (ldl__etcd_now() >= deadline) break; continue; }
        }
        v = ldl__etcd_once(e, m, x, deadline, root, &why, tmp, sizeof tmp);
        if (v == LDL__ETCD_X_OK) {
            const char *hw = NULL;
            int64_t rev;
            cJSON *hdr_of = *root;
            if (x == LDL__ETCD_KEEPALIVE) hdr_of = cJSON_GetObjectItemCaseSensitive(*root, "result");
            if (!cJSON_IsObject(hdr_of)) { why = "keepalive reply without a result"; cJSON_Delete(*root); *root = NULL; v = LDL__ETCD_X_NEXT; }
            else if (ldl__etcd_header(hdr_of, &e->_cluster, &rev, &hw) != 0) {
                why = hw;
                cJSON_Delete(*root);
                *root = NULL;
                /* another cluster is not a member to fail over to quietly: fatal */
                if (strstr(hw, "another cluster")) { v = LDL__ETCD_X_FATAL; break; }
                v = LDL__ETCD_X_NEXT;
            } else {
                e->_cur = m;
                return 0;
            }
        }
        if (v == LDL__ETCD_X_AUTH && e->_user[0] && !authed) { e->_auth[0] = '\0'; authed = 1; continue; }
        if (v == LDL__ETCD_X_FATAL || v == LDL__ETCD_X_AUTH) break;
        e->_ambig = 1;                     /* it may have been applied: the caller judges */
        tries++;
        m = (m + 1) % e->_n;
        if (ldl__etcd_now() >= deadline) break;
    }
    LDL__ETCD_ERR(e, ldl__etcd_path(x), why);
    return LDL_ESTORE;
}

static int ldl__etcd_authenticate(ldl_etcd *e, int member, uint64_t deadline, const char **why,
                                  char *tmp, size_t tmpcap) {
    cJSON *root = NULL, *tok;
    size_t n;
    int v;
    if (ldl__etcd_body_auth(e) != 0) { *why = "auth body too long, or out of memory"; return LDL__ETCD_X_FATAL; }
    v = ldl__etcd_once(e, member, LDL__ETCD_AUTH, deadline, &root, why, tmp, tmpcap);
    if (v != LDL__ETCD_X_OK) return v == LDL__ETCD_X_AUTH ? LDL__ETCD_X_FATAL : v;
    tok = cJSON_GetObjectItemCaseSensitive(root, "token");
    if (!cJSON_IsString(tok) || !*(tok)->valuestring ||
        ldl__etcd_copy(e->_auth, sizeof e->_auth, (tok)->valuestring) != 0) {
        cJSON_Delete(root);
        *why = "authenticate: no usable token in the reply";
        return LDL__ETCD_X_NEXT;
    }
    for (n = 0; e->_auth[n]; n++)
        if ((unsigned char)e->_auth[n] < 0x21 || (unsigned char)e->_auth[n] > 0x7E) {
            e->_auth[0] = '\0';
            cJSON_Delete(root);
            *why = "authenticate: the token holds a byte a header cannot carry";
            return LDL__ETCD_X_NEXT;
        }
    cJSON_Delete(root);
    return LDL__ETCD_X_OK;
}

/* ------------------------------------------------------------ the verbs (sync) */
/* a request body that does not fit: init proved the maxima fit, so this means a bug;
   still a store error WITH a why (every store error carries one) */
static int ldl__etcd_nobody(ldl_etcd *e, const char *kind) {
    LDL__ETCD_ERR(e, "request body does not fit LDL__ETCD_BODY_MAX", kind);
    return LDL_ESTORE;
}

static int ldl__etcd_revoke(ldl_etcd *e, int64_t lease, uint64_t deadline) {
    cJSON *root;
    if (ldl__etcd_body_lease(e->_body, sizeof e->_body, lease) != 0)
        return ldl__etcd_nobody(e, "lease");
    if (ldl__etcd_x(e, LDL__ETCD_REVOKE, deadline, &root) != 0) return LDL_ESTORE;
    cJSON_Delete(root);
    return 0;
}

/* the synchronous view's session (decision 1013): the key goes on the ldl_etcd's one
   lease, granted by the first session acquire; the txn and its proof are the per-lock
   ones. A lost race revokes nothing (the lease is shared); a compare failure whose key
   carries the session lease is 0, or LDL_ESTORE after an attempt that may have committed
   (it may be ours; nothing proves it) */
static int ldl__etcd_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms);
static int ldl__etcd_release(void *ctx, const char *key, int64_t token);

static int ldl__etcd_s_acquire(ldl_etcd *e, const char *key, const char *k64, const char *owner,
                               int64_t *token_out, uint64_t deadline) {
    cJSON *root;
    const char *why = NULL;
    ldl__etcd_kv kv;
    int64_t rev = 0;
    int ok, fresh = 0;
    if (!e->_s_lease) {
        fresh = 1;
        int64_t lease = 0, ttl = 0, grev = 0;
        if (ldl__etcd_body_grant(e->_body, sizeof e->_body, e->_session_ms) != 0)
            return ldl__etcd_nobody(e, "grant");
        if (ldl__etcd_x(e, LDL__ETCD_GRANT, deadline, &root) != 0) return LDL_ESTORE;
        if (ldl__etcd_i64(root, "ID", 0, &lease) != 0 || lease < 1 ||
            ldl__etcd_i64(cJSON_GetObjectItemCaseSensitive(root, "header"), "revision", 0, &grev) != 0) {
            cJSON_Delete(root);
            LDL__ETCD_ERR(e, "session lease grant", "reply without a lease ID or revision");
            return LDL_ESTORE;
        }
        if (ldl__etcd_i64(root, "TTL", 0, &ttl) != 0 || ttl < (int64_t)(((uint64_t)e->_session_ms + 999u) / 1000u)) {
            cJSON_Delete(root);
            ldl__etcd_revoke(e, lease, deadline);
            LDL__ETCD_ERR(e, "session lease grant", "the granted TTL is below the one asked for (or malformed)");
            return LDL_ESTORE;
        }
        cJSON_Delete(root);
        e->_s_lease = lease;
        e->_s_rev = grev;
    }
    if (ldl__etcd_body_put(e->_body, sizeof e->_body, k64, owner ? owner : "", ++e->_s_nonce, e->_s_lease) != 0)
        return ldl__etcd_nobody(e, "put");
    if (ldl__etcd_x(e, LDL__ETCD_TXN, deadline, &root) != 0) {
        if (strstr(e->_err, "lease not found")) e->_s_lease = 0;   /* the session ended */
        return LDL_ESTORE;
    }
    ok = ldl__etcd_put_reply(root, k64, e->_s_lease, &rev, &kv, &why);
    if (ok == 0 && kv.found && kv.lease == e->_s_lease && e->_ambig) {
        /* an attempt may have committed: this call's nonce on the key proves it did */
        ok = ldl__etcd_mine(kv.value64, e->_s_nonce, &why);
        rev = kv.create;
    }
    cJSON_Delete(root);
    if (ok < 0) { LDL__ETCD_ERR(e, "acquire (session)", why); return LDL_ESTORE; }
    e->_err[0] = '\0';
    if (ok == 0) return 0;
    if (!fresh) {
        /* the lease is older than this call: its expiry may be close. A keepalive sent now
           and its quorum read (the renew's own path) make the server's expiry later than
           the lock's deadline; if they fail, the key goes back */
        int rr = ldl__etcd_renew(e, key, rev, e->_session_ms);
        if (rr != 1) {
            char keep[LDL__ETCD_ERR_MAX];
            memcpy(keep, e->_err, sizeof keep);
            (void)ldl__etcd_release(e, key, rev);
            memcpy(e->_err, keep, sizeof keep);
            if (!e->_err[0]) LDL__ETCD_ERR(e, "acquire (session)", "the session lease is gone");
            return rr < 0 ? LDL_ESTORE : 0;
        }
    }
    *token_out = rev;
    return 1;
}

static int ldl__etcd_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                   int64_t *token_out) {
    ldl_etcd *e = (ldl_etcd *)ctx;
    char k64[LDL__ETCD_K64_MAX];
    cJSON *root;
    const char *why = NULL;
    ldl__etcd_kv kv;
    int64_t lease = 0, ttl = 0, rev = 0;
    uint64_t deadline;
    int ok;
    if (token_out) *token_out = 0;
    if (!e || !token_out) return LDL_EINVAL;
    if (!e->_ok) { LDL__ETCD_ERR(e, "acquire", "ldl_etcd not initialised"); return LDL_EINVAL; }
    if (!ldl__etcd_key_ok(key) || ttl_ms == 0) { LDL__ETCD_ERR(e, "acquire", "bad key or ttl_ms 0"); return LDL_EINVAL; }
    if (owner && !ldl__etcd_owner_ok(owner)) { LDL__ETCD_ERR(e, "acquire", "owner: 1..LDL_OWNER_MAX-1 bytes of printable ASCII"); return LDL_EINVAL; }
    if (ldl__etcd_key64(e->_prefix, key, k64, sizeof k64) != 0) { LDL__ETCD_ERR(e, "acquire", "key too long"); return LDL_EINVAL; }
    deadline = ldl__etcd_now() + e->_call_ms;
    if (e->_session_ms && ttl_ms == e->_session_ms) return ldl__etcd_s_acquire(e, key, k64, owner, token_out, deadline);
    /* 1. the lease */
    if (ldl__etcd_body_grant(e->_body, sizeof e->_body, ttl_ms) != 0)
        return ldl__etcd_nobody(e, "grant");
    if (ldl__etcd_x(e, LDL__ETCD_GRANT, deadline, &root) != 0) return LDL_ESTORE;
    if (ldl__etcd_i64(root, "ID", 0, &lease) != 0 || lease < 1) {
        cJSON_Delete(root);
        LDL__ETCD_ERR(e, "lease grant", "reply without a lease ID");
        return LDL_ESTORE;
    }
    if (ldl__etcd_i64(root, "TTL", 0, &ttl) != 0 || ttl < (int64_t)(((uint64_t)ttl_ms + 999u) / 1000u)) {
        /* a lease shorter than asked would outlive the lock's trust in it the wrong way
           round (the key frees before the holder stops trusting): never a grant */
        cJSON_Delete(root);
        ldl__etcd_revoke(e, lease, deadline);
        LDL__ETCD_ERR(e, "lease grant", "the granted TTL is below the one asked for (or malformed)");
        return LDL_ESTORE;
    }
    cJSON_Delete(root);
    /* 2. the transaction */
    if (ldl__etcd_body_put(e->_body, sizeof e->_body, k64, owner ? owner : "", 0, lease) != 0) {
        LDL__ETCD_ERR(e, "acquire", "request too long");
        ldl__etcd_revoke(e, lease, deadline);
        return LDL_EINVAL;
    }
    if (ldl__etcd_x(e, LDL__ETCD_TXN, deadline, &root) != 0) {
        char keep[LDL__ETCD_ERR_MAX];
        memcpy(keep, e->_err, sizeof keep);
        ldl__etcd_revoke(e, lease, deadline + e->_attempt_ms);   /* may have committed: undo */
        memcpy(e->_err, keep, sizeof keep);
        return LDL_ESTORE;
    }
    ok = ldl__etcd_put_reply(root, k64, lease, &rev, &kv, &why);
    if (ok == 0 && kv.found && kv.lease == lease) {
        ok = 1;                                 /* an earlier attempt of this call committed */
        rev = kv.create;
    }
    cJSON_Delete(root);
    if (ok == 1) {
        *token_out = rev;
        e->_err[0] = '\0';
        return 1;
    }
    {
        char keep[LDL__ETCD_ERR_MAX];
        if (ok < 0) LDL__ETCD_ERR(e, "acquire", why);
        memcpy(keep, e->_err, sizeof keep);
        ldl__etcd_revoke(e, lease, deadline + e->_attempt_ms);   /* lost the race (or a bad reply) */
        memcpy(e->_err, keep, sizeof keep);
    }
    return ok < 0 ? LDL_ESTORE : 0;
}

static int ldl__etcd_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    return ldl__etcd_acquire_owned(ctx, key, ttl_ms, NULL, token_out);
}

/* range the key: LDL_OK with kv, or LDL_ESTORE */
static int ldl__etcd_get(ldl_etcd *e, const char *k64, uint64_t deadline, ldl__etcd_kv *kv,
                         char *value64, size_t vcap) {
    cJSON *root;
    const char *why = NULL;
    if (ldl__etcd_body_range(e->_body, sizeof e->_body, k64) != 0)
        return ldl__etcd_nobody(e, "range");
    if (ldl__etcd_x(e, LDL__ETCD_RANGE, deadline, &root) != 0) return LDL_ESTORE;
    if (ldl__etcd_range_kv(root, k64, kv, &why) != 0) {
        cJSON_Delete(root);
        LDL__ETCD_ERR(e, "range", why);
        return LDL_ESTORE;
    }
    if (value64) {
        if (ldl__etcd_copy(value64, vcap, kv->value64) != 0) {
            cJSON_Delete(root);
            LDL__ETCD_ERR(e, "range", "value too long");
            return LDL_ESTORE;
        }
    }
    kv->value64 = "";
    cJSON_Delete(root);
    return LDL_OK;
}

/* the session's quorum read on the current member only (no failover: it must prove the
   member that just renewed). 0, or -1 (why set) */
static int ldl__etcd_quorum(ldl_etcd *e, uint64_t deadline) {
    char tmp[LDL__ETCD_ERR_MAX], p64[LDL__ETCD_K64_MAX];
    const char *why = "no member answered";
    cJSON *root = NULL;
    int64_t rev;
    if (ldl__etcd_key64(e->_prefix, "", p64, sizeof p64) != 0 ||
        ldl__etcd_body_quorum(e->_body, sizeof e->_body, p64) != 0) return ldl__etcd_nobody(e, "quorum");
    if (ldl__etcd_once(e, e->_cur, LDL__ETCD_RANGE, deadline, &root, &why, tmp, sizeof tmp) != LDL__ETCD_X_OK) {
        LDL__ETCD_ERR(e, "quorum read after the keepalive", why);
        return -1;
    }
    if (ldl__etcd_header(root, &e->_cluster, &rev, &why) != 0) {
        cJSON_Delete(root);
        LDL__ETCD_ERR(e, "quorum read after the keepalive", why);
        return -1;
    }
    cJSON_Delete(root);
    return 0;
}

static int ldl__etcd_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    ldl_etcd *e = (ldl_etcd *)ctx;
    char k64[LDL__ETCD_K64_MAX];
    ldl__etcd_kv kv;
    cJSON *root, *res;
    int64_t id = 0, ttl = 0;
    uint64_t deadline;
    int sess, attempt;
    if (!e) return LDL_EINVAL;
    if (!e->_ok) { LDL__ETCD_ERR(e, "renew", "ldl_etcd not initialised"); return LDL_EINVAL; }
    if (!ldl__etcd_key_ok(key) || token < 1 || ttl_ms == 0 ||
        ldl__etcd_key64(e->_prefix, key, k64, sizeof k64) != 0) {
        LDL__ETCD_ERR(e, "renew", "bad key, token or ttl_ms");
        return LDL_EINVAL;
    }
    deadline = ldl__etcd_now() + e->_call_ms;
    sess = e->_session_ms && ttl_ms == e->_session_ms;
    if (sess) {
        /* the session, per call (decision 1013): no range of the key -- a key put with
           the live session lease is still ours -- a keepalive of that lease, sent now,
           after the lock read start', then a quorum read on the member that renewed. A
           fence not above the lease's grant revision belongs to an older session lease: 0 */
        if (!e->_s_lease || token <= e->_s_rev) { LDL__ETCD_ERR(e, "renew", "not a key of the live session lease"); return 0; }
        kv.lease = e->_s_lease;
    } else {
        if (ldl__etcd_get(e, k64, deadline, &kv, NULL, 0) != LDL_OK) return LDL_ESTORE;
        if (!kv.found || kv.create != token || kv.lease < 1) { e->_err[0] = '\0'; return 0; }
    }
    for (attempt = 0;; attempt++) {
        if (ldl__etcd_body_lease(e->_body, sizeof e->_body, kv.lease) != 0)
            return ldl__etcd_nobody(e, "lease");
        if (ldl__etcd_x(e, LDL__ETCD_KEEPALIVE, deadline, &root) != 0) return LDL_ESTORE;
        res = cJSON_GetObjectItemCaseSensitive(root, "result");
        if (ldl__etcd_i64(res, "ID", 0, &id) != 0 || id != kv.lease || ldl__etcd_i64(res, "TTL", 1, &ttl) != 0) {
            cJSON_Delete(root);
            LDL__ETCD_ERR(e, "keepalive", "reply names another lease or has a malformed TTL");
            return LDL_ESTORE;
        }
        cJSON_Delete(root);
        e->_err[0] = '\0';
        if (ttl <= 0 && kv.lease == e->_s_lease) e->_s_lease = 0; /* the session ended */
        if (ttl <= 0) return 0;                                  /* the lease is gone */
        if ((uint64_t)ttl * 1000u < (uint64_t)ttl_ms) {
            LDL__ETCD_ERR(e, "renew", "the lease's TTL does not cover ttl_ms");
            return 0;
        }
        if (!sess || ldl__etcd_quorum(e, deadline) == 0) return 1;
        /* no quorum behind the member that renewed: the keepalive again on the next one */
        if (attempt + 1 >= e->_n || ldl__etcd_now() >= deadline) return LDL_ESTORE;
        e->_cur = (e->_cur + 1) % e->_n;
    }
}

static int ldl__etcd_release(void *ctx, const char *key, int64_t token) {
    ldl_etcd *e = (ldl_etcd *)ctx;
    char k64[LDL__ETCD_K64_MAX];
    ldl__etcd_kv kv;
    cJSON *root, *r;
    const char *why = NULL;
    uint64_t deadline;
    int ok;
    if (!e) return LDL_EINVAL;
    if (!e->_ok) { LDL__ETCD_ERR(e, "release", "ldl_etcd not initialised"); return LDL_EINVAL; }
    if (!ldl__etcd_key_ok(key) || token < 1 || ldl__etcd_key64(e->_prefix, key, k64, sizeof k64) != 0) {
        LDL__ETCD_ERR(e, "release", "bad key or token");
        return LDL_EINVAL;
    }
    deadline = ldl__etcd_now() + e->_call_ms;
    if (ldl__etcd_body_del(e->_body, sizeof e->_body, k64, token) != 0)
        return ldl__etcd_nobody(e, "del");
    if (ldl__etcd_x(e, LDL__ETCD_TXN, deadline, &root) != 0) return LDL_ESTORE;
    ok = ldl__etcd_succeeded(root);
    memset(&kv, 0, sizeof kv);
    if (ok == 1) {
        r = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!r || ldl__etcd_range_kv(r, k64, &kv, &why) != 0 || !kv.found || kv.create != token ||
            !ldl__etcd_txn_resp(root, 1, "response_delete_range")) {
            if (!why) why = "txn reply: the range does not show this fence, or no delete response";
            ok = -1;
        }
    } else if (ok == 0) {
        r = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!r || ldl__etcd_range_kv(r, k64, &kv, &why) != 0) {
            if (!why) why = "txn reply: no range response";
            ok = -1;
        } else if (!kv.found && e->_ambig) ok = 2;   /* an earlier attempt deleted it, or it
                                                        expired and was not retaken: 1 */
        kv.lease = 0;
    } else why = "txn reply: succeeded is not a boolean";
    cJSON_Delete(root);
    if (ok < 0) { LDL__ETCD_ERR(e, "release", why); return LDL_ESTORE; }
    e->_err[0] = '\0';
    if (ok == 0) return 0;
    if (ok == 2) return 1;
    if (kv.lease > 0 && kv.lease != e->_s_lease && ldl__etcd_revoke(e, kv.lease, deadline) != 0) {
        /* the key is gone; the lease runs out by itself (why keeps the text) */
    }
    return 1;
}

/* the fenced write's txn body, in a buffer of its own (malloc: the target and value are
   up to LDL_ETCD_WRITE_MAX bytes each, past LDL__ETCD_BODY_MAX): compare the lock key's
   create_revision with the fence; if equal, range the lock key (the reply's proof) and
   put/delete the target; else range it. The body (free it), or NULL (why set) */
static char *ldl__etcd_fenced_body(ldl_etcd *e, const ldl_etcd_write *w, const char *k64, size_t k64cap,
                                   size_t tn) {
    char *body, *scratch, *t64, *v64;
    size_t cap, t64n, v64n;
    int n;
    t64n = (tn + 2) / 3 * 4 + 1;
    v64n = (w->value_len + 2) / 3 * 4 + 1;
    cap = 3 * k64cap + t64n + v64n + 400;
    scratch = (char *)malloc(t64n + v64n);
    body = (char *)malloc(cap);
    if (!scratch || !body) {
        free(scratch);
        free(body);
        LDL__ETCD_ERR(e, "fenced", "out of memory (request body)");
        return NULL;
    }
    t64 = scratch;
    v64 = scratch + t64n;
    if (ldl__etcd_b64enc((const unsigned char *)w->target, tn, t64, t64n) != 0 ||
        ldl__etcd_b64enc((const unsigned char *)(w->value ? w->value : ""), w->value_len, v64, v64n) != 0)
        n = -1;
    else if (w->del)
        n = snprintf(body, cap,
            "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\",\"create_revision\":\"%lld\"}],"
            "\"success\":[{\"request_range\":{\"key\":\"%s\"}},{\"request_delete_range\":{\"key\":\"%s\"}}],"
            "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
            k64, (long long)w->fence, k64, t64, k64);
    else
        n = snprintf(body, cap,
            "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\",\"create_revision\":\"%lld\"}],"
            "\"success\":[{\"request_range\":{\"key\":\"%s\"}},{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}],"
            "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
            k64, (long long)w->fence, k64, t64, v64, k64);
    free(scratch);
    if (ldl__etcd_fit(n, cap) != 0) {
        free(body);
        LDL__ETCD_ERR(e, "fenced", "request body does not fit");
        return NULL;
    }
    return body;
}

/* the fenced write: one txn (ldl__etcd_fenced_body); its reply must prove what it answers */
LDL_ETCD_API int ldl_etcd_fenced(ldl_etcd *e, const ldl_etcd_write *w) {
    char k64[LDL__ETCD_K64_MAX];
    char *body;
    size_t tn = 0;
    cJSON *root;
    ldl__etcd_kv kv;
    const char *why = NULL;
    uint64_t deadline;
    int ok;
    if (!e) return LDL_EINVAL;
    if (!e->_ok) { LDL__ETCD_ERR(e, "fenced", "ldl_etcd not initialised"); return LDL_EINVAL; }
    if (!w || !ldl__etcd_key_ok(w->key) || w->fence < 1 || !w->target || !w->target[0] ||
        (tn = strlen(w->target)) > LDL_ETCD_WRITE_MAX || w->value_len > LDL_ETCD_WRITE_MAX ||
        (w->value_len && !w->value) || ldl__etcd_key64(e->_prefix, w->key, k64, sizeof k64) != 0) {
        LDL__ETCD_ERR(e, "fenced", "want a lock key, a fence >= 1, a target and at most "
                                   "LDL_ETCD_WRITE_MAX bytes of target and value");
        return LDL_EINVAL;
    }
    body = ldl__etcd_fenced_body(e, w, k64, sizeof k64, tn);
    if (!body) return LDL_ESTORE;
    deadline = ldl__etcd_now() + e->_call_ms;
    e->_post = body;
    ok = ldl__etcd_x(e, LDL__ETCD_TXN, deadline, &root);
    e->_post = NULL;
    free(body);
    if (ok != 0) return LDL_ESTORE;
    ok = ldl__etcd_succeeded(root);
    if (ok >= 0) {
        /* the proof: the lock key as the txn saw it. Success must show the key with this
           fence AND the write's response; failure must NOT show it with this fence */
        cJSON *rr = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!rr || ldl__etcd_range_kv(rr, k64, &kv, &why) != 0) {
            if (!why) why = "txn reply: no range of the lock key";
            ok = -1;
        } else if (ok == 1 && (!kv.found || kv.create != w->fence ||
                               !ldl__etcd_txn_resp(root, 1, w->del ? "response_delete_range" : "response_put"))) {
            why = "txn reply: the range does not show this fence, or no write response";
            ok = -1;
        } else if (ok == 0 && kv.found && kv.create == w->fence) {
            why = "txn reply: the compare failed but the range shows this fence";
            ok = -1;
        }
    } else why = "txn reply: succeeded is not a boolean";
    cJSON_Delete(root);
    if (ok < 0) { LDL__ETCD_ERR(e, "fenced", why); return LDL_ESTORE; }
    e->_err[0] = '\0';
    if (ok == 0) LDL__ETCD_ERR(e, "fenced", "refused: the lock key is gone or holds another fence");
    return ok;
}

static int ldl__etcd_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_etcd *e = (ldl_etcd *)ctx;
    char k64[LDL__ETCD_K64_MAX], v64[LDL__ETCD_V64_MAX + 8];
    unsigned char raw[LDL__ETCD_V64_MAX];
    const char *why = NULL;
    ldl__etcd_kv kv;
    cJSON *root;
    int64_t ttl = 0, id = 0;
    uint64_t deadline, nonce;
    long n;
    if (out) memset(out, 0, sizeof *out);
    if (!e || !out) return LDL_EINVAL;
    if (!e->_ok) { LDL__ETCD_ERR(e, "inspect", "ldl_etcd not initialised"); return LDL_EINVAL; }
    if (!ldl__etcd_key_ok(key) || ldl__etcd_key64(e->_prefix, key, k64, sizeof k64) != 0) {
        LDL__ETCD_ERR(e, "inspect", "bad key");
        return LDL_EINVAL;
    }
    deadline = ldl__etcd_now() + e->_call_ms;
    if (ldl__etcd_get(e, k64, deadline, &kv, v64, sizeof v64) != LDL_OK) return LDL_ESTORE;
    if (!kv.found) { e->_err[0] = '\0'; return 0; }
    if (kv.lease < 1) { LDL__ETCD_ERR(e, "inspect", "the key carries no lease: not the adapter's"); return LDL_ESTORE; }
    /* the owner alone: a session key's value also carries its acquire's nonce */
    if (ldl__etcd_value(v64, raw, sizeof raw, &n, &nonce, &why) != 0) { LDL__ETCD_ERR(e, "inspect", why); return LDL_ESTORE; }
    if (ldl__etcd_body_lease(e->_body, sizeof e->_body, kv.lease) != 0)
        return ldl__etcd_nobody(e, "lease");
    if (ldl__etcd_x(e, LDL__ETCD_TTL, deadline, &root) != 0) return LDL_ESTORE;
    if (ldl__etcd_i64(root, "ID", 0, &id) != 0 || id != kv.lease || ldl__etcd_i64(root, "TTL", 1, &ttl) != 0) {
        cJSON_Delete(root);
        LDL__ETCD_ERR(e, "timetolive", "reply names another lease or has a malformed TTL");
        return LDL_ESTORE;
    }
    cJSON_Delete(root);
    e->_err[0] = '\0';
    if (ttl <= 0) return 0;                                  /* expiring: free a moment from now */
    out->token = kv.create;
    out->ttl_left_ms = ttl > 4294967 ? UINT32_MAX : (uint32_t)(ttl * 1000);
    memcpy(out->owner, raw, (size_t)n);
    out->owner[n] = '\0';
    return 1;
}

LDL_ETCD_API ldl_store ldl_etcd_store(ldl_etcd *e) {
    ldl_store st;
    memset(&st, 0, sizeof st);
    if (!e) return st;
    st.acquire = ldl__etcd_acquire;
    st.renew = ldl__etcd_renew;
    st.release = ldl__etcd_release;
    st.ctx = e;
    return st;
}

LDL_ETCD_API ldl_store_ext ldl_etcd_ext(ldl_etcd *e) {
    ldl_store_ext x;
    memset(&x, 0, sizeof x);
    if (!e || !e->_ok) return x;
    x.acquire_owned = ldl__etcd_acquire_owned;
    x.inspect = ldl__etcd_inspect;
    x.ctx = e;
    return x;
}

#ifndef LDL_NO_ASYNC
/* ------------------------------------------------------------ the non-blocking view */
/* steps of a request (each one HTTP exchange) */
#define LDL__ETCD_S_GRANT 1
#define LDL__ETCD_S_PUT 2
#define LDL__ETCD_S_RANGE 3
#define LDL__ETCD_S_KEEPALIVE 4
#define LDL__ETCD_S_QUORUM 7    /* the session keepalive's linearizable read */
#define LDL__ETCD_S_DEL 5
#define LDL__ETCD_S_REVOKE 6
/* a session renew's op in a wait list: store_data = the next op | 1 (an ldl_etcd_req
   pointer never has the low bit set) */
#define LDL__ETCD_SLINK(next) ((uintptr_t)(next) | (uintptr_t)1u)
#define LDL__ETCD_SNEXT(op) ((ldl_op *)((op)->store_data & ~(uintptr_t)1u))

static int ldl__etcd_step_x(int step) {
    switch (step) {
    case LDL__ETCD_S_GRANT: return LDL__ETCD_GRANT;
    case LDL__ETCD_S_PUT: case LDL__ETCD_S_DEL: return LDL__ETCD_TXN;
    case LDL__ETCD_S_RANGE: case LDL__ETCD_S_QUORUM: return LDL__ETCD_RANGE;
    case LDL__ETCD_S_KEEPALIVE: return LDL__ETCD_KEEPALIVE;
    default: return LDL__ETCD_REVOKE;
    }
}

static size_t ldl__etcd_write_r(char *p, size_t sz, size_t nm, void *ud) {
    ldl_etcd_req *r = (ldl_etcd_req *)ud;
    if (nm && sz > (size_t)-1 / nm) { r->_over = 1; return 0; }
    return ldl__etcd_sink(r->_reply, &r->_rlen, &r->_over, p, sz * nm);
}

static void ldl__etcd_aerr(ldl_etcd_async *ea, const char *what, const char *why) {
    ldl__etcd_seterr(ea->_err, sizeof ea->_err, what, why);
}

static void ldl__etcd_s_answer(ldl_etcd_async *ea, ldl_etcd_req *ka, int rc, int64_t ttl_s);
static void ldl__etcd_s_unpark(ldl_etcd_async *ea, int64_t lease);
static void ldl__etcd_s_gone(ldl_etcd_async *ea);

/* the request is over: answer its op (if still attached), free it */
static void ldl__etcd_finish(ldl_etcd_async *ea, ldl_etcd_req *r, int rc, int64_t token, int answered) {
    if (!r->_live) return;                    /* finished already */
    if (r->_ska) {                            /* the session keepalive: answer its riders */
        r->_live = 0;
        if (ea->_s_ka == r) ea->_s_ka = NULL;
        ldl__etcd_s_answer(ea, r, rc, token);
        r->_live = 1;
        r->_ska = 0;
        token = 0;
    }
    if (r->_sgrant) {                         /* the session grant failed: so do its waiters */
        r->_sgrant = 0;
        ea->_s_granting = 0;
        ldl__etcd_s_unpark(ea, 0);
    }
    if (r->_op) {
        ldl_op *op = r->_op;
        op->store_data = 0;
        ldl_op_complete(op, rc, r->_kind == LDL_OP_ACQUIRE ? token : 0);
    }
    if (answered) ea->_stats.answered++;
    else ea->_stats.failed++;
    r->_op = NULL;
    r->_live = 0;
    r->_busy = 0;
    r->_next = ea->_free;
    ea->_free = r;
    if (ea->_stats.live) ea->_stats.live--;
}

/* queue the current step's exchange for the next pump (no libcurl call) */
static int ldl__etcd_launch(ldl_etcd_async *ea, ldl_etcd_req *r) {
    r->_queued = 1;
    r->_next = NULL;
    if (ea->_qtail) ea->_qtail->_next = r;
    else ea->_qhead = r;
    ea->_qtail = r;
    return 0;
}

/* build the body of the current step and put the exchange on the multi
   handle (no I/O). 0, or -1 (the request must end: why set) */
static int ldl__etcd_start(ldl_etcd_async *ea, ldl_etcd_req *r) {
    ldl_etcd *e = ea->_e;
    char k64[LDL__ETCD_K64_MAX], url[LDL__ETCD_URL_MAX + 32];
    uint64_t now = ldl__etcd_now();
    long to;
    int b;
    if (now >= r->_deadline) { ldl__etcd_aerr(ea, "request", "call bound (call_ms) passed"); return -1; }
    to = (long)(r->_deadline - now);
    if (to > (long)e->_attempt_ms) to = (long)e->_attempt_ms;
    if (ldl__etcd_key64(e->_prefix, r->_key, k64, sizeof k64) != 0) return -1;
    switch (r->_step) {
    case LDL__ETCD_S_GRANT: b = ldl__etcd_body_grant(r->_body, sizeof r->_body, r->_ttl); break;
    case LDL__ETCD_S_PUT: b = ldl__etcd_body_put(r->_body, sizeof r->_body, k64, r->_owner, r->_nonce, r->_lease); break;
    case LDL__ETCD_S_RANGE: b = ldl__etcd_body_range(r->_body, sizeof r->_body, k64); break;
    case LDL__ETCD_S_QUORUM: b = ldl__etcd_body_quorum(r->_body, sizeof r->_body, k64); break;
    case LDL__ETCD_S_DEL: b = ldl__etcd_body_del(r->_body, sizeof r->_body, k64, r->_token); break;
    default: b = ldl__etcd_body_lease(r->_body, sizeof r->_body, r->_lease); break;
    }
    if (b != 0) { ldl__etcd_aerr(ea, "request", "body too long"); return -1; }
    snprintf(url, sizeof url, "%s%s", e->_ep[r->_member], ldl__etcd_path(ldl__etcd_step_x(r->_step)));
    if (!r->_easy) {
        /* a new handle gets the options that never change (the view's ldl_etcd, headers,
           callbacks); rebind throws the handles away, so they always match */
        r->_easy = curl_easy_init();
        if (!r->_easy) { ldl__etcd_aerr(ea, "request", "curl_easy_init failed"); return -1; }
        if (ldl__etcd_setup(e, r->_easy, ea->_hdrs) != 0 ||
            curl_easy_setopt(r->_easy, CURLOPT_WRITEFUNCTION, ldl__etcd_write_r) != CURLE_OK ||
            curl_easy_setopt(r->_easy, CURLOPT_WRITEDATA, (void *)r) != CURLE_OK ||
            curl_easy_setopt(r->_easy, CURLOPT_PRIVATE, (void *)r) != CURLE_OK) {
            curl_easy_cleanup(r->_easy);
            r->_easy = NULL;
            ldl__etcd_aerr(ea, "request", "curl_easy_setopt failed");
            return -1;
        }
    }
    if (curl_easy_setopt(r->_easy, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(r->_easy, CURLOPT_POSTFIELDS, r->_body) != CURLE_OK ||
        curl_easy_setopt(r->_easy, CURLOPT_TIMEOUT_MS, to) != CURLE_OK) {
        ldl__etcd_aerr(ea, "request", "curl_easy_setopt failed");
        return -1;
    }
    r->_rlen = 0;
    r->_over = 0;
    if (curl_multi_add_handle(ea->_multi, r->_easy) != CURLM_OK) {
        ldl__etcd_aerr(ea, "request", "curl_multi_add_handle failed");
        return -1;
    }
    r->_busy = 1;
    ea->_again = 1;
    return 0;
}

static void ldl__etcd_fail(ldl_etcd_async *ea, ldl_etcd_req *r, const char *what, const char *why);

/* start up to max queued exchanges; answers how many */
static int ldl__etcd_drain(ldl_etcd_async *ea, int max) {
    int n = 0;
    while (ea->_qhead && n < max) {
        ldl_etcd_req *r = ea->_qhead;
        ea->_qhead = r->_next;
        if (!ea->_qhead) ea->_qtail = NULL;
        r->_next = NULL;
        r->_queued = 0;
        if (!r->_op && r->_kind == LDL_OP_ACQUIRE && r->_step == LDL__ETCD_S_GRANT && !r->_sgrant) {
            ldl__etcd_finish(ea, r, 0, 0, 1);     /* cancelled before anything was sent */
            continue;
        }
        n++;
        if (ldl__etcd_start(ea, r) != 0) ldl__etcd_fail(ea, r, "request", ea->_err);
    }
    return n;
}

/* move to step `step` on the member that answered; finish on failure */
static void ldl__etcd_next(ldl_etcd_async *ea, ldl_etcd_req *r, int step) {
    r->_step = step;
    r->_tries = 0;
    r->_ambig = 0;
    if (step == LDL__ETCD_S_REVOKE) r->_deadline += ea->_e->_attempt_ms; /* room for the clean-up */
    (void)ldl__etcd_launch(ea, r);
}

/* answer r's op now, if it is still attached, and detach it: the request itself goes on
   (a clean-up: the revoke of a lease, the delete of a key) */
static void ldl__etcd_answer(ldl_etcd_req *r, int rc) {
    ldl_op *op = r->_op;
    if (!op) return;
    op->store_data = 0;
    r->_op = NULL;
    ldl_op_complete(op, rc, 0);
}

/* the request failed for good at its current step */
static void ldl__etcd_fail(ldl_etcd_async *ea, ldl_etcd_req *r, const char *what, const char *why) {
    if (why != ea->_err) ldl__etcd_aerr(ea, what, why);
    if (r->_sess && r->_step == LDL__ETCD_S_PUT && r->_lease == ea->_s_lease && strstr(ea->_err, "lease not found"))
        ldl__etcd_s_gone(ea);             /* the session ended: the next acquire grants anew */
    if (r->_step == LDL__ETCD_S_REVOKE) { ldl__etcd_finish(ea, r, r->_rc, r->_token, 1); return; }
    if (r->_sess && r->_kind == LDL_OP_ACQUIRE && r->_token > 0 &&
        (r->_step == LDL__ETCD_S_KEEPALIVE || r->_step == LDL__ETCD_S_QUORUM)) {
        /* the key was put but its lease could not be proved fresh: no grant; delete it */
        ldl__etcd_answer(r, LDL_ESTORE);
        r->_kind = LDL_OP_RELEASE;
        r->_rc = LDL_ESTORE;
        r->_deadline = ldl__etcd_now() + ea->_e->_call_ms;
        ldl__etcd_next(ea, r, LDL__ETCD_S_DEL);
        return;
    }
    if (r->_kind == LDL_OP_ACQUIRE && r->_step == LDL__ETCD_S_PUT && !r->_sess) {
        /* the put may have committed: revoke the fresh lease (removes the key) */
        r->_rc = LDL_ESTORE;
        r->_token = 0;
        ldl__etcd_next(ea, r, LDL__ETCD_S_REVOKE);
        return;
    }
    ldl__etcd_finish(ea, r, LDL_ESTORE, 0, 0);
}

/* judge r's finished exchange, its reply header included: LDL__ETCD_X_OK with *root
   (decref it) and the header's *rev, else the verdict with *why */
static int ldl__etcd_judge_r(ldl_etcd_async *ea, ldl_etcd_req *r, CURLcode cc, cJSON **root, int64_t *rev,
                             const char **why, char *tmp, size_t tmpcap) {
    cJSON *hdr;
    long http = 0;
    int v;
    curl_easy_getinfo(r->_easy, CURLINFO_RESPONSE_CODE, &http);
    ea->_stats.exchanges++;
    v = ldl__etcd_judge(cc, http, r->_reply, r->_rlen, r->_over, root, why, tmp, tmpcap);
    if (v == LDL__ETCD_X_OK) {
        hdr = r->_step == LDL__ETCD_S_KEEPALIVE ? cJSON_GetObjectItemCaseSensitive(*root, "result") : *root;
        if (!cJSON_IsObject(hdr)) { *why = "keepalive reply without a result"; v = LDL__ETCD_X_NEXT; }
        else if (ldl__etcd_header(hdr, &ea->_e->_cluster, rev, why) != 0)
            v = strstr(*why, "another cluster") ? LDL__ETCD_X_FATAL : LDL__ETCD_X_NEXT;
        if (v != LDL__ETCD_X_OK) { cJSON_Delete(*root); *root = NULL; }
    }
    return v;
}

/* r's exchange got no usable answer (verdict v): the same step again on the next member
   while its bound allows (the attempt may have been applied: _ambig), else it fails */
static void ldl__etcd_retry(ldl_etcd_async *ea, ldl_etcd_req *r, int v, const char *what, const char *why) {
    ldl_etcd *e = ea->_e;
    if (v == LDL__ETCD_X_FATAL && r->_step == LDL__ETCD_S_REVOKE) {
        /* "lease not found": already gone, which is what the revoke wanted */
        ldl__etcd_finish(ea, r, r->_rc, r->_token, 1);
        return;
    }
    if (v == LDL__ETCD_X_NEXT && ldl__etcd_now() < r->_deadline && r->_tries < 2 * e->_n) {
        r->_tries++;
        r->_ambig = 1;
        r->_member = (r->_member + 1) % e->_n;
        /* a quorum read proves only the member it went to: on the next member the
           keepalive goes first again */
        if (r->_step == LDL__ETCD_S_QUORUM) r->_step = LDL__ETCD_S_KEEPALIVE;
        ea->_stats.failovers++;
        if (ldl__etcd_launch(ea, r) == 0) return;
    }
    ldl__etcd_fail(ea, r, what, why);
}

/* S_GRANT answered: a lease of at least the TTL asked for goes on to the put (the
   view's session lease unparks the acquires waiting for it); a shorter one goes back */
static void ldl__etcd_on_grant(ldl_etcd_async *ea, ldl_etcd_req *r, cJSON *root, int64_t rev, const char *what) {
    int64_t id = 0, ttl = 0;
    if (ldl__etcd_i64(root, "ID", 0, &id) != 0 || id < 1) {
        cJSON_Delete(root);
        ldl__etcd_fail(ea, r, what, "reply without a lease ID");
        return;
    }
    if (ldl__etcd_i64(root, "TTL", 0, &ttl) != 0 || ttl < (int64_t)(((uint64_t)r->_ttl + 999u) / 1000u)) {
        /* shorter than asked: never a grant; the lease goes back */
        cJSON_Delete(root);
        ldl__etcd_aerr(ea, what, "the granted TTL is below the one asked for (or malformed)");
        ldl__etcd_answer(r, LDL_ESTORE);
        r->_lease = id;
        r->_rc = LDL_ESTORE;
        r->_token = 0;
        ldl__etcd_next(ea, r, LDL__ETCD_S_REVOKE);
        return;
    }
    cJSON_Delete(root);
    r->_lease = id;
    if (r->_sgrant) {
        /* the view's session lease: every parked session acquire goes on with it */
        r->_sgrant = 0;
        r->_fresh = 1;                    /* granted after this acquire's start' */
        ea->_s_granting = 0;
        ea->_s_lease = id;
        ea->_s_rev = rev;
        ea->_stats.session_grants++;
        ldl__etcd_s_unpark(ea, id);
        if (!r->_op) { ldl__etcd_finish(ea, r, 0, 0, 1); return; }          /* cancelled */
        ldl__etcd_next(ea, r, LDL__ETCD_S_PUT);
        return;
    }
    if (!r->_op) { r->_rc = 0; ldl__etcd_next(ea, r, LDL__ETCD_S_REVOKE); return; }  /* cancelled */
    ldl__etcd_next(ea, r, LDL__ETCD_S_PUT);
}

/* S_PUT of a session acquire answered (decision 1013): the proof is the per-lock one with
   the session lease; a compare failure after an ambiguous attempt is this call's grant
   only if the key carries this call's nonce; nothing is ever revoked (the lease is shared) */
static void ldl__etcd_on_sput(ldl_etcd_async *ea, ldl_etcd_req *r, cJSON *root, const char *k64, const char *what) {
    const char *why = NULL;
    ldl__etcd_kv kv;
    int64_t fence = 0;
    int ok = ldl__etcd_put_reply(root, k64, r->_lease, &fence, &kv, &why);
    if (ok == 0 && kv.found && kv.lease == r->_lease && r->_ambig) {
        /* an attempt may have committed: this call's nonce on the key proves it did */
        ok = ldl__etcd_mine(kv.value64, r->_nonce, &why);
        fence = kv.create;
    }
    cJSON_Delete(root);
    if (ok == 1 && r->_op && !r->_fresh) {
        /* the lease is older than this acquire: its expiry may be close. Only a
           keepalive sent now (after start') and its quorum read make the server's
           expiry later than the lock's deadline (chaos found it: keys put on a
           lease about to expire were taken by another client 90 ms later) */
        r->_token = fence;
        ldl__etcd_next(ea, r, LDL__ETCD_S_KEEPALIVE);
        return;
    }
    if (ok == 1 && r->_op) { ldl__etcd_finish(ea, r, 1, fence, 1); return; }
    if (ok == 1) {                        /* cancelled: hand the key back (fenced delete) */
        ea->_stats.handed_back++;
        r->_kind = LDL_OP_RELEASE;
        r->_token = fence;
        ldl__etcd_next(ea, r, LDL__ETCD_S_DEL);
        return;
    }
    if (ok < 0) ldl__etcd_aerr(ea, what, why);
    ldl__etcd_finish(ea, r, ok < 0 ? LDL_ESTORE : 0, 0, 1);
}

/* S_PUT of a per-lock acquire answered: the grant; else the fresh lease goes back */
static void ldl__etcd_on_put(ldl_etcd_async *ea, ldl_etcd_req *r, cJSON *root, const char *k64, const char *what) {
    const char *why = NULL;
    ldl__etcd_kv kv;
    int64_t fence = 0;
    int ok = ldl__etcd_put_reply(root, k64, r->_lease, &fence, &kv, &why);
    if (ok == 0 && kv.found && kv.lease == r->_lease) { ok = 1; fence = kv.create; }  /* an earlier attempt committed */
    cJSON_Delete(root);
    if (ok == 1 && r->_op) { ldl__etcd_finish(ea, r, 1, fence, 1); return; }
    if (ok == 1) ea->_stats.handed_back++;            /* cancelled: the revoke hands it back */
    /* lost the race: answer now, revoke the fresh lease detached (a contender does not
       wait for the clean-up) */
    if (ok == 0) ldl__etcd_answer(r, 0);
    if (ok < 0) ldl__etcd_aerr(ea, what, why);
    r->_rc = ok < 0 ? LDL_ESTORE : 0;
    r->_token = 0;
    ldl__etcd_next(ea, r, LDL__ETCD_S_REVOKE);
}

/* S_KEEPALIVE answered: the session keepalive goes on to its quorum read; a session
   acquire's (the lease older than the call) too when the TTL covers the lock's; a
   per-lock renew is answered here */
static void ldl__etcd_on_keepalive(ldl_etcd_async *ea, ldl_etcd_req *r, cJSON *root, const char *what) {
    cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "result");
    int64_t id = 0, ttl = 0;
    if (ldl__etcd_i64(res, "ID", 0, &id) != 0 || id != r->_lease || ldl__etcd_i64(res, "TTL", 1, &ttl) != 0) {
        cJSON_Delete(root);
        ldl__etcd_fail(ea, r, what, "reply names another lease or has a malformed TTL");
        return;
    }
    cJSON_Delete(root);
    if (r->_ska && ttl > 0) {             /* alive: the quorum read on this member next */
        r->_token = ttl;
        r->_step = LDL__ETCD_S_QUORUM;
        (void)ldl__etcd_launch(ea, r);
        return;
    }
    if (r->_ska) { ldl__etcd_finish(ea, r, 0, 0, 1); return; }
    if (r->_sess && r->_kind == LDL_OP_ACQUIRE) {
        /* a session acquire's keepalive: alive and covering -> the quorum read; else the
           lease is gone (and the key with it): no grant */
        if (ttl > 0 && (uint64_t)ttl * 1000u >= (uint64_t)r->_ttl) {
            r->_step = LDL__ETCD_S_QUORUM;
            (void)ldl__etcd_launch(ea, r);
            return;
        }
        if (ttl <= 0 && r->_lease == ea->_s_lease) ldl__etcd_s_gone(ea);
        r->_token = 0;
        ldl__etcd_finish(ea, r, 0, 0, 1);
        return;
    }
    ldl__etcd_finish(ea, r, ttl > 0 && (uint64_t)ttl * 1000u >= (uint64_t)r->_ttl ? 1 : 0, 0, 1);
}

/* S_DEL (a release, or a hand-back) answered: a per-lock key's lease is revoked next; the
   session lease never is */
static void ldl__etcd_on_del(ldl_etcd_async *ea, ldl_etcd_req *r, cJSON *root, const char *k64, const char *what) {
    const char *why = NULL;
    int ok = ldl__etcd_succeeded(root);
    ldl__etcd_kv kv;
    memset(&kv, 0, sizeof kv);
    if (ok == 1) {
        cJSON *rr = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!rr || ldl__etcd_range_kv(rr, k64, &kv, &why) != 0 || !kv.found || kv.create != r->_token ||
            !ldl__etcd_txn_resp(root, 1, "response_delete_range")) {
            ok = -1;
            if (!why) why = "txn reply: the range does not show this fence, or no delete response";
        }
    } else if (ok == 0) {
        cJSON *rr = ldl__etcd_txn_resp(root, 0, "response_range");
        if (!rr || ldl__etcd_range_kv(rr, k64, &kv, &why) != 0) { ok = -1; if (!why) why = "txn reply: no range response"; }
        else if (!kv.found && r->_ambig) ok = 1;   /* deleted by an earlier attempt, or
                                                      expired and not retaken */
        kv.lease = 0;
    } else why = "txn reply: succeeded is not a boolean";
    cJSON_Delete(root);
    if (ok < 0) { ldl__etcd_fail(ea, r, what, why); return; }
    if (ok == 0 || kv.lease < 1 || kv.lease == ea->_s_lease) { ldl__etcd_finish(ea, r, ok, 0, 1); return; }
    r->_rc = 1;
    r->_lease = kv.lease;
    ldl__etcd_next(ea, r, LDL__ETCD_S_REVOKE);
}

/* one exchange of r finished: judge it, then step on, retry elsewhere or finish */
static void ldl__etcd_done(ldl_etcd_async *ea, ldl_etcd_req *r, CURLcode cc) {
    ldl_etcd *e = ea->_e;
    char tmp[LDL__ETCD_ERR_MAX], k64[LDL__ETCD_K64_MAX];
    const char *why = NULL, *what = ldl__etcd_path(ldl__etcd_step_x(r->_step));
    cJSON *root = NULL;
    int64_t rev = 0;
    int v = ldl__etcd_judge_r(ea, r, cc, &root, &rev, &why, tmp, sizeof tmp);
    if (v != LDL__ETCD_X_OK) { ldl__etcd_retry(ea, r, v, what, why); return; }
    e->_cur = r->_member;
    if (ldl__etcd_key64(e->_prefix, r->_key, k64, sizeof k64) != 0) k64[0] = '\0';
    switch (r->_step) {
    case LDL__ETCD_S_GRANT: ldl__etcd_on_grant(ea, r, root, rev, what); return;
    case LDL__ETCD_S_PUT:
        if (r->_sess) ldl__etcd_on_sput(ea, r, root, k64, what);
        else ldl__etcd_on_put(ea, r, root, k64, what);
        return;
    case LDL__ETCD_S_RANGE: {                 /* a per-lock renew: the key is still ours? */
        ldl__etcd_kv kv;
        if (ldl__etcd_range_kv(root, k64, &kv, &why) != 0) { cJSON_Delete(root); ldl__etcd_fail(ea, r, what, why); return; }
        cJSON_Delete(root);
        if (!kv.found || kv.create != r->_token || kv.lease < 1) { ldl__etcd_finish(ea, r, 0, 0, 1); return; }
        r->_lease = kv.lease;
        ldl__etcd_next(ea, r, LDL__ETCD_S_KEEPALIVE);
        return;
    }
    case LDL__ETCD_S_KEEPALIVE: ldl__etcd_on_keepalive(ea, r, root, what); return;
    case LDL__ETCD_S_QUORUM:                  /* the member had a quorum after the keepalive */
        cJSON_Delete(root);
        if (!r->_ska && !r->_op) {            /* a cancelled session acquire: hand it back */
            ea->_stats.handed_back++;
            r->_kind = LDL_OP_RELEASE;
            ldl__etcd_next(ea, r, LDL__ETCD_S_DEL);
            return;
        }
        ldl__etcd_finish(ea, r, 1, r->_token, 1);
        return;
    case LDL__ETCD_S_DEL: ldl__etcd_on_del(ea, r, root, k64, what); return;
    default:                                              /* the revoke answered */
        cJSON_Delete(root);
        ldl__etcd_finish(ea, r, r->_rc, r->_token, 1);
        return;
    }
}

static int ldl__etcd_submit(ldl_etcd_async *ea, ldl_op *op, int kind, const char *key, int64_t token,
                            uint32_t ttl_ms, const char *owner) {
    ldl_etcd_req *r;
    if (!ea || !op) return LDL_EINVAL;
    if (!ea->_ok) { ldl__etcd_aerr(ea, "submit", "view not initialised"); return LDL_ESTORE; }
    if (!ldl__etcd_key_ok(key) || (kind != LDL_OP_ACQUIRE && token < 1) ||
        (kind != LDL_OP_RELEASE && ttl_ms == 0) || (owner && !ldl__etcd_owner_ok(owner))) {
        ldl__etcd_aerr(ea, "submit", "bad key, token, ttl_ms or owner");
        return LDL_EINVAL;
    }
    if (kind == LDL_OP_RENEW && ea->_e->_session_ms && ttl_ms == ea->_e->_session_ms) {
        /* a session renew (decision 1013): no request of its own; the op waits in a list
           (linked through its store_data) for the next keepalive the pump STARTS, so a
           keepalive started before this submit -- even one still in flight -- never
           answers it */
        ldl_op **list = &ea->_s_wait;
        ea->_stats.submitted++;
        ea->_stats.session_renews++;
        if (!ea->_s_lease || token <= ea->_s_rev) {
            /* the session lease ended, or this key was put with an older one */
            ldl__etcd_aerr(ea, "renew", "not a key of the live session lease");
            op->store_data = 0;
            ldl_op_complete(op, 0, 0);
            return LDL_OK;
        }
        op->store_data = LDL__ETCD_SLINK(*list);
        *list = op;
        return LDL_OK;
    }
    r = ea->_free;
    if (!r) { ea->_stats.refused_full++; ldl__etcd_aerr(ea, "submit", "no free ldl_etcd_req"); return LDL_ESTORE; }
    ea->_free = r->_next;
    r->_next = NULL;
    r->_op = op;
    r->_kind = kind;
    r->_token = kind == LDL_OP_ACQUIRE ? 0 : token;
    r->_lease = 0;
    r->_ttl = ttl_ms;
    r->_rc = 0;
    r->_live = 1;
    r->_busy = 0;
    r->_tries = 0;
    r->_ambig = 0;
    r->_sess = r->_sgrant = r->_ska = r->_fresh = 0;
    r->_nonce = 0;
    r->_member = ea->_e->_cur;
    r->_deadline = ldl__etcd_now() + ea->_e->_call_ms;
    memcpy(r->_key, key, strlen(key) + 1);
    if (owner) memcpy(r->_owner, owner, strlen(owner) + 1);
    else r->_owner[0] = '\0';
    r->_step = kind == LDL_OP_ACQUIRE ? LDL__ETCD_S_GRANT : kind == LDL_OP_RENEW ? LDL__ETCD_S_RANGE
                                                                                 : LDL__ETCD_S_DEL;
    op->store_data = (uintptr_t)r;
    ea->_stats.submitted++;
    ea->_stats.live++;
    if (ea->_stats.live > ea->_stats.max_live) ea->_stats.max_live = ea->_stats.live;
    if (ea->_e->_session_ms && ttl_ms == ea->_e->_session_ms && kind == LDL_OP_ACQUIRE) {
        /* a session acquire (decision 1013): the key goes on the view's lease, its value
           carries this call's nonce (every attempt the same) */
        r->_sess = 1;
        r->_nonce = ++ea->_s_nonce;
        if (ea->_s_lease) {
            r->_lease = ea->_s_lease;
            r->_step = LDL__ETCD_S_PUT;
        } else if (ea->_s_granting) {         /* park until the session grant answers */
            r->_step = LDL__ETCD_S_PUT;
            r->_next = ea->_s_park;
            ea->_s_park = r;
            return LDL_OK;
        } else {
            r->_sgrant = 1;                   /* this acquire grants the session lease */
            ea->_s_granting = 1;
        }
    }
    (void)ldl__etcd_launch(ea, r);          /* started by the next pump */
    return LDL_OK;
}

/* the session grant answered: parked acquires go on with lease (0: it failed) */
static void ldl__etcd_s_unpark(ldl_etcd_async *ea, int64_t lease) {
    ldl_etcd_req *r;
    while ((r = ea->_s_park) != NULL) {
        ea->_s_park = r->_next;
        r->_next = NULL;
        if (!lease) { ldl__etcd_aerr(ea, "session lease grant", "failed"); ldl__etcd_finish(ea, r, LDL_ESTORE, 0, 0); }
        else if (!r->_op) ldl__etcd_finish(ea, r, 0, 0, 1);   /* cancelled while parked */
        else { r->_lease = lease; (void)ldl__etcd_launch(ea, r); }
    }
}

/* answer a list of session renews (ops linked through store_data) */
static void ldl__etcd_s_complete(ldl_op *head, int rc) {
    while (head) {
        ldl_op *next = LDL__ETCD_SNEXT(head);
        head->store_data = 0;
        ldl_op_complete(head, rc, 0);
        head = next;
    }
}

/* the session lease is gone: forget it (the next session acquire grants a new one) and
   answer 0 to every renew waiting for a keepalive (the ride list, if a keepalive is in
   flight, is answered 0 when it returns: its lease is no longer the view's) */
static void ldl__etcd_s_gone(ldl_etcd_async *ea) {
    ldl_op *wait = ea->_s_wait;
    ea->_s_lease = 0;
    ea->_s_wait = NULL;
    ldl__etcd_s_complete(wait, 0);
}

/* a session keepalive answered (rc 1 alive with ttl_s seconds, 0 the lease is gone,
   negative failed): it answers the renews that were waiting when it was started (the
   ride list) and no other; a gone lease answers every renew (it never comes back) */
static void ldl__etcd_s_answer(ldl_etcd_async *ea, ldl_etcd_req *ka, int rc, int64_t ttl_s) {
    ldl_op *ride = ea->_s_ride;
    ea->_s_ride = NULL;
    if (rc == 0 && ea->_s_lease == ka->_lease) ldl__etcd_s_gone(ea);
    else if (ka->_lease != ea->_s_lease) rc = 0;          /* its lease ended meanwhile */
    ldl__etcd_s_complete(ride, rc < 0 ? LDL_ESTORE : rc == 0 ? 0 :
                         (uint64_t)ttl_s * 1000u >= (uint64_t)ea->_e->_session_ms ? 1 : 0);
}

/* renews wait and no keepalive is in flight: start one (numbered now, first in the
   queue, so this pump sends it) */
static void ldl__etcd_s_kick(ldl_etcd_async *ea) {
    ldl_etcd_req *k;
    if (ea->_s_ka || !ea->_s_wait || !ea->_s_lease) return;
    k = ea->_free;
    if (!k) { ea->_stats.refused_full++; return; }
    ea->_free = k->_next;
    k->_next = NULL;
    k->_op = NULL;
    k->_kind = LDL_OP_RENEW;
    k->_token = 0;
    k->_lease = ea->_s_lease;
    k->_ttl = ea->_e->_session_ms;
    k->_rc = 0;
    k->_live = 1;
    k->_busy = 0;
    k->_tries = 0;
    k->_ambig = 0;
    k->_sess = 1;
    k->_sgrant = 0;
    k->_ska = 1;
    k->_fresh = 0;
    k->_nonce = 0;
    k->_member = ea->_e->_cur;
    k->_deadline = ldl__etcd_now() + ea->_e->_call_ms;
    k->_key[0] = '\0';
    k->_owner[0] = '\0';
    k->_step = LDL__ETCD_S_KEEPALIVE;
    ea->_s_sent++;
    ea->_s_ride = ea->_s_wait;            /* what waits now rides this one; later renews wait */
    ea->_s_wait = NULL;
    ea->_s_ka = k;
    ea->_stats.keepalives++;
    ea->_stats.live++;
    if (ea->_stats.live > ea->_stats.max_live) ea->_stats.max_live = ea->_stats.live;
    k->_queued = 1;
    k->_next = ea->_qhead;
    ea->_qhead = k;
    if (!ea->_qtail) ea->_qtail = k;
}

static int ldl__etcd_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    return ldl__etcd_submit((ldl_etcd_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL);
}
static int ldl__etcd_a_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                                     const char *owner) {
    return ldl__etcd_submit((ldl_etcd_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, owner);
}
static int ldl__etcd_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    return ldl__etcd_submit((ldl_etcd_async *)ctx, op, LDL_OP_RENEW, key, token, ttl_ms, NULL);
}
static int ldl__etcd_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    return ldl__etcd_submit((ldl_etcd_async *)ctx, op, LDL_OP_RELEASE, key, token, 0, NULL);
}
static void ldl__etcd_a_cancel(void *ctx, ldl_op *op) {
    ldl_etcd_async *ea = (ldl_etcd_async *)ctx;
    ldl_etcd_req *r;
    if (!ea || !op || !op->store_data) return;
    if (op->store_data & 1u) {                /* a session renew: unlink it from its list */
        int k;
        for (k = 0; k < 2; k++) {
            ldl_op **head = k ? &ea->_s_ride : &ea->_s_wait, *prev = NULL, *cur = *head;
            while (cur && cur != op) { prev = cur; cur = LDL__ETCD_SNEXT(cur); }
            if (!cur) continue;
            if (prev) prev->store_data = LDL__ETCD_SLINK(LDL__ETCD_SNEXT(op));
            else *head = LDL__ETCD_SNEXT(op);
            break;
        }
        op->store_data = 0;
        return;
    }
    r = (ldl_etcd_req *)op->store_data;
    if (r < ea->_reqs || r >= ea->_reqs + ea->_nreqs || r->_op != op) return;
    r->_op = NULL;              /* detached; the pump finishes it (a grant is revoked) */
    op->store_data = 0;
}

static int ldl__etcd_a_headers(ldl_etcd_async *ea) {
    ldl_etcd *e = ea->_e;
    if (ea->_hdrs) curl_slist_free_all(ea->_hdrs);
    ea->_hdrs = NULL;
    if (e->_user[0] && !e->_auth[0]) {
        char tmp[LDL__ETCD_ERR_MAX];
        const char *why = "no member answered";
        uint64_t deadline = ldl__etcd_now() + e->_call_ms;
        int i, v = LDL__ETCD_X_NEXT;
        for (i = 0; i < e->_n && v != LDL__ETCD_X_OK && v != LDL__ETCD_X_FATAL; i++)
            v = ldl__etcd_authenticate(e, (e->_cur + i) % e->_n, deadline, &why, tmp, sizeof tmp);
        if (v != LDL__ETCD_X_OK) { ldl__etcd_aerr(ea, "authenticate", why); return -1; }
    }
    ea->_hdrs = ldl__etcd_headers(e->_auth);
    if (!ea->_hdrs) { ldl__etcd_aerr(ea, "init", "out of memory (headers)"); return -1; }
    return 0;
}

LDL_ETCD_API int ldl_etcd_async_init(ldl_etcd_async *ea, ldl_etcd *e, ldl_etcd_req *reqs, size_t nreqs) {
    size_t i;
    if (!ea) return LDL_EINVAL;
    memset(ea, 0, sizeof *ea);
    if (!e || !reqs || nreqs == 0) {
        ldl__etcd_aerr(ea, "async init", "want an ldl_etcd, request storage and nreqs >= 1");
        return LDL_EINVAL;
    }
    if (!e->_ok) { ldl__etcd_aerr(ea, "async init", "ldl_etcd not initialised (ldl_etcd_init first)"); return LDL_EINVAL; }
    ea->_e = e;
    ea->_reqs = reqs;
    ea->_nreqs = nreqs;
    memset(reqs, 0, nreqs * sizeof *reqs);
    for (i = nreqs; i-- > 0;) {
        reqs[i]._ea = ea;
        reqs[i]._next = ea->_free;
        ea->_free = &reqs[i];
    }
    ea->_multi = curl_multi_init();
    if (!ea->_multi) { ldl__etcd_aerr(ea, "async init", "curl_multi_init failed"); return LDL_ESTORE; }
    curl_multi_setopt(ea->_multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)LDL_ETCD_MAX_CONNS);
    curl_multi_setopt(ea->_multi, CURLMOPT_MAXCONNECTS, (long)LDL_ETCD_MAX_CONNS);
    if (ldl__etcd_a_headers(ea) != 0) {
        curl_multi_cleanup(ea->_multi);
        ea->_multi = NULL;
        return LDL_ESTORE;
    }
    ea->_ok = 1;
    return LDL_OK;
}

LDL_ETCD_API int ldl_etcd_async_drop(ldl_etcd_async *ea) {
    size_t i;
    int n = 0;
    if (!ea || !ea->_reqs) return 0;
    {
        ldl_op *w = ea->_s_wait, *rd = ea->_s_ride;
        ea->_s_wait = ea->_s_ride = NULL;
        if (w || rd) n++;
        ldl__etcd_s_complete(w, LDL_ESTORE);
        ldl__etcd_s_complete(rd, LDL_ESTORE);
    }
    ea->_s_park = NULL;
    ea->_s_ka = NULL;
    ea->_s_granting = 0;
    for (i = 0; i < ea->_nreqs; i++) {
        ldl_etcd_req *r = &ea->_reqs[i];
        if (!r->_live) continue;
        if (r->_busy && ea->_multi) curl_multi_remove_handle(ea->_multi, r->_easy);
        r->_queued = 0;
        ldl__etcd_finish(ea, r, LDL_ESTORE, 0, 0);
        n++;
    }
    ea->_qhead = ea->_qtail = NULL;
    if (n) ldl__etcd_aerr(ea, "drop", "every live request answered LDL_ESTORE");
    return n;
}

LDL_ETCD_API void ldl_etcd_async_close(ldl_etcd_async *ea) {
    size_t i;
    if (!ea) return;
    ldl_etcd_async_drop(ea);
    if (ea->_s_lease > 0 && ea->_e && ea->_e->_ok)   /* the session's keys go with it */
        (void)ldl__etcd_revoke(ea->_e, ea->_s_lease, ldl__etcd_now() + ea->_e->_call_ms);
    ea->_s_lease = 0;
    for (i = 0; ea->_reqs && i < ea->_nreqs; i++) {
        if (ea->_reqs[i]._easy) curl_easy_cleanup(ea->_reqs[i]._easy);
        ea->_reqs[i]._easy = NULL;
    }
    if (ea->_multi) curl_multi_cleanup(ea->_multi);
    ea->_multi = NULL;
    if (ea->_hdrs) curl_slist_free_all(ea->_hdrs);
    ea->_hdrs = NULL;
    ea->_ok = 0;
}

LDL_ETCD_API int ldl_etcd_async_rebind(ldl_etcd_async *ea, ldl_etcd *e) {
    ldl_etcd *old;
    if (!ea || !ea->_multi) return LDL_EINVAL;
    if (!e || !e->_ok) { ldl__etcd_aerr(ea, "rebind", "want an initialised ldl_etcd"); return LDL_EINVAL; }
    ldl_etcd_async_drop(ea);
    if (ea->_s_lease > 0 && ea->_e && ea->_e->_ok)   /* the old session ends here */
        (void)ldl__etcd_revoke(ea->_e, ea->_s_lease, ldl__etcd_now() + ea->_e->_call_ms);
    ea->_s_lease = 0;
    {
        size_t i;
        for (i = 0; i < ea->_nreqs; i++) {   /* their fixed options name the old ldl_etcd */
            if (ea->_reqs[i]._easy) curl_easy_cleanup(ea->_reqs[i]._easy);
            ea->_reqs[i]._easy = NULL;
        }
    }
    old = ea->_e;
    ea->_e = e;
    if (ldl__etcd_a_headers(ea) != 0) { ea->_e = old; ea->_ok = 0; return LDL_ESTORE; }
    ea->_ok = 1;
    return LDL_OK;
}

LDL_ETCD_API int ldl_etcd_async_pump(ldl_etcd_async *ea) {
    int running = 0, done = 0, round, left = LDL_ETCD_BATCH;
    if (!ea) return LDL_EINVAL;
    if (!ea->_multi) return LDL_ESTORE;
    /* a second round starts at once the next steps the first one's answers queued;
       both together start at most LDL_ETCD_BATCH exchanges */
    for (round = 0; round < 2; round++) {
        CURLMsg *m;
        int q;
        size_t before = (size_t)ea->_stats.answered + (size_t)ea->_stats.failed;
        ldl__etcd_s_kick(ea);
        left -= ldl__etcd_drain(ea, left);
        if (curl_multi_perform(ea->_multi, &running) != CURLM_OK) {
            ldl__etcd_aerr(ea, "pump", "curl_multi_perform failed");
            return LDL_ESTORE;
        }
        while ((m = curl_multi_info_read(ea->_multi, &q)) != NULL) {
            ldl_etcd_req *r = NULL;
            CURLcode cc;
            if (m->msg != CURLMSG_DONE) continue;
            cc = m->data.result;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            curl_multi_remove_handle(ea->_multi, m->easy_handle);
            if (!r || r < ea->_reqs || r >= ea->_reqs + ea->_nreqs || !r->_busy) continue;
            r->_busy = 0;
            ldl__etcd_done(ea, r, cc);
        }
        done += (int)((size_t)ea->_stats.answered + (size_t)ea->_stats.failed - before);
        if ((!ea->_qhead && !(ea->_s_wait && !ea->_s_ka)) || left <= 0) break;
    }
    return done;
}

LDL_ETCD_API long ldl_etcd_async_timeout_ms(ldl_etcd_async *ea) {
    long ms = -1;
    if (!ea || !ea->_multi) return -1;
    if (ea->_qhead || (ea->_s_wait && !ea->_s_ka)) return 0;   /* exchanges wait to be started */
    if (curl_multi_timeout(ea->_multi, &ms) != CURLM_OK) return -1;
    return ms;
}

LDL_ETCD_API int ldl_etcd_async_wait(ldl_etcd_async *ea, int max_ms) {
    int n = 0;
    if (!ea || !ea->_multi || max_ms < 0) return LDL_EINVAL;
    if (ea->_qhead || (ea->_s_wait && !ea->_s_ka)) return 0;   /* the pump has work now */
    if (curl_multi_poll(ea->_multi, NULL, 0, max_ms, &n) != CURLM_OK) return LDL_ESTORE;
    return n;
}

LDL_ETCD_API CURLM *ldl_etcd_async_multi(ldl_etcd_async *ea) { return ea ? ea->_multi : NULL; }

LDL_ETCD_API ldl_async_store ldl_etcd_async_store(ldl_etcd_async *ea) {
    ldl_async_store a;
    memset(&a, 0, sizeof a);
    if (!ea) return a;
    a.acquire = ldl__etcd_a_acquire;
    a.renew = ldl__etcd_a_renew;
    a.release = ldl__etcd_a_release;
    a.cancel = ldl__etcd_a_cancel;
    a.ctx = ea;
    return a;
}

static int ldl__etcd_a_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_etcd_async *ea = (ldl_etcd_async *)ctx;
    if (!ea || !ea->_e) { if (out) memset(out, 0, sizeof *out); return LDL_EINVAL; }
    return ldl__etcd_inspect(ea->_e, key, out);
}

LDL_ETCD_API ldl_store_ext ldl_etcd_async_ext(ldl_etcd_async *ea) {
    ldl_store_ext x;
    memset(&x, 0, sizeof x);
    if (!ea || !ea->_ok) return x;
    x.submit_owned = ldl__etcd_a_acquire_owned;
    x.inspect = ldl__etcd_a_inspect;
    x.ctx = ea;
    return x;
}

LDL_ETCD_API const char *ldl_etcd_async_why(const ldl_etcd_async *ea) { return ea ? ea->_err : "NULL view"; }
LDL_ETCD_API const ldl_etcd_stats *ldl_etcd_async_stats(const ldl_etcd_async *ea) {
    return ea ? &ea->_stats : NULL;
}
#endif /* LDL_NO_ASYNC */

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_ETCD_C */
#endif /* LDL_ETCD_IMPLEMENTATION */

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
