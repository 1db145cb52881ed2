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
    const char *argv[16];
    size_t lens[16];
    int argc = 0;
    va_list ap;
    const char *s = a0;
    va_start(ap, a0);
    while (s && argc < 16) {
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

#endif /* LDL_TESTS_STORE_REDIS_SERVER_H */
