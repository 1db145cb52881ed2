#!/bin/sh
# mutants.sh OUTDIR -- the ldl-run suite must go red on each broken copy of cli/ldl-run.c.
# Each mutant is one sed expression on the source (cli/ldl-run.c and the helpers it
# shares with ldl-fence, cli/ldl_cli.h: the mutated header goes to OUTDIR/NAME.inc/cli/,
# which comes first on the include path); its build runs the Redis suite
# (inside tests/store/with_redis.sh), or the PostgreSQL suite (inside
# tests/store/with_pg.sh) when its line names "pg" as a third field, or the scheduled-job
# suite (tests/cli/schedule_test.sh, issue 33) on SQLite or PostgreSQL when it names
# "sched-sqlite" or "sched-pg": some behaviours
# (a blocking connect; a release bounded only by --store-timeout, where Redis also drops
# a stalled link) only a PostgreSQL store shows. Not part of `make test` (about
# 25 minutes on 2 cores; a mutant's run stops at its first FAIL): `make test-cli-mutants` (MUTANTS="name ..." runs only those).
# Last line: "mutants: N killed, N survived".
set -u
out=${1:-build/cli/mutants}
mkdir -p "$out"
cc=${CC:-cc}
inc="-I. -I$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)"
killed=0; survived=0
# name|sed expression
while IFS='|' read -r name expr suite; do
  [ -n "$name" ] || continue
  case " ${MUTANTS:-$name} " in *" $name "*) ;; *) continue ;; esac
  sed "$expr" cli/ldl-run.c > "$out/$name.c"
  mkdir -p "$out/$name.inc/cli"
  sed "$expr" cli/ldl_cli.h > "$out/$name.inc/cli/ldl_cli.h"
  if cmp -s cli/ldl-run.c "$out/$name.c" && cmp -s cli/ldl_cli.h "$out/$name.inc/cli/ldl_cli.h"; then
    echo "mutant $name: the expression changed nothing (fix mutants.sh)"; survived=$((survived + 1)); continue
  fi
  if ! $cc -std=c99 -O1 -w -I"$out/$name.inc" $inc "$out/$name.c" -lhiredis -lpq -lsqlite3 -lcurl -lcjson -o "$out/$name"; then
    echo "mutant $name: does not compile (fix mutants.sh)"; survived=$((survived + 1)); continue
  fi
  # in its own session (setsid), so that the whole run can be ended; the first FAIL
  # already makes the mutant killed, so the run is stopped there (TERM: the wrappers
  # stop their servers; then KILL for what is left). Into files, not a pipe: a process
  # a mutant leaves behind would hold a pipe open.
  : >"$out/$name.err"; : >"$out/$name.out"
  if [ "${suite:-redis}" = pg ]; then
    setsid timeout 300 tests/store/with_pg.sh "sh tests/cli/ldl_run_test.sh $out/$name pg" \
      >"$out/$name.out" 2>"$out/$name.err" &
  elif [ "${suite:-redis}" = sched-sqlite ]; then
    setsid timeout 300 sh tests/cli/schedule_test.sh "$out/$name" sqlite \
      >"$out/$name.out" 2>"$out/$name.err" &
  elif [ "${suite:-redis}" = sched-pg ]; then
    setsid timeout 300 tests/store/with_pg.sh "sh tests/cli/schedule_test.sh $out/$name pg" \
      >"$out/$name.out" 2>"$out/$name.err" &
  else
    setsid timeout 300 tests/store/with_redis.sh sh tests/cli/ldl_run_test.sh "$out/$name" redis \
      >"$out/$name.out" 2>"$out/$name.err" &
  fi
  sp=$!
  while kill -0 $sp 2>/dev/null && ! grep -q '^FAIL' "$out/$name.err"; do sleep 0.5; done
  first=
  if kill -0 $sp 2>/dev/null; then      # a FAIL while it runs: stop it
    first=$(grep -m 1 '^FAIL' "$out/$name.err")
    kill -TERM -- -$sp 2>/dev/null
    i=0; while kill -0 $sp 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
    kill -KILL -- -$sp 2>/dev/null
    pkill -KILL -s $sp 2>/dev/null      # the jobs ldl-run put in groups of their own
  fi
  wait $sp 2>/dev/null
  if [ -n "$first" ]; then
    res="stopped at the first failure: $first"
  else
    res=$(grep ' passed, ' "$out/$name.out" | tail -n 1)
    # cut by the timeout: the failures it already reported count
    case $res in *" failed") ;; *) grep -q '^FAIL' "$out/$name.err" && res="cut short, $(grep -c '^FAIL' "$out/$name.err") failed" ;; esac
  fi
  case $res in
    "0 passed, 0 failed"|"") echo "mutant $name: the suite did not run ($res)"; survived=$((survived + 1)) ;;
    "stopped at the first failure"*) echo "mutant $name: killed ($res)"; killed=$((killed + 1)) ;;
    *", 0 failed") echo "mutant $name: SURVIVED ($res)"; survived=$((survived + 1)) ;;
    *) echo "mutant $name: killed ($res)"; killed=$((killed + 1)) ;;
  esac
