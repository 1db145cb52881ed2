/* lite_di_lock_pg.h -- PostgreSQL store for lite_di_lock.h (needs libpq).

   Lease locks with fencing tokens that survive a server restart, because the
   token lives in an ordinary (WAL-logged) table row that is never deleted.

   QUICK START

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_PG_IMPLEMENTATION
       #include "adapters/lite_di_lock_pg.h"

       PGconn *conn = PQconnectdb("host=127.0.0.1 dbname=app connect_timeout=2 "
                                  "tcp_user_timeout=2000 "
                                  "options='-c statement_timeout=2000 -c lock_timeout=1000'");
       ldl_pg pg;
       if (ldl_pg_init(&pg, conn, NULL) != LDL_OK) { ...connection or server error... }
       ldl_store store = ldl_pg_store(&pg);
       desc.store = &store;              (the lock copies the struct)
       ... ldl_lock_init(&lock, &desc); ldl_lock_acquire(&lock); ...

   Compile with -I/usr/include/postgresql (Debian) and link with -lpq.

   THE TABLE

       CREATE TABLE "<table>" (key text PRIMARY KEY,
                               token bigint NOT NULL CHECK (token >= 1),
                               expires_at timestamptz NOT NULL)

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
   for the schema; it is used exactly as given (quoted, so case-sensitive).
   Anything else answers LDL_EINVAL and touches nothing. init creates the
   table if it is missing, refuses an UNLOGGED or TEMP table (the fence would
   not survive a crash), and prepares three statements on the connection.
   Answers LDL_OK, LDL_EINVAL (bad argument) or LDL_ESTORE (connection not
   usable, server error, table of the wrong shape).

   THE CONNECTION belongs to the caller: the adapter never connects,
   reconnects or closes it, and never changes a session setting. Configure
   timeouts in the conninfo (connect_timeout, tcp_user_timeout,
   statement_timeout, lock_timeout): every store call is one synchronous
   round trip and waits as long as libpq waits. When a call fails because the
   server went away (PQstatus(conn) == CONNECTION_BAD), call PQreset(conn);
   the adapter notices the new backend and prepares its statements again on
   the next call (it also re-prepares once when the server says a statement
   is missing). A PGconn replaced by a different pointer needs ldl_pg_init
   again. Store calls refuse (answer LDL_ESTORE, send nothing) while the
   connection is inside a transaction block of the caller's, because a lease
   taken there would be invisible until COMMIT and undone by ROLLBACK.

   ANSWERS: exactly 1 yes, 0 no, negative on any error (LDL_ESTORE: server
   error, connection down, a reply of the wrong shape; LDL_EINVAL: bad
   argument). A token is parsed strictly as a decimal in [1, INT64_MAX].

   OPTIONS
     LDL_PG_IMPLEMENTATION   in exactly one .c/.cpp file, after the core header
     LDL_STATIC              makes the functions static (as in the core header)

   One ldl_pg serves one thread at a time (like its PGconn). Several ldl_pg
   may share one PGconn; the same table gives the same statement names, which
   is fine. ldl_pg_store(p) points at p: do not move p while a lock uses it.

   LIMITS (details in docs/postgres.md)
   - The fence survives restarts and crashes through the WAL with the server's
     defaults; not with fsync = off or synchronous_commit = off, and not across
     a failover to an asynchronous replica.
   - A frozen server (SIGSTOP, paused VM) still ACKs TCP: no libpq timeout
     fires and the call waits until it resumes. The lock stays safe (its own
     deadline), but your loop waits.
   - Keys are text: valid in the client encoding, or the call answers an error.
   - The private _err field holds the last error text, for debugging only.
*/
#ifndef LITE_DI_LOCK_PG_H
#define LITE_DI_LOCK_PG_H

#include "lite_di_lock.h"
#include <libpq-fe.h>
#include <stdint.h>

#ifndef LDL_PG_API
#ifdef LDL_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define LDL_PG_API static __attribute__((unused))
#else
#define LDL_PG_API static
#endif
#else
#define LDL_PG_API extern
#endif
#endif

/* a quoted identifier: 2 names of 63 bytes, 4 quotes, a dot, the NUL */
#define LDL_PG__IDENT_MAX 136
#define LDL_PG__NAME_MAX 24
#define LDL_PG__ERR_MAX 160

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_pg {                 /* caller-owned; fields are private */
    PGconn *_conn;
    int     _ok;                        /* 1 after a successful init */
    int     _pid;                       /* backend pid the statements were prepared on */
    char    _ident[LDL_PG__IDENT_MAX];  /* "schema"."table", quoted */
    char    _stmt[3][LDL_PG__NAME_MAX]; /* acquire, renew, release statement names */
    char    _err[LDL_PG__ERR_MAX];      /* last error text, for debugging only */
} ldl_pg;

