# mk/install.mk -- make install / make uninstall, pkg-config and CMake package
# files, and the packaging proof (docs/decisions/0601-install-layout.md).
#   make install   PREFIX=/usr/local DESTDIR=   headers, .pc files, CMake package
#   make uninstall PREFIX=... DESTDIR=...       removes exactly what install wrote
#   make test-pkg  install into a temp DESTDIR, build consumers four ways
#                  (pkg-config, CMake find_package, CMake add_subdirectory, Meson
#                  subproject), run them (adapters against real servers), uninstall
# Other fragments hook their own files in by appending to INSTALL_TARGETS /
# UNINSTALL_TARGETS (and may use PREFIX, DESTDIR, BINDIR, DATADIR, INSTALL).
# The version in every generated file comes from lite_di_lock.h (pkg/version.sh).

TEST_TARGETS += test-pkg
DEPS_PKGS    += cmake meson ninja-build pkg-config
DEPS_CMDS    += cmake meson ninja pkg-config

PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
INCLUDEDIR   ?= $(PREFIX)/include
DATADIR      ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(DATADIR)/pkgconfig
CMAKEDIR     ?= $(DATADIR)/cmake/lite_di_lock
INSTALL      ?= install

INSTALL_TARGETS   += install-headers
UNINSTALL_TARGETS += uninstall-headers

# what install-headers writes, relative to nothing: every path below is final
LDL_I_HDRS  := $(INCLUDEDIR)/lite_di_lock.h
# every adapter header in the tree (a new adapter is installed without an edit here)
LDL_I_ADPH  := $(sort $(wildcard adapters/lite_di_lock_*.h))
LDL_I_ADPS  := $(addprefix $(INCLUDEDIR)/lite_di_lock/,$(notdir $(LDL_I_ADPH)))
LDL_I_PCS   := $(addprefix $(PKGCONFIGDIR)/,lite_di_lock.pc lite_di_lock_redis.pc lite_di_lock_pg.pc)
LDL_I_CMAKE := $(addprefix $(CMAKEDIR)/,lite_di_lockConfig.cmake lite_di_lockConfigVersion.cmake lite_di_lockDeps.cmake)
LDL_I_SRC   := $(DATADIR)/lite_di_lock/lite_di_lock.c
# the directories that are ours alone (removed by uninstall when empty)
LDL_I_DIRS  := $(INCLUDEDIR)/lite_di_lock $(CMAKEDIR) $(DATADIR)/lite_di_lock

.PHONY: install uninstall install-headers uninstall-headers test-pkg
# A sub-make, so the lists are read after every fragment has appended to them.
install:
	@$(MAKE) --no-print-directory $(INSTALL_TARGETS)
uninstall:
	@$(MAKE) --no-print-directory $(UNINSTALL_TARGETS)

# @INCLUDEDIR_PC@: the include dir written as ${prefix}/... when it is under PREFIX
LDL_I_SUBST = sed -e 's|@VERSION@|'"$$v"'|g' -e 's|@PREFIX@|$(PREFIX)|g' \
  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
  -e 's|@INCLUDEDIR_PC@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g'

install-headers:
	@case "$(PREFIX)$(DESTDIR)$(INCLUDEDIR)$(DATADIR)$(PKGCONFIGDIR)$(CMAKEDIR)" in \
	  *' '*|*'|'*) echo "install: PREFIX, DESTDIR and the dirs must not contain spaces or '|'" >&2; exit 1;; esac
	@case "$(PREFIX)" in /*) ;; *) echo "install: PREFIX must be an absolute path (got '$(PREFIX)')" >&2; exit 1;; esac
	@v=$$(sh pkg/version.sh $(HDR)) || exit 1; set -e; \
	  gen=$(B)/install; rm -rf $$gen; mkdir -p $$gen; \
	  for f in lite_di_lock lite_di_lock_redis lite_di_lock_pg; do \
	    $(LDL_I_SUBST) pkg/$$f.pc.in > $$gen/$$f.pc; done; \
	  $(LDL_I_SUBST) cmake/lite_di_lockConfig.cmake.in > $$gen/lite_di_lockConfig.cmake; \
	  $(LDL_I_SUBST) cmake/lite_di_lockConfigVersion.cmake.in > $$gen/lite_di_lockConfigVersion.cmake; \
	  if grep -n '@[A-Z_]*@' $$gen/*; then echo "install: a template placeholder was left" >&2; exit 1; fi; \
	  $(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/lite_di_lock $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(DATADIR)/lite_di_lock; \
	  $(INSTALL) -m 644 $(HDR) $(DESTDIR)$(INCLUDEDIR)/; \
	  $(INSTALL) -m 644 $(LDL_I_ADPH) $(DESTDIR)$(INCLUDEDIR)/lite_di_lock/; \
	  $(INSTALL) -m 644 $$gen/lite_di_lock.pc $$gen/lite_di_lock_redis.pc $$gen/lite_di_lock_pg.pc $(DESTDIR)$(PKGCONFIGDIR)/; \
	  $(INSTALL) -m 644 $$gen/lite_di_lockConfig.cmake $$gen/lite_di_lockConfigVersion.cmake \
	    cmake/lite_di_lockDeps.cmake $(DESTDIR)$(CMAKEDIR)/; \
	  $(INSTALL) -m 644 lib/lite_di_lock.c $(DESTDIR)$(DATADIR)/lite_di_lock/; \
	  echo "installed lite_di_lock $$v under $(DESTDIR)$(PREFIX)"

uninstall-headers:
	rm -f $(addprefix $(DESTDIR),$(LDL_I_HDRS) $(LDL_I_ADPS) $(LDL_I_PCS) $(LDL_I_CMAKE) $(LDL_I_SRC))
	@for d in $(addprefix $(DESTDIR),$(LDL_I_DIRS)); do [ ! -d $$d ] || rmdir $$d 2>/dev/null || \
	  echo "uninstall: $$d is not empty (files not installed by make install): kept" >&2; done

# The packaging proof: tests/pkg/run.sh (about a minute; starts its own
# redis-server and PostgreSQL on 127.0.0.1 through tests/store/with_*.sh).
test-pkg:
	@sh tests/pkg/run.sh
