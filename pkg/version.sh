#!/bin/sh
# version.sh [HEADER] -- print MAJOR.MINOR.PATCH from the LDL_VERSION_MAJOR /
# _MINOR / _PATCH macros of lite_di_lock.h (the one source of the version);
# exit 1 when one is missing. Used by mk/install.mk, meson.build, tests/pkg.
awk '$1 == "#define" && $2 ~ /^LDL_VERSION_(MAJOR|MINOR|PATCH)$/ && $3 ~ /^[0-9]+$/ { v[$2] = $3 }
     END {
       if (!("LDL_VERSION_MAJOR" in v) || !("LDL_VERSION_MINOR" in v) || !("LDL_VERSION_PATCH" in v)) {
         print "version.sh: LDL_VERSION_MAJOR/MINOR/PATCH missing in " FILENAME > "/dev/stderr"; exit 1 }
       print v["LDL_VERSION_MAJOR"] "." v["LDL_VERSION_MINOR"] "." v["LDL_VERSION_PATCH"] }' \
  "${1:-lite_di_lock.h}"
