#!/bin/sh
# tests/store/contract/mutant_suite.sh ADAPTER -- the contract suite as the suite of one mutant
# (tests/mutants/adapters.sh runs it with MUT_DIR = the directory holding the mutated adapter
# copy): builds tests/store/contract/contract_ADAPTER.c with -I"$MUT_DIR" before -I. (the
# mutant wins), runs it under its harness as mk/contract.mk does, and exits with its status
# (3 and "BUILD-ERROR" when it does not compile). Test code.
set -u
a=${1:?usage: mutant_suite.sh ADAPTER}
: "${MUT_DIR:?run me from tests/mutants/adapters.sh}"
CC=${CC:-cc}
PG_INC=$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
case $a in
  sqlite)        libs=-lsqlite3; run="" ;;
  redis)         libs=-lhiredis; run=tests/store/with_redis.sh ;;
  redis_cluster) libs=-lhiredis; run=tests/store/with_redis_cluster.sh ;;
  etcd)          libs="-lcurl -lcjson"; run=tests/store/with_etcd.sh ;;
  pg)            libs=-lpq; run="env LDL_PG_WAL_LEVEL=logical tests/store/with_pg_standby.sh sync" ;;
  *) echo "unknown adapter $a"; exit 2 ;;
esac
bin=$MUT_DIR/contract_$a
if ! $CC -std=c99 -O1 -g -w -I"$MUT_DIR" -I. -I"$PG_INC" "tests/store/contract/contract_$a.c" $libs -o "$bin"; then
    echo "BUILD-ERROR"; exit 3
fi
cli=${LDL_CONTRACT_CLI:-$(pwd)/${B:-build}/cli/ldl-run-san}
LDL_CONTRACT_CLI=$cli $run "$bin"
