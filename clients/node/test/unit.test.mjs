// No server: parsing, headers, statuses, bodies, slots, validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gcra, TokenBucket, Slide, Log, Quota, Concurrency, Decision, parseReply, parseAllReply, keySlot, Local,
  RateLimited } from '../lib/index.mjs';
import decisionMod from '../lib/decision.cjs';

const { combine } = decisionMod;

test('keySlot matches Redis CLUSTER KEYSLOT, hash tags included', () => {
  assert.equal(keySlot('foo'), 12182);
  assert.equal(keySlot('123456789'), 12739);
  assert.equal(keySlot('{user1000}.following'), keySlot('user1000'));
  assert.notEqual(keySlot('foo{}{bar}'), keySlot('bar'));
  assert.equal(keySlot('foo{{bar}}zap'), keySlot('{bar'));
});

test('parseReply reads RESP2 arrays, RESP3 objects and Maps alike', () => {
  const want = { allowed: false, limit: 5, remaining: 0, retryAfterMs: 120, resetAfterMs: 900, lease: null, waitMs: 0 };
  assert.deepEqual(parseReply([0, 5, 0, 120, 900]), want);
  assert.deepEqual(parseReply({ allowed: false, limit: 5, remaining: 0, retry_after_ms: 120, reset_after_ms: 900 }), want);
  assert.deepEqual(parseReply(new Map([['allowed', false], ['limit', 5], ['remaining', 0], ['retry_after_ms', 120],
    ['reset_after_ms', 900]])), want);
  assert.equal(parseReply([1, 2, 1, 0, 10, Buffer.from('abc')]).lease, 'abc');
  assert.equal(parseReply({ allowed: true, limit: 2, remaining: 1, retry_after_ms: 0, reset_after_ms: 10, lease: 'x' }).lease, 'x');
  assert.throws(() => parseReply('OK'), TypeError);
});

test('parseAllReply reads the flat RESP2 array and the RESP3 map', () => {
  const a = parseAllReply([0, 300, [1, 5, 4, 0, 10], [0, 2, 0, 300, 600, null]]);
  assert.equal(a.allowed, false);
  assert.equal(a.retryAfterMs, 300);
  assert.equal(a.limits.length, 2);
  assert.equal(a.limits[1].retryAfterMs, 300);
  const m = parseAllReply({ allowed: true, retry_after_ms: 0, limits: [{ allowed: true, limit: 5, remaining: 4,
    retry_after_ms: 0, reset_after_ms: 10 }] });
  assert.equal(m.allowed, true);
  assert.equal(m.limits[0].remaining, 4);
});

const d = (r, limit, cost = 1) => new Decision({ lease: null, ...r }, limit, 'k', cost);

test('status: 200, 429, 413 for never, 503 for a Concurrency limit', () => {
  const g = new Gcra(5, 60000);
  assert.equal(d({ allowed: true, limit: 5, remaining: 4, retryAfterMs: 0, resetAfterMs: 12000 }, g).status, 200);
  assert.equal(d({ allowed: false, limit: 5, remaining: 0, retryAfterMs: 12000, resetAfterMs: 60000 }, g).status, 429);
  const never = d({ allowed: false, limit: 5, remaining: 5, retryAfterMs: -1, resetAfterMs: 0 }, g, 6);
  assert.equal(never.never, true);
  assert.equal(never.status, 413);
  assert.equal(never.headers()['Retry-After'], undefined);
  assert.equal(never.body().error, 'request_too_large');
  const c = d({ allowed: false, limit: 2, remaining: 0, retryAfterMs: 900, resetAfterMs: 900 }, new Concurrency(2, 1000));
  assert.equal(c.status, 503);
  assert.equal(c.body().error, 'concurrency_limited');
  assert.deepEqual(c.headers(), { 'Retry-After': '1' }); // no RateLimit fields for a concurrency slot
});

test('headers: draft-11 syntax, t is when the next unit is back, Retry-After rounded up', () => {
  const g = new Gcra(5, 60000, { name: 'key' });
  // 5 per minute, 3 left, full in 24 s: one unit back every 12 s, the next in 24 - 12 = 12 s.
  const ok = d({ allowed: true, limit: 5, remaining: 3, retryAfterMs: 0, resetAfterMs: 24000 }, g);
  assert.deepEqual(ok.headers(), { 'RateLimit-Policy': '"key";q=5;w=60', RateLimit: '"key";r=3;t=12' });
  const no = d({ allowed: false, limit: 5, remaining: 0, retryAfterMs: 11001, resetAfterMs: 59000 }, g);
  assert.deepEqual(no.headers(), { 'RateLimit-Policy': '"key";q=5;w=60', RateLimit: '"key";r=0;t=12', 'Retry-After': '12' });
  const body = no.body();
  assert.deepEqual(body, { error: 'rate_limited', limit: 'key', scope: 'key', quota: 5, window_ms: 60000, cost: 1,
    retry_after_ms: 11001, retry_after_s: 12 });
  assert.deepEqual(ok.body(), { allowed: true });
  assert.ok(!JSON.stringify(body).includes('"k"'), 'the body never carries the key');
  const t = new TokenBucket(20000, 20000, 60000, { name: 'tokens/min', unit: 'tokens' });
  const tok = d({ allowed: true, limit: 20000, remaining: 20000, retryAfterMs: 0, resetAfterMs: 0 }, t);
  assert.equal(tok.headers()['RateLimit-Policy'], '"tokens/min";q=20000;qu="tokens";w=60');
  assert.equal(tok.headers().RateLimit, '"tokens/min";r=20000;t=0');
  assert.throws(() => new Gcra(1, 1, { name: 'a"b' }), TypeError); // names stay valid sf-strings and keys
  const q = d({ allowed: true, limit: 10, remaining: 9, retryAfterMs: 0, resetAfterMs: 3600500 }, new Quota(10, 'DAY'));
  assert.equal(q.headers().RateLimit, '"quota-10-per-day";r=9;t=3601');
});

