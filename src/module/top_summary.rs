//! Who is being limited, per node: the heavy hitters behind `RL.TOP`.
//!
//! Two Space-Saving summaries (`heavy_hitters`) of `top-capacity`
//! keys each, allocated once at load with RedisModule_Alloc (so
//! `used_memory` sees them) and never again:
//!
//! - denied: every denied call that could have written (not PEEK, RL.PEEK
//!   or COST 0) adds 1 to its key, exactly (an `RL.ALL` adds 1 to each key
//!   that denied). Denials are the rarer path and the one operators ask
//!   about, so they are counted one by one, in a summary ranked by
//!   Stream-Summary buckets: adding 1 to a key, or evicting a smallest for
//!   a new one, is O(1).
//! - consumed: allowed calls add their cost, sampled so that an allowed
//!   decision stays within a few percent of its cost without tracking. A
//!   call of cost `c` is taken with probability `min(1, c / K)` (`K` is the
//!   module argument `top-sample`) and then adds `max(c, K)`: the expected
//!   sum of a key is its true sum, and its variance at most `(K - 1)` times
//!   it. `K = 1` counts every call exactly. Its weights vary, so its
//!   summary is ranked by a heap.
//!
//! The summaries live behind one mutex: commands run on the server's main
//! thread, so it is never contended; it only makes the sharing sound, for
//! about 17 instructions a denial (lock and unlock, measured with `make
//! profile`), well under 1 % of one.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::core::Decision;
use crate::heavy_hitters::{Buckets, Heap, Hitter, Memory, SpaceSaving};

use super::ffi::api;

/// The default `top-capacity`: keys held per summary.
pub const DEFAULT_CAPACITY: usize = 1024;
/// The default `top-sample`: units per sample of consumption.
pub const DEFAULT_SAMPLE: u64 = 16;
/// The largest `top-sample`.
pub const MAX_SAMPLE: u64 = 1 << 20;

/// RedisModule_Alloc / RedisModule_Free.
pub struct ServerMemory;

impl Memory for ServerMemory {
    fn alloc(bytes: usize) -> NonNull<u8> {
        // SAFETY: any size (the server aborts on OOM, never returns NULL).
        let p = unsafe { api!(RedisModule_Alloc(bytes.max(8))) }.cast::<u8>();
        // RedisModule_Alloc aborts on OOM and never returns NULL.
        NonNull::new(p).unwrap_or_else(|| unreachable!("RedisModule_Alloc returned NULL"))
    }
    unsafe fn free(p: NonNull<u8>, _bytes: usize) {
        // SAFETY: allocated by `alloc` above (the contract).
        unsafe { api!(RedisModule_Free(p.as_ptr().cast())) };
    }
}

/// See the module's docs for why each ranking.
struct Summaries {
    denied: SpaceSaving<ServerMemory, Buckets<ServerMemory>>,
    consumed: SpaceSaving<ServerMemory, Heap<ServerMemory>>,
}

static TOP: Mutex<Option<Summaries>> = Mutex::new(None);
/// Whether tracking is on (`top-capacity` above 0): read on every decision.
static ON: AtomicBool = AtomicBool::new(false);
/// `top-sample`.
static SAMPLE: AtomicU64 = AtomicU64::new(DEFAULT_SAMPLE);
/// The sampler's state (xorshift64), seeded at load.
static RNG: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);

fn summaries() -> MutexGuard<'static, Option<Summaries>> {
    // A panic while holding it leaves at worst a summary with a wrong
    // count, never an unsafe one: keep using it.
    TOP.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets tracking up at load: `capacity` keys per summary (0: off),
/// consumption sampled every `sample` units, hashes keyed by `seed`.
pub fn configure(capacity: usize, sample: u64, seed: u64) -> Result<(), String> {
    let made = if capacity == 0 {
        None
    } else {
        let denied = SpaceSaving::new(capacity, seed);
        let consumed = SpaceSaving::new(capacity, seed.rotate_left(17));
        match (denied, consumed) {
            (Some(denied), Some(consumed)) => Some(Summaries { denied, consumed }),
            _ => return Err(format!("top-capacity {capacity} is out of range")),
        }
    };
    ON.store(made.is_some(), Relaxed);
    SAMPLE.store(sample.max(1), Relaxed);
    RNG.store(seed | 1, Relaxed);
    *summaries() = made;
    Ok(())
}

