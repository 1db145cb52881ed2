# mk/chaos.mk -- the randomized fault campaign (issue 14; tests/chaos/, docs/TESTING.md
# "Chaos campaign", decision 0402). Real redis-server and PostgreSQL, started by the run; fenced
# writes into them through ldl_pg_fence / ldl_redis_fence, judged from the store's own log
# (issue 19, decision 0403).
#   make chaos        >= 1,000 fault rounds per store (CHAOS_ROUNDS), seed printed,
#                     replay with CHAOS_SEED=N
#   make test-chaos   the short slice `make test` runs (CHAOS_SLICE_ROUNDS per store)
#   failover rounds: PostgreSQL (decision 0404) and Redis Cluster (decision 0405), below;
#   make chaos-failover-control   the Redis Cluster rounds without epoch fences: must fail

TEST_TARGETS += test-chaos
DEPS_PKGS    += python3 redis-server libhiredis-dev postgresql libpq-dev
DEPS_CMDS    += python3

CHAOS_ROUNDS       ?= 1000
CHAOS_SLICE_ROUNDS ?= 80
# etcd (issue 21): a 3-member cluster in network namespaces (root), TTL 2 s: a round takes longer
DEPS_PKGS    += etcd-server etcd-client iproute2 libcurl4-openssl-dev libcjson-dev
DEPS_CMDS    += etcd etcdctl ip
CHAOS_ETCD_SLICE_ROUNDS ?= 30
CHAOS_BIN := $(B)/chaos/chaos

.PHONY: chaos test-chaos

# failover rounds (issue 20, decision 0404): the PostgreSQL campaign against a primary and a
# synchronous standby (tests/store/with_pg_standby.sh sync), this many unclean failovers (each
# after 7 ordinary fault rounds), then the controls and two failover controls. Prerequisites of
# chaos / test-chaos (so they run first, one at a time).
DEPS_PKGS  += procps
DEPS_CMDS  += ps
DEPS_FILES += /usr/lib/postgresql/*/bin/pg_basebackup
CHAOS_FAILOVERS       ?= 40
CHAOS_SLICE_FAILOVERS ?= 5
.PHONY: chaos-failover test-chaos-failover
chaos: chaos-failover
test-chaos: test-chaos-failover
chaos-failover: $(CHAOS_BIN)
	tests/chaos/run.sh pg-failover $(CHAOS_FAILOVERS) $(CHAOS_SEED)
	tests/chaos/run.sh redis-cluster-failover $(CHAOS_RC_FAILOVERS) $(CHAOS_SEED)

test-chaos-failover: $(CHAOS_BIN)
	tests/chaos/run.sh pg-failover $(CHAOS_SLICE_FAILOVERS) $(CHAOS_SEED)
	tests/chaos/run.sh redis-cluster-failover $(CHAOS_RC_SLICE_FAILOVERS) $(CHAOS_SEED)

# Redis Cluster failover rounds (issue 20, decision 0405): a 6-node cluster the campaign starts
# itself (3 masters + 1 replica each, node timeout 2 s), clients on the Cluster views, unclean
# failovers of the keys' master (SIGKILL or SIGSTOP), the controls with f and o.
DEPS_PKGS += redis-tools
DEPS_CMDS += redis-cli
CHAOS_RC_FAILOVERS       ?= 40
CHAOS_RC_SLICE_FAILOVERS ?= 3

# The control (not part of make test or make chaos): the campaign built against a copy of the
# Cluster header whose two set_epoch_fences calls are deleted (mk/failover_redis.mk's
# noepoch-headers); its run MUST fail with repeated or regressed fences or stale writes counted
# by the checker.
CHAOS_RC_CONTROL_FAILOVERS ?= 10
CHAOS_RC_CONTROL_SEED      ?= 20261206
.PHONY: chaos-failover-control
chaos-failover-control: noepoch-headers
	@rm -rf $(B)/chaos/control && mkdir -p $(B)/chaos/control
	$(CC) -std=c99 -O1 -g -I$(RC_NOEPOCH) -I. -I$(PG_INC) tests/chaos/chaos.c -lhiredis -lpq $(ET_LIBS) \
	  -o $(B)/chaos/control/chaos
	@CHAOS_BIN=$(B)/chaos/control/chaos tests/chaos/run.sh redis-cluster-failover $(CHAOS_RC_CONTROL_FAILOVERS) \
	  $(CHAOS_RC_CONTROL_SEED) >$(B)/chaos/control/run.log 2>&1; rc=$$?; \
	  grep -E "^chaos redis-cluster-failover:|failover rounds:" $(B)/chaos/control/run.log | grep -v ctl-; \
	  if [ $$rc = 0 ]; then echo "control: the campaign PASSED without epoch fences (it cannot fail?)"; exit 1; fi; \
	  if grep "/main: failover rounds:" $(B)/chaos/control/run.log | \
	     grep -Eq ", [1-9][0-9]* repeated or regressed fences|, [1-9][0-9]* stale writes accepted"; then \
	    echo "== chaos-failover-control: without epoch fences the campaign fails with repeated fences or stale writes, as it must"; \
	  else echo "control: the run failed, but not with repeated fences or stale writes (see $(B)/chaos/control/run.log)"; exit 1; fi

chaos: $(CHAOS_BIN)
	tests/chaos/run.sh redis $(CHAOS_ROUNDS) $(CHAOS_SEED)
	tests/chaos/run.sh pg $(CHAOS_ROUNDS) $(CHAOS_SEED)
	tests/chaos/run.sh etcd $(CHAOS_ROUNDS) $(CHAOS_SEED)

test-chaos: $(CHAOS_BIN)
	tests/chaos/run.sh redis $(CHAOS_SLICE_ROUNDS) $(CHAOS_SEED)
	tests/chaos/run.sh pg $(CHAOS_SLICE_ROUNDS) $(CHAOS_SEED)
	tests/chaos/run.sh etcd $(CHAOS_ETCD_SLICE_ROUNDS) $(CHAOS_SEED)

$(CHAOS_BIN): tests/chaos/chaos.c $(HDR) adapters/lite_di_lock_redis.h adapters/lite_di_lock_pg.h \
              tests/store/fenced.h tests/store/redis_server.h tests/store/pg_common.h \
              adapters/lite_di_lock_etcd.h adapters/lite_di_lock_redis_cluster.h \
              tests/store/redis_cluster_server.h
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) -I. -I$(PG_INC) $< -lhiredis -lpq $(ET_LIBS) -o $@
