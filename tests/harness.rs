//! Self-tests of the integration-test harness (`tests/common`). They run a
//! plain server WITHOUT the module, so they do not depend on the crate.

mod common;

use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use common::{epoch_ms_now, server_description, ClockMode, Server, ServerOptions, ServerVersion, T0_MS};
use redis::Value;

fn plain() -> ServerOptions {
    ServerOptions { load_module: false, ..Default::default() }
}

fn fake_clock() -> ServerOptions {
    ServerOptions { load_module: false, fake_clock: true, ..Default::default() }
}

/// `TIME` as (seconds, microseconds).
fn server_time(c: &mut redis::Connection) -> (u64, u64) {
    let v: Vec<String> = redis::cmd("TIME").query(c).unwrap();
    (v[0].parse().unwrap(), v[1].parse().unwrap())
}

fn server_time_ms(c: &mut redis::Connection) -> u64 {
    let (s, us) = server_time(c);
    s * 1000 + us / 1000
}

fn pid_exists(pid: u32) -> bool {
    // kill(pid, 0): 0 => exists; ESRCH => gone (EPERM would mean "exists").
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Bounded poll (not a sleep to wait out time).
fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn starts_on_loopback_port_and_drop_kills_it() {
    let server = Server::start_with(plain());
    assert_ne!(server.port, 6379);
    assert!(server.url().starts_with("redis://127.0.0.1:"));

    let mut c = server.conn();
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    // Really bound to loopback on our port, and it's our child.
    let bind: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("bind").query(&mut c).unwrap();
    assert_eq!(bind, ["bind", "127.0.0.1"]);
    let info: String = redis::cmd("INFO").arg("server").query(&mut c).unwrap();
    assert!(info.contains(&format!("tcp_port:{}", server.port)), "{info}");
    assert!(info.contains(&format!("process_id:{}", server.pid())), "{info}");
    assert!(server.alive());

    let pid = server.pid();
    let dir = server.dir().to_path_buf();
    assert!(dir.is_dir());
    assert!(pid_exists(pid));
    drop(c);
    drop(server);
    wait_until("the server process to disappear", Duration::from_secs(5), || !pid_exists(pid));
    assert!(!dir.exists(), "temp dir {} not removed", dir.display());
}

#[test]
fn servers_in_parallel_get_distinct_ports() {
    let servers: Vec<Server> = (0..4).map(|_| Server::start_with(plain())).collect();
    let mut ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), servers.len());
    for s in &servers {
        let pong: String = redis::cmd("PING").query(&mut s.conn()).unwrap();
        assert_eq!(pong, "PONG");
    }
}

#[test]
fn frozen_fake_clock_drives_time_and_expiry() {
    let server = Server::start_with(fake_clock());
    let clock = server.clock.as_ref().expect("fake clock");
    let mut c = server.conn();

    // Lazy expiry only: Redis 8's active expiry deletes a key at now ==
    // expire_at (lazy expiry, checked below, only once now > expire_at), so
    // a cycle running just then would race the PTTL 0 check.
    let _: () = redis::cmd("DEBUG").arg("SET-ACTIVE-EXPIRE").arg(0).query(&mut c).unwrap();

    let t = T0_MS + 123; // a non-round millisecond, to check the microseconds too
    clock.freeze_at_ms(t);
    assert_eq!(clock.now_ms(), Some(t));
    assert_eq!(clock.mode(), ClockMode::Frozen(t * 1000));
    assert_eq!(server_time(&mut c), (t / 1000, (t % 1000) * 1000));
    assert_eq!(server_time(&mut c), (t / 1000, (t % 1000) * 1000), "time stands still");

    let _: () = redis::cmd("SET").arg("k").arg("v").arg("PX").arg(1000).query(&mut c).unwrap();
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert_eq!(pttl, 1000);
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert_eq!(pttl, 1000, "PTTL must not move while frozen");

    clock.advance_ms(999);
    assert_eq!(clock.now_ms(), Some(t + 999));
    assert_eq!(server_time_ms(&mut c), t + 999);
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert_eq!(pttl, 1);
    let exists: i64 = redis::cmd("EXISTS").arg("k").query(&mut c).unwrap();
    assert_eq!(exists, 1);

    // Redis expires a key on access only once now > expire_at: at now ==
    // expire_at the key is still there with PTTL 0 (Redis 7.0 to 8.2, Valkey).
    clock.advance_ms(1);
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert_eq!(pttl, 0);
    let v: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v.as_deref(), Some("v"));

    clock.advance_ms(1);
    let v: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, None, "lazy expiry on access");
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert_eq!(pttl, -2);

    // Going back in time works too.
    clock.advance_ms(-10_000);
    assert_eq!(server_time_ms(&mut c), t + 1001 - 10_000);
}

