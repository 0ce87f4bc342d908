//! How a variable-size state (a sliding log, a lease set) is kept: one
//! storage policy for both, written once. What a kind's state is, and the
//! few things in which the two truly differ, is its [`VarBlock`]
//! implementation (`log_value`, `lease_value`); everything else (making the
//! value, a write, growing and shrinking the block, the effect payload,
//! `RL.APPLY`, RDB, the AOF rewrite, DEBUG DIGEST-VALUE, MEMORY USAGE,
//! COPY) is here, and [`stored_by_policy!`] makes it the kind's [`Stored`].
//!
//! - Value: one block of words from the server's allocator ([`block`]),
//!   holding the kind's state ([`VarBlock::Block`]) with room for
//!   `capacity` entries (log entries, leases). MEMORY USAGE reports the
//!   block, as the server's allocator holds it.
//! - Room: the one rule, [`grown`] and [`shrunk`]. A write that needs more
//!   room than the block has grows it, before it applies, to the larger of
//!   what it needs (rounded up to a power of two) and twice the capacity,
//!   capped by the kind's [`MAX_CAPACITY`](VarBlock::MAX_CAPACITY). After a
//!   write that leaves a quarter or less of a block of more than
//!   [`SHRINK_ABOVE`] entries in use, the block shrinks to the next power of
//!   two at or above twice what it holds, never below the kind's
//!   [`MIN_CAPACITY`](VarBlock::MIN_CAPACITY). So a key's memory follows
//!   what it holds, a state that has reached its size allocates nothing per
//!   call, and a copy (O(n)) comes only after O(n) writes. The lease set
//!   adds the one kind-specific extra to a layout, its slots' id width
//!   (widened before a longer id is written, narrowed after the last id of
//!   that width has left: [`VarBlock::extra_before`],
//!   [`VarBlock::extra_after`]).
//! - A write is the kind's change, of constant size whatever the state
//!   holds: applied to the block in place, and the effect payload (its tag
//!   and its words). A replica applies it to its own state after checking
//!   that it fits.
//! - The whole state ([`VarBlock::whole`]) is what RDB and DUMP carry as
//!   unsigneds, what the AOF rewrite emits as the payload of the kind's
//!   whole tag (the server adds `PEXPIREAT`), and what DEBUG DIGEST-VALUE
//!   reads, so the block's layout never shows. A loaded or applied whole
//!   state must be one the core could have written
//!   ([`VarBlock::from_whole`] says why not).

use std::ffi::c_void;
use std::ops::Deref;
use std::os::raw::c_int;

