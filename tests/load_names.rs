//! The load arguments that keep the module out of the way of a server (or
//! another module) that registers one of its names: `command-prefix P`
//! renames RL.* to P.*, `cl-throttle no` leaves CL.THROTTLE out (README
//! "Names ahead").

mod common;

use common::replication::{start_replica, wait_for_replica_offset, wait_for_sync};
use common::{Server, ServerOptions};

fn with_args(args: &[&str]) -> ServerOptions {
    ServerOptions { module_args: args.iter().map(|s| s.to_string()).collect(), ..Default::default() }
}

fn unknown(c: &mut redis::Connection, cmd: &str) -> bool {
    match redis::cmd(cmd).arg("k").arg(1).arg(1000).query::<redis::Value>(c) {
        Err(e) => e.to_string().to_lowercase().contains("unknown command"),
        Ok(_) => false,
    }
}

#[test]
fn a_prefix_renames_every_command_and_effects_follow_it() {
    let master = Server::start_with(with_args(&["command-prefix", "RRL", "cl-throttle", "no"]));
    let replica = start_replica(&master, with_args(&["command-prefix", "RRL", "cl-throttle", "no"]));
    wait_for_sync(&master, &replica);
    let mut m = master.conn();
    let d: Vec<i64> = redis::cmd("RRL.GCRA").arg("g").arg(1).arg(60000).query(&mut m).unwrap();
    assert_eq!(d[0], 1);
    let a: redis::Value = redis::cmd("RRL.ALL").arg(1).arg("a").arg("SLIDE").arg(10).arg(60000).query(&mut m).unwrap();
    assert!(matches!(a, redis::Value::Array(_)), "{a:?}");
    let l: Vec<redis::Value> = redis::cmd("RRL.ACQUIRE").arg("pool").arg(2).arg(60000).query(&mut m).unwrap();
    assert_eq!(l.len(), 6);
    let top: redis::Value = redis::cmd("RRL.TOP").arg("DENIED").query(&mut m).unwrap();
    assert!(matches!(top, redis::Value::Array(_)));
    for gone in ["RL.GCRA", "RL.ALL", "RL.APPLY", "CL.THROTTLE", "RL.TOP"] {
        assert!(unknown(&mut m, gone), "{gone} is still registered");
    }
    // COMMAND DOCS knows the new names.
    let docs: redis::Value = redis::cmd("COMMAND").arg("DOCS").arg("rrl.gcra").query(&mut m).unwrap();
    assert!(format!("{docs:?}").contains("GCRA"), "{docs:?}");
    // The replica received RRL.APPLY and holds the same states.
    wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    for key in ["g", "a", "pool"] {
        let dm: Vec<String> = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg(key).query(&mut m).unwrap();
        let dr: Vec<String> = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg(key).query(&mut r).unwrap();
        assert_eq!(dm, dr, "{key}");
        assert_ne!(dm, vec!["0".repeat(40)], "{key} missing");
    }
    let calls = common::replication::command_calls(&mut r, "rrl.apply");
    assert!(calls >= 3, "the replica ran RRL.APPLY {calls} times");
}

#[test]
fn the_aof_rewrite_writes_the_renamed_apply_and_loads_back() {
    let mut s = Server::start_with(ServerOptions {
        extra_args: vec!["--appendonly".into(), "yes".into()],
        ..with_args(&["command-prefix", "X"])
    });
    let mut c = s.conn();
    let _: Vec<i64> = redis::cmd("X.LOG").arg("log").arg(5).arg(600000).query(&mut c).unwrap();
    let before: Vec<String> = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg("log").query(&mut c).unwrap();
    let _: () = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
    common::replication::wait_until("the AOF rewrite", std::time::Duration::from_secs(20), || {
        common::replication::info_u64(&mut c, "persistence", "aof_rewrite_in_progress") == 0
            && common::replication::info_u64(&mut c, "persistence", "aof_rewrite_scheduled") == 0
    });
    drop(c);
    s.restart();
    let mut c = s.conn();
    let after: Vec<String> = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg("log").query(&mut c).unwrap();
    assert_eq!(before, after);
}

#[test]
fn bad_names_are_refused_at_load_with_the_reason() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    for (args, reason) in [
        (&["command-prefix", "R.L"][..], "command-prefix must be"),
        (&["command-prefix"], "command-prefix needs a value"),
        (&["cl-throttle", "maybe"], "cl-throttle must be yes or no"),
    ] {
        // The server exits when the load fails (before it listens).
        let port = common::free_port().to_string();
        let mut child = Command::new(common::server_binary())
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--loadmodule"])
            .arg(common::module_path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?}: the server kept running");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut log = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut log).unwrap_or_default();
        assert!(!status.success(), "{args:?}: loaded");
        assert!(log.contains(reason), "{args:?}: {log}");
    }
}
