//! RL.ALL on one server with a frozen fake clock: several limits as one
//! decision. All or nothing; each spec with its own cost; the combined
//! retry; PEEK; WRONGTYPE and argument errors that write nothing; the RESP3
//! map; repairs; a property test against deciding each spec alone in the
//! pure core; and invariant 1 (atomicity) under 16 concurrent clients.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use redis::{Connection, Value};

use common::limiter::{allowed_by_concurrent_clients, dump, err_of, exists, pttl, raw, rl, Reply};
use common::{advance, frozen_server, T0_MS};
use redis_rl::core::{
    Decision, Gcra, GcraState, Outcome, SlidingWindow, SlidingWindowState, TokenBucket, TokenBucketState,
};

/// RL.ALL's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AllReply {
    allowed: bool,
    retry_after_ms: i64,
    limits: Vec<Reply>,
}

fn to_reply(v: &[i64]) -> Reply {
    assert_eq!(v.len(), 5, "per-key reply {v:?}");
    Reply::new(v[0] == 1, v[1], v[2], v[3], v[4])
}

fn try_all(con: &mut Connection, line: &str) -> redis::RedisResult<AllReply> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Value::Array(items) = raw(con, &words)? else { panic!("{line}: not an array") };
    assert!(items.len() >= 3, "{line}: {items:?}");
    let allowed: i64 = redis::from_redis_value(&items[0])?;
    assert!(allowed == 0 || allowed == 1, "{line}: allowed {allowed}");
    let limits = items[2..].iter().map(|v| redis::from_redis_value::<Vec<i64>>(v).map(|v| to_reply(&v)));
    Ok(AllReply {
        allowed: allowed == 1,
        retry_after_ms: redis::from_redis_value(&items[1])?,
        limits: limits.collect::<redis::RedisResult<_>>()?,
    })
}

