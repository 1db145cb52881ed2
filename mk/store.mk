# mk/store.mk -- the shared store conformance body (tests/store/conformance.h) on the
# header's MemoryStore, on a fake clock: no server, runs in milliseconds.
#   make test-store-memory   the body as C99 (ASan+UBSan) and as C++17

TEST_TARGETS += test-store-memory

STORE_CONF_DEP := tests/store/conf_memory.c $(HDR) tests/store/fenced.h tests/store/conformance.h

.PHONY: test-store-memory
test-store-memory: $(B)/store/conf_memory $(B)/store/conf_memory_cxx17
	./$(B)/store/conf_memory
	./$(B)/store/conf_memory_cxx17

$(B)/store/conf_memory: $(STORE_CONF_DEP)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< -o $@
$(B)/store/conf_memory_cxx17: $(STORE_CONF_DEP)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -x c++ -O1 $(WARN) -I. $< -o $@
