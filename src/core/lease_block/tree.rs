//! The tree of a [`LeaseBlock`]: an AVL tree over the slots in `(deadline,
//! id)` order, each node keeping its subtree's height and units in one word
//! (`units | height << 56`), so one walk down answers how many units end by
//! a time and when the leases in order reach a count. Here: the rotations,
//! insertion and removal, the rebuild after a clock jump, the first and last
//! deadline the header keeps, and the read-only walks. Every walk and
//! recursion stops at `MAX_DEPTH`, so a corrupted block never loops.

use std::cmp::Ordering;
use std::ops::{Deref, DerefMut};

use super::layout::{Key, FIRST_AT, LAST_AT, LEASE_MS_BITS, MAX_DEPTH, NIL, SUM_MASK, UNITS_BITS};
use super::LeaseBlock;
use crate::core::lease::{Lease, LeaseId, LeaseRead};

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// Sets the height and subtree units of `s` from its children's (`al`,
    /// `ar`: their [`aug`](Self::aug) words); its new word.
    fn fix_with(&mut self, s: u32, al: u64, ar: u64) -> u64
    where
        W: DerefMut,
    {
        let at = self.base(s);
        let h = 1 + (al >> 56).max(ar >> 56);
        let units = (self.w[at + 1] >> LEASE_MS_BITS) & ((1 << UNITS_BITS) - 1);
        let sum = units + (al & SUM_MASK) + (ar & SUM_MASK);
        let aug = (sum & SUM_MASK) | h << 56;
        self.w[at + 3] = aug;
        aug
    }
    fn rot_right(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if l == NIL {
            return n;
        }
        let (ll, lr) = self.kids(l);
        self.set_kids(n, lr, r);
        let an = self.fix_with(n, self.aug(lr), self.aug(r));
        self.set_kids(l, ll, n);
        self.fix_with(l, self.aug(ll), an);
        l
    }
    fn rot_left(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if r == NIL {
            return n;
        }
        let (rl, rr) = self.kids(r);
        self.set_kids(n, l, rl);
        let an = self.fix_with(n, self.aug(l), self.aug(rl));
        self.set_kids(r, n, rr);
        self.fix_with(r, an, self.aug(rr));
        r
    }
    /// `n` with its height and units set, rotated if its subtrees' heights
    /// differ by 2. (Inlined, the rotations apart: most calls on a walk
    /// find the node balanced.)
    #[inline(always)]
    fn balance(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        let (al, ar) = (self.aug(l), self.aug(r));
        let (hl, hr) = (al >> 56, ar >> 56);
        if hl <= hr + 1 && hr <= hl + 1 {
            self.fix_with(n, al, ar);
            return n;
        }
        self.rotate(n, l, r, hl, hr)
    }
    /// `balance` for a node whose subtrees (`l`, `r`, of heights `hl`, `hr`)
    /// differ in height by 2.
    #[inline(never)]
    fn rotate(&mut self, n: u32, l: u32, r: u32, hl: u64, hr: u64) -> u32
    where
        W: DerefMut,
    {
        if hl > hr + 1 {
            let (ll, lr) = self.kids(l);
            if self.height(ll) < self.height(lr) {
                let l2 = self.rot_left(l);
                self.set_kids(n, l2, r);
            }
            return self.rot_right(n);
        }
        if hr > hl + 1 {
            let (rl, rr) = self.kids(r);
            if self.height(rr) < self.height(rl) {
                let r2 = self.rot_right(r);
                self.set_kids(n, l, r2);
            }
            return self.rot_left(n);
        }
        n
    }
    /// Links slot `s` (written, its key `k`) into the tree under `root`;
    /// the new root. Iterative: one walk down, recording the path, then up
    /// it, rebalancing while the height below changes and only adding the
    /// new units to each sum above that (no height there can change). On
    /// the way up the new subtree's word `sum | height << 56` is carried,
    /// so a node reads only its other child's height.
    pub(super) fn tree_insert(&mut self, root: u32, s: u32, k: &Key) -> u32
    where
        W: DerefMut,
    {
        let units = self.units_of(s);
        let at = self.base(s);
        self.w[at + 2] = u64::from(NIL) | u64::from(NIL) << 32;
        // A leaf: height 1.
        self.w[at + 3] = units | 1 << 56;
        // The nodes walked through, and a bit per node: went left.
        let mut path = [0u32; MAX_DEPTH];
        let mut lefts = 0u64;
        let (mut n, mut depth) = (root, 0);
        while n != NIL {
            if depth == MAX_DEPTH {
                // Only a corrupted block is this deep: leave it as it is.
                return root;
            }
            let left = self.cmp(n, k) == Ordering::Greater;
            path[depth] = n;
            lefts |= u64::from(left) << depth;
            depth += 1;
            let (l, r) = self.kids(n);
            n = if left { l } else { r };
        }
        // `child`: the new root of the subtree below the next node up, and
        // its word; `moved`: whether that subtree's root or height changed.
        let (mut child, mut child_aug, mut moved) = (s, units | 1 << 56, true);
        for i in (0..depth).rev() {
            let p = path[i];
            let at = self.base(p) + 2;
            if !moved {
                self.w[at + 1] += units;
                continue;
            }
            let left = lefts >> i & 1 == 1;
            let kids = self.w[at];
            let (l, r) = if left { (child, (kids >> 32) as u32) } else { (kids as u32, child) };
            self.w[at] = u64::from(l) | u64::from(r) << 32;
            let other = self.height(if left { r } else { l });
            let (h_child, old) = (child_aug >> 56, self.w[at + 1]);
            if h_child <= other + 1 {
                // Balanced: `units` more below, the height from the children.
                let h = 1 + h_child.max(other);
                let aug = ((old & SUM_MASK) + units) & SUM_MASK | h << 56;
                self.w[at + 1] = aug;
                moved = h != old >> 56;
                (child, child_aug) = (p, aug);
                continue;
            }
            // The new subtree is 2 higher than the other: a rotation; the
            // parent (next up) links the new top.
            let (hl, hr) = if left { (h_child, other) } else { (other, h_child) };
            child = self.rotate(p, l, r, hl, hr);
            child_aug = self.aug(child);
        }
        if moved {
            child
        } else {
            root
        }
    }
    /// Unlinks the first node of the subtree: (new subtree, the node).
    pub(super) fn tree_remove_first(&mut self, n: u32, depth: usize) -> (u32, u32)
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if l == NIL || depth > MAX_DEPTH {
            return (r, n);
        }
        let (l2, m) = self.tree_remove_first(l, depth + 1);
        self.set_kids(n, l2, r);
        (self.balance(n), m)
    }
    /// Unlinks the node with key `k`.
    pub(super) fn tree_remove(&mut self, n: u32, k: &Key, depth: usize) -> u32
    where
        W: DerefMut,
    {
        if n == NIL || depth > MAX_DEPTH {
            return n;
        }
        let (l, r) = self.kids(n);
        match self.cmp(n, k) {
            Ordering::Greater => {
                let l2 = self.tree_remove(l, k, depth + 1);
                self.set_kids(n, l2, r);
            }
            Ordering::Less => {
                let r2 = self.tree_remove(r, k, depth + 1);
                self.set_kids(n, l, r2);
            }
            Ordering::Equal => {
                if l == NIL {
                    return r;
                }
                if r == NIL {
                    return l;
                }
                let (r2, m) = self.tree_remove_first(r, depth + 1);
                self.set_kids(m, l, r2);
                return self.balance(m);
            }
        }
        self.balance(n)
    }
    /// The nodes with a deadline at or before `t`, counted in order up to
    /// `at_most`: an in-order walk that stops there, O(log n + at_most).
    pub(super) fn tree_count(&self, t: u64, at_most: usize) -> usize {
        let mut stack = [NIL; MAX_DEPTH];
        let (mut depth, mut n, mut count) = (0, self.root(), 0);
        while count < at_most {
            // Down the left spine (a corrupted tree deeper than any AVL tree
            // of the capacity ends the walk).
            while n != NIL && depth < MAX_DEPTH {
                stack[depth] = n;
                depth += 1;
                n = self.kids(n).0;
            }
            if depth == 0 {
                break;
            }
            depth -= 1;
            let m = stack[depth];
            if self.deadline(m) > t {
                break;
            }
            count += 1;
            n = self.kids(m).1;
        }
        count
    }
    /// The deadline of the first (`right` false) or last node of the tree,
    /// walked to from the root; 0 for an empty tree.
    pub(super) fn end_deadline(&self, right: bool) -> u64 {
        let mut n = self.root();
        if n == NIL {
            return 0;
        }
        for _ in 0..MAX_DEPTH {
            let (l, r) = self.kids(n);
            let next = if right { r } else { l };
            if next == NIL {
                break;
            }
            n = next;
        }
        self.deadline(n)
    }
    /// Sets the header's first and last deadline from the tree.
    pub(super) fn refresh_ends(&mut self)
    where
        W: DerefMut,
    {
        self.w[FIRST_AT] = self.end_deadline(false);
        self.w[LAST_AT] = self.end_deadline(true);
    }
    /// The header's first and last deadline after a node of deadline `d` is
    /// linked into the tree (with `was`: the nodes before).
    pub(super) fn widen_ends(&mut self, d: u64, was: usize)
    where
        W: DerefMut,
    {
        if was == 0 {
            self.w[FIRST_AT] = d;
            self.w[LAST_AT] = d;
        } else {
            self.w[FIRST_AT] = self.w[FIRST_AT].min(d);
            self.w[LAST_AT] = self.w[LAST_AT].max(d);
        }
    }

    /// [`LeaseRead::units_through`]: the units of the leases with a deadline
    /// at or before `t_ns`, summed on one walk down.
    pub(super) fn tree_units_through(&self, t_ns: u64) -> u64 {
        // Nothing at or before `t_ns` (or an empty set): no walk.
        if self.w[FIRST_AT] > t_ns || self.len() == 0 {
            return 0;
        }
        let (mut n, mut acc) = (self.root(), 0);
        for _ in 0..MAX_DEPTH {
            if n == NIL {
                break;
            }
            let (l, r) = self.kids(n);
            if self.deadline(n) <= t_ns {
                acc += self.sum(l) + self.units_of(n);
                n = r;
            } else {
                n = l;
            }
        }
        acc
    }

    /// [`LeaseRead::reaching`]: the deadline at which the leases in order
    /// first hold `units`, found on one walk down by the subtree sums.
    pub(super) fn tree_reaching(&self, mut units: u64) -> Option<u64> {
        let mut n = self.root();
        for _ in 0..MAX_DEPTH {
            if n == NIL {
                break;
            }
            let (l, r) = self.kids(n);
            let left = self.sum(l);
            if left >= units {
                n = l;
            } else if left + self.units_of(n) >= units {
                return Some(self.deadline(n));
            } else {
                units -= left + self.units_of(n);
                n = r;
            }
        }
        None
    }

    /// [`LeaseRead::last_deadline`]: the last deadline, or the one before it
    /// when the last lease is `except`.
    pub(super) fn tree_last_deadline(&self, except: Option<&LeaseId>) -> Option<u64> {
        // The last node, and the node before it on the way down (where the
        // walk last went right).
        let (mut n, mut above) = (self.root(), NIL);
        if n == NIL {
            return None;
        }
        if except.is_none() {
            return Some(self.w[LAST_AT]);
        }
        for _ in 0..MAX_DEPTH {
            let r = self.kids(n).1;
            if r == NIL {
                break;
            }
            above = n;
            n = r;
        }
        let is_except = except.is_some_and(|id| self.same_id(n, &Key { d: 0, id: id.words(), len: id.len }));
        if !is_except {
            return Some(self.deadline(n));
        }
        // The one before the last: the last of its left subtree, else `above`.
        let mut m = self.kids(n).0;
        if m == NIL {
            return (above != NIL).then(|| self.deadline(above));
        }
        for _ in 0..MAX_DEPTH {
            let r = self.kids(m).1;
            if r == NIL {
                break;
            }
            m = r;
        }
        Some(self.deadline(m))
    }

    /// The height of the tree (0 when empty): at most 1.44 log2(n + 2).
    pub fn tree_height(&self) -> u64 {
        self.height(self.root())
    }

    /// The leases in order.
    pub fn iter(&self) -> impl Iterator<Item = Lease> + '_ {
        InOrder { block: self, stack: [NIL; MAX_DEPTH], depth: 0, next: self.root() }
    }
}

