"""What Lease and AsyncLease (and Reservation and AsyncReservation) share: the state and every
rule that needs no I/O. The deadlines, the lost and in-doubt marking, what a renewal's or a
release's reply means, the renewer's schedule, and what a settle sends and how its failure is
taken are written here once. limiter.py and aio.py keep only the I/O shells: send the command
(a call, or an await of it), hand the reply to these methods, and run the threads or tasks."""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any, Callable, ContextManager, Generic, List, Optional, Tuple, TypeVar

from .backend import Arg, Backend
from .core import Durable, DurableOption, Identity
from .decision import SOURCE_LOCAL, SOURCE_REDIS, Decision, single
from .errors import NotDurableError, RateLimited
from .limits import Concurrency, Limit

log = logging.getLogger("redis_rl")

#: why a lease was lost: a renewal answered 0, or a release found it expired
LOST_EXPIRED = "expired before renew/release"
#: why a lease was lost: valid_until passed with no confirmed renewal
LOST_DEADLINE = "valid_until passed without a confirmed renewal"
#: a grant after a wait is confirmed by one RL.RENEW when less than this share of the lease is left
CONFIRM_BELOW = 0.9

#: the lock of the async classes: one event loop, nothing to lock against (reusable)
_NO_LOCK: ContextManager[Any] = contextlib.nullcontext()


