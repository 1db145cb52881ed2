/* bench_redis.c HOST PORT MODE OPS - lifecycles per second of one ldl_lock over
   the Redis adapter, one synchronous hiredis client (row 3 of `make bench`).
   MODE rtt: the anchor for the same client library, round trips per second of
   EVALSHA <sha of "return 1"> 0 through redisCommandArgv (what the adapter calls). */
#define LDL_REDIS_IMPLEMENTATION
#include "bench_store.h"
#include <hiredis/hiredis.h>
#include "adapters/lite_di_lock_redis.h"

int main(int argc, char **argv) {
    redisContext *c;
    ldl_redis r;
    ldl_store st;
    double rate;
    if (argc != 5) { fprintf(stderr, "usage: bench_redis HOST PORT acqrel|run OPS\n"); return 2; }
    c = redisConnect(argv[1], atoi(argv[2]));
    if (!c || c->err) { fprintf(stderr, "bench_redis: connect: %s\n", c ? c->errstr : "oom"); return 1; }
    if (ldl_redis_init(&r, c, "ldlbench") != LDL_OK) { fprintf(stderr, "bench_redis: init\n"); return 1; }
    st = ldl_redis_store(&r);
    if (strcmp(argv[3], "rtt") == 0) {
        redisReply *rep = (redisReply *)redisCommand(c, "SCRIPT LOAD %s", "return 1");
        char sha[41];
        const char *av[3]; size_t al[3];
        long i, ops = atol(argv[4]);
        uint64_t t0 = 0;
        if (!rep || rep->type != REDIS_REPLY_STRING || rep->len != 40) { fprintf(stderr, "bench_redis: SCRIPT LOAD\n"); return 1; }
        memcpy(sha, rep->str, 41);
        freeReplyObject(rep);
        av[0] = "EVALSHA"; al[0] = 7; av[1] = sha; al[1] = 40; av[2] = "0"; al[2] = 1;
        for (i = -ops / 10 - 1; i < ops; i++) {
            if (i == 0) t0 = bench_ns();
            rep = (redisReply *)redisCommandArgv(c, 3, av, al);
            if (!rep || rep->type != REDIS_REPLY_INTEGER) { fprintf(stderr, "bench_redis: EVALSHA\n"); return 1; }
            freeReplyObject(rep);
        }
        printf("%.1f\n", (double)ops * 1e9 / (double)(bench_ns() - t0));
        redisFree(c);
        return 0;
    }
    rate = bs_lifecycles(&st, "bench-c", argv[3], atol(argv[4]));
    redisFree(c);
    if (rate < 0) return 1;
    printf("%.1f\n", rate);
    return 0;
}
