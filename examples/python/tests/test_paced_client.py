"""The paced outgoing client: twelve workers, a partner that answers 429 beyond 100 calls in any window.

The partner's window is scaled down from a minute to 2 s, so 120 calls must
span more than one window (about 3 s at our 80% share); real time, since the
partner keeps its own clock. Every wait is bounded: each worker's pace() has
max_wait_ms, and the run's threads are joined with the whole run bounded.
"""

import os
import threading
import time
import unittest

import redis

from paced_client import PacedPartnerClient, PartnerApi, partner_limit, run_workers
from redis_rl import Limiter, NotSupportedError
from tests.redis_server import LUA, RedisServer

PARTNER_CALLS = 100
WINDOW_S = 2.0
WORKERS, PER_WORKER = 12, 10  # 120 calls: more than one window's worth


class PacedClientTest(unittest.TestCase):
    def setUp(self):
        self.redis_server = RedisServer()
        self.addCleanup(self.redis_server.stop)
        self.client = redis.Redis(port=self.redis_server.port)
        self.addCleanup(self.client.close)
        self.partner = PartnerApi(PARTNER_CALLS, WINDOW_S).start()
        self.addCleanup(self.partner.stop)
        # background work: a slow answer (a loaded test machine) is waited for, not failed
        self.limiter = Limiter(self.client, backend=os.environ.get("RL_BACKEND", "auto"), timeout_ms=2000)
        self.paced = PacedPartnerClient(self.limiter, self.partner.url,
                                        partner_limit(PARTNER_CALLS, int(WINDOW_S * 1000)), max_wait_ms=10_000)

    def run_bounded(self, **kw):
        out = {}
        t = threading.Thread(target=lambda: out.update(statuses=run_workers(self.paced, **kw)), daemon=True)
        start = time.monotonic()
        t.start()
        t.join(timeout=30)
        self.assertFalse(t.is_alive(), "the workers did not finish within 30 s")
        return out["statuses"], time.monotonic() - start

    @unittest.skipIf(LUA, "pace() books with MAXWAIT, which the Lua library does not have")
    def test_twelve_paced_workers_get_no_429(self):
        statuses, took = self.run_bounded(workers=WORKERS, calls_per_worker=PER_WORKER)
        self.assertEqual(len(statuses), WORKERS * PER_WORKER)  # every call was made...
        self.assertEqual(statuses.count(429), 0)  # ...and none refused
        self.assertEqual((self.partner.ok, self.partner.rejected), (WORKERS * PER_WORKER, 0))
        self.assertLessEqual(self.partner.busiest_window(), PARTNER_CALLS)
        # 80 per 2 s, evenly spaced: 120 starts take 119 intervals of 25 ms
        self.assertGreaterEqual(took, 119 * WINDOW_S / 80 - 0.05)

    def test_without_pacing_the_partner_refuses(self):
        # the control: the same workers, no turns; the partner's limit is real
        statuses, _ = self.run_bounded(workers=WORKERS, calls_per_worker=PER_WORKER, paced=False)
        self.assertEqual(len(statuses), WORKERS * PER_WORKER)
        self.assertGreater(statuses.count(429), 0)
        self.assertEqual(self.partner.rejected, statuses.count(429))

    @unittest.skipIf(LUA, "pace() books with MAXWAIT, which the Lua library does not have")
    def test_stopped_workers_give_their_turns_back(self):
        stop = threading.Event()
        threading.Timer(0.5, stop.set).start()
        statuses, took = self.run_bounded(workers=WORKERS, calls_per_worker=PER_WORKER, stop=stop)
        self.assertLess(took, 2.5)  # stopped at 0.5 s, not after all 120 turns
        self.assertEqual(statuses.count(429), 0)
        self.assertLess(len(statuses), WORKERS * PER_WORKER)
        # each stopped worker refunded its booked turn: the next caller waits only for the turns
        # that were used (their count since the last start), never for the given-back ones
        d = self.limiter.peek(self.paced.limit, self.paced.account, max_wait_ms=10_000)
        self.assertLessEqual(d.wait_ms, 25 + 5)

    @unittest.skipUnless(LUA, "on the Lua library only")
    def test_lua_library_says_pace_is_not_available(self):
        with self.assertRaises(NotSupportedError):
            self.paced.get("/v1/orders")
        self.assertEqual(self.partner.ok + self.partner.rejected, 0)


if __name__ == "__main__":
    unittest.main()
