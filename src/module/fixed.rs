//! How a fixed-size state is kept: GCRA, the token bucket, the sliding
//! window and quotas, each a few words. [`Words`] says what the words are;
//! every such state is [`Stored`] the same way, below.
//!
//! A value is the algorithm's fixed-size state. States of one word (GCRA and
//! the token bucket: a time in ns, while nothing is booked on them) live in
//! the value pointer itself, so such a key costs no allocation of its own;
//! the server never dereferences a module value, it only hands it back to
//! the data-type callbacks. Larger states (the sliding window, quotas, and
//! a GCRA or token bucket with bookings: `MAXWAIT`) are allocated with the
//! server's allocator, so that `used_memory` and `maxmemory` see them.
//!
//! A state has [`Words::WORDS`] words, of which the first
//! [`Words::MIN_WORDS`] are always written; the others (a booking's reach)
//! only when one is not 0, and a missing one reads as 0. So a state without
//! bookings is written exactly as 0.2.0 wrote it, and 0.2.0 reads it.
//!
//! - RDB (encoding version 1): the state's words as RDB unsigneds, times in
//!   ns; when the optional words follow, the first word has its top bit set
//!   (no valid first word has it: 0.2.0 refuses such a value rather than
//!   misread it). Version 0 (release 0.1.0) wrote the same words with GCRA
//!   and token-bucket times in µs; it still loads, converted (see
//!   [`Words::from_v0_words`]). DUMP payloads carry the version too.
//! - Effect payload (little-endian): `tag:u8  word:u64 × (MIN_WORDS to WORDS)
//!   expire_at_ms:u64`, where `expire_at_ms == 0` means "leave the expiry
//!   alone" (AOF rewrite, where the server emits PEXPIREAT itself). The tag
//!   names the type and the unit of its times: `g` and `t` (GCRA, token
//!   bucket) carry ns; `G` and `T`, which 0.1.0 wrote (old AOF files, an
//!   0.1.0 master's stream), carry µs and are still read; `S` (sliding
//!   window, in ms) is unchanged; `Q` (quotas).
//! - DEBUG DIGEST-VALUE: the words, in order.

use std::ffi::c_void;
use std::mem::size_of;
use std::os::raw::c_int;

use redis_module::raw::{RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::time::{Millis, MAX_COUNT, MAX_PERIOD_MS};
use crate::core::{GcraState, QuotaState, SlidingWindowState, TokenBucketState};

use crate::core::schedule::MAX_BOOKING_NS;

use super::ffi::{api, OpenKey, Slot};
use super::stored::{emit_apply, Stored, MAX_PAYLOAD};
use super::stored::{ENDS_EARLY, UNKNOWN_VERSION};
use super::wire;

// One-word states live in the value pointer (see `new_value`): that needs
// a pointer of 64 bits.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("redis-rl keeps one-word states in the value pointer and needs a 64-bit target");

/// The most words any state has.
pub const MAX_WORDS: usize = 3;

/// The longest payload of a fixed-size state.
const FIXED_PAYLOAD: usize = 1 + 8 * MAX_WORDS + 8;
const _: () = assert!(FIXED_PAYLOAD <= MAX_PAYLOAD);

/// A fixed-size limiter state as it is kept in a key: its words and their
/// checks.
pub trait Words: Copy + Sized + 'static {
    /// The tag byte of its effect payload.
    const TAG: u8;
    /// The tag byte 0.1.0 wrote for it (RL.APPLY in old AOF files and
    /// replication streams): its words in the encoding of RDB version 0.
    const V0_TAG: u8;
    /// How many of the words it uses.
    const WORDS: usize;
    /// How many of them are always written; the rest only when one is not 0.
    const MIN_WORDS: usize = Self::WORDS;
    /// What words that [`from_words`](Self::from_words) refuses are wrong
    /// with (for the server log).
    const INVALID: &'static str;
    /// Whether a state of one word (its others 0) lives in the value
    /// pointer (below 2^63, see [`new_value`]) rather than in an allocation.
    const INLINE: bool;
    fn to_words(&self) -> [u64; MAX_WORDS];
    /// How many words this state writes: [`WORDS`](Self::WORDS), or
    /// [`MIN_WORDS`](Self::MIN_WORDS) when the others are all 0.
    #[inline]
    fn used_words(&self) -> usize {
        let words = self.to_words();
        if words[Self::MIN_WORDS..Self::WORDS].iter().all(|&w| w == 0) {
            Self::MIN_WORDS
        } else {
            Self::WORDS
        }
    }
    /// `None` for words no valid state has (a corrupt payload or file).
    fn from_words(words: [u64; MAX_WORDS]) -> Option<Self>;
    /// The same from the words 0.1.0 wrote (RDB encoding version 0, payload
    /// tag [`Self::V0_TAG`]).
    fn from_v0_words(words: [u64; MAX_WORDS]) -> Option<Self> {
        Self::from_words(words)
    }
}

