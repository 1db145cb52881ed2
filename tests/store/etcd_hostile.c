/* etcd_hostile.c -- bad input: a hostile gateway (tests/store/etcd_fake.py) answers garbage,
 * a huge body, HTTP 500, an empty body, an array, duplicate keys, another cluster, another
 * key, wrong-typed revisions and ids, a non-boolean "succeeded", no header, or nothing at
 * all (a hang), on each path an operation uses. Every such answer must be a store error
 * (negative), never a grant (acquire 1) and never a yes, through the synchronous store and
 * through the non-blocking view; the same operations against the well-behaved fake answer
 * 1 (so the fake is valid and the failures mean what they say). Also: bad configurations
 * are LDL_EINVAL with a why. An acquire txn's "succeeded" that does not prove it answers
 * this call (canned: no key, no lease; another lease; a key older than the txn) and a
 * lease granted shorter than asked are store errors whose lease goes back (decision 1010).
 * Every case runs under its own time bound (etcdt_case). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/etcd_common.h"

static char URL[64];

static void mode(const char *m, const char *path)
{
    char body[128];
    snprintf(body, sizeof body, "%s %s", m, path);
    if (etcdt_post(URL, "/_mode", body, NULL, 0) != 200) ST_CHECK(0, "set mode %s", body);
}

static const char *const BAD[] = { "garbage", "huge", "manynodes", "http500", "nobody", "array", "dupkey",
    "othercluster", "otherkey", "revnum", "revtext", "revneg", "revzero", "revbig", "revobj",
    "succstr", "noresult", "idtext", "hang" };
#define NBAD (sizeof BAD / sizeof BAD[0])

/* which ops read which path (a revoke's failure is not a wrong answer: the key is gone) */
typedef struct { const char *path; int acq, ren, rel; } target;
static const target PATHS[] = {
    { "/v3/lease/grant", 1, 0, 0 },
    { "/v3/kv/txn", 1, 0, 1 },
    { "/v3/kv/range", 0, 1, 0 },
    { "/v3/lease/keepalive", 0, 1, 0 },
};
#define NPATHS (sizeof PATHS / sizeof PATHS[0])

/* a mode that changes nothing the op reads is not an error (e.g. otherkey on a grant) */
static int applies(const char *m, const char *path)
{
    if (strcmp(m, "otherkey") == 0) return strcmp(path, "/v3/kv/range") == 0 || strcmp(path, "/v3/kv/txn") == 0;
    if (strcmp(m, "succstr") == 0) return strcmp(path, "/v3/kv/txn") == 0;
    if (strcmp(m, "idtext") == 0) return strcmp(path, "/v3/kv/txn") != 0;
    return 1;
}

static void run(ldl_store *s, const char *tag, const char *m, const target *t, const char *why_of)
{
    int64_t tok = 99;
    int rc;
    if (t->acq && applies(m, t->path)) {
        rc = s->acquire(s->ctx, "k", 2000, &tok);
        ST_CHECK(rc < 0 && tok == 0, "[%s] %s on %s: acquire = %d token %lld, want a store error (%s)",
                 tag, m, t->path, rc, (long long)tok, why_of);
    }
    if (t->ren && applies(m, t->path)) {
        rc = s->renew(s->ctx, "k", 5, 2000);
        ST_CHECK(rc < 0, "[%s] %s on %s: renew = %d, want a store error", tag, m, t->path, rc);
    }
    if (t->rel && applies(m, t->path)) {
        rc = s->release(s->ctx, "k", 5);
        ST_CHECK(rc < 0, "[%s] %s on %s: release = %d, want a store error", tag, m, t->path, rc);
    }
}

static void sane(ldl_store *s, const char *tag)
{
    int64_t tok = 0;
    mode("ok", "*");
    ST_CHECK(s->acquire(s->ctx, "k", 2000, &tok) == 1 && tok == 5, "[%s] the well-behaved fake grants 5: %lld",
             tag, (long long)tok);
    ST_CHECK(s->renew(s->ctx, "k", 5, 2000) == 1, "[%s] renew on the well-behaved fake", tag);
    ST_CHECK(s->renew(s->ctx, "k", 6, 2000) == 0, "[%s] renew of another fence = 0", tag);
    ST_CHECK(s->release(s->ctx, "k", 5) == 1, "[%s] release on the well-behaved fake", tag);
}

