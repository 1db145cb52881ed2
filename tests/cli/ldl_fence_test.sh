#!/bin/sh
# ldl_fence_test.sh FENCE_BIN RUN_BIN -- cli/ldl-fence against a real PostgreSQL and a
# real redis-server (issue 19 item 3), with ldl-run handing out the fences.
# Run inside both wrappers (mk/fence_cli.mk):
#   tests/store/with_pg.sh 'tests/store/with_redis.sh sh tests/cli/ldl_fence_test.sh BIN RUN'
# with_pg.sh gives $LDL_PG_CONNINFO; this script starts its own redis-server on
# 127.0.0.1 (free port, pid in $LDL_TEST_DIR for with_redis.sh's trap), a listener
# that notes every connection made to it (bad input must never reach a store), and
# tests/cli/freeze_proxy.py (SIGSTOP on it: a store that never answers).
# Every check reads what really happened: exit codes, the table's rows and the
# fence table's mark through psql, the keys and the mark through redis-cli.
# Every call is bounded through timeout(1). Last line: "N passed, N failed".
set -u
fbin=${1:?usage: ldl_fence_test.sh FENCE_BIN RUN_BIN}
rbin=${2:?usage: ldl_fence_test.sh FENCE_BIN RUN_BIN}
case $fbin in /*) ;; *) fbin=$(pwd)/$fbin ;; esac
case $rbin in /*) ;; *) rbin=$(pwd)/$rbin ;; esac
: "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
: "${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}"
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-fence.XXXXXX") || exit 2
rpid=; lpid=; ppid_=; apid=
TMO="timeout -k 5 60"
cleanup() {
  for p in "$rpid" "$lpid" "$ppid_" "$apid"; do
    [ -n "$p" ] && { kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; }
  done
  [ -s "$d/a.pid" ] && { kill -CONT "-$(cat "$d/a.pid")"; kill -9 "-$(cat "$d/a.pid")"; } 2>/dev/null
  [ -s "$d/dns.pid" ] && kill -9 "$(cat "$d/dns.pid")" 2>/dev/null
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
label=""
. "$here/lib.sh"         # check, wait_for, alive, clean, freeport
CI=$LDL_PG_CONNINFO
q() { psql "$CI" -XAtqc "$1" 2>&1; }

# ---------------------------------------------------------------- the servers
. "$here/redis_start.sh"
start_redis "$LDL_TEST_DIR/fence-redis.pid"
[ -n "$port" ] || { echo "redis-server did not start"; echo "0 passed, 1 failed"; exit 1; }
R="127.0.0.1:$port"
rc_() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
# the listener: accepts, notes "c" in conn.log for each connection, never answers
cat > listen.py <<'EOF'
import socket, sys, os
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0)); ls.listen(16)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % ls.getsockname()[1]); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
keep = []
while True:
    c, _ = ls.accept(); keep.append(c)
    with open(sys.argv[2], "a") as f: f.write("c\n")
EOF
: > conn.log
python3 listen.py lport conn.log & lpid=$!
echo $lpid > "$LDL_TEST_DIR/fence-listen.pid"
wait_for lport || { echo "listener did not start"; echo "0 passed, 1 failed"; exit 1; }
LP=$(cat lport)
LCI="host=127.0.0.1 port=$LP user=ldl dbname=postgres connect_timeout=2"
nconn() { wc -l < conn.log | tr -d ' '; }

# f ARGS...: ldl-fence, bounded
f() { $TMO "$fbin" "$@"; }
# (a generous --store-timeout for a loaded machine; a check that wants its own gives it
# later on the line, and the last one counts)
fpg() { $TMO "$fbin" pg --conninfo "$CI" --store-timeout 20 "$@"; }
frd() { $TMO "$fbin" redis --redis "$R" --store-timeout 20 "$@"; }

q "CREATE TABLE doc (id int PRIMARY KEY, v text NOT NULL, fence bigint NOT NULL)" >/dev/null
q "CREATE TABLE wlog (fence bigint NOT NULL, v text NOT NULL)" >/dev/null
# w.sql V: the file every writer runs: its data and a log row, both carrying the
# fence ldl-fence set for the transaction
wsql() {
  cat <<EOF
INSERT INTO doc VALUES (1, '$1', current_setting('ldl.fence')::bigint)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence;
INSERT INTO wlog VALUES (current_setting('ldl.fence')::bigint, '$1');
EOF
}
mark() { q "SELECT fence FROM ldl_lease_fence WHERE resource = '$1'"; }
docv() { q "SELECT v || ' ' || fence FROM doc WHERE id = 1"; }
logn() { q "SELECT count(*) FROM wlog WHERE v = '$1'"; }

# ---------------------------------------------------------------- usage: refused before anything is sent
unset LDL_FENCE
wsql U > u.sql
f 2>/dev/null;                                       rc=$?; check "no arguments: exit 64 (got $rc)" '[ $rc = 64 ]'
f mysql --resource r u.sql 2>/dev/null;              rc=$?; check "unknown store: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --fence 3 u.sql 2>/dev/null;  rc=$?; check "pg without --resource: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --resource r u.sql 2>e.txt;   rc=$?
check "pg, no \$LDL_FENCE and no --fence: exit 64 and says so (got $rc)" '[ $rc = 64 ] && grep -q LDL_FENCE e.txt'
f pg --conninfo "$LCI" --fence 3 --resource r 2>/dev/null;          rc=$?; check "pg without FILE: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --fence 3 --resource r u.sql x 2>/dev/null;  rc=$?; check "pg with two files: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --fence 3 --resource r --keys 1 u.sql 2>/dev/null; rc=$?
check "pg with a redis option: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --fence 3 --resource r --store-timeout 0 u.sql 2>/dev/null; rc=$?
check "--store-timeout 0: exit 64 (got $rc)" '[ $rc = 64 ]'
f pg --conninfo "$LCI" --fence 3 --resource "$(head -c 1100 /dev/zero | tr '\0' x)" u.sql 2>/dev/null; rc=$?
check "pg, a resource of 1100 bytes: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 -- SET k v 2>/dev/null;  rc=$?; check "redis without --resource: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r 2>/dev/null; rc=$?; check "redis without a command: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --fence 3 --resource r -- SET k v 2>/dev/null;             rc=$?; check "redis without --redis: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r --keys 3 -- SET k v 2>/dev/null; rc=$?
check "redis --keys beyond the arguments: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r --keys x -- SET k v 2>/dev/null; rc=$?
check "redis --keys x: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r -- $(seq 1 70) 2>/dev/null; rc=$?
check "redis, 70 command arguments: exit 64 (got $rc)" '[ $rc = 64 ]'
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r --table t -- SET k v 2>/dev/null; rc=$?
check "redis with a pg option: exit 64 (got $rc)" '[ $rc = 64 ]'
# bad fences, from --fence and from $LDL_FENCE, to both stores
for fv in "" 0 -1 -5 +5 " 5" "5 " 5x abc 1.5 0x10 007 9223372036854775808 18446744073709551616 \
          99999999999999999999999; do
  f pg --conninfo "$LCI" --fence "$fv" --resource r u.sql 2>e1; r1=$?
  LDL_FENCE=$fv f pg --conninfo "$LCI" --resource r u.sql 2>e2; r2=$?
  f redis --redis "127.0.0.1:$LP" --fence "$fv" --resource r -- SET k v 2>e3; r3=$?
  LDL_FENCE=$fv f redis --redis "127.0.0.1:$LP" --resource r -- SET k v 2>e4; r4=$?
  check "fence '$fv' refused with 64 (--fence pg $r1, env pg $r2, --fence redis $r3, env redis $r4)" \
    '[ $r1 = 64 ] && [ $r2 = 64 ] && [ $r3 = 64 ] && [ $r4 = 64 ] && grep -q "bad fence\|no fence" e1 e2 e3 e4'
done
check "none of the refused calls connected anywhere ($(nconn) connections)" '[ "$(nconn)" = 0 ]'
# the control: the same listener sees a call with good input (so the 0 above can fail)
f pg --conninfo "$LCI" --fence 9223372036854775807 --resource r --store-timeout 0.5 u.sql 2>e.txt; rc=$?
check "control: a good call reaches the listener (rc $rc, $(nconn) connections)" '[ "$(nconn)" -ge 1 ]'
check "... and a store that never answers the connect: exit 124 within the bound (got $rc)" \
  '[ $rc = 124 ] && grep -q "no answer within 500 ms while connecting" e.txt'
n0=$(nconn)
LDL_FENCE=12 f redis --redis "127.0.0.1:$LP" --resource r --store-timeout 0.5 -- SET k v 2>e.txt; rc=$?
check "control: a good redis call reaches the listener, its silence: 124 (rc $rc)" \
  '[ "$(nconn)" -gt "$n0" ] && [ $rc = 124 ] && grep -q "outcome is unknown" e.txt'
# the default --store-timeout (2 s) is armed: no option, a silent listener (a conninfo
# without libpq's own connect_timeout): 124 after about 2 s, for both subcommands
t0=$(date +%s%N)
f pg --conninfo "host=127.0.0.1 port=$LP user=ldl dbname=postgres" --fence 3 --resource r u.sql 2>e.txt; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "pg, no --store-timeout, a silent listener: 124 after about 2 s (rc $rc, $ms ms)" \
  '[ $rc = 124 ] && [ $ms -ge 1900 ] && [ $ms -lt 5000 ] && grep -q "no answer within 2000 ms" e.txt'
t0=$(date +%s%N)
f redis --redis "127.0.0.1:$LP" --fence 3 --resource r -- SET k v 2>e.txt; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "redis, no --store-timeout, a silent listener: 124 after about 2 s (rc $rc, $ms ms)" \
  '[ $rc = 124 ] && [ $ms -ge 1900 ] && [ $ms -lt 5000 ] && grep -q "no answer within 2000 ms" e.txt'
# name resolution is inside --store-timeout too: a DNS server that never answers (in
# a private mount and network namespace: its own /etc/resolv.conf, a silent server on
# its own loopback port 53; needs root and unshare, else skipped with a note)
cat > dns.py <<'EOF2'
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 53))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind(("127.0.0.1", 53)); t.listen(8)
open(sys.argv[1], "w").write("up\n")
keep = []
while True:
    keep.append(u.recvfrom(4096))
EOF2
printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:3\n' > resolv.conf
cat > ns.sh <<'EOF2'
dir=$1; shift
ip link set lo up && mount --bind "$dir/resolv.conf" /etc/resolv.conf || exit 90
python3 "$dir/dns.py" "$dir/dns.up" & dp=$!
echo $dp > "$dir/dns.pid"
i=0; while [ ! -s "$dir/dns.up" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
t0=$(date +%s%N); "$@" 2>"$dir/e.txt"; rc=$?
echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$dir/ms.txt"
kill $dp; rm -f "$dir/dns.pid"; exit $rc
EOF2
if [ "$(id -u)" = 0 ] && unshare -mn true 2>/dev/null; then
  for sub in pg redis; do
    rm -f dns.up ms.txt e.txt
    if [ $sub = pg ]; then set -- pg --conninfo "host=silent.ldl.test port=5432 user=ldl dbname=postgres" u.sql
    else set -- redis --redis silent.ldl.test:6379 -- SET k v; fi
    sub1=$1; shift
    timeout -k 2 20 unshare -mn sh "$d/ns.sh" "$d" "$fbin" "$sub1" --fence 3 --resource r --store-timeout 1 "$@"; rc=$?
    ms=$(cat ms.txt 2>/dev/null)
    check "$sub: a resolver that never answers: 124 after about 1 s (rc $rc, ${ms:-?} ms: $(head -c 160 e.txt))" \
      '[ $rc = 124 ] && [ "${ms:-99999}" -lt 3000 ] && grep -q "no answer within 1000 ms" e.txt'
  done
else
  echo "note: not root or no unshare: the silent-resolver checks are skipped"
fi
f --help > help.txt;                                 rc=$?
check "--help exits 0 and lists the exit codes" \
  '[ $rc = 0 ] && grep -q "^  77 " help.txt && grep -q "^  64 " help.txt && grep -q "^  65 " help.txt && grep -q "^  69 " help.txt && grep -q "^  124 " help.txt'
f -V | grep -q '^ldl-fence ';                        rc=$?; check "-V names the tool" '[ $rc = 0 ]'

# ---------------------------------------------------------------- pg: the protocol through the tool
wsql A > a.sql; wsql A2 > a2.sql; wsql STALE > s.sql; wsql C > c.sql
fpg --resource doc --fence 5 a.sql;                  rc=$?
check "pg: fence 5 on a new resource commits (rc $rc; doc '$(docv)', mark $(mark doc))" \
  '[ $rc = 0 ] && [ "$(docv)" = "A 5" ] && [ "$(mark doc)" = 5 ]'
LDL_FENCE=5 fpg --resource doc a2.sql;               rc=$?
check "pg: an equal fence (from \$LDL_FENCE) passes (rc $rc; doc '$(docv)')" '[ $rc = 0 ] && [ "$(docv)" = "A2 5" ]'
LDL_FENCE=9 fpg --resource doc --fence 4 s.sql 2>e.txt; rc=$?
check "pg: a lower fence (--fence 4 over \$LDL_FENCE 9) exits 77 and says stale (rc $rc)" '[ $rc = 77 ] && grep -q "stale fence 4" e.txt'
check "... the table keeps the newer data ('$(docv)'), the mark stays 5, the file's log row is not visible" \
  '[ "$(docv)" = "A2 5" ] && [ "$(mark doc)" = 5 ] && [ "$(logn STALE)" = 0 ]'
fpg --resource doc --fence 6 c.sql;                  rc=$?
check "pg: a higher fence passes (rc $rc; '$(docv)', mark $(mark doc))" '[ $rc = 0 ] && [ "$(docv)" = "C 6" ] && [ "$(mark doc)" = 6 ]'
# the file fails half way: its first write and the raised mark roll back
{ wsql ERR; echo "SELECT 1 / 0;"; } > err.sql
fpg --resource doc --fence 8 err.sql 2>e.txt;         rc=$?
check "pg: a failing file exits 65 with the server's error (rc $rc: $(head -c 200 e.txt))" '[ $rc = 65 ] && grep -q "division by zero" e.txt'
check "... rolled back: the data ('$(docv)'), its log row and the mark ($(mark doc)) are unchanged" \
  '[ "$(docv)" = "C 6" ] && [ "$(logn ERR)" = 0 ] && [ "$(mark doc)" = 6 ]'
printf 'INSERT INTO wlog VALUES (1, $$SYN$$);\nSELEC oops;\n' > syn.sql
fpg --resource doc --fence 8 syn.sql 2>e.txt;         rc=$?
check "pg: a syntax error exits 65, nothing of the file is visible (rc $rc)" '[ $rc = 65 ] && [ "$(logn SYN)" = 0 ] && [ "$(mark doc)" = 6 ]'
# a file that would end the fenced transaction: refused before anything is sent
for tc in "COMMIT" "commit work" "END" "ROLLBACK" "abort" "BEGIN" "START TRANSACTION" \
          "PREPARE TRANSACTION 'x'" "COMMIT AND CHAIN"; do
  { wsql TC; echo "$tc;"; wsql TC2; } > tc.sql
  n0=$(nconn)
  f pg --conninfo "$LCI" --resource doc --fence 9 tc.sql 2>e.txt; rc=$?
  check "pg: a file holding '$tc' is refused with 65, nothing sent (rc $rc)" \
    '[ $rc = 65 ] && [ "$(nconn)" = "$n0" ] && grep -q "ends the transaction" e.txt'
done
fpg --resource doc --fence 9 tc.sql 2>/dev/null
check "... and against the real server: nothing written, mark unchanged" '[ "$(logn TC)" = 0 ] && [ "$(logn TC2)" = 0 ] && [ "$(mark doc)" = 6 ]'
# what is not transaction control passes: strings, dollar bodies, comments, savepoints,
# a BEGIN ATOMIC function body, a column named begin
cat > ok.sql <<'EOF'
SAVEPOINT s1; INSERT INTO wlog VALUES (0, 'gone'); ROLLBACK TO SAVEPOINT s1; RELEASE s1;
SELECT 'COMMIT; ROLLBACK', E'it\'s; END', $$ ; COMMIT; $$, $t$ abort; $t$; -- COMMIT;
/* COMMIT; /* nested; END; */ ROLLBACK; */
CREATE TEMP TABLE tt (begin int, "end" int);
CREATE FUNCTION pg_temp.f(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT CASE WHEN x > 0 THEN 1 END; END;
INSERT INTO wlog VALUES (current_setting('ldl.fence')::bigint, 'OK' || pg_temp.f(1));
DO $$BEGIN RAISE NOTICE 'evil %', chr(27) || '[2J' || chr(155); END$$;
EOF
fpg --resource doc --fence 9 ok.sql 2>ok.err;         rc=$?
check "pg: a file with those words in strings, bodies and comments runs (rc $rc: $(head -c 300 ok.err))" \
  '[ $rc = 0 ] && [ "$(logn OK1)" = 1 ] && [ "$(logn gone)" = 0 ] && [ "$(mark doc)" = 9 ]'
check "... its NOTICE reaches stderr escaped (no raw ESC or C1 byte)" 'clean ok.err && grep -q "evil \\\\x1b\[2J" ok.err'
# standard_conforming_strings off (a legacy role): the server reads 'a\'' as a closed
# string, so the COMMIT after it is a statement. The gate reads the file as the
# server does with it on: a session with it off is refused, whatever the file holds
{ wsql SCS; printf "SELECT 'a\\''; COMMIT; --';\n"; wsql SCS2; } > scs.sql
fpg --resource doc --fence 9 scs.sql 2>/dev/null;    r1=$?
f pg --conninfo "$CI options='-c standard_conforming_strings=off'" --resource doc --fence 9 scs.sql 2>e.txt; r2=$?
f pg --conninfo "$CI options='-c standard_conforming_strings=off'" --resource doc --fence 9 a.sql 2>e2.txt; r3=$?
check "pg: 'a\\'' then COMMIT: a string with standard_conforming_strings on (rc $r1); off: refused, even a plain file (rc $r2, $r3)" \
  '[ $r1 = 0 ] && [ $r2 = 65 ] && [ $r3 = 65 ] && grep -q "standard_conforming_strings off" e.txt e2.txt'
check "... the refused runs wrote nothing (the accepted one did, once)" '[ "$(logn SCS)" = 1 ] && [ "$(logn SCS2)" = 1 ] && [ "$(mark doc)" = 9 ]'
# a conninfo's own client_encoding is overridden (the gate reads UTF-8): it runs
wsql ENC > enc.sql
f pg --conninfo "$CI client_encoding=SJIS" --store-timeout 20 --resource doc --fence 9 enc.sql 2>e.txt; rc=$?
check "pg: a conninfo asking client_encoding SJIS runs in UTF8 (rc $rc: $(head -c 200 e.txt))" '[ $rc = 0 ] && [ "$(logn ENC)" = 1 ]'

# ---------------------------------------------------------------- pg: the gate is PostgreSQL's parser (issue 32)
# gate_case NAME WANT BODY: the file is "INSERT NAME-1; BODY; INSERT NAME-2".
#   WANT=refuse: exit 65, "ends the transaction", the listener sees no connection,
#                and against the real server nothing of it is written
#   WANT=run:    exit 0 against the real server, both rows written (the server
#                read it as the gate did)
gate_case() {
  gn=$1
  printf "INSERT INTO wlog VALUES (0, '%s-1');\n%s\nINSERT INTO wlog VALUES (0, '%s-2');\n" "$1" "$3" "$1" > g.sql
  if [ "$2" = refuse ]; then
    n0=$(nconn)
    f pg --conninfo "$LCI" --resource gate --fence 1 g.sql 2>e.txt; rc=$?
    fpg --resource gate --fence 1 g.sql 2>e2.txt; rc2=$?
    check "gate: $1 is refused before anything is sent (rc $rc / $rc2: $(head -c 160 e2.txt | tr '\n' ' '))" \
      '[ $rc = 65 ] && [ $rc2 = 65 ] && [ "$(nconn)" = "$n0" ] && grep -q "ends the transaction" e.txt e2.txt && [ "$(logn "$gn-1")" = 0 ] && [ "$(logn "$gn-2")" = 0 ]'
  else
    fpg --resource gate --fence 1 g.sql 2>e.txt; rc=$?
    check "gate: $1 runs, both writes land (rc $rc: $(head -c 200 e.txt | tr '\n' ' '))" \
      '[ $rc = 0 ] && [ "$(logn "$gn-1")" = 1 ] && [ "$(logn "$gn-2")" = 1 ]'
  fi
}
q "CREATE TABLE t (begin int, atomic int)" >/dev/null
gate_case cr-ends-comment   refuse "$(printf -- '-- a comment\rCOMMIT;')"
gate_case crlf              refuse "$(printf -- '-- a comment\r\nCOMMIT;')"
gate_case begin-atomic-cols refuse "SELECT begin, atomic FROM t; COMMIT;"
gate_case begin-atomic-cols2 refuse "SELECT t.begin, atomic FROM t WHERE atomic IS NULL; END;"
gate_case nested-comment-out refuse "/* a /* nested */ still a comment */ COMMIT;"
gate_case nested-comment-in run    "/* a /* nested */ COMMIT; */ SELECT 1;"
gate_case dollar-tags-in    run    'SELECT $a$ $b$ COMMIT; $b$ ; $a$;'
gate_case dollar-tags-out   refuse 'SELECT $a$ x $a$; COMMIT;'
gate_case dollar-not-a-tag  refuse 'SELECT 1 AS a$b; COMMIT; SELECT 2 AS c$b;'
gate_case estring-in        run    "SELECT E'it\\'s; COMMIT; --';"
gate_case estring-out       refuse "SELECT E'a\\\\'; COMMIT; --';"
gate_case plain-backslash   refuse "SELECT 'a\\'; COMMIT; --';"
gate_case quoted-ident-in   run    'SELECT 1 AS "x""; COMMIT; --";'
gate_case unicode-string-in run    "SELECT U&'a''; COMMIT; --';"
gate_case dollar-other-tag  run    'SELECT $a$ $b$ ; COMMIT; $a$;'
gate_case dash-in-block     refuse "/* -- */ COMMIT;"
gate_case block-in-dash     refuse "$(printf -- '-- /*\nCOMMIT; -- */')"
gate_case quoted-ident-out  refuse 'SELECT 1 AS "x"""; COMMIT; --";'
gate_case atomic-function   run    "CREATE FUNCTION pg_temp.g() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END;"
gate_case atomic-procedure  run    "CREATE PROCEDURE pg_temp.p() LANGUAGE sql BEGIN ATOMIC INSERT INTO wlog VALUES (0, 'inner'); END;"
gate_case atomic-then-commit refuse "CREATE FUNCTION pg_temp.h() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END; COMMIT;"
gate_case commit-and-chain  refuse "COMMIT AND CHAIN;"
gate_case end               refuse "END;"
gate_case end-work          refuse "end work;"
gate_case abort             refuse "ABORT;"
gate_case rollback-and-chain refuse "ROLLBACK AND CHAIN;"
gate_case prepare-tx        refuse "PREPARE TRANSACTION 'gx';"
gate_case begin-nested      refuse "BEGIN ISOLATION LEVEL SERIALIZABLE;"
gate_case commit-prepared   refuse "COMMIT PREPARED 'gx';"
gate_case savepoints        run    "SAVEPOINT s; INSERT INTO wlog VALUES (0, 'sp-gone'); ROLLBACK TO SAVEPOINT s; RELEASE SAVEPOINT s; SAVEPOINT u; ROLLBACK TO u;"
check "gate: ROLLBACK TO undid its insert ($(logn sp-gone))" '[ "$(logn sp-gone)" = 0 ]'
gate_case prepare-stmt      run    "PREPARE ps AS SELECT 1; EXECUTE ps; DEALLOCATE ps;"
# CALL and DO: the block runs them atomically, so their COMMIT is the server's error
q "CREATE PROCEDURE commits() LANGUAGE plpgsql AS \$\$BEGIN INSERT INTO wlog VALUES (0, 'in-proc'); COMMIT; END\$\$" >/dev/null
for body in "CALL commits();" 'DO $$BEGIN INSERT INTO wlog VALUES (0, $q$in-do$q$); COMMIT; END$$;' \
            'DO $$BEGIN ROLLBACK; END$$;'; do
  printf "INSERT INTO wlog VALUES (0, 'cd-1');\n%s\nINSERT INTO wlog VALUES (0, 'cd-2');\n" "$body" > g.sql
  fpg --resource gate --fence 2 g.sql 2>e.txt; rc=$?
  check "gate: '$body' fails on the server: 65, nothing visible, mark unchanged (rc $rc: $(grep -o 'invalid transaction termination' e.txt | head -n 1))" \
    '[ $rc = 65 ] && grep -q "invalid transaction termination" e.txt && [ "$(logn cd-1)" = 0 ] && [ "$(logn in-proc)" = 0 ] && [ "$(logn in-do)" = 0 ] && [ "$(mark gate)" = 1 ]'
done
printf 'SELECT 1;\nSELECT FROM WHERE;\n' > g.sql
n0=$(nconn)
f pg --conninfo "$LCI" --resource gate --fence 3 g.sql 2>e.txt; rc=$?
check "gate: a file the parser cannot read: 65, nothing sent (rc $rc)" '[ $rc = 65 ] && [ "$(nconn)" = "$n0" ] && grep -q "parser cannot read" e.txt'

# results are not held: 100,000 rows of 1 kB (the second statement of three) cost the
# tool no more memory than one row (peak RSS from GNU time; before single-row mode this run peaked at 210 MB)
printf "SELECT 1;\nSELECT g, repeat('x', 1000) FROM generate_series(1, 100000) g;\nSELECT 2;\n" > rows.sql
echo "SELECT 1;" > one.sql
# (ASan's quarantine would keep every freed row: off for these two runs)
AQ="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
ASAN_OPTIONS=$AQ /usr/bin/time -f %M -o rss1.txt $TMO "$fbin" pg --conninfo "$CI" --store-timeout 20 --resource rss --fence 1 one.sql; r1=$?
ASAN_OPTIONS=$AQ /usr/bin/time -f %M -o rss2.txt $TMO "$fbin" pg --conninfo "$CI" --store-timeout 20 --resource rss --fence 1 rows.sql; r2=$?
k1=$(tail -n 1 rss1.txt); k2=$(tail -n 1 rss2.txt)
check "pg: 100,000 rows of 1 kB: peak RSS $k2 kB against $k1 kB for one row (rc $r1 $r2; bound: +30 MB)" \
  '[ $r1 = 0 ] && [ $r2 = 0 ] && [ "$k2" -lt $((k1 + 30000)) ]'

# the backstop, reached with a build whose gate refuses nothing (ldl-fence-nogate,
# LDL_FENCE_TEST_NO_GATE; mk/fence_cli.mk): exit 70 and its message when the block
# ended, 65 only when it did not
if [ -n "${NOGATE:-}" ]; then
  nog() { $TMO "$NOGATE" pg --conninfo "$CI" --store-timeout 20 --resource bs "$@"; }
  printf "INSERT INTO wlog VALUES (0, 'bs-1');\nCOMMIT;\nINSERT INTO wlog VALUES (0, 'bs-2');\n" > g.sql
  nog --fence 5 g.sql 2>e.txt; rc=$?
  # (what this exit code warns of: both writes landed, the second with no fence at all)
  check "backstop: a COMMIT the gate let through: exit 70, says it may have committed unfenced (rc $rc)" \
    '[ $rc = 70 ] && grep -q "COMMITTED WITHOUT THE FENCE" e.txt && [ "$(logn bs-1)" = 1 ] && [ "$(logn bs-2)" = 1 ]'
  printf "INSERT INTO wlog VALUES (0, 'bs-3');\nCOMMIT;\nSELECT 1 / 0;\n" > g.sql
  nog --fence 5 g.sql 2>e.txt; rc=$?
  check "backstop: COMMIT then an error: 70, not 65 (rc $rc)" '[ $rc = 70 ] && grep -q "division by zero" e.txt && [ "$(logn bs-3)" = 1 ]'
  printf "INSERT INTO wlog VALUES (0, 'bs-4');\nROLLBACK;\nINSERT INTO wlog VALUES (0, 'bs-5');\nSELECT 1 / 0;\n" > g.sql
  nog --fence 6 g.sql 2>e.txt; rc=$?
  check "backstop: ROLLBACK (tag as ROLLBACK TO's) then writes and an error: 70 (rc $rc)" '[ $rc = 70 ] && [ "$(logn bs-5)" = 0 ]'
  printf "SAVEPOINT a;\nINSERT INTO wlog VALUES (0, 'bs-6');\nROLLBACK TO a;\nSELECT 1 / 0;\n" > g.sql
  nog --fence 7 g.sql 2>e.txt; rc=$?
  check "backstop: ROLLBACK TO then an error is still our block: 65 (rc $rc)" '[ $rc = 65 ] && [ "$(logn bs-6)" = 0 ]'
  printf "INSERT INTO wlog VALUES (0, 'bs-8');\nCOMMIT;\nBEGIN;\nSELECT 1 / 0;\n" > g.sql
  nog --fence 8 g.sql 2>e.txt; rc=$?
  check "backstop: COMMIT, BEGIN, an error (the file's own block is the one aborted): 70 (rc $rc)" \
    '[ $rc = 70 ] && [ "$(logn bs-8)" = 1 ]'
  # the block-state check on its own (the test build's tag check off): COMMIT, then an
  # error outside any block
  printf "INSERT INTO wlog VALUES (0, 'bs-9');\nCOMMIT;\nSELECT 1 / 0;\n" > g.sql
  LDL_FENCE_TEST_NO_TAGS=1 nog --fence 8 g.sql 2>e.txt; rc=$?
  check "backstop, tags not read: COMMIT then an error leaves no failed block: 70 (rc $rc)" \
    '[ $rc = 70 ] && grep -q "no open transaction block" e.txt && [ "$(logn bs-9)" = 1 ]'
  printf "INSERT INTO wlog VALUES (0, 'bs-7');\nEND;\nCOPY wlog FROM STDIN;\n" > g.sql
  nog --fence 8 g.sql 2>e.txt; rc=$?
  check "backstop: END then COPY: 70 (rc $rc)" '[ $rc = 70 ] && [ "$(logn bs-7)" = 1 ]'
fi
# COPY FROM STDIN has no data to read here: refused, rolled back
{ wsql CPY; echo "COPY wlog FROM STDIN;"; } > copy.sql
fpg --resource doc --fence 9 copy.sql 2>e.txt;       rc=$?
check "pg: COPY FROM STDIN: exit 65, rolled back (rc $rc)" '[ $rc = 65 ] && grep -q "COPY" e.txt && [ "$(logn CPY)" = 0 ]'
# no --conninfo: libpq's environment
wsql ENV > env.sql
PGHOST=127.0.0.1 PGPORT=$LDL_PG_PORT PGUSER=ldl PGDATABASE=postgres $TMO "$fbin" pg --resource doc --fence 9 env.sql; rc=$?
check "pg: without --conninfo, libpq's environment (PGHOST, PGPORT, ...) is used (rc $rc)" '[ $rc = 0 ] && [ "$(logn ENV)" = 1 ]'
# the file from stdin
wsql IN | LDL_FENCE=9 fpg --resource doc -;          rc=$?
check "pg: FILE - reads stdin (rc $rc, '$(docv)')" '[ $rc = 0 ] && [ "$(docv)" = "IN 9" ]'
# bad files: nothing sent
n0=$(nconn)
f pg --conninfo "$LCI" --resource doc --fence 9 no-such.sql 2>/dev/null; r1=$?
f pg --conninfo "$LCI" --resource doc --fence 9 "$d" 2>/dev/null;        r2=$?
printf 'SELECT 1;\000DROP TABLE doc;\n' > nul.sql
f pg --conninfo "$LCI" --resource doc --fence 9 nul.sql 2>/dev/null;     r3=$?
head -c 16777217 /dev/zero | tr '\0' ' ' > big.sql
f pg --conninfo "$LCI" --resource doc --fence 9 big.sql 2>/dev/null;     r4=$?
head -c 16777216 /dev/zero | tr '\0' ' ' > max.sql
check "pg: a missing file, a directory, a NUL byte, 16 MiB + 1: exit 66, nothing sent ($r1 $r2 $r3 $r4)" \
  '[ $r1 = 66 ] && [ $r2 = 66 ] && [ $r3 = 66 ] && [ $r4 = 66 ] && [ "$(nconn)" = "$n0" ]'
fpg --resource doc --fence 9 max.sql;                 rc=$?
check "pg: a file of exactly 16 MiB (blank) is taken (rc $rc)" '[ $rc = 0 ]'
# --timeout: a file that runs too long is cut, and rolled back
{ wsql SLOW; echo "SELECT pg_sleep(30);"; } > slow.sql
fpg --resource doc --fence 10 --timeout 1 slow.sql 2>e.txt; rc=$?
check "pg: --timeout 1 cuts a 30 s file: exit 124, rolled back (rc $rc: $(cat e.txt))" \
  '[ $rc = 124 ] && grep -q "rolled back" e.txt && grep -q "past --timeout" e.txt'
i=0; while [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ldl-fence'")" != 0 ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1)); done
check "... nothing of it committed: data '$(docv)', mark $(mark doc)" \
  '[ "$(logn SLOW)" = 0 ] && [ "$(docv)" = "IN 9" ] && [ "$(mark doc)" = 9 ]'
# INT64_MAX is a fence like any other
fpg --resource top --fence 9223372036854775807 a.sql; rc=$?
check "pg: fence INT64_MAX passes on a new resource (rc $rc, mark $(mark top))" '[ $rc = 0 ] && [ "$(mark top)" = 9223372036854775807 ]'
fpg --resource top --fence 9223372036854775806 s.sql 2>/dev/null; rc=$?
check "... and INT64_MAX - 1 after it is stale (rc $rc)" '[ $rc = 77 ]'
# a resource name with quotes and bytes of every kind is a plain value
res=$(printf "it's \"q\" \\\\ {x}; DROP TABLE doc; --")
fpg --resource "$res" --fence 2 a.sql;               rc=$?
check "pg: a resource with quotes and backslashes is a value (rc $rc, its mark $(q "SELECT count(*) FROM ldl_lease_fence WHERE fence = 2"))" \
  '[ $rc = 0 ] && [ "$(q "SELECT count(*) FROM doc")" = 1 ]'
fpg --resource "$res" --fence 1 a.sql 2>e.txt;       rc=$?
check "... a lower fence on it is stale, its name printed escaped (rc $rc)" '[ $rc = 77 ] && clean e.txt'
# the store fails: unreachable -> 69
f pg --conninfo "host=127.0.0.1 port=1 user=ldl dbname=postgres connect_timeout=2" --resource doc --fence 9 a.sql 2>/dev/null; rc=$?
check "pg: store unreachable: exit 69 (got $rc)" '[ $rc = 69 ]'

# ---------------------------------------------------------------- redis: the protocol through the tool
MK="{doc}:ldl:mark"
frd --resource doc --fence 5 --keys 1 -- SET "{doc}:v" A > o.txt; rc=$?
check "redis: fence 5 on a new resource: SET runs, reply +OK (rc $rc: $(cat o.txt))" \
  '[ $rc = 0 ] && [ "$(cat o.txt)" = "+OK" ] && [ "$(rc_ GET "{doc}:v")" = A ] && [ "$(rc_ GET "$MK")" = 5 ]'
LDL_FENCE=5 frd --resource doc --keys 1 -- APPEND "{doc}:v" 2 > o.txt; rc=$?
check "redis: an equal fence from \$LDL_FENCE passes: :2 (rc $rc: $(cat o.txt))" '[ $rc = 0 ] && [ "$(cat o.txt)" = ":2" ] && [ "$(rc_ GET "{doc}:v")" = A2 ]'
frd --resource doc --fence 4 --keys 1 -- SET "{doc}:v" STALE > o.txt 2>e.txt; rc=$?
check "redis: a lower fence exits 77, prints nothing on stdout (rc $rc)" '[ $rc = 77 ] && [ ! -s o.txt ] && grep -q "stale fence 4" e.txt'
check "... the key keeps the newer data, the mark stays 5" '[ "$(rc_ GET "{doc}:v")" = A2 ] && [ "$(rc_ GET "$MK")" = 5 ]'
frd --resource doc --fence 6 --keys 1 -- GET "{doc}:v" > o.txt; rc=$?
check "redis: a higher fence passes: \$A2 (rc $rc: $(cat o.txt))" '[ $rc = 0 ] && [ "$(cat o.txt)" = "\$A2" ] && [ "$(rc_ GET "$MK")" = 6 ]'
frd --resource doc --fence 7 --keys 1 -- LPUSH "{doc}:v" x > o.txt 2>e.txt; rc=$?
check "redis: the command's own error (WRONGTYPE) exits 65, the error on stderr (rc $rc: $(cat e.txt))" \
  '[ $rc = 65 ] && grep -q WRONGTYPE e.txt && [ ! -s o.txt ]'
check "... the mark did not move (6: $(rc_ GET "$MK")), the key is unchanged" '[ "$(rc_ GET "$MK")" = 6 ] && [ "$(rc_ GET "{doc}:v")" = A2 ]'
frd --resource doc --fence 7 --keys 1 -- GET "{doc}:nothing" > o.txt; rc=$?
check "redis: nil prints _ (rc $rc: $(cat o.txt))" '[ $rc = 0 ] && [ "$(cat o.txt)" = "_" ]'
frd --resource doc --fence 7 --keys 1 -- SET "{doc}:bin" "$(printf 'a\nb\033[2J\\c\302\233')" > /dev/null
frd --resource doc --fence 7 --keys 1 -- GET "{doc}:bin" > o.txt; rc=$?
check "redis: bytes outside printable ASCII and the backslash come out as \\xHH, one line (rc $rc: $(cat -v o.txt))" \
  '[ $rc = 0 ] && [ "$(cat o.txt)" = "\$a\\x0ab\\x1b[2J\\x5cc\\xc2\\x9b" ] && [ "$(wc -l < o.txt)" = 1 ]'
frd --resource doc --fence 7 --keys 1 -- RPUSH "{doc}:l" x "" > /dev/null
frd --resource doc --fence 7 --keys 1 -- LRANGE "{doc}:l" 0 -1 > o.txt; rc=$?
check "redis: an array prints *N then its values (rc $rc: $(tr '\n' ' ' < o.txt))" \
  '[ $rc = 0 ] && [ "$(cat o.txt)" = "$(printf "*2\n\$x\n\$")" ]'
frd --resource doc --fence 7 --keys 1 -- SET "$MK" 1 > o.txt 2>e.txt; rc=$?
check "redis: a command naming the mark itself is refused: 64 (rc $rc), the mark stays" '[ $rc = 64 ] && [ "$(rc_ GET "$MK")" = 7 ]'
frd --resource doc --fence 7 -- SET "$MK" 1 > o.txt 2>e.txt; rc=$?
check "redis: without --keys the first argument is declared a key: naming the mark is refused (rc $rc)" \
  '[ $rc = 64 ] && [ "$(rc_ GET "$MK")" = 7 ]'
frd --resource doc --fence 7 -- PING > o.txt; rc=$?
check "redis: a command without arguments needs no --keys (rc $rc: $(cat -v o.txt))" '[ $rc = 0 ] && [ "$(cat o.txt)" = "+PONG" ]'
rc_ SET "{wt}:ldl:mark" notanumber > /dev/null
frd --resource wt --fence 7 --keys 1 -- SET "{wt}:v" x > o.txt 2>e.txt; rc=$?
check "redis: a mark that holds no fence: 69, the command did not run (rc $rc)" '[ $rc = 69 ] && [ "$(rc_ EXISTS "{wt}:v")" = 0 ]'
f redis --redis 127.0.0.1:1 --resource doc --fence 9 -- SET k v 2>/dev/null; rc=$?
check "redis: store unreachable: exit 69 (got $rc)" '[ $rc = 69 ]'

# ---------------------------------------------------------------- a frozen store: bounded
rm -f proxy.port
python3 "$here/freeze_proxy.py" "$d/proxy.port" 127.0.0.1 "$LDL_PG_PORT" & ppid_=$!
echo $ppid_ > "$LDL_TEST_DIR/fence-proxy.pid"
wait_for proxy.port; pport=$(cat proxy.port)
PCI="host=127.0.0.1 port=$pport user=ldl dbname=postgres"
f pg --conninfo "$PCI" --store-timeout 20 --resource doc --fence 9 a2.sql; rc=$?
check "pg through the proxy: works (rc $rc)" '[ $rc = 0 ]'
kill -STOP $ppid_
TMO="timeout -k 2 15"
f pg --conninfo "$PCI" --resource doc --fence 9 --store-timeout 1 a.sql 2>e.txt; rc=$?
TMO="timeout -k 5 60"
check "pg, a frozen store: exit 124 within the bound (rc $rc: $(cat e.txt))" '[ $rc = 124 ] && grep -q "no answer within 1000 ms" e.txt'
kill -CONT $ppid_; kill -9 $ppid_; wait $ppid_ 2>/dev/null; ppid_=
check "... nothing written ('$(docv)')" '[ "$(docv)" = "A2 9" ]'

# ---------------------------------------------------------------- ldl-run + ldl-fence
export FBIN="$fbin" CI R
q "DELETE FROM doc" >/dev/null
wsql RUN > run.sql
$TMO "$rbin" --redis "$R" -n job -- sh -c 'echo "$LDL_FENCE" > run.f; exec "$FBIN" pg --conninfo "$CI" --store-timeout 20 --resource job run.sql'; rc=$?
check "ldl-run + ldl-fence pg: the job writes under its own fence (rc $rc, '$(docv)', fence $(cat run.f))" \
  '[ $rc = 0 ] && [ -s run.f ] && [ "$(docv)" = "RUN $(cat run.f)" ] && [ "$(mark job)" = "$(cat run.f)" ]'
$TMO "$rbin" --redis "$R" -n job -- sh -c 'echo "$LDL_FENCE" > run2.f; exec "$FBIN" redis --redis "$R" --store-timeout 20 --resource job --keys 1 -- SET "{job}:v" "$LDL_FENCE"' > o.txt; rc=$?
check "ldl-run + ldl-fence redis: the job writes under its own fence (rc $rc, $(cat o.txt))" \
  '[ $rc = 0 ] && [ "$(cat o.txt)" = "+OK" ] && [ "$(rc_ GET "{job}:v")" = "$(cat run2.f)" ] && [ "$(rc_ GET "{job}:ldl:mark")" = "$(cat run2.f)" ]'
check "... the second run's fence is higher" '[ "$(cat run2.f)" -gt "$(cat run.f)" ]'

# A writer paused past its lease: A (ldl-run and its job) is SIGSTOPped before its
# write; B takes the key after A's TTL and writes; then A's job alone is continued
# (its ldl-run stays stopped: the kill it would send has not come yet, as for a write
# already on its way) and writes with its old fence: the resource refuses it.
paused() {  # $1 = pg | redis
  rm -f a.f a.pid a.go a.rc b.f
  if [ "$1" = pg ]; then
    wsql PA > pa.sql; wsql PB > pb.sql
    AW='"$FBIN" pg --conninfo "$CI" --store-timeout 20 --resource paused pa.sql 2>a.err'
    BW='"$FBIN" pg --conninfo "$CI" --store-timeout 20 --resource paused pb.sql'
  else
    AW='"$FBIN" redis --redis "$R" --store-timeout 20 --resource paused --keys 1 -- SET "{paused}:v" "A$LDL_FENCE" 2>a.err'
    BW='"$FBIN" redis --redis "$R" --store-timeout 20 --resource paused --keys 1 -- SET "{paused}:v" "B$LDL_FENCE"'
  fi
  export AW BW
  "$rbin" --redis "$R" --ttl 1500 PW -- sh -c 'echo $$ > a.pid; echo "$LDL_FENCE" > a.f;
    while [ ! -e a.go ]; do sleep 0.05; done; eval "$AW"; echo $? > a.rc' 2>/dev/null & apid=$!
  wait_for a.f
  kill -STOP $apid; kill -STOP "-$(cat a.pid)"
  touch a.go
  sleep 2.5                                  # past A's TTL (1.5 s)
  $TMO "$rbin" --redis "$R" -w 20 PW -- sh -c 'echo "$LDL_FENCE" > b.f; eval "$BW"' > /dev/null; brc=$?
  kill -CONT "-$(cat a.pid)"
  wait_for a.rc
  kill -CONT $apid
  i=0; while alive $apid && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  alive $apid && { bad "$1: A's ldl-run still running 20 s after SIGCONT"; kill -9 $apid; }
  wait $apid; arunrc=$?; apid=
  check "$1, paused writer: B (fence $(cat b.f)) wrote (rc $brc) after A's (fence $(cat a.f)) TTL" \
    '[ $brc = 0 ] && [ "$(cat b.f)" -gt "$(cat a.f)" ]'
  check "$1, paused writer: A's late write is refused with 77 (got $(cat a.rc 2>/dev/null): $(cat a.err 2>/dev/null))" \
    '[ "$(cat a.rc)" = 77 ]'
  if [ "$1" = pg ]; then
    check "pg, paused writer: the table holds B's data ('$(docv)'), A's log row is not visible" \
      '[ "$(docv)" = "PB $(cat b.f)" ] && [ "$(logn PA)" = 0 ] && [ "$(mark paused)" = "$(cat b.f)" ]'
  else
    check "redis, paused writer: the key holds B's data ($(rc_ GET "{paused}:v"))" \
      '[ "$(rc_ GET "{paused}:v")" = "B$(cat b.f)" ] && [ "$(rc_ GET "{paused}:ldl:mark")" = "$(cat b.f)" ]'
  fi
  check "$1, paused writer: A's ldl-run, continued, reports the loss: 75 (got $arunrc)" '[ $arunrc = 75 ]'
}
q "DELETE FROM doc" >/dev/null
paused pg
paused redis

echo "$pass passed, $fail failed"
[ $fail = 0 ]
