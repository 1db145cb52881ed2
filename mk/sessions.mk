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
DEPS_PKGS    += etcd-server etcd-client libcurl4-openssl-dev libcjson-dev

.PHONY: test-sessions
test-sessions: $(B)/etcd/etcd_session
	@tests/store/with_etcd.sh ./$(B)/etcd/etcd_session > $(B)/etcd/session.log 2>&1; rc=$$?; \
	  grep -E '^figure' $(B)/etcd/session.log; printf '== etcd sessions: '; tail -n 1 $(B)/etcd/session.log; \
	  if [ $$rc != 0 ]; then cat $(B)/etcd/session.log; exit 1; fi
