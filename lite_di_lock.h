/* lite_di_lock.h - v0.3.0 - a lease-lock LIFECYCLE for C programs.
   Single header, stb style, MIT license (see the end of the file).

   WHAT IT IS
   ==========
   acquire -> hold -> heartbeat -> release, or lose; over a pluggable
   three-function store. Every grant carries a FENCING TOKEN (an integer
   >= 1 that strictly grows per key) which protected work passes downstream
   so a resource can reject a stale holder. The lock fails CLOSED: a store
   answer is a grant only if it has exactly the right shape, the fence is
   bound into a child DI scope before the body runs or the body never runs,
   run() always releases, and a heartbeat that is anything but a clean yes
   loses the lease and says so once. No heap, no globals, no threads: you
   own the loop (call ldl_lock_poll() every frame, or hand over a timer
   vtable).

   In exactly ONE .c file:
       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
   Everywhere else just #include it.

   QUICK START (a whole program: paste it into main.c, cc main.c)
   ===========
       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"        // first: it picks the POSIX clock
       #include <stdio.h>

       // the protected work: runs only while the lease is held
       static int body(void *scope, void *user) {
           const int64_t *fence = (const int64_t *)ldl_scope_get((ldl_scope *)scope, "lock:fence");
           printf("%s with fence %lld\n", (const char *)user, (long long)*fence);
           return 0;                     // pass *fence downstream with every write
       }

       int main(void) {
           ldl_scope root, pool[4];      // the reference DI container
           ldl_lock lock;
           ldl_lock_desc d = {0};        // zero = every default
           int rc;
           ldl_scope_init(&root, pool, 4);
           d.container = ldl_scope_container(&root);
           d.key = "nightly-report";
           d.ttl_ms = 30000;             // store NULL = an in-process MemoryStore
           if (ldl_lock_init(&lock, &d) != LDL_OK) { puts(ldl_lock_why(&lock)); return 1; }
           rc = ldl_lock_run(&lock, body, "report", NULL); // acquire, bind, body, release
           ldl_lock_dispose(&lock);
           return rc == LDL_OK ? 0 : 1;
       }

   Or drive it yourself: ldl_lock_acquire() == 1, then ldl_lock_poll() every
   frame (it renews when the heartbeat is due and notices a passed deadline),
   then ldl_lock_release(). ldl_lock_due_in_ms() says how long you may sleep.

   THE API (each declared below with a one-line comment)
   =======
   lock        ldl_lock_init, ldl_lock_why, ldl_lock_dispose
               ldl_lock_acquire   ask the store once (1 = held)
               ldl_lock_poll      every frame: renews when due, notices the deadline
               ldl_lock_tick      renew NOW (what the heartbeat timer calls)
               ldl_lock_release   give the lease back
               ldl_lock_run       acquire, body with the fence bound, release
               ldl_lock_valid_ms, ldl_lock_due_in_ms
               ldl_lock_state, _held, _fencing_token, _reason, _pending, _answer,
               _raw_answer, _retrying, _counters (plain field reads)
               ldl_bind_lock      register a lock in a container (disposed at teardown)
   store       ldl_memstore_init, ldl_memstore_store, ldl_memstore_live,
               ldl_memstore_async_store (not with LDL_NO_ASYNC),
               ldl_memstore_ext, ldl_store_inspect (not with LDL_NO_ELECTION)
   non-blocking stores   ldl_op_complete, ldl_op_begin, ldl_op_result
   container   ldl_scope_init, _container, _child, _value, _singleton,
               _on_teardown, _get, _shutdown, _live_children
   names       ldl_strerror, ldl_state_name, ldl_reason_name

   COMPILE-TIME OPTIONS (define before including)
   ==============================================
   LITE_DI_LOCK_IMPLEMENTATION  emit the implementation (one .c file).
   LDL_STATIC                   every function static (private copy per TU).
   LDL_NO_DEFAULT_CLOCK         no built-in clock (bare metal): every lock and
                                MemoryStore must be given an ldl_clock.
   LDL_KEY_MAX                  bytes per key including the NUL (default 128).
   LDL_NO_ASYNC                 no non-blocking stores (small firmware): init
                                refuses desc.async_store, and ldl_op_complete /
                                ldl_memstore_async_store are not declared; the
                                lock's async branches compile away (decision 0006).
   LDL_NO_ELECTION              no leader-election options (small firmware):
                                init refuses retry, ride_out_ms, campaign,
                                on_leading, on_event, owner and store_ext; the
                                election layer is not compiled (counters and the
                                raw answer stay) and ldl_memstore_ext /
                                ldl_store_inspect are not declared. It changes
                                sizeof(ldl_lock): define it alike everywhere.
                                Decisions 0009, 0010.
   LDL_NO_WHY_TEXT              init's refusals keep their codes, but
                                ldl_lock_why answers the check's short name
                                ("key_empty", "drift_ms_must_be", ...) instead
                                of its sentence: less .rodata, no less .text
                                (docs/PLATFORMS.md's size table says how much).
   LDL_OWNER_MAX                bytes of a holder identity with the NUL (64).
   LDL_ON_TRANSITION(lock, from, to)  a statement run at every state change,
                                before it (a test hook: the fuzzers count
                                each edge taken).
   LDL_ASSERT(cond)             checks each state change is an edge of THE
                                LIFECYCLE. Default: assert() in a hosted build
                                without NDEBUG, nothing under NDEBUG or
                                freestanding (no <assert.h> is included then).
   LDL_SCOPE_BINDINGS           bindings per reference-container scope (8).

   The built-in clock is clock_gettime(CLOCK_MONOTONIC) on POSIX and
   QueryPerformanceCounter on Windows. Under a strict -std=c99 the header
   asks for POSIX itself (_POSIX_C_SOURCE) when it is included before any
   system header; if a system header came first the build stops with an
   #error that says what to define. It never falls back to a wall clock.

   THE LIFECYCLE
   =============
   Six states (ldl_lock_state) and the sub-states that decide what the next
   call does. (*) non-blocking stores only: ldl_lock_pending() == 1 while a
   request is in flight. [E] election options only.

     IDLE / RELEASED --acquire--> ACQUIRING (*request in flight)
     ACQUIRING --grant--> HELD                          (heartbeat armed; on_leading)
     ACQUIRING --no grant, refused, or (*)timeout--> IDLE
                                  [E] retry: IDLE (retrying) --attempt due--> ACQUIRING
     HELD --heartbeat due--> HELD (*renew in flight) --yes--> HELD
     HELD --[E] renew error, ride_out_ms, still trusted--> HELD (riding out)
                                  --renew due--> the same renew again
     HELD / riding out --renew != 1, deadline, timer unarmable--> LOST (on_lost once)
                                  [E] campaign: LOST (competing): the lease handed back
                                  at once; LOST (retrying) --attempt due--> ACQUIRING
     HELD --release--> RELEASING (disarm FIRST) --answer / (*)timeout--> RELEASED
     LOST --release--> RELEASING --> RELEASED   (the owed token released once,
                                                 unless already handed back)
     ACQUIRING --release--> RELEASED            ((*) the acquire in flight is cancelled)
     LOST (nothing owed) --release--> RELEASED  (no store call)
     IDLE / RELEASED --release--> unchanged     (answers 0, no store call; [E] it
                                                 stops a retry schedule or campaign)
     any --dispose--> RELEASED, terminal        (idempotent)
     any --release/dispose from inside a store call--> RELEASED at once (the cut:
                                  see RE-ENTRY; what the call grants goes back)

   This diagram is the one prose copy. Its state-to-state arrows are one table
   in the implementation, LDL__EDGES (beside the guard table LDL__GUARD); every
   transition goes through one setter, which checks it against that table with
   LDL_ASSERT; the fuzzers' oracle (tests/fuzz/lifecycle_edges.h) and the
   Spin model (tests/model/lock.pml) check their transitions against it too.

   The lease is trusted while now < start + ttl_ms - drift_ms, where start is
   the clock read just BEFORE the last successful acquire or renew call. A
   clock that reads earlier than start is broken: the lock treats the lease
   as expired (fail closed) rather than trusting it longer. A yes that comes
   back after its own window closed is not trusted either: a late grant is
   refused and handed back (reason LEASE_EXPIRED, acquire answers 0); a late
   renew yes loses the lease (LEASE_EXPIRED).

   TEST ANSWERS WITH == 1
   ======================
   Answers are 1 (yes), 0 (no) or a NEGATIVE error code (LDL_ESTATE,
   LDL_EINPROGRESS, ...). An error is non-zero, so `if (ldl_lock_acquire(l))`
   would take LDL_ESTATE for a grant. Always write `== 1`.

   RE-ENTRY (a store, timer or on_lost calling back into the lock)
   ========
   Every call first asks which situation the lock is in: DEAD (NULL,
   disposed, or init failed), INSIDE (one of this lock's store calls is on
   the stack), HOOKED (desc.on_event is running: it observes only), or FREE.
   From INSIDE a store call: acquire, run, tick, poll answer LDL_ESTATE and do
   nothing; release and dispose take effect at once (state RELEASED, answer 0)
   and whatever the pending call grants or was renewing is handed back exactly
   once when it returns. HOOKED: every call answers LDL_ESTATE (dispose:
   nothing) and changes nothing. After dispose, tick/poll answer 0. Nothing
   leaks. The whole (call x situation) table is at [reentry] in the
   implementation.

   THE STORE CONTRACT
   ==================
   Three functions and a ctx (ldl_store). Each answers an int: EXACTLY 1 is
   yes, 0 is no, negative is a store error, anything else is malformed (no;
   for renew/release: a store error). acquire writes the new token through
   token_out; the lock zeroes it before every call. A grant is acquire == 1
   AND token in [1, INT64_MAX] AND token > every token this lock accepted
   before. A grant refused because its token did not advance sets the reason
   FENCE_REGRESSED and is handed straight back with release(key, token).

   NON-BLOCKING STORES (v0.2)
   ==========================
   A networked store that answers synchronously makes every renew wait a round
   trip, and a stalled server freeze the frame for the whole command timeout.
   desc.async_store (an ldl_async_store: acquire/renew/release submit methods
   that queue and return, plus cancel) gives each lock ONE request slot. The
   store's own pump records answers with ldl_op_complete(); the lock applies
   them at its next acquire/release/tick/poll/valid_ms/dispose. Manual mode
   only (no timers); ldl_lock_run answers LDL_EUNSUPPORTED (it would block).

       desc.async_store = &as;                     // e.g. ldl_redis_async_store(&ra)
       ldl_lock_init(&lock, &desc);
       ldl_lock_acquire(&lock);                    // 1, 0, or LDL_EINPROGRESS
       for (;;) {                                  // the frame loop
           ldl_redis_async_pump(&ra);              // the store's non-blocking I/O
           if (ldl_lock_poll(&lock) == 1)          // applies answers, renews when due
               simulate(ldl_lock_fencing_token(&lock));
           else if (!ldl_lock_pending(&lock)) {    // not held, nothing in flight
               if (ldl_lock_state(&lock) == LDL_LOST) ldl_lock_release(&lock);
               else ldl_lock_acquire(&lock);       // compete again
           }
       }

   poll/tick answer 1 while HELD (a renew may be in flight), LDL_EINPROGRESS
   while ACQUIRING or RELEASING. ldl_lock_answer() is the last acquire/release
   answer. The deadline keeps running while a renew is in flight; an
   ACQUIRING request times out at start + ttl - drift, a RELEASING one at
   start + ttl (cancelled; the store hands back a late grant). dispose never
   waits: it cancels what is in flight and releases a held lease
   fire-and-forget; after it returns no store holds a pointer into the lock.
   ldl_memstore_async_store() is the MemoryStore as a non-blocking store (it
   answers inside every submit). Network adapters live in adapters/:
   lite_di_lock_redis.h (hiredis), lite_di_lock_redis_cluster.h (Redis
   Cluster routing over it) and lite_di_lock_pg.h (libpq), each with a
   synchronous store and a pumped non-blocking view.

   LEADER ELECTION (v0.2; every option zero = off, decision 0009)
   ===============
   desc.retry: ldl_lock_acquire that gets no grant schedules the next attempt
   instead of giving up: full-jitter exponential backoff (the delay is uniform
   in [1, min(cap_ms, base_ms * 2^n)] ms for the n-th retry of a round),
   per-lock xorshift64* state seeded by retry.seed, stopping at give_up_ms
   after the round began (0 = never; a poll or timer that comes at or after
   it makes no attempt). Manual mode: ldl_lock_poll makes the
   attempt when due and ldl_lock_due_in_ms counts down to it; timer mode: the
   one timer does. ldl_lock_retrying() is 1 while an attempt is scheduled;
   ldl_lock_release (or dispose) stops the schedule. ldl_lock_run waits up to
   give_up_ms (sleeping with retry.sleep_ms, else nanosleep/Sleep), so it
   is a blocking acquire with a timeout; without give_up_ms it tries once.

   desc.ride_out_ms: a renew answering a store error (negative or malformed)
   while the lease is still trusted keeps it HELD (event RENEW_ERROR) and
   tries again after ride_out_ms; the lease is lost at the local deadline
   (LEASE_EXPIRED) if no renew succeeds, or at once on a clean 0
   (HEARTBEAT_FAILED). Trust never outlives start + ttl_ms - drift_ms: start
   moves only on a renew answered 1. (An error answer applied after the
   deadline loses the lease as without ride-out: STORE_ERROR.)

   desc.campaign = 1 (needs retry.base_ms): ldl_lock_acquire starts
   competing; after any loss the lock hands the lost lease back at once and
   competes again on the schedule (a new round; state stays LOST until the
   next attempt). on_leading(user, fence) fires at every grant (campaign or
   not), after the state is HELD. ldl_lock_release steps down: no attempt is
   made until ldl_lock_acquire is called again.

       d.retry.base_ms = 50; d.campaign = 1; d.ride_out_ms = 200;
       d.on_leading = lead; d.on_lost = follow; d.on_event = log_event;
       ldl_lock_init(&l, &d);
       ldl_lock_acquire(&l);                 // compete from now on
       for (;;) { ldl_lock_poll(&l); sleep_ms(ldl_lock_due_in_ms(&l)); }

   desc.on_event(user, ev) observes: ATTEMPT, GRANTED, REFUSED, RENEWED,
   RENEW_ERROR, LOST, RELEASED, HANDED_BACK, GAVE_UP, each with the store's
   raw answer, the token, the reason, the latency (clock from the request to
   the answer being applied: for non-blocking stores, to the lock's next call)
   and the ms to the next try -- which fields each kind sets is the table at
   ldl_event; the others read 0. It runs with the lock HOOKED: calls into the
   lock from it answer LDL_ESTATE (0 once the lock is disposed) and change
   nothing (dispose: nothing). A release that times out in flight sends no
   RELEASED event (its raw answer reads LDL_EINPROGRESS).
   ldl_lock_counters() (attempts, grants, contention, refused, renewals,
   store_errors, releases, handbacks, losses by reason, worst latency of
   acquire/renew answers) and ldl_lock_raw_answer() (the last store answer
   applied: 0 contention vs < 0 store error; LDL_EINPROGRESS = timed out in
   flight) are plain reads at any time.

   desc.owner (1..LDL_OWNER_MAX-1 bytes of printable ASCII; kept as a
   pointer) is stored with the lease through the store's ldl_store_ext
   (desc.store_ext; the default MemoryStore brings its own).
   ldl_store_inspect(ext, key, &holder) asks who holds a key -- token, ms
   left, owner -- without taking it. The MemoryStore keeps the owner in the
   key's slot: at most LDL_KEY_MAX - 2 - strlen(key) bytes of it.

   TIMERS
   ======
   ldl_timers.set_timeout/clear_timeout only arm and disarm one-shot timers:
   they must never call into the lock (the lock is called from `fire`). A
   handle is spent once its timer fired (the lock never clears a spent
   handle), and clear_timeout guarantees the timer does not fire after it
   returns. set_timeout answering 0 loses the lease (TIMER_UNARMABLE).

   THE FENCING CONTRACT
   ====================
   ldl_lock_fencing_token() is the token while HELD, 0 otherwise. Inside
   ldl_lock_run() the body's child scope has the token bound (as a pointer to
   an int64_t that stays valid and unchanged until the child is shut down)
   under token_name ("lock:fence") and the lock under holder_name
   ("lock:holder"). A protected resource remembers the highest fence it has
   accepted and rejects any write carrying a lower one: a holder that was
   paused past its lease then cannot overwrite its successor's work.

   THREADS
   =======
   A lock and a MemoryStore are single-threaded objects: serialise calls on
   one object (timer callbacks included). Different objects are independent.
   Do not move or copy a lock or MemoryStore after init.
*/
#ifndef LITE_DI_LOCK_H
#define LITE_DI_LOCK_H

/* Strict ISO C hides clock_gettime; ask for POSIX before <stdint.h> pulls in
   the C library's feature selection -- at the first include, so a file that
   includes the declarations and later the implementation works too. Only in
   strict mode and only when nothing else was chosen. */
#if !defined(LDL_NO_DEFAULT_CLOCK) && \
    !defined(_WIN32) && defined(__STRICT_ANSI__) && !defined(_POSIX_C_SOURCE) && \
    !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE) && \
    !defined(_BSD_SOURCE)
#define _POSIX_C_SOURCE 200112L
#endif