/* lease ids the fake saw revoked since the last ask, as "7,7," */
static void revokes(char *out, size_t cap)
{
    char buf[512];
    cJSON *j, *ids, *id;
    out[0] = '\0';
    if (etcdt_post(URL, "/_revokes", "{}", buf, sizeof buf) != 200) return;
    j = cJSON_Parse(buf);
    ids = cJSON_GetObjectItemCaseSensitive(j, "ids");
    cJSON_ArrayForEach(id, ids)
        if (cJSON_IsString(id) && strlen(out) + strlen(id->valuestring) + 2 < cap) {
            strcat(out, id->valuestring);
            strcat(out, ",");
        }
    cJSON_Delete(j);
}

/* issue 31: an acquire txn's success reply that does not provably answer THIS call (no
   key, another lease, a key created before this txn) is a store error, never a grant;
   issue 37 item 1: a lease granted shorter than asked is never a grant, and goes back.
   settle: pump a view until its detached revokes are done (NULL for sync) */
static void proof_cases(ldl_store *s, const char *view, ldl_etcd_async *settle)
{
    static const char *const M[] = { "canned", "twoput", "wronglease", "oldkey", "shortttl" };
    size_t i;
    for (i = 0; i < sizeof M / sizeof M[0]; i++) {
        int64_t tok = 99;
        int rc;
        char seen[256], name[64];
        int is_ttl = strcmp(M[i], "shortttl") == 0;
        snprintf(name, sizeof name, "proof %s %s", view, M[i]);
        etcdt_case(name, 20);
        mode("ok", "*");
        revokes(seen, sizeof seen);                       /* forget earlier ones */
        mode(M[i], is_ttl ? "/v3/lease/grant" : "/v3/kv/txn");
        rc = s->acquire(s->ctx, "k", 2000, &tok);
        ST_CHECK(rc < 0 && tok == 0, "[%s] %s: acquire = %d token %lld, want a store error, never a grant",
                 view, M[i], rc, (long long)tok);
        if (settle) {
            uint64_t until = st_now_ms() + 5000;
            while (ldl_etcd_async_stats(settle)->live > 0 && st_now_ms() < until) {
                ldl_etcd_async_wait(settle, 5);
                ldl_etcd_async_pump(settle);
            }
        }
        revokes(seen, sizeof seen);
        ST_CHECK(strcmp(seen, "7,") == 0, "[%s] %s: the fresh lease went back once (revoked: [%s])", view, M[i], seen);
        etcdt_case_end();
    }
    mode("ok", "*");
}

/* the fenced write's reply is proved like the acquire's: success must show the lock key
   with this fence and the write's response (decision 1012) */
static void fenced_cases(void)
{
    static const char *const M[] = { "fencecanned", "fencenowrite", "fenceother" };
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_etcd_write w;
    size_t i;
    int rc, del;
    etcdt_case("fenced write proofs", 30);
    etcdt_cfg(&c, URL, NULL);
    ldl_etcd_init(&e, &c);
    memset(&w, 0, sizeof w);
    w.key = "k";
    w.fence = 5;
    w.target = "data/x";
    w.value = "v";
    w.value_len = 1;
    for (del = 0; del <= 1; del++) {
        w.del = del;
        mode("ok", "*");
        rc = ldl_etcd_fenced(&e, &w);
        ST_CHECK(rc == 1, "[fenced %s] the well-behaved fake: %d (%s)", del ? "delete" : "put", rc, ldl_etcd_why(&e));
        for (i = 0; i < sizeof M / sizeof M[0]; i++) {
            mode(M[i], "/v3/kv/txn");
            rc = ldl_etcd_fenced(&e, &w);
            ST_CHECK(rc < 0 && ldl_etcd_why(&e)[0], "[fenced %s] %s: %d, want a store error (%s)", del ? "delete" : "put",
                     M[i], rc, ldl_etcd_why(&e));
        }
    }
    mode("ok", "*");
    ldl_etcd_close(&e);
    etcdt_case_end();
}

