//! Effects are built only when something consumes them. The server drops a
//! propagated command when it has no AOF, no replica and no replication
//! backlog; the module decides that first and skips building `RL.APPLY`.
//! These tests show it never loses an effect that something needs: a
//! replica that attaches later, an AOF switched on at run time, a role
//! change.

mod common;

use common::limiter::rl;
use common::replication::{
    assert_same_state, info_u64, snapshot, start_replica, wait_for_aof_rewrite, wait_for_replica_offset, wait_for_sync,
};
use common::{frozen_server, Server, ServerOptions, T0_MS};

fn effects(c: &mut redis::Connection) -> u64 {
    info_u64(c, "rl", "rl_effects_propagated")
}

/// Writes on `n` keys of each algorithm, named with `prefix`.
fn writes(c: &mut redis::Connection, prefix: &str, n: usize) {
    for i in 0..n {
        rl(c, &format!("RL.GCRA {prefix}g{i} 10 600000 COST 3"));
        rl(c, &format!("RL.TOKENBUCKET {prefix}t{i} 10 1 60000 COST 2"));
        rl(c, &format!("RL.SLIDE {prefix}s{i} 10 600000 COST 4"));
    }
}

#[test]
fn a_lone_master_without_aof_builds_no_effects() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    writes(&mut c, "a", 10);
    assert_eq!(effects(&mut c), 0);
    assert_eq!(info_u64(&mut c, "replication", "master_repl_offset"), 0);
}

/// A deleting write (the last lease released, a refund that fills the
/// limiter) propagates nothing either when nothing consumes effects (it
/// called RedisModule_Replicate("DEL") and counted it as an effect), and
/// still counts as a change to the dataset, so RDB save points fire.
#[test]
fn deleting_writes_on_a_lone_master_propagate_nothing_and_still_count_as_changes() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let before = info_u64(&mut c, "persistence", "rdb_changes_since_last_save");
    for i in 0..5 {
        let v: redis::Value =
            redis::cmd("RL.ACQUIRE").arg(format!("l{i}")).arg(1).arg(60000).arg("ID").arg("x").query(&mut c).unwrap();
        assert!(matches!(&v, redis::Value::Array(f) if f[0] == redis::Value::Int(1)));
        let released: i64 = redis::cmd("RL.RELEASE").arg(format!("l{i}")).arg("x").query(&mut c).unwrap();
        assert_eq!(released, 1);
        rl(&mut c, &format!("RL.GCRA g{i} 10 60000 COST 3"));
        assert!(rl(&mut c, &format!("RL.GCRA g{i} 10 60000 REFUND 3")).allowed);
    }
    let exists: i64 = redis::cmd("EXISTS").arg(&["l0", "l4", "g0", "g4"][..]).query(&mut c).unwrap();
    assert_eq!(exists, 0, "the deleting writes deleted nothing");
    assert_eq!(effects(&mut c), 0);
    assert_eq!(info_u64(&mut c, "replication", "master_repl_offset"), 0);
    let after = info_u64(&mut c, "persistence", "rdb_changes_since_last_save");
    assert!(after >= before + 20, "the writes did not count as changes: {before} -> {after}");
}

#[test]
fn a_replica_that_attaches_after_unpropagated_writes_gets_them_and_every_later_one() {
    let master = frozen_server(&[]);
    let mut m = master.conn();
    writes(&mut m, "before", 20);
    assert_eq!(effects(&mut m), 0, "nothing consumed effects yet");

    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    replica.clock.as_ref().unwrap().set_offset_ms(5_000);
    let mut r = replica.conn();
    // The writes before the sync came with the snapshot.
    assert_same_state("after the sync", &snapshot(&mut m), &snapshot(&mut r));

    // Every write after it is propagated.
    writes(&mut m, "after", 20);
    writes(&mut m, "before", 20);
    assert_eq!(effects(&mut m), 120);
    wait_for_replica_offset(&mut m);
    assert_same_state("after more writes", &snapshot(&mut m), &snapshot(&mut r));

    // Still so after the replica leaves: the backlog would serve its return.
    drop(r);
    drop(replica);
    writes(&mut m, "gone", 5);
    assert_eq!(effects(&mut m), 135);
}

#[test]
fn an_aof_switched_on_at_run_time_holds_every_key_when_replayed() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    writes(&mut c, "before", 10);
    let _: () = redis::cmd("CONFIG").arg("SET").arg("appendonly").arg("yes").query(&mut c).unwrap();
    // The switch rewrites the AOF from the data set; wait until it is done.
    wait_for_aof_rewrite(&s);
    assert_eq!(info_u64(&mut c, "persistence", "aof_enabled"), 1);
    writes(&mut c, "after", 10);
    writes(&mut c, "before", 10);
    assert_eq!(effects(&mut c), 60);
    let expected = snapshot(&mut c);
    // Empty the data set and load it back from the AOF alone.
    let _: () = redis::cmd("DEBUG").arg("LOADAOF").query(&mut c).unwrap();
    assert_same_state("after an AOF replay", &expected, &snapshot(&mut c));
}

