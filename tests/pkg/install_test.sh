#!/bin/sh
# tests/pkg/install_test.sh -- make install / make uninstall under what an operator
# hits (issue 23 items 9 and 10; decision 0602). Part of make test-pkg; alone:
# make test-pkg-install. Everything happens in one temp dir: a copy of the source
# tree (owned by nobody when run as root: `sudo make install` from a user's tree)
# and every DESTDIR. In order:
#  1. CC=false: make install installs the library (headers, .pc, CMake files, the
#     lib source) and says ldl-run was skipped; make install-cli and
#     make install WITH_CLI=yes fail and write nothing.
#  2. root's make install from the nobody-owned copy: ldl-run, ldl-fence and the library
#     installed, nothing created or changed in the tree, no root-owned file in it.
#  3. that install is the victim: make uninstall / uninstall-headers / uninstall-cli
#     with DESTDIR="<tmp>/nosuch <victim>" are refused and it survives, byte for byte.
#  4. every install and uninstall target refuses each unsafe DESTDIR/PREFIX/*DIR
#     (space, tab, newline, quote, ';', relative) before anything runs: it exits
#     non-zero naming the variable, and no file appears or goes anywhere.
#  5. BINDIR is honoured by make install, install-cli and uninstall.
#  6. round trip into a DESTDIR holding foreign files (one inside our own share dir):
#     install writes exactly the manifest, uninstall removes exactly it (checksums of
#     everything else unchanged), keeps the non-empty dir and says so; twice is fine.
#  7. the tree is still unchanged and owned by nobody.
# Last line: "N passed, N failed". About 15 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# our make runs must not inherit the caller's command-line variables (DESTDIR=...)
unset MAKEFLAGS MFLAGS MAKELEVEL
MAKE=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-inst.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
suite="install safety"
. "$here/common.sh"

src=$tmp/src
mkdir "$src" "$tmp/log" || exit 1
(cd "$repo" && tar --exclude=./.git --exclude=./build --exclude='./bench/*node_modules' \
  --exclude='./bench/npm/node_modules' -cf - .) | tar --no-same-owner -xf - -C "$src" || exit 1
root=no
if [ "$(id -u)" = 0 ]; then chown -R nobody "$src" && root=yes; fi
echo "== install safety: a copy of the tree in $src (owned by $(stat -c %U "$src")), temp dir $tmp"

m() { $MAKE --no-print-directory -C "$src" "$@"; }
tree() { (cd "$src" && find . -printf '%y %u %s %T@ %p\n' | sort -k5); }
sums() { [ -d "$1" ] || return 0; (cd "$1" && find . ! -type d -exec md5sum {} + | sort -k2); }
files() { [ -d "$1" ] || return 0; (cd "$1" && find . ! -type d | sort); }
tree0=$(tree)
tree_same() { now=$(tree); [ "$now" = "$tree0" ] && return 0
  echo "the source tree changed:"; printf '%s\n' "$tree0" > "$tmp/t0"; printf '%s\n' "$now" > "$tmp/t1"
  diff "$tmp/t0" "$tmp/t1" | head -n 20; return 1; }
no_root_files() { [ $root = yes ] || return 0; l=$(find "$src" ! -user nobody | head -n 20); [ -z "$l" ] && return 0
  echo "not owned by nobody:"; echo "$l"; return 1; }
# refused VAR CMD...: exits non-zero and says which variable
refused() { _var=$1; shift; if "$@" > "$tmp/log/r" 2>&1; then echo "exit 0"; cat "$tmp/log/r"; return 1; fi
  cat "$tmp/log/r"; grep -q "$_var=" "$tmp/log/r"; }
# the library's files relative to a PREFIX of /usr/local (every adapter header of the tree)
lib_manifest() {
  { echo ./usr/local/include/lite_di_lock.h
    for h in "$src"/adapters/lite_di_lock_*.h; do echo "./usr/local/include/lite_di_lock/${h##*/}"; done
    for f in lite_di_lock lite_di_lock_redis lite_di_lock_pg; do echo "./usr/local/share/pkgconfig/$f.pc"; done
    for f in lite_di_lockConfig lite_di_lockConfigVersion lite_di_lockDeps; do
      echo "./usr/local/share/cmake/lite_di_lock/$f.cmake"; done
    echo ./usr/local/share/lite_di_lock/lite_di_lock.c; } | sort
}
is_list() { got=$(files "$1"); [ "$got" = "$2" ] && return 0
  printf 'expected:\n%s\ngot:\n%s\n' "$2" "$got"; return 1; }

