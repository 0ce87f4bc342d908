// Shared by the tests that drive a service over real HTTP.

import assert from 'node:assert/strict';
import http from 'node:http';

export const ceilS = (ms) => Math.ceil(ms / 1000);

// What a step function of a duration gives anywhere in [lo, hi] (hi - lo < 1 s).
export function valuesBetween(fn, [lo, hi]) {
  assert.ok(hi - lo >= 0 && hi - lo < 1000, `requests too slow to pin down the values: ${lo}..${hi}`);
  return new Set([fn(lo), fn(hi)]);
}

// One request on a fresh connection; the server decided within [before, after].
export function request(port, method, path, { key, headers = {}, body } = {}) {
  const h = { ...headers };
  if (key) h.Authorization = `Bearer ${key}`;
  const data = body === undefined ? undefined : JSON.stringify(body);
  if (data !== undefined) Object.assign(h, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  const before = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: h, agent: false }, (res) => {
      let raw = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { raw += chunk; });
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers, raw, body: raw ? JSON.parse(raw) : null, before, after: Date.now(),
      }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

export function assertRateLimit(reply, name, remaining, ts, policy) {
  assert.equal(reply.headers['ratelimit-policy'], policy);
  const expected = [...ts].map((t) => `"${name}";r=${remaining};t=${t}`);
  assert.ok(expected.includes(reply.headers.ratelimit), `RateLimit: ${reply.headers.ratelimit}, expected one of ${expected}`);
}

// A 429: t names the same moment as Retry-After. Draft section 6: Retry-After
// "SHOULD NOT reference a point in time earlier than the end of the effective
// window"; t is that window.
export function assertRefused(reply, name, remaining, policy) {
  assert.equal(reply.status, 429);
  assert.equal(reply.headers['ratelimit-policy'], policy);
  assert.equal(reply.headers.ratelimit, `"${name}";r=${remaining};t=${reply.headers['retry-after']}`);
}