#include <stddef.h>
#include <stdint.h>

#define LDL_VERSION_MAJOR 0
#define LDL_VERSION_MINOR 3
#define LDL_VERSION_PATCH 0
/* the one source of the version: LDL_VERSION is spelled from the three numbers above,
   and pkg/version.sh, CMake, Meson, pkg-config and both CLIs read them (test-pkg checks) */
#define LDL__VSTR2(x) #x
#define LDL__VSTR(x) LDL__VSTR2(x)
#define LDL_VERSION LDL__VSTR(LDL_VERSION_MAJOR) "." LDL__VSTR(LDL_VERSION_MINOR) "." LDL__VSTR(LDL_VERSION_PATCH)

#ifndef LDL_KEY_MAX
#define LDL_KEY_MAX 128
#endif
#ifndef LDL_SCOPE_BINDINGS
#define LDL_SCOPE_BINDINGS 8
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LDL__UNUSED __attribute__((unused))
#define LDL__NOINLINE __attribute__((noinline))
#else
#define LDL__UNUSED
#define LDL__NOINLINE
#endif

#ifndef LDL_API
#ifdef LDL_STATIC
#define LDL_API static LDL__UNUSED
#else
#define LDL_API extern
#endif
#endif

#ifdef __cplusplus
#define LDL__INLINE static inline
extern "C" {
#else
#define LDL__INLINE static inline LDL__UNUSED
#endif

/* ------------------------------------------------------------ results */
enum {
    LDL_OK           =  0,
    LDL_EINVAL       = -1,  /* bad argument or option; ldl_lock_why() names it */
    LDL_ESTATE       = -2,  /* call not allowed in this state (non-reentrant) */
    LDL_ENOTACQUIRED = -3,  /* run(): no grant; the body never ran */
    LDL_EFENCE       = -4,  /* run(): child scope or fence bind failed; released; body never ran */
    LDL_EBODY        = -5,  /* run(): body returned non-zero; cleanup was clean */
    LDL_EAGGREGATE   = -6,  /* run(): body failed AND a cleanup leg failed */
    LDL_ECLEANUP     = -7,  /* run(): body ok, a cleanup leg failed */
    LDL_EEXIST       = -8,  /* bind: name already registered */
    LDL_ENOSPC       = -9,  /* MemoryStore table (or a scope pool) full */
    LDL_EUNSUPPORTED = -10, /* container lacks an optional hook */
    LDL_ELOST        = -11, /* run(): body ok, cleanup clean, lease lost while the body ran */
    LDL_ESTORE       = -12, /* release(): store answered an error or a malformed value */
    LDL_EINPROGRESS  = -13  /* non-blocking store: started; the answer is pending */
};
LDL_API const char *ldl_strerror(int rc);   /* static text, never NULL */

typedef enum ldl_state {
    LDL_IDLE = 0, LDL_ACQUIRING = 1, LDL_HELD = 2,
    LDL_RELEASING = 3, LDL_RELEASED = 4, LDL_LOST = 5
} ldl_state;

typedef enum ldl_reason {
    LDL_REASON_NONE = 0, LDL_REASON_RELEASED = 1, LDL_REASON_HEARTBEAT_FAILED = 2,
    LDL_REASON_STORE_ERROR = 3, LDL_REASON_FENCE_REGRESSED = 4, LDL_REASON_DISPOSED = 5,
    LDL_REASON_TIMER_UNARMABLE = 6, LDL_REASON_LEASE_EXPIRED = 7
} ldl_reason;
LDL_API const char *ldl_state_name(int state);   /* "IDLE"...; "?" out of range */
LDL_API const char *ldl_reason_name(int reason); /* "NONE"...; "?" out of range */

/* ------------------------------------------------------------ platform vtables */
typedef struct ldl_clock {          /* monotonic milliseconds */
    uint64_t (*now_ms)(void *ctx);
    void *ctx;
} ldl_clock;                        /* all-zero = the built-in monotonic clock */

typedef struct ldl_timers {         /* one-shot timers; all-zero = manual mode */
    uintptr_t (*set_timeout)(void *ctx, void (*fire)(void *arg), void *arg, uint32_t delay_ms);
                                    /* non-zero handle, or 0 = could not arm */
    void      (*clear_timeout)(void *ctx, uintptr_t handle);
    void *ctx;
} ldl_timers;

/* ------------------------------------------------------------ the store */
#ifndef LDL_OWNER_MAX
#define LDL_OWNER_MAX 64            /* bytes of a holder identity, including the NUL */
#endif

typedef struct ldl_holder {         /* what ldl_store_inspect reports about a key */
    int64_t  token;                 /* the holder's fencing token */
    uint32_t ttl_left_ms;           /* until the store's lease ends (the store's clock) */
    char     owner[LDL_OWNER_MAX];  /* the identity stored with the lease; "" = none */
} ldl_holder;

typedef struct ldl_store {
    int (*acquire)(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out);
    int (*renew)  (void *ctx, const char *key, int64_t token, uint32_t ttl_ms);
    int (*release)(void *ctx, const char *key, int64_t token);
    void *ctx;
} ldl_store;

/* ------------------------------------------------------------ the non-blocking store (v0.2)
   One request slot per lock. A submit method queues the request and returns
   at once (LDL_OK: exactly one ldl_op_complete follows, maybe before it
   returns, unless cancel comes first; negative: nothing queued, that
   operation's store error). The store's own pump records answers with
   ldl_op_complete, which runs no lock logic; the lock applies the answer at
   its next call. cancel detaches the op: the store never touches it again
   and releases an ACQUIRE's token itself if the answer carries one. */
/* The events a non-blocking adapter's socket waits for, as its *_fd call
   answers them (for poll/epoll): one definition for every adapter. */
#define LDL_WANT_READ  1
#define LDL_WANT_WRITE 2

typedef enum ldl_op_kind {
    LDL_OP_ACQUIRE = 1, LDL_OP_RENEW = 2, LDL_OP_RELEASE = 3
} ldl_op_kind;

typedef struct ldl_op {             /* a lock's request slot; lives inside ldl_lock */
    uintptr_t store_data;           /* the store's own word: set it in submit, read it in
                                       cancel; the lock never touches it while in flight */
    int       _phase;               /* LDL__OP_IDLE / _FLYING / _ANSWERED */
    int       _kind;                /* ldl_op_kind */
    int       _rc;                  /* the recorded answer */
    int64_t   _token;               /* the recorded token (ACQUIRE) */
    uint64_t  _start;               /* clock read just before the submit */
} ldl_op;

typedef struct ldl_async_store {
    int  (*acquire)(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms);
    int  (*renew)  (void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms);
    int  (*release)(void *ctx, ldl_op *op, const char *key, int64_t token);
    void (*cancel) (void *ctx, ldl_op *op);
    void *ctx;
} ldl_async_store;

/* ------------------------------------------------------------ store extensions (v0.2, optional)
   Holder identity, beside a store (ldl_store and ldl_async_store stay as they
   are, so existing initialisers compile unchanged). Every member may be NULL.
   acquire_owned / submit_owned: acquire (blocking / non-blocking, as the
   store's own acquire) that stores `owner` with the lease; the lock uses the
   one its store kind needs when desc.owner is set. inspect: who holds `key`,
   without taking it: 1 held (*out filled), 0 free, negative = store error. */
typedef struct ldl_store_ext {
    int  (*acquire_owned)(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                          int64_t *token_out);
    int  (*submit_owned)(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                         const char *owner);
    int  (*inspect)(void *ctx, const char *key, ldl_holder *out);
    void *ctx;
} ldl_store_ext;

/* who holds `key`: 1 held (*out filled), 0 free (*out zeroed), LDL_EUNSUPPORTED
   (no inspect method), LDL_EINVAL (NULLs, or a key ldl_lock_init would refuse),
   or the store's error (malformed: LDL_ESTORE). Not declared with
   LDL_NO_ELECTION (only the election uses it; the type stays). */
#ifndef LDL_NO_ELECTION
LDL_API int ldl_store_inspect(const ldl_store_ext *ext, const char *key, ldl_holder *out);
#endif

/* store -> lock: record the answer (rc as the synchronous method would answer;
   token only for ACQUIRE). Safe from anywhere in a store's pump: it only writes
   the op. An op that is not in flight (never submitted, cancelled, or already
   answered) ignores it. */
#ifndef LDL_NO_ASYNC
LDL_API void ldl_op_complete(ldl_op *op, int rc, int64_t token);
#endif

/* the op's phase (private values; a store never writes them itself) */
enum { LDL__OP_IDLE = 0, LDL__OP_FLYING = 1, LDL__OP_ANSWERED = 2 };

/* ------------------------------------------------------------ container */
typedef struct ldl_container {
    void *(*scope)(void *self);                                   /* new child, NULL = failed */
    int   (*value)(void *scope, const char *name, void *value);   /* bind; 0 = ok */
    int   (*shutdown)(void *scope);                               /* tear down child; 0 = ok */
    int   (*singleton_factory)(void *self, const char *name, void *(*factory)(void *arg), void *arg);
    int   (*on_teardown)(void *self, const char *name, void (*fn)(void *arg), void *arg);
    void *self;
} ldl_container;

/* ------------------------------------------------------------ MemoryStore
   An open-addressing hash table over caller-owned slots: O(1) expected per
   call at a sane load factor (keep nslots >= 2x the live keys). One token
   counter per store. Expired slots are reused for any key; only when every
   slot holds an unexpired lease does acquire of a new key answer
   LDL_ENOSPC. Fields are private. */
typedef struct ldl_memstore_slot {
    int64_t  _token;        /* 0 = slot empty */
    uint64_t _expires;      /* clock ms at which the lease ends */
    uint32_t _hash;
    char     _key[LDL_KEY_MAX];
} ldl_memstore_slot;

typedef struct ldl_memstore {
    ldl_memstore_slot *_slots;
    size_t             _n;
    int64_t            _last;   /* last token issued */
    ldl_clock          _clock;
} ldl_memstore;

LDL_API int       ldl_memstore_init(ldl_memstore *ms, ldl_memstore_slot *slots, size_t nslots, ldl_clock clock);
LDL_API ldl_store ldl_memstore_store(ldl_memstore *ms);
#ifndef LDL_NO_ELECTION
LDL_API ldl_store_ext ldl_memstore_ext(ldl_memstore *ms);    /* owner + inspect */
#endif
#ifndef LDL_NO_ASYNC
LDL_API ldl_async_store ldl_memstore_async_store(ldl_memstore *ms); /* answers inside every submit */
#endif
LDL_API size_t    ldl_memstore_live(const ldl_memstore *ms);   /* O(nslots) scan */

/* ------------------------------------------------------------ reference container
   A zero-allocation DI container implementing ldl_container: named scopes
   with a parent chain, bindings resolved through the chain, reverse-order
   teardown and a live-child count. Child scopes come from a caller-owned
   pool given to the root. Names are kept as pointers (must outlive the
   scope). Fields are private. */
typedef struct ldl__binding {
    const char *name;
    void *value;                     /* a value, or the cached singleton */
    void *(*factory)(void *arg);     /* singleton factory, NULL for a value */
    void *arg;
    void (*teardown)(void *arg);
    void *teardown_arg;
    int made;                        /* singleton resolved */
} ldl__binding;

typedef struct ldl_scope ldl_scope;
struct ldl_scope {
    ldl_scope   *_parent;            /* NULL for the root */
    ldl_scope   *_root;
    ldl_scope   *_pool;              /* root only: child storage */
    size_t       _npool;
    size_t       _children;          /* live direct children */
    size_t       _nb;
    int          _open;              /* 1 between init/child and shutdown */
    ldl__binding _b[LDL_SCOPE_BINDINGS];
};

LDL_API int    ldl_scope_init(ldl_scope *root, ldl_scope *pool, size_t npool);
LDL_API ldl_container ldl_scope_container(ldl_scope *root);
LDL_API ldl_scope *ldl_scope_child(ldl_scope *s);          /* NULL: pool empty or s closed */
LDL_API int    ldl_scope_value(ldl_scope *s, const char *name, void *value);  /* LDL_EEXIST */
LDL_API int    ldl_scope_singleton(ldl_scope *s, const char *name, void *(*factory)(void *arg), void *arg);
LDL_API int    ldl_scope_on_teardown(ldl_scope *s, const char *name, void (*fn)(void *arg), void *arg);
LDL_API void  *ldl_scope_get(ldl_scope *s, const char *name);  /* through the chain; NULL = none */
LDL_API int    ldl_scope_shutdown(ldl_scope *s);  /* children first, then teardowns in reverse */
LDL_API size_t ldl_scope_live_children(const ldl_scope *s);

/* ------------------------------------------------------------ leader election (all optional)
   See LEADER ELECTION in the top doc. All-zero = off: the v0.1 behaviour. */
typedef struct ldl_retry {          /* the acquire retry schedule */
    uint32_t base_ms;               /* first backoff ceiling; 0 = off (acquire tries once) */
    uint32_t cap_ms;                /* largest ceiling; 0 = ttl_ms */
    uint32_t give_up_ms;            /* stop this long after a round began; 0 = never
                                       (ldl_lock_run: its wait budget; 0 = no wait) */
    uint64_t seed;                  /* per-lock PRNG seed; 0 = from the lock's address,
                                       the clock and the process id (none with
                                       LDL_NO_DEFAULT_CLOCK); an explicit seed must
                                       differ per process, or forked workers align */
    void   (*sleep_ms)(void *ctx, uint32_t ms);  /* ldl_lock_run's wait only; NULL =
                                       built-in (nanosleep / Sleep) */
    void    *sleep_ctx;
} ldl_retry;

typedef enum ldl_event_kind {
    LDL_EV_ATTEMPT = 1,     /* an acquire request went to the store */
    LDL_EV_GRANTED = 2,     /* HELD: token = the fence */
    LDL_EV_REFUSED = 3,     /* no grant: raw 0 = contention, < 0 = store error; a yes the
                               lock refused has its token and reason (FENCE_REGRESSED,
                               LEASE_EXPIRED); next_ms = the next attempt, or UINT32_MAX */
    LDL_EV_RENEWED = 4,     /* a renew answered 1 and was applied */
    LDL_EV_RENEW_ERROR = 5, /* ride-out: a renew answered an error; still HELD; next_ms */
    LDL_EV_LOST = 6,        /* reason; token = the lost lease */
    LDL_EV_RELEASED = 7,    /* the caller's release was answered: raw, token */
    LDL_EV_HANDED_BACK = 8, /* a lease this lock will not use went back: token */
    LDL_EV_GAVE_UP = 9      /* the retry schedule reached give_up_ms (or could not arm
                               its timer): no more attempts */
} ldl_event_kind;

/* The fields each kind sets (x); every other field reads 0. This table is
   the one place they are decided (tests/core/election.c checks it):
     kind          raw  reason  token  latency_ms  next_ms
     ATTEMPT        .     .       .        .          .
     GRANTED        x     .       x        x          .
     REFUSED        x     x(1)    x(1)     x          x
     RENEWED        x     .       x        x          .
     RENEW_ERROR    x     .       x        x          x
     LOST           .     x       x        .          .
     RELEASED       x     .       x        .          .
     HANDED_BACK    .     .       x        .          .
     GAVE_UP        .     .       .        .          .
   (1) only for a yes the lock refused (FENCE_REGRESSED, LEASE_EXPIRED).
   REFUSED after an ACQUIRING timeout: raw LDL_EINPROGRESS, latency = the wait. */
typedef struct ldl_event {
    int      kind;          /* ldl_event_kind */
    int      raw;           /* the store's raw answer */
    int      reason;        /* LDL_REASON_* */
    int64_t  token;
    uint32_t latency_ms;    /* clock from the request to the answer being applied */
    uint32_t next_ms;       /* ms to the next try (UINT32_MAX: none) */
} ldl_event;

typedef struct ldl_counters {       /* since init; plain reads at any time */
    uint32_t attempts;              /* acquire requests sent */
    uint32_t grants;                /* acquires that made the lock HELD */
    uint32_t contention;            /* acquire answered a clean 0 (someone holds it) */
    uint32_t refused;               /* a yes the lock refused (fence, window) */
    uint32_t renewals;              /* renews answered 1 and applied */
    uint32_t store_errors;          /* answers negative or malformed (acquire, renew,
                                       release), and requests that timed out in flight
                                       (an ACQUIRING or a RELEASING one) */
    uint32_t releases;              /* the caller's release requests sent */
    uint32_t handbacks;             /* leases handed back */
    uint32_t losses[8];             /* lost leases, by LDL_REASON_* */
    uint32_t worst_latency_ms;      /* the longest acquire or renew wait: the slowest
                                       answer applied, or an acquire that timed out in
                                       flight (its wait until the timeout was applied) */
} ldl_counters;

/* ------------------------------------------------------------ the lock */
typedef struct ldl_lock_desc {
    ldl_container  container;     /* REQUIRED: scope, value, shutdown non-NULL */
    const char    *key;           /* REQUIRED: 1..LDL_KEY_MAX-1 bytes, no control bytes */
    uint32_t       ttl_ms;        /* REQUIRED: > 0 */
    uint32_t       heartbeat_ms;  /* 0 = ttl_ms / 3; heartbeat_ms * 2 <= ttl_ms */
    uint32_t       drift_ms;      /* 0 = ttl_ms / 100 + 2; < ttl_ms - heartbeat_ms */
    const ldl_store *store;       /* NULL = a fresh store owned by this lock: one key
                                     (its own), the MemoryStore's rules (decision 0014) */
    ldl_clock      clock;         /* zero = built-in monotonic clock */
    ldl_timers     timers;        /* zero = manual mode: call ldl_lock_poll() */
    const char    *token_name;    /* NULL = "lock:fence" */
    const char    *holder_name;   /* NULL = "lock:holder" */
    void         (*on_lost)(void *user, int reason);  /* fired once per lost lease */
    void          *user;          /* passed to on_lost */
    const ldl_async_store *async_store; /* v0.2: NULL = use `store`. Non-NULL: store NULL,
                                           all four methods, timers all-zero (manual mode) */
    /* THE ELECTION GROUP (v0.2; all zero = off, see LEADER ELECTION): these seven
       members, in this order, last in the desc (so a zeroed v0.2 desc, positional
       initialisers included, compiles and means the same; decision 0010).
       LDL__ELECTION_GROUP below lists them once for LDL_NO_ELECTION's check. */
    ldl_retry      retry;         /* acquire retry schedule (base_ms 0 = try once) */
    uint32_t       ride_out_ms;   /* 0 = a renew store error loses the lease; > 0: retry
                                     the renew this often while the lease is trusted */
    int            campaign;      /* 1 = compete again after a loss, until release */
    void         (*on_leading)(void *user, int64_t fence);   /* each grant */
    void         (*on_event)(void *user, const ldl_event *ev); /* observe only: calls
                                     into the lock from it answer LDL_ESTATE */
    const char    *owner;         /* identity stored with the lease; kept as a pointer */
    const ldl_store_ext *store_ext; /* the store's extensions (owner needs one; NULL with
                                     the default MemoryStore = its own) */
} ldl_lock_desc;

/* the election group, member by member (LDL_NO_ELECTION refuses any non-zero) */
#define LDL__ELECTION_GROUP(X) \
    X(retry.base_ms) X(retry.cap_ms) X(retry.give_up_ms) X(retry.seed) X(retry.sleep_ms) \
    X(retry.sleep_ctx) X(ride_out_ms) X(campaign) X(on_leading) X(on_event) X(owner) X(store_ext)

#ifndef LDL_NO_ELECTION
/* the election layer's state (private; see [election] in the implementation) */
typedef struct ldl__election {
    uint64_t      next_try;       /* clock ms of the next acquire attempt (retrying) */
    uint64_t      ride_next;      /* riding out: clock ms of the next renew; else 0 */
    uint64_t      give_up;        /* clock ms the round gives up at; 0 = never */
    uint64_t      rng;            /* xorshift64* state */
    int           retrying;       /* 1: an acquire attempt is scheduled at next_try */
    int           competing;      /* 1 from acquire (with a retry schedule) until the
                                     round ends (a campaign: until release/dispose) */
    uint32_t      round;          /* attempts in this round */
    uint32_t      ride_out_ms;
    ldl_retry     retry;          /* resolved (cap_ms filled in) */
    int           campaign;
    void        (*on_leading)(void *user, int64_t fence);
    void        (*on_event)(void *user, const ldl_event *ev);
    const char   *owner;
    ldl_store_ext ext;
} ldl__election;
#endif

/* the default store (desc.store and desc.async_store NULL): one key, the
   lock's own, with the MemoryStore's rules for it (tokens from a counter that
   only rises, the lease against the lock's clock, release by token). 24 bytes
   where a one-slot MemoryStore took LDL_KEY_MAX + 48 (decision 0014). */
typedef struct ldl__own {
    int64_t       last;           /* last token issued */
    int64_t       token;          /* the lease's token; 0 = free */
    uint64_t      expires;        /* clock ms at which the lease ends */
} ldl__own;

/* the members of desc.container the lock calls (run); bind_lock is given its own */
typedef struct ldl__cont {
    void *(*scope)(void *self);
    int   (*value)(void *scope, const char *name, void *value);
    int   (*shutdown)(void *scope);
    void *self;
} ldl__cont;

typedef struct ldl_lock ldl_lock;
struct ldl_lock {                 /* private: the type is complete so you own the storage */
    /* hot: what poll's fast path reads sits in the first 64 bytes (checked at
       compile time below: ldl__check_hot) */
    int           _state;         /* written only by ldl__set_state */
    unsigned char _depth;         /* store calls of this lock on the stack (INSIDE) */
    unsigned char _hooked;        /* 1 while desc.on_event runs (HOOKED) */
    unsigned char _dead;          /* disposed (or failed init) */
    unsigned char _reason;        /* LDL_REASON_* */
    uint32_t      _quiet;         /* poll has nothing to do before this: heartbeat_ms
                                     (manual mode) or the window (timer mode); 0 while
                                     on_event runs, so poll's fast path (which does not
                                     read _hooked) takes the guard */
    unsigned char _loss_reason;   /* reason of the last loss */
    unsigned char _why;           /* ldl_lock_why: an LDL__W index */
    unsigned short _losses;       /* lost leases, mod 65536: only compared across one
                                     call or one run body (sizeof(ldl_lock) is 400 B on
                                     Cortex-M4 with both switches: no padding left) */
    uint64_t      _start;         /* clock before the last good acquire/renew */
    ldl_clock     _clock;
    ldl_op        _op;            /* the one request slot (non-blocking stores) */
    int           _answer;        /* ldl_lock_answer() */
    uint32_t      _window;        /* ttl_ms - drift_ms */
    uint32_t      _ttl_ms;
    uint32_t      _heartbeat_ms;
    int64_t       _token;         /* while HELD, else 0 */
    int64_t       _last;          /* highest token ever accepted */
    int64_t       _owed;          /* a lost (or cut) lease not yet handed back, else 0 */
    uintptr_t     _timer;         /* armed one-shot, 0 = none */
    union { ldl_store s; ldl_async_store a; } _st;   /* the store, by kind */
    ldl_timers    _timers;
    char          _key[LDL_KEY_MAX];
    /* cold */
    ldl__cont     _container;     /* what run() calls of desc.container */
    const char   *_token_name;
    const char   *_holder_name;
    void        (*_on_lost)(void *user, int reason);
    void         *_user;
    int           _raw;           /* the last store answer applied */
#ifndef LDL_NO_ASYNC
    unsigned char _async;         /* 1: _st.a is a non-blocking store (cold: read
                                     once per store call) */
#endif
    ldl__own      _own;           /* the default store, when desc.store is NULL */
#ifndef LDL_NO_ELECTION
    int64_t       _rel_tok;       /* the token of the last release request (its
                                     event's; none without the election layer) */
#endif
    ldl_counters  _counters;
#ifndef LDL_NO_ELECTION
    ldl__election _el;            /* the election layer (gone with LDL_NO_ELECTION) */
#endif
};

typedef struct ldl_run_result {
    int body_rc;      /* what the body returned (0 if it never ran) */
    int shutdown_rc;  /* what the child scope's shutdown returned */
    int release_rc;   /* what ldl_lock_release returned (1, 0 or LDL_ESTORE) */
    int lost_reason;  /* LDL_REASON_* if the lease was lost while the body ran, else 0 */
} ldl_run_result;

LDL_API int  ldl_lock_init(ldl_lock *lock, const ldl_lock_desc *desc);  /* LDL_OK or LDL_EINVAL */
LDL_API const char *ldl_lock_why(const ldl_lock *lock);
LDL_API int  ldl_lock_acquire(ldl_lock *lock);   /* 1 granted, 0 not, LDL_ESTATE */
LDL_API int  ldl_lock_release(ldl_lock *lock);   /* 1 store ack, 0 no/nothing, LDL_ESTORE */
LDL_API int  ldl_lock_tick(ldl_lock *lock);      /* renew now: 1 still held, 0 not */
LDL_API int  ldl_lock_poll(ldl_lock *lock);      /* every frame: 1 held, 0 not */
LDL_API int  ldl_lock_run(ldl_lock *lock, int (*body)(void *scope, void *user), void *user,
                          ldl_run_result *result);
LDL_API void ldl_lock_dispose(ldl_lock *lock);   /* idempotent terminal */
LDL_API uint32_t ldl_lock_valid_ms(ldl_lock *lock);   /* ms still guaranteed; 0 = not held */
LDL_API uint32_t ldl_lock_due_in_ms(ldl_lock *lock);  /* ms until poll has work; UINT32_MAX = not held */
LDL_API int  ldl_bind_lock(const ldl_container *c, const char *name, ldl_lock *lock);

/* hot getters: a plain field read each */
LDL__INLINE int     ldl_lock_state(const ldl_lock *lock)         { return lock->_state; }
LDL__INLINE int     ldl_lock_held(const ldl_lock *lock)          { return lock->_state == LDL_HELD; }
LDL__INLINE int64_t ldl_lock_fencing_token(const ldl_lock *lock) { return lock->_token; }
LDL__INLINE int     ldl_lock_reason(const ldl_lock *lock)        { return lock->_reason; }
LDL__INLINE int     ldl_lock_pending(const ldl_lock *lock)       { return lock->_op._phase != 0; }
LDL__INLINE int     ldl_lock_answer(const ldl_lock *lock)        { return lock->_answer; }
/* leader election: the last store answer the lock applied (raw, so a store
   error is never mistaken for contention), whether an acquire attempt is
   scheduled, and the counters */
LDL__INLINE int     ldl_lock_raw_answer(const ldl_lock *lock)    { return lock->_raw; }
#ifndef LDL_NO_ELECTION
LDL__INLINE int     ldl_lock_retrying(const ldl_lock *lock)      { return lock->_el.retrying; }
#else
LDL__INLINE int     ldl_lock_retrying(const ldl_lock *lock)      { (void)lock; return 0; }
#endif
LDL__INLINE const ldl_counters *ldl_lock_counters(const ldl_lock *lock) { return &lock->_counters; }

#ifndef LDL_NO_ASYNC
/* For a store built on other non-blocking stores (a router such as the Redis
   Cluster view): its own ldl_op, submitted to the store below. ldl_op_begin
   marks it in flight (so that store's ldl_op_complete records into it);
   ldl_op_result is 1 once it was answered, with the answer in *rc / *token. */
LDL__INLINE void ldl_op_begin(ldl_op *op) {
    op->_phase = LDL__OP_FLYING; op->_kind = 0; op->_rc = 0; op->_token = 0; op->_start = 0;
}
LDL__INLINE int ldl_op_result(const ldl_op *op, int *rc, int64_t *token) {
    if (op->_phase != LDL__OP_ANSWERED) return 0;
    if (rc) *rc = op->_rc;
    if (token) *token = op->_token;
    return 1;
}
#endif

#ifdef __cplusplus
}
#endif

