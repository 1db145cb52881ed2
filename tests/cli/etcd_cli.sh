#!/bin/sh
# etcd_cli.sh BIN -- `ldl-run --etcd ENDPOINTS` (issue 21) against a real single etcd member
# it starts itself (free ports, temp dir, pid in $LDL_TEST_DIR for with_etcd.sh's backstop):
# rising fences, --status/--owner, exclusion with -n/-w, a dead member listed first, the
# key deleted under a running command (killed, exit 75), bad and unreachable endpoints.
# Run from `make test-etcd-single` through tests/store/with_etcd.sh. Sleeps only order
# events; nothing asserts a duration. Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: etcd_cli.sh BIN}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-cli-etcd.XXXXXX") || exit 2
epid=; holder=
cleanup() { [ -n "$holder" ] && kill -9 "$holder" 2>/dev/null; [ -n "$epid" ] && kill -9 "$epid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
label="etcd cli"
. "$here/lib.sh"         # check, wait_for, alive, clean, freeport

cp=$(freeport); pp=$(freeport); dead=$(freeport)
url=http://127.0.0.1:$cp
etcd --name cli --data-dir "$d/data" --listen-client-urls "$url" --advertise-client-urls "$url" \
  --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
  --initial-cluster "cli=http://127.0.0.1:$pp" --log-level warn --logger zap > etcd.log 2>&1 &
epid=$!
[ -n "${LDL_TEST_DIR:-}" ] && echo $epid > "$LDL_TEST_DIR/etcd-cli.pid"
i=0; until curl -s "$url/health" 2>/dev/null | grep -q '"health":"true"'; do
  i=$((i + 1)); [ $i -gt 300 ] && { cat etcd.log >&2; echo "0 passed, 1 failed"; exit 1; }; sleep 0.1; done
ectl() { ETCDCTL_API=3 etcdctl --endpoints="$url" "$@"; }
run() { "$bin" --etcd "$url" --store-timeout 4 "$@"; }   # generous: a loaded 2-core machine

# ---------------------------------------------------------------- fences, status, owner
for i in 1 2 3; do run --ttl 3000 F -- sh -c 'echo $LDL_FENCE >> fences'; done
check "three runs, three fences ($(tr '\n' ' ' < fences))" '[ "$(wc -l < fences)" = 3 ]'
check "fences rise strictly" 'sort -n -c -u fences'
check "the key is gone after the runs" '[ -z "$(ectl get ldl/F --print-value-only)" ]'
run --status F > st0; rc=$?
check "--status of a released key: exit 1, free (got $rc: $(cat st0))" '[ $rc = 1 ] && [ "$(cat st0)" = "F: free" ]'
run --owner "job 7@box" --ttl 9000 ST -- sh -c 'echo $LDL_FENCE > st.f; while [ ! -e st.go ]; do sleep 0.05; done' & sa=$!
wait_for st.f
run --status ST > st1; rc=$?
check "--status while held: owner and fence ($(cat st1))" \
  '[ $rc = 0 ] && grep -q "^ST: held by job 7@box, fence $(cat st.f), [0-9]* ms left$" st1'
check "the fence is the key's create revision" \
  '[ "$(ectl get ldl/ST -w json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"kvs\"][0][\"create_revision\"])")" = "$(cat st.f)" ]'
run -n ST -- touch n.ran; rc=$?
check "-n while held: exit 1, not run (got $rc)" '[ $rc = 1 ] && [ ! -e n.ran ]'
run -w 2 ST -- touch w.ran; rc=$?
check "-w 2 while held: exit 1, not run (got $rc)" '[ $rc = 1 ] && [ ! -e w.ran ]'
touch st.go; wait $sa; rc=$?
check "the holder exits 0 (got $rc)" '[ $rc = 0 ]'
run --status ST > st2; rc=$?
check "free after the release (got $rc)" '[ $rc = 1 ] && grep -q "ST: free" st2'

# ---------------------------------------------------------------- members
"$bin" --etcd "http://127.0.0.1:$dead,$url" --ttl 3000 M -- sh -c 'echo $LDL_FENCE > m.f'; rc=$?
check "a dead member listed first is skipped (exit $rc)" '[ $rc = 0 ] && [ -s m.f ]'
"$bin" --etcd "127.0.0.1:$cp" M -- true 2>u.err; rc=$?
check "ENDPOINTS without http:// : exit 64 ($rc: $(cat u.err))" '[ $rc = 64 ]'
"$bin" --etcd "http://127.0.0.1:$dead" --store-timeout 1 -n M -- touch x.ran 2>x.err; rc=$?
check "no live member: exit 69, not run ($rc: $(cat x.err))" '[ $rc = 69 ] && [ ! -e x.ran ]'

# ---------------------------------------------------------------- the key deleted under it
printf 'trap "exit 0" TERM\nwhile :; do sleep 0.05; done\n' > gc.sh
"$bin" --etcd "$url" --ttl 3000 --grace 0.5 LK -- sh -c 'echo $LDL_FENCE > lf; sh gc.sh & echo $! > g.pid; wait' 2>lost.err &
holder=$!
wait_for lf; wait_for g.pid
ectl del ldl/LK > /dev/null
wait $holder; rc=$?; holder=
check "key deleted by another client: exit 75 ($rc: $(tail -n 1 lost.err))" '[ $rc = 75 ]'
check "the command's grandchild is gone" '! kill -0 "$(cat g.pid)" 2>/dev/null'

kill "$epid" 2>/dev/null; wait "$epid" 2>/dev/null; epid=
[ $fail = 0 ] || cat etcd.log >&2
echo "$pass passed, $fail failed"
[ $fail = 0 ]
