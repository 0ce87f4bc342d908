//! The word layout of a [`LeaseBlock`]: what each header word holds, and
//! a slot's words (deadline; lease time, units and id length; children;
//! subtree units and height; the id), read and written here so the tree,
//! the index and the checks name fields, not offsets. The struct's doc
//! draws the whole block.

use std::cmp::Ordering;
use std::ops::{Deref, DerefMut};

use super::LeaseBlock;
use crate::core::lease::{Lease, LeaseHeader, LeaseId, MAX_ID_LEN, MAX_ID_WORDS};

/// Header words of a [`LeaseBlock`]: `len, id_words | at_width << 8, root,
/// next_seq, last_ns, first_deadline, last_deadline, hash_seed,
/// deadline_offset`.
pub const LEASE_BLOCK_HEADER_WORDS: usize = 9;
/// The header word holding the slots' id words (low 8 bits) and, above
/// them, how many leases have an id that needs all of them: when none does,
/// the block is wider than its leases need and the module narrows it.
pub(super) const WIDTH_AT: usize = 1;
pub(super) const WIDTH_BITS: u32 = 8;
/// The count of ids at the width, above `WIDTH_BITS` (at most 2^17).
pub(super) const AT_WIDTH_MASK: u64 = (1 << 32) - 1;
/// The header words holding the first and the last deadline of the set (0
/// when it is empty): a call reads whether anything expired, and the key's
/// expiry, without walking the tree.
pub(super) const FIRST_AT: usize = 5;
pub(super) const LAST_AT: usize = 6;
/// The header word keying the id index's hash (the block's own, given at
/// [`init`](LeaseBlock::init): ids chosen to collide in one block do not in
/// another). Not part of the set: RDB and AOF do not carry it.
pub(super) const SEED_AT: usize = 7;
/// The header word a slot's deadline word is offset by: the slot holds
/// `deadline + offset` (wrapping), so a repair moves every deadline back by
/// one write here ([`LeaseStore::shift_back`]). Not part of the set: RDB,
/// AOF and the digest read deadlines, never slot words.
pub(super) const OFF_AT: usize = 8;
/// Fixed words per slot before its id.
pub(super) const SLOT_FIXED: usize = 4;
/// No slot (a missing child, an empty tree).
pub(super) const NIL: u32 = u32::MAX;
/// The most slots a block has (the first power of two above the limit cap).
pub const MAX_LEASE_CAPACITY: usize = 131_072;
/// The deepest an AVL tree of at most 131,072 nodes can be is 24; every
/// walk stops here, so a corrupted block can never loop or recurse deeply.
pub(super) const MAX_DEPTH: usize = 64;

pub(super) const LEASE_MS_BITS: u32 = 40;
pub(super) const UNITS_BITS: u32 = 17;
pub(super) const SUM_MASK: u64 = (1 << 56) - 1;

/// A slot's key in the tree's order: its deadline, then its id (words and
/// length).
#[derive(Clone, Copy)]
pub(super) struct Key {
    pub(super) d: u64,
    pub(super) id: [u64; MAX_ID_WORDS],
    pub(super) len: u8,
}

