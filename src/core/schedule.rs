//! The schedule GCRA and the token bucket share: `burst` units refilled
//! `count` per `period`, kept as the time (ns since the epoch) at which the
//! limiter is full again. The terms, the charge of a decision and the
//! admission rule are explained in `gcra`.
//!
//! Bookings (`MAXWAIT`, see [`Schedule::conforms_in`] and [`Schedule::book`]):
//! a request that would conform within its wait is admitted now for the
//! earliest instant it conforms, as if it had arrived then. Its charge runs
//! the schedule further ahead than a drained limiter (the span), by at most
//! the wait; the state keeps how far (`booked`), so that later calls read
//! the bookings exactly instead of taking them for a backward clock jump.
//! A state further ahead than the span plus that still reads as drained
//! plus it: no key is blocked longer than a drained limiter plus the
//! longest wait booked on it.

use super::decision::{Decision, Outcome, Write};
use super::time::{ceil_ms_ns, expiry_ms, mul_div_ceil, mul_div_floor, Millis, MAX_PERIOD_MS, MAX_SPAN_MS, NS_PER_MS};

/// What a schedule stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ahead {
    /// When the limiter is full again, ns since the epoch.
    pub full_at: u64,
    /// How far beyond the span bookings ran the schedule ahead when it was
    /// written (ns; 0 without bookings, and once they have started): a
    /// lead up to the span plus this is read exactly.
    pub booked: u64,
}

/// A validated schedule: `burst` units, refilled `count` per `period_ns`.
/// GCRA and the token bucket are both such schedules; they differ in how
/// users describe them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    period_ns: u64,
    count: u64,
    burst: u64,
    /// The charge of one unit: `ceil(P / L)`.
    unit_ns: u64,
    /// The most backlog an admitted decision may leave (see the module docs).
    allow_ns: u64,
}

impl Schedule {
    /// `burst` units, refilled `count` per `period_ms`. `None` unless every
    /// argument is positive, `period_ms <= 10^12` and the time from drained
    /// to full, `burst * period_ms / count`, is at most [`MAX_SPAN_MS`]
    /// (compared exactly, not after rounding).
    pub fn new(period_ms: u64, count: u64, burst: u64) -> Option<Self> {
        if period_ms == 0 || period_ms > MAX_PERIOD_MS || count == 0 || burst == 0 {
            return None;
        }
        if u128::from(burst) * u128::from(period_ms) > u128::from(MAX_SPAN_MS) * u128::from(count) {
            return None;
        }
        // period_ms <= 10^12: at most 10^18 ns.
        let period_ns = period_ms * NS_PER_MS;
        let unit_ns = period_ns.div_ceil(count);
        // burst * unit_ns <= burst * P / L + burst <= 10^18 + 2^32: no overflow.
        let burst_ns = burst * unit_ns;
        // The largest x with x * L < (B + 1) * P; (B + 1) * P / L <= 2 * 10^18.
        let below_next = mul_div_ceil(burst + 1, period_ns, count) - 1;
        Some(Self { period_ns, count, burst, unit_ns, allow_ns: burst_ns.min(below_next) })
    }

    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// The most backlog an admitted decision may leave.
    pub fn allow_ns(&self) -> u64 {
        self.allow_ns
    }

    /// The charge of a decision of `cost` units: `ceil(cost * P / L)` ns.
    #[inline]
    pub fn charge_ns(&self, cost: u64) -> u64 {
        if cost == 1 {
            self.unit_ns
        } else {
            mul_div_ceil(cost, self.period_ns, self.count)
        }
    }

    /// The most backlog any valid state has: `allow_ns`, or a single
    /// decision of the whole burst from idle (which the idle rule admits),
    /// whichever is more. At most `B * ceil(u)`.
    pub fn span_ns(&self) -> u64 {
        self.allow_ns.max(mul_div_ceil(self.burst, self.period_ns, self.count))
    }

    /// The largest cost admitted now with `backlog` ns of backlog. Full
    /// (`burst`) only when idle: rounding is never forgiven, so a limiter
    /// with time still charged reports at most `burst - 1` (and its reset
    /// is still ahead), even in the last few ns in which the burst's
    /// rounding allowance would let a whole burst through.
    #[inline]
    fn remaining_at(&self, backlog: u64) -> u64 {
        if backlog == 0 {
            return self.burst;
        }
        // ceil(c * P / L) <= room  <=>  c <= room * L / P.
        let room = self.allow_ns.saturating_sub(backlog);
        mul_div_floor(room, self.count, self.period_ns).min(self.burst - 1)
    }

