#!/bin/sh
# pg.sh OUT_DIR -- row 4 of `make bench`, run inside tests/store/with_pg.sh (a
# throwaway PostgreSQL on 127.0.0.1, $LDL_PG_CONNINFO). BENCH_REPS interleaved
# rounds, one connection each:
#   bench_pg acqrel       ldl_lock_acquire+release over the adapter (its prepared statements)
#   pgbench -c 1 -M prepared -f lifecycle.sql   the same two statements (the adapter's
#                         acquire INSERT .. ON CONFLICT and release UPDATE, read from
#                         adapters/lite_di_lock_pg.h), one transaction = one lifecycle
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
INSERT INTO "ldl_lease" AS l (key, token, expires_at) VALUES (:key::text, 1, clock_timestamp() + :ttl::int8 * interval '1 millisecond') ON CONFLICT (key) DO UPDATE SET token = l.token + 1, expires_at = clock_timestamp() + :ttl::int8 * interval '1 millisecond' WHERE l.expires_at <= clock_timestamp() RETURNING l.token AS tok \gset
UPDATE "ldl_lease" SET expires_at = '-infinity' WHERE key = :key::text AND token = :tok::int8 AND expires_at > '-infinity' RETURNING token;
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
