//! How a state is kept: in a module value, as RDB words, and as the payload
//! of `RL.APPLY` (the effect replicas and the AOF replay). All encodings of
//! a state live here, side by side, so that they cannot drift apart.
//!
//! A value is the algorithm's fixed-size state. States of one word (GCRA and
//! the token bucket: a time in µs) live in the value pointer itself, so such
//! a key costs no allocation of its own; the server never dereferences a
//! module value, it only hands it back to the data-type callbacks. Larger
//! states (the sliding window) are allocated with the server's allocator, so
//! that `used_memory` and `maxmemory` see them.
//!
//! - RDB (encoding version 0): the state's words as RDB unsigneds (see
//!   `data_type`).
//! - Effect payload (little-endian): `tag:u8  word:u64 × WORDS
//!   expire_at_ms:u64`, where `expire_at_ms == 0` means "leave the expiry
//!   alone" (AOF rewrite, where the server emits PEXPIREAT itself).
//! - DEBUG DIGEST-VALUE: the words, in order.

use std::ffi::{c_void, CStr};
use std::mem::size_of;

use redis_module::raw::RedisModuleType;

use crate::core::time::MAX_PERIOD_MS;
use crate::core::{GcraState, SlidingWindowState, TokenBucketState};

use super::ffi::{api, OpenKey};

// One-word states live in the value pointer (see `new_value`): that needs
// a pointer of 64 bits.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("redis-rl keeps one-word states in the value pointer and needs a 64-bit target");

/// The command that carries an effect.
pub const APPLY: &CStr = c"RL.APPLY";

/// The most words any state has.
pub const MAX_WORDS: usize = 3;

/// The longest payload of any state.
pub const MAX_PAYLOAD: usize = 1 + 8 * MAX_WORDS + 8;

/// A limiter state as it is kept in a key: its words and their checks.
pub trait Stored: Copy + Sized + 'static {
    /// The tag byte of its effect payload.
    const TAG: u8;
    /// How many of the words it uses.
    const WORDS: usize;
    /// Whether the state lives in the value pointer (one word below 2^63,
    /// see [`new_value`]) rather than in an allocation.
    const INLINE: bool;
    fn to_words(&self) -> [u64; MAX_WORDS];
    /// `None` for words no valid state has (a corrupt payload or file).
    fn from_words(words: [u64; MAX_WORDS]) -> Option<Self>;
}

impl Stored for GcraState {
    const TAG: u8 = b'G';
    const WORDS: usize = 1;
    const INLINE: bool = true;
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.tat_us, 0, 0]
    }
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        (w[0] < INLINE_TAG).then_some(Self { tat_us: w[0] })
    }
}

impl Stored for TokenBucketState {
    const TAG: u8 = b'T';
    const WORDS: usize = 1;
    const INLINE: bool = true;
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.full_at_us, 0, 0]
    }
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        (w[0] < INLINE_TAG).then_some(Self { full_at_us: w[0] })
    }
}

impl Stored for SlidingWindowState {
    const TAG: u8 = b'S';
    const WORDS: usize = 3;
    const INLINE: bool = false;
    /// `[window_start_ms, window_ms, cur | prev << 32]`
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.window_start_ms, self.window_ms, u64::from(self.cur) | u64::from(self.prev) << 32]
    }
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        (1..=MAX_PERIOD_MS).contains(&w[1]).then_some(Self {
            window_start_ms: w[0],
            window_ms: w[1],
            cur: w[2] as u32,
            prev: (w[2] >> 32) as u32,
        })
    }
}

/// The top bit of an inline value. Every valid one-word state is below it
/// (times in µs stay below 2^63 for 290,000 years), so an inline value is
/// never NULL, which the server would take for "no value" (a failed COPY or
/// RDB load).
const INLINE_TAG: u64 = 1 << 63;

/// A module value holding `state`, ownership passing to the caller (then to
/// the server, through ModuleTypeSetValue / ReplaceValue).
pub fn new_value<S: Stored>(state: S) -> *mut c_void {
    if S::INLINE {
        // A pointer that is only ever handed back to our callbacks, never
        // dereferenced by anyone: it carries the state's one word.
        let bits = state.to_words()[0] | INLINE_TAG;
        return std::ptr::without_provenance_mut(bits as usize);
    }
    let p = api!(RedisModule_Alloc(size_of::<S>())).cast::<S>();
    // SAFETY: RedisModule_Alloc returns memory of at least the requested
    // size, aligned for any type of that size (it aborts on OOM, never
    // returns NULL), and `S` is plain `Copy` data.
    unsafe { p.write(state) };
    p.cast()
}

