//! Property tests of refunds in the pure core (`REFUND n`, "reserve, then
//! settle"): reserving `c` and then refunding `r` leaves the state that
//! consuming `c - r` would have left, seen through every reply field and the
//! key's expiry, at the same instant and after time passes.
//!
//! The rule for the schedules (GCRA, token bucket), and why it is not exact
//! for every unit (see `Schedule::refund`): a charge is rounded up once per
//! decision, `ceil(c * P / L)` ns, and no function of the stored backlog and
//! `r` alone can give back `ceil(c * P / L) - ceil((c - r) * P / L)` for
//! every history: at 3 per second, reserving 4 from idle and reserving 5
//! 333_333_333 ns later leave the same backlog, yet refunding 1 must give
//! back 333_333_334 ns for the first and 333_333_333 ns for the second. So a
//! refund gives back the exact time of `r` units rounded *down* (never
//! more: rounding down is what keeps "never more than the burst at one
//! instant", see `refunds_never_let_more_than_the_burst_be_held`), and
//! fills the limiter when the backlog is within the charge of `r` units (a
//! unit being at least 1 ns). Hence:
//! - when a unit is a whole number of ns, reserve-then-refund equals
//!   consume(c - r) exactly, in every field and the expiry, with any earlier
//!   backlog and any time between;
//! - otherwise it leaves at most 1 ns more backlog than consume(c - r)
//!   (never less), and refunding all of a reservation made from idle fills
//!   the limiter (the key goes), when a unit is at least 1 ns.
//!
//! The sliding window keeps counts, so its refunds are exact: from the
//! current window's count first, then the previous one's, never below 0.

#[path = "common/model.rs"]
mod model;

use model::config;
use proptest::prelude::*;
use redis_rl::core::time::Nanos;
use redis_rl::core::{Algorithm, Change, Decision, Gcra, SlidingWindow, SlidingWindowState, TokenBucket, Verdict};

const NS_PER_MS: u64 = 1_000_000;
/// 2027-01-15, on a whole hour, in ns.
const T0: u64 = 1_800_000_000_000_000_000;

/// The state a verdict leaves, given the state before it: `None` when the key is gone.
fn after<S: Copy>(before: Option<S>, v: &Verdict<S>) -> Option<S> {
    match v.change {
        None => before,
        Some(Change::Delete) | Some(Change::Refund(None)) => None,
        Some(Change::Consume(w)) | Some(Change::Repair(w)) | Some(Change::Refund(Some(w))) => Some(w.state),
    }
}

/// An algorithm with a fixed-size state `S`: it reads and writes the state itself.
trait Fixed<S>: for<'s> Algorithm<State<'s> = S, Write = S> {}
impl<S, A: for<'s> Algorithm<State<'s> = S, Write = S>> Fixed<S> for A {}

/// The expiry a verdict sets (ms), `None` if it sets none.
fn expiry<S>(v: &Verdict<S>) -> Option<u64> {
    v.change.as_ref().and_then(|c| c.write()).map(|w| w.expire_at.0)
}

/// What is observable of a key at `t`: a status query's reply, if the key still lives.
fn observe<S: Copy, A: Fixed<S>>(a: &A, state: Option<S>, expire_at_ms: Option<u64>, t: u64) -> Decision {
    // A key whose expiry has passed is gone, whatever it held.
    let live = state.filter(|_| expire_at_ms.is_some_and(|e| e * NS_PER_MS > t));
    a.decide(live, Nanos(t), 0).decision
}

/// Divisors of 10^6 (2^a * 5^b): with such a limit, a unit of any
/// `period_ms` is a whole number of ns.
fn whole_unit_limit() -> impl Strategy<Value = u64> {
    (0u32..=6, 0u32..=6).prop_map(|(a, b)| 2u64.pow(a) * 5u64.pow(b))
}

/// A scenario: an earlier consumption `b0` (0: none) made `ago` ms before
/// now, a reservation `c` at now, a refund `r` at now + `later` ns.
#[derive(Debug, Clone, Copy)]
struct Scenario {
    b0: u64,
    ago_ms: u64,
    c: u64,
    r: u64,
    later_ns: u64,
}

