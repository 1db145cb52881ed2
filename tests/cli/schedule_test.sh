#!/bin/sh
# schedule_test.sh BIN STORE -- ldl-run for scheduled jobs (issue 33, issue 31's ldl-run
# items) against a real store the script starts itself:
#   STORE = redis   inside tests/store/with_redis.sh: a redis-server with appendfsync always
#                   (it keeps the lease across kill -9), restarted on the same port
#   STORE = pg      inside tests/store/with_pg.sh ($LDL_PG_CONNINFO, $LDL_PG_CTL crash/start)
#   STORE = sqlite  a file in the temp dir ("restart": another writer locks the file)
#   STORE = etcd    inside tests/store/with_etcd.sh: one etcd member, kill -9 and restarted
# What it checks: --min-hold (the loser is refused inside the hold, the exit status, a
# store restart during the hold, SIGTERM during the hold releases at once, --detach-hold),
# --once-per (done-mark, fenced, across a period boundary; refused on etcd), the messages
# (the loser names the holder; "ldl-run: store error/usage:" lines; "taken over by another
# holder"; multi-line server texts keep their lines), --metrics parsed by the
# prometheus_client parser, --status creating nothing; then two hosts firing 0-0.4 s
# apart for 20 periods of 2 s: exactly one run per period with --min-hold and with
# --once-per, and the double runs without them (the control).
# Sleeps order events and place firings; nothing asserts a duration. Every wait is bounded.
# Last line: "N passed, N failed".
set -u
bin=${1:?usage: schedule_test.sh BIN redis|pg|sqlite|etcd}
kind=${2:?usage: schedule_test.sh BIN redis|pg|sqlite|etcd}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-sched.XXXXXX") || exit 2
rpid=; epid=; bgs=
PY=/usr/bin/python3          # Debian's python3-prometheus-client lives there
TMO="timeout -k 5 60"
cleanup() {
  for p in $bgs "$rpid" "$epid"; do [ -n "$p" ] && { kill -CONT "$p"; kill -9 "$p"; } 2>/dev/null; done
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
label="sched $kind"
. "$here/lib.sh"         # check, wait_for, alive, clean, freeport
# bwait PID: at most 30 s for a background ldl-run; rc in $rc
bwait() {
  i=0; while alive "$1" && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
  if alive "$1"; then bad "ldl-run $1 still running 30 s later"; kill -9 "$1" 2>/dev/null; fi
  wait "$1"; rc=$?
}

# ---------------------------------------------------------------- the store
start_redis() {   # on $port, persistent, its pid in $rpid
  redis-server --port "$port" --bind 127.0.0.1 --dir "$d" --save '' --appendonly yes \
    --appendfsync always --daemonize no --logfile "$d/redis.log" & rpid=$!
  echo $rpid > "$LDL_TEST_DIR/sched-redis.pid"
  i=0; while [ $i -lt 200 ]; do
    redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && return 0
    alive $rpid || return 1; sleep 0.05; i=$((i + 1)); done
  return 1
}
start_etcd() {
  etcd --name s --data-dir "$d/etcd" --listen-client-urls "$url" --advertise-client-urls "$url" \
    --listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
    --initial-cluster "s=http://127.0.0.1:$pp" --log-level warn --logger zap >> etcd.log 2>&1 &
  epid=$!
  echo $epid > "$LDL_TEST_DIR/sched-etcd.pid"
  i=0; until curl -s "$url/health" 2>/dev/null | grep -q '"health":"true"'; do
    i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1; done
}
case $kind in
redis)
  : "${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}"
  for try in 1 2 3 4 5; do port=$(freeport); start_redis && break; kill -9 $rpid 2>/dev/null; rpid=; done
  [ -n "$rpid" ] || { echo "redis-server did not start"; echo "0 passed, 1 failed"; exit 1; }
  SV="127.0.0.1:$port"; SO=--redis
  BADV="127.0.0.1:1"
  delkey() { redis-cli -p "$port" del "{ldl:$1}:lease" > /dev/null; }
  restart_store() { kill -9 $rpid; wait $rpid 2>/dev/null; sleep 1.5; start_redis || bad "redis did not restart"; }
  ;;
