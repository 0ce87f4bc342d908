// durable: the decision and WAIT in one pipeline; unacknowledged writes denied
// (fail closed). Leases in doubt: validUntil, inDoubt, onLost at the deadline.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Limiter, Gcra, Concurrency, Lease, NotDurableError, RateLimited } from '../lib/index.mjs';
import { RedisServer, CLIENTS, connect, memoryLogger, uniq } from './helpers.mjs';

let master;
let replica;
let admin; // ioredis on the master, for INFO

async function until(pred, ms = 5000, what = 'condition') {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function waits() {
  const info = await admin.client.call('INFO', 'commandstats');
  const m = /cmdstat_wait:calls=(\d+)/.exec(info);
  return m ? Number(m[1]) : 0;
}

before(async () => {
  master = await RedisServer.start();
  replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
  const r = await connect('ioredis', replica.port);
  await until(async () => /master_link_status:up/.test(await r.client.call('INFO', 'replication')), 10000, 'the replica link');
  r.close();
  admin = await connect('ioredis', master.port);
});
after(async () => {
  replica?.resume();
  admin?.close();
  await replica?.stop();
  await master?.stop();
});

// The replica stopped (SIGSTOP) while fn runs: WAIT gets no acknowledgement.
async function replicaPaused(fn) {
  replica.pause();
  try {
    return await fn();
  } finally {
    replica.resume();
  }
}

test('options are checked', () => {
  const fake = { kind: 'fake', cluster: false, send: async () => null, sendWait: async () => [null, 0] };
  assert.equal(new Limiter(fake).durable, null);
  assert.deepEqual(new Limiter(fake, { durable: true }).durable, { replicas: 1, timeoutMs: 50 });
  assert.deepEqual(new Limiter(fake, { timeoutMs: 300, durable: { replicas: 2 } }).durable, { replicas: 2, timeoutMs: 150 });
  assert.throws(() => new Limiter(fake, { timeoutMs: 100, durable: { timeoutMs: 100 } }), RangeError);
  assert.throws(() => new Limiter(fake, { durable: { replicas: 0 } }), RangeError);
  assert.throws(() => new Limiter(fake, { durable: 'yes' }), TypeError);
  assert.throws(() => new Limiter(fake, { durable: true, backend: { check() {} } }), TypeError);
});

for (const kind of CLIENTS) {
  describe(kind, () => {
    let conn;
    before(async () => { conn = await connect(kind, master.port); });
    after(() => conn.close());

    test('acknowledged: one WAIT per write; denials stay denials; peek and cost 0 send none', async () => {
      const l = new Limiter(conn.client, { durable: true, logger: memoryLogger() });
      const g = new Gcra(2, 60000, { name: `g-${kind}` });
      const id = uniq();
      const w0 = await waits();
      const d = await l.check(g, id);
      assert.equal(d.allowed, true);
      assert.equal(d.source, 'redis');
      assert.equal(await waits(), w0 + 1);
      assert.equal((await l.check(g, id)).allowed, true);
      const denied = await l.check(g, id);
      assert.equal(denied.allowed, false);
      assert.equal(denied.source, 'redis');
      assert.equal(denied.status, 429);
      const w1 = await waits();
      await l.peek(g, id);
      await l.check(g, id, { cost: 0 });
      await l.check(g, uniq(), { durable: false });
      await l.checkAll([[g, id]], { peek: true });
      assert.equal(await waits(), w1);
      assert.equal((await new Limiter(conn.client).check(g, uniq(), { durable: true })).allowed, true);
      assert.equal(await waits(), w1 + 1);
      assert.equal(l.durableFailures, 0);
    });

    test('a WAIT that times out on the server late is still a durable denial', async () => {
      // timeoutMs 100, WAIT 90 ms: Redis 7.0 answers a timed-out WAIT up to
      // 100 ms late, after the Limiter's timeout: it was read as a lost call
      // (source fail_closed, the failure policy) instead of a durable denial.
      const l = new Limiter(conn.client, { durable: { timeoutMs: 90 }, timeoutMs: 100, logger: memoryLogger() });
      const g = new Gcra(5, 60000, { name: `late-${kind}` });
      const d = await replicaPaused(() => l.check(g, uniq()));
      assert.equal(d.allowed, false);
      assert.equal(d.source, 'durable');
    });

    test('unacknowledged: check, checkAll and acquire denied (source durable), refund rejects', async () => {
      const l = new Limiter(conn.client, { durable: { timeoutMs: 30 }, timeoutMs: 1000, logger: memoryLogger() });
      const g = new Gcra(5, 60000, { name: `u-${kind}` });
      const slots = new Concurrency(1, 60000, { name: `c-${kind}` });
      const id = uniq();
      await replicaPaused(async () => {
        const t0 = Date.now();
        const d = await l.check(g, id);
        assert.ok(Date.now() - t0 < 900);
        assert.equal(d.allowed, false);
        assert.equal(d.source, 'durable');
        assert.equal(d.status, 503);
        assert.deepEqual(d.headers(), { 'Retry-After': '1' });
        assert.ok(d.error instanceof NotDurableError);
        assert.equal(d.error.acks, 0);
        assert.equal(d.error.decision.allowed, true);
        const all = await l.checkAll([[g, id], [new Gcra(5, 60000, { name: `v-${kind}` }), id]]);
        assert.equal(all.source, 'durable');
        assert.deepEqual(all.decisions.map((x) => x.source), ['durable', 'durable']);
        const a = await l.acquire(slots, id);
        assert.equal(a instanceof Lease, false);
        assert.equal(a.source, 'durable');
        await assert.rejects(l.refund(g, id, 1), NotDurableError);
      });
      assert.equal(l.durableFailures, 4);
      // units stay consumed (5 - the check - checkAll's + the refund); the lease was given back
      assert.equal((await l.peek(g, id, 0)).remaining, 4);
      await until(async () => {
        const x = await l.acquire(slots, id);
        return x instanceof Lease && x.release();
      }, 5000, 'an acknowledged acquire of the freed slot');
    });

    test('lease: renew and release wait; an unacknowledged renewal is in doubt', async () => {
      const l = new Limiter(conn.client, { durable: { timeoutMs: 30 }, timeoutMs: 1000, logger: memoryLogger() });
      const slots = new Concurrency(1, 60000, { name: `r-${kind}` });
      const lease = await l.acquire(slots, uniq());
      assert.ok(lease instanceof Lease);
      assert.deepEqual(lease.durable, { replicas: 1, timeoutMs: 30 });
      const w0 = await waits();
      assert.equal(await lease.renew(), true);
      assert.equal(await waits(), w0 + 1);
      const before = lease.validUntil;
      await replicaPaused(async () => {
        await assert.rejects(lease.renew(), NotDurableError);
        assert.equal(lease.inDoubt, true);
        assert.equal(lease.validUntil, before);
      });
      await until(() => lease.renew(), 5000, 'a confirmed renewal');
      assert.equal(lease.inDoubt, false);
      assert.ok(lease.validUntil > before);
      assert.equal(await lease.release(), true);
    });
  });
}

test('lua backend: FCALL and WAIT in one pipeline', async () => {
  const conn = await connect('ioredis', master.port);
  try {
    const l = new Limiter(conn.client, { backend: 'lua', durable: { timeoutMs: 30 }, timeoutMs: 1000, logger: memoryLogger() });
    const g = new Gcra(5, 60000, { name: 'lua' });
    const id = uniq();
    assert.equal((await l.check(g, id)).allowed, true);
    const w0 = await waits();
    assert.equal((await l.check(g, id)).allowed, true);
    assert.equal(await waits(), w0 + 1);
    await replicaPaused(async () => assert.equal((await l.check(g, id)).source, 'durable'));
  } finally {
    conn.close();
  }
});

// --- leases in doubt ---------------------------------------------------------------

describe('leases in doubt', () => {
  let server;
  before(async () => { server = await RedisServer.start(); });
  after(async () => { server?.resume(); await server?.stop(); });

  for (const kind of ['ioredis', 'node-redis-resp3']) {
    test(`${kind}: validUntil passes while the server is stopped: lost at the deadline`, async () => {
      const conn = await connect(kind, server.port);
      try {
        const l = new Limiter(conn.client, { timeoutMs: 100, logger: memoryLogger() });
        let lostAt = null;
        const lease = await l.acquire(new Concurrency(1, 400, { name: `d-${kind}` }), uniq(),
          { renewEveryMs: 50, onLost: () => { lostAt = performance.now(); } });
        assert.ok(lease instanceof Lease);
        await sleep(120);
        assert.equal(lease.inDoubt, false);
        assert.ok(lease.remainingMs > 250);
        server.pause();
        const stopped = performance.now();
        try {
          await until(() => lease.inDoubt, 2000, 'in doubt');
          await until(() => lostAt !== null, 2000, 'onLost');
          assert.ok(lostAt - stopped < 400 + 300, `lost ${lostAt - stopped} ms after the stop`);
          assert.equal(lease.lost, true);
          assert.equal(lease.signal.aborted, true);
          assert.equal(await lease.renew(), false);
        } finally {
          server.resume();
        }
        await lease.release();
      } finally {
        conn.close();
      }
    });
  }

  test('in doubt during CLIENT PAUSE, then confirmed', async () => {
    const conn = await connect('ioredis', server.port);
    try {
      const l = new Limiter(conn.client, { timeoutMs: 50, logger: memoryLogger() });
      await l.withLease(new Concurrency(1, 5000, { name: 'p' }), uniq(), async (lease) => {
        await admin.client.call('PING');
        const other = await connect('ioredis', server.port);
        await other.client.call('CLIENT', 'PAUSE', '300', 'ALL');
        other.close();
        await until(() => lease.inDoubt, 2000, 'in doubt during the pause');
        assert.equal(lease.lost, false);
        await until(() => !lease.inDoubt, 3000, 'a confirmed renewal after the pause');
        assert.equal(lease.lost, false);
        assert.ok(lease.remainingMs > 4000);
      }, { renewEveryMs: 20 });
    } finally {
      conn.close();
    }
  });
});

test('RateLimited still raised by withLease on a durable denial', async () => {
  const conn = await connect('ioredis', master.port);
  try {
    const l = new Limiter(conn.client, { durable: { timeoutMs: 30 }, timeoutMs: 1000, logger: memoryLogger() });
    await replicaPaused(() => assert.rejects(l.withLease(new Concurrency(1, 60000, { name: 'w' }), uniq(), async () => 1), RateLimited));
  } finally {
    conn.close();
  }
});
