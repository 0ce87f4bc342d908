"""An LLM gateway route: reserve max_tokens, call the model, settle what it used.

The real cost of a model call, its tokens, is known only after the call.
So POST /v1/chat, after the caller is authenticated:

1. validates `max_tokens` (a positive integer, at most `max_tokens_cap`);
2. reserves, with ONE RL.ALL, all or nothing:
     "requests"      1 from the API key's requests per second (GCRA),
     "tokens"        max_tokens from the API key's tokens per minute (GCRA),
     "daily-tokens"  max_tokens from the tenant's daily token quota
                     (RL.QUOTA DAY in the tenant's time zone: it resets at
                     the tenant's local midnight);
   and, in the same call, a slot of two concurrency limits (leases, see
   below):
     "concurrent"    the API key's model calls in flight (CONCURRENCY);
     "upstream"      the tenant's share of the model upstream's connections,
                     the shared dependency (CONCURRENCY);
   the five keys share the hash tag {tenant:<id>}, so one cluster slot.
   Refused: 429 with Retry-After; a full upstream is 503 (see below); a
   reservation no limit can ever allow (retry -1) is 413, as the service's
   other routes answer "never";
3. calls the upstream (injectable: the tests use a fake one), then releases
   both slots, in a `finally`: after an answer, a failure or a timeout;
4. settles, with ONE RL.ALL, from this same code path: REFUND
   max_tokens - used_tokens on the two token limits. A failed or timed-out
   call refunds all max_tokens. The request unit stays spent: the request
   did reach the gateway and the upstream (it took a connection, and
   possibly model time, before it failed), and a key whose calls fail, or
   that makes them fail (a prompt that times out), must not get an
   unlimited request rate out of it.

A refund is never idempotent: each one gives units back, so a retried
refund gives them back twice (up to full). The settle call is therefore
made exactly once and never retried, not even after a timeout (the first
may have been applied): if it fails, the tokens stay charged, the error
that can only make the limit stricter, and it is logged.

An upstream that reports more than max_tokens (it should not: max_tokens
caps the answer) gets no refund, and the excess is charged as far as it
fits: a denied RL.ALL writes nothing (SPEC: all or nothing), so one RL.ALL
with COST excess would charge neither limit whenever one of them lacks the
room. Instead each token limit is charged on its own (RL.GCRA and RL.QUOTA
with COST excess); a limit without the room for all of it
is then charged what it has left, so it is empty and the next requests wait
for it. The served request is never undone, and the rest of the excess,
beyond empty, is not recorded (a limiter holds no debt).

Concurrency: rate limits do not stop 20 slow calls from holding 20 model
connections for half a minute each; a concurrency limit bounds what is in
flight. Each slot is a lease (RL.ALL's CONCURRENCY spec) with a deadline
lease_ms away, longer than the upstream timeout, so a gateway that dies
mid-call frees its slots by itself at the deadline, and a live call never
outlasts its lease. The lease id is the server's (never one the client
sends: a lease id named on a shared key renews that lease, so a client that
chose the id of another's lease would get in without a slot).
Both leases are released, once, with RL.RELEASE in a `finally` as soon as
the upstream call is over, before the tokens are settled. A release that
answers 0 found the lease already gone (it expired: the work ran past
lease_ms, so for a while more calls ran than the limit allows): that is
logged and not retried, as there is nothing left to release; a release that
fails is logged too, and the lease expires by itself. For work that can run
longer than any lease you would pick (streaming), renew the leases on a
timer (redis_rl's lease.start_renewer(lease_ms // 3)); a renewal that
answers 0 means the slot is lost: stop the work, or acquire again.

Who answers what: a full per-key limit is the caller's own doing: 429. A
full upstream is the service's capacity, not the caller's fault: 503, load
shedding, so clients and load balancers back off. Both send Retry-After
from the reply: when enough leases expire if none is released, an upper
bound (a release usually frees a slot sooner). When several limits deny,
the one with the longest wait answers (as for the RateLimit field; "never"
counts as the longest), ties to the first in key order: requests, tokens,
daily tokens, concurrent, upstream. So a caller at its own cap gets 429
even when the upstream is full too: its leases are among the upstream's
and were taken with the same lease_ms, so its wait is never shorter. The
RateLimit fields describe the three rate limits only: a slot is given back
when the request ends, it is not a quota spent over a window, so a 429 or
503 from a concurrency limit carries Retry-After alone.
"""

import functools
import logging
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from redis_rl import Concurrency, Decision, Gcra, Limiter, Quota

from ratelimit_headers import answer, ceil_s, policy_field, rate_headers, tenant_key

