# mk/etcd_cluster.mk -- the etcd store over three members (issue 21): leader kills, paused and
# slow members, every member restarted on its WAL, and a real network partition.
#   make test-etcd-cluster   tests/store/etcd_cluster.c (C99, ASan + UBSan) twice, ~2 min:
#     cluster    3 members on 127.0.0.1 (tests/store/with_etcd_cluster.sh): control,
#                leaderkill, pause, slow, restart (~65 s)
#     partition  3 members in their own network namespaces (with_etcd_cluster.sh --netns,
#                root; namespaces, bridges and veths created and removed by the run): the
#                leader's, then a follower's peer cable pulled under a held lock, a client
#                that fails over to the majority, the planted control (~50 s)
#   Each prints its "figure:" lines and its "N passed, N failed" line (the whole log on a
#   failure); LDL_ETCD_TRACE=1 adds one line per renew and per fault.
# Registered with the `test-etcd` umbrella (mk/etcd.mk runs $(ETCD_TARGETS)).
# Decision records: docs/decisions/1006-1008. Details: docs/etcd-cluster.md.

ETCD_TARGETS += test-etcd-cluster
DEPS_PKGS    += etcd-server etcd-client iproute2 libcurl4-openssl-dev libcjson-dev
DEPS_CMDS    += etcd etcdctl ip

ETCDC_HDRS := $(HDR) adapters/lite_di_lock_etcd.h tests/store/fenced.h tests/store/etcd_case.h

.PHONY: test-etcd-cluster
test-etcd-cluster: $(B)/etcdc/etcd_cluster
	@for mode in cluster partition; do \
	  if [ $$mode = partition ]; then ns=--netns; else ns=; fi; \
	  echo "== etcd cluster suite, $$mode:"; \
	  tests/store/with_etcd_cluster.sh $$ns ./$(B)/etcdc/etcd_cluster $$mode > $(B)/etcdc/$$mode.log 2>&1; rc=$$?; \
	  grep -E '^(figure|with_etcd_cluster)' $(B)/etcdc/$$mode.log; tail -n 1 $(B)/etcdc/$$mode.log; \
	  if [ $$rc != 0 ]; then cat $(B)/etcdc/$$mode.log; exit 1; fi; done

$(B)/etcdc/etcd_cluster: tests/store/etcd_cluster.c $(ETCDC_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< $(ET_LIBS) -o $@
