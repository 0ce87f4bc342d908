//! CL.THROTTLE, redis-cell's command, against a real redis-server: its
//! documented examples and its own test table replayed on a frozen fake
//! clock, quantity 0 and quantities above the limit, state shared with
//! RL.GCRA, the error matrix, key declarations, RESP3 and replication.

mod common;

use common::limiter::{dump, err_of, exists, pttl, raw, rl, Reply};
use common::replication::{
    assert_same_state, command_calls, run_clock_from, snapshot, start_replica, wait_for_replica_offset, wait_for_sync,
};
use common::{frozen_server, Server, ServerOptions, T0_MS};
use redis::{Connection, Value};

/// Moves the frozen clock to `ms` after T0.
fn at(s: &Server, ms: u64) {
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS + ms);
}

/// Runs a CL.THROTTLE line and returns its five integers.
fn cl(con: &mut Connection, line: &str) -> [i64; 5] {
    let words: Vec<&str> = line.split_whitespace().collect();
    let v = raw(con, &words).unwrap_or_else(|e| panic!("{line}: {e}"));
    let ints: Vec<i64> = redis::from_redis_value(&v).unwrap_or_else(|e| panic!("{line}: {v:?}: {e}"));
    ints.try_into().unwrap_or_else(|v| panic!("{line}: not five integers: {v:?}"))
}

/// One row of a table: (ms after T0, command line, expected reply).
type Row = (u64, &'static str, [i64; 5]);

fn replay(s: &Server, rows: &[Row]) {
    let mut c = s.conn();
    for (i, &(ms, line, want)) in rows.iter().enumerate() {
        at(s, ms);
        assert_eq!(cl(&mut c, line), want, "row {i}: at +{ms} ms: {line}");
    }
}

#[test]
fn readme_example_on_a_fresh_key() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // 30 per 60 s is one every 2 s; a burst of 16.
    assert_eq!(cl(&mut c, "CL.THROTTLE user123 15 30 60 1"), [0, 16, 15, -1, 2]);
    assert_eq!(cl(&mut c, "CL.THROTTLE user123 15 30 60"), [0, 16, 14, -1, 4]);
    // The key lives exactly until the limiter is full again.
    assert_eq!(pttl(&mut c, "user123"), 4000);
    let t: String = redis::cmd("TYPE").arg("user123").query(&mut c).unwrap();
    assert_eq!(t, "rl-gcra--");
}

#[test]
fn a_burst_of_sixteen_at_one_instant_then_limited() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for i in 1..=16 {
        assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [0, 16, 16 - i, -1, 2 * i], "call {i}");
    }
    // The 17th waits one emission interval; the limiter is full in 32 s.
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [1, 16, 0, 2, 32]);
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [1, 16, 0, 2, 32], "a limited call consumed");
    // 1 ms short of the interval: still limited, and 1 ms rounds up to 1 s.
    at(&s, 1999);
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [1, 16, 0, 1, 31]);
    at(&s, 2000);
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [0, 16, 0, -1, 32]);
    // Two more at once need 2 intervals: retry after 4 s.
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60 2"), [1, 16, 0, 4, 32]);
    // The full 32 s later it is full: 16 at once.
    at(&s, 34_000);
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60 0"), [0, 16, 16, -1, 0]);
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60 16"), [0, 16, 0, -1, 32]);
}