#[test]
fn offset_fake_clock_runs_ahead_of_real_time() {
    let server = Server::start_with(fake_clock());
    let clock = server.clock.as_ref().expect("fake clock");
    let mut c = server.conn();

    // Initial state: +0, i.e. real time.
    assert_eq!(clock.mode(), ClockMode::Offset(0));
    assert_eq!(clock.now_ms(), None);
    assert!(server_time_ms(&mut c).abs_diff(epoch_ms_now()) < 2_000);

    clock.set_offset_us(3_600_000_000);
    let ahead = server_time_ms(&mut c) as i64 - epoch_ms_now() as i64;
    assert!((ahead - 3_600_000).abs() < 2_000, "ahead by {ahead} ms");

    clock.advance_ms(-7_200_000);
    assert_eq!(clock.mode(), ClockMode::Offset(-3_600_000_000));
    let behind = epoch_ms_now() as i64 - server_time_ms(&mut c) as i64;
    assert!((behind - 3_600_000).abs() < 2_000, "behind by {behind} ms");

    // Unfreeze after freezing: back to running time.
    clock.freeze_at_ms(T0_MS);
    assert_eq!(server_time_ms(&mut c), T0_MS);
    clock.set_offset_us(0);
    assert!(server_time_ms(&mut c).abs_diff(epoch_ms_now()) < 2_000);
}

#[test]
fn real_clock_without_fake_clock_option() {
    let server = Server::start_with(plain());
    assert!(server.clock.is_none());
    let mut c = server.conn();
    assert!(server_time_ms(&mut c).abs_diff(epoch_ms_now()) < 2_000);
}

#[test]
fn resp3_connection_negotiates_hello_3() {
    let server = Server::start_with(plain());

    let mut c3 = server.conn_resp3();
    let hello: Value = redis::cmd("HELLO").arg(3).query(&mut c3).unwrap();
    let Value::Map(fields) = &hello else { panic!("HELLO 3 on RESP3 gave {hello:?}") };
    let proto = fields.iter().find(|(k, _)| matches!(k, Value::BulkString(b) if b == b"proto")).map(|(_, v)| v.clone());
    assert_eq!(proto, Some(Value::Int(3)));
    let cfg: Value = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(&mut c3).unwrap();
    assert!(matches!(cfg, Value::Map(_)), "CONFIG GET on RESP3 gave {cfg:?}");

    // While a RESP2 connection gets a flat array for the same command.
    let mut c2 = server.conn();
    let cfg: Value = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(&mut c2).unwrap();
    assert!(matches!(cfg, Value::Array(_)), "CONFIG GET on RESP2 gave {cfg:?}");
}

#[test]
fn restart_keeps_port_dir_args_and_clock() {
    let mut server =
        Server::start_with(ServerOptions { extra_args: vec!["--maxmemory".into(), "12345678".into()], ..fake_clock() });
    let port = server.port;
    let dir = server.dir().to_path_buf();
    let old_pid = server.pid();
    server.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut server.conn()).unwrap();

    server.restart();

    assert_eq!(server.port, port);
    assert_eq!(server.dir(), dir.as_path());
    assert_ne!(server.pid(), old_pid);
    assert!(!pid_exists(old_pid), "old server still running");
    assert!(server.alive());
    let mut c = server.conn();
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    // Same arguments (--save "" and SIGKILL: the data is gone).
    let mm: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxmemory").query(&mut c).unwrap();
    assert_eq!(mm, ["maxmemory", "12345678"]);
    let v: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, None);
    // The fake clock still applies and can still be moved.
    assert_eq!(server_time_ms(&mut c), T0_MS);
    server.clock.as_ref().unwrap().advance_ms(5);
    assert_eq!(server_time_ms(&mut c), T0_MS + 5);
    assert!(server.log_tail().contains("Ready to accept connections"));
}

