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

# Issue 32 item 4: the fence protocol's recipes, run VERBATIM from docs/postgres.md,
# docs/sqlite.md and docs/redis.md (the code block after "<!-- recipe: NAME -->") with
# Debian's real clients: psql, psycopg2, psycopg 3 (direct and through a real pgbouncer
# in transaction pooling), the sqlite3 shell and Python's sqlite3, redis-cli and redis-py
# (the script's text and SHA1 checked against the adapter's); and item 6, PostgreSQL roles
# (tests/fence_recipes/roles_test.sh: README's two-login-role block verbatim, refusals whose
# fix statements are run verbatim). About 25 s.
#   make test-fence-recipes
FENCE_TARGETS += test-fence-recipes
DEPS_PKGS  += python3-psycopg2 python3-psycopg python3-redis sqlite3 libsqlite3-dev pgbouncer \
              postgresql-client redis-server redis-tools libhiredis-dev
DEPS_CMDS  += psql sqlite3 redis-cli pgbouncer
DEPS_FILES += /usr/lib/python3/dist-packages/psycopg2/__init__.py \
              /usr/lib/python3/dist-packages/psycopg/__init__.py \
              /usr/lib/python3/dist-packages/redis/__init__.py

FR_TOOLS := $(B)/fence_recipes/redis_script $(B)/fence_recipes/sqlite_check
$(B)/fence_recipes/redis_script: tests/fence_recipes/redis_script.c $(HDR) adapters/lite_di_lock_redis.h
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 $(WARN) -I. $< -lhiredis -o $@
$(B)/fence_recipes/sqlite_check: tests/fence_recipes/sqlite_check.c $(HDR) adapters/lite_di_lock_sqlite.h
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 $(WARN) -I. $< -lsqlite3 -o $@

.PHONY: test-fence-recipes
test-fence-recipes: $(FR_TOOLS) $(B)/cli/ldl-fence
	tests/store/with_pg.sh \
	  'tests/store/with_redis.sh sh tests/fence_recipes/recipes_test.sh direct ./$(B)/cli/ldl-fence ./$(B)/fence_recipes' \
	  'sh tests/fence_recipes/roles_test.sh ./$(B)/cli/ldl-fence' \
	  "tests/store/with_pgbouncer.sh tx2rr 'sh tests/fence_recipes/recipes_test.sh pgbouncer ./$(B)/cli/ldl-fence ./$(B)/fence_recipes'"

# each broken recipe (in a copy of docs/) must turn recipes_test.sh red (not in make test)
.PHONY: test-fence-recipes-mutants
test-fence-recipes-mutants: $(FR_TOOLS) $(B)/cli/ldl-fence
	sh tests/fence_recipes/recipes_mutants.sh ./$(B)/cli/ldl-fence ./$(B)/fence_recipes

# Issue 32 item 5: ldl-run --etcd and the real `etcdctl lock` on one name (they do not
# exclude each other: docs/etcd.md's first screen, decision 0706). About 10 s.
#   make test-fence-etcd-lock
FENCE_TARGETS += test-fence-etcd-lock
DEPS_PKGS  += etcd-server etcd-client curl
DEPS_CMDS  += etcd etcdctl curl

.PHONY: test-fence-etcd-lock
test-fence-etcd-lock: $(B)/cli/ldl-run
	tests/store/with_etcd.sh sh tests/fence_recipes/etcd_lock_test.sh ./$(B)/cli/ldl-run
