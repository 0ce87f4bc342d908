//! How a lease set (`RL.ACQUIRE`) is kept: a variable-size state.
//!
//! - Value: one block of words from the server's allocator,
//!   `[block_words, block..]`, where `block` is the core's [`LeaseBlock`]
//!   (its slots, an AVL tree by deadline, and an id index). Its capacity is
//!   a power of two that grows and shrinks by the rule every variable-size
//!   state follows (`var_value`: doubling when a write needs room, halving
//!   or more when a quarter or less is used); its slots widen when a longer
//!   id arrives, and narrow to what the live ids need when the last id of the
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
//!
//! The storage policy (making the value, a write, RDB, AOF, DIGEST, MEMORY
//! USAGE, COPY) is `var_value`'s; this file says what a lease set is to it,
//! and keeps the node's id floor ([`seq_floor`]).

use std::ffi::{c_void, CStr};
use std::hash::{BuildHasher, RandomState};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::LazyLock;

use redis_module::raw::RedisModuleIO;

use crate::core::lease::{
    LeaseBlock, LeaseChange, LeaseChangeKind, LeaseRead, LEASE_CHANGE_WORDS, MAX_ID_LEN, MAX_LEASE_LIMIT,
};
use crate::core::lease_block::MAX_LEASE_CAPACITY;

use super::block::{self, alloc, words_mut};
use super::ffi::api;
use super::stored::{ENDS_EARLY, MAX_PAYLOAD, UNKNOWN_VERSION};
use super::var_value::{self, stored_by_policy, VarBlock};

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

const _: () = assert!(8 * LEASE_CHANGE_WORDS < MAX_PAYLOAD);

/// A block holding the whole set `w` ([`LeaseBlock::to_words`]), if valid;
/// else why not.
fn from_words(w: &[u64]) -> Result<*mut c_void, &'static str> {
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

impl VarBlock for LeaseChange {
    type Block<W: std::ops::Deref<Target = [u64]>> = LeaseBlock<W>;
    /// The id words of a slot.
    type Extra = usize;
    type Words = [u64; LEASE_CHANGE_WORDS];

    const CHANGE_TAG: u8 = super::wire::LEASE_CHANGE;
    const WHOLE_TAG: u8 = super::wire::LEASE_WHOLE;
    const CHANGE_WORDS: usize = LEASE_CHANGE_WORDS;
    const MIN_CAPACITY: usize = 1;
    const MAX_CAPACITY: usize = MAX_LEASE_CAPACITY;
    /// One digest call, not one per word (700,000 of them took 0.5 to 0.9 s
    /// at 100,000 leases).
    const DIGEST_ONE_BUFFER: bool = true;

    #[inline]
    fn open<W: std::ops::Deref<Target = [u64]>>(words: W) -> Option<LeaseBlock<W>> {
        LeaseBlock::open(words)
    }
    #[inline]
    fn len<W: std::ops::Deref<Target = [u64]>>(b: &LeaseBlock<W>) -> usize {
        b.len()
    }
    #[inline]
    fn capacity<W: std::ops::Deref<Target = [u64]>>(b: &LeaseBlock<W>) -> usize {
        b.capacity()
    }
    #[inline]
    fn extra<W: std::ops::Deref<Target = [u64]>>(b: &LeaseBlock<W>) -> usize {
        b.id_words()
    }
    #[inline]
    fn words_for(capacity: usize, id_words: usize) -> usize {
        LeaseBlock::words_for(capacity, id_words)
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
        LeaseChange::len_after(self, before)
    }
    #[inline]
    fn fits(&self, b: &LeaseBlock<&mut [u64]>) -> bool {
        LeaseChange::fits(self, b)
    }
    #[inline]
    fn apply_to(&self, b: &mut LeaseBlock<&mut [u64]>) {
        self.apply(b);
    }
    #[inline]
    fn to_words(&self) -> [u64; LEASE_CHANGE_WORDS] {
        LeaseChange::to_words(self)
    }
    #[inline]
    fn from_words(w: &[u64]) -> Option<Self> {
        LeaseChange::from_words(w.try_into().ok()?)
    }
    /// The node's id floor rises to the change's sequence.
    #[inline]
    fn stored(&self) {
        saw_seq(self.header.next_seq);
    }

