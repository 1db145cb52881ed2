# mk/cli.mk -- ldl-run (issue 16): run a command under a fenced cluster lease.
#   make cli            build build/cli/ldl-run (also part of `make examples`)
#   make test-cli       the CLIs' shape first (tests/cli/shape_test.sh: tools/long-functions.sh
#                       checked on fixtures, no function of cli/ldl-run.c or cli/ldl-fence.c
#                       over 80 lines, no store named outside ldl-run's driver table;
#                       a second), strict builds (gcc, clang, C++17), then the suite against the
#                       MemoryStore, a throwaway redis-server and a throwaway PostgreSQL,
#                       with an ASan+UBSan build of the tool (about 3 minutes: the
#                       loss window, store restarts and frozen-store bounds take real time);
#                       then the scheduled-job suite (issue 33: --min-hold, --once-per,
#                       --metrics, the messages, two hosts over 20 periods) on SQLite,
#                       Redis, etcd and PostgreSQL (about 75 s each)
#   make install-cli    install ldl-run into $(DESTDIR)$(PREFIX)/bin (PREFIX=/usr/local)
#   make uninstall-cli
# Decision records: docs/decisions/0701-ldl-run.md, 0702 (loss schedule), 0703 (ride-out, bounds),
# 0710 (scheduled jobs: the hold, the period, the messages, the metrics), 0713 (every store
# through its ldl_view: one driver table, one code path).

PREFIX ?= /usr/local

TEST_TARGETS      += test-cli
EXAMPLE_TARGETS   += cli
DEPS_PKGS  += redis-server redis-tools libhiredis-dev postgresql libpq-dev python3 coreutils
# issue 33's suite (tests/cli/schedule_test.sh): SQLite and etcd too, and the
# Prometheus text parser for --metrics
DEPS_PKGS  += sqlite3 etcd-server etcd-client curl python3-prometheus-client
DEPS_CMDS  += redis-server redis-cli psql python3 timeout sqlite3 etcd etcdctl curl
DEPS_FILES += /usr/include/hiredis/hiredis.h /usr/include/postgresql/libpq-fe.h

CLI_INC   := -I. -I$(or $(shell pg_config --includedir 2>/dev/null),/usr/include/postgresql)
CLI_LIBS  := -lhiredis -lpq
CLI_DEP   := cli/ldl-run.c cli/ldl_cli.h $(HDR) adapters/lite_di_lock_redis.h adapters/lite_di_lock_pg.h \
             adapters/lite_di_lock_sqlite.h adapters/lite_di_lock_etcd.h adapters/lite_di_lock_view.h
CLI_XWARN := -Wshadow -Wconversion -Wstrict-prototypes
CLI_BUILDS := $(B)/cli/ldl-run $(B)/cli/ldl-run-clang $(B)/cli/ldl-run-cxx17 $(B)/cli/ldl-run-san

.PHONY: cli test-cli install-cli uninstall-cli
cli: $(B)/cli/ldl-run

$(B)/cli/ldl-run: $(CLI_DEP)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) $(CLI_XWARN) $(CLI_INC) $< $(CLI_LIBS) -o $@
$(B)/cli/ldl-run-clang: $(CLI_DEP)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O2 $(WARN) $(CLI_XWARN) -Wsign-conversion $(CLI_INC) $< $(CLI_LIBS) -o $@
$(B)/cli/ldl-run-cxx17: $(CLI_DEP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -x c++ $(WARN) -Wshadow $(CLI_INC) $< -x none $(CLI_LIBS) -o $@
# the suite runs this one: any sanitizer report aborts the tool, and a test goes red
$(B)/cli/ldl-run-san: $(CLI_DEP)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O1 -g $(WARN) $(SAN) $(CLI_INC) $< $(CLI_LIBS) -o $@

test-cli: $(CLI_BUILDS)
	@printf '== the CLIs, shape: '; sh tests/cli/shape_test.sh
	@printf '== ldl-run, memory store: '; sh tests/cli/ldl_run_test.sh ./$(B)/cli/ldl-run-san memory
	@printf '== ldl-run, redis: '; tests/store/with_redis.sh sh tests/cli/ldl_run_test.sh ./$(B)/cli/ldl-run-san redis
	tests/store/with_pg.sh 'sh tests/cli/ldl_run_test.sh ./$(B)/cli/ldl-run-san pg'
	@printf '== ldl-run, C++17 build on redis: '; tests/store/with_redis.sh sh tests/cli/ldl_run_test.sh ./$(B)/cli/ldl-run-cxx17 redis
	@printf '== ldl-run scheduled jobs, sqlite: '; sh tests/cli/schedule_test.sh ./$(B)/cli/ldl-run-san sqlite
	@printf '== ldl-run scheduled jobs, redis: '; tests/store/with_redis.sh sh tests/cli/schedule_test.sh ./$(B)/cli/ldl-run-san redis
	@printf '== ldl-run scheduled jobs, etcd: '; tests/store/with_etcd.sh sh tests/cli/schedule_test.sh ./$(B)/cli/ldl-run-san etcd
	tests/store/with_pg.sh 'sh tests/cli/schedule_test.sh ./$(B)/cli/ldl-run-san pg'

# each broken copy of the tool must turn the Redis (or, where named, the PostgreSQL)
# suite red (not in `make test`; about 25 minutes); then each broken copy of
# tools/long-functions.sh or of the CLIs' shape must turn tests/cli/shape_test.sh red
.PHONY: test-cli-mutants
test-cli-mutants:
	@CC="$(CC)" sh tests/cli/mutants.sh $(B)/cli/mutants
	@sh tests/cli/shape_mutants.sh $(B)/cli/shape-mutants
