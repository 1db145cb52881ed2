/* tests/store/redis_fence.c -- fenced writes (issue 19) through the Redis adapter, against a
 * real redis-server this program starts itself:
 *   script       the SHA in the header is the server's; the mark's exact name
 *   protocol     first fence passes, equal passes, lower refused (nothing runs), higher passes;
 *                fences compared exactly over the whole int64 range (2^53 + 1 vs 2^53)
 *   replies      status, integer, bulk, nil, array (empty, with a nil inside) come back with
 *                the type and content the same command gives without the script
 *   hostile      resource names with quotes, braces, binary bytes, 1 KB, over the limit; fence
 *                0, negative, INT64_MAX; bad argv / keys; a key of the wrong type at the
 *                mark's name; a mark holding no fence; nothing sent for a refused call
 *   command err  a command that fails inside the script: LDL_ESTORE, kind COMMAND, its error
 *                reply handed out, the mark NOT moved
 *   ACL          the documented rights work; a user who may not SET the mark (read-only
 *                key pattern, or no +set) is refused before the command runs
 *   NOSCRIPT     script cache flushed: the synchronous call falls back to EVAL
 *   nonce        a server (a fake of ours) answering with another nonce is never accepted,
 *                in both views; the same fake with the right nonce is (the control)
 *   SIGSTOP      a holder paused past its lease, continued after its successor wrote: its
 *                fenced write is refused and the key holds the successor's data
 *   many         NPROC processes x NROUND rounds on one resource: both in-lease writes (equal
 *                fence) accepted, late writes refused or accepted only while no higher fence
 *                wrote: the accepted log is fence-monotonic
 *   pipeline     the non-blocking view: many fenced writes of many resources pipelined
 *                before one pump, answered exactly as a model says; first one as EVAL;
 *                NOSCRIPT mid-link answers "not run" and changes nothing; pool full;
 *                link failure completes every queued write with LDL_ESTORE
 * Run through tests/store/with_redis.sh. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"

#define NPROC  4
#define NROUND 40

static rs_server g_srv;

/* ------------------------------------------------------------ helpers */
static long evals(redisContext *c) { return rs_cmd_calls(c, "eval") + rs_cmd_calls(c, "evalsha"); }

/* GET of a binary-safe key name: its string into out (cap), 1; 0 nil; -1 else */
static int get_bin(redisContext *c, const char *k, size_t kl, char *out, size_t cap)
{
    const char *argv[2];
    size_t lens[2];
    redisReply *r;
    int rc = -1;
    argv[0] = "GET"; lens[0] = 3;
    argv[1] = k; lens[1] = kl;
    r = (redisReply *)redisCommandArgv(c, 2, argv, lens);
    if (r && r->type == REDIS_REPLY_NIL) rc = 0;
    else if (r && r->type == REDIS_REPLY_STRING && r->len < cap) { memcpy(out, r->str, r->len); out[r->len] = 0; rc = 1; }
    if (r) freeReplyObject(r);
    return rc;
}

/* the mark's value as an integer, 0 when missing, -1 unreadable */
static long long mark_of(redisContext *c, ldl_redis *r, const char *res)
{
    char name[LDL_REDIS_FENCE_NAME_MAX + 80], v[64];
    size_t n = ldl_redis_fence_mark(r, res, name, sizeof name);
    int g;
    if (!n) return -1;
    g = get_bin(c, name, n, v, sizeof v);
    return g == 1 ? strtoll(v, NULL, 10) : g == 0 ? 0 : -1;
}

/* a fenced command from a NULL-terminated list, keys argv[1..nkeys] */
static int fence3(ldl_redis *r, const char *res, int64_t f, int nkeys, redisReply **out, const char *a0, ...)
{
    const char *argv[16];
    int argc = 0;
    va_list ap;
    const char *s = a0;
    va_start(ap, a0);
    while (s && argc < 16) { argv[argc++] = s; s = va_arg(ap, const char *); }
    va_end(ap);
    return ldl_redis_fence(r, res, f, nkeys, NULL, argc, argv, NULL, out);
}

/* two replies equal in type and content, recursively */
static int same_reply(const redisReply *a, const redisReply *b)
{
    size_t i;
    if (!a || !b || a->type != b->type) return 0;
    switch (a->type) {
    case REDIS_REPLY_INTEGER: return a->integer == b->integer;
    case REDIS_REPLY_NIL: return 1;
    case REDIS_REPLY_ARRAY:
        if (a->elements != b->elements) return 0;
        for (i = 0; i < a->elements; i++) if (!same_reply(a->element[i], b->element[i])) return 0;
        return 1;
    default: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    }
}

/* ------------------------------------------------------------ script and names */
static void test_script_and_names(redisContext *c, ldl_redis *r)
{
    redisReply *rep = rs_cmd(c, "SCRIPT", "LOAD", ldl__redis_fence_lua, NULL);
    char buf[64];
    ST_CHECK(rep && rep->type == REDIS_REPLY_STRING && strcmp(rep->str, ldl__redis_fence_sha) == 0,
             "fence script: server SHA %s, header says %s", rep && rep->str ? rep->str : "(none)", ldl__redis_fence_sha);
    if (rep) freeReplyObject(rep);
    ST_CHECK(ldl_redis_fence_mark(r, "report:42", buf, sizeof buf) == 20 && strcmp(buf, "{report:42}:ldl:mark") == 0,
             "mark name: %s", buf);
    ST_CHECK(ldl_redis_fence_mark(r, "report:42", buf, 20) == 0 && buf[0] == 0, "%s", "mark: buffer one byte short");
    ST_CHECK(ldl_redis_fence_mark(r, "", buf, sizeof buf) == 0, "%s", "mark: empty resource");
    ST_CHECK(ldl_redis_fence_mark(r, NULL, buf, sizeof buf) == 0, "%s", "mark: NULL resource");
    ST_CHECK(ldl_redis_fence_mark(NULL, "x", buf, sizeof buf) == 0, "%s", "mark: NULL adapter");
}

