#!/bin/sh
# ab.sh HDR_DIR [ROUNDS [BASE_DIR]] -- before/after for a header change: builds
# bench_core against BASE_DIR/lite_di_lock.h (A, default ./) and HDR_DIR/lite_di_lock.h (B),
# then, in this one run:
#   - rows 1 and 2 as A,B,A,B,... (ROUNDS each, default 5): per row the median of the
#     "ours" column for A and for B, and the median of the per-round ratios B/A
#     (rows only one side has, e.g. 2f/2g before v0.2, are shown for that side alone);
#   - callgrind instructions per call of the same loops (poll not due, its bare clock
#     anchor, acquire+release, run, async acquire+release), when valgrind is there;
#   - the footprint rows (5c/5e) of both headers.
# AB_ROWS="1" limits the timed rows; BENCH_MAXKEYS=1000 leaves out the 1e6-key world;
# AB_IR=0 skips callgrind, AB_FP=0 the footprint.
# AB_BUILDS=1 instead: callgrind instructions per call (acquire+release of a MemoryStore,
# the run lifecycle, poll not due) with bench_core built like each of the ten core
# builds of the Makefile's CORE.* table (its compiler, standard and flags, asserts on),
# A and B side by side; nothing else (issue 35: no build may regress).
set -u
. "$(dirname "$0")/lib.sh"
alt=${1:?usage: ab.sh HDR_DIR [ROUNDS [BASE_DIR]]}
rounds=${2:-5}
base=${3:-.}
b=${B:-build}/bench
if [ "${AB_BUILDS:-0}" = 1 ]; then
  command -v valgrind >/dev/null 2>&1 || { echo "ab.sh: AB_BUILDS=1 needs valgrind"; exit 1; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-ab.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
  n=${AB_CALLS:-20000}
  echo "# A: $base/lite_di_lock.h, B: $alt/lite_di_lock.h; callgrind instructions per call, $n calls"
  echo "| build | acquire+release A | B | run A | B | poll A | B |"
  echo "|---|---|---|---|---|---|---|"
  while read -r name cc std flags; do
    xs=; case "$flags" in *"-x c++"*) xs="-x none" ;; esac
    ok=1
    for side in A B; do
      if [ $side = A ]; then h=$base; else h=$alt; fi
      # shellcheck disable=SC2086 # $flags and $xs are lists of flags
      $cc -std="$std" $flags -D_POSIX_C_SOURCE=200809L -w -I"$h" -I"$(dirname "$0")" \
        "$(dirname "$0")/ldl_impl.c" $xs "$(dirname "$0")/bench_core.c" -o "$tmp/$side" 2>"$tmp/err" ||
        { echo "| $name | not built ($side): $(head -c 120 "$tmp/err" | tr '\n|' '  ') |"; ok=0; break; }
    done
    [ $ok = 1 ] || continue
    line="| $name"
    for c in sync run poll; do
      line="$line | $(ir_per_call "$tmp/A" $c "$n" "$tmp") | $(ir_per_call "$tmp/B" $c "$n" "$tmp")"
    done
    echo "$line |"
  done <<'L'
gcc-c99 gcc c99 -O2
gcc-c11 gcc c11 -O2
clang-c99 clang c99 -O2
clang-c11 clang c11 -O2
gxx-cxx17 g++ c++17 -O2 -x c++
clangxx-cxx17 clang++ c++17 -O2 -Wno-deprecated -x c++
keymax32 gcc c99 -O2 -DLDL_KEY_MAX=32
noelection gcc c99 -O2 -DLDL_NO_ELECTION
noasync gcc c99 -O2 -DLDL_NO_ASYNC
firmware gcc c99 -O2 -DLDL_NO_ASYNC -DLDL_NO_ELECTION
L
  exit 0
fi
# -B: a copied header can be older than an object built from another copy
make -s -B "$b/base/bench_core" BN_HDR_DIR="$base" BN_DIR="$b/base" >/dev/null &&
  make -s -B "$b/alt/bench_core" BN_HDR_DIR="$alt" BN_DIR="$b/alt" >/dev/null || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-ab.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "# A: $base/lite_di_lock.h (sha1 $(sha1sum "$base/lite_di_lock.h" | cut -c1-12)), B: $alt/lite_di_lock.h (sha1 $(sha1sum "$alt/lite_di_lock.h" | cut -c1-12))"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of A then B, BENCH_REPS=${BENCH_REPS:-3} each"
r=0
while [ $r -lt "$rounds" ]; do
  r=$((r + 1))
  for v in A B; do
    if [ $v = A ]; then bin="$b/base/bench_core"; else bin="$b/alt/bench_core"; fi
    for row in ${AB_ROWS:-1 2}; do BENCH_REPS=${BENCH_REPS:-3} "$bin" $row; done >"$tmp/$v.$r"
  done
