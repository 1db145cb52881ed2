#!/bin/sh
# tests/store/view_mutants.sh -- the suite that must kill every mutant of tests/mutants/view.txt
# (run by tests/mutants/adapters.sh). MUT_DIR holds the mutated adapters/lite_di_lock_view.h:
# view_test is compiled with -I"$MUT_DIR" before -I. so the mutant wins, then run against
# every store (tests/store/view_run.sh starts each server). A build failure prints BUILD-ERROR
# and exits 3 (a runner error, never a kill).
set -u
: "${MUT_DIR:?run me through tests/mutants/adapters.sh}"
CC=${CC:-cc}
PG_INC=$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
if ! $CC -std=c99 -O0 -g -w -I"$MUT_DIR" -I. -I"$PG_INC" tests/store/view_test.c \
     -lhiredis -lpq -lcurl -lcjson -lsqlite3 -o "$MUT_DIR/view_test" > "$MUT_DIR/build.log" 2>&1; then
  echo "BUILD-ERROR view_test"; cat "$MUT_DIR/build.log"; exit 3
fi
VIEW_STORES="memory sqlite redis cluster pg etcd" exec sh tests/store/view_run.sh "$MUT_DIR/view_test"
