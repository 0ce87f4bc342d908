// Against a real server, with ioredis and node-redis 5 on RESP2 and RESP3.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter, Gcra, TokenBucket, Slide, Log, Quota, Concurrency, CrossSlotError, adapt,
  keySlot } from '../lib/index.mjs';
import { RedisServer, CLIENTS, connect, memoryLogger, uniq } from './helpers.mjs';

let server;
before(async () => { server = await RedisServer.start(); });
after(async () => { await server?.stop(); });

for (const kind of CLIENTS) {
  describe(kind, () => {
    let conn;
    let limiter;
    before(async () => {
      conn = await connect(kind, server.port);
      limiter = new Limiter(conn.client, { prefix: `t:${kind}:`, logger: memoryLogger(), timeoutMs: 2000 });
    });
    after(() => conn.close());

    test('check exhausts a limit of every kind', async () => {
      const limits = [new Gcra(3, 60000), new TokenBucket(3, 1, 60000), new Slide(3, 60000), new Log(3, 60000),
        new Quota(3, 'DAY', { tz: 'America/New_York' }), new Quota(3, 3600000)];
      for (const limit of limits) {
        const id = uniq();
        const got = [];
        for (let i = 0; i < 4; i++) got.push(await limiter.check(limit, id));
        assert.deepEqual(got.map((x) => x.allowed), [true, true, true, false], limit.name);
        assert.deepEqual(got.map((x) => x.remaining), [2, 1, 0, 0], limit.name);
        const last = got[3];
        assert.ok(last.retryAfterMs > 0, limit.name);
        assert.equal(last.status, 429);
        assert.equal(last.limit, 3);
        assert.equal(last.name, limit.name);
        assert.equal(last.key, `t:${kind}:${limit.name}:${id}`);
        assert.equal(last.source, 'redis');
        assert.equal(last.headers()['Retry-After'], String(Math.ceil(last.retryAfterMs / 1000)));
      }
    });

    test('cost, never (413), peek and refund', async () => {
      const g = new Gcra(10, 60000);
      const id = uniq();
      const d = await limiter.check(g, id, { cost: 4 });
      assert.equal(d.remaining, 6);
      const too = await limiter.check(g, id, 11);
      assert.equal(too.never, true);
      assert.equal(too.status, 413);
      const p = await limiter.peek(g, id, { cost: 6 });
      assert.equal(p.allowed, true);
      assert.equal(p.remaining, 0); // as if consumed
      assert.equal((await limiter.peek(g, id)).remaining, 5); // ... but nothing was
      const r = await limiter.refund(g, id, 3);
      assert.equal(r.allowed, true);
      assert.equal(r.remaining, 9);
      assert.equal((await limiter.check(g, id, 0)).remaining, 9);
    });

    test('checkAll: one RL.ALL, all or nothing, with the hash tag in every key', async () => {
      const perUser = new Gcra(2, 60000, { name: 'user' });
      const perTenant = new Slide(10, 60000, { name: 'tenant' });
      const slots = new Concurrency(5, 60000, { name: 'slots' });
      const tenant = uniq('acme');
      const checks = [[perUser, 'alice'], [perTenant, tenant], [slots, 'alice']];
      const a = await limiter.checkAll(checks, { tag: tenant });
      assert.equal(a.allowed, true);
      assert.deepEqual(a.decisions.map((x) => x.key), [`t:${kind}:{${tenant}}:user:alice`,
        `t:${kind}:{${tenant}}:tenant:${tenant}`, `t:${kind}:{${tenant}}:slots:alice`]);
      assert.equal(typeof a.decisions[2].lease, 'string');
      // A lease taken by checkAll is released by id, under the same tag.
      assert.equal(await limiter.release(slots, 'alice', a.decisions[2].lease, { tag: tenant }), true);
      assert.equal(await limiter.release(slots, 'alice', a.decisions[2].lease, { tag: tenant }), false);
      await limiter.checkAll(checks, { tag: tenant });
      const denied = await limiter.checkAll(checks, { tag: tenant });
      assert.equal(denied.allowed, false);
      assert.deepEqual(denied.deniedBy.map((x) => x.name), ['user']);
      assert.equal(denied.name, 'user');
      assert.equal(denied.status, 429);
      assert.ok(denied.retryAfterMs > 0);
      // All or nothing: the denied call took nothing from the tenant.
      const t = await limiter.peek(perTenant, tenant, { cost: 0, tag: tenant });
      assert.equal(t.remaining, 8);
      assert.match(denied.headers()['RateLimit-Policy'], /^"user";q=2;w=60, "tenant";q=10;w=60$/);
      // Per-check cost.
      const c = await limiter.checkAll([[perTenant, tenant, 5], [new Gcra(9, 1000, { name: 'x' }), tenant]], { tag: tenant });
      assert.equal(c.decisions[0].remaining, 3);
      assert.equal(c.decisions[0].cost, 5);
      // PEEK: nothing consumed.
      const pk = await limiter.checkAll([[perTenant, tenant]], { tag: tenant, peek: true });
      assert.equal(pk.decisions[0].remaining, 2);
      assert.equal((await limiter.peek(perTenant, tenant, { cost: 0, tag: tenant })).remaining, 3);
    });

    test('checkAll on a cluster client raises CrossSlotError before any round trip; duplicates always', async () => {
      const sent = [];
      const inner = adapt(conn.client);
      // The same connection, declared as a cluster's (as ioredis Cluster and node-redis cluster adapters are).
      const clustered = { kind: 'test-cluster', cluster: true, send: (...a) => { sent.push(a); return inner.send(...a); } };
      const l = new Limiter(clustered, { prefix: `x:${kind}:` });
      const g = new Gcra(5, 1000, { name: 'g' });
      let other = 'b';
      while (keySlot(l.key(g, other)) === keySlot(l.key(g, 'a'))) other += 'b';
      await assert.rejects(l.checkAll([[g, 'a'], [g, other]]), CrossSlotError);
      await assert.rejects(l.checkAll([[g, 'a'], [g, 'a']], { tag: 't' }), RangeError);
      assert.equal(sent.length, 0);
      const ok = await l.checkAll([[g, 'a'], [g, other]], { tag: uniq() });
      assert.equal(ok.allowed, true);
      assert.equal(sent.length, 1);
      // A single server has no slots: the same keys are checked as they are.
      const plain = new Limiter(conn.client, { prefix: `x:${kind}:` });
      assert.equal((await plain.checkAll([[g, uniq()], [g, other]])).allowed, true);
      await assert.rejects(plain.checkAll([[g, 'a'], [g, 'a']]), RangeError);
    });

    test('usage errors are raised, never swallowed by the failure policy', async () => {
      const l = new Limiter(conn.client, { prefix: `u:${kind}:`, onError: 'open', logger: memoryLogger() });
      const g = new Gcra(5, 1000, { name: 'g' });
      const id = uniq();
      await conn.client.set(`u:${kind}:g:${id}`, 'a string');
      await assert.rejects(l.check(g, id), /WRONGTYPE/);
      // An argument the module refuses (a TZ it does not know).
      await assert.rejects(l.check(new Quota(5, 'DAY', { tz: 'Mars/Olympus_Mons' }), id), /ERR/);
      assert.equal(l.fallbacks.total, 0);
      // Arguments this library refuses never reach Redis.
      await assert.rejects(l.check(g, id, -1), RangeError);
      await assert.rejects(l.check(g, id, 1.5), RangeError);
    });
  });
}

