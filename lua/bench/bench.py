#!/usr/bin/env python3
"""A quick cost comparison inside the server: microseconds per call
(INFO commandstats usec_per_call, i.e. server CPU time per command, without
network or client time) and bytes per key (MEMORY USAGE), for the module's
commands, the Lua library's functions (FCALL and EVALSHA) and the Lua
baselines in scripts/lua. Not a test; figures vary with the machine.

  REDIS_SERVER=... REDIS_RL_MODULE=... python3 lua/bench/bench.py [calls]
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from rlserver import ROOT, Server, eval_source  # noqa: E402


def usec(c, cmd):
    m = re.search(r"cmdstat_%s:calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)" % re.escape(cmd),
                  c.call("INFO", "commandstats"), re.I)
    return float(m.group(3)) if m else float("nan")


def run(c, stat, make, n, keys):
    c.call("CONFIG", "RESETSTAT")
    batch = 200
    for i in range(0, n, batch):
        c.pipeline([make("k%d" % ((i + j) % keys)) for j in range(batch)])
    return usec(c, stat)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with Server(module=os.environ.get("REDIS_RL_MODULE"), name="bench") as s:
        c = s.conn
        s.load_library()
        sha = c.call("SCRIPT", "LOAD", eval_source())
        base = {k: c.call("SCRIPT", "LOAD", open(os.path.join(ROOT, "scripts", "lua", k + ".lua")).read())
                for k in ("gcra", "tokenbucket", "slide")}
        cases = [
            ("RL.GCRA", "rl.gcra", lambda k: ["RL.GCRA", "m" + k, "1000000", "1000"]),
            ("FCALL rl_gcra", "fcall", lambda k: ["FCALL", "rl_gcra", "1", "l" + k, "1000000", "1000"]),
            ("EVALSHA rl_gcra", "evalsha", lambda k: ["EVALSHA", sha, "1", "e" + k, "rl_gcra", "1000000", "1000"]),
            ("Lua baseline gcra.lua", "evalsha",
             lambda k: ["EVALSHA", base["gcra"], "1", "b" + k, "1000000", "1000", "1000000", "1"]),
            ("RL.TOKENBUCKET", "rl.tokenbucket", lambda k: ["RL.TOKENBUCKET", "m" + k, "1000000", "1000", "1000"]),
            ("FCALL rl_tokenbucket", "fcall",
             lambda k: ["FCALL", "rl_tokenbucket", "1", "l" + k, "1000000", "1000", "1000"]),
            ("RL.SLIDE", "rl.slide", lambda k: ["RL.SLIDE", "m" + k, "1000000", "1000"]),
            ("FCALL rl_slide", "fcall", lambda k: ["FCALL", "rl_slide", "1", "l" + k, "1000000", "1000"]),
            ("RL.QUOTA DAY", "rl.quota", lambda k: ["RL.QUOTA", "m" + k, "1000000", "DAY"]),
            ("FCALL rl_quota DAY", "fcall", lambda k: ["FCALL", "rl_quota", "1", "l" + k, "1000000", "DAY"]),
            ("RL.QUOTA DAY TZ America/New_York", "rl.quota",
             lambda k: ["RL.QUOTA", "m" + k, "1000000", "DAY", "TZ", "America/New_York"]),
            ("FCALL rl_quota DAY TZ America/New_York", "fcall",
             lambda k: ["FCALL", "rl_quota", "1", "l" + k, "1000000", "DAY", "TZ", "America/New_York"]),
            ("RL.LOG (limit 100)", "rl.log", lambda k: ["RL.LOG", "m" + k, "100", "1000"]),
            ("FCALL rl_log (limit 100)", "fcall", lambda k: ["FCALL", "rl_log", "1", "l" + k, "100", "1000"]),
            ("RL.ACQUIRE (lease 100 ms)", "rl.acquire", lambda k: ["RL.ACQUIRE", "m" + k, "1000", "100"]),
            ("FCALL rl_acquire (lease 100 ms)", "fcall",
             lambda k: ["FCALL", "rl_acquire", "1", "l" + k, "1000", "100"]),
        ]
        print("| call | us per call, 1000 keys | us per call, one key |")
        print("|---|---|---|")
        for name, stat, make in cases:
            many = run(c, stat, make, n, 1000)
            one = run(c, stat, make, n, 1)
            print("| %s | %.2f | %.2f |" % (name, many, one))
        # Bytes per key, one allowed call on a fresh key.
        print()
        print("| key | MEMORY USAGE bytes |")
        print("|---|---|")
        for name, cmd, key in [
            ("RL.GCRA", ["RL.GCRA", "mem:m", "100", "3600000"], "mem:m"),
            ("rl_gcra", ["FCALL", "rl_gcra", "1", "mem:l", "100", "3600000"], "mem:l"),
            ("gcra.lua baseline", ["EVALSHA", base["gcra"], "1", "mem:b", "100", "3600000", "100", "1"], "mem:b"),
            ("RL.SLIDE", ["RL.SLIDE", "mem:ms", "100", "3600000"], "mem:ms"),
            ("rl_slide", ["FCALL", "rl_slide", "1", "mem:ls", "100", "3600000"], "mem:ls"),
            ("RL.QUOTA", ["RL.QUOTA", "mem:mq", "100", "DAY"], "mem:mq"),
            ("rl_quota", ["FCALL", "rl_quota", "1", "mem:lq", "100", "DAY"], "mem:lq"),
            ("RL.ACQUIRE (1 lease)", ["RL.ACQUIRE", "mem:ma", "100", "3600000"], "mem:ma"),
            ("rl_acquire (1 lease)", ["FCALL", "rl_acquire", "1", "mem:la", "100", "3600000"], "mem:la"),
        ]:
            c.call(*cmd)
            print("| %s | %s |" % (name, c.call("MEMORY", "USAGE", key)))


if __name__ == "__main__":
    main()
