/* tests/store/redis_reply_bounds.c -- the reply bounds of the Redis fenced write (issue 31,
 * issue 37 item 3, decision 0119), in both views, by default (no ldl_redis_limits given):
 *   tree     a 4.5 MB reply shaped as a 16-ary array tree 5 levels deep (a million
 *            objects; hiredis alone allows 7 levels): refused, LDL_ESTORE, and the process
 *            that made the call stays under 32 MB of RSS (getrusage ru_maxrss, measured in a
 *            child of its own before and after the call; the figures are printed)
 *   *17      a hostile command reply of 17 elements: LDL_ESTORE (docs/redis.md's 16-element
 *            bound); 16 elements: accepted (the control)
 *   objects  257+ objects in one reply (16 arrays of 15): refused; 244 (16 of 14): accepted
 *   bytes    80 strings of 2,000 bytes (more than LDL_REDIS_REPLY_TOTAL, 100 objects):
 *            refused; 48 of them: accepted
 *   real     against a real redis-server: a fenced LRANGE of 17 elements is LDL_ESTORE (the
 *            write ran, the connection is dropped), LRANGE of 16 is 1 with 16 elements; both
 *            views
 * The fake is a forked child that reads one fenced-write request, takes its nonce and
 * answers the scenario with it (so only the bound can refuse it). Built WITHOUT sanitizers
 * (the RSS figure is the adapter's, not ASan's). Run through tests/store/with_redis.sh.
 * Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#include "tests/store/redis_server.h"
#include <sys/resource.h>

static rs_server g_srv;

/* ------------------------------------------------------------ the fake */
typedef struct fake { st_child ch; int port, lfd; } fake;

/* read one RESP request (an array of bulk strings); its nonce (the argument after the
   numkeys keys of EVAL/EVALSHA) into nonce[17]; 0 ok */
