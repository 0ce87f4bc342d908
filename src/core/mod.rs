//! The pure core: rate-limiting algorithms with no Redis and no clock.
//!
//! Each algorithm is a validated parameter struct with a
//! `check(state, now, cost) -> Outcome` method, and implements
//! [`Algorithm`], the one trait the Redis layer uses. Time is `u64`
//! nanoseconds since the Unix epoch (the sliding window works in
//! microseconds inside), passed in by the caller; decisions are exact integer
//! arithmetic (no floating point), and nothing here allocates.
//!
//! Quotas (`quota`, with their calendar windows in real time zones in
//! `calendar`) are `RL.QUOTA`'s core; the exact sliding log (`log`) is
//! `RL.LOG`'s and the concurrency lease set (`lease`) `RL.ACQUIRE`'s: two
//! variable-size states, read in place and changed by constant-size changes.

pub mod algorithm;
pub mod calendar;
pub mod decision;
pub mod gcra;
pub mod lease;
pub mod lease_block;
pub mod lease_vec;
pub mod log;
pub mod log_ring;
pub mod quota;
pub mod schedule;
pub mod sliding_window;
#[cfg(test)]
mod table;
pub mod time;
pub mod token_bucket;

pub use algorithm::{Algorithm, Change, Verdict};
pub use calendar::{tzdata_release, CacheSlot, Calendar, CalendarCache, Period, Unit, Window, Zone};
pub use decision::{combined_retry, Decision, Outcome, ParamError, Write};
pub use gcra::{Gcra, GcraState};
pub use lease::{
    AcquireOutcome, Lease, LeaseBlock, LeaseChange, LeaseChangeKind, LeaseHeader, LeaseId, LeaseOp, LeaseRead,
    LeaseReply, LeaseStore, LeaseVec, Leases,
};
pub use log::{
    ChangeKind, LogBuf, LogChange, LogEntry, LogHeader, LogOp, LogOutcome, LogRead, LogRing, LogStore, SlidingLog,
};
pub use quota::{Quota, QuotaAt, QuotaState, Refund, Settle};
pub use schedule::Schedule;
pub use sliding_window::{SlidingWindow, SlidingWindowState};
pub use token_bucket::{TokenBucket, TokenBucketState};
