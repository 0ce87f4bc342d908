"""Exceptions, and which Redis failures the failure policy may absorb."""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Optional, Tuple

import redis.exceptions as rex

if TYPE_CHECKING:
    from .decision import Decision

__all__ = ["RedisRLError", "RateLimited", "CrossSlotError", "ModuleNotLoadedError", "NotDurableError",
           "NotSupportedError", "ParameterConflictError", "WaitCancelled", "is_unavailable", "classify"]


class RedisRLError(Exception):
    """Base of this library's own errors."""


class RateLimited(RedisRLError):
    """Raised by lease() (and by retry helpers) when a limit denies; carries the Decision."""

    def __init__(self, decision: "Decision") -> None:
        super().__init__(f"rate limited by {decision.name!r}: retry after {decision.retry_after_ms} ms")
        self.decision = decision

    @property
    def retry_after_ms(self) -> int:
        return self.decision.retry_after_ms


class NotSupportedError(RedisRLError):
    """The backend cannot do this (raised before any round trip): the Lua library (backend="lua",
    or "auto" on a server without the module) has no WAIT (acquire(wait_ms=)) and no MAXWAIT
    (max_wait_ms=, pace()), since a script cannot block. Reject instead, or retry after
    decision.retry_after_ms yourself."""


class WaitCancelled(RedisRLError):
    """pace() was cancelled (its cancel= event was set, or it was interrupted) before the start.

    `decision`: the booking that was given up (None when cancelled before booking); `refund`:
    the Decision of the REFUND that gave its units back, or None (nothing was booked, or the refund
    failed: then `error` holds why and the units stay taken, which only makes the limit stricter)."""

    def __init__(self, decision: "Optional[Decision]", refund: "Optional[Decision]" = None,
                 error: Optional[BaseException] = None) -> None:
        if decision is None:
            what = "cancelled before booking"
        elif refund is not None:
            what = f"booking on {decision.name!r} cancelled {decision.wait_ms} ms ahead; its units were refunded"
        else:
            what = f"booking on {decision.name!r} cancelled; its units were not refunded ({error})"
        super().__init__(what)
        self.decision = decision
        self.refund = refund
        self.error = error


class CrossSlotError(RedisRLError, ValueError):
    """The keys of one check_all hash to different cluster slots (raised before any round trip).

    Pass tag=... so every key carries the same hash tag."""


class NotDurableError(RedisRLError):
    """A write the Limiter sent with durable= was not acknowledged by enough replicas in time.

    The write did happen on the master (it may be lost in a failover). `acks`: how many replicas
    acknowledged, `replicas`: how many were asked for; `decision`: the server's answer, if any."""

    def __init__(self, acks: int, replicas: int, decision: "Optional[Decision]" = None) -> None:
        super().__init__(f"{acks} of {replicas} replica(s) acknowledged the write in time")
        self.acks = acks
        self.replicas = replicas
        self.decision = decision


class ParameterConflictError(RedisRLError, ValueError):
    """One limit name used with two sets of parameters through one Limiter (raised before any round trip).

    A key holds one limiter: a call with other parameters changes that limiter
    for every caller of the key. Give each set of parameters its own name, or
    pass strict_params=False to the Limiter when a change is meant (a config
    reload): then a warning is logged once per name instead."""


class ModuleNotLoadedError(RedisRLError):
    """The server does not know the RL.* commands: a misconfiguration, never absorbed by a failure policy."""


# Error replies that say "the server cannot serve you right now", not "your call is wrong".
_TRANSIENT_PREFIXES = ("BUSY ", "LOADING", "MASTERDOWN", "MISCONF", "NOREPLICAS", "TRYAGAIN", "CLUSTERDOWN", "OOM ",
                       "READONLY", "UNBLOCKED")


def _types(*names: str) -> Tuple[type, ...]:
    # redis>=5: some classes are newer than 5.0
    return tuple(getattr(rex, n) for n in names if isinstance(getattr(rex, n, None), type))


_TRANSIENT_TYPES = _types("BusyLoadingError", "ReadOnlyError", "OutOfMemoryError", "TryAgainError",
                          "ClusterDownError", "MasterDownError", "SlotNotCoveredError", "MaxConnectionsError")
_FATAL_TYPES = _types("AuthenticationError", "NoPermissionError", "AuthorizationError", "ExternalAuthProviderError")


def is_unavailable(exc: BaseException) -> bool:
    """True for failures the failure policy answers (timeouts, refused or reset connections,
    transient server errors); False for errors that must be raised (usage errors such as a bad
    argument or WRONGTYPE, missing module, authentication or ACL errors)."""
    if isinstance(exc, _FATAL_TYPES):
        return False
    if isinstance(exc, _TRANSIENT_TYPES):
        return True
    if isinstance(exc, (rex.ConnectionError, rex.TimeoutError, asyncio.TimeoutError, socket.timeout,
                        ConnectionError, rex.ClusterError)):
        return True
    if isinstance(exc, rex.RedisClusterException):
        # "No way to dispatch", "all keys must map to the same key slot": usage
        return False
    if isinstance(exc, rex.ResponseError):
        return str(exc).startswith(_TRANSIENT_PREFIXES)
    if isinstance(exc, OSError):
        return True
    return False


def classify(exc: BaseException) -> Optional[BaseException]:
    """None when the failure policy should decide; else the exception to raise."""
    if is_unavailable(exc):
        return None
    if isinstance(exc, rex.ResponseError) and str(exc).lower().startswith("unknown command"):
        err = ModuleNotLoadedError(f"the server does not know the redis-rl commands ({exc}); load the module "
                                   "(--loadmodule /path/libredis_rl.so) or pick another backend")
        err.__cause__ = exc
        return err
    return exc
