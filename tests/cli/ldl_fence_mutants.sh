#!/bin/sh
# ldl_fence_mutants.sh OUTDIR RUNBIN -- break cli/ldl-fence.c on purpose, one way at a
# time, and check that tests/cli/ldl_fence_test.sh goes red for each (make
# test-fence-cli-mutants; not part of make test: about 45 s per mutant; ONLY=REGEX
# runs the mutants whose names match). Each mutant is also built with
# -DLDL_FENCE_TEST_NO_GATE for the suite's backstop checks (NOGATE).
# Each mutant is a sed expression that must change the source (else it is reported
# as stale and counts as a failure). Last line: "N killed, N survived".
set -u
out=${1:?usage: ldl_fence_mutants.sh OUTDIR RUNBIN}
run=${2:?usage: ldl_fence_mutants.sh OUTDIR RUNBIN}
CLANG=${CLANG:-clang}
inc="-I. -I$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)"
mkdir -p "$out" || exit 2
killed=0; survived=0
# name|sed expression
cat > "$out/list" <<'EOF'
fence-check-skipped|s/rc = f.v.ops->fenced(f.v.self, \&f.w);/rc = 1;/
pg-stale-exits-0|s/        return EXIT_STALE;/        return EXIT_OK;/
redis-stale-exits-0|s/if (rc == 0) return EXIT_STALE;/if (rc == 0) return EXIT_OK;/
file-error-exits-0|/if (fr->cancelled \&\& o->file_ms)/,/return EXIT_DATAERR;/s/return EXIT_DATAERR;/return EXIT_OK;/
gate-off|s/rc = sql_gate(f->sql, \&f->g);/rc = 0; (void)sql_gate(f->sql, \&f->g);/
gate-ignores-cr|s/pr = pg_query_parse(sql);/{ char *cp = strdup(sql), *cq; for (cq = cp; *cq; cq++) if (*cq == '\\r') *cq = ' '; pr = pg_query_parse(cp); free(cp); }/
gate-lets-commit|s/(kn == 18 \&\& !memcmp(k, "TRANS_STMT_RELEASE", 18))/(kn == 18 \&\& !memcmp(k, "TRANS_STMT_RELEASE", 18)) || (kn == 17 \&\& !memcmp(k, "TRANS_STMT_COMMIT", 17))/
gate-parse-error-passes|/    if (rc < 0) {/s/rc < 0/rc < -1/
scs-off-accepted|s/if (!std || strcmp(std, "on") != 0 || /if (/
encoding-not-forced|s/vals\[2\] = "UTF8";/vals[2] = NULL;/
backstop-exits-65|s/return EXIT_ENDED;/return EXIT_DATAERR;/
backstop-tags-ignored|s/if (!strcmp(tag, "COMMIT") || /if (0 \&\& !strcmp(tag, "COMMIT") || /
backstop-state-ignored|s/if (failed \&\& PQtransactionStatus(c) != PQTRANS_INERROR \&\& !ended) {/if (0) {/
rows-buffered|s/if (len > 0) (void)PQsetSingleRowMode(c);//
default-timeout-20s|s/o->io_ms = 2000;/o->io_ms = 20000;/
redis-resolve-unbounded|s/        int r = parse_hostport(o->redis, host, sizeof host, \&port);/        int r; watchdog(0, NULL, NULL); r = parse_hostport(o->redis, host, sizeof host, \&port); watchdog(o->io_ms, "while connecting", "nothing was sent");/
fence-env-ignored|s/if (!o->fence_arg) o->fence_arg = getenv("LDL_FENCE");//
zero-fence-accepted|s/if (\*s == '0') return "0 or a leading zero (a fence is >= 1)";//
overflow-unchecked|/v > (uint64_t)INT64_MAX \/ 10u ||/,/return "above/d
reply-unescaped|s/if (c >= 0x20 \&\& c <= 0x7E \&\& c != '\\\\') fputc(c, f);/if (1) fputc(c, f);/
reply-integer-untyped|s/fprintf(f, ":%lld"/fprintf(f, "$%lld"/
keys-not-declared|s/f->w.nkeys = (int)o->nkeys,/f->w.nkeys = 0,/
pg-connect-unbounded|0,/watchdog(o->io_ms, "while connecting", "nothing was sent");/s/watchdog(o->io_ms, "while connecting", "nothing was sent");//
timeout-not-sent|s/o->file_ms ? tmo : NULL/NULL/
keys-default-0|s/if (!o->nkeys_set) o->nkeys = o->ncmd > 1 ? 1u : 0u;//
notice-raw|s/say("postgres: %s%s", msg, NULL);/fputs(msg, stderr);/
EOF
while IFS='|' read -r name expr; do
  [ -n "$name" ] || continue
  # ONLY=REGEX runs the mutants whose names match (all by default)
  if [ -n "${ONLY:-}" ] && ! echo "$name" | grep -qE "$ONLY"; then continue; fi
  sed "$expr" cli/ldl-fence.c > "$out/$name.c"
  if cmp -s cli/ldl-fence.c "$out/$name.c"; then
    echo "STALE mutant $name: the expression changed nothing"; survived=$((survived + 1)); continue
  fi
  # shellcheck disable=SC2086
  if ! $CLANG -std=c99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all $inc \
       -o "$out/$name" "$out/$name.c" -lhiredis -lpq -lpg_query 2> "$out/$name.build"; then
    echo "BUILD FAILED $name:"; head -n 5 "$out/$name.build"; survived=$((survived + 1)); continue
  fi
  # the backstop checks need the no-gate build of the mutant itself
  $CLANG -std=c99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -DLDL_FENCE_TEST_NO_GATE $inc \
       -o "$out/$name-nogate" "$out/$name.c" -lhiredis -lpq -lpg_query 2>/dev/null
  NOGATE=$(pwd)/$out/$name-nogate tests/store/with_pg.sh "tests/store/with_redis.sh sh tests/cli/ldl_fence_test.sh '$out/$name' '$run'" \
    > "$out/$name.log" 2>&1
  src=$?
  last=$(grep -aoE '[0-9]+ passed, [0-9]+ failed$' "$out/$name.log" | tail -n 1)
  first=$(grep -a -m1 'FAIL' "$out/$name.log" | cut -c1-160 | cat -v)
  # killed: the suite exits non-zero AND says which check failed
  if [ $src != 0 ] && [ -n "$first" ]; then
    echo "killed   $name ($last; first: $first)"; killed=$((killed + 1))
  else
    echo "SURVIVED $name (exit $src, $last)"; survived=$((survived + 1))
  fi
done < "$out/list"
echo "$killed killed, $survived survived"
[ $survived = 0 ]
