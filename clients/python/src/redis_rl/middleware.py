"""ASGI (Starlette, FastAPI, any ASGI app) and WSGI (Flask, any WSGI app) middleware.

Each request is checked before the app runs; a denied one is answered
here (429, 413, or 503, with Retry-After, RateLimit-Policy, RateLimit and a
JSON body naming the limit, never the identity), and an allowed one gets
the RateLimit fields added to the app's response.

    app = RateLimitMiddleware(app, limiter, limits=[Gcra(100, 60_000)],
                              routes={"POST /v1/reports": [Gcra(5, 60_000, name="reports")]},
                              key=lambda scope: scope["user_id"])

The identity: `key` is given the ASGI scope (WSGI: the environ) and
returns the identity to limit, a server-side fact such as the
authenticated user or API-key id set by your auth middleware. The default
is the socket's peer address (scope["client"], environ["REMOTE_ADDR"]).
Never use a raw X-Forwarded-For or any header a client can set: it would
let every client pick whose bucket is charged. Behind a proxy, let a
proxy-headers middleware that trusts only your proxy's address rewrite the
peer address first. Returning None exempts the request from limiting:
return a constant such as "anonymous" for unauthenticated traffic.

Routes: "METHOD /path", "/path" (any method), or a prefix ending in "*"
("/v1/*"); the longest match wins, else `limits` applies. Concurrency
limits are acquired for the request and released when the response is done.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, MutableMapping, Optional, Sequence, Tuple, Union

from .aio import AsyncLimiter
from .decision import SOURCE_REDIS, Decision
from .limiter import Limiter
from .limits import Concurrency, Limit

__all__ = ["RateLimitMiddleware", "WsgiRateLimitMiddleware", "client_address", "remote_addr"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Cost = Union[int, Callable[[Any], int]]


def client_address(scope: Scope) -> Optional[str]:
    """The ASGI peer address (not a header)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def remote_addr(environ: Mapping[str, Any]) -> Optional[str]:
    """The WSGI peer address (not a header)."""
    return str(environ.get("REMOTE_ADDR") or "unknown")


class _Routes:
    def __init__(self, limits: Sequence[Limit], routes: Optional[Mapping[str, Sequence[Limit]]]) -> None:
        self.default = list(limits)
        self.exact: Dict[Tuple[Optional[str], str], List[Limit]] = {}
        self.prefixes: List[Tuple[int, Optional[str], str, List[Limit]]] = []
        for spec, lims in (routes or {}).items():
            method: Optional[str]
            if " " in spec:
                m, path = spec.split(None, 1)
                method = m.upper()
            else:
                method, path = None, spec
            if path.endswith("*"):
                self.prefixes.append((len(path), method, path[:-1], list(lims)))
            else:
                self.exact[(method, path)] = list(lims)
        self.prefixes.sort(key=lambda t: -t[0])

    def match(self, method: str, path: str) -> List[Limit]:
        method = method.upper()
        hit = self.exact.get((method, path))
        if hit is None:
            hit = self.exact.get((None, path))
        if hit is not None:
            return hit
        for _, m, prefix, lims in self.prefixes:
            if path.startswith(prefix) and (m is None or m == method):
                return lims
        return self.default


