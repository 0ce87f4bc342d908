"""A paced outgoing client: many workers share one partner API's limit and wait their turn.

The partner allows 100 calls a minute per account and answers 429 to any
call beyond that. Twelve workers (threads here; pods in production) call it.
If each of them retries after a 429, the fastest wins, the slow ones starve,
and the retries arrive together. Instead every call first takes its turn
with `Limiter.pace()`: the module books the earliest start that keeps the
rate (RL.GCRA ... MAXWAIT), every caller of the key gets its own start, one
emission interval after the previous one, and pace() sleeps until it. The
partner never sees more than it allows, and nobody starves: starts are
handed out in the order the bookings arrive.

Two choices make "never a 429" hold, not just "rarely":
- burst=1: starts are evenly spaced; a GCRA with burst B may start B at
  once and then 1 per interval, so in any window of W ms it starts at most
  B + W / interval calls.
- headroom: the partner counts arrivals, and arrivals differ from starts by
  the network's jitter. Pacing at 80% of the partner's limit leaves 20% of
  a window for it (in any window the partner looks at, at most
  1 + 0.8 * limit * (W + jitter) / W calls arrive).

A booking beyond max_wait_ms is not made: pace() raises RateLimited (the
backlog is too long: shed the work or try later) and consumes nothing. A
worker told to stop (cancel=, a threading.Event) stops waiting at once and
its booked turn is given back (REFUND), so nothing is lost.

pace() needs the module (MAXWAIT): on the Lua library it raises
NotSupportedError.

Run by hand (a redis-server with the module on 6379, `make run`):
    PYTHONPATH=.deps:../../clients/python/src python3 paced_client.py --window-s 6
"""

from __future__ import annotations

import argparse
import collections
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Deque, List, Optional

import redis

from redis_rl import Gcra, Limiter, RateLimited, WaitCancelled


class PartnerApi:
    """A stand-in for the partner: 200 for at most `limit` calls in any `window_s` (a sliding log of
    the accepted calls' arrival times), 429 with Retry-After for any call beyond."""

    def __init__(self, limit: int = 100, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.lock = threading.Lock()
        self.accepted: Deque[float] = collections.deque()  # arrival times in the current window
        self.arrivals: List[float] = []  # every accepted call, for the tests
        self.ok = 0
        self.rejected = 0
        partner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, retry_after = partner.arrive()
                body = b'{"ok": true}' if status == 200 else b'{"error": "too many requests"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if retry_after is not None:
                    self.send_header("Retry-After", str(retry_after))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="partner", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def arrive(self) -> "tuple[int, Optional[int]]":
        with self.lock:
            now = self.clock()
            while self.accepted and self.accepted[0] <= now - self.window_s:
                self.accepted.popleft()
            if len(self.accepted) >= self.limit:
                self.rejected += 1
                return 429, max(1, int(self.accepted[0] + self.window_s - now + 0.999))
            self.accepted.append(now)
            self.arrivals.append(now)
            self.ok += 1
            return 200, None

    def busiest_window(self) -> int:
        """The most accepted calls in any window of window_s (what the partner's limit is about)."""
        times = sorted(self.arrivals)
        best, lo = 0, 0
        for hi, t in enumerate(times):
            while times[lo] <= t - self.window_s:
                lo += 1
            best = max(best, hi - lo + 1)
        return best

    def start(self) -> "PartnerApi":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def partner_limit(calls: int, window_ms: int, *, headroom: float = 0.8, name: str = "partner-api") -> Gcra:
    """Our side of the partner's "calls per window_ms": headroom of it, evenly spaced (burst=1)."""
    return Gcra(max(1, int(calls * headroom)), window_ms, burst=1, name=name)


class PacedPartnerClient:
    """Calls the partner only in its turn: Limiter.pace() before each request, shared by every worker
    (and every process) that uses the same Redis, limit name and account."""

    def __init__(self, limiter: Limiter, base_url: str, limit: Gcra, *, account: str = "acme",
                 max_wait_ms: int = 60_000, timeout_s: float = 10.0):
        self.limiter = limiter
        self.base_url = base_url
        self.limit = limit
        self.account = account
        self.max_wait_ms = max_wait_ms
        self.timeout_s = timeout_s

    def get(self, path: str, *, cancel: Optional[threading.Event] = None, paced: bool = True) -> int:
        """GET path in our turn; the partner's status. Raises RateLimited when the turn would be more
        than max_wait_ms away (nothing booked), WaitCancelled when cancel is set while waiting
        (the turn given back). paced=False skips the turn (the tests' "without it")."""
        if paced:
            self.limiter.pace(self.limit, self.account, max_wait_ms=self.max_wait_ms, cancel=cancel)
        try:
            with urllib.request.urlopen(self.base_url + path, timeout=self.timeout_s) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)


def run_workers(client: PacedPartnerClient, *, workers: int = 12, calls_per_worker: int = 10,
                stop: Optional[threading.Event] = None, paced: bool = True) -> List[int]:
    """Twelve workers (by default), each making its calls one after another; every status, in order
    of completion. A worker whose turn is too far away, or that is stopped, ends early."""
    statuses: List[int] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(calls_per_worker):
            if stop is not None and stop.is_set():
                return
            try:
                status = client.get("/v1/orders", cancel=stop, paced=paced)
            except (RateLimited, WaitCancelled):
                return
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=work, name=f"worker-{i}") for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--redis", default="redis://127.0.0.1:6379")
    ap.add_argument("--calls", type=int, default=100, help="the partner's limit per window")
    ap.add_argument("--window-s", type=float, default=60.0, help="the partner's window (scale it down to watch)")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--per-worker", type=int, default=10)
    args = ap.parse_args()
    partner = PartnerApi(args.calls, args.window_s).start()
    limiter = Limiter(redis.Redis.from_url(args.redis), timeout_ms=1000)  # background work: wait out a slow Redis
    client = PacedPartnerClient(limiter, partner.url, partner_limit(args.calls, int(args.window_s * 1000)),
                                max_wait_ms=int(args.window_s * 1000) * 10)
    t = time.monotonic()
    statuses = run_workers(client, workers=args.workers, calls_per_worker=args.per_worker)
    took = time.monotonic() - t
    partner.stop()
    print(f"{len(statuses)} calls in {took:.1f} s: {statuses.count(200)} ok, {statuses.count(429)} answered 429; "
          f"the partner's busiest {args.window_s:g} s window held {partner.busiest_window()} of {args.calls}")


if __name__ == "__main__":
    main()
