#!/bin/sh
# tests/model/run.sh -- check the Spin model tests/model/lock.pml (issue 36).
#
#   sh tests/model/run.sh small     make test-model: every configuration exhaustively at
#                                   small bounds, then each planted model mutant must
#                                   produce a counterexample against its own property,
#                                   then trace validation of the fuzz replays' traces
#                                   (TRACE_RANDOM=5000 random inputs per fuzzer) and a
#                                   planted header bug it must catch
#   sh tests/model/run.sh large     make model: larger bounds (minutes)
#
# The model includes edges.h, the header's LDL__EDGES table cut out of
# lite_di_lock.h here, so every state change the model makes is checked against
# the code's own table. pan is built with -DSAFETY (assertions only) and a memory
# ceiling (MODEL_MEMLIM MB, default 2048) so that a bound too large for the
# machine stops with "search not completed" (a failure here), never by
# swapping. Prints "N passed, N failed" last; exits non-zero on any failure.
set -u
MODE=${1:-small}
B=${B:-build}
OUT=$B/model
MEMLIM=${MODEL_MEMLIM:-2048}
mkdir -p "$OUT"
pass=0 fail=0
command -v spin >/dev/null 2>&1 || { echo "model: spin is not installed (make deps installs it)"; echo "0 passed, 1 failed"; exit 1; }

# edges.h: the header's LDL__EDGES, verbatim
sed -n '/^#define LDL__EDGES(X)/,/^[^\\]*$/p' lite_di_lock.h > "$OUT/edges.h"
if ! grep -q 'X(RELEASING, *RELEASED' "$OUT/edges.h"; then
  echo "model: could not cut LDL__EDGES out of lite_di_lock.h"; echo "0 passed, 1 failed"; exit 1; fi
cp tests/model/lock.pml "$OUT/lock.pml"

# run NAME "SPIN -D FLAGS" [EXTRA PAN CFLAGS]: build pan in $OUT/NAME and search;
# leaves the output in $OUT/NAME/pan.out
run() {
  d=$OUT/$1; rm -rf "$d"; mkdir -p "$d"; cp "$OUT/lock.pml" "$OUT/edges.h" "$d/"
  ( cd "$d" && spin -a $2 lock.pml > spin.out 2>&1 &&
    ${CC:-cc} -O2 -w -DSAFETY -DNOFAIR -DMEMLIM=$MEMLIM ${3:-} -o pan pan.c > cc.out 2>&1 &&
    ./pan -E -m200000 > pan.out 2>&1 ) || { cat "$d/spin.out" "$d/cc.out" 2>/dev/null | head -5; return 1; }
}
fig() { # the figures of a finished search
  f=$1/pan.out
  printf '%s states, %s transitions, depth %s, %s s' \
    "$(awk '/states, stored/ { print $1; exit }' "$f")" "$(awk '/transitions \(= stored\+matched\)/ { print $1; exit }' "$f")" \
    "$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$f" | head -1)" "$(sed -n 's/.*elapsed time \([0-9.e+]*\).*/\1/p' "$f" | head -1)"
}

# the configurations: name, then the -D flags
if [ "$MODE" = large ]; then
  # name:spin flags:pan flags. Three clients do not fit 2 GB exhaustively (13.9 million
  # states stored with -DCOLLAPSE when it stopped): hash compaction (-DHC4) stores a
  # 64-bit hash per state, so a state can be missed only on a hash collision.
  CONFIGS="n2-ttl3:-DN=2 -DTTL=3 -DDRIFT=1 -DMAXF=2 -DRMAX=0:-DCOLLAPSE
n2-ttl3-restart:-DN=2 -DTTL=3 -DDRIFT=1 -DMAXF=2 -DRMAX=1 -DNOWRITE:-DCOLLAPSE
n2-ttl4-drift2:-DN=2 -DTTL=4 -DDRIFT=2 -DMAXF=2 -DRMAX=0 -DNOWRITE:-DCOLLAPSE
n3-ttl2:-DN=3 -DTTL=2 -DDRIFT=1 -DMAXF=2 -DRMAX=0 -DNOWRITE:-DHC4"
else
  CONFIGS="base:-DN=2 -DTTL=2 -DDRIFT=1 -DMAXF=2 -DRMAX=0:
restart:-DN=2 -DTTL=2 -DDRIFT=1 -DMAXF=2 -DRMAX=1 -DNOWRITE:"
fi

echo "$CONFIGS" | while IFS=: read -r name flags panx; do
  if run "$name" "$flags" "$panx" && grep -q 'errors: 0' "$OUT/$name/pan.out" && ! grep -q 'Search not completed' "$OUT/$name/pan.out"; then
    echo "== model $name ($flags${panx:+, pan $panx}): no counterexample, $(fig "$OUT/$name")"; echo ok >> "$OUT/results"
  else
    echo "== model $name ($flags): FAIL"; grep -E 'violated|error|not completed|MEMLIM' "$OUT/$name/pan.out" 2>/dev/null | head -5
    [ -f "$OUT/$name/lock.pml.trail" ] && echo "   trail: (cd $OUT/$name && spin -t -p $flags lock.pml)"
    echo bad >> "$OUT/results"
  fi
done

# the planted model mutants: each must fail its own property (the assertion named)
if [ "$MODE" = small ]; then
  MUTANTS="LATE_YES:base:P3:TRUSTS
