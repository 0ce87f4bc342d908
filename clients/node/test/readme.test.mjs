// Every ```js block of README.md runs, as an ES module, against a test server;
// the first one is the quick start: at most 15 lines, and it shows a denial.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { RedisServer } from './helpers.mjs';
import { readmeBlocks, checkQuickStart } from './readmeBlocks.mjs';

const blocks = readmeBlocks();

const run = promisify(execFile);
const DIR = fileURLToPath(new URL('..', import.meta.url));

let server;
let tmp;
before(async () => {
  server = await RedisServer.start();
  // Inside the package, so that `import 'redis-rl'` resolves to this package
  // (self-reference through "exports") and its dev dependencies resolve too.
  tmp = fs.mkdtempSync(path.join(DIR, 'test', '.readme-'));
});
after(async () => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await server?.stop();
});

test('README has a quick start of at most 15 lines that reads REDIS_URL', () => {
  assert.ok(blocks.length >= 5, `found ${blocks.length} js blocks`);
  const lines = blocks[0].trimEnd().split('\n');
  assert.ok(lines.length <= 15, `the quick start has ${lines.length} lines`);
  assert.match(blocks[0], /process\.env\.REDIS_URL \?\? 'redis:\/\/localhost:6379'/);
  assert.match(blocks[0], /from 'ioredis'/);
});

for (let i = 0; i < blocks.length; i++) {
  test(`README js block ${i + 1} runs`, { timeout: 30000 }, async () => {
    const file = path.join(tmp, `block${i + 1}.mjs`);
    fs.writeFileSync(file, blocks[i]);
    const r = await run(process.execPath, [file], {
      cwd: tmp, timeout: 25000, env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${server.port}` },
    }).catch((e) => e);
    assert.equal(r.code ?? 0, 0, `block ${i + 1} failed:\n${blocks[i]}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    assert.ok(r.stdout.trim().length > 0, 'it printed something');
    if (i === 0) checkQuickStart(r.stdout);
  });
}
