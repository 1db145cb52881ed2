#!/bin/sh
# deps-check.sh "PKGS" "CMDS" "FILES": exit 0 when every command and file the
# tests need is present; otherwise say exactly what to install and exit 1.
pkgs=$1; cmds=$2; files=$3; missing=
for c in $cmds; do command -v "$c" >/dev/null 2>&1 || missing="$missing command:$c"; done
for f in $files; do
  # a FILE entry may be a glob (e.g. /usr/lib/postgresql/*/bin/initdb)
  found=0
  for g in $f; do [ -e "$g" ] && found=1; done
  [ $found = 1 ] || missing="$missing file:$f"
done
[ -z "$missing" ] && exit 0
echo "missing:$missing" >&2
echo "install them with:" >&2
echo "  apt-get update && apt-get install -y --no-install-recommends $pkgs" >&2
exit 1
