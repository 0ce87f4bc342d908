// POST /v1/chat, the LLM gateway, over real HTTP against a real redis-server.
//
// The upstream is a fake that reports the usage a test gives it, or fails,
// or hangs until the gateway gives up. Token and request limits are per
// hour, so nothing refills during a run; the daily quota runs to the tenant's
// local midnight on the server's real clock, so what depends on the instant
// is checked as a relation (the server decided between the wall-clock
// readings before and after a request).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Redis from 'ioredis';
import { RateLimitedApi, connectRedis, createServer } from '../src/service.js';
import { assertRateLimit, assertRefused, ceilS, request, valuesBetween } from './http.js';
import { RedisServer } from './redisServer.js';

const HOUR = 3_600_000;
const LLM = {
  maxTokensCap: 2000, requestsPerKey: 10, requestsPeriodMs: HOUR,
  tokensPerKey: 1000, tokensPeriodMs: HOUR, tokensPerDay: 1500, upstreamTimeoutMs: 150,
};
const U = HOUR / 1000; // the tokens GCRA gives one token back every U ms (3.6 s)
const DAY_MS = 86_400_000;
// Asia/Kolkata has been UTC+05:30 all year since 1945: its midnights are the
// instants t with (t + 5.5 h) % 24 h == 0, with no time zone database here.
const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET_MS = 19_800_000;
const midnightAfter = (t) => t + DAY_MS - ((t + ZONE_OFFSET_MS) % DAY_MS);
const POLICY = '"requests";q=10;w=3600, "tokens";q=1000;qu="tokens";w=3600, "daily-tokens";q=1500;qu="tokens";w=86400';

const API_KEYS = new Map([
  ['sk-alice', { keyId: 'k-alice', userId: 'alice', tenantId: 'acme', zone: ZONE }],
  ['sk-bob', { keyId: 'k-bob', userId: 'bob', tenantId: 'acme', zone: ZONE }],
  ['sk-carol', { keyId: 'k-carol', userId: 'carol', tenantId: 'globex', zone: 'America/New_York' }],
]);
const REQUESTS = '{tenant:acme}:llm:requests:k-alice';
const TOKENS = '{tenant:acme}:llm:tokens:k-alice';
const DAILY = '{tenant:acme}:llm:daily-tokens';
const SPEC = { requests: ['GCRA', 10, HOUR], tokens: ['GCRA', 1000, HOUR], daily: ['QUOTA', 1500, 'DAY', 'TZ', ZONE] };

// Answers each call with the next scripted step: a usedTokens count, an Error
// to reject with, 'hang' (never answers; the gateway's timeout aborts it), or
// a function run first (it may touch Redis) that returns the count.
class FakeUpstream {
  constructor() {
    this.steps = [];
    this.calls = [];
    this.call = this.call.bind(this);
  }

  async call(body, maxTokens, { signal }) {
    this.calls.push({ body, maxTokens });
    const step = this.steps.shift();
    if (step instanceof Error) throw step;
    if (step === 'hang') {
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }
    const used = typeof step === 'function' ? await step() : step;
    return { usedTokens: used, body: { answer: 'fake', used_tokens: used } };
  }
}

