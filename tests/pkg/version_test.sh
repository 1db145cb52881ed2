#!/bin/sh
# version_test.sh -- one version everywhere (issue 30). The one source is the header's
# LDL_VERSION_MAJOR/_MINOR/_PATCH (read by pkg/version.sh); every other place that
# states a version must say the same, or this test fails:
#   the header's LDL_VERSION string (compiled and printed) and its top comment,
#   CHANGELOG.md's newest released section (with a date), `ldl-run -V`, `ldl-fence -V`,
#   `make install`'s "installed lite_di_lock X" line, `pkg-config --modversion` of
#   every installed .pc file, CMake's find_package(lite_di_lock X EXACT) and a newer
#   minor refused, and Meson's dependency('lite_di_lock', version: '==X'); and `make cli`
#   builds both CLIs.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
v=$(sh pkg/version.sh lite_di_lock.h) || { echo "version: pkg/version.sh cannot read the header"; exit 1; }
case $v in [0-9]*.[0-9]*.[0-9]*) ok "the header's numbers: $v" ;; *) bad "numbers: '$v'"; esac
major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}

# the header's string, compiled
printf '#include <stdio.h>\n#include "lite_di_lock.h"\nint main(void){puts(LDL_VERSION);return 0;}\n' >"$d/v.c"
if ${CC:-cc} -std=c99 -I. "$d/v.c" -o "$d/v" && [ "$("$d/v")" = "$v" ]; then ok "LDL_VERSION is \"$v\""
else bad "LDL_VERSION says '$("$d/v" 2>/dev/null)', the numbers $v"; fi
head -n 1 lite_di_lock.h | grep -q "^/\* lite_di_lock.h - v$v - " && ok "the header's top comment says v$v" \
  || bad "the header's top comment: $(head -n 1 lite_di_lock.h)"

# CHANGELOG: the newest released section is this version, dated
rel=$(grep -E '^## [0-9]+\.[0-9]+\.[0-9]+' CHANGELOG.md | head -n 1)
printf '%s\n' "$rel" | grep -Eq "^## $v - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" && ok "CHANGELOG: $rel" \
  || bad "CHANGELOG's newest release heading is '$rel', want '## $v - YYYY-MM-DD'"

# make install into a temp prefix: its line, the CLIs, the .pc files
out=$(make --no-print-directory install PREFIX="$d/usr" WITH_CLI=yes 2>&1) || { bad "make install: $out"; }
printf '%s\n' "$out" | grep -q "^installed lite_di_lock $v " && ok "make install says lite_di_lock $v" \
  || bad "make install's line: $(printf '%s\n' "$out" | grep '^installed lite_di_lock' || echo none)"
for c in ldl-run ldl-fence; do
  got=$("$d/usr/bin/$c" -V 2>&1)
  [ "$got" = "$c $v (lite_di_lock $v)" ] && ok "$c -V: $got" || bad "$c -V says '$got', want '$c $v (lite_di_lock $v)'"
done
n=0
for pc in "$d"/usr/share/pkgconfig/*.pc; do
  name=$(basename "$pc" .pc); n=$((n + 1))
  got=$(PKG_CONFIG_PATH="$d/usr/share/pkgconfig" pkg-config --modversion "$name" 2>&1)
  [ "$got" = "$v" ] && ok "pkg-config --modversion $name: $got" || bad "pkg-config --modversion $name: '$got'"
done
[ $n -ge 1 ] && ok "$n .pc files checked" || bad "no .pc file installed"

# CMake: the exact version is found, a newer minor is refused (0.x: minors break)
mkdir -p "$d/cm"
printf 'cmake_minimum_required(VERSION 3.14)\nproject(v LANGUAGES NONE)\nfind_package(lite_di_lock %s EXACT REQUIRED)\nmessage(STATUS "found=${lite_di_lock_VERSION}")\n' "$v" >"$d/cm/CMakeLists.txt"
got=$(cmake -S "$d/cm" -B "$d/cm/b" -DCMAKE_PREFIX_PATH="$d/usr" 2>&1 | sed -n 's/^-- found=//p')
[ "$got" = "$v" ] && ok "CMake find_package $v EXACT: $got" || bad "CMake find_package $v EXACT: '$got'"
mkdir -p "$d/cn"
printf 'cmake_minimum_required(VERSION 3.14)\nproject(v LANGUAGES NONE)\nfind_package(lite_di_lock %s.%s REQUIRED)\n' "$major" "$((minor + 1))" >"$d/cn/CMakeLists.txt"
if cmake -S "$d/cn" -B "$d/cn/b" -DCMAKE_PREFIX_PATH="$d/usr" >/dev/null 2>&1; then bad "CMake accepted $major.$((minor + 1)) from $v"
else ok "CMake refuses $major.$((minor + 1))"; fi

# Meson: dependency() through the installed pkg-config file, with an exact version
mkdir -p "$d/me"
printf "project('v', 'c')\ndep = dependency('lite_di_lock', version : '==%s')\nmessage('found=' + dep.version())\n" "$v" >"$d/me/meson.build"
got=$(PKG_CONFIG_PATH="$d/usr/share/pkgconfig" meson setup "$d/me/b" "$d/me" 2>&1 | sed -n 's/^Message: found=//p')
[ "$got" = "$v" ] && ok "Meson dependency('lite_di_lock', version: '==$v'): $got" || bad "Meson dependency ==$v: '$got'"

# make cli builds both CLIs (README: "Build with `make cli`")
rm -f build/cli/ldl-run build/cli/ldl-fence
if make --no-print-directory cli >"$d/cli.log" 2>&1; then
  for c in ldl-run ldl-fence; do
    got=$(build/cli/$c -V 2>&1)
    [ "$got" = "$c $v (lite_di_lock $v)" ] && ok "make cli built $c: $got" || bad "make cli: build/cli/$c -V says '$got'"
  done
else bad "make cli failed: $(tail -n 3 "$d/cli.log")"; fi

echo "version: $pass passed, $fail failed"
[ $fail = 0 ]
