'use strict';
// The metrics hook the Limiter calls:
//   onDecision(name, decision, latencySeconds)  every decision (also a fallback's)
//   onError(name, err)                          an error raised to the caller
//   onFallback(name, policy, err)               the failure policy answered
// `result` of a decision for counters: allowed | denied | fail_open | fail_closed | local | durable.

function resultOf(d) {
  if (d.source === 'redis') return d.allowed ? 'allowed' : 'denied';
  return d.source;
}

// Counts in memory; handy in tests and for a /debug endpoint.
class MemoryMetrics {
  constructor() {
    this.decisions = {};
    this.errors = {};
    this.fallbacks = {};
    this.latencies = [];
  }

  onDecision(name, d, seconds) {
    const k = `${name}|${resultOf(d)}`;
    this.decisions[k] = (this.decisions[k] || 0) + 1;
    this.latencies.push(seconds);
    if (this.latencies.length > 1000) this.latencies.shift();
  }

  onError(name) {
    this.errors[name] = (this.errors[name] || 0) + 1;
  }

  onFallback(name, policy) {
    const k = `${name}|${policy}`;
    this.fallbacks[k] = (this.fallbacks[k] || 0) + 1;
  }
}

module.exports = { resultOf, MemoryMetrics };