#[test]
fn a_master_that_was_a_replica_propagates_every_write() {
    // No sync delay: it is measured on the frozen clock and would never pass.
    let other = frozen_server(&["--repl-diskless-sync-delay", "0"]);
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // Replicate from another master, then become a master again: the
    // backlog kept from the replica days may serve former siblings.
    let _: () = redis::cmd("REPLICAOF").arg("127.0.0.1").arg(other.port).query(&mut c).unwrap();
    wait_for_sync(&other, &s);
    let _: () = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query(&mut c).unwrap();
    writes(&mut c, "x", 5);
    assert_eq!(effects(&mut c), 15);
}

#[test]
fn a_master_restarted_from_its_rdb_propagates_to_replicas_that_resume_with_a_partial_sync() {
    let mut master = frozen_server(&["--repl-diskless-sync-delay", "0"]);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    let mut m = master.conn();
    writes(&mut m, "before", 5);
    wait_for_replica_offset(&mut m);
    // The RDB keeps the replication id and offset: after the restart the
    // server has a backlog, and the replica resumes with a partial sync (no
    // fork), which is what the module must notice through the load.
    // Redis 8 (rdb-channel replication) reports the replica online as soon as
    // the RDB is delivered, before it has reaped the fork that sent it: SAVE
    // would find that "background save already in progress".
    common::replication::wait_until("the sync's fork to be reaped", std::time::Duration::from_secs(10), || {
        info_u64(&mut m, "persistence", "rdb_bgsave_in_progress") == 0
    });
    let _: () = redis::cmd("SAVE").query(&mut m).unwrap();
    drop(m);
    master.restart();
    let mut m = master.conn();
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS + 1000);
    assert_eq!(info_u64(&mut m, "replication", "repl_backlog_active"), 1, "the load restored no backlog");
    // Written at once, most likely before the replica is back: into the backlog.
    writes(&mut m, "after", 5);
    wait_for_sync(&master, &replica);
    writes(&mut m, "later", 5);
    wait_for_replica_offset(&mut m);
    let log = std::fs::read_to_string(master.log_path()).unwrap();
    assert!(log.contains("Partial resynchronization request") && log.contains("accepted"), "{}", master.log_tail());
    let mut r = replica.conn();
    assert_same_state("after the restart", &snapshot(&mut m), &snapshot(&mut r));
}

/// The `cmdstat_<name>` calls in the server's `INFO commandstats` (0 if the
/// command never ran there).
fn calls(c: &mut redis::Connection, command: &str) -> u64 {
    common::replication::command_calls(c, command)
}

/// A write that nothing consumes still counts as a change (RDB save points),
/// through a propagation call the server drops at once. Here a replica asks
/// for a full sync and waits out a diskless sync delay: the master already
/// has a replication backlog, but has not forked yet, so the module still
/// builds no effect. The writes of that moment reach the replica through the
/// snapshot, and the replica never runs a limiter command, only RL.APPLY.
#[test]
fn writes_while_a_replica_waits_for_its_sync_reach_it_through_the_snapshot_only() {
    let master = frozen_server(&["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "2"]);
    let mut m = master.conn();
    let replica = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: vec!["--replicaof".into(), "127.0.0.1".into(), master.port.to_string()],
        ..Default::default()
    });
    // The replica is attached and waits for the delay (on the master's
    // frozen clock) before the fork.
    common::replication::wait_until("the replica to wait for its sync", std::time::Duration::from_secs(10), || {
        common::replication::info(&mut m, "replication").contains("state=wait_bgsave")
    });
    assert_eq!(info_u64(&mut m, "replication", "repl_backlog_active"), 1, "a backlog exists before the fork");
    let changes = info_u64(&mut m, "persistence", "rdb_changes_since_last_save");
    writes(&mut m, "waiting", 10);
    assert_eq!(effects(&mut m), 0, "no fork yet: the module builds no effect");
    assert_eq!(info_u64(&mut m, "persistence", "rdb_changes_since_last_save"), changes + 30, "every write counts");
    // Let the delay pass: the fork sends the snapshot.
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS + 3_000);
    wait_for_sync(&master, &replica);
    writes(&mut m, "synced", 10);
    wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    for command in ["rl.gcra", "rl.tokenbucket", "rl.slide"] {
        assert_eq!(calls(&mut r, command), 0, "the replica ran {command}");
    }
    assert_eq!(calls(&mut r, "rl.apply"), 30, "the replica applied exactly the effects");
    assert_eq!(effects(&mut m), 30, "every write after the fork is propagated");
    assert_same_state("after the sync", &snapshot(&mut m), &snapshot(&mut r));
}
