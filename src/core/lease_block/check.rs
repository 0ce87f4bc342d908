//! Validation of a [`LeaseBlock`] from outside (an RDB load, a RESTORE):
//! whether its words hold a set this core can have written, and if not,
//! what is wrong, for the server log. Never panics, whatever the words.

use std::cmp::Ordering;
use std::ops::Deref;

use super::layout::{Key, FIRST_AT, LAST_AT, MAX_DEPTH, NIL};
use super::LeaseBlock;
use crate::core::lease::{LeaseRead, MAX_LEASE_LIMIT};

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// Whether the block holds a set this core can have written: ids of 1
    /// to 128 bytes that fit the slots, zero-padded, distinct and found
    /// through the index; units, lease_ms and deadlines in range, no start
    /// after the header's `last_ns`; the tree holding every slot exactly
    /// once, in strictly increasing order, balanced, with correct heights
    /// and sums; the index holding exactly one entry per slot. O(n); never
    /// panics, whatever the words.
    pub fn valid(&self) -> bool {
        self.fault().is_none()
    }

    /// What makes the block one this core cannot have written (see
    /// [`valid`](Self::valid)), for the server log when a load refuses it;
    /// `None` if it is valid.
    pub fn fault(&self) -> Option<&'static str> {
        let n = self.len();
        if n as u64 > MAX_LEASE_LIMIT {
            return Some("more than 100000 leases");
        }
        let last_ns = self.w[4];
        for s in 0..n as u32 {
            let len = self.id_len(s) as usize;
            if len > 8 * self.id_words() {
                return Some("an id longer than its slot");
            }
            let l = self.lease(s);
            // `lease` reads a bad padding as another id: compare back.
            if l.id.len() != len || l.id.words()[..self.id_words()] != *self.id_slice(s) {
                return Some("an id of a bad length or padding");
            }
            if !l.in_range() {
                return Some("a lease's units, lease time or deadline out of range");
            }
            if l.start_ns() > last_ns {
                return Some("a lease started after the set's last call");
            }
        }
        // The tree, in order.
        let mut seen = 0usize;
        let mut prev: Option<Key> = None;
        if self.valid_tree(self.root(), 0, &mut seen, &mut prev).is_none_or(|_| seen != n) {
            return Some("tree not in order, unbalanced or not holding every lease once");
        }
        // The count of leases whose id needs every id word.
        if self.at_width() != (0..n as u32).filter(|&s| self.is_at_width(s)).count() {
            return Some("the count of ids at the slots' width is wrong");
        }
        // The first and last deadline the header keeps.
        if self.w[FIRST_AT] != self.end_deadline(false) || self.w[LAST_AT] != self.end_deadline(true) {
            return Some("the header's first or last deadline is wrong");
        }
        // The index: one entry per slot, each found from its home.
        let mut entries = 0;
        for j in 0..self.table() {
            let v = self.entry(j);
            if v != 0 {
                if v as usize > n {
                    return Some("an id index entry past the leases");
                }
                entries += 1;
            }
        }
        if entries == n && (0..n as u32).all(|s| self.index_find(&self.key(s)).is_some_and(|(_, t)| t == s)) {
            None
        } else {
            Some("the id index does not hold each lease once")
        }
    }

    /// Checks the subtree at `n` in order; its (height, sum) if sound.
    fn valid_tree(&self, n: u32, depth: usize, seen: &mut usize, prev: &mut Option<Key>) -> Option<(u64, u64)> {
        if n == NIL {
            return Some((0, 0));
        }
        if depth > MAX_DEPTH || n as usize >= self.len() || *seen >= self.len() {
            return None;
        }
        let (l, r) = self.kids(n);
        let (hl, sl) = self.valid_tree(l, depth + 1, seen, prev)?;
        if prev.is_some_and(|p| self.cmp(n, &p) != Ordering::Greater) {
            return None;
        }
        *prev = Some(self.key(n));
        *seen += 1;
        let (hr, sr) = self.valid_tree(r, depth + 1, seen, prev)?;
        let h = 1 + hl.max(hr);
        let sum = sl + sr + self.units_of(n);
        (hl.abs_diff(hr) <= 1 && self.height(n) == h && self.sum(n) == sum).then_some((h, sum))
    }
}
