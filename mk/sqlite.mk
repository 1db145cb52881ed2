# mk/sqlite.mk -- the SQLite adapter (adapters/lite_di_lock_sqlite.h): its suites on a
# temp file on disk and on tmpfs (/dev/shm), no server; and its bench.
#   make test-sqlite    strict builds (gcc, clang, C++17, LDL_STATIC, LDL_NO_ASYNC), then every suite
#                       (ASan+UBSan) on disk and on tmpfs, hostile under valgrind, and
#                       `ldl-run --sqlite` (tests/cli/sqlite_cli.sh) (about 45 s). sqlite_foreign
#                       creates (and removes) a second local user with useradd when run as root
#                       (decision 0804); every case has a time limit of its own (decision 0805)
#   make bench-sqlite   the lifecycle vs plain libsqlite3, flock(2), a renew's cost
#   make mutants-sqlite every mutant in tests/store/sqlite_mutants.txt killed (30; ~4.5 min)
# Decision records: docs/decisions/0801-0805. Details: docs/sqlite.md.

TEST_TARGETS += test-sqlite
DEPS_PKGS    += libsqlite3-dev sqlite3 passwd util-linux
DEPS_CMDS    += sqlite3
# sqlite_foreign (run as root, as CI does) makes a second local user: useradd/userdel, setpriv
DEPS_FILES   += /usr/include/sqlite3.h /usr/sbin/useradd /usr/sbin/userdel /usr/bin/setpriv

SQ_LIBS    = -lsqlite3
SQ_HDRS    = $(HDR) adapters/lite_di_lock_sqlite.h
SQ_THDRS   = $(SQ_HDRS) tests/store/fenced.h tests/store/conformance.h tests/store/sqlite_common.h
SQ_SUITES  = sqlite_conformance sqlite_contention sqlite_faults sqlite_fence sqlite_hostile sqlite_foreign
SQ_BUILDS  = $(B)/sqlite/build_c99 $(B)/sqlite/build_clang $(B)/sqlite/build_cxx17 $(B)/sqlite/build_static \
             $(B)/sqlite/build_noasync
SQ_TMPFS  ?= /dev/shm

.PHONY: test-sqlite bench-sqlite
test-sqlite: $(SQ_BUILDS) $(addprefix $(B)/sqlite/,$(SQ_SUITES)) $(B)/sqlite/sqlite_hostile_vg $(B)/cli/ldl-run-san
	@for b in $(SQ_BUILDS); do printf '== sqlite %-12s ' "$$(basename $$b):"; ./$$b || exit 1; done
	@for s in $(SQ_SUITES); do for d in disk $(SQ_TMPFS); do \
	  printf '== sqlite %-19s %-9s ' "$$s" "$$d:"; \
	  arg=$$d; [ $$d = disk ] && arg=; \
	  out=$$(./$(B)/sqlite/$$s $$arg 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi; done; done
	@printf '== sqlite hostile, valgrind: '; out=$$(valgrind -q --error-exitcode=9 --leak-check=full \
	  --errors-for-leak-kinds=definite ./$(B)/sqlite/sqlite_hostile_vg 2>&1); rc=$$?; \
	  echo "$$out" | tail -n 1; if [ $$rc != 0 ]; then echo "$$out"; exit 1; fi
	@printf '== ldl-run --sqlite:         '; sh tests/cli/sqlite_cli.sh ./$(B)/cli/ldl-run-san

# the suites: C99 with ASan + UBSan
$(B)/sqlite/sqlite_%: tests/store/sqlite_%.c $(SQ_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O1 -g $(WARN) $(SAN) -I. $< $(SQ_LIBS) -o $@

# memcheck once, without the sanitizers
$(B)/sqlite/sqlite_%_vg: tests/store/sqlite_%.c $(SQ_THDRS)
	@mkdir -p $(@D)
	$(CC) -std=c99 -O0 -g $(WARN) -I. $< $(SQ_LIBS) -o $@

# the adapter in every language and option it claims (no database file written)
$(call LDL_BUILD_MATRIX,$(B)/sqlite/build,tests/store/sqlite_build.c,$(SQ_HDRS),,SQ_LIBS,c99 clang cxx17 static noasync)
# ---------------------------------------------------------------- bench (not in make test)
bench-sqlite: $(B)/sqlite/bench_sqlite
	./$(B)/sqlite/bench_sqlite
$(B)/sqlite/bench_sqlite: bench/bench_sqlite.c bench/bench_util.h $(SQ_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -D_POSIX_C_SOURCE=200809L $(WARN) -I. -Ibench $< $(SQ_LIBS) -o $@

# every listed mutant of the adapter must turn a SQLite suite red (not in make test; ~5 min)
.PHONY: mutants-sqlite
mutants-sqlite:
	@B=$(B) sh tests/mutants/adapters.sh tests/store/sqlite_mutants.txt

# ldl-run --sqlite PATH (cli/ldl-run.c includes the adapter); its suite runs from test-sqlite
CLI_LIBS += -lsqlite3
$(CLI_BUILDS): adapters/lite_di_lock_sqlite.h

