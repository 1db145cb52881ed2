#!/bin/sh
# with_pg_standby.sh MODE CMD [CMD...] -- start a throwaway PostgreSQL primary and a
# streaming standby on 127.0.0.1, run each CMD (one shell command line per argument)
# against them, stop both, exit non-zero when any CMD failed or the servers could not
# start. (Issue 20: fences across a failover; the chaos campaign may use it too.)
#
# MODE
#   sync    synchronous_standby_names = '*' and synchronous_commit = $LDL_PG_SYNC_COMMIT
#           (default on; remote_apply also makes the standby apply before the ack):
#           a commit is acknowledged only once the standby has it
#   async   synchronous_standby_names = '' (plain streaming replication)
#
# The servers: two nodes n1 and n2, each a data dir under one mktemp dir, each on its
# own free random port (both chosen at start and kept for the whole run, so the
# conninfo below stays valid through every failover). n1 is initdb'd as the primary
# (trust auth, superuser "ldl"); n2 is a pg_basebackup -R of it, with a physical
# replication slot on the primary. When run as root the servers run as the
# unprivileged "postgres" user (or "nobody"), as in with_pg.sh. Every server process
# is stopped by pid on exit (postmaster first, then any child left), also on failure,
# Ctrl-C or a SIGKILLed node; then the dir is removed.
#
# LDL_PG_WAL_LEVEL=logical (environment) starts the primary with wal_level = logical
# (default replica), for a suite that needs a logical walsender.
#
# Each CMD sees:
#   LDL_PG_CONNINFO      host=127.0.0.1,127.0.0.1 port=P1,P2 user=ldl dbname=postgres
#                        target_session_attrs=read-write connect_timeout=3
#                        (libpq tries both and keeps the one that accepts writes)
#   LDL_PG_PORTS         "P1 P2"
#   LDL_PG_STANDBY_MODE  sync | async
#   LDL_PG_SYNC_COMMIT   the servers' synchronous_commit (sync mode: the knob below)
#   LDL_PG_HA            the control command: "$LDL_PG_HA VERB [ARG]" (unquoted: it
#                        may contain a space). VERBs, each answering 0 on success:
#     status             print "primary=P standby=P" (a port, or "-" for none); exit
#                        0 only when the primary is running
#     primary-port       print the current primary's port ("" and 1 when none)
#     standby-port       print the current standby's port ("" and 1 when none)
#     kill-primary       SIGSTOP every process of the primary (postmaster and
#                        children, by pid) so it freezes at one instant, then SIGKILL
#                        them all and wait until they are gone: an unclean crash.
#                        The node then has no role.
#     promote            pg_ctl promote the standby and wait until it accepts writes;
#                        it becomes the primary (the node has no standby until rebuild)
#     rebuild            build a new standby of the current primary in the free node
#                        (its dir wiped, pg_basebackup -R with a fresh slot), start it,
#                        wait until it streams (sync: until it is the sync standby)
#     failover           kill-primary + promote + rebuild
#     pause-link         SIGSTOP the primary's walsender(s): the standby stops
#                        receiving WAL (sync mode: commits then wait)
#     resume-link        SIGCONT them
#     stop-standby       stop the standby (fast); start-standby starts it again
#     wait-sync          wait until the primary has a streaming standby whose
#                        sync_state is sync (or quorum)
#     sql-primary SQL    run SQL on the primary as "ldl" (psql -At), print the rows
#     sql-standby SQL    the same on the standby
#     ensure             make sure there is a primary and a streaming standby
#                        (promote / rebuild as needed); run before every CMD
#     crash | stop | start | restart   the primary alone, no failover, as with_pg.sh's
#                        LDL_PG_CTL does (crash = immediate shutdown, WAL replay at the
#                        next start; the standby reconnects by itself)
#     running            exit 0 when the primary is running, print nothing
#   LDL_PG_CTL           the same command: with_pg.sh's start|stop|crash|restart|status
#                        work on the current primary, so a suite written for with_pg.sh
#                        can run here (pg_faults and pg_conformance pass unchanged in
#                        both modes)
# Env knobs: PG_BIN (dir with initdb/pg_ctl/pg_basebackup), LDL_PG_SYNC_COMMIT (sync
# mode's synchronous_commit), LDL_PG_KEEP_LOG=1 (print the server logs at the end).
set -u

if [ "${1:-}" = --ctl ]; then ctl_mode=1; tmp=${2:?}; shift 2; else ctl_mode=0; fi

# ---------------------------------------------------------------- common
pgbin=${PG_BIN:-}
if [ -z "$pgbin" ]; then
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && pgbin=$d   # glob sorts ascending: the last is the newest
  done
