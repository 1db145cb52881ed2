#!/bin/sh
# api_test.sh -- the public surface stays what CHANGELOG says (issue 31): at most 100
# functions by tools/api-count.sh; the count CHANGELOG quotes is the count measured now;
# every deprecated name is still defined (code written against v0.3 still links) and
# is listed in CHANGELOG's deprecated table with a replacement, and nothing else is.
set -eu
cd "$(dirname "$0")/../.."
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
line=$(sh tools/api-count.sh)
fn=$(echo "$line" | sed -n 's/^public surface: \([0-9]*\) functions, \([0-9]*\) types.*/\1/p')
ty=$(echo "$line" | sed -n 's/^public surface: \([0-9]*\) functions, \([0-9]*\) types.*/\2/p')
[ -n "$fn" ] || { echo "FAIL: api-count answered: $line"; exit 1; }
if [ "$fn" -le 100 ]; then ok; else bad "$fn public functions, the goal is at most 100"; fi
if tr '\n' ' ' <CHANGELOG.md | grep -q "$fn functions and $ty types after"; then ok
else bad "CHANGELOG does not quote the measured count ($fn functions and $ty types after)"; fi
# every deprecated name still defined, in one object implementing every header
{ echo '#define LITE_DI_LOCK_IMPLEMENTATION'; echo '#include "lite_di_lock.h"'
  for a in redis redis_cluster pg etcd sqlite; do
    up=$(echo "$a" | tr a-z A-Z)
    echo "#define LDL_${up}_IMPLEMENTATION"; echo "#include \"adapters/lite_di_lock_$a.h\""
  done; } >"$d/all.c"
inc=$(pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=200809L -I. $inc -c "$d/all.c" -o "$d/all.o"
nm -g --defined-only "$d/all.o" | awk '{ print $3 }' | sort -u >"$d/defined"
sed -n '/<!-- deprecated:begin -->/,/<!-- deprecated:end -->/p' CHANGELOG.md >"$d/table"
grep -o '^| `ldl_[a-z0-9_]*`' "$d/table" | tr -d '|` ' | sort >"$d/listed"
sort tools/api-deprecated.txt | grep . >"$d/dep"
n=0
while read -r name; do
  n=$((n + 1))
  if grep -qxF "$name" "$d/defined"; then ok; else bad "$name is deprecated but no longer defined"; fi
  row=$(grep "^| \`$name\` |" "$d/table" || true)
  att=$(echo "$row" | grep -o 'after `ldl_view_[a-z_]*(' | sed 's/^after .//; s/($//')
  if [ -n "$att" ] && grep -q "LDL__INLINE int $att(" adapters/lite_di_lock_view.h; then ok
  else bad "$name: CHANGELOG names no replacement attach function that exists ($row)"; fi
done <"$d/dep"
if cmp -s "$d/dep" "$d/listed"; then ok; else bad "CHANGELOG's table and tools/api-deprecated.txt differ:"; diff "$d/dep" "$d/listed" || true; fi
[ "$n" -gt 0 ] || bad "no deprecated names read"
echo "api: $pass passed, $fail failed ($fn functions, $ty types; $n deprecated)"
[ "$fail" -eq 0 ]
