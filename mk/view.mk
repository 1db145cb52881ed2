# mk/view.mk -- the one interface every adapter fills (adapters/lite_di_lock_view.h; issue 31
# item 2 and "Measure").
#   make test-view     tests/store/view_test.c against every REAL store, each view (sync and
#                      non-blocking): MemoryStore, SQLite (disk), Redis, Redis Cluster (6 nodes),
#                      PostgreSQL, etcd; one "N passed, M failed" line per store
#   make mutants-view  tests/mutants/view.txt: every mutant of the view header killed by
#                      test-view's suite; tests/mutants/view_example.txt: every mutant of
#                      examples/epoll_leases.c killed by its Redis smokes (about 6 min; not
#                      in make test)
# Decision record: docs/decisions/0020-one-view.md.

TEST_TARGETS += test-view
DEPS_PKGS    += redis-server redis-tools libhiredis-dev postgresql libpq-dev etcd-server \
                libcurl4-openssl-dev libcjson-dev libsqlite3-dev python3

VW_HDRS  = $(HDR) adapters/lite_di_lock_view.h adapters/lite_di_lock_redis.h adapters/lite_di_lock_redis_cluster.h \
           adapters/lite_di_lock_pg.h adapters/lite_di_lock_etcd.h adapters/lite_di_lock_sqlite.h
VW_THDRS = $(VW_HDRS) tests/store/fenced.h tests/store/redis_server.h tests/store/redis_cluster_server.h \
           tests/store/pg_common.h tests/store/etcd_common.h tests/store/sqlite_common.h
VW_CFLAGS = -I. -I$(PG_INC)
VW_LIBS   = -lhiredis -lpq -lcurl -lcjson -lsqlite3
VW_RUN    = sh tests/store/view_run.sh

.PHONY: test-view mutants-view
VW_BUILDS = $(addprefix $(B)/view/build_,c99 c11 clang cxx17 static)
test-view: $(VW_BUILDS) $(B)/view/view_test $(B)/view/epoll_leases $(B)/view/epoll_leases_r1
	@for b in $(VW_BUILDS); do printf '== view %-12s ' "$$(basename $$b):"; ./$$b || exit 1; done
	@$(VW_RUN) ./$(B)/view/view_test

# the header with every adapter in every language and option it claims (no server)
$(call LDL_BUILD_MATRIX,$(B)/view/build,tests/store/view_build.c,$(VW_HDRS),VW_CFLAGS,VW_LIBS,c99 c11 clang cxx17 static)

# C99 with ASan + UBSan
$(B)/view/view_test: tests/store/view_test.c $(VW_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) $(VW_CFLAGS) $< $(VW_LIBS) -o $@

mutants-view:
	@CC="$(CC)" B="$(B)" sh tests/mutants/adapters.sh tests/mutants/view.txt
	@CC="$(CC)" B="$(B)" sh tests/mutants/adapters.sh tests/mutants/view_example.txt

# examples/epoll_leases.c: 1,000 leases on one network store from one epoll loop (its smoke
# runs per store inside test-view: tests/store/view_test.c's "example" mode)
EXAMPLE_TARGETS += examples-view
.PHONY: examples-view
examples-view: $(B)/view/epoll_leases
$(B)/view/epoll_leases: examples/epoll_leases.c $(VW_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) $(VW_CFLAGS) $< $(VW_LIBS) -o $@
# the same with a read limit of ONE read per pump: edge-triggered epoll must still hold every lease
$(B)/view/epoll_leases_r1: examples/epoll_leases.c $(VW_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 -DLDL_REDIS_PUMP_READS=1 $(WARN) $(VW_CFLAGS) $< $(VW_LIBS) -o $@

# ---------------------------------------------------------------- bench (not in make test)
# bench/view.sh: the Redis and PostgreSQL pipelined rows direct vs through the view, side by
# side in one run (bench/bench_view.c), and examples/epoll_leases.c's frame CPU per store
.PHONY: bench-view
bench-view: $(B)/bench/bench_view $(B)/view/epoll_leases $(B)/view/view_test
	sh bench/view.sh $(B)/bench
$(B)/bench/bench_view: bench/bench_view.c $(VW_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L $(WARN) $(VW_CFLAGS) $< $(VW_LIBS) -o $@