log = logging.getLogger("ratelimited-service")

CHAT_PATH = "/v1/chat"


@dataclass(frozen=True)
class LlmLimits:
    max_tokens_cap: int = 4096  # the largest max_tokens one request may ask for (400 above it)
    requests_per_key: int = 2  # per API key: GCRA, 2 requests per second
    requests_period_ms: int = 1_000
    tokens_per_key: int = 20_000  # per API key: GCRA, 20,000 tokens per minute, all at once from idle
    tokens_period_ms: int = 60_000
    tokens_per_day: int = 1_000_000  # per tenant: quota, from the tenant's local midnight to the next
    upstream_timeout_s: float = 30.0
    concurrent_per_key: int = 2  # per API key: model calls in flight at once (429 when full)
    upstream_concurrency: int = 8  # per tenant: its share of the upstream's connections (503 when full)
    lease_ms: int = 40_000  # a slot's lease: longer than upstream_timeout_s, so no live call outlasts it


RATE = 3  # the first three limits are the rate limits (the RateLimit fields); then the two concurrency limits


@dataclass(frozen=True)
class Completion:
    used_tokens: int  # what the model call really cost, as the upstream reports it
    body: dict  # what the caller gets back


# The model API: upstream(request body, max_tokens, timeout_s) -> Completion.
# It raises TimeoutError when it gave up after timeout_s, and any other
# exception when the call failed.
Upstream = Callable[[dict, int, float], Completion]


def demo_upstream(body: dict, max_tokens: int, timeout_s: float) -> Completion:
    """Stands in for a model when the service is run by hand: it answers at
    once and "uses" one token per word of the messages plus 8, at most max_tokens."""
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    words = sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))
    used = min(max_tokens, words + 8)
    return Completion(used, {"choices": [{"message": {"role": "assistant", "content": "(demo) Hello!"}}],
                             "usage": {"total_tokens": used}})


def parse_max_tokens(body, cap: int) -> int:
    """The request's max_tokens: a JSON integer from 1 to cap (ValueError otherwise)."""
    if not isinstance(body, dict):
        raise ValueError('expected a JSON object {"max_tokens": n, ...}')
    n = body.get("max_tokens")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= cap:
        raise ValueError(f"max_tokens must be an integer from 1 to {cap}")
    return n


Answer = Tuple[int, Dict[str, str], Optional[dict]]  # status, headers, body


