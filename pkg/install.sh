#!/bin/sh
# pkg/install.sh ACTION -- the body of make install / make uninstall (mk/install.mk;
# decisions 0601 and 0602). Run from the top of the source tree; every input comes
# from the environment, set by mk/install.mk, so no path is ever re-parsed by make
# or by a shell:
#   LDL_I_DESTDIR LDL_I_PREFIX LDL_I_BINDIR LDL_I_INCLUDEDIR LDL_I_DATADIR
#   LDL_I_PKGCONFIGDIR LDL_I_CMAKEDIR   the directories (DESTDIR may be empty)
#   LDL_I_INSTALL                        the install(1) command (a command line)
#   LDL_I_MAKE LDL_I_CC LDL_I_CLI_INC LDL_I_CLI_LIBS   for building ldl-run
#   LDL_I_WITH_CLI                       auto | yes | no (the cli-auto action)
# ACTION:
#   check [NAME]     refuse an unsafe directory (below) or WITH_CLI value; changes
#                    nothing. NAME (install/uninstall) names the messages; with
#                    NAME=install and WITH_CLI=yes, also refuse when ldl-run cannot
#                    be built, so `make install WITH_CLI=yes` fails before writing
#   headers          the library: headers, .pc files, CMake package, lib source
#   uninstall-headers
#   cli              ldl-run and ldl-fence into BINDIR; fails when they cannot be built
#   cli-auto         as cli with WITH_CLI=yes; WITH_CLI=auto skips ldl-run with one
#                    line when no compiler/hiredis/libpq can build it; no skips it
#   uninstall-cli
# Every action runs check first. Nothing is written in the source tree: generated
# files and the ldl-run build go to a mktemp directory, removed on exit.
set -u
me=install
act=${1:-}
case $act in uninstall*) me=uninstall ;; check) me=${2:-check} ;; esac

