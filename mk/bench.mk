# mk/bench.mk -- `make bench`: the performance and footprint table (BENCHMARKS.md).
# Never part of `make test` (nothing is appended to TEST_TARGETS): timings on a
# shared machine are not pass/fail material. Every row is a ratio measured side
# by side in one run, medians of BENCH_REPS repetitions (default 7).
#   make bench                   build, start throwaway redis/postgres on 127.0.0.1, print the table
#   make bench BN_HDR_DIR=dir    the same against another copy of lite_di_lock.h (proposed diffs)
#   make bench-deps              apt-get the anchors (root); npm installs redlock into bench/npm/
# Knobs (environment): BENCH_REPS, BENCH_ROWS="1 2 3 4 5 6 7" (7: etcd), BENCH_HUGEPAGES=1,
# BENCH_MAXKEYS=1000 (row 2 without the 1e6-key world). Row 6 needs valgrind.
#   sh bench/ab.sh DIR [ROUNDS [BASE]]   A/B of two headers: rows 1-2, callgrind, footprint

BN_HDR_DIR ?= .
BN_DIR     ?= $(B)/bench
BN_CFLAGS   = -std=c11 -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L $(WARN) -I$(BN_HDR_DIR) -Ibench
BN_PG_INC  := $(or $(shell pg_config --includedir 2>/dev/null),/usr/include/postgresql)
DEPS_BENCH_PKGS := build-essential gcc-12-multilib gcc-arm-none-eabi \
                   redis-server redis-tools libhiredis-dev postgresql postgresql-contrib \
                   libpq-dev valgrind
# node/npm only when missing: a NodeSource nodejs already ships npm and conflicts with Debian's
DEPS_BENCH_NODE := nodejs npm

.PHONY: bench bench-deps bench-build
bench: bench-build
	sh bench/run.sh $(BN_DIR) $(BN_HDR_DIR)
	$(MAKE) --no-print-directory bench-view

bench-build: $(BN_DIR)/bench_core $(BN_DIR)/bench_redis $(BN_DIR)/bench_pg $(BN_DIR)/bench_etcd

bench-deps:
	@if [ "$$(id -u)" != 0 ]; then echo "run as root: apt-get install -y $(DEPS_BENCH_PKGS)"; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS_BENCH_PKGS)
	command -v npm >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEPS_BENCH_NODE)
	cd bench/npm && npm ci --no-audit --no-fund

# the implementation in its own object (no LTO), as an stb user builds it
$(BN_DIR)/ldl_impl.o: bench/ldl_impl.c $(BN_HDR_DIR)/$(HDR)
	@mkdir -p $(BN_DIR)
	$(CC) $(BN_CFLAGS) -c $< -o $@

$(BN_DIR)/bench_core: bench/bench_core.c bench/bench_util.h $(BN_DIR)/ldl_impl.o
	$(CC) $(BN_CFLAGS) bench/bench_core.c $(BN_DIR)/ldl_impl.o -o $@

# store benches: the adapter is compiled in the same file (its IMPLEMENTATION macro);
# built only when the client library headers are there, else run.sh says "not built"
$(BN_DIR)/bench_redis: bench/bench_redis.c bench/bench_util.h bench/bench_store.h adapters/lite_di_lock_redis.h $(BN_DIR)/ldl_impl.o
	@mkdir -p $(BN_DIR)
	-$(CC) $(BN_CFLAGS) -I. bench/bench_redis.c $(BN_DIR)/ldl_impl.o -lhiredis -o $@

$(BN_DIR)/bench_pg: bench/bench_pg.c bench/bench_util.h bench/bench_store.h adapters/lite_di_lock_pg.h $(BN_DIR)/ldl_impl.o
	@mkdir -p $(BN_DIR)
	-$(CC) $(BN_CFLAGS) -I. -I$(BN_PG_INC) bench/bench_pg.c $(BN_DIR)/ldl_impl.o -lpq -o $@

# row 7: the etcd adapter (bench/bench_etcd.c; built only when libcurl and cJSON are there)
$(BN_DIR)/bench_etcd: bench/bench_etcd.c bench/bench_util.h adapters/lite_di_lock_etcd.h tests/store/etcd_common.h
	@mkdir -p $(BN_DIR)
	-$(CC) $(BN_CFLAGS) -I. bench/bench_etcd.c -lcurl -lcjson -o $@
