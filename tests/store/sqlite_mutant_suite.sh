#!/bin/sh
# tests/store/sqlite_mutant_suite.sh -- the suite tests/mutants/adapters.sh runs for each
# mutant of adapters/lite_di_lock_sqlite.h (list: tests/store/sqlite_mutants.txt; run with
# `make mutants-sqlite`). Builds the SQLite suites with -I"$MUT_DIR" first (the mutant wins),
# runs them on disk and on /dev/shm, and stops at the first red one. Exit 0 = all green,
# 3 = a build error (never a kill), else the failing suite's code.
set -u
: "${MUT_DIR:?set by the runner}"
for s in sqlite_foreign sqlite_fence sqlite_hostile sqlite_faults sqlite_conformance sqlite_contention; do
    cc -std=c99 -O1 -w -I"$MUT_DIR" -I. "tests/store/$s.c" -lsqlite3 -o "$MUT_DIR/$s" || { echo BUILD-ERROR; exit 3; }
done
for s in sqlite_foreign sqlite_fence sqlite_hostile sqlite_faults sqlite_conformance sqlite_contention; do
    for d in "" /dev/shm; do
        "$MUT_DIR/$s" $d > "$MUT_DIR/$s.out" 2>&1; rc=$?
        if [ $rc != 0 ]; then echo "$s ${d:-disk}: $(tail -n 1 "$MUT_DIR/$s.out")"; exit $rc; fi
    done
done
exit 0
