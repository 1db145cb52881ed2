# mk/contract.mk -- the adapter contract suite (issue 31 item 3; tests/store/contract/):
# ONE test body (contract.h) compiled once per adapter, each program running it in both views
# (the synchronous ldl_store and the non-blocking ldl_async_store) against the real server,
# started by the adapter's own harness, and the adapter's hostile fake where the contract
# needs a reply a real server never sends. The checklist it checks is docs/adapters.md's.
#   make test-contract   every adapter, one after the other (about a minute); prints one
#                        "ADAPTER: N passed, M failed" line per adapter (cases; an item that
#                        cannot apply to an adapter is printed "n/a: reason" in its log and
#                        counted in neither), fails when any M > 0 and then prints that log
#   make mutants-contract  tests/store/contract/mutants.txt: every planted break of an adapter
#                        turns its contract line red (minutes; not in make test)
# Built without sanitizers: the reply tree's RSS figure is the adapter's, not ASan's.
# Decision record: docs/decisions/0406-one-contract-suite.md.

TEST_TARGETS += test-contract
DEPS_PKGS    += redis-server redis-tools libhiredis-dev postgresql libpq-dev etcd-server \
                libcurl4-openssl-dev libcjson-dev libsqlite3-dev sqlite3 python3
DEPS_CMDS    += redis-server etcd python3
DEPS_FILES   += /usr/include/hiredis/hiredis.h /usr/include/postgresql/libpq-fe.h \
                /usr/include/cjson/cJSON.h /usr/include/sqlite3.h

CT_PG_INC := $(or $(shell pg_config --includedir 2>/dev/null),/usr/include/postgresql)
CT_HDRS    = $(HDR) tests/store/fenced.h tests/store/contract/contract.h adapters/lite_di_lock_view.h
CT_CC      = $(CC) -std=c99 -O1 -g $(WARN) -I.
CT_ADAPTERS = sqlite redis redis_cluster etcd pg
# how each adapter's program is run: its harness (the real server) and the program
CT_RUN.sqlite        =
CT_RUN.redis         = tests/store/with_redis.sh
CT_RUN.redis_cluster = tests/store/with_redis_cluster.sh
CT_RUN.etcd          = tests/store/with_etcd.sh
CT_RUN.pg            = LDL_PG_WAL_LEVEL=logical tests/store/with_pg_standby.sh sync

.PHONY: test-contract mutants-contract
test-contract: $(addprefix $(B)/contract/contract_,$(CT_ADAPTERS)) $(B)/cli/ldl-run-san
	@fail=0; for a in $(CT_ADAPTERS); do \
	  case $$a in \
	    sqlite) run="";; redis) run="$(CT_RUN.redis)";; redis_cluster) run="$(CT_RUN.redis_cluster)";; \
	    etcd) run="$(CT_RUN.etcd)";; pg) run="env $(CT_RUN.pg)";; esac; \
	  LDL_CONTRACT_CLI=$(CURDIR)/$(B)/cli/ldl-run-san $$run ./$(B)/contract/contract_$$a > $(B)/contract/$$a.log 2>&1; rc=$$?; \
	  line=$$(grep -E "^$$a: [0-9]+ passed, [0-9]+ failed$$" $(B)/contract/$$a.log | tail -n 1); \
	  if [ -z "$$line" ]; then line="$$a: 0 passed, 1 failed (no summary line; exit $$rc)"; rc=1; fi; \
	  echo "$$line"; \
	  if [ $$rc != 0 ]; then cat $(B)/contract/$$a.log; fail=1; fi; \
	done; exit $$fail

$(B)/contract/contract_sqlite: tests/store/contract/contract_sqlite.c $(CT_HDRS) tests/store/sqlite_common.h adapters/lite_di_lock_sqlite.h
	@mkdir -p $(@D)
	$(CT_CC) $< -lsqlite3 -o $@
$(B)/contract/contract_redis: tests/store/contract/contract_redis.c $(CT_HDRS) tests/store/redis_server.h adapters/lite_di_lock_redis.h
	@mkdir -p $(@D)
	$(CT_CC) $< -lhiredis -o $@
$(B)/contract/contract_redis_cluster: tests/store/contract/contract_redis_cluster.c $(CT_HDRS) tests/store/redis_server.h \
                                      tests/store/redis_fake.h tests/store/redis_cluster_server.h \
                                      adapters/lite_di_lock_redis.h adapters/lite_di_lock_redis_cluster.h
	@mkdir -p $(@D)
	$(CT_CC) $< -lhiredis -o $@
$(B)/contract/contract_etcd: tests/store/contract/contract_etcd.c $(CT_HDRS) tests/store/etcd_common.h adapters/lite_di_lock_etcd.h \
                             tests/store/etcd_fake.py tests/store/contract/etcd_padded.py
	@mkdir -p $(@D)
	$(CT_CC) $< -lcurl -lcjson -o $@
$(B)/contract/contract_pg: tests/store/contract/contract_pg.c $(CT_HDRS) tests/store/pg_common.h adapters/lite_di_lock_pg.h
	@mkdir -p $(@D)
	$(CT_CC) -I$(CT_PG_INC) $< -lpq -o $@

mutants-contract:
	@B="$(B)" sh tests/store/contract/mutants.sh tests/store/contract/mutants.txt
