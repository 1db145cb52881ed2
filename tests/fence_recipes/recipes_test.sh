#!/bin/sh
# recipes_test.sh MODE FENCE_BIN TOOLDIR -- run the fence protocol's recipes VERBATIM
# from the docs (issue 32 item 4): each recipe is the code block that follows a line
# "<!-- recipe: NAME -->" in docs/postgres.md, docs/sqlite.md or docs/redis.md, written
# out byte for byte and run with Debian's real clients against real servers.
#   MODE direct     inside tests/store/with_pg.sh and tests/store/with_redis.sh: the
#                   PostgreSQL recipes (psql, psycopg2, psycopg 3, the CREATE TABLE),
#                   the SQLite ones (sqlite3 shell, python sqlite3, the CREATE TABLE)
#                   and the Redis ones (the script's text and SHA1, redis-cli, redis-py)
#   MODE pgbouncer  inside tests/store/with_pgbouncer.sh: the PostgreSQL recipes
#                   through pgbouncer in transaction pooling
# FENCE_BIN is ldl-fence (it must agree with the marks the recipes leave); TOOLDIR
# holds redis_script and sqlite_check (built from this directory's .c files).
# Per client: fences 5, 5 (equal), 7 write; 6 is refused, nothing written, the mark
# stays 7. Last line: "N passed, N failed".
set -u
mode=${1:?usage: recipes_test.sh direct|pgbouncer FENCE_BIN TOOLDIR}
fbin=${2:?usage: recipes_test.sh MODE FENCE_BIN TOOLDIR}
tools=${3:?usage: recipes_test.sh MODE FENCE_BIN TOOLDIR}
top=$(pwd)
case $fbin in /*) ;; *) fbin=$top/$fbin ;; esac
case $tools in /*) ;; *) tools=$top/$tools ;; esac
: "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
PY=/usr/bin/python3            # Debian's: python3-psycopg2, python3-psycopg, python3-redis
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-recipes.XXXXXX") || exit 2
rpid=
cleanup() { [ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1" >&2; fi; }
alive() { kill -0 "$1" 2>/dev/null; }
TMO="timeout -k 5 60"

# recipe DOC NAME: the block after "<!-- recipe: NAME -->", without its fences
recipe() {
  awk -v name="$2" '
    $0 == "<!-- recipe: " name " -->" { f = 1; next }
    f == 1 && /^```/ { f = 2; next }
    f == 2 && /^```$/ { exit }
    f == 2 { print }' "$top/docs/$1"
}
# out DOC NAME: write it to $d/NAME; fail when the doc has no such recipe
out() {
  rfile=$d/$2
  recipe "$1" "$2" > "$rfile"
  check "$1 has the recipe $2" '[ -s "$rfile" ]'
}
cd "$d" || exit 2

# ---------------------------------------------------------------- PostgreSQL
CI=$LDL_PG_CONNINFO
port=$(printf '%s\n' "$CI" | sed -n 's/.*port=\([0-9]*\).*/\1/p')
if [ "$mode" = pgbouncer ]; then
  ADMIN=$LDL_PG_DIRECT
  UNNAMED=--unnamed
else
  ADMIN=$CI
  UNNAMED=
