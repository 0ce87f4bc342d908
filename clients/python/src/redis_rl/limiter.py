"""The synchronous Limiter, for redis.Redis and redis.cluster.RedisCluster."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from types import TracebackType
from typing import Any, Callable, Iterable, Optional, Protocol, Tuple, Type, Union

from redis.exceptions import AskError, MovedError, ResponseError, SlotNotCoveredError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .backend import AutoBackend, Backend, LuaBackend, ModuleBackend, adapt, is_function_missing, prepare
from .core import (DEFAULT_TIMEOUT_MS, Check, Core, Durable, DurableOption, FallbackHook, Identity, blocking_timeout,
                   check_cost, wait_timeout, check_max_wait, check_wait_ms)
from .decision import SOURCE_DURABLE, SOURCE_REDIS, Decision, single
from .errors import NotDurableError, RateLimited, WaitCancelled, is_unavailable
from .lease_core import LeaseContextCore, LeaseCore, ReservationCore
from .limits import FAIL_CLOSED, Concurrency, Limit, OnError
from .metrics import Metrics

__all__ = ["Limiter", "Lease", "Reservation", "CancelEvent"]

log = logging.getLogger("redis_rl")


class CancelEvent(Protocol):
    """What pace(cancel=) needs: a threading.Event, or anything with the same two methods."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: Optional[float] = None) -> bool: ...


def _pause(seconds: float, cancel: Optional[CancelEvent]) -> bool:
    """pace()'s sleep: `seconds`, or until cancel is set (then True). Tests patch this."""
    if cancel is None:
        time.sleep(seconds)
        return False
    return bool(cancel.wait(seconds))


def _get_connection(pool: Any) -> Any:
    try:
        return pool.get_connection()
    except TypeError:  # redis-py before 5.3 wants a command name
        return pool.get_connection("RL.ACQUIRE")


