// The example service over real HTTP, against a real redis-server with the module.
//
// Limits are per hour, so nothing refills while a test runs: every number is
// computed from the commands' semantics (SPEC.md), not copied from a run. The
// one thing a test cannot know to the millisecond is when the server decided,
// so each request is bracketed by the wall clock before and after it; a value
// that depends on that instant must equal what the semantics give at one of
// the two ends (nearly always both ends give the same value).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Redis from 'ioredis';
import { RetryingClient, sendHttp } from '../src/retryClient.js';
import { RateLimitedApi, connectRedis, createServer } from '../src/service.js';
import { assertRateLimit as checkRateLimit, assertRefused as checkRefused, ceilS, request, valuesBetween } from './http.js';
import { RedisServer } from './redisServer.js';

const HOUR = 3_600_000;
const LIMITS = {
  keyLimit: 3, keyPeriodMs: HOUR, // GCRA: one request per T, burst 3
  tenantLimit: 5, tenantWindowMs: HOUR, // SLIDE over the tenant's keys
  workCapacity: 10, workRefill: 10, workRefillPeriodMs: HOUR, // one unit per I
};
const T = HOUR / 3; // GCRA emission interval, ms
const I = HOUR / 10; // token bucket: ms per unit
const W = HOUR; // sliding window
const POLICY = '"key";q=3;w=3600, "tenant";q=5;w=3600, "work";q=10;w=3600';

const API_KEYS = new Map([
  ['sk-alice', { keyId: 'k-alice', userId: 'alice', tenantId: 'acme' }],
  ['sk-bob', { keyId: 'k-bob', userId: 'bob', tenantId: 'acme' }],
  ['sk-carol', { keyId: 'k-carol', userId: 'carol', tenantId: 'globex' }],
  ['sk-dave', { keyId: 'k-dave', userId: 'dave', tenantId: 'initech' }],
]);

const silent = { warn() {}, error() {} };

// Bounds on the server time elapsed from `first` to `reply`, in ms.
const since = (first, reply) => [Math.max(0, reply.before - first.after), reply.after - first.before];
// Bounds on how far into its sliding window (aligned to the epoch) the server was.
const intoWindow = (reply) => [reply.before % W, reply.after % W];

const assertRateLimit = (reply, name, remaining, ts) => checkRateLimit(reply, name, remaining, ts, POLICY);
const assertRefused = (reply, name, remaining) => checkRefused(reply, name, remaining, POLICY);

