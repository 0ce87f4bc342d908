//! `MAXWAIT ms` on RL.GCRA, RL.TOKENBUCKET and RL.ALL, end to end on the
//! fake clock: bookings start exactly one emission interval apart and never
//! faster than the rate, whichever client books; a booking refused beyond
//! `ms` consumes nothing; later calls with or without MAXWAIT read the
//! bookings exactly; RL.ALL books every key at one start; a booked state is
//! the same on a replica, after DEBUG RELOAD (RDB), an AOF rewrite and
//! DUMP/RESTORE; a backward clock jump blocks a booked key no longer than a
//! drained limiter plus its booking; errors where nothing books.

mod common;

use std::thread;
use std::time::Duration;

use common::limiter::{err_of, pttl, raw};
use common::replication::{digest, start_replica, wait_for_replica_offset, wait_for_sync};
use common::{advance, frozen_server, ServerOptions};
use redis::{Connection, Value};

/// The six integers of a reply with MAXWAIT (RESP2).
fn six(v: &Value) -> [i64; 6] {
    let Value::Array(items) = v else { panic!("reply {v:?}") };
    assert_eq!(items.len(), 6, "a MAXWAIT reply has six fields: {v:?}");
    let n: Vec<i64> = items.iter().map(|x| redis::from_redis_value(x).unwrap()).collect();
    n.try_into().unwrap()
}

fn call(c: &mut Connection, line: &str) -> [i64; 6] {
    let words: Vec<&str> = line.split(' ').collect();
    six(&raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}")))
}

/// `[allowed, limit, remaining, retry, reset]` of a call without MAXWAIT.
fn five(c: &mut Connection, line: &str) -> Vec<i64> {
    let words: Vec<&str> = line.split(' ').collect();
    redis::from_redis_value(&raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}"))).unwrap()
}

#[test]
fn the_reply_has_a_sixth_field_wait_ms_on_both_protocols() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // 10 per second, BURST 1: the first starts now, the second in 100 ms.
    assert_eq!(call(&mut c, "RL.GCRA k 10 1000 BURST 1 MAXWAIT 500"), [1, 1, 0, 0, 100, 0]);
    assert_eq!(call(&mut c, "RL.GCRA k 10 1000 BURST 1 MAXWAIT 500"), [1, 1, 0, 0, 200, 100]);
    // PTTL is reset_after_ms: the key outlives its bookings.
    assert_eq!(pttl(&mut c, "k"), 200);
    let mut c3 = s.conn_resp3();
    let v = raw(&mut c3, &["RL.GCRA", "k", "10", "1000", "BURST", "1", "MAXWAIT", "500"]).unwrap();
    let Value::Map(fields) = v else { panic!("RESP3 reply {v:?}") };
    let names: Vec<String> = fields.iter().map(|(k, _)| redis::from_redis_value(k).unwrap()).collect();
    assert_eq!(names, ["allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "wait_ms"]);
    assert_eq!(redis::from_redis_value::<i64>(&fields[5].1).unwrap(), 200);
    assert_eq!(fields[0].1, Value::Boolean(true));
    // Without MAXWAIT the reply keeps its five fields.
    assert_eq!(five(&mut c, "RL.GCRA other 10 1000"), [1, 10, 9, 0, 100]);
}

#[test]
fn concurrent_bookings_on_a_fresh_key_start_one_emission_interval_apart() {
    let s = frozen_server(&[]);
    // 40 clients book at one instant on 10 per second (BURST 1), MAXWAIT
    // 2000: 21 are booked, 0 to 2000 ms, one 100 ms apart; 19 are refused
    // and consume nothing.
    let handles: Vec<_> = (0..40)
        .map(|_| {
            let mut c = s.conn();
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            thread::spawn(move || call(&mut c, "RL.GCRA api 10 1000 BURST 1 MAXWAIT 2000"))
        })
        .collect();
    let replies: Vec<[i64; 6]> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut starts: Vec<i64> = replies.iter().filter(|r| r[0] == 1).map(|r| r[5]).collect();
    starts.sort();
    assert_eq!(starts, (0..=20).map(|k| 100 * k).collect::<Vec<_>>());
    for r in replies.iter().filter(|r| r[0] == 0) {
        // Refused as without MAXWAIT: the wait it would need, 2100 ms.
        assert_eq!((r[3], r[4], r[5]), (2100, 2100, 0), "{r:?}");
    }
    let mut c = s.conn();
    assert_eq!(pttl(&mut c, "api"), 2100);
    // A call without MAXWAIT is denied until the bookings ahead of it have
    // started: exactly.
    assert_eq!(five(&mut c, "RL.GCRA api 10 1000 BURST 1"), [0, 1, 0, 2100, 2100]);
    advance(&s, 2099);
    assert_eq!(five(&mut c, "RL.GCRA api 10 1000 BURST 1")[..4], [0, 1, 0, 1]);
    advance(&s, 1);
    assert_eq!(five(&mut c, "RL.GCRA api 10 1000 BURST 1"), [1, 1, 0, 0, 100]);
}

#[test]
fn a_booking_refused_beyond_maxwait_consumes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(call(&mut c, "RL.TOKENBUCKET b 5 2 1000 COST 5 MAXWAIT 0"), [1, 5, 0, 0, 2500, 0]);
    let before = digest(&mut c, "b");
    // 3 tokens are there in 1.5 s: refused at MAXWAIT 1499, booked at 1500.
    assert_eq!(call(&mut c, "RL.TOKENBUCKET b 5 2 1000 COST 3 MAXWAIT 1499"), [0, 5, 0, 1500, 2500, 0]);
    assert_eq!(digest(&mut c, "b"), before, "a refused booking wrote");
    assert_eq!(pttl(&mut c, "b"), 2500);
    assert_eq!(call(&mut c, "RL.TOKENBUCKET b 5 2 1000 COST 3 MAXWAIT 1500"), [1, 5, 0, 0, 4000, 1500]);
    // PEEK answers the booking it would make and books nothing.
    let booked = digest(&mut c, "b");
    assert_eq!(call(&mut c, "RL.TOKENBUCKET b 5 2 1000 MAXWAIT 5000 PEEK"), [1, 5, 0, 0, 4500, 2000]);
    assert_eq!(call(&mut c, "RL.PEEK TOKENBUCKET b 5 2 1000 MAXWAIT 5000"), [1, 5, 0, 0, 4500, 2000]);
    assert_eq!(digest(&mut c, "b"), booked);
    // More than the capacity: never, whatever the wait.
    assert_eq!(call(&mut c, "RL.TOKENBUCKET b 5 2 1000 COST 6 MAXWAIT 1000000"), [0, 5, 0, -1, 4000, 0]);
}

