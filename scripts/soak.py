#!/usr/bin/env python3
"""A soak: mixed traffic over every kind for DURATION seconds, with a replica
and AOF rewrites, checked at intervals.

  scripts/soak.py --server S --module M [--duration 60] [--interval 0] [--json F]

Starts, on free loopback ports, a master (appendonly, the module) and a
replica of it. Worker threads drive every command (RL.GCRA, RL.TOKENBUCKET,
RL.SLIDE, RL.LOG, RL.QUOTA with zones, RL.ACQUIRE / RL.RENEW / RL.RELEASE,
RL.ALL, RL.PEEK, refunds, CL.THROTTLE, RL.TOP, INFO rl) over a few thousand
keys, pipelined. Every interval (default: a tenth of the duration, at least
5 s) it rewrites the AOF, stops the traffic, waits for the replica and
checks:
  - master and replica hold the same value (DEBUG DIGEST-VALUE) and expiry
    for every key that lives on (keys about to expire are left out: they may
    expire on one side between two reads);
  - used_memory (after a warm-up of the first quarter) stays within a bound:
    the rest of the run never exceeds the warm-up's peak by more than 2 MiB
    plus 5 % (state is small and expires by itself, so memory is flat);
  - SLOWLOG: the slowest call since the last check (every call over 1 ms is
    logged; the report lists the worst).
At the end: DEBUG RELOAD on the replica, a master restart from its AOF, and
both digests against the one before. Exits non-zero if a check fails or a
server dies. Every wait has a deadline.
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, binary, module, d, extra=()):
        self.binary, self.module, self.dir, self.extra = binary, module, d, list(extra)
        self.port = free_port()
        self.proc = None

    def start(self):
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--enable-debug-command", "yes", "--loadmodule", self.module,
                "--logfile", os.path.join(self.dir, "server.log"), *self.extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = self.client()
        deadline = time.time() + 20
        while True:
            try:
                c.ping()
                # Loading an AOF answers -LOADING until it is done.
                if c.info("persistence").get("loading", 0) == 0:
                    return c
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"soak: server on {self.port} did not start (see {self.dir}/server.log)")
            time.sleep(0.05)

    def client(self, **kw):
        return redis.Redis(port=self.port, protocol=2, socket_timeout=30, **kw)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


KINDS = list(range(12))


def one_call(rnd, k):
    """A random command of a random kind (args as a list)."""
    kind = rnd.choice(KINDS)
    n = rnd.randrange(2000)
    if kind == 0:
        return ["RL.GCRA", f"g:{n}", 10, 1000, "BURST", 5] + (["COST", 2] if rnd.random() < 0.1 else [])
    if kind == 1:
        return ["RL.TOKENBUCKET", f"tb:{n}", 20, 5, 1000] + (["REFUND", 1] if rnd.random() < 0.1 else [])
    if kind == 2:
        return ["RL.SLIDE", f"s:{n}", 30, 2000]
    if kind == 3:
        return ["RL.LOG", f"l:{n % 500}", 50, 3000] + (["REFUND", 1] if rnd.random() < 0.05 else [])
    if kind == 4:
        z = ZONES[n % len(ZONES)]
        return ["RL.QUOTA", f"q:{n % 300}:{z}", 100, ["HOUR", "DAY", 5000][n % 3]] + ([] if n % 3 == 2 else ["TZ", z])
    if kind == 5:
        return ["RL.ACQUIRE", f"c:{n % 200}", 8, rnd.choice([200, 1000, 3000]), "ID", f"w{k}-{rnd.randrange(20)}"]
    if kind == 6:
        return ["RL.RELEASE", f"c:{n % 200}", f"w{k}-{rnd.randrange(20)}"]
    if kind == 7:
        return ["RL.RENEW", f"c:{n % 200}", f"w{k}-{rnd.randrange(20)}", 1000]
    if kind == 8:
        t = f"{{t{n % 100}}}"
        return ["RL.ALL", 3, f"{t}:u", f"{t}:tenant", f"{t}:db", "GCRA", 10, 1000, "BURST", 5, "SLIDE", 100, 10000,
                "TOKENBUCKET", 50, 10, 1000, "COST", 1 + n % 3]
    if kind == 9:
        return ["RL.PEEK", "GCRA", f"g:{n}", 10, 1000, "BURST", 5]
    if kind == 10:
        return ["CL.THROTTLE", f"cell:{n}", 15, 30, 60, 1]
    return ["RL.ACQUIRE", f"c:{n % 200}", 8, 1000]  # a generated id, expires by itself


class Traffic:
    def __init__(self, server, workers):
        self.server = server
        self.go = threading.Event()
        self.stop = False
        self.calls = 0
        self.errors = []
        self.lock = threading.Lock()
        self.paused = threading.Semaphore(0)
        self.threads = [threading.Thread(target=self.run, args=(k,), daemon=True) for k in range(workers)]

    def run(self, k):
        rnd = random.Random(k)
        c = self.server.client()
        while not self.stop:
            if not self.go.is_set():
                self.paused.release()
                self.go.wait()
                continue
            p = c.pipeline(transaction=False)
            for _ in range(50):
                p.execute_command(*one_call(rnd, k))
            if rnd.random() < 0.02:
                p.execute_command("RL.TOP", "DENIED", "COUNT", 5)
                p.info("rl")
            try:
                replies = p.execute(raise_on_error=False)
            except redis.RedisError as e:  # a dead server or a protocol error
                with self.lock:
                    self.errors.append(repr(e))
                return
            bad = [r for r in replies if isinstance(r, redis.ResponseError)]
            with self.lock:
                self.calls += len(replies)
                self.errors.extend(repr(e) for e in bad[:3])

    def pause(self):
        self.go.clear()
        deadline = time.time() + 60
        for _ in self.threads:
            if not self.paused.acquire(timeout=max(0.1, deadline - time.time())):
                raise SystemExit("soak: traffic did not pause within 60 s")

    def resume(self):
        self.go.set()


# Keys that expire within this many ms are left out of a comparison: they
# may expire on one side between the two reads (DEBUG DIGEST would count
# them, so it differs while keys expire by themselves).
MARGIN_MS = 3000


def key_digests(c, keys=None):
    """{key: (DEBUG DIGEST-VALUE, PTTL)} of every key that lives on (PTTL -1
    or above MARGIN_MS); of `keys`, if given, every one that exists."""
    names = list(c.scan_iter(count=1000)) if keys is None else list(keys)
    out = {}
    for i in range(0, len(names), 500):
        part = names[i:i + 500]
        p = c.pipeline(transaction=False)
        for k in part:
            p.pttl(k)
            p.execute_command("DEBUG", "DIGEST-VALUE", k)
        replies = p.execute(raise_on_error=False)
        for k, ttl, dig in zip(part, replies[0::2], replies[1::2]):
            if isinstance(ttl, int) and (ttl == -1 or ttl > (0 if keys is not None else MARGIN_MS)):
                out[k] = (dig, ttl)
    return out


def same_digests(a, c):
    """Every key of `a` is on `c` with the same value, and its expiry within
    two seconds of `a`'s (time passes between the reads)."""
    b = key_digests(c, a.keys())
    for k, (dig, ttl) in a.items():
        if k not in b:
            print(f"soak: {k!r} (pttl {ttl}) is missing on the other side", file=sys.stderr)
            return False
        d2, t2 = b[k]
        if d2 != dig or (ttl == -1) != (t2 == -1) or abs(ttl - t2) > 2000:
            print(f"soak: {k!r} differs: {dig!r} pttl {ttl} vs {d2!r} pttl {t2}", file=sys.stderr)
            return False
    return True


