/* tests/store/redis_server.h -- a throwaway redis-server for the Redis test programs.
 *
 *   rs_server s;
 *   rs_start(&s, "tag", 1);       fresh temp dir under $LDL_TEST_DIR, free port on
 *                                 127.0.0.1, --save '' and appendonly yes + appendfsync
 *                                 always when aof is 1 (appendonly no when 0)
 *   redisContext *c = rs_connect(&s, 300);   connect + command timeout in ms
 *   rs_kill(&s, SIGKILL) / rs_restart(&s)    crash and come back on the same dir and port
 *   rs_stop(&s);                             at the end (with_redis.sh's trap is the backstop:
 *                                            each server pid is in a .pid file in $LDL_TEST_DIR)
 *   rs_cmd(c, "SET", "k", "v", NULL)         a reply (argv form, binary-safe), NULL on failure
 */
#ifndef LDL_TESTS_STORE_REDIS_SERVER_H
#define LDL_TESTS_STORE_REDIS_SERVER_H

#include "fenced.h"

/* the per-case bound of the Redis suites (st_case, issue 37), in seconds: the longest case
   here takes about 20 s (valgrind included); a case that hangs on a store fails by it */
#ifndef RS_CASE_S
#define RS_CASE_S 120
#endif
#include <hiredis/hiredis.h>
#include <sys/time.h>

typedef struct rs_server {
    char  dir[256];
    char  pidfile[300];
    char  log[300];
    char  portstr[16];
    int   port;
    int   aof;
    pid_t pid;
} rs_server;

static ST__UNUSED redisReply *rs_cmd(redisContext *c, const char *a0, ...)
{
    const char *argv[32];
    size_t lens[32];
    int argc = 0;
    va_list ap;
    const char *s = a0;
    va_start(ap, a0);
    while (s && argc < 32) {
        argv[argc] = s;
        lens[argc] = strlen(s);
        argc++;
        s = va_arg(ap, const char *);
    }
    va_end(ap);
    if (!c || c->err) return NULL;
    return (redisReply *)redisCommandArgv(c, argc, argv, lens);
}

/* the integer of a reply (freed), or `bad` when it is not an integer */
static ST__UNUSED long long rs_int(redisReply *r, long long bad)
{
    long long v = bad;
    if (r && r->type == REDIS_REPLY_INTEGER) v = r->integer;
    if (r) freeReplyObject(r);
    return v;
}

/* 1 when the reply is a status or bulk string equal to want (freed) */
static ST__UNUSED int rs_is(redisReply *r, const char *want)
{
    int ok = r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING) &&
             strcmp(r->str, want) == 0;
    if (r) freeReplyObject(r);
    return ok;
}

/* calls of one command from INFO commandstats, -1 when unreadable */
static ST__UNUSED long rs_cmd_calls(redisContext *c, const char *cmd)
{
    redisReply *r = rs_cmd(c, "INFO", "commandstats", NULL);
    char pat[64];
    long v = 0;
    if (!r || r->type != REDIS_REPLY_STRING) { if (r) freeReplyObject(r); return -1; }
    snprintf(pat, sizeof pat, "cmdstat_%s:calls=", cmd);
    {
        const char *p = strstr(r->str, pat);
        if (p) v = strtol(p + strlen(pat), NULL, 10);
    }
    freeReplyObject(r);
    return v;
}

static ST__UNUSED redisContext *rs_connect_port(int port, uint32_t timeout_ms)
{
    struct timeval tv;
    redisContext *c;
    tv.tv_sec = (time_t)(timeout_ms / 1000u);
    tv.tv_usec = (suseconds_t)((timeout_ms % 1000u) * 1000u);
    c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c) return NULL;
    if (c->err) { redisFree(c); return NULL; }
    if (redisSetTimeout(c, tv) != REDIS_OK) { redisFree(c); return NULL; }
    return c;
}

static ST__UNUSED redisContext *rs_connect(const rs_server *s, uint32_t timeout_ms)
{
    return rs_connect_port(s->port, timeout_ms);
}

