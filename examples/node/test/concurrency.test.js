// POST /v1/chat's concurrency limits, over real HTTP against a real redis-server.
//
// Two limits hold a slot while a model call runs, acquired in the same RL.ALL
// as the rate limits: "concurrent", per API key (full: 429), and "upstream",
// the tenant's share of the model upstream (full: 503). The rate limits are
// per hour and large, so only the concurrency limits ever deny here.
//
// The fake upstream does what the request's message says: "slow" waits until
// the test opens the gate, "fail" rejects, "hang" never answers (the
// gateway's timeout aborts it), anything else answers at once. Leases are on
// the server's real clock: what depends on the instant is checked as a
// relation; the one wait (a crashed holder's lease running out) is a lease
// of 1 s.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Redis from 'ioredis';
import { LlmGateway } from '../src/llmGateway.js';
import { RateLimitedApi, connectRedis, createServer } from '../src/service.js';
import { ceilS, request } from './http.js';
import { RedisServer } from './redisServer.js';

const HOUR = 3_600_000;
const K = 2; // calls in flight per API key
const DEPENDENCY = 3; // calls in flight per tenant on the upstream
const LEASE = 5_000; // ms; longer than the upstream timeout, as the gateway requires
const LLM = {
  maxTokensCap: 100, requestsPerKey: 100, requestsPeriodMs: HOUR, tokensPerKey: 10_000, tokensPeriodMs: HOUR,
  tokensPerDay: 100_000, upstreamTimeoutMs: 4_000, concurrentPerKey: K, upstreamConcurrency: DEPENDENCY, leaseMs: LEASE,
};
// A second gateway whose upstream timeout is short enough to wait out.
const SHORT = { ...LLM, upstreamTimeoutMs: 150, leaseMs: 1_000 };

const API_KEYS = new Map([
  ['sk-alice', { keyId: 'k-alice', userId: 'alice', tenantId: 'acme' }],
  ['sk-bob', { keyId: 'k-bob', userId: 'bob', tenantId: 'acme' }],
  ['sk-carol', { keyId: 'k-carol', userId: 'carol', tenantId: 'globex' }],
]);
const ALICE = '{tenant:acme}:llm:concurrent:k-alice';
const BOB = '{tenant:acme}:llm:concurrent:k-bob';
const ACME_UPSTREAM = '{tenant:acme}:llm:upstream';
const BOB_REQUESTS = '{tenant:acme}:llm:requests:k-bob';

class GatedUpstream {
  constructor() {
    this.started = []; // the message of each call, in the order they came in
    this.seen = []; // what probe(), if set, gave as each call started
    this.call = this.call.bind(this);
    this.reset();
  }

  reset() {
    this.started.length = 0;
    this.seen.length = 0;
    this.probe = null;
    this.gate = new Promise((resolve) => { this.open = resolve; });
  }

  async call(body, maxTokens, { signal }) {
    const what = body.messages[0].content;
    this.started.push(what);
    if (this.probe) this.seen.push(await this.probe());
    if (what === 'fail') throw new Error('connection reset');
    if (what === 'hang') {
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }
    if (what === 'slow') await this.gate;
    return { usedTokens: 10, body: { answer: what } };
  }
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(condition, what) {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await pause(5); // polling for the handlers, not waiting out a limit
  }
}

