//! A rolling upgrade: a master running release 0.1.0 (times in µs, RDB
//! encoding version 0, RL.APPLY payloads tagged `G` / `T`) feeding a replica
//! running this build. The replica gets the keys written before it joined
//! through the full sync (an RDB of version 0) and those written after
//! through the replication stream (0.1.0's payloads), and must hold the
//! master's state: promoted, it answers exactly as the master does, with the
//! same expiry.
//!
//! Needs 0.1.0's module: `RL_MODULE_0_1_0` is its path. `make test` (and
//! `make test-integration`) build it from this repository's history with
//! `scripts/build-0.1.0.sh` and set it; without it the test fails, saying so.

mod common;

use common::limiter::rl;
use common::replication::{pexpiretime, start_replica, wait_for_replica_offset};
use common::{Server, ServerOptions, T0_MS};

/// Parameter sets on which 0.1.0 and this build decide alike (units of whole
/// µs, and 3 per second, whose rounding differs by less than a ms).
const LINES: [&str; 5] = [
    "RL.GCRA g:third 3 1000",
    "RL.GCRA g:burst 10 60000 BURST 5",
    "RL.TOKENBUCKET t:slow 5 1 12000",
    "RL.TOKENBUCKET t:third 100 3 1000",
    "RL.SLIDE s:one 5 60000",
];

#[test]
fn a_new_replica_of_an_0_1_0_master_holds_its_state() {
    let old = std::env::var_os("RL_MODULE_0_1_0").filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!("RL_MODULE_0_1_0 is not set: build release 0.1.0 with scripts/build-0.1.0.sh and set it to the path it prints (make test does both)")
    });
    let master = Server::start_with(ServerOptions {
        load_module: false,
        fake_clock: true,
        extra_args: vec!["--loadmodule".into(), old.to_string_lossy().into_owned()],
        ..Default::default()
    });
    let clock = master.clock.as_ref().unwrap();
    clock.freeze_at_ms(T0_MS);
    let mut m = master.conn();
    // Before the replica joins: reaches it as an RDB of encoding version 0.
    for line in LINES {
        assert!(rl(&mut m, &format!("{line} COST 2")).allowed, "{line}");
    }
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    let rclock = replica.clock.as_ref().unwrap();
    // After: reaches it as 0.1.0's RL.APPLY payloads.
    for at in [T0_MS + 100, T0_MS + 250] {
        clock.freeze_at_ms(at);
        for line in LINES {
            let r = rl(&mut m, &line.replace(':', ":late:"));
            assert!(r.allowed, "{line}");
            rl(&mut m, line);
        }
    }
    wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    let _: String = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query(&mut r).unwrap();
    let keys: Vec<String> = LINES
        .iter()
        .flat_map(|l| [l.split(' ').nth(1).unwrap().to_string(), l.split(' ').nth(1).unwrap().replace(':', ":late:")])
        .collect();
    for key in &keys {
        assert_eq!(pexpiretime(&mut r, key), pexpiretime(&mut m, key), "expiry of {key}");
    }
    // Both at the same instants: the same answers.
    for at in [T0_MS + 400, T0_MS + 5_000] {
        clock.freeze_at_ms(at);
        rclock.freeze_at_ms(at);
        for line in LINES {
            for key in
                [line.split(' ').nth(1).unwrap().to_string(), line.split(' ').nth(1).unwrap().replace(':', ":late:")]
            {
                let l = line.replacen(line.split(' ').nth(1).unwrap(), &key, 1);
                for cost in ["COST 0", "PEEK", "COST 1 PEEK"] {
                    let q = format!("{l} {cost}");
                    assert_eq!(rl(&mut r, &q), rl(&mut m, &q), "{q} at t0+{} ms", at - T0_MS);
                }
            }
        }
    }
}
