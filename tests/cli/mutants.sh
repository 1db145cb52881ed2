#!/bin/sh
# mutants.sh OUTDIR -- the ldl-run suite must go red on each broken copy of cli/ldl-run.c.
# Each mutant is one sed expression on the source; its build runs the Redis suite
# (inside tests/store/with_redis.sh). Not part of `make test` (about 2 minutes):
# `make test-cli-mutants` (MUTANTS="name ..." runs only those). Last line: "mutants: N killed, N survived".
set -u
out=${1:-build/cli/mutants}
mkdir -p "$out"
cc=${CC:-cc}
inc="-I. -I$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)"
killed=0; survived=0
# name|sed expression
while IFS='|' read -r name expr; do
  [ -n "$name" ] || continue
  case " ${MUTANTS:-$name} " in *" $name "*) ;; *) continue ;; esac
  sed "$expr" cli/ldl-run.c > "$out/$name.c"
  if cmp -s cli/ldl-run.c "$out/$name.c"; then
    echo "mutant $name: the expression changed nothing (fix mutants.sh)"; survived=$((survived + 1)); continue
  fi
  if ! $cc -std=c99 -O1 -w $inc "$out/$name.c" -lhiredis -lpq -lsqlite3 -o "$out/$name"; then
    echo "mutant $name: does not compile (fix mutants.sh)"; survived=$((survived + 1)); continue
  fi
  # into a file, not a pipe: a process a mutant leaves behind would hold a pipe open
  timeout 300 tests/store/with_redis.sh sh tests/cli/ldl_run_test.sh "$out/$name" redis \
    >"$out/$name.out" 2>"$out/$name.err"
  res=$(tail -n 1 "$out/$name.out")
  # cut by the timeout (a mutant that never releases makes every later run wait a TTL):
  # the failures it already reported count
  case $res in *" failed") ;; *) grep -q '^FAIL' "$out/$name.err" && res="cut short, $(grep -c '^FAIL' "$out/$name.err") failed" ;; esac
  case $res in
    "0 passed, 0 failed"|"") echo "mutant $name: the suite did not run ($res)"; survived=$((survived + 1)) ;;
    *", 0 failed") echo "mutant $name: SURVIVED ($res)"; survived=$((survived + 1)) ;;
    *) echo "mutant $name: killed ($res)"; killed=$((killed + 1)) ;;
  esac
done <<'EOF'
no-exclusion|s/if (rc == 1) return 1;/return 1;/
child-only-kill|s/kill(-r.pgid, SIGTERM)/kill(r.pgid, SIGTERM)/g
no-sigkill|s/kill(-r.pgid, SIGKILL);/;/
loss-ignored|s/if (pr != 1) {/if (pr != 1 \&\& 0) {/
forward-child-only|s/kill(-r.pgid, fwd_sigs\[i\]);/kill(r.pgid, fwd_sigs[i]);/
no-forward|s/kill(-r.pgid, fwd_sigs\[i\]);/;/
exit-code-lost|s/if (WIFEXITED(st)) return WEXITSTATUS(st);/if (WIFEXITED(st)) return 0;/
lost-code|s/code = EXIT_LOST;/code = 1;/
no-own-group|s/setpgid([^;]*;/;/g
no-release|s/rr = ldl_lock_release(\&r.lock);/rr = 1;/;s/for (i = 0; i < 3; i++) store_pump(\&r.st);/;/
silent-store-waits|s/if (t >= abound) {/if (0) {/
store-error-as-busy|s/\*code = EXIT_STORE;/*code = o->conflict_code;/
EOF
echo "mutants: $killed killed, $survived survived"
[ $survived = 0 ]
