#!/usr/bin/env python3
"""etcd_fake.py PORTFILE -- a hostile stand-in for etcd's JSON gateway (test code).

Listens on 127.0.0.1 on a free port (written to PORTFILE) and answers the gateway paths
the adapter uses (/v3/lease/grant, /v3/kv/txn, /v3/kv/range, /v3/lease/keepalive,
/v3/lease/revoke, /v3/lease/timetolive) with well-formed replies (fence 5, lease 7,
cluster 1), EXCEPT on the path the current mode targets, where it misbehaves.
POST /_mode with body "MODE PATH" sets it ("ok *" = behave). Modes:
  garbage  huge  manynodes  http500  nobody  array  hang  dupkey  othercluster  otherkey
  revnum  revtext  revneg  revzero  revbig  revobj  succstr  noresult  idtext
the acquire txn's success reply, not bound to this request (decision 1010):
  canned (a bare "succeeded" + put response: no key, no lease)  twoput (two put
  responses, no range)  wronglease (the key
  carries another lease)  oldkey (the key was created before this txn)
the fenced write's txn: fencecanned (a bare "succeeded" with the write's response, no
  range of the lock key)  fencenowrite (the range, no write response)  fenceother (the
  range shows another fence)
the lease grant: shortttl (a TTL one second below the one asked for; POST /_revokes
  answers the lease ids revoked since the last ask)
and, not hostile, three txn answers the adapter must read right:
  ownlease (the key carries our lease)  otherlease (another's)  gone (no key)
It is not etcd: it only lets tests/store/etcd_hostile.c check that every reply that does
not provably answer the request is a store error, never a grant.
"""
import json, sys, time, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = ["ok", "*"]
REVOKES = []
LOCK = threading.Lock()


def header(rev="5", cluster="1"):
    return {"cluster_id": cluster, "member_id": "2", "revision": rev, "raft_term": "3"}


def is_fenced(req):
    """a fenced write's txn: compare the lock key, then range it and write ANOTHER key"""
    succ = req.get("success", [])
    if "compare" not in req or len(succ) != 2:
        return False
    lock = req["compare"][0]["key"]
    w = succ[1].get("request_put") or succ[1].get("request_delete_range") or {}
    return "request_range" in succ[0] and w.get("key") not in (None, lock)


def valid(path, req):
    key = req.get("key", "")
    if path == "/v3/kv/txn":
        key = req["compare"][0]["key"]
        cr = req["compare"][0].get("create_revision", "0")
        kv = {"key": key, "create_revision": "5", "mod_revision": "5", "version": "1",
              "value": "", "lease": "7"}
        if is_fenced(req):
            # a fenced write (ldl_etcd_fenced): the lock key holds the fence asked for
            fk = dict(kv, create_revision=cr, mod_revision=cr)
            op = "response_put" if "request_put" in req["success"][1] else "response_delete_range"
            return {"header": header("6"), "succeeded": True,
                    "responses": [{"response_range": {"header": {"revision": "6"}, "kvs": [fk], "count": "1"}},
                                  {op: {"header": {"revision": "6"}}}]}
        if cr == "0":  # acquire: the put succeeds; the range after it shows the key with
            # the lease the request put, created by this put (the reply's proof)
            lease = req["success"][0]["request_put"].get("lease", "0")
            mine = dict(kv, lease=lease)
            return {"header": header(), "succeeded": True,
                    "responses": [{"response_put": {"header": {"revision": "5"}}},
                                  {"response_range": {"header": {"revision": "5"}, "kvs": [mine], "count": "1"}}]}
        return {"header": header("6"), "succeeded": True,
                "responses": [{"response_range": {"header": {"revision": "5"}, "kvs": [kv], "count": "1"}},
                              {"response_delete_range": {"header": {"revision": "6"}, "deleted": "1"}}]}
    if path == "/v3/lease/grant":
        return {"header": header(), "ID": "7", "TTL": req.get("TTL", "1")}
    if path == "/v3/kv/range":
        return {"header": header(), "count": "1",
                "kvs": [{"key": key, "create_revision": "5", "mod_revision": "5", "version": "1",
                         "value": "", "lease": "7"}]}
    if path == "/v3/lease/keepalive":
        return {"result": {"header": header(), "ID": "7", "TTL": "30"}}
    if path == "/v3/lease/timetolive":
        return {"header": header(), "ID": "7", "TTL": "20", "grantedTTL": "30"}
    return {"header": header()}  # revoke


