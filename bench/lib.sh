# lib.sh - shell helpers for the bench scripts (sourced).
# median of the numbers on stdin (one per line)
median() { sort -g | awk '{a[NR]=$1} END { if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }
# a free-looking random TCP port on 127.0.0.1 (servers retry on a clash)
rand_port() { echo $(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 )); }
# rate formatting: 12345.6 -> "12.35 k/s"
krate() { awk -v r="$1" 'BEGIN { if (r >= 1e6) printf "%.2f M/s", r/1e6; else printf "%.2f k/s", r/1e3 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f %%", 100*a/b; else print "-" }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