fi
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ] || [ ! -x "$pgbin/pg_basebackup" ]; then
  echo "with_pg_standby.sh: no PostgreSQL server binaries (apt-get install postgresql)" >&2
  exit 2
fi

runas=
user=
if [ "$(id -u)" = 0 ]; then
  if id postgres >/dev/null 2>&1; then user=postgres; else user=nobody; fi
  if command -v runuser >/dev/null 2>&1; then runas="runuser -u $user --"
  else runas="setpriv --reuid=$user --regid=$(id -g "$user") --clear-groups"; fi
fi

say() { echo "with_pg_standby.sh: $*" >&2; }
port_of() { cat "$tmp/$1/port"; }
role() { sed -n "s/^$1=//p" "$tmp/state" 2>/dev/null; }          # primary|standby -> n1|n2|""
set_roles() { printf 'primary=%s\nstandby=%s\n' "$1" "$2" >"$tmp/state"; }
other() { [ "$1" = n1 ] && echo n2 || echo n1; }
pm_pid() { [ -f "$tmp/$1/data/postmaster.pid" ] && head -1 "$tmp/$1/data/postmaster.pid"; }
alive() { local pm; pm=$(pm_pid "$1") && [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; }
psql_at() {  # node sql
  "$pgbin/psql" -X -q -At -v ON_ERROR_STOP=1 \
    "host=127.0.0.1 port=$(port_of "$1") user=ldl dbname=postgres connect_timeout=5" -c "$2"
}
pgctl() { (cd "$tmp" && $runas "$pgbin/pg_ctl" "$@"); }

# every process of a node: the postmaster and its children (by parent pid)
node_pids() {
  local pm
  pm=$(pm_pid "$1") || return 0
  [ -n "$pm" ] || return 0
  kill -0 "$pm" 2>/dev/null && echo "$pm"
  ps -o pid= --ppid "$pm" 2>/dev/null
}

# stop a node by pid: SIGQUIT (immediate shutdown) to the postmaster, then SIGKILL to
# whatever is left (also children orphaned by a SIGKILLed postmaster)
stop_node() {
  local n p pids q i
  n=$1; p=$(pm_pid "$n") || return 0; [ -n "$p" ] || return 0
  pids=$(node_pids "$n")
  kill -QUIT "$p" 2>/dev/null
  i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  for q in $p $pids; do kill -KILL "$q" 2>/dev/null; done
  rm -f "$tmp/$n/data/postmaster.pid"
}

start_node() {  # node
  pgctl -D "$tmp/$1/data" -l "$tmp/$1/log" -w -t 60 start >/dev/null
}

wait_streaming() {  # primary node; sync: wait for sync_state sync/quorum
  local want i c
  want="state = 'streaming'"
  [ "$(cat "$tmp/mode")" = sync ] && want="$want AND sync_state IN ('sync','quorum')"
  i=0
  while [ $i -lt 600 ]; do
    c=$(psql_at "$1" "SELECT count(*) FROM pg_stat_replication WHERE $want" 2>/dev/null)
    [ "${c:-0}" -ge 1 ] 2>/dev/null && return 0
    sleep 0.1; i=$((i+1))
  done
  say "no streaming standby on $1 after 60 s"; return 1
}

# a new standby in node $1 from the primary node $2
build_standby() {
  local s p slot
  s=$1; p=$2; slot=ldl_$s
  stop_node "$s"
  rm -rf "$tmp/$s/data"
  psql_at "$p" "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null 2>&1
  if ! (cd "$tmp" && $runas "$pgbin/pg_basebackup" -h 127.0.0.1 -p "$(port_of "$p")" -U ldl \
        -D "$tmp/$s/data" -R -X stream -C -S "$slot" --no-sync -c fast) >"$tmp/$s/basebackup.log" 2>&1; then
    say "pg_basebackup failed:"; cat "$tmp/$s/basebackup.log" >&2; return 1
  fi
  # the copy carries the primary's postgresql.auto.conf (its port): the last line wins
  echo "port = $(port_of "$s")" >>"$tmp/$s/data/postgresql.auto.conf"
  rm -f "$tmp/$s/data/postmaster.pid" "$tmp/$s/data/postmaster.opts"
  start_node "$s" || { say "standby $s did not start:"; tail -20 "$tmp/$s/log" >&2; return 1; }
  wait_streaming "$p"
}

kill_primary() {
  local p pids q i
  p=$(role primary); [ -n "$p" ] || { say "kill-primary: no primary"; return 1; }
  pids=$(node_pids "$p")
  for q in $pids; do kill -STOP "$q" 2>/dev/null; done   # one instant for all of them
  for q in $pids; do kill -KILL "$q" 2>/dev/null; done
  for q in $pids; do
    i=0; while kill -0 "$q" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
  done
  stop_node "$p"            # anything forked between the ps and the kill
  set_roles "" "$(role standby)"
}

promote() {
  local s i
  s=$(role standby); [ -n "$s" ] || { say "promote: no standby"; return 1; }
  alive "$s" || { say "promote: standby $s is not running"; return 1; }
  pgctl -D "$tmp/$s/data" -w -t 60 promote >/dev/null || { say "promote failed"; return 1; }
  i=0
  while [ "$(psql_at "$s" 'SELECT pg_is_in_recovery()' 2>/dev/null)" != f ]; do
    i=$((i+1)); [ $i -lt 600 ] || { say "promoted $s still in recovery"; return 1; }
    sleep 0.1
  done
  set_roles "$s" ""
}

rebuild() {
  local p s
  p=$(role primary); [ -n "$p" ] || { say "rebuild: no primary"; return 1; }
  s=$(other "$p")
  build_standby "$s" "$p" || return 1
  set_roles "$p" "$s"
}

walsenders() {  # pids of the primary's walsenders
  local p
  p=$(role primary); [ -n "$p" ] || return 1
  psql_at "$p" "SELECT pid FROM pg_stat_replication"
}

ensure() {
  local p s q
  p=$(role primary); s=$(role standby)
  if [ -n "$p" ] && ! alive "$p"; then       # stopped or crashed in place: start it again
    start_node "$p" >/dev/null 2>&1 || { stop_node "$p"; p=; set_roles "" "$s"; }
  fi
  if [ -n "$s" ] && ! alive "$s"; then
    start_node "$s" >/dev/null 2>&1 || { stop_node "$s"; s=; set_roles "$p" ""; }
  fi
  if [ -z "$p" ]; then promote || return 1; fi
  s=$(role standby)
  if [ -z "$s" ]; then rebuild || return 1; fi
  p=$(role primary)
  for q in $(walsenders 2>/dev/null); do kill -CONT "$q" 2>/dev/null; done
  wait_streaming "$p"
}

ctl() {
  local verb p s w q
  verb=${1:-}; [ $# -gt 0 ] && shift
  case "$verb" in
    status)       p=$(role primary); s=$(role standby)
                  echo "primary=$([ -n "$p" ] && port_of "$p" || echo -)" \
                       "standby=$([ -n "$s" ] && port_of "$s" || echo -)"
                  [ -n "$p" ] && alive "$p" ;;
    primary-port) p=$(role primary); [ -n "$p" ] && port_of "$p" ;;
    standby-port) s=$(role standby); [ -n "$s" ] && port_of "$s" ;;
    kill-primary) kill_primary ;;
    promote)      promote ;;
    rebuild)      rebuild ;;
    failover)     kill_primary && promote && rebuild ;;
    pause-link)   w=$(walsenders) && [ -n "$w" ] || { say "pause-link: no walsender"; return 1; }
                  for q in $w; do kill -STOP "$q"; done ;;
    resume-link)  for q in $(walsenders); do kill -CONT "$q"; done ;;
    stop-standby) s=$(role standby); [ -n "$s" ] || return 1
                  pgctl -D "$tmp/$s/data" -m fast -w -t 60 stop >/dev/null ;;
    start-standby) s=$(role standby); [ -n "$s" ] || return 1
                  alive "$s" || start_node "$s" ;;
    wait-sync)    p=$(role primary); [ -n "$p" ] && wait_streaming "$p" ;;
    sql-primary)  p=$(role primary); [ -n "$p" ] && psql_at "$p" "${1:?SQL}" ;;
    sql-standby)  s=$(role standby); [ -n "$s" ] && psql_at "$s" "${1:?SQL}" ;;
    ensure)       ensure ;;
    crash)        p=$(role primary); [ -n "$p" ] || return 1
                  pgctl -D "$tmp/$p/data" -m immediate -w -t 60 stop >/dev/null ;;
    stop)         p=$(role primary); [ -n "$p" ] || return 1
                  pgctl -D "$tmp/$p/data" -m fast -w -t 60 stop >/dev/null ;;
    start)        p=$(role primary); [ -n "$p" ] || return 1
                  alive "$p" || start_node "$p" ;;
    restart)      p=$(role primary); [ -n "$p" ] || return 1
                  pgctl -D "$tmp/$p/data" -l "$tmp/$p/log" -m fast -w -t 60 restart >/dev/null ;;
    running)      p=$(role primary); [ -n "$p" ] && alive "$p" ;;
    *) say "unknown verb '$verb' (see the top of tests/store/with_pg_standby.sh)"; return 2 ;;
  esac
}

