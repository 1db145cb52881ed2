#!/usr/bin/env python3
# freeze_proxy.py PORTFILE HOST PORT -- a TCP relay for the ldl-run suite.
# Listens on 127.0.0.1 (a free port, written to PORTFILE once it listens) and relays
# every connection to HOST:PORT, both ways. SIGSTOP on this process freezes the link
# for the clients behind it only: the kernel still completes their TCP handshakes and
# takes their bytes, nothing reaches the store or comes back -- a frozen store as one
# host sees it, while the others talk to the store directly. SIGCONT thaws it.
import os
import selectors
import socket
import sys


def main():
    portfile, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, portfile)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    peer = {}

    def close(s):
        for x in (s, peer.get(s)):
            if x is None:
                continue
            peer.pop(x, None)
            try:
                sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()

    while True:
        for key, _ in sel.select():
            s = key.fileobj
            if s is ls:
                c, _ = ls.accept()
                try:
                    u = socket.create_connection((host, port), timeout=5)
                except OSError:
                    c.close()
                    continue
                u.settimeout(None)
                peer[c] = u
                peer[u] = c
                sel.register(c, selectors.EVENT_READ, None)
                sel.register(u, selectors.EVENT_READ, None)
                continue
            if s not in peer:
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                close(s)
                continue
            try:
                peer[s].sendall(data)
            except OSError:
                close(s)


if __name__ == "__main__":
    main()