class Limiter:
    """Checks limits on one Redis (or Redis Cluster) through redis-py's sync client.

    timeout_ms (default 100): the Limiter sends its commands on a pool of its
    own with this socket timeout and no client-side retries (a retried
    limiter call would consume twice), copied from the client's settings.
    None uses the client as given. A RedisCluster client is used as given
    (set its socket_timeout); each command goes to its key's node directly.

    durable (default None: off): True or Durable(replicas=1, timeout_ms=None). After
    every call that writes (an allowed check or check_all with a cost, a refund, an
    acquire, a renewal, a release) the Limiter sends `WAIT replicas timeout_ms` in the
    same pipeline (one round trip). An allowed decision that too few replicas
    acknowledged is turned into a denial (source "durable", 503; its units stay
    consumed on the master, its lease is released best-effort); a refund or renewal
    raises NotDurableError. Each call can override it with durable=.

    strict_params (default True): a limit name (or key function) is one set
    of parameters: using a limit of that name with other parameters (kind,
    limit, period, BURST...) through this Limiter raises
    ParameterConflictError before any round trip, since its keys hold one
    limiter whose parameters every call replaces. False (a live config
    reload that changes limits on purpose): a warning is logged once per
    name instead. At most 10,000 names are remembered.
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
        durable: DurableOption = None,
        strict_params: bool = True,
    ) -> None:
        self._core = Core(client, prefix=prefix, on_error=on_error, timeout_ms=timeout_ms, metrics=metrics,
                          backend=backend, on_fallback=on_fallback, cluster=cluster, clock=clock, async_=False,
                          durable=durable, strict_params=strict_params)
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

    @property
    def durable(self) -> Optional[Durable]:
        """The default strict mode (durable=), with its timeout filled in, or None."""
        return self._core.durable

    @property
    def durable_failures(self) -> int:
        """How many writes (allowed decisions, refunds, renewals) too few replicas acknowledged in time."""
        return self._core.durable_failures

    def _call_wait(self, args: Any, key: str, dur: Durable) -> "tuple[Any, int]":
        """The command and `WAIT replicas timeout_ms` in one round trip (not MULTI):
        (the command's reply, how many replicas acknowledged)."""
        core = self._core
        if not core.backend.ready:
            args = adapt(args, self.prepare())
        try:
            return self._send_wait(args, key, dur)
        except ResponseError as exc:
            if not (is_function_missing(exc) and isinstance(core.backend, LuaBackend)):
                raise
            core.backend.ready = False  # as in _call: the function did not run
            return self._send_wait(adapt(args, self.prepare()), key, dur)

    def _send_wait(self, args: Any, key: str, dur: Durable) -> "tuple[Any, int]":
        # One round trip on a connection of its own, so WAIT's answer is read with WAIT's own
        # timeout (see wait_timeout), not cut by the socket timeout (Redis 7.0 answers a timed-out
        # WAIT up to 100 ms late: a durable denial became a failure-policy one).
        reply, acks = self._call_blocking(args, key, 0, dur)
        return reply, int(acks or 0)

    def _release_quietly(self, key: str, lease_id: str) -> None:
        """End a lease whose acquire was not acknowledged: best effort, once, no WAIT."""
        try:
            self._call(self.backend.release(key, lease_id), key)
        except Exception as exc:
            log.warning("redis_rl: release of a lease not acknowledged by replicas failed (%s); it expires "
                        "by itself", exc)

    def _drop_leases(self, d: Decision) -> None:
        """A durable denial of a decision that took leases: release them (best effort)."""
        err = d.error
        orig = getattr(err, "decision", None) if d.source == SOURCE_DURABLE else None
        if orig is None:
            return
        for s in orig.decisions:
            if s.lease is not None and isinstance(s.rule, Concurrency):
                self._release_quietly(s.key, s.lease)

    def _ready(self, items: Any, peek: bool = False) -> Optional[Decision]:
        """backend="auto" before a call whose arguments depend on the backend (WAIT and MAXWAIT:
        the Lua library refuses them, so NotSupportedError is raised before the call): probe now.
        A server that cannot be reached is the failure policy's (its decision is returned)."""
        if self._core.backend.ready:
            return None
        try:
            self.prepare()
        except Exception as exc:
            return self._core.failure(exc, items, time.perf_counter(), peek=peek)
        return None

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

    def check(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None,
              durable: DurableOption = None, max_wait_ms: Optional[int] = None) -> Decision:
        """One limit, one round trip (the kind's own command). Consumes `cost` when allowed.
        durable: this call's strict mode (None: the Limiter's; False: off).

        max_wait_ms (Gcra and TokenBucket only; 0 to 1,000,000): a request that would conform
        within max_wait_ms is allowed now for a later start (MAXWAIT): its units are taken from
        that instant on, and `decision.wait_ms` says how long to wait before starting (0: at once).
        Beyond it: denied as usual, nothing booked. pace() books and sleeps for you. Another kind
        raises TypeError, the Lua backend NotSupportedError, both before any round trip."""
        core = self._core
        key = core.key(limit, identity, tag)
        if cost != 1:
            check_cost(cost)
        if max_wait_ms is None:
            args = core.backend.check(limit, key, cost)
        else:
            check_max_wait(max_wait_ms, (limit,))
            if isinstance(core.backend, AutoBackend):
                failed = self._ready([(limit, key, cost)])
                if failed is not None:
                    return failed
            args = core.backend.check(limit, key, cost, max_wait_ms=max_wait_ms)
        dur = core.durable if durable is None else core.pick(durable, None)
        t0 = time.perf_counter()
        if dur is not None and cost:
            try:
                reply, acks = self._call_wait(args, key, dur)
            except Exception as exc:
                return core.failure(exc, [(limit, key, cost)], t0)
            d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
            if d.source == SOURCE_DURABLE:
                self._drop_leases(d)
            return d
        try:
            reply = self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0)
        return core.finish_single(reply, limit, key, cost, t0)

    def check_all(self, checks: Iterable[Check], cost: int = 1, *, tag: Optional[str] = None,
                  durable: DurableOption = None, max_wait_ms: Optional[int] = None) -> Decision:
        """Several limits as one all-or-nothing decision (one RL.ALL).

        checks: (limit, identity) or (limit, identity, cost) tuples. In a
        cluster all keys must share a slot: pass tag=... to put the same hash
        tag in every key; else CrossSlotError is raised before any round trip.
        max_wait_ms: as check()'s, when every limit is a Gcra or TokenBucket: all of them book
        the same start, the earliest at which all conform (decision.wait_ms, and each one's)."""
        core = self._core
        if max_wait_ms is None:
            items, args = core.plan_all(checks, 1 if cost == 1 and type(cost) is int else check_cost(cost), tag)
        else:
            checks = list(checks)
            items, args = core.plan_all(checks, check_cost(cost), tag, max_wait_ms=max_wait_ms)
            if isinstance(core.backend, AutoBackend):
                failed = self._ready(items)
                if failed is not None:
                    return failed
                items, args = core.plan_all(checks, check_cost(cost), tag, max_wait_ms=max_wait_ms)
        dur = core.durable if durable is None else core.pick(durable, None)
        t0 = time.perf_counter()
        if dur is not None and any(item[2] for item in items):
            try:
                reply, acks = self._call_wait(args, items[0][1], dur)
            except Exception as exc:
                return core.failure(exc, items, t0)
            d = core.finish_all(reply, items, t0, acks, dur)
            if d.source == SOURCE_DURABLE:
                self._drop_leases(d)
            return d
        try:
            if self._route or type(core.backend) is not ModuleBackend:
                reply = self._call(args, items[0][1])
            else:  # _call and _send for the module on one server: the command as it is
                reply = self.client.execute_command(*args)
        except Exception as exc:
            return core.failure(exc, items, t0)
        return core.finish_all(reply, items, t0)

    def pace(self, limit: Limit, identity: Identity, cost: int = 1, *, max_wait_ms: int,
             tag: Optional[str] = None, cancel: Optional[CancelEvent] = None,
             durable: DurableOption = None) -> Decision:
        """Wait for a turn instead of failing: book the earliest start within max_wait_ms (MAXWAIT),
        sleep until it, and return the Decision (its wait_ms is how long it slept). For background
        work and outgoing calls to a rate-limited partner: every caller of the key gets its own
        start, one emission interval apart, and none sleeps longer than max_wait_ms.

        Gcra or TokenBucket only (else TypeError); the Lua backend raises NotSupportedError.
        Denied (the start would be later than max_wait_ms, or the cost can never fit): raises
        RateLimited(decision), having booked nothing. cancel: a threading.Event (or anything with
        is_set() and wait(timeout)); when it is set during the sleep, pace stops waiting, gives the
        booked units back (REFUND cost, once, not retried) and raises WaitCancelled (its .refund
        is the refund's Decision, None if the refund failed: then the units stay taken). Already
        set: raises WaitCancelled without a round trip. Interrupted during the sleep
        (KeyboardInterrupt): refunds likewise, then re-raises. The sleep starts when the answer
        arrives, so a start is never earlier than booked."""
        if cancel is not None and cancel.is_set():
            raise WaitCancelled(None)
        d = self.check(limit, identity, cost, tag=tag, durable=durable, max_wait_ms=max_wait_ms)
        if not d.allowed:
            raise RateLimited(d)
        if d.wait_ms <= 0:
            return d
        try:
            cancelled = _pause(d.wait_ms / 1000, cancel)
        except BaseException:
            self._give_back(d, durable)
            raise
        if cancelled:
            refund, err = self._give_back(d, durable)
            raise WaitCancelled(d, refund, err)
        return d

    def _give_back(self, d: Decision, durable: DurableOption) -> "Tuple[Optional[Decision], Optional[BaseException]]":
        """Refund a booking that will not be used (pace cancelled): once, never retried."""
        if d.source != SOURCE_REDIS or not d.cost or d.rule is None:
            return None, None
        try:
            return self._refund_key(d.rule, d.key, d.cost, durable), None
        except NotDurableError as exc:  # refunded on the master; not acknowledged in time
            return exc.decision, None
        except Exception as exc:
            log.warning("redis_rl: refund of a cancelled booking on %r failed (%s: %s); not retried, the units "
                        "stay taken", d.name, type(exc).__name__, exc)
            return None, exc

    def peek(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None,
             max_wait_ms: Optional[int] = None) -> Decision:
        """What check() would answer, consuming nothing (RL.PEEK: works on read-only replicas).
        max_wait_ms: what a booking would answer (its wait_ms), without booking."""
        core = self._core
        key = core.key(limit, identity, tag)
        if max_wait_ms is None:
            args = core.backend.peek(limit, key, check_cost(cost))
        else:
            check_max_wait(max_wait_ms, (limit,))
            if isinstance(core.backend, AutoBackend):
                failed = self._ready([(limit, key, cost)], peek=True)
                if failed is not None:
                    return failed
            args = core.backend.peek(limit, key, check_cost(cost), max_wait_ms=max_wait_ms)
        t0 = time.perf_counter()
        try:
            reply = self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0, peek=True)
        return core.finish_single(reply, limit, key, cost, t0)

    def refund(self, limit: Limit, identity: Identity, amount: int, *, tag: Optional[str] = None,
               durable: DurableOption = None) -> Decision:
        """Give `amount` units back (REFUND n). Never retried; errors are raised, not absorbed.
        With durable, too few acknowledgements raise NotDurableError (the refund happened on the
        master; a failover may lose it, which only makes the limit stricter)."""
        return self._refund_key(limit, self._core.key(limit, identity, tag), amount, durable)

    def _refund_key(self, limit: Limit, key: str, amount: int, durable: DurableOption = None) -> Decision:
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 2**32 - 1:
            raise ValueError("refund amount must be an int from 1 to 4294967295")
        core = self._core
        args = core.backend.refund(limit, key, amount)
        dur = core.durable if durable is None else core.pick(durable, None)
        if dur is None:
            return single(self._call(args, key), limit, key, 0)
        reply, acks = self._call_wait(args, key, dur)
        d = single(reply, limit, key, 0)
        if not core.acked(acks, dur, limit.name):
            raise NotDurableError(acks, dur.replicas, d)
        return d

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
        return [Lease(self, rule, d.key, d, lease, durable=self._core.durable)
                for d, rule, lease in self._core.held_leases(decision)]

    def release(self, decision: Decision) -> int:
        """End the leases a decision holds (check/check_all of Concurrency limits). Returns how many
        live leases were ended. A failed release is logged, not retried (the lease expires)."""
        ended = 0
        for key, lease in self._core.leases_to_release(decision):
            try:
                ended += int(self._call(self.backend.release(key, lease), key))
            except Exception as exc:
                log.warning("redis_rl: lease release failed (%s: %s); not retried", type(exc).__name__, exc)
        return ended

    def acquire(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
                tag: Optional[str] = None, durable: DurableOption = None, wait_ms: Optional[int] = None) -> "Lease":
        """Take a lease; check `lease.acquired` (or `lease.decision`). Release with lease.release().
        With durable, an acquire too few replicas acknowledged is denied (source "durable") and
        its lease released (best effort); the lease's renewals and release wait for replicas too.

        wait_ms (1 to 600,000): when no slot is free, wait up to wait_ms for one, in line on the
        server (RL.ACQUIRE ... WAIT: first come, first served; woken by a release, an expiry or a
        raised limit), then answer the grant, or the denial at the timeout. The call's socket
        timeout is the wait plus the connection's own (the Limiter's timeout_ms), so it never
        cuts a wait short. Interrupted while waiting, the connection is closed (the server drops
        the waiter) and the lease of our id is released, best effort, once. The Lua backend
        raises NotSupportedError (before any round trip)."""
        if not isinstance(limit, Concurrency):
            raise TypeError("acquire/lease need a Concurrency limit")
        core = self._core
        key = core.key(limit, identity, tag)
        lease_id = id if id is not None else uuid.uuid4().hex  # ours: a retried acquire never takes two slots
        if wait_ms is not None:
            check_wait_ms(wait_ms)
            if isinstance(core.backend, AutoBackend):
                failed = self._ready([(limit, key, cost)])
                if failed is not None:
                    return Lease(self, limit, key, failed, lease_id if failed.allowed else None)
            args = core.backend.check(limit, key, check_cost(cost), lease_id, wait_ms=wait_ms)
        else:
            args = core.backend.check(limit, key, check_cost(cost), lease_id)
        dur = core.durable if durable is None else core.pick(durable, None)
        sent = time.monotonic()
        t0 = time.perf_counter()
        try:
            if wait_ms is not None:
                reply, acks = self._call_blocking(args, key, wait_ms, dur)
                d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
                if d.source == SOURCE_DURABLE:
                    self._release_quietly(key, lease_id)
            elif dur is not None:
                reply, acks = self._call_wait(args, key, dur)
                d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
                if d.source == SOURCE_DURABLE:
                    self._release_quietly(key, lease_id)
            else:
                reply = self._call(args, key)
                d = core.finish_single(reply, limit, key, cost, t0)
        except Exception as exc:
            if wait_ms is not None and is_unavailable(exc):
                # no answer to a wait (timeout, connection lost): the server may have granted it
                self._release_quietly(key, lease_id)
            d = core.failure(exc, [(limit, key, cost)], t0)
        except BaseException:
            # interrupted (KeyboardInterrupt, SystemExit) while the acquire may have reached the
            # server: end a lease of our id, best effort, once
            try:
                self._call(self.backend.release(key, lease_id), key)
            except Exception:
                pass
            raise
        lease = Lease(self, limit, key, d, lease_id if d.allowed else None, durable=dur, sent=sent)
        if wait_ms is not None:
            lease._after_wait()
        return lease

    def _call_blocking(self, args: Any, key: str, wait_ms: int,
                       dur: Optional[Durable]) -> "Tuple[Any, Optional[int]]":
        """A command that may block up to wait_ms on the server (RL.ACQUIRE ... WAIT), on a
        connection of the pool taken for it, with a read timeout of the wait plus the connection's
        socket timeout (see blocking_timeout), and WAIT replicas after it with durable. Returns
        (reply, acks or None). A cluster client: to the key's node, once more after a MOVED/ASK."""
        for attempt in (0, 1):
            client = self.client
            if self._route:
                try:
                    node = client.get_node_from_key(key)
                except SlotNotCoveredError:
                    client.nodes_manager.initialize()
                    node = client.get_node_from_key(key)
                client = client.get_redis_connection(node)
            pool = client.connection_pool
            conn = _get_connection(pool)
            try:
                conn.send_command(*args)
                if dur is not None:
                    conn.send_command("WAIT", dur.replicas, dur.timeout_ms)
                limit_s = blocking_timeout(getattr(conn, "socket_timeout", None), wait_ms)
                if limit_s is not None and not conn.can_read(timeout=limit_s):
                    raise RedisTimeoutError(f"Timeout reading from socket: no answer to a wait of {wait_ms} ms "
                                            f"within {limit_s:.3f} s")
                reply: Any
                try:
                    reply = conn.read_response()
                except ResponseError as exc:
                    reply = exc
                acks: Optional[int] = None
                if dur is not None:  # WAIT replicas: its own timeout, from the answer on
                    ack_s = wait_timeout(getattr(conn, "socket_timeout", None), dur)
                    if ack_s is not None and not conn.can_read(timeout=ack_s):
                        raise RedisTimeoutError("Timeout reading from socket: no answer to WAIT replicas")
                    acks = int(conn.read_response())
            except BaseException:
                conn.disconnect()  # a blocked or half-read connection is never reused
                raise
            finally:
                pool.release(conn)
            if isinstance(reply, (MovedError, AskError)) and self._route and attempt == 0:
                self.client.nodes_manager.initialize()  # the slot moved: the command did not run
                continue
            if isinstance(reply, BaseException):
                raise reply
            return reply, acks
        raise reply  # MOVED twice

    def lease(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
              renew_every_ms: Optional[int] = None, on_lost: Optional[Callable[["Lease"], None]] = None,
              tag: Optional[str] = None, durable: DurableOption = None,
              wait_ms: Optional[int] = None) -> "_LeaseContext":
        """`with limiter.lease(limit, who) as lease:` holds a slot for the block and releases it on
        every exit path. Denied: raises RateLimited(decision). renew_every_ms: a daemon thread
        renews the lease (RL.RENEW); the lease is lost (lease.lost, on_lost) when a renewal answers 0
        or when lease.valid_until passes without a confirmed renewal (see Lease).
        wait_ms: wait in line for a slot up to wait_ms first (see acquire); RateLimited after it."""
        return _LeaseContext(self, limit, identity, cost, id, renew_every_ms, on_lost, tag, durable, wait_ms)

    def reserve(self, limit: Limit, identity: Identity, max_cost: int, *, tag: Optional[str] = None) -> "Reservation":
        """Consume `max_cost` now; `settle(actual)` later refunds `max_cost - actual` exactly once."""
        key = self._core.key(limit, identity, tag)
        if not limit.refundable:
            raise TypeError(f"{type(limit).__name__} limits cannot be reserved")
        d = self.check(limit, identity, max_cost, tag=tag)
        return Reservation(self, limit, key, max_cost, d)


