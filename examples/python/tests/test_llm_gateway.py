"""POST /v1/chat, the LLM gateway, over real HTTP against a real redis-server.

The upstream is a fake that reports the usage a test gives it, or fails, or
times out. Token and request limits are per hour, so nothing refills during
a run; the daily quota runs to the tenant's local midnight on the server's
real clock, so what depends on the instant is checked as a relation (the
server decided between the wall-clock readings before and after a request).
"""

import threading
import unittest

import redis

from llm_gateway import Completion, LlmLimits
from service import Config, Identity, RateLimitedApi, connect_redis, make_server
from tests.redis_server import LUA, RedisServer, calls, rl
from tests.test_service import HOUR, HttpCase, ceil_s, now_ms, values_between

LLM = LlmLimits(max_tokens_cap=2000, requests_per_key=10, requests_period_ms=HOUR,
                tokens_per_key=1000, tokens_period_ms=HOUR, tokens_per_day=1500, upstream_timeout_s=5)
U = HOUR // 1000  # the tokens GCRA gives one token back every U ms (3.6 s)
DAY_MS = 86_400_000
# Asia/Kolkata has been UTC+05:30 all year since 1945: its midnights are the
# instants t with (t + 5.5 h) % 24 h == 0, with no time zone database here.
ZONE, ZONE_OFFSET_MS = "Asia/Kolkata", 19_800_000
POLICY = '"requests";q=10;w=3600, "tokens";q=1000;qu="tokens";w=3600, "daily-tokens";q=1500;qu="tokens";w=86400'

API_KEYS = {
    "sk-alice": Identity("k-alice", "alice", "acme", ZONE),
    "sk-bob": Identity("k-bob", "bob", "acme", ZONE),
    "sk-carol": Identity("k-carol", "carol", "globex", "America/New_York"),
}
REQUESTS, TOKENS, DAILY = "{tenant:acme}:llm:requests:k-alice", "{tenant:acme}:llm:tokens:k-alice", "{tenant:acme}:llm:daily-tokens"
SPEC = {"requests": ("GCRA", 10, HOUR), "tokens": ("GCRA", 1000, HOUR), "daily": ("QUOTA", 1500, "DAY", "TZ", ZONE)}


class FakeUpstream:
    """Answers each call with the next scripted step: a used_tokens count, an
    exception to raise, or a function run first (it may touch Redis) that
    returns the count."""

    def __init__(self):
        self.steps = []
        self.calls = []

    def __call__(self, body, max_tokens, timeout_s):
        self.calls.append((body, max_tokens, timeout_s))
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        used = step() if callable(step) else step
        return Completion(used, {"answer": "fake", "used_tokens": used})


