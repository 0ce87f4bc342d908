//! `RL.QUOTA`'s limiter: a quota and the calendar its windows follow.
//!
//! The windows come from one [`CalendarCache`] per thread (commands run on
//! the main thread, so in practice one for the module). Parsing a call
//! resolves its (period, zone name) pair there once: an unknown zone is an
//! error before any key is read, and the call remembers where the pair is.
//! Deciding then asks that entry for the window holding now: a stamp and the
//! remembered window's two bounds are compared, and the zone is neither
//! looked up nor converted again, nor anything allocated, while now stays
//! inside the window. A pair replaced meanwhile (more than [`CACHED`] pairs in
//! one `RL.ALL`) is found again by its name.

use std::cell::RefCell;

use crate::core::calendar::MAX_ZONE_NAME;
use crate::core::time::{Millis, Nanos, MAX_PERIOD_MS};
use crate::core::{
    Algorithm, CacheSlot, CalendarCache, Decision, Outcome, ParamError, Period, Quota, QuotaAt, QuotaState, Settle,
    Unit, Window, Write,
};

use super::args::{int_in, printable, ArgError};

/// How many (period, zone) pairs the module keeps computed windows for.
pub const CACHED: usize = 16;

thread_local! {
    static CALENDARS: RefCell<CalendarCache<CACHED>> = RefCell::new(CalendarCache::new());
}

/// `limit period [TZ zone]`, resolved: the kind behind `RL.QUOTA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaLimit {
    quota: Quota,
    period: Period,
    /// The zone name as given (`len` 0: no `TZ`, UTC).
    zone: [u8; MAX_ZONE_NAME],
    len: u8,
    slot: CacheSlot,
}

/// A bad `period`.
const BAD_PERIOD: ParamError =
    ParamError { arg: "period", reason: "must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms" };

impl QuotaLimit {
    /// `limit` (1 to 2^32-1, already checked), `period` as the client sent
    /// it and `TZ`'s value, if any.
    pub fn new(limit: u64, period: &[u8], tz: Option<&[u8]>) -> Result<Self, ArgError> {
        let period = match Unit::from_keyword(period) {
            Some(unit) => Period::Calendar(unit),
            None => Period::Fixed(int_in(period, "period", 1, MAX_PERIOD_MS).map_err(|_| BAD_PERIOD)?),
        };
        if tz.is_some() && matches!(period, Period::Fixed(_)) {
            return Err(ArgError::ZoneNeedsCalendar);
        }
        let mut zone = [0u8; MAX_ZONE_NAME];
        let len = match tz {
            Some(name) if name.len() <= MAX_ZONE_NAME && !name.is_empty() => {
                zone[..name.len()].copy_from_slice(name);
                name.len()
            }
            Some(name) => return Err(ArgError::UnknownZone(printable(name))),
            None => 0,
        };
        let slot = CALENDARS.with(|c| c.borrow_mut().resolve(period, tz)).map_err(|e| match e.arg {
            "TZ" => ArgError::UnknownZone(tz.and_then(printable)),
            _ => ArgError::Param(e),
        })?;
        // len <= MAX_ZONE_NAME = 64.
        Ok(Self { quota: Quota::new(limit), period, zone, len: len as u8, slot })
    }

    fn tz(&self) -> Option<&[u8]> {
        (self.len > 0).then(|| &self.zone[..usize::from(self.len)])
    }
}

impl Algorithm for QuotaLimit {
    type State<'s> = QuotaState;
    type Write = QuotaState;

    fn limit(&self) -> u64 {
        self.quota.limit()
    }

