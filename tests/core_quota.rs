//! Quota windows and decisions of the pure core, against references written
//! here and not taken from the core:
//! - [`reference_boundaries`] walks an instant minute by minute, reads the
//!   local wall clock with jiff's civil API, and marks a window boundary
//!   wherever the local unit (hour, date, ISO week, month, year) first goes
//!   beyond every unit seen before it. That is the contract's definition ("a
//!   local hour runs from when the local clock enters it until it leaves it"),
//!   with no conversion from civil time back to instants, so no gap or fold
//!   rule of the core is reused. (Every transition tested is on a whole
//!   minute, as all are since the 1970s.)
//! - hand-written instants for the cases people ask about;
//! - a naive model of the count (a log of what was admitted, per window) for
//!   the decisions, over random sequences (proptest).

#[path = "common/model.rs"]
mod model;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use model::config;
use proptest::prelude::*;
use redis_rl::core::{Calendar, CalendarCache, Period, Quota, QuotaState, Settle, Unit, Window, Zone};

const NS: u64 = 1_000_000; // ns per ms
const MINUTE: i64 = 60_000;
const HOUR: u64 = 3_600_000;

fn ms(s: &str) -> i64 {
    s.parse::<Timestamp>().unwrap().as_millisecond()
}

/// The local unit holding `dt`, as an ordered key.
fn key(unit: Unit, dt: DateTime) -> (i16, i8, i8, i8) {
    match unit {
        Unit::Hour => (dt.year(), dt.month(), dt.day(), dt.hour()),
        Unit::Day => (dt.year(), dt.month(), dt.day(), 0),
        Unit::Week => {
            let w = dt.date().iso_week_date();
            (w.year(), w.week(), 0, 0)
        }
        Unit::Month => (dt.year(), dt.month(), 0, 0),
        Unit::Year => (dt.year(), 0, 0, 0),
    }
}

/// Window boundaries (ms) in `(from, to]`, walking minute by minute.
fn reference_boundaries(unit: Unit, tz: &TimeZone, from: i64, to: i64) -> Vec<i64> {
    let local = |t: i64| tz.to_datetime(Timestamp::from_millisecond(t).unwrap());
    let mut max = key(unit, local(from));
    let mut out = vec![];
    let mut t = from + MINUTE;
    while t <= to {
        let k = key(unit, local(t));
        if k > max {
            max = k;
            out.push(t);
        }
        t += MINUTE;
    }
    out
}

fn calendar(unit: Unit, zone: &str) -> Calendar {
    Calendar::new(Period::Calendar(unit), Some(Zone::lookup(zone.as_bytes()).unwrap())).unwrap()
}

fn window(c: &Calendar, t_ms: i64) -> (i64, i64) {
    let w = c.compute(t_ms as u64 * NS).unwrap();
    (w.start_ms as i64, w.end_ms as i64)
}

/// The core's windows agree with the reference on every boundary in
/// `[from, to]`: at each, just before it, and at points in between.
fn agrees(unit: Unit, zone: &str, from: &str, to: &str) -> Vec<i64> {
    let tz = jiff::tz::db().get(zone).unwrap();
    let c = calendar(unit, zone);
    let (from, to) = (ms(from), ms(to));
    let b = reference_boundaries(unit, &tz, from, to);
    assert!(!b.is_empty(), "{zone} {unit:?}: no boundary in the range");
    for &x in &b {
        assert_eq!(window(&c, x).0, x, "{zone} {unit:?}: a window starts at {x}");
        assert_eq!(window(&c, x - 1).1, x, "{zone} {unit:?}: a window ends at {x}");
    }
    for pair in b.windows(2) {
        let (s, e) = (pair[0], pair[1]);
        for t in [s, s + 1, (s + e) / 2, e - 1] {
            assert_eq!(window(&c, t), (s, e), "{zone} {unit:?} at {}", Timestamp::from_millisecond(t).unwrap());
        }
        // Sub-millisecond instants too.
        let w = c.compute(e as u64 * NS - 1).unwrap();
        assert_eq!((w.start_ms as i64, w.end_ms as i64), (s, e), "{zone} {unit:?}: 1 ns before the end");
    }
    b
}

fn lengths(b: &[i64]) -> Vec<i64> {
    b.windows(2).map(|p| (p[1] - p[0]) / MINUTE).collect()
}