class LlmGatewayTest(HttpCase):
    @classmethod
    def setUpClass(cls):
        cls.server_proc = RedisServer()
        cls.addClassCleanup(cls.server_proc.stop)
        cls.redis = redis.Redis(port=cls.server_proc.port, protocol=2, decode_responses=True)
        cls.addClassCleanup(cls.redis.close)
        cls.upstream = FakeUpstream()
        api = RateLimitedApi(connect_redis(f"redis://127.0.0.1:{cls.server_proc.port}/0", 2000), API_KEYS,
                             Config(fail_mode="closed", llm=LLM), upstream=cls.upstream)
        http_server = make_server(api)
        cls.port = http_server.server_port
        threading.Thread(target=http_server.serve_forever, daemon=True).start()
        cls.addClassCleanup(http_server.server_close)
        cls.addClassCleanup(http_server.shutdown)

    def setUp(self):
        self.redis.flushall()
        self.upstream.steps.clear()
        self.upstream.calls.clear()

    def chat(self, key, max_tokens, *steps):
        self.upstream.steps.extend(steps)
        return self.send("POST", "/v1/chat", key, body={"max_tokens": max_tokens, "messages": [{"content": "hi"}]})

    def peek(self, *pairs):
        """Each (key, spec) read at one server instant (one RL.ALL ... PEEK with COST 0)."""
        keys = [k for k, _ in pairs]
        args = [a for _, spec in pairs for a in (*spec, "COST", 0)]
        _, _, *replies = rl(self.redis, "RL.ALL", len(keys), *keys, *args, "PEEK")
        return replies

    def midnight_after(self, t_ms):
        """The first local midnight in ZONE after t_ms (epoch ms)."""
        return t_ms + DAY_MS - (t_ms + ZONE_OFFSET_MS) % DAY_MS

    def test_reserve_then_settle_leaves_the_state_of_consuming_what_was_used(self):
        reply = self.chat("sk-alice", 800, 312)
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.body, {"answer": "fake", "used_tokens": 312})
        self.assertEqual(self.upstream.calls[0][1:], (800, 5))
        # Fresh keys that consume 312 tokens now, after the fact.
        rl(self.redis, "RL.GCRA", "{tenant:acme}:fresh-tokens", 1000, HOUR, "COST", 312)
        rl(self.redis, "RL.QUOTA", "{tenant:acme}:fresh-daily", 1500, "DAY", "TZ", ZONE, "COST", 312)
        fresh_at = now_ms()
        tokens, fresh_tokens, daily, fresh_daily, requests = self.peek(
            (TOKENS, SPEC["tokens"]), ("{tenant:acme}:fresh-tokens", SPEC["tokens"]),
            (DAILY, SPEC["daily"]), ("{tenant:acme}:fresh-daily", SPEC["daily"]), (REQUESTS, SPEC["requests"]))
        # The replies were read after this: time runs on between fresh_at and the peek.
        peeked_at = now_ms()
        # The daily quota: one count in one window; every field equal.
        self.assertEqual(daily, fresh_daily)
        self.assertEqual(daily[:4], [1, 1500, 1188, 0])
        # The tokens GCRA: as if 312 had been consumed at the reservation. The
        # fresh key consumed them later, so it is full later by exactly the
        # time between the two, which the wall clock brackets.
        self.assertEqual(tokens[:4], fresh_tokens[:4])
        self.assertEqual(tokens[:4], [1, 1000, 688, 0])
        self.assertTrue(0 <= fresh_tokens[4] - tokens[4] <= fresh_at - reply.before, (tokens, fresh_tokens))
        self.assertTrue(312 * U - (peeked_at - reply.before) <= tokens[4] <= 312 * U, tokens)
        # PTTL is reset_after_ms (SPEC), so the key expires when full.
        self.assertAlmostEqual(self.redis.pttl(TOKENS), tokens[4], delta=now_ms() - reply.before + 5)
        # The request unit is spent.
        self.assertEqual(requests[:3], [1, 10, 9])
        # RateLimit: "tokens" admits no more requests of 800 (688 // 800 = 0);
        # its next token comes one U after the reservation (draft 4.1.2: t is
        # the time within which no more than r can be used).
        self.assert_ratelimit(reply, "tokens", 688, values_between(lambda d: ceil_s(U - d), 0, reply.after - reply.before),
                              policy=POLICY)
        self.assertNotIn("Retry-After", reply.headers)

    def test_a_failed_or_timed_out_call_refunds_every_token_and_keeps_the_request(self):
        with self.assertLogs("ratelimited-service", "WARNING") as logs:
            failed = self.chat("sk-alice", 800, RuntimeError("connection reset"))
            timed_out = self.chat("sk-alice", 800, TimeoutError())
        self.assertEqual(logs.output, ["WARNING:ratelimited-service:upstream failed (RuntimeError)",
                                       "WARNING:ratelimited-service:upstream timed out after 5s"])
        self.assertEqual((failed.status, failed.body), (502, {"error": "upstream_failed"}))
        self.assertEqual((timed_out.status, timed_out.body), (504, {"error": "upstream_timeout"}))
        # Refunding all of a reservation made from idle leaves the limits
        # full, so their keys are gone; the requests limit keeps both units.
        self.assertEqual(self.redis.keys("*"), [REQUESTS])
        (requests,) = self.peek((REQUESTS, SPEC["requests"]))
        self.assertEqual(requests[:3], [1, 10, 8])
        # Both token limits are full (1000 // 800 and 1500 // 800 are 1, the
        # requests limit 8): a tie, which the first token limit wins, full.
        self.assert_ratelimit(timed_out, "tokens", 1000, {0}, policy=POLICY)

    def test_the_tokens_limit_denies_with_the_exact_retry_after(self):
        first = self.chat("sk-alice", 800, 700)
        self.assertEqual(first.status, 200)
        denied = self.chat("sk-alice", 500)  # 300 tokens left, 500 asked for
        # The GCRA holds 700 tokens from the first call; 500 fit once 200
        # have come back: 200 U after the first call.
        self.assertIn(int(denied.headers["Retry-After"]),
                      values_between(lambda d: ceil_s(200 * U - d), max(0, denied.before - first.after),
                                     denied.after - first.before))
        self.assert_refused(denied, "tokens", 300, policy=POLICY)
        self.assertEqual(denied.body, {"error": "rate_limited", "limit": "tokens",
                                       "retry_after_s": int(denied.headers["Retry-After"])})
        # Not called, nothing taken (all or nothing): still 1 request and 700 tokens.
        self.assertEqual(len(self.upstream.calls), 1)
        requests, daily = self.peek((REQUESTS, SPEC["requests"]), (DAILY, SPEC["daily"]))
        self.assertEqual((requests[2], daily[2]), (9, 800))

    def test_the_daily_quota_denies_until_the_tenants_local_midnight(self):
        self.assertEqual(self.chat("sk-alice", 1000, 1000).status, 200)
        # Bob's own tokens limit is fresh, but his tenant has 500 tokens left today.
        denied = self.chat("sk-bob", 600)
        self.assert_refused(denied, "daily-tokens", 500, policy=POLICY)
        self.assertEqual(denied.body["limit"], "daily-tokens")
        # RL.QUOTA's window ends, and its key expires, at the next midnight in
        # Asia/Kolkata after the request; Retry-After runs to it.
        end = self.redis.execute_command("PEXPIRETIME", DAILY)
        self.assertEqual(end, self.midnight_after(denied.before))
        self.assertEqual(end, self.midnight_after(denied.after))
        self.assertIn(int(denied.headers["Retry-After"]), values_between(lambda t: ceil_s(end - t), denied.before, denied.after))
        # Another tenant, in another zone, is not affected.
        self.assertEqual(self.chat("sk-carol", 600, 600).status, 200)

    def test_a_refund_fills_a_limit_to_full_and_no_further(self):
        def stray_refund():
            # Someone else gives 700 of the 800 back while the call runs (a
            # refund retried blindly would do this): 100 stay reserved.
            rl(self.redis, "RL.GCRA", TOKENS, 1000, HOUR, "REFUND", 700)
            return 312

        reply = self.chat("sk-alice", 800, stray_refund)
        self.assertEqual(reply.status, 200)
        # The settle refunds 488 of the 100 left: full, not 388 above it.
        self.assertEqual(self.redis.exists(TOKENS), 0)
        tokens, daily = self.peek((TOKENS, SPEC["tokens"]), (DAILY, SPEC["daily"]))
        self.assertEqual(tokens, [1, 1000, 1000, 0, 0])
        self.assertEqual(daily[:4], [1, 1500, 1188, 0])
        # Now the daily quota is the most restrictive (1188 // 800 = 1, as the
        # tokens' 1000 // 800, but it is full later); t runs to midnight.
        self.assert_ratelimit(reply, "daily-tokens", 1188,
                              values_between(lambda t: ceil_s(self.midnight_after(t) - t), reply.before, reply.after),
                              policy=POLICY)

    def test_an_overshoot_is_charged_as_far_as_each_limit_has_room(self):
        with self.assertLogs("ratelimited-service", "WARNING"):
            self.assertEqual(self.chat("sk-alice", 800, 900).status, 200)  # 100 more than asked for
        tokens, daily = self.peek((TOKENS, SPEC["tokens"]), (DAILY, SPEC["daily"]))
        self.assertEqual((tokens[2], daily[2]), (100, 600))  # 900 charged on both
        # Bob reserves 500 (the tenant then has 100 left today) and uses 1000:
        # his tokens limit has room for the 500 more, the daily quota for 100
        # only, so it takes those 100 and is empty.
        with self.assertLogs("ratelimited-service", "WARNING"):
            self.assertEqual(self.chat("sk-bob", 500, 1000).status, 200)
        bob, daily = self.peek(("{tenant:acme}:llm:tokens:k-bob", SPEC["tokens"]), (DAILY, SPEC["daily"]))
        self.assertEqual((bob[2], daily[2]), (0, 0))
        self.assertEqual(self.chat("sk-carol", 1, 1).status, 200)  # another tenant: unaffected

    def test_a_failed_settle_is_not_retried_and_the_tokens_stay_charged(self):
        def break_the_daily_key():
            # The settle call will fail (WRONGTYPE): a stand-in for any error,
            # a timeout included, after which the refund may or may not have
            # been applied.
            self.redis.delete(DAILY)
            self.redis.set(DAILY, "not a limiter")
            return 312

        self.redis.config_resetstat()
        with self.assertLogs("ratelimited-service", "ERROR") as logs:
            reply = self.chat("sk-alice", 800, break_the_daily_key)
        self.assertEqual(reply.status, 200)  # the answer was served: it stands
        self.assertIn("settling 488 tokens failed (ResponseError); not retried", logs.output[0])
        # One RL.ALL reserved, one tried to settle: no second attempt.
        # (Lua backend: FCALL rl_all to reserve, two FCALL rl_release, one FCALL rl_all to settle)
        n, lua_n = calls(self.redis, "RL.ALL", 1 + 2 + 1)
        self.assertEqual(n, lua_n if LUA else 2)
        (tokens,) = self.peek((TOKENS, SPEC["tokens"]))
        self.assertEqual(tokens[2], 200)  # all 800 still charged: stricter, never looser

    def test_a_reservation_no_limit_can_ever_allow_is_413(self):
        # 1200 is within the cap (2000) but more than the tokens limit holds.
        reply = self.chat("sk-alice", 1200)
        self.assertEqual(reply.status, 413)
        self.assertEqual(reply.body, {"error": "request_too_large", "limit": "tokens"})
        self.assertNotIn("Retry-After", reply.headers)
        self.assert_ratelimit(reply, "tokens", 1000, {0}, policy=POLICY)
        self.assertEqual((self.upstream.calls, self.redis.dbsize()), ([], 0))

    def test_max_tokens_is_validated_before_anything_is_reserved(self):
        for body in ({}, {"max_tokens": 0}, {"max_tokens": -1}, {"max_tokens": 2001}, {"max_tokens": "10"},
                     {"max_tokens": 10.5}, {"max_tokens": True}, {"max_tokens": None}, [800], "800"):
            reply = self.send("POST", "/v1/chat", "sk-alice", body=body)
            self.assertEqual(reply.status, 400, body)
            self.assertEqual(reply.body["error"], "bad_request")
            self.assertNotIn("RateLimit", reply.headers)
        self.assertEqual(self.send("POST", "/v1/chat", "sk-mallory", body={"max_tokens": 1}).status, 401)
        self.assertEqual((self.upstream.calls, self.redis.dbsize()), ([], 0))



