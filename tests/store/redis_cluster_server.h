/* tests/store/redis_cluster_server.h -- a throwaway Redis Cluster for the cluster suite and bench:
 * NN (6) redis-server processes on 127.0.0.1, random free ports whose bus port (+ 10000) is
 * free too, each in a temp dir under $LDL_TEST_DIR with its pid in a .pid file there (the
 * with_redis_cluster.sh trap is the backstop), joined by `redis-cli --cluster create ...
 * --cluster-replicas 1 --cluster-yes`: 3 masters, one replica each.
 *   start_cluster() 0 once every node says cluster_state:ok; g_seeds "ip:port,ip:port"
 *   stop_cluster()  SIGCONT + SIGTERM every node
 *   master_of_slot(s), node_of_addr("ip:port"), conn(i), node_info_has(i, "INFO"/"NODES", text)
 * Test code, not shipped. Include after tests/store/redis_server.h. */
#ifndef LDL_TESTS_STORE_REDIS_CLUSTER_SERVER_H
#define LDL_TESTS_STORE_REDIS_CLUSTER_SERVER_H

#include <netinet/in.h>
#include <sys/socket.h>

#define NN 6
typedef struct cnode { char dir[256], pidfile[300], log[300], portstr[16]; int port; pid_t pid; char id[48]; } cnode;
static cnode g_n[NN];
static char g_seeds[64];

static ST__UNUSED int port_free(int p)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
    if (fd < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)p);
    ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static ST__UNUSED int pick_port(void)
{
    int k;
    for (k = 0; k < 200; k++) {
        int p = st_free_port(), j, dup = 0;
        if (p <= 0 || p + 10000 > 65535 || !port_free(p + 10000)) continue;
        for (j = 0; j < NN; j++) dup |= g_n[j].port == p || g_n[j].port + 10000 == p || g_n[j].port == p + 10000;
        if (!dup) return p;
    }
    return -1;
}

static ST__UNUSED int launch(cnode *n)
{
    char *argv[32];
    int a = 0;
    uint64_t end;
    argv[a++] = (char *)"redis-server";
    argv[a++] = (char *)"--port"; argv[a++] = n->portstr;
    argv[a++] = (char *)"--bind"; argv[a++] = (char *)"127.0.0.1";
    argv[a++] = (char *)"--dir"; argv[a++] = n->dir;
    argv[a++] = (char *)"--save"; argv[a++] = (char *)"";
    argv[a++] = (char *)"--appendonly"; argv[a++] = (char *)"no";
    argv[a++] = (char *)"--cluster-enabled"; argv[a++] = (char *)"yes";
    argv[a++] = (char *)"--cluster-config-file"; argv[a++] = (char *)"nodes.conf";
    argv[a++] = (char *)"--cluster-node-timeout"; argv[a++] = (char *)"15000";
    argv[a++] = (char *)"--cluster-require-full-coverage"; argv[a++] = (char *)"no";
    argv[a++] = (char *)"--daemonize"; argv[a++] = (char *)"no";
    argv[a] = NULL;
    n->pid = st_spawn(argv, n->log, n->pidfile);
    if (n->pid <= 0) return -1;
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) if (st_wait_port(n->port, 50)) return 0;
    return -1;
}

static ST__UNUSED redisContext *conn(int i) { return rs_connect_port(g_n[i].port, 2000); }

/* text reply of a command on node i (freed by the caller), NULL on failure */
static ST__UNUSED int node_info_has(int i, const char *section, const char *needle)
{
    redisContext *c = conn(i);
    redisReply *r = c ? rs_cmd(c, "CLUSTER", section, NULL) : NULL;
    int ok = r && r->type == REDIS_REPLY_STRING && strstr(r->str, needle) != NULL;
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}

static ST__UNUSED int cluster_ok_everywhere(uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end) {
        int i, ok = 1;
        for (i = 0; i < NN; i++) ok &= node_info_has(i, "INFO", "cluster_state:ok");
        if (ok) return 1;
        st_sleep_ms(100);
    }
    return 0;
}