#[test]
fn rl_all_books_every_key_at_one_start() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // user: 10 per second, BURST 1, 300 ms booked ahead; tenant: fresh.
    for _ in 0..3 {
        call(&mut c, "RL.GCRA {t}user 10 1000 BURST 1 MAXWAIT 1000");
    }
    let v = raw(
        &mut c,
        &[
            "RL.ALL",
            "2",
            "{t}user",
            "{t}tenant",
            "GCRA",
            "10",
            "1000",
            "BURST",
            "1",
            "TOKENBUCKET",
            "4",
            "1",
            "1000",
            "MAXWAIT",
            "1000",
        ],
    )
    .unwrap();
    let Value::Array(items) = &v else { panic!("{v:?}") };
    assert_eq!(redis::from_redis_value::<(i64, i64)>(&Value::Array(items[..2].to_vec())).unwrap(), (1, 0));
    let (user, tenant) = (six(&items[2]), six(&items[3]));
    // Both start in 300 ms; the tenant's token is taken from then on (so
    // two more could still be taken now: with the booked one, at most 3 of
    // its 4 within the second).
    assert_eq!(user, [1, 1, 0, 0, 400, 300]);
    assert_eq!(tenant, [1, 4, 2, 0, 1300, 300]);
    assert_eq!(five(&mut c, "RL.TOKENBUCKET {t}tenant 4 1 1000 COST 0"), [1, 4, 2, 0, 1300]);
    // Beyond MAXWAIT for one key: nothing is booked on either.
    let (du, dt) = (digest(&mut c, "{t}user"), digest(&mut c, "{t}tenant"));
    let words = [
        "RL.ALL",
        "2",
        "{t}user",
        "{t}tenant",
        "GCRA",
        "10",
        "1000",
        "BURST",
        "1",
        "TOKENBUCKET",
        "4",
        "1",
        "1000",
        "COST",
        "4",
        "MAXWAIT",
        "1000",
    ];
    let v = raw(&mut c, &words).unwrap();
    let Value::Array(items) = &v else { panic!("{v:?}") };
    assert_eq!(redis::from_redis_value::<(i64, i64)>(&Value::Array(items[..2].to_vec())).unwrap(), (0, 1300));
    assert_eq!((digest(&mut c, "{t}user"), digest(&mut c, "{t}tenant")), (du, dt));
    // Only kinds that book may: the rest is refused before anything is read.
    let e = err_of(&mut c, &["RL.ALL", "2", "{t}a", "{t}b", "GCRA", "1", "1000", "SLIDE", "1", "1000", "MAXWAIT", "5"]);
    assert!(e.contains("MAXWAIT is not accepted here") && e.contains("(spec 2)"), "{e}");
}