LDL_PG_API int       ldl_pg_init(ldl_pg *p, PGconn *conn, const char *table);
LDL_PG_API ldl_store ldl_pg_store(ldl_pg *p);

#ifdef __cplusplus
}
#endif

#endif /* LITE_DI_LOCK_PG_H */

/* ------------------------------------------------------------ implementation */
#ifdef LDL_PG_IMPLEMENTATION
#ifndef LDL_PG__IMPLEMENTED
#define LDL_PG__IMPLEMENTED

#include <stdio.h>
#include <string.h>

#define LDL_PG__ACQ 0
#define LDL_PG__REN 1
#define LDL_PG__REL 2
#define LDL_PG__INT8OID 20  /* pg_type.oid of bigint; fixed since 1996 */
#define LDL_PG__SQL_MAX 512

#ifdef __cplusplus
extern "C" {
#endif

static void ldl__pg_err(ldl_pg *p, const char *what, const char *detail)
{
    size_t n;
    if (!detail) detail = "";
    snprintf(p->_err, sizeof p->_err, "%s: %s", what, detail);
    n = strlen(p->_err);
    while (n > 0 && (p->_err[n - 1] == '\n' || p->_err[n - 1] == ' ')) p->_err[--n] = '\0';
}

/* [A-Za-z_][A-Za-z0-9_]{0,62}; returns the length or 0 when invalid */
static size_t ldl__pg_name_len(const char *s, size_t max)
{
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
static int ldl__pg_quote(const char *table, char *out, size_t cap)
{
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

static void ldl__pg_sql(const ldl_pg *p, int which, char *buf, size_t cap)
{
    const char *t = p->_ident;
    if (which == LDL_PG__ACQ)
        snprintf(buf, cap,
            "INSERT INTO %s AS l (key, token, expires_at) "
            "VALUES ($1::text, 1, clock_timestamp() + $2::int8 * interval '1 millisecond') "
            "ON CONFLICT (key) DO UPDATE SET token = l.token + 1, "
            "expires_at = clock_timestamp() + $2::int8 * interval '1 millisecond' "
            "WHERE l.expires_at <= clock_timestamp() RETURNING l.token", t);
    else if (which == LDL_PG__REN)
        snprintf(buf, cap,
            "UPDATE %s SET expires_at = clock_timestamp() + $3::int8 * interval '1 millisecond' "
            "WHERE key = $1::text AND token = $2::int8 AND expires_at > clock_timestamp() "
            "RETURNING token", t);
    else
        snprintf(buf, cap,
            "UPDATE %s SET expires_at = '-infinity' "
            "WHERE key = $1::text AND token = $2::int8 AND expires_at > '-infinity' "
            "RETURNING token", t);
}

/* statement name = "ldl_" + FNV-1a 64 of the SQL text: unique per table and
   per SQL revision, and short enough for the server's 63-byte name limit */
static void ldl__pg_stmt_name(const char *sql, char *out, size_t cap)
{
    uint64_t h = 14695981039346656037ULL;
    const unsigned char *s = (const unsigned char *)sql;
    while (*s) { h ^= *s++; h *= 1099511628211ULL; }
    snprintf(out, cap, "ldl_%08lx%08lx",
             (unsigned long)(h >> 32), (unsigned long)(h & 0xffffffffUL));
}

static int ldl__pg_sqlstate_is(const PGresult *r, const char *code)
{
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return s && strcmp(s, code) == 0;
}

/* the connection may carry our statements only when it is up and idle */
static int ldl__pg_usable(ldl_pg *p)
{
    if (PQstatus(p->_conn) != CONNECTION_OK) {
        ldl__pg_err(p, "connection", PQerrorMessage(p->_conn));
        return 0;
    }
    if (PQtransactionStatus(p->_conn) != PQTRANS_IDLE) {
        ldl__pg_err(p, "connection", "not idle (inside a transaction block or busy)");
        return 0;
    }
    return 1;
}

static int ldl__pg_prepare_all(ldl_pg *p)
{
    char sql[LDL_PG__SQL_MAX];
    int i;
    for (i = 0; i < 3; i++) {
        PGresult *r;
        int ok;
        ldl__pg_sql(p, i, sql, sizeof sql);
        r = PQprepare(p->_conn, p->_stmt[i], sql, 0, NULL);
        ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
        /* 42P05: this session already has it (another ldl_pg on the same
           table and connection); the name is derived from the SQL text */
        if (!ok && ldl__pg_sqlstate_is(r, "42P05")) ok = 1;
        if (!ok) ldl__pg_err(p, "prepare", r ? PQresultErrorMessage(r) : PQerrorMessage(p->_conn));
        PQclear(r);
        if (!ok) return -1;
    }
    p->_pid = PQbackendPID(p->_conn);
    return 0;
}

/* run one prepared statement; returns a PGRES_TUPLES_OK result or NULL */
static PGresult *ldl__pg_exec(ldl_pg *p, int which, int n, const char *const *vals)
{
    int attempt;
    if (!p->_ok) { ldl__pg_err(p, "exec", "ldl_pg not initialised"); return NULL; }
    for (attempt = 0; attempt < 2; attempt++) {
        PGresult *r;
        if (!ldl__pg_usable(p)) return NULL;
        /* a new backend (PQreset, server restart) has none of our statements */
        if (p->_pid != PQbackendPID(p->_conn) && ldl__pg_prepare_all(p) != 0) return NULL;
        r = PQexecPrepared(p->_conn, p->_stmt[which], n, vals, NULL, NULL, 0);
        if (r && PQresultStatus(r) == PGRES_TUPLES_OK) return r;
        ldl__pg_err(p, "exec", r ? PQresultErrorMessage(r) : PQerrorMessage(p->_conn));
        /* 26000: statement unknown to this backend (e.g. a reused backend
           pid after a restart): prepare again, once */
        if (attempt == 0 && ldl__pg_sqlstate_is(r, "26000")) {
            PQclear(r);
            p->_pid = 0;
            continue;
        }
        PQclear(r);
        return NULL;
    }
    return NULL;
}

/* the reply must be one bigint column, 0 or 1 rows; returns the row count
   (0 or 1) and the strictly parsed token, or -1 when malformed */
static int ldl__pg_one_token(ldl_pg *p, const PGresult *r, int64_t *tok)
{
    const char *s;
    int64_t v = 0;
    int i;
    if (PQnfields(r) != 1 || PQftype(r, 0) != LDL_PG__INT8OID || PQfformat(r, 0) != 0) {
        ldl__pg_err(p, "reply", "unexpected columns");
        return -1;
    }
    if (PQntuples(r) == 0) return 0;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        ldl__pg_err(p, "reply", "unexpected rows");
        return -1;
    }
    s = PQgetvalue(r, 0, 0);
    if (!s || s[0] == '\0') { ldl__pg_err(p, "reply", "empty token"); return -1; }
    for (i = 0; s[i] != '\0'; i++) {
        int d = s[i] - '0';
        if (d < 0 || d > 9 || i >= 19) { ldl__pg_err(p, "reply", "token not a decimal"); return -1; }
        if (v > (INT64_MAX - d) / 10) { ldl__pg_err(p, "reply", "token overflow"); return -1; }
        v = v * 10 + d;
    }
    if (v < 1) { ldl__pg_err(p, "reply", "token below 1"); return -1; }
    *tok = v;
    return 1;
}

static int ldl__pg_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out)
{
    ldl_pg *p = (ldl_pg *)ctx;
    char ttl[24];
    const char *vals[2];
    PGresult *r;
    int64_t tok = 0;
    int n;
    if (token_out) *token_out = 0;
    if (!p || !key || !token_out || ttl_ms == 0) return LDL_EINVAL;
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)ttl_ms);
    vals[0] = key; vals[1] = ttl;
    r = ldl__pg_exec(p, LDL_PG__ACQ, 2, vals);
    if (!r) return LDL_ESTORE;
    n = ldl__pg_one_token(p, r, &tok);
    PQclear(r);
    if (n < 0) return LDL_ESTORE;
    if (n == 0) return 0;           /* no row: the lease is held by another */
    *token_out = tok;
    return 1;
}

