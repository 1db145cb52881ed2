#!/usr/bin/env python3
# hostile_resp.py PORTFILE -- a hostile "Redis" for the ldl-run suite: listens on
# 127.0.0.1 (a free port, written to PORTFILE), and answers whatever a client sends
# with one RESP error whose text holds terminal control bytes (ESC sequences, a C1
# CSI 0x9B, a bidi override). A real redis-server never says such a thing on its own;
# the suite checks that none of these bytes reaches ldl-run's stderr raw.
import os
import socket
import sys
import threading

ERR = b"-ERR \x1b]0;owned\x07\x1b[2J \x9b31m \xe2\x80\xae evil\r\n"


def serve(c):
    try:
        while c.recv(65536):
            c.sendall(ERR)
    except OSError:
        pass
    c.close()


def main():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, sys.argv[1])
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