impl<W: DerefMut<Target = [u64]>> LeaseBlock<W> {
    /// Links every slot into a new, balanced tree in `(deadline, id)` order
    /// (the index is by slot and unchanged). Sorts the slots by deadline and
    /// first id word, then by the whole id where those tie.
    pub(super) fn rebuild(&mut self) {
        let n = self.len() as u32;
        let idw = self.id_words();
        // The key in four words: deadline, the first two id words (ids of up
        // to 16 bytes are whole there), slot. Only longer ids, or ids that
        // differ only in trailing zero bytes, tie there and are compared whole.
        let mut order: Vec<[u64; 4]> = (0..n)
            .map(|s| {
                let id = self.id_slice(s);
                [self.deadline(s), id[0], if idw > 1 { id[1] } else { 0 }, u64::from(s)]
            })
            .collect();
        order.sort_unstable_by(|a, b| {
            a[..3].cmp(&b[..3]).then_with(|| {
                if a[3] == b[3] {
                    Ordering::Equal
                } else {
                    self.cmp_ids(a[3] as u32, &self.key(b[3] as u32))
                }
            })
        });
        let slots: Vec<u32> = order.into_iter().map(|k| k[3] as u32).collect();
        let root = self.build(&slots, 0).0;
        self.set_root(root);
    }

