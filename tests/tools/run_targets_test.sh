#!/bin/sh
# run_targets_test.sh -- tools/run-targets.sh keeps going after a red target,
# reports every target, names the failed ones and exits non-zero (issue 30).
set -u
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
cat >"$d/mk" <<'MK'
a: ; @echo ran-a
b: ; @echo ran-b; exit 3
c: ; @echo ran-c >"$(D)/c.ran"
MK
out=$(sh tools/run-targets.sh "make -f $d/mk D=$d" a b c 2>&1); rc=$?
[ $rc != 0 ] && ok || bad "a failed target must make the run non-zero (got $rc)"
[ -f "$d/c.ran" ] && ok || bad "the target after a red one must still run"
printf '%s\n' "$out" | grep -qx 'targets: 2 passed, 1 failed: b' && ok || bad "summary line: $out"
for t in a c; do printf '%s\n' "$out" | grep -Eq "^$t +PASS \(exit 0" && ok || bad "no PASS line for $t"; done
printf '%s\n' "$out" | grep -Eq '^b +FAIL \(exit 2' && ok || bad "no FAIL line for b"
out=$(sh tools/run-targets.sh "make -f $d/mk D=$d" a c 2>&1); rc=$?
[ $rc = 0 ] && ok || bad "all green must exit 0 (got $rc)"
printf '%s\n' "$out" | grep -qx 'targets: 2 passed, 0 failed' && ok || bad "green summary: $out"
sh tools/run-targets.sh "make -f $d/mk D=$d" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "no targets must be a usage error"
echo "run-targets: $pass passed, $fail failed"
[ $fail = 0 ]
