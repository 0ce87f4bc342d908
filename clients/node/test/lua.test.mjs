// The Lua backend (FCALL into lua/redis_rl.lua) against a managed service
// stood in for: a server started without the module and with
// --enable-module-command no. The same calls through the module (a second
// server, with it) and through the library give the same Decisions, at the
// same frozen instants (both servers read one fake clock); backend 'auto'
// picks the module where RL.* exists and the library elsewhere; the library
// is loaded when it is missing or older, and never replaced by an older one;
// a user whose ACL forbids MODULE gets the library through 'auto'.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Limiter, Gcra, TokenBucket, Slide, Log, Quota, Concurrency, LuaBackend, AutoBackend, NotSupportedError,
  ModuleBackend } from '../lib/index.mjs';
import { RedisServer, CLIENTS, connect, memoryLogger } from './helpers.mjs';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SHIPPED = path.join(REPO, 'clients', 'node', 'lua', 'redis_rl.lua');
const SOURCE = path.join(REPO, 'lua', 'redis_rl.lua');
const run = promisify(execFile);

test('the shipped Lua library is byte for byte lua/redis_rl.lua', () => {
  const a = fs.readFileSync(SHIPPED);
  const b = fs.readFileSync(SOURCE);
  assert.ok(a.equals(b), 'clients/node/lua/redis_rl.lua differs from lua/redis_rl.lua: cp lua/redis_rl.lua clients/node/lua/');
  const m = /^local LIB_VERSION = '([^']+)'/m.exec(b.toString('utf8'));
  assert.equal(new LuaBackend({ kind: 'x', cluster: false, send: async () => null }).version, m[1]);
});

let tmp;
let clockFile;
let modServer;
let luaServer;

