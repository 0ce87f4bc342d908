"""Drives one profile row (see profile.sh): waits for the server, loads the
library and the baselines, warms up, then sends N calls. Arguments: port N
command args... (KEY is replaced by the key; EVALSHA_LIB / EVALSHA_BASE:name
by the SHA of the library's EVAL form / of scripts/lua/name.lua)."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from rlserver import ROOT, Conn, LIBRARY, eval_source  # noqa: E402

port, n, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
deadline = time.monotonic() + 120
while True:
    try:
        c = Conn(port, timeout=600)
        if c.call("PING") == "PONG":
            break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("drive: server did not start")
    time.sleep(0.2)
c.call("FUNCTION", "LOAD", "REPLACE", open(LIBRARY).read())
lib_sha = c.call("SCRIPT", "LOAD", eval_source())


def zero():
    """Zeroes callgrind's counters: what ran so far is set-up."""
    pid = os.environ.get("CALLGRIND_PID")
    if pid:
        subprocess.run(["callgrind_control", "-z", pid], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def expand(args):
    out = []
    for a in args:
        if a == "KEY":
            a = "k"
        elif a == "EVALSHA_LIB":
            out += ["EVALSHA", lib_sha]
            continue
        elif a.startswith("EVALSHA_BASE:"):
            sha = c.call("SCRIPT", "LOAD", open(os.path.join(ROOT, "scripts", "lua", a.split(":")[1] + ".lua")).read())
            out += ["EVALSHA", sha]
            continue
        out.append(a)
    return out


if cmd == ["PAIR_MODULE"] or cmd == ["PAIR_LIB"]:
    lib = cmd == ["PAIR_LIB"]
    c.call(*(["FCALL", "rl_version", "0"]))
    zero()
    # Acquire then release (2 calls per pair, counted as one row call each).
    for i in range(n // 2 + 1):
        r = c.call(*(["FCALL", "rl_acquire", "1", "k", "100", "60000"] if lib else ["RL.ACQUIRE", "k", "100", "60000"]))
        c.call(*(["FCALL", "rl_release", "1", "k", r[5]] if lib else ["RL.RELEASE", "k", r[5]]))
    sys.exit(0)
full = expand(cmd)
r = c.call(*full)  # warm-up: builds the library (FUNCTION mode), creates the key
assert not isinstance(r, str) or not r.startswith("ERR"), r
zero()
batch = 100
for i in range(0, n, batch):
    c.pipeline([full] * min(batch, n - i))
