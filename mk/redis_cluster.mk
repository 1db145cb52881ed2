# mk/redis_cluster.mk -- Redis Cluster routing (adapters/lite_di_lock_redis_cluster.h, issue 13).
# The suite creates its own 6-node cluster (3 masters + 1 replica each) on 127.0.0.1 with
# `redis-cli --cluster create` inside tests/store/with_redis_cluster.sh (temp dir, cleanup trap).
#   make test-redis-cluster   compile checks (C99, clang, C++17, LDL_STATIC, LDL_NO_ASYNC)
#                             + the hostile-node suite (tests/store/redis_fake_node.py, python3; ~5 s)
#                             + the cluster suite (about 60 s: the issue 24 cases, three coverage rounds)
#   make bench-redis-cluster  lifecycles/s over the cluster vs one Redis (not part of make test)

TEST_TARGETS += test-redis-cluster
DEPS_PKGS    += redis-server redis-tools libhiredis-dev
DEPS_CMDS    += redis-server redis-cli
DEPS_PKGS    += python3
DEPS_CMDS    += python3

RC_HDRS   = $(HDR) adapters/lite_di_lock_redis.h adapters/lite_di_lock_redis_cluster.h
RC_THDRS  = $(RC_HDRS) tests/store/fenced.h tests/store/redis_server.h
RC_BUILDS = $(B)/rcluster/build_c99 $(B)/rcluster/build_clang $(B)/rcluster/build_cxx17 \
            $(B)/rcluster/build_static $(B)/rcluster/build_noasync

.PHONY: test-redis-cluster bench-redis-cluster
test-redis-cluster: $(RC_BUILDS) $(B)/rcluster/redis_cluster $(B)/rcluster/redis_cluster_hostile
	@for b in $(RC_BUILDS); do ./$$b || exit 1; done
	tests/store/with_redis_cluster.sh ./$(B)/rcluster/redis_cluster_hostile
	tests/store/with_redis_cluster.sh ./$(B)/rcluster/redis_cluster

# a hostile node (tests/store/redis_fake_node.py) and a silent resolver (the suite's own getaddrinfo)
$(B)/rcluster/redis_cluster_hostile: tests/store/redis_cluster_hostile.c $(RC_THDRS) tests/store/redis_fake.h tests/store/redis_locks.h \
                                     tests/store/redis_fake_node.py
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< -lhiredis -ldl -o $@

$(B)/rcluster/redis_cluster: tests/store/redis_cluster.c $(RC_THDRS)
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< -lhiredis -o $@

$(B)/rcluster/build_c99: tests/store/redis_cluster_build.c $(RC_HDRS)
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 $(WARN) -Wconversion -Wshadow -Wstrict-prototypes -I. $< -lhiredis -o $@
$(B)/rcluster/build_clang: tests/store/redis_cluster_build.c $(RC_HDRS)
	@mkdir -p $(B)/rcluster
	$(CLANG) -std=c99 $(WARN) -Wconversion -Wshadow -Wsign-conversion -I. $< -lhiredis -o $@
$(B)/rcluster/build_cxx17: tests/store/redis_cluster_build.c $(RC_HDRS)
	@mkdir -p $(B)/rcluster
	$(CXX) -std=c++17 -x c++ $(WARN) -Wshadow -I. $< -x none -lhiredis -o $@
$(B)/rcluster/build_static: tests/store/redis_cluster_build.c $(RC_HDRS)
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -DLDL_STATIC $(WARN) -I. $< -lhiredis -o $@
$(B)/rcluster/build_noasync: tests/store/redis_cluster_build.c $(RC_HDRS)
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -DLDL_NO_ASYNC $(WARN) -I. $< -lhiredis -o $@

bench-redis-cluster: $(B)/rcluster/bench_redis_cluster
	tests/store/with_redis_cluster.sh ./$(B)/rcluster/bench_redis_cluster

$(B)/rcluster/bench_redis_cluster: bench/bench_redis_cluster.c $(RC_THDRS)
	@mkdir -p $(B)/rcluster
	$(CC) -std=c99 -O2 $(WARN) -I. $< -lhiredis -o $@
