//! The pure core: rate-limiting algorithms with no Redis and no clock.
//!
//! Each algorithm is a validated parameter struct with a
//! `check(state, now_us, cost) -> Outcome` method. Time is `u64` microseconds
//! since the Unix epoch (nanoseconds for quotas), passed in by the caller; decisions are exact integer
//! arithmetic (no floating point), and nothing here allocates.

pub mod calendar;
pub mod decision;
pub mod gcra;
pub mod quota;
pub mod sliding_window;
#[cfg(test)]
mod table;
pub mod time;
pub mod token_bucket;

pub use calendar::{tzdata_release, Calendar, CalendarCache, Period, Unit, Window, Zone};
pub use decision::{Decision, Outcome, ParamError, Write};
pub use gcra::{Gcra, GcraState, Schedule};
pub use quota::{Quota, QuotaAt, QuotaState, Refund, Settle};
pub use sliding_window::{SlidingWindow, SlidingWindowState};
pub use token_bucket::{TokenBucket, TokenBucketState};
