#!/bin/sh
# tests/store/redis_mutants.sh -- the suite tests/mutants/redis.txt runs for each mutant of
# adapters/lite_di_lock_redis.h (through tests/mutants/adapters.sh, inside with_redis.sh):
# the reply bounds, verbs, fixes and hostile-node suites built with -I"$MUT_DIR" first, so the mutant wins.
# Exit 0 all passed, 1 a check failed, 3 a build error (also "BUILD-ERROR" on stdout).
set -u
D=${MUT_DIR:?MUT_DIR unset}
CC=${CC:-cc}
FL="-std=c99 -O1 -g -w -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
for t in redis_verbs redis_fixes redis_cluster_hostile; do
    $CC $FL -I"$D" -I. tests/store/$t.c -lhiredis -ldl -o "$D/$t" || { echo "BUILD-ERROR $t"; exit 3; }
done
# the reply bounds (decision 0119): without sanitizers, as make test builds it (it measures RSS)
$CC -std=c99 -O1 -g -w -I"$D" -I. tests/store/redis_reply_bounds.c -lhiredis -o "$D/redis_reply_bounds" ||
    { echo "BUILD-ERROR redis_reply_bounds"; exit 3; }
for t in redis_reply_bounds redis_verbs redis_fixes redis_cluster_hostile; do
    "$D/$t" > "$D/$t.log" 2>&1 || { echo "FAILED $t"; tail -n 5 "$D/$t.log"; exit 1; }
done
exit 0