/* ------------------------------------------------------------ the protocol */
static void test_protocol(redisContext *c, ldl_redis *r)
{
    redisReply *rep = NULL;
    int rc;
    rc = fence3(r, "p1", 5, 1, &rep, "SET", "{p1}:data", "five", NULL);
    ST_CHECK(rc == 1 && rep && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "OK") == 0,
             "first fence for a new resource passes: %d %s", rc, ldl_redis_why(r));
    if (rep) freeReplyObject(rep);
    ST_CHECK(mark_of(c, r, "p1") == 5, "%s", "mark raised to 5");
    rc = fence3(r, "p1", 5, 1, &rep, "SET", "{p1}:data", "five-again", NULL);
    ST_CHECK(rc == 1 && rep, "equal fence passes: %d", rc);
    if (rep) freeReplyObject(rep);
    rep = (redisReply *)1;
    rc = fence3(r, "p1", 4, 1, &rep, "SET", "{p1}:data", "four", NULL);
    ST_CHECK(rc == 0 && rep == NULL, "lower fence refused, no reply: %d", rc);
    ST_CHECK(rs_is(rs_cmd(c, "GET", "{p1}:data", NULL), "five-again"), "%s", "the stale write did not run");
    ST_CHECK(mark_of(c, r, "p1") == 5, "%s", "mark stays 5");
    rc = fence3(r, "p1", 6, 1, NULL, "SET", "{p1}:data", "six", NULL);
    ST_CHECK(rc == 1 && mark_of(c, r, "p1") == 6 && rs_is(rs_cmd(c, "GET", "{p1}:data", NULL), "six"),
             "higher fence passes, reply_out NULL allowed: %d", rc);
    ST_CHECK(rs_int(rs_cmd(c, "TTL", "{p1}:ldl:mark", NULL), 0) == -1, "%s", "the mark never expires");
    /* resources are independent */
    rc = fence3(r, "p2", 1, 1, NULL, "SET", "{p2}:data", "one", NULL);
    ST_CHECK(rc == 1 && mark_of(c, r, "p2") == 1, "%s", "another resource starts at its own mark");
    /* exact compare above 2^53 (a double would call these equal) */
    rc = fence3(r, "big", INT64_C(9007199254740993), 1, NULL, "SET", "{big}:d", "a", NULL);
    ST_CHECK(rc == 1, "2^53+1 passes: %d", rc);
    rc = fence3(r, "big", INT64_C(9007199254740992), 1, NULL, "SET", "{big}:d", "b", NULL);
    ST_CHECK(rc == 0, "2^53 after 2^53+1 is stale: %d", rc);
    rc = fence3(r, "big", INT64_C(10000000000000000), 1, NULL, "SET", "{big}:d", "c", NULL);
    ST_CHECK(rc == 1, "a longer decimal is higher: %d", rc);
    rc = fence3(r, "big", INT64_C(9999999999999999), 1, NULL, "SET", "{big}:d", "d", NULL);
    ST_CHECK(rc == 0, "a shorter decimal is lower although its text sorts after: %d", rc);
    rc = fence3(r, "big", INT64_MAX, 1, NULL, "SET", "{big}:d", "e", NULL);
    ST_CHECK(rc == 1, "INT64_MAX passes: %d", rc);
    rc = fence3(r, "big", INT64_MAX, 1, NULL, "SET", "{big}:d", "f", NULL);
    ST_CHECK(rc == 1, "INT64_MAX again (equal) passes: %d", rc);
    rc = fence3(r, "big", INT64_MAX - 1, 1, NULL, "SET", "{big}:d", "g", NULL);
    ST_CHECK(rc == 0 && rs_is(rs_cmd(c, "GET", "{big}:d", NULL), "f"), "INT64_MAX-1 after INT64_MAX stale: %d", rc);
    {
        char v[32];
        ST_CHECK(get_bin(c, "{big}:ldl:mark", 14, v, sizeof v) == 1 && strcmp(v, "9223372036854775807") == 0,
                 "mark holds INT64_MAX exactly: %s", v);
    }
}

/* ------------------------------------------------------------ reply types */
static redisReply *plain_argv(redisContext *c, int argc, const char **argv)
{
    return (redisReply *)redisCommandArgv(c, argc, argv, NULL);
}

/* run argv fenced, restore the state with setup, run it plainly: same reply */
static void same_both_ways(redisContext *c, ldl_redis *r, const char *what, void (*setup)(redisContext *),
                           int nkeys, int argc, const char **argv, int want_type)
{
    redisReply *plain, *fenced = NULL;
    int rc;
    setup(c);
    rc = ldl_redis_fence(r, "rt", 1, nkeys, NULL, argc, argv, NULL, &fenced);
    setup(c);
    plain = plain_argv(c, argc, argv);
    ST_CHECK(rc == 1 && fenced && plain && fenced->type == want_type && same_reply(fenced, plain),
             "%s: rc %d, type %d (plain %d, want %d) %s", what, rc, fenced ? fenced->type : -1,
             plain ? plain->type : -1, want_type, ldl_redis_why(r));
    if (plain) freeReplyObject(plain);
    if (fenced) freeReplyObject(fenced);
}

static void setup_rt(redisContext *c)
{
    freeReplyObject(rs_cmd(c, "DEL", "{rt}:s", "{rt}:n", "{rt}:z", "{rt}:h", "{rt}:none", NULL));
    freeReplyObject(rs_cmd(c, "SET", "{rt}:s", "old", NULL));
    freeReplyObject(rs_cmd(c, "SET", "{rt}:n", "41", NULL));
    freeReplyObject(rs_cmd(c, "ZADD", "{rt}:z", "1", "a", "2", "b", "3", "c", NULL));
    freeReplyObject(rs_cmd(c, "HSET", "{rt}:h", "f1", "v1", NULL));
}

static void test_reply_types(redisContext *c, ldl_redis *r)
{
    static const char *set[] = { "SET", "{rt}:s", "new" };
    static const char *incr[] = { "INCR", "{rt}:n" };
    static const char *getset[] = { "SET", "{rt}:s", "newer", "GET" };
    static const char *getnil[] = { "SET", "{rt}:none", "x", "GET" };
    static const char *pop[] = { "ZPOPMIN", "{rt}:z", "2" };
    static const char *popnone[] = { "ZPOPMIN", "{rt}:none", "2" };
    static const char *hmget[] = { "HMGET", "{rt}:h", "f1", "nosuch" };
    static const char *neg[] = { "INCRBY", "{rt}:n", "-100" };
    redisReply *rep = NULL;
    same_both_ways(c, r, "status (SET)", setup_rt, 1, 3, set, REDIS_REPLY_STATUS);
    same_both_ways(c, r, "integer (INCR)", setup_rt, 1, 2, incr, REDIS_REPLY_INTEGER);
    same_both_ways(c, r, "negative integer (INCRBY)", setup_rt, 1, 3, neg, REDIS_REPLY_INTEGER);
    same_both_ways(c, r, "bulk (SET .. GET)", setup_rt, 1, 4, getset, REDIS_REPLY_STRING);
    same_both_ways(c, r, "nil (SET .. GET of a new key)", setup_rt, 1, 4, getnil, REDIS_REPLY_NIL);
    same_both_ways(c, r, "array (ZPOPMIN 2)", setup_rt, 1, 3, pop, REDIS_REPLY_ARRAY);
    same_both_ways(c, r, "empty array (ZPOPMIN of nothing)", setup_rt, 1, 3, popnone, REDIS_REPLY_ARRAY);
    same_both_ways(c, r, "array with a nil inside (HMGET)", setup_rt, 1, 4, hmget, REDIS_REPLY_ARRAY);
    /* the contents, spelled out once */
    setup_rt(c);
    ST_CHECK(ldl_redis_fence(r, "rt", 1, 1, NULL, 4, hmget, NULL, &rep) == 1 && rep &&
             rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
             rep->element[0]->type == REDIS_REPLY_STRING && strcmp(rep->element[0]->str, "v1") == 0 &&
             rep->element[1]->type == REDIS_REPLY_NIL, "%s", "HMGET reply spelled out");
    if (rep) freeReplyObject(rep);
    rep = NULL;
    ST_CHECK(ldl_redis_fence(r, "rt", 1, 1, NULL, 2, incr, NULL, &rep) == 1 && rep &&
             rep->type == REDIS_REPLY_INTEGER && rep->integer == 42, "%s", "INCR 41 -> 42");
    if (rep) freeReplyObject(rep);
}

