"""The example service over real HTTP, against a real redis-server with the module.

Limits are per hour, so nothing refills while a test runs: every number is
computed from the commands' semantics (SPEC.md), not copied from a run. The
one thing a test cannot know to the millisecond is when the server decided,
so each request is bracketed by the wall clock before and after it; a value
that depends on that instant must equal what the semantics give at one of
the two ends (nearly always both ends give the same value).
"""

import http.client
import json
import threading
import time
import unittest

import redis

from retry_client import RetryingClient, send_http
from service import Config, Identity, Limits, RateLimitedApi, connect_redis, make_server
from tests.redis_server import LUA, RedisServer, rl

HOUR = 3_600_000
LIMITS = Limits(key_limit=3, key_period_ms=HOUR,  # GCRA: one request per T, burst 3
                tenant_limit=5, tenant_window_ms=HOUR,  # SLIDE over the tenant's keys
                work_capacity=10, work_refill=10, work_refill_period_ms=HOUR)  # one unit per I
T = HOUR // 3  # GCRA emission interval, ms
I = HOUR // 10  # token bucket: ms per unit
W = HOUR  # sliding window
POLICY = '"key";q=3;w=3600, "tenant";q=5;w=3600, "work";q=10;w=3600'

API_KEYS = {
    "sk-alice": Identity("k-alice", "alice", "acme"),
    "sk-bob": Identity("k-bob", "bob", "acme"),
    "sk-carol": Identity("k-carol", "carol", "globex"),
    "sk-dave": Identity("k-dave", "dave", "initech"),
}


