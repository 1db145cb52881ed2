#!/usr/bin/env python3
# tests/store/contract/resp_tree.py PORTFILE -- a hostile RESP node for the contract suite's
# reply_bounded case (Redis and Redis Cluster). Test code, not shipped.
#
# Listens on 127.0.0.1 on a free port (written to PORTFILE once it listens), one thread per
# connection. CLUSTER SLOTS answers a map with every slot on this node (so a Cluster view
# routes here); every other command (the lock scripts: EVALSHA / EVAL) answers a 16-ary array
# tree 5 levels deep whose leaves are :1 -- a million objects, about 4.5 MB -- which a real
# redis-server never sends in answer to a lock script. The adapter must refuse it without
# parsing it whole.
import os
import socket
import sys
import threading

sys.dont_write_bytecode = True                   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from resp_wire import bulk, read_command   # noqa: E402 (tests/store/resp_wire.py)


def tree(depth):
    if depth == 0:
        return b":1\r\n"
    inner = tree(depth - 1)
    return b"*16\r\n" + inner * 16


TREE = tree(5)


def serve(conn, port):
    f = conn.makefile("rb")
    try:
        while True:
            args = read_command(f)
            if args is None:
                return
            name = b" ".join(a.upper() for a in args[:2])
            if name == b"CLUSTER SLOTS":
                conn.sendall(b"*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n" + bulk(b"127.0.0.1") + b":%d\r\n" % port)
            elif args[0].upper() in (b"EVALSHA", b"EVAL"):
                conn.sendall(TREE)
            else:
                conn.sendall(b"+OK\r\n")
    except (OSError, ValueError):
        return
    finally:
        conn.close()


def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    port = s.getsockname()[1]
    with open(sys.argv[1] + ".tmp", "w") as pf:
        pf.write("%d\n" % port)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, port), daemon=True).start()


main()
