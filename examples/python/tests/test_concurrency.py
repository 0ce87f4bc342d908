"""POST /v1/chat's concurrency limits, over real HTTP against a real redis-server.

Two limits hold a slot while a model call runs, acquired in the same RL.ALL
as the rate limits: "concurrent", per API key (full: 429), and "upstream",
the tenant's share of the model upstream (full: 503). The rate limits are
per hour and large, so only the concurrency limits ever deny here.

The fake upstream does what the request's message says: "slow" waits until
the test opens the gate, "fail" raises, "timeout" raises TimeoutError,
anything else answers at once. Leases are on the server's real clock: what
depends on the instant is checked as a relation; the one wait (a crashed
holder's lease running out) is a lease of 1 s.
"""

import threading
import time
import unittest

import redis

from llm_gateway import Completion, LlmGateway, LlmLimits
from service import Config, Identity, RateLimitedApi, connect_redis, make_server
from tests.redis_server import LUA, RedisServer, calls, rl
from tests.test_service import HOUR, HttpCase, ceil_s, now_ms

K = 2  # calls in flight per API key
DEPENDENCY = 3  # calls in flight per tenant on the upstream
LEASE = 5_000  # ms; longer than the upstream timeout (2 s), as the gateway requires
LLM = LlmLimits(max_tokens_cap=100, requests_per_key=100, requests_period_ms=HOUR, tokens_per_key=10_000,
                tokens_period_ms=HOUR, tokens_per_day=100_000, upstream_timeout_s=2,
                concurrent_per_key=K, upstream_concurrency=DEPENDENCY, lease_ms=LEASE)

API_KEYS = {
    "sk-alice": Identity("k-alice", "alice", "acme"),
    "sk-bob": Identity("k-bob", "bob", "acme"),
    "sk-carol": Identity("k-carol", "carol", "globex"),
}
ALICE, BOB = "{tenant:acme}:llm:concurrent:k-alice", "{tenant:acme}:llm:concurrent:k-bob"
ACME_UPSTREAM = "{tenant:acme}:llm:upstream"
BOB_REQUESTS = "{tenant:acme}:llm:requests:k-bob"


