// Waiting instead of failing: MAXWAIT bookings (check / checkAll / peek with
// maxWaitMs, pace) on a server whose clock is frozen (the fake clock), so
// every wait_ms is exact; and blocking acquires (RL.ACQUIRE ... WAIT:
// acquire / withLease with waitMs, cancellation) on a server with the real
// clock, every wait bounded in real time.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { Limiter, Gcra, TokenBucket, Slide, Log, Quota, Concurrency, Lease, RateLimited, NotSupportedError,
  ModuleBackend, LuaBackend, parseReply, parseAllReply } from '../lib/index.mjs';
import decisionMod from '../lib/decision.cjs';
import { RedisServer, CLIENTS, connect, memoryLogger, uniq } from './helpers.mjs';

const { combine } = decisionMod;
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

let tmp;
let clockFile;
let frozen; // the fake clock, frozen: MAXWAIT
let live; // the real clock: WAIT

function setClock(us) {
  fs.writeFileSync(`${clockFile}.tmp`, `@${us}\n`);
  fs.renameSync(`${clockFile}.tmp`, clockFile);
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-wait-'));
  const so = path.join(tmp, 'fakeclock.so');
  await run('cc', ['-shared', '-fPIC', '-O2', '-o', so, path.join(REPO, 'tests', 'common', 'fakeclock.c'), '-ldl'],
    { timeout: 60000 });
  clockFile = path.join(tmp, 'clock');
  setClock(Date.UTC(2026, 0, 15, 12) * 1000);
  const started = await Promise.allSettled([
    RedisServer.start({ env: { LD_PRELOAD: so, FAKECLOCK_FILE: clockFile } }),
    RedisServer.start(),
  ]);
  [frozen, live] = started.map((s) => s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
});
after(async () => {
  await Promise.all([frozen?.stop(), live?.stop()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// A backend that records every call and answers nothing: for the checks
// that must fail before any round trip.
function recorder() {
  const calls = [];
  const rec = (m) => (...a) => { calls.push([m, ...a]); return Promise.reject(new Error('no round trip expected')); };
  return { calls, name: 'module', waits: true, check: rec('check'), peek: rec('peek'), all: rec('all'), release: rec('release'), renew: rec('renew') };
}

async function until(pred, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

// --- parsing and validation (no server) ------------------------------------------

test('wait_ms: the sixth field of a rate limit, RESP2 and RESP3; a lease stays a lease', () => {
  assert.equal(parseReply([1, 1, 0, 0, 1978, 1478]).waitMs, 1478);
  assert.equal(parseReply([1, 1, 0, 0, 1978, 1478]).lease, null);
  assert.equal(parseReply([1, 1, 0, 0, 500]).waitMs, 0);
  assert.equal(parseReply([1, 1, 0, 0, 500, 'lease-1']).lease, 'lease-1');
  assert.equal(parseReply([1, 1, 0, 0, 500, 'lease-1']).waitMs, 0);
  assert.equal(parseReply([1, 1, 0, 0, 500, '7'], true).lease, '7'); // the kind decides when known
  assert.equal(parseReply([1, 1, 0, 0, 500, '7'], false).waitMs, 7);
  const m = { allowed: true, limit: 1, remaining: 0, retry_after_ms: 0, reset_after_ms: 2435, wait_ms: 1935 };
  assert.equal(parseReply(m).waitMs, 1935);
  assert.equal(parseReply(new Map(Object.entries(m))).waitMs, 1935);
  assert.equal(parseReply({ ...m, wait_ms: undefined }).waitMs, 0);
  // RL.ALL: every per-key reply carries the one wait; the combined Decision says it too.
  const g = new Gcra(1, 1000);
  const t = new TokenBucket(5, 1, 1000);
  const checks = [{ limit: g, cost: 1 }, { limit: t, cost: 1 }];
  const flat = [1, 0, [1, 1, 0, 0, 2971, 1971], [1, 5, 2, 0, 2971, 1971]];
  const map = { allowed: true, retry_after_ms: 0, limits: [
    { allowed: true, limit: 1, remaining: 0, retry_after_ms: 0, reset_after_ms: 2971, wait_ms: 1971 },
    { allowed: true, limit: 5, remaining: 2, retry_after_ms: 0, reset_after_ms: 2971, wait_ms: 1971 }] };
  for (const raw of [flat, map]) {
    const d = combine(parseAllReply(raw, [false, false]), checks, ['a', 'b']);
    assert.equal(d.waitMs, 1971);
    assert.deepEqual(d.decisions.map((x) => x.waitMs), [1971, 1971]);
    assert.equal(d.toJSON().waitMs, 1971);
  }
});

test('maxWaitMs on a kind that cannot book, or out of range: an error before any round trip', async () => {
  const spy = recorder();
  const l = new Limiter({ kind: 'x', cluster: false, send: async () => null }, { backend: spy });
  for (const limit of [new Slide(5, 1000), new Log(5, 1000), new Quota(5, 'DAY'), new Concurrency(2, 1000)]) {
    await assert.rejects(l.check(limit, 'u', { maxWaitMs: 100 }), TypeError);
    await assert.rejects(l.peek(limit, 'u', { maxWaitMs: 100 }), TypeError);
    await assert.rejects(l.pace(limit, 'u', { maxWaitMs: 100 }), TypeError);
    await assert.rejects(l.checkAll([[new Gcra(5, 1000), 'u'], [limit, 'u']], { maxWaitMs: 100 }), TypeError);
  }
  const g = new Gcra(5, 1000);
  for (const bad of [-1, 1000001, 1.5, '10', NaN]) {
    await assert.rejects(l.check(g, 'u', { maxWaitMs: bad }), RangeError);
    await assert.rejects(l.pace(g, 'u', { maxWaitMs: bad }), RangeError);
  }
  await assert.rejects(l.pace(g, 'u'), /pace needs maxWaitMs/);
  await assert.rejects(l.pace(g, 'u', { maxWaitMs: 10, cost: 0 }), RangeError);
  const c = new Concurrency(2, 1000);
  await assert.rejects(l.acquire(c, 'u', { waitMs: 600001 }), RangeError);
  await assert.rejects(l.acquire(c, 'u', { waitMs: -5 }), RangeError);
  await assert.rejects(l.acquire(c, 'u', { waitMs: 10, durable: true }), /waitMs and durable/);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(l.pace(g, 'u', { maxWaitMs: 10, signal: ac.signal }), { name: 'AbortError' });
  await assert.rejects(l.acquire(c, 'u', { waitMs: 10, signal: ac.signal }), { name: 'AbortError' });
  assert.deepEqual(spy.calls, []);
});

test('Redis down: pace and a waiting acquire answer by the failure policy, at once', async () => {
  const refused = { kind: 'x', cluster: false, send: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) };
  const g = new Gcra(5, 1000);
  const slept = [];
  const open = new Limiter(refused, { onError: 'open', logger: memoryLogger() });
  open.sleep = async (ms) => { slept.push(ms); };
  const d = await open.pace(g, 'u', { maxWaitMs: 1000 });
  assert.deepEqual([d.allowed, d.source, d.waitMs, slept], [true, 'fail_open', 0, []]);
  const closed = new Limiter(refused, { onError: 'closed', logger: memoryLogger() });
  await assert.rejects(closed.pace(g, 'u', { maxWaitMs: 1000 }), (e) => e instanceof RateLimited && e.decision.source === 'fail_closed');
  const denied = await closed.acquire(new Concurrency(2, 1000), 'u', { waitMs: 1000 });
  assert.deepEqual([denied.allowed, denied.source], [false, 'fail_closed']);
});

test('the Lua backend: WAIT and MAXWAIT raise NotSupportedError before any round trip', async () => {
  const sent = [];
  const adapter = { kind: 'x', cluster: false, send: async (...a) => { sent.push(a); return null; } };
  const l = new Limiter(adapter, { backend: new LuaBackend(adapter) });
  const g = new Gcra(5, 1000);
  for (const p of [
    l.check(g, 'u', { maxWaitMs: 100 }), l.peek(g, 'u', { maxWaitMs: 100 }), l.pace(g, 'u', { maxWaitMs: 100 }),
    l.checkAll([[g, 'u'], [new TokenBucket(5, 1, 100), 'u']], { maxWaitMs: 100 }),
  ]) await assert.rejects(p, (err) => err instanceof NotSupportedError && err.feature === 'MAXWAIT' && err.backend === 'lua');
  await assert.rejects(l.acquire(new Concurrency(2, 1000), 'u', { waitMs: 100 }),
    (err) => err instanceof NotSupportedError && err.feature === 'WAIT');
  await assert.rejects(l.withLease(new Concurrency(2, 1000), 'u', async () => 1, { waitMs: 100 }), NotSupportedError);
  assert.deepEqual(sent, []);
});

test('a client socket timeout that would cut the wait: RangeError naming it, before any round trip', async () => {
  const io = new Redis({ lazyConnect: true, socketTimeout: 500, port: 1 });
  const nr = createClient({ socket: { port: 1, socketTimeout: 500 } });
  const c = new Concurrency(2, 1000);
  try {
    for (const [client, what] of [[io, /ioredis socketTimeout \(500 ms\)/], [nr, /node-redis socket.socketTimeout \(500 ms\)/]]) {
      const l = new Limiter(client, { timeoutMs: 100 });
      await assert.rejects(l.acquire(c, 'u', { waitMs: 450 }), what); // 450 + the Limiter's 100 > 500
      await assert.rejects(l.withLease(c, 'u', async () => 1, { waitMs: 1000 }), RangeError);
    }
  } finally {
    io.disconnect();
  }
});

// --- MAXWAIT on the frozen clock ----------------------------------------------------

for (const kind of CLIENTS) {
  describe(`${kind}: booking (MAXWAIT, frozen clock)`, () => {
    let conn;
    let limiter;
    before(async () => {
      conn = await connect(kind, frozen.port);
      limiter = new Limiter(conn.client, { prefix: `w:${kind}:`, logger: memoryLogger(), timeoutMs: 2000 });
    });
    after(() => conn.close());

    test('check books the earliest start: waitMs one emission interval apart; denied beyond maxWaitMs books nothing', async () => {
      const g = new Gcra(10, 1000, { burst: 1, name: 'paced' }); // one start per 100 ms
      const id = uniq();
      const waits = [];
      for (let i = 0; i < 5; i++) {
        const d = await limiter.check(g, id, { maxWaitMs: 1000 });
        assert.equal(d.allowed, true);
        waits.push(d.waitMs);
      }
      assert.deepEqual(waits, [0, 100, 200, 300, 400]);
      // PEEK answers the booking a check would make, and makes none.
      const p = await limiter.peek(g, id, { maxWaitMs: 1000 });
      assert.equal(p.allowed, true);
      assert.equal(p.waitMs, 500);
      assert.equal((await limiter.peek(g, id, { maxWaitMs: 1000 })).waitMs, 500);
      // Beyond maxWaitMs: denied with retry_after_ms, nothing booked.
      const no = await limiter.check(g, id, { maxWaitMs: 499 });
      assert.equal(no.allowed, false);
      assert.equal(no.waitMs, 0);
      assert.equal(no.retryAfterMs, 500);
      assert.equal((await limiter.check(g, id, { maxWaitMs: 500 })).waitMs, 500);
      // Without MAXWAIT: denied until the bookings ahead leave room.
      const plain = await limiter.check(g, id);
      assert.equal(plain.allowed, false);
      assert.equal(plain.retryAfterMs, 600);
      assert.equal(plain.waitMs, 0);
      // A token bucket books too; a cost above the capacity never.
      const t = new TokenBucket(2, 1, 50);
      const tid = uniq();
      assert.deepEqual([await limiter.check(t, tid, { maxWaitMs: 1000 }), await limiter.check(t, tid, { maxWaitMs: 1000 }),
        await limiter.check(t, tid, { maxWaitMs: 1000 }), await limiter.check(t, tid, { cost: 2, maxWaitMs: 1000 })]
        .map((d) => [d.allowed, d.waitMs]), [[true, 0], [true, 0], [true, 50], [true, 150]]);
      const never = await limiter.check(t, tid, { cost: 3, maxWaitMs: 1000000 });
      assert.equal(never.allowed, false);
      assert.equal(never.never, true);
    });

    test('checkAll books every key at one start', async () => {
      const a = new Gcra(1, 1000, { name: 'all-a' });
      const b = new TokenBucket(5, 1, 1000, { name: 'all-b' });
      const id = uniq();
      const first = await limiter.checkAll([[a, id], [b, id]], { maxWaitMs: 3000 });
      assert.equal(first.allowed, true);
      assert.equal(first.waitMs, 0);
      const second = await limiter.checkAll([[a, id], [b, id]], { maxWaitMs: 3000 });
      assert.equal(second.allowed, true);
      assert.equal(second.waitMs, 1000);
      assert.deepEqual(second.decisions.map((x) => x.waitMs), [1000, 1000]);
      assert.equal(second.decisions[1].remaining, 3);
      const peeked = await limiter.checkAll([[a, id], [b, id]], { maxWaitMs: 3000, peek: true });
      assert.equal(peeked.waitMs, 2000);
      const denied = await limiter.checkAll([[a, id], [b, id]], { maxWaitMs: 1999 });
      assert.equal(denied.allowed, false);
      assert.equal(denied.retryAfterMs, 2000);
      assert.equal(denied.deniedBy[0].name, 'all-a');
      // Nothing of the denial was booked: the next start is still 2000 ms ahead.
      assert.equal((await limiter.checkAll([[a, id], [b, id]], { maxWaitMs: 3000 })).waitMs, 2000);
    });

    test('pace sleeps exactly waitMs; twelve concurrent pacers start one emission interval apart', async () => {
      const l = new Limiter(conn.client, { prefix: `wp:${kind}:`, logger: memoryLogger(), timeoutMs: 2000 });
      const slept = [];
      l.sleep = async (ms) => { slept.push(ms); }; // the frozen clock: no real sleeping
      const g = new Gcra(10, 1000, { burst: 1 });
      const id = uniq();
      const ds = await Promise.all(Array.from({ length: 12 }, () => l.pace(g, id, { maxWaitMs: 5000 })));
      const starts = ds.map((d) => d.waitMs).sort((x, y) => x - y);
      assert.deepEqual(starts, Array.from({ length: 12 }, (_, i) => i * 100));
      assert.deepEqual(slept.sort((x, y) => x - y), starts.slice(1)); // no sleep for the one that starts now
      // Beyond maxWaitMs: RateLimited, nothing booked, nothing slept.
      const before = await l.peek(g, id, { maxWaitMs: 100000 });
      await assert.rejects(l.pace(g, id, { maxWaitMs: 100 }), (err) => err instanceof RateLimited
        && err.decision.allowed === false && err.retryAfterMs === 1200);
      assert.deepEqual((await l.peek(g, id, { maxWaitMs: 100000 })).toJSON(), before.toJSON());
      assert.equal(slept.length, 11);
      // Never (cost above the burst): RateLimited with never.
      await assert.rejects(l.pace(g, id, { cost: 2, maxWaitMs: 100000 }), (err) => err.decision.never === true);
    });

    test('pace with the real sleep sleeps waitMs before it resolves', async () => {
      const g = new Gcra(5, 1000, { burst: 1 }); // a start every 200 ms (the server's clock is frozen)
      const id = uniq();
      assert.equal((await limiter.pace(g, id, { maxWaitMs: 1000 })).waitMs, 0);
      const t0 = performance.now();
      const d = await limiter.pace(g, id, { maxWaitMs: 1000 });
      const took = performance.now() - t0;
      assert.equal(d.waitMs, 200);
      assert.ok(took >= 199 && took < 1500, `slept ${took} ms`);
    });

    test('pace with the real sleep: aborting the sleep refunds the booking (the state after = before)', async () => {
      const g = new Gcra(1, 60000, { name: 'refund-me' }); // one start a minute: the second pacer would wait 60 s
      const t = new TokenBucket(1, 1, 60000, { name: 'refund-tb' });
      for (const limit of [g, t]) {
        const id = uniq();
        await limiter.pace(limit, id, { maxWaitMs: 120000 }); // starts now
        const before = (await limiter.peek(limit, id, { maxWaitMs: 120000 })).toJSON();
        assert.equal(before.waitMs, 60000);
        const ac = new AbortController();
        const t0 = Date.now();
        const p = limiter.pace(limit, id, { maxWaitMs: 120000, signal: ac.signal });
        setTimeout(() => ac.abort(), 50);
        await assert.rejects(p, { name: 'AbortError' });
        assert.ok(Date.now() - t0 < 5000, 'the abort ended the 60 s sleep');
        assert.deepEqual((await limiter.peek(limit, id, { maxWaitMs: 120000 })).toJSON(), before);
        // An abort with a reason of our own: that reason is the rejection.
        const ac2 = new AbortController();
        const p2 = limiter.pace(limit, id, { maxWaitMs: 120000, signal: ac2.signal });
        setTimeout(() => ac2.abort(new Error('shutting down')), 20);
        await assert.rejects(p2, /shutting down/);
        assert.deepEqual((await limiter.peek(limit, id, { maxWaitMs: 120000 })).toJSON(), before);
      }
    });
  });
}

// --- RL.ACQUIRE ... WAIT on the real clock --------------------------------------------

for (const kind of CLIENTS) {
  describe(`${kind}: blocking acquire (WAIT)`, () => {
    let main; // the holder's connection
    let waiting; // the waiter's own connection (a blocked call holds its connection)
    let limiter;
    let waiter;
    const held = async (limit, id) => limit.limit - (await limiter.peek(limit, id, 0)).remaining;
    before(async () => {
      main = await connect(kind, live.port);
      // ioredis: commandTimeout far below the waits, which must not cut them.
      waiting = await connect(kind, live.port, kind === 'ioredis' ? { commandTimeout: 150 } : {});
      limiter = new Limiter(main.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 1000 });
      waiter = new Limiter(waiting.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 100 });
    });
    after(() => { main.close(); waiting.close(); });

    test('a waiting acquire is granted when the holder releases, past timeoutMs and commandTimeout', async () => {
      const slots = new Concurrency(1, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id);
      assert.ok(holder instanceof Lease);
      const t0 = performance.now();
      const p = waiter.acquire(slots, id, { waitMs: 5000 });
      await sleep(400); // longer than the waiter's timeoutMs (100) and ioredis's commandTimeout (150)
      assert.equal(await holder.release(), true);
      const got = await p;
      const took = performance.now() - t0;
      assert.ok(got instanceof Lease, `granted, got ${JSON.stringify(got)}`);
      assert.ok(took >= 390 && took < 4000, `granted at the release (${took} ms)`);
      assert.equal(got.allowed, true);
      assert.equal(got.inDoubt, false);
      assert.equal(await held(slots, id), 1);
      assert.equal(await got.release(), true);
      assert.equal(await held(slots, id), 0);
    });

    test('a waiting acquire that times out answers the denial of that instant', async () => {
      const slots = new Concurrency(1, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id);
      const t0 = performance.now();
      const d = await waiter.acquire(slots, id, { waitMs: 300 });
      const took = performance.now() - t0;
      assert.equal(d instanceof Lease, false);
      assert.equal(d.allowed, false);
      assert.equal(d.source, 'redis');
      assert.ok(took >= 290 && took < 3000, `${took} ms`);
      assert.ok(d.retryAfterMs > 29000);
      await holder.release();
      assert.equal(await held(slots, id), 0);
    });

    test('waiters are served first in, first out', async () => {
      const slots = new Concurrency(1, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id);
      const conns = [];
      const base = await infoWaiting(main.client);
      try {
        const order = [];
        const ps = [];
        for (let i = 0; i < 3; i++) {
          const c = await connect(kind, live.port);
          conns.push(c);
          const l = new Limiter(c.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 1000 });
          ps.push(l.acquire(slots, id, { waitMs: 5000 }).then(async (lease) => { order.push(i); await lease.release(); }));
          await until(async () => (await infoWaiting(main.client)) >= base + i + 1, 3000); // queued before the next comes
        }
        await holder.release();
        await Promise.all(ps);
        assert.deepEqual(order, [0, 1, 2]);
        assert.equal(await held(slots, id), 0);
      } finally {
        for (const c of conns) c.close();
      }
    });

    test('withLease waits too, and releases on every exit', async () => {
      const slots = new Concurrency(1, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id);
      setTimeout(() => holder.release(), 200);
      const r = await waiter.withLease(slots, id, async (lease) => {
        assert.equal(await held(slots, id), 1);
        return lease.allowed;
      }, { waitMs: 5000 });
      assert.equal(r, true);
      assert.equal(await held(slots, id), 0);
      // Timed out: RateLimited, nothing held.
      const again = await limiter.acquire(slots, id);
      await assert.rejects(waiter.withLease(slots, id, async () => 1, { waitMs: 100 }), RateLimited);
      await again.release();
      assert.equal(await held(slots, id), 0);
    });

    test('blockingClient: waits go over it, releases over the client, so a blocked waiter stalls no release', async () => {
      const both = new Limiter(main.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 200,
        blockingClient: waiting.client });
      const pool = new Concurrency(1, 30000);
      const id = uniq();
      const lease = await both.acquire(pool, id, { waitMs: 5000 });
      assert.ok(lease instanceof Lease);
      // A second waiter, abandoned: its call still blocks the waiting connection.
      await assert.rejects(both.acquire(pool, id, { waitMs: 5000, signal: AbortSignal.timeout(50) }), { name: 'TimeoutError' });
      assert.equal(await lease.release(), true); // over the main connection: not behind the blocked call (200 ms timeout)
      // The release granted the abandoned call; the library gave that lease back.
      await until(async () => (await held(pool, id)) === 0, 5000);
      await until(async () => (await infoWaiting(main.client)) === 0, 5000);
      // Through one Limiter over the waiting connection alone, the same release
      // would queue behind the blocked call: that is what blockingClient is for.
      const solo = new Limiter(waiting.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 200 });
      const l2 = await solo.acquire(pool, id);
      await assert.rejects(solo.acquire(pool, id, { waitMs: 1000, signal: AbortSignal.timeout(50) }), { name: 'TimeoutError' });
      assert.equal(await l2.release(), false); // timed out behind the blocked call (logged); the lease stays...
      await until(async () => (await held(pool, id)) === 0, 5000); // ...until the queued release runs after it
    });

    test('an abandoned wait that ends denied sends no RL.RELEASE (its id may be a lease of yours elsewhere)', async () => {
      const l = new Limiter(main.client, { prefix: `a:${kind}:`, logger: memoryLogger(), timeoutMs: 500, blockingClient: waiting.client });
      const releases = [];
      const inner = l.backend.release.bind(l.backend);
      l.backend.release = (key, id, w) => { releases.push(id); return inner(key, id, w); };
      const slots = new Concurrency(1, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id);
      await assert.rejects(l.acquire(slots, id, { waitMs: 200, id: 'mine', signal: AbortSignal.timeout(20) }), { name: 'TimeoutError' });
      await until(async () => (await infoWaiting(main.client)) === 0, 5000); // the server answered it: denied at 200 ms
      await sleep(50);
      assert.deepEqual(releases, []);
      // Granted after the abort: released, once.
      await assert.rejects(l.acquire(slots, id, { waitMs: 5000, id: 'mine2', signal: AbortSignal.timeout(20) }), { name: 'TimeoutError' });
      await holder.release();
      await until(async () => releases.length === 1 && (await held(slots, id)) === 0, 5000);
      assert.deepEqual(releases, ['mine2']);
    });

    test('aborting a blocked acquire rejects at once and leaves no lease when the server grants it later', async () => {
      const slots = new Concurrency(2, 30000);
      const id = uniq();
      const holder = await limiter.acquire(slots, id, { cost: 2 });
      const ac = new AbortController();
      const t0 = performance.now();
      const p = waiter.acquire(slots, id, { waitMs: 5000, signal: ac.signal });
      setTimeout(() => ac.abort(), 100);
      await assert.rejects(p, { name: 'AbortError' });
      assert.ok(performance.now() - t0 < 2000);
      // The server still holds the waiter's call: the release grants it, and
      // the library gives that lease back by itself.
      assert.equal(await holder.release(), true);
      await until(async () => (await held(slots, id)) === 0, 5000);
      // The key's units add up: both slots are free for the next holders.
      const a = await limiter.acquire(slots, id, { cost: 2 });
      assert.ok(a instanceof Lease);
      await a.release();
      // Aborted inside withLease while waiting: the same.
      const h2 = await limiter.acquire(slots, id, { cost: 2 });
      const ac2 = new AbortController();
      const w = waiter.withLease(slots, id, async () => 'ran', { waitMs: 5000, signal: ac2.signal });
      setTimeout(() => ac2.abort(new Error('stop')), 50);
      await assert.rejects(w, /stop/);
      await h2.release();
      await until(async () => (await held(slots, id)) === 0, 5000);
    });
  });
}

// The clients waiting now, from INFO rl ("rl_wait:waits=3,grants=1,timeouts=2,waiting=0").
async function infoWaiting(client) {
  const m = /rl_wait:.*waiting=(\d+)/.exec(String(await client.info('rl')));
  if (!m) throw new Error('INFO rl has no rl_wait line');
  return Number(m[1]);
}
