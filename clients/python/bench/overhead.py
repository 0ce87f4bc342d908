"""The library's own cost per decision, beside a raw execute_command of the same call.

Not a test: prints figures. One connection, one thread, a limit large enough
that every call is allowed. Rounds alternate raw and library calls, and the
median round is reported, so drift on a shared machine hits both alike;
"rounds paired" is the median of each library round over the raw round
next to it (the figure least moved by drift).

    python3 bench/overhead.py --url redis://127.0.0.1:6379 [--n 20000] [--rounds 7]
    python3 bench/overhead.py --durable [--n 2000]

Without --url it starts a server itself (REDIS_SERVER, REDIS_RL_MODULE).
--durable: the cost of durable= (the decision and WAIT 1 in one pipeline):
starts a master and one replica on loopback (or takes --url, a master with
a replica) and times check() against check(durable=True) one by one,
interleaved: median and p99 per call, in ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, List

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from redis_rl import Concurrency, Durable, Gcra, Limiter, Slide  # noqa: E402


def per_call_us(fn: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def compare(name: str, raw: Callable[[], Any], lib: Callable[[], Any], n: int, rounds: int) -> None:
    """Two figures: the median of per-call times with raw and library calls interleaved one by one
    (robust to load spikes on a shared machine), and the median over rounds of n calls each."""
    for _ in range(max(1, n // 10)):  # warm up both
        raw()
        lib()
    clock = time.perf_counter_ns
    raw_ns: List[int] = []
    lib_ns: List[int] = []
    for _ in range(n):
        t0 = clock()
        raw()
        t1 = clock()
        lib()
        t2 = clock()
        raw_ns.append(t1 - t0)
        lib_ns.append(t2 - t1)
    r1, l1 = statistics.median(raw_ns) / 1000, statistics.median(lib_ns) / 1000
    raws: List[float] = []
    libs: List[float] = []
    for i in range(rounds):
        if i % 2:
            libs.append(per_call_us(lib, n))
            raws.append(per_call_us(raw, n))
        else:
            raws.append(per_call_us(raw, n))
            libs.append(per_call_us(lib, n))
    r2, l2 = statistics.median(raws), statistics.median(libs)
    # each library round over the raw round next to it: drift moves both alike
    paired = statistics.median(lib / raw for lib, raw in zip(libs, raws))
    print(f"{name:<40} interleaved median: raw {r1:6.1f} us, library {l1:6.1f} us ({(l1 / r1 - 1) * 100:+5.1f}%)"
          f" | rounds median: raw {r2:6.1f} us, library {l2:6.1f} us ({(l2 / r2 - 1) * 100:+5.1f}%)"
          f" | rounds paired {(paired - 1) * 100:+5.1f}%")


class Canned:
    """A client that answers at once, to time the library's own work alone."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def execute_command(self, *args: Any) -> Any:
        return self.reply