/* redisReconnect, then the command timeout again: hiredis 0.14 does not carry it over to
   the new socket (1.x does); REDIS_OK or REDIS_ERR */
static ST__UNUSED int rs_reconnect(redisContext *c, uint32_t timeout_ms)
{
    struct timeval tv;
    if (redisReconnect(c) != REDIS_OK) return REDIS_ERR;
    tv.tv_sec = (time_t)(timeout_ms / 1000u);
    tv.tv_usec = (suseconds_t)((timeout_ms % 1000u) * 1000u);
    return redisSetTimeout(c, tv);
}

/* start (or restart) the process on s->dir / s->port; 0 once it answers PING */
static ST__UNUSED int rs__launch(rs_server *s)
{
    char *argv[24];
    int n = 0;
    uint64_t end;
    argv[n++] = (char *)"redis-server";
    argv[n++] = (char *)"--port";        argv[n++] = s->portstr;
    argv[n++] = (char *)"--bind";        argv[n++] = (char *)"127.0.0.1";
    argv[n++] = (char *)"--dir";         argv[n++] = s->dir;
    argv[n++] = (char *)"--save";        argv[n++] = (char *)"";
    argv[n++] = (char *)"--appendonly";  argv[n++] = (char *)(s->aof ? "yes" : "no");
    argv[n++] = (char *)"--appendfsync"; argv[n++] = (char *)(s->aof ? "always" : "everysec");
    argv[n++] = (char *)"--daemonize";   argv[n++] = (char *)"no";
    argv[n++] = (char *)"--logfile";     argv[n++] = (char *)"";
    argv[n++] = (char *)"--protected-mode"; argv[n++] = (char *)"yes";
    argv[n] = NULL;
    s->pid = st_spawn(argv, s->log, s->pidfile);
    if (s->pid <= 0) return -1;
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) { s->pid = 0; return -1; } /* died */
        if (st_wait_port(s->port, 50)) {
            redisContext *c = rs_connect(s, 1000);
            int ok = c && rs_is(rs_cmd(c, "PING", NULL), "PONG");
            if (c) redisFree(c);
            if (ok) return 0;
        }
    }
    st_stop(s->pid, SIGKILL, 2000);
    s->pid = 0;
    return -1;
}

static ST__UNUSED int rs_start(rs_server *s, const char *tag, int aof)
{
    int attempt;
    memset(s, 0, sizeof *s);
    s->aof = aof;
    if (st_tmpdir(s->dir, sizeof s->dir, tag) != 0) return -1;
    snprintf(s->pidfile, sizeof s->pidfile, "%s.pid", s->dir);  /* beside the dir, in LDL_TEST_DIR */
    snprintf(s->log, sizeof s->log, "%s/redis.log", s->dir);
    for (attempt = 0; attempt < 5; attempt++) {   /* a free port can be taken meanwhile: retry */
        s->port = st_free_port();
        if (s->port <= 0) continue;
        snprintf(s->portstr, sizeof s->portstr, "%d", s->port);
        if (rs__launch(s) == 0) return 0;
    }
    fprintf(stderr, "rs_start: redis-server did not start, see %s\n", s->log);
    return -1;
}

static ST__UNUSED int rs_kill(rs_server *s, int sig)
{
    int rc = st_stop(s->pid, sig, 5000);
    s->pid = 0;
    remove(s->pidfile);
    return rc;
}

static ST__UNUSED int rs_restart(rs_server *s)
{
    if (s->pid > 0) rs_kill(s, SIGKILL);
    return rs__launch(s);
}

static ST__UNUSED void rs_stop(rs_server *s)
{
    if (s->pid > 0) rs_kill(s, SIGTERM);
}

