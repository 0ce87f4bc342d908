// Express and Fastify middleware over real HTTP on loopback (fetch).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import Fastify from 'fastify';
import { Limiter, Gcra, Slide, Concurrency, expressRateLimit, fastifyRateLimit } from '../lib/index.mjs';
import { RedisServer, connect, memoryLogger, uniq } from './helpers.mjs';

let server;
let conn;
let limiter;
before(async () => {
  server = await RedisServer.start();
  conn = await connect('ioredis', server.port);
  limiter = new Limiter(conn.client, { prefix: 'h:', logger: memoryLogger(), timeoutMs: 2000 });
});
after(async () => { conn?.close(); await server?.stop(); });

// Identity comes from the (fake) auth layer, never from a client header like X-Forwarded-For.
const USERS = { 'token-a': 'alice', 'token-b': 'bob' };
const auth = (req) => USERS[String(req.headers.authorization || '').replace(/^Bearer /, '')] ?? null;

async function exercise(base, ran) {
  const get = (path, token = 'token-a', headers = {}) => fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  // /one: 2 per minute per user.
  const r1 = await get('/one');
  assert.equal(r1.status, 200);
  assert.equal(await r1.text(), 'one');
  assert.equal(r1.headers.get('ratelimit-policy'), '"per-user";q=2;w=60');
  assert.match(r1.headers.get('ratelimit'), /^"per-user";r=1;t=\d+$/);
  assert.equal((await get('/one', 'token-a', { 'x-forwarded-for': '1.2.3.4' })).status, 200);
  const before = ran.one;
  const r3 = await get('/one', 'token-a', { 'x-forwarded-for': '5.6.7.8' }); // a spoofed header buys nothing
  assert.equal(r3.status, 429);
  assert.equal(ran.one, before, 'the handler did not run');
  assert.ok(Number(r3.headers.get('retry-after')) >= 1);
  assert.match(r3.headers.get('ratelimit'), /^"per-user";r=0;t=\d+$/);
  assert.match(r3.headers.get('content-type'), /application\/json/);
  const body = await r3.json();
  assert.equal(body.error, 'rate_limited');
  assert.equal(body.limit, 'per-user');
  assert.ok(body.retry_after_ms > 0);
  assert.ok(!JSON.stringify(body).includes('alice'), 'the body never names the identity');
  assert.equal((await get('/one', 'token-b')).status, 200, 'bob has his own limit');
  // Unauthenticated: key() returns null, not limited here (auth answers it elsewhere).
  assert.equal((await fetch(`${base}/one`)).status, 200);
  // /two: two limits in one RL.ALL, cost from the request; 413 when it can never fit.
  const two = await get('/two?cost=3');
  assert.equal(two.status, 200);
  assert.match(two.headers.get('ratelimit-policy'), /"per-user-2";q=5;w=1/);
  assert.match(two.headers.get('ratelimit-policy'), /"per-route";q=100;w=60/);
  const huge = await get('/two?cost=6');
  assert.equal(huge.status, 413);
  assert.equal(huge.headers.get('retry-after'), null);
  assert.equal((await huge.json()).error, 'request_too_large');
  // /slot: a concurrency limit of 0 free slots answers 503.
  const slot = await get('/slot');
  assert.equal(slot.status, 503);
  assert.equal((await slot.json()).error, 'concurrency_limited');
  // Unlimited route untouched.
  assert.equal((await get('/free')).headers.get('ratelimit'), null);
}

function routes(prefix) {
  const perUser = new Gcra(2, 60000, { name: 'per-user' });
  const perUser2 = new Gcra(5, 1000, { name: 'per-user-2' });
  const perRoute = new Slide(100, 60000, { name: 'per-route' });
  const slots = new Concurrency(1, 60000, { name: 'slots' });
  const run = uniq(prefix);
  return {
    one: { limits: perUser, key: (req) => { const u = auth(req); return u && `${run}:${u}`; } },
    two: { limits: [perUser2, perRoute], key: (req) => `${run}:${auth(req)}`, tag: run,
      cost: (req) => Number(new URL(req.url, 'http://x').searchParams.get('cost') || 1) },
    slot: { limits: slots, key: () => `${run}:full` },
    fill: async () => { await limiter.acquire(slots, `${run}:full`); },
  };
}

describe('express', () => {
  test('limits before the handler, with headers and a JSON body', { timeout: 15000 }, async () => {
    const r = routes('ex');
    await r.fill();
    const ran = { one: 0 };
    const app = express();
    app.get('/one', expressRateLimit(limiter, r.one), (req, res) => { ran.one++; res.send('one'); });
    app.get('/two', expressRateLimit(limiter, r.two), (req, res) => res.send(req.rateLimit.allowed ? 'two' : 'x'));
    app.get('/slot', expressRateLimit(limiter, r.slot), (req, res) => res.send('slot'));
    app.get('/free', (req, res) => res.send('free'));
    const http = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      await exercise(`http://127.0.0.1:${http.address().port}`, ran);
      assert.equal(ran.one, 4); // alice twice, bob, the unauthenticated one
    } finally {
      http.closeAllConnections?.();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  test('a usage error reaches the error handler', async () => {
    const app = express();
    app.get('/bad', expressRateLimit(limiter, { limits: new Gcra(1, 1000), key: () => { throw new Error('no key'); } }),
      (req, res) => res.send('ran'));
    app.use((err, req, res, next) => res.status(500).send(`handled: ${err.message}`)); // eslint-disable-line no-unused-vars
    const http = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      const res = await fetch(`http://127.0.0.1:${http.address().port}/bad`);
      assert.equal(res.status, 500);
      assert.equal(await res.text(), 'handled: no key');
    } finally {
      http.closeAllConnections?.();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe('fastify', () => {
  test('limits before the handler, with headers and a JSON body', { timeout: 15000 }, async () => {
    const r = routes('fy');
    await r.fill();
    const ran = { one: 0 };
    const app = Fastify();
    app.get('/one', { onRequest: fastifyRateLimit(limiter, r.one) }, async () => { ran.one++; return 'one'; });
    app.get('/two', { onRequest: fastifyRateLimit(limiter, r.two) }, async (req) => (req.rateLimit.allowed ? 'two' : 'x'));
    app.get('/slot', { onRequest: fastifyRateLimit(limiter, r.slot) }, async () => 'slot');
    app.get('/free', async () => 'free');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await exercise(`http://127.0.0.1:${app.server.address().port}`, ran);
      assert.equal(ran.one, 4); // alice twice, bob, the unauthenticated one
    } finally {
      await app.close();
    }
  });

  test('as a global hook with addHook', { timeout: 15000 }, async () => {
    const app = Fastify();
    const id = uniq();
    app.addHook('onRequest', fastifyRateLimit(limiter, { limits: new Gcra(1, 60000, { name: 'global' }), key: () => id }));
    app.get('/', async () => 'hi');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${app.server.address().port}/`;
      assert.equal((await fetch(base)).status, 200);
      const denied = await fetch(base);
      assert.equal(denied.status, 429);
      assert.deepEqual(Object.keys(await denied.json()).sort(), ['cost', 'error', 'limit', 'quota', 'retry_after_ms', 'retry_after_s', 'scope', 'window_ms']);
    } finally {
      await app.close();
    }
  });
});
