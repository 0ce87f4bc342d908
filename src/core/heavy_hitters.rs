//! Heavy hitters in bounded memory: the Space-Saving summary (Metwally,
//! Agrawal, El Abbadi, 2005), weighted.
//!
//! It holds at most `capacity` keys, each with a `count` and an `error`.
//! A key already held adds its weight to its count. A new key takes a free
//! slot, or else the slot of the key with the smallest count `m`, starting
//! at `count = m + weight`, `error = m`. So for every key held:
//!
//! ```text
//! count - error <= true weight of the key <= count
//! ```
//!
//! and every key whose true weight exceeds the smallest count is held.
//!
//! Memory is one block per array, allocated when the summary is made and
//! never again: an 8-ary min-heap of slots by count (the next to evict on top), an
//! open-addressing hash table (linear probing, at most half full) from a
//! key to its slot, and the slots themselves with up to [`KEY_BYTES`] of
//! their key. A longer key is held by its first [`KEY_BYTES`] bytes, marked
//! as shortened: every key that long with the same prefix adds to that one
//! entry. Adding a weight allocates nothing; the work is one hash of the
//! key, a probe, and a heap sift of at most log8(capacity) levels.
//!
//! The blocks come from a [`Memory`]: the server's allocator in the module
//! (so `used_memory` sees them), the system's in tests.

use std::cmp::Ordering;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The bytes of a key a slot holds; a longer key is held by this prefix.
pub const KEY_BYTES: usize = 64;

/// The largest summary: about 100 bytes a slot, so 100 MB at most.
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

/// One held key.
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    count: u64,
    error: u64,
    hash: u64,
    /// Its index in the heap.
    heap_at: u32,
    /// Bytes of `key` in use.
    len: u8,
    /// The key was longer than [`KEY_BYTES`]: `key` is its prefix.
    shortened: bool,
    key: [u8; KEY_BYTES],
}

/// One place in the heap: a slot and a copy of its count, so that a sift
/// compares counts without following the index.
#[derive(Clone, Copy)]
#[repr(C)]
struct Place {
    count: u64,
    slot: u32,
}

/// Children per heap node. An eviction sinks the new key from the root
/// through every level when counts tie (a flood of distinct keys does
/// that), so a shallow heap (4 levels for 1024 keys) whose children sit
/// side by side costs half what a binary one does.
const ARITY: usize = 2;

/// An empty table cell.
const EMPTY: u32 = u32::MAX;

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

/// The Space-Saving summary (see the module's docs).
pub struct SpaceSaving<M: Memory> {
    slots: Block<Slot, M>,
    /// The slots, a min-heap by count over the first `len`.
    heap: Block<Place, M>,
    /// Slot index per cell, or [`EMPTY`]; a power of two in size.
    table: Block<u32, M>,
    len: usize,
    seed: u64,
}

impl<M: Memory> SpaceSaving<M> {
    /// An empty summary of `capacity` keys (1 to [`MAX_CAPACITY`]); `seed`
    /// keys its hash, so that nobody can choose keys that collide.
    pub fn new(capacity: usize, seed: u64) -> Option<Self> {
        if !(1..=MAX_CAPACITY).contains(&capacity) {
            return None;
        }
        let cells = (2 * capacity).next_power_of_two();
        let mut s = Self {
            slots: Block::new(capacity),
            heap: Block::new(capacity),
            table: Block::new(cells),
            len: 0,
            seed: seed | 1,
        };
        s.table.as_mut_slice().fill(EMPTY);
        Some(s)
    }

    pub fn capacity(&self) -> usize {
        self.slots.n
    }

    /// Bytes held (what the summary adds to `used_memory`, allocator
    /// overhead aside).
    pub fn bytes(&self) -> usize {
        self.slots.n * size_of::<Slot>() + self.heap.n * size_of::<Place>() + self.table.n * 4
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
        self.table.as_mut_slice().fill(EMPTY);
    }

