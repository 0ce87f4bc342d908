"""The Lua library's suite (scripts/test-lua.sh runs it against one server).

REDIS_SERVER: the server; REDIS_RL_MODULE: the module (the reference the
differential and directed tests compare with). RL_DIFF_OPS (default 100000)
and RL_DIFF_SEED steer the differential test.
"""

import os
import random
import re
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential  # noqa: E402
from rlserver import Err, FakeClock, Server, eval_source  # noqa: E402

MODULE = os.environ.get("REDIS_RL_MODULE")
T0 = 1_800_000_000_123_456  # us: 2027-01-15, with a sub-ms part


def version(conn):
    info = conn.call("INFO", "server")
    m = re.search(r"redis_version:(\d+)\.(\d+)", info)
    return (int(m.group(1)), int(m.group(2))), "valkey_version" in info


class Differential(unittest.TestCase):
    def test_module_and_library_agree_on_random_sequences(self):
        ops = int(os.environ.get("RL_DIFF_OPS", "100000"))
        seed = int(os.environ.get("RL_DIFF_SEED", "0")) or random.randrange(1, 2**31)
        rng = random.Random(seed)
        start = 1_800_000_000_000_000 + rng.randrange(0, 86_400_000_000 * 365)
        with Server(module=MODULE, fake_clock=True, start_us=start, name="diff",
                    extra=["--enable-debug-command", "yes"]) as s:
            s.conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            s.load_library()
            d = differential.Diff(s, rng, ops)
            div = d.run()
            print("\ndifferential: seed %d, %d operations on each side, %d divergences, %d module id reuses"
                  % (seed, d.ops, len(div), d.module_id_reuse))
            print(d.summary())
        self.assertEqual(d.ops, ops)
        self.assertEqual(div, [], "divergences (replay with RL_DIFF_SEED=%d)" % seed)
        # The module hands out no generated lease id twice on a key (fixed in
        # the module: its ids rise above a node-wide floor).
        self.assertEqual(d.module_id_reuse, 0, "module id reuses (replay with RL_DIFF_SEED=%d)" % seed)