/// Runs a scenario on `a` both ways and returns, at the refund's instant,
/// (refund's reply, the state and expiry it leaves, the reference's reply,
/// state and expiry), or `None` if the reservation was denied.
#[allow(clippy::type_complexity)]
fn both_ways<S: Copy + PartialEq + std::fmt::Debug, A: Fixed<S>>(
    a: &A,
    s: Scenario,
) -> Option<(Decision, Option<S>, Option<u64>, Decision, Option<S>, Option<u64>)> {
    let now = T0;
    let mut base = None;
    let mut base_exp = None;
    if s.b0 > 0 {
        let v = a.decide(None, Nanos(now - s.ago_ms * NS_PER_MS), s.b0);
        base = after(None, &v);
        base_exp = expiry(&v);
    }
    // A key whose expiry has passed is gone.
    if base_exp.is_none_or(|e| e * NS_PER_MS <= now) {
        base = None;
    }
    let reserve = a.decide(base, Nanos(now), s.c);
    if !reserve.decision.allowed {
        return None;
    }
    let reserved = after(base, &reserve);
    let reserved_exp = expiry(&reserve).or(base_exp);
    let t = now + s.later_ns;
    let live = reserved.filter(|_| reserved_exp.is_some_and(|e| e * NS_PER_MS > t));
    let refund = a.settle(live, Nanos(t), s.r);
    let refunded = after(live, &refund);
    let refunded_exp = if refunded.is_some() { expiry(&refund).or(reserved_exp) } else { None };

    // The reference: consume c - r at now (nothing if 0), observed at t.
    let net = s.c.saturating_sub(s.r);
    let (reference, reference_exp) = if net > 0 {
        let v = a.decide(base, Nanos(now), net);
        assert!(v.decision.allowed, "a smaller cost than an allowed one is allowed");
        (after(base, &v), expiry(&v).or(base_exp))
    } else {
        (base, base_exp)
    };
    let seen = observe(a, reference, reference_exp, t);
    let reference_live = reference.filter(|_| reference_exp.is_some_and(|e| e * NS_PER_MS > t));
    Some((refund.decision, refunded, refunded_exp, seen, reference_live, reference_exp))
}

/// The backlog (ns past `t`) a schedule state leaves: 0 if gone or idle.
fn backlog(full_at: Option<u64>, t: u64) -> u64 {
    full_at.map_or(0, |f| f.saturating_sub(t))
}

