#!/bin/sh
# ldl_run_test.sh BIN STORE -- cli/ldl-run against a real store (issue 16).
#   STORE = redis   run inside tests/store/with_redis.sh: starts its own redis-server on
#                   127.0.0.1 (free port, pid in $LDL_TEST_DIR for that wrapper's trap)
#   STORE = pg      run inside tests/store/with_pg.sh: uses $LDL_PG_CONNINFO
#   STORE = memory  no server (the in-process MemoryStore)
# Children append markers to files; every check reads what really happened (exit codes,
# markers, fences, pids). Sleeps only order events; nothing asserts a duration.
# Every call is bounded: in the foreground through timeout(1) (a hanging tool fails its
# check with 124 instead of hanging the suite), in the background through bwait.
# Last line: "N passed, N failed".
set -u
bin=${1:?usage: ldl_run_test.sh BIN redis|pg|memory}
kind=${2:?usage: ldl_run_test.sh BIN redis|pg|memory}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-cli.XXXXXX") || exit 2
rpid=; r2pid=; ppid_=; hpid=
here=$(cd "$(dirname "$0")" && pwd)
TMO="timeout -k 5 60"    # the bound on every foreground call
cleanup() {
  for p in "$rpid" "$r2pid" "$ppid_" "$hpid"; do
    [ -n "$p" ] && { kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; }
  done
  [ -n "${stopped:-}" ] && kill -CONT "$stopped" 2>/dev/null
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
label="$kind"
. "$here/lib.sh"         # check, wait_for, alive, clean, freeport
# bwait PID [PIDS...]: wait for a signalled ldl-run, at most 20 s (a bound, not a timing
# check); past it: a failure, and ldl-run, PIDS and their groups are SIGKILLed. rc in $rc.
bwait() {
  i=0; while alive "$1" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  if alive "$1"; then
    bad "ldl-run $1 still running 20 s after its signal"
    for p in "$@"; do [ -n "$p" ] && kill -9 "-$p" "$p" 2>/dev/null; done
  fi
  wait "$1"; rc=$?
}

# ---------------------------------------------------------------- the store
case $kind in
redis)
  : "${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}"
  . "$here/redis_start.sh"
  start_redis "$LDL_TEST_DIR/cli-redis.pid"
  [ -n "$port" ] || { echo "redis-server did not start"; echo "0 passed, 1 failed"; exit 1; }
  S="--redis 127.0.0.1:$port"
  BADSTORE="--redis 127.0.0.1:1"
  ;;
pg)
  : "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
  S="--pg"; SV="$LDL_PG_CONNINFO"
  BADSTORE="--pg"; BADV="host=127.0.0.1 port=1 user=ldl dbname=postgres connect_timeout=2"
  ;;
memory) S="--memory" ;;
*) echo "unknown store $kind"; exit 2 ;;
esac
# run ARGS...: ldl-run with the store options (the pg conninfo holds spaces)
run() {
  if [ "$kind" = pg ]; then $TMO "$bin" --pg "$SV" "$@"; else $TMO "$bin" $S "$@"; fi
}
# xrun ARGS... &: the same, exec'd, so that $! is ldl-run itself (to signal it)
xrun() {
  if [ "$kind" = pg ]; then exec "$bin" --pg "$SV" "$@"; else exec "$bin" $S "$@"; fi
}
runbad() {
  if [ "$kind" = pg ]; then $TMO "$bin" --pg "$BADV" "$@"; else $TMO "$bin" $BADSTORE "$@"; fi
}
# proxy TARGETPORT: start tests/cli/freeze_proxy.py in front of 127.0.0.1:TARGETPORT;
# its pid in $ppid_ (SIGSTOP freezes it), its port in $pport
proxy() {
  rm -f "$d/proxy.port"
  python3 "$here/freeze_proxy.py" "$d/proxy.port" 127.0.0.1 "$1" & ppid_=$!
  [ -n "${LDL_TEST_DIR:-}" ] && echo $ppid_ > "$LDL_TEST_DIR/cli-proxy.pid"
  wait_for "$d/proxy.port"; pport=$(cat "$d/proxy.port")
}
unproxy() { [ -n "$ppid_" ] && { kill -CONT $ppid_; kill -9 $ppid_; wait $ppid_; } 2>/dev/null; ppid_=; }

