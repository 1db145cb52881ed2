# mk/install.mk -- make install / make uninstall, pkg-config and CMake package
# files, ldl-run's install, and the packaging proof (docs/decisions/0601-install-layout.md,
# 0602-install-safety.md).
#   make install   PREFIX=/usr/local DESTDIR=   the library (headers, .pc files, CMake
#                  package; no compiler needed), then ldl-run and ldl-fence (mk/fence_cli.mk)
#                  into BINDIR when they can
#                  be built (WITH_CLI=auto: otherwise one "ldl-run skipped" line;
#                  WITH_CLI=yes: otherwise an error; WITH_CLI=no: never)
#   make install-headers                        the library alone
#   make install-cli                            ldl-run and ldl-fence alone (an error if they
#                                               cannot be built)
#   make uninstall PREFIX=... DESTDIR=...       removes exactly what install wrote
#   make test-pkg  install into a temp DESTDIR, build consumers four ways
#                  (pkg-config, CMake find_package, CMake add_subdirectory, Meson
#                  subproject), run them (adapters against real servers), uninstall;
#                  then tests/pkg/install_test.sh (unsafe paths, CC=false, BINDIR,
#                  a root install from a tree owned by nobody, the round trip)
# Every install and uninstall target first refuses a DESTDIR, PREFIX or *DIR with
# a character outside A-Z a-z 0-9 / . _ + - (or not absolute), before it writes or
# removes anything. The paths reach pkg/install.sh through the environment, quoted.
# Nothing is written in the source tree (generated files and the ldl-run build go
# to a mktemp dir), so `sudo make install` leaves no root-owned file in it.
# Other fragments hook their own files in by appending to INSTALL_TARGETS /
# UNINSTALL_TARGETS (and may use PREFIX, DESTDIR, BINDIR, DATADIR, INSTALL; their
# recipes should start with $(LDL_I_CHECK)).
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
WITH_CLI     ?= auto

INSTALL_TARGETS   += install-headers install-cli-auto
UNINSTALL_TARGETS += uninstall-headers uninstall-cli

LDL_I_RULES := install uninstall install-headers uninstall-headers install-cli \
  install-cli-auto uninstall-cli
# exported as they are (to every recipe, so a fragment's own install target sees
# them too), never pasted into a shell line
export LDL_I_DESTDIR = $(DESTDIR)
export LDL_I_PREFIX = $(PREFIX)
export LDL_I_BINDIR = $(BINDIR)
export LDL_I_INCLUDEDIR = $(INCLUDEDIR)
export LDL_I_DATADIR = $(DATADIR)
export LDL_I_PKGCONFIGDIR = $(PKGCONFIGDIR)
export LDL_I_CMAKEDIR = $(CMAKEDIR)
export LDL_I_INSTALL = $(INSTALL)
export LDL_I_WITH_CLI = $(WITH_CLI)
export LDL_I_MAKE = $(MAKE)
export LDL_I_CC = $(CC)
export LDL_I_CLI_INC = $(CLI_INC)
export LDL_I_CLI_LIBS = $(CLI_LIBS)
LDL_I_CHECK = sh pkg/install.sh check

.PHONY: $(LDL_I_RULES) test-pkg test-pkg-install
# The check first, then a sub-make, so the lists are read after every fragment
# has appended to them.
install:
	@$(LDL_I_CHECK) install
	@$(MAKE) --no-print-directory $(INSTALL_TARGETS)
uninstall:
	@$(LDL_I_CHECK) uninstall
	@$(MAKE) --no-print-directory $(UNINSTALL_TARGETS)

install-headers:
	@sh pkg/install.sh headers
uninstall-headers:
	@sh pkg/install.sh uninstall-headers
# ldl-run and ldl-fence (mk/cli.mk and mk/fence_cli.mk build them; built here into a
# temp dir with those same rules)
install-cli:
	@sh pkg/install.sh cli
install-cli-auto:
	@sh pkg/install.sh cli-auto
uninstall-cli:
	@sh pkg/install.sh uninstall-cli

# The packaging proof: tests/pkg/run.sh (about a minute; starts its own
# redis-server and PostgreSQL on 127.0.0.1 through tests/store/with_*.sh), then
# tests/pkg/install_test.sh (test-pkg-install alone; seconds).
test-pkg:
	@sh tests/pkg/run.sh
	@sh tests/pkg/install_test.sh
test-pkg-install:
	@sh tests/pkg/install_test.sh

# One version everywhere (issue 30): the header's numbers against the string, the top
# comment, CHANGELOG, both CLIs' -V, make install's line, pkg-config, CMake and Meson.
TEST_TARGETS += test-version
.PHONY: test-version
test-version:
	@sh tests/pkg/version_test.sh