class WithModule(unittest.TestCase):
    """Directed tests against the module on one server with a frozen clock."""

    @classmethod
    def setUpClass(cls):
        cls.s = Server(module=MODULE, fake_clock=True, start_us=T0, name="directed")
        cls.s.start()
        cls.s.load_library()
        cls.c = cls.s.conn

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def both(self, kind_cmd, fname, key, *args):
        m = self.c.call(kind_cmd, "m:" + key, *args)
        lib = self.c.call("FCALL", fname, "1", "l:" + key, *args)
        return m, lib

    def test_extreme_rates_are_exact(self):
        # Rates whose unit is no whole number of ns or us, the SPEC's
        # 100,000,000 per second example, and products past 2^64: the library
        # keeps the module's ns, so replies and PTTL are equal at every step
        # (the resolution bound is 0).
        cases = [
            ("RL.GCRA", "rl_gcra", ["100000000", "1000"], ["COST", "1000000"]),
            ("RL.GCRA", "rl_gcra", ["3", "1"], []),
            ("RL.GCRA", "rl_gcra", ["7", "1000", "BURST", "4294967295"], ["COST", "4294967295"]),
            ("RL.GCRA", "rl_gcra", ["4294967295", "1000000000000", "BURST", "4294967295"], ["COST", "3"]),
            ("RL.GCRA", "rl_gcra", ["999983", "1001", "BURST", "13"], ["COST", "5"]),
            ("RL.TOKENBUCKET", "rl_tokenbucket", ["4294967295", "4294967295", "1000000000000"],
             ["COST", "4294967294"]),
            ("RL.TOKENBUCKET", "rl_tokenbucket", ["1000", "3", "7"], ["COST", "2"]),
            ("RL.SLIDE", "rl_slide", ["4294967295", "1000000000000"], ["COST", "4294967295"]),
            ("RL.SLIDE", "rl_slide", ["4294967295", "3"], ["COST", "1234567"]),
        ]
        rng = random.Random(7)
        clock = self.s.clock
        for n, (cmd, fname, params, opt) in enumerate(cases):
            key = "x%d" % n
            now = T0
            for step in range(120):
                now += rng.choice([0, 1, 333, 334, 1000, 999_999, 60_000_000])
                clock.freeze(now)
                extra = rng.choice([opt, [], ["COST", "0"], ["REFUND", "1"], opt + ["PEEK"]])
                m, lib = self.both(cmd, fname, key, *(params + extra))
                self.assertEqual(m, lib, "%s %s %s at @%d" % (cmd, params, extra, now))
                pm, pl = self.c.call("PTTL", "m:" + key), self.c.call("PTTL", "l:" + key)
                # In its expiry's millisecond a key reads PTTL 0 until active
                # expiry (Redis 8's, in that very ms) deletes it: -2. The two
                # keys share that ms but not the moment the cycle reaches them.
                if pm in (0, -2) and pl in (0, -2):
                    continue
                self.assertEqual(pm, pl, "PTTL of %s %s %s at @%d" % (cmd, params, extra, now))
        # SPEC's example: RL.GCRA k 100000000 1000 COST 1000000 resets in 10 ms.
        clock.freeze(T0 + 10**9)
        self.c.call("DEL", "l:spec")
        r = self.c.call("FCALL", "rl_gcra", "1", "l:spec", "100000000", "1000", "COST", "1000000")
        self.assertEqual(r, [1, 100000000, 99000000, 0, 10])
        # The expiry is the full instant rounded up to a ms: on a sub-ms clock
        # PTTL is the reset or one more.
        self.assertIn(self.c.call("PTTL", "l:spec"), (10, 11))

    def test_zone_windows_next_to_every_transition(self):
        # Every embedded zone, every UTC offset transition from 2024 to 2030
        # and three from anywhere in 1970-2200, read just before, at and
        # after it: each unit's window end (the reset of a first consume,
        # and the key's PTTL). Window starts are read by the differential
        # test, whose clock also jumps back and forth next to transitions.
        rng = random.Random(3)
        checked = 0
        for zone, ts in sorted(differential.ZONES.items()):
            picks = [t for t in ts if 1_704_067_200_000 <= t < 1_893_456_000_000]
            picks += rng.sample(ts, min(3, len(ts)))
            name = zone if rng.random() < 0.5 else zone.upper()
            for t in picks:
                for delta in (-3_600_001, -1, 0, 1, 1_800_000, 3_600_000):
                    now = (t + delta) * 1000 + rng.randrange(0, 1000)
                    self.s.clock.freeze(now)
                    cmds = []
                    for unit in ("HOUR", "DAY", "WEEK", "MONTH", "YEAR"):
                        cmds += [["DEL", "m:tz", "l:tz"],
                                 ["RL.QUOTA", "m:tz", "5", unit, "TZ", name, "COST", "2"],
                                 ["FCALL", "rl_quota", "1", "l:tz", "5", unit, "TZ", name, "COST", "2"],
                                 ["PTTL", "m:tz"], ["PTTL", "l:tz"]]
                    r = self.c.pipeline(cmds)
                    for i in range(0, len(r), 5):
                        self.assertEqual(r[i + 1], r[i + 2], "%s %s at @%d" % (name, cmds[i + 1][3], now))
                        self.assertEqual(r[i + 3], r[i + 4])
                        checked += 1
        self.assertGreater(checked, 10000)

    def test_generated_ids_never_repeat_on_a_key(self):
        # Frozen clock: the key is emptied and made again at one instant.
        self.s.clock.freeze(T0 + 5 * 10**9)
        seen = set()
        for life in range(4):
            ids = [self.c.call("FCALL", "rl_acquire", "1", "l:ids", "10", "100000")[5] for _ in range(3)]
            for i in ids:
                self.assertRegex(i, r"^%d-\d+$" % ((T0 + 5 * 10**9) // 1000))
                self.assertNotIn(i, seen)
                seen.add(i)
                self.assertEqual(self.c.call("FCALL", "rl_release", "1", "l:ids", i), 1)
            self.assertEqual(self.c.call("EXISTS", "l:ids"), 0)
        # A client-named id of the generated form moves the sequence past it.
        self.c.call("FCALL", "rl_acquire", "1", "l:ids2", "10", "100000", "ID", "1-4000000000000000")
        g = self.c.call("FCALL", "rl_acquire", "1", "l:ids2", "10", "100000")[5]
        self.assertGreater(int(g.split("-")[1]), 4000000000000000)

    def test_wrongtype_between_module_library_and_other_keys(self):
        self.s.clock.freeze(T0 + 6 * 10**9)
        c = self.c
        c.call("RL.GCRA", "m:wt", "10", "1000")
        c.call("FCALL", "rl_gcra", "1", "l:wt", "10", "1000")
        c.call("FCALL", "rl_acquire", "1", "l:wtl", "10", "1000")
        c.call("SET", "plain", "G123")
        c.call("HSET", "hash", "a", "b")
        wt = Err("WRONGTYPE Operation against a key holding the wrong kind of value")
        self.assertEqual(c.call("FCALL", "rl_gcra", "1", "m:wt", "10", "1000"), wt)
        self.assertEqual(c.call("RL.GCRA", "l:wt", "10", "1000"), wt)
        # Another of the library's kinds: the error says which, as the module's does.
        holds = lambda held, want: Err("WRONGTYPE the key holds an %s limiter, not an %s one" % (held, want))  # noqa: E731
        self.assertEqual(c.call("FCALL", "rl_tokenbucket", "1", "l:wt", "10", "1", "1000"),
                         holds("RL.GCRA", "RL.TOKENBUCKET"))
        self.assertEqual(c.call("RL.TOKENBUCKET", "m:wt", "10", "1", "1000"), holds("RL.GCRA", "RL.TOKENBUCKET"))
        self.assertEqual(c.call("FCALL", "rl_slide", "1", "l:wtl", "10", "1000"), holds("RL.ACQUIRE", "RL.SLIDE"))
        self.assertEqual(c.call("FCALL", "rl_acquire", "1", "l:wt", "10", "1000"), holds("RL.GCRA", "RL.ACQUIRE"))
        self.assertEqual(c.call("FCALL", "rl_release", "1", "l:wt", "x"), holds("RL.GCRA", "RL.ACQUIRE"))
        self.assertEqual(c.call("FCALL", "rl_acquire", "1", "hash", "10", "1000"), wt)
        # A string of a GCRA state's form is one, to the library.
        self.assertEqual(c.call("FCALL", "rl_log", "1", "plain", "10", "1000"), holds("RL.GCRA", "RL.LOG"))
        self.assertEqual(c.call("FCALL_RO", "rl_peek", "1", "m:wt", "GCRA", "10", "1000"), wt)
        # Nothing was written by any of them.
        self.assertEqual(c.call("GET", "plain"), "G123")
        self.assertEqual(c.call("HGETALL", "hash"), ["a", "b"])

    def test_peek_cost0_denials_and_errors_write_nothing(self):
        c = self.c
        self.s.clock.freeze(T0 + 7 * 10**9)
        for fname, args in [("rl_gcra", ["1", "100000"]), ("rl_tokenbucket", ["1", "1", "100000"]),
                            ("rl_slide", ["1", "100000"]), ("rl_log", ["1", "100000"]),
                            ("rl_quota", ["1", "DAY"]), ("rl_acquire", ["1", "100000"])]:
            key = "l:nw:" + fname
            self.assertEqual(c.call("FCALL", fname, "1", key, *args)[0], 1)
            dirty = self.changes()
            for extra in (["PEEK"], ["COST", "0"], [], ["COST", "2"], ["COST", "x"]):
                r = c.call("FCALL", fname, "1", key, *(args + extra))
                self.assertTrue(isinstance(r, Err) or r[0] == 0 or extra != [], (fname, extra, r))
            self.assertEqual(c.call("FCALL_RO", "rl_peek", "1", key,
                                    {"rl_acquire": "CONCURRENCY", "rl_tokenbucket": "TOKENBUCKET"}.get(
                                        fname, fname[3:].upper()), *args)[0], 0)
            self.assertEqual(self.changes(), dirty, fname)

    def changes(self):
        info = self.c.call("INFO", "persistence")
        return int(re.search(r"rdb_changes_since_last_save:(\d+)", info).group(1))


class ManagedService(unittest.TestCase):
    """No module, MODULE refused (enable-module-command no, and an ACL user
    without MODULE): the library alone."""

    def start(self, **kw):
        extra = ["--enable-module-command", "no"] + kw.pop("extra", [])
        s = Server(module=None, extra=extra, **kw)
        s.start()
        self.addCleanup(s.stop)
        return s

    def app_user(self, s):
        s.conn.call("ACL", "SETUSER", "app", "on", ">secret", "~*", "&*", "+@all", "-module")
        c = s.connect()
        self.addCleanup(c.close)
        self.assertEqual(c.call("AUTH", "app", "secret"), "OK")
        return c

    def test_every_function_without_the_module(self):
        clock = FakeClock(os.path.join(tempfile.mkdtemp(prefix="rl-lua-clock-"), "clock"))
        self.addCleanup(shutil.rmtree, os.path.dirname(clock.path), True)
        clock.freeze(T0)
        s = self.start(clock=clock, name="managed")
        c = self.app_user(s)
        r = c.call("MODULE", "LOAD", os.path.abspath(MODULE))
        self.assertIsInstance(r, Err)
        self.assertIsInstance(s.conn.call("MODULE", "LOAD", os.path.abspath(MODULE)), Err)
        s.load_library(c)
        fc = lambda *a: c.call("FCALL", *a)  # noqa: E731
        self.assertEqual(fc("rl_version", "0"), "1.0.1")
        self.assertEqual(fc("rl_gcra", "1", "g", "10", "1000", "BURST", "5"), [1, 5, 4, 0, 100])
        self.assertEqual(fc("rl_gcra", "1", "g", "10", "1000", "BURST", "5", "COST", "5"), [0, 5, 4, 100, 100])
        self.assertIn(c.call("PTTL", "g"), (100, 101))  # the reset, or one more on a sub-ms clock
        self.assertEqual(fc("rl_tokenbucket", "1", "t", "5", "2", "1000", "COST", "5"), [1, 5, 0, 0, 2500])
        self.assertEqual(fc("rl_tokenbucket", "1", "t", "5", "2", "1000", "REFUND", "2"), [1, 5, 2, 0, 1500])
        # Sliding window: T0 is 123.456 ms into its 1 s window.
        self.assertEqual(fc("rl_slide", "1", "s", "5", "1000", "COST", "5"),
                         [1, 5, 0, 0, 1877])
        self.assertEqual(fc("rl_slide", "1", "s", "5", "1000")[:2], [0, 5])
        self.assertEqual(fc("rl_log", "1", "lg", "2", "1000", "COST", "2"), [1, 2, 0, 0, 1000])
        self.assertEqual(fc("rl_log", "1", "lg", "2", "1000"), [0, 2, 0, 1000, 1000])
        q = fc("rl_quota", "1", "q", "3", "DAY", "TZ", "UTC")
        day_left = 86_400_000 - (T0 // 1000) % 86_400_000
        self.assertEqual(q, [1, 3, 2, 0, day_left])
        self.assertEqual(c.call("PTTL", "q"), day_left)
        self.assertEqual(fc("rl_quota", "1", "q2", "3", "DAY", "TZ", "Nowhere/Land"),
                         Err("ERR TZ: unknown time zone 'Nowhere/Land'"))
        a = fc("rl_acquire", "1", "a", "2", "1000")
        self.assertEqual(a[:5], [1, 2, 1, 0, 1000])
        self.assertRegex(a[5], r"^%d-\d+$" % (T0 // 1000))
        self.assertEqual(fc("rl_acquire", "1", "a", "2", "1000", "ID", "job"), [1, 2, 0, 0, 1000, "job"])
        self.assertEqual(fc("rl_acquire", "1", "a", "2", "1000"), [0, 2, 0, 1000, 1000, None])
        self.assertEqual(fc("rl_renew", "1", "a", "job", "5000"), 1)
        self.assertEqual(fc("rl_release", "1", "a", a[5]), 1)
        self.assertEqual(fc("rl_release", "1", "a", a[5]), 0)
        self.assertIn(c.call("PTTL", "a"), (5000, 5001))  # the reset, or one more on a sub-ms clock
        r = fc("rl_all", "2", "x", "y", "GCRA", "1", "1000", "CONCURRENCY", "1", "1000", "ID", "w")
        self.assertEqual(r, [1, 0, [1, 1, 0, 0, 1000], [1, 1, 0, 0, 1000, "w"]])
        r = fc("rl_all", "2", "x", "y", "GCRA", "1", "1000", "CONCURRENCY", "1", "1000")
        self.assertEqual(r, [0, 1000, [0, 1, 0, 1000, 1000], [0, 1, 0, 1000, 1000, None]])
        self.assertEqual(c.call("FCALL_RO", "rl_peek", "1", "g", "GCRA", "10", "1000", "BURST", "5"),
                         [1, 5, 3, 0, 200])
        self.assertIsInstance(c.call("FCALL_RO", "rl_gcra", "1", "g", "10", "1000"), Err)
        # No waiting in a script: WAIT and MAXWAIT say so.
        self.assertEqual(fc("rl_acquire", "1", "a4", "2", "1000", "WAIT", "100"),
                         Err("ERR WAIT is not available in the Lua library: a script cannot block"))
        self.assertEqual(fc("rl_gcra", "1", "g4", "10", "1000", "maxwait", "100"),
                         Err("ERR MAXWAIT is not available in the Lua library: a script cannot block"))
        self.assertEqual(c.call("EXISTS", "a4", "g4"), 0)
        # RESP3: the same arrays (a function cannot see the protocol); a nil
        # lease is a null, not a boolean.
        c3 = s.connect()
        self.addCleanup(c3.close)
        self.assertIsInstance(c3.call("HELLO", "3", "AUTH", "app", "secret"), dict)
        self.assertEqual(c3.call("FCALL", "rl_acquire", "1", "a3", "1", "1000", "COST", "2"),
                         [0, 1, 1, -1, 0, None])
        # The EVALSHA form: the same file, its shebang line emptied.
        sha = c.call("SCRIPT", "LOAD", eval_source())
        self.assertEqual(c.call("EVALSHA", sha, "1", "g2", "rl_gcra", "10", "1000", "BURST", "5"), [1, 5, 4, 0, 100])
        self.assertEqual(c.call("GET", "g2"), c.call("GET", "g"))
        self.assertEqual(c.call("EVALSHA", sha, "1", "g2", "rl_nope"),
                         Err("ERR redis_rl: the first argument after the keys names the function (rl_gcra ...)"))
        self.assertEqual(c.call("EVAL_RO", eval_source(), "1", "g", "rl_peek", "GCRA", "10", "1000")[:3],
                         [1, 10, 8])

    def test_replica_and_aof_hold_the_same_state(self):
        clock = FakeClock(os.path.join(tempfile.mkdtemp(prefix="rl-lua-clock-"), "clock"))
        self.addCleanup(shutil.rmtree, os.path.dirname(clock.path), True)
        now = T0
        clock.freeze(now)
        mdir = tempfile.mkdtemp(prefix="rl-lua-master-")
        self.addCleanup(shutil.rmtree, mdir, True)
        aof = ["--appendonly", "yes", "--appendfsync", "always"]
        master = self.start(clock=clock, name="master", dir=mdir, extra=aof)
        replica = self.start(clock=clock, name="replica",
                             extra=["--replicaof", "127.0.0.1", str(master.port)])
        c = master.conn
        master.load_library()
        deadline = time.monotonic() + 20
        while "master_link_status:up" not in replica.conn.call("INFO", "replication"):
            self.assertLess(time.monotonic(), deadline, "replica did not sync")
            # Replication's timers run on the (fake) wall clock: let it move.
            now += 100_000
            clock.freeze(now)
            time.sleep(0.05)
        rng = random.Random(5)
        keys = ["g", "t", "s", "lg", "q", "a", "b"]
        ids = []
        for step in range(400):
            now += rng.choice([0, 1, 500, 20_000, 300_000])
            clock.freeze(now)
            k = rng.choice(keys)
            cost = rng.choice(["0", "1", "1", "2"])
            if k == "g":
                c.call("FCALL", "rl_gcra", "1", k, "7", "1000", "BURST", "3", "COST", cost)
            elif k == "t":
                c.call("FCALL", "rl_tokenbucket", "1", k, "5", "3", "1000", rng.choice(["COST", "REFUND"]),
                       max(cost, "1"))
            elif k == "s":
                c.call("FCALL", "rl_slide", "1", k, "5", "1000", "COST", cost)
            elif k == "lg":
                c.call("FCALL", "rl_log", "1", k, "4", "700", "COST", cost)
            elif k == "q":
                c.call("FCALL", "rl_quota", "1", k, "9", rng.choice(["HOUR", "1000", "60000"]), "COST", cost)
            elif k == "a":
                r = c.call("FCALL", "rl_acquire", "1", k, "3", rng.choice(["400", "2000"]), "COST", max(cost, "1"))
                if r[5]:
                    ids.append(r[5])
                if ids and rng.random() < 0.4:
                    if rng.random() < 0.5:
                        c.call("FCALL", "rl_release", "1", k, rng.choice(ids))
                    else:
                        c.call("FCALL", "rl_renew", "1", k, rng.choice(ids), rng.choice(["300", "3000"]))
            else:
                c.call("FCALL", "rl_all", "2", "b", "g", "CONCURRENCY", "2", "900", "ID", rng.choice("xyz"),
                       "GCRA", "7", "1000", "BURST", "3")
        self.assertEqual(c.call("WAIT", "1", "5000"), 1)
        state = self.snapshot(c, keys)
        self.assertEqual(c.call("WAIT", "1", "5000"), 1)
        self.assertTrue(any(v[0] is not None for v in state.values()))
        self.assertEqual(self.snapshot(replica.conn, keys), state)
        # AOF replay: the master restarted from its AOF alone.
        master.stop()
        again = self.start(clock=clock, name="master2", dir=mdir, extra=aof)
        self.assertEqual(self.snapshot(again.conn, keys), state)

    def snapshot(self, c, keys):
        out = {}
        for k in keys:
            t = c.call("TYPE", k)
            if t == "hash":
                v = sorted(c.call("HGETALL", k))
            elif t == "string":
                v = c.call("GET", k)
            else:
                v = None
            out[k] = (v, c.call("PEXPIRETIME", k))
        return out

    def test_peek_on_a_read_only_replica(self):
        s = self.start(name="ro-master")
        s.load_library()
        r = self.start(name="ro-replica", extra=["--replicaof", "127.0.0.1", str(s.port)])
        deadline = time.monotonic() + 20
        while "master_link_status:up" not in r.conn.call("INFO", "replication"):
            self.assertLess(time.monotonic(), deadline, "replica did not sync")
            time.sleep(0.05)
        s.conn.call("FCALL", "rl_gcra", "1", "k", "10", "60000")
        self.assertEqual(s.conn.call("WAIT", "1", "5000"), 1)
        while r.conn.call("FUNCTION", "LIST") == []:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        p = r.conn.call("FCALL_RO", "rl_peek", "1", "k", "GCRA", "10", "60000")
        self.assertEqual(p[:3], [1, 10, 8])
        w = r.conn.call("FCALL", "rl_gcra", "1", "k", "10", "60000")
        self.assertIsInstance(w, Err)


if __name__ == "__main__":
    unittest.main()
