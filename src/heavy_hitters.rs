//! Heavy hitters in bounded memory: the Space-Saving summary (Metwally,
//! Agrawal, El Abbadi, 2005), weighted.
//!
//! It holds at most `capacity` keys, each with a `count` and an `error`.
//! A key already held adds its weight to its count. A new key takes a free
//! slot, or else the slot of a key with the smallest count `m`, starting
//! at `count = m + weight`, `error = m`. So for every key held:
//!
//! ```text
//! count - error <= true weight of the key <= count
//! ```
//!
//! and every key whose true weight exceeds the smallest count is held.
//!
//! Memory is a few blocks allocated when the summary is made and never
//! again: the slots, each with up to [`KEY_BYTES`] of its key; an
//! open-addressing hash table (linear probing, at most a quarter full) from
//! a key to its slot; and a [`Ranking`] of the slots by count, which finds a
//! smallest and moves a slot up when its count grows. Two rankings:
//!
//! - [`Buckets`], Metwally's Stream-Summary: slots of equal count share a
//!   bucket, the buckets form a list by count. Adding 1 and evicting a
//!   smallest are O(1) (no search, no sift), which is what a flood of
//!   distinct keys each counted once needs. A larger weight walks the
//!   buckets it passes, so it is for unit weights (denials).
//! - [`Heap`]: a binary min-heap, O(log capacity) whatever the weight
//!   (consumed units).
//!
//! A key longer than [`KEY_BYTES`] is held by its first [`KEY_BYTES`] bytes,
//! marked as shortened: every key that long with the same prefix adds to
//! that one entry. Adding a weight allocates nothing; the work is one hash
//! of the key, a probe, and the ranking's step.
//!
//! The blocks come from a [`Memory`]: the server's allocator in the module
//! (so `used_memory` sees them), the system's in tests.

use std::marker::PhantomData;
use std::ptr::NonNull;

/// The bytes of a key a slot holds; a longer key is held by this prefix.
pub const KEY_BYTES: usize = 64;

/// The largest summary: about 140 bytes a slot, so 140 MB at most.
pub const MAX_CAPACITY: usize = 1_000_000;

/// Where the summary's blocks come from.
pub trait Memory {
    /// A block of `bytes` bytes aligned to 8; never NULL.
    fn alloc(bytes: usize) -> NonNull<u8>;
    /// # Safety
    /// `p` came from [`alloc`](Self::alloc) with `bytes`, and is not used again.
    unsafe fn free(p: NonNull<u8>, bytes: usize);
}

/// The system allocator (tests, benchmarks).
pub struct SystemMemory;

impl Memory for SystemMemory {
    fn alloc(bytes: usize) -> NonNull<u8> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(8), 8).unwrap_or_else(|_| unreachable!());
        // SAFETY: a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
    }
    unsafe fn free(p: NonNull<u8>, bytes: usize) {
        let layout = std::alloc::Layout::from_size_align(bytes.max(8), 8).unwrap_or_else(|_| unreachable!());
        // SAFETY: allocated by `alloc` with this layout, per the contract.
        unsafe { std::alloc::dealloc(p.as_ptr(), layout) }
    }
}

/// One held key (its count is the ranking's).
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    hash: u64,
    error: u64,
    /// Bytes of `key` in use.
    len: u8,
    /// The key was longer than [`KEY_BYTES`]: `key` is its prefix.
    shortened: bool,
    key: [u8; KEY_BYTES],
}

/// No slot, no bucket, an empty table cell.
const NIL: u32 = u32::MAX;

/// A block of `n` values of `T`, zeroed.
struct Block<T, M: Memory> {
    ptr: NonNull<T>,
    n: usize,
    memory: PhantomData<M>,
}

impl<T: Copy, M: Memory> Block<T, M> {
    fn new(n: usize) -> Self {
        let bytes = n * size_of::<T>();
        let ptr = M::alloc(bytes).cast::<T>();
        // SAFETY: a fresh block of `bytes` bytes; every T used here is plain
        // data for which all-zero bytes are a valid value.
        unsafe { ptr.as_ptr().cast::<u8>().write_bytes(0, bytes.max(8)) };
        Self { ptr, n, memory: PhantomData }
    }

    fn bytes(&self) -> usize {
        self.n * size_of::<T>()
    }

    #[inline]
    fn as_slice(&self) -> &[T] {
        // SAFETY: `n` initialised values, owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.n) }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed mutably through self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.n) }
    }
}

