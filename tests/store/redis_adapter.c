/* tests/store/redis_adapter.c -- the Redis adapter against a real redis-server:
 * the shared conformance body, then what only Redis has: exact key names and hash
 * tags, a fence key that never expires, the script SHAs, EVALSHA -> EVAL on NOSCRIPT,
 * adversarial server state (WRONGTYPE, fence counters out of range, INT64_MAX), a
 * killed connection, argument validation and the durability check.
 * Run through tests/store/with_redis.sh (temp dir + cleanup trap). */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/conformance.h"
#include "tests/store/redis_server.h"


/* the hash tag Redis Cluster would hash: text between the first '{' and the next '}' */
static int hash_tag(const char *name, char *out, size_t cap)
{
    const char *o = strchr(name, '{'), *c;
    if (!o) return 0;
    c = strchr(o + 1, '}');
    if (!c || c == o + 1 || (size_t)(c - o - 1) >= cap) return 0;
    memcpy(out, o + 1, (size_t)(c - o - 1));
    out[c - o - 1] = 0;
    return 1;
}


static void test_scripts(redisContext *c)
{
    static const char *const lua[3] = { ldl__redis_acquire_lua, ldl__redis_renew_lua, ldl__redis_release_lua };
    static const char *const sha[3] = { ldl__redis_acquire_sha, ldl__redis_renew_sha, ldl__redis_release_sha };
    int i;
    for (i = 0; i < 3; i++) {
        redisReply *r = rs_cmd(c, "SCRIPT", "LOAD", lua[i], NULL);
        ST_CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, sha[i]) == 0,
                 "script %d: server SHA %s, header says %s", i, r && r->str ? r->str : "(none)", sha[i]);
        if (r) freeReplyObject(r);
    }
}

static void test_key_names(redisContext *c, ldl_redis *ra)
{
    ldl_store s = ldl_redis_store(ra);
    const char *keys[] = { "it's", "{br}", "}{x", "a;--", "na\xc3\xafve-\xe6\x97\xa5", "sp ace" };
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char lease[300], fence[300], tl[200], tf[200];
        int64_t t = 0;
        snprintf(lease, sizeof lease, "{ldl:%s}:lease", keys[i]);
        snprintf(fence, sizeof fence, "{ldl:%s}:fence", keys[i]);
        ST_CHECK(s.acquire(s.ctx, keys[i], 5000, &t) == 1, "acquire key #%zu", i);
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", lease, NULL), -9) == 1, "lease key %s missing", lease);
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", fence, NULL), -9) == 1, "fence key %s missing", fence);
        {
            long long pttl = rs_int(rs_cmd(c, "PTTL", lease, NULL), -9);
            ST_CHECK(pttl > 4000 && pttl <= 5000, "lease PTTL %lld, want (4000, 5000]", pttl);
        }
        {
            redisReply *r = rs_cmd(c, "GET", lease, NULL);
            char want[32];
            snprintf(want, sizeof want, "%lld", (long long)t);
            ST_CHECK(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0,
                     "lease value %s, want %s", r && r->str ? r->str : "(nil)", want);
            if (r) freeReplyObject(r);
        }
        ST_CHECK(hash_tag(lease, tl, sizeof tl) && hash_tag(fence, tf, sizeof tf) && strcmp(tl, tf) == 0,
                 "key #%zu: lease and fence hash tags differ", i);
        ST_CHECK(s.release(s.ctx, keys[i], t) == 1, "release key #%zu", i);
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", lease, NULL), -9) == 0, "lease key %s left after release", lease);
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", fence, NULL), -9) == 1, "fence key %s deleted by release", fence);
        ST_CHECK(rs_int(rs_cmd(c, "PTTL", fence, NULL), -9) == -1, "fence key %s has a TTL", fence);
    }
    /* a fence key someone gave a TTL is made persistent again by the next grant */
    {
        int64_t t = 0;
        ST_CHECK(rs_int(rs_cmd(c, "PEXPIRE", "{ldl:it's}:fence", "100000", NULL), -9) == 1, "%s", "pexpire fence");
        ST_CHECK(s.acquire(s.ctx, "it's", 5000, &t) == 1, "%s", "acquire after fence TTL");
        ST_CHECK(rs_int(rs_cmd(c, "PTTL", "{ldl:it's}:fence", NULL), -9) == -1, "%s", "fence TTL not removed");
        ST_CHECK(s.release(s.ctx, "it's", t) == 1, "%s", "release");
    }
}

