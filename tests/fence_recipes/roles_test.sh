#!/bin/sh
# roles_test.sh FENCE_BIN -- issue 32 item 6: PostgreSQL roles for a fence table shared by
# several hosts, through ldl-fence pg (the adapter's init checks) as non-superuser login
# roles, inside tests/store/with_pg.sh (trust auth for every role):
#   - README's "two hosts, two login roles, no superuser" block, run verbatim: both
#     hosts' roles write, and a stale fence of either is refused;
#   - the issue's circle: a table owned by host A's role, refused for host B with a why
#     that names the table, its owner and this role, and whose "Fix" statements, run
#     verbatim as the superuser, make both hosts work;
#   - a grant of the lock's rights to the other host's role: the why never says REVOKE,
#     its fix works; an INSERT-only ingest role: the why says REVOKE ... FROM it, and
#     that statement works.
# Last line: "N passed, N failed".
set -u
fbin=${1:?usage: roles_test.sh FENCE_BIN}
top=$(pwd)
case $fbin in /*) ;; *) fbin=$top/$fbin ;; esac
: "${LDL_PG_CONNINFO:?run me through tests/store/with_pg.sh}"
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-roles.XXXXXX") || exit 2
trap 'rm -rf "$d"' EXIT
trap 'exit 130' INT TERM
cd "$d" || exit 2
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL [roles]: $1" >&2; fi; }
# a database of its own (other suites share the server); roles are the cluster's: this
# suite's names are its own
psql "$LDL_PG_CONNINFO" -XAtqc "DROP DATABASE IF EXISTS ldl_roles" > /dev/null 2>&1
psql "$LDL_PG_CONNINFO" -XAtqc "CREATE DATABASE ldl_roles" > /dev/null || { echo "0 passed, 1 failed"; exit 1; }
CI="$LDL_PG_CONNINFO dbname=ldl_roles"
q() { psql "$CI" -XAtqc "$1" 2>&1; }
# as ROLE: ldl-fence pg with the role's own login (not a superuser)
asrole() { role=$1; shift; timeout -k 5 60 "$fbin" pg --conninfo "$CI user=$role" --store-timeout 20 "$@"; }
echo "INSERT INTO report VALUES (current_setting('ldl.fence')::bigint);" > w.sql
fix() { sed -n 's/.*Fix[^:]*: \(.*\)$/\1/p' "$1" | sed 's/ (docs\/postgres.md, "Several login roles")$//; s/$/;/'; }

# ---------------------------------------------------------------- README's set-up
awk '$0 == "<!-- recipe: readme-two-roles.sql -->" { f = 1; next }
     f == 1 && /^```/ { f = 2; next } f == 2 && /^```$/ { exit } f == 2 { print }' \
  "$top/README.md" > two.sql
check "README.md has the recipe readme-two-roles.sql" '[ -s two.sql ]'
q "CREATE TABLE report (fence bigint)" > /dev/null
psql "$CI" -X -q -v ON_ERROR_STOP=1 -f two.sql; rc=$?
check "the README block runs as the superuser (rc $rc)" '[ $rc = 0 ]'
check "... report_a and report_b are not superusers" \
  '[ "$(q "SELECT count(*) FROM pg_roles WHERE rolname IN ('"'report_a'"', '"'report_b'"') AND NOT rolsuper")" = 2 ]'
asrole report_a --resource nightly-report --fence 5 w.sql 2>e.txt; r1=$?
asrole report_b --resource nightly-report --fence 6 w.sql 2>>e.txt; r2=$?
asrole report_a --resource nightly-report --fence 5 w.sql 2>e5.txt; r3=$?
check "two hosts, two login roles: A writes (fence 5, rc $r1), B writes (6, rc $r2), A's stale 5 is refused (rc $r3) ($(head -c 300 e.txt))" \
  '[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 77 ] && [ "$(q "SELECT string_agg(fence::text, '"' '"' ORDER BY fence) FROM report")" = "5 6" ]'

# ---------------------------------------------------------------- the issue's circle
# (a fresh deployment: the README's roles go)
q "DROP TABLE public.ldl_lease_fence; DELETE FROM report; DROP OWNED BY ldl_lock_owner; DROP ROLE ldl_lock_owner" > /dev/null
q "CREATE ROLE host_a LOGIN; CREATE ROLE host_b LOGIN; GRANT SELECT, INSERT ON report TO host_a, host_b" > /dev/null
q "CREATE TABLE public.ldl_lease_fence (resource text PRIMARY KEY, fence bigint NOT NULL CHECK (fence >= 1)); ALTER TABLE public.ldl_lease_fence OWNER TO host_a" > /dev/null
asrole host_a --resource r1 --fence 1 w.sql 2>e.txt; r1=$?
asrole host_b --resource r1 --fence 2 w.sql 2>e.txt; r2=$?
check "a table owned by host A's role: A writes (rc $r1); B is refused (rc $r2)" '[ $r1 = 0 ] && [ $r2 = 69 ]'
check "... the why names the table, its owner and this role ($(head -c 400 e.txt))" \
  'grep -q "public\"*\.\"*ldl_lease_fence\"* is owned by a role this role (host_b) does not inherit from, host_a," e.txt'
fix e.txt > fix1.sql
check "... and gives the fix ($(cat fix1.sql))" 'grep -q "GRANT ldl_lock_owner TO host_a, host_b" fix1.sql && ! grep -q REVOKE fix1.sql'
psql "$CI" -X -q -v ON_ERROR_STOP=1 -f fix1.sql; rc=$?
asrole host_b --resource r1 --fence 2 w.sql 2>e.txt; r2=$?
asrole host_a --resource r1 --fence 3 w.sql 2>>e.txt; r1=$?
check "the fix, run verbatim (rc $rc): both hosts write (B rc $r2, A rc $r1; $(head -c 300 e.txt))" '[ $rc = 0 ] && [ $r2 = 0 ] && [ $r1 = 0 ]'

# the other host's lock role holds the lock's rights: never "REVOKE" (it would break B)
q "DROP TABLE public.ldl_lease_fence; DROP ROLE ldl_lock_owner" > /dev/null
q "CREATE TABLE public.ldl_lease_fence (resource text PRIMARY KEY, fence bigint NOT NULL CHECK (fence >= 1)); ALTER TABLE public.ldl_lease_fence OWNER TO host_a; GRANT SELECT, INSERT, UPDATE ON public.ldl_lease_fence TO host_b" > /dev/null
asrole host_b --resource r2 --fence 1 w.sql 2>/dev/null; r2=$?
asrole host_a --resource r2 --fence 1 w.sql 2>e.txt; r1=$?
check "the table granted to B: A is refused (rc $r1), naming B, INSERT, the table, its owner ($(head -c 400 e.txt))" \
  '[ $r1 = 69 ] && grep -q "host_b holds INSERT and is a member neither of .*ldl_lease_fence.*owner (host_a) nor of this role (host_a)" e.txt'
fix e.txt > fix2.sql
check "... B is a lock role: the fix is the owner role, no REVOKE ($(cat fix2.sql))" \
  '! grep -q REVOKE e.txt && grep -q "GRANT ldl_lock_owner TO host_b, host_a" fix2.sql'
psql "$CI" -X -q -v ON_ERROR_STOP=1 -f fix2.sql; rc=$?
asrole host_a --resource r2 --fence 2 w.sql 2>e.txt; r1=$?
asrole host_b --resource r2 --fence 3 w.sql 2>>e.txt; r2=$?
check "the fix, run verbatim (rc $rc): both hosts write (A rc $r1, B rc $r2; $(head -c 300 e.txt))" '[ $rc = 0 ] && [ $r1 = 0 ] && [ $r2 = 0 ]'

# an INSERT-only ingest role: refused (decision 0208), the why says REVOKE ... FROM it
q "CREATE ROLE ingest LOGIN; GRANT INSERT ON public.ldl_lease_fence TO ingest" > /dev/null
asrole host_a --resource r2 --fence 4 w.sql 2>e.txt; r1=$?
fix e.txt > fix3.sql
check "an INSERT-only third role: refused (rc $r1), fix: $(cat fix3.sql) ($(head -c 300 e.txt))" \
  '[ $r1 = 69 ] && grep -q "ingest holds INSERT and" e.txt && grep -q "^REVOKE INSERT ON .*ldl_lease_fence.* FROM ingest;$" fix3.sql'
# what INSERT alone can do (the attack the refusal is for), on the real server: no
# existing mark moves (UPDATE, the upsert and a second row are refused), but a resource
# with no row yet can be shut out with INT64_MAX
qi() { psql "$CI user=ingest" -XAtqc "$1" > /dev/null 2>&1; }
qi "UPDATE public.ldl_lease_fence SET fence = 1 WHERE resource = 'r2'"; u1=$?
qi "INSERT INTO public.ldl_lease_fence VALUES ('r2', 1) ON CONFLICT (resource) DO UPDATE SET fence = 1"; u2=$?
qi "INSERT INTO public.ldl_lease_fence VALUES ('r2', 1)"; u3=$?
check "INSERT-only: cannot lower an existing mark (UPDATE rc $u1, upsert rc $u2, a second row rc $u3; mark $(q "SELECT fence FROM public.ldl_lease_fence WHERE resource = 'r2'"))" \
  '[ $u1 != 0 ] && [ $u2 != 0 ] && [ $u3 != 0 ] && [ "$(q "SELECT fence FROM public.ldl_lease_fence WHERE resource = '"'r2'"'")" = 3 ]'
qi "INSERT INTO public.ldl_lease_fence VALUES ('fresh', 9223372036854775807)"; u4=$?
q "REVOKE INSERT ON public.ldl_lease_fence FROM ingest" > /dev/null
asrole host_a --resource fresh --fence 100 w.sql 2>/dev/null; r1=$?
q "GRANT INSERT ON public.ldl_lease_fence TO ingest" > /dev/null
check "INSERT-only: a fresh resource shut out with INT64_MAX (insert rc $u4): the lock's holder is refused as stale (rc $r1)" \
  '[ $u4 = 0 ] && [ $r1 = 77 ]'
psql "$CI" -X -q -v ON_ERROR_STOP=1 -f fix3.sql; rc=$?
asrole host_a --resource r2 --fence 4 w.sql 2>e.txt; r1=$?
check "... the REVOKE, run verbatim (rc $rc): A writes again (rc $r1)" '[ $rc = 0 ] && [ $r1 = 0 ]'

echo "$pass passed, $fail failed"
[ $fail = 0 ]