fi
# the recipes take libpq's environment; "ldl" is the server's superuser (trust), also
# known to the pooler
export PGHOST=127.0.0.1 PGPORT="$port" PGUSER=ldl PGDATABASE=postgres PGCONNECT_TIMEOUT=5
q() { psql "$ADMIN" -XAtqc "$1" 2>&1; }
echo "== recipes ($mode): PostgreSQL through 127.0.0.1:$port"
out postgres.md pg-create.sql
out postgres.md pg-psql.sh
out postgres.md pg-psycopg2.py
out postgres.md pg-psycopg3.py
q "DROP TABLE IF EXISTS public.ldl_lease_fence, report" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -f pg-create.sql; rc=$?
psql -X -q -v ON_ERROR_STOP=1 -f pg-create.sql; rc2=$?
check "pg-create.sql runs (twice: IF NOT EXISTS) (rc $rc $rc2)" '[ $rc = 0 ] && [ $rc2 = 0 ]'
q "CREATE TABLE report (id int PRIMARY KEY, body text, fence bigint)" >/dev/null
pmark() { q "SELECT fence FROM public.ldl_lease_fence WHERE resource = 'nightly-report'"; }
prow() { q "SELECT body || ' ' || fence FROM report WHERE id = 1"; }
# pg_client NAME BODY STALE_RC CMD...: the four runs of one client
pg_client() {
  name=$1; body=$2; stale=$3; shift 3
  q "DELETE FROM report; DELETE FROM public.ldl_lease_fence WHERE resource = 'nightly-report'" >/dev/null
  LDL_FENCE=5 $TMO "$@" 2>e.txt; r1=$?; v1=$(prow)
  LDL_FENCE=5 $TMO "$@" 2>>e.txt; r2=$?
  LDL_FENCE=7 $TMO "$@" 2>>e.txt; r3=$?; v3=$(prow)
  check "$mode, $name: fences 5, 5, 7 write (rc $r1 $r2 $r3; '$v1', '$v3', mark $(pmark); $(head -c 300 e.txt))" \
    '[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ "$v1" = "$body 5" ] && [ "$v3" = "$body 7" ]'
  q "UPDATE report SET body = 'newer' WHERE id = 1" >/dev/null
  LDL_FENCE=6 $TMO "$@" 2>e.txt; r4=$?
  check "$mode, $name: fence 6 after 7 is refused (rc $r4, want $stale), says stale, nothing written ('$(prow)', mark $(pmark))" \
    '[ $r4 = "$stale" ] && grep -q "stale fence" e.txt && [ "$(prow)" = "newer 7" ] && [ "$(pmark)" = 7 ]'
  # the same table and mark, seen by ldl-fence (its init accepts the recipe's table)
  echo "SELECT 1;" > one.sql
  $TMO "$fbin" pg $UNNAMED --store-timeout 20 --resource nightly-report --fence 6 one.sql 2>e.txt; f1=$?
  $TMO "$fbin" pg $UNNAMED --store-timeout 20 --resource nightly-report --fence 7 one.sql 2>>e.txt; f2=$?
  check "$mode, $name: ldl-fence agrees: 6 stale (rc $f1), 7 passes (rc $f2) ($(head -c 200 e.txt))" \
    '[ $f1 = 77 ] && [ $f2 = 0 ]'
}
pg_client psql     psql     3  sh pg-psql.sh
pg_client psycopg2 psycopg2 77 "$PY" pg-psycopg2.py
pg_client psycopg3 psycopg3 77 "$PY" pg-psycopg3.py
# no fence at all: the recipes fail, nothing written
q "DELETE FROM report" >/dev/null
LDL_FENCE= $TMO sh pg-psql.sh 2>/dev/null; r1=$?
LDL_FENCE=abc $TMO "$PY" pg-psycopg2.py 2>/dev/null; r2=$?
check "$mode: an empty or non-numeric LDL_FENCE fails the recipes, nothing written (rc $r1 $r2)" \
  '[ $r1 != 0 ] && [ $r2 != 0 ] && [ "$(q "SELECT count(*) FROM report")" = 0 ]'

