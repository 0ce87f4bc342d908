//! How the sliding log (`RL.LOG`) is kept: a variable-size state.
//!
//! - Value: one block of words from the server's allocator,
//!   `[ring_words, ring..]`, where `ring` is the core's [`LogRing`]
//!   (`[window_ms, total, head, len, (t_ns, cost)..]`). Its capacity grows
//!   by doubling when a write needs room, and shrinks to twice what the log
//!   holds when that falls below a quarter of it, so a key's memory follows
//!   what it holds (at most `limit` entries) and a log that has reached its
//!   size allocates nothing per call. MEMORY USAGE reports the block.
//! - A write is a [`LogChange`] (the core's): entries dropped from the
//!   front, a cost trimmed on the oldest or newest entry, entries cut from
//!   the back, an entry appended, the new header and expiry. It is applied
//!   to the block in place and is the effect payload: `l` and its 11 words
//!   (89 bytes), whatever the log holds. A replica applies it to its own
//!   log after checking that it fits ([`LogChange::fits`]).
//! - The whole log, `window_ms, total, count, (t_ns, cost) × count`, is
//!   what RDB (encoding version 1) and DUMP carry as unsigneds, what the
//!   AOF rewrite emits as the payload `L` and its words (the server adds
//!   `PEXPIREAT`), and what DEBUG DIGEST-VALUE reads, oldest entry first
//!   (so the ring's layout, which differs after a reload, never shows).
//!   A count above 10,000 is refused before anything is allocated, and a
//!   loaded log must be one the core could have written
//!   ([`SlidingLog::valid`]); a refused one is named in the server log, with
//!   why ([`SlidingLog::fault`]).

use std::ffi::c_void;
use std::os::raw::c_int;

use redis_module::raw::{RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::log::{LOG_CHANGE_WORDS, MAX_LOG_LIMIT};
use crate::core::{LogBuf, LogChange, LogEntry, LogHeader, LogRead, LogRing, LogStore, SlidingLog};

use crate::core::time::Millis;

use super::block::{self, replace, words, words_mut};
use super::ffi::{api, OpenKey};
use super::stored::{apply_change, emit_apply, payload_words, Stored, MAX_PAYLOAD};
use super::stored::{ENDS_EARLY, UNKNOWN_VERSION};

/// The tag of a change's payload.
const CHANGE_TAG: u8 = super::wire::LOG_CHANGE;
/// The tag of a whole log's payload (AOF rewrite).
const WHOLE_TAG: u8 = super::wire::LOG_WHOLE;
/// The fewest entries a block has room for.
const MIN_CAPACITY: usize = 4;
const _: () = assert!(8 * LOG_CHANGE_WORDS < MAX_PAYLOAD);

/// A new block with room for `capacity` entries (its ring to be made by
/// `LogRing::init` or `grow_into`).
fn alloc(capacity: usize) -> *mut c_void {
    block::alloc(LogRing::words_for(capacity))
}

/// The log a block holds (blocks are only ever made holding a valid ring).
///
/// # Safety
/// As for [`block::words`].
pub unsafe fn read<'v>(value: *mut c_void) -> LogRing<&'v [u64]> {
    // SAFETY: per the contract.
    LogRing::open(unsafe { words(value) }).unwrap_or_else(|| unreachable!("a log block holds a ring"))
}

/// A new block holding `log`'s entries, with room for `capacity` (at least
/// `log.len()`) entries.
fn copy_into_new(log: &impl LogRead, capacity: usize) -> *mut c_void {
    let block = alloc(capacity.max(MIN_CAPACITY));
    // SAFETY: just made, owned here.
    let dst = unsafe { words_mut(block.cast()) };
    let h = log.header();
    let mut ring = LogRing::init(dst, h);
    for i in 0..log.len() {
        ring.push_back(log.get(i));
    }
    block.cast()
}

/// The whole log as words: `window_ms, total, count, (t_ns, cost) × count`.
fn whole(log: &impl LogRead) -> impl Iterator<Item = u64> + '_ {
    let h = log.header();
    [h.window_ms, h.total, log.len() as u64].into_iter().chain((0..log.len()).flat_map(move |i| {
        let e = log.get(i);
        [e.t_ns, e.cost]
    }))
}

