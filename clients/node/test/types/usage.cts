// Typed usage from CommonJS.
import rl = require('redis-rl');
import prom = require('redis-rl/prometheus');

const limiter = new rl.Limiter({}, { prefix: 'x:' });
const g = new rl.Gcra(5, 1000);
void limiter.check(g, 'id').then((d: rl.Decision) => d.headers());
void new prom.PrometheusMetrics({ prefix: 'app_' });
