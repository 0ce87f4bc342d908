// An LLM gateway route: reserve max_tokens, call the model, settle what it used.
//
// The real cost of a model call, its tokens, is known only after the call.
// So POST /v1/chat, after the caller is authenticated:
//
// 1. validates `max_tokens` (a positive integer, at most maxTokensCap);
// 2. reserves, with ONE RL.ALL, all or nothing:
//      "requests"      1 from the API key's requests per second (GCRA),
//      "tokens"        max_tokens from the API key's tokens per minute (GCRA),
//      "daily-tokens"  max_tokens from the tenant's daily token quota
//                      (RL.QUOTA DAY in the tenant's time zone: it resets at
//                      the tenant's local midnight);
//    and, in the same call, a slot of two concurrency limits (leases, see
//    below):
//      "concurrent"    the API key's model calls in flight (CONCURRENCY);
//      "upstream"      the tenant's share of the model upstream's
//                      connections, the shared dependency (CONCURRENCY);
//    the five keys share the hash tag {tenant:<id>}, so one cluster slot.
//    Refused: 429 with Retry-After; a full upstream is 503 (see below); a
//    reservation no limit can ever allow (retry -1) is 413, as the service's
//    other routes answer "never";
// 3. calls the upstream (injectable: the tests use a fake one), for at most
//    upstreamTimeoutMs, then releases both slots, in a `finally`: after an
//    answer, a failure or a timeout;
// 4. settles, with ONE RL.ALL (the library's refundAll), from this same code path: REFUND
//    max_tokens - used_tokens on the two token limits. A failed or timed-out
//    call refunds all max_tokens. The request unit stays spent: the request
//    did reach the gateway and the upstream (it took a connection, and
//    possibly model time, before it failed), and a key whose calls fail, or
//    that makes them fail (a prompt that times out), must not get an
//    unlimited request rate out of it.
//
// A refund is never idempotent: each one gives units back, so a retried
// refund gives them back twice (up to full). The settle call is therefore
// made exactly once and never retried, not even after a timeout (the first
// may have been applied): if it fails, the tokens stay charged, the error
// that can only make the limit stricter, and it is logged.
//
// An upstream that reports more than max_tokens (it should not: max_tokens
// caps the answer) gets no refund, and the excess is charged as far as it
// fits: a denied RL.ALL writes nothing (SPEC: all or nothing), so one RL.ALL
// with COST excess would charge neither limit whenever one of them lacks the
// room. Instead each token limit is charged on its own (the library's
// Reservation.settle: RL.GCRA and RL.QUOTA with COST excess, side by side); a
// limit without the room for all of it is then charged what it has left, so it is empty and the next requests
// wait for it. The served request is never undone, and the rest of the
// excess, beyond empty, is not recorded (a limiter holds no debt).
//
// Concurrency: rate limits do not stop 20 slow calls from holding 20 model
// connections for half a minute each; a concurrency limit bounds what is in
// flight. Each slot is a lease (RL.ALL's CONCURRENCY spec) with a deadline
// leaseMs away, longer than the upstream timeout, so a gateway that dies
// mid-call frees its slots by itself at the deadline, and a live call never
// outlasts its lease. The lease id is the request's own id, made here (never
// one the client sends: a lease id named on a shared key renews that lease,
// so a client that chose the id of another's lease would get in without a
// slot). Both leases are released, once, with RL.RELEASE in a `finally` as
// soon as the upstream call is over, before the tokens are settled. A
// release that answers 0 found the lease already gone (it expired: the work
// ran past leaseMs, so for a while more calls ran than the limit allows):
// that is logged and not retried, as there is nothing left to release; a
// release that fails is logged too, and the lease expires by itself. For
// work that can run longer than any lease you would pick (streaming), renew
// the leases on a timer, RL.RENEW key leaseId leaseMs every leaseMs / 3; a
// renewal that answers 0 means the slot is lost: stop the work, or acquire
// again.
//
// Who answers what: a full per-key limit is the caller's own doing: 429. A
// full upstream is the service's capacity, not the caller's fault: 503, load
// shedding, so clients and load balancers back off. Both send Retry-After
// from the reply: when enough leases expire if none is released, an upper
// bound (a release usually frees a slot sooner). When several limits deny,
// the one with the longest wait answers (as for the RateLimit field; "never"
// counts as the longest), ties to the first in key order: requests, tokens,
// daily tokens, concurrent, upstream. So a caller at its own cap gets 429
// even when the upstream is full too: its leases are among the upstream's
// and were taken with the same leaseMs, so its wait is never shorter. The
// RateLimit fields describe the three rate limits only: a slot is given back
// when the request ends, it is not a quota spent over a window, so a 429 or
// 503 from a concurrency limit carries Retry-After alone.