test('a combined decision ranks the most restrictive limit first', () => {
  const a = new Gcra(10, 1000, { name: 'a' });
  const b = new Slide(100, 60000, { name: 'b' });
  const c = new Quota(1000, 'DAY', { name: 'c' });
  const checks = [{ limit: a, cost: 1 }, { limit: b, cost: 1 }, { limit: c, cost: 1 }];
  const denied = combine(parseAllReply([0, 5000, [0, 10, 0, 100, 1000], [0, 100, 0, 5000, 60000], [1, 1000, 3, 0, 9000]]),
    checks, ['k1', 'k2', 'k3']);
  assert.equal(denied.allowed, false);
  assert.equal(denied.name, 'b');
  assert.deepEqual(denied.deniedBy.map((x) => x.name), ['b', 'a']);
  assert.deepEqual(denied.decisions.map((x) => x.name), ['a', 'b', 'c']);
  assert.equal(denied.status, 429);
  assert.equal(denied.headers()['Retry-After'], '5');
  assert.match(denied.headers()['RateLimit-Policy'], /^"b";q=100;w=60, "a";q=10;w=1, "c";q=1000;w=86400$/);
  assert.equal(denied.body().limit, 'b');
  const allowed = combine(parseAllReply([1, 0, [1, 10, 9, 0, 100], [1, 100, 2, 0, 5000], [1, 1000, 3, 0, 9000]]),
    checks, ['k1', 'k2', 'k3']);
  assert.equal(allowed.name, 'b'); // 2 more requests, fewer than a's 9 and c's 3
  assert.equal(allowed.deniedBy.length, 0);
  assert.equal(allowed.headers()['Retry-After'], undefined);
  const never = combine(parseAllReply([0, -1, [0, 10, 10, -1, 0], [0, 100, 0, 5000, 60000], [1, 1000, 3, 0, 9000]]),
    checks, ['k1', 'k2', 'k3']);
  assert.equal(never.deniedBy[0].name, 'a');
  assert.equal(never.status, 413);
});

test('limits validate their arguments and name themselves', () => {
  assert.equal(new Gcra(100, 60000).name, 'gcra-100-per-60000ms');
  assert.equal(new TokenBucket(10, 1, 1000).name, 'tokenbucket-10-1-per-1000ms');
  assert.equal(new Slide(5, 1000).name, 'slide-5-per-1000ms');
  assert.equal(new Log(5, 1000).name, 'log-5-per-1000ms');
  assert.equal(new Quota(5, 'month', { tz: 'Europe/Berlin' }).name, 'quota-5-per-month-Europe/Berlin');
  assert.equal(new Concurrency(3, 1000).name, 'concurrency-3-lease-1000ms');
  assert.deepEqual(new Gcra(5, 1000, { burst: 2 }).args(3), ['5', '1000', 'BURST', '2', 'COST', '3']);
  assert.deepEqual(new Quota(5, 'DAY', { tz: 'UTC' }).spec, ['QUOTA', '5', 'DAY', 'TZ', 'UTC']);
  assert.throws(() => new Gcra(0, 1000), RangeError);
  assert.throws(() => new Gcra(1.5, 1000), RangeError);
  assert.throws(() => new Log(10001, 1000), RangeError);
  assert.throws(() => new Quota(5, 'FORTNIGHT'), RangeError);
  assert.throws(() => new Quota(5, 1000, { tz: 'UTC' }), RangeError);
  assert.throws(() => new Gcra(1, 1, { name: 'bad\nname' }), TypeError);
  assert.throws(() => new Gcra(1, 1, { onError: 'maybe' }), TypeError);
  assert.equal(new Gcra(1, 1, { onError: new Local(0.5) }).onError.share, 0.5);
  const g = new Gcra(1, 1000, { name: 'n' });
  assert.equal(g.keyFor('rl:', 'alice'), 'rl:n:alice');
  assert.equal(g.keyFor('rl:', 'alice', 'acme'), 'rl:{acme}:n:alice');
  const custom = new Gcra(1, 1000, { key: (id, { prefix, name }) => `${prefix}x:${name}:${String(id).toLowerCase()}` });
  assert.equal(custom.keyFor('p:', 'ALICE'), 'p:x:gcra-1-per-1000ms:alice');
  assert.throws(() => g.keyFor('rl:', undefined), TypeError);
});