/* compile-time size checks (negative array on failure) */
typedef char ldl__check_key_max[(LDL_KEY_MAX >= 2 && LDL_KEY_MAX <= 65536) ? 1 : -1];
typedef char ldl__check_int64[(sizeof(int64_t) == 8) ? 1 : -1];
/* poll's fast path (state, busy, quiet, start, clock, the op's phase) in one cache line */
typedef char ldl__check_hot[(offsetof(ldl_lock, _op) + offsetof(ldl_op, _phase) + sizeof(int) <= 64) ? 1 : -1];

#endif /* LITE_DI_LOCK_H */

/* ==================================================================== */
/*                          IMPLEMENTATION                               */
/* ==================================================================== */
#ifdef LITE_DI_LOCK_IMPLEMENTATION
#ifndef LITE_DI_LOCK_C
#define LITE_DI_LOCK_C

#ifndef LDL_NO_DEFAULT_CLOCK
#if defined(_WIN32)
#include <windows.h>       /* not WIN32_LEAN_AND_MEAN: a later <windows.h> in the
                              same file would silently stay lean */
#else
#include <time.h>
#include <unistd.h>        /* getpid: the retry seed's per-process part */
#if !defined(CLOCK_MONOTONIC)
#error "lite_di_lock.h: the built-in clock needs clock_gettime(CLOCK_MONOTONIC). Define _POSIX_C_SOURCE=200112L before including any system header (or compile with -std=gnu99), or define LDL_NO_DEFAULT_CLOCK and pass an ldl_clock."
#endif
#endif
#endif /* LDL_NO_DEFAULT_CLOCK */

/* LDL_ASSERT(c): the state setter's check that each transition is an edge of
   THE EDGES (below). Default: assert() from <assert.h> in a hosted build
   without NDEBUG (every test build), nothing under NDEBUG (release builds:
   not one instruction more) or in a freestanding build (no <assert.h>: the
   bare-metal port compiles the header with -nostdinc). Define it yourself to
   check anywhere, e.g. #define LDL_ASSERT(c) do { if (!(c)) my_panic(); } while (0),
   or as ((void)0) to turn it off. */
#ifndef LDL_ASSERT
#if !defined(NDEBUG) && (!defined(__STDC_HOSTED__) || __STDC_HOSTED__)
#include <assert.h>
#define LDL_ASSERT(c) assert(c)
#else
#define LDL_ASSERT(c) ((void)0)
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ names */
LDL_API const char *ldl_strerror(int rc) {
    switch (rc) {
    case LDL_OK:           return "ok";
    case LDL_EINVAL:       return "invalid argument or option";
    case LDL_ESTATE:       return "call not allowed in this state";
    case LDL_ENOTACQUIRED: return "lock not acquired; the body never ran";
    case LDL_EFENCE:       return "child scope or fence bind failed; lease released; body never ran";
    case LDL_EBODY:        return "body failed; cleanup was clean";
    case LDL_EAGGREGATE:   return "body failed and a cleanup leg failed";
    case LDL_ECLEANUP:     return "body ok but a cleanup leg failed";
    case LDL_EEXIST:       return "name already registered";
    case LDL_ENOSPC:       return "no free slot";
    case LDL_EUNSUPPORTED: return "container lacks an optional hook";
    case LDL_ELOST:        return "lease lost while the body ran";
    case LDL_ESTORE:       return "store answered an error or a malformed value";
    case LDL_EINPROGRESS:  return "request started; the answer is pending";
    default:               return "unknown result code";
    }
}

LDL_API const char *ldl_state_name(int state) {
    switch (state) {   /* a switch, not a pointer table: nothing lands in .data */
    case LDL_IDLE:      return "IDLE";
    case LDL_ACQUIRING: return "ACQUIRING";
    case LDL_HELD:      return "HELD";
    case LDL_RELEASING: return "RELEASING";
    case LDL_RELEASED:  return "RELEASED";
    case LDL_LOST:      return "LOST";
    default:            return "?";
    }
}

LDL_API const char *ldl_reason_name(int reason) {
    switch (reason) {
    case LDL_REASON_NONE:             return "NONE";
    case LDL_REASON_RELEASED:         return "RELEASED";
    case LDL_REASON_HEARTBEAT_FAILED: return "HEARTBEAT_FAILED";
    case LDL_REASON_STORE_ERROR:      return "STORE_ERROR";
    case LDL_REASON_FENCE_REGRESSED:  return "FENCE_REGRESSED";
    case LDL_REASON_DISPOSED:         return "DISPOSED";
    case LDL_REASON_TIMER_UNARMABLE:  return "TIMER_UNARMABLE";
    case LDL_REASON_LEASE_EXPIRED:    return "LEASE_EXPIRED";
    default:                          return "?";
    }
}

/* ------------------------------------------------------------ small helpers */
static size_t ldl__keylen(const char *s) {   /* LDL_KEY_MAX when too long */
    size_t n = 0;
    while (n < LDL_KEY_MAX && s[n]) n++;
    return n;
}

static int ldl__streq(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}

/* key hash and length in one pass (length capped at LDL_KEY_MAX): FNV-1a over
   4-byte groups (one multiply per 4 bytes, not per byte: the multiply chain is
   the latency) and the murmur3 finaliser, so the high bits that ldl__home
   uses are well mixed */
static uint32_t ldl__hashlen(const char *s, size_t *len) {
    const unsigned char *u = (const unsigned char *)s;
    uint32_t h = 2166136261u, w = 0;
    size_t n = 0;
    /* whole groups, one test per byte and one multiply per group; a group cut
       short by the NUL leaves its bytes in w, as the tail loop below would.
       A size-optimised build (-Os) keeps only the byte loop: the same values. */
#ifndef __OPTIMIZE_SIZE__
    for (; n + 4 <= LDL_KEY_MAX; n += 4) {
        if (!u[n]) break;
        w = u[n];
        if (!u[n + 1]) { n += 1; break; }
        w = (w << 8) | u[n + 1];
        if (!u[n + 2]) { n += 2; break; }
        w = (w << 8) | u[n + 2];
        if (!u[n + 3]) { n += 3; break; }
        h = (h ^ ((w << 8) | u[n + 3])) * 16777619u;
        w = 0;
    }
    if (n + 4 > LDL_KEY_MAX)                 /* the tail when LDL_KEY_MAX % 4 != 0 */
#endif
    {
        while (n < LDL_KEY_MAX && u[n]) {
            w = (w << 8) | u[n];
            if ((++n & 3u) == 0) { h = (h ^ w) * 16777619u; w = 0; }
        }
    }
    h = (h ^ w ^ (uint32_t)n) * 16777619u;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    *len = n;
    return h;
}

