#!/usr/bin/env python3
"""Server-side time of the slowest lease-set calls at 100,000 leases.

Builds a lease set of N leases of 10 minutes, then times, with SLOWLOG (microseconds inside the server),
each case of issue 32 item 3:

  jumped     the clock goes back a minute (past every lease's start): a denied RL.ACQUIRE, RL.PEEK, the
             repairing call, RL.RELEASE, RL.RENEW, and the calls after it;
  lagging    a replica whose clock runs 5 s behind its master: RL.PEEK
             CONCURRENCY on the replica;
  expiry     every lease expires at once: the next RL.ACQUIRE (which drops
             them) and the calls after it.

  scripts/lease-bounds.py --server S --module M --shim fakeclock.so [--n N]

The set holds one lease of an hour (it keeps the key when the others
expire) beside leases of 10 minutes, so it mixes two lease_ms.

Prints one row per call: case, command, microseconds. A measurement, not a
test: it asserts nothing and exits 0 unless a server fails to start.
"""
import argparse, os, socket, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python", ".deps"))
import redis  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def set_clock(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def start(server, module, shim, clock_file, d, extra=()):
    port = free_port()
    env = dict(os.environ, LD_PRELOAD=shim, FAKECLOCK_FILE=clock_file)
    p = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--dir", d, "--enable-debug-command", "yes", "--loadmodule", os.path.abspath(module), *extra],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = redis.Redis(port=port, protocol=2)
    deadline = time.time() + 10
    while True:
        try:
            r.ping()
            return p, r, port
        except redis.ConnectionError:
            if time.time() > deadline or p.poll() is not None:
                p.kill()
                sys.exit(f"server on {port} did not start")
            time.sleep(0.05)


def timed(r, *cmd):
    r.slowlog_reset()
    try:
        reply = r.execute_command(*cmd)
    except redis.ResponseError as e:
        reply = f"(error) {e}"
    log = [e for e in r.slowlog_get(10) if e["command"].split(b" ")[0].upper() == str(cmd[0]).upper().encode()]
    return (log[0]["duration"] if log else -1), reply


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--n", type=int, default=100_000)
    a = ap.parse_args()
    n = a.n
    rows = []
    with tempfile.TemporaryDirectory() as d:
        mclock, rclock = os.path.join(d, "m.clock"), os.path.join(d, "r.clock")
        # Offsets from the real clock (a frozen clock stalls replication).
        set_clock(mclock, "+0")
        set_clock(rclock, "-5000000")
        md, rd = os.path.join(d, "m"), os.path.join(d, "r")
        os.mkdir(md), os.mkdir(rd)
        mp, m, mport = start(a.server, a.module, a.shim, mclock, md)
        rp, rep, _ = start(a.server, a.module, a.shim, rclock, rd, ("--replicaof", "127.0.0.1", str(mport)))
        try:
            for c in (m, rep):
                c.config_set("slowlog-log-slower-than", 0)
            lease_ms = 600_000
            pipe = m.pipeline(transaction=False)
            # One lease of an hour keeps the key when the others expire.
            pipe.execute_command("RL.ACQUIRE", "pool", n, 3_600_000, "ID", "keeper")
            for i in range(n - 1):
                pipe.execute_command("RL.ACQUIRE", "pool", n, lease_ms, "ID", f"holder-{i}")
                if i % 5000 == 4999:
                    pipe.execute()
            pipe.execute()
            m.execute_command("WAIT", 1, 5000)
            base = ("pool", n, lease_ms)
            rows.append(("steady", "RL.ACQUIRE (denied)", *timed(m, "RL.ACQUIRE", *base)))
            rows.append(("steady", "RL.PEEK", *timed(m, "RL.PEEK", "CONCURRENCY", *base)))
            # The replica's clock is 5 s behind: every lease starts after its now.
            for k in range(3):
                rows.append(("lagging", f"RL.PEEK on the replica #{k + 1}", *timed(rep, "RL.PEEK", "CONCURRENCY", *base)))
            # The master's clock goes back a minute, then a second more each time.
            set_clock(mclock, "-60000000")
            rows.append(("jumped", "RL.PEEK", *timed(m, "RL.PEEK", "CONCURRENCY", *base)))
            rows.append(("jumped", "RL.PEEK again", *timed(m, "RL.PEEK", "CONCURRENCY", *base)))
            rows.append(("jumped", "RL.ACQUIRE denied (repairs)", *timed(m, "RL.ACQUIRE", *base)))
            rows.append(("jumped", "RL.ACQUIRE denied after", *timed(m, "RL.ACQUIRE", *base)))
            set_clock(mclock, "-61000000")
            rows.append(("jumped", "RL.RELEASE (repairs)", *timed(m, "RL.RELEASE", "pool", "holder-7")))
            set_clock(mclock, "-62000000")
            rows.append(("jumped", "RL.RENEW (repairs)", *timed(m, "RL.RENEW", "pool", "holder-8", lease_ms)))
            set_clock(mclock, "-63000000")
            rows.append(("jumped", "RL.ACQUIRE allowed (repairs)", *timed(m, "RL.ACQUIRE", *base)))
            # Every lease expires at once.
            set_clock(mclock, f"+{lease_ms * 1000 + 60_000_000}")
            rows.append(("expiry", "RL.PEEK", *timed(m, "RL.PEEK", "CONCURRENCY", *base)))
            rows.append(("expiry", "RL.ACQUIRE denied", *timed(m, "RL.ACQUIRE", "pool", n, lease_ms, "COST", n)))
            rows.append(("expiry", "RL.ACQUIRE (drops)", *timed(m, "RL.ACQUIRE", *base)))
            for _ in range(3):
                rows.append(("expiry", "RL.ACQUIRE next", *timed(m, "RL.ACQUIRE", *base)))
            rows.append(("expiry", "RL.RELEASE", *timed(m, "RL.RELEASE", "pool", "keeper")))
            m.execute_command("WAIT", 1, 5000)
            rows.append(("replica", "DEBUG DIGEST equal", m.execute_command("DEBUG", "DIGEST") == rep.execute_command("DEBUG", "DIGEST"), ""))
        finally:
            for p in (rp, mp):
                p.kill()
                p.wait(10)
    print(f"{'case':8} {'call':34} {'us':>8}  reply")
    for case, call, us, reply in rows:
        print(f"{case:8} {call:34} {us!s:>8}  {reply}")


main()
