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
// ModuleBackend speaks the module's RL.* commands; LuaBackend answers the
// same methods with FCALL rl_gcra 1 key ... (RESP2 arrays on every
// protocol), so the Limiter and its API do not change; AutoBackend picks one.

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

// sendWait(command, args, key, replicas, timeoutMs) -> Promise<[reply, acks]>:
// the command and `WAIT replicas timeoutMs` in one pipeline (not MULTI: there
// WAIT does not block), one round trip; the durable option uses it.

// ioredis's pipeline answers [[err, reply], [err, acks]].
function unpipe(res) {
  if (!Array.isArray(res) || res.length !== 2) throw new Error('redis-rl: pipeline answered no replies');
  const [[e1, r], [e2, acks]] = res;
  if (e1) throw e1;
  if (e2) throw e2;
  return [r, Number(acks)];
}

// node-redis throws MultiErrorReply for a pipeline with an error reply: raise that reply.
async function nodeRedisPipe(p) {
  let res;
  try {
    res = await p.execAsPipeline();
  } catch (err) {
    if (err && Array.isArray(err.replies) && Array.isArray(err.errorIndexes) && err.errorIndexes.length) {
      throw err.replies[err.errorIndexes[0]];
    }
    throw err;
  }
  return [res[0], Number(res[1])];
}

// Blocking calls (RL.ACQUIRE ... WAIT): the client's own timeouts must not cut
// a wait the server keeps.
// - ioredis commandTimeout applies to every command; a Command whose timer is
//   armed before it is sent keeps that timer (ioredis arms one only if none
//   is), so a blocking call gets commandTimeout + the wait.
// - ioredis socketTimeout (no data for that long destroys the connection) and
//   node-redis socket.socketTimeout (an idle socket is destroyed) cannot be
//   set per call: blockingProblem() names them when they are too short.
// - node-redis's command timeout only runs until the command is written, so a
//   blocked command is never cut by it.
const ioredisOptions = (client) => (client.isCluster ? (client.options && client.options.redisOptions) : client.options) || {};

function ioredisBlocking(client, command, args, key, waitMs, slot) {
  const Command = loadIoredisCommand();
  const ct = ioredisOptions(client).commandTimeout;
  if (!Command || (typeof ct !== 'number' && slot === undefined)) return client.call(command, ...args);
  const cmd = new Command(command, args, { replyEncoding: 'utf8' });
  if (slot !== undefined && key !== undefined) cmd.slot = keySlot(key);
  if (typeof ct === 'number') cmd.setTimeout(ct + waitMs);
  return client.sendCommand(cmd);
}

function ioredisBlockingProblem(client, needMs) {
  const st = ioredisOptions(client).socketTimeout;
  if (typeof st === 'number' && st > 0 && st < needMs) {
    return `the ioredis socketTimeout (${st} ms) would close the connection during a wait of up to ${needMs} ms: `
      + 'use a client without socketTimeout (or a longer one) for waiting acquires, or a shorter waitMs';
  }
  return null;
}

function nodeRedisBlockingProblem(client, needMs) {
  const o = client.options || {};
  const st = (o.socket && o.socket.socketTimeout) ?? (o.defaults && o.defaults.socket && o.defaults.socket.socketTimeout);
  if (typeof st === 'number' && st > 0 && st < needMs) {
    return `the node-redis socket.socketTimeout (${st} ms) would close the connection during a wait of up to ${needMs} ms: `
      + 'use a client without socketTimeout (or a longer one) for waiting acquires, or a shorter waitMs';
  }
  return null;
}

// ioredis's Redis class, when `client` is one of the ioredis this package
// loads (its Command then is the client's own).
let ioredisRedis;
function isOurIoredis(client) {
  if (ioredisRedis === undefined) {
    try {
      ioredisRedis = require('ioredis').Redis || null;
    } catch {
      ioredisRedis = null;
    }
  }
  return ioredisRedis !== null && client instanceof ioredisRedis && loadIoredisCommand() !== null;
}

