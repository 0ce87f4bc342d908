"""lease_core: the one implementation of Lease/AsyncLease and Reservation/AsyncReservation
bookkeeping, without a server. The twins are driven through the same scripts of replies on a
scripted client and must send the same commands and end in the same state; the shared rules
(deadlines, what a reply means, settle's arithmetic) are pinned on their own."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, List, Optional, Tuple

import pytest

from redis_rl import AsyncLimiter, Concurrency, Durable, Gcra, Limiter
from redis_rl.aio import AsyncLease, AsyncReservation
from redis_rl.decision import SOURCE_FAIL_OPEN, SOURCE_LOCAL, SOURCE_REDIS, Decision
from redis_rl.errors import NotDurableError
from redis_rl.lease_core import LOST_DEADLINE, LeaseCore, ReservationCore
from redis_rl.limiter import Lease, Reservation

C = Concurrency(2, 1_000, name="c")
G = Gcra(10, 1_000, name="g")
KEY = "rl:c:u"


class Scripted:
    """A client that answers each command with the next scripted reply (an exception is raised)."""

    def __init__(self, replies: List[Any]) -> None:
        self.replies = list(replies)
        self.sent: List[Tuple[Any, ...]] = []

    def execute_command(self, *args: Any, **kw: Any) -> Any:
        self.sent.append(args)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


class AsyncScripted(Scripted):
    async def execute_command(self, *args: Any, **kw: Any) -> Any:  # type: ignore[override]
        return Scripted.execute_command(self, *args)


def decision(rule: Any, source: str = SOURCE_REDIS, allowed: bool = True, cost: int = 1) -> Decision:
    return Decision(allowed, 2, 1, 0, 1_000, "id-1" if rule is C else None, name=rule.name, key=KEY, rule=rule,
                    cost=cost, source=source)


def state(lease: LeaseCore) -> Tuple[Any, ...]:
    return (lease.lost, lease.released, lease.in_doubt, type(lease.error).__name__ if lease.error else None)


def run_lease(script: List[Any], steps: List[Tuple[str, Any]], sent: Optional[float] = None) -> List[Any]:
    """The same steps on a Lease and an AsyncLease, each on its own scripted client: returns, for
    each, [(step, result or exception name, state), ...], the commands sent and on_lost's calls."""
    out = []
    for twin in ("sync", "async"):
        lost: List[str] = []
        if twin == "sync":
            client: Scripted = Scripted(script)
            lim: Any = Limiter(client, timeout_ms=None, backend="module")
            lease: LeaseCore = Lease(lim, C, KEY, decision(C), "id-1", sent=sent)
        else:
            client = AsyncScripted(script)
            lim = AsyncLimiter(client, timeout_ms=None, backend="module")
            lease = AsyncLease(lim, C, KEY, decision(C), "id-1", sent=sent)
        lease.on_lost = lambda le: lost.append(twin)
        seen = []
        for name, arg in steps:
            call = getattr(lease, name)
            try:
                got = call() if arg is None else call(arg)
                if asyncio.iscoroutine(got):
                    got = asyncio.run(got)
            except Exception as exc:
                got = type(exc).__name__
            seen.append((name, got, state(lease)))
        out.append((seen, client.sent, len(lost)))
    assert out[0] == out[1], f"Lease and AsyncLease differ:\n{out[0]}\n{out[1]}"
    return out[0]


def test_twins_renew_then_release() -> None:
    seen, sent, lost = run_lease([1, 1], [("renew", None), ("release", None), ("release", None), ("renew", None)])
    assert [s[1] for s in seen] == [True, True, False, True]
    assert sent == [("RL.RENEW", KEY, "id-1", 1_000), ("RL.RELEASE", KEY, "id-1")]
    assert seen[-1][2] == (False, True, False, None) and lost == 0


def test_twins_renew_answering_0_is_lost_once() -> None:
    seen, sent, lost = run_lease([0, 0], [("renew", 500), ("renew", None), ("release", None)])
    # the lost lease sends no second renewal; its release is still sent (and finds it gone)
    assert [s[1] for s in seen] == [False, False, False]
    assert sent == [("RL.RENEW", KEY, "id-1", 500), ("RL.RELEASE", KEY, "id-1")]
    assert seen[-1][2] == (True, True, False, None) and lost == 1


def test_twins_failed_renewal_is_in_doubt_until_one_confirms() -> None:
    seen, sent, lost = run_lease([ConnectionError("down"), 1], [("renew", None), ("renew", None)])
    assert seen[0][1] == "ConnectionError" and seen[0][2] == (False, False, True, None)
    assert seen[1][1] is True and seen[1][2] == (False, False, False, None) and lost == 0


