// The cost of the durable option (the decision and WAIT 1 in one pipeline),
// beside the same call without it: one ioredis connection, a master and one
// replica on loopback started here (REDIS_SERVER, REDIS_RL_MODULE), calls
// timed one by one and interleaved; median and p99 per call in ms.
//
//   node bench/durable.mjs [calls]        (default 2000)
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { Limiter, Gcra, Concurrency } from '../lib/index.mjs';
import { RedisServer } from '../test/redisServer.mjs';

const n = Number(process.argv[2] || 2000);
const master = await RedisServer.start();
const replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
const r = new Redis({ host: '127.0.0.1', port: replica.port });
const deadline = Date.now() + 10000;
while (!/master_link_status:up/.test(await r.info('replication'))) {
  if (Date.now() > deadline) throw new Error('the replica did not connect');
  await sleep(50);
}
r.disconnect();
const client = new Redis({ host: '127.0.0.1', port: master.port });
try {
  const l = new Limiter(client, { timeoutMs: 1000 });
  const strict = { replicas: 1, timeoutMs: 500 };
  const g = new Gcra(1e9, 1000, { name: 'bench-durable' });
  const c = new Concurrency(100000, 60000, { name: 'bench-lease' });
  const cycle = async (durable) => { const lease = await l.acquire(c, 'u', { durable }); await lease.release(); };
  const pairs = [
    ['check()', () => l.check(g, 'u', { durable: false }), () => l.check(g, 'u', { durable: strict })],
    ['acquire()+release()', () => cycle(false), () => cycle(strict)],
  ];
  console.log(`ioredis, Node ${process.version}, ${n} calls each, one connection, one replica`);
  for (const [name, plain, durable] of pairs) {
    for (let i = 0; i < n / 10; i++) { await plain(); await durable(); }
    const a = [];
    const b = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await plain();
      const t1 = performance.now();
      await durable();
      b.push(performance.now() - t1);
      a.push(t1 - t0);
    }
    a.sort((x, y) => x - y);
    b.sort((x, y) => x - y);
    const q = (xs, f) => xs[Math.min(xs.length - 1, Math.floor(xs.length * f))];
    console.log(`${name.padEnd(22)} plain: median ${q(a, 0.5).toFixed(3)} ms, p99 ${q(a, 0.99).toFixed(3)} ms | `
      + `durable (WAIT 1): median ${q(b, 0.5).toFixed(3)} ms, p99 ${q(b, 0.99).toFixed(3)} ms | `
      + `+${(q(b, 0.5) - q(a, 0.5)).toFixed(3)} ms median`);
  }
  if (l.durableFailures) throw new Error(`${l.durableFailures} calls were not acknowledged`);
} finally {
  client.disconnect();
  await replica.stop();
  await master.stop();
}
