//! Exact at every rate (issue 18), end to end on a frozen fake clock: the
//! time a decision takes is its exact time rounded up once, so high rates
//! and COST-weighted limits are honoured, not collapsed to 10^6 per second.

mod common;

use common::limiter::{err_of, pttl, rl, Reply};
use common::{frozen_server, T0_MS};

#[test]
fn a_hundred_million_per_second_is_honoured() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // 0.1.0: 1 100000000 99000000 0 1000 (1 µs per unit: 10^6 per second).
    assert_eq!(
        rl(&mut c, "RL.GCRA bytes 100000000 1000 COST 1000000"),
        Reply::new(true, 100_000_000, 99_000_000, 0, 10)
    );
    assert_eq!(pttl(&mut c, "bytes"), 10);
    // 0.1.0: reset 100000 ms.
    assert_eq!(
        rl(&mut c, "RL.TOKENBUCKET tb 100000000 100000000 1000 COST 100000000"),
        Reply::new(true, 100_000_000, 0, 0, 1000)
    );
    assert_eq!(pttl(&mut c, "tb"), 1000);
    // Half a second later half the bucket is back.
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS + 500);
    assert_eq!(
        rl(&mut c, "RL.TOKENBUCKET tb 100000000 100000000 1000 COST 50000000"),
        Reply::new(true, 100_000_000, 0, 0, 1000)
    );
    // CL.THROTTLE alike: 10^9 per second, quantity 10^8 takes 100 ms (0.1 s, shown as 1 s).
    let r: Vec<i64> =
        redis::cmd("CL.THROTTLE").arg(&["cell", "999999999", "1000000000", "1", "100000000"]).query(&mut c).unwrap();
    assert_eq!(r, vec![0, 1_000_000_000, 900_000_000, -1, 1]);
    assert_eq!(pttl(&mut c, "cell"), 100);
}

#[test]
fn a_burst_of_unit_requests_is_admitted_exactly() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (key, args, n) in [("a", "3 1000", 3), ("b", "7 1", 7), ("c", "999 1000", 999), ("d", "3 1000 BURST 100", 100)]
    {
        let line = format!("RL.GCRA {key} {args}");
        for i in 0..n {
            assert!(rl(&mut c, &line).allowed, "{line}: unit {i}");
        }
        assert!(!rl(&mut c, &line).allowed, "{line}: one more than the burst");
    }
}

#[test]
fn a_long_run_at_exactly_the_rate_is_admitted_in_full() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let clock = s.clock.as_ref().unwrap();
    for ms in 0..200 {
        clock.freeze_at_ms(T0_MS + ms);
        let r = rl(&mut c, "RL.GCRA run 10000000 1000 BURST 10000 COST 10000");
        assert!(r.allowed, "at {ms} ms: {r:?}");
    }
    assert!(!rl(&mut c, "RL.GCRA run 10000000 1000 BURST 10000").allowed, "faster than the rate");
}

#[test]
fn the_refill_time_is_bounded_by_10_12_ms_exactly() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // 3 units of a third of 10^12 ms: exactly 10^12 ms, accepted.
    assert!(rl(&mut c, "RL.GCRA ok 3 1000000000000").allowed);
    assert_eq!(
        err_of(&mut c, &["RL.GCRA", "k", "3", "1000000000000", "BURST", "4"]),
        "ERR BURST is out of range: BURST * period_ms / limit exceeds 10^12 ms"
    );
    assert_eq!(
        err_of(&mut c, &["RL.TOKENBUCKET", "k", "1001", "1", "1000000000"]),
        "ERR capacity is out of range: refilling capacity takes more than 10^12 ms"
    );
    assert_eq!(
        err_of(&mut c, &["CL.THROTTLE", "k", "1000", "1", "1000000"]),
        "ERR max_burst is out of range: (max_burst + 1) * period / count exceeds 10^9 seconds"
    );
}