proptest! {
    #![proptest_config(config(512))]

    /// Whole-ns units: reserve c, refund r == consume(c - r), every field and
    /// the expiry, with any earlier backlog and any time between.
    #[test]
    fn gcra_reserve_then_refund_is_consuming_the_difference_exactly(
        limit in whole_unit_limit(),
        period_ms in 1u64..=10_000,
        burst_x in 1u64..=3,
        b0 in 0u64..=64, ago_ms in 0u64..=20_000,
        c in 1u64..=64, r in 1u64..=64,
        later_ns in prop_oneof![Just(0u64), 0u64..=30_000_000_000],
    ) {
        let g = Gcra::new(limit, period_ms, limit * burst_x).unwrap();
        let c = c.min(limit * burst_x);
        let s = Scenario { b0, ago_ms, c, r: r.min(c), later_ns };
        if let Some((d, st, exp, want_d, want_st, want_exp)) = both_ways(&g, s) {
            prop_assert_eq!(d, want_d);
            let t = T0 + later_ns;
            prop_assert_eq!(st.map(|s| s.tat_ns), want_st.map(|s| s.tat_ns).filter(|&f| f > t));
            if st.is_some() {
                prop_assert_eq!(exp, want_exp, "PTTL");
            }
        }
    }

    #[test]
    fn token_bucket_reserve_then_refund_is_consuming_the_difference_exactly(
        refill in whole_unit_limit(),
        period_ms in 1u64..=10_000,
        cap_x in 1u64..=3,
        b0 in 0u64..=64, ago_ms in 0u64..=20_000,
        c in 1u64..=64, r in 1u64..=64,
        later_ns in prop_oneof![Just(0u64), 0u64..=30_000_000_000],
    ) {
        let b = TokenBucket::new(refill * cap_x, refill, period_ms).unwrap();
        let c = c.min(refill * cap_x);
        let s = Scenario { b0, ago_ms, c, r: r.min(c), later_ns };
        if let Some((d, st, exp, want_d, want_st, want_exp)) = both_ways(&b, s) {
            prop_assert_eq!(d, want_d);
            let t = T0 + later_ns;
            prop_assert_eq!(st.map(|s| s.full_at_ns), want_st.map(|s| s.full_at_ns).filter(|&f| f > t));
            if st.is_some() {
                prop_assert_eq!(exp, want_exp, "PTTL");
            }
        }
    }

    /// Any unit: never less backlog than consume(c - r), at most 1 ns more;
    /// and refunding a whole reservation made from idle at once fills the
    /// limiter whenever a unit is at least 1 ns.
    #[test]
    fn gcra_refunds_are_within_one_nanosecond_and_never_generous(
        limit in 1u64..=u32::MAX as u64,
        period_ms in 1u64..=100_000,
        burst in 1u64..=1000,
        b0 in prop_oneof![Just(0u64), 0u64..=1000], ago_ms in 0u64..=1000,
        c in 1u64..=1000, r in 1u64..=1200, whole in any::<bool>(),
        later_ns in prop_oneof![Just(0u64), 0u64..=3_000_000_000],
    ) {
        let Ok(g) = Gcra::new(limit, period_ms, burst) else { return Ok(()) };
        let (b0, c) = (b0.min(burst), c.min(burst));
        let r = if whole { c } else { r };
        // Beyond c only from idle: else the refund also gives back b0's units.
        let r = if b0 == 0 { r } else { r.min(c) };
        let s = Scenario { b0, ago_ms, c, r, later_ns };
        if let Some((_, st, _, _, want_st, _)) = both_ways(&g, s) {
            let t = T0 + later_ns;
            let (got, want) = (backlog(st.map(|s| s.tat_ns), t), backlog(want_st.map(|s| s.tat_ns), t));
            prop_assert!(got >= want && got <= want + 1, "backlog {} vs consume(c - r)'s {}", got, want);
            if s.b0 == 0 && later_ns == 0 && s.r >= s.c && period_ms * NS_PER_MS >= limit {
                prop_assert_eq!(st, None, "a whole refund from idle fills the limiter");
            }
        }
    }

    /// Whatever reservations and refunds are made at one instant from idle,
    /// the units held never exceed the burst: a refund never gives back more
    /// than its units' exact time.
    #[test]
    fn refunds_never_let_more_than_the_burst_be_held(
        limit in 1u64..=u32::MAX as u64,
        period_ms in 1u64..=1000,
        burst in 1u64..=50,
        ops in prop::collection::vec((any::<bool>(), 1u64..=50), 1..40),
    ) {
        let Ok(g) = Gcra::new(limit, period_ms, burst) else { return Ok(()) };
        let mut state = None;
        let mut held: u64 = 0;
        for (reserve, n) in ops {
            let v = if reserve { g.decide(state, Nanos(T0), n) } else { g.settle(state, Nanos(T0), n) };
            if reserve && v.decision.allowed {
                held += n;
            } else if !reserve {
                held = held.saturating_sub(n);
            }
            state = after(state, &v);
            prop_assert!(held <= burst, "{} units held with a burst of {}", held, burst);
        }
    }

    /// The sliding window: reserve c, refund r <= c == consume(c - r), at the
    /// same instant and after time passes (no other traffic), with earlier
    /// counts in this or the previous window.
    #[test]
    fn slide_reserve_then_refund_is_consuming_the_difference_exactly(
        limit in 1u64..=200,
        window_ms in 1u64..=10_000,
        b0 in 0u64..=200, ago_ms in 0u64..=20_000,
        c in 1u64..=200, r_frac in 1u64..=100,
        later_ns in prop_oneof![Just(0u64), 0u64..=30_000_000_000],
    ) {
        let w = SlidingWindow::new(limit, window_ms);
        let c = c.min(limit);
        let r = (c * r_frac).div_ceil(100).max(1);
        let s = Scenario { b0: b0.min(limit), ago_ms, c, r, later_ns };
        if let Some((d, st, exp, want_d, want_st, want_exp)) = both_ways(&w, s) {
            prop_assert_eq!(d, want_d);
            prop_assert_eq!(st.is_some(), want_st.is_some() && want_d.reset_after_ms > 0);
            if st.is_some() {
                prop_assert_eq!(exp, want_exp, "PTTL");
            }
        }
    }

    /// A refund larger than what the window holds empties it and no more.
    #[test]
    fn slide_refunds_take_from_the_current_window_first_and_never_go_below_zero(
        limit in 1u64..=200,
        window_ms in 1u64..=10_000,
        p in 0u64..=200, c in 0u64..=200, r in 1u64..=500,
    ) {
        let w = SlidingWindow::new(limit, window_ms);
        let start_ms = (T0 / NS_PER_MS) / window_ms * window_ms;
        let now = start_ms * NS_PER_MS + 1;
        let (p, c) = (p.min(limit) as u32, c.min(limit) as u32);
        let state = Some(SlidingWindowState { window_start_ms: start_ms, window_ms, cur: c, prev: p });
        let v = w.settle(state, Nanos(now), r);
        let left = after(state, &v);
        let (p0, c0) = state.map_or((0, 0), |s| (u64::from(s.prev), u64::from(s.cur)));
        let (p1, c1) = left.map_or((0, 0), |s| (u64::from(s.prev), u64::from(s.cur)));
        prop_assert_eq!(c1, c0.saturating_sub(r));
        prop_assert_eq!(p1, p0.saturating_sub(r.saturating_sub(c0)));
        prop_assert_eq!(left.is_none(), c1 == 0 && p1 == 0);
        prop_assert!(v.decision.allowed && v.decision.remaining <= limit);
    }
}

