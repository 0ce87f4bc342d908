//! Property tests of the pure core (`redis_rl::core`) against naive reference
//! models, over random parameters, clocks and request sequences.
//!
//! The models are written independently of the core and in a different
//! formulation:
//! - GCRA and the token bucket are both checked against [`Bucket`], a debt of
//!   charged time counted forward in exact integers, whose admission rule is
//!   stated in rationals (the core stores the time the limiter is full again
//!   and works backward from it with closed formulas; the model searches);
//! - the sliding window is checked against [`WindowLog`], an honest log of the
//!   cost admitted in every epoch-aligned window (the core keeps two counters).
//!
//! Retry-after and reset-after are found in the models by searching over whole
//! milliseconds with the model's own level function, never by a closed formula.
//!
//! Besides model equivalence, each algorithm is checked against itself for the
//! contract's invariants (../shared/SPEC.md): exact retry (2), exact reset and
//! key expiry (3), and clock jumps (6).

#[path = "common/model.rs"]
mod model;

use std::collections::HashMap;
use std::fmt::Debug;

use model::{config, least};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use redis_rl::core::{
    Decision, Gcra, GcraState, Outcome, SlidingWindow, SlidingWindowState, TokenBucket, TokenBucketState,
};

const MS: u64 = 1_000;
const MAX_COUNT: u64 = u32::MAX as u64;
const MAX_PERIOD_MS: u64 = 1_000_000_000_000;
/// The longest drained-to-full time the contract can represent: 10^12 ms.
const MAX_SPAN_MS: u128 = 1_000_000_000_000;
const NS_PER_US: u64 = 1_000;
/// A realistic epoch time (2027-01-15, on a whole hour), µs: aligned to windows such as 1 s, 1 min, 1 h.
const EPOCH_US: u64 = 1_800_000_000_000_000;
const TEN_DAYS_US: u64 = 10 * 86_400 * 1_000_000;
/// The latest server clock the contract covers: 2200-01-01, µs.
const MAX_NOW_US: u64 = 7_258_118_400_000_000;

// ---------------------------------------------------------------------------
// The core, behind one interface.

trait Limiter {
    type State: Copy + Debug;
    fn check(&self, state: Option<Self::State>, now_us: u64, cost: u64) -> Outcome<Self::State>;
}

macro_rules! impl_limiter {
    ($($core:ty => $state:ty),*) => {$(
        impl Limiter for $core {
            type State = $state;
            fn check(&self, state: Option<$state>, now_us: u64, cost: u64) -> Outcome<$state> {
                <$core>::check(self, state, now_us, cost)
            }
        }
    )*};
}

impl_limiter!(SlidingWindow => SlidingWindowState);

// GCRA and the token bucket take ns; the scenarios run on a µs clock.
macro_rules! impl_ns_limiter {
    ($($core:ty => $state:ty),*) => {$(
        impl Limiter for $core {
            type State = $state;
            fn check(&self, state: Option<$state>, now_us: u64, cost: u64) -> Outcome<$state> {
                <$core>::check(self, state, now_us.saturating_mul(NS_PER_US), cost)
            }
        }
    )*};
}

impl_ns_limiter!(Gcra => GcraState, TokenBucket => TokenBucketState);

// ---------------------------------------------------------------------------
// Reference models.

/// What a reference model must answer; the five reply fields are derived from
/// these by [`model_decision`], the same way for every algorithm.
trait Model {
    /// The largest cost admitted at once from idle.
    fn limit(&self) -> u64;
    /// Whether the parameters are within what the contract can represent.
    fn representable(&self) -> bool;
    /// Would a request of `cost` be admitted at `t` (no later than any event seen)?
    fn admits(&self, t: u64, cost: u64) -> bool;
    /// The largest cost admissible at `t`.
    fn remaining(&self, t: u64) -> u64;
    /// Admit `cost` at `t`.
    fn consume(&mut self, t: u64, cost: u64);
    /// Whole ms a fully drained limiter takes to be full again: also the
    /// upper bound of every search, since by then any `cost <= limit` fits.
    fn drained_reset_ms(&self) -> u64;
    /// Whether any split of the limit is admitted at one instant from idle
    /// (for the schedules: `B * (ceil(u) - u) < u`; else "never more than
    /// the burst" wins and some splits get less).
    fn burst_is_exact(&self) -> bool {
        true
    }
}

