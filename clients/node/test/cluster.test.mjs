// A 3-master cluster on loopback: ioredis Cluster and node-redis createCluster,
// commands routed to their slot's master (no MOVED), hash tags for RL.ALL.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis, { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { Limiter, Gcra, Slide, Concurrency, CrossSlotError, keySlot, Lease } from '../lib/index.mjs';
import { RedisServer, memoryLogger, uniq } from './helpers.mjs';

const nodes = [];
const admins = [];
const RANGES = [[0, 5460], [5461, 10922], [10923, 16383]];

before(async () => {
  for (let i = 0; i < 3; i++) nodes.push(await RedisServer.start({ extraArgs: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000'] }));
  for (const n of nodes) {
    const c = new Redis({ host: '127.0.0.1', port: n.port, lazyConnect: true });
    c.on('error', () => {});
    await c.connect();
    admins.push(c);
  }
  await Promise.all(admins.map((c, i) => c.call('CLUSTER', 'ADDSLOTSRANGE', String(RANGES[i][0]), String(RANGES[i][1]))));
  for (let i = 1; i < 3; i++) await admins[0].call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i].port));
  const deadline = Date.now() + 30000;
  for (;;) {
    const infos = await Promise.all(admins.map((c) => c.call('CLUSTER', 'INFO')));
    if (infos.every((x) => /cluster_state:ok/.test(x) && /cluster_known_nodes:3/.test(x))) break;
    if (Date.now() > deadline) throw new Error(`cluster not ready:\n${infos.join('\n')}`);
    await sleep(50);
  }
});

after(async () => {
  for (const c of admins) c.disconnect();
  for (const n of nodes) await n.stop();
});

async function movedCount() {
  let n = 0;
  for (const c of admins) {
    const m = /errorstat_MOVED:count=(\d+)/.exec(await c.call('INFO', 'errorstats'));
    if (m) n += Number(m[1]);
  }
  return n;
}

const owner = (key) => RANGES.findIndex(([a, b]) => keySlot(key) >= a && keySlot(key) <= b);

async function exercise(client, label, backend = 'module', blocking = null) {
  const limiter = new Limiter(client, { prefix: `c:${label}:`, logger: memoryLogger(), timeoutMs: 5000, backend });
  const g = new Gcra(2, 60000, { name: 'g' });
  // Identities spread over all three masters.
  const ids = [];
  const seen = new Set();
  for (let i = 0; seen.size < 3 || ids.length < 6; i++) {
    const id = `${label}-${i}`;
    seen.add(owner(limiter.key(g, id)));
    ids.push(id);
  }
  const moved = await movedCount();
  for (const id of ids) {
    assert.equal((await limiter.check(g, id)).allowed, true);
    assert.equal((await limiter.check(g, id)).remaining, 0);
    assert.equal((await limiter.check(g, id)).allowed, false);
    assert.equal((await limiter.peek(g, id, 0)).remaining, 0);
    assert.equal((await limiter.refund(g, id, 1)).remaining, 1);
  }
  assert.equal(await movedCount(), moved, 'every command went to its slot\'s master');
  // RL.ALL: one tag, one slot.
  const tenant = uniq('t');
  const checks = [[g, 'alice'], [new Slide(5, 60000, { name: 's' }), tenant], [new Concurrency(1, 60000, { name: 'c' }), 'alice']];
  const all = await limiter.checkAll(checks, { tag: tenant });
  assert.equal(all.allowed, true);
  assert.equal(new Set(all.decisions.map((x) => keySlot(x.key))).size, 1);
  const denied = await limiter.checkAll(checks, { tag: tenant });
  assert.deepEqual(denied.deniedBy.map((x) => x.name), ['c']);
  // Without a tag the keys would cross slots: refused before any round trip.
  let a = 'a';
  while (keySlot(limiter.key(g, a)) === keySlot(limiter.key(g, 'b'))) a += 'a';
  await assert.rejects(limiter.checkAll([[g, a], [g, 'b']]), CrossSlotError);
  // Leases.
  const slots = new Concurrency(1, 60000, { name: 'slots' });
  const lease = await limiter.acquire(slots, 'bob');
  assert.ok(lease instanceof Lease);
  assert.equal((await limiter.acquire(slots, 'bob')).allowed, false);
  assert.equal(await lease.release(), true);
  assert.equal(await limiter.withLease(slots, 'bob', async () => 'ok', { renewEveryMs: 10 }), 'ok');
  if (blocking) await waits(client, blocking, label, ids);
  assert.equal(await movedCount(), moved);
  return limiter;
}

