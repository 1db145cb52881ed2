#!/bin/sh
# elector_smoke.sh BIN -- examples/elector.c elects, hands over and steps down. Run inside
# with_redis.sh (uses $LDL_TEST_DIR; every pid goes to a .pid file there for its trap).
# Three electors on one key (alpha and bravo blocking, charlie non-blocking), TTL 1 s:
#   1. once all three have competed, exactly one leads;
#   2. the leader is SIGKILLed: another leads with a higher fence;
#   3. that leader is SIGSTOPped until a third leads (at least 2 TTLs), then SIGCONTed:
#      it printed the loss of its lease (LEASE_EXPIRED, or HEARTBEAT_FAILED when a renew
#      it had about to go out was answered 0 after the resume);
#   4. SIGINT the leader: it steps down (release answered 1) and exits 0, and the one that
#      lost while stopped leads again with a higher fence;
#   5. SIGTERM that one: it steps down and exits 0 too; no elector is left running;
#   6. across all three outputs, ordered by their shared CLOCK_MONOTONIC stamps, the fences
#      of LEADING and work lines never go backwards, and no fence is granted twice;
#   7. the blocking followers name the leader (owner stored with the lease, read back with
#      inspect): at least one such line, and each names an elector that led with that fence.
# Then --memory: one hand-over to a higher fence, followers name the leader and its fence
# (owner + inspect), the crashed leader sees LEASE_EXPIRED.
# Every wait is bounded (4 TTLs + 3 s, generous for a loaded machine) and polls the logs:
# nothing here depends on how fast a step happens, only on it happening within the bound.
set -u
bin=$1
d=${LDL_TEST_DIR:?run me through tests/store/with_redis.sh}/elector
mkdir -p "$d"
. "$(dirname "$0")/redis_smoke_lib.sh"
smoke_redis elector

ttl=1000
bound=$(( (4 * ttl + 3000) / 100 ))     # in 0.1 s steps
names="alpha bravo charlie"

start() {   # name [--async]
  "$bin" --redis "127.0.0.1:$port" --name "$1" --key smoke --ttl "$ttl" ${2:-} \
    > "$d/$1.log" 2>&1 &
  echo $! > "$LDL_TEST_DIR/elector-$1.pid"
}
pid() { cat "$LDL_TEST_DIR/elector-$1.pid"; }
alive() { kill -0 "$(pid "$1")" 2>/dev/null; }
# the fence NAME leads with now according to its output ("" = following)
fence_of() {
  awk '/ LEADING with fence / { f = $NF } / LOST the lead / || / stepping down/ { f = "" }
       END { print f }' "$d/$1.log"
}
leaders() {   # the live electors that lead now: "name fence" lines
  for n in $names; do
    alive "$n" || continue
    f=$(fence_of "$n"); [ -n "$f" ] && echo "$n $f"
  done
}
until_ok() {  # run "$@" every 0.1 s until it succeeds, at most $bound times
  i=0
  while [ $i -lt "$bound" ]; do "$@" && return 0; sleep 0.1; i=$((i + 1)); done
  return 1
}
one_leader() { [ "$(leaders | wc -l)" -eq 1 ]; }
leader_above() {   # a live elector other than $1 leads with a fence above $2
  leaders | awk -v not="$1" -v min="$2" '$1 != not && $2 > min { ok = 1 } END { exit !ok }'
}

start alpha; start bravo; start charlie --async

# 1. exactly one leads, once all three have competed (an answered attempt each)
competed() { for n in $names; do grep -qE "EVENT (GRANTED|REFUSED) " "$d/$n.log" || return 1; done; }
until_ok competed && ok || bad "not all three electors competed"
until_ok one_leader && ok || bad "not exactly one leader: $(leaders | tr '\n' ' ')"
set -- $(leaders | head -1); l1=${1:-none}; f1=${2:-0}
# the blocking followers ask Redis who leads (the owner stored with the lease, inspect)
followed() { cat "$d/alpha.log" "$d/bravo.log" | grep -q " following [a-z]* (fence "; }
until_ok followed && ok || bad "no blocking follower named a leader"

# 2. SIGKILL the leader: another takes over with a higher fence
kill -9 "$(pid "$l1")" 2>/dev/null
wait "$(pid "$l1")" 2>/dev/null
until_ok leader_above "$l1" "$f1" && ok || bad "no takeover above fence $f1 after killing $l1"
until_ok one_leader && ok || bad "not exactly one leader after the kill: $(leaders | tr '\n' ' ')"
set -- $(leaders | head -1); l2=${1:-none}; f2=${2:-0}

# 3. SIGSTOP the new leader for at least 2 TTLs and until the third elector leads
kill -STOP "$(pid "$l2")" 2>/dev/null
sleep $(( 2 * ttl / 1000 ))
until_ok leader_above "$l2" "$f2" && ok || bad "no takeover above fence $f2 while $l2 was stopped"
kill -CONT "$(pid "$l2")" 2>/dev/null
lost_f2() { grep -q "EVENT LOST .* token=$f2 " "$d/$l2.log"; }
until_ok lost_f2 && ok || bad "$l2 printed no loss of fence $f2 after SIGCONT"