/// A block from the whole log's words (`next` yields them in order), if
/// they describe a log the core could have written; else why not. Refuses
/// a count above the largest limit before allocating.
fn from_whole(mut next: impl FnMut() -> Option<u64>) -> Result<*mut c_void, &'static str> {
    let (Some(window_ms), Some(total), Some(count)) = (next(), next(), next()) else { return Err(ENDS_EARLY) };
    let count = usize::try_from(count).ok().filter(|&n| n as u64 <= MAX_LOG_LIMIT).ok_or("more than 10000 entries")?;
    let block = alloc(count.max(MIN_CAPACITY));
    // SAFETY: just made, owned here.
    let mut ring = LogRing::init(unsafe { words_mut(block.cast()) }, LogHeader { window_ms, total });
    let mut fault = None;
    for _ in 0..count {
        match (next(), next()) {
            (Some(t_ns), Some(cost)) => ring.push_back(LogEntry { t_ns, cost }),
            _ => {
                fault = Some(ENDS_EARLY);
                break;
            }
        }
    }
    match fault.or_else(|| SlidingLog::fault(&ring)) {
        None => Ok(block.cast()),
        Some(why) => {
            // SAFETY: just made, never handed to the server.
            unsafe { block::free(block.cast()) };
            Err(why)
        }
    }
}

/// The change in a change payload (`l` and 11 words), if well formed.
fn decode_change(payload: &[u8]) -> Option<LogChange> {
    LogChange::from_words(&payload_words(payload, CHANGE_TAG)?).filter(|c| !c.delete)
}

impl Stored for LogChange {
    fn owns_tag(tag: u8) -> bool {
        tag == CHANGE_TAG || tag == WHOLE_TAG
    }

    fn create(w: &LogChange) -> Option<*mut c_void> {
        if w.delete || !w.fits(0) {
            return None;
        }
        let block = alloc(w.len_after(0).max(MIN_CAPACITY));
        // SAFETY: just made, owned here.
        let mut ring = LogRing::init(unsafe { words_mut(block.cast()) }, w.header);
        w.apply(&mut ring);
        Some(block.cast())
    }

    unsafe fn update(
        key: &OpenKey<'_>,
        ty: *mut RedisModuleType,
        value: *mut c_void,
        w: &LogChange,
    ) -> Option<*mut c_void> {
        // SAFETY: per the contract; the key is open for writing, and nothing
        // else reads the block meanwhile.
        let words = unsafe { words_mut(value) };
        let mut ring = LogRing::open(words)?;
        let before = ring.len();
        if w.delete || !w.fits(before) {
            return None;
        }
        let after = w.len_after(before);
        let capacity = ring.capacity();
        if after <= capacity {
            w.apply(&mut ring);
            if after * 4 >= capacity || capacity <= MIN_CAPACITY {
                return Some(value);
            }
            // Shrink: a quarter or less of the block is used.
            // (Refused, the key keeps the bigger block, changed.)
            let smaller = copy_into_new(&ring, 2 * after);
            // SAFETY: the key holds `value` as `ty` (the contract), whose
            // values are blocks; `smaller` was just made. Refused, the key
            // keeps `value` (the smaller block is freed).
            return Some(unsafe { replace(key, ty, value, smaller) }.unwrap_or(value));
        }
        // Grow (by doubling, to at least what the change needs), then apply.
        let bigger = copy_into_new(&ring, after.max(2 * capacity).min(MAX_LOG_LIMIT as usize));
        // SAFETY: just made, owned here.
        let mut grown = LogRing::open(unsafe { words_mut(bigger) })?;
        w.apply(&mut grown);
        // SAFETY: as above; `bigger` was just made.
        unsafe { replace(key, ty, value, bigger) }
    }