pg)
  : "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
  SV="$LDL_PG_CONNINFO"; SO=--pg
  BADV="host=127.0.0.1 port=1 user=ldl dbname=postgres connect_timeout=2"
  # the lease ends early (as if it had lapsed): the next grant raises the row's token
  delkey() { psql "$SV" -qc "UPDATE ldl_lease SET expires_at = now() - interval '1 second' WHERE key = '$1'" > /dev/null; }
  restart_store() { "$LDL_PG_CTL" crash; sleep 1.5; "$LDL_PG_CTL" start > /dev/null || bad "postgres did not start again"; }
  ;;
sqlite)
  SV="$d/locks.db"; SO=--sqlite
  BADV="$d/no/such/dir/x.db"
  delkey() { sqlite3 -cmd ".timeout 2000" "$SV" "UPDATE ldl_lease SET boot = '00000000-0000-4000-8000-000000000000' WHERE key = '$1'"; }
  # no server to restart: another writer holds the file for 2 s (renews meet store errors)
  restart_store() { { echo ".timeout 2000"; echo "BEGIN IMMEDIATE;"; sleep 2; echo "ROLLBACK;"; } | sqlite3 "$SV"; }
  ;;
etcd)
  : "${LDL_TEST_DIR:?run me through tests/store/with_etcd.sh}"
  cp=$(freeport); pp=$(freeport); url=http://127.0.0.1:$cp
  start_etcd || { cat etcd.log >&2; echo "etcd did not start"; echo "0 passed, 1 failed"; exit 1; }
  SV="$url"; SO=--etcd
  BADV="http://127.0.0.1:1"
  delkey() { ETCDCTL_API=3 etcdctl --endpoints="$url" del "ldl/$1" > /dev/null; }
  restart_store() { kill -9 $epid; wait $epid 2>/dev/null; sleep 1.5; start_etcd || bad "etcd did not restart"; }
  ;;
*) echo "unknown store $kind"; exit 2 ;;
esac
ST="--store-timeout 4"       # generous: a loaded 2-core machine
run()  { $TMO "$bin" $SO "$SV" $ST "$@"; }
xrun() { exec "$bin" $SO "$SV" $ST "$@"; }

# ---------------------------------------------------------------- --min-hold
# A's job is done at once; B's -n inside the hold is refused and names the holder
xrun --owner hostA --min-hold 3 MH -- sh -c 'echo $LDL_FENCE > mh.f' 2>mh.err & a=$!; bgs="$bgs $a"
wait_for mh.f; sleep 0.3
check "--min-hold: the job is done and ldl-run still holds" 'alive $a'
run --owner hostB -n MH -- touch mh.b 2>mh.berr; rc=$?
check "--min-hold: a second host inside the hold is not acquired (1, got $rc)" '[ $rc = 1 ] && [ ! -e mh.b ]'
check "the loser names the holder, its fence and the time left ($(cat mh.berr))" \
  'grep -q "^ldl-run: not acquired: .MH. is held by hostA, fence $(cat mh.f), [0-9]* ms left$" mh.berr'
run -q -n MH -- touch mh.b 2>mh.qerr; rc=$?
check "-q: the loser says nothing (rc $rc)" '[ $rc = 1 ] && [ ! -s mh.qerr ]'
bwait $a
check "--min-hold: ldl-run exits 0 after the hold (got $rc: $(cat mh.err))" '[ $rc = 0 ]'
run -n MH -- touch mh.b; rc=$?
check "--min-hold: released at the end: -n gets it (got $rc)" '[ $rc = 0 ] && [ -e mh.b ]'
run --min-hold 0.5 MH -- sh -c 'exit 7'; rc=$?
check "--min-hold: the job's status passes through after the hold (7, got $rc)" '[ $rc = 7 ]'
run --min-hold x MH -- true 2>u.err; rc=$?
check "--min-hold x: exit 64, 'ldl-run: usage:' ($(head -1 u.err))" '[ $rc = 64 ] && grep -q "^ldl-run: usage: --min-hold" u.err'
run --detach-hold MH -- true 2>u.err; rc=$?
check "--detach-hold without --min-hold: exit 64 (got $rc)" '[ $rc = 64 ] && grep -q "^ldl-run: usage:" u.err'

