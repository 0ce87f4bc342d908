"""Traffic for the fault tests: K threads on one rate limit, H lease holders on one lease set,
each recording what it saw (with times) so the test can count admissions and leases afterwards.

Every client call goes through the client library (redis_rl.Limiter); the strict mode uses its
`durable` option (the decision and `WAIT 1 t` in one pipeline, admitted only when the replica
acknowledged it). `durable_call` builds the same pipeline by hand, for the cost measurement.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from redis_rl import Concurrency, Durable, Gcra, Limiter, NotDurableError

now = time.monotonic


def durable_call(limiter: Limiter, limit: Any, key: str, args: List[Any], wait_ms: int) -> Tuple[Any, int]:
    """The strict mode: the limiter command, then WAIT 1 wait_ms, in one round trip (a pipeline, no
    MULTI: WAIT is refused inside MULTI). Returns (reply, replicas that acknowledged). Raises what
    the connection raises (the caller's failure policy answers)."""
    pipe = limiter.client.pipeline(transaction=False)
    pipe.execute_command(*args)
    pipe.execute_command("WAIT", 1, wait_ms)
    reply, acks = pipe.execute()
    return reply, int(acks)


def durable_check(limiter: Limiter, limit: Any, identity: str, wait_ms: int) -> Tuple[bool, str]:
    """(admitted, source): admitted only when allowed AND acknowledged by a replica. A denied call
    wrote nothing, so its WAIT answers at once. Any failure, or no acknowledgement, is a denial
    (fail-closed): the units may be consumed, never admitted twice."""
    d = limiter.check(limit, identity, durable=Durable(1, wait_ms))  # fail-closed on errors
    if d.source == "durable":
        return False, "not_durable"
    return d.allowed, d.source


@dataclass
class Call:
    t_send: float
    t_reply: float
    allowed: bool
    source: str


class RateClients:
    """K threads calling one limit as fast as they can (a 2 ms pause after a failure-policy answer,
    so a dead master is not hammered). Records every call."""

    def __init__(self, limiter: Limiter, limit: Gcra, identity: str, k: int, strict_wait_ms: Optional[int] = None):
        self.limiter = limiter
        self.limit = limit
        self.identity = identity
        self.strict_wait_ms = strict_wait_ms
        self.stop = threading.Event()
        self.calls: List[List[Call]] = [[] for _ in range(k)]
        self.errors: List[BaseException] = []
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(k)]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def run(self, i: int) -> None:
        out = self.calls[i]
        lim, limit, ident, strict = self.limiter, self.limit, self.identity, self.strict_wait_ms
        try:
            while not self.stop.is_set():
                t0 = now()
                if strict is None:
                    d = lim.check(limit, ident)
                    allowed, source = d.allowed, d.source
                else:
                    allowed, source = durable_check(lim, limit, ident, strict)
                t1 = now()
                out.append(Call(t0, t1, allowed, source))
                if source != "redis":
                    time.sleep(0.002)
        except BaseException as exc:  # an exception the library let through is a test failure
            self.errors.append(exc)

    def join(self, deadline_s: float = 10.0) -> None:
        self.stop.set()
        end = now() + deadline_s
        for t in self.threads:
            t.join(max(0.0, end - now()))
        assert not any(t.is_alive() for t in self.threads), "a client thread did not stop"

    def all_calls(self) -> List[Call]:
        return [c for per in self.calls for c in per]

    def admitted(self, before: Optional[float] = None) -> int:
        return sum(1 for c in self.all_calls() if c.allowed and c.source == "redis"
                   and (before is None or c.t_send < before))

    def admitted_so_far(self) -> int:
        return sum(sum(1 for c in list(per) if c.allowed and c.source == "redis") for per in self.calls)

    def rate(self, t0: float, t1: float) -> float:
        """Admissions per second answered in [t0, t1)."""
        n = sum(1 for c in self.all_calls() if c.allowed and c.source == "redis" and t0 <= c.t_reply < t1)
        return n / max(1e-9, t1 - t0)


@dataclass
class LeaseRecord:
    id: str
    acquired: float  # reply time of the acquire
    #: "released" (the holder let it go), "survived" (a renewal after an error answered 1),
    #: "lost" (a renewal answered 0), "expired_in_doubt" (no answer before its own deadline)
    outcome: str = "held"
    #: it met an error (the failover) while held
    doubted: bool = False
    #: how the doubt ended: "survived" (RENEW answered 1), "lost" (RENEW answered 0), else None
    resolution: Optional[str] = None
    #: the holder's own view, two ways: optimistic (live until release, RENEW 0, or its own deadline,
    #: errors ignored) and fenced (not counted while in doubt: from an error to the next RENEW 1)
    optimistic: List[Tuple[float, float]] = field(default_factory=list)
    fenced: List[Tuple[float, float]] = field(default_factory=list)