    /// Adds `weight` to `key`.
    pub fn add(&mut self, key: &[u8], weight: u64) {
        let shortened = key.len() > KEY_BYTES;
        let key = &key[..key.len().min(KEY_BYTES)];
        let hash = hash(self.seed, key, shortened);
        let mask = self.table.n - 1;
        let mut cell = hash as usize & mask;
        // At most half the cells are full, so the probe ends at an empty one.
        loop {
            let at = self.table.as_slice()[cell];
            if at == EMPTY {
                break;
            }
            let s = &mut self.slots.as_mut_slice()[at as usize];
            if s.hash == hash && s.shortened == shortened && &s.key[..s.len as usize] == key {
                s.count = s.count.saturating_add(weight);
                let (from, count) = (s.heap_at as usize, s.count);
                self.heap.as_mut_slice()[from].count = count;
                self.sift_down(from);
                return;
            }
            cell = (cell + 1) & mask;
        }
        if self.len < self.capacity() {
            let at = self.len;
            self.len += 1;
            self.table.as_mut_slice()[cell] = at as u32;
            fill(&mut self.slots.as_mut_slice()[at], key, shortened, hash, weight, 0, at);
            self.heap.as_mut_slice()[at] = Place { count: weight, slot: at as u32 };
            self.sift_up(at);
        } else {
            // Evict a smallest: the new key inherits its count as error.
            let i = self.lowest_smallest();
            let Place { count: m, slot: at } = self.heap.as_slice()[i];
            let old_hash = self.slots.as_slice()[at as usize].hash;
            self.unlink(old_hash, at);
            let count = m.saturating_add(weight);
            fill(&mut self.slots.as_mut_slice()[at as usize], key, shortened, hash, count, m, i);
            self.link(hash, at);
            self.heap.as_mut_slice()[i].count = count;
            self.sift_down(i);
        }
    }

    /// The `n` keys with the highest counts, highest first, ties by key.
    pub fn top(&self, n: usize) -> Vec<Hitter> {
        let slots = &self.slots.as_slice()[..self.len];
        let mut order: Vec<&Slot> = slots.iter().collect();
        order.sort_unstable_by(|a, b| by_count_then_key(a, b));
        order
            .into_iter()
            .take(n)
            .map(|s| Hitter {
                key: s.key[..s.len as usize].to_vec(),
                shortened: s.shortened,
                count: s.count,
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
            self.heap.as_slice()[0].count
        }
    }

    /// Puts slot `at` in the table (there is room: at most half full).
    fn link(&mut self, hash: u64, at: u32) {
        let mask = self.table.n - 1;
        let table = self.table.as_mut_slice();
        let mut cell = hash as usize & mask;
        while table[cell] != EMPTY {
            cell = (cell + 1) & mask;
        }
        table[cell] = at;
    }

    /// Takes slot `at` out of the table, moving later cells of its probe
    /// run back so that every key stays reachable from its home cell.
    fn unlink(&mut self, hash: u64, at: u32) {
        let mask = self.table.n - 1;
        let slots = self.slots.as_slice();
        let table = self.table.as_mut_slice();
        let mut hole = hash as usize & mask;
        while table[hole] != at {
            if table[hole] == EMPTY {
                return; // not linked: nothing to do
            }
            hole = (hole + 1) & mask;
        }
        let mut cell = hole;
        loop {
            cell = (cell + 1) & mask;
            let held = table[cell];
            if held == EMPTY {
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
        table[hole] = EMPTY;
    }

    /// A place holding the smallest count whose children all count more.
    /// The places that hold the smallest count form a subtree under the
    /// root, so this walks down it, comparing only; evicting there, a
    /// weight of 1 needs no sift at all (a flood of distinct keys, whose
    /// counts all tie, would otherwise sink each new key from the root
    /// through every level).
    #[inline]
    fn lowest_smallest(&self) -> usize {
        let heap = &self.heap.as_slice()[..self.len];
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
        let heap = self.heap.as_mut_slice();
        let slots = self.slots.as_mut_slice();
        let moving = heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if heap[parent].count <= moving.count {
                break;
            }
            heap[i] = heap[parent];
            slots[heap[i].slot as usize].heap_at = i as u32;
            i = parent;
        }
        heap[i] = moving;
        slots[moving.slot as usize].heap_at = i as u32;
    }

    /// Moves the place at `i` down while a child counts less.
    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let len = self.len;
        let heap = &mut self.heap.as_mut_slice()[..len];
        let slots = self.slots.as_mut_slice();
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
            slots[heap[i].slot as usize].heap_at = i as u32;
            i = child;
        }
        heap[i] = moving;
        slots[moving.slot as usize].heap_at = i as u32;
    }
}

/// Writes a key into a slot (only its first `key.len()` bytes are read back).
fn fill(s: &mut Slot, key: &[u8], shortened: bool, hash: u64, count: u64, error: u64, heap_at: usize) {
    s.count = count;
    s.error = error;
    s.hash = hash;
    s.heap_at = heap_at as u32;
    s.len = key.len() as u8;
    s.shortened = shortened;
    s.key[..key.len()].copy_from_slice(key);
}

fn by_count_then_key(a: &Slot, b: &Slot) -> Ordering {
    b.count
        .cmp(&a.count)
        .then_with(|| a.key[..a.len as usize].cmp(&b.key[..b.len as usize]))
        .then_with(|| a.shortened.cmp(&b.shortened))
}