# SIGTERM during the hold (60 s): released at once (the TTL is the default 30 s: a lapse would
# leave the key held), the job's status passes through
xrun --min-hold 60 TH -- sh -c 'echo x > th.done; exit 5' 2>th.err & a=$!; bgs="$bgs $a"
wait_for th.done; sleep 0.3
check "SIGTERM during the hold: the hold was on" 'alive $a'
kill -TERM $a; bwait $a
check "SIGTERM during the hold: ldl-run ends with the job's status (5, got $rc)" '[ $rc = 5 ]'
run -n TH -- touch th.b; rc=$?
check "SIGTERM during the hold: released at once, -n gets it (got $rc)" '[ $rc = 0 ] && [ -e th.b ]'

# --detach-hold: the caller gets the job's status at once (its output pipe closed too),
# the lease stays held by a background process until the hold ends
out=$(run --owner det --min-hold 4 --detach-hold DH -- sh -c 'echo out; exit 3'); rc=$?
run --status DH > dh.st; src=$?
check "--detach-hold: the job's status at once (3, got $rc), its output ($out)" '[ $rc = 3 ] && [ "$out" = out ]'
check "--detach-hold: KEY still held after ldl-run returned ($(cat dh.st))" '[ $src = 0 ] && grep -q "held by det" dh.st'
i=0; while run --status DH > /dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
run -n DH -- true; rc=$?
check "--detach-hold: released when the hold ends (got $rc)" '[ $rc = 0 ]'

# a store restart during the hold: renewed on the restarted store, as a running job's
# lease is. TTL 8 s; the hold lasts 16 s; B asks 11 s after the grant (past the TTL of
# any renew before the restart)
rm -f rs.f
xrun --owner rsA --ttl 8000 --grace 0.5 --min-hold 16 RS -- sh -c 'echo $LDL_FENCE > rs.f' 2>rs.err & a=$!; bgs="$bgs $a"
wait_for rs.f; sleep 0.3
restart_store
sleep $((11 - 2))   # restart_store took about 2 s
run -n RS -- touch rs.b 2>/dev/null; rc=$?
run --status RS > rs.st 2>&1
check "a store restart during the hold: still held past the TTL (B: 1, got $rc; $(cat rs.st))" \
  '[ $rc = 1 ] && [ ! -e rs.b ] && grep -q "held by rsA, fence $(cat rs.f)," rs.st'
bwait $a
check "... and ldl-run exits 0 at the hold's end (got $rc)" '[ $rc = 0 ]'
[ $rc = 0 ] || cat rs.err >&2
run -n RS -- touch rs.b; rc=$?
check "... and released: -n gets it (got $rc)" '[ $rc = 0 ]'

if [ "$kind" = redis ]; then
  # a hold whose renews fail ends early, says so, and keeps the job's status: the store
  # stops answering (SIGSTOP) during a 20 s hold under a 2 s TTL
  xrun --ttl 2000 --grace 0.3 --min-hold 20 HE -- sh -c 'echo x > he.done; exit 4' 2>he.err & a=$!; bgs="$bgs $a"
  wait_for he.done; sleep 0.3
  kill -STOP $rpid; bwait $a; kill -CONT $rpid
  check "a hold whose renews fail ends early, says so, the job's status stays (4, got $rc: $(cat he.err))" \
    '[ $rc = 4 ] && grep -q "^ldl-run: the hold of .HE. ends early" he.err'
fi