static ST__UNUSED int start_cluster(void)
{
    int i, att;
    char *argv[16];
    char addr[NN][32];
    pid_t p;
    int status;
    char log[300];
    for (i = 0; i < NN; i++) {
        cnode *n = &g_n[i];
        char d[256];
        if (st_tmpdir(d, sizeof d, "cl") != 0) return -1;
        memcpy(n->dir, d, sizeof d);
        snprintf(n->pidfile, sizeof n->pidfile, "%s.pid", d);
        snprintf(n->log, sizeof n->log, "%s/redis.log", d);
        for (att = 0; att < 5; att++) {
            n->port = pick_port();
            snprintf(n->portstr, sizeof n->portstr, "%d", n->port);
            if (n->port > 0 && launch(n) == 0) break;
            if (n->pid > 0) st_stop(n->pid, SIGKILL, 2000);
            n->pid = 0;
        }
        if (!n->pid) return -1;
        snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d", n->port);
    }
    argv[0] = (char *)"redis-cli";
    argv[1] = (char *)"--cluster"; argv[2] = (char *)"create";
    for (i = 0; i < NN; i++) argv[3 + i] = addr[i];
    argv[3 + NN] = (char *)"--cluster-replicas"; argv[4 + NN] = (char *)"1";
    argv[5 + NN] = (char *)"--cluster-yes"; argv[6 + NN] = NULL;
    snprintf(log, sizeof log, "%s/create.log", g_n[0].dir);
    p = st_spawn(argv, log, NULL);
    if (p <= 0 || !st__reap(p, 60000, &status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "redis-cli --cluster create failed, see %s\n", log);
        return -1;
    }
    if (!cluster_ok_everywhere(30000)) return -1;
    for (i = 0; i < NN; i++) {
        redisContext *c = conn(i);
        redisReply *r = c ? rs_cmd(c, "CLUSTER", "MYID", NULL) : NULL;
        if (r && r->type == REDIS_REPLY_STRING) snprintf(g_n[i].id, sizeof g_n[i].id, "%s", r->str);
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
    }
    snprintf(g_seeds, sizeof g_seeds, "127.0.0.1:%d,127.0.0.1:%d", g_n[0].port, g_n[1].port);
    return 0;
}

static ST__UNUSED void stop_cluster(void)
{
    int i;
    for (i = 0; i < NN; i++) if (g_n[i].pid > 0) { kill(g_n[i].pid, SIGCONT); st_stop(g_n[i].pid, SIGTERM, 5000); remove(g_n[i].pidfile); }
}

/* node index of "127.0.0.1:port" */
static ST__UNUSED int node_of_addr(const char *a)
{
    int i;
    const char *c = strrchr(a, ':');
    if (!c) return -1;
    for (i = 0; i < NN; i++) if (g_n[i].port == atoi(c + 1)) return i;
    return -1;
}

/* node index that is master of slot s (asks node 0..) */
static ST__UNUSED int master_of_slot(int s)
{
    int i;
    for (i = 0; i < NN; i++) {
        redisContext *c = conn(i);
        redisReply *r = c ? rs_cmd(c, "CLUSTER", "SLOTS", NULL) : NULL;
        int found = -1;
        size_t k;
        if (r && r->type == REDIS_REPLY_ARRAY)
            for (k = 0; k < r->elements; k++) {
                redisReply *e = r->element[k];
                if (e->element[0]->integer <= s && s <= e->element[1]->integer) {
                    int j;
                    for (j = 0; j < NN; j++) if (g_n[j].port == e->element[2]->element[1]->integer) found = j;
                }
            }
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
        if (found >= 0) return found;
    }
    return -1;
}


/* node index of a port, -1 none (added for the chaos campaign, decision 0405) */
static ST__UNUSED int rcs_node_of_port(int port)
{
    int i;
    for (i = 0; i < NN; i++) if (g_n[i].port == port) return i;
    return -1;
}