/* home slot of hash h in n slots: a multiply-shift, not a division */
static size_t ldl__home(uint32_t h, size_t n) {
#if SIZE_MAX > 0xFFFFFFFFu
    if (n > 0xFFFFFFFFu) return (size_t)(h % n);  /* (only where size_t is wider) */
#endif
    return (size_t)(((uint64_t)h * (uint64_t)n) >> 32);
}

#ifndef LDL_NO_DEFAULT_CLOCK
static uint64_t ldl__default_now(void *ctx) {
    (void)ctx;
#if defined(_WIN32)
    {
        LARGE_INTEGER c, f;
        uint64_t cu, fu;
        QueryPerformanceCounter(&c);
        QueryPerformanceFrequency(&f);
        cu = (uint64_t)c.QuadPart;
        fu = (uint64_t)f.QuadPart;
        if (fu == 0) return 0;
        return (cu / fu) * 1000u + ((cu % fu) * 1000u) / fu;   /* no overflow */
    }
#else
    {
        struct timespec ts;
        if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    }
#endif
}

#ifndef LDL_NO_ELECTION
/* The retry seed's system part when retry.seed is 0: the process id and the
   clock in nanoseconds, so workers forked from one parent that init the same
   lock address in the same millisecond still draw apart. */
static uint64_t ldl__entropy(void) {
#if defined(_WIN32)
    LARGE_INTEGER c;
    QueryPerformanceCounter(&c);
    return ((uint64_t)GetCurrentProcessId() << 32) ^ (uint64_t)c.QuadPart;
#else
    struct timespec ts;
    uint64_t t = 0;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
        t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return ((uint64_t)(uint32_t)getpid() << 32) ^ t;
#endif
}
#endif /* LDL_NO_ELECTION */
#endif

/* resolve a caller clock: 1 ok, 0 invalid */
static int ldl__clock_resolve(ldl_clock *c) {
    if (c->now_ms) return 1;
    if (c->ctx) return 0;
#ifdef LDL_NO_DEFAULT_CLOCK
    return 0;
#else
    c->now_ms = ldl__default_now;
    return 1;
#endif
}

/* ------------------------------------------------------------ MemoryStore */
LDL_API int ldl_memstore_init(ldl_memstore *ms, ldl_memstore_slot *slots, size_t nslots, ldl_clock clock) {
    size_t i;
    if (!ms || !slots || nslots == 0) return LDL_EINVAL;
    if (!ldl__clock_resolve(&clock)) return LDL_EINVAL;
    for (i = 0; i < nslots; i++) slots[i]._token = 0;   /* the rest is read only under a token */
    ms->_slots = slots;
    ms->_n = nslots;
    ms->_last = 0;
    ms->_clock = clock;
    return LDL_OK;
}

static uint64_t ldl__expiry(uint64_t now, uint32_t ttl) {
    return (now > UINT64_MAX - ttl) ? UINT64_MAX : now + ttl;   /* saturate */
}

/* a slot's key against `key` of `len` bytes (len < LDL_KEY_MAX): a counted
   loop over the len + 1 bytes with the NUL, no end test per byte; -Os builds
   keep the smaller string compare (the same answer) */
#ifdef __OPTIMIZE_SIZE__
#define ldl__keyeq(a, key, len) ((void)(len), ldl__streq((a), (key)))
#else
static int ldl__keyeq(const char *a, const char *key, size_t len) {
    size_t j;
    for (j = 0; j <= len; j++) if (a[j] != key[j]) return 0;
    return 1;
}
#endif

/* find key (`len` bytes): index, or (size_t)-1 */
static size_t ldl__ms_find(const ldl_memstore *ms, const char *key, uint32_t h, size_t len) {
    size_t i = ldl__home(h, ms->_n), k;
    for (k = 0; k < ms->_n; k++) {
        const ldl_memstore_slot *s = &ms->_slots[i];
        if (s->_token == 0) return (size_t)-1;
        if (s->_hash == h && ldl__keyeq(s->_key, key, len)) return i;
        if (++i == ms->_n) i = 0;
    }
    return (size_t)-1;
}

/* remove slot i, backward-shifting the probe chain (no tombstones) */
static void ldl__ms_remove(ldl_memstore *ms, size_t i) {
    size_t n = ms->_n, j = i;
    ms->_slots[i]._token = 0;                    /* the hole; j stops at a hole */
    for (;;) {
        size_t home;
        if (++j == n) j = 0;
        if (ms->_slots[j]._token == 0) break;
        home = ldl__home(ms->_slots[j]._hash, n);
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
            ms->_slots[i] = ms->_slots[j];
            ms->_slots[j]._token = 0;
            i = j;
        }
    }
    ms->_slots[i]._key[0] = 0;
}

static int ldl__ms_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    ldl_memstore *ms = (ldl_memstore *)ctx;
    size_t len, i, k, cand = (size_t)-1;
    uint32_t h;
    uint64_t now;
    ldl_memstore_slot *s;
    if (!ms || !key || !token_out || ttl_ms == 0) return LDL_EINVAL;
    h = ldl__hashlen(key, &len);
    if (len == 0 || len >= LDL_KEY_MAX) return LDL_EINVAL;
    if (ms->_last == INT64_MAX) return LDL_ENOSPC;           /* tokens exhausted */
    now = ms->_clock.now_ms(ms->_clock.ctx);
    i = ldl__home(h, ms->_n);
    for (k = 0; k < ms->_n; k++) {
        s = &ms->_slots[i];
        if (s->_token == 0) { cand = i; break; }  /* an empty slot first: an expired
                                                    lease stays releasable while it can */
        if (s->_hash == h && ldl__keyeq(s->_key, key, len)) {
            if (now < s->_expires) return 0;                      /* held by someone */
            cand = i;                                             /* expired: steal */
            break;
        }
        if (cand == (size_t)-1 && now >= s->_expires) cand = i;   /* expired: reusable */
        if (++i == ms->_n) i = 0;
    }
    if (cand == (size_t)-1) return LDL_ENOSPC;
    s = &ms->_slots[cand];
    s->_token = ++ms->_last;
    s->_expires = ldl__expiry(now, ttl_ms);
    s->_hash = h;
    for (k = 0; k <= len; k++) s->_key[k] = key[k];
    if (len + 1 < LDL_KEY_MAX) s->_key[len + 1] = 0;          /* no owner */
    *token_out = s->_token;
    return 1;
}

#ifndef LDL_NO_ELECTION
/* the owner lives in the slot's key buffer, after the key's NUL: at most
   LDL_KEY_MAX - 2 - strlen(key) bytes of it are kept (decision 0009) */
static int ldl__ms_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                 int64_t *token_out) {
    ldl_memstore *ms = (ldl_memstore *)ctx;
    int rc = ldl__ms_acquire(ctx, key, ttl_ms, token_out);
    if (rc == 1 && owner) {
        size_t len, i, k;
        char *b;
        uint32_t h = ldl__hashlen(key, &len);
        i = ldl__ms_find(ms, key, h, len);
        b = ms->_slots[i]._key;
        k = len + 1;
        while (k + 1 < LDL_KEY_MAX && *owner) b[k++] = *owner++;
        if (k < LDL_KEY_MAX) b[k] = 0;
    }
    return rc;
}

static int ldl__ms_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_memstore *ms = (ldl_memstore *)ctx;
    size_t i, len, k, o = 0;
    uint64_t now, left;
    uint32_t h;
    if (!ms || !key || !out) return LDL_EINVAL;
    h = ldl__hashlen(key, &len);
    if (len == 0 || len >= LDL_KEY_MAX) return LDL_EINVAL;
    i = ldl__ms_find(ms, key, h, len);
    now = ms->_clock.now_ms(ms->_clock.ctx);
    if (i == (size_t)-1 || now >= ms->_slots[i]._expires) return 0;
    left = ms->_slots[i]._expires - now;
    out->token = ms->_slots[i]._token;
    out->ttl_left_ms = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
    for (k = len + 1; k < LDL_KEY_MAX && ms->_slots[i]._key[k] && o + 1 < LDL_OWNER_MAX; k++)
        out->owner[o++] = ms->_slots[i]._key[k];
    out->owner[o] = 0;
    return 1;
}
#endif /* LDL_NO_ELECTION */

static int ldl__ms_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    ldl_memstore *ms = (ldl_memstore *)ctx;
    size_t i, len;
    uint32_t h;
    uint64_t now;
    if (!ms || !key || ttl_ms == 0) return LDL_EINVAL;
    h = ldl__hashlen(key, &len);
    if (len == 0 || len >= LDL_KEY_MAX) return LDL_EINVAL;
    if (token < 1) return 0;
    i = ldl__ms_find(ms, key, h, len);
    if (i == (size_t)-1 || ms->_slots[i]._token != token) return 0;
    now = ms->_clock.now_ms(ms->_clock.ctx);
    if (now >= ms->_slots[i]._expires) return 0;
    ms->_slots[i]._expires = ldl__expiry(now, ttl_ms);
    return 1;
}

static int ldl__ms_release(void *ctx, const char *key, int64_t token) {
    ldl_memstore *ms = (ldl_memstore *)ctx;
    size_t i, len;
    uint32_t h;
    if (!ms || !key) return LDL_EINVAL;
    h = ldl__hashlen(key, &len);
    if (len == 0 || len >= LDL_KEY_MAX) return LDL_EINVAL;
    if (token < 1) return 0;
    i = ldl__ms_find(ms, key, h, len);
    if (i == (size_t)-1 || ms->_slots[i]._token != token) return 0;
    ldl__ms_remove(ms, i);
    return 1;
}

LDL_API ldl_store ldl_memstore_store(ldl_memstore *ms) {
    ldl_store s;
    s.acquire = ldl__ms_acquire;
    s.renew = ldl__ms_renew;
    s.release = ldl__ms_release;
    s.ctx = ms;
    return s;
}

#ifndef LDL_NO_ELECTION
#ifndef LDL_NO_ASYNC
static int ldl__msa_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                                  const char *owner);
#endif

LDL_API ldl_store_ext ldl_memstore_ext(ldl_memstore *ms) {
    ldl_store_ext x;
    x.acquire_owned = ldl__ms_acquire_owned;
#ifndef LDL_NO_ASYNC
    x.submit_owned = ldl__msa_acquire_owned;
#else
    x.submit_owned = NULL;
#endif
    x.inspect = ldl__ms_inspect;
    x.ctx = ms;
    return x;
}

LDL_API int ldl_store_inspect(const ldl_store_ext *x, const char *key, ldl_holder *out) {
    size_t len;
    int rc;
    if (!x || !key || !out) return LDL_EINVAL;
    len = ldl__keylen(key);
    if (len == 0 || len >= LDL_KEY_MAX) return LDL_EINVAL;
    while (len--)                            /* a key ldl_lock_init would refuse */
        if ((unsigned char)key[len] < 0x20 || key[len] == 0x7F) return LDL_EINVAL;
    if (!x->inspect) return LDL_EUNSUPPORTED;
    out->token = 0; out->ttl_left_ms = 0; out->owner[0] = 0;
    rc = x->inspect(x->ctx, key, out);
    out->owner[LDL_OWNER_MAX - 1] = 0;
    if (rc == 1 && out->token >= 1) return 1;
    out->token = 0; out->ttl_left_ms = 0; out->owner[0] = 0;
    return rc == 0 ? 0 : rc < 0 ? rc : LDL_ESTORE;       /* 1 without a token: malformed */
}
#endif /* LDL_NO_ELECTION */

#ifndef LDL_NO_ASYNC
/* the non-blocking view: every submit answers inside the call */
static int ldl__msa_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    int64_t tok = 0;
    int rc;
    if (!op) return LDL_EINVAL;
    rc = ldl__ms_acquire(ctx, key, ttl_ms, &tok);
    ldl_op_complete(op, rc, tok);
    return LDL_OK;
}
#ifndef LDL_NO_ELECTION
static int ldl__msa_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                                  const char *owner) {
    int64_t tok = 0;
    int rc;
    if (!op) return LDL_EINVAL;
    rc = ldl__ms_acquire_owned(ctx, key, ttl_ms, owner, &tok);
    ldl_op_complete(op, rc, tok);
    return LDL_OK;
}
#endif
static int ldl__msa_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    if (!op) return LDL_EINVAL;
    ldl_op_complete(op, ldl__ms_renew(ctx, key, token, ttl_ms), 0);
    return LDL_OK;
}
static int ldl__msa_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    if (!op) return LDL_EINVAL;
    ldl_op_complete(op, ldl__ms_release(ctx, key, token), 0);
    return LDL_OK;
}
static void ldl__msa_cancel(void *ctx, ldl_op *op) { (void)ctx; (void)op; } /* never in flight */

LDL_API ldl_async_store ldl_memstore_async_store(ldl_memstore *ms) {
    ldl_async_store s;
    s.acquire = ldl__msa_acquire;
    s.renew = ldl__msa_renew;
    s.release = ldl__msa_release;
    s.cancel = ldl__msa_cancel;
    s.ctx = ms;
    return s;
}
#endif /* LDL_NO_ASYNC */

LDL_API size_t ldl_memstore_live(const ldl_memstore *ms) {
    size_t i, live = 0;
    uint64_t now;
    if (!ms || !ms->_slots) return 0;
    now = ms->_clock.now_ms(ms->_clock.ctx);
    for (i = 0; i < ms->_n; i++)
        if (ms->_slots[i]._token != 0 && now < ms->_slots[i]._expires) live++;
    return live;
}

/* ------------------------------------------------------------ reference container */
static void ldl__scope_reset(ldl_scope *s, ldl_scope *parent, ldl_scope *root) {
    s->_parent = parent;
    s->_root = root;
    s->_pool = NULL;
    s->_npool = 0;
    s->_children = 0;
    s->_nb = 0;
    s->_open = 1;
}

LDL_API int ldl_scope_init(ldl_scope *root, ldl_scope *pool, size_t npool) {
    size_t i;
    if (!root || (!pool && npool)) return LDL_EINVAL;
    ldl__scope_reset(root, NULL, root);
    root->_pool = pool;
    root->_npool = npool;
    for (i = 0; i < npool; i++) pool[i]._open = 0;
    return LDL_OK;
}

LDL_API ldl_scope *ldl_scope_child(ldl_scope *s) {
    ldl_scope *root;
    size_t i;
    if (!s || !s->_open) return NULL;
    root = s->_root;
    for (i = 0; i < root->_npool; i++) {
        if (!root->_pool[i]._open) {
            ldl__scope_reset(&root->_pool[i], s, root);
            s->_children++;
            return &root->_pool[i];
        }
    }
    return NULL;
}

static ldl__binding *ldl__scope_own(ldl_scope *s, const char *name) {
    size_t i;
    for (i = 0; i < s->_nb; i++)
        if (ldl__streq(s->_b[i].name, name)) return &s->_b[i];
    return NULL;
}

static ldl__binding *ldl__scope_add(ldl_scope *s, const char *name, int *rc) {
    ldl__binding *b;
    if (!s || !name || !name[0] || !s->_open) { *rc = LDL_EINVAL; return NULL; }
    if (ldl__scope_own(s, name)) { *rc = LDL_EEXIST; return NULL; }
    if (s->_nb >= LDL_SCOPE_BINDINGS) { *rc = LDL_ENOSPC; return NULL; }
    b = &s->_b[s->_nb++];
    b->name = name; b->value = NULL; b->factory = NULL; b->arg = NULL;
    b->teardown = NULL; b->teardown_arg = NULL; b->made = 0;
    *rc = LDL_OK;
    return b;
}

LDL_API int ldl_scope_value(ldl_scope *s, const char *name, void *value) {
    int rc;
    ldl__binding *b = ldl__scope_add(s, name, &rc);
    if (b) { b->value = value; b->made = 1; }
    return rc;
}

LDL_API int ldl_scope_singleton(ldl_scope *s, const char *name, void *(*factory)(void *arg), void *arg) {
    int rc;
    ldl__binding *b;
    if (!factory) return LDL_EINVAL;
    b = ldl__scope_add(s, name, &rc);
    if (b) { b->factory = factory; b->arg = arg; }
    return rc;
}

LDL_API int ldl_scope_on_teardown(ldl_scope *s, const char *name, void (*fn)(void *arg), void *arg) {
    ldl__binding *b;
    if (!s || !name || !fn || !s->_open) return LDL_EINVAL;
    b = ldl__scope_own(s, name);
    if (!b) return LDL_EINVAL;          /* teardown attaches to a registered name */
    if (b->teardown) return LDL_EEXIST;
    b->teardown = fn;
    b->teardown_arg = arg;
    return LDL_OK;
}

LDL_API void *ldl_scope_get(ldl_scope *s, const char *name) {
    if (!name) return NULL;
    for (; s; s = s->_parent) {
        ldl__binding *b;
        if (!s->_open) return NULL;
        b = ldl__scope_own(s, name);
        if (b) {
            if (!b->made) { b->value = b->factory(b->arg); b->made = 1; }
            return b->value;
        }
    }
    return NULL;
}

LDL_API int ldl_scope_shutdown(ldl_scope *s) {
    size_t i;
    ldl_scope *root;
    if (!s || !s->_open) return LDL_ESTATE;
    root = s->_root;
    s->_open = 0;                         /* closed first: teardowns cannot add */
    for (i = 0; i < root->_npool && s->_children; i++)   /* children first */
        if (root->_pool[i]._open && root->_pool[i]._parent == s)
            (void)ldl_scope_shutdown(&root->_pool[i]);
    for (i = s->_nb; i-- > 0;)            /* reverse registration order */
        if (s->_b[i].teardown) s->_b[i].teardown(s->_b[i].teardown_arg);
    s->_nb = 0;
    if (s->_parent && s->_parent->_children) s->_parent->_children--;
    return LDL_OK;
}