import { randomUUID } from 'node:crypto';
import { Concurrency, Decision, Gcra, Quota, Reservation } from 'redis-rl';
import { answer, ceilS, policyField } from './ratelimitHeaders.js';

export const CHAT_PATH = '/v1/chat';

// Keys: the identity of every check is the caller (`who`); each limit's key
// function names its key, under one hash tag per tenant, {tenant:<id>}, so
// all keys of one RL.ALL share a cluster slot. Server-side ids only.
export const tagged = (suffix) => (who) => `{tenant:${who.tenantId}}:${suffix(who)}`;

export const DEFAULT_LLM_LIMITS = Object.freeze({
  maxTokensCap: 4096, // the largest max_tokens one request may ask for (400 above it)
  requestsPerKey: 2, // per API key: GCRA, 2 requests per second
  requestsPeriodMs: 1_000,
  tokensPerKey: 20_000, // per API key: GCRA, 20,000 tokens per minute, all at once from idle
  tokensPeriodMs: 60_000,
  tokensPerDay: 1_000_000, // per tenant: quota, from the tenant's local midnight to the next
  upstreamTimeoutMs: 30_000,
  concurrentPerKey: 2, // per API key: model calls in flight at once (429 when full)
  upstreamConcurrency: 8, // per tenant: its share of the upstream's connections (503 when full)
  leaseMs: 40_000, // a slot's lease: longer than upstreamTimeoutMs, so no live call outlasts it
});

// The model API: async upstream(body, maxTokens, { signal }) -> { usedTokens, body }.
// It rejects when the call failed; `signal` aborts when the gateway stops
// waiting (after upstreamTimeoutMs), and a rejection named TimeoutError (as
// fetch's with AbortSignal.timeout) also counts as a timeout.

// Stands in for a model when the service is run by hand: it answers at once
// and "uses" one token per word of the messages plus 8, at most maxTokens.
export async function demoUpstream(body, maxTokens) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const words = messages.reduce((n, m) => n + String(m?.content ?? '').split(/\s+/).filter(Boolean).length, 0);
  const used = Math.min(maxTokens, words + 8);
  return {
    usedTokens: used,
    body: { choices: [{ message: { role: 'assistant', content: '(demo) Hello!' } }], usage: { total_tokens: used } },
  };
}

export class BadChatRequest extends Error {}

// The request's max_tokens: a JSON integer from 1 to cap (BadChatRequest otherwise).
export function parseMaxTokens(body, cap) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadChatRequest('expected a JSON object {"max_tokens": n, ...}');
  }
  const n = body.max_tokens;
  if (!Number.isSafeInteger(n) || n < 1 || n > cap) throw new BadChatRequest(`max_tokens must be an integer from 1 to ${cap}`);
  return n;
}

