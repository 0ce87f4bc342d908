//! A panic never takes redis-server down: every entry point turns it into
//! an error reply. Nothing a client sends can make the module panic, so the
//! module offers a command that panics on purpose, registered only when it
//! is loaded with the argument `enable-panic-test-command`.

mod common;

use common::limiter::{err_of, rl};
use common::replication::info_u64;
use common::{module_path, Server, ServerOptions};

/// A server without the module, that lets a local client load it.
fn bare_server() -> Server {
    let extra_args = vec!["--enable-module-command".into(), "local".into()];
    Server::start_with(ServerOptions { load_module: false, extra_args, ..Default::default() })
}

#[test]
fn a_panic_becomes_an_error_reply_and_the_server_stays_up() {
    let s = bare_server();
    let mut c = s.conn();
    let path = module_path();
    let _: () = redis::cmd("MODULE")
        .arg("LOAD")
        .arg(path.to_str().unwrap())
        .arg("enable-panic-test-command")
        .query(&mut c)
        .unwrap();

    for round in 1..=3 {
        let e = err_of(&mut c, &["RL.PANICTEST"]);
        assert!(e.starts_with("ERR internal error in redis-rl"), "{e}");
        assert!(s.alive(), "round {round}: the server died\n{}", s.log_tail());
        assert_eq!(info_u64(&mut c, "rl", "rl_panics"), round);
    }
    // The module goes on working, and the log says what happened.
    assert!(rl(&mut c, "RL.GCRA k 1 1000").allowed);
    let log = std::fs::read_to_string(s.log_path()).unwrap();
    assert!(log.contains("rl: panic") && log.contains("a deliberate panic"), "{}", s.log_tail());
}

#[test]
fn the_panic_test_command_exists_only_when_asked_for_and_unknown_arguments_fail_the_load() {
    let s = Server::start();
    let mut c = s.conn();
    let e = err_of(&mut c, &["RL.PANICTEST"]);
    assert!(e.contains("unknown command"), "{e}");

    let bare = bare_server();
    let mut c = bare.conn();
    let path = module_path();
    let r: redis::RedisResult<()> =
        redis::cmd("MODULE").arg("LOAD").arg(path.to_str().unwrap()).arg("no-such-option").query(&mut c);
    assert!(r.is_err(), "{r:?}");
    let log = std::fs::read_to_string(bare.log_path()).unwrap();
    assert!(log.contains("unknown module argument \"no-such-option\""), "{}", bare.log_tail());
    assert!(bare.alive());
}