impl<T: Copy, M: Memory> std::ops::Index<u32> for Block<T, M> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        &self.as_slice()[i as usize]
    }
}

impl<T: Copy, M: Memory> std::ops::IndexMut<u32> for Block<T, M> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        &mut self.as_mut_slice()[i as usize]
    }
}

impl<T, M: Memory> Drop for Block<T, M> {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this size; dropped once.
        unsafe { M::free(self.ptr.cast(), self.n * size_of::<T>()) }
    }
}

// SAFETY: a Block owns its memory outright, like a Box<[T]>.
unsafe impl<T: Send, M: Memory> Send for Block<T, M> {}

/// One entry of a [`SpaceSaving::top`] answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hitter {
    /// The key, or its first [`KEY_BYTES`] bytes if `shortened`.
    pub key: Vec<u8>,
    pub shortened: bool,
    pub count: u64,
    /// `count - error` is a lower bound of the key's true weight.
    pub error: u64,
}

/// How a summary keeps its slots ordered by count. Slots are numbered
/// from 0 in the order they are first used; every call names a slot in use
/// but [`insert`](Self::insert).
pub trait Ranking: Sized {
    /// Room for `capacity` slots (at least 1), none in use.
    fn new(capacity: usize) -> Self;
    /// Bytes held.
    fn bytes(&self) -> usize;
    /// Puts `slot`, the next unused one, in use with `count`.
    fn insert(&mut self, slot: u32, count: u64);
    /// Adds `by` to the count of `slot` (saturating).
    fn raise(&mut self, slot: u32, by: u64);
    /// A slot with the smallest count (some slot is in use).
    fn smallest(&self) -> u32;
    fn count(&self, slot: u32) -> u64;
    /// No slot in use.
    fn clear(&mut self);
    /// Panics unless the structure is sound with slots `0..in_use` in use.
    #[cfg(test)]
    fn check(&self, in_use: usize);
}

/// The Space-Saving summary (see the module's docs), its slots ranked by `R`.
pub struct SpaceSaving<M: Memory, R: Ranking> {
    slots: Block<Slot, M>,
    /// Slot index per cell, or [`NIL`]; a power of two in size.
    table: Block<u32, M>,
    rank: R,
    len: usize,
    seed: u64,
}

impl<M: Memory, R: Ranking> SpaceSaving<M, R> {
    /// An empty summary of `capacity` keys (1 to [`MAX_CAPACITY`]); `seed`
    /// keys its hash, so that nobody can choose keys that collide.
    pub fn new(capacity: usize, seed: u64) -> Option<Self> {
        if !(1..=MAX_CAPACITY).contains(&capacity) {
            return None;
        }
        // At most a quarter full: a probe, and the run an eviction closes
        // up, are then a cell or two.
        let cells = (4 * capacity).next_power_of_two();
        let mut s = Self {
            slots: Block::new(capacity),
            table: Block::new(cells),
            rank: R::new(capacity),
            len: 0,
            seed: fold(seed ^ HASH_K0, HASH_K1) & !1,
        };
        s.table.as_mut_slice().fill(NIL);
        Some(s)
    }

    pub fn capacity(&self) -> usize {
        self.slots.n
    }