# ---------------------------------------------------------------- usage and exit codes
$TMO "$bin" k true 2>/dev/null;               rc=$?; check "no store: exit 64 (got $rc)" '[ $rc = 64 ]'
run 2>/dev/null;                              rc=$?; check "no key: exit 64 (got $rc)" '[ $rc = 64 ]'
run k 2>/dev/null;                            rc=$?; check "no command: exit 64 (got $rc)" '[ $rc = 64 ]'
run --ttl 0 k -- true 2>"$d/e";               rc=$?; check "--ttl 0: exit 64 (got $rc)" '[ $rc = 64 ]'
check "--ttl 0: the library says why" 'grep -q ttl_ms "$d/e"'
run --ttl 100 --heartbeat 80 k -- true 2>"$d/e"; rc=$?
check "heartbeat*2 > ttl: exit 64 (got $rc)" '[ $rc = 64 ]'
check "heartbeat*2 > ttl: the library says why" 'grep -q heartbeat_ms "$d/e"'
run "$(printf 'a\tb')" -- true 2>/dev/null;   rc=$?; check "control byte in key: exit 64 (got $rc)" '[ $rc = 64 ]'
run -n -w 1 k -- true 2>/dev/null;            rc=$?; check "-n with -w: exit 64 (got $rc)" '[ $rc = 64 ]'
run -E 300 k -- true 2>/dev/null;             rc=$?; check "-E 300: exit 64 (got $rc)" '[ $rc = 64 ]'
run --bogus k -- true 2>/dev/null;            rc=$?; check "unknown option: exit 64 (got $rc)" '[ $rc = 64 ]'
$TMO "$bin" --memory --redis 127.0.0.1:1 k true 2>/dev/null; rc=$?
check "two stores: exit 64 (got $rc)" '[ $rc = 64 ]'
$TMO "$bin" --help > "$d/help";               rc=$?
check "--help exits 0 and lists the exit codes" '[ $rc = 0 ] && grep -q "^  75 " "$d/help" && grep -q "^  69 " "$d/help" && grep -q "^  64 " "$d/help"'
if [ "$kind" != memory ]; then
  runbad k -- touch "$d/ran" 2>"$d/e";        rc=$?
  check "store unreachable: exit 69 (got $rc)" '[ $rc = 69 ] && [ ! -e "$d/ran" ]'
fi
run k -- sh -c 'exit 7';                      rc=$?; check "exit code passes through (7, got $rc)" '[ $rc = 7 ]'
run k -- sh -c 'kill -TERM $$';               rc=$?; check "killed by TERM: 143 (got $rc)" '[ $rc = 143 ]'
run k -- ./no-such-command 2>/dev/null;       rc=$?; check "command not found: 127 (got $rc)" '[ $rc = 127 ]'
printf 'echo hi\n' > "$d/noexec"; chmod 644 "$d/noexec"
run k -- "$d/noexec" 2>/dev/null;             rc=$?; check "not executable: 126 (got $rc)" '[ $rc = 126 ]'
run k -- sh -c 'echo "$LDL_KEY" > key.out; cut -d" " -f5 /proc/$$/stat > pg.out; echo $$ > pid.out'
check "LDL_KEY is the key" '[ "$(cat key.out)" = k ]'
check "the command leads its own process group" '[ -s pg.out ] && [ "$(cat pg.out)" = "$(cat pid.out)" ]'

run --owner "$(printf 'a\tb')" k -- true 2>"$d/e"; rc=$?
check "control byte in --owner: exit 64, the library says why (got $rc)" '[ $rc = 64 ] && grep -q owner "$d/e"'
run --status k >/dev/null 2>&1;              rc=$?
[ "$kind" = memory ] && check "--status with --memory: exit 64 (got $rc)" '[ $rc = 64 ]'
run --status k -- true 2>/dev/null;           rc=$?; check "--status with a COMMAND: exit 64 (got $rc)" '[ $rc = 64 ]'

# ---------------------------------------------------------------- environment, escapes, --grace
LDL_KEY=bogus LDL_FENCE=999999 run EV -- sh -c 'echo "$LDL_KEY $LDL_FENCE" > env.out'
check "LDL_KEY and LDL_FENCE from the caller are replaced ($(cat env.out))" \
  '[ "$(cut -d" " -f1 env.out)" = EV ] && [ "$(cut -d" " -f2 env.out)" != 999999 ] && [ "$(cut -d" " -f2 env.out)" -ge 1 ]'
# (UTF-8 C1 CSI U+009B and a bidi override U+202E: valid UTF-8, so PostgreSQL takes it too)
run -v "$(printf 'c1\302\233x\342\200\256y')" -- true 2>esc.err; rc=$?
check "a key with a C1 control and a bidi override is printed escaped (rc $rc: $(cat esc.err))" \
  '[ $rc = 0 ] && clean esc.err && grep -q "c1\\\\xc2\\\\x9bx\\\\xe2\\\\x80\\\\xaey" esc.err'
run --status "$(printf 'a\033[2Jb')" >st.out 2>st.err; rc=$?
[ "$kind" != memory ] && check "--status with a bad KEY: exit 64, a reason, the key escaped (rc $rc: $(cat st.err))" \
  '[ $rc = 64 ] && grep -q "bad KEY .a\\\\x1b\[2Jb.: key" st.err && clean st.err && clean st.out'
run --ttl 1000 --grace 0.6 GR -- touch gr.ran 2>gr.err; rc=$?
check "--grace 0.6 (600 ms) does not fit a 1000 ms lease (567 ms room): exit 64 and why (rc $rc)" \
  '[ $rc = 64 ] && [ ! -e gr.ran ] && grep -q "grace 600 ms does not fit.* 567 ms" gr.err'
