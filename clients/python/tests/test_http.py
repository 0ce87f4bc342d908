"""Middleware: ASGI through Starlette's TestClient, WSGI through a raw environ."""

from __future__ import annotations

import io
import json
from typing import Any, Dict, List, Tuple

import redis
import redis.asyncio
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from redis_rl import AsyncLimiter, Concurrency, Gcra, Limiter, Slide
from redis_rl.middleware import RateLimitMiddleware, WsgiRateLimitMiddleware
from redis_server import RedisServer


def test_asgi_starlette(server: RedisServer) -> None:
    redis.Redis(port=server.port).flushall()
    calls: List[str] = []

    async def items(request: Any) -> JSONResponse:
        calls.append("items")
        return JSONResponse({"items": [1, 2]})

    async def report(request: Any) -> JSONResponse:
        calls.append("report")
        return JSONResponse({"report": "ok"})

    app = Starlette(routes=[Route("/items", items), Route("/report", report, methods=["POST"]),
                            Route("/free", items)])
    limiter = AsyncLimiter(redis.asyncio.Redis(port=server.port))
    wrapped = RateLimitMiddleware(
        app, limiter,
        limits=[Gcra(2, 60_000, name="api")],
        routes={"POST /report": [Gcra(10, 60_000, name="api-report"), Slide(1, 60_000, name="reports")], "/free": []},
        key=lambda scope: dict(scope["headers"]).get(b"x-user-id", b"anon").decode(),  # a trusted id in this test
        tag=lambda ident: ident,
    )
    with TestClient(wrapped) as client:
        ok = client.get("/items", headers={"x-user-id": "alice"})
        assert ok.status_code == 200 and ok.headers["ratelimit"] == '"api";r=1;t=30'
        assert ok.headers["ratelimit-policy"] == '"api";q=2;w=60'
        client.get("/items", headers={"x-user-id": "alice"})
        denied = client.get("/items", headers={"x-user-id": "alice"})
        assert denied.status_code == 429 and denied.headers["retry-after"] == "30"
        body = denied.json()
        assert body["error"] == "rate_limited" and body["limit"] == "api" and "alice" not in json.dumps(body)
        assert calls == ["items", "items"]  # rejected before the handler
        assert client.get("/items", headers={"x-user-id": "bob"}).status_code == 200
        assert client.post("/report", headers={"x-user-id": "bob"}).status_code == 200
        second = client.post("/report", headers={"x-user-id": "bob"})
        assert second.status_code == 429 and second.json()["limit"] == "reports"
        assert second.headers["ratelimit"].startswith('"reports";r=0')
        for _ in range(5):
            assert client.get("/free").status_code == 200  # exempt route


def test_asgi_concurrency_released_after_response(server: RedisServer) -> None:
    raw = redis.Redis(port=server.port, decode_responses=True)
    raw.flushall()
    seen: List[int] = []

    async def slow(request: Any) -> JSONResponse:
        seen.append(raw.exists("rl:{u}:slots:u"))
        return JSONResponse({})

    limiter = AsyncLimiter(redis.asyncio.Redis(port=server.port))
    app = RateLimitMiddleware(Starlette(routes=[Route("/", slow)]), limiter,
                              limits=[Gcra(100, 60_000, name="rate"), Concurrency(1, 60_000, name="slots")],
                              key=lambda scope: "u", tag=lambda i: i)
    with TestClient(app) as client:
        for _ in range(3):
            assert client.get("/").status_code == 200
    assert seen == [1, 1, 1] and raw.exists("rl:{u}:slots:u") == 0


def wsgi_call(app: Any, path: str, method: str = "GET", addr: str = "10.0.0.1") -> Tuple[str, Dict[str, str], bytes]:
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "REMOTE_ADDR": addr, "wsgi.input": io.BytesIO(b""),
               "SERVER_NAME": "t", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
               "HTTP_X_FORWARDED_FOR": "1.2.3.4"}
    got: Dict[str, Any] = {}

    def start_response(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> None:
        got["status"], got["headers"] = status, dict(headers)

    result = app(environ, start_response)
    try:
        body = b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return got["status"], got["headers"], body


def test_wsgi_raw_environ(server: RedisServer) -> None:
    raw = redis.Redis(port=server.port)
    raw.flushall()
    hits: List[str] = []

    def app(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        hits.append(environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"hello"]

    limiter = Limiter(raw)
    wrapped = WsgiRateLimitMiddleware(app, limiter, limits=[Gcra(1, 60_000, name="per-ip")],
                                      routes={"/big*": [Gcra(5, 60_000, name="big")]},
                                      cost=lambda environ: 9 if environ["PATH_INFO"] == "/big/huge" else 1)
    status, headers, body = wsgi_call(wrapped, "/")
    assert status == "200 OK" and body == b"hello" and headers["RateLimit"] == '"per-ip";r=0;t=60'
    status, headers, body = wsgi_call(wrapped, "/")
    assert status.startswith("429") and headers["Retry-After"] == "60" and json.loads(body)["limit"] == "per-ip"
    # the key is the peer address, not X-Forwarded-For: another peer has its own bucket
    assert raw.exists("rl:per-ip:10.0.0.1") and not raw.exists("rl:per-ip:1.2.3.4")
    assert wsgi_call(wrapped, "/", addr="10.0.0.2")[0] == "200 OK"
    status, headers, body = wsgi_call(wrapped, "/big/huge")
    assert status.startswith("413") and "Retry-After" not in headers and json.loads(body)["error"] == "request_too_large"
    assert hits == ["/", "/"]


def test_wsgi_concurrency_released_on_close(server: RedisServer) -> None:
    raw = redis.Redis(port=server.port)
    raw.flushall()

    def app(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        start_response("200 OK", [])
        return [b"x"]

    wrapped = WsgiRateLimitMiddleware(app, Limiter(raw), limits=[Concurrency(1, 60_000, name="c")])
    for _ in range(3):
        assert wsgi_call(wrapped, "/")[0] == "200 OK"
    assert raw.exists("rl:c:10.0.0.1") == 0
