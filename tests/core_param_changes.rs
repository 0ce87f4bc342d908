//! Parameters may change on every call ("new parameters take effect at
//! once, and changing them is never an error"). Whatever the history of
//! parameters, each reply must stay exact for the state it leaves behind:
//! - retry: still denied at now + r - 1 ms, allowed at now + r;
//! - reset: not full at now + reset - 1 ms, full at now + reset;
//! - a write's expiry is the reset time (so PTTL == reset_after_ms);
//! - what a single instant admits never exceeds the current limit.
//!
//! Time is whole milliseconds here, as on Redis 7.0 (µs for the calls; GCRA
//! and the token bucket take ns, so their checks scale it).

#[path = "common/model.rs"]
mod model;

use model::config;
use proptest::prelude::*;
use redis_rl::core::{Decision, Gcra, Outcome, SlidingWindow, TokenBucket};

const MS: u64 = 1_000;
const T0: u64 = 1_800_000_000_000 * MS;

/// Checks one reply against the state it leaves (`after`), with `check`
/// deciding under the same parameters.
fn exact<S: Copy + std::fmt::Debug>(
    check: &dyn Fn(Option<S>, u64, u64) -> Outcome<S>,
    before: Option<S>,
    now: u64,
    cost: u64,
    o: &Outcome<S>,
) -> Result<(), TestCaseError> {
    let d: Decision = o.decision;
    let after = o.write.map(|w| w.state).or(before);
    if let Some(w) = o.write {
        prop_assert_eq!(w.expire_at.0, now / MS + d.reset_after_ms, "expiry != reset: {:?}", d);
    }
    if !d.allowed && d.retry_after_ms > 0 {
        let r = d.retry_after_ms as u64;
        prop_assert!(!check(after, now + (r - 1) * MS, cost).decision.allowed, "allowed before retry: {:?}", d);
        prop_assert!(check(after, now + r * MS, cost).decision.allowed, "denied at retry: {:?}", d);
    }
    let reset = d.reset_after_ms;
    let full = check(after, now + reset * MS, 0).decision;
    prop_assert_eq!(full.remaining, full.limit, "not full at reset: {:?}", d);
    if reset > 0 {
        let before_reset = check(after, now + (reset - 1) * MS, 0).decision;
        prop_assert!(before_reset.remaining < before_reset.limit, "full before reset: {:?}", d);
    }
    // An instant admits at most the limit: drain with unit requests.
    let mut state = after;
    let mut admitted = 0;
    for _ in 0..=d.limit {
        let o = check(state, now, 1);
        if !o.decision.allowed {
            break;
        }
        admitted += 1;
        state = o.write.map(|w| w.state).or(state);
    }
    prop_assert!(admitted <= d.limit, "admitted {} > limit {}", admitted, d.limit);
    Ok(())
}

/// (parameter set index, time step in ms, cost)
fn steps() -> impl Strategy<Value = Vec<(usize, u64, u64)>> {
    prop::collection::vec((0usize..4, prop_oneof![Just(0u64), 0u64..50, 0u64..3000], 0u64..7), 1..40)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn gcra_stays_exact_across_parameter_changes(steps in steps()) {
        let params = [Gcra::new(5, 1000, 5), Gcra::new(5, 1000, 2), Gcra::new(10, 500, 8), Gcra::new(1, 3000, 3)]
            .map(Result::unwrap);
        let (mut state, mut now) = (None, T0);
        for (p, dt, cost) in steps {
            now += dt * MS;
            let g = params[p];
            let check = |s, t: u64, c| g.check(s, t * 1000, c);
            let o = check(state, now, cost);
            exact(&check, state, now, cost, &o)?;
            state = o.write.map(|w| w.state).or(state);
        }
    }

    #[test]
    fn token_bucket_stays_exact_across_parameter_changes(steps in steps()) {
        let params = [TokenBucket::new(5, 2, 1000), TokenBucket::new(2, 2, 1000), TokenBucket::new(8, 3, 700), TokenBucket::new(3, 1, 3000)]
            .map(Result::unwrap);
        let (mut state, mut now) = (None, T0);
        for (p, dt, cost) in steps {
            now += dt * MS;
            let b = params[p];
            let check = |s, t: u64, c| b.check(s, t * 1000, c);
            let o = check(state, now, cost);
            exact(&check, state, now, cost, &o)?;
            state = o.write.map(|w| w.state).or(state);
        }
    }

    #[test]
    fn sliding_window_stays_exact_across_parameter_changes(steps in steps()) {
        let params = [SlidingWindow::new(5, 1000), SlidingWindow::new(3, 1000), SlidingWindow::new(5, 3000), SlidingWindow::new(6, 200)];
        let (mut state, mut now) = (None, T0);
        for (p, dt, cost) in steps {
            now += dt * MS;
            let s = params[p];
            let check = |st, t, c| s.check(st, t, c);
            let o = check(state, now, cost);
            exact(&check, state, now, cost, &o)?;
            state = o.write.map(|w| w.state).or(state);
        }
    }
}
