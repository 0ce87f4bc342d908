//! How the sliding log (`RL.LOG`) is kept: a variable-size state.
//!
//! - Value: one block of words from the server's allocator,
//!   `[ring_words, ring..]`, where `ring` is the core's [`LogRing`]
//!   (`[window_ms, total, head, len, (t_ns, cost)..]`), of at least 4 and at
//!   most 10,000 entries. It grows and shrinks by the rule every
//!   variable-size state follows (`var_value`: doubling when a write needs
//!   room, halving or more when a quarter or less is used), so a key's
//!   memory follows what it holds (at most `limit` entries) and a log that
//!   has reached its size allocates nothing per call. MEMORY USAGE reports
//!   the block.
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
//!
//! The storage policy (making the value, a write, RDB, AOF, DIGEST, MEMORY
//! USAGE, COPY) is `var_value`'s; this file says what a log is to it.

use std::ffi::c_void;

use crate::core::log::{LOG_CHANGE_WORDS, MAX_LOG_LIMIT};
use crate::core::{LogBuf, LogChange, LogEntry, LogHeader, LogRead, LogRing, LogStore, SlidingLog};

use super::block::{self, words, words_mut};
use super::stored::{ENDS_EARLY, MAX_PAYLOAD};
use super::var_value::{stored_by_policy, VarBlock};

const _: () = assert!(8 * LOG_CHANGE_WORDS < MAX_PAYLOAD);

impl VarBlock for LogChange {
    type Block<W: std::ops::Deref<Target = [u64]>> = LogRing<W>;
    type Extra = ();
    type Words = [u64; LOG_CHANGE_WORDS];

    const CHANGE_TAG: u8 = super::wire::LOG_CHANGE;
    const WHOLE_TAG: u8 = super::wire::LOG_WHOLE;
    const CHANGE_WORDS: usize = LOG_CHANGE_WORDS;
    const MIN_CAPACITY: usize = 4;
    const MAX_CAPACITY: usize = MAX_LOG_LIMIT as usize;
    const DIGEST_ONE_BUFFER: bool = false;

    #[inline]
    fn open<W: std::ops::Deref<Target = [u64]>>(words: W) -> Option<LogRing<W>> {
        LogRing::open(words)
    }
    #[inline]
    fn len<W: std::ops::Deref<Target = [u64]>>(b: &LogRing<W>) -> usize {
        b.len()
    }
    #[inline]
    fn capacity<W: std::ops::Deref<Target = [u64]>>(b: &LogRing<W>) -> usize {
        b.capacity()
    }
    #[inline]
    fn extra<W: std::ops::Deref<Target = [u64]>>(_: &LogRing<W>) {}
    #[inline]
    fn words_for(capacity: usize, _: ()) -> usize {
        LogRing::words_for(capacity)
    }

    #[inline]
    fn delete(&self) -> bool {
        self.delete
    }
    #[inline]
    fn expire_at_ms(&self) -> u64 {
        self.expire_at_ms
    }
    #[inline]
    fn len_after(&self, before: usize) -> usize {
        LogChange::len_after(self, before)
    }
    #[inline]
    fn fits(&self, b: &LogRing<&mut [u64]>) -> bool {
        LogChange::fits(self, b.len())
    }
    #[inline]
    fn apply_to(&self, b: &mut LogRing<&mut [u64]>) {
        self.apply(b);
    }
    #[inline]
    fn to_words(&self) -> [u64; LOG_CHANGE_WORDS] {
        LogChange::to_words(self)
    }
    #[inline]
    fn from_words(w: &[u64]) -> Option<Self> {
        LogChange::from_words(w.try_into().ok()?)
    }

    #[inline]
    fn first_extra(&self) {}
    #[inline]
    fn init<'b>(words: &'b mut [u64], _: (), w: &Self) -> Option<LogRing<&'b mut [u64]>> {
        Some(LogRing::init(words, w.header))
    }
    #[inline]
    fn extra_before(_: &LogRing<&mut [u64]>, _: &Self) -> ((), bool) {
        ((), false)
    }
    #[inline]
    fn extra_after(_: &LogRing<&mut [u64]>) -> Option<()> {
        None
    }
    fn copy_into(b: &LogRing<&mut [u64]>, dst: &mut [u64], _: ()) -> bool {
        b.grow_into(dst)
    }

    /// `window_ms, total, count, (t_ns, cost) × count`, oldest entry first.
    fn whole<W: std::ops::Deref<Target = [u64]>>(log: &LogRing<W>) -> impl Iterator<Item = u64> + '_ {
        let h = log.header();
        [h.window_ms, h.total, log.len() as u64].into_iter().chain((0..log.len()).flat_map(move |i| {
            let e = log.get(i);
            [e.t_ns, e.cost]
        }))
    }

    /// Refuses a count above the largest limit before allocating.
    fn from_whole(mut next: impl FnMut() -> Option<u64>) -> Result<*mut c_void, &'static str> {
        let (Some(window_ms), Some(total), Some(count)) = (next(), next(), next()) else { return Err(ENDS_EARLY) };
        let count =
            usize::try_from(count).ok().filter(|&n| n as u64 <= MAX_LOG_LIMIT).ok_or("more than 10000 entries")?;
        let block = block::alloc(LogRing::words_for(count.max(Self::MIN_CAPACITY)));
        // SAFETY: just made, owned here.
        let mut ring = LogRing::init(unsafe { words_mut(block) }, LogHeader { window_ms, total });
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
            None => Ok(block),
            Some(why) => {
                // SAFETY: just made, never handed to the server.
                unsafe { block::free(block) };
                Err(why)
            }
        }
    }
}

stored_by_policy!(LogChange;
    const STATE: &'static str = "log";

    unsafe fn admits(value: *mut c_void, w: &LogChange) -> bool {
        if value.is_null() {
            let empty = LogBuf::new(LogHeader { window_ms: w.header.window_ms, total: 0 });
            return w.valid_on(&empty);
        }
        // SAFETY: per the contract.
        LogRing::open(unsafe { words(value) }).is_some_and(|log| w.valid_on(&log))
    }
);
