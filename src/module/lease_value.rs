//! How a lease set (`RL.ACQUIRE`) is kept: a variable-size state.
//!
//! - Value: one block of words from the server's allocator,
//!   `[block_words, block..]`, where `block` is the core's [`LeaseBlock`]
//!   (its slots, an AVL tree by deadline, and an id index). Its capacity is
//!   a power of two that doubles when a write needs room, and halves when a
//!   quarter or less of it is used; its slots widen when a longer id
//!   arrives, and narrow to what the live ids need when the last id of the
//!   slots' width has left (the block counts those ids), so one long id
//!   costs its width only while it is held. MEMORY USAGE reports the block.
//! - A write is a [`LeaseChange`] (the core's): the expired leases dropped,
//!   one lease added, renewed or ended, a clock repair, the new header and
//!   expiry. It is applied to the block in place and is the effect payload:
//!   `c` and its words (233 bytes), whatever the set holds. A replica
//!   applies it to its own set after checking that it fits.
//! - The whole set ([`LeaseBlock::to_words`]: count, header, then each
//!   lease in order with its id) is what RDB (encoding version 1) and DUMP
//!   carry as unsigneds, what the AOF rewrite emits as the payload `C` and
//!   its words (the server adds `PEXPIREAT`), and what DEBUG DIGEST-VALUE
//!   reads, in order (so the block's layout never shows). A count above
//!   100,000 is refused before anything is allocated, and a loaded set must
//!   be one the core could have written ([`LeaseBlock::from_words`]).
//! - Each block's id index is keyed by its own seed ([`hash_seed`]): random
//!   per process, so ids a client chooses to collide cannot be computed
//!   without reading the server's memory. The seed stays in its node: a
//!   loaded or applied-whole set gets a new one.

use std::ffi::{c_void, CStr};
use std::hash::{BuildHasher, RandomState};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::LazyLock;

