//! Where the module keeps a lease set: a block of words it owns, an AVL
//! tree of lease slots by `(deadline, id)` with each subtree's units, and
//! an index by id (see [`LeaseBlock`]). The set's rules are in `lease`.
//!
//! Here: the type, its [`LeaseRead`] and [`LeaseStore`] impls (each write
//! keeping the slots, the tree and the index in step) and opening a block.
//! The rest, one seam a file:
//! - `layout`: the header words and a slot's words, read and written;
//! - `tree`: the AVL tree over the slots and its walks;
//! - `index`: the id index (open addressing over the slots);
//! - `check`: whether a block from outside is one this core can have written;
//! - `words`: the layout a change needs, growing into a new block, and the
//!   set as the words RDB and AOF carry.

use std::cmp::Ordering;
use std::ops::{Deref, DerefMut};

use super::lease::*;

mod check;
mod index;
mod layout;
mod tree;
mod words;

use layout::{
    Key, AT_WIDTH_MASK, FIRST_AT, LAST_AT, LEASE_MS_BITS, MAX_DEPTH, NIL, OFF_AT, SLOT_FIXED, WIDTH_AT, WIDTH_BITS,
};
pub use layout::{LEASE_BLOCK_HEADER_WORDS, MAX_LEASE_CAPACITY};

/// A lease set in a block of words the caller owns (the module's value
/// block), `words_for(capacity, id_words)` long:
///
/// - header: `len, id_words, root, next_seq, last_ns`, then the first and
///   the last deadline in the tree (0 for an empty set), kept by every
///   write so a call reads them without a walk, the seed of the index's
///   hash, and the offset of every slot's deadline word (a repair moves
///   every deadline back by one write there);
/// - `capacity` slots of `4 + id_words` words, slots `0..len` in use:
///   `deadline_ns` plus the offset (wrapping); `lease_ms | units << 40 | (id_len - 1) << 57`;
///   `left | right << 32` (children in the tree, `u32::MAX` for none);
///   `subtree units | height << 56`; then the id, big-endian, zero-padded;
/// - the id index: `2 * capacity` entries of 32 bits (slot + 1, 0 empty),
///   two a word, open addressing with linear probing.
///
/// The slots form an AVL tree in `(deadline, id)` order. Ending a lease
/// moves the last slot into its place, so slots stay dense. `capacity` is a
/// power of two; the caller grows the block (doubling, and widening the id
/// words when a longer id arrives) with [`grow_into`](Self::grow_into) when
/// [`needs_room`](Self::needs_room) says so.
///
/// Bytes per lease (slot and index entries), at a full block: 8 * (5 +
/// id_words): 56 with generated ids of up to 16 bytes (2 id words), 64 up
/// to 24 bytes (all generated ids before the year 2286 with a sequence below
/// 10^9), 168 with 128-byte ids.
#[derive(Debug, Clone, Copy)]
pub struct LeaseBlock<W> {
    w: W,
    /// The id words of a slot and the capacity, read once by `open` (a
    /// block's layout never changes; growing makes a new block).
    idw: usize,
    cap: usize,
    /// Words per slot: `SLOT_FIXED + idw`.
    stride: usize,
}

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// The set already in `words`, if its layout fits the block (its length
    /// matches a power-of-two capacity, the length and root are in range).
    /// Check it with [`valid`](Self::valid) if it came from outside.
    pub fn open(words: W) -> Option<Self> {
        if words.len() < LEASE_BLOCK_HEADER_WORDS {
            return None;
        }
        let idw = usize::try_from(words[WIDTH_AT] & ((1 << WIDTH_BITS) - 1))
            .ok()
            .filter(|n| (1..=MAX_ID_WORDS).contains(n))?;
        let body = words.len() - LEASE_BLOCK_HEADER_WORDS;
        let per = SLOT_FIXED + idw + 1;
        let cap = body / per;
        let len = usize::try_from(words[0]).ok()?;
        let root = words[2];
        let fits = body % per == 0
            && cap.is_power_of_two()
            && cap <= MAX_LEASE_CAPACITY
            && len <= cap
            && if len == 0 { root == u64::from(NIL) } else { root < len as u64 };
        fits.then_some(Self { w: words, idw, cap, stride: SLOT_FIXED + idw })
    }

    /// Slots the block has room for.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The id words of a slot.
    pub fn id_words(&self) -> usize {
        self.idw
    }

    /// How many leases have an id that needs every id word of a slot (0:
    /// the block is wider than its leases need).
    pub fn at_width(&self) -> usize {
        ((self.w[WIDTH_AT] >> WIDTH_BITS) & AT_WIDTH_MASK) as usize
    }

    /// Removes slot `s`, already unlinked from the tree and the index: the
    /// last slot moves into its place.
    fn free_slot(&mut self, s: u32)
    where
        W: DerefMut,
    {
        if self.is_at_width(s) {
            self.w[WIDTH_AT] -= 1 << WIDTH_BITS;
        }
        let last = (self.len() - 1) as u32;
        if s != last {
            let k = self.key(last);
            let (from, to) = (self.base(last), self.base(s));
            let n = SLOT_FIXED + self.id_words();
            self.w.copy_within(from..from + n, to);
            // Its parent in the tree, then its index entry.
            if self.root() == last {
                self.set_root(s);
            } else {
                let mut n = self.root();
                for _ in 0..MAX_DEPTH {
                    if n == NIL {
                        break;
                    }
                    let (l, r) = self.kids(n);
                    let go_left = self.cmp(n, &k) == Ordering::Greater;
                    let next = if go_left { l } else { r };
                    if next == last {
                        if go_left {
                            self.set_kids(n, s, r);
                        } else {
                            self.set_kids(n, l, s);
                        }
                        break;
                    }
                    n = next;
                }
            }
            if let Some((j, _)) = self.index_find(&k) {
                self.set_entry(j, s + 1);
            }
        }
        self.w[0] -= 1;
    }
}