#[test]
fn a_booked_state_survives_rdb_aof_dump_and_replication_exactly() {
    let s = frozen_server(&["--appendonly", "yes"]);
    let replica = start_replica(&s, ServerOptions::default());
    let mut c = s.conn();
    for _ in 0..5 {
        call(&mut c, "RL.GCRA g 10 1000 BURST 1 MAXWAIT 1000");
    }
    five(&mut c, "RL.TOKENBUCKET t 2 1 1000 COST 2");
    assert_eq!(call(&mut c, "RL.TOKENBUCKET t 2 1 1000 COST 2 MAXWAIT 5000"), [1, 2, 0, 0, 4000, 2000]);
    let (g, t) = (digest(&mut c, "g"), digest(&mut c, "t"));
    wait_for_replica_offset(&mut c);
    wait_for_sync(&s, &replica);
    let mut r = replica.conn();
    assert_eq!((digest(&mut r, "g"), digest(&mut r, "t")), (g.clone(), t.clone()), "the replica differs");

    // A booked key costs its state (two words); a plain one nothing more.
    let usage = |c: &mut Connection, k: &str| -> i64 { redis::cmd("MEMORY").arg("USAGE").arg(k).query(c).unwrap() };
    call(&mut c, "RL.GCRA plain 10 1000 BURST 1 MAXWAIT 1000");
    assert!(usage(&mut c, "g") > usage(&mut c, "plain"), "a booked state is allocated");

    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).unwrap();
    assert_eq!((digest(&mut c, "g"), digest(&mut c, "t")), (g.clone(), t.clone()), "RDB lost the booking");
    common::replication::rewrite_aof(&s);
    let _: () = redis::cmd("DEBUG").arg("LOADAOF").query(&mut c).unwrap();
    assert_eq!((digest(&mut c, "g"), digest(&mut c, "t")), (g.clone(), t), "the AOF lost the booking");
    let dumped: Vec<u8> = redis::cmd("DUMP").arg("g").query(&mut c).unwrap();
    let at = common::replication::pexpiretime(&mut c, "g");
    let _: () = redis::cmd("RESTORE").arg("g2").arg(at).arg(dumped).arg("ABSTTL").query(&mut c).unwrap();
    assert_eq!(digest(&mut c, "g2"), g);

    // After all that the booking still reads exactly, and a clock jump an
    // hour back blocks it no longer than drained (100 ms) plus its booking.
    assert_eq!(five(&mut c, "RL.GCRA g 10 1000 BURST 1"), [0, 1, 0, 500, 500]);
    advance(&s, -3_600_000);
    assert_eq!(five(&mut c, "RL.GCRA g 10 1000 BURST 1"), [0, 1, 0, 500, 500]);
    advance(&s, 500);
    assert_eq!(five(&mut c, "RL.GCRA g 10 1000 BURST 1"), [1, 1, 0, 0, 100]);
}

#[test]
fn maxwait_is_refused_where_nothing_books() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let why = "ERR syntax error: MAXWAIT is not accepted here: only GCRA and TOKENBUCKET book a start (RL.ACQUIRE waits with WAIT)";
    for line in [
        "RL.SLIDE k 10 1000 MAXWAIT 5",
        "RL.LOG k 10 1000 MAXWAIT 5",
        "RL.QUOTA k 10 DAY MAXWAIT 5",
        "RL.ACQUIRE k 10 1000 MAXWAIT 5",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(err_of(&mut c, &words), why, "{line}");
    }
    let e = err_of(&mut c, &["RL.GCRA", "k", "10", "1000", "MAXWAIT", "1000001"]);
    assert_eq!(e, "ERR MAXWAIT is out of range (must be 0 to 1000000)");
    let e = err_of(&mut c, &["RL.GCRA", "k", "10", "1000", "REFUND", "1", "MAXWAIT", "5"]);
    assert_eq!(e, "ERR syntax error: REFUND cannot be combined with MAXWAIT");
    let e = err_of(&mut c, &["RL.GCRA", "k", "10", "1000", "MAXWAIT", "5", "MAXWAIT", "5"]);
    assert_eq!(e, "ERR syntax error: MAXWAIT given more than once");
    let e = err_of(&mut c, &["CL.THROTTLE", "k", "10", "10", "1", "MAXWAIT", "5"]);
    assert!(e.starts_with("ERR"), "{e}");
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
    assert!(keys.is_empty(), "an error wrote {keys:?}");
}
