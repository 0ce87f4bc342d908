//! The module data types: one per algorithm, so that a key of one algorithm
//! is WRONGTYPE to the others and MEMORY USAGE is exact per algorithm.
//!
//! A value is the algorithm's fixed-size state. States of one word (GCRA and
//! the token bucket: a time in µs) live in the value pointer itself, so such
//! a key costs no allocation of its own; the server never dereferences a
//! module value, it only hands it back to these callbacks. Larger states
//! (the sliding window) are allocated with the server's allocator, so that
//! `used_memory` and `maxmemory` see them. Every callback is generic over
//! [`Stored`]; the encodings are:
//!
//! - RDB (encoding version 1): the state's words as RDB unsigneds, times in
//!   ns. Version 0 (release 0.1.0) wrote the same words with GCRA and
//!   token-bucket times in µs; it still loads, converted (see
//!   [`Stored::from_v0_words`]). DUMP payloads carry the version too.
//! - AOF rewrite: `RL.APPLY key <payload>` (see `effect`), the same command
//!   that replicates writes; the server adds `PEXPIREAT` itself.
//! - DEBUG DIGEST-VALUE: the words, in order.

use std::ffi::{c_void, CStr};
use std::mem::size_of;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw::{self, RedisModuleCtx, RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::time::MAX_PERIOD_MS;
use crate::core::{GcraState, SlidingWindowState, TokenBucketState};

use super::effect;
use super::ffi::{api, OpenKey};

/// The RDB encoding version every type writes today: 1, times in ns.
pub const ENCODING_VERSION: c_int = 1;

/// The most words any state has.
pub const MAX_WORDS: usize = 3;

/// A limiter state that lives in a key.
pub trait Stored: Copy + Sized + 'static {
    /// The 9-character type name (`TYPE key` shows it).
    const NAME: &'static CStr;
    /// The keyspace event a write of this state fires (class `d`).
    const EVENT: &'static CStr;
    /// The tag byte of its effect payload.
    const TAG: u8;
    /// The tag byte 0.1.0 wrote for it (RL.APPLY in old AOF files and
    /// replication streams): its words in the encoding of RDB version 0.
    const V0_TAG: u8;
    /// How many of the words it uses.
    const WORDS: usize;
    /// Whether the state lives in the value pointer (one word below 2^63,
    /// see [`new_value`]) rather than in an allocation.
    const INLINE: bool;
    fn to_words(&self) -> [u64; MAX_WORDS];
    /// `None` for words no valid state has (a corrupt payload or file).
    fn from_words(words: [u64; MAX_WORDS]) -> Option<Self>;
    /// The same from the words 0.1.0 wrote (RDB encoding version 0, payload
    /// tag [`Self::V0_TAG`]).
    fn from_v0_words(words: [u64; MAX_WORDS]) -> Option<Self> {
        Self::from_words(words)
    }
    /// The registered type, set once at load.
    fn slot() -> &'static AtomicPtr<RedisModuleType>;

    fn redis_type() -> *mut RedisModuleType {
        Self::slot().load(Ordering::Relaxed)
    }
}

static GCRA_TYPE: AtomicPtr<RedisModuleType> = AtomicPtr::new(std::ptr::null_mut());
static TOKEN_BUCKET_TYPE: AtomicPtr<RedisModuleType> = AtomicPtr::new(std::ptr::null_mut());
static SLIDE_TYPE: AtomicPtr<RedisModuleType> = AtomicPtr::new(std::ptr::null_mut());

impl Stored for GcraState {
    const NAME: &'static CStr = c"rl-gcra--";
    const EVENT: &'static CStr = c"rl.gcra";
    const TAG: u8 = b'g';
    const V0_TAG: u8 = b'G';
    const WORDS: usize = 1;
    const INLINE: bool = true;
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.tat_ns, 0, 0]
    }
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        (w[0] < INLINE_TAG).then_some(Self { tat_ns: w[0] })
    }
    fn from_v0_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        us_to_ns(w[0]).map(|tat_ns| Self { tat_ns })
    }
    fn slot() -> &'static AtomicPtr<RedisModuleType> {
        &GCRA_TYPE
    }
}

impl Stored for TokenBucketState {
    const NAME: &'static CStr = c"rl-tbkt--";
    const EVENT: &'static CStr = c"rl.tokenbucket";
    const TAG: u8 = b't';
    const V0_TAG: u8 = b'T';
    const WORDS: usize = 1;
    const INLINE: bool = true;
    fn to_words(&self) -> [u64; MAX_WORDS] {
        [self.full_at_ns, 0, 0]
    }
    fn from_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        (w[0] < INLINE_TAG).then_some(Self { full_at_ns: w[0] })
    }
    fn from_v0_words(w: [u64; MAX_WORDS]) -> Option<Self> {
        us_to_ns(w[0]).map(|full_at_ns| Self { full_at_ns })
    }
    fn slot() -> &'static AtomicPtr<RedisModuleType> {
        &TOKEN_BUCKET_TYPE
    }
}

