/* contract_redis_cluster.c -- the adapter contract suite (contract.h) against the Redis
 * Cluster adapter: a real 6-node cluster (tests/store/redis_cluster_server.h, started here),
 * the synchronous ldl_redis_cluster and the non-blocking ldl_redis_cluster_async. The
 * hostile parts: tests/store/redis_fake_node.py mode "othernonce" (every slot on the fake,
 * which answers each script with another call's nonce) and tests/store/contract/resp_tree.py
 * (a 4.5 MB 16-ary reply tree to each script); the frozen server is every node under
 * SIGSTOP. Run through tests/store/with_redis_cluster.sh. Last line:
 * "redis_cluster: N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_REDIS_CLUSTER_IMPLEMENTATION
#include "adapters/lite_di_lock_redis_cluster.h"
#include "tests/store/redis_server.h"
#include "tests/store/redis_fake.h"
#include "tests/store/redis_cluster_server.h"
#include "adapters/lite_di_lock_view.h"
#include "tests/store/contract/contract.h"

#define PREFIX "ct"
#define TIMEOUT_MS 300u

typedef struct cl_side {
    int                      live;     /* 1 sync, 2 async */
    ldl_redis_cluster        rc;
    ldl_redis_cluster_async  ra;
    ldl_redis_cluster_req    reqs[16];
} cl_side;

static cl_side A, B, X;
static rf_node FAKE;
static int tree_port, frozen;

static int cl_side_open(ct_fx *f, cl_side *s, const char *seeds, ct_client *c)
{
    ldl_view v;
    memset(s, 0, sizeof *s);
    if (f->is_async) {
        if (ldl_redis_cluster_async_init(&s->ra, seeds, PREFIX, TIMEOUT_MS, s->reqs, 16) != LDL_OK) {
            fprintf(stderr, "cluster async init: %s\n", ldl_redis_cluster_async_why(&s->ra));
            s->live = 2;
            return -1;
        }
        s->live = 2;
        if (ldl_view_redis_cluster_async(&v, &s->ra) != LDL_OK) return -1;
    } else {
        if (ldl_redis_cluster_init(&s->rc, seeds, PREFIX, TIMEOUT_MS) != LDL_OK) {
            fprintf(stderr, "cluster init: %s\n", ldl_redis_cluster_why(&s->rc));
            s->live = 1;
            return -1;
        }
        s->live = 1;
        if (ldl_view_redis_cluster(&v, &s->rc) != LDL_OK) return -1;
    }
    ct_attach(c, &v, f->is_async);
    return 0;
}

static void cl_side_close(cl_side *s)
{
    if (s->live == 2) ldl_redis_cluster_async_free(&s->ra);
    if (s->live == 1) ldl_redis_cluster_free(&s->rc);
    s->live = 0;
}

/* keys on the masters (replicas hold copies) */
static long cl_count(ct_fx *f)
{
    long n = 0;
    int i;
    (void)f;
    for (i = 0; i < NN; i++) {
        redisContext *c = conn(i);
        redisReply *r = c ? rs_cmd(c, "ROLE", NULL) : NULL;
        int master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING &&
                     strcmp(r->element[0]->str, "master") == 0;
        if (r) freeReplyObject(r);
        if (master) {
            long long k = rs_int(rs_cmd(c, "DBSIZE", NULL), -1);
            if (k < 0) n = -1000000;
            n += (long)k;
        }
        if (c) redisFree(c);
    }
    return n < 0 ? -1 : n;
}

static const char *cl_open(ct_fx *f, int which, ct_client *c, ct_probe *p)
{
    char seed[64];
    int i;
    switch (which < 0 ? -which : which) {
    case CT_FAKE_UNPROVEN:
        snprintf(seed, sizeof seed, "127.0.0.1:%d", FAKE.port);
        if (cl_side_open(f, &X, seed, c) != 0) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_FAKE_TREE:
        if (which < 0) return NULL;
        snprintf(seed, sizeof seed, "127.0.0.1:%d", tree_port);
        if (cl_side_open(f, &X, seed, c) != 0) c->open_rc = CT_NOANSWER;
        c->max_ms = 20000;
        return NULL;
    case CT_FROZEN:
        if (cl_side_open(f, &X, g_seeds, c) != 0) { c->open_rc = CT_NOANSWER; return NULL; }
        frozen = 1;
        for (i = 0; i < NN; i++) if (kill(g_n[i].pid, SIGSTOP) != 0) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_MISSING:
        return "a key space: there is no store object to create (inspect of a missing key: inspect_readonly)";
    case CT_FOREIGN:
        return "the server cannot refuse keys another client may write: docs/redis.md names the ACL that makes "
               "them the lock's own (redis_election's test_acl_own)";
    case CT_DURABILITY:                       /* asynchronous replicas: none has every grant */
        if (which < 0) return NULL;
        if (cl_side_open(f, &X, g_seeds, c) != 0) c->open_rc = CT_NOANSWER;
        p->standbys = 0;
        return NULL;
    default:
        return "no such item";
    }
}

static void cl_close(ct_fx *f, int which, ct_client *c)
{
    int i;
    (void)f; (void)c;
    if (which == CT_FROZEN && frozen) {
        for (i = 0; i < NN; i++) kill(g_n[i].pid, SIGCONT);
        frozen = 0;
        (void)cluster_ok_everywhere(30000);
    }
    cl_side_close(&X);
}

int main(void)
{
    ct_fx fx[2];
    const ct_fx *views[2];
    char tdir[512];
    pid_t tree_pid = 0;
    int v;
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (start_cluster() != 0) { ST_CHECK(0, "start the cluster"); stop_cluster(); return st_report(); }
    if (rf_start(&FAKE, "othernonce", NULL) != 0) { ST_CHECK(0, "fake node"); stop_cluster(); return st_report(); }
    tree_port = ct_start_fake("tests/store/contract/resp_tree.py", &tree_pid, tdir, sizeof tdir);
    ST_CHECK(tree_port > 0, "%s", "the reply-tree fake");
    for (v = 0; v < 2; v++) {
        ct_fx *f = &fx[v];
        /* frozen_bound_ms: the exchange's bound (decision 0107) */
        ct_fx_init(f, "redis_cluster", v, 4 * TIMEOUT_MS + 300, cl_count, cl_open, cl_close);
        ST_CHECK(cl_side_open(f, &A, g_seeds, &f->a) == 0, "%s", "client a");
        ST_CHECK(cl_side_open(f, &B, g_seeds, &f->b) == 0, "%s", "client b");
        ct_run_view(f);
        cl_side_close(&A);
        cl_side_close(&B);
        views[v] = f;
    }
    if (tree_pid > 0) st_stop(tree_pid, SIGKILL, 2000);
    rf_stop(&FAKE);
    stop_cluster();
    return ct_report("redis_cluster", views, 2);
}
