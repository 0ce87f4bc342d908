// timeoutMs applies to a Sentinel-configured ioredis client too (the
// Limiter's own deadline, not a socket option): a stopped master is answered
// by the failure policy within the timeout, never a hang.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import Redis from 'ioredis';
import { Limiter, Gcra } from '../lib/index.mjs';
import { RedisServer, memoryLogger } from './helpers.mjs';
import { freePort } from './redisServer.mjs';

let master;
let sentinel;
let sentinelPort;
let dir;

async function pong(port, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const s = net.createConnection({ host: '127.0.0.1', port }, () => s.write('PING\r\n'));
      s.setTimeout(500, () => { s.destroy(); resolve(false); });
      s.on('data', (b) => { s.destroy(); resolve(b.toString().startsWith('+PONG')); });
      s.on('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

before(async () => {
  master = await RedisServer.start();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-sentinel-'));
  sentinelPort = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, `port ${sentinelPort}\nbind 127.0.0.1\ndir ${dir}\nlogfile ${path.join(dir, 'sentinel.log')}\n`
    + `sentinel monitor mymaster 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds mymaster 60000\n`);
  sentinel = spawn(process.env.REDIS_SERVER || 'redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  assert.ok(await pong(sentinelPort, 10000), 'sentinel did not start');
});
after(async () => {
  master?.resume();
  if (sentinel && sentinel.exitCode === null) sentinel.kill('SIGKILL');
  await master?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('ioredis with sentinels: timeoutMs answers a stopped master with the policy', async () => {
  const client = new Redis({ sentinels: [{ host: '127.0.0.1', port: sentinelPort }], name: 'mymaster', maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    const l = new Limiter(client, { timeoutMs: 100, onError: 'closed', logger: memoryLogger() });
    const g = new Gcra(10, 60000, { name: 's' });
    assert.equal((await l.check(g, 'u')).source, 'redis');
    master.pause();
    const t0 = Date.now();
    const d = await l.check(g, 'u');
    assert.equal(d.source, 'fail_closed');
    assert.ok(Date.now() - t0 < 1000, `answered after ${Date.now() - t0} ms`);
  } finally {
    master.resume();
    client.disconnect();
  }
});