if [ $ctl_mode = 1 ]; then ctl "$@"; exit $?; fi

# ---------------------------------------------------------------- the run
mode=${1:-}; [ $# -gt 0 ] && shift
case "$mode" in
  sync|async) ;;
  *) say "usage: with_pg_standby.sh sync|async CMD [CMD...]"; exit 2 ;;
esac
synccommit=${LDL_PG_SYNC_COMMIT:-on}
case "$synccommit" in
  on|remote_apply|remote_write|local|off) ;;
  *) say "LDL_PG_SYNC_COMMIT must be on, remote_apply, remote_write, local or off"; exit 2 ;;
esac

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-pgha.XXXXXX") || exit 2
mkdir "$tmp/n1" "$tmp/n2"
echo "$mode" >"$tmp/mode"
[ -n "$user" ] && chown -R "$user" "$tmp"

child=
cleanup() {
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; kill -CONT "$child" 2>/dev/null; fi
  for n in n1 n2; do stop_node "$n"; done
  if [ "${LDL_PG_KEEP_LOG:-0}" = 1 ]; then
    for n in n1 n2; do
      [ -f "$tmp/$n/log" ] && { echo "---- postgres log $n ----" >&2; cat "$tmp/$n/log" >&2; }
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE

# a random port nobody listens on (/proc/net/tcp); postgres refuses a busy one anyway
pick_port() {
  while :; do
    pp=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ))
    hex=$(printf '%04X' "$pp")
    if [ "$pp" != "${1:-}" ] && ! grep -qi ":$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      echo "$pp"; return
    fi
  done
}

