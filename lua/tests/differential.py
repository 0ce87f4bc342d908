#!/usr/bin/env python3
"""Differential test: the module (RL.* on keys m:...) against the Lua library
(FCALL on keys l:...) on ONE server with the fake clock, the same random
operation sequences at the same frozen instants, every reply and every PTTL
compared exactly.

Usage: differential.py [--ops N] [--seed S]   (env RL_DIFF_OPS, RL_DIFF_SEED)
Needs REDIS_SERVER and REDIS_RL_MODULE. Exits 1 on any divergence.

What is not compared byte for byte: ids that RL.ACQUIRE generates (the
module's sequence starts at a node-wide counter, the library's at the time
in us): both must read <now in ms>-<seq> with the same ms, be unique among
the key's live leases, and are then used on their own side.
"""

import argparse
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rlserver import Err, Server  # noqa: E402

U32 = 4294967295
GEN = re.compile(r"^(\d+)-(\d+)$")

BAD_INTS = ["007", "-1", "1.5", "abc", "", "-0", "+1", " 1", "1 ", "4294967296", "99999999999999999999999", "0"]
UTC_NAMES = ["UTC", "utc", "Etc/UTC", "etc/utc", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Zulu",
             "Etc/Zulu", "GMT", "Etc/GMT", "Etc/GMT+0", "Etc/GMT-0", "Etc/GMT0", "GMT0", "GMT+0", "GMT-0",
             "Greenwich", "Etc/Greenwich", "Etc/GMT+5", "Etc/GMT-14", "Etc/GMT+12", "etc/gmt-3", "Etc/GMT+11"]
def library_zones():
    """The zones the library embeds (its generated ZONE_NAMES) and their
    transitions in ms: used only to choose names and instants; what the
    library answers there is checked against the module."""
    from rlserver import LIBRARY
    src = open(LIBRARY).read()
    a = src.index("  local ZONE_DATA = {")
    b = src.index("  -- GENERATED ZONES END")
    block = src[a:b]
    data = re.findall(r"^    '(-?\d+(?:;\d+,-?\d+)*)',$", block, re.M)
    names = re.findall(r"^    \['([^']+)'\] = (\d+),$", block, re.M)
    per_data = []
    for d in data:
        t, ts = 0, []
        for dt, _ in re.findall(r";(\d+),(-?\d+)", d):
            t += int(dt)
            if t * 1000 < 7258118400000 - 2 * 86400000:
                ts.append(t * 1000)
        per_data.append(ts)
    return {n: per_data[int(i) - 1] for n, i in names}