LDL_API size_t ldl_scope_live_children(const ldl_scope *s) { return s ? s->_children : 0; }

static void *ldl__scope_vt_scope(void *self) { return ldl_scope_child((ldl_scope *)self); }
static int ldl__scope_vt_value(void *scope, const char *name, void *value) {
    return ldl_scope_value((ldl_scope *)scope, name, value);
}
static int ldl__scope_vt_shutdown(void *scope) { return ldl_scope_shutdown((ldl_scope *)scope); }
static int ldl__scope_vt_singleton(void *self, const char *name, void *(*factory)(void *arg), void *arg) {
    return ldl_scope_singleton((ldl_scope *)self, name, factory, arg);
}
static int ldl__scope_vt_teardown(void *self, const char *name, void (*fn)(void *arg), void *arg) {
    return ldl_scope_on_teardown((ldl_scope *)self, name, fn, arg);
}

LDL_API ldl_container ldl_scope_container(ldl_scope *root) {
    ldl_container c;
    c.scope = ldl__scope_vt_scope;
    c.value = ldl__scope_vt_value;
    c.shutdown = ldl__scope_vt_shutdown;
    c.singleton_factory = ldl__scope_vt_singleton;
    c.on_teardown = ldl__scope_vt_teardown;
    c.self = root;
    return c;
}

/* ==================================================================== */
/*  THE LOCK. Each sub-banner [name] is tested in tests/core/name.c:   */
/*  [reentry] [async] [election] [lifecycle] [whitelist] [options]     */
/*  ([async]: tests/core/async_*.c, one file per behaviour)             */
/*  [heartbeat] [run]                                                   */
/* ==================================================================== */

/* ------------------------------------------------------------ [reentry] the guard
   One guard maps (call, situation) to an answer before any work is done.

   situation: DEAD   = NULL lock, disposed, or init failed
              INSIDE = a store call of this lock is on the stack (re-entry
                       from a store, a cancel, or a hand-back): _depth > 0
              HOOKED = desc.on_event is running (it observes only): _hooked
              FREE   = none of these: the call applies a recorded answer and
                       the ACQUIRING/RELEASING timeouts, then works from the
                       state that results (by state and the op's phase)

   THE TABLE is LDL__GUARD below: the one definition. The enum of calls, the
   const table ldl__guard[call][situation] and this comment's reading of it
   all come from it; every entry point asks ldl__enter() and nothing else.
   Its entries (what the call does instead of its work; GO = its work):
     ESTATE  answer LDL_ESTATE, change nothing
     ZERO    answer 0 (UINT32_MAX for due_in_ms), change nothing
     CUT     release/dispose from inside a store call: the state becomes
             RELEASED at once; a held token moves to _owed; the store call on
             the stack, when it returns, cancels its request if still in
             flight, hands back whatever it was granted, and ldl__settle hands
             back _owed. Exactly once per token.
     READ    valid_ms: answer from the fields as they are (applies nothing)
   GO for FREE:
     acquire    apply; IDLE|RELEASED: submit
     run        acquire, body, release (run with a non-blocking store answers
                LDL_EUNSUPPORTED in every situation: only a NULL lock comes first)
     release    apply (renew dropped); by state
     dispose    apply (renew dropped); cancel; hand back; RELEASED, dead
     beat       tick, poll: apply; deadline; renew if due and nothing in
                flight; the election's attempt if due
     valid_ms   apply; deadline
     due_in_ms  pure in every situation but DEAD
     fire       HELD: tick; else the election's attempt */
#define LDL__GUARD(X) \
    /*  call      DEAD     INSIDE   HOOKED   FREE */ \
    X(ACQUIRE,    ESTATE,  ESTATE,  ESTATE,  GO)   \
    X(RUN,        ESTATE,  ESTATE,  ESTATE,  GO)   \
    X(RELEASE,    ZERO,    CUT,     ESTATE,  GO)   \
    X(DISPOSE,    ZERO,    CUT,     ZERO,    GO)   \
    X(BEAT,       ZERO,    ESTATE,  ESTATE,  GO)   \
    X(VALID,      ZERO,    READ,    READ,    GO)   \
    X(DUE,        ZERO,    GO,      GO,      GO)   \
    X(FIRE,       ZERO,    ZERO,    ZERO,    GO)
