"""The backend seam: every Redis command the library sends is built here.

A backend turns an operation into the argument list of one command; the
Limiter (sync) or AsyncLimiter sends it with `client.execute_command(*args)`
and the replies are parsed by one parser (decision.py), which reads the
module's RESP2 arrays and RESP3 maps and the Lua library's arrays alike.
LuaBackend (the Functions library: `FCALL rl_gcra 1 key ...`) is a subclass
that builds other argument lists; AutoBackend probes once for the module.
A backend that must set something up first (the probe, loading the library)
has `ready` False, and `prepare()` gives the steps the Limiter sends.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from typing import Any, Generator, List, Optional, Sequence, Tuple, Union

from redis.exceptions import ResponseError

from .errors import NotSupportedError
from .limits import Concurrency, Limit

__all__ = ["AutoBackend", "Backend", "LuaBackend", "ModuleBackend", "library_source", "library_version",
           "resolve_backend"]

Arg = Union[str, int, bytes]


class Backend:
    """Builds the argument list of each operation. Subclass to speak another dialect."""

    name = "abstract"
    #: False while the backend still has to find out or set up something on the server (see prepare)
    ready = True

    def check(self, rule: Limit, key: str, cost: int, lease_id: Optional[str] = None, *,
              max_wait_ms: Optional[int] = None, wait_ms: Optional[int] = None) -> List[Arg]:
        """The kind's command. max_wait_ms: book a later start (MAXWAIT, GCRA and token buckets);
        wait_ms: an acquire that blocks until granted or timed out (WAIT). Both are only passed
        when set, so a Backend written before them keeps working for every other call."""
        raise NotImplementedError

    def refund(self, rule: Limit, key: str, amount: int) -> List[Arg]:
        raise NotImplementedError

    def peek(self, rule: Limit, key: str, cost: int, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        raise NotImplementedError

    def all(self, keys: Sequence[str], specs: Sequence[Tuple[Limit, int, Optional[str]]],
            refund: bool = False, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        """RL.ALL of the specs (rule, cost, lease id); refund=True: each cost is a REFUND amount;
        max_wait_ms: a final MAXWAIT (every spec a GCRA or token bucket)."""
        raise NotImplementedError

    def release(self, key: str, lease_id: str) -> List[Arg]:
        raise NotImplementedError

    def renew(self, key: str, lease_id: str, lease_ms: int) -> List[Arg]:
        raise NotImplementedError


class ModuleBackend(Backend):
    """The module's own commands: RL.GCRA, RL.ALL, RL.PEEK, RL.ACQUIRE, ..."""

    name = "module"

    def check(self, rule: Limit, key: str, cost: int, lease_id: Optional[str] = None, *,
              max_wait_ms: Optional[int] = None, wait_ms: Optional[int] = None) -> List[Arg]:
        args: List[Arg] = [rule.command, key, *rule.params]
        if cost != 1:
            args += ("COST", cost)
        if lease_id is not None:
            args += ("ID", lease_id)
        if max_wait_ms is not None:
            args += ("MAXWAIT", max_wait_ms)
        if wait_ms is not None:
            args += ("WAIT", wait_ms)
        return args

    def refund(self, rule: Limit, key: str, amount: int) -> List[Arg]:
        if not rule.refundable:
            raise TypeError(f"{type(rule).__name__} limits cannot be refunded (release the lease instead)")
        return [rule.command, key, *rule.params, "REFUND", amount]

    def peek(self, rule: Limit, key: str, cost: int, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        args: List[Arg] = ["RL.PEEK", rule.kind, key, *rule.params]
        if cost != 1:
            args += ("COST", cost)
        if max_wait_ms is not None:
            args += ("MAXWAIT", max_wait_ms)
        return args

    def all(self, keys: Sequence[str], specs: Sequence[Tuple[Limit, int, Optional[str]]],
            refund: bool = False, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        args: List[Arg] = ["RL.ALL", len(keys), *keys]
        for rule, cost, lease_id in specs:
            args.append(rule.kind)
            args += rule.params
            if refund:
                if not rule.refundable:
                    raise TypeError(f"{type(rule).__name__} limits cannot be refunded (release the lease instead)")
                args += ("REFUND", cost)
            elif cost != 1:
                args += ("COST", cost)
            if lease_id is not None and isinstance(rule, Concurrency):
                args += ("ID", lease_id)
        if max_wait_ms is not None:
            args += ("MAXWAIT", max_wait_ms)
        return args

    def release(self, key: str, lease_id: str) -> List[Arg]:
        return ["RL.RELEASE", key, lease_id]

    def renew(self, key: str, lease_id: str, lease_ms: int) -> List[Arg]:
        return ["RL.RENEW", key, lease_id, lease_ms]



# --- the Functions library (lua/redis_rl.lua, shipped in the package) -----

#: the module command -> the library's function
FUNCTIONS = {"RL.GCRA": "rl_gcra", "RL.TOKENBUCKET": "rl_tokenbucket", "RL.SLIDE": "rl_slide", "RL.LOG": "rl_log",
             "RL.QUOTA": "rl_quota", "RL.ACQUIRE": "rl_acquire", "RL.RELEASE": "rl_release",
             "RL.RENEW": "rl_renew"}

_source: Optional[str] = None


def library_source() -> str:
    """The Lua library this package ships (a copy of the repository's lua/redis_rl.lua)."""
    global _source
    if _source is None:
        _source = resources.files(__package__).joinpath("redis_rl.lua").read_text(encoding="utf-8")
    return _source


def library_version() -> str:
    """The version of the shipped library (its LIB_VERSION, what rl_version answers)."""
    m = re.search(r"^local LIB_VERSION = '([^']+)'", library_source(), re.M)
    if m is None:  # pragma: no cover - the packaged file is tested
        raise RuntimeError("redis_rl.lua holds no LIB_VERSION")
    return m.group(1)


_eval_source: Optional[str] = None


def eval_source() -> str:
    """The library's EVAL form: the same file with its first line (the #!lua shebang) emptied."""
    global _eval_source
    if _eval_source is None:
        src = library_source()
        _eval_source = src[src.index("\n"):]
    return _eval_source


def _version_tuple(v: Any) -> Tuple[int, ...]:
    if isinstance(v, bytes):
        v = v.decode("ascii", "replace")
    try:
        return tuple(int(x) for x in str(v).split("."))
    except ValueError:
        return (0,)


def to_fcall(args: Sequence[Arg]) -> List[Arg]:
    """A module command's argument list as the library's FCALL (the same arguments after the keys)."""
    cmd = args[0]
    if cmd == "RL.PEEK":  # RL.PEEK KIND key args... -> FCALL_RO rl_peek 1 key KIND args...
        return ["FCALL_RO", "rl_peek", 1, args[2], args[1], *args[3:]]
    if cmd == "RL.ALL":  # RL.ALL numkeys keys... specs... -> FCALL rl_all numkeys keys... specs...
        return ["FCALL", "rl_all", *args[1:]]
    return ["FCALL", FUNCTIONS[str(cmd)], 1, *args[1:]]


class LuaBackend(Backend):
    """The Functions library (lua/redis_rl.lua) through FCALL, for servers that cannot load the module.

    The same arguments and the same replies (the RESP2 arrays, on every
    protocol), so the same Decisions. Before its first call the Limiter asks
    the server for `FCALL_RO rl_version 0` and, when the library is missing
    or older than the one this package ships, loads it with
    `FUNCTION LOAD REPLACE` (on every primary of a cluster); a newer library
    is left alone. A call answered `Function not found` (FUNCTION FLUSH, a
    server restarted without persistence) loads it again and is sent once
    more (the function did not run, so nothing is charged twice)."""

    name = "lua"

    def __init__(self, *, eval: bool = False) -> None:
        self._module = ModuleBackend()
        self.ready = False
        #: None: FCALL; else the SHA1 of the EVAL form, sent with EVALSHA (where FUNCTION is refused)
        self.sha: Optional[str] = None
        self._want_eval = eval
        #: what rl_version answered before the last load ("" when the library was missing)
        self.found_version: Optional[str] = None
        #: True once this backend has loaded the library (FUNCTION LOAD REPLACE)
        self.loaded = False

    def form(self, args: Sequence[Arg]) -> List[Arg]:
        """A module command's or an FCALL's arguments in this backend's form (FCALL or EVALSHA)."""
        out = to_fcall(args) if str(args[0]).startswith("RL.") else list(args)
        sha = self.sha
        if sha is None or out[0] not in ("FCALL", "FCALL_RO"):
            return out
        # FCALL name numkeys keys... args... -> EVALSHA sha numkeys keys... name args...
        n = int(out[2])
        return ["EVALSHA_RO" if out[0] == "FCALL_RO" else "EVALSHA", sha, n, *out[3:3 + n], out[1], *out[3 + n:]]

    def check(self, rule: Limit, key: str, cost: int, lease_id: Optional[str] = None, *,
              max_wait_ms: Optional[int] = None, wait_ms: Optional[int] = None) -> List[Arg]:
        if max_wait_ms is not None:
            raise not_supported("MAXWAIT (max_wait_ms=, pace())")
        if wait_ms is not None:
            raise not_supported("WAIT (acquire(wait_ms=), lease(wait_ms=))")
        return self.form(self._module.check(rule, key, cost, lease_id))

    def refund(self, rule: Limit, key: str, amount: int) -> List[Arg]:
        return self.form(self._module.refund(rule, key, amount))

    def peek(self, rule: Limit, key: str, cost: int, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        if max_wait_ms is not None:
            raise not_supported("MAXWAIT (max_wait_ms=)")
        return self.form(self._module.peek(rule, key, cost))

    def all(self, keys: Sequence[str], specs: Sequence[Tuple[Limit, int, Optional[str]]],
            refund: bool = False, *, max_wait_ms: Optional[int] = None) -> List[Arg]:
        if max_wait_ms is not None:
            raise not_supported("MAXWAIT (max_wait_ms=)")
        return self.form(self._module.all(keys, specs, refund))

    def release(self, key: str, lease_id: str) -> List[Arg]:
        return self.form(["FCALL", "rl_release", 1, key, lease_id])

    def renew(self, key: str, lease_id: str, lease_ms: int) -> List[Arg]:
        return self.form(["FCALL", "rl_renew", 1, key, lease_id, lease_ms])


def not_supported(what: str) -> NotSupportedError:
    return NotSupportedError(f"{what} is not available with the Lua backend (the Functions library: a script "
                             "cannot block or wait); load the module, or reject and retry after "
                             "decision.retry_after_ms")


class AutoBackend(ModuleBackend):
    """Not a dialect of its own: before the first call the Limiter probes the server once (`RL.GCRA`
    without arguments, an arity error when the module is loaded, `unknown command` when not; it
    writes nothing and needs no COMMAND permission) and replaces this by ModuleBackend or
    LuaBackend."""

    name = "auto"
    ready = False


#: a setup step: (command args, to every primary of a cluster?); an "everywhere" step is answered
#: with a list of replies (exceptions in place of errors), one per node
Step = Tuple[Tuple[Arg, ...], bool]


def is_function_missing(exc: BaseException) -> bool:
    """The library is not (or no longer) on the server: Function not found, or NOSCRIPT (EVALSHA)."""
    if not isinstance(exc, ResponseError):
        return False
    text = str(exc)
    return "function not found" in text.lower() or text.startswith("NOSCRIPT") or type(exc).__name__ == "NoScriptError"


def _refused(exc: BaseException) -> bool:
    """FUNCTION (or FCALL) refused to this user or on this server: use the EVAL form."""
    if type(exc).__name__ in ("NoPermissionError", "AuthorizationError"):
        return True
    text = str(exc).lower()
    return isinstance(exc, ResponseError) and (text.startswith("noperm") or "unknown command" in text)


def prepare(backend: Backend) -> Generator[Step, Any, Backend]:
    """The setup a backend needs before its first call, as a generator of commands (so the sync and
    the async Limiter drive the same steps). Returns the backend to use from now on."""
    if isinstance(backend, AutoBackend):
        try:
            yield ("RL.GCRA",), False
            found = True  # pragma: no cover - an arity error is expected
        except ResponseError as exc:
            text = str(exc).lower()
            if "unknown command" in text:
                found = False
            elif "wrong number of arguments" in text:
                found = True
            else:
                raise
        if found:
            return ModuleBackend()
        backend = LuaBackend()
    if not isinstance(backend, LuaBackend) or backend.ready:
        return backend
    if backend._want_eval or backend.sha is not None:
        return (yield from _prepare_eval(backend))
    want = library_version()
    # A step "everywhere" (to every primary of a cluster, else to the one server) is answered with
    # the list of the nodes' replies, an exception in place of a node's error.
    have: List[Tuple[int, ...]] = []
    for reply in (yield ("FCALL_RO", "rl_version", 0), True):
        if isinstance(reply, BaseException):
            if _refused(reply):
                return (yield from _prepare_eval(backend))
            if not is_function_missing(reply):
                raise reply
            have.append((0,))
        else:
            have.append(_version_tuple(reply))
    oldest = min(have, default=(0,))
    backend.found_version = "" if oldest == (0,) else ".".join(map(str, oldest))
    if oldest < _version_tuple(want):
        replies = yield ("FUNCTION", "LOAD", "REPLACE", library_source()), True
        if any(isinstance(r, BaseException) and _refused(r) for r in replies):
            return (yield from _prepare_eval(backend))
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        backend.loaded = True
    backend.ready = True
    return backend


def _prepare_eval(backend: LuaBackend) -> Generator[Step, Any, Backend]:
    """The EVAL form: SCRIPT LOAD on every primary (the script cache is not persisted: a NOSCRIPT
    later loads it again)."""
    src = eval_source()
    for reply in (yield ("SCRIPT", "LOAD", src), True):
        if isinstance(reply, BaseException):
            raise reply
    backend.sha = hashlib.sha1(src.encode("utf-8")).hexdigest()
    backend.loaded = True
    backend.ready = True
    return backend


def adapt(args: Sequence[Arg], backend: Backend) -> Sequence[Arg]:
    """Arguments built before the backend was set up (module form, or FCALL before the EVAL form
    was chosen) in the chosen backend's form."""
    if isinstance(backend, LuaBackend):
        return backend.form(args)
    return args


def resolve_backend(backend: Union[None, str, Backend]) -> Backend:
    if backend is None or backend == "module":
        return ModuleBackend()
    if isinstance(backend, Backend):
        return backend
    if backend == "lua":
        return LuaBackend()
    if backend == "auto":
        return AutoBackend()
    raise ValueError(f"backend must be 'module', 'lua', 'auto' or a Backend instance, not {backend!r}")



