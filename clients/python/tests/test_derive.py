"""Limiter(timeout_ms=...) derives a pool of its own: also from Sentinel's pool; never silently not."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.sentinel
from redis.sentinel import Sentinel

from redis_rl import AsyncLimiter, Limiter
from redis_rl import core


def test_sentinel_pool_is_derived_with_the_timeout() -> None:
    sentinel = Sentinel([("127.0.0.1", 1)])  # never contacted: deriving sends nothing
    client = sentinel.master_for("mymaster", socket_timeout=None)
    lim = Limiter(client, timeout_ms=100)
    pool = lim.client.connection_pool
    assert lim.client is not client and type(pool).__name__ == "SentinelConnectionPool"
    assert pool is not client.connection_pool
    assert pool.service_name == "mymaster" and pool.sentinel_manager is sentinel and pool.is_master
    assert pool.connection_kwargs["socket_timeout"] == 0.1
    assert pool.connection_kwargs["socket_connect_timeout"] == 0.1
    assert pool.connection_kwargs["retry"].get_retries() == 0
    # the new pool's connections find the master through the new pool's own proxy
    assert pool.connection_kwargs["connection_pool"] is not client.connection_pool.connection_kwargs["connection_pool"]


def test_async_sentinel_pool_is_derived() -> None:
    sentinel = redis.asyncio.sentinel.Sentinel([("127.0.0.1", 1)])
    client = sentinel.slave_for("mymaster")
    lim = AsyncLimiter(client, timeout_ms=50)
    pool = lim.client.connection_pool
    assert lim.client is not client and pool.service_name == "mymaster" and not pool.is_master
    assert pool.connection_kwargs["socket_timeout"] == 0.05


def test_unknown_pool_warns_once(caplog: Any) -> None:
    class MyPool(redis.ConnectionPool):
        pass

    core._warned_pools.clear()
    client = redis.Redis(connection_pool=MyPool(port=1))
    with caplog.at_level(logging.WARNING, logger="redis_rl"):
        a = Limiter(client, timeout_ms=100)
        b = Limiter(client, timeout_ms=100)
    assert a.client is client and b.client is client
    warned = [r for r in caplog.records if "does not apply" in r.getMessage()]
    assert len(warned) == 1 and "MyPool" in warned[0].getMessage()


def test_plain_pool_still_derived() -> None:
    client = redis.Redis(port=1, socket_timeout=None)
    lim = Limiter(client, timeout_ms=70)
    assert lim.client is not client and lim.client.connection_pool.connection_kwargs["socket_timeout"] == 0.07
    assert Limiter(client, timeout_ms=None).client is client