/// The reply a model gives to `cost` at `now`, consuming if allowed.
fn model_decision<M: Model>(m: &mut M, now: u64, cost: u64) -> Decision {
    let limit = m.limit();
    let allowed = cost <= limit && m.admits(now, cost);
    if allowed {
        m.consume(now, cost);
    }
    let horizon = m.drained_reset_ms();
    let retry_after_ms = match (allowed, cost > limit) {
        (true, _) => 0,
        (false, true) => -1,
        (false, false) => least(horizon, |r| m.admits(now + r * MS, cost)) as i64,
    };
    Decision {
        allowed,
        limit,
        remaining: m.remaining(now),
        retry_after_ms,
        reset_after_ms: least(horizon, |r| m.remaining(now + r * MS) == limit),
        wait_ms: 0,
    }
}

/// GCRA and the token bucket as the contract states them, in exact
/// integers and rationals: a unit takes `u = P / L` ns (`L` units per `P`
/// ns); a decision of cost `c` is charged `ceil(c * u)` ns, added to a debt
/// that time pays back ns for ns. A decision is admitted when the limiter is
/// idle (no debt) and `c <= B`, or when the debt after it is at most the
/// largest whole ns that is both at most `B * ceil(u)` and less than
/// `(B + 1) * u`. Remaining, retry and reset are found by search.
#[derive(Debug, Clone)]
struct Bucket {
    capacity: u128,
    /// P (ns) and L.
    period_ns: u128,
    count: u128,
    /// The admission bound, in ns.
    allow: u128,
    /// Charged ns not yet paid back, as of `at` (µs).
    debt: u128,
    at: u64,
}

impl Bucket {
    /// `capacity` tokens, refilled `count` per `period_ms`. Starts full.
    fn new(capacity: u64, count: u64, period_ms: u64) -> Self {
        let (b, l, p) = (capacity as u128, count as u128, period_ms as u128 * 1_000_000);
        // Largest x with x * L < (B + 1) * P.
        let below_next = ((b + 1) * p - 1) / l;
        let allow = (b * p.div_ceil(l)).min(below_next);
        Self { capacity: b, period_ns: p, count: l, allow, debt: 0, at: 0 }
    }

    fn charge(&self, cost: u64) -> u128 {
        (cost as u128 * self.period_ns).div_ceil(self.count)
    }

    fn debt_at(&self, t: u64) -> u128 {
        assert!(t >= self.at, "the model only moves forward in time");
        self.debt.saturating_sub((t - self.at) as u128 * NS_PER_US as u128)
    }
}

