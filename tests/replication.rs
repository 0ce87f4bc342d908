//! Invariants 4 and 5 over replication: a replica holds exactly the master's
//! limiter state and absolute expiry, whatever its own clock, and only
//! writes travel the replication stream (denials, PEEK and COST 0 send
//! nothing; an allowed request sends exactly one `RL.APPLY`).

mod common;

use common::limiter::rl;
use common::replication::{
    assert_same_state, command_calls, master_offset, mixed_workload, run_clock_from, snapshot, start_replica,
    wait_for_aof_rewrite, wait_for_replica_offset, wait_for_sync,
};
use common::{epoch_ms_now, Server, ServerOptions, T0_MS};

fn fake_clock() -> ServerOptions {
    ServerOptions { fake_clock: true, ..Default::default() }
}

/// `TIME` in ms.
fn server_time_ms(c: &mut redis::Connection) -> u64 {
    let v: Vec<u64> = redis::cmd("TIME").query(c).expect("TIME");
    v[0] * 1000 + v[1] / 1000
}

#[test]
fn a_replica_whose_clock_runs_five_seconds_ahead_holds_identical_state_and_expiry() {
    let master = Server::start_with(fake_clock());
    master.clock.as_ref().unwrap().freeze_at_ms(epoch_ms_now());
    let replica = start_replica(&master, fake_clock());
    replica.clock.as_ref().unwrap().set_offset_ms(5000);
    let (mut m, mut r) = (master.conn(), replica.conn());
    let skew = server_time_ms(&mut r) as i64 - server_time_ms(&mut m) as i64;
    assert!((5000..60_000).contains(&skew), "the replica's clock is {skew} ms off the master's");

    let w = mixed_workload(&mut m, master.clock.as_ref().unwrap(), "k:", 150, 4);
    assert!(w.writes > 300 && w.denied > 300 && w.reads > 300, "not a mixed workload: {w:?}");
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);

    let on_master = snapshot(&mut m);
    assert!(on_master.len() > 400, "only {} keys written", on_master.len());
    assert_same_state("replica vs master", &on_master, &snapshot(&mut r));
    assert_eq!(command_calls(&mut r, "rl.apply"), w.writes, "one RL.APPLY per write, none for the rest");
}

#[test]
fn a_replica_that_syncs_after_the_writes_gets_identical_state_and_expiry() {
    let master = Server::start_with(fake_clock());
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let mut m = master.conn();
    mixed_workload(&mut m, master.clock.as_ref().unwrap(), "k:", 30, 3);
    let on_master = snapshot(&mut m);
    assert!(on_master.len() > 80, "only {} keys written", on_master.len());

    // A full resynchronisation (an RDB transfer) to a replica whose clock
    // runs an hour behind.
    let replica = start_replica(&master, fake_clock());
    run_clock_from(replica.clock.as_ref().unwrap(), T0_MS - 3_600_000);
    assert_same_state("replica vs master after a full sync", &on_master, &snapshot(&mut replica.conn()));
}

/// A master on a frozen clock whose replication stream carries only
/// writes (no PINGs, so the tests can watch its offset), and its replica.
fn quiet_master_and_replica() -> (Server, Server) {
    let master = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: vec!["--repl-ping-replica-period".into(), "3600".into()],
        ..Default::default()
    });
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let replica = start_replica(&master, ServerOptions::default());
    (master, replica)
}

#[test]
fn denied_peek_and_cost_zero_calls_send_nothing_to_the_replica() {
    let (master, replica) = quiet_master_and_replica();
    let (mut m, mut r) = (master.conn(), replica.conn());

    // Drain one key of each algorithm.
    let commands = [("RL.GCRA", "d:g 5 60000"), ("RL.TOKENBUCKET", "d:t 5 1 60000"), ("RL.SLIDE", "d:s 5 60000")];
    for (cmd, args) in commands {
        assert!(rl(&mut m, &format!("{cmd} {args} COST 5")).allowed, "{cmd}");
    }
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);
    let offset = master_offset(&mut m);
    let applied = command_calls(&mut r, "rl.apply");
    assert_eq!(applied, 3, "one RL.APPLY per draining write");

    for i in 0..1000 {
        let (cmd, args) = commands[i % 3];
        let reply = rl(&mut m, &format!("{cmd} {args}"));
        assert!(!reply.allowed, "{cmd}: {reply:?}");
    }
    for (cmd, args) in commands {
        for opts in ["PEEK", "COST 0", "COST 0 PEEK", "COST 5 PEEK"] {
            rl(&mut m, &format!("{cmd} {args} {opts}"));
        }
        // Reads of a fresh key: they create nothing either.
        for opts in ["PEEK", "COST 0"] {
            let fresh = args.replacen("d:", "fresh:", 1);
            assert!(rl(&mut m, &format!("{cmd} {fresh} {opts}")).allowed, "{cmd} {opts}");
        }
    }

    assert_eq!(master_offset(&mut m), offset, "denials, PEEK and COST 0 moved the replication stream");
    wait_for_sync(&master, &replica);
    assert_eq!(command_calls(&mut r, "rl.apply"), applied, "the replica applied writes nobody made");
    let keys: i64 = redis::cmd("DBSIZE").query(&mut r).unwrap();
    assert_eq!(keys, 3, "the replica holds exactly the three drained keys");
}

