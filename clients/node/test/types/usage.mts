// Typed usage from ESM: compiled with tsc --noEmit by test/types.test.mjs.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import express from 'express';
import {
  Limiter, Gcra, TokenBucket, Slide, Log, Quota, Concurrency, Local, Decision, Lease, RateLimited, CrossSlotError, NotSupportedError,
  retry, RetryBudget, expressRateLimit, fastifyRateLimit, type Backend, type Metrics, LuaBackend, AutoBackend, LocalBucket,
} from 'redis-rl';
import { PrometheusMetrics } from 'redis-rl/prometheus';

const io = new Redis();
const nr = createClient({ RESP: 3 });
const metrics: Metrics = new PrometheusMetrics();
const limiter = new Limiter(io, { prefix: 'rl:', onError: new Local(0.1), timeoutMs: 50, metrics });
new Limiter(nr, { onError: 'open', backend: 'module' });
const onLua = new Limiter(nr, { backend: 'lua' });
const auto = new AutoBackend(io);
new Limiter(io, { backend: new LuaBackend(io) });
const bucket = new LocalBucket(10, 1000);

const perUser = new Gcra(100, 60_000, { burst: 10, name: 'user' });
const tokens = new TokenBucket(20_000, 20_000, 60_000, { unit: 'tokens', onError: 'closed' });
const slots = new Concurrency(5, 30_000);
const limits = [perUser, tokens, new Slide(5, 1000), new Log(5, 1000), new Quota(1000, 'MONTH', { tz: 'Europe/Berlin' })];

async function main(): Promise<void> {
  const d: Decision = await limiter.check(perUser, 'alice', { cost: 2 });
  const allowed: boolean = d.allowed;
  const ms: number = d.retryAfterMs + d.resetAfterMs + d.remaining + d.limit;
  const status: number = d.status;
  const headers: Record<string, string> = d.headers();
  const body = d.body();
  if ('error' in body) console.log(body.error, body.retry_after_ms);
  const all = await limiter.checkAll([[perUser, 'alice'], [tokens, 'acme', 500]], { tag: 'acme' });
  for (const sub of all.decisions ?? []) console.log(sub.name, sub.allowed);
  console.log(all.deniedBy?.[0]?.name, allowed, ms, status, headers, limits.length);
  await limiter.peek(perUser, 'alice');
  await limiter.refund(tokens, 'acme', 100);
  const back = await limiter.refundAll([[tokens, 'acme', 100], { limit: perUser, identity: 'alice', amount: 1 }], { tag: 'acme' });
  const which: 'module' | 'lua' = await auto.detect();
  console.log(back.decisions?.length, which, onLua.backend.name, bucket.take(1).remaining);

  const got = await limiter.acquire(slots, 'alice', { renewEveryMs: 10_000 });
  if (got.allowed) {
    const lease: Lease = got;
    await lease.release();
  } else {
    const none: null = got.lease;
    console.log(none);
  }
  const n: number = await limiter.withLease(slots, 'alice', async (lease) => (lease.signal.aborted ? 0 : 1), {
    timeoutMs: 1000, signal: AbortSignal.timeout(5000),
  });
  const waiting = new Limiter(io, { blockingClient: io.duplicate() });
  const waited = await waiting.acquire(slots, 'alice', { waitMs: 5_000, signal: AbortSignal.timeout(6000) });
  const paced = await limiter.pace(perUser, 'alice', { maxWaitMs: 60_000, cost: 1, signal: AbortSignal.timeout(61_000) });
  const booked = await limiter.check(perUser, 'alice', { maxWaitMs: 1000 });
  const wait: number = booked.waitMs + paced.waitMs + (waited.allowed ? 0 : waited.waitMs);
  console.log(wait);
  try {
    await limiter.pace(perUser, 'alice', { maxWaitMs: 10 });
  } catch (e) {
    if (e instanceof NotSupportedError) console.log(e.feature);
  }
  const r = await limiter.reserve(tokens, 'acme', 4096);
  if (r.allowed) await r.settle(1200);
  await limiter.withReservation(tokens, 'acme', 4096, async (res) => { await res.settle(n); });

  const budget = new RetryBudget(limiter, 'upstream', { ratio: 0.1 });
  const v: string = await retry(async () => 'x', { budget, maxAttempts: 3, capMs: 2000 });
  console.log(v);
  try {
    await limiter.checkAll([[perUser, 'a'], [perUser, 'b']]);
  } catch (e) {
    if (e instanceof CrossSlotError) console.log(e.slots);
    if (e instanceof RateLimited) console.log(e.decision.retryAfterMs);
  }
  const app = express();
  app.use(expressRateLimit<express.Request>(limiter, { limits: [perUser], key: (req) => req.ip ?? null }));
  const hook = fastifyRateLimit(limiter, { limits: perUser, key: () => 'x', cost: 2 });
  console.log(typeof hook);
  const b: Backend = limiter.backend;
  console.log(b.name);
}
void main;
// @ts-expect-error: a limit's positional arguments are numbers
new Gcra('100', 60_000);
// @ts-expect-error: pace needs maxWaitMs
void limiter.pace(perUser, 'x', {});
// @ts-expect-error: acquire needs a Concurrency limit
void limiter.acquire(perUser, 'x');
