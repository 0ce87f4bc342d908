//! `INFO rl`: what the module decided, as relaxed atomic counters.
//!
//! Counting is one uncontended `fetch_add` per event on the hot path: no
//! lock, no allocation. Redis's own `INFO commandstats` and `LATENCY` already
//! time every command, so nothing here measures time.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use redis_module::raw::RedisModuleInfoCtx;

use crate::core::Decision;

use super::ffi::{api, has};

/// The counters of one command.
pub struct Counters {
    /// Every call, whatever its outcome.
    calls: AtomicU64,
    /// Calls answered allowed = 1 (PEEK and COST 0 included).
    allowed: AtomicU64,
    /// Calls answered allowed = 0 that could succeed later.
    denied: AtomicU64,
    /// Calls answered allowed = 0 with retry -1: cost above the limit.
    never: AtomicU64,
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
        } else {
            c.denied.fetch_add(1, Relaxed);
        }
    }

    pub fn decision(&mut self, d: &Decision) {
        self.decided(d.allowed, d.retry_after_ms);
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if !self.decided {
            self.counters.errors.fetch_add(1, Relaxed);
        }
    }
}

pub static GCRA: Counters = Counters::new();
pub static TOKENBUCKET: Counters = Counters::new();
pub static SLIDE: Counters = Counters::new();
pub static ALL: Counters = Counters::new();
pub static THROTTLE: Counters = Counters::new();

/// Effects propagated (`RL.APPLY`s handed to the server for replicas and AOF).
pub static EFFECTS: AtomicU64 = AtomicU64::new(0);
/// Limiter keys created (a write to a key that did not exist).
pub static KEYS_CREATED: AtomicU64 = AtomicU64::new(0);
/// Stored states read as drained and rewritten (backward clock jump,
/// tightened limit), see the README.
pub static REPAIRS: AtomicU64 = AtomicU64::new(0);
/// Panics caught at a command entry point (each answered with an error).
pub static PANICS: AtomicU64 = AtomicU64::new(0);

pub fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Relaxed);
}

/// The `INFO rl` callback.
pub unsafe extern "C" fn info(ctx: *mut RedisModuleInfoCtx, _for_crash_report: c_int) {
    if !has!(RedisModule_InfoAddSection) || !has!(RedisModule_InfoAddFieldULongLong) {
        return;
    }
    // Field names are prefixed with the module name by the server: `rl_…`.
    let field = |name: &std::ffi::CStr, v: u64| {
        api!(RedisModule_InfoAddFieldULongLong(ctx, name.as_ptr(), v as _));
    };
    api!(RedisModule_InfoAddSection(ctx, c"".as_ptr()));
    if has!(RedisModule_InfoAddFieldCString) {
        api!(RedisModule_InfoAddFieldCString(ctx, c"version".as_ptr(), super::VERSION_TEXT.as_ptr()));
        api!(RedisModule_InfoAddFieldCString(ctx, c"clock".as_ptr(), super::clock::source().as_ptr()));
    }
    for (name, c) in
        [(c"gcra", &GCRA), (c"tokenbucket", &TOKENBUCKET), (c"slide", &SLIDE), (c"all", &ALL), (c"throttle", &THROTTLE)]
    {
        // One line per command, like `cmdstat_*`: rl_gcra:calls=..,allowed=..
        if has!(RedisModule_InfoBeginDictField) && has!(RedisModule_InfoEndDictField) {
            api!(RedisModule_InfoBeginDictField(ctx, name.as_ptr()));
            field(c"calls", c.calls.load(Relaxed));
            field(c"allowed", c.allowed.load(Relaxed));
            field(c"denied", c.denied.load(Relaxed));
            field(c"never", c.never.load(Relaxed));
            field(c"errors", c.errors.load(Relaxed));
            api!(RedisModule_InfoEndDictField(ctx));
        }
    }
    field(c"effects_propagated", EFFECTS.load(Relaxed));
    field(c"keys_created", KEYS_CREATED.load(Relaxed));
    field(c"repairs", REPAIRS.load(Relaxed));
    field(c"panics", PANICS.load(Relaxed));
}
