"""redis-rl: typed client for the redis-rl module (RL.GCRA, RL.ALL, leases, refunds) on redis-py."""

from .aio import AsyncLease, AsyncLimiter, AsyncReservation
from .backend import AutoBackend, Backend, LuaBackend, ModuleBackend
from .core import Durable
from .decision import Decision
from .errors import (CrossSlotError, ModuleNotLoadedError, NotDurableError, NotSupportedError, ParameterConflictError,
                     RateLimited, RedisRLError, WaitCancelled)
from .limiter import CancelEvent, Lease, Limiter, Reservation
from .limits import FAIL_CLOSED, FAIL_OPEN, Concurrency, Gcra, Limit, Local, Log, Quota, Slide, TokenBucket
from .metrics import Metrics
from .retry import RetryBudget, async_retry, parse_retry_after, retry

__version__ = "0.2.0"

__all__ = [
    "AsyncLease", "AsyncLimiter", "AsyncReservation", "AutoBackend", "Backend", "CancelEvent", "Concurrency",
    "CrossSlotError", "Decision", "Durable", "FAIL_CLOSED", "FAIL_OPEN", "Gcra", "Lease", "Limit", "Limiter",
    "Local", "Log", "LuaBackend", "Metrics", "ModuleBackend", "ModuleNotLoadedError", "NotDurableError",
    "NotSupportedError", "ParameterConflictError", "Quota", "RateLimited", "RedisRLError", "Reservation",
    "RetryBudget", "Slide", "TokenBucket", "WaitCancelled", "async_retry", "parse_retry_after", "retry",
    "__version__",
]