impl Stored for SlidingWindowState {
    const NAME: &'static CStr = c"rl-slide-";
    const EVENT: &'static CStr = c"rl.slide";
    const TAG: u8 = b'S';
    /// Unchanged: the window's state is in ms.
    const V0_TAG: u8 = b'S';
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
    fn slot() -> &'static AtomicPtr<RedisModuleType> {
        &SLIDE_TYPE
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
/// `value` must be a live value of the type registered for `S`.
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

/// Replaces the state of `key`, which holds `value` of `S`'s type and is
/// open for writing.
///
/// # Safety
/// As for [`read`].
pub unsafe fn update<S: Stored>(key: &OpenKey, value: *mut c_void, state: S) -> bool {
    if S::INLINE {
        // The old value is a plain number: nothing to free.
        return key.replace_value(S::redis_type(), new_value(state));
    }
    // SAFETY: per the contract, `value` was made by `new_value::<S>`.
    unsafe { value.cast::<S>().write(state) };
    true
}

/// The value's own memory, beyond the server's per-key overhead.
fn value_size<S: Stored>() -> usize {
    if S::INLINE {
        0
    } else {
        size_of::<S>()
    }
}

unsafe extern "C" fn rdb_load<S: Stored>(rdb: *mut RedisModuleIO, encver: c_int) -> *mut c_void {
    let decode: fn([u64; MAX_WORDS]) -> Option<S> = match encver {
        0 => S::from_v0_words,
        1 => S::from_words,
        _ => return std::ptr::null_mut(),
    };
    let mut words = [0u64; MAX_WORDS];
    for w in words.iter_mut().take(S::WORDS) {
        *w = api!(RedisModule_LoadUnsigned(rdb));
    }
    if api!(RedisModule_IsIOError(rdb)) != 0 {
        return std::ptr::null_mut();
    }
    match decode(words) {
        Some(state) => new_value(state),
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn rdb_save<S: Stored>(rdb: *mut RedisModuleIO, value: *mut c_void) {
    // SAFETY: the server passes a value of this type.
    let state: S = unsafe { read(value) };
    for &w in state.to_words().iter().take(S::WORDS) {
        api!(RedisModule_SaveUnsigned(rdb, w));
    }
}

unsafe extern "C" fn aof_rewrite<S: Stored>(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
    // SAFETY: the server passes a value of this type.
    let state: S = unsafe { read(value) };
    let mut buf = [0u8; effect::MAX_PAYLOAD];
    let payload = effect::encode(&state, 0, &mut buf);
    api!(RedisModule_EmitAOF(aof, effect::COMMAND.as_ptr(), c"sb".as_ptr(), key, payload.as_ptr(), payload.len()));
}

unsafe extern "C" fn mem_usage<S: Stored>(_value: *const c_void) -> usize {
    value_size::<S>()
}

unsafe extern "C" fn digest<S: Stored>(md: *mut RedisModuleDigest, value: *mut c_void) {
    // SAFETY: the server passes a value of this type.
    let state: S = unsafe { read(value) };
    for &w in state.to_words().iter().take(S::WORDS) {
        api!(RedisModule_DigestAddLongLong(md, w as i64));
    }
    api!(RedisModule_DigestEndSequence(md));
}

unsafe extern "C" fn free<S: Stored>(value: *mut c_void) {
    if !S::INLINE {
        api!(RedisModule_Free(value));
    }
}

unsafe extern "C" fn copy<S: Stored>(
    _from: *mut RedisModuleString,
    _to: *mut RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: the server passes a value of this type.
    new_value::<S>(unsafe { read(value as *mut c_void) })
}

/// Registers the data type of `S`. Call once, from the module's load.
pub fn register<S: Stored>(ctx: *mut RedisModuleCtx) -> Result<(), &'static CStr> {
    let mut methods = raw::RedisModuleTypeMethods {
        // Version 4 is what Redis 7.0 knows; we use nothing newer.
        version: 4,
        rdb_load: Some(rdb_load::<S>),
        rdb_save: Some(rdb_save::<S>),
        aof_rewrite: Some(aof_rewrite::<S>),
        mem_usage: Some(mem_usage::<S>),
        digest: Some(digest::<S>),
        free: Some(free::<S>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy::<S>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    };
    let ty = api!(RedisModule_CreateDataType(ctx, S::NAME.as_ptr(), ENCODING_VERSION, &mut methods));
    if ty.is_null() {
        return Err(S::NAME);
    }
    S::slot().store(ty, Ordering::Relaxed);
    Ok(())
}
