//! Defects a hostile review found (issue 10), each as the contract states it:
//! integers as strict as Redis's, RESP3 map keys as Redis's own, a tightened
//! sliding-window limit read as drained, a window change that forgets a key,
//! and the ACL rule that works on every server.

mod common;

use common::limiter::{err_of, pttl, raw, rl};
use common::{frozen_server, Server, ServerOptions, T0_MS};
use redis::Value;

#[test]
fn integers_are_parsed_as_redis_parses_them() {
    let s = Server::start();
    let mut c = s.conn();
    let bad: &[&[&str]] = &[
        &["RL.GCRA", "ip", "007", "1000"],
        &["RL.GCRA", "ip", "10", "1000", "COST", "-0"],
        &["RL.GCRA", "ip", "+1", "1000"],
        &["RL.GCRA", "ip", " 1", "1000"],
        &["RL.GCRA", "ip", "1 ", "1000"],
        &["RL.SLIDE", "ip", "10", "01000"],
        &["RL.TOKENBUCKET", "ip", "10", "1", "1000", "COST", "00"],
        &["RL.ALL", "01", "ip", "GCRA", "10", "1000"],
        &["CL.THROTTLE", "ip", "015", "30", "60"],
        &["CL.THROTTLE", "ip", "15", "30", "60", "-0"],
    ];
    for words in bad {
        let e = err_of(&mut c, words);
        assert!(e.starts_with("ERR") && e.contains("not an integer"), "{words:?}: {e}");
    }
    let e = err_of(&mut c, &["RL.GCRA", "ip", "-5", "1000"]);
    assert!(e.contains("out of range"), "a negative number is an integer, out of range: {e}");
    assert!(rl(&mut c, "RL.GCRA ip 10 1000 COST 0").allowed, "0 is an integer");
    let exists: i64 = redis::cmd("EXISTS").arg("ip").query(&mut c).unwrap();
    assert_eq!(exists, 0, "nothing was written");
}

#[test]
fn resp3_map_keys_are_bulk_strings_a_script_can_read_by_name() {
    let s = Server::start();
    let mut c = s.conn();
    let script = "redis.setresp(3)
        local r = redis.call('RL.GCRA', KEYS[1], 10, 1000, 'COST', 3)
        local a = redis.call('RL.ALL', 1, KEYS[2], 'SLIDE', 5, 1000)
        return {r['map']['remaining'], r['map']['limit'], a['map']['retry_after_ms'],
                a['map']['limits'][1]['map']['remaining']}";
    let v: Vec<i64> = redis::cmd("EVAL").arg(script).arg(2).arg("g").arg("s").query(&mut c).expect("EVAL");
    assert_eq!(v, [7, 10, 0, 4]);
    // Over RESP3 itself, the keys arrive as bulk strings.
    let mut c3 = s.conn_resp3();
    let v: Value = redis::cmd("RL.SLIDE").arg("s2").arg(5).arg(1000).query(&mut c3).expect("RL.SLIDE");
    let Value::Map(pairs) = v else { panic!("not a map: {v:?}") };
    for (k, _) in &pairs {
        assert!(matches!(k, Value::BulkString(_)), "key {k:?} is not a bulk string");
    }
}

#[test]
fn a_tightened_sliding_window_limit_reads_as_drained() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(rl(&mut c, "RL.SLIDE s 10 3600000 COST 10").allowed);
    let drained = rl(&mut c, "RL.SLIDE d 5 3600000 COST 5");
    let r = rl(&mut c, "RL.SLIDE s 5 3600000 COST 0");
    assert!(r.allowed, "COST 0 is a status query: {r:?}");
    assert_eq!((r.limit, r.remaining, r.reset_after_ms), (5, 0, drained.reset_after_ms));
    assert_eq!(pttl(&mut c, "s"), r.reset_after_ms, "the capped count is stored with its expiry");
    // A COST 0 spec never denies RL.ALL.
    let v: Vec<Value> = redis::cmd("RL.ALL")
        .arg(1)
        .arg("s")
        .arg("SLIDE")
        .arg(5)
        .arg(3600000)
        .arg("COST")
        .arg(0)
        .query(&mut c)
        .expect("RL.ALL");
    assert_eq!(v[0], Value::Int(1), "{v:?}");
    // COST 0 answers allowed on every kind, drained or not.
    assert!(rl(&mut c, "RL.GCRA g 10 1000 COST 10").allowed);
    assert!(rl(&mut c, "RL.GCRA g 5 1000 COST 0").allowed);
    assert!(rl(&mut c, "RL.TOKENBUCKET t 10 1 1000 COST 10").allowed);
    assert!(rl(&mut c, "RL.TOKENBUCKET t 5 1 1000 COST 0").allowed);
}

