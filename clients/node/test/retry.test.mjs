// retry(): Retry-After as a floor, full jitter, capped; the RetryBudget
// (TOKENBUCKET + REFUND) against a real server. Sleeps are injected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter, Gcra, RateLimited, Decision, retry, RetryBudget, parseRetryAfter } from '../lib/index.mjs';
import { RedisServer, connect, memoryLogger, uniq } from './helpers.mjs';

let server;
let conn;
let limiter;
before(async () => {
  server = await RedisServer.start();
  conn = await connect('ioredis', server.port);
  limiter = new Limiter(conn.client, { prefix: 'r:', logger: memoryLogger(), timeoutMs: 2000 });
});
after(async () => { conn?.close(); await server?.stop(); });

const response = (status, headers = {}) => ({ status, headers });

test('parseRetryAfter: delta-seconds and HTTP-dates', () => {
  assert.equal(parseRetryAfter('120'), 120);
  assert.equal(parseRetryAfter(' 3 '), 3);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', () => Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10);
  assert.equal(parseRetryAfter('soon'), null);
  assert.equal(parseRetryAfter('-1'), null);
  assert.equal(parseRetryAfter(undefined), null);
});

test('retry: Retry-After is the floor, full jitter on top, capped; gives up after maxAttempts', async () => {
  const slept = [];
  const outcomes = [response(429, { 'Retry-After': '2' }), response(503, { 'retry-after': '1' }), response(200)];
  let calls = 0;
  const r = await retry(async (attempt) => { assert.equal(attempt, calls); return outcomes[calls++]; },
    { maxAttempts: 3, baseMs: 100, capMs: 150, rand: () => 0.999, sleep: async (ms) => { slept.push(ms); } });
  assert.equal(r.status, 200);
  assert.deepEqual(slept, [2000 + 99, 1000 + 149]); // 0.999 * min(cap, base * 2^attempt), floored
  // Always 429: 3 calls, 2 sleeps, the last response handed back.
  calls = 0;
  slept.length = 0;
  const last = await retry(async () => { calls++; return response(429); }, { rand: () => 0, sleep: async (ms) => { slept.push(ms); } });
  assert.equal(last.status, 429);
  assert.equal(calls, 3);
  assert.deepEqual(slept, [0, 0]);
  // A wait beyond maxWaitMs is handed to the caller at once.
  calls = 0;
  await retry(async () => { calls++; return response(429, { 'Retry-After': '600' }); }, { sleep: async () => assert.fail() });
  assert.equal(calls, 1);
  // Not retryable: other statuses and ordinary errors.
  await assert.rejects(retry(async () => { throw new Error('bug'); }, { sleep: async () => assert.fail() }), /bug/);
  assert.equal((await retry(async () => response(500), { sleep: async () => assert.fail() })).status, 500);
});

test('retry: RateLimited from the limiter is retried after its retryAfterMs; never (-1) is not', async () => {
  const g = new Gcra(1, 20000);
  const id = uniq();
  await limiter.check(g, id);
  const slept = [];
  let calls = 0;
  await assert.rejects(retry(async () => {
    calls++;
    const d = await limiter.check(g, id);
    if (!d.allowed) throw new RateLimited(d);
    return d;
  }, { maxAttempts: 2, rand: () => 0, sleep: async (ms) => { slept.push(ms); } }), RateLimited);
  assert.equal(calls, 2);
  assert.ok(slept[0] > 15000 && slept[0] <= 20000, `slept ${slept[0]}`);
  calls = 0;
  const never = new Decision({ allowed: false, limit: 1, remaining: 1, retryAfterMs: -1, resetAfterMs: 0 }, g, 'k', 2);
  await assert.rejects(retry(async () => { calls++; throw new RateLimited(never); }, { sleep: async () => assert.fail() }));
  assert.equal(calls, 1);
});

test('RetryBudget: each call deposits ratio of a retry, each retry spends one', async () => {
  const budget = new RetryBudget(limiter, uniq('budget'), { ratio: 0.1, burst: 2 });
  assert.equal(await budget.available(), 2); // starts full
  const always429 = async () => response(429);
  let calls = 0;
  const sleep = async () => {};
  // The first call retries twice (the burst), taking the budget to 0 (plus its own 0.1 deposit, capped at full).
  await retry(async () => { calls++; return always429(); }, { budget, maxAttempts: 5, sleep });
  assert.equal(calls, 3);
  assert.ok((await budget.available()) < 1);
  // Now calls get no retries until 10 calls have deposited one whole retry.
  calls = 0;
  for (let i = 0; i < 9; i++) await retry(async () => { calls++; return always429(); }, { budget, maxAttempts: 5, sleep });
  assert.equal(calls, 9, 'no retries while the budget holds less than one');
  calls = 0;
  await retry(async () => { calls++; return always429(); }, { budget, maxAttempts: 5, sleep });
  assert.equal(calls, 2, 'the tenth deposit bought one retry');
  // Fleet-wide: ~10% of 100 calls retried.
  const b2 = new RetryBudget(limiter, uniq('budget'), { ratio: 0.1, burst: 1 });
  let retries = 0;
  for (let i = 0; i < 100; i++) {
    let n = 0;
    await retry(async () => { n++; return always429(); }, { budget: b2, maxAttempts: 2, sleep });
    retries += n - 1;
  }
  assert.ok(retries >= 10 && retries <= 11, `retries ${retries}`);
});

test('RetryBudget: no retries while Redis is unreachable', async () => {
  const dead = new Limiter(conn.client, { prefix: 'r:', timeoutMs: 1, logger: memoryLogger(),
    backend: { name: 'dead', check: () => Promise.reject(new Error('ECONNREFUSED')), peek: () => Promise.reject(new Error('x')),
      all: () => Promise.reject(new Error('x')), release: () => Promise.reject(new Error('x')), renew: () => Promise.reject(new Error('x')) } });
  const budget = new RetryBudget(dead);
  assert.equal(budget.name, 'retry-budget');
  assert.equal(await budget.trySpend(), false);
  let calls = 0;
  await retry(async () => { calls++; return response(503); }, { budget, sleep: async () => {} });
  assert.equal(calls, 1);
});