if [ "$mode" = pgbouncer ]; then
  # psycopg 3's prepare_threshold behind the pooler: a long-running job (12 fenced
  # transactions on one connection), twice. With the recipe's None every run passes;
  # with psycopg's default, once a server connection holds a prepared "_pg3_0" from an
  # earlier client, the 6th run meets DuplicatePreparedStatement (the control)
  q "DELETE FROM public.ldl_lease_fence WHERE resource = 'loop'" >/dev/null
  n1=$($TMO "$PY" "$top/tests/fence_recipes/pg3_loop.py" none 2>&1 | tr '\n' ' ')
  q "DELETE FROM public.ldl_lease_fence WHERE resource = 'loop'" >/dev/null
  n2=$($TMO "$PY" "$top/tests/fence_recipes/pg3_loop.py" none 2>&1 | tr '\n' ' ')
  check "psycopg 3, prepare_threshold=None: 12 of 12 fenced transactions on one connection, twice ($n1/ $n2)" \
    '[ "$n1" = "ok 12 " ] && [ "$n2" = "ok 12 " ]'
  q "DELETE FROM public.ldl_lease_fence WHERE resource = 'loop'" >/dev/null
  $TMO "$PY" "$top/tests/fence_recipes/pg3_loop.py" default > /dev/null 2>&1
  q "DELETE FROM public.ldl_lease_fence WHERE resource = 'loop'" >/dev/null
  c2=$($TMO "$PY" "$top/tests/fence_recipes/pg3_loop.py" default 2>&1 | tr '\n' ' ')
  check "control: psycopg 3's default behind the pooler fails a run once the pool holds its statement ($c2)" \
    'echo "$c2" | grep -q DuplicatePreparedStatement'
  echo "$pass passed, $fail failed"
  [ $fail = 0 ]; exit
fi

# ---------------------------------------------------------------- SQLite
echo "== recipes: SQLite"
out sqlite.md sqlite-create.sql
out sqlite.md sqlite-shell.sh
out sqlite.md sqlite-python.py
export REPORT_DB="$d/report.db"
sqlite3 -bail "$REPORT_DB" < sqlite-create.sql; rc=$?
sqlite3 -bail "$REPORT_DB" "CREATE TABLE report (id INTEGER PRIMARY KEY, body TEXT, fence INTEGER)"
check "sqlite-create.sql runs (rc $rc)" '[ $rc = 0 ]'
sq() { sqlite3 "$REPORT_DB" "$1"; }
smark() { sq "SELECT fence FROM ldl_lease_fence WHERE resource = 'nightly-report'"; }
srow() { sq "SELECT body || ' ' || fence FROM report WHERE id = 1"; }
sq_client() {
  name=$1; body=$2; shift 2
  sq "DELETE FROM report; DELETE FROM ldl_lease_fence"
  LDL_FENCE=5 $TMO "$@" 2>e.txt; r1=$?; v1=$(srow)
  LDL_FENCE=5 $TMO "$@" 2>>e.txt; r2=$?
  LDL_FENCE=7 $TMO "$@" 2>>e.txt; r3=$?; v3=$(srow)
  check "sqlite, $name: fences 5, 5, 7 write (rc $r1 $r2 $r3; '$v1', '$v3', mark $(smark); $(head -c 300 e.txt))" \
    '[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ "$v1" = "$body 5" ] && [ "$v3" = "$body 7" ]'
  sq "UPDATE report SET body = 'newer' WHERE id = 1"
  LDL_FENCE=6 $TMO "$@" 2>e.txt; r4=$?
  check "sqlite, $name: fence 6 after 7: exit 77, nothing written ('$(srow)', mark $(smark))" \
    '[ $r4 = 77 ] && grep -q "stale fence" e.txt && [ "$(srow)" = "newer 7" ] && [ "$(smark)" = 7 ]'
  "$tools/sqlite_check" "$REPORT_DB" nightly-report 6 > c6.txt 2>&1
  "$tools/sqlite_check" "$REPORT_DB" nightly-report 7 > c7.txt 2>&1
  check "sqlite, $name: the C adapter accepts the table and agrees: 6 stale, 7 passes ($(tr '\n' ' ' < c6.txt)/ $(tr '\n' ' ' < c7.txt))" \
    '[ "$(cat c6.txt)" = "$(printf "init 0\nfence 0")" ] && [ "$(cat c7.txt)" = "$(printf "init 0\nfence 1")" ]'
}
sq_client shell sqlite3 sh sqlite-shell.sh
sq_client python python-sqlite3 "$PY" sqlite-python.py
# the protocol without the recipe's condition (the check, then a plain write, in the
# shell) does let the stale write land: what the condition is for
sq "UPDATE report SET body = 'newer' WHERE id = 1"
LDL_FENCE=6 sqlite3 -bail "$REPORT_DB" "BEGIN IMMEDIATE; INSERT INTO ldl_lease_fence AS f (resource, fence) VALUES ('nightly-report', 6) ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence WHERE f.fence <= excluded.fence RETURNING fence; UPDATE report SET body = 'stale', fence = 6 WHERE id = 1; COMMIT;"
check "sqlite: control: the unconditional write in the shell lands a stale write ('$(srow)')" '[ "$(srow)" = "stale 6" ]'

