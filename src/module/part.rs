//! The decision transaction every deciding command runs: each key the call
//! touches is opened and decided alone at the call's one instant (a
//! [`Part`]), the call combines the decisions (a single command has one;
//! `RL.ALL` allows only if every part does, and may book them all for one
//! start), then [`commit`] stores what each key gets from the whole
//! decision, closes every key, announces every write and counts each key in
//! RL.TOP, once, in that order. The reply's data stays in the parts.
//!
//! A part of a call that another part denied stores at most a repair (a
//! state read as drained after a clock jump or a tightened limit, made
//! permanent): its own change when it denied too, which is exactly that;
//! otherwise what its kind says a call that consumes nothing stores
//! ([`Algorithm::unconsumed`]: each kind tells from the state alone, in
//! O(1), that no repair is due, which is always so in steady operation;
//! only a state that may need one is decided again, at cost 0). A refund in
//! a denied call answers the state as it is.

use crate::core::time::Nanos;
use crate::core::{Algorithm, Decision, Verdict};

use super::ffi::{Ctx, KeyName};
use super::kinds::{with_kinds, Kind};
use super::reply;
use super::state::KeyState;
use super::top_summary as top;

/// What a part asks of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// The cost to take (meaningless with `refund`).
    pub cost: u64,
    /// `REFUND n`: give `n` back (never denies).
    pub refund: Option<u64>,
    /// `MAXWAIT` of a single key, in ns: book if denied now but allowed
    /// within it. (RL.ALL books every part for one start instead:
    /// [`Member::book`].)
    pub max_wait_ns: Option<u64>,
    /// `PEEK`: decided as the call would be, changing nothing (not even the
    /// limit the key's waiters are granted under).
    pub peek: bool,
}

/// One key of kind `K` in a call, decided by `A` (the kind itself, or
/// another description of it, as CL.THROTTLE is of GCRA).
pub struct Part<'c, 'a, K: Kind, A = K> {
    /// Borrowed where it was parsed (RL.ACQUIRE's holds a 129-byte id).
    limiter: &'a A,
    ask: Ask,
    /// Open from the read until the commit.
    key: KeyState<'c, K>,
    pub verdict: Verdict<K::Write>,
    /// Whether the commit stored the verdict's change.
    wrote: bool,
}

impl<'c, 'a, K, A> Part<'c, 'a, K, A>
where
    K: Kind,
    A: for<'s> Algorithm<State<'s> = K::State<'s>, Write = K::Write>,
{
    /// Opens and reads the key `name` (`key`: its bytes) and decides `ask`
    /// at `now` (or settles a refund), behind any clients waiting on it.
    /// The error is the reply: the key holds another type. (Inlined: the
    /// part is then made where the caller keeps it, not copied there.)
    #[inline(always)]
    pub fn open(
        ctx: Ctx<'c>,
        name: KeyName<'c>,
        key: &[u8],
        limiter: &'a A,
        ask: Ask,
        now: Nanos,
    ) -> Result<Self, String> {
        let state = KeyState::<K>::open(ctx, name).map_err(|e| e.message::<K>())?;
        Ok(Self::decided(ctx, state, key, limiter, ask, now))
    }

    /// Decides `ask` on a key already opened (`key`: its name's bytes), as
    /// [`open`](Self::open) does; RL.PEEK opens its key for reading only, so
    /// its commit must be a PEEK's, which stores nothing.
    #[inline(always)]
    pub fn decided(ctx: Ctx<'c>, state: KeyState<'c, K>, key: &[u8], limiter: &'a A, ask: Ask, now: Nanos) -> Self {
        let mut verdict = match (ask.refund, ask.max_wait_ns) {
            (Some(units), _) => limiter.settle(state.state(), now, units),
            (None, None) => limiter.decide(state.state(), now, ask.cost),
            (None, Some(ns)) => limiter.decide_within(state.state(), now, ask.cost, ns),
        };
        K::behind_waiters(ctx, limiter, state.state(), now, key, ask.peek, &mut verdict);
        Self { limiter, ask, key: state, verdict, wrote: false }
    }

    /// The change the commit stored (`None`: none, or only a repair).
    pub fn written(&self) -> Option<&crate::core::Change<K::Write>> {
        self.verdict.change.as_ref().filter(|_| self.wrote)
    }
}

