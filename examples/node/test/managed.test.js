// The service on a managed Redis or Valkey stood in for: a server without the
// module that refuses MODULE LOAD (--enable-module-command no). The
// service's Limiter (backend 'auto') finds no RL.* commands, loads the
// redis-rl Lua library (FUNCTION LOAD) and answers as with the module: the
// same statuses, headers and bodies, the same keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Redis from 'ioredis';
import { RateLimitedApi, connectRedis, createServer } from '../src/service.js';
import { assertRateLimit, assertRefused, ceilS, request } from './http.js';
import { RedisServer } from './redisServer.js';

const HOUR = 3_600_000;
const LIMITS = { keyLimit: 3, keyPeriodMs: HOUR, tenantLimit: 5, tenantWindowMs: HOUR,
  workCapacity: 10, workRefill: 10, workRefillPeriodMs: HOUR };
const POLICY = '"key";q=3;w=3600, "tenant";q=5;w=3600, "work";q=10;w=3600';
const LLM = { maxTokensCap: 2000, requestsPerKey: 10, requestsPeriodMs: HOUR, tokensPerKey: 1000,
  tokensPeriodMs: HOUR, tokensPerDay: 1500, upstreamTimeoutMs: 150 };
const API_KEYS = new Map([
  ['sk-alice', { keyId: 'k-alice', userId: 'alice', tenantId: 'acme', zone: 'Asia/Kolkata' }],
  ['sk-dave', { keyId: 'k-dave', userId: 'dave', tenantId: 'initech' }],
]);

describe('the service on a server without the module (the Lua library)', () => {
  let redisServer;
  let redis;
  let client;
  let server;
  let port;
  const used = [];
  const upstream = async () => ({ usedTokens: used.shift(), body: { answer: 'fake' } });

  before(async () => {
    redisServer = await RedisServer.start({ withModule: false });
    redis = new Redis(redisServer.port, '127.0.0.1');
    client = connectRedis(`redis://127.0.0.1:${redisServer.port}/0`, 2000);
    await new Promise((resolve, reject) => client.once('ready', resolve).once('end', reject));
    const api = new RateLimitedApi(client, API_KEYS, { limits: LIMITS, failMode: 'closed', llm: LLM },
      { logger: { warn() {}, error() {} }, upstream });
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

  it('has no module and refuses MODULE LOAD', async () => {
    await assert.rejects(redis.call('RL.GCRA', 'k', 1, 1000), /unknown command/);
    await assert.rejects(redis.call('MODULE', 'LOAD', '/nonexistent.so'), /not allowed/);
  });

  it('limits, answers 429 and 413, and names the same keys', async () => {
    const replies = [];
    for (let n = 0; n < 4; n++) replies.push(await request(port, 'GET', '/v1/items', { key: 'sk-alice' }));
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 429]);
    assert.equal(String(await redis.call('FCALL_RO', 'rl_version', '0')).length > 0, true); // loaded by the service
    assertRateLimit(replies[0], 'key', 2, [ceilS(HOUR / 3)], POLICY);
    const denied = replies[3];
    assertRefused(denied, 'key', 0, POLICY);
    assert.ok(Number(denied.headers['retry-after']) > 0 && Number(denied.headers['retry-after']) <= ceilS(HOUR / 3));
    assert.deepEqual(denied.body, { error: 'rate_limited', limit: 'key', retry_after_s: Number(denied.headers['retry-after']) });
    assert.deepEqual((await redis.keys('{tenant:acme}:*')).sort(),
      ['{tenant:acme}:key:k-alice', '{tenant:acme}:tenant', '{tenant:acme}:work']);
    // The library's state: the denied request took nothing from the tenant.
    const [, , left] = await redis.call('FCALL_RO', 'rl_peek', 1, '{tenant:acme}:tenant', 'SLIDE', 5, HOUR, 'COST', 0);
    assert.equal(left, 2);
    const tooBig = await request(port, 'POST', '/v1/batch', { key: 'sk-dave', body: { items: [...Array(11).keys()] } });
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.headers['retry-after'], undefined);
    assert.deepEqual(tooBig.body, { error: 'request_too_large', limit: 'work' });
  });

  it('reserves, releases the leases and settles a chat', async () => {
    used.push(312);
    const reply = await request(port, 'POST', '/v1/chat',
      { key: 'sk-alice', body: { max_tokens: 800, messages: [{ content: 'hi' }] } });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { answer: 'fake' });
    // 800 reserved, 488 refunded: 312 charged on both token limits; both leases released.
    const [, , tokens] = await redis.call('FCALL_RO', 'rl_peek', 1, '{tenant:acme}:llm:tokens:k-alice', 'GCRA', 1000, HOUR, 'COST', 0);
    const [, , daily] = await redis.call('FCALL_RO', 'rl_peek', 1, '{tenant:acme}:llm:daily-tokens', 'QUOTA', 1500, 'DAY',
      'TZ', 'Asia/Kolkata', 'COST', 0);
    assert.deepEqual([tokens, daily], [688, 1188]);
    assert.equal(await redis.exists('{tenant:acme}:llm:concurrent:k-alice', '{tenant:acme}:llm:upstream'), 0);
    assert.match(reply.headers['ratelimit-policy'], /^"requests";q=10;w=3600, "tokens";q=1000;qu="tokens";w=3600, /);
  });
});
