# mk/reliability.mk -- the reliability gate (issue 4): fuzzers with an
# invariant oracle (synchronous and non-blocking stores, issue 9; the
# leader-election options, issue 12: fuzz_election), a differential
# MemoryStore fuzzer, edges, a soak,
# valgrind memcheck and mutation controls. See docs/TESTING.md.
#
#   make fuzz [FUZZ_SECONDS=60]   every libFuzzer fuzzer, FUZZ_SECONDS each
#   make fuzz-ci                  corpus replay + a bounded run (CI): FUZZ_CI_SECONDS
#                                 each, fuzz_election FUZZ_CI_SECONDS_ELECTION
#   make edge                     edge programs under ASan+UBSan, then the soak
#   make soak                     one million lifecycles, RSS must stay flat
#   make valgrind                 memcheck: core suite, edges, corpus replays
#   make mutants                  each mutant of the header must be killed
#                                 (MUTANT_JOBS=2 at once, MUTANT_REPLAY_RANDOM=400)

FUZZ_SECONDS    ?= 60
FUZZ_CI_SECONDS ?= 40
FUZZ_CI_SECONDS_ELECTION ?= 25
FUZZERS         := fuzz_lock fuzz_memstore fuzz_election
FUZZ_MAXLEN_fuzz_lock     := 512
FUZZ_MAXLEN_fuzz_memstore := 1024
FUZZ_MAXLEN_fuzz_election := 512
FUZZ_BIN   := $(B)/fuzz/lib
REPLAY_BIN := $(B)/fuzz/replay
# deterministic pseudo-random inputs the replay feeds after the corpus
REPLAY_RANDOM ?= 2000

EDGE_SRC := tests/edge/edge.c
SOAK_SRC := tests/edge/soak.c

.PHONY: fuzz fuzz-ci fuzz-replay edge soak valgrind mutants

# ---------------------------------------------------------------- fuzz builds
$(FUZZ_BIN)/%: tests/fuzz/%.c tests/fuzz/lifecycle_edges.h $(HDR)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -g -O1 $(WARN) -fsanitize=fuzzer $(SAN) -I. $< -o $@

# the regression replay: a plain main(), no libFuzzer; sanitized with clang
$(REPLAY_BIN)/%: tests/fuzz/%.c tests/fuzz/fuzz_replay.c tests/fuzz/lifecycle_edges.h $(HDR)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -g -O1 $(WARN) $(SAN) -I. $< tests/fuzz/fuzz_replay.c -o $@

# the same replay with the default compiler, no sanitizer (valgrind runs it)
$(REPLAY_BIN)/%-plain: tests/fuzz/%.c tests/fuzz/fuzz_replay.c tests/fuzz/lifecycle_edges.h $(HDR)
	@mkdir -p $(@D)
	$(CC) -std=c99 -g -O1 $(WARN) -I. $< tests/fuzz/fuzz_replay.c -o $@

