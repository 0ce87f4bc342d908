//! Copies of limiter state: a replica attached to a master, and the tools to
//! compare the state two servers (or one server before and after a restart)
//! hold, key by key: `DEBUG DIGEST-VALUE` and `PEXPIRETIME`.
//!
//! Every wait here is a bounded poll with a deadline, never a sleep that
//! waits out time.

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant};

use redis::Connection;

use super::{Server, ServerOptions};

/// How long a replica may take to connect, sync and catch up.
pub const SYNC_DEADLINE: Duration = Duration::from_secs(10);

/// Polls `cond` every 10 ms until it holds; panics after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// `INFO <section>` as text.
pub fn info(con: &mut Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(con).expect("INFO")
}

/// One `field:value` line of `INFO <section>`, if present.
pub fn info_field(con: &mut Connection, section: &str, field: &str) -> Option<String> {
    let text = info(con, section);
    let prefix = format!("{field}:");
    text.lines().find_map(|l| l.trim_end().strip_prefix(prefix.as_str()).map(str::to_string))
}

/// A numeric `INFO` field; panics if it is missing or not a number.
pub fn info_u64(con: &mut Connection, section: &str, field: &str) -> u64 {
    let v = info_field(con, section, field).unwrap_or_else(|| panic!("INFO {section} has no {field}"));
    v.parse().unwrap_or_else(|e| panic!("INFO {section} {field}:{v}: {e}"))
}