static void bad_configs(void)
{
    static const char *const eps[] = { "", "127.0.0.1:2379", "ftp://x", "http://h:1/v3", "http://h:1,",
        ",http://h:1", "http://a b:1", "http://h:1?x", "http://1,http://2,http://3,http://4,http://5,"
        "http://6,http://7,http://8,http://9" };
    ldl_etcd e;
    ldl_etcd_config c;
    size_t i;
    char longp[80];
    for (i = 0; i < sizeof eps / sizeof eps[0]; i++) {
        etcdt_cfg(&c, eps[i], NULL);
        ST_CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL && ldl_etcd_why(&e)[0], "endpoints \"%s\" refused", eps[i]);
        ldl_etcd_close(&e);
    }
    ST_CHECK(ldl_etcd_init(&e, NULL) == LDL_EINVAL, "NULL config");
    ST_CHECK(ldl_etcd_init(NULL, &c) == LDL_EINVAL, "NULL ldl_etcd");
    etcdt_cfg(&c, "http://127.0.0.1:1", NULL);
    c.user = "root";
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL, "user without password");
    etcdt_cfg(&c, "http://127.0.0.1:1", NULL);
    c.cert = "/x.pem";
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL, "cert without key_file");
    memset(longp, 'p', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    etcdt_cfg(&c, "http://127.0.0.1:1", longp);
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL, "prefix too long");
    etcdt_cfg(&c, "http://127.0.0.1:1", "a\tb");
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL, "prefix with a control byte");
    etcdt_cfg(&c, "http://127.0.0.1:1/", NULL);
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK, "a trailing slash is fine");
    ldl_etcd_close(&e);
    {   /* a store call on a closed or never-initialised ldl_etcd: EINVAL, no crash */
        ldl_store s = ldl_etcd_store(&e);
        int64_t t = 3;
        ST_CHECK(s.acquire(s.ctx, "k", 1000, &t) == LDL_EINVAL && t == 0, "acquire after close");
    }
}

/* the txn answers a retry can meet, through the view S */
static void retry_answers(ldl_store *s, const char *view)
{
    int64_t tok = 0;
    int rc;
    mode("ownlease", "/v3/kv/txn");
    rc = s->acquire(s->ctx, "k", 2000, &tok);
    ST_CHECK(rc == 1 && tok == 4, "[%s] a key carrying our own lease is our grant: %d token %lld", view, rc, (long long)tok);
    mode("otherlease", "/v3/kv/txn");
    rc = s->acquire(s->ctx, "k", 2000, &tok);
    ST_CHECK(rc == 0 && tok == 0, "[%s] a key carrying another lease is taken: %d token %lld", view, rc, (long long)tok);
    mode("gone", "/v3/kv/txn");
    rc = s->release(s->ctx, "k", 5);
    ST_CHECK(rc == 0, "[%s] release of a key that is gone (first attempt) = %d", view, rc);
}