use redis_module::raw::{RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::time::Millis;

use super::block::{self, alloc, replace, words, words_mut};
use super::ffi::{api, OpenKey};
use super::stored::{apply_change, emit_apply, Stored, MAX_PAYLOAD, UNKNOWN_VERSION};

/// A block of this many entries or fewer is never shrunk.
pub const SHRINK_ABOVE: usize = 4;

/// The capacity a block of `capacity` entries grows to before a write that
/// leaves `needed` in it, if it has not room enough: the larger of `needed`
/// (rounded up to a power of two) and twice `capacity`, at most `max` (and
/// never below `needed`: a change that fits a kind never needs more than
/// its `max`).
#[inline]
pub fn grown(needed: usize, capacity: usize, max: usize) -> Option<usize> {
    (needed > capacity).then(|| needed.next_power_of_two().max(2 * capacity).min(max).max(needed))
}

/// The capacity a block of `capacity` entries holding `len` shrinks to
/// after a write, if it shrinks: when a quarter or less of it is used (and
/// it has more than [`SHRINK_ABOVE`] entries), the next power of two at or
/// above `2 * len`, never below `min`.
#[inline]
pub fn shrunk(len: usize, capacity: usize, min: usize) -> Option<usize> {
    if len * 4 > capacity || capacity <= SHRINK_ABOVE {
        return None;
    }
    Some((2 * len).next_power_of_two().max(min)).filter(|&c| c < capacity)
}

/// A write to a variable-size state kept in one block: what a kind's
/// storage differs in. Implemented by the kind's change (its
/// [`Algorithm::Write`](crate::core::Algorithm::Write)); the rest of its
/// [`Stored`] is this file's, through [`stored_by_policy!`].
pub trait VarBlock: Stored {
    /// The state in a block's words (`&[u64]` to read it, `&mut [u64]` to
    /// change it too).
    type Block<W: Deref<Target = [u64]>>;
    /// What a block's layout has beyond its capacity: the lease set's id
    /// words per slot; nothing for the log.
    type Extra: Copy + PartialEq;
    /// The change as words (an effect payload's body).
    type Words: AsRef<[u64]>;

    /// The tag of a change's payload.
    const CHANGE_TAG: u8;
    /// The tag of a whole state's payload (AOF rewrite).
    const WHOLE_TAG: u8;
    /// The words of an encoded change.
    const CHANGE_WORDS: usize;
    /// The fewest entries a block has room for (a new key's or a shrunk one's).
    const MIN_CAPACITY: usize;
    /// The most entries a block has room for.
    const MAX_CAPACITY: usize;
    /// Whether DEBUG DIGEST-VALUE reads the whole state as one buffer of
    /// its words (one call), or word by word.
    const DIGEST_ONE_BUFFER: bool;

    /// The state already in `words`, if its layout fits them.
    fn open<W: Deref<Target = [u64]>>(words: W) -> Option<Self::Block<W>>;
    /// The entries the state holds.
    fn len<W: Deref<Target = [u64]>>(b: &Self::Block<W>) -> usize;
    /// The entries the block has room for.
    fn capacity<W: Deref<Target = [u64]>>(b: &Self::Block<W>) -> usize;
    /// The block's layout beyond its capacity.
    fn extra<W: Deref<Target = [u64]>>(b: &Self::Block<W>) -> Self::Extra;
    /// The words of a block of `capacity` entries and `extra`.
    fn words_for(capacity: usize, extra: Self::Extra) -> usize;

    /// Whether the key is deleted instead (the state holds nothing after it).
    fn delete(&self) -> bool;
    /// The key's absolute expiry after the change (ms since the epoch).
    fn expire_at_ms(&self) -> u64;
    /// The entries a state of `before` entries holds after the change.
    fn len_after(&self, before: usize) -> usize;
    /// Whether the change can apply to `b`.
    fn fits(&self, b: &Self::Block<&mut [u64]>) -> bool;
    /// Applies the change to `b`, which has room for it.
    fn apply_to(&self, b: &mut Self::Block<&mut [u64]>);
    /// The change as its [`CHANGE_WORDS`](Self::CHANGE_WORDS) words.
    fn to_words(&self) -> Self::Words;
    /// A change read back from its words; `None` if a word is out of range.
    fn from_words(w: &[u64]) -> Option<Self>;
    /// The node stored (or applied) the change: a hook for node-wide state
    /// (the lease set's id floor).
    #[inline]
    fn stored(&self) {}

    /// A new key's block's extra for the change.
    fn first_extra(&self) -> Self::Extra;
    /// An empty state for the change in `words` (of
    /// `words_for(capacity, extra)` words); `None` if they do not fit.
    fn init<'b>(words: &'b mut [u64], extra: Self::Extra, w: &Self) -> Option<Self::Block<&'b mut [u64]>>;
    /// The extra a copy of `b` takes if it is copied before `w` applies,
    /// and whether it must be (the block's own cannot hold `w`).
    fn extra_before(b: &Self::Block<&mut [u64]>, w: &Self) -> (Self::Extra, bool);
    /// The extra `b` must be copied to after a change, if not its own.
    fn extra_after(b: &Self::Block<&mut [u64]>) -> Option<Self::Extra>;
    /// Copies `b` into `dst` (of `words_for(capacity, extra)` words, with
    /// room for it); false if it does not fit.
    fn copy_into(b: &Self::Block<&mut [u64]>, dst: &mut [u64], extra: Self::Extra) -> bool;

    /// The whole state as words, in order (RDB, the AOF rewrite, DIGEST).
    fn whole<W: Deref<Target = [u64]>>(b: &Self::Block<W>) -> impl Iterator<Item = u64> + '_;
    /// A new block from the whole state's words (`next` yields them in
    /// order, `None` past the end or on a read error), if they describe a
    /// state the core could have written; else why not. Ownership passes to
    /// the caller. Refuses a count above the kind's limit before allocating.
    fn from_whole(next: impl FnMut() -> Option<u64>) -> Result<*mut c_void, &'static str>;
}