# 4. Ctrl-C hands over: SIGINT the leader, it steps down (release answered 1) and exits 0,
#    and the other survivor -- the one that lost while stopped -- leads again, higher
stop_one() {   # name signal: it must exit 0 within the bound and say bye
  [ -f "$LDL_TEST_DIR/elector-$1.pid" ] || { bad "no elector '$1' to stop"; return; }
  kill -"$2" "$(pid "$1")" 2>/dev/null
  until_ok gone "$1" || { bad "$1 still running after SIG$2"; kill -9 "$(pid "$1")"; }
  wait "$(pid "$1")"; rc=$?
  [ $rc = 0 ] && ok || bad "$1 exited $rc after SIG$2"
  grep -q " bye: " "$d/$1.log" && ok || bad "$1 did not finish cleanly"
}
gone() { ! alive "$1"; }
until_ok one_leader && ok || bad "not exactly one leader before SIGINT: $(leaders | tr '\n' ' ')"
set -- $(leaders | head -1); l3=${1:-none}; f3=${2:-0}
stop_one "$l3" INT
grep -q "EVENT RELEASED    raw=1 token=$f3 " "$d/$l3.log" && ok ||
  bad "leader $l3 did not step down with fence $f3 (release answered 1)"
until_ok leader_above "$l3" "$f3" && ok || bad "no takeover above fence $f3 after $l3 stepped down"
set -- $(leaders | head -1); l4=${1:-none}; f4=${2:-0}
[ "$l4" = "$l2" ] && ok || bad "$l2 did not lead again after its loss (leader: $l4)"

# 5. SIGTERM the last one: it steps down too; nothing is left running
stop_one "$l4" TERM
grep -q "EVENT RELEASED    raw=1 token=$f4 " "$d/$l4.log" && ok ||
  bad "leader $l4 did not step down with fence $f4 (release answered 1)"
left=0; for n in $names; do alive "$n" && { left=$((left + 1)); kill -9 "$(pid "$n")"; }; done
[ $left = 0 ] && ok || bad "$left elector(s) still running"

# 6. fences never go backwards, in each output and across all of them (stamps first)
for n in $names; do
  sed -n -e 's/^ *\([0-9.]*\) .* LEADING with fence \([0-9]*\)$/\1 \2/p' \
         -e 's/^ *\([0-9.]*\) .* working with fence \([0-9]*\) .*/\1 \2/p' "$d/$n.log"
done | sort -k1,1n -k2,2n > "$d/fences"
[ "$(wc -l < "$d/fences")" -ge 4 ] && ok || bad "too few fenced lines: $(wc -l < "$d/fences")"
awk '$2 < last { print "fence " $2 " at " $1 " after " last; bad = 1 } { last = $2 }
     END { exit bad }' "$d/fences" && ok || bad "a fence went backwards across the outputs"
for n in $names; do
  sed -n 's/.* LEADING with fence \([0-9]*\)$/\1/p' "$d/$n.log" |
    awk -v n="$n" '$1 <= last { print n ": fence " $1 " after " last; bad = 1 } { last = $1 }
                   END { exit bad }' || bad "$n led again with a fence that did not rise"
done
wrong=$(cat "$d/alpha.log" "$d/bravo.log" |
  sed -n 's/.* following \([a-z]*\) (fence \([0-9]*\), .*/\1 \2/p' | sort -u |
  while read -r n f; do grep -q " LEADING with fence $f\$" "$d/$n.log" 2>/dev/null || echo "$n:$f"; done)
[ -z "$wrong" ] && ok || bad "a follower named a leader and fence that never led: $wrong"
dup=$(cat "$d"/*.log | sed -n 's/.* LEADING with fence \([0-9]*\)$/\1/p' | sort -n | uniq -d)
[ -z "$dup" ] && ok || bad "fence(s) granted twice: $dup"

# --memory: no Redis, simulated clock, one hand-over to a higher fence
out=$("$bin" --memory 2>&1); rc=$?
echo "$out" > "$d/memory.log"
[ $rc = 0 ] && ok || bad "--memory exited $rc"
lead=$(echo "$out" | sed -n 's/^ *[0-9.]* \([a-z]*\) *LEADING with fence \([0-9]*\)$/\1 \2/p')
echo "$lead" | awk 'NR == 1 { n1 = $1; f1 = $2 } NR == 2 { n2 = $1; f2 = $2 }
  END { exit !(NR == 2 && n1 != n2 && f2 > f1) }' && ok ||
  bad "--memory: not one hand-over to a higher fence: $(echo "$lead" | tr '\n' ' ')"
for nf in $(echo "$lead" | tr ' ' ':'); do   # followers inspect the store: owner and fence
  echo "$out" | grep -q "following ${nf%%:*} (fence ${nf#*:}, " && ok ||
    bad "--memory: no follower saw ${nf%%:*} lead with fence ${nf#*:}"
done
crashed=$(echo "$out" | sed -n 's/^ *[0-9.]* \([a-z]*\) *CRASH.*/\1/p')
echo "$out" | grep -q " $crashed *EVENT LOST .*reason=LEASE_EXPIRED" && ok ||
  bad "--memory: the crashed leader ($crashed) saw no LEASE_EXPIRED"

[ $fail = 0 ] || for n in $names memory; do echo "--- $n"; cat "$d/$n.log"; done >&2
for n in $names; do rm -f "$LDL_TEST_DIR/elector-$n.pid"; done
redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1
wait "$(cat "$LDL_TEST_DIR/elector-redis.pid")" 2>/dev/null
rm -f "$LDL_TEST_DIR/elector-redis.pid"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