/* a reply over the adapter's bounds: the call fails, the connection is dropped, the write ran */
static void test_big_reply(redisContext *c)
{
    static char v[5001];
    redisContext *bc = rs_connect(&g_srv, 3000);
    ldl_redis br;
    redisReply *rep = NULL;
    int rc;
    memset(v, 'v', 5000);
    v[5000] = 0;
    if (!bc || ldl_redis_init(&br, bc, NULL) != LDL_OK) { ST_CHECK(0, "%s", "connect"); return; }
    ST_CHECK(fence3(&br, "bigrep", 1, 1, NULL, "SET", "{bigrep}:s", v, NULL) == 1, "%s", "5,000-byte value written");
    rc = fence3(&br, "bigrep", 2, 1, &rep, "SET", "{bigrep}:s", "short", "GET", NULL);
    ST_CHECK(rc == LDL_ESTORE && rep == NULL && bc->err && ldl_redis_last_error(&br)->kind == LDL_REDIS_ERR_PROTOCOL,
             "a 5,000-byte reply refused: %d %s", rc, ldl_redis_why(&br));
    ST_CHECK(rs_is(rs_cmd(c, "GET", "{bigrep}:s", NULL), "short") && rs_is(rs_cmd(c, "GET", "{bigrep}:ldl:mark", NULL), "2"),
             "%s", "the write and the mark happened all the same");
    ST_CHECK(fence3(&br, "bigrep", 3, 1, NULL, "SET", "{bigrep}:s", "x", NULL) == LDL_ESTORE, "%s",
             "the dropped connection answers at once");
    redisFree(bc);
}

/* ------------------------------------------------------------ hostile input */
static void test_hostile(redisContext *c, ldl_redis *r)
{
    static char big[LDL_REDIS_FENCE_NAME_MAX + 8], bin[300], key[LDL_REDIS_FENCE_NAME_MAX + 16];
    static char name[LDL_REDIS_FENCE_NAME_MAX + 80];
    const char *names[6];
    size_t i, n;
    int k, rc;
    long before;
    const char *argv[70];
    int keyidx[4];
    redisReply *rep;

    /* binary: every byte 1..255 */
    for (i = 0; i < 255; i++) bin[i] = (char)(i + 1);
    bin[255] = 0;
    memset(big, 'q', LDL_REDIS_FENCE_NAME_MAX - 1);
    big[LDL_REDIS_FENCE_NAME_MAX - 1] = 0;        /* 1024 bytes: the longest allowed */
    names[0] = "it's \"quoted\" \\ 'x'";
    names[1] = "{braces}}{";
    names[2] = "}starts-with-a-brace";
    names[3] = bin;
    names[4] = big;
    names[5] = "sp ace\t:colon:";
    for (k = 0; k < 6; k++) {
        const char *set[3];
        char v[8];
        int g;
        set[0] = "SET"; set[1] = "hostile:data"; set[2] = "v";
        rc = ldl_redis_fence(r, names[k], 7, 1, NULL, 3, set, NULL, NULL);
        n = ldl_redis_fence_mark(r, names[k], name, sizeof name);
        g = n ? get_bin(c, name, n, v, sizeof v) : -1;
        ST_CHECK(rc == 1 && n == strlen(names[k]) + 11 && name[0] == '{' && memcmp(name + 1, names[k], strlen(names[k])) == 0 &&
                 memcmp(name + n - 10, "}:ldl:mark", 10) == 0 && g == 1 && strcmp(v, "7") == 0,
                 "hostile resource %d: rc %d mark len %zu (%s)", k, rc, n, ldl_redis_why(r));
        rc = ldl_redis_fence(r, names[k], 6, 1, NULL, 3, set, NULL, NULL);
        ST_CHECK(rc == 0, "hostile resource %d: its own mark is compared (stale 6 < 7): %d", k, rc);
    }
    /* every hostile name got a mark of its own */
    ST_CHECK(rs_int(rs_cmd(c, "EVAL", "return #redis.call('KEYS', '*:ldl:mark')", "0", NULL), 0) >= 6,
             "%s", "six distinct marks");

    /* refused before anything is sent */
    before = evals(c);
    big[LDL_REDIS_FENCE_NAME_MAX - 1] = 'q';
    big[LDL_REDIS_FENCE_NAME_MAX] = 0;             /* 1025 bytes: one too many */
    argv[0] = "SET"; argv[1] = "hostile:data"; argv[2] = "v";
    ST_CHECK(ldl_redis_fence(r, big, 9, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL &&
             ldl_redis_last_error(r)->kind == LDL_REDIS_ERR_ARG, "over-long resource refused: %s", ldl_redis_why(r));
    big[LDL_REDIS_FENCE_NAME_MAX - 1] = 0;
    ST_CHECK(ldl_redis_fence(r, "", 9, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "empty resource");
    ST_CHECK(ldl_redis_fence(r, NULL, 9, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "NULL resource");
    ST_CHECK(ldl_redis_fence(r, "h", 0, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "fence 0");
    ST_CHECK(ldl_redis_fence(r, "h", -1, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "fence -1");
    ST_CHECK(ldl_redis_fence(r, "h", INT64_MIN, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "fence INT64_MIN");
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, NULL, 0, argv, NULL, NULL) == LDL_EINVAL, "%s", "argc 0");
    ST_CHECK(ldl_redis_fence(r, "h", 1, 3, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "nkeys > argc-1");
    ST_CHECK(ldl_redis_fence(r, "h", 1, -1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "nkeys < 0");
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, NULL, 3, NULL, NULL, NULL) == LDL_EINVAL, "%s", "argv NULL");
    keyidx[0] = 0;
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, keyidx, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "key index 0 (the command name)");
    keyidx[0] = 3;
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, keyidx, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "key index past argc");
    for (k = 0; k < 70; k++) argv[k] = "x";
    argv[0] = "MSET";
    ST_CHECK(ldl_redis_fence(r, "h", 1, 0, NULL, LDL_REDIS_FENCE_ARGS + 1, argv, NULL, NULL) == LDL_EINVAL,
             "%s", "argc over LDL_REDIS_FENCE_ARGS");
    argv[0] = "SET"; argv[1] = NULL; argv[2] = "v";
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "a NULL argument");
    argv[0] = "SET"; argv[1] = "{h}:ldl:mark"; argv[2] = "1";
    ST_CHECK(ldl_redis_fence(r, "h", 1, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s",
             "a command that names the mark as its key");
    ST_CHECK(ldl_redis_fence(NULL, "h", 1, 1, NULL, 3, argv, NULL, NULL) == LDL_EINVAL, "%s", "NULL adapter");
    ST_CHECK(evals(c) == before, "refused calls sent nothing (%ld scripts run, %ld before)", evals(c), before);
    ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{h}:ldl:mark", NULL), -1) == 0, "%s", "no mark for the refused resource");

    /* MSET with interleaved keys through keyidx; argvlen with a binary value */
    {
        const char *ms[5];
        size_t ml[5];
        char val[3] = { 'a', 0, 'b' };
        ms[0] = "MSET"; ms[1] = "{ms}:a"; ms[2] = val; ms[3] = "{ms}:b"; ms[4] = "2";
        ml[0] = 4; ml[1] = 6; ml[2] = 3; ml[3] = 6; ml[4] = 1;
        keyidx[0] = 1; keyidx[1] = 3;
        rc = ldl_redis_fence(r, "ms", 1, 2, keyidx, 5, ms, ml, NULL);
        rep = rs_cmd(c, "GET", "{ms}:a", NULL);
        ST_CHECK(rc == 1 && rep && rep->type == REDIS_REPLY_STRING && rep->len == 3 && memcmp(rep->str, val, 3) == 0 &&
                 rs_is(rs_cmd(c, "GET", "{ms}:b", NULL), "2"), "MSET with keyidx {1,3} and a NUL in a value: %d", rc);
        if (rep) freeReplyObject(rep);
    }
    (void)key;
}

/* ------------------------------------------------------------ the mark's own state */
static void test_wrong_mark(redisContext *c, ldl_redis *r)
{
    static const char *bad[] = { "abc", "0", "-5", "012", "99999999999999999999", "9223372036854775808",
                                 "9999999999999999999", "1.5", "" };
    size_t i;
    int rc;
    /* a key of another type at the mark's name */
    freeReplyObject(rs_cmd(c, "DEL", "{wt}:ldl:mark", "{wt}:data", NULL));
    freeReplyObject(rs_cmd(c, "RPUSH", "{wt}:ldl:mark", "x", NULL));
    rc = fence3(r, "wt", 3, 1, NULL, "SET", "{wt}:data", "v", NULL);
    ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(r), "WRONGTYPE") &&
             ldl_redis_last_error(r)->kind == LDL_REDIS_ERR_SERVER, "wrong type at the mark: %d %s", rc, ldl_redis_why(r));
    ST_CHECK(rs_int(rs_cmd(c, "EXISTS", "{wt}:data", NULL), -1) == 0 &&
             rs_int(rs_cmd(c, "LLEN", "{wt}:ldl:mark", NULL), -1) == 1, "%s", "nothing changed (command not run, list intact)");
    /* a mark holding no fence value */
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        freeReplyObject(rs_cmd(c, "SET", "{wt}:ldl:mark", bad[i], NULL));
        rc = fence3(r, "wt", INT64_MAX, 1, NULL, "SET", "{wt}:data", "v", NULL);
        ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(r), "no fence value") &&
                 rs_int(rs_cmd(c, "EXISTS", "{wt}:data", NULL), -1) == 0 && rs_is(rs_cmd(c, "GET", "{wt}:ldl:mark", NULL), bad[i]),
                 "mark \"%s\": %d %s", bad[i], rc, ldl_redis_why(r));
    }
    /* the connection is still fine after these errors */
    freeReplyObject(rs_cmd(c, "DEL", "{wt}:ldl:mark", NULL));
    ST_CHECK(fence3(r, "wt", 1, 1, NULL, "SET", "{wt}:data", "v", NULL) == 1, "%s", "after the errors: works");
}

