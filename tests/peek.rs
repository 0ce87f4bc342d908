//! `RL.PEEK kind key args...`: the read-only form of every kind. It answers
//! exactly what the kind's command with PEEK answers, never writes (not even
//! a repair), and, flagged `readonly`, works where every other RL command
//! is refused: on a read-only replica, in `EVAL_RO` and `no-writes`
//! scripts, for a user with read-only key permissions, and under OOM.

mod common;

use common::limiter::{all_commands, dump, err_of, pttl, raw, rl, try_rl, Reply};
use common::replication::{info_u64, start_replica, wait_for_replica_offset};
use common::{frozen_server, Server, ServerOptions, T0_MS};

/// `RL.PEEK <KEYWORD> key args` for the command line `RL.<KEYWORD> key args`.
fn peek_line(command: &str, key: &str, args: &str) -> String {
    format!("RL.PEEK {} {key} {args}", command.trim_start_matches("RL."))
}

/// Integer replies as an RL reply (RL.PEEK goes through a script here).
fn reply_of(v: redis::Value) -> Reply {
    let v: Vec<i64> = redis::from_redis_value(&v).unwrap();
    Reply::new(v[0] == 1, v[1], v[2], v[3], v[4])
}

#[test]
fn rl_peek_answers_what_the_command_with_peek_answers_and_writes_nothing() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    for (command, args) in all_commands(5, 1000) {
        let key = format!("k:{command}");
        for step in 0..8 {
            let before = (dump(&mut c, &key), pttl(&mut c, &key));
            for cost in ["0", "1", "3", "5", "6"] {
                let by_peek = rl(&mut c, &format!("{command} {key} {args} COST {cost} PEEK"));
                let by_rl_peek = rl(&mut c, &peek_line(command, &key, &format!("{args} COST {cost}")));
                assert_eq!(by_rl_peek, by_peek, "{command} step {step} COST {cost}");
            }
            assert_eq!((dump(&mut c, &key), pttl(&mut c, &key)), before, "{command} step {step}: RL.PEEK wrote");
            // Move on: consume two, let some time pass.
            rl(&mut c, &format!("{command} {key} {args} COST 2"));
            clock.advance_ms(97);
        }
    }
}

#[test]
fn rl_peek_never_repairs_a_state_left_ahead_by_a_backward_clock_jump() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    let mut c = s.conn();
    for (command, args) in all_commands(5, 1000) {
        let key = format!("k:{command}");
        clock.freeze_at_ms(T0_MS + 3_600_000);
        assert!(rl(&mut c, &format!("{command} {key} {args} COST 5")).allowed);
        clock.freeze_at_ms(T0_MS);
        let before = (dump(&mut c, &key), pttl(&mut c, &key));
        let repairs = info_u64(&mut c, "rl", "rl_repairs");
        let r = rl(&mut c, &peek_line(command, &key, &args));
        assert_eq!(r, rl(&mut c, &format!("{command} {key} {args} PEEK")), "{command}");
        assert!(!r.allowed && r.remaining == 0, "{command}: a state ahead reads as drained: {r:?}");
        assert_eq!((dump(&mut c, &key), pttl(&mut c, &key)), before, "{command}: RL.PEEK repaired");
        assert_eq!(info_u64(&mut c, "rl", "rl_repairs"), repairs, "{command}");
    }
}

