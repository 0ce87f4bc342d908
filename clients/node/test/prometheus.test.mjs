// The prom-client adapter, read back from a Registry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { Limiter, Gcra } from '../lib/index.mjs';
import { PrometheusMetrics } from 'redis-rl/prometheus';
import { RedisServer, connect, memoryLogger, uniq } from './helpers.mjs';
import { startFakeRedis } from './fakeRedis.mjs';

let server;
let conn;
before(async () => {
  server = await RedisServer.start();
  conn = await connect('ioredis', server.port);
});
after(async () => { conn?.close(); await server?.stop(); });

const value = async (registry, name, labels) => {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v ? v.value : 0;
};

test('decisions, latency, errors and fallbacks per named limit', { timeout: 10000 }, async () => {
  const registry = new Registry();
  const metrics = new PrometheusMetrics({ registry });
  const limiter = new Limiter(conn.client, { prefix: 'p:', metrics, logger: memoryLogger(), timeoutMs: 2000 });
  const g = new Gcra(2, 60000, { name: 'api' });
  const id = uniq();
  for (let i = 0; i < 3; i++) await limiter.check(g, id);
  await limiter.checkAll([[g, uniq()], [new Gcra(5, 1000, { name: 'other' }), 'x']], { tag: 't' });
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'api', result: 'allowed' }), 3);
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'api', result: 'denied' }), 1);
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'other', result: 'allowed' }), 1);
  const text = await registry.metrics();
  assert.match(text, /redis_rl_decision_seconds_count\{limit="api"\} 4/);
  // A usage error counts as result="error".
  await conn.client.set(`p:api:${id}x`, 'string');
  await assert.rejects(limiter.check(g, `${id}x`), /WRONGTYPE/);
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'api', result: 'error' }), 1);
  // Fallbacks.
  const fake = await startFakeRedis(() => '-LOADING loading\r\n');
  try {
    const c2 = await connect('ioredis', fake.port, { enableReadyCheck: false });
    const l2 = new Limiter(c2.client, { metrics, onError: 'open', logger: memoryLogger() });
    await l2.check(g, 'y');
    await l2.check(g, 'y');
    c2.close();
  } finally {
    await fake.close();
  }
  assert.equal(await value(registry, 'redis_rl_fallbacks_total', { limit: 'api', policy: 'open' }), 2);
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'api', result: 'fail_open' }), 2);
  // Every Redis error counts as result="error", absorbed or raised.
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'api', result: 'error' }), 3);
  // A denied RL.ALL counts the limits that denied.
  const h = new Gcra(1, 60000, { name: 'h' });
  const tid = uniq();
  await limiter.checkAll([[h, tid], [new Gcra(5, 60000, { name: 'wide' }), tid]], { tag: tid });
  await limiter.checkAll([[h, tid], [new Gcra(5, 60000, { name: 'wide' }), tid]], { tag: tid });
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'h', result: 'denied' }), 1);
  assert.equal(await value(registry, 'redis_rl_decisions_total', { limit: 'wide', result: 'allowed' }), 1);
});