# ------------------------------------------------------------------ 1. no compiler
echo "-- make install CC=false: the library needs no compiler"
nd=$tmp/nocc
check "make install CC=false exits 0" sh -c "$MAKE --no-print-directory -C '$src' install CC=false \
  PREFIX=/usr/local DESTDIR='$nd' > '$tmp/log/nocc' 2>&1"
check "it installed the headers, .pc and CMake files and the lib source, and nothing else" is_list "$nd" "$(lib_manifest)"
check "the installed .pc names the final prefix" grep -qx 'prefix=/usr/local' "$nd/usr/local/share/pkgconfig/lite_di_lock.pc"
check "it says ldl-run was skipped and why" grep -q 'ldl-run skipped: CC=false cannot build' "$tmp/log/nocc"
check "make install-cli CC=false fails" refused CC m install-cli CC=false PREFIX=/usr/local DESTDIR="$tmp/nocc2"
check "make install WITH_CLI=yes CC=false fails" refused CC m install WITH_CLI=yes CC=false PREFIX=/usr/local DESTDIR="$tmp/nocc2"
check "... and neither wrote anything" test ! -e "$tmp/nocc2"
check "make uninstall CC=false removes it all" m uninstall CC=false PREFIX=/usr/local DESTDIR="$nd"
check "... leaving no file" is_list "$nd" ""
check "the tree is unchanged" tree_same

# ------------------------------------------------------------------ 2. root install, nobody's tree
echo "-- make install as $(id -un) from a tree owned by $(stat -c %U "$src")"
vd=$tmp/victim
check "make install PREFIX=/usr/local DESTDIR=$vd" m install PREFIX=/usr/local DESTDIR="$vd"
check "ldl-run installed and runs (-V)" "$vd/usr/local/bin/ldl-run" -V
check "ldl-fence installed beside it and runs (-V)" "$vd/usr/local/bin/ldl-fence" -V
check "the library installed beside it" is_list "$vd" "$( (lib_manifest; echo ./usr/local/bin/ldl-run; echo ./usr/local/bin/ldl-fence) | sort)"
check "nothing created or changed in the source tree" tree_same
if [ $root = yes ]; then check "no root-owned file in the source tree" no_root_files
else echo "  (not root: the ownership check needs root and did not run)"; fi
victim=$(sums "$vd")

# ------------------------------------------------------------------ 3. the victim
echo "-- uninstall with DESTDIR=\"$tmp/nosuch $vd\" (two words)"
for t in uninstall uninstall-headers uninstall-cli; do
  check "make $t is refused" refused DESTDIR m $t PREFIX=/usr/local DESTDIR="$tmp/nosuch $vd"
  check "... and the install under $vd survives" test "$(sums "$vd")" = "$victim"
done
check "... nothing created in the tree" tree_same

# ------------------------------------------------------------------ 4. unsafe paths
echo "-- unsafe DESTDIR/PREFIX/*DIR: refused by every target before anything runs"
w=$tmp/w
mkdir "$w"
nl='
'
tab=$(printf '\t')
for c in "DESTDIR=$w/with space" "DESTDIR=stage" "PREFIX=/usr/lo cal" "BINDIR=/usr/local/b in" \
         "INCLUDEDIR=/usr/local/inc${tab}lude" "DATADIR=/usr/local/sh${nl}are" \
         "PKGCONFIGDIR=/usr/local/share/pkg;true" "CMAKEDIR=/usr/local/share/cmake/it's"; do
  var=${c%%=*}
  shown=$(printf '%s' "$c" | tr '\t\n' '??')
  bad_t=
  for t in install uninstall install-headers uninstall-headers install-cli uninstall-cli; do
    if ! refused "$var" m $t PREFIX=/usr/local DESTDIR="$w/dest" "$c" > "$tmp/log/u" 2>&1; then
      bad_t="$bad_t $t"; sed "s/^/    | $t: /" "$tmp/log/u" | head -n 8 >&2; fi
  done
  check "$shown: all six targets exit non-zero naming $var${bad_t:+ (not:$bad_t)}" test -z "$bad_t"
  check "$shown: nothing written under $w" is_list "$w" ""
  check "$shown: nothing created in the tree" tree_same