/* ------------------------------------------------------------ a hostile server
 *   rs_hostile h; rs_hostile_start(&h);     a forked child listening on h.port (127.0.0.1)
 *   rs_hostile_next(&h, 'i');              the NEXT connection it accepts gets scenario 'i':
 *                                          it reads one adapter request (which ends with the
 *                                          16-hex-digit nonce) and answers as the scenario says
 *   rs_hostile_done(&h);                   closes that connection
 *   rs_hostile_stop(&h);
 * Scenarios: 'G' a correct grant (token 77: the control), 'i' an integer, 'n' a wrong nonce,
 * 'x' a correct grant plus an extra reply, 'm' nothing, 'g' garbage, 'a' "*2147483647",
 * 'b' a 1 GB bulk header and 64 KiB of it, 's' a status, 't' the right nonce with token -5,
 * 'e' arrays nested 12 deep, 'd' a correct grant dripped one byte per 40 ms.
 * The answer's own malformations (a lock script answers the string "<nonce> <value>",
 * decision 0118), all with the right nonce unless said: 'S' no space after the nonce,
 * 'X' extra bytes after the token, 'z' a leading zero, 'p' a plus sign, 'o' 20 digits,
 * 'O' INT64_MAX + 1, 'A' the v0.2 array { nonce, "77" }, 'B' the right text as a status
 * reply, 'E' an empty value, '1' "1" (renew's and release's yes), 'R' "1 ", '2' "2". The epoch view's grant "<nonce> 77 <E> <replid>": 'F' E 7 and
 * a good replid (control), 'H' E 2^31, 'L' E "07", 'U' an upper-case replid, 'Y' a replid
 * of 41 digits, 'V' a replid of 39. */
typedef struct rs_hostile { st_child ch; int port; int listen_fd; } rs_hostile;

static int rs__hostile_nonce(const char *req, size_t n, char *nonce)
{
    if (n < 23 || memcmp(req + n - 23, "$16\r\n", 5) != 0 || req[n - 2] != '\r' || req[n - 1] != '\n')
        return 0;
    memcpy(nonce, req + n - 18, 16);
    nonce[16] = 0;
    return 1;
}

static void rs__write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) { if (w < 0 && errno == EINTR) continue; return; }
        p += w; n -= (size_t)w;
    }
}

/* a bulk string "<nonce><rest>" */
static void rs__hostile_bulk(int fd, const char *nonce, const char *rest)
{
    char b[256];
    snprintf(b, sizeof b, "$%u\r\n%s%s\r\n", (unsigned)(strlen(nonce) + strlen(rest)), nonce, rest);
    rs__write_all(fd, b, strlen(b));
}

