"""A small HTTP API guarded by redis-rl: three layered limits in one RL.ALL call.

Every request, before any work is done:

1. is authenticated: the API key is looked up server-side. Who the caller is
   (key, user, tenant) comes from that table only, never from a header or a
   parameter the client chose (X-Forwarded-For, ?tenant=...), so a client
   cannot pick whose bucket is charged;
2. is checked against three limits as one all-or-nothing decision (RL.ALL):
     "key"    per API key, GCRA: stops one runaway client;
     "tenant" per tenant, sliding window: the tenant's quota over all its
              keys, so minting more keys does not buy more requests;
     "work"   per tenant, token bucket of work units: each route charges its
              cost, so an expensive report drains it faster than a cheap read.
   All three keys share the hash tag {tenant:<id>}, so they live in one slot
   and RL.ALL works unchanged in Redis Cluster (redis_rl.Limiter.check_all);
3. is rejected if any limit says no: 429 with Retry-After, RateLimit-Policy
   and RateLimit, and a JSON body naming the limit (never an identifier).

If Redis is unreachable or slow, FAIL_MODE decides: "closed" answers 503,
"open" serves from a small in-process limit (the global limit divided by the
number of instances), so an outage never means unlimited traffic.

POST /v1/chat is an LLM gateway with limits of its own: it reserves
max_tokens before the model call and refunds what the call did not use, and
holds a concurrency slot per API key and one of the tenant's share of the
model upstream while the call runs (llm_gateway.py). The RateLimit fields follow the IETF draft
(ratelimit_headers.py).

Run it by hand: see README.md. Standard library, redis-py and redis-rl
(clients/python): the library builds the RL.ALL, reads its replies, and
speaks to the module or, where modules cannot be loaded, to the Lua library
(RL_BACKEND=auto, the default, picks).
"""

import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis_rl import Decision, Gcra, Limiter, Slide, TokenBucket
from redis_rl.decision import SOURCE_LOCAL
from redis_rl.local import LocalStore

from llm_gateway import CHAT_PATH, LlmGateway, LlmLimits, Upstream, demo_upstream, parse_max_tokens
from ratelimit_headers import answer, policy_field, rule_policy, tenant_key

log = logging.getLogger("ratelimited-service")


# --- who is calling ---------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    key_id: str  # a stable, non-secret id of the API key: this goes into Redis key names
    user_id: str
    tenant_id: str  # ours, not the client's: it must not contain '{' or '}' (hash tag)
    zone: str = "UTC"  # the tenant's IANA time zone: its daily token quota resets at its local midnight


# API key -> who it belongs to. In a real service this is a lookup in your
# database or identity provider (by a hash of the key). The secret itself
# never reaches Redis, only its id: key names show up in MONITOR, SLOWLOG,
# KEYS and the logs of whoever runs Redis.
DEMO_API_KEYS: Dict[str, Identity] = {
    "demo-key-alice": Identity("k1", "alice", "acme", "America/New_York"),
    "demo-key-bob": Identity("k2", "bob", "acme", "America/New_York"),
    "demo-key-carol": Identity("k3", "carol", "globex", "Europe/Berlin"),
}


# --- what the routes cost -----------------------------------------------------


class BadRequest(Exception):
    pass


def _batch_cost(body) -> int:
    # The work a batch asks for is the number of items in it. A client may ask
    # for more than the whole budget: the limiter answers "never" (-1), and we
    # answer 413.
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        raise BadRequest('expected a JSON body {"items": [...]}')
    return max(1, len(body["items"]))


@dataclass(frozen=True)
class Route:
    cost: Callable[[object], int]  # work units charged to the tenant's "work" limit
    work: Callable[[Identity, object], dict]  # runs only after the limits said yes


REPORT_COST = 4

ROUTES: Dict[Tuple[str, str], Route] = {
    ("GET", "/v1/items"): Route(lambda body: 1, lambda who, body: {"items": ["apple", "banana", "cherry"]}),
    ("POST", "/v1/reports"): Route(lambda body: REPORT_COST, lambda who, body: {"report": "ready"}),
    ("POST", "/v1/batch"): Route(_batch_cost, lambda who, body: {"accepted": len(body["items"])}),
}


