# mk/failover_pg.mk -- issue 20, item 2: PostgreSQL fences across a failover.
#   make test-failover-pg   a primary and a streaming standby on loopback
#                           (tests/store/with_pg_standby.sh): ldl_pg_check_durability
#                           against real settings, then lifecycles through a multi-host
#                           conninfo across SIGKILL + promote + rebuild, synchronous
#                           (on, remote_apply: 0 repeated fences required),
#                           asynchronous and synchronous with synchronous_commit local
#                           (repeats counted and printed; the tail lost while the
#                           standby's link is paused must be granted again)
#   LDL_FAILOVER_ROUNDS=N   failovers per run (default 4: 2 with the standby's link
#                           paused, 2 without; remote_apply runs 2). docs/TESTING.md
#                           quotes a run with N=50.
# Part of make test through make test-failover (mk/failover.mk).

FAILOVER_TARGETS += test-failover-pg
DEPS_PKGS        += procps
DEPS_CMDS        += ps
DEPS_FILES       += /usr/lib/postgresql/*/bin/pg_basebackup

FPG_BUILDS = $(B)/pg/durability_build_c99 $(B)/pg/durability_build_clang \
             $(B)/pg/durability_build_cxx17 $(B)/pg/durability_build_static
FPG_ROUNDS_APPLY = $(if $(LDL_FAILOVER_ROUNDS),$(LDL_FAILOVER_ROUNDS),2)

.PHONY: test-failover-pg
test-failover-pg: $(FPG_BUILDS) $(B)/pg/pg_durability $(B)/pg/pg_failover
	@for b in $(FPG_BUILDS); do ./$$b || exit 1; done
	LDL_PG_WAL_LEVEL=logical tests/store/with_pg_standby.sh sync ./$(B)/pg/pg_durability
	tests/store/with_pg_standby.sh sync ./$(B)/pg/pg_failover
	LDL_PG_SYNC_COMMIT=remote_apply LDL_FAILOVER_ROUNDS=$(FPG_ROUNDS_APPLY) \
	  tests/store/with_pg_standby.sh sync ./$(B)/pg/pg_failover
	tests/store/with_pg_standby.sh async ./$(B)/pg/pg_failover
	LDL_PG_SYNC_COMMIT=local LDL_FAILOVER_ROUNDS=2 \
	  tests/store/with_pg_standby.sh sync ./$(B)/pg/pg_failover

# $(B)/pg/pg_durability and $(B)/pg/pg_failover: mk/pg.mk's pattern rule (C99, ASan + UBSan)

# the durability section in every language and option (no server)
$(call LDL_BUILD_MATRIX,$(B)/pg/durability_build,tests/store/pg_durability_build.c,$(HDR) adapters/lite_di_lock_pg.h,PG_CFLAGS,PG_LIBS,c99 clang cxx17 static)