/// `[time, booked]`: a time below 2^63 ns, and a booking's reach of at
/// most `MAXWAIT`'s longest (0.1.0 had no bookings).
fn schedule_words(w: [u64; MAX_WORDS]) -> Option<(u64, u64)> {
    (w[0] < INLINE_TAG && w[1] <= MAX_BOOKING_NS).then_some((w[0], w[1]))
}

const SCHEDULE_INVALID: &str = "a time at or past 2^63 ns, or a booking beyond 10^6 ms";

impl Words for GcraState {
    const TAG: u8 = wire::GCRA;
    const V0_TAG: u8 = wire::GCRA_V0;
    const WORDS: usize = 2;
    const MIN_WORDS: usize = 1;
    const INVALID: &'static str = SCHEDULE_INVALID;
    const INLINE: bool = true;
    #[inline]
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.tat_ns, self.booked_ns, 0]
    }
    #[inline]
    fn used_words(&self) -> usize {
        1 + (self.booked_ns != 0) as usize
    }
    #[inline]
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        schedule_words(w).map(|(tat_ns, booked_ns)| Self { tat_ns, booked_ns })
    }
    fn from_v0_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        us_to_ns(w[0]).map(|tat_ns| Self { tat_ns, booked_ns: 0 })
    }
}

impl Words for TokenBucketState {
    const TAG: u8 = wire::TOKENBUCKET;
    const V0_TAG: u8 = wire::TOKENBUCKET_V0;
    const WORDS: usize = 2;
    const MIN_WORDS: usize = 1;
    const INVALID: &'static str = SCHEDULE_INVALID;
    const INLINE: bool = true;
    #[inline]
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.full_at_ns, self.booked_ns, 0]
    }
    #[inline]
    fn used_words(&self) -> usize {
        1 + (self.booked_ns != 0) as usize
    }
    #[inline]
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        schedule_words(w).map(|(full_at_ns, booked_ns)| Self { full_at_ns, booked_ns })
    }
    fn from_v0_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        us_to_ns(w[0]).map(|full_at_ns| Self { full_at_ns, booked_ns: 0 })
    }
}

impl Words for SlidingWindowState {
    const TAG: u8 = wire::SLIDE;
    // Unchanged since 0.1.0 (times in ms).
    const V0_TAG: u8 = wire::SLIDE;
    const WORDS: usize = 3;
    const INVALID: &'static str = "a window not 1 ms to 10^12 ms";
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

impl Words for QuotaState {
    const TAG: u8 = wire::QUOTA;
    // No 0.1.0 form exists: the same tag.
    const V0_TAG: u8 = wire::QUOTA;
    const WORDS: usize = 3;
    const INVALID: &'static str = "a count not 1 to 2^32-1, or a window not 1 ms to 10^12 ms";
    const INLINE: bool = false;
    /// `[count, start_ms, end_ms]`
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.count, self.start_ms, self.end_ms]
    }
    /// A stored count is 1 to 2^32-1 (a count that would fall to 0 deletes
    /// the key), and its window is 1 ms to 10^12 ms long (a window is one
    /// calendar unit, at most a leap year and a DST hour, or a fixed period).
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        let [count, start_ms, end_ms] = w;
        let valid = (1..=MAX_COUNT).contains(&count) && end_ms > start_ms && end_ms - start_ms <= MAX_PERIOD_MS;
        valid.then_some(Self { count, start_ms, end_ms })
    }
}

/// A time in µs written by 0.1.0, in ns. 0.1.0 accepted refill times up to
/// 10^15 ms, so a time further ahead than 2^63 ns (year 2262) could be
/// stored: it becomes the largest valid time, which reads as drained and is
/// repaired to one refill from now on the next call (as a clock jump is).
/// `None` for a word no 0.1.0 state has.
fn us_to_ns(us: u64) -> Option<u64> {
    (us < INLINE_TAG).then(|| us.saturating_mul(1000).min(INLINE_TAG - 1))
}

