/* lite_di_lock_etcd.h -- etcd store for lite_di_lock.h (needs libcurl and jansson).

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

   Link with -lcurl -ljansson (Debian: libcurl4-openssl-dev, libjansson-dev).
   Call curl_global_init(CURL_GLOBAL_DEFAULT) once at program start, before
   any thread exists (libcurl's rule; init does it too if nobody did).

   THE MAPPING (decision 1001). Lock key K is the etcd key PREFIX + K (prefix
   default "ldl/"; base64 on the wire, so any byte of K is fine).
     acquire(K, ttl)  POST /v3/lease/grant TTL = ceil(ttl_ms / 1000) s; then
                ONE POST /v3/kv/txn: if create_revision(key) == 0, put key
                (value = the owner, "" without one) with that lease; else
                range key. Fence = the txn's header revision, which IS the
                key's create_revision: etcd's revision rises cluster-wide with
                every write and is kept in the WAL, so the fence rises per key
                across holders, leader changes and restarts. If the compare
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
   The lease id lives only in etcd (the key's lease field): the adapter keeps
   no table, so any process (another ldl_etcd, the lock's hand-back of a
   cancelled grant) can renew or release a lease by key and fence alone.

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
   (above), keepalive and range are idempotent; a release whose first txn
   committed but whose answer was lost answers 0 on the retry (the key is
   gone either way).

   BOUNDS. Every exchange: CURLOPT_CONNECTTIMEOUT_MS (connect_ms) and
   CURLOPT_TIMEOUT_MS (min(attempt_ms, time left of call_ms)); every reply
   body at most LDL_ETCD_REPLY_MAX bytes (the write callback refuses the
   rest: a store error). Replies are believed only when they provably answer
   this request: HTTP 200, a JSON object (jansson, duplicate keys refused),
   every int64 a decimal string as the gateway writes it, the header's
   cluster_id equal to the first one this adapter saw, a range's key equal
   to the key asked for. Anything else is LDL_ESTORE, never a grant.

   AUTH AND TLS. cfg.user / cfg.password: the adapter calls
   /v3/auth/authenticate and sends the token in the Authorization header;
   when etcd says the token is invalid or expired it authenticates again
   once within the call. cfg.cacert, cfg.cert, cfg.key_file go to libcurl as
   CURLOPT_CAINFO, CURLOPT_SSLCERT, CURLOPT_SSLKEY for https:// members
   (peer and host are always verified). The role needs readwrite on the key
   prefix (docs/etcd.md: the ACL setup).

   HOLDER IDENTITY (SPEC's ldl_store_ext): ldl_etcd_ext(e): acquire_owned
   (the owner, 1..LDL_OWNER_MAX-1 bytes of printable ASCII, is the key's
   value) and inspect (range + timetolive: token = create_revision, ms left
   = the lease's remaining TTL in whole seconds x 1000, owner = the value;
   1 held, 0 free). ldl_etcd_async_ext(ea): submit_owned and inspect (the
   inspect is synchronous, on the ldl_etcd's own handle).

   THE NON-BLOCKING VIEW. ldl_etcd_async_init(ea, e, reqs, nreqs): reqs is
   caller-owned storage for nreqs requests (a lock needs at most two: one in
   flight, one cancelled and still finishing); each gets a libcurl easy
   handle at init. A submit copies the request and returns; the pump
   (curl_multi_perform: non-blocking I/O only) sends, reads, steps each
   request through its exchanges (grant -> txn [-> revoke]; range ->
   keepalive; txn -> revoke), moves a failed exchange to the next member,
   and completes requests. A frozen member holds only the requests sent to
   it, each until its attempt timeout; the pump never waits for it.
   ldl_etcd_async_pump answers the number of requests completed (>= 0), or
   negative when the multi handle itself failed. A cancelled ACQUIRE that
   turns out granted is released by the adapter (same req). Verbs as every
   adapter (decision 0105): _why, _stats, _drop (every live request answered
   LDL_ESTORE at once), _rebind (a new ldl_etcd, e.g. other members; the old
   one's pending requests are answered LDL_ESTORE first). _timeout_ms: how
   long the program may sleep before the pump has timed work (-1: none);
   _wait(ea, max_ms): curl_multi_poll on every socket of the view.

   ANSWERS: exactly 1 yes, 0 no, negative on any error (LDL_ESTORE: no
   member answered within the bound, HTTP or gRPC error, a reply of the
   wrong shape; LDL_EINVAL: bad argument). ldl_etcd_why(e) is the last error
   text ("" when none).

   OPTIONS
     LDL_ETCD_IMPLEMENTATION  in exactly one .c/.cpp file, after the core header
     LDL_STATIC               makes the functions static (as in the core header)
     LDL_ETCD_MAX_ENDPOINTS   members in cfg.endpoints (default 8)
     LDL_ETCD_REPLY_MAX       bytes of one reply body (default 4096)
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
#ifndef LDL_ETCD_REPLY_MAX
#define LDL_ETCD_REPLY_MAX 4096
#endif
#if LDL_ETCD_REPLY_MAX < 1024
#error "LDL_ETCD_REPLY_MAX must be at least 1024"
#endif

#define LDL_ETCD_ATTEMPT_MS 500     /* cfg.attempt_ms default: one exchange with one member */
#define LDL_ETCD_CALL_MS    2000    /* cfg.call_ms default: one store call, every exchange */
#define LDL_ETCD_CONNECT_MS 250     /* cfg.connect_ms default */

