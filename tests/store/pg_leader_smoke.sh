#!/bin/sh
# pg_leader_smoke.sh BIN -- run examples/pg_leader twice against $LDL_PG_CONNINFO
# (set by with_pg.sh): the first leads, steps down after 3 s, the second takes
# over with a higher fence. Last line: "N passed, N failed".
bin=${1:?usage: pg_leader_smoke.sh path/to/pg_leader}
out=$(mktemp -d "${TMPDIR:-/tmp}/ldl-leader.XXXXXX") || exit 2
trap 'rm -rf "$out"' EXIT
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }

"$bin" "$LDL_PG_CONNINFO" first 3 >"$out/a" 2>&1 & a=$!
sleep 1
"$bin" "$LDL_PG_CONNINFO" second 5 >"$out/b" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
fa=$(sed -n 's/.*LEADER now, fence \([0-9]*\).*/\1/p' "$out/a" | head -1)
fb=$(sed -n 's/.*LEADER now, fence \([0-9]*\).*/\1/p' "$out/b" | head -1)
check "first exits 0 ($ra)" '[ "$ra" = 0 ]'
check "second exits 0 ($rb)" '[ "$rb" = 0 ]'
check "first led (fence '$fa')" '[ -n "$fa" ]'
check "second waited as a follower" 'grep -q "follower: someone else leads" "$out/b"'
check "second took over with a higher fence ($fb > $fa)" '[ -n "$fb" ] && [ -n "$fa" ] && [ "$fb" -gt "$fa" ]'
check "first never printed LOST" '! grep -q LOST "$out/a"'
[ $fail = 0 ] || { echo "--- first"; cat "$out/a"; echo "--- second"; cat "$out/b"; } >&2
echo "$pass passed, $fail failed"
[ $fail = 0 ]
