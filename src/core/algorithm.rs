//! The one trait every rate-limit algorithm implements, so that the Redis
//! layer handles each of them the same way.
//!
//! The algorithms keep their own `check` and `refund`; this only wraps
//! them, and says once, here, what kind of write a decision makes: a
//! request that was allowed with a cost above zero consumes; a refund
//! refunds (and deletes the key when it fills the limiter); any other write
//! is a repair (a stored state read as drained after a clock jump or a
//! tightened limit, made permanent). Nothing downstream infers it again.

use super::decision::{Decision, Outcome, Write};
use super::gcra::{Gcra, GcraState};
use super::log::{ChangeKind, LogChange, LogOp, LogOutcome, LogRing, SlidingLog};
use super::sliding_window::{SlidingWindow, SlidingWindowState};
use super::time::{Millis, Nanos};
use super::token_bucket::{TokenBucket, TokenBucketState};

/// What a decision does to the stored state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change<S> {
    /// Store the state: the request consumed.
    Consume(Write<S>),
    /// Store the state: it only makes a reading permanent (consumes nothing).
    Repair(Write<S>),
    /// Store the state, or (`None`) remove the key because the limiter is
    /// full: units were given back (`REFUND`).
    Refund(Option<Write<S>>),
    /// Remove the key: nothing is left worth keeping (counts taken with
    /// another window size that all fell away: a repair).
    Delete,
}

impl<S> Change<S> {
    /// The state to store, if any.
    pub fn write(&self) -> Option<&Write<S>> {
        match self {
            Change::Consume(w) | Change::Repair(w) | Change::Refund(Some(w)) => Some(w),
            Change::Refund(None) | Change::Delete => None,
        }
    }
}

/// A decision and what it does to the stored state (`None`: nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict<S> {
    pub decision: Decision,
    pub change: Option<Change<S>>,
}

/// A rate-limit algorithm with validated parameters.
///
/// A call reads a [`State`](Self::State) and writes a
/// [`Write`](Self::Write). For the fixed-size states (GCRA, the token
/// bucket, the sliding window, quotas) both are the state itself: a copy is
/// read, a new one stored. A variable-size state (the sliding log) is read
/// through a view of the key's block, and a write is the change to make to
/// it, of constant size: what is stored, propagated and replayed.
pub trait Algorithm: Copy {
    /// What a call reads: the stored state, or a view of it.
    type State<'s>: Copy;
    /// What a write stores: the new state, or the change to the stored one.
    type Write: Copy;
    /// The largest cost admitted at once from idle (the reply's `limit`).
    fn limit(&self) -> u64;
    /// Decides a request of `cost` at `now`, given the stored state
    /// (`None` for a missing key). Pure: no clock, no Redis, no allocation.
    fn check(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64) -> Outcome<Self::Write>;

