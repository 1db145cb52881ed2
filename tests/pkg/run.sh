#!/bin/sh
# tests/pkg/run.sh -- the packaging proof (make test-pkg; issue 15).
#  1. make install PREFIX=<tmp>/prefix DESTDIR=<tmp>/stage: every file lands under
#     DESTDIR, none outside, the generated files carry the header's version and no
#     staging path; then the staged tree is moved to PREFIX, as a package manager would.
#  2. consumers (tests/pkg/consumer_*.c, all -Wall -Wextra -Wpedantic -Werror, C99) built
#     four ways: pkg-config, CMake find_package, CMake add_subdirectory, Meson subproject;
#     each way builds the core (header-only, and the library target where the way has
#     one) and both adapters (the Redis one also against the library target). The CMake
#     package is also asked for a newer major / 0.x minor / unknown component (refused),
#     used without COMPONENTS and from a C++-only project (tests/pkg/nolang, cxx).
#  3. the core consumers run; the adapter consumers run one lifecycle each against a
#     real redis-server / PostgreSQL started here on 127.0.0.1 (tests/store/with_*.sh).
#  4. the source tree as a top-level CMake project builds its CTest suites and runs four.
#  5. make uninstall with the same PREFIX and DESTDIR leaves only the files it did not
#     install (two planted ones); a second uninstall still succeeds.
# Last line: "N passed, N failed". About 30 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo" || exit 1
MAKE=${MAKE:-make}
CC=${CC:-cc}
WARN="-Wall -Wextra -Wpedantic -Werror"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-pkg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
suite=packaging
. "$here/common.sh"
# add a sub-suite's "N passed, N failed" (its last line) to ours
tally() {
  sed 's/^/    /' "$tmp/sub.log"
  p=$(tail -n 1 "$tmp/sub.log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
  f=$(tail -n 1 "$tmp/sub.log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
  if [ -z "$p" ] || [ "$1" != 0 ]; then bad "$2 (exit $1)"; else pass=$((pass + p)); fail=$((fail + f)); fi
}

ver=$(sh pkg/version.sh lite_di_lock.h) || { bad "pkg/version.sh reads the header"; finish; }
major=${ver%%.*}; rest=${ver#*.}; minor=${rest%%.*}
echo "== packaging: lite_di_lock $ver (from lite_di_lock.h), temp dir $tmp"
prefix=$tmp/prefix
stage=$tmp/stage

# ------------------------------------------------------------------ 1. install
echo "-- make install PREFIX=$prefix DESTDIR=$stage"
check "make install with PREFIX and DESTDIR" $MAKE --no-print-directory install PREFIX="$prefix" DESTDIR="$stage"
check "nothing written outside DESTDIR" test ! -e "$prefix"
for f in include/lite_di_lock.h include/lite_di_lock/lite_di_lock_redis.h include/lite_di_lock/lite_di_lock_pg.h \
         share/pkgconfig/lite_di_lock.pc share/pkgconfig/lite_di_lock_redis.pc share/pkgconfig/lite_di_lock_pg.pc \
         share/cmake/lite_di_lock/lite_di_lockConfig.cmake share/cmake/lite_di_lock/lite_di_lockConfigVersion.cmake \
         share/cmake/lite_di_lock/lite_di_lockDeps.cmake share/lite_di_lock/lite_di_lock.c; do
  check "installed $f" test -f "$stage$prefix/$f"
done
check "installed headers are the tree's" cmp lite_di_lock.h "$stage$prefix/include/lite_di_lock.h"
for f in lite_di_lock lite_di_lock_redis lite_di_lock_pg; do
  check "$f.pc says Version: $ver" grep -qx "Version: $ver" "$stage$prefix/share/pkgconfig/$f.pc"
done
check "ConfigVersion.cmake says $ver" grep -q "set(PACKAGE_VERSION \"$ver\")" \
  "$stage$prefix/share/cmake/lite_di_lock/lite_di_lockConfigVersion.cmake"
check "no DESTDIR path inside the installed files" sh -c "! grep -rl '$stage' '$stage'"
mkdir -p "$(dirname "$prefix")" && mv "$stage$prefix" "$prefix"

# ------------------------------------------------------------------ 2a. pkg-config
echo "-- pkg-config (PKG_CONFIG_PATH=$prefix/share/pkgconfig)"
PKG_CONFIG_PATH=$prefix/share/pkgconfig; export PKG_CONFIG_PATH
check "pkg-config --modversion lite_di_lock is $ver" test "$(pkg-config --modversion lite_di_lock)" = "$ver"
check "pkg-config --cflags lite_di_lock is -I$prefix/include" test "$(echo $(pkg-config --cflags lite_di_lock))" = "-I$prefix/include"
check "pkg-config refuses lite_di_lock >= $((major + 1)).0" sh -c "! pkg-config --exists 'lite_di_lock >= $((major + 1)).0'"
check "pkg-config lite_di_lock_redis pulls in hiredis" sh -c "pkg-config --libs lite_di_lock_redis | grep -q -- -lhiredis"
check "pkg-config lite_di_lock_pg pulls in libpq" sh -c "pkg-config --libs lite_di_lock_pg | grep -q -- -lpq"
mkdir -p "$tmp/pc"
check "pkg-config: core consumer builds" sh -c "$CC -std=c99 $WARN \$(pkg-config --cflags lite_di_lock) \
  tests/pkg/consumer_core.c \$(pkg-config --libs lite_di_lock) -o '$tmp/pc/core_hdr'"
check "pkg-config: redis consumer builds" sh -c "$CC -std=c99 $WARN \$(pkg-config --cflags lite_di_lock_redis) \
  tests/pkg/consumer_redis.c \$(pkg-config --libs lite_di_lock_redis) -o '$tmp/pc/redis'"
check "pkg-config: pg consumer builds" sh -c "$CC -std=c99 $WARN \$(pkg-config --cflags lite_di_lock_pg) \
  tests/pkg/consumer_pg.c \$(pkg-config --libs lite_di_lock_pg) -o '$tmp/pc/pg'"

# ------------------------------------------------------------------ 2b. CMake find_package
echo "-- CMake find_package (CMAKE_PREFIX_PATH=$prefix)"
check "CMake find_package($ver EXACT COMPONENTS redis pg): configure" \
  cmake -S tests/pkg -B "$tmp/find" -G Ninja -DLDL_MODE=find -DLDL_WANT="$ver" -DLDL_PREFIX="$prefix" \
  -DCMAKE_PREFIX_PATH="$prefix"
check "CMake find_package: build" cmake --build "$tmp/find"
# the version file: a newer major, and (0.x) a newer minor, must be refused; a missing component too
mkdir -p "$tmp/neg"
for want in "$((major + 1)).0" "$major.$((minor + 1))" "$ver COMPONENTS nosuch"; do
  printf 'cmake_minimum_required(VERSION 3.14)\nproject(neg LANGUAGES NONE)\nfind_package(lite_di_lock %s REQUIRED)\n' \
    "$want" > "$tmp/neg/CMakeLists.txt"
  rm -rf "$tmp/neg/b"
  check "CMake find_package(lite_di_lock $want) is refused" \
    sh -c "! cmake -S '$tmp/neg' -B '$tmp/neg/b' -DCMAKE_PREFIX_PATH='$prefix'"
done
printf 'cmake_minimum_required(VERSION 3.14)\nproject(pos LANGUAGES NONE)\nfind_package(lite_di_lock %s REQUIRED)\n' \
  "$major.$minor" > "$tmp/neg/CMakeLists.txt"
rm -rf "$tmp/neg/b"
check "CMake find_package(lite_di_lock $major.$minor) is accepted" cmake -S "$tmp/neg" -B "$tmp/neg/b" -DCMAKE_PREFIX_PATH="$prefix"

check "CMake find_package without COMPONENTS, no language: core and adapter targets, no lib" \
  cmake -S tests/pkg/nolang -B "$tmp/nolang" -DCMAKE_PREFIX_PATH="$prefix"
check "CMake find_package in a C++-only project: configure" \
  cmake -S tests/pkg/cxx -B "$tmp/cxx" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
check "CMake find_package in a C++-only project: build (lib compiled as C++)" cmake --build "$tmp/cxx"

# ------------------------------------------------------------------ 2c. CMake add_subdirectory
echo "-- CMake add_subdirectory($repo)"
check "CMake add_subdirectory: configure" \
  cmake -S tests/pkg -B "$tmp/subdir" -G Ninja -DLDL_MODE=subdir -DLDL_SOURCE="$repo"
check "CMake add_subdirectory: build" cmake --build "$tmp/subdir"

# ------------------------------------------------------------------ 2d. Meson subproject
echo "-- Meson subproject (subprojects/lite_di_lock -> $repo)"
mkdir -p "$tmp/mproj/subprojects"
cp tests/pkg/meson.build tests/pkg/consumer_core.c tests/pkg/consumer_redis.c tests/pkg/consumer_pg.c \
   tests/pkg/lifecycle.h "$tmp/mproj/"
echo "$ver" > "$tmp/mproj/want.txt"
ln -s "$repo" "$tmp/mproj/subprojects/lite_di_lock"
check "Meson subproject: setup" meson setup "$tmp/meson" "$tmp/mproj"
check "Meson subproject: build" ninja -C "$tmp/meson"

# ------------------------------------------------------------------ 3. run them
echo "-- the core consumers"
for b in pc/core_hdr find/core_hdr find/core_lib cxx/core_hdr cxx/core_lib subdir/core_hdr subdir/core_lib meson/core_hdr meson/core_lib; do
  case $b in *_lib) what=core-lib ;; *) what=core ;; esac
  out=$("$tmp/$b" 2>&1); rc=$?
  if [ $rc = 0 ] && [ "$out" = "$what ok version=$ver fences=1,2" ]; then ok "$b: $out"
  else bad "$b (exit $rc): $out"; fi
done
echo "-- the Redis consumers (their own redis-server on 127.0.0.1)"
rbins=; for b in pc/redis find/redis find/redis_lib subdir/redis subdir/redis_lib meson/redis meson/redis_lib; do
  rbins="$rbins $tmp/$b"; done
tests/store/with_redis.sh sh tests/pkg/run_consumers.sh redis "$ver" $rbins >"$tmp/sub.log" 2>&1
tally $? "redis consumers"
echo "-- the PostgreSQL consumers (a throwaway server on 127.0.0.1)"
tests/store/with_pg.sh "sh tests/pkg/run_consumers.sh pg $ver $tmp/pc/pg $tmp/find/pg $tmp/subdir/pg $tmp/meson/pg" \
  >"$tmp/sub.log" 2>&1
rc=$?
grep -v '^with_pg.sh: postgres\|^== sh ' "$tmp/sub.log" > "$tmp/sub2.log"; mv "$tmp/sub2.log" "$tmp/sub.log"
tally $rc "pg consumers"

# ------------------------------------------------------------------ 4. CTest
echo "-- the source tree as a top-level CMake project: CTest"
check "CMake top-level: configure" cmake -S "$repo" -B "$tmp/top" -G Ninja
check "CMake top-level: build" cmake --build "$tmp/top" -j2
# all twelve suites are registered (checked by name); four of them run here (make test
# runs every suite its own way already; the CTest route is what is proven here)
check "CTest registers core, store_memory, 4 Redis and 6 PostgreSQL suites" \
  test "$(cd "$tmp/top" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort | tr '\n' ' ')" = \
  "core pg_async pg_conformance pg_contention pg_faults pg_hostile pg_names redis_adapter redis_async redis_faults redis_fixes store_memory "
check "CTest: core, store_memory, redis_adapter, pg_names pass" \
  sh -c "cd '$tmp/top' && ctest --output-on-failure -R '^(core|store_memory|redis_adapter|pg_names)\$' \
         | tee /dev/stderr | grep -q '100% tests passed, 0 tests failed out of 4'"

# ------------------------------------------------------------------ 5. uninstall
echo "-- make uninstall PREFIX=$prefix DESTDIR=$stage"
mv "$prefix" "$stage$prefix"
: > "$stage$prefix/include/other.h"                  # not ours: must survive
: > "$stage$prefix/share/pkgconfig/other.pc"
check "make uninstall with PREFIX and DESTDIR" $MAKE --no-print-directory uninstall PREFIX="$prefix" DESTDIR="$stage"
left=$(cd "$stage" && find . ! -type d | sort | tr '\n' ' ')
check "only the two planted files are left (left: $left)" \
  test "$left" = "./${prefix#/}/include/other.h ./${prefix#/}/share/pkgconfig/other.pc "
check "no lite_di_lock directory is left" test -z "$(find "$stage" -name '*lite_di_lock*')"
check "a second make uninstall succeeds" $MAKE --no-print-directory uninstall PREFIX="$prefix" DESTDIR="$stage"
finish
