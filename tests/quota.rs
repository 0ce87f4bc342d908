//! RL.QUOTA end to end, on a frozen fake clock: calendar windows in UTC and
//! in Europe/Berlin across both DST changes (reset and retry to the exact
//! window end, PEXPIRETIME equal to it), fixed windows in ms, a month end,
//! errors that write nothing, PEEK and COST 0, RL.ALL with a rate limit and
//! a quota, RL.PEEK QUOTA, and replica, AOF and rewritten-AOF equality.
//!
//! The expected window bounds are written out as instants (checked against
//! the zone rules by hand: EU summer time starts on the last Sunday of March
//! at 01:00 UTC and ends on the last Sunday of October at 01:00 UTC), not
//! computed with the module's code.

mod common;

use common::limiter::{all_ints, dump, err_of, exists, pttl, r, rl};
use common::replication::{pexpiretime, replica_and_aof_replay};
use common::{freeze, frozen_server, Server, T0_MS};
use redis::Connection;

const HOUR: i64 = 3_600_000;

/// 2027-01-31T23:59:59Z, one second before February (UTC).
const JAN_31_235959: u64 = 1_801_439_999_000;
/// 2027-02-01T00:00:00Z and 2027-03-01T00:00:00Z.
const FEB_1: u64 = 1_801_440_000_000;
const MAR_1: u64 = 1_803_859_200_000;
/// 2027-03-28 in Berlin (summer time from 01:00Z): 2027-03-27T23:00Z to
/// 2027-03-28T22:00Z, 23 hours.
const BERLIN_MAR_28: (u64, u64) = (1_806_188_400_000, 1_806_271_200_000);
/// 2027-10-31 in Berlin (winter time from 01:00Z): 2027-10-30T22:00Z to
/// 2027-10-31T23:00Z, 25 hours.
const BERLIN_OCT_31: (u64, u64) = (1_824_933_600_000, 1_825_023_600_000);
/// January 2027 in Berlin: 2026-12-31T23:00Z to 2027-01-31T23:00Z.
const BERLIN_JAN_END: u64 = 1_801_436_400_000;

/// Uses up a quota of `limit` on `key` at the frozen instant, then checks
/// that the next call is denied until exactly `end_ms` and allowed from it.
fn drains_until(s: &Server, c: &mut Connection, key: &str, args: &str, now_ms: u64, end_ms: u64) {
    freeze(s, now_ms);
    let limit: i64 = args.split(' ').next().unwrap().parse().unwrap();
    let to_end = (end_ms - now_ms) as i64;
    let line = format!("RL.QUOTA {key} {args}");
    assert_eq!(rl(c, &format!("{line} COST {limit}")), r(true, limit, 0, 0, to_end), "{line}");
    assert_eq!(pexpiretime(c, key), end_ms as i64, "{line}: the key expires at the window's end");
    assert_eq!(rl(c, &line), r(false, limit, 0, to_end, to_end), "{line}");
    freeze(s, end_ms - 1);
    assert_eq!(rl(c, &line), r(false, limit, 0, 1, 1), "{line} 1 ms before the end");
    freeze(s, end_ms);
    assert!(rl(c, &line).allowed, "{line} at the end");
}

#[test]
fn a_utc_month_ends_at_midnight_and_the_next_one_has_28_days() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    drains_until(&s, &mut c, "m", "3 MONTH", JAN_31_235959, FEB_1);
    // Now in February: 28 days, to March 1st.
    assert_eq!(rl(&mut c, "RL.QUOTA m 3 month"), r(true, 3, 1, 0, (MAR_1 - FEB_1) as i64));
    assert_eq!(pexpiretime(&mut c, "m"), MAR_1 as i64);
    assert_eq!(pttl(&mut c, "m"), (MAR_1 - FEB_1) as i64);
}

#[test]
fn berlin_days_last_23_and_25_hours_across_dst() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (start, end) = BERLIN_MAR_28;
    assert_eq!(end - start, 23 * HOUR as u64);
    drains_until(&s, &mut c, "spring", "2 DAY TZ Europe/Berlin", start + 13 * HOUR as u64, end);
    let (start, end) = BERLIN_OCT_31;
    assert_eq!(end - start, 25 * HOUR as u64);
    drains_until(&s, &mut c, "autumn", "2 day tz europe/berlin", start, end);
    // The same instant in UTC is another window: 2027-10-30T00:00Z to 10-31T00:00Z.
    freeze(&s, start);
    assert_eq!(rl(&mut c, "RL.QUOTA utc 2 DAY"), r(true, 2, 1, 0, 2 * HOUR));
    assert_eq!(rl(&mut c, "RL.QUOTA utc2 2 DAY TZ UTC"), r(true, 2, 1, 0, 2 * HOUR));
}