/// The top bit of an inline value. Every valid one-word state is below it
/// (times in ns stay below 2^63 until the year 2262), so an inline value is
/// never NULL, which the server would take for "no value" (a failed COPY or
/// RDB load), and no allocation has it (user-space addresses are below
/// 2^63), so a kind whose states may be either tells them apart by it. In
/// RDB the same bit on a first word says the optional words follow.
const INLINE_TAG: u64 = 1 << 63;

/// Whether `state` lives in the value pointer.
#[inline]
fn is_inline<S: Words>(state: &S) -> bool {
    S::INLINE && state.used_words() == 1
}

/// Whether `value`, made by [`new_value::<S>`], is an inline one.
#[inline]
fn inline_value<S: Words>(value: *const c_void) -> bool {
    S::INLINE && value.addr() as u64 & INLINE_TAG != 0
}

/// A module value holding `state`, ownership passing to the caller (then to
/// the server, through ModuleTypeSetValue / ReplaceValue).
pub fn new_value<S: Words>(state: S) -> *mut c_void {
    if is_inline(&state) {
        // A pointer that is only ever handed back to our callbacks, never
        // dereferenced by anyone: it carries the state's one word.
        let bits = state.to_words()[0] | INLINE_TAG;
        return std::ptr::without_provenance_mut(bits as usize);
    }
    // SAFETY: any size (the server aborts on OOM, never returns NULL).
    let p = unsafe { api!(RedisModule_Alloc(size_of::<S>())) }.cast::<S>();
    // SAFETY: RedisModule_Alloc returns memory of at least the requested
    // size, aligned for any type of that size (it aborts on OOM, never
    // returns NULL), and `S` is plain `Copy` data.
    unsafe { p.write(state) };
    p.cast()
}

/// # Safety
/// `value` must be a live value made by [`new_value::<S>`].
pub unsafe fn read<S: Words>(value: *mut c_void) -> S {
    if inline_value::<S>(value) {
        let mut words = [0u64; MAX_WORDS];
        words[0] = value.addr() as u64 & !INLINE_TAG;
        // Inline values are only ever made by `new_value` from a valid state.
        return S::from_words(words).unwrap_or_else(|| unreachable!("inline value below the tag"));
    }
    // SAFETY: per the contract, `value` was made by `new_value::<S>`.
    unsafe { value.cast::<S>().read() }
}

/// Replaces the state of `key`, which holds `value` of type `ty` (made by
/// [`new_value::<S>`]) and is open for writing. The value the key holds
/// now, `None` if the server refused it.
///
/// # Safety
/// As for [`read`]; `ty` is `S`'s registered type.
unsafe fn update<S: Words>(
    key: &OpenKey<'_>,
    ty: *mut RedisModuleType,
    value: *mut c_void,
    state: S,
) -> Option<*mut c_void> {
    if inline_value::<S>(value) || is_inline(&state) {
        let new = new_value(state);
        // SAFETY: a value of `ty` (the contract), just made.
        if unsafe { key.replace_value(ty, new) } {
            // SAFETY: the server handed the old value back unfreed and no
            // longer holds it (an inline one owns no memory).
            unsafe { free_value::<S>(value) };
            return Some(new);
        }
        // SAFETY: refused: the server does not hold `new`.
        unsafe { free_value::<S>(new) };
        return None;
    }
    // Both allocated: in place. SAFETY: per the contract, `value` was
    // made by `new_value::<S>` (an allocation: not inline).
    unsafe { value.cast::<S>().write(state) };
    Some(value)
}

/// Frees a value made by [`new_value::<S>`].
///
/// # Safety
/// As for [`read`]; the value is not used again.
unsafe fn free_value<S: Words>(value: *mut c_void) {
    if !inline_value::<S>(value) {
        // SAFETY: an allocated value (not inline) from new_value, freed once (the
        // contract).
        unsafe { api!(RedisModule_Free(value)) };
    }
}

/// The value's own memory, beyond the server's per-key overhead.
fn value_size<S: Words>(value: *const c_void) -> usize {
    if inline_value::<S>(value) {
        0
    } else {
        size_of::<S>()
    }
}

/// Writes the effect payload for `state` into `buf` and returns it.
pub fn encode<'b, S: Words>(state: &S, expire_at_ms: u64, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
    buf[0] = S::TAG;
    let words = state.to_words();
    let mut at = 1;
    for w in words.iter().take(state.used_words()) {
        buf[at..at + 8].copy_from_slice(&w.to_le_bytes());
        at += 8;
    }
    buf[at..at + 8].copy_from_slice(&expire_at_ms.to_le_bytes());
    &buf[..at + 8]
}

