#!/bin/sh
# recipes_mutants.sh FENCE_BIN TOOLDIR -- break a recipe in a copy of docs/, one way at a
# time, and check that tests/fence_recipes/recipes_test.sh goes red for each (make
# test-fence-recipes-mutants; not part of make test, ~15 s per mutant). Each mutant is a
# sed expression on one doc that must change it. Last line: "N killed, N survived".
set -u
fbin=${1:?usage: recipes_mutants.sh FENCE_BIN TOOLDIR}; tools=${2:?usage: recipes_mutants.sh FENCE_BIN TOOLDIR}
top=$(pwd)
case $fbin in /*) ;; *) fbin=$top/$fbin ;; esac
case $tools in /*) ;; *) tools=$top/$tools ;; esac
w=$(mktemp -d "${TMPDIR:-/tmp}/ldl-recipe-mut.XXXXXX") || exit 2
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/docs" "$w/tests"
cp -r "$top/tests/fence_recipes" "$top/tests/store" "$top/tests/cli" "$w/tests/"
killed=0; survived=0
# name|doc|sed expression
while IFS='|' read -r name doc expr; do
  [ -n "$name" ] || continue
  cp "$top"/docs/*.md "$w/docs/"
  sed "$expr" "$top/docs/$doc" > "$w/docs/$doc"
  if cmp -s "$top/docs/$doc" "$w/docs/$doc"; then echo "STALE mutant $name"; survived=$((survived + 1)); continue; fi
  (cd "$w" && tests/store/with_pg.sh \
     "tests/store/with_redis.sh sh tests/fence_recipes/recipes_test.sh direct '$fbin' '$tools'") > "$w/log" 2>&1
  rc=$?
  first=$(grep -a -m1 FAIL "$w/log" | cut -c1-150)
  if [ $rc != 0 ] && [ -n "$first" ]; then echo "killed   $name ($first)"; killed=$((killed + 1))
  else echo "SURVIVED $name (exit $rc)"; survived=$((survived + 1)); fi
done <<'LIST'
sqlite-shell-unconditional|sqlite.md|s/  WHERE (SELECT fence FROM ldl_lease_fence WHERE resource = .nightly-report.) = :fence$/  WHERE 1/
sqlite-python-unconditional|sqlite.md|s/        WHERE (SELECT fence FROM ldl_lease_fence WHERE resource = 'nightly-report') = ?1$/        WHERE 1/
psql-no-branch|postgres.md|s/^\\if :fenced$/\\if 1/
psql-check-always-raises|postgres.md|s/^  WHERE f.fence OPERATOR(pg_catalog.<=) EXCLUDED.fence$/  WHERE true/
psycopg2-no-branch|postgres.md|s/            if cur.fetchone() is None:/            if False:/
psycopg3-no-branch|postgres.md|s/    if conn.execute(FENCE, ("nightly-report", fence)).fetchone() is None:/    if conn.execute(FENCE, ("nightly-report", fence)) is None:/
redis-script-one-byte|redis.md|s/^local r = redis.pcall(unpack(ARGV, 3))$/local r = redis.pcall(unpack(ARGV, 3)) /
redis-cli-stale-ignored|redis.md|s/^  0) echo "stale fence/  9) echo "stale fence/
LIST
echo "$killed killed, $survived survived"
[ $survived = 0 ]