done
check "the victim install is still whole" test "$(sums "$vd")" = "$victim"

# ------------------------------------------------------------------ 5. BINDIR
echo "-- BINDIR=/opt/ldl/sbin"
b=$tmp/bindir
check "make install BINDIR=/opt/ldl/sbin" m install PREFIX=/usr/local BINDIR=/opt/ldl/sbin DESTDIR="$b"
check "ldl-run is in BINDIR and runs" "$b/opt/ldl/sbin/ldl-run" -V
check "ldl-fence is in BINDIR and runs" "$b/opt/ldl/sbin/ldl-fence" -V
check "nothing in PREFIX/bin" test ! -e "$b/usr/local/bin"
check "make uninstall BINDIR=/opt/ldl/sbin" m uninstall PREFIX=/usr/local BINDIR=/opt/ldl/sbin DESTDIR="$b"
check "... removed them" test ! -e "$b/opt/ldl/sbin/ldl-run" -a ! -e "$b/opt/ldl/sbin/ldl-fence"
check "make install-cli BINDIR=/opt/x/bin installs ldl-run and ldl-fence alone" m install-cli PREFIX=/usr/local BINDIR=/opt/x/bin DESTDIR="$b"
check "... and only them" is_list "$b" "$(printf './opt/x/bin/ldl-fence\n./opt/x/bin/ldl-run')"
check "make uninstall-cli BINDIR=/opt/x/bin" m uninstall-cli PREFIX=/usr/local BINDIR=/opt/x/bin DESTDIR="$b"
check "... removed it" is_list "$b" ""

# ------------------------------------------------------------------ 6. round trip
echo "-- round trip into a DESTDIR that holds other files"
r=$tmp/rt
mkdir -p "$r/usr/local/bin" "$r/usr/local/include/lite_di_lock0" "$r/usr/local/share/pkgconfig" \
  "$r/usr/local/share/cmake/other" "$r/usr/local/share/lite_di_lock"
echo tool > "$r/usr/local/bin/ldl-other"
echo h > "$r/usr/local/include/other.h"
echo h > "$r/usr/local/include/lite_di_lock0/x.h"
echo pc > "$r/usr/local/share/pkgconfig/other.pc"
echo cm > "$r/usr/local/share/cmake/other/otherConfig.cmake"
echo notes > "$r/usr/local/share/lite_di_lock/local-notes.txt"
before=$(sums "$r")
files "$r" > "$tmp/rt0"
printf '%s\n' "$before" > "$tmp/rt0.sums"
untouched() { (cd "$r" && md5sum -c --quiet "$tmp/rt0.sums"); }
check "make install" m install PREFIX=/usr/local DESTDIR="$r"
files "$r" > "$tmp/rt1"
check "it wrote exactly the manifest (library + ldl-run + ldl-fence), no other file" \
  test "$(comm -13 "$tmp/rt0" "$tmp/rt1")" = "$( (lib_manifest; echo ./usr/local/bin/ldl-run; echo ./usr/local/bin/ldl-fence) | sort)"
check "the other files are untouched by install" untouched
check "make uninstall" sh -c "$MAKE --no-print-directory -C '$src' uninstall PREFIX=/usr/local DESTDIR='$r' > '$tmp/log/rt' 2>&1"
check "only the other files are left, unchanged" test "$(sums "$r")" = "$before"
check "it kept share/lite_di_lock (not empty) and said so" grep -q 'share/lite_di_lock is not empty' "$tmp/log/rt"
check "it removed its own empty dirs (include/lite_di_lock, share/cmake/lite_di_lock)" \
  test ! -e "$r/usr/local/include/lite_di_lock" -a ! -e "$r/usr/local/share/cmake/lite_di_lock"
check "a second make uninstall succeeds and changes nothing" m uninstall PREFIX=/usr/local DESTDIR="$r"
check "... nothing" test "$(sums "$r")" = "$before"

# ------------------------------------------------------------------ 7. the tree
echo "-- the source tree after all of it"
check "nothing created or changed in the source tree" tree_same
if [ $root = yes ]; then check "no root-owned file in the source tree" no_root_files; fi
finish
