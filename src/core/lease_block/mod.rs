//! Where the module keeps a lease set: a block of words it owns, an AVL
//! tree of lease slots by `(deadline, id)` with each subtree's units, and
//! an index by id (see [`LeaseBlock`]). The set's rules are in `lease`.

use std::cmp::Ordering;
use std::ops::{Deref, DerefMut};

use super::lease::*;

mod check;
mod index;
mod tree;
mod words;

/// Header words of a [`LeaseBlock`]: `len, id_words | at_width << 8, root,
/// next_seq, last_ns, first_deadline, last_deadline, hash_seed`.
pub const LEASE_BLOCK_HEADER_WORDS: usize = 8;
/// The header word holding the slots' id words (low 8 bits) and, above
/// them, how many leases have an id that needs all of them: when none does,
/// the block is wider than its leases need and the module narrows it.
const WIDTH_AT: usize = 1;
const WIDTH_BITS: u32 = 8;
/// The count of ids at the width, above `WIDTH_BITS` (at most 2^17).
const AT_WIDTH_MASK: u64 = (1 << 32) - 1;
/// The top bit of the same word: set when the leases may not all have one
/// `lease_ms` (a lease was added or renewed with another than the root's).
/// Clear, every lease has the root's. Never cleared while a lease remains
/// (removing leases cannot make a uniform set mixed), so it can say "mixed"
/// of a set that is uniform again: it only picks between two exact ways to
/// read a jumped set (see [`LeaseRead::uniform_lease_ms`]), never what they
/// answer. Not part of the set: RDB and AOF do not carry it.
const MIXED: u64 = 1 << 63;
/// The header words holding the first and the last deadline of the set (0
/// when it is empty): a call reads whether anything expired, and the key's
/// expiry, without walking the tree.
const FIRST_AT: usize = 5;
const LAST_AT: usize = 6;
/// The header word keying the id index's hash (the block's own, given at
/// [`init`](LeaseBlock::init): ids chosen to collide in one block do not in
/// another). Not part of the set: RDB and AOF do not carry it.
const SEED_AT: usize = 7;
/// Fixed words per slot before its id.
const SLOT_FIXED: usize = 4;
/// No slot (a missing child, an empty tree).
const NIL: u32 = u32::MAX;
/// The most slots a block has (the first power of two above the limit cap).
pub const MAX_LEASE_CAPACITY: usize = 131_072;
/// The deepest an AVL tree of at most 131,072 nodes can be is 24; every
/// walk stops here, so a corrupted block can never loop or recurse deeply.
const MAX_DEPTH: usize = 64;

const LEASE_MS_BITS: u32 = 40;
const UNITS_BITS: u32 = 17;
const SUM_MASK: u64 = (1 << 56) - 1;

/// A lease set in a block of words the caller owns (the module's value
/// block), `words_for(capacity, id_words)` long:
///
/// - header: `len, id_words, root, next_seq, last_ns`, then the first and
///   the last deadline in the tree (0 for an empty set), kept by every
///   write so a call reads them without a walk, and the seed of the index's
///   hash;
/// - `capacity` slots of `4 + id_words` words, slots `0..len` in use:
///   `deadline_ns`; `lease_ms | units << 40 | (id_len - 1) << 57`;
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

#[derive(Clone, Copy)]
struct Key {
    d: u64,
    id: [u64; MAX_ID_WORDS],
    len: u8,
}

impl Key {
    fn of(l: &Lease) -> Self {
        Self { d: l.deadline_ns, id: l.id.words(), len: l.id.len }
    }
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

    /// Marks the set mixed if `lease_ms` is not the root's (a set that is
    /// not marked holds only the root's `lease_ms`).
    fn note_lease_ms(&mut self, lease_ms: u64)
    where
        W: DerefMut,
    {
        if self.len() > 0 && self.lease_ms_of(self.root()) != lease_ms {
            self.w[WIDTH_AT] |= MIXED;
        }
    }

    /// Whether slot `s`'s id needs every id word.
    fn is_at_width(&self, s: u32) -> bool {
        (self.id_len(s) as usize).div_ceil(8) == self.idw
    }

    // -- Slots.

