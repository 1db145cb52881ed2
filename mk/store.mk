# mk/store.mk -- the shared store conformance body (tests/store/conformance.h) on the
# header's MemoryStore, on a fake clock: no server, runs in milliseconds.
#   make test-store-memory   the body as C99 (ASan+UBSan) and as C++17

TEST_TARGETS += test-store-memory

STORE_CONF_SRC := tests/store/conf_memory.c
STORE_CONF_DEP := $(STORE_CONF_SRC) $(HDR) tests/check.h tests/store/fenced.h tests/store/conformance.h
# one entry per build, as the core table: compiler, language standard, flags
STORE.conf_memory       := $(CC)   c99    -O1 -g $(SAN)
STORE.conf_memory_cxx17 := $(CXX)  c++17  -O1 -x c++
STORE_BUILDS := $(sort $(patsubst STORE.%,%,$(filter STORE.%,$(.VARIABLES))))

.PHONY: test-store-memory
test-store-memory: $(addprefix $(B)/store/,$(STORE_BUILDS))
	@for b in $(STORE_BUILDS); do \
	  printf '== store conformance, %-18s ' "$$b:"; \
	  out=$$(./$(B)/store/$$b 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi; done

$(addprefix $(B)/store/,$(STORE_BUILDS)): $(B)/store/%: $(STORE_CONF_DEP)
	@mkdir -p $(@D)
	$(word 1,$(STORE.$*)) -std=$(word 2,$(STORE.$*)) $(wordlist 3,99,$(STORE.$*)) $(WARN) -I. $(STORE_CONF_SRC) -o $@
