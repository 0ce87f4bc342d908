//! `INFO rl`: what the module decided, as relaxed atomic counters.
//!
//! Counting is one uncontended `fetch_add` per event on the hot path: no
//! lock, no allocation. Redis's own `INFO commandstats` and `LATENCY` already
//! time every command, so nothing here measures time.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::core::Decision;

/// The counters of one command (each kind's are declared with it, in `kinds`).
pub struct Counters {
    /// Every call, whatever its outcome.
    calls: AtomicU64,
    /// Calls answered allowed = 1 (PEEK and COST 0 included).
    allowed: AtomicU64,
    /// Calls answered allowed = 0 that could succeed later.
    denied: AtomicU64,
    /// Calls answered allowed = 0 with retry -1: cost above the limit.
    never: AtomicU64,
    /// Refunds answered (`REFUND n`; also counted as allowed). RL.ALL:
    /// refund specs settled by allowed calls.
    refunds: AtomicU64,
    /// Calls answered with an error (bad arguments, WRONGTYPE, OOM is the
    /// server's and never reaches the module).
    errors: AtomicU64,
}

impl Counters {
    pub const fn new() -> Self {
        Self {
            calls: AtomicU64::new(0),
            allowed: AtomicU64::new(0),
            denied: AtomicU64::new(0),
            never: AtomicU64::new(0),
            refunds: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Starts counting one call: an error unless [`Tally::decided`] is called,
    /// so early returns and caught panics count as errors by themselves.
    pub fn tally(&'static self) -> Tally {
        self.calls.fetch_add(1, Relaxed);
        Tally { counters: self, decided: false }
    }
}

impl Counters {
    /// `(calls, allowed, denied, never, refunds, errors)`, for INFO.
    pub fn snapshot(&self) -> [(&'static std::ffi::CStr, u64); 6] {
        [
            (c"calls", self.calls.load(Relaxed)),
            (c"allowed", self.allowed.load(Relaxed)),
            (c"denied", self.denied.load(Relaxed)),
            (c"never", self.never.load(Relaxed)),
            (c"refunds", self.refunds.load(Relaxed)),
            (c"errors", self.errors.load(Relaxed)),
        ]
    }
}

impl Default for Counters {
    fn default() -> Self {
        Self::new()
    }
}

/// One call being counted.
pub struct Tally {
    counters: &'static Counters,
    decided: bool,
}

impl Tally {
    /// The call was answered with a decision.
    pub fn decided(&mut self, allowed: bool, retry_after_ms: i64) {
        self.decided = true;
        let c = self.counters;
        if allowed {
            c.allowed.fetch_add(1, Relaxed);
        } else if retry_after_ms < 0 {
            c.never.fetch_add(1, Relaxed);
            RETRY_AFTER[NEVER].fetch_add(1, Relaxed);
        } else {
            c.denied.fetch_add(1, Relaxed);
            RETRY_AFTER[retry_bucket(retry_after_ms)].fetch_add(1, Relaxed);
            RETRY_SUM_MS.fetch_add(retry_after_ms as u64, Relaxed);
        }
    }

    /// `RL.RELEASE` / `RL.RENEW` answered: 1 (counted as allowed) or 0.
    pub fn answered(&mut self, ok: bool) {
        self.decided = true;
        if ok {
            self.counters.allowed.fetch_add(1, Relaxed);
        }
    }

    pub fn decision(&mut self, d: &Decision) {
        self.decided(d.allowed, d.retry_after_ms);
    }

    /// The call settled `n` refunds.
    pub fn refunded(&mut self, n: u64) {
        self.counters.refunds.fetch_add(n, Relaxed);
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if !self.decided {
            self.counters.errors.fetch_add(1, Relaxed);
        }
    }
}

/// The upper bounds (ms, inclusive) of the retry-after histogram's
/// buckets, and each bucket's name in `INFO rl`; then `longer`, then `never`.
pub const RETRY_BOUNDS: [(i64, &std::ffi::CStr); 6] = [
    (10, c"le_10ms"),
    (100, c"le_100ms"),
    (1_000, c"le_1s"),
    (10_000, c"le_10s"),
    (60_000, c"le_1min"),
    (3_600_000, c"le_1h"),
];
const LONGER: usize = RETRY_BOUNDS.len();
const NEVER: usize = LONGER + 1;

/// The `retry_after_ms` of every denial (every command, PEEK included, an
/// `RL.ALL` once with its combined retry), non-cumulative: bucket `i` counts
/// the retries above bound `i - 1` and up to bound `i`; then the longer
/// ones; then the denials that can never succeed (retry -1).
pub static RETRY_AFTER: [AtomicU64; NEVER + 1] = [const { AtomicU64::new(0) }; NEVER + 1];

/// The histogram's bucket for a denial's `retry_after_ms` (>= 0).
#[inline]
fn retry_bucket(retry_after_ms: i64) -> usize {
    RETRY_BOUNDS.iter().position(|&(bound, _)| retry_after_ms <= bound).unwrap_or(LONGER)
}

/// The histogram as `(field, count)`, in order, for INFO.
pub fn retry_histogram() -> impl Iterator<Item = (&'static std::ffi::CStr, u64)> {
    let names = RETRY_BOUNDS.iter().map(|&(_, name)| name).chain([c"longer", c"never"]);
    names.zip(RETRY_AFTER.iter().map(|c| c.load(Relaxed)))
}

/// The sum of the `retry_after_ms` of the denials the histogram counts in
/// its finite buckets (never-allowed ones apart), for a Prometheus
/// histogram's `_sum`. (Wraps after 2^64 ms of retries, as a counter may.)
pub static RETRY_SUM_MS: AtomicU64 = AtomicU64::new(0);

/// The same histogram cumulative, as Prometheus's `le` buckets are: each
/// bound counts every retry up to it, `le_inf` every finite one (the
/// `_count`), then `sum_ms` (the `_sum`, in ms) and `never` apart.
pub fn retry_histogram_cumulative() -> impl Iterator<Item = (&'static std::ffi::CStr, u64)> {
    let names = RETRY_BOUNDS.iter().map(|&(_, name)| name).chain([c"le_inf"]);
    let counts = RETRY_AFTER[..=LONGER].iter().scan(0u64, |total, c| {
        *total += c.load(Relaxed);
        Some(*total)
    });
    names.zip(counts).chain([(c"sum_ms", RETRY_SUM_MS.load(Relaxed)), (c"never", RETRY_AFTER[NEVER].load(Relaxed))])
}

/// Effects propagated (`RL.APPLY`s handed to the server for replicas and AOF).
pub static EFFECTS: AtomicU64 = AtomicU64::new(0);
/// Limiter keys created (a write to a key that did not exist).
pub static KEYS_CREATED: AtomicU64 = AtomicU64::new(0);
/// Stored states read as drained and rewritten (backward clock jump,
/// tightened limit), see the README.
pub static REPAIRS: AtomicU64 = AtomicU64::new(0);
/// Panics caught at an entry point (each answered with an error, or a
/// logged no-op for a callback).
pub static PANICS: AtomicU64 = AtomicU64::new(0);

pub fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_fall_in_non_cumulative_buckets_with_inclusive_bounds() {
        let cases = [(0, 0), (10, 0), (11, 1), (100, 1), (101, 2), (1_000, 2), (10_000, 3), (10_001, 4)];
        for (retry, bucket) in cases {
            assert_eq!(retry_bucket(retry), bucket, "{retry}");
        }
        assert_eq!(retry_bucket(60_000), 4);
        assert_eq!(retry_bucket(3_600_000), 5);
        assert_eq!(retry_bucket(3_600_001), LONGER);
        assert_eq!(retry_bucket(i64::MAX), LONGER);
        let names: Vec<_> = retry_histogram().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(names, ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "longer", "never"]);
        let names: Vec<_> = retry_histogram_cumulative().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(names, ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "le_inf", "sum_ms", "never"]);
    }
}
