#!/usr/bin/env python3
"""etcd_holdproxy.py UPSTREAM_PORT DIR -- a loopback TCP forwarder in front of a REAL etcd
member, for tests/store/etcd_session.c "retry" (issue 34, decision 1013): it makes an acquire
txn's reply go missing after the server decided it, so the adapter's retry must tell its
own committed attempt from a sibling's key.

It listens on 127.0.0.1 (a free port, written to DIR/port once it accepts) and forwards
every connection, byte for byte, to 127.0.0.1:UPSTREAM_PORT. The server decides everything;
the proxy only ever withholds a reply:

  DIR/hold  when this file exists, the next request that carries "request_put" and the
            bytes the file holds (the base64 etcd key of one lock) consumes the file: the
            request is forwarded, and every byte the server answers on that connection is
            dropped (never sent), until the client gives up and closes it (attempt_ms).
  DIR/held  the number of replies dropped so far (written once the server's answer to a
            held request has arrived, i.e. the server did decide it).

It forwards nothing else and changes nothing. The test stops it by pid (its pid file is
in $LDL_TEST_DIR, so tests/store/with_servers.sh kills it on any exit)."""
import os
import socket
import sys
import threading

UP = int(sys.argv[1])
DIR = sys.argv[2]
HOLD = os.path.join(DIR, "hold")
LOCK = threading.Lock()
HELD = [0]


def write_atomic(name, text):
    tmp = os.path.join(DIR, name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(DIR, name))


def take_hold(window):
    """True when a hold is armed and this request window names its key (consumes it)."""
    with LOCK:
        try:
            with open(HOLD, "rb") as f:
                mark = f.read().strip()
        except OSError:
            return False
        if not mark or mark not in window or b"request_put" not in window:
            return False
        os.unlink(HOLD)
        return True


def shut(*socks):
    """one side ended: end both directions of both sockets (the other pump wakes up)"""
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def client_to_server(c, u, st):
    tail = b""
    try:
        while True:
            data = c.recv(65536)
            if not data:
                break
            window = tail + data
            if not st["drop"] and take_hold(window):
                st["drop"] = True          # set before the request leaves: its reply is held
                window = b""
            tail = window[-8192:]
            u.sendall(data)
    except OSError:
        pass
    shut(u, c)


def server_to_client(c, u, st):
    try:
        while True:
            data = u.recv(65536)
            if not data:
                break
            if st["drop"]:
                if not st["counted"]:
                    st["counted"] = True
                    with LOCK:
                        HELD[0] += 1
                        write_atomic("held", "%d\n" % HELD[0])
                continue
            c.sendall(data)
    except OSError:
        pass
    shut(c, u)


def serve(c):
    try:
        u = socket.create_connection(("127.0.0.1", UP), timeout=5)
        u.settimeout(None)
    except OSError:
        c.close()
        return
    for s in (c, u):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    st = {"drop": False, "counted": False}
    t = threading.Thread(target=server_to_client, args=(c, u, st), daemon=True)
    t.start()
    client_to_server(c, u, st)
    t.join()
    c.close()
    u.close()


def main():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    write_atomic("held", "0\n")
    write_atomic("port", "%d\n" % ls.getsockname()[1])
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
