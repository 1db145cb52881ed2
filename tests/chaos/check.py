#!/usr/bin/env python3
"""tests/chaos/check.py -- the history checker of the chaos campaign (issue 14).

    check.py DIR                  judge DIR (h-*.log, res.log, nemesis.log); exit 1 on a violation
    check.py --expect 1,3 DIR     a planted control: exit 0 only if every listed check is violated
    check.py --probe DIR          as the first, and (6) must catch each of a few damaged copies of
                                  the real store's dump (see probe_real)
    check.py --no-real DIR        as the first, for a store with no real resource (etcd)

Checks (docs/TESTING.md, "Chaos campaign"), all in CLOCK_MONOTONIC milliseconds of one host:
  (1) no stale write accepted: per key the resource accepted fences in order and never one token
      from two holders; every accepted write was decided inside its writer's trust window; no
      accepted write was decided after a holder with a higher token already knew it held the key
  (2) per key, tokens of successive grants strictly increase (server restarts included)
  (3) trust windows [known, end) of different holders of one key never overlap, where end is the
      real time the holder's own clock (offset steps included) reached start + ttl - drift, or
      its release / loss, whichever came first
  (4) every loss reported with the right reason, and on_lost exactly once
  (5) no key stays blocked past one TTL + SLACK_MS after its holder died or froze, plus what the
      nemesis did meanwhile (see the comment at the check)
  (6) the real store (issue 19): what the store under test itself accepted, dumped from it after
      the run (real.log, real-data.log), holds no stale write -- see check_real()

Failover rounds (issue 20, decision 0404: run.sh pg-failover): the nemesis log brackets each
unclean failover with "skill failover" ... "sup". Two trust windows of one key that overlap
ACROSS a failover (the earlier grant known before the failover ended, the later one known after
it began) are COUNTED and printed, not failed: after an unclean failover the lease may be gone
(an asynchronous standby) and the fence is what protects the resource then. For the same
reason a write of the older holder that the resource accepted after the newer one knew (the
last clause of (1)) is counted when the two straddle a failover. Everything else keeps its rule:
a repeated or regressed fence (2), a resource or real-store write accepted out of fence order
(1, 6), an acknowledged write missing from the store's log (6) fail as always.

    check.py --counted DIR      the failover control o: exit 0 only if DIR has NO violation and
                                at least one overlap across a failover was counted

Redis Cluster failover rounds (run.sh redis-cluster-failover, decision 0405; the nemesis log's
meta line names the store "rcluster"): replication is asynchronous by design there, so a fenced
write the old master acknowledged and its replica never received is lost in an unclean failover.
Such a write -- acknowledged from LOST_MS before the failover's lag began (its replica stopped;
the failover's own start when there was no lag) until the failover ended -- missing from the
store's log is COUNTED and printed ("lost write"), not failed. The rest of (6) keeps its rule: the
surviving log must hold no write out of fence order, no fence from two holders; and (2), a
repeated or regressed fence, fails as always.
"""
import glob
import os
import sys
from collections import defaultdict

OFFBASE = 1000000000
LOST_MS = 1000           # rcluster: before a failover's lag, a write may still be unreplicated
SLACK_MS = 1000          # (5): a contender's retry, reconnects and a 2-core machine under load
REVOKE_MS = 500          # (5), etcd: its lessor revokes expired leases on a 500 ms tick
WATCH_LAG_MS = 700       # (5), etcd: the watcher sees a majority without a leader this late at most
R_HB, R_STORE, R_EXPIRED = 2, 3, 7
REASON = {0: "NONE", 1: "RELEASED", 2: "HEARTBEAT_FAILED", 3: "STORE_ERROR", 4: "FENCE_REGRESSED",
          5: "DISPOSED", 6: "TIMER_UNARMABLE", 7: "LEASE_EXPIRED"}


class Grant:
    def __init__(self, cl, idx, tok, known, sl, sr, gseq, line):
        self.cl, self.idx, self.tok, self.known = cl, idx, tok, known
        self.sl, self.sr, self.gseq = sl, sr, gseq
        self.key = cl.keys[idx]
        self.lines = [line]           # indexes into cl.lines of this grant's records
        self.renews = []              # (kind, sl, sr, rc, line)
        self.lost = []                # (t, reason, lastl, line)
        self.seen = None              # (t, reason, count, line)
        self.released = None          # t of E
        self.released_line = None
        self.vs = []                  # (t, deadline): the lock's own deadline, as observed
        self.end = None

    def holder(self):
        return "%d:%d:%d:%d" % (self.cl.pid, self.cl.id, self.idx, self.gseq)