    /// A balanced tree of `slots` (in order): its root and aug word.
    fn build(&mut self, slots: &[u32], depth: usize) -> (u32, u64) {
        if slots.is_empty() || depth > MAX_DEPTH {
            return (NIL, 0);
        }
        let mid = slots.len() / 2;
        let (l, al) = self.build(&slots[..mid], depth + 1);
        let (r, ar) = self.build(&slots[mid + 1..], depth + 1);
        let s = slots[mid];
        self.set_kids(s, l, r);
        (s, self.fix_with(s, al, ar))
    }
}

struct InOrder<'b, W> {
    block: &'b LeaseBlock<W>,
    stack: [u32; MAX_DEPTH],
    depth: usize,
    next: u32,
}

impl<W: Deref<Target = [u64]>> Iterator for InOrder<'_, W> {
    type Item = Lease;
    fn next(&mut self) -> Option<Lease> {
        while self.next != NIL && self.depth < MAX_DEPTH {
            self.stack[self.depth] = self.next;
            self.depth += 1;
            self.next = self.block.kids(self.next).0;
        }
        if self.depth == 0 {
            return None;
        }
        self.depth -= 1;
        let n = self.stack[self.depth];
        self.next = self.block.kids(n).1;
        Some(self.block.lease(n))
    }
}
