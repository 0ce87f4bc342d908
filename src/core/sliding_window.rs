//! Sliding window counter.
//!
//! Time is cut into fixed windows of `window_ms`, aligned to multiples of
//! `window_ms` since the Unix epoch, so that every key and every node agree
//! on them. The state is the start of the current window and two counts: the
//! current window's and the previous window's. The number of requests in the
//! trailing `window_ms` is estimated as
//!
//! ```text
//! estimate = prev * (W - elapsed) / W + cur
//! ```
//!
//! where `elapsed` is how far `now` is into the current window. A request of
//! cost `n` is allowed when `estimate + n <= limit`. All comparisons are done
//! on `estimate * W` in `u128`, so they are exact: no float, no rounding.
//!
//! With no traffic the estimate only falls, and it is continuous across window
//! boundaries (at the boundary `cur` becomes `prev` with full weight), so
//! retry-after and reset-after are exact solutions of one linear inequality.

use super::decision::{Decision, Outcome, Write};
use super::time::{ceil_ms, Millis, US_PER_MS};

/// `RL.SLIDE key limit window_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindow {
    limit: u64,
    window_ms: u64,
}

/// The stored state of a sliding-window key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingWindowState {
    /// Start of the window `cur` counts, ms since the epoch.
    pub window_start_ms: u64,
    /// The window size the counts were taken with, so that a changed
    /// `window_ms` maps them onto the new windows instead of guessing.
    pub window_ms: u64,
    /// Cost admitted in that window.
    pub cur: u32,
    /// Cost admitted in the window before it.
    pub prev: u32,
}