    /// Bytes held (what the summary adds to `used_memory`, allocator
    /// overhead aside).
    pub fn bytes(&self) -> usize {
        self.slots.bytes() + self.table.bytes() + self.rank.bytes()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every key.
    pub fn clear(&mut self) {
        self.len = 0;
        self.table.as_mut_slice().fill(NIL);
        self.rank.clear();
    }

    /// Adds `weight` to `key`.
    #[inline]
    pub fn add(&mut self, key: &[u8], weight: u64) {
        let shortened = key.len() > KEY_BYTES;
        let key = &key[..key.len().min(KEY_BYTES)];
        let hash = hash(self.seed, key, shortened);
        let (table, slots) = (self.table.as_slice(), self.slots.as_slice());
        let mask = table.len() - 1;
        let mut cell = hash as usize & mask;
        // At most a quarter of the cells are full, so the probe ends at an empty one.
        loop {
            let at = table[cell];
            if at == NIL {
                break;
            }
            let s = &slots[at as usize];
            if s.hash == hash && s.shortened == shortened && &s.key[..s.len as usize] == key {
                self.rank.raise(at, weight);
                return;
            }
            cell = (cell + 1) & mask;
        }
        if self.len < self.capacity() {
            let at = self.len as u32;
            self.len += 1;
            self.table.as_mut_slice()[cell] = at;
            fill(&mut self.slots[at], key, shortened, hash, 0);
            self.rank.insert(at, weight);
        } else {
            // Evict a smallest: the new key inherits its count as error.
            let at = self.rank.smallest();
            let m = self.rank.count(at);
            let old_hash = self.slots[at].hash;
            self.unlink(old_hash, at);
            fill(&mut self.slots[at], key, shortened, hash, m);
            self.link(hash, at);
            self.rank.raise(at, weight);
        }
    }

    /// The `n` keys with the highest counts, highest first, ties by key.
    pub fn top(&self, n: usize) -> Vec<Hitter> {
        let slots = &self.slots.as_slice()[..self.len];
        let mut order: Vec<(u64, &Slot)> =
            (0..self.len as u32).map(|at| (self.rank.count(at), &slots[at as usize])).collect();
        order.sort_unstable_by(|(ca, a), (cb, b)| {
            cb.cmp(ca)
                .then_with(|| a.key[..a.len as usize].cmp(&b.key[..b.len as usize]))
                .then_with(|| a.shortened.cmp(&b.shortened))
        });
        order
            .into_iter()
            .take(n)
            .map(|(count, s)| Hitter {
                key: s.key[..s.len as usize].to_vec(),
                shortened: s.shortened,
                count,
                error: s.error,
            })
            .collect()
    }

    /// The smallest count held, 0 while there is a free slot: a key not
    /// held has a true weight of at most this.
    pub fn floor(&self) -> u64 {
        if self.len < self.capacity() {
            0
        } else {
            self.rank.count(self.rank.smallest())
        }
    }

    /// Puts slot `at` in the table (there is room: at most a quarter full).
    #[inline]
    fn link(&mut self, hash: u64, at: u32) {
        let mask = self.table.n - 1;
        let table = self.table.as_mut_slice();
        let mut cell = hash as usize & mask;
        while table[cell] != NIL {
            cell = (cell + 1) & mask;
        }
        table[cell] = at;
    }

    /// Takes slot `at` out of the table, moving later cells of its probe
    /// run back so that every key stays reachable from its home cell.
    #[inline]
    fn unlink(&mut self, hash: u64, at: u32) {
        let mask = self.table.n - 1;
        let slots = self.slots.as_slice();
        let table = self.table.as_mut_slice();
        let mut hole = hash as usize & mask;
        while table[hole] != at {
            if table[hole] == NIL {
                return; // not linked: nothing to do
            }
            hole = (hole + 1) & mask;
        }
        let mut cell = hole;
        loop {
            cell = (cell + 1) & mask;
            let held = table[cell];
            if held == NIL {
                break;
            }
            let home = slots[held as usize].hash as usize & mask;
            // Move it back if its home is not in (hole, cell], cyclically.
            let stays = if hole <= cell { hole < home && home <= cell } else { hole < home || home <= cell };
            if !stays {
                table[hole] = held;
                hole = cell;
            }
        }
        table[hole] = NIL;
    }
}

/// Writes a key into a slot (only its first `key.len()` bytes are read back).
#[inline]
fn fill(s: &mut Slot, key: &[u8], shortened: bool, hash: u64, error: u64) {
    s.hash = hash;
    s.error = error;
    s.len = key.len() as u8;
    s.shortened = shortened;
    s.key[..key.len()].copy_from_slice(key);
}

/// Metwally's Stream-Summary: the slots of one count form a bucket (a
/// doubly linked list of slots), and the buckets a doubly linked list by
/// increasing count. A bucket is in the list only while it holds a slot,
/// so there are never more buckets in use than slots.
pub struct Buckets<M: Memory> {
    buckets: Block<Bucket, M>,
    members: Block<Member, M>,
    /// The bucket of the smallest count, or [`NIL`].
    lowest: u32,
    /// The unused buckets, linked by `next`.
    free: u32,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Bucket {
    count: u64,
    /// Its first slot ([`NIL`] only while unused).
    first: u32,
    /// The buckets of the next smaller and next larger counts.
    prev: u32,
    next: u32,
}

/// A slot's place: its bucket and its neighbours there.
#[derive(Clone, Copy)]
#[repr(C)]
struct Member {
    bucket: u32,
    prev: u32,
    next: u32,
}

impl<M: Memory> Buckets<M> {
    #[inline]
    fn lists(&mut self) -> Lists<'_> {
        Lists {
            buckets: self.buckets.as_mut_slice(),
            members: self.members.as_mut_slice(),
            lowest: &mut self.lowest,
            free: &mut self.free,
        }
    }
}

/// A [`Buckets`] borrowed as plain slices for one change (so each index is
/// checked against a length held in a register).
struct Lists<'a> {
    buckets: &'a mut [Bucket],
    members: &'a mut [Member],
    lowest: &'a mut u32,
    free: &'a mut u32,
}