class Client:
    def __init__(self, path):
        self.path = path
        self.lines = []
        self.keys = {}
        self.offs = []                # (t, off)
        self.grants = []
        self.pid = self.id = self.kind = None
        self.ttl = self.drift = None
        self.session = 0              # the session lease's TTL (ms) asked for; 0 = a lease per lock
        self.whys = []                # (t, idx, rc, line): etcd answers logged with their why ("Y")
        self.death = None             # t of the nemesis' SIGKILL
        self.fwrites = []             # (t, idx, holder, tok, t0, wseq, fenced, rc, line)

    def real_end(self, d, sr):
        """the last real ms (exclusive) at which this client's lock clock, offset steps included,
        still read below d, from sr on: a backward step can bring a passed deadline back"""
        end = sr
        for i, (t, off) in enumerate(self.offs):
            nxt = self.offs[i + 1][0] if i + 1 < len(self.offs) else None
            lo, hi = max(t, sr), d - OFFBASE - off
            if nxt is not None:
                hi = min(hi, nxt)
            if hi > lo:
                end = max(end, hi)
        return end


def load(d):
    clients = []
    for path in sorted(glob.glob(os.path.join(d, "h-*.log"))):
        cl = Client(path)
        cur = {}
        pend = defaultdict(list)    # renews logged before their grant's G line (below)
        with open(path) as f:
            raw = [ln.rstrip("\n") for ln in f if ln.strip()]
        for n, ln in enumerate(raw):
            cl.lines.append(ln)
            p = ln.split()
            t, k, a = int(p[0]), p[1], p[2:]
            if k == "B":
                cl.pid, cl.id, cl.kind = int(a[0]), int(a[1]), int(a[2])
                cl.ttl, cl.drift = int(a[3]), int(a[5])
                # the 8th field (etcd, decision 0407): the session TTL; absent in older logs
                cl.session = int(a[7]) if len(a) > 7 else 0
            elif k == "Y":
                cl.whys.append((t, int(a[0]), int(a[1]), ln))
            elif k == "O":
                cl.offs.append((t, int(a[0])))
            elif k == "K":
                cl.keys[int(a[0])] = a[1]
            elif k == "F":
                cl.fwrites.append((t, int(a[0]), a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]),
                                   int(a[6]), ln))
            elif k == "G":
                idx = int(a[0])
                g = Grant(cl, idx, int(a[1]), t, int(a[2]), int(a[3]), int(a[4]), n)
                cl.grants.append(g)
                cur[idx] = g
                # a non-blocking lock applies a grant and submits its first renew in one
                # poll: the wrapper logs that R (with this token) before the client logs G
                for r in pend.pop(idx, []):
                    if r[5] == g.tok:
                        g.lines.append(r[4])
                        g.renews.append(r[:5])
                g.lines.sort()
            elif k in "rR" and (int(a[0]) not in cur or cur[int(a[0])].tok != int(a[4])):
                pend[int(a[0])].append((k, int(a[1]), int(a[2]), int(a[3]), n, int(a[4])))
            elif k in "rRLXEWV" and int(a[0]) in cur:
                g = cur[int(a[0])]
                g.lines.append(n)
                if k in "rR":
                    g.renews.append((k, int(a[1]), int(a[2]), int(a[3]), n))
                elif k == "L":
                    g.lost.append((t, int(a[1]), int(a[2]), n))
                elif k == "X":
                    g.seen = (t, int(a[1]), int(a[2]), n)
                elif k == "E":
                    g.released = t
                    g.released_line = n
                elif k == "V":
                    g.vs.append((t, int(a[1])))
        clients.append(cl)
    nem = []
    p = os.path.join(d, "nemesis.log")
    if os.path.exists(p):
        with open(p) as f:
            nem = [ln.split() for ln in f if ln.strip()]
    res = []
    with open(os.path.join(d, "res.log")) as f:
        for ln in f:
            p = ln.split()
            if len(p) == 6:
                res.append((int(p[0]), p[1], int(p[2]), p[3], int(p[4]), int(p[5]), ln.rstrip("\n")))
    return clients, nem, res


def compute_ends(clients, nem):
    kills = {int(e[2]): int(e[0]) for e in nem if e[1] == "kill"}
    for cl in clients:
        cl.death = kills.get(cl.pid)
        for g in cl.grants:
            # the deadline: the grant's, a synchronous renew's yes, or what the lock itself
            # reported (clock + valid_ms, after every poll): a non-blocking renew's answer is
            # only known through the latter
            ds = [g.sl + cl.ttl - cl.drift] + [v for _, v in g.vs]
            ds += [sl + cl.ttl - cl.drift for kind, sl, sr, rc, n in g.renews if kind == "r" and rc == 1]
            d = max(ds)
            end = cl.real_end(d, g.sr)
            rec = [t for t in [g.released, cl.death] + [x[0] for x in g.lost] + ([g.seen[0]] if g.seen else [])
                   if t is not None]
            # g.end: trust is over; a write decided in the very ms of a release/loss record
            # (before it) is still inside, hence g.wend
            g.end = min([end] + rec)
            g.wend = min([end] + [t + 1 for t in rec])