# ---------------------------------------------------------------- messages
run MS -- sh -c 'exit 69' 2>ms.err; rc=$?
check "the job's own 69 passes through with no ldl-run line (rc $rc)" '[ $rc = 69 ] && [ ! -s ms.err ]'
$TMO "$bin" $SO "$BADV" --store-timeout 2 -n MS -- touch ms.ran 2>ms.err; rc=$?
check "ldl-run's own 69: one line 'ldl-run: store error:' (rc $rc: $(cat ms.err))" \
  '[ $rc = 69 ] && [ ! -e ms.ran ] && [ "$(grep -vc "^ldl-run: | " ms.err)" = 1 ] && grep -q "^ldl-run: store error: " ms.err && clean ms.err'
if [ "$kind" = pg ]; then
  check "a multi-line libpq text keeps its lines, escaped per line ($(cat ms.err))" \
    '[ "$(grep -c "^ldl-run: | " ms.err)" -ge 1 ] && ! grep -q "x0a" ms.err'
fi
# taken over: A's lease is deleted under it, B takes KEY and holds it; A's job then ends
xrun --owner tkA TK -- sh -c 'echo $LDL_FENCE > tk.f; while [ ! -e tk.go ]; do sleep 0.05; done' 2>tk.err & a=$!; bgs="$bgs $a"
wait_for tk.f
delkey TK
xrun --owner tkB --min-hold 6 -n TK -- sh -c 'echo $LDL_FENCE > tk.bf' 2>/dev/null & b=$!; bgs="$bgs $b"
wait_for tk.bf; touch tk.go; bwait $a
check "a release the store answers 'not yours': 'taken over by another holder' and who ($(cat tk.err))" \
  'grep -q "^ldl-run: release of .TK.: taken over by another holder: held by tkB, fence $(cat tk.bf)," tk.err && ! grep -q "not confirmed" tk.err'
kill -TERM $b; bwait $b

# ---------------------------------------------------------------- --status creates nothing (issue 31)
if [ "$kind" = sqlite ]; then
  "$bin" --sqlite "$d/nothere.db" --status K > ns.out 2> ns.err; rc=$?
  check "--status on a SQLite path that does not exist: 'no such store', no file made (rc $rc: $(cat ns.err))" \
    '[ $rc = 69 ] && grep -q "^ldl-run: store error: .*no such store" ns.err && [ ! -e "$d/nothere.db" ]'
  "$bin" --sqlite "$SV" --table typo --status K 2> nt.err; rc=$?
  check "--status --table typo (SQLite): 'no such table', none made (rc $rc)" \
    '[ $rc = 69 ] && grep -q "no such table" nt.err && [ -z "$(sqlite3 "$SV" "SELECT name FROM sqlite_master WHERE name LIKE '\''typo%'\''")" ]'
  # -n against a locked database: the why, not "no answer"
  ( { echo ".timeout 2000"; echo "BEGIN IMMEDIATE;"; sleep 2; echo "ROLLBACK;"; } | sqlite3 "$SV" ) & lk=$!
  sleep 0.5
  run -n LKD -- touch lkd.ran 2> lkd.err; rc=$?
  wait $lk
  check "-n --sqlite against a locked database: 69 and the why (rc $rc: $(cat lkd.err))" \
    '[ $rc = 69 ] && grep -q "^ldl-run: store error: .*locked" lkd.err && ! grep -q "no answer" lkd.err'
fi
if [ "$kind" = pg ]; then
  run --table typo --status K 2> nt.err; rc=$?
  check "--status --pg --table typo: 'no such table', none made (rc $rc: $(cat nt.err))" \
    '[ $rc = 69 ] && grep -q "no such table" nt.err && [ "$(psql "$SV" -Atc "SELECT count(*) FROM pg_class WHERE relname LIKE '\''typo%'\''")" = 0 ]'
fi

