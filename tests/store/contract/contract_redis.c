/* contract_redis.c -- the adapter contract suite (contract.h) against the Redis adapter: a
 * real redis-server (tests/store/redis_server.h, started here), the synchronous ldl_redis
 * and the non-blocking ldl_redis_async. The hostile parts: redis_server.h's hostile node
 * (scenario 'n': a grant answered with another call's nonce) and
 * tests/store/contract/resp_tree.py (a 4.5 MB 16-ary reply tree); the frozen server is the
 * real one under SIGSTOP. Run through tests/store/with_redis.sh. Last line:
 * "redis: N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"
#include "adapters/lite_di_lock_view.h"
#include "tests/store/contract/contract.h"

#define PREFIX "ct"
#define TIMEOUT_MS 300u

typedef struct rd_side {              /* one client: a context and the adapter over it */
    redisContext    *c;
    ldl_redis        r;
    ldl_redis_async  ra;
    ldl_redis_req    reqs[8];
} rd_side;

typedef struct rd_fx {
    rs_server   srv;
    rs_hostile  hostile;
    int         tree_port;
    rd_side     a, b, x;
    int         frozen;
} rd_fx;

static rd_fx R;

static redisContext *rd_connect(int port, int async)
{
    redisContext *c;
    if (!async) return rs_connect_port(port, TIMEOUT_MS);
    c = redisConnectNonBlock("127.0.0.1", port);
    {   /* wait for the connect to complete, so the first pump writes at once */
        struct pollfd p;
        p.fd = c ? c->fd : -1; p.events = POLLOUT; p.revents = 0;
        if (c && !c->err) (void)poll(&p, 1, 2000);
    }
    return c;
}

/* a side on `port`, in the fixture's view; 0 ok */
static int rd_side_open(ct_fx *f, rd_side *s, int port, ct_client *c)
{
    ldl_view v;
    memset(s, 0, sizeof *s);
    s->c = rd_connect(port, f->is_async);
    if (!s->c || s->c->err) { fprintf(stderr, "connect %d: %s\n", port, s->c ? s->c->errstr : "?"); return -1; }
    if (f->is_async) {
        if (ldl_redis_async_init(&s->ra, s->c, PREFIX, s->reqs, 8) != LDL_OK ||
            ldl_view_redis_async(&v, &s->ra) != LDL_OK) return -1;
    } else {
        if (ldl_redis_init(&s->r, s->c, PREFIX) != LDL_OK || ldl_view_redis(&v, &s->r) != LDL_OK) return -1;
    }
    ct_attach(c, &v, f->is_async);
    return 0;
}

static void rd_side_close(rd_side *s)
{
    if (s->c) redisFree(s->c);
    memset(s, 0, sizeof *s);
}

static long rd_count(ct_fx *f)
{
    redisContext *c = rs_connect(&R.srv, 2000);
    long n;
    (void)f;
    n = (long)rs_int(rs_cmd(c, "DBSIZE", NULL), -1);
    if (c) redisFree(c);
    return n;
}

static const char *rd_open(ct_fx *f, int which, ct_client *c, ct_probe *p)
{
    switch (which < 0 ? -which : which) {
    case CT_FAKE_UNPROVEN:
        rs_hostile_next(&R.hostile, 'n');          /* a grant with another call's nonce */
        if (rd_side_open(f, &R.x, R.hostile.port, c) != 0) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_FAKE_TREE:
        if (which < 0) return NULL;
        if (rd_side_open(f, &R.x, R.tree_port, c) != 0) c->open_rc = CT_NOANSWER;
        c->max_ms = 20000;
        return NULL;
    case CT_FROZEN:
        if (rd_side_open(f, &R.x, R.srv.port, c) != 0) { c->open_rc = CT_NOANSWER; return NULL; }
        R.frozen = kill(R.srv.pid, SIGSTOP) == 0;
        if (!R.frozen) c->open_rc = CT_NOANSWER;
        return NULL;
    case CT_MISSING:
        return "a key space: there is no store object to create (inspect of a missing key: inspect_readonly)";
    case CT_FOREIGN:
        return "the server cannot refuse keys another client may write: docs/redis.md names the ACL that makes "
               "them the lock's own (redis_election's test_acl_own, three real ACL users)";
    case CT_DURABILITY:                       /* one server, no replica */
        if (which < 0) return NULL;
        if (rd_side_open(f, &R.x, R.srv.port, c) != 0) c->open_rc = CT_NOANSWER;
        p->standbys = 0;
        return NULL;
    default:
        return "no such item";
    }
}

static void rd_close(ct_fx *f, int which, ct_client *c)
{
    (void)f; (void)c;
    if (which == CT_FROZEN && R.frozen) { kill(R.srv.pid, SIGCONT); R.frozen = 0; }
    rd_side_close(&R.x);
    if (which == CT_FAKE_UNPROVEN) {
        (void)rs_hostile_answered(&R.hostile, 3000);
        rs_hostile_done(&R.hostile);
    }
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
    if (rs_start(&R.srv, "contract-redis", 1) != 0) { ST_CHECK(0, "redis-server"); return st_report(); }
    if (rs_hostile_start(&R.hostile) != 0) { ST_CHECK(0, "hostile node"); rs_stop(&R.srv); return st_report(); }
    R.tree_port = ct_start_fake("tests/store/contract/resp_tree.py", &tree_pid, tdir, sizeof tdir);
    ST_CHECK(R.tree_port > 0, "%s", "the reply-tree fake");
    for (v = 0; v < 2; v++) {
        ct_fx *f = &fx[v];
        /* frozen_bound_ms: a read timeout per reply, the call's wall clock */
        ct_fx_init(f, "redis", v, 3 * TIMEOUT_MS + 200, rd_count, rd_open, rd_close);
        ST_CHECK(rd_side_open(f, &R.a, R.srv.port, &f->a) == 0, "%s", "client a");
        ST_CHECK(rd_side_open(f, &R.b, R.srv.port, &f->b) == 0, "%s", "client b");
        ct_run_view(f);
        rd_side_close(&R.a);
        rd_side_close(&R.b);
        views[v] = f;
    }
    if (tree_pid > 0) st_stop(tree_pid, SIGKILL, 2000);
    rs_hostile_stop(&R.hostile);
    rs_stop(&R.srv);
    return ct_report("redis", views, 2);
}