done <<'EOF'
no-exclusion|s/if (rc == 1) return 1;/return 1;/
child-only-kill|s/signal_job(r, SIGTERM);/(void)kill(r->pgid, SIGTERM);/g
no-sigkill|s/signal_job(r, SIGKILL);/;/
loss-ignored|s/if (pr != 1) {/if (pr != 1 \&\& 0) {/
forward-child-only|s/(void)kill(-r->pgid, sig);/(void)kill(r->pgid, sig);/
no-forward|s/signal_job(r, fwd_sigs\[i\]);/;/
exit-code-lost|s/if (WIFEXITED(st)) return WEXITSTATUS(st);/if (WIFEXITED(st)) return 0;/
lost-code|s/code = EXIT_LOST;/code = 1;/
no-own-group|s/setpgid([^;]*;/;/g
no-release|s/rr = ldl_lock_release(\&r->lock);/rr = 1;/;s/return finish(\&r, \&o, 3);/return finish(\&r, \&o, 0);/
silent-store-waits|s/if (t >= abound) {/if (0) {/
store-error-as-busy|s/\*code = EXIT_STORE;/*code = o->conflict_code;/
no-hup|s/{ SIGHUP, SIGINT,/{ SIGINT,/
no-quit|s/SIGINT, SIGQUIT, SIGTERM/SIGINT, SIGTERM/
no-usr2|s/SIGUSR1, SIGUSR2 }/SIGUSR1 }/
expired-finish-passes|s/if (ldl_lock_state(\&r->lock) == LDL_HELD \&\& ldl_lock_poll(\&r->lock) != 1) {/if (0) {/
fence-inherited|s/setenv("LDL_FENCE", fence, 1)/setenv("LDL_FENCE", fence, 0)/
status-error-free|s/return rc == 1 ? 0 : rc == 0 ? EXIT_NOT_ACQUIRED : rc;/return rc == 1 ? 0 : EXIT_NOT_ACQUIRED;/
w0-waits|s/!(o->wait_set \&\& o->wait_ms == 0)/1/
decimals-unscaled|s/while (fd < 3) { frac \*= 10u; fd++; }/;/
leftovers-no-term|/terminating what is left of the job/,/leftovers = 1;/s/signal_job(r, SIGTERM);/;/
signal-while-acquiring-ignored|s/if (sigs) return acquire_signalled/if (0) return acquire_signalled/
n-waits|s/if (!ldl_lock_retrying(\&r->lock)) {/if (0) {/
late-kill|s/left <= o->grace_ms) {/left <= 0 \&\& 0) {/;s/t + o->grace_ms < r->trust_end ? t + o->grace_ms : r->trust_end/t + o->grace_ms/
no-escalation|s/if (escalates(fwd_sigs\[i\])) set_kill/if (0) set_kill/
no-strays|s/return strays(r->pgid, 0) > 0;/return 0;/
strays-not-signalled|s/(void)strays(r->pgid, sig);/;/
no-pdeathsig|s/(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);/;/
no-ride-out|s/d->ride_out_ms = RIDE_OUT_MS < o->ttl_ms - d->drift_ms - 1u ? RIDE_OUT_MS : 1u;/d->ride_out_ms = 0;/
no-reconnect|s/(void)ldl_redis_async_reconnect(\&s->ra);/;/
no-escape|s/if (c >= 0x20 \&\& c <= 0x7E \&\&/if (c <= 0xFF \&\&/
unbounded-release|s/while (rr == LDL_EINPROGRESS \&\& now_ms() < rel_end) {/while (rr == LDL_EINPROGRESS) {/|pg
acquire-bound-ttl|s/abound = t + (o->io_ms < o->ttl_ms \/ 2u ? o->io_ms : o->ttl_ms \/ 2u);/abound = t + o->ttl_ms \/ 2u;/
grace-unchecked|s/if (o->grace_set) {/if (0) {/
status-bad-key-unchecked|s/if ((why = probe(\&kd)) != NULL) {/if (0) {/
pg-signal-waits-in-connect|s/if (in_setup) _exit(128 + sig);/;/|pg
pg-connect-unbounded|s/if (t >= end) {/if (0) {/|pg
pg-no-reconnect|s/if (s->v.ops->pump(s->v.self) < 0 \&\& s->ride_out) pg_reconnect_step/if (s->v.ops->pump(s->v.self) < 0 \&\& 0) pg_reconnect_step/|pg
no-min-hold|s/t >= r->grant_t + o->min_hold_ms)/1)/|sched-sqlite
hold-ignores-term|s/r->stopping = 1;/;/|sched-sqlite
detach-no-fork|s/if (o->detach_hold) detach(r, o, r->code);/;/|sched-sqlite
detach-keeps-output|s/(void)dup2(fd, 0); (void)dup2(fd, 1); (void)dup2(fd, 2);/(void)dup2(fd, 0);/|sched-sqlite
loser-silent|s/if (!o->quiet) tell_loser(r, o);/;/|sched-sqlite
quiet-ignored|s/if (!o->quiet) tell_loser(r, o);/tell_loser(r, o);/|sched-sqlite
no-side-prefix|s/if (side) fprintf(stderr, "%s error: ", side);/;/|sched-sqlite
lines-flattened|s/nl = strchr(b, '\\n');/nl = NULL;/|sched-pg
no-takeover-line|s/say_taken(r, o, "release of");/;/|sched-sqlite
once-per-no-check|s/rc = done_mark_ask(r, o);/rc = 0;/|sched-sqlite
once-per-unfenced|s/int64_t fence = ldl_lock_fencing_token(\&r->lock);/int64_t fence = INT64_MAX;/|sched-sqlite
once-per-marks-failures|s/if (o->once_per_s \&\& r->code == 0 \&\& r->judged_ok)/if (o->once_per_s \&\& r->judged_ok)/|sched-sqlite
done-code-0-runs|s/if (granted(\&r, \&o) \&\& /if ((granted(\&r, \&o) + !r.code) \&\& /|sched-sqlite
period-not-utc|s/return (uint64_t)ts.tv_sec \/ o->once_per_s;/return ((uint64_t)ts.tv_sec + 3u) \/ o->once_per_s;/|sched-sqlite
metrics-label-unescaped|s/out\[n++\] = '\\\\'; out\[n++\] = (char)c; p++;/out[n++] = (char)c; p++;/|sched-sqlite
metrics-not-renamed|s/rename(tmp, o->metrics) != 0/0/|sched-sqlite
metrics-success-forgotten|s/if (!strncmp(line, prefix, strlen(prefix))) last_ok = /if (0) last_ok = /|sched-sqlite
status-creates-sqlite-file|s/? LDL_SQLITE_INSPECT :/? LDL_SQLITE_CREATE :/|sched-sqlite
status-creates-pg-table|s/if (found <= 0) return EXIT_STORE;/;/|sched-pg
sqlite-why-missing|s/return s->v.ops ? s->v.ops->why(s->v.self) : "";/return "";/|sched-sqlite
EOF
echo "mutants: $killed killed, $survived survived"
[ $survived = 0 ]
