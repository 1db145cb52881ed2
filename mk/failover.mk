# mk/failover.mk -- issue 20: fences that survive failover.
#   make test-failover   every failover suite: each area's fragment appends its own
#                        target to FAILOVER_TARGETS (mk/failover_pg.mk,
#                        mk/failover_redis.mk); this runs them all (part of make test)

TEST_TARGETS     += test-failover
FAILOVER_TARGETS ?=

.PHONY: test-failover
test-failover:
	@if [ -z "$(strip $(FAILOVER_TARGETS))" ]; then echo "test-failover: no suites registered"; exit 1; fi
	@$(MAKE) --no-print-directory $(FAILOVER_TARGETS)
	@echo "== make test-failover: $(words $(FAILOVER_TARGETS)) suites passed: $(FAILOVER_TARGETS)"