impl Model for Bucket {
    fn limit(&self) -> u64 {
        self.capacity as u64
    }
    fn representable(&self) -> bool {
        // B * P / L <= 10^12 ms, exactly.
        self.capacity * self.period_ns <= MAX_SPAN_MS * 1_000_000 * self.count
    }
    fn admits(&self, t: u64, cost: u64) -> bool {
        let debt = self.debt_at(t);
        cost as u128 <= self.capacity && (debt == 0 || debt + self.charge(cost) <= self.allow)
    }
    fn remaining(&self, t: u64) -> u64 {
        if self.debt_at(t) == 0 {
            return self.limit();
        }
        // Full only when no debt is left: at most limit - 1 before. The
        // largest such cost admitted, by bisection (admits is monotone in c).
        if !self.admits(t, 0) {
            return 0;
        }
        let (mut lo, mut hi) = (0, self.limit() - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.admits(t, mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
    fn consume(&mut self, t: u64, cost: u64) {
        self.debt = self.debt_at(t) + self.charge(cost);
        self.at = t;
    }
    fn burst_is_exact(&self) -> bool {
        // B * (ceil(P/L) - P/L) < P/L, times L.
        let (b, p, l) = (self.capacity, self.period_ns, self.count);
        b * (p.div_ceil(l) * l - p) < p
    }
    fn drained_reset_ms(&self) -> u64 {
        // No state holds more debt than B * ceil(u).
        (self.capacity * self.period_ns.div_ceil(self.count)).div_ceil(1_000_000) as u64
    }
}

/// The sliding window as a log of the cost admitted in every epoch-aligned
/// window. The estimate at `t` is `count[i] + count[i-1] * (W - into) / W`,
/// with `i` the window of `t` and `into` how far `t` is into it; it is kept
/// exactly as `estimate * W`.
#[derive(Debug, Clone)]
struct WindowLog {
    limit: u64,
    window_us: u64,
    admitted: HashMap<u64, u64>,
}

impl WindowLog {
    fn new(limit: u64, window_ms: u64) -> Self {
        Self { limit, window_us: window_ms * MS, admitted: HashMap::new() }
    }

    fn count(&self, window: u64) -> u128 {
        self.admitted.get(&window).copied().unwrap_or(0) as u128
    }

    /// `estimate(t) * W`.
    fn estimate_scaled(&self, t: u64) -> u128 {
        let w = self.window_us as u128;
        let i = t / self.window_us;
        let into = (t - i * self.window_us) as u128;
        let previous = i.checked_sub(1).map_or(0, |p| self.count(p) * (w - into));
        let scaled = self.count(i) * w + previous;
        assert!(scaled <= self.limit as u128 * w, "the log admitted more than its limit");
        scaled
    }
}

impl Model for WindowLog {
    fn limit(&self) -> u64 {
        self.limit
    }
    fn representable(&self) -> bool {
        true
    }
    fn admits(&self, t: u64, cost: u64) -> bool {
        self.estimate_scaled(t) + cost as u128 * self.window_us as u128 <= self.limit as u128 * self.window_us as u128
    }
    fn remaining(&self, t: u64) -> u64 {
        let w = self.window_us as u128;
        ((self.limit as u128 * w - self.estimate_scaled(t)) / w) as u64
    }
    fn consume(&mut self, t: u64, cost: u64) {
        *self.admitted.entry(t / self.window_us).or_default() += cost;
    }
    fn drained_reset_ms(&self) -> u64 {
        2 * self.window_us / MS
    }
}

// ---------------------------------------------------------------------------
// Parameters and scenarios.

/// One algorithm's parameters: how to draw them, and the core and model they make.
trait Params: Debug + Clone + 'static {
    type Core: Limiter;
    type Model: Model + Debug + Clone;
    fn strategy() -> BoxedStrategy<Self>;
    /// `None` if the core rejects the parameters.
    fn core(&self) -> Option<Self::Core>;
    fn model(&self) -> Self::Model;
    /// The natural time scales for steps between requests, in µs: the
    /// period (or window) and the time one unit takes to come back.
    fn scales(&self) -> (u64, u64);
}

/// Counts (limit, burst, capacity, refill tokens): mostly small, so that
/// requests collide, but over the whole range too.
fn count() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 1..=20u64, 2 => 1..=1_000u64, 2 => 1..=MAX_COUNT, 1 => Just(MAX_COUNT)]
}

fn period_ms() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 1..=5_000u64, 2 => 1..=10_000_000u64, 2 => 1..=MAX_PERIOD_MS, 1 => Just(MAX_PERIOD_MS)]
}

#[derive(Debug, Clone)]
struct GcraParams {
    limit: u64,
    period_ms: u64,
    burst: u64,
}

