// A small HTTP API guarded by redis-rl: three layered limits in one RL.ALL call,
// through the redis-rl client library (clients/node): the limits are values,
// the library builds the call, reads the reply into a Decision and computes
// the RateLimit fields. With backend 'auto' the same code runs where the
// module cannot be loaded (managed Redis, Valkey): the library then loads and
// calls redis-rl's Lua functions instead.
//
// Every request, before any work is done:
//
// 1. is authenticated: the API key is looked up server-side. Who the caller
//    is (key, user, tenant) comes from that table only, never from a header or
//    a parameter the client chose (X-Forwarded-For, ?tenant=...), so a client
//    cannot pick whose bucket is charged;
// 2. is checked against three limits as one all-or-nothing decision (RL.ALL):
//      "key"    per API key, GCRA: stops one runaway client;
//      "tenant" per tenant, sliding window: the tenant's quota over all its
//               keys, so minting more keys does not buy more requests;
//      "work"   per tenant, token bucket of work units: each route charges
//               its cost, so an expensive report drains it faster than a read.
//    All three keys share the hash tag {tenant:<id>}, so they live in one
//    slot and RL.ALL works unchanged in Redis Cluster;
// 3. is rejected if any limit says no: 429 with Retry-After, RateLimit-Policy
//    and RateLimit, and a JSON body naming the limit (never an identifier).
//
// If Redis is unreachable or slow, failMode decides: "closed" answers 503,
// "open" serves from a small in-process limit (the global limit divided by
// the number of instances), so an outage never means unlimited traffic.
//
// POST /v1/chat is an LLM gateway with limits of its own: it reserves
// max_tokens before the model call and refunds what the call did not use,
// and holds a concurrency slot per API key and one of the tenant's share of
// the model upstream while the call runs (llmGateway.js). The RateLimit fields
// follow the IETF draft (ratelimitHeaders.js).

import http from 'node:http';
import Redis from 'ioredis';
import { Decision, Gcra, Limiter, LocalBucket, Slide, TokenBucket } from 'redis-rl';
import { BadChatRequest, CHAT_PATH, DEFAULT_LLM_LIMITS, LlmGateway, parseMaxTokens, tagged } from './llmGateway.js';
import { answer, ceilS, policyField } from './ratelimitHeaders.js';

export { ceilS };

// --- who is calling ------------------------------------------------------------

// API key -> who it belongs to. In a real service this is a lookup in your
// database or identity provider (by a hash of the key). The secret itself
// never reaches Redis, only the key's id (keyId): key names show up in
// MONITOR, SLOWLOG, KEYS and the logs of whoever runs Redis. tenantId is
// ours, not the client's: it must not contain '{' or '}' (the hash tag).
// zone: the tenant's IANA time zone: its daily token quota (POST /v1/chat)
// resets at its local midnight.
export const DEMO_API_KEYS = new Map([
  ['demo-key-alice', { keyId: 'k1', userId: 'alice', tenantId: 'acme', zone: 'America/New_York' }],
  ['demo-key-bob', { keyId: 'k2', userId: 'bob', tenantId: 'acme', zone: 'America/New_York' }],
  ['demo-key-carol', { keyId: 'k3', userId: 'carol', tenantId: 'globex', zone: 'Europe/Berlin' }],
]);

// --- what the routes cost --------------------------------------------------------

class BadRequest extends Error {}

export const REPORT_COST = 4;

// cost: work units charged to the tenant's "work" limit. work: runs only
// after the limits said yes.
export const ROUTES = new Map([
  ['GET /v1/items', { cost: () => 1, work: () => ({ items: ['apple', 'banana', 'cherry'] }) }],
  ['POST /v1/reports', { cost: () => REPORT_COST, work: () => ({ report: 'ready' }) }],
  [
    'POST /v1/batch',
    {
      // The work a batch asks for is its number of items. A client may ask
      // for more than the whole budget: the limiter answers "never" (-1),
      // and we answer 413.
      cost: (body) => {
        if (!Array.isArray(body?.items)) throw new BadRequest('expected a JSON body {"items": [...]}');
        return Math.max(1, body.items.length);
      },
      work: (who, body) => ({ accepted: body.items.length }),
    },
  ],
]);

// --- the limits --------------------------------------------------------------------

export const DEFAULT_LIMITS = Object.freeze({
  keyLimit: 5, // per API key: GCRA, 5 per minute, all 5 back to back from idle
  keyPeriodMs: 60_000,
  tenantLimit: 20, // per tenant: sliding window, 20 requests per minute
  tenantWindowMs: 60_000,
  workCapacity: 20, // per tenant: token bucket of 20 work units,
  workRefill: 20, //   refilled at 20 per minute
  workRefillPeriodMs: 60_000,
});