#[test]
fn fixed_windows_are_aligned_to_the_epoch() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // T0 is a whole minute.
    drains_until(&s, &mut c, "f", "5 60000", T0_MS + 1234, T0_MS + 60_000);
    freeze(&s, T0_MS + 60_001);
    assert_eq!(rl(&mut c, "RL.QUOTA f 5 60000 COST 2"), r(true, 5, 2, 0, 59_999));
}

#[test]
fn a_period_change_keeps_the_count_to_the_later_end() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // Three counted in today's Berlin day (ends 2027-01-15T23:00Z) ...
    assert!(rl(&mut c, "RL.QUOTA k 3 DAY TZ Europe/Berlin COST 3").allowed);
    let day_end = 1_800_054_000_000i64;
    // ... still count under an hourly quota until the day ends.
    let to_end = day_end - T0_MS as i64;
    assert_eq!(rl(&mut c, "RL.QUOTA k 3 HOUR"), r(false, 3, 0, to_end, to_end));
    assert_eq!(pexpiretime(&mut c, "k"), day_end);
}

/// A period change seen first by a denied or COST 0 call stores the merged
/// window (a repair): the key expires at the later end, and the new window
/// never admits more than its limit. Before, nothing was stored, the key
/// expired at the hour's end, and the DAY window admitted 2 against a limit
/// of 1 (issue 32.7).
#[test]
fn a_period_change_seen_by_a_denial_or_a_status_query_is_stored() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // 2027-01-15T12:30:00Z; the hour ends at 13:00, the UTC day at 24:00.
    let half_past = 1_800_016_200_000u64;
    let (hour_end, day_end) = (half_past + 1_800_000, 1_800_057_600_000u64);
    for (key, second) in [("q:denied", "RL.QUOTA q:denied 1 DAY"), ("q:status", "RL.QUOTA q:status 1 DAY COST 0")] {
        freeze(&s, half_past);
        assert!(rl(&mut c, &format!("RL.QUOTA {key} 1 HOUR")).allowed);
        assert_eq!(pexpiretime(&mut c, key), hour_end as i64);
        freeze(&s, half_past + 1);
        let to_end = (day_end - half_past - 1) as i64;
        let want = if second.ends_with("COST 0") { r(true, 1, 0, 0, to_end) } else { r(false, 1, 0, to_end, to_end) };
        assert_eq!(rl(&mut c, second), want, "{second}");
        assert_eq!(pexpiretime(&mut c, key), day_end as i64, "{second}: the merged window was not stored");
        assert_eq!(pttl(&mut c, key), to_end);
        // At 13:00 the count still stands in the day window.
        freeze(&s, hour_end);
        let to_end = (day_end - hour_end) as i64;
        assert_eq!(rl(&mut c, &format!("RL.QUOTA {key} 1 DAY")), r(false, 1, 0, to_end, to_end), "{second}");
    }
    // PEEK reads the merged window but writes nothing.
    freeze(&s, half_past);
    assert!(rl(&mut c, "RL.QUOTA q:peek 1 HOUR").allowed);
    let before = dump(&mut c, "q:peek");
    freeze(&s, half_past + 1);
    let to_end = (day_end - half_past - 1) as i64;
    assert_eq!(rl(&mut c, "RL.QUOTA q:peek 1 DAY PEEK"), r(false, 1, 0, to_end, to_end));
    assert_eq!(rl(&mut c, "RL.PEEK QUOTA q:peek 1 DAY"), r(false, 1, 0, to_end, to_end));
    assert_eq!((dump(&mut c, "q:peek"), pexpiretime(&mut c, "q:peek")), (before, hour_end as i64));
}