describe('the LLM gateway\'s concurrency limits', () => {
  let redisServer;
  let redis;
  const services = {};
  const upstream = new GatedUpstream();
  const logs = [];
  const logger = { warn: (m) => logs.push(m), error: (m) => logs.push(m) };

  before(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.port, '127.0.0.1');
    for (const [name, llm] of Object.entries({ main: LLM, short: SHORT })) {
      const client = connectRedis(`redis://127.0.0.1:${redisServer.port}/0`, 2000);
      await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
      const server = createServer(new RateLimitedApi(client, API_KEYS, { failMode: 'closed', llm },
        { logger, upstream: upstream.call }));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      services[name] = { client, server, port: server.address().port };
    }
  });
  after(async () => {
    upstream.open();
    for (const { client, server } of Object.values(services)) {
      client.disconnect();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    redis?.disconnect();
    await redisServer?.stop();
  });
  beforeEach(async () => {
    // No handler left waiting by an earlier test, to write into this one.
    upstream.open();
    await Promise.allSettled(inFlight);
    await redis.flushall();
    upstream.reset();
    logs.length = 0;
  });

  const inFlight = new Set();
  const chat = (key, what = 'fast', service = 'main') => {
    const reply = request(services[service].port, 'POST', '/v1/chat',
      { key, body: { max_tokens: 10, messages: [{ content: what }] } });
    inFlight.add(reply);
    reply.finally(() => inFlight.delete(reply)).catch(() => {});
    return reply;
  };
  // RL.PEEK CONCURRENCY: COST 0 reads the state as it is; COST 1 answers what an acquire would.
  const peek = (key, limit, cost = 0) => redis.call('RL.PEEK', 'CONCURRENCY', key, limit, LEASE, 'COST', cost);
  const assertReleased = async (...keys) => {
    // Ending the last live lease deletes the key (SPEC: RL.RELEASE).
    assert.equal(await redis.exists(...keys), 0);
  };
  // Retry-After is when the oldest lease (taken at or after t0) expires if never released.
  const assertConcurrencyDenied = (reply, status, error, limit, t0) => {
    assert.equal(reply.status, status);
    const retry = Number(reply.headers['retry-after']);
    assert.ok(ceilS(LEASE - (reply.after - t0)) <= retry && retry <= ceilS(LEASE), `${retry}, ${reply.after - t0}`);
    assert.deepEqual(reply.body, { error, limit, retry_after_s: retry });
    // The RateLimit fields are about the rate limits; a slot is not a quota.
    assert.equal(reply.headers.ratelimit, undefined);
  };

  it('runs exactly K of N concurrent slow calls and answers the rest 429', async () => {
    const t0 = Date.now();
    const done = [];
    const pending = Array.from({ length: 5 }, () => chat('sk-alice', 'slow').then((r) => { done.push(r); return r; }));
    await waitUntil(() => done.length === 3 && upstream.started.length === 2, '3 refusals, 2 calls');
    const refused = [...done];
    for (const reply of refused) assertConcurrencyDenied(reply, 429, 'too_many_concurrent_requests', 'concurrent', t0);
    // While the two run: alice's limit is full, the tenant's upstream holds 2 of 3.
    const [allowed, limit, remaining, retryMs, resetMs, lease] = await peek(ALICE, K, 1);
    assert.deepEqual([allowed, limit, remaining, lease], [0, K, 0, null]);
    assert.ok(retryMs > 0 && retryMs <= resetMs && resetMs <= LEASE, `${retryMs}, ${resetMs}`);
    assert.deepEqual((await peek(ACME_UPSTREAM, DEPENDENCY)).slice(0, 3), [1, DEPENDENCY, 1]);
    upstream.open();
    const served = (await Promise.all(pending)).filter((r) => !refused.includes(r));
    assert.deepEqual(served.map((r) => r.status), [200, 200]);
    assert.equal(upstream.started.length, 2); // the refused never reached the model
    await assertReleased(ALICE, ACME_UPSTREAM);
    assert.equal((await chat('sk-alice')).status, 200); // and the slots are there again
  });

  it('answers 503 when the upstream is full, and another tenant is not affected', async () => {
    const t0 = Date.now();
    const pending = [chat('sk-alice', 'slow'), chat('sk-alice', 'slow'), chat('sk-bob', 'slow')];
    await waitUntil(() => upstream.started.length === 3, '3 slow calls');
    // Bob has 1 of his 2 slots left, but acme's upstream holds 3 of 3.
    assertConcurrencyDenied(await chat('sk-bob'), 503, 'upstream_busy', 'upstream', t0);
    // Alice is at her own cap and the upstream is full: both deny. Her
    // leases are among the upstream's, so her wait is the longer one or a
    // tie, and a tie goes to the first in key order, hers: 429.
    assertConcurrencyDenied(await chat('sk-alice'), 429, 'too_many_concurrent_requests', 'concurrent', t0);
    assert.equal((await chat('sk-carol')).status, 200); // globex's upstream share is its own
    // All or nothing: bob's refused call took no request unit (1 of 100 spent).
    assert.equal((await redis.call('RL.PEEK', 'GCRA', BOB_REQUESTS, 100, HOUR, 'COST', 0))[2], 99);
    upstream.open();
    assert.deepEqual((await Promise.all(pending)).map((r) => r.status), [200, 200, 200]);
    await assertReleased(ALICE, BOB, ACME_UPSTREAM);
    assert.equal((await chat('sk-bob')).status, 200);
  });

  it('releases the leases after an answer, a failure and a timeout', async () => {
    // While each call runs it holds one of alice's slots and one of the upstream's.
    upstream.probe = async () => [(await peek(ALICE, K))[2], (await peek(ACME_UPSTREAM, DEPENDENCY))[2]];
    // K = 2: a third call in a row would be refused if a lease had leaked.
    for (const [what, status, service] of [['fast', 200, 'main'], ['fail', 502, 'main'], ['hang', 504, 'short'],
      ['fast', 200, 'main']]) {
      const reply = await chat('sk-alice', what, service);
      assert.equal(reply.status, status, what);
      await assertReleased(ALICE, ACME_UPSTREAM);
      assert.deepEqual(await peek(ALICE, K), [1, K, K, 0, 0, null]);
    }
    assert.deepEqual(logs, ['upstream failed (Error)', 'upstream timed out after 150 ms']);
    assert.deepEqual(upstream.seen, Array(4).fill([K - 1, DEPENDENCY - 1]));
  });

  it('logs a release that finds the lease gone, and does not retry it', async () => {
    await redis.config('RESETSTAT');
    const pending = chat('sk-alice', 'slow');
    await waitUntil(() => upstream.started.length === 1, 'the slow call');
    await redis.del(ALICE); // the lease ended while the call ran, as if it had outlived leaseMs
    upstream.open();
    assert.equal((await pending).status, 200); // the answer stands
    assert.equal(logs.length, 1, logs);
    assert.match(logs[0], /^the concurrent lease had ended before its release .*; not retried$/);
    // One RL.RELEASE per lease, no second try; the upstream's lease was released.
    const stats = await redis.info('commandstats');
    assert.match(stats, /cmdstat_rl\.release:calls=2,/i);
    await assertReleased(ALICE, ACME_UPSTREAM);
  });

  it('logs a release that fails, and the answer stands', async () => {
    const pending = chat('sk-alice', 'slow');
    await waitUntil(() => upstream.started.length === 1, 'the slow call');
    // RL.RELEASE on alice's key will fail (WRONGTYPE), a stand-in for any error.
    await redis.del(ALICE);
    await redis.set(ALICE, 'not a lease set');
    upstream.open();
    assert.equal((await pending).status, 200);
    assert.deepEqual(logs, ['releasing the concurrent lease failed (ReplyError); not retried: it expires within 5000 ms']);
    await assertReleased(ACME_UPSTREAM); // the other release, in the same pipeline, went through
  });

  it('gives a crashed holder\'s slots back at their deadline', async () => {
    // A gateway that died mid-call: it held both of alice's slots, one lease
    // of 2 units (one deadline), and never released them; its lease was 1 s.
    await redis.call('RL.ACQUIRE', ALICE, K, 1_000, 'COST', K);
    const refused = await chat('sk-alice');
    assert.deepEqual([refused.status, refused.headers['retry-after']], [429, '1']); // ceil(<= 1000 ms)
    const [allowed, , remaining, retryMs, resetMs] = await peek(ALICE, K, 1);
    assert.deepEqual([allowed, remaining], [0, 0]);
    assert.ok(retryMs > 0 && retryMs <= resetMs && resetMs <= 1_000, `${retryMs}, ${resetMs}`);
    assert.ok((await redis.pttl(ALICE)) > 0); // the key expires by itself, too
    // The server's clock is this machine's; a Node timer may fire up to 1 ms
    // early (libuv measures from the start of the loop's turn).
    await pause(retryMs + 1);
    assert.equal((await chat('sk-alice')).status, 200);
    // That call dropped the expired lease and released its own: the key is gone.
    await assertReleased(ALICE, ACME_UPSTREAM);
  });

  it('refuses a lease no longer than the upstream timeout', () => {
    for (const leaseMs of [1_000, 2_000]) {
      assert.throws(() => new LlmGateway(null, { upstreamTimeoutMs: 2_000, leaseMs }, () => {}), RangeError);
    }
    assert.ok(new LlmGateway(null, { upstreamTimeoutMs: 2_000, leaseMs: 2_001 }, () => {}));
  });
});
