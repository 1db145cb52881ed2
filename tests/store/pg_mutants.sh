#!/bin/sh
# tests/store/pg_mutants.sh -- the suite that must kill every mutant of
# tests/mutants/pg.txt (run by tests/mutants/adapters.sh, inside
# tests/store/with_pg.sh). MUT_DIR holds the mutated adapters/lite_di_lock_pg.h:
# every program is compiled with -I"$MUT_DIR" before -I. so the mutant wins.
# No sanitizers and -O0 (speed); the most targeted programs run first and the
# first failure ends the run (exit 1). A program that does not build prints
# BUILD-ERROR and exits 3 (a runner error, never a kill).
set -u
: "${MUT_DIR:?run me through tests/mutants/adapters.sh}"
CC=${CC:-cc}
PG_INC=$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
PROGS="pg_build pg_grants pg_rebind pg_hostile pg_names pg_conformance pg_async"
for t in $PROGS; do
  if ! $CC -std=c99 -O0 -g -w -I"$MUT_DIR" -I. -I"$PG_INC" "tests/store/$t.c" -lpq -o "$MUT_DIR/$t" \
       > "$MUT_DIR/$t.build.log" 2>&1; then
    echo "BUILD-ERROR $t"; cat "$MUT_DIR/$t.build.log"; exit 3
  fi
done
for t in $PROGS; do
  if ! "$MUT_DIR/$t" > "$MUT_DIR/$t.log" 2>&1; then
    echo "$t: FAILED"; grep '^FAIL' "$MUT_DIR/$t.log" | head -n 5; tail -n 1 "$MUT_DIR/$t.log"; exit 1
  fi
  echo "$t: $(tail -n 1 "$MUT_DIR/$t.log")"
done
exit 0
