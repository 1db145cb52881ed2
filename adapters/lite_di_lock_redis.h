/* lite_di_lock_redis.h -- Redis store for lite_di_lock.h (needs hiredis).

   Lease locks with fencing tokens kept in Redis. Each call is ONE Lua script,
   atomic on the server; the fence counter is a plain Redis integer that never
   expires and is never deleted.

   QUICK START

       #define LITE_DI_LOCK_IMPLEMENTATION
       #include "lite_di_lock.h"
       #define LDL_REDIS_IMPLEMENTATION
       #include "adapters/lite_di_lock_redis.h"

       struct timeval tv = { 0, 500000 };                    (500 ms)
       redisContext *c = redisConnectWithTimeout("127.0.0.1", 6379, tv);
       if (!c || c->err) { ...cannot connect... }
       redisSetTimeout(c, tv);                   (a command never waits longer)
       ldl_redis r;
       ldl_redis_init(&r, c, NULL);              (NULL prefix = "ldl")
       if (ldl_redis_check_durability(&r, why, sizeof why) != 1) puts(why);
       ldl_store store = ldl_redis_store(&r);
       desc.store = &store;                      (the lock copies the struct)
       ... ldl_lock_init(&lock, &desc); ldl_lock_acquire(&lock); ...

   Compile with -I<dir holding lite_di_lock.h>, link with -lhiredis.

   THE KEYS of lock key K under prefix P:

       {P:K}:lease   the lease: holds the decimal token, expires after the TTL
       {P:K}:fence   the fence counter: INCRed once per grant, never expires,
                     never deleted

   Both names carry the same hash tag (the text up to the first '}' is the
   same in both), so both land in one slot and the scripts also run on Redis
   Cluster. K is sent as binary-safe arguments (redisCommandArgv), never
   pasted into command text, so quotes, spaces, braces and UTF-8 are fine.
   Different (P, K) pairs always give different Redis keys.

   THE SCRIPTS (EVALSHA; on NOSCRIPT, e.g. after a restart or a failover
   emptied the script cache, the same call is retried once with EVAL):

       acquire  if the lease key exists: answer 0. Else INCR the fence key,
                SET the lease key to the new token with PX ttl, answer the
                token as a decimal string (exact for the whole int64 range).
       renew    PEXPIRE the lease key only if it still holds this token.
       release  DEL the lease key only if it still holds this token.

   ANSWERS: exactly 1 yes, 0 no, negative on any failure: LDL_ESTORE for an
   error reply (WRONGTYPE, OOM, NOSCRIPT twice, a disabled command), nil or a
   reply of the wrong type where a number is due, a token outside
   [1, INT64_MAX], a lost or timed-out connection; LDL_EINVAL for a bad
   argument (NULL, empty key, key of LDL_KEY_MAX bytes or more, ttl 0).
   acquire writes *token_out only when it answers 1.

   THE CONNECTION belongs to the caller: the adapter never connects,
   reconnects, frees it, or changes its settings. Set a command timeout
   (redisSetTimeout) so a hung server cannot block the lock: every store
   call is one synchronous round trip (two after NOSCRIPT). After a timeout
   or a lost connection hiredis marks the context failed (c->err != 0) and
   every later call answers LDL_ESTORE at once without sending anything;
   call redisReconnect(c) (same pointer, nothing to re-init) to carry on;
   hiredis 0.14 drops the command timeout on reconnect, so set it again.
   Ignore SIGPIPE in your program: hiredis writes with plain write(), and a
   server that closed the connection would otherwise kill the process.
   One ldl_redis serves one thread at a time (like its redisContext).

   DURABILITY (read docs/redis.md). A fence only protects a resource while it
   never goes backwards. On a single Redis that needs `appendonly yes` and
   `appendfsync always` (else a crash forgets the last INCRs and hands out a
   token again), and no `allkeys-*` eviction under a maxmemory limit (it may
   evict the fence key). Replication is asynchronous: a failover to a replica
   can lose both the lease and the latest fence values. ldl_redis_check_durability()
   reads CONFIG GET and tells whether this server keeps the fence across a
   restart; call it at start and refuse, warn or carry on as you see fit.

   OPTIONS
     LDL_REDIS_IMPLEMENTATION   in exactly one .c/.cpp file, after the core header
     LDL_STATIC                 makes the functions static (as in the core header)
     LDL_REDIS_PREFIX_MAX       bytes for the prefix including the NUL (default 64)
*/
#ifndef LITE_DI_LOCK_REDIS_H
#define LITE_DI_LOCK_REDIS_H