ZONES = library_zones()
ZONE_NAMES = sorted(ZONES)
CASED = {n.lower(): n for n in ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu"]}
BAD_ZONES = ["Nowhere/Land", "", "Etc/Unknown", "x" * 70, "Etc/GMT+13", "Etc/GMT-15"]


def pick(rng, pool):
    return rng.choice(pool)


class Params:
    """Per-key parameters, kept across calls, changed now and then."""

    def __init__(self, rng, kind):
        self.rng = rng
        self.kind = kind
        self.new()

    def new(self):
        r, k = self.rng, self.kind
        if k == "GCRA":
            self.p = [str(pick(r, [1, 2, 3, 7, 10, 60, 1000, 999983, 100000000, U32])),
                      str(pick(r, [1, 3, 7, 100, 1000, 1001, 60000, 3600000, 86400000, 10**9, 10**12]))]
            self.opt = [] if r.random() < 0.6 else ["BURST", str(pick(r, [1, 2, 5, 13, 1000, U32]))]
            self.limit = int(self.opt[1]) if self.opt else int(self.p[0])
        elif k == "TOKENBUCKET":
            self.p = [str(pick(r, [1, 3, 5, 10, 100, 10**6, U32])), str(pick(r, [1, 2, 3, 7, 1000, U32])),
                      str(pick(r, [1, 7, 1000, 60000, 10**12]))]
            self.opt = []
            self.limit = int(self.p[0])
        elif k == "SLIDE":
            self.p = [str(pick(r, [1, 2, 5, 10, 100, 10**6, U32])),
                      str(pick(r, [1, 3, 10, 100, 1000, 3000, 60000, 3600000, 10**12]))]
            self.opt = []
            self.limit = int(self.p[0])
        elif k == "LOG":
            self.p = [str(pick(r, [1, 2, 3, 5, 10, 50])), str(pick(r, [1, 5, 100, 1000, 3000, 60000, 10**12]))]
            self.opt = []
            self.limit = int(self.p[0])
        elif k == "QUOTA":
            unit = pick(r, ["HOUR", "day", "Week", "MONTH", "year", "DAY", "1", "1000", "60000", "3600000",
                            "86400000", "604800000", "1000000000000"])
            self.p = [str(pick(r, [1, 2, 5, 100, U32])), unit]
            self.opt = []
            if not unit.isdigit() and r.random() < 0.6:
                x = r.random()
                if x < 0.3:
                    self.opt = ["TZ", pick(r, UTC_NAMES)]
                elif x < 0.95 and ZONE_NAMES:
                    z = pick(r, ZONE_NAMES)
                    self.opt = ["TZ", CASED.get(z, z) if r.random() < 0.5 else z.upper()]
                else:
                    self.opt = ["TZ", pick(r, BAD_ZONES)]
            self.limit = int(self.p[0])
        elif k == "CONCURRENCY":
            self.p = [str(pick(r, [1, 2, 3, 5, 10, 100000])), str(pick(r, [1, 5, 100, 1000, 60000, 10**12]))]
            self.opt = []
            self.limit = int(self.p[0])

    def maybe_change(self):
        if self.rng.random() < 0.03:
            self.new()


class Diff:
    def __init__(self, server, rng, nops, verbose=False):
        self.s = server
        self.c = server.conn
        self.rng = rng
        self.nops = nops
        self.ops = 0
        self.compared = 0
        self.divergences = []
        self.kinds = ["GCRA", "TOKENBUCKET", "SLIDE", "LOG", "QUOTA", "CONCURRENCY"]
        self.keys = {}
        for k in self.kinds:
            for i in range(5):
                name = "%s%d" % (k.lower()[:4], i)
                self.keys[name] = Params(rng, k)
        self.names = list(self.keys)
        # Per lease key: [(module id, library id)] of generated ids seen.
        self.gen = {n: [] for n in self.names}
        self.now = server.clock.us
        self.stats = {}
        self.module_id_reuse = 0
        self.trace = os.environ.get("RL_DIFF_TRACE")

    # ---- argument generation -------------------------------------------
    def cost_opts(self, par, refund_ok=True, peek_ok=True):
        r = self.rng
        out = []
        x = r.random()
        if x < 0.55:
            pass
        elif x < 0.85 or not refund_ok:
            c = pick(r, [0, 1, 1, 2, 3, 5, 10, par.limit, par.limit + 1, U32])
            out += ["COST" if r.random() < 0.8 else "cost", str(min(c, U32))]
        else:
            out += ["REFUND", str(pick(r, [1, 1, 2, 3, 10, par.limit, U32]))]
        if peek_ok and "REFUND" not in out and r.random() < 0.12:
            out.append("PEEK" if r.random() < 0.8 else "peek")
        return out

    def lease_id(self, name):
        """An ID for both sides: (module's, library's)."""
        r = self.rng
        if self.gen[name] and r.random() < 0.7:
            return pick(r, self.gen[name][-3:])
        i = pick(r, ["a", "b", "job-1", "x" * 128, "1800000000000-5", "1-42", "\xe9t\xe9"])
        return (i, i)

    def spec_args(self, name, peek_ok=True, refund_ok=True):
        """(module args, library args) after the key; self.last_id: the
        (module, library) ID pair given to a CONCURRENCY spec, else None."""
        self.last_id = None
        par = self.keys[name]
        par.maybe_change()
        args = par.p + par.opt
        if par.kind == "CONCURRENCY":
            extra = []
            if self.rng.random() < 0.7:
                c = pick(self.rng, [0, 1, 1, 1, 2, 3, par.limit + 1])
                extra += ["COST", str(c)]
            mid = lid = None
            if self.rng.random() < 0.35:
                mid, lid = self.lease_id(name)
                self.last_id = (mid, lid)
            if peek_ok and self.rng.random() < 0.1:
                extra.append("PEEK")
            m = args + extra + (["ID", mid] if mid else [])
            lib = args + extra + (["ID", lid] if lid else [])
            if "PEEK" in extra:
                m.remove("PEEK"); m.append("PEEK")
                lib.remove("PEEK"); lib.append("PEEK")
            return m, lib
        a = args + self.cost_opts(par, refund_ok=refund_ok, peek_ok=peek_ok)
        return a, list(a)

    def mutate(self, m, lib):
        """Make the same error on both sides."""
        r = self.rng
        m, lib = list(m), list(lib)
        x = r.random()
        if x < 0.5 and m:
            i = r.randrange(len(m))
            m[i] = lib[i] = pick(r, BAD_INTS)
        elif x < 0.6:
            m.append("NOPE"); lib.append("NOPE")
        elif x < 0.7:
            m += ["COST", "1", "COST", "1"]; lib += ["COST", "1", "COST", "1"]
        elif x < 0.8:
            m.append("COST"); lib.append("COST")
        elif x < 0.85:
            m += ["REFUND", "1", "COST", "1"]; lib += ["REFUND", "1", "COST", "1"]
        elif x < 0.9 and m:
            m.pop(); lib.pop()
        else:
            m = m[:1]; lib = lib[:1]
        return m, lib

    # ---- operations --------------------------------------------------------
    def op(self):
        """One operation: (module cmd, library cmd, keys touched, lease info)."""
        r = self.rng
        x = r.random()
        if x < 0.12:
            return self.op_all()
        if x < 0.18:
            return self.op_peek()
        name = pick(r, self.names)
        par = self.keys[name]
        kind = par.kind
        if r.random() < 0.01:
            return (["DEL", "m:" + name], ["DEL", "l:" + name], [name], {})
        if kind == "CONCURRENCY" and r.random() < 0.35:
            return self.op_release_renew(name)
        # Now and then a call of another kind on the key: WRONGTYPE on both.
        if r.random() < 0.02:
            kind = pick(r, self.kinds)
            other = self.keys[pick(r, [n for n in self.names if self.keys[n].kind == kind])]
            # COST 0 writes nothing: no key of the wrong kind is made.
            m = lib = other.p + other.opt + ["COST", "0"]
            self.last_id = None
        else:
            m, lib = self.spec_args(name)
        if r.random() < 0.07:
            m, lib = self.mutate(m, lib)
        mcmd = {"GCRA": "RL.GCRA", "TOKENBUCKET": "RL.TOKENBUCKET", "SLIDE": "RL.SLIDE", "LOG": "RL.LOG",
                "QUOTA": "RL.QUOTA", "CONCURRENCY": "RL.ACQUIRE"}[kind]
        fname = {"RL.ACQUIRE": "rl_acquire"}.get(mcmd, "rl_" + mcmd[3:].lower())
        lease = (name, self.last_id) if kind == "CONCURRENCY" else None
        return ([mcmd, "m:" + name] + m, ["FCALL", fname, "1", "l:" + name] + lib, [name], {"single": lease})

    def op_peek(self):
        name = pick(self.rng, self.names)
        kind = self.keys[name].kind
        m, lib = self.spec_args(name, peek_ok=False, refund_ok=False)
        word = kind if self.rng.random() < 0.8 else kind.lower()
        if self.rng.random() < 0.05:
            m, lib = self.mutate(m, lib)
        if self.rng.random() < 0.02:
            word = "LEAKY"
        return (["RL.PEEK", word, "m:" + name] + m, ["FCALL_RO", "rl_peek", "1", "l:" + name, word] + lib,
                [name], {})

    def op_all(self):
        r = self.rng
        n = r.choice([1, 1, 2, 2, 3, 4])
        names = r.sample(self.names, n)
        ms, ls = [], []
        gens = []
        for name in names:
            m, lib = self.spec_args(name, peek_ok=False)
            kind = self.keys[name].kind
            ms += [kind] + m
            ls += [kind] + lib
            gens.append((name, self.last_id) if kind == "CONCURRENCY" else None)
        if r.random() < 0.1:
            ms.append("PEEK"); ls.append("PEEK")
        if r.random() < 0.04:
            ms, ls = self.mutate(ms, ls)
        if r.random() < 0.02 and n > 1:
            names = names[:-1] + names[:1]  # a repeated key
        mk = ["m:" + x for x in names]
        lk = ["l:" + x for x in names]
        return (["RL.ALL", str(n)] + mk + ms, ["FCALL", "rl_all", str(n)] + lk + ls, names, {"all": gens})

    def op_release_renew(self, name):
        mid, lid = self.lease_id(name)
        if self.rng.random() < 0.5:
            return (["RL.RELEASE", "m:" + name, mid], ["FCALL", "rl_release", "1", "l:" + name, lid], [name], {})
        ms = str(pick(self.rng, [1, 10, 1000, 60000, 10**12, 0, 10**12 + 1]))
        return (["RL.RENEW", "m:" + name, mid, ms], ["FCALL", "rl_renew", "1", "l:" + name, lid, ms], [name], {})

    # ---- comparison ----------------------------------------------------------
    def lease_pair(self, lease, m, lib):
        """Compares the lease ids of two replies: the ID pair given, or two
        generated ids (then recorded for later calls)."""
        name, given = lease
        if m is None and lib is None:
            return True
        if given is not None:
            return (m, lib) == given or m == lib
        gm, gl = GEN.match(m or ""), GEN.match(lib or "")
        if not gm or not gl or gm.group(1) != gl.group(1) or gm.group(1) != str(self.now // 1000):
            return False
        reused = [p for p in self.gen[name] if p[0] == m]
        if reused:
            # The module's bug (see the report): a generated id given again
            # on the same key after the key was emptied and made again in
            # the same ms. Counted apart; the old pair is forgotten.
            self.module_id_reuse += 1
            if self.module_id_reuse <= 3:
                print("note: the module generated lease id %r again on key %s (clock @%d)" % (m, name, self.now))
            self.gen[name] = [p for p in self.gen[name] if p[0] != m]
        if any(p[1] == lib for p in self.gen[name]):
            print("LIBRARY reused the generated lease id %r on key %s" % (lib, name))
            return False
        self.gen[name].append((m, lib))
        if len(self.gen[name]) > 64:
            del self.gen[name][:32]
        return True

    def same(self, mr, lr, info):
        if isinstance(mr, list) and isinstance(lr, list) and len(mr) == len(lr):
            if info.get("single") and len(mr) == 6:
                return mr[:5] == lr[:5] and self.lease_pair(info["single"], mr[5], lr[5])
            if "all" in info and len(mr) == 2 + len(info["all"]):
                if mr[:2] != lr[:2]:
                    return False
                for i, g in enumerate(info["all"]):
                    a, b = mr[2 + i], lr[2 + i]
                    if g and isinstance(a, list) and isinstance(b, list) and len(a) == len(b) == 6:
                        if a[:5] != b[:5] or not self.lease_pair(g, a[5], b[5]):
                            return False
                    elif a != b:
                        return False
                return True
        return mr == lr

    def report(self, what, mcmd, lcmd, mr, lr):
        self.divergences.append((what, mcmd, lcmd, mr, lr))
        if len(self.divergences) <= 20:
            print("DIVERGENCE (%s) at clock @%d, op %d\n  module : %r\n    -> %r\n  library: %r\n    -> %r"
                  % (what, self.now, self.ops, mcmd, mr, lcmd, lr), flush=True)

    def tally(self, cmd, r):
        if isinstance(r, Err):
            what = "error " + r.split(" ")[0]
        elif isinstance(r, list):
            what = "allowed" if r[0] == 1 else "denied"
        else:
            what = "reply %r" % (r,)
        key = (cmd, what)
        self.stats[key] = self.stats.get(key, 0) + 1

    def summary(self):
        rows = {}
        for (cmd, what), n in sorted(self.stats.items()):
            rows.setdefault(cmd, []).append("%s %d" % (what, n))
        return "\n".join("  %-15s %s" % (cmd, ", ".join(v)) for cmd, v in rows.items())

    def zones_in_use(self):
        return [p.opt[1].lower() for p in self.keys.values()
                if p.kind == "QUOTA" and p.opt and p.opt[1].lower() in ZONES and ZONES[p.opt[1].lower()]]

    # ---- the clock -------------------------------------------------------------
    def move_clock(self):
        r = self.rng
        x = r.random()
        now = self.now
        if x < 0.45:
            now += r.randrange(0, 1_500_000)
        elif x < 0.62:
            pass
        elif x < 0.72:
            now += r.randrange(0, 7_200_000_000)
        elif x < 0.76:
            now += r.randrange(0, 40 * 86_400_000_000)
        elif x < 0.85:
            now -= r.randrange(1, 2_000_000)
        elif x < 0.89:
            now -= r.randrange(1, 3 * 86_400_000_000)
        elif x < 0.93 and self.zones_in_use():
            # Next to a UTC offset transition of a zone a quota key uses (DST edges).
            t = pick(r, ZONES[pick(r, self.zones_in_use())]) + pick(r, [0, 0, 1, -1, 1000, -1000, 1_800_000, -1_800_000, 3_600_000,
                                                      -3_600_000, 86_400_000, -86_400_000, 7_200_000])
            now = t * 1000 + pick(r, [0, 0, 1, 999, r.randrange(0, 1000)])
        else:
            # To a boundary (of a second, an hour, a UTC day), or 1 ms / 1 us either side.
            unit = pick(r, [1000, 1_000_000, 3_600_000_000, 86_400_000_000])
            now = (now // unit + 1) * unit + pick(r, [0, 0, -1, 1, -1000, 1000])
        if now > 7_240_000_000_000_000 or now < 100_000_000_000_000:
            # Kept inside 1973-2199: the library's zone rules end in 2200 (an ERR after).
            now = 1_800_000_000_000_000 + r.randrange(0, 86_400_000_000 * 3650)
        if now < self.now:
            # Expire lazily everything expired so far, so that a key the
            # server has not touched yet cannot come back to life on one side
            # only (active expiry is off).
            allk = ["m:" + n for n in self.names] + ["l:" + n for n in self.names]
            self.c.pipeline([["EXISTS", k] for k in allk])
        self.now = now
        self.s.clock.freeze(now)

    def run(self, batch=25):
        while self.ops < self.nops:
            self.move_clock()
            ops = [self.op() for _ in range(min(batch, self.nops - self.ops))]
            cmds = []
            for mcmd, lcmd, names, _ in ops:
                cmds.append(mcmd)
                cmds.append(lcmd)
                for n in names:
                    cmds.append(["PTTL", "m:" + n])
                    cmds.append(["PTTL", "l:" + n])
            replies = self.c.pipeline(cmds)
            i = 0
            for mcmd, lcmd, names, info in ops:
                mr, lr = replies[i], replies[i + 1]
                i += 2
                self.ops += 1
                self.compared += 1
                self.tally(mcmd[0], mr)
                if self.trace and self.trace in names:
                    print("TRACE op %d @%d %r -> %r | %r -> %r" % (self.ops, self.now, mcmd, mr, lcmd[2:], lr))
                if not self.same(mr, lr, info):
                    self.report("reply", mcmd, lcmd, mr, lr)
                for n in names:
                    pm, pl = replies[i], replies[i + 1]
                    i += 2
                    if pm != pl:
                        self.report("PTTL of %s: %r vs %r" % (n, pm, pl), mcmd, lcmd, mr, lr)
        return self.divergences


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=int(os.environ.get("RL_DIFF_OPS", "100000")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("RL_DIFF_SEED", "0")) or None)
    a = ap.parse_args()
    seed = a.seed or random.randrange(1, 2**31)
    module = os.environ.get("REDIS_RL_MODULE")
    if not module or not os.path.exists(module):
        print("differential: REDIS_RL_MODULE not found: %r" % module)
        return 1
    rng = random.Random(seed)
    start = 1_800_000_000_000_000 + rng.randrange(0, 86_400_000_000 * 365)
    t0 = time.monotonic()
    with Server(module=module, fake_clock=True, start_us=start, name="diff",
                extra=["--enable-debug-command", "yes"]) as s:
        s.conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        s.load_library()
        d = Diff(s, rng, a.ops)
        div = d.run()
        info = s.conn.call("INFO", "server")
    print(d.summary())
    version = re.search(r"(valkey)_version:(\S+)", info) or re.search(r"(redis)_version:(\S+)", info)
    print("differential: %s %s, seed %d: %d operations on each side (module and library), %d divergences, "
          "%d generated lease ids the module gave twice on a key (module bug), %.1f s"
          % (version.group(1) if version else "?", version.group(2) if version else "?", seed, d.ops, len(div),
             d.module_id_reuse, time.monotonic() - t0))
    return 1 if div else 0


if __name__ == "__main__":
    sys.exit(main())
