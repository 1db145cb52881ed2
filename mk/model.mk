# mk/model.mk -- the lifecycle model (issue 36): tests/model/lock.pml, checked by Spin.
#   make test-model   the small bounds exhaustively (two configurations), each planted
#                     model mutant must produce a counterexample to its own property,
#                     and trace validation: the fuzz replays' traces (LDL_MODEL_TRACE)
#                     checked step by step against the model, a planted header bug caught
#                     (about 1.5 minutes; part of make test)
#   make model        larger bounds (TTL 3 and 4, drift 2, three clients; minutes, not in make test)
# Memory: pan stops at MODEL_MEMLIM MB (default 2048) rather than swap.
# Scope and abstractions: docs/decisions/0013-lifecycle-model.md; docs/TESTING.md.

TEST_TARGETS += test-model
DEPS_PKGS    += spin
DEPS_CMDS    += spin

.PHONY: test-model model
test-model:
	@CC="$(CC)" B="$(B)" sh tests/model/run.sh small

model:
	@CC="$(CC)" B="$(B)" sh tests/model/run.sh large
