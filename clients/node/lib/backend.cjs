'use strict';
// The seam between the Limiter and Redis.
//
// A Backend turns the Limiter's requests into commands and answers the raw
// replies; the Limiter parses them (RESP2 arrays or RESP3 maps alike). All
// I/O goes through an adapter, one per client library, with one method:
//   send(command, args, key, readonly) -> Promise<reply>
// args: strings, or arrays of strings (one level: [key, [limit, period]]),
// sent flattened; key: the command's first key (a cluster adapter routes by
// it); readonly: the command only reads (a cluster may send it to a replica).
//
// ModuleBackend speaks the module's RL.* commands. A LuaBackend (a later
// issue) answers the same methods with FCALL rl_gcra 1 key ... (RESP2 arrays
// on every protocol), so the Limiter and its API do not change.

const { keySlot } = require('./crc16.cjs');

let ioredisCommand; // ioredis's Command class, loaded only for ioredis Cluster
function loadIoredisCommand() {
  if (ioredisCommand === undefined) {
    try {
      ioredisCommand = require('ioredis').Command || null;
    } catch {
      ioredisCommand = null;
    }
  }
  return ioredisCommand;
}

// ioredis (Redis): client.call(command, ...args).
function ioredisAdapter(client) {
  return {
    kind: 'ioredis',
    cluster: false,
    send: (command, args) => client.call(command, ...args), // ioredis flattens one level
  };
}

const flat = (command, args) => {
  const out = [command];
  for (const a of args) {
    if (Array.isArray(a)) for (const x of a) out.push(x);
    else out.push(a);
  }
  return out;
};

// ioredis Cluster: the module's commands are unknown to ioredis's command
// table, so it would pick a random node and follow MOVED. We give the
// command its slot (CRC16 of the key) so it goes to the slot's master; MOVED
// and ASK are still followed by ioredis.
function ioredisClusterAdapter(client) {
  const Command = loadIoredisCommand();
  if (!Command) {
    return { kind: 'ioredis-cluster', cluster: true, send: (command, args) => client.call(command, ...args) };
  }
  return {
    kind: 'ioredis-cluster',
    cluster: true,
    send(command, args, key) {
      const cmd = new Command(command, args, { replyEncoding: 'utf8' }); // flattens one level
      if (key !== undefined) cmd.slot = keySlot(key);
      return client.sendCommand(cmd);
    },
  };
}

// node-redis 5 (createClient): sendCommand takes string arguments only.
function nodeRedisAdapter(client) {
  return {
    kind: 'node-redis',
    cluster: false,
    send: (command, args) => client.sendCommand(flat(command, args)),
  };
}

// node-redis 5 (createCluster): sendCommand(firstKey, isReadonly, args).
function nodeRedisClusterAdapter(client) {
  return {
    kind: 'node-redis-cluster',
    cluster: true,
    send: (command, args, key, readonly) => client.sendCommand(key, !!readonly, flat(command, args)),
  };
}

// The adapter for a client: ioredis Redis or Cluster, node-redis client or
// cluster, or an adapter of your own ({kind, cluster, send}, used as is).
function adapt(client) {
  if (!client || typeof client !== 'object') throw new TypeError('redis-rl: a Redis client is required');
  if (typeof client.send === 'function' && typeof client.kind === 'string') return client;
  if (typeof client.call === 'function' && typeof client.sendCommand === 'function' && 'isCluster' in client) {
    return client.isCluster ? ioredisClusterAdapter(client) : ioredisAdapter(client);
  }
  if (typeof client.sendCommand === 'function') {
    if (typeof client.getSlotMaster === 'function' || typeof client.getMasters === 'function' || 'masters' in client) {
      return nodeRedisClusterAdapter(client);
    }
    return nodeRedisAdapter(client);
  }
  throw new TypeError('redis-rl: unsupported client (expected ioredis Redis/Cluster or a node-redis 5 client/cluster)');
}

class ModuleBackend {
  constructor(client) {
    this.adapter = adapt(client);
    this.name = 'module';
  }

  get cluster() {
    return this.adapter.cluster;
  }

  // One limit's consuming (or REFUND) call: RL.GCRA key args...
  check(limit, key, args) {
    return this.adapter.send(limit.command, [key, args], key, false);
  }

  // RL.PEEK KIND key args...
  peek(limit, key, args) {
    return this.adapter.send('RL.PEEK', [limit.kind, key, args], key, true);
  }

  // RL.ALL numkeys key... spec... [PEEK]; specs: arrays of arguments.
  all(keys, specs, peek) {
    const args = [String(keys.length), ...keys];
    for (const s of specs) for (const a of s) args.push(a);
    if (peek) args.push('PEEK');
    return this.adapter.send('RL.ALL', args, keys[0], !!peek);
  }

  release(key, id) {
    return this.adapter.send('RL.RELEASE', [key, String(id)], key, false);
  }

  renew(key, id, leaseMs) {
    return this.adapter.send('RL.RENEW', [key, String(id), String(leaseMs)], key, false);
  }
}

function makeBackend(backend, client) {
  if (backend === undefined || backend === null || backend === 'module' || backend === 'auto') return new ModuleBackend(client);
  if (typeof backend === 'object' && typeof backend.check === 'function') return backend;
  if (backend === 'lua') throw new Error('redis-rl: the Lua backend is not available in this version (use "module")');
  throw new TypeError(`redis-rl: unknown backend ${String(backend)}`);
}

module.exports = { ModuleBackend, adapt, makeBackend };