/// `top-capacity` (0: off).
pub fn capacity() -> usize {
    summaries().as_ref().map_or(0, |s| s.denied.capacity())
}

/// `top-sample`.
pub fn sample() -> u64 {
    SAMPLE.load(Relaxed)
}

/// Counts one decision on `key` of a call that could write (the caller
/// leaves out PEEK): a denial adds 1 to the denied summary, an allowed call
/// its cost (sampled) to the consumed one. COST 0 counts nowhere.
#[inline]
pub fn decided(key: &[u8], d: &Decision, cost: u64) {
    if !ON.load(Relaxed) || cost == 0 {
        return;
    }
    if d.allowed {
        consumed(key, cost);
    } else {
        denied(key);
    }
}

/// One more denied call on `key`.
#[inline]
pub fn denied(key: &[u8]) {
    if let Some(s) = summaries().as_mut() {
        s.denied.add(key, 1);
    }
}

/// `cost` units consumed from `key` (more than 0), sampled.
#[inline]
pub fn consumed(key: &[u8], cost: u64) {
    let k = SAMPLE.load(Relaxed);
    let weight = if cost >= k {
        cost
    } else {
        // xorshift64: the main thread is the only writer.
        let mut x = RNG.load(Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        RNG.store(x, Relaxed);
        if x % k >= cost {
            return;
        }
        k
    };
    if let Some(s) = summaries().as_mut() {
        s.consumed.add(key, weight);
    }
}

/// Which summary.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Board {
    Denied,
    Consumed,
}

/// The `n` top keys of a summary, `None` if tracking is off. A sampled
/// consumption's error also holds three standard deviations of its
/// sampling (see the README).
pub fn top(board: Board, n: usize) -> Option<Vec<Hitter>> {
    let mut hitters = {
        let guard = summaries();
        let s = guard.as_ref()?;
        match board {
            Board::Denied => s.denied.top(n),
            Board::Consumed => s.consumed.top(n),
        }
    };
    let k = sample();
    if board == Board::Consumed && k > 1 {
        for h in &mut hitters {
            h.error = h.error.saturating_add(sampling_margin(k, h.count));
        }
    }
    Some(hitters)
}

/// The sampling error of a sampled sum `count`: three standard deviations
/// (the variance of a sum whose truth is `t` is at most `(k - 1) * t`) of
/// the largest truth that is within them, `m = 3 * sqrt((k - 1) * (count +
/// m))`, rounded up. (Three standard deviations of `count` itself fall
/// short when the sample came out low: about 1% of sums of 300 unit calls
/// at `k = 16` lay outside them, against 0.05% outside this.)
pub fn sampling_margin(k: u64, count: u64) -> u64 {
    // m^2 - a m - a c = 0 with a = 9 (k - 1): m = (a + sqrt(a^2 + 4 a c)) / 2.
    let a = 9u128 * u128::from(k.saturating_sub(1));
    let v = a.saturating_mul(a).saturating_add(a.saturating_mul(4).saturating_mul(u128::from(count)));
    let root = v.isqrt();
    let root = if root * root < v { root + 1 } else { root };
    u64::try_from((a + root).div_ceil(2)).unwrap_or(u64::MAX)
}

/// Forgets both summaries' keys; false if tracking is off.
pub fn reset() -> bool {
    match summaries().as_mut() {
        Some(s) => {
            s.denied.clear();
            s.consumed.clear();
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampling_margin_is_three_standard_deviations_of_the_largest_truth_within_it() {
        assert_eq!(sampling_margin(1, 1_000_000), 0);
        // a = 9: sqrt(81 + 3600) = 60.7 -> 61, (9 + 61) / 2 = 35; and
        // 3 * sqrt(1 * 135) = 34.9 <= 35.
        assert_eq!(sampling_margin(2, 100), 35);
        assert_eq!(sampling_margin(17, 100), 212);
        assert_eq!(sampling_margin(16, 10), 145);
        for (k, c) in [(2, 100), (16, 10), (16, 300), (1 << 20, 1 << 40)] {
            let m = sampling_margin(k, c);
            let sd = |t: u64| ((k - 1) as f64 * t as f64).sqrt();
            assert!(m as f64 >= 3.0 * sd(c + m), "k {k} c {c}: {m}");
            assert!(((m - 1) as f64) < 3.0 * sd(c + m - 1), "k {k} c {c}: {m} is the least");
        }
        assert_eq!(sampling_margin(u64::MAX, u64::MAX), u64::MAX);
    }
}
