//! GCRA, the generic cell rate algorithm ("virtual scheduling").
//!
//! Terms, as in ATM traffic shaping and in governor / redis-cell:
//! - `u`, the *emission interval*: the time one unit of cost "uses up",
//!   `P / L` ns for `L` units per `P` ns. It is kept exact, as the rational
//!   `P / L`, never rounded on its own.
//! - the *charge* of a decision of cost `c`: `ceil(c * P / L)` ns, its exact
//!   time rounded up once (at least its exact time, less than 1 ns more).
//! - `TAT`, the *theoretical arrival time*: the one `u64` of state, in ns
//!   since the epoch. It is the time at which the limiter is full again; the
//!   *backlog* `b = TAT - now` is how far the schedule runs ahead of now.
//!
//! A request of cost `c <= B` (the burst) conforms when the limiter is idle
//! (`b == 0`), or when `b + charge <= allow`, where `allow` is the largest
//! whole ns that is both at most `B * ceil(u)` and less than `(B + 1) * u`:
//! - `B` unit requests at one instant from idle are charged `B * ceil(u)`,
//!   so they are all admitted whenever that is less than `(B + 1) * u`, that
//!   is when their rounding adds up to less than one unit (always when `u`
//!   is a whole number of ns, and then `allow` is the exact span `B * u`);
//! - no set of decisions at one instant from idle that adds up to more than
//!   `B` units is admitted: their charges add up to at least `(B + 1) * u`,
//!   more than `allow` (and the idle rule admits only the first of them);
//! - over time nothing is admitted faster than the rate: every charge is at
//!   least the decision's exact time, and the schedule never runs more than
//!   `allow < (B + 1) * u` ahead.
//!
//! If so the new TAT is `max(TAT, now) + charge`. Everything else
//! (remaining, retry-after, reset-after) is exact integer arithmetic on the
//! backlog, in 64 bits where the products fit and 128 bits otherwise.

use super::decision::{Outcome, ParamError};
use super::schedule::Ahead;
pub use super::schedule::Schedule;

/// `RL.GCRA key limit period_ms [BURST n]`: `limit` per `period_ms`, with up
/// to `burst` (default `limit`) admitted back to back from idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gcra {
    schedule: Schedule,
}

/// The stored state of a GCRA key: the theoretical arrival time, ns since
/// the epoch, and how far bookings (`MAXWAIT`) ran it beyond a drained
/// limiter (0 without bookings; see `schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GcraState {
    pub tat_ns: u64,
    pub booked_ns: u64,
}

impl From<GcraState> for Ahead {
    #[inline]
    fn from(s: GcraState) -> Ahead {
        Ahead { full_at: s.tat_ns, booked: s.booked_ns }
    }
}

impl From<Ahead> for GcraState {
    #[inline]
    fn from(a: Ahead) -> GcraState {
        GcraState { tat_ns: a.full_at, booked_ns: a.booked }
    }
}

