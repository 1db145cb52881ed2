#!/bin/sh
# shape_mutants.sh -- tests/cli/shape_test.sh must go red on each broken copy of
# tools/long-functions.sh (LF) or of the CLIs' sources (RUN_SRC, FENCE_SRC): one sed
# expression per mutant (make test-cli-mutants; a few seconds). Last line:
# "shape mutants: N killed, N survived".
set -u
out=${1:-build/cli/shape-mutants}
mkdir -p "$out"
killed=0; survived=0
# name|file|sed expression
while IFS='|' read -r name file expr; do
  [ -n "$name" ] || continue
  m="$out/$name.$(basename "$file")"
  sed "$expr" "$file" > "$m"
  if cmp -s "$file" "$m"; then echo "mutant $name: the expression changed nothing"; survived=$((survived + 1)); continue; fi
  case $file in
    tools/*) env LF="$m" sh tests/cli/shape_test.sh > "$out/$name.log" 2>&1 ;;
    cli/ldl-run.c) env RUN_SRC="$m" sh tests/cli/shape_test.sh > "$out/$name.log" 2>&1 ;;
    *) env FENCE_SRC="$m" sh tests/cli/shape_test.sh > "$out/$name.log" 2>&1 ;;
  esac
  if [ $? != 0 ] && grep -q '^FAIL' "$out/$name.log"; then
    echo "mutant $name: killed ($(grep -m 1 '^FAIL' "$out/$name.log" | cut -c1-100))"; killed=$((killed + 1))
  else
    echo "mutant $name: SURVIVED"; survived=$((survived + 1))
  fi
done <<'EOF2'
lf-strings-ignored|tools/long-functions.sh|s/if (c == "\\"" || c == "\\047") {/if (0) {/
lf-no-function|tools/long-functions.sh|s/    if (c == "{") {/    if (0) {/
lf-max-off-by-one|tools/long-functions.sh|s/\$1 > m/$1 > m + 1/
lf-comments-counted|tools/long-functions.sh|s/if (substr(s, i, 2) == "\/\/") break/if (0) break/
run-long-main|cli/ldl-run.c|/^int main(/,/^}/s/^    int rc;$/&\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;/
run-store-call-outside|cli/ldl-run.c|s/^    if (rc != 1) return finish(&r, &o, 5);.*/&\n    if (0) (void)ldl_pg_why(NULL);/
fence-long-main|cli/ldl-fence.c|s/^    return fenced_write(&o);/    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n    ;\n&/
EOF2
echo "shape mutants: $killed killed, $survived survived"
[ $survived = 0 ]
