#!/bin/sh
# ldl-size.sh NM SIZE OBJ ELF NAME
# How much of the linked firmware image ELF is the lock's code: the symbols
# that the header alone defines (OBJ: lite_di_lock.h compiled by itself with
# the implementation) summed over the image, after --gc-sections dropped what
# the firmware does not call. Also the whole image, and the RAM the lock
# objects take (sizes of the example's static ldl_lock / slots / store).
nm=$1 size=$2 obj=$3 elf=$4 name=$5
syms=$(mktemp) || exit 1
trap 'rm -f "$syms"' EXIT
"$nm" --defined-only "$obj" | awk 'NF == 3 && $2 ~ /^[tTrR]$/ { print $3 }' | sort -u >"$syms"
code=0 n=0
for pair in $("$nm" -S --defined-only "$elf" | awk 'NF == 4 && $3 ~ /^[tTrR]$/ { print $4 "=" $2 }'); do
    sym=${pair%=*} hex=${pair#*=}
    if grep -qxF "$sym" "$syms"; then code=$((code + 0x$hex)); n=$((n + 1)); fi
done
objtext=$("$size" "$obj" | awk 'NR == 2 { print $1 }')
set -- $("$size" "$elf" | awk 'NR == 2 { print $1, $2, $3 }')
echo "$name: lock code in the image: $code bytes in $n symbols (the header alone at the same flags: $objtext bytes of .text before --gc-sections)"
echo "$name: whole image: text $1, data $2, bss $3 bytes"
lock=$("$nm" -S --defined-only "$elf" | awk '$4 == "fw_task_a" { print $2 }')
slots=$("$nm" -S --defined-only "$elf" | awk '$4 == "fw_slots" { print $2 }')
store=$("$nm" -S --defined-only "$elf" | awk '$4 == "fw_store" { print $2 }')
if [ -n "$lock" ] && [ -n "$slots" ] && [ -n "$store" ]; then
    echo "$name: RAM: sizeof(ldl_lock) = $((0x$lock)), sizeof(ldl_memstore) = $((0x$store)), 4 slots = $((0x$slots)) bytes"
fi
