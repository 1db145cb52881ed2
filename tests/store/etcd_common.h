/* tests/store/etcd_common.h -- helpers for the etcd suites (test code, header-only).
 *
 *   #define _POSIX_C_SOURCE 200809L
 *   #define LITE_DI_LOCK_IMPLEMENTATION
 *   #include "lite_di_lock.h"
 *   #include "tests/store/etcd_common.h"     (includes the adapter's implementation)
 *
 *   etcdt_member m;  etcdt_start(&m, "tag")   a real single etcd member on 127.0.0.1,
 *                    free ports, its data dir under $LDL_TEST_DIR, its pid in
 *                    $LDL_TEST_DIR/etcd-TAG.pid (tests/store/with_etcd.sh kills whatever
 *                    is left). 1 once /health answers, 0 on failure (log printed).
 *   etcdt_stop(&m)   SIGTERM, reaped (SIGKILL after 10 s).
 *   etcdt_restart(&m)  stop, then start again on the same ports and data dir.
 *   etcdt_post(url, path, body, out, cap)  one plain libcurl POST; the HTTP status, or -1.
 *   etcdt_count(url, prefix)  keys under prefix (a range with range_end), or -1.
 *   etcdt_case(name, secs)  a per-case time bound (issue 37; tests/store/etcd_case.h,
 *                    over fenced.h's st_case): a case still running after secs seconds
 *                    fails naming itself, with the summary line, exit 124.
 *                    etcdt_case_end() disarms it.
 *   etcdt_maxima(prefix, key, owner)  fill the documented maxima: a 63-byte prefix
 *                    (char[64], ending in '/'), a LDL_KEY_MAX-1 byte key, a LDL_OWNER_MAX-1
 *                    byte owner.
 *   etcdt_shim       an ldl_store made of an ldl_etcd_async: every call submits, then pumps
 *                    until its op is answered (so the conformance body runs through the
 *                    non-blocking view: its bodies, steps and completions).
 */
#ifndef LDL_TESTS_STORE_ETCD_COMMON_H
#define LDL_TESTS_STORE_ETCD_COMMON_H

#include "tests/store/fenced.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include <cjson/cJSON.h>

#include "tests/store/etcd_case.h"

typedef struct etcdt_member {
    pid_t pid;
    int   cport, pport;
    char  name[64];
    char  dir[512];
    char  url[80];
    char  log[600];
} etcdt_member;

static ST__UNUSED int etcdt__spawn(etcdt_member *m)
{
    char data[600], curl[80], purl[80], init[160], pidfile[600];
    const char *base = getenv("LDL_TEST_DIR");
    snprintf(data, sizeof data, "%s/data", m->dir);
    snprintf(curl, sizeof curl, "http://127.0.0.1:%d", m->cport);
    snprintf(purl, sizeof purl, "http://127.0.0.1:%d", m->pport);
    snprintf(init, sizeof init, "%s=%s", m->name, purl);
    snprintf(pidfile, sizeof pidfile, "%s/etcd-%s.pid", base && *base ? base : m->dir, m->name);
    {
        char *argv[] = { (char *)"etcd", (char *)"--name", m->name, (char *)"--data-dir", data,
                         (char *)"--listen-client-urls", curl, (char *)"--advertise-client-urls", curl,
                         (char *)"--listen-peer-urls", purl, (char *)"--initial-advertise-peer-urls", purl,
                         (char *)"--initial-cluster", init, (char *)"--initial-cluster-state", (char *)"new",
                         (char *)"--logger", (char *)"zap", (char *)"--log-level", (char *)"warn", NULL };
        m->pid = st_spawn(argv, m->log, pidfile);
    }
    snprintf(m->url, sizeof m->url, "%s", curl);
    return m->pid > 0;
}

static ST__UNUSED int etcdt_post(const char *url, const char *path, const char *body, char *out, size_t cap);