static void test_noscript(redisContext *c, ldl_redis *ra)
{
    ldl_store s = ldl_redis_store(ra);
    long eval0, sha0, eval1, sha1, eval2, sha2;
    int64_t t = 0;
    ST_CHECK(rs_is(rs_cmd(c, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "script flush");
    eval0 = rs_cmd_calls(c, "eval");
    sha0 = rs_cmd_calls(c, "evalsha");
    ST_CHECK(s.acquire(s.ctx, "noscript", 5000, &t) == 1 && t >= 1, "%s", "acquire after SCRIPT FLUSH");
    eval1 = rs_cmd_calls(c, "eval");
    sha1 = rs_cmd_calls(c, "evalsha");
    ST_CHECK(eval1 == eval0 + 1, "EVAL fallback calls %ld -> %ld, want +1", eval0, eval1);
    ST_CHECK(sha1 == sha0 + 1, "EVALSHA attempts %ld -> %ld, want +1", sha0, sha1);
    /* release's own script is not cached yet: one more fallback (counted below) */
    ST_CHECK(s.release(s.ctx, "noscript", t) == 1, "%s", "release after flush");
    ST_CHECK(rs_is(rs_cmd(c, "SCRIPT", "FLUSH", NULL), "OK"), "%s", "script flush 2");
    ST_CHECK(s.acquire(s.ctx, "noscript", 5000, &t) == 1, "%s", "acquire after second flush");
    ST_CHECK(s.renew(s.ctx, "noscript", t, 5000) == 1, "%s", "renew after flush (own script)");
    ST_CHECK(s.renew(s.ctx, "noscript", t, 5000) == 1, "%s", "renew again (cached by the EVAL)");
    eval2 = rs_cmd_calls(c, "eval");
    sha2 = rs_cmd_calls(c, "evalsha");
    /* release, acquire, renew fell back once each; the second renew was EVALSHA only */
    ST_CHECK(eval2 == eval1 + 3 && sha2 == sha1 + 4,
             "eval %ld->%ld (want +3), evalsha %ld->%ld (want +4)", eval1, eval2, sha1, sha2);
    ST_CHECK(s.release(s.ctx, "noscript", t) == 1, "%s", "release");
}

static void test_adversarial(redisContext *c, ldl_redis *ra)
{
    ldl_store s = ldl_redis_store(ra);
    int64_t t;
    int rc;

    /* fence key of another type: INCR -> WRONGTYPE -> negative, no token, no lease */
    ST_CHECK(rs_int(rs_cmd(c, "HSET", "{ldl:wt}:fence", "f", "v", NULL), -9) == 1, "%s", "hset");
    t = -777;
    rc = s.acquire(s.ctx, "wt", 5000, &t);
    ST_CHECK(rc < 0 && t == -777, "acquire with a hash at the fence key = %d token %lld", rc, (long long)t);
    ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{ldl:wt}:lease", NULL), -9) == 0, "%s", "lease created on error");

    /* lease key of another type: renew/release -> WRONGTYPE -> negative; acquire -> no */
    ST_CHECK(rs_int(rs_cmd(c, "RPUSH", "{ldl:wl}:lease", "x", NULL), -9) == 1, "%s", "rpush");
    rc = s.renew(s.ctx, "wl", 1, 5000);
    ST_CHECK(rc < 0, "renew with a list at the lease key = %d, want negative", rc);
    rc = s.release(s.ctx, "wl", 1);
    ST_CHECK(rc < 0, "release with a list at the lease key = %d, want negative", rc);
    t = -777;
    rc = s.acquire(s.ctx, "wl", 5000, &t);
    ST_CHECK(rc == 0 && t == -777, "acquire with a foreign lease key = %d (want 0: occupied)", rc);

    /* fence counters out of range */
    {
        static const char *const bad[] = { "-5", "-1", "abc", "1.5", "9223372036854775807" };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            ST_CHECK(rs_is(rs_cmd(c, "SET", "{ldl:fr}:fence", bad[i], NULL), "OK"), "%s", "set fence");
            t = -777;
            rc = s.acquire(s.ctx, "fr", 5000, &t);
            ST_CHECK(rc < 0 && t == -777, "acquire over fence \"%s\" = %d token %lld, want negative",
                     bad[i], rc, (long long)t);
            ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{ldl:fr}:lease", NULL), -9) == 0,
                     "lease created over fence \"%s\"", bad[i]);
        }
    }
    /* the top of the range: INT64_MAX is granted exactly, then the counter is exhausted */
    ST_CHECK(rs_is(rs_cmd(c, "SET", "{ldl:top}:fence", "9223372036854775806", NULL), "OK"), "%s", "set top");
    t = -777;
    rc = s.acquire(s.ctx, "top", 5000, &t);
    ST_CHECK(rc == 1 && t == INT64_MAX, "acquire at the top = %d token %lld", rc, (long long)t);
    ST_CHECK(s.renew(s.ctx, "top", INT64_MAX, 5000) == 1, "%s", "renew INT64_MAX");
    ST_CHECK(s.renew(s.ctx, "top", INT64_MAX - 1, 5000) == 0, "%s", "renew INT64_MAX-1 refused");
    ST_CHECK(s.release(s.ctx, "top", INT64_MAX) == 1, "%s", "release INT64_MAX");
    t = -777;
    rc = s.acquire(s.ctx, "top", 5000, &t);
    ST_CHECK(rc < 0 && t == -777, "acquire past INT64_MAX = %d token %lld, want negative", rc, (long long)t);

    /* a lease key holding something that is not our token text */
    ST_CHECK(rs_is(rs_cmd(c, "SET", "{ldl:txt}:lease", "01", NULL), "OK"), "%s", "set lease 01");
    ST_CHECK(s.renew(s.ctx, "txt", 1, 5000) == 0, "%s", "renew token 1 vs stored \"01\" must be 0");
    ST_CHECK(s.release(s.ctx, "txt", 1) == 0, "%s", "release token 1 vs stored \"01\" must be 0");

    /* tokens that no lease can carry */
    ST_CHECK(s.renew(s.ctx, "txt", 0, 5000) == 0, "%s", "renew token 0");
    ST_CHECK(s.release(s.ctx, "txt", -1) == 0, "%s", "release token -1");
}