def test_twins_failed_release_is_kept_and_not_retried() -> None:
    seen, sent, lost = run_lease([ConnectionError("down")], [("release", None), ("release", None)])
    assert [s[1] for s in seen] == [False, False] and len(sent) == 1
    assert seen[0][2] == (False, True, False, "ConnectionError") and lost == 0


def test_twins_release_of_an_expired_lease_is_lost() -> None:
    seen, sent, lost = run_lease([0], [("release", None)])
    assert seen[0][1] is False and seen[0][2] == (True, True, False, None) and lost == 1


def test_twins_past_the_deadline_send_no_renewal() -> None:
    seen, sent, lost = run_lease([], [("renew", None)], sent=time.monotonic() - 5)
    assert seen[0][1] is False and sent == [] and lost == 1


def test_twins_a_late_grant_after_a_wait_is_confirmed_once() -> None:
    # sent 0.5 s ago with a 1 s lease: under 90% left, one RL.RENEW from now
    seen, sent, lost = run_lease([1], [("_after_wait", None)], sent=time.monotonic() - 0.5)
    assert sent == [("RL.RENEW", KEY, "id-1", 1_000)] and seen[0][2] == (False, False, False, None)
    seen, sent, lost = run_lease([], [("_after_wait", None)])
    assert sent == []
    seen, sent, lost = run_lease([ConnectionError("down")], [("_after_wait", None)], sent=time.monotonic() - 0.5)
    assert seen[0][1] is None and seen[0][2][2] is True  # logged, not raised; in doubt


def test_valid_until_never_moves_back_and_renewal_clears_doubt() -> None:
    lease = LeaseCore(None, C, KEY, decision(C), "id-1", sent=100.0)
    lease._doubt = True
    assert lease._renewed(True, 500, 100.2) and lease.valid_until == 101.0 and not lease._doubt
    assert lease._renewed(True, 1_000, 100.5) and lease.valid_until == 101.5


def test_renew_request_checks_before_any_io(caplog: pytest.LogCaptureFixture) -> None:
    class Stopping(LeaseCore):
        stopped = 0

        def _stop_renewer(self) -> None:
            self.stopped += 1

    now = time.monotonic()
    live = Stopping(None, C, KEY, decision(C), "id-1", sent=now)
    req = live._renew_request(None)
    assert req is not None and req[0] == 1_000 and now <= req[1] <= time.monotonic()
    assert live._renew_request(250) is not None and live._renew_request(250)[0] == 250  # type: ignore[index]
    for lease in (Stopping(None, C, KEY, decision(C), None),
                  Stopping(None, C, KEY, decision(C, SOURCE_FAIL_OPEN), "id-1")):
        assert lease._renew_request(None) is None and not lease.lost
    late = Stopping(None, C, KEY, decision(C), "id-1", sent=now - 2)
    with caplog.at_level(logging.WARNING, logger="redis_rl"):
        assert late._renew_request(None) is None
    assert late.lost and late.stopped == 1 and LOST_DEADLINE in caplog.text
    late._mark_lost()
    assert late.stopped == 1  # once


def test_deadline_left_and_confirm_threshold() -> None:
    class Quiet(LeaseCore):
        def _stop_renewer(self) -> None:
            pass

    now = time.monotonic()
    fresh = Quiet(None, C, KEY, decision(C), "id-1", sent=now)
    left = fresh._deadline_left()
    assert left is not None and 0.9 < left <= 1.0 and not fresh._confirm_needed()
    assert Quiet(None, C, KEY, decision(C), "id-1", sent=now - 0.2)._confirm_needed()
    assert not Quiet(None, C, KEY, decision(C, SOURCE_LOCAL), "id-1", sent=now - 0.2)._confirm_needed()
    past = Quiet(None, C, KEY, decision(C), "id-1", sent=now - 2)
    past.released = True
    assert past._deadline_left() is None and not past.lost  # released: the watchdog ends quietly
    past.released = False
    assert past._deadline_left() is None and past.lost
    with pytest.raises(ValueError):
        fresh._renew_every(0)
    assert fresh._renew_every(250) == 0.25
    assert Quiet(None, C, KEY, decision(C), None)._renew_every(250) is None


def test_durable_renewal_too_few_acks_raises() -> None:
    lim = Limiter(Scripted([]), timeout_ms=None, backend="module")
    lease = Lease(lim, C, KEY, decision(C), "id-1", durable=Durable(2, 100))
    with pytest.raises(NotDurableError):
        lease._renew_ok(1, 1)
    assert lease._renew_ok(1, 2) and not lease._renew_ok(0, 0) and lim.durable_failures == 1
    assert lease._release_ended(1, 0) and not lease._release_ended(0, 2)  # a release's acks only log


