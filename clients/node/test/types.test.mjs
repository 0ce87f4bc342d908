// The hand-written types compile against typed usage from ESM and CommonJS,
// and the package loads from both module systems as one instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import * as esm from 'redis-rl';
import * as esmProm from 'redis-rl/prometheus';

const run = promisify(execFile);
const DIR = fileURLToPath(new URL('..', import.meta.url));

test('tsc --noEmit type-checks test/types/usage.mts and usage.cts', { timeout: 60000 }, async () => {
  const tsc = `${DIR}node_modules/typescript/bin/tsc`;
  const r = await run(process.execPath, [tsc, '-p', 'test/types/tsconfig.json'], { cwd: DIR }).catch((e) => e);
  assert.equal(r.code ?? 0, 0, `${r.stdout}${r.stderr}`);
});

test('require() and import give the same classes', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('redis-rl');
  assert.equal(cjs.Limiter, esm.Limiter);
  assert.equal(cjs.Gcra, esm.Gcra);
  assert.equal(cjs.VERSION, '0.2.0');
  assert.equal(require('redis-rl/prometheus').PrometheusMetrics, esmProm.PrometheusMetrics);
  assert.equal(require('redis-rl/package.json').version, cjs.VERSION);
  for (const name of Object.keys(cjs)) assert.ok(name in esm, `ESM exports ${name}`);
});