static void test_args(redisContext *c)
{
    ldl_redis r;
    ldl_store s;
    char longp[LDL_REDIS_PREFIX_MAX + 1], longk[LDL_KEY_MAX + 1];
    int64_t t = -777;
    memset(longp, 'p', sizeof longp - 1); longp[sizeof longp - 1] = 0;
    memset(longk, 'k', sizeof longk - 1); longk[sizeof longk - 1] = 0;
    ST_CHECK(ldl_redis_init(NULL, c, NULL) == LDL_EINVAL, "%s", "init NULL r");
    ST_CHECK(ldl_redis_init(&r, NULL, NULL) == LDL_EINVAL, "%s", "init NULL c");
    ST_CHECK(ldl_redis_init(&r, c, longp) == LDL_EINVAL, "%s", "init long prefix");
    longp[LDL_REDIS_PREFIX_MAX - 1] = 0;
    ST_CHECK(ldl_redis_init(&r, c, longp) == LDL_OK, "%s", "init prefix of PREFIX_MAX-1");
    ST_CHECK(ldl_redis_init(&r, c, NULL) == LDL_OK, "%s", "init");
    s = ldl_redis_store(&r);
    ST_CHECK(s.acquire && s.renew && s.release && s.ctx == &r, "%s", "store view");
    ST_CHECK(s.acquire(s.ctx, "", 100, &t) == LDL_EINVAL && t == -777, "%s", "empty key");
    ST_CHECK(s.acquire(s.ctx, NULL, 100, &t) == LDL_EINVAL, "%s", "NULL key");
    ST_CHECK(s.acquire(s.ctx, longk, 100, &t) == LDL_EINVAL, "%s", "key of LDL_KEY_MAX bytes");
    ST_CHECK(s.acquire(s.ctx, "k", 0, &t) == LDL_EINVAL, "%s", "ttl 0");
    ST_CHECK(s.acquire(s.ctx, "k", 100, NULL) == LDL_EINVAL, "%s", "NULL token_out");
    ST_CHECK(s.renew(s.ctx, longk, 1, 100) == LDL_EINVAL, "%s", "renew long key");
    ST_CHECK(s.renew(s.ctx, "k", 1, 0) == LDL_EINVAL, "%s", "renew ttl 0");
    ST_CHECK(s.release(s.ctx, "", 1) == LDL_EINVAL, "%s", "release empty key");
    ST_CHECK(t == -777, "%s", "token_out written on an invalid call");

    /* prefixes isolate: the same key under two prefixes is two locks */
    {
        ldl_redis p1, p2;
        ldl_store s1, s2;
        int64_t t1 = 0, t2 = 0;
        ldl_redis_init(&p1, c, "app1");
        ldl_redis_init(&p2, c, "app2");
        s1 = ldl_redis_store(&p1);
        s2 = ldl_redis_store(&p2);
        ST_CHECK(s1.acquire(s1.ctx, "shared", 5000, &t1) == 1, "%s", "prefix app1");
        ST_CHECK(s2.acquire(s2.ctx, "shared", 5000, &t2) == 1, "%s", "prefix app2 independent");
        ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{app1:shared}:lease", "{app2:shared}:lease", NULL), -9) == 2,
                 "%s", "prefixed lease keys");
        ST_CHECK(s1.release(s1.ctx, "shared", t1) == 1 && s2.release(s2.ctx, "shared", t2) == 1, "%s",
                 "prefix release");
    }
}

