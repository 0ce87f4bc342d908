//! Invariant 6: the server's clock jumping back (by an hour, or a year)
//! never admits more than the burst and never blocks a key for longer than
//! one full refill; jumping forward (a day) never admits more than the burst
//! at that instant. The stored "drained" reading after a backward jump (the
//! repair write) is propagated, so a replica stays identical.

mod common;

use common::limiter::{pttl, rl, Reply};
use common::replication::{
    assert_same_state, command_calls, run_clock_from, snapshot, start_replica, wait_for_replica_offset, wait_for_sync,
};
use common::{advance, frozen_server, Server, ServerOptions, T0_MS};

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// One limiter of each algorithm: (key, command, burst, one full refill in ms).
/// GCRA: 5 per 10 s with a burst of 5 refills in 10 s; token bucket: 5 tokens,
/// 1 per 2 s, 10 s; sliding window: 5 per 10 s, at most two windows.
const LIMITERS: [(&str, &str, i64, i64); 3] = [
    ("g", "RL.GCRA g 5 10000 BURST 5", 5, 10_000),
    ("t", "RL.TOKENBUCKET t 5 1 2000", 5, 10_000),
    ("s", "RL.SLIDE s 5 10000", 5, 20_000),
];

/// Unit requests until the first denial; returns how many were admitted.
fn drain(c: &mut redis::Connection, line: &str, burst: i64) -> i64 {
    let mut admitted = 0;
    while rl(c, line).allowed {
        admitted += 1;
        assert!(admitted <= burst, "{line}: admitted more than the burst from idle");
    }
    admitted
}

/// `n` unit requests at this instant; how many were admitted.
fn admitted_of(c: &mut redis::Connection, line: &str, n: usize) -> i64 {
    (0..n).filter(|_| rl(c, line).allowed).count() as i64
}

/// Drains every limiter, jumps back by `jump_ms`, and checks the contract.
fn jump_back_and_check(s: &Server, c: &mut redis::Connection, jump_ms: i64) {
    for (_, line, burst, _) in LIMITERS {
        assert_eq!(drain(c, line, burst), burst, "{line}: a fresh key admits its burst");
    }
    advance(s, -jump_ms);
    let mut resets = Vec::new();
    for (key, line, burst, refill_ms) in LIMITERS {
        // A status read first: it already sees the drained reading.
        let status = rl(c, &format!("{line} COST 0"));
        assert_eq!((status.remaining, status.limit), (0, burst), "{line} after a jump of -{jump_ms} ms: {status:?}");
        let r = rl(c, line);
        assert!(!r.allowed && r.remaining == 0, "{line}: the jump admitted a request: {r:?}");
        assert!(0 < r.reset_after_ms && r.reset_after_ms <= refill_ms, "{line}: blocked for {r:?}");
        assert!(r.retry_after_ms <= r.reset_after_ms, "{line}: {r:?}");
        assert_eq!(pttl(c, key), r.reset_after_ms, "{line}: the drained reading is stored, expiring at reset");
        // Never more than the burst, however often it is asked.
        assert_eq!(admitted_of(c, line, 3 * burst as usize), 0, "{line}: admitted after the jump");
        resets.push(r.reset_after_ms);
    }
    // One full refill after the jump (no later), every key is full again.
    let longest = *resets.iter().max().unwrap();
    advance(s, longest);
    for (key, line, burst, _) in LIMITERS {
        let status = rl(c, &format!("{line} COST 0"));
        assert_eq!(status, Reply::new(true, burst, burst, 0, 0), "{line}: not full {longest} ms after the jump");
        assert!(pttl(c, key) <= 0, "{key} outlived its reset");
        assert_eq!(admitted_of(c, line, 3 * burst as usize), burst, "{line}: once full, exactly the burst");
    }
}

#[test]
fn a_backward_jump_of_an_hour_admits_nothing_extra_and_blocks_at_most_one_refill() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    jump_back_and_check(&s, &mut c, HOUR_MS);
}

#[test]
fn a_backward_jump_of_a_year_admits_nothing_extra_and_blocks_at_most_one_refill() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    jump_back_and_check(&s, &mut c, 365 * DAY_MS);
}

#[test]
fn each_key_is_full_exactly_at_the_reset_it_reported_after_a_backward_jump() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (_, line, burst, refill_ms) in LIMITERS {
        advance(&s, 2 * DAY_MS); // a fresh start for each limiter
        assert_eq!(drain(&mut c, line, burst), burst);
        advance(&s, -HOUR_MS);
        let r = rl(&mut c, line);
        assert!(!r.allowed && r.reset_after_ms <= refill_ms, "{line}: {r:?}");
        advance(&s, r.reset_after_ms - 1);
        let before = rl(&mut c, &format!("{line} COST 0"));
        assert!(before.remaining < burst, "{line}: full 1 ms before the reset it reported: {before:?}");
        advance(&s, 1);
        assert_eq!(rl(&mut c, &format!("{line} COST 0")), Reply::new(true, burst, burst, 0, 0), "{line}");
    }
}

#[test]
fn a_forward_jump_of_a_day_admits_at_most_the_burst() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (_, line, burst, _) in LIMITERS {
        assert_eq!(drain(&mut c, line, burst), burst);
    }
    advance(&s, DAY_MS);
    for (_, line, burst, _) in LIMITERS {
        assert_eq!(admitted_of(&mut c, line, 3 * burst as usize), burst, "{line} a day later");
    }
    // And a jump of a year, from part-way drained.
    advance(&s, HOUR_MS);
    for (_, line, _, _) in LIMITERS {
        assert_eq!(admitted_of(&mut c, line, 2), 2, "{line}");
    }
    advance(&s, 365 * DAY_MS);
    for (_, line, burst, _) in LIMITERS {
        assert_eq!(admitted_of(&mut c, line, 3 * burst as usize), burst, "{line} a year later");
    }
}

#[test]
fn the_repair_write_after_a_backward_jump_reaches_the_replica() {
    // The replica's clock runs a day behind the master's: every key lives
    // on both.
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    run_clock_from(replica.clock.as_ref().unwrap(), T0_MS - DAY_MS as u64);
    let (mut m, mut r) = (master.conn(), replica.conn());
    for (_, line, burst, _) in LIMITERS {
        assert_eq!(drain(&mut m, line, burst), burst);
    }
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);
    assert_same_state("replica after draining", &snapshot(&mut m), &snapshot(&mut r));
    let applied = command_calls(&mut r, "rl.apply");

    advance(&master, -HOUR_MS);
    for (_, line, burst, _) in LIMITERS {
        // The first call stores the drained reading; the rest write nothing.
        assert_eq!(admitted_of(&mut m, line, 3 * burst as usize), 0, "{line}");
    }
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);
    assert_eq!(command_calls(&mut r, "rl.apply"), applied + 3, "exactly one repair write per key");
    assert_same_state("replica after the repair writes", &snapshot(&mut m), &snapshot(&mut r));
}
