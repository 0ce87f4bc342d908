#!/usr/bin/env python3
"""What N clients waiting on one key cost the server (RL.ACQUIRE ... WAIT).

For N waiters (default 1,000 and 10,000) on one lease set:

  memory     used_memory with N blocked waiters, minus the same N connections
             idle: bytes per waiter (the module's queue entry plus the
             server's blocked-client handle);
  raise      one call raises the limit from 1 to N + 1: every waiter is
             granted; the server's CPU time (INFO cpu) until all N replies
             are in, per waiter;
  chain      limit 1: each granted waiter's lease is released by the driver,
             which grants the next: N wakes one at a time; server CPU per
             wake, and the mean server time of an RL.RELEASE (which chooses
             the next waiter: INFO commandstats). O(N) overall means the
             per-waiter figures stay flat as N grows tenfold.

  scripts/wait-bounds.py --server S --module M [--n 1000,10000]

Prints one row per N. A measurement, not a test: it asserts nothing and
exits 0 unless a server fails to start. Needs `ulimit -n` above N + 100.
"""
import argparse, os, resource, selectors, socket, subprocess, sys, tempfile, time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def encode(*words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        w = w if isinstance(w, bytes) else str(w).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


class Conn:
    """A raw RESP2 connection (redis-py costs too much at 10,000)."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""

    def send(self, *words):
        self.s.sendall(encode(*words))

    def reply(self):
        while True:
            r = parse(self.buf, 0)
            if r is not None:
                value, end = r
                self.buf = self.buf[end:]
                return value
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk

    def call(self, *words):
        self.send(*words)
        return self.reply()


def parse(buf, at):
    """One RESP2 value from buf[at:], and where it ends; None if incomplete."""
    nl = buf.find(b"\r\n", at)
    if nl < 0:
        return None
    kind, line = buf[at:at + 1], buf[at + 1:nl]
    if kind in (b"+", b"-"):
        return (line.decode() if kind == b"+" else Exception(line.decode())), nl + 2
    if kind == b":":
        return int(line), nl + 2
    if kind == b"$":
        n = int(line)
        if n < 0:
            return None, nl + 2
        if len(buf) < nl + 2 + n + 2:
            return None
        return buf[nl + 2:nl + 2 + n], nl + 4 + n
    if kind == b"*":
        n, at, items = int(line), nl + 2, []
        for _ in range(n):
            r = parse(buf, at)
            if r is None:
                return None
            items.append(r[0])
            at = r[1]
        return items, at
    raise ValueError(f"bad reply {buf[at:at + 20]!r}")


def info(c, section):
    text = c.call("INFO", section).decode()
    return dict(l.split(":", 1) for l in text.splitlines() if ":" in l and not l.startswith("#"))


def cpu(c):
    i = info(c, "cpu")
    return float(i["used_cpu_user"]) + float(i["used_cpu_sys"])


def waiting(c):
    line = info(c, "rl")["rl_wait"]
    return int(dict(kv.split("=") for kv in line.split(","))["waiting"])


def until(what, cond, bound=60):
    deadline = time.time() + bound
    while not cond():
        if time.time() > deadline:
            sys.exit(f"timed out: {what}")
        time.sleep(0.01)


def run(server, module, n, d):
    port = free_port()
    p = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--dir", d, "--maxclients", str(n + 200), "--loadmodule", os.path.abspath(module)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while True:
            try:
                ctl = Conn(port)
                ctl.call("PING")
                break
            except OSError:
                if time.time() > deadline or p.poll() is not None:
                    sys.exit(f"server on {port} did not start")
                time.sleep(0.05)
        conns = [Conn(port) for _ in range(n)]
        for c in conns:
            c.call("PING")
        idle = int(info(ctl, "memory")["used_memory"])

        # The slot is held; every connection waits behind it, in order.
        held = ctl.call("RL.ACQUIRE", "pool", 1, 600000, "ID", "holder")
        assert held[0] == 1, held
        for i, c in enumerate(conns):
            c.send("RL.ACQUIRE", "pool", 1, 600000, "ID", f"w{i}", "WAIT", 600000)
        until(f"{n} waiting", lambda: waiting(ctl) == n)
        blocked = int(info(ctl, "memory")["used_memory"])
        per_waiter = (blocked - idle) / n

        # Chain: release the holder; each grant's lease is released in turn.
        ctl.call("CONFIG", "RESETSTAT")
        t0 = cpu(ctl)
        w0 = time.time()
        ctl.call("RL.RELEASE", "pool", "holder")
        for i, c in enumerate(conns):
            r = c.reply()
            assert r[0] == 1 and r[5] == f"w{i}".encode(), (i, r)
            ctl.call("RL.RELEASE", "pool", f"w{i}")
        chain_cpu = cpu(ctl) - t0
        chain_wall = time.time() - w0
        stat = next(v for k, v in info(ctl, "commandstats").items() if k.lower() == "cmdstat_rl.release")
        release_us = float(dict(kv.split("=") for kv in stat.split(","))["usec_per_call"])

        # Raise: all wait behind the holder again; one call makes room for all.
        ctl.call("RL.ACQUIRE", "pool", 1, 600000, "ID", "holder")
        for i, c in enumerate(conns):
            c.send("RL.ACQUIRE", "pool", 1, 600000, "ID", f"v{i}", "WAIT", 600000)
        until(f"{n} waiting again", lambda: waiting(ctl) == n)
        t0 = cpu(ctl)
        w0 = time.time()
        r = ctl.call("RL.ACQUIRE", "pool", n + 1, 600000, "ID", "holder")
        assert r[0] == 1, r
        for i, c in enumerate(conns):
            r = c.reply()
            assert r[0] == 1, (i, r)
        raise_cpu = cpu(ctl) - t0
        raise_wall = time.time() - w0
        for c in conns:
            c.s.close()
        return per_waiter, chain_cpu, chain_wall, release_us, raise_cpu, raise_wall
    finally:
        p.kill()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--n", default="1000,10000")
    a = ap.parse_args()
    ns = [int(x) for x in a.n.split(",")]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < max(ns) + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(ns) + 300), hard))
    print("waiters  bytes/waiter  chain: cpu us/wake (wall s)  RL.RELEASE us  raise: cpu us/waiter (wall s)")
    with tempfile.TemporaryDirectory() as d:
        for n in ns:
            mem, ccpu, cwall, rel, rcpu, rwall = run(a.server, a.module, n, d)
            print(f"{n:7d}  {mem:12.0f}  {ccpu / n * 1e6:10.1f} ({cwall:5.2f})"
                  f"        {rel:13.2f}  {rcpu / n * 1e6:10.1f} ({rwall:5.2f})")


if __name__ == "__main__":
    main()