/// The state a block holds (blocks are only ever made holding a valid one).
///
/// # Safety
/// As for [`block::words`]: a live value of `K`'s type.
pub unsafe fn read<'v, K: VarBlock>(value: *mut c_void) -> K::Block<&'v [u64]> {
    // SAFETY: per the contract.
    K::open(unsafe { words(value) }).unwrap_or_else(|| unreachable!("a {} block holds a valid {0}", K::STATE))
}

/// A new block of `capacity` entries and `extra` holding `b`'s state.
fn copy_into_new<K: VarBlock>(b: &K::Block<&mut [u64]>, capacity: usize, extra: K::Extra) -> Option<*mut c_void> {
    let block = alloc(K::words_for(capacity, extra));
    // SAFETY: just made, owned here.
    if K::copy_into(b, unsafe { words_mut(block) }, extra) {
        Some(block)
    } else {
        // SAFETY: just made, never handed to the server.
        unsafe { block::free(block) };
        None
    }
}

/// The change in a change payload (the tag and its words), if well formed.
pub fn decode<K: VarBlock>(payload: &[u8]) -> Option<K> {
    const MOST: usize = MAX_PAYLOAD / 8;
    let body = payload.strip_prefix(&[K::CHANGE_TAG])?;
    if body.len() != 8 * K::CHANGE_WORDS || K::CHANGE_WORDS > MOST {
        return None;
    }
    let mut words = [0u64; MOST];
    for (w, bytes) in words.iter_mut().zip(body.chunks_exact(8)) {
        *w = u64::from_le_bytes(bytes.try_into().ok()?);
    }
    K::from_words(&words[..K::CHANGE_WORDS]).filter(|c| !c.delete())
}

#[inline]
pub fn owns_tag<K: VarBlock>(tag: u8) -> bool {
    tag == K::CHANGE_TAG || tag == K::WHOLE_TAG
}

/// [`Stored::create`].
pub fn create<K: VarBlock>(w: &K) -> Option<*mut c_void> {
    if w.delete() {
        return None;
    }
    let capacity = w.len_after(0).max(K::MIN_CAPACITY).next_power_of_two();
    let extra = w.first_extra();
    let block = alloc(K::words_for(capacity, extra));
    // SAFETY: just made, owned here.
    let made = K::init(unsafe { words_mut(block) }, extra, w).filter(|b| w.fits(b)).map(|mut b| w.apply_to(&mut b));
    if made.is_none() {
        // SAFETY: just made, never handed to the server.
        unsafe { block::free(block) };
        return None;
    }
    w.stored();
    Some(block)
}

/// [`Stored::update`]: the change applies in place, or to a bigger copy
/// (grown, or of another extra) made before it; after it applies in place,
/// a block a quarter used or less (or of an extra no entry needs) is
/// copied to a smaller one. (Refused, the key keeps the bigger block,
/// changed.)
///
/// # Safety
/// As for [`Stored::update`].
#[inline]
pub unsafe fn update<K: VarBlock>(
    key: &OpenKey<'_>,
    ty: *mut RedisModuleType,
    value: *mut c_void,
    w: &K,
) -> Option<*mut c_void> {
    // SAFETY: per the contract; the key is open for writing, and nothing
    // else reads the block meanwhile.
    let mut b = K::open(unsafe { words_mut(value) })?;
    if w.delete() || !w.fits(&b) {
        return None;
    }
    w.stored();
    let capacity = K::capacity(&b);
    let (extra, reshape) = K::extra_before(&b, w);
    let bigger = grown(w.len_after(K::len(&b)), capacity, K::MAX_CAPACITY);
    if bigger.is_some() || reshape {
        let copy = copy_into_new::<K>(&b, bigger.unwrap_or(capacity), extra)?;
        // SAFETY: just made, owned here.
        let mut grown = K::open(unsafe { words_mut(copy) })?;
        w.apply_to(&mut grown);
        // SAFETY: the key holds `value` as `ty` (the contract), whose values
        // are blocks; `copy` was just made.
        return unsafe { replace(key, ty, value, copy) };
    }
    w.apply_to(&mut b);
    let smaller = shrunk(K::len(&b), capacity, K::MIN_CAPACITY);
    let extra = K::extra_after(&b);
    if smaller.is_none() && extra.is_none() {
        return Some(value);
    }
    let extra = extra.unwrap_or_else(|| K::extra(&b));
    let Some(copy) = copy_into_new::<K>(&b, smaller.unwrap_or(capacity), extra) else { return Some(value) };
    // SAFETY: the key holds `value` as `ty` (the contract), whose values are
    // blocks; `copy` was just made. Refused, the key keeps `value`.
    Some(unsafe { replace(key, ty, value, copy) }.unwrap_or(value))
}