export class LlmGateway {
  // limiter: the service's redis-rl Limiter (every limit fails "closed" there).
  constructor(limiter, limits, upstream, logger = console) {
    this.limiter = limiter;
    this.limits = { ...DEFAULT_LLM_LIMITS, ...limits };
    this.upstream = upstream;
    this.logger = logger;
    const l = this.limits;
    // A lease that ends while its call still runs frees a slot that is in use.
    if (!(l.leaseMs > l.upstreamTimeoutMs)) throw new RangeError('leaseMs must be longer than upstreamTimeoutMs');
    // Keys: one hash tag per tenant, server-side ids only (see service.js).
    // The token limits count tokens (qu, see ratelimitHeaders.js).
    this.requests = new Gcra(l.requestsPerKey, l.requestsPeriodMs,
      { name: 'requests', key: tagged((who) => `llm:requests:${who.keyId}`) });
    this.tokens = new Gcra(l.tokensPerKey, l.tokensPeriodMs,
      { name: 'tokens', unit: 'tokens', key: tagged((who) => `llm:tokens:${who.keyId}`) });
    this.concurrent = new Concurrency(l.concurrentPerKey, l.leaseMs,
      { name: 'concurrent', key: tagged((who) => `llm:concurrent:${who.keyId}`) });
    this.upstreamSlots = new Concurrency(l.upstreamConcurrency, l.leaseMs,
      { name: 'upstream', key: tagged(() => 'llm:upstream') });
    this.dailyByZone = new Map();
    // A local day lasts 23 to 25 hours; w says 86400.
    this.policyHeader = policyField([this.requests, this.tokens, this.daily('UTC')]);
  }

  // The tenant's daily token quota, in its time zone (one Limit per zone).
  daily(zone) {
    let q = this.dailyByZone.get(zone);
    if (!q) {
      q = new Quota(this.limits.tokensPerDay, 'DAY', { tz: zone, name: 'daily-tokens', unit: 'tokens',
        key: tagged(() => 'llm:daily-tokens') });
      this.dailyByZone.set(zone, q);
    }
    return q;
  }

  // -> { status, headers, body }. withoutRedis() is the service's fail mode.
  async chat(who, body, maxTokens, withoutRedis) {
    // The request's id, made here, names its leases (see the comment on top).
    const leaseId = randomUUID();
    const daily = this.daily(who.zone ?? 'UTC');
    const d = await this.limiter.checkAll([[this.requests, who], [this.tokens, who, maxTokens],
      [daily, who, maxTokens], [this.concurrent, who, 1, leaseId], [this.upstreamSlots, who, 1, leaseId]]);
    if (d.source === 'fail_closed') {
      this.logger.warn(`rate limiter unavailable (${d.error.name}: ${d.error.message}) for ${CHAT_PATH}`);
      const verdict = withoutRedis();
      if (verdict.status !== 200) return verdict;
      // Served through the local fallback limit, which counted the request:
      // no tokens were reserved, so there is nothing to settle.
      const { status, body: reply } = await this.callUpstream(body, maxTokens);
      return { status, headers: verdict.headers, body: reply };
    }
    if (!d.allowed) {
      const top = d.deniedBy[0]; // the longest wait ("never" the longest), ties to the first
      if (top.policy.isConcurrency) {
        // 429 for the caller's own calls in flight, 503 for a full upstream
        // (load shedding); Retry-After only.
        const [status, error] = top.policy === this.concurrent ? [429, 'too_many_concurrent_requests'] : [503, 'upstream_busy'];
        const s = ceilS(d.retryAfterMs);
        return { status, headers: { 'Retry-After': String(s) }, body: { error, limit: top.name, retry_after_s: s } };
      }
      return answer(d, this.policyHeader); // 429, or 413 for more than the limit can ever hold
    }

    let outcome;
    try {
      outcome = await this.callUpstream(body, maxTokens);
    } finally {
      // The slots are free as soon as the call is over, whatever ended it.
      await this.release(who, leaseId);
    }
    const { status, body: reply, used } = outcome;
    // Settle exactly once, here, on every path out of the call.
    const [requests, tokens, day] = d.decisions;
    const settled = await this.settle(who, daily, maxTokens, used, [tokens, day]);
    // RateLimit: the three rate limits after the settle, each per request of this cost.
    settled.forEach((x) => { x.cost = maxTokens; });
    const after = new Decision(requests, requests.policy, requests.key, 1);
    after.decisions = [requests, ...settled];
    after.deniedBy = [];
    return { status, headers: answer(after, this.policyHeader).headers, body: reply };
  }