fn all(con: &mut Connection, line: &str) -> AllReply {
    try_all(con, line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// The server's count of writes: unchanged means nothing was written.
fn changes(con: &mut Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("persistence").query(con).expect("INFO");
    let line = info.lines().find_map(|l| l.strip_prefix("rdb_changes_since_last_save:")).expect("changes");
    line.trim().parse().expect("a count")
}

/// Everything a call could have changed: each key's DUMP and PTTL, and
/// the server's count of writes.
#[derive(Debug, PartialEq)]
struct Snapshot {
    keys: Vec<(Option<Vec<u8>>, i64)>,
    changes: u64,
}

fn snapshot(con: &mut Connection, keys: &[&str]) -> Snapshot {
    Snapshot { keys: keys.iter().map(|k| (dump(con, k), pttl(con, k))).collect(), changes: changes(con) }
}

/// One limit of a call: its key, single command and arguments after the key.
type Limit<'a> = (&'a str, &'a str, &'a str);

/// RL.ALL over `limits` (a spec is the single command's name without
/// "RL." and its arguments), with a trailing `extra` (e.g. "PEEK").
fn all_line(limits: &[Limit<'_>], extra: &str) -> String {
    let keys: Vec<&str> = limits.iter().map(|l| l.0).collect();
    let specs: Vec<String> = limits.iter().map(|(_, cmd, args)| format!("{} {args}", &cmd[3..])).collect();
    format!("RL.ALL {} {} {} {extra}", limits.len(), keys.join(" "), specs.join(" "))
}

/// Runs RL.ALL over `limits` and checks it against the single commands on
/// twin keys (`<key>:twin`, kept in the same state): each per-key reply is
/// what a PEEK of that limit alone answers, and the call consumes exactly
/// when every one allows, leaving each key as the single command leaves
/// its twin. Returns the reply.
fn all_matches_singles(con: &mut Connection, limits: &[Limit<'_>]) -> AllReply {
    let singles: Vec<Reply> =
        limits.iter().map(|(key, cmd, args)| rl(con, &format!("{cmd} {key}:twin {args} PEEK"))).collect();
    let got = all(con, &all_line(limits, ""));
    let allowed = singles.iter().all(|r| r.allowed);
    let retry = if allowed {
        0
    } else if singles.iter().any(|r| !r.allowed && r.retry_after_ms < 0) {
        -1
    } else {
        singles.iter().filter(|r| !r.allowed).map(|r| r.retry_after_ms).max().unwrap_or(0)
    };
    assert_eq!(got, AllReply { allowed, retry_after_ms: retry, limits: singles }, "{limits:?}");
    if allowed {
        for (key, cmd, args) in limits {
            rl(con, &format!("{cmd} {key}:twin {args}"));
        }
    }
    for (key, _, _) in limits {
        let twin = format!("{key}:twin");
        assert_eq!(dump(con, key), dump(con, &twin), "{key}: state differs from its twin");
        assert_eq!(pttl(con, key), pttl(con, &twin), "{key}: TTL differs from its twin");
    }
    got
}

#[test]
fn an_allowed_call_consumes_from_every_key_as_each_command_would() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let limits = [
        ("u", "RL.GCRA", "10 1000 BURST 6 COST 2"),
        ("t", "RL.TOKENBUCKET", "5 2 1000 COST 3"),
        ("g", "RL.SLIDE", "5 1000"),
    ];
    let first = all_matches_singles(&mut c, &limits);
    assert!(first.allowed);
    assert_eq!(first.limits.iter().map(|r| r.remaining).collect::<Vec<_>>(), [4, 2, 4]);
    // The bucket has 2 of the 3 tokens: denied as a whole, nothing consumed.
    let second = all_matches_singles(&mut c, &limits);
    assert!(!second.allowed);
    assert_eq!(second.limits.iter().map(|r| r.allowed).collect::<Vec<_>>(), [true, false, true]);
    advance(&s, second.retry_after_ms);
    assert!(all_matches_singles(&mut c, &limits).allowed);
}

#[test]
fn a_denial_by_any_spec_writes_nothing_to_any_key() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA a 10 1000 COST 3");
    rl(&mut c, "RL.TOKENBUCKET b 2 1 1000 COST 2");
    let keys = ["a", "b", "c"];
    let line = "RL.ALL 3 a b c GCRA 10 1000 TOKENBUCKET 2 1 1000 SLIDE 5 1000";
    let before = snapshot(&mut c, &keys);

    // WATCHing the keys sees no modification either.
    let mut watcher = s.conn();
    let _: () = redis::cmd("WATCH").arg(&keys).query(&mut watcher).unwrap();
    let r = all(&mut c, line);
    assert!(!r.allowed && r.retry_after_ms == 1000, "{r:?}");
    assert_eq!(snapshot(&mut c, &keys), before);
    assert!(!exists(&mut c, "c"));
    let exec: Option<Vec<String>> = redis::pipe().atomic().cmd("PING").query(&mut watcher).unwrap();
    assert!(exec.is_some(), "a denied RL.ALL signalled a WATCHed key");

    // Denied by the first, the middle or the last spec alike.
    for line in [
        "RL.ALL 3 b a c TOKENBUCKET 2 1 1000 GCRA 10 1000 SLIDE 5 1000",
        "RL.ALL 3 a c b GCRA 10 1000 SLIDE 5 1000 TOKENBUCKET 2 1 1000",
        "RL.ALL 2 a c GCRA 10 1000 COST 8 SLIDE 5 1000",
        "RL.ALL 2 c a SLIDE 5 1000 GCRA 10 1000 COST 11",
    ] {
        assert!(!all(&mut c, line).allowed, "{line}");
        assert_eq!(snapshot(&mut c, &keys), before, "{line}");
    }
}

#[test]
fn each_spec_takes_its_own_cost() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let r = all(&mut c, "RL.ALL 3 a b c GCRA 5 1000 COST 0 SLIDE 5 1000 COST 5 TOKENBUCKET 5 5 1000 COST 2");
    assert!(r.allowed);
    assert_eq!(r.limits.iter().map(|r| r.remaining).collect::<Vec<_>>(), [5, 0, 3]);
    // COST 0 only reads: the key is not even created.
    assert!(!exists(&mut c, "a"));
    assert_eq!(rl(&mut c, "RL.SLIDE b 5 1000 COST 0").remaining, 0);
    assert_eq!(rl(&mut c, "RL.TOKENBUCKET c 5 5 1000 COST 0").remaining, 3);
    // Keywords are case-insensitive, as everywhere.
    assert!(all(&mut c, "rl.all 2 a c gcra 5 1000 burst 5 cost 5 tokenbucket 5 5 1000 cost 3 peek").allowed);
}

#[test]
fn retry_after_is_the_longest_wait_of_the_denying_limits_and_exact() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA a 10 1000 BURST 1");
    rl(&mut c, "RL.TOKENBUCKET b 1 1 500");
    let line = "RL.ALL 3 a b c GCRA 10 1000 BURST 1 TOKENBUCKET 1 1 500 SLIDE 5 1000";
    let r = all(&mut c, line);
    assert_eq!(
        (r.allowed, r.retry_after_ms, r.limits.iter().map(|l| l.retry_after_ms).collect::<Vec<_>>()),
        (false, 500, vec![100, 500, 0])
    );
    advance(&s, 499);
    assert!(!all(&mut c, line).allowed, "allowed 1 ms before retry_after_ms");
    advance(&s, 1);
    assert!(all(&mut c, line).allowed, "denied at retry_after_ms");
}