run --ttl 1000 --grace 0.5 GR -- touch gr.ran;  rc=$?
check "--grace 0.5 (500 ms) fits a 1000 ms lease (rc $rc)" '[ $rc = 0 ] && [ -e gr.ran ]'
run --store-timeout 0 GR -- true 2>/dev/null;   rc=$?; check "--store-timeout 0: exit 64 (got $rc)" '[ $rc = 64 ]'
run --ttl 1000 -v GR -- true 2>gr.err;          rc=$?
check "the default --grace is cut to fit a short lease, and -v says so (rc $rc)" \
  '[ $rc = 0 ] && grep -q "default --grace (10 s) does not fit" gr.err'

# ---------------------------------------------------------------- the whole job, signals
# leftovers in the group get SIGTERM first (their trap runs), SIGKILL only after --grace
printf 'trap "echo term > left.term; exit 0" TERM\necho $$ > left2.pid\nwhile :; do sleep 0.05; done\n' > left.sh
run JB -- sh -c 'sh left.sh 2>/dev/null & while [ ! -s left2.pid ]; do sleep 0.05; done; exit 0'; rc=$?
check "a process left in the group gets SIGTERM before any SIGKILL (rc $rc)" \
  '[ $rc = 0 ] && [ -s left.term ] && ! alive "$(cat left2.pid)"'
# a child that setsid()s away from the group is still the job: it gets the TERM and
# KEY is released only once it is gone
printf 'trap "echo term > ss.term; exit 0" TERM\ntrap "echo hup >> ss.hup; exit 0" HUP\necho $$ > ss.pid\nwhile :; do sleep 0.05; done\n' > ss.sh
rm -f ss.pid; run JB -- sh -c 'setsid sh ss.sh 2>/dev/null & while [ ! -s ss.pid ]; do sleep 0.05; done; exit 0'; rc=$?
check "a setsid() child: terminated (its TERM trap ran) before ldl-run returns (rc $rc)" \
  '[ $rc = 0 ] && [ -s ss.term ] && ! alive "$(cat ss.pid)"'
[ -s ss.pid ] && kill -9 "$(cat ss.pid)" 2>/dev/null
rm -f ss.pid; xrun JB -- sh -c 'setsid sh ss.sh 2>/dev/null & echo $$ > ss.grp; wait' & l=$!
wait_for ss.pid; kill -HUP $l; bwait $l "$(cat ss.grp)" "$(cat ss.pid)"
check "a signal to ldl-run reaches a setsid() child too (rc $rc: $(cat ss.hup 2>/dev/null))" '[ -s ss.hup ] && ! alive "$(cat ss.pid)"'
# HUP, QUIT, USR2 forwarded like TERM and INT: the trap runs, its code passes through,
# KEY is released
for sg in HUP QUIT USR2; do
  rm -f fw.ready
  xrun FW -- sh -c "exec 2>/dev/null; trap 'echo got $sg >> fw.sig; exit 5' $sg; echo \$\$ > fw.ready; while :; do sleep 0.05; done" &
  l=$!
  wait_for fw.ready; kill -$sg $l; bwait $l "$(cat fw.ready)"
  check "$sg forwarded: the command's trap ran, its exit 5 passes through (got $rc)" '[ $rc = 5 ] && grep -q "got $sg" fw.sig'
  run -n FW -- true;                          rc=$?; check "released after the forwarded $sg (got $rc)" '[ $rc = 0 ]'
done
# a forwarded TERM the job ignores: SIGKILL after --grace (137), then KEY is released
xrun --grace 0.5 FW -- sh -c 'trap "" TERM; echo $$ > ig.ready; while :; do sleep 0.05; done' & l=$!
wait_for ig.ready; kill -TERM $l; bwait $l "$(cat ig.ready)"
check "a forwarded TERM the job ignores escalates to SIGKILL after --grace: 137 (got $rc)" \
  '[ $rc = 137 ] && ! alive "$(cat ig.ready)"'
run -n FW -- true;                            rc=$?; check "released after the escalation (got $rc)" '[ $rc = 0 ]'
# USR1 is only passed on: a job that traps it runs on
rm -f u1.ready u1.sig
xrun --grace 0.3 FW -- sh -c 'trap "echo u1 >> u1.sig" USR1; trap "exit 6" TERM; echo $$ > u1.ready; while :; do sleep 0.05; done' & l=$!
wait_for u1.ready; kill -USR1 $l; wait_for u1.sig; sleep 1
check "USR1 does not escalate: the job runs on past --grace" 'alive $l && alive "$(cat u1.ready)"'
kill -TERM $l; bwait $l "$(cat u1.ready)"
check "... and ends on TERM (exit 6, got $rc)" '[ $rc = 6 ]'
# ldl-run SIGKILLed: the command dies with it (PR_SET_PDEATHSIG)
xrun --ttl 2000 PD -- sh -c 'echo $$ > pd.pid; while :; do sleep 0.05; done' & l=$!
wait_for pd.pid; kill -9 $l; wait $l 2>/dev/null
i=0; while alive "$(cat pd.pid)" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check "ldl-run SIGKILLed: the command gets SIGKILL too" '! alive "$(cat pd.pid)"'
kill -9 "$(cat pd.pid)" 2>/dev/null
# ldl-run stopped past its lease's deadline while the command ended: exit 75, not 0
xrun --ttl 1000 EX -- sh -c 'echo $$ > ex.pid; while [ ! -e ex.go ]; do sleep 0.02; done' & l=$!
wait_for ex.pid; kill -STOP $l; touch ex.go
i=0; while alive "$(cat ex.pid)" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 1.2; kill -CONT $l; bwait $l "$(cat ex.pid)"
check "a lease that expired while the command ended: exit 75, not the command's 0 (got $rc)" '[ $rc = 75 ]'

