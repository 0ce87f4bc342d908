"""The synchronous Limiter, for redis.Redis and redis.cluster.RedisCluster."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from types import TracebackType
from typing import Any, Callable, Iterable, Optional, Type, Union

from redis.exceptions import ResponseError, SlotNotCoveredError

from .backend import Backend, LuaBackend, adapt, is_function_missing, prepare
from .core import DEFAULT_TIMEOUT_MS, Check, Core, FallbackHook, Identity, check_cost
from .decision import SOURCE_LOCAL, SOURCE_REDIS, Decision, single
from .errors import RateLimited
from .limits import FAIL_CLOSED, Concurrency, Limit, OnError
from .metrics import Metrics

__all__ = ["Limiter", "Lease", "Reservation"]

log = logging.getLogger("redis_rl")


class Limiter:
    """Checks limits on one Redis (or Redis Cluster) through redis-py's sync client.

    timeout_ms (default 100): the Limiter sends its commands on a pool of its
    own with this socket timeout and no client-side retries (a retried
    limiter call would consume twice), copied from the client's settings.
    None uses the client as given. A RedisCluster client is used as given
    (set its socket_timeout); each command goes to its key's node directly.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "rl:",
        on_error: OnError = FAIL_CLOSED,
        timeout_ms: Optional[int] = DEFAULT_TIMEOUT_MS,
        metrics: Optional[Metrics] = None,
        backend: Union[None, str, Backend] = None,
        on_fallback: Optional[FallbackHook] = None,
        cluster: Optional[bool] = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._core = Core(client, prefix=prefix, on_error=on_error, timeout_ms=timeout_ms, metrics=metrics,
                          backend=backend, on_fallback=on_fallback, cluster=cluster, clock=clock, async_=False)
        self.client = self._core.client
        self._route = self._core.route

    @property
    def backend(self) -> Backend:
        """The backend in use (backend="auto": the one chosen on the first call)."""
        return self._core.backend

    # --- plumbing ----------------------------------------------------------

    @property
    def prefix(self) -> str:
        return self._core.prefix

    @property
    def fallback_count(self) -> int:
        """How many times the failure policy decided (per limit involved)."""
        return self._core.fallback_count

    @property
    def fallbacks(self) -> Any:
        """Counter of failure-policy activations per (limit name, policy)."""
        return self._core.fallbacks

    def key(self, limit: Limit, identity: Identity, tag: Optional[str] = None) -> str:
        return self._core.key(limit, identity, tag)

    def close(self) -> None:
        """Close the Limiter's own connection pool (not the client you passed)."""
        if self._core.owns_client:
            self.client.close()
            self.client.connection_pool.disconnect()

    def __enter__(self) -> "Limiter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _call(self, args: Any, key: str) -> Any:
        core = self._core
        if not core.backend.ready:
            args = adapt(args, self.prepare())
        try:
            return self._send(args, key)
        except ResponseError as exc:
            if not (is_function_missing(exc) and isinstance(core.backend, LuaBackend)):
                raise
            # FUNCTION FLUSH, a restart without persistence: the function did not run; load, send once more
            core.backend.ready = False
            return self._send(adapt(args, self.prepare()), key)

    def prepare(self) -> Backend:
        """Set the backend up now (else the first call does): backend="auto" probes for the module,
        the Lua backend loads the library when it is missing or older. Returns the backend."""
        core = self._core
        steps = prepare(core.backend)
        try:
            step = next(steps)
            while True:
                args, everywhere = step
                if everywhere:  # each primary on its own: one node's error is that node's answer
                    nodes = self.client.get_primaries() if self._route else [None]
                    replies = []
                    for node in nodes:
                        try:
                            replies.append(self.client.execute_command(*args, **({} if node is None else
                                                                                 {"target_nodes": node})))
                        except Exception as exc:
                            replies.append(exc)
                    step = steps.send(replies)
                    continue
                try:
                    if self._route:
                        reply = self.client.execute_command(*args, target_nodes=self.client.get_random_node())
                    else:
                        reply = self.client.execute_command(*args)
                except Exception as exc:
                    step = steps.throw(exc)
                else:
                    step = steps.send(reply)
        except StopIteration as stop:
            core.backend = stop.value
        return core.backend

    def _send(self, args: Any, key: str) -> Any:
        if self._route:
            # a cluster client: send to the key's node ourselves (no COMMAND GETKEYS round trip for
            # RL.ALL, and no resend on a connection error; MOVED/ASK are still followed)
            try:
                node = self.client.get_node_from_key(key)
            except SlotNotCoveredError:  # its own path re-reads the slot map
                return self.client.execute_command(*args)
            return self.client.execute_command(*args, target_nodes=node)
        return self.client.execute_command(*args)

    # --- decisions ---------------------------------------------------------

    def check(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None) -> Decision:
        """One limit, one round trip (the kind's own command). Consumes `cost` when allowed."""
        core = self._core
        key = core.key(limit, identity, tag)
        if cost != 1:
            check_cost(cost)
        args = core.backend.check(limit, key, cost)
        t0 = time.perf_counter()
        try:
            reply = self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0)
        return core.finish_single(reply, limit, key, cost, t0)

    def check_all(self, checks: Iterable[Check], cost: int = 1, *, tag: Optional[str] = None) -> Decision:
        """Several limits as one all-or-nothing decision (one RL.ALL).

        checks: (limit, identity) or (limit, identity, cost) tuples. In a
        cluster all keys must share a slot: pass tag=... to put the same hash
        tag in every key; else CrossSlotError is raised before any round trip."""
        core = self._core
        items, args = core.plan_all(checks, check_cost(cost), tag)
        t0 = time.perf_counter()
        try:
            reply = self._call(args, items[0][1])
        except Exception as exc:
            return core.failure(exc, items, t0)
        return core.finish_all(reply, items, t0)

    def peek(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None) -> Decision:
        """What check() would answer, consuming nothing (RL.PEEK: works on read-only replicas)."""
        core = self._core
        key = core.key(limit, identity, tag)
        args = core.backend.peek(limit, key, check_cost(cost))
        t0 = time.perf_counter()
        try:
            reply = self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0, peek=True)
        return core.finish_single(reply, limit, key, cost, t0)

    def refund(self, limit: Limit, identity: Identity, amount: int, *, tag: Optional[str] = None) -> Decision:
        """Give `amount` units back (REFUND n). Never retried; errors are raised, not absorbed."""
        return self._refund_key(limit, self._core.key(limit, identity, tag), amount)

    def _refund_key(self, limit: Limit, key: str, amount: int) -> Decision:
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 2**32 - 1:
            raise ValueError("refund amount must be an int from 1 to 4294967295")
        args = self._core.backend.refund(limit, key, amount)
        reply = self._call(args, key)
        return single(reply, limit, key, 0)

    def refund_all(self, checks: Iterable[Check], amount: int = 1, *, tag: Optional[str] = None) -> Decision:
        """Give units back to several limits at once, all or nothing (one RL.ALL with REFUND per limit).

        checks: (limit, identity) or (limit, identity, amount) tuples, as check_all's. Never retried
        (a retried refund gives the units back twice); errors are raised, not absorbed."""
        items, args = self._core.plan_all(checks, amount, tag, refund=True)
        return self._core.finish_refund_all(self._call(args, items[0][1]), items)

    # --- concurrency ---------------------------------------------------------

    def leases(self, decision: Decision) -> "list[Lease]":
        """The leases a decision holds (check_all with Concurrency limits), each to release or
        renew on its own: lease.release() is True when it ended a live lease; False with
        lease.lost (it had expired) or with lease.error (the release failed, not retried)."""
        return [Lease(self, d.rule, d.key, d, d.lease) for d in decision.decisions
                if d.lease is not None and d.allowed and isinstance(d.rule, Concurrency)]

    def release(self, decision: Decision) -> int:
        """End the leases a decision holds (check/check_all of Concurrency limits). Returns how many
        live leases were ended. A failed release is logged, not retried (the lease expires)."""
        ended = 0
        for d in decision.decisions:
            if d.lease is None or not isinstance(d.rule, Concurrency):
                continue
            if d.source == SOURCE_LOCAL:
                self._core.local_refund(d, d.cost)
                continue
            if d.source != SOURCE_REDIS:
                continue
            try:
                ended += int(self._call(self.backend.release(d.key, d.lease), d.key))
            except Exception as exc:
                log.warning("redis_rl: lease release failed (%s: %s); not retried", type(exc).__name__, exc)
        return ended

    def acquire(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
                tag: Optional[str] = None) -> "Lease":
        """Take a lease; check `lease.acquired` (or `lease.decision`). Release with lease.release()."""
        if not isinstance(limit, Concurrency):
            raise TypeError("acquire/lease need a Concurrency limit")
        core = self._core
        key = core.key(limit, identity, tag)
        lease_id = id if id is not None else uuid.uuid4().hex  # ours: a retried acquire never takes two slots
        args = core.backend.check(limit, key, check_cost(cost), lease_id)
        t0 = time.perf_counter()
        try:
            reply = self._call(args, key)
            d = core.finish_single(reply, limit, key, cost, t0)
        except Exception as exc:
            d = core.failure(exc, [(limit, key, cost)], t0)
        except BaseException:
            # interrupted (KeyboardInterrupt, SystemExit) while the acquire may have reached the
            # server: end a lease of our id, best effort, once
            try:
                self._call(self.backend.release(key, lease_id), key)
            except Exception:
                pass
            raise
        return Lease(self, limit, key, d, lease_id if d.allowed else None)

    def lease(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
              renew_every_ms: Optional[int] = None, on_lost: Optional[Callable[["Lease"], None]] = None,
              tag: Optional[str] = None) -> "_LeaseContext":
        """`with limiter.lease(limit, who) as lease:` holds a slot for the block and releases it on
        every exit path. Denied: raises RateLimited(decision). renew_every_ms: a daemon thread
        renews the lease (RL.RENEW); if a renewal answers 0 the lease is lost (lease.lost, on_lost)."""
        return _LeaseContext(self, limit, identity, cost, id, renew_every_ms, on_lost, tag)

    def reserve(self, limit: Limit, identity: Identity, max_cost: int, *, tag: Optional[str] = None) -> "Reservation":
        """Consume `max_cost` now; `settle(actual)` later refunds `max_cost - actual` exactly once."""
        key = self._core.key(limit, identity, tag)
        if not limit.refundable:
            raise TypeError(f"{type(limit).__name__} limits cannot be reserved")
        d = self.check(limit, identity, max_cost, tag=tag)
        return Reservation(self, limit, key, max_cost, d)


