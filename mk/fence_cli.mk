# mk/fence_cli.mk -- ldl-fence (issue 19 item 3): ldl-run's companion for shell jobs,
# a fenced write to PostgreSQL (one transaction) or Redis (the adapter's script).
#   make fence-cli       build build/cli/ldl-fence (also part of `make examples`)
#   make test-fence-cli  strict builds (gcc, clang -Wconversion -Wsign-conversion,
#                        C++17), then tests/cli/ldl_fence_test.sh with an ASan+UBSan
#                        build against a throwaway PostgreSQL and redis-server, with
#                        ldl-run (mk/cli.mk's build) handing out the fences; then
#                        the same suite with the C++17 build (about a minute in
#                        all; part of make test-fence)
# make install installs ldl-fence beside ldl-run (mk/install.mk, pkg/install.sh).
# Decision records: docs/decisions/0704-ldl-fence.md, 0713 (the write through the store's
# ldl_view, one desc).

FENCE_TARGETS   += test-fence-cli
EXAMPLE_TARGETS += fence-cli
DEPS_PKGS  += redis-server redis-tools libhiredis-dev postgresql libpq-dev postgresql-client python3 coreutils time \
              libpg-query-dev util-linux iproute2
DEPS_CMDS  += redis-server redis-cli psql python3 timeout unshare ip
DEPS_FILES += /usr/include/hiredis/hiredis.h /usr/include/postgresql/libpq-fe.h /usr/include/pg_query.h
# the gate reads FILE.sql with PostgreSQL's own parser (decision 0705), linked statically:
# Debian ships libpg_query's shared object only in the -dev package, which an installed
# ldl-fence must not need at run time
FENCE_CLI_LIBS = $(CLI_LIBS) -l:libpg_query.a

FENCE_CLI_DEP := cli/ldl-fence.c cli/ldl_cli.h $(HDR) adapters/lite_di_lock_redis.h adapters/lite_di_lock_pg.h \
                 adapters/lite_di_lock_view.h
FENCE_CLI_BUILDS := $(B)/cli/ldl-fence $(B)/cli/ldl-fence-clang $(B)/cli/ldl-fence-cxx17 $(B)/cli/ldl-fence-san

.PHONY: fence-cli test-fence-cli
fence-cli: $(B)/cli/ldl-fence

# (CLI_INC, CLI_LIBS, CLI_XWARN: mk/cli.mk)
$(B)/cli/ldl-fence: $(FENCE_CLI_DEP)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) $(CLI_XWARN) $(CLI_INC) $< $(FENCE_CLI_LIBS) -o $@
$(B)/cli/ldl-fence-clang: $(FENCE_CLI_DEP)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O2 $(WARN) $(CLI_XWARN) -Wsign-conversion $(CLI_INC) $< $(FENCE_CLI_LIBS) -o $@
$(B)/cli/ldl-fence-cxx17: $(FENCE_CLI_DEP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -x c++ $(WARN) -Wshadow $(CLI_INC) $< -x none $(FENCE_CLI_LIBS) -o $@
# the suite runs this one: any sanitizer report aborts the tool, and a test goes red
$(B)/cli/ldl-fence-san: $(FENCE_CLI_DEP)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O1 -g $(WARN) $(SAN) $(CLI_INC) $< $(FENCE_CLI_LIBS) -o $@

# a test build whose gate refuses nothing: the suite reaches the backstop (exit 70) with it
$(B)/cli/ldl-fence-nogate: $(FENCE_CLI_DEP)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O1 -g $(WARN) $(SAN) -DLDL_FENCE_TEST_NO_GATE $(CLI_INC) $< $(FENCE_CLI_LIBS) -o $@

test-fence-cli: $(FENCE_CLI_BUILDS) $(B)/cli/ldl-fence-nogate $(B)/cli/ldl-run
	NOGATE=$(CURDIR)/$(B)/cli/ldl-fence-nogate tests/store/with_pg.sh 'tests/store/with_redis.sh sh tests/cli/ldl_fence_test.sh ./$(B)/cli/ldl-fence-san ./$(B)/cli/ldl-run'
	@echo '== ldl-fence, the C++17 build:'
	tests/store/with_pg.sh 'tests/store/with_redis.sh sh tests/cli/ldl_fence_test.sh ./$(B)/cli/ldl-fence-cxx17 ./$(B)/cli/ldl-run'

# each broken copy of ldl-fence must turn the suite red (not in `make test`;
# about 70 s per mutant, 26 mutants; ONLY=REGEX picks some)
.PHONY: test-fence-cli-mutants
test-fence-cli-mutants: $(B)/cli/ldl-run
	@CLANG="$(CLANG)" ONLY="$(ONLY)" sh tests/cli/ldl_fence_mutants.sh $(B)/cli/fence-mutants ./$(B)/cli/ldl-run