/// [`Stored::encode`]: the change's tag and its words.
pub fn encode<'b, K: VarBlock>(w: &K, expire_at: Millis, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
    debug_assert_eq!(expire_at.0, w.expire_at_ms());
    buf[0] = K::CHANGE_TAG;
    let words = w.to_words();
    let words = words.as_ref();
    for (i, word) in words.iter().enumerate() {
        buf[1 + 8 * i..9 + 8 * i].copy_from_slice(&word.to_le_bytes());
    }
    &buf[..1 + 8 * words.len()]
}

/// [`Stored::apply`]: a change applies to the state the key holds (or to
/// none); a whole state replaces whatever the key held, as RESTORE would.
///
/// # Safety
/// As for [`Stored::apply`].
pub unsafe fn apply<K: VarBlock>(key: &OpenKey<'_>, ty: *mut RedisModuleType, payload: &[u8], now: Millis) -> bool {
    if let Some(rest) = payload.strip_prefix(&[K::WHOLE_TAG]) {
        if rest.len() % 8 != 0 {
            return false;
        }
        let mut words = rest.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        let Ok(block) = K::from_whole(|| words.next()) else { return false };
        if words.next().is_some() {
            // SAFETY: just made, never handed to the server.
            unsafe { block::free(block) };
            return false;
        }
        // SAFETY: `ty` is this kind's type (the contract), whose values are
        // blocks; `block` was just made.
        return unsafe { block::set_whole(key, ty, block) };
    }
    let Some(change) = decode::<K>(payload) else { return false };
    // SAFETY: per the contract.
    unsafe { apply_change(key, ty, &change, Millis(change.expire_at_ms()), now) }
}

/// [`Stored::rdb_load`]: encoding version 1, the whole state as unsigneds.
///
/// # Safety
/// As for [`Stored::rdb_load`].
pub unsafe fn rdb_load<K: VarBlock>(rdb: *mut RedisModuleIO, encver: c_int) -> Result<*mut c_void, &'static str> {
    if encver != 1 {
        return Err(UNKNOWN_VERSION);
    }
    K::from_whole(|| {
        // SAFETY: `rdb` is the running rdb_load's IO (the contract).
        let w = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
        // SAFETY: `rdb` is the running rdb_load's IO (the contract).
        (unsafe { api!(RedisModule_IsIOError(rdb)) } == 0).then_some(w)
    })
}

/// [`Stored::rdb_save`].
///
/// # Safety
/// As for [`Stored::rdb_save`].
pub unsafe fn rdb_save<K: VarBlock>(rdb: *mut RedisModuleIO, value: *mut c_void) {
    // SAFETY: per the contract.
    let b = unsafe { read::<K>(value) };
    for w in K::whole(&b) {
        // SAFETY: `rdb` is the running rdb_save's IO (the contract).
        unsafe { api!(RedisModule_SaveUnsigned(rdb, w)) };
    }
}

