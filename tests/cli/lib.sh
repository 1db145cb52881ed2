# tests/cli/lib.sh -- the helpers the tests/cli suites share (sourced, not run):
# ldl_run_test.sh, schedule_test.sh, ldl_fence_test.sh, sqlite_cli.sh, etcd_cli.sh,
# shape_test.sh. The sourcing script sets label first (its name in FAIL lines;
# empty: "FAIL: TEXT").
#   check TEXT EXPR   EXPR (eval'ed) true: a pass; else "FAIL [label]: TEXT" on stderr
#   wait_for FILE     up to 15 s for FILE to exist and be non-empty
#   alive PID         the process is still there
#   clean FILE        every byte printable ASCII or a newline (nothing raw reaches a
#                     terminal)
#   freeport          a free TCP port on 127.0.0.1
#   summary           the last line, "N passed, N failed"; false on a failure
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL${label:+ [$label]}: $*" >&2; }
check() { if eval "$2"; then ok; else bad "$1"; fi; }
wait_for() { i=0; while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done; [ -s "$1" ]; }
alive() { kill -0 "$1" 2>/dev/null; }
clean() { [ "$(tr -d '\040-\176\n' < "$1" | wc -c)" = 0 ]; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
summary() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; }