def test_release_without_io() -> None:
    lim = Limiter(Scripted([]), timeout_ms=None, backend="module")
    assert Lease(lim, C, KEY, decision(C), None)._release_without_io() is False
    assert Lease(lim, C, KEY, decision(C, SOURCE_FAIL_OPEN), "id-1")._release_without_io() is False
    assert Lease(lim, C, KEY, decision(C, SOURCE_LOCAL), "id-1")._release_without_io() is True
    assert Lease(lim, C, KEY, decision(C), "id-1")._release_without_io() is None


def run_settle(d: Decision, script: List[Any], actuals: List[Any]) -> List[Any]:
    """The same settles on a Reservation and an AsyncReservation of max_cost 5."""
    out = []
    for twin in ("sync", "async"):
        if twin == "sync":
            client: Scripted = Scripted(script)
            r: ReservationCore = Reservation(Limiter(client, timeout_ms=None, backend="module"), G, KEY, 5, d)
        else:
            client = AsyncScripted(script)
            r = AsyncReservation(AsyncLimiter(client, timeout_ms=None, backend="module"), G, KEY, 5, d)
        seen = []
        for actual in actuals:
            try:
                got = r.settle(actual)  # type: ignore[attr-defined]
                if asyncio.iscoroutine(got):
                    got = asyncio.run(got)
                seen.append(None if got is None else (got.allowed, got.cost, got.remaining))
            except Exception as exc:
                seen.append(type(exc).__name__)
        out.append((seen, client.sent, r.settled))
    assert out[0] == out[1], f"Reservation and AsyncReservation differ:\n{out[0]}\n{out[1]}"
    return out[0]


def test_twins_settle_refunds_once() -> None:
    seen, sent, settled = run_settle(decision(G), [[1, 10, 8, 0, 200]], [True, -1, 2, 0])
    assert seen == ["ValueError", "ValueError", (True, 0, 8), (True, 0, 8)] and settled
    assert sent == [("RL.GCRA", KEY, 10, 1_000, "REFUND", 3)]


def test_twins_settle_above_max_cost_charges_the_excess() -> None:
    seen, sent, _ = run_settle(decision(G), [[0, 10, 0, 100, 900]], [7])
    assert seen == [(False, 2, 0)] and sent == [("RL.GCRA", KEY, 10, 1_000, "COST", 2)]


def test_twins_settle_sends_nothing_when_nothing_is_owed() -> None:
    for d, actual in ((decision(G), 5), (decision(G, allowed=False), 0), (decision(G, SOURCE_FAIL_OPEN), 0),
                      (decision(G, SOURCE_LOCAL), 9)):
        seen, sent, settled = run_settle(d, [], [actual, 0])
        assert seen == [None, None] and sent == [] and settled


def test_twins_failed_settle_is_not_retried() -> None:
    seen, sent, _ = run_settle(decision(G), [ConnectionError("down")], [1, 1])
    assert seen == [None, None] and len(sent) == 1


def test_settle_not_acknowledged_keeps_the_decision() -> None:
    r = ReservationCore(None, G, KEY, 5, decision(G))
    d = decision(G)
    assert r._settle_failed(NotDurableError(0, 1, d)) is d and r.refund_decision is d
    assert r._settle_failed(ConnectionError("down")) is None and r.refund_decision is d


def test_a_lease_whose_renewer_cannot_start_is_released_by_both_context_managers() -> None:
    # renew_every_ms=0 makes start_renewer raise after the acquire: the slot must not stay held
    # until lease_ms passes. The sync `with` released it; `async with` did not (its __aexit__
    # never runs after a failed __aenter__).
    acquired = [1, 2, 1, 0, 1_000, "id-1"]
    client = Scripted([acquired, 1])
    with pytest.raises(ValueError):
        with Limiter(client, timeout_ms=None, backend="module").lease(C, "u", renew_every_ms=0):
            pass
    aclient = AsyncScripted([acquired, 1])

    async def main() -> None:
        async with AsyncLimiter(aclient, timeout_ms=None, backend="module").lease(C, "u", renew_every_ms=0):
            pass

    with pytest.raises(ValueError):
        asyncio.run(main())
    for sent in (client.sent, aclient.sent):
        assert [args[0] for args in sent] == ["RL.ACQUIRE", "RL.RELEASE"]
        # The release names the key and the id the acquire sent.
        acquire = list(sent[0])
        assert sent[1][1:] == (acquire[1], acquire[acquire.index("ID") + 1])