enum { LDL__FREE = 0, LDL__INSIDE = 1, LDL__HOOKED = 2, LDL__DEAD = 3 };
enum { LDL__GO = 0, LDL__ESTATE = 1, LDL__ZERO = 2, LDL__CUT = 3, LDL__READ = 4 };
#define LDL__CALL_ENUM(c, dead, inside, hooked, free_) LDL__CALL_##c,
enum { LDL__GUARD(LDL__CALL_ENUM) LDL__NCALLS };
#define LDL__GUARD_ROW(c, dead, inside, hooked, free_) \
    { LDL__##free_, LDL__##inside, LDL__##hooked, LDL__##dead },
static const unsigned char ldl__guard[LDL__NCALLS][4] = { LDL__GUARD(LDL__GUARD_ROW) };

/* ------------------------------------------------------------ [lifecycle] THE EDGES
   The legal transitions of _state, the one definition: THE LIFECYCLE diagram
   in the top comment is its prose reading (the one prose copy; README,
   decision 0011 and the fuzzers' oracle point here). ldl__set_state checks
   every transition against it with LDL_ASSERT; tests/fuzz/lifecycle_edges.h
   and the Spin model (tests/model/lock.pml, via a copy cut out at test time)
   use the same rows.
   when: ALWAYS, or COMPETING = only while the election's campaign competes. */
#define LDL__EDGES(X) \
    /*  from        to          when */ \
    X(IDLE,       ACQUIRING,  ALWAYS)     /* acquire; [E] a retry attempt due */ \
    X(IDLE,       RELEASED,   ALWAYS)     /* dispose, cut */ \
    X(ACQUIRING,  HELD,       ALWAYS)     /* a grant */ \
    X(ACQUIRING,  IDLE,       ALWAYS)     /* no grant, refused (late, fence), timeout */ \
    X(ACQUIRING,  RELEASED,   ALWAYS)     /* release, dispose, cut */ \
    X(HELD,       LOST,       ALWAYS)     /* renew != 1, deadline, timer unarmable */ \
    X(HELD,       RELEASING,  ALWAYS)     /* release */ \
    X(HELD,       RELEASED,   ALWAYS)     /* dispose, cut */ \
    X(LOST,       ACQUIRING,  COMPETING)  /* [E] campaign: the next attempt */ \
    X(LOST,       RELEASING,  ALWAYS)     /* release of the owed lease */ \
    X(LOST,       RELEASED,   ALWAYS)     /* nothing owed, dispose, cut */ \
    X(RELEASING,  RELEASED,   ALWAYS)     /* the answer, the timeout, dispose, cut */ \
    X(RELEASED,   ACQUIRING,  ALWAYS)     /* acquire */ \
    X(RELEASED,   IDLE,       ALWAYS)     /* init (the lock is RELEASED until then) */ \
    X(RELEASED,   RELEASED,   ALWAYS)     /* dispose again */
#define LDL__EDGE_IN_ALWAYS_ALWAYS       1
#define LDL__EDGE_IN_ALWAYS_COMPETING    0
#define LDL__EDGE_IN_COMPETING_ALWAYS    0
#define LDL__EDGE_IN_COMPETING_COMPETING 1
#define LDL__EDGE_BIT_ALWAYS(f, t, when) \
    | ((uint64_t)LDL__EDGE_IN_ALWAYS_##when << (LDL_##f * 8 + LDL_##t))
#define LDL__EDGE_BIT_COMPETING(f, t, when) \
    | ((uint64_t)LDL__EDGE_IN_COMPETING_##when << (LDL_##f * 8 + LDL_##t))
/* bit (from * 8 + to): the edges always legal, and those legal while competing */
#define LDL__EDGES_ALWAYS    ((uint64_t)0 LDL__EDGES(LDL__EDGE_BIT_ALWAYS))
#define LDL__EDGES_COMPETING ((uint64_t)0 LDL__EDGES(LDL__EDGE_BIT_COMPETING))
/* 1 if from -> to is an edge (competing: the election's campaign competes) */
LDL__INLINE int ldl__edge_ok(int from, int to, int competing) {
    unsigned bit = (unsigned)from * 8u + (unsigned)to;
    return ((unsigned)from | (unsigned)to) < 8u &&      /* bits 6, 7 of a row are 0 */
           (((LDL__EDGES_ALWAYS >> bit) & 1u) != 0 ||
            (competing && ((LDL__EDGES_COMPETING >> bit) & 1u) != 0));
}

/* LDL_NO_ASYNC: a build without non-blocking stores (decision 0006). The two
   reads below become constants, so the compiler drops every async branch;
   init refuses an async_store. The types and fields stay (same layout). */
#ifdef LDL_NO_ASYNC
#define LDL__ASYNC(l)  0
#define LDL__PHASE(l)  LDL__OP_IDLE
#else
#define LDL__ASYNC(l)  ((l)->_async)
#define LDL__PHASE(l)  ((l)->_op._phase)
#endif
#ifdef LDL_NO_ELECTION
#define LDL__RELTOK(l) 0          /* the token only an event would carry */
#else
#define LDL__RELTOK(l) ((l)->_rel_tok)
#endif

static int ldl__situation(const ldl_lock *l) {
    if (!l || l->_dead) return LDL__DEAD;
    if (l->_hooked) return LDL__HOOKED;
    return l->_depth ? LDL__INSIDE : LDL__FREE;
}

/* THE entry: what the guard answers for `call` now (LDL__GO = do the work) */
static int ldl__enter(const ldl_lock *l, int call) {
    return ldl__guard[call][ldl__situation(l)];
}

/* ------------------------------------------------------------ [lifecycle] the state setter
   Every transition of _state goes through here (init's first write aside),
   and each must be a row of THE EDGES (LDL__EDGES above): LDL_ASSERT checks
   it, after the test hook LDL_ON_TRANSITION has seen it. */
#ifndef LDL_ON_TRANSITION
#define LDL_ON_TRANSITION(lock, from, to) ((void)0)
#endif
#ifdef LDL_NO_ELECTION
#define LDL__EDGE_COMPETING(l) 0
#else
#define LDL__EDGE_COMPETING(l) ((l)->_el.competing != 0)
#endif
static void ldl__set_state(ldl_lock *l, int state) {
    LDL_ON_TRANSITION(l, l->_state, state);
    LDL_ASSERT(ldl__edge_ok(l->_state, state, LDL__EDGE_COMPETING(l)));
    l->_state = state;
}

/* how ldl__apply treats a recorded answer (named, not 0|1|2) */
enum {
    LDL__APPLY_BEAT = 0,         /* tick, poll, valid_ms: everything, a late renew yes loses */
    LDL__APPLY_DROP_RENEW = 1,   /* release, dispose: a recorded renew answer is dropped */
    LDL__APPLY_NO_DEADLINE = 2   /* acquire: applies, but checks no deadline */
};

static uint64_t ldl__now(ldl_lock *l) { return l->_clock.now_ms(l->_clock.ctx); }

/* 1 while `now` is inside [start, start + w): a clock that reads earlier than
   start is broken and fails closed (decision 0002) */
static int ldl__within(uint64_t start, uint64_t now, uint32_t w) {
    return now >= start && now - start < w;
}

static int ldl__mapped(int rc) { return rc == 1 ? 1 : rc == 0 ? 0 : LDL_ESTORE; }

static void ldl__disarm(ldl_lock *l) {
    if (l->_timer) {
        uintptr_t t = l->_timer;
        l->_timer = 0;
        l->_timers.clear_timeout(l->_timers.ctx, t);
    }
}

static void ldl__fire(void *arg);

/* ms from `start` to `now`, for latency (0 for a clock that went back) */
static uint32_t ldl__lat(ldl_lock *l, uint64_t start, uint64_t now) {
    uint64_t d = now >= start ? now - start : 0;
    uint32_t ms = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    if (ms > l->_counters.worst_latency_ms) l->_counters.worst_latency_ms = ms;
    return ms;
}

/* ------------------------------------------------------------ [election] the layer
   The election lives here, on top of the lifecycle, and nowhere else: its
   state is l->_el, its options are the desc's election group. The lifecycle
   calls into it at three junctions (ldl__policy: after a refusal, after a
   loss, after a grant), asks one question (ldl__attempt_due: is a scheduled
   attempt due?) in heartbeat, fire and due_in_ms, and starts and stops it
   (ldl__el_begin at acquire, ldl__el_stop at release/dispose/run). Events go
   out through ldl__emit; the hook runs HOOKED (see the guard). With
   LDL_NO_ELECTION every function here is a constant stub and l->_el does
   not exist. */
enum { LDL__AFTER_REFUSAL = 0, LDL__AFTER_LOSS = 1, LDL__AFTER_GRANT = 2 };

#ifndef LDL_NO_ELECTION
static void ldl__emit(ldl_lock *l, int kind, int raw, int reason, int64_t tok, uint32_t lat,
                      uint32_t next) {
    ldl_event ev;
    uint32_t quiet;
    if (!l->_el.on_event) return;
    ev.kind = kind; ev.raw = raw; ev.reason = reason; ev.token = tok;
    ev.latency_ms = lat; ev.next_ms = next;
    quiet = l->_quiet;
    l->_hooked = 1;
    l->_quiet = 0;                           /* poll's fast path then meets the guard */
    l->_el.on_event(l->_user, &ev);
    l->_quiet = quiet;
    l->_hooked = 0;
}

/* xorshift64* over per-lock state (never 0) */
static uint64_t ldl__rand(ldl_lock *l) {
    uint64_t x = l->_el.rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    l->_el.rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* full jitter: uniform in [1, min(cap, base * 2^round)] (decision 0009); the
   draw is a multiply-shift of the top 32 bits (no 64-bit division) */
static uint32_t ldl__backoff(ldl_lock *l) {
    uint64_t ceil = l->_el.retry.base_ms, cap = l->_el.retry.cap_ms;
    uint32_t n = l->_el.round;
    while (n-- && ceil < cap) ceil <<= 1;
    if (ceil > cap) ceil = cap;
    return 1u + (uint32_t)(((ldl__rand(l) >> 32) * ceil) >> 32);
}

/* a new round of attempts begins at `now` */
static void ldl__round(ldl_lock *l, uint64_t now) {
    l->_el.round = 0;
    l->_el.give_up = l->_el.retry.give_up_ms ? now + l->_el.retry.give_up_ms : 0;
}

/* schedule the next attempt of the round: the ms until it, or UINT32_MAX
   when none (not competing, or given up: then *gave_up = 1). Timer mode
   arms the one timer for it. */
static uint32_t ldl__schedule(ldl_lock *l, uint64_t now, int *gave_up) {
    uint32_t d;
    *gave_up = 0;
    l->_el.retrying = 0;
    if (!l->_el.competing || l->_dead) return UINT32_MAX;
    d = ldl__backoff(l);
    if (l->_el.round < UINT32_MAX) l->_el.round++;
    if (l->_el.give_up) {
        if (now + 1 >= l->_el.give_up) { *gave_up = 1; l->_el.competing = 0; return UINT32_MAX; }
        if (now + d >= l->_el.give_up) d = (uint32_t)(l->_el.give_up - 1 - now);
    }
    if (l->_timers.set_timeout) {
        ldl__disarm(l);
        l->_timer = l->_timers.set_timeout(l->_timers.ctx, ldl__fire, l, d);
        if (!l->_timer) { *gave_up = 1; l->_el.competing = 0; return UINT32_MAX; }
    }
    l->_el.next_try = now + d;
    l->_el.retrying = 1;
    return d;
}

/* stop competing: no more attempts (release, dispose, run that does not wait) */
static void ldl__el_stop(ldl_lock *l) {
    l->_el.competing = 0;
    if (l->_el.retrying) {
        l->_el.retrying = 0;
        ldl__disarm(l);
    }
}

/* acquire starts a round (with a retry schedule): compete from now */
static void ldl__el_begin(ldl_lock *l) {
    if (!l->_el.retry.base_ms) return;
    ldl__el_stop(l);
    l->_el.competing = 1;
    ldl__round(l, ldl__now(l));
}

static void ldl__hand_back(ldl_lock *l, int64_t tok);

/* THE policy: the election's say at the lifecycle's three junctions.
   AFTER_REFUSAL (an attempt that did not grant, state IDLE; `ev` is its
     REFUSED event): schedule the next attempt, send REFUSED with next_ms,
     then GAVE_UP if the round ended. Answers 0.
   AFTER_LOSS (on_lost not yet called; the lifecycle has handed the lost lease
     back, at once when competing: LDL__COMPETING): a campaign still LOST
     competes again in a new round.
   AFTER_GRANT (HELD, before GRANTED goes out): a retry round ends at its
     grant, a campaign competes on. */
static void ldl__policy(ldl_lock *l, int junction, uint64_t now, ldl_event *ev) {
    int gave_up = 0;
    if (junction == LDL__AFTER_GRANT) {
        if (!l->_el.campaign) l->_el.competing = 0;
        return;
    }
    if (junction == LDL__AFTER_LOSS) {
        if (!l->_el.competing) return;
        if (l->_state == LDL_LOST) {
            now = ldl__now(l);
            ldl__round(l, now);
            (void)ldl__schedule(l, now, &gave_up);
        }
    } else {
        ev->next_ms = ldl__schedule(l, now, &gave_up);
        ldl__emit(l, LDL_EV_REFUSED, ev->raw, ev->reason, ev->token, ev->latency_ms, ev->next_ms);
    }
    if (gave_up) ldl__emit(l, LDL_EV_GAVE_UP, 0, 0, 0, 0, 0);
}

/* THE "attempt due" answer: UINT32_MAX = no attempt for this caller to make;
   else the ms until it (0 = make it now). Manual mode counts down the clock;
   in timer mode the one timer makes it, so only fire (from_timer) sees it. */
static uint32_t ldl__attempt_due(ldl_lock *l, int from_timer) {
    uint64_t now;
    if (!l->_el.retrying || (l->_timers.set_timeout != NULL) != from_timer) return UINT32_MAX;
    if (from_timer) return 0;
    now = ldl__now(l);
    if (now >= l->_el.next_try) return 0;
    return l->_el.next_try - now > UINT32_MAX ? UINT32_MAX : (uint32_t)(l->_el.next_try - now);
}

#define LDL__COMPETING(l)    ((l)->_el.competing)
#define LDL__OWNER(l)        ((l)->_el.owner)
#define LDL__RIDE_OUT_MS(l)  ((l)->_el.ride_out_ms)
#define LDL__RIDE_NEXT(l)    ((l)->_el.ride_next)
#define LDL__ON_LEADING(l)   ((l)->_el.on_leading)
#else /* LDL_NO_ELECTION: the layer is gone */
static void ldl__emit(ldl_lock *l, int kind, int raw, int reason, int64_t tok, uint32_t lat,
                      uint32_t next) {
    (void)l; (void)kind; (void)raw; (void)reason; (void)tok; (void)lat; (void)next;
}
static void ldl__policy(ldl_lock *l, int junction, uint64_t now, ldl_event *ev) {
    (void)l; (void)junction; (void)now; (void)ev;
}
#define ldl__el_stop(l)           ((void)0)
#define ldl__el_begin(l)          ((void)0)
#define ldl__attempt_due(l, t)    UINT32_MAX
#define LDL__COMPETING(l)         0
#define LDL__OWNER(l)             ((const char *)NULL)
#define LDL__RIDE_OUT_MS(l)       0u
#define LDL__ON_LEADING(l)        ((void (*)(void *, int64_t))NULL)
#endif /* LDL_NO_ELECTION */

/* ------------------------------------------------------------ [async] store calls, the slot, apply
   Every store call goes through ldl__call (acquire, renew, the user's
   release), ldl__hand_back (releases the lock owes) or ldl__cancel. Each
   counts itself in _depth, so a re-entrant call meets the guard's INSIDE
   column. */

/* the one wrapper: the store's answer, or LDL_EINPROGRESS while the request is
   in flight. `tok`: the token to renew/release; acquire's token comes back
   through it (zeroed first). `start` is the clock read before the call. */
static int ldl__call(ldl_lock *l, int kind, int64_t *tok, uint64_t start) {
    int rc;
    l->_depth++;
    if (!LDL__ASYNC(l)) {
        switch (kind) {
        case LDL_OP_ACQUIRE:
            *tok = 0;
#ifndef LDL_NO_ELECTION
            if (l->_el.owner) {
                rc = l->_el.ext.acquire_owned(l->_el.ext.ctx, l->_key, l->_ttl_ms, l->_el.owner, tok);
                break;
            }
#endif
            rc = l->_st.s.acquire(l->_st.s.ctx, l->_key, l->_ttl_ms, tok);
            break;
        case LDL_OP_RENEW:   rc = l->_st.s.renew(l->_st.s.ctx, l->_key, *tok, l->_ttl_ms); break;
        default:             rc = l->_st.s.release(l->_st.s.ctx, l->_key, *tok); break;
        }
    } else {
        ldl_op *op = &l->_op;
        op->_phase = LDL__OP_FLYING; op->_kind = kind; op->_rc = 0; op->_token = 0; op->_start = start;
        switch (kind) {
        case LDL_OP_ACQUIRE:
            *tok = 0;
#ifndef LDL_NO_ELECTION
            if (l->_el.owner) {
                rc = l->_el.ext.submit_owned(l->_el.ext.ctx, op, l->_key, l->_ttl_ms, l->_el.owner);
                break;
            }
#endif
            rc = l->_st.a.acquire(l->_st.a.ctx, op, l->_key, l->_ttl_ms);
            break;
        case LDL_OP_RENEW:   rc = l->_st.a.renew(l->_st.a.ctx, op, l->_key, *tok, l->_ttl_ms); break;
        default:             rc = l->_st.a.release(l->_st.a.ctx, op, l->_key, *tok); break;
        }
        if (rc != LDL_OK) {                  /* nothing queued: that op's store error */
            int flying = op->_phase != LDL__OP_IDLE;
            op->_phase = LDL__OP_IDLE;       /* a completion it sent anyway is dropped */
            if (rc > 0 && flying) l->_st.a.cancel(l->_st.a.ctx, op);  /* malformed: detach */
            rc = rc < 0 ? rc : LDL_ESTORE;
        } else if (op->_phase == LDL__OP_ANSWERED) {                  /* answered inside */
            op->_phase = LDL__OP_IDLE;
            rc = op->_rc;
            if (kind == LDL_OP_ACQUIRE) *tok = op->_token;
        } else {
            rc = LDL_EINPROGRESS;
        }
    }
    l->_depth--;
    /* a store's own -13 is not "in flight": only an unanswered submit is */
    if (rc == LDL_EINPROGRESS && (!LDL__ASYNC(l) || LDL__PHASE(l) != LDL__OP_FLYING)) rc = LDL_ESTORE;
    return rc;
}

static void ldl__settle(ldl_lock *l);

/* detach the request in the slot: an in-flight one is cancelled at the store
   (which then owns its outcome); a recorded answer is dropped */
static void ldl__cancel(ldl_lock *l) {
    int phase = LDL__PHASE(l);
    l->_op._phase = LDL__OP_IDLE;
    if (phase == LDL__OP_FLYING) {
        l->_depth++;
        l->_st.a.cancel(l->_st.a.ctx, &l->_op);
        l->_depth--;
        ldl__settle(l);
    }
}

/* THE hand-back: give a lease this lock will not use back to the store, once.
   Non-blocking stores: fire-and-forget (submitted, then cancelled at once). */
static void ldl__hand_back(ldl_lock *l, int64_t tok) {
    if (tok < 1) return;
    l->_counters.handbacks++;
    ldl__emit(l, LDL_EV_HANDED_BACK, 0, 0, tok, 0, 0);
    l->_depth++;
    if (!LDL__ASYNC(l)) {
        (void)l->_st.s.release(l->_st.s.ctx, l->_key, tok);
    } else {
        ldl_op *op = &l->_op;                /* free: every caller cancelled or applied it */
        int rc;
        op->_phase = LDL__OP_FLYING; op->_kind = LDL_OP_RELEASE; op->_rc = 0; op->_token = 0;
        rc = l->_st.a.release(l->_st.a.ctx, op, l->_key, tok);
        op->_phase = LDL__OP_IDLE;
        if (rc >= 0) l->_st.a.cancel(l->_st.a.ctx, op);
    }
    l->_depth--;
}

/* after a cut: the token it took from HELD is handed back when no store call
   is on the stack any more */
static void ldl__settle(ldl_lock *l) {
    if (!l->_depth && l->_state == LDL_RELEASED && l->_owed) {
        int64_t t = l->_owed;
        l->_owed = 0;
        ldl__hand_back(l, t);
    }
}

/* the re-entrant release/dispose (guard entry CUT) */
static void ldl__cut(ldl_lock *l, int reason) {
    if (l->_state == LDL_RELEASED) return;
    ldl__disarm(l);
    if (l->_state == LDL_HELD) {
        l->_reason = (unsigned char)reason;
        l->_owed = l->_token;                /* LOST keeps its own _owed */
    }
    l->_token = 0;
    ldl__set_state(l, LDL_RELEASED);
}

/* ------------------------------------------------------------ [lifecycle] loss
   THE loss funnel: state LOST first (the token owed to the next release),
   cancel a renew in flight, the LOST event, hand back (if asked; a campaign
   takes this junction over), then on_lost once. */
static void ldl__lose(ldl_lock *l, int reason, int hand_back) {
    int64_t lost = l->_token;
    ldl__disarm(l);
    l->_owed = l->_token;
    l->_token = 0;
    ldl__set_state(l, LDL_LOST);
    l->_reason = (unsigned char)reason;
    l->_losses++;
    l->_loss_reason = (unsigned char)reason;
    l->_counters.losses[reason & 7]++;
    ldl__cancel(l);                          /* may re-enter: a cut settles _owed */
    ldl__emit(l, LDL_EV_LOST, 0, reason, lost, 0, 0);
    if ((hand_back || LDL__COMPETING(l)) && l->_owed && l->_state == LDL_LOST) {
        int64_t t = l->_owed;                /* a campaign hands back at once */
        l->_owed = 0;
        ldl__hand_back(l, t);
    }
    ldl__policy(l, LDL__AFTER_LOSS, 0, NULL);
    if (l->_on_lost) l->_on_lost(l->_user, reason);
}

/* arm the one heartbeat timer for `ms`; 0 = could not (the lock is LOST then) */
static int ldl__arm_in(ldl_lock *l, uint32_t ms) {
    uintptr_t h;
    if (!l->_timers.set_timeout) return 1;
    h = l->_timers.set_timeout(l->_timers.ctx, ldl__fire, l, ms);
    if (h == 0) { ldl__lose(l, LDL_REASON_TIMER_UNARMABLE, 1); return 0; }
    l->_timer = h;
    return 1;
}

#define ldl__arm(l) ldl__arm_in((l), (l)->_heartbeat_ms)

/* an attempt that did not grant (state IDLE): the policy sends the event and
   schedules the next try */
static int ldl__refused(ldl_lock *l, int raw, int reason, int64_t tok, uint32_t lat, uint64_t now) {
    ldl_event ev;
    ev.kind = LDL_EV_REFUSED; ev.raw = raw; ev.reason = reason; ev.token = tok;
    ev.latency_ms = lat; ev.next_ms = UINT32_MAX;
    ldl__policy(l, LDL__AFTER_REFUSAL, now, &ev);
    return 0;
}

/* apply an acquire answer (state ACQUIRING, nothing in flight): the whitelist
   shape, then the fence advance, then the window. 1 = HELD. */
static int ldl__granted(ldl_lock *l, int rc, int64_t tok, uint64_t start) {
    uint64_t now = ldl__now(l);
    uint32_t lat = ldl__lat(l, start, now);
    l->_raw = rc;
    if (rc != 1 || tok < 1) {                /* no grant; the reason is untouched */
        ldl__set_state(l, LDL_IDLE);
        if (rc == 0) l->_counters.contention++; else l->_counters.store_errors++;
        return ldl__refused(l, rc, 0, 0, lat, now);
    }
    if (tok <= l->_last || !ldl__within(start, now, l->_window)) {
        /* the fence did not advance, or late: its window closed */
        ldl__set_state(l, LDL_IDLE);
        l->_reason = (unsigned char)(tok <= l->_last ? LDL_REASON_FENCE_REGRESSED : LDL_REASON_LEASE_EXPIRED);
        l->_counters.refused++;
        ldl__hand_back(l, tok);
        return ldl__refused(l, rc, l->_reason, tok, lat, now);
    }
    l->_last = tok;
    l->_token = tok;
    l->_start = start;
#ifndef LDL_NO_ELECTION
    l->_el.ride_next = 0;
#endif
    l->_reason = LDL_REASON_NONE;
    ldl__set_state(l, LDL_HELD);
    l->_counters.grants++;
    ldl__policy(l, LDL__AFTER_GRANT, now, NULL);
    ldl__emit(l, LDL_EV_GRANTED, rc, 0, tok, lat, 0);
    if (!ldl__arm(l)) return 0;
    if (LDL__ON_LEADING(l)) LDL__ON_LEADING(l)(l->_user, tok);
    return l->_state == LDL_HELD;
}

/* apply a renew answer (state HELD, nothing in flight). 1 = still HELD.
   Ride-out (HELD riding out): an error answer while the lease is trusted
   keeps it HELD and tries again after ride_out_ms (never past the deadline,
   which still loses it); a clean 0 loses it at once. */
static int ldl__renewed(ldl_lock *l, int rc, uint64_t start, int deadline) {
    uint64_t now = ldl__now(l);
    uint32_t lat = ldl__lat(l, start, now);
    l->_raw = rc;
    if (rc != 1) {
        if (rc != 0) l->_counters.store_errors++;
#ifndef LDL_NO_ELECTION
        if (rc != 0 && l->_el.ride_out_ms && ldl__within(l->_start, now, l->_window)) {
            uint32_t left = (uint32_t)(l->_window - (now - l->_start));
            uint32_t next = l->_el.ride_out_ms < left ? l->_el.ride_out_ms : left;
            l->_el.ride_next = now + next;
            ldl__emit(l, LDL_EV_RENEW_ERROR, rc, 0, l->_token, lat, next);
            return ldl__arm_in(l, next);
        }
#endif
        ldl__lose(l, rc == 0 ? LDL_REASON_HEARTBEAT_FAILED : LDL_REASON_STORE_ERROR, 0);
        return 0;
    }
    if (!ldl__within(start, now, l->_window)) {   /* a late yes changes nothing */
        if (!deadline) return 1;             /* acquire: no deadline check; poll/tick/valid_ms lose it */
        ldl__lose(l, LDL_REASON_LEASE_EXPIRED, 0);
        return 0;
    }
    l->_start = start;
#ifndef LDL_NO_ELECTION
    l->_el.ride_next = 0;
#endif
    l->_counters.renewals++;
    ldl__emit(l, LDL_EV_RENEWED, rc, 0, l->_token, lat, 0);
    return ldl__arm(l);
}

/* a release answer (sync, or applied from the slot): state RELEASED */
static int ldl__released(ldl_lock *l, int rc, int64_t tok) {
    ldl__set_state(l, LDL_RELEASED);
    l->_raw = rc;
    if (rc != 1 && rc != 0) l->_counters.store_errors++;
    ldl__emit(l, LDL_EV_RELEASED, rc, 0, tok, 0, 0);
    return ldl__mapped(rc);
}

/* apply what the slot holds: a recorded answer, or the ACQUIRING/RELEASING
   timeout of a request still in flight. `mode`: LDL__APPLY_*. */
static void ldl__apply_slot(ldl_lock *l, int mode) {
    ldl_op *op = &l->_op;
    if (LDL__PHASE(l) == LDL__OP_ANSWERED) {
        int rc = op->_rc;
        op->_phase = LDL__OP_IDLE;
        if (op->_kind == LDL_OP_ACQUIRE) {
            l->_answer = ldl__granted(l, rc, op->_token, op->_start);
        } else if (op->_kind == LDL_OP_RENEW) {
            if (mode != LDL__APPLY_DROP_RENEW) (void)ldl__renewed(l, rc, op->_start, mode == LDL__APPLY_BEAT);
        } else {
            l->_answer = ldl__released(l, rc, LDL__RELTOK(l));
        }
    } else if (LDL__PHASE(l) == LDL__OP_FLYING) {
        uint64_t now;
        if (l->_state == LDL_ACQUIRING && !ldl__within(op->_start, now = ldl__now(l), l->_window)) {
            ldl__set_state(l, LDL_IDLE);
            l->_answer = 0;
            l->_raw = LDL_EINPROGRESS;       /* no answer came */
            l->_counters.store_errors++;
            ldl__cancel(l);                  /* the store hands back a late grant */
            if (l->_state == LDL_IDLE) (void)ldl__refused(l, LDL_EINPROGRESS, 0, 0, ldl__lat(l, op->_start, now), now);
        } else if (l->_state == LDL_RELEASING && !ldl__within(op->_start, ldl__now(l), l->_ttl_ms)) {
            ldl__set_state(l, LDL_RELEASED);
            l->_raw = LDL_EINPROGRESS;
            l->_counters.store_errors++;
            ldl__cancel(l);                  /* may re-enter (a re-entrant release sets 0) */
            l->_answer = LDL_ESTORE;         /* the answer that ends the pending release */
        }
    }
}

/* an empty slot (every synchronous call) answers here, without the call
   (-Os builds make the call: smaller) */
#ifdef __OPTIMIZE_SIZE__
#define ldl__apply ldl__apply_slot
#else
static void ldl__apply(ldl_lock *l, int mode) {
    if (LDL__PHASE(l) != LDL__OP_IDLE) ldl__apply_slot(l, mode);
}
#endif

/* ------------------------------------------------------------ [options] init
   defaults, then validation, then set-up (sokol's _sg_desc_defaults /
   _sg_validate shape) */
/* the defaults, resolved once: what a zero field of the desc means */
typedef struct ldl__resolved {
    uint32_t heartbeat_ms, drift_ms;
    const char *token_name, *holder_name;
#ifndef LDL_NO_ELECTION
    ldl_retry retry;
#endif
} ldl__resolved;

static void ldl__desc_defaults(const ldl_lock_desc *d, ldl__resolved *r) {
    r->heartbeat_ms = d->heartbeat_ms ? d->heartbeat_ms : d->ttl_ms / 3;
    r->drift_ms = d->drift_ms ? d->drift_ms : d->ttl_ms / 100 + 2;
    r->token_name = d->token_name ? d->token_name : "lock:fence";
    r->holder_name = d->holder_name ? d->holder_name : "lock:holder";
#ifndef LDL_NO_ELECTION
    r->retry = d->retry;
    if (r->retry.base_ms && !r->retry.cap_ms) r->retry.cap_ms = d->ttl_ms > r->retry.base_ms ? d->ttl_ms : r->retry.base_ms;
#endif
}

/* the validation texts, one table (ldl__validate answers an index, 0 = valid,
   and ldl_lock_init turns it into the why): one literal per text would cost a
   load and a literal-pool word at every check. Offsets, not pointers: the table
   needs no relocation (.rodata also under PIE, no writable data). */
#ifdef LDL_NO_DEFAULT_CLOCK
#define LDL__WHYS_CLOCK(X) \
    X(clock_now_ms_required, "clock: now_ms is required (built with LDL_NO_DEFAULT_CLOCK)")
#else
#define LDL__WHYS_CLOCK(X) \
    X(clock_ctx_given_without, "clock: ctx given without now_ms")
#endif
#ifdef LDL_NO_ASYNC
#define LDL__WHYS_ASYNC(X) \
    X(async_off, "async_store: this build has LDL_NO_ASYNC (no non-blocking stores)")
#else
#define LDL__WHYS_ASYNC(X) \
    X(async_store_set_so, "async_store: set, so store must be NULL") \
    X(async_store_acquire_renew, "async_store: acquire, renew, release and cancel are all required") \
    X(async_store_needs_manual, "async_store: needs manual mode (timers all-zero; call ldl_lock_poll)")
#endif
#ifdef LDL_NO_ELECTION
#define LDL__WHYS_ELECTION(X) \
    X(election_off, "election options: this build has LDL_NO_ELECTION")
#else
#define LDL__WHYS_ELECTION(X) \
    X(retry_base_ms_is, "retry: base_ms is 0 (off), so cap_ms, give_up_ms and seed must be 0") \
    X(retry_cap_ms_must, "retry.cap_ms: must be >= base_ms") \
    X(retry_sleep_ctx_given, "retry: sleep_ctx given without sleep_ms") \
    X(ride_out_ms_must, "ride_out_ms: must be < ttl_ms - drift_ms (the trust window)") \
    X(campaign_0_or_1, "campaign: 0 or 1") \
    X(campaign_needs_retry_base, "campaign: needs retry.base_ms (the back-off between rounds)") \
    X(owner_empty_null_none, "owner: empty (NULL = none)") \
    X(owner_longer_than_ldl, "owner: longer than LDL_OWNER_MAX - 1 bytes") \
    X(owner_printable_ascii_only, "owner: printable ASCII only (0x20..0x7E)") \
    X(owner_needs_store_ext, "owner: needs store_ext (the store's acquire_owned / submit_owned)") \
    X(owner_no_submit_owned, "owner: store_ext has no submit_owned (non-blocking store)") \
    X(owner_no_acquire_owned, "owner: store_ext has no acquire_owned")
#endif
#define LDL__WHYS(X) \
    X(ok, "ok") \
    X(desc_null, "desc: NULL") \
    X(container_scope_value_and, "container: scope, value and shutdown are required") \
    X(key_null, "key: NULL (required)") \
    X(key_empty, "key: empty") \
    X(key_longer_than_ldl, "key: longer than LDL_KEY_MAX - 1 bytes") \
    X(key_contains_a_control, "key: contains a control byte") \
    X(ttl_ms_must_be, "ttl_ms: must be > 0 (required)") \
    X(heartbeat_ms_must_be, "heartbeat_ms: must be >= 1 (ttl_ms / 3 is 0; raise ttl_ms)") \
    X(heartbeat_ms_twice, "heartbeat_ms: heartbeat_ms * 2 must be <= ttl_ms") \
    X(drift_ms_must_be, "drift_ms: must be < ttl_ms - heartbeat_ms") \
    X(store_acquire_renew_and, "store: acquire, renew and release are all required") \
    X(timers_set_timeout_and, "timers: set_timeout and clear_timeout are both required (or all zero)") \
    LDL__WHYS_CLOCK(X) LDL__WHYS_ASYNC(X) LDL__WHYS_ELECTION(X)
#define LDL__WHY_ID(n, t)    LDL__WHY_##n,
#ifdef LDL_NO_WHY_TEXT           /* the check's name instead of its sentence */
#define LDL__WHY_FIELD(n, t) char n[sizeof #n];
#define LDL__WHY_TEXT(n, t)  #n,
#else
#define LDL__WHY_FIELD(n, t) char n[sizeof t];
#define LDL__WHY_TEXT(n, t)  t,
#endif
#define LDL__WHY_OFF(n, t)   (unsigned short)offsetof(ldl__why_texts, n),
enum { LDL__WHYS(LDL__WHY_ID) LDL__WHY_COUNT };
typedef char ldl__check_why_index[(LDL__WHY_COUNT <= 0x100) ? 1 : -1];   /* _why is a byte */
typedef struct ldl__why_texts { LDL__WHYS(LDL__WHY_FIELD) } ldl__why_texts;
static const ldl__why_texts ldl__why_text = { LDL__WHYS(LDL__WHY_TEXT) };
static const unsigned short ldl__why_off[LDL__WHY_COUNT] = { LDL__WHYS(LDL__WHY_OFF) };
#define LDL__W(n) LDL__WHY_##n

/* 0 (LDL__W(ok)) when valid, else which field and why (an LDL__W index). Checked after the defaults, in
   64-bit arithmetic. */
#ifndef LDL_NO_ELECTION
static int ldl__el_validate(const ldl_lock_desc *d, const ldl__resolved *r,
                             const ldl_async_store *as);
#endif

#ifdef LDL_NO_ELECTION
/* the election group's refusal reads member offsets from a byte table */
typedef char ldl__check_desc_small[(sizeof(ldl_lock_desc) <= 256) ? 1 : -1];
#endif

/* not inlined: inlined, every check would load its own text address again */
static LDL__NOINLINE int ldl__validate(const ldl_lock_desc *d, const ldl__resolved *r) {
    size_t len, i;
    const ldl_async_store *as = d->async_store;
    int has_timers = d->timers.set_timeout || d->timers.clear_timeout || d->timers.ctx;
    uint64_t ttl = d->ttl_ms, hb = r->heartbeat_ms;
    if (!d->container.scope || !d->container.value || !d->container.shutdown)
        return LDL__W(container_scope_value_and);
    if (!d->key) return LDL__W(key_null);
    len = ldl__keylen(d->key);
    if (len == 0) return LDL__W(key_empty);
    if (len >= LDL_KEY_MAX) return LDL__W(key_longer_than_ldl);
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)d->key[i];
        if (c < 0x20 || c == 0x7F) return LDL__W(key_contains_a_control);
    }
    if (ttl == 0) return LDL__W(ttl_ms_must_be);
    if (hb < 1) return LDL__W(heartbeat_ms_must_be);
    if (hb * 2u > ttl) return LDL__W(heartbeat_ms_twice);
    if ((uint64_t)r->drift_ms >= ttl - hb) return LDL__W(drift_ms_must_be);
    if (d->store && (!d->store->acquire || !d->store->renew || !d->store->release))
        return LDL__W(store_acquire_renew_and);
    if (!d->clock.now_ms) {
#ifdef LDL_NO_DEFAULT_CLOCK
        return LDL__W(clock_now_ms_required);
#else
        if (d->clock.ctx) return LDL__W(clock_ctx_given_without);
#endif
    }
    if (has_timers && (!d->timers.set_timeout || !d->timers.clear_timeout))
        return LDL__W(timers_set_timeout_and);
    if (as) {
#ifdef LDL_NO_ASYNC
        return LDL__W(async_off);
#else
        if (d->store) return LDL__W(async_store_set_so);
        if (!as->acquire || !as->renew || !as->release || !as->cancel)
            return LDL__W(async_store_acquire_renew);
        if (has_timers) return LDL__W(async_store_needs_manual);
#endif
    }
    /* names are the container's business: a name it refuses makes run() answer
       LDL_EFENCE (the body never runs), so init does not second-guess them */
#ifdef LDL_NO_ELECTION
    /* the election group of the desc, every member: all zero or refused */
    {   /* a table of (offset, size) per member: any non-zero byte of a member
           (never of padding) refuses; a null pointer is all-zero bits on
           every target this header supports */
#define LDL__SET(field) { (unsigned char)offsetof(ldl_lock_desc, field), (unsigned char)sizeof d->field },
        static const unsigned char grp[][2] = { LDL__ELECTION_GROUP(LDL__SET) };
#undef LDL__SET
        const unsigned char *p = (const unsigned char *)d;
        size_t g, k;
        for (g = 0; g < sizeof grp / sizeof grp[0]; g++)
            for (k = 0; k < grp[g][1]; k++)
                if (p[grp[g][0] + k]) return LDL__W(election_off);
    }
    (void)r;
    return LDL__W(ok);
#else
    return ldl__el_validate(d, r, as);
#endif
}

#ifndef LDL_NO_ELECTION
/* the election group's checks (ldl__validate's tail) */
static int ldl__el_validate(const ldl_lock_desc *d, const ldl__resolved *r,
                             const ldl_async_store *as) {
    size_t len, i;
    uint64_t ttl = d->ttl_ms;
    if (!r->retry.base_ms && (r->retry.cap_ms || r->retry.give_up_ms || r->retry.seed))
        return LDL__W(retry_base_ms_is);
    if (r->retry.cap_ms < r->retry.base_ms) return LDL__W(retry_cap_ms_must);
    if (r->retry.sleep_ctx && !r->retry.sleep_ms) return LDL__W(retry_sleep_ctx_given);
    if ((uint64_t)d->ride_out_ms >= ttl - r->drift_ms)
        return LDL__W(ride_out_ms_must);
    if (d->campaign && d->campaign != 1) return LDL__W(campaign_0_or_1);
    if (d->campaign && !r->retry.base_ms) return LDL__W(campaign_needs_retry_base);
    if (d->owner) {
        len = 0;
        while (len < LDL_OWNER_MAX && d->owner[len]) len++;
        if (len == 0) return LDL__W(owner_empty_null_none);
        if (len >= LDL_OWNER_MAX) return LDL__W(owner_longer_than_ldl);
        for (i = 0; i < len; i++) {
            unsigned char c = (unsigned char)d->owner[i];
            if (c < 0x20 || c > 0x7E) return LDL__W(owner_printable_ascii_only);
        }
        if ((d->store || as) && !d->store_ext)
            return LDL__W(owner_needs_store_ext);
        if (d->store_ext && (as ? !d->store_ext->submit_owned : !d->store_ext->acquire_owned))
            return as ? LDL__W(owner_no_submit_owned)
                      : LDL__W(owner_no_acquire_owned);
    }
    return LDL__W(ok);
}
#endif

#ifndef LDL_NO_ELECTION
static void ldl__el_setup(ldl_lock *l, const ldl_lock_desc *d, const ldl__resolved *r);
#endif

/* the default store (ldl__own): ctx is the lock, the key is always its own
   (init validated it), ttl_ms > 0, and every token the lock sends is >= 1 (it
   holds no other): the MemoryStore's answers for one key */
/* acquire (out non-NULL) or renew `token`: one body, the clock read first */
static LDL__NOINLINE int ldl__own_lease(ldl_lock *l, int64_t token, uint32_t ttl_ms, int64_t *out) {
    uint64_t now = ldl__now(l);
    if (out) {
        if (l->_own.token && now < l->_own.expires) return 0;  /* held, unexpired */
        if (l->_own.last == INT64_MAX) return LDL_ENOSPC;      /* tokens exhausted */
        *out = l->_own.token = ++l->_own.last;
    } else if (token != l->_own.token || now >= l->_own.expires) {
        return 0;
    }
    now += ttl_ms;                                             /* the expiry, saturated */
    l->_own.expires = now < ttl_ms ? UINT64_MAX : now;
    return 1;
}

static int ldl__own_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    (void)key;
    return ldl__own_lease((ldl_lock *)ctx, 0, ttl_ms, token_out);
}

static int ldl__own_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    (void)key;
    return ldl__own_lease((ldl_lock *)ctx, token, ttl_ms, NULL);
}