// The three limits as redis-rl values: the name goes into RateLimit headers
// and 429 bodies; the library builds the RL.ALL arguments, reads the reply,
// and computes q, w, r and t from the limit and its reply. One hash tag per
// tenant, {tenant:<id>}, keeps every key of one RL.ALL in one cluster slot;
// only server-side ids go into a key.
export function buildLimits(l) {
  return {
    key: new Gcra(l.keyLimit, l.keyPeriodMs, { name: 'key', key: tagged((who) => `key:${who.keyId}`) }),
    tenant: new Slide(l.tenantLimit, l.tenantWindowMs, { name: 'tenant', key: tagged(() => 'tenant') }),
    // The route's cost is charged here (1 per request on the other two).
    work: new TokenBucket(l.workCapacity, l.workRefill, l.workRefillPeriodMs, { name: 'work', key: tagged(() => 'work') }),
  };
}

// --- the decision --------------------------------------------------------------------

// failMode, when Redis is unreachable or does not answer in time:
//   "closed": 503 + Retry-After. Nothing is served unlimited; the API is down
//             while Redis is. Pick it when overload costs more than downtime.
//   "open":   serve, but through a local limit of globalLimit / instances per
//             globalPeriodMs, so the fleet as a whole stays near the global
//             limit. Pick it when downtime costs more.
export const DEFAULT_CONFIG = Object.freeze({
  limits: DEFAULT_LIMITS,
  failMode: 'open',
  instances: 1, // how many copies of this service run behind the load balancer
  globalLimit: 600, // requests the whole fleet may serve per globalPeriodMs
  globalPeriodMs: 60_000,
  failClosedRetryAfterS: 5,
  llm: DEFAULT_LLM_LIMITS, // POST /v1/chat, the LLM gateway (llmGateway.js)
});

export function configFromEnv(env) {
  return {
    ...DEFAULT_CONFIG,
    failMode: env.FAIL_MODE ?? DEFAULT_CONFIG.failMode,
    instances: Number(env.INSTANCES ?? DEFAULT_CONFIG.instances),
    globalLimit: Number(env.GLOBAL_LIMIT ?? DEFAULT_CONFIG.globalLimit),
    globalPeriodMs: Number(env.GLOBAL_PERIOD_MS ?? DEFAULT_CONFIG.globalPeriodMs),
    failClosedRetryAfterS: Number(env.FAIL_CLOSED_RETRY_AFTER_S ?? DEFAULT_CONFIG.failClosedRetryAfterS),
  };
}

export class RateLimitedApi {
  // upstream: the model POST /v1/chat calls (see llmGateway.js); without it
  // that route does not exist.
  constructor(redis, apiKeys, config = {}, { fallbackClock, logger = console, upstream = null } = {}) {
    this.apiKeys = apiKeys;
    this.config = { ...DEFAULT_CONFIG, ...config };
    if (!['open', 'closed'].includes(this.config.failMode)) throw new RangeError("failMode must be 'open' or 'closed'");
    // Every limit fails "closed" in the library: a Decision with source
    // 'fail_closed' then says Redis was unreachable, timed out or (a
    // misconfiguration) answered an unavailability error, and withoutRedis()
    // applies this service's fail mode. The connection's commandTimeout is
    // the timeout (connectRedis), so the library adds none. backend 'auto':
    // the module's commands where it is loaded, else the library's Lua
    // functions (managed Redis and Valkey), loaded on first use.
    this.limiter = new Limiter(redis, { prefix: '', onError: 'closed', timeoutMs: 0, logger: null, backend: 'auto' });
    this.limits = buildLimits(this.config.limits);
    this.order = [this.limits.key, this.limits.tenant, this.limits.work];
    this.policyHeader = policyField(this.order);
    // This instance's share of the global limit, used only while Redis is
    // down: ONE bucket for all callers, so the instance's total is bounded.
    const share = Math.max(1, Math.floor(this.config.globalLimit / Math.max(1, this.config.instances)));
    this.fallback = new LocalBucket(share, this.config.globalPeriodMs, fallbackClock);
    this.fallbackLimit = new Gcra(share, this.config.globalPeriodMs, { name: 'fallback' });
    this.logger = logger;
    this.llm = upstream ? new LlmGateway(this.limiter, this.config.llm, upstream, logger) : null;
  }

