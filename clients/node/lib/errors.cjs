'use strict';

// A limit denied what withLease (or another helper that cannot return a
// Decision) was asked to do. `decision` says which limit and for how long.
class RateLimited extends Error {
  constructor(decision, message) {
    super(message || `rate limited by "${decision.name}" (retry after ${decision.retryAfterMs} ms)`);
    this.name = 'RateLimited';
    this.decision = decision;
    this.retryAfterMs = decision.retryAfterMs;
  }
}

// checkAll: the keys of one RL.ALL would not share a cluster hash slot.
// Raised before any round trip; pass {tag} to place one hash tag in every key.
class CrossSlotError extends Error {
  constructor(keys, slots) {
    super(`the keys of one RL.ALL must share a hash slot; got slots ${slots.join(', ')} (pass {tag} to checkAll)`);
    this.name = 'CrossSlotError';
    this.keys = keys;
    this.slots = slots;
  }
}

// The Redis call did not answer within the Limiter's timeoutMs.
class RedisTimeoutError extends Error {
  constructor(ms) {
    super(`redis-rl: no answer from Redis within ${ms} ms`);
    this.name = 'RedisTimeoutError';
    this.code = 'ETIMEDOUT';
    this.timeoutMs = ms;
  }
}

// The lease was lost (RL.RENEW answered 0) or withLease was aborted.
class LeaseLostError extends Error {
  constructor(lease) {
    super(`lease ${lease.id} on "${lease.name}" is no longer live`);
    this.name = 'LeaseLostError';
    this.lease = lease;
  }
}

// The server does not know the RL.* commands: a misconfiguration, never
// answered by a failure policy.
class ModuleNotLoadedError extends Error {
  constructor(cause) {
    super(`the server does not know the redis-rl commands (${cause.message}); load the module `
      + '(--loadmodule /path/libredis_rl.so) or pick another backend', { cause });
    this.name = 'ModuleNotLoadedError';
  }
}

// A write sent with the durable option was acknowledged by fewer replicas
// than asked within the timeout (it did happen on the master; a failover may
// lose it). acks, replicas; decision: the server's answer, when there is one.
class NotDurableError extends Error {
  constructor(acks, replicas, decision = null) {
    super(`redis-rl: ${acks} of ${replicas} replica(s) acknowledged the write in time`);
    this.name = 'NotDurableError';
    this.acks = acks;
    this.replicas = replicas;
    this.decision = decision;
  }
}

// One limit name (or key function) used with two sets of parameters through
// one Limiter: its keys hold one limiter, which every call would reconfigure.
// Raised before any round trip (strictParams: false logs a warning instead).
class ParameterConflictError extends RangeError {
  constructor(limit, previous) {
    const what = limit.keyFn ? `limit "${limit.name}" (its key function)` : `limit "${limit.name}"`;
    super(`${what} is ${limit.describe()} here but was ${previous.describe()}: `
      + 'one name, one set of parameters (a key is one limiter)');
    this.name = 'ParameterConflictError';
    this.code = 'ERR_RL_PARAMETER_CONFLICT';
    this.limit = limit;
    this.previous = previous;
  }
}

// The backend cannot do what was asked: WAIT (a blocking acquire) and MAXWAIT
// (booking, pace) need the module; the Lua library cannot block or book.
// Raised before any round trip when the Limiter knows its backend is the Lua
// library, else when the server answers so. feature: 'WAIT' | 'MAXWAIT'.
class NotSupportedError extends Error {
  constructor(feature, backend, cause) {
    super(`redis-rl: ${feature} is not available with the ${backend} backend (the Lua library cannot `
      + `${feature === 'WAIT' ? 'block' : 'book a start'}); load the module, or check without ${feature}`, cause ? { cause } : undefined);
    this.name = 'NotSupportedError';
    this.code = 'ERR_RL_NOT_SUPPORTED';
    this.feature = feature;
    this.backend = backend;
  }
}

module.exports = {
  NotSupportedError,
  RateLimited, CrossSlotError, RedisTimeoutError, LeaseLostError, ModuleNotLoadedError, NotDurableError, ParameterConflictError,
};