fuzz-replay: $(addprefix $(REPLAY_BIN)/,$(FUZZERS))
	@for f in $(FUZZERS); do \
	  printf '== fuzz replay, %-14s ' "$$f:"; \
	  out=$$(./$(REPLAY_BIN)/$$f -r $(REPLAY_RANDOM) tests/fuzz/corpus/$$f 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out" | tail -n 30; exit 1; fi; done

# $(1) = seconds per fuzzer, $(2) = seconds for fuzz_election. The committed
# corpus seeds a scratch corpus under
# $(B) (the committed one never grows by itself); any crash, leak, timeout or
# oracle violation makes libFuzzer exit non-zero and the target fail.
define ldl_run_fuzzers
	@for f in $(FUZZERS); do \
	  rm -rf $(B)/fuzz/work/$$f; mkdir -p $(B)/fuzz/work/$$f $(B)/fuzz/artifacts; \
	  cp tests/fuzz/corpus/$$f/* $(B)/fuzz/work/$$f/ 2>/dev/null; \
	  s=$(1); case $$f in fuzz_lock) ml=$(FUZZ_MAXLEN_fuzz_lock);; \
	    fuzz_election) ml=$(FUZZ_MAXLEN_fuzz_election); s=$(2);; *) ml=$(FUZZ_MAXLEN_fuzz_memstore);; esac; \
	  printf '== fuzz %-14s %ss ... ' "$$f" "$$s"; \
	  ./$(FUZZ_BIN)/$$f -max_total_time=$$s -max_len=$$ml -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(B)/fuzz/artifacts/$$f- \
	    $(B)/fuzz/work/$$f > $(B)/fuzz/$$f.log 2>&1; rc=$$?; \
	  runs=$$(grep -o 'stat::number_of_executed_units: *[0-9]*' $(B)/fuzz/$$f.log | grep -o '[0-9]*$$'); \
	  cov=$$(grep -o 'cov: [0-9]*' $(B)/fuzz/$$f.log | tail -n 1); \
	  if [ $$rc != 0 ]; then echo "FINDING (exit $$rc)"; grep -m 3 -e VIOLATED -e MISMATCH -e 'ERROR:' $(B)/fuzz/$$f.log; \
	    ls $(B)/fuzz/artifacts/$$f-* 2>/dev/null; echo "full log: $(B)/fuzz/$$f.log"; exit 1; fi; \
	  echo "$${runs:-?} execs, $$cov, 0 findings"; done
endef

fuzz: fuzz-replay $(addprefix $(FUZZ_BIN)/,$(FUZZERS))
	$(call ldl_run_fuzzers,$(FUZZ_SECONDS),$(FUZZ_SECONDS))

fuzz-ci: fuzz-replay $(addprefix $(FUZZ_BIN)/,$(FUZZERS))
	$(call ldl_run_fuzzers,$(FUZZ_CI_SECONDS),$(FUZZ_CI_SECONDS_ELECTION))

# ---------------------------------------------------------------- edges, soak
$(B)/edge/edge: $(EDGE_SRC) $(HDR)
	@mkdir -p $(@D)
	$(CLANG) -std=c99 -g -O1 $(WARN) $(SAN) -fsanitize=float-cast-overflow -I. $(EDGE_SRC) -o $@

$(B)/edge/edge-plain: $(EDGE_SRC) $(HDR)
	@mkdir -p $(@D)
	$(CC) -std=c99 -g -O1 $(WARN) -I. $(EDGE_SRC) -o $@

# optimised, no sanitizer: resident memory must mean something
$(B)/edge/soak: $(SOAK_SRC) $(HDR)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -I. $(SOAK_SRC) -o $@

edge: $(B)/edge/edge $(B)/edge/soak
	@printf '== edge (ASan+UBSan):    '; out=$$(./$(B)/edge/edge 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@$(MAKE) --no-print-directory soak

soak: $(B)/edge/soak
	@printf '== soak (1e6 lifecycles): '; out=$$(./$(B)/edge/soak 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi

# ---------------------------------------------------------------- valgrind
CORE_SRC_R := $(sort $(wildcard tests/core/*.c))

$(B)/valgrind/core: $(CORE_SRC_R) $(HDR)
	@mkdir -p $(@D)
	$(CC) -std=c99 -g -O1 $(WARN) -I. $(CORE_SRC_R) -o $@

VG := valgrind --tool=memcheck --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect -q

valgrind: $(B)/valgrind/core $(B)/edge/edge-plain $(B)/edge/soak $(addsuffix -plain,$(addprefix $(REPLAY_BIN)/,$(FUZZERS)))
	@printf '== valgrind core suite:   '; $(VG) ./$(B)/valgrind/core > $(B)/valgrind/core.log 2>&1; rc=$$?; \
	  tail -n 1 $(B)/valgrind/core.log; if [ $$rc != 0 ]; then cat $(B)/valgrind/core.log; exit 1; fi
	@printf '== valgrind edge:         '; $(VG) ./$(B)/edge/edge-plain > $(B)/valgrind/edge.log 2>&1; rc=$$?; \
	  tail -n 1 $(B)/valgrind/edge.log; if [ $$rc != 0 ]; then cat $(B)/valgrind/edge.log; exit 1; fi
	@printf '== valgrind soak (2e4):   '; LDL_SOAK_ITERS=20000 $(VG) ./$(B)/edge/soak > $(B)/valgrind/soak.log 2>&1; rc=$$?; \
	  tail -n 1 $(B)/valgrind/soak.log; if [ $$rc != 0 ]; then cat $(B)/valgrind/soak.log; exit 1; fi
	@for f in $(FUZZERS); do printf '== valgrind %-13s ' "$$f:"; \
	  $(VG) ./$(REPLAY_BIN)/$$f-plain -r 200 tests/fuzz/corpus/$$f > $(B)/valgrind/$$f.log 2>&1; rc=$$?; \
	  tail -n 1 $(B)/valgrind/$$f.log; if [ $$rc != 0 ]; then cat $(B)/valgrind/$$f.log; exit 1; fi; done

# ---------------------------------------------------------------- mutants
mutants:
	@CC="$(CC)" WARN="$(WARN)" B="$(B)" sh tests/mutants/run.sh tests/mutants/mutants.txt

TEST_TARGETS += edge fuzz-ci valgrind mutants
DEPS_PKGS    += clang libclang-rt-14-dev valgrind
DEPS_CMDS    += clang valgrind