static int read_request(int fd, char *nonce)
{
    static char buf[1 << 16];
    size_t n = 0;
    uint64_t end = st_now_ms() + 5000;
    for (;;) {
        if (n > 0 && buf[0] == '*') {
            long argc, a, numkeys = -1;
            size_t p;
            char *e;
            argc = strtol(buf + 1, &e, 10);
            p = (size_t)(e - buf) + 2;
            for (a = 0; a < argc && p < n; a++) {
                long len;
                if (buf[p] != '$') return -1;
                len = strtol(buf + p + 1, &e, 10);
                p = (size_t)(e - buf) + 2;
                if (p + (size_t)len + 2 > n) break;
                if (a == 2) numkeys = strtol(buf + p, NULL, 10);
                if (numkeys >= 0 && a == 3 + numkeys && len == 16) { memcpy(nonce, buf + p, 16); nonce[16] = 0; }
                p += (size_t)len + 2;
            }
            if (a == argc && p <= n) return nonce[0] ? 0 : -1;
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

/* the command's reply of scenario sc, after "*3 $16 nonce :1" */
static void answer(int fd, int sc)
{
    static char big[2001];
    char b[64];
    int i, j;
    memset(big, 'b', 2000);
    switch (sc) {
    case 'T': {                                   /* the tree: 16-ary, 5 levels, leaves :1 */
        size_t cap = 5u << 20, n = 0;
        char *t = (char *)malloc(cap);
        long leaves = 16L * 16 * 16 * 16 * 16, l;
        if (!t) return;
        /* depth-first: every 16th leaf closes a level; written as one pre-order stream */
        for (l = 0; l < leaves; l++) {
            long x = l;
            int opens = 0;
            while (opens < 5 && x % 16 == 0) { opens++; x /= 16; }
            for (i = 0; i < opens; i++) { memcpy(t + n, "*16\r\n", 5); n += 5; }
            memcpy(t + n, ":1\r\n", 4); n += 4;
        }
        rs__write_all(fd, t, n);
        free(t);
        break;
    }
    case '7': case '6':                           /* 17 (or 16) integers */
        snprintf(b, sizeof b, "*%d\r\n", sc == '7' ? 17 : 16);
        rs__write_all(fd, b, strlen(b));
        for (i = 0; i < (sc == '7' ? 17 : 16); i++) rs__write_all(fd, ":1\r\n", 4);
        break;
    case 'o': case 'k':                           /* 16 arrays of 15 (or 14) integers */
        rs__write_all(fd, "*16\r\n", 5);
        for (i = 0; i < 16; i++) {
            snprintf(b, sizeof b, "*%d\r\n", sc == 'o' ? 15 : 14);
            rs__write_all(fd, b, strlen(b));
            for (j = 0; j < (sc == 'o' ? 15 : 14); j++) rs__write_all(fd, ":1\r\n", 4);
        }
        break;
    case 'B': case 'b':                           /* 16 arrays of 5 (or 3) 2,000-byte strings */
        rs__write_all(fd, "*16\r\n", 5);
        for (i = 0; i < 16; i++) {
            rs__write_all(fd, sc == 'B' ? "*5\r\n" : "*3\r\n", 4);
            for (j = 0; j < (sc == 'B' ? 5 : 3); j++) {
                rs__write_all(fd, "$2000\r\n", 7);
                rs__write_all(fd, big, 2000);
                rs__write_all(fd, "\r\n", 2);
            }
        }
        break;
    default: rs__write_all(fd, "+OK\r\n", 5); break;
    }
}

static int fake_main(void *arg, int in, int out)
{
    fake *f = (fake *)arg;
    for (;;) {
        char nonce[17], head[64];
        int sc = st_recv(in, 120000), fd;
        if (sc < 0 || sc == 'q') return 0;
        fd = accept(f->lfd, NULL, NULL);
        if (fd < 0) return 1;
        nonce[0] = 0;
        if (read_request(fd, nonce) == 0) {
            snprintf(head, sizeof head, "*3\r\n$16\r\n%s\r\n:1\r\n", nonce);
            rs__write_all(fd, head, strlen(head));
            answer(fd, sc);
        }
        st_send(out, 'a');
        st_recv(in, 120000);
        close(fd);
    }
}

static int fake_start(fake *f)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    memset(f, 0, sizeof *f);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(f->lfd, 8) != 0 ||
        getsockname(f->lfd, (struct sockaddr *)&a, &len) != 0) return -1;
    f->port = ntohs(a.sin_port);
    return st_fork(&f->ch, fake_main, f);
}

/* ------------------------------------------------------------ one fenced write, both views */
static const char *g_argv[3] = { "SET", "{rb}:d", "v" };

static int sync_fence(int port, redisReply **rep, char *why, size_t n)
{
    redisContext *c = rs_connect_port(port, 5000);
    ldl_redis r;
    int rc;
    *rep = NULL;
    if (!c || ldl_redis_init(&r, c, NULL) != LDL_OK) { if (c) redisFree(c); return -100; }
    rc = ldl_redis_fence(&r, "rb", 3, 1, NULL, 3, g_argv, NULL, rep);
    snprintf(why, n, "%s", ldl_redis_why(&r));
    redisFree(c);
    return rc;
}

static void async_done(void *ctx, int rc, redisReply *rep)
{
    int *got = (int *)ctx;
    got[0] = rc;
    got[1] = rep && rep->type == REDIS_REPLY_ARRAY ? (int)rep->elements : -1;
    if (rep) freeReplyObject(rep);
}

/* got[1]: the elements of the reply handed out (-1: none or not an array) */
static int async_fence(int port, int64_t fence, int nkeys, int argc, const char **argv, int *elements, char *why,
                       size_t n)
{
    static ldl_redis_req reqs[4];
    ldl_redis_async ra;
    redisContext *c = redisConnectNonBlock("127.0.0.1", port);
    int got[2] = { -100, -1 }, rc;
    uint64_t end;
    if (!c || ldl_redis_async_init(&ra, c, NULL, reqs, 4) != LDL_OK) { if (c) redisFree(c); return -100; }
    rc = ldl_redis_async_fence(&ra, argc == 3 ? "rb" : "rl", fence, nkeys, NULL, argc, argv, NULL, async_done, got);
    if (rc != LDL_OK) { redisFree(c); return -101; }
    end = st_now_ms() + 10000;
    while (got[0] == -100 && st_now_ms() < end) {
        if (ldl_redis_async_pump(&ra) < 0 && got[0] == -100) break;
        st_sleep_ms(2);
    }
    snprintf(why, n, "%s", ldl_redis_async_why(&ra));
    if (elements) *elements = got[1];
    redisFree(c);
    return got[0];
}

/* the fake answers the next connection with scenario sc; run `view` (0 sync, 1 async) */
static int against(fake *f, int sc, int view, int *elements, char *why, size_t n)
{
    int rc;
    *elements = -1;
    st_send(f->ch.to_child, (char)sc);
    if (view == 0) {
        redisReply *rep = NULL;
        rc = sync_fence(f->port, &rep, why, n);
        if (rep) { *elements = rep->type == REDIS_REPLY_ARRAY ? (int)rep->elements : -1; freeReplyObject(rep); }
    } else {
        rc = async_fence(f->port, 3, 1, 3, (const char **)g_argv, elements, why, n);
    }
    st_recv(f->ch.from_child, 20000);
    st_send(f->ch.to_child, 'd');
    return rc;
}

static void test_shapes(fake *f)
{
    static const struct { int sc, ok, elements; const char *what; } cases[] = {
        { '7', 0, 0,  "a hostile *17 command reply" },
        { '6', 1, 16, "control: *16" },
        { 'o', 0, 0,  "16 arrays of 15 integers (260 objects > LDL_REDIS_REPLY_OBJECTS)" },
        { 'k', 1, 16, "control: 16 arrays of 14 (244 objects)" },
        { 'B', 0, 0,  "80 strings of 2,000 bytes (161 KB > LDL_REDIS_REPLY_TOTAL, 100 objects)" },
        { 'b', 1, 16, "control: 48 strings of 2,000 bytes (97 KB)" },
    };
    size_t i;
    int view;
    for (view = 0; view < 2; view++)
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char why[512];
            int el, rc = against(f, cases[i].sc, view, &el, why, sizeof why);
            if (cases[i].ok)
                ST_CHECK(rc == 1 && el == cases[i].elements, "%s view, %s: accepted (rc %d, %d elements, %s)",
                         view ? "async" : "sync", cases[i].what, rc, el, why);
            else
                ST_CHECK(rc == LDL_ESTORE && el == -1 && strstr(why, "refused"),
                         "%s view, %s: LDL_ESTORE, nothing handed out (rc %d, %s)", view ? "async" : "sync",
                         cases[i].what, rc, why);
        }
}