// ioredis (Redis): client.call(command, ...args).
// start(command, args): the same command as a Command of our own, sent with
// client.sendCommand as call() sends it (the same options: the reply as utf8,
// keyPrefix, showFriendlyErrorStack), answered as the ioredis Command itself,
// so that the Limiter's timeout rejects its promise (command.reject, as
// ioredis's own commandTimeout does) instead of wrapping it in a promise of
// its own. null when call() would take another path (auto-pipelining) or the
// client is not of the ioredis this package loads: then send() is used.
function ioredisAdapter(client) {
  const startable = isOurIoredis(client);
  return {
    kind: 'ioredis',
    cluster: false,
    send: (command, args) => client.call(command, ...args), // ioredis flattens one level
    start(command, args) {
      const o = client.options;
      if (!startable || o.enableAutoPipelining) return null;
      const Command = loadIoredisCommand();
      const cmd = new Command(command, args, {
        errorStack: o.showFriendlyErrorStack ? new Error() : undefined, keyPrefix: o.keyPrefix, replyEncoding: 'utf8',
      });
      client.sendCommand(cmd);
      return cmd;
    },
    sendBlocking: (command, args, key, waitMs) => ioredisBlocking(client, command, args, key, waitMs),
    blockingProblem: (needMs) => ioredisBlockingProblem(client, needMs),
    sendWait: async (command, args, key, replicas, timeoutMs) => unpipe(await client.pipeline()
      .call(command, ...args).call('WAIT', String(replicas), String(timeoutMs)).exec()),
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
    sendBlocking: (command, args, key, waitMs) => ioredisBlocking(client, command, args, key, waitMs, true),
    blockingProblem: (needMs) => ioredisBlockingProblem(client, needMs),
    send(command, args, key) {
      const cmd = new Command(command, args, { replyEncoding: 'utf8' }); // flattens one level
      if (key !== undefined) cmd.slot = keySlot(key);
      return client.sendCommand(cmd);
    },
    // A cluster pipeline goes to the node of its commands' keys: ioredis does
    // not know the module's keys, so the command names its key itself; WAIT
    // then runs on that node and counts its replicas.
    async sendWait(command, args, key, replicas, timeoutMs) {
      const p = client.pipeline();
      const cmd = new Command(command, args, { replyEncoding: 'utf8' });
      cmd.getKeys = () => [key];
      p.sendCommand(cmd);
      p.sendCommand(new Command('WAIT', [String(replicas), String(timeoutMs)], { replyEncoding: 'utf8' }));
      return unpipe(await p.exec());
    },
  };
}

// node-redis 5 (createClient): sendCommand takes string arguments only.
function nodeRedisAdapter(client) {
  return {
    kind: 'node-redis',
    cluster: false,
    send: (command, args) => client.sendCommand(flat(command, args)),
    blockingProblem: (needMs) => nodeRedisBlockingProblem(client, needMs),
    sendWait: (command, args, key, replicas, timeoutMs) => nodeRedisPipe(client.multi()
      .addCommand(flat(command, args)).addCommand(['WAIT', String(replicas), String(timeoutMs)])),
  };
}