class LlmGatewayWithoutRedisTest(HttpCase):
    """Redis is gone: the route follows the service's fail mode."""

    @classmethod
    def setUpClass(cls):
        server_proc = RedisServer()
        cls.addClassCleanup(server_proc.stop)
        cls.upstream = FakeUpstream()
        cls.ports = {}
        for mode in ("open", "closed"):
            config = Config(fail_mode=mode, instances=1, global_limit=2, global_period_ms=HOUR, llm=LLM)
            client = connect_redis(f"redis://127.0.0.1:{server_proc.port}/0", 200)
            http_server = make_server(RateLimitedApi(client, API_KEYS, config, upstream=cls.upstream))
            cls.ports[mode] = http_server.server_port
            threading.Thread(target=http_server.serve_forever, daemon=True).start()
            cls.addClassCleanup(http_server.server_close)
            cls.addClassCleanup(http_server.shutdown)
        server_proc.kill()

    def test_fail_open_serves_through_the_local_limit_and_fail_closed_answers_503(self):
        with self.assertLogs("ratelimited-service", "WARNING"):
            self.port = self.ports["closed"]
            closed = self.chat("sk-alice", 800)
            self.port = self.ports["open"]
            served = self.chat("sk-alice", 800, 312)
        self.assertEqual((closed.status, closed.body), (503, {"error": "rate_limiter_unavailable"}))
        # Served with no token accounting (nothing reserved, nothing to
        # settle), counted as one request by the local limit of 2 an hour.
        self.assertEqual((served.status, served.body), (200, {"answer": "fake", "used_tokens": 312}))
        self.assertEqual(served.headers["RateLimit-Policy"], '"fallback";q=2;w=3600')
        self.assertEqual(served.headers["RateLimit"], '"fallback";r=1;t=1800')
        self.assertEqual(len(self.upstream.calls), 1)

    chat = LlmGatewayTest.chat


if __name__ == "__main__":
    unittest.main()