static void rs__hostile_answer(int fd, int sc, const char *nonce)
{
    static const char id[] = "0123456789abcdef0123456789abcdef01234567";
    char b[256];
    switch (sc) {
    case 'G': case 'x': case 'd':
        snprintf(b, sizeof b, "$19\r\n%s 77\r\n%s", nonce, sc == 'x' ? ":0\r\n" : "");
        if (sc == 'd') {
            size_t i;
            for (i = 0; b[i]; i++) { rs__write_all(fd, b + i, 1); st_sleep_ms(40); }
        } else {
            rs__write_all(fd, b, strlen(b));
        }
        break;
    case 'i': rs__write_all(fd, ":1\r\n", 4); break;
    case 'n': rs__write_all(fd, "$19\r\n0123456789abcdef 77\r\n", 26); break;
    case 'g': rs__write_all(fd, "hello world\r\n", 13); break;
    case 'a': rs__write_all(fd, "*2147483647\r\n", 13); break;
    case 'b': {
        static char junk[65536];
        memset(junk, 'x', sizeof junk);
        rs__write_all(fd, "$1000000000\r\n", 13);
        rs__write_all(fd, junk, sizeof junk);
        break;
    }
    case 's': rs__write_all(fd, "+OK\r\n", 5); break;
    case 't': rs__hostile_bulk(fd, nonce, " -5"); break;
    case 'e': rs__write_all(fd, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", 52); break;
    case 'S': rs__hostile_bulk(fd, nonce, "77"); break;
    case 'X': rs__hostile_bulk(fd, nonce, " 77 "); break;
    case 'z': rs__hostile_bulk(fd, nonce, " 077"); break;
    case 'p': rs__hostile_bulk(fd, nonce, " +77"); break;
    case 'o': rs__hostile_bulk(fd, nonce, " 12345678901234567890"); break;
    case 'O': rs__hostile_bulk(fd, nonce, " 9223372036854775808"); break;
    case 'E': rs__hostile_bulk(fd, nonce, " "); break;
    case '1': rs__hostile_bulk(fd, nonce, " 1"); break;
    case 'R': rs__hostile_bulk(fd, nonce, " 1 "); break;
    case '2': rs__hostile_bulk(fd, nonce, " 2"); break;
    case 'A':
        snprintf(b, sizeof b, "*2\r\n$16\r\n%s\r\n$2\r\n77\r\n", nonce);
        rs__write_all(fd, b, strlen(b));
        break;
    case 'B':
        snprintf(b, sizeof b, "+%s 77\r\n", nonce);
        rs__write_all(fd, b, strlen(b));
        break;
    case 'F': snprintf(b, sizeof b, " 77 7 %s", id); rs__hostile_bulk(fd, nonce, b); break;
    case 'H': snprintf(b, sizeof b, " 77 2147483648 %s", id); rs__hostile_bulk(fd, nonce, b); break;
    case 'L': snprintf(b, sizeof b, " 77 07 %s", id); rs__hostile_bulk(fd, nonce, b); break;
    case 'U': rs__hostile_bulk(fd, nonce, " 77 7 0123456789ABCDEF0123456789abcdef01234567"); break;
    case 'Y': snprintf(b, sizeof b, " 77 7 %s8", id); rs__hostile_bulk(fd, nonce, b); break;
    case 'V': rs__hostile_bulk(fd, nonce, " 77 7 0123456789abcdef0123456789abcdef0123456"); break;
    default: break;                                      /* 'm': nothing */
    }
}

static int rs__hostile_main(void *arg, int in, int out)
{
    rs_hostile *h = (rs_hostile *)arg;
    for (;;) {
        char req[16384], nonce[17];
        size_t n = 0;
        int fd, sc = st_recv(in, 120000);
        uint64_t end;
        if (sc < 0 || sc == 'q') return 0;
        fd = accept(h->listen_fd, NULL, NULL);
        if (fd < 0) return 1;
        strcpy(nonce, "0000000000000000");
        end = st_now_ms() + 3000;
        while (st_now_ms() < end && n < sizeof req) {
            struct pollfd p;
            ssize_t r;
            p.fd = fd; p.events = POLLIN; p.revents = 0;
            if (poll(&p, 1, 50) <= 0) continue;
            r = read(fd, req + n, sizeof req - n);
            if (r <= 0) break;
            n += (size_t)r;
            if (rs__hostile_nonce(req, n, nonce)) break;
        }
        rs__hostile_answer(fd, sc, nonce);
        st_send(out, 'a');
        sc = st_recv(in, 120000);
        close(fd);
        if (sc < 0 || sc == 'q') return 0;
    }
}

static ST__UNUSED int rs_hostile_start(rs_hostile *h)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int one = 1;
    memset(h, 0, sizeof *h);
    h->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (h->listen_fd < 0) return -1;
    setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(h->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(h->listen_fd, 8) != 0 ||
        getsockname(h->listen_fd, (struct sockaddr *)&a, &len) != 0) {
        close(h->listen_fd);
        return -1;
    }
    h->port = ntohs(a.sin_port);
    if (st_fork(&h->ch, rs__hostile_main, h) != 0) { close(h->listen_fd); return -1; }
    return 0;
}

/* the next connection gets scenario sc */
static ST__UNUSED void rs_hostile_next(rs_hostile *h, int sc) { st_send(h->ch.to_child, (char)sc); }
/* 1 once the hostile server has answered (or timed out reading) */
static ST__UNUSED int rs_hostile_answered(rs_hostile *h, uint32_t ms) { return st_recv(h->ch.from_child, ms) == 'a'; }
/* close the scenario's connection */
static ST__UNUSED void rs_hostile_done(rs_hostile *h) { st_send(h->ch.to_child, 'n'); }
static ST__UNUSED void rs_hostile_stop(rs_hostile *h)
{
    st_send(h->ch.to_child, 'q');
    st_join(&h->ch, 5000);
    close(h->listen_fd);
}

#endif /* LDL_TESTS_STORE_REDIS_SERVER_H */