/// The state and expiry in an effect payload of `S`, if it is well formed.
pub fn decode<S: Words>(payload: &[u8]) -> Option<(S, u64)> {
    let n = match payload.len().checked_sub(9) {
        Some(bytes) if bytes % 8 == 0 && (S::MIN_WORDS..=S::WORDS).contains(&(bytes / 8)) => bytes / 8,
        _ => return None,
    };
    let from_words: fn([u64; MAX_WORDS]) -> Option<S> = match payload[0] {
        t if t == S::TAG => S::from_words,
        t if t == S::V0_TAG => S::from_v0_words,
        _ => return None,
    };
    let word = |i: usize| u64::from_le_bytes(payload[1 + 8 * i..9 + 8 * i].try_into().unwrap_or([0; 8]));
    let mut words = [0u64; MAX_WORDS];
    for (i, w) in words.iter_mut().enumerate().take(n) {
        *w = word(i);
    }
    // Only the optional words may be missing, and then they are 0; a
    // 0.1.0 payload has none.
    if payload[0] != S::TAG && n != S::MIN_WORDS {
        return None;
    }
    Some((from_words(words)?, word(n)))
}

/// Every fixed-size state is kept the same way: the value holds the state,
/// a write replaces it, and the payload carries the whole state.
impl<S: Words> Stored for S {
    #[inline]
    fn owns_tag(tag: u8) -> bool {
        tag == S::TAG || tag == S::V0_TAG
    }

    #[inline]
    fn create(w: &S) -> Option<*mut c_void> {
        Some(new_value(*w))
    }

    #[inline]
    unsafe fn update(key: &OpenKey<'_>, ty: *mut RedisModuleType, value: *mut c_void, w: &S) -> Option<*mut c_void> {
        // SAFETY: per the contract.
        unsafe { update(key, ty, value, *w) }
    }