static int ldl__own_release(void *ctx, const char *key, int64_t token) {
    ldl_lock *l = (ldl_lock *)ctx;
    (void)key;
    if (token != l->_own.token) return 0;
    l->_own.token = 0;
    return 1;
}

#ifndef LDL_NO_ELECTION
static int ldl__own_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                  int64_t *token_out) {
    (void)owner;
    return ldl__own_acquire(ctx, key, ttl_ms, token_out);
}
#endif

/* every field a live lock reads is set here (init over non-zeroed memory) */
static void ldl__setup(ldl_lock *l, const ldl_lock_desc *d, const ldl__resolved *r) {
    size_t i;
    l->_clock = d->clock;                    /* init zeroed every other field */
    (void)ldl__clock_resolve(&l->_clock);
    l->_ttl_ms = d->ttl_ms;
    l->_heartbeat_ms = r->heartbeat_ms;
    l->_window = d->ttl_ms - r->drift_ms;
    l->_timers = d->timers;
    l->_quiet = l->_timers.set_timeout ? l->_window : r->heartbeat_ms;   /* hb < window */
    l->_container.scope = d->container.scope; l->_container.value = d->container.value;
    l->_container.shutdown = d->container.shutdown; l->_container.self = d->container.self;
    l->_token_name = r->token_name;
    l->_holder_name = r->holder_name;
    l->_on_lost = d->on_lost;
    l->_user = d->user;
    for (i = 0; (l->_key[i] = d->key[i]) != 0; i++) {}   /* validated: < LDL_KEY_MAX */
#ifndef LDL_NO_ASYNC                        /* else init refused async_store */
    if (d->async_store) {
        l->_st.a = *d->async_store;
        l->_async = 1;
    } else
#endif
    if (d->store) {
        l->_st.s = *d->store;
    } else {
        l->_st.s.acquire = ldl__own_acquire;
        l->_st.s.renew = ldl__own_renew;
        l->_st.s.release = ldl__own_release;
        l->_st.s.ctx = l;
    }
#ifndef LDL_NO_ELECTION
    ldl__el_setup(l, d, r);
#endif
    ldl__set_state(l, LDL_IDLE);
    l->_dead = 0;
}

#ifndef LDL_NO_ELECTION
/* the election layer's state from the desc's election group */
static void ldl__el_setup(ldl_lock *l, const ldl_lock_desc *d, const ldl__resolved *r) {
    l->_el.retry = r->retry;
    l->_el.ride_out_ms = d->ride_out_ms;
    l->_el.campaign = d->campaign;
    l->_el.on_leading = d->on_leading;
    l->_el.on_event = d->on_event;
    l->_el.owner = d->owner;
    l->_el.rng = 1;                          /* the rest: 0 since init's start */
    if (r->retry.base_ms) {
        /* splitmix64 of the seed (or of the lock's address, the lock's clock and,
           with the built-in clock compiled in, the process id and a nanosecond
           clock): never 0 */
        uint64_t z = r->retry.seed ? r->retry.seed
                                   : (uint64_t)(uintptr_t)l ^ (ldl__now(l) << 20);
#ifndef LDL_NO_DEFAULT_CLOCK
        if (!r->retry.seed) z ^= ldl__entropy() * 0x9E3779B97F4A7C15ull;
#endif
        z += 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        l->_el.rng = z ? z : 1;
    }
    if (d->store_ext) l->_el.ext = *d->store_ext;
    else {
        /* the default store takes an owner and keeps none: nobody can ask it */
        l->_el.ext.acquire_owned = (!d->store && !d->async_store) ? ldl__own_acquire_owned : NULL;
        l->_el.ext.submit_owned = NULL; l->_el.ext.inspect = NULL; l->_el.ext.ctx = l;
    }
}
#endif

LDL_API int ldl_lock_init(ldl_lock *l, const ldl_lock_desc *d) {
    ldl__resolved r;
    int w;
    if (!l) return LDL_EINVAL;
    /* every byte zero first (a field the lock keeps at 0, NULL or IDLE needs no
       store of its own; null pointers are all-zero bits on every target of this
       header), then: until every check passed the lock behaves as disposed */
    {
        unsigned char *c = (unsigned char *)l;
        size_t k;
        for (k = 0; k < sizeof *l; k++) c[k] = 0;
    }
    l->_state = LDL_RELEASED; l->_dead = 1;
    l->_why = LDL__W(desc_null);
    if (!d) return LDL_EINVAL;
    ldl__desc_defaults(d, &r);
    w = ldl__validate(d, &r);
    l->_why = (unsigned char)w;
    if (w != LDL__W(ok)) return LDL_EINVAL;
    ldl__setup(l, d, &r);
    return LDL_OK;
}

