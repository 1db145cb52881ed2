#!/bin/sh
# etcd_lock_test.sh LDL_RUN -- issue 32 item 5: do `ldl-run --etcd` and etcd's own lock
# (`etcdctl lock`, the v3lock service / concurrency.Mutex layout NAME/<lease hex>, the
# lowest create revision wins) exclude each other on one name? They do not, and
# docs/etcd.md says so on its first screen (decision 0706). This checks the statement
# with a real etcd member and the real etcdctl, both ways, with the default prefix and
# with --prefix "" (the etcd key then is exactly NAME), and the controls: two etcdctl
# locks exclude each other, two ldl-runs exclude each other.
# Run through tests/store/with_etcd.sh. Last line: "N passed, N failed".
set -u
bin=${1:?usage: etcd_lock_test.sh LDL_RUN}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-etcdlock.XXXXXX") || exit 2
epid=; h1=; h2=
cleanup() { for p in $h1 $h2 $epid; do kill -9 "$p" 2>/dev/null; done; rm -rf "$d"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL [etcd lock]: $1" >&2; fi; }
wait_for() { i=0; while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done; [ -s "$1" ]; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cp=$(freeport); pp=$(freeport)
url=http://127.0.0.1:$cp
etcd --name lk --data-dir "$d/data" --listen-client-urls "$url" --advertise-client-urls "$url" \
  --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
  --initial-cluster "lk=http://127.0.0.1:$pp" --log-level warn --logger zap > etcd.log 2>&1 &
epid=$!
[ -n "${LDL_TEST_DIR:-}" ] && echo $epid > "$LDL_TEST_DIR/etcd-lock.pid"
i=0; until curl -s "$url/health" 2>/dev/null | grep -q '"health":"true"'; do
  i=$((i + 1)); [ $i -gt 300 ] && { cat etcd.log >&2; echo "0 passed, 1 failed"; exit 1; }; sleep 0.1; done
ectl() { ETCDCTL_API=3 etcdctl --endpoints="$url" "$@"; }
run() { timeout -k 2 20 "$bin" --etcd "$url" --store-timeout 4 "$@"; }
# runp ARGS: ldl-run with the loop's prefix (default ldl/, or "" so the key is NAME itself)
runp() { if [ "$pfx" = empty ]; then run --prefix "" "$@"; else run "$@"; fi; }

for pfx in default empty; do
  name=job-$pfx-a
  # etcdctl holds NAME; ldl-run -n on NAME
  rm -f e.held
  ETCDCTL_API=3 etcdctl --endpoints="$url" lock "$name" -- sh -c 'echo held > e.held; sleep 30' > /dev/null 2>&1 & h1=$!   # etcdctl itself: $! is its pid
  wait_for e.held
  runp -n "$name" -- true 2>e.txt; rc=$?
  check "prefix $pfx: while etcdctl lock holds '$name', ldl-run -n gets it too (rc $rc: $(head -c 200 e.txt)): NO exclusion" \
    '[ -s e.held ] && [ $rc = 0 ]'
  # control: a second etcdctl lock on NAME waits
  timeout 3 env ETCDCTL_API=3 etcdctl --endpoints="$url" lock "$name" -- true > /dev/null 2>&1; rc=$?
  check "prefix $pfx: control: a second etcdctl lock on '$name' waits (timeout, rc $rc)" '[ $rc = 124 ]'
  kill $h1 2>/dev/null; wait $h1 2>/dev/null; h1=
  # ldl-run holds NAME; etcdctl lock on NAME (another name: the killed etcdctl's key
  # stays until its session's TTL, 10 s, ends)
  name=job-$pfx-b
  rm -f r.held
  runp --ttl 10000 "$name" -- sh -c 'echo held > r.held; sleep 30' > /dev/null 2>&1 & h2=$!
  wait_for r.held
  timeout 5 env ETCDCTL_API=3 etcdctl --endpoints="$url" lock "$name" -- true > /dev/null 2>&1; rc=$?
  check "prefix $pfx: while ldl-run holds '$name', etcdctl lock gets it too (rc $rc): NO exclusion" \
    '[ -s r.held ] && [ $rc = 0 ]'
  # control: a second ldl-run -n on NAME is refused
  runp -n "$name" -- true 2>/dev/null; rc=$?
  check "prefix $pfx: control: a second ldl-run -n on '$name' is refused (rc $rc)" '[ $rc = 1 ]'
  kill $h2 2>/dev/null; wait $h2 2>/dev/null; h2=
done
# the layouts, as etcd stores them: etcdctl's NAME/<lease hex>, ldl-run's PREFIX+NAME
rm -f e.held
ETCDCTL_API=3 etcdctl --endpoints="$url" lock shown -- sh -c 'echo held > e.held; sleep 30' > /dev/null 2>&1 & h1=$!
wait_for e.held
rm -f r.held
run --ttl 10000 shown -- sh -c 'echo held > r.held; sleep 30' > /dev/null 2>&1 & h2=$!
wait_for r.held
ectl get --prefix --keys-only "" | grep -v '^$' | sort > keys.txt
check "the keys: etcdctl's 'shown/<lease hex>' and ldl-run's 'ldl/shown' ($(tr '\n' ' ' < keys.txt))" \
  'grep -qx "shown/[0-9a-f]*" keys.txt && grep -qx "ldl/shown" keys.txt'
kill $h1 $h2 2>/dev/null; wait $h1 $h2 2>/dev/null; h1=; h2=

echo "$pass passed, $fail failed"
[ $fail = 0 ]
