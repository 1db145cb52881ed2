# mk/etcd.mk -- the etcd adapter (adapters/lite_di_lock_etcd.h; issue 21): libcurl to etcd's
# v3 JSON gateway, cJSON for the replies.
#   make test-etcd      every etcd suite: an umbrella over ETCD_TARGETS (each etcd fragment
#                       appends its own: test-etcd-single here, test-etcd-cluster in
#                       mk/etcd_cluster.mk); part of make test
#   make test-etcd-single  strict builds (C99, C11, clang, C++17, LDL_STATIC, LDL_NO_ASYNC),
#                       then against a real single member (started by the suites, free ports,
#                       temp dirs): the conformance body sync and async (in parallel: the
#                       body's TTL is 8 s, ~60 s; beside them the hostile gateway under
#                       valgrind), the hostile gateway with ASan+UBSan (~25 s), the
#                       guards of issues 31/37 (tests/store/etcd_guards.c: a cut acquire
#                       handed back, the 63 + 127 byte key, a why per error, the fenced
#                       write, the ACL), a name that resolves in 10 s (tests/store/etcd_dns.c
#                       with the etcd_slowdns.so preload), `ldl-run --etcd` against the
#                       hostile gateway (tests/store/etcd_canned_cli.sh: a canned grant never
#                       runs the job) and against a real member (tests/cli/etcd_cli.sh)
#   make mutants-etcd   tests/mutants/etcd.txt, each mutant killed (minutes; not in make test)
#   make bench-etcd     the lifecycle vs plain libcurl, 1,000 leases per heartbeat, depth
# Decision records: docs/decisions/1001-1003, 1010-1012. Details: docs/etcd.md.
# The recipe expands ETCD_TARGETS when it runs, so fragments included after this one
# (mk/*.mk are included in sorted order) still count.

TEST_TARGETS += test-etcd
ETCD_TARGETS += test-etcd-single
DEPS_PKGS    += etcd-server etcd-client libcurl4-openssl-dev libcjson-dev python3 valgrind curl
DEPS_CMDS    += etcd etcdctl python3 valgrind curl
DEPS_FILES   += /usr/include/x86_64-linux-gnu/curl/curl.h /usr/include/cjson/cJSON.h

# every program that includes the adapter links $(ET_LIBS) (other fragments too: use the
# variable, not a copy -- the JSON library changed from jansson to cJSON, decision 1002)
ET_LIBS   = -lcurl -lcjson
ET_HDRS   = $(HDR) adapters/lite_di_lock_etcd.h
ET_THDRS  = $(ET_HDRS) tests/store/fenced.h tests/store/conformance.h tests/store/etcd_common.h tests/store/etcd_case.h
ET_BUILDS = $(B)/etcd/build_c99 $(B)/etcd/build_c11 $(B)/etcd/build_clang $(B)/etcd/build_cxx17 \
            $(B)/etcd/build_static $(B)/etcd/build_noasync

.PHONY: test-etcd test-etcd-single bench-etcd
test-etcd:
	@$(MAKE) --no-print-directory $(ETCD_TARGETS)
	@echo "== make test-etcd: $(words $(ETCD_TARGETS)) suites passed: $(ETCD_TARGETS)"