impl Params for GcraParams {
    type Core = Gcra;
    type Model = Bucket;
    fn strategy() -> BoxedStrategy<Self> {
        (count(), period_ms(), prop::option::of(count()))
            .prop_map(|(limit, period_ms, burst)| Self { limit, period_ms, burst: burst.unwrap_or(limit) })
            .boxed()
    }
    fn core(&self) -> Option<Gcra> {
        Gcra::new(self.limit, self.period_ms, self.burst).ok()
    }
    fn model(&self) -> Bucket {
        Bucket::new(self.burst, self.limit, self.period_ms)
    }
    fn scales(&self) -> (u64, u64) {
        (self.period_ms * MS, (self.period_ms * MS / self.limit).max(1))
    }
}

#[derive(Debug, Clone)]
struct TokenBucketParams {
    capacity: u64,
    refill_tokens: u64,
    refill_period_ms: u64,
}

impl Params for TokenBucketParams {
    type Core = TokenBucket;
    type Model = Bucket;
    fn strategy() -> BoxedStrategy<Self> {
        (count(), count(), period_ms())
            .prop_map(|(capacity, refill_tokens, refill_period_ms)| Self { capacity, refill_tokens, refill_period_ms })
            .boxed()
    }
    fn core(&self) -> Option<TokenBucket> {
        TokenBucket::new(self.capacity, self.refill_tokens, self.refill_period_ms).ok()
    }
    fn model(&self) -> Bucket {
        Bucket::new(self.capacity, self.refill_tokens, self.refill_period_ms)
    }
    fn scales(&self) -> (u64, u64) {
        let period = self.refill_period_ms * MS;
        (period, (period / self.refill_tokens).max(1))
    }
}

#[derive(Debug, Clone)]
struct SlidingWindowParams {
    limit: u64,
    window_ms: u64,
}

impl Params for SlidingWindowParams {
    type Core = SlidingWindow;
    type Model = WindowLog;
    fn strategy() -> BoxedStrategy<Self> {
        (count(), period_ms()).prop_map(|(limit, window_ms)| Self { limit, window_ms }).boxed()
    }
    fn core(&self) -> Option<SlidingWindow> {
        Some(SlidingWindow::new(self.limit, self.window_ms))
    }
    fn model(&self) -> WindowLog {
        WindowLog::new(self.limit, self.window_ms)
    }
    fn scales(&self) -> (u64, u64) {
        let window = self.window_ms * MS;
        (window, (window / self.limit).max(1))
    }
}

/// The server clock: a start time, and whether it only has whole
/// milliseconds (Redis 7.0) or microseconds (7.2+).
#[derive(Debug, Clone, Copy)]
struct Clock {
    t0: u64,
    whole_ms: bool,
}

impl Clock {
    fn strategy() -> impl Strategy<Value = Clock> {
        let offset = prop_oneof![1 => Just(0u64), 4 => 0..1_000_000_000_000u64];
        (offset, any::<bool>()).prop_map(|(offset, whole_ms)| {
            let t0 = EPOCH_US + offset;
            Clock { t0: if whole_ms { t0 - t0 % MS } else { t0 }, whole_ms }
        })
    }

    /// `now` moved on by `step_us`, never past the contract's clock range
    /// (the year 2200; whole ms either way).
    fn advance(&self, now: u64, step_us: u64) -> u64 {
        (now + if self.whole_ms { step_us - step_us % MS } else { step_us }).min(MAX_NOW_US)
    }
}

#[derive(Debug, Clone, Copy)]
struct Req {
    step_us: u64,
    cost: u64,
}

/// Costs from 0 to limit + 2, mostly 1.
fn cost(limit: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => Just(1u64),
        1 => Just(0u64),
        3 => 0..=limit + 2,
        1 => limit.saturating_sub(2)..=limit + 2,
    ]
}

fn requests(limit: u64, period_us: u64, unit_us: u64) -> impl Strategy<Value = Vec<Req>> {
    let step = prop_oneof![
        2 => Just(0u64),
        1 => 0..=2_000u64,
        3 => 0..=3 * unit_us,
        3 => 0..=3 * period_us,
        1 => (0..=3 * period_us / MS).prop_map(|ms| ms * MS),
    ];
    prop::collection::vec((step, cost(limit)).prop_map(|(step_us, cost)| Req { step_us, cost }), 1..=60)
}