    fn root(&self) -> u32 {
        self.w[2] as u32
    }
    fn set_root(&mut self, r: u32)
    where
        W: DerefMut,
    {
        self.w[2] = u64::from(r);
    }
    fn base(&self, s: u32) -> usize {
        LEASE_BLOCK_HEADER_WORDS + s as usize * self.stride
    }
    fn deadline(&self, s: u32) -> u64 {
        self.w[self.base(s)]
    }
    fn meta(&self, s: u32) -> u64 {
        self.w[self.base(s) + 1]
    }
    fn units_of(&self, s: u32) -> u64 {
        (self.meta(s) >> LEASE_MS_BITS) & ((1 << UNITS_BITS) - 1)
    }
    fn lease_ms_of(&self, s: u32) -> u64 {
        self.meta(s) & ((1 << LEASE_MS_BITS) - 1)
    }
    fn id_len(&self, s: u32) -> u64 {
        (self.meta(s) >> (LEASE_MS_BITS + UNITS_BITS)) + 1
    }
    fn id_slice(&self, s: u32) -> &[u64] {
        let at = self.base(s) + SLOT_FIXED;
        &self.w[at..at + self.id_words()]
    }
    fn kids(&self, s: u32) -> (u32, u32) {
        let k = self.w[self.base(s) + 2];
        (k as u32, (k >> 32) as u32)
    }
    fn set_kids(&mut self, s: u32, l: u32, r: u32)
    where
        W: DerefMut,
    {
        let at = self.base(s) + 2;
        self.w[at] = u64::from(l) | u64::from(r) << 32;
    }
    fn sum(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] & SUM_MASK
        }
    }
    fn height(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] >> 56
        }
    }
    /// The word `subtree units | height << 56` of `s` (0 for no node).
    fn aug(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3]
        }
    }
    fn lease(&self, s: u32) -> Lease {
        let len = self.id_len(s);
        let id = LeaseId::from_words(len, self.id_slice(s)).unwrap_or(LeaseId { len: 1, bytes: [0; MAX_ID_LEN] });
        Lease { id, deadline_ns: self.deadline(s), lease_ms: self.lease_ms_of(s), units: self.units_of(s) }
    }
    fn key(&self, s: u32) -> Key {
        let mut id = [0u64; MAX_ID_WORDS];
        id[..self.id_words()].copy_from_slice(self.id_slice(s));
        Key { d: self.deadline(s), id, len: self.id_len(s) as u8 }
    }
    /// Slot `s`'s key against `k`. (Inlined: deadlines nearly always
    /// differ, and then that is the answer.)
    #[inline(always)]
    fn cmp(&self, s: u32, k: &Key) -> Ordering {
        let d = self.deadline(s);
        if d != k.d {
            return d.cmp(&k.d);
        }
        self.cmp_ids(s, k)
    }
    #[inline(never)]
    fn cmp_ids(&self, s: u32, k: &Key) -> Ordering {
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
    fn same_id(&self, s: u32, k: &Key) -> bool {
        let ids = self.id_slice(s);
        // Past both the slot's words and the key's id, every word is zero.
        let n = ids.len().max(usize::from(k.len).div_ceil(8)).min(MAX_ID_WORDS);
        self.id_len(s) == u64::from(k.len)
            && k.id[..n].iter().enumerate().all(|(j, &b)| ids.get(j).copied().unwrap_or(0) == b)
    }
    /// Writes `l` into slot `s` (`words`: its id's, [`LeaseId::words`]).
    fn write_slot(&mut self, s: u32, l: &Lease, words: &[u64; MAX_ID_WORDS])
    where
        W: DerefMut,
    {
        let at = self.base(s);
        let idw = self.id_words();
        self.w[at] = l.deadline_ns;
        self.w[at + 1] = l.lease_ms | l.units << LEASE_MS_BITS | (l.id.len as u64 - 1) << (LEASE_MS_BITS + UNITS_BITS);
        self.w[at + SLOT_FIXED..at + SLOT_FIXED + idw].copy_from_slice(&words[..idw]);
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
        if self.w[0] == 0 {
            self.w[WIDTH_AT] &= !MIXED;
        }
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
        ]);
        Self::open(words)
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
    fn uniform_lease_ms(&self) -> Option<u64> {
        (self.len() > 0 && self.w[WIDTH_AT] & MIXED == 0).then(|| self.lease_ms_of(self.root()))
    }
    fn count_through(&self, t_ns: u64, at_most: usize) -> usize {
        if self.w[FIRST_AT] > t_ns || self.len() == 0 {
            return 0;
        }
        self.tree_count(t_ns, at_most)
    }
    fn times(&self, i: usize) -> (u64, u64, u64) {
        let s = i as u32;
        (self.deadline(s), self.lease_ms_of(s), self.units_of(s))
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
        self.note_lease_ms(lease.lease_ms);
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
        if self.len() > 1 {
            self.note_lease_ms(lease_ms);
        }
        let root = self.tree_remove(self.root(), &k, 0);
        let at = self.base(s);
        self.w[at] = deadline_ns;
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
    fn clamp(&mut self, t_ns: u64) {
        let n = self.len() as u32;
        let starts_after =
            |b: &Self, s: u32| b.deadline(s).saturating_sub(b.lease_ms_of(s).saturating_mul(NS_PER_MS)) > t_ns;
        let m = (0..n).filter(|&s| starts_after(self, s)).count();
        if m == 0 {
            return;
        }
        if m < REBUILD_FROM.max(n as usize / 8) {
            // A few leases: each moved in the tree, O(m log n).
            for s in 0..n {
                if starts_after(self, s) {
                    let root = self.tree_remove(self.root(), &self.key(s), 0);
                    let at = self.base(s);
                    self.w[at] = t_ns.saturating_add(self.lease_ms_of(s).saturating_mul(NS_PER_MS));
                    let root = self.tree_insert(root, s, &self.key(s));
                    self.set_root(root);
                }
            }
        } else {
            // Many: the deadlines set in place, then the tree built again
            // from the slots in order, O(n log n) in one sort.
            for s in 0..n {
                if starts_after(self, s) {
                    let at = self.base(s);
                    self.w[at] = t_ns.saturating_add(self.lease_ms_of(s).saturating_mul(NS_PER_MS));
                }
            }
            self.rebuild();
        }
        self.refresh_ends();
    }
}

/// From how many moved leases [`LeaseStore::clamp`] builds the tree again
/// rather than moving each (and from an eighth of the set).
const REBUILD_FROM: usize = 512;
