#!/bin/sh
# tests/chaos/run.sh STORE ROUNDS [SEED] -- one chaos campaign against a real STORE (redis|pg),
# then the checker over its history (and over what the store itself accepted: real.log), then
# the five planted controls, which the checker MUST flag. SEED defaults to $CHAOS_SEED, else a fresh random one; it is printed first so any run
# can be replayed with CHAOS_SEED=... Exit 0 only when the campaign has no violation AND every
# control was caught.
#
# Everything lives in a fresh temp dir (LDL_TEST_DIR): redis-server, the clients and the
# resource server write pid files there, and the trap below kills each one by its pid on any
# exit (pass, fail, crash, Ctrl-C). PostgreSQL comes from tests/store/with_pg.sh, which stops
# its own server. A failed run keeps the histories in build/chaos/failed-STORE-SEED (any run
# with CHAOS_KEEP=1: build/chaos/kept-STORE-SEED).
#
# pg-failover FAILOVERS (issue 20, decision 0404): the PostgreSQL campaign against
# tests/store/with_pg_standby.sh sync (a primary and a synchronous streaming standby, the
# clients on the multi-host conninfo), FAILOVERS unclean failovers, each after 7 ordinary fault
# rounds (chaos.c FO_EVERY = 8), then the five controls and two more with a failover in each:
# f (a token repeated across a failover: checks 1 and 2 must flag it) and o (a lease lost in a
# failover: the overlap must be COUNTED, with no violation -- check.py --counted).
#
# redis-cluster-failover FAILOVERS (issue 20, decision 0405): the campaign against a 6-node Redis
# Cluster (3 masters + 1 replica each, node timeout 2 s) that chaos itself starts (its nodes'
# pid files in the temp dir: the trap below kills them), clients on the Cluster views (epoch
# fences), fenced writes through ldl_redis_cluster_fence; FAILOVERS unclean failovers of the
# keys' master (SIGKILL or SIGSTOP, seeded), each after 7 ordinary fault rounds; the same
# controls, f and o included, each of those with a real Cluster failover.
set -u
store=$1; rounds=$2
seed=${3:-${CHAOS_SEED:-}}
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CHAOS_BIN:-$here/build/chaos/chaos}     # CHAOS_BIN: another build (e.g. against a mutant)
dir=$(mktemp -d "${TMPDIR:-/tmp}/ldl-chaos.XXXXXX") || exit 2
child=
cleanup() {
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  for f in "$dir"/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null)
    [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  [ -n "$child" ] && wait "$child" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo "== chaos $store: CHAOS_SEED=$seed, $rounds rounds"
start=$(date +%s)
# bounded: a round takes well under a second; a hang is a failure, not a stuck CI job
limit=$((rounds + 120))
fo_every=8
case $store in
  pg-failover)
    # rounds = failovers here; a failover (kill, promote, pg_basebackup) takes seconds
    failovers=$rounds; rounds=$((failovers * fo_every)); limit=$((failovers * 90 + rounds + 600))
    # CHAOS_PG_STANDBY=async: the same over plain streaming replication -- a measurement of what
    # an asynchronous standby loses (checks 2 and 6 then fail), never part of make
    sb=${CHAOS_PG_STANDBY:-sync}
    case $sb in sync|async) ;; *) echo "CHAOS_PG_STANDBY must be sync or async" >&2; exit 64 ;; esac
    echo "== chaos pg-failover: $failovers unclean failovers in $rounds rounds ($sb standby)"
    LDL_TEST_DIR=$dir CHAOS_FAILOVER=1 timeout $limit "$here/tests/store/with_pg_standby.sh" "$sb" \
      "'$bin' pg $seed $rounds '$dir'" & child=$! ;;
  redis-cluster-failover)
    # rounds = failovers; a failover (node timeout, promotion, rejoin, resync) takes seconds
    failovers=$rounds; rounds=$((failovers * fo_every)); limit=$((failovers * 90 + rounds + 600))
    command -v redis-cli >/dev/null 2>&1 || { echo "run.sh: redis-cli not found (apt-get install redis-tools)" >&2; exit 2; }
    echo "== chaos redis-cluster-failover: $failovers unclean failovers in $rounds rounds"
    LDL_TEST_DIR=$dir CHAOS_FAILOVER=1 timeout $limit "$bin" rcluster "$seed" "$rounds" "$dir" & child=$! ;;
  redis) LDL_TEST_DIR=$dir timeout $limit "$bin" redis "$seed" "$rounds" "$dir" & child=$! ;;
  pg)    LDL_TEST_DIR=$dir timeout $limit "$here/tests/store/with_pg.sh" "'$bin' pg $seed $rounds '$dir'" & child=$! ;;
  # etcd: 3 members in network namespaces (root); the campaign runs in the client namespace.
  # TTL 2 s and faults that wait for elections: bound 3 s a round
  etcd)  limit=$((3 * rounds + 180))
         LDL_TEST_DIR=$dir timeout $limit "$here/tests/store/with_etcd_cluster.sh" --netns \
           "$bin" etcd "$seed" "$rounds" "$dir" & child=$! ;;
  *) echo "usage: run.sh redis|pg|etcd ROUNDS [SEED] | pg-failover|redis-cluster-failover FAILOVERS [SEED]" >&2; exit 64 ;;
esac
wait $child; rc=$?; child=
failed=0
if [ $rc != 0 ]; then
  echo "chaos $store: the campaign itself failed ($rc; 124 = over the ${limit} s bound)"; failed=1
else
  if [ "$store" = etcd ]; then python3 "$here/tests/chaos/check.py" --no-real "$dir/main" || failed=1
  else python3 "$here/tests/chaos/check.py" --probe "$dir/main" || failed=1; fi
  python3 "$here/tests/chaos/check.py" --expect 1 "$dir/ctl-l" || failed=1
  python3 "$here/tests/chaos/check.py" --expect 1,3 "$dir/ctl-c" || failed=1
  python3 "$here/tests/chaos/check.py" --expect 1,2 "$dir/ctl-r" || failed=1
  python3 "$here/tests/chaos/check.py" --expect 5 "$dir/ctl-k" || failed=1
  # etcd has no fenced-write helper (no real resource): no control u
  [ "$store" = etcd ] || python3 "$here/tests/chaos/check.py" --expect 6 "$dir/ctl-u" || failed=1
fi
if [ $rc = 0 ] && { [ "$store" = pg-failover ] || [ "$store" = redis-cluster-failover ]; }; then   # the failover controls
  python3 "$here/tests/chaos/check.py" --expect 1,2 "$dir/ctl-f" || failed=1
  python3 "$here/tests/chaos/check.py" --counted "$dir/ctl-o" || failed=1
fi
echo "chaos $store: seed $seed, wall time $(( $(date +%s) - start )) s"
if [ $failed != 0 ] || [ -n "${CHAOS_KEEP:-}" ]; then
  keep=$here/build/chaos/$([ $failed != 0 ] && echo failed || echo kept)-$store-$seed
  rm -rf "$keep"; mkdir -p "$keep" && cp -r "$dir/main" "$dir"/ctl-* "$keep"/ 2>/dev/null
  if [ $failed != 0 ]; then
    echo "chaos $store: FAILED (replay: CHAOS_SEED=$seed; histories kept in $keep)"
    echo "0 passed, 1 failed"; exit 1
  fi
  echo "chaos $store: histories kept in $keep"
fi
echo "1 passed, 0 failed"