#[test]
fn new_york_hours_and_days_across_both_dst_changes() {
    for (from, to) in
        [("2026-03-06T00:00:00Z", "2026-03-11T00:00:00Z"), ("2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z")]
    {
        agrees(Unit::Hour, "America/New_York", from, to);
    }
    let spring = agrees(Unit::Day, "America/New_York", "2026-03-06T00:00:00Z", "2026-03-11T00:00:00Z");
    assert!(lengths(&spring).contains(&(23 * 60)));
    let fall = agrees(Unit::Day, "America/New_York", "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z");
    assert!(lengths(&fall).contains(&(25 * 60)));
    // 02:00 EST is skipped: the hour from 01:00 ends at 03:00 EDT (07:00Z).
    let c = calendar(Unit::Hour, "America/New_York");
    assert_eq!(window(&c, ms("2026-03-08T06:30:00Z")), (ms("2026-03-08T06:00:00Z"), ms("2026-03-08T07:00:00Z")));
    assert_eq!(window(&c, ms("2026-03-08T07:00:00Z")), (ms("2026-03-08T07:00:00Z"), ms("2026-03-08T08:00:00Z")));
}

#[test]
fn berlin_days_weeks_and_hours_across_dst() {
    agrees(Unit::Hour, "Europe/Berlin", "2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z");
    agrees(Unit::Hour, "Europe/Berlin", "2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z");
    let b = agrees(Unit::Day, "Europe/Berlin", "2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z");
    assert!(lengths(&b).contains(&(23 * 60)));
    // The ISO week holding the October change lasts 7 days and an hour.
    let w = agrees(Unit::Week, "Europe/Berlin", "2026-10-18T00:00:00Z", "2026-11-03T00:00:00Z");
    assert!(lengths(&w).contains(&(7 * 24 * 60 + 60)), "{:?}", lengths(&w));
    let c = calendar(Unit::Day, "Europe/Berlin");
    assert_eq!(window(&c, ms("2026-10-25T12:00:00Z")), (ms("2026-10-24T22:00:00Z"), ms("2026-10-25T23:00:00Z")));
}

#[test]
fn lord_howe_half_hour_dst() {
    // DST ends 2026-04-05 02:00 +11 -> 01:30 +10:30; starts 2026-10-04 02:00 -> 02:30.
    let b = agrees(Unit::Hour, "Australia/Lord_Howe", "2026-04-04T10:00:00Z", "2026-04-04T20:00:00Z");
    assert!(lengths(&b).contains(&90), "{:?}", lengths(&b));
    let b = agrees(Unit::Hour, "Australia/Lord_Howe", "2026-10-03T10:00:00Z", "2026-10-03T20:00:00Z");
    assert!(lengths(&b).contains(&30), "{:?}", lengths(&b));
    let b = agrees(Unit::Day, "Australia/Lord_Howe", "2026-04-02T00:00:00Z", "2026-04-08T00:00:00Z");
    assert!(lengths(&b).contains(&(24 * 60 + 30)));
    let b = agrees(Unit::Day, "Australia/Lord_Howe", "2026-10-01T00:00:00Z", "2026-10-07T00:00:00Z");
    assert!(lengths(&b).contains(&(24 * 60 - 30)));
}

#[test]
fn skipped_midnights_start_the_day_at_the_transition() {
    // Havana: 2026-03-08 00:00 CST -> 01:00 CDT (05:00Z).
    let b = agrees(Unit::Day, "America/Havana", "2026-03-06T00:00:00Z", "2026-03-11T00:00:00Z");
    assert!(b.contains(&ms("2026-03-08T05:00:00Z")));
    agrees(Unit::Hour, "America/Havana", "2026-03-07T20:00:00Z", "2026-03-08T10:00:00Z");
    // Santiago: 2026-09-06 00:00 -04 -> 01:00 -03 (04:00Z); the month and
    // the week start there too (a Sunday, so not the week).
    let b = agrees(Unit::Day, "America/Santiago", "2026-09-04T00:00:00Z", "2026-09-09T00:00:00Z");
    assert!(b.contains(&ms("2026-09-06T04:00:00Z")));
    // Beirut, 2012-03-25 00:00 EET -> 01:00 EEST (22:00Z the day before).
    let b = agrees(Unit::Day, "Asia/Beirut", "2012-03-23T00:00:00Z", "2012-03-28T00:00:00Z");
    assert!(b.contains(&ms("2012-03-24T22:00:00Z")));
}

