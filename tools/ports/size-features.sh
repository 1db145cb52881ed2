#!/bin/sh
# size-features.sh OUT_DIR -- the size of each feature of lite_di_lock.h, per target
# (issue 35's table, in the style of FreeRTOS's size tables). Prints NAME=BYTES lines
# that tools/doc-figures.sh checks against the tagged table in docs/PLATFORMS.md.
#
# The implementation is compiled alone at -Os with -ffunction-sections, once per build:
#   both     -DLDL_NO_ASYNC -DLDL_NO_ELECTION   (the smallest lock)
#   noasync  -DLDL_NO_ASYNC                      (+ election)
#   noelec   -DLDL_NO_ELECTION                   (+ async)
#   default  (everything)
# and the .text sections are split by function name into:
#   container  ldl_scope_*, ldl__scope_*, ldl_bind_lock, ldl__lock_factory/_teardown
#              (the reference DI container: a program with its own drops it)
#   msasync    ldl__msa_*, ldl_memstore_async_store, ldl_op_complete (the non-blocking
#              MemoryStore view: only a program that calls it keeps it)
#   memstore   ldl__ms_*, ldl_memstore_* (the synchronous MemoryStore)
#   lock       everything else (the lifecycle, init's validation, the names)
# Names printed, for TARGET in m0, m4, x86-64:
#   TARGET.f.lock       the lock alone, both switches
#   TARGET.f.async      what -DLDL_NO_ASYNC removes from the lock (noelec - both)
#   TARGET.f.election   what -DLDL_NO_ELECTION removes from the lock (noasync - both)
#   TARGET.f.memstore   the synchronous MemoryStore
#   TARGET.f.msasync    the MemoryStore's non-blocking view (default build)
#   TARGET.f.container  the reference DI container
#   TARGET.f.rodata.both, TARGET.f.rodata.default   .rodata of the whole object
#   TARGET.f.rodata.both.nowhy, TARGET.f.rodata.default.nowhy   the same with LDL_NO_WHY_TEXT
#   TARGET.f.sizeof.both, TARGET.f.sizeof.default   sizeof(ldl_lock)
set -eu
out=${1:-build/sizes}
mkdir -p "$out"
printf '#define LITE_DI_LOCK_IMPLEMENTATION\n#include "lite_di_lock.h"\n' >"$out/impl.c"
printf '#include "lite_di_lock.h"\nchar ldl_sz_lock[sizeof(ldl_lock)];\n' >"$out/sizes.c"

# split one object's .text by feature: prints "lock memstore msasync container"
split() {  # size-tool object
  "$1" -A "$2" | awk '
    NF == 3 && $1 ~ /^\.text/ { n = $1; s = $2; sub(/^\.text\.?/, "", n)
      if (n ~ /^(ldl_scope_|ldl__scope_|ldl_bind_lock|ldl__lock_factory|ldl__lock_teardown)/) c += s
      else if (n ~ /^(ldl__msa_|ldl_memstore_async_store|ldl_op_complete)/) a += s
      else if (n ~ /^(ldl__ms_|ldl_memstore_)/) m += s
      else l += s }
    END { print l + 0, m + 0, a + 0, c + 0 }'
}
rodata() { "$1" -A "$2" | awk 'NF == 3 && $1 ~ /^\.rodata/ { t += $2 } END { print t + 0 }'; }

target() {  # name size-tool nm-tool compiler flags...
  t=$1 sz=$2 nmt=$3; shift 3
  for b in both noasync noelec default; do
    case $b in
      both) defs="-DLDL_NO_ASYNC -DLDL_NO_ELECTION" ;; noasync) defs=-DLDL_NO_ASYNC ;;
      noelec) defs=-DLDL_NO_ELECTION ;; default) defs= ;;
    esac
    # shellcheck disable=SC2086 # $defs is a list of flags
    "$@" $defs -Os -ffunction-sections -fdata-sections -I. -c "$out/impl.c" -o "$out/$t-$b.o"
    # shellcheck disable=SC2086
    "$@" $defs -Os -I. -c "$out/sizes.c" -o "$out/$t-$b-sizes.o"
    set -- "$@"
    eval "set_$b=\"\$(split $sz $out/$t-$b.o)\""
    eval "ro_$b=\$(rodata $sz $out/$t-$b.o)"
    eval "sz_$b=\$(printf '%d' 0x\$($nmt -S $out/$t-$b-sizes.o | awk '\$4 == \"ldl_sz_lock\" { print \$2 }'))"
  done
  # LDL_NO_WHY_TEXT: .rodata without init's sentences, both switches and default
  "$@" -DLDL_NO_ASYNC -DLDL_NO_ELECTION -DLDL_NO_WHY_TEXT -Os -ffunction-sections -fdata-sections -I. -c "$out/impl.c" -o "$out/$t-nowhy.o"
  "$@" -DLDL_NO_WHY_TEXT -Os -ffunction-sections -fdata-sections -I. -c "$out/impl.c" -o "$out/$t-nowhy-d.o"
  ro_nowhy=$(rodata "$sz" "$out/$t-nowhy.o")
  ro_nowhy_d=$(rodata "$sz" "$out/$t-nowhy-d.o")
  # shellcheck disable=SC2154 # set by eval above
  {
    set -- $set_both;    lock_both=$1 ms=$2 cont=$4
    set -- $set_noasync; lock_noasync=$1
    set -- $set_noelec;  lock_noelec=$1
    set -- $set_default; msa=$3
    echo "$t.f.lock=$lock_both"
    echo "$t.f.async=$((lock_noelec - lock_both))"
    echo "$t.f.election=$((lock_noasync - lock_both))"
    echo "$t.f.memstore=$ms"
    echo "$t.f.msasync=$msa"
    echo "$t.f.container=$cont"
    echo "$t.f.rodata.both=$ro_both"
    echo "$t.f.rodata.default=$ro_default"
    echo "$t.f.rodata.both.nowhy=$ro_nowhy"
    echo "$t.f.rodata.default.nowhy=$ro_nowhy_d"
    echo "$t.f.sizeof.both=$sz_both"
    echo "$t.f.sizeof.default=$sz_default"
  }
}

arm="-std=c99 -mthumb -ffreestanding -DLDL_NO_DEFAULT_CLOCK"
target m0 arm-none-eabi-size arm-none-eabi-nm arm-none-eabi-gcc $arm -mcpu=cortex-m0
target m4 arm-none-eabi-size arm-none-eabi-nm arm-none-eabi-gcc $arm -mcpu=cortex-m4
target x86-64 size nm "${CC:-cc}" -std=c99