# --- the limits -----------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    key_limit: int = 5  # per API key: GCRA, 5 per minute, all 5 back to back from idle
    key_period_ms: int = 60_000
    tenant_limit: int = 20  # per tenant: sliding window, 20 requests per minute
    tenant_window_ms: int = 60_000
    work_capacity: int = 20  # per tenant: token bucket of 20 work units,
    work_refill: int = 20  # refilled at 20 per minute
    work_refill_period_ms: int = 60_000


@dataclass
class Verdict:
    status: int  # 200: go ahead and do the work; else the error status to send
    headers: Dict[str, str] = field(default_factory=dict)
    body: Optional[dict] = None


@dataclass(frozen=True)
class Config:
    limits: Limits = Limits()
    # What to do when Redis is unreachable or does not answer in time:
    #   "closed": 503 + Retry-After. Nothing is served unlimited; the API is down
    #             while Redis is. Pick it when overload costs more than downtime.
    #   "open":   serve, but through a local limit of global_limit / instances
    #             per global_period_ms, so the fleet as a whole stays near the
    #             global limit. Pick it when downtime costs more.
    fail_mode: str = "open"
    instances: int = 1  # how many copies of this service run behind the load balancer
    global_limit: int = 600  # requests the whole fleet may serve per global_period_ms
    global_period_ms: int = 60_000
    fail_closed_retry_after_s: int = 5
    llm: LlmLimits = LlmLimits()  # POST /v1/chat, the LLM gateway (llm_gateway.py)
    backend: str = "auto"  # redis-rl's backend: "module", "lua" (no module), "auto" (the module if loaded)

    @staticmethod
    def from_env(env: Mapping[str, str]) -> "Config":
        return Config(
            fail_mode=env.get("FAIL_MODE", "open"),
            instances=int(env.get("INSTANCES", "1")),
            global_limit=int(env.get("GLOBAL_LIMIT", "600")),
            global_period_ms=int(env.get("GLOBAL_PERIOD_MS", "60000")),
            fail_closed_retry_after_s=int(env.get("FAIL_CLOSED_RETRY_AFTER_S", "5")),
            backend=env.get("RL_BACKEND", "auto"),
        )


