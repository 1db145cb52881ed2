#!/usr/bin/env python3
# tests/store/contract/etcd_padded.py PORTFILE -- the contract suite's reply_bounded fake for
# etcd (test code): tests/store/etcd_fake.py's well-behaved gateway, except that every txn
# reply -- a correct, provable grant -- carries 1,000 extra JSON values ("pad"): over the
# adapter's parsed-value bound (LDL_ETCD_REPLY_NODES, 128), under its byte bound (4 KiB).
# A real etcd never sends it; only the value bound can refuse it, so the case goes red
# when that bound is gone.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import etcd_fake  # noqa: E402

_valid = etcd_fake.valid


def padded(path, req):
    body = _valid(path, req)
    if path == "/v3/kv/txn":
        body["pad"] = [0] * 1000
    return body


etcd_fake.valid = padded
etcd_fake.main()