impl Gcra {
    /// Arguments must already be in their ranges (`limit`, `burst` in
    /// 1..=2^32-1, `period_ms` in 1..=10^12); this checks that they combine
    /// into a representable schedule.
    pub fn new(limit: u64, period_ms: u64, burst: u64) -> Result<Self, ParamError> {
        Schedule::new(period_ms, limit, burst)
            .map(|schedule| Self { schedule })
            .ok_or(ParamError { arg: "BURST", reason: "BURST * period_ms / limit exceeds 10^12 ms" })
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Decide `cost` at `now_ns` (ns since the epoch).
    /// Whether a call that consumes nothing at `now_ns` stores `state`
    /// (a repair: it reads as drained).
    pub fn repairs(&self, state: Option<GcraState>, now_ns: u64) -> bool {
        self.schedule.repairs(state.map(Ahead::from), now_ns)
    }

    pub fn check(&self, state: Option<GcraState>, now_ns: u64, cost: u64) -> Outcome<GcraState> {
        self.schedule.check(state.map(Ahead::from), now_ns, cost).map_state()
    }

    /// The least wait (ns) after which `cost` conforms at `now_ns`; `None`: never.
    pub fn conforms_in(&self, state: Option<GcraState>, now_ns: u64, cost: u64) -> Option<u64> {
        self.schedule.conforms_in(state.map(Ahead::from), now_ns, cost)
    }

    /// Books `cost` at `now_ns` to start `start_ns` from now ([`Schedule::book`]).
    pub fn book(&self, state: Option<GcraState>, now_ns: u64, cost: u64, start_ns: u64) -> Outcome<GcraState> {
        self.schedule.book(state.map(Ahead::from), now_ns, cost, start_ns).map_state()
    }

    /// Give `units` back at `now_ns`: the TAT moves back by their time,
    /// never before now ([`Schedule::refund`]; `write: None`: full).
    pub fn refund(&self, state: GcraState, now_ns: u64, units: u64) -> Outcome<GcraState> {
        self.schedule.refund(state.into(), now_ns, units).map_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::table::{Row, MS, T0};
    use crate::core::time::NS_PER_US;
    use crate::core::Decision;

    /// One ms in ns.
    const NS_MS: u64 = 1_000_000;

    fn run(g: &Gcra, rows: &[Row]) {
        crate::core::table::run(|s, now, cost| g.check(s, now * NS_PER_US, cost), g.schedule().burst(), rows);
    }

    fn t0() -> u64 {
        T0 * NS_PER_US
    }

    /// In the last ns in which the burst's rounding allowance lets a whole
    /// burst through while time is still charged, `remaining` says one less
    /// than a request of the whole burst gets (rounding is never forgiven
    /// in the reply: full only when idle, so the reset is exact), and never
    /// more than the burst goes through. Here a unit is 512.45... ms, not a
    /// whole number of ns, and B * (ceil(u) - u) ns add up to nearly one
    /// unit. (The property `backward_clock_jump_never_admits_more_than_the_limit`
    /// compared a jump's admissions with `remaining` and failed here at
    /// random; it now compares them with what was admissible before it.)
    #[test]
    fn within_the_bursts_rounding_remaining_says_one_less_than_goes_through() {
        let b = 1_951_426_740;
        let g = Gcra::new(b, 1_000_000_000_000, b).unwrap();
        let t0 = T0 * NS_PER_US;
        let charged = g.check(None, t0, 1).write.map(|w| w.state);
        // Admit as much as will go at `t`, halving the request on each denial.
        let drain = |t: u64| {
            let (mut state, mut total, mut ask) = (charged, 0, 1u64 << 32);
            while ask > 0 {
                let o = g.check(state, t, ask);
                if o.decision.allowed {
                    total += ask;
                    state = o.write.map(|w| w.state);
                } else {
                    ask /= 2;
                }
            }
            total
        };
        let status = g.check(charged, t0 + 1876, 0).decision;
        assert_eq!((status.remaining, drain(t0 + 1876)), (b - 1, b));
        assert!(status.reset_after_ms > 0);
        // An earlier instant (the clock went back) admits no more.
        assert!(drain(t0 + 1000) <= drain(t0 + 1876));
        assert!(drain(t0) <= b);
    }

    #[test]
    fn ten_per_second_with_burst_six() {
        let g = Gcra::new(10, 1000, 6).unwrap();
        run(
            &g,
            &[
                (0, 1, true, 5, 0, 100),
                (0, 1, true, 4, 0, 200),
                (0, 1, true, 3, 0, 300),
                (0, 1, true, 2, 0, 400),
                (0, 1, true, 1, 0, 500),
                (0, 1, true, 0, 0, 600),
                // The seventh waits one emission interval.
                (0, 1, false, 0, 100, 600),
                (99, 1, false, 0, 1, 501),
                // At 250 ms, 2.5 intervals have drained: one passes.
                (250, 1, true, 1, 0, 450),
            ],
        );
    }

    #[test]
    fn burst_defaults_to_limit_and_refills_at_the_rate() {
        let g = Gcra::new(5, 1000, 5).unwrap();
        run(
            &g,
            &[
                (0, 5, true, 0, 0, 1000),
                (0, 1, false, 0, 200, 1000),
                (199, 1, false, 0, 1, 801),
                (200, 1, true, 0, 0, 1000),
                (1200, 0, true, 5, 0, 0),
            ],
        );
    }

    #[test]
    fn cost_above_burst_can_never_be_allowed() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        run(&g, &[(0, 11, false, 10, -1, 0), (0, 3, true, 7, 0, 300), (0, 11, false, 7, -1, 300)]);
    }

    #[test]
    fn cost_zero_reads_without_writing() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        run(&g, &[(0, 0, true, 10, 0, 0), (0, 4, true, 6, 0, 400), (100, 0, true, 7, 0, 300)]);
    }

