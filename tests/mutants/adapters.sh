#!/bin/sh
# tests/mutants/adapters.sh -- mutation controls for the adapter headers
# (issue 24: "the adapters get a mutant list of their own, beside the header's").
#
#   sh tests/mutants/adapters.sh LIST [ID ...]
#
# A list names the file it mutates and the suite that must kill each mutant,
# in two directive lines, then one edit per line in tests/mutants/mutants.txt's
# format ("id ~~ description ~~ search ~~ replacement", "\n" = newline, lines
# sharing an id applied together, each search matching EXACTLY once):
#
#   #! target: adapters/lite_di_lock_pg.h
#   #! suite:  tests/store/with_pg.sh sh tests/mutants/pg_suite.sh
#
# For each mutant the runner copies the target to $B/amutants/<list>/<id>/<target>
# and runs the suite command with MUT_DIR set to that directory: the suite
# compiles its programs with -I"$MUT_DIR" before -I. (the tests include
# "adapters/lite_di_lock_*.h", so the mutant wins) into "$MUT_DIR", runs them
# and exits non-zero when any check fails. The unmutated target goes through
# the same suite first and must pass, so a red suite can never pass for a kill.
# A mutant that does not compile is a runner error, never a kill (build with
# -w; the suite says "BUILD-ERROR" on its stdout and exits 3 for that).
# Exit: 0 all killed, 1 a mutant survived, 2 runner error.
set -u
LIST=${1:?usage: adapters.sh LIST [ID ...]}
shift
B=${B:-build}
TMO=${MUTANT_TIMEOUT:-300}
[ -f "$LIST" ] || { echo "mutants: no list $LIST"; exit 2; }
TARGET=$(sed -n 's/^#! target:[[:space:]]*//p' "$LIST" | head -n 1)
SUITE=$(sed -n 's/^#! suite:[[:space:]]*//p' "$LIST" | head -n 1)
[ -n "$TARGET" ] && [ -f "$TARGET" ] || { echo "mutants: $LIST names no target file"; exit 2; }
[ -n "$SUITE" ] || { echo "mutants: $LIST names no suite"; exit 2; }
OUT=$B/amutants/$(basename "$LIST" .txt)
mkdir -p "$OUT"

. "$(dirname "$0")/apply_edit.sh"    # apply_edit FILE, with MUT_SEARCH / MUT_REPLACE in env

# run the suite against the copy in $1; its exit code
run_suite() {
    MUT_DIR=$1 timeout "$TMO" sh -c "$SUITE" > "$1/suite.log" 2>&1
}

base=$OUT/_baseline
rm -rf "$base"; mkdir -p "$base/$(dirname "$TARGET")"; cp "$TARGET" "$base/$TARGET"
if ! run_suite "$base"; then
    echo "mutants: RUNNER ERROR: the unmutated $TARGET fails its suite"; tail -n 30 "$base/suite.log"; exit 2
fi

ids=$(grep -v '^[[:space:]]*#' "$LIST" | awk -F' ~~ ' 'NF >= 4 { print $1 }' | awk '!seen[$0]++')
[ $# -gt 0 ] && ids=$*
killed=0; survived=0; errors=0
for id in $ids; do
    d=$OUT/$id
    rm -rf "$d"; mkdir -p "$d/$(dirname "$TARGET")"; cp "$TARGET" "$d/$TARGET"
    err=""
    grep -v '^[[:space:]]*#' "$LIST" | awk -F' ~~ ' -v id="$id" '$1 == id' > "$d/edits"
    [ -s "$d/edits" ] || err="no edit has this id"
    while IFS= read -r line; do
        MUT_SEARCH=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $3 }')
        MUT_REPLACE=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $4 }')
        export MUT_SEARCH MUT_REPLACE
        if ! apply_edit "$d/$TARGET" 2> "$d/apply.log"; then err="edit did not apply: $(cat "$d/apply.log")"; break; fi
    done < "$d/edits"
    if [ -z "$err" ] && cmp -s "$TARGET" "$d/$TARGET"; then err="the mutant is identical to $TARGET"; fi
    if [ -z "$err" ]; then
        run_suite "$d"; rc=$?
        if [ $rc = 3 ] || grep -q '^BUILD-ERROR' "$d/suite.log"; then err="the mutant does not compile (see $d/suite.log)"
        elif [ $rc = 0 ]; then echo "mutant $id: SURVIVED"; survived=$((survived + 1)); continue
        else echo "mutant $id: killed (exit $rc)"; killed=$((killed + 1)); continue; fi
    fi
    echo "mutant $id: ERROR $err"; errors=$((errors + 1))
done
echo "mutants ($TARGET): $killed killed, $survived survived, $errors errors"
[ $errors = 0 ] || exit 2
[ $survived = 0 ] || exit 1
exit 0