def _deny_parts(d: Decision) -> Tuple[int, List[Tuple[str, str]], bytes]:
    body = json.dumps(d.body()).encode()
    headers = [(k, v) for k, v in d.headers().items()]
    headers += [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    return d.status, headers, body


class RateLimitMiddleware:
    """ASGI middleware; needs an AsyncLimiter."""

    def __init__(self, app: ASGIApp, limiter: AsyncLimiter, *, limits: Sequence[Limit] = (),
                 routes: Optional[Mapping[str, Sequence[Limit]]] = None,
                 key: Callable[[Scope], Optional[str]] = client_address, cost: Cost = 1,
                 tag: Optional[Callable[[str], str]] = None, add_headers: bool = True) -> None:
        if not isinstance(limiter, AsyncLimiter):
            raise TypeError("RateLimitMiddleware needs an AsyncLimiter (redis.asyncio)")
        self.app = app
        self.limiter = limiter
        self.routes = _Routes(limits, routes)
        self.key = key
        self.cost = cost
        self.tag = tag
        self.add_headers = add_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        limits = self.routes.match(scope.get("method", "GET"), scope.get("path", "/"))
        identity = self.key(scope) if limits else None
        if not limits or identity is None:
            await self.app(scope, receive, send)
            return
        cost = self.cost(scope) if callable(self.cost) else self.cost
        tag = self.tag(identity) if self.tag is not None else None
        if len(limits) == 1:
            d = await self.limiter.check(limits[0], identity, cost, tag=tag)
        else:
            d = await self.limiter.check_all([(lim, identity) for lim in limits], cost, tag=tag)
        if not d.allowed:
            status, headers, body = _deny_parts(d)
            await send({"type": "http.response.start", "status": status,
                        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]})
            await send({"type": "http.response.body", "body": body})
            return
        extra = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in d.headers().items()] \
            if self.add_headers else []

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message.get("type") == "http.response.start" and extra:
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            if any(isinstance(s.rule, Concurrency) for s in d.decisions):
                await self.limiter.release(d)


class WsgiRateLimitMiddleware:
    """WSGI middleware; needs a (sync) Limiter. `key` gets the environ."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limiter: Limiter, *, limits: Sequence[Limit] = (),
                 routes: Optional[Mapping[str, Sequence[Limit]]] = None,
                 key: Callable[[Mapping[str, Any]], Optional[str]] = remote_addr, cost: Cost = 1,
                 tag: Optional[Callable[[str], str]] = None, add_headers: bool = True) -> None:
        if not isinstance(limiter, Limiter):
            raise TypeError("WsgiRateLimitMiddleware needs a Limiter (sync redis-py client)")
        self.app = app
        self.limiter = limiter
        self.routes = _Routes(limits, routes)
        self.key = key
        self.cost = cost
        self.tag = tag
        self.add_headers = add_headers

    def __call__(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        limits = self.routes.match(environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", "/"))
        identity = self.key(environ) if limits else None
        if not limits or identity is None:
            return self.app(environ, start_response)
        cost = self.cost(environ) if callable(self.cost) else self.cost
        tag = self.tag(identity) if self.tag is not None else None
        if len(limits) == 1:
            d = self.limiter.check(limits[0], identity, cost, tag=tag)
        else:
            d = self.limiter.check_all([(lim, identity) for lim in limits], cost, tag=tag)
        if not d.allowed:
            status, headers, body = _deny_parts(d)
            start_response(f"{status} {_REASONS.get(status, '')}".strip(), headers)
            return [body]
        extra = list(d.headers().items()) if self.add_headers else []

        def start_with_headers(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> Any:
            return start_response(status, list(headers) + extra, exc_info) if exc_info is not None \
                else start_response(status, list(headers) + extra)

        if not any(isinstance(s.rule, Concurrency) for s in d.decisions):
            return self.app(environ, start_with_headers)
        try:
            result = self.app(environ, start_with_headers)
        except BaseException:
            self.limiter.release(d)
            raise
        return _Closing(result, lambda: self.limiter.release(d))


class _Closing:
    """Wraps a WSGI response iterable: releases the leases when the server closes it."""

    def __init__(self, inner: Iterable[bytes], on_close: Callable[[], Any]) -> None:
        self.inner = inner
        self.on_close = on_close

    def __iter__(self) -> Any:
        return iter(self.inner)

    def close(self) -> None:
        try:
            close = getattr(self.inner, "close", None)
            if close is not None:
                close()
        finally:
            self.on_close()


_REASONS = {413: "Content Too Large", 429: "Too Many Requests", 503: "Service Unavailable"}
_ = SOURCE_REDIS
