# mk/pg.mk -- the PostgreSQL adapter (adapters/lite_di_lock_pg.h): its tests
# against a throwaway real server (tests/store/with_pg.sh) and its example.
#   make test-pg       build everything, start PostgreSQL once, run every PG suite
#   make examples-pg   build examples/pg_leader.c (no server needed)
#   make mutants-pg    every mutant of tests/mutants/pg.txt killed by the PG suites
#                      (tests/store/pg_mutants.sh; minutes: not in make test)

TEST_TARGETS    += test-pg
EXAMPLE_TARGETS += examples-pg
DEPS_PKGS       += postgresql libpq-dev pgbouncer
DEPS_CMDS       += runuser
DEPS_FILES      += /usr/include/postgresql/libpq-fe.h /usr/lib/postgresql/*/bin/initdb /usr/sbin/pgbouncer

# pg_config may be missing from PATH; Debian's libpq-dev puts the headers here
PG_INC   := $(or $(shell pg_config --includedir 2>/dev/null),/usr/include/postgresql)
PG_CFLAGS = -I. -I$(PG_INC)
PG_LIBS   = -lpq
PG_HDRS   = $(HDR) adapters/lite_di_lock_pg.h
PG_THDRS  = $(PG_HDRS) tests/store/fenced.h tests/store/conformance.h tests/store/pg_common.h
PG_SUITES = pg_names pg_grants pg_rebind pg_conformance pg_contention pg_faults pg_async pg_hostile pg_election
PG_POOLS  = tx1 tx2rr session session1
PG_BUILDS = $(B)/pg/build_c99 $(B)/pg/build_clang $(B)/pg/build_cxx17 $(B)/pg/build_static $(B)/pg/build_noasync

.PHONY: test-pg examples-pg mutants-pg
test-pg: $(PG_BUILDS) $(addprefix $(B)/pg/,$(PG_SUITES)) $(B)/pg/pg_pooler $(B)/pg/pg_names_vg $(B)/pg/pg_hostile_vg $(B)/pg/pg_leader
	@for b in $(PG_BUILDS); do ./$$b || exit 1; done
	tests/store/with_pg.sh $(addprefix ./$(B)/pg/,$(PG_SUITES)) \
	  $(foreach m,$(PG_POOLS),'tests/store/with_pgbouncer.sh $(m) ./$(B)/pg/pg_pooler') \
	  'valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite ./$(B)/pg/pg_names_vg' \
	  'valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite ./$(B)/pg/pg_hostile_vg' \
	  'tests/store/pg_leader_smoke.sh ./$(B)/pg/pg_leader'

examples-pg: $(B)/pg/pg_leader

mutants-pg:
	@CC="$(CC)" B="$(B)" sh tests/mutants/adapters.sh tests/mutants/pg.txt

# the suites: C99 with ASan + UBSan
$(B)/pg/pg_%: tests/store/pg_%.c $(PG_THDRS)
	@mkdir -p $(B)/pg
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) $(PG_CFLAGS) $< $(PG_LIBS) -o $@

# memcheck once, without the sanitizers: the synchronous view (pg_names) and
# init's table checks with the non-blocking view (pg_hostile)
$(B)/pg/pg_%_vg: tests/store/pg_%.c $(PG_THDRS)
	@mkdir -p $(B)/pg
	$(CC) -std=c99 -O0 -g $(WARN) $(PG_CFLAGS) $< $(PG_LIBS) -o $@

# the adapter in every language and option it claims (runs without a server)
$(call LDL_BUILD_MATRIX,$(B)/pg/build,tests/store/pg_build.c,$(PG_HDRS),PG_CFLAGS,PG_LIBS,c99 clang cxx17 static noasync)
$(B)/pg/pg_leader: examples/pg_leader.c $(PG_HDRS)
	@mkdir -p $(B)/pg
	$(CC) -std=c99 -O2 $(WARN) $(PG_CFLAGS) $< $(PG_LIBS) -o $@