#[test]
fn month_ends_and_29_february() {
    for zone in ["UTC", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham"] {
        // 2028 is a leap year.
        let b = agrees(Unit::Month, zone, "2028-01-29T00:00:00Z", "2028-03-02T12:00:00Z");
        assert_eq!(b.len(), 2, "{zone}");
        let days = (b[1] - b[0]) / (24 * 60 * MINUTE);
        assert_eq!(days, 29, "{zone}: February 2028");
        agrees(Unit::Day, zone, "2028-02-28T00:00:00Z", "2028-03-02T00:00:00Z");
        agrees(Unit::Month, zone, "2026-12-30T00:00:00Z", "2027-01-02T12:00:00Z");
        agrees(Unit::Year, zone, "2026-12-30T00:00:00Z", "2027-01-02T12:00:00Z");
    }
    let c = calendar(Unit::Month, "UTC");
    assert_eq!(window(&c, ms("2028-02-29T12:00:00Z")), (ms("2028-02-01T00:00:00Z"), ms("2028-03-01T00:00:00Z")));
    assert_eq!(window(&c, ms("2027-02-28T23:59:59.999Z")).1, ms("2027-03-01T00:00:00Z"));
    let y = calendar(Unit::Year, "UTC");
    assert_eq!(
        window(&y, ms("2028-12-31T23:59:59.999Z")).1 - window(&y, ms("2028-01-01T00:00:00Z")).0,
        366 * 86_400_000
    );
}

#[test]
fn quarter_and_half_hour_offsets() {
    // Kathmandu +05:45, Chatham +12:45/+13:45, Kolkata +05:30.
    let c = calendar(Unit::Day, "Asia/Kathmandu");
    assert_eq!(window(&c, ms("2026-11-30T10:00:00Z")), (ms("2026-11-29T18:15:00Z"), ms("2026-11-30T18:15:00Z")));
    let c = calendar(Unit::Hour, "Asia/Kolkata");
    assert_eq!(window(&c, ms("2026-11-30T10:00:00Z")), (ms("2026-11-30T09:30:00Z"), ms("2026-11-30T10:30:00Z")));
    agrees(Unit::Hour, "Pacific/Chatham", "2026-04-04T10:00:00Z", "2026-04-05T20:00:00Z");
    agrees(Unit::Day, "Pacific/Chatham", "2026-09-25T00:00:00Z", "2026-09-30T00:00:00Z");
    // 2026-09-27 02:45 +12:45 -> 03:45 +13:45 (14:00Z): local 03:00 is
    // skipped, so hour 03 starts at the transition and lasts 15 minutes.
    let b = agrees(Unit::Hour, "Pacific/Chatham", "2026-09-26T10:00:00Z", "2026-09-26T18:00:00Z");
    assert!(b.contains(&ms("2026-09-26T14:00:00Z")) && lengths(&b).contains(&15), "{:?}", lengths(&b));
    // 2026-04-05 03:45 +13:45 -> 02:45 +12:45 (14:00Z): the clock goes back
    // across 03:00, so hour 03 runs from 13:15Z until 04:00 +12:45 (15:15Z).
    let c = calendar(Unit::Hour, "Pacific/Chatham");
    assert_eq!(window(&c, ms("2026-04-04T14:05:00Z")), (ms("2026-04-04T13:15:00Z"), ms("2026-04-04T15:15:00Z")));
}

#[test]
fn a_skipped_day_makes_no_window() {
    // Samoa skipped 2011-12-30: the 29th's window ends where the 31st's starts.
    let c = calendar(Unit::Day, "Pacific/Apia");
    let (s, e) = window(&c, ms("2011-12-30T09:59:59Z"));
    assert_eq!(e - s, 24 * 60 * MINUTE);
    assert_eq!(window(&c, e), (e, e + 24 * 60 * MINUTE));
    agrees(Unit::Day, "Pacific/Apia", "2011-12-28T00:00:00Z", "2012-01-02T00:00:00Z");
}

#[test]
fn fixed_windows_are_aligned_to_the_epoch() {
    let c = Calendar::new(Period::Fixed(7_000), None).unwrap();
    for t in [0u64, 6_999, 7_000, 1_800_000_000_123] {
        let w = c.compute(t * NS + 999_999).unwrap();
        assert_eq!((w.start_ms, w.end_ms), (t / 7_000 * 7_000, t / 7_000 * 7_000 + 7_000));
    }
}