    #[inline]
    fn encode<'b>(w: &S, expire_at: Millis, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
        encode(w, expire_at.0, buf)
    }

    /// Whatever the key held is replaced, as by SET or RESTORE; an expiry
    /// of 0 leaves the key's expiry alone.
    unsafe fn apply(key: &OpenKey<'_>, ty: *mut RedisModuleType, payload: &[u8], now: Millis) -> bool {
        let Some((state, expire_at_ms)) = decode::<S>(payload) else { return false };
        let stored = match key.slot() {
            // SAFETY: `ty` is S's type (the contract), whose values are made
            // by `new_value::<S>`.
            Slot::Module(t, value) if t == ty => unsafe { update(key, ty, value, state) }.is_some(),
            _ => {
                let new = new_value(state);
                // SAFETY: a value of `ty`, just made, owned here.
                let set = unsafe { key.set_value(ty, new) };
                if !set {
                    // SAFETY: refused: the server does not hold it.
                    unsafe { free_value::<S>(new) };
                }
                set
            }
        };
        stored && (expire_at_ms == 0 || key.set_expire_at(Millis(expire_at_ms), now))
    }

    const STATE: &'static str = "state";

    unsafe fn rdb_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<*mut c_void, &'static str> {
        let from_words = match encver {
            // 0.1.0: the same words, GCRA and token-bucket times in µs.
            0 => S::from_v0_words,
            1 => S::from_words,
            _ => return Err(UNKNOWN_VERSION),
        };
        let mut words = [0u64; MAX_WORDS];
        for w in words.iter_mut().take(S::MIN_WORDS) {
            // SAFETY: `rdb` is the running rdb_load's IO (the contract).
            *w = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
        }
        // The optional words follow when the first one's top bit says so
        // (never in version 0).
        if encver == 1 && S::MIN_WORDS < S::WORDS && words[0] & INLINE_TAG != 0 {
            words[0] &= !INLINE_TAG;
            for w in words.iter_mut().take(S::WORDS).skip(S::MIN_WORDS) {
                // SAFETY: `rdb` is the running rdb_load's IO (the contract).
                *w = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
            }
        }
        // SAFETY: `rdb` is the running rdb_load's IO (the contract).
        if unsafe { api!(RedisModule_IsIOError(rdb)) } != 0 {
            return Err(ENDS_EARLY);
        }
        from_words(words).map(new_value).ok_or(S::INVALID)
    }

    unsafe fn rdb_save(rdb: *mut RedisModuleIO, value: *mut c_void) {
        // SAFETY: per the contract.
        let state: S = unsafe { read(value) };
        let mut words = state.to_words();
        let used = state.used_words();
        if used > S::MIN_WORDS {
            // Every valid first word is below 2^63: the top bit is free.
            words[0] |= INLINE_TAG;
        }
        for &w in words.iter().take(used) {
            // SAFETY: `rdb` is the running rdb_save's IO (the contract).
            unsafe { api!(RedisModule_SaveUnsigned(rdb, w)) };
        }
    }

    unsafe fn aof_rewrite(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
        // SAFETY: per the contract.
        let state: S = unsafe { read(value) };
        let mut buf = [0u8; MAX_PAYLOAD];
        let payload = encode(&state, 0, &mut buf);
        // SAFETY: `aof` and `key` are the running aof_rewrite's (the contract).
        unsafe { emit_apply(aof, key, payload) };
    }

    unsafe fn digest(md: *mut RedisModuleDigest, value: *mut c_void) {
        // SAFETY: per the contract.
        let state: S = unsafe { read(value) };
        for &w in state.to_words().iter().take(state.used_words()) {
            // SAFETY: `md` is the running digest callback's (the contract).
            unsafe { api!(RedisModule_DigestAddLongLong(md, w as i64)) };
        }
        // SAFETY: `md` is the running digest callback's (the contract).
        unsafe { api!(RedisModule_DigestEndSequence(md)) };
    }

    unsafe fn mem_usage(value: *const c_void) -> usize {
        value_size::<S>(value)
    }

    unsafe fn copy(value: *const c_void) -> *mut c_void {
        // SAFETY: per the contract.
        new_value::<S>(unsafe { read(value.cast_mut()) })
    }

    unsafe fn free(value: *mut c_void) {
        // SAFETY: per the contract.
        unsafe { free_value::<S>(value) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        let mut buf = [0u8; MAX_PAYLOAD];
        let g = GcraState { tat_ns: 1_800_000_000_123_456_789, booked_ns: 0 };
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
    fn payloads_of_0_1_0_carry_microseconds() {
        // 0.1.0's GCRA payload: tag G, the TAT in µs, the expiry.
        let mut p = vec![b'G'];
        p.extend_from_slice(&1_800_000_000_123_456u64.to_le_bytes());
        p.extend_from_slice(&1_800_000_000_124u64.to_le_bytes());
        let want = GcraState { tat_ns: 1_800_000_000_123_456_000, booked_ns: 0 };
        assert_eq!(decode::<GcraState>(&p), Some((want, 1_800_000_000_124)));
        assert_eq!(decode::<TokenBucketState>(&p), None, "tags differ");
        p[0] = b'T';
        let want = TokenBucketState { full_at_ns: 1_800_000_000_123_456_000, booked_ns: 0 };
        assert_eq!(decode::<TokenBucketState>(&p), Some((want, 1_800_000_000_124)));
        // A new payload is never read as an old one, nor the other way round.
        let mut buf = [0u8; MAX_PAYLOAD];
        assert_eq!(encode(&want, 0, &mut buf)[0], b't');
        assert_ne!(GcraState::TAG, GcraState::V0_TAG);
        // 0.1.0 accepted refills up to 10^15 ms: a time past 2^63 ns is
        // kept as the largest valid one (read as drained, then repaired).
        p[1..9].copy_from_slice(&(u64::MAX / 1000).to_le_bytes());
        assert_eq!(decode::<TokenBucketState>(&p).map(|s| s.0.full_at_ns), Some((1 << 63) - 1));
        p[1..9].copy_from_slice(&(1u64 << 63).to_le_bytes());
        assert_eq!(decode::<TokenBucketState>(&p), None);
    }

    #[test]
    fn quota_payloads_round_trip_and_impossible_words_are_refused() {
        let mut buf = [0u8; MAX_PAYLOAD];
        let q = QuotaState { count: 7, start_ms: 1_800_000_000_000, end_ms: 1_800_086_400_000 };
        let p = encode(&q, q.end_ms, &mut buf).to_vec();
        assert_eq!((p.len(), p[0]), (33, b'Q'));
        assert_eq!(decode::<QuotaState>(&p), Some((q, q.end_ms)));
        assert_eq!(decode::<SlidingWindowState>(&p), None, "tags differ");
        for bad in [
            QuotaState { count: 0, ..q },
            QuotaState { count: MAX_COUNT + 1, ..q },
            QuotaState { end_ms: q.start_ms, ..q },
            QuotaState { start_ms: q.end_ms + 1, ..q },
            QuotaState { start_ms: 0, end_ms: MAX_PERIOD_MS + 1, ..q },
        ] {
            assert_eq!(decode::<QuotaState>(encode(&bad, 0, &mut buf)), None, "{bad:?}");
        }
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
