//! `REFUND n`: "reserve, then settle". Reserving `c` and then refunding `r`
//! leaves exactly the state that consuming `c - r` leaves (every reply field
//! and the key's PTTL), a refund never fills past full (a full limiter's key
//! is deleted), a refund on a missing key writes nothing, and a refund is a
//! write like any consuming call: propagated (replicas end equal), counted
//! in INFO, notified. Inside RL.ALL a refund spec never denies, and when
//! another spec denies nothing is refunded.

mod common;

use common::limiter::{all_commands, dump, err_of, exists, pttl, raw, rl, Reply};
use common::replication::{assert_same_state, info_u64, snapshot, start_replica, wait_for_replica_offset};
use common::{frozen_server, ServerOptions, T0_MS};

/// The three kinds at 10 per second (whole-ns units: 100 ms a unit) and
/// GCRA at 3 per second (a unit of 333_333_333.3 ns), with a burst of 10.
fn kinds() -> Vec<(&'static str, String)> {
    let mut k: Vec<_> = all_commands(10, 1000).into_iter().collect();
    k.push(("RL.GCRA", "3 1000 BURST 10".to_string()));
    k
}

#[test]
fn reserve_then_refund_is_exactly_consuming_the_difference() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    let mut case = 0;
    for (command, args) in kinds() {
        // Whole-ns units give every split exactly. At 3 per second (see
        // tests/core_refunds.rs) refunds of whole ns (multiples of 3 units)
        // are exact with any earlier backlog, and the refund of a whole
        // reservation made from idle fills the limiter; other splits may
        // leave 1 ns more (never less) than consuming the difference.
        let fractional = args.starts_with('3');
        let splits: &[(u64, u64)] = if fractional {
            &[(1, 1), (4, 4), (10, 10), (6, 3), (9, 6), (3, 3)]
        } else {
            &[(1, 1), (5, 1), (5, 4), (10, 3), (7, 7), (10, 10), (3, 2)]
        };
        for &(reserve, refund) in splits {
            for (earlier, wait_ms) in [(0, 0), (0, 130), (2, 0), (3, 250)] {
                if earlier + reserve > 10 || (fractional && earlier > 0 && refund % 3 != 0) {
                    continue;
                }
                case += 1;
                let (a, b) = (format!("a{case}"), format!("b{case}"));
                let at =
                    |c: &mut redis::Connection, key: &str, opt: &str| rl(c, &format!("{command} {key} {args} {opt}"));
                if earlier > 0 {
                    at(&mut c, &a, &format!("COST {earlier}"));
                    at(&mut c, &b, &format!("COST {earlier}"));
                    clock.advance_ms(170);
                }
                assert!(at(&mut c, &a, &format!("COST {reserve}")).allowed, "{command} {args}: reserve");
                let net = reserve - refund;
                let want_at_once = at(&mut c, &b, &format!("COST {net}"));
                clock.advance_ms(wait_ms);
                let got = at(&mut c, &a, &format!("REFUND {refund}"));
                let want = if wait_ms == 0 { want_at_once } else { at(&mut c, &b, "COST 0") };
                let what =
                    format!("{command} {args}: earlier {earlier}, reserve {reserve}, refund {refund}, wait {wait_ms}");
                assert_eq!(got, want, "{what}");
                assert!(got.allowed, "{what}");
                assert_eq!(pttl(&mut c, &a), pttl(&mut c, &b), "{what}: PTTL");
                assert_eq!(exists(&mut c, &a), exists(&mut c, &b), "{what}: EXISTS");
                if exists(&mut c, &a) {
                    assert_eq!(pttl(&mut c, &a), got.reset_after_ms, "{what}: PTTL is reset_after_ms");
                }
                // And they stay equal as time passes.
                clock.advance_ms(77);
                assert_eq!(at(&mut c, &a, "COST 0"), at(&mut c, &b, "COST 0"), "{what}, later");
                assert_eq!(pttl(&mut c, &a), pttl(&mut c, &b), "{what}: PTTL later");
            }
        }
    }
}

