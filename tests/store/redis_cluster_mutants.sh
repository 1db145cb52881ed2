#!/bin/sh
# tests/store/redis_cluster_mutants.sh -- the suite tests/mutants/redis_cluster.txt runs for
# each mutant of adapters/lite_di_lock_redis_cluster.h (tests/mutants/adapters.sh, inside
# with_redis_cluster.sh): the hostile-node suite, then the real-cluster suite limited to the
# issue 24 cases (LDL_CLUSTER_TESTS), built with -I"$MUT_DIR" first.
# Exit 0 all passed, 1 a check failed, 3 a build error (also "BUILD-ERROR" on stdout).
set -u
D=${MUT_DIR:?MUT_DIR unset}
CC=${CC:-cc}
# the Cluster header includes its sibling by a relative name: put the real one beside it
[ -f "$D/adapters/lite_di_lock_redis.h" ] || cp adapters/lite_di_lock_redis.h "$D/adapters/"
FL="-std=c99 -O1 -g -w -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
for t in redis_cluster_hostile redis_cluster; do
    $CC $FL -I"$D" -I. tests/store/$t.c -lhiredis -ldl -o "$D/$t" || { echo "BUILD-ERROR $t"; exit 3; }
done
"$D/redis_cluster_hostile" > "$D/hostile.log" 2>&1 || { echo "FAILED hostile"; tail -n 5 "$D/hostile.log"; exit 1; }
LDL_CLUSTER_TESTS="migrate aask_long ask_noscript adrop" "$D/redis_cluster" > "$D/cluster.log" 2>&1 ||
    { echo "FAILED cluster"; tail -n 5 "$D/cluster.log"; exit 1; }
exit 0
