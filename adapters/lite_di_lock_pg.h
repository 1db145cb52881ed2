/* lite_di_lock_pg.h -- PostgreSQL store for lite_di_lock.h (needs libpq).

   Lease locks with fencing tokens that survive a server restart, because the
   token lives in an ordinary (WAL-logged) table row that is never deleted.
   Two views of one ldl_pg: the synchronous ldl_store (one round trip per
   call) and, from v0.2, a non-blocking ldl_async_store pumped by the
   program's loop, with many locks pipelined on one connection.

   QUICK START (synchronous)

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_PG_IMPLEMENTATION
       #include "adapters/lite_di_lock_pg.h"

       PGconn *conn = PQconnectdb("host=127.0.0.1 dbname=app connect_timeout=2 "
                                  "tcp_user_timeout=2000 "
                                  "options='-c statement_timeout=2000 -c lock_timeout=1000'");
       ldl_pg pg;
       if (ldl_pg_init(&pg, conn, NULL) != LDL_OK) puts(ldl_pg_why(&pg));
       ldl_store store = ldl_pg_store(&pg);
       desc.store = &store;              (the lock copies the struct)
       ... ldl_lock_init(&lock, &desc); ldl_lock_acquire(&lock); ...

   QUICK START (non-blocking, many locks on one connection)

       static ldl_pg_req reqs[1024];     (two per lock: one in flight and one
                                          cancelled, still awaiting its answer)
       ldl_pg_async pa;
       ldl_pg_init(&pg, conn, NULL);                    (blocking, once)
       ldl_pg_async_init(&pa, &pg, reqs, 1024);         (the connection is now
                                                         the adapter's)
       ldl_async_store as = ldl_pg_async_store(&pa);
       desc.async_store = &as;  desc.store = NULL;  (timers all-zero)
       each frame:   ldl_pg_async_pump(&pa);  then ldl_lock_poll(&lock) ...
       fd = ldl_pg_async_fd(&pa, &events);   (poll()/epoll on it if you like)

   Compile with -I/usr/include/postgresql (Debian) and link with -lpq.

   THE TABLE

       CREATE TABLE "<schema>"."<table>" (key text PRIMARY KEY,
                               token bigint NOT NULL CHECK (token >= 1),
                               expires_at timestamptz NOT NULL,
                               owner text, owner_token bigint)

   (the last two from v0.2: see HOLDER IDENTITY; a table without them, as
   v0.1 created it, is used as it is; a sixth, `session uuid`, opts in to
   SESSIONS)

   One row per key, created on the first acquire and never deleted: the row IS
   the fence counter. acquire inserts the row or, when its lease has expired
   by the server's clock_timestamp(), bumps its token by one in the same
   statement (INSERT .. ON CONFLICT .. DO UPDATE .. WHERE expired RETURNING
   token). renew pushes expires_at forward only while key and token match and
   the lease is unexpired; release sets expires_at to '-infinity' while key and
   token match. Only the server's clock is used; the client's clock never
   reaches the table.

   ldl_pg_init(p, conn, table): table NULL means "ldl_lease". A name is
   [A-Za-z_][A-Za-z0-9_]{0,62}, optionally "schema.name" with the same rule
   for the schema; quoted, so case-sensitive. Anything else answers
   LDL_EINVAL and touches nothing. init creates the table if it is missing,
   then resolves the name ONCE (through search_path when it has no schema)
   to a schema-qualified name that every statement uses from then on, and
   refuses (LDL_ESTORE, ldl_pg_why says why):
     - a table the current role neither owns nor inherits from its owner
       (pg_has_role(owner, 'USAGE')), unless a superuser owns it: its owner
       could rewrite the fence;
     - (v0.3) a table on which INSERT, UPDATE, DELETE, TRUNCATE or TRIGGER,
       table- or column-level, is granted to PUBLIC or to a role that is a
       member (pg_has_role MEMBER) neither of the owner nor of the current
       role: it could reset the fence. Rights on every table (superusers,
       pg_write_all_data) and grants made after init are not seen;
     - an UNLOGGED or TEMP table (the fence would not survive a crash), a
       view, a partitioned or foreign table;
     - columns other than exactly key text, token bigint, expires_at
       timestamptz, optionally followed by both owner text and owner_token
       bigint (nullable), and then optionally session uuid (nullable: the
       session shape, see SESSIONS); a key collation that is not
       deterministic; a primary key
       other than (key); UNIQUE, FOREIGN KEY or EXCLUDE constraints; user
       triggers, rules or row level security.
   Every operator, function and type in the adapter's SQL is exact and
   schema-qualified (OPERATOR(pg_catalog.*), pg_catalog.clock_timestamp(),
   a float8 operand), so nothing another role puts on the search_path is
   ever called. ldl_pg_init_ex(p, conn, table, flags) takes flags:
     0                named prepared statements (the default; fastest)
     LDL_PG_UNNAMED   no named prepared statements: every call sends its SQL
                      text with parameters (unnamed statement). For
                      connection poolers in transaction pooling (pgbouncer
                      before 1.21 cannot carry named statements there).
   Without LDL_PG_UNNAMED, init prepares three statements named "ldl_" + a
   hash of their SQL text; when the session already has a statement of that
   name, init reads its text from pg_prepared_statements and fails unless it
   is exactly the adapter's own (another component's statement is never run
   in its place).
   Answers LDL_OK, LDL_EINVAL (bad argument) or LDL_ESTORE.

   THE CONNECTION belongs to the caller: the adapter never connects,
   reconnects or closes it, and never changes a session setting. Configure
   timeouts in the conninfo (connect_timeout, tcp_user_timeout,
   statement_timeout, lock_timeout) or, behind a pooler that refuses the
   `options` startup parameter, with ALTER ROLE .. SET (docs/postgres.md).
   Every synchronous store call is one round trip and waits as long as libpq
   waits. When a call fails because the server went away (PQstatus(conn) ==
   CONNECTION_BAD), call PQreset(conn); the adapter notices the new backend
   and prepares its statements again on the next call (it also re-prepares
   once when the server says a statement is missing). Store calls refuse
   (answer LDL_ESTORE, send nothing) while the connection is inside a
   transaction block of the caller's, because a lease taken there would be
   invisible until COMMIT and undone by ROLLBACK, and while the connection
   is in pipeline mode (then it belongs to an ldl_pg_async).

   THE NON-BLOCKING VIEW (ldl_pg_async; SPEC "Non-blocking stores")
   ldl_pg_async_init(pa, pg, reqs, nreqs): after ldl_pg_init on the same
   connection; puts the connection in non-blocking and pipeline mode (it is
   the adapter's from then on: do not use it, nor the synchronous store of
   pg, yourself). reqs is caller-owned storage for nreqs requests; a submit
   with none free answers LDL_ENOSPC (that operation's store error).
   A submit copies the request and returns: no I/O. ldl_pg_async_pump(pa)
   does only non-blocking I/O: it moves up to LDL_PG_BATCH queued requests
   into libpq (each request is ONE statement followed by its own Sync, so an
   error in one never rolls back another's grant), sends them in one corked
   burst, reads what the server answered, and completes a request only after
   its Sync's PGRES_PIPELINE_SYNC. It answers the number of requests it
   completed (>= 0), or a negative value when the link failed: every live
   request was then completed with LDL_ESTORE and every later submit answers
   LDL_ESTORE until ldl_pg_async_rebind. ldl_pg_async_fd(pa, &events)
   answers the socket (-1 when there is none) and LDL_WANT_READ /
   LDL_WANT_WRITE in events.
   Cancel detaches the request from its op; the request itself still goes
   out (SPEC). A cancelled ACQUIRE whose answer turns out to carry a token is
   released by the adapter with that token, in the same ldl_pg_req (queued
   like any request), so two requests per lock always suffice.
   A frozen server (SIGSTOP, paused VM) keeps TCP alive: the pump stays
   short, the locks' own deadlines expire their leases, and the requests
   simply wait. PQcancel blocks in libpq 15, so do not use it from a loop.
   To give up on a connection without blocking: ldl_pg_async_drop(pa)
   (every live request completed with LDL_ESTORE), PQfinish(old), open a new
   one with PQconnectStart + PQconnectPoll driven by your loop, then
   ldl_pg_async_rebind(pa, new) (no I/O: the statements are prepared on the
   new connection in the pipeline, ahead of the first request). Rebinding a
   LIVE link does the drop first: every request queued or in flight on the
   old connection answers LDL_ESTORE at once and nothing of the old pipeline
   is ever matched to a new request (the old connection is yours again, its
   late answers unread: PQfinish it; a grant it carried lapses at its TTL).
   ldl_pg_async_why(pa) is the view's last error text (never NULL; the same
   text as ldl_pg_why(pg)); ldl_pg_async_stats(pa) its counters since init
   (submitted, answered, failed, handed_back, refused_full, link_failures,
   batches, prepares, live, max_live). Every adapter's non-blocking view
   has these four verbs (_why, _stats, _drop, _rebind; decision 0105).

   HOLDER IDENTITY (v0.2, issue 12; SPEC's ldl_store_ext)
   ldl_pg_ext(p), after ldl_pg_init: inspect(key) -- token, ms left by the
   server's clock and owner, in one statement; 1 held, 0 free (no row,
   released, expired), LDL_ESTORE for a reply of the wrong shape (nothing is
   made up) -- and acquire_owned, which stores the owner (1..LDL_OWNER_MAX-1
   bytes, no control bytes; else LDL_EINVAL before anything is sent; bound as
   a parameter) with owner_token = the token it grants. inspect reports the
   owner only while owner_token is the current token: a grant that did not
   write it (no owner, an older client) shows "". ldl_pg_async_ext(pa):
   submit_owned for the pipelined view (no inspect there: use an ldl_pg on
   another connection). On a table without the owner columns acquire_owned
   and submit_owned are NULL, so a lock with desc.owner fails at
   ldl_lock_init; called anyway they answer LDL_EUNSUPPORTED. Opt in with
   ALTER TABLE t ADD COLUMN owner text, ADD COLUMN owner_token bigint, then
   init again (v0.1 processes refuse the new shape at their init).

   SESSIONS (decisions 0217, 0218)
   One row per client that its locks reference, renewed by one UPDATE, so a
   lock's lease no longer needs its own committed write. Opt in per table:
       ALTER TABLE t ADD COLUMN session uuid      (after the owner columns)
   then, after init, ldl_pg_session(p, session_ms): a lock on p whose ttl_ms
   equals session_ms joins p's session; every other lock on p stays a
   per-lock lease (mixing is the default). It answers LDL_OK (a session row
   opened), LDL_EINVAL (p not initialised for leases, session_ms 0 or above
   2^31-1, or p already in a session with another session_ms),
   LDL_EUNSUPPORTED (a table without the session column: nothing is
   created) or LDL_ESTORE (why says why; also inside the caller's
   transaction). Without a call to it, a
   v0.1 or v0.2 table's statements and checks are exactly as before.
   THE SESSION TABLE "<schema>"."<table>_session" (so the lease table's own
   name is then at most 55 bytes; longer answers LDL_EINVAL):
       CREATE TABLE "<schema>"."<table>_session" (id uuid PRIMARY KEY,
                                     expires_at timestamptz NOT NULL)
   Init on a table of the session shape creates it when missing and refuses
   it (LDL_ESTORE) as the lease table: owner, foreign writers, UNLOGGED or
   TEMP, a view, columns other than exactly those two, a primary key other
   than (id), UNIQUE/FOREIGN KEY/EXCLUDE, triggers, rules, row level
   security; ldl_pg_session checks it again. Every process on a table of the
   session shape uses the session-aware statements (a row naming a dead
   session is free to anyone). A session id is the server's
   gen_random_uuid() (PostgreSQL 13+), never reused.
   A session lock's row has expires_at 'infinity' and session = the id; its
   acquire extends the session and takes the key in ONE statement; its renew
   is the session's UPDATE (unexpired rows only, never revived), answered 1
   only while the lock's row is still ours on this very session; its release
   frees the row. The session expired or deleted: every lock on it answers 0
   at its next renew (LOST, on_lost once each), its rows are free to others
   (with the next fence) and inspect reports them free; the next session
   acquire opens a new session (a lock of the old one is never renewed by
   it). The fence is the lease row's token, as for any lock.
   The synchronous view runs one call at a time, so each session renew is
   one statement: sessions save the per-lock commit there, not round trips.
   The non-blocking view (attached after ldl_pg_session; ldl_pg_session on a
   connection the view owns answers LDL_ESTORE) coalesces: a session lock's
   renew takes no ldl_pg_req; it waits for the next session UPDATE the pump
   SENDS (at most one in flight) and is answered by that UPDATE only -- never by one sent before
   it was submitted. Cancel unlinks a waiting renew. No session row: every
   renew it carried answers 0 (LOST, on_lost once each), and the session is
   lost FOR THIS VIEW: later session renews answer 0 and session acquires
   LDL_ESTORE, because a lock of an old session could not be told from one
   of a new (tokens count per key); start again with a new ldl_pg,
   ldl_pg_session and view.
   ldl_pg_async_stats counts session_renews and session_updates. On a table
   of the session shape, a view without a session works as before, with the
   session-aware statements.

   ANSWERS: exactly 1 yes, 0 no, negative on any error (LDL_ESTORE: server
   error, connection down, a reply of the wrong shape; LDL_EINVAL: bad
   argument). A token is parsed strictly as a decimal in [1, INT64_MAX]
   without sign or leading zeros. ldl_pg_why(p) is the last error text
   ("" when none), for logs.

   OPTIONS
     LDL_PG_IMPLEMENTATION   in exactly one .c/.cpp file, after the core header
     LDL_STATIC              makes the functions static (as in the core header)
     LDL_PG_BATCH            requests one pump call moves into libpq (default 512)
     LDL_NO_ASYNC            (the core's switch) leaves the non-blocking view out

   One ldl_pg serves one thread at a time (like its PGconn). Several ldl_pg
   may share one PGconn (not one in pipeline mode); the same table gives the
   same statement names, which is fine. ldl_pg_store(p) points at p and
   ldl_pg_async_store(pa) at pa: do not move them while a lock uses them.

   LIMITS (details in docs/postgres.md)
   - The fence survives restarts and crashes through the WAL with the server's
     defaults; not with fsync = off or synchronous_commit = off, and not across
     a failover to an asynchronous replica. ldl_pg_check_durability() says
     which (DURABILITY, at the end of this header).
   - A frozen server still ACKs TCP: no libpq timeout fires and a synchronous
     call waits until it resumes. The lock stays safe (its own deadline), but
     your loop waits; the non-blocking view does not. desc.ride_out_ms can
     only ride out an error: bound the call yourself (docs/postgres.md,
     "Riding out a frozen server").
   - Keys are text: valid in the client encoding, or the call answers an error.
*/
#ifndef LITE_DI_LOCK_PG_H
#define LITE_DI_LOCK_PG_H

#include "lite_di_lock.h"
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LDL_PG_API
#define LDL_PG_API LDL_API
#endif

/* LDL_WANT_READ / LDL_WANT_WRITE (the events ldl_pg_async_fd answers) are
   defined once, in lite_di_lock.h. */

#if !defined(LDL_NO_ASYNC) && !defined(LIBPQ_HAS_PIPELINING)
#error "the non-blocking view needs libpq 14 or later (pipeline mode); define LDL_NO_ASYNC to build without it"
#endif

#ifndef LDL_PG_BATCH
#define LDL_PG_BATCH 512
#endif
#if LDL_PG_BATCH < 1
#error "LDL_PG_BATCH must be at least 1"
#endif

/* ldl_pg_init_ex flags */
#define LDL_PG_UNNAMED 1u

/* a quoted "schema"."table": two names of up to 63 bytes, every byte possibly
   a doubled quote, four quotes, a dot, the NUL */
#define LDL__PG_IDENT_MAX 264
#define LDL__PG_NAME_MAX 24
#define LDL__PG_ERR_MAX 2048   /* a refusal names the table, the roles and the fix */
#define LDL__PG_SQL_MAX 1024     /* a CREATE TABLE */
#define LDL__PG_TEXT_MAX 10240 /* every statement's text, one after the other: the
                                 session shape's nine with 63 + 55-byte names fit */
#define LDL__PG_NSTMT 9      /* acquire, renew, release, inspect, acquire with owner; and on
                                the session shape: session acquire, session renew, open,
                                the session's own UPDATE (the non-blocking view's) */