impl Lists<'_> {
    #[inline(always)]
    fn bucket(&mut self, b: u32) -> &mut Bucket {
        &mut self.buckets[b as usize]
    }

    #[inline(always)]
    fn member(&mut self, m: u32) -> &mut Member {
        &mut self.members[m as usize]
    }

    /// Takes `slot` out of its bucket, and the bucket out of the list if
    /// that empties it. Returns a bucket counting less than the slot did
    /// or the same, from which to look for its new bucket ([`NIL`]: the
    /// front of the list).
    #[inline(always)]
    fn detach(&mut self, slot: u32) -> u32 {
        let Member { bucket, prev, next } = *self.member(slot);
        if prev != NIL {
            self.member(prev).next = next;
        } else {
            self.bucket(bucket).first = next;
        }
        if next != NIL {
            self.member(next).prev = prev;
        }
        let Bucket { first, prev, next, .. } = *self.bucket(bucket);
        if first != NIL {
            return bucket;
        }
        if prev != NIL {
            self.bucket(prev).next = next;
        } else {
            *self.lowest = next;
        }
        if next != NIL {
            self.bucket(next).prev = prev;
        }
        self.bucket(bucket).next = *self.free;
        *self.free = bucket;
        prev
    }

    /// Puts a detached `slot` in the bucket of `count`, made if need be,
    /// looking forward from `from` (a bucket counting at most `count`, or
    /// [`NIL`] for the front). For a count 1 above `from`'s, that is at
    /// most two steps.
    #[inline(always)]
    fn settle(&mut self, slot: u32, count: u64, from: u32) {
        let mut before = from;
        let mut after = if before == NIL { *self.lowest } else { self.bucket(before).next };
        while after != NIL && self.bucket(after).count <= count {
            before = after;
            after = self.bucket(after).next;
        }
        let bucket = if before != NIL && self.bucket(before).count == count {
            before
        } else {
            // There is an unused bucket: the buckets in use each hold a
            // slot, and this slot is in none.
            let b = *self.free;
            *self.free = self.bucket(b).next;
            *self.bucket(b) = Bucket { count, first: NIL, prev: before, next: after };
            if before != NIL {
                self.bucket(before).next = b;
            } else {
                *self.lowest = b;
            }
            if after != NIL {
                self.bucket(after).prev = b;
            }
            b
        };
        let first = self.bucket(bucket).first;
        *self.member(slot) = Member { bucket, prev: NIL, next: first };
        if first != NIL {
            self.member(first).prev = slot;
        }
        self.bucket(bucket).first = slot;
    }
}

impl<M: Memory> Ranking for Buckets<M> {
    fn new(capacity: usize) -> Self {
        let mut b = Self { buckets: Block::new(capacity), members: Block::new(capacity), lowest: NIL, free: NIL };
        b.clear();
        b
    }

    fn bytes(&self) -> usize {
        self.buckets.bytes() + self.members.bytes()
    }

    #[inline]
    fn insert(&mut self, slot: u32, count: u64) {
        self.lists().settle(slot, count, NIL);
    }

    #[inline]
    fn raise(&mut self, slot: u32, by: u64) {
        let mut lists = self.lists();
        let Member { bucket, prev, next } = *lists.member(slot);
        let Bucket { count: old, next: above, .. } = *lists.bucket(bucket);
        let count = old.saturating_add(by);
        if count == old {
            return;
        }
        // Alone in its bucket, with no bucket up to the new count: the
        // bucket itself moves up.
        if prev == NIL && next == NIL && (above == NIL || lists.bucket(above).count > count) {
            lists.bucket(bucket).count = count;
            return;
        }
        let from = lists.detach(slot);
        lists.settle(slot, count, from);
    }

    #[inline]
    fn smallest(&self) -> u32 {
        self.buckets[self.lowest].first
    }

    #[inline]
    fn count(&self, slot: u32) -> u64 {
        self.buckets[self.members[slot].bucket].count
    }