if [ "$kind" = memory ]; then
  run k -- sh -c 'echo $LDL_FENCE > f1'; run k -- sh -c 'echo $LDL_FENCE > f2'
  check "memory: fence 1 each time (nothing shared between processes)" '[ "$(cat f1)" = 1 ] && [ "$(cat f2)" = 1 ]'
  echo "$pass passed, $fail failed"; [ $fail = 0 ]; exit
fi

# ---------------------------------------------------------------- LDL_FENCE rises across runs
for i in 1 2 3; do run fk -- sh -c 'echo $LDL_FENCE >> fences'; done
check "LDL_FENCE rises across runs ($(tr '\n' ' ' < fences))" \
  '[ $(wc -l < fences) = 3 ] && [ "$(sort -n -u fences)" = "$(cat fences)" ] && [ "$(head -1 fences)" -ge 1 ]'

# ---------------------------------------------------------------- --status, --owner
runbad --status ST 2>/dev/null >/dev/null;    rc=$?; check "--status, store unreachable: exit 69 (got $rc)" '[ $rc = 69 ]'
run --status ST > st0;                        rc=$?
check "--status of a free key: exit 1, says free (got $rc: $(cat st0))" '[ $rc = 1 ] && [ "$(cat st0)" = "ST: free" ]'
run --owner "nightly job@host-7" ST -- sh -c 'echo $LDL_FENCE > st.f; while [ ! -e st.go ]; do sleep 0.05; done' & sa=$!
wait_for st.f
run --status ST > st1;                        rc=$?
check "--status while held: exit 0, owner and fence ($(cat st1))" \
  '[ $rc = 0 ] && grep -q "^ST: held by nightly job@host-7, fence $(cat st.f), [0-9]* ms left$" st1'
touch st.go; wait $sa
run --status ST > st2;                        rc=$?
check "--status after the release: free again (got $rc)" '[ $rc = 1 ] && grep -q "ST: free" st2'
export LDLBIN="$bin" LDLS="${S:-}" LDLSV="${SV:-}"
if [ "$kind" = pg ]; then
  run ST2 -- sh -c 'echo $LDL_FENCE > st2.f; "$LDLBIN" --pg "$LDLSV" --status ST2 > st3'
else
  run ST2 -- sh -c 'echo $LDL_FENCE > st2.f; "$LDLBIN" $LDLS --status ST2 > st3'
fi
check "the default owner is ldl-run@HOST:PID ($(cat st3))" \
  'grep -q "^ST2: held by ldl-run@[^:]*:[0-9]*, fence $(cat st2.f), " st3'

if [ "$kind" = pg ]; then   # a table created before v0.2 (three columns): no owner, still works
  psql "$SV" -qc "DROP TABLE IF EXISTS ldl_old; CREATE TABLE ldl_old (key text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 1), expires_at timestamptz NOT NULL)" >/dev/null 2>&1
  run --table ldl_old OLD -- sh -c '"$LDLBIN" --pg "$LDLSV" --table ldl_old --status OLD > st4'; rc=$?
  check "a v0.1 table: the run works and --status says no owner ($(cat st4 2>/dev/null))" \
    '[ $rc = 0 ] && grep -q "^OLD: held by (no owner recorded), fence [0-9]*, " st4'
fi

# ---------------------------------------------------------------- exclusion, -n, -w
# A holds K until the file "go" exists; B and C wait (default: no limit), D waits with
# -w 30; every child brackets its work with mkdir/rmdir of "inside": an overlap fails mkdir.
job='mkdir inside || echo OVERLAP >> log; echo "start $1 $LDL_FENCE" >> log;
     if [ "$1" = A ]; then while [ ! -e go ]; do sleep 0.05; done; else sleep 0.2; fi;
     echo "end $1" >> log; rmdir inside'