#[test]
fn rl_peek_checks_its_arguments_as_the_command_does() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let e = err_of(&mut c, &["RL.PEEK", "LEAKY", "k", "1", "1"]);
    let kinds_first = "ERR syntax error: unknown limiter 'LEAKY' (expected GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or \
                       CONCURRENCY): RL.PEEK takes the kind first, as in RL.PEEK GCRA key limit period_ms";
    assert_eq!(e, kinds_first);
    // The kind forgotten: the keywords are named (it was only "wrong number
    // of arguments", the server's arity check answering first).
    for forgot in [&["RL.PEEK", "user", "10", "1000"][..], &["RL.PEEK", "user", "10"], &["RL.PEEK", "user"]] {
        assert_eq!(err_of(&mut c, forgot), kinds_first.replace("LEAKY", "user"), "{forgot:?}");
    }
    assert!(err_of(&mut c, &["RL.PEEK", "GCRA"]).contains("wrong number of arguments"));
    assert!(err_of(&mut c, &["RL.PEEK"]).contains("wrong number of arguments"));
    assert!(err_of(&mut c, &["RL.PEEK", "GCRA", "k", "1"]).contains("wrong number of arguments"));
    assert!(err_of(&mut c, &["RL.PEEK", "TOKENBUCKET", "k", "1", "1"]).contains("wrong number of arguments"));
    assert_eq!(err_of(&mut c, &["RL.PEEK", "GCRA", "k", "x", "1000"]), "ERR limit is not an integer");
    // PEEK is implied, so it is no option here; BURST belongs to GCRA only.
    assert_eq!(
        err_of(&mut c, &["RL.PEEK", "GCRA", "k", "1", "1000", "PEEK"]),
        "ERR syntax error: unknown option 'PEEK'"
    );
    assert_eq!(
        err_of(&mut c, &["RL.PEEK", "SLIDE", "k", "1", "1000", "BURST", "2"]),
        "ERR syntax error: unknown option 'BURST'"
    );
    assert!(rl(&mut c, "RL.PEEK gcra k 1 1000 BURST 2 COST 2").allowed);
    // Another kind's key, or another type, is WRONGTYPE; a missing key is full.
    rl(&mut c, "RL.GCRA g 10 1000");
    let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
    assert_eq!(
        err_of(&mut c, &["RL.PEEK", "SLIDE", "g", "10", "1000"]),
        "WRONGTYPE the key holds an RL.GCRA limiter, not an RL.SLIDE one"
    );
    assert_eq!(
        err_of(&mut c, &["RL.PEEK", "GCRA", "s", "10", "1000"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
    assert_eq!(rl(&mut c, "RL.PEEK SLIDE nokey 10 1000"), Reply::new(true, 10, 9, 0, 2000));
    let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(keys, 2, "RL.PEEK created a key");
}

#[test]
fn rl_peek_works_on_a_read_only_replica_where_the_commands_are_refused() {
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    replica.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let (mut m, mut r) = (master.conn(), replica.conn());
    for (command, args) in all_commands(5, 1000) {
        rl(&mut m, &format!("{command} k:{command} {args} COST 3"));
    }
    wait_for_replica_offset(&mut m);
    for (command, args) in all_commands(5, 1000) {
        let key = format!("k:{command}");
        let e = try_rl(&mut r, &format!("{command} {key} {args}")).expect_err(command);
        assert_eq!(e.code(), Some("READONLY"), "{command}: {e}");
        let on_replica = rl(&mut r, &peek_line(command, &key, &args));
        assert_eq!(on_replica, rl(&mut m, &format!("{command} {key} {args} PEEK")), "{command}");
        assert_eq!(on_replica.remaining, 1, "{command}: 5 - 3 consumed - 1 peeked");
    }
}

#[test]
fn rl_peek_works_in_read_only_scripts() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA k 10 1000 COST 4");
    let peek = "return redis.call('RL.PEEK', 'GCRA', KEYS[1], '10', '1000')";
    let consume = "return redis.call('RL.GCRA', KEYS[1], '10', '1000')";
    let want = rl(&mut c, "RL.GCRA k 10 1000 PEEK");

    assert_eq!(reply_of(raw(&mut c, &["EVAL_RO", peek, "1", "k"]).unwrap()), want);
    let e = err_of(&mut c, &["EVAL_RO", consume, "1", "k"]);
    assert!(e.contains("Write commands are not allowed from read-only scripts"), "{e}");

    let no_writes = |body: &str| format!("#!lua flags=no-writes\n{body}");
    assert_eq!(reply_of(raw(&mut c, &["EVAL", &no_writes(peek), "1", "k"]).unwrap()), want);
    let e = err_of(&mut c, &["EVAL", &no_writes(consume), "1", "k"]);
    assert!(e.contains("Write commands are not allowed from read-only scripts"), "{e}");
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 PEEK"), want, "nothing was consumed");
}

#[test]
fn rl_peek_works_for_a_user_with_read_only_key_permissions() {
    let s = frozen_server(&[]);
    let mut admin = s.conn();
    rl(&mut admin, "RL.SLIDE k 10 1000 COST 4");
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("reader")
        .arg("on")
        .arg(">secret")
        .arg("%R~*")
        .arg("+@all")
        .query(&mut admin)
        .unwrap();
    let mut c = s.conn();
    let _: () = redis::cmd("AUTH").arg("reader").arg("secret").query(&mut c).unwrap();
    assert_eq!(rl(&mut c, "RL.PEEK SLIDE k 10 1000"), rl(&mut admin, "RL.SLIDE k 10 1000 PEEK"));
    let e = try_rl(&mut c, "RL.SLIDE k 10 1000").expect_err("a write");
    assert_eq!(e.code(), Some("NOPERM"), "{e}");
}

#[test]
fn rl_peek_works_under_oom_where_the_commands_are_refused() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.TOKENBUCKET k 10 1 1000 COST 4");
    let _: i64 = redis::cmd("SETRANGE").arg("ballast").arg(16 << 20).arg("x").query(&mut c).unwrap();
    for (name, value) in [("maxmemory-policy", "noeviction"), ("maxmemory", "8mb")] {
        let _: () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(&mut c).unwrap();
    }
    let e = try_rl(&mut c, "RL.TOKENBUCKET k 10 1 1000").expect_err("over maxmemory");
    assert_eq!(e.code(), Some("OOM"), "{e}");
    let r = rl(&mut c, "RL.PEEK TOKENBUCKET k 10 1 1000");
    assert_eq!((r.allowed, r.remaining), (true, 5));
    assert_eq!(rl(&mut c, "RL.PEEK TOKENBUCKET new 10 1 1000"), Reply::new(true, 10, 9, 0, 1000));
}

#[test]
fn rl_peek_declares_its_key_read_only_and_itself_readonly() {
    let s = Server::start();
    let mut c = s.conn();
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("RL.PEEK")
        .arg("GCRA")
        .arg("k")
        .arg("1")
        .arg("1000")
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["k"]);
    let info = format!("{:?}", raw(&mut c, &["COMMAND", "INFO", "RL.PEEK"]).unwrap());
    assert!(info.contains("readonly") && !info.contains("write") && !info.contains("denyoom"), "{info}");
    assert!(info.contains("RO") && info.contains("access"), "the key spec: {info}");
}
