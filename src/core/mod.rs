//! The pure core: rate-limiting algorithms with no Redis and no clock.
//!
//! Each algorithm is a validated parameter struct with a
//! `check(state, now_us, cost) -> Outcome` method, and implements
//! [`Algorithm`], the one trait the Redis layer uses. Time is `u64` microseconds
//! since the Unix epoch, passed in by the caller; decisions are exact integer
//! arithmetic (no floating point), and nothing here allocates.

pub mod algorithm;
pub mod decision;
pub mod gcra;
pub mod heavy_hitters;
pub mod schedule;
pub mod sliding_window;
#[cfg(test)]
mod table;
pub mod time;
pub mod token_bucket;

pub use algorithm::{Algorithm, Change, Verdict};
pub use decision::{Decision, Outcome, ParamError, Write};
pub use gcra::{Gcra, GcraState};
pub use schedule::Schedule;
pub use sliding_window::{SlidingWindow, SlidingWindowState};
pub use token_bucket::{TokenBucket, TokenBucketState};
