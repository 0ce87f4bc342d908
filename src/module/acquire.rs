//! `RL.ACQUIRE`'s limiter (the `CONCURRENCY` spec of `RL.ALL`): the core's
//! lease set (`core::lease`) with this call's `ID`, and the node's floor of
//! generated ids' sequence numbers (`lease_value::seq_floor`).
//!
//! A key holds a set of weighted leases in one block from the server's
//! allocator (`lease_value`); a call reads it in place and writes a
//! [`LeaseChange`] of constant size (the expired leases dropped, one lease
//! added, renewed or ended): what is applied, and what replicas and the AOF
//! receive.

use crate::core::lease::{
    AcquireOutcome, LeaseBlock, LeaseChange, LeaseChangeKind, LeaseId, LeaseOp, LeaseRead, Leases,
};
use crate::core::time::{Millis, Nanos};
use crate::core::{Algorithm, Change, Outcome, ParamError, Verdict, Write};

/// `RL.ACQUIRE key limit lease_ms [COST n] [ID id]`: the limit and lease
/// length, and the lease's name if the caller gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acquire {
    leases: Leases,
    id: Option<LeaseId>,
}

impl Acquire {
    pub fn new(limit: u64, lease_ms: u64, id: Option<LeaseId>) -> Result<Self, ParamError> {
        Ok(Self { leases: Leases::new(limit, lease_ms)?, id })
    }

    /// The lease's name, if the caller gave one.
    pub fn id(&self) -> Option<&LeaseId> {
        self.id.as_ref()
    }

    /// The core's limiter (for the fuzzers' model of the lease set).
    #[cfg(feature = "fuzzing")]
    pub fn leases(&self) -> &Leases {
        &self.leases
    }

    /// The same acquire against another limit (a waiter granted against the
    /// key's latest limit).
    pub fn with_limit(self, limit: u64) -> Result<Self, ParamError> {
        Ok(Self { leases: Leases::new(limit, self.leases.lease_ms())?, id: self.id })
    }

    #[inline]
    fn acquire(&self, state: Option<LeaseBlock<&[u64]>>, now: Nanos, cost: u64) -> AcquireOutcome {
        self.leases.acquire(state.as_ref(), now.0, cost, self.id.as_ref(), super::lease_value::seq_floor())
    }
}

/// The lease an allowed acquire answers: the new lease's id, or the renewed
/// one's (`None` for any other write, and when nothing is written).
pub fn lease_of(change: Option<&Change<LeaseChange>>) -> Option<&LeaseId> {
    let Some(Change::Consume(w)) = change else { return None };
    match &w.state.op {
        LeaseOp::Add(lease) => Some(&lease.id),
        LeaseOp::Renew { id, .. } => Some(id),
        LeaseOp::None | LeaseOp::Release(_) => None,
    }
}

/// How a lease change is written: an acquire or a renewal consumes (it
/// holds units), a release gives back (and deletes the key with the last
/// lease), a clock repair repairs.
pub fn classify(c: LeaseChange) -> Change<LeaseChange> {
    let w = Write { state: c, expire_at: Millis(c.expire_at_ms) };
    match (c.kind, c.delete) {
        (LeaseChangeKind::Acquire | LeaseChangeKind::Renew, _) => Change::Consume(w),
        (LeaseChangeKind::Release, false) => Change::Refund(Some(w)),
        (LeaseChangeKind::Release, true) => Change::Refund(None),
        (LeaseChangeKind::Repair, false) => Change::Repair(w),
        (LeaseChangeKind::Repair, true) => Change::Delete,
    }
}

impl Algorithm for Acquire {
    type State<'s> = LeaseBlock<&'s [u64]>;
    type Write = LeaseChange;

    fn limit(&self) -> u64 {
        self.leases.limit()
    }

    fn check(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64) -> Outcome<LeaseChange> {
        let o = self.acquire(state, now, cost);
        let write = o.change.filter(|c| !c.delete).map(|c| Write { state: c, expire_at: Millis(c.expire_at_ms) });
        Outcome { decision: o.decision, write }
    }

    /// Leases take no refund (the grammar refuses `REFUND`); a status query.
    fn refund(&self, state: Self::State<'_>, now: Nanos, _units: u64) -> Outcome<LeaseChange> {
        self.check(Some(state), now, 0)
    }

    #[inline]
    fn decide(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64) -> Verdict<LeaseChange> {
        let o = self.acquire(state, now, cost);
        Verdict { decision: o.decision, change: o.change.map(classify) }
    }

    fn settle(&self, state: Option<Self::State<'_>>, now: Nanos, _units: u64) -> Verdict<LeaseChange> {
        self.decide(state, now, 0)
    }

    /// A call that takes nothing writes only a repair, and only a set some
    /// of whose leases started after now (a backward jump) can need one.
    #[inline]
    fn repairs(&self, state: Option<Self::State<'_>>, now: Nanos) -> bool {
        state.as_ref().is_some_and(|s| s.header().last_ns > now.0)
    }
}