#[test]
fn retry_after_is_never_when_any_denying_limit_can_never_allow() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.TOKENBUCKET b 1 1 500");
    let r = all(&mut c, "RL.ALL 2 a b GCRA 10 1000 COST 11 TOKENBUCKET 1 1 500");
    assert_eq!((r.allowed, r.retry_after_ms), (false, -1));
    assert_eq!((r.limits[0].retry_after_ms, r.limits[1].retry_after_ms), (-1, 500));
    // An allowed limit does not hide one that can never allow.
    let r = all(&mut c, "RL.ALL 2 a c SLIDE 10 1000 COST 11 SLIDE 10 1000");
    assert_eq!((r.allowed, r.retry_after_ms), (false, -1));
}

#[test]
fn peek_answers_what_the_call_would_and_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA a 3 1000 COST 2");
    let keys = ["a", "b"];
    let line = "RL.ALL 2 a b GCRA 3 1000 SLIDE 2 1000";
    for round in 0..3 {
        // Allowed, then denied (a is drained after the first real call).
        let before = snapshot(&mut c, &keys);
        let peeked = all(&mut c, &format!("{line} PEEK"));
        assert_eq!(snapshot(&mut c, &keys), before, "round {round}: PEEK wrote");
        assert_eq!(all(&mut c, line), peeked, "round {round}: PEEK answered differently");
    }
}

#[test]
fn a_key_of_another_type_or_algorithm_is_wrongtype_and_nothing_is_written() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let _: () = redis::cmd("SET").arg("str").arg("x").query(&mut c).unwrap();
    rl(&mut c, "RL.GCRA g 5 1000");
    rl(&mut c, "RL.SLIDE w 5 1000");
    let keys = ["g", "w", "new", "str"];
    let before = snapshot(&mut c, &keys);
    let other_type = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for (line, want) in [
        ("RL.ALL 2 str new SLIDE 5 1000 SLIDE 5 1000", other_type),
        ("RL.ALL 2 new str SLIDE 5 1000 SLIDE 5 1000", other_type),
        // Another limiter kind: the error says which.
        ("RL.ALL 2 g new SLIDE 5 1000 GCRA 5 1000", "WRONGTYPE the key holds an RL.GCRA limiter, not an RL.SLIDE one"),
        (
            "RL.ALL 3 new w g GCRA 5 1000 SLIDE 5 1000 TOKENBUCKET 5 5 1000",
            "WRONGTYPE the key holds an RL.GCRA limiter, not an RL.TOKENBUCKET one",
        ),
        (
            "RL.ALL 2 g w GCRA 5 1000 GCRA 5 1000 PEEK",
            "WRONGTYPE the key holds an RL.SLIDE limiter, not an RL.GCRA one",
        ),
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(err_of(&mut c, &words), want, "{line}");
        assert_eq!(snapshot(&mut c, &keys), before, "{line}");
    }
}

#[test]
fn a_key_may_appear_only_once() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (line, want) in [
        ("RL.ALL 2 k k GCRA 5 1000 GCRA 5 1000", "ERR key 2 is the same as key 1: each key may appear only once"),
        (
            "RL.ALL 3 a b a GCRA 5 1000 SLIDE 5 1000 GCRA 5 1000",
            "ERR key 3 is the same as key 1: each key may appear only once",
        ),
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(err_of(&mut c, &words), want);
    }
    assert!(!exists(&mut c, "k") && !exists(&mut c, "a"));
}

/// SPEC: the word after COST, REFUND, BURST or TZ is always that option's
/// value, even when it spells a keyword; so a spec answers what the single
/// command answers, with the spec's number.
#[test]
fn an_option_value_that_spells_a_keyword_is_still_the_options_value() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let err = |c: &mut Connection, line: &str| err_of(c, &line.split(' ').collect::<Vec<_>>());
    let cases = [
        ("RL.GCRA k 10 1000 COST GCRA", "RL.ALL 1 k GCRA 10 1000 COST GCRA"),
        ("RL.GCRA k 10 1000 COST PEEK", "RL.ALL 1 k GCRA 10 1000 COST PEEK"),
        ("RL.SLIDE k 10 1000 REFUND SLIDE", "RL.ALL 1 k SLIDE 10 1000 REFUND SLIDE"),
        ("RL.GCRA k 10 1000 BURST QUOTA", "RL.ALL 1 k GCRA 10 1000 BURST QUOTA"),
        ("RL.QUOTA k 10 DAY TZ GCRA", "RL.ALL 1 k QUOTA 10 DAY TZ GCRA"),
        ("RL.TOKENBUCKET k 10 1 1000 COST TOKENBUCKET", "RL.ALL 1 k TOKENBUCKET 10 1 1000 COST TOKENBUCKET"),
    ];
    for (single, spec) in cases {
        let want = format!("{} (spec 1)", err(&mut c, single));
        assert_eq!(err(&mut c, spec), want, "{spec}");
    }
    assert_eq!(err(&mut c, "RL.ALL 1 k GCRA 10 1000 COST GCRA"), "ERR COST is not an integer (spec 1)");
    // The value is taken whichever spec it is in, and the specs after it
    // are not shifted.
    assert_eq!(
        err(&mut c, "RL.ALL 2 a b GCRA 10 1000 COST 1 SLIDE 1 1000 COST SLIDE"),
        "ERR COST is not an integer (spec 2)"
    );
    assert_eq!(
        err(&mut c, "RL.ALL 2 a b GCRA 10 1000 BURST GCRA SLIDE 1 1000"),
        "ERR BURST is not an integer (spec 1)"
    );
    assert!(!exists(&mut c, "k") && !exists(&mut c, "a") && !exists(&mut c, "b"));
}