describe('the LLM gateway', () => {
  let redisServer;
  let redis;
  let client;
  let server;
  let port;
  const upstream = new FakeUpstream();
  const logs = [];
  const logger = { warn: (m) => logs.push(m), error: (m) => logs.push(m) };

  before(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.port, '127.0.0.1');
    client = connectRedis(`redis://127.0.0.1:${redisServer.port}/0`, 2000);
    await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
    const api = new RateLimitedApi(client, API_KEYS, { failMode: 'closed', llm: LLM }, { logger, upstream: upstream.call });
    server = createServer(api);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = server.address().port;
  });
  after(async () => {
    client?.disconnect();
    server?.closeAllConnections();
    if (server) await new Promise((resolve) => server.close(resolve));
    redis?.disconnect();
    await redisServer?.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
    upstream.steps.length = 0;
    upstream.calls.length = 0;
    logs.length = 0;
  });

  const chat = (key, maxTokens, ...steps) => {
    upstream.steps.push(...steps);
    return request(port, 'POST', '/v1/chat', { key, body: { max_tokens: maxTokens, messages: [{ content: 'hi' }] } });
  };
  // Each [key, spec] read at one server instant (one RL.ALL ... PEEK with COST 0).
  const peek = async (...pairs) => {
    const args = pairs.flatMap(([, spec]) => [...spec, 'COST', 0]);
    const [, , ...replies] = await redis.call('RL.ALL', pairs.length, ...pairs.map(([k]) => k), ...args, 'PEEK');
    return replies;
  };

  it('leaves, after reserve then settle, the state of consuming what was used', async () => {
    const reply = await chat('sk-alice', 800, 312);
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { answer: 'fake', used_tokens: 312 });
    assert.equal(upstream.calls[0].maxTokens, 800);
    // Fresh keys that consume 312 tokens now, after the fact.
    await redis.call('RL.GCRA', '{tenant:acme}:fresh-tokens', 1000, HOUR, 'COST', 312);
    await redis.call('RL.QUOTA', '{tenant:acme}:fresh-daily', 1500, 'DAY', 'TZ', ZONE, 'COST', 312);
    const freshAt = Date.now();
    const [tokens, freshTokens, daily, freshDaily, requests] = await peek(
      [TOKENS, SPEC.tokens], ['{tenant:acme}:fresh-tokens', SPEC.tokens],
      [DAILY, SPEC.daily], ['{tenant:acme}:fresh-daily', SPEC.daily], [REQUESTS, SPEC.requests]);
    // The replies were read after this: time runs on between freshAt and the peek.
    const peekedAt = Date.now();
    // The daily quota: one count in one window; every field equal.
    assert.deepEqual(daily, freshDaily);
    assert.deepEqual(daily.slice(0, 4), [1, 1500, 1188, 0]);
    // The tokens GCRA: as if 312 had been consumed at the reservation. The
    // fresh key consumed them later, so it is full later by exactly the time
    // between the two, which the wall clock brackets.
    assert.deepEqual(tokens.slice(0, 4), freshTokens.slice(0, 4));
    assert.deepEqual(tokens.slice(0, 4), [1, 1000, 688, 0]);
    const gap = freshTokens[4] - tokens[4];
    assert.ok(gap >= 0 && gap <= freshAt - reply.before, `${tokens} vs ${freshTokens}`);
    assert.ok(tokens[4] <= 312 * U && tokens[4] >= 312 * U - (peekedAt - reply.before), String(tokens));
    // PTTL is reset_after_ms (SPEC), so the key expires when full.
    assert.ok(Math.abs((await redis.pttl(TOKENS)) - tokens[4]) <= Date.now() - reply.before + 5);
    // The request unit is spent.
    assert.deepEqual(requests.slice(0, 3), [1, 10, 9]);
    // RateLimit: "tokens" admits no more requests of 800 (688 / 800 < 1); its
    // next token comes one U after the reservation (draft 4.1.2: t is the
    // time within which no more than r can be used).
    assertRateLimit(reply, 'tokens', 688, valuesBetween((d) => ceilS(U - d), [0, reply.after - reply.before]), POLICY);
    assert.equal(reply.headers['retry-after'], undefined);
  });

  it('refunds every token of a failed or timed-out call, and keeps the request', async () => {
    const failed = await chat('sk-alice', 800, new Error('connection reset'));
    assert.deepEqual([failed.status, failed.body], [502, { error: 'upstream_failed' }]);
    const timedOut = await chat('sk-alice', 800, 'hang');
    assert.deepEqual([timedOut.status, timedOut.body], [504, { error: 'upstream_timeout' }]);
    assert.deepEqual(logs, ['upstream failed (Error)', 'upstream timed out after 150 ms']);
    // Refunding all of a reservation made from idle leaves the limits full,
    // so their keys are gone; the requests limit keeps both units.
    assert.deepEqual(await redis.keys('*'), [REQUESTS]);
    const [requests] = await peek([REQUESTS, SPEC.requests]);
    assert.deepEqual(requests.slice(0, 3), [1, 10, 8]);
    // Both token limits are full (1000 / 800 and 1500 / 800 round down to 1,
    // the requests limit 8): a tie, which the first token limit wins, full.
    assertRateLimit(timedOut, 'tokens', 1000, [0], POLICY);
  });

  it('denies on the tokens limit with the exact Retry-After', async () => {
    const first = await chat('sk-alice', 800, 700);
    assert.equal(first.status, 200);
    const denied = await chat('sk-alice', 500); // 300 tokens left, 500 asked for
    // The GCRA holds 700 tokens from the first call; 500 fit once 200 have
    // come back: 200 U after the first call.
    const since = [Math.max(0, denied.before - first.after), denied.after - first.before];
    assert.ok(valuesBetween((d) => ceilS(200 * U - d), since).has(Number(denied.headers['retry-after'])));
    assertRefused(denied, 'tokens', 300, POLICY);
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'tokens', retry_after_s: Number(denied.headers['retry-after']) });
    // Not called, nothing taken (all or nothing): still 1 request and 700 tokens.
    assert.equal(upstream.calls.length, 1);
    const [requests, daily] = await peek([REQUESTS, SPEC.requests], [DAILY, SPEC.daily]);
    assert.deepEqual([requests[2], daily[2]], [9, 800]);
  });

  it("denies on the daily quota until the tenant's local midnight", async () => {
    assert.equal((await chat('sk-alice', 1000, 1000)).status, 200);
    // Bob's own tokens limit is fresh, but his tenant has 500 tokens left today.
    const denied = await chat('sk-bob', 600);
    assertRefused(denied, 'daily-tokens', 500, POLICY);
    assert.equal(denied.body.limit, 'daily-tokens');
    // RL.QUOTA's window ends, and its key expires, at the next midnight in
    // Asia/Kolkata after the request; Retry-After runs to it.
    const end = await redis.call('PEXPIRETIME', DAILY);
    assert.equal(end, midnightAfter(denied.before));
    assert.equal(end, midnightAfter(denied.after));
    assert.ok(valuesBetween((t) => ceilS(end - t), [denied.before, denied.after]).has(Number(denied.headers['retry-after'])));
    // Another tenant, in another zone, is not affected.
    assert.equal((await chat('sk-carol', 600, 600)).status, 200);
  });

  it('fills a limit to full on refund, and no further', async () => {
    // Someone else gives 700 of the 800 back while the call runs (a refund
    // retried blindly would do this): 100 stay reserved.
    const reply = await chat('sk-alice', 800, async () => {
      await redis.call('RL.GCRA', TOKENS, 1000, HOUR, 'REFUND', 700);
      return 312;
    });
    assert.equal(reply.status, 200);
    // The settle refunds 488 of the 100 left: full, not 388 above it.
    assert.equal(await redis.exists(TOKENS), 0);
    const [tokens, daily] = await peek([TOKENS, SPEC.tokens], [DAILY, SPEC.daily]);
    assert.deepEqual(tokens, [1, 1000, 1000, 0, 0]);
    assert.deepEqual(daily.slice(0, 4), [1, 1500, 1188, 0]);
    // Now the daily quota is the most restrictive (1188 / 800 rounds down to
    // 1, as the tokens' 1000 / 800, but it is full later); t runs to midnight.
    assertRateLimit(reply, 'daily-tokens', 1188,
      valuesBetween((t) => ceilS(midnightAfter(t) - t), [reply.before, reply.after]), POLICY);
  });

  it('charges an overshoot as far as each limit has room', async () => {
    assert.equal((await chat('sk-alice', 800, 900)).status, 200); // 100 more than asked for
    let [tokens, daily] = await peek([TOKENS, SPEC.tokens], [DAILY, SPEC.daily]);
    assert.deepEqual([tokens[2], daily[2]], [100, 600]); // 900 charged on both
    // Bob reserves 500 (the tenant then has 100 left today) and uses 1000:
    // his tokens limit has room for the 500 more, the daily quota for 100
    // only, so it takes those 100 and is empty.
    assert.equal((await chat('sk-bob', 500, 1000)).status, 200);
    [tokens, daily] = await peek(['{tenant:acme}:llm:tokens:k-bob', SPEC.tokens], [DAILY, SPEC.daily]);
    assert.deepEqual([tokens[2], daily[2]], [0, 0]);
    assert.equal((await chat('sk-carol', 1, 1)).status, 200); // another tenant: unaffected
    assert.equal(logs.length, 2);
  });

  it('does not retry a failed settle, and keeps the tokens charged', async () => {
    await redis.config('RESETSTAT');
    const reply = await chat('sk-alice', 800, async () => {
      // The settle call will fail (WRONGTYPE): a stand-in for any error, a
      // timeout included, after which the refund may or may not have been applied.
      await redis.del(DAILY);
      await redis.set(DAILY, 'not a limiter');
      return 312;
    });
    assert.equal(reply.status, 200); // the answer was served: it stands
    assert.match(logs[0], /^settling 488 tokens failed \(ReplyError\); not retried/);
    // One RL.ALL reserved, one tried to settle: no second attempt.
    const stats = (await redis.info('commandstats')).toLowerCase();
    assert.match(stats, /^cmdstat_rl\.all:calls=2,/m);
    const [tokens] = await peek([TOKENS, SPEC.tokens]);
    assert.equal(tokens[2], 200); // all 800 still charged: stricter, never looser
  });

  it('answers 413 to a reservation no limit can ever allow', async () => {
    // 1200 is within the cap (2000) but more than the tokens limit holds.
    const reply = await chat('sk-alice', 1200);
    assert.equal(reply.status, 413);
    assert.deepEqual(reply.body, { error: 'request_too_large', limit: 'tokens' });
    assert.equal(reply.headers['retry-after'], undefined);
    assertRateLimit(reply, 'tokens', 1000, [0], POLICY);
    assert.deepEqual([upstream.calls.length, await redis.dbsize()], [0, 0]);
  });

  it('validates max_tokens before anything is reserved', async () => {
    for (const body of [{}, { max_tokens: 0 }, { max_tokens: -1 }, { max_tokens: 2001 }, { max_tokens: '10' },
      { max_tokens: 10.5 }, { max_tokens: true }, { max_tokens: null }, [800], '800']) {
      const reply = await request(port, 'POST', '/v1/chat', { key: 'sk-alice', body });
      assert.equal(reply.status, 400, JSON.stringify(body));
      assert.equal(reply.body.error, 'bad_request');
      assert.equal(reply.headers.ratelimit, undefined);
    }
    assert.equal((await request(port, 'POST', '/v1/chat', { key: 'sk-mallory', body: { max_tokens: 1 } })).status, 401);
    assert.deepEqual([upstream.calls.length, await redis.dbsize()], [0, 0]);
  });
});

