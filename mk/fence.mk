# mk/fence.mk -- issue 19: the fence enforced where the write lands.
#   make test-fence   every fenced-write suite: each area's fragment appends its own
#                     target to FENCE_TARGETS (mk/fence_pg.mk, mk/fence_redis.mk,
#                     mk/fence_cli.mk); this runs them all (part of make test)
# The recipe expands FENCE_TARGETS when it runs, so fragments included after this
# one (mk/*.mk are included in sorted order) still count.

TEST_TARGETS  += test-fence
FENCE_TARGETS ?=

.PHONY: test-fence
test-fence:
	@if [ -z "$(strip $(FENCE_TARGETS))" ]; then echo "test-fence: no suites registered"; exit 1; fi
	@$(MAKE) --no-print-directory $(FENCE_TARGETS)
	@echo "== make test-fence: $(words $(FENCE_TARGETS)) suites passed: $(FENCE_TARGETS)"