    #[test]
    fn a_denied_request_reports_the_state_as_it_is() {
        let g = Gcra::new(4, 400, 4).unwrap();
        // Interval 100 ms; cost 3 after 2 consumed needs 100 ms more.
        run(&g, &[(0, 2, true, 2, 0, 200), (0, 3, false, 2, 100, 200), (100, 3, true, 0, 0, 400)]);
    }

    #[test]
    fn state_far_in_the_future_reads_as_drained_and_is_repaired() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        let now = t0();
        // A TAT a day ahead (the clock jumped back a day).
        let far = Some(GcraState { tat_ns: now + 86_400_000 * NS_MS, booked_ns: 0 });
        let o = g.check(far, now, 1);
        assert_eq!(
            o.decision,
            Decision { allowed: false, limit: 10, remaining: 0, retry_after_ms: 100, reset_after_ms: 1000, wait_ms: 0 }
        );
        // Denied, but the drained state is stored, so the key is full again
        // after one span rather than after a day.
        let w = o.write.expect("a repair write");
        assert_eq!(w.state.tat_ns, now + 1000 * NS_MS);
        assert_eq!(w.expire_at.0, now / NS_MS + 1000);
        assert!(g.check(Some(w.state), now + 1000 * NS_MS, 10).decision.allowed);
        // COST 0 and over-limit costs repair too; a normal state never does.
        assert_eq!(g.check(far, now, 0).write.map(|w| w.state.tat_ns), Some(now + 1000 * NS_MS));
        assert_eq!(g.check(far, now, 11).write.map(|w| w.state.tat_ns), Some(now + 1000 * NS_MS));
        assert_eq!(g.check(Some(w.state), now, 1).write, None);
        assert_eq!(g.check(Some(w.state), now, 0).write, None);
    }

    #[test]
    fn a_state_in_the_past_is_idle() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        let o = g.check(Some(GcraState { tat_ns: t0() - 86_400_000 * NS_MS, booked_ns: 0 }), t0(), 1);
        assert_eq!(o.decision.remaining, 9);
        assert_eq!(o.write.unwrap().state.tat_ns, t0() + 100 * NS_MS);
    }

    #[test]
    fn expiry_is_the_full_time_rounded_up_to_a_millisecond() {
        let g = Gcra::new(3, 1000, 3).unwrap(); // 333_333_333.3 ns per unit
        let o = g.check(None, t0(), 1);
        let w = o.write.unwrap();
        assert_eq!(w.state.tat_ns, t0() + 333_333_334);
        assert_eq!(w.expire_at.0, (t0() + 333_333_334).div_ceil(NS_MS));
        assert_eq!(o.decision.reset_after_ms, 334);
    }

    #[test]
    fn a_decision_is_charged_its_exact_time_rounded_up_once() {
        // The example: 10^8 per second, COST 10^6 takes exactly 10 ms
        // (0.1.0 charged 1 µs per unit: 1000 ms).
        let g = Gcra::new(100_000_000, 1000, 100_000_000).unwrap();
        run(&g, &[(0, 1_000_000, true, 99_000_000, 0, 10), (5, 0, true, 99_500_000, 0, 5)]);
        // 3 per second, COST 2: 666_666_667 ns, not 2 * 333_333_334.
        let g = Gcra::new(3, 1000, 3).unwrap();
        let w = g.check(None, t0(), 2).write.unwrap();
        assert_eq!(w.state.tat_ns - t0(), 666_666_667);
        // At the top of the range: 2^32-1 per ms is honoured, not clamped.
        let top = u32::MAX as u64;
        let g = Gcra::new(top, 1, top).unwrap();
        let o = g.check(None, t0(), top);
        assert_eq!(o.write.unwrap().state.tat_ns - t0(), NS_MS);
        assert_eq!(o.decision.reset_after_ms, 1);
    }

    /// `burst` unit requests at one instant from idle: how many pass.
    fn unit_requests_admitted(g: &Gcra, tries: u64) -> u64 {
        let mut state = None;
        let mut n = 0;
        for _ in 0..tries {
            let o = g.check(state, t0(), 1);
            if let Some(w) = o.write {
                state = Some(w.state);
                n += 1;
            }
        }
        n
    }

    #[test]
    fn a_burst_of_units_is_admitted_exactly_when_its_rounding_adds_up_to_less_than_one_unit() {
        // Units a fraction of a ns off a whole number: ceil per decision
        // against the exact span would admit 2, 6 and 998.
        for (limit, period_ms) in [(3, 1000), (7, 1), (999, 1000)] {
            let g = Gcra::new(limit, period_ms, limit).unwrap();
            assert_eq!(unit_requests_admitted(&g, limit + 5), limit, "{limit} per {period_ms} ms");
        }
        // And BURST n larger than the limit.
        let g = Gcra::new(3, 1000, 1000).unwrap();
        assert_eq!(unit_requests_admitted(&g, 1010), 1000);
    }

    #[test]
    fn never_more_than_the_burst_wins_below_one_nanosecond_per_unit() {
        // 2^32-1 per ms is 0.00023 ns a unit; 1000 unit decisions are charged
        // 1 ns each, far more than 1001 units' exact time (0.23 ns): admitting
        // a second one would let a later decision of cost 1000 through too.
        let top = u32::MAX as u64;
        let g = Gcra::new(top, 1, 1000).unwrap();
        assert_eq!(unit_requests_admitted(&g, 1000), 1);
        // Whatever the split, no more than the burst passes at one instant.
        let first = g.check(None, t0(), 1).write.unwrap().state;
        assert!(!g.check(Some(first), t0(), 1000).decision.allowed);
        // A single decision of the whole burst from idle does pass.
        let o = g.check(None, t0(), 1000);
        assert!(o.decision.allowed);
        assert_eq!(o.decision.remaining, 0);
        assert!(!g.check(o.write.map(|w| w.state), t0(), 1).decision.allowed);
        // The same limit with BURST 1 is usable: one per decision, every ns.
        let g = Gcra::new(top, 1, 1).unwrap();
        let s = g.check(None, t0(), 1).write.unwrap().state;
        let d = g.check(Some(s), t0(), 1).decision;
        assert_eq!((d.allowed, d.retry_after_ms), (false, 1));
        assert!(g.check(Some(s), t0() + 1, 1).decision.allowed);
    }

    #[test]
    fn a_long_run_at_exactly_the_rate_is_admitted_in_full() {
        // 10^7 per second, 10_000 units every ms for 200 ms, from idle and
        // with a burst of a single ms.
        for burst in [10_000_000, 10_000] {
            let g = Gcra::new(10_000_000, 1000, burst).unwrap();
            let mut state = None;
            for ms in 0..200 {
                let o = g.check(state, t0() + ms * NS_MS, 10_000);
                assert!(o.decision.allowed, "burst {burst}, at {ms} ms");
                state = o.write.map(|w| w.state);
            }
        }
        // Likewise at a unit that is not a whole ns: 3 per second, each unit
        // at its exact time rounded up to the µs clock, for 3000 units.
        let g = Gcra::new(3, 1000, 2).unwrap();
        let mut state = None;
        for i in 0..3000u64 {
            let now = t0() + (i * 1_000_000).div_ceil(3) * NS_PER_US;
            let o = g.check(state, now, 1);
            assert!(o.decision.allowed, "unit {i}");
            state = o.write.map(|w| w.state);
        }
    }

    #[test]
    fn a_burst_that_would_take_too_long_to_refill_is_rejected() {
        let e = Gcra::new(1, 1_000_000_000_000, u32::MAX as u64).unwrap_err();
        assert_eq!(e.arg, "BURST");
        assert!(Gcra::new(1, 1_000_000_000_000, 1).is_ok());
        assert!(Gcra::new(1, 1_000_000_000_000, 2).is_err());
        // Compared exactly: 3 units of a third of 10^12 ms each is 10^12 ms.
        assert!(Gcra::new(3, 1_000_000_000_000, 3).is_ok());
        assert!(Gcra::new(3, 1_000_000_000_000, 4).is_err());
        let _ = MS;
    }

    /// `MAXWAIT`: `decide_within` at the core, as a command calls it.
    fn within(g: &Gcra, state: Option<GcraState>, now: u64, cost: u64, max_wait_ms: u64) -> Outcome<GcraState> {
        let o = g.check(state, now, cost);
        if o.decision.allowed {
            return o;
        }
        match g.conforms_in(state, now, cost) {
            Some(start) if start <= max_wait_ms * NS_MS => g.book(state, now, cost, start),
            _ => o,
        }
    }

    #[test]
    fn bookings_on_a_fresh_key_start_one_emission_interval_apart() {
        // 10 per second, BURST 1: one every 100 ms.
        let g = Gcra::new(10, 1000, 1).unwrap();
        let mut state = None;
        for k in 0..=10u64 {
            let o = within(&g, state, t0(), 1, 1000);
            assert!(o.decision.allowed, "booking {k}");
            assert_eq!(o.decision.wait_ms, 100 * k, "booking {k}");
            assert_eq!(o.decision.retry_after_ms, 0);
            assert_eq!(o.decision.remaining, 0);
            assert_eq!(o.decision.reset_after_ms, 100 * (k + 1));
            let w = o.write.expect("a booking consumes");
            assert_eq!(w.state.tat_ns, t0() + 100 * (k + 1) * NS_MS);
            // How far beyond a drained limiter (100 ms) the bookings reach.
            assert_eq!(w.state.booked_ns, 100 * k * NS_MS);
            state = Some(w.state);
        }
        // The twelfth would start in 1100 ms: beyond MAXWAIT, denied as
        // without it, and nothing is booked.
        let o = within(&g, state, t0(), 1, 1000);
        assert!(!o.decision.allowed);
        assert_eq!((o.decision.retry_after_ms, o.decision.wait_ms), (1100, 0));
        assert_eq!(o.write, None);
        // A call without MAXWAIT reads the bookings exactly.
        let d = g.check(state, t0() + 500 * NS_MS, 1).decision;
        assert_eq!((d.allowed, d.retry_after_ms, d.reset_after_ms), (false, 600, 600));
        assert!(!g.check(state, t0() + 1099 * NS_MS, 1).decision.allowed);
        let o = g.check(state, t0() + 1100 * NS_MS, 1);
        assert!(o.decision.allowed);
        // Once the bookings have started the state is a plain one again.
        assert_eq!(o.write.unwrap().state.booked_ns, 0);
    }

    #[test]
    fn a_booking_waits_for_the_idle_limiter_when_its_cost_is_the_whole_burst() {
        let g = Gcra::new(10, 1000, 5).unwrap();
        let s = g.check(None, t0(), 1).write.map(|w| w.state);
        // Cost 5 (the burst) after 1: conforms when idle again, 100 ms.
        assert_eq!(g.conforms_in(s, t0(), 5), Some(100 * NS_MS));
        let o = within(&g, s, t0(), 5, 100);
        assert_eq!((o.decision.allowed, o.decision.wait_ms), (true, 100));
        assert_eq!(o.write.unwrap().state.tat_ns, t0() + 600 * NS_MS);
        // Above the burst: never, whatever the wait.
        assert_eq!(g.conforms_in(s, t0(), 6), None);
        let o = within(&g, s, t0(), 6, 1_000_000);
        assert_eq!((o.decision.allowed, o.decision.retry_after_ms, o.write), (false, -1, None));
        // MAXWAIT 0 books nothing that does not conform now.
        assert!(!within(&g, s, t0(), 5, 0).decision.allowed);
    }

    #[test]
    fn booked_starts_never_run_faster_than_the_rate() {
        // Replay every booked start, at its exact instant, through the
        // same limiter without bookings: each one conforms there, so over
        // any window the starts keep the rate and the burst.
        for (limit, period_ms, burst) in [(10, 1000, 1), (10, 1000, 4), (3, 1000, 2), (7, 1, 7)] {
            let g = Gcra::new(limit, period_ms, burst).unwrap();
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            let mut rand = |n: u64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % n
            };
            let (mut state, mut now, mut starts) = (None, t0(), Vec::new());
            for _ in 0..2000 {
                now += rand(3 * period_ms * NS_MS / limit);
                let cost = 1 + rand(burst);
                let wait = g.conforms_in(state, now, cost).unwrap();
                let o = within(&g, state, now, cost, 5 * period_ms);
                if o.decision.allowed {
                    assert_eq!(o.decision.wait_ms, wait.div_ceil(NS_MS));
                    starts.push((now + wait, cost));
                    state = o.write.map(|w| w.state);
                } else {
                    assert!(wait > 5 * period_ms * NS_MS && o.write.is_none());
                }
            }
            let mut replay = None;
            for (k, &(at, cost)) in starts.iter().enumerate() {
                let o = g.check(replay, at, cost);
                assert!(o.decision.allowed, "{limit}/{period_ms} ms burst {burst}: start {k} at {at}");
                replay = o.write.map(|w| w.state).or(replay);
            }
            assert!(starts.len() > 100);
        }
    }

    #[test]
    fn a_backward_jump_on_a_booked_key_blocks_it_no_longer_than_drained_plus_its_booking() {
        let g = Gcra::new(10, 1000, 1).unwrap();
        let mut state = None;
        for _ in 0..5 {
            state = within(&g, state, t0(), 1, 1000).write.map(|w| w.state);
        }
        let s = state.unwrap();
        assert_eq!((s.tat_ns - t0(), s.booked_ns), (500 * NS_MS, 400 * NS_MS));
        // The clock jumps back an hour: the key reads as drained plus its
        // booking (500 ms), not as an hour and 500 ms, and is repaired so.
        let back = t0() - 3_600_000 * NS_MS;
        let o = g.check(state, back, 1);
        assert_eq!((o.decision.allowed, o.decision.retry_after_ms), (false, 500));
        let w = o.write.expect("a repair");
        assert_eq!((w.state.tat_ns, w.state.booked_ns), (back + 500 * NS_MS, 400 * NS_MS));
        // A plain key after the same jump: drained, 100 ms.
        let plain = g.check(None, t0(), 1).write.map(|w| w.state);
        assert_eq!(g.check(plain, back, 1).decision.retry_after_ms, 100);
        // A corrupt booking beyond MAXWAIT's longest is read as that longest.
        let wild = GcraState { tat_ns: t0() + 86_400_000 * NS_MS, booked_ns: u64::MAX };
        assert_eq!(g.check(Some(wild), t0(), 1).decision.retry_after_ms, 100 + 1_000_000);
    }

    #[test]
    fn a_refund_gives_back_a_booking() {
        let g = Gcra::new(10, 1000, 1).unwrap();
        let mut state = None;
        for _ in 0..3 {
            state = within(&g, state, t0(), 1, 1000).write.map(|w| w.state);
        }
        let o = g.refund(state.unwrap(), t0(), 1);
        let w = o.write.unwrap();
        assert_eq!((w.state.tat_ns - t0(), w.state.booked_ns), (200 * NS_MS, 100 * NS_MS));
        // The next booking takes the freed place.
        assert_eq!(within(&g, Some(w.state), t0(), 1, 1000).decision.wait_ms, 200);
    }
}
