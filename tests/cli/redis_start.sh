# tests/cli/redis_start.sh -- sourced by ldl_run_test.sh and ldl_fence_test.sh (not run).
# start_redis PIDFILE: a redis-server on 127.0.0.1 at a random port in 20000..49999 (up
# to five ports tried), no persistence, data and log in $d; its pid in $rpid and in
# PIDFILE (for the wrapper's trap), its port in $port (empty: none started). Needs $d
# and alive().
start_redis() {
  port=
  for try in 1 2 3 4 5; do
    p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
    redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly no \
      --daemonize no --logfile "$d/redis.log" & rpid=$!
    echo $rpid > "$1"
    i=0
    while [ $i -lt 100 ]; do
      redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG && { port=$p; break; }
      alive $rpid || break
      sleep 0.05; i=$((i + 1))
    done
    [ -n "$port" ] && break
    kill -9 $rpid 2>/dev/null; rpid=
  done
}