  // RL.RELEASE each lease, once (the keys share a slot). Never retried, and
  // never throws: the answer stands whatever happens here.
  async release(who, leaseId) {
    await Promise.all([this.concurrent, this.upstreamSlots].map(async (limit) => {
      let ended;
      try {
        ended = await this.limiter.release(limit, who, leaseId);
      } catch (err) {
        this.logger.error(`releasing the ${limit.name} lease failed (${err.name}); ` +
          `not retried: it expires within ${this.limits.leaseMs} ms`);
        return;
      }
      // Expired before the work ended: there is nothing left to release,
      // and leaseMs is shorter than the work.
      if (!ended) {
        this.logger.warn(`the ${limit.name} lease had ended before its release ` +
          `(held past leaseMs, ${this.limits.leaseMs} ms); not retried`);
      }
    }));
  }

  // -> { status, body, used }; a failed call used no tokens.
  async callUpstream(body, maxTokens) {
    const ms = this.limits.upstreamTimeoutMs;
    const controller = new AbortController();
    let timer;
    const timeout = new Promise((resolve, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`no answer within ${ms} ms`);
        err.name = 'TimeoutError';
        controller.abort(err);
        reject(err);
      }, ms);
    });
    const call = Promise.resolve().then(() => this.upstream(body, maxTokens, { signal: controller.signal }));
    call.catch(() => {}); // it may still reject after we stopped waiting
    let completion;
    try {
      completion = await Promise.race([call, timeout]);
    } catch (err) {
      // Whatever the upstream did, the reservation must be settled.
      if (err?.name === 'TimeoutError') {
        this.logger.warn(`upstream timed out after ${ms} ms`);
        return { status: 504, body: { error: 'upstream_timeout' }, used: 0 };
      }
      this.logger.warn(`upstream failed (${err?.name})`);
      return { status: 502, body: { error: 'upstream_failed' }, used: 0 };
    } finally {
      clearTimeout(timer);
    }
    let used = completion?.usedTokens;
    if (!Number.isSafeInteger(used) || used < 0) {
      // Served, but the cost is unknown: keep the whole reservation.
      this.logger.warn(`upstream reported no usable usedTokens (${used}): nothing refunded`);
      used = maxTokens;
    }
    return { status: 200, body: completion.body, used };
  }

  // Refund the unused tokens, or charge an overshoot. Called once; never
  // retried. -> the token limits' decisions after it, for the RateLimit field.
  async settle(who, daily, reserved, used, before) {
    if (used === reserved) return before; // REFUND 0 is a range error, and there is nothing to do
    if (used > reserved) {
      this.logger.warn(`upstream used ${used - reserved} tokens more than max_tokens: charging them as far as they fit`);
      // Each limit on its own (a limit that lacks the room must not stop the
      // other from charging): the library's Reservation charges the excess,
      // or what is left when it does not fit.
      const got = await Promise.all([this.tokens, daily].map((limit, i) =>
        new Reservation(this.limiter, limit, who, reserved, before[i]).settle(used)));
      if (got.includes(null)) this.logger.error('charging the excess failed; not retried');
      return got.map((x, i) => x ?? before[i]);
    }
    const refund = reserved - used;
    try {
      // One RL.ALL: both refunds or neither.
      return (await this.limiter.refundAll([[this.tokens, who, refund], [daily, who, refund]])).decisions;
    } catch (err) {
      // Not retried: the refund may have been applied before the error (a
      // timeout), and a second one would give the tokens back twice. The
      // tokens stay charged: stricter, never looser.
      this.logger.error(`settling ${refund} tokens failed (${err.name}); not retried, a refund is not idempotent`);
      return before;
    }
  }
}
