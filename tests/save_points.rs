//! Every limiter write counts as a change to the dataset
//! (`rdb_changes_since_last_save`), so RDB save points fire for limiter
//! traffic alone, with no AOF and no replica to consume the effect, and a
//! `kill -9` after the save loses nothing.

mod common;

use std::time::Duration;

use common::limiter::{raw, rl};
use common::replication::{assert_same_state, info_u64, snapshot, wait_until};
use common::{Server, ServerOptions, T0_MS};

/// A standalone server as installed by default: RDB save points, no AOF.
fn saving_server() -> Server {
    let s = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: ["--save", "1 1", "--appendonly", "no"].iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    });
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    s
}

fn changes(s: &Server) -> u64 {
    info_u64(&mut s.conn(), "persistence", "rdb_changes_since_last_save")
}

/// Moves the clock past the save point's second and waits for the save.
fn wait_for_save(s: &Server) {
    let mut c = s.conn();
    let before = info_u64(&mut c, "persistence", "rdb_last_save_time");
    s.clock.as_ref().unwrap().advance_ms(2000);
    wait_until("the save point to fire", Duration::from_secs(20), || {
        info_u64(&mut c, "persistence", "rdb_last_save_time") > before
            && info_u64(&mut c, "persistence", "rdb_bgsave_in_progress") == 0
    });
    assert_eq!(changes(s), 0, "the save covered every change");
}

#[test]
fn every_kind_of_limiter_write_counts_as_a_change() {
    let s = saving_server();
    let mut c = s.conn();
    let lines = [
        "RL.GCRA g 5 3600000 COST 5",
        "RL.TOKENBUCKET t 10 1 1000 COST 3",
        "RL.SLIDE s 10 3600000 COST 4",
        "RL.ALL 2 a1 a2 GCRA 5 1000 SLIDE 5 1000",
    ];
    for (i, line) in lines.iter().enumerate() {
        let before = changes(&s);
        let words: Vec<&str> = line.split_whitespace().collect();
        raw(&mut c, &words).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(changes(&s) > before, "{line} did not count as a change ({i})");
    }
    let before = changes(&s);
    raw(&mut c, &["CL.THROTTLE", "ct", "5", "10", "60"]).expect("CL.THROTTLE");
    assert!(changes(&s) > before, "CL.THROTTLE did not count as a change");
    // Reads and denials are no change.
    let before = changes(&s);
    assert!(!rl(&mut c, "RL.GCRA g 5 3600000").allowed);
    rl(&mut c, "RL.GCRA g 5 3600000 COST 0");
    rl(&mut c, "RL.SLIDE s 10 3600000 COST 1 PEEK");
    assert_eq!(changes(&s), before, "a denial, COST 0 or PEEK counted as a change");
}

#[test]
fn a_repair_counts_as_a_change() {
    let s = saving_server();
    let mut c = s.conn();
    assert!(rl(&mut c, "RL.GCRA g 100 3600000 COST 100").allowed);
    assert!(rl(&mut c, "RL.SLIDE s 100 3600000 COST 100").allowed);
    wait_for_save(&s);
    // Tightened limits: the stored states lie beyond them and are stored as
    // drained by the first COST 0 call (a repair, a write).
    rl(&mut c, "RL.GCRA g 1 1000 COST 0");
    assert_eq!(changes(&s), 1, "a GCRA repair is a change");
    rl(&mut c, "RL.SLIDE s 5 3600000 COST 0");
    assert_eq!(changes(&s), 2, "a sliding-window repair is a change");
}

#[test]
fn limiter_writes_alone_fire_the_save_point_and_survive_kill_9() {
    let mut s = saving_server();
    let mut c = s.conn();
    for i in 0..20 {
        assert!(rl(&mut c, &format!("RL.GCRA user:{i} 5 3600000 COST 5")).allowed);
        assert!(rl(&mut c, &format!("RL.SLIDE slide:{i} 10 3600000 COST 3")).allowed);
        assert!(rl(&mut c, &format!("RL.TOKENBUCKET tb:{i} 10 1 60000 COST 2")).allowed);
    }
    assert!(changes(&s) >= 60, "60 writes, {} changes", changes(&s));
    wait_for_save(&s);
    let before = snapshot(&mut c);
    assert_eq!(before.len(), 60);
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_same_state("after kill -9 and the RDB load", &before, &snapshot(&mut c));
    assert!(!rl(&mut c, "RL.GCRA user:7 5 3600000").allowed, "the drained limit came back full");
}
