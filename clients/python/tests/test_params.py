"""No server: one limit name, one set of parameters (ParameterConflictError, strict_params=False, the cap)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, List

import pytest

import redis_rl.core as core
from redis_rl import (AsyncLimiter, Concurrency, Durable, Gcra, Limiter, ParameterConflictError, Quota, Slide,
                      TokenBucket)

GCRA_REPLY = [1, 10, 9, 0, 100]


class Recorder:
    """Records every command; answers an allowed GCRA-shaped reply."""

    def __init__(self, reply: Any = None) -> None:
        self.calls: List[Any] = []
        self.reply = GCRA_REPLY if reply is None else reply

    def execute_command(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.reply


class AsyncRecorder(Recorder):
    async def execute_command(self, *args: Any) -> Any:  # type: ignore[override]
        self.calls.append(args)
        return self.reply


def limiter(**kw: Any) -> "tuple[Limiter, Recorder]":
    rec = Recorder()
    return Limiter(rec, timeout_ms=None, backend="module", **kw), rec


def test_conflict_raised_before_any_command() -> None:
    lim, rec = limiter()
    lim.check(Gcra(100, 1000, name="api"), "u")
    assert len(rec.calls) == 1
    with pytest.raises(ParameterConflictError) as info:
        lim.check(Gcra(10, 1000, name="api"), "other-user")
    assert len(rec.calls) == 1, "nothing may be sent for a conflicting limit"
    msg = str(info.value)
    assert "'api'" in msg
    assert "Gcra(limit=10, period_ms=1000) here" in msg
    assert "was Gcra(limit=100, period_ms=1000)" in msg
    assert "one name, one set of parameters" in msg
    assert isinstance(info.value, ValueError)


def test_conflict_on_every_call_kind() -> None:
    lim, rec = limiter()
    lim.check(Gcra(100, 1000, name="api"), "u")
    other = Gcra(100, 1000, burst=5, name="api")
    calls = [
        lambda: lim.check(other, "u"),
        lambda: lim.peek(other, "u"),
        lambda: lim.refund(other, "u", 1),
        lambda: lim.check_all([(Slide(5, 1000, name="s"), "u"), (other, "u")]),
        lambda: lim.refund_all([(other, "u")]),
        lambda: lim.reserve(other, "u", 3),
        lambda: lim.key(other, "u"),
    ]
    for call in calls:
        with pytest.raises(ParameterConflictError, match="burst=5"):
            call()
    assert len(rec.calls) == 1
    # another kind under the same name conflicts too, also for a lease
    with pytest.raises(ParameterConflictError, match=r"Concurrency\(limit=2, lease_ms=1000\) here but was Gcra"):
        lim.acquire(Concurrency(2, 1000, name="api"), "u")
    with pytest.raises(ParameterConflictError):
        lim.check(TokenBucket(100, 100, 1000, name="api"), "u")
    assert len(rec.calls) == 1


def test_same_parameters_are_fine() -> None:
    lim, rec = limiter()
    a = Gcra(100, 1000, name="api")
    for who in ("a", "b", "c"):
        lim.check(a, who)
    lim.check(Gcra(100, 1000, name="api"), "d")  # another object, equal parameters
    lim.check(Gcra(100, 1000, name="api", unit="tokens", on_error="open"), "e")  # not parameters the server sees
    lim.peek(a, "a")
    lim.check(Gcra(10, 1000, name="other"), "a")  # another name: its own keys
    lim.check(Gcra(10, 1000), "a")  # default names carry their parameters
    lim.check(Gcra(20, 1000), "a")
    assert len(rec.calls) == 9
    # another Limiter has its own record (its own prefix, its own keys)
    lim2, rec2 = limiter(prefix="other:")
    lim2.check(Gcra(10, 1000, name="api"), "u")
    assert len(rec2.calls) == 1


def test_calendar_quota_tz_is_a_parameter() -> None:
    lim, rec = limiter()
    lim.check(Quota(100, "DAY", name="q"), "u")
    with pytest.raises(ParameterConflictError, match=r"tz='Europe/Paris'"):
        lim.check(Quota(100, "DAY", tz="Europe/Paris", name="q"), "u")
    assert len(rec.calls) == 1


def test_key_function_is_the_name() -> None:
    lim, rec = limiter()

    def per_user(identity: str) -> str:
        return f"u:{identity}:rate"

    lim.check(Gcra(100, 1000, name="a", key=per_user), "u")
    with pytest.raises(ParameterConflictError, match="its key function"):
        lim.check(Gcra(10, 1000, name="b", key=per_user), "u")
    lim.check(Gcra(10, 1000, name="a"), "u")  # same name, default keys: other keys, no conflict
    assert len(rec.calls) == 2


def test_opt_out_warns_once_per_name(caplog: pytest.LogCaptureFixture) -> None:
    lim, rec = limiter(strict_params=False)
    caplog.set_level(logging.WARNING, logger="redis_rl")
    small, big = Gcra(10, 1000, name="api"), Gcra(100, 1000, name="api")
    lim.check(small, "u")
    lim.check(big, "u")
    lim.check(small, "u")
    lim.check(Gcra(1000, 1000, name="api"), "u")
    lim.check(Slide(5, 1000, name="s"), "u")
    lim.check(Slide(6, 1000, name="s"), "u")
    assert len(rec.calls) == 6, "strict_params=False sends every call"
    warnings = [r.getMessage() for r in caplog.records if "change parameters" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "'api' is now Gcra(limit=100, period_ms=1000), was Gcra(limit=10, period_ms=1000)" in warnings[0]
    assert "'s'" in warnings[1]


def test_registry_is_capped(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(core, "MAX_PARAM_NAMES", 5)
    caplog.set_level(logging.WARNING, logger="redis_rl")
    lim, rec = limiter()
    for i in range(5):
        lim.check(Gcra(10, 1000, name=f"n{i}"), "u")
    assert len(lim._core._declared) == 5
    for i in range(5, 20):  # beyond the cap: not recorded, logged once
        lim.check(Gcra(10, 1000, name=f"n{i}"), "u")
        lim.check(Gcra(20, 1000, name=f"n{i}"), "u")  # not checked any more
    assert len(lim._core._declared) == 5
    assert len(lim._core._checked) <= 5
    full = [r for r in caplog.records if "not checked" in r.getMessage()]
    assert len(full) == 1
    with pytest.raises(ParameterConflictError):  # names recorded before the cap still are
        lim.check(Gcra(20, 1000, name="n0"), "u")
    assert len(rec.calls) == 35


def test_limits_made_per_call_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "MAX_PARAM_NAMES", 8)
    lim, rec = limiter()
    for i in range(100):
        lim.check(Gcra(10, 1000, name="api"), str(i))  # a new object each time, equal parameters
    assert len(lim._core._checked) <= 8
    assert len(lim._core._declared) == 1
    with pytest.raises(ParameterConflictError):
        lim.check(Gcra(11, 1000, name="api"), "x")
    assert len(rec.calls) == 100


def test_async_limiter_guards_too() -> None:
    rec = AsyncRecorder()
    lim = AsyncLimiter(rec, timeout_ms=None, backend="module")

    async def run() -> None:
        await lim.check(Gcra(100, 1000, name="api"), "u")
        with pytest.raises(ParameterConflictError):
            await lim.check_all([(Gcra(10, 1000, name="api"), "u")])
        with pytest.raises(ParameterConflictError):
            await lim.peek(Gcra(10, 1000, name="api"), "u")

    asyncio.run(run())
    assert len(rec.calls) == 1
    lax = AsyncLimiter(rec, timeout_ms=None, backend="module", strict_params=False)

    async def run_lax() -> None:
        await lax.check(Gcra(100, 1000, name="api"), "u")
        await lax.check(Gcra(10, 1000, name="api"), "u")

    asyncio.run(run_lax())
    assert len(rec.calls) == 3


class WaitRecorder(Recorder):
    """Also lends a connection (the durable path: the command and WAIT in one round trip, on a
    connection of the pool); WAIT answers 1."""

    def pipeline(self, transaction: bool = True) -> "WaitPipe":
        return WaitPipe(self)

    @property
    def connection_pool(self) -> "FakePool":
        return FakePool(self)


def reply_to(rec: Recorder, cmd: Any) -> Any:
    if cmd[0] == "WAIT":
        return 1
    return [1, 2, 1, 0, 1000, "lease-1"] if cmd[0] == "RL.ACQUIRE" else rec.reply


class FakeConnection:
    socket_timeout = None

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.pending: List[Any] = []

    def send_command(self, *args: Any) -> None:
        self.rec.calls.append(args)
        self.pending.append(reply_to(self.rec, args))

    def can_read(self, timeout: float = 0) -> bool:
        return bool(self.pending)

    def read_response(self) -> Any:
        return self.pending.pop(0)

    def disconnect(self) -> None:
        pass


class FakePool:
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def get_connection(self, *args: Any) -> FakeConnection:
        return FakeConnection(self.rec)

    def release(self, conn: Any) -> None:
        pass


class AsyncFakeConnection(FakeConnection):
    async def send_command(self, *args: Any) -> None:  # type: ignore[override]
        FakeConnection.send_command(self, *args)

    def pack_commands(self, cmds: Any) -> Any:
        return cmds

    async def send_packed_command(self, cmds: Any) -> None:
        for c in cmds:
            FakeConnection.send_command(self, *c)

    async def read_response(self, timeout: Any = None) -> Any:  # type: ignore[override]
        return self.pending.pop(0)

    async def disconnect(self) -> None:  # type: ignore[override]
        pass


class AsyncFakePool(FakePool):
    async def get_connection(self, *args: Any) -> AsyncFakeConnection:  # type: ignore[override]
        return AsyncFakeConnection(self.rec)

    async def release(self, conn: Any) -> None:  # type: ignore[override]
        pass


class WaitPipe:
    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.cmds: List[Any] = []

    def execute_command(self, *args: Any) -> "WaitPipe":
        self.cmds.append(args)
        return self

    def _replies(self) -> List[Any]:
        self.rec.calls.extend(self.cmds)
        reply = [1, 2, 1, 0, 1000, "lease-1"] if self.cmds[0][0] == "RL.ACQUIRE" else self.rec.reply
        return [1 if c[0] == "WAIT" else reply for c in self.cmds]

    def execute(self, raise_on_error: bool = True) -> List[Any]:
        return self._replies()


class AsyncWaitPipe(WaitPipe):
    async def execute(self, raise_on_error: bool = True) -> List[Any]:  # type: ignore[override]
        return self._replies()


class AsyncWaitRecorder(AsyncRecorder):
    def pipeline(self, transaction: bool = True) -> AsyncWaitPipe:
        return AsyncWaitPipe(self)

    @property
    def connection_pool(self) -> AsyncFakePool:
        return AsyncFakePool(self)


def test_durable_paths_are_guarded_before_any_command() -> None:
    rec = WaitRecorder()
    lim = Limiter(rec, timeout_ms=None, backend="module", durable=True)
    assert lim.check(Gcra(100, 1000, name="api"), "u").allowed
    assert [c[0] for c in rec.calls] == ["RL.GCRA", "WAIT"], "the first call is durable: a WAIT follows it"
    other = Gcra(100, 1000, burst=5, name="api")
    calls = [
        lambda: lim.check(other, "u"),
        lambda: lim.check(other, "u", durable=Durable(replicas=2, timeout_ms=10)),
        lambda: lim.check_all([(Slide(5, 1000, name="s"), "u"), (other, "u")]),
        lambda: lim.peek(other, "u"),
        lambda: lim.refund(other, "u", 1),
        lambda: lim.refund_all([(other, "u")]),
        lambda: lim.reserve(other, "u", 3),
        lambda: lim.key(other, "u"),
    ]
    for call in calls:
        with pytest.raises(ParameterConflictError, match="burst=5"):
            call()
    with pytest.raises(ParameterConflictError, match=r"Concurrency\(limit=2, lease_ms=1000\) here but was Gcra"):
        lim.acquire(Concurrency(2, 1000, name="api"), "u", durable=True)
    with pytest.raises(ParameterConflictError):
        with lim.lease(Concurrency(2, 1000, name="api"), "u"):
            raise AssertionError("not reached: the lease is never taken")
    assert len(rec.calls) == 2, "nothing (no command, no WAIT) may be sent for a conflicting limit"
    # a durable lease of its own name is fine, and its WAIT is sent
    lease = lim.acquire(Concurrency(2, 1000, name="jobs"), "u")
    assert lease.acquired and [c[0] for c in rec.calls[2:]] == ["RL.ACQUIRE", "WAIT"]


def test_async_durable_paths_are_guarded() -> None:
    rec = AsyncWaitRecorder()
    lim = AsyncLimiter(rec, timeout_ms=None, backend="module", durable=True)
    other = Gcra(10, 1000, name="api")

    async def run() -> None:
        assert (await lim.check(Gcra(100, 1000, name="api"), "u")).allowed
        assert [c[0] for c in rec.calls] == ["RL.GCRA", "WAIT"]
        for call in (lambda: lim.check(other, "u"), lambda: lim.check_all([(other, "u")]),
                     lambda: lim.refund(other, "u", 1), lambda: lim.refund_all([(other, "u")]),
                     lambda: lim.acquire(Concurrency(2, 1000, name="api"), "u")):
            with pytest.raises(ParameterConflictError):
                await call()
        with pytest.raises(ParameterConflictError):
            await lim.reserve(other, "u", 3)
        with pytest.raises(ParameterConflictError):
            async with lim.lease(Concurrency(2, 1000, name="api"), "u"):
                raise AssertionError("not reached: the lease is never taken")

    asyncio.run(run())
    assert len(rec.calls) == 2
