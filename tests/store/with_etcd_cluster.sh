#!/bin/sh
# with_etcd_cluster.sh [--netns] CMD [ARGS...] -- run CMD against a throwaway 3-member etcd cluster.
#
# The cluster: three etcd processes, each with its own client and peer address and its own
# data dir under one mktemp dir; fsync stays on (the WAL survival case restarts members on
# their old dirs). The wrapper waits until every member answers a linearizable health
# check and a leader is elected, runs CMD, and on any exit (pass, fail, crash, Ctrl-C)
# kills every member by the pid in its pid file and removes the dir.
#
# Plain mode: every member on 127.0.0.1, client and peer ports random and free.
# --netns: a real network. Network namespaces named ldl<pid>-<random>-{sw,m1,m2,m3,c}
# (created here, deleted on every exit path): the switch namespace holds two bridges, one
# for the peer network (10.199.1.0/24) and one for the client network (10.199.2.0/24);
# member i has a veth on each (10.199.1.1i and 10.199.2.1i, ports 2380/2379), the client
# namespace one veth on the client bridge (10.199.2.100). CMD runs inside the client
# namespace. `partition i` pulls member i's peer cable (its veth on the peer bridge goes
# down): member i is cut off from the other members while clients still reach it. If this
# machine refuses network namespaces the wrapper says so and FAILS (no silent skip).
#
# CMD sees:
#   LDL_ETCD_ENDPOINTS        the three client URLs, comma-separated
#   LDL_ETCD_N                3
#   LDL_ETCD_ENDPOINT_<i>     member i's client URL (i = 1..3)
#   LDL_ETCD_CLIENT_PORT_<i>, LDL_ETCD_PEER_PORT_<i>, LDL_ETCD_PID_<i> (the pid at start)
#   LDL_ETCD_DIR              the temp dir: m<i>.pid holds member i's CURRENT pid, m<i>.log its log
#   LDL_ETCD_NETNS            1 under --netns, else 0
#   LDL_ETCD_CTL              a control script, "$LDL_ETCD_CTL VERB [i]":
#       start i      launch member i on its old data dir and ports (returns at once)
#       kill i       SIGKILL, then wait until the process is gone
#       stop i       SIGTERM (clean stop), wait until gone (SIGKILL after 15 s)
#       pause i      SIGSTOP            resume i   SIGCONT
#       restart i    kill i + start i
#       pid i        print member i's pid (exit 1 when it is not running)
#       leader       print the index of the member the reachable members name as leader
#                    (exit 1 when none, or they disagree)
#       wait-leader [s]   wait up to s seconds (default 30) for a leader, print its index
#       wait-healthy [s]  wait up to s seconds (default 60) until every running member
#                         answers a linearizable health check
#       partition i / heal i   (--netns only) cut member i off from the other members / reconnect
#       status       one line per member: index, pid or "down", client URL
# Env knobs: LDL_ETCD_KEEP_LOG=1 prints the member logs at the end;
#            LDL_ETCD_ELECTION_MS (default 1000), LDL_ETCD_HEARTBEAT_MS (default 100).
set -u

if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
  echo "with_etcd_cluster.sh: etcd/etcdctl not found (apt-get install etcd-server etcd-client); not skipping" >&2
  echo "0 passed, 1 failed"; exit 1
fi
netns=0
if [ "${1:-}" = --netns ]; then netns=1; shift; fi
[ $# -ge 1 ] || { echo "usage: with_etcd_cluster.sh [--netns] CMD [ARGS...]" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/ldl-etcdc.XXXXXX") || exit 2
N=3
child=
cleanup() {
  # the test command first (a signal to this wrapper reaches the trap while it waits)
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; sleep 0.2; kill -9 "$child" 2>/dev/null; fi
  for f in "$dir"/m*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null)
    if [ -n "$pid" ]; then kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; fi
  done
  # the namespaces this run created (their veths and bridges go with them)
  if [ -f "$dir/netns.list" ]; then
    sleep 0.2   # a killed member may still hold its namespace for a moment
    while read -r ns; do
      [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
    done <"$dir/netns.list"
  fi
  if [ "${LDL_ETCD_KEEP_LOG:-0}" = 1 ]; then
    for f in "$dir"/m*.log; do [ -f "$f" ] && { echo "---- $f ----" >&2; cat "$f" >&2; }; done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE

# a port nobody listens on or is connected from (IPv4 and IPv6 tables), not picked before,
# below the kernel's ephemeral range (an outgoing connection cannot take it between the pick
# and the member's bind; a collision with another test's pick is caught by the start check)
used_ports() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk 'NR>1 { split($2, a, ":"); print a[2] }'
}
picked=" "
pick_port() {
  while :; do
    lo=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    [ -n "$lo" ] && [ "$lo" -gt 12000 ] || lo=32768
    p=$(( 10000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % (lo - 10000) ))
    hex=$(printf '%04X' "$p")
    case "$picked" in *" $p "*) continue ;; esac
    if used_ports | grep -qx "$hex"; then continue; fi
    picked="$picked$p "
    echo "$p"; return 0
  done
}