#[test]
fn an_allowed_request_sends_exactly_one_rl_apply_and_nothing_else() {
    let (master, replica) = quiet_master_and_replica();
    let (mut m, mut r) = (master.conn(), replica.conn());
    // The first write after the sync also carries a SELECT: get it out of the way.
    let _: () = redis::cmd("SET").arg("warm-up").arg(1).query(&mut m).unwrap();
    wait_for_replica_offset(&mut m);

    // `*3 $8 RL.APPLY $<key> $<payload>`: tag byte, the state's words, the expiry.
    let resp_len = |key: &str, payload_len: usize| {
        let bulk = |n: usize| 1 + n.to_string().len() + 2 + n + 2;
        4 + bulk(8) + bulk(key.len()) + bulk(payload_len)
    };
    for (i, (line, key, payload_len)) in [
        ("RL.GCRA one:g 10 1000", "one:g", 1 + 8 + 8),
        ("RL.TOKENBUCKET one:t 10 10 1000 COST 3", "one:t", 1 + 8 + 8),
        ("RL.SLIDE one:s 10 1000", "one:s", 1 + 24 + 8),
        ("RL.GCRA one:g 10 1000", "one:g", 1 + 8 + 8), // an existing key
    ]
    .into_iter()
    .enumerate()
    {
        let before = master_offset(&mut m);
        assert!(rl(&mut m, line).allowed, "{line}");
        assert_eq!(
            master_offset(&mut m) - before,
            resp_len(key, payload_len) as u64,
            "{line}: the stream grew by something other than one RL.APPLY"
        );
        wait_for_replica_offset(&mut m);
        wait_for_sync(&master, &replica);
        assert_eq!(command_calls(&mut r, "rl.apply"), i as u64 + 1, "{line}");
    }
    assert_eq!(command_calls(&mut r, "multi"), 0);
    assert_eq!(command_calls(&mut r, "pexpireat"), 0);
}

#[test]
fn a_replica_with_appendonly_keeps_the_state_it_applied_in_its_own_aof() {
    let master = Server::start_with(fake_clock());
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let mut replica = start_replica(
        &master,
        ServerOptions {
            fake_clock: true,
            extra_args: ["--appendonly", "yes", "--appendfsync", "always"].map(String::from).to_vec(),
            ..Default::default()
        },
    );
    run_clock_from(replica.clock.as_ref().unwrap(), T0_MS - 3_600_000);
    // The replica rewrites its AOF after the full sync; let that finish.
    wait_for_aof_rewrite(&replica);
    let mut r = replica.conn();

    let mut m = master.conn();
    mixed_workload(&mut m, master.clock.as_ref().unwrap(), "k:", 20, 3);
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &replica);
    let on_replica = snapshot(&mut r);
    assert_same_state("replica vs master", &snapshot(&mut m), &on_replica);
    assert!(on_replica.len() > 50, "only {} keys", on_replica.len());

    // The master goes away for good; the replica restarts from its own AOF
    // (as it would after a failover), with nothing to resynchronise from.
    drop((m, r, master));
    replica.clock.as_ref().unwrap().advance_ms(2000);
    replica.restart();
    let log = std::fs::read_to_string(replica.log_path()).unwrap_or_default();
    assert!(log.contains("DB loaded from append only file"), "{}", replica.log_tail());
    assert_same_state("replica after a restart from its AOF", &on_replica, &snapshot(&mut replica.conn()));
}

#[test]
fn a_replica_of_a_replica_holds_identical_state_and_applies_each_effect_once() {
    let master = Server::start_with(fake_clock());
    master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let middle = start_replica(&master, fake_clock());
    run_clock_from(middle.clock.as_ref().unwrap(), T0_MS + 5000);
    let leaf = start_replica(&middle, fake_clock());
    run_clock_from(leaf.clock.as_ref().unwrap(), T0_MS - 3_600_000);

    let mut m = master.conn();
    let w = mixed_workload(&mut m, master.clock.as_ref().unwrap(), "k:", 20, 3);
    wait_for_replica_offset(&mut m);
    wait_for_sync(&master, &middle);
    wait_for_sync(&middle, &leaf);

    let on_master = snapshot(&mut m);
    assert!(on_master.len() > 50, "only {} keys", on_master.len());
    let (mut mid, mut l) = (middle.conn(), leaf.conn());
    assert_same_state("middle replica vs master", &on_master, &snapshot(&mut mid));
    assert_same_state("leaf replica vs master", &on_master, &snapshot(&mut l));
    // The middle replica passes the master's stream on unchanged: same
    // offset, and each effect is applied once on each replica.
    assert_eq!(master_offset(&mut mid), master_offset(&mut m));
    assert_eq!(command_calls(&mut mid, "rl.apply"), w.writes, "one RL.APPLY per write");
    assert_eq!(command_calls(&mut l, "rl.apply"), w.writes, "one RL.APPLY per write");
}

