#!/bin/sh
# pg.sh OUT_DIR -- row 4 of `make bench`, run inside tests/store/with_pg.sh (a
# throwaway PostgreSQL on 127.0.0.1, $LDL_PG_CONNINFO). BENCH_REPS interleaved
# rounds, one connection each:
#   bench_pg acqrel       ldl_lock_acquire+release over the adapter (its prepared statements)
#   pgbench -c 1 -M prepared -f lifecycle.sql   the same two statements (the adapter's
#                         acquire INSERT .. ON CONFLICT and release UPDATE, read from
#                         adapters/lite_di_lock_pg.h), one transaction = one lifecycle
#   bench_pg pipe 100     the non-blocking view: 100 locks cycling on ONE connection, vs
#   bench_pg rawpipe 100  plain libpq doing the same (the adapter's prepared statements, one
#                         PQpipelineSync each): 4b with the server's defaults, 4c with
#                         synchronous_commit = off on both sessions; 4d: pipe through a real
#                         pgbouncer in transaction pooling (LDL_PG_UNNAMED) vs direct
#   bench_pg frame 1000   one pump + 1,000 polls with 1,000 leases held (4e), and with the
#                         server backend SIGSTOPped (4f): median, p99, max of ~1,500 frames
#   bench_pg fence SECS   4g-4j: a one-row UPDATE transaction with the fence check
#                         (pipelined with the write / sent alone) vs without it
# The anchor is plain libpq, not pgbench \startpipeline: PostgreSQL 15's pgbench cannot
# \gset inside a pipeline (release needs acquire's token) and syncs once per pipeline, one
# commit for all its statements, where the adapter commits each on its own (decision 0204).
# Rates are medians over rounds; the ratio is the median of per-round ratios (paired).
# Writes table rows to OUT_DIR/row4.md.
set -u
. "$(dirname "$0")/lib.sh"
out=${1:-build/bench}
reps=${BENCH_REPS:-7}
secs=${BENCH_PG_SECS:-2}
n_ldl=${BENCH_PG_OPS:-1500}
rows="$out/row4.md"
pgb=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldl-bench-pg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# the adapter's statements, with pgbench variables for its parameters
cat >"$tmp/lifecycle.sql" <<'SQL'
INSERT INTO "public"."ldl_lease" AS l (key, token, expires_at) VALUES (:key::pg_catalog.text, 1::pg_catalog.int8, pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) (:ttl::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval)) ON CONFLICT (key) DO UPDATE SET token = l.token OPERATOR(pg_catalog.+) 1::pg_catalog.int8, expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) (:ttl::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval) WHERE l.expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp() RETURNING l.token AS tok \gset
UPDATE "public"."ldl_lease" AS l SET expires_at = '-infinity'::pg_catalog.timestamptz WHERE l.key OPERATOR(pg_catalog.=) :key::pg_catalog.text AND l.token OPERATOR(pg_catalog.=) :tok::pg_catalog.int8 AND l.expires_at OPERATOR(pg_catalog.>) '-infinity'::pg_catalog.timestamptz RETURNING l.token;
SQL
# the table exists after one adapter run (ldl_pg_init creates it)
"$out/bench_pg" "$LDL_PG_CONNINFO" acqrel 20 >/dev/null || { echo "| 4 | PostgreSQL | not run: bench_pg failed | | | | |" >"$rows"; exit 1; }
fsync=$(psql "$LDL_PG_CONNINFO" -Atc "select current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')" 2>/dev/null)
: >"$tmp/ldl"; : >"$tmp/pgb"
r=0
while [ $r -lt "$reps" ]; do
  r=$((r + 1))
  "$out/bench_pg" "$LDL_PG_CONNINFO" acqrel "$n_ldl" >>"$tmp/ldl" || echo "bench_pg failed" >&2
  if [ -n "$pgb" ]; then
    "$pgb" -n -c 1 -M prepared -T "$secs" -D key=pgbench-key -D ttl=30000 -f "$tmp/lifecycle.sql" \
      "$LDL_PG_CONNINFO" 2>"$tmp/pgb.err" | awk '/^tps = / { print $3; exit }' >>"$tmp/pgb"
  fi
done
ldl=$(median <"$tmp/ldl")
if [ -s "$tmp/pgb" ]; then
  pg=$(median <"$tmp/pgb")
  rp=$(pratio "$tmp/ldl" "$tmp/pgb" 1)
  v=MISSED; ge "$rp" 0.95 && v=met
  echo "| 4 | PostgreSQL adapter, 1 connection, loopback: acquire+release lifecycles (fsync $fsync) | $(krate "$ldl") | $(krate "$pg") (pgbench -c 1 -M prepared, same 2 statements) | $(ppct "$rp") | >= 95 % | $v |" >"$rows"
else
  echo "| 4 | PostgreSQL adapter: acquire+release lifecycles | $(krate "$ldl") | pgbench not run: $(head -c 150 "$tmp/pgb.err" 2>/dev/null | tr '\n|' '  ') | | >= 95 % | |" >"$rows"
fi

# 4b-4f: the non-blocking view
off="$LDL_PG_CONNINFO options=-csynchronous_commit=off"
: >"$tmp/pipe"; : >"$tmp/raw"; : >"$tmp/pipeo"; : >"$tmp/rawo"; : >"$tmp/pipeb"
r=0
while [ $r -lt "$reps" ]; do
  r=$((r + 1))
  "$out/bench_pg" "$LDL_PG_CONNINFO" pipe 100 "$secs" >>"$tmp/pipe" || echo 0 >>"$tmp/pipe"
  "$out/bench_pg" "$LDL_PG_CONNINFO" rawpipe 100 "$secs" >>"$tmp/raw" || echo 0 >>"$tmp/raw"
  "$out/bench_pg" "$off" pipe 100 "$secs" >>"$tmp/pipeo" || echo 0 >>"$tmp/pipeo"
  "$out/bench_pg" "$off" rawpipe 100 "$secs" >>"$tmp/rawo" || echo 0 >>"$tmp/rawo"
  sh tests/store/with_pgbouncer.sh tx1 "\"$out/bench_pg\" \"\$LDL_PG_CONNINFO\" pipe 100 $secs unnamed" 2>/dev/null |
    grep -E '^[0-9.]+$' >>"$tmp/pipeb" || echo 0 >>"$tmp/pipeb"
