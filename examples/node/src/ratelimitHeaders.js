// The RateLimit-Policy and RateLimit fields, draft-ietf-httpapi-ratelimit-headers-11.
//
// Both fields are Structured Field Lists (RFC 9651) of Items whose value is a
// String, the policy's name, with Parameters (draft sections 3 and 4):
//
//     RateLimit-Policy: "key";q=5;w=60, "tokens";q=20000;qu="tokens";w=60
//     RateLimit: "key";r=0;t=12
//
// - q (3.1.1): the quota, a non-negative Integer: the module's `limit` field.
// - qu (3.1.2): the quota unit, a String; absent means requests. The draft's
//   registry (10.3) lists request(s), content-bytes and concurrent-requests
//   only. A token budget is neither: sent without qu, a client would read
//   "20000 requests". We send qu="tokens", a value the registry does not list
//   yet (registration is "Specification Required"), because it is the true
//   unit; a client that knows only the registered units can ignore the item.
// - w (3.1.3): the window, whole seconds, non-zero: here the time an empty
//   limit takes to fill up again (the window a quota of q applies to).
// - r (4.1.1): the available quota: the module's `remaining`.
// - t (4.1.2): "the effective window under the identified policy: the number
//   of seconds within which the client can use no more than the available
//   quota". That is NOT the time until the limit is full again (what these
//   examples sent before): a GCRA or token bucket gives the next unit back
//   long before it is full. So t is the time until one more unit than r
//   becomes available (see effectiveWindowMs).
// - Retry-After with RateLimit (section 6): "If a response contains both the
//   Retry-After and the RateLimit header fields, the Retry-After field value
//   SHOULD NOT reference a point in time earlier than the end of the
//   effective window." A 429 therefore sends t equal to Retry-After (the same
//   moment, as the draft's example in B.1.4), and section 7 tells the client
//   that Retry-After takes precedence.
// - pk (3.1.4, 4.1.3): the partition key, a Byte Sequence. Not sent: every
//   limit here is partitioned by the caller's own API key or tenant, which
//   the caller already knows, and section 6.1 asks servers to build a pk only
//   from what is in the request and to keep sensitive information out of it;
//   our partitions are server-side ids (key id, tenant), which we do not publish.

// Whole seconds, rounded up: waiting the advertised time is always enough.
export const ceilS = (ms) => Math.ceil(ms / 1000);

// A policy: { name (an sf-string), quota (q), windowS (w), refill, unit (qu) }.
// refill: [periodMs, units] when the limit gives `units` back evenly over
// `periodMs` (GCRA, token bucket); null for a limit whose reply does not tell
// when the next unit comes (a quota's window ends at resetAfterMs; a sliding
// window, see effectiveWindowMs). unit: null means requests, the default.
export const policy = (name, quota, windowS, { refill = null, unit = null } = {}) =>
  Object.freeze({ name, quota, windowS, refill, unit });

export const policyItem = (p) => `"${p.name}";q=${p.quota}${p.unit ? `;qu="${p.unit}"` : ''};w=${p.windowS}`;

export const policyField = (policies) => policies.map(policyItem).join(', ');

// Until the limit can admit more than `remaining` (draft 4.1.2's t):
// - a refusal: its retryAfterMs (the moment Retry-After names);
// - full (remaining == limit): 0, nothing is held back;
// - a steady refill of `units` per `periodMs` (GCRA, token bucket): the limit
//   is full again at resetAfterMs and gains one unit every periodMs / units
//   before that, so the next unit comes (limit - remaining - 1) units before full;
// - a fixed window (RL.QUOTA): nothing comes back before the window ends, at
//   resetAfterMs;
// - a sliding window (RL.SLIDE): its reply does not say when the estimate
//   first drops (that depends on how the count splits between the two
//   windows), so resetAfterMs, the time until it is empty: a bound that can
//   only make a client wait longer than it must.
export function effectiveWindowMs(p, reply) {
  if (!reply.allowed && reply.retryAfterMs >= 0) return reply.retryAfterMs;
  if (reply.remaining >= reply.limit) return 0;
  if (!p.refill) return reply.resetAfterMs;
  const [periodMs, units] = p.refill;
  const beforeFull = (reply.limit - reply.remaining - 1) * periodMs;
  return Math.max(0, Math.ceil((reply.resetAfterMs * units - beforeFull) / units));
}

export const ratelimitItem = (p, reply) => `"${p.name}";r=${reply.remaining};t=${ceilS(effectiveWindowMs(p, reply))}`;

// The index of the limit whose numbers go into the RateLimit field.
// Denied: the denying limit with the longest wait (the one that sets
// Retry-After; "never", -1, counts as the longest).
// Allowed: the limit that admits the fewest more requests like this one,
// remaining / cost (each limit counts its own units), ties going to the one
// that takes longest to fill up again.
export function mostRestrictive(replies, costs, allowed) {
  let best = -1;
  let bestRank;
  replies.forEach((r, i) => {
    let rank;
    if (!allowed) {
      if (r.allowed) return;
      rank = [-(r.retryAfterMs < 0 ? Infinity : r.retryAfterMs), 0];
    } else {
      rank = [Math.floor(r.remaining / Math.max(1, costs[i])), -r.resetAfterMs];
    }
    if (best < 0 || rank[0] < bestRank[0] || (rank[0] === bestRank[0] && rank[1] < bestRank[1])) {
      best = i;
      bestRank = rank;
    }
  });
  return best;
}

// One limit's five fields, as RL.GCRA, RL.QUOTA, ... and each RL.ALL entry reply.
export const toReply = ([a, limit, remaining, retryAfterMs, resetAfterMs]) => ({
  allowed: a === 1, limit, remaining, retryAfterMs, resetAfterMs,
});