    #[cfg(test)]
    fn check(&self, in_use: usize) {
        // The list by strictly increasing count, each bucket non-empty,
        // each member pointing back at it: every slot in use exactly once.
        let (mut seen, mut prev, mut b, mut last) = (0, NIL, self.lowest, None);
        let mut listed = 0;
        while b != NIL {
            let bucket = self.buckets[b];
            assert_eq!(bucket.prev, prev);
            assert!(last < Some(bucket.count), "counts out of order");
            assert_ne!(bucket.first, NIL, "empty bucket listed");
            let (mut m, mut before) = (bucket.first, NIL);
            while m != NIL {
                assert!((m as usize) < in_use);
                assert_eq!((self.members[m].bucket, self.members[m].prev), (b, before));
                seen += 1;
                (before, m) = (m, self.members[m].next);
            }
            (prev, last, b) = (b, Some(bucket.count), bucket.next);
            listed += 1;
        }
        assert_eq!(seen, in_use);
        let mut free = 0;
        let mut f = self.free;
        while f != NIL {
            free += 1;
            f = self.buckets[f].next;
        }
        assert_eq!(listed + free, self.buckets.n, "buckets lost");
    }

    fn clear(&mut self) {
        let n = self.buckets.n as u32;
        for (b, bucket) in (0..).zip(self.buckets.as_mut_slice()) {
            *bucket = Bucket { count: 0, first: NIL, prev: NIL, next: if b + 1 < n { b + 1 } else { NIL } };
        }
        self.free = 0;
        self.lowest = NIL;
    }
}

/// A binary min-heap of the slots by count.
pub struct Heap<M: Memory> {
    /// The heap over the first `len`.
    places: Block<Place, M>,
    /// Each slot's index in `places`.
    place_of: Block<u32, M>,
    len: usize,
}

/// One place in the heap: a slot and a copy of its count, so that a sift
/// compares counts without following the index.
#[derive(Clone, Copy)]
#[repr(C)]
struct Place {
    count: u64,
    slot: u32,
}

/// Children per heap node.
const ARITY: usize = 2;

impl<M: Memory> Heap<M> {
    /// A place holding the smallest count whose children all count more.
    /// The places that hold the smallest count form a subtree under the
    /// root, so this walks down it, comparing only; raising there by 1
    /// needs no sift at all (a flood of distinct keys, whose counts all
    /// tie, would otherwise sink each new key from the root through every
    /// level).
    #[inline]
    fn lowest_smallest(&self) -> usize {
        let heap = &self.places.as_slice()[..self.len];
        let m = heap[0].count;
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            match (first..(first + ARITY).min(heap.len())).find(|&c| heap[c].count == m) {
                Some(c) => i = c,
                None => return i,
            }
        }
    }

    /// Moves the place at `i` up while its parent counts more.
    fn sift_up(&mut self, mut i: usize) {
        let heap = self.places.as_mut_slice();
        let place_of = self.place_of.as_mut_slice();
        let moving = heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if heap[parent].count <= moving.count {
                break;
            }
            heap[i] = heap[parent];
            place_of[heap[i].slot as usize] = i as u32;
            i = parent;
        }
        heap[i] = moving;
        place_of[moving.slot as usize] = i as u32;
    }

    /// Moves the place at `i` down while a child counts less.
    fn sift_down(&mut self, mut i: usize) {
        let len = self.len;
        let heap = &mut self.places.as_mut_slice()[..len];
        let place_of = self.place_of.as_mut_slice();
        let moving = heap[i];
        loop {
            let first = ARITY * i + 1;
            if first >= len {
                break;
            }
            let mut child = first;
            for c in first + 1..(first + ARITY).min(len) {
                if heap[c].count < heap[child].count {
                    child = c;
                }
            }
            if moving.count <= heap[child].count {
                break;
            }
            heap[i] = heap[child];
            place_of[heap[i].slot as usize] = i as u32;
            i = child;
        }
        heap[i] = moving;
        place_of[moving.slot as usize] = i as u32;
    }
}

impl<M: Memory> Ranking for Heap<M> {
    fn new(capacity: usize) -> Self {
        Self { places: Block::new(capacity), place_of: Block::new(capacity), len: 0 }
    }

    fn bytes(&self) -> usize {
        self.places.bytes() + self.place_of.bytes()
    }

    fn insert(&mut self, slot: u32, count: u64) {
        let i = self.len;
        self.len += 1;
        self.places.as_mut_slice()[i] = Place { count, slot };
        self.sift_up(i);
    }

