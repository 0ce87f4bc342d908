'use strict';
// prom-client adapter: new PrometheusMetrics({registry}) as the Limiter's metrics.
//   redis_rl_decisions_total{limit,result="allowed|denied|error|fail_open|fail_closed|local|durable"}
//   redis_rl_decision_seconds{limit}        histogram of a decision's latency
//   redis_rl_fallbacks_total{limit,policy}  failure policy activations

const { resultOf } = require('./metrics.cjs');

const DEFAULT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

class PrometheusMetrics {
  constructor(opts = {}) {
    const promClient = opts.promClient || require('prom-client');
    const registers = opts.registry ? [opts.registry] : undefined;
    const prefix = opts.prefix ?? 'redis_rl_';
    this.decisions = new promClient.Counter({
      name: `${prefix}decisions_total`, help: 'redis-rl decisions by limit and result', labelNames: ['limit', 'result'], registers,
    });
    this.seconds = new promClient.Histogram({
      name: `${prefix}decision_seconds`, help: 'redis-rl decision latency in seconds', labelNames: ['limit'],
      buckets: opts.buckets || DEFAULT_BUCKETS, registers,
    });
    this.fallbacks = new promClient.Counter({
      name: `${prefix}fallbacks_total`, help: 'redis-rl failure policy activations', labelNames: ['limit', 'policy'], registers,
    });
  }

  onDecision(name, d, seconds) {
    this.decisions.inc({ limit: name, result: resultOf(d) });
    this.seconds.observe({ limit: name }, seconds);
  }

  onError(name) {
    this.decisions.inc({ limit: name, result: 'error' });
  }

  onFallback(name, policy) {
    this.fallbacks.inc({ limit: name, policy });
  }
}

module.exports = { PrometheusMetrics };