class LeaseCore:
    """The state of a lease and its bookkeeping. Subclasses (Lease, AsyncLease) send the
    commands, and supply _lock (a threading.Lock for Lease), _stop_renewer (stop the renewer and
    the watchdog: called when the lease is lost) and, if need be, _on_lost_result."""

    limiter: Any
    on_lost: Optional[Callable[[Any], Any]]
    _lock: ContextManager[Any] = _NO_LOCK

    def __init__(self, limiter: Any, limit: Concurrency, key: str, decision: Decision,
                 lease_id: Optional[str], *, durable: Optional[Durable] = None,
                 sent: Optional[float] = None) -> None:
        self.limiter = limiter
        self.limit = limit
        self.key = key
        self.decision = decision
        self.id = lease_id
        #: True once a renewal answered 0, the release found the lease expired, or valid_until passed
        self.lost = False
        self.released = False
        #: the error of a failed release (logged once, not retried), else None
        self.error: Optional[BaseException] = None
        self.on_lost = None
        #: the strict mode of this lease's acquire, renewals and release (None: off)
        self.durable = durable
        #: monotonic deadline (seconds): the last confirmed acquire/renew send + lease_ms
        self.valid_until = (time.monotonic() if sent is None else sent) + limit.lease_ms / 1000
        self._doubt = False

    @property
    def acquired(self) -> bool:
        return self.decision.allowed

    @property
    def in_doubt(self) -> bool:
        """A renewal failed and none confirmed since, or valid_until passed: do not count on the slot."""
        if self.id is None or self.lost or self.released:
            return False
        return self._doubt or time.monotonic() >= self.valid_until

    @property
    def remaining_ms(self) -> int:
        """Milliseconds until valid_until (0 when passed)."""
        return max(0, int((self.valid_until - time.monotonic()) * 1000))

    def _on_redis(self) -> bool:
        """A lease the server holds: the only kind renewed, confirmed or watched."""
        return self.id is not None and self.decision.source == SOURCE_REDIS

    # --- lost ----------------------------------------------------------------

    def _stop_renewer(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def _on_lost_result(self, result: Any) -> None:
        """What on_lost returned (AsyncLease runs a coroutine in the background)."""

    def _mark_lost(self, why: str = LOST_EXPIRED) -> None:
        """Once: lost, the renewer stopped, a warning, on_lost (its errors are logged)."""
        with self._lock:
            if self.lost:
                return
            self.lost = True
        self._stop_renewer()
        log.warning("redis_rl: lease on %r was lost (%s)", self.limit.name, why)
        if self.on_lost is not None:
            try:
                self._on_lost_result(self.on_lost(self))
            except Exception:
                log.exception("redis_rl: on_lost callback raised")

    # --- renew ---------------------------------------------------------------

    def _renew_request(self, lease_ms: Optional[int]) -> Optional[Tuple[int, float]]:
        """renew()'s checks before any I/O: (ms, sent) to send RL.RENEW for, or None when nothing
        is sent, and then renew() answers `not self.lost` (no lease on Redis, or released: as it
        is; lost: False; valid_until passed: marked lost now, False)."""
        if self.id is None or self.decision.source != SOURCE_REDIS or self.released or self.lost:
            return None
        ms = lease_ms or self.limit.lease_ms
        sent = time.monotonic()
        if sent >= self.valid_until:
            self._mark_lost(LOST_DEADLINE)
            return None
        return ms, sent

    def _renew_args(self, ms: int) -> List[Arg]:
        assert self.id is not None  # the callers check
        backend: Backend = self.limiter.backend
        return backend.renew(self.key, self.id, ms)

    def _renew_ok(self, reply: Any, acks: Optional[int]) -> bool:
        """What a renewal's reply means: True renewed, False no longer live. With durable, a
        renewal too few replicas acknowledged raises NotDurableError (the caller then marks the
        lease in doubt, as for any error)."""
        ok = int(reply) == 1
        dur = self.durable
        if ok and dur is not None and acks is not None and not self.limiter._core.acked(acks, dur, self.limit.name):
            raise NotDurableError(acks, dur.replicas)
        return ok

    def _renewed(self, ok: bool, ms: int, sent: float) -> bool:
        """After an answered renewal sent at `sent`: confirmed (valid_until moves, never back; no
        longer in doubt) or lost."""
        if ok:
            self.valid_until = max(self.valid_until, sent + ms / 1000)
            self._doubt = False
            return True
        self._mark_lost()
        return False

    def _confirm_needed(self) -> bool:
        """_after_wait's test: a grant after a wait that took more than a tenth of the lease (its
        valid_until, send + lease_ms, may be far too early) is confirmed from now by one RL.RENEW."""
        if not self._on_redis():
            return False
        return self.valid_until - time.monotonic() < CONFIRM_BELOW * self.limit.lease_ms / 1000

    @staticmethod
    def _confirm_failed(exc: BaseException) -> None:
        log.warning("redis_rl: confirming a lease granted after a wait failed (%s); valid_until is the "
                    "acquire's send + lease_ms", exc)

    # --- the renewer ---------------------------------------------------------

    def _renew_every(self, every_ms: int) -> Optional[float]:
        """start_renewer's schedule: the renewer's pause in seconds, or None when no renewer runs
        (no lease on Redis). ValueError below 1 ms."""
        if every_ms < 1:
            raise ValueError("renew_every_ms must be at least 1")
        return every_ms / 1000 if self._on_redis() else None

    @staticmethod
    def _renewal_failed(exc: BaseException) -> None:
        """The renewer keeps trying: the lease may still be live (in doubt meanwhile)."""
        log.warning("redis_rl: lease renewal failed (%s); in doubt, will try again", exc)

    def _deadline_left(self) -> Optional[float]:
        """The watchdog's next pause: seconds until valid_until, or None once it passed (then the
        lease, unless released, is marked lost) and the watchdog ends."""
        left = self.valid_until - time.monotonic()
        if left > 0:
            return left
        if not self.released:
            self._mark_lost(LOST_DEADLINE)
        return None

    # --- release -------------------------------------------------------------

    def _claim_release(self) -> bool:
        """True for the first release() only, which marks the lease released."""
        with self._lock:
            if self.released:
                return False
            self.released = True
            return True

    def _release_without_io(self) -> Optional[bool]:
        """A release that sends nothing: its answer (no lease: False; a local lease: refunded,
        True; a decision of the failure policy: False), or None when RL.RELEASE is to be sent."""
        d = self.decision
        if self.id is None:
            return False
        if d.source == SOURCE_LOCAL:
            # Given back once, whether by this lease or by release(decision).
            if d.lease is None:
                return False
            self.limiter._core.local_refund(d, d.cost)
            d.lease = None
            return True
        if d.source != SOURCE_REDIS:
            return False
        return None

    def _release_args(self) -> List[Arg]:
        assert self.id is not None  # _release_without_io answered otherwise
        backend: Backend = self.limiter.backend
        return backend.release(self.key, self.id)

    def _release_ended(self, reply: Any, acks: Optional[int]) -> bool:
        """What a release's reply means: True when it ended a live lease. With durable, too few
        acknowledgements are only logged: a lost release leaves a ghost, fewer holders, never more."""
        ended = int(reply) == 1
        if self.durable is not None and acks is not None and acks < self.durable.replicas:
            log.info("redis_rl: release of a lease on %r: %d replica(s) acknowledged", self.limit.name, acks)
        return ended

    def _release_failed(self, exc: BaseException) -> bool:
        """A release that failed: kept in `error`, logged once, not retried (the lease expires)."""
        self.error = exc
        log.warning("redis_rl: lease release failed (%s: %s); not retried, it expires in %d ms",
                    type(exc).__name__, exc, self.limit.lease_ms)
        return False

    def _released(self, ended: bool) -> bool:
        """After an answered release: a lease the server no longer had was lost."""
        if not ended and not self.lost:
            self._mark_lost()
        return ended


L = TypeVar("L", bound=LeaseCore)


class LeaseContextCore(Generic[L]):
    """What `with limiter.lease(...)` and `async with` share: the acquire's arguments, and what
    follows a grant."""

    def __init__(self, limiter: Any, limit: Concurrency, identity: Identity, cost: int, lease_id: Optional[str],
                 renew_every_ms: Optional[int], on_lost: Optional[Callable[[L], Any]],
                 tag: Optional[str], durable: DurableOption = None, wait_ms: Optional[int] = None) -> None:
        self._limiter = limiter
        self._acquire = (limit, identity, cost)
        self._options = {"id": lease_id, "tag": tag, "durable": durable, "wait_ms": wait_ms}
        self._renew_every_ms = renew_every_ms
        self._on_lost = on_lost
        self.lease: Optional[L] = None

    def _held(self, lease: L) -> Optional[int]:
        """After the acquire: RateLimited if denied; else the lease is the block's, with on_lost
        set. Returns renew_every_ms (None: no renewer)."""
        if not lease.acquired:
            raise RateLimited(lease.decision)
        lease.on_lost = self._on_lost
        self.lease = lease
        return self._renew_every_ms


class ReservationCore:
    """The state of a reservation and settle()'s arithmetic. Subclasses send the refund or the
    charge (and Reservation supplies a threading.Lock as _lock)."""

    limiter: Any
    _lock: ContextManager[Any] = _NO_LOCK

    def __init__(self, limiter: Any, limit: Limit, key: str, max_cost: int, decision: Decision) -> None:
        self.limiter = limiter
        self.limit = limit
        self.key = key
        self.max_cost = max_cost
        self.decision = decision
        self.settled = False
        #: the refund's own decision (None until settled with a refund)
        self.refund_decision: Optional[Decision] = None

    @property
    def allowed(self) -> bool:
        return self.decision.allowed

    def _settle_units(self, actual: int) -> int:
        """settle()'s checks and arithmetic before any I/O (ValueError for a bad `actual`; only the
        first call acts): the units to send, max_cost - actual (above 0: a refund; below 0: a
        charge of the excess), or 0 when nothing is sent (settled before, denied, nothing to give
        back, a failure policy's decision; a local decision is refunded here). At 0, settle()
        answers refund_decision: None unless an earlier settle set it."""
        if isinstance(actual, bool) or not isinstance(actual, int) or actual < 0:
            raise ValueError("actual must be a non-negative int")
        with self._lock:
            if self.settled:
                return 0
            self.settled = True
        d = self.decision
        if not d.allowed:
            return 0
        diff = self.max_cost - actual
        if d.source == SOURCE_LOCAL:
            if diff > 0:
                self.limiter._core.local_refund(d, diff)
            return 0
        if d.source != SOURCE_REDIS:
            return 0
        return diff

    def _charge_args(self, units: int) -> List[Arg]:
        """The plain COST call of `units` above max_cost."""
        backend: Backend = self.limiter.backend
        return backend.check(self.limit, self.key, units)

    def _charged(self, reply: Any, units: int) -> Decision:
        return single(reply, self.limit, self.key, units)

    def _settle_failed(self, exc: BaseException) -> Optional[Decision]:
        """A refund or charge that failed, logged once and never retried (a retried refund gives the
        units back twice): not acknowledged by replicas (NotDurableError: done on the master), its
        decision; any other error, None (the units stay charged)."""
        if isinstance(exc, NotDurableError):
            log.warning("redis_rl: settle of %r: %s", self.limit.name, exc)
            self.refund_decision = exc.decision
            return self.refund_decision
        log.warning("redis_rl: settle of %r failed (%s: %s); not retried, the units stay charged",
                    self.limit.name, type(exc).__name__, exc)
        return None