/* the tree, in a child of its own: its RSS before and after the call */
static int tree_child(void *arg, int in, int out)
{
    int *port_view = (int *)arg, rc, el = -1;
    struct rusage u0, u1;
    char why[512];
    long r[3];
    (void)in;
    getrusage(RUSAGE_SELF, &u0);
    if (port_view[1] == 0) {
        redisReply *rep = NULL;
        rc = sync_fence(port_view[0], &rep, why, sizeof why);
        if (rep) freeReplyObject(rep);
    } else {
        rc = async_fence(port_view[0], 3, 1, 3, (const char **)g_argv, &el, why, sizeof why);
    }
    getrusage(RUSAGE_SELF, &u1);
    r[0] = rc; r[1] = u0.ru_maxrss; r[2] = u1.ru_maxrss;
    if (write(out, r, sizeof r) != (ssize_t)sizeof r) return 3;
    fprintf(stderr, "  tree, %s view: rc %d (%s)\n", port_view[1] ? "async" : "sync", rc, why);
    return 0;
}

static void test_tree(fake *f)
{
    int view;
    for (view = 0; view < 2; view++) {
        st_child c;
        int pv[2];
        long r[3] = { -1, -1, -1 };
        ssize_t got = -1;
        pv[0] = f->port; pv[1] = view;
        st_send(f->ch.to_child, 'T');
        if (st_fork(&c, tree_child, pv) != 0) { ST_CHECK(0, "%s", "fork"); return; }
        {
            struct pollfd p;
            p.fd = c.from_child; p.events = POLLIN; p.revents = 0;
            if (poll(&p, 1, 30000) > 0) got = read(c.from_child, r, sizeof r);
        }
        ST_CHECK(st_join(&c, 30000) == 0 && got == (ssize_t)sizeof r, "the tree child reports (%ld)", (long)got);
        printf("  tree (16-ary, 5 deep, 4.5 MB), %s view: rc %ld, ru_maxrss %ld KB before the call, %ld KB after\n",
               view ? "async" : "sync", r[0], r[1], r[2]);
        ST_CHECK(r[0] == LDL_ESTORE, "%s view: the tree is refused (rc %ld)", view ? "async" : "sync", r[0]);
        ST_CHECK(r[2] > 0 && r[2] < 32 * 1024, "%s view: RSS stays under 32 MB (%ld KB)", view ? "async" : "sync", r[2]);
        st_recv(f->ch.from_child, 20000);
        st_send(f->ch.to_child, 'd');
    }
}