/* wait for /health to say true */
static ST__UNUSED int etcdt__healthy(etcdt_member *m, uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    char buf[256];
    do {
        CURL *h = curl_easy_init();
        FILE *f;
        long code = 0;
        char url[96];
        snprintf(url, sizeof url, "%s/health", m->url);
        f = fmemopen(buf, sizeof buf - 1, "w");
        if (h && f) {
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
            curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 1000L);
            memset(buf, 0, sizeof buf);
            if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        }
        if (f) fclose(f);
        if (h) curl_easy_cleanup(h);
        if (code == 200 && strstr(buf, "\"health\":\"true\"")) return 1;
        st_sleep_ms(100);
    } while (st_now_ms() < end);
    return 0;
}

static ST__UNUSED void etcdt__dump_log(const etcdt_member *m)
{
    char line[512];
    FILE *f = fopen(m->log, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) fprintf(stderr, "  etcd log: %s", line);
    fclose(f);
}

static ST__UNUSED int etcdt_start(etcdt_member *m, const char *tag)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", tag);
    if (st_tmpdir(m->dir, sizeof m->dir, "etcd") != 0) return 0;
    snprintf(m->log, sizeof m->log, "%s/etcd.log", m->dir);
    m->cport = st_free_port();
    m->pport = st_free_port();
    while (m->pport == m->cport) m->pport = st_free_port();
    if (m->cport <= 0 || m->pport <= 0 || !etcdt__spawn(m)) return 0;
    if (!etcdt__healthy(m, 30000)) {
        fprintf(stderr, "etcd %s did not become healthy on %s\n", m->name, m->url);
        etcdt__dump_log(m);
        return 0;
    }
    return 1;
}

static ST__UNUSED void etcdt_stop(etcdt_member *m)
{
    if (m->pid > 0) st_stop(m->pid, SIGTERM, 10000);
    m->pid = 0;
}

static ST__UNUSED int etcdt_restart(etcdt_member *m)
{
    etcdt_stop(m);
    if (!etcdt__spawn(m)) return 0;
    if (!etcdt__healthy(m, 30000)) { etcdt__dump_log(m); return 0; }
    return 1;
}

typedef struct etcdt__buf { char *p; size_t n, cap; } etcdt__buf;
static size_t etcdt__w(char *p, size_t sz, size_t nm, void *ud)
{
    etcdt__buf *b = (etcdt__buf *)ud;
    size_t n = sz * nm;
    if (b->n + n + 1 > b->cap) n = b->cap - b->n - 1;
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return sz * nm;
}

static ST__UNUSED int etcdt_post(const char *url, const char *path, const char *body, char *out, size_t cap)
{
    char u[256];
    long code = -1;
    etcdt__buf b;
    CURL *h = curl_easy_init();
    char dummy[2];
    if (!out || cap < 2) { out = dummy; cap = sizeof dummy; }
    b.p = out; b.n = 0; b.cap = cap; out[0] = '\0';
    if (!h) return -1;
    snprintf(u, sizeof u, "%s%s", url, path);
    curl_easy_setopt(h, CURLOPT_URL, u);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, etcdt__w);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)&b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    else code = -1;
    curl_easy_cleanup(h);
    return (int)code;
}

/* keys under prefix (range [prefix, prefix+1)); -1 on error */
static ST__UNUSED long etcdt_count(const char *url, const char *prefix)
{
    char k64[256], e64[256], end[128], body[600], out[4096];
    size_t n = strlen(prefix);
    cJSON *j;
    long count = -1;
    if (n == 0 || n >= sizeof end) return -1;
    memcpy(end, prefix, n + 1);
    end[n - 1] = (char)(end[n - 1] + 1);
    if (ldl__etcd_b64enc((const unsigned char *)prefix, n, k64, sizeof k64) != 0 ||
        ldl__etcd_b64enc((const unsigned char *)end, n, e64, sizeof e64) != 0) return -1;
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"range_end\":\"%s\",\"count_only\":true}", k64, e64);
    if (etcdt_post(url, "/v3/kv/range", body, out, sizeof out) != 200) return -1;
    j = cJSON_Parse(out);
    if (j) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "count");
        if (!c) count = 0;
        else if (cJSON_IsString(c)) count = atol(cJSON_GetStringValue(c));
        cJSON_Delete(j);
    }
    return count;
}

