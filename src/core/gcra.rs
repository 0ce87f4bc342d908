//! GCRA, the generic cell rate algorithm ("virtual scheduling").
//!
//! Terms, as in ATM traffic shaping and in governor / redis-cell:
//! - `T`, the *emission interval*: the time one unit of cost "uses up",
//!   `period / limit`, rounded up to whole microseconds.
//! - `tau + T`, here `span = burst * T`: how far ahead of `now` the schedule
//!   may run. A limiter whose schedule is `span` ahead is drained; one whose
//!   schedule is not ahead at all is full (idle).
//! - `TAT`, the *theoretical arrival time*: the one `u64` of state. It is the
//!   time at which the limiter is full again.
//!
//! A request of cost `n` conforms when `max(TAT, now) + n*T - now <= span`;
//! if so the new TAT is `max(TAT, now) + n*T`. Everything else (remaining,
//! retry-after, reset-after) is exact integer arithmetic on that backlog.

use super::decision::{Outcome, ParamError, Write};
pub use super::schedule::Schedule;
use super::time::unit_interval_us;

/// `RL.GCRA key limit period_ms [BURST n]`: `limit` per `period_ms`, with up
/// to `burst` (default `limit`) admitted back to back from idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gcra {
    schedule: Schedule,
}

/// The stored state of a GCRA key: the theoretical arrival time, µs since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraState {
    pub tat_us: u64,
}

impl Gcra {
    /// Arguments must already be in their ranges (`limit`, `burst` in
    /// 1..=2^32-1, `period_ms` in 1..=10^12); this checks that they combine
    /// into a representable schedule.
    pub fn new(limit: u64, period_ms: u64, burst: u64) -> Result<Self, ParamError> {
        let interval = unit_interval_us(period_ms, limit);
        Schedule::new(interval, burst)
            .map(|schedule| Self { schedule })
            .ok_or(ParamError { arg: "BURST", reason: "BURST * period_ms / limit exceeds 10^15 ms" })
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn check(&self, state: Option<GcraState>, now_us: u64, cost: u64) -> Outcome<GcraState> {
        let o = self.schedule.check(state.map(|s| s.tat_us), now_us, cost);
        Outcome {
            decision: o.decision,
            write: o.write.map(|w| Write { state: GcraState { tat_us: w.state }, expire_at_ms: w.expire_at_ms }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::decision::Decision;
    use crate::core::table::{Row, MS, T0};

    fn run(g: &Gcra, rows: &[Row]) {
        crate::core::table::run(|s, now, cost| g.check(s, now, cost), g.schedule().burst(), rows);
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
        let now = T0;
        // A TAT a day ahead (the clock jumped back a day).
        let far = Some(GcraState { tat_us: now + 86_400_000 * MS });
        let o = g.check(far, now, 1);
        assert_eq!(
            o.decision,
            Decision { allowed: false, limit: 10, remaining: 0, retry_after_ms: 100, reset_after_ms: 1000 }
        );
        // Denied, but the drained state is stored, so the key is full again
        // after one span rather than after a day.
        let w = o.write.expect("a repair write");
        assert_eq!(w.state.tat_us, now + 1000 * MS);
        assert_eq!(w.expire_at_ms, now / MS + 1000);
        assert!(g.check(Some(w.state), now + 1000 * MS, 10).decision.allowed);
        // COST 0 and over-limit costs repair too; a normal state never does.
        assert_eq!(g.check(far, now, 0).write.map(|w| w.state.tat_us), Some(now + 1000 * MS));
        assert_eq!(g.check(far, now, 11).write.map(|w| w.state.tat_us), Some(now + 1000 * MS));
        assert_eq!(g.check(Some(w.state), now, 1).write, None);
        assert_eq!(g.check(Some(w.state), now, 0).write, None);
    }

    #[test]
    fn a_state_in_the_past_is_idle() {
        let g = Gcra::new(10, 1000, 10).unwrap();
        let o = g.check(Some(GcraState { tat_us: T0 - 86_400_000 * MS }), T0, 1);
        assert_eq!(o.decision.remaining, 9);
        assert_eq!(o.write.unwrap().state.tat_us, T0 + 100 * MS);
    }

    #[test]
    fn expiry_is_the_full_time_rounded_up_to_a_millisecond() {
        let g = Gcra::new(3, 1000, 3).unwrap(); // 333_334 µs per unit
        let o = g.check(None, T0, 1);
        let w = o.write.unwrap();
        assert_eq!(w.state.tat_us, T0 + 333_334);
        assert_eq!(w.expire_at_ms, (T0 + 333_334).div_ceil(MS));
        assert_eq!(o.decision.reset_after_ms, 334);
    }

    #[test]
    fn rate_faster_than_a_microsecond_is_clamped_to_one_unit_per_microsecond() {
        let g = Gcra::new(u32::MAX as u64, 1, u32::MAX as u64).unwrap();
        assert_eq!(g.schedule().interval_us(), 1);
    }

    #[test]
    fn a_burst_that_would_take_too_long_to_refill_is_rejected() {
        let e = Gcra::new(1, 1_000_000_000_000, u32::MAX as u64).unwrap_err();
        assert_eq!(e.arg, "BURST");
        assert!(Gcra::new(1, 1_000_000_000_000, 1000).is_ok());
    }
}