#define LDL__PG_SID_MAX 40   /* a session id: a uuid's 36 characters and the NUL */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_pg {                  /* caller-owned; fields are private */
    PGconn  *_conn;
    int      _ok;                        /* 1 after a successful init */
    int      _pid;                       /* backend pid the statements were prepared on */
    unsigned _prepared;                  /* which of them (bit per LDL__PG_ACQ ..) */
    unsigned _flags;                     /* LDL_PG_UNNAMED */
    int      _owner;                     /* 1: the table has the owner column */
    int      _nstmt;                     /* statements in use: 4, or 5 with owner */
    char     _ident[LDL__PG_IDENT_MAX];  /* "schema"."table", resolved once at init */
    char     _stmt[LDL__PG_NSTMT][LDL__PG_NAME_MAX]; /* statement names (LDL__PG_ACQ ..) */
    unsigned short _off[LDL__PG_NSTMT];  /* and where their text starts in _text */
    char     _text[LDL__PG_TEXT_MAX];
    char     _err[LDL__PG_ERR_MAX];      /* last error text: ldl_pg_why() */
    int      _fence;                     /* 1 after an init with LDL_PG_FENCE: the fenced-write
                                            protocol (_ident is then the fence table, the
                                            text at _off[0] and _stmt[0] its statement) */
    int      _session;                   /* 1: the table has the session column (decision 0217) */
    uint32_t _sess_ms;                   /* ldl_pg_session's session_ms; 0 = no session */
    char     _sid[LDL__PG_SID_MAX];      /* the open session's id; "" = none open */
    char     _sident[LDL__PG_IDENT_MAX]; /* "schema"."table_session", resolved at init */
} ldl_pg;

#ifndef LDL_NO_ASYNC                /* the non-blocking view needs the core's v0.2 contract */
typedef struct ldl_pg_req ldl_pg_req;
struct ldl_pg_req {                      /* one request; caller-owned storage */
    ldl_pg_req *_next;
    ldl_op     *_op;                     /* NULL once cancelled (detached) */
    int         _kind;                   /* LDL_OP_* */
    int         _phase;                  /* LDL__PG_FREE / _QUEUED / _SENT / _GOT */
    int         _rc;                     /* the answer being built */
    int64_t     _token;                  /* ACQUIRE: the granted token; else ours */
    uint32_t    _ttl;
    int         _sess;                   /* 1: a session lock's acquire, or the session UPDATE */
    char        _key[LDL_KEY_MAX];
    char        _owner[LDL_OWNER_MAX];   /* ACQUIRE: "" = none */
};

typedef struct ldl_pg_stats {            /* counters of a non-blocking view, since init */
    uint64_t submitted;                  /* requests queued (the adapter's own hand-backs too) */
    uint64_t answered;                   /* requests whose Sync arrived (the server answered) */
    uint64_t failed;                     /* requests completed with LDL_ESTORE unanswered: the
                                            link failed, was dropped or rebound */
    uint64_t handed_back;                /* cancelled grants the adapter released */
    uint64_t refused_full;               /* submits refused: no free ldl_pg_req */
    uint64_t link_failures;              /* links given up: failed, dropped, rebound while live */
    uint64_t batches;                    /* pumps that moved requests into libpq */
    uint64_t prepares;                   /* statement sets prepared in the pipeline */
    size_t   live;                       /* requests queued or awaiting their Sync now */
    size_t   max_live;
    uint64_t session_renews;             /* session locks' renews submitted (sessions) */
    uint64_t session_updates;            /* session UPDATEs sent: each answers the renews
                                            submitted before it was sent */
} ldl_pg_stats;

typedef struct ldl_pg_async {            /* caller-owned; fields are private */
    ldl_pg     *_pg;
    ldl_pg_req *_reqs;
    size_t      _nreqs;
    ldl_pg_req *_free;                   /* free list */
    ldl_pg_req *_qhead, *_qtail;         /* queued, not yet handed to libpq */
    ldl_pg_req *_ahead, *_atail;         /* sent, awaiting their Sync */
    ldl_pg_req  _prep;                   /* marker: the statements' preparation */
    unsigned    _need_prep;              /* statements (bits) to prepare ahead of the
                                            next request */
    int         _dead;                   /* the link failed: submit refuses */
    int         _flush;                  /* libpq still holds unsent bytes */
    int         _gone;                   /* a statement went missing (26000) */
    const char *_why;                    /* why init failed before a ldl_pg was attached */
    ldl_op     *_s_wait;                 /* session renews waiting for the NEXT UPDATE sent
                                            (linked through store_data) */
    ldl_op     *_s_ride;                 /* session renews the UPDATE in flight answers */
    ldl_pg_req *_s_upd;                  /* that UPDATE, NULL when none is in flight */
    int         _s_lost;                 /* the session was lost: it is never replaced here */
    ldl_pg_stats _stats;
} ldl_pg_async;
#endif /* LDL_NO_ASYNC */

/* v0.4: after init, drive this adapter through ONE interface,
   adapters/lite_di_lock_view.h (ldl_view_pg, ldl_view_pg_async): its ops do what
   the calls marked DEPRECATED below do. Those stay in v0.4 unchanged and
   leave the public surface in v0.5 (CHANGELOG lists each replacement;
   tools/api-deprecated.txt). */
LDL_PG_API int         ldl_pg_init(ldl_pg *p, PGconn *conn, const char *table);
LDL_PG_API int         ldl_pg_init_ex(ldl_pg *p, PGconn *conn, const char *table, unsigned flags);
/* sessions (decision 0217): after init, on a table with the session column;
   locks whose ttl_ms == session_ms share one session row (see SESSIONS) */
LDL_PG_API int         ldl_pg_session(ldl_pg *p, uint32_t session_ms);
/* DEPRECATED (v0.4): the view */
LDL_PG_API ldl_store   ldl_pg_store(ldl_pg *p);
/* DEPRECATED (v0.4): the view */
LDL_PG_API ldl_store_ext ldl_pg_ext(ldl_pg *p);       /* owner + inspect; after init */
/* DEPRECATED (v0.4): the view */
LDL_PG_API const char *ldl_pg_why(const ldl_pg *p);   /* never NULL */

#ifndef LDL_NO_ASYNC
LDL_PG_API int  ldl_pg_async_init(ldl_pg_async *pa, ldl_pg *pg, ldl_pg_req *reqs, size_t nreqs);
/* DEPRECATED (v0.4): the view */
LDL_PG_API ldl_async_store ldl_pg_async_store(ldl_pg_async *pa);
/* DEPRECATED (v0.4): the view */
LDL_PG_API ldl_store_ext ldl_pg_async_ext(ldl_pg_async *pa); /* submit_owned only */
/* DEPRECATED (v0.4): the view */
LDL_PG_API int  ldl_pg_async_pump(ldl_pg_async *pa);
/* DEPRECATED (v0.4): the view */
LDL_PG_API int  ldl_pg_async_fd(const ldl_pg_async *pa, int *events);
/* DEPRECATED (v0.4): the view */
LDL_PG_API int  ldl_pg_async_drop(ldl_pg_async *pa);          /* answers requests completed */
/* DEPRECATED (v0.4): the view */
LDL_PG_API int  ldl_pg_async_rebind(ldl_pg_async *pa, PGconn *conn);
/* DEPRECATED (v0.4): the view */
LDL_PG_API const char *ldl_pg_async_why(const ldl_pg_async *pa);          /* never NULL */
/* DEPRECATED (v0.4): the view */
LDL_PG_API const ldl_pg_stats *ldl_pg_async_stats(const ldl_pg_async *pa); /* NULL for NULL */
#endif

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_PG_H */

/* ==================================================================== */
/* THE FENCED-WRITE PROTOCOL (v0.3, issue 19; docs/postgres.md "Fenced
   writes", decisions 0901 and 0211)

   The fence is only worth something where the write lands: the resource
   must refuse a write carrying a fence lower than one it already accepted.
   ldl_pg_fence does that check on a PostgreSQL resource, inside the
   caller's own transaction, atomically with the caller's writes.

       PGconn *res = PQconnectdb("...the database that holds the resource...");
       ldl_pg fp;
       ldl_pg_init_ex(&fp, res, NULL, LDL_PG_FENCE);  (once; the lease table
                                   name "ldl_lease" gives the fence table
                                   "ldl_lease_fence", created if missing)
       ... the lock granted `fence` (ldl_lock_fencing_token, $LDL_FENCE) ...
       PQexec(res, "BEGIN");
       rc = ldl_pg_fence(&fp, "orders", fence);
         rc 1:     the protected writes; COMMIT         (the mark is now fence)
         rc 0:     ROLLBACK: a higher fence has written (a stale holder)
         rc < 0:   ROLLBACK; ldl_pg_why(&fp) says why   (an error)

   THE TABLE: "<schema>"."<lease table>_fence", in the lease table's schema
   (so the lease table's own name must then be at most 57 bytes):
       CREATE TABLE "<schema>"."<table>_fence" (resource text PRIMARY KEY,
                         fence bigint NOT NULL CHECK (fence >= 1))
   One row per resource name: the resource's high-water mark, never
   deleted. Init with LDL_PG_FENCE creates it when missing, resolves it ONCE
   to a schema-qualified name and refuses it (LDL_ESTORE, why) with the same
   checks as the lease table: owner and write grants, UNLOGGED/TEMP, views,
   columns other than exactly (resource text with a deterministic collation,
   fence bigint NOT NULL), a primary key other than (resource), UNIQUE,
   FOREIGN KEY or EXCLUDE constraints, triggers, rules, row level security.
   An ldl_pg initialised with LDL_PG_FENCE neither creates nor needs the
   lease table and is for ldl_pg_fence only: its lease calls answer
   LDL_ESTORE (use another ldl_pg, on the same connection if you like, for
   the lock).

   ldl_pg_fence(p, resource, fence), inside a transaction block on p's
   connection (after BEGIN, before COMMIT; best as the transaction's FIRST
   statement), runs ONE statement:
       INSERT INTO "<schema>"."<table>_fence" AS f (resource, fence)
       VALUES ($1, $2) ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence
       WHERE f.fence <= EXCLUDED.fence RETURNING f.fence
   (operators and types schema-qualified; ldl_pg_fence_sql(p) is the exact
   text) and answers
     1   this transaction may write: the mark is now `fence` and its row
         stays locked until the transaction ends (a concurrent fenced
         writer of the same resource waits for our COMMIT or ROLLBACK);
     0   stale: a higher fence has written. ROLL BACK;
     LDL_EINVAL  p not initialised with LDL_PG_FENCE, resource NULL, empty
                 or LDL_PG_RESOURCE_MAX bytes or longer, fence outside
                 [1, INT64_MAX]; nothing is sent;
     LDL_ESTORE  not inside a transaction block (idle, failed, busy or in
                 pipeline mode: nothing is sent), a server error (e.g.
                 40001 under REPEATABLE READ / SERIALIZABLE, lock_timeout,
                 a resource not valid in the client encoding: the
                 transaction is then aborted; the why carries the SQLSTATE),
                 a reply of the wrong shape.
   Under REPEATABLE READ or SERIALIZABLE a check that waited on a concurrent
   fenced writer which then committed answers LDL_ESTORE (SQLSTATE 40001)
   whichever fence is higher: retry the whole transaction. A writer paused
   inside its transaction keeps the mark's row locked: set lock_timeout and
   idle_in_transaction_session_timeout on the writing role.
   An equal fence passes (one holder writes many times), a lower one fails,
   a first fence for a new resource passes. The mark commits or rolls back
   with the caller's writes. A resource is guarded by ONE lock key: fences of
   different keys are not comparable (each key counts on its own), so never
   guard one resource with two keys. Behind pgbouncer in transaction pooling
   add LDL_PG_UNNAMED (decision 0206): the statement is then sent with its
   text each time. ldl_pg_why(p) says why after every answer other than 1.
*/
#ifndef LITE_DI_LOCK_PG_FENCE_H
#define LITE_DI_LOCK_PG_FENCE_H

/* ldl_pg_init_ex flag: this ldl_pg is for ldl_pg_fence on the resource's
   connection (the fence table only) */
#define LDL_PG_FENCE 0x100u      /* a high bit: clear of the flags other sections may add */
#define LDL_PG_RESOURCE_MAX 1024        /* bytes of a resource name, including the NUL */

#ifdef __cplusplus
extern "C" {
#endif

/* DEPRECATED (v0.4): the view */
LDL_PG_API int         ldl_pg_fence(ldl_pg *p, const char *resource, int64_t fence);
LDL_PG_API const char *ldl_pg_fence_sql(const ldl_pg *p);   /* "" before init; never NULL */

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_PG_FENCE_H */

/* ==================================================================== */
#ifdef LDL_PG_IMPLEMENTATION
#ifndef LITE_DI_LOCK_PG_C
#define LITE_DI_LOCK_PG_C

#include <stdio.h>
#include <string.h>
#if defined(__linux__)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

#define LDL__PG_ACQ 0
#define LDL__PG_REN 1
#define LDL__PG_REL 2
#define LDL__PG_INS 3       /* inspect */
#define LDL__PG_OWN 4       /* acquire with an owner (tables with the owner column) */
#define LDL__PG_SACQ 5      /* the session shape: a session lock's acquire */
#define LDL__PG_SREN 6      /* a session lock's renew (the session's UPDATE) */
#define LDL__PG_SOPN 7      /* open a session */
#define LDL__PG_SUPD 8      /* the session's UPDATE alone: the non-blocking view's renew */
#define LDL__PG_UUIDOID 2950
#define LDL__PG_SQL(p, i) ((p)->_text + (p)->_off[i])   /* statement i's text */
#define LDL__PG_TEXTOID 25
#define LDL__PG_INT8OID 20  /* pg_type.oid of bigint; fixed since 1996 */

#define LDL__PG_FREE   0
#define LDL__PG_QUEUED 1
#define LDL__PG_SENT   2
#define LDL__PG_GOT    3
#define LDL__PG_PREP   9    /* _kind of the preparation marker */
#define LDL__PG_SKIND 10    /* _kind of the session UPDATE (the non-blocking view's) */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ errors */
static void ldl__pg_err(ldl_pg *p, const char *what, const char *detail) {
    size_t n, i;
    if (!detail) detail = "";
    snprintf(p->_err, sizeof p->_err, "%s: %s", what, detail);
    n = strlen(p->_err);
    while (n > 0 && (p->_err[n - 1] == '\n' || p->_err[n - 1] == ' ')) p->_err[--n] = '\0';
    for (i = 0; i < n; i++)             /* one line: libpq's messages span several */
        if (p->_err[i] == '\n' || p->_err[i] == '\t') p->_err[i] = ' ';
}

/* a name from the catalog for a why: printable ASCII, others as '?', cut at cap */
static void ldl__pg_printable(char *out, size_t cap, const char *s) {
    size_t i;
    for (i = 0; i + 1 < cap && s && s[i]; i++)
        out[i] = (s[i] >= 0x20 && s[i] <= 0x7E) ? s[i] : '?';
    out[i] = '\0';
}

/* a failed call: the server's message, or what happened to the connection */
static void ldl__pg_err_res(ldl_pg *p, const char *what, const PGresult *r) {
    char buf[LDL__PG_ERR_MAX];
    const char *m = r ? PQresultErrorMessage(r) : "";
    if (!m || !*m) m = PQerrorMessage(p->_conn);
    if (PQstatus(p->_conn) == CONNECTION_BAD) {
        snprintf(buf, sizeof buf, "connection closed before the answer (behind pgbouncer, an "
                 "exhausted pool closes waiting clients after query_wait_timeout): %s", m);
        ldl__pg_err(p, what, buf);
    } else {
        ldl__pg_err(p, what, m);
    }
}

LDL_PG_API const char *ldl_pg_why(const ldl_pg *p) {
    return p ? p->_err : "ldl_pg: NULL";
}

/* ------------------------------------------------------------ names and SQL */
/* [A-Za-z_][A-Za-z0-9_]{0,62}; returns the length or 0 when invalid */
static size_t ldl__pg_name_len(const char *s, size_t max) {
    size_t i = 0;
    for (; i < max && s[i] != '\0' && s[i] != '.'; i++) {
        char c = s[i];
        int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        int digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && i > 0)) return 0;
    }
    if (i == 0 || i > 63) return 0;
    return i;
}

/* validate "name" or "schema.name" and write the quoted form; 0 ok, -1 bad */
static int ldl__pg_quote(const char *table, char *out, size_t cap) {
    size_t a, b = 0;
    a = ldl__pg_name_len(table, 64);
    if (a == 0) return -1;
    if (table[a] == '.') {
        b = ldl__pg_name_len(table + a + 1, 64);
        if (b == 0 || table[a + 1 + b] != '\0') return -1;
    } else if (table[a] != '\0') {
        return -1;
    }
    if (b == 0) {
        if (a + 3 > cap) return -1;
        snprintf(out, cap, "\"%.*s\"", (int)a, table);
    } else {
        if (a + b + 6 > cap) return -1;
        snprintf(out, cap, "\"%.*s\".\"%.*s\"", (int)a, table, (int)b, table + a + 1);
    }
    return 0;
}

/* append a catalog name as a quoted identifier (quotes doubled); -1 when too long */
static int ldl__pg_put_ident(char *out, size_t cap, size_t *at, const char *name) {
    size_t n = *at;
    if (n + 1 >= cap) return -1;
    out[n++] = '"';
    for (; *name; name++) {
        if (n + 3 >= cap) return -1;
        if (*name == '"') out[n++] = '"';
        out[n++] = *name;
    }
    out[n++] = '"';
    out[n] = '\0';
    *at = n;
    return 0;
}