    fn raise(&mut self, slot: u32, by: u64) {
        let i = self.place_of[slot] as usize;
        let place = &mut self.places.as_mut_slice()[i];
        place.count = place.count.saturating_add(by);
        self.sift_down(i);
    }

    fn smallest(&self) -> u32 {
        self.places.as_slice()[self.lowest_smallest()].slot
    }

    fn count(&self, slot: u32) -> u64 {
        self.places.as_slice()[self.place_of[slot] as usize].count
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    #[cfg(test)]
    fn check(&self, in_use: usize) {
        assert_eq!(self.len, in_use);
        let heap = &self.places.as_slice()[..self.len];
        for (i, p) in heap.iter().enumerate() {
            assert_eq!(self.place_of[p.slot] as usize, i);
            assert!(i == 0 || heap[(i - 1) / ARITY].count <= p.count, "heap order");
        }
    }
}

/// A keyed 64-bit hash in the manner of wyhash and rapidhash: a key of up
/// to 16 bytes is read in two (overlapping) words, a longer one 16 bytes a
/// step (at most four steps: keys are at most [`KEY_BYTES`] long here),
/// and folded by 64 x 64 -> 128-bit multiplies. Not cryptographic: the
/// seed keeps colliding keys from being chosen.
#[inline(always)]
fn hash(seed: u64, key: &[u8], shortened: bool) -> u64 {
    let len = key.len();
    let mut seed = seed ^ shortened as u64;
    let (a, b) = if len <= 16 {
        if len >= 8 {
            (word(key, 0), word(key, len - 8))
        } else if len >= 4 {
            ((half(key, 0) << 32) | half(key, len - 4), 0)
        } else if len > 0 {
            ((u64::from(key[0]) << 16) | (u64::from(key[len / 2]) << 8) | u64::from(key[len - 1]), 0)
        } else {
            (0, 0)
        }
    } else {
        let mut i = 0;
        while len - i > 16 {
            seed = fold(word(key, i) ^ HASH_K1, word(key, i + 8) ^ seed);
            i += 16;
        }
        (word(key, len - 16), word(key, len - 8))
    };
    let product = u128::from(a ^ HASH_K1) * u128::from(b ^ seed);
    fold(product as u64 ^ HASH_K0 ^ len as u64, (product >> 64) as u64 ^ HASH_K1)
}

/// wyhash's constants: odd, with as many 1 bits as 0 bits.
const HASH_K0: u64 = 0x2d35_8dcc_aa6c_78a5;
const HASH_K1: u64 = 0x8bb8_4b93_962e_acc9;

/// Multiplies to 128 bits and folds the halves together.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    product as u64 ^ (product >> 64) as u64
}