#include "lite_di_lock.h"
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#ifndef LDL_REDIS_API
#ifdef LDL_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define LDL_REDIS_API static __attribute__((unused))
#else
#define LDL_REDIS_API static
#endif
#else
#define LDL_REDIS_API extern
#endif
#endif

#ifndef LDL_REDIS_PREFIX_MAX
#define LDL_REDIS_PREFIX_MAX 64
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ldl_redis ldl_redis;
struct ldl_redis {                  /* private: complete so the caller owns the storage */
    redisContext *_c;
    size_t        _plen;
    char          _prefix[LDL_REDIS_PREFIX_MAX];
};

/* r, c non-NULL; prefix NULL = "ldl", else shorter than LDL_REDIS_PREFIX_MAX bytes.
   Sends nothing. LDL_OK or LDL_EINVAL. */
LDL_REDIS_API int       ldl_redis_init(ldl_redis *r, redisContext *c, const char *prefix);
/* the adapter view; ctx = r, which must outlive every lock using it */
LDL_REDIS_API ldl_store ldl_redis_store(ldl_redis *r);
/* Reads CONFIG GET appendonly / appendfsync / maxmemory / maxmemory-policy.
   1: the fence survives a restart or crash of THIS server (AOF on, fsync
      always, nothing can evict the fence key);
   0: it may not; why says what to change;
   negative (LDL_ESTORE): the server could not be asked (CONFIG disabled or
      renamed, connection down); why says what happened.
   why may be NULL; it is always NUL-terminated when why_len > 0.
   Replication is never covered: see docs/redis.md. */