impl Key {
    pub(super) fn of(l: &Lease) -> Self {
        Self { d: l.deadline_ns, id: l.id.words(), len: l.id.len }
    }
}

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// Whether slot `s`'s id needs every id word.
    pub(super) fn is_at_width(&self, s: u32) -> bool {
        (self.id_len(s) as usize).div_ceil(8) == self.idw
    }
    pub(super) fn root(&self) -> u32 {
        self.w[2] as u32
    }
    pub(super) fn set_root(&mut self, r: u32)
    where
        W: DerefMut,
    {
        self.w[2] = u64::from(r);
    }
    pub(super) fn base(&self, s: u32) -> usize {
        LEASE_BLOCK_HEADER_WORDS + s as usize * self.stride
    }
    /// Slot `s`'s deadline (its word less the header's offset).
    #[inline(always)]
    pub(super) fn deadline(&self, s: u32) -> u64 {
        self.w[self.base(s)].wrapping_sub(self.w[OFF_AT])
    }
    /// Sets slot `s`'s deadline to `d` (its word: `d` plus the offset).
    pub(super) fn set_deadline(&mut self, s: u32, d: u64)
    where
        W: DerefMut,
    {
        let at = self.base(s);
        self.w[at] = d.wrapping_add(self.w[OFF_AT]);
    }
    fn meta(&self, s: u32) -> u64 {
        self.w[self.base(s) + 1]
    }
    pub(super) fn units_of(&self, s: u32) -> u64 {
        (self.meta(s) >> LEASE_MS_BITS) & ((1 << UNITS_BITS) - 1)
    }
    pub(super) fn lease_ms_of(&self, s: u32) -> u64 {
        self.meta(s) & ((1 << LEASE_MS_BITS) - 1)
    }
    pub(super) fn id_len(&self, s: u32) -> u64 {
        (self.meta(s) >> (LEASE_MS_BITS + UNITS_BITS)) + 1
    }
    pub(super) fn id_slice(&self, s: u32) -> &[u64] {
        let at = self.base(s) + SLOT_FIXED;
        &self.w[at..at + self.id_words()]
    }
    pub(super) fn kids(&self, s: u32) -> (u32, u32) {
        let k = self.w[self.base(s) + 2];
        (k as u32, (k >> 32) as u32)
    }
    pub(super) fn set_kids(&mut self, s: u32, l: u32, r: u32)
    where
        W: DerefMut,
    {
        let at = self.base(s) + 2;
        self.w[at] = u64::from(l) | u64::from(r) << 32;
    }
    pub(super) fn sum(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] & SUM_MASK
        }
    }
    pub(super) fn height(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] >> 56
        }
    }
    /// The word `subtree units | height << 56` of `s` (0 for no node).
    pub(super) fn aug(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3]
        }
    }
    pub(super) fn lease(&self, s: u32) -> Lease {
        let len = self.id_len(s);
        let id = LeaseId::from_words(len, self.id_slice(s)).unwrap_or(LeaseId { len: 1, bytes: [0; MAX_ID_LEN] });
        Lease { id, deadline_ns: self.deadline(s), lease_ms: self.lease_ms_of(s), units: self.units_of(s) }
    }
    pub(super) fn key(&self, s: u32) -> Key {
        let mut id = [0u64; MAX_ID_WORDS];
        id[..self.id_words()].copy_from_slice(self.id_slice(s));
        Key { d: self.deadline(s), id, len: self.id_len(s) as u8 }
    }
    /// Slot `s`'s key against `k`. (Inlined: deadlines nearly always
    /// differ, and then that is the answer.)
    #[inline(always)]
    pub(super) fn cmp(&self, s: u32, k: &Key) -> Ordering {
        let d = self.deadline(s);
        if d != k.d {
            return d.cmp(&k.d);
        }
        self.cmp_ids(s, k)
    }
    #[inline(never)]
    pub(super) fn cmp_ids(&self, s: u32, k: &Key) -> Ordering {
        Ordering::Equal.then_with(|| {
            let ids = self.id_slice(s);
            // Past both the slot's words and the key's id, every word is zero.
            let n = ids.len().max(usize::from(k.len).div_ceil(8)).min(MAX_ID_WORDS);
            for (j, &b) in k.id[..n].iter().enumerate() {
                let a = ids.get(j).copied().unwrap_or(0);
                if a != b {
                    return a.cmp(&b);
                }
            }
            self.id_len(s).cmp(&u64::from(k.len))
        })
    }
    pub(super) fn same_id(&self, s: u32, k: &Key) -> bool {
        let ids = self.id_slice(s);
        // Past both the slot's words and the key's id, every word is zero.
        let n = ids.len().max(usize::from(k.len).div_ceil(8)).min(MAX_ID_WORDS);
        self.id_len(s) == u64::from(k.len)
            && k.id[..n].iter().enumerate().all(|(j, &b)| ids.get(j).copied().unwrap_or(0) == b)
    }
    /// Writes `l` into slot `s` (`words`: its id's, [`LeaseId::words`]).
    pub(super) fn write_slot(&mut self, s: u32, l: &Lease, words: &[u64; MAX_ID_WORDS])
    where
        W: DerefMut,
    {
        self.set_deadline(s, l.deadline_ns);
        let at = self.base(s);
        let idw = self.id_words();
        self.w[at + 1] = l.lease_ms | l.units << LEASE_MS_BITS | (l.id.len as u64 - 1) << (LEASE_MS_BITS + UNITS_BITS);
        self.w[at + SLOT_FIXED..at + SLOT_FIXED + idw].copy_from_slice(&words[..idw]);
    }
}

impl<'a> LeaseBlock<&'a mut [u64]> {
    /// The words of a block of `capacity` slots (a power of two) for ids of
    /// up to `id_words` words.
    pub const fn words_for(capacity: usize, id_words: usize) -> usize {
        LEASE_BLOCK_HEADER_WORDS + capacity * (SLOT_FIXED + id_words + 1)
    }

    /// An empty set with `header` in `words` (of `words_for(capacity,
    /// id_words)` words, `capacity` a power of two, `id_words` 1 to 16), its
    /// id index keyed by `seed` (the caller's choice: a random one per block
    /// keeps ids chosen to collide out of its index). `None` if the length
    /// does not fit.
    pub fn init(words: &'a mut [u64], id_words: usize, header: LeaseHeader, seed: u64) -> Option<Self> {
        if words.len() < LEASE_BLOCK_HEADER_WORDS || !(1..=MAX_ID_WORDS).contains(&id_words) {
            return None;
        }
        words.fill(0);
        words[..LEASE_BLOCK_HEADER_WORDS].copy_from_slice(&[
            0,
            id_words as u64,
            u64::from(NIL),
            header.next_seq,
            header.last_ns,
            0,
            0,
            seed,
            0,
        ]);
        Self::open(words)
    }
}