run K -- sh -c "$job" sh A & a=$!
wait_for log
run K -- sh -c "$job" sh B & b=$!
run K -- sh -c "$job" sh C & c=$!
sleep 0.8
check "while A holds, B and C do not run" '[ "$(grep -c start log)" = 1 ]'
run -n K -- touch n.ran;                      rc=$?
check "-n while held: exit 1, command not run (got $rc)" '[ $rc = 1 ] && [ ! -e n.ran ]'
run -n -E 42 K -- touch n.ran;                rc=$?
check "-n -E 42 while held: exit 42 (got $rc)" '[ $rc = 42 ] && [ ! -e n.ran ]'
run -w 0.4 K -- touch w.ran;                  rc=$?
check "-w 0.4 while held: exit 1, command not run (got $rc)" '[ $rc = 1 ] && [ ! -e w.ran ]'
run -w 0.4 -E 0 K -- touch w.ran;             rc=$?
check "-w 0.4 -E 0 while held: exit 0, command not run (got $rc)" '[ $rc = 0 ] && [ ! -e w.ran ]'
TMO="timeout -k 2 10"
run -w 0 K -- touch w0.ran;                   rc=$?
TMO="timeout -k 5 60"
check "-w 0 while held: one attempt, exit 1 (got $rc)" '[ $rc = 1 ] && [ ! -e w0.ran ]'
xrun K -- touch sa.ran & l=$!
sleep 0.5; kill -INT $l; bwait $l
check "INT while waiting for KEY: exit 130, the command did not run (got $rc)" '[ $rc = 130 ] && [ ! -e sa.ran ]'
run -w 30 K -- sh -c "$job" sh D & dd=$!
sleep 0.3
touch go
wait $a; ra=$?; wait $b; rb=$?; wait $c; rc_=$?; wait $dd; rd=$?
check "A B C D exit 0 ($ra $rb $rc_ $rd)" '[ "$ra$rb$rc_$rd" = 0000 ]'
check "no overlap" '! grep -q OVERLAP log'
check "four runs, each start followed by its own end" \
  '[ "$(grep -c start log)" = 4 ] && awk '\''/^start/{if(open!="")exit 1; open=$2; next} /^end/{if($2!=open)exit 1; open=""} END{exit open!=""}'\'' log'
check "A ran first, the waiters after it ended" '[ "$(head -1 log | cut -d" " -f2)" = A ] && [ "$(sed -n 2p log)" = "end A" ]'
check "fences rise in run order" \
  '[ "$(grep start log | cut -d" " -f3)" = "$(grep start log | cut -d" " -f3 | sort -n -u)" ]'
[ $fail = 0 ] || { echo "--- log"; cat log; } >&2

# ---------------------------------------------------------------- signals forwarded
xrun SK -- sh -c 'exec 2>/dev/null; trap "echo got TERM >> sig; exit 3" TERM; echo $$ > sig.ready; while :; do sleep 0.05; done' &
l=$!
wait_for sig.ready; kill -TERM $l; bwait $l "$(cat sig.ready)"
check "TERM forwarded: the child's trap ran, its exit 3 passes through (got $rc)" \
  '[ $rc = 3 ] && grep -q "got TERM" sig'
run -n SK -- true;                            rc=$?
check "released after the forwarded TERM: -n gets it (got $rc)" '[ $rc = 0 ]'
xrun SK -- sh -c 'exec 2>/dev/null; trap "echo got INT >> sig; exit 4" INT; echo $$ > int.ready; while :; do sleep 0.05; done' &
l=$!
wait_for int.ready; kill -INT $l; bwait $l "$(cat int.ready)"
check "INT forwarded: exit 4 passes through (got $rc)" '[ $rc = 4 ] && grep -q "got INT" sig'
# the grandchild shrugs off the SIGTERM that ends a group's leftovers (it may come first)
printf 'trap "echo gc USR1 >> gusr1; exit 0" USR1\ntrap : TERM\necho $$ > gu.pid\nwhile :; do sleep 0.05; done\n' > gu.sh
xrun --grace 2 SK -- sh -c 'echo $$ > gu.grp; sh gu.sh 2>/dev/null & wait' &
l=$!
wait_for gu.pid; kill -USR1 $l; bwait $l "$(cat gu.grp)" "$(cat gu.pid)"
check "USR1 forwarded to the whole group: the grandchild's trap ran, the child died of it: 138 (got $rc)" \
  '[ $rc = 138 ] && grep -q "gc USR1" gusr1'
xrun SK -- sh -c 'echo $$ > gc.grp; sleep 60 & echo $! > gc.pid; wait' &
l=$!
wait_for gc.pid; kill -TERM $l; bwait $l "$(cat gc.grp)" "$(cat gc.pid)"
check "TERM to ldl-run reaches the grandchild too: 143 (got $rc)" '[ $rc = 143 ] && ! alive "$(cat gc.pid)"'
run SK -- sh -c 'sleep 60 & echo $! > left.pid; exit 0';   rc=$?
check "a process left in the group when the command exits is terminated (rc $rc)" \
  '[ $rc = 0 ] && [ -s left.pid ] && ! alive "$(cat left.pid)"'