# ---------------------------------------------------------------- --once-per
# utc_wait LO HI P: sleep until the UTC time modulo P is within [LO, HI) seconds
utc_wait() { $PY -c "
import time,sys
lo,hi,p=map(float,sys.argv[1:])
while not lo <= time.time() % p < hi: time.sleep(0.01)
" "$@"; }
if [ "$kind" = etcd ]; then
  run --once-per 60 OP -- touch op.ran 2> op.err; rc=$?
  check "--once-per on etcd (no fenced write): 64, says why (rc $rc: $(cat op.err))" \
    '[ $rc = 64 ] && [ ! -e op.ran ] && grep -q "^ldl-run: usage: --once-per needs a store with fenced writes" op.err'
else
  # a period boundary: 6 s periods; the first run 1.5 s before the boundary, the second
  # at once (same period: done), the third 0.5 s after the boundary (a new period)
  utc_wait 4.0 4.6 6
  run --once-per 6 OP -- sh -c 'echo 1 >> op.runs'; r1=$?
  run --once-per 6 OP -- sh -c 'echo 2 >> op.runs' 2> op.err; r2=$?
  utc_wait 0.5 1.5 6
  run --once-per 6 OP -- sh -c 'echo 3 >> op.runs'; r3=$?
  run --once-per 6 --done-exit-code 0 OP -- sh -c 'echo 4 >> op.runs'; r4=$?
  check "--once-per: run, done (79), next period runs, done again (0 by --done-exit-code): $r1 $r2 $r3 $r4 ($(tr '\n' ' ' < op.runs))" \
    '[ "$r1 $r2 $r3 $r4" = "0 79 0 0" ] && [ "$(tr "\n" " " < op.runs)" = "1 3 " ]'
  check "--once-per: the done run says so ($(cat op.err))" 'grep -q "^ldl-run: .OP.: the run of period [0-9]* (--once-per) is done already" op.err'
  # a failed run records nothing
  run --once-per 600 OF -- sh -c 'exit 5'; r1=$?
  run --once-per 600 OF -- touch of.ran; r2=$?
  check "--once-per: a failed run (5) leaves the period open: the next one runs ($r1 $r2)" '[ "$r1 $r2" = "5 0" ] && [ -e of.ran ]'
  # fenced: A (lower fence) is overtaken while its job runs; B (higher fence) runs and
  # records the period; A's job then succeeds, but its mark is stale: refused
  xrun --once-per 600 OS -- sh -c 'echo $LDL_FENCE > os.f; while [ ! -e os.go ]; do sleep 0.05; done' 2>os.err & a=$!; bgs="$bgs $a"
  wait_for os.f
  delkey OS
  run --once-per 600 -n OS -- sh -c 'echo $LDL_FENCE > os.bf'; rb=$?
  touch os.go; bwait $a
  check "--once-per, fenced: the overtaken holder's mark is refused ($rb, $rc, fences $(cat os.f) $(cat os.bf): $(cat os.err))" \
    '[ $rb = 0 ] && [ "$(cat os.bf)" -gt "$(cat os.f)" ] && grep -q "is not recorded: a higher fence wrote the mark" os.err'
  run --once-per 600 OS -- touch os.ran; rc=$?
  check "--once-per, fenced: the period stays done (79, got $rc)" '[ $rc = 79 ] && [ ! -e os.ran ]'
fi

# ---------------------------------------------------------------- --metrics
key=$(printf 'mé "q" \\b')
run --metrics m.prom "$key" -- sh -c 'echo $LDL_FENCE > m.f; sleep 0.3'; rc=$?
ino1=$(stat -c %i m.prom 2>/dev/null)
cat > parse.py <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding="utf-8").read()
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        print("%s\t%s\t%r" % (s.name, s.labels.get("key"), s.value))
EOF
$PY parse.py m.prom > m.out 2> m.perr; prc=$?
val() { awk -F'\t' -v n="$1" '$1 == n { print $3 }' m.out; }
check "--metrics: the file parses ($prc: $(cat m.perr))" '[ $rc = 0 ] && [ $prc = 0 ] && [ "$(wc -l < m.out)" = 8 ]'
check "--metrics: every sample labelled with the key, escapes undone by the parser" \
  '[ "$(cut -f2 m.out | sort -u)" = "$key" ]'