static void test_durability(rs_server *srv, redisContext *c, ldl_redis *ra)
{
    char why[256];
    int rc;
    (void)srv;
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 0 && strstr(why, "appendonly"), "no AOF: check = %d (%s)", rc, why);
    ST_CHECK(rs_is(rs_cmd(c, "CONFIG", "SET", "appendonly", "yes", NULL), "OK"), "%s", "config aof");
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 0 && strstr(why, "appendfsync"), "AOF everysec: check = %d (%s)", rc, why);
    ST_CHECK(rs_is(rs_cmd(c, "CONFIG", "SET", "appendfsync", "always", NULL), "OK"), "%s", "config fsync");
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 1, "AOF always: check = %d (%s)", rc, why);
    ST_CHECK(rs_is(rs_cmd(c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru", NULL), "OK"), "%s", "policy");
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 1, "allkeys-lru without maxmemory: check = %d (%s)", rc, why);
    ST_CHECK(rs_is(rs_cmd(c, "CONFIG", "SET", "maxmemory", "1gb", NULL), "OK"), "%s", "maxmemory");
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 0 && strstr(why, "evict"), "allkeys-lru with maxmemory: check = %d (%s)", rc, why);
    ST_CHECK(rs_is(rs_cmd(c, "CONFIG", "SET", "maxmemory-policy", "volatile-lru", NULL), "OK"), "%s", "policy 2");
    rc = ldl_redis_check_durability(ra, why, sizeof why);
    ST_CHECK(rc == 1, "volatile-lru with maxmemory: check = %d (%s)", rc, why);
    {
        redisReply *r;
        r = rs_cmd(c, "CONFIG", "SET", "maxmemory", "0", NULL); if (r) freeReplyObject(r);
        r = rs_cmd(c, "CONFIG", "SET", "maxmemory-policy", "noeviction", NULL); if (r) freeReplyObject(r);
        r = rs_cmd(c, "CONFIG", "SET", "appendonly", "no", NULL); if (r) freeReplyObject(r);
    }
    /* a user without CONFIG rights (managed Redis often disables CONFIG): negative + why */
    {
        redisContext *u = rs_connect(srv, 1000);
        ldl_redis ru;
        ST_CHECK(rs_is(rs_cmd(c, "ACL", "SETUSER", "lim", "on", ">pw", "~*", "+@all", "-config", NULL), "OK"),
                 "%s", "acl setuser");
        ST_CHECK(u && rs_is(rs_cmd(u, "AUTH", "lim", "pw", NULL), "OK"), "%s", "auth lim");
        ldl_redis_init(&ru, u, NULL);
        rc = ldl_redis_check_durability(&ru, why, sizeof why);
        ST_CHECK(rc < 0 && strstr(why, "refused"), "CONFIG denied: check = %d (%s)", rc, why);
        {
            ldl_store s = ldl_redis_store(&ru);
            int64_t t = 0;
            ST_CHECK(s.acquire(s.ctx, "lim", 1000, &t) == 1 && s.release(s.ctx, "lim", t) == 1, "%s",
                     "the adapter itself works without CONFIG");
        }
        ST_CHECK(ldl_redis_check_durability(&ru, NULL, 0) < 0, "%s", "why NULL");
        if (u) redisFree(u);
    }
}

