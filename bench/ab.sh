#!/bin/sh
# ab.sh HDR_DIR [ROUNDS [BASE_DIR]] -- before/after for a proposed header change: builds
# bench_core against BASE_DIR/lite_di_lock.h (A, default ./) and HDR_DIR/lite_di_lock.h (B), then
# runs rows 1 and 2 as A,B,A,B,... (ROUNDS each, default 5) and prints, per row,
# the median of the "ours" column for A and for B. AB_ROWS="1" limits the rows.
set -u
. "$(dirname "$0")/lib.sh"
alt=${1:?usage: ab.sh HDR_DIR [ROUNDS]}
rounds=${2:-5}
base=${3:-.}
b=${B:-build}/bench
# -B: a copied header can be older than an object built from another copy
make -s -B bench-build BN_HDR_DIR="$base" BN_DIR="$b/base" >/dev/null &&
  make -s -B bench-build BN_HDR_DIR="$alt" BN_DIR="$b/alt" >/dev/null || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-ab.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
diff -u "$base/lite_di_lock.h" "$alt/lite_di_lock.h" | sed -n '1,2p' | sed 's/^/# /'
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds of A then B, BENCH_REPS=${BENCH_REPS:-3} each"
r=0
while [ $r -lt "$rounds" ]; do
  r=$((r + 1))
  for v in A B; do
    if [ $v = A ]; then bin="$b/base/bench_core"; else bin="$b/alt/bench_core"; fi
    for row in ${AB_ROWS:-1 2}; do BENCH_REPS=${BENCH_REPS:-3} "$bin" $row; done >"$tmp/$v.$r"
  done
done
echo "| row | measure | A: $base/lite_di_lock.h | B: $alt/lite_di_lock.h | B/A |"
echo "|---|---|---|---|---|"
n=$(wc -l <"$tmp/A.1")
i=0
while [ $i -lt "$n" ]; do
  i=$((i + 1))
  what=$(sed -n "${i}p" "$tmp/A.1" | cut -d'|' -f2,3)
  unit=$(sed -n "${i}p" "$tmp/A.1" | cut -d'|' -f4 | awk '{print $2}')
  a=$(for f in "$tmp"/A.*; do sed -n "${i}p" "$f" | cut -d'|' -f4 | awk '{ v=$1; if ($2=="M/s") v*=1e6; else if ($2=="k/s") v*=1e3; print v }'; done | median)
  bb=$(for f in "$tmp"/B.*; do sed -n "${i}p" "$f" | cut -d'|' -f4 | awk '{ v=$1; if ($2=="M/s") v*=1e6; else if ($2=="k/s") v*=1e3; print v }'; done | median)
  fa=$(awk -v v="$a" -v u="$unit" 'BEGIN { if (u=="ns") printf "%.2f ns", v; else printf "%.2f M/s", v/1e6 }')
  fb=$(awk -v v="$bb" -v u="$unit" 'BEGIN { if (u=="ns") printf "%.2f ns", v; else printf "%.2f M/s", v/1e6 }')
  echo "|$what| $fa | $fb | $(awk -v a="$a" -v b="$bb" 'BEGIN { if (a > 0) printf "%.2f", b/a }') |"
done