check "--metrics: fence, exit status, duration, last start and success ($(tr '\t\n' ' ;' < m.out))" \
  '[ "$(val ldl_run_fence)" = "$(cat m.f).0" ] && [ "$(val ldl_run_exit_status)" = 0.0 ] &&
   awk "BEGIN { exit !($(val ldl_run_duration_seconds) >= 0.3 && $(val ldl_run_last_success_timestamp_seconds) >= $(val ldl_run_last_start_timestamp_seconds) && $(val ldl_run_last_start_timestamp_seconds) > 1.7e9) }"'
ok1=$(val ldl_run_last_success_timestamp_seconds)
run --metrics m.prom "$key" -- sh -c 'exit 3'; rc=$?
$PY parse.py m.prom > m.out 2> m.perr
check "--metrics: a failed run: exit status 3, the last success kept, a new file (renamed over)" \
  '[ $rc = 3 ] && [ "$(val ldl_run_exit_status)" = 3.0 ] && [ "$(val ldl_run_last_success_timestamp_seconds)" = "$ok1" ] && [ "$(stat -c %i m.prom)" != "$ino1" ] && [ -z "$(ls m.prom.tmp.* 2>/dev/null)" ]'
xrun --min-hold 3 MX -- true 2>/dev/null & a=$!; bgs="$bgs $a"
sleep 0.5; run -q -n --metrics mx.prom MX -- true; rc=$?
$PY parse.py mx.prom > m.out 2> m.perr
check "--metrics of a loser: exit status 1, fence 0 (rc $rc)" '[ $rc = 1 ] && [ "$(val ldl_run_exit_status)" = 1.0 ] && [ "$(val ldl_run_fence)" = 0.0 ]'
bwait $a

# ---------------------------------------------------------------- two hosts, 20 periods
# each host fires `ldl-run -n OPTIONS` once per 2 s period at its own offset in [0, 0.4] s
# the three drivers run side by side (different keys), so the whole takes ~42 s
hosts() {   # NAME PERIODS OPTIONS...: a driver in the background; lines "PERIOD HOST" in NAME.runs
  name=$1; n=$2; shift 2
  touch "$name.runs"
  $PY "$here/two_hosts.py" "$n" 2 0.4 -- "$bin" $SO "$SV" $ST -q -n "$@" "TH_$name" -- \
    sh -c "echo \"\$PERIOD \$HOST\" >> $name.runs" > "$name.fired" &
}
count() {   # NAME: periods that ran exactly once ($once) / more than once ($twice)
  once=$(cut -d' ' -f1 "$1.runs" | sort -n | uniq -c | awk '$1 == 1' | wc -l)
  twice=$(cut -d' ' -f1 "$1.runs" | sort -n | uniq -c | awk '$1 > 1' | wc -l)
  exits=$(cut -d' ' -f3 "$1.fired" | sort | uniq -c | tr '\n' ' ')
}
hosts hold 20 --min-hold 1; h1=$!
[ "$kind" != etcd ] && { hosts once 20 --once-per 2; h2=$!; }
hosts control 5; h3=$!
wait $h1; [ "$kind" != etcd ] && wait $h2; wait $h3
count hold
check "two hosts, 20 periods, --min-hold 1: exactly one run per period ($once once, $twice twice; exits $exits)" \
  '[ $once = 20 ] && [ $twice = 0 ]'
if [ "$kind" != etcd ]; then
  count once
  check "two hosts, 20 periods, --once-per 2: exactly one run per period ($once once, $twice twice; exits $exits)" \
    '[ $once = 20 ] && [ $twice = 0 ]'
fi
count control
check "the control, without them: periods that ran twice ($twice of 5)" '[ $twice -ge 1 ]'
echo "note [sched $kind]: control: $twice of 5 periods ran twice" >&2

echo "$pass passed, $fail failed"
[ $fail = 0 ]
