# mk/elector.mk -- examples/elector.c: leader election in campaign mode over Redis (hiredis),
# every ldl_event printed; --memory runs three electors on one MemoryStore with a simulated
# clock (no Redis).
#   make examples-elector    build build/examples/elector (gcc) and a clang build; runs nothing
#   make test-elector        both builds, then tests/store/elector_smoke.sh: three electors
#                            against a throwaway redis-server (kill -9 and SIGSTOP the
#                            leader, fences never go backwards, SIGINT exits 0), and --memory

TEST_TARGETS    += test-elector
EXAMPLE_TARGETS += examples-elector
DEPS_PKGS       += redis-server redis-tools libhiredis-dev
DEPS_CMDS       += redis-server redis-cli
DEPS_FILES      += /usr/include/hiredis/hiredis.h

EL_HDRS = $(HDR) adapters/lite_di_lock_redis.h

.PHONY: examples-elector test-elector
examples-elector: $(B)/examples/elector $(B)/elector/elector_clang

test-elector: examples-elector
	tests/store/with_redis.sh tests/store/elector_smoke.sh ./$(B)/examples/elector

# an explicit rule: the core's examples pattern rule would build it without -lhiredis
$(B)/examples/elector: examples/elector.c $(EL_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -I. $< -lhiredis -o $@

# clang too (the example promises a clean build with both)
$(B)/elector/elector_clang: examples/elector.c $(EL_HDRS)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -O2 $(WARN) -I. $< -lhiredis -o $@
