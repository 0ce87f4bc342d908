// The failure policy: open / closed / local, a default timeout, a hook and a
// counter, for a killed server (refused), a paused one (timeout) and error
// replies; usage errors are raised instead.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter, Gcra, Slide, Concurrency, Local, MemoryMetrics, RedisTimeoutError, Lease,
  ModuleNotLoadedError } from '../lib/index.mjs';
import { RedisServer, connect, memoryLogger, uniq } from './helpers.mjs';
import { startFakeRedis } from './fakeRedis.mjs';

const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function limiterWith(client, opts = {}) {
  const hooked = [];
  const metrics = new MemoryMetrics();
  const logger = memoryLogger();
  const limiter = new Limiter(client, { timeoutMs: 100, logger, metrics, onFallback: (l, e, d) => hooked.push([l, e, d]), ...opts });
  return { limiter, hooked, metrics, logger };
}

async function policies(client) {
  // open
  const open = limiterWith(client, { onError: 'open' });
  const g = new Gcra(10, 60000, { name: 'g' });
  const d = await open.limiter.check(g, 'alice');
  assert.equal(d.allowed, true);
  assert.equal(d.source, 'fail_open');
  assert.equal(d.failOpen, true);
  assert.ok(d.error instanceof Error);
  assert.equal(d.status, 200);
  assert.deepEqual(d.headers(), {});
  assert.equal(open.limiter.fallbacks.total, 1);
  assert.equal(open.limiter.fallbacks.open, 1);
  assert.equal(open.hooked.length, 1);
  assert.equal(open.hooked[0][0], g);
  assert.equal(open.hooked[0][2], d);
  assert.equal(open.metrics.fallbacks['g|open'], 1);
  assert.equal(open.metrics.decisions['g|fail_open'], 1);
  // closed (the default)
  const closed = limiterWith(client);
  const c = await closed.limiter.check(g, 'alice');
  assert.equal(c.allowed, false);
  assert.equal(c.source, 'fail_closed');
  assert.equal(c.status, 503);
  assert.deepEqual(c.headers(), { 'Retry-After': '1' });
  assert.equal(c.body().error, 'rate_limiter_unavailable');
  assert.equal(closed.limiter.fallbacks.closed, 1);
  // local: 20% of 10 per minute, per identity
  const local = limiterWith(client, { onError: new Local(0.2) });
  const got = [];
  for (let i = 0; i < 3; i++) got.push(await local.limiter.check(g, 'alice'));
  assert.deepEqual(got.map((x) => x.allowed), [true, true, false]);
  assert.deepEqual(got.map((x) => x.source), ['local', 'local', 'local']);
  assert.equal(got[0].limit, 2);
  assert.equal(got[2].status, 429);
  assert.equal(got[2].headers()['RateLimit-Policy'], '"g";q=2;w=60'); // the local share, over the same window
  assert.match(got[2].headers()['Retry-After'], /^\d+$/);
  assert.ok(got[2].retryAfterMs > 0 && got[2].retryAfterMs <= 30000);
  assert.equal((await local.limiter.check(g, 'bob')).allowed, true, 'another identity has its own local share');
  assert.equal(local.limiter.fallbacks.local, 4);
  // a limit's own policy overrides the Limiter's
  const strict = new Gcra(10, 60000, { name: 'strict', onError: 'closed' });
  assert.equal((await open.limiter.check(strict, 'alice')).source, 'fail_closed');
  // checkAll: each limit by its own policy, closed wins
  const all = await open.limiter.checkAll([[g, 'a'], [strict, 'a']], { tag: 't' });
  assert.equal(all.source, 'fail_closed');
  assert.equal(all.status, 503);
  const allOpen = await open.limiter.checkAll([[g, 'a'], [new Slide(5, 1000), 'a']], { tag: 't' });
  assert.equal(allOpen.allowed, true);
  assert.equal(allOpen.source, 'fail_open');
  assert.deepEqual(allOpen.decisions.map((x) => x.source), ['fail_open', 'fail_open']);
  // Concurrency under Local: a local semaphore, given back on release
  const slots = new Concurrency(10, 60000, { name: 'slots' });
  const l1 = await local.limiter.acquire(slots, 'alice');
  const l2 = await local.limiter.acquire(slots, 'alice');
  assert.ok(l1 instanceof Lease && l2 instanceof Lease);
  assert.equal(l1.source, 'local');
  const l3 = await local.limiter.acquire(slots, 'alice');
  assert.equal(l3.allowed, false);
  assert.equal(l3.status, 503);
  await l1.release();
  assert.equal((await local.limiter.acquire(slots, 'alice')).allowed, true);
  // A slot taken by check() (no Lease to release it) is not held locally.
  const one = new Concurrency(5, 60000, { name: 'one' }); // 20%: one local slot
  assert.equal((await local.limiter.check(one, 'x')).allowed, true);
  assert.equal((await local.limiter.check(one, 'x')).allowed, true);
  // Logged once per outage, not per request.
  assert.equal(open.logger.lines.length, 1);
  assert.match(open.logger.lines[0], /Redis unavailable/);
  return { open };
}