/* ------------------------------------------------------------ the command fails inside */
static void test_command_error(redisContext *c, ldl_redis *r)
{
    redisReply *rep = NULL;
    int rc;
    freeReplyObject(rs_cmd(c, "DEL", "{ce}:ldl:mark", "{ce}:n", "{ce}:l", NULL));
    ST_CHECK(fence3(r, "ce", 10, 1, NULL, "SET", "{ce}:n", "not-a-number", NULL) == 1, "%s", "setup at fence 10");
    rc = fence3(r, "ce", 11, 1, &rep, "INCR", "{ce}:n", NULL);
    ST_CHECK(rc == LDL_ESTORE && ldl_redis_last_error(r)->kind == LDL_REDIS_ERR_COMMAND && rep &&
             rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "not an integer") &&
             strstr(ldl_redis_why(r), "did not move"),
             "INCR of a non-number: rc %d kind %d reply %s why %s", rc, ldl_redis_last_error(r)->kind,
             rep && rep->str ? rep->str : "(none)", ldl_redis_why(r));
    if (rep) freeReplyObject(rep);
    ST_CHECK(mark_of(c, r, "ce") == 10, "the mark did not move (%lld)", mark_of(c, r, "ce"));
    /* WRONGTYPE of the caller's key */
    freeReplyObject(rs_cmd(c, "RPUSH", "{ce}:l", "x", NULL));
    rep = NULL;
    rc = fence3(r, "ce", 12, 1, &rep, "INCR", "{ce}:l", NULL);
    ST_CHECK(rc == LDL_ESTORE && rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "WRONGTYPE", 9) == 0 &&
             mark_of(c, r, "ce") == 10, "WRONGTYPE inside the script: %d, mark %lld", rc, mark_of(c, r, "ce"));
    if (rep) freeReplyObject(rep);
    /* an unknown command, a command scripts may not run; reply_out NULL frees it here */
    rc = fence3(r, "ce", 13, 1, NULL, "NOSUCHCOMMAND", "{ce}:n", NULL);
    ST_CHECK(rc == LDL_ESTORE && ldl_redis_last_error(r)->kind == LDL_REDIS_ERR_COMMAND && mark_of(c, r, "ce") == 10,
             "unknown command: %d %s", rc, ldl_redis_why(r));
    rc = fence3(r, "ce", 14, 0, NULL, "MULTI", NULL);
    ST_CHECK(rc == LDL_ESTORE && ldl_redis_last_error(r)->kind == LDL_REDIS_ERR_COMMAND && mark_of(c, r, "ce") == 10,
             "MULTI inside a script: %d %s", rc, ldl_redis_why(r));
    /* the stale check comes first: a stale failing command answers 0 */
    ST_CHECK(fence3(r, "ce", 9, 1, NULL, "INCR", "{ce}:l", NULL) == 0, "%s", "stale before the command is looked at");
    /* and the next good write moves it */
    ST_CHECK(fence3(r, "ce", 15, 1, NULL, "SET", "{ce}:n", "1", NULL) == 1 && mark_of(c, r, "ce") == 15, "%s",
             "a good write after the failures raises the mark");
}

/* ------------------------------------------------------------ least privilege */
/* a connection authenticated as user u */
static redisContext *as_user(const char *u)
{
    redisContext *c = rs_connect(&g_srv, 3000);
    if (c && !rs_is(rs_cmd(c, "AUTH", u, "pw", NULL), "OK")) { redisFree(c); c = NULL; }
    return c;
}

