"""The retry helper, deterministically: injected random source, sleep and clock."""

import unittest

from retry_client import Response, RetryBudget, RetryingClient, parse_retry_after


def reply(status, retry_after=None):
    return Response(status, {} if retry_after is None else {"retry-after": str(retry_after)}, b"")


class Script:
    """A fake `send` that plays back responses (the last one repeats)."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.responses[min(self.calls, len(self.responses)) - 1]


def client(send, rand_values=(0.5,), **kw):
    sleeps = []
    values = list(rand_values)
    c = RetryingClient(send, sleep=sleeps.append, rand=lambda: values.pop(0) if len(values) > 1 else values[0], **kw)
    return c, sleeps


class FullJitterTest(unittest.TestCase):
    def test_success_is_not_retried(self):
        send = Script(reply(200))
        c, sleeps = client(send)
        self.assertEqual(c.call().status, 200)
        self.assertEqual((send.calls, sleeps), (1, []))

    def test_retry_after_is_the_floor_and_full_jitter_is_added(self):
        # base 1 s, cap 4 s: the jitter bound doubles 1, 2, 4, then stays at the cap.
        send = Script(reply(429, 3), reply(429, 3), reply(429, 3), reply(200))
        c, sleeps = client(send, rand_values=(0.5, 0.5, 0.25), base_s=1.0, cap_s=4.0, max_retries=5)
        self.assertEqual(c.call().status, 200)
        self.assertEqual(sleeps, [3 + 0.5 * 1, 3 + 0.5 * 2, 3 + 0.25 * 4])
        self.assertEqual(send.calls, 4)

    def test_full_jitter_spans_zero_to_the_capped_exponential(self):
        # No Retry-After (a 503 from a proxy, say): pure full jitter.
        for rand, expected in ((0.0, [0, 0, 0, 0, 0]), (1.0, [1, 2, 4, 8, 8])):
            send = Script(reply(503))
            c, sleeps = client(send, rand_values=(rand,), base_s=1.0, cap_s=8.0, max_retries=5)
            self.assertEqual(c.call().status, 503)
            self.assertEqual(sleeps, expected)

    def test_at_most_max_retries_per_call(self):
        send = Script(reply(429, 1))
        c, sleeps = client(send, rand_values=(0.0,), max_retries=3)
        self.assertEqual(c.call().status, 429)
        self.assertEqual((send.calls, sleeps), (4, [1, 1, 1]))

    def test_a_retry_after_longer_than_max_wait_is_handed_back(self):
        send = Script(reply(429, 1200), reply(200))
        budget = RetryBudget()
        c, sleeps = client(send, max_wait_s=30, budget=budget)
        self.assertEqual(c.call().status, 429)
        self.assertEqual((send.calls, sleeps), (1, []))
        self.assertEqual(budget.available, 10)  # nothing spent on a retry that did not happen

    def test_other_statuses_are_not_retried(self):
        for status in (200, 400, 401, 404, 413, 500):
            send = Script(reply(status, 1))
            c, sleeps = client(send)
            self.assertEqual(c.call().status, status)
            self.assertEqual((send.calls, sleeps), (1, []), status)

    def test_http_date_retry_after(self):
        send = Script(reply(503, "Sun, 06 Nov 1994 08:49:42 GMT"), reply(200))
        c, sleeps = client(send, rand_values=(0.0,), now=lambda: 784111770.0)  # 12 s before that date
        self.assertEqual(c.call().status, 200)
        self.assertEqual(sleeps, [12.0])


class RetryBudgetTest(unittest.TestCase):
    def test_retries_stay_within_the_budget_across_calls(self):
        # The server refuses everything. Budget: 2 banked retries, 10% of calls.
        send = Script(reply(503))
        budget = RetryBudget(percent=10, burst=2)
        c, sleeps = client(send, rand_values=(0.0,), budget=budget, max_retries=3)
        c.call()  # spends both banked retries, then has none for the third
        self.assertEqual((send.calls, len(sleeps)), (3, 2))
        for _ in range(9):  # calls 2..10 earn 0.1 each, 0.9 in all: no retry
            c.call()
        self.assertEqual((send.calls, len(sleeps)), (12, 2))
        c.call()  # call 11 makes it exactly 1.0 (integers: no 0.99999...): one retry
        self.assertEqual((send.calls, len(sleeps)), (14, 3))
        for _ in range(89):
            c.call()
        # 100 calls: never more than the 2 banked retries plus 10% of the calls
        # (here one retry every 10 calls after the bank ran dry: 11 in all).
        self.assertEqual(len(sleeps), 11)
        self.assertLessEqual(len(sleeps), 2 + 100 // 10)

    def test_budget_is_capped(self):
        budget = RetryBudget(percent=50, burst=1)
        for _ in range(10):
            budget.on_call()
        self.assertTrue(budget.try_spend())
        self.assertFalse(budget.try_spend())


class ParseRetryAfterTest(unittest.TestCase):
    def test_forms(self):
        now = lambda: 784111770.0  # noqa: E731
        self.assertEqual(parse_retry_after("3", now), 3.0)
        self.assertEqual(parse_retry_after(" 120 ", now), 120.0)
        self.assertEqual(parse_retry_after("Sun, 06 Nov 1994 08:49:42 GMT", now), 12.0)
        self.assertEqual(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), 0.0)  # in the past
        self.assertIsNone(parse_retry_after(None, now))
        self.assertIsNone(parse_retry_after("soon", now))
        self.assertIsNone(parse_retry_after("-1", now))


if __name__ == "__main__":
    unittest.main()
