"""The RateLimit-Policy and RateLimit fields, draft-ietf-httpapi-ratelimit-headers-11.

Both fields are Structured Field Lists (RFC 9651) of Items whose value is a
String, the policy's name, with Parameters (draft sections 3 and 4):

    RateLimit-Policy: "key";q=5;w=60, "tokens";q=20000;qu="tokens";w=60
    RateLimit: "key";r=0;t=12

- q (3.1.1): the quota, a non-negative Integer: the module's `limit` field.
- qu (3.1.2): the quota unit, a String; absent means requests. The draft's
  registry (10.3) lists request(s), content-bytes and concurrent-requests
  only. A token budget is neither: sent without qu, a client would read
  "20000 requests". We send qu="tokens", a value the registry does not list
  yet (registration is "Specification Required"), because it is the true
  unit; a client that knows only the registered units can ignore the item.
- w (3.1.3): the window, whole seconds, non-zero: here the time an empty
  limit takes to fill up again (the window a quota of q applies to).
- r (4.1.1): the available quota: the module's `remaining`.
- t (4.1.2): "the effective window under the identified policy: the number
  of seconds within which the client can use no more than the available
  quota". That is NOT the time until the limit is full again (what these
  examples sent before): a GCRA or token bucket gives the next unit back
  long before it is full. So t is the time until one more unit than r
  becomes available (see effective_window_ms).
- Retry-After with RateLimit (section 6): "If a response contains both the
  Retry-After and the RateLimit header fields, the Retry-After field value
  SHOULD NOT reference a point in time earlier than the end of the
  effective window." A 429 therefore sends t equal to Retry-After (the
  same moment, as the draft's example in B.1.4), and section 7 tells the
  client that Retry-After takes precedence.
- pk (3.1.4, 4.1.3): the partition key, a Byte Sequence. Not sent: every
  limit here is partitioned by the caller's own API key or tenant, which the
  caller already knows, and section 6.1 asks servers to build a pk only from
  what is in the request and to keep sensitive information out of it; our
  partitions are server-side ids (key id, tenant), which we do not publish.
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from local_bucket import LimitReply


def ceil_s(ms: int) -> int:
    """Whole seconds, rounded up: waiting the advertised time is always enough."""
    return -(-ms // 1000)


@dataclass(frozen=True)
class Policy:
    name: str  # an sf-string: printable ASCII, no '"' or '\\'
    quota: int  # q
    window_s: int  # w
    # How the limit refills, for t: (period_ms, units) when it gives `units`
    # back evenly over `period_ms` (GCRA, token bucket); None for a limit
    # whose reply does not tell when the next unit comes (a quota's window
    # ends at reset_after_ms; a sliding window, see effective_window_ms).
    refill: Optional[Tuple[int, int]] = None
    unit: Optional[str] = None  # qu; None: requests, the draft's default

    def item(self) -> str:
        unit = f';qu="{self.unit}"' if self.unit else ""
        return f'"{self.name}";q={self.quota}{unit};w={self.window_s}'


def policy_field(policies: Sequence[Policy]) -> str:
    return ", ".join(p.item() for p in policies)


def effective_window_ms(policy: Policy, reply: LimitReply) -> int:
    """Until the limit can admit more than `remaining` (draft 4.1.2's t).

    - A refusal: its retry_after_ms (the moment Retry-After names).
    - Full (remaining == limit): 0, nothing is held back.
    - A steady refill of `units` per `period_ms` (GCRA, token bucket): the
      limit is full again at reset_after_ms and gains one unit every
      period_ms / units before that, so the next unit comes
      (limit - remaining - 1) units before full.
    - A fixed window (RL.QUOTA): nothing comes back before the window ends,
      at reset_after_ms.
    - A sliding window (RL.SLIDE): its reply does not say when the estimate
      first drops (that depends on how the count splits between the two
      windows), so reset_after_ms, the time until it is empty: a bound that
      can only make a client wait longer than it must.
    """
    if not reply.allowed and reply.retry_after_ms >= 0:
        return reply.retry_after_ms
    if reply.remaining >= reply.limit:
        return 0
    if policy.refill is None:
        return reply.reset_after_ms
    period_ms, units = policy.refill
    before_full = (reply.limit - reply.remaining - 1) * period_ms
    return max(0, -(-(reply.reset_after_ms * units - before_full) // units))


def ratelimit_item(policy: Policy, reply: LimitReply) -> str:
    return f'"{policy.name}";r={reply.remaining};t={ceil_s(effective_window_ms(policy, reply))}'


def most_restrictive(replies: List[LimitReply], costs: List[int], allowed: bool) -> int:
    """The index of the limit whose numbers go into the RateLimit field.

    Denied: the denying limit with the longest wait (the one that sets
    Retry-After; "never", -1, counts as the longest).
    Allowed: the limit that admits the fewest more requests like this one,
    remaining // cost (each limit counts its own units), ties going to the one
    that takes longest to fill up again.
    """
    if not allowed:
        denying = [i for i, r in enumerate(replies) if not r.allowed]
        return max(denying, key=lambda i: float("inf") if replies[i].retry_after_ms < 0 else replies[i].retry_after_ms)
    return min(range(len(replies)), key=lambda i: (replies[i].remaining // max(1, costs[i]), -replies[i].reset_after_ms))
