# mk/fence_pg.mk -- issue 19, PostgreSQL: ldl_pg_fence (the fenced-write protocol)
# against a throwaway real server (tests/store/with_pg.sh), directly and through
# a real pgbouncer in transaction pooling (tests/store/with_pgbouncer.sh tx2rr:
# two server connections, so two fenced transactions can wait on each other),
# the suite once more under valgrind, and the fence section compiled in every
# language and option the adapter claims. Reuses PG_* from mk/pg.mk.
#   make test-fence-pg

FENCE_TARGETS += test-fence-pg

PGF_BUILDS = $(B)/pg/fence_build_c99 $(B)/pg/fence_build_c11 $(B)/pg/fence_build_clang \
             $(B)/pg/fence_build_cxx17 $(B)/pg/fence_build_static $(B)/pg/fence_build_noasync

.PHONY: test-fence-pg
test-fence-pg: $(PGF_BUILDS) $(B)/pg/pg_fence $(B)/pg/pg_fence_vg
	@for b in $(PGF_BUILDS); do ./$$b || exit 1; done
	tests/store/with_pg.sh ./$(B)/pg/pg_fence \
	  'tests/store/with_pgbouncer.sh tx2rr ./$(B)/pg/pg_fence' \
	  'valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite ./$(B)/pg/pg_fence_vg'

# (the suite itself builds through mk/pg.mk's $(B)/pg/pg_% and $(B)/pg/pg_%_vg rules)

$(call LDL_BUILD_MATRIX,$(B)/pg/fence_build,tests/store/pg_fence_build.c,$(HDR) adapters/lite_di_lock_pg.h,PG_CFLAGS,PG_LIBS,c99 c11 clang cxx17 static noasync)
