// Packaging: npm pack, install the tarball and ioredis (from the registry)
// into a fresh folder outside the repository, and run the README's quick
// start there against a test server; CommonJS require works there too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { RedisServer } from './helpers.mjs';
import { readmeBlocks, checkQuickStart } from './readmeBlocks.mjs';

const run = promisify(execFile);
const DIR = fileURLToPath(new URL('..', import.meta.url));
const IOREDIS = JSON.parse(fs.readFileSync(path.join(DIR, 'package.json'), 'utf8')).devDependencies.ioredis;

let server;
let tmp;
before(async () => {
  server = await RedisServer.start();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-pack-'));
});
after(async () => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await server?.stop();
});

const npm = (args, cwd) => run('npm', args, { cwd, timeout: 120000, env: { ...process.env, npm_config_loglevel: 'error' } });

test('npm pack + install into a fresh folder + the quick start', { timeout: 180000 }, async () => {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', tmp], DIR);
  const [info] = JSON.parse(stdout);
  assert.equal(info.name, 'redis-rl');
  assert.equal(info.version, '0.2.0');
  const files = info.files.map((f) => f.path).sort();
  assert.ok(files.includes('lib/index.cjs') && files.includes('lib/index.mjs') && files.includes('lib/index.d.ts'));
  assert.ok(files.includes('README.md') && files.includes('package.json'));
  assert.deepEqual(files.filter((f) => !/^(lib\/|README\.md$|package\.json$)/.test(f)), [], 'nothing else is shipped');
  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(tmp, info.filename), `ioredis@${IOREDIS}`], app);
  fs.writeFileSync(path.join(app, 'quickstart.mjs'), readmeBlocks()[0]);
  const env = { ...process.env, REDIS_URL: `redis://127.0.0.1:${server.port}` };
  const r = await run(process.execPath, ['quickstart.mjs'], { cwd: app, env, timeout: 20000 });
  checkQuickStart(r.stdout);
  const cjs = await run(process.execPath, ['-e', "const rl = require('redis-rl'); const p = require('redis-rl/prometheus');"
    + "console.log(rl.VERSION, typeof rl.Limiter, typeof p.PrometheusMetrics)"], { cwd: app, timeout: 20000 });
  assert.equal(cjs.stdout.trim(), '0.2.0 function function');
});
