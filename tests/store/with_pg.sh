#!/bin/sh
# with_pg.sh CMD [CMD...] -- start a throwaway PostgreSQL, run each CMD (one
# shell command line per argument) against it, stop it, exit non-zero when
# any CMD failed or the server could not start.
#
# The server: initdb into a mktemp dir, listens on 127.0.0.1 only, on a free
# random port, unix socket in the temp dir, trust auth for user "ldl". When run
# as root the server runs as the unprivileged "postgres" user (or "nobody").
# It is stopped and the dir removed on exit, also on failure or Ctrl-C.
#
# Each CMD sees:
#   LDL_PG_CONNINFO  conninfo for the server (with connect_timeout)
#   LDL_PG_PORT      the port
#   LDL_PG_CTL       a script: "$LDL_PG_CTL start|stop|restart|crash|status"
#                    (crash = immediate shutdown, WAL replay on next start)
# Env knobs: PG_BIN (dir with initdb/pg_ctl), LDL_PG_KEEP_LOG=1 (print the
# server log at the end).
set -u

pgbin=${PG_BIN:-}
if [ -z "$pgbin" ]; then
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && pgbin=$d   # glob sorts ascending: the last is the newest
  done
fi
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  echo "with_pg.sh: no PostgreSQL server binaries (apt-get install postgresql)" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-pg.XXXXXX") || exit 2
runas=
if [ "$(id -u)" = 0 ]; then
  if id postgres >/dev/null 2>&1; then user=postgres; else user=nobody; fi
  chown "$user" "$tmp"
  if command -v runuser >/dev/null 2>&1; then runas="runuser -u $user --"
  else runas="setpriv --reuid=$user --regid=$(id -g "$user") --clear-groups"; fi
fi

child=
cleanup() {
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; kill -CONT "$child" 2>/dev/null; fi
  if [ -f "$tmp/data/postmaster.pid" ]; then
    (cd "$tmp" && $runas "$pgbin/pg_ctl" -D "$tmp/data" -m immediate -w -t 20 stop) >/dev/null 2>&1
  fi
  if [ "${LDL_PG_KEEP_LOG:-0}" = 1 ] && [ -f "$tmp/log" ]; then
    echo "---- postgres log ----" >&2; cat "$tmp/log" >&2
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE   # a closed stdout (| head) must still stop the server

# the server user may not be able to enter our cwd (a clone under /root): run from $tmp
if ! (cd "$tmp" && $runas "$pgbin/initdb" -D "$tmp/data" -U ldl -A trust -E UTF8 --locale=C \
     --no-sync) >"$tmp/initdb.log" 2>&1; then
  echo "with_pg.sh: initdb failed:" >&2; cat "$tmp/initdb.log" >&2; exit 2
fi

# the control script the tests use to stop / restart the server
cat >"$tmp/ctl" <<CTL
#!/bin/sh
D="$tmp/data"; L="$tmp/log"; cd "$tmp" || exit 2
case "\${1:-}" in
  start)   [ -f "\$D/postmaster.pid" ] && exit 0
           $runas "$pgbin/pg_ctl" -D "\$D" -l "\$L" -w -t 30 start >/dev/null ;;
  stop)    $runas "$pgbin/pg_ctl" -D "\$D" -m fast -w -t 30 stop >/dev/null ;;
  crash)   $runas "$pgbin/pg_ctl" -D "\$D" -m immediate -w -t 30 stop >/dev/null ;;
  restart) $runas "$pgbin/pg_ctl" -D "\$D" -l "\$L" -m fast -w -t 30 restart >/dev/null ;;
  status)  $runas "$pgbin/pg_ctl" -D "\$D" status >/dev/null ;;
  *) echo "usage: \$0 start|stop|crash|restart|status" >&2; exit 2 ;;
esac
CTL
chmod 755 "$tmp/ctl"

# a random free port: postgres refuses a busy one, so try a few
started=0
for attempt in 1 2 3 4 5 6 7 8; do
  port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ))
  cat >"$tmp/data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$tmp'
max_connections = 40
log_min_messages = warning
CONF
  [ -n "$runas" ] && chown "$user" "$tmp/data/postgresql.auto.conf"
  if "$tmp/ctl" start 2>/dev/null; then started=1; break; fi
done
if [ $started != 1 ]; then
  echo "with_pg.sh: postgres did not start:" >&2; cat "$tmp/log" >&2; exit 2
fi

export LDL_PG_CONNINFO="host=127.0.0.1 port=$port user=ldl dbname=postgres connect_timeout=3"
export LDL_PG_PORT=$port
export LDL_PG_CTL="$tmp/ctl"
echo "with_pg.sh: postgres $("$pgbin/postgres" -V | sed "s/^[^0-9]*\([0-9.]*\).*/\1/") on 127.0.0.1:$port ($tmp)"

failed=0
for cmd in "$@"; do
  "$tmp/ctl" start || { echo "with_pg.sh: could not (re)start postgres" >&2; failed=$((failed+1)); continue; }
  echo "== $cmd"
  # in the background + wait, so a signal to this script runs the cleanup at once
  sh -c "$cmd" & child=$!
  wait $child; rc=$?; child=
  [ $rc = 0 ] || { echo "with_pg.sh: FAILED ($rc): $cmd" >&2; failed=$((failed+1)); }
done
[ $failed = 0 ] || echo "with_pg.sh: $failed command(s) failed" >&2
exit $failed