def ceil_s(ms):
    return -(-ms // 1000)


def now_ms():
    return time.time_ns() // 1_000_000


class Reply:
    def __init__(self, status, headers, raw, before, after):
        self.status, self.headers, self.raw = status, headers, raw
        self.body = json.loads(raw) if raw else None
        self.before, self.after = before, after  # the server decided within [before, after] (wall clock, ms)


def values_between(fn, lo, hi):
    """What a step function of a duration gives anywhere in [lo, hi] (hi - lo < 1 s)."""
    assert 0 <= hi - lo < 1000, f"requests too slow to pin down the values: {lo}..{hi}"
    return {fn(lo), fn(hi)}


def since(first, reply):
    """Bounds on the server time elapsed from `first` to `reply`, in ms."""
    return max(0, reply.before - first.after), reply.after - first.before


def into_window(reply):
    """Bounds on how far into its sliding window (aligned to the epoch) the server was."""
    return reply.before % W, reply.after % W


class HttpCase(unittest.TestCase):
    port = None

    def send(self, method, path, key=None, headers=None, body=None):
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = f"Bearer {key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        before = now_ms()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=data, headers=h)
            resp = conn.getresponse()
            raw = resp.read()
            reply = Reply(resp.status, resp.headers, raw, before, now_ms())
        finally:
            conn.close()
        return reply

    def get(self, path, key, **kw):
        return self.send("GET", path, key, **kw)

    def assert_ratelimit(self, reply, name, remaining, ts, policy=POLICY):
        self.assertEqual(reply.headers["RateLimit-Policy"], policy)
        self.assertIn(reply.headers["RateLimit"], {f'"{name}";r={remaining};t={t}' for t in ts})

    def assert_refused(self, reply, name, remaining, policy=POLICY):
        """A 429: t names the same moment as Retry-After. Draft section 6:
        Retry-After "SHOULD NOT reference a point in time earlier than the
        end of the effective window"; t is that window."""
        self.assertEqual(reply.status, 429)
        self.assertEqual(reply.headers["RateLimit-Policy"], policy)
        self.assertEqual(reply.headers["RateLimit"], f'"{name}";r={remaining};t={reply.headers["Retry-After"]}')


class ServiceTest(HttpCase):
    @classmethod
    def setUpClass(cls):
        cls.server_proc = RedisServer()
        cls.addClassCleanup(cls.server_proc.stop)
        cls.redis = redis.Redis(port=cls.server_proc.port, protocol=2, decode_responses=True)
        cls.addClassCleanup(cls.redis.close)
        cls.api = api = RateLimitedApi(connect_redis(f"redis://127.0.0.1:{cls.server_proc.port}/0", 2000), API_KEYS,
                                       Config(limits=LIMITS, fail_mode="closed"))
        http_server = make_server(api)
        cls.port = http_server.server_port
        threading.Thread(target=http_server.serve_forever, daemon=True).start()
        cls.addClassCleanup(http_server.server_close)
        cls.addClassCleanup(http_server.shutdown)

    def setUp(self):
        self.redis.flushall()

    def test_key_limit_200s_then_429_with_exact_headers(self):
        first = self.get("/v1/items", "sk-alice")
        ok = [first, self.get("/v1/items", "sk-alice"), self.get("/v1/items", "sk-alice")]
        for k, reply in enumerate(ok, start=1):
            self.assertEqual(reply.status, 200)
            self.assertEqual(reply.body, {"items": ["apple", "banana", "cherry"]})
            # After k requests the GCRA is k intervals ahead of the first one.
            # key: 3-k left; tenant 5-k; work 10-k: the key is the most restrictive.
            # t, the effective window (draft 4.1.2), runs until the key has
            # one more than 3-k: one interval after the first request, not
            # the k intervals until it is full.
            self.assert_ratelimit(reply, "key", 3 - k, values_between(lambda d: ceil_s(T - d), *since(first, reply)))
            self.assertNotIn("Retry-After", reply.headers)

        denied = self.get("/v1/items", "sk-alice")
        self.assertEqual(denied.status, 429)
        # The 4th fits once the first interval has passed: T after the first.
        retry = values_between(lambda d: ceil_s(T - d), *since(first, denied))
        self.assertIn(int(denied.headers["Retry-After"]), retry)
        self.assert_refused(denied, "key", 0)
        self.assertEqual(denied.body, {"error": "rate_limited", "limit": "key",
                                       "retry_after_s": int(denied.headers["Retry-After"])})
        # All or nothing: the denied request took nothing from the tenant or work limits.
        self.assertEqual(rl(self.redis, "RL.SLIDE", "{tenant:acme}:tenant", 5, W, "COST", 0)[2], 2)
        self.assertEqual(rl(self.redis, "RL.TOKENBUCKET", "{tenant:acme}:work", 10, 10, HOUR, "COST", 0)[2], 7)

    def test_backend_auto_picks_the_module_or_the_lua_library(self):
        self.assertEqual(self.get("/v1/items", "sk-alice").status, 200)
        self.assertEqual(self.api.limiter.backend.name, "lua" if LUA else "module")
        self.assertEqual(bool(self.redis.function_list()), LUA)  # the library is loaded only where it is used

    def test_identity_comes_from_the_api_key_only(self):
        # Whatever the client claims about where it comes from or which tenant
        # it is, alice's key charges alice's and acme's limits.
        replies = [
            self.get(f"/v1/items?tenant=globex&user=carol&n={n}", "sk-alice",
                     headers={"X-Forwarded-For": f"203.0.113.{n}", "X-Tenant-Id": "globex", "X-User-Id": "carol"})
            for n in range(4)
        ]
        self.assertEqual([r.status for r in replies], [200, 200, 200, 429])
        self.assertEqual(replies[3].body["limit"], "key")
        self.assertEqual(sorted(self.redis.keys("*")),
                         ["{tenant:acme}:key:k-alice", "{tenant:acme}:tenant", "{tenant:acme}:work"])
        # The 429 body names the limit, and no identifier: no key, user,
        # tenant, Redis key name or client address.
        raw = replies[3].raw.decode()
        for secret in ("sk-alice", "k-alice", "alice", "acme", "{tenant", "203.0.113", "globex"):
            self.assertNotIn(secret, raw)
        # globex was not charged: carol starts with a full limit.
        carol = self.get("/v1/items?tenant=acme", "sk-carol", headers={"X-Forwarded-For": "203.0.113.1"})
        self.assertEqual(carol.status, 200)
        self.assert_ratelimit(carol, "key", 2, {ceil_s(T)})

    def test_tenant_limit_is_shared_by_the_tenants_keys(self):
        # The sliding window is aligned to the epoch; in the rare run that
        # straddles a window boundary, run again (we are then past it).
        for _ in range(2):
            self.redis.flushall()
            alice = [self.get("/v1/items", "sk-alice") for _ in range(3)]
            bob = [self.get("/v1/items", "sk-bob") for _ in range(3)]
            if alice[0].before // W == bob[2].after // W:
                break
        else:
            self.fail("crossed a sliding-window boundary twice")
        self.assertEqual([r.status for r in alice + bob], [200] * 5 + [429])
        # Bob has 2 left on his own key, but acme has used 4 then 5 of its 5;
        # the tenant is the most restrictive. cur > 0 in this window, so the
        # window is empty again at the end of the next one: t = 2W - e.
        for left, reply in ((1, bob[0]), (0, bob[1])):
            self.assert_ratelimit(reply, "tenant", left, values_between(lambda e: ceil_s(2 * W - e), *into_window(reply)))
        denied = bob[2]
        # Denied with cur = 5 = limit and nothing in the previous window: it
        # fits in the next window once cur's weight (W - e')/W * 5 <= 4, that
        # is e' >= W/5. Wait: the rest of this window plus W/5.
        retry = values_between(lambda e: ceil_s(W - e + W // 5), *into_window(denied))
        self.assertIn(int(denied.headers["Retry-After"]), retry)
        self.assert_refused(denied, "tenant", 0)
        self.assertEqual(denied.body, {"error": "rate_limited", "limit": "tenant",
                                       "retry_after_s": int(denied.headers["Retry-After"])})

    def test_expensive_route_costs_more(self):
        # A report costs 4 work units, a read 1; carol's tenant has 10.
        first = self.send("POST", "/v1/reports", "sk-carol")
        second = self.send("POST", "/v1/reports", "sk-carol")
        self.assertEqual((first.status, second.status), (200, 200))
        self.assertEqual(first.body, {"report": "ready"})
        # 6 units left = one more report: fewer than the key (2) or tenant (4)
        # allow, so "work" is the most restrictive. The bucket gives one
        # unit back every I: t is I after the first report.
        self.assert_ratelimit(first, "work", 6, {ceil_s(I)})
        self.assert_ratelimit(second, "work", 2, values_between(lambda d: ceil_s(I - d), *since(first, second)))

        denied = self.send("POST", "/v1/reports", "sk-carol")
        self.assertEqual(denied.status, 429)
        # 2 units left, 4 needed: two more units, 2I after the first report.
        self.assertIn(int(denied.headers["Retry-After"]), values_between(lambda d: ceil_s(2 * I - d), *since(first, denied)))
        self.assert_refused(denied, "work", 2)
        self.assertEqual(denied.body, {"error": "rate_limited", "limit": "work",
                                       "retry_after_s": int(denied.headers["Retry-After"])})

        # A cheap read still fits the 2 units left; now carol's own key (0
        # left, 3 requests made) is the most restrictive.
        read = self.get("/v1/items", "sk-carol")
        self.assertEqual(read.status, 200)
        self.assert_ratelimit(read, "key", 0, values_between(lambda d: ceil_s(T - d), *since(first, read)))

    def test_request_that_can_never_fit_gets_413_without_retry_after(self):
        # 11 items cost 11 units; the work limit holds 10: RL.ALL answers
        # retry_after_ms = -1. Waiting cannot help, so 413, not 429.
        too_big = self.send("POST", "/v1/batch", "sk-dave", body={"items": list(range(11))})
        self.assertEqual(too_big.status, 413)
        self.assertNotIn("Retry-After", too_big.headers)
        self.assert_ratelimit(too_big, "work", 10, {0})  # untouched: full, nothing held back
        self.assertEqual(too_big.body, {"error": "request_too_large", "limit": "work"})
        # Nothing was consumed: a batch of exactly 10 still fits, and empties it.
        fits = self.send("POST", "/v1/batch", "sk-dave", body={"items": list(range(10))})
        self.assertEqual(fits.status, 200)
        self.assertEqual(fits.body, {"accepted": 10})
        self.assert_ratelimit(fits, "work", 0, {ceil_s(I)})  # empty; the next unit comes in I

    def test_unauthenticated_unknown_and_malformed_requests_charge_nothing(self):
        for headers in ({}, {"Authorization": "Bearer sk-mallory"}, {"Authorization": "Basic c2stYWxpY2U6"},
                        {"X-Forwarded-For": "10.0.0.1", "X-Api-Key": "sk-alice"}):
            reply = self.send("GET", "/v1/items?tenant=acme", headers=headers)
            self.assertEqual(reply.status, 401, headers)
            self.assertEqual(reply.body, {"error": "unauthorized"})
            self.assertEqual(reply.headers["WWW-Authenticate"], 'Bearer realm="api"')
            self.assertNotIn("RateLimit", reply.headers)
        self.assertEqual(self.get("/v1/nothing-here", "sk-alice").status, 404)
        bad = self.send("POST", "/v1/batch", "sk-alice", body={"not-items": 1})
        self.assertEqual(bad.status, 400)
        self.assertEqual(self.redis.dbsize(), 0)

    def test_client_helper_hands_back_a_long_retry_after(self):
        # The key limit's Retry-After (20 minutes) is longer than the client
        # is willing to wait: it returns the 429 at once, without sleeping.
        url = f"http://127.0.0.1:{self.port}/v1/items"
        auth = {"Authorization": "Bearer sk-alice"}
        sleeps = []
        client = RetryingClient(send_http, max_wait_s=30, sleep=sleeps.append, rand=lambda: 0.0)
        statuses = [client.call("GET", url, auth).status for _ in range(4)]
        self.assertEqual(statuses, [200, 200, 200, 429])
        self.assertEqual(sleeps, [])
        # One that would wait that long sleeps exactly Retry-After (jitter 0
        # here) before each retry, up to max_retries.
        patient = RetryingClient(send_http, max_wait_s=HOUR / 1000, max_retries=2, sleep=sleeps.append, rand=lambda: 0.0)
        last = patient.call("GET", url, auth)
        self.assertEqual(last.status, 429)
        self.assertEqual(len(sleeps), 2)
        self.assertTrue(all(s in (T / 1000, T / 1000 - 1) for s in sleeps), sleeps)


class FakeClock:
    def __init__(self):
        self.ns = 0

    def __call__(self):
        return self.ns

    def advance_ms(self, ms):
        self.ns += ms * 1_000_000


class FailModeTest(HttpCase):
    """Redis goes away: first it hangs (SIGSTOP: a timeout), then it dies (SIGKILL: refused)."""

    @classmethod
    def setUpClass(cls):
        cls.server_proc = RedisServer()
        cls.addClassCleanup(cls.server_proc.stop)
        cls.ports = {}
        cls.clock = FakeClock()  # the fallback bucket's clock: frozen unless a test moves it
        for mode in ("open", "closed"):
            # A whole fleet may serve 6 requests an hour without Redis; this
            # is one of 2 instances, so it serves at most 3.
            config = Config(limits=LIMITS, fail_mode=mode, instances=2, global_limit=6, global_period_ms=HOUR,
                            fail_closed_retry_after_s=5)
            client = connect_redis(f"redis://127.0.0.1:{cls.server_proc.port}/0", 200)
            http_server = make_server(RateLimitedApi(client, API_KEYS, config, fallback_clock=cls.clock))
            cls.ports[mode] = http_server.server_port
            threading.Thread(target=http_server.serve_forever, daemon=True).start()
            cls.addClassCleanup(http_server.server_close)
            cls.addClassCleanup(http_server.shutdown)

    def on(self, mode, key="sk-alice"):
        self.port = self.ports[mode]
        return self.get("/v1/items", key)

    def assert_unavailable(self, reply):
        self.assertEqual(reply.status, 503)
        self.assertEqual(reply.headers["Retry-After"], "5")
        self.assertEqual(reply.body, {"error": "rate_limiter_unavailable"})
        self.assertNotIn("RateLimit", reply.headers)

    def assert_fallback(self, reply, status, remaining, t):
        self.assertEqual(reply.status, status)
        self.assertEqual(reply.headers["RateLimit-Policy"], '"fallback";q=3;w=3600')
        self.assertEqual(reply.headers["RateLimit"], f'"fallback";r={remaining};t={t}')

    def test_fail_open_uses_a_local_share_and_fail_closed_answers_503(self):
        # Redis up: both modes decide with Redis.
        self.assertEqual(self.on("open").headers["RateLimit"], f'"key";r=2;t={ceil_s(T)}')
        self.assertEqual(self.on("closed", "sk-bob").headers["RateLimit"], f'"key";r=2;t={ceil_s(T)}')
        with self.assertLogs("ratelimited-service", "WARNING") as logs:
            self.redis_hangs_then_dies()
        self.assertIn("rate limiter unavailable (TimeoutError): failing closed", logs.output[0])
        self.assertIn("rate limiter unavailable (ConnectionError): failing open", logs.output[-1])

    def redis_hangs_then_dies(self):
        # Redis hangs: each request gives up after the 200 ms command timeout.
        self.server_proc.pause()
        self.assert_unavailable(self.on("closed"))
        # 3 per hour locally: one unit per 1200 s, so t is 1200 (the next
        # unit) whatever is left.
        self.assert_fallback(self.on("open"), 200, 2, 1200)

        # Redis is gone: connections are refused.
        self.server_proc.kill()
        self.assert_unavailable(self.on("closed"))
        self.assert_fallback(self.on("open"), 200, 1, 1200)
        self.assert_fallback(self.on("open", "sk-carol"), 200, 0, 1200)  # one bucket for the whole instance
        denied = self.on("open")
        self.assert_fallback(denied, 429, 0, 1200)
        self.assertEqual(denied.headers["Retry-After"], "1200")
        self.assertEqual(denied.body, {"error": "rate_limited", "limit": "fallback", "retry_after_s": 1200})

        # The local limit refills with time (its own monotonic clock).
        self.clock.advance_ms(1_199_999)
        self.assertEqual(self.on("open").headers["Retry-After"], "1")
        self.clock.advance_ms(1)
        self.assert_fallback(self.on("open"), 200, 0, 1200)

if __name__ == "__main__":
    unittest.main()