/* "schema"."table" from the catalog's names; -1 when too long */
static int ldl__pg_qualify(char *out, size_t cap, size_t *at, const char *nsp, const char *rel) {
    if (ldl__pg_put_ident(out, cap, at, nsp) != 0 || *at + 2 >= cap) return -1;
    out[(*at)++] = '.';
    out[*at] = '\0';
    return ldl__pg_put_ident(out, cap, at, rel);
}

/* the statements: every operator, function and type exact and qualified.
   The owner columns (v0.2) are written only by the owned acquire, with
   owner_token = the token it grants; inspect reports the owner only while
   owner_token is the current token, so a grant by any other statement (a
   plain acquire, a v0.1 client) hides a previous holder's owner by itself.
   0 ok, -1 too long. */
#define LDL__PG_TTL(n) "pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($" #n \
    "::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval)"
static int ldl__pg_sql(const char *t, int which, int owner, char *buf, size_t cap) {
    int n;
    if (which == LDL__PG_ACQ)
        n = snprintf(buf, cap,
            "INSERT INTO %s AS l (key, token, expires_at) "
            "VALUES ($1::pg_catalog.text, 1::pg_catalog.int8, " LDL__PG_TTL(2) ") "
            "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
            "expires_at = " LDL__PG_TTL(2) " "
            "WHERE l.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp() "
            "RETURNING l.token", t);
    else if (which == LDL__PG_OWN)
        n = snprintf(buf, cap,
            "INSERT INTO %s AS l (key, token, expires_at, owner, owner_token) "
            "VALUES ($1::pg_catalog.text, 1::pg_catalog.int8, " LDL__PG_TTL(2) ", "
            "$3::pg_catalog.text, 1::pg_catalog.int8) "
            "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
            "expires_at = " LDL__PG_TTL(2) ", owner = $3::pg_catalog.text, "
            "owner_token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8 "
            "WHERE l.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp() "
            "RETURNING l.token", t);
    else if (which == LDL__PG_REN)
        n = snprintf(buf, cap,
            "UPDATE %s AS l SET expires_at = " LDL__PG_TTL(3) " "
            "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
            "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
            "AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp() "
            "RETURNING l.token", t);
    else if (which == LDL__PG_REL)
        n = snprintf(buf, cap,
            "UPDATE %s AS l SET expires_at = '-infinity'::pg_catalog.timestamptz "
            "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
            "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
            "AND l.expires_at OPERATOR(pg_catalog.>) '-infinity'::pg_catalog.timestamptz "
            "RETURNING l.token", t);
    else                                        /* inspect: one clock read */
        n = snprintf(buf, cap,
            "SELECT l.token, pg_catalog.ceil(pg_catalog.date_part('epoch'::pg_catalog.text, "
            "l.expires_at OPERATOR(pg_catalog.-) c.now) OPERATOR(pg_catalog.*) "
            "1000::pg_catalog.float8)::pg_catalog.int8, %s "
            "FROM %s AS l, (SELECT pg_catalog.clock_timestamp() AS now) AS c "
            "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
            "AND l.expires_at OPERATOR(pg_catalog.>) c.now",
            owner ? "CASE WHEN l.owner_token OPERATOR(pg_catalog.=) l.token THEN l.owner "
                    "ELSE NULL::pg_catalog.text END" : "NULL::pg_catalog.text", t);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* ------------------------------------------------------------ the session shape (decision 0217)
   A table with the sixth column `session uuid` takes these statements
   instead (every one, sessions used or not: another process may hold a key
   on a session). \001 stands for the lease table, \002 for the session
   table "<table>_session". A session lock's row has expires_at 'infinity'
   and session = its session's id; it is free when that session is missing
   or expired -- judged only when the row did not change since the
   statement's snapshot (a session born after the snapshot would look
   missing), and never while the session row is being renewed (SKIP LOCKED:
   locked counts as alive). */
#define LDL__PG_LT "\001"
#define LDL__PG_ST "\002"
#define LDL__PG_NOW "pg_catalog.clock_timestamp()"
#define LDL__PG_HOLDER \
    "snap AS (SELECT l.token FROM " LDL__PG_LT " AS l WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text), " \
    "cur AS (SELECT l.token, l.session FROM " LDL__PG_LT " AS l " \
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text FOR UPDATE), " \
    "seen AS (SELECT h.id FROM " LDL__PG_ST " AS h, cur WHERE h.id OPERATOR(pg_catalog.=) cur.session), " \
    "gone AS (SELECT h.id FROM " LDL__PG_ST " AS h, cur WHERE h.id OPERATOR(pg_catalog.=) cur.session " \
    "AND h.expires_at OPERATOR(pg_catalog.<=) " LDL__PG_NOW " FOR SHARE OF h SKIP LOCKED) "
#define LDL__PG_ROW_FREE \
    "CASE WHEN l.session IS NULL THEN l.expires_at OPERATOR(pg_catalog.<=) " LDL__PG_NOW " " \
    "ELSE EXISTS (SELECT 1 FROM snap, cur WHERE snap.token OPERATOR(pg_catalog.=) cur.token " \
    "AND cur.token OPERATOR(pg_catalog.=) l.token) " \
    "AND (NOT EXISTS (SELECT 1 FROM seen) OR EXISTS (SELECT 1 FROM gone)) END"
#define LDL__PG_ME(ttl, sid) \
    "me AS (UPDATE " LDL__PG_ST " AS s SET expires_at = " LDL__PG_TTL(ttl) " " \
    "WHERE s.id OPERATOR(pg_catalog.=) $" #sid "::pg_catalog.uuid " \
    "AND s.expires_at OPERATOR(pg_catalog.>) " LDL__PG_NOW " RETURNING s.id)"

static const char *const ldl__pg_session_sql[LDL__PG_NSTMT] = {
    /* LDL__PG_ACQ: a per-lock lease ($1 key, $2 ttl); session = NULL on a grant */
    "WITH " LDL__PG_HOLDER
    "INSERT INTO " LDL__PG_LT " AS l (key, token, expires_at) "
    "VALUES ($1::pg_catalog.text, 1::pg_catalog.int8, " LDL__PG_TTL(2) ") "
    "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
    "expires_at = " LDL__PG_TTL(2) ", session = NULL "
    "WHERE " LDL__PG_ROW_FREE " RETURNING l.token",
    /* LDL__PG_REN: today's, and never on a session lock's row */
    "UPDATE " LDL__PG_LT " AS l SET expires_at = " LDL__PG_TTL(3) " "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
    "AND l.session IS NULL "
    "AND l.expires_at OPERATOR(pg_catalog.>) " LDL__PG_NOW " "
    "RETURNING l.token",
    /* LDL__PG_REL ($1 key, $2 token, $3 our session or NULL): a per-lock row
       as today; a session row only of our own session */
    "UPDATE " LDL__PG_LT " AS l SET expires_at = '-infinity'::pg_catalog.timestamptz, session = NULL "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
    "AND CASE WHEN l.session IS NULL "
    "THEN l.expires_at OPERATOR(pg_catalog.>) '-infinity'::pg_catalog.timestamptz "
    "ELSE l.session OPERATOR(pg_catalog.=) $3::pg_catalog.uuid END "
    "RETURNING l.token",
    /* LDL__PG_INS: a session row by its session's expiry; a missing session is free */
    "SELECT l.token, pg_catalog.ceil(pg_catalog.date_part('epoch'::pg_catalog.text, "
    "CASE WHEN l.session IS NULL THEN l.expires_at ELSE s.expires_at END OPERATOR(pg_catalog.-) c.now) "
    "OPERATOR(pg_catalog.*) 1000::pg_catalog.float8)::pg_catalog.int8, "
    "CASE WHEN l.owner_token OPERATOR(pg_catalog.=) l.token THEN l.owner ELSE NULL::pg_catalog.text END "
    "FROM (SELECT " LDL__PG_NOW " AS now) AS c, " LDL__PG_LT " AS l LEFT JOIN " LDL__PG_ST " AS s "
    "ON s.id OPERATOR(pg_catalog.=) l.session "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND CASE WHEN l.session IS NULL THEN l.expires_at OPERATOR(pg_catalog.>) c.now "
    "ELSE COALESCE(s.expires_at OPERATOR(pg_catalog.>) c.now, false) END",
    /* LDL__PG_OWN: the per-lock lease with an owner ($3) */
    "WITH " LDL__PG_HOLDER
    "INSERT INTO " LDL__PG_LT " AS l (key, token, expires_at, owner, owner_token) "
    "VALUES ($1::pg_catalog.text, 1::pg_catalog.int8, " LDL__PG_TTL(2) ", "
    "$3::pg_catalog.text, 1::pg_catalog.int8) "
    "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
    "expires_at = " LDL__PG_TTL(2) ", owner = $3::pg_catalog.text, "
    "owner_token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, session = NULL "
    "WHERE " LDL__PG_ROW_FREE " RETURNING l.token",
    /* LDL__PG_SACQ ($1 key, $2 session, $3 ttl, $4 owner or NULL): extends our
       own session first (its expiry is then after the lock's start), then
       inserts or takes the row; answers (count of me, token): (1, token)
       granted, (1, NULL) held, (0, NULL) our session is gone */
    "WITH " LDL__PG_ME(3, 2) ", " LDL__PG_HOLDER ", "
    "ins AS (INSERT INTO " LDL__PG_LT " AS l (key, token, expires_at, session, owner, owner_token) "
    "SELECT $1::pg_catalog.text, 1::pg_catalog.int8, 'infinity'::pg_catalog.timestamptz, me.id, "
    "$4::pg_catalog.text, 1::pg_catalog.int8 FROM me "
    "ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, "
    "expires_at = 'infinity'::pg_catalog.timestamptz, session = EXCLUDED.session, "
    "owner = EXCLUDED.owner, owner_token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8 "
    "WHERE " LDL__PG_ROW_FREE " RETURNING l.token) "
    "SELECT (SELECT pg_catalog.count(*) FROM me), (SELECT ins.token FROM ins)",
    /* LDL__PG_SREN ($1 key, $2 token, $3 session, $4 ttl): the session's renew,
       answered for this lock only while its row is still ours on this very
       session; answers (count of me, token) */
    "WITH " LDL__PG_ME(4, 3) " "
    "SELECT (SELECT pg_catalog.count(*) FROM me), (SELECT l.token FROM " LDL__PG_LT " AS l, me "
    "WHERE l.key OPERATOR(pg_catalog.=) $1::pg_catalog.text "
    "AND l.token OPERATOR(pg_catalog.=) $2::pg_catalog.int8 "
    "AND l.session OPERATOR(pg_catalog.=) me.id)",
    /* LDL__PG_SOPN ($1 ttl): a new session; the server's uuid, never reused */
    "INSERT INTO " LDL__PG_ST " (id, expires_at) "
    "VALUES (pg_catalog.gen_random_uuid(), " LDL__PG_TTL(1) ") RETURNING id",
    /* LDL__PG_SUPD ($1 session, $2 ttl): one row while the session is unexpired;
       it answers the renews that rode it (the view never replaces its session) */
    "UPDATE " LDL__PG_ST " AS s SET expires_at = " LDL__PG_TTL(2) " "
    "WHERE s.id OPERATOR(pg_catalog.=) $1::pg_catalog.uuid "
    "AND s.expires_at OPERATOR(pg_catalog.>) " LDL__PG_NOW " RETURNING 1::pg_catalog.int8"
};

/* a template with \001 (the lease table) and \002 (the session table) put in;
   0 ok, -1 too long */
static int ldl__pg_expand(const char *tmpl, const char *lt, const char *st, char *buf, size_t cap) {
    size_t at = 0;
    for (; *tmpl; tmpl++) {
        const char *put = *tmpl == '\001' ? lt : *tmpl == '\002' ? st : NULL;
        size_t n = put ? strlen(put) : 1;
        if (at + n >= cap) return -1;
        if (put) memcpy(buf + at, put, n); else buf[at] = *tmpl;
        at += n;
    }
    buf[at] = '\0';
    return 0;
}

/* statement name = "ldl_" + FNV-1a 64 of the SQL text: unique per table and
   per SQL revision, and short enough for the server's 63-byte name limit */
static void ldl__pg_stmt_name(const char *sql, char *out, size_t cap) {
    uint64_t h = 14695981039346656037ULL;
    const unsigned char *s = (const unsigned char *)sql;
    while (*s) { h ^= *s++; h *= 1099511628211ULL; }
    snprintf(out, cap, "ldl_%08lx%08lx",
             (unsigned long)(h >> 32), (unsigned long)(h & 0xffffffffUL));
}

static int ldl__pg_sqlstate_is(const PGresult *r, const char *code) {
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return s && strcmp(s, code) == 0;
}