test('RateLimited carries the decision', () => {
  const x = d({ allowed: false, limit: 1, remaining: 0, retryAfterMs: 5, resetAfterMs: 5 }, new Gcra(1, 5));
  const e = new RateLimited(x);
  assert.equal(e.retryAfterMs, 5);
  assert.equal(e.decision, x);
  assert.ok(e instanceof Error);
});

test('the timeout: calls that never answer time out after timeoutMs (to a tick more); answered ones never', async () => {
  const { Limiter: L, RedisTimeoutError } = await import('../lib/index.mjs');
  const reply = [1, 5, 4, 0, 10];
  let n = 0;
  const stub = { kind: 'stub', cluster: false, send: () => (n++ % 2 ? new Promise(() => {}) : Promise.resolve(reply)) };
  const limiter = new L(stub, { timeoutMs: 80, onError: 'open', logger: null });
  const g = new Gcra(5, 1000);
  const t0 = performance.now();
  const got = await Promise.all(Array.from({ length: 6 }, () => limiter.check(g, 'x').then((d) => [d, performance.now() - t0])));
  assert.deepEqual(got.map(([d]) => d.source), ['redis', 'fail_open', 'redis', 'fail_open', 'redis', 'fail_open']);
  for (const [d, ms] of got.filter(([x]) => x.source === 'fail_open')) {
    assert.ok(d.error instanceof RedisTimeoutError);
    assert.ok(ms >= 79 && ms < 80 + 20 + 200, `timed out after ${ms} ms`);
  }
  assert.equal(limiter.fallbacks.open, 3);
  // The shared timer stops once nothing is pending.
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(limiter.deadlines.timer, null);
});

test('the timeout of a started command (an adapter with start): its own reject fires in time, answered slots are cleared',
  async () => {
    const { Limiter: L, RedisTimeoutError } = await import('../lib/index.mjs');
    const reply = [1, 5, 4, 0, 10];
    let n = 0;
    const sent = [];
    // start(command, args) -> {promise, reject}, as ioredis's Command; every other call never answers
    const start = (command, args) => {
      let reject;
      const promise = new Promise((res, rej) => {
        reject = rej;
        if (n++ % 2 === 0) setImmediate(() => res(reply));
      });
      sent.push([command, args.flat()]);
      return { promise, reject };
    };
    const stub = { kind: 'stub', cluster: false, send: () => assert.fail('send() while start() can'), start };
    const limiter = new L(stub, { timeoutMs: 80, onError: 'open', logger: null });
    const g = new Gcra(5, 1000, { name: 'g' });
    const t0 = performance.now();
    const got = await Promise.all(Array.from({ length: 6 }, () => limiter.check(g, 'x').then((d) => [d, performance.now() - t0])));
    assert.deepEqual(got.map(([d]) => d.source), ['redis', 'fail_open', 'redis', 'fail_open', 'redis', 'fail_open']);
    for (const [d, ms] of got.filter(([x]) => x.source === 'fail_open')) {
      assert.ok(d.error instanceof RedisTimeoutError);
      assert.ok(ms >= 79 && ms < 80 + 20 + 200, `timed out after ${ms} ms`);
    }
    assert.deepEqual(sent[0], ['RL.GCRA', ['rl:g:x', '5', '1000']]);
    // checkAll goes the same way (RL.ALL), and an answered call leaves nothing in the open bucket
    n = 1; // the next call never answers
    const all = await limiter.checkAll([[g, 'y'], [new Gcra(5, 1000, { name: 'h' }), 'y']]);
    assert.equal(all.source, 'fail_open');
    assert.ok(all.error instanceof RedisTimeoutError);
    assert.deepEqual(sent.at(-1), ['RL.ALL', ['2', 'rl:g:y', 'rl:h:y', 'GCRA', '5', '1000', 'GCRA', '5', '1000']]);
    n = 0;
    const p = limiter.check(g, 'z');
    const bucket = limiter.deadlines.open;
    const i = bucket.length - 1;
    assert.equal(typeof bucket[i], 'function'); // the command's own reject, no promise of ours
    assert.equal((await p).source, 'redis');
    assert.equal(bucket[i], null);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(limiter.deadlines.timer, null);
    // Sync errors keep their shape: a bad limit rejects, it does not throw
    await assert.rejects(limiter.check({}, 'x'), TypeError);
    await assert.rejects(limiter.check(g, null), TypeError);
    await assert.rejects(limiter.check(g, 'x', -1), RangeError);
  });
