'use strict';
// redis-rl: the client library for the redis-rl module (ioredis 5, node-redis 5).

const limits = require('./limits.cjs');
const decision = require('./decision.cjs');
const errors = require('./errors.cjs');
const limiter = require('./limiter.cjs');
const backend = require('./backend.cjs');
const retry = require('./retry.cjs');
const middleware = require('./middleware.cjs');
const metrics = require('./metrics.cjs');
const { keySlot } = require('./crc16.cjs');
const { LocalBucket } = require('./localBucket.cjs');

module.exports = {
  VERSION: '0.2.0',
  Gcra: limits.Gcra,
  TokenBucket: limits.TokenBucket,
  Slide: limits.Slide,
  Log: limits.Log,
  Quota: limits.Quota,
  Concurrency: limits.Concurrency,
  Limit: limits.Limit,
  Local: limits.Local,
  Limiter: limiter.Limiter,
  Lease: limiter.Lease,
  Reservation: limiter.Reservation,
  Decision: decision.Decision,
  parseReply: decision.parseReply,
  parseAllReply: decision.parseAllReply,
  ModuleBackend: backend.ModuleBackend,
  LuaBackend: backend.LuaBackend,
  AutoBackend: backend.AutoBackend,
  adapt: backend.adapt,
  RateLimited: errors.RateLimited,
  CrossSlotError: errors.CrossSlotError,
  RedisTimeoutError: errors.RedisTimeoutError,
  LeaseLostError: errors.LeaseLostError,
  ModuleNotLoadedError: errors.ModuleNotLoadedError,
  NotDurableError: errors.NotDurableError,
  ParameterConflictError: errors.ParameterConflictError,
  NotSupportedError: errors.NotSupportedError,
  retry: retry.retry,
  RetryBudget: retry.RetryBudget,
  parseRetryAfter: retry.parseRetryAfter,
  expressRateLimit: middleware.expressRateLimit,
  fastifyRateLimit: middleware.fastifyRateLimit,
  MemoryMetrics: metrics.MemoryMetrics,
  keySlot,
  LocalBucket,
};
