#!/bin/sh
# redis_leader_smoke.sh BIN -- examples/redis_leader.c really hands over. Run inside
# with_redis.sh (uses $LDL_TEST_DIR; the server pid goes to a .pid file there for its trap).
# Leader A runs 2 s and steps down; B, started 0.5 s after A, must follow, then lead with a
# higher fence. Then B is SIGKILLed while leading and C takes over only after the TTL.
set -u
bin=$1
d=${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}/leader
mkdir -p "$d"
. "$(dirname "$0")/redis_smoke_lib.sh"
smoke_redis leader

export LDL_TTL_MS=600 LDL_KEY=smoke
"$bin" 127.0.0.1 "$port" 2 > "$d/a.log" 2>&1 &
a=$!
sleep 0.5
"$bin" 127.0.0.1 "$port" 5 > "$d/b.log" 2>&1 &
b=$!
wait $a
sleep 1
"$bin" 127.0.0.1 "$port" 4 > "$d/c.log" 2>&1 &
c=$!
sleep 0.5
kill -9 $b 2>/dev/null
wait $c

fa=$(sed -n 's/.*LEADER fence=\([0-9]*\).*/\1/p' "$d/a.log" | head -1)
fb=$(sed -n 's/.*LEADER fence=\([0-9]*\).*/\1/p' "$d/b.log" | head -1)
fc=$(sed -n 's/.*LEADER fence=\([0-9]*\).*/\1/p' "$d/c.log" | head -1)
[ "${fa:-}" = 1 ] && ok || bad "A did not lead first with fence 1 (got '${fa:-}')"
grep -q "stepped down (release answered 1)" "$d/a.log" && ok || bad "A did not step down cleanly"
grep -q FOLLOWER "$d/b.log" && ok || bad "B never followed"
[ -n "${fb:-}" ] && [ "$fb" -gt "${fa:-0}" ] && ok || bad "B did not take over with a higher fence (${fb:-none})"
[ -n "${fc:-}" ] && [ "$fc" -gt "${fb:-0}" ] && ok || bad "C did not take over from the killed B (${fc:-none})"
grep -q "leading: work with fence $fb" "$d/b.log" && ok || bad "B never worked as leader"
[ $fail = 0 ] || for f in a b c; do echo "--- $f"; cat "$d/$f.log"; done >&2
redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
wait "$(cat "$LDL_TEST_DIR/leader-redis.pid")" 2>/dev/null
rm -f "$LDL_TEST_DIR/leader-redis.pid"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
