/* contract_etcd.c -- the adapter contract suite (contract.h) against the etcd adapter: a
 * real single member (tests/store/etcd_common.h, started here), the synchronous ldl_etcd and
 * the non-blocking ldl_etcd_async, every key behind a 63-byte prefix (the documented
 * maximum, so long_key is the 63 + 127 byte key). The hostile parts:
 * tests/store/etcd_fake.py (mode "canned": the acquire txn answered by a bare "succeeded"
 * that names no key and no lease) and tests/store/contract/etcd_padded.py (a provable grant
 * padded with 1,000 JSON values, over the parsed-value bound);
 * the frozen server is the real member under SIGSTOP. Run through tests/store/with_etcd.sh.
 * Last line: "etcd: N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/etcd_common.h"
#include "adapters/lite_di_lock_view.h"
#include "tests/store/contract/contract.h"

/* 63 bytes: the longest prefix the adapter takes (LDL__ETCD_PREFIX_MAX - 1) */
#define PREFIX "ct/0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklm/"
#define CALL_MS 1000u

typedef struct et_side {
    ldl_etcd        e;
    ldl_etcd_async  ea;
    ldl_etcd_req    reqs[16];
    int             live;
} et_side;

static etcdt_member M;
static char FAKE[80], PADDED[80];
static et_side A, B, X;
static int frozen;

static int et_side_open(ct_fx *f, et_side *s, const char *url, ct_client *c)
{
    ldl_etcd_config cfg;
    ldl_view v;
    memset(s, 0, sizeof *s);
    etcdt_cfg(&cfg, url, PREFIX);
    cfg.call_ms = CALL_MS;
    cfg.attempt_ms = CALL_MS / 2;
    if (ldl_etcd_init(&s->e, &cfg) != LDL_OK) { fprintf(stderr, "etcd init: %s\n", ldl_etcd_why(&s->e)); return -1; }
    s->live = 1;
    if (f->is_async) {
        if (ldl_etcd_async_init(&s->ea, &s->e, s->reqs, 16) != LDL_OK) return -1;
        s->live = 2;
        if (ldl_view_etcd_async(&v, &s->ea) != LDL_OK) return -1;
    } else {
        if (ldl_view_etcd(&v, &s->e) != LDL_OK) return -1;
    }
    ct_attach(c, &v, f->is_async);
    return 0;
}

static void et_side_close(et_side *s)
{
    if (s->live == 2) ldl_etcd_async_close(&s->ea);
    if (s->live >= 1) ldl_etcd_close(&s->e);
    s->live = 0;
}

static long et_count(ct_fx *f)
{
    (void)f;
    return etcdt_count(M.url, PREFIX);
}

static int et_mode(const char *mode)
{
    return etcdt_post(FAKE, "/_mode", mode, NULL, 0) == 200 ? 0 : -1;
}

static const char *et_open(ct_fx *f, int which, ct_client *c, ct_probe *p)
{
    switch (which < 0 ? -which : which) {
    case CT_FAKE_UNPROVEN:
        if (et_mode("canned /v3/kv/txn") != 0 || et_side_open(f, &X, FAKE, c) != 0) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_FAKE_TREE:                        /* a provable grant padded over the value bound */
        if (which < 0) return NULL;
        if (et_side_open(f, &X, PADDED, c) != 0) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_FROZEN:
        if (et_side_open(f, &X, M.url, c) != 0) { c->open_rc = CT_NOANSWER; return NULL; }
        frozen = kill(M.pid, SIGSTOP) == 0;
        if (!frozen) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_MISSING:
        return "a key space: there is no store object to create (inspect of a missing key: inspect_readonly)";
    case CT_FOREIGN:
        return "the server cannot refuse keys another client may write: docs/etcd.md names the role that makes "
               "them the lock's own (etcd_guards.c, a real read-only user)";
    case CT_DURABILITY:                       /* one member: nothing to promote */
        if (which < 0) return NULL;
        if (et_side_open(f, &X, M.url, c) != 0) c->open_rc = CT_NOANSWER;
        p->standbys = 0;
        return NULL;
    default:
        return "no such item";
    }
}

static void et_close(ct_fx *f, int which, ct_client *c)
{
    (void)f; (void)c;
    if (which == CT_FROZEN && frozen) { kill(M.pid, SIGCONT); frozen = 0; }
    et_side_close(&X);
    if (which == CT_FAKE_UNPROVEN) (void)et_mode("ok *");
}

int main(void)
{
    ct_fx fx[2];
    const ct_fx *views[2];
    char fdir[512], pdir[512];
    pid_t fake_pid = 0, padded_pid = 0;
    int v, port;
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (!etcdt_start(&M, "contract")) { ST_CHECK(0, "start etcd"); return st_report(); }
    port = ct_start_fake("tests/store/etcd_fake.py", &fake_pid, fdir, sizeof fdir);
    ST_CHECK(port > 0, "%s", "the hostile gateway");
    snprintf(FAKE, sizeof FAKE, "http://127.0.0.1:%d", port);
    port = ct_start_fake("tests/store/contract/etcd_padded.py", &padded_pid, pdir, sizeof pdir);
    ST_CHECK(port > 0, "%s", "the padded gateway");
    snprintf(PADDED, sizeof PADDED, "http://127.0.0.1:%d", port);
    for (v = 0; v < 2; v++) {
        ct_fx *f = &fx[v];
        /* frozen_bound_ms: cfg.call_ms bounds the whole call */
        ct_fx_init(f, "etcd", v, CALL_MS + 300, et_count, et_open, et_close);
        ST_CHECK(et_side_open(f, &A, M.url, &f->a) == 0, "%s", "client a");
        ST_CHECK(et_side_open(f, &B, M.url, &f->b) == 0, "%s", "client b");
        ct_run_view(f);
        et_side_close(&A);
        et_side_close(&B);
        views[v] = f;
    }
    if (fake_pid > 0) st_stop(fake_pid, SIGKILL, 2000);
    if (padded_pid > 0) st_stop(padded_pid, SIGKILL, 2000);
    etcdt_stop(&M);
    curl_global_cleanup();
    return ct_report("etcd", views, 2);
}