/// # Safety
/// `value` must be a live value made by [`new_value::<S>`].
pub unsafe fn read<S: Stored>(value: *mut c_void) -> S {
    if S::INLINE {
        let mut words = [0u64; MAX_WORDS];
        words[0] = value.addr() as u64 & !INLINE_TAG;
        // Inline values are only ever made by `new_value` from a valid state.
        return S::from_words(words).unwrap_or_else(|| unreachable!("inline value below the tag"));
    }
    // SAFETY: per the contract, `value` was made by `new_value::<S>`.
    unsafe { value.cast::<S>().read() }
}

/// Replaces the state of `key`, which holds `value` of type `ty` (made by
/// [`new_value::<S>`]) and is open for writing.
///
/// # Safety
/// As for [`read`].
pub unsafe fn update<S: Stored>(key: &OpenKey<'_>, ty: *mut RedisModuleType, value: *mut c_void, state: S) -> bool {
    if S::INLINE {
        // The old value is a plain number: nothing to free.
        return key.replace_value(ty, new_value(state));
    }
    // SAFETY: per the contract, `value` was made by `new_value::<S>`.
    unsafe { value.cast::<S>().write(state) };
    true
}

/// Frees a value made by [`new_value::<S>`].
///
/// # Safety
/// As for [`read`]; the value is not used again.
pub unsafe fn free_value<S: Stored>(value: *mut c_void) {
    if !S::INLINE {
        api!(RedisModule_Free(value));
    }
}

/// The value's own memory, beyond the server's per-key overhead.
pub fn value_size<S: Stored>() -> usize {
    if S::INLINE {
        0
    } else {
        size_of::<S>()
    }
}

/// Writes the effect payload for `state` into `buf` and returns it.
pub fn encode<'b, S: Stored>(state: &S, expire_at_ms: u64, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
    buf[0] = S::TAG;
    let words = state.to_words();
    let mut at = 1;
    for w in words.iter().take(S::WORDS) {
        buf[at..at + 8].copy_from_slice(&w.to_le_bytes());
        at += 8;
    }
    buf[at..at + 8].copy_from_slice(&expire_at_ms.to_le_bytes());
    &buf[..at + 8]
}

/// The state and expiry in an effect payload of `S`, if it is well formed.
pub fn decode<S: Stored>(payload: &[u8]) -> Option<(S, u64)> {
    if payload.len() != 1 + 8 * S::WORDS + 8 || payload[0] != S::TAG {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(payload[1 + 8 * i..9 + 8 * i].try_into().unwrap_or([0; 8]));
    let mut words = [0u64; MAX_WORDS];
    for (i, w) in words.iter_mut().enumerate().take(S::WORDS) {
        *w = word(i);
    }
    Some((S::from_words(words)?, word(S::WORDS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        let mut buf = [0u8; MAX_PAYLOAD];
        let g = GcraState { tat_us: 1_800_000_000_123_456 };
        let p = encode(&g, 1_800_000_000_124, &mut buf).to_vec();
        assert_eq!(p.len(), 17);
        assert_eq!(decode::<GcraState>(&p), Some((g, 1_800_000_000_124)));
        assert_eq!(decode::<TokenBucketState>(&p), None, "tags differ");

        let s = SlidingWindowState { window_start_ms: 1_800_000_000_000, window_ms: 60_000, cur: 7, prev: u32::MAX };
        let p = encode(&s, 0, &mut buf).to_vec();
        assert_eq!(p.len(), 33);
        assert_eq!(decode::<SlidingWindowState>(&p), Some((s, 0)));
    }

    #[test]
    fn malformed_payloads_are_refused() {
        assert_eq!(decode::<GcraState>(b""), None);
        assert_eq!(decode::<GcraState>(b"G1234567"), None);
        let mut p = vec![b'S'];
        p.extend_from_slice(&[0u8; 8]);
        p.extend_from_slice(&0u64.to_le_bytes()); // window_ms 0: no valid state has it
        p.extend_from_slice(&[0u8; 16]);
        assert_eq!(decode::<SlidingWindowState>(&p), None);
    }
}