describe('ioredis: commands the timeout rejects itself', () => {
  test('check and checkAll send their own ioredis Command (call()\'s options), except with auto-pipelining', async () => {
    const { Redis } = await import('ioredis');
    const plain = new Redis({ host: '127.0.0.1', port: server.port, keyPrefix: 'ignored:' });
    const auto = new Redis({ host: '127.0.0.1', port: server.port, enableAutoPipelining: true });
    try {
      const a = adapt(plain);
      const cmd = a.start('RL.GCRA', [`start:${uniq()}`, ['5', '1000']]);
      assert.equal(typeof cmd.reject, 'function');
      assert.deepEqual(await cmd.promise, [1, 5, 4, 0, 200]);
      assert.equal(cmd.args[0].startsWith('start:'), true); // keyPrefix: as call(), not applied to unknown commands
      assert.equal(adapt(auto).start('RL.GCRA', ['k', ['5', '1000']]), null);
      for (const client of [plain, auto]) {
        const limiter = new Limiter(client, { prefix: `start:${uniq()}:`, timeoutMs: 2000 });
        assert.equal(limiter.startable, true);
        const g = new Gcra(2, 60000, { name: 'g' });
        const got = [];
        for (let i = 0; i < 3; i++) got.push((await limiter.check(g, 'u')).allowed);
        assert.deepEqual(got, [true, true, false]);
        const all = await limiter.checkAll([[g, 'v'], [new Slide(1, 60000, { name: 's' }), 'v']]);
        assert.equal(all.allowed, true);
        assert.equal((await limiter.checkAll([[g, 'v'], [new Slide(1, 60000, { name: 's' }), 'v']])).allowed, false);
      }
    } finally {
      plain.disconnect();
      auto.disconnect();
    }
  });
});
