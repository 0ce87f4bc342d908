//! Invariant 5 across restarts: after `kill -9` and an AOF replay (with
//! `appendfsync always`), after an AOF rewrite (with and without an RDB
//! preamble), after SAVE and an RDB load, and across DEBUG RELOAD, every
//! limiter key holds exactly the state and absolute expiry it held before,
//! although the server's clock has moved on in between.

mod common;

use std::fs;

use common::limiter::{exists, rl};
use common::replication::{aof_file, assert_same_state, mixed_workload, rewrite_aof, snapshot, Snapshot, Workload};
use common::{frozen_server, Server};

const AOF_ALWAYS: [&str; 4] = ["--appendonly", "yes", "--appendfsync", "always"];

/// A mixed workload, plus one key that is full again (and so expires)
/// 100 ms later: it must be gone, not resurrected, after the clock moves on.
fn workload(s: &Server, prefix: &str) -> Workload {
    let mut c = s.conn();
    let w = mixed_workload(&mut c, s.clock.as_ref().unwrap(), prefix, 20, 4);
    assert!(w.writes > 0 && w.denied > 0 && w.reads > 0, "not a mixed workload: {w:?}");
    assert!(rl(&mut c, &format!("RL.GCRA {prefix}short 10 1000")).allowed);
    w
}

/// The state every live key holds, minus the short-lived one.
fn lasting_state(s: &Server, prefix: &str) -> Snapshot {
    let mut snap = snapshot(&mut s.conn());
    assert!(snap.remove(&format!("{prefix}short")).is_some(), "{prefix}short was never written");
    assert!(snap.len() > 50, "only {} keys", snap.len());
    snap
}

/// Moves the clock 2 s on, kills the server (SIGKILL) and starts it again.
fn kill_and_restart_later(s: &mut Server) {
    s.clock.as_ref().unwrap().advance_ms(2000);
    s.restart();
}

/// The server log says the data came from where the test put it.
fn assert_loaded_from(s: &Server, what: &str) {
    let log = fs::read_to_string(s.log_path()).unwrap_or_default();
    assert!(log.contains(what), "the log never says {what:?}:\n{}", s.log_tail());
}

fn assert_restored(s: &Server, what: &str, before: &Snapshot, prefix: &str) {
    let mut c = s.conn();
    assert!(!exists(&mut c, &format!("{prefix}short")), "{what}: a limiter that was full again came back");
    assert_same_state(what, before, &snapshot(&mut c));
}

#[test]
fn every_key_holds_the_same_state_after_kill_9_and_an_aof_replay() {
    let mut s = frozen_server(&AOF_ALWAYS);
    workload(&s, "aof:");
    let before = lasting_state(&s, "aof:");
    let aof = aof_file(&s, ".incr.aof");
    assert!(contains(&aof, b"RL.APPLY"), "the AOF holds no RL.APPLY");
    kill_and_restart_later(&mut s);
    assert_loaded_from(&s, "DB loaded from append only file");
    assert_restored(&s, "after an AOF replay", &before, "aof:");
    // Replaying appended nothing of ours (only the server's own DEL of the
    // short-lived key, which expired while the server was down).
    let after = aof_file(&s, ".incr.aof");
    assert!(after.starts_with(&aof), "the AOF was rewritten");
    assert!(!contains(&after[aof.len()..], b"RL.APPLY"), "replaying the AOF appended to it");
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn every_key_holds_the_same_state_after_an_aof_rewrite_and_a_restart() {
    for preamble in ["no", "yes"] {
        let prefix = format!("rw-{preamble}:");
        let mut s = frozen_server(&[&AOF_ALWAYS[..], &["--aof-use-rdb-preamble", preamble]].concat());
        let mut c = s.conn();
        mixed_workload(&mut c, s.clock.as_ref().unwrap(), &format!("{prefix}a"), 15, 3);
        rewrite_aof(&s);
        let base = aof_file(&s, ".base.");
        if preamble == "no" {
            // The module's rewrite callback wrote the keys as RL.APPLY, and
            // the server added their absolute expiry.
            assert!(contains(&base, b"RL.APPLY") && contains(&base, b"PEXPIREAT"), "rewritten AOF lacks RL.APPLY");
        } else {
            // "REDIS0010" on Redis 7.0; Valkey 9 writes RDB version 80 as
            // "VALKEY080".
            assert!(base.starts_with(b"REDIS") || base.starts_with(b"VALKEY"), "expected an RDB preamble");
        }
        // More writes after the rewrite go to the incremental file.
        workload(&s, &prefix);
        let before = lasting_state(&s, &prefix);
        drop(c);
        kill_and_restart_later(&mut s);
        assert_loaded_from(&s, "DB loaded from base file");
        assert_loaded_from(&s, "DB loaded from incr file");
        assert_restored(&s, &format!("after a rewrite (preamble {preamble}) and a replay"), &before, &prefix);
    }
}

#[test]
fn every_key_holds_the_same_state_after_save_and_an_rdb_load() {
    let mut s = frozen_server(&[]);
    workload(&s, "rdb:");
    let before = lasting_state(&s, "rdb:");
    let _: String = redis::cmd("SAVE").query(&mut s.conn()).expect("SAVE");
    assert!(s.dir().join("dump.rdb").is_file());
    kill_and_restart_later(&mut s);
    assert_loaded_from(&s, "DB loaded from disk");
    assert_restored(&s, "after an RDB load", &before, "rdb:");
}

#[test]
fn every_key_holds_the_same_state_across_debug_reload() {
    let s = frozen_server(&[]);
    workload(&s, "reload:");
    let before = lasting_state(&s, "reload:");
    s.clock.as_ref().unwrap().advance_ms(2000);
    let _: String = redis::cmd("DEBUG").arg("RELOAD").query(&mut s.conn()).expect("DEBUG RELOAD");
    assert_restored(&s, "after DEBUG RELOAD", &before, "reload:");
}

#[test]
fn a_replayed_limiter_goes_on_deciding_exactly_where_it_left_off() {
    let mut s = frozen_server(&AOF_ALWAYS);
    let mut c = s.conn();
    let lines = ["RL.GCRA g 10 60000 BURST 4", "RL.TOKENBUCKET t 4 1 15000", "RL.SLIDE s 4 60000"];
    for line in lines {
        for _ in 0..3 {
            assert!(rl(&mut c, line).allowed, "{line}");
        }
    }
    // What each limiter answers 2 s later, on a server that never stopped.
    s.clock.as_ref().unwrap().advance_ms(2000);
    let expected: Vec<_> = lines.iter().map(|l| rl(&mut c, &format!("{l} PEEK"))).collect();
    s.clock.as_ref().unwrap().advance_ms(-2000);
    drop(c);
    kill_and_restart_later(&mut s);
    assert_loaded_from(&s, "DB loaded from append only file");
    let mut c = s.conn();
    for (line, want) in lines.iter().zip(expected) {
        assert_eq!(rl(&mut c, line), want, "{line} after the replay");
    }
}