    /// The time a refund of `units` gives back: the exact time of the
    /// units, rounded down, `floor(units * P / L)` ns, at most `cap` (the
    /// backlog it is taken from, so the product never overflows).
    ///
    /// Down, never up: every charge is at least its exact time and every
    /// refund at most its exact time, so the backlog never falls below the
    /// exact time of what is still held, and no sequence of reservations
    /// and refunds at one instant holds more than the burst. (Giving back
    /// `ceil`, what a charge of the same units takes, would: with
    /// `P / L = 1.5` ns and a burst of 2, reserve 2 (3 ns), refund 1
    /// (2 ns), reserve 2 (3 ns) holds 3 units in 4 ns of backlog.)
    #[inline]
    fn refund_ns(&self, units: u64, cap: u64) -> u64 {
        if u128::from(units) * u128::from(self.period_ns) >= u128::from(cap) * u128::from(self.count) {
            cap
        } else {
            // Below cap: fits.
            mul_div_floor(units, self.period_ns, self.count)
        }
    }

    /// Gives `units` back at `now` (ns) to the stored time at which the
    /// limiter is full again, read as [`check`](Self::check) reads it (a
    /// drained reading after a clock jump is refunded from that reading).
    /// The backlog moves back by the units' time ([`refund_ns`]), never
    /// before now. The decision is the state after the refund, allowed; the
    /// write is `None` when the limiter is full after it (the key goes).
    ///
    /// A reservation's charge is rounded up and the refund's time rounded
    /// down, so when a unit is not a whole number of ns a refund of all
    /// that a reservation took could leave the reservation's rounding (less
    /// than 1 ns) behind, and an idle limiter would show a backlog, a
    /// `reset_after_ms` of 1 and one unit short. So when a unit is at least
    /// 1 ns and the backlog is no more than the charge of `units`
    /// (`ceil(units * P / L)`), the refund fills the limiter: at one
    /// instant a backlog that small holds at most `units` units (holding
    /// `h` units takes at least `ceil(h * P / L)`, and `h > units` would take
    /// more than the charge of `units`), so it holds nothing afterwards.
    /// Below 1 ns a unit, `ceil` of many units can be a single ns, so the
    /// rounding stays: at most 1 ns.
    ///
    /// [`refund_ns`]: Self::refund_ns
    pub fn refund(&self, state: Ahead, now: u64, units: u64) -> Outcome<Ahead> {
        let (backlog, _) = self.backlog(Some(state), now);
        // backlog <= ceil(x) <=> backlog - 1 < x, for x = units * P / L.
        let covered = self.period_ns >= self.count
            && u128::from(backlog.saturating_sub(1)) * u128::from(self.count)
                < u128::from(units) * u128::from(self.period_ns);
        let after = if covered { 0 } else { backlog - self.refund_ns(units, backlog) };
        Outcome { decision: self.allowed(after), write: (after > 0).then(|| self.write_at(now, after)) }
    }

    /// The backlog a stored lead of `ahead` ns over now reads as, and
    /// whether that reading must be stored (a repair). A lead further than
    /// any valid state has can only come from a backward clock jump or
    /// tightened parameters: it reads as drained, never as idle.
    ///
    /// Bookings run a schedule up to `booked` ns beyond the span: that far
    /// is read exactly, and a lead further still as drained plus `booked`.
    #[inline]
    fn read(&self, ahead: u64, booked: u64) -> (u64, bool) {
        if ahead <= self.allow_ns {
            (ahead, false)
        } else {
            // span <= 10^18 + 2^32 and booked <= MAX_BOOKING_NS: no overflow.
            let most = self.span_ns() + booked.min(MAX_BOOKING_NS);
            (ahead.min(most), ahead > most)
        }
    }

    /// The backlog a stored state (`None`: a missing key) reads as at
    /// `now`, and whether the reading must be stored (a repair).
    #[inline]
    fn backlog(&self, state: Option<Ahead>, now: u64) -> (u64, bool) {
        match state {
            None => (0, false),
            Some(s) => self.read(s.full_at.saturating_sub(now), s.booked),
        }
    }

    /// Whether `state` reads as drained at `now` (further ahead than these
    /// parameters allow): then, and only then, a call that consumes nothing
    /// stores it so (a repair).
    #[inline]
    pub fn repairs(&self, state: Option<Ahead>, now: u64) -> bool {
        self.backlog(state, now).1
    }

    /// The state that leaves `backlog` ns at `now`, and the key's expiry:
    /// the time the limiter is full again, rounded up to a whole ms
    /// ([`expiry_ms`]); bookings keep how far beyond the span they reach.
    #[inline]
    fn write_at(&self, now: u64, backlog: u64) -> Write<Ahead> {
        let full_at = now.saturating_add(backlog);
        let booked = backlog.saturating_sub(self.span_ns());
        Write { state: Ahead { full_at, booked }, expire_at: Millis(expiry_ms(full_at)) }
    }

