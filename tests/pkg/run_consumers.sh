#!/bin/sh
# run_consumers.sh redis|pg WANT BIN... -- run each packaging consumer (tests/pkg/consumer_*.c)
# against a real server and check its one line: "<kind> ok version=WANT fences=a,b".
#   redis: run inside tests/store/with_redis.sh; starts its own redis-server on 127.0.0.1,
#          a free port, pid in $LDL_TEST_DIR (the wrapper's trap kills it whatever happens)
#   pg:    run inside tests/store/with_pg.sh; uses $LDL_PG_CONNINFO
# Each consumer gets its own key, so its fences start at 1 (the pg table persists per key).
# Last line: "N passed, N failed".
set -u
kind=$1; want=$2; shift 2
pass=0; fail=0
if [ "$kind" = redis ]; then
  d=${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}/pkg
  mkdir -p "$d"
  port=
  for try in 1 2 3 4 5; do
    p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
    redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly no \
      --daemonize no --logfile "$d/redis.log" & echo $! > "$LDL_TEST_DIR/pkg-redis.pid"
    i=0
    while [ $i -lt 100 ]; do
      redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG && { port=$p; break; }
      kill -0 "$(cat "$LDL_TEST_DIR/pkg-redis.pid")" 2>/dev/null || break
      sleep 0.05; i=$((i + 1))
    done
    [ -n "$port" ] && break
    kill -9 "$(cat "$LDL_TEST_DIR/pkg-redis.pid")" 2>/dev/null
  done
  [ -n "$port" ] || { echo "FAIL: redis-server did not start" >&2; echo "0 passed, 1 failed"; exit 1; }
fi
n=0
for bin in "$@"; do
  n=$((n + 1))
  key="pkg-$n-$(basename "$(dirname "$bin")")-$(basename "$bin")"
  if [ "$kind" = redis ]; then out=$("$bin" 127.0.0.1 "$port" "$key" 2>&1)
  else out=$("$bin" "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}" "$key" 2>&1); fi
  rc=$?
  if [ $rc = 0 ] && [ "$out" = "$kind ok version=$want fences=1,2" ]; then
    pass=$((pass + 1)); echo "  ok   $kind lifecycle: $bin"
  else
    fail=$((fail + 1)); echo "  FAIL $kind lifecycle: $bin (exit $rc): $out" >&2
  fi
done
if [ "$kind" = redis ]; then
  redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
  wait "$(cat "$LDL_TEST_DIR/pkg-redis.pid")" 2>/dev/null
  rm -f "$LDL_TEST_DIR/pkg-redis.pid"
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
