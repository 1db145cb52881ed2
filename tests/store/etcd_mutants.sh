#!/bin/sh
# tests/store/etcd_mutants.sh -- the suite that must kill every mutant of
# tests/mutants/etcd.txt (run by tests/mutants/adapters.sh, inside
# tests/store/with_etcd.sh). MUT_DIR holds the mutated adapters/lite_di_lock_etcd.h:
# every program is compiled with -I"$MUT_DIR" before -I. so the mutant wins.
# No sanitizers and -O0 (speed); the most targeted programs run first and the first
# failure ends the run (exit 1). A program that does not build prints BUILD-ERROR and
# exits 3 (a runner error, never a kill). Each program bounds its own cases (etcdt_case).
# etcd_session (sessions, issue 34) runs last, EVERY case of it (no case argument): the
# session-* mutants are killed there -- "stale" kills session-acquire-stale and
# session-sync-acquire-stale, "retry" (python3 tests/store/etcd_holdproxy.py in front of the
# member) the nonce and clean-up mutants, "maxima" the value's width. Run from the repo root.
set -u
: "${MUT_DIR:?run me through tests/mutants/adapters.sh}"
CC=${CC:-cc}
PROGS="etcd_guards etcd_dns etcd_hostile etcd_session"
if ! $CC -shared -fPIC -O1 -w tests/store/etcd_slowdns.c -ldl -o "$MUT_DIR/etcd_slowdns.so" > "$MUT_DIR/slowdns.build.log" 2>&1; then
  echo "BUILD-ERROR etcd_slowdns.so"; cat "$MUT_DIR/slowdns.build.log"; exit 3
fi
case $MUT_DIR in /*) SLOWDNS=$MUT_DIR/etcd_slowdns.so ;; *) SLOWDNS=$PWD/$MUT_DIR/etcd_slowdns.so ;; esac
for t in $PROGS; do
  if ! $CC -std=c99 -O0 -g -w -I"$MUT_DIR" -I. "tests/store/$t.c" -lcurl -lcjson -o "$MUT_DIR/$t" \
       > "$MUT_DIR/$t.build.log" 2>&1; then
    echo "BUILD-ERROR $t"; cat "$MUT_DIR/$t.build.log"; exit 3
  fi
done
for t in $PROGS; do
  pre=""; [ "$t" = etcd_dns ] && pre=$SLOWDNS
  if ! env ${pre:+LD_PRELOAD=$pre} "$MUT_DIR/$t" > "$MUT_DIR/$t.log" 2>&1; then
    echo "$t: FAILED"; grep -E '^FAIL|^TIMEOUT' "$MUT_DIR/$t.log" | head -n 5; tail -n 1 "$MUT_DIR/$t.log"; exit 1
  fi
  echo "$t: $(tail -n 1 "$MUT_DIR/$t.log")"
done
exit 0