/* ------------------------------------------------------------ replies */
/* strict decimal in [1, INT64_MAX]: digits only, no sign, no leading zero */
static int ldl__pg_parse_token(const char *s, int64_t *out) {
    int64_t v = 0;
    int i;
    if (!s || s[0] < '1' || s[0] > '9') return -1;
    for (i = 0; s[i] != '\0'; i++) {
        int d = s[i] - '0';
        if (d < 0 || d > 9 || i >= 19) return -1;
        if (v > (INT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* the reply must be one bigint column, 0 or 1 rows; returns the row count
   (0 or 1) and the strictly parsed token, or -1 when malformed */
static int ldl__pg_one_token(ldl_pg *p, const PGresult *r, int64_t *tok) {
    if (PQnfields(r) != 1 || PQftype(r, 0) != LDL__PG_INT8OID || PQfformat(r, 0) != 0) {
        ldl__pg_err(p, "reply", "unexpected columns");
        return -1;
    }
    if (PQntuples(r) == 0) return 0;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        ldl__pg_err(p, "reply", "unexpected rows");
        return -1;
    }
    if (ldl__pg_parse_token(PQgetvalue(r, 0, 0), tok) != 0) {
        ldl__pg_err(p, "reply", "token not a decimal in [1, INT64_MAX]");
        return -1;
    }
    return 1;
}

/* an answer from a tuples result: ACQUIRE 1 (token) / 0; RENEW, RELEASE 1
   when exactly our row changed, 0 when none did; LDL_ESTORE when malformed */
static int ldl__pg_answer(ldl_pg *p, int which, const PGresult *r, int64_t ours, int64_t *tok) {
    int64_t got = 0;
    int n = ldl__pg_one_token(p, r, &got);
    if (n < 0) return LDL_ESTORE;
    if (n == 0) return 0;
    if (which == LDL__PG_ACQ) { *tok = got; return 1; }
    if (got != ours) { ldl__pg_err(p, "reply", "token mismatch"); return LDL_ESTORE; }
    return 1;
}

/* ------------------------------------------------------------ the synchronous store */
/* the connection may carry our statements only when it is up and idle */
static int ldl__pg_usable(ldl_pg *p) {
    if (PQstatus(p->_conn) != CONNECTION_OK) {
        ldl__pg_err(p, "connection", PQerrorMessage(p->_conn));
        return 0;
    }
#ifdef LIBPQ_HAS_PIPELINING
    if (PQpipelineStatus(p->_conn) != PQ_PIPELINE_OFF) {
        ldl__pg_err(p, "connection", "in pipeline mode (it belongs to an ldl_pg_async)");
        return 0;
    }
#endif
    if (PQtransactionStatus(p->_conn) != PQTRANS_IDLE) {
        ldl__pg_err(p, "connection", "not idle (inside a transaction block or busy)");
        return 0;
    }
    return 1;
}

/* 1 when the session's statement `name` has exactly our text, 0 when it is
   another's, -1 on error */
static int ldl__pg_stmt_is_ours(ldl_pg *p, int which) {
    const char *vals[1];
    PGresult *r;
    int out = -1;
    vals[0] = p->_stmt[which];
    r = PQexecParams(p->_conn,
        "SELECT s.statement FROM pg_catalog.pg_prepared_statements s "
        "WHERE s.name OPERATOR(pg_catalog.=) $1::pg_catalog.text", 1, NULL, vals, NULL, NULL, 0);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 1) {
        out = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) &&
              strcmp(PQgetvalue(r, 0, 0), LDL__PG_SQL(p, which)) == 0;
        if (!out) ldl__pg_err(p, "prepare", "a foreign prepared statement holds the adapter's name");
    } else {
        ldl__pg_err_res(p, "prepare", r);
    }
    PQclear(r);
    return out;
}

static int ldl__pg_prepare_one(ldl_pg *p, int i) {
    PGresult *r = PQprepare(p->_conn, p->_stmt[i], LDL__PG_SQL(p, i), 0, NULL);
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    /* 42P05: the session already has one of that name: ours (another
       ldl_pg on the same table) only when its text is exactly ours */
    if (!ok && ldl__pg_sqlstate_is(r, "42P05")) {
        PQclear(r);
        if (ldl__pg_stmt_is_ours(p, i) != 1) return -1;
        p->_prepared |= 1u << i;
        return 0;
    }
    if (!ok) ldl__pg_err_res(p, "prepare", r);
    PQclear(r);
    if (!ok) return -1;
    p->_prepared |= 1u << i;
    return 0;
}

/* the lifecycle's three on a (new) backend; inspect and the owned acquire
   are prepared at their first use (ldl__pg_exec) */
static int ldl__pg_prepare_all(ldl_pg *p) {
    int i;
    p->_prepared = 0;
    for (i = 0; i < 3; i++)
        if (ldl__pg_prepare_one(p, i) != 0) return -1;
    p->_pid = PQbackendPID(p->_conn);
    return 0;
}

/* run one statement; returns a PGRES_TUPLES_OK result or NULL */
static PGresult *ldl__pg_exec(ldl_pg *p, int which, int n, const char *const *vals) {
    int attempt;
    if (!p->_ok) { ldl__pg_err(p, "exec", "ldl_pg not initialised"); return NULL; }
    for (attempt = 0; attempt < 2; attempt++) {
        PGresult *r;
        if (!ldl__pg_usable(p)) return NULL;
        if (p->_flags & LDL_PG_UNNAMED) {
            r = PQexecParams(p->_conn, LDL__PG_SQL(p, which), n, NULL, vals, NULL, NULL, 0);
        } else {
            /* a new backend (PQreset, server restart) has none of our statements */
            if (p->_pid != PQbackendPID(p->_conn) && ldl__pg_prepare_all(p) != 0) return NULL;
            if (!(p->_prepared & (1u << which)) && ldl__pg_prepare_one(p, which) != 0) return NULL;
            r = PQexecPrepared(p->_conn, p->_stmt[which], n, vals, NULL, NULL, 0);
        }
        if (r && PQresultStatus(r) == PGRES_TUPLES_OK) return r;
        ldl__pg_err_res(p, "exec", r);
        /* 26000: statement unknown to this backend (e.g. a reused backend
           pid after a restart, DEALLOCATE ALL): prepare again, once */
        if (attempt == 0 && !(p->_flags & LDL_PG_UNNAMED) && ldl__pg_sqlstate_is(r, "26000")) {
            PQclear(r);
            p->_pid = 0;
            continue;
        }
        PQclear(r);
        return NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------ sessions (decision 0217) */
/* a reply of exactly one row (count bigint, token bigint or NULL): 0 with *me
   (0 or 1) and *tok (0 for NULL), -1 malformed (why set) */
static int ldl__pg_pair(ldl_pg *p, const PGresult *r, int64_t *me, int64_t *tok) {
    *me = 0; *tok = 0;
    if (PQnfields(r) != 2 || PQftype(r, 0) != LDL__PG_INT8OID || PQftype(r, 1) != LDL__PG_INT8OID ||
        PQfformat(r, 0) != 0 || PQfformat(r, 1) != 0 || PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        ldl__pg_err(p, "reply", "unexpected columns or rows");
        return -1;
    }
    if (strcmp(PQgetvalue(r, 0, 0), "0") != 0 &&
        (ldl__pg_parse_token(PQgetvalue(r, 0, 0), me) != 0 || *me != 1)) {
        ldl__pg_err(p, "reply", "session count not 0 or 1");
        return -1;
    }
    if (!PQgetisnull(r, 0, 1) && ldl__pg_parse_token(PQgetvalue(r, 0, 1), tok) != 0) {
        ldl__pg_err(p, "reply", "token not a decimal in [1, INT64_MAX]");
        return -1;
    }
    if (*me == 0 && *tok != 0) {
        ldl__pg_err(p, "reply", "a token without a live session");
        return -1;
    }
    return 0;
}

static PGresult *ldl__pg_exec(ldl_pg *p, int which, int n, const char *const *vals);

/* open a new session row: its id (the server's uuid) into p->_sid; 0, or -1 (why set) */
static int ldl__pg_session_open(ldl_pg *p) {
    char ttl[24];
    const char *vals[1], *v;
    PGresult *r;
    size_t i;
    int ok;
    p->_sid[0] = '\0';
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)p->_sess_ms);
    vals[0] = ttl;
    r = ldl__pg_exec(p, LDL__PG_SOPN, 1, vals);
    if (!r) return -1;
    ok = PQnfields(r) == 1 && PQftype(r, 0) == LDL__PG_UUIDOID && PQfformat(r, 0) == 0 &&
         PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) && strlen(v = PQgetvalue(r, 0, 0)) == 36;
    for (i = 0; ok && i < 36; i++)
        ok = (i == 8 || i == 13 || i == 18 || i == 23) ? v[i] == '-'
           : (v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f');
    if (ok) memcpy(p->_sid, v, 37);
    else ldl__pg_err(p, "reply", "session id not a uuid");
    PQclear(r);
    return ok ? 0 : -1;
}

/* a session lock's grant: one statement that extends our session and takes
   the key; when our session is gone (expired, deleted) a new one is opened
   and the acquire sent once more */
static int ldl__pg_session_grant(ldl_pg *p, const char *key, const char *owner, int64_t *token_out) {
    int attempt;
    for (attempt = 0; attempt < 2; attempt++) {
        char ttl[24];
        const char *vals[4];
        PGresult *r;
        int64_t me = 0, tok = 0;
        int rc;
        if (!p->_sid[0] && ldl__pg_session_open(p) != 0) return LDL_ESTORE;
        snprintf(ttl, sizeof ttl, "%lu", (unsigned long)p->_sess_ms);
        vals[0] = key; vals[1] = p->_sid; vals[2] = ttl; vals[3] = owner;
        r = ldl__pg_exec(p, LDL__PG_SACQ, 4, vals);
        if (!r) return LDL_ESTORE;
        rc = ldl__pg_pair(p, r, &me, &tok);
        PQclear(r);
        if (rc != 0) return LDL_ESTORE;
        if (me == 0) { p->_sid[0] = '\0'; continue; }    /* our session is gone */
        if (tok == 0) return 0;
        *token_out = tok;
        return 1;
    }
    ldl__pg_err(p, "session", "the session opened for this acquire was gone at once (deleted?)");
    return LDL_ESTORE;
}

/* a session lock's renew: the session's UPDATE, answered 1 only while the
   lock's row is still ours on this very session. No row for the session:
   it expired or was deleted, every lock on it is lost, and the next session
   acquire opens a new one */
static int ldl__pg_session_renew(ldl_pg *p, const char *key, int64_t token) {
    char tok[24], ttl[24];
    const char *vals[4];
    PGresult *r;
    int64_t me = 0, got = 0;
    int rc;
    if (!key) return LDL_EINVAL;
    if (token < 1) return 0;
    if (!p->_sid[0]) {
        ldl__pg_err(p, "session", "the session this lock was granted on was lost");
        return 0;
    }
    snprintf(tok, sizeof tok, "%lld", (long long)token);
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)p->_sess_ms);
    vals[0] = key; vals[1] = tok; vals[2] = p->_sid; vals[3] = ttl;
    r = ldl__pg_exec(p, LDL__PG_SREN, 4, vals);
    if (!r) return LDL_ESTORE;
    rc = ldl__pg_pair(p, r, &me, &got);
    PQclear(r);
    if (rc != 0) return LDL_ESTORE;
    if (me == 0) {
        p->_sid[0] = '\0';
        ldl__pg_err(p, "session", "the session expired or was deleted: every lock on it is lost");
        return 0;
    }
    if (got == 0) return 0;
    if (got != token) { ldl__pg_err(p, "reply", "token mismatch"); return LDL_ESTORE; }
    return 1;
}

/* a grant: the plain acquire, or with an owner the owned one (whose owner the
   caller checked); a session lock's when its ttl is the session's */
static int ldl__pg_grant(ldl_pg *p, const char *key, uint32_t ttl_ms, const char *owner,
                         int64_t *token_out) {
    char ttl[24];
    const char *vals[3];
    PGresult *r;
    int64_t tok = 0;
    int rc;
    if (p->_sess_ms != 0 && ttl_ms == p->_sess_ms) return ldl__pg_session_grant(p, key, owner, token_out);
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)ttl_ms);
    vals[0] = key; vals[1] = ttl; vals[2] = owner;
    r = ldl__pg_exec(p, owner ? LDL__PG_OWN : LDL__PG_ACQ, owner ? 3 : 2, vals);
    if (!r) return LDL_ESTORE;
    rc = ldl__pg_answer(p, LDL__PG_ACQ, r, 0, &tok);
    PQclear(r);
    if (rc == 1) *token_out = tok;
    return rc;
}

static int ldl__pg_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out) {
    if (token_out) *token_out = 0;
    if (!ctx || !key || !token_out || ttl_ms == 0) return LDL_EINVAL;
    return ldl__pg_grant((ldl_pg *)ctx, key, ttl_ms, NULL, token_out);
}

static int ldl__pg_update(ldl_pg *p, int which, const char *key, int64_t token, uint32_t ttl_ms) {
    char tok[24], ttl[24];
    const char *vals[3];
    PGresult *r;
    int64_t unused = 0;
    int rc;
    if (!p || !key) return LDL_EINVAL;
    if (token < 1) return 0;        /* no lease ever carried such a token */
    snprintf(tok, sizeof tok, "%lld", (long long)token);
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)ttl_ms);
    vals[0] = key; vals[1] = tok;
    vals[2] = which == LDL__PG_REN ? ttl : p->_sid[0] ? p->_sid : NULL;  /* the session shape's release */
    r = ldl__pg_exec(p, which, which == LDL__PG_REN || p->_session ? 3 : 2, vals);
    if (!r) return LDL_ESTORE;
    rc = ldl__pg_answer(p, which, r, token, &unused);
    PQclear(r);
    return rc;
}

static int ldl__pg_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms) {
    ldl_pg *p = (ldl_pg *)ctx;
    if (ttl_ms == 0) return LDL_EINVAL;
    if (p && p->_sess_ms != 0 && ttl_ms == p->_sess_ms) return ldl__pg_session_renew(p, key, token);
    return ldl__pg_update((ldl_pg *)ctx, LDL__PG_REN, key, token, ttl_ms);
}

static int ldl__pg_release(void *ctx, const char *key, int64_t token) {
    return ldl__pg_update((ldl_pg *)ctx, LDL__PG_REL, key, token, 0);
}

/* ------------------------------------------------------------ holder identity */
/* an owner: 1..LDL_OWNER_MAX-1 bytes of printable ASCII (0x20..0x7E: no
   control, C1 or multi-byte sequence reaches a terminal), as the lock checks
   desc.owner; 0 ok, -1 bad */
static int ldl__pg_owner_ok(const char *o) {
    size_t i;
    for (i = 0; i < LDL_OWNER_MAX && o[i]; i++)
        if ((unsigned char)o[i] < 0x20 || (unsigned char)o[i] > 0x7E) return -1;
    return i >= 1 && i < LDL_OWNER_MAX ? 0 : -1;
}

/* 0 ok, else why is set and the answer is LDL_EINVAL or LDL_EUNSUPPORTED */
static int ldl__pg_owner_check(ldl_pg *p, const char *owner) {
    if (ldl__pg_owner_ok(owner) != 0) {
        ldl__pg_err(p, "owner", "want 1..LDL_OWNER_MAX-1 bytes without control bytes");
        return LDL_EINVAL;
    }
    if (!p->_owner) {
        ldl__pg_err(p, "owner", "the table has no owner column (created before v0.2): "
                    "ALTER TABLE .. ADD COLUMN owner text, ADD COLUMN owner_token bigint (docs/postgres.md)");
        return LDL_EUNSUPPORTED;
    }
    return 0;
}

static int ldl__pg_acquire_owned(void *ctx, const char *key, uint32_t ttl_ms, const char *owner,
                                 int64_t *token_out) {
    ldl_pg *p = (ldl_pg *)ctx;
    int rc;
    if (token_out) *token_out = 0;
    if (!owner) return ldl__pg_acquire(ctx, key, ttl_ms, token_out);
    if (!p || !key || !token_out || ttl_ms == 0) return LDL_EINVAL;
    if ((rc = ldl__pg_owner_check(p, owner)) != 0) return rc;
    return ldl__pg_grant(p, key, ttl_ms, owner, token_out);
}

/* the inspect reply: exactly (token bigint, ms bigint, owner text), 0 or 1
   row; a NULL or malformed token or ms, or an owner that is not a valid
   owner, is malformed (-1): never a made-up holder */
static int ldl__pg_holder(ldl_pg *p, const PGresult *r, ldl_holder *out) {
    const char *ms, *o;
    int64_t tok = 0, left = 0;
    size_t i;
    if (PQnfields(r) != 3 || PQftype(r, 0) != LDL__PG_INT8OID || PQftype(r, 1) != LDL__PG_INT8OID ||
        PQftype(r, 2) != LDL__PG_TEXTOID || PQfformat(r, 0) != 0 || PQfformat(r, 1) != 0 ||
        PQfformat(r, 2) != 0) {
        ldl__pg_err(p, "reply", "unexpected columns");
        return -1;
    }
    if (PQntuples(r) == 0) return 0;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0) || PQgetisnull(r, 0, 1)) {
        ldl__pg_err(p, "reply", "unexpected rows");
        return -1;
    }
    ms = PQgetvalue(r, 0, 1);
    if (ldl__pg_parse_token(PQgetvalue(r, 0, 0), &tok) != 0 || ldl__pg_parse_token(ms, &left) != 0) {
        ldl__pg_err(p, "reply", "token or ms not a decimal in [1, INT64_MAX]");
        return -1;
    }
    o = PQgetisnull(r, 0, 2) ? "" : PQgetvalue(r, 0, 2);
    if (*o && ldl__pg_owner_ok(o) != 0) {
        ldl__pg_err(p, "reply", "owner too long or with control bytes");
        return -1;
    }
    out->token = tok;
    out->ttl_left_ms = left > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)left;
    for (i = 0; o[i]; i++) out->owner[i] = o[i];
    out->owner[i] = '\0';
    return 1;
}

static int ldl__pg_inspect(void *ctx, const char *key, ldl_holder *out) {
    ldl_pg *p = (ldl_pg *)ctx;
    const char *vals[1];
    PGresult *r;
    size_t n;
    int rc;
    if (!p || !key || !out) return LDL_EINVAL;
    n = strlen(key);
    if (n == 0 || n >= LDL_KEY_MAX) return LDL_EINVAL;
    out->token = 0; out->ttl_left_ms = 0; out->owner[0] = '\0';
    vals[0] = key;
    r = ldl__pg_exec(p, LDL__PG_INS, 1, vals);
    if (!r) return LDL_ESTORE;
    rc = ldl__pg_holder(p, r, out);
    PQclear(r);
    if (rc < 0) { out->token = 0; out->ttl_left_ms = 0; out->owner[0] = '\0'; return LDL_ESTORE; }
    return rc;
}

/* ------------------------------------------------------------ init: the table */
/* resolve p->_ident once; writes the qualified name and the table's oid.
   1 found and acceptable, 0 missing, -1 refused or error (why set) */
static int ldl__pg_resolve(ldl_pg *p, char *oid, size_t oidcap) {
    const char *vals[1];
    PGresult *r;
    int out = -1;
    vals[0] = p->_ident;
    r = PQexecParams(p->_conn,
        "SELECT n.nspname::pg_catalog.text, c.relname::pg_catalog.text, c.relkind::pg_catalog.text, "
        "c.relpersistence::pg_catalog.text, (pg_catalog.pg_has_role(c.relowner, 'USAGE'::pg_catalog.text) "
        "OR COALESCE((SELECT r.rolsuper FROM pg_catalog.pg_roles r "
        "WHERE r.oid OPERATOR(pg_catalog.=) c.relowner), false)), "
        "c.relrowsecurity, c.relhasrules, (SELECT pg_catalog.count(*) FROM pg_catalog.pg_trigger t "
        "WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid AND NOT t.tgisinternal), c.oid, "
        "pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text), "
        "pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text) "
        "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
        "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1::pg_catalog.text)",
        1, NULL, vals, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != 11) {
        ldl__pg_err_res(p, "lookup", r);
    } else if (PQntuples(r) == 0) {
        out = 0;
    } else {
        const char *kind = PQgetvalue(r, 0, 2), *pers = PQgetvalue(r, 0, 3);
        char q[LDL__PG_IDENT_MAX];
        size_t at = 0;
        if (strcmp(kind, "r") != 0)
            ldl__pg_err(p, "table", "not an ordinary table (a view, partitioned or foreign table)");
        else if (strcmp(pers, "p") != 0)
            ldl__pg_err(p, "table", "UNLOGGED or TEMP: the fence would not survive a crash");
        else if (strcmp(PQgetvalue(r, 0, 4), "t") != 0) {
            /* name the table, its owner, this role and the fix: one NOLOGIN owner
               role that the lock's login roles are members of (with INHERIT) */
            char buf[LDL__PG_ERR_MAX], tn[LDL__PG_IDENT_MAX], own[140], me[140];
            size_t tat = 0;
            if (ldl__pg_qualify(tn, sizeof tn, &tat, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1)) != 0)
                snprintf(tn, sizeof tn, "%s", "(the table)");
            ldl__pg_printable(own, sizeof own, PQgetvalue(r, 0, 9));
            ldl__pg_printable(me, sizeof me, PQgetvalue(r, 0, 10));
            snprintf(buf, sizeof buf, "%s is owned by a role this role (%s) does not inherit from, %s, "
                     "and %s is not a superuser: %s could rewrite the fence. Fix, as a superuser: "
                     "CREATE ROLE ldl_lock_owner NOLOGIN; GRANT ldl_lock_owner TO %s, %s; "
                     "ALTER TABLE %s OWNER TO ldl_lock_owner (docs/postgres.md, \"Several login roles\")",
                     tn, me, own, me, own, own, me, tn);
            ldl__pg_err(p, "table", buf);
        }
        else if (strcmp(PQgetvalue(r, 0, 5), "f") != 0 || strcmp(PQgetvalue(r, 0, 6), "f") != 0 ||
                 strcmp(PQgetvalue(r, 0, 7), "0") != 0)
            ldl__pg_err(p, "table", "has row level security, rules or triggers");
        else if (ldl__pg_qualify(q, sizeof q, &at, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1)) != 0)
            ldl__pg_err(p, "table", "qualified name too long");
        else {
            memcpy(p->_ident, q, at + 1);
            snprintf(oid, oidcap, "%s", PQgetvalue(r, 0, 8));
            out = 1;
        }
    }
    PQclear(r);
    return out;
}