class Lease(LeaseCore):
    """A held concurrency slot (or a denied attempt: `acquired` False, `id` None).

    `valid_until` (time.monotonic() seconds): when the acquire or the last confirmed renewal
    was sent, plus lease_ms: the lease cannot be live past it unless a renewal confirms it.
    `in_doubt`: a renewal failed (an error, or too few replicas acknowledged with durable) and
    none has confirmed since: the slot may be someone else's; stop the guarded work until
    in_doubt is False again. With the renewer running, passing valid_until without a confirmed
    renewal marks the lease lost (`lost`, `on_lost`) at that moment, even while a renewal hangs.
    """

    limiter: Limiter
    on_lost: Optional[Callable[[Lease], None]]

    def __init__(self, limiter: Limiter, limit: Concurrency, key: str, decision: Decision,
                 lease_id: Optional[str], *, durable: Optional[Durable] = None,
                 sent: Optional[float] = None) -> None:
        super().__init__(limiter, limit, key, decision, lease_id, durable=durable, sent=sent)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: Optional[threading.Thread] = None
        self._watchdog: Optional[threading.Thread] = None

    def _stop_renewer(self) -> None:
        self._stop.set()

    def _send(self, args: Any) -> "Tuple[Any, Optional[int]]":
        """A renewal's or release's round trip: (reply, acks; None without durable)."""
        if self.durable is None:
            return self.limiter._call(args, self.key), None
        return self.limiter._call_wait(args, self.key, self.durable)

    def renew(self, lease_ms: Optional[int] = None) -> bool:
        """Extend the lease (RL.RENEW). False (and lost) if it was no longer live, or if valid_until
        has passed (a lease past its deadline stays lost). An error (or, with durable, too few
        acknowledgements: NotDurableError) is raised and leaves the lease in doubt."""
        request = self._renew_request(lease_ms)
        if request is None:
            return not self.lost
        return self._renew(*request)

    def _after_wait(self) -> None:
        """A grant after a wait (acquire(wait_ms=)): the lease runs from the grant, somewhere between
        the send and the answer, so valid_until (send + lease_ms) may be far too early, even past.
        When the wait took more than a tenth of the lease, one RL.RENEW confirms it from now (a
        failure leaves valid_until as it was: early, never late)."""
        if self._confirm_needed():
            try:
                self._renew(self.limit.lease_ms, time.monotonic())
            except Exception as exc:
                self._confirm_failed(exc)

    def _renew(self, ms: int, sent: float) -> bool:
        args = self._renew_args(ms)
        try:
            ok = self._renew_ok(*self._send(args))
        except BaseException:
            self._doubt = True
            raise
        return self._renewed(ok, ms, sent)

    def start_renewer(self, every_ms: int) -> None:
        every = self._renew_every(every_ms)
        if every is None:
            return

        def run() -> None:
            while not self._stop.wait(every):
                try:
                    if not self.renew():
                        return
                except Exception as exc:  # keep trying: the lease may still be live (in doubt meanwhile)
                    self._renewal_failed(exc)

        def watch() -> None:  # the deadline, apart from the renewals (one may hang up to the timeout)
            left = self._deadline_left()
            while left is not None and not self._stop.wait(left):
                left = self._deadline_left()

        name = f"redis-rl-renew-{self.limit.name}"
        self._renewer = threading.Thread(target=run, name=name, daemon=True)
        self._watchdog = threading.Thread(target=watch, name=name + "-deadline", daemon=True)
        self._renewer.start()
        self._watchdog.start()

    def release(self) -> bool:
        """End the lease, once (idempotent). True if a live lease was ended. A failed release is
        logged once and not retried: the lease expires by itself after lease_ms."""
        if not self._claim_release():
            return False
        self._stop.set()
        for t in (self._renewer, self._watchdog):
            if t is not None and t is not threading.current_thread():
                t.join(timeout=5)
        done = self._release_without_io()
        if done is not None:
            return done
        args = self._release_args()
        try:
            ended = self._release_ended(*self._send(args))
        except Exception as exc:
            return self._release_failed(exc)
        return self._released(ended)