async function startService(redisPort, config, options) {
  const client = connectRedis(`redis://127.0.0.1:${redisPort}/0`, config.timeoutMs ?? 2000);
  await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
  const server = createServer(new RateLimitedApi(client, API_KEYS, config, { logger: silent, ...options }));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    async close() {
      client.disconnect();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the service with Redis', () => {
  let redisServer;
  let redis;
  let service;
  const get = (path, key, opts = {}) => request(service.port, 'GET', path, { key, ...opts });
  const post = (path, key, opts = {}) => request(service.port, 'POST', path, { key, ...opts });

  before(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.port, '127.0.0.1');
    service = await startService(redisServer.port, { limits: LIMITS, failMode: 'closed' });
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
    await redisServer?.stop();
  });
  beforeEach(() => redis.flushall());

  it('answers 200s, then 429 with exact headers when the key limit trips', async () => {
    const first = await get('/v1/items', 'sk-alice');
    const ok = [first, await get('/v1/items', 'sk-alice'), await get('/v1/items', 'sk-alice')];
    ok.forEach((reply, n) => {
      const k = n + 1;
      assert.equal(reply.status, 200);
      assert.deepEqual(reply.body, { items: ['apple', 'banana', 'cherry'] });
      // After k requests the GCRA is k intervals ahead of the first one.
      // key: 3-k left; tenant 5-k; work 10-k: the key is the most restrictive.
      // t, the effective window (draft 4.1.2), runs until the key has one
      // more than 3-k: one interval after the first request, not the k
      // intervals until it is full.
      assertRateLimit(reply, 'key', 3 - k, valuesBetween((d) => ceilS(T - d), since(first, reply)));
      assert.equal(reply.headers['retry-after'], undefined);
    });

    const denied = await get('/v1/items', 'sk-alice');
    assert.equal(denied.status, 429);
    // The 4th fits once the first interval has passed: T after the first.
    assert.ok(valuesBetween((d) => ceilS(T - d), since(first, denied)).has(Number(denied.headers['retry-after'])));
    assertRefused(denied, 'key', 0);
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'key', retry_after_s: Number(denied.headers['retry-after']) });
    // All or nothing: the denied request took nothing from the tenant or work limits.
    assert.equal((await redis.call('RL.SLIDE', '{tenant:acme}:tenant', 5, W, 'COST', 0))[2], 2);
    assert.equal((await redis.call('RL.TOKENBUCKET', '{tenant:acme}:work', 10, 10, HOUR, 'COST', 0))[2], 7);
  });

  it('takes identity from the API key only, never from headers or parameters', async () => {
    // Whatever the client claims about where it comes from or which tenant it
    // is, alice's key charges alice's and acme's limits.
    const replies = [];
    for (let n = 0; n < 4; n++) {
      replies.push(await get(`/v1/items?tenant=globex&user=carol&n=${n}`, 'sk-alice', {
        headers: { 'X-Forwarded-For': `203.0.113.${n}`, 'X-Tenant-Id': 'globex', 'X-User-Id': 'carol' },
      }));
    }
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 429]);
    assert.equal(replies[3].body.limit, 'key');
    assert.deepEqual((await redis.keys('*')).sort(),
      ['{tenant:acme}:key:k-alice', '{tenant:acme}:tenant', '{tenant:acme}:work']);
    // The 429 body names the limit, and no identifier: no key, user, tenant,
    // Redis key name or client address.
    for (const secret of ['sk-alice', 'k-alice', 'alice', 'acme', '{tenant', '203.0.113', 'globex']) {
      assert.ok(!replies[3].raw.includes(secret), secret);
    }
    // globex was not charged: carol starts with a full limit.
    const carol = await get('/v1/items?tenant=acme', 'sk-carol', { headers: { 'X-Forwarded-For': '203.0.113.1' } });
    assert.equal(carol.status, 200);
    assertRateLimit(carol, 'key', 2, [ceilS(T)]);
  });

  it("shares the tenant limit between the tenant's keys", async () => {
    // The sliding window is aligned to the epoch; in the rare run that
    // straddles a window boundary, run again (we are then past it).
    let alice;
    let bob;
    for (let run = 0; ; run++) {
      await redis.flushall();
      alice = [];
      bob = [];
      for (let n = 0; n < 3; n++) alice.push(await get('/v1/items', 'sk-alice'));
      for (let n = 0; n < 3; n++) bob.push(await get('/v1/items', 'sk-bob'));
      if (Math.floor(alice[0].before / W) === Math.floor(bob[2].after / W)) break;
      assert.ok(run < 1, 'crossed a sliding-window boundary twice');
    }
    assert.deepEqual([...alice, ...bob].map((r) => r.status), [200, 200, 200, 200, 200, 429]);
    // Bob has 2 left on his own key, but acme has used 4 then 5 of its 5: the
    // tenant is the most restrictive. cur > 0 in this window, so the window
    // is empty again at the end of the next one: t = 2W - e.
    for (const [left, reply] of [[1, bob[0]], [0, bob[1]]]) {
      assertRateLimit(reply, 'tenant', left, valuesBetween((e) => ceilS(2 * W - e), intoWindow(reply)));
    }
    const denied = bob[2];
    // Denied with cur = 5 = limit and nothing in the previous window: it fits
    // in the next window once cur's weight (W - e')/W * 5 <= 4, that is
    // e' >= W/5. Wait: the rest of this window plus W/5.
    assert.ok(valuesBetween((e) => ceilS(W - e + W / 5), intoWindow(denied)).has(Number(denied.headers['retry-after'])));
    assertRefused(denied, 'tenant', 0);
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'tenant', retry_after_s: Number(denied.headers['retry-after']) });
  });

  it('charges an expensive route more', async () => {
    // A report costs 4 work units, a read 1; carol's tenant has 10.
    const first = await post('/v1/reports', 'sk-carol');
    const second = await post('/v1/reports', 'sk-carol');
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual(first.body, { report: 'ready' });
    // 6 units left = one more report: fewer than the key (2) or tenant (4)
    // allow, so "work" is the most restrictive. The bucket gives one unit
    // back every I: t is I after the first report.
    assertRateLimit(first, 'work', 6, [ceilS(I)]);
    assertRateLimit(second, 'work', 2, valuesBetween((d) => ceilS(I - d), since(first, second)));

    const denied = await post('/v1/reports', 'sk-carol');
    assert.equal(denied.status, 429);
    // 2 units left, 4 needed: two more units, 2I after the first report.
    assert.ok(valuesBetween((d) => ceilS(2 * I - d), since(first, denied)).has(Number(denied.headers['retry-after'])));
    assertRefused(denied, 'work', 2);
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'work', retry_after_s: Number(denied.headers['retry-after']) });

    // A cheap read still fits the 2 units left; now carol's own key (0 left,
    // 3 requests made) is the most restrictive.
    const read = await get('/v1/items', 'sk-carol');
    assert.equal(read.status, 200);
    assertRateLimit(read, 'key', 0, valuesBetween((d) => ceilS(T - d), since(first, read)));
  });

  it('answers 413 without Retry-After to a request that can never fit', async () => {
    // 11 items cost 11 units; the work limit holds 10: RL.ALL answers
    // retry_after_ms = -1. Waiting cannot help, so 413, not 429.
    const tooBig = await post('/v1/batch', 'sk-dave', { body: { items: [...Array(11).keys()] } });
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.headers['retry-after'], undefined);
    assertRateLimit(tooBig, 'work', 10, [0]); // untouched: full, nothing held back
    assert.deepEqual(tooBig.body, { error: 'request_too_large', limit: 'work' });
    // Nothing was consumed: a batch of exactly 10 still fits, and empties it.
    const fits = await post('/v1/batch', 'sk-dave', { body: { items: [...Array(10).keys()] } });
    assert.equal(fits.status, 200);
    assert.deepEqual(fits.body, { accepted: 10 });
    assertRateLimit(fits, 'work', 0, [ceilS(I)]); // empty; the next unit comes in I
  });

  it('charges nothing for unauthenticated, unknown and malformed requests', async () => {
    for (const headers of [{}, { Authorization: 'Bearer sk-mallory' }, { Authorization: 'Basic c2stYWxpY2U6' },
      { 'X-Forwarded-For': '10.0.0.1', 'X-Api-Key': 'sk-alice' }]) {
      const reply = await get('/v1/items?tenant=acme', undefined, { headers });
      assert.equal(reply.status, 401, JSON.stringify(headers));
      assert.deepEqual(reply.body, { error: 'unauthorized' });
      assert.equal(reply.headers['www-authenticate'], 'Bearer realm="api"');
      assert.equal(reply.headers.ratelimit, undefined);
    }
    assert.equal((await get('/v1/nothing-here', 'sk-alice')).status, 404);
    assert.equal((await post('/v1/batch', 'sk-alice', { body: { 'not-items': 1 } })).status, 400);
    assert.equal(await redis.dbsize(), 0);
  });

  it('lets the client helper hand back a long Retry-After', async () => {
    // The key limit's Retry-After (20 minutes) is longer than the client is
    // willing to wait: it returns the 429 at once, without sleeping.
    const url = `http://127.0.0.1:${service.port}/v1/items`;
    const auth = { Authorization: 'Bearer sk-alice' };
    const sleeps = [];
    const sleep = async (s) => { sleeps.push(s); };
    const client = new RetryingClient(sendHttp, { maxWaitS: 30, sleep, rand: () => 0 });
    const statuses = [];
    for (let n = 0; n < 4; n++) statuses.push((await client.call('GET', url, auth)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.deepEqual(sleeps, []);
    // One that would wait that long sleeps exactly Retry-After (jitter 0
    // here) before each retry, up to maxRetries.
    const patient = new RetryingClient(sendHttp, { maxWaitS: HOUR / 1000, maxRetries: 2, sleep, rand: () => 0 });
    assert.equal((await patient.call('GET', url, auth)).status, 429);
    assert.equal(sleeps.length, 2);
    assert.ok(sleeps.every((s) => s === T / 1000 || s === T / 1000 - 1), String(sleeps));
  });
});

