#!/bin/sh
# with_redis.sh PROGRAM [ARGS...] -- run a Redis test program in a fresh temp dir; the
# program starts, crashes and restarts its own redis-server(s) on 127.0.0.1, and
# tests/store/with_servers.sh kills whatever is left on any exit.
exec "$(dirname "$0")/with_servers.sh" redis-server redis-server redis "$@"