#[test]
fn a_refund_larger_than_what_was_consumed_fills_the_limiter_and_deletes_the_key() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (command, args) in all_commands(10, 1000) {
        let key = format!("k:{command}");
        rl(&mut c, &format!("{command} {key} {args} COST 4"));
        let got = rl(&mut c, &format!("{command} {key} {args} REFUND 4294967295"));
        assert_eq!(got, Reply::new(true, 10, 10, 0, 0), "{command}");
        assert!(!exists(&mut c, &key), "{command}: a full limiter's key is deleted");
        // Partly: 6 consumed, 2 back, 4 held.
        rl(&mut c, &format!("{command} {key} {args} COST 6"));
        let got = rl(&mut c, &format!("{command} {key} {args} REFUND 2"));
        assert_eq!(got.remaining, 6, "{command}");
        assert!(exists(&mut c, &key));
    }
}

#[test]
fn a_refund_on_a_missing_key_writes_nothing_and_answers_full() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let changes = |c: &mut redis::Connection| info_u64(c, "persistence", "rdb_changes_since_last_save");
    let before = changes(&mut c);
    for (command, args) in all_commands(10, 1000) {
        let got = rl(&mut c, &format!("{command} nokey {args} REFUND 3"));
        assert_eq!(got, Reply::new(true, 10, 10, 0, 0), "{command}");
        assert!(!exists(&mut c, "nokey"));
    }
    assert_eq!(changes(&mut c), before, "no write");
}

#[test]
fn a_refund_applies_to_the_state_as_read_after_a_backward_clock_jump() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    // Drained an hour ahead, then the clock goes back an hour: read as
    // drained (one span: 1000 ms), and refunded from that reading.
    clock.freeze_at_ms(T0_MS + 3_600_000);
    rl(&mut c, "RL.GCRA k 10 1000 COST 10");
    clock.freeze_at_ms(T0_MS);
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 REFUND 3"), Reply::new(true, 10, 3, 0, 700));
    assert_eq!(pttl(&mut c, "k"), 700);
}

#[test]
fn refund_errors_write_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA k 10 1000 COST 3");
    let before = dump(&mut c, "k");
    let range = "ERR REFUND is out of range (must be 1 to 4294967295)";
    let cases: &[(&str, &str)] = &[
        ("RL.GCRA k 10 1000 REFUND 0", range),
        ("RL.GCRA k 10 1000 REFUND -1", range),
        ("RL.GCRA k 10 1000 REFUND 4294967296", range),
        ("RL.GCRA k 10 1000 REFUND 1.5", "ERR REFUND is not an integer"),
        ("RL.GCRA k 10 1000 REFUND", "ERR syntax error: REFUND needs a value"),
        ("RL.GCRA k 10 1000 REFUND 1 COST 1", "ERR syntax error: REFUND cannot be combined with COST"),
        ("RL.GCRA k 10 1000 COST 0 REFUND 1", "ERR syntax error: REFUND cannot be combined with COST"),
        ("RL.GCRA k 10 1000 REFUND 1 PEEK", "ERR syntax error: REFUND cannot be combined with PEEK"),
        ("RL.TOKENBUCKET k 10 1 1000 PEEK refund 1", "ERR syntax error: REFUND cannot be combined with PEEK"),
        ("RL.SLIDE k 10 1000 REFUND 1 REFUND 1", "ERR syntax error: REFUND given more than once"),
        ("RL.PEEK GCRA k 10 1000 REFUND 1", "ERR syntax error: unknown option 'REFUND'"),
        ("RL.ALL 1 k GCRA 10 1000 REFUND 1 PEEK", "ERR syntax error: REFUND cannot be combined with PEEK"),
        ("RL.ALL 1 k GCRA 10 1000 REFUND 0", &format!("{range} (spec 1)")),
        ("RL.ALL 1 k GCRA 10 1000 COST 1 REFUND 1", "ERR syntax error: REFUND cannot be combined with COST (spec 1)"),
    ];
    for (line, want) in cases {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(&err_of(&mut c, &words), want, "{line}");
    }
    // CL.THROTTLE has no refund: its fifth argument is a quantity.
    assert!(err_of(&mut c, &["CL.THROTTLE", "k", "1", "1", "1", "REFUND", "1"]).contains("wrong number of arguments"));
    let _: () = redis::cmd("SET").arg("str").arg("v").query(&mut c).unwrap();
    assert!(err_of(&mut c, &["RL.GCRA", "str", "10", "1000", "REFUND", "1"]).starts_with("WRONGTYPE"));
    assert!(err_of(&mut c, &["RL.SLIDE", "k", "10", "1000", "REFUND", "1"]).starts_with("WRONGTYPE"));
    assert_eq!(dump(&mut c, "k"), before, "an error wrote");
}

