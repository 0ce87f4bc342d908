"""The asyncio Limiter, for redis.asyncio.Redis (and redis.asyncio.cluster.RedisCluster)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from types import TracebackType
from typing import Any, Awaitable, Callable, Generator, Iterable, Optional, Tuple, Type, Union

from redis.exceptions import AskError, MovedError, ResponseError, SlotNotCoveredError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .backend import AutoBackend, Backend, LuaBackend, ModuleBackend, adapt, is_function_missing, prepare
from .core import (DEFAULT_TIMEOUT_MS, Check, Core, Durable, DurableOption, FallbackHook, Identity, blocking_timeout,
                   check_cost, wait_timeout, check_max_wait, check_wait_ms)
from .decision import SOURCE_DURABLE, SOURCE_REDIS, Decision, single
from .errors import NotDurableError, RateLimited, is_unavailable
from .lease_core import LeaseContextCore, LeaseCore, ReservationCore
from .limits import FAIL_CLOSED, Concurrency, Limit, OnError
from .metrics import Metrics

__all__ = ["AsyncLimiter", "AsyncLease", "AsyncReservation"]

log = logging.getLogger("redis_rl")

LostCallback = Callable[["AsyncLease"], Any]


async def _pause(seconds: float) -> None:
    """pace()'s sleep (tests patch this)."""
    await asyncio.sleep(seconds)


async def _get_connection(pool: Any) -> Any:
    try:
        return await pool.get_connection()
    except TypeError:  # redis-py before 5.3 wants a command name
        return await pool.get_connection("RL.ACQUIRE")


