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
let bare; // no module: the installed package must find and load its Lua library
let tmp;
before(async () => {
  server = await RedisServer.start();
  bare = await RedisServer.start({ withModule: false, extraArgs: ['--enable-module-command', 'no'] });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-pack-'));
});
after(async () => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await server?.stop();
  await bare?.stop();
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
  assert.ok(files.includes('lua/redis_rl.lua'), 'the Lua library is shipped');
  assert.deepEqual(files.filter((f) => !/^(lib\/|lua\/redis_rl\.lua$|README\.md$|package\.json$)/.test(f)), [],
    'nothing else is shipped');
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
  // backend 'auto' on a server without the module: the shipped library, loaded by the package.
  const lua = await run(process.execPath, ['-e', "const Redis = require('ioredis'); const { Limiter, Gcra } = require('redis-rl');"
    + `const r = new Redis(${bare.port}, '127.0.0.1'); const l = new Limiter(r, { backend: 'auto', timeoutMs: 5000 });`
    + "(async () => { const g = new Gcra(2, 60000); const d = [];"
    + "for (let i = 0; i < 3; i++) d.push((await l.check(g, 'x')).allowed);"
    + "console.log(l.backend.name, d.join(','), await r.call('FCALL_RO', 'rl_version', '0')); r.disconnect(); })()"],
  { cwd: app, timeout: 20000 });
  const shipped = /^local LIB_VERSION = '([^']+)'/m.exec(fs.readFileSync(path.join(DIR, 'lua', 'redis_rl.lua'), 'utf8'))[1];
  assert.equal(lua.stdout.trim(), `lua true,true,false ${shipped}`);
});