# ---------------------------------------------------------------- loss: the store stops
# The command starts a grandchild (gc.sh) that loops forever and notes a SIGTERM in
# "gterm". $2 is the command's prologue: with trap "" TERM the command and its grandchild
# ignore SIGTERM, and only the SIGKILL after --grace can end them.
printf 'trap "echo gc >> gterm; exit 0" TERM\nwhile :; do sleep 0.05; done\n' > gc.sh
lost_case() {
  name=$1; prologue=$2
  rm -f c.pid g.pid lf lf2 gterm
  body="$prologue"' echo $LDL_FENCE > lf; sh gc.sh 2>/dev/null & echo $! > g.pid; echo $$ > c.pid; wait'
  if [ "$kind" = pg ]; then
    exec "$bin" --pg "$SV application_name=ldlrun_stop" --ttl 1500 --grace 0.5 LK -- \
      sh -c "$body" 2>lost.err &
  else
    xrun --ttl 1500 --grace 0.5 LK -- sh -c "$body" 2>lost.err &
  fi
  l=$!
  wait_for c.pid; wait_for g.pid
  if [ "$kind" = pg ]; then
    stopped=$(psql "$SV" -Atc "select pid from pg_stat_activity where application_name = 'ldlrun_stop'")
  else
    stopped=$rpid
  fi
  [ -n "$stopped" ] || bad "$name: no store process to stop"
  kill -STOP $stopped
  # a bound, not a timing check: the TTL is 1.5 s and the grace 0.5 s
  i=0; while alive $l && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  if alive $l; then
    bad "$name: ldl-run still running 20 s after the store stopped"
    kill -9 $l "$(cat g.pid)" "$(cat c.pid)" 2>/dev/null
  fi
  wait $l; rc=$?
  kill -CONT $stopped; stopped=
  check "$name: exit 75 on loss (got $rc)" '[ $rc = 75 ]'
  check "$name: the command is gone" '! alive "$(cat c.pid)"'
  check "$name: its grandchild is gone" '! alive "$(cat g.pid)"'
  check "$name: says the lease was (about to be) lost" 'grep -q "lost (LEASE_EXPIRED)\|no renew succeeded" lost.err'
  [ $fail = 0 ] || cat lost.err >&2
  run -w 10 LK -- sh -c 'echo $LDL_FENCE > lf2';   rc=$?
  check "$name: taken again after the TTL with a higher fence ($(cat lf) -> $(cat lf2 2>/dev/null))" \
    '[ $rc = 0 ] && [ "$(cat lf2)" -gt "$(cat lf)" ]'
}
if [ "$kind" = redis ]; then
  kill -STOP $rpid; stopped=$rpid
  run -w 0.3 NK -- touch silent.ran 2>silent.err; rc=$?
  kill -CONT $rpid; stopped=
  check "a stopped store while acquiring: exit 69, command not run (got $rc)" '[ $rc = 69 ] && [ ! -e silent.ran ]'
fi
lost_case "loss, TERM obeyed" ''
check "loss, TERM obeyed: the SIGTERM reached the grandchild" '[ -s gterm ]'
check "loss, TERM obeyed: no SIGKILL was needed" '! grep -q "grace period over: SIGKILL" lost.err'
lost_case "loss, TERM ignored (SIGKILL after --grace)" 'trap "" TERM;'
check "loss, TERM ignored: the SIGKILL was needed" 'grep -q "grace period over: SIGKILL" lost.err && [ ! -e gterm ]'

# ---------------------------------------------------------------- the store says "not yours"
# the lease row/key is deleted under the running job: the next renew answers 0
# (HEARTBEAT_FAILED), the job gets SIGTERM at once (its trap notes it), exit 75
rm -f hb.ready hb.term
xrun --ttl 3000 --grace 0.5 HB -- sh -c 'trap "echo t > hb.term; exit 0" TERM; echo $$ > hb.ready; while :; do sleep 0.05; done' 2>hb.err &
l=$!
wait_for hb.ready
if [ "$kind" = pg ]; then psql "$SV" -qc "DELETE FROM ldl_lease WHERE key = 'HB'" >/dev/null
else redis-cli -p "$port" del "{ldl:HB}:lease" >/dev/null; fi
bwait $l "$(cat hb.ready)"
check "the store answers a renew with 'not yours': exit 75, SIGTERM at once (got $rc: $(cat hb.err))" \
  '[ $rc = 75 ] && [ -s hb.term ] && grep -q "lost (HEARTBEAT_FAILED)" hb.err'

