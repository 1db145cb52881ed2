#!/usr/bin/env python3
# tests/store/redis_fake_node.py -- a small HOSTILE RESP node for the Redis and Redis Cluster
# suites: it misbehaves in ways a real redis-server cannot be made to (a map naming a host
# name, a map dripped a byte at a time, a 4,000,000-element reply, overlapping slot ranges,
# a replayed reply). Test code, not shipped.
#
#   python3 tests/store/redis_fake_node.py PORT MODE [ARG]
#
# Listens on 127.0.0.1:PORT, one thread per connection. Commands are RESP arrays of bulk
# strings. CLUSTER SLOTS, EVALSHA/EVAL, ASKING, WAIT answer as MODE says; anything else +OK.
#   hostname   map #1: every slot on this node; later maps: every slot on
#              "silent.ldl-test.invalid":PORT. Scripts answer MOVED to this node.
#   drip       map #1 as above; later maps dripped one byte per 300 ms. Scripts: MOVED here.
#   hugeask    scripts answer "ASK 1 <this node>"; ASKING answers a 4,000,000-element array.
#   churn      every map: this node master of every slot, with 3 replicas on ports never used
#              before (pods coming back with new addresses).
#   ask15      ARG = a real redis-server's port. Scripts 1..15 answer ASK to 15 distinct dead
#              ports; later scripts answer MOVED to 127.0.0.1:ARG.
#   overlap    a map of 16384 entries, each covering every slot.
#   bigport    a map whose master port is 2^32 + PORT (truncated to PORT by an int cast).
#   replay     a script's first answer is a correct grant ("<its nonce> 77", the string answer
#              of decision 0118); every later
#              script is answered with that same first reply again.
#   moved      scripts answer "MOVED 3999 127.0.0.1:7002".
#   answer     scripts answer the string "<their nonce> ARG" (the lock scripts' answer, decision
#              0118): ARG a good or a malformed value.
#   othernonce scripts answer the string "0123456789abcdef 77" (another call's nonce).
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True                   # no __pycache__ in the source tree
from resp_wire import bulk, read_command   # noqa: E402 (tests/store/resp_wire.py, beside this script)

PORT = int(sys.argv[1])
MODE = sys.argv[2]
ARG = sys.argv[3] if len(sys.argv) > 3 else ""
LOCK = threading.Lock()
STATE = {"maps": 0, "scripts": 0, "first": None, "churn": 0}


def node(host, port):
    return b"*2\r\n" + bulk(host) + b":%d\r\n" % port


def full_map(host, port, replicas=()):
    out = b"*1\r\n*%d\r\n:0\r\n:16383\r\n" % (3 + len(replicas)) + node(host, port)
    for r in replicas:
        out += node("127.0.0.1", r)
    return out


def answer_map(conn):
    with LOCK:
        STATE["maps"] += 1
        n = STATE["maps"]
    if MODE == "hostname":
        return full_map("127.0.0.1" if n == 1 else "silent.ldl-test.invalid", PORT)
    if MODE == "drip" and n > 1:
        text = full_map("127.0.0.1", PORT, (PORT + 1, PORT + 2, PORT + 3))
        for i in range(len(text)):
            conn.sendall(text[i:i + 1])
            time.sleep(0.3)
        return b""
    if MODE == "churn":
        with LOCK:
            STATE["churn"] += 1
            k = STATE["churn"]
        base = 20000 + (PORT + 7 * k) % 20000
        return full_map("127.0.0.1", PORT, (base, base + 1, base + 2))
    if MODE == "overlap":
        entry = b"*3\r\n:0\r\n:16383\r\n" + node("127.0.0.1", PORT)
        return b"*16384\r\n" + entry * 16384
    if MODE == "bigport":
        return b"*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n" + bulk("127.0.0.1") + b":%d\r\n" % ((1 << 32) + PORT)
    return full_map("127.0.0.1", PORT)


def answer_script(args):
    with LOCK:
        STATE["scripts"] += 1
        n = STATE["scripts"]
    nonce = args[-1]
    if MODE == "replay":
        with LOCK:
            if STATE["first"] is None:
                STATE["first"] = bulk(nonce + b" 77")
            return STATE["first"]
    if MODE == "hugeask":
        return b"-ASK 1 127.0.0.1:%d\r\n" % PORT
    if MODE == "ask15":
        if n <= 15:
            return b"-ASK 1 127.0.0.1:%d\r\n" % (PORT + 100 + n)
        return b"-MOVED 1 127.0.0.1:%s\r\n" % ARG.encode()
    if MODE == "moved":
        return b"-MOVED 3999 127.0.0.1:7002\r\n"
    if MODE == "answer":
        return bulk(nonce + b" " + ARG.encode())
    if MODE == "othernonce":
        return bulk(b"0123456789abcdef 77")
    return b"-MOVED 1 127.0.0.1:%d\r\n" % PORT


def serve(conn):
    f = conn.makefile("rb")
    try:
        while True:
            args = read_command(f)
            if args is None:
                return
            cmd = args[0].upper() if args else b""
            if cmd == b"CLUSTER" and len(args) > 1 and args[1].upper() == b"SLOTS":
                out = answer_map(conn)
            elif cmd in (b"EVALSHA", b"EVAL"):
                out = answer_script(args)
            elif cmd == b"ASKING" and MODE == "hugeask":
                conn.sendall(b"*4000000\r\n")
                out = b":1\r\n" * 4000000
            elif cmd == b"WAIT":
                out = b":0\r\n"
            else:
                out = b"+OK\r\n"
            if out:
                conn.sendall(out)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", PORT))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