static void test_acl(redisContext *c)
{
    redisContext *uc;
    ldl_redis ur;
    int rc;
    /* the documented rights: the script's commands on the mark, the command's on its key */
    ST_CHECK(rs_is(rs_cmd(c, "ACL", "SETUSER", "fw", "on", ">pw", "resetkeys", "~{*}:ldl:mark", "~app:*",
                          "resetchannels", "-@all", "+eval", "+evalsha", "+get", "+set", "+hset", NULL), "OK"),
             "%s", "ACL SETUSER fw");
    uc = as_user("fw");
    ST_CHECK(uc && ldl_redis_init(&ur, uc, NULL) == LDL_OK, "%s", "connect as fw");
    if (uc) {
        rc = fence3(&ur, "acl", 3, 1, NULL, "HSET", "app:h", "f", "v", NULL);
        ST_CHECK(rc == 1, "the documented ACL works: %d %s", rc, ldl_redis_why(&ur));
        rc = fence3(&ur, "acl", 2, 1, NULL, "HSET", "app:h", "f", "stale", NULL);
        ST_CHECK(rc == 0, "stale under the ACL: %d", rc);
        rc = fence3(&ur, "acl", 4, 1, NULL, "HSET", "other:h", "f", "v", NULL);
        ST_CHECK(rc == LDL_ESTORE && ldl_redis_last_error(&ur)->kind == LDL_REDIS_ERR_SERVER &&
                 strstr(ldl_redis_why(&ur), "NOPERM") && rs_int(rs_cmd(c, "EXISTS", "other:h", NULL), -1) == 0,
                 "a key outside the user's patterns: refused by the server before the script ran: %d %s",
                 rc, ldl_redis_why(&ur));
        ST_CHECK(rs_is(rs_cmd(c, "GET", "{acl}:ldl:mark", NULL), "3"), "%s", "mark unmoved by the refusals");
        redisFree(uc);
    }
    /* the mark readable but not writable, and a user without +set: the script refuses before
       the command runs (the final SET of the mark could not be refused after the write) */
    ST_CHECK(rs_is(rs_cmd(c, "ACL", "SETUSER", "fr", "on", ">pw", "resetkeys", "%R~{*}:ldl:mark", "~app:*",
                          "resetchannels", "-@all", "+eval", "+evalsha", "+get", "+set", "+hset", NULL), "OK"),
             "%s", "ACL SETUSER fr");
    ST_CHECK(rs_is(rs_cmd(c, "ACL", "SETUSER", "fn", "on", ">pw", "resetkeys", "~{*}:ldl:mark", "~app:*",
                          "resetchannels", "-@all", "+eval", "+evalsha", "+get", "+hset", NULL), "OK"),
             "%s", "ACL SETUSER fn");
    {
        static const char *users[2] = { "fr", "fn" };
        int k;
        for (k = 0; k < 2; k++) {
            uc = as_user(users[k]);
            ST_CHECK(uc && ldl_redis_init(&ur, uc, NULL) == LDL_OK, "connect as %s", users[k]);
            if (!uc) continue;
            rc = fence3(&ur, "acl", 5, 1, NULL, "HSET", "app:h", "f", "by-a-user-who-cannot-raise-the-mark", NULL);
            ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(&ur), "NOPERM") &&
                     rs_is(rs_cmd(c, "HGET", "app:h", "f", NULL), "v") &&
                     rs_is(rs_cmd(c, "GET", "{acl}:ldl:mark", NULL), "3"),
                     "user %s: refused, the command did not run, the mark unmoved: %d %s", users[k], rc,
                     ldl_redis_why(&ur));
            if (k == 1) {
                /* fn: refused by the script's own check (EVAL itself was allowed) */
                ST_CHECK(strstr(ldl_redis_why(&ur), "may not SET the fence mark") != NULL, "fn's refusal: %s",
                         ldl_redis_why(&ur));
                /* an equal fence needs no SET of the mark: it passes */
                rc = fence3(&ur, "acl", 3, 1, NULL, "HSET", "app:h", "g", "equal", NULL);
                ST_CHECK(rc == 1, "user fn: an equal fence (no mark write) passes: %d %s", rc, ldl_redis_why(&ur));
            } else {
                /* fr: EVAL declares the mark as a key it may write, so the server refuses
                   the whole call up front, whatever the fence */
                rc = fence3(&ur, "acl", 3, 1, NULL, "HSET", "app:h", "g", "equal", NULL);
                ST_CHECK(rc == LDL_ESTORE && strstr(ldl_redis_why(&ur), "NOPERM"), "user fr, equal fence: %d %s", rc,
                         ldl_redis_why(&ur));
            }
            redisFree(uc);
        }
    }
}

/* ------------------------------------------------------------ NOSCRIPT (synchronous) */
static void test_noscript(redisContext *c, ldl_redis *r)
{
    long evalsha0, eval0;
    freeReplyObject(rs_cmd(c, "SCRIPT", "FLUSH", NULL));
    evalsha0 = rs_cmd_calls(c, "evalsha");
    eval0 = rs_cmd_calls(c, "eval");
    ST_CHECK(fence3(r, "ns", 1, 1, NULL, "SET", "{ns}:d", "v", NULL) == 1, "after SCRIPT FLUSH: %s", ldl_redis_why(r));
    ST_CHECK(rs_cmd_calls(c, "evalsha") == evalsha0 + 1 && rs_cmd_calls(c, "eval") == eval0 + 1, "%s",
             "EVALSHA answered NOSCRIPT, then EVAL");
    ST_CHECK(fence3(r, "ns", 1, 1, NULL, "SET", "{ns}:d", "v", NULL) == 1 && rs_cmd_calls(c, "eval") == eval0 + 1,
             "%s", "cached again: EVALSHA only");
}

/* ------------------------------------------------------------ a fake server: the nonce */
/* reads one RESP command, answers a fenced-write reply with the request's own nonce
   (mode 'G') or another one ('n'), in the shape { nonce, 1, +OK } */
static int read_resp_args(int fd, char args[][64], int max)
{
    static char buf[65536];
    size_t n = 0;
    uint64_t end = st_now_ms() + 5000;
    for (;;) {
        /* try to parse */
        size_t p = 0;
        long argc, a;
        if (n > 0 && buf[0] == '*') {
            char *e;
            argc = strtol(buf + 1, &e, 10);
            p = (size_t)(e - buf) + 2;
            for (a = 0; a < argc && p < n; a++) {
                long len;
                if (buf[p] != '$') return -1;
                len = strtol(buf + p + 1, &e, 10);
                p = (size_t)(e - buf) + 2;
                if (p + (size_t)len + 2 > n) break;
                if (a < max) {
                    size_t cp = (size_t)len < 63 ? (size_t)len : 63;
                    memcpy(args[a], buf + p, cp);
                    args[a][cp] = 0;
                }
                p += (size_t)len + 2;
            }
            if (a == argc && p <= n) return (int)argc;
        }
        if (st_now_ms() > end || n == sizeof buf) return -1;
        {
            struct pollfd pf;
            ssize_t rd;
            pf.fd = fd; pf.events = POLLIN; pf.revents = 0;
            if (poll(&pf, 1, 100) <= 0) continue;
            rd = read(fd, buf + n, sizeof buf - n);
            if (rd <= 0) return -1;
            n += (size_t)rd;
        }
    }
}

static int fake_main(void *arg, int in, int out)
{
    int lfd = *(int *)arg;
    for (;;) {
        char args[16][64], msg[256];
        int sc = st_recv(in, 60000), fd, argc, nk;
        const char *nonce;
        if (sc < 0 || sc == 'q') return 0;
        fd = accept(lfd, NULL, NULL);
        if (fd < 0) return 1;
        argc = read_resp_args(fd, args, 16);
        nk = argc > 3 ? atoi(args[2]) : 0;
        nonce = argc > 3 + nk ? args[3 + nk] : "0000000000000000";
        if (sc == 'n') nonce = "0123456789abcdef";
        snprintf(msg, sizeof msg, "*3\r\n$16\r\n%s\r\n:1\r\n+OK\r\n", nonce);
        if (write(fd, msg, strlen(msg)) < 0) { close(fd); return 2; }
        st_send(out, 'a');
        st_recv(in, 60000);
        close(fd);
    }
}

static void nonce_done(void *ctx, int rc, redisReply *rep)
{
    *(int *)ctx = rc;
    if (rep) freeReplyObject(rep);
}