    /// The id's words.
    #[inline]
    fn first_extra(&self) -> usize {
        self.id_words().max(1)
    }
    /// Its index keyed by a seed of its own ([`hash_seed`]).
    #[inline]
    fn init<'b>(words: &'b mut [u64], id_words: usize, w: &Self) -> Option<LeaseBlock<&'b mut [u64]>> {
        LeaseBlock::init(words, id_words, w.header, hash_seed())
    }
    /// Widened to a longer id the change adds (which forces the copy); when
    /// no lease needs the block's width, the copy takes the width its
    /// leases and the new one need.
    #[inline]
    fn extra_before(b: &LeaseBlock<&mut [u64]>, w: &Self) -> (usize, bool) {
        let widen = w.id_words() > b.id_words();
        let id_words = if b.at_width() == 0 {
            b.needed_id_words().max(w.id_words()).max(1)
        } else {
            b.id_words().max(w.id_words())
        };
        (id_words, widen)
    }
    /// Narrowed when no lease needs the slots' id width any more (the
    /// longest id has left), so one long id does not widen the block for
    /// good. The copy is O(n), as the one that widened the block was.
    #[inline]
    fn extra_after(b: &LeaseBlock<&mut [u64]>) -> Option<usize> {
        (b.at_width() == 0).then(|| b.needed_id_words())
    }
    fn copy_into(b: &LeaseBlock<&mut [u64]>, dst: &mut [u64], id_words: usize) -> bool {
        b.grow_into(dst, id_words).is_some()
    }

    /// [`LeaseBlock::to_words`]: count, header, then each lease in order
    /// with its id.
    fn whole<W: std::ops::Deref<Target = [u64]>>(b: &LeaseBlock<W>) -> impl Iterator<Item = u64> + '_ {
        b.to_words()
    }

    /// The count first: refused above the largest limit before anything is
    /// collected. Each lease is 4 words and its id's (1 to 16).
    fn from_whole(mut next: impl FnMut() -> Option<u64>) -> Result<*mut c_void, &'static str> {
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
        from_words(&w)
    }
}

stored_by_policy!(LeaseChange;
    const STATE: &'static str = "lease set";

    /// A release or a renewal fires its own event, as on the master.
    fn event_of(payload: &[u8]) -> Option<&'static CStr> {
        match var_value::decode::<LeaseChange>(payload)?.kind {
            LeaseChangeKind::Release => Some(c"rl.release"),
            LeaseChangeKind::Renew => Some(c"rl.renew"),
            LeaseChangeKind::Acquire | LeaseChangeKind::Repair => None,
        }
    }

    const AUX: bool = true;

    /// The node's sequence floor ([`NEXT_SEQ`]), before the keys.
    unsafe fn aux_save(rdb: *mut RedisModuleIO) {
        // SAFETY: `rdb` is the running aux_save's IO (the contract).
        unsafe { api!(RedisModule_SaveUnsigned(rdb, NEXT_SEQ.load(Relaxed))) };
    }

    unsafe fn aux_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<(), &'static str> {
        if encver != 1 {
            return Err(UNKNOWN_VERSION);
        }
        // SAFETY: `rdb` is the running aux_load's IO (the contract).
        let floor = unsafe { api!(RedisModule_LoadUnsigned(rdb)) };
        // SAFETY: `rdb` is the running aux_load's IO (the contract).
        if unsafe { api!(RedisModule_IsIOError(rdb)) } != 0 {
            return Err(ENDS_EARLY);
        }
        saw_seq(floor);
        Ok(())
    }
);