  authenticate(authorization) {
    const [scheme, token] = (authorization ?? '').split(' ', 2);
    if (scheme?.toLowerCase() !== 'bearer' || !token) return null;
    return this.apiKeys.get(token.trim()) ?? null;
  }

  // -> { status, headers, body }: status 200 means go ahead and do the work.
  async check(who, cost) {
    const { key, tenant, work } = this.limits;
    const d = await this.limiter.checkAll([[key, who], [tenant, who], [work, who, cost]]);
    if (d.source === 'fail_closed') {
      this.logger.warn(`rate limiter unavailable (${d.error.name}: ${d.error.message}): failing ${this.config.failMode}`);
      return this.withoutRedis();
    }
    return answer(d, this.policyHeader);
  }

  withoutRedis() {
    if (this.config.failMode === 'closed') {
      return {
        status: 503,
        headers: { 'Retry-After': String(this.config.failClosedRetryAfterS) },
        body: { error: 'rate_limiter_unavailable' },
      };
    }
    // Fail open, but not unlimited: one request is one unit here. Per-key and
    // per-tenant fairness is gone until Redis is back; the total is bounded.
    return answer(new Decision(this.fallback.take(1), this.fallbackLimit, null, 1));
  }

  async chat(res, who, raw) {
    let body;
    let maxTokens;
    try {
      body = raw.length ? JSON.parse(raw) : null;
      maxTokens = parseMaxTokens(body, this.llm.limits.maxTokensCap);
    } catch (err) {
      if (!(err instanceof SyntaxError || err instanceof BadChatRequest)) throw err;
      return send(res, 400, {}, { error: 'bad_request', detail: err.message });
    }
    const { status, headers, body: reply } = await this.llm.chat(who, body, maxTokens, () => this.withoutRedis());
    return send(res, status, headers, reply);
  }

  // --- HTTP ----------------------------------------------------------------------

  static MAX_BODY = 64 * 1024;

  async handle(req, res) {
    // The query string is dropped here on purpose: nothing in it (such as
    // ?tenant=other) takes part in identifying the caller.
    const path = new URL(req.url, 'http://localhost').pathname;
    let raw;
    try {
      raw = await readBody(req, RateLimitedApi.MAX_BODY);
    } catch {
      // The rest of the body is unread: this connection cannot be reused.
      return send(res, 413, { Connection: 'close' }, { error: 'body_too_large' });
    }

    const who = this.authenticate(req.headers.authorization);
    if (!who) return send(res, 401, { 'WWW-Authenticate': 'Bearer realm="api"' }, { error: 'unauthorized' });
    if (this.llm && req.method === 'POST' && path === CHAT_PATH) return this.chat(res, who, raw);
    const route = ROUTES.get(`${req.method} ${path}`);
    if (!route) return send(res, 404, {}, { error: 'not_found' });
    let body;
    let cost;
    try {
      body = raw.length ? JSON.parse(raw) : null;
      cost = route.cost(body);
    } catch (err) {
      if (!(err instanceof SyntaxError || err instanceof BadRequest)) throw err;
      return send(res, 400, {}, { error: 'bad_request', detail: err.message });
    }

    const verdict = await this.check(who, cost);
    if (verdict.status !== 200) return send(res, verdict.status, verdict.headers, verdict.body); // before any work
    return send(res, 200, verdict.headers, route.work(who, body));
  }
}

function readBody(req, max) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > max) {
        req.pause();
        reject(new Error('body too large'));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, headers, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), ...headers });
  res.end(data);
}

export function createServer(api) {
  return http.createServer((req, res) => {
    api.handle(req, res).catch((err) => {
      api.logger.error(err);
      if (!res.headersSent) send(res, 500, {}, { error: 'internal' });
      else res.destroy();
    });
  });
}

// A short timeout and no client-side retries or queueing: while Redis is down
// or slow, each request should learn it within timeoutMs and take the fail
// mode, not wait in ioredis's offline queue for a reconnect.
export function connectRedis(url, timeoutMs) {
  const redis = new Redis(url, {
    commandTimeout: timeoutMs, // Redis hangs: the command fails after timeoutMs
    connectTimeout: timeoutMs,
    enableOfflineQueue: false, // Redis gone: commands fail at once instead of queueing
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000), // keep reconnecting in the background
    disconnectTimeout: timeoutMs, // on shutdown, do not wait 2 s for a socket to a dead server
  });
  // Every request that meets the outage logs it (check()); without a listener
  // ioredis would also print each reconnect failure.
  redis.on('error', () => {});
  return redis;
}
