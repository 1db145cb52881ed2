# tests/store/resp_wire.py -- the RESP pieces the hostile Redis fakes share: a bulk string
# out, a command in. Imported by tests/store/redis_fake_node.py and
# tests/store/contract/resp_tree.py. Test code, not shipped.


def bulk(s):
    """one RESP bulk string (s: str or bytes)"""
    b = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(b), b)


def read_command(f):
    """the next command from the binary stream f as a list of bytes (an inline command:
    split on blanks); None at the end of the stream"""
    line = f.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return line.split()
    args = []
    for _ in range(int(line[1:])):
        hdr = f.readline()
        n = int(hdr[1:])
        args.append(f.read(n + 2)[:n])
    return args