class Lease:
    """A held concurrency slot (or a denied attempt: `acquired` False, `id` None)."""

    def __init__(self, limiter: Limiter, limit: Concurrency, key: str, decision: Decision,
                 lease_id: Optional[str]) -> None:
        self.limiter = limiter
        self.limit = limit
        self.key = key
        self.decision = decision
        self.id = lease_id
        #: True once a renewal answered 0 or the release found the lease expired
        self.lost = False
        self.released = False
        #: the error of a failed release (logged once, not retried), else None
        self.error: Optional[BaseException] = None
        self.on_lost: Optional[Callable[[Lease], None]] = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: Optional[threading.Thread] = None

    @property
    def acquired(self) -> bool:
        return self.decision.allowed

    def _mark_lost(self) -> None:
        if not self.lost:
            self.lost = True
            log.warning("redis_rl: lease on %r was lost (expired before renew/release)", self.limit.name)
            if self.on_lost is not None:
                try:
                    self.on_lost(self)
                except Exception:
                    log.exception("redis_rl: on_lost callback raised")

    def renew(self, lease_ms: Optional[int] = None) -> bool:
        """Extend the lease (RL.RENEW). False (and lost) if it was no longer live."""
        if self.id is None or self.decision.source != SOURCE_REDIS or self.released:
            return not self.lost
        args = self.limiter.backend.renew(self.key, self.id, lease_ms or self.limit.lease_ms)
        if int(self.limiter._call(args, self.key)) == 1:
            return True
        self._mark_lost()
        return False

    def start_renewer(self, every_ms: int) -> None:
        if every_ms < 1:
            raise ValueError("renew_every_ms must be at least 1")
        if self.id is None or self.decision.source != SOURCE_REDIS:
            return

        def run() -> None:
            while not self._stop.wait(every_ms / 1000):
                try:
                    if not self.renew():
                        return
                except Exception as exc:  # keep trying: the lease may still be live
                    log.warning("redis_rl: lease renewal failed (%s); will try again", exc)

        self._renewer = threading.Thread(target=run, name=f"redis-rl-renew-{self.limit.name}", daemon=True)
        self._renewer.start()

    def release(self) -> bool:
        """End the lease, once (idempotent). True if a live lease was ended. A failed release is
        logged once and not retried: the lease expires by itself after lease_ms."""
        with self._lock:
            if self.released:
                return False
            self.released = True
        self._stop.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join(timeout=5)
        d = self.decision
        if self.id is None:
            return False
        if d.source == SOURCE_LOCAL:
            self.limiter._core.local_refund(d, d.cost)
            return True
        if d.source != SOURCE_REDIS:
            return False
        try:
            ended = int(self.limiter._call(self.limiter.backend.release(self.key, self.id), self.key)) == 1
        except Exception as exc:
            self.error = exc
            log.warning("redis_rl: lease release failed (%s: %s); not retried, it expires in %d ms",
                        type(exc).__name__, exc, self.limit.lease_ms)
            return False
        if not ended:
            self._mark_lost()
        return ended