#[test]
fn errors_name_the_argument_and_write_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let cases: &[(&str, &str)] = &[
        ("RL.QUOTA k 10 DAY TZ Mars/Base", "ERR TZ: unknown time zone 'Mars/Base'"),
        ("RL.QUOTA k 10 DAY TZ Etc/Unknown", "ERR TZ: unknown time zone 'Etc/Unknown'"),
        ("RL.QUOTA k 10 60000 TZ UTC", "ERR TZ applies only to HOUR, DAY, WEEK, MONTH or YEAR"),
        ("RL.QUOTA k 10 DAY TZ", "ERR syntax error: TZ needs a value"),
        ("RL.QUOTA k 10 DAY TZ UTC TZ UTC", "ERR syntax error: TZ given more than once"),
        (
            "RL.QUOTA k 10 FORTNIGHT",
            "ERR period is out of range: must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms",
        ),
        ("RL.QUOTA k 10 0", "ERR period is out of range: must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms"),
        (
            "RL.QUOTA k 10 1000000000001",
            "ERR period is out of range: must be HOUR, DAY, WEEK, MONTH, YEAR or 1 to 10^12 ms",
        ),
        ("RL.QUOTA k 0 DAY", "ERR limit is out of range (must be 1 to 4294967295)"),
        ("RL.QUOTA k 10 DAY BURST 3", "ERR syntax error: unknown option 'BURST'"),
        ("RL.QUOTA k 10", "ERR wrong number of arguments"),
        ("RL.GCRA k 10 1000 TZ UTC", "ERR syntax error: unknown option 'TZ'"),
        ("RL.PEEK QUOTA k 10 DAY TZ Nowhere", "ERR TZ: unknown time zone 'Nowhere'"),
        ("RL.ALL 1 k QUOTA 10 1000 TZ UTC", "ERR TZ applies only to HOUR, DAY, WEEK, MONTH or YEAR (spec 1)"),
        // The word after TZ is its value, even PEEK, as for RL.QUOTA.
        ("RL.QUOTA k 10 DAY TZ PEEK", "ERR TZ: unknown time zone 'PEEK'"),
        ("RL.ALL 1 k QUOTA 10 DAY TZ PEEK", "ERR TZ: unknown time zone 'PEEK' (spec 1)"),
    ];
    for (line, want) in cases {
        let words: Vec<&str> = line.split(' ').collect();
        let got = err_of(&mut c, &words);
        assert!(got.starts_with(want), "{line}: {got}");
    }
    // A zone that is not printable is not echoed.
    let got = err_of(&mut c, &[&b"RL.QUOTA"[..], b"k", b"1", b"DAY", b"TZ", b"a\r\nb"]);
    assert_eq!(got, "ERR TZ: unknown time zone");
    assert!(!exists(&mut c, "k"));
}

#[test]
fn peek_and_cost_0_write_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let to_end = (BERLIN_JAN_END - T0_MS) as i64;
    // On a missing key: nothing is created.
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin PEEK"), r(true, 5, 4, 0, to_end));
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 0"), r(true, 5, 5, 0, 0));
    assert!(!exists(&mut c, "q"));
    // On a live key: its state and TTL are unchanged.
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 2"), r(true, 5, 3, 0, to_end));
    let (before, ttl) = (dump(&mut c, "q"), pttl(&mut c, "q"));
    assert_eq!(ttl, to_end);
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 3 PEEK"), r(true, 5, 0, 0, to_end));
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 0"), r(true, 5, 3, 0, to_end));
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 6"), r(false, 5, 3, -1, to_end));
    assert_eq!(rl(&mut c, "RL.PEEK QUOTA q 5 MONTH TZ Europe/Berlin COST 3"), r(true, 5, 0, 0, to_end));
    assert_eq!((dump(&mut c, "q"), pttl(&mut c, "q")), (before, ttl));
    // Type, memory: a 24-byte state.
    let ty: String = redis::cmd("TYPE").arg("q").query(&mut c).unwrap();
    assert_eq!(ty, "rl-quota-");
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 MONTH TZ Europe/Berlin COST 3"), r(true, 5, 0, 0, to_end));
    assert!(matches!(err_of(&mut c, &["RL.GCRA", "q", "1", "1000"]).as_str(), s if s.starts_with("WRONGTYPE")));
}

#[test]
fn rl_all_combines_a_rate_limit_with_a_monthly_quota() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let line = "RL.ALL 2 {acme}:rate {acme}:month GCRA 10 1000 QUOTA 3 MONTH TZ Europe/Berlin";
    let to_end = (BERLIN_JAN_END - T0_MS) as i64;
    assert_eq!(all_ints(&mut c, line), (true, 0, vec![vec![1, 10, 9, 0, 100], vec![1, 3, 2, 0, to_end]]));
    for _ in 0..2 {
        freeze(&s, T0_MS + 1000);
        assert!(all_ints(&mut c, line).0);
    }
    // The quota is spent: denied until the end of January in Berlin, and
    // the rate limit consumes nothing.
    let rate = dump(&mut c, "{acme}:rate");
    let (allowed, retry, limits) = all_ints(&mut c, line);
    assert_eq!((allowed, retry), (false, to_end - 1000));
    assert_eq!(limits[1], vec![0, 3, 0, to_end - 1000, to_end - 1000]);
    assert_eq!(dump(&mut c, "{acme}:rate"), rate);
    assert_eq!(pexpiretime(&mut c, "{acme}:month"), BERLIN_JAN_END as i64);
}