#[test]
fn bad_arguments_get_an_error_naming_the_problem_and_write_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA a 5 1000");
    let keys = ["a", "b"];
    let before = snapshot(&mut c, &keys);
    let cases: &[(&str, &str)] = &[
        ("0 a SLIDE 1 1", "ERR numkeys is out of range (must be 1 to 16)"),
        ("-1 a SLIDE 1 1", "ERR numkeys is out of range (must be 1 to 16)"),
        ("17 a SLIDE 1 1", "ERR numkeys is out of range (must be 1 to 16)"),
        ("99999999999999999999 a SLIDE 1 1", "ERR numkeys is out of range (must be 1 to 16)"),
        ("x a SLIDE 1 1", "ERR numkeys is not an integer"),
        ("1.5 a SLIDE 1 1", "ERR numkeys is not an integer"),
        ("5 a b c d", "ERR numkeys is greater than the number of arguments after it"),
        ("2 a b SLIDE 1 1", "ERR syntax error: one spec per key is needed (numkeys is 2, found 1 specs)"),
        ("2 a b SLIDE 1 1 PEEK", "ERR syntax error: one spec per key is needed (numkeys is 2, found 1 specs)"),
        ("1 a SLIDE 1 1 SLIDE 1 1", "ERR syntax error: one spec per key is needed (numkeys is 1, found more specs)"),
        (
            "1 a FOO 1 1",
            "ERR syntax error: unknown limiter 'FOO' (expected GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY) (spec 1)",
        ),
        (
            "1 a 5 1 1",
            "ERR syntax error: unknown limiter '5' (expected GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY) (spec 1)",
        ),
        ("1 a GCRA 1 SLIDE", "ERR syntax error: GCRA needs period_ms (spec 1)"),
        ("1 a TOKENBUCKET 1 1 PEEK", "ERR syntax error: TOKENBUCKET needs refill_period_ms (spec 1)"),
        ("1 a SLIDE 1 1 BURST 2", "ERR syntax error: unknown option 'BURST' (spec 1)"),
        ("1 a SLIDE 1 1 FOO", "ERR syntax error: unknown option 'FOO' (spec 1)"),
        ("1 a GCRA 5 1000 BURST 2 BURST 3", "ERR syntax error: BURST given more than once (spec 1)"),
        ("1 a SLIDE 1 1 COST 1 COST 1", "ERR syntax error: COST given more than once (spec 1)"),
        ("1 a SLIDE 1 1 COST", "ERR syntax error: COST needs a value (spec 1)"),
        // The word after COST is its value, even PEEK.
        ("1 a SLIDE 1 1 COST PEEK", "ERR COST is not an integer (spec 1)"),
        ("1 a SLIDE 1 1 COST -1", "ERR COST is out of range (must be 0 to 4294967295) (spec 1)"),
        ("2 a b GCRA 5 1000 SLIDE 0 1000", "ERR limit is out of range (must be 1 to 4294967295) (spec 2)"),
        ("2 a b GCRA 5 1000 SLIDE 5 10.5", "ERR window_ms is not an integer (spec 2)"),
        ("1 a TOKENBUCKET 1 1 abc", "ERR refill_period_ms is not an integer (spec 1)"),
        ("1 a TOKENBUCKET 1 4294967296 1000", "ERR refill_tokens is out of range (must be 1 to 4294967295) (spec 1)"),
        (
            "1 a GCRA 1 1000000000000 BURST 4294967295",
            "ERR BURST is out of range: BURST * period_ms / limit exceeds 10^12 ms (spec 1)",
        ),
        ("1 a SLIDE 1 1 PEEK PEEK", "ERR syntax error: PEEK must be the last argument"),
        ("2 a b SLIDE 1 1 PEEK SLIDE 1 1", "ERR syntax error: PEEK must be the last argument"),
        ("1 a SLIDE 1 1 PEEK COST 1", "ERR syntax error: PEEK must be the last argument"),
        ("1 a", "ERR wrong number of arguments for 'RL.ALL' command"),
    ];
    for (args, want) in cases {
        let line = format!("RL.ALL {args}");
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(&err_of(&mut c, &words), want, "{line}");
        assert_eq!(snapshot(&mut c, &keys), before, "{line}");
    }
    // Client bytes that are not printable are never echoed.
    let e = err_of(&mut c, &[b"RL.ALL".as_slice(), b"1", b"a", b"\xff\r\n", b"1", b"1"]);
    assert_eq!(
        e,
        "ERR syntax error: unknown limiter (expected GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY) (spec 1)"
    );
    assert_eq!(snapshot(&mut c, &keys), before);
}

