//! redis-rl: native, atomic rate limiters for Redis.
//!
//! - [`core`]: the pure algorithms (GCRA, token bucket, sliding window
//!   counter). No Redis, no clock, no floating point, no allocation.
//! - `module`: the thin Redis layer (commands, data types, propagation).

#[cfg(feature = "test-hooks")]
pub mod alloc_count;
pub mod core;
mod module;
