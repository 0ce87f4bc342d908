// Shared by the tests: one server per test file, clients of both libraries.
import Redis from 'ioredis';
import { createClient } from 'redis';
import { RedisServer } from './redisServer.mjs';

export { RedisServer };

// The three client setups every behaviour is checked with.
export const CLIENTS = ['ioredis', 'node-redis-resp2', 'node-redis-resp3'];

export async function connect(kind, port, extra = {}) {
  if (kind === 'ioredis') {
    const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, ...extra });
    c.on('error', () => {});
    await c.connect();
    return { client: c, close: () => c.disconnect() };
  }
  const c = createClient({ url: `redis://127.0.0.1:${port}`, RESP: kind.endsWith('resp3') ? 3 : 2, ...extra });
  c.on('error', () => {});
  await c.connect();
  return { client: c, close: () => c.destroy() };
}

// A silent logger that remembers what it was told.
export function memoryLogger() {
  const lines = [];
  return { lines, warn: (...a) => lines.push(a.join(' ')), error: (...a) => lines.push(a.join(' ')) };
}

let n = 0;
export const uniq = (p = 'id') => `${p}-${process.pid}-${++n}`;
