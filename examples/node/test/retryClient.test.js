// The retry helper, deterministically: injected random source, sleep and clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryBudget, RetryingClient, parseRetryAfter } from '../src/retryClient.js';

const reply = (status, retryAfter) => ({
  status, headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }, body: '',
});

// A fake `send` that plays back responses (the last one repeats).
function script(...responses) {
  const send = async () => {
    send.calls += 1;
    return responses[Math.min(send.calls, responses.length) - 1];
  };
  send.calls = 0;
  return send;
}

function client(send, { randValues = [0.5], ...options } = {}) {
  const sleeps = [];
  const values = [...randValues];
  const rand = () => (values.length > 1 ? values.shift() : values[0]);
  return [new RetryingClient(send, { sleep: async (s) => { sleeps.push(s); }, rand, ...options }), sleeps];
}

describe('RetryingClient: full jitter', () => {
  it('does not retry a success', async () => {
    const send = script(reply(200));
    const [c, sleeps] = client(send);
    assert.equal((await c.call()).status, 200);
    assert.deepEqual([send.calls, sleeps], [1, []]);
  });

  it('takes Retry-After as the floor and adds full jitter', async () => {
    // base 1 s, cap 4 s: the jitter bound doubles 1, 2, 4, then stays at the cap.
    const send = script(reply(429, 3), reply(429, 3), reply(429, 3), reply(200));
    const [c, sleeps] = client(send, { randValues: [0.5, 0.5, 0.25], baseS: 1, capS: 4, maxRetries: 5 });
    assert.equal((await c.call()).status, 200);
    assert.deepEqual(sleeps, [3 + 0.5 * 1, 3 + 0.5 * 2, 3 + 0.25 * 4]);
    assert.equal(send.calls, 4);
  });

  it('draws between zero and the capped exponential', async () => {
    // No Retry-After (a 503 from a proxy, say): pure full jitter.
    for (const [rand, expected] of [[0, [0, 0, 0, 0, 0]], [1, [1, 2, 4, 8, 8]]]) {
      const send = script(reply(503));
      const [c, sleeps] = client(send, { randValues: [rand], baseS: 1, capS: 8, maxRetries: 5 });
      assert.equal((await c.call()).status, 503);
      assert.deepEqual(sleeps, expected);
    }
  });

  it('retries at most maxRetries times per call', async () => {
    const send = script(reply(429, 1));
    const [c, sleeps] = client(send, { randValues: [0], maxRetries: 3 });
    assert.equal((await c.call()).status, 429);
    assert.deepEqual([send.calls, sleeps], [4, [1, 1, 1]]);
  });

  it('hands back a Retry-After longer than maxWaitS', async () => {
    const send = script(reply(429, 1200), reply(200));
    const budget = new RetryBudget();
    const [c, sleeps] = client(send, { maxWaitS: 30, budget });
    assert.equal((await c.call()).status, 429);
    assert.deepEqual([send.calls, sleeps], [1, []]);
    assert.equal(budget.available, 10); // nothing spent on a retry that did not happen
  });

  it('does not retry other statuses', async () => {
    for (const status of [200, 400, 401, 404, 413, 500]) {
      const send = script(reply(status, 1));
      const [c, sleeps] = client(send);
      assert.equal((await c.call()).status, status);
      assert.deepEqual([send.calls, sleeps], [1, []], String(status));
    }
  });

  it('reads an HTTP-date Retry-After', async () => {
    const send = script(reply(503, 'Sun, 06 Nov 1994 08:49:42 GMT'), reply(200));
    const [c, sleeps] = client(send, { randValues: [0], now: () => 784111770000 }); // 12 s before that date
    assert.equal((await c.call()).status, 200);
    assert.deepEqual(sleeps, [12]);
  });
});

describe('RetryBudget', () => {
  it('keeps retries within the budget across calls', async () => {
    // The server refuses everything. Budget: 2 banked retries, 10% of calls.
    const send = script(reply(503));
    const budget = new RetryBudget({ percent: 10, burst: 2 });
    const [c, sleeps] = client(send, { randValues: [0], budget, maxRetries: 3 });
    await c.call(); // spends both banked retries, then has none for the third
    assert.deepEqual([send.calls, sleeps.length], [3, 2]);
    for (let n = 0; n < 9; n++) await c.call(); // calls 2..10 earn 0.1 each, 0.9 in all: no retry
    assert.deepEqual([send.calls, sleeps.length], [12, 2]);
    await c.call(); // call 11 makes it exactly 1.0 (integers: no 0.99999...): one retry
    assert.deepEqual([send.calls, sleeps.length], [14, 3]);
    for (let n = 0; n < 89; n++) await c.call();
    // 100 calls: never more than the 2 banked retries plus 10% of the calls
    // (here one retry every 10 calls after the bank ran dry: 11 in all).
    assert.equal(sleeps.length, 11);
    assert.ok(sleeps.length <= 2 + 100 / 10);
  });

  it('is capped', () => {
    const budget = new RetryBudget({ percent: 50, burst: 1 });
    for (let n = 0; n < 10; n++) budget.onCall();
    assert.equal(budget.trySpend(), true);
    assert.equal(budget.trySpend(), false);
  });
});

describe('parseRetryAfter', () => {
  it('reads both forms and nothing else', () => {
    const now = () => 784111770000;
    assert.equal(parseRetryAfter('3', now), 3);
    assert.equal(parseRetryAfter(' 120 ', now), 120);
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:42 GMT', now), 12);
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', now), 0); // in the past
    assert.equal(parseRetryAfter(undefined, now), null);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter('-1', now), null);
  });
});
