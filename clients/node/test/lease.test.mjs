// Leases (acquire / withLease / renewer / lost) and reserve-then-settle.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Limiter, Concurrency, TokenBucket, Gcra, Lease, RateLimited, LeaseLostError,
  ModuleBackend } from '../lib/index.mjs';
import { RedisServer, CLIENTS, connect, memoryLogger, uniq } from './helpers.mjs';

let server;
before(async () => { server = await RedisServer.start(); });
after(async () => { await server?.stop(); });

// A backend that counts (and can delay or fail) each kind of call.
function spyBackend(client, { delayCheckMs = 0, failRelease = false, failRefund = false, failRenew = false } = {}) {
  const inner = new ModuleBackend(client);
  const calls = { check: [], release: [], renew: [], peek: [], all: [] };
  return {
    calls,
    name: 'spy',
    async check(limit, key, args) {
      calls.check.push(args);
      if (failRefund && args.includes('REFUND')) throw new Error('connection reset');
      const p = inner.check(limit, key, args);
      if (delayCheckMs) await sleep(delayCheckMs);
      return p;
    },
    peek: (...a) => { calls.peek.push(a); return inner.peek(...a); },
    all: (...a) => { calls.all.push(a); return inner.all(...a); },
    release: (...a) => { calls.release.push(a); return failRelease ? Promise.reject(new Error('connection reset')) : inner.release(...a); },
    renew: (...a) => { calls.renew.push(a); return failRenew ? Promise.reject(new Error('connection reset')) : inner.renew(...a); },
  };
}

