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

// The library (redis-rl's Decision.headers()) computes these fields from a
// limit and its reply: q and w from the limit, r from `remaining`, t as the
// effective window above, and Retry-After in whole seconds rounded up. It
// lists every limit, most restrictive first; this API sends the policies in
// a fixed order and, in RateLimit, the most restrictive limit only (when
// refused: the refusing limit with the longest wait, "never" the longest;
// when allowed: the fewest more requests like this one, remaining / cost,
// ties to the one that takes longest to fill up again).

// Whole seconds, rounded up: waiting the advertised time is always enough.
export const ceilS = (ms) => Math.ceil(ms / 1000);

// RateLimit-Policy for these limits (redis-rl Limit values), in this order.
export const policyField = (limits) => limits
  .map((l) => `"${l.name}";q=${l.quota}${l.unit ? `;qu="${l.unit}"` : ''};w=${Math.max(1, ceilS(l.fillMs))}`).join(', ');

// A Decision's fields as this API sends them (see above). Names are
// sf-strings without commas, so the list splits on ", ".
export function headersOf(d, policyHeader) {
  const h = d.headers();
  if (policyHeader && h.RateLimit) {
    h['RateLimit-Policy'] = policyHeader;
    h.RateLimit = h.RateLimit.split(', ')[0];
  }
  return h;
}

// A decision as this API answers it: 200; 413 when the cost can never fit
// (retry_after_ms -1: a 429 would tell the client to wait and retry,
// forever; no Retry-After); else 429 with Retry-After. The body names the
// limit, never an identifier.
export function answer(d, policyHeader) {
  const headers = headersOf(d, policyHeader);
  if (d.allowed) return { status: 200, headers };
  if (d.never) return { status: 413, headers, body: { error: 'request_too_large', limit: d.name } };
  return { status: 429, headers, body: { error: 'rate_limited', limit: d.name, retry_after_s: ceilS(d.retryAfterMs) } };
}