/* who else may write the table: the first INSERT, UPDATE, DELETE, TRUNCATE or
   TRIGGER grant, table- or column-level (aclexplode of relacl -- acldefault
   when NULL -- and of every live column's attacl), whose grantee is PUBLIC or
   a role that is a member (pg_has_role MEMBER: with or without INHERIT, it
   can SET ROLE) neither of the table's owner nor of the current role. Those
   two and their members are trusted: they can act as the owner or as the
   lock itself. The reply is (grantee text, privilege text, column text), no
   row when none. 0 none, -1 refused or error (why set) */
#define LDL__PG_WRITES "'{INSERT,UPDATE,DELETE,TRUNCATE,TRIGGER}'::pg_catalog.text[]"
static int ldl__pg_grants(ldl_pg *p, const char *oid) {
    const char *vals[1];
    PGresult *r;
    int out = -1;
    vals[0] = oid;
    r = PQexecParams(p->_conn,
        "SELECT CASE WHEN x.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid THEN 'PUBLIC'::pg_catalog.text "
        "ELSE pg_catalog.pg_get_userbyid(x.grantee)::pg_catalog.text END, x.privilege_type, x.col, "
        "CASE WHEN x.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid THEN 'PUBLIC'::pg_catalog.text "
        "ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(x.grantee)::pg_catalog.text) END, "
        "pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text), "
        "pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text), "
        /* a lock role of another host holds all three of the lock's rights */
        "(x.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid "
        "AND pg_catalog.has_table_privilege(x.grantee, c.oid, 'SELECT'::pg_catalog.text) "
        "AND pg_catalog.has_table_privilege(x.grantee, c.oid, 'INSERT'::pg_catalog.text) "
        "AND pg_catalog.has_table_privilege(x.grantee, c.oid, 'UPDATE'::pg_catalog.text))::pg_catalog.text "
        "FROM pg_catalog.pg_class c CROSS JOIN LATERAL ("
        "SELECT e.grantee, e.privilege_type, NULL::pg_catalog.text AS col "
        "FROM pg_catalog.aclexplode(COALESCE(c.relacl, pg_catalog.acldefault('r'::pg_catalog.\"char\", c.relowner))) e "
        "UNION ALL SELECT e.grantee, e.privilege_type, a.attname::pg_catalog.text "
        "FROM pg_catalog.pg_attribute a, pg_catalog.aclexplode(a.attacl) e "
        "WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attnum OPERATOR(pg_catalog.>) 0::pg_catalog.int2 "
        "AND NOT a.attisdropped) x "
        "WHERE c.oid OPERATOR(pg_catalog.=) $1::pg_catalog.oid "
        "AND x.privilege_type OPERATOR(pg_catalog.=) ANY (" LDL__PG_WRITES ") "
        "AND CASE WHEN x.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid THEN true "
        "ELSE NOT (pg_catalog.pg_has_role(x.grantee, c.relowner, 'MEMBER'::pg_catalog.text) "
        "OR pg_catalog.pg_has_role(x.grantee, CURRENT_USER, 'MEMBER'::pg_catalog.text)) END "
        "LIMIT 1", 1, NULL, vals, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
        ldl__pg_err_res(p, "lookup", r);
    } else if (PQnfields(r) != 7 || PQntuples(r) > 1 || PQftype(r, 0) != LDL__PG_TEXTOID ||
               PQftype(r, 1) != LDL__PG_TEXTOID || PQftype(r, 2) != LDL__PG_TEXTOID ||
               PQfformat(r, 0) != 0 || PQfformat(r, 1) != 0 || PQfformat(r, 2) != 0 ||
               (PQntuples(r) == 1 && (PQgetisnull(r, 0, 0) || PQgetisnull(r, 0, 1) ||
                PQgetisnull(r, 0, 3) || PQgetisnull(r, 0, 4) || PQgetisnull(r, 0, 5) ||
                PQgetisnull(r, 0, 6)))) {
        ldl__pg_err(p, "lookup", "grants: unexpected reply");
    } else if (PQntuples(r) == 0) {
        out = 0;
    } else {
        /* the why names the grantee, the right, the table, its owner and this
           role, and the statements that fix it: a lock role of another host
           (it holds SELECT, INSERT and UPDATE) joins one NOLOGIN owner role with
           this one -- never "REVOKE", which would break that host's job; any
           other grantee loses the right */
        char who[64], qwho[140], own[140], me[140], c63[64], buf[LDL__PG_ERR_MAX];
        const char *col = PQgetisnull(r, 0, 2) ? NULL : PQgetvalue(r, 0, 2);
        const char *priv = PQgetvalue(r, 0, 1);
        ldl__pg_printable(who, sizeof who, PQgetvalue(r, 0, 0));
        ldl__pg_printable(qwho, sizeof qwho, PQgetvalue(r, 0, 3));
        ldl__pg_printable(own, sizeof own, PQgetvalue(r, 0, 4));
        ldl__pg_printable(me, sizeof me, PQgetvalue(r, 0, 5));
        ldl__pg_printable(c63, sizeof c63, col ? col : "");
        if (!strcmp(PQgetvalue(r, 0, 6), "true"))
            snprintf(buf, sizeof buf, "%s holds %.16s%s%s%s and is a member neither of %s's owner (%s) "
                     "nor of this role (%s): it could rewrite the fence. Fix, as a superuser (%s holds "
                     "SELECT, INSERT and UPDATE, so it is taken for the lock role of another host): "
                     "CREATE ROLE ldl_lock_owner NOLOGIN; "
                     "GRANT ldl_lock_owner TO %s, %s; ALTER TABLE %s OWNER TO ldl_lock_owner "
                     "(docs/postgres.md, \"Several login roles\")",
                     who, priv, col ? " (column " : "", c63, col ? ")" : "", p->_ident, own, me,
                     qwho, qwho, me, p->_ident);
        else
            snprintf(buf, sizeof buf, "%s holds %.16s%s%s%s and is a member neither of %s's owner (%s) "
                     "nor of this role (%s): it could rewrite the fence. Fix, as a superuser or a "
                     "member of %s: REVOKE %.16s%s%s%s ON %s FROM %s",
                     who, priv, col ? " (column " : "", c63, col ? ")" : "", p->_ident, own, me,
                     own, priv, col ? " (" : "", col ? c63 : "", col ? ")" : "", p->_ident, qwho);
        ldl__pg_err(p, "table", buf);
    }
    PQclear(r);
    return out;
}

/* one column a table check accepts: its name, format_type and what it must be */
#define LDL__PG_DET  1      /* a deterministic collation */
#define LDL__PG_NN   2      /* NOT NULL */
#define LDL__PG_NULL 3      /* nullable */
typedef struct ldl__pg_col { const char *name, *type; int must; } ldl__pg_col;

/* the table's live columns, each held to the one of want[] of its name and
   type (bit i of *seen for want[i]); returns -1 (the lookup failed, why
   set), 0 (a column none of want[] accepts), else how many columns */
static int ldl__pg_columns(ldl_pg *p, const char *oid, const ldl__pg_col *want, int nwant, int *seen) {
    const char *vals[1];
    PGresult *r;
    int i, j, ok = 1, n;
    vals[0] = oid;
    *seen = 0;
    r = PQexecParams(p->_conn,
        "SELECT a.attname::pg_catalog.text, pg_catalog.format_type(a.atttypid, a.atttypmod), "
        "a.attnotnull, COALESCE((SELECT co.collisdeterministic FROM pg_catalog.pg_collation co "
        "WHERE co.oid OPERATOR(pg_catalog.=) a.attcollation), true) "
        "FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) $1::pg_catalog.oid "
        "AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped", 1, NULL, vals, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != 4) {
        ldl__pg_err_res(p, "lookup", r);
        PQclear(r);
        return -1;
    }
    n = PQntuples(r);
    for (i = 0; i < n; i++) {
        const char *cn = PQgetvalue(r, i, 0), *t = PQgetvalue(r, i, 1);
        int nn = strcmp(PQgetvalue(r, i, 2), "t") == 0, det = strcmp(PQgetvalue(r, i, 3), "t") == 0;
        for (j = 0; j < nwant; j++) {
            if (strcmp(cn, want[j].name) != 0 || strcmp(t, want[j].type) != 0) continue;
            if (want[j].must == LDL__PG_DET ? det : want[j].must == LDL__PG_NN ? nn : !nn) break;
        }
        if (j < nwant) *seen |= 1 << j;
        else ok = 0;
    }
    PQclear(r);
    return ok ? n : 0;
}

/* the table's constraints: one PRIMARY KEY whose definition is pk, else
   only CHECK and NOT NULL ones; returns -1 (the lookup failed, why set),
   0 (not so), 1 */
static int ldl__pg_keys(ldl_pg *p, const char *oid, const char *pk) {
    const char *vals[1];
    PGresult *r;
    int i, ok = 1, pks = 0;
    vals[0] = oid;
    r = PQexecParams(p->_conn,
        "SELECT co.contype::pg_catalog.text, pg_catalog.pg_get_constraintdef(co.oid) "
        "FROM pg_catalog.pg_constraint co WHERE co.conrelid OPERATOR(pg_catalog.=) $1::pg_catalog.oid",
        1, NULL, vals, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != 2) {
        ldl__pg_err_res(p, "lookup", r);
        PQclear(r);
        return -1;
    }
    for (i = 0; i < PQntuples(r); i++) {
        const char *k = PQgetvalue(r, i, 0);
        if (strcmp(k, "p") == 0 && strcmp(PQgetvalue(r, i, 1), pk) == 0) pks++;
        else if (strcmp(k, "c") != 0 && strcmp(k, "n") != 0) ok = 0;
    }
    PQclear(r);
    return ok && pks == 1;
}

/* columns exactly the adapter's -- the v0.1 three, or those and the two
   nullable owner columns (v0.2), or those five and the nullable session
   column (the session shape, decision 0217) -- primary key (key), no
   foreign constraint kinds; sets p->_owner and p->_session */
static int ldl__pg_shape(ldl_pg *p, const char *oid) {
    static const ldl__pg_col want[6] = {
        { "key", "text", LDL__PG_DET }, { "token", "bigint", LDL__PG_NN },
        { "expires_at", "timestamp with time zone", LDL__PG_NN },
        { "owner", "text", LDL__PG_NULL }, { "owner_token", "bigint", LDL__PG_NULL },
        { "session", "uuid", LDL__PG_NULL }
    };
    int seen, n = ldl__pg_columns(p, oid, want, 6, &seen), k;
    if (n < 0) return -1;
    if (!((n == 3 && seen == 7) || (n == 5 && seen == 31) || (n == 6 && seen == 63))) {
        ldl__pg_err(p, "table", "columns are not exactly key text, token bigint NOT NULL, "
                    "expires_at timestamptz NOT NULL (deterministic key collation), and "
                    "optionally both owner text and owner_token bigint (nullable), and "
                    "then optionally session uuid (nullable)");
        return -1;
    }
    p->_owner = seen == 31 || seen == 63;
    p->_session = seen == 63;
    k = ldl__pg_keys(p, oid, "PRIMARY KEY (key)");
    if (k < 0) return -1;
    if (!k) {
        ldl__pg_err(p, "table", "keys are not the adapter's: want PRIMARY KEY (key) and no "
                    "UNIQUE, FOREIGN KEY or EXCLUDE constraint");
        return -1;
    }
    return 0;
}

/* resolve p->_ident into oid, creating the table (cols: the CREATE TABLE
   body) when missing; two processes racing on CREATE may see a unique
   violation (23505), duplicate table (42P07) or, when the loser's catalog
   check sees the winner's row type first, duplicate object (42710, "type
   ... already exists"): look again. (Not IF NOT EXISTS: its NOTICE would
   reach the caller's notice processor, and it races the same way.)
   0, or -1 (why set; nocreate is the why when three tries found nothing) */
static int ldl__pg_create(ldl_pg *p, const char *cols, char *oid, size_t oidcap, const char *nocreate) {
    char sql[LDL__PG_SQL_MAX];
    int i, found = 0;
    for (i = 0; i < 3; i++) {
        PGresult *r;
        int ok;
        found = ldl__pg_resolve(p, oid, oidcap);
        if (found != 0) break;
        snprintf(sql, sizeof sql, "CREATE TABLE %s (%s)", p->_ident, cols);
        r = PQexec(p->_conn, sql);
        ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok) ldl__pg_err_res(p, "create", r);
        if (!ok && !ldl__pg_sqlstate_is(r, "23505") && !ldl__pg_sqlstate_is(r, "42P07")
            && !ldl__pg_sqlstate_is(r, "42710")) {
            PQclear(r);
            return -1;
        }
        PQclear(r);
    }
    if (found != 1) {
        if (found == 0) ldl__pg_err(p, "init", nocreate);
        return -1;
    }
    return 0;
}

static int ldl__pg_fence_init(ldl_pg *p);    /* the fenced-write protocol (below) */

/* the session table "<schema>"."<table>_session" (decision 0217): exactly
   id uuid (the primary key) and expires_at timestamptz NOT NULL, created
   when missing, resolved once into p->_sident, and held to every check of
   the lease table (owner, foreign writers, UNLOGGED/TEMP, views, keys,
   triggers, rules, row level security). p->_ident is the resolved lease
   table. 0 ok, LDL_EINVAL (the name too long) or LDL_ESTORE (why set) */
static int ldl__pg_session_table(ldl_pg *p) {
    static const ldl__pg_col want[2] = {
        { "id", "uuid", LDL__PG_NN }, { "expires_at", "timestamp with time zone", LDL__PG_NN }
    };
    char lease[LDL__PG_IDENT_MAX], oid[24];
    size_t n = strlen(p->_ident), rel;
    const char *dot = strstr(p->_ident, "\".\"");
    int seen, cols, k, rc = LDL_ESTORE;
    rel = dot ? n - (size_t)(dot + 3 - p->_ident) - 1 : n - 2;   /* the table name's bytes */
    if (rel + 8 > 63 || n + 9 > sizeof p->_ident) {
        ldl__pg_err(p, "session", "the table name must be at most 55 bytes "
                    "(the session table's name is it + \"_session\")");
        return LDL_EINVAL;
    }
    memcpy(lease, p->_ident, n + 1);
    memcpy(p->_ident + n - 1, "_session\"", 10);
    if (ldl__pg_create(p, "id pg_catalog.uuid PRIMARY KEY, expires_at pg_catalog.timestamptz NOT NULL",
                       oid, sizeof oid, "session table could not be created") != 0)
        goto out;
    cols = ldl__pg_columns(p, oid, want, 2, &seen);
    if (cols < 0) goto out;
    if (cols != 2 || seen != 3) {
        ldl__pg_err(p, "session table", "columns are not exactly id uuid and expires_at "
                    "timestamptz NOT NULL");
        goto out;
    }
    k = ldl__pg_keys(p, oid, "PRIMARY KEY (id)");
    if (k < 0) goto out;
    if (!k) {
        ldl__pg_err(p, "session table", "keys are not the adapter's: want PRIMARY KEY (id) and no "
                    "UNIQUE, FOREIGN KEY or EXCLUDE constraint");
        goto out;
    }
    if (ldl__pg_grants(p, oid) != 0) goto out;
    memcpy(p->_sident, p->_ident, strlen(p->_ident) + 1);
    rc = 0;
out:
    memcpy(p->_ident, lease, n + 1);
    return rc;
}