#[test]
fn refunding_a_unit_at_three_per_second_restores_the_ms_boundary() {
    // 3 per second: consuming 3 leaves exactly 1000 ms. Reserving 4 and
    // refunding 1 must leave the same (1_333_333_334 - 333_333_333 is one
    // ns more: the refund rounds down, then fills to within its rounding).
    let g = Gcra::new(3, 1000, 6).unwrap();
    let v = g.decide(None, Nanos(T0), 4);
    let v = g.settle(after(None, &v), Nanos(T0), 1);
    let want = g.decide(None, Nanos(T0), 3);
    // Within 1 ns, never less: here 1 ns more, seen as 1001 ms.
    assert_eq!(after(None, &want).unwrap().tat_ns, T0 + 1_000_000_000);
    let got = v.change.unwrap().write().unwrap().state.tat_ns;
    assert!(got == T0 + 1_000_000_000 || got == T0 + 1_000_000_001, "{got}");
    // Refunding all of a reservation from idle fills it: charged
    // 333_333_334 ns, the exact time of 1 unit rounded down is 333_333_333,
    // and the ns of rounding left is forgiven: the key goes, full.
    for c in 1..=6 {
        let v = g.decide(None, Nanos(T0), c);
        let v = g.settle(after(None, &v), Nanos(T0), c);
        assert_eq!(v.change, Some(Change::Refund(None)), "reserve {c}, refund {c}");
        assert_eq!(
            v.decision,
            Decision { allowed: true, limit: 6, remaining: 6, retry_after_ms: 0, reset_after_ms: 0, wait_ms: 0 }
        );
    }
}

#[test]
fn a_refund_on_a_missing_key_writes_nothing_and_answers_full() {
    let g = Gcra::new(10, 1000, 10).unwrap();
    let v = g.settle(None, Nanos(T0), 5);
    assert_eq!(v.change, None);
    assert_eq!(
        v.decision,
        Decision { allowed: true, limit: 10, remaining: 10, retry_after_ms: 0, reset_after_ms: 0, wait_ms: 0 }
    );
    let w = SlidingWindow::new(10, 1000);
    assert_eq!(w.settle(None, Nanos(T0), 5).change, None);
}

#[test]
fn a_refund_applies_to_a_drained_reading_after_a_clock_jump() {
    // A TAT a day ahead reads as drained (one span, 1000 ms); refunding 3
    // of 10 leaves 700 ms, stored from now, not from a day ahead.
    let g = Gcra::new(10, 1000, 10).unwrap();
    let far = redis_rl::core::GcraState { tat_ns: T0 + 86_400_000 * NS_PER_MS, booked_ns: 0 };
    let v = g.settle(Some(far), Nanos(T0), 3);
    assert_eq!(
        v.decision,
        Decision { allowed: true, limit: 10, remaining: 3, retry_after_ms: 0, reset_after_ms: 700, wait_ms: 0 }
    );
    assert_eq!(v.change.unwrap().write().unwrap().state.tat_ns, T0 + 700 * NS_PER_MS);
    // A window count above a lowered limit reads as the limit.
    let wide = SlidingWindow::new(100, 1000);
    let s = after(None, &wide.decide(None, Nanos(T0), 80));
    let narrow = SlidingWindow::new(10, 1000);
    let v = narrow.settle(s, Nanos(T0), 4);
    assert_eq!(v.change.unwrap().write().unwrap().state.cur, 6);
    assert_eq!(v.decision.remaining, 4);
}