if ! (cd "$tmp" && $runas "$pgbin/initdb" -D "$tmp/n1/data" -U ldl -A trust -E UTF8 --locale=C \
     --no-sync) >"$tmp/initdb.log" 2>&1; then
  say "initdb failed:"; cat "$tmp/initdb.log" >&2; exit 2
fi
if [ "$mode" = sync ]; then ssn="'*'"; else ssn="''"; fi

started=0
for attempt in 1 2 3 4 5 6 7 8; do
  p1=$(pick_port); p2=$(pick_port "$p1")
  echo "$p1" >"$tmp/n1/port"; echo "$p2" >"$tmp/n2/port"
  cat >"$tmp/n1/data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $p1
unix_socket_directories = '$tmp'
max_connections = 60
log_min_messages = warning
wal_level = ${LDL_PG_WAL_LEVEL:-replica}
max_wal_senders = 6
max_replication_slots = 6
hot_standby = on
wal_receiver_status_interval = 1s
synchronous_standby_names = $ssn
synchronous_commit = $synccommit
CONF
  [ -n "$user" ] && chown -R "$user" "$tmp/n1" "$tmp/n2"
  if start_node n1 2>/dev/null; then started=1; break; fi
done
if [ $started != 1 ]; then say "primary did not start:"; cat "$tmp/n1/log" >&2; exit 2; fi
set_roles n1 ""
if ! build_standby n2 n1; then say "standby did not come up"; tail -30 "$tmp/n2/log" >&2 2>/dev/null; exit 2; fi
set_roles n1 n2

cat >"$tmp/ha" <<HA
#!/bin/sh
exec /bin/sh "$self" --ctl "$tmp" "\$@"
HA
chmod 755 "$tmp/ha"

export LDL_PG_CONNINFO="host=127.0.0.1,127.0.0.1 port=$p1,$p2 user=ldl dbname=postgres target_session_attrs=read-write connect_timeout=3"
export LDL_PG_PORTS="$p1 $p2"
export LDL_PG_STANDBY_MODE="$mode"
export LDL_PG_SYNC_COMMIT="$synccommit"
export LDL_PG_HA="$tmp/ha"
export LDL_PG_CTL="$tmp/ha"
echo "with_pg_standby.sh: postgres $("$pgbin/postgres" -V | sed "s/^[^0-9]*\([0-9.]*\).*/\1/"), $mode ($synccommit), primary 127.0.0.1:$p1, standby 127.0.0.1:$p2 ($tmp)"

failed=0
for cmd in "$@"; do
  "$tmp/ha" ensure || { say "could not restore a primary and a standby"; failed=$((failed+1)); continue; }
  echo "== $cmd"
  sh -c "$cmd" & child=$!
  wait $child; rc=$?; child=
  [ $rc = 0 ] || { say "FAILED ($rc): $cmd"; failed=$((failed+1)); }
done
[ $failed = 0 ] || say "$failed command(s) failed"
exit $failed
