# lib.sh - shell helpers for the bench scripts (sourced).
# median of the numbers on stdin (one per line)
median() { sort -g | awk '{a[NR]=$1} END { if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
# a free-looking random TCP port on 127.0.0.1 (servers retry on a clash)
rand_port() { echo $(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 )); }
# rate formatting: 12345.6 -> "12.35 k/s"
krate() { awk -v r="$1" 'BEGIN { if (r >= 1e6) printf "%.2f M/s", r/1e6; else printf "%.2f k/s", r/1e3 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f %%", 100*a/b; else print "-" }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
# median over rounds of A_i / B_i * K: paired ratios, so a load change between rounds cancels
# usage: pratio FILE_A FILE_B K  (one number per line, line i = round i)
pratio() { paste "$1" "$2" | awk -v k="$3" 'NF == 2 && $2 > 0 { print $1 / $2 * k }' | median; }
ppct() { awk -v r="$1" 'BEGIN { printf "%.1f %%", 100*r }'; }
# callgrind instructions per call of one `bench_core ir CASE N` loop (only ir_case and its
# callees are counted); prints nothing when that binary's header lacks the case
# usage: ir_per_call BINARY CASE N TMPDIR
ir_per_call() {
  "$1" ir "$2" 1 >/dev/null 2>&1 || return 0
  valgrind --tool=callgrind --callgrind-out-file="$4/cg.out" --collect-atstart=no \
    "--toggle-collect=ir_case*" "$1" ir "$2" "$3" 2>&1 |
    awk -v n="$3" '/Collected :/ { printf "%.1f", $NF / n }'
}
