//! redis-rl: native, atomic limiters for Redis and Valkey.
//!
//! - [`core`]: the pure algorithms: rate (GCRA, token bucket, sliding
//!   window counter, exact sliding log), concurrency leases, calendar
//!   quotas. No Redis, no clock, no floating point.
//! - [`heavy_hitters`]: the Space-Saving summaries behind `RL.TOP` (who is
//!   limited): not a limiter, so not in the core.
//! - `module`: the thin Redis layer (commands, data types, propagation).

#[cfg(feature = "test-hooks")]
pub mod alloc_count;
pub mod core;
pub mod heavy_hitters;
mod module;

/// The fuzzers' entry points (`fuzz/`): the module's parsers, loaders and
/// effects on a stand-in module API. Never in the module.
#[cfg(feature = "fuzzing")]
pub use module::fuzzing;
