#!/bin/sh
# with_redis_cluster.sh PROGRAM [ARGS...] -- run a Redis test program in a fresh temp dir.
# The program starts its own redis-server(s) on 127.0.0.1 on free ports (it must stop,
# crash and restart them itself), writing each server's pid to $LDL_TEST_DIR/*.pid.
# This wrapper is the backstop: on any exit (pass, fail, crash, Ctrl-C) it kills every
# server still listed and removes the temp dir, so no server outlives a test run.
set -u
command -v redis-server >/dev/null 2>&1 || {
  echo "with_redis_cluster.sh: redis-server not found (apt-get install redis-server); not skipping" >&2
  echo "0 passed, 1 failed"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ldl-rcluster.XXXXXX") || exit 1
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