/// How many times `command` (e.g. `rl.apply`) ran on this server: `calls=`
/// of `cmdstat_<command>` in `INFO commandstats`, 0 if it never ran. The
/// name is matched case-insensitively (module commands keep the case they
/// were registered with: `cmdstat_RL.APPLY`).
pub fn command_calls(con: &mut Connection, command: &str) -> u64 {
    let text = info(con, "commandstats");
    let prefix = format!("cmdstat_{command}:").to_ascii_lowercase();
    let Some(stats) = text.lines().find_map(|l| {
        let l = l.trim_end();
        l.to_ascii_lowercase().starts_with(&prefix).then(|| l[prefix.len()..].to_string())
    }) else {
        return 0;
    };
    stats
        .split(',')
        .find_map(|kv| kv.strip_prefix("calls="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cmdstat_{command}:{stats}: no calls="))
}

/// The master's replication offset (`master_repl_offset`).
pub fn master_offset(master: &mut Connection) -> u64 {
    info_u64(master, "replication", "master_repl_offset")
}

/// Lets `clock` run (at real speed) from `at_ms` ms since the epoch on.
pub fn run_clock_from(clock: &super::FakeClock, at_ms: u64) {
    let now_us = super::epoch_ms_now() as i64 * 1000;
    clock.set_offset_us(at_ms as i64 * 1000 - now_us);
}

/// Starts a replica of `master` with `opts` (`--replicaof` is appended to
/// its `extra_args`) and waits until it is in sync.
///
/// Sets the master's `repl-diskless-sync-delay` to 0 first: the default
/// delay of 5 s is measured on the master's wall clock, which a frozen fake
/// clock never lets pass.
pub fn start_replica(master: &Server, mut opts: ServerOptions) -> Server {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-diskless-sync-delay")
        .arg(0)
        .query(&mut master.conn())
        .expect("CONFIG SET repl-diskless-sync-delay 0");
    opts.extra_args.extend(["--replicaof".to_string(), "127.0.0.1".to_string(), master.port.to_string()]);
    let replica = Server::start_with(opts);
    wait_for_sync(master, &replica);
    replica
}

/// Waits (bounded) until `replica`'s link to `master` is up, no sync is in
/// progress, and the replica has processed the master's whole replication
/// stream (`slave_repl_offset` of the replica equals `master_repl_offset`
/// of the master, read after the link came up).
pub fn wait_for_sync(master: &Server, replica: &Server) {
    let mut m = master.conn();
    let mut r = replica.conn();
    let deadline = Instant::now() + SYNC_DEADLINE;
    while info_field(&mut r, "replication", "master_link_status").as_deref() != Some("up")
        || info_field(&mut r, "replication", "master_sync_in_progress").as_deref() != Some("0")
    {
        assert!(
            Instant::now() < deadline,
            "the replica's link did not come up within {SYNC_DEADLINE:?}\n{}\n{}",
            master.log_tail(),
            replica.log_tail()
        );
        thread::sleep(Duration::from_millis(10));
    }
    loop {
        let want = master_offset(&mut m);
        let got = info_u64(&mut r, "replication", "slave_repl_offset");
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica stuck at offset {got}, master at {want}\n{}\n{}",
            master.log_tail(),
            replica.log_tail()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// `WAIT 1 5000` on the master: every write the master has propagated on
/// this connection has reached at least one replica. Panics otherwise.
pub fn wait_for_replica_offset(master: &mut Connection) {
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(master).expect("WAIT");
    assert!(acked >= 1, "WAIT 1 5000: no replica acknowledged the writes");
}

/// `DEBUG DIGEST-VALUE key`: a 40-hex-digit digest of the value; all zeros
/// when the key does not exist (or is logically expired for this client).
pub fn digest(con: &mut Connection, key: &str) -> String {
    let v: Vec<String> = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg(key).query(con).expect("DEBUG DIGEST-VALUE");
    assert_eq!(v.len(), 1, "DEBUG DIGEST-VALUE {key}: {v:?}");
    v.into_iter().next().unwrap_or_default()
}

/// The digest `DEBUG DIGEST-VALUE` gives for a missing key.
pub fn is_missing_digest(d: &str) -> bool {
    d.bytes().all(|b| b == b'0')
}

/// `PEXPIRETIME key`: absolute expiry in ms since the epoch, -1 without
/// one, -2 when the key does not exist.
pub fn pexpiretime(con: &mut Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(con).expect("PEXPIRETIME")
}

/// What one key holds, as far as the contract can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyState {
    pub digest: String,
    pub expire_at_ms: i64,
}

/// Every key's digest and absolute expiry, by name. Panics on a key that
/// `KEYS *` lists but that reads as missing (a logically expired key): a
/// snapshot is meant to be taken of live keys.
pub type Snapshot = BTreeMap<String, KeyState>;

pub fn snapshot(con: &mut Connection) -> Snapshot {
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(con).expect("KEYS");
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let state = key_state(con, &k);
            assert!(!is_missing_digest(&state.digest), "{k} is listed but reads as missing");
            (k, state)
        })
        .collect()
}

/// The digest and absolute expiry of the given keys (missing ones included,
/// as an all-zero digest and -2).
pub fn snapshot_of(con: &mut Connection, keys: &[String]) -> Snapshot {
    keys.iter().map(|k| (k.clone(), key_state(con, k))).collect()
}

pub fn key_state(con: &mut Connection, key: &str) -> KeyState {
    KeyState { digest: digest(con, key), expire_at_ms: pexpiretime(con, key) }
}

/// Asserts two snapshots are equal, naming every key that differs.
pub fn assert_same_state(what: &str, expected: &Snapshot, actual: &Snapshot) {
    let mut diffs = Vec::new();
    for (k, e) in expected {
        match actual.get(k) {
            None => diffs.push(format!("{k}: missing (expected {e:?})")),
            Some(a) if a != e => diffs.push(format!("{k}: expected {e:?}, got {a:?}")),
            Some(_) => {}
        }
    }
    for k in actual.keys().filter(|k| !expected.contains_key(*k)) {
        diffs.push(format!("{k}: unexpected key"));
    }
    assert!(diffs.is_empty(), "{what}: {} of {} keys differ:\n{}", diffs.len(), expected.len(), diffs.join("\n"));
}

/// Every key of `expected` (a snapshot of `con`'s server) survives DEBUG
/// RELOAD (RDB), RESTORE ... ABSTTL of its DUMP and COPY with the same digest
/// and absolute expiry.
pub fn assert_reload_restore_and_copy_keep(con: &mut Connection, expected: &Snapshot) {
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(con).expect("DEBUG RELOAD");
    assert_same_state("RDB reload", expected, &snapshot(con));
    for (k, state) in expected {
        let payload = super::limiter::dump(con, k).unwrap();
        let copy = format!("{k}:restored");
        let _: () =
            redis::cmd("RESTORE").arg(&copy).arg(state.expire_at_ms).arg(payload).arg("ABSTTL").query(con).unwrap();
        assert_eq!(digest(con, &copy), state.digest, "RESTORE of {k}");
        let copied = format!("{k}:copied");
        let n: i64 = redis::cmd("COPY").arg(k).arg(&copied).query(con).unwrap();
        assert_eq!(n, 1);
        assert_eq!((digest(con, &copied), pexpiretime(con, &copied)), (state.digest.clone(), state.expire_at_ms));
    }
}

/// The log shows no sign of a crash (signal handler report, assertion,
/// Rust panic caught at an entry point).
pub fn assert_no_crash_in_log(server: &Server) {
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    for sign in ["crashed by signal", "Guru Meditation", "ASSERTION FAILED", "rl: panic", "STACK TRACE"] {
        assert!(!log.contains(sign), "the server log shows {sign:?}:\n{}", server.log_tail());
    }
}

/// What [`mixed_workload`] did.
#[derive(Debug, Default)]
pub struct Workload {
    /// Calls that consumed (allowed, cost > 0, not PEEK): each one a write.
    pub writes: u64,
    pub denied: u64,
    /// PEEK and COST 0 calls.
    pub reads: u64,
}

/// A mixed workload of all three commands on `keys_per_algorithm` keys each
/// (named `<prefix>g<i>`, `<prefix>t<i>`, `<prefix>s<i>`), over `rounds`
/// rounds: allowed requests, denials, PEEK, COST 0, costs of 1 to 3, and per
/// round one MULTI/EXEC and one EVAL that call the limiters. The frozen
/// `clock` moves 1337 ms between rounds.
///
/// Every period is at least a minute, so every key it writes lives for
/// minutes (longer than any test takes, on any of its servers' clocks).
pub fn mixed_workload(
    con: &mut Connection,
    clock: &super::FakeClock,
    prefix: &str,
    keys_per_algorithm: usize,
    rounds: usize,
) -> Workload {
    let mut w = Workload::default();
    for r in 0..rounds {
        for i in 0..keys_per_algorithm {
            let cost = (i + r) % 4;
            let peek = if (i + r) % 5 == 4 { " PEEK" } else { "" };
            let lines = [
                format!(
                    "RL.GCRA {prefix}g{i} {} {} BURST {} COST {cost}{peek}",
                    2 + i % 5,
                    600_000 + 1000 * i,
                    2 + i % 4
                ),
                format!("RL.TOKENBUCKET {prefix}t{i} {} 1 {} COST {cost}{peek}", 2 + i % 4, 60_000 + 7 * i),
                format!("RL.SLIDE {prefix}s{i} {} {} COST {cost}{peek}", 2 + i % 4, 600_000 * (1 + i % 3)),
            ];
            for line in &lines {
                let reply = super::limiter::rl(con, line);
                match (reply.allowed, cost == 0 || !peek.is_empty()) {
                    (_, true) => w.reads += 1,
                    (true, false) => w.writes += 1,
                    (false, false) => w.denied += 1,
                }
            }
        }
        // Limiters inside a transaction and a script.
        let replies: Vec<Vec<i64>> = redis::pipe()
            .atomic()
            .cmd("RL.GCRA")
            .arg(format!("{prefix}multi:g"))
            .arg(3)
            .arg(600_000)
            .cmd("RL.TOKENBUCKET")
            .arg(format!("{prefix}multi:t"))
            .arg(4)
            .arg(1)
            .arg(60_000)
            .cmd("RL.SLIDE")
            .arg(format!("{prefix}multi:s"))
            .arg(5)
            .arg(600_000)
            .query(con)
            .expect("MULTI/EXEC of limiters");
        for reply in replies {
            if reply[0] == 1 {
                w.writes += 1;
            } else {
                w.denied += 1;
            }
        }
        let replies: Vec<Vec<i64>> = redis::cmd("EVAL")
            .arg(
                "return {redis.call('RL.GCRA', KEYS[1], 2, 600000, 'COST', ARGV[1]), \
                 redis.call('RL.SLIDE', KEYS[2], 4, 600000)}",
            )
            .arg(2)
            .arg(format!("{prefix}eval:g"))
            .arg(format!("{prefix}eval:s"))
            .arg(r % 2)
            .query(con)
            .expect("EVAL of limiters");
        for (j, reply) in replies.iter().enumerate() {
            match (reply[0] == 1, j == 0 && r % 2 == 0) {
                (_, true) => w.reads += 1,
                (true, false) => w.writes += 1,
                (false, false) => w.denied += 1,
            }
        }
        clock.advance_ms(1337);
    }
    w
}

/// How long an AOF rewrite may take.
pub const AOF_REWRITE_DEADLINE: Duration = Duration::from_secs(20);

/// Waits (bounded) until no AOF rewrite is in progress or scheduled on `s`,
/// and asserts the last one succeeded (`aof_last_bgrewrite_status:ok`).
pub fn wait_for_aof_rewrite(s: &Server) {
    let mut c = s.conn();
    wait_until("the AOF rewrite to finish", AOF_REWRITE_DEADLINE, || {
        info_field(&mut c, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
            && info_field(&mut c, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
    });
    assert_eq!(
        info_field(&mut c, "persistence", "aof_last_bgrewrite_status").as_deref(),
        Some("ok"),
        "{}",
        s.log_tail()
    );
}

/// `BGREWRITEAOF` on `s`, then [`wait_for_aof_rewrite`].
pub fn rewrite_aof(s: &Server) {
    let _: String = redis::cmd("BGREWRITEAOF").query(&mut s.conn()).expect("BGREWRITEAOF");
    wait_for_aof_rewrite(s);
}

/// A file of the multi-part AOF whose name contains `part`.
pub fn aof_file(s: &Server, part: &str) -> Vec<u8> {
    let dir = s.dir().join("appendonlydir");
    let path = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(part)))
        .unwrap_or_else(|| panic!("no AOF file {part}"));
    std::fs::read(path).expect("read the AOF file")
}

/// The payload of every `RL.APPLY key payload` in an AOF file.
pub fn apply_payloads(aof: &[u8]) -> Vec<Vec<u8>> {
    let marker = b"$8\r\nRL.APPLY\r\n";
    let mut out = Vec::new();
    let mut at = 0;
    // Reads a bulk string `$len\r\n<bytes>\r\n` at `i`.
    let bulk = |i: usize| -> (Vec<u8>, usize) {
        let nl = i + aof[i..].windows(2).position(|w| w == b"\r\n").unwrap();
        let len: usize = std::str::from_utf8(&aof[i + 1..nl]).unwrap().parse().unwrap();
        (aof[nl + 2..nl + 2 + len].to_vec(), nl + 2 + len + 2)
    };
    while let Some(pos) = aof[at..].windows(marker.len()).position(|w| w == marker) {
        let (_key, next) = bulk(at + pos + marker.len());
        let (payload, next) = bulk(next);
        out.push(payload);
        at = next;
    }
    out
}

/// What [`replica_and_aof_replay`] saw, for its caller's own checks.
#[derive(Debug)]
pub struct Copies {
    /// Every key the master held after the workload (digest and absolute
    /// expiry): what the replica, the AOF replay and the replay of the
    /// rewritten AOF each held.
    pub expected: Snapshot,
    /// The payload of every `RL.APPLY` in the incremental AOF the workload
    /// wrote: the effects the master propagated.
    pub propagated: Vec<Vec<u8>>,
    /// The payload of every `RL.APPLY` in the rewritten AOF: one per key.
    pub rewritten: Vec<Vec<u8>>,
}

/// Every copy of a master's limiter state holds exactly that state:
///
/// 1. a master with `appendonly yes`, `appendfsync always` and no RDB
///    preamble (so the rewrite writes each key as `RL.APPLY`), its clock
///    frozen at [`T0_MS`](super::T0_MS), and a replica whose own clock is
///    frozen at `replica_at_ms` (elsewhere: it stores what the master
///    decided, never decides itself);
/// 2. `workload` on the master (which moves the master's clock as it likes);
///    once the replica has acknowledged every write, it holds the master's
///    keys;
/// 3. the master is killed (SIGKILL) and replays its AOF: the same keys;
/// 4. `BGREWRITEAOF`: the rewritten AOF holds one `RL.APPLY` per key; killed
///    again, the master replays it: the same keys.
///
/// Returns the master's keys and the `RL.APPLY` payloads of the AOF before
/// and after the rewrite, for the caller's checks of its own kind.
pub fn replica_and_aof_replay(replica_at_ms: u64, workload: impl FnOnce(&Server, &mut Connection)) -> Copies {
    let mut master = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: ["--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    });
    master.clock.as_ref().expect("a fake clock").freeze_at_ms(super::T0_MS);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    replica.clock.as_ref().expect("a fake clock").freeze_at_ms(replica_at_ms);

    let mut m = master.conn();
    workload(&master, &mut m);
    wait_for_replica_offset(&mut m);
    let expected = snapshot(&mut m);
    assert_same_state("replica", &expected, &snapshot(&mut replica.conn()));
    let propagated = apply_payloads(&aof_file(&master, ".incr.aof"));
    drop(m);

    master.restart();
    assert_same_state("AOF replay", &expected, &snapshot(&mut master.conn()));

    rewrite_aof(&master);
    let rewritten = apply_payloads(&aof_file(&master, ".base."));
    assert_eq!(rewritten.len(), expected.len(), "one RL.APPLY per key in the rewritten AOF");
    master.restart();
    assert_same_state("rewritten AOF replay", &expected, &snapshot(&mut master.conn()));
    Copies { expected, propagated, rewritten }
}