function setClock(us) {
  fs.writeFileSync(`${clockFile}.tmp`, `@${us}\n`);
  fs.renameSync(`${clockFile}.tmp`, clockFile);
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-rl-lua-'));
  const so = path.join(tmp, 'fakeclock.so');
  await run('cc', ['-shared', '-fPIC', '-O2', '-o', so, path.join(REPO, 'tests', 'common', 'fakeclock.c'), '-ldl'],
    { timeout: 60000 });
  clockFile = path.join(tmp, 'clock');
  setClock(Date.UTC(2026, 0, 15, 12) * 1000);
  const env = { LD_PRELOAD: so, FAKECLOCK_FILE: clockFile };
  const started = await Promise.allSettled([
    RedisServer.start({ env }),
    RedisServer.start({ env, withModule: false, extraArgs: ['--enable-module-command', 'no'] }),
  ]);
  [modServer, luaServer] = started.map((s) => s.value); // both stopped in after(), even if one failed
  for (const s of started) if (s.status === 'rejected') throw s.reason;
});
after(async () => {
  await Promise.all([modServer?.stop(), luaServer?.stop()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// What a Decision says, with the Lease's own fields; errors as their text.
const view = (d) => (d === null ? null : { ...d.toJSON(), ...(d.id !== undefined ? { id: d.id } : {}) });
async function outcome(p) {
  try {
    const v = await p;
    return v !== null && typeof v === 'object' && typeof v.toJSON === 'function' ? view(v) : v;
  } catch (err) {
    return { error: err.message };
  }
}

// One fixed sequence of calls at fixed instants (from t0, in µs); the list of
// what each answered.
async function scenario(limiter, client, t0) {
  let now = t0;
  const at = (ms) => { now += ms * 1000; setClock(now); };
  setClock(now);
  const out = [];
  const rec = async (label, p) => out.push([label, await outcome(p)]);

  const kinds = [new Gcra(3, 60000), new Gcra(3, 60000, { burst: 5, name: 'burst' }), new TokenBucket(3, 1, 7000),
    new Slide(3, 60000), new Log(3, 60000), new Quota(3, 'DAY', { tz: 'America/New_York' }), new Quota(3, 3600000)];
  for (const limit of kinds) {
    for (let i = 0; i < 4; i++) await rec(`${limit.name} check ${i}`, limiter.check(limit, 'u1'));
    at(1234);
    await rec(`${limit.name} after 1234 ms`, limiter.check(limit, 'u1'));
    await rec(`${limit.name} peek 2`, limiter.peek(limit, 'u1', 2));
    await rec(`${limit.name} refund`, limiter.refund(limit, 'u1', 2));
    await rec(`${limit.name} cost 0`, limiter.check(limit, 'u1', 0));
    await rec(`${limit.name} never`, limiter.check(limit, 'u1', 9));
    at(20000);
    await rec(`${limit.name} after 20 s`, limiter.check(limit, 'u1', 2));
  }

  // checkAll: all or nothing, a lease with an id, a denial, PEEK.
  const user = new Gcra(2, 60000, { name: 'user' });
  const tenant = new Slide(10, 60000, { name: 'tenant' });
  const slots = new Concurrency(5, 60000, { name: 'slots' });
  for (let i = 0; i < 3; i++) {
    await rec(`all ${i}`, limiter.checkAll([[user, 'alice'], [tenant, 'acme', 2], [slots, 'alice', 1, `c${i}`]],
      { tag: 'acme' }));
    at(10);
  }
  await rec('all release c0', limiter.release(slots, 'alice', 'c0', { tag: 'acme' }));
  await rec('all release c0 again', limiter.release(slots, 'alice', 'c0', { tag: 'acme' }));
  await rec('all peek', limiter.checkAll([[tenant, 'acme'], [slots, 'alice']], { tag: 'acme', peek: true }));
  await rec('all never', limiter.checkAll([[tenant, 'acme', 11], [user, 'bob']], { tag: 'acme' }));

  // Leases: ids, a denial, release, renew, expiry.
  const pool = new Concurrency(2, 5000, { name: 'pool' });
  const a = await limiter.acquire(pool, 'w', { id: 'a' });
  out.push(['acquire a', view(a)]);
  await rec('acquire b', limiter.acquire(pool, 'w', { id: 'b', cost: 1 }));
  await rec('acquire c (denied)', limiter.acquire(pool, 'w', { id: 'c' }));
  await rec('acquire a again (renews)', limiter.acquire(pool, 'w', { id: 'a' }));
  await rec('renew a', a.renew());
  await rec('release a', a.release());
  await rec('release a (once)', a.release());
  await rec('peek pool', limiter.peek(pool, 'w', 0));
  at(6000);
  await rec('after expiry: peek pool', limiter.peek(pool, 'w', 0));
  await rec('renew expired b', limiter.backend.renew(limiter.key(pool, 'w'), 'b', 5000));
  await rec('withLease', limiter.withLease(pool, 'w', async (l) => [l.allowed, l.remaining], { id: 'z' }));

  // Reserve, then settle.
  const tokens = new TokenBucket(1000, 1, 3600000, { name: 'tokens' });
  const r = await limiter.reserve(tokens, 'llm', 400);
  out.push(['reserve 400', view(r.decision)]);
  await rec('settle 100', r.settle(100));
  await rec('settle again', r.settle(0));
  const big = await limiter.reserve(tokens, 'llm', 950);
  out.push(['reserve 950', view(big.decision)]);
  await rec('settle denied', big.settle(0));
  const over = await limiter.reserve(tokens, 'llm', 100);
  await rec('settle over', over.settle(150));
  at(1500);
  await rec('peek tokens', limiter.peek(tokens, 'llm', 0));
  // refundAll: one RL.ALL with REFUND specs, all or nothing.
  const daily = new Quota(5000, 'DAY', { tz: 'Europe/Berlin', name: 'daily' });
  await rec('daily 800', limiter.check(daily, 'llm', 800));
  await rec('refundAll', limiter.refundAll([[tokens, 'llm', 300], [daily, 'llm', 300]]));
  await client.set(limiter.key(daily, 'bad'), 'x');
  await rec('refundAll WRONGTYPE', limiter.refundAll([[tokens, 'llm', 5], [daily, 'bad', 5]]));
  await rec('peek tokens after a refused refundAll', limiter.peek(tokens, 'llm', 0));

  // Errors: the same texts.
  await client.set(limiter.key(user, 'str'), 'a string');
  await rec('WRONGTYPE', limiter.check(user, 'str'));
  await rec('unknown zone', limiter.check(new Quota(5, 'DAY', { tz: 'Mars/Olympus_Mons' }), 'z'));
  return out;
}

const T0 = Date.UTC(2026, 2, 8, 6, 59, 58) * 1000; // 2 s before New York's spring-forward (07:00 UTC)

CLIENTS.forEach((kind, n) => {
  describe(kind, () => {
    let mod;
    let lua;
    before(async () => {
      mod = await connect(kind, modServer.port);
      lua = await connect(kind, luaServer.port);
    });
    after(() => { mod.close(); lua.close(); });
    const opts = (backend, p) => ({ prefix: `${p}:${kind}:`, logger: memoryLogger(), timeoutMs: 5000, backend });
    const t0 = T0 + n * 3600e6;

    test('the module and the Lua library give the same Decisions; auto picks each', { timeout: 60000 }, async () => {
      const viaModule = await scenario(new Limiter(mod.client, opts('module', 's')), mod.client, t0);
      const luaLimiter = new Limiter(lua.client, opts('lua', 's'));
      assert.ok(luaLimiter.backend instanceof LuaBackend);
      const viaLua = await scenario(luaLimiter, lua.client, t0);
      assert.deepEqual(viaLua, viaModule);
      // Not vacuous: the sequence allows, denies, answers never and raises.
      const get = (label) => viaModule.find(([l]) => l === label)[1];
      assert.deepEqual([0, 1, 2, 3].map((i) => get(`gcra-3-per-60000ms check ${i}`).allowed), [true, true, true, false]);
      assert.equal(get('gcra-3-per-60000ms never').never, true);
      assert.equal(get('all 2').allowed, false);
      assert.deepEqual(get('all 2').deniedBy, ['user']);
      assert.equal(get('acquire c (denied)').allowed, false);
      assert.equal(get('release a'), true);
      assert.equal(get('renew expired b'), 0);
      assert.equal(get('settle 100').remaining, 900);
      assert.deepEqual(get('refundAll').decisions.map((x) => x.remaining), [1000, 4500]);
      assert.equal(get('peek tokens after a refused refundAll').remaining, get('refundAll').decisions[0].remaining);
      assert.match(get('WRONGTYPE').error, /^WRONGTYPE/);
      assert.match(get('unknown zone').error, /^ERR TZ: unknown time zone/);

      // auto: the library on the server without the module, the module where it is.
      const autoLua = new Limiter(lua.client, opts('auto', 'a'));
      const autoMod = new Limiter(mod.client, opts('auto', 'a'));
      assert.equal(autoLua.backend.name, 'auto');
      assert.deepEqual(await scenario(autoLua, lua.client, t0), viaModule.map(([l, v]) => [l, rekey(v, 's', 'a')]));
      assert.equal(autoLua.backend.name, 'lua');
      assert.deepEqual(await scenario(autoMod, mod.client, t0), viaModule.map(([l, v]) => [l, rekey(v, 's', 'a')]));
      assert.equal(autoMod.backend.name, 'module');
      // ... and the keys are the library's (plain strings) and the module's (its types).
      const key = `a:${kind}:daily:llm`; // still live at the scenario's end
      assert.equal(await lua.client.type(key), 'string');
      assert.notEqual(await mod.client.type(key), 'string');
    });

    test('WAIT and MAXWAIT through the library: NotSupportedError, also when only the server says so (auto)', async () => {
      const g = new Gcra(5, 1000, { name: 'nw-gcra' });
      const slots = new Concurrency(1, 1000, { name: 'nw-slots' });
      for (const backend of ['lua', 'auto']) {
        // auto, first call: sent as the module's, switched to the library, refused by it.
        const l = new Limiter(lua.client, opts(backend, `nw${backend}`));
        await assert.rejects(l.pace(g, 'u', { maxWaitMs: 100 }), (e) => e instanceof NotSupportedError && e.feature === 'MAXWAIT');
        assert.equal(l.backend.name, 'lua');
        const l2 = new Limiter(lua.client, opts(backend, `nw2${backend}`));
        await assert.rejects(l2.acquire(slots, 'u', { waitMs: 100 }), (e) => e instanceof NotSupportedError && e.feature === 'WAIT');
        await assert.rejects(l2.checkAll([[g, 'u']], { maxWaitMs: 100 }), NotSupportedError);
        // Nothing consumed by the refusals.
        assert.equal((await l2.peek(g, 'u', 0)).remaining, 5);
        assert.equal((await l2.peek(slots, 'u', 0)).remaining, 1);
      }
    });

    test('auto detect(): COMMAND INFO decides up front', async () => {
      const onLua = new AutoBackend(lua.client);
      const onMod = new AutoBackend(mod.client);
      assert.equal(await onLua.detect(), 'lua');
      assert.equal(await onMod.detect(), 'module');
      assert.ok(onMod.module instanceof ModuleBackend);
    });
  });
});

// A view from a Limiter with prefix `from` as one with prefix `to` would give it.
function rekey(v, from, to) {
  if (v === null || typeof v !== 'object') return v;
  return JSON.parse(JSON.stringify(v).replaceAll(`"${from}:`, `"${to}:`));
}

// Loading: on the server without the module, for every client.
for (const kind of CLIENTS) {
  describe(`${kind}: loading the library`, () => {
    let conn;
    before(async () => { conn = await connect(kind, luaServer.port); });
    after(() => conn.close());
    const call = (...args) => (kind === 'ioredis' ? conn.client.call(...args) : conn.client.sendCommand(args));
    const installed = async () => String(await call('FCALL_RO', 'rl_version', '0'));
    const source = fs.readFileSync(SOURCE, 'utf8');
    const withVersion = (v) => source.replace(/^local LIB_VERSION = '[^']+'/m, `local LIB_VERSION = '${v}'`);
    const g = new Gcra(5, 60000);
    const limiter = () => new Limiter(conn.client, { prefix: `load:${kind}:`, backend: 'lua', logger: memoryLogger(), timeoutMs: 5000 });
    const shipped = new LuaBackend({ kind: 'x', cluster: false, send: async () => null }).version;

    test('missing: loaded before the first call', async () => {
      await call('FUNCTION', 'FLUSH');
      await assert.rejects(installed(), /Function not found/);
      const l = limiter();
      assert.equal((await l.check(g, 'x')).allowed, true);
      assert.equal(l.backend.loads, 1);
      assert.equal(await installed(), shipped);
      // A second Limiter finds it there: no load.
      const l2 = limiter();
      assert.equal((await l2.check(g, 'x')).remaining, 3);
      assert.equal(l2.backend.loads, 0);
    });

    test('older: replaced; newer: kept', async () => {
      await call('FUNCTION', 'LOAD', 'REPLACE', withVersion('0.9.9'));
      assert.equal(await installed(), '0.9.9');
      const l = limiter();
      assert.equal((await l.peek(g, 'y')).allowed, true);
      assert.equal(l.backend.loads, 1);
      assert.equal(await installed(), shipped);
      await call('FUNCTION', 'LOAD', 'REPLACE', withVersion('99.0.0'));
      const l2 = limiter();
      assert.equal((await l2.check(g, 'y')).allowed, true);
      assert.equal(l2.backend.loads, 0);
      assert.equal(await installed(), '99.0.0');
      await call('FUNCTION', 'LOAD', 'REPLACE', source);
    });

    test('flushed after the first call: loaded again and the call sent once more', async () => {
      const l = limiter();
      assert.equal((await l.check(g, 'z')).remaining, 4);
      await call('FUNCTION', 'FLUSH');
      assert.equal((await l.check(g, 'z')).remaining, 3);
      assert.equal(l.backend.loads, 1);
      assert.equal(await installed(), shipped);
    });

    test('a user whose ACL forbids MODULE: auto finds and loads the library', async () => {
      const user = `app-${kind}`;
      await call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-module');
      await call('FUNCTION', 'FLUSH');
      const app = await connect(kind, luaServer.port, { username: user, password: 'secret' });
      try {
        const appCall = (...a) => (kind === 'ioredis' ? app.client.call(...a) : app.client.sendCommand(a));
        await assert.rejects(appCall('MODULE', 'LIST'), /NOPERM|no permissions/i);
        const l = new Limiter(app.client, { prefix: `acl:${kind}:`, backend: 'auto', logger: memoryLogger(), timeoutMs: 5000 });
        assert.deepEqual([(await l.check(g, 'a')).remaining, (await l.check(g, 'a')).remaining], [4, 3]);
        assert.equal(l.backend.name, 'lua');
        assert.equal(l.backend.lua.loads, 1);
        assert.equal(await installed(), shipped);
      } finally {
        app.close();
      }
    });

    test('the module backend on this server: ModuleNotLoadedError, not a failure-policy answer', async () => {
      const l = new Limiter(conn.client, { prefix: `load:${kind}:`, onError: 'open', logger: memoryLogger() });
      await assert.rejects(l.check(g, 'm'), (e) => e.name === 'ModuleNotLoadedError');
      assert.equal(l.fallbacks.total, 0);
      await assert.rejects(call('MODULE', 'LOAD', '/nonexistent.so'), /not allowed/);
    });
  });
}