async function until(pred, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

for (const kind of CLIENTS) {
  describe(kind, () => {
    let conn;
    let limiter;
    const held = async (limit, id) => limit.limit - (await limiter.peek(limit, id, 0)).remaining;
    before(async () => {
      conn = await connect(kind, server.port);
      limiter = new Limiter(conn.client, { prefix: `l:${kind}:`, logger: memoryLogger(), timeoutMs: 2000 });
    });
    after(() => conn.close());

    test('acquire and release (idempotent: one RL.RELEASE)', async () => {
      const spy = spyBackend(conn.client);
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy });
      const slots = new Concurrency(2, 60000);
      const id = uniq();
      const a = await l.acquire(slots, id);
      assert.ok(a instanceof Lease);
      assert.equal(a.allowed, true);
      assert.equal(typeof a.id, 'string');
      assert.equal(a.lease, a.id);
      const b = await l.acquire(slots, id, { cost: 1, id: 'mine' });
      assert.equal(b.id, 'mine');
      const c = await l.acquire(slots, id);
      assert.equal(c instanceof Lease, false);
      assert.equal(c.allowed, false);
      assert.equal(c.lease, null);
      assert.equal(c.status, 503);
      assert.equal(await a.release(), true);
      assert.equal(await a.release(), true);
      assert.equal(spy.calls.release.length, 1);
      assert.equal(await held(slots, id), 1);
      // Acquiring again with a live lease's id renews it, never takes a second slot.
      const again = await l.acquire(slots, id, { id: 'mine' });
      assert.equal(again.allowed, true);
      assert.equal(await held(slots, id), 1);
      await b.release();
      assert.equal(await held(slots, id), 0);
    });

    test('withLease releases after return, throw, abort and timeout', async () => {
      const slots = new Concurrency(1, 60000);
      const id = uniq();
      assert.equal(await limiter.withLease(slots, id, async (lease) => {
        assert.equal(await held(slots, id), 1);
        return lease.id.length > 0 ? 42 : 0;
      }), 42);
      assert.equal(await held(slots, id), 0);
      await assert.rejects(limiter.withLease(slots, id, async () => { throw new Error('boom'); }), /boom/);
      assert.equal(await held(slots, id), 0);
      // Abort: fn never settles on its own; withLease rejects and releases.
      const ac = new AbortController();
      let seen;
      const p = limiter.withLease(slots, id, (lease) => {
        seen = lease;
        setTimeout(() => ac.abort(new Error('client went away')), 20);
        return new Promise(() => {});
      }, { signal: ac.signal });
      await assert.rejects(p, /client went away/);
      assert.equal(seen.signal.aborted, true);
      assert.equal(await held(slots, id), 0);
      await assert.rejects(limiter.withLease(slots, id, () => new Promise(() => {}), { timeoutMs: 30 }),
        (e) => e.name === 'TimeoutError');
      assert.equal(await held(slots, id), 0);
      // An already aborted signal: no acquire at all.
      const spy = spyBackend(conn.client);
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy });
      await assert.rejects(l.withLease(slots, id, () => 1, { signal: AbortSignal.abort() }));
      assert.equal(spy.calls.check.length, 0);
      // Denied: RateLimited with the decision, fn never runs.
      const lease = await limiter.acquire(slots, id);
      let ran = false;
      await assert.rejects(limiter.withLease(slots, id, () => { ran = true; }), (e) => e instanceof RateLimited
        && e.decision.status === 503);
      assert.equal(ran, false);
      await lease.release();
    });

    test('the renewer renews; a lease found gone is lost (signal, onLost, withLease rejects)', { timeout: 10000 }, async () => {
      const spy = spyBackend(conn.client);
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy, logger: memoryLogger() });
      const slots = new Concurrency(3, 60000);
      const id = uniq();
      const lease = await l.acquire(slots, id, { renewEveryMs: 15 });
      await until(() => spy.calls.renew.length >= 2);
      assert.equal(lease.lost, false);
      await lease.release();
      const n = spy.calls.renew.length;
      await sleep(50);
      assert.ok(spy.calls.renew.length <= n + 1, 'the renewer stops at release');
      // Lost: the key is deleted under a running withLease.
      let lostCalled = 0;
      const run = l.withLease(slots, id, async (ls) => {
        await conn.client.del(ls.key);
        await new Promise((resolve) => ls.signal.addEventListener('abort', resolve));
        return 'finished';
      }, { renewEveryMs: 15, onLost: () => { lostCalled++; } });
      await assert.rejects(run, LeaseLostError);
      assert.equal(lostCalled, 1);
    });

    test('a renewer that cannot reach Redis logs once and keeps trying; the lease is not lost', { timeout: 10000 }, async () => {
      const logger = memoryLogger();
      const spy = spyBackend(conn.client, { failRenew: true });
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy, logger });
      const lease = await l.acquire(new Concurrency(1, 60000), uniq(), { renewEveryMs: 10 });
      await until(() => spy.calls.renew.length >= 3);
      assert.equal(lease.lost, false);
      assert.equal(logger.lines.filter((x) => /renewing lease/.test(x)).length, 1);
      assert.equal(await lease.release(), true);
    });

    test('a failed release is logged once and never retried', async () => {
      const logger = memoryLogger();
      const spy = spyBackend(conn.client, { failRelease: true });
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy, logger });
      const slots = new Concurrency(1, 60000);
      const lease = await l.acquire(slots, uniq());
      assert.equal(await lease.release(), false);
      assert.equal(await lease.release(), false);
      assert.equal(spy.calls.release.length, 1);
      assert.equal(logger.lines.filter((x) => /releasing lease/.test(x)).length, 1);
    });

    test('an acquire whose reply came too late is released by its id', { timeout: 10000 }, async () => {
      const spy = spyBackend(conn.client, { delayCheckMs: 150 });
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy, timeoutMs: 50, logger: memoryLogger() });
      const slots = new Concurrency(1, 60000);
      const id = uniq();
      const d = await l.acquire(slots, id);
      assert.equal(d.allowed, false); // closed
      assert.equal(d.source, 'fail_closed');
      assert.equal(spy.calls.release.length, 1);
      await until(async () => (await held(slots, id)) === 0);
    });

    test('reserve, then settle exactly once', async () => {
      const tokens = new TokenBucket(1000, 1, 3600000);
      const id = uniq();
      const r = await limiter.reserve(tokens, id, 400);
      assert.equal(r.allowed, true);
      assert.equal(r.decision.remaining, 600);
      const s = await r.settle(100);
      assert.equal(s.remaining, 900);
      assert.equal(await r.settle(100), s);
      assert.equal(await r.settle(0), s, 'later settles answer the first');
      assert.equal((await limiter.peek(tokens, id, 0)).remaining, 900);
      // Denied: nothing consumed, nothing refunded.
      const big = await limiter.reserve(tokens, id, 950);
      assert.equal(big.allowed, false);
      assert.equal(await big.settle(0), null);
      assert.equal((await limiter.peek(tokens, id, 0)).remaining, 900);
      // More than reserved: the excess is charged.
      const over = await limiter.reserve(tokens, id, 100);
      await over.settle(150);
      assert.equal((await limiter.peek(tokens, id, 0)).remaining, 750);
      // withReservation: a throw without settle keeps maxCost consumed; a settle stands.
      await assert.rejects(limiter.withReservation(tokens, id, 50, async () => { throw new Error('upstream failed'); }));
      assert.equal((await limiter.peek(tokens, id, 0)).remaining, 700);
      assert.equal(await limiter.withReservation(tokens, id, 50, async (res) => { await res.settle(10); return 'ok'; }), 'ok');
      assert.equal((await limiter.peek(tokens, id, 0)).remaining, 690);
      await assert.rejects(limiter.withReservation(tokens, id, 5000, () => 'never runs'), RateLimited);
    });

    test('a failed settle is logged and not retried: the units stay consumed', async () => {
      const logger = memoryLogger();
      const spy = spyBackend(conn.client, { failRefund: true });
      const l = new Limiter(conn.client, { prefix: `l:${kind}:`, backend: spy, logger });
      const g = new Gcra(100, 3600000);
      const id = uniq();
      const r = await l.reserve(g, id, 50);
      assert.equal(await r.settle(10), null);
      assert.equal(await r.settle(10), null);
      assert.equal(spy.calls.check.filter((a) => a.includes('REFUND')).length, 1);
      assert.equal(logger.lines.length, 1);
      assert.equal((await l.peek(g, id, 0)).remaining, 50);
    });
  });
}