static void test_nonce(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int lfd = socket(AF_INET, SOCK_STREAM, 0), mode, rc;
    st_child ch;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 4) != 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &len) != 0 || st_fork(&ch, fake_main, &lfd) != 0) {
        ST_CHECK(0, "%s", "fake server");
        return;
    }
    for (mode = 0; mode < 2; mode++) {
        redisContext *c;
        ldl_redis r;
        redisReply *rep = NULL;
        st_send(ch.to_child, mode ? 'n' : 'G');
        c = rs_connect_port(ntohs(a.sin_port), 2000);
        if (!c || ldl_redis_init(&r, c, NULL) != LDL_OK) { ST_CHECK(0, "%s", "connect fake"); break; }
        rc = fence3(&r, "nn", 3, 1, &rep, "SET", "{nn}:d", "v", NULL);
        if (mode == 0)
            ST_CHECK(rc == 1 && rep && rep->type == REDIS_REPLY_STATUS, "control: the right nonce is accepted: %d %s",
                     rc, ldl_redis_why(&r));
        else
            ST_CHECK(rc == LDL_ESTORE && rep == NULL && c->err && ldl_redis_last_error(&r)->kind == LDL_REDIS_ERR_PROTOCOL,
                     "another nonce is never accepted: %d %s", rc, ldl_redis_why(&r));
        if (rep) freeReplyObject(rep);
        st_recv(ch.from_child, 5000);
        st_send(ch.to_child, 'd');
        redisFree(c);
    }
    /* the non-blocking view, the same way */
    for (mode = 0; mode < 2; mode++) {
        static ldl_redis_req reqs[4];
        ldl_redis_async ra;
        redisContext *c;
        int got = -100;
        uint64_t end;
        st_send(ch.to_child, mode ? 'n' : 'G');
        c = redisConnectNonBlock("127.0.0.1", ntohs(a.sin_port));
        if (!c || ldl_redis_async_init(&ra, c, NULL, reqs, 4) != LDL_OK) { ST_CHECK(0, "%s", "async fake"); break; }
        {
            static const char *argv[] = { "SET", "{nn}:d", "v" };
            rc = ldl_redis_async_fence(&ra, "nn", 3, 1, NULL, 3, argv, NULL, nonce_done, &got);
        }
        ST_CHECK(rc == LDL_OK, "async submit to the fake: %d", rc);
        end = st_now_ms() + 5000;
        while (got == -100 && st_now_ms() < end) {
            if (ldl_redis_async_pump(&ra) < 0 && got == -100) break;
            st_sleep_ms(2);
        }
        if (mode == 0) ST_CHECK(got == 1, "async control: right nonce accepted: %d", got);
        else ST_CHECK(got == LDL_ESTORE && ldl_redis_async_pump(&ra) < 0, "async: another nonce never accepted: %d", got);
        st_recv(ch.from_child, 5000);
        st_send(ch.to_child, 'd');
        redisFree(c);
    }
    st_send(ch.to_child, 'q');
    st_join(&ch, 5000);
    close(lfd);
}

/* ------------------------------------------------------------ locks in child processes */
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

typedef struct client { redisContext *c; ldl_redis r; ldl_store s; ldl_lock lk; } client;

static int client_open(client *cl, const char *key, uint32_t ttl_ms)
{
    ldl_lock_desc d;
    memset(cl, 0, sizeof *cl);
    cl->c = rs_connect(&g_srv, 3000);
    if (!cl->c || ldl_redis_init(&cl->r, cl->c, NULL) != LDL_OK) return -1;
    cl->s = ldl_redis_store(&cl->r);
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = key;
    d.ttl_ms = ttl_ms;
    d.store = &cl->s;
    return ldl_lock_init(&cl->lk, &d) == LDL_OK ? 0 : -1;
}

static void client_close(client *cl)
{
    ldl_lock_dispose(&cl->lk);
    if (cl->c) redisFree(cl->c);
}

static int acquire_within(client *cl, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    for (;;) {
        if (ldl_lock_acquire(&cl->lk) == 1) return 1;
        if (st_now_ms() >= end) return 0;
        st_sleep_ms(2);
    }
}

#define PAUSE_TTL 400

/* holds the lock, stops itself before its write; its write after SIGCONT must be refused */
static int paused_worker(void *arg, int in, int out)
{
    client cl;
    int64_t f;
    int rc;
    char fs[24];
    (void)arg;
    if (client_open(&cl, "fence-paused", PAUSE_TTL) != 0) return 100;
    if (!acquire_within(&cl, 5000)) return 101;
    f = ldl_lock_fencing_token(&cl.lk);
    snprintf(fs, sizeof fs, "%lld", (long long)f);
    st_send(out, 'r');
    if (st_recv(in, 60000) != 'g') return 102;          /* the parent SIGSTOPs us before 'g' */
    rc = fence3(&cl.r, "paused", f, 1, NULL, "SET", "{paused}:data", "old-holder", NULL);
    client_close(&cl);
    return rc == 0 ? 0 : 10 + (rc < 0 ? 1 : 2);
}

static void test_sigstop(redisContext *c)
{
    st_child ch;
    client me;
    int rc;
    int64_t f2;
    ST_CHECK(client_open(&me, "fence-paused", PAUSE_TTL) == 0, "%s", "open successor");
    ST_CHECK(st_fork(&ch, paused_worker, NULL) == 0, "%s", "fork");
    ST_CHECK(st_recv(ch.from_child, 10000) == 'r', "%s", "holder ready");
    kill(ch.pid, SIGSTOP);
    st_sleep_ms(PAUSE_TTL + PAUSE_TTL / 2);
    ST_CHECK(acquire_within(&me, 5000) == 1, "%s", "successor takes over once the lease lapsed");
    f2 = ldl_lock_fencing_token(&me.lk);
    rc = fence3(&me.r, "paused", f2, 1, NULL, "SET", "{paused}:data", "successor", NULL);
    ST_CHECK(rc == 1, "successor's fenced write accepted: %d", rc);
    st_send(ch.to_child, 'g');
    kill(ch.pid, SIGCONT);
    rc = st_join(&ch, 20000);
    ST_CHECK(rc == 0, "paused holder's late fenced write: exit %d (0 = refused as stale)", rc);
    ST_CHECK(rs_is(rs_cmd(c, "GET", "{paused}:data", NULL), "successor"), "%s", "the key holds the successor's data");
    ST_CHECK(mark_of(c, &me.r, "paused") == f2, "%s", "mark is the successor's fence");
    ldl_lock_release(&me.lk);
    client_close(&me);
}

/* NROUND rounds: acquire, two fenced writes (equal fence: both must pass), release, then a
   late write with the old fence after a short random pause (stale or not: the server judges) */
static int many_worker(void *arg, int in, int out)
{
    client cl;
    int i, bad = 0;
    unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
    (void)in; (void)out;
    if (client_open(&cl, "fence-many", 10000) != 0) return 100;
    for (i = 0; i < NROUND; i++) {
        int64_t f;
        char fs[24];
        if (!acquire_within(&cl, 30000)) { bad |= 1; break; }
        f = ldl_lock_fencing_token(&cl.lk);
        snprintf(fs, sizeof fs, "%lld", (long long)f);
        if (fence3(&cl.r, "many", f, 1, NULL, "RPUSH", "{many}:log", fs, NULL) != 1) bad |= 2;
        if (fence3(&cl.r, "many", f, 1, NULL, "RPUSH", "{many}:log", fs, NULL) != 1) bad |= 2;
        if (ldl_lock_release(&cl.lk) != 1) bad |= 4;
        seed = seed * 1103515245u + 12345u;
        st_sleep_ms((seed >> 16) % 4);
        {
            int rc = fence3(&cl.r, "many", f, 1, NULL, "RPUSH", "{many}:log", fs, NULL);
            if (rc != 0 && rc != 1) bad |= 8;
        }
    }
    client_close(&cl);
    return bad;
}