/// redis-cell's own `it_rate_limits` table (src/cell/mod.rs): limit 5
/// (max_burst 4), one per second, with its durations in whole seconds
/// rounded up, as its CL.THROTTLE replies them.
#[test]
fn redis_cells_own_test_table() {
    let s = frozen_server(&[]);
    replay(
        &s,
        &[
            // A request larger than the limit is never allowed.
            (0, "CL.THROTTLE foo 4 1 1 6", [1, 5, 5, -1, 0]),
            (0, "CL.THROTTLE foo 4 1 1 1", [0, 5, 4, -1, 1]),
            (0, "CL.THROTTLE foo 4 1 1 1", [0, 5, 3, -1, 2]),
            (0, "CL.THROTTLE foo 4 1 1 1", [0, 5, 2, -1, 3]),
            (0, "CL.THROTTLE foo 4 1 1 1", [0, 5, 1, -1, 4]),
            (0, "CL.THROTTLE foo 4 1 1 1", [0, 5, 0, -1, 5]),
            (0, "CL.THROTTLE foo 4 1 1 1", [1, 5, 0, 1, 5]),
            (3000, "CL.THROTTLE foo 4 1 1 1", [0, 5, 2, -1, 3]),
            // reset 3.9 s -> 4
            (3100, "CL.THROTTLE foo 4 1 1 1", [0, 5, 1, -1, 4]),
            (4000, "CL.THROTTLE foo 4 1 1 1", [0, 5, 1, -1, 4]),
            (8000, "CL.THROTTLE foo 4 1 1 1", [0, 5, 4, -1, 1]),
            (9500, "CL.THROTTLE foo 4 1 1 1", [0, 5, 4, -1, 1]),
            // Quantity 0 only looks.
            (9500, "CL.THROTTLE foo 4 1 1 0", [0, 5, 4, -1, 1]),
            (9500, "CL.THROTTLE foo 4 1 1 2", [0, 5, 2, -1, 3]),
            // Within the limit but more than remains: retry in 3 s.
            (9500, "CL.THROTTLE foo 4 1 1 5", [1, 5, 2, 3, 3]),
        ],
    );
}

#[test]
fn partial_seconds_round_up_so_waiting_them_is_enough() {
    let s = frozen_server(&[]);
    // 3 per second: 333.334 ms per unit, burst 1.
    replay(
        &s,
        &[
            (0, "CL.THROTTLE r 0 3 1", [0, 1, 0, -1, 1]),
            (0, "CL.THROTTLE r 0 3 1", [1, 1, 0, 1, 1]),
            // 0.334 ms left: still limited, and never "retry after 0".
            (333, "CL.THROTTLE r 0 3 1", [1, 1, 0, 1, 1]),
            (334, "CL.THROTTLE r 0 3 1", [0, 1, 0, -1, 1]),
        ],
    );
}

#[test]
fn quantity_zero_is_a_status_read_that_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // On a missing key: full, and no key is created.
    assert_eq!(cl(&mut c, "CL.THROTTLE q 15 30 60 0"), [0, 16, 16, -1, 0]);
    assert!(!exists(&mut c, "q"));

    assert_eq!(cl(&mut c, "CL.THROTTLE q 15 30 60 3"), [0, 16, 13, -1, 6]);
    at(&s, 1000);
    let (before, ttl) = (dump(&mut c, "q"), pttl(&mut c, "q"));
    assert_eq!(cl(&mut c, "CL.THROTTLE q 15 30 60 0"), [0, 16, 13, -1, 5]);
    assert_eq!(cl(&mut c, "CL.THROTTLE q 15 30 60 0"), [0, 16, 13, -1, 5]);
    assert_eq!(dump(&mut c, "q"), before, "quantity 0 changed the state");
    assert_eq!(pttl(&mut c, "q"), ttl, "quantity 0 changed the expiry");
}

#[test]
fn a_quantity_above_the_limit_is_limited_with_retry_minus_one() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(cl(&mut c, "CL.THROTTLE big 15 30 60 17"), [1, 16, 16, -1, 0]);
    assert!(!exists(&mut c, "big"), "a limited call created the key");
    assert_eq!(cl(&mut c, "CL.THROTTLE big 15 30 60 4294967295"), [1, 16, 16, -1, 0]);
    // Exactly the limit passes from idle.
    assert_eq!(cl(&mut c, "CL.THROTTLE big 15 30 60 1"), [0, 16, 15, -1, 2]);
    let before = dump(&mut c, "big");
    assert_eq!(cl(&mut c, "CL.THROTTLE big 15 30 60 17"), [1, 16, 15, -1, 2]);
    assert_eq!(dump(&mut c, "big"), before);
}