class GatedUpstream:
    """A model whose calls do what their message says (see the module's docstring)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started = []  # the message of each call, in the order they came in
        self.gate = threading.Event()
        self.probe = None  # if set, run as each call starts; its results go to seen
        self.seen = []

    def __call__(self, body, max_tokens, timeout_s):
        what = body["messages"][0]["content"]
        with self.lock:
            self.started.append(what)
        if self.probe:
            self.seen.append(self.probe())
        if what == "fail":
            raise RuntimeError("connection reset")
        if what == "timeout":
            raise TimeoutError()
        if what == "slow" and not self.gate.wait(timeout=10):
            raise TimeoutError()  # the test broke: do not hang the server
        return Completion(10, {"answer": what})


class ConcurrencyTest(HttpCase):
    @classmethod
    def setUpClass(cls):
        cls.server_proc = RedisServer()
        cls.addClassCleanup(cls.server_proc.stop)
        cls.redis = redis.Redis(port=cls.server_proc.port, protocol=2, decode_responses=True)
        cls.addClassCleanup(cls.redis.close)
        cls.upstream = GatedUpstream()
        api = RateLimitedApi(connect_redis(f"redis://127.0.0.1:{cls.server_proc.port}/0", 2000), API_KEYS,
                             Config(fail_mode="closed", llm=LLM), upstream=cls.upstream)
        http_server = make_server(api)
        cls.port = http_server.server_port
        threading.Thread(target=http_server.serve_forever, daemon=True).start()
        cls.addClassCleanup(http_server.server_close)
        cls.addClassCleanup(http_server.shutdown)

    def setUp(self):
        self.redis.flushall()
        self.upstream.gate.clear()
        self.upstream.started.clear()
        self.upstream.probe = None
        self.upstream.seen.clear()
        self.threads = []
        self.addCleanup(self.finish)  # no handler left waiting, to write into the next test

    def chat(self, key, what="fast"):
        return self.send("POST", "/v1/chat", key, body={"max_tokens": 10, "messages": [{"content": what}]})

    def in_background(self, key, what="slow"):
        """Sends a chat on its own thread; the reply is in the returned list once it came."""
        box = []
        thread = threading.Thread(target=lambda: box.append(self.chat(key, what)), daemon=True)
        thread.start()
        self.threads.append(thread)
        return box

    def wait_until(self, condition, what):
        deadline = time.monotonic() + 5
        while not condition():
            self.assertLess(time.monotonic(), deadline, f"timed out waiting for {what}")
            time.sleep(0.005)  # polling for the handlers, not waiting out a limit

    def finish(self):
        self.upstream.gate.set()
        for thread in self.threads:
            thread.join(timeout=10)

    def peek(self, key, limit, cost=0):
        """RL.PEEK CONCURRENCY: COST 0 reads the state as it is; COST 1 answers what an acquire would."""
        return rl(self.redis, "RL.PEEK", "CONCURRENCY", key, limit, LEASE, "COST", cost)

    def assert_released(self, *keys):
        # Ending the last live lease deletes the key (SPEC: RL.RELEASE).
        self.assertEqual(self.redis.exists(*keys), 0)

    def assert_concurrency_denied(self, reply, status, error, limit, t0):
        """Retry-After is when the oldest lease (taken at or after t0) expires if never released."""
        self.assertEqual(reply.status, status)
        retry = int(reply.headers["Retry-After"])
        self.assertTrue(ceil_s(LEASE - (reply.after - t0)) <= retry <= ceil_s(LEASE), (retry, reply.after - t0))
        self.assertEqual(reply.body, {"error": error, "limit": limit, "retry_after_s": retry})
        # The RateLimit fields are about the rate limits; a slot is not a quota.
        self.assertNotIn("RateLimit", reply.headers)

    def test_of_n_concurrent_slow_calls_exactly_k_run_and_the_rest_get_429(self):
        t0 = now_ms()
        boxes = [self.in_background("sk-alice") for _ in range(5)]
        self.wait_until(lambda: sum(map(len, boxes)) == 3 and len(self.upstream.started) == 2, "3 refusals, 2 calls")
        refused = [box[0] for box in boxes if box]
        for reply in refused:
            self.assert_concurrency_denied(reply, 429, "too_many_concurrent_requests", "concurrent", t0)
        # While the two run: alice's limit is full, the tenant's upstream holds 2 of 3.
        allowed, limit, remaining, retry_ms, reset_ms, lease = self.peek(ALICE, K, cost=1)
        self.assertEqual((allowed, limit, remaining, lease), (0, K, 0, None))
        self.assertTrue(0 < retry_ms <= LEASE and retry_ms <= reset_ms <= LEASE, (retry_ms, reset_ms))
        self.assertEqual(self.peek(ACME_UPSTREAM, DEPENDENCY)[:3], [1, DEPENDENCY, 1])
        self.finish()
        served = [box[0] for box in boxes if box[0] not in refused]
        self.assertEqual([r.status for r in served], [200, 200])
        self.assertEqual(len(self.upstream.started), 2)  # the refused never reached the model
        self.assert_released(ALICE, ACME_UPSTREAM)
        self.assertEqual(self.chat("sk-alice").status, 200)  # and the slots are there again

    def test_a_full_upstream_is_503_and_another_tenant_is_not_affected(self):
        t0 = now_ms()
        boxes = [self.in_background("sk-alice"), self.in_background("sk-alice"), self.in_background("sk-bob")]
        self.wait_until(lambda: len(self.upstream.started) == 3, "3 slow calls")
        # Bob has 1 of his 2 slots left, but acme's upstream holds 3 of 3.
        shed = self.chat("sk-bob")
        self.assert_concurrency_denied(shed, 503, "upstream_busy", "upstream", t0)
        # Alice is at her own cap and the upstream is full: both deny. Her
        # leases are among the upstream's, so her wait is the longer one or
        # a tie, and a tie goes to the first in key order, hers: 429.
        capped = self.chat("sk-alice")
        self.assert_concurrency_denied(capped, 429, "too_many_concurrent_requests", "concurrent", t0)
        self.assertEqual(self.chat("sk-carol").status, 200)  # globex's upstream share is its own
        # All or nothing: bob's refused call took no request unit (1 of 100 spent).
        self.assertEqual(rl(self.redis, "RL.PEEK", "GCRA", BOB_REQUESTS, 100, HOUR, "COST", 0)[2], 99)
        self.finish()
        self.assertEqual([box[0].status for box in boxes], [200, 200, 200])
        self.assert_released(ALICE, BOB, ACME_UPSTREAM)
        self.assertEqual(self.chat("sk-bob").status, 200)

    def test_the_leases_are_released_after_an_answer_a_failure_and_a_timeout(self):
        # While each call runs it holds one of alice's slots and one of the upstream's.
        self.upstream.probe = lambda: (self.peek(ALICE, K)[2], self.peek(ACME_UPSTREAM, DEPENDENCY)[2])
        with self.assertLogs("ratelimited-service", "WARNING") as logs:
            # K = 2: a third call in a row would be refused if a lease had leaked.
            for what, status in (("fast", 200), ("fail", 502), ("timeout", 504), ("fast", 200)):
                reply = self.chat("sk-alice", what)
                self.assertEqual(reply.status, status, what)
                self.assert_released(ALICE, ACME_UPSTREAM)
                self.assertEqual(self.peek(ALICE, K), [1, K, K, 0, 0, None])
        self.assertEqual(logs.output, ["WARNING:ratelimited-service:upstream failed (RuntimeError)",
                                       "WARNING:ratelimited-service:upstream timed out after 2s"])
        self.assertEqual(self.upstream.seen, [(K - 1, DEPENDENCY - 1)] * 4)

    def test_a_release_that_finds_the_lease_gone_is_logged_and_not_retried(self):
        self.redis.config_resetstat()
        box = self.in_background("sk-alice")
        self.wait_until(lambda: len(self.upstream.started) == 1, "the slow call")
        self.redis.delete(ALICE)  # the lease ended while the call ran, as if it had outlived lease_ms
        with self.assertLogs("ratelimited-service", "WARNING") as logs:
            self.finish()
        self.assertEqual(box[0].status, 200)  # the answer stands
        self.assertEqual(len(logs.output), 1, logs.output)
        self.assertIn("the concurrent lease had ended before its release", logs.output[0])
        self.assertIn("not retried", logs.output[0])
        # One RL.RELEASE per lease, no second try; the upstream's lease was released.
        # (Lua backend: one FCALL rl_all acquired, two FCALL rl_release; no settle, it used max_tokens)
        n, lua_n = calls(self.redis, "RL.RELEASE", 1 + 2)
        self.assertEqual(n, lua_n if LUA else 2)
        self.assert_released(ALICE, ACME_UPSTREAM)

    def test_a_release_that_fails_is_logged_and_the_answer_stands(self):
        box = self.in_background("sk-alice")
        self.wait_until(lambda: len(self.upstream.started) == 1, "the slow call")
        # RL.RELEASE on alice's key will fail (WRONGTYPE), a stand-in for any error.
        self.redis.delete(ALICE)
        self.redis.set(ALICE, "not a lease set")
        with self.assertLogs("ratelimited-service", "ERROR") as logs:
            self.finish()
        self.assertEqual(box[0].status, 200)
        self.assertEqual(len(logs.output), 1, logs.output)
        self.assertIn("releasing the concurrency leases failed (ResponseError); not retried", logs.output[0])
        self.assert_released(ACME_UPSTREAM)  # the other release, in the same pipeline, went through

    def test_a_crashed_holders_slots_come_back_at_their_deadline(self):
        # A gateway that died mid-call: it held both of alice's slots, one
        # lease of 2 units (one deadline), and never released them; its lease
        # was 1 s.
        rl(self.redis, "RL.ACQUIRE", ALICE, K, 1_000, "COST", K)
        refused = self.chat("sk-alice")
        self.assertEqual((refused.status, refused.headers["Retry-After"]), (429, "1"))  # ceil(<= 1000 ms)
        allowed, _, remaining, retry_ms, reset_ms, _ = self.peek(ALICE, K, cost=1)
        self.assertEqual((allowed, remaining), (0, 0))
        self.assertTrue(0 < retry_ms <= reset_ms <= 1_000, (retry_ms, reset_ms))
        self.assertGreater(self.redis.pttl(ALICE), 0)  # the key expires by itself, too
        time.sleep(retry_ms / 1000)  # the server's clock is this machine's: at least retry_ms pass
        self.assertEqual(self.chat("sk-alice").status, 200)
        # That call dropped the expired lease and released its own: the key is gone.
        self.assert_released(ALICE, ACME_UPSTREAM)


class LeaseConfigTest(unittest.TestCase):
    def test_a_lease_no_longer_than_the_upstream_timeout_is_refused(self):
        for lease_ms in (1_000, 2_000):
            with self.assertRaises(ValueError):
                LlmGateway(None, LlmLimits(upstream_timeout_s=2, lease_ms=lease_ms), lambda *a: None)
        LlmGateway(None, LlmLimits(upstream_timeout_s=2, lease_ms=2_001), lambda *a: None)


if __name__ == "__main__":
    unittest.main()
