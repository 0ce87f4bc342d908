//! The pure core: rate-limiting algorithms with no Redis and no clock.
//!
//! Each algorithm is a validated parameter struct with a
//! `check(state, now_us, cost) -> Outcome` method. Time is `u64` microseconds
//! since the Unix epoch, passed in by the caller; decisions are exact integer
//! arithmetic (no floating point), and nothing here allocates.

pub mod decision;
pub mod gcra;
pub mod log;
pub mod sliding_window;
#[cfg(test)]
mod table;
pub mod time;
pub mod token_bucket;

pub use decision::{Decision, Outcome, ParamError, Write};
pub use gcra::{Gcra, GcraState, Schedule};
pub use log::{ChangeKind, LogBuf, LogChange, LogEntry, LogHeader, LogOp, LogOutcome, LogRing, LogStore, SlidingLog};
pub use sliding_window::{SlidingWindow, SlidingWindowState};
pub use token_bucket::{TokenBucket, TokenBucketState};