# ---------------------------------------------------------------- one host cut off: a frozen proxy
# freeze_proxy.py relays to the store; SIGSTOP on it freezes the link of the ldl-run behind
# it only (TCP still connects, nothing is answered), the others reach the store directly.
if [ "$kind" = pg ]; then proxy "$LDL_PG_PORT"; else proxy "$port"; fi
# prun / pxrun: ldl-run through the proxy (pg: no connect_timeout in the conninfo)
prun() {
  if [ "$kind" = pg ]; then $TMO "$bin" --pg "host=127.0.0.1 port=$pport user=ldl dbname=postgres" "$@"
  else $TMO "$bin" --redis "127.0.0.1:$pport" "$@"; fi
}
pxrun() {
  if [ "$kind" = pg ]; then exec "$bin" --pg "host=127.0.0.1 port=$pport user=ldl dbname=postgres" "$@"
  else exec "$bin" --redis "127.0.0.1:$pport" "$@"; fi
}
prun PX -- touch px.ran;                      rc=$?; check "through the proxy: runs (got $rc)" '[ $rc = 0 ] && [ -e px.ran ]'
kill -STOP $ppid_
# bounded answers: 10 s is a bound for the suite, far above the 2 s --store-timeout
TMO="timeout -k 2 10"
prun -n FZ -- touch fz.ran 2>fz.err;          rc=$?
check "-n against a frozen store: exit 69 within the bound, nothing ran (got $rc: $(cat fz.err))" \
  '[ $rc = 69 ] && [ ! -e fz.ran ] && grep -q "no answer within 2000 ms" fz.err'
prun -w 1 FZ -- touch fz.ran 2>fz.err;        rc=$?
check "-w 1 against a frozen store: exit 69 within the bound (got $rc)" '[ $rc = 69 ] && [ ! -e fz.ran ]'
TMO="timeout -k 5 60"
pxrun FZ -- touch fz.ran 2>/dev/null & l=$!
sleep 0.5; kill -TERM $l; bwait $l
check "TERM while connecting to / asking a frozen store: exit 143 (got $rc)" '[ $rc = 143 ] && [ ! -e fz.ran ]'
kill -CONT $ppid_
# the command freezes the link, then exits: the release is never answered
TMO="timeout -k 2 10"
prun RB -- sh -c "kill -STOP $ppid_" 2>rb.err; rc=$?
TMO="timeout -k 5 60"
kill -CONT $ppid_
check "a release the frozen store never answers: bounded, exit 0, says so (got $rc: $(cat rb.err))" \
  '[ $rc = 0 ] && grep -q "not confirmed" rb.err'
# the loss window: A (behind the proxy, default --grace, TTL 3 s) ignores SIGTERM and
# notes the time every 20 ms until it dies; the link freezes; B waits for KEY directly.
# A's job must be dead before B's starts: SIGKILL at A's local deadline, drift before
# the store frees KEY.
rm -f a.ts b.ts
printf 'trap "" TERM\nwhile :; do date +%%s%%N >> a.ts; sleep 0.02; done\n' > ow.sh
pxrun --ttl 3000 OW -- sh ow.sh 2>ow.err & l=$!
wait_for a.ts; kill -STOP $ppid_
# B tries every ~50 ms (-n in a loop, not -w's backoff), so it starts at once when the
# store frees KEY
i=0; while [ ! -s b.ts ] && [ $i -lt 300 ]; do
  run -n OW -- sh -c 'date +%s%N > b.ts'; sleep 0.02; i=$((i + 1))
done
[ -s b.ts ]; rb=$?
bwait $l; ra=$rc
kill -CONT $ppid_
check "loss window: A exits 75 ($ra), B runs (0, $rb)" '[ $ra = 75 ] && [ $rb = 0 ]'
check "loss window: A's TERM-ignoring job died before B's started" \
  '[ -s b.ts ] && [ "$(tail -n 1 a.ts)" -lt "$(cat b.ts)" ]'
[ -s b.ts ] && [ -s a.ts ] && echo "note [$kind]: loss window: A's job died $(( ($(cat b.ts) - $(tail -n 1 a.ts)) / 1000000 )) ms before B's job started" >&2
[ $fail = 0 ] || cat ow.err >&2
unproxy

