// No server: one limit name, one set of parameters (ParameterConflictError,
// strictParams: false, the cap), through a recording client adapter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter, Gcra, TokenBucket, Slide, Quota, Concurrency, ParameterConflictError } from '../lib/index.mjs';
import limiterMod from '../lib/limiter.cjs';
import { memoryLogger } from './helpers.mjs';

// An adapter of our own ({kind, cluster, send}): records, answers allowed.
function recorder() {
  const sent = [];
  return {
    sent,
    kind: 'recorder',
    cluster: false,
    send: (command, args) => {
      sent.push([command, ...args.flat()]);
      if (command === 'RL.ALL') return Promise.resolve([1, 0, ...args.slice(1).filter((a) => typeof a === 'string' && a.startsWith('rl:')).map(() => [1, 10, 9, 0, 100])]);
      if (command === 'RL.ACQUIRE') return Promise.resolve([1, 10, 9, 0, 100, 'lease-1']);
      return Promise.resolve([1, 10, 9, 0, 100]);
    },
  };
}

function setup(opts = {}) {
  const rec = recorder();
  const logger = memoryLogger();
  return { rec, logger, limiter: new Limiter(rec, { timeoutMs: 0, logger, ...opts }) };
}

test('a conflict rejects before any command is sent, naming both parameter sets', async () => {
  const { rec, limiter } = setup();
  await limiter.check(new Gcra(100, 1000, { name: 'api' }), 'u');
  assert.equal(rec.sent.length, 1);
  await assert.rejects(limiter.check(new Gcra(10, 1000, { name: 'api' }), 'other-user'), (err) => {
    assert.ok(err instanceof ParameterConflictError && err instanceof Error);
    assert.equal(err.code, 'ERR_RL_PARAMETER_CONFLICT');
    assert.match(err.message, /limit "api" is Gcra\(limit=10, periodMs=1000\) here but was Gcra\(limit=100, periodMs=1000\): one name, one set of parameters \(a key is one limiter\)/);
    return true;
  });
  assert.equal(rec.sent.length, 1, 'nothing may be sent for a conflicting limit');
});

test('every call kind is guarded', async () => {
  const { rec, limiter } = setup();
  await limiter.check(new Gcra(100, 1000, { name: 'api' }), 'u');
  const other = new Gcra(100, 1000, { name: 'api', burst: 5 });
  const calls = [
    () => limiter.check(other, 'u'),
    () => limiter.peek(other, 'u'),
    () => limiter.refund(other, 'u', 1),
    () => limiter.checkAll([[new Slide(5, 1000, { name: 's' }), 'u'], [other, 'u']]),
    () => limiter.checkAll([[other, 'u']], { peek: true }),
    () => limiter.refundAll([[other, 'u', 1]]),
    () => limiter.reserve(other, 'u', 3),
    () => limiter.acquire(new Concurrency(2, 1000, { name: 'api' }), 'u'),
    () => limiter.check(new TokenBucket(100, 100, 1000, { name: 'api' }), 'u'),
  ];
  for (const call of calls) await assert.rejects(call(), ParameterConflictError);
  assert.throws(() => limiter.key(other, 'u'), /burst=5\) here/);
  await assert.rejects(limiter.acquire(new Concurrency(2, 1000, { name: 'api' }), 'u'),
    /Concurrency\(limit=2, leaseMs=1000\) here but was Gcra/);
  assert.equal(rec.sent.length, 1);
});

test('the same parameters again are fine', async () => {
  const { rec, limiter } = setup();
  const a = new Gcra(100, 1000, { name: 'api' });
  for (const who of ['a', 'b', 'c']) await limiter.check(a, who);
  await limiter.check(new Gcra(100, 1000, { name: 'api' }), 'd'); // another object, equal parameters
  await limiter.check(new Gcra(100, 1000, { name: 'api', unit: 'tokens', onError: 'open' }), 'e'); // not sent
  await limiter.peek(a, 'a');
  await limiter.check(new Gcra(10, 1000, { name: 'other' }), 'a'); // another name: its own keys
  await limiter.check(new Gcra(10, 1000), 'a'); // default names carry their parameters
  await limiter.check(new Gcra(20, 1000), 'a');
  await limiter.checkAll([[a, 'x'], [new Slide(5, 1000, { name: 's' }), 'x']]);
  assert.equal(rec.sent.length, 10);
  // another Limiter keeps its own record
  const second = setup({ prefix: 'other:' });
  await second.limiter.check(new Gcra(10, 1000, { name: 'api' }), 'u');
  assert.equal(second.rec.sent.length, 1);
});

test('a calendar quota\'s tz is a parameter; a key function is the name', async () => {
  const { rec, limiter } = setup();
  await limiter.check(new Quota(100, 'DAY', { name: 'q' }), 'u');
  await assert.rejects(limiter.check(new Quota(100, 'DAY', { tz: 'Europe/Paris', name: 'q' }), 'u'), /tz="Europe\/Paris"/);
  const perUser = (id) => `u:${id}:rate`;
  await limiter.check(new Gcra(100, 1000, { name: 'a', key: perUser }), 'u');
  await assert.rejects(limiter.check(new Gcra(10, 1000, { name: 'b', key: perUser }), 'u'), /its key function/);
  await limiter.check(new Gcra(10, 1000, { name: 'a' }), 'u'); // default keys: other keys
  assert.equal(rec.sent.length, 3);
});

