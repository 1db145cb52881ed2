#!/bin/sh
# check-run.sh NAME LOG EXPECT CMD [ARGS...]
# Run CMD (output to LOG), then judge it. EXPECT is either "suite" (the core
# test suite: the last "N passed, N failed" line must show N > 0 passed and 0
# failed) or a fixed line that must appear in the output. The exit status must
# be 0 either way, so a crash after a good summary still fails. A run that
# takes longer than PORTS_TIMEOUT seconds (default 300) is killed and fails.
name=$1 log=$2 expect=$3
shift 3
limit=${PORTS_TIMEOUT:-300}
echo "$name: run: $*"
timeout -k 10 "$limit" "$@" </dev/null >"$log" 2>&1
rc=$?
[ $rc -eq 124 ] && echo "$name: killed after ${limit}s" >>"$log"
# Windows programs under wine write CRLF; compare without the CR
tr -d '\r' <"$log" >"$log.txt"
ok=1
if [ "$expect" = suite ]; then
    line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log.txt" | tail -n 1)
    passed=$(printf '%s\n' "$line" | sed -n 's/^\([A-Za-z0-9_-]*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
    failed=$(printf '%s\n' "$line" | sed -n 's/^\([A-Za-z0-9_-]*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed.*/\3/p')
    [ -n "$line" ] && [ "${passed:-0}" -gt 0 ] && [ "${failed:-1}" -eq 0 ] || ok=0
    [ -n "$line" ] || line="(no 'N passed, N failed' line)"
else
    if grep -qxF "$expect" "$log.txt"; then line=$expect; else ok=0; line="(no line '$expect')"; fi
fi
[ $rc -eq 0 ] || ok=0
if [ $ok = 1 ]; then
    echo "$name: PASS: $line (exit $rc)"
    exit 0
fi
echo "$name: FAIL: $line (exit $rc); last lines of $log:"
tail -n 30 "$log.txt" | sed "s/^/$name|   /"
exit 1
