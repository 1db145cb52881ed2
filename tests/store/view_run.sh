#!/bin/sh
# tests/store/view_run.sh PROGRAM -- run tests/store/view_test.c's build against every store,
# each under its own harness (the servers on 127.0.0.1, free ports, temp dirs, stopped by pid);
# one line per store, the output of a failing one in full; non-zero when any failed.
#   PROGRAM   the view_test binary (make test-view passes build/view/view_test)
# VIEW_STORES (environment) narrows the list: "memory sqlite redis cluster pg etcd".
set -u
P=${1:?usage: view_run.sh PROGRAM}
D=$(dirname "$0")
stores=${VIEW_STORES:-memory sqlite redis cluster pg etcd}
failed=0
for s in $stores; do
    case $s in
        memory|sqlite) cmd="$P $s" ;;
        redis)   cmd="$D/with_redis.sh $P redis" ;;
        cluster) cmd="$D/with_redis_cluster.sh $P cluster" ;;
        pg)      cmd="$D/with_pg.sh '$P pg'" ;;
        etcd)    cmd="$D/with_etcd.sh $P etcd" ;;
        *) echo "view_run.sh: no store $s"; exit 2 ;;
    esac
    printf '== view %-8s ' "$s:"
    out=$(sh -c "$cmd" 2>&1); rc=$?
    echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1
    if [ $rc != 0 ]; then echo "$out"; failed=$((failed + 1)); fi
done
[ $failed = 0 ]