test('strictParams: false sends every call and warns once per name', async () => {
  const { rec, limiter, logger } = setup({ strictParams: false });
  const small = new Gcra(10, 1000, { name: 'api' });
  const big = new Gcra(100, 1000, { name: 'api' });
  await limiter.check(small, 'u');
  await limiter.check(big, 'u');
  await limiter.check(small, 'u');
  await limiter.check(new Gcra(1000, 1000, { name: 'api' }), 'u');
  await limiter.check(new Slide(5, 1000, { name: 's' }), 'u');
  await limiter.check(new Slide(6, 1000, { name: 's' }), 'u');
  assert.equal(rec.sent.length, 6);
  const warnings = logger.lines.filter((l) => l.includes('change parameters'));
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.match(warnings[0], /limit "api" is now Gcra\(limit=100, periodMs=1000\), was Gcra\(limit=10, periodMs=1000\)/);
  assert.match(warnings[1], /limit "s"/);
});

test('the record is capped (logged once) and limits made per call stay bounded', async (t) => {
  const saved = limiterMod.paramLimits.MAX_PARAM_NAMES;
  limiterMod.paramLimits.MAX_PARAM_NAMES = 5;
  t.after(() => { limiterMod.paramLimits.MAX_PARAM_NAMES = saved; });
  const { rec, limiter, logger } = setup();
  for (let i = 0; i < 5; i++) await limiter.check(new Gcra(10, 1000, { name: `n${i}` }), 'u');
  assert.equal(limiter.declared.size, 5);
  for (let i = 5; i < 20; i++) {
    await limiter.check(new Gcra(10, 1000, { name: `n${i}` }), 'u');
    await limiter.check(new Gcra(20, 1000, { name: `n${i}` }), 'u'); // beyond the cap: not checked
  }
  assert.equal(limiter.declared.size, 5);
  assert.ok(limiter.checkedLimits.size <= 5);
  assert.equal(logger.lines.filter((l) => l.includes('not checked')).length, 1);
  await assert.rejects(limiter.check(new Gcra(20, 1000, { name: 'n0' }), 'u'), ParameterConflictError);
  assert.equal(rec.sent.length, 35);

  const fresh = setup();
  for (let i = 0; i < 100; i++) await fresh.limiter.check(new Gcra(10, 1000, { name: 'api' }), String(i));
  assert.ok(fresh.limiter.checkedLimits.size <= 5);
  assert.equal(fresh.limiter.declared.size, 1);
  await assert.rejects(fresh.limiter.check(new Gcra(11, 1000, { name: 'api' }), 'x'), ParameterConflictError);
  assert.equal(fresh.rec.sent.length, 100);
});

// As recorder(), with sendWait (the durable path: the command and WAIT in one
// pipeline); WAIT answers 1 replica.
function waitRecorder() {
  const rec = recorder();
  rec.sendWait = async (command, args, key, replicas, timeoutMs) => {
    const reply = await rec.send(command, args, key, false);
    rec.sent.push(['WAIT', String(replicas), String(timeoutMs)]);
    return [reply, 1];
  };
  return rec;
}

test('the durable paths are guarded too: no command, no WAIT', async () => {
  const rec = waitRecorder();
  const limiter = new Limiter(rec, { timeoutMs: 0, logger: memoryLogger(), durable: true });
  assert.equal((await limiter.check(new Gcra(100, 1000, { name: 'api' }), 'u')).allowed, true);
  assert.deepEqual(rec.sent.map((c) => c[0]), ['RL.GCRA', 'WAIT'], 'the first call is durable: WAIT follows it');
  const other = new Gcra(100, 1000, { name: 'api', burst: 5 });
  const calls = [
    () => limiter.check(other, 'u'),
    () => limiter.check(other, 'u', { durable: { replicas: 2, timeoutMs: 10 } }),
    () => limiter.checkAll([[new Slide(5, 1000, { name: 's' }), 'u'], [other, 'u']]),
    () => limiter.checkAll([[other, 'u']], { durable: true }),
    () => limiter.peek(other, 'u'),
    () => limiter.refund(other, 'u', 1),
    () => limiter.refund(other, 'u', 1, { durable: true }),
    () => limiter.refundAll([[other, 'u', 1]]),
    () => limiter.reserve(other, 'u', 3),
    () => limiter.acquire(new Concurrency(2, 1000, { name: 'api' }), 'u', { durable: true }),
    () => limiter.withLease(new Concurrency(2, 1000, { name: 'api' }), 'u', () => assert.fail('not reached')),
  ];
  for (const call of calls) await assert.rejects(call(), ParameterConflictError);
  assert.throws(() => limiter.key(other, 'u'), /burst=5\) here/);
  assert.equal(rec.sent.length, 2, 'nothing may be sent for a conflicting limit');
  // a durable lease under a name of its own is fine, and its WAIT is sent
  const lease = await limiter.acquire(new Concurrency(2, 1000, { name: 'jobs' }), 'u');
  assert.ok(lease.id, 'the lease was taken');
  assert.deepEqual(rec.sent.slice(2).map((c) => c[0]), ['RL.ACQUIRE', 'WAIT']);
});