/// A key in a call, as the commit sees it.
pub trait Member {
    /// What this key alone answers (for a refund, the state after it, until
    /// the commit finds the call denied: then the state as it is).
    fn decision(&self) -> &Decision;
    /// The least wait (ns) after which this key allows; `None`: never (or
    /// its kind does not book). A refund allows now.
    fn conforms_in(&self, now: Nanos) -> Option<u64>;
    /// Books this key for `start` ns from now (at least its
    /// [`conforms_in`](Self::conforms_in)): its decision becomes allowed.
    fn book(&mut self, start: u64, now: Nanos);
    /// Stores what this key gets from the whole decision: its change if the
    /// call is `allowed`, else at most its repair. False if the server
    /// refused the value.
    fn store(&mut self, allowed: bool, now: Nanos, flags: u32) -> bool;
    fn close(&mut self);
    fn announce(&mut self);
    /// Counts this key in RL.TOP (`name`: its bytes): each denying key
    /// once, or each key's cost when the call is allowed; a refund never.
    fn count(&self, allowed: bool, name: &[u8]);
    /// Replies as the key's single command would (a lease only if one was
    /// written; `wait_ms` with `booking`).
    fn reply(&self, ctx: Ctx<'_>, booking: bool, map: bool);
}

impl<K, A> Member for Part<'_, '_, K, A>
where
    K: Kind,
    A: for<'s> Algorithm<State<'s> = K::State<'s>, Write = K::Write>,
{
    #[inline]
    fn decision(&self) -> &Decision {
        &self.verdict.decision
    }

    fn conforms_in(&self, now: Nanos) -> Option<u64> {
        match self.ask.refund {
            Some(_) => Some(0),
            None => self.limiter.conforms_in(self.key.state(), now, self.ask.cost),
        }
    }

    fn book(&mut self, start: u64, now: Nanos) {
        if self.ask.refund.is_none() {
            self.verdict = self.limiter.decide_booked(self.key.state(), now, self.ask.cost, start);
        }
    }

    #[inline(always)]
    fn store(&mut self, allowed: bool, now: Nanos, flags: u32) -> bool {
        let refund = self.ask.refund.is_some();
        // Allowed: the verdict's change. Denied by itself: its change is
        // what a call that consumes nothing stores (a repair, or nothing).
        // Borrowed, not copied: a lease change holds a 128-byte id.
        let other;
        let change = if allowed || !(self.verdict.decision.allowed || refund) {
            self.verdict.change.as_ref()
        } else if refund {
            // A refund in a call another key denied: nothing refunded, the
            // answer is the state as it is.
            let status = self.limiter.decide(self.key.state(), now, 0);
            self.verdict.decision = status.decision;
            other = status.change;
            other.as_ref()
        } else {
            // Allowed alone in a call another key denied: at most a repair.
            other = self.limiter.unconsumed(self.key.state(), now);
            other.as_ref()
        };
        match change {
            Some(change) => {
                let stored = self.key.write(change, now, flags);
                self.wrote = stored && allowed;
                stored
            }
            None => true,
        }
    }

    #[inline]
    fn close(&mut self) {
        self.key.close();
    }

    #[inline]
    fn announce(&mut self) {
        self.key.announce();
    }

    #[inline]
    fn count(&self, allowed: bool, name: &[u8]) {
        let d = &self.verdict.decision;
        if self.ask.refund.is_none() && (allowed || !d.allowed) {
            top::decided(name, d, self.ask.cost);
        }
    }

    #[inline]
    fn reply(&self, ctx: Ctx<'_>, booking: bool, map: bool) {
        reply::kind::<K>(ctx, &self.verdict.decision, self.written(), booking, map);
    }
}

/// The commit of a call whose parts are `parts` (`allowed`: the call's
/// decision; `peek`: store nothing): stores each part's share, closes every
/// key, then announces every write and counts each key in RL.TOP (`name`:
/// part `i`'s key bytes). Whatever was stored was propagated with its write,
/// even if a later key was refused, so that replicas and the AOF hold what
/// this server holds. False if some key refused its value (the reply is
/// then [`NOT_STORED`](super::state::NOT_STORED)).
#[inline]
pub fn commit<'n, P: Member>(
    parts: &mut [P],
    allowed: bool,
    now: Nanos,
    flags: u32,
    peek: bool,
    name: impl Fn(usize) -> &'n [u8],
) -> bool {
    let mut refused = false;
    if !peek {
        for part in parts.iter_mut() {
            refused |= !part.store(allowed, now, flags);
        }
    }
    // Every key closed before the first keyspace event, as a built-in
    // command does.
    for part in parts.iter_mut() {
        part.close();
    }
    for part in parts.iter_mut() {
        part.announce();
    }
    if refused {
        return false;
    }
    if !peek {
        for (i, part) in parts.iter().enumerate() {
            part.count(allowed, name(i));
        }
    }
    true
}

macro_rules! any_part {
    ($($variant:ident: $kind:ty,)*) => {
        /// A part of any kind, one variant per kind of the registry, without
        /// boxing. (A concurrency part, which carries a lease change, is the
        /// largest: in a vector of at most 16, made once per call, that costs
        /// less than an allocation each.)
        #[allow(clippy::large_enum_variant)]
        pub enum AnyPart<'c, 'a> {
            $($variant(Part<'c, 'a, $kind>),)*
        }

        impl Member for AnyPart<'_, '_> {
            fn decision(&self) -> &Decision {
                match self { $(AnyPart::$variant(p) => p.decision(),)* }
            }
            fn conforms_in(&self, now: Nanos) -> Option<u64> {
                match self { $(AnyPart::$variant(p) => p.conforms_in(now),)* }
            }
            fn book(&mut self, start: u64, now: Nanos) {
                match self { $(AnyPart::$variant(p) => p.book(start, now),)* }
            }
            fn store(&mut self, allowed: bool, now: Nanos, flags: u32) -> bool {
                match self { $(AnyPart::$variant(p) => p.store(allowed, now, flags),)* }
            }
            fn close(&mut self) {
                match self { $(AnyPart::$variant(p) => p.close(),)* }
            }
            fn announce(&mut self) {
                match self { $(AnyPart::$variant(p) => p.announce(),)* }
            }
            fn count(&self, allowed: bool, name: &[u8]) {
                match self { $(AnyPart::$variant(p) => p.count(allowed, name),)* }
            }
            fn reply(&self, ctx: Ctx<'_>, booking: bool, map: bool) {
                match self { $(AnyPart::$variant(p) => p.reply(ctx, booking, map),)* }
            }
        }
    };
}
with_kinds!(any_part);
