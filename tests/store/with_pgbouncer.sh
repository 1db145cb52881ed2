#!/bin/sh
# with_pgbouncer.sh MODE CMD [CMD...] -- run inside tests/store/with_pg.sh: start a
# real pgbouncer (Debian's package) on 127.0.0.1 in front of that PostgreSQL, run
# each CMD against it, stop it; exit non-zero when any CMD failed or it would not
# start.
#
# MODE   pool_mode    default_pool_size  server_round_robin  query_wait_timeout
# tx1    transaction  1                  0                   10
# tx2rr  transaction  2                  1                   10
# session session     4                  0                   10
# session1 session    1                  0                   2   (for the exhausted pool)
#
# The lock role is "ldl_pool": not a superuser, owns schema "pool" (its search_path),
# and gets its timeouts the way a pooler allows: ALTER ROLE .. SET (pgbouncer refuses
# the `options` startup parameter). Each CMD sees:
#   LDL_PG_CONNINFO  the pooler's conninfo as ldl_pool
#   LDL_PG_DIRECT    the server's own conninfo (superuser; for checks)
#   LDL_PGB_MODE     MODE
set -u
mode=${1:?usage: with_pgbouncer.sh tx1|tx2rr|session|session1 CMD...}; shift
: "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
pgb=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$pgb" ] || { echo "with_pgbouncer.sh: no pgbouncer (apt-get install pgbouncer)" >&2; exit 2; }
psql=psql
command -v psql >/dev/null 2>&1 || psql=$(ls /usr/lib/postgresql/*/bin/psql | tail -1)

case "$mode" in
  tx1)      pm=transaction; size=1; rr=0; qwt=10 ;;
  tx2rr)    pm=transaction; size=2; rr=1; qwt=10 ;;
  session)  pm=session;     size=4; rr=0; qwt=10 ;;
  session1) pm=session;     size=1; rr=0; qwt=2 ;;
  *) echo "with_pgbouncer.sh: unknown mode $mode" >&2; exit 2 ;;
esac

direct=$LDL_PG_CONNINFO
# the lock role, its schema and its session settings (idempotent)
"$psql" -X -q -v ON_ERROR_STOP=1 "$direct" >/dev/null <<'SQL' || { echo "with_pgbouncer.sh: role setup failed" >&2; exit 2; }
SET client_min_messages = warning;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ldl_pool') THEN CREATE ROLE ldl_pool LOGIN; END IF;
END $$;
CREATE SCHEMA IF NOT EXISTS pool AUTHORIZATION ldl_pool;
ALTER ROLE ldl_pool SET search_path = pool;
ALTER ROLE ldl_pool SET statement_timeout = '2500ms';
ALTER ROLE ldl_pool SET lock_timeout = '1s';
ALTER ROLE ldl_pool SET idle_in_transaction_session_timeout = '5s';
SQL

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-pgb.XXXXXX") || exit 2
runas=
if [ "$(id -u)" = 0 ]; then   # pgbouncer refuses to run as root
  if id postgres >/dev/null 2>&1; then user=postgres; else user=nobody; fi
  chown "$user" "$tmp"
  if command -v runuser >/dev/null 2>&1; then runas="runuser -u $user --"
  else runas="setpriv --reuid=$user --regid=$(id -g "$user") --clear-groups"; fi
fi
cleanup() {
  if [ -f "$tmp/pgb.pid" ]; then
    pid=$(cat "$tmp/pgb.pid"); kill -TERM "$pid" 2>/dev/null
    i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
    kill -KILL "$pid" 2>/dev/null
  fi
  [ "${LDL_PG_KEEP_LOG:-0}" = 1 ] && [ -f "$tmp/pgb.log" ] && { echo "---- pgbouncer log ----" >&2; cat "$tmp/pgb.log" >&2; }
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

printf '"ldl_pool" ""\n"ldl" ""\n' >"$tmp/users.txt"
started=0
for attempt in 1 2 3 4 5 6; do
  port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ))
  cat >"$tmp/pgb.ini" <<INI
[databases]
postgres = host=127.0.0.1 port=$LDL_PG_PORT dbname=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $tmp/users.txt
pool_mode = $pm
default_pool_size = $size
min_pool_size = 0
max_client_conn = 200
server_round_robin = $rr
query_wait_timeout = $qwt
ignore_startup_parameters = extra_float_digits
logfile = $tmp/pgb.log
pidfile = $tmp/pgb.pid
INI
  [ -n "$runas" ] && chown "$user" "$tmp/pgb.ini" "$tmp/users.txt"
  rm -f "$tmp/pgb.pid"
  (cd "$tmp" && $runas "$pgb" -d -q "$tmp/pgb.ini") >/dev/null 2>&1
  i=0
  while [ $i -lt 50 ]; do
    if "$psql" -X -q -t "host=127.0.0.1 port=$port user=ldl_pool dbname=postgres connect_timeout=2" \
         -c 'SELECT 1' >/dev/null 2>&1; then started=1; break; fi
    sleep 0.1; i=$((i+1))
  done
  [ $started = 1 ] && break
  [ -f "$tmp/pgb.pid" ] && kill -TERM "$(cat "$tmp/pgb.pid")" 2>/dev/null
done
if [ $started != 1 ]; then
  echo "with_pgbouncer.sh: pgbouncer did not start:" >&2; cat "$tmp/pgb.log" >&2 2>/dev/null; exit 2
fi

export LDL_PG_DIRECT="$direct"
export LDL_PG_CONNINFO="host=127.0.0.1 port=$port user=ldl_pool dbname=postgres connect_timeout=3"
export LDL_PGB_MODE=$mode
echo "with_pgbouncer.sh: $("$pgb" --version | head -1) $mode on 127.0.0.1:$port (pool_mode=$pm size=$size round_robin=$rr)"
failed=0
for cmd in "$@"; do
  echo "== [$mode] $cmd"
  sh -c "$cmd" || { echo "with_pgbouncer.sh: FAILED: [$mode] $cmd" >&2; failed=$((failed+1)); }
done
exit $failed
