#!/bin/sh
# shape_test.sh -- the CLIs' shape (issue 31 item 2), run first by make test-cli:
#  1. tools/long-functions.sh measures what it claims: fixtures with functions of
#     known lengths (a multi-line signature, braces inside strings, character
#     literals and comments, a file-scope initializer that is no function); --max
#     exits 1 on a function one line over, 0 at the limit.
#  2. no function of cli/ldl-run.c or cli/ldl-fence.c is longer than 80 lines.
#  3. ldl-run names a store only in its store section (decision 0713): outside the
#     lines from "---- stores" to the driver table, no adapter or client call
#     (ldl_redis_*, ldl_pg_*, ldl_sqlite_*, ldl_etcd_*, redis*, PQ*, sqlite3_*,
#     curl_*) and no store name in code; a fixture with one such call must be found.
# Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"         # check, summary
lf=${LF:-$top/tools/long-functions.sh}     # LF, RUN_SRC, FENCE_SRC: the mutants' copies
run_src=${RUN_SRC:-$top/cli/ldl-run.c}
fence_src=${FENCE_SRC:-$top/cli/ldl-fence.c}
d=$(mktemp -d "${TMPDIR:-/tmp}/ldl-shape.XXXXXX") || exit 2
trap 'rm -rf "$d"' EXIT
label=shape

# ---------------------------------------------------------------- 1. the counter
# body N: N - 2 lines of statements (a function of N lines with its signature and
# its closing brace on lines of their own)
body() { i=0; while [ $i -lt $(($1 - 2)) ]; do echo "    x += $i; /* { */"; i=$((i + 1)); done; }
{
  echo '#include <stdio.h>'
  echo 'static const int tab[] = { 1, 2, 3 };   /* { no function } */'
  echo 'struct s { int a; };'
  echo 'static int proto(int a);'
  echo 'static int eighty(int x) {'; body 80 | sed '1s/.*/    const char *s = "}}}{"; char c = '"'"'}'"'"'; (void)s; (void)c;/'; echo '}'
  echo 'static int'
  echo 'eighty_one(int x,'
  echo '           int y) {'; body 79; echo '    return x + y; }'
  echo '#define BRACE {'
  echo '// a comment with {'
  echo 'int main(void) { return eighty(1) + eighty_one(1, 2); }'
} > "$d/fix.c"
out=$(sh "$lf" "$d/fix.c")
check "long-functions: lengths of the fixture ($(echo "$out" | tr '\n' ';'))" \
  '[ "$out" = "$(printf "81 %s:85 eighty_one\n80 %s:5 eighty\n1 %s:168 main" "$d/fix.c" "$d/fix.c" "$d/fix.c")" ]'
sh "$lf" --max 80 "$d/fix.c" > "$d/max.out" 2> "$d/max.err"; rc=$?
check "long-functions --max 80: exit 1 and names the 81-line function only (rc $rc: $(cat "$d/max.out"))" \
  '[ $rc = 1 ] && [ "$(cat "$d/max.out")" = "81 $d/fix.c:85 eighty_one" ]'
sh "$lf" --max 81 "$d/fix.c" > "$d/max.out" 2>&1; rc=$?
check "long-functions --max 81: exit 0, nothing printed (rc $rc)" '[ $rc = 0 ] && [ ! -s "$d/max.out" ]'
sh "$lf" --max x "$d/fix.c" 2>/dev/null; rc=$?
check "long-functions --max x: exit 2 (rc $rc)" '[ $rc = 2 ]'

# ---------------------------------------------------------------- 2. the CLIs
sh "$lf" --max 80 "$run_src" "$fence_src" > "$d/cli.out" 2>&1; rc=$?
check "no CLI function over 80 lines (rc $rc: $(cat "$d/cli.out"))" '[ $rc = 0 ]'
sh "$lf" "$run_src" "$fence_src" | head -n 1 > "$d/longest"
echo "note [shape]: longest CLI function: $(cat "$d/longest")"

# ---------------------------------------------------------------- 3. one code path
# the store-naming lines of FILE outside its store section (comments skipped)
named() {
  awk '
    /^\/\* -+ stores \*\//      { sect = 1 }
    /^#define NDRIVERS/         { sect = 0; next }
    /^[ \t]*\/\*/ && !/\*\//    { inc = 1; next }
    inc { if (/\*\//) inc = 0; next }
    /^[ \t]*\/\*.*\*\/[ \t]*$/  { next }
    sect || FNR < 300           { next }
    /(ldl_(redis|pg|sqlite|etcd)_[a-z_]*|redis[A-Z][A-Za-z]*|PQ[a-z][A-Za-z]*|sqlite3_[a-z_]*|curl_[a-z_]*)[ \t]*\(|ST_(REDIS|PG|SQLITE|ETCD|MEMORY)|"--(redis|pg|sqlite|etcd|memory)"/ {
      print FNR ": " $0 }' "$1"
}
named "$run_src" > "$d/named"
check "ldl-run: no store named outside the store section ($(head -n 3 "$d/named" | tr '\n' ';'))" '[ ! -s "$d/named" ]'
# the check can fail: one store call placed in main
sed 's/^int main(int argc, char \*\*argv) {$/&\n    (void)ldl_redis_why(NULL);/' "$run_src" > "$d/broken.c"
named "$d/broken.c" > "$d/named2"
check "ldl-run: a store call in main is found ($(cat "$d/named2"))" 'grep -q "ldl_redis_why" "$d/named2"'
summary