done
# "ours" of a table line as a number (ns, or ops/s)
val() { cut -d'|' -f4 | awk '{ v=$1; if ($2=="M/s") v*=1e6; else if ($2=="k/s") v*=1e3; print v }'; }
fmt() { awk -v v="$1" -v u="$2" 'BEGIN { if (v == "") print "-"; else if (u=="ns") printf "%.2f ns", v; else printf "%.2f M/s", v/1e6 }'; }
echo "| row | measure | A: $base | B: $alt | B/A (median of per-round ratios) |"
echo "|---|---|---|---|---|"
cat "$tmp"/A.1 "$tmp"/B.1 | cut -d'|' -f2,3 | awk '!seen[$0]++' >"$tmp/keys"
while IFS= read -r key; do
  unit=$(cat "$tmp"/A.1 "$tmp"/B.1 | grep -F -m1 "|$key|" | cut -d'|' -f4 | awk '{print $2}')
  : >"$tmp/a"; : >"$tmp/b"
  i=0
  while [ $i -lt "$rounds" ]; do
    i=$((i + 1))
    grep -F -m1 "|$key|" "$tmp/A.$i" | val >>"$tmp/a"
    grep -F -m1 "|$key|" "$tmp/B.$i" | val >>"$tmp/b"
  done
  a=; bb=; q=-
  [ -s "$tmp/a" ] && a=$(median <"$tmp/a")
  [ -s "$tmp/b" ] && bb=$(median <"$tmp/b")
  if [ -n "$a" ] && [ -n "$bb" ]; then q=$(pratio "$tmp/b" "$tmp/a" 1 | awk '{ printf "%.3f", $1 }'); fi
  echo "|$key| $(fmt "$a" "$unit") | $(fmt "$bb" "$unit") | $q |"
done <"$tmp/keys"
# rows whose own figure is paired inside the process (the "ratio" column): row 1 (ours
# minus its anchor, ns) and 2f/2g (async view as a % of the sync view)
cat "$tmp"/A.1 "$tmp"/B.1 | grep -E '^\| (1.|2f|2g) \|' | cut -d'|' -f2,3 | awk '!seen[$0]++' >"$tmp/keys1"
if [ -s "$tmp/keys1" ]; then
  echo
  echo "| row: its paired figure (ratio column), same process | A | B | B - A |"
  echo "|---|---|---|---|"
  while IFS= read -r key; do
    u=$(cat "$tmp"/A.1 "$tmp"/B.1 | grep -F -m1 "|$key|" | cut -d'|' -f6 | awk '{print $2}')
    da=$(for f in "$tmp"/A.*; do grep -F -m1 "|$key|" "$f" | cut -d'|' -f6 | awk '{print $1+0}'; done)
    db=$(for f in "$tmp"/B.*; do grep -F -m1 "|$key|" "$f" | cut -d'|' -f6 | awk '{print $1+0}'; done)
    [ -n "$da" ] && da=$(echo "$da" | median)
    [ -n "$db" ] && db=$(echo "$db" | median)
    pf() { if [ -z "$1" ]; then echo -; elif [ "$u" = ns ]; then printf '%+.2f ns' "$1"; else printf '%.1f %%' "$1"; fi; }
    d=-
    if [ -n "$da" ] && [ -n "$db" ]; then d=$(awk -v a="$da" -v b="$db" -v u="$u" 'BEGIN { printf (u == "ns" ? "%+.2f ns" : "%+.1f points"), b - a }'); fi
    echo "|$key| $(pf "$da") | $(pf "$db") | $d |"
  done <"$tmp/keys1"
fi

if [ "${AB_IR:-1}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
  n=100000
  echo
  echo "callgrind, instructions per call ($n calls, frame-counter clock, nothing else counted):"
  echo
  echo "| loop | A | B | B - A |"
  echo "|---|---|---|---|"
  for c in poll bare sync async run; do
    ia=$(ir_per_call "$b/base/bench_core" "$c" "$n" "$tmp"); ib=$(ir_per_call "$b/alt/bench_core" "$c" "$n" "$tmp")
    d=-
    if [ -n "$ia" ] && [ -n "$ib" ]; then d=$(awk -v a="$ia" -v b="$ib" 'BEGIN { printf "%+.1f", b - a }'); fi
    case $c in
      poll) what="ldl_lock_poll, held, not due" ;;
      bare) what="bare indirect call of the clock (poll's anchor)" ;;
      sync) what="acquire+release, ldl_memstore_store" ;;
      async) what="acquire+release, ldl_memstore_async_store" ;;
      run) what="ldl_lock_run lifecycle, ldl_memstore_store" ;;
    esac
    echo "| $what | ${ia:--} | ${ib:--} | $d |"
  done
fi

if [ "${AB_FP:-1}" = 1 ]; then
  echo
  echo "footprint (bench/footprint.sh), A then B:"
  echo
  sh "$(dirname "$0")/footprint.sh" "$base" "$b/base" | grep -E '^\| 5(c|e) ' | sed 's/^| 5\(.\) |/| 5\1 A |/'
  sh "$(dirname "$0")/footprint.sh" "$alt" "$b/alt" | grep -E '^\| 5(c|e) ' | sed 's/^| 5\(.\) |/| 5\1 B |/'
fi
