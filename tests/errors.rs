//! Bad input for every argument of every command: each gets an ERR that
//! names the problem, the key is untouched and the server stays up.

mod common;

use common::limiter::{dump, err_of, exists, rl};
use common::Server;

/// One bad call: the words after the key, and a text the error must contain.
struct Case {
    args: Vec<Vec<u8>>,
    /// Texts the error must all contain.
    expect: Vec<&'static str>,
}

fn case(line: &str, expect: &'static str) -> Case {
    Case {
        args: line.split(' ').filter(|w| !w.is_empty()).map(|w| w.as_bytes().to_vec()).collect(),
        expect: vec![expect],
    }
}

/// The bad values every integer argument is tried with, and what the error says.
fn bad_integers(min_one: bool) -> Vec<(Vec<u8>, &'static str)> {
    let mut v: Vec<(Vec<u8>, &'static str)> = vec![
        (b"10.5".to_vec(), "is not an integer"),
        (b"abc".to_vec(), "is not an integer"),
        (b"1e3".to_vec(), "is not an integer"),
        (b"".to_vec(), "is not an integer"),
        (b" 1".to_vec(), "is not an integer"),
        (b"+1".to_vec(), "is not an integer"),
        (b"0x10".to_vec(), "is not an integer"),
        (b"\xff\xfe\x00\x01".to_vec(), "is not an integer"),
        (b"-1".to_vec(), "is out of range"),
        (b"-9223372036854775809".to_vec(), "is out of range"),
        (b"99999999999999999999999999999".to_vec(), "is out of range"),
        (b"18446744073709551616".to_vec(), "is out of range"),
    ];
    if min_one {
        v.push((b"0".to_vec(), "is out of range"));
    }
    v
}

/// A positional argument: its name, a valid value and the first value past its range.
type Positional = (&'static str, &'static str, &'static str);

/// Every command's positional arguments (after the key).
const COMMANDS: &[(&str, &[Positional])] = &[
    ("RL.GCRA", &[("limit", "10", "4294967296"), ("period_ms", "1000", "1000000000001")]),
    (
        "RL.TOKENBUCKET",
        &[
            ("capacity", "10", "4294967296"),
            ("refill_tokens", "5", "4294967296"),
            ("refill_period_ms", "1000", "1000000000001"),
        ],
    ),
    ("RL.SLIDE", &[("limit", "10", "4294967296"), ("window_ms", "1000", "1000000000001")]),
];

fn cases_for(cmd: &str, positional: &'static [Positional]) -> Vec<Case> {
    let valid: Vec<&str> = positional.iter().map(|p| p.1).collect();
    let mut cases = Vec::new();
    // Each positional argument: every bad value, and one past its range.
    for (i, (name, _, too_big)) in positional.iter().enumerate() {
        let with = |value: &[u8]| -> Vec<Vec<u8>> {
            let mut args: Vec<Vec<u8>> = valid.iter().map(|v| v.as_bytes().to_vec()).collect();
            args[i] = value.to_vec();
            args
        };
        for (value, what) in bad_integers(true) {
            cases.push(Case { args: with(&value), expect: vec![name, what] });
        }
        cases.push(Case { args: with(too_big.as_bytes()), expect: vec![name, "is out of range"] });
    }
    let base = valid.join(" ");
    // COST: every bad value but 0, which is valid.
    for (value, what) in bad_integers(false) {
        let mut args: Vec<Vec<u8>> = valid.iter().map(|v| v.as_bytes().to_vec()).collect();
        args.push(b"COST".to_vec());
        args.push(value);
        cases.push(Case { args, expect: vec!["COST", what] });
    }
    cases.extend([
        case(&format!("{base} COST 4294967296"), "COST is out of range"),
        case(&format!("{base} COST"), "COST needs a value"),
        case(&format!("{base} COST 1 COST 1"), "COST given more than once"),
        case(&format!("{base} cost 1 COST 2"), "COST given more than once"),
        case(&format!("{base} PEEK PEEK"), "PEEK given more than once"),
        case(&format!("{base} peek Peek"), "PEEK given more than once"),
        case(&format!("{base} FOO"), "unknown option 'FOO'"),
        case(&format!("{base} PEEK 1"), "unknown option '1'"),
        case(&format!("{base} COST 1 2"), "unknown option '2'"),
    ]);
    if cmd == "RL.GCRA" {
        for (value, what) in bad_integers(true) {
            let mut args: Vec<Vec<u8>> = valid.iter().map(|v| v.as_bytes().to_vec()).collect();
            args.push(b"BURST".to_vec());
            args.push(value);
            cases.push(Case { args, expect: vec!["BURST", what] });
        }
        cases.extend([
            case(&format!("{base} BURST"), "BURST needs a value"),
            case(&format!("{base} BURST 4294967296"), "BURST is out of range"),
            case(&format!("{base} BURST 2 burst 3"), "BURST given more than once"),
            // 4294967295 units of 10^12 ms each: far past the 10^12 ms refill bound.
            case("1 1000000000000 BURST 4294967295", "BURST is out of range"),
        ]);
    } else {
        cases.push(case(&format!("{base} BURST 5"), "unknown option 'BURST'"));
    }
    if cmd == "RL.TOKENBUCKET" {
        cases.push(case("4294967295 1 1000000000000", "capacity is out of range"));
    }
    // Too few arguments.
    for n in 0..positional.len() {
        let args = valid[..n].iter().map(|v| v.as_bytes().to_vec()).collect();
        cases.push(Case { args, expect: vec!["wrong number of arguments"] });
    }
    cases
}

#[test]
fn every_bad_argument_gets_an_err_naming_it_and_writes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    let mut checked = 0;
    for (cmd, positional) in COMMANDS {
        let valid: Vec<&str> = positional.iter().map(|p| p.1).collect();
        // An existing key, partly consumed, and a missing one.
        rl(&mut c, &format!("{cmd} existing:{cmd} {} COST 3", valid.join(" ")));
        let existing = format!("existing:{cmd}");
        let missing = format!("missing:{cmd}");
        for case in cases_for(cmd, positional) {
            for key in [&existing, &missing] {
                let before = dump(&mut c, key);
                let mut words = vec![cmd.as_bytes().to_vec(), key.as_bytes().to_vec()];
                words.extend(case.args.iter().cloned());
                let e = err_of(&mut c, &words);
                let shown = String::from_utf8_lossy(&words.join(&b' ')).into_owned();
                assert!(e.starts_with("ERR "), "{shown}: {e}");
                for text in &case.expect {
                    assert!(e.contains(text), "{shown}: {e:?} does not say {text:?}");
                }
                assert!(!e.contains('\u{fffd}') && e.is_ascii(), "{shown}: error echoes raw bytes: {e:?}");
                assert_eq!(before, dump(&mut c, key), "{shown} changed the key");
                checked += 1;
            }
        }
        assert!(!exists(&mut c, &missing), "{cmd}: an error created a key");
    }
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    assert!(s.alive());
    assert!(checked > 200, "only {checked} cases ran");
}

