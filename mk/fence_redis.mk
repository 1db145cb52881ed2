# mk/fence_redis.mk -- issue 19, item 2: fenced writes through the Redis adapter
# (ldl_redis_fence, ldl_redis_async_fence) and the Redis Cluster view
# (ldl_redis_cluster_fence). Each suite starts its own real servers on 127.0.0.1:
#   make test-fence-redis   tests/store/redis_fence.c (one redis-server, ~5 s),
#                           tests/store/redis_reply_bounds.c (the reply bounds, no sanitizers, 1 s) and
#                           tests/store/redis_fence_cluster.c (a 6-node cluster, ~15 s),
#                           both C99 with ASan + UBSan; the fence script under valgrind once
#   make mutants-fence-redis  17 mutants of the fenced writes, each must fail a suite (not in make test)
# Part of make test-fence (FENCE_TARGETS, mk/fence.mk). This fragment is read before
# mk/redis.mk (sorted order), so the prerequisites name the headers themselves; the
# recipes use RD_LIBS / RD_CFLAGS, which are expanded when they run.

FENCE_TARGETS += test-fence-redis
DEPS_PKGS     += redis-server redis-tools libhiredis-dev valgrind
DEPS_CMDS     += redis-server redis-cli valgrind
DEPS_FILES    += /usr/include/hiredis/hiredis.h

FR_HDRS  = $(HDR) adapters/lite_di_lock_redis.h adapters/lite_di_lock_redis_cluster.h
FR_THDRS = $(FR_HDRS) tests/store/fenced.h tests/store/redis_server.h tests/store/redis_cluster_server.h

.PHONY: test-fence-redis
test-fence-redis: $(B)/fence_redis/redis_fence $(B)/fence_redis/redis_fence_vg $(B)/fence_redis/redis_fence_cluster \
                  $(B)/fence_redis/redis_reply_bounds
	tests/store/with_redis.sh ./$(B)/fence_redis/redis_fence
	tests/store/with_redis.sh ./$(B)/fence_redis/redis_reply_bounds
	tests/store/with_redis.sh valgrind -q --error-exitcode=9 --leak-check=full \
	  --errors-for-leak-kinds=definite --show-possibly-lost=no ./$(B)/fence_redis/redis_fence_vg
	tests/store/with_redis_cluster.sh ./$(B)/fence_redis/redis_fence_cluster

$(B)/fence_redis/redis_fence: tests/store/redis_fence.c $(FR_THDRS)
	@mkdir -p $(B)/fence_redis
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< $(RD_LIBS) -o $@

# memcheck once, without the sanitizers (the replies handed out are the caller's to free)
$(B)/fence_redis/redis_fence_vg: tests/store/redis_fence.c $(FR_THDRS)
	@mkdir -p $(B)/fence_redis
	$(CC) -std=c99 -O0 -g $(WARN) -I. $< $(RD_LIBS) -o $@

# the reply bounds (decision 0119): no sanitizers, so the RSS it measures is the adapter's
$(B)/fence_redis/redis_reply_bounds: tests/store/redis_reply_bounds.c $(FR_THDRS)
	@mkdir -p $(B)/fence_redis
	$(CC) -std=c99 -O1 -g $(WARN) -I. $< $(RD_LIBS) -o $@

$(B)/fence_redis/redis_fence_cluster: tests/store/redis_fence_cluster.c $(FR_THDRS)
	@mkdir -p $(B)/fence_redis
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< $(RD_LIBS) -o $@

# mutation controls of the fenced writes: 20 mutants of the two headers, each must turn
# redis_fence.c or redis_fence_cluster.c red (a few minutes; not part of make test)
.PHONY: mutants-fence-redis
mutants-fence-redis:
	sh tests/store/redis_fence_mutants.sh
