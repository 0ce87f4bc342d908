import m from './prometheus.cjs';

export const { PrometheusMetrics } = m;
export default m;
