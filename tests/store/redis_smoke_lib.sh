# redis_smoke_lib.sh -- sourced by the example smoke tests (redis_leader_smoke.sh,
# redis_game_smoke.sh): counters, and a throwaway redis-server on a random free port in
# $d, its pid in $LDL_TEST_DIR/$1-redis.pid for with_redis.sh's trap. Sets $port, or
# prints the count and exits 1.
pass=0; fail=0
ok()   { pass=$((pass + 1)); }
bad()  { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

smoke_redis() {   # $1 = name of the pid file
  pidf="$LDL_TEST_DIR/$1-redis.pid"
  port=
  for try in 1 2 3 4 5; do
    p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
    redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly no \
      --daemonize no --logfile "$d/redis.log" & echo $! > "$pidf"
    i=0
    while [ $i -lt 100 ]; do
      redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG && { port=$p; break; }
      kill -0 "$(cat "$pidf")" 2>/dev/null || break
      sleep 0.05; i=$((i + 1))
    done
    [ -n "$port" ] && break
    kill -9 "$(cat "$pidf")" 2>/dev/null
  done
  [ -n "$port" ] || { bad "redis-server did not start"; echo "$pass passed, $fail failed"; exit 1; }
}