/// Clock jumps applied after a sequence, and the request made at the jumped time.
#[derive(Debug, Clone, Copy)]
struct Jumps {
    back_us: u64,
    forward_us: u64,
    probe_cost: u64,
}

fn jumps(limit: u64, period_us: u64) -> impl Strategy<Value = Jumps> {
    let back = prop_oneof![1..=2_000u64, 1..=(3 * period_us).min(TEN_DAYS_US), 1..=TEN_DAYS_US];
    let forward = prop_oneof![1..=3 * period_us, 1..=1_000_000_000_000_000_000u64];
    (back, forward, cost(limit)).prop_map(|(back_us, forward_us, probe_cost)| Jumps { back_us, forward_us, probe_cost })
}

#[derive(Debug, Clone)]
struct Scenario<P> {
    params: P,
    clock: Clock,
    requests: Vec<Req>,
    jumps: Jumps,
}

fn scenario<P: Params>() -> impl Strategy<Value = Scenario<P>> {
    P::strategy()
        .prop_filter("parameters the contract cannot represent", |p| p.model().representable())
        .prop_flat_map(|params| {
            let limit = params.model().limit();
            let (period_us, unit_us) = params.scales();
            (Just(params), Clock::strategy(), requests(limit, period_us, unit_us), jumps(limit, period_us))
        })
        .prop_map(|(params, clock, requests, jumps)| Scenario { params, clock, requests, jumps })
}

/// One request as the core answered it.
struct Step<S> {
    before: Option<S>,
    now: u64,
    cost: u64,
    outcome: Outcome<S>,
}

impl<S: Copy> Step<S> {
    fn decision(&self) -> Decision {
        self.outcome.decision
    }

    /// The stored state after this request.
    fn after(&self) -> Option<S> {
        self.outcome.write.map(|w| w.state).or(self.before)
    }
}

impl<P: Params> Scenario<P> {
    fn build(&self) -> Result<(P::Core, P::Model), TestCaseError> {
        match self.params.core() {
            Some(core) => Ok((core, self.params.model())),
            None => Err(TestCaseError::fail(format!("the core rejects representable parameters {:?}", self.params))),
        }
    }

    /// Feeds the requests to the core, storing what it says to store.
    fn replay(&self, core: &P::Core) -> Vec<Step<<P::Core as Limiter>::State>> {
        let (mut now, mut state) = (self.clock.t0, None);
        let mut steps = Vec::with_capacity(self.requests.len());
        for req in &self.requests {
            now = self.clock.advance(now, req.step_us);
            let outcome = core.check(state, now, req.cost);
            let step = Step { before: state, now, cost: req.cost, outcome };
            state = step.after();
            steps.push(step);
        }
        steps
    }
}

/// Admits as much as the core will at one instant, greedily in descending
/// powers of two, and returns the total. An honest limiter takes at most two
/// calls per power; one that keeps admitting fails the test.
fn drain<L: Limiter>(core: &L, mut state: Option<L::State>, now: u64) -> Result<u64, TestCaseError> {
    let (mut total, mut power, mut calls) = (0u64, 1u64 << 32, 0);
    while power > 0 {
        calls += 1;
        prop_assert!(calls <= 200, "still admitting after {} calls ({} admitted)", calls, total);
        let o = core.check(state, now, power);
        if o.decision.allowed {
            total += power;
            state = o.write.map(|w| w.state);
        } else {
            power /= 2;
        }
    }
    Ok(total)
}

// ---------------------------------------------------------------------------
// Properties, generic over the algorithm.

/// Every reply field equals the model's, and a write happens exactly when a
/// request with a cost is allowed.
fn matches_model<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, mut model) = s.build()?;
    for (i, step) in s.replay(&core).iter().enumerate() {
        let want = model_decision(&mut model, step.now, step.cost);
        prop_assert_eq!(step.decision(), want, "request {} (cost {} at {} µs)", i, step.cost, step.now);
        prop_assert_eq!(step.outcome.write.is_some(), want.allowed && step.cost > 0, "write of request {}", i);
    }
    Ok(())
}