def same_state(m, r):
    """Master and replica hold the same values for every key that lives on,
    both ways round; how many keys were compared."""
    a, b = key_digests(m), key_digests(r)
    return same_digests(a, r) and same_digests(b, m), len(a)


def wait_for(pred, what, seconds=60):
    deadline = time.time() + seconds
    while not pred():
        if time.time() > deadline:
            raise SystemExit(f"soak: timed out waiting for {what}")
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--interval", type=float, default=0)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--kinds", help="only these call kinds (0-11, comma-separated; for narrowing a failure down)")
    a = ap.parse_args()
    if a.kinds:
        KINDS[:] = [int(x) for x in a.kinds.split(",")]
    module = os.path.abspath(a.module)
    interval = a.interval or max(5.0, a.duration / 10)
    d = tempfile.mkdtemp(prefix="rl-soak-")
    md, rd = os.path.join(d, "master"), os.path.join(d, "replica")
    os.mkdir(md), os.mkdir(rd)
    master = Server(a.server, module, md, ["--appendonly", "yes", "--appendfsync", "no"])
    replica = None
    failures, rows = [], []
    try:
        m = master.start()
        replica = Server(a.server, module, rd, ["--replicaof", "127.0.0.1", str(master.port)])
        r = replica.start()
        wait_for(lambda: r.info("replication").get("master_link_status") == "up", "the replica's link")
        for c in (m, r):
            c.config_set("slowlog-log-slower-than", 1000)
            c.config_set("slowlog-max-len", 1024)
            c.slowlog_reset()
        traffic = Traffic(master, a.workers)
        for t in traffic.threads:
            t.start()
        traffic.resume()
        start = time.time()
        warm_peak = None
        checks = 0
        while True:
            left = a.duration - (time.time() - start)
            time.sleep(max(0, min(interval, left)))
            m.bgrewriteaof()
            traffic.pause()
            wait_for(lambda: m.info("persistence").get("aof_rewrite_in_progress") == 0, "the AOF rewrite")
            offset = m.info("replication")["master_repl_offset"]
            m.execute_command("WAIT", 1, 10000)
            wait_for(lambda: r.info("replication").get("slave_repl_offset", 0) >= offset, "the replica's offset")
            equal, compared = same_state(m, r)
            mem = m.info("memory")
            # The limiter commands only (not the checks' own SCAN, DEBUG, ...).
            slow = [e for e in m.slowlog_get(1024) if e["command"][:3].upper() in (b"RL.", b"CL.")]
            m.slowlog_reset()
            worst = max(slow, key=lambda e: e["duration"], default=None)
            elapsed = time.time() - start
            row = {
                "t_s": round(elapsed, 1),
                "calls": traffic.calls,
                "keys": m.dbsize(),
                "used_memory": mem["used_memory"],
                "digests_equal": equal,
                "keys_compared": compared,
                "calls_over_1ms": len(slow),
                "slowest_us": worst["duration"] if worst else 0,
                "slowest": worst["command"].decode(errors="replace")[:80] if worst else "",
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            checks += 1
            if not equal:
                failures.append(f"t={row['t_s']} s: master and replica differ")
            if elapsed <= a.duration / 4 or warm_peak is None:
                warm_peak = max(warm_peak or 0, mem["used_memory"])
            elif mem["used_memory"] > warm_peak * 1.05 + 2 * 1024 * 1024:
                failures.append(f"t={row['t_s']} s: used_memory {mem['used_memory']} over the warm-up peak {warm_peak}")
            if traffic.errors:
                failures.append(f"errors from the server: {traffic.errors[:5]}")
                traffic.errors.clear()
            if elapsed >= a.duration:
                break
            traffic.resume()
        traffic.stop = True
        traffic.go.set()
        # Persistence: the replica reloads from its own RDB, the master
        # restarts from its AOF; both hold what they held (keys that live on).
        before = key_digests(m)
        r.execute_command("DEBUG", "RELOAD")
        if not same_digests(before, r):
            failures.append("the replica's keys changed across DEBUG RELOAD")
        m.config_set("appendfsync", "always")
        m.execute_command("RL.GCRA", "soak:last", 1, 1000)
        before = key_digests(m)
        master.stop()
        m = master.start()
        if not same_digests(before, m):
            failures.append("the master's keys changed across a restart from its AOF")
        total = rows[-1]["calls"] if rows else 0
        summary = {
            "duration_s": a.duration,
            "checks": checks,
            "calls": total,
            "calls_per_s": round(total / max(a.duration, 1)),
            "used_memory_min": min(x["used_memory"] for x in rows),
            "used_memory_max": max(x["used_memory"] for x in rows),
            "keys_max": max(x["keys"] for x in rows),
            "calls_over_1ms": sum(x["calls_over_1ms"] for x in rows),
            "slowest_us": max(x["slowest_us"] for x in rows),
            "digests_equal_every_check": all(x["digests_equal"] for x in rows),
            "failures": failures,
        }
        print(json.dumps(summary), flush=True)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"summary": summary, "checks": rows}, f, indent=1)
    finally:
        for s in (replica, master):
            if s:
                s.stop()
        if not failures:
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"soak: logs kept in {d}", file=sys.stderr)
    if failures:
        print("soak: FAILED: " + "; ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"soak: ok, {summary['calls']} calls in {a.duration:.0f} s, {checks} checks, memory "
          f"{summary['used_memory_min']}..{summary['used_memory_max']} bytes, slowest call {summary['slowest_us']} us")


main()