    #[inline]
    fn check(&self, state: Option<QuotaState>, now: Nanos, cost: u64) -> Outcome<QuotaState> {
        let now_ns = now.0;
        match self.window(now_ns) {
            Some(window) => QuotaAt { quota: self.quota, window }.check(state, now_ns, cost),
            // Cannot happen: the zone was found when the call was parsed, and
            // jiff's calendar (to the year 9999) outlasts u64 ns (2554). Were
            // it to, the call is denied and nothing is written.
            None => Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.quota.limit(),
                    remaining: 0,
                    retry_after_ms: -1,
                    reset_after_ms: 0,
                    wait_ms: 0,
                },
                write: None,
            },
        }
    }

    /// A period or zone change, or a window starting after now (as
    /// [`check`](Self::check) reads it; without a window it writes nothing).
    #[inline]
    fn repairs(&self, state: Option<QuotaState>, now: Nanos) -> bool {
        state.is_some() && self.window(now.0).is_some_and(|w| self.quota.repairs(state, w, now.0))
    }

    /// The units come off the current window's count, never below 0; after
    /// the stored window has ended there is nothing left to refund (the key,
    /// whose window is over, is deleted). A count of 0 afterwards deletes
    /// the key.
    fn refund(&self, state: QuotaState, now: Nanos, units: u64) -> Outcome<QuotaState> {
        let now_ns = now.0;
        let Some(window) = self.window(now_ns) else {
            // As in `check`: cannot happen; the state is kept as it is.
            let decision = Decision {
                allowed: true,
                limit: self.quota.limit(),
                remaining: 0,
                retry_after_ms: 0,
                reset_after_ms: 0,
                wait_ms: 0,
            };
            return Outcome { decision, write: Some(Write { state, expire_at: Millis(state.end_ms) }) };
        };
        let r = QuotaAt { quota: self.quota, window }.refund(Some(state), now_ns, units);
        let write = match r.settle {
            Settle::Store(w) => Some(w),
            Settle::Delete => None,
            // Only for a missing key, which is never refunded here.
            Settle::Nothing => Some(Write { state, expire_at: Millis(state.end_ms) }),
        };
        Outcome { decision: r.decision, write }
    }
}

impl QuotaLimit {
    /// The window holding `now_ns`, from the per-thread cache.
    #[inline]
    fn window(&self, now_ns: u64) -> Option<Window> {
        CALENDARS.with(|c| c.borrow_mut().window_in(self.slot, self.period, self.tz(), now_ns)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2027-01-15T08:00:00Z.
    const T0_NS: u64 = 1_800_000_000_000 * 1_000_000;

    #[test]
    fn periods_are_units_in_any_case_or_ms() {
        assert_eq!(QuotaLimit::new(5, b"month", None).map(|q| q.period), Ok(Period::Calendar(Unit::Month)));
        assert_eq!(QuotaLimit::new(5, b"60000", None).map(|q| q.period), Ok(Period::Fixed(60_000)));
        for bad in [&b"0"[..], b"1000000000001", b"DAYS", b"", b"-5", b"007"] {
            assert_eq!(QuotaLimit::new(5, bad, None), Err(ArgError::Param(BAD_PERIOD)), "{bad:?}");
        }
    }

    #[test]
    fn zones_are_resolved_at_parse() {
        assert_eq!(QuotaLimit::new(5, b"1000", Some(b"UTC")), Err(ArgError::ZoneNeedsCalendar));
        assert_eq!(
            QuotaLimit::new(5, b"DAY", Some(b"Mars/Base")),
            Err(ArgError::UnknownZone(Some("Mars/Base".into())))
        );
        assert_eq!(QuotaLimit::new(5, b"DAY", Some(b"a\r\nb")), Err(ArgError::UnknownZone(None)));
        assert_eq!(QuotaLimit::new(5, b"DAY", Some(&[b'x'; 65])), Err(ArgError::UnknownZone(None)));
        assert_eq!(QuotaLimit::new(5, b"DAY", Some(b"")), Err(ArgError::UnknownZone(None)));
        let q = QuotaLimit::new(5, b"DAY", Some(b"Europe/Berlin")).unwrap();
        // 2027-01-15 in Berlin: 2027-01-14T23:00Z to 2027-01-15T23:00Z.
        let o = q.check(None, Nanos(T0_NS), 2);
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (3, 15 * 3_600_000));
        assert_eq!(o.write.map(|w| w.expire_at.0), Some(1_800_000_000_000 + 15 * 3_600_000));
    }

    #[test]
    fn more_pairs_than_the_cache_holds_still_get_their_windows() {
        let zones = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"];
        let limits: Vec<QuotaLimit> = (0..CACHED + 4)
            .map(|i| QuotaLimit::new(5, format!("{}", 1000 * (i + 1)).as_bytes(), None).unwrap())
            .chain(zones.iter().map(|z| QuotaLimit::new(5, b"HOUR", Some(z.as_bytes())).unwrap()))
            .collect();
        for (i, q) in limits.iter().enumerate() {
            let o = q.check(None, Nanos(T0_NS + 1_500_000_000), 1);
            let want = match q.period {
                Period::Fixed(p) => p - (1_800_000_001_500 % p),
                // Every zone here is on a whole or half hour: 08:00:01.5Z.
                _ if i == CACHED + 6 => 1_800_000 - 1_500,
                _ => 3_600_000 - 1_500,
            };
            assert_eq!(o.decision.reset_after_ms, want, "{q:?}");
        }
    }
}