/* ------------------------------------------------------------ added for the chaos campaign's
   Redis Cluster failover rounds (tests/chaos/chaos.c, decision 0405). rcs_ names, so the
   suites that include this header keep their own helpers of similar purpose. `skip` is a
   bitmask of node indexes not to ask (a SIGSTOPped node would stall the 2 s connect). */

/* the replica of master m: the node whose CLUSTER NODES "myself,slave" line names m's id; -1 none */
static ST__UNUSED int rcs_replica_of(int m, unsigned skip)
{
    int i, replica = -1;
    for (i = 0; i < NN && m >= 0; i++) {
        redisContext *c;
        redisReply *r;
        if (i == m || g_n[i].pid <= 0 || (skip >> i & 1u)) continue;
        c = conn(i);
        r = c ? rs_cmd(c, "CLUSTER", "NODES", NULL) : NULL;
        if (r && r->type == REDIS_REPLY_STRING && g_n[m].id[0]) {
            char *line = strstr(r->str, "myself,slave"), *ls = line, *end;
            while (ls && ls > r->str && ls[-1] != '\n') ls--;
            end = line ? strchr(line, '\n') : NULL;
            if (line && strstr(ls, g_n[m].id) && (!end || strstr(ls, g_n[m].id) < end)) replica = i;
        }
        if (r) freeReplyObject(r);
        if (c) redisFree(c);
    }
    return replica;
}

/* one look, no waiting: every live node not in skip says cluster_state:ok and, if it is a
   replica, master_link_status:up */
static ST__UNUSED int rcs_settled_now(unsigned skip)
{
    int i, ok = 1;
    for (i = 0; i < NN && ok; i++) {
        redisContext *c;
        redisReply *r;
        if (g_n[i].pid <= 0 || (skip >> i & 1u)) continue;
        if ((c = conn(i)) == NULL) return 0;
        r = rs_cmd(c, "CLUSTER", "INFO", NULL);
        ok = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok") != NULL;
        if (r) freeReplyObject(r);
        r = ok ? rs_cmd(c, "INFO", "replication", NULL) : NULL;
        if (ok) ok = r && r->type == REDIS_REPLY_STRING &&
                     (!strstr(r->str, "role:slave") || strstr(r->str, "master_link_status:up"));
        if (r) freeReplyObject(r);
        redisFree(c);
    }
    return ok;
}

/* CONFIG SET cluster-node-timeout ms on node i; 1 when the node said OK */
static ST__UNUSED int rcs_node_timeout(int i, const char *ms)
{
    redisContext *c = conn(i);
    redisReply *r = c ? rs_cmd(c, "CONFIG", "SET", "cluster-node-timeout", ms, NULL) : NULL;
    int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}

/* owner[s] = the node index node `from` names as master of slot s (-1 none); 1 when read */
static ST__UNUSED int rcs_slot_owners(int from, int *owner)
{
    redisContext *c = conn(from);
    redisReply *r = c ? rs_cmd(c, "CLUSTER", "SLOTS", NULL) : NULL;
    size_t k;
    int s, ok = r && r->type == REDIS_REPLY_ARRAY;
    for (s = 0; s < 16384; s++) owner[s] = -1;
    for (k = 0; ok && k < r->elements; k++) {
        redisReply *e = r->element[k];
        int lo, hi;
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 || e->element[2]->type != REDIS_REPLY_ARRAY ||
            e->element[2]->elements < 2) { ok = 0; break; }
        lo = (int)e->element[0]->integer; hi = (int)e->element[1]->integer;
        for (s = lo; s >= 0 && s <= hi && s < 16384; s++) owner[s] = rcs_node_of_port((int)e->element[2]->element[1]->integer);
    }
    if (r) freeReplyObject(r);
    if (c) redisFree(c);
    return ok;
}

#endif
