"""retry()/async_retry() with full jitter and the fleet RetryBudget; the prometheus_client adapter."""

from __future__ import annotations

from typing import Any, List

import pytest
import redis
import redis.asyncio
from prometheus_client import CollectorRegistry

from conftest import run
from redis_rl import AsyncLimiter, Gcra, Limiter, RateLimited, RetryBudget, async_retry, parse_retry_after, retry
from redis_rl.decision import Decision
from redis_rl.prometheus import PrometheusMetrics
from redis_server import RedisServer


class Resp:
    def __init__(self, status: int, retry_after: str = "") -> None:
        self.status_code = status
        self.headers = {"Retry-After": retry_after} if retry_after else {}


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_retry_honours_retry_after_with_jitter() -> None:
    sleeps: List[float] = []
    answers = [Resp(429, "2"), Resp(503), Resp(200)]
    out = retry(lambda: answers.pop(0), sleep=sleeps.append, rand=lambda: 0.5, base_ms=100, cap_ms=1000)
    assert out.status_code == 200
    assert sleeps == [2.05, 0.1]  # floor 2 s + 0.5 * min(1000, 100 * 2**0) ms; then 0.5 * 200 ms
    # a RateLimited error: its retry_after_ms; "never" is not retried; max_attempts bounds it
    d = Decision(False, 1, 0, 300, 300, name="x")
    calls: List[int] = []

    def denied() -> None:
        calls.append(1)
        raise RateLimited(d)

    with pytest.raises(RateLimited):
        retry(denied, max_attempts=3, sleep=sleeps.append, rand=lambda: 0.0)
    assert len(calls) == 3 and sleeps[-2:] == [0.3, 0.3]
    never = Decision(False, 1, 1, -1, 0, name="x")
    calls.clear()

    def never_fn() -> None:
        calls.append(1)
        raise RateLimited(never)

    with pytest.raises(RateLimited):
        retry(never_fn, sleep=sleeps.append)
    assert len(calls) == 1
    assert retry(lambda: Resp(429, "60"), max_wait_ms=30_000, sleep=sleeps.append).status_code == 429
    with pytest.raises(KeyError):
        retry(lambda: {}["x"], sleep=sleeps.append)  # not retryable


def test_retry_budget_caps_retries_at_ratio(server: RedisServer) -> None:
    r = redis.Redis(port=server.port)
    r.flushall()
    lim = Limiter(r)
    budget = RetryBudget(lim, "svc", ratio=0.1, burst=1)
    assert budget.available() == 1.0  # a new budget starts full (burst)
    retries = 0

    def always_429() -> Resp:
        return Resp(429, "0")

    sleeps: List[float] = []
    for _ in range(50):  # 50 requests that all fail: 1 banked + 50 * 0.1 earned, capped at burst 1 each time
        before = len(sleeps)
        retry(always_429, budget=budget, max_attempts=5, sleep=sleeps.append, rand=lambda: 0.0)
        retries += len(sleeps) - before
    assert 5 <= retries <= 6, retries  # ~10% of 50 requests, not 4 retries each
    assert budget.available() < 1


def test_async_retry_and_budget(server: RedisServer) -> None:
    async def main() -> None:
        lim = AsyncLimiter(redis.asyncio.Redis(port=server.port))
        budget = RetryBudget(lim, "async-svc", ratio=0.5, burst=1)
        answers = [Resp(503, "0"), Resp(200)]
        slept: List[float] = []

        async def fn() -> Resp:
            return answers.pop(0)

        async def sleep(s: float) -> None:
            slept.append(s)

        out = await async_retry(fn, budget=budget, sleep=sleep, rand=lambda: 0.0)
        assert out.status_code == 200 and slept == [0.0]
        assert await budget.aavailable() == 0.0  # full (the deposit into a full budget is capped), 1 spent
        await budget.adeposit()
        assert await budget.aavailable() == 0.5
    run(main())


def sample(reg: CollectorRegistry, name: str, **labels: str) -> float:
    v = reg.get_sample_value(name, labels)
    return 0.0 if v is None else v


def test_prometheus_adapter(fresh_server: RedisServer) -> None:
    reg = CollectorRegistry()
    lim = Limiter(redis.Redis(port=fresh_server.port), metrics=PrometheusMetrics(registry=reg))
    g = Gcra(2, 60_000, name="api")
    for _ in range(3):
        lim.check(g, "u")
    assert sample(reg, "redis_rl_decisions_total", limit="api", result="allowed") == 2
    assert sample(reg, "redis_rl_decisions_total", limit="api", result="denied") == 1
    assert sample(reg, "redis_rl_decision_seconds_count", limit="api") == 3
    assert sample(reg, "redis_rl_decision_seconds_sum", limit="api") > 0
    lim.check_all([(Gcra(5, 1000, name="a"), "u"), (Gcra(1, 1000, name="b"), "u")], cost=2)
    assert sample(reg, "redis_rl_decisions_total", limit="b", result="denied") == 1
    assert sample(reg, "redis_rl_decisions_total", limit="a", result="denied") == 0
    fresh_server.kill()
    lim.check(g, "u")
    lim.check(Gcra(1, 1000, name="open", on_error="open"), "u")
    assert sample(reg, "redis_rl_decisions_total", limit="api", result="fail_closed") == 1
    assert sample(reg, "redis_rl_decisions_total", limit="api", result="error") == 1
    assert sample(reg, "redis_rl_fallbacks_total", limit="api", policy="closed") == 1
    assert sample(reg, "redis_rl_fallbacks_total", limit="open", policy="open") == 1
    assert sample(reg, "redis_rl_decisions_total", limit="open", result="fail_open") == 1