class _LeaseContext(LeaseContextCore[Lease]):
    def __enter__(self) -> Lease:
        lease: Lease = self._limiter.acquire(*self._acquire, **self._options)
        every = self._held(lease)
        try:
            if every is not None:
                lease.start_renewer(every)
        except BaseException:
            lease.release()
            raise
        return lease

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self.lease is not None:
            self.lease.release()


class Reservation(ReservationCore):
    """Units consumed up front; settle(actual) gives back max_cost - actual, exactly once.

    As a context manager: entering raises RateLimited if the reservation was
    denied; leaving without settle() keeps all max_cost consumed (no refund:
    the error that can only make the limit stricter)."""

    limiter: Limiter

    def __init__(self, limiter: Limiter, limit: Limit, key: str, max_cost: int, decision: Decision) -> None:
        super().__init__(limiter, limit, key, max_cost, decision)
        self._lock = threading.Lock()

    def settle(self, actual: int) -> Optional[Decision]:
        """Refund max_cost - actual (idempotent: only the first call acts; a refund is never
        retried, since a retried refund gives the units back twice). actual above max_cost charges
        the excess with a plain COST call (when it fits; denied, nothing more is charged)."""
        units = self._settle_units(actual)
        if units == 0:
            return self.refund_decision
        try:
            if units > 0:
                self.refund_decision = self.limiter._refund_key(self.limit, self.key, units)
            else:
                self.refund_decision = self._charged(self.limiter._call(self._charge_args(-units), self.key), -units)
        except Exception as exc:  # logged once, never retried
            return self._settle_failed(exc)
        return self.refund_decision

    def __enter__(self) -> "Reservation":
        if not self.decision.allowed:
            raise RateLimited(self.decision)
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.settled = True
