# lite_di_lock.h -- build, test, demo.
#   make demo       the main job: two workers, one MemoryStore, simulated time
#   make test       every suite (installs missing tools first when run as root)
#   make examples   build the examples
#   make deps       apt-get install everything the tests need (root)
# Area fragments live in mk/*.mk; each appends to TEST_TARGETS / DEPS_*.

CC      ?= cc
CLANG   ?= clang
CXX     ?= g++
WARN    := -Wall -Wextra -Wpedantic -Werror
B       := build
HDR     := lite_di_lock.h
# The one set of sanitizer flags: the core asan build, the fuzz/edge builds and
# the adapter suites all use it (any report aborts the program).
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# Debian packages the tests need, and how to tell they are installed.
DEPS_PKGS    := build-essential clang libclang-rt-14-dev valgrind
DEPS_CMDS    := cc gcc g++ clang make valgrind
DEPS_FILES   :=
TEST_TARGETS :=
EXAMPLE_TARGETS :=

# The store build checks (tests/store/*_build.c: no server needed) in every language and
# option an adapter claims: $(call LDL_BUILD_MATRIX,OUT,SOURCE,PREREQS,CFLAGS_VAR,LIBS_VAR,VARIANTS)
# defines one rule per VARIANT (c99 c11 clang cxx17 static noasync) building OUT_VARIANT, rebuilt
# when SOURCE, PREREQS or tests/check.h change. CFLAGS_VAR and LIBS_VAR are variable NAMES
# (expanded when the recipe runs, so a fragment may name a variable another fragment defines
# later); PREREQS is expanded at once. The variants' compilers and flags:
LDL_BM.c99     = $(CC) -std=c99 $(WARN) -Wconversion -Wshadow -Wstrict-prototypes
LDL_BM.c11     = $(CC) -std=c11 $(WARN) -Wconversion -Wshadow
LDL_BM.clang   = $(CLANG) -std=c99 $(WARN) -Wconversion -Wshadow
LDL_BM.cxx17   = $(CXX) -std=c++17 -x c++ $(WARN) -Wshadow
LDL_BM.static  = $(CC) -std=c99 -DLDL_STATIC $(WARN)
LDL_BM.noasync = $(CC) -std=c99 -DLDL_NO_ASYNC $(WARN) -Wconversion
define LDL_BUILD_RULE
$(1)_$(6): $(2) $(3) tests/check.h
	@mkdir -p $$(@D)
	$$(LDL_BM.$(6)) -I. $$($(4)) $$< $(if $(filter cxx17,$(6)),-x none) $$($(5)) -o $$@
endef
LDL_BUILD_MATRIX = $(foreach v,$(6),$(eval $(call LDL_BUILD_RULE,$(1),$(2),$(3),$(4),$(5),$(v))))

# The core suite: one source list, one table of builds. Each build is one
# variable CORE.<name> = compiler, language standard, then extra flags; the
# build list is every CORE.* entry. (Defined before the fragments, which may
# use CORE_SRC.)
CORE_SRC := $(sort $(wildcard tests/core/*.c))
CORE_DEP := $(CORE_SRC) $(wildcard tests/core/*.h) tests/check.h $(HDR)
#                      compiler  std    flags
CORE.gcc-c99       := gcc        c99    -O2
CORE.gcc-c11       := gcc        c11    -O2
CORE.clang-c99     := $(CLANG)   c99    -O2
CORE.clang-c11     := $(CLANG)   c11    -O2
CORE.gxx-cxx17     := g++        c++17  -O2 -x c++
CORE.clangxx-cxx17 := clang++    c++17  -O2 -Wno-deprecated -x c++
CORE.asan-ubsan    := $(CLANG)   c99    -O1 -g $(SAN)
CORE.keymax32      := gcc        c99    -O2 -DLDL_KEY_MAX=32
CORE.noelection    := gcc        c99    -O2 -DLDL_NO_ELECTION
CORE.noasync       := gcc        c99    -O2 -DLDL_NO_ASYNC
CORE.firmware      := gcc        c99    -O2 -DLDL_NO_ASYNC -DLDL_NO_ELECTION
CORE_BUILDS := $(sort $(patsubst CORE.%,%,$(filter CORE.%,$(.VARIABLES))))

-include $(sort $(wildcard mk/*.mk))

.PHONY: all demo test test-core test-header test-tools examples examples-core deps deps-check clean cli
all: examples

# ---------------------------------------------------------------- test
# deps-check first (installs when root), then every area's suite, each run
# whatever the others answered (tools/run-targets.sh): one line per target,
# then "targets: N passed, M failed: NAMES"; non-zero when any failed.
ALL_TEST_TARGETS = test-header test-core examples test-tools $(TEST_TARGETS)
test: deps-check
	@sh tools/run-targets.sh "$(MAKE)" $(ALL_TEST_TARGETS)

# the runner's own promise: a red target hides none after it (issue 30)
test-tools:
	@sh tests/tools/run_targets_test.sh
	@sh tests/tools/api_test.sh

# -x c++ (in the flags) must come before the sources
$(addprefix $(B)/core/,$(CORE_BUILDS)): $(B)/core/%: $(CORE_DEP)
	@mkdir -p $(@D); $(word 1,$(CORE.$*)) -std=$(word 2,$(CORE.$*)) $(wordlist 3,99,$(CORE.$*)) \
	  $(WARN) -I. $(CORE_SRC) -o $@

test-core: $(addprefix $(B)/core/,$(CORE_BUILDS))
	@for b in $(CORE_BUILDS); do \
	  printf '== core suite, %-14s ' "$$b:"; \
	  out=$$(./$(B)/core/$$b 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi; done

# The header's own promises: ASCII, strict builds with extra warnings, no heap,
# no mutable global, every configuration option compiles, the clock #error.
test-header:
	@sh tests/header/check.sh

# ---------------------------------------------------------------- set-up
deps:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "make deps must run as root. Run:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y $(sort $(DEPS_PKGS))"; exit 1; fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(sort $(DEPS_PKGS))

deps-check:
	@sh tools/deps-check.sh "$(sort $(DEPS_PKGS))" "$(DEPS_CMDS)" "$(DEPS_FILES)" || { \
	  if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory deps && \
	    sh tools/deps-check.sh "$(sort $(DEPS_PKGS))" "$(DEPS_CMDS)" "$(DEPS_FILES)"; \
	  else exit 1; fi; }

# ---------------------------------------------------------------- examples
EXAMPLES_CORE := demo game_loop posix_timers container async_loop
examples: examples-core $(EXAMPLE_TARGETS)
# async_loop checks its own timeline (lost at the deadline, won again with a
# higher fence) and exits non-zero otherwise, so it runs here
examples-core: $(addprefix $(B)/examples/,$(EXAMPLES_CORE))
	@out=$$(./$(B)/examples/async_loop 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "== examples/async_loop: $$(echo "$$out" | tail -n 1)"
$(B)/examples/%: examples/%.c $(HDR)
	@mkdir -p $(@D); $(CC) -std=c99 -O2 $(WARN) -I. $< -o $@

# ---------------------------------------------------------------- demo
demo: $(B)/examples/demo
	@./$(B)/examples/demo

# both CLIs (issue 30): ldl-run (mk/cli.mk) and ldl-fence (mk/fence_cli.mk)
cli: $(B)/cli/ldl-run $(B)/cli/ldl-fence

clean:
	rm -rf $(B)