def set_rev(obj, value):
    h = obj["result"]["header"] if "result" in obj else obj["header"]
    h["revision"] = value


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        if self.path == "/_mode":
            with LOCK:
                MODE[:] = raw.decode().split()
            return self.reply(200, "{}")
        if self.path == "/_revokes":
            with LOCK:
                ids = list(REVOKES)
                REVOKES[:] = []
            return self.reply(200, json.dumps({"ids": ids}))
        try:
            req = json.loads(raw)
        except ValueError:
            return self.reply(400, '{"error":"bad json","code":3}')
        with LOCK:
            mode, target = MODE
            if self.path == "/v3/lease/revoke":
                REVOKES.append(req.get("ID", ""))
        body = valid(self.path, req)
        if mode == "ok" or (target != "*" and target != self.path):
            return self.reply(200, json.dumps(body))
        if mode == "garbage":
            return self.reply(200, "}{ not json \x01")
        if mode == "huge":
            return self.reply(200, '{"header":{"revision":"5","cluster_id":"1"},"pad":"' + "x" * (1 << 20) + '"}')
        if mode == "manynodes":  # under the byte bound, over the value bound
            return self.reply(200, '{"header":{"revision":"5","cluster_id":"1"},"pad":[' + ",".join(["0"] * 1400) + ']}')
        if mode == "http500":
            return self.reply(500, '{"error":"boom","message":"boom","code":13}')
        if mode == "nobody":
            return self.reply(200, "")
        if mode == "array":
            return self.reply(200, "[" + json.dumps(body) + "]")
        if mode == "hang":
            time.sleep(20)
            return self.reply(200, json.dumps(body))
        if mode == "dupkey":
            text = json.dumps(body).replace('"revision": "5"', '"revision": "5", "revision": "9"', 1)
            return self.reply(200, text)
        if mode == "othercluster":
            h = body["result"]["header"] if "result" in body else body["header"]
            h["cluster_id"] = "99" if self.path != "/v3/lease/grant" else "98"
            return self.reply(200, json.dumps(body))
        if mode == "otherkey":
            for r in body.get("responses", []) + [body]:
                for kvs in [r.get("kvs"), r.get("response_range", {}).get("kvs")]:
                    if kvs:
                        kvs[0]["key"] = "b3RoZXI="
            return self.reply(200, json.dumps(body))
        if mode == "succstr":
            body["succeeded"] = "true"
            return self.reply(200, json.dumps(body))
        if mode == "noresult":
            body = body.get("result", body)
            body.pop("header", None)
            return self.reply(200, json.dumps(body))
        if mode == "idtext":
            tgt = body.get("result", body)
            tgt["ID"] = "seven"
            for r in body.get("responses", []):
                for v in r.values():
                    for kv in v.get("kvs", []):
                        kv["create_revision"] = "five"
                        kv["lease"] = "seven"
            for kv in body.get("kvs", []):
                kv["create_revision"] = "five"
                kv["lease"] = "seven"
            return self.reply(200, json.dumps(body))
        if mode in ("ownlease", "otherlease") and self.path == "/v3/kv/txn":
            # the put's compare failed; the range shows the key with our lease (an earlier
            # attempt of the same call committed) or with another holder's
            key = req["compare"][0]["key"]
            kv = {"key": key, "create_revision": "4", "mod_revision": "4", "version": "1", "value": "",
                  "lease": "7" if mode == "ownlease" else "8"}
            return self.reply(200, json.dumps({"header": header(), "responses": [
                {"response_range": {"header": {"revision": "5"}, "kvs": [kv], "count": "1"}}]}))
        acquire_ok = self.path == "/v3/kv/txn" and body.get("succeeded") and \
            "response_put" in body["responses"][0]
        if mode == "canned" and acquire_ok:
            body["responses"] = body["responses"][:1]
            return self.reply(200, json.dumps(body))
        if mode == "twoput" and acquire_ok:
            body["responses"][1] = body["responses"][0]
            return self.reply(200, json.dumps(body))
        if mode == "wronglease" and acquire_ok:
            body["responses"][1]["response_range"]["kvs"][0]["lease"] = "8"
            return self.reply(200, json.dumps(body))
        if mode == "oldkey" and acquire_ok:
            kv = body["responses"][1]["response_range"]["kvs"][0]
            kv["create_revision"], kv["version"] = "4", "2"
            return self.reply(200, json.dumps(body))
        fenced_ok = self.path == "/v3/kv/txn" and is_fenced(req)
        if mode == "fencecanned" and fenced_ok:
            body["responses"] = body["responses"][1:]
            return self.reply(200, json.dumps(body))
        if mode == "fencenowrite" and fenced_ok:
            body["responses"] = body["responses"][:1]
            return self.reply(200, json.dumps(body))
        if mode == "fenceother" and fenced_ok:
            body["responses"][0]["response_range"]["kvs"][0]["create_revision"] = "4"
            return self.reply(200, json.dumps(body))
        if mode == "shortttl" and self.path == "/v3/lease/grant":
            body["TTL"] = str(max(0, int(req.get("TTL", "1")) - 1))
            return self.reply(200, json.dumps(body))
        if mode == "gone" and self.path == "/v3/kv/txn":
            # the release's compare failed and the key is absent
            return self.reply(200, json.dumps({"header": header(), "responses": [
                {"response_range": {"header": {"revision": "5"}}}]}))
        revs = {"revnum": 5, "revtext": "abc", "revneg": "-3", "revzero": "0",
                "revbig": "99999999999999999999", "revobj": {"n": "5"}}
        if mode in revs:
            set_rev(body, revs[mode])
            return self.reply(200, json.dumps(body))
        return self.reply(200, json.dumps(body))


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    srv.serve_forever()


if __name__ == "__main__":
    main()