def durable_cost(url: str, n: int) -> None:
    """check() vs check(durable=...) and acquire+release with and without, interleaved, per call."""
    r = redis.Redis.from_url(url)
    lim = Limiter(r, timeout_ms=1_000)
    strict = Durable(1, 500)
    g = Gcra(1_000_000_000, 1_000, name="bench-durable")
    c = Concurrency(100_000, 60_000, name="bench-lease")
    print(f"redis-py {redis.__version__}, Python {sys.version.split()[0]}, {n} calls each, one connection; "
          f"replicas: {r.info('replication').get('connected_slaves')}")

    def lease_cycle(durable: Any) -> None:
        lease = lim.acquire(c, "u", durable=durable)
        lease.release()

    pairs = [("check()", lambda: lim.check(g, "u", durable=False), lambda: lim.check(g, "u", durable=strict)),
             ("acquire()+release()", lambda: lease_cycle(False), lambda: lease_cycle(strict))]
    for name, plain, durable in pairs:
        for _ in range(max(1, n // 10)):
            plain()
            durable()
        a: List[int] = []
        b: List[int] = []
        clock = time.perf_counter_ns
        for _ in range(n):
            t0 = clock()
            plain()
            t1 = clock()
            durable()
            t2 = clock()
            a.append(t1 - t0)
            b.append(t2 - t1)
        a.sort()
        b.sort()
        q = lambda xs, f: xs[min(len(xs) - 1, int(len(xs) * f))] / 1e6  # noqa: E731
        print(f"{name:<22} plain: median {q(a, 0.5):.3f} ms, p99 {q(a, 0.99):.3f} ms | durable (WAIT 1): median "
              f"{q(b, 0.5):.3f} ms, p99 {q(b, 0.99):.3f} ms | +{q(b, 0.5) - q(a, 0.5):.3f} ms median")
    assert lim.durable_failures == 0, f"{lim.durable_failures} calls were not acknowledged"
    lim.close()
    r.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--durable", action="store_true", help="measure durable= (starts a master and a replica)")
    args = ap.parse_args()
    if args.durable:
        servers = []
        url = args.url
        try:
            if url is None:
                from redis_server import RedisServer
                master = RedisServer()
                servers.append(master)
                replica = RedisServer(extra=["--replicaof", "127.0.0.1", str(master.port)])
                servers.append(replica)
                rc = redis.Redis(port=replica.port, decode_responses=True)
                deadline = time.monotonic() + 10
                while rc.info("replication").get("master_link_status") != "up":
                    if time.monotonic() > deadline:
                        raise RuntimeError("the replica did not connect")
                    time.sleep(0.05)
                rc.close()
                url = master.url
            durable_cost(url, args.n if args.n != 20_000 else 2_000)
        finally:
            for srv in servers:
                srv.stop()
        return
    server = None
    url = args.url
    if url is None:
        from redis_server import RedisServer
        server = RedisServer()
        url = server.url
    try:
        print(f"redis-py {redis.__version__}, Python {sys.version.split()[0]}, {args.rounds} rounds x {args.n} calls")
        g = Gcra(1_000_000_000, 1_000, name="bench")
        s = Slide(1_000_000_000, 60_000, name="bench2")
        for protocol in (2, 3):
            r = redis.Redis.from_url(url, protocol=protocol)
            r.flushall()
            same = Limiter(r, timeout_ms=None)  # the very client raw calls use
            own = Limiter(r)  # default: its own pool (100 ms timeout, no retries)
            key = same.key(g, "u")
            compare(f"RESP{protocol} check vs RL.GCRA (same client)",
                    lambda: r.execute_command("RL.GCRA", key, 1_000_000_000, 1_000),
                    lambda: same.check(g, "u"), args.n, args.rounds)
            compare(f"RESP{protocol} check vs RL.GCRA (own pool)",
                    lambda: r.execute_command("RL.GCRA", key, 1_000_000_000, 1_000),
                    lambda: own.check(g, "u"), args.n, args.rounds)
            k1, k2 = same.key(g, "v", tag="t"), same.key(s, "v", tag="t")
            compare(f"RESP{protocol} check_all(2) vs RL.ALL",
                    lambda: r.execute_command("RL.ALL", 2, k1, k2, "GCRA", 1_000_000_000, 1_000,
                                              "SLIDE", 1_000_000_000, 60_000),
                    lambda: same.check_all([(g, "v"), (s, "v")], tag="t"), args.n, args.rounds)
            own.close()
            r.close()
        canned = Limiter(Canned([1, 1_000_000_000, 999_999_999, 0, 1]), timeout_ms=None)
        canned_all = Limiter(Canned([1, 0, [1, 10**9, 10**9 - 1, 0, 1], [1, 10**9, 10**9 - 1, 0, 1]]), timeout_ms=None)
        # the fastest of 5 runs: on a shared machine a single run moves by a third
        us = min(per_call_us(lambda: canned.check(g, "u"), args.n) for _ in range(5))
        us_all = min(per_call_us(lambda: canned_all.check_all([(g, "v"), (s, "v")], tag="t"), args.n) for _ in range(5))
        print(f"library work alone (no I/O: args, parse, Decision; fastest of 5 x {args.n}): {us:.2f} us per check(), "
              f"{us_all:.2f} us per check_all() of 2")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
