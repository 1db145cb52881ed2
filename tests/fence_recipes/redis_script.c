/* redis_script.c -- print the Redis adapter's fenced-write script exactly as the
   adapter sends it (EVAL), then, with -s, its SHA1 constant (EVALSHA). The recipe
   test compares both with docs/redis.md's text and SHA. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "-s")) { printf("%s\n", ldl__redis_fence_sha); return 0; }
    fwrite(ldl__redis_fence_lua, 1, sizeof ldl__redis_fence_lua - 1, stdout);
    return 0;
}