#[test]
fn no_arguments_at_all_is_wrong_arity() {
    let s = Server::start();
    let mut c = s.conn();
    for (cmd, _) in COMMANDS {
        let e = err_of(&mut c, &[*cmd]);
        assert!(e.contains("wrong number of arguments"), "{cmd}: {e}");
    }
}

#[test]
fn binary_key_names_are_fine() {
    let s = Server::start();
    let mut c = s.conn();
    let key: &[u8] = b"\x00\xff\r\n key";
    let v: Vec<i64> = redis::cmd("RL.GCRA").arg(key).arg(2).arg(1000).query(&mut c).unwrap();
    assert_eq!(v[..3], [1, 2, 1]);
    let n: i64 = redis::cmd("EXISTS").arg(key).query(&mut c).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn extreme_valid_arguments_work() {
    let s = Server::start();
    let mut c = s.conn();
    for line in [
        "RL.GCRA x1 4294967295 1 COST 4294967295",
        "RL.GCRA x2 1 1000000000000 COST 1",
        "RL.GCRA x3 1000 1000000000000 BURST 1000",
        "RL.GCRA x8 4294967295 1000000000000 BURST 4294967295",
        "RL.TOKENBUCKET x4 4294967295 4294967295 1 COST 4294967295",
        "RL.TOKENBUCKET x5 1000 1000 1000000000000",
        "RL.SLIDE x6 4294967295 1000000000000 COST 4294967295",
        "RL.SLIDE x7 1 1",
    ] {
        let r = rl(&mut c, line);
        assert!(r.allowed, "{line}: {r:?}");
        assert!(r.reset_after_ms > 0, "{line}: {r:?}");
    }
    assert!(s.alive());
}

/// Errors that help (issue 29): a key of another limiter kind says which
/// kind it holds; a duration with a unit says durations are whole ms (and
/// what it is in ms); every command, and RL.ALL names the spec.
#[test]
fn errors_say_what_the_key_holds_and_that_durations_are_milliseconds() {
    let s = Server::start();
    let mut c = s.conn();
    rl(&mut c, "RL.LOG log 5 1000");
    let _: i64 = redis::cmd("RL.RELEASE").arg("log").arg("x").query(&mut c).map_or(0, |v: i64| v);
    for (words, want) in [
        (&["RL.GCRA", "log", "10", "1000"][..], "WRONGTYPE the key holds an RL.LOG limiter, not an RL.GCRA one"),
        (&["RL.ACQUIRE", "log", "10", "1000"], "WRONGTYPE the key holds an RL.LOG limiter, not an RL.ACQUIRE one"),
        (&["RL.RENEW", "log", "x", "1000"], "WRONGTYPE the key holds an RL.LOG limiter, not an RL.ACQUIRE one"),
        (
            &["RL.ALL", "1", "log", "QUOTA", "5", "DAY"],
            "WRONGTYPE the key holds an RL.LOG limiter, not an RL.QUOTA one",
        ),
        (
            &["RL.GCRA", "k", "10", "1s"],
            "ERR period_ms is not an integer: durations are whole milliseconds (that is 1000)",
        ),
        (
            &["RL.TOKENBUCKET", "k", "10", "1", "1m"],
            "ERR refill_period_ms is not an integer: durations are whole milliseconds (that is 60000)",
        ),
        (
            &["RL.ACQUIRE", "k", "1", "30s"],
            "ERR lease_ms is not an integer: durations are whole milliseconds (that is 30000)",
        ),
        (
            &["RL.ALL", "1", "k", "SLIDE", "5", "2h"],
            "ERR window_ms is not an integer: durations are whole milliseconds (that is 7200000) (spec 1)",
        ),
        (&["RL.GCRA", "k", "10", "1.5s"], "ERR period_ms is not an integer"),
    ] {
        assert_eq!(err_of(&mut c, words), want, "{words:?}");
    }
    assert!(!exists(&mut c, "k"));
}