class LlmGateway:
    def __init__(self, limiter: Limiter, limits: LlmLimits, upstream: Upstream):
        self.limiter = limiter
        self.limits = lim = limits
        self.upstream = upstream
        if lim.lease_ms <= lim.upstream_timeout_s * 1000:
            # A lease that ends while its call still runs frees a slot that is in use.
            raise ValueError("lease_ms must be longer than upstream_timeout_s")
        # One hash tag per tenant, server-side ids only: {tenant:<id>}:llm:requests:<key id>, ...
        self.requests = Gcra(lim.requests_per_key, lim.requests_period_ms, name="requests",
                             key=tenant_key("llm", "requests"))
        self.tokens = Gcra(lim.tokens_per_key, lim.tokens_period_ms, name="tokens", unit="tokens",
                           key=tenant_key("llm", "tokens"))
        self.concurrent = Concurrency(lim.concurrent_per_key, lim.lease_ms, name="concurrent",
                                      key=tenant_key("llm", "concurrent"))
        self.upstream_slots = Concurrency(lim.upstream_concurrency, lim.lease_ms, name="upstream",
                                          key=tenant_key("llm", "upstream"))
        # A local day lasts 23 to 25 hours; w says 86400.
        self.policy_header = policy_field([self.requests, self.tokens, self.daily("UTC")])

    @functools.lru_cache(maxsize=1024)
    def daily(self, zone: str) -> Quota:
        """The tenant's daily token quota, from its local midnight to the next (RL.QUOTA DAY TZ zone)."""
        return Quota(self.limits.tokens_per_day, "DAY", tz=zone, name="daily-tokens", unit="tokens",
                     key=tenant_key("llm", "daily-tokens"))

    def chat(self, who, body: dict, max_tokens: int, without_redis: Callable[[], Answer]) -> Answer:
        mine, tenant = f"{who.tenant_id}/{who.key_id}", who.tenant_id
        costs = [1, max_tokens, max_tokens, 1, 1]
        d = self.limiter.check_all(zip([self.requests, self.tokens, self.daily(who.zone), self.concurrent,
                                        self.upstream_slots], [mine, mine, tenant, mine, tenant], costs))
        if d.source != "redis":
            log.warning("rate limiter unavailable (%s) for %s", type(d.decisions[0].error).__name__, CHAT_PATH)
            status, headers, body_ = without_redis()
            if status != 200:
                return status, headers, body_
            # Served through the local fallback limit, which counted the
            # request: no tokens were reserved, so there is nothing to settle.
            status, body_, _ = self._call_upstream(body, max_tokens)
            return status, headers, body_
        subs = d.decisions
        if not d.allowed and isinstance(d.denied_by[0].rule, Concurrency):
            # A concurrency limit waits longest: 429 for the caller's own
            # calls in flight, 503 for a full upstream (load shedding). A slot
            # is not a quota: Retry-After only.
            name = d.denied_by[0].name
            status, error = (429, "too_many_concurrent_requests") if name == "concurrent" else (503, "upstream_busy")
            return status, {"Retry-After": str(ceil_s(d.retry_after_ms))}, {
                "error": error, "limit": name, "retry_after_s": ceil_s(d.retry_after_ms)}
        if not d.allowed:
            return answer(d, self.policy_header, subs[:RATE], costs[:RATE])

        leases = self.limiter.leases(d)
        try:
            status, answer_body, used = self._call_upstream(body, max_tokens)
        finally:
            # The slots are free as soon as the call is over, whatever ended it.
            self._release(leases)
        # Settle exactly once, here, on every path out of the call.
        subs[1:RATE] = self._settle(subs[1:RATE], [mine, tenant], max_tokens, used)
        return status, rate_headers(self.policy_header, subs[:RATE], costs[:RATE], True), answer_body

    def _release(self, leases) -> None:
        """Each lease, once. Never retried: a lease that is gone has nothing left to release."""
        for lease in leases:
            if lease.release():
                continue
            if lease.error is not None:
                log.error("releasing the concurrency leases failed (%s); not retried: the %s lease expires within "
                          "%d ms", type(lease.error).__name__, lease.limit.name, self.limits.lease_ms)
            else:
                # Expired before the work ended: lease_ms is shorter than the work.
                log.warning("the %s lease had ended before its release (held past lease_ms, %d ms); not retried",
                            lease.limit.name, self.limits.lease_ms)

    def _call_upstream(self, body: dict, max_tokens: int) -> Tuple[int, dict, int]:
        """-> (status, body, tokens used); a failed call used none."""
        try:
            completion = self.upstream(body, max_tokens, self.limits.upstream_timeout_s)
        except TimeoutError:
            log.warning("upstream timed out after %ss", self.limits.upstream_timeout_s)
            return 504, {"error": "upstream_timeout"}, 0
        except Exception as exc:  # whatever the upstream raised, the reservation must be settled
            log.warning("upstream failed (%s)", type(exc).__name__)
            return 502, {"error": "upstream_failed"}, 0
        used = completion.used_tokens
        if isinstance(used, bool) or not isinstance(used, int) or used < 0:
            # Served, but the cost is unknown: keep the whole reservation.
            log.warning("upstream reported no usable used_tokens (%r): nothing refunded", used)
            used = max_tokens
        return 200, completion.body, used

    def _charge(self, rule, who: str, excess: int) -> Decision:
        d = self.limiter.check(rule, who, excess)
        if not d.allowed and d.remaining > 0:  # no room for all of it: take what it has left
            d = self.limiter.check(rule, who, d.remaining)
        if d.source != "redis":
            raise d.error or RuntimeError("no answer from Redis")
        return d

    def _settle(self, held: List[Decision], identities: List[str], reserved: int, used: int) -> List[Decision]:
        """Refund the unused tokens (one RL.ALL), or charge an overshoot. Called once; never retried.

        Returns the token limits' state after it, for the RateLimit field."""
        if used == reserved:
            return held  # REFUND 0 is a range error, and there is nothing to do
        rules = [d.rule for d in held]
        if used > reserved:
            log.warning("upstream used %d tokens more than max_tokens: charging them as far as they fit",
                        used - reserved)
            try:
                got = [self._charge(rule, who, used - reserved) for rule, who in zip(rules, identities)]
            except Exception as exc:
                log.error("charging the excess failed (%s); not retried", type(exc).__name__)
                return held
            return got
        refund = reserved - used
        try:
            return self.limiter.refund_all(zip(rules, identities, [refund] * len(rules))).decisions
        except Exception as exc:
            # Not retried: the refund may have been applied before the
            # error (a timeout), and a second one would give the tokens
            # back twice. The tokens stay charged: stricter, never looser.
            log.error("settling %d tokens failed (%s); not retried, a refund is not idempotent", refund,
                      type(exc).__name__)
            return held