#define LDL__ETCD_URL_MAX 128       /* one member's base URL with the NUL */
#define LDL__ETCD_PREFIX_MAX 64
#define LDL__ETCD_CRED_MAX 128      /* user, password */
#define LDL__ETCD_PATH_MAX 256      /* TLS file paths */
#define LDL__ETCD_AUTH_MAX 256      /* the auth token */
#define LDL__ETCD_BODY_MAX 1024     /* one request body */
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
    char        _reply[LDL_ETCD_REPLY_MAX];
    char        _body[LDL__ETCD_BODY_MAX];
    char        _err[LDL__ETCD_ERR_MAX];
} ldl_etcd;

LDL_ETCD_API int         ldl_etcd_init(ldl_etcd *e, const ldl_etcd_config *cfg); /* no I/O */
LDL_ETCD_API void        ldl_etcd_close(ldl_etcd *e);                            /* idempotent */
LDL_ETCD_API ldl_store   ldl_etcd_store(ldl_etcd *e);
LDL_ETCD_API ldl_store_ext ldl_etcd_ext(ldl_etcd *e);     /* acquire_owned + inspect */
LDL_ETCD_API const char *ldl_etcd_why(const ldl_etcd *e); /* never NULL */
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
    int             _member;         /* the member of the current exchange */
    int             _tries;          /* members tried in this exchange */
    int             _rc;
    int             _over;
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
} ldl_etcd_stats;

struct ldl_etcd_async {              /* caller-owned; fields are private */
    ldl_etcd       *_e;
    CURLM          *_multi;
    ldl_etcd_req   *_reqs;
    size_t          _nreqs;
    ldl_etcd_req   *_free;
    int             _ok;
    ldl_etcd_stats  _stats;
    char            _err[LDL__ETCD_ERR_MAX];
};

LDL_ETCD_API int  ldl_etcd_async_init(ldl_etcd_async *ea, ldl_etcd *e, ldl_etcd_req *reqs,
                                      size_t nreqs);
LDL_ETCD_API void ldl_etcd_async_close(ldl_etcd_async *ea);  /* answers live requests ESTORE */
LDL_ETCD_API ldl_async_store ldl_etcd_async_store(ldl_etcd_async *ea);
LDL_ETCD_API ldl_store_ext ldl_etcd_async_ext(ldl_etcd_async *ea); /* submit_owned + inspect */
LDL_ETCD_API int  ldl_etcd_async_pump(ldl_etcd_async *ea);   /* requests completed, or < 0 */
LDL_ETCD_API long ldl_etcd_async_timeout_ms(ldl_etcd_async *ea); /* -1: nothing timed */
LDL_ETCD_API int  ldl_etcd_async_wait(ldl_etcd_async *ea, int max_ms); /* curl_multi_poll */
LDL_ETCD_API int  ldl_etcd_async_drop(ldl_etcd_async *ea);   /* requests answered */
LDL_ETCD_API int  ldl_etcd_async_rebind(ldl_etcd_async *ea, ldl_etcd *e);
LDL_ETCD_API const char *ldl_etcd_async_why(const ldl_etcd_async *ea);            /* never NULL */
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

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* IMPLEMENTATION: in progress (declarations published first for the cluster tests). */

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