# the control script: everything it needs is baked in (the test may call it from anywhere)
write_ctl() {
  cluster=
  i=1
  while [ $i -le $N ]; do
    eval "pp=\$PEER_$i; ph=\$PHOST_$i"
    cluster="${cluster:+$cluster,}m$i=http://$ph:$pp"
    i=$((i + 1))
  done
  {
    echo '#!/bin/sh'
    echo "# generated by with_etcd_cluster.sh for $dir"
    echo "D='$dir'; N=$N; CLUSTER='$cluster'; TOKEN='ldl-$(basename "$dir")'"
    echo "EL=${LDL_ETCD_ELECTION_MS:-1000}; HB=${LDL_ETCD_HEARTBEAT_MS:-100}"
    echo "SW='$SW'; CX='$CX'"
    i=1
    while [ $i -le $N ]; do
      eval "echo \"CP_$i=\$CLIENT_$i; PP_$i=\$PEER_$i; CH_$i=\$CHOST_$i; PH_$i=\$PHOST_$i; MX_$i='\$MEXEC_$i'\""
      i=$((i + 1))
    done
    cat <<'CTL'
set -u
verb=${1:-}; i=${2:-}
need_i() {
  case "$i" in ''|*[!0-9]*) echo "ctl: $verb needs a member index 1..$N" >&2; exit 2 ;; esac
  [ "$i" -ge 1 ] && [ "$i" -le "$N" ] || { echo "ctl: no member $i" >&2; exit 2; }
}
# a pid is alive when it exists and is not a zombie; a killed Go process's main thread may
# read Z while its other threads still exit holding the sockets: alive until they are gone
alive() {
  [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || return 1
  st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
  [ -n "$st" ] || return 1
  [ "$st" != Z ] && return 0
  [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -gt 1 ]
}
curpid() { p=$(cat "$D/m$1.pid" 2>/dev/null) || return 1; alive "$p" && echo "$p"; }
ep() { eval "echo http://\$CH_$1:\$CP_$1"; }
all_eps() { e=; k=1; while [ $k -le $N ]; do e="${e:+$e,}$(ep $k)"; k=$((k + 1)); done; echo "$e"; }
wait_gone() {  # pid, seconds
  t=0
  while alive "$1"; do
    t=$((t + 1)); [ $t -gt $(($2 * 20)) ] && return 1; sleep 0.05
  done
  return 0
}
launch() {
  eval "cp=\$CP_$1; pp=\$PP_$1; ch=\$CH_$1; ph=\$PH_$1; mx=\$MX_$1"
  state=new; [ -d "$D/m$1.data/member" ] && state=existing
  # setsid: the member is in its own process group (a Ctrl-C meant for the test does not
  # reach it; the pid file is how every path stops it). $mx: "ip netns exec NS" under
  # --netns (it execs, so $! is etcd's own pid), else empty.
  $mx setsid etcd --name "m$1" --data-dir "$D/m$1.data" \
    --listen-client-urls "http://$ch:$cp" --advertise-client-urls "http://$ch:$cp" \
    --listen-peer-urls "http://$ph:$pp" --initial-advertise-peer-urls "http://$ph:$pp" \
    --initial-cluster "$CLUSTER" --initial-cluster-state "$state" --initial-cluster-token "$TOKEN" \
    --heartbeat-interval "$HB" --election-timeout "$EL" --log-level warn \
    </dev/null >>"$D/m$1.log" 2>&1 &
  echo $! >"$D/m$1.pid"
}
# the member id and the leader id member k reports, "MEMBER LEADER", or nothing
idpair() {
  ETCDCTL_API=3 $CX etcdctl --endpoints "$(ep "$1")" --dial-timeout 1s --command-timeout 2s \
    endpoint status -w fields 2>/dev/null |
    awk -F' : ' '/"MemberID"/ { m = $2 } /"Leader"/ { l = $2 } END { if (m != "" && l != "") print m, l }'
}
leader() {
  ids=; lead=
  k=1
  while [ $k -le $N ]; do
    if curpid $k >/dev/null; then
      pr=$(idpair $k)
      if [ -n "$pr" ]; then
        set -- $pr
        eval "ID_$k=$1"
        if [ "$2" != 0 ]; then
          if [ -z "$lead" ]; then lead=$2; elif [ "$lead" != "$2" ]; then lead=split; fi
        fi
      fi
    fi
    k=$((k + 1))
  done
  [ -n "$lead" ] && [ "$lead" != split ] || return 1
  k=1
  while [ $k -le $N ]; do
    eval "mid=\${ID_$k:-}"
    [ "$mid" = "$lead" ] && { echo $k; return 0; }
    k=$((k + 1))
  done
  return 1
}
case "$verb" in
  start)   need_i; curpid "$i" >/dev/null && exit 0
           # a member that cannot bind its ports dies at once: a port another test took, or
           # (restart) sockets of the killed process the kernel has not released yet: retry
           # for up to ~8 s, then say so
           n=0
           while :; do
             launch "$i"; sleep 0.3
             curpid "$i" >/dev/null && exit 0
             n=$((n + 1))
             [ $n -ge 10 ] && { echo "ctl: member $i died at start:" >&2; tail -n 3 "$D/m$i.log" >&2; exit 1; }
             sleep 0.5
           done ;;
  kill)    need_i; p=$(curpid "$i") || exit 0
           kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; wait_gone "$p" 30 ;;
  stop)    need_i; p=$(curpid "$i") || exit 0
           kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null
           wait_gone "$p" 15 || { kill -9 "$p" 2>/dev/null; wait_gone "$p" 30; } ;;
  pause)   need_i; p=$(curpid "$i") || { echo "ctl: member $i is not running" >&2; exit 1; }
           kill -STOP "$p" ;;
  resume)  need_i; p=$(curpid "$i") || { echo "ctl: member $i is not running" >&2; exit 1; }
           kill -CONT "$p" ;;
  restart) need_i; "$0" kill "$i" && "$0" start "$i" ;;
  pid)     need_i; curpid "$i" ;;
  leader)  leader ;;
  wait-leader)
           s=${2:-30}; t=0
           while [ $t -lt $((s * 4)) ]; do leader && exit 0; sleep 0.25; t=$((t + 1)); done
           exit 1 ;;
  wait-healthy)
           s=${2:-60}; t=0
           while [ $t -lt $((s * 4)) ]; do
             eps=; k=1
             while [ $k -le $N ]; do curpid $k >/dev/null && eps="${eps:+$eps,}$(ep $k)"; k=$((k + 1)); done
             [ -n "$eps" ] && ETCDCTL_API=3 $CX etcdctl --endpoints "$eps" --dial-timeout 1s \
               --command-timeout 2s endpoint health >/dev/null 2>&1 && exit 0
             sleep 0.25; t=$((t + 1))
           done
           exit 1 ;;
  partition|heal)
           need_i; [ -n "$SW" ] || { echo "ctl: $verb needs --netns" >&2; exit 2; }
           if [ "$verb" = partition ]; then ip -n "$SW" link set "p$i" down
           else ip -n "$SW" link set "p$i" up; fi ;;
  status)  k=1
           while [ $k -le $N ]; do
             p=$(curpid $k) || p=down; echo "m$k $p $(ep $k)"; k=$((k + 1))
           done ;;
  *) echo "usage: $0 start|kill|stop|pause|resume|restart|pid|partition|heal i | leader | wait-leader [s] | wait-healthy [s] | status" >&2
     exit 2 ;;