/// RL.ALL's RESP2 reply: (allowed, retry_after_ms, per-key replies).
fn all(c: &mut redis::Connection, line: &str) -> (bool, i64, Vec<Reply>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let v = raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}"));
    let redis::Value::Array(items) = v else { panic!("{line}: {v:?}") };
    let int = |v: &redis::Value| -> i64 { redis::from_redis_value(v).unwrap() };
    let parts = items[2..]
        .iter()
        .map(|p| {
            let f: Vec<i64> = redis::from_redis_value(p).unwrap();
            Reply::new(f[0] == 1, f[1], f[2], f[3], f[4])
        })
        .collect();
    (int(&items[0]) == 1, int(&items[1]), parts)
}

#[test]
fn rl_all_settles_several_dimensions_in_one_call() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    // An LLM call: reserve max_tokens (800) from a tokens-per-minute GCRA, a
    // daily GCRA budget and a token bucket, plus 1 from requests per second.
    let specs = |tpm: &str, day: &str, bucket: &str| {
        format!(
            "GCRA 10000 60000 {tpm} GCRA 100000 86400000 {day} TOKENBUCKET 5000 100 1000 {bucket} SLIDE 1 1000 COST 1"
        )
    };
    let reserve = specs("COST 800", "COST 800", "COST 800");
    let (allowed, _, _) = all(&mut c, &format!("RL.ALL 4 a:tpm a:day a:tb a:rps {reserve}"));
    assert!(allowed);
    clock.advance_ms(1500);
    // It used 300: refund 500 from the token dimensions, nothing from rps.
    let settle = "RL.ALL 3 a:tpm a:day a:tb GCRA 10000 60000 REFUND 500 \
                  GCRA 100000 86400000 REFUND 500 TOKENBUCKET 5000 100 1000 REFUND 500";
    let (allowed, retry, settled) = all(&mut c, settle);
    assert!(allowed && retry == 0);
    // The same as consuming 300 in the first place.
    clock.advance_ms(-1500);
    let (allowed, _, _) =
        all(&mut c, &format!("RL.ALL 4 b:tpm b:day b:tb b:rps {}", specs("COST 300", "COST 300", "COST 300")));
    assert!(allowed);
    clock.advance_ms(1500);
    let (_, _, want) = all(
        &mut c,
        "RL.ALL 3 b:tpm b:day b:tb GCRA 10000 60000 COST 0 GCRA 100000 86400000 COST 0 TOKENBUCKET 5000 100 1000 COST 0",
    );
    assert_eq!(settled, want);
    for dim in ["tpm", "day", "tb"] {
        assert_eq!(pttl(&mut c, &format!("a:{dim}")), pttl(&mut c, &format!("b:{dim}")), "{dim}");
    }
}

