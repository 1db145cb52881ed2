#!/bin/sh
# with_etcd.sh PROGRAM [ARGS...] -- run an etcd test program in a fresh temp dir; the
# program starts, freezes and restarts its own etcd member(s) on 127.0.0.1
# (tests/store/etcd_common.h), and tests/store/with_servers.sh kills whatever is left on
# any exit.
exec "$(dirname "$0")/with_servers.sh" etcd etcd-server etcd "$@"