test-etcd-single: $(ET_BUILDS) $(B)/etcd/etcd_conformance $(B)/etcd/etcd_hostile $(B)/etcd/etcd_hostile_vg \
                  $(B)/etcd/etcd_guards $(B)/etcd/etcd_dns $(B)/etcd/etcd_slowdns.so $(B)/cli/ldl-run-san
	@for b in $(ET_BUILDS); do printf '== etcd %-14s ' "$$(basename $$b):"; ./$$b || exit 1; done
	@tests/store/with_etcd.sh ./$(B)/etcd/etcd_conformance sync > $(B)/etcd/conf_sync.log 2>&1 & p1=$$!; \
	  tests/store/with_etcd.sh ./$(B)/etcd/etcd_conformance async > $(B)/etcd/conf_async.log 2>&1 & p2=$$!; \
	  tests/store/with_etcd.sh valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
	    ./$(B)/etcd/etcd_hostile_vg > $(B)/etcd/hostile_vg.log 2>&1; r3=$$?; \
	  wait $$p1; r1=$$?; wait $$p2; r2=$$?; \
	  printf '== etcd conformance, sync:  '; tail -n 1 $(B)/etcd/conf_sync.log; \
	  printf '== etcd conformance, async: '; tail -n 1 $(B)/etcd/conf_async.log; \
	  printf '== etcd hostile, valgrind:  '; tail -n 1 $(B)/etcd/hostile_vg.log; \
	  if [ $$r1 != 0 ]; then cat $(B)/etcd/conf_sync.log; exit 1; fi; \
	  if [ $$r2 != 0 ]; then cat $(B)/etcd/conf_async.log; exit 1; fi; \
	  if [ $$r3 != 0 ]; then cat $(B)/etcd/hostile_vg.log; exit 1; fi
	@printf '== etcd hostile gateway:     '; out=$$(tests/store/with_etcd.sh ./$(B)/etcd/etcd_hostile 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@printf '== etcd guards (issues 31/37): '; out=$$(tests/store/with_etcd.sh ./$(B)/etcd/etcd_guards 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@printf '== etcd slow name resolution: '; out=$$(LD_PRELOAD=$(CURDIR)/$(B)/etcd/etcd_slowdns.so ./$(B)/etcd/etcd_dns 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@printf '== ldl-run --etcd, hostile:  '; out=$$(tests/store/with_etcd.sh sh tests/store/etcd_canned_cli.sh ./$(B)/cli/ldl-run-san 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@printf '== ldl-run --etcd:           '; tests/store/with_etcd.sh sh tests/cli/etcd_cli.sh ./$(B)/cli/ldl-run-san

# the suites: C99 with ASan + UBSan
$(B)/etcd/etcd_%: tests/store/etcd_%.c $(ET_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< $(ET_LIBS) -o $@

# the resolver bound (issue 31): no sanitizers (ASan must be first in the preload list);
# the shim stands in for a silent DNS server
$(B)/etcd/etcd_dns: tests/store/etcd_dns.c $(ET_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) -I. $< $(ET_LIBS) -o $@
$(B)/etcd/etcd_slowdns.so: tests/store/etcd_slowdns.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O1 -w $< -ldl -o $@

# memcheck once, without the sanitizers (the hostile suite: every error path frees what it parsed)
$(B)/etcd/etcd_%_vg: tests/store/etcd_%.c $(ET_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O0 -g $(WARN) -I. $< $(ET_LIBS) -o $@

# the adapter in every language and option it claims (no server contacted)
$(call LDL_BUILD_MATRIX,$(B)/etcd/build,tests/store/etcd_build.c,$(ET_HDRS),,ET_LIBS,c99 c11 clang cxx17 static noasync)
# ---------------------------------------------------------------- bench (not in make test)
bench-etcd: $(B)/etcd/bench_etcd
	tests/store/with_etcd.sh ./$(B)/etcd/bench_etcd
$(B)/etcd/bench_etcd: bench/bench_etcd.c bench/bench_util.h $(ET_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -D_POSIX_C_SOURCE=200809L $(WARN) -I. -Ibench $< $(ET_LIBS) -o $@

# ldl-run --etcd ENDPOINTS (cli/ldl-run.c includes the adapter); its suite runs from test-etcd-single
CLI_LIBS += $(ET_LIBS)
$(CLI_BUILDS): adapters/lite_di_lock_etcd.h


# ---------------------------------------------------------------- mutants (not in make test)
# tests/mutants/etcd.txt: every mutant must be killed by tests/store/etcd_mutants.sh
# (etcd_guards, etcd_dns, etcd_hostile, then every case of etcd_session; each case under its own
# time bound; 23 min 50 s for the 40 mutants of 2026-12-06, docs/etcd.md "Tests")
.PHONY: mutants-etcd
mutants-etcd:
	@CC="$(CC)" B="$(B)" sh tests/mutants/adapters.sh tests/mutants/etcd.txt