class AsyncLimiter:
    """Limiter's methods as coroutines, for redis.asyncio clients. Same options as Limiter."""

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
                          backend=backend, on_fallback=on_fallback, cluster=cluster, clock=clock, async_=True,
                          durable=durable, strict_params=strict_params)
        self.client = self._core.client
        self._route = self._core.route
        self._cluster_ready = False

    @property
    def backend(self) -> Backend:
        """The backend in use (backend="auto": the one chosen on the first call)."""
        return self._core.backend

    @property
    def prefix(self) -> str:
        return self._core.prefix

    @property
    def fallback_count(self) -> int:
        return self._core.fallback_count

    @property
    def fallbacks(self) -> Any:
        return self._core.fallbacks

    def key(self, limit: Limit, identity: Identity, tag: Optional[str] = None) -> str:
        return self._core.key(limit, identity, tag)

    async def aclose(self) -> None:
        """Close the AsyncLimiter's own connection pool (not the client you passed)."""
        if self._core.owns_client:
            await self.client.aclose()
            await self.client.connection_pool.disconnect()

    async def __aenter__(self) -> "AsyncLimiter":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _call(self, args: Any, key: str) -> Any:
        core = self._core
        if not core.backend.ready:
            args = adapt(args, await self.prepare())
        try:
            return await self._send(args, key)
        except ResponseError as exc:
            if not (is_function_missing(exc) and isinstance(core.backend, LuaBackend)):
                raise
            core.backend.ready = False  # see Limiter._call
            return await self._send(adapt(args, await self.prepare()), key)

    @property
    def durable(self) -> Optional[Durable]:
        return self._core.durable

    @property
    def durable_failures(self) -> int:
        return self._core.durable_failures

    async def _call_wait(self, args: Any, key: str, dur: Durable) -> "tuple[Any, int]":
        """As Limiter._call_wait: the command and WAIT in one round trip."""
        core = self._core
        if not core.backend.ready:
            args = adapt(args, await self.prepare())
        try:
            return await self._send_wait(args, key, dur)
        except ResponseError as exc:
            if not (is_function_missing(exc) and isinstance(core.backend, LuaBackend)):
                raise
            core.backend.ready = False
            return await self._send_wait(adapt(args, await self.prepare()), key, dur)

    async def _send_wait(self, args: Any, key: str, dur: Durable) -> "tuple[Any, int]":
        # As Limiter._send_wait: WAIT's answer read with its own timeout (wait_timeout).
        reply, acks = await self._call_blocking(args, key, 0, dur)
        return reply, int(acks or 0)

    async def _drop_leases(self, d: Decision) -> None:
        orig = getattr(d.error, "decision", None) if d.source == SOURCE_DURABLE else None
        if orig is None:
            return
        for s in orig.decisions:
            if s.lease is not None and isinstance(s.rule, Concurrency):
                await self._release_quietly(s.key, s.lease)

    async def prepare(self) -> Backend:
        """As Limiter.prepare: probe for the module (auto) and load the library when missing or older."""
        core = self._core
        steps = prepare(core.backend)
        try:
            step = next(steps)
            while True:
                args, everywhere = step
                if self._route and not self._cluster_ready:
                    await self.client.initialize()
                    self._cluster_ready = True
                if everywhere:  # each primary on its own (see Limiter.prepare)
                    nodes = self.client.get_primaries() if self._route else [None]
                    replies = []
                    for node in nodes:
                        try:
                            replies.append(await self.client.execute_command(
                                *args, **({} if node is None else {"target_nodes": node})))
                        except Exception as exc:
                            replies.append(exc)
                    step = steps.send(replies)
                    continue
                try:
                    if self._route:
                        reply = await self.client.execute_command(*args, target_nodes=self.client.get_random_node())
                    else:
                        reply = await self.client.execute_command(*args)
                except Exception as exc:
                    step = steps.throw(exc)
                else:
                    step = steps.send(reply)
        except StopIteration as stop:
            core.backend = stop.value
        return core.backend

    async def _send(self, args: Any, key: str) -> Any:
        # The timeout is our own pool's socket timeout (as in Limiter): no extra task per call.
        if self._route:  # a cluster client: to the key's node (see Limiter._call)
            if not self._cluster_ready:
                await self.client.initialize()  # redis.asyncio's cluster client maps its slots lazily
                self._cluster_ready = True
            try:
                node = self.client.get_node_from_key(key)
            except SlotNotCoveredError:  # its own path re-reads the slot map
                return await self.client.execute_command(*args)
            return await self.client.execute_command(*args, target_nodes=node)
        return await self.client.execute_command(*args)

    async def _ready(self, items: Any, peek: bool = False) -> Optional[Decision]:
        """As Limiter._ready: backend="auto" probes before a WAIT or MAXWAIT call."""
        if self._core.backend.ready:
            return None
        try:
            await self.prepare()
        except Exception as exc:
            return self._core.failure(exc, items, time.perf_counter(), peek=peek)
        return None

    async def check(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None,
                    durable: DurableOption = None, max_wait_ms: Optional[int] = None) -> Decision:
        """As Limiter.check (max_wait_ms: book a later start, decision.wait_ms)."""
        core = self._core
        key = core.key(limit, identity, tag)
        if cost != 1:
            check_cost(cost)
        if max_wait_ms is None:
            args = core.backend.check(limit, key, cost)
        else:
            check_max_wait(max_wait_ms, (limit,))
            if isinstance(core.backend, AutoBackend):
                failed = await self._ready([(limit, key, cost)])
                if failed is not None:
                    return failed
            args = core.backend.check(limit, key, cost, max_wait_ms=max_wait_ms)
        dur = core.durable if durable is None else core.pick(durable, None)
        t0 = time.perf_counter()
        if dur is not None and cost:
            try:
                reply, acks = await self._call_wait(args, key, dur)
            except Exception as exc:
                return core.failure(exc, [(limit, key, cost)], t0)
            d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
            if d.source == SOURCE_DURABLE:
                await self._drop_leases(d)
            return d
        try:
            reply = await self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0)
        return core.finish_single(reply, limit, key, cost, t0)

    async def check_all(self, checks: Iterable[Check], cost: int = 1, *, tag: Optional[str] = None,
                        durable: DurableOption = None, max_wait_ms: Optional[int] = None) -> Decision:
        """As Limiter.check_all (max_wait_ms: every limit books the same start)."""
        core = self._core
        if max_wait_ms is None:
            items, args = core.plan_all(checks, 1 if cost == 1 and type(cost) is int else check_cost(cost), tag)
        else:
            checks = list(checks)
            items, args = core.plan_all(checks, check_cost(cost), tag, max_wait_ms=max_wait_ms)
            if isinstance(core.backend, AutoBackend):
                failed = await self._ready(items)
                if failed is not None:
                    return failed
                items, args = core.plan_all(checks, check_cost(cost), tag, max_wait_ms=max_wait_ms)
        dur = core.durable if durable is None else core.pick(durable, None)
        t0 = time.perf_counter()
        if dur is not None and any(item[2] for item in items):
            try:
                reply, acks = await self._call_wait(args, items[0][1], dur)
            except Exception as exc:
                return core.failure(exc, items, t0)
            d = core.finish_all(reply, items, t0, acks, dur)
            if d.source == SOURCE_DURABLE:
                await self._drop_leases(d)
            return d
        try:
            if self._route or type(core.backend) is not ModuleBackend:
                reply = await self._call(args, items[0][1])
            else:  # _call and _send for the module on one server: the command as it is
                reply = await self.client.execute_command(*args)
        except Exception as exc:
            return core.failure(exc, items, t0)
        return core.finish_all(reply, items, t0)

    async def pace(self, limit: Limit, identity: Identity, cost: int = 1, *, max_wait_ms: int,
                   tag: Optional[str] = None, durable: DurableOption = None) -> Decision:
        """As Limiter.pace: book the earliest start within max_wait_ms, `await asyncio.sleep` until
        it, return the Decision; denied: RateLimited(decision), nothing booked. Cancelled (the
        task, e.g. by asyncio.timeout or TaskGroup) while sleeping: the booked units are refunded
        (REFUND cost, once, run to completion even though the caller is cancelled), then the
        CancelledError is re-raised. Cancelled while the booking is on its way: when it answers,
        an allowed booking is refunded the same way."""
        task = asyncio.ensure_future(self.check(limit, identity, cost, tag=tag, durable=durable,
                                                max_wait_ms=max_wait_ms))
        try:
            d = await asyncio.shield(task)
        except asyncio.CancelledError:
            _background(self._give_back_when_answered(task, durable))
            raise
        if not d.allowed:
            raise RateLimited(d)
        if d.wait_ms <= 0:
            return d
        try:
            await _pause(d.wait_ms / 1000)
        except asyncio.CancelledError:
            refund = asyncio.ensure_future(self._give_back(d, durable))
            _background_tasks.add(refund)
            refund.add_done_callback(_background_tasks.discard)
            try:
                await asyncio.shield(refund)
            except asyncio.CancelledError:  # cancelled again: the refund still runs to its end
                pass
            raise
        return d

    async def _give_back_when_answered(self, task: "asyncio.Future[Decision]", durable: DurableOption) -> None:
        try:
            d = await task
        except Exception:
            return
        if d.allowed:
            await self._give_back(d, durable)

    async def _give_back(self, d: Decision, durable: DurableOption) -> Optional[Decision]:
        """As Limiter._give_back: refund an unused booking, once, never retried."""
        if d.source != SOURCE_REDIS or not d.cost or d.rule is None:
            return None
        try:
            return await self._refund_key(d.rule, d.key, d.cost, durable)
        except NotDurableError as exc:
            return exc.decision
        except Exception as exc:
            log.warning("redis_rl: refund of a cancelled booking on %r failed (%s: %s); not retried, the units "
                        "stay taken", d.name, type(exc).__name__, exc)
            return None

    async def peek(self, limit: Limit, identity: Identity, cost: int = 1, *, tag: Optional[str] = None,
                   max_wait_ms: Optional[int] = None) -> Decision:
        core = self._core
        key = core.key(limit, identity, tag)
        if max_wait_ms is None:
            args = core.backend.peek(limit, key, check_cost(cost))
        else:
            check_max_wait(max_wait_ms, (limit,))
            if isinstance(core.backend, AutoBackend):
                failed = await self._ready([(limit, key, cost)], peek=True)
                if failed is not None:
                    return failed
            args = core.backend.peek(limit, key, check_cost(cost), max_wait_ms=max_wait_ms)
        t0 = time.perf_counter()
        try:
            reply = await self._call(args, key)
        except Exception as exc:
            return core.failure(exc, [(limit, key, cost)], t0, peek=True)
        return core.finish_single(reply, limit, key, cost, t0)

    async def refund(self, limit: Limit, identity: Identity, amount: int, *, tag: Optional[str] = None,
                     durable: DurableOption = None) -> Decision:
        return await self._refund_key(limit, self._core.key(limit, identity, tag), amount, durable)

    async def _refund_key(self, limit: Limit, key: str, amount: int, durable: DurableOption = None) -> Decision:
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 2**32 - 1:
            raise ValueError("refund amount must be an int from 1 to 4294967295")
        core = self._core
        args = core.backend.refund(limit, key, amount)
        dur = core.durable if durable is None else core.pick(durable, None)
        if dur is None:
            return single(await self._call(args, key), limit, key, 0)
        reply, acks = await self._call_wait(args, key, dur)
        d = single(reply, limit, key, 0)
        if not core.acked(acks, dur, limit.name):
            raise NotDurableError(acks, dur.replicas, d)
        return d

    async def refund_all(self, checks: Iterable[Check], amount: int = 1, *, tag: Optional[str] = None) -> Decision:
        """As Limiter.refund_all: one RL.ALL with REFUND per limit, never retried."""
        items, args = self._core.plan_all(checks, amount, tag, refund=True)
        return self._core.finish_refund_all(await self._call(args, items[0][1]), items)

    def leases(self, decision: Decision) -> "list[AsyncLease]":
        """As Limiter.leases: the leases a check_all decision holds, each released on its own."""
        return [AsyncLease(self, rule, d.key, d, lease, durable=self._core.durable)
                for d, rule, lease in self._core.held_leases(decision)]

    async def release(self, decision: Decision) -> int:
        """As Limiter.release; runs to completion even if the caller is cancelled."""
        async def run() -> int:
            ended = 0
            for key, lease in self._core.leases_to_release(decision):
                try:
                    ended += int(await self._call(self.backend.release(key, lease), key))
                except Exception as exc:
                    log.warning("redis_rl: lease release failed (%s: %s); not retried", type(exc).__name__, exc)
            return ended

        task = asyncio.ensure_future(run())
        _background_tasks.add(task)
        task.add_done_callback(_background_tasks.discard)
        return await asyncio.shield(task)

    async def acquire(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
                      tag: Optional[str] = None, durable: DurableOption = None,
                      wait_ms: Optional[int] = None) -> "AsyncLease":
        """As Limiter.acquire. wait_ms: wait in line for a slot (RL.ACQUIRE ... WAIT). Cancelled while
        waiting: the connection is closed (the server drops the waiter) and a lease of our id is
        released in the background (best effort, once), then CancelledError propagates."""
        if not isinstance(limit, Concurrency):
            raise TypeError("acquire/lease need a Concurrency limit")
        core = self._core
        key = core.key(limit, identity, tag)
        lease_id = id if id is not None else uuid.uuid4().hex
        if wait_ms is not None:
            check_wait_ms(wait_ms)
            if isinstance(core.backend, AutoBackend):
                failed = await self._ready([(limit, key, cost)])
                if failed is not None:
                    return AsyncLease(self, limit, key, failed, lease_id if failed.allowed else None)
            args = core.backend.check(limit, key, check_cost(cost), lease_id, wait_ms=wait_ms)
        else:
            args = core.backend.check(limit, key, check_cost(cost), lease_id)
        dur = core.durable if durable is None else core.pick(durable, None)
        sent = time.monotonic()
        t0 = time.perf_counter()
        try:
            if wait_ms is not None:
                reply, acks = await self._call_blocking(args, key, wait_ms, dur)
                d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
                if d.source == SOURCE_DURABLE:
                    await self._release_quietly(key, lease_id)
            elif dur is not None:
                reply, acks = await self._call_wait(args, key, dur)
                d = core.finish_single(reply, limit, key, cost, t0, acks, dur)
                if d.source == SOURCE_DURABLE:
                    await self._release_quietly(key, lease_id)
            else:
                reply = await self._call(args, key)
                d = core.finish_single(reply, limit, key, cost, t0)
        except asyncio.CancelledError:
            # the acquire may have reached the server: end a lease of that id, in the background
            _background(self._release_quietly(key, lease_id))
            raise
        except Exception as exc:
            if wait_ms is not None and is_unavailable(exc):
                # no answer to a wait (timeout, connection lost): the server may have granted it
                await self._release_quietly(key, lease_id)
            d = core.failure(exc, [(limit, key, cost)], t0)
        lease = AsyncLease(self, limit, key, d, lease_id if d.allowed else None, durable=dur, sent=sent)
        if wait_ms is not None:
            await lease._after_wait()
        return lease

    async def _call_blocking(self, args: Any, key: str, wait_ms: int,
                             dur: Optional[Durable]) -> "Tuple[Any, Optional[int]]":
        """As Limiter._call_blocking: a connection of the pool taken for a call that may block up to
        wait_ms, read with the wait plus the connection's socket timeout. redis.asyncio's
        RedisCluster: through its own execute_command (then its socket_timeout must exceed the
        wait: ValueError otherwise) under an asyncio timeout of the same length."""
        if self._route:
            if dur is not None:
                raise TypeError("durable= is not supported on redis.asyncio's RedisCluster (yet)")
            kw = getattr(self.client, "connection_kwargs", None) or {}
            st = kw.get("socket_timeout")
            if st is not None and st * 1000 <= wait_ms:
                raise ValueError(f"acquire(wait_ms={wait_ms}) on a redis.asyncio RedisCluster whose socket_timeout "
                                 f"is {st} s: the socket timeout would cut the wait; give the cluster client a "
                                 "socket_timeout above the longest wait (its own timeout bounds the call)")
            limit_s = blocking_timeout(st, wait_ms)
            coro = self._send(args, key)
            return (await (coro if limit_s is None else asyncio.wait_for(coro, limit_s))), None
        pool = self.client.connection_pool
        conn = await _get_connection(pool)
        try:
            if dur is None:
                await conn.send_command(*args)
            else:
                await conn.send_packed_command(conn.pack_commands([args, ("WAIT", dur.replicas, dur.timeout_ms)]))
            limit_s = blocking_timeout(getattr(conn, "socket_timeout", None), wait_ms)
            reply: Any
            try:
                reply = await conn.read_response(timeout=limit_s)
            except ResponseError as exc:
                reply = exc
            if reply is None:  # redis.asyncio answers a passed per-call timeout with None
                raise RedisTimeoutError(f"Timeout reading from socket: no answer to a wait of {wait_ms} ms "
                                        f"within {limit_s} s")
            acks: Optional[int] = None
            if dur is not None:  # WAIT replicas: its own timeout, from the answer on
                ack_s = wait_timeout(getattr(conn, "socket_timeout", None), dur)
                ack = await conn.read_response(timeout=ack_s)
                if ack is None:
                    raise RedisTimeoutError("Timeout reading from socket: no answer to WAIT replicas")
                acks = int(ack)
        except BaseException as exc:
            # blocked or half read (cancelled, timed out): never reused; closing it ends the wait
            await asyncio.shield(conn.disconnect())
            if isinstance(exc, asyncio.TimeoutError) and not isinstance(exc, RedisTimeoutError):
                raise RedisTimeoutError(f"no answer to a wait of {wait_ms} ms") from exc
            raise
        finally:
            await asyncio.shield(pool.release(conn))
        if isinstance(reply, BaseException):
            raise reply
        return reply, acks

    async def _release_quietly(self, key: str, lease_id: str) -> None:
        try:
            await self._call(self.backend.release(key, lease_id), key)
        except Exception as exc:
            log.warning("redis_rl: release after a cancelled acquire failed (%s); it expires by itself", exc)

    def lease(self, limit: Concurrency, identity: Identity, cost: int = 1, *, id: Optional[str] = None,
              renew_every_ms: Optional[int] = None, on_lost: Optional[LostCallback] = None,
              tag: Optional[str] = None, durable: DurableOption = None,
              wait_ms: Optional[int] = None) -> "_AsyncLeaseContext":
        """`async with limiter.lease(limit, who) as lease:`; releases on every exit path, cancellation included.
        wait_ms: wait in line for a slot first (see acquire)."""
        return _AsyncLeaseContext(self, limit, identity, cost, id, renew_every_ms, on_lost, tag, durable, wait_ms)

    def reserve(self, limit: Limit, identity: Identity, max_cost: int, *,
                tag: Optional[str] = None) -> "_ReserveCall":
        """`r = await limiter.reserve(...)` or `async with limiter.reserve(...) as r:`."""
        if not limit.refundable:
            raise TypeError(f"{type(limit).__name__} limits cannot be reserved")
        return _ReserveCall(self, limit, identity, max_cost, tag)


