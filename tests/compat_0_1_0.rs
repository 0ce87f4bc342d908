//! Keys written by release 0.1.0 (times in µs, RDB encoding version 0,
//! RL.APPLY payloads tagged `G` / `T`) keep working: the fixtures under
//! tests/fixtures/v0.1.0 (see its README) load from an RDB file, from DUMP
//! payloads and from an AOF with the same answers and the same expiry as
//! 0.1.0 gave. This file passes against 0.1.0's module too.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::limiter::{pttl, rl, Reply};
use common::replication::pexpiretime;
use common::{freeze, frozen_server, Server, T0_MS};

/// When the fixtures are read: inside every key's window.
const AT_MS: u64 = T0_MS + 500;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v0.1.0")
}

/// Every key: (key, the call that reads it without consuming, its reply at
/// AT_MS, its absolute expiry).
fn expected() -> Vec<(&'static str, &'static str, Reply, i64)> {
    let at = |ms: i64| T0_MS as i64 + ms;
    vec![
        ("g:third", "RL.GCRA g:third 3 1000 COST 0", Reply::new(true, 3, 2, 0, 167), at(667)),
        ("t:third", "RL.TOKENBUCKET t:third 100 3 1000 COST 0", Reply::new(true, 100, 51, 0, 16_167), at(16_667)),
        ("s:one", "RL.SLIDE s:one 5 60000 COST 0", Reply::new(true, 5, 3, 0, 119_500), at(120_000)),
        ("g:burst", "RL.GCRA g:burst 10 60000 BURST 5 COST 0", Reply::new(true, 5, 3, 0, 11_500), at(12_000)),
        ("t:slow", "RL.TOKENBUCKET t:slow 5 1 12000 COST 0", Reply::new(true, 5, 3, 0, 23_500), at(24_000)),
        ("c:cell", "RL.GCRA c:cell 30 60000 BURST 16 COST 0", Reply::new(true, 16, 12, 0, 7_500), at(8_000)),
        ("s:two", "RL.SLIDE s:two 10 1000 COST 0", Reply::new(true, 10, 3, 0, 1_500), at(2_000)),
    ]
}

/// Consuming calls at AT_MS after the reads, and what they answer.
fn then() -> Vec<(&'static str, Reply)> {
    vec![
        ("RL.GCRA g:third 3 1000 COST 2", Reply::new(true, 3, 0, 0, 834)),
        ("RL.GCRA g:third 3 1000", Reply::new(false, 3, 0, 167, 834)),
        ("RL.TOKENBUCKET t:third 100 3 1000 COST 52", Reply::new(false, 100, 51, 167, 16_167)),
        ("RL.GCRA g:burst 10 60000 BURST 5 COST 3", Reply::new(true, 5, 0, 0, 29_500)),
        ("CL.THROTTLE c:cell 15 30 60 13", Reply::new(false, 16, 12, 2_000, 7_500)),
        ("RL.TOKENBUCKET t:slow 5 1 12000 COST 3", Reply::new(true, 5, 0, 0, 59_500)),
    ]
}

fn check(s: &Server, how: &str) {
    let mut c = s.conn();
    for (key, read, reply, expiry) in expected() {
        assert_eq!(rl(&mut c, read), reply, "{how}: {read}");
        assert_eq!(pexpiretime(&mut c, key), expiry, "{how}: expiry of {key}");
        assert_eq!(pttl(&mut c, key), expiry - AT_MS as i64, "{how}: PTTL of {key}");
    }
    for (line, reply) in then() {
        if let Some(rest) = line.strip_prefix("CL.THROTTLE ") {
            // redis-cell's reply: limited, limit, remaining, retry s, reset s.
            let got: Vec<i64> =
                redis::cmd("CL.THROTTLE").arg(rest.split(' ').collect::<Vec<_>>()).query(&mut c).unwrap();
            let want = vec![
                i64::from(!reply.allowed),
                reply.limit,
                reply.remaining,
                if reply.allowed { -1 } else { (reply.retry_after_ms + 999) / 1000 },
                (reply.reset_after_ms + 999) / 1000,
            ];
            assert_eq!(got, want, "{how}: {line}");
        } else {
            assert_eq!(rl(&mut c, line), reply, "{how}: {line}");
        }
    }
}

/// [`frozen_server`], its clock moved on to `AT_MS` before anything runs.
fn frozen(extra: &[&str]) -> Server {
    let s = frozen_server(extra);
    freeze(&s, AT_MS);
    s
}

#[test]
fn an_rdb_file_written_by_0_1_0_loads_with_the_same_answers_and_expiry() {
    let mut s = frozen(&[]);
    fs::copy(fixtures().join("dump.rdb"), s.dir().join("dump.rdb")).unwrap();
    s.restart();
    check(&s, "RDB");
}

#[test]
fn dump_payloads_of_0_1_0_restore_with_the_same_answers_and_expiry() {
    let s = frozen(&[]);
    let mut c = s.conn();
    let hex = fs::read_to_string(fixtures().join("dump.hex")).unwrap();
    for line in hex.lines() {
        let (key, payload) = line.split_once(' ').unwrap();
        let bytes: Vec<u8> =
            (0..payload.len()).step_by(2).map(|i| u8::from_str_radix(&payload[i..i + 2], 16).unwrap()).collect();
        let expiry = expected().iter().find(|e| e.0 == key).unwrap().3;
        let _: String = redis::cmd("RESTORE").arg(key).arg(expiry).arg(bytes).arg("ABSTTL").query(&mut c).unwrap();
    }
    check(&s, "RESTORE");
}

#[test]
fn an_aof_written_by_0_1_0_replays_with_the_same_answers_and_expiry() {
    let aof = ["--appendonly", "yes", "--appenddirname", "aof", "--aof-use-rdb-preamble", "no"];
    let mut s = frozen(&aof);
    let dir = s.dir().join("aof");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for f in fs::read_dir(fixtures().join("aof")).unwrap() {
        let f = f.unwrap();
        fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    s.restart();
    check(&s, "AOF");
}