const ZONES: [&str; 10] = [
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "America/Havana",
    "America/Santiago",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "America/St_Johns",
    "Europe/Dublin",
];
const UNITS: [Unit; 5] = [Unit::Hour, Unit::Day, Unit::Week, Unit::Month, Unit::Year];

proptest! {
    #![proptest_config(config(256))]

    /// Any instant from 1980 to 2100: the window holds it, its bounds are
    /// where the local unit changes (the reference walk over one minute on
    /// each side), and the windows before and after touch it.
    #[test]
    fn windows_hold_now_and_tile_time(
        t in 315_532_800_000i64..4_102_444_800_000,
        sub in 0u64..NS,
        zone in 0usize..ZONES.len(),
        unit in 0usize..UNITS.len(),
    ) {
        let (zone, unit) = (ZONES[zone], UNITS[unit]);
        let c = calendar(unit, zone);
        let tz = jiff::tz::db().get(zone).unwrap();
        let w = c.compute(t as u64 * NS + sub).unwrap();
        let (s, e) = (w.start_ms as i64, w.end_ms as i64);
        prop_assert!(s <= t && t < e, "{zone} {unit:?}: {t} not in [{s}, {e})");
        prop_assert_eq!(reference_boundaries(unit, &tz, s - MINUTE, s), vec![s]);
        prop_assert_eq!(reference_boundaries(unit, &tz, e - MINUTE, e), vec![e]);
        prop_assert_eq!(window(&c, s - 1).1, s);
        prop_assert_eq!(window(&c, e).0, e);
        // A cached calendar answers the same, at now and at the next window.
        let mut cached = calendar(unit, zone);
        prop_assert_eq!(cached.window(t as u64 * NS + sub).unwrap(), w);
        prop_assert_eq!(cached.window(e as u64 * NS).unwrap(), c.compute(e as u64 * NS).unwrap());
    }
}

/// A window of the model: UTC hours and days by plain division, or fixed ms.
fn model_window(period: Period, t_ms: u64) -> Window {
    let p = match period {
        Period::Fixed(p) => p,
        Period::Calendar(Unit::Hour) => HOUR,
        Period::Calendar(Unit::Day) => 24 * HOUR,
        Period::Calendar(_) => unreachable!(),
    };
    Window { start_ms: t_ms / p * p, end_ms: t_ms / p * p + p }
}

const PERIODS: [Period; 4] =
    [Period::Calendar(Unit::Hour), Period::Calendar(Unit::Day), Period::Fixed(1_000), Period::Fixed(90_000)];