_background_tasks: "set[asyncio.Task[Any]]" = set()


def _background(coro: Awaitable[Any]) -> None:
    task = asyncio.ensure_future(coro)
    _background_tasks.add(task)
    task.add_done_callback(_background_tasks.discard)


class AsyncLease(LeaseCore):
    """As Lease: valid_until, in_doubt, lost/on_lost (also when valid_until passes unconfirmed)."""

    limiter: AsyncLimiter
    on_lost: Optional[LostCallback]

    def __init__(self, limiter: AsyncLimiter, limit: Concurrency, key: str, decision: Decision,
                 lease_id: Optional[str], *, durable: Optional[Durable] = None,
                 sent: Optional[float] = None) -> None:
        super().__init__(limiter, limit, key, decision, lease_id, durable=durable, sent=sent)
        self._renewer: Optional["asyncio.Task[None]"] = None
        self._watchdog: Optional["asyncio.Task[None]"] = None
        self._release_task: Optional["asyncio.Task[bool]"] = None

    def _stop_renewer(self) -> None:
        for t in (self._renewer, self._watchdog):
            if t is not None and t is not asyncio.current_task():
                t.cancel()

    def _on_lost_result(self, result: Any) -> None:
        if asyncio.iscoroutine(result):
            _background(result)

    async def _send(self, args: Any) -> "Tuple[Any, Optional[int]]":
        """A renewal's or release's round trip: (reply, acks; None without durable)."""
        if self.durable is None:
            return await self.limiter._call(args, self.key), None
        return await self.limiter._call_wait(args, self.key, self.durable)

    async def renew(self, lease_ms: Optional[int] = None) -> bool:
        request = self._renew_request(lease_ms)
        if request is None:
            return not self.lost
        return await self._renew(*request)

    async def _after_wait(self) -> None:
        """As Lease._after_wait: a grant after a long wait is confirmed from now by one RL.RENEW."""
        if self._confirm_needed():
            try:
                await self._renew(self.limit.lease_ms, time.monotonic())
            except Exception as exc:
                self._confirm_failed(exc)

    async def _renew(self, ms: int, sent: float) -> bool:
        args = self._renew_args(ms)
        try:
            ok = self._renew_ok(*(await self._send(args)))
        except BaseException:
            self._doubt = True
            raise
        return self._renewed(ok, ms, sent)

    def start_renewer(self, every_ms: int) -> None:
        every = self._renew_every(every_ms)
        if every is None:
            return

        async def run() -> None:
            while True:
                await asyncio.sleep(every)
                try:
                    if not await self.renew():
                        return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self._renewal_failed(exc)

        async def watch() -> None:
            left = self._deadline_left()
            while left is not None:
                await asyncio.sleep(left)
                left = self._deadline_left()

        self._renewer = asyncio.ensure_future(run())
        self._watchdog = asyncio.ensure_future(watch())

    async def _do_release(self) -> bool:
        done = self._release_without_io()
        if done is not None:
            return done
        args = self._release_args()
        try:
            ended = self._release_ended(*(await self._send(args)))
        except Exception as exc:
            return self._release_failed(exc)
        return self._released(ended)

    async def release(self) -> bool:
        """End the lease, once (idempotent). Runs to completion even if the caller is cancelled."""
        if self._claim_release():
            for t in (self._renewer, self._watchdog):
                if t is not None:
                    t.cancel()
            self._release_task = asyncio.ensure_future(self._do_release())
            _background_tasks.add(self._release_task)
            self._release_task.add_done_callback(_background_tasks.discard)
            return await asyncio.shield(self._release_task)
        if self._release_task is not None:
            await asyncio.shield(self._release_task)
        return False


