#!/bin/sh
# tests/store/view_example_mutants.sh -- the suite that must kill every mutant of
# tests/mutants/view_example.txt (run by tests/mutants/adapters.sh): MUT_DIR holds the
# mutated examples/epoll_leases.c; it is built there (with its one-read-per-pump twin) beside
# view_test, and test-view's example smokes on Redis run against it. A build failure prints
# BUILD-ERROR and exits 3 (a runner error, never a kill).
set -u
: "${MUT_DIR:?run me through tests/mutants/adapters.sh}"
CC=${CC:-cc}
PG_INC=$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
L="-lhiredis -lpq -lcurl -lcjson -lsqlite3"
for t in "view_test tests/store/view_test.c" "epoll_leases $MUT_DIR/examples/epoll_leases.c" \
         "epoll_leases_r1 $MUT_DIR/examples/epoll_leases.c -DLDL_REDIS_PUMP_READS=1"; do
  set -- $t
  out=$1; shift
  if ! $CC -std=c99 -O1 -g -w -I. -I"$PG_INC" "$@" $L -o "$MUT_DIR/$out" > "$MUT_DIR/$out.build.log" 2>&1; then
    echo "BUILD-ERROR $out"; cat "$MUT_DIR/$out.build.log"; exit 3
  fi
done
VIEW_STORES="ex-redis ex-redis-et" exec sh tests/store/view_run.sh "$MUT_DIR/view_test"
