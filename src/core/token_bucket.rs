//! Token bucket: at most `capacity` tokens, refilled continuously at
//! `refill_tokens` per `refill_period_ms`, lazily on the next call.
//!
//! The state is the bucket's dual, "the time at which the bucket is full
//! again" (ns since the epoch). The tokens present at `now` are
//! `(full_at - now) * refill_tokens / refill_period` short of capacity, a
//! fixed-point count in units of one nanosecond of refill: no stored token
//! count, so no float and no rounding drift however often the bucket is read.
//! A take of `n` tokens is charged `n * refill_period / refill_tokens` ns,
//! rounded up once; this is the same virtual schedule as GCRA (see
//! [`super::gcra::Schedule`]); the token bucket is the description that users
//! reason about as capacity and refill.

use super::decision::{Outcome, ParamError};
use super::gcra::Schedule;
use super::schedule::Ahead;

/// `RL.TOKENBUCKET key capacity refill_tokens refill_period_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    schedule: Schedule,
}

/// The stored state of a token-bucket key: when the bucket is full again,
/// and how far bookings (`MAXWAIT`) ran it beyond an empty bucket (0
/// without bookings; see `schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenBucketState {
    pub full_at_ns: u64,
    pub booked_ns: u64,
}

impl From<TokenBucketState> for Ahead {
    #[inline]
    fn from(s: TokenBucketState) -> Ahead {
        Ahead { full_at: s.full_at_ns, booked: s.booked_ns }
    }
}

impl From<Ahead> for TokenBucketState {
    #[inline]
    fn from(a: Ahead) -> TokenBucketState {
        TokenBucketState { full_at_ns: a.full_at, booked_ns: a.booked }
    }
}

impl TokenBucket {
    /// Arguments must already be in range (`capacity`, `refill_tokens` in
    /// 1..=2^32-1, `refill_period_ms` in 1..=10^12).
    pub fn new(capacity: u64, refill_tokens: u64, refill_period_ms: u64) -> Result<Self, ParamError> {
        Schedule::new(refill_period_ms, refill_tokens, capacity)
            .map(|schedule| Self { schedule })
            .ok_or(ParamError { arg: "capacity", reason: "refilling capacity takes more than 10^12 ms" })
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// A missing key is a full bucket. `now_ns`: ns since the epoch.
    /// Whether a call that consumes nothing at `now_ns` stores `state`
    /// (a repair: it reads as drained).
    pub fn repairs(&self, state: Option<TokenBucketState>, now_ns: u64) -> bool {
        self.schedule.repairs(state.map(Ahead::from), now_ns)
    }

    pub fn check(&self, state: Option<TokenBucketState>, now_ns: u64, cost: u64) -> Outcome<TokenBucketState> {
        self.schedule.check(state.map(Ahead::from), now_ns, cost).map_state()
    }

    /// The least wait (ns) after which `cost` tokens are there at `now_ns`; `None`: never.
    pub fn conforms_in(&self, state: Option<TokenBucketState>, now_ns: u64, cost: u64) -> Option<u64> {
        self.schedule.conforms_in(state.map(Ahead::from), now_ns, cost)
    }

    /// Books `cost` tokens at `now_ns`, taken `start_ns` from now ([`Schedule::book`]).
    pub fn book(
        &self,
        state: Option<TokenBucketState>,
        now_ns: u64,
        cost: u64,
        start_ns: u64,
    ) -> Outcome<TokenBucketState> {
        self.schedule.book(state.map(Ahead::from), now_ns, cost, start_ns).map_state()
    }

    /// Put `units` tokens back at `now_ns`, never above capacity
    /// ([`Schedule::refund`]; `write: None`: full).
    pub fn refund(&self, state: TokenBucketState, now_ns: u64, units: u64) -> Outcome<TokenBucketState> {
        self.schedule.refund(state.into(), now_ns, units).map_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::table::Row;
    use crate::core::time::NS_PER_US;

    fn run(b: &TokenBucket, rows: &[Row]) {
        crate::core::table::run(|s, now, cost| b.check(s, now * NS_PER_US, cost), b.schedule().burst(), rows);
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
    fn uneven_refill_is_charged_exactly_once_per_take() {
        // 3 tokens per second: a take of 3 is charged exactly 1 s; one token
        // 333_333_334 ns (its exact time rounded up once, never faster).
        let b = TokenBucket::new(3, 3, 1000).unwrap();
        run(&b, &[(0, 3, true, 0, 0, 1000), (333, 1, false, 0, 1, 667), (334, 1, true, 0, 0, 1000)]);
    }

    #[test]
    fn a_hundred_million_per_second_is_honoured() {
        // The example: 0.1.0 charged 1 µs per token (100 s).
        let b = TokenBucket::new(100_000_000, 100_000_000, 1000).unwrap();
        run(&b, &[(0, 100_000_000, true, 0, 0, 1000), (500, 0, true, 50_000_000, 0, 500)]);
    }

    #[test]
    fn an_unrepresentable_capacity_is_rejected_naming_capacity() {
        assert_eq!(TokenBucket::new(u32::MAX as u64, 1, 1_000_000_000_000).unwrap_err().arg, "capacity");
        // The bound is on the exact time: 10^12 ms exactly is accepted, 1 ns more is not.
        assert!(TokenBucket::new(1000, 1, 1_000_000_000).is_ok());
        assert!(TokenBucket::new(3, 3, 1_000_000_000_000).is_ok());
        assert!(TokenBucket::new(1001, 1, 1_000_000_000).is_err());
        assert!(TokenBucket::new(u32::MAX as u64, u32::MAX as u64, 1_000_000_000_000).is_ok());
    }

    #[test]
    fn a_booking_takes_tokens_before_they_are_there() {
        // 5 tokens, 2 a second: after emptying it, 3 tokens are booked for
        // 1.5 s from now; the next token is there 2 s from now.
        let b = TokenBucket::new(5, 2, 1000).unwrap();
        let t0 = crate::core::table::T0 * NS_PER_US;
        let empty = b.check(None, t0, 5).write.map(|w| w.state);
        let start = b.conforms_in(empty, t0, 3).unwrap();
        assert_eq!(start, 1_500_000_000);
        let o = b.book(empty, t0, 3, start);
        assert_eq!((o.decision.allowed, o.decision.wait_ms, o.decision.remaining), (true, 1500, 0));
        let booked = o.write.unwrap().state;
        assert_eq!((booked.full_at_ns - t0, booked.booked_ns), (4_000_000_000, 1_500_000_000));
        let d = b.check(Some(booked), t0, 1).decision;
        assert_eq!((d.allowed, d.retry_after_ms, d.reset_after_ms), (false, 2000, 4000));
    }
}