/// The shim on its own, preloaded into `date` (coreutils reads
/// CLOCK_REALTIME through clock_gettime): frozen, offset, missing and
/// garbage control files.
#[test]
fn fakeclock_shim_standalone() {
    let so = common::fakeclock_so();
    assert!(so.is_absolute() && so.is_file());
    let dir = std::env::temp_dir().join(format!("redis-rl-shim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("clock");

    let date = |ctl: Option<&str>| -> i64 {
        match ctl {
            Some(text) => std::fs::write(&file, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&file);
            }
        }
        let out = Command::new("date")
            .arg("+%s")
            .env("LD_PRELOAD", &so)
            .env("FAKECLOCK_FILE", &file)
            .output()
            .expect("run date");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
    };
    let real_s = || (epoch_ms_now() / 1000) as i64;

    assert_eq!(date(Some("@1800000000999999")), 1_800_000_000);
    assert_eq!(date(Some("@0\n")), 0);
    assert!((date(Some("+86400000000")) - real_s() - 86_400).abs() <= 2);
    assert!((date(Some("-86400000000\n")) - real_s() + 86_400).abs() <= 2);
    for real in [None, Some(""), Some("garbage"), Some("@"), Some("@12x"), Some("+99999999999999999999")] {
        assert!((date(real) - real_s()).abs() <= 2, "{real:?} should mean real time");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!Path::new(&dir).exists());
}

fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg(section).query(c).unwrap();
    info.lines().find_map(|l| l.trim_end().strip_prefix(field)?.strip_prefix(':').map(str::to_string))
}

#[test]
fn server_version_parses_redis_and_valkey_info() {
    let redis = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n";
    let v = ServerVersion::from_info(redis);
    assert_eq!(v, ServerVersion { name: "redis".into(), version: (7, 0, 15) });
    assert!(!v.is_valkey() && v.at_least(7, 0, 0) && !v.at_least(7, 2, 0));
    assert_eq!(v.to_string(), "redis 7.0.15");

    // Valkey reports a compatibility redis_version; its own is valkey_version.
    let valkey = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n";
    let v = ServerVersion::from_info(valkey);
    assert_eq!(v, ServerVersion { name: "valkey".into(), version: (9, 1, 2) });
    assert!(v.is_valkey() && v.at_least(9, 1, 2) && !v.at_least(9, 1, 3));
    assert_eq!(v.to_string(), "valkey 9.1.2");
}

/// `Server::version` (INFO) and `server_description` (`--version`, used in
/// start-up failure messages) name the same server.
#[test]
fn server_version_matches_the_binary_under_test() {
    let server = Server::start_with(plain());
    let v = server.version();
    let (a, b, c) = v.version;
    let want = format!("{}server v={a}.{b}.{c} ", if v.is_valkey() { "Valkey " } else { "Redis " });
    let desc = server_description();
    assert!(desc.contains(&want), "{desc:?} vs INFO {v}");
    assert!(desc.starts_with(&common::server_binary()), "{desc:?}");
}

/// Valkey extrapolates its wall clock from the monotonic clock between
/// gettimeofday() calls (at most one per millisecond) when that clock is the
/// x86 TSC, which no LD_PRELOAD can move; the shim keeps it on the POSIX
/// clock (Redis 7.0 is always there).
#[test]
fn fake_clock_keeps_the_server_on_the_posix_monotonic_clock() {
    let server = Server::start_with(fake_clock());
    let mut c = server.conn();
    assert_eq!(info_field(&mut c, "server", "monotonic_clock").as_deref(), Some("POSIX clock_gettime"));
}

