// Run the example service by hand: see README.md.
import { demoUpstream } from './src/llmGateway.js';
import { DEMO_API_KEYS, RateLimitedApi, configFromEnv, connectRedis, createServer } from './src/service.js';

const env = process.env;
const config = configFromEnv(env);
const redis = connectRedis(env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', Number(env.REDIS_TIMEOUT_MS ?? 100));
const api = new RateLimitedApi(redis, DEMO_API_KEYS, config, { upstream: demoUpstream });
const server = createServer(api);
const host = env.HOST ?? '127.0.0.1';
server.listen(Number(env.PORT ?? 8080), host, () => {
  console.error(`listening on http://${host}:${server.address().port} ` +
    `(FAIL_MODE=${config.failMode}, INSTANCES=${config.instances})`);
});
