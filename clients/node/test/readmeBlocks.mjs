// The ```js blocks of README.md, and what the quick start (the first) must print.
import assert from 'node:assert/strict';
import fs from 'node:fs';

export function readmeBlocks() {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  return [...readme.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

export function checkQuickStart(stdout) {
  const lines = stdout.trim().split('\n');
  assert.match(lines[0], /^1 allowed remaining=2/);
  assert.match(stdout, /^4 denied remaining=0 retryAfterMs=\d+$/m);
  assert.match(stdout, /^429 \{/m);
  assert.match(stdout, /'RateLimit-Policy': '"per-user";q=3;w=60'/);
  assert.match(stdout, /RateLimit: '"per-user";r=0;t=\d+'/);
  assert.match(stdout, /'Retry-After': '\d+'/);
}

