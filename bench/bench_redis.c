/* bench_redis.c HOST PORT MODE OPS - lifecycles per second of one ldl_lock over
   the Redis adapter, one synchronous hiredis client (row 3 of `make bench`). */
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
    rate = bs_lifecycles(&st, "bench-c", argv[3], atol(argv[4]));
    redisFree(c);
    if (rate < 0) return 1;
    printf("%.1f\n", rate);
    return 0;
}