/// A keyed 64-bit hash: 8 bytes a step, multiply-xorshift mixing (not
/// cryptographic; the seed keeps colliding keys from being chosen).
#[inline]
fn hash(seed: u64, key: &[u8], shortened: bool) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(K) ^ shortened as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(last)).wrapping_mul(K).rotate_left(29);
    }
    // fmix64 (MurmurHash3's finaliser): every bit reaches the low bits the
    // table indexes with.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    type Summary = SpaceSaving<SystemMemory>;

    fn summary(capacity: usize) -> Summary {
        Summary::new(capacity, 42).unwrap()
    }

    #[test]
    fn counts_exactly_while_every_key_fits() {
        let mut s = summary(4);
        for (k, w) in [(&b"a"[..], 3), (b"b", 1), (b"a", 2), (b"c", 5)] {
            s.add(k, w);
        }
        let top = s.top(10);
        let rows: Vec<_> = top.iter().map(|h| (h.key.as_slice(), h.count, h.error)).collect();
        assert_eq!(rows, [(&b"a"[..], 5, 0), (b"c", 5, 0), (b"b", 1, 0)]);
        assert_eq!(s.floor(), 0);
    }

    #[test]
    fn a_new_key_takes_the_smallest_slot_and_inherits_its_count_as_error() {
        let mut s = summary(2);
        s.add(b"a", 5);
        s.add(b"b", 2);
        s.add(b"c", 1);
        let top = s.top(2);
        assert_eq!((top[0].key.as_slice(), top[0].count, top[0].error), (&b"a"[..], 5, 0));
        assert_eq!((top[1].key.as_slice(), top[1].count, top[1].error), (&b"c"[..], 3, 2));
        assert_eq!(s.floor(), 3);
    }

    #[test]
    fn ties_are_ordered_by_key() {
        let mut s = summary(8);
        for k in [&b"d"[..], b"b", b"c", b"a"] {
            s.add(k, 7);
        }
        let keys: Vec<_> = s.top(3).into_iter().map(|h| h.key).collect();
        assert_eq!(keys, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    }

    #[test]
    fn long_keys_are_held_by_their_prefix_and_marked() {
        let mut s = summary(8);
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

    #[test]
    fn clear_forgets_everything() {
        let mut s = summary(3);
        for k in [&b"a"[..], b"b", b"c", b"d"] {
            s.add(k, 1);
        }
        s.clear();
        assert!(s.top(10).is_empty() && s.is_empty());
        s.add(b"d", 1);
        assert_eq!(s.top(10)[0].count, 1);
    }

    #[test]
    fn capacity_is_bounded() {
        assert!(Summary::new(0, 1).is_none());
        assert!(Summary::new(MAX_CAPACITY + 1, 1).is_none());
        let s = summary(1000);
        assert_eq!(s.capacity(), 1000);
        assert!(s.bytes() >= 1000 * (KEY_BYTES + 24));
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

    /// Against exact counts, over skewed streams of many sizes: every key
    /// held satisfies count - error <= true <= count; every key not held
    /// has a true weight of at most the floor; the counts sum to the
    /// stream's total weight.
    #[test]
    fn the_space_saving_bounds_hold_against_exact_counts() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let capacity = 1 + (rng.next() % 64) as usize;
            let keys = 1 + rng.next() % 400;
            let mut s = summary(capacity);
            let mut exact: HashMap<Vec<u8>, u64> = HashMap::new();
            let mut total = 0u64;
            for _ in 0..3000 {
                // Skewed: low numbers far more often.
                let r = rng.next() % keys;
                let k = (r * r) / keys;
                let key = format!("key:{k}").into_bytes();
                let w = 1 + rng.next() % 5;
                s.add(&key, w);
                *exact.entry(key).or_default() += w;
                total += w;
            }
            let held = s.top(capacity);
            assert_eq!(held.len(), capacity.min(exact.len()));
            assert_eq!(held.iter().map(|h| h.count).sum::<u64>(), total, "seed {seed}");
            for h in &held {
                let truth = exact[&h.key];
                assert!(h.count - h.error <= truth && truth <= h.count, "seed {seed}: {h:?} true {truth}");
            }
            for (key, truth) in &exact {
                if !held.iter().any(|h| &h.key == key) {
                    assert!(*truth <= s.floor(), "seed {seed}: {key:?} {truth} > floor {}", s.floor());
                }
            }
            for pair in held.windows(2) {
                assert!(pair[0].count > pair[1].count || (pair[0].count == pair[1].count && pair[0].key < pair[1].key));
            }
        }
    }

    /// The table survives heavy eviction: every held key is still found
    /// (adding to it raises its count instead of taking another slot).
    #[test]
    fn held_keys_stay_reachable_through_evictions() {
        let mut s = summary(16);
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
}