class Report:
    def __init__(self, quiet=False):
        self.v = defaultdict(list)
        self.quiet = quiet

    def fail(self, check, what, slices):
        self.v[check].append(what)
        if len(self.v[check]) <= 3 and not self.quiet:
            print("VIOLATION (%d) %s" % (check, what))
            for s in slices:
                print("    " + s)


def grant_slice(g, limit=12):
    out = ["%s (pid %d client %d key %s token %d known %d end %d):" %
           (os.path.basename(g.cl.path), g.cl.pid, g.cl.id, g.key, g.tok, g.known, g.end)]
    ws = [n for n in g.lines if g.cl.lines[n].split()[1] == "W"]
    keep = sorted(set([n for n in g.lines if n not in ws] + ws[:1] + ws[-1:]))
    keep = [g.cl.lines[n] for n in keep]
    if len(keep) > limit:
        keep = keep[:limit // 2] + ["..."] + keep[-limit // 2:]
    offs = [o for o in g.cl.offs if g.sr - 1000 <= o[0] <= g.end + 1000]
    return out + ["  " + ln for ln in keep] + ["  clock offsets (t, ms): %s" % offs]


def why_slice(clients, key, t0, t1, limit=12):
    """the etcd answers with a why ("Y" records) of any client, on KEY (or view-wide: idx -1),
    between t0 and t1: what kept a key blocked (e.g. an acquire whose key was left to a session)"""
    out = []
    for cl in clients:
        for t, idx, rc, ln in cl.whys:
            if t0 <= t <= t1 and (idx < 0 or cl.keys.get(idx) == key):
                out.append((t, "  why: %s (pid %d client %d kind %d): %s" %
                            (os.path.basename(cl.path), cl.pid, cl.id, cl.kind, ln)))
    out.sort()
    return [x[1] for x in out][:limit]


def nem_slice(nem, t0, t1):
    return ["  nemesis: " + " ".join(e) for e in nem if e[1] not in ("round",) and t0 <= int(e[0]) <= t1][:12]


def load_real(d):
    """the real store's own record, dumped from it after the run by chaos.c (real_dump):
    real.log       one line per accepted write: RESOURCE ORDER FENCE HOLDER WSEQ T0, where ORDER
                   is the store's own order of the writes of RESOURCE (PostgreSQL: the log row's
                   bigserial id; Redis: the position in the log list)
    real-data.log  RESOURCE HOLDER WSEQ T0 -- what the written row holds at the end, where the
                   data lives apart from the log (PostgreSQL; on Redis the written key IS the log)
    None when the run wrote nothing there (a history from before issue 19)"""
    p = os.path.join(d, "real.log")
    if not os.path.exists(p):
        return None, None, []
    log, data, bad = defaultdict(list), None, []
    with open(p) as f:
        for ln in f:
            x = ln.split()
            if len(x) != 6:
                bad.append(ln.rstrip("\n"))
                continue
            log[x[0]].append((int(x[1]), int(x[2]), x[3], int(x[4]), int(x[5]), ln.rstrip("\n")))
    p = os.path.join(d, "real-data.log")
    if os.path.exists(p):
        data = {}
        with open(p) as f:
            for ln in f:
                x = ln.split()
                if len(x) != 4:
                    bad.append(ln.rstrip("\n"))
                    continue
                data[x[0]] = (x[1], int(x[2]), int(x[3]))
    return log, data, bad


def check_real(real, clients, by_holder, rep, lost_ok=None):
    """(6) no stale write accepted by the real store.

    The judge is the store's own log, written in the same transaction (PostgreSQL) or script call
    (Redis) as the protected write, so an entry exists exactly when the store accepted the
    write. "Stale" is therefore defined over the STORE'S order of acceptance, not over anybody's
    clock: per resource, an accepted write is stale when its fence is LOWER than the fence of a
    write the store accepted BEFORE it (earlier log position; PostgreSQL's ids follow the order in
    which the fence row's lock was taken, because the fence check keeps that row locked until
    commit and the log row is inserted after it). An EQUAL fence is not stale: one holder writes
    many times. A write decided early but delivered late is stale only if a higher fence got in
    first -- which is exactly what the fence protocol promises to refuse.
    The log is only a judge if it is the whole truth, so (6) also fails when:
      - a write the client was told was accepted (F ... 1) is missing from the log (the store lost
        an acknowledged write: a lower fence could then pass unseen), or a write it was told was
        refused (F ... 0) is in it;
      - one fence was accepted from two different holders (two grants with one token);
      - an entry matches no grant of that token, or a grant of another lock key (fences of
        different keys are not comparable);
      - the row written holds at the end anything but the last accepted write (the write and its
        log entry did not land together; PostgreSQL, where data and log are two tables)."""
    log, data, bad = real
    if log is None:
        return None
    for ln in bad:
        rep.fail(6, "unreadable line in the real store's dump: %r" % ln, [])
    logged = {}
    nacc = 0
    for res, ents in sorted(log.items()):
        ents.sort()
        key = res.split("/", 1)[1] if "/" in res else res
        high, high_ln, tok_holder = 0, None, {}
        for order, fence, holder, wseq, t0, ln in ents:
            nacc += 1
            logged[(holder, wseq)] = ln
            g = by_holder.get(holder)
            if fence < 1:
                rep.fail(6, "%s: the store accepted fence %d" % (res, fence), ["  real: " + ln])
            elif fence < high:
                rep.fail(6, "%s: the store accepted fence %d after it had accepted fence %d (stale)" %
                         (res, fence, high), ["  real: " + high_ln, "  real: " + ln] + (grant_slice(g) if g else []))
            if fence > high:
                high, high_ln = fence, ln
            h0 = tok_holder.setdefault(fence, holder)
            if h0 != holder:
                other = by_holder.get(h0)
                rep.fail(6, "%s: fence %d accepted from two holders (%s, then %s)" % (res, fence, h0, holder),
                         ["  real: " + ln] + (grant_slice(other) if other else []) + (grant_slice(g) if g else []))
            if g is None or g.tok != fence or g.key != key:
                rep.fail(6, "%s: accepted write of fence %d by %s matches no grant of key %s" %
                         (res, fence, holder, key), ["  real: " + ln])
        last = ents[-1]
        if data is not None and data.get(res) != (last[2], last[3], last[4]):
            rep.fail(6, "%s: the written key holds %s, the last accepted write is %s" %
                     (res, data.get(res), last[2:5]), ["  real: " + last[5]])
    nref = nunk = 0
    for cl in clients:
        for t, idx, holder, tok, t0, wseq, fenced, rc, ln in cl.fwrites:
            if rc == 1 and (holder, wseq) not in logged and lost_ok is not None and lost_ok(t):
                rep.counted["lost write"].append("a write acknowledged at %d, during a failover of an "
                                                 "asynchronous replica, is not in the new master's log: %s" % (t, ln))
            elif rc == 1 and (holder, wseq) not in logged:
                rep.fail(6, "a write the store acknowledged is not in its log: %s" % ln,
                         ["  " + os.path.basename(cl.path) + ": " + ln])
            elif rc == 0:
                nref += 1
                if (holder, wseq) in logged:
                    rep.fail(6, "a write the store refused is in its log: %s" % ln,
                             ["  real: " + logged[(holder, wseq)], "  " + os.path.basename(cl.path) + ": " + ln])
            elif rc < 0:
                nunk += 1
    return nacc, nref, nunk


def probe_real(loaded, clients, by_holder):
    """--probe: (6) must be able to fail on THIS run's record. Each probe damages a copy of the
    dump in one way and requires a (6) violation; the planted control ctl-u covers the stale
    write itself, these the rules that keep the log honest as a judge."""
    import copy
    log, data, bad = loaded
    acked = {(h, w) for cl in clients for (_, _, h, _, _, w, _, rc, _) in cl.fwrites if rc == 1}
    refused = [f for cl in clients for f in cl.fwrites if f[7] == 0]
    probes = []
    for res, ents in sorted(log.items()):
        ents = sorted(ents)
        drop = [i for i, e in enumerate(ents) if (e[2], e[3]) in acked]
        if drop:
            lg = copy.deepcopy(log)
            del lg[res][drop[len(drop) // 2]]
            probes.append(("an acknowledged write dropped from the log", "not in its log", (lg, data, bad)))
        if len(ents) >= 2:
            lg = copy.deepcopy(log)
            e = sorted(lg[res])[0]
            lg[res].remove(e)
            lg[res].append((e[0], max(x[1] for x in ents) + 1) + e[2:])
            probes.append(("the first entry's fence raised above every later one", "(stale)", (lg, data, bad)))
        if data is not None and res in data:
            dt = dict(data)
            dt[res] = (dt[res][0], dt[res][1] + 1, dt[res][2])
            probes.append(("the written row changed without its log entry", "the written key holds", (log, dt, bad)))
        break
    if refused:
        t, idx, h, tok, t0, w, fenced, rc, ln = refused[0]
        lg = copy.deepcopy(log)
        key = [r for r in lg if r.endswith("/" + by_holder[h].key)] if h in by_holder else []
        if key:
            lg[key[0]].append((max(e[0] for e in lg[key[0]]) + 1, tok, h, w, t0, "probe"))
            probes.append(("a refused write put into the log", "refused is in its log", (lg, data, bad)))
    for what, want, real in probes:
        rep = Report(quiet=True)
        check_real(real, clients, by_holder, rep)
        ok = any(want in v for v in rep.v.get(6, []))
        print("probe of (6), %s: %s" % (what, "caught" if ok else "NOT CAUGHT"))
        if not ok:
            PROBE_MISSED.append(what)
    if not probes:
        PROBE_MISSED.append("no probe could be made")


PROBE_MISSED = []


def failover_spans(nem):
    """[(t0, t1)]: each unclean failover of the nemesis log, "skill failover" to the next "sup"
    (still open at the end: until the end)"""
    spans, t0 = [], None
    for e in nem:
        if e[1] == "skill" and len(e) > 2 and e[2] == "failover":
            t0 = int(e[0])
        elif e[1] == "sup" and t0 is not None:
            spans.append((t0, int(e[0])))
            t0 = None
    if t0 is not None:
        spans.append((t0, max(int(e[0]) for e in nem)))
    return spans


def lost_windows(nem):
    """rcluster only: [(lo, hi)] per failover, where an acknowledged write may be lost: from
    LOST_MS before its lag began ("failover lag", the replica stopped) or, without a lag, before
    "skill failover", to the failover's "sup". [] for every other store"""
    if not any(e[1] == "meta" and len(e) > 2 and e[2] == "rcluster" for e in nem):
        return []
    out, lag, t0 = [], None, None
    for e in nem:
        if e[1] == "failover" and len(e) > 2 and e[2] == "lag":
            lag = int(e[0])
        elif e[1] == "skill" and len(e) > 2 and e[2] == "failover":
            t0 = (lag if lag is not None else int(e[0])) - LOST_MS
            lag = None
        elif e[1] == "sup" and t0 is not None:
            out.append((t0, int(e[0])))
            t0 = None
    if t0 is not None:
        out.append((t0, max(int(e[0]) for e in nem)))
    return out


def across_failover(spans, a_known, b_known):
    """the failover two grants straddle: the earlier known before it ended, the later after it
    began; None when none"""
    for f0, f1 in spans:
        if a_known < f1 and b_known > f0:
            return (f0, f1)
    return None


def check(d, quiet=False, probe=False):
    clients, nem, res = load(d)
    compute_ends(clients, nem)
    rep = Report()
    fos = failover_spans(nem)
    rep.counted = defaultdict(list)     # what a failover excuses, counted: "overlap", "late write"
    by_key = defaultdict(list)
    by_holder = {}
    for cl in clients:
        for g in cl.grants:
            by_key[g.key].append(g)
            by_holder[g.holder()] = g
    for k in by_key:
        by_key[k].sort(key=lambda g: (g.known, g.tok))

    # (2) tokens strictly increase per key; (3) windows never overlap
    for k, gs in by_key.items():
        for a, b in zip(gs, gs[1:]):
            if b.tok <= a.tok:
                rep.fail(2, "key %s: grant token %d known at %d follows token %d known at %d" %
                         (k, b.tok, b.known, a.tok, a.known), grant_slice(a) + grant_slice(b))
        for i, a in enumerate(gs):
            for b in gs[i + 1:]:
                if b.known >= a.end:
                    break
                if b.cl is a.cl and b.idx == a.idx:
                    continue
                fo = across_failover(fos, a.known, b.known)
                if fo:
                    rep.counted["overlap"].append(
                        "key %s: token %d trusted until %d, token %d known at %d, across the failover %d-%d" %
                        (k, a.tok, a.end, b.tok, b.known, fo[0], fo[1]))
                    continue
                rep.fail(3, "key %s: token %d trusted until %d, but token %d was known at %d" %
                         (k, a.tok, a.end, b.tok, b.known),
                         grant_slice(a) + grant_slice(b) + nem_slice(nem, a.known - 500, b.known + 500))

    # (1) stale writes
    acc = rej = 0
    seen_tok = {}
    high = {}
    for t, key, tok, holder, t0, ok, ln in res:
        if not ok:
            rej += 1
            continue
        acc += 1
        if tok < high.get(key, 0):
            rep.fail(1, "resource accepted token %d on %s below %d" % (tok, key, high[key]), ["  res: " + ln])
        high[key] = max(high.get(key, 0), tok)
        h0 = seen_tok.setdefault((key, tok), holder)
        g = by_holder.get(holder)
        if h0 != holder:
            other = by_holder.get(h0)
            rep.fail(1, "key %s: token %d accepted from two holders (%s, then %s)" % (key, tok, h0, holder),
                     ["  res: " + ln] + (grant_slice(other) if other else []) + (grant_slice(g) if g else []))
        if g is None or g.tok != tok:
            rep.fail(1, "key %s: accepted write of token %d by %s matches no grant" % (key, tok, holder),
                     ["  res: " + ln])
            continue
        if t0 >= g.wend or t0 < g.sr:
            rep.fail(1, "key %s: write of token %d decided at %d, outside its trust window [%d, %d)" %
                     (key, tok, t0, g.known, g.end), ["  res: " + ln] + grant_slice(g))
        for b in by_key[key]:
            if b.tok > tok and b.known < t0:
                fo = across_failover(fos, g.known, b.known)
                if fo:
                    rep.counted["late write"].append(
                        "key %s: write of token %d decided at %d accepted, token %d known at %d, across the "
                        "failover %d-%d" % (key, tok, t0, b.tok, b.known, fo[0], fo[1]))
                    break
                rep.fail(1, "key %s: stale write of token %d decided at %d, after token %d was known at %d" %
                         (key, tok, t0, b.tok, b.known), ["  res: " + ln] + grant_slice(g) + grant_slice(b))
                break

    # (4) losses: the right reason, on_lost exactly once
    reasons = defaultdict(int)
    for cl in clients:
        for g in cl.grants:
            for _, r, _, _ in g.lost:
                reasons[REASON.get(r, str(r))] += 1
            if len(g.lost) > 1:
                rep.fail(4, "on_lost fired %d times for one grant" % len(g.lost), grant_slice(g))
            if g.released_line is not None and any(x[3] > g.released_line for x in g.lost):
                rep.fail(4, "on_lost after the holder released", grant_slice(g))
            if g.seen:
                t, r, cnt, n = g.seen
                if cnt != 1 or len(g.lost) != 1 or g.lost[0][1] != r:
                    rep.fail(4, "LOST (%s) seen with on_lost called %d times (%s)" %
                             (REASON.get(r), cnt, [REASON.get(x[1]) for x in g.lost]), grant_slice(g))
            # every failed synchronous renew is a reported loss, next in this lock's stream
            if cl.kind != 1:
                for kind, sl, sr, rc, n in g.renews:
                    if rc != 1:
                        nxt = [m for m in g.lines if m > n]
                        if nxt and cl.lines[nxt[0]].split()[1] != "L":
                            rep.fail(4, "renew answered %d but no on_lost followed" % rc, grant_slice(g))
            for t, r, lastl, n in g.lost:
                prev = [m for m in g.lines if m < n]
                last = cl.lines[prev[-1]].split() if prev else None
                ok = False
                if cl.kind != 1:
                    conf = [g.sl] + [x[1] for x in g.renews if x[0] == "r" and x[3] == 1 and x[4] != (prev[-1] if prev else -1)]
                    dconf = max(conf) + cl.ttl - cl.drift
                    # LEASE_EXPIRED: the deadline passed, or the clock reads behind the
                    # window's start (a backward step the lock can see: it fails closed)
                    if last and last[1] == "r" and int(last[5]) != 1:
                        ok = r == (R_HB if int(last[5]) == 0 else R_STORE)
                    else:
                        ok = r == R_EXPIRED and (lastl >= dconf or lastl < max(conf))
                else:
                    flying = any(x[0] == "R" for x in g.renews)
                    failed_submit = last is not None and last[1] == "R" and int(last[5]) < 0
                    if r in (R_HB, R_STORE):
                        ok = flying and (r == R_STORE or not failed_submit)
                    elif r == R_EXPIRED:
                        starts = [g.sl] + [x[1] for x in g.renews if x[3] == 0]
                        seen = [v for tv, v in g.vs if tv <= t] or [g.sl + cl.ttl - cl.drift]
                        ok = lastl >= seen[-1] or lastl < max(starts)
                if not ok:
                    rep.fail(4, "loss reason %s not justified by the history" % REASON.get(r, str(r)), grant_slice(g))

    # (5) a dead or frozen holder blocks its key for at most one TTL + SLACK_MS after its last
    # renew. Judged where nothing else is in the way: no server outage, no other client
    # stopped, killed or dropped (an acquire it had sent may take a lease nobody uses), some
    # other client alive throughout, before the run's end. The nemesis makes such windows on
    # purpose: one kill in four is followed by a quiet TTL + 1.5 s.
    spans = []          # (t0, t1, what, pid)
    open_stop = {}
    alive = {}
    t_end = None
    for e in nem:
        t, kind = int(e[0]), e[1]
        if kind == "spawn":
            alive[int(e[2])] = [t, None]
        elif kind == "kill":
            alive.setdefault(int(e[2]), [0, None])[1] = t
            spans.append((t, t, "kill", int(e[2])))
        elif kind == "stop":
            open_stop[int(e[2])] = t
        elif kind == "cont":
            pid = int(e[2])
            spans.append((open_stop.pop(pid, t), t, "stop", pid))
        elif kind in ("sstop", "skill"):
            open_stop["server"] = t
        elif kind in ("scont", "sup"):
            spans.append((open_stop.pop("server", t), t, "server", None))
        elif kind == "drop":
            spans.append((t, t, "drop", int(e[2])))
        elif kind == "end":
            t_end = t
    for pid, t in open_stop.items():
        spans.append((t, t_end or t, "server" if pid == "server" else "stop", None if pid == "server" else pid))
    # etcd (decision 0407): elections the leader watcher saw, and the election timeout
    promotes = sorted(int(e[0]) for e in nem if e[1] == "leader")
    election = max([int(e[2]) for e in nem if e[1] == "watch"] + [0])
    noleader, t_nl = [], None
    for e in nem:
        if e[1] == "noleader" and t_nl is None:
            t_nl = int(e[0])
        elif e[1] in ("leader", "hasleader") and t_nl is not None:
            noleader.append((t_nl, int(e[0])))
            t_nl = None
    if t_nl is not None:
        noleader.append((t_nl, max(int(e[0]) for e in nem)))
    # a leader whose term is more than one above the last leader's ended terms that had none:
    # the watcher does not always see those stretches (a status reply may still name the old
    # leader), so their start is only known to follow the last leader line
    lls = [(int(e[0]), int(e[2])) for e in nem if e[1] == "leader"]
    noleader += [(t1, t2) for (t1, n1), (t2, n2) in zip(lls, lls[1:]) if n2 > n1 + 1]
    checked = 0
    for cl in clients:
        ttl = cl.ttl
        for g in cl.grants:
            ev = None
            if cl.death is not None and g.end == cl.death:
                ev = cl.death
            for t0, t1, what, pid in spans:
                if what == "stop" and pid == cl.pid and t1 - t0 > ttl and g.known <= t0 < g.end:
                    ev = t0 if ev is None else min(ev, t0)
            if ev is None:
                continue
            f = max([g.sr] + [x[2] for x in g.renews if x[2] <= ev]) + ttl
            # a session client (etcd, decision 0407): the key lives on the client's one session
            # lease, which ANY session call of the client refreshes (a renew of another lock,
            # a session acquire's keepalive); one may be in flight at the death (sync calls
            # back to back, async keepalives started every heartbeat), so the last refresh the
            # history can bound is the death itself, and the lease lasts its TTL as etcd keeps
            # it: whole seconds, rounded up. Never for a lease per lock (session 0)
            if cl.session:
                lease = (cl.session + 999) // 1000 * 1000
                f = max(f, ev + lease)
                # etcd's new leader refreshes every lease to its TTL plus the election timeout
                # (the watcher's "leader" lines, chaos.c): an election up to REVOKE_MS after the
                # expiry still finds the lease unrevoked (the lessor checks twice a second)
                # and nobody revokes while a majority names no leader ("noleader" to the next
                # leader line): an expiry inside such a stretch waits for its end
                grew = True
                while grew:
                    grew = False
                    for a, b in noleader:
                        if a <= f + REVOKE_MS + WATCH_LAG_MS and b > f:
                            f, grew = b, True
                    for p in promotes:
                        if p <= f + REVOKE_MS and p + lease + election > f:
                            f, grew = p + lease + election, True
            # before f the lease still stands, so only what happens from f - 200 ms on can
            # leave a lease nobody uses (a request the server answers after f)
            lo, hi = f - 200, f + SLACK_MS
            if any(w == "server" and t0 <= hi and t1 >= lo - ttl for t0, t1, w, _ in spans):
                continue
            if any(w != "server" and pid != cl.pid and t0 <= hi and t1 >= lo for t0, t1, w, pid in spans):
                continue
            contenders = [p for p, (a, b) in alive.items() if p != cl.pid and a <= lo and (b is None or b > hi)]
            if not contenders or t_end is None or hi >= t_end:
                continue
            checked += 1
            nxt = [b for b in by_key[g.key] if b.tok > g.tok and b.known > g.known]
            first = min((b.known for b in nxt), default=None)
            if first is None or first > hi:
                rep.fail(5, "key %s blocked: holder %d gone at %d, lease free by %d, next grant %s (limit %d)%s" %
                         (g.key, cl.pid, ev, f, first, hi, " (session lease)" if cl.session else ""),
                         grant_slice(g) + nem_slice(nem, ev - 200, hi) +
                         why_slice(clients, g.key, ev - 2 * ttl, first if first is not None else hi))

    loaded = load_real(d)
    lws = lost_windows(nem)
    real = check_real(loaded, clients, by_holder, rep,
                      (lambda t: any(lo <= t <= hi for lo, hi in lws)) if lws else None)
    if probe and loaded[0] is not None:
        probe_real(loaded, clients, by_holder)

    ngrants = sum(len(cl.grants) for cl in clients)
    rounds = sum(1 for e in nem if e[1] == "round")
    faults = defaultdict(int)
    for e in nem:
        if e[1] == "round":
            faults[e[3]] += 1
    if not quiet:
        print("checker %s: %d client processes, %d rounds (%s), %d grants, %d renews, writes %d accepted "
              "%d rejected, real store writes %s, losses %s, %d dead-holder liveness checks, violations %d" %
              (d, len(clients), rounds, ", ".join("%s %d" % kv for kv in sorted(faults.items())), ngrants,
               sum(len(g.renews) for cl in clients for g in cl.grants), acc, rej,
               "%d accepted %d refused %d unanswered" % real if real else "none",
               dict(reasons), checked, sum(len(v) for v in rep.v.values())))
    if fos:
        nrep = len(rep.v.get(2, []))
        nstale = (sum(1 for v in rep.v.get(1, []) if "below" in v or "two holders" in v) +
                  sum(1 for v in rep.v.get(6, []) if "(stale)" in v or "two holders" in v))
        nlost = sum(1 for v in rep.v.get(6, []) if "not in its log" in v)
        if not quiet:
            for what in ("overlap", "late write", "lost write"):
                for v in rep.counted[what][:3]:
                    print("COUNTED (%s across a failover) %s" % (what, v))
            print("checker %s: failover rounds: %d unclean failovers, %d repeated or regressed fences "
                  "(%.1f per 100 unclean failovers), %d stale writes accepted (out of fence order, or one "
                  "token from two holders; resource and real store), %d acknowledged writes missing from "
                  "the store's log, %d lease overlaps across a failover counted, %d older-holder writes "
                  "accepted after the newer holder knew, across a failover, counted%s" %
                  (d, len(fos), nrep, 100.0 * nrep / len(fos), nstale, nlost, len(rep.counted["overlap"]),
                   len(rep.counted["late write"]),
                   (", %d acknowledged writes lost in a failover of an asynchronous replica, counted" %
                    len(rep.counted["lost write"])) if lws else ""))
    return rep, ngrants, acc, real


def main():
    args = sys.argv[1:]
    expect = None
    if len(args) == 3 and args[0] == "--expect":
        expect = [int(x) for x in args[1].split(",")]
        args = args[2:]
    probe = len(args) == 2 and args[0] == "--probe"
    counted = len(args) == 2 and args[0] == "--counted"
    if probe or counted:
        args = args[1:]
    # --no-real DIR: a store without a fenced-write helper (etcd, issue 21): (6) has nothing to
    # judge there, and a run without real writes is not taken for a broken one
    no_real = len(args) == 2 and args[0] == "--no-real"
    if no_real:
        args = args[1:]
    if len(args) != 1:
        print(__doc__)
        return 64
    rep, ngrants, acc, real = check(args[0], quiet=expect is not None, probe=probe)
    if counted:
        n = len(rep.counted["overlap"])
        if rep.v or n == 0 or ngrants == 0:
            print("control %s NOT right: violations %s, %d overlaps across a failover counted (want none, >= 1)" %
                  (args[0], sorted(rep.v), n))
            return 1
        print("control %s: %d overlap(s) across a failover counted, no violation" %
              (os.path.basename(args[0].rstrip("/")), n))
        return 0
    if PROBE_MISSED:
        print("checker: (6) missed its probes: %s" % PROBE_MISSED)
        return 1
    if expect is None:
        if ngrants == 0 or acc == 0:
            print("checker: nothing was granted or written: the campaign did not run")
            return 1
        if not no_real and (not real or real[0] == 0):
            print("checker: the real store accepted no write: (6) judged nothing")
            return 1
        return 1 if rep.v else 0
    missed = [c for c in expect if not rep.v.get(c)]
    if missed:
        print("control %s NOT caught: checks %s found nothing (found: %s)" %
              (args[0], missed, sorted(rep.v)))
        return 1
    print("control %s caught by checks %s" % (os.path.basename(args[0].rstrip("/")), sorted(rep.v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
