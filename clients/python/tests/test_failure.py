"""The failure policy: a killed server (refused), a stopped one (SIGSTOP: timeout), CLIENT PAUSE,
error replies (OOM: absorbed; no module, WRONGTYPE, bad arguments: raised)."""

from __future__ import annotations

import time
from typing import Any, List, Tuple

import pytest
import redis
import redis.asyncio

from conftest import run
from redis_rl import (AsyncLimiter, Concurrency, Gcra, Limiter, Local, ModuleNotLoadedError, Quota, RateLimited,
                      Slide)
from redis_rl.metrics import Metrics
from redis_server import RedisServer


class Spy(Metrics):
    def __init__(self) -> None:
        self.events: List[Tuple[str, ...]] = []

    def on_decision(self, name: str, decision: Any, latency_s: float) -> None:
        self.events.append(("decision", name, decision.source))

    def on_error(self, name: str, exc: BaseException) -> None:
        self.events.append(("error", name, type(exc).__name__))

    def on_fallback(self, name: str, policy: str) -> None:
        self.events.append(("fallback", name, policy))


@pytest.mark.parametrize("protocol", [2, 3])
def test_refused_connection_each_policy(fresh_server: RedisServer, protocol: int) -> None:
    client = redis.Redis(port=fresh_server.port, protocol=protocol)
    hooked: List[Any] = []
    spy = Spy()
    lim = Limiter(client, on_error="closed", metrics=spy, on_fallback=lambda *a: hooked.append(a))
    g = Gcra(4, 60_000, name="g")
    assert lim.check(g, "u").source == "redis"
    fresh_server.kill()
    t0 = time.monotonic()
    closed = lim.check(g, "u")
    assert time.monotonic() - t0 < 2
    assert (closed.allowed, closed.source, closed.status) == (False, "fail_closed", 503)
    assert closed.headers() == {"Retry-After": "1"} and isinstance(closed.error, redis.ConnectionError)
    opened = lim.check(Gcra(4, 60_000, name="o", on_error="open"), "u")
    assert (opened.allowed, opened.source, opened.fail_open) == (True, "fail_open", True)
    local = Gcra(4, 60_000, name="l", on_error=Local(share=0.5))
    ds = [lim.check(local, "u") for _ in range(3)]
    assert [d.allowed for d in ds] == [True, True, False] and {d.source for d in ds} == {"local"}
    assert ds[2].retry_after_ms > 0 and ds[2].status == 429 and '"l";q=2' in ds[2].headers()["RateLimit-Policy"]
    assert lim.check(local, "other").allowed  # local buckets are per key
    assert lim.fallback_count == 6 and lim.fallbacks[("l", "local")] == 4 and lim.fallbacks[("g", "closed")] == 1
    assert len(hooked) == 6 and hooked[0][0] is g and hooked[0][2] is closed
    assert ("fallback", "g", "closed") in spy.events and ("error", "g", "ConnectionError") in spy.events
    # check_all: each limit's own policy; one closed denies the whole call
    mixed = lim.check_all([(Gcra(1, 1000, name="a", on_error="open"), "u"), (g, "u")])
    assert not mixed.allowed and mixed.source == "fail_closed" and mixed.status == 503
    both_open = Limiter(client, on_error="open").check_all([(g, "u"), (Slide(1, 1000), "u")])
    assert both_open.allowed and both_open.source == "fail_open"
    # a lease under fail-open is "held" without a slot; closed raises
    with Limiter(client, on_error="open").lease(Concurrency(1, 1000), "x") as lease:
        assert lease.decision.source == "fail_open" and lease.id
    with pytest.raises(RateLimited):
        with lim.lease(Concurrency(1, 1000), "x"):
            pass


def test_stopped_server_times_out_then_recovers(fresh_server: RedisServer) -> None:
    client = redis.Redis(port=fresh_server.port)
    before = dict(client.connection_pool.connection_kwargs)
    lim = Limiter(client, on_error="open", timeout_ms=100)
    g = Gcra(100, 60_000)
    assert lim.check(g, "u").source == "redis"
    fresh_server.pause()
    try:
        t0 = time.monotonic()
        d = lim.check(g, "u")
        took = time.monotonic() - t0
        assert d.source == "fail_open" and isinstance(d.error, redis.TimeoutError)
        assert 0.09 < took < 1.0, took  # one timeout of 100 ms
        retry = lim.client.connection_pool.connection_kwargs["retry"]
        assert getattr(retry, "_retries", None) == 0  # no client-side retries
    finally:
        fresh_server.resume()
    deadline = time.monotonic() + 5
    while lim.check(g, "u").source != "redis":
        assert time.monotonic() < deadline
    # the client passed in keeps its own settings (its pool was not changed)
    assert client.connection_pool.connection_kwargs["socket_timeout"] == before["socket_timeout"] != 0.1
    assert lim.client.connection_pool.connection_kwargs["socket_timeout"] == 0.1


