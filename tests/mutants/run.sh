#!/bin/sh
# tests/mutants/run.sh -- mutation controls for lite_di_lock.h (issue 4, gate 5;
# issue 9 for the v0.2 non-blocking store mutants; issue 12 for [election] and
# the fuzz_election replay).
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
# Speed: the translation units that do not compile the implementation (the
# core suite's files other than the one defining LITE_DI_LOCK_IMPLEMENTATION,
# fuzz_replay.c) are compiled once against the unmutated header and linked
# into every mutant whose edits leave the declarations (everything before
# "#ifdef LITE_DI_LOCK_IMPLEMENTATION") untouched; any other mutant is built
# from scratch. MUTANT_JOBS mutants (default 2) are built and run at once.
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
JOBS=${MUTANT_JOBS:-2}
CFLAGS_M="-std=c99 -O1 -w"
CORE_SRC=$(ls tests/core/*.c 2>/dev/null | tr '\n' ' ')
CORE_IMPL=$(grep -l 'define LITE_DI_LOCK_IMPLEMENTATION' $CORE_SRC 2>/dev/null | tr '\n' ' ')
FUZZERS="fuzz_lock fuzz_memstore fuzz_election"

[ -f "$LIST" ] || { echo "mutants: no list $LIST"; exit 2; }
[ -f "$HDR" ] || { echo "mutants: run from the repository root"; exit 2; }
mkdir -p "$OUT"
OBJ=$OUT/_objs

. "$(dirname "$0")/apply_edit.sh"    # apply_edit FILE, with MUT_SEARCH / MUT_REPLACE in env

# the declarations part of a header (before the implementation guard)
decls() { sed '/^#ifdef LITE_DI_LOCK_IMPLEMENTATION/,$d' "$1"; }

# compile the translation units that do not hold the implementation, once
build_objs() {
    rm -rf "$OBJ"; mkdir -p "$OBJ"
    for f in $CORE_SRC; do
        case " $CORE_IMPL " in *" $f "*) continue;; esac
        $CC $CFLAGS_M -I. -c "$f" -o "$OBJ/$(basename "$f" .c).o" 2>> "$OBJ/build.log" || return 1
    done
    $CC $CFLAGS_M -I. -c tests/fuzz/fuzz_replay.c -o "$OBJ/fuzz_replay.o" 2>> "$OBJ/build.log" || return 1
}

# build every suite against the header in $1; 0 ok, else a build error.
# $2 = 1: reuse the shared objects (the declarations are unchanged)
build_all() {
    d=$1; reuse=$2
    if [ -n "$CORE_SRC" ]; then
        if [ "$reuse" = 1 ]; then
            $CC $CFLAGS_M -I"$d" -I. $CORE_IMPL $(ls "$OBJ"/*.o | grep -v fuzz_replay.o) -o "$d/core" 2> "$d/build.log" || return 1
        else
            $CC $CFLAGS_M -I"$d" -I. $CORE_SRC -o "$d/core" 2> "$d/build.log" || return 1
        fi
    fi
    $CC $CFLAGS_M -I"$d" -I. tests/edge/edge.c -o "$d/edge" 2>> "$d/build.log" || return 1
    for f in $FUZZERS; do
        if [ "$reuse" = 1 ]; then rp=$OBJ/fuzz_replay.o; else rp=tests/fuzz/fuzz_replay.c; fi
        $CC $CFLAGS_M -I"$d" -I. tests/fuzz/$f.c "$rp" -o "$d/$f" 2>> "$d/build.log" || return 1
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

# one mutant: writes "killed <suites>", "SURVIVED" or "ERROR <why>" to $OUT/<id>/result
one_mutant() {
    id=$1
    d=$OUT/$id
    rm -rf "$d"; mkdir -p "$d"; cp "$HDR" "$d/$HDR"
    err=""
    grep -v '^[[:space:]]*#' "$LIST" | awk -F' ~~ ' -v id="$id" '$1 == id' > "$d/edits"
    while IFS= read -r line; do
        MUT_SEARCH=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $3 }')
        MUT_REPLACE=$(printf '%s\n' "$line" | awk -F' ~~ ' '{ print $4 }')
        export MUT_SEARCH MUT_REPLACE
        if ! apply_edit "$d/$HDR" 2> "$d/apply.log"; then err="edit did not apply: $(cat "$d/apply.log")"; break; fi
    done < "$d/edits"
    if [ -z "$err" ] && cmp -s "$HDR" "$d/$HDR"; then err="the mutant is identical to the header"; fi
    if [ -z "$err" ]; then
        reuse=0
        decls "$d/$HDR" > "$d/decls"
        cmp -s "$d/decls" "$OBJ/decls" && reuse=1
        build_all "$d" "$reuse" || err="the mutant does not compile (see $d/build.log)"
    fi
    if [ -n "$err" ]; then echo "ERROR $err" > "$d/result"; return; fi
    f=$(run_all "$d")
    if [ -n "$f" ]; then echo "killed$f" > "$d/result"; else echo "SURVIVED" > "$d/result"; fi
}

# ---------------------------------------------------------------- baseline
base=$OUT/_baseline
rm -rf "$base"; mkdir -p "$base"; cp "$HDR" "$base/$HDR"
[ -n "$CORE_SRC" ] || echo "mutants: WARNING: tests/core/*.c not found; running edge + fuzz replays only"
if ! build_objs; then echo "mutants: RUNNER ERROR: the shared objects do not build"; cat "$OBJ/build.log"; exit 2; fi
decls "$HDR" > "$OBJ/decls"
if ! build_all "$base" 1; then echo "mutants: RUNNER ERROR: the unmutated header does not build"; cat "$base/build.log"; exit 2; fi
bf=$(run_all "$base")
if [ -n "$bf" ]; then echo "mutants: RUNNER ERROR: the unmutated header fails:$bf (see $base/*.log)"; exit 2; fi
echo "== mutants: baseline (unmutated header) passes core, edge and fuzz replays"

# ---------------------------------------------------------------- mutants
ids=$(grep -v '^[[:space:]]*#' "$LIST" | grep -v '^[[:space:]]*$' | awk -F' ~~ ' '{ if (!seen[$1]++) print $1 }')
j=0
while [ $j -lt "$JOBS" ]; do
    (   k=0
        for id in $ids; do
            [ $((k % JOBS)) -eq $j ] && one_mutant "$id"
            k=$((k + 1))
        done ) &
    j=$((j + 1))
done
wait

killed=0; survived=0; errors=0; total=0; surv_ids=""
for id in $ids; do
    total=$((total + 1))
    desc=$(grep -v '^[[:space:]]*#' "$LIST" | awk -F' ~~ ' -v id="$id" '$1 == id { print $2; exit }')
    res=$(cat "$OUT/$id/result" 2>/dev/null || echo "ERROR no result")
    case $res in
    killed*)   killed=$((killed + 1))
               printf '  %-30s killed   by%s  (%s)\n' "$id" "${res#killed}" "$desc" ;;
    SURVIVED)  survived=$((survived + 1)); surv_ids="$surv_ids $id"
               printf '  %-30s SURVIVED               (%s)\n' "$id" "$desc" ;;
    *)         errors=$((errors + 1))
               printf '  %-30s RUNNER %s\n' "$id" "$res" ;;
    esac
done
echo "== mutants: $killed killed, $survived survived, $errors runner errors (of $total)"
[ $errors -eq 0 ] || exit 2
[ $survived -eq 0 ] || { echo "surviving:$surv_ids"; exit 1; }
exit 0