esac
CTL
  } >"$dir/ctl"
  chmod 755 "$dir/ctl"
}

# --netns: the namespaces, bridges and veths (every name this run creates is listed in
# $dir/netns.list before it is created, so the trap removes it whatever happens next)
SW=; CX=
i=1
while [ $i -le $N ]; do eval "MEXEC_$i=; CHOST_$i=127.0.0.1; PHOST_$i=127.0.0.1"; i=$((i + 1)); done
nsfail() {
  echo "with_etcd_cluster.sh --netns: this machine refuses network namespaces ($1):" >&2
  echo "  the partition test cannot run here and FAILS (it does not skip)." >&2
  [ -s "$dir/ns.err" ] && sed 's/^/  /' "$dir/ns.err" >&2
  echo "0 passed, 1 failed"; exit 1
}
nsrun() {  # what, command...: run a set-up step, fail loudly when the kernel refuses it
  what=$1; shift
  "$@" 2>"$dir/ns.err" || nsfail "$what"
}
if [ $netns = 1 ]; then
  [ "$(id -u)" = 0 ] || nsfail "not root: ip netns needs CAP_SYS_ADMIN"
  command -v ip >/dev/null 2>&1 || nsfail "no ip command (apt-get install iproute2)"
  tag="ldl$$-$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')"
  SW="$tag-sw"; CNS="$tag-c"; CX="ip netns exec $CNS"
  for ns in "$SW" "$CNS"; do
    echo "$ns" >>"$dir/netns.list"
    nsrun "ip netns add $ns" ip netns add "$ns"
    nsrun "loopback up in $ns" ip -n "$ns" link set lo up
  done
  for br in brp brc; do
    nsrun "bridge $br" ip -n "$SW" link add "$br" type bridge
    nsrun "bridge $br up" ip -n "$SW" link set "$br" up
  done
  i=1
  while [ $i -le $N ]; do
    ns="$tag-m$i"
    echo "$ns" >>"$dir/netns.list"
    nsrun "ip netns add $ns" ip netns add "$ns"
    nsrun "loopback up in $ns" ip -n "$ns" link set lo up
    # peer cable p$i (switch side) <-> peth (member side); client cable c$i <-> ceth
    nsrun "veth p$i" ip -n "$SW" link add "p$i" type veth peer name peth netns "$ns"
    nsrun "veth c$i" ip -n "$SW" link add "c$i" type veth peer name ceth netns "$ns"
    for v in "p$i:brp" "c$i:brc"; do
      nsrun "attach ${v%%:*}" ip -n "$SW" link set "${v%%:*}" master "${v#*:}"
      nsrun "${v%%:*} up" ip -n "$SW" link set "${v%%:*}" up
    done
    nsrun "address on peth" ip -n "$ns" addr add "10.199.1.1$i/24" dev peth
    nsrun "address on ceth" ip -n "$ns" addr add "10.199.2.1$i/24" dev ceth
    nsrun "peth up" ip -n "$ns" link set peth up
    nsrun "ceth up" ip -n "$ns" link set ceth up
    eval "MEXEC_$i='ip netns exec $ns'; CHOST_$i=10.199.2.1$i; PHOST_$i=10.199.1.1$i"
    i=$((i + 1))
  done
  nsrun "veth cc" ip -n "$SW" link add cc type veth peer name ceth netns "$CNS"
  nsrun "attach cc" ip -n "$SW" link set cc master brc
  nsrun "cc up" ip -n "$SW" link set cc up
  nsrun "address on the client" ip -n "$CNS" addr add 10.199.2.100/24 dev ceth
  nsrun "client ceth up" ip -n "$CNS" link set ceth up
  echo "with_etcd_cluster.sh --netns: namespaces $tag-{sw,c,m1..m$N} (peer net 10.199.1.0/24, client net 10.199.2.0/24)"
