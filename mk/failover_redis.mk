# mk/failover_redis.mk -- issue 20, Redis Cluster: fences across unclean failovers.
#   make test-failover-redis   tests/store/redis_failover.c inside tests/store/with_redis_cluster.sh:
#                              a 6-node cluster (3 masters + 1 replica each, node timeout 2 s),
#                              LDL_FAILOVER_ROUNDS (default 2) unclean failovers with today's
#                              v0.2 grant script (repeats counted and printed) and as many with
#                              the epoch-ordered fences (0 repeated or regressed, else it fails);
#                              plus the epoch edges and the ACL line on a one-node cluster (~70 s)
#   LDL_FAILOVER_ROUNDS=25 make test-failover-redis   the docs' figure (docs/TESTING.md)

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