# Safe: letters, digits and / . _ + - only. Anything else (whitespace, quotes, $ \ |
# & ; * ? [ # % : @, control or non-ASCII bytes) is refused: it would split a path, be
# read by sed, pkg-config or CMake as syntax, or hide what is printed.
safe_chars='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+-'
# refuse NAME VALUE WHAT: print why (bad bytes shown as ?) and stop
refuse() {
  shown=$(printf '%s' "$2" | tr -c "$safe_chars" '?')
  echo "$me: $1='$shown' $3; nothing was installed or removed" >&2
  exit 2
}
check_dir() {  # NAME VALUE EMPTY-OK
  case $2 in
    *[!$safe_chars]*) refuse "$1" "$2" "has a character outside A-Z a-z 0-9 / . _ + - (shown as ?)" ;;
    '') [ "$3" = empty-ok ] || refuse "$1" "$2" "is empty" ;;
    /*) ;;
    *) refuse "$1" "$2" "is not an absolute path" ;;
  esac
}
check_all() {
  check_dir DESTDIR "${LDL_I_DESTDIR-}" empty-ok
  check_dir PREFIX "${LDL_I_PREFIX-}" ""
  check_dir BINDIR "${LDL_I_BINDIR-}" ""
  check_dir INCLUDEDIR "${LDL_I_INCLUDEDIR-}" ""
  check_dir DATADIR "${LDL_I_DATADIR-}" ""
  check_dir PKGCONFIGDIR "${LDL_I_PKGCONFIGDIR-}" ""
  check_dir CMAKEDIR "${LDL_I_CMAKEDIR-}" ""
  case ${LDL_I_WITH_CLI:-auto} in
    auto|yes|no) ;;
    *) echo "$me: WITH_CLI must be auto, yes or no (got '$(printf '%s' "$LDL_I_WITH_CLI" | tr -c "$safe_chars" '?')'); nothing was installed" >&2
       exit 2 ;;
  esac
}
check_all
case $act in
  check) [ "$me" = install ] && [ "${LDL_I_WITH_CLI:-auto}" = yes ] || exit 0 ;;
  headers|uninstall-headers|cli|cli-auto|uninstall-cli) ;;
  *) echo "pkg/install.sh: unknown action '$act'" >&2; exit 2 ;;
esac
[ -f lite_di_lock.h ] && [ -f pkg/version.sh ] || { echo "$me: run from the top of the source tree" >&2; exit 2; }

d=$LDL_I_DESTDIR
inc=$LDL_I_INCLUDEDIR
pcdir=$LDL_I_PKGCONFIGDIR
cmdir=$LDL_I_CMAKEDIR
srcdir=$LDL_I_DATADIR/lite_di_lock
bin=$LDL_I_BINDIR
INSTALL=${LDL_I_INSTALL:-install}
pcs="lite_di_lock lite_di_lock_redis lite_di_lock_pg"
cmakes="lite_di_lockConfig.cmake lite_di_lockConfigVersion.cmake lite_di_lockDeps.cmake"

# a private temp dir outside the tree (its path must be as safe as ours: it is
# handed to make as B=...)
newtmp() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-install.XXXXXX") || { echo "$me: mktemp failed" >&2; exit 1; }
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 130' INT TERM
  case $tmp in *[!$safe_chars]*) echo "$me: TMPDIR '$tmp' is not a safe path; set TMPDIR=/tmp" >&2; exit 2 ;; esac
}

# the .pc files and CMake package with the final (never the DESTDIR) paths
generate() {
  v=$(sh pkg/version.sh lite_di_lock.h) || exit 1
  case $inc in
    "$LDL_I_PREFIX"/*) inc_pc='${prefix}'/${inc#"$LDL_I_PREFIX"/} ;;
    *) inc_pc=$inc ;;
  esac
  subst() {
    sed -e "s|@VERSION@|$v|g" -e "s|@PREFIX@|$LDL_I_PREFIX|g" -e "s|@INCLUDEDIR@|$inc|g" \
        -e "s|@DATADIR@|$LDL_I_DATADIR|g" -e "s|@INCLUDEDIR_PC@|$inc_pc|g" "$1" > "$2"
  }
  for f in $pcs; do subst "pkg/$f.pc.in" "$tmp/$f.pc" || exit 1; done
  subst cmake/lite_di_lockConfig.cmake.in "$tmp/lite_di_lockConfig.cmake" || exit 1
  subst cmake/lite_di_lockConfigVersion.cmake.in "$tmp/lite_di_lockConfigVersion.cmake" || exit 1
  cp cmake/lite_di_lockDeps.cmake "$tmp/" || exit 1
  if grep -n '@[A-Z_]*@' "$tmp"/*.pc "$tmp"/*.cmake; then
    echo "$me: a template placeholder was left" >&2; exit 1; fi
}

# the adapter headers: every one in the tree (a new adapter needs no edit here)
adapters() { for h in adapters/lite_di_lock_*.h; do [ -f "$h" ] && echo "${h#adapters/}"; done; }

# probe_cli: can $CC build and link a program against hiredis and libpq at all?
probe_cli() {
  printf '#include <hiredis/hiredis.h>\n#include <libpq-fe.h>\nint main(void) { return 0; }\n' > "$tmp/probe.c"
  # shellcheck disable=SC2086  # CC and the flags are command lines
  ${LDL_I_CC:-cc} $LDL_I_CLI_INC "$tmp/probe.c" $LDL_I_CLI_LIBS -o "$tmp/probe" > "$tmp/probe.log" 2>&1
}

cli_why="CC=${LDL_I_CC:-cc} cannot build a program against hiredis and libpq (needs a C compiler, libhiredis-dev, libpq-dev)"
cli_refuse() {
  sed 's/^/    | /' "$tmp/probe.log" | tail -n 5 >&2
  echo "install: ldl-run not installed: $cli_why" >&2
  exit 1
}

rm_file() { if [ -e "$1" ] || [ -L "$1" ]; then rm -f "$1" && echo "removed $1"; fi; }
rm_dir() {  # ours alone: removed when empty, kept (and said) otherwise
  [ -d "$1" ] || return 0
  rmdir "$1" 2>/dev/null || echo "$me: $1 is not empty (files not installed by make install): kept" >&2
}

set -e
case $act in
check)  # NAME=install, WITH_CLI=yes: ldl-run must be buildable before anything is written
  newtmp
  probe_cli || cli_refuse
  ;;
headers)
  newtmp
  generate
  $INSTALL -d "$d$inc/lite_di_lock" "$d$pcdir" "$d$cmdir" "$d$srcdir"
  $INSTALL -m 644 lite_di_lock.h "$d$inc/lite_di_lock.h"
  for h in $(adapters); do $INSTALL -m 644 "adapters/$h" "$d$inc/lite_di_lock/$h"; done
  for f in $pcs; do $INSTALL -m 644 "$tmp/$f.pc" "$d$pcdir/$f.pc"; done
  for f in $cmakes; do $INSTALL -m 644 "$tmp/$f" "$d$cmdir/$f"; done
  $INSTALL -m 644 lib/lite_di_lock.c "$d$srcdir/lite_di_lock.c"
  echo "installed lite_di_lock $v (headers, pkg-config, CMake; nothing compiled) under $d$LDL_I_PREFIX"
  ;;
uninstall-headers)
  rm_file "$d$inc/lite_di_lock.h"
  for h in $(adapters); do rm_file "$d$inc/lite_di_lock/$h"; done
  for f in $pcs; do rm_file "$d$pcdir/$f.pc"; done
  for f in $cmakes; do rm_file "$d$cmdir/$f"; done
  rm_file "$d$srcdir/lite_di_lock.c"
  rm_dir "$d$inc/lite_di_lock"; rm_dir "$d$cmdir"; rm_dir "$d$srcdir"
  ;;
cli|cli-auto)
  mode=yes
  if [ "$act" = cli-auto ]; then mode=${LDL_I_WITH_CLI:-auto}; fi
  if [ "$mode" = no ]; then echo "install: ldl-run not installed (WITH_CLI=no)" >&2; exit 0; fi
  newtmp
  if ! probe_cli; then
    if [ "$mode" = auto ]; then
      echo "install: ldl-run skipped: $cli_why; the library needs none of these (WITH_CLI=yes makes this an error)" >&2
      exit 0
    fi
    cli_refuse
  fi
  # mk/cli.mk's own rule (mk/fence_cli.mk's for ldl-fence), with B=$tmp: the
  # source tree gets no build/ dir
  ${LDL_I_MAKE:-make} --no-print-directory B="$tmp" "$tmp/cli/ldl-run" "$tmp/cli/ldl-fence"
  $INSTALL -d "$d$bin"
  $INSTALL -m 755 "$tmp/cli/ldl-run" "$d$bin/ldl-run"
  echo "installed ldl-run as $d$bin/ldl-run"
  $INSTALL -m 755 "$tmp/cli/ldl-fence" "$d$bin/ldl-fence"
  echo "installed ldl-fence as $d$bin/ldl-fence"
  ;;
uninstall-cli)
  rm_file "$d$bin/ldl-run"
  rm_file "$d$bin/ldl-fence"
  ;;
esac