static void test_many(redisContext *c)
{
    st_child ch[NPROC];
    redisReply *log;
    int i;
    size_t k, distinct = 0;
    long long prev = 0;
    int mono = 1;
    for (i = 0; i < NPROC; i++)
        ST_CHECK(st_fork(&ch[i], many_worker, (void *)(uintptr_t)(i + 1)) == 0, "fork %d", i);
    for (i = 0; i < NPROC; i++) {
        int rc = st_join(&ch[i], 180000);
        ST_CHECK(rc == 0, "worker %d: bits %d (1 no grant, 2 an in-lease write refused, 4 release, 8 late write error)", i, rc);
    }
    log = rs_cmd(c, "LRANGE", "{many}:log", "0", "-1", NULL);
    ST_CHECK(log && log->type == REDIS_REPLY_ARRAY, "%s", "read the log");
    if (!log || log->type != REDIS_REPLY_ARRAY) { if (log) freeReplyObject(log); return; }
    for (k = 0; k < log->elements; k++) {
        long long v = strtoll(log->element[k]->str, NULL, 10);
        if (v < prev) mono = 0;
        if (v != prev) distinct++;
        prev = v;
    }
    ST_CHECK(mono, "%s", "accepted writes are fence-monotonic");
    ST_CHECK(distinct == (size_t)(NPROC * NROUND), "every grant's writes landed: %zu distinct fences, want %d",
             distinct, NPROC * NROUND);
    ST_CHECK(log->elements >= (size_t)(2 * NPROC * NROUND) && log->elements <= (size_t)(3 * NPROC * NROUND),
             "log length %zu", log->elements);
    fprintf(stderr, "many: %d x %d rounds, %zu accepted writes (%zu late writes refused as stale)\n", NPROC, NROUND,
            log->elements, (size_t)(3 * NPROC * NROUND) - log->elements);
    freeReplyObject(log);
}

/* ------------------------------------------------------------ the non-blocking view */
#define PIPE_N    600
#define PIPE_RES  10

typedef struct pdone { int rc; int type; int called; } pdone;
static pdone g_pd[PIPE_N + 16];

static void pipe_done(void *ctx, int rc, redisReply *rep)
{
    pdone *d = (pdone *)ctx;
    d->rc = rc;
    d->type = rep ? rep->type : -1;
    d->called++;
    if (rep) freeReplyObject(rep);
}

static int pump_until(ldl_redis_async *ra, int *pending_of, int want, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    (void)pending_of;
    for (;;) {
        int i, done = 0;
        for (i = 0; i < want; i++) done += g_pd[i].called > 0;
        if (done == want) return 1;
        if (st_now_ms() > end) return 0;
        if (ldl_redis_async_pump(ra) < 0) return 0;
        st_sleep_ms(1);
    }
}