/// [`Stored::aof_rewrite`]: `RL.APPLY key <whole tag, words>`.
///
/// # Safety
/// As for [`Stored::aof_rewrite`].
pub unsafe fn aof_rewrite<K: VarBlock>(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
    // SAFETY: per the contract.
    let b = unsafe { read::<K>(value) };
    let mut payload = Vec::with_capacity(1 + 8 * (3 + 2 * K::len(&b)));
    payload.push(K::WHOLE_TAG);
    for w in K::whole(&b) {
        payload.extend_from_slice(&w.to_le_bytes());
    }
    // SAFETY: `aof` and `key` are the running aof_rewrite's (the contract).
    unsafe { emit_apply(aof, key, &payload) };
}

/// [`Stored::digest`]: the whole state's words, in order, as one buffer
/// (one digest call, not one per word: 700,000 of them took 0.5 to 0.9 s
/// for a set of 100,000 leases) or word by word, as the kind has it.
///
/// # Safety
/// As for [`Stored::digest`].
pub unsafe fn digest<K: VarBlock>(md: *mut RedisModuleDigest, value: *mut c_void) {
    // SAFETY: per the contract.
    let b = unsafe { read::<K>(value) };
    if K::DIGEST_ONE_BUFFER {
        let mut bytes = Vec::new();
        for w in K::whole(&b) {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `md` is the running digest callback's (the contract).
        unsafe { api!(RedisModule_DigestAddStringBuffer(md, bytes.as_ptr().cast(), bytes.len())) };
    } else {
        for w in K::whole(&b) {
            // SAFETY: `md` is the running digest callback's (the contract).
            unsafe { api!(RedisModule_DigestAddLongLong(md, w as i64)) };
        }
    }
    // SAFETY: `md` is the running digest callback's (the contract).
    unsafe { api!(RedisModule_DigestEndSequence(md)) };
}

/// `impl Stored for $write` by the shared policy (this file), for a write
/// that is a [`VarBlock`]; the kind's own items (its `STATE`, and any of
/// `admits`, `event_of` and the aux field) follow the type.
macro_rules! stored_by_policy {
    ($write:ty; $($own:tt)*) => {
        impl $crate::module::stored::Stored for $write {
            #[inline]
            fn owns_tag(tag: u8) -> bool {
                $crate::module::var_value::owns_tag::<Self>(tag)
            }

            fn create(w: &Self) -> Option<*mut ::std::ffi::c_void> {
                $crate::module::var_value::create(w)
            }

            #[inline]
            unsafe fn update(
                key: &$crate::module::ffi::OpenKey<'_>,
                ty: *mut ::redis_module::raw::RedisModuleType,
                value: *mut ::std::ffi::c_void,
                w: &Self,
            ) -> Option<*mut ::std::ffi::c_void> {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::update(key, ty, value, w) }
            }

            #[inline]
            fn encode<'b>(
                w: &Self,
                expire_at: $crate::core::time::Millis,
                buf: &'b mut [u8; $crate::module::stored::MAX_PAYLOAD],
            ) -> &'b [u8] {
                $crate::module::var_value::encode(w, expire_at, buf)
            }

            unsafe fn apply(
                key: &$crate::module::ffi::OpenKey<'_>,
                ty: *mut ::redis_module::raw::RedisModuleType,
                payload: &[u8],
                now: $crate::core::time::Millis,
            ) -> bool {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::apply::<Self>(key, ty, payload, now) }
            }

            unsafe fn rdb_load(
                rdb: *mut ::redis_module::raw::RedisModuleIO,
                encver: ::std::os::raw::c_int,
            ) -> Result<*mut ::std::ffi::c_void, &'static str> {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::rdb_load::<Self>(rdb, encver) }
            }

            unsafe fn rdb_save(rdb: *mut ::redis_module::raw::RedisModuleIO, value: *mut ::std::ffi::c_void) {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::rdb_save::<Self>(rdb, value) }
            }

            unsafe fn aof_rewrite(
                aof: *mut ::redis_module::raw::RedisModuleIO,
                key: *mut ::redis_module::raw::RedisModuleString,
                value: *mut ::std::ffi::c_void,
            ) {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::aof_rewrite::<Self>(aof, key, value) }
            }

            unsafe fn digest(md: *mut ::redis_module::raw::RedisModuleDigest, value: *mut ::std::ffi::c_void) {
                // SAFETY: the same contract.
                unsafe { $crate::module::var_value::digest::<Self>(md, value) }
            }

            unsafe fn mem_usage(value: *const ::std::ffi::c_void) -> usize {
                // SAFETY: the same contract: a live block.
                unsafe { $crate::module::block::bytes(value) }
            }

            unsafe fn copy(value: *const ::std::ffi::c_void) -> *mut ::std::ffi::c_void {
                // SAFETY: the same contract: a live block.
                unsafe { $crate::module::block::copy(value) }
            }

            unsafe fn free(value: *mut ::std::ffi::c_void) {
                // SAFETY: the same contract: a block no key holds, not used again.
                unsafe { $crate::module::block::free(value) };
            }

            $($own)*
        }
    };
}
pub(crate) use stored_by_policy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_grows_to_twice_its_capacity_or_what_it_needs() {
        assert_eq!(grown(4, 4, 10_000), None, "room enough");
        assert_eq!(grown(5, 4, 10_000), Some(8));
        assert_eq!(grown(9, 4, 10_000), Some(16), "what it needs, a power of two");
        assert_eq!(grown(8193, 8192, 10_000), Some(10_000), "capped");
        assert_eq!(grown(6, 5, 10_000), Some(10), "a loaded block's capacity doubles");
        assert_eq!(grown(1, 0, 10), Some(1));
    }

    #[test]
    fn a_block_shrinks_when_a_quarter_of_it_or_less_is_used() {
        assert_eq!(shrunk(3, 8, 4), None, "more than a quarter");
        assert_eq!(shrunk(2, 8, 4), Some(4));
        assert_eq!(shrunk(2, 8, 1), Some(4));
        assert_eq!(shrunk(1, 8, 1), Some(2));
        assert_eq!(shrunk(1, 8, 4), Some(4), "never below the kind's minimum");
        assert_eq!(shrunk(1, 4, 1), None, "a block of four or fewer entries keeps its size");
        assert_eq!(shrunk(2500, 10_000, 4), Some(8192));
        assert_eq!(shrunk(300, 1024, 4), None);
        assert_eq!(shrunk(256, 1024, 4), Some(512));
        assert_eq!(shrunk(1, 5, 4), Some(4), "a loaded block");
        for capacity in 0..2000 {
            for len in 0..=capacity {
                if let Some(c) = shrunk(len, capacity, 4) {
                    assert!(c < capacity && c >= 2 * len && c >= 4, "{len} in {capacity} shrinks to {c}");
                }
            }
        }
    }

    /// The shared rule grows a lease block as the core's own
    /// [`LeaseBlock::needs_room`] says (what the core's tests and benches
    /// model the module with).
    #[test]
    fn the_rule_grows_a_lease_block_as_the_core_says() {
        use crate::core::lease::{Lease, LeaseChange, LeaseChangeKind, LeaseHeader, LeaseId, LeaseOp, LeaseRead};
        use crate::core::lease_block::MAX_LEASE_CAPACITY;
        use crate::core::LeaseBlock;
        let header = LeaseHeader { next_seq: 0, last_ns: 1_000_000 };
        let add = |i: usize| LeaseChange {
            kind: LeaseChangeKind::Acquire,
            shift_ns: None,
            drop: 0,
            op: LeaseOp::Add(Lease {
                id: LeaseId::new(format!("{i:04}").as_bytes()).expect("an id"),
                deadline_ns: 2_000_000 + i as u64,
                lease_ms: 1,
                units: 1,
            }),
            header,
            expire_at_ms: 3,
            delete: false,
        };
        for cap in (0..=8).map(|s| 1usize << s) {
            let mut words = vec![0u64; LeaseBlock::words_for(cap, 1)];
            let mut b = LeaseBlock::init(&mut words, 1, header, 1).expect("a block");
            for i in 0..=cap {
                let c = add(i);
                let core = b.needs_room(&c).map(|(capacity, _)| capacity);
                let rule = grown(c.len_after(b.len()), b.capacity(), MAX_LEASE_CAPACITY);
                assert_eq!(rule, core, "{} leases in {cap}", b.len());
                if core.is_some() {
                    assert_eq!(i, cap, "grown only when full");
                    break;
                }
                c.apply(&mut b);
            }
        }
    }
}
