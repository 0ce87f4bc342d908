//! A panic never takes redis-server down: every entry point turns it into
//! an error reply (a command) or a logged no-op (any other callback).
//! Nothing a client sends can make the module panic, so a module built with
//! the `test-hooks` feature offers a command that panics on purpose,
//! registered only when it is loaded with the argument
//! `enable-panic-test-command`. The release module holds no such hook.

mod common;

use std::path::PathBuf;

use common::limiter::{err_of, rl};
use common::replication::info_u64;
use common::{module_path, Server, ServerOptions};

/// The module built with the test hooks (`make build-hooks`):
/// `$REDIS_RL_HOOKS_MODULE`, else `hooks/libredis_rl.so` beside the release module.
fn hooks_module_path() -> PathBuf {
    let p = match std::env::var_os("REDIS_RL_HOOKS_MODULE") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => module_path().with_file_name("hooks").join("libredis_rl.so"),
    };
    let p = std::path::absolute(&p).unwrap_or(p);
    assert!(p.is_file(), "module with test hooks not built: run `make build-hooks` [looked for {}]", p.display());
    p
}

/// A server without the module, that lets a local client load it.
fn bare_server() -> Server {
    let extra_args = vec!["--enable-module-command".into(), "local".into()];
    Server::start_with(ServerOptions { load_module: false, extra_args, ..Default::default() })
}

/// A server with the hooked module loaded with its panic command.
fn server_with_panic_command() -> (Server, redis::Connection) {
    let s = bare_server();
    let mut c = s.conn();
    let path = hooks_module_path();
    let _: () = redis::cmd("MODULE")
        .arg("LOAD")
        .arg(path.to_str().unwrap())
        .arg("enable-panic-test-command")
        .query(&mut c)
        .unwrap();
    (s, c)
}

#[test]
fn a_panic_becomes_an_error_reply_and_the_server_stays_up() {
    let (s, mut c) = server_with_panic_command();
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
fn a_panic_in_a_callback_that_is_not_a_command_is_a_logged_no_op() {
    let (s, mut c) = server_with_panic_command();
    let ok: String = redis::cmd("RL.PANICTEST").arg("INFO").query(&mut c).unwrap();
    assert_eq!(ok, "OK");
    // The INFO callback panics: INFO still answers, the server stays up.
    let text: String = redis::cmd("INFO").arg("rl").query(&mut c).unwrap_or_else(|e| panic!("{e}\n{}", s.log_tail()));
    assert!(!text.contains("rl_panics"), "the panicking callback added its fields: {text}");
    assert!(s.alive(), "the server died\n{}", s.log_tail());
    // Counted, logged, and the next INFO is whole again.
    assert_eq!(info_u64(&mut c, "rl", "rl_panics"), 1);
    let log = std::fs::read_to_string(s.log_path()).unwrap();
    assert!(log.contains("a panic in the INFO callback was caught"), "{}", s.log_tail());
    assert!(rl(&mut c, "RL.GCRA k 1 1000").allowed);
}

#[test]
fn the_panic_test_command_exists_only_when_asked_for_and_unknown_arguments_fail_the_load() {
    let s = Server::start();
    let mut c = s.conn();
    let e = err_of(&mut c, &["RL.PANICTEST"]);
    assert!(e.contains("unknown command"), "{e}");

    let bare = bare_server();
    let mut c = bare.conn();
    for path in [module_path(), hooks_module_path()] {
        let r: redis::RedisResult<()> =
            redis::cmd("MODULE").arg("LOAD").arg(path.to_str().unwrap()).arg("no-such-option").query(&mut c);
        assert!(r.is_err(), "{r:?}");
    }
    let log = std::fs::read_to_string(bare.log_path()).unwrap();
    assert!(log.contains("unknown module argument \"no-such-option\""), "{}", bare.log_tail());
    assert!(bare.alive());
}

#[test]
fn the_release_module_holds_no_test_hooks_and_refuses_to_enable_them() {
    let bytes = std::fs::read(module_path()).unwrap();
    let hooked = std::fs::read(hooks_module_path()).unwrap();
    let holds = |so: &[u8], what: &str| so.windows(what.len()).any(|w| w == what.as_bytes());
    for what in ["RL.PANICTEST", "a deliberate panic", "HOLD takes a byte count"] {
        assert!(!holds(&bytes, what), "the release module holds {what:?}");
        assert!(holds(&hooked, what), "the module with test hooks lacks {what:?}: is this test stale?");
    }

    let bare = bare_server();
    let mut c = bare.conn();
    let path = module_path();
    let r: redis::RedisResult<()> =
        redis::cmd("MODULE").arg("LOAD").arg(path.to_str().unwrap()).arg("enable-panic-test-command").query(&mut c);
    assert!(r.is_err(), "{r:?}");
    let log = std::fs::read_to_string(bare.log_path()).unwrap();
    assert!(log.contains("needs a module built with the test-hooks feature"), "{}", bare.log_tail());
}

/// The module's own allocations (a `Vec`) are made by the server's
/// allocator, so `used_memory` (and `maxmemory`) see them: `RL.PANICTEST
/// HOLD n` keeps `n` bytes until the next HOLD.
#[test]
fn the_modules_own_allocations_count_in_used_memory() {
    let (s, mut c) = server_with_panic_command();
    let used = |c: &mut redis::Connection| info_u64(c, "memory", "used_memory");
    let mb = 1 << 20;
    let before = used(&mut c);
    let ok: String = redis::cmd("RL.PANICTEST").arg("HOLD").arg(16 * mb).query(&mut c).unwrap();
    assert_eq!(ok, "OK");
    let holding = used(&mut c);
    assert!(holding >= before + 16 * mb, "used_memory {before}, then {holding} holding 16 MiB");
    let _: String = redis::cmd("RL.PANICTEST").arg("HOLD").arg(0).query(&mut c).unwrap();
    let after = used(&mut c);
    assert!(after < before + mb, "used_memory {before}, then {after} after freeing 16 MiB");
    assert!(s.alive());
}
