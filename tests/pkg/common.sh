# tests/pkg/common.sh -- the tally shared by tests/pkg/run.sh and install_test.sh
# (sourced). Needs $tmp (a temp dir) and $suite (the name on the summary line).
pass=0; fail=0
ok()  { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL $*" >&2; }
# check DESCRIPTION CMD...: the command's output is shown only when it fails
check() {
  _desc=$1; shift
  if "$@" >"$tmp/last.log" 2>&1; then ok "$_desc"; else bad "$_desc"; sed 's/^/    | /' "$tmp/last.log" | tail -n 150 >&2; fi
}
finish() { echo "== $suite: $pass passed, $fail failed"; echo "$pass passed, $fail failed"; [ $fail = 0 ]; exit; }