LDL_REDIS_API int       ldl_redis_check_durability(ldl_redis *r, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_H */

/* ====================================================================== */
#ifdef LDL_REDIS_IMPLEMENTATION
#ifndef LITE_DI_LOCK_REDIS_C
#define LITE_DI_LOCK_REDIS_C

#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The scripts. Their SHA1s below are checked against the server's SCRIPT LOAD
   by tests/store/redis_adapter.c; a stale SHA would still work (NOSCRIPT ->
   EVAL every time) but slower, so the test keeps them honest. */
static const char ldl__redis_acquire_lua[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\n"
    "local t = redis.call('INCR', KEYS[2])\n"
    "if t < 1 then return redis.error_reply('ERR ldl: fence counter below 1') end\n"
    "redis.call('PERSIST', KEYS[2])\n"
    "local s = redis.call('GET', KEYS[2])\n"
    "redis.call('SET', KEYS[1], s, 'PX', ARGV[1])\n"
    "return s\n";
static const char ldl__redis_acquire_sha[] = "07927fcfef0622677516b765a1675f77822a9708";

static const char ldl__redis_renew_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";
static const char ldl__redis_renew_sha[] = "3a32323a05c08607e6bc7842cfeea9552d0b61f5";

static const char ldl__redis_release_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('DEL', KEYS[1])\n"
    "end\n"
    "return 0\n";
static const char ldl__redis_release_sha[] = "c89cee65b7ab260d98c281f3c3eb6fa7c992cdd2";

/* '{' prefix ':' key '}' ':fence' NUL */
#define LDL__REDIS_KEYBUF (LDL_REDIS_PREFIX_MAX + LDL_KEY_MAX + 16)

LDL_REDIS_API int ldl_redis_init(ldl_redis *r, redisContext *c, const char *prefix)
{
    size_t n;
    if (!r) return LDL_EINVAL;
    memset(r, 0, sizeof *r);
    if (!c) return LDL_EINVAL;
    if (!prefix) prefix = "ldl";
    n = strlen(prefix);
    if (n >= LDL_REDIS_PREFIX_MAX) return LDL_EINVAL;
    memcpy(r->_prefix, prefix, n + 1);
    r->_plen = n;
    r->_c = c;
    return LDL_OK;
}

/* "{prefix:key}suffix" into buf; answers its length, 0 on a bad key */
static size_t ldl__redis_name(const ldl_redis *r, const char *key, const char *suffix, char *buf)
{
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

/* decimal text of v (v >= 0 here) into buf[24]; answers its length */
static size_t ldl__redis_u64(uint64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0, i;
    do { tmp[n++] = (char)('0' + (int)(v % 10u)); v /= 10u; } while (v);
    for (i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

/* strict decimal in [1, INT64_MAX]: digits only, no sign, no leading zero */
static int ldl__redis_token(const char *s, size_t n, int64_t *out)
{
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

/* EVALSHA sha nkeys args...; once more as EVAL when the server says NOSCRIPT.
   argv[0], argv[1] are filled here. NULL when the connection failed. */
static redisReply *ldl__redis_eval(ldl_redis *r, const char *sha, const char *lua,
                                   int argc, const char **argv, size_t *lens)
{
    redisReply *rep;
    if (!r->_c || r->_c->err) return NULL;
    argv[0] = "EVALSHA"; lens[0] = 7;
    argv[1] = sha;       lens[1] = 40;
    rep = (redisReply *)redisCommandArgv(r->_c, argc, argv, lens);
    if (rep && rep->type == REDIS_REPLY_ERROR && rep->str &&
        strncmp(rep->str, "NOSCRIPT", 8) == 0) {
        freeReplyObject(rep);
        argv[0] = "EVAL"; lens[0] = 4;
        argv[1] = lua;    lens[1] = strlen(lua);
        rep = (redisReply *)redisCommandArgv(r->_c, argc, argv, lens);
    }
    return rep;
}

/* a 0/1 integer reply as 0/1; anything else LDL_ESTORE; frees the reply */
static int ldl__redis_yesno(redisReply *rep)
{
    int rc = LDL_ESTORE;
    if (!rep) return LDL_ESTORE;
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        rc = (int)rep->integer;
    freeReplyObject(rep);
    return rc;
}

static int ldl__redis_acquire(void *ctx, const char *key, uint32_t ttl_ms, int64_t *token_out)
{
    ldl_redis *r = (ldl_redis *)ctx;
    char lease[LDL__REDIS_KEYBUF], fence[LDL__REDIS_KEYBUF], ttl[24];
    const char *argv[6];
    size_t lens[6];
    redisReply *rep;
    int rc = LDL_ESTORE;
    int64_t tok = 0;

    if (!r || !token_out || ttl_ms == 0) return LDL_EINVAL;
    lens[3] = ldl__redis_name(r, key, ":lease", lease);
    lens[4] = ldl__redis_name(r, key, ":fence", fence);
    if (!lens[3] || !lens[4]) return LDL_EINVAL;
    argv[2] = "2";   lens[2] = 1;
    argv[3] = lease;
    argv[4] = fence;
    argv[5] = ttl;   lens[5] = ldl__redis_u64(ttl_ms, ttl);
    rep = ldl__redis_eval(r, ldl__redis_acquire_sha, ldl__redis_acquire_lua, 6, argv, lens);
    if (!rep) return LDL_ESTORE;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 0) {
        rc = 0;
    } else if (rep->type == REDIS_REPLY_STRING &&
               ldl__redis_token(rep->str, rep->len, &tok)) {
        *token_out = tok;
        rc = 1;
    }
    freeReplyObject(rep);
    return rc;
}

static int ldl__redis_call(ldl_redis *r, const char *sha, const char *lua, const char *key,
                           int64_t token, uint32_t ttl_ms, int with_ttl)
{
    char lease[LDL__REDIS_KEYBUF], tok[24], ttl[24];
    const char *argv[6];
    size_t lens[6];
    int argc = 5;

    if (!r) return LDL_EINVAL;
    lens[3] = ldl__redis_name(r, key, ":lease", lease);
    if (!lens[3]) return LDL_EINVAL;
    if (with_ttl && ttl_ms == 0) return LDL_EINVAL;
    if (token < 1) return 0;             /* no lease ever carries it */
    argv[2] = "1";   lens[2] = 1;
    argv[3] = lease;
    argv[4] = tok;   lens[4] = ldl__redis_u64((uint64_t)token, tok);
    if (with_ttl) { argv[5] = ttl; lens[5] = ldl__redis_u64(ttl_ms, ttl); argc = 6; }
    return ldl__redis_yesno(ldl__redis_eval(r, sha, lua, argc, argv, lens));
}

static int ldl__redis_renew(void *ctx, const char *key, int64_t token, uint32_t ttl_ms)
{
    return ldl__redis_call((ldl_redis *)ctx, ldl__redis_renew_sha, ldl__redis_renew_lua,
                           key, token, ttl_ms, 1);
}

static int ldl__redis_release(void *ctx, const char *key, int64_t token)
{
    return ldl__redis_call((ldl_redis *)ctx, ldl__redis_release_sha, ldl__redis_release_lua,
                           key, token, 0, 0);
}

LDL_REDIS_API ldl_store ldl_redis_store(ldl_redis *r)
{
    ldl_store s;
    s.acquire = ldl__redis_acquire;
    s.renew = ldl__redis_renew;
    s.release = ldl__redis_release;
    s.ctx = r;
    return s;
}

static void ldl__redis_why(char *why, size_t why_len, const char *a, const char *b)
{
    if (why && why_len > 0) snprintf(why, why_len, "%s%s", a, b ? b : "");
}

/* CONFIG GET name -> value text copied into out[64]; 1 ok, LDL_ESTORE otherwise */
static int ldl__redis_config(ldl_redis *r, const char *name, char *out, char *why, size_t why_len)
{
    const char *argv[3];
    size_t lens[3];
    redisReply *rep;
    int rc = LDL_ESTORE;
    argv[0] = "CONFIG"; lens[0] = 6;
    argv[1] = "GET";    lens[1] = 3;
    argv[2] = name;     lens[2] = strlen(name);
    out[0] = 0;
    if (!r->_c || r->_c->err) {
        ldl__redis_why(why, why_len, "connection not usable: ",
                       r->_c && r->_c->errstr[0] ? r->_c->errstr : "no context");
        return LDL_ESTORE;
    }
    rep = (redisReply *)redisCommandArgv(r->_c, 3, argv, lens);
    if (!rep) {
        ldl__redis_why(why, why_len, "connection failed: ", r->_c->errstr);
        return LDL_ESTORE;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        ldl__redis_why(why, why_len, "CONFIG GET refused: ", rep->str);
    } else if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
               rep->element[1]->type == REDIS_REPLY_STRING && rep->element[1]->len < 64) {
        memcpy(out, rep->element[1]->str, rep->element[1]->len);
        out[rep->element[1]->len] = 0;
        rc = 1;
    } else {
        ldl__redis_why(why, why_len, "unexpected CONFIG GET reply for ", name);
    }
    freeReplyObject(rep);
    return rc;
}

LDL_REDIS_API int ldl_redis_check_durability(ldl_redis *r, char *why, size_t why_len)
{
    char aof[64], fsync_[64], maxmem[64], policy[64];
    if (why && why_len > 0) why[0] = 0;
    if (!r) { ldl__redis_why(why, why_len, "NULL adapter", NULL); return LDL_EINVAL; }
    if (ldl__redis_config(r, "appendonly", aof, why, why_len) != 1 ||
        ldl__redis_config(r, "appendfsync", fsync_, why, why_len) != 1 ||
        ldl__redis_config(r, "maxmemory", maxmem, why, why_len) != 1 ||
        ldl__redis_config(r, "maxmemory-policy", policy, why, why_len) != 1)
        return LDL_ESTORE;
    if (strcmp(aof, "yes") != 0) {
        ldl__redis_why(why, why_len, "appendonly is not yes: a restart or crash can forget the "
                       "fence counter and issue a token again (set appendonly yes)", NULL);
        return 0;
    }
    if (strcmp(fsync_, "always") != 0) {
        ldl__redis_why(why, why_len, "appendfsync is not always: a crash can lose the last "
                       "fence increments (set appendfsync always); it is ", fsync_);
        return 0;
    }
    if (strcmp(maxmem, "0") != 0 && strncmp(policy, "allkeys-", 8) == 0) {
        ldl__redis_why(why, why_len, "maxmemory is set with an allkeys-* eviction policy: the "
                       "fence key may be evicted (use noeviction or a volatile-* policy); it is ",
                       policy);
        return 0;
    }
    ldl__redis_why(why, why_len, "durable on this server: appendonly yes, appendfsync always, "
                   "fence key not evictable (replicas are asynchronous: a failover can still "
                   "lose the fence)", NULL);
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* LITE_DI_LOCK_REDIS_C */
#endif /* LDL_REDIS_IMPLEMENTATION */
