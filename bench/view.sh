#!/bin/sh
# bench/view.sh OUT_DIR -- the view rows of `make bench` (issue 31 "Measure"; mk/view.mk's
# bench-view, decision 0020). OUT_DIR holds bench_view; build/view holds epoll_leases and
# view_test (make bench-view builds all three).
#   1. bench_view BENCH_REPS OPS inside with_pg.sh + with_redis.sh: the pipelined rows (100
#      locks in flight on one connection, acquire -> release) direct vs through the view,
#      alternating in each round; medians and the median of the paired ratios.
#   2. examples/epoll_leases.c, 1,000 leases, BENCH_VIEW_SECONDS (20) per store, level-
#      triggered, no churn: the frame CPU p50 / p99 at 16.7 ms frames (servers started by
#      tests/store/view_test.c's example mode; PostgreSQL with synchronous_commit = off: each
#      grant and renewal is its own commit). All 1,000 renewals fall due in the same frame
#      every heartbeat (2 s), so p99 is that frame's cost.
# Prints BENCHMARKS.md rows.
set -u
out=${1:-build/bench}
reps=${BENCH_REPS:-7}
ops=${BENCH_VIEW_OPS:-20000}
secs=${BENCH_VIEW_SECONDS:-20}
vt=build/view/view_test
ex=build/view/epoll_leases
D=tests/store
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-bench-view.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
v=$(git rev-parse --short HEAD 2>/dev/null || echo "?")

$D/with_pg.sh "$D/with_redis.sh $out/bench_view $reps $ops" >"$tmp/pipe" 2>&1 || { cat "$tmp/pipe"; exit 1; }
row() {  # STORE ID LABEL
  line=$(grep "^$1 " "$tmp/pipe")
  set -- $line "$2" "$3"
  pct=$(awk -v r="$4" 'BEGIN { printf "%.1f %%", r * 100 }')
  echo "| $5 | $6: lifecycles/s, 100 locks in flight on 1 connection, through the view (v.async, v.ops->fds, v.ops->pump) | $3 | $2 (the same loop with the adapter's own calls, same run) | $pct | >= 98 % | $v |"
}
row redis 31a "Redis non-blocking view (row 3j's loop)"
row pg 31b "PostgreSQL non-blocking view, synchronous_commit = off (row 4c's loop)"

frames() {  # ID LABEL CMD
  id=$1; label=$2; shift 2
  sh -c "$*" >"$tmp/ex" 2>&1
  l=$(grep '^frame CPU' "$tmp/ex"); h=$(grep '^epoll_leases' "$tmp/ex" | sed 's/.*held \([0-9]*\/[0-9]*\) at the end.*/\1/')
  p50=$(echo "$l" | sed 's/.*p50 \([0-9.]*\) ms.*/\1/'); p99=$(echo "$l" | sed 's/.*p99 \([0-9.]*\) ms.*/\1/')
  echo "| $id | examples/epoll_leases.c, $label: frame CPU at 16.7 ms frames, 1,000 leases, one epoll loop, $secs s (held $h at the end) | p50 $p50 ms, p99 $p99 ms | -- | | report (issue 31) | $v |"
}
A="--seconds $secs --check"
frames 31c "Redis" "$D/with_redis.sh $vt example redis $ex $A"
frames 31d "PostgreSQL (synchronous_commit = off)" "$D/with_pg.sh '$vt example pg $ex $A'"
frames 31e "etcd" "$D/with_etcd.sh $vt example etcd $ex $A"