static void test_pipeline(redisContext *c)
{
    static ldl_redis_req reqs[PIPE_N + 8];
    static int expect[PIPE_N];
    long long mark[PIPE_RES];
    ldl_redis_async ra;
    redisContext *nb;
    const ldl_redis_stats *st;
    unsigned seed = 12345;
    int i, bad = 0, j;
    long eval0;
    char res[16], key[32], val[24];

    freeReplyObject(rs_cmd(c, "SCRIPT", "FLUSH", NULL));
    eval0 = rs_cmd_calls(c, "eval");
    nb = redisConnectNonBlock("127.0.0.1", g_srv.port);
    ST_CHECK(nb && ldl_redis_async_init(&ra, nb, NULL, reqs, PIPE_N + 8) == LDL_OK, "%s", "async init");
    memset(mark, 0, sizeof mark);
    memset(g_pd, 0, sizeof g_pd);
    /* all submitted before any pump: one pipeline */
    for (i = 0; i < PIPE_N; i++) {
        const char *argv[3];
        int64_t f;
        j = i % PIPE_RES;
        seed = seed * 1103515245u + 12345u;
        /* mostly rising, some equal, some stale */
        f = mark[j] + (int64_t)((seed >> 16) % 4) - 1;
        if (f < 1) f = 1;
        expect[i] = f >= mark[j];
        if (expect[i]) mark[j] = f;
        snprintf(res, sizeof res, "pl%d", j);
        snprintf(key, sizeof key, "{pl%d}:log", j);
        snprintf(val, sizeof val, "%lld", (long long)f);
        argv[0] = "RPUSH"; argv[1] = key; argv[2] = val;
        if (ldl_redis_async_fence(&ra, res, f, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[i]) != LDL_OK) bad++;
    }
    ST_CHECK(bad == 0, "%d submits refused", bad);
    ST_CHECK(pump_until(&ra, NULL, PIPE_N, 30000), "all %d answered: %s", PIPE_N, ldl_redis_async_why(&ra));
    bad = 0;
    for (i = 0; i < PIPE_N; i++)
        if (g_pd[i].called != 1 || g_pd[i].rc != (expect[i] ? 1 : 0) ||
            g_pd[i].type != (expect[i] ? REDIS_REPLY_INTEGER : -1)) bad++;
    ST_CHECK(bad == 0, "%d of %d pipelined answers differ from the model", bad, PIPE_N);
    st = ldl_redis_async_stats(&ra);
    ST_CHECK(st->noscript == 0 && rs_cmd_calls(c, "eval") == eval0 + 1 && st->max_live >= 100,
             "the first went as EVAL, the rest EVALSHA (noscript %llu, evals %ld, max live %zu)",
             (unsigned long long)st->noscript, rs_cmd_calls(c, "eval") - eval0, st->max_live);
    /* the logs hold exactly the accepted fences, in order */
    for (j = 0; j < PIPE_RES; j++) {
        redisReply *lg;
        size_t k = 0;
        snprintf(key, sizeof key, "{pl%d}:log", j);
        lg = rs_cmd(c, "LRANGE", key, "0", "-1", NULL);
        seed = 0;
        for (i = j; i < PIPE_N; i += PIPE_RES) if (expect[i]) seed++;
        ST_CHECK(lg && lg->elements == seed, "log %d: %zu entries, want %u", j, lg ? lg->elements : 0, seed);
        if (lg) {
            long long prev = 0;
            for (k = 0; k < lg->elements; k++) {
                long long v = strtoll(lg->element[k]->str, NULL, 10);
                if (v < prev) bad++;
                prev = v;
            }
            freeReplyObject(lg);
        }
        snprintf(res, sizeof res, "pl%d", j);
        ST_CHECK(mark_of(c, &ra._r, res) == mark[j], "mark %d", j);
    }
    ST_CHECK(bad == 0, "%s", "pipelined logs fence-monotonic");

    /* NOSCRIPT mid-link: the three in flight answer LDL_ESTORE and run nowhere; the next one works */
    freeReplyObject(rs_cmd(c, "SCRIPT", "FLUSH", NULL));
    memset(g_pd, 0, sizeof g_pd);
    for (i = 0; i < 4; i++) {
        const char *argv[3];
        snprintf(val, sizeof val, "ns%d", i);
        argv[0] = "RPUSH"; argv[1] = "{pns}:log"; argv[2] = val;
        if (i == 3) { ST_CHECK(pump_until(&ra, NULL, 3, 10000), "%s", "three answered"); }
        ST_CHECK(ldl_redis_async_fence(&ra, "pns", 1, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[i]) == LDL_OK, "submit %d", i);
    }
    ST_CHECK(pump_until(&ra, NULL, 4, 10000), "%s", "four answered");
    ST_CHECK(g_pd[0].rc == LDL_ESTORE && g_pd[1].rc == LDL_ESTORE && g_pd[2].rc == LDL_ESTORE && g_pd[3].rc == 1,
             "NOSCRIPT answers: %d %d %d then %d", g_pd[0].rc, g_pd[1].rc, g_pd[2].rc, g_pd[3].rc);
    {
        redisReply *lg = rs_cmd(c, "LRANGE", "{pns}:log", "0", "-1", NULL);
        ST_CHECK(lg && lg->elements == 1 && strcmp(lg->element[0]->str, "ns3") == 0, "%s",
                 "only the write after the NOSCRIPTs ran");
        if (lg) freeReplyObject(lg);
    }

    /* bad input: nothing queued */
    {
        const char *argv[3];
        size_t live = ldl_redis_async_stats(&ra)->live;
        argv[0] = "SET"; argv[1] = "{x}:k"; argv[2] = "v";
        ST_CHECK(ldl_redis_async_fence(&ra, "x", 0, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[0]) == LDL_EINVAL, "%s", "async fence 0");
        ST_CHECK(ldl_redis_async_fence(&ra, "", 1, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[0]) == LDL_EINVAL, "%s", "async empty resource");
        ST_CHECK(ldl_redis_async_fence(&ra, "x", 1, 1, NULL, 3, argv, NULL, NULL, NULL) == LDL_EINVAL, "%s", "async NULL completion");
        ST_CHECK(ldl_redis_async_stats(&ra)->live == live, "%s", "nothing queued");
    }

    /* the command's own error, the reply types through the pipeline */
    {
        static const char *e1[] = { "INCR", "{pe}:s" };
        static const char *s1[] = { "SET", "{pe}:s", "text" };
        static const char *g1[] = { "SET", "{pe}:none", "x", "GET" };
        redisReply *r0;
        memset(g_pd, 0, sizeof g_pd);
        ldl_redis_async_fence(&ra, "pe", 2, 1, NULL, 3, s1, NULL, pipe_done, &g_pd[0]);
        ldl_redis_async_fence(&ra, "pe", 3, 1, NULL, 2, e1, NULL, pipe_done, &g_pd[1]);
        ldl_redis_async_fence(&ra, "pe", 2, 1, NULL, 4, g1, NULL, pipe_done, &g_pd[2]);
        ST_CHECK(pump_until(&ra, NULL, 3, 10000), "%s", "answered");
        ST_CHECK(g_pd[0].rc == 1 && g_pd[0].type == REDIS_REPLY_STATUS, "status: %d %d", g_pd[0].rc, g_pd[0].type);
        ST_CHECK(g_pd[1].rc == LDL_ESTORE && g_pd[1].type == REDIS_REPLY_ERROR, "command error: %d %d", g_pd[1].rc, g_pd[1].type);
        ST_CHECK(g_pd[2].rc == 1 && g_pd[2].type == REDIS_REPLY_NIL, "nil after the failed command (mark unmoved, 2 passes): %d %d",
                 g_pd[2].rc, g_pd[2].type);
        r0 = rs_cmd(c, "GET", "{pe}:ldl:mark", NULL);
        ST_CHECK(rs_is(r0, "2"), "%s", "mark 2: the failing command at 3 did not move it");
    }

    /* pool full, then a link failure completes everything queued */
    {
        static ldl_redis_req small[3];
        ldl_redis_async rb;
        redisContext *nb2 = redisConnectNonBlock("127.0.0.1", g_srv.port);
        const char *argv[3];
        int rc3;
        argv[0] = "SET"; argv[1] = "{pf}:k"; argv[2] = "v";
        memset(g_pd, 0, sizeof g_pd);
        ST_CHECK(nb2 && ldl_redis_async_init(&rb, nb2, NULL, small, 3) == LDL_OK, "%s", "small pool");
        for (i = 0; i < 3; i++) ldl_redis_async_fence(&rb, "pf", 1, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[i]);
        rc3 = ldl_redis_async_fence(&rb, "pf", 1, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[3]);
        ST_CHECK(rc3 == LDL_ENOSPC && ldl_redis_async_last_error(&rb)->kind == LDL_REDIS_ERR_FULL, "pool full: %d", rc3);
        ldl_redis_async_fail(&rb, "test: dropped");
        ST_CHECK(g_pd[0].called == 1 && g_pd[0].rc == LDL_ESTORE && g_pd[1].rc == LDL_ESTORE && g_pd[2].rc == LDL_ESTORE &&
                 g_pd[3].called == 0, "%s", "a dropped link answers every queued fenced write LDL_ESTORE once");
        ST_CHECK(ldl_redis_async_fence(&rb, "pf", 1, 1, NULL, 3, argv, NULL, pipe_done, &g_pd[4]) == LDL_ESTORE, "%s",
                 "submit on a failed link refused");
        redisFree(nb2);
    }
    redisFree(nb);
}

int main(void)
{
    redisContext *c, *lc;
    ldl_redis r;
    st_ignore_sigpipe();
    if (rs_start(&g_srv, "fence", 1) != 0) { ST_CHECK(0, "%s", "redis-server start"); return st_report(); }
    c = rs_connect(&g_srv, 3000);
    lc = rs_connect(&g_srv, 3000);
    if (!c || !lc || ldl_redis_init(&r, lc, NULL) != LDL_OK) { ST_CHECK(0, "%s", "connect"); rs_stop(&g_srv); return st_report(); }
    st_case("script_and_names", RS_CASE_S);
    test_script_and_names(c, &r);
    st_case("protocol", RS_CASE_S);
    test_protocol(c, &r);
    st_case("reply_types", RS_CASE_S);
    test_reply_types(c, &r);
    st_case("big_reply", RS_CASE_S);
    test_big_reply(c);
    st_case("hostile", RS_CASE_S);
    test_hostile(c, &r);
    st_case("wrong_mark", RS_CASE_S);
    test_wrong_mark(c, &r);
    st_case("command_error", RS_CASE_S);
    test_command_error(c, &r);
    st_case("noscript", RS_CASE_S);
    test_noscript(c, &r);
    st_case("acl", RS_CASE_S);
    test_acl(c);
    st_case("nonce", RS_CASE_S);
    test_nonce();
    st_case("sigstop", RS_CASE_S);
    test_sigstop(c);
    st_case("many", RS_CASE_S);
    test_many(c);
    st_case("pipeline", RS_CASE_S);
    test_pipeline(c);
    redisFree(lc);
    redisFree(c);
    rs_stop(&g_srv);
    return st_report();
}
