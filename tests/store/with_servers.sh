#!/bin/sh
# with_servers.sh COMMAND PACKAGE TAG PROGRAM [ARGS...] -- run a test PROGRAM in a fresh temp
# dir ($LDL_TEST_DIR, named ldl-TAG.XXXXXX). The program starts its own servers (COMMAND, from
# the Debian PACKAGE) on 127.0.0.1 on free ports -- it stops, freezes, crashes and restarts
# them itself -- writing each server's pid to $LDL_TEST_DIR/*.pid. This wrapper is the
# backstop: on any exit (pass, fail, crash, Ctrl-C) it resumes and kills every server still
# listed and removes the temp dir, so no server outlives a test run. A missing COMMAND fails
# the run (never a skip). with_redis.sh, with_redis_cluster.sh and with_etcd.sh call it.
set -u
[ $# -ge 4 ] || { echo "usage: with_servers.sh COMMAND PACKAGE TAG PROGRAM [ARGS...]" >&2; exit 64; }
server=$1; package=$2; tag=$3; shift 3
command -v "$server" >/dev/null 2>&1 || {
  echo "with_$tag.sh: $server not found (apt-get install $package); not skipping" >&2
  echo "0 passed, 1 failed"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ldl-$tag.XXXXXX") || exit 1
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
