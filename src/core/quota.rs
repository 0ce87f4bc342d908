//! Quota: a count per window that resets at the window's end.
//!
//! The caller passes the window holding `now` (from [`super::calendar`]), so
//! the decision itself is a few comparisons. The state is the count and the
//! window it was counted in, `[start_ms, end_ms)`; the key expires at
//! `end_ms`. Reading a stored state at `now`:
//! - its window ended at or before now: it is over, the count is 0;
//! - its window starts after now (the clock went back): it reads as drained
//!   until the current window's end, and that reading is stored (a repair);
//! - else the count stands, in one window ending at the later of the stored
//!   end and the current window's end: when the period or the zone changed,
//!   a count is never dropped before the window it was counted in ends, and
//!   the current window never admits more than `limit`. When that merged
//!   window is not the stored one, every call other than PEEK stores it (a
//!   repair: a denied or `COST 0` call writes it too), so the key expires at
//!   the merged end, never at the old one: else a count seen under a new
//!   period by a denial was dropped at the old end, and the new window
//!   admitted `limit` more.
//!
//! A count above a lowered limit reads as the limit.

use super::calendar::{Window, NS_PER_MS};
use super::decision::{Decision, Outcome, Write};
use super::time::Millis;

/// `RL.QUOTA key limit period`: at most `limit` per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    limit: u64,
}

/// The stored state of a quota key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaState {
    /// Cost admitted in the window.
    pub count: u64,
    /// The window, ms since the epoch: `[start_ms, end_ms)`.
    pub start_ms: u64,
    pub end_ms: u64,
}

/// What a refund leaves: the state to store, or the key to delete (nothing
/// left to count), or nothing to do (no key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    Store(Write<QuotaState>),
    Delete,
    Nothing,
}

/// A refund's reply (always allowed) and what it leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refund {
    pub decision: Decision,
    pub settle: Settle,
}

/// A state as seen at `now`.
struct Reading {
    count: u64,
    window: Window,
    /// The reading must be stored even if nothing is consumed.
    repair: bool,
}

impl Quota {
    /// `limit` in 1..=2^32-1.
    pub fn new(limit: u64) -> Self {
        debug_assert!(limit >= 1 && limit <= u32::MAX as u64);
        Self { limit }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn read(&self, state: Option<QuotaState>, current: Window, now_ns: u64) -> Reading {
        let now_ms = now_ns / NS_PER_MS;
        match state {
            // Over (end <= now, in whole ms: end is whole).
            None => Reading { count: 0, window: current, repair: false },
            Some(s) if s.end_ms <= now_ms => Reading { count: 0, window: current, repair: false },
            Some(s) if s.start_ms > now_ms => Reading { count: self.limit, window: current, repair: true },
            Some(s) => {
                // The same window, or a period / zone change: one window to
                // the later end. When that is the current window's end, the
                // state takes the current window, so later calls find it
                // unchanged.
                let stored = Window { start_ms: s.start_ms, end_ms: s.end_ms };
                let window = if s.end_ms > current.end_ms { stored } else { current };
                Reading { count: s.count.min(self.limit), window, repair: window != stored }
            }
        }
    }

    /// Whether a call that consumes nothing at `now_ns`, in the window
    /// `current`, stores `state` (a repair: a window starting after now, or
    /// a period or zone change).
    #[inline]
    pub fn repairs(&self, state: Option<QuotaState>, current: Window, now_ns: u64) -> bool {
        self.read(state, current, now_ns).repair
    }

    /// Whole ms from `now_ns` to the end of `w` (which lies after now): `w`'s
    /// bounds are whole ms, so this is exact rounded up.
    fn to_end(w: Window, now_ns: u64) -> u64 {
        w.end_ms.saturating_sub(now_ns / NS_PER_MS)
    }

    fn decision(&self, allowed: bool, count: u64, w: Window, now_ns: u64, retry: i64) -> Decision {
        Decision {
            allowed,
            limit: self.limit,
            remaining: self.limit - count,
            retry_after_ms: retry,
            reset_after_ms: if count > 0 { Self::to_end(w, now_ns) } else { 0 },
            wait_ms: 0,
        }
    }

    fn write(count: u64, window: Window) -> Write<QuotaState> {
        Write {
            state: QuotaState { count, start_ms: window.start_ms, end_ms: window.end_ms },
            expire_at: Millis(window.end_ms),
        }
    }

    /// Consumes `cost` (0: a status query) at `now_ns`, in the window
    /// `current` that holds now. `write` is the state to store: after an
    /// allowed cost above 0, or a repair.
    pub fn check(&self, state: Option<QuotaState>, current: Window, now_ns: u64, cost: u64) -> Outcome<QuotaState> {
        let Reading { count, window, repair } = self.read(state, current, now_ns);
        let repair_write = repair.then(|| Self::write(count, window));
        if cost > self.limit {
            return Outcome { decision: self.decision(false, count, window, now_ns, -1), write: repair_write };
        }
        if count + cost <= self.limit {
            let after = count + cost;
            let write = (cost > 0 || repair).then(|| Self::write(after, window));
            return Outcome { decision: self.decision(true, after, window, now_ns, 0), write };
        }
        // Denied: the count only falls when the window ends, and from then
        // any cost up to the limit fits. The wait is at least 1 ms.
        let retry = i64::try_from(Self::to_end(window, now_ns)).unwrap_or(i64::MAX);
        Outcome { decision: self.decision(false, count, window, now_ns, retry), write: repair_write }
    }

    /// Gives `n` units back to the count as read at `now_ns` (never below 0).
    /// A window that is over refunds nothing; a count of 0 after the refund
    /// deletes the key; a missing key writes nothing.
    pub fn refund(&self, state: Option<QuotaState>, current: Window, now_ns: u64, n: u64) -> Refund {
        let Some(_) = state else {
            return Refund { decision: self.decision(true, 0, current, now_ns, 0), settle: Settle::Nothing };
        };
        let Reading { count, window, .. } = self.read(state, current, now_ns);
        let after = count - n.min(count);
        let settle = if after == 0 { Settle::Delete } else { Settle::Store(Self::write(after, window)) };
        Refund { decision: self.decision(true, after, window, now_ns, 0), settle }
    }
}

/// A quota with the window holding now: a check in the shape every other
/// kind has (`check(state, now_ns, cost)`), for the module's one trait. Built
/// per call, from the window a [`super::calendar::CalendarCache`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaAt {
    pub quota: Quota,
    pub window: Window,
}