describe('the service without Redis', () => {
  // Redis goes away: first it hangs (SIGSTOP: a timeout), then it dies (SIGKILL: refused).
  let redisServer;
  const services = {};
  let clockUs = 0; // the fallback bucket's clock: frozen unless the test moves it
  const warnings = [];

  before(async () => {
    redisServer = await RedisServer.start();
    for (const failMode of ['open', 'closed']) {
      // A whole fleet may serve 6 requests an hour without Redis; this is one
      // of 2 instances, so it serves at most 3.
      services[failMode] = await startService(redisServer.port, {
        limits: LIMITS, failMode, instances: 2, globalLimit: 6, globalPeriodMs: HOUR, failClosedRetryAfterS: 5,
        timeoutMs: 200,
      }, { fallbackClock: () => clockUs, logger: { warn: (m) => warnings.push(m), error() {} } });
    }
  });
  after(async () => {
    for (const s of Object.values(services)) await s.close();
    await redisServer?.stop();
  });

  const on = (mode, key = 'sk-alice') => request(services[mode].port, 'GET', '/v1/items', { key });
  const assertUnavailable = (reply) => {
    assert.equal(reply.status, 503);
    assert.equal(reply.headers['retry-after'], '5');
    assert.deepEqual(reply.body, { error: 'rate_limiter_unavailable' });
    assert.equal(reply.headers.ratelimit, undefined);
  };
  const assertFallback = (reply, status, remaining, t) => {
    assert.equal(reply.status, status);
    assert.equal(reply.headers['ratelimit-policy'], '"fallback";q=3;w=3600');
    assert.equal(reply.headers.ratelimit, `"fallback";r=${remaining};t=${t}`);
  };

  it('fails open to a local share of the global limit, or closed with 503', async () => {
    // Redis up: both modes decide with Redis.
    assert.equal((await on('open')).headers.ratelimit, `"key";r=2;t=${ceilS(T)}`);
    assert.equal((await on('closed', 'sk-bob')).headers.ratelimit, `"key";r=2;t=${ceilS(T)}`);
    assert.deepEqual(warnings, []);

    // Redis hangs: each request gives up after the 200 ms command timeout.
    redisServer.pause();
    assertUnavailable(await on('closed'));
    assert.match(warnings[0], /^rate limiter unavailable \(Error: Command timed out\): failing closed$/);
    // 3 per hour locally: one unit per 1200 s, so t is 1200 (the next unit)
    // whatever is left.
    assertFallback(await on('open'), 200, 2, 1200);

    // Redis is gone: connections are refused.
    await redisServer.kill();
    assertUnavailable(await on('closed'));
    assertFallback(await on('open'), 200, 1, 1200);
    assertFallback(await on('open', 'sk-carol'), 200, 0, 1200); // one bucket for the whole instance
    const denied = await on('open');
    assertFallback(denied, 429, 0, 1200);
    assert.equal(denied.headers['retry-after'], '1200');
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'fallback', retry_after_s: 1200 });
    assert.match(warnings.at(-1), /failing open$/);

    // The local limit refills with time (its own monotonic clock).
    clockUs += 1_199_999_000;
    assert.equal((await on('open')).headers['retry-after'], '1');
    clockUs += 1000;
    assertFallback(await on('open'), 200, 0, 1200);
  });
});