LDL_PG_API int ldl_pg_init_ex(ldl_pg *p, PGconn *conn, const char *table, unsigned flags) {
    char oid[24];
    size_t at;
    int i;
    if (!p) return LDL_EINVAL;
    memset(p, 0, sizeof *p);
    if (!table) table = "ldl_lease";
    if (ldl__pg_quote(table, p->_ident, sizeof p->_ident) != 0) {
        ldl__pg_err(p, "init", "bad table name (want [A-Za-z_][A-Za-z0-9_]{0,62}, optionally schema.name)");
        return LDL_EINVAL;
    }
    if (!conn) { ldl__pg_err(p, "init", "NULL connection"); return LDL_EINVAL; }
    if (flags & ~(LDL_PG_UNNAMED | LDL_PG_FENCE)) { ldl__pg_err(p, "init", "unknown flags"); return LDL_EINVAL; }
    p->_conn = conn;
    p->_flags = flags;
    if (!ldl__pg_usable(p)) return LDL_ESTORE;
    if (flags & LDL_PG_FENCE) return ldl__pg_fence_init(p);   /* the fenced-write protocol */
    if (ldl__pg_create(p, "key pg_catalog.text PRIMARY KEY, "
            "token pg_catalog.int8 NOT NULL CHECK (token OPERATOR(pg_catalog.>=) 1::pg_catalog.int8), "
            "expires_at pg_catalog.timestamptz NOT NULL, owner pg_catalog.text, "
            "owner_token pg_catalog.int8", oid, sizeof oid, "table could not be created") != 0)
        return LDL_ESTORE;
    if (ldl__pg_shape(p, oid) != 0 || ldl__pg_grants(p, oid) != 0) return LDL_ESTORE;
    /* the session shape: every statement reads the session table */
    if (p->_session && (i = ldl__pg_session_table(p)) != 0) return i;
    p->_nstmt = p->_session ? LDL__PG_NSTMT : p->_owner ? 5 : 4;
    for (i = 0, at = 0; i < p->_nstmt; i++) {
        char *buf = p->_text + at;
        size_t cap = sizeof p->_text - at;
        if (p->_session ? ldl__pg_expand(ldl__pg_session_sql[i], p->_ident, p->_sident, buf, cap) != 0
                        : ldl__pg_sql(p->_ident, i, p->_owner, buf, cap) != 0) {
            ldl__pg_err(p, "init", "statement text too long");
            return LDL_ESTORE;
        }
        p->_off[i] = (unsigned short)at;
        at += strlen(buf) + 1;
        ldl__pg_stmt_name(buf, p->_stmt[i], sizeof p->_stmt[i]);
    }
    if (!(flags & LDL_PG_UNNAMED) && ldl__pg_prepare_all(p) != 0) return LDL_ESTORE;
    p->_err[0] = '\0';
    p->_ok = 1;
    return LDL_OK;
}

LDL_PG_API int ldl_pg_init(ldl_pg *p, PGconn *conn, const char *table) {
    return ldl_pg_init_ex(p, conn, table, 0);
}

/* sessions (decision 0217): the table must have the session shape; the
   session table is checked again (or created), then a session row opened */
LDL_PG_API int ldl_pg_session(ldl_pg *p, uint32_t session_ms) {
    uint32_t was;
    int rc;
    if (!p) return LDL_EINVAL;
    if (!p->_ok) {
        ldl__pg_err(p, "session", "ldl_pg not initialised for leases (ldl_pg_init first; not LDL_PG_FENCE)");
        return LDL_EINVAL;
    }
    if (session_ms == 0 || session_ms > 0x7FFFFFFFu) {
        ldl__pg_err(p, "session", "want session_ms in [1, 2^31-1]");
        return LDL_EINVAL;
    }
    if (p->_sess_ms != 0 && p->_sess_ms != session_ms) {
        ldl__pg_err(p, "session", "already in a session with another session_ms (its locks' renews "
                    "would go astray)");
        return LDL_EINVAL;
    }
    if (!p->_session) {
        ldl__pg_err(p, "session", "the table has no session column: ALTER TABLE .. ADD COLUMN "
                    "session uuid (after the owner columns; docs/postgres.md \"Sessions\"), then init again");
        return LDL_EUNSUPPORTED;
    }
    if (!ldl__pg_usable(p)) return LDL_ESTORE;
    if ((rc = ldl__pg_session_table(p)) != 0) return rc;
    was = p->_sess_ms;
    p->_sess_ms = session_ms;
    if (!p->_sid[0] && ldl__pg_session_open(p) != 0) { p->_sess_ms = was; return LDL_ESTORE; }
    p->_err[0] = '\0';
    return LDL_OK;
}

LDL_PG_API ldl_store ldl_pg_store(ldl_pg *p) {
    ldl_store s;
    memset(&s, 0, sizeof s);
    if (!p) return s;
    s.acquire = ldl__pg_acquire;
    s.renew = ldl__pg_renew;
    s.release = ldl__pg_release;
    s.ctx = p;
    return s;
}

/* inspect for any initialised table; acquire_owned only when the table has
   the owner column (so a lock with desc.owner over an older table fails at
   ldl_lock_init instead of at every acquire) */
LDL_PG_API ldl_store_ext ldl_pg_ext(ldl_pg *p) {
    ldl_store_ext x;
    memset(&x, 0, sizeof x);
    if (!p || !p->_ok) return x;
    x.acquire_owned = p->_owner ? ldl__pg_acquire_owned : NULL;
    x.inspect = ldl__pg_inspect;
    x.ctx = p;
    return x;
}

#ifndef LDL_NO_ASYNC
/* ------------------------------------------------------------ the non-blocking view */
static void ldl__pg_push(ldl_pg_req **head, ldl_pg_req **tail, ldl_pg_req *r) {
    r->_next = NULL;
    if (*tail) (*tail)->_next = r; else *head = r;
    *tail = r;
}

static ldl_pg_req *ldl__pg_pop(ldl_pg_req **head, ldl_pg_req **tail) {
    ldl_pg_req *r = *head;
    if (r) { *head = r->_next; if (!*head) *tail = NULL; r->_next = NULL; }
    return r;
}

static void ldl__pg_free(ldl_pg_async *pa, ldl_pg_req *r) {
    if (r == &pa->_prep) return;
    if (r->_phase != LDL__PG_FREE) pa->_stats.live--;
    r->_op = NULL;
    r->_phase = LDL__PG_FREE;
    r->_next = pa->_free;
    pa->_free = r;
}

/* answer a list of session renews (ops linked through store_data); answers how many */
static int ldl__pg_s_complete(ldl_op *head, int rc) {
    int n = 0;
    while (head) {
        ldl_op *next = (ldl_op *)head->store_data;
        head->store_data = 0;
        ldl_op_complete(head, rc, 0);
        head = next;
        n++;
    }
    return n;
}

/* complete every live request with LDL_ESTORE; answers how many */
static int ldl__pg_fail_all(ldl_pg_async *pa) {
    int n = 0, q;
    for (q = 0; q < 2; q++) {
        ldl_pg_req *r;
        while ((r = q == 0 ? ldl__pg_pop(&pa->_ahead, &pa->_atail)
                           : ldl__pg_pop(&pa->_qhead, &pa->_qtail)) != NULL) {
            ldl_op *op = r->_op;
            if (r != &pa->_prep) pa->_stats.failed++;
            ldl__pg_free(pa, r);
            if (op) { ldl_op_complete(op, LDL_ESTORE, 0); n++; }
        }
    }
    n += ldl__pg_s_complete(pa->_s_ride, LDL_ESTORE) + ldl__pg_s_complete(pa->_s_wait, LDL_ESTORE);
    pa->_s_ride = pa->_s_wait = NULL;
    pa->_s_upd = NULL;
    if (!pa->_dead) pa->_stats.link_failures++;
    pa->_dead = 1;
    pa->_flush = 0;
    pa->_gone = 0;
    return n;
}

static int ldl__pg_link_failed(ldl_pg_async *pa, const char *what) {
    ldl_pg *p = pa->_pg;
    if (what) ldl__pg_err(p, what, PQerrorMessage(p->_conn));
    ldl__pg_fail_all(pa);
    return LDL_ESTORE;
}

static int ldl__pg_submit(ldl_pg_async *pa, ldl_op *op, int kind, const char *key,
                          int64_t token, uint32_t ttl_ms, const char *owner) {
    ldl_pg_req *r;
    size_t n, m = 0;
    if (!pa || !op || !key || !pa->_pg) return LDL_EINVAL;
    if (owner) {
        int rc = ldl__pg_owner_check(pa->_pg, owner);
        if (rc != 0) return rc;
        m = strlen(owner);
    }
    if ((kind != LDL_OP_RELEASE && ttl_ms == 0)) return LDL_EINVAL;
    n = strlen(key);
    if (n >= LDL_KEY_MAX) return LDL_EINVAL;
    if (pa->_dead) { ldl__pg_err(pa->_pg, "submit", "the link failed: rebind"); return LDL_ESTORE; }
    if (kind != LDL_OP_ACQUIRE && token < 1) {    /* no lease ever carried such a token */
        op->store_data = 0;
        ldl_op_complete(op, 0, 0);
        return LDL_OK;
    }
    if (pa->_pg->_sess_ms != 0 && ttl_ms == pa->_pg->_sess_ms) {
        if (kind == LDL_OP_RENEW) {
            /* a session lock's renew (decision 0217 section 4, 1013 rule 1): no request of
               its own; it waits for the next session UPDATE the pump SENDS, so an UPDATE
               sent before this submit -- even one still in flight -- never answers it */
            pa->_stats.session_renews++;
            if (pa->_s_lost) {
                ldl__pg_err(pa->_pg, "renew", "the session was lost: every lock on it is lost");
                op->store_data = 0;
                ldl_op_complete(op, 0, 0);
                return LDL_OK;
            }
            op->store_data = (uintptr_t)pa->_s_wait;
            pa->_s_wait = op;
            return LDL_OK;
        }
        if (pa->_s_lost) {
            ldl__pg_err(pa->_pg, "submit", "the session was lost and this view never opens another "
                        "(a lock of the old one could not be told apart): a new ldl_pg, "
                        "ldl_pg_session, then the view");
            return LDL_ESTORE;
        }
    }
    r = pa->_free;
    if (!r) {
        pa->_stats.refused_full++;
        ldl__pg_err(pa->_pg, "submit", "no free ldl_pg_req");
        return LDL_ENOSPC;
    }
    pa->_free = r->_next;
    pa->_stats.submitted++;
    if (++pa->_stats.live > pa->_stats.max_live) pa->_stats.max_live = pa->_stats.live;
    r->_op = op;
    r->_kind = kind;
    r->_phase = LDL__PG_QUEUED;
    r->_rc = LDL_ESTORE;
    r->_token = token;
    r->_ttl = ttl_ms;
    r->_sess = kind == LDL_OP_ACQUIRE && pa->_pg->_sess_ms != 0 && ttl_ms == pa->_pg->_sess_ms;
    memcpy(r->_key, key, n + 1);
    if (owner) memcpy(r->_owner, owner, m + 1); else r->_owner[0] = '\0';
    op->store_data = (uintptr_t)r;
    ldl__pg_push(&pa->_qhead, &pa->_qtail, r);
    return LDL_OK;
}

static int ldl__pg_a_acquire(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms) {
    return ldl__pg_submit((ldl_pg_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, NULL);
}

static int ldl__pg_a_acquire_owned(void *ctx, ldl_op *op, const char *key, uint32_t ttl_ms,
                                   const char *owner) {
    return ldl__pg_submit((ldl_pg_async *)ctx, op, LDL_OP_ACQUIRE, key, 0, ttl_ms, owner);
}

static int ldl__pg_a_renew(void *ctx, ldl_op *op, const char *key, int64_t token, uint32_t ttl_ms) {
    return ldl__pg_submit((ldl_pg_async *)ctx, op, LDL_OP_RENEW, key, token, ttl_ms, NULL);
}

static int ldl__pg_a_release(void *ctx, ldl_op *op, const char *key, int64_t token) {
    return ldl__pg_submit((ldl_pg_async *)ctx, op, LDL_OP_RELEASE, key, token, 0, NULL);
}

static void ldl__pg_a_cancel(void *ctx, ldl_op *op) {
    ldl_pg_async *pa = (ldl_pg_async *)ctx;
    ldl_pg_req *r;
    int k;
    if (!pa || !op) return;
    for (k = 0; k < 2; k++) {               /* a waiting or riding session renew: unlinked */
        ldl_op *prev = NULL, *cur = k ? pa->_s_ride : pa->_s_wait;
        while (cur && cur != op) { prev = cur; cur = (ldl_op *)cur->store_data; }
        if (cur) {
            ldl_op *next = (ldl_op *)cur->store_data;
            if (prev) prev->store_data = (uintptr_t)next;
            else if (k) pa->_s_ride = next;
            else pa->_s_wait = next;
            cur->store_data = 0;
            return;
        }
    }
    if (!op->store_data) return;
    r = (ldl_pg_req *)op->store_data;
    /* only a request of ours that still answers to this op */
    if (r < pa->_reqs || r >= pa->_reqs + pa->_nreqs || r->_op != op) return;
    r->_op = NULL;              /* detached; the pump drops or finishes it */
}

LDL_PG_API int ldl_pg_async_init(ldl_pg_async *pa, ldl_pg *pg, ldl_pg_req *reqs, size_t nreqs) {
    size_t i;
    if (!pa) return LDL_EINVAL;
    memset(pa, 0, sizeof *pa);
    pa->_dead = 1;
    if (!pg || !reqs || nreqs == 0) {
        pa->_why = "async init: want an ldl_pg, request storage and nreqs >= 1";
        return LDL_EINVAL;
    }
    if (!pg->_ok) {
        pa->_why = "async init: ldl_pg not initialised (ldl_pg_init first)";
        return LDL_EINVAL;
    }
    pa->_pg = pg;
    pa->_reqs = reqs;
    pa->_nreqs = nreqs;
    memset(reqs, 0, nreqs * sizeof *reqs);
    for (i = nreqs; i-- > 0;) ldl__pg_free(pa, &reqs[i]);
    pa->_prep._kind = LDL__PG_PREP;
    return ldl_pg_async_rebind(pa, pg->_conn);
}

LDL_PG_API int ldl_pg_async_rebind(ldl_pg_async *pa, PGconn *conn) {
    ldl_pg *p;
    if (!pa || !pa->_pg || !conn) return LDL_EINVAL;
    p = pa->_pg;
    if (p->_sess_ms != 0 && !p->_sid[0] && !pa->_s_lost) {
        ldl__pg_err(p, "async", "the session was lost: ldl_pg_session again before attaching");
        return LDL_ESTORE;
    }
    if (!pa->_dead) ldl__pg_fail_all(pa);       /* nothing may straddle two links */
    p->_conn = conn;
    if (PQstatus(conn) != CONNECTION_OK) {
        ldl__pg_err(p, "async", PQerrorMessage(conn));
        return LDL_ESTORE;
    }
    if (PQtransactionStatus(conn) != PQTRANS_IDLE || PQpipelineStatus(conn) != PQ_PIPELINE_OFF) {
        ldl__pg_err(p, "async", "connection not idle (transaction, pipeline or a query in progress)");
        return LDL_ESTORE;
    }
    if (PQsetnonblocking(conn, 1) != 0 || PQenterPipelineMode(conn) != 1) {
        ldl__pg_err(p, "async", PQerrorMessage(conn));
        return LDL_ESTORE;
    }
    /* named statements: prepared in the pipeline ahead of the first request
       unless this very backend already has them from ldl_pg_init */
    pa->_need_prep = 0;
    if (!(p->_flags & LDL_PG_UNNAMED)) {
        unsigned have = p->_pid == PQbackendPID(conn) ? p->_prepared : 0u;
        unsigned want = 7u | (p->_owner ? 1u << LDL__PG_OWN : 0u) |
                        (p->_sess_ms ? 1u << LDL__PG_SACQ | 1u << LDL__PG_SUPD : 0u);
        pa->_need_prep = want & ~have;
    }
    p->_pid = 0;                /* the synchronous path must never trust this backend */
    pa->_dead = 0;
    pa->_flush = 0;
    pa->_gone = 0;
    return LDL_OK;
}

LDL_PG_API ldl_async_store ldl_pg_async_store(ldl_pg_async *pa) {
    ldl_async_store s;
    memset(&s, 0, sizeof s);
    if (!pa) return s;
    s.acquire = ldl__pg_a_acquire;
    s.renew = ldl__pg_a_renew;
    s.release = ldl__pg_a_release;
    s.cancel = ldl__pg_a_cancel;
    s.ctx = pa;
    return s;
}

/* submit_owned when the table has the owner column; inspect is synchronous
   (ldl_pg_ext of another ldl_pg on another connection): not in this view */
LDL_PG_API ldl_store_ext ldl_pg_async_ext(ldl_pg_async *pa) {
    ldl_store_ext x;
    memset(&x, 0, sizeof x);
    if (!pa || !pa->_pg || !pa->_pg->_ok) return x;
    x.submit_owned = pa->_pg->_owner ? ldl__pg_a_acquire_owned : NULL;
    x.ctx = pa;
    return x;
}

LDL_PG_API int ldl_pg_async_drop(ldl_pg_async *pa) {
    if (!pa || !pa->_pg) return 0;
    if (pa->_pg->_err[0] == '\0') ldl__pg_err(pa->_pg, "async", "connection dropped by the caller");
    return ldl__pg_fail_all(pa);
}

LDL_PG_API const char *ldl_pg_async_why(const ldl_pg_async *pa) {
    if (!pa) return "ldl_pg_async: NULL";
    if (!pa->_pg) return pa->_why ? pa->_why : "ldl_pg_async: not initialised";
    return pa->_pg->_err;
}

LDL_PG_API const ldl_pg_stats *ldl_pg_async_stats(const ldl_pg_async *pa) {
    return pa ? &pa->_stats : NULL;
}

LDL_PG_API int ldl_pg_async_fd(const ldl_pg_async *pa, int *events) {
    int ev = 0;
    if (events) *events = 0;
    if (!pa || !pa->_pg || pa->_dead || !pa->_pg->_conn) return -1;
    if (pa->_ahead) ev |= LDL_WANT_READ;
    if (pa->_qhead || pa->_flush || (pa->_s_wait && !pa->_s_upd && !pa->_s_lost)) ev |= LDL_WANT_WRITE;
    if (events) *events = ev;
    return PQsocket(pa->_pg->_conn);
}

/* one request into libpq's buffer: its statement and its own Sync */
static int ldl__pg_send_one(ldl_pg_async *pa, ldl_pg_req *r) {
    ldl_pg *p = pa->_pg;
    char tok[24], ttl[24];
    const char *vals[4];
    int which = r->_kind == LDL__PG_SKIND ? LDL__PG_SUPD
              : r->_kind == LDL_OP_ACQUIRE ? (r->_sess ? LDL__PG_SACQ : r->_owner[0] ? LDL__PG_OWN : LDL__PG_ACQ)
              : r->_kind == LDL_OP_RENEW ? LDL__PG_REN : LDL__PG_REL;
    int n = 2, ok;
    vals[0] = r->_key;
    if (which == LDL__PG_SUPD || which == LDL__PG_SACQ) {
        snprintf(ttl, sizeof ttl, "%lu", (unsigned long)p->_sess_ms);
        if (which == LDL__PG_SUPD) { vals[0] = p->_sid; vals[1] = ttl; }
        else { vals[1] = p->_sid; vals[2] = ttl; vals[3] = r->_owner[0] ? r->_owner : NULL; n = 4; }
    } else if (which == LDL__PG_ACQ || which == LDL__PG_OWN) {
        snprintf(ttl, sizeof ttl, "%lu", (unsigned long)r->_ttl);
        vals[1] = ttl;
        if (which == LDL__PG_OWN) { vals[2] = r->_owner; n = 3; }
    } else {
        snprintf(tok, sizeof tok, "%lld", (long long)r->_token);
        vals[1] = tok;
        if (which == LDL__PG_REN) {
            snprintf(ttl, sizeof ttl, "%lu", (unsigned long)r->_ttl);
            vals[2] = ttl;
            n = 3;
        } else if (p->_session) {               /* the session shape's release: our session's rows */
            vals[2] = p->_sid[0] ? p->_sid : NULL;
            n = 3;
        }
    }
    if (p->_flags & LDL_PG_UNNAMED)
        ok = PQsendQueryParams(p->_conn, LDL__PG_SQL(p, which), n, NULL, vals, NULL, NULL, 0);
    else
        ok = PQsendQueryPrepared(p->_conn, p->_stmt[which], n, vals, NULL, NULL, 0);
    return ok == 1 && PQpipelineSync(p->_conn) == 1 ? 0 : -1;
}

static void ldl__pg_cork(PGconn *c, int on) {
#if defined(__linux__) && defined(TCP_CORK)
    int fd = PQsocket(c);
    if (fd >= 0) (void)setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);  /* not TCP: ignored */
#else
    (void)c; (void)on;
#endif
}