describe('the LLM gateway without Redis', () => {
  // Redis is gone: the route follows the service's fail mode.
  let redisServer;
  const services = {};
  const upstream = new FakeUpstream();
  const quiet = { warn() {}, error() {} };

  before(async () => {
    redisServer = await RedisServer.start();
    for (const failMode of ['open', 'closed']) {
      const client = connectRedis(`redis://127.0.0.1:${redisServer.port}/0`, 200);
      await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
      const config = { failMode, instances: 1, globalLimit: 2, globalPeriodMs: HOUR, llm: LLM };
      const server = createServer(new RateLimitedApi(client, API_KEYS, config, { logger: quiet, upstream: upstream.call }));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      services[failMode] = { client, server, port: server.address().port };
    }
    await redisServer.kill();
  });
  after(async () => {
    for (const { client, server } of Object.values(services)) {
      client.disconnect();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await redisServer?.stop();
  });

  const chat = (mode, maxTokens, ...steps) => {
    upstream.steps.push(...steps);
    return request(services[mode].port, 'POST', '/v1/chat', { key: 'sk-alice', body: { max_tokens: maxTokens } });
  };

  it('serves through the local limit when failing open, and answers 503 when failing closed', async () => {
    const closed = await chat('closed', 800);
    assert.deepEqual([closed.status, closed.body], [503, { error: 'rate_limiter_unavailable' }]);
    // Served with no token accounting (nothing reserved, nothing to settle),
    // counted as one request by the local limit of 2 an hour.
    const served = await chat('open', 800, 312);
    assert.deepEqual([served.status, served.body], [200, { answer: 'fake', used_tokens: 312 }]);
    assert.equal(served.headers['ratelimit-policy'], '"fallback";q=2;w=3600');
    assert.equal(served.headers.ratelimit, '"fallback";r=1;t=1800');
    assert.equal(upstream.calls.length, 1);
  });
});
