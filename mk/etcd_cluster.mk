# mk/etcd_cluster.mk -- the etcd store over three members (issue 21): leader kills, paused and
# slow members, every member restarted on its WAL, and a real network partition.
#   make test-etcd-cluster   tests/store/etcd_cluster.c (ASan + UBSan) twice:
#     cluster    3 members on 127.0.0.1 (tests/store/with_etcd_cluster.sh): leaderkill, pause,
#                slow, restart
#     partition  3 members in their own network namespaces (with_etcd_cluster.sh --netns,
#                root; namespaces, bridges and veths created and removed by the run): the
#                leader's, then a follower's peer cable pulled under a held lock, and a
#                client that fails over to the majority
# Registered with the `test-etcd` umbrella (mk/etcd.mk runs $(ETCD_TARGETS)).

ETCD_TARGETS += test-etcd-cluster
DEPS_PKGS    += etcd-server etcd-client iproute2 libcurl4-openssl-dev libjansson-dev
DEPS_CMDS    += etcd etcdctl ip

ETCDC_HDRS := $(HDR) adapters/lite_di_lock_etcd.h tests/store/fenced.h

.PHONY: test-etcd-cluster
test-etcd-cluster: $(B)/etcdc/etcd_cluster
	tests/store/with_etcd_cluster.sh ./$(B)/etcdc/etcd_cluster cluster
	tests/store/with_etcd_cluster.sh --netns ./$(B)/etcdc/etcd_cluster partition

$(B)/etcdc/etcd_cluster: tests/store/etcd_cluster.c $(ETCDC_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< -lcurl -ljansson -o $@