/* ------------------------------------------------------------ a real server */
static void test_real(void)
{
    redisContext *c = rs_connect(&g_srv, 5000), *lc = rs_connect(&g_srv, 5000);
    ldl_redis r;
    int n, view;
    if (!c || !lc || ldl_redis_init(&r, lc, NULL) != LDL_OK) { ST_CHECK(0, "%s", "connect"); return; }
    for (n = 16; n <= 17; n++) {
        char k[32], num[16];
        const char *argv[4];
        int i, el;
        snprintf(k, sizeof k, "{rl}:list%d", n);
        rs_int(rs_cmd(c, "DEL", k, NULL), 0);
        for (i = 0; i < n; i++) { snprintf(num, sizeof num, "%d", i); freeReplyObject(rs_cmd(c, "RPUSH", k, num, NULL)); }
        argv[0] = "LRANGE"; argv[1] = k; argv[2] = "0"; argv[3] = "-1";
        for (view = 0; view < 2; view++) {
            char why[512];
            int rc;
            if (view == 0) {
                redisReply *rep = NULL;
                if (lc->err) rs_reconnect(lc, 5000);
                rc = ldl_redis_fence(&r, "rl", (int64_t)(n * 10 + view), 1, NULL, 4, argv, NULL, &rep);
                el = rep && rep->type == REDIS_REPLY_ARRAY ? (int)rep->elements : -1;
                snprintf(why, sizeof why, "%s", ldl_redis_why(&r));
                if (rep) freeReplyObject(rep);
            } else {
                rc = async_fence(g_srv.port, (int64_t)(n * 10 + view), 1, 4, argv, &el, why, sizeof why);
            }
            if (n == 16)
                ST_CHECK(rc == 1 && el == 16, "real server, %s view: a fenced LRANGE of 16 elements is 1 with 16 (rc %d, %d: %s)",
                         view ? "async" : "sync", rc, el, why);
            else
                ST_CHECK(rc == LDL_ESTORE && el == -1 && strstr(why, "refused"),
                         "real server, %s view: a fenced LRANGE of 17 elements is LDL_ESTORE (rc %d: %s)",
                         view ? "async" : "sync", rc, why);
        }
    }
    ST_CHECK(rs_is(rs_cmd(c, "GET", "{rl}:ldl:mark", NULL), "171"), "%s",
             "the mark moved all the same (the write ran; its reply was refused)");
    redisFree(lc);
    redisFree(c);
}

int main(void)
{
    fake f;
    st_ignore_sigpipe();
    st_case("start", 30);
    if (rs_start(&g_srv, "rbounds", 0) != 0) { ST_CHECK(0, "%s", "redis-server start"); return st_report(); }
    if (fake_start(&f) != 0) { ST_CHECK(0, "%s", "fake"); rs_stop(&g_srv); return st_report(); }
    st_case("shapes", 60);
    test_shapes(&f);
    st_case("tree", 60);
    test_tree(&f);
    st_case("real LRANGE", 60);
    test_real();
    st_case("", 0);
    st_send(f.ch.to_child, 'q');
    st_join(&f.ch, 5000);
    rs_stop(&g_srv);
    return st_report();
}