/* renew and release: 1 when exactly our row changed, 0 when none did */
static int ldl__pg_update(ldl_pg *p, int which, const char *key, int64_t token, uint32_t ttl_ms)
{
    char tok[24], ttl[24];
    const char *vals[3];
    PGresult *r;
    int64_t got = 0;
    int n;
    if (!p || !key) return LDL_EINVAL;
    if (token < 1) return 0;        /* no lease ever carried such a token */
    snprintf(tok, sizeof tok, "%lld", (long long)token);
    snprintf(ttl, sizeof ttl, "%lu", (unsigned long)ttl_ms);
    vals[0] = key; vals[1] = tok; vals[2] = ttl;
    r = ldl__pg_exec(p, which, which == LDL_PG__REN ? 3 : 2, vals);
    if (!r) return LDL_ESTORE;
    n = ldl__pg_one_token(p, r, &got);
    PQclear(r);
    if (n < 0) return LDL_ESTORE;
    if (n == 1 && got != token) { ldl__pg_err(p, "reply", "token mismatch"); return LDL_ESTORE; }
    return n;
}

static int ldl__pg_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms)
{
    if (ttl_ms == 0) return LDL_EINVAL;
    return ldl__pg_update((ldl_pg *)ctx, LDL_PG__REN, key, token, ttl_ms);
}