#[test]
fn up_to_sixteen_keys_in_one_call() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let keys: Vec<String> = (0..16).map(|i| format!("k{i}")).collect();
    let line = format!("RL.ALL 16 {} {}", keys.join(" "), "SLIDE 1 1000 ".repeat(16));
    let r = all(&mut c, &line);
    assert!(r.allowed && r.limits.len() == 16);
    assert!(keys.iter().all(|k| exists(&mut c, k)));
    let r = all(&mut c, &line);
    assert!(!r.allowed && r.limits.iter().all(|l| !l.allowed));
}

#[test]
fn resp3_reply_is_a_map_of_allowed_retry_and_limits() {
    let s = frozen_server(&[]);
    let mut c = s.conn_resp3();
    let line = "RL.ALL 2 a b GCRA 3 1000 SLIDE 3 1000 COST 2";
    let words: Vec<&str> = line.split(' ').collect();
    let text = |v: &Value| redis::from_redis_value::<String>(v).unwrap();
    for allowed in [true, false] {
        let Value::Map(fields) = raw(&mut c, &words).unwrap() else { panic!("not a map") };
        let names: Vec<String> = fields.iter().map(|(k, _)| text(k)).collect();
        assert_eq!(names, ["allowed", "retry_after_ms", "limits"]);
        assert_eq!(fields[0].1, Value::Boolean(allowed));
        let Value::Int(retry) = fields[1].1 else { panic!("retry_after_ms: {:?}", fields[1].1) };
        assert_eq!(retry > 0, !allowed, "retry_after_ms {retry}");
        let Value::Array(limits) = &fields[2].1 else { panic!("limits: {:?}", fields[2].1) };
        assert_eq!(limits.len(), 2);
        for limit in limits {
            let Value::Map(per_key) = limit else { panic!("per-key reply: {limit:?}") };
            let names: Vec<String> = per_key.iter().map(|(k, _)| text(k)).collect();
            assert_eq!(names, ["allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms"]);
            assert_eq!(per_key[1].1, Value::Int(3));
        }
    }
}

/// A backward clock jump leaves `j` stored too far ahead: it reads as
/// drained, and the first call that is not a PEEK stores that drained
/// state (a repair), as a single command would, even when the call as a
/// whole is denied, so `j` is full one refill later instead of when the
/// clock catches up. Nothing is consumed from any key.
#[test]
fn repairs_are_stored_even_when_the_call_is_denied_but_never_under_peek() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for key in ["j", "j:twin"] {
        assert!(rl(&mut c, &format!("RL.GCRA {key} 5 1000 COST 5")).allowed);
    }
    advance(&s, -3_600_000);
    assert!(rl(&mut c, "RL.TOKENBUCKET d 1 1 1000000").allowed);
    let line = "RL.ALL 2 j d GCRA 5 1000 TOKENBUCKET 1 1 1000000";

    let before = snapshot(&mut c, &["j", "d"]);
    let peeked = all(&mut c, &format!("{line} PEEK"));
    assert_eq!(snapshot(&mut c, &["j", "d"]), before, "PEEK repaired");

    let r = all(&mut c, line);
    assert_eq!(r, peeked);
    assert!(!r.allowed && !r.limits[0].allowed && !r.limits[1].allowed);
    // j holds exactly what a status query stores on its twin, and expires
    // one refill from now.
    let status = rl(&mut c, "RL.GCRA j:twin 5 1000 COST 0");
    assert_eq!(status.remaining, 0);
    assert_eq!(dump(&mut c, "j"), dump(&mut c, "j:twin"));
    assert_eq!(pttl(&mut c, "j"), r.limits[0].reset_after_ms);
    assert_eq!(r.limits[0].reset_after_ms, 1000);
    // d was denied and is untouched.
    assert_eq!((dump(&mut c, "d"), pttl(&mut c, "d")), before.keys[1].clone());
    // Once d refills, the call is allowed and consumes from both.
    advance(&s, r.retry_after_ms);
    let r = all(&mut c, line);
    assert!(r.allowed, "{r:?}");
}

