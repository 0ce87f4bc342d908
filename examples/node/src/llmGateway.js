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
// 4. settles, with ONE RL.ALL, from this same code path: REFUND
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
// room. Instead each token limit is charged on its own (RL.GCRA and RL.QUOTA
// with COST excess, in one pipeline); a limit without the room for all of it
// is then charged what it has left, so it is empty and the next requests
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
import { ceilS, mostRestrictive, policy, policyField, ratelimitItem, toReply } from './ratelimitHeaders.js';

export const CHAT_PATH = '/v1/chat';

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

// The RL.ALL of a chat: the three rate limits, then the two concurrency limits.
const RATE = 3; // replies.slice(0, RATE) are the rate limits (the RateLimit fields)
const CONCURRENT = 3;
const CONCURRENCY_NAMES = ['concurrent', 'upstream'];

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
  constructor(redis, limits, upstream, logger = console) {
    this.redis = redis;
    this.limits = { ...DEFAULT_LLM_LIMITS, ...limits };
    this.upstream = upstream;
    this.logger = logger;
    const l = this.limits;
    // A lease that ends while its call still runs frees a slot that is in use.
    if (!(l.leaseMs > l.upstreamTimeoutMs)) throw new RangeError('leaseMs must be longer than upstreamTimeoutMs');
    // q and w of each limit; the token limits count tokens (qu, see
    // ratelimitHeaders.js). A local day lasts 23 to 25 hours; w says 86400.
    this.policies = [
      policy('requests', l.requestsPerKey, ceilS(l.requestsPeriodMs), { refill: [l.requestsPeriodMs, l.requestsPerKey] }),
      policy('tokens', l.tokensPerKey, ceilS(l.tokensPeriodMs), { refill: [l.tokensPeriodMs, l.tokensPerKey], unit: 'tokens' }),
      policy('daily-tokens', l.tokensPerDay, 86_400, { unit: 'tokens' }),
    ];
    this.policyHeader = policyField(this.policies);
  }

  // One hash tag per tenant, server-side ids only (see service.js).
  static keys(who) {
    const tag = `{tenant:${who.tenantId}}`;
    return [`${tag}:llm:requests:${who.keyId}`, `${tag}:llm:tokens:${who.keyId}`, `${tag}:llm:daily-tokens`,
      `${tag}:llm:concurrent:${who.keyId}`, `${tag}:llm:upstream`];
  }

  specs(who, leaseId) {
    const l = this.limits;
    return [
      ['GCRA', l.requestsPerKey, l.requestsPeriodMs],
      ['GCRA', l.tokensPerKey, l.tokensPeriodMs],
      ['QUOTA', l.tokensPerDay, 'DAY', 'TZ', who.zone ?? 'UTC'],
      ['CONCURRENCY', l.concurrentPerKey, l.leaseMs, 'ID', leaseId],
      ['CONCURRENCY', l.upstreamConcurrency, l.leaseMs, 'ID', leaseId],
    ];
  }

  headers(replies, costs, allowed) {
    const i = mostRestrictive(replies, costs, allowed);
    return { 'RateLimit-Policy': this.policyHeader, RateLimit: ratelimitItem(this.policies[i], replies[i]) };
  }

  // -> { status, headers, body }. withoutRedis() is the service's fail mode.
  async chat(who, body, maxTokens, withoutRedis) {
    const keys = LlmGateway.keys(who);
    // The request's id, made here, names its leases (see the comment on top).
    const specs = this.specs(who, randomUUID());
    const costs = [1, maxTokens, maxTokens, 1, 1];
    const args = [keys.length, ...keys];
    specs.forEach((spec, i) => args.push(...spec, 'COST', costs[i]));
    let reply;
    try {
      reply = await this.redis.call('RL.ALL', ...args);
    } catch (err) {
      this.logger.warn(`rate limiter unavailable (${err.name}: ${err.message}) for ${CHAT_PATH}`);
      const verdict = withoutRedis();
      if (verdict.status !== 200) return verdict;
      // Served through the local fallback limit, which counted the request:
      // no tokens were reserved, so there is nothing to settle.
      const { status, body: answer } = await this.callUpstream(body, maxTokens);
      return { status, headers: verdict.headers, body: answer };
    }
    const [allowed, retryMs, ...limits] = reply;
    const replies = limits.map(toReply);
    const leases = limits.slice(RATE).map((r) => r[5]); // the lease ids (null when refused)
    if (allowed !== 1) {
      const i = mostRestrictive(replies, costs, false);
      if (i >= RATE) {
        // A concurrency limit waits longest: 429 for the caller's own calls
        // in flight, 503 for a full upstream (load shedding).
        const [status, error] = i === CONCURRENT ? [429, 'too_many_concurrent_requests'] : [503, 'upstream_busy'];
        return {
          status,
          headers: { 'Retry-After': String(ceilS(retryMs)) },
          body: { error, limit: CONCURRENCY_NAMES[i - RATE], retry_after_s: ceilS(retryMs) },
        };
      }
      const headers = this.headers(replies.slice(0, RATE), costs.slice(0, RATE), false);
      const name = this.policies[i].name;
      if (retryMs < 0) {
        // More than that limit can ever hold (the cap is above it): waiting
        // cannot help, so 413 and no Retry-After.
        return { status: 413, headers, body: { error: 'request_too_large', limit: name } };
      }
      headers['Retry-After'] = String(ceilS(retryMs));
      return { status: 429, headers, body: { error: 'rate_limited', limit: name, retry_after_s: ceilS(retryMs) } };
    }

    let outcome;
    try {
      outcome = await this.callUpstream(body, maxTokens);
    } finally {
      // The slots are free as soon as the call is over, whatever ended it.
      await this.release(keys.slice(RATE), leases);
    }
    const { status, body: answer, used } = outcome;
    // Settle exactly once, here, on every path out of the call.
    const settled = await this.settle(keys.slice(1, RATE), specs.slice(1, RATE), maxTokens, used,
      replies.slice(1, RATE));
    return { status, headers: this.headers([replies[0], ...settled], costs.slice(0, RATE), true), body: answer };
  }

  // RL.RELEASE each lease, once (one pipeline: the keys share a slot). Never
  // retried, and never throws: the answer stands whatever happens here.
  async release(keys, leases) {
    const pipeline = this.redis.pipeline();
    keys.forEach((key, i) => pipeline.call('RL.RELEASE', key, leases[i]));
    let results;
    try {
      results = await pipeline.exec();
    } catch (err) {
      results = keys.map(() => [err]);
    }
    results.forEach(([err, ended], i) => {
      if (err) {
        this.logger.error(`releasing the ${CONCURRENCY_NAMES[i]} lease failed (${err.name}); ` +
          `not retried: it expires within ${this.limits.leaseMs} ms`);
      } else if (ended !== 1) {
        // Expired before the work ended: there is nothing left to release,
        // and leaseMs is shorter than the work.
        this.logger.warn(`the ${CONCURRENCY_NAMES[i]} lease had ended before its release ` +
          `(held past leaseMs, ${this.limits.leaseMs} ms); not retried`);
      }
    });
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
  // retried. -> the token limits' state after it, for the RateLimit field.
  async settle(keys, specs, reserved, used, replies) {
    if (used === reserved) return replies; // REFUND 0 is a range error, and there is nothing to do
    if (used > reserved) return this.chargeExcess(keys, specs, used - reserved, replies);
    const refund = reserved - used;
    const args = [keys.length, ...keys];
    specs.forEach((spec) => args.push(...spec, 'REFUND', refund));
    try {
      const [, , ...limits] = await this.redis.call('RL.ALL', ...args);
      return limits.map(toReply);
    } catch (err) {
      // Not retried: the refund may have been applied before the error (a
      // timeout), and a second one would give the tokens back twice. The
      // tokens stay charged: stricter, never looser.
      this.logger.error(`settling ${refund} tokens failed (${err.name}); not retried, a refund is not idempotent`);
      return replies;
    }
  }

  async chargeExcess(keys, specs, excess, replies) {
    this.logger.warn(`upstream used ${excess} tokens more than max_tokens: charging them as far as they fit`);
    try {
      const got = await this.chargeEach(keys, specs, keys.map(() => excess));
      // A limit without room for all of it takes what it has left.
      const short = got.flatMap((r, i) => (!r.allowed && r.remaining > 0 ? [i] : []));
      if (short.length) {
        const again = await this.chargeEach(short.map((i) => keys[i]), short.map((i) => specs[i]),
          short.map((i) => got[i].remaining));
        short.forEach((i, n) => { got[i] = again[n]; });
      }
      return got;
    } catch (err) {
      this.logger.error(`charging the excess failed (${err.name}); not retried`);
      return replies;
    }
  }

  // One command per limit (RL.GCRA, RL.QUOTA: the spec's keyword), so a limit
  // that lacks the room does not stop the other from charging.
  async chargeEach(keys, specs, costs) {
    const pipeline = this.redis.pipeline();
    keys.forEach((key, i) => {
      const [kind, ...params] = specs[i];
      pipeline.call(`RL.${kind}`, key, ...params, 'COST', costs[i]);
    });
    const results = await pipeline.exec();
    return results.map(([err, reply]) => {
      if (err) throw err;
      return toReply(reply);
    });
  }
}