static int ldl__pg_release(void *ctx, const char *key, int64_t token)
{
    return ldl__pg_update((ldl_pg *)ctx, LDL_PG__REL, key, token, 0);
}

/* relpersistence of the table: 'p' logged, 'u' unlogged, 't' temp, 0 missing, -1 error */
static int ldl__pg_persistence(ldl_pg *p)
{
    const char *vals[1];
    PGresult *r;
    int out = -1;
    vals[0] = p->_ident;
    r = PQexecParams(p->_conn,
        "SELECT c.relpersistence::text FROM pg_catalog.pg_class c "
        "WHERE c.oid = pg_catalog.to_regclass($1::text)", 1, NULL, vals, NULL, NULL, 0);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 1) {
        if (PQntuples(r) == 0) out = 0;
        else if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) out = (unsigned char)PQgetvalue(r, 0, 0)[0];
    }
    if (out < 0) ldl__pg_err(p, "lookup", r ? PQresultErrorMessage(r) : PQerrorMessage(p->_conn));
    PQclear(r);
    return out;
}

LDL_PG_API int ldl_pg_init(ldl_pg *p, PGconn *conn, const char *table)
{
    char sql[LDL_PG__SQL_MAX];
    int i, pers = 0;
    if (!p) return LDL_EINVAL;
    memset(p, 0, sizeof *p);
    if (!table) table = "ldl_lease";
    if (ldl__pg_quote(table, p->_ident, sizeof p->_ident) != 0) {
        ldl__pg_err(p, "init", "bad table name (want [A-Za-z_][A-Za-z0-9_]{0,62}, optionally schema.name)");
        return LDL_EINVAL;
    }
    if (!conn) { ldl__pg_err(p, "init", "NULL connection"); return LDL_EINVAL; }
    p->_conn = conn;
    for (i = 0; i < 3; i++) {
        ldl__pg_sql(p, i, sql, sizeof sql);
        ldl__pg_stmt_name(sql, p->_stmt[i], sizeof p->_stmt[i]);
    }
    if (!ldl__pg_usable(p)) return LDL_ESTORE;
    /* create when missing; two processes racing on CREATE may see a unique
       violation (23505) or duplicate table (42P07): look again. (Not IF NOT
       EXISTS: its NOTICE would reach the caller's notice processor.) */
    for (i = 0; i < 3; i++) {
        PGresult *r;
        int ok;
        pers = ldl__pg_persistence(p);
        if (pers != 0) break;
        snprintf(sql, sizeof sql,
            "CREATE TABLE %s (key text PRIMARY KEY, "
            "token bigint NOT NULL CHECK (token >= 1), expires_at timestamptz NOT NULL)",
            p->_ident);
        r = PQexec(conn, sql);
        ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok) ldl__pg_err(p, "create", r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
        if (!ok && !ldl__pg_sqlstate_is(r, "23505") && !ldl__pg_sqlstate_is(r, "42P07")) {
            PQclear(r);
            return LDL_ESTORE;
        }
        PQclear(r);
    }
    if (pers != 'p') {
        if (pers > 0) ldl__pg_err(p, "init", "table is UNLOGGED or TEMP: the fence would not survive a crash");
        else if (pers == 0) ldl__pg_err(p, "init", "table could not be created");
        return LDL_ESTORE;
    }
    if (ldl__pg_prepare_all(p) != 0) return LDL_ESTORE;
    /* the ON CONFLICT arbiter (a unique index on key) is only checked when
       the statement is planned: plan it now, without running it */
    {
        PGresult *r;
        int ok;
        snprintf(sql, sizeof sql, "EXPLAIN EXECUTE %s('', 1)", p->_stmt[LDL_PG__ACQ]);
        r = PQexec(conn, sql);
        ok = r && PQresultStatus(r) == PGRES_TUPLES_OK;
        if (!ok) ldl__pg_err(p, "plan", r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
        PQclear(r);
        if (!ok) return LDL_ESTORE;
    }
    p->_ok = 1;
    return LDL_OK;
}

LDL_PG_API ldl_store ldl_pg_store(ldl_pg *p)
{
    ldl_store s;
    memset(&s, 0, sizeof s);
    if (!p) return s;
    s.acquire = ldl__pg_acquire;
    s.renew = ldl__pg_renew;
    s.release = ldl__pg_release;
    s.ctx = p;
    return s;
}

#ifdef __cplusplus
}
#endif

#endif /* LDL_PG__IMPLEMENTED */
#endif /* LDL_PG_IMPLEMENTATION */

/* MIT License -- see LICENSE in the repository. */