#[test]
fn shares_its_state_with_the_equivalent_rl_gcra() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    const GCRA: &str = "RL.GCRA k 30 60000 BURST 16";
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [0, 16, 15, -1, 2]);
    assert_eq!(rl(&mut c, GCRA), Reply::new(true, 16, 14, 0, 4000));
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60 2"), [0, 16, 12, -1, 8]);
    assert_eq!(rl(&mut c, &format!("{GCRA} COST 0")), Reply::new(true, 16, 12, 0, 8000));
    assert_eq!(rl(&mut c, &format!("{GCRA} COST 12")), Reply::new(true, 16, 0, 0, 32_000));
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [1, 16, 0, 2, 32]);
    assert_eq!(rl(&mut c, GCRA), Reply::new(false, 16, 0, 2000, 32_000));
    assert_eq!(pttl(&mut c, "k"), 32_000);
    at(&s, 5000);
    assert_eq!(rl(&mut c, &format!("{GCRA} PEEK")), Reply::new(true, 16, 1, 0, 29_000));
    assert_eq!(cl(&mut c, "CL.THROTTLE k 15 30 60"), [0, 16, 1, -1, 29]);

    // A key RL.GCRA made with other parameters: the new ones apply at once.
    assert_eq!(rl(&mut c, "RL.GCRA other 10 1000"), Reply::new(true, 10, 9, 0, 100));
    assert_eq!(cl(&mut c, "CL.THROTTLE other 15 30 60 0"), [0, 16, 15, -1, 1]);
}

#[test]
fn other_types_and_algorithms_are_wrongtype_and_untouched() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // What redis-cell stored: a string of nanoseconds.
    let _: () = redis::cmd("SET").arg("s").arg("1800000000000000000").query(&mut c).unwrap();
    rl(&mut c, "RL.SLIDE w 10 1000");
    rl(&mut c, "RL.TOKENBUCKET b 10 10 1000");
    for key in ["s", "w", "b"] {
        let before = dump(&mut c, key);
        for quantity in ["0", "1", "17"] {
            let e = err_of(&mut c, &["CL.THROTTLE", key, "15", "30", "60", quantity]);
            assert!(e.starts_with("WRONGTYPE"), "{key} {quantity}: {e}");
        }
        assert_eq!(dump(&mut c, key), before, "{key} changed");
    }
    // And the other way round.
    cl(&mut c, "CL.THROTTLE g 15 30 60");
    let e = err_of(&mut c, &["RL.SLIDE", "g", "10", "1000"]);
    assert!(e.starts_with("WRONGTYPE"), "{e}");
}

#[test]
fn bad_arguments_are_errors_naming_the_argument_and_write_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    const MAX_BURST: &str = "ERR max_burst is out of range (must be 0 to 4294967294)";
    const COUNT: &str = "ERR count is out of range (must be 1 to 4294967295)";
    const PERIOD: &str = "ERR period is out of range (must be 1 to 1000000000)";
    const QUANTITY: &str = "ERR quantity is out of range (must be 0 to 4294967295)";
    let cases: &[(&[&str], &str)] = &[
        (&["-1", "30", "60"], MAX_BURST),
        (&["4294967295", "30", "60"], MAX_BURST),
        (&["18446744073709551616", "30", "60"], MAX_BURST),
        (&["15", "0", "60"], COUNT),
        (&["15", "-30", "60"], COUNT),
        (&["15", "4294967296", "60"], COUNT),
        (&["15", "30", "0"], PERIOD),
        (&["15", "30", "-60"], PERIOD),
        (&["15", "30", "1000000001"], PERIOD),
        (&["15", "30", "9223372036854775807"], PERIOD),
        (&["15", "30", "60", "-1"], QUANTITY),
        (&["15", "30", "60", "4294967296"], QUANTITY),
        (&["15", "30", "60", "99999999999999999999999"], QUANTITY),
        (&["1.5", "30", "60"], "ERR max_burst is not an integer"),
        (&["15", "thirty", "60"], "ERR count is not an integer"),
        (&["15", "30", "60s"], "ERR period is not an integer"),
        (&["15", "30", "60", "1e3"], "ERR quantity is not an integer"),
        (&["15", "30", "60", ""], "ERR quantity is not an integer"),
        (
            &["4294967294", "1", "1000000000"],
            "ERR max_burst is out of range: (max_burst + 1) * period / count exceeds 10^9 seconds",
        ),
    ];
    for (args, want) in cases {
        let mut words = vec!["CL.THROTTLE", "k"];
        words.extend_from_slice(args);
        assert_eq!(err_of(&mut c, &words), *want, "{words:?}");
    }
    for words in [&["CL.THROTTLE", "k", "15", "30"][..], &["CL.THROTTLE", "k", "15", "30", "60", "1", "1"]] {
        let e = err_of(&mut c, words);
        assert!(
            e.to_ascii_lowercase().starts_with("err wrong number of arguments for 'cl.throttle'"),
            "{words:?}: {e}"
        );
    }
    // Non-UTF-8 bytes are not integers either.
    let e = err_of(&mut c, &[b"CL.THROTTLE".as_slice(), b"k", b"15", b"\xff\xfe", b"60"]);
    assert_eq!(e, "ERR count is not an integer");
    assert!(!exists(&mut c, "k"), "an error wrote the key");
    assert!(s.alive());
}

