"""HTTP answers from redis-rl Decisions: the service's status, headers and bodies.

The fields themselves, RateLimit-Policy and RateLimit of
draft-ietf-httpapi-ratelimit-headers-11 (q, qu, w; r, and t, the effective
window: the time until one more unit than r is available, equal to
Retry-After on a refusal; no pk), are built by the library
(redis_rl.Decision.headers). What the service chooses here:

- RateLimit-Policy lists every policy of the route, in a fixed order;
- RateLimit gives the most restrictive limit only: refused, the refusing
  limit with the longest wait (the one that sets Retry-After; "never" counts
  as the longest); allowed, the limit that admits the fewest more requests
  like this one, remaining // cost (each limit counts its own units), ties
  to the one that takes longest to fill up again, then to key order;
- bodies name the limit and never an identifier.
"""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from redis_rl import Decision, Limit


def ceil_s(ms: int) -> int:
    """Whole seconds, rounded up: waiting the advertised time is always enough."""
    return -(-ms // 1000)


def tenant_key(*parts: str) -> Callable[[str], str]:
    """A key builder for identity "<tenant>" or "<tenant>/<key id>": {tenant:<id>}:<parts>[:<key id>]."""
    def build(identity: str) -> str:
        tenant, _, key_id = identity.partition("/")
        return ":".join([f"{{tenant:{tenant}}}", *parts, *([key_id] if key_id else [])])
    return build


def rule_policy(rule: Limit) -> str:
    """The limit's RateLimit-Policy item, as the library writes it."""
    return Decision(True, rule.quota, rule.quota, 0, 0, name=rule.name, rule=rule).headers()["RateLimit-Policy"]


def policy_field(rules: Sequence[Limit]) -> str:
    return ", ".join(rule_policy(r) for r in rules)


def most_restrictive(subs: Sequence[Decision], costs: Sequence[int], allowed: bool) -> Decision:
    if not allowed:
        return max((d for d in subs if not d.allowed), key=lambda d: float("inf") if d.never else d.retry_after_ms)
    return min(zip(subs, costs), key=lambda dc: (dc[0].remaining // max(1, dc[1]), -dc[0].reset_after_ms))[0]


def rate_headers(policy_header: str, subs: Sequence[Decision], costs: Sequence[int], allowed: bool) -> Dict[str, str]:
    top = most_restrictive(subs, costs, allowed)
    return {"RateLimit-Policy": policy_header, "RateLimit": top.headers()["RateLimit"]}


def answer(d: Decision, policy_header: str, subs: List[Decision], costs: List[int]
           ) -> Tuple[int, Dict[str, str], Optional[dict]]:
    """(status, headers, body) of a decision on rate limits: 200, 429 with Retry-After, or 413 for a
    cost no limit can ever admit (retry_after_ms -1: waiting cannot help, so no Retry-After)."""
    headers = rate_headers(policy_header, subs, costs, d.allowed)
    if d.allowed:
        return 200, headers, None
    name = most_restrictive(subs, costs, False).name
    if d.never:
        return 413, headers, {"error": "request_too_large", "limit": name}
    headers["Retry-After"] = str(ceil_s(d.retry_after_ms))
    return 429, headers, {"error": "rate_limited", "limit": name, "retry_after_s": ceil_s(d.retry_after_ms)}
