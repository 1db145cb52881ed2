# mk/failover_redis.mk -- issue 20, Redis Cluster: fences across unclean failovers.
#   make test-failover-redis   tests/store/redis_failover.c inside tests/store/with_redis_cluster.sh:
#                              a 6-node cluster (3 masters + 1 replica each, node timeout 2 s),
#                              LDL_FAILOVER_ROUNDS (default 2) unclean failovers with today's
#                              v0.2 grant script (repeats counted and printed) and as many with
#                              the epoch-ordered fences (0 repeated or regressed, else it fails);
#                              plus the epoch edges and the ACL line on a one-node cluster (~70 s)
#   LDL_FAILOVER_ROUNDS=15 make test-failover-redis   the docs' figure (docs/TESTING.md)
#   make failover-redis-control  the suite against a Cluster header without epoch fences: must fail

FAILOVER_TARGETS += test-failover-redis
DEPS_PKGS        += redis-server redis-tools libhiredis-dev
DEPS_CMDS        += redis-server redis-cli

.PHONY: test-failover-redis
test-failover-redis: $(B)/rcluster/redis_failover
	tests/store/with_redis_cluster.sh ./$(B)/rcluster/redis_failover

$(B)/rcluster/redis_failover: tests/store/redis_failover.c $(HDR) adapters/lite_di_lock_redis.h \
                              adapters/lite_di_lock_redis_cluster.h tests/store/fenced.h \
                              tests/store/redis_server.h tests/store/redis_cluster_server.h
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< -lhiredis -o $@

# The control headers: a copy of the Cluster header whose two set_epoch_fences calls are
# deleted (grants without epoch fences, as v0.2), beside a copy of the Redis header, in
# $(RC_NOEPOCH)/adapters. The two controls (failover-redis-control here, chaos-failover-control
# in mk/chaos.mk) build against them with -I$(RC_NOEPOCH) first.
RC_NOEPOCH = $(B)/noepoch
.PHONY: noepoch-headers
noepoch-headers:
	@rm -rf $(RC_NOEPOCH) && mkdir -p $(RC_NOEPOCH)/adapters
	sed -e 's/ldl_redis_set_epoch_fences(&n->_r, 1);/(void)0;/' \
	    -e 's/ldl_redis_async_set_epoch_fences(&n->_ra, 1);/(void)0;/' \
	    adapters/lite_di_lock_redis_cluster.h >$(RC_NOEPOCH)/adapters/lite_di_lock_redis_cluster.h
	@if grep -q set_epoch_fences $(RC_NOEPOCH)/adapters/lite_di_lock_redis_cluster.h; then \
	  echo "control: the calls were not removed"; exit 1; fi
	cp adapters/lite_di_lock_redis.h $(RC_NOEPOCH)/adapters/

# The control (not part of make test): the same suite built against the control headers must
# FAIL its after phase (the repeats come back); this target passes only when it does.
.PHONY: failover-redis-control
failover-redis-control: noepoch-headers
	@rm -rf $(B)/rcluster/control && mkdir -p $(B)/rcluster/control
	$(CC) -std=c99 -O1 -g -I$(RC_NOEPOCH) -I. tests/store/redis_failover.c -lhiredis \
	  -o $(B)/rcluster/control/redis_failover
	@if LDL_FAILOVER_TESTS=after LDL_FAILOVER_ROUNDS=1 tests/store/with_redis_cluster.sh \
	     ./$(B)/rcluster/control/redis_failover; then \
	  echo "control: the suite PASSED without epoch fences (it cannot fail?)"; exit 1; \
	else echo "== failover-redis-control: without epoch fences the suite fails, as it must"; fi
