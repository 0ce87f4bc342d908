//! Token bucket: at most `capacity` tokens, refilled continuously at
//! `refill_tokens` per `refill_period_ms`, lazily on the next call.
//!
//! The state is the bucket's dual, "the time at which the bucket is full
//! again" (µs since the epoch). The tokens present at `now` are
//! `capacity - (full_at - now) / interval`, a fixed-point count in units of
//! one microsecond of refill: no stored token count, so no float and no
//! rounding drift however often the bucket is read. With the per-token
//! interval rounded up to a whole microsecond this is the same virtual
//! schedule as GCRA (see [`super::gcra::Schedule`]); the token bucket is the
//! description that users reason about as capacity and refill.

use super::decision::{Outcome, ParamError, Write};
use super::gcra::Schedule;
use super::time::unit_interval_us;

/// `RL.TOKENBUCKET key capacity refill_tokens refill_period_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    schedule: Schedule,
}

/// The stored state of a token-bucket key: when the bucket is full again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucketState {
    pub full_at_us: u64,
}

impl TokenBucket {
    /// Arguments must already be in range (`capacity`, `refill_tokens` in
    /// 1..=2^32-1, `refill_period_ms` in 1..=10^12).
    pub fn new(capacity: u64, refill_tokens: u64, refill_period_ms: u64) -> Result<Self, ParamError> {
        let interval = unit_interval_us(refill_period_ms, refill_tokens);
        Schedule::new(interval, capacity)
            .map(|schedule| Self { schedule })
            .ok_or(ParamError { arg: "capacity", reason: "refilling capacity takes more than 10^15 ms" })
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// A missing key is a full bucket.
    pub fn check(&self, state: Option<TokenBucketState>, now_us: u64, cost: u64) -> Outcome<TokenBucketState> {
        let o = self.schedule.check(state.map(|s| s.full_at_us), now_us, cost);
        Outcome {
            decision: o.decision,
            write: o
                .write
                .map(|w| Write { state: TokenBucketState { full_at_us: w.state }, expire_at_ms: w.expire_at_ms }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::table::Row;

    fn run(b: &TokenBucket, rows: &[Row]) {
        crate::core::table::run(|s, now, cost| b.check(s, now, cost), b.schedule().burst(), rows);
    }

    #[test]
    fn capacity_five_refilling_two_per_second() {
        let b = TokenBucket::new(5, 2, 1000).unwrap();
        run(
            &b,
            &[
                (0, 1, true, 4, 0, 500),
                (0, 1, true, 3, 0, 1000),
                (0, 1, true, 2, 0, 1500),
                (0, 1, true, 1, 0, 2000),
                (0, 1, true, 0, 0, 2500),
                // The sixth waits for one token: 500 ms.
                (0, 1, false, 0, 500, 2500),
                // By 1500 ms three tokens came back; one is taken, two remain.
                (1500, 1, true, 2, 0, 1500),
            ],
        );
    }

    #[test]
    fn a_new_bucket_starts_full() {
        let b = TokenBucket::new(100, 10, 1000).unwrap();
        run(&b, &[(0, 0, true, 100, 0, 0), (0, 100, true, 0, 0, 10_000), (0, 1, false, 0, 100, 10_000)]);
    }

    #[test]
    fn refill_never_exceeds_capacity() {
        let b = TokenBucket::new(3, 1, 100).unwrap();
        run(&b, &[(0, 3, true, 0, 0, 300), (10_000, 0, true, 3, 0, 0), (10_000, 4, false, 3, -1, 0)]);
    }

    #[test]
    fn uneven_refill_rounds_the_interval_up() {
        // 3 tokens per second: 333_334 µs each, never faster than configured.
        let b = TokenBucket::new(3, 3, 1000).unwrap();
        run(&b, &[(0, 3, true, 0, 0, 1001), (333, 1, false, 0, 1, 668), (334, 1, true, 0, 0, 1000)]);
    }

    #[test]
    fn an_unrepresentable_capacity_is_rejected_naming_capacity() {
        assert_eq!(TokenBucket::new(u32::MAX as u64, 1, 1_000_000_000_000).unwrap_err().arg, "capacity");
    }
}
