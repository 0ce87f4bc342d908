//! A [`LeaseBlock`]'s set moved between blocks of words: the layout a
//! block needs for a change ([`first_layout`](LeaseBlock::first_layout),
//! [`needs_room`](LeaseBlock::needs_room)), the set copied into a block of
//! another layout ([`grow_into`](LeaseBlock::grow_into)), and the set as a
//! flat list of words for RDB and AOF rewrite
//! ([`to_words`](LeaseBlock::to_words), [`layout_of`](LeaseBlock::layout_of),
//! [`load_words`](LeaseBlock::load_words)).

use std::ops::Deref;

use super::layout::{FIRST_AT, LAST_AT, OFF_AT, SEED_AT, SLOT_FIXED, WIDTH_AT, WIDTH_BITS};
use super::LeaseBlock;
use crate::core::lease::{
    Lease, LeaseChange, LeaseHeader, LeaseId, LeaseRead, LeaseStore, MAX_ID_LEN, MAX_ID_WORDS, MAX_LEASE_LIMIT,
};

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// The id words the leases need: the most any of their ids does (1 when
    /// empty). O(n).
    pub fn needed_id_words(&self) -> usize {
        (0..self.len() as u32).map(|s| (self.id_len(s) as usize).div_ceil(8)).max().unwrap_or(1).max(1)
    }

    /// The layout a block needs before `change` applies to it, if it has
    /// not room enough: `(capacity, id_words)`, the capacity doubled (or
    /// more) and the id words widened to the new lease's id.
    pub fn needs_room(&self, change: &LeaseChange) -> Option<(usize, usize)> {
        let cap = self.capacity();
        let len = change.len_after(self.len());
        let idw = self.id_words().max(change.id_words());
        (len > cap || idw > self.id_words())
            .then(|| (if len > cap { (cap * 2).max(len.next_power_of_two()) } else { cap }, idw))
    }

    /// Copies the set into `dst`, of `words_for(capacity, id_words)` words
    /// with room for its leases (`capacity` at least `len`, and `id_words`
    /// at least [`needed_id_words`](Self::needed_id_words): wider or
    /// narrower than this block's), slots and tree as they are; the index is
    /// rebuilt. `None` (with `dst` unspecified) if `dst` does not fit.
    pub fn grow_into<'b>(&self, dst: &'b mut [u64], id_words: usize) -> Option<LeaseBlock<&'b mut [u64]>> {
        let mut to = LeaseBlock::init(dst, id_words, self.header(), self.w[SEED_AT])?;
        let n = self.len();
        if to.capacity() < n {
            return None;
        }
        let copied = SLOT_FIXED + self.id_words().min(id_words);
        let mut at_width = 0u64;
        for s in 0..n {
            let need = (self.id_len(s as u32) as usize).div_ceil(8);
            if need > id_words {
                return None;
            }
            at_width += u64::from(need == id_words);
            let (from, at) = (self.base(s as u32), to.base(s as u32));
            to.w[at..at + copied].copy_from_slice(&self.w[from..from + copied]);
        }
        to.w[WIDTH_AT] = id_words as u64 | at_width << WIDTH_BITS;
        to.w[0] = n as u64;
        to.w[2] = self.w[2];
        to.w[FIRST_AT] = self.w[FIRST_AT];
        to.w[LAST_AT] = self.w[LAST_AT];
        // The slots' deadline words were copied as they are.
        to.w[OFF_AT] = self.w[OFF_AT];
        for s in 0..n as u32 {
            to.index_insert(s);
        }
        Some(to)
    }

    /// The whole set as words, for RDB and AOF rewrite: `len, next_seq,
    /// last_ns`, then per lease in order `deadline_ns, lease_ms, units,
    /// id_len` and its id words (big-endian, zero-padded, `ceil(id_len / 8)`).
    pub fn to_words(&self) -> impl Iterator<Item = u64> + '_ {
        let h = self.header();
        [self.len() as u64, h.next_seq, h.last_ns].into_iter().chain(self.iter().flat_map(|l| {
            let mut w = [0u64; 4 + MAX_ID_WORDS];
            w[..4].copy_from_slice(&[l.deadline_ns, l.lease_ms, l.units, l.id.len() as u64]);
            w[4..].copy_from_slice(&l.id.words());
            w.into_iter().take(4 + l.id.words_needed())
        }))
    }
}

