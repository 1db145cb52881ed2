#!/bin/sh
# tests/store/contract/mutants.sh LIST [ID ...] -- run the contract suite's mutant list: LIST
# holds sections, each opened by its own "#! target: FILE" and "#! suite: COMMAND" lines (the
# format of tests/mutants/adapters.sh, one target per section); each section is written to a
# list of its own under $B/contract/mutants/ and handed to tests/mutants/adapters.sh, which
# checks the unmutated adapter first, then that every mutant turns the suite red. With IDs,
# only those mutants run (sections holding none of them are skipped).
# Exit: 0 every mutant killed, 1 one survived, 2 a runner error.
set -u
LIST=${1:?usage: mutants.sh LIST [ID ...]}
shift
B=${B:-build}
out=$B/contract/mutants
rm -rf "$out"; mkdir -p "$out"
awk -v out="$out" '
  /^#! target:/ { n++; f = sprintf("%s/s%02d.txt", out, n) }
  n > 0 { print > f }' "$LIST"
worst=0
for l in "$out"/s*.txt; do
    [ -f "$l" ] || { echo "mutants: $LIST has no section"; exit 2; }
    ids=""
    for id in "$@"; do
        awk -F' ~~ ' -v id="$id" '$1 == id { f = 1 } END { exit !f }' "$l" && ids="$ids $id"
    done
    [ $# -gt 0 ] && [ -z "$ids" ] && continue
    echo "== $(sed -n 's/^#! target:[[:space:]]*//p' "$l") by $(sed -n 's/^#! suite:[[:space:]]*//p' "$l")"
    # shellcheck disable=SC2086
    B=$B sh tests/mutants/adapters.sh "$l" $ids; rc=$?
    [ $rc -gt $worst ] && worst=$rc
done
exit $worst