#[test]
fn replicas_and_the_aof_hold_the_same_quota_state() {
    // The replica's own clock is 50 ms ahead: it stores what the master
    // decided. The master replays its AOF, then its rewritten AOF.
    let copies = replica_and_aof_replay(T0_MS + 50, |_, m| {
        let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"];
        for (i, unit) in ["HOUR", "DAY", "WEEK", "MONTH", "YEAR"].iter().enumerate() {
            for (j, zone) in zones.iter().enumerate() {
                let key = format!("q:{unit}:{zone}");
                for _ in 0..=(i + j) % 3 {
                    assert!(rl(m, &format!("RL.QUOTA {key} 3 {unit} TZ {zone}")).allowed);
                }
            }
        }
        assert!(rl(m, "RL.QUOTA q:fixed 3 86400000 COST 2").allowed);
        assert!(all_ints(m, "RL.ALL 2 {x}:rate {x}:quota GCRA 10 1000 QUOTA 100000 MONTH TZ Europe/Berlin").0);
    });
    assert_eq!(copies.expected.len(), 28);
}

#[test]
fn rdb_reload_and_dump_restore_keep_the_count_and_the_window() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(rl(&mut c, "RL.QUOTA q 5 WEEK TZ Asia/Kathmandu COST 3").allowed);
    let (state, at) = (dump(&mut c, "q"), pexpiretime(&mut c, "q"));
    // The ISO week in Kathmandu (+05:45) ends on Monday 2027-01-18 00:00
    // local, 2027-01-17T18:15Z.
    assert_eq!(at, 1_800_209_700_000);
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).expect("DEBUG RELOAD");
    assert_eq!((dump(&mut c, "q"), pexpiretime(&mut c, "q")), (state.clone(), at));
    let _: () = redis::cmd("RESTORE").arg("q2").arg(at).arg(state.unwrap()).arg("ABSTTL").query(&mut c).unwrap();
    // The copy decides as the original: two left in this Kathmandu week.
    let to_end = at - T0_MS as i64;
    assert_eq!(rl(&mut c, "RL.QUOTA q2 5 WEEK TZ Asia/Kathmandu COST 0"), r(true, 5, 2, 0, to_end));
    assert_eq!(rl(&mut c, "RL.QUOTA q 5 WEEK TZ Asia/Kathmandu COST 0"), r(true, 5, 2, 0, to_end));
    // A 24-byte state, as the sliding window's: the same MEMORY USAGE for
    // keys of the same length (the server's per-key overhead differs by server).
    assert!(rl(&mut c, "RL.SLIDE s 5 60000").allowed);
    let usage = |c: &mut Connection, k: &str| -> i64 { redis::cmd("MEMORY").arg("USAGE").arg(k).query(c).unwrap() };
    assert_eq!(usage(&mut c, "q"), usage(&mut c, "s"));
}

/// Reserve 30, refund 10: exactly the state of consuming 20, every field and
/// the expiry; a refund past the count deletes the key; once the window has
/// ended there is nothing to refund.
#[test]
fn a_refund_gives_units_back_to_the_current_window_only() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let line = "RL.QUOTA KEY 100 DAY TZ Europe/Berlin";
    rl(&mut c, &format!("{} COST 20", line.replace("KEY", "consumed")));
    rl(&mut c, &format!("{} COST 30", line.replace("KEY", "reserved")));
    let refunded = rl(&mut c, &format!("{} REFUND 10", line.replace("KEY", "reserved")));
    let consumed = rl(&mut c, &format!("{} COST 0", line.replace("KEY", "consumed")));
    assert_eq!(refunded, consumed);
    assert_eq!(refunded.remaining, 80);
    assert_eq!(pexpiretime(&mut c, "reserved"), pexpiretime(&mut c, "consumed"));
    // More than was counted: back to full, and the key is gone.
    let full = rl(&mut c, &format!("{} REFUND 1000", line.replace("KEY", "reserved")));
    assert_eq!(full, r(true, 100, 100, 0, 0));
    assert!(!exists(&mut c, "reserved"));
    // A refund on a missing key writes nothing.
    rl(&mut c, &format!("{} REFUND 5", line.replace("KEY", "missing")));
    assert!(!exists(&mut c, "missing"));
    // After the day has ended, the count is over: a refund gives nothing back
    // to the new day.
    freeze(&s, T0_MS + 2 * 86_400_000);
    rl(&mut c, &format!("{} COST 7", line.replace("KEY", "today")));
    freeze(&s, T0_MS + 3 * 86_400_000);
    let after = rl(&mut c, &format!("{} REFUND 7", line.replace("KEY", "today")));
    assert_eq!(after.remaining, 100);
    assert!(!exists(&mut c, "today"));
    let next = rl(&mut c, &format!("{} COST 1", line.replace("KEY", "today")));
    assert_eq!(next.remaining, 99, "the refund must not carry over to the new day");
}