class _LeaseContext:
    def __init__(self, limiter: Limiter, limit: Concurrency, identity: Identity, cost: int, lease_id: Optional[str],
                 renew_every_ms: Optional[int], on_lost: Optional[Callable[[Lease], None]],
                 tag: Optional[str]) -> None:
        self._args = (limiter, limit, identity, cost, lease_id, renew_every_ms, on_lost, tag)
        self.lease: Optional[Lease] = None

    def __enter__(self) -> Lease:
        limiter, limit, identity, cost, lease_id, renew_every_ms, on_lost, tag = self._args
        lease = limiter.acquire(limit, identity, cost, id=lease_id, tag=tag)
        if not lease.acquired:
            raise RateLimited(lease.decision)
        lease.on_lost = on_lost
        self.lease = lease
        try:
            if renew_every_ms is not None:
                lease.start_renewer(renew_every_ms)
        except BaseException:
            lease.release()
            raise
        return lease

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self.lease is not None:
            self.lease.release()


class Reservation:
    """Units consumed up front; settle(actual) gives back max_cost - actual, exactly once.

    As a context manager: entering raises RateLimited if the reservation was
    denied; leaving without settle() keeps all max_cost consumed (no refund:
    the error that can only make the limit stricter)."""

    def __init__(self, limiter: Limiter, limit: Limit, key: str, max_cost: int, decision: Decision) -> None:
        self.limiter = limiter
        self.limit = limit
        self.key = key
        self.max_cost = max_cost
        self.decision = decision
        self.settled = False
        #: the refund's own decision (None until settled with a refund)
        self.refund_decision: Optional[Decision] = None
        self._lock = threading.Lock()

    @property
    def allowed(self) -> bool:
        return self.decision.allowed

    def settle(self, actual: int) -> Optional[Decision]:
        """Refund max_cost - actual (idempotent: only the first call acts; a refund is never
        retried, since a retried refund gives the units back twice). actual above max_cost charges
        the excess with a plain COST call (when it fits; denied, nothing more is charged)."""
        if isinstance(actual, bool) or not isinstance(actual, int) or actual < 0:
            raise ValueError("actual must be a non-negative int")
        with self._lock:
            if self.settled:
                return self.refund_decision
            self.settled = True
        d = self.decision
        if not d.allowed:
            return None
        diff = self.max_cost - actual
        if d.source == SOURCE_LOCAL:
            if diff > 0:
                self.limiter._core.local_refund(d, diff)
            return None
        if d.source != SOURCE_REDIS or diff == 0:
            return None
        try:
            if diff > 0:
                self.refund_decision = self.limiter._refund_key(self.limit, self.key, diff)
            else:
                core = self.limiter._core
                reply = self.limiter._call(core.backend.check(self.limit, self.key, -diff), self.key)
                self.refund_decision = single(reply, self.limit, self.key, -diff)
        except Exception as exc:  # logged once, never retried
            log.warning("redis_rl: settle of %r failed (%s: %s); not retried, the units stay charged",
                        self.limit.name, type(exc).__name__, exc)
            return None
        return self.refund_decision

    def __enter__(self) -> "Reservation":
        if not self.decision.allowed:
            raise RateLimited(self.decision)
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.settled = True