/// Invariant 2: a denied request is still denied (r - 1) ms later and
/// allowed r ms later; -1 exactly when the cost exceeds the limit, and then
/// never allowed.
fn retry_after_is_exact<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let limit = model.limit();
    for (i, step) in s.replay(&core).iter().enumerate() {
        let d = step.decision();
        let allowed_after = |ms: u64| core.check(step.before, step.now + ms * MS, step.cost).decision.allowed;
        prop_assert_eq!(d.retry_after_ms == 0, d.allowed, "request {}: {:?}", i, d);
        prop_assert_eq!(d.retry_after_ms == -1, step.cost > limit, "request {}: {:?}", i, d);
        if d.retry_after_ms > 0 {
            let r = d.retry_after_ms as u64;
            prop_assert!(!allowed_after(r - 1), "request {} allowed 1 ms before its retry {:?}", i, d);
            prop_assert!(allowed_after(r), "request {} denied at its retry {:?}", i, d);
        }
        if d.retry_after_ms == -1 {
            prop_assert!(!allowed_after(model.drained_reset_ms() + 1), "request {} above the limit allowed later", i);
        }
    }
    Ok(())
}

/// Invariant 3 on the core's reset: full (remaining == limit, reset 0) at
/// now + reset_after_ms, and not full one millisecond before.
fn reset_after_is_exact<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let limit = model.limit();
    for (i, step) in s.replay(&core).iter().enumerate() {
        let d = step.decision();
        let status_after = |ms: u64| core.check(step.after(), step.now + ms * MS, 0).decision;
        let full = status_after(d.reset_after_ms);
        prop_assert_eq!((full.remaining, full.reset_after_ms), (limit, 0), "request {}: {:?}", i, d);
        if d.reset_after_ms > 0 {
            prop_assert!(status_after(d.reset_after_ms - 1).remaining < limit, "request {} full early: {:?}", i, d);
        } else {
            prop_assert_eq!(d.remaining, limit, "request {}: {:?}", i, d);
        }
    }
    Ok(())
}

/// The key's expiry is the first whole millisecond at which the limiter is
/// full again: `expire_at_ms == ceil((now_us + full_after_us) / 1000)`, where
/// `full_after_us` is the exact time to full, so the key never expires while
/// it still limits anything.
///
/// Its relation to the reply: `reset_after_ms == ceil(full_after_us / 1000)`,
/// hence `expire_at_ms - floor(now_us / 1000)` is `reset_after_ms` whenever
/// `now_us` is a whole millisecond (a Redis 7.0 clock: PTTL == reset), and
/// `reset_after_ms` or `reset_after_ms + 1` otherwise. The `+ 1` happens for
/// GCRA and the token bucket when the sub-millisecond parts of `now` and of
/// `full_after_us` add up past a millisecond; for the sliding window it
/// never happens (the full time is a window boundary, a whole millisecond).
fn expiry_is_the_first_whole_ms_at_full<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let limit = model.limit();
    for (i, step) in s.replay(&core).iter().enumerate() {
        let d = step.decision();
        let Some(w) = step.outcome.write else {
            prop_assert!(!d.allowed || step.cost == 0, "request {}: allowed with a cost but nothing to store", i);
            continue;
        };
        let full_at = |t: u64| core.check(Some(w.state), t, 0).decision.remaining == limit;
        let full_after_us = least(d.reset_after_ms * MS, |u| full_at(step.now + u));
        prop_assert_eq!(d.reset_after_ms, full_after_us.div_ceil(MS), "request {}", i);
        prop_assert_eq!(w.expire_at.0, (step.now + full_after_us).div_ceil(MS), "request {}: {:?}", i, d);
        prop_assert!(full_at(w.expire_at.0 * MS), "request {}: not full at expiry", i);
        let lag = w.expire_at.0 - step.now / MS - d.reset_after_ms;
        if step.now % MS == 0 {
            prop_assert_eq!(lag, 0, "request {}: expiry vs reset on a whole-ms clock", i);
        } else {
            prop_assert!(lag <= 1, "request {}: expiry {} ms past the reset", i, lag);
        }
    }
    Ok(())
}

