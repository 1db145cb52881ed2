#!/bin/sh
# run-targets.sh MAKE TARGET... -- `make test`'s runner (issue 30).
# Runs every TARGET with MAKE, one after the other, whatever the ones before
# answered, so that one red target never hides the state of the others. After
# each target it prints one line
#     == target NAME: PASS|FAIL (exit N, S s)
# and at the end the same lines again as a table, then
#     targets: N passed, M failed[: NAME ...]
# Exit status: 0 when every target passed, 1 otherwise.
# TARGETS_LOG=FILE also appends the table to FILE (CI keeps it).
make=$1
shift
[ $# -gt 0 ] || { echo "run-targets.sh: no targets" >&2; exit 2; }
pass=0 fail=0 failed= table=
for t in "$@"; do
    t0=$(date +%s)
    $make --no-print-directory "$t" </dev/null
    rc=$?
    s=$(( $(date +%s) - t0 ))
    if [ $rc = 0 ]; then word=PASS; pass=$((pass + 1))
    else word=FAIL; fail=$((fail + 1)); failed="$failed $t"; fi
    line=$(printf '%-20s %s (exit %d, %d s)' "$t" "$word" "$rc" "$s")
    echo "== target $line"
    table="$table$line
"
done
summary="targets: $pass passed, $fail failed"
[ $fail = 0 ] || summary="$summary:$failed"
printf '\n== make test: one line per target\n%s%s\n' "$table" "$summary"
[ -z "${TARGETS_LOG:-}" ] || printf '%s%s\n' "$table" "$summary" >>"$TARGETS_LOG"
[ $fail = 0 ]
