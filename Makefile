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

# Debian packages the tests need, and how to tell they are installed.
DEPS_PKGS    := build-essential clang libclang-rt-14-dev valgrind
DEPS_CMDS    := cc gcc g++ clang make valgrind
DEPS_FILES   :=
TEST_TARGETS :=

-include $(sort $(wildcard mk/*.mk))

.PHONY: all demo test test-core examples deps deps-check clean
all: examples

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

# ---------------------------------------------------------------- demo
demo: $(B)/demo
	./$(B)/demo

$(B)/demo: examples/demo.c $(HDR)
	@mkdir -p $(B)
	$(CC) -std=c99 -O2 $(WARN) -I. examples/demo.c -o $@

clean:
	rm -rf $(B)