use redis_module::raw::{RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::lease::{
    LeaseBlock, LeaseChange, LeaseChangeKind, LeaseRead, LEASE_CHANGE_WORDS, MAX_ID_LEN, MAX_LEASE_LIMIT,
};

use crate::core::time::Millis;

use super::block::{self, alloc, replace, words, words_mut};
use super::ffi::{api, OpenKey};
use super::stored::{apply_change, emit_apply, payload_words, Stored, MAX_PAYLOAD};
use super::stored::{ENDS_EARLY, UNKNOWN_VERSION};

/// The seed of a new block's id index: a random base drawn once per process
/// (std's `RandomState`, from the OS), and a count of blocks made, mixed
/// (splitmix64's finaliser), so no two blocks share one.
fn hash_seed() -> u64 {
    static BASE: LazyLock<u64> = LazyLock::new(|| RandomState::new().hash_one(0x5eed_u64));
    static MADE: AtomicU64 = AtomicU64::new(0);
    let mut z = BASE.wrapping_add(MADE.fetch_add(1, Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Above every sequence number of a generated id that any lease set on this
/// node has reached: the least sequence number an acquire generates next
/// (`Leases::acquire`'s floor). It rises with every change stored or applied
/// from the master (so a promoted replica goes on above its master's) and
/// every set loaded or restored, and it is kept in the RDB (an aux field),
/// so no key hands out an id again after it was deleted and created anew,
/// restored from an older DUMP, or the server restarted. Sequences a client
/// names at or above 2^63 (where ids are looked up) do not move it.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);

/// The node's floor for the next generated id's sequence number.
#[inline]
pub fn seq_floor() -> u64 {
    NEXT_SEQ.load(Relaxed)
}

/// A lease set on this node reached `next_seq`. (The server runs commands
/// and loads on one thread: a plain load and store.)
#[inline]
fn saw_seq(next_seq: u64) {
    if next_seq > NEXT_SEQ.load(Relaxed) && next_seq < 1 << 63 {
        NEXT_SEQ.store(next_seq, Relaxed);
    }
}

/// The tag of a change's payload.
const CHANGE_TAG: u8 = super::wire::LEASE_CHANGE;
/// The tag of a whole set's payload (AOF rewrite).
const WHOLE_TAG: u8 = super::wire::LEASE_WHOLE;
const _: () = assert!(8 * LEASE_CHANGE_WORDS < MAX_PAYLOAD);

/// The set a block holds (blocks are only ever made holding a valid set).
///
/// # Safety
/// As for [`words`].
pub unsafe fn read<'v>(value: *mut c_void) -> LeaseBlock<&'v [u64]> {
    // SAFETY: per the contract.
    LeaseBlock::open(unsafe { words(value) }).unwrap_or_else(|| unreachable!("a lease block holds a set"))
}

/// A new block of layout `(capacity, id_words)` holding `from`'s set.
fn copy_into_new(from: &LeaseBlock<&mut [u64]>, capacity: usize, id_words: usize) -> Option<*mut c_void> {
    let block = alloc(LeaseBlock::words_for(capacity, id_words));
    // SAFETY: just made, owned here.
    if from.grow_into(unsafe { words_mut(block) }, id_words).is_some() {
        Some(block)
    } else {
        // SAFETY: just made, never handed to the server.
        unsafe { block::free(block) };
        None
    }
}

/// A block holding the whole set `w` ([`LeaseBlock::to_words`]), if valid;
/// else why not.
fn from_whole(w: &[u64]) -> Result<*mut c_void, &'static str> {
    let (capacity, id_words) = LeaseBlock::layout_of(w)?;
    let block = alloc(LeaseBlock::words_for(capacity, id_words));
    // SAFETY: just made, owned here.
    match LeaseBlock::load_words(unsafe { words_mut(block) }, w, hash_seed()) {
        Ok(_) => {
            saw_seq(w[1]);
            Ok(block)
        }
        Err(why) => {
            // SAFETY: just made, never handed to the server.
            unsafe { block::free(block) };
            Err(why)
        }
    }
}

fn decode_change(payload: &[u8]) -> Option<LeaseChange> {
    LeaseChange::from_words(&payload_words(payload, CHANGE_TAG)?).filter(|c| !c.delete)
}

impl Stored for LeaseChange {
    fn owns_tag(tag: u8) -> bool {
        tag == CHANGE_TAG || tag == WHOLE_TAG
    }

    fn create(w: &LeaseChange) -> Option<*mut c_void> {
        if w.delete {
            return None;
        }
        let (capacity, id_words) = LeaseBlock::first_layout(w);
        let block = alloc(LeaseBlock::words_for(capacity, id_words));
        // SAFETY: just made, owned here.
        let applied = LeaseBlock::init(unsafe { words_mut(block) }, id_words, w.header, hash_seed())
            .filter(|b| w.fits(b))
            .map(|mut b| {
                w.apply(&mut b);
            });
        if applied.is_none() {
            // SAFETY: just made, never handed to the server.
            unsafe { block::free(block) };
            return None;
        }
        saw_seq(w.header.next_seq);
        Some(block)
    }

    unsafe fn update(
        key: &OpenKey<'_>,
        ty: *mut RedisModuleType,
        value: *mut c_void,
        w: &LeaseChange,
    ) -> Option<*mut c_void> {
        // SAFETY: per the contract; the key is open for writing, and nothing
        // else reads the block meanwhile.
        let mut set = LeaseBlock::open(unsafe { words_mut(value) })?;
        if w.delete || !w.fits(&set) {
            return None;
        }
        saw_seq(w.header.next_seq);
        if let Some((capacity, id_words)) = set.needs_room(w) {
            // No lease needs the block's width: the copy takes the width its
            // leases and the new one need.
            let id_words = if set.at_width() == 0 { set.needed_id_words().max(w.id_words()).max(1) } else { id_words };
            let bigger = copy_into_new(&set, capacity, id_words)?;
            // SAFETY: just made, owned here.
            let mut grown = LeaseBlock::open(unsafe { words_mut(bigger) })?;
            w.apply(&mut grown);
            // SAFETY: the key holds `value` as `ty` (the contract), whose
            // values are blocks; `bigger` was just made.
            return unsafe { replace(key, ty, value, bigger) };
        }
        w.apply(&mut set);
        let (len, capacity) = (set.len(), set.capacity());
        // Shrink: a quarter or less of the block is used. Narrow: no lease
        // needs the slots' id width any more (the longest id has left), so
        // one long id does not widen the block for good. Either way the
        // copy is O(n), as the one that grew or widened the block was.
        // (Refused, the key keeps the bigger block, changed.)
        let shrink = len * 4 <= capacity && capacity > 4;
        let narrow = set.at_width() == 0;
        if !shrink && !narrow {
            return Some(value);
        }
        let capacity = if shrink { (2 * len).next_power_of_two().max(1) } else { capacity };
        let id_words = if narrow { set.needed_id_words() } else { set.id_words() };
        let Some(smaller) = copy_into_new(&set, capacity, id_words) else {
            return Some(value);
        };
        // SAFETY: the key holds `value` as `ty` (the contract), whose values
        // are blocks; `smaller` was just made. Refused, the key keeps `value`.
        Some(unsafe { replace(key, ty, value, smaller) }.unwrap_or(value))
    }

    fn encode<'b>(w: &LeaseChange, expire_at: Millis, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
        debug_assert_eq!(expire_at.0, w.expire_at_ms);
        buf[0] = CHANGE_TAG;
        for (i, word) in w.to_words().iter().enumerate() {
            buf[1 + 8 * i..9 + 8 * i].copy_from_slice(&word.to_le_bytes());
        }
        &buf[..1 + 8 * LEASE_CHANGE_WORDS]
    }

    /// A change applies to the set the key holds (or to none); a whole set
    /// replaces whatever the key held, as RESTORE would.
    unsafe fn apply(key: &OpenKey<'_>, ty: *mut RedisModuleType, payload: &[u8], now: Millis) -> bool {
        if let Some(rest) = payload.strip_prefix(&[WHOLE_TAG]) {
            if rest.len() % 8 != 0 {
                return false;
            }
            let w: Vec<u64> =
                rest.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).collect();
            let Ok(block) = from_whole(&w) else { return false };
            // SAFETY: `ty` is this kind's type (the contract), whose values
            // are blocks; `block` was just made.
            return unsafe { block::set_whole(key, ty, block) };
        }
        let Some(change) = decode_change(payload) else { return false };
        // SAFETY: per the contract.
        unsafe { apply_change(key, ty, &change, Millis(change.expire_at_ms), now) }
    }

    /// A release or a renewal fires its own event, as on the master.
    fn event_of(payload: &[u8]) -> Option<&'static CStr> {
        match decode_change(payload)?.kind {
            LeaseChangeKind::Release => Some(c"rl.release"),
            LeaseChangeKind::Renew => Some(c"rl.renew"),
            LeaseChangeKind::Acquire | LeaseChangeKind::Repair => None,
        }
    }

    const STATE: &'static str = "lease set";

    unsafe fn rdb_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<*mut c_void, &'static str> {
        if encver != 1 {
            return Err(UNKNOWN_VERSION);
        }
        let next = || {
            // SAFETY: `rdb` is the running rdb_load's or aux_load's IO (the contract).
            let w = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
            // SAFETY: `rdb` is the running rdb_load's or aux_load's IO (the contract).
            (unsafe { api!(RedisModule_IsIOError(rdb)) } == 0).then_some(w)
        };
        // The count first: refused above the largest limit before anything
        // is collected. Each lease is 4 words and its id's (1 to 16).
        let n = next().ok_or(ENDS_EARLY)?;
        if n > MAX_LEASE_LIMIT {
            return Err("more than 100000 leases");
        }
        let mut w = vec![n, next().ok_or(ENDS_EARLY)?, next().ok_or(ENDS_EARLY)?];
        for _ in 0..n {
            let (Some(a), Some(b), Some(c), Some(d)) = (next(), next(), next(), next()) else { return Err(ENDS_EARLY) };
            let id_len =
                usize::try_from(d).ok().filter(|l| (1..=MAX_ID_LEN).contains(l)).ok_or("an id not 1 to 128 bytes")?;
            w.extend_from_slice(&[a, b, c, d]);
            for _ in 0..id_len.div_ceil(8) {
                w.push(next().ok_or(ENDS_EARLY)?);
            }
        }
        from_whole(&w)
    }

    const AUX: bool = true;

    /// The node's sequence floor ([`NEXT_SEQ`]), before the keys.
    unsafe fn aux_save(rdb: *mut RedisModuleIO) {
        // SAFETY: `rdb` is the running rdb_save's or aux_save's IO (the contract).
        unsafe { api!(RedisModule_SaveUnsigned(rdb, NEXT_SEQ.load(Relaxed))) };
    }

    unsafe fn aux_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<(), &'static str> {
        if encver != 1 {
            return Err(UNKNOWN_VERSION);
        }
        // SAFETY: `rdb` is the running rdb_load's or aux_load's IO (the contract).
        let floor = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
        // SAFETY: `rdb` is the running rdb_load's or aux_load's IO (the contract).
        if unsafe { api!(RedisModule_IsIOError(rdb)) } != 0 {
            return Err(ENDS_EARLY);
        }
        saw_seq(floor);
        Ok(())
    }

    unsafe fn rdb_save(rdb: *mut RedisModuleIO, value: *mut c_void) {
        // SAFETY: per the contract.
        for w in unsafe { read(value) }.to_words() {
            // SAFETY: `rdb` is the running rdb_save's or aux_save's IO (the contract).
            unsafe { api!(RedisModule_SaveUnsigned(rdb, w)) };
        }
    }

    unsafe fn aof_rewrite(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
        // SAFETY: per the contract.
        let set = unsafe { read(value) };
        let mut payload = vec![WHOLE_TAG];
        for w in set.to_words() {
            payload.extend_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `aof` and `key` are the running aof_rewrite's (the contract).
        unsafe { emit_apply(aof, key, &payload) };
    }

    /// The whole set's words (in order, as RDB has them) as one buffer: one
    /// digest call, not one per word (700,000 of them took 0.5 to 0.9 s at
    /// 100,000 leases).
    unsafe fn digest(md: *mut RedisModuleDigest, value: *mut c_void) {
        // SAFETY: per the contract.
        let mut bytes = Vec::new();
        for w in unsafe { read(value) }.to_words() {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `md` is the running digest callback's (the contract).
        unsafe { api!(RedisModule_DigestAddStringBuffer(md, bytes.as_ptr().cast(), bytes.len())) };
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
