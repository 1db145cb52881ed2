#!/bin/sh
# redis.sh OUT_DIR -- row 3 of `make bench`. Starts a throwaway redis-server on
# 127.0.0.1 (random port, temp dir, no persistence, stopped by a trap), then
# BENCH_REPS interleaved rounds of, on that one server:
#   redis-benchmark -c 1 EVALSHA <sha of "return 1"> 0   the round-trip limit (anchor)
#   redis-benchmark -c 1 PING                           a second round-trip anchor
#   bench_redis acqrel                                  ldl_lock_acquire+release over the adapter
#   node redlock_bench.js                               npm redlock 4.x + ioredis, acquire+release
# A lifecycle is 2 round trips, so the limit is EVALSHA/s / 2. Rates are medians over
# rounds; ratios are medians of the per-round ratios (paired). Prints table rows.
# Then BENCH_REDIS_ASYNC_REPS (default 3) rounds of the non-blocking view (ldl_redis_async),
# rows 3f-3j:
#   bench_redis frame 1000 2 PID      frame cost (1 pump + 1,000 polls), healthy, then the
#                                     server SIGSTOPped for 2 s
#   bench_redis renew 10000 4         write() calls per heartbeat round of 10,000 leases, CPU
#   bench_redis session 10000 10      server and client time of one round of 10,000 renews
#                                     vs one session key's PEXPIRE (row 3m, decision 0120)
#   bench_redis inflight 100 N        lifecycles/s, 100 locks in flight on one connection
#   node (inline) npm redlock         100 concurrent lock/unlock loops on one ioredis client
#   redis-benchmark -c 1 -P 100       the adapter's own acquire and release scripts, pipelined
#                                     100 deep on one connection: the server-side limit
set -u
. "$(dirname "$0")/lib.sh"
out=${1:-build/bench}
reps=${BENCH_REPS:-7}
n_rb=${BENCH_REDIS_RB_OPS:-20000}
n_ldl=${BENCH_REDIS_OPS:-6000}
n_node=${BENCH_REDLOCK_OPS:-2000}
command -v redis-server >/dev/null 2>&1 || { echo "| 3 | Redis | not run: redis-server missing (make bench-deps) | | | | |"; exit 0; }
[ -x "$out/bench_redis" ] || { echo "| 3 | Redis | not run: $out/bench_redis not built (libhiredis-dev?) | | | | |"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-bench-redis.XXXXXX") || exit 1
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
up=0
for attempt in 1 2 3 4 5 6; do
  port=$(rand_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    --daemonize no >"$tmp/log" 2>&1 &
  pid=$!
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then up=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ $up = 1 ] && break
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
done
[ $up = 1 ] || { echo "| 3 | Redis | not run: redis-server did not start: $(tail -1 "$tmp/log") | | | | |"; exit 0; }
rc() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
sha=$(rc SCRIPT LOAD "return 1")
node_ok=0
if command -v node >/dev/null 2>&1; then
  if [ ! -d bench/npm/node_modules/redlock ] && command -v npm >/dev/null 2>&1; then
    (cd bench/npm && npm ci --no-audit --no-fund >/dev/null 2>&1 || npm install --no-audit --no-fund >/dev/null 2>&1)
  fi
  [ -d bench/npm/node_modules/redlock ] && node_ok=1
fi
usec() {  # usec_per_call of evalsha since the last RESETSTAT
  rc INFO commandstats | tr -d '\r' | awk -F'[=,]' '/^cmdstat_evalsha:/ { print $6 }'
}
: >"$tmp/rb"; : >"$tmp/ping"; : >"$tmp/ldl"; : >"$tmp/node"; : >"$tmp/us_triv"; : >"$tmp/us_ldl"; : >"$tmp/hr"
r=0
while [ $r -lt "$reps" ]; do
  r=$((r + 1))
  rc CONFIG RESETSTAT >/dev/null
  redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -n "$n_rb" --csv EVALSHA "$sha" 0 2>/dev/null |
    tail -1 | cut -d, -f2 | tr -d '"' >>"$tmp/rb"
  usec >>"$tmp/us_triv"
  redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -n "$n_rb" --csv PING 2>/dev/null |
    tail -1 | cut -d, -f2 | tr -d '"' >>"$tmp/ping"
  "$out/bench_redis" 127.0.0.1 "$port" rtt "$n_rb" >>"$tmp/hr" || echo "bench_redis rtt failed" >&2
  rc CONFIG RESETSTAT >/dev/null
  "$out/bench_redis" 127.0.0.1 "$port" acqrel "$n_ldl" >>"$tmp/ldl" || echo "bench_redis failed" >&2
  usec >>"$tmp/us_ldl"
  [ $node_ok = 1 ] && { node bench/npm/redlock_bench.js "$port" "$n_node" >>"$tmp/node" || echo "redlock_bench failed" >&2; }
done
rb=$(median <"$tmp/rb"); ping=$(median <"$tmp/ping"); ldl=$(median <"$tmp/ldl")
lim=$(awk -v r="$rb" 'BEGIN { print r/2 }')
ust=$(median <"$tmp/us_triv"); usl=$(median <"$tmp/us_ldl")
ra=$(pratio "$tmp/ldl" "$tmp/rb" 2)
v=MISSED; ge "$ra" 0.95 && v=met
echo "| 3a | Redis adapter, 1 client, loopback: ldl_lock_acquire+release lifecycles | $(krate "$ldl") | $(krate "$lim") (redis-benchmark -c 1 EVALSHA trivial: $(krate "$rb") / 2) | $(ppct "$ra") | >= 95 % | $v |"
echo "| 3b | Redis: the same vs PING round trips | $(krate "$ldl") | $(krate "$(awk -v r="$ping" 'BEGIN { print r/2 }')") (redis-benchmark -c 1 PING: $(krate "$ping") / 2) | $(ppct "$(pratio "$tmp/ldl" "$tmp/ping" 2)") | | |"
if [ $node_ok = 1 ] && [ -s "$tmp/node" ]; then
  nd=$(median <"$tmp/node")
  rn=$(pratio "$tmp/ldl" "$tmp/node" 1)
  v=MISSED; ge "$rn" 1 && v=met
  ver=$(node -e 'process.stdout.write(require("./bench/npm/node_modules/redlock/package.json").version + " / ioredis " + require("./bench/npm/node_modules/ioredis/package.json").version)' 2>/dev/null)
  echo "| 3c | Redis: the same vs npm redlock $ver (node $(node -v)), acquire+release | $(krate "$ldl") | $(krate "$nd") | $(awk -v r="$rn" 'BEGIN { printf "%.2fx", r }') | above redlock | $v |"
else
  echo "| 3c | Redis: vs npm redlock | not run: node or bench/npm/node_modules missing (make bench-deps) | | | | |"
fi
echo "| 3d | Redis server time per EVALSHA (INFO commandstats) | $usl us (adapter scripts, mean of acquire+release) | $ust us (return 1) | $(awk -v a="$usl" -v b="$ust" 'BEGIN { printf "%+.2f us/call", a-b }') | | |"
# the same client library's own round-trip limit (redis-benchmark has a heavier client loop)
hr=$(median <"$tmp/hr"); hl=$(awk -v r="$hr" 'BEGIN { print r/2 }')
cl=$(awk -v rb="$hr" -v a="$usl" -v b="$ust" 'BEGIN { d = a - b; if (d < 0) d = 0; print 1 / (2 / rb + 2 * d * 1e-6) }')
echo "| 3e | Redis: the same vs hiredis' own round-trip limit (synchronous redisCommandArgv EVALSHA trivial, / 2) | $(krate "$ldl") | $(krate "$hl") ($(krate "$hr") / 2); $(krate "$cl") with 3d's extra server time | $(ppct "$(pratio "$tmp/ldl" "$tmp/hr" 2)"); $(pct "$ldl" "$cl") of the latter | | |"

# ---------------------------------------------------------------- the non-blocking view
areps=${BENCH_REDIS_ASYNC_REPS:-3}
n_fl=${BENCH_REDIS_INFLIGHT_OPS:-50000}
n_rl=${BENCH_REDLOCK100_OPS:-20000}
n_p=${BENCH_REDIS_P100_OPS:-200000}
"$out/bench_redis" - 0 lua acquire >"$tmp/acq.lua"; "$out/bench_redis" - 0 lua release >"$tmp/rel.lua"
sha_a=$(rc -x SCRIPT LOAD <"$tmp/acq.lua"); sha_r=$(rc -x SCRIPT LOAD <"$tmp/rel.lua")
cat >"$tmp/rl100.js" <<'JS'
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');
const port = Number(process.argv[2]), ops = Number(process.argv[3] || 20000), conc = 100;
const client = new Redis({ host: '127.0.0.1', port });
const redlock = new Redlock([client], { retryCount: 0, driftFactor: 0.01 });
async function worker(i, n) { for (let k = 0; k < n; k++) { const l = await redlock.lock('rl100-' + i, 30000); await l.unlock(); } }
async function round(n) { const w = []; for (let i = 0; i < conc; i++) w.push(worker(i, n)); await Promise.all(w); }
(async () => {
  await round(Math.ceil(ops / conc / 10));
  const t0 = process.hrtime.bigint();
  await round(Math.ceil(ops / conc));
  console.log((Math.ceil(ops / conc) * conc / (Number(process.hrtime.bigint() - t0) / 1e9)).toFixed(1));
  client.disconnect();
})().catch((e) => { console.error('redlock100:', e && e.message ? e.message : e); client.disconnect(); process.exit(1); });
JS
: >"$tmp/fr"; : >"$tmp/rn"; : >"$tmp/ss"; : >"$tmp/fl"; : >"$tmp/rl"; : >"$tmp/pa"; : >"$tmp/pr"; : >"$tmp/plim"
r=0
while [ $r -lt "$areps" ]; do
  r=$((r + 1))
  "$out/bench_redis" 127.0.0.1 "$port" frame 1000 2 "$pid" >>"$tmp/fr" || echo "bench_redis frame failed" >&2
  "$out/bench_redis" 127.0.0.1 "$port" renew 10000 4 >>"$tmp/rn" || echo "bench_redis renew failed" >&2
  "$out/bench_redis" 127.0.0.1 "$port" session 10000 10 >>"$tmp/ss" || echo "bench_redis session failed" >&2
  "$out/bench_redis" 127.0.0.1 "$port" inflight 100 "$n_fl" >>"$tmp/fl" || echo "bench_redis inflight failed" >&2
  [ $node_ok = 1 ] && { NODE_PATH=bench/npm/node_modules node "$tmp/rl100.js" "$port" "$n_rl" >>"$tmp/rl" || echo "redlock100 failed" >&2; }
  # The grant path, as ours takes it: 100,000 keys and PX 1, so the lease key is free (expired)
  # at nearly every visit and, after a warm-up pass, the fence counter exists. Its release
  # finds no token (GET nil, no DEL): cheaper than ours, so the limit is generous.
  rba() { redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -P 100 -n "$1" -r 100000 --csv EVALSHA "$sha_a" 2 \
        '{rb:__rand_int__}:lease' '{rb:__rand_int__}:fence' 1 0123456789abcdef 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"'; }
  rba 400000 >/dev/null
  a=$(rba "$n_p")
  b=$(redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -P 100 -n "$n_p" -r 100000 --csv EVALSHA "$sha_r" 1 \
        '{rb:__rand_int__}:lease' 1 0123456789abcdef 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
  echo "${a:-0}" >>"$tmp/pa"; echo "${b:-0}" >>"$tmp/pr"
  awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { if (a > 0 && b > 0) print 1 / (1 / a + 1 / b); else print 0 }' >>"$tmp/plim"
  rc FLUSHALL >/dev/null
  rc SCRIPT LOAD "return 1" >/dev/null
  rc -x SCRIPT LOAD <"$tmp/acq.lua" >/dev/null; rc -x SCRIPT LOAD <"$tmp/rel.lua" >/dev/null
done
col() { awk -v c="$1" '{ print $c }' "$2" | median; }
fhp=$(col 1 "$tmp/fr"); fhm=$(col 2 "$tmp/fr"); ffp=$(col 3 "$tmp/fr"); ffm=$(col 4 "$tmp/fr")
fhc=$(col 5 "$tmp/fr"); ffc=$(col 6 "$tmp/fr")
# verdict on the frame's own CPU time: the wall maximum also counts the scheduler taking
# the core away on a shared machine (both are printed)
v=MISSED; ge 1000 "$fhc" && v="met (CPU; wall max $(ge 1000 "$fhm" && echo met || echo over))"
echo "| 3f | Redis non-blocking: frame cost (1 pump + 1,000 polls, 1,000 leases held, their renews due in the same frames), healthy server, over 2 s of 1 ms frames (medians of $areps runs) | max $fhc us CPU; wall max $fhm us, p99 $fhp us | the synchronous view: a round trip per renew inside the frame | | <= 1 ms | $v |"
v=MISSED; ge 1000 "$ffc" && v="met (CPU; wall max $(ge 1000 "$ffm" && echo met || echo over))"
echo "| 3g | Redis non-blocking: the same, server SIGSTOPped for 2 s | max $ffc us CPU; wall max $ffm us, p99 $ffp us | the synchronous view: up to the command timeout per renew (500+ ms) | | <= 1 ms | $v |"
wpr=$(col 2 "$tmp/rn"); rpr=$(col 3 "$tmp/rn"); cpu=$(col 4 "$tmp/rn")
v=MISSED; ge 10 "$wpr" && v=met
echo "| 3h | Redis non-blocking: renewing 10,000 leases on one connection (60 fps loop), per heartbeat round | $wpr write() calls ($rpr read() calls, EAGAIN included); $cpu us client CPU per renewal (the 10,000 polls per frame included) | the synchronous view: 10,000 round trips, 10,000 write() calls | $(awk -v w="$wpr" 'BEGIN { if (w > 0) printf "%.0fx fewer writes", 10000 / w }') | a handful | $v |"
# issue 34 item 4 (decision 0120): what sessions would save on Redis
ssr=$(col 1 "$tmp/ss"); ssw=$(col 2 "$tmp/ss"); ssc=$(col 3 "$tmp/ss"); ssp=$(col 4 "$tmp/ss")
echo "| 3m | Redis: one heartbeat round of 10,000 leases renewed together on one connection (all pipelined) vs one session key's PEXPIRE (server time from INFO commandstats) | $ssr us server time, $ssc us client CPU, $ssw us wall per round | one PEXPIRE: $ssp us server time | | decide sessions (issue 34) | decision 0120 |"
fl=$(median <"$tmp/fl"); plim=$(median <"$tmp/plim")
if [ $node_ok = 1 ] && [ -s "$tmp/rl" ]; then
  rl=$(median <"$tmp/rl"); rr=$(pratio "$tmp/fl" "$tmp/rl" 1)
  v=MISSED; ge "$rr" 2 && v=met
  echo "| 3i | Redis non-blocking: lifecycles/s, 100 locks in flight on one connection, vs npm redlock with 100 concurrent lock/unlock loops on one ioredis client | $(krate "$fl") | $(krate "$rl") | $(awk -v r="$rr" 'BEGIN { printf "%.2fx", r }') | >= 2x | $v |"
else
  echo "| 3i | Redis non-blocking vs redlock x100 | not run: node or bench/npm/node_modules missing (make bench-deps) | | | | |"
fi
rp=$(pratio "$tmp/fl" "$tmp/plim" 1)
v=MISSED; ge "$rp" 0.8 && v=met
echo "| 3j | Redis non-blocking: the same vs redis-benchmark -c 1 -P 100 running the adapter's own acquire (grant path: free lease, existing counter) and release (no token found) scripts (limit 1 / (1/acquire/s + 1/release/s), generous: its release deletes nothing) | $(krate "$fl") | $(krate "$plim") (acquire $(krate "$(median <"$tmp/pa")"), release $(krate "$(median <"$tmp/pr")")) | $(ppct "$rp") | >= 80 % | $v |"

# ---------------------------------------------------------------- fenced writes (issue 19)
# Rows 3k-3l: SET through the fence script (ldl_redis_fence / ldl_redis_async_fence) vs a
# plain SET on the same connection, bench_redis fenceset DEPTH OPS (8 alternating slices
# each; "equal" = one holder's fence again: the mark is read, not rewritten; "rising" = a
# new fence per write: the mark is SET too). Anchor for what any script can reach:
# redis-benchmark -c 1 -P 100 EVALSHA of a script that only runs the same SET
# ("return redis.pcall(unpack(ARGV, 3))", the fence script's arguments).
fence_rows() {
  freps=${BENCH_REDIS_FENCE_REPS:-3}
  n_f100=${BENCH_REDIS_FENCE100_OPS:-200000}
  n_f1=${BENCH_REDIS_FENCE1_OPS:-20000}
  : >"$tmp/f100e"; : >"$tmp/f100r"; : >"$tmp/f100p"; : >"$tmp/f1e"; : >"$tmp/f1r"; : >"$tmp/f1p"; : >"$tmp/one100"
  sha1=$(rc SCRIPT LOAD "return redis.pcall(unpack(ARGV, 3))")
  r=0
  while [ $r -lt "$freps" ]; do
    r=$((r + 1))
    if "$out/bench_redis" 127.0.0.1 "$port" fenceset 100 "$n_f100" >"$tmp/fs" 2>>"$tmp/fs.err"; then
      awk '{ print $1 }' "$tmp/fs" >>"$tmp/f100e"; awk '{ print $2 }' "$tmp/fs" >>"$tmp/f100r"; awk '{ print $3 }' "$tmp/fs" >>"$tmp/f100p"
    else echo "bench_redis fenceset 100 failed: $(tail -1 "$tmp/fs.err")" >&2; fi
    if "$out/bench_redis" 127.0.0.1 "$port" fenceset 1 "$n_f1" >"$tmp/fs" 2>>"$tmp/fs.err"; then
      awk '{ print $1 }' "$tmp/fs" >>"$tmp/f1e"; awk '{ print $2 }' "$tmp/fs" >>"$tmp/f1r"; awk '{ print $3 }' "$tmp/fs" >>"$tmp/f1p"
    else echo "bench_redis fenceset 1 failed: $(tail -1 "$tmp/fs.err")" >&2; fi
    redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -P 100 -n "$n_f100" --csv EVALSHA "$sha1" 2 '{bf}:ldlbench:mark' \
      '{bf}:k' 0123456789abcdef 1 SET '{bf}:k' 0123456789abcdef 2>/dev/null |
      tail -1 | cut -d, -f2 | tr -d '"' >>"$tmp/one100"
  done
  if [ ! -s "$tmp/f100p" ] || [ ! -s "$tmp/f1p" ]; then
    echo "| 3k | Redis fenced SET | not run: bench_redis fenceset failed | | | | |"; return 0
  fi
  e=$(median <"$tmp/f100e"); ri=$(median <"$tmp/f100r"); p=$(median <"$tmp/f100p"); one=$(median <"$tmp/one100")
  re=$(pratio "$tmp/f100e" "$tmp/f100p" 1)
  v=MISSED; ge "$re" 0.8 && v=met
  echo "| 3k | Redis fenced write: SET through the fence script, non-blocking view, pipelined 100 deep, vs a plain SET on the same connection (medians of $freps runs) | $(krate "$e") equal fence; $(krate "$ri") rising fence ($(ppct "$(pratio "$tmp/f100r" "$tmp/f100p" 1)")) | $(krate "$p") plain SET; any script's ceiling: redis-benchmark -P 100 EVALSHA of a script that only runs the SET: $(krate "$one") ($(ppct "$(pratio "$tmp/one100" "$tmp/f100p" 1)")) | $(ppct "$re") | >= 80 % | $v |"
  e=$(median <"$tmp/f1e"); ri=$(median <"$tmp/f1r"); p=$(median <"$tmp/f1p")
  echo "| 3l | Redis fenced write: the same at depth 1 (synchronous view, ldl_redis_fence vs redisCommandArgv SET: one round trip each) | $(krate "$e") equal; $(krate "$ri") rising ($(ppct "$(pratio "$tmp/f1r" "$tmp/f1p" 1)")) | $(krate "$p") | $(ppct "$(pratio "$tmp/f1e" "$tmp/f1p" 1)") | | |"
}
fence_rows