class RateLimitedApi:
    def __init__(self, redis_client: "redis.Redis", api_keys: Mapping[str, Identity], config: Config = Config(),
                 fallback_clock: Optional[Callable[[], int]] = None, upstream: Optional[Upstream] = None):
        if config.fail_mode not in ("open", "closed"):
            raise ValueError("fail_mode must be 'open' or 'closed'")
        self.api_keys = api_keys
        self.config = config
        # The client's own timeout applies (connect_redis); the failure policy is ours (below).
        self.limiter = Limiter(redis_client, prefix="", timeout_ms=None, backend=config.backend)
        lim = config.limits
        # One hash tag per tenant: {tenant:<id>}:key:<key id>, {tenant:<id>}:tenant and
        # {tenant:<id>}:work are in one cluster slot. Only server-side ids go in here.
        self.layers = [Gcra(lim.key_limit, lim.key_period_ms, name="key"),
                       Slide(lim.tenant_limit, lim.tenant_window_ms, name="tenant", key=tenant_key("tenant")),
                       TokenBucket(lim.work_capacity, lim.work_refill, lim.work_refill_period_ms, name="work",
                                   key=tenant_key("work"))]
        self.policy_header = policy_field(self.layers)
        # This instance's share of the global limit, used only while Redis is down: one bucket.
        share = max(1, config.global_limit // max(1, config.instances))
        self.fallback_limit = Gcra(share, config.global_period_ms, name="fallback")
        self.fallback = LocalStore(clock=fallback_clock or time.monotonic_ns)
        # POST /v1/chat exists when there is a model to call.
        self.llm = LlmGateway(self.limiter, config.llm, upstream) if upstream else None

    def authenticate(self, authorization: Optional[str]) -> Optional[Identity]:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self.api_keys.get(token.strip())

    def check(self, who: Identity, cost: int) -> Verdict:
        # One RL.ALL, all or nothing; the route's cost goes to "work" only.
        key, tenant, work = self.layers
        d = self.limiter.check_all([(key, who.key_id, 1), (tenant, who.tenant_id, 1), (work, who.tenant_id, cost)],
                                   tag=f"tenant:{who.tenant_id}")
        if d.source != "redis":
            # Unreachable or timed out: the same choice applies.
            log.warning("rate limiter unavailable (%s): failing %s", type(d.decisions[0].error).__name__,
                        self.config.fail_mode)
            return self._without_redis()
        return Verdict(*answer(d, self.policy_header, d.decisions, [1, 1, cost]))

    def _without_redis(self) -> Verdict:
        if self.config.fail_mode == "closed":
            return Verdict(503, {"Retry-After": str(self.config.fail_closed_retry_after_s)},
                           {"error": "rate_limiter_unavailable"})
        # Fail open, but not unlimited: one request is one unit here. The
        # per-key and per-tenant fairness is gone until Redis is back; the
        # total is still bounded.
        rule = self.fallback_limit
        d = Decision(*self.fallback.take("fallback", rule.quota, rule.window_ms, 1), name=rule.name, rule=rule,
                     source=SOURCE_LOCAL)
        return Verdict(*answer(d, rule_policy(rule), [d], [1]))

    # --- HTTP ---------------------------------------------------------------------

    MAX_BODY = 64 * 1024

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        # The query string is dropped here on purpose: nothing in it (such as
        # ?tenant=other) takes part in identifying the caller.
        path = urlsplit(req.path).path
        length = int(req.headers.get("Content-Length") or 0)
        if length > self.MAX_BODY:
            req.close_connection = True  # we do not read it, so this connection cannot be reused
            return self._send(req, 413, {}, {"error": "body_too_large"})
        raw = req.rfile.read(length) if length > 0 else b""

        who = self.authenticate(req.headers.get("Authorization"))
        if who is None:
            return self._send(req, 401, {"WWW-Authenticate": 'Bearer realm="api"'}, {"error": "unauthorized"})
        if self.llm is not None and (req.command, path) == ("POST", CHAT_PATH):
            return self._chat(req, who, raw)
        route = ROUTES.get((req.command, path))
        if route is None:
            return self._send(req, 404, {}, {"error": "not_found"})
        try:
            body = json.loads(raw) if raw else None
            cost = route.cost(body)
        except (ValueError, BadRequest) as exc:
            return self._send(req, 400, {}, {"error": "bad_request", "detail": str(exc)})

        verdict = self.check(who, cost)
        if verdict.status != 200:
            return self._send(req, verdict.status, verdict.headers, verdict.body)  # rejected before any work
        self._send(req, 200, verdict.headers, route.work(who, body))

    def _chat(self, req: BaseHTTPRequestHandler, who: Identity, raw: bytes) -> None:
        try:
            body = json.loads(raw) if raw else None
            max_tokens = parse_max_tokens(body, self.config.llm.max_tokens_cap)
        except ValueError as exc:
            return self._send(req, 400, {}, {"error": "bad_request", "detail": str(exc)})

        def without_redis():
            verdict = self._without_redis()
            return verdict.status, verdict.headers, verdict.body

        status, headers, answer = self.llm.chat(who, body, max_tokens, without_redis)
        self._send(req, status, headers, answer)

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, status: int, headers: Mapping[str, str], body: Optional[dict]) -> None:
        data = json.dumps(body).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            req.send_header(name, value)
        req.end_headers()
        req.wfile.write(data)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections
    server_version = "ratelimited-example"
    sys_version = ""

    def version_string(self):
        return self.server_version

    def do_GET(self):
        self.server.api.handle(self)

    do_POST = do_GET

    def log_message(self, fmt, *args):
        log.info("%s %s", self.address_string(), fmt % args)


def make_server(api: RateLimitedApi, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.api = api
    return server


def connect_redis(url: str, timeout_ms: int) -> "redis.Redis":
    # A short timeout and no client-side retries: while Redis is down or slow,
    # each request should learn it within timeout_ms and take the fail mode,
    # not queue up behind reconnect attempts (a retried call would also charge
    # twice). RESP2 or RESP3: redis-rl reads both.
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout_ms / 1000,
        socket_connect_timeout=timeout_ms / 1000,
        retry=Retry(NoBackoff(), 0),
    )


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    env = os.environ
    config = Config.from_env(env)
    client = connect_redis(env.get("REDIS_URL", "redis://127.0.0.1:6379/0"), int(env.get("REDIS_TIMEOUT_MS", "100")))
    api = RateLimitedApi(client, DEMO_API_KEYS, config, upstream=demo_upstream)
    host, port = env.get("HOST", "127.0.0.1"), int(env.get("PORT", "8080"))
    server = make_server(api, host, port)
    print(f"listening on http://{host}:{server.server_port} (FAIL_MODE={config.fail_mode}, "
          f"INSTANCES={config.instances})", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
