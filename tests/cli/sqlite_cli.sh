#!/bin/sh
# sqlite_cli.sh BIN -- `ldl-run --sqlite PATH` (issue 22): exclusion, rising fences, -n/-w/-E,
# --status/--owner, kill-on-loss (the lease taken from under it; the file locked past the
# TTL), bad files. No server: one SQLite file in a temp dir, shared by every ldl-run here.
# Run from `make test-sqlite`. Children append markers to files; every check reads what
# really happened. Sleeps only order events; nothing asserts a duration.
# Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: sqlite_cli.sh BIN}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-cli-sqlite.XXXXXX") || exit 2
holder=
cleanup() { [ -n "$holder" ] && kill -9 "$holder" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
db=$d/locks.db
label="sqlite"
. "$here/lib.sh"         # check, wait_for, alive, clean, freeport
run() { "$bin" --sqlite "$db" "$@"; }

# ---------------------------------------------------------------- fences, status, owner
for i in 1 2 3; do run F -- sh -c 'echo $LDL_FENCE >> fences'; done
check "LDL_FENCE is 1, 2, 3 across runs ($(tr '\n' ' ' < fences))" '[ "$(tr "\n" " " < fences)" = "1 2 3 " ]'
check "the file was created, in WAL mode" '[ "$(sqlite3 "$db" "PRAGMA journal_mode")" = wal ]'
run --status F > st0; rc=$?
check "--status of a released key: exit 1, free (got $rc: $(cat st0))" '[ $rc = 1 ] && [ "$(cat st0)" = "F: free" ]'
run --owner "job 7@box" ST -- sh -c 'echo $LDL_FENCE > st.f; while [ ! -e st.go ]; do sleep 0.05; done' & sa=$!
wait_for st.f
run --status ST > st1; rc=$?
check "--status while held: owner and fence ($(cat st1))" \
  '[ $rc = 0 ] && grep -q "^ST: held by job 7@box, fence $(cat st.f), [0-9]* ms left$" st1'
touch st.go; wait $sa; rc=$?
check "the holder exits 0 (got $rc)" '[ $rc = 0 ]'
run --status ST > st2; rc=$?
check "free after the release (got $rc)" '[ $rc = 1 ] && grep -q "ST: free" st2'

# ---------------------------------------------------------------- exclusion, -n, -w, -E
job='mkdir inside || echo OVERLAP >> log; echo "start $1 $LDL_FENCE" >> log;
     if [ "$1" = A ]; then while [ ! -e go ]; do sleep 0.05; done; else sleep 0.2; fi;
     echo "end $1" >> log; rmdir inside'
run K -- sh -c "$job" sh A & a=$!
wait_for log
run K -- sh -c "$job" sh B & b=$!
run K -- sh -c "$job" sh C & c=$!
sleep 0.8
check "while A holds, B and C do not run" '[ "$(grep -c start log)" = 1 ]'
run -n K -- touch n.ran; rc=$?
check "-n while held: exit 1, not run (got $rc)" '[ $rc = 1 ] && [ ! -e n.ran ]'
run -n -E 42 K -- touch n.ran; rc=$?
check "-n -E 42 while held: exit 42 (got $rc)" '[ $rc = 42 ] && [ ! -e n.ran ]'
run -w 0.4 K -- touch w.ran; rc=$?
check "-w 0.4 while held: exit 1, not run (got $rc)" '[ $rc = 1 ] && [ ! -e w.ran ]'
run -w 30 K -- sh -c "$job" sh D & dd=$!
sleep 0.3
touch go
wait $a; ra=$?; wait $b; rb=$?; wait $c; rc_=$?; wait $dd; rd=$?
check "A B C D exit 0 ($ra $rb $rc_ $rd)" '[ "$ra$rb$rc_$rd" = 0000 ]'
check "no overlap" '! grep -q OVERLAP log'
check "four runs, each start followed by its own end" \
  '[ "$(grep -c start log)" = 4 ] && awk '\''/^start/{if(open!="")exit 1; open=$2; next} /^end/{if($2!=open)exit 1; open=""} END{exit open!=""}'\'' log'
check "fences rise in run order ($(grep start log | cut -d" " -f3 | tr "\n" " "))" \
  '[ "$(grep start log | cut -d" " -f3 | tr "\n" " ")" = "1 2 3 4 " ]'
[ $fail = 0 ] || { echo "--- log"; cat log; } >&2

# ---------------------------------------------------------------- kill on loss
# The command starts a grandchild that loops; both must be gone when ldl-run exits 75.
printf 'trap "exit 0" TERM\nwhile :; do sleep 0.05; done\n' > gc.sh
lockp=
lost_case() {   # NAME HOW REASON
  name=$1; how=$2; reason=$3
  rm -f c.pid g.pid lf lf2
  "$bin" --sqlite "$db" --ttl 1500 --grace 0.5 LK -- \
    sh -c 'echo $LDL_FENCE > lf; sh gc.sh & echo $! > g.pid; echo $$ > c.pid; wait' 2>lost.err &
  l=$!; holder=$l
  wait_for c.pid; wait_for g.pid
  eval "$how"
  i=0; while alive $l && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done   # a bound, not a timing check
  if alive $l; then bad "$name: ldl-run still running 20 s later"; kill -9 $l "$(cat g.pid)" "$(cat c.pid)" 2>/dev/null; fi
  wait $l; rc=$?; holder=
  check "$name: exit 75 (got $rc)" '[ $rc = 75 ]'
  check "$name: the command is gone" '! alive "$(cat c.pid)"'
  check "$name: its grandchild is gone" '! alive "$(cat g.pid)"'
  check "$name: says lost ($reason)" 'grep -q "lost ($reason" lost.err'
  [ $fail = 0 ] || cat lost.err >&2
  [ -n "$lockp" ] && wait $lockp; lockp=       # the other writer is done
  run -w 10 LK -- sh -c 'echo $LDL_FENCE > lf2'; rc=$?
  check "$name: taken again with a higher fence ($(cat lf) -> $(cat lf2 2>/dev/null))" \
    '[ $rc = 0 ] && [ "$(cat lf2)" -gt "$(cat lf)" ]'
}
# the lease is taken from under it: its row says another boot wrote it, the next renew is 0
lost_case "lease taken" \
  'sqlite3 -cmd ".timeout 2000" "$db" "UPDATE ldl_lease SET boot = '\''00000000-0000-4000-8000-000000000000'\'' WHERE key = '\''LK'\''"' \
  "HEARTBEAT_FAILED"
# another writer holds the file past the TTL: renews are store errors, never a grant
lost_case "file locked" \
  '{ echo ".timeout 2000"; echo "BEGIN IMMEDIATE;"; sleep 3; echo "ROLLBACK;"; } | sqlite3 "$db" & lockp=$!' \
  '[A-Z_]*)\|no renew succeeded'    # store errors are ridden out: TERM comes when only --grace is left

# ---------------------------------------------------------------- the fence protocol from the shell
# a shell job follows docs/sqlite.md's statement inside its own transaction, with $LDL_FENCE
fq() {  # FENCE: prints the row the statement returns (empty = stale), committing only then
  sqlite3 -cmd ".timeout 2000" "$db" "BEGIN IMMEDIATE; INSERT INTO main.\"ldl_lease_fence\" AS f (resource, fence)
    VALUES ('shell-res', $1) ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence
    WHERE f.fence <= excluded.fence RETURNING fence; COMMIT;"
}
run SH -- true; run SH -- sh -c 'echo $LDL_FENCE > sh.f'     # fence 2: 1 is a valid lower one
f=$(cat sh.f)
check "shell: the first fence passes ($(fq "$f"))" '[ "$(fq "$f")" = "$f" ]'
check "shell: an equal fence passes" '[ "$(fq "$f")" = "$f" ]'
check "shell: a lower fence is stale (not an error)" '[ "$f" -ge 2 ] && [ -z "$(fq $((f - 1)) 2>&1)" ]'
check "shell: the mark is the fence" '[ "$(sqlite3 "$db" "SELECT fence FROM ldl_lease_fence WHERE resource = '\''shell-res'\''")" = "$f" ]'

# ---------------------------------------------------------------- bad files and names
printf 'not a database at all, just text that is long enough for a header..............' > junk.db
"$bin" --sqlite junk.db J -- true 2> junk.err; rc=$?
check "a non-SQLite file: exit 69 and says so (got $rc)" '[ $rc = 69 ] && grep -q "not a SQLite database" junk.err'
"$bin" --sqlite "$d/no/such/dir.db" J -- true 2> nodir.err; rc=$?
check "a file that cannot be made: exit 69 (got $rc)" '[ $rc = 69 ] && grep -q "cannot open" nodir.err'
"$bin" --sqlite "$db" --table 'bad"name' J -- true 2> tbl.err; rc=$?
check "a bad table name: exit 64 (got $rc)" '[ $rc = 64 ]'
sqlite3 "$db" "CREATE TRIGGER t AFTER UPDATE ON ldl_lease BEGIN SELECT 1; END"
"$bin" --sqlite "$db" J -- touch trig.ran 2> trig.err; rc=$?
check "a trigger on the table: exit 69, not run (got $rc)" '[ $rc = 69 ] && [ ! -e trig.ran ] && grep -q "triggers" trig.err'

echo "$pass passed, $fail failed"
[ $fail = 0 ]