    /// Gives `units` (at least 1) back to a stored state at `now`, read
    /// as [`check`](Self::check) reads it (drained after a clock jump,
    /// capped at a lowered limit), never past full. The decision is the
    /// state after the refund, with allowed 1; the write is the state to
    /// store, `None` when the limiter is full after the refund (its key is
    /// deleted). Pure, as `check`. Each kind says where the units come from.
    fn refund(&self, state: Self::State<'_>, now: Nanos, units: u64) -> Outcome<Self::Write>;

    /// Whether a stored state that [`check`](Self::check) leaves unwritten
    /// no longer counts anything under these parameters but would keep an
    /// expiry that no longer matches: the key is deleted instead (a repair).
    #[inline]
    fn forgets(&self, _state: &Self::State<'_>, _now: Nanos) -> bool {
        false
    }

    /// Whether it books (`MAXWAIT`): a request that conforms within a wait
    /// is admitted now for the instant it conforms. GCRA and the token
    /// bucket do; the others answer as without a wait.
    const BOOKS: bool = false;

    /// The least wait (ns) after which `cost` conforms at `now`: 0 if it
    /// does now, `None` if it never can, or if the kind does not book.
    #[inline]
    fn conforms_in(&self, _state: Option<Self::State<'_>>, _now: Nanos, _cost: u64) -> Option<u64> {
        None
    }

    /// Books `cost` at `now` for `start` ns from now, at least
    /// [`conforms_in`](Self::conforms_in): allowed, its units consumed from
    /// then on, its `wait_ms` the start rounded up. (A kind that does not
    /// book only ever gets a start of 0: then this is `check`.)
    #[inline]
    fn book(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64, _start: u64) -> Outcome<Self::Write> {
        self.check(state, now, cost)
    }

    /// Whether a call that consumes nothing at `now` may store something (a
    /// repair, or deleting a key that counts nothing any more): false only
    /// if it surely stores nothing. From the state alone, in O(1), without
    /// deciding; the default (true) is always safe.
    #[inline]
    fn repairs(&self, _state: Option<Self::State<'_>>, _now: Nanos) -> bool {
        true
    }

    /// What a call that consumes nothing stores at `now`: a repair, or
    /// nothing (`None`, always in steady operation): the change of
    /// [`decide`](Self::decide) at cost 0, decided only if
    /// [`repairs`](Self::repairs) says one may be due.
    #[inline]
    fn unconsumed(&self, state: Option<Self::State<'_>>, now: Nanos) -> Option<Change<Self::Write>> {
        if self.repairs(state, now) {
            self.decide(state, now, 0).change
        } else {
            None
        }
    }

    /// [`check`](Self::check), with its write classified.
    #[inline]
    fn decide(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64) -> Verdict<Self::Write> {
        self.classify(self.check(state, now, cost), state, now, cost)
    }

    /// [`book`](Self::book), with its write classified.
    #[inline]
    fn decide_booked(&self, state: Option<Self::State<'_>>, now: Nanos, cost: u64, start: u64) -> Verdict<Self::Write> {
        self.classify(self.book(state, now, cost, start), state, now, cost)
    }

    /// `MAXWAIT`: [`decide`](Self::decide), or, if that denies and the
    /// request would conform within `max_wait` ns, its booking.
    #[inline]
    fn decide_within(
        &self,
        state: Option<Self::State<'_>>,
        now: Nanos,
        cost: u64,
        max_wait: u64,
    ) -> Verdict<Self::Write> {
        let v = self.decide(state, now, cost);
        if v.decision.allowed {
            return v;
        }
        match self.conforms_in(state, now, cost) {
            Some(start) if start <= max_wait => self.decide_booked(state, now, cost, start),
            _ => v,
        }
    }

    /// An outcome of `state` at `now` for `cost`, its write classified.
    #[inline]
    fn classify(
        &self,
        o: Outcome<Self::Write>,
        state: Option<Self::State<'_>>,
        now: Nanos,
        cost: u64,
    ) -> Verdict<Self::Write> {
        let consumes = o.decision.allowed && cost > 0;
        let change = match o.write {
            Some(w) => Some(if consumes { Change::Consume(w) } else { Change::Repair(w) }),
            None => state.filter(|s| self.forgets(s, now)).map(|_| Change::Delete),
        };
        Verdict { decision: o.decision, change }
    }

    /// [`refund`](Self::refund), with its write classified. A missing key
    /// is full: nothing is written, and the answer is its state (allowed).
    #[inline]
    fn settle(&self, state: Option<Self::State<'_>>, now: Nanos, units: u64) -> Verdict<Self::Write> {
        match state {
            None => Verdict { decision: self.check(None, now, 0).decision, change: None },
            Some(s) => {
                let o = self.refund(s, now, units);
                Verdict { decision: o.decision, change: Some(Change::Refund(o.write)) }
            }
        }
    }
}

impl Algorithm for Gcra {
    type State<'s> = GcraState;
    type Write = GcraState;
    fn limit(&self) -> u64 {
        self.schedule().burst()
    }
    #[inline]
    fn check(&self, state: Option<GcraState>, now: Nanos, cost: u64) -> Outcome<GcraState> {
        Gcra::check(self, state, now.0, cost)
    }
    #[inline]
    fn refund(&self, state: GcraState, now: Nanos, units: u64) -> Outcome<GcraState> {
        Gcra::refund(self, state, now.0, units)
    }
    #[inline]
    fn repairs(&self, state: Option<GcraState>, now: Nanos) -> bool {
        Gcra::repairs(self, state, now.0)
    }
    const BOOKS: bool = true;
    #[inline]
    fn conforms_in(&self, state: Option<GcraState>, now: Nanos, cost: u64) -> Option<u64> {
        Gcra::conforms_in(self, state, now.0, cost)
    }
    #[inline]
    fn book(&self, state: Option<GcraState>, now: Nanos, cost: u64, start: u64) -> Outcome<GcraState> {
        Gcra::book(self, state, now.0, cost, start)
    }
}

impl Algorithm for TokenBucket {
    type State<'s> = TokenBucketState;
    type Write = TokenBucketState;
    fn limit(&self) -> u64 {
        self.schedule().burst()
    }
    #[inline]
    fn check(&self, state: Option<TokenBucketState>, now: Nanos, cost: u64) -> Outcome<TokenBucketState> {
        TokenBucket::check(self, state, now.0, cost)
    }
    #[inline]
    fn refund(&self, state: TokenBucketState, now: Nanos, units: u64) -> Outcome<TokenBucketState> {
        TokenBucket::refund(self, state, now.0, units)
    }
    #[inline]
    fn repairs(&self, state: Option<TokenBucketState>, now: Nanos) -> bool {
        TokenBucket::repairs(self, state, now.0)
    }
    const BOOKS: bool = true;
    #[inline]
    fn conforms_in(&self, state: Option<TokenBucketState>, now: Nanos, cost: u64) -> Option<u64> {
        TokenBucket::conforms_in(self, state, now.0, cost)
    }
    #[inline]
    fn book(&self, state: Option<TokenBucketState>, now: Nanos, cost: u64, start: u64) -> Outcome<TokenBucketState> {
        TokenBucket::book(self, state, now.0, cost, start)
    }
}

impl Algorithm for SlidingWindow {
    type State<'s> = SlidingWindowState;
    type Write = SlidingWindowState;
    fn limit(&self) -> u64 {
        SlidingWindow::limit(self)
    }
    #[inline]
    fn check(&self, state: Option<SlidingWindowState>, now: Nanos, cost: u64) -> Outcome<SlidingWindowState> {
        SlidingWindow::check(self, state, now.floor_us(), cost)
    }
    #[inline]
    fn refund(&self, state: SlidingWindowState, now: Nanos, units: u64) -> Outcome<SlidingWindowState> {
        SlidingWindow::refund(self, state, now.floor_us(), units)
    }
    #[inline]
    fn forgets(&self, state: &SlidingWindowState, now: Nanos) -> bool {
        SlidingWindow::forgets(self, state, now.floor_us())
    }
    #[inline]
    fn repairs(&self, state: Option<SlidingWindowState>, now: Nanos) -> bool {
        SlidingWindow::repairs(self, state, now.floor_us())
    }
}

/// The sliding log reads its key's block of words in place and writes the
/// change to it (constant size, whatever the log holds): what is applied to
/// the block, and what replicas and the AOF receive.
impl Algorithm for SlidingLog {
    type State<'s> = LogRing<&'s [u64]>;
    type Write = LogChange;
    fn limit(&self) -> u64 {
        SlidingLog::limit(self)
    }
    #[inline]
    fn check(&self, state: Option<LogRing<&[u64]>>, now: Nanos, cost: u64) -> Outcome<LogChange> {
        log_outcome(SlidingLog::check(self, state.as_ref(), now.0, LogOp::Consume(cost)))
    }
    #[inline]
    fn refund(&self, state: LogRing<&[u64]>, now: Nanos, units: u64) -> Outcome<LogChange> {
        log_outcome(SlidingLog::check(self, Some(&state), now.0, LogOp::Refund(units)))
    }
    /// The log classifies its own changes (a consume, a refund, a repair;
    /// one that leaves the log empty deletes the key).
    #[inline]
    fn decide(&self, state: Option<LogRing<&[u64]>>, now: Nanos, cost: u64) -> Verdict<LogChange> {
        let o = SlidingLog::check(self, state.as_ref(), now.0, LogOp::Consume(cost));
        Verdict { decision: o.decision, change: o.change.map(log_change) }
    }
    #[inline]
    fn repairs(&self, state: Option<LogRing<&[u64]>>, now: Nanos) -> bool {
        SlidingLog::repairs(self, state.as_ref(), now.0)
    }
    #[inline]
    fn settle(&self, state: Option<LogRing<&[u64]>>, now: Nanos, units: u64) -> Verdict<LogChange> {
        match state {
            None => self.decide(None, now, 0),
            Some(s) => {
                let o = SlidingLog::check(self, Some(&s), now.0, LogOp::Refund(units));
                Verdict { decision: o.decision, change: o.change.map(log_change) }
            }
        }
    }
}

fn log_outcome(o: LogOutcome) -> Outcome<LogChange> {
    let write = o.change.filter(|c| !c.delete).map(|c| Write { state: c, expire_at: Millis(c.expire_at_ms) });
    Outcome { decision: o.decision, write }
}

fn log_change(c: LogChange) -> Change<LogChange> {
    let w = Write { state: c, expire_at: Millis(c.expire_at_ms) };
    match (c.kind, c.delete) {
        (ChangeKind::Consume, _) => Change::Consume(w),
        (ChangeKind::Refund, false) => Change::Refund(Some(w)),
        (ChangeKind::Refund, true) => Change::Refund(None),
        (ChangeKind::Repair, false) => Change::Repair(w),
        (ChangeKind::Repair, true) => Change::Delete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Nanos = Nanos(1_800_000_000_000_000_000);

    #[test]
    fn an_allowed_cost_consumes_and_every_other_write_repairs() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        assert!(matches!(g.decide(None, T0, 1).change, Some(Change::Consume(_))));
        assert_eq!(g.decide(None, T0, 0).change, None);
        assert_eq!(g.decide(None, T0, 11).change, None);
        // A state a day ahead: read as drained, and stored so (a repair).
        let far = Some(GcraState { tat_ns: T0.0 + 86_400_000_000_000_000, booked_ns: 0 });
        for cost in [0, 1, 11] {
            assert!(matches!(g.decide(far, T0, cost).change, Some(Change::Repair(_))), "cost {cost}");
        }
    }

    #[test]
    fn unconsumed_is_what_a_cost_0_decision_stores() {
        // States from idle to far ahead (a backward jump), with bookings:
        // the shortcut answers exactly what deciding at cost 0 would.
        let g = Gcra::new(10, 1000, 6).unwrap();
        let b = TokenBucket::new(5, 2, 1000).unwrap();
        let ms = 1_000_000u64;
        let mut repairs = 0;
        for ahead in [0, 1, 99 * ms, 100 * ms, 600 * ms, 600 * ms + 1, 700 * ms, 86_400_000 * ms] {
            for booked in [0, 1, 50 * ms, 86_400_000 * ms] {
                for now in [T0, Nanos(T0.0 + 123_456)] {
                    let gs = Some(GcraState { tat_ns: now.0 + ahead, booked_ns: booked });
                    assert_eq!(g.unconsumed(gs, now), g.decide(gs, now, 0).change, "gcra {ahead} {booked}");
                    let bs = Some(TokenBucketState { full_at_ns: now.0 + ahead, booked_ns: booked });
                    assert_eq!(b.unconsumed(bs, now), b.decide(bs, now, 0).change, "bucket {ahead} {booked}");
                    repairs += usize::from(g.unconsumed(gs, now).is_some());
                }
            }
        }
        assert_eq!(g.unconsumed(None, T0), None);
        // Both answers occur: the grid reaches states that need a repair.
        assert!(repairs > 0 && repairs < 64, "{repairs}");
    }

    #[test]
    fn the_limit_is_the_replys_limit() {
        let g = Gcra::new(10, 1000, 6).unwrap();
        let b = TokenBucket::new(5, 2, 1000).unwrap();
        let s = SlidingWindow::new(7, 1000);
        assert_eq!((g.limit(), g.decide(None, T0, 0).decision.limit), (6, 6));
        assert_eq!((b.limit(), b.decide(None, T0, 0).decision.limit), (5, 5));
        assert_eq!((s.limit(), s.decide(None, T0, 0).decision.limit), (7, 7));
    }
}