/// A key that its own spec allows, in a call that another key denies,
/// stores only its repair: exactly what a status query (COST 0) stores on
/// an identical twin. Here a GCRA key asked for COST 0 and a lease set with
/// room, both left too far ahead by a backward clock jump.
#[test]
fn a_key_allowed_alone_in_a_denied_call_stores_only_its_repair() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for key in ["j", "j:twin"] {
        assert!(rl(&mut c, &format!("RL.GCRA {key} 5 1000 COST 5")).allowed);
    }
    for key in ["l", "l:twin"] {
        let _: Value = redis::cmd("RL.ACQUIRE").arg(key).arg(5).arg(60_000).arg("ID").arg("a").query(&mut c).unwrap();
    }
    assert!(rl(&mut c, "RL.GCRA d 1 1000000").allowed);
    advance(&s, -3_600_000);
    // A CONCURRENCY part answers a sixth field (the lease, nil here): read
    // each part's `allowed` from the raw reply.
    let line = "RL.ALL 3 j l d GCRA 5 1000 COST 0 CONCURRENCY 5 60000 GCRA 1 1000000";
    let r: Vec<Value> = redis::cmd("RL.ALL").arg(line.split(' ').skip(1).collect::<Vec<_>>()).query(&mut c).unwrap();
    let allowed = |v: &Value| match v {
        Value::Array(fields) => fields[0] == Value::Int(1),
        other => panic!("{other:?}"),
    };
    assert_eq!(r[0], Value::Int(0), "{r:?}");
    assert!(allowed(&r[2]) && allowed(&r[3]) && !allowed(&r[4]), "{r:?}");
    assert_eq!(rl(&mut c, "RL.GCRA j:twin 5 1000 COST 0").remaining, 0);
    let _: Value = redis::cmd("RL.ACQUIRE").arg("l:twin").arg(5).arg(60_000).arg("COST").arg(0).query(&mut c).unwrap();
    for (key, twin) in [("j", "j:twin"), ("l", "l:twin")] {
        assert_eq!(dump(&mut c, key), dump(&mut c, twin), "{key}");
        assert_eq!(pttl(&mut c, key), pttl(&mut c, twin), "{key}");
    }
    // The repairs made the keys full one refill or one lease from now.
    assert_eq!(pttl(&mut c, "j"), 1000);
    assert_eq!(pttl(&mut c, "l"), 60_000);
}

#[test]
fn a_slide_log_or_quota_key_allowed_alone_in_a_denied_call_stores_what_a_status_query_does() {
    // Each kind's `repairs` tells steady keys (nothing to store) from those
    // a status query repairs, without deciding twice: both end as their
    // twins, which got that status query, do.
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let same = [("s", "SLIDE 5 1000"), ("g", "LOG 5 1000"), ("q", "QUOTA 5 HOUR")];
    // Another window or period: read under the new one (a repair) with room.
    let changed = [("s", "SLIDE 5 2000"), ("g", "LOG 5 2000"), ("q", "QUOTA 5 DAY")];
    let fill = |c: &mut redis::Connection, prefix: &str| {
        for (key, spec) in same {
            let (kind, params) = spec.split_once(' ').unwrap();
            for k in [format!("{prefix}{key}"), format!("{prefix}{key}:twin")] {
                let line = format!("RL.{kind} {k} {params} COST 2");
                assert!(rl(c, &line).allowed, "{line}");
            }
        }
    };
    // A log's entries stamped after now read as made now (a repair), with
    // room; a sliding window or quota ahead reads as drained, so it denies.
    fill(&mut c, "jumped:");
    advance(&s, -3_600_000);
    fill(&mut c, "steady:");
    fill(&mut c, "changed:");
    assert!(rl(&mut c, "RL.GCRA d 1 1000000").allowed);
    for (prefix, specs) in [("jumped:", same), ("steady:", same), ("changed:", changed)] {
        let keys: Vec<String> = specs.iter().map(|(k, _)| format!("{prefix}{k}")).collect();
        let line = format!(
            "RL.ALL 4 {} d {} GCRA 1 1000000",
            keys.join(" "),
            specs.iter().map(|(_, spec)| *spec).collect::<Vec<_>>().join(" ")
        );
        let r: Vec<Value> =
            redis::cmd("RL.ALL").arg(line.split(' ').skip(1).collect::<Vec<_>>()).query(&mut c).unwrap();
        assert_eq!(r[0], Value::Int(0), "{line}: {r:?}");
        for (key, spec) in specs {
            let (kind, params) = spec.split_once(' ').unwrap();
            let twin = format!("{prefix}{key}:twin");
            let _: Value = redis::cmd(&format!("RL.{kind}"))
                .arg(&twin)
                .arg(params.split(' ').collect::<Vec<_>>())
                .arg("COST")
                .arg(0)
                .query(&mut c)
                .unwrap();
            let key = format!("{prefix}{key}");
            assert_eq!(dump(&mut c, &key), dump(&mut c, &twin), "{key}");
            assert_eq!(pttl(&mut c, &key), pttl(&mut c, &twin), "{key}");
        }
    }
    // The changed keys now follow their new windows.
    assert_eq!(pttl(&mut c, "changed:s"), 4000);
    assert_eq!(pttl(&mut c, "changed:g"), 2000);
    assert!(pttl(&mut c, "changed:q") > 3_600_000);
}