static void test_lost_connection(redisContext *admin, const rs_server *srv)
{
    redisContext *c = rs_connect(srv, 500);
    ldl_redis r;
    ldl_store s;
    int64_t t = -777;
    int rc;
    long long id;
    char idstr[32];
    ST_CHECK(c != NULL, "%s", "connect");
    if (!c) return;
    ldl_redis_init(&r, c, NULL);
    s = ldl_redis_store(&r);
    id = rs_int(rs_cmd(c, "CLIENT", "ID", NULL), -1);
    snprintf(idstr, sizeof idstr, "%lld", id);
    ST_CHECK(rs_int(rs_cmd(admin, "CLIENT", "KILL", "ID", idstr, NULL), -9) == 1, "%s", "client kill");
    rc = s.acquire(s.ctx, "lostconn", 1000, &t);
    ST_CHECK(rc < 0 && t == -777, "acquire on a killed connection = %d token %lld", rc, (long long)t);
    ST_CHECK(c->err != 0, "%s", "context not marked failed");
    ST_CHECK(s.renew(s.ctx, "lostconn", 1, 1000) < 0, "%s", "renew on a failed context");
    ST_CHECK(s.release(s.ctx, "lostconn", 1) < 0, "%s", "release on a failed context");
    ST_CHECK(rs_reconnect(c, 500) == REDIS_OK, "%s", "reconnect");
    rc = s.acquire(s.ctx, "lostconn", 1000, &t);
    ST_CHECK(rc == 1 && t >= 1, "acquire after reconnect = %d", rc);
    ST_CHECK(s.release(s.ctx, "lostconn", t) == 1, "%s", "release after reconnect");
    redisFree(c);
}

int main(void)
{
    rs_server srv;
    redisContext *ca, *cb;
    ldl_redis ra, rb;
    conf_env e;
    uint64_t t0 = st_now_ms();

    st_ignore_sigpipe();
    if (rs_start(&srv, "redis-adapter", 0) != 0) {
        ST_CHECK(0, "%s", "redis-server did not start");
        return st_report();
    }
    ca = rs_connect(&srv, 1000);
    cb = rs_connect(&srv, 1000);
    ST_CHECK(ca && cb, "%s", "connect");
    if (!ca || !cb) { rs_stop(&srv); return st_report(); }
    ST_CHECK(ldl_redis_init(&ra, ca, NULL) == LDL_OK && ldl_redis_init(&rb, cb, NULL) == LDL_OK, "%s", "init");

    memset(&e, 0, sizeof e);
    e.name = "redis";
    e.a = ldl_redis_store(&ra);
    e.b = ldl_redis_store(&rb);
    e.ttl_ms = 300;
    e.sleep_ms = conf_real_sleep;
    e.tokens_per_key = 1;
    conf_run(&e);

    st_case("scripts", RS_CASE_S);
    test_scripts(ca);
    st_case("key_names", RS_CASE_S);
    test_key_names(ca, &ra);
    st_case("noscript", RS_CASE_S);
    test_noscript(ca, &ra);
    st_case("adversarial", RS_CASE_S);
    test_adversarial(ca, &ra);
    st_case("args", RS_CASE_S);
    test_args(ca);
    st_case("durability", RS_CASE_S);
    test_durability(&srv, ca, &ra);
    st_case("lost_connection", RS_CASE_S);
    test_lost_connection(ca, &srv);

    redisFree(ca);
    redisFree(cb);
    rs_stop(&srv);
    fprintf(stderr, "redis_adapter: %llu ms\n", (unsigned long long)(st_now_ms() - t0));
    return st_report();
}