// MAXWAIT bookings and RL.ACQUIRE ... WAIT on every master (waits over a
// second cluster client: a blocked call holds its node's connection).
async function waits(client, blocking, label, ids) {
  const limiter = new Limiter(client, { prefix: `cw:${label}:`, logger: memoryLogger(), timeoutMs: 5000, blockingClient: blocking });
  const paced = new Gcra(10, 1000, { burst: 1, name: 'paced' }); // a start every 100 ms
  for (const id of ids) {
    assert.equal((await limiter.check(paced, id, { maxWaitMs: 1000 })).waitMs, 0);
    const w = (await limiter.check(paced, id, { maxWaitMs: 1000 })).waitMs;
    assert.ok(w > 50 && w <= 100, `booked ${w} ms ahead`);
  }
  const tag = uniq('wt');
  const both = [[paced, 'x'], [new Gcra(10, 1000, { burst: 1, name: 'paced2' }), 'x']];
  await limiter.checkAll(both, { tag, maxWaitMs: 1000 });
  const booked = await limiter.checkAll(both, { tag, maxWaitMs: 1000 });
  assert.ok(booked.allowed && booked.waitMs > 50);
  assert.equal(booked.decisions[0].waitMs, booked.decisions[1].waitMs);
  const slots = new Concurrency(1, 60000, { name: 'wslots' });
  for (const id of ids.slice(0, 3)) {
    const holder = await limiter.acquire(slots, id);
    setTimeout(() => holder.release(), 100);
    const t0 = performance.now();
    const lease = await limiter.acquire(slots, id, { waitMs: 5000 });
    assert.ok(lease instanceof Lease, `granted on ${label} ${id}`);
    assert.ok(performance.now() - t0 >= 80);
    assert.equal(await lease.release(), true);
  }
}

// The Lua backend on the cluster: each master is given the library when one
// of its keys is first used (checked once per slot), with no MOVED either.
async function exerciseLua(client, label) {
  await Promise.all(admins.map((c) => c.call('FUNCTION', 'FLUSH')));
  const limiter = await exercise(client, label, 'lua');
  const libs = await Promise.all(admins.map((c) => c.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'redis_rl')));
  assert.deepEqual(libs.map((l) => l.length), [1, 1, 1], 'every master has the library');
  assert.equal(limiter.backend.loads, 3);
  // A master that lost it (FUNCTION FLUSH) gets it again on the next call there.
  const g = new Gcra(2, 60000, { name: 'g' });
  const key = limiter.key(g, `${label}-again`);
  await admins[owner(key)].call('FUNCTION', 'FLUSH');
  assert.equal((await limiter.check(g, `${label}-again`)).allowed, true);
  assert.equal(limiter.backend.loads, 4);
}

describe('3-master cluster', () => {
  test('ioredis Cluster', { timeout: 30000 }, async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: nodes[0].port }], { lazyConnect: true });
    cluster.on('error', () => {});
    await cluster.connect();
    const blocking = new Cluster([{ host: '127.0.0.1', port: nodes[0].port }], { lazyConnect: true, redisOptions: { commandTimeout: 50 } });
    blocking.on('error', () => {});
    await blocking.connect();
    try {
      await exercise(cluster, 'io', 'module', blocking);
      await exerciseLua(cluster, 'io-lua');
    } finally {
      cluster.disconnect();
      blocking.disconnect();
    }
  });

  test('node-redis createCluster (RESP3)', { timeout: 30000 }, async () => {
    const cluster = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${nodes[0].port}` }], RESP: 3 });
    cluster.on('error', () => {});
    await cluster.connect();
    const blocking = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${nodes[0].port}` }], RESP: 3 });
    blocking.on('error', () => {});
    await blocking.connect();
    try {
      await exercise(cluster, 'nr', 'module', blocking);
      await exerciseLua(cluster, 'nr-lua');
    } finally {
      await cluster.close();
      await blocking.close();
    }
  });
});