// node-redis 5 (createCluster): sendCommand(firstKey, isReadonly, args).
function nodeRedisClusterAdapter(client) {
  return {
    kind: 'node-redis-cluster',
    cluster: true,
    send: (command, args, key, readonly) => client.sendCommand(key, !!readonly, flat(command, args)),
    blockingProblem: (needMs) => nodeRedisBlockingProblem(client, needMs),
    // The pipeline goes to the node of `key` (its routing key): WAIT counts that node's replicas.
    sendWait: (command, args, key, replicas, timeoutMs) => nodeRedisPipe(client.multi(key)
      .addCommand(key, false, flat(command, args)).addCommand(key, false, ['WAIT', String(replicas), String(timeoutMs)])),
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

// `wait` ({replicas, timeoutMs}, optional) on the writing methods: the call
// and WAIT in one pipeline; the promise is then of [reply, acks].
function sendMaybeWait(adapter, command, args, key, wait) {
  if (!wait) return adapter.send(command, args, key, false);
  if (typeof adapter.sendWait !== 'function') {
    return Promise.reject(new TypeError(`redis-rl: the ${adapter.kind} adapter has no sendWait (durable)`));
  }
  return adapter.sendWait(command, args, key, wait.replicas, wait.timeoutMs);
}

// RL.ALL's arguments: numkeys key... spec... [PEEK].
function allArgs(keys, specs, peek) {
  const args = [String(keys.length), ...keys];
  for (const s of specs) for (const a of s) args.push(a);
  if (peek) args.push('PEEK');
  return args;
}

class ModuleBackend {
  constructor(client) {
    this.adapter = adapt(client);
    this.name = 'module';
    this.waits = true; // takes the `wait` argument (durable)
  }

  get cluster() {
    return this.adapter.cluster;
  }

  // One limit's consuming (or REFUND) call: RL.GCRA key args...
  // waitMs: the call blocks on the server up to that long (RL.ACQUIRE ... WAIT,
  // already in args): sent so that the client's command timeout does not cut it.
  check(limit, key, args, wait, waitMs) {
    if (waitMs && !wait && typeof this.adapter.sendBlocking === 'function') {
      return this.adapter.sendBlocking(limit.command, [key, args], key, waitMs);
    }
    return sendMaybeWait(this.adapter, limit.command, [key, args], key, wait);
  }

  // The same call as check() without wait, as a started command whose
  // promise a timeout may reject ({promise, reject}), or null when the
  // adapter cannot (then check()).
  start(limit, key, args) {
    return typeof this.adapter.start === 'function' ? this.adapter.start(limit.command, [key, args]) : null;
  }

  // RL.ALL as start() does it (no wait, no PEEK), or null.
  startAll(keys, specs) {
    return typeof this.adapter.start === 'function' ? this.adapter.start('RL.ALL', allArgs(keys, specs, false)) : null;
  }

  // RL.PEEK KIND key args...
  peek(limit, key, args) {
    return this.adapter.send('RL.PEEK', [limit.kind, key, args], key, true);
  }

  // RL.ALL numkeys key... spec... [PEEK]; specs: arrays of arguments.
  all(keys, specs, peek, wait) {
    const args = allArgs(keys, specs, peek);
    if (wait && !peek) return sendMaybeWait(this.adapter, 'RL.ALL', args, keys[0], wait);
    return this.adapter.send('RL.ALL', args, keys[0], !!peek);
  }

  release(key, id, wait) {
    return sendMaybeWait(this.adapter, 'RL.RELEASE', [key, String(id)], key, wait);
  }

  renew(key, id, leaseMs, wait) {
    return sendMaybeWait(this.adapter, 'RL.RENEW', [key, String(id), String(leaseMs)], key, wait);
  }
}

// --- the Lua library (lua/redis_rl.lua), for servers that cannot load modules ---

const fs = require('node:fs');
const path = require('node:path');

// The library this package ships: a byte-for-byte copy of the repository's
// lua/redis_rl.lua (test/luaSource.test.mjs compares them), and its version.
const LUA_PATH = path.join(__dirname, '..', 'lua', 'redis_rl.lua');
let luaSource = null;
function libSource() {
  if (luaSource === null) {
    const src = fs.readFileSync(LUA_PATH, 'utf8');
    const m = /^local LIB_VERSION = '([0-9]+(?:\.[0-9]+)*)'/m.exec(src);
    if (!m) throw new Error(`redis-rl: no LIB_VERSION in ${LUA_PATH}`);
    luaSource = { source: src, version: m[1] };
  }
  return luaSource;
}

// -1, 0, 1 for dotted numeric versions ("1.0.0" < "1.0.10").
function compareVersions(a, b) {
  const x = String(a).split('.').map(Number);
  const y = String(b).split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

// The server has no such function (or no library at all): Redis and Valkey
// answer "ERR Function not found".
const FUNCTION_MISSING = /^ERR Function not found/i;
const errText = (err) => (err && typeof err.message === 'string' ? err.message : '');

// LuaBackend speaks the same decisions through the Functions library:
// FCALL rl_gcra 1 key args... (replies: the RESP2 arrays on every protocol,
// which the Limiter reads as it reads the module's). Before the first call it
// asks the server for rl_version and loads the shipped library with
// FUNCTION LOAD REPLACE when it is missing or older (never replacing a newer
// one); a call that later finds the library gone (FUNCTION FLUSH, a failover
// to a server without it) loads it and is sent once more. On a cluster the
// check and the load go to the node of the key at hand, once per hash slot,
// so each master gets the library the first time one of its keys needs it.
class LuaBackend {
  constructor(client, opts = {}) {
    this.adapter = adapt(client); // a client, or an adapter ({kind, cluster, send}) as is
    this.name = 'lua';
    const lib = libSource();
    this.source = opts.source ?? lib.source;
    this.version = opts.version ?? lib.version;
    this.checked = null; // the promise of the first version check (non-cluster: once per backend)
    this.loads = 0; // how many times this backend loaded the library
    this.checkedSlots = new Set(); // cluster: the hash slots whose master was checked
    this.waits = true;
  }

  get cluster() {
    return this.adapter.cluster;
  }

  // Makes sure the server (the node of `key` on a cluster) has the library at
  // this package's version or newer. Resolves to the version it runs.
  ready(key) {
    if (this.cluster) {
      // Once per hash slot (16384 at most): a slot's master is checked
      // before the first call of one of its keys.
      const slot = key === undefined ? -1 : keySlot(key);
      if (this.checkedSlots.has(slot)) return Promise.resolve(this.version);
      return this.check_(key).then((v) => { this.checkedSlots.add(slot); return v; });
    }
    if (this.checked === null) {
      this.checked = this.check_(key);
      this.checked.catch(() => { this.checked = null; }); // a failed check is tried again next call
    }
    return this.checked;
  }

  async check_(key) {
    let have = null;
    try {
      have = String(await this.adapter.send('FCALL_RO', ['rl_version', '0'], key, true));
    } catch (err) {
      if (!FUNCTION_MISSING.test(errText(err))) throw err;
    }
    if (have !== null && compareVersions(have, this.version) >= 0) return have;
    await this.load(key);
    return this.version;
  }

  load(key) {
    this.loads++;
    return this.adapter.send('FUNCTION', ['LOAD', 'REPLACE', this.source], key, false);
  }

  async fcall(command, args, key, readonly, wait) {
    if (this.cluster || this.checked === null) await this.ready(key);
    else await this.checked;
    const send = () => (wait ? sendMaybeWait(this.adapter, command, args, key, wait)
      : this.adapter.send(command, args, key, readonly));
    try {
      return await send();
    } catch (err) {
      if (!FUNCTION_MISSING.test(errText(err))) throw err;
      await this.load(key); // gone since we checked: load it and send the call once more
      return send();
    }
  }

  // (A waitMs never reaches here: the Limiter refuses WAIT and MAXWAIT for
  // this backend, and the library itself answers an ERR for them.)
  check(limit, key, args, wait) {
    return this.fcall('FCALL', [LUA_FUNCTION[limit.kind], '1', key, args], key, false, wait);
  }

  peek(limit, key, args) {
    return this.fcall('FCALL_RO', ['rl_peek', '1', key, limit.kind, args], key, true);
  }

  // rl_all is not flagged no-writes, so its PEEK form goes through FCALL too.
  all(keys, specs, peek, wait) {
    const args = ['rl_all', String(keys.length), ...keys];
    for (const s of specs) for (const a of s) args.push(a);
    if (peek) args.push('PEEK');
    return this.fcall('FCALL', args, keys[0], false, peek ? undefined : wait);
  }

  release(key, id, wait) {
    return this.fcall('FCALL', ['rl_release', '1', key, String(id)], key, false, wait);
  }

  renew(key, id, leaseMs, wait) {
    return this.fcall('FCALL', ['rl_renew', '1', key, String(id), String(leaseMs)], key, false, wait);
  }
}

const LUA_FUNCTION = {
  GCRA: 'rl_gcra', TOKENBUCKET: 'rl_tokenbucket', SLIDE: 'rl_slide', LOG: 'rl_log', QUOTA: 'rl_quota',
  CONCURRENCY: 'rl_acquire',
};

const UNKNOWN_COMMAND = /^ERR unknown command/i;

// backend: 'auto': the module when the server knows its RL.* commands, else
// the Lua library. The first call is sent as the module's; an "unknown
// command" answer switches this backend to the library for good (and that
// call is sent again through it). `name` says which one it settled on
// ('auto' until the first answer).
class AutoBackend {
  constructor(client, opts = {}) {
    this.module = new ModuleBackend(client);
    this.lua = new LuaBackend(this.module.adapter, opts);
    this.chosen = null;
    this.waits = true;
  }

  get name() {
    return this.chosen ? this.chosen.name : 'auto';
  }

  get cluster() {
    return this.module.cluster;
  }

  get adapter() {
    return this.module.adapter;
  }

  // Resolves to the backend it settled on ('module' or 'lua'), asking the
  // server (COMMAND INFO RL.GCRA, routed by `key` on a cluster) if no call
  // has told it yet; the Lua library is then made ready too.
  async detect(key) {
    if (!this.chosen) {
      const info = await this.module.adapter.send('COMMAND', ['INFO', 'RL.GCRA'], key, true);
      this.chosen = Array.isArray(info) && info.length && info[0] ? this.module : this.lua;
    }
    if (this.chosen === this.lua) await this.lua.ready(key);
    return this.chosen.name;
  }

  async via(method, args) {
    if (this.chosen) return this.chosen[method](...args);
    try {
      const r = await this.module[method](...args);
      this.chosen = this.module;
      return r;
    } catch (err) {
      if (!UNKNOWN_COMMAND.test(errText(err))) throw err;
      this.chosen = this.lua;
      return this.lua[method](...args);
    }
  }

  // Once it settled on the module: its start(); else null (then check()).
  start(limit, key, args) { return this.chosen === this.module ? this.module.start(limit, key, args) : null; }
  startAll(keys, specs) { return this.chosen === this.module ? this.module.startAll(keys, specs) : null; }
  check(...a) { return this.via('check', a); }
  peek(...a) { return this.via('peek', a); }
  all(...a) { return this.via('all', a); }
  release(...a) { return this.via('release', a); }
  renew(...a) { return this.via('renew', a); }
}

function makeBackend(backend, client) {
  if (backend === undefined || backend === null || backend === 'module') return new ModuleBackend(client);
  if (backend === 'auto') return new AutoBackend(client);
  if (backend === 'lua') return new LuaBackend(client);
  if (typeof backend === 'object' && typeof backend.check === 'function') return backend;
  throw new TypeError(`redis-rl: unknown backend ${String(backend)}`);
}

module.exports = { ModuleBackend, LuaBackend, AutoBackend, adapt, makeBackend, compareVersions, libSource, LUA_PATH };