fi

started=0
for attempt in 1 2 3; do
  i=1
  while [ $i -le $N ]; do
    if [ $netns = 1 ]; then eval "CLIENT_$i=2379; PEER_$i=2380"
    else eval "CLIENT_$i=$(pick_port); PEER_$i=$(pick_port)"; fi
    i=$((i + 1))
  done
  write_ctl
  rm -rf "$dir"/m*.data
  i=1
  while [ $i -le $N ]; do "$dir/ctl" start $i || break; i=$((i + 1)); done
  if [ $i -le $N ]; then :; elif "$dir/ctl" wait-healthy 60 && "$dir/ctl" wait-leader 30 >/dev/null &&
     "$dir/ctl" pid 1 >/dev/null && "$dir/ctl" pid 2 >/dev/null && "$dir/ctl" pid 3 >/dev/null; then
    started=1; break
  fi
  echo "with_etcd_cluster.sh: cluster did not come up (attempt $attempt); last log lines:" >&2
  for f in "$dir"/m*.log; do tail -n 5 "$f" >&2; done
  i=1
  while [ $i -le $N ]; do "$dir/ctl" kill $i; i=$((i + 1)); done
done
if [ $started != 1 ]; then echo "with_etcd_cluster.sh: no cluster; failing" >&2; echo "0 passed, 1 failed"; exit 1; fi

eps=
i=1
while [ $i -le $N ]; do
  eval "c=\$CLIENT_$i; p=\$PEER_$i; h=\$CHOST_$i"
  export "LDL_ETCD_ENDPOINT_$i=http://$h:$c" "LDL_ETCD_CLIENT_PORT_$i=$c" "LDL_ETCD_PEER_PORT_$i=$p"
  export "LDL_ETCD_PID_$i=$(cat "$dir/m$i.pid")"
  eps="${eps:+$eps,}http://$h:$c"
  i=$((i + 1))
done
export LDL_ETCD_ENDPOINTS="$eps" LDL_ETCD_N=$N LDL_ETCD_DIR="$dir" LDL_ETCD_CTL="$dir/ctl"
export LDL_ETCD_NETNS=$netns
# in the background and waited for: a shell runs its traps only between commands, and `wait`
# is interrupted by a signal where a foreground command is not
$CX "$@" &
child=$!
wait "$child"
rc=$?
child=
exit $rc
