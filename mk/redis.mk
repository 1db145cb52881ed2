# mk/redis.mk -- the Redis adapter (adapters/lite_di_lock_redis.h). The shared store
# conformance body on MemoryStore is in mk/store.mk. Every Redis suite starts its own redis-server(s) on
# 127.0.0.1 on free ports inside tests/store/with_redis.sh (temp dir, cleanup trap).
#   make test-redis          compile checks + adapter suite + fault suite + non-blocking suite
#                            + fixes suite + election suite (owner/inspect, ride-out, campaign)
#                            + verbs suite (live reconnect/rebind/drop, nonce replay, errors as values)
#                            + leader and game-server smoke tests
#   make mutants-redis       the adapters' mutant lists (several minutes; not in make test)
#   make examples-redis      build examples/redis_leader.c and examples/game_server.c (no server needed)

TEST_TARGETS    += test-redis
EXAMPLE_TARGETS += examples-redis
DEPS_PKGS       += redis-server redis-tools libhiredis-dev python3
DEPS_CMDS       += redis-server python3
DEPS_FILES      += /usr/include/hiredis/hiredis.h

RD_CFLAGS = -I.
RD_LIBS   = -lhiredis
RD_HDRS   = $(HDR) adapters/lite_di_lock_redis.h
RD_THDRS  = $(RD_HDRS) tests/store/fenced.h tests/store/conformance.h tests/store/redis_server.h
RD_SUITES = redis_adapter redis_faults redis_async redis_fixes redis_election redis_verbs
RD_BUILDS = $(B)/redis/build_c99 $(B)/redis/build_c11 $(B)/redis/build_clang \
            $(B)/redis/build_cxx17 $(B)/redis/build_static $(B)/redis/build_noasync

.PHONY: test-redis examples-redis
test-redis: $(RD_BUILDS) $(addprefix $(B)/redis/,$(RD_SUITES)) $(B)/redis/redis_adapter_vg $(B)/redis/redis_leader \
            $(B)/redis/game_server
	@for b in $(RD_BUILDS); do ./$$b || exit 1; done
	tests/store/with_redis.sh ./$(B)/redis/redis_adapter
	tests/store/with_redis.sh ./$(B)/redis/redis_faults
	tests/store/with_redis.sh ./$(B)/redis/redis_async
	tests/store/with_redis.sh ./$(B)/redis/redis_fixes
	tests/store/with_redis.sh ./$(B)/redis/redis_election
	tests/store/with_redis.sh ./$(B)/redis/redis_verbs
	tests/store/with_redis.sh valgrind -q --error-exitcode=9 --leak-check=full \
	  --errors-for-leak-kinds=definite ./$(B)/redis/redis_adapter_vg
	tests/store/with_redis.sh tests/store/redis_leader_smoke.sh ./$(B)/redis/redis_leader
	tests/store/with_redis.sh tests/store/redis_game_smoke.sh ./$(B)/redis/game_server

examples-redis: $(B)/redis/redis_leader $(B)/redis/game_server

# the suites: C99 with ASan + UBSan
$(B)/redis/redis_%: tests/store/redis_%.c $(RD_THDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

# the verbs suite also starts tests/store/redis_fake_node.py (python3) for a replaying node
$(B)/redis/redis_verbs: tests/store/redis_fake.h tests/store/redis_locks.h tests/store/redis_fake_node.py

# the election suite also runs the owner/inspect checks through the Redis Cluster view
$(B)/redis/redis_election: adapters/lite_di_lock_redis_cluster.h tests/store/redis_cluster_server.h

# memcheck once, without the sanitizers
$(B)/redis/redis_adapter_vg: tests/store/redis_adapter.c $(RD_THDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -O0 -g $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

# the adapter in every language and option it claims (runs without a server)
$(B)/redis/build_c99: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 $(WARN) -Wconversion -Wshadow -Wstrict-prototypes $(RD_CFLAGS) $< $(RD_LIBS) -o $@
$(B)/redis/build_c11: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c11 $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@
$(B)/redis/build_clang: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CLANG) -std=c99 $(WARN) -Wconversion -Wshadow -Wsign-conversion $(RD_CFLAGS) $< $(RD_LIBS) -o $@
$(B)/redis/build_cxx17: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CXX) -std=c++17 -x c++ $(WARN) -Wshadow $(RD_CFLAGS) $< -x none $(RD_LIBS) -o $@
$(B)/redis/build_static: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -DLDL_STATIC $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

$(B)/redis/build_noasync: tests/store/redis_build.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -DLDL_NO_ASYNC $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

$(B)/redis/redis_leader: examples/redis_leader.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -O2 $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

$(B)/redis/game_server: examples/game_server.c $(RD_HDRS)
	@mkdir -p $(B)/redis
	$(CC) -std=c99 -O2 $(WARN) $(RD_CFLAGS) $< $(RD_LIBS) -o $@

# mutation controls of the two Redis headers (tests/mutants/redis.txt, redis_cluster.txt;
# runner tests/mutants/adapters.sh): every mutant must be killed. Several minutes: not in
# TEST_TARGETS.
.PHONY: mutants-redis
mutants-redis:
	sh tests/mutants/adapters.sh tests/mutants/redis.txt
	sh tests/mutants/adapters.sh tests/mutants/redis_cluster.txt