impl<W: Deref<Target = [u64]>> LeaseRead for LeaseBlock<W> {
    fn len(&self) -> usize {
        self.w[0] as usize
    }
    fn header(&self) -> LeaseHeader {
        LeaseHeader { next_seq: self.w[3], last_ns: self.w[4] }
    }
    fn get(&self, i: usize) -> Lease {
        self.lease(i as u32)
    }
    fn find(&self, id: &LeaseId) -> Option<Lease> {
        let k = Key { d: 0, id: id.words(), len: id.len };
        self.index_find(&k).map(|(_, s)| self.lease(s))
    }
    fn deadline_of(&self, id: &LeaseId) -> Option<u64> {
        let k = Key { d: 0, id: id.words(), len: id.len };
        self.index_find(&k).map(|(_, s)| self.deadline(s))
    }
    fn units_through(&self, t_ns: u64) -> u64 {
        self.tree_units_through(t_ns)
    }
    fn units(&self) -> u64 {
        self.sum(self.root())
    }
    fn count_through(&self, t_ns: u64, at_most: usize) -> usize {
        if self.w[FIRST_AT] > t_ns || self.len() == 0 {
            return 0;
        }
        self.tree_count(t_ns, at_most)
    }
    fn reaching(&self, units: u64) -> Option<u64> {
        self.tree_reaching(units)
    }
    fn last_deadline(&self, except: Option<&LeaseId>) -> Option<u64> {
        self.tree_last_deadline(except)
    }
}