for (const kind of ['ioredis', 'node-redis-resp3']) {
  describe(`${kind}: server killed (connection refused)`, () => {
    test('every policy answers within the timeout', { timeout: 20000 }, async () => {
      const server = await RedisServer.start();
      cleanups.push(() => server.stop());
      const conn = await connect(kind, server.port, kind === 'ioredis' ? {} : { socket: { reconnectStrategy: 50 } });
      cleanups.push(() => conn.close());
      const ok = limiterWith(conn.client);
      assert.equal((await ok.limiter.check(new Gcra(5, 1000), uniq())).source, 'redis');
      await server.kill();
      const t0 = Date.now();
      await policies(conn.client);
      assert.ok(Date.now() - t0 < 10000);
    });
  });

  describe(`${kind}: server paused (SIGSTOP: a timeout)`, () => {
    test('a check times out after timeoutMs, takes the policy, and Redis answers again after SIGCONT',
      { timeout: 20000 }, async () => {
        const server = await RedisServer.start();
        cleanups.push(() => server.stop());
        const conn = await connect(kind, server.port);
        cleanups.push(() => conn.close());
        const { limiter, hooked, logger } = limiterWith(conn.client, { onError: 'open' });
        const g = new Gcra(5, 60000);
        const id = uniq();
        assert.equal((await limiter.check(g, id)).source, 'redis');
        server.pause();
        try {
          const t0 = Date.now();
          const d = await limiter.check(g, id);
          const took = Date.now() - t0;
          assert.equal(d.source, 'fail_open');
          assert.ok(d.error instanceof RedisTimeoutError);
          assert.ok(took >= 90 && took < 1000, `took ${took} ms`);
          assert.equal(hooked.length, 1);
        } finally {
          server.resume();
        }
        // The queued commands are answered now; the next check is Redis's again.
        let back;
        for (let i = 0; i < 50 && back?.source !== 'redis'; i++) back = await limiter.check(g, id);
        assert.equal(back.source, 'redis');
        assert.match(logger.lines.at(-1), /answers again/);
      });
  });
}

describe('error replies', () => {
  for (const [reply, policy] of [['-LOADING Redis is loading the dataset in memory', 'fail_open'],
    ['-OOM command not allowed when used memory > \'maxmemory\'.', 'fail_open'],
    ['-BUSY Redis is busy running a script', 'fail_open'], ['-READONLY You can\'t write against a read only replica.', 'fail_open']]) {
    for (const kind of ['ioredis', 'node-redis-resp2']) {
      test(`${kind}: ${reply.split(' ')[0]} takes the failure policy`, { timeout: 10000 }, async () => {
        const fake = await startFakeRedis(() => `${reply}\r\n`);
        cleanups.push(() => fake.close());
        const conn = await connect(kind, fake.port, kind === 'ioredis' ? { enableReadyCheck: false } : {});
        cleanups.push(() => conn.close());
        const { limiter, hooked } = limiterWith(conn.client, { onError: 'open' });
        const d = await limiter.check(new Gcra(5, 1000), 'x');
        assert.equal(d.source, policy);
        assert.equal(d.error.message, reply.slice(1));
        assert.equal(hooked.length, 1);
        assert.ok(fake.seen.some((a) => a[0] === 'RL.GCRA'));
      });
    }
  }

  for (const reply of ['-WRONGTYPE Operation against a key holding the wrong kind of value',
    '-ERR COST must be an integer from 0 to 4294967295', '-CROSSSLOT Keys in request don\'t hash to the same slot',
    '-NOPERM User default has no permissions to run the \'rl.gcra\' command']) {
    test(`${reply.split(' ')[0]} (a usage error) is raised, even with onError "open"`, { timeout: 10000 }, async () => {
      const fake = await startFakeRedis(() => `${reply}\r\n`);
      cleanups.push(() => fake.close());
      const conn = await connect('ioredis', fake.port, { enableReadyCheck: false });
      cleanups.push(() => conn.close());
      const { limiter, hooked, metrics } = limiterWith(conn.client, { onError: 'open' });
      await assert.rejects(limiter.check(new Gcra(5, 1000, { name: 'g' }), 'x'), (e) => e.message === reply.slice(1));
      assert.equal(hooked.length, 0);
      assert.equal(limiter.fallbacks.total, 0);
      assert.equal(metrics.errors.g, 1);
    });
  }

  test('a refund is never answered by the failure policy', { timeout: 10000 }, async () => {
    const fake = await startFakeRedis(() => '-LOADING loading\r\n');
    cleanups.push(() => fake.close());
    const conn = await connect('ioredis', fake.port, { enableReadyCheck: false });
    cleanups.push(() => conn.close());
    const { limiter } = limiterWith(conn.client, { onError: 'open' });
    await assert.rejects(limiter.refund(new Gcra(5, 1000), 'x', 2), /LOADING/);
  });
});