/* leases alive in the store (lease/leases); -1 on error */
static ST__UNUSED long etcdt_leases(const char *url)
{
    char out[65536];
    cJSON *j;
    long n = -1;
    if (etcdt_post(url, "/v3/lease/leases", "{}", out, sizeof out) != 200) return -1;
    j = cJSON_Parse(out);
    if (j) {
        cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "leases");
        n = l ? (long)cJSON_GetArraySize(l) : 0;
        cJSON_Delete(j);
    }
    return n;
}

#ifndef LDL_NO_ASYNC
/* ---------------------------------------------------------------- the sync shim */
typedef struct etcdt_shim {
    ldl_etcd_async *ea;
    uint32_t        max_ms;      /* give up waiting (a test failure, not a store answer) */
    int             pumps;       /* pumps the last call took */
} etcdt_shim;

static int etcdt__run(etcdt_shim *s, ldl_op *op, int kind, int rc, int64_t *token)
{
    uint64_t end = st_now_ms() + s->max_ms;
    s->pumps = 0;
    if (rc != LDL_OK) { op->_phase = LDL__OP_IDLE; return rc; }
    while (op->_phase != LDL__OP_ANSWERED) {
        if (st_now_ms() > end) {
            ldl_etcd_async_store(s->ea).cancel(s->ea, op);
            fprintf(stderr, "shim: no answer within %u ms\n", s->max_ms);
            return -999;
        }
        ldl_etcd_async_wait(s->ea, 5);
        ldl_etcd_async_pump(s->ea);
        s->pumps++;
    }
    (void)kind;
    if (token) *token = op->_token;
    op->_phase = LDL__OP_IDLE;
    return op->_rc;
}

static void etcdt__fly(ldl_op *op, int kind)
{
    memset(op, 0, sizeof *op);
    op->_phase = LDL__OP_FLYING;
    op->_kind = kind;
}

static int etcdt__acq(void *ctx, const char *key, uint32_t ttl, int64_t *tok)
{
    etcdt_shim *s = (etcdt_shim *)ctx;
    ldl_op op;
    *tok = 0;
    etcdt__fly(&op, LDL_OP_ACQUIRE);
    return etcdt__run(s, &op, LDL_OP_ACQUIRE, ldl_etcd_async_store(s->ea).acquire(s->ea, &op, key, ttl), tok);
}
static int etcdt__ren(void *ctx, const char *key, int64_t t, uint32_t ttl)
{
    etcdt_shim *s = (etcdt_shim *)ctx;
    ldl_op op;
    etcdt__fly(&op, LDL_OP_RENEW);
    return etcdt__run(s, &op, LDL_OP_RENEW, ldl_etcd_async_store(s->ea).renew(s->ea, &op, key, t, ttl), NULL);
}
static int etcdt__rel(void *ctx, const char *key, int64_t t)
{
    etcdt_shim *s = (etcdt_shim *)ctx;
    ldl_op op;
    etcdt__fly(&op, LDL_OP_RELEASE);
    return etcdt__run(s, &op, LDL_OP_RELEASE, ldl_etcd_async_store(s->ea).release(s->ea, &op, key, t), NULL);
}

static ST__UNUSED ldl_store etcdt_shim_store(etcdt_shim *s)
{
    ldl_store st;
    st.acquire = etcdt__acq;
    st.renew = etcdt__ren;
    st.release = etcdt__rel;
    st.ctx = s;
    return st;
}
#endif

static ST__UNUSED void etcdt_maxima(char prefix[64], char key[LDL_KEY_MAX], char owner[LDL_OWNER_MAX])
{
    memset(prefix, 'p', 62);
    prefix[62] = '/';
    prefix[63] = '\0';
    memset(key, 'k', LDL_KEY_MAX - 1);
    key[LDL_KEY_MAX - 1] = '\0';
    memset(owner, 'o', LDL_OWNER_MAX - 1);
    owner[LDL_OWNER_MAX - 1] = '\0';
}

static ST__UNUSED void etcdt_cfg(ldl_etcd_config *c, const char *endpoints, const char *prefix)
{
    memset(c, 0, sizeof *c);
    c->endpoints = endpoints;
    c->prefix = prefix;
}

#endif /* LDL_TESTS_STORE_ETCD_COMMON_H */