/// Every change of the control file shows in the very next command, to the
/// microsecond, also when the changes come faster than once a millisecond
/// (an extrapolated clock would serve the previous time plus the elapsed
/// real time here).
#[test]
fn frozen_clock_changes_are_seen_by_the_very_next_command() {
    let server = Server::start_with(fake_clock());
    let clock = server.clock.as_ref().expect("fake clock");
    let mut c = server.conn();
    let base = T0_MS * 1000 + 123_456;
    for i in 0..200u64 {
        // Forwards by a few microseconds, and now and then back.
        let t = if i % 10 == 9 { base - i * 1000 } else { base + i * 37 };
        clock.freeze_at_us(t);
        assert_eq!(server_time(&mut c), (t / 1_000_000, t % 1_000_000), "step {i}");
    }
    clock.set_offset_us(0);
    clock.freeze_at_us(base);
    assert_eq!(server_time(&mut c), (base / 1_000_000, base % 1_000_000), "frozen right after running");
}

/// The monotonic clock stays real while the wall clock is frozen or jumps
/// back: the server's timers (serverCron: here the check that notices a
/// finished BGSAVE child; replication and active expiry run there too) keep
/// firing.
#[test]
fn frozen_clock_leaves_the_server_timers_running() {
    let server = Server::start_with(fake_clock());
    let clock = server.clock.as_ref().expect("fake clock");
    let mut c = server.conn();
    clock.freeze_at_ms(T0_MS);
    for (step, jump_ms) in [("frozen", 0), ("frozen after a jump back by 10 days", -864_000_000)] {
        clock.advance_ms(jump_ms);
        let _: () = redis::cmd("SET").arg("k").arg(step).query(&mut c).unwrap();
        let _: String = redis::cmd("BGSAVE").query(&mut c).unwrap();
        wait_until(&format!("BGSAVE to finish ({step})"), Duration::from_secs(10), || {
            info_field(&mut c, "persistence", "rdb_bgsave_in_progress").as_deref() == Some("0")
        });
        assert_eq!(info_field(&mut c, "persistence", "rdb_last_bgsave_status").as_deref(), Some("ok"));
        assert!(server.dir().join("dump.rdb").is_file());
    }
}

/// The shim hides /proc/cpuinfo from fopen()/fopen64() (how it keeps Valkey
/// off the TSC clock) and nothing else, and only when a control file is
/// configured.
#[test]
fn fakeclock_shim_hides_only_proc_cpuinfo_from_fopen() {
    let so = common::fakeclock_so();
    let dir = std::env::temp_dir().join(format!("redis-rl-fopen-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    let probe = dir.join("probe");
    std::fs::write(
        &src,
        r#"#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        FILE *g = fopen64(argv[i], "r");
        printf("%s %s %s\n", argv[i], f ? "ok" : strerror(errno), g ? "ok" : "-");
        if (f) fclose(f);
        if (g) fclose(g);
    }
    return 0;
}
"#,
    )
    .unwrap();
    let out = Command::new("cc").arg("-O0").arg("-o").arg(&probe).arg(&src).output().expect("run cc");
    assert!(out.status.success(), "{out:?}");
    let other = dir.join("other.txt");
    std::fs::write(&other, "x").unwrap();
    std::fs::write(dir.join("clock"), "+0\n").unwrap();

    let run = |with_control_file: bool| -> String {
        let mut cmd = Command::new(&probe);
        cmd.arg("/proc/cpuinfo").arg(&other).env("LD_PRELOAD", &so);
        if with_control_file {
            cmd.env("FAKECLOCK_FILE", dir.join("clock"));
        } else {
            cmd.env_remove("FAKECLOCK_FILE");
        }
        let out = cmd.output().expect("run the probe");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let other = other.display();
    assert_eq!(run(true), format!("/proc/cpuinfo No such file or directory -\n{other} ok ok\n"));
    assert_eq!(run(false), format!("/proc/cpuinfo ok ok\n{other} ok ok\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
