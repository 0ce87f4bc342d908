import type { Decision, Metrics } from './index.js';

export interface PrometheusMetricsOptions {
  /** A prom-client Registry (default: prom-client's global register). */
  registry?: unknown;
  /** The prom-client module, if not resolvable as "prom-client". */
  promClient?: unknown;
  /** Metric name prefix (default "redis_rl_"). */
  prefix?: string;
  buckets?: number[];
}

export declare class PrometheusMetrics implements Metrics {
  constructor(opts?: PrometheusMetricsOptions);
  onDecision(name: string, decision: Decision, latencySeconds: number): void;
  onError(name: string, error: Error): void;
  onFallback(name: string, policy: 'open' | 'closed' | 'local', error: Error): void;
}
