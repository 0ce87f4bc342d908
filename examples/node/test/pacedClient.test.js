// The paced outgoing client (src/pacedClient.js) against a fake partner API
// (src/partnerApi.js) that answers 429 past 100 calls in any window, over
// real HTTP, paced through a real redis-server with the module.
//
// The partner's window is scaled down from a minute to 2 s so that the run
// covers more than one window in a few seconds: twelve workers make 150
// calls; the test asserts that every call was made and none got a 429, and
// (so that it can fail) that the same calls without pacing do get 429s.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Redis from 'ioredis';
import { Limiter } from 'redis-rl';
import { pacingFor, runPaced } from '../src/pacedClient.js';
import { callPartner, startPartnerApi } from '../src/partnerApi.js';
import { RedisServer } from './redisServer.js';

const PARTNER_LIMIT = 100;
const WINDOW_MS = 2_000; // the partner's 60 s, scaled down
const JOBS = Array.from({ length: 150 }, (_, i) => `/v1/orders/${i}`);

describe('paced outgoing client: twelve workers, a partner allowing 100 calls per window', () => {
  let server;
  let redis;
  let limiter;
  before(async () => {
    server = await RedisServer.start();
    redis = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    limiter = new Limiter(redis, { prefix: 'paced:', timeoutMs: 2_000 });
  });
  after(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('without pacing the partner answers 429s (the check below can fail)', async () => {
    const partner = await startPartnerApi({ limit: PARTNER_LIMIT, windowMs: WINDOW_MS });
    try {
      let next = 0;
      const statuses = [];
      await Promise.all(Array.from({ length: 12 }, async () => {
        while (next < JOBS.length) statuses.push(await callPartner(partner.port, JOBS[next++]));
      }));
      assert.ok(statuses.filter((s) => s === 429).length >= 40, `429s: ${partner.stats.tooMany}`);
    } finally {
      await partner.close();
    }
  });

  it('through pace(): every call made, no 429, never more than the limit in a window', { timeout: 60_000 }, async () => {
    const partner = await startPartnerApi({ limit: PARTNER_LIMIT, windowMs: WINDOW_MS });
    try {
      const limit = pacingFor({ partnerLimit: PARTNER_LIMIT, windowMs: WINDOW_MS, name: 'partner-run' });
      const t0 = performance.now();
      const { results, denied } = await runPaced({
        limiter, limit, jobs: JOBS, workers: 12, maxWaitMs: 30_000,
        callPartner: (path) => callPartner(partner.port, path),
      });
      const took = performance.now() - t0;
      assert.deepEqual(denied, []);
      assert.equal(results.length, JOBS.length);
      assert.deepEqual(results.filter((s) => s !== 200), [], `statuses other than 200: ${partner.stats.tooMany} 429s`);
      assert.equal(partner.stats.ok, JOBS.length);
      assert.equal(partner.stats.tooMany, 0);
      assert.ok(partner.stats.peak <= PARTNER_LIMIT);
      // Not vacuous: the calls spanned more than one window, at the paced rate.
      assert.ok(took > WINDOW_MS, `took ${took} ms`);
    } finally {
      await partner.close();
    }
  });

  it('stopping the workers gives the waiting bookings back', { timeout: 30_000 }, async () => {
    const partner = await startPartnerApi({ limit: PARTNER_LIMIT, windowMs: WINDOW_MS });
    try {
      const limit = pacingFor({ partnerLimit: PARTNER_LIMIT, windowMs: WINDOW_MS, name: 'partner-stop' });
      const emissionMs = WINDOW_MS / limit.limit;
      const ac = new AbortController();
      const t0 = Date.now();
      setTimeout(() => ac.abort(), 600);
      const { results } = await runPaced({
        limiter, limit, jobs: JOBS, workers: 12, maxWaitMs: 30_000, signal: ac.signal,
        callPartner: (path) => callPartner(partner.port, path),
      });
      const made = results.filter((s) => s !== undefined).length;
      assert.ok(made > 10 && made < JOBS.length, `made ${made}`);
      assert.equal(partner.stats.ok, made);
      // The limit holds exactly the calls made: its theoretical arrival time is
      // the first start plus one emission interval per call. Had the (up to) twelve
      // waiting bookings stayed, it would be about 12 intervals later.
      const d = await limiter.peek(limit, 'partner-api', 0);
      const expected = t0 + made * emissionMs - Date.now();
      assert.ok(Math.abs(d.resetAfterMs - expected) < 5 * emissionMs,
        `reset_after_ms ${d.resetAfterMs}, expected about ${expected} (one interval ${emissionMs} ms)`);
    } finally {
      await partner.close();
    }
  });
});