done
p=$(median <"$tmp/pipe"); rw=$(median <"$tmp/raw"); po=$(median <"$tmp/pipeo"); ro=$(median <"$tmp/rawo"); pb=$(median <"$tmp/pipeb")
rp=$(pratio "$tmp/pipe" "$tmp/raw" 1); v=MISSED; ge "$rp" 0.9 && v=met
echo "| 4b | PostgreSQL non-blocking view: lifecycles/s, 100 locks in flight on 1 connection, each statement its own Sync and commit (fsync $fsync) | $(krate "$p") | $(krate "$rw") (plain libpq pipeline, the same prepared statements, one PQpipelineSync each) | $(ppct "$rp") | >= 90 % | $v |" >>"$rows"
rp=$(pratio "$tmp/pipeo" "$tmp/rawo" 1); v=MISSED; ge "$rp" 0.9 && v=met
echo "| 4c | the same with synchronous_commit = off for both sessions (the server no longer waits on the disk) | $(krate "$po") | $(krate "$ro") (plain libpq pipeline) | $(ppct "$rp") | >= 90 % | $v |" >>"$rows"
echo "| 4d | 4b through pgbouncer 1.18, transaction pooling, pool 1, LDL_PG_UNNAMED | $(krate "$pb") | $(krate "$p") (direct, named statements) | $(ppct "$(pratio "$tmp/pipeb" "$tmp/pipe" 1)") | | |" >>"$rows"
f=$("$out/bench_pg" "$LDL_PG_CONNINFO" frame 1000 "$secs")
fs=$("$out/bench_pg" "$LDL_PG_CONNINFO" frame 1000 "$secs" stop)
fm=$(echo "$f" | cut -d' ' -f1); fsm=$(echo "$fs" | cut -d' ' -f1)
v=MISSED; [ -n "$fm" ] && ge 1000 "$fm" && v=met; [ -n "$fm" ] || f="not run"
echo "| 4e | frame: 1 pump + 1,000 ldl_lock_poll, 1,000 leases held (ttl 10 s, heartbeat 3 s) on 1 connection: median / p99 / max us | $(echo "$f" | sed 's/ / \/ /g') us | | | median <= 1,000 us | $v |" >>"$rows"
v=MISSED; [ -n "$fsm" ] && ge 1000 "$fsm" && v=met; [ -n "$fsm" ] || fs="not run"
echo "| 4f | the same with the server backend SIGSTOPped | $(echo "$fs" | sed 's/ / \/ /g') us | | | median <= 1,000 us | $v |" >>"$rows"

# 4g-4j: fenced writes (issue 19). One-row UPDATE transactions, three ways interleaved
# in one process (bench_pg fence SECS prints "plain with alone" in tx/s): plain
# BEGIN; UPDATE; COMMIT -- the fence check (ldl_pg_fence_sql, prepared) sent in one
# pipeline with the UPDATE, COMMIT only after it passed -- the check sent alone
# (ldl_pg_fence: its own round trip). The time ratio is plain rate / fenced rate,
# the median of the per-round ratios. 4g/4h with the server's defaults, 4i/4j with
# synchronous_commit = off (no disk wait: the round trips and the upsert show).
: >"$tmp/fz"; : >"$tmp/fzo"
r=0
while [ $r -lt "$reps" ]; do
  r=$((r + 1))
  "$out/bench_pg" "$LDL_PG_CONNINFO" fence "$secs" >>"$tmp/fz" || echo "0 0 0" >>"$tmp/fz"
  "$out/bench_pg" "$off" fence "$secs" >>"$tmp/fzo" || echo "0 0 0" >>"$tmp/fzo"
done
fzrow() {   # fzrow FILE ROW_WITH ROW_ALONE LABEL
  cut -d' ' -f1 "$1" >"$tmp/fz_p"; cut -d' ' -f2 "$1" >"$tmp/fz_w"; cut -d' ' -f3 "$1" >"$tmp/fz_a"
  pl=$(median <"$tmp/fz_p"); wi=$(median <"$tmp/fz_w"); al=$(median <"$tmp/fz_a")
  rw=$(pratio "$tmp/fz_p" "$tmp/fz_w" 1); ra=$(pratio "$tmp/fz_p" "$tmp/fz_a" 1)
  v=MISSED; ge 1.25 "$rw" && v=met
  echo "| $2 | fenced one-row UPDATE transaction ($4): BEGIN; [fence check + UPDATE pipelined, one Sync]; COMMIT, vs the same without the check | $(krate "$wi") | $(krate "$pl") (BEGIN; UPDATE; COMMIT) | time $(awk -v r="$rw" 'BEGIN { printf "%.2fx", r }') | <= 1.25x | $v |" >>"$rows"
  echo "| $3 | the same with the check sent alone (ldl_pg_fence, its own round trip: 4 instead of 3) | $(krate "$al") | $(krate "$pl") | time $(awk -v r="$ra" 'BEGIN { printf "%.2fx", r }') | | |" >>"$rows"
}
fzrow "$tmp/fz" 4g 4h "fsync $fsync"
fzrow "$tmp/fzo" 4i 4j "synchronous_commit = off"
