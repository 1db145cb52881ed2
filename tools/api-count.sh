#!/bin/sh
# api-count.sh [-v] -- count the public surface of the header and every adapter (issue 31):
# functions = the external ldl_* symbols of one object that implements all six headers
# (and includes adapters/lite_di_lock_view.h)
# (nm -g --defined-only), plus the header's static inline getters (LDL__INLINE ldl_*);
# types = the ldl_* names a typedef declares (after the preprocessor). Names starting
# ldl__ are private and not counted, nor are the names listed in tools/api-deprecated.txt
# (deprecated wrappers kept for one release). -v lists the names.
set -eu
cd "$(dirname "$0")/.."
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
{
  echo '#define LITE_DI_LOCK_IMPLEMENTATION'; echo '#include "lite_di_lock.h"'
  for a in redis redis_cluster pg etcd sqlite; do
    up=$(echo "$a" | tr a-z A-Z)
    echo "#define LDL_${up}_IMPLEMENTATION"; echo "#include \"adapters/lite_di_lock_$a.h\""
  done
  echo '#include "adapters/lite_di_lock_view.h"'
} >"$d/all.c"
inc=$(pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=200809L -I. $inc -c "$d/all.c" -o "$d/all.o"
skip() { if [ -f tools/api-deprecated.txt ]; then grep -vxF -f tools/api-deprecated.txt; else cat; fi; }
{ nm -g --defined-only "$d/all.o" | awk '$3 ~ /^ldl_/ && $3 !~ /^ldl__/ { print $3 }'
  sed -n 's/^LDL__INLINE [^(]*\b\(ldl_[a-z0-9][a-z0-9_]*\)(.*/\1/p' lite_di_lock.h adapters/*.h
} | sort -u | skip >"$d/fn"
# a typedef's name: "typedef ... NAME;", "} NAME;" closing a typedef'd struct/enum, or
# "typedef R (*NAME)(...);"
${CC:-cc} -std=c99 -E -P -D_POSIX_C_SOURCE=200809L -I. $inc "$d/all.c" >"$d/all.i"
{ tr '\n' ' ' <"$d/all.i" | grep -oE '\} *ldl_[a-z0-9][a-z0-9_]* *;' | grep -oE 'ldl_[a-z0-9_]+'
  tr '\n' ' ' <"$d/all.i" | grep -oE 'typedef [^;{}]*[ *]ldl_[a-z0-9][a-z0-9_]* *;' | grep -oE 'ldl_[a-z0-9_]+ *;$' | grep -oE 'ldl_[a-z0-9_]+'
  tr '\n' ' ' <"$d/all.i" | grep -oE 'typedef [^;{}]*\( *\* *ldl_[a-z0-9][a-z0-9_]* *\)' | grep -oE 'ldl_[a-z0-9_]+'
} | grep -v '^ldl__' | sort -u | skip >"$d/ty"
if [ "${1:-}" = -v ]; then echo "functions:"; sed 's/^/  /' "$d/fn"; echo "types:"; sed 's/^/  /' "$d/ty"; fi
echo "public surface: $(wc -l <"$d/fn") functions, $(wc -l <"$d/ty") types (tools/api-count.sh)"