impl SlidingWindow {
    /// Arguments must be in range: `limit` in 1..=2^32-1, `window_ms` in
    /// 1..=10^12. Every such combination is representable.
    pub fn new(limit: u64, window_ms: u64) -> Self {
        debug_assert!(limit >= 1 && limit <= u32::MAX as u64);
        debug_assert!(window_ms >= 1);
        Self { limit, window_ms }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn check(&self, state: Option<SlidingWindowState>, now_us: u64, cost: u64) -> Outcome<SlidingWindowState> {
        let w = self.window_ms * US_PER_MS; // <= 10^15
        let elapsed = now_us % w;
        let start = now_us - elapsed;
        let start_ms = start / US_PER_MS;
        let limit = self.limit;

        let (cur, prev, repair) = self.counts(state, now_us, start_ms);
        let (w, limit128, elapsed) = (w as u128, limit as u128, elapsed as u128);
        // estimate * W, exactly.
        let scaled = |cur: u64| prev as u128 * (w - elapsed) + cur as u128 * w;
        let remaining = |cur: u64| (limit128 * w).saturating_sub(scaled(cur)) / w;
        // Time until the estimate reaches 0: the end of the previous window's
        // weight, or the end of the next window if the current one counts.
        let reset_us = |cur: u64| -> u64 {
            let to_end = (w - elapsed) as u64;
            if cur > 0 {
                to_end + w as u64
            } else if prev > 0 {
                to_end
            } else {
                0
            }
        };

        if cost > limit {
            return Outcome {
                decision: Decision {
                    allowed: false,
                    limit,
                    remaining: remaining(cur) as u64,
                    retry_after_ms: -1,
                    reset_after_ms: ceil_ms(reset_us(cur)),
                    wait_ms: 0,
                },
                write: repair.then(|| self.write(start_ms, cur, prev)),
            };
        }

        // COST 0 is a status query: allowed, with the state as it is.
        if cost == 0 || scaled(cur + cost) <= limit128 * w {
            let after = cur + cost; // <= limit <= u32::MAX
            let write = (cost > 0 || repair).then(|| self.write(start_ms, after, prev));
            return Outcome {
                decision: Decision {
                    allowed: true,
                    limit,
                    remaining: remaining(after) as u64,
                    retry_after_ms: 0,
                    reset_after_ms: ceil_ms(reset_us(after)),
                    wait_ms: 0,
                },
                write,
            };
        }

        // Denied: solve for the earliest time the request fits.
        let cost128 = cost as u128;
        let cur128 = cur as u128;
        let wait_us: u128 = if cur128 + cost128 <= limit128 {
            // Fits within this window once prev's weight has fallen enough:
            // prev * (W - e) <= (limit - cur - cost) * W. Denied means prev > 0.
            let slack = limit128 - cur128 - cost128;
            let e_needed = w - (slack * w) / prev as u128;
            e_needed - elapsed
        } else {
            // Not before the next window, where cur becomes prev:
            // cur * (W - e) <= (limit - cost) * W, with cur > limit - cost > 0... or cur > 0.
            let slack = limit128 - cost128;
            let e_needed = w - (slack * w) / cur128;
            (w - elapsed) + e_needed
        };
        Outcome {
            decision: Decision {
                allowed: false,
                limit,
                remaining: remaining(cur) as u64,
                // wait_us <= 2 W <= 2 * 10^15: fits.
                retry_after_ms: ceil_ms(wait_us as u64) as i64,
                reset_after_ms: ceil_ms(reset_us(cur)),
                wait_ms: 0,
            },
            write: repair.then(|| self.write(start_ms, cur, prev)),
        }
    }

    /// Give `units` back at `now_us`: from the current window's count first,
    /// then the previous window's, never below 0, taken from the counts as
    /// read (capped at `limit`, mapped onto these windows, or drained after
    /// a backward clock jump). The decision is the state after the refund,
    /// allowed; the write is `None` when no count is left (the key goes).
    pub fn refund(&self, state: SlidingWindowState, now_us: u64, units: u64) -> Outcome<SlidingWindowState> {
        let w = self.window_ms * US_PER_MS;
        let start_ms = (now_us - now_us % w) / US_PER_MS;
        let (cur, prev, _) = self.counts(Some(state), now_us, start_ms);
        let from_cur = cur.min(units);
        let (cur, prev) = (cur - from_cur, prev - prev.min(units - from_cur));
        let write = (cur > 0 || prev > 0).then(|| self.write(start_ms, cur, prev));
        // The state as stored reads back as these counts: answer what a
        // status query of it answers, allowed.
        let decision = self.check(write.map(|w| w.state), now_us, 0).decision;
        Outcome { decision, write }
    }

    /// The counts as seen from the window starting at `start_ms` (the one
    /// `now_us` is in): `(cur, prev, repair)`, each at most `limit`, and
    /// whether storing them is a repair.
    #[inline(always)]
    fn counts(&self, state: Option<SlidingWindowState>, now_us: u64, start_ms: u64) -> (u64, u64, bool) {
        let limit = self.limit;
        match state {
            None => (0, 0, false),
            // The stored window starts after now: the clock went back. Read
            // as drained, never idle, and store that (a repair), or every
            // later read would find the same future window until the clock
            // caught up with it.
            Some(s) if s.window_start_ms.saturating_mul(US_PER_MS) > now_us => (limit, 0, true),
            // Counts taken with another window size are mapped onto these
            // windows, and stored that way (a repair): otherwise the key
            // would keep the old windows and the old expiry, and every reply
            // would describe windows the state does not follow.
            // Each count reads as at most `limit` (a tightened limit reads
            // as drained, never as more than drained), and the capped counts
            // are stored (a repair), as are counts mapped onto new windows.
            Some(s) => {
                let (cur, prev) = self.regrid(&s, start_ms);
                let regridded = s.window_ms != self.window_ms && (cur > 0 || prev > 0);
                let capped = cur > limit || prev > limit;
                (cur.min(limit), prev.min(limit), regridded || capped)
            }
        }
    }

    /// The stored counts mapped onto the windows of this limiter: (cur, prev)
    /// for the window starting at `start_ms` and the one before it.
    ///
    /// `cur` was admitted during `[s, s + W_old)` and `prev` during
    /// `[s - W_old, s)`. Each count goes to the newest current-grid window
    /// its interval reaches (so a changed window size can only make the
    /// estimate larger, never admit more than the limit), or is dropped if it
    /// lies wholly before the previous window. With an unchanged window size
    /// this is the plain rule: same window as is, the one before shifts to
    /// `prev`, anything older is gone.
    fn regrid(&self, s: &SlidingWindowState, start_ms: u64) -> (u64, u64) {
        let prev_start = start_ms.saturating_sub(self.window_ms);
        let place = |ends_ms: u64, count: u32| -> (u64, u64) {
            if ends_ms > start_ms {
                (u64::from(count), 0)
            } else if ends_ms > prev_start {
                (0, u64::from(count))
            } else {
                (0, 0)
            }
        };
        let (c1, p1) = place(s.window_start_ms.saturating_add(s.window_ms), s.cur);
        let (c2, p2) = place(s.window_start_ms, s.prev);
        // Merged in u64 (two u32 counts cannot overflow it); the caller caps
        // each at `limit` (<= 2^32-1), so what is stored fits u32 and a merge
        // never lowers an estimate below the capped reading.
        (c1 + c2, p1 + p2)
    }

    /// Whether a call that consumes nothing at `now_us` may store `state`
    /// (false only if it surely does not): a window starting after now, counts
    /// taken with another window size or off its grid (which may merge), or a
    /// count above the limit.
    #[inline]
    pub fn repairs(&self, state: Option<SlidingWindowState>, now_us: u64) -> bool {
        state.is_some_and(|s| {
            s.window_start_ms.saturating_mul(US_PER_MS) > now_us
                || s.window_ms != self.window_ms
                || s.window_start_ms % self.window_ms != 0
                || u64::from(s.cur.max(s.prev)) > self.limit
        })
    }

    /// Whether a call at `now_us` finds a key whose counts, taken with
    /// another window size, all map away (they lie wholly before the
    /// previous window): the key then holds nothing, yet would keep the old
    /// windows' expiry, so a call other than PEEK deletes it (a repair).
    /// A state starting after now (the clock went back) reads as drained
    /// first and is never forgotten.
    pub fn forgets(&self, state: &SlidingWindowState, now_us: u64) -> bool {
        let w = self.window_ms * US_PER_MS;
        let start_ms = (now_us - now_us % w) / US_PER_MS;
        state.window_ms != self.window_ms
            && state.window_start_ms.saturating_mul(US_PER_MS) <= now_us
            && self.regrid(state, start_ms) == (0, 0)
    }

    /// The state to store, expiring when the estimate reaches 0: the end of
    /// the next window if the current one counts, else the end of this one
    /// (a repair can leave only `prev`).
    fn write(&self, start_ms: u64, cur: u64, prev: u64) -> Write<SlidingWindowState> {
        let windows = if cur > 0 { 2 } else { 1 };
        Write {
            state: SlidingWindowState {
                window_start_ms: start_ms,
                window_ms: self.window_ms,
                // Both are capped at limit <= 2^32-1 before they get here.
                cur: u32::try_from(cur).unwrap_or(u32::MAX),
                prev: u32::try_from(prev).unwrap_or(u32::MAX),
            },
            expire_at: Millis(start_ms + windows * self.window_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::table::{Row, MS, T0};

    fn run(s: &SlidingWindow, rows: &[Row]) {
        crate::core::table::run(|st, now, cost| s.check(st, now, cost), s.limit(), rows);
    }

    #[test]
    fn five_per_second_filled_late_in_a_window() {
        let s = SlidingWindow::new(5, 1000);
        run(
            &s,
            &[
                (900, 5, true, 0, 0, 1100),
                // The next window starts with the previous five at full weight.
                (1000, 1, false, 0, 200, 1000),
                // 10% into it, 4.5 still count: 5.5 > 5.
                (1100, 1, false, 0, 100, 900),
                // Half way, 2.5 count: one more fits, floor(5 - 3.5) = 1 left.
                (1500, 1, true, 1, 0, 1500),
            ],
        );
    }

    #[test]
    fn previous_window_weight_falls_linearly() {
        let s = SlidingWindow::new(10, 1000);
        run(
            &s,
            &[
                (0, 10, true, 0, 0, 2000),
                (1000, 0, true, 0, 0, 1000),
                (1250, 0, true, 2, 0, 750),
                (1999, 0, true, 9, 0, 1),
                (2000, 0, true, 10, 0, 0),
            ],
        );
    }

    #[test]
    fn a_full_current_window_waits_into_the_next() {
        let s = SlidingWindow::new(4, 1000);
        // Four now; the next request needs cur (4) * (W - e) + 1 * W <= 4 W:
        // e >= 250 ms into the next window.
        run(&s, &[(100, 4, true, 0, 0, 1900), (100, 1, false, 0, 1150, 1900), (1250, 1, true, 0, 0, 1750)]);
    }

    #[test]
    fn cost_equal_to_limit_waits_for_an_empty_window() {
        let s = SlidingWindow::new(4, 1000);
        run(&s, &[(100, 1, true, 3, 0, 1900), (200, 4, false, 3, 1800, 1800), (2000, 4, true, 0, 0, 2000)]);
    }

    #[test]
    fn cost_above_limit_is_never_allowed() {
        let s = SlidingWindow::new(4, 1000);
        run(&s, &[(0, 5, false, 4, -1, 0)]);
    }

    #[test]
    fn stale_state_is_empty() {
        let s = SlidingWindow::new(5, 1000);
        let now = T0 + 10_000 * MS;
        let old = SlidingWindowState { window_start_ms: T0 / MS, window_ms: 1000, cur: 5, prev: 5 };
        let o = s.check(Some(old), now, 0);
        assert_eq!(o.decision.remaining, 5);
        assert_eq!(o.write, None);
    }

    #[test]
    fn future_state_reads_as_drained_and_is_repaired() {
        let s = SlidingWindow::new(5, 1000);
        let now = T0 + 10_000 * MS;
        let future = SlidingWindowState { window_start_ms: now / MS + 86_400_000, window_ms: 1000, cur: 1, prev: 0 };
        let o = s.check(Some(future), now, 1);
        let d = o.decision;
        assert_eq!((d.allowed, d.remaining, d.reset_after_ms), (false, 0, 2000));
        // The drained reading is stored, so the key is full two windows on,
        // not a day on; COST 0 repairs too, a normal state never.
        let w = o.write.expect("a repair write");
        assert_eq!(w.state, SlidingWindowState { window_start_ms: now / MS, window_ms: 1000, cur: 5, prev: 0 });
        assert!(s.check(Some(w.state), now + 2000 * MS, 5).decision.allowed);
        assert!(s.check(Some(future), now, 0).write.is_some());
        assert_eq!(s.check(Some(w.state), now, 1).write, None);
    }

    #[test]
    fn a_changed_window_size_never_reads_as_idle() {
        // Written with 3 s windows at T0 + 3 s, read with 2 s windows at T0 + 3.5 s:
        // the stored window matches neither the current nor the previous one.
        let s3 = SlidingWindow::new(5, 3000);
        let w = s3.check(None, T0 + 3000 * MS, 5).write.unwrap();
        let s2 = SlidingWindow::new(5, 2000);
        let d = s2.check(Some(w.state), T0 + 3500 * MS, 1).decision;
        assert!(!d.allowed);
        assert_eq!(d.remaining, 0);
    }

    #[test]
    fn a_smaller_window_that_divides_the_old_one_still_counts_recent_traffic() {
        // 5 admitted at T0 + 5.9 s in 3 s windows (window [3 s, 6 s)); read at
        // T0 + 6.5 s with 2 s windows: the old window is aligned to the new
        // grid's previous window [4 s, 6 s) and reaches into it, so it counts.
        let s3 = SlidingWindow::new(5, 3000);
        let w = s3.check(None, T0 + 5900 * MS, 5).write.unwrap();
        let s2 = SlidingWindow::new(5, 2000);
        let d = s2.check(Some(w.state), T0 + 6500 * MS, 5).decision;
        assert!(!d.allowed, "{d:?}");
        // 60 s windows shrunk to 1 s: traffic of the last minute counts now.
        let s60 = SlidingWindow::new(5, 60_000);
        let w = s60.check(None, T0 + 1000 * MS, 5).write.unwrap();
        let d = SlidingWindow::new(5, 1000).check(Some(w.state), T0 + 50_000 * MS, 1).decision;
        assert!(!d.allowed, "{d:?}");
    }

    /// After a window change, the replies must describe the stored state:
    /// retry and reset exact against what is stored, never more than the
    /// limit admitted within one new window.
    #[test]
    fn a_changed_window_is_stored_so_retry_and_reset_stay_exact() {
        for (old_w, new_w) in [(20_000, 100), (1000, 20_000), (3000, 2000), (1_000_000_000_000, 1)] {
            let old = SlidingWindow::new(5, old_w);
            let new = SlidingWindow::new(5, new_w);
            let t = T0 + 700 * MS;
            let stored = old.check(None, t, 5).write.unwrap().state;
            let later = t + 13 * MS;
            let o = new.check(Some(stored), later, 1);
            let d = o.decision;
            assert!(!d.allowed, "{old_w} -> {new_w}: {d:?}");
            let w = o.write.unwrap_or_else(|| panic!("{old_w} -> {new_w}: no repair"));
            assert_eq!(w.state.window_ms, new_w);
            assert_eq!(w.expire_at.0, later.div_ceil(MS) + d.reset_after_ms, "{old_w} -> {new_w}: expiry != reset");
            // Exact retry and reset, against the stored state.
            let r = d.retry_after_ms as u64;
            assert!(!new.check(Some(w.state), later + (r - 1) * MS, 1).decision.allowed, "{old_w} -> {new_w}");
            assert!(new.check(Some(w.state), later + r * MS, 1).decision.allowed, "{old_w} -> {new_w}");
            let full = new.check(Some(w.state), later + d.reset_after_ms * MS, 0).decision;
            assert_eq!(full.remaining, 5, "{old_w} -> {new_w}");
            // Once repaired, reading writes nothing more.
            assert_eq!(new.check(Some(w.state), later, 0).write, None);
        }
        // A stale state of another window size that no longer counts stores
        // nothing: the key is forgotten (deleted) instead.
        let stored = SlidingWindow::new(5, 1000).check(None, T0, 5).write.unwrap().state;
        let s2 = SlidingWindow::new(5, 2000);
        assert_eq!(s2.check(Some(stored), T0 + 10_000 * MS, 0).write, None);
        assert!(s2.forgets(&stored, T0 + 10_000 * MS));
    }

    #[test]
    fn a_window_change_that_maps_every_count_away_forgets_the_key() {
        // 5 in the 10 s window [T0, T0 + 10 s), which expires at T0 + 20 s.
        let s10 = SlidingWindow::new(5, 10_000);
        let stored = s10.check(None, T0 + 1000 * MS, 5).write.unwrap().state;
        let s1 = SlidingWindow::new(5, 1000);
        // At T0 + 15 s with 1 s windows, the count lies wholly before the
        // previous window [14 s, 15 s): it maps away.
        let now = T0 + 15_000 * MS;
        assert!(s1.forgets(&stored, now));
        let o = s1.check(Some(stored), now, 0);
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms, o.write), (5, 0, None));
        // Not while a count still maps, not with the same window size, not
        // for a stored window in the future (drained first).
        assert!(!s1.forgets(&stored, T0 + 10_500 * MS));
        assert!(!s10.forgets(&stored, now));
        let future = SlidingWindowState { window_start_ms: now / MS + 60_000, ..stored };
        assert!(!s1.forgets(&future, now));
    }

    #[test]
    fn a_count_above_a_tightened_limit_reads_as_the_limit() {
        let s10 = SlidingWindow::new(10, 3_600_000);
        let stored = s10.check(None, T0, 10).write.unwrap().state;
        let s5 = SlidingWindow::new(5, 3_600_000);
        // COST 0: allowed, drained at 5, full when a key drained at 5 is.
        let drained_at_5 = s5.check(None, T0 + 1000 * MS, 5).decision;
        let o = s5.check(Some(stored), T0 + 1000 * MS, 0);
        let d = o.decision;
        assert_eq!((d.allowed, d.limit, d.remaining, d.retry_after_ms), (true, 5, 0, 0));
        assert_eq!(d.reset_after_ms, drained_at_5.reset_after_ms);
        // The capped count is stored (a repair), once.
        let w = o.write.expect("a repair");
        assert_eq!((w.state.cur, w.state.prev), (5, 0));
        assert_eq!(s5.check(Some(w.state), T0 + 1000 * MS, 0).write, None);
        // A unit request waits as long as it would on a key drained at 5.
        let denied = s5.check(Some(stored), T0 + 1000 * MS, 1).decision;
        let drained = s5.check(Some(w.state), T0 + 1000 * MS, 1).decision;
        assert_eq!(denied, drained);
        // The previous window's count is capped too.
        let old = SlidingWindowState { window_start_ms: T0 / MS - 3_600_000, window_ms: 3_600_000, cur: 0, prev: 0 };
        let prev_heavy = SlidingWindowState { cur: 10, ..old };
        let d = s5.check(Some(prev_heavy), T0, 0).decision;
        assert_eq!((d.allowed, d.remaining), (true, 0));
    }

    #[test]
    fn cost_0_is_always_allowed() {
        let s = SlidingWindow::new(5, 1000);
        let full = SlidingWindowState { window_start_ms: T0 / MS, window_ms: 1000, cur: 5, prev: 5 };
        let o = s.check(Some(full), T0 + 100 * MS, 0);
        assert!(o.decision.allowed, "{o:?}");
        assert_eq!((o.decision.remaining, o.decision.retry_after_ms, o.write), (0, 0, None));
    }

    #[test]
    fn merged_counts_above_2_to_the_32_never_lower_the_estimate() {
        // Two windows of 3 s, each holding 3e9 of a 4e9 limit, read with
        // 6 s windows: both merge into one window holding 6e9 > 2^32-1.
        // The merge reads as the limit (drained), never as 2^32-1 - 4e9 less.
        let limit = 4_000_000_000u64;
        let s3 = SlidingWindow::new(limit, 3000);
        let start = (T0 / MS / 6000) * 6000; // a 6 s (and 3 s) boundary
        let st = SlidingWindowState {
            window_start_ms: start + 3000,
            window_ms: 3000,
            cur: 3_000_000_000,
            prev: 3_000_000_000,
        };
        assert!(!s3.check(Some(st), (start + 3500) * MS, 1_000_000_001).decision.allowed);
        for limit6 in [limit, u32::MAX as u64, 3_000_000_000] {
            let s6 = SlidingWindow::new(limit6, 6000);
            let o = s6.check(Some(st), (start + 5000) * MS, 0);
            assert_eq!(o.decision.remaining, 0, "limit {limit6}: {o:?}");
            let w = o.write.expect("a repair");
            assert_eq!((u64::from(w.state.cur), u64::from(w.state.prev)), (limit6, 0));
            // Nothing more is admitted in this window.
            assert!(!s6.check(Some(w.state), (start + 5000) * MS, 1).decision.allowed);
        }
    }

    #[test]
    fn a_grown_window_keeps_counting_what_the_old_windows_held() {
        let s1 = SlidingWindow::new(5, 1000);
        let w = s1.check(None, T0 + 500 * MS, 4).write.unwrap();
        // Read with 2 s windows half a second later: the 4 are in the current window.
        let d = SlidingWindow::new(5, 2000).check(Some(w.state), T0 + 1000 * MS, 2).decision;
        assert!(!d.allowed);
        assert_eq!(d.remaining, 1);
    }

    #[test]
    fn expiry_is_the_end_of_the_next_window() {
        let s = SlidingWindow::new(5, 1000);
        let w = s.check(None, T0 + 300 * MS, 1).write.unwrap();
        assert_eq!(w.expire_at.0, T0 / MS + 2000);
    }

    #[test]
    fn huge_windows_and_limits_do_not_overflow() {
        let s = SlidingWindow::new(u32::MAX as u64, 1_000_000_000_000);
        let o = s.check(None, T0, u32::MAX as u64);
        assert!(o.decision.allowed);
        let d = s.check(o.write.map(|w| w.state), T0, 1).decision;
        assert!(!d.allowed);
        assert!(d.retry_after_ms > 0);
    }

    #[test]
    fn repairs_says_false_only_where_a_status_query_writes_nothing() {
        // Stored windows before, at and after now's, of this window size and
        // others, with counts under and over the limit.
        let s = SlidingWindow::new(5, 1000);
        let (t0_ms, now_us) = (T0 / MS, T0 + 2_500 * MS);
        let (mut repairs, mut writes) = (0, 0);
        for window_ms in [1000, 500, 3000] {
            for start in [0, 1000, 2000, 2500, 3000, 10_000] {
                for (cur, prev) in [(0, 0), (1, 0), (0, 4), (5, 5), (6, 0), (0, 9), (9, 9)] {
                    let st = SlidingWindowState { window_start_ms: t0_ms + start, window_ms, cur, prev };
                    let writes_now = s.check(Some(st), now_us, 0).write.is_some() || s.forgets(&st, now_us);
                    let said = s.repairs(Some(st), now_us);
                    assert!(said || !writes_now, "{st:?}");
                    repairs += usize::from(said);
                    writes += usize::from(writes_now);
                }
            }
        }
        assert!(!s.repairs(None, now_us));
        // Both answers occur, and steady states (same size, under the limit,
        // not ahead) are told apart from those that write.
        assert!(writes > 0 && repairs < 126, "{repairs} {writes}");
        let steady = SlidingWindowState { window_start_ms: t0_ms + 2000, window_ms: 1000, cur: 3, prev: 5 };
        assert!(!s.repairs(Some(steady), now_us));
    }
}