describe('a real server that cannot serve', () => {
  test('CLIENT PAUSE WRITE: the check times out and takes the policy', { timeout: 20000 }, async () => {
    const server = await RedisServer.start();
    cleanups.push(() => server.stop());
    const admin = await connect('ioredis', server.port);
    cleanups.push(() => admin.close());
    for (const kind of ['ioredis', 'node-redis-resp3']) {
      const conn = await connect(kind, server.port);
      cleanups.push(() => conn.close());
      const { limiter, hooked } = limiterWith(conn.client, { onError: 'open' });
      const g = new Gcra(5, 60000);
      await admin.client.call('CLIENT', 'PAUSE', '400', 'WRITE');
      const t0 = Date.now();
      const d = await limiter.check(g, uniq());
      assert.equal(d.source, 'fail_open', kind);
      assert.ok(d.error instanceof RedisTimeoutError);
      assert.ok(Date.now() - t0 < 400, 'answered before the pause ended');
      assert.equal(hooked.length, 1);
      await admin.client.call('CLIENT', 'UNPAUSE');
      let back;
      for (let i = 0; i < 50 && back?.source !== 'redis'; i++) back = await limiter.check(g, uniq());
      assert.equal(back.source, 'redis');
    }
  });

  test('DEBUG SLEEP: the check times out and takes the policy', { timeout: 20000 }, async () => {
    const server = await RedisServer.start({ extraArgs: ['--enable-debug-command', 'yes'] });
    cleanups.push(() => server.stop());
    const admin = await connect('ioredis', server.port);
    cleanups.push(() => admin.close());
    const conn = await connect('node-redis-resp2', server.port);
    cleanups.push(() => conn.close());
    const { limiter } = limiterWith(conn.client); // closed
    const sleeping = admin.client.call('DEBUG', 'SLEEP', '0.4');
    await new Promise((resolve) => setTimeout(resolve, 30)); // let DEBUG SLEEP reach the server first
    const d = await limiter.check(new Gcra(5, 60000), uniq());
    assert.equal(d.source, 'fail_closed');
    assert.equal(d.status, 503);
    assert.ok(d.error instanceof RedisTimeoutError);
    await sleeping;
  });

  test('OOM (maxmemory reached): the policy answers', { timeout: 20000 }, async () => {
    const server = await RedisServer.start();
    cleanups.push(() => server.stop());
    const conn = await connect('ioredis', server.port);
    cleanups.push(() => conn.close());
    const { limiter } = limiterWith(conn.client, { onError: new Local(0.5) });
    await conn.client.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    await conn.client.call('CONFIG', 'SET', 'maxmemory', '1');
    try {
      const d = await limiter.check(new Gcra(4, 60000), uniq());
      assert.equal(d.source, 'local');
      assert.match(d.error.message, /^OOM/);
      assert.equal(d.limit, 2);
    } finally {
      await conn.client.call('CONFIG', 'SET', 'maxmemory', '0');
    }
    assert.equal((await limiter.check(new Gcra(4, 60000), uniq())).source, 'redis');
  });

  test('no module loaded: ModuleNotLoadedError, never the policy', { timeout: 20000 }, async () => {
    const server = await RedisServer.start({ withModule: false });
    cleanups.push(() => server.stop());
    for (const kind of ['ioredis', 'node-redis-resp3']) {
      const conn = await connect(kind, server.port);
      cleanups.push(() => conn.close());
      const { limiter, hooked } = limiterWith(conn.client, { onError: 'open' });
      await assert.rejects(limiter.check(new Gcra(5, 1000), 'x'), (e) => e instanceof ModuleNotLoadedError
        && /unknown command/.test(e.cause.message));
      await assert.rejects(limiter.checkAll([[new Gcra(5, 1000), 'x']]), ModuleNotLoadedError);
      assert.equal(hooked.length, 0);
    }
  });
});