#[test]
fn a_replica_fires_the_same_keyspace_events_as_its_master() {
    let master = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    master.clock.as_ref().unwrap().freeze_at_ms(1_800_000_000_000);
    let replica = start_replica(&master, ServerOptions::default());
    let mut r = replica.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("notify-keyspace-events").arg("Kd").query(&mut r).unwrap();
    let mut sub = replica.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:ev*").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();

    let mut m = master.conn();
    rl(&mut m, "RL.GCRA evg 1 60000");
    rl(&mut m, "RL.GCRA evg 1 60000"); // denied: nothing replicated, no event
    rl(&mut m, "RL.TOKENBUCKET evt 1 1 60000");
    rl(&mut m, "RL.SLIDE evs 1 60000");
    rl(&mut m, "CL.THROTTLE evc 0 1 60");
    let mut events = Vec::new();
    for _ in 0..4 {
        let msg = pubsub.get_message().unwrap();
        events.push((msg.get_channel_name().to_string(), msg.get_payload::<String>().unwrap()));
    }
    let ev = |k: &str, e: &str| (format!("__keyspace@0__:{k}"), e.to_string());
    assert_eq!(
        events,
        [ev("evg", "rl.gcra"), ev("evt", "rl.tokenbucket"), ev("evs", "rl.slide"), ev("evc", "rl.gcra")]
    );
}

/// A writable replica (`replica-read-only no`) with writes of its own, or a
/// clock of its own, never holds a lease set or a log that its own RDB
/// loader refuses (issue 32.1): its DUMP restores elsewhere, and it saves
/// and loads its dataset again (DEBUG RELOAD) with every key. Before, a
/// master's change applied to the replica's own set carried the master's
/// header: a `last_ns` before the replica's lease's start, a log total other
/// than the sum of the replica's entries.
#[test]
fn a_writable_replica_with_its_own_writes_keeps_states_its_loader_accepts() {
    for skew_ms in [0i64, 10_000, -10_000] {
        let master = Server::start_with(fake_clock());
        master.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
        let replica = start_replica(
            &master,
            ServerOptions {
                fake_clock: true,
                extra_args: vec!["--replica-read-only".into(), "no".into()],
                ..Default::default()
            },
        );
        let rclock = replica.clock.as_ref().unwrap();
        rclock.freeze_at_ms((T0_MS as i64 + skew_ms) as u64);
        let (mut m, mut r) = (master.conn(), replica.conn());
        let run = |c: &mut redis::Connection, line: &str| {
            let words: Vec<&str> = line.split(' ').collect();
            common::limiter::raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}"));
        };
        run(&mut m, "RL.ACQUIRE L 10 600000 ID m1");
        run(&mut m, "RL.ACQUIRE L 10 600000 ID m0");
        run(&mut m, "RL.LOG G 3 1000");
        wait_for_replica_offset(&mut m);
        // Local writes on the replica, by its own clock.
        run(&mut r, "RL.ACQUIRE L 10 600000 ID r1");
        run(&mut r, "RL.LOG G 3 1000");
        master.clock.as_ref().unwrap().advance_ms(1);
        rclock.advance_ms(1);
        run(&mut m, "RL.RELEASE L m0");
        run(&mut m, "RL.LOG G 3 1000");
        run(&mut m, "RL.ACQUIRE L 10 600000 ID m2");
        wait_for_replica_offset(&mut m);
        let mut other = master.conn();
        for key in ["L", "G"] {
            let d: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut r).unwrap();
            let restored: redis::RedisResult<()> =
                redis::cmd("RESTORE").arg(format!("{key}:copy")).arg(0).arg(d).query(&mut other);
            assert!(restored.is_ok(), "skew {skew_ms}: the replica's {key} does not restore: {restored:?}");
        }
        let reloaded: redis::RedisResult<()> = redis::cmd("DEBUG").arg("RELOAD").query(&mut r);
        assert!(reloaded.is_ok(), "skew {skew_ms}: DEBUG RELOAD on the replica: {reloaded:?}\n{}", replica.log_tail());
        let n: i64 = redis::cmd("EXISTS").arg("L").arg("G").query(&mut r).unwrap();
        assert_eq!(n, 2, "skew {skew_ms}: keys lost by the reload");
    }
}
