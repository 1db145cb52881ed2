# mk/sessions.mk -- sessions on etcd (issue 34, decision 1013): one lease per view, the
# non-blocking view's renews coalesced onto keepalives sent after them.
#   make test-sessions   tests/store/etcd_session.c (C99, ASan + UBSan) against a real single
#                        etcd member it starts (with_etcd.sh: free ports, temp dir, stopped by
#                        pid): the coalescing rule with a scripted clock, 1,000 locks on one
#                        session and `etcdctl lease revoke`, a key of an ended session never
#                        renewed by the next one, session and per-lock leases on one view, the
#                        synchronous view. Prints its "figure:" lines and "N passed, N failed".
# Details: docs/etcd.md "Sessions". Mutants: tests/mutants/etcd.txt (session-*), killed by
# tests/store/etcd_mutants.sh, which runs etcd_session first.

TEST_TARGETS += test-sessions
DEPS_PKGS    += etcd-server etcd-client libcurl4-openssl-dev libcjson-dev iproute2

.PHONY: test-sessions test-sessions-single test-sessions-cluster
test-sessions:
	@$(MAKE) --no-print-directory test-sessions-single test-sessions-cluster

test-sessions-single: $(B)/etcd/etcd_session
	@tests/store/with_etcd.sh ./$(B)/etcd/etcd_session > $(B)/etcd/session.log 2>&1; rc=$$?; \
	  grep -E '^figure' $(B)/etcd/session.log; printf '== etcd sessions: '; tail -n 1 $(B)/etcd/session.log; \
	  if [ $$rc != 0 ]; then cat $(B)/etcd/session.log; exit 1; fi

# the same on a 3-member cluster (tests/store/with_etcd_cluster.sh's harness): the leader
# SIGKILLed under 100 session locks, then (--netns, root) the leader's peer cable pulled
# under them, a contender view without a session on the majority side
test-sessions-cluster: $(B)/etcd/etcd_session_cluster
	@for mode in kill partition; do \
	  if [ $$mode = partition ]; then ns=--netns; else ns=; fi; \
	  tests/store/with_etcd_cluster.sh $$ns ./$(B)/etcd/etcd_session_cluster $$mode > $(B)/etcd/session_$$mode.log 2>&1; rc=$$?; \
	  grep -E '^figure' $(B)/etcd/session_$$mode.log; printf '== etcd sessions, cluster %s: ' $$mode; tail -n 1 $(B)/etcd/session_$$mode.log; \
	  if [ $$rc != 0 ]; then cat $(B)/etcd/session_$$mode.log; exit 1; fi; done
