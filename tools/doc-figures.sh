#!/bin/sh
# doc-figures.sh [--list|--write] -- the footprint figures in the docs come from one
# measured source (issue 30).
#
# It measures with `sh bench/footprint.sh` (object code and sizeof, per target and
# build switch) and tools/ports/ldl-size.sh (the lock's code linked into the firmware
# example's image, Cortex-M0 and M4), then checks every figure the docs tag:
#     ... 7,818 B<!--fp:cortex-m4.code--> ...
# A tag names a measured figure; the number just before it (digits and commas, then
# " B" or " bytes") must be within 5 % of the measurement, or this fails naming the
# file, line, figure and both values. An unknown tag fails too.
#   --list    print every measured figure as NAME=BYTES and exit
#   --write   rewrite every tagged number in place to the measured value, then check
# The docs checked: README.md, docs/PLATFORMS.md (DOC_FIGURES_FILES overrides).
# Figure names:
#   TARGET.code        .text of lock+MemoryStore (footprint.sh row 5c), the default build
#   TARGET.noasync.code, TARGET.both.code   with -DLDL_NO_ASYNC, and with both switches
#   TARGET.sizeof, TARGET.noasync.sizeof, TARGET.both.sizeof   sizeof(ldl_lock)
#   TARGET.slot        sizeof(ldl_memstore_slot)
#     TARGET: x86-64, x86-32, cortex-m4
#   m0.image, m4.image          the lock's code in the linked firmware example
#   m0.image.text, m4.image.text, m4.image.bss   the whole image (arm-none-eabi-size)
#   TARGET.f.*          the size of each feature (tools/ports/size-features.sh says which)
set -u
cd "$(dirname "$0")/.."
mode=${1:-check}
files=${DOC_FIGURES_FILES:-README.md docs/PLATFORMS.md}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
figs=$d/figs

sh bench/footprint.sh . "$d/fp" >"$d/rows" 2>&1 || { cat "$d/rows"; echo "doc-figures: bench/footprint.sh failed"; exit 1; }
# "| 5c | footprint LABEL -Os: ... | CORE B / ALL B |"  and  "| 5d | sizeof LABEL: ... | LOCK B / SLOT B |"
awk -F'|' '
  function key(label) {
    sub(/^ *(footprint|sizeof) /, "", label); sub(/( -Os)?:.*$/, "", label)
    k = label; sub(/ .*/, "", k)
    if (label ~ /LDL_NO_ELECTION/) k = k ".both"; else if (label ~ /LDL_NO_ASYNC/) k = k ".noasync"
    return k
  }
  $2 ~ /5c/ && $4 ~ / B \/ / { split($4, v, " "); print key($3) ".code=" v[1] }
  $2 ~ /5d/ && $4 ~ / B \/ / { split($4, v, " "); k = key($3); print k ".sizeof=" v[1]; if (k !~ /\./) print k ".slot=" v[4] }
' "$d/rows" >"$figs"

# the firmware example's image, built exactly as make ports builds it (mk/ports.mk)
for m in m0 m4; do
  make --no-print-directory -s build/ports/ldl-$m.o build/ports/baremetal-$m.elf >"$d/mk-$m" 2>&1 ||
    { cat "$d/mk-$m"; echo "doc-figures: the $m firmware image did not build"; exit 1; }
  sh tools/ports/ldl-size.sh arm-none-eabi-nm arm-none-eabi-size build/ports/ldl-$m.o \
     build/ports/baremetal-$m.elf x >"$d/sz-$m"
  sed -n 's/^x: lock code in the image: \([0-9]*\) bytes.*/'$m'.image=\1/p' "$d/sz-$m" >>"$figs"
  sed -n 's/^x: whole image: text \([0-9]*\), data [0-9]*, bss \([0-9]*\) bytes/'$m'.image.text=\1\
'$m'.image.bss=\2/p' "$d/sz-$m" >>"$figs"
done
# the size of each feature per target (the table in docs/PLATFORMS.md)
sh tools/ports/size-features.sh "$d/sf" >>"$figs" 2>"$d/sf.err" || { cat "$d/sf.err"; echo "doc-figures: tools/ports/size-features.sh failed"; exit 1; }
n=$(wc -l <"$figs")
[ "$n" -ge 50 ] || { cat "$figs" "$d/rows"; echo "doc-figures: only $n figures measured (want >= 50)"; exit 1; }

if [ "$mode" = --list ]; then cat "$figs"; exit 0; fi

if [ "$mode" = --write ]; then
  for f in $files; do
    awk -v figs="$figs" '
      BEGIN { while ((getline l < figs) > 0) { split(l, a, "="); m[a[1]] = a[2] } }
      function commas(x,   s) { s = ""; while (x >= 1000) { s = sprintf(",%03d", x % 1000) s; x = int(x / 1000) } return x s }
      { out = ""; line = $0
        while (match(line, /[0-9][0-9,]* (B|bytes)<!--fp:[a-z0-9.+-]+-->/)) {
          t = substr(line, RSTART, RLENGTH); name = t; sub(/.*<!--fp:/, "", name); sub(/-->$/, "", name)
          unit = t; sub(/^[0-9,]* /, "", unit); sub(/<!--.*/, "", unit)
          if (name in m) t = commas(m[name] + 0) " " unit "<!--fp:" name "-->"
          out = out substr(line, 1, RSTART - 1) t; line = substr(line, RSTART + RLENGTH)
        }
        print out line }' "$f" >"$d/new" && cat "$d/new" >"$f"
  done
fi

# check: every tag known, every tagged number within 5 %
pass=0 fail=0
for f in $files; do
  awk -v figs="$figs" -v file="$f" '
    BEGIN { while ((getline l < figs) > 0) { split(l, a, "="); m[a[1]] = a[2] } }
    { line = $0
      while (match(line, /<!--fp:[a-z0-9.+-]+-->/)) {
        name = substr(line, RSTART + 7, RLENGTH - 10); pre = substr(line, 1, RSTART - 1)
        line = substr(line, RSTART + RLENGTH)
        if (!match(pre, /[0-9][0-9,]* (B|bytes)$/)) { printf "FAIL %s:%d: fp:%s has no \"N B\" before it\n", file, NR, name; continue }
        num = substr(pre, RSTART, RLENGTH); sub(/ .*/, "", num); gsub(/,/, "", num)
        if (!(name in m)) { printf "FAIL %s:%d: fp:%s is not a measured figure\n", file, NR, name; continue }
        d = num - m[name]; if (d < 0) d = -d
        if (d * 100 > 5 * m[name]) printf "FAIL %s:%d: %s says %d B, measured %d B (more than 5 %%)\n", file, NR, name, num, m[name]
        else printf "ok %s:%d: %s %d B (measured %d B)\n", file, NR, name, num, m[name]
      } }' "$f"
done >"$d/res"
pass=$(grep -c '^ok ' "$d/res"); fail=$(grep -c '^FAIL ' "$d/res")
cat "$d/res"
[ "$pass" -ge 1 ] || { echo "doc-figures: no tagged figure found in $files"; fail=$((fail + 1)); }
echo "doc-figures: $pass passed, $fail failed"
[ "$fail" = 0 ]
