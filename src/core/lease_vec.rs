//! The reference lease store: a `Vec` sorted by `(deadline, id)`, for tests
//! and benchmarks (O(n) writes). The module keeps its leases in a
//! [`LeaseBlock`](super::lease::LeaseBlock).

use std::cmp::Ordering;

use super::lease::*;

/// A set in a `Vec` sorted by `(deadline, id)`: the reference
/// [`LeaseStore`], for tests and benchmarks. O(n) writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseVec {
    header: LeaseHeader,
    leases: Vec<Lease>,
}

impl LeaseVec {
    pub fn new() -> Self {
        Self { header: LeaseHeader { next_seq: 0, last_ns: 0 }, leases: Vec::new() }
    }

    /// A set of these leases (of distinct ids) and this header.
    pub fn from_leases(header: LeaseHeader, mut leases: Vec<Lease>) -> Self {
        leases.sort_by(|a, b| a.order(b));
        Self { header, leases }
    }

    /// The leases in order.
    pub fn leases(&self) -> &[Lease] {
        &self.leases
    }

    fn place(&self, l: &Lease) -> usize {
        self.leases.partition_point(|x| x.order(l) == Ordering::Less)
    }
}

impl Default for LeaseVec {
    fn default() -> Self {
        Self::new()
    }
}

impl LeaseRead for LeaseVec {
    fn len(&self) -> usize {
        self.leases.len()
    }
    fn header(&self) -> LeaseHeader {
        self.header
    }
    fn get(&self, i: usize) -> Lease {
        self.leases[i]
    }
    fn find(&self, id: &LeaseId) -> Option<Lease> {
        self.leases.iter().find(|l| l.id == *id).copied()
    }
    fn units_through(&self, t_ns: u64) -> u64 {
        self.leases.iter().filter(|l| l.deadline_ns <= t_ns).map(|l| l.units).sum()
    }
    fn units(&self) -> u64 {
        self.leases.iter().map(|l| l.units).sum()
    }
    fn count_through(&self, t_ns: u64, at_most: usize) -> usize {
        self.leases.iter().filter(|l| l.deadline_ns <= t_ns).count().min(at_most)
    }
    fn reaching(&self, units: u64) -> Option<u64> {
        let mut sum = 0;
        self.leases
            .iter()
            .find(|l| {
                sum += l.units;
                sum >= units
            })
            .map(|l| l.deadline_ns)
    }
    fn last_deadline(&self, except: Option<&LeaseId>) -> Option<u64> {
        self.leases.iter().rev().find(|l| Some(&l.id) != except).map(|l| l.deadline_ns)
    }
}

impl LeaseStore for LeaseVec {
    fn set_header(&mut self, header: LeaseHeader) {
        self.header = header;
    }
    fn drop_first(&mut self, k: usize) {
        self.leases.drain(..k.min(self.leases.len()));
    }
    fn remove(&mut self, id: &LeaseId) {
        self.leases.retain(|l| l.id != *id);
    }
    fn insert(&mut self, lease: &Lease) {
        self.remove(&lease.id);
        let at = self.place(lease);
        self.leases.insert(at, *lease);
    }
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64) {
        if let Some(mut l) = self.find(id) {
            self.remove(id);
            l.deadline_ns = deadline_ns;
            l.lease_ms = lease_ms;
            self.insert(&l);
        }
    }
    fn shift_back(&mut self, shift_ns: u64) {
        for l in &mut self.leases {
            l.deadline_ns = l.deadline_ns.saturating_sub(shift_ns);
        }
        self.leases.sort_by(|a, b| a.order(b));
    }
}
