#!/bin/sh
# recipe.sh DOC DIR EXPECT -- run the firmware recipe of DOC exactly as printed.
# The recipe is the ```sh block between the lines "<!-- recipe:begin -->" and
# "<!-- recipe:end -->". It runs with `sh -e` in DIR, where lite_di_lock.h and examples/
# are symlinks into the tree, so its relative paths work unchanged; its output goes to
# DIR/recipe.log, which must contain the line EXPECT. Fails naming what went wrong.
set -u
doc=$1 dir=$2 expect=$3
root=$(pwd)
rm -rf "$dir"; mkdir -p "$dir"
awk '/^<!-- recipe:begin -->$/ { on = 1; next } /^<!-- recipe:end -->$/ { on = 0 }
     on && /^```/ { next } on' "$doc" >"$dir/recipe.sh"
[ -s "$dir/recipe.sh" ] || { echo "ports-recipe: FAIL: no recipe between the markers in $doc"; exit 1; }
ln -s "$root/lite_di_lock.h" "$dir/lite_di_lock.h"
ln -s "$root/examples" "$dir/examples"
echo "ports-recipe: run: the $(grep -c . "$dir/recipe.sh") lines of $doc's recipe"
(cd "$dir" && timeout -k 5 120 sh -e ./recipe.sh) >"$dir/recipe.log" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qxF "$expect" "$dir/recipe.log"; then
    echo "ports-recipe: PASS: $expect (exit 0; $(arm-none-eabi-size "$dir/fw.elf" 2>/dev/null | awk 'NR == 2 { print "image text " $1 ", bss " $3 " bytes" }'))"
    exit 0
fi
echo "ports-recipe: FAIL: exit $rc, want the line '$expect'; the recipe and its output:"
cat "$dir/recipe.sh" "$dir/recipe.log"
exit 1