#[test]
fn command_getkeys_and_info_declare_the_key() {
    let s = Server::start();
    let mut c = s.conn();
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("CL.THROTTLE")
        .arg("user:1")
        .arg(15)
        .arg(30)
        .arg(60)
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["user:1"]);
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("cl.throttle")
        .arg("{t}a")
        .arg(15)
        .arg(30)
        .arg(60)
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["{t}a"]);

    let Value::Array(info) = raw(&mut c, &["COMMAND", "INFO", "CL.THROTTLE"]).unwrap() else { panic!() };
    let Value::Array(fields) = &info[0] else { panic!("CL.THROTTLE is not a command: {info:?}") };
    assert_eq!(fields[1], Value::Int(-5), "arity");
    let flags: Vec<String> = redis::from_redis_value(&fields[2]).unwrap();
    assert_eq!(flags, ["write", "denyoom", "module", "fast"]);
    assert_eq!(&fields[3..6], &[Value::Int(1), Value::Int(1), Value::Int(1)], "first/last/step");
}

#[test]
fn resp3_clients_get_the_same_array() {
    let s = frozen_server(&[]);
    let mut c = s.conn_resp3();
    let v = raw(&mut c, &["CL.THROTTLE", "k", "15", "30", "60"]).unwrap();
    assert_eq!(v, Value::Array([0, 16, 15, -1, 2].map(Value::Int).to_vec()));
}

#[test]
fn writes_replicate_as_effects_to_a_replica_with_another_clock() {
    let opts = || ServerOptions { fake_clock: true, ..Default::default() };
    let master = Server::start_with(opts());
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let replica = start_replica(&master, opts());
    // The replica's clock runs an hour behind: replaying CL.THROTTLE there
    // (what redis-cell does) would compute another state.
    run_clock_from(replica.clock.as_ref().unwrap(), T0_MS - 3_600_000);
    let mut m = master.conn();
    // Two calls per key every 300 ms against 2 per second: a burst, then
    // about one in three allowed.
    let (mut writes, mut calls) = (0, 0);
    for i in 0..20 {
        at(&master, i * 300);
        for key in ["a", "b", "a", "b"] {
            let r = cl(&mut m, &format!("CL.THROTTLE {key} 4 2 1"));
            writes += u64::from(r[0] == 0);
            calls += 1;
        }
        cl(&mut m, "CL.THROTTLE a 4 2 1 0");
    }
    assert!(writes > 20 && writes < calls - 20, "{writes} of {calls} allowed");
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);
    let mut r = replica.conn();
    assert_same_state("replica vs master", &snapshot(&mut m), &snapshot(&mut r));
    assert_eq!(command_calls(&mut r, "rl.apply"), writes, "one RL.APPLY per allowed call");
    assert_eq!(command_calls(&mut r, "cl.throttle"), 0, "the command itself was replicated");
}
