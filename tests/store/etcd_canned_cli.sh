#!/bin/sh
# etcd_canned_cli.sh BIN -- issue 31's etcd finding, end to end: `ldl-run --etcd` against
# the hostile gateway (tests/store/etcd_fake.py). A canned txn "succeeded" (no key, no
# lease), a reply naming another lease, and a lease granted shorter than asked must each be
# a store error: the command never runs and LDL_FENCE is never handed out. The well-behaved
# fake runs it (so the failures mean what they say). Last line: "N passed, N failed".
bin=${1:?usage: etcd_canned_cli.sh LDL-RUN}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
src=$PWD
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-etcd-canned.XXXXXX") || exit 2
pass=0; fail=0; fpid=
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
cleanup() { [ -n "$fpid" ] && kill "$fpid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
python3 "$src/tests/store/etcd_fake.py" "$d/port" > "$d/fake.log" 2>&1 & fpid=$!
i=0; while [ ! -s "$d/port" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "0 passed, 1 failed (the fake did not start)"; exit 1; }; sleep 0.1; done
url=http://127.0.0.1:$(cat "$d/port")
mode() { curl -s -m 5 -X POST --data "$1 $2" "$url/_mode" > /dev/null; }
cd "$d" || exit 2

mode ok '*'
timeout 20 "$bin" --etcd "$url" --store-timeout 2 -n K -- sh -c 'echo $LDL_FENCE > ok.ran'; rc=$?
check "the well-behaved fake: the command runs with fence 5 (exit $rc)" '[ $rc = 0 ] && [ "$(cat ok.ran 2>/dev/null)" = 5 ]'
for m in canned:/v3/kv/txn wronglease:/v3/kv/txn oldkey:/v3/kv/txn shortttl:/v3/lease/grant; do
  mode "${m%%:*}" "${m#*:}"
  rm -f ran
  timeout 20 "$bin" --etcd "$url" --store-timeout 2 -n K -- sh -c 'echo $LDL_FENCE > ran' 2> err; rc=$?
  check "${m%%:*}: a store error, the command never runs (exit $rc: $(tail -n 1 err))" \
    '[ $rc != 0 ] && [ $rc != 124 ] && [ ! -e ran ]'
done
mode ok '*'
echo "$pass passed, $fail failed"
[ $fail = 0 ]