static int ldl__pg_send(ldl_pg_async *pa) {
    ldl_pg *p = pa->_pg;
    int sent = 0, corked = 0, rc = 0;
    if (pa->_s_wait && !pa->_s_upd && !pa->_s_lost) {
        /* session renews wait and no session UPDATE is in flight: one goes FIRST in this
           burst, and what waits now rides it (later renews wait for the next) */
        ldl_pg_req *u = pa->_free;
        if (!u) {
            pa->_stats.refused_full++;
        } else {
            pa->_free = u->_next;
            pa->_stats.submitted++;
            pa->_stats.session_updates++;
            if (++pa->_stats.live > pa->_stats.max_live) pa->_stats.max_live = pa->_stats.live;
            u->_op = NULL;
            u->_kind = LDL__PG_SKIND;
            u->_sess = 1;
            u->_phase = LDL__PG_QUEUED;
            u->_rc = LDL_ESTORE;
            u->_token = 0;
            u->_key[0] = '\0';
            u->_owner[0] = '\0';
            u->_next = pa->_qhead;
            pa->_qhead = u;
            if (!pa->_qtail) pa->_qtail = u;
            pa->_s_ride = pa->_s_wait;
            pa->_s_wait = NULL;
            pa->_s_upd = u;
        }
    }
    while (pa->_qhead && sent < LDL_PG_BATCH) {
        ldl_pg_req *r = ldl__pg_pop(&pa->_qhead, &pa->_qtail);
        if (!corked) { ldl__pg_cork(p->_conn, 1); corked = 1; }
        if (pa->_need_prep) {
            int i;
            for (i = 0; i < LDL__PG_NSTMT && rc == 0; i++)
                if ((pa->_need_prep & (1u << i)) &&
                    PQsendPrepare(p->_conn, p->_stmt[i], LDL__PG_SQL(p, i), 0, NULL) != 1) rc = -1;
            if (rc == 0 && PQpipelineSync(p->_conn) != 1) rc = -1;
            pa->_stats.prepares++;
            pa->_prep._rc = LDL_OK;
            pa->_prep._phase = LDL__PG_SENT;
            ldl__pg_push(&pa->_ahead, &pa->_atail, &pa->_prep);
            pa->_need_prep = 0;
        }
        r->_phase = LDL__PG_SENT;
        ldl__pg_push(&pa->_ahead, &pa->_atail, r);
        if (rc != 0 || ldl__pg_send_one(pa, r) != 0) { rc = -1; break; }
        sent++;
    }
    if (corked) { ldl__pg_cork(p->_conn, 0); pa->_stats.batches++; }
    return rc;
}

/* a result for the head request (before its Sync) */
static void ldl__pg_record(ldl_pg_async *pa, ldl_pg_req *h, const PGresult *r) {
    ldl_pg *p = pa->_pg;
    ExecStatusType st = PQresultStatus(r);
    if (h->_kind == LDL__PG_PREP) {
        if (st != PGRES_COMMAND_OK && h->_rc == LDL_OK) {
            h->_rc = LDL_ESTORE;
            ldl__pg_err_res(p, "prepare", r);
        }
        return;
    }
    if (h->_phase != LDL__PG_SENT) return;        /* the first result stands */
    h->_phase = LDL__PG_GOT;
    if (st == PGRES_TUPLES_OK && h->_kind == LDL__PG_SKIND) {
        int64_t one = 0;
        int n = ldl__pg_one_token(p, r, &one);
        h->_rc = n < 0 ? LDL_ESTORE : n;
    } else if (st == PGRES_TUPLES_OK && h->_sess) {
        int64_t me = 0, tok = 0;
        h->_token = 0;
        if (ldl__pg_pair(p, r, &me, &tok) != 0) {
            h->_rc = LDL_ESTORE;
        } else if (me == 0) {
            pa->_s_lost = 1;
            ldl__pg_err(p, "acquire", "the session was lost: every lock on it is lost");
            h->_rc = LDL_ESTORE;
        } else {
            h->_rc = tok ? 1 : 0;
            h->_token = tok;
        }
    } else if (st == PGRES_TUPLES_OK) {
        int which = h->_kind == LDL_OP_ACQUIRE ? LDL__PG_ACQ : h->_kind == LDL_OP_RENEW ? LDL__PG_REN : LDL__PG_REL;
        int64_t tok = 0;
        h->_rc = ldl__pg_answer(p, which, r, h->_token, &tok);
        if (which == LDL__PG_ACQ) h->_token = h->_rc == 1 ? tok : 0;
    } else {
        h->_rc = LDL_ESTORE;
        if (h->_kind == LDL_OP_ACQUIRE) h->_token = 0;
        ldl__pg_err_res(p, "exec", r);
        if (ldl__pg_sqlstate_is(r, "26000")) pa->_gone = 1;
    }
}

/* the head's Sync arrived: complete it; answers 1 when an op was completed */
static int ldl__pg_finish(ldl_pg_async *pa, ldl_pg_req *h) {
    ldl_op *op = h->_op;
    int rc = h->_rc;
    int64_t tok = h->_kind == LDL_OP_ACQUIRE && rc == 1 ? h->_token : 0;
    if (h->_kind == LDL__PG_PREP) {
        h->_phase = LDL__PG_FREE;
        if (rc != LDL_OK) pa->_gone = 1;
        return 0;
    }
    pa->_stats.answered++;
    if (h->_kind == LDL__PG_SKIND) {        /* the session UPDATE: it answers its ride list */
        ldl_op *ride = pa->_s_ride;
        pa->_s_ride = NULL;
        pa->_s_upd = NULL;
        ldl__pg_free(pa, h);
        if (rc == 0) {
            pa->_s_lost = 1;
            ldl__pg_err(pa->_pg, "renew", "the session expired or was deleted: every lock on it is lost");
        }
        return ldl__pg_s_complete(ride, rc);
    }
    if (!op && tok >= 1) {      /* a cancelled ACQUIRE was granted: hand it back */
        pa->_stats.handed_back++;
        pa->_stats.submitted++;
        h->_kind = LDL_OP_RELEASE;
        h->_sess = 0;
        h->_token = tok;
        h->_rc = LDL_ESTORE;
        h->_phase = LDL__PG_QUEUED;
        ldl__pg_push(&pa->_qhead, &pa->_qtail, h);
        return 0;
    }
    ldl__pg_free(pa, h);
    if (!op) return 0;
    ldl_op_complete(op, rc, tok);
    return 1;
}

LDL_PG_API int ldl_pg_async_pump(ldl_pg_async *pa) {
    PGconn *c;
    int done = 0, nulls = 0, f;
    if (!pa || !pa->_pg) return LDL_EINVAL;
    if (pa->_dead) return LDL_ESTORE;
    c = pa->_pg->_conn;
    if (PQstatus(c) != CONNECTION_OK) return ldl__pg_link_failed(pa, "connection");
    if (!pa->_flush && (pa->_qhead || (pa->_s_wait && !pa->_s_upd && !pa->_s_lost)) && ldl__pg_send(pa) != 0)
        return ldl__pg_link_failed(pa, "send");
    f = PQflush(c);
    if (f < 0) return ldl__pg_link_failed(pa, "send");
    pa->_flush = f == 1;
    if (!pa->_ahead) return 0;
    if (PQconsumeInput(c) != 1) return ldl__pg_link_failed(pa, "receive");
    while (pa->_ahead && !PQisBusy(c)) {
        ldl_pg_req *h = pa->_ahead;
        PGresult *r = PQgetResult(c);
        if (!r) {               /* the end of a statement's results, or of a
                                   Sync's: libpq 15 may give two in a row */
            if (++nulls > 2) break;
            continue;
        }
        nulls = 0;
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            ldl__pg_pop(&pa->_ahead, &pa->_atail);
            done += ldl__pg_finish(pa, h);
        } else {
            ldl__pg_record(pa, h, r);
        }
        PQclear(r);
        if (PQstatus(c) != CONNECTION_OK) break;
    }
    if (PQstatus(c) != CONNECTION_OK) {
        int n = ldl__pg_fail_all(pa);
        ldl__pg_err(pa->_pg, "connection", PQerrorMessage(c));
        (void)n;
        return LDL_ESTORE;
    }
    if (pa->_gone) {            /* our statements vanished from the session */
        ldl__pg_fail_all(pa);
        ldl__pg_err(pa->_pg, "async", "the session lost the adapter's prepared statements "
                    "(DEALLOCATE?): drop the connection and rebind a new one");
        return LDL_ESTORE;
    }
    if (pa->_s_lost && pa->_s_wait) {    /* the session is gone: no UPDATE will answer them */
        done += ldl__pg_s_complete(pa->_s_wait, 0);
        pa->_s_wait = NULL;
    }
    /* answers that queued hand-backs go out on the next pump */
    return done;
}

#endif /* LDL_NO_ASYNC */

/* ------------------------------------------------------------ the fenced-write protocol (issue 19) */
#define LDL__PG_FEN 0       /* the fence statement's slot in _sql / _stmt (fence-only ldl_pg) */

/* columns exactly resource text (deterministic collation) and fence bigint
   NOT NULL; primary key (resource); no UNIQUE, FOREIGN KEY or EXCLUDE */
static int ldl__pg_fence_shape(ldl_pg *p, const char *oid) {
    static const ldl__pg_col want[2] = {
        { "resource", "text", LDL__PG_DET }, { "fence", "bigint", LDL__PG_NN }
    };
    int seen, n = ldl__pg_columns(p, oid, want, 2, &seen), k;
    if (n < 0) return -1;
    if (n != 2 || seen != 3) {
        ldl__pg_err(p, "table", "fence table columns are not exactly resource text "
                    "(deterministic collation) and fence bigint NOT NULL");
        return -1;
    }
    k = ldl__pg_keys(p, oid, "PRIMARY KEY (resource)");
    if (k < 0) return -1;
    if (!k) {
        ldl__pg_err(p, "table", "fence table keys are not the adapter's: want PRIMARY KEY "
                    "(resource) and no UNIQUE, FOREIGN KEY or EXCLUDE constraint");
        return -1;
    }
    return 0;
}

/* init with LDL_PG_FENCE: p->_ident holds the quoted lease name ("t" or
   "s"."t"); the fence table is the same with "_fence" appended to the
   table's name, created when missing, resolved once and checked as the
   lease table is. The lease table is not touched. */
static int ldl__pg_fence_init(ldl_pg *p) {
    char oid[24];
    size_t n = strlen(p->_ident), rel;
    const char *dot = strstr(p->_ident, "\".\"");
    rel = dot ? n - (size_t)(dot + 3 - p->_ident) - 1 : n - 2;   /* the table name's bytes */
    if (rel + 6 > 63 || n + 7 > sizeof p->_ident) {
        ldl__pg_err(p, "init", "LDL_PG_FENCE: the table name must be at most 57 bytes "
                    "(the fence table's name is it + \"_fence\")");
        return LDL_EINVAL;
    }
    memcpy(p->_ident + n - 1, "_fence\"", 8);
    if (ldl__pg_create(p, "resource pg_catalog.text PRIMARY KEY, "
            "fence pg_catalog.int8 NOT NULL CHECK (fence OPERATOR(pg_catalog.>=) 1::pg_catalog.int8)",
            oid, sizeof oid, "fence table could not be created") != 0)   /* as the lease table */
        return LDL_ESTORE;
    if (ldl__pg_fence_shape(p, oid) != 0 || ldl__pg_grants(p, oid) != 0) return LDL_ESTORE;
    p->_off[LDL__PG_FEN] = 0;
    n = (size_t)snprintf(p->_text, sizeof p->_text,
        "INSERT INTO %s AS f (resource, fence) VALUES ($1::pg_catalog.text, $2::pg_catalog.int8) "
        "ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence "
        "WHERE f.fence OPERATOR(pg_catalog.<=) EXCLUDED.fence RETURNING f.fence", p->_ident);
    if (n >= sizeof p->_text) {
        ldl__pg_err(p, "init", "statement text too long");
        return LDL_ESTORE;
    }
    ldl__pg_stmt_name(LDL__PG_SQL(p, LDL__PG_FEN), p->_stmt[LDL__PG_FEN], sizeof p->_stmt[LDL__PG_FEN]);
    p->_nstmt = 1;
    if (!(p->_flags & LDL_PG_UNNAMED)) {
        if (ldl__pg_prepare_one(p, LDL__PG_FEN) != 0) return LDL_ESTORE;
        p->_pid = PQbackendPID(p->_conn);
    }
    p->_err[0] = '\0';
    p->_fence = 1;                       /* _ok stays 0: the lease calls refuse */
    return LDL_OK;
}

/* named mode, inside the caller's transaction, on a backend that may lack
   the statement (PQreset, server restart): an error here would abort the
   caller's transaction, so look before preparing (no 42P05 possible).
   0 ready, -1 error (why set) */