NO_DRIFT:base:P3:TRUSTS
NO_WAIT:restart:P3:TRUSTS
VOLATILE_FENCE:restart:P1:s_fence>g_issued
MARK_LT:base:P2:wr>=r_mark
CUT_TWICE:base:P4:g_back
RELEASE_ANY:base:P4:g_live
LOST_TWICE:base:P5:onl"
  echo "$MUTANTS" | while IFS=: read -r m cfg prop pat; do
    flags=$(echo "$CONFIGS" | awk -F: -v n="$cfg" '$1 == n { print $2 }')
    run "mut-$m" "$flags -DMUT_$m" "-O1" || true
    f=$OUT/mut-$m/pan.out
    # the expanded assertion text: TRUSTS is c[.].st==2 && age
    case $pat in TRUSTS) re='c\[0\]\.st==2.*age' ;; *) re=$pat ;; esac
    if grep -q 'assertion violated' "$f" 2>/dev/null && grep 'assertion violated' "$f" | grep -q -- "$re"; then
      echo "== model mutant $m: counterexample to $prop at depth $(sed -n 's/.*assertion violated.*(at depth \([0-9]*\)).*/\1/p' "$f" | head -1), $(sed -n 's/.*elapsed time \([0-9.e+]*\).*/\1/p' "$f" | head -1) s"
      echo ok >> "$OUT/results"
    else
      echo "== model mutant $m: SURVIVED (no counterexample to $prop): $(grep -E 'violated|errors:' "$f" 2>/dev/null | head -2 | tr '\n' ' ')"
      echo bad >> "$OUT/results"
    fi
  done
fi

# the model follows the header's table: with the row HELD -> LOST cut out of edges.h,
# the model's first loss must fail its edge assertion
if [ "$MODE" = small ]; then
  d=$OUT/table-cut; rm -rf "$d"; mkdir -p "$d"; cp "$OUT/lock.pml" "$d/"
  grep -v 'X(HELD, *LOST,' "$OUT/edges.h" > "$d/edges.h"
  flags=$(echo "$CONFIGS" | awk -F: '$1 == "base" { print $2 }')
  ( cd "$d" && spin -a $flags lock.pml > spin.out 2>&1 && ${CC:-cc} -O1 -w -DSAFETY -DNOFAIR -DMEMLIM=$MEMLIM -o pan pan.c &&
    ./pan -E -m200000 > pan.out 2>&1 )
  if ! cmp -s "$d/edges.h" "$OUT/edges.h" && grep 'assertion violated' "$d/pan.out" 2>/dev/null | grep -q 'EF==2'; then
    echo "== model edge table, row HELD -> LOST removed: the model's loss fails its edge assertion"; echo ok >> "$OUT/results"
  else
    echo "== model edge table, row HELD -> LOST removed: NOT CAUGHT"; echo bad >> "$OUT/results"
  fi
fi

# trace validation (item 3): the fuzz replays built with LDL_MODEL_TRACE record every
# state change and check it is a step of the model (tests/model/trace_check.h); then a
# planted header bug (a late grant accepted) must make the validation fail
if [ "$MODE" = small ]; then
  TR=$OUT/trace; mkdir -p "$TR/planted"
  TRACE_RANDOM=${TRACE_RANDOM:-5000}
  for f in fuzz_lock fuzz_election; do
    if ${CC:-cc} -std=c99 -O1 -Wall -Wextra -Wpedantic -Werror -DLDL_MODEL_TRACE -I. tests/fuzz/$f.c tests/fuzz/fuzz_replay.c \
         -o "$TR/$f" 2> "$TR/$f.cc" && "$TR/$f" -r "$TRACE_RANDOM" tests/fuzz/corpus/$f > "$TR/$f.out" 2>&1 &&
       grep -q '^trace validation: [1-9][0-9]* traces' "$TR/$f.out"; then
      echo "== model traces $f: $(grep '^trace validation:' "$TR/$f.out") ($(grep 'passed' "$TR/$f.out" | tail -1) inputs)"
      echo ok >> "$OUT/results"
    else
      echo "== model traces $f: FAIL"; cat "$TR/$f.cc"; tail -n 30 "$TR/$f.out"; echo bad >> "$OUT/results"
    fi
  done
  # the planted bug: ldl__granted without its window check
  awk '{ if ($0 == "    if (tok <= l->_last || !ldl__within(start, now, l->_window)) {") { print "    if (tok <= l->_last) {"; n++ } else print } END { if (n != 1) exit 1 }' \
    lite_di_lock.h > "$TR/planted/lite_di_lock.h" || { echo "== model traces: the planted bug's line is gone from the header"; echo bad >> "$OUT/results"; }
  for f in fuzz_lock fuzz_election; do
    ${CC:-cc} -std=c99 -O1 -w -DLDL_MODEL_TRACE -I"$TR/planted" -I. tests/fuzz/$f.c tests/fuzz/fuzz_replay.c -o "$TR/planted/$f" 2>/dev/null
    "$TR/planted/$f" -r "$TRACE_RANDOM" tests/fuzz/corpus/$f > "$TR/planted/$f.out" 2>&1
    if grep -q 'trace validation: NOT A STEP OF THE MODEL.*late yes' "$TR/planted/$f.out"; then
      echo "== model traces, planted late grant, $f: caught ($(grep -m1 'NOT A STEP' "$TR/planted/$f.out" | sed 's/^trace validation: //'))"
      echo ok >> "$OUT/results"
    else
      echo "== model traces, planted late grant, $f: NOT CAUGHT"; tail -n 5 "$TR/planted/$f.out"; echo bad >> "$OUT/results"
    fi
  done
fi

pass=$(grep -c '^ok$' "$OUT/results" 2>/dev/null); fail=$(grep -c '^bad$' "$OUT/results" 2>/dev/null)
rm -f "$OUT/results"
echo "${pass:-0} passed, ${fail:-0} failed"
[ "${fail:-0}" = 0 ]