#[test]
fn a_window_change_that_maps_every_count_away_deletes_the_key() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    for (i, line) in ["RL.SLIDE k{i} 5 10000 COST 5", "RL.ALL 1 k{i} SLIDE 5 10000 COST 5"].iter().enumerate() {
        clock.freeze_at_ms(T0_MS);
        let key = format!("k{i}");
        let line = line.replace("{i}", &i.to_string());
        assert!(rl_any(&mut c, &line), "{line}");
        clock.advance_ms(15_000);
        // PEEK never repairs.
        let r = rl(&mut c, &format!("RL.SLIDE {key} 5 1000 PEEK COST 0"));
        assert_eq!(r.reset_after_ms, 0);
        assert!(pttl(&mut c, &key) > 0, "a PEEK deleted {key}");
        let r = if i == 0 {
            rl(&mut c, &format!("RL.SLIDE {key} 5 1000 COST 0"))
        } else {
            let v: Vec<Value> = redis::cmd("RL.ALL")
                .arg(1)
                .arg(&key)
                .arg("SLIDE")
                .arg(5)
                .arg(1000)
                .arg("COST")
                .arg(0)
                .query(&mut c)
                .unwrap();
            assert_eq!(v[0], Value::Int(1));
            let fields: Vec<i64> = redis::from_redis_value(&v[2]).unwrap();
            common::limiter::Reply::new(fields[0] == 1, fields[1], fields[2], fields[3], fields[4])
        };
        assert_eq!((r.remaining, r.reset_after_ms), (5, 0), "{key}");
        // Invariant 3: PTTL equals reset_after_ms (-2: no key at all).
        assert_eq!(pttl(&mut c, &key), -2, "{key} kept the old windows' expiry");
    }
}

/// Runs a limiter command whose RESP2 reply starts with `allowed`.
fn rl_any(c: &mut redis::Connection, line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    match raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}")) {
        Value::Array(v) => v[0] == Value::Int(1),
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn the_acl_rule_that_denies_limiter_commands_by_name_works_on_every_server() {
    let s = Server::start();
    let mut admin = s.conn();
    let rule = [
        "ACL",
        "SETUSER",
        "u",
        "on",
        "nopass",
        "~*",
        "+@all",
        "-rl.gcra",
        "-rl.tokenbucket",
        "-rl.slide",
        "-rl.all",
        "-cl.throttle",
    ];
    raw(&mut admin, &rule).expect("ACL SETUSER");
    let mut u = s.conn();
    raw(&mut u, &["AUTH", "u", "x"]).expect("AUTH");
    for words in [
        &["RL.GCRA", "victim", "5", "1000"][..],
        &["RL.TOKENBUCKET", "victim", "5", "1", "1000"],
        &["RL.SLIDE", "victim", "5", "1000"],
        &["RL.ALL", "1", "victim", "GCRA", "5", "1000"],
        &["CL.THROTTLE", "victim", "5", "10", "60"],
    ] {
        let e = err_of(&mut u, words);
        assert!(e.starts_with("NOPERM"), "{words:?}: {e}");
    }
    raw(&mut u, &["SET", "other", "1"]).expect("the rest of +@all still works");
    // Where the server gives module commands categories (Redis 7.2+, Valkey), -@write denies them too.
    let v = s.version();
    if v.is_valkey() || v.at_least(7, 2, 0) {
        raw(&mut admin, &["ACL", "SETUSER", "w", "on", "nopass", "~*", "+@all", "-@write"]).expect("ACL SETUSER");
        let mut w = s.conn();
        raw(&mut w, &["AUTH", "w", "x"]).expect("AUTH");
        let e = err_of(&mut w, &["RL.GCRA", "victim", "5", "1000"]);
        assert!(e.starts_with("NOPERM"), "-@write: {e}");
    }
}

#[test]
fn a_forgotten_key_is_deleted_on_replicas_too_with_a_del_event() {
    use common::replication::{start_replica, wait_for_replica_offset};
    let master = frozen_server(&[]);
    let clock = master.clock.as_ref().unwrap();
    let mut m = master.conn();
    assert!(rl(&mut m, "RL.SLIDE k 5 10000 COST 5").allowed);
    // The replica's clock is its own (the real one, before T0): the key
    // stays there until something deletes it.
    let replica = start_replica(&master, ServerOptions::default());
    let mut r = replica.conn();
    let exists = |c: &mut redis::Connection| -> i64 { redis::cmd("EXISTS").arg("k").query(c).unwrap() };
    assert_eq!(exists(&mut r), 1);

    redis::cmd("CONFIG").arg("SET").arg("notify-keyspace-events").arg("Kg").query::<()>(&mut m).unwrap();
    let mut sub = master.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.subscribe("__keyspace@0__:k").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();

    clock.advance_ms(15_000);
    let r0 = rl(&mut m, "RL.SLIDE k 5 1000 COST 0");
    assert_eq!((r0.remaining, r0.reset_after_ms), (5, 0));
    assert_eq!(exists(&mut m), 0);
    let msg = pubsub.get_message().expect("a keyspace event");
    assert_eq!(msg.get_payload::<String>().unwrap(), "del");
    wait_for_replica_offset(&mut m);
    assert_eq!(exists(&mut r), 0, "the deletion reached the replica");
}