static int ldl__pg_fence_ready(ldl_pg *p) {
    const char *vals[1];
    PGresult *r;
    int have;
    if (p->_pid == PQbackendPID(p->_conn) && (p->_prepared & 1u)) return 0;
    vals[0] = p->_stmt[LDL__PG_FEN];
    r = PQexecParams(p->_conn,
        "SELECT s.statement FROM pg_catalog.pg_prepared_statements s "
        "WHERE s.name OPERATOR(pg_catalog.=) $1::pg_catalog.text", 1, NULL, vals, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != 1 || PQntuples(r) > 1) {
        ldl__pg_err_res(p, "fence", r);
        PQclear(r);
        return -1;
    }
    have = PQntuples(r) == 1;
    if (have && (PQgetisnull(r, 0, 0) || strcmp(PQgetvalue(r, 0, 0), LDL__PG_SQL(p, LDL__PG_FEN)) != 0)) {
        PQclear(r);
        ldl__pg_err(p, "fence", "a foreign prepared statement holds the adapter's name");
        return -1;
    }
    PQclear(r);
    if (!have) {
        r = PQprepare(p->_conn, p->_stmt[LDL__PG_FEN], LDL__PG_SQL(p, LDL__PG_FEN), 0, NULL);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
            ldl__pg_err_res(p, "fence", r);
            PQclear(r);
            return -1;
        }
        PQclear(r);
    }
    p->_prepared = 1u;
    p->_pid = PQbackendPID(p->_conn);
    return 0;
}

LDL_PG_API int ldl_pg_fence(ldl_pg *p, const char *resource, int64_t fence) {
    char num[24];
    const char *vals[2];
    PGresult *r;
    PGTransactionStatusType ts;
    int64_t got = 0;
    size_t n;
    int rc;
    if (!p) return LDL_EINVAL;
    if (!p->_fence) {
        ldl__pg_err(p, "fence", "ldl_pg not initialised with LDL_PG_FENCE");
        return LDL_EINVAL;
    }
    if (!resource || (n = strlen(resource)) == 0 || n >= LDL_PG_RESOURCE_MAX) {
        ldl__pg_err(p, "fence", "resource: want 1..LDL_PG_RESOURCE_MAX-1 bytes");
        return LDL_EINVAL;
    }
    if (fence < 1) {
        ldl__pg_err(p, "fence", "fence: want 1..INT64_MAX");
        return LDL_EINVAL;
    }
    if (PQstatus(p->_conn) != CONNECTION_OK) {
        ldl__pg_err(p, "connection", PQerrorMessage(p->_conn));
        return LDL_ESTORE;
    }
#ifdef LIBPQ_HAS_PIPELINING
    if (PQpipelineStatus(p->_conn) != PQ_PIPELINE_OFF) {
        ldl__pg_err(p, "fence", "connection in pipeline mode: send ldl_pg_fence_sql(p) in your "
                    "pipeline instead");
        return LDL_ESTORE;
    }
#endif
    ts = PQtransactionStatus(p->_conn);
    if (ts != PQTRANS_INTRANS) {
        ldl__pg_err(p, "fence", ts == PQTRANS_IDLE ? "outside a transaction block: BEGIN first "
                    "(the check and the protected write must commit together)"
                    : ts == PQTRANS_INERROR ? "the transaction has already failed: ROLLBACK"
                    : "connection busy or in an unknown state");
        return LDL_ESTORE;
    }
    snprintf(num, sizeof num, "%lld", (long long)fence);
    vals[0] = resource; vals[1] = num;
    if (p->_flags & LDL_PG_UNNAMED) {
        r = PQexecParams(p->_conn, LDL__PG_SQL(p, LDL__PG_FEN), 2, NULL, vals, NULL, NULL, 0);
    } else {
        if (ldl__pg_fence_ready(p) != 0) return LDL_ESTORE;
        r = PQexecPrepared(p->_conn, p->_stmt[LDL__PG_FEN], 2, vals, NULL, NULL, 0);
    }
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        char what[32];
        if (ldl__pg_sqlstate_is(r, "26000")) p->_pid = 0;      /* prepare again next time */
        /* the SQLSTATE in the why: 40001 / 40P01 mean "retry the transaction" */
        snprintf(what, sizeof what, "fence (SQLSTATE %.5s)", state ? state : "none");
        ldl__pg_err_res(p, what, r);
        PQclear(r);
        return LDL_ESTORE;
    }
    rc = ldl__pg_one_token(p, r, &got);
    PQclear(r);
    if (rc < 0) return LDL_ESTORE;
    if (rc == 0) {
        ldl__pg_err(p, "fence", "stale: a higher fence has written this resource (roll back)");
        return 0;
    }
    if (got != fence) {
        ldl__pg_err(p, "reply", "fence mismatch");
        return LDL_ESTORE;
    }
    p->_err[0] = '\0';
    return 1;
}

LDL_PG_API const char *ldl_pg_fence_sql(const ldl_pg *p) {
    return p && p->_fence ? LDL__PG_SQL(p, LDL__PG_FEN) : "";
}

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_PG_C */
#endif /* LDL_PG_IMPLEMENTATION */

/* ==================================================================== */
/* DURABILITY (v0.3, issue 20; docs/postgres.md "Failover"; decision 0215)

   ldl_pg_check_durability(p, why, why_len), after ldl_pg_init: one read-only
   statement on p's connection (never in pipeline mode, never inside a
   transaction block of the caller's) that reads what is in force for THIS
   session -- fsync, synchronous_commit (the session's own value: role,
   database and conninfo settings included), full_page_writes,
   synchronous_standby_names, pg_is_in_recovery() -- and which standbys are
   streaming now (pg_catalog.pg_stat_replication), and answers:

     negative   it could not tell (LDL_EINVAL: NULL or uninitialised p;
                LDL_ESTORE: connection down or busy, a reply of the wrong
                shape, connected to a standby, or the replication details
                were needed and are hidden from this role: they need
                pg_read_all_stats, e.g. GRANT pg_monitor TO the lock role)
     >= 0       an OR of
                LDL_PG_SURVIVES_CRASH     the fence survives this server's
                    crash and restart: fsync on, synchronous_commit not off,
                    full_page_writes on
                LDL_PG_SURVIVES_FAILOVER  the fence survives the promotion of
                    the synchronous standby: synchronous_commit on or
                    remote_apply, synchronous_standby_names not empty and at
                    least one standby streaming with sync_state sync or
                    quorum now (remote_write does not count: the standby
                    acknowledges before its own disk has the WAL; a logical
                    walsender, e.g. a subscription or pg_recvlogical, is no
                    standby and never counts)
                0 = neither. why names every setting that takes a bit away.

   The pg_stat_replication rows are read only when the settings leave the
   failover answer open; a role without pg_read_all_stats sees them with
   their details NULL, and then the answer is LDL_ESTORE (not a guess).
   What the primary cannot see is not checked: the standby's own fsync, and
   that the standby you promote is the synchronous one (promote that one,
   or with ANY n (...) the one that received the most WAL). */
#ifndef LITE_DI_LOCK_PG_DURABILITY_H
#define LITE_DI_LOCK_PG_DURABILITY_H

#define LDL_PG_SURVIVES_CRASH    1
#define LDL_PG_SURVIVES_FAILOVER 2

#ifdef __cplusplus
extern "C" {
#endif
LDL_PG_API int ldl_pg_check_durability(ldl_pg *p, char *why, size_t why_len);
#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_PG_DURABILITY_H */

#ifdef LDL_PG_IMPLEMENTATION
#ifndef LITE_DI_LOCK_PG_DURABILITY_C
#define LITE_DI_LOCK_PG_DURABILITY_C

#ifdef __cplusplus
extern "C" {
#endif

/* append a to buf (capacity cap), truncating */
static void ldl__pg_dur_cat(char *buf, size_t cap, const char *a) {
    size_t n = strlen(buf), m = strlen(a);
    if (n + 1 >= cap) return;
    if (m > cap - 1 - n) m = cap - 1 - n;
    memcpy(buf + n, a, m);
    buf[n + m] = '\0';
}

static void ldl__pg_dur_tell(char *why, size_t why_len, const char *a, const char *b) {
    if (!why || why_len == 0) return;
    why[0] = '\0';
    ldl__pg_dur_cat(why, why_len, a);
    if (b) ldl__pg_dur_cat(why, why_len, b);
}

/* a small non-negative count as the server printed it; -1 when it is not one */
static long ldl__pg_dur_count(const char *s) {
    long v = 0;
    size_t i;
    if (!s || !*s || strlen(s) > 6) return -1;
    for (i = 0; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

#define LDL__PG_DUR_FIELDS 8

/* the durability row: sent, and proved to be exactly this request's shape (one
   row of 8 bounded text values, counts that fit together, on a primary). 0 with
   *res (the caller PQclears it) and v, n, seen, sync filled; else LDL_ESTORE,
   with p's error and why set and nothing left to clear */
static int ldl__pg_dur_read(ldl_pg *p, PGresult **res, const char **v, long *cnt, char *why, size_t why_len) {
    /* one row: the five settings, then (total, with details visible, sync and
       streaming) walsenders of standbys; exact, schema-qualified, no parameter. A
       logical walsender (its slot is logical) is no standby: nothing it feeds can be
       promoted, even when synchronous_standby_names makes it "sync" (issue 31) */
    static const char sql[] =
        "SELECT pg_catalog.current_setting('fsync'), "
        "pg_catalog.current_setting('synchronous_commit'), "
        "pg_catalog.current_setting('full_page_writes'), "
        "pg_catalog.current_setting('synchronous_standby_names'), "
        "pg_catalog.pg_is_in_recovery(), w.n, w.seen, w.sync "
        "FROM (SELECT pg_catalog.count(*) AS n, pg_catalog.count(r.state) AS seen, "
        "pg_catalog.count(*) FILTER (WHERE r.state OPERATOR(pg_catalog.=) 'streaming'::pg_catalog.text "
        "AND r.sync_state OPERATOR(pg_catalog.=) ANY (ARRAY['sync', 'quorum']::pg_catalog.text[])) AS sync "
        "FROM pg_catalog.pg_stat_replication r WHERE NOT EXISTS (SELECT 1 "
        "FROM pg_catalog.pg_replication_slots s WHERE s.active_pid OPERATOR(pg_catalog.=) r.pid "
        "AND s.slot_type OPERATOR(pg_catalog.=) 'logical'::pg_catalog.text)) w";
    PGresult *r;
    int i;
    long n, seen, sync;
    r = PQexecParams(p->_conn, sql, 0, NULL, NULL, NULL, NULL, 0);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
        ldl__pg_err_res(p, "durability", r);
        PQclear(r);
        ldl__pg_dur_tell(why, why_len, "durability unknown: ", p->_err);
        return LDL_ESTORE;
    }
    /* the reply must be exactly this request's shape: one row of 8 text
       values, none NULL, each of bounded length */
    if (PQnfields(r) != LDL__PG_DUR_FIELDS || PQntuples(r) != 1) {
        PQclear(r);
        ldl__pg_err(p, "durability", "reply of the wrong shape");
        ldl__pg_dur_tell(why, why_len, "durability unknown: reply of the wrong shape", NULL);
        return LDL_ESTORE;
    }
    for (i = 0; i < LDL__PG_DUR_FIELDS; i++) {
        if (PQgetisnull(r, 0, i) || PQgetlength(r, 0, i) > 4096) {
            PQclear(r);
            ldl__pg_err(p, "durability", "reply of the wrong shape");
            ldl__pg_dur_tell(why, why_len, "durability unknown: reply of the wrong shape", NULL);
            return LDL_ESTORE;
        }
        v[i] = PQgetvalue(r, 0, i);
    }
    n = ldl__pg_dur_count(v[5]);
    seen = ldl__pg_dur_count(v[6]);
    sync = ldl__pg_dur_count(v[7]);
    if (n < 0 || seen < 0 || sync < 0 || seen > n || sync > seen ||
        (strcmp(v[4], "t") != 0 && strcmp(v[4], "f") != 0)) {
        PQclear(r);
        ldl__pg_err(p, "durability", "reply of the wrong shape");
        ldl__pg_dur_tell(why, why_len, "durability unknown: reply of the wrong shape", NULL);
        return LDL_ESTORE;
    }
    if (strcmp(v[4], "t") == 0) {
        PQclear(r);
        ldl__pg_err(p, "durability", "connected to a standby (in recovery)");
        ldl__pg_dur_tell(why, why_len, "durability unknown: connected to a standby (in recovery), "
                         "where no lease can be granted: connect to the primary "
                         "(target_session_attrs=read-write)", NULL);
        return LDL_ESTORE;
    }
    cnt[0] = n; cnt[1] = seen; cnt[2] = sync;
    *res = r;
    return 0;
}

/* the crash: the WAL reaches the disk before the grant is acknowledged; what
   takes it away goes into crash[cap] ("" when nothing does) */
static void ldl__pg_dur_crash(const char **v, char *crash, size_t cap) {
    const char *sc = v[1];
    crash[0] = '\0';
    if (strcmp(v[0], "on") != 0)
        ldl__pg_dur_cat(crash, cap, "; fsync is off (an OS crash or power loss can lose "
                        "acknowledged grants and corrupt the table)");
    if (strcmp(sc, "off") == 0)
        ldl__pg_dur_cat(crash, cap, "; synchronous_commit is off (a crash loses the "
                        "last acknowledged grants: the same token is granted again)");
    if (strcmp(v[2], "on") != 0)
        ldl__pg_dur_cat(crash, cap, "; full_page_writes is off (a torn page after an "
                        "OS crash can lose the fence row)");
}

LDL_PG_API int ldl_pg_check_durability(ldl_pg *p, char *why, size_t why_len) {
    char text[1024], crash[400], fail[400];
    const char *v[LDL__PG_DUR_FIELDS];
    const char *sc;
    long n, seen, sync;
    PGresult *r = NULL;
    long cnt[3];
    int answer = 0, sc_fail;
    if (why && why_len > 0) why[0] = '\0';
    if (!p || !p->_ok) {
        ldl__pg_dur_tell(why, why_len, "durability unknown: ldl_pg not initialised", NULL);
        return LDL_EINVAL;
    }
    if (!ldl__pg_usable(p)) {
        ldl__pg_dur_tell(why, why_len, "durability unknown: ", p->_err);
        return LDL_ESTORE;
    }
    if (ldl__pg_dur_read(p, &r, v, cnt, why, why_len) != 0) return LDL_ESTORE;
    n = cnt[0]; seen = cnt[1]; sync = cnt[2];
    sc = v[1];
    ldl__pg_dur_crash(v, crash, sizeof crash);
    if (!crash[0]) answer |= LDL_PG_SURVIVES_CRASH;

    /* the failover: an acknowledged grant is already on a synchronous standby */
    fail[0] = '\0';
    sc_fail = strcmp(sc, "on") != 0 && strcmp(sc, "remote_apply") != 0;
    if (sc_fail) {
        ldl__pg_dur_cat(fail, sizeof fail, "; synchronous_commit is ");
        ldl__pg_dur_cat(fail, sizeof fail, sc);
        ldl__pg_dur_cat(fail, sizeof fail, strcmp(sc, "remote_write") == 0
                        ? " (the standby acknowledges before its disk has the grant; use on or remote_apply)"
                        : " (grants are acknowledged without waiting for a standby; use on or remote_apply)");
    }
    if (v[3][0] == '\0') {
        ldl__pg_dur_cat(fail, sizeof fail, "; synchronous_standby_names is empty (replication is "
                        "asynchronous: a promoted standby may lack the last grants and grant "
                        "their tokens again)");
    } else if (!sc_fail && sync == 0 && seen < n) {
        /* the answer hangs on rows this role cannot read: do not guess */
        PQclear(r);
        ldl__pg_err(p, "durability", "pg_stat_replication details hidden from this role");
        if (why && why_len > 0) {
            snprintf(text, sizeof text, "durability unknown: the standbys' state in "
                     "pg_stat_replication is hidden from this role (grant it pg_read_all_stats, "
                     "e.g. GRANT pg_monitor); crash: %s%s",
                     crash[0] ? "no" : "yes", crash);
            ldl__pg_dur_tell(why, why_len, text, NULL);
        }
        return LDL_ESTORE;
    } else if (sync == 0 && seen < n) {
        ldl__pg_dur_cat(fail, sizeof fail, "; the standbys' state is hidden from this role");
    } else if (sync == 0) {
        ldl__pg_dur_cat(fail, sizeof fail, "; no synchronous standby is streaming now (commits "
                        "wait until one is; a standby that is not synchronous may lack the last "
                        "grants)");
    }
    if (!fail[0]) answer |= LDL_PG_SURVIVES_FAILOVER;
    PQclear(r);
    if (why && why_len > 0) {
        snprintf(text, sizeof text, "crash: %s%s; failover: %s%s",
                 crash[0] ? "no" : "yes", crash, fail[0] ? "no" : "yes", fail);
        ldl__pg_dur_tell(why, why_len, text, NULL);
    }
    return answer;
}

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_PG_DURABILITY_C */
#endif /* LDL_PG_IMPLEMENTATION */

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