impl<'a> LeaseBlock<&'a mut [u64]> {
    /// The layout of a new key's block for `change`: one slot, the id's words.
    pub fn first_layout(change: &LeaseChange) -> (usize, usize) {
        (change.len_after(0).max(1).next_power_of_two(), change.id_words().max(1))
    }

    /// The layout, `(capacity, id_words)`, of the block that
    /// [`from_words`](Self::from_words) fills from `words`; `None` if the
    /// count is above the limit cap (checked first: read the count and refuse
    /// it before collecting the rest) or the words are not one whole set.
    pub fn layout_of_words(words: &[u64]) -> Option<(usize, usize)> {
        Self::layout_of(words).ok()
    }

    /// The same, with what is wrong when it is `None`.
    pub fn layout_of(words: &[u64]) -> Result<(usize, usize), &'static str> {
        let n = *words.first().ok_or("no count")?;
        if n > MAX_LEASE_LIMIT {
            return Err("more than 100000 leases");
        }
        let mut at = 3;
        let mut idw = 1;
        for _ in 0..n {
            let len = *words.get(at + 3).ok_or("fewer leases than its count")?;
            let len =
                usize::try_from(len).ok().filter(|l| (1..=MAX_ID_LEN).contains(l)).ok_or("an id not 1 to 128 bytes")?;
            idw = idw.max(len.div_ceil(8));
            at += 4 + len.div_ceil(8);
        }
        if at == words.len() {
            Ok(((n as usize).max(1).next_power_of_two(), idw))
        } else {
            Err("words beyond its leases")
        }
    }

    /// The set in `words` (from [`to_words`](Self::to_words)) loaded into
    /// `dst`, of `words_for(layout_of_words(words))` words, its index keyed
    /// by `seed` (see [`init`](Self::init)). `None` if
    /// anything is out of range, an id repeats, or the result is not
    /// [`valid`](Self::valid).
    pub fn from_words(dst: &'a mut [u64], words: &[u64], seed: u64) -> Option<Self> {
        Self::load_words(dst, words, seed).ok()
    }

    /// The same, with what is wrong when it is `None`.
    pub fn load_words(dst: &'a mut [u64], words: &[u64], seed: u64) -> Result<Self, &'static str> {
        let (cap, idw) = LeaseBlock::layout_of(words)?;
        if dst.len() != LeaseBlock::words_for(cap, idw) {
            return Err("a block of the wrong size");
        }
        let header = LeaseHeader { next_seq: words[1], last_ns: words[2] };
        let mut b = Self::init(dst, idw, header, seed).ok_or("a block of the wrong size")?;
        let mut at = 3;
        for _ in 0..words[0] {
            let len = words[at + 3];
            let nw = (len as usize).div_ceil(8);
            let id = LeaseId::from_words(len, &words[at + 4..at + 4 + nw]).ok_or("an id of bad padding")?;
            let l = Lease { id, deadline_ns: words[at], lease_ms: words[at + 1], units: words[at + 2] };
            if !l.in_range() {
                return Err("a lease's units, lease time or deadline out of range");
            }
            if b.find(&id).is_some() {
                return Err("an id held twice");
            }
            if b.len() >= b.capacity() {
                return Err("more leases than room");
            }
            b.insert(&l);
            at += 4 + nw;
        }
        match b.fault() {
            None => Ok(b),
            Some(why) => Err(why),
        }
    }
}
