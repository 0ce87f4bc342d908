//! The schedule GCRA and the token bucket share: `burst` units that refill
//! one per `interval_us`, stored as the time at which the limiter is full
//! again (see `gcra` for the terms).

use super::decision::{Decision, Outcome, Write};
use super::time::{ceil_ms, MAX_SPAN_US};

/// A validated schedule: `burst` units refill one per `interval_us`.
/// GCRA and the token bucket are both such schedules; they differ in how
/// users describe them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    interval_us: u64,
    burst: u64,
    span_us: u64,
}

impl Schedule {
    /// `burst` units, one every `interval_us`. `None` if the span (the time
    /// from drained to full) would exceed [`MAX_SPAN_US`].
    pub fn new(interval_us: u64, burst: u64) -> Option<Self> {
        let span_us = interval_us.checked_mul(burst)?;
        (interval_us > 0 && burst > 0 && span_us <= MAX_SPAN_US).then_some(Self { interval_us, burst, span_us })
    }

    pub fn interval_us(&self) -> u64 {
        self.interval_us
    }

    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// The time from drained to full.
    pub fn span_us(&self) -> u64 {
        self.span_us
    }

    /// Decide a request of `cost` units at `now`, given the stored time at
    /// which the limiter is full again (`None` for a missing key).
    pub fn check(&self, full_at: Option<u64>, now: u64, cost: u64) -> Outcome<u64> {
        let (t, span) = (self.interval_us, self.span_us);
        // The backlog: how far the schedule runs ahead of now. A stored time
        // in the past is an idle limiter. One further ahead than the span can
        // only come from a backward clock jump or tightened parameters: it
        // is read as drained, never as idle, and the drained state is stored
        // (a repair) so that the limiter is full again one span from now.
        // Without that write every later read would find the same far-future
        // time and the key would stay blocked until the clock caught up.
        let ahead = full_at.map_or(0, |tat| tat.saturating_sub(now));
        let repair = ahead > span;
        let backlog = ahead.min(span);
        let remaining_at = |backlog: u64| (span - backlog) / t;
        let write_at = |backlog: u64| {
            let state = now.saturating_add(backlog);
            Write { state, expire_at_ms: ceil_ms(state) }
        };

        if cost > self.burst {
            return Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.burst,
                    remaining: remaining_at(backlog),
                    retry_after_ms: -1,
                    reset_after_ms: ceil_ms(backlog),
                },
                write: repair.then(|| write_at(backlog)),
            };
        }
        // cost <= burst, so need <= span <= MAX_SPAN_US: no overflow.
        let need = cost * t;
        let after = backlog + need;
        if after <= span {
            Outcome {
                decision: Decision {
                    allowed: true,
                    limit: self.burst,
                    remaining: remaining_at(after),
                    retry_after_ms: 0,
                    reset_after_ms: ceil_ms(after),
                },
                write: (cost > 0 || repair).then(|| write_at(after)),
            }
        } else {
            Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.burst,
                    remaining: remaining_at(backlog),
                    // after - span <= span <= MAX_SPAN_US: fits i64.
                    retry_after_ms: ceil_ms(after - span) as i64,
                    reset_after_ms: ceil_ms(backlog),
                },
                write: repair.then(|| write_at(backlog)),
            }
        }
    }
}