impl<W: DerefMut<Target = [u64]>> LeaseStore for LeaseBlock<W> {
    fn set_header(&mut self, header: LeaseHeader) {
        self.w[3] = header.next_seq;
        self.w[4] = header.last_ns;
    }
    fn drop_first(&mut self, k: usize) {
        if k == 0 {
            return;
        }
        for _ in 0..k {
            let root = self.root();
            if root == NIL {
                return;
            }
            let (root, s) = self.tree_remove_first(root, 0);
            self.set_root(root);
            if let Some((j, _)) = self.index_find(&self.key(s)) {
                self.index_remove(j);
            }
            self.free_slot(s);
        }
        self.refresh_ends();
    }
    fn remove(&mut self, id: &LeaseId) {
        let probe = Key { d: 0, id: id.words(), len: id.len };
        let Some((j, s)) = self.index_find(&probe) else { return };
        // The slot's id is the probe's (the index found it by that id).
        let k = Key { d: self.deadline(s), ..probe };
        let root = self.tree_remove(self.root(), &k, 0);
        self.set_root(root);
        self.index_remove(j);
        self.free_slot(s);
        // Only an end's removal moves an end.
        if k.d == self.w[FIRST_AT] || k.d == self.w[LAST_AT] {
            self.refresh_ends();
        }
    }
    /// The caller has made room ([`LeaseBlock::needs_room`]); a lease that
    /// does not fit is dropped, never written out of bounds. One probe of
    /// the index finds both a lease of the same id (then removed first) and
    /// the entry the new one takes.
    fn insert(&mut self, lease: &Lease) {
        let k = Key::of(lease);
        let j = match self.index_probe(&k) {
            Ok(j) => j,
            Err(_) => {
                self.remove(&lease.id);
                match self.index_probe(&k) {
                    Ok(j) => j,
                    Err(_) => return,
                }
            }
        };
        let s = self.len();
        if s >= self.capacity() || j >= self.table() || lease.id.words_needed() > self.id_words() || !lease.in_range() {
            debug_assert!(false, "a lease inserted without room");
            return;
        }
        let s = s as u32;
        self.write_slot(s, lease, &k.id);
        self.w[0] += 1;
        if self.is_at_width(s) {
            self.w[WIDTH_AT] += 1 << WIDTH_BITS;
        }
        let root = self.tree_insert(self.root(), s, &k);
        self.set_root(root);
        self.set_entry(j, s + 1);
        self.widen_ends(k.d, s as usize);
    }
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64) {
        let probe = Key { d: 0, id: id.words(), len: id.len };
        let Some((_, s)) = self.index_find(&probe) else { return };
        // What `Lease::in_range` checks of the new fields (the units are the
        // slot's own).
        let units = self.units_of(s);
        if !(1..=MAX_LEASE_LIMIT).contains(&units)
            || !(1..=MAX_LEASE_MS).contains(&lease_ms)
            || deadline_ns < lease_ms * NS_PER_MS
        {
            return;
        }
        // The slot's id is the probe's (the index found it by that id).
        let mut k = Key { d: self.deadline(s), ..probe };
        let root = self.tree_remove(self.root(), &k, 0);
        self.set_deadline(s, deadline_ns);
        let at = self.base(s);
        self.w[at + 1] = (self.w[at + 1] & !((1 << LEASE_MS_BITS) - 1)) | lease_ms;
        let was_end = k.d == self.w[FIRST_AT] || k.d == self.w[LAST_AT];
        k.d = deadline_ns;
        let root = self.tree_insert(root, s, &k);
        self.set_root(root);
        if was_end {
            self.refresh_ends();
        } else {
            self.widen_ends(deadline_ns, self.len() - 1);
        }
    }
    /// O(1): the header's offset grows by the shift, so every slot reads a
    /// deadline that much earlier; the order, the tree, its sums and the
    /// index stay as they are. Only when a deadline is at or before the
    /// shift (a clock gone back past the set's own age since the epoch) is
    /// each deadline floored at 0 in one pass, and the tree built again in
    /// order (O(n log n)).
    fn shift_back(&mut self, shift_ns: u64) {
        if shift_ns == 0 || self.len() == 0 {
            return;
        }
        if self.w[FIRST_AT] > shift_ns {
            self.w[OFF_AT] = self.w[OFF_AT].wrapping_add(shift_ns);
            self.w[FIRST_AT] -= shift_ns;
            self.w[LAST_AT] -= shift_ns;
            return;
        }
        for s in 0..self.len() as u32 {
            let d = self.deadline(s);
            self.set_deadline(s, d.saturating_sub(shift_ns));
        }
        self.rebuild();
        self.refresh_ends();
    }
}