if [ "$kind" = redis ]; then
  # ---------------------------------------------------------------- escapes (redis)
  python3 "$here/hostile_resp.py" "$d/hr.port" & hpid=$!
  echo $hpid > "$LDL_TEST_DIR/cli-hostile.pid"
  wait_for "$d/hr.port"
  $TMO "$bin" --redis "127.0.0.1:$(cat hr.port)" -n HK -- touch hr.ran 2>hr.err; rc=$?
  check "a server error holding terminal bytes is printed escaped (rc $rc: $(cat hr.err))" \
    '[ $rc = 69 ] && [ ! -e hr.ran ] && clean hr.err && grep -q "x1b\]0;owned" hr.err'
  $TMO "$bin" --redis "127.0.0.1:$(cat hr.port)" --status HK >hr.out 2>hr.err; rc=$?
  check "--status on that server: 69, escaped (rc $rc: $(cat hr.err))" '[ $rc = 69 ] && clean hr.err && clean hr.out'
  kill -9 $hpid; wait $hpid 2>/dev/null; hpid=
  redis-cli -p "$port" set "{ldl:OWB}:lease" 7 px 60000 >/dev/null
  redis-cli -p "$port" set "{ldl:OWB}:owner" "$(printf '7 ev\233il\033[2J')" >/dev/null
  run --status OWB >ow.out 2>ow.err2;          rc=$?
  check "--status, an owner of raw bytes in the store: refused, nothing raw printed (rc $rc)" \
    '[ $rc = 69 ] && clean ow.out && clean ow.err2'
  redis-cli -p "$port" rpush "{ldl:WT}:lease" x >/dev/null
  run --status WT >wt.out 2>wt.err;            rc=$?
  check "--status when the store fails after connecting: 69, not free (rc $rc: $(cat wt.out))" \
    '[ $rc = 69 ] && ! grep -q free wt.out && [ -s wt.err ]'

  # ---------------------------------------------------------------- riding out a restart (redis)
  # a redis-server that keeps the lease across kill -9 (appendfsync always), restarted
  # on the same port
  mkdir -p "$d/aof"; p2=
  start_r2() {
    redis-server --port "$1" --bind 127.0.0.1 --dir "$d/aof" --save '' --appendonly yes \
      --appendfsync always --daemonize no --logfile "$d/r2.log" & r2pid=$!
    echo $r2pid > "$LDL_TEST_DIR/cli-r2.pid"
    i=0; while [ $i -lt 200 ]; do
      redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG && return 0
      alive $r2pid || return 1
      sleep 0.05; i=$((i + 1))
    done; return 1
  }
  for try in 1 2 3 4 5; do
    p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
    start_r2 "$p" && { p2=$p; break; }
    kill -9 $r2pid 2>/dev/null; r2pid=
  done
  if [ -z "$p2" ]; then bad "the persistent redis-server did not start"; else
    kill9_r2() { kill -9 $r2pid; wait $r2pid 2>/dev/null; r2pid=; }
    # shorter than the window: TTL 6 s, heartbeat 2 s, --grace 0.5: SIGTERM would come
    # 5.4 s after the last renew; the server is down from 0.3 s to about 2.5 s after
    # the grant, so the renew due at 2 s meets the dead link and must be ridden out
    exec "$bin" --redis "127.0.0.1:$p2" --ttl 6000 --grace 0.5 RS -- \
      sh -c 'echo $LDL_FENCE > rs.f; while [ ! -e rs.go ]; do sleep 0.05; done' 2>rs.err & l=$!
    wait_for rs.f; sleep 0.3
    kill9_r2; sleep 2.2; start_r2 "$p2" || bad "restart of the persistent redis-server failed"
    sleep 6.5  # past the TTL: the lease lives only if it was renewed on the restarted server
    check "a store restart shorter than the window: the job keeps running" 'alive $l'
    $TMO "$bin" --redis "127.0.0.1:$p2" --status RS > rs.st
    check "... and the lease is still its own ($(cat rs.st))" 'grep -q "^RS: held by .*, fence $(cat rs.f), " rs.st'
    touch rs.go; bwait $l
    check "... and it exits 0 at the end (got $rc)" '[ $rc = 0 ]'
    [ $fail = 0 ] || cat rs.err >&2
    # longer than the window: the job is ended by the lease's deadline, exit 75
    exec "$bin" --redis "127.0.0.1:$p2" --ttl 2000 RL -- \
      sh -c 'echo $LDL_FENCE > rl.f; echo $$ > rl.pid; while :; do sleep 0.05; done' 2>rl.err & l=$!
    wait_for rl.pid
    kill9_r2; sleep 3; start_r2 "$p2" || bad "restart of the persistent redis-server failed"
    bwait $l "$(cat rl.pid)"
    check "a store restart longer than the window: exit 75, the job is gone (got $rc)" \
      '[ $rc = 75 ] && ! alive "$(cat rl.pid)"'
    $TMO "$bin" --redis "127.0.0.1:$p2" -w 10 RL -- sh -c 'echo $LDL_FENCE > rl2.f'; rc=$?
    check "... and KEY is taken again on the restarted store with a higher fence" \
      '[ $rc = 0 ] && [ "$(cat rl2.f)" -gt "$(cat rl.f)" ]'
    kill9_r2
  fi
fi

if [ "$kind" = pg ]; then
  # ---------------------------------------------------------------- riding out a restart (pg)
  # an immediate shutdown (a crash: WAL replay) and a start, while the job runs. TTL 10 s,
  # heartbeat 3.3 s, --grace 1: SIGTERM would come 8.9 s after the last renew
  exec "$bin" --pg "$SV" --ttl 10000 --grace 1 PR -- \
    sh -c 'echo $LDL_FENCE > pr.f; while [ ! -e pr.go ]; do sleep 0.05; done' 2>pr.err & l=$!
  wait_for pr.f; sleep 0.3
  "$LDL_PG_CTL" crash; sleep 3.5; "$LDL_PG_CTL" start || bad "postgres did not start again"
  sleep 7    # past the TTL: the lease lives only if a renew reached the restarted server
  check "a PostgreSQL restart shorter than the window: the job keeps running" 'alive $l'
  run --status PR > pr.st
  check "... and the lease is still its own ($(cat pr.st))" 'grep -q "^PR: held by .*, fence $(cat pr.f), " pr.st'
  touch pr.go; bwait $l
  check "... and it exits 0 at the end (got $rc)" '[ $rc = 0 ]'
  [ $fail = 0 ] || cat pr.err >&2
fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
