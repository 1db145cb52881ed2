#!/bin/sh
# with_etcd.sh PROGRAM [ARGS...] -- run an etcd test program in a fresh temp dir.
# The program starts its own etcd member(s) on 127.0.0.1 on free ports (it stops, freezes
# and restarts them itself: tests/store/etcd_common.h), writing each member's pid to
# $LDL_TEST_DIR/*.pid. This wrapper is the backstop: on any exit (pass, fail, crash,
# Ctrl-C) it kills every member still listed and removes the temp dir.
set -u
command -v etcd >/dev/null 2>&1 || {
  echo "with_etcd.sh: etcd not found (apt-get install etcd-server); not skipping" >&2
  echo "0 passed, 1 failed"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ldl-etcd.XXXXXX") || exit 1
cleanup() {
  for f in "$dir"/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null)
    [ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
LDL_TEST_DIR=$dir "$@"