    /// The reply of an allowed call that leaves `after` ns of backlog.
    #[inline]
    fn allowed(&self, after: u64) -> Decision {
        Decision {
            allowed: true,
            limit: self.burst,
            remaining: self.remaining_at(after),
            retry_after_ms: 0,
            reset_after_ms: ceil_ms_ns(after),
            wait_ms: 0,
        }
    }

    /// Decide a request of `cost` units at `now` (ns), given the stored time
    /// at which the limiter is full again (`None` for a missing key).
    pub fn check(&self, state: Option<Ahead>, now: u64, cost: u64) -> Outcome<Ahead> {
        // The backlog: how far the schedule runs ahead of now. A stored time
        // in the past is an idle limiter. One further ahead than any valid
        // state can only come from a backward clock jump or tightened
        // parameters: it is read as drained, never as idle, and the drained
        // state is stored (a repair) so that the limiter is full again one
        // span from now. Without that write every later read would find the
        // same far-future time and the key would stay blocked until the
        // clock caught up.
        let (backlog, repair) = self.backlog(state, now);
        let denied = |retry_after_ms: i64| Outcome {
            decision: Decision {
                allowed: false,
                limit: self.burst,
                remaining: self.remaining_at(backlog),
                retry_after_ms,
                reset_after_ms: ceil_ms_ns(backlog),
                wait_ms: 0,
            },
            write: repair.then(|| self.write_at(now, backlog)),
        };

        if cost > self.burst {
            return denied(-1);
        }
        // cost <= burst: charge <= B * ceil(u); backlog <= span <= B * ceil(u);
        // both at most 10^18 + 2^32, so the sum fits.
        let after = backlog + self.charge_ns(cost);
        if after <= self.allow_ns || backlog == 0 {
            Outcome { decision: self.allowed(after), write: (cost > 0 || repair).then(|| self.write_at(now, after)) }
        } else {
            // wait <= span + MAX_BOOKING_NS: far below 2^63 ms, fits i64.
            denied(ceil_ms_ns(self.wait_ns(backlog, after)) as i64)
        }
    }

    /// The least wait after which a request that leaves `after` ns of
    /// backlog from `backlog` conforms: when the backlog has shrunk by
    /// `after - allow`, or when the limiter is idle.
    #[inline]
    fn wait_ns(&self, backlog: u64, after: u64) -> u64 {
        if after <= self.allow_ns || backlog == 0 {
            0
        } else {
            (after - self.allow_ns).min(backlog)
        }
    }

    /// The least wait (ns) after which a request of `cost` at `now`
    /// conforms, as [`check`](Self::check) reads the state: 0 if it does
    /// now, `None` if it never can (`cost` above the burst).
    pub fn conforms_in(&self, state: Option<Ahead>, now: u64, cost: u64) -> Option<u64> {
        if cost > self.burst {
            return None;
        }
        let (backlog, _) = self.backlog(state, now);
        Some(self.wait_ns(backlog, backlog + self.charge_ns(cost)))
    }

    /// Books a request of `cost` at `now` for `start` ns from now, which is
    /// at least [`conforms_in`](Self::conforms_in) (and at most
    /// [`MAX_BOOKING_NS`]): it is decided as if it arrived then, its units
    /// consumed from then on, so no later request can take them. The
    /// decision is allowed, its `wait_ms` the start rounded up to whole ms.
    /// A cost of 0 books nothing: it writes only a repair.
    pub fn book(&self, state: Option<Ahead>, now: u64, cost: u64, start: u64) -> Outcome<Ahead> {
        let (backlog, repair) = self.backlog(state, now);
        let start = start.min(MAX_BOOKING_NS);
        // Arriving at now + start: the schedule runs from then, or from
        // its backlog if that is further.
        let from = backlog.max(start);
        // cost <= burst (conforms_in): both terms below 10^18 + 2^32 + 10^15.
        let after = from + self.charge_ns(cost.min(self.burst));
        let mut decision = self.allowed(after);
        decision.wait_ms = ceil_ms_ns(start);
        let write =
            if cost > 0 { Some(self.write_at(now, after)) } else { repair.then(|| self.write_at(now, backlog)) };
        Outcome { decision, write }
    }
}

/// The longest booking: `MAXWAIT`'s largest value, 10^6 ms, in ns.
pub const MAX_BOOKING_NS: u64 = 1_000_000 * NS_PER_MS;
