#!/bin/sh
# redis_game_smoke.sh BIN -- examples/game_server.c really holds its 1,000 rooms on one
# connection and hands them over. Run inside with_redis.sh (uses $LDL_TEST_DIR; the server
# pid goes to a .pid file there for its trap).
# A runs 2 s and takes every room; B, started 0.5 s after A, holds none while A runs, then
# (A released all on exit) takes all 1,000 within its 1 s retry. C then loses every room
# at once and takes them back without one acquire refused as LDL_ESTATE.
set -u
bin=$1
d=${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}/game
mkdir -p "$d"
. "$(dirname "$0")/redis_smoke_lib.sh"
smoke_redis game

export LDL_TTL_MS=2000
"$bin" 127.0.0.1 "$port" 2 > "$d/a.log" 2>&1 &
a=$!
sleep 0.5
"$bin" 127.0.0.1 "$port" 4 > "$d/b.log" 2>&1 &
b=$!
wait $a
wait $b

grep -q "^held 1000 of 1000 rooms" "$d/a.log" && ok || bad "A never held all 1000 rooms"
grep -q "^released 1000 rooms" "$d/a.log" && ok || bad "A did not release its 1000 rooms"
grep -q "^held 0 of 1000 rooms" "$d/b.log" && ok || bad "B held rooms while A held them all"
tail -n 2 "$d/b.log" | grep -q "^held 1000 of 1000 rooms" && ok || bad "B did not take all rooms after A left"
grep -q "frame work p50" "$d/a.log" && ok || bad "no frame-time percentiles"
[ "$(redis-cli -h 127.0.0.1 -p "$port" eval "return #redis.call('KEYS', '{game:*}:lease')" 0)" = 0 ] && ok ||
  bad "lease keys left after both stepped down"

# C: every room lost at once (its lease key deleted under it: the next renew answers 0).
# The loop must release the lost rooms and ask again only once each release has been
# answered: no acquire refused as LDL_ESTATE (issue 31: it used to be 1,000 per loss),
# and all 1,000 rooms are held again before the run ends.
"$bin" 127.0.0.1 "$port" 5 > "$d/c.log" 2>&1 &
c=$!
i=0; until grep -q "^held 1000 of 1000 rooms" "$d/c.log" 2>/dev/null || [ $i -ge 40 ]; do sleep 0.1; i=$((i + 1)); done
redis-cli -h 127.0.0.1 -p "$port" eval "for _, k in ipairs(redis.call('KEYS', '{game:*}:lease')) do redis.call('DEL', k) end return 1" 0 >/dev/null
wait $c
lost=$(sed -n 's/^held .* lost \([0-9]*\);.*/\1/p' "$d/c.log" | tail -n 1)
[ "${lost:-0}" = 1000 ] && ok || bad "C lost ${lost:-no} rooms after the keys were deleted (want 1000, each once)"
tail -n 2 "$d/c.log" | grep -q "^held 1000 of 1000 rooms" && ok || bad "C did not hold all rooms again after the loss"
est=$(sed -n 's/^held .* acquire ESTATE \([0-9]*\);.*/\1/p' "$d/c.log" | tail -n 1)
[ "${est:-x}" = 0 ] && ok || bad "C's acquires answered LDL_ESTATE $est times after the loss (want 0)"
grep -q "^released 1000 rooms" "$d/c.log" && ok || bad "C did not release its 1000 rooms"
[ $fail = 0 ] || for f in a b c; do echo "--- $f"; cat "$d/$f.log"; done >&2
grep -h "whole run" "$d/a.log" "$d/b.log" >&2
redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
wait "$(cat "$LDL_TEST_DIR/game-redis.pid")" 2>/dev/null
rm -f "$LDL_TEST_DIR/game-redis.pid"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