# ---------------------------------------------------------------- Redis
echo "== recipes: Redis"
: "${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}"
. "$top/tests/cli/redis_start.sh"
start_redis "$LDL_TEST_DIR/recipes-redis.pid"
[ -n "$port" ] || { echo "redis-server did not start"; echo "$pass passed, $((fail + 1)) failed"; exit 1; }
export REDIS_HOST=127.0.0.1 REDIS_PORT="$port"
rc_() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
recipe redis.md redis-fence.lua > fence.lua
"$tools/redis_script" > adapter.lua
sha=$("$tools/redis_script" -s)
check "redis.md's script is byte for byte the adapter's ($(wc -c < fence.lua) / $(wc -c < adapter.lua) bytes)" \
  '[ -s fence.lua ] && cmp -s fence.lua adapter.lua'
check "its SHA1 ($(sha1sum < fence.lua | cut -c1-40)) is the adapter's ($sha) and the one redis.md prints" \
  '[ "$(sha1sum < fence.lua | cut -c1-40)" = "$sha" ] && grep -q "^\`$sha\`" "$top/docs/redis.md"'
check "SCRIPT LOAD of the text answers that SHA1" '[ "$(rc_ -x SCRIPT LOAD < fence.lua)" = "$sha" ]'
out redis.md redis-cli.sh
out redis.md redis-py.py
check "the redis-cli recipe calls that SHA1" 'grep -q "EVALSHA $sha " redis-cli.sh'
rmark() { rc_ GET '{nightly-report}:ldl:mark'; }
rbody() { rc_ GET '{nightly-report}:body'; }
rd_client() {
  name=$1; shift
  rc_ DEL '{nightly-report}:ldl:mark' '{nightly-report}:body' > /dev/null
  rc_ SCRIPT FLUSH > /dev/null          # the recipe must cope with an empty script cache
  LDL_FENCE=5 $TMO "$@" 2>e.txt; r1=$?; v1=$(rbody)
  LDL_FENCE=5 $TMO "$@" 2>>e.txt; r2=$?
  LDL_FENCE=7 $TMO "$@" 2>>e.txt; r3=$?; v3=$(rbody)
  check "redis, $name: fences 5, 5, 7 write (rc $r1 $r2 $r3; '$v1', '$v3', mark $(rmark); $(head -c 300 e.txt))" \
    '[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ "$v1" = "report under fence 5" ] && [ "$v3" = "report under fence 7" ]'
  rc_ SET '{nightly-report}:body' newer > /dev/null
  LDL_FENCE=6 $TMO "$@" 2>e.txt; r4=$?
  check "redis, $name: fence 6 after 7: exit 77, nothing written ('$(rbody)', mark $(rmark))" \
    '[ $r4 = 77 ] && grep -q "stale fence" e.txt && [ "$(rbody)" = newer ] && [ "$(rmark)" = 7 ]'
  $TMO "$fbin" redis --redis "127.0.0.1:$port" --store-timeout 20 --resource nightly-report --fence 6 \
    -- SET '{nightly-report}:body' x > /dev/null 2>&1; f1=$?
  $TMO "$fbin" redis --redis "127.0.0.1:$port" --store-timeout 20 --resource nightly-report --fence 7 \
    -- GET '{nightly-report}:body' > /dev/null 2>&1; f2=$?
  check "redis, $name: ldl-fence redis agrees: 6 stale (rc $f1), 7 passes (rc $f2)" '[ $f1 = 77 ] && [ $f2 = 0 ]'
}
rd_client redis-cli sh redis-cli.sh
rd_client redis-py "$PY" redis-py.py

echo "$pass passed, $fail failed"
[ $fail = 0 ]