/// All requests at one instant on a fresh key: the admitted total never
/// exceeds the limit, `remaining` is exactly what is left, and greedily
/// taking what is left reaches the limit exactly.
fn admits_exactly_the_limit_at_one_instant<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let (limit, now) = (model.limit(), s.clock.t0);
    let (mut state, mut admitted) = (None, 0);
    for (i, req) in s.requests.iter().enumerate() {
        let o = core.check(state, now, req.cost);
        if o.decision.allowed {
            admitted += req.cost;
        }
        if let Some(w) = o.write {
            state = Some(w.state);
        }
        prop_assert!(admitted <= limit, "request {}: {} admitted over a limit of {}", i, admitted, limit);
        if model.burst_is_exact() {
            prop_assert_eq!(o.decision.remaining, limit - admitted, "request {}", i);
        } else {
            prop_assert!(o.decision.remaining <= limit - admitted, "request {}", i);
        }
    }
    let drained = drain(&core, state, now)?;
    if model.burst_is_exact() {
        prop_assert_eq!(drained, limit - admitted);
    } else {
        prop_assert!(drained <= limit - admitted, "{} more admitted after {} of {}", drained, admitted, limit);
    }
    Ok(())
}

/// The state after the scenario, and the time of its last request.
fn final_state<P: Params>(s: &Scenario<P>, core: &P::Core) -> (Option<<P::Core as Limiter>::State>, u64) {
    let steps = s.replay(core);
    let last = steps.last().expect("at least one request");
    (last.after(), last.now)
}

/// Invariant 6, backward: after the clock goes back, nothing reports more
/// than the limit or a wait longer than a drained limiter's reset, and the
/// jumped-back instant admits at most the limit. Stronger: a jump back never
/// frees capacity; the jumped-back instant admits at most what was left
/// before the jump (a state from the future is never read as idle).
fn backward_jump_is_bounded<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let (limit, drained_ms) = (model.limit(), model.drained_reset_ms());
    let (state, now) = final_state(s, &core);
    let t = now - s.jumps.back_us;
    let d = core.check(state, t, s.jumps.probe_cost).decision;
    prop_assert!(d.remaining <= limit, "{:?}", d);
    prop_assert!(d.reset_after_ms <= drained_ms, "{:?} vs a drained reset of {} ms", d, drained_ms);
    prop_assert!(d.retry_after_ms <= drained_ms as i64, "{:?} vs a drained reset of {} ms", d, drained_ms);
    // What was admissible before the jump, not the reply's `remaining`: in
    // the last ns of the burst's rounding allowance the reply says one less
    // than a request of the whole burst gets (full only when idle).
    let left_before = drain(&core, state, now)?;
    let admitted = drain(&core, state, t)?;
    prop_assert!(admitted <= limit, "{} admitted over a limit of {}", admitted, limit);
    prop_assert!(admitted <= left_before, "{} admitted after the jump back, {} before it", admitted, left_before);
    Ok(())
}

/// Invariant 6, forward: a forward jump admits at most the limit at once,
/// and exactly the limit once it passes the reset.
fn forward_jump_is_bounded<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let limit = model.limit();
    let (state, now) = final_state(s, &core);
    let reset_ms = core.check(state, now, 0).decision.reset_after_ms;
    let to = (now + s.jumps.forward_us).min(MAX_NOW_US);
    let total = drain(&core, state, to)?;
    prop_assert!(total <= limit, "{} admitted over a limit of {}", total, limit);
    if to - now >= reset_ms * MS {
        // Full: the whole limit in one decision, and in any split where the
        // burst's rounding adds up to less than one unit.
        prop_assert!(core.check(state, to, limit).decision.allowed, "the limit denied after the reset");
    }
    if to - now >= reset_ms * MS && model.burst_is_exact() {
        prop_assert_eq!(total, limit, "not full after the reset of {} ms", reset_ms);
    }
    Ok(())
}

