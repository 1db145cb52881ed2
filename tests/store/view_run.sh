#!/bin/sh
# tests/store/view_run.sh PROGRAM -- run tests/store/view_test.c's build against every store,
# each under its own harness (the servers on 127.0.0.1, free ports, temp dirs, stopped by pid);
# one line per store, the output of a failing one in full; non-zero when any failed.
#   PROGRAM   the view_test binary (make test-view passes build/view/view_test)
# Then examples/epoll_leases.c's smoke per network store (ex-*: 1,000 leases, 5 s, a rebind
# at a quiet moment after 1 s, a lease released and asked for again every frame; it must hold
# all 1,000 at the end and wake on the fd registered after the rebind): level-triggered on
# redis, pg and etcd, and edge-triggered on redis with a read limit of ONE read per pump.
# VIEW_STORES (environment) narrows the list: "memory sqlite redis cluster pg etcd ex-redis
# ex-redis-et ex-pg ex-etcd".
set -u
P=${1:?usage: view_run.sh PROGRAM}
D=$(dirname "$0")
EX=$(dirname "$P")/epoll_leases
EXA="--seconds 5 --rebind 1 --churn --check"
stores=${VIEW_STORES:-memory sqlite redis cluster pg etcd ex-redis ex-redis-et ex-pg ex-etcd}
failed=0
for s in $stores; do
    case $s in
        memory|sqlite) cmd="$P $s" ;;
        redis)   cmd="$D/with_redis.sh $P redis" ;;
        cluster) cmd="$D/with_redis_cluster.sh $P cluster" ;;
        pg)      cmd="$D/with_pg.sh '$P pg'" ;;
        etcd)    cmd="$D/with_etcd.sh $P etcd" ;;
        ex-redis)    cmd="$D/with_redis.sh $P example redis $EX $EXA" ;;
        ex-redis-et) cmd="$D/with_redis.sh $P example redis ${EX}_r1 --et $EXA" ;;
        ex-pg)       cmd="$D/with_pg.sh '$P example pg $EX $EXA'" ;;
        ex-etcd)     cmd="$D/with_etcd.sh $P example etcd $EX $EXA" ;;
        *) echo "view_run.sh: no store $s"; exit 2 ;;
    esac
    printf '== view %-12s ' "$s:"
    out=$(sh -c "$cmd" 2>&1); rc=$?
    echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1
    case $s in ex-*) echo "$out" | grep -E '^(epoll_leases|frame CPU)' | sed 's/^/     /' ;; esac
    if [ $rc != 0 ]; then echo "$out"; failed=$((failed + 1)); fi
done
[ $failed = 0 ]
