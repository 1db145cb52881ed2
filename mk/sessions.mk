# mk/sessions.mk -- sessions (issue 34): on etcd one lease per view (decision 1013), on
# PostgreSQL one session row (decisions 0217, 0218); the non-blocking views' renews coalesced
# onto the session refresh sent after them.
#   make test-sessions   (part of make test) four parts, one after the other:
#     test-sessions-single   tests/store/etcd_session.c (C99, ASan + UBSan) against a real
#                        single etcd member it starts (with_etcd.sh: free ports, temp dir,
#                        stopped by pid): the coalescing rule with a scripted clock, 1,000 locks
#                        on one session and `etcdctl lease revoke`, a key of an ended session
#                        never renewed by the next one, session and per-lock leases on one
#                        view, the synchronous view, a retried acquire proved by its nonce
#                        through a reply-dropping proxy ("retry", decision 1014) and the
#                        documented maxima on a session ("maxima") (~25 s)
#     test-sessions-cluster  tests/store/etcd_session_cluster.c on 3 members
#                        (with_etcd_cluster.sh): the leader SIGKILLed under 100 session locks;
#                        then --netns (root) the leader's peer cable pulled under them (~40 s)
#     test-sessions-chaos    the etcd chaos slice with CHAOS_ETCD_SESSION=1
#     test-sessions-pg       tests/store/pg_session.c (C99, ASan + UBSan) against a real
#                        PostgreSQL it starts (with_pg.sh): the adapter's sessions through the
#                        lock core (decisions 0217, 0218) -- ldl_pg_session's refusals and the
#                        session table's hardening, grant/renew/release named and
#                        LDL_PG_UNNAMED, mixing with per-lock leases, expiry, the two snapshot
#                        races, 1,000 locks and the session row deleted by hand; the
#                        non-blocking view's coalescing on a scripted clock, cancel, loss;
#                        then tests/store/pg_session_design.c, the design's statements as
#                        written, direct and behind pgbouncer tx1 and tx2rr (~20 s)
#   make chaos-sessions  the same campaign, CHAOS_SESSION_ROUNDS (1,000) rounds (not in make test)
#   make mutants-sessions-pg  the breaks of tests/mutants/pg_session.txt in the adapter, each
#                        killed by tests/store/pg_session.c (not in make test)
# Each prints its "figure:" lines and "N passed, N failed". Details: docs/etcd.md
# "Sessions". Mutants: tests/mutants/etcd.txt (session-*), killed by
# tests/store/etcd_mutants.sh, which runs etcd_session last.

TEST_TARGETS += test-sessions
DEPS_PKGS    += etcd-server etcd-client libcurl4-openssl-dev libcjson-dev iproute2 postgresql libpq-dev pgbouncer

.PHONY: test-sessions test-sessions-single test-sessions-cluster test-sessions-pg
test-sessions:
	@$(MAKE) --no-print-directory test-sessions-single test-sessions-cluster test-sessions-chaos test-sessions-pg

# PostgreSQL (issue 34 item 3): the adapter's sessions through the lock core
# (tests/store/pg_session.c; its breaks: tests/mutants/pg_session.txt, make
# mutants-sessions-pg), then the design's statements as written against the same server
# and behind pgbouncer in transaction pooling (tx1, tx2rr: every statement through the
# pooler, the two cases that hold a transaction open left out).
test-sessions-pg: $(B)/pg/pg_session $(B)/pg/pg_session_design
	@tests/store/with_pg.sh ./$(B)/pg/pg_session ./$(B)/pg/pg_session_design \
	  $(foreach m,tx1 tx2rr,'tests/store/with_pgbouncer.sh $(m) ./$(B)/pg/pg_session_design') > $(B)/pg/session.log 2>&1; rc=$$?; \
	  grep -E '^figure' $(B)/pg/session.log; \
	  grep -E '^(== |behind pgbouncer|[0-9]+ passed)' $(B)/pg/session.log | grep -v '^== \[' | sed 's/^/== pg sessions: /'; \
	  if [ $$rc != 0 ]; then cat $(B)/pg/session.log; exit 1; fi

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

# the chaos campaign over etcd with sessions on (tests/chaos, CHAOS_ETCD_SESSION=1: every
# client's locks on a session; the campaign's default stays a lease per lock): a slice in
# test-sessions, >= 1,000 rounds in chaos-sessions (not in make test)
CHAOS_SESSION_SLICE_ROUNDS ?= 30
CHAOS_SESSION_ROUNDS       ?= 1000
# every break of tests/mutants/pg_session.txt (the adapter's session guards) killed by
# tests/store/pg_session.c (~4 min; not in make test)
.PHONY: mutants-sessions-pg
mutants-sessions-pg:
	@CC="$(CC)" B="$(B)" sh tests/mutants/adapters.sh tests/mutants/pg_session.txt

.PHONY: test-sessions-chaos chaos-sessions
test-sessions-chaos: $(B)/chaos/chaos
	CHAOS_ETCD_SESSION=1 tests/chaos/run.sh etcd $(CHAOS_SESSION_SLICE_ROUNDS) $(CHAOS_SEED)
chaos-sessions: $(B)/chaos/chaos
	CHAOS_ETCD_SESSION=1 tests/chaos/run.sh etcd $(CHAOS_SESSION_ROUNDS) $(CHAOS_SEED)