    unsafe fn admits(value: *mut c_void, w: &LogChange) -> bool {
        if value.is_null() {
            let empty = LogBuf::new(LogHeader { window_ms: w.header.window_ms, total: 0 });
            return w.valid_on(&empty);
        }
        // SAFETY: per the contract.
        LogRing::open(unsafe { words(value) }).is_some_and(|log| w.valid_on(&log))
    }

    fn encode<'b>(w: &LogChange, expire_at: Millis, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
        debug_assert_eq!(expire_at.0, w.expire_at_ms);
        buf[0] = CHANGE_TAG;
        for (i, word) in w.to_words().iter().enumerate() {
            buf[1 + 8 * i..9 + 8 * i].copy_from_slice(&word.to_le_bytes());
        }
        &buf[..1 + 8 * LOG_CHANGE_WORDS]
    }

    /// A change applies to the log the key holds (or to none); a whole log
    /// replaces whatever the key held, as RESTORE would.
    unsafe fn apply(key: &OpenKey<'_>, ty: *mut RedisModuleType, payload: &[u8], now: Millis) -> bool {
        if let Some(rest) = payload.strip_prefix(&[WHOLE_TAG]) {
            let mut words = rest.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
            if rest.len() % 8 != 0 {
                return false;
            }
            let Ok(block) = from_whole(|| words.next()) else { return false };
            if words.next().is_some() {
                // SAFETY: just made, never handed to the server.
                unsafe { block::free(block) };
                return false;
            }
            // SAFETY: `ty` is this kind's type (the contract), whose values
            // are blocks; `block` was just made.
            return unsafe { block::set_whole(key, ty, block) };
        }
        let Some(change) = decode_change(payload) else { return false };
        // SAFETY: per the contract.
        unsafe { apply_change(key, ty, &change, Millis(change.expire_at_ms), now) }
    }

    const STATE: &'static str = "log";

    unsafe fn rdb_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<*mut c_void, &'static str> {
        if encver != 1 {
            return Err(UNKNOWN_VERSION);
        }
        from_whole(|| {
            // SAFETY: `rdb` is the running rdb_load's IO (the contract).
            let w = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
            // SAFETY: `rdb` is the running rdb_load's IO (the contract).
            (unsafe { api!(RedisModule_IsIOError(rdb)) } == 0).then_some(w)
        })
    }

    unsafe fn rdb_save(rdb: *mut RedisModuleIO, value: *mut c_void) {
        // SAFETY: per the contract.
        let log = unsafe { read(value) };
        for w in whole(&log) {
            // SAFETY: `rdb` is the running rdb_save's IO (the contract).
            unsafe { api!(RedisModule_SaveUnsigned(rdb, w)) };
        }
    }

    unsafe fn aof_rewrite(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
        // SAFETY: per the contract.
        let log = unsafe { read(value) };
        let mut payload = Vec::with_capacity(1 + 8 * (3 + 2 * log.len()));
        payload.push(WHOLE_TAG);
        for w in whole(&log) {
            payload.extend_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `aof` and `key` are the running aof_rewrite's (the contract).
        unsafe { emit_apply(aof, key, &payload) };
    }

    unsafe fn digest(md: *mut RedisModuleDigest, value: *mut c_void) {
        // SAFETY: per the contract.
        let log = unsafe { read(value) };
        for w in whole(&log) {
            // SAFETY: `md` is the running digest callback's (the contract).
            unsafe { api!(RedisModule_DigestAddLongLong(md, w as i64)) };
        }
        // SAFETY: `md` is the running digest callback's (the contract).
        unsafe { api!(RedisModule_DigestEndSequence(md)) };
    }

    unsafe fn mem_usage(value: *const c_void) -> usize {
        // SAFETY: per the contract.
        unsafe { block::bytes(value) }
    }

    unsafe fn copy(value: *const c_void) -> *mut c_void {
        // SAFETY: per the contract.
        unsafe { block::copy(value) }
    }

    unsafe fn free(value: *mut c_void) {
        // SAFETY: per the contract.
        unsafe { block::free(value) };
    }
}