/// The contract reads a state from the future as drained, "full again after
/// one complete refill", and invariant 6 says a backward jump never blocks a
/// key longer than that. So invariants 2 and 3 must hold at the jumped-back
/// instant too: allowed after retry_after_ms, full after reset_after_ms.
fn backward_jump_recovers_as_reported<P: Params>(s: &Scenario<P>) -> Result<(), TestCaseError> {
    let (core, model) = s.build()?;
    let limit = model.limit();
    let (state, now) = final_state(s, &core);
    let t = now - s.jumps.back_us;
    let o = core.check(state, t, s.jumps.probe_cost);
    let d = o.decision;
    let after = o.write.map(|w| w.state).or(state);
    let full = core.check(after, t + d.reset_after_ms * MS, 0).decision;
    prop_assert_eq!(
        full.remaining,
        limit,
        "not full {} ms after the jump back, as reported: {:?}",
        d.reset_after_ms,
        d
    );
    if d.retry_after_ms > 0 {
        let retry = core.check(after, t + d.retry_after_ms as u64 * MS, s.jumps.probe_cost).decision;
        prop_assert!(retry.allowed, "denied {} ms after the jump back, as reported: {:?}", d.retry_after_ms, d);
    }
    Ok(())
}

/// Construction accepts exactly the parameters whose drained-to-full time
/// fits the contract's 10^12 ms.
fn accepts_exactly_the_representable<P: Params>(p: &P) -> Result<(), TestCaseError> {
    prop_assert_eq!(p.core().is_some(), p.model().representable(), "{:?}", p);
    Ok(())
}

macro_rules! algorithm_properties {
    ($algorithm:ident, $params:ty, $matches_model:ident) => {
        mod $algorithm {
            use super::*;

            proptest! {
                #![proptest_config(config(256))]

                #[test]
                fn $matches_model(s in scenario::<$params>()) {
                    matches_model(&s)?;
                }

                #[test]
                fn retry_after_is_exact_to_the_millisecond(s in scenario::<$params>()) {
                    retry_after_is_exact(&s)?;
                }

                #[test]
                fn reset_after_is_exact_to_the_millisecond(s in scenario::<$params>()) {
                    reset_after_is_exact(&s)?;
                }

                #[test]
                fn key_expires_at_the_first_whole_ms_the_limiter_is_full(s in scenario::<$params>()) {
                    expiry_is_the_first_whole_ms_at_full(&s)?;
                }

                #[test]
                fn admits_exactly_the_limit_at_one_instant(s in scenario::<$params>()) {
                    super::admits_exactly_the_limit_at_one_instant(&s)?;
                }

                #[test]
                fn backward_clock_jump_never_admits_more_than_the_limit(s in scenario::<$params>()) {
                    backward_jump_is_bounded(&s)?;
                }

                #[test]
                fn forward_clock_jump_never_admits_more_than_the_limit(s in scenario::<$params>()) {
                    forward_jump_is_bounded(&s)?;
                }

                #[test]
                fn backward_clock_jump_recovers_as_reported(s in scenario::<$params>()) {
                    backward_jump_recovers_as_reported(&s)?;
                }

                #[test]
                fn accepts_exactly_the_representable_parameters(p in <$params>::strategy()) {
                    accepts_exactly_the_representable(&p)?;
                }
            }
        }
    };
}

algorithm_properties!(gcra, GcraParams, matches_rational_bucket_model);
algorithm_properties!(token_bucket, TokenBucketParams, matches_rational_bucket_model);
algorithm_properties!(sliding_window, SlidingWindowParams, matches_per_window_log_model);
