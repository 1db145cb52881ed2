#!/bin/sh
# ldl_run_test.sh BIN STORE -- cli/ldl-run against a real store (issue 16).
#   STORE = redis   run inside tests/store/with_redis.sh: starts its own redis-server on
#                   127.0.0.1 (free port, pid in $LDL_TEST_DIR for that wrapper's trap)
#   STORE = pg      run inside tests/store/with_pg.sh: uses $LDL_PG_CONNINFO
#   STORE = memory  no server (the in-process MemoryStore)
# Children append markers to files; every check reads what really happened (exit codes,
# markers, fences, pids). Sleeps only order events; nothing asserts a duration.
# Last line: "N passed, N failed".
set -u
bin=${1:?usage: ldl_run_test.sh BIN redis|pg|memory}
kind=${2:?usage: ldl_run_test.sh BIN redis|pg|memory}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-cli.XXXXXX") || exit 2
rpid=
cleanup() {
  [ -n "$rpid" ] && { kill -CONT "$rpid" 2>/dev/null; kill -9 "$rpid" 2>/dev/null; }
  [ -n "${stopped:-}" ] && kill -CONT "$stopped" 2>/dev/null
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL [$kind]: $*" >&2; }
check() { if eval "$2"; then ok; else bad "$1"; fi; }
# wait_for FILE: up to 15 s for FILE to exist and be non-empty
wait_for() { i=0; while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done; [ -s "$1" ]; }
alive() { kill -0 "$1" 2>/dev/null; }
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
  port=
  for try in 1 2 3 4 5; do
    p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 ))
    redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly no \
      --daemonize no --logfile "$d/redis.log" & rpid=$!
    echo $rpid > "$LDL_TEST_DIR/cli-redis.pid"
    i=0
    while [ $i -lt 100 ]; do
      redis-cli -h 127.0.0.1 -p "$p" ping 2>/dev/null | grep -q PONG && { port=$p; break; }
      alive $rpid || break
      sleep 0.05; i=$((i + 1))
    done
    [ -n "$port" ] && break
    kill -9 $rpid 2>/dev/null; rpid=
  done
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
  if [ "$kind" = pg ]; then "$bin" --pg "$SV" "$@"; else "$bin" $S "$@"; fi
}
# xrun ARGS... &: the same, exec'd, so that $! is ldl-run itself (to signal it)
xrun() {
  if [ "$kind" = pg ]; then exec "$bin" --pg "$SV" "$@"; else exec "$bin" $S "$@"; fi
}
runbad() {
  if [ "$kind" = pg ]; then "$bin" --pg "$BADV" "$@"; else "$bin" $BADSTORE "$@"; fi
}

# ---------------------------------------------------------------- usage and exit codes
"$bin" k true 2>/dev/null;                    rc=$?; check "no store: exit 64 (got $rc)" '[ $rc = 64 ]'
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
"$bin" --memory --redis 127.0.0.1:1 k true 2>/dev/null; rc=$?
check "two stores: exit 64 (got $rc)" '[ $rc = 64 ]'
"$bin" --help > "$d/help";                    rc=$?
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

echo "$pass passed, $fail failed"
[ $fail = 0 ]