class _AsyncLeaseContext(LeaseContextCore[AsyncLease]):
    async def __aenter__(self) -> AsyncLease:
        lease: AsyncLease = await self._limiter.acquire(*self._acquire, **self._options)
        every = self._held(lease)
        try:
            if every is not None:
                lease.start_renewer(every)
        except BaseException:
            # __aexit__ never runs after a failed __aenter__: release here, as `with` does.
            await lease.release()
            raise
        return lease

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        if self.lease is not None:
            await self.lease.release()


class AsyncReservation(ReservationCore):
    limiter: AsyncLimiter

    def __init__(self, limiter: AsyncLimiter, limit: Limit, key: str, max_cost: int, decision: Decision) -> None:
        super().__init__(limiter, limit, key, max_cost, decision)

    async def settle(self, actual: int) -> Optional[Decision]:
        """As Reservation.settle: refunds max_cost - actual once; never retried."""
        units = self._settle_units(actual)  # no await before it claims the settle: a second caller never refunds
        if units == 0:
            return self.refund_decision
        try:
            if units > 0:
                self.refund_decision = await self.limiter._refund_key(self.limit, self.key, units)
            else:
                reply = await self.limiter._call(self._charge_args(-units), self.key)
                self.refund_decision = self._charged(reply, -units)
        except Exception as exc:
            return self._settle_failed(exc)
        return self.refund_decision


class _ReserveCall:
    def __init__(self, limiter: AsyncLimiter, limit: Limit, identity: Identity, max_cost: int,
                 tag: Optional[str]) -> None:
        self._args = (limiter, limit, identity, max_cost, tag)
        self._r: Optional[AsyncReservation] = None

    async def _run(self) -> AsyncReservation:
        limiter, limit, identity, max_cost, tag = self._args
        key = limiter.key(limit, identity, tag)
        d = await limiter.check(limit, identity, max_cost, tag=tag)
        return AsyncReservation(limiter, limit, key, max_cost, d)

    def __await__(self) -> Generator[Any, None, AsyncReservation]:
        return self._run().__await__()

    async def __aenter__(self) -> AsyncReservation:
        r = self._r = await self._run()
        if not r.allowed:
            raise RateLimited(r.decision)
        return r

    async def __aexit__(self, *exc: Any) -> None:
        if self._r is not None:
            self._r.settled = True