impl QuotaAt {
    pub fn limit(&self) -> u64 {
        self.quota.limit
    }

    #[inline]
    pub fn check(&self, state: Option<QuotaState>, now_ns: u64, cost: u64) -> Outcome<QuotaState> {
        self.quota.check(state, self.window, now_ns, cost)
    }

    pub fn refund(&self, state: Option<QuotaState>, now_ns: u64, n: u64) -> Refund {
        self.quota.refund(state, self.window, now_ns, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;
    /// 2027-01-15T08:00:00Z, ms.
    const T0: u64 = 1_800_000_000_000;
    const HOUR: u64 = 3_600_000;
    const W: Window = Window { start_ms: T0, end_ms: T0 + HOUR };
    const NEXT: Window = Window { start_ms: T0 + HOUR, end_ms: T0 + 2 * HOUR };

    /// (ms after T0, cost, allowed, remaining, retry_after_ms, reset_after_ms), in the hour from T0.
    type Row = (u64, u64, bool, u64, i64, u64);

    fn run(q: &Quota, rows: &[Row]) {
        let mut state = None;
        for (i, &(at, cost, allowed, remaining, retry, reset)) in rows.iter().enumerate() {
            let now_ms = T0 + at;
            let window = if now_ms < W.end_ms { W } else { NEXT };
            let o = q.check(state, window, now_ms * MS, cost);
            let d = o.decision;
            assert_eq!(
                (d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms),
                (allowed, remaining, retry, reset),
                "row {i}: {:?}",
                rows[i]
            );
            assert_eq!(o.write.is_some(), allowed && cost > 0, "row {i}: write");
            if let Some(w) = o.write {
                assert_eq!(w.expire_at.0, window.end_ms, "row {i}: expiry");
                state = Some(w.state);
            }
        }
    }

    #[test]
    fn counts_up_to_the_limit_and_resets_at_the_window_end() {
        run(
            &Quota::new(3),
            &[
                (0, 1, true, 2, 0, HOUR),
                (1000, 2, true, 0, 0, HOUR - 1000),
                (2000, 1, false, 0, (HOUR - 2000) as i64, HOUR - 2000),
                (2000, 0, true, 0, 0, HOUR - 2000),
                (HOUR - 1, 1, false, 0, 1, 1),
                (HOUR, 3, true, 0, 0, HOUR),
            ],
        );
    }

    #[test]
    fn cost_above_limit_never_fits_and_cost_0_reads() {
        run(
            &Quota::new(3),
            &[
                (0, 4, false, 3, -1, 0),
                (0, 0, true, 3, 0, 0),
                (5, 2, true, 1, 0, HOUR - 5),
                (6, 4, false, 1, -1, HOUR - 6),
            ],
        );
    }

    #[test]
    fn sub_millisecond_now_rounds_waits_up() {
        let q = Quota::new(1);
        let s = q.check(None, W, T0 * MS, 1).write.unwrap().state;
        let d = q.check(Some(s), W, (T0 + 10) * MS + 1, 1).decision;
        // 3,599,989.999999 ms to go: 3,599,990 whole ms.
        assert_eq!((d.retry_after_ms, d.reset_after_ms), (HOUR as i64 - 10, HOUR - 10));
        // At the end's exact ns the window is over.
        assert!(q.check(Some(s), NEXT, W.end_ms * MS, 1).decision.allowed);
        assert!(!q.check(Some(s), W, W.end_ms * MS - 1, 1).decision.allowed);
    }

    #[test]
    fn a_stored_window_after_now_reads_as_drained_and_is_repaired() {
        let q = Quota::new(5);
        let future = QuotaState { count: 1, start_ms: T0 + 86_400_000, end_ms: T0 + 2 * 86_400_000 };
        let o = q.check(Some(future), W, (T0 + 100) * MS, 0);
        assert_eq!((o.decision.allowed, o.decision.remaining, o.decision.reset_after_ms), (true, 0, HOUR - 100));
        let w = o.write.expect("a repair");
        assert_eq!((w.state, w.expire_at.0), (QuotaState { count: 5, start_ms: T0, end_ms: T0 + HOUR }, T0 + HOUR));
        let d = q.check(Some(future), W, (T0 + 100) * MS, 1);
        assert_eq!((d.decision.allowed, d.decision.retry_after_ms), (false, (HOUR - 100) as i64));
        assert_eq!(d.write, Some(w));
        // Repaired, it reads the same and writes nothing.
        assert_eq!(q.check(Some(w.state), W, (T0 + 100) * MS, 0).write, None);
    }

    #[test]
    fn a_count_above_a_lowered_limit_reads_as_the_limit() {
        let s = QuotaState { count: 10, start_ms: T0, end_ms: T0 + HOUR };
        let q = Quota::new(4);
        let o = q.check(Some(s), W, T0 * MS, 0);
        assert_eq!((o.decision.allowed, o.decision.remaining, o.write), (true, 0, None));
        assert!(!q.check(Some(s), W, T0 * MS, 1).decision.allowed);
        // A refund applies to that reading: 4 - 1.
        let r = q.refund(Some(s), W, T0 * MS, 1);
        assert_eq!(r.decision.remaining, 1);
        assert!(matches!(r.settle, Settle::Store(w) if w.state.count == 3));
    }

    #[test]
    fn a_period_change_keeps_the_count_to_the_later_end() {
        let q = Quota::new(5);
        // Five counted in a day window ending 20 h after T0; the period is now an hour.
        let day = QuotaState { count: 5, start_ms: T0 - 4 * HOUR, end_ms: T0 + 20 * HOUR };
        let o = q.check(Some(day), W, T0 * MS, 1);
        assert_eq!((o.decision.allowed, o.decision.retry_after_ms, o.write), (false, (20 * HOUR) as i64, None));
        // Two in that day: three more fit, stored in the day window.
        let two = QuotaState { count: 2, ..day };
        let o = q.check(Some(two), W, T0 * MS, 3);
        let w = o.write.unwrap();
        assert_eq!((w.state, w.expire_at.0), (QuotaState { count: 5, ..day }, day.end_ms));
        assert_eq!(o.decision.reset_after_ms, 20 * HOUR);
        // An hour window ending before a new day window: the count moves to
        // the day window, which later calls find unchanged.
        let hour = QuotaState { count: 2, start_ms: T0, end_ms: T0 + HOUR };
        let today = Window { start_ms: T0 - 8 * HOUR, end_ms: T0 + 16 * HOUR };
        // A status query stores the merged window (a repair), so the key
        // expires at its end, not at the hour's.
        let o = q.check(Some(hour), today, (T0 + 5) * MS, 0);
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (3, 16 * HOUR - 5));
        let w = o.write.expect("a repair");
        assert_eq!((w.state.count, w.state.start_ms, w.state.end_ms), (2, today.start_ms, today.end_ms));
        assert_eq!(w.expire_at.0, today.end_ms);
        // Repaired, it reads the same and writes nothing.
        let again = q.check(Some(w.state), today, (T0 + 6) * MS, 0);
        assert_eq!((again.decision.remaining, again.write), (3, None));
        let w = q.check(Some(hour), today, (T0 + 5) * MS, 1).write.unwrap();
        assert_eq!((w.state.count, w.state.start_ms, w.state.end_ms), (3, today.start_ms, today.end_ms));
    }

    #[test]
    fn refunds() {
        let q = Quota::new(5);
        let s = q.check(None, W, T0 * MS, 4).write.unwrap().state;
        // Missing key: nothing written, full.
        let r = q.refund(None, W, T0 * MS, 3);
        assert_eq!(
            (r.decision.allowed, r.decision.remaining, r.decision.reset_after_ms, r.settle),
            (true, 5, 0, Settle::Nothing)
        );
        let r = q.refund(Some(s), W, (T0 + 10) * MS, 3);
        assert_eq!((r.decision.remaining, r.decision.reset_after_ms), (4, HOUR - 10));
        assert_eq!(r.settle, Settle::Store(Quota::write(1, W)));
        // Never below 0: emptied, the key goes.
        let r = q.refund(Some(s), W, (T0 + 10) * MS, 100);
        assert_eq!((r.decision.remaining, r.decision.reset_after_ms, r.settle), (5, 0, Settle::Delete));
        // After the window rolled over, nothing is refunded into the next one.
        let r = q.refund(Some(s), NEXT, (T0 + HOUR) * MS, 1);
        assert_eq!((r.decision.remaining, r.settle), (5, Settle::Delete));
        // A drained reading after the clock went back is refunded from.
        let future = QuotaState { count: 1, start_ms: T0 + 2 * HOUR, end_ms: T0 + 3 * HOUR };
        let r = q.refund(Some(future), W, T0 * MS, 2);
        assert_eq!(r.settle, Settle::Store(Quota::write(3, W)));
    }

    #[test]
    fn quota_at_is_the_quota_in_its_window() {
        let q = Quota::new(3);
        let at = QuotaAt { quota: q, window: W };
        assert_eq!(at.limit(), 3);
        let s = q.check(None, W, T0 * MS, 2).write.map(|w| w.state);
        for cost in 0..5 {
            assert_eq!(at.check(s, (T0 + 7) * MS, cost), q.check(s, W, (T0 + 7) * MS, cost));
        }
        assert_eq!(at.refund(s, (T0 + 7) * MS, 1), q.refund(s, W, (T0 + 7) * MS, 1));
    }

    #[test]
    fn the_largest_limits_do_not_overflow() {
        let max = u32::MAX as u64;
        let q = Quota::new(max);
        let s = q.check(None, W, T0 * MS, max).write.unwrap().state;
        let huge = QuotaState { count: u64::MAX, ..s };
        let d = q.check(Some(huge), W, T0 * MS, max).decision;
        assert_eq!((d.allowed, d.remaining), (false, 0));
        assert_eq!(q.refund(Some(huge), W, T0 * MS, max).settle, Settle::Delete);
    }

    #[test]
    fn repairs_says_exactly_whether_a_status_query_writes() {
        let q = Quota::new(3);
        let day = Window { start_ms: T0 - 8 * HOUR, end_ms: T0 + 16 * HOUR };
        let (mut yes, mut no) = (0, 0);
        for stored in [W, NEXT, day, Window { start_ms: T0 - HOUR, end_ms: T0 }] {
            for count in [0, 1, 3, 5] {
                for (current, at) in [(W, 10), (W, HOUR - 1), (NEXT, HOUR + 5), (day, 10)] {
                    let state = Some(QuotaState { count, start_ms: stored.start_ms, end_ms: stored.end_ms });
                    let now_ns = (T0 + at) * MS;
                    let wrote = q.check(state, current, now_ns, 0).write.is_some();
                    assert_eq!(q.repairs(state, current, now_ns), wrote, "{stored:?} {count} {current:?} {at}");
                    if wrote {
                        yes += 1
                    } else {
                        no += 1
                    }
                }
            }
        }
        assert!(!q.repairs(None, W, T0 * MS));
        assert!(yes > 0 && no > 0, "{yes} {no}");
    }
}