int main(void)
{
    char dir[512], portfile[600], log[600], pidfile[600], line[32], cname[96];
    const char *base = getenv("LDL_TEST_DIR");
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    pid_t pid;
    size_t i, j;
    FILE *f;
    uint64_t end;

    st_ignore_sigpipe();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    bad_configs();
    if (st_tmpdir(dir, sizeof dir, "etcdfake") != 0) { ST_CHECK(0, "tmpdir"); return st_report(); }
    snprintf(portfile, sizeof portfile, "%s/port", dir);
    snprintf(log, sizeof log, "%s/fake.log", dir);
    snprintf(pidfile, sizeof pidfile, "%s/etcd-fake.pid", base && *base ? base : dir);
    {
        char *argv[] = { (char *)"python3", (char *)"tests/store/etcd_fake.py", portfile, NULL };
        pid = st_spawn(argv, log, pidfile);
    }
    end = st_now_ms() + 10000;
    while (!(f = fopen(portfile, "r")) && st_now_ms() < end) st_sleep_ms(20);
    if (!f || !fgets(line, sizeof line, f)) { ST_CHECK(0, "the fake did not start"); return st_report(); }
    fclose(f);
    snprintf(URL, sizeof URL, "http://127.0.0.1:%d", atoi(line));

    /* synchronous: a fresh ldl_etcd per case (the cluster id pins to the first reply) */
    for (i = 0; i < NBAD; i++)
        for (j = 0; j < NPATHS; j++) {
            etcdt_cfg(&c, URL, NULL);
            c.attempt_ms = 300;
            c.call_ms = 700;
            ldl_etcd_init(&e, &c);
            s = ldl_etcd_store(&e);
            snprintf(cname, sizeof cname, "sync %s on %s", BAD[i], PATHS[j].path);
            etcdt_case(cname, 30);
            if (i == 0 && j == 0) sane(&s, "sync");
            mode(BAD[i], PATHS[j].path);
            {
                uint64_t t0 = st_now_ms(), took;
                run(&s, "sync", BAD[i], &PATHS[j], ldl_etcd_why(&e));
                took = st_now_ms() - t0;
                ST_CHECK(took < 3 * (700 + 1000), "[sync] %s on %s: the ops took %llu ms (call_ms 700 each)",
                         BAD[i], PATHS[j].path, (unsigned long long)took);
            }
            if (strcmp(BAD[i], "garbage") == 0 && j == 1)
                ST_CHECK(strstr(ldl_etcd_why(&e), "JSON") != NULL, "why names the bad JSON: %s", ldl_etcd_why(&e));
            if (strcmp(BAD[i], "manynodes") == 0 && j == 1)
                ST_CHECK(strstr(ldl_etcd_why(&e), "LDL_ETCD_REPLY_NODES") != NULL, "why names the value bound: %s", ldl_etcd_why(&e));
            if (strcmp(BAD[i], "huge") == 0 && j == 1)
                ST_CHECK(strstr(ldl_etcd_why(&e), "LDL_ETCD_REPLY_MAX") != NULL, "why names the size bound: %s", ldl_etcd_why(&e));
            ldl_etcd_close(&e);
            etcdt_case_end();
        }

    /* the txn answers a retry can meet: the key with OUR fresh lease is our own earlier
       commit (a grant, fence = its create_revision); with another lease it is taken (0);
       a release finding the key gone in a first attempt answers 0 */
    {
        etcdt_case("retry answers and proofs", 120);
        etcdt_cfg(&c, URL, NULL);
        ldl_etcd_init(&e, &c);
        s = ldl_etcd_store(&e);
        retry_answers(&s, "sync");
        proof_cases(&s, "sync", NULL);
        ldl_etcd_close(&e);
        etcdt_case("retry answers and proofs, async", 120);
        {
            static ldl_etcd_req rq[4];
            ldl_etcd_async ea;
            etcdt_shim sh;
            ldl_store ss;
            ldl_etcd_init(&e, &c);
            ldl_etcd_async_init(&ea, &e, rq, 4);
            sh.ea = &ea;
            sh.max_ms = 5000;
            ss = etcdt_shim_store(&sh);
            retry_answers(&ss, "async");
            {   /* the lost race's revoke finishes detached */
                uint64_t until = st_now_ms() + 5000;
                while (ldl_etcd_async_stats(&ea)->live > 0 && st_now_ms() < until) {
                    ldl_etcd_async_wait(&ea, 5);
                    ldl_etcd_async_pump(&ea);
                }
            }
            ST_CHECK(ldl_etcd_async_stats(&ea)->live == 0, "[async] nothing left in flight");
            proof_cases(&ss, "async", &ea);
            ldl_etcd_async_close(&ea);
            ldl_etcd_close(&e);
        }
    }

    /* the non-blocking view, through the shim */
    for (i = 0; i < NBAD; i++)
        for (j = 0; j < NPATHS; j++) {
            static ldl_etcd_req reqs[4];
            ldl_etcd_async ea;
            etcdt_shim sh;
            ldl_store ss;
            etcdt_cfg(&c, URL, NULL);
            c.attempt_ms = 300;
            c.call_ms = 700;
            ldl_etcd_init(&e, &c);
            ST_CHECK(ldl_etcd_async_init(&ea, &e, reqs, 4) == LDL_OK, "async init");
            sh.ea = &ea;
            sh.max_ms = 5000;
            ss = etcdt_shim_store(&sh);
            snprintf(cname, sizeof cname, "async %s on %s", BAD[i], PATHS[j].path);
            etcdt_case(cname, 30);
            if (i == 0 && j == 0) sane(&ss, "async");
            mode(BAD[i], PATHS[j].path);
            run(&ss, "async", BAD[i], &PATHS[j], ldl_etcd_async_why(&ea));
            ST_CHECK(ldl_etcd_async_stats(&ea)->live == 0, "[async] %s on %s: nothing left in flight", BAD[i], PATHS[j].path);
            ldl_etcd_async_close(&ea);
            ldl_etcd_close(&e);
            etcdt_case_end();
        }
    fenced_cases();
    mode("ok", "*");
    st_stop(pid, SIGTERM, 5000);
    curl_global_cleanup();
    return st_report();
}
