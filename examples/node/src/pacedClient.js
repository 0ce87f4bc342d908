// A paced outgoing client: many workers (in one process or many) share a
// partner API that allows `partnerLimit` calls in any `windowMs`, and never
// see its 429.
//
// Each call first books its start with `limiter.pace()` (RL.GCRA ... MAXWAIT):
// the module admits the call now for the earliest instant it conforms and
// says how long to wait (`waitMs`); pace() sleeps that long and returns. The
// server keeps the order, so the workers do not race each other (no one is
// starved, nobody wakes together), and a booking is exact: it is the leaky
// bucket, so the starts never run faster than the rate.
//
// The rate: the partner counts calls in a sliding window, GCRA paces a rate
// with a burst. Over any window of `windowMs`, a GCRA of `rate` per
// `windowMs` with burst `b` starts at most `rate + b - 1` calls, so
// `pacingFor()` picks rate and burst with `rate + burst - 1` a margin below
// the partner's limit (the margin absorbs network jitter between the start
// here and the arrival there).
//
// Cancellation: `signal` (an AbortSignal) stops the workers; a worker waiting
// for its start gives its booking back (pace() refunds it), so a stopped
// fleet leaves no phantom calls in the limit.

import { Gcra, RateLimited } from 'redis-rl';

// The GCRA that keeps a fleet under "partnerLimit calls in any windowMs":
// burst calls at once, then (rate / windowMs) per ms; rate + burst - 1 is
// partnerLimit - margin.
export function pacingFor({ partnerLimit, windowMs, burst = 10, margin = 10, name = 'partner' }) {
  const rate = partnerLimit - margin - burst + 1;
  if (rate < 1) throw new RangeError('partnerLimit too small for this burst and margin');
  return new Gcra(rate, windowMs, { burst, name });
}

// Runs `jobs` (an array of anything) through `callPartner(job)` with
// `workers` concurrent workers, each call paced by `limiter.pace(limit,
// identity, {maxWaitMs})`. Resolves to {results, denied}: the partner's
// answers in job order, and the jobs that could not be booked within
// maxWaitMs (RateLimited; not called: retry them later, or raise maxWaitMs).
export async function runPaced({ limiter, limit, identity = 'partner-api', jobs, workers = 12,
  maxWaitMs = 60_000, callPartner, signal }) {
  const results = new Array(jobs.length);
  const denied = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      if (signal?.aborted) return;
      const i = next++;
      try {
        await limiter.pace(limit, identity, { maxWaitMs, signal });
      } catch (err) {
        if (err instanceof RateLimited) {
          denied.push(jobs[i]);
          continue;
        }
        if (signal?.aborted) return; // stopped while waiting: its booking was given back
        throw err;
      }
      results[i] = await callPartner(jobs[i]);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return { results, denied };
}
