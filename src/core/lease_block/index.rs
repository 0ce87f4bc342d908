//! The id index of a [`LeaseBlock`]: `2 * capacity` entries of 32 bits
//! (slot + 1, 0 empty), two a word after the slots, open addressing with
//! linear probing from a home given by a hash of the id keyed by the
//! block's seed; a removal shifts entries back instead of leaving
//! tombstones. It finds a lease by its id without a walk; the tree orders them.

use std::ops::{Deref, DerefMut};

use super::layout::{Key, LEASE_BLOCK_HEADER_WORDS, SEED_AT, SLOT_FIXED};
use super::LeaseBlock;
use crate::core::lease::LeaseRead;

/// The id index's hash of an id's words, keyed by the block's `seed`: each
/// word is folded in by a 64 x 64 -> 128-bit multiply whose two halves are
/// xored, so every bit of a word moves the low bits the table uses (a
/// short id's bytes are a word's high bits).
fn hash_words(words: &[u64], len: u64, seed: u64) -> u64 {
    let mut h = seed ^ len;
    for &w in words {
        let p = u128::from(h ^ w) * 0x9e37_79b9_7f4a_7c15;
        h = p as u64 ^ (p >> 64) as u64;
    }
    h
}

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    pub(super) fn table(&self) -> usize {
        2 * self.capacity()
    }
    fn index_base(&self) -> usize {
        LEASE_BLOCK_HEADER_WORDS + self.capacity() * (SLOT_FIXED + self.id_words())
    }
    pub(super) fn entry(&self, j: usize) -> u32 {
        (self.w[self.index_base() + j / 2] >> (32 * (j % 2))) as u32
    }
    pub(super) fn set_entry(&mut self, j: usize, v: u32)
    where
        W: DerefMut,
    {
        let at = self.index_base() + j / 2;
        let shift = 32 * (j % 2);
        self.w[at] = (self.w[at] & !(0xffff_ffffu64 << shift)) | u64::from(v) << shift;
    }
    fn home_of(&self, s: u32) -> usize {
        let len = self.id_len(s);
        let n = (len as usize).div_ceil(8).min(self.id_words());
        hash_words(&self.id_slice(s)[..n], len, self.w[SEED_AT]) as usize & (self.table() - 1)
    }
    /// The index entry and slot of the id of `k`.
    pub(super) fn index_find(&self, k: &Key) -> Option<(usize, u32)> {
        self.index_probe(k).err()
    }
    /// Probes the index for the id of `k`: `Err` with its entry and slot if
    /// a slot holds it, else `Ok` with the empty entry where it would go
    /// (`Ok(usize::MAX)` for a full table, which a block never has).
    pub(super) fn index_probe(&self, k: &Key) -> Result<usize, (usize, u32)> {
        let mask = self.table() - 1;
        let n = (k.len as usize).div_ceil(8);
        let mut j = hash_words(&k.id[..n], u64::from(k.len), self.w[SEED_AT]) as usize & mask;
        for _ in 0..self.table() {
            let v = self.entry(j);
            if v == 0 {
                return Ok(j);
            }
            let s = v - 1;
            if (s as usize) < self.len() && self.same_id(s, k) {
                return Err((j, s));
            }
            j = (j + 1) & mask;
        }
        Ok(usize::MAX)
    }
    pub(super) fn index_insert(&mut self, s: u32)
    where
        W: DerefMut,
    {
        let mask = self.table() - 1;
        let mut j = self.home_of(s);
        for _ in 0..self.table() {
            if self.entry(j) == 0 {
                self.set_entry(j, s + 1);
                return;
            }
            j = (j + 1) & mask;
        }
    }
    /// Empties entry `j`, shifting back the entries after it that would no
    /// longer be found (linear probing needs no tombstones).
    pub(super) fn index_remove(&mut self, j: usize)
    where
        W: DerefMut,
    {
        let mask = self.table() - 1;
        self.set_entry(j, 0);
        let mut hole = j;
        let mut k = (j + 1) & mask;
        for _ in 0..self.table() {
            let v = self.entry(k);
            if v == 0 || v as usize > self.len() {
                return;
            }
            let home = self.home_of(v - 1);
            if (k.wrapping_sub(home) & mask) >= (k.wrapping_sub(hole) & mask) {
                self.set_entry(hole, v);
                self.set_entry(k, 0);
                hole = k;
            }
            k = (k + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lease::{Lease, LeaseHeader, LeaseId, LeaseStore, NS_PER_MS};

    /// A block of capacity 128 (an index of 256 entries) holding the ids
    /// `ids`, each a lease of one unit, its hash keyed by `seed`.
    fn block_of(ids: &[String], seed: u64) -> Vec<u64> {
        let mut words = vec![0; LeaseBlock::words_for(128, 3)];
        let mut b = LeaseBlock::init(&mut words, 3, LeaseHeader { next_seq: 0, last_ns: NS_PER_MS }, seed).unwrap();
        for (i, id) in ids.iter().enumerate() {
            let id = LeaseId::new(id.as_bytes()).unwrap();
            b.insert(&Lease { id, deadline_ns: 10_000 * NS_PER_MS + i as u64, lease_ms: 10_000, units: 1 });
        }
        assert!(b.valid() && b.len() == ids.len());
        words
    }

    /// The distinct index entries the ids' hashes pick (their homes).
    fn homes(words: &mut [u64]) -> usize {
        let b = LeaseBlock::open(&mut *words).unwrap();
        let mut homes: Vec<usize> = (0..b.len() as u32).map(|s| b.home_of(s)).collect();
        homes.sort_unstable();
        homes.dedup();
        homes.len()
    }

    /// Ids that differ only in their first bytes (the high bits of a word,
    /// where a short id's bytes sit) spread over the index as random ones
    /// would: 100 ids in 256 entries pick about 82 homes. The hash before
    /// took a word's low bits from its low bits only, and put "00" to "99"
    /// in 8 homes, each probe walking a cluster.
    #[test]
    fn ids_that_differ_only_in_their_first_bytes_spread_over_the_index() {
        let patterns: [Vec<String>; 4] = [
            (0..100).map(|i| format!("{i:02}")).collect(),
            (0..100).map(|i| format!("{i}")).collect(),
            (0..100).map(|i| format!("{}{}rq-123", (b'A' + i / 26) as char, (b'A' + i % 26) as char)).collect(),
            (0..100)
                .map(|i| format!("{}{}-request-000001", (b'A' + i / 26) as char, (b'A' + i % 26) as char))
                .collect(),
        ];
        for seed in [0, 1, 0x5eed, u64::MAX] {
            for ids in &patterns {
                let n = homes(&mut block_of(ids, seed));
                assert!(n >= 60, "{n} homes for {:?}.. (seed {seed})", &ids[..3]);
            }
        }
    }
}