LDL_API const char *ldl_lock_why(const ldl_lock *l) {
    if (!l) return "lock: NULL";
    /* a byte no init wrote (a lock read before ldl_lock_init, e.g. as another
       argument of the same call) must not index past the table */
    if (l->_why >= LDL__WHY_COUNT) return "lock: not initialised";
    return (const char *)&ldl__why_text + ldl__why_off[l->_why];
}

#ifndef LDL_NO_ASYNC
LDL_API void ldl_op_complete(ldl_op *op, int rc, int64_t token) {
    if (!op || op->_phase != LDL__OP_FLYING) return;   /* the first answer stands */
    op->_rc = rc;
    op->_token = token;
    op->_phase = LDL__OP_ANSWERED;
}
#endif

/* ------------------------------------------------------------ [whitelist] acquire */
static int ldl__acquire(ldl_lock *l) {
    int64_t tok = 0;
    uint64_t start = ldl__now(l);
    int rc;
    l->_counters.attempts++;
    ldl__emit(l, LDL_EV_ATTEMPT, 0, 0, 0, 0, 0);
    ldl__set_state(l, LDL_ACQUIRING);
    rc = ldl__call(l, LDL_OP_ACQUIRE, &tok, start);
    if (l->_state != LDL_ACQUIRING) {        /* cut from inside the store call */
        if (rc == LDL_EINPROGRESS) ldl__cancel(l);   /* the store hands back */
        else if (rc == 1) ldl__hand_back(l, tok);    /* a no names no lease of ours */
        return 0;
    }
    if (rc == LDL_EINPROGRESS) return rc;
    return ldl__granted(l, rc, tok, start);
}

LDL_API int ldl_lock_acquire(ldl_lock *l) {
    int rc;
    if (ldl__enter(l, LDL__CALL_ACQUIRE) != LDL__GO) return LDL_ESTATE;
    ldl__apply(l, LDL__APPLY_NO_DEADLINE);
    if (l->_dead || (l->_state != LDL_IDLE && l->_state != LDL_RELEASED)) return LDL_ESTATE;
    ldl__el_begin(l);                        /* a retry schedule: a new round, from now */
    rc = ldl__acquire(l);
    l->_answer = rc;
    return rc;
}

#ifndef LDL_NO_ELECTION
/* [election] the scheduled attempt (FREE, not HELD, due). A poll or timer that
   comes at or after the give-up deadline gives up instead: no attempt past it. */
static int ldl__try(ldl_lock *l) {
    int rc;
    l->_el.retrying = 0;
    ldl__disarm(l);
    if (l->_el.give_up && ldl__now(l) >= l->_el.give_up) {
        l->_el.competing = 0;
        l->_answer = 0;
        ldl__emit(l, LDL_EV_GAVE_UP, 0, 0, 0, 0, 0);
        return 0;
    }
    rc = ldl__acquire(l);
    l->_answer = rc;
    return rc;
}
#else
#define ldl__try(l) 0
#endif

/* ------------------------------------------------------------ [heartbeat] */
/* renew the held lease now (nothing in flight); `now` is read just before */
static int ldl__renew(ldl_lock *l, uint64_t now) {
    int64_t tok = l->_token;
    int rc;
    ldl__disarm(l);                          /* exactly one timer afterwards */
    rc = ldl__call(l, LDL_OP_RENEW, &tok, now);
    if (l->_state != LDL_HELD) {             /* cut from inside: _owed holds the token */
        if (rc == LDL_EINPROGRESS) ldl__cancel(l);
        ldl__settle(l);
        return 0;
    }
    if (rc == LDL_EINPROGRESS) return 1;     /* still HELD while the renew flies */
    return ldl__renewed(l, rc, now, 1);
}

/* HELD at `now`: the deadline, then a renew if asked or due (never a second
   request while one is in flight) */
static int ldl__beat(ldl_lock *l, uint64_t now, int renew_now) {
    if (!ldl__within(l->_start, now, l->_window)) {
        ldl__lose(l, LDL_REASON_LEASE_EXPIRED, 0);    /* cancels a renew in flight */
        return 0;
    }
    if (LDL__PHASE(l) != LDL__OP_IDLE) return 1;
    if (renew_now || (!l->_timers.set_timeout && now - l->_start >= l->_heartbeat_ms
#ifndef LDL_NO_ELECTION
                      && now >= l->_el.ride_next      /* riding out: the retry waits */
#endif
                      ))
        return ldl__renew(l, now);
    return 1;                                /* timer mode: the timer renews */
}

/* tick and poll past the guard and the fast path */
static int ldl__heartbeat(ldl_lock *l, int renew_now) {
    unsigned short losses;
    int g = ldl__enter(l, LDL__CALL_BEAT);
    if (g != LDL__GO) return g == LDL__ZERO ? 0 : LDL_ESTATE;
    losses = l->_losses;
    ldl__apply(l, LDL__APPLY_BEAT);
    if (l->_losses != losses) return 0;      /* lost in this call, whatever on_lost did */
    switch (l->_state) {
    case LDL_HELD:
        return ldl__beat(l, ldl__now(l), renew_now) == 1 && l->_losses == losses;
    case LDL_ACQUIRING:
    case LDL_RELEASING:
        return LDL_EINPROGRESS;
    default:                                 /* a scheduled attempt, when due (manual mode) */
        if (ldl__attempt_due(l, 0) == 0) return ldl__try(l);
        return 0;
    }
}

LDL_API int ldl_lock_tick(ldl_lock *l) { return ldl__heartbeat(l, 1); }

/* the game-loop call: when nothing is due, one clock read and two compares */
LDL_API int ldl_lock_poll(ldl_lock *l) {
    if (l && l->_state == LDL_HELD && !(l->_depth | LDL__PHASE(l))) {
        uint64_t now = ldl__now(l);
        if (now >= l->_start && now - l->_start < l->_quiet) return 1;
        if (!l->_hooked) return ldl__beat(l, now, 0);  /* hooked: _quiet is 0, see ldl__emit */
    }
    return ldl__heartbeat(l, 0);
}

static void ldl__fire(void *arg) {
    ldl_lock *l = (ldl_lock *)arg;
    if (ldl__enter(l, LDL__CALL_FIRE) != LDL__GO) return;   /* stale or re-entrant fire */
    l->_timer = 0;                           /* this one-shot is spent */
    if (l->_state == LDL_HELD) (void)ldl_lock_tick(l);
    else if (ldl__attempt_due(l, 1) == 0) (void)ldl__try(l);
}

/* ------------------------------------------------------------ [lifecycle] release */
/* release the lease from HELD or LOST(owed): 1, 0, LDL_ESTORE or LDL_EINPROGRESS */
static int ldl__release(ldl_lock *l) {
    int64_t tok;
    int rc;
    if (l->_state == LDL_ACQUIRING) {        /* the acquire is cancelled */
        ldl__set_state(l, LDL_RELEASED);
        ldl__cancel(l);
        return 0;
    }
    if (l->_state == LDL_RELEASING) return LDL_EINPROGRESS;   /* sends nothing */
    if (l->_state == LDL_HELD) {
        ldl__cancel(l);                      /* a renew in flight; may re-enter */
        if (l->_state != LDL_HELD) return 0;
        ldl__disarm(l);                      /* disarm FIRST */
        tok = l->_token;
        l->_token = 0;
        l->_reason = LDL_REASON_RELEASED;
    } else if (l->_state == LDL_LOST) {
        tok = l->_owed;                      /* the loss reason is kept */
        l->_owed = 0;
    } else {
        return 0;                            /* IDLE, RELEASED: no store call */
    }
    if (!tok) { ldl__set_state(l, LDL_RELEASED); return 0; }
    ldl__set_state(l, LDL_RELEASING);
#ifndef LDL_NO_ELECTION
    l->_rel_tok = tok;
#endif
    l->_counters.releases++;
    rc = ldl__call(l, LDL_OP_RELEASE, &tok, 0);
    if (rc == LDL_EINPROGRESS) {
        /* the RELEASING timeout counts from a read just after the submit, and only
           when the answer did not come inside it (decision 0008, item 9) */
        if (l->_state == LDL_RELEASING) { l->_op._start = ldl__now(l); return rc; }
        ldl__cancel(l);                      /* cut from inside: the answer is not kept */
        return 0;
    }
    return ldl__released(l, rc, tok);
}

LDL_API int ldl_lock_release(ldl_lock *l) {
    int rc, g = ldl__enter(l, LDL__CALL_RELEASE);
    if (g == LDL__ZERO) return 0;
    if (g == LDL__ESTATE) return LDL_ESTATE;
    ldl__el_stop(l);                         /* step down: no more attempts */
    if (g == LDL__CUT) {
        ldl__cut(l, LDL_REASON_RELEASED);
        l->_answer = 0;
        return 0;
    }
    rc = l->_state;
    ldl__apply(l, LDL__APPLY_DROP_RENEW);
    if (l->_dead) return 0;
    if (rc == LDL_RELEASING && l->_state == LDL_RELEASED)
        return l->_answer;                   /* this call applied the pending release */
    rc = ldl__release(l);
    l->_answer = rc;
    return rc;
}

/* ------------------------------------------------------------ [lifecycle] dispose */
LDL_API void ldl_lock_dispose(ldl_lock *l) {
    int g = ldl__enter(l, LDL__CALL_DISPOSE);
    int64_t tok = 0;
    if (g == LDL__ZERO) return;
    ldl__el_stop(l);
    l->_dead = 1;
    if (g == LDL__CUT) { ldl__cut(l, LDL_REASON_DISPOSED); return; }
    ldl__apply(l, LDL__APPLY_DROP_RENEW);    /* a recorded grant becomes HELD first */
    ldl__disarm(l);
    if (l->_state == LDL_HELD) {
        tok = l->_token;
        l->_reason = LDL_REASON_DISPOSED;
    } else if (l->_state == LDL_LOST) {
        tok = l->_owed;
    }
    if (l->_answer == LDL_EINPROGRESS) l->_answer = 0;
    l->_token = 0;
    l->_owed = 0;
    ldl__set_state(l, LDL_RELEASED);
    ldl__cancel(l);                          /* whatever is in flight */
    ldl__hand_back(l, tok);                  /* fire-and-forget */
}

/* ------------------------------------------------------------ [heartbeat] queries */
LDL_API uint32_t ldl_lock_valid_ms(ldl_lock *l) {
    uint64_t now;
    int g = ldl__enter(l, LDL__CALL_VALID);
    if (g == LDL__ZERO) return 0;
    if (g == LDL__GO) ldl__apply(l, LDL__APPLY_BEAT);
    if (l->_state != LDL_HELD) return 0;
    now = ldl__now(l);
    if (!ldl__within(l->_start, now, l->_window)) {
        if (g == LDL__GO) ldl__lose(l, LDL_REASON_LEASE_EXPIRED, 0);
        return 0;
    }
    return (uint32_t)(l->_window - (now - l->_start));
}

static uint32_t ldl__until(uint64_t start, uint64_t now, uint32_t w) {
    return ldl__within(start, now, w) ? (uint32_t)(w - (now - start)) : 0;
}

LDL_API uint32_t ldl_lock_due_in_ms(ldl_lock *l) {
    uint64_t now, start;
    uint32_t w, due;
    int phase;
    if (ldl__enter(l, LDL__CALL_DUE) != LDL__GO) return UINT32_MAX;
    phase = LDL__PHASE(l);
    if (phase == LDL__OP_ANSWERED) return 0;
    if (l->_state == LDL_HELD) {                 /* the deadline, or the heartbeat */
        start = l->_start; w = l->_window;
    } else if (phase == LDL__OP_FLYING && l->_state != LDL_IDLE) {
        start = l->_op._start;                   /* ACQUIRING or RELEASING: the timeout */
        w = l->_state == LDL_ACQUIRING ? l->_window : l->_ttl_ms;
    } else {
        return ldl__attempt_due(l, 0);           /* the next scheduled attempt, or none */
    }
    now = ldl__now(l);
    due = ldl__until(start, now, w);
    if (due && l->_state == LDL_HELD && !l->_timers.set_timeout && phase == LDL__OP_IDLE) {
        uint64_t el = now - start;               /* manual mode, nothing in flight */
        uint32_t beat = el >= l->_heartbeat_ms ? 0 : (uint32_t)(l->_heartbeat_ms - el);
#ifndef LDL_NO_ELECTION
        if (now < l->_el.ride_next && l->_el.ride_next - now > beat)
            beat = (uint32_t)(l->_el.ride_next - now);   /* riding out */
#endif
        if (beat < due) due = beat;
    }
    return due;
}

/* ------------------------------------------------------------ [run] */
#ifndef LDL_NO_ELECTION
/* [election] run's wait: with retry.give_up_ms, the scheduled attempts until a
   grant or the give-up, sleeping with retry.sleep_ms, else the built-in sleep;
   without either (LDL_NO_DEFAULT_CLOCK) run tries once. rc: the acquire's. */
static void ldl__sleep(ldl_lock *l, uint32_t ms) {
    if (l->_el.retry.sleep_ms) { l->_el.retry.sleep_ms(l->_el.retry.sleep_ctx, ms); return; }
#if !defined(LDL_NO_DEFAULT_CLOCK)
#if defined(_WIN32)
    Sleep(ms);
#else
    {
        struct timespec ts;
        ts.tv_sec = (time_t)(ms / 1000u);
        ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
        (void)nanosleep(&ts, NULL);
    }
#endif
#endif
}

static int ldl__el_wait(ldl_lock *l, int rc) {
#if defined(LDL_NO_DEFAULT_CLOCK)
    if (!l->_el.retry.sleep_ms) return rc;
#endif
    if (!l->_el.retry.give_up_ms) return rc;
    while (rc != 1 && l->_el.retrying && ldl__situation(l) == LDL__FREE) {
        uint64_t now = ldl__now(l);
        if (now < l->_el.next_try) ldl__sleep(l, (uint32_t)(l->_el.next_try - now));
        if (ldl__situation(l) != LDL__FREE || !l->_el.retrying) break;
        rc = ldl__try(l);
    }
    return rc;
}
#else
#define ldl__el_wait(l, rc) (rc)
#endif

LDL_API int ldl_lock_run(ldl_lock *l, int (*body)(void *scope, void *user), void *user,
                         ldl_run_result *res) {
    ldl_run_result r;
    int64_t fence;                           /* the bound copy: lives until shutdown */
    void *scope;
    unsigned short losses;
    int rc, clean;
    r.body_rc = 0; r.shutdown_rc = 0; r.release_rc = 0; r.lost_reason = 0;
    if (res) *res = r;
    if (l && LDL__ASYNC(l)) return LDL_EUNSUPPORTED;   /* run is a blocking scope */
    if (!body) return LDL_EINVAL;
    if (ldl__enter(l, LDL__CALL_RUN) != LDL__GO) return LDL_ESTATE;
    if (l->_state != LDL_IDLE && l->_state != LDL_RELEASED) return LDL_ESTATE;
    rc = ldl_lock_acquire(l);
    if (rc < 0) return rc;
    rc = ldl__el_wait(l, rc);                /* the wait budget (retry.give_up_ms) */
    if (rc != 1 || l->_state != LDL_HELD) {
        if (ldl__situation(l) == LDL__FREE) ldl__el_stop(l);   /* run never competes on */
        return LDL_ENOTACQUIRED;
    }
    fence = l->_token;
    losses = l->_losses;
    scope = l->_container.scope(l->_container.self);
    if (!scope || l->_container.value(scope, l->_token_name, &fence) != 0 ||
        l->_container.value(scope, l->_holder_name, l) != 0) {
        if (scope) r.shutdown_rc = l->_container.shutdown(scope);
        r.release_rc = ldl_lock_release(l);
        if (res) *res = r;
        return LDL_EFENCE;
    }
    r.body_rc = body(scope, user);
    /* a deadline that passed while the body ran counts, even if nobody polled */
    if (ldl__situation(l) == LDL__FREE && l->_state == LDL_HELD &&
        !ldl__within(l->_start, ldl__now(l), l->_window))
        ldl__lose(l, LDL_REASON_LEASE_EXPIRED, 0);
    if (l->_losses != losses) r.lost_reason = l->_loss_reason;
    r.shutdown_rc = l->_container.shutdown(scope);   /* child BEFORE release */
    r.release_rc = ldl_lock_release(l);
    if (res) *res = r;
    clean = r.shutdown_rc == 0 && r.release_rc != LDL_ESTORE;
    if (r.body_rc != 0) return clean ? LDL_EBODY : LDL_EAGGREGATE;
    if (!clean) return LDL_ECLEANUP;
    return r.lost_reason ? LDL_ELOST : LDL_OK;
}


static void *ldl__lock_factory(void *arg) { return arg; }
static void ldl__lock_teardown(void *arg) { ldl_lock_dispose((ldl_lock *)arg); }

LDL_API int ldl_bind_lock(const ldl_container *c, const char *name, ldl_lock *lock) {
    if (!c || !name || !name[0] || !lock) return LDL_EINVAL;
    if (!c->singleton_factory || !c->on_teardown) return LDL_EUNSUPPORTED;
    if (c->singleton_factory(c->self, name, ldl__lock_factory, lock) != 0) return LDL_EEXIST;
    if (c->on_teardown(c->self, name, ldl__lock_teardown, lock) != 0) return LDL_EUNSUPPORTED;
    return LDL_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_C */
#endif /* LITE_DI_LOCK_IMPLEMENTATION */

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
