#!/bin/sh
# run.sh OUT_DIR HDR_DIR -- the `make bench` driver: prints the machine, the date,
# the command and ONE markdown table (rows 1-6), also saved to OUT_DIR/table.md.
# BENCH_ROWS="1 2 3 4 5 6" picks rows; BENCH_REPS sets the repetitions (default 7).
# Row 6 is callgrind's instruction count of rows 1c and 2g (needs valgrind): the
# noise-free companion of the wall-clock figures. Row 7 is the etcd adapter on a
# throwaway single member (bench/bench_etcd.c; make bench-etcd prints it as text).
set -u
. "$(dirname "$0")/lib.sh"
out=${1:-build/bench}
hdr=${2:-.}
rows=${BENCH_ROWS:-1 2 3 4 5 6 7}
export BENCH_REPS=${BENCH_REPS:-7}
table="$out/table.md"
has() { case " $rows " in *" $1 "*) return 0 ;; esac; return 1; }
{
  echo "machine: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs online, $(uname -sr)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg) (shared machine: ratios of the same run matter, absolute figures are noisy)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command: make bench BN_HDR_DIR=$hdr (BENCH_REPS=$BENCH_REPS, BENCH_ROWS=\"$rows\")"
  echo "header: $hdr/lite_di_lock.h sha1 $(sha1sum "$hdr/lite_di_lock.h" | cut -c1-12), repo $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet -- lite_di_lock.h 2>/dev/null || echo ' (lite_di_lock.h modified in the work tree)')"
  echo "compiler: $(${CC:-cc} --version | head -1), -O2, implementation in its own object"
  echo
  echo "| row | measure | ours | anchor | ratio | target | verdict |"
  echo "|---|---|---|---|---|---|---|"
} | tee "$table"
{
  has 1 && "$out/bench_core" 1
  has 2 && "$out/bench_core" 2
  has 3 && sh bench/redis.sh "$out"
  if has 4; then
    rm -f "$out/row4.md"
    if [ -x "$out/bench_pg" ]; then
      tests/store/with_pg.sh "sh bench/pg.sh $out" >"$out/pg.log" 2>&1
      if [ -s "$out/row4.md" ]; then cat "$out/row4.md"
      else echo "| 4 | PostgreSQL | not run: $(tail -1 "$out/pg.log" | tr '|' ' ') | | | | |"; fi
    else
      echo "| 4 | PostgreSQL | not run: $out/bench_pg not built (libpq-dev?) | | | | |"
    fi
  fi
  if has 5; then "$out/bench_core" 5; sh bench/footprint.sh "$hdr" "$out"; fi
  if has 6; then
    if command -v valgrind >/dev/null 2>&1; then
      n=100000
      poll=$(ir_per_call "$out/bench_core" poll $n "$out"); bare=$(ir_per_call "$out/bench_core" bare $n "$out")
      sync=$(ir_per_call "$out/bench_core" sync $n "$out"); async=$(ir_per_call "$out/bench_core" async $n "$out")
      echo "| 6a | instructions (callgrind), ldl_lock_poll, held, not due, frame-counter clock | $poll | $bare (bare indirect call of the same clock) | $(awk -v a="$poll" -v b="$bare" 'BEGIN { printf "%+.0f instructions", a - b }') | | |"
      if [ -n "$async" ]; then
        echo "| 6b | instructions (callgrind) per acquire+release, MemoryStore 1 key, frame-counter clock: async view vs sync view | $async | $sync (ldl_memstore_store) | $(awk -v a="$async" -v b="$sync" 'BEGIN { printf "sync/async %.1f %% (%+.0f instructions)", 100 * b / a, a - b }') | | |"
      fi
    else
      echo "| 6 | instruction counts | not run: valgrind missing (make bench-deps) | | | | |"
    fi
  fi
  if has 7; then
    if [ -x "$out/bench_etcd" ] && command -v etcd >/dev/null 2>&1; then
      tests/store/with_etcd.sh "$out/bench_etcd" row 2>"$out/etcd.log" | grep '^| 7' || \
        echo "| 7 | etcd | not run: $(tail -1 "$out/etcd.log" | tr '|' ' ') | | | | |"
    else
      echo "| 7 | etcd | not run: $out/bench_etcd not built or etcd missing (libcurl4-openssl-dev, libcjson-dev, etcd-server) | | | | |"
    fi
  fi
} | tee -a "$table"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$table"