// ---------------------------------------------------------------------------
// Against the pure core: each spec decided alone, combined by hand.
// ---------------------------------------------------------------------------

/// A key of the model: the state the core stored and when the key expires
/// (ms since the epoch). The expiry matters: it was set by the parameters
/// of the last write, and a key read later with other parameters (a longer
/// window) is gone, as on the server.
type Stored<S> = Option<(S, u64)>;

/// The model of the three keys.
#[derive(Debug, Clone, Copy, Default)]
struct Model {
    gcra: Stored<GcraState>,
    tb: Stored<TokenBucketState>,
    slide: Stored<SlidingWindowState>,
}

/// One spec of a generated call: which key (0 GCRA, 1 token bucket,
/// 2 sliding window), a size parameter, a period and a cost.
#[derive(Debug, Clone, Copy)]
struct GenSpec {
    key: usize,
    size: u64,
    period_ms: u64,
    cost: u64,
}

#[derive(Debug, Clone)]
struct GenCall {
    advance_ms: u64,
    specs: Vec<GenSpec>,
    peek: bool,
}

fn gen_call() -> impl Strategy<Value = GenCall> {
    let spec = |key: usize| {
        // Small sizes and a few periods, so that limits are hit, and changed
        // parameters (which can tighten a limit and force a repair) are common.
        (1u64..=4, prop::sample::select(vec![100u64, 250, 1000]), 0u64..=5)
            .prop_map(move |(size, period_ms, cost)| GenSpec { key, size, period_ms, cost })
    };
    // A non-empty subset of the three keys, in any order.
    let order = prop::sample::subsequence(vec![0usize, 1, 2], 1..=3).prop_shuffle();
    let specs = (spec(0), spec(1), spec(2), order)
        .prop_map(|(a, b, c, order)| order.into_iter().map(|k| [a, b, c][k]).collect::<Vec<_>>());
    (prop::sample::select(vec![0u64, 0, 1, 37, 100, 333, 1000]), specs, prop::bool::weighted(0.2))
        .prop_map(|(advance_ms, specs, peek)| GenCall { advance_ms, specs, peek })
}

