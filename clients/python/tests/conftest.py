from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Callable, Coroutine, Iterator, TypeVar

import pytest
import redis
import redis.asyncio

sys.path.insert(0, os.path.dirname(__file__))
from redis_server import RedisServer  # noqa: E402

T = TypeVar("T")


@pytest.fixture(scope="session")
def server() -> Iterator[RedisServer]:
    s = RedisServer()
    yield s
    s.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def protocol(request: Any) -> int:
    return int(request.param)


@pytest.fixture(params=[False, True], ids=["bytes", "decoded"])
def decode(request: Any) -> bool:
    return bool(request.param)


@pytest.fixture
def r(server: RedisServer, protocol: int, decode: bool) -> Iterator[redis.Redis]:
    client = redis.Redis(port=server.port, protocol=protocol, decode_responses=decode)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def raw(server: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis(port=server.port, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def ar(server: RedisServer, protocol: int) -> Iterator[Callable[[], redis.asyncio.Redis]]:
    redis.Redis(port=server.port).flushall()

    def make() -> redis.asyncio.Redis:
        return redis.asyncio.Redis(port=server.port, protocol=protocol)
    yield make


@pytest.fixture
def fresh_server() -> Iterator[RedisServer]:
    """A server of its own, for tests that kill or pause it."""
    s = RedisServer()
    yield s
    s.stop()


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    """Run a coroutine with a real-time bound."""
    return asyncio.run(asyncio.wait_for(coro, timeout))