class LeaseHolders:
    """H threads competing for one lease set of `limit` slots: acquire (an ID of their own), hold
    for hold_ms while renewing every renew_ms, release, again. On an error while holding, the
    holder counts itself in doubt (stops "working") and renews until an answer: 1, survived; 0,
    lost. Strict: each acquire and renewal is followed by WAIT 1 and counts only when acknowledged."""

    def __init__(self, limiter: Limiter, limit: Concurrency, identity: str, h: int, hold_ms: int = 30,
                 renew_ms: int = 10, strict_wait_ms: Optional[int] = None) -> None:
        self.limiter = limiter
        self.limit = limit
        self.identity = identity
        self.key = limiter.key(limit, identity)
        self.hold = hold_ms / 1000
        self.renew_every = renew_ms / 1000
        self.lease_s = limit.lease_ms / 1000
        self.strict = strict_wait_ms
        self.stop = threading.Event()
        self.records: List[List[LeaseRecord]] = [[] for _ in range(h)]
        self.errors: List[BaseException] = []
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(h)]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    # one call each: (answer or None on error)
    def _acquire(self, lease_id: str) -> Tuple[Optional[bool], Any]:
        lim = self.limiter
        if self.strict is None:
            lease = lim.acquire(self.limit, self.identity, id=lease_id)
            if lease.decision.source != "redis":
                return None, None
            return lease.acquired, lease
        # durable: an acquire not acknowledged is denied (source "durable") and released by the library
        lease = lim.acquire(self.limit, self.identity, id=lease_id, durable=Durable(1, self.strict))
        if lease.decision.source == "durable":
            return False, None
        if lease.decision.source != "redis":
            return None, None
        return lease.acquired, lease

    def _renew(self, lease_id: str, lease: Any) -> Optional[bool]:
        lim = self.limiter
        if self.strict is None:
            try:
                return bool(lease.renew())
            except Exception:
                return None
        try:
            return bool(lease.renew())  # the lease's own durable: its renewals wait for the replica
        except NotDurableError:
            return None  # renewed, not known durable: still in doubt
        except Exception:
            return None

    def _release(self, lease_id: str, lease: Any) -> None:
        if lease is not None:
            lease.release()
            return
        try:
            self.limiter.client.execute_command(*self.limiter.backend.release(self.key, lease_id))
        except Exception:
            pass

    def run(self, i: int) -> None:
        out = self.records[i]
        try:
            while not self.stop.is_set():
                lease_id = uuid.uuid4().hex
                t_send = now()
                ok, lease = self._acquire(lease_id)
                t_reply = now()
                if not ok:
                    time.sleep(0.002)
                    continue
                rec = LeaseRecord(lease_id, t_reply)
                out.append(rec)
                self.hold_one(rec, lease, t_send)
        except BaseException as exc:
            self.errors.append(exc)

    def hold_one(self, rec: LeaseRecord, lease: Any, confirmed_send: float) -> None:
        opt_start = fen_start = rec.acquired
        in_doubt = False
        hold_until = rec.acquired + self.hold
        while True:
            deadline = confirmed_send + self.lease_s  # the holder's own view of its expiry
            t = now()
            if t >= deadline:
                rec.outcome = "expired_in_doubt" if in_doubt else "expired"
                rec.optimistic.append((opt_start, deadline))
                if not in_doubt:
                    rec.fenced.append((fen_start, deadline))
                return
            if not in_doubt and (t >= hold_until or self.stop.is_set()):
                rec.optimistic.append((opt_start, t))
                rec.fenced.append((fen_start, t))
                rec.outcome = "released"
                self._release(rec.id, lease)
                return
            time.sleep(self.renew_every)
            t_send = now()
            answer = self._renew(rec.id, lease)
            t_reply = now()
            if answer is None:
                if not in_doubt:
                    in_doubt = True
                    rec.doubted = True
                    rec.fenced.append((fen_start, t_reply))
                continue
            if answer:
                confirmed_send = t_send
                if in_doubt:
                    in_doubt = False
                    rec.resolution = rec.resolution or "survived"
                    fen_start = t_reply
                    hold_until = t_reply + self.hold
                continue
            rec.outcome = "lost"
            if in_doubt:
                rec.resolution = rec.resolution or "lost"
            rec.optimistic.append((opt_start, min(t_reply, deadline)))
            if not in_doubt:
                rec.fenced.append((fen_start, t_reply))
            return

    def join(self, deadline_s: float = 15.0) -> None:
        self.stop.set()
        end = now() + deadline_s
        for t in self.threads:
            t.join(max(0.0, end - now()))
        assert not any(t.is_alive() for t in self.threads), "a lease holder did not stop"

    def all_records(self) -> List[LeaseRecord]:
        return [r for per in self.records for r in per]


def max_overlap(intervals: List[Tuple[float, float]]) -> int:
    """The largest number of intervals [a, b) live at one instant."""
    events = sorted([(a, 1) for a, b in intervals if b > a] + [(b, -1) for a, b in intervals if b > a])
    live = best = 0
    for _, d in events:  # at equal times -1 sorts first: [a, b) intervals
        live += d
        best = max(best, live)
    return best