def test_client_pause_write_times_out_but_peek_answers(server: RedisServer, raw: redis.Redis) -> None:
    lim = Limiter(redis.Redis(port=server.port), on_error="closed", timeout_ms=100)
    g = Gcra(10, 60_000, name="paused")
    raw.delete("rl:paused:u")
    lim.check(g, "u")
    raw.execute_command("CLIENT", "PAUSE", 3000, "WRITE")
    try:
        t0 = time.monotonic()
        d = lim.check(g, "u")
        assert d.source == "fail_closed" and d.status == 503 and time.monotonic() - t0 < 1
        p = lim.peek(g, "u")  # RL.PEEK is read-only: not paused
        assert p.source == "redis" and p.remaining == 8
    finally:
        raw.execute_command("CLIENT", "UNPAUSE")


def test_oom_reply_is_absorbed(fresh_server: RedisServer) -> None:
    client = redis.Redis(port=fresh_server.port)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    lim = Limiter(client, on_error="open")
    d = lim.check(Gcra(5, 1000), "new-key")
    assert d.source == "fail_open" and isinstance(d.error, redis.exceptions.OutOfMemoryError), repr(d.error)


def test_errors_that_are_raised(server: RedisServer, raw: redis.Redis) -> None:
    lim = Limiter(redis.Redis(port=server.port), on_error="open")
    raw.set("rl:g:string", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        lim.check(Gcra(1, 1000, name="g"), "string")
    with pytest.raises(redis.ResponseError, match="(?i)zone|tz"):
        lim.check(Quota(5, "DAY", tz="Mars/Olympus_Mons"), "u")
    assert lim.fallback_count == 0


def test_server_without_module_is_a_misconfiguration() -> None:
    plain = RedisServer(module=False)
    try:
        lim = Limiter(redis.Redis(port=plain.port), on_error="open")
        with pytest.raises(ModuleNotLoadedError, match="unknown command"):
            lim.check(Gcra(1, 1000), "u")
        with pytest.raises(ModuleNotLoadedError):
            lim.check_all([(Gcra(1, 1000), "u"), (Slide(1, 1000), "u")])
        assert lim.fallback_count == 0
    finally:
        plain.stop()


def test_async_refused_and_stopped(fresh_server: RedisServer) -> None:
    async def main() -> None:
        client = redis.asyncio.Redis(port=fresh_server.port)
        lim = AsyncLimiter(client, on_error="open", timeout_ms=100)
        g = Gcra(5, 60_000)
        assert (await lim.check(g, "u")).source == "redis"
        fresh_server.pause()
        try:
            t0 = time.monotonic()
            d = await lim.check(g, "u")
            assert d.source == "fail_open" and time.monotonic() - t0 < 1.0
            closed = await lim.check(Gcra(5, 60_000, name="c", on_error="closed"), "u")
            assert closed.status == 503
        finally:
            fresh_server.resume()
        fresh_server.kill()
        d = await lim.check_all([(g, "u"), (Slide(1, 1000), "u")])
        assert d.allowed and d.source == "fail_open" and lim.fallback_count >= 4
        with pytest.raises(ModuleNotLoadedError):
            plain = RedisServer(module=False)
            try:
                await AsyncLimiter(redis.asyncio.Redis(port=plain.port), on_error="open").check(g, "u")
            finally:
                plain.stop()
    run(main())


def test_release_of_a_local_decision_gives_the_local_slot_back(fresh_server: RedisServer) -> None:
    """release(decision) and leases(decision), sync and async, on a decision a local fallback
    granted: nothing is sent (the server is down), the local slot is given back."""
    slots = Concurrency(2, 60_000, name="slots")  # local share: 1 slot in this process
    lim = Limiter(redis.Redis(port=fresh_server.port), on_error=Local(share=0.5))
    alim = AsyncLimiter(redis.asyncio.Redis(port=fresh_server.port), on_error=Local(share=0.5))
    fresh_server.kill()
    d = lim.check_all([(slots, "j")])
    assert d.allowed and d.decisions[0].source == "local"
    assert [lease.id for lease in lim.leases(d)] == [d.decisions[0].lease]
    assert not lim.check_all([(slots, "j")]).allowed
    assert lim.release(d) == 0  # ended nothing on the server
    assert lim.release(d) == 0  # given back once only
    again = lim.check_all([(slots, "j")])
    assert again.allowed and not lim.check_all([(slots, "j")]).allowed
    (lease,) = lim.leases(again)
    assert lease.release() and not lease.release() and lim.release(again) == 0
    # One slot given back once: the next check takes it, the one after finds none.
    assert lim.check_all([(slots, "j")]).allowed and not lim.check_all([(slots, "j")]).allowed

    async def main() -> None:
        d = await alim.check_all([(slots, "j")])
        assert d.allowed and d.decisions[0].source == "local"
        assert [lease.id for lease in alim.leases(d)] == [d.decisions[0].lease]
        assert not (await alim.check_all([(slots, "j")])).allowed
        assert await alim.release(d) == 0
        assert (await alim.check_all([(slots, "j")])).allowed
    run(main())


def test_local_policy_for_leases(fresh_server: RedisServer) -> None:
    lim = Limiter(redis.Redis(port=fresh_server.port), on_error=Local(share=0.5))
    slots = Concurrency(2, 60_000, name="slots")  # local share: 1 slot in this process
    fresh_server.kill()
    with lim.lease(slots, "j") as lease:
        assert lease.decision.source == "local" and lease.id
        with pytest.raises(RateLimited):
            with lim.lease(slots, "j"):
                pass
    with lim.lease(slots, "j") as again:  # the release gave the local slot back
        assert again.decision.source == "local"


def test_cancelled_acquire_is_released(server: RedisServer, raw: redis.Redis) -> None:
    """An acquire cancelled after the server applied it (its reply not yet read): the lease, named by
    our own id, is released in the background."""
    import asyncio

    class SlowReply:
        """Sends each command, then stalls before handing back the reply."""

        def __init__(self, inner: redis.asyncio.Redis) -> None:
            self.inner = inner
            self.sent = asyncio.Event()

        async def execute_command(self, *args: Any) -> Any:
            reply = await self.inner.execute_command(*args)
            if args[0] == "RL.ACQUIRE":
                self.sent.set()
                await asyncio.sleep(30)
            return reply

    async def main() -> None:
        inner = redis.asyncio.Redis(port=server.port)
        lim = AsyncLimiter(SlowReply(inner), timeout_ms=None)
        c = Concurrency(1, 60_000, name="cancelled")
        raw.delete("rl:cancelled:j")
        task = asyncio.ensure_future(lim.acquire(c, "j"))
        await asyncio.wait_for(lim.client.sent.wait(), 5)
        assert raw.exists("rl:cancelled:j") == 1  # the server holds the lease
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 5
        while raw.exists("rl:cancelled:j"):
            assert time.monotonic() < deadline, "the cancelled acquire's lease was never released"
            await asyncio.sleep(0.01)
        await inner.aclose()
    run(main())


def test_debug_sleep_times_out() -> None:
    """DEBUG SLEEP blocks the whole server: the call times out and the policy answers."""
    import threading
    s = RedisServer(extra=["--enable-debug-command", "yes"])
    try:
        lim = Limiter(redis.Redis(port=s.port), on_error="open", timeout_ms=100)
        g = Gcra(5, 60_000)
        assert lim.check(g, "u").source == "redis"
        sleeper = threading.Thread(target=lambda: redis.Redis(port=s.port).execute_command("DEBUG", "SLEEP", "1"))
        sleeper.start()
        try:
            time.sleep(0.1)  # let DEBUG SLEEP start
            t0 = time.monotonic()
            d = lim.check(g, "u")
            assert d.source == "fail_open" and isinstance(d.error, redis.TimeoutError) and time.monotonic() - t0 < 0.8
        finally:
            sleeper.join(timeout=10)
        deadline = time.monotonic() + 5
        while lim.check(g, "u").source != "redis":
            assert time.monotonic() < deadline
    finally:
        s.stop()


def test_interrupted_acquire_is_released(server: RedisServer, raw: redis.Redis) -> None:
    """KeyboardInterrupt after the server applied an acquire: the lease (our own id) is released."""
    inner = redis.Redis(port=server.port)

    class Interrupting:
        def execute_command(self, *args: Any, **kwargs: Any) -> Any:
            reply = inner.execute_command(*args)
            if args[0] == "RL.ACQUIRE":
                raise KeyboardInterrupt
            return reply

    lim = Limiter(Interrupting(), timeout_ms=None)
    raw.delete("rl:interrupted:j")
    with pytest.raises(KeyboardInterrupt):
        with lim.lease(Concurrency(1, 60_000, name="interrupted"), "j"):
            pass
    assert raw.exists("rl:interrupted:j") == 0
