#!/bin/sh
# footprint.sh HDR_DIR OUT_DIR -- row 5 of `make bench`: sizeof and code size of
# the implementation at -Os for x86-64, 32-bit x86 (-m32) and Cortex-M4
# (arm-none-eabi-gcc -mthumb -mcpu=cortex-m4 -ffreestanding, LDL_NO_DEFAULT_CLOCK).
# The implementation is compiled alone with -ffunction-sections -fdata-sections,
# so `size -A` gives one section per function: ".text all" is every function,
# ".text lock+MemoryStore" leaves out the reference DI container (ldl_scope_*),
# which is what a --gc-sections link keeps for a program that brings its own
# container. Prints markdown table rows.
# FP_DEFS="-DNAME ..." adds defines to every build (e.g. a proposed compile-time
# switch measured on a private copy of the header).
# A header that offers LDL_NO_ASYNC (decision 0006) is also measured with it, on
# x86-64 and Cortex-M4 (the two targets with a size limit): both builds each run.
set -eu
defs=${FP_DEFS:-}
hdr=${1:-.}
out=${2:-build/bench}
cc=${CC:-cc}
mkdir -p "$out/fp"
printf '#define LITE_DI_LOCK_IMPLEMENTATION\n#include "lite_di_lock.h"\n' >"$out/fp/impl.c"
cat >"$out/fp/sizes.c" <<'C'
#include "lite_di_lock.h"
char ldl_sz_lock[sizeof(ldl_lock)];
char ldl_sz_slot[sizeof(ldl_memstore_slot)];
C

# sum `size -A` sections: $1 = size tool, $2 = object, $3 = awk condition on the name
sum() { "$1" -A "$2" | awk -v pat="$3" 'NF==3 && $1 ~ /^\./ { n=$1; s=$2; if (n ~ pat) t += s } END { print t+0 }'; }

one() {  # label size-tool nm-tool compiler flags...
  label=$1; sz=$2; nmt=$3; shift 3
  o="$out/fp/$label.o"; so="$out/fp/$label-sizes.o"
  # shellcheck disable=SC2086 # $defs is a list of flags
  if ! "$@" $defs -Os -ffunction-sections -fdata-sections -I"$hdr" -c "$out/fp/impl.c" -o "$o" 2>"$out/fp/$label.err" ||
     ! "$@" $defs -Os -I"$hdr" -c "$out/fp/sizes.c" -o "$so" 2>>"$out/fp/$label.err"; then
    echo "| 5 | footprint $label | not built: $(head -c 200 "$out/fp/$label.err" | tr '\n|' '  ') | - | - | | |"; return 0
  fi
  text=$(sum "$sz" "$o" '^\.text')
  cont=$(sum "$sz" "$o" '^\.text\.(ldl_scope_|ldl__scope_)')
  core=$((text - cont))
  # the non-blocking MemoryStore view and ldl_op_complete: only what calls them
  # keeps them in a --gc-sections link (the lock's own async handling stays)
  aview=$(sum "$sz" "$o" '^\.text\.(ldl__msa_|ldl_memstore_async_store|ldl_op_complete)')
  rodata=$(sum "$sz" "$o" '^\.rodata')
  data=$(sum "$sz" "$o" '^\.data')
  bss=$(sum "$sz" "$o" '^\.bss')
  lock=$(printf '%d' "0x$("$nmt" -S "$so" | awk '$4=="ldl_sz_lock"{print $2}')")
  slot=$(printf '%d' "0x$("$nmt" -S "$so" | awk '$4=="ldl_sz_slot"{print $2}')")
  # the issue 25 targets: lock+MemoryStore .text, default build and both switches
  case "$label:$defs" in
    x86-64:) lim=8192 ;;
    cortex-m4:) lim=6650 ;;
    "cortex-m4:-DLDL_NO_ASYNC -DLDL_NO_ELECTION") lim=3700 ;;
    *) lim= ;;
  esac
  if [ -n "$lim" ]; then
    tgt="<= $lim B"
    if [ "$core" -le "$lim" ]; then v1=met; else v1=MISSED; fi
    v="$v1"
  else tgt=; v=; fi
  [ -n "$defs" ] && label="$label $defs"
  echo "| 5c | footprint $label -Os: .text lock+MemoryStore / all (with DI container) | $core B / $text B | container $cont B | .rodata $rodata B, .data $data B, .bss $bss B | $tgt | $v |"
  if [ "$aview" -gt 0 ]; then
    echo "| 5e | footprint $label -Os: .text lock+MemoryStore without the async MemoryStore view (a sync-only program, --gc-sections) | $((core - aview)) B | async view + ldl_op_complete $aview B | - | | |"
  fi
  echo "| 5d | sizeof $label: ldl_lock / ldl_memstore_slot | $lock B / $slot B | - | - | | |"
}

# the same target again with -DLDL_NO_ASYNC, and with both switches (the
# firmware build), when the header has them and FP_DEFS did not already pick
# the defines
also_noasync() {
  if [ -z "$defs" ] && grep -q 'LDL_NO_ASYNC' "$hdr/lite_di_lock.h"; then
    defs=-DLDL_NO_ASYNC
    one "$@"
    if grep -q 'LDL_NO_ELECTION' "$hdr/lite_di_lock.h"; then
      defs="-DLDL_NO_ASYNC -DLDL_NO_ELECTION"
      one "$@"
    fi
    defs=
  fi
}

one x86-64 size nm "$cc" -std=c99
also_noasync x86-64 size nm "$cc" -std=c99
one x86-32 size nm "$cc" -std=c99 -m32
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  one cortex-m4 arm-none-eabi-size arm-none-eabi-nm arm-none-eabi-gcc -std=c99 -mthumb -mcpu=cortex-m4 -ffreestanding -DLDL_NO_DEFAULT_CLOCK
  also_noasync cortex-m4 arm-none-eabi-size arm-none-eabi-nm arm-none-eabi-gcc -std=c99 -mthumb -mcpu=cortex-m4 -ffreestanding -DLDL_NO_DEFAULT_CLOCK
else
  echo "| 5 | footprint cortex-m4 | not built: arm-none-eabi-gcc missing (make bench-deps) | - | - | | |"
fi