/// The 8 bytes of `key` from `at`, little-endian.
#[inline(always)]
fn word(key: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&key[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The 4 bytes of `key` from `at`, little-endian.
#[inline(always)]
fn half(key: &[u8], at: usize) -> u64 {
    let mut w = [0; 4];
    w.copy_from_slice(&key[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Each test runs once per ranking.
    macro_rules! for_each_ranking {
        ($($name:ident)*) => {$(
            mod $name {
                use super::*;
                #[test]
                fn heap() {
                    super::$name::<Heap<SystemMemory>>();
                }
                #[test]
                fn buckets() {
                    super::$name::<Buckets<SystemMemory>>();
                }
            }
        )*};
    }
    for_each_ranking! {
        counts_exactly_while_every_key_fits
        a_new_key_takes_the_smallest_slot_and_inherits_its_count_as_error
        ties_are_ordered_by_key
        long_keys_are_held_by_their_prefix_and_marked
        clear_forgets_everything
        capacity_is_bounded
        the_space_saving_bounds_hold_against_exact_counts
        a_flood_of_distinct_unit_keys_keeps_the_bounds_and_the_heavy_keys
        held_keys_stay_reachable_through_evictions
    }

    fn summary<R: Ranking>(capacity: usize) -> SpaceSaving<SystemMemory, R> {
        SpaceSaving::new(capacity, 42).unwrap()
    }

    fn counts_exactly_while_every_key_fits<R: Ranking>() {
        let mut s = summary::<R>(4);
        for (k, w) in [(&b"a"[..], 3), (b"b", 1), (b"a", 2), (b"c", 5)] {
            s.add(k, w);
        }
        let top = s.top(10);
        let rows: Vec<_> = top.iter().map(|h| (h.key.as_slice(), h.count, h.error)).collect();
        assert_eq!(rows, [(&b"a"[..], 5, 0), (b"c", 5, 0), (b"b", 1, 0)]);
        assert_eq!(s.floor(), 0);
    }

    fn a_new_key_takes_the_smallest_slot_and_inherits_its_count_as_error<R: Ranking>() {
        let mut s = summary::<R>(2);
        s.add(b"a", 5);
        s.add(b"b", 2);
        s.add(b"c", 1);
        let top = s.top(2);
        assert_eq!((top[0].key.as_slice(), top[0].count, top[0].error), (&b"a"[..], 5, 0));
        assert_eq!((top[1].key.as_slice(), top[1].count, top[1].error), (&b"c"[..], 3, 2));
        assert_eq!(s.floor(), 3);
    }

    fn ties_are_ordered_by_key<R: Ranking>() {
        let mut s = summary::<R>(8);
        for k in [&b"d"[..], b"b", b"c", b"a"] {
            s.add(k, 7);
        }
        let keys: Vec<_> = s.top(3).into_iter().map(|h| h.key).collect();
        assert_eq!(keys, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    }

    fn long_keys_are_held_by_their_prefix_and_marked<R: Ranking>() {
        let mut s = summary::<R>(8);
        let long_a = [b'x'; KEY_BYTES + 10];
        let mut long_b = [b'x'; KEY_BYTES + 1];
        long_b[KEY_BYTES] = b'y';
        s.add(&long_a, 1);
        s.add(&long_b, 2);
        s.add(&long_a[..KEY_BYTES], 4); // exactly the prefix: another key
        let top = s.top(10);
        assert_eq!(top.len(), 2);
        assert_eq!((top[0].key.len(), top[0].shortened, top[0].count), (KEY_BYTES, false, 4));
        assert_eq!((top[1].key.len(), top[1].shortened, top[1].count), (KEY_BYTES, true, 3));
    }

    fn clear_forgets_everything<R: Ranking>() {
        let mut s = summary::<R>(3);
        for k in [&b"a"[..], b"b", b"c", b"d"] {
            s.add(k, 1);
        }
        s.clear();
        assert!(s.top(10).is_empty() && s.is_empty());
        s.add(b"d", 1);
        assert_eq!(s.top(10)[0].count, 1);
        // And every slot can be used again.
        s.clear();
        for (k, w) in [(&b"e"[..], 3), (b"f", 2), (b"g", 1), (b"h", 1)] {
            s.add(k, w);
        }
        let rows: Vec<_> = s.top(10).into_iter().map(|h| (h.key, h.count, h.error)).collect();
        assert_eq!(rows, [(b"e".to_vec(), 3, 0), (b"f".to_vec(), 2, 0), (b"h".to_vec(), 2, 1)]);
    }

    fn capacity_is_bounded<R: Ranking>() {
        assert!(SpaceSaving::<SystemMemory, R>::new(0, 1).is_none());
        assert!(SpaceSaving::<SystemMemory, R>::new(MAX_CAPACITY + 1, 1).is_none());
        let s = summary::<R>(1000);
        assert_eq!(s.capacity(), 1000);
        assert!(s.bytes() >= 1000 * (KEY_BYTES + 24));
        assert!(s.bytes() <= 1000 * 160, "{} bytes", s.bytes());
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// Checks `s` against the exact weights of its stream: every key held
    /// satisfies count - error <= true <= count; every key not held has a
    /// true weight of at most the floor; the counts sum to the stream's
    /// total weight; the answer is highest first, ties by key.
    fn check_bounds<R: Ranking>(s: &SpaceSaving<SystemMemory, R>, exact: &HashMap<Vec<u8>, u64>, what: &str) {
        let capacity = s.capacity();
        let held = s.top(capacity);
        assert_eq!(held.len(), capacity.min(exact.len()), "{what}");
        assert_eq!(held.iter().map(|h| h.count).sum::<u64>(), exact.values().sum::<u64>(), "{what}");
        for h in &held {
            let truth = exact[&h.key];
            assert!(h.count - h.error <= truth && truth <= h.count, "{what}: {h:?} true {truth}");
        }
        for (key, truth) in exact {
            if !held.iter().any(|h| &h.key == key) {
                assert!(*truth <= s.floor(), "{what}: {key:?} {truth} > floor {}", s.floor());
            }
        }
        for pair in held.windows(2) {
            assert!(
                pair[0].count > pair[1].count || (pair[0].count == pair[1].count && pair[0].key < pair[1].key),
                "{what}: {pair:?}"
            );
        }
    }

    /// Against exact counts, over skewed streams of many sizes and weights.
    fn the_space_saving_bounds_hold_against_exact_counts<R: Ranking>() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let capacity = 1 + (rng.next() % 64) as usize;
            let keys = 1 + rng.next() % 400;
            let mut s = summary::<R>(capacity);
            let mut exact: HashMap<Vec<u8>, u64> = HashMap::new();
            for _ in 0..3000 {
                // Skewed: low numbers far more often.
                let r = rng.next() % keys;
                let k = (r * r) / keys;
                let key = format!("key:{k}").into_bytes();
                let w = 1 + rng.next() % 5;
                s.add(&key, w);
                *exact.entry(key).or_default() += w;
            }
            check_bounds(&s, &exact, &format!("seed {seed}"));
            s.rank.check(s.len());
        }
    }

    /// What RL.TOP DENIED sees in a flood: weight 1 only, most keys new,
    /// a few heavy ones among them; and a reset now and then. The bounds
    /// hold every thousand steps or so, and the heavy keys top the list.
    fn a_flood_of_distinct_unit_keys_keeps_the_bounds_and_the_heavy_keys<R: Ranking>() {
        let mut heavy_checked = 0;
        for seed in 1..=12u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
            let capacity = 1 + (rng.next() % 60) as usize;
            let mut s = summary::<R>(capacity);
            let mut exact: HashMap<Vec<u8>, u64> = HashMap::new();
            for step in 0..20_000u64 {
                let key = match rng.next() % 8 {
                    0 | 1 => format!("heavy:{}", rng.next() % 3),
                    2 => format!("warm:{}", rng.next() % (2 * capacity as u64)),
                    _ => format!("once:{step}"),
                }
                .into_bytes();
                s.add(&key, 1);
                *exact.entry(key).or_default() += 1;
                if step % 997 == 0 {
                    check_bounds(&s, &exact, &format!("seed {seed} step {step}"));
                    s.rank.check(s.len());
                }
                if step % 7919 == 7918 {
                    s.clear();
                    exact.clear();
                }
            }
            check_bounds(&s, &exact, &format!("seed {seed}"));
            // Each heavy key has a twelfth of the stream; any other key
            // counts at most the floor (at most total / capacity) plus its
            // own few: from 20 slots on, the heavy keys come first.
            if capacity >= 20 {
                heavy_checked += 1;
                let mut first: Vec<_> = s.top(3).into_iter().map(|h| h.key).collect();
                first.sort();
                assert_eq!(first, [&b"heavy:0"[..], b"heavy:1", b"heavy:2"], "seed {seed}, capacity {capacity}");
            }
        }
        assert!(heavy_checked >= 3, "only {heavy_checked} seeds had 20 slots or more");
    }

    /// The table survives heavy eviction: every held key is still found
    /// (adding to it raises its count instead of taking another slot).
    fn held_keys_stay_reachable_through_evictions<R: Ranking>() {
        let mut s = summary::<R>(16);
        let mut rng = Rng(7);
        for i in 0..20_000u64 {
            let key = format!("{}", rng.next() % 1000 + if i % 3 == 0 { 0 } else { 5000 });
            s.add(key.as_bytes(), 1);
        }
        for h in s.top(16) {
            let before = s.top(16).into_iter().find(|x| x.key == h.key).unwrap().count;
            s.add(&h.key, 1_000_000);
            let after = s.top(16).into_iter().find(|x| x.key == h.key).unwrap().count;
            assert_eq!(after, before + 1_000_000);
        }
        assert_eq!(s.len(), 16);
    }

    /// Counts saturate instead of wrapping, in both rankings.
    #[test]
    fn counts_saturate() {
        let mut heap = summary::<Heap<SystemMemory>>(2);
        let mut buckets = summary::<Buckets<SystemMemory>>(2);
        for (k, w) in [(&b"a"[..], u64::MAX - 1), (b"a", 5), (b"b", 1), (b"b", u64::MAX)] {
            heap.add(k, w);
            buckets.add(k, w);
        }
        let rows = |h: Vec<Hitter>| h.into_iter().map(|h| (h.key, h.count)).collect::<Vec<_>>();
        let want = [(b"a".to_vec(), u64::MAX), (b"b".to_vec(), u64::MAX)];
        assert_eq!(rows(heap.top(2)), want);
        assert_eq!(rows(buckets.top(2)), want);
    }
}
