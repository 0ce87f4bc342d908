// The library's own cost per decision beside a raw client.call of the same
// command, on one ioredis connection to a local server with the module. Not a
// test: it prints figures. Usage (from clients/node, after npm ci):
//   REDIS_RL_MODULE=/abs/libredis_rl.so [REDIS_SERVER=redis-server] node bench/overhead.mjs [decisions]
//   REDIS_URL=redis://host:port node bench/overhead.mjs   (an existing server)
//
// Variants, run in alternating rounds (raw, library, library without the
// timeout, raw, ...), each reported per decision as the median and the
// fastest round of wall time, and the median of this process's CPU time (on
// a shared machine the CPU time and the fastest round are the least
// disturbed figures):
//   raw        redis.call('RL.GCRA', key, limit, period)
//   library    limiter.check(limit, identity): key, arguments, the timeout
//              timer, parsing, the Decision
//   no timer   the same with timeoutMs: 0 (what the per-call timer costs)
// in three modes:
//   sequential one decision at a time, each awaited (latency)
//   pipelined  64 decisions in flight at a time (throughput)
//   no I/O     a stub client answering at once: the library's CPU time alone
// "cpu paired" is the median over rounds of each round's CPU time divided by
// that of the raw round next to it (the figure least moved by drift).
import { Redis } from 'ioredis';
import { Limiter, Gcra } from '../lib/index.mjs';
import { RedisServer } from '../test/redisServer.mjs';

const N = Number(process.argv[2] || 20000);
const ROUNDS = Number(process.env.ROUNDS || 9);
const DEPTH = 64;

const now = () => Number(process.hrtime.bigint()) / 1e3; // µs
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; }; // µs of this process

// Each run answers [wall µs, client CPU µs] per decision. The client's CPU
// time is what the library adds to; it is less disturbed by other processes
// on a shared machine than the wall time.
const measure = async (body) => {
  const t0 = now();
  const c0 = cpu();
  await body();
  return [(now() - t0) / N, (cpu() - c0) / N];
};
const modes = {
  sequential: (fn) => measure(async () => { for (let i = 0; i < N; i++) await fn(); }),
  // No I/O never yields to the event loop by itself, so the Limiter's shared
  // timeout timer would never tick and its bucket of pending calls would grow
  // for the whole run (it never does with a server): yield every 1024 calls,
  // for every variant alike.
  noio: (fn) => measure(async () => {
    for (let i = 0; i < N; i++) {
      await fn();
      if ((i & 1023) === 1023) await new Promise(setImmediate);
    }
  }),
  pipelined: (fn) => measure(async () => {
    for (let i = 0; i < N; i += DEPTH) {
      const batch = [];
      for (let j = 0; j < DEPTH; j++) batch.push(fn());
      await Promise.all(batch);
    }
  }),
};

async function compare(label, variants, mode) {
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const f of Object.values(variants)) await mode(f); // warm-up
  for (let r = 0; r < ROUNDS; r++) for (const [k, f] of Object.entries(variants)) times[k].push(await mode(f));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const stats = [['wall median', (xs) => median(xs.map((x) => x[0]))], ['wall fastest', (xs) => Math.min(...xs.map((x) => x[0]))],
    ['cpu median', (xs) => median(xs.map((x) => x[1]))]];
  const pct = (r) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`;
  for (const [stat, pick] of stats) {
    const raw = pick(times.raw);
    const cells = Object.keys(variants).map((k) => {
      const v = pick(times[k]);
      return k === 'raw' ? `raw ${v.toFixed(2)} µs` : `${k} ${v.toFixed(2)} µs (${pct(v / raw)})`;
    });
    console.log(`${label.padEnd(11)} ${stat.padEnd(13)} ${cells.join('   ')}`);
  }
  // Each round's CPU time over the raw round next to it, the median of those
  // ratios: drift on a shared machine (a build starting, a core taken) moves
  // a round and its raw neighbour alike, so this is the steadiest figure.
  const cells = Object.keys(variants).filter((k) => k !== 'raw')
    .map((k) => `${k} ${pct(median(times[k].map((x, i) => x[1] / times.raw[i][1])))}`);
  console.log(`${label.padEnd(11)} ${'cpu paired'.padEnd(13)} ${cells.join('   ')} (median of per-round ratios to raw)`);
}

let server = null;
let url = process.env.REDIS_URL;
if (!url) {
  server = await RedisServer.start();
  url = `redis://127.0.0.1:${server.port}`;
}
const redis = new Redis(url);
try {
  // A limit no run exhausts, so every call does the same work (allowed).
  const g = new Gcra(1000000000, 1000, { name: 'bench' });
  // timeoutMs 1000: a timer per call as with the default 100 ms, but a
  // loaded machine's stall does not turn a round into fail-closed answers.
  const limiter = new Limiter(redis, { prefix: 'bench:', timeoutMs: 1000 });
  const untimed = new Limiter(redis, { prefix: 'bench:', timeoutMs: 0 });
  const key = limiter.key(g, 'id');
  const raw = () => redis.call('RL.GCRA', key, '1000000000', '1000');
  const info = await redis.call('INFO', 'server');
  const version = (/valkey_version:(\S+)/.exec(info) ? `valkey ${/valkey_version:(\S+)/.exec(info)[1]}`
    : `redis ${/redis_version:(\S+)/.exec(info)[1]}`);
  console.log(`redis-rl Node client overhead: ${N} decisions x ${ROUNDS} rounds, server ${version} at ${url}, Node ${process.version}`);
  const variants = { raw, library: () => limiter.check(g, 'id'), 'no timer': () => untimed.check(g, 'id') };
  await compare('sequential', variants, modes.sequential);
  await compare('pipelined', variants, modes.pipelined);
  const reply = await raw();
  // start(): what the ioredis adapter gives the Limiter (the command with its
  // own promise and reject), so the library takes the path it takes on ioredis.
  const noop = () => {};
  const stub = { kind: 'stub', cluster: false, send: () => Promise.resolve(reply),
    start: () => ({ promise: Promise.resolve(reply), reject: noop }) };
  const s1 = new Limiter(stub, { prefix: 'bench:', timeoutMs: 1000 });
  const s0 = new Limiter(stub, { prefix: 'bench:', timeoutMs: 0 });
  await compare('no I/O', { raw: () => stub.send('RL.GCRA', [key, g.base]), library: () => s1.check(g, 'id'),
    'no timer': () => s0.check(g, 'id') }, modes.noio);
} finally {
  redis.disconnect();
  if (server) await server.stop();
}
