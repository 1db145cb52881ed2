#!/bin/sh
# tests/mutants/run.sh -- mutation controls for lite_di_lock.h (issue 4, gate 5).
#
#   sh tests/mutants/run.sh tests/mutants/mutants.txt      (make mutants)
#
# For every mutant id in the list: copy the header to $B/mutants/<id>/, apply
# that mutant's edits (each search string must occur EXACTLY once, else it is
# a runner error, never a kill), rebuild the core suite (tests/core/*.c), the
# edge suite (tests/edge/edge.c) and the fuzz corpus replays against the copy
# (-I$B/mutants/<id> comes first; every test includes "lite_di_lock.h" and no
# test directory holds a copy, so the mutant wins), run them, and report which
# suites killed it. First the unmutated header goes through the same pipeline
# and must pass everywhere, so a broken build or a red suite can never pass
# for a kill. Mutants are compiled with -w: a mutant that only trips a warning
# is not "killed". Exit: 0 all killed, 1 a mutant survived, 2 runner error.
#
# List format, one edit per line, fields separated by " ~~ ":
#   id ~~ description ~~ search ~~ replacement
# "\n" in search/replacement is a newline. Several lines with the same id are
# applied in order to the same copy. Lines starting with # are comments.
set -u
LIST=${1:-tests/mutants/mutants.txt}
B=${B:-build}
CC=${CC:-cc}
HDR=lite_di_lock.h
OUT=$B/mutants
REPLAY_RANDOM=${MUTANT_REPLAY_RANDOM:-400}
TMO=${MUTANT_TIMEOUT:-30}
CORE_SRC=$(ls tests/core/*.c 2>/dev/null | tr '\n' ' ')
FUZZERS="fuzz_lock fuzz_memstore"

[ -f "$LIST" ] || { echo "mutants: no list $LIST"; exit 2; }
[ -f "$HDR" ] || { echo "mutants: run from the repository root"; exit 2; }
mkdir -p "$OUT"

# apply one edit: $1 = file (rewritten in place); MUT_SEARCH / MUT_REPLACE in env
apply_edit() {
    awk 'BEGIN { s = ENVIRON["MUT_SEARCH"]; r = ENVIRON["MUT_REPLACE"];
                 gsub(/\\n/, "\n", s); gsub(/\\n/, "\n", r) }
         { buf = (NR == 1) ? $0 : buf "\n" $0 }
         END { if (s == "") { print "empty search string" > "/dev/stderr"; exit 3 }
               n = 0; rest = buf; out = "";
               while ((p = index(rest, s)) > 0) {
                   n++; out = out substr(rest, 1, p - 1) r; rest = substr(rest, p + length(s)) }
               if (n != 1) { print "search string matched " n " times (must be exactly 1)" > "/dev/stderr"; exit 3 }
               print out rest }' "$1" > "$1.new" && mv "$1.new" "$1"
}

# build every suite against the header in $1; 0 ok, else a build error
build_all() {
    d=$1
    if [ -n "$CORE_SRC" ]; then
        $CC -std=c99 -O1 -w -I"$d" -I. $CORE_SRC -o "$d/core" 2> "$d/build.log" || return 1
    fi
    $CC -std=c99 -O1 -w -I"$d" -I. tests/edge/edge.c -o "$d/edge" 2>> "$d/build.log" || return 1
    for f in $FUZZERS; do
        $CC -std=c99 -O1 -w -I"$d" -I. tests/fuzz/$f.c tests/fuzz/fuzz_replay.c -o "$d/$f" 2>> "$d/build.log" || return 1
    done
    return 0
}

# run every suite; prints the names of the suites that failed
run_all() {
    d=$1; failed=""
    if [ -n "$CORE_SRC" ]; then
        timeout "$TMO" "./$d/core" > "$d/core.log" 2>&1 || failed="$failed core"
    fi
    timeout "$TMO" "./$d/edge" > "$d/edge.log" 2>&1 || failed="$failed edge"
    for f in $FUZZERS; do
        timeout "$TMO" "./$d/$f" -r "$REPLAY_RANDOM" "tests/fuzz/corpus/$f" > "$d/$f.log" 2>&1 || failed="$failed $f"
    done
    echo "$failed"
}

# ---------------------------------------------------------------- baseline
base=$OUT/_baseline
rm -rf "$base"; mkdir -p "$base"; cp "$HDR" "$base/$HDR"
[ -n "$CORE_SRC" ] || echo "mutants: WARNING: tests/core/*.c not found; running edge + fuzz replays only"
if ! build_all "$base"; then echo "mutants: RUNNER ERROR: the unmutated header does not build"; cat "$base/build.log"; exit 2; fi
bf=$(run_all "$base")
if [ -n "$bf" ]; then echo "mutants: RUNNER ERROR: the unmutated header fails:$bf (see $base/*.log)"; exit 2; fi
echo "== mutants: baseline (unmutated header) passes core, edge and fuzz replays"

# ---------------------------------------------------------------- mutants
ids=$(grep -v '^[[:space:]]*#' "$LIST" | grep -v '^[[:space:]]*$' | awk -F' ~~ ' '{ if (!seen[$1]++) print $1 }')
killed=0; survived=0; errors=0; total=0; surv_ids=""
for id in $ids; do
    total=$((total + 1))
    d=$OUT/$id
    rm -rf "$d"; mkdir -p "$d"; cp "$HDR" "$d/$HDR"
    desc=""; err=""
    # the edits of this id, in order (read from a temp file: no subshell)
    grep -v '^[[:space:]]*#' "$LIST" | awk -F' ~~ ' -v id="$id" '$1 == id' > "$d/edits"
    while IFS= read -r line; do
        [ -n "$desc" ] || desc=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $2 }')
        MUT_SEARCH=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $3 }')
        MUT_REPLACE=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $4 }')
        export MUT_SEARCH MUT_REPLACE
        if ! apply_edit "$d/$HDR" 2> "$d/apply.log"; then err="edit did not apply: $(cat "$d/apply.log")"; break; fi
    done < "$d/edits"
    if [ -z "$err" ] && cmp -s "$HDR" "$d/$HDR"; then err="the mutant is identical to the header"; fi
    if [ -z "$err" ] && ! build_all "$d"; then err="the mutant does not compile (see $d/build.log)"; fi
    if [ -n "$err" ]; then
        errors=$((errors + 1))
        printf '  %-28s RUNNER ERROR: %s\n' "$id" "$err"
        continue
    fi
    f=$(run_all "$d")
    if [ -n "$f" ]; then
        killed=$((killed + 1))
        printf '  %-28s killed   by%s  (%s)\n' "$id" "$f" "$desc"
    else
        survived=$((survived + 1)); surv_ids="$surv_ids $id"
        printf '  %-28s SURVIVED               (%s)\n' "$id" "$desc"
    fi
done
echo "== mutants: $killed killed, $survived survived, $errors runner errors (of $total)"
[ $errors -eq 0 ] || exit 2
[ $survived -eq 0 ] || { echo "surviving:$surv_ids"; exit 1; }
exit 0
