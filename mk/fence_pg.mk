# mk/fence_pg.mk -- issue 19, PostgreSQL: ldl_pg_fence (the fenced-write protocol)
# against a throwaway real server (tests/store/with_pg.sh), directly and through
# a real pgbouncer in transaction pooling (tests/store/with_pgbouncer.sh tx2rr:
# two server connections, so two fenced transactions can wait on each other),
# plus the suite once under valgrind. Reuses PG_* from mk/pg.mk.
#   make test-fence-pg

FENCE_TARGETS += test-fence-pg

.PHONY: test-fence-pg
test-fence-pg: $(B)/pg/pg_fence $(B)/pg/pg_fence_vg
	tests/store/with_pg.sh ./$(B)/pg/pg_fence \
	  'tests/store/with_pgbouncer.sh tx2rr ./$(B)/pg/pg_fence' \
	  'valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite --trace-children=no ./$(B)/pg/pg_fence_vg'