#[test]
fn rl_all_refunds_nothing_when_another_spec_denies() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA a 10 1000 COST 6");
    rl(&mut c, "RL.SLIDE b 2 1000 COST 2");
    let (before_a, before_b) = (dump(&mut c, "a"), dump(&mut c, "b"));
    let peek_a = rl(&mut c, "RL.GCRA a 10 1000 COST 0");
    let peek_b = rl(&mut c, "RL.SLIDE b 2 1000 COST 1 PEEK");
    let (allowed, retry, parts) = all(&mut c, "RL.ALL 2 a b GCRA 10 1000 REFUND 5 SLIDE 2 1000 COST 1");
    assert!(!allowed);
    assert_eq!(retry, peek_b.retry_after_ms);
    assert_eq!(parts[1], peek_b);
    assert_eq!(parts[0], peek_a, "the refund spec answers its state as it is");
    assert!(parts[0].allowed);
    assert_eq!((dump(&mut c, "a"), dump(&mut c, "b")), (before_a, before_b), "nothing was written");
    // Allowed, it refunds.
    let (allowed, _, parts) = all(&mut c, "RL.ALL 2 a b GCRA 10 1000 REFUND 5 SLIDE 2 1000 COST 0");
    assert!(allowed);
    assert_eq!(parts[0], Reply::new(true, 10, 9, 0, 100));
}

#[test]
fn refunds_are_counted_in_info_and_fire_the_kinds_event() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("notify-keyspace-events").arg("KEA").query(&mut c).unwrap();
    let mut sub = s.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();

    rl(&mut c, "RL.GCRA k 10 1000 COST 4");
    rl(&mut c, "RL.GCRA k 10 1000 REFUND 1");
    rl(&mut c, "RL.GCRA k 10 1000 REFUND 3");
    rl(&mut c, "RL.GCRA nokey 10 1000 REFUND 3");
    rl(&mut c, "RL.SLIDE s 10 1000 COST 4");
    all(&mut c, "RL.ALL 2 s t SLIDE 10 1000 REFUND 1 TOKENBUCKET 5 1 1000 COST 1");

    let mut events = Vec::new();
    while events.len() < 7 {
        let msg = pubsub.get_message().expect("a keyspace event");
        let payload: String = msg.get_payload().unwrap();
        events.push(format!("{} {payload}", msg.get_channel_name().trim_start_matches("__keyspace@0__:")));
    }
    assert_eq!(
        events,
        ["k rl.gcra", "k rl.gcra", "k rl.gcra", "k del", "s rl.slide", "s rl.slide", "t rl.tokenbucket"],
        "a refund fires the kind's event; one that fills the limiter, then del"
    );
    drop(pubsub);
    let info: String = redis::cmd("INFO").arg("rl").query(&mut c).unwrap();
    assert!(info.contains("rl_gcra:calls=4,allowed=4,denied=0,never=0,refunds=3,errors=0"), "{info}");
    assert!(info.contains("rl_slide:calls=1,allowed=1,denied=0,never=0,refunds=0,errors=0"), "{info}");
    assert!(info.contains("rl_all:calls=1,allowed=1,denied=0,never=0,refunds=1,errors=0"), "{info}");
}

#[test]
fn replicas_end_with_the_masters_state_after_refunds() {
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    // The replica's own clock is off by an hour: effects carry the state.
    replica.clock.as_ref().unwrap().freeze_at_ms(T0_MS - 3_600_000);
    let clock = master.clock.as_ref().unwrap();
    let mut m = master.conn();
    for i in 0..20u64 {
        for (command, args) in all_commands(10, 60_000) {
            let key = format!("{command}:{}", i % 5);
            rl(&mut m, &format!("{command} {key} {args} COST {}", 1 + i % 4));
            rl(&mut m, &format!("{command} {key} {args} REFUND {}", 1 + i % 3));
            if i % 7 == 6 {
                // Fills it: the key is deleted on both.
                rl(&mut m, &format!("{command} {key} {args} REFUND 100"));
            }
        }
        all(&mut m, &format!("RL.ALL 2 x{} y{} GCRA 10 60000 COST 3 SLIDE 10 60000 COST 2", i % 3, i % 3));
        all(&mut m, &format!("RL.ALL 2 x{} y{} GCRA 10 60000 REFUND 2 SLIDE 10 60000 REFUND 1", i % 3, i % 3));
        clock.advance_ms(1234);
    }
    wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    let on_master = snapshot(&mut m);
    assert!(on_master.len() >= 10, "{on_master:?}");
    assert_same_state("replica after refunds", &on_master, &snapshot(&mut r));
}