/// Decides one spec alone in the core and returns its decision; in the
/// `Consume` and `Repair` phases also updates the key's state as the whole
/// call leaves it.
fn decide(model: &mut Model, spec: &GenSpec, now_us: u64, phase: Phase) -> Decision {
    fn step<S: Copy>(
        key: &mut Stored<S>,
        check: impl Fn(Option<S>, u64) -> Outcome<S>,
        // A state the call deletes instead of storing (a sliding window's
        // counts that a window change maps away).
        forgets: impl Fn(&S) -> bool,
        now_ms: u64,
        cost: u64,
        phase: Phase,
    ) -> Decision {
        // Redis expires a key once now > its expiry.
        let state = key.filter(|&(_, expire_at_ms)| now_ms <= expire_at_ms).map(|(state, _)| state);
        let outcome = check(state, cost);
        let write = match phase {
            Phase::Decide => None,
            Phase::Consume => outcome.write,
            // Denied as a whole: only a repair, what a COST 0 call stores.
            Phase::Repair => check(state, 0).write,
        };
        match (write, state) {
            (Some(w), _) => *key = Some((w.state, w.expire_at.0)),
            (None, Some(s)) if !matches!(phase, Phase::Decide) && forgets(&s) => *key = None,
            _ => {}
        }
        outcome.decision
    }
    let (now_ms, cost) = (now_us / 1000, spec.cost);
    match spec.key {
        0 => {
            let g = Gcra::new(spec.size, spec.period_ms, spec.size).expect("valid");
            step(&mut model.gcra, |s, cost| g.check(s, now_us * 1000, cost), |_| false, now_ms, cost, phase)
        }
        1 => {
            let t = TokenBucket::new(spec.size, 1, spec.period_ms).expect("valid");
            step(&mut model.tb, |s, cost| t.check(s, now_us * 1000, cost), |_| false, now_ms, cost, phase)
        }
        _ => {
            let w = SlidingWindow::new(spec.size, spec.period_ms);
            step(&mut model.slide, |s, cost| w.check(s, now_us, cost), |s| w.forgets(s, now_us), now_ms, cost, phase)
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Decide,
    Consume,
    Repair,
}

fn spec_words(key_prefix: &str, spec: &GenSpec) -> (String, String) {
    let key = format!("{key_prefix}:{}", spec.key);
    let words = match spec.key {
        0 => format!("GCRA {} {} COST {}", spec.size, spec.period_ms, spec.cost),
        1 => format!("TOKENBUCKET {} 1 {} COST {}", spec.size, spec.period_ms, spec.cost),
        _ => format!("SLIDE {} {} COST {}", spec.size, spec.period_ms, spec.cost),
    };
    (key, words)
}

#[test]
fn every_call_matches_each_spec_decided_alone_in_the_core() {
    let s = frozen_server(&[]);
    let clock = s.clock.as_ref().unwrap();
    // The runner takes an `Fn`: the connection is borrowed per call.
    let con = std::cell::RefCell::new(s.conn());
    static CASE: AtomicU64 = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config { cases: 96, failure_persistence: None, ..Config::default() });
    let result = runner.run(&prop::collection::vec(gen_call(), 1..16), |calls| {
        // Fresh keys per case (shrinking re-runs cases), on a clock that
        // starts anywhere in a second.
        let case = CASE.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("p{case}");
        let mut now_ms = T0_MS + case * 337 % 1000;
        let mut model = Model::default();
        for (n, call) in calls.iter().enumerate() {
            now_ms += call.advance_ms;
            clock.freeze_at_ms(now_ms);
            let now_us = now_ms * 1000;
            let decisions: Vec<Decision> =
                call.specs.iter().map(|spec| decide(&mut model, spec, now_us, Phase::Decide)).collect();
            let allowed = decisions.iter().all(|d| d.allowed);
            let denying = decisions.iter().filter(|d| !d.allowed);
            let retry = if allowed {
                0
            } else if denying.clone().any(|d| d.retry_after_ms < 0) {
                -1
            } else {
                denying.map(|d| d.retry_after_ms).max().unwrap_or(0)
            };
            if !call.peek {
                let phase = if allowed { Phase::Consume } else { Phase::Repair };
                for spec in &call.specs {
                    decide(&mut model, spec, now_us, phase);
                }
            }

            let (keys, specs): (Vec<String>, Vec<String>) = call.specs.iter().map(|sp| spec_words(&prefix, sp)).unzip();
            let line = format!(
                "RL.ALL {} {} {}{}",
                keys.len(),
                keys.join(" "),
                specs.join(" "),
                if call.peek { " PEEK" } else { "" }
            );
            let got = try_all(&mut con.borrow_mut(), &line).map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
            let want = AllReply {
                allowed,
                retry_after_ms: retry,
                limits: decisions
                    .iter()
                    .map(|d| {
                        Reply::new(
                            d.allowed,
                            d.limit as i64,
                            d.remaining as i64,
                            d.retry_after_ms,
                            d.reset_after_ms as i64,
                        )
                    })
                    .collect(),
            };
            prop_assert_eq!(got, want, "call {} at t0+{} ms: {}", n, now_ms - T0_MS, line);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------
// Invariant 1 for RL.ALL
// ---------------------------------------------------------------------------

#[test]
fn sixteen_clients_get_exactly_the_tightest_limit_every_time() {
    const CLIENTS: usize = 16;
    const LIMIT: usize = 40;
    const CALLS: usize = 2 * LIMIT / CLIENTS + 5;
    let s = frozen_server(&[]);
    let url = s.url();
    for round in 0..5 {
        // The GCRA is the tightest; the others have room to spare, so every
        // denial comes from it, and whatever it admits the others must too.
        let keys = [format!("hot:{round}:g"), format!("hot:{round}:t"), format!("hot:{round}:s")];
        let line = format!(
            "RL.ALL 3 {} {} {} GCRA {LIMIT} 3600000 TOKENBUCKET {} 1 3600000 SLIDE {} 3600000",
            keys[0],
            keys[1],
            keys[2],
            2 * LIMIT,
            3 * LIMIT
        );
        let call = move |c: &mut Connection| try_all(c, &line).unwrap().allowed;
        let allowed = allowed_by_concurrent_clients(&url, CLIENTS, CALLS, call);
        assert_eq!(allowed, LIMIT, "round {round}");
        let mut c = s.conn();
        let remaining: Vec<i64> = [
            format!("RL.GCRA {} {LIMIT} 3600000 COST 0", keys[0]),
            format!("RL.TOKENBUCKET {} {} 1 3600000 COST 0", keys[1], 2 * LIMIT),
            format!("RL.SLIDE {} {} 3600000 COST 0", keys[2], 3 * LIMIT),
        ]
        .iter()
        .map(|l| rl(&mut c, l).remaining)
        .collect();
        let want = [0, LIMIT as i64, 2 * LIMIT as i64];
        assert_eq!(remaining, want, "round {round}: every key consumed exactly the admitted calls");
    }
}