proptest! {
    #![proptest_config(config(256))]

    /// One period, a random sequence of calls and refunds: every reply is
    /// what a log of admitted costs in the current window says, retry and
    /// reset run to the window's end, and the key expires there.
    #[test]
    fn decisions_match_a_log_of_the_window(
        period in 0usize..PERIODS.len(),
        limit in 1u64..20,
        steps in prop::collection::vec((0u64..40_000_000, 0u64..25, any::<bool>()), 1..60),
    ) {
        let period = PERIODS[period];
        let q = Quota::new(limit);
        let mut cache: CalendarCache<4> = CalendarCache::new();
        let mut now_ns = 1_800_000_000_000 * NS;
        let mut state: Option<QuotaState> = None;
        let mut log: Vec<(u64, u64)> = vec![]; // (window start, cost)
        for (step, n, refund) in steps {
            now_ns += step * 1_000; // up to 40 s
            let t = now_ns / NS;
            let w = model_window(period, t);
            prop_assert_eq!(cache.window(period, None, now_ns).unwrap(), w);
            let used: u64 = log.iter().filter(|(s, _)| *s == w.start_ms).map(|(_, c)| c).sum();
            if refund && n > 0 {
                let r = q.refund(state, w, now_ns, n);
                let after = used - n.min(used);
                prop_assert_eq!(r.decision.remaining, limit - after);
                prop_assert!(r.decision.allowed);
                match r.settle {
                    Settle::Store(wr) => {
                        prop_assert_eq!((wr.state.count, wr.expire_at.0), (after, w.end_ms));
                        state = Some(wr.state);
                    }
                    Settle::Delete => { prop_assert!(after == 0 && state.is_some()); state = None; }
                    Settle::Nothing => prop_assert!(state.is_none()),
                }
                log.clear();
                if after > 0 { log.push((w.start_ms, after)); }
                continue;
            }
            let o = q.check(state, w, now_ns, n);
            let d = o.decision;
            let to_end = w.end_ms - t;
            if n > limit {
                prop_assert_eq!((d.allowed, d.retry_after_ms), (false, -1));
            } else if used + n <= limit {
                prop_assert!(d.allowed);
                prop_assert_eq!(d.remaining, limit - used - n);
                prop_assert_eq!(d.reset_after_ms, if used + n > 0 { to_end } else { 0 });
                if n > 0 {
                    log.push((w.start_ms, n));
                    let wr = o.write.unwrap();
                    prop_assert_eq!(wr.expire_at.0, w.end_ms);
                    state = Some(wr.state);
                }
            } else {
                prop_assert!(!d.allowed);
                prop_assert_eq!((d.remaining, d.retry_after_ms, d.reset_after_ms), (limit - used, to_end as i64, to_end));
                // Exact: still denied 1 ms before, allowed at the end.
                let before = now_ns + (to_end - 1) * NS;
                prop_assert!(!q.check(state, model_window(period, before / NS), before, n).decision.allowed);
                let at = w.end_ms * NS;
                prop_assert!(q.check(state, model_window(period, w.end_ms), at, n).decision.allowed);
            }
            prop_assert_eq!(o.write.is_some(), d.allowed && n > 0, "a write exactly when consumed");
        }
    }

    /// Periods switched at random on one key: a count is never dropped
    /// before the end of the window it was stored in, that end never moves
    /// earlier, and one instant never admits more than the limit.
    #[test]
    fn a_period_change_never_drops_a_count_early(
        limit in 1u64..10,
        steps in prop::collection::vec((0usize..6, 0u64..3_000_000, 0u64..12), 1..40),
    ) {
        let periods = [
            (Period::Calendar(Unit::Hour), Some(&b"Europe/Berlin"[..])),
            (Period::Calendar(Unit::Day), Some(b"America/New_York")),
            (Period::Calendar(Unit::Day), Some(b"Australia/Lord_Howe")),
            (Period::Calendar(Unit::Month), None),
            (Period::Fixed(1_000), None),
            (Period::Fixed(7_200_000), None),
        ];
        let q = Quota::new(limit);
        let mut cache: CalendarCache<3> = CalendarCache::new();
        // 2026-10-25T00:30Z, an hour before Berlin's change.
        let mut now_ns = 1_792_888_200_000 * NS;
        let mut state: Option<QuotaState> = None;
        for (p, step, cost) in steps {
            now_ns += step * NS;
            let (period, tz) = periods[p];
            let w = cache.window(period, tz, now_ns).unwrap();
            let t = now_ns / NS;
            let live = state.filter(|s| s.start_ms <= t && t < s.end_ms);
            let read = q.check(state, w, now_ns, 0).decision;
            if let Some(s) = live {
                prop_assert!(read.remaining <= limit - s.count.min(limit), "count dropped: {:?} {:?}", s, read);
                if s.count > 0 {
                    prop_assert!(read.reset_after_ms >= s.end_ms - t, "end moved earlier: {:?} {:?}", s, read);
                }
            }
            let o = q.check(state, w, now_ns, cost);
            if let Some(wr) = o.write {
                if let Some(s) = live {
                    prop_assert!(wr.state.end_ms >= s.end_ms);
                    prop_assert!(wr.state.count >= s.count.min(limit));
                }
                prop_assert!(wr.state.count <= limit);
                prop_assert_eq!(wr.expire_at.0, wr.state.end_ms);
                state = Some(wr.state);
            }
            // Drain this instant with unit requests: at most the limit in all.
            let mut s = state;
            let mut admitted = 0;
            for _ in 0..=limit {
                let o = q.check(s, w, now_ns, 1);
                if !o.decision.allowed { break; }
                admitted += 1;
                s = o.write.map(|w| w.state);
            }
            let counted = state.filter(|s| s.start_ms <= t && t < s.end_ms).map_or(0, |s| s.count.min(limit));
            prop_assert!(counted + admitted <= limit, "admitted {} on top of {}", admitted, counted);
        }
    }
}
