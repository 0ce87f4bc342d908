"""The backend seam: every Redis command the library sends is built here.

A backend turns an operation into the argument list of one command; the
Limiter (sync) or AsyncLimiter sends it with `client.execute_command(*args)`
and the replies are parsed by one parser (decision.py), which reads the
module's RESP2 arrays and RESP3 maps and the Lua library's arrays alike. So
a second backend (the Functions library: `FCALL rl_gcra 1 key ...`) is a
subclass that builds other argument lists, with no change to the API.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from .limits import Concurrency, Limit

__all__ = ["Backend", "ModuleBackend", "resolve_backend"]

Arg = Union[str, int, bytes]


class Backend:
    """Builds the argument list of each operation. Subclass to speak another dialect."""

    name = "abstract"

    def check(self, rule: Limit, key: str, cost: int, lease_id: Optional[str] = None) -> List[Arg]:
        raise NotImplementedError

    def refund(self, rule: Limit, key: str, amount: int) -> List[Arg]:
        raise NotImplementedError

    def peek(self, rule: Limit, key: str, cost: int) -> List[Arg]:
        raise NotImplementedError

    def all(self, keys: Sequence[str], specs: Sequence[Tuple[Limit, int, Optional[str]]]) -> List[Arg]:
        raise NotImplementedError

    def release(self, key: str, lease_id: str) -> List[Arg]:
        raise NotImplementedError

    def renew(self, key: str, lease_id: str, lease_ms: int) -> List[Arg]:
        raise NotImplementedError


class ModuleBackend(Backend):
    """The module's own commands: RL.GCRA, RL.ALL, RL.PEEK, RL.ACQUIRE, ..."""

    name = "module"

    def check(self, rule: Limit, key: str, cost: int, lease_id: Optional[str] = None) -> List[Arg]:
        args: List[Arg] = [rule.command, key, *rule.params]
        if cost != 1:
            args += ("COST", cost)
        if lease_id is not None:
            args += ("ID", lease_id)
        return args

    def refund(self, rule: Limit, key: str, amount: int) -> List[Arg]:
        if not rule.refundable:
            raise TypeError(f"{type(rule).__name__} limits cannot be refunded (release the lease instead)")
        return [rule.command, key, *rule.params, "REFUND", amount]

    def peek(self, rule: Limit, key: str, cost: int) -> List[Arg]:
        args: List[Arg] = ["RL.PEEK", rule.kind, key, *rule.params]
        if cost != 1:
            args += ("COST", cost)
        return args

    def all(self, keys: Sequence[str], specs: Sequence[Tuple[Limit, int, Optional[str]]]) -> List[Arg]:
        args: List[Arg] = ["RL.ALL", len(keys), *keys]
        for rule, cost, lease_id in specs:
            args.append(rule.kind)
            args += rule.params
            if cost != 1:
                args += ("COST", cost)
            if lease_id is not None and isinstance(rule, Concurrency):
                args += ("ID", lease_id)
        return args

    def release(self, key: str, lease_id: str) -> List[Arg]:
        return ["RL.RELEASE", key, lease_id]

    def renew(self, key: str, lease_id: str, lease_ms: int) -> List[Arg]:
        return ["RL.RENEW", key, lease_id, lease_ms]


def resolve_backend(backend: Union[None, str, Backend]) -> Backend:
    if backend is None or backend == "module":
        return ModuleBackend()
    if isinstance(backend, Backend):
        return backend
    if backend in ("lua", "auto"):
        raise NotImplementedError(
            f"backend={backend!r}: the Functions library backend is not in this release; "
            "use the module (backend='module') or pass your own Backend subclass")
    raise ValueError(f"backend must be 'module' or a Backend instance, not {backend!r}")
