//! `RL.ACQUIRE ... WAIT timeout_ms` end to end, on the fake clock: waiters
//! granted first in, first out, each exactly once, never more than the
//! limit held; woken by releases, by lease expiry on the server's clock
//! (a holder that crashed) and by a raised limit; timeouts on the server's
//! clock, answered as the denial of that instant; a closed connection
//! leaves nothing behind; no barging by acquires without WAIT; no blocking
//! inside MULTI; only grants reach a replica; errors for WAIT where nothing
//! waits. Every wait for a reply is bounded in real time.

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::limiter::{err_of, exists, raw};
use common::replication::{digest, info_u64, start_replica, wait_for_replica_offset};
use common::{frozen_server, Server, ServerOptions};
use redis::{Connection, Value};

/// How long any one reply may take to arrive (real time).
const REPLY_BOUND: Duration = Duration::from_secs(10);

/// The six fields of an RL.ACQUIRE reply.
fn fields(v: &Value) -> (bool, i64, i64, i64, i64, Option<String>) {
    let Value::Array(items) = v else { panic!("reply {v:?}") };
    let n: Vec<i64> = items[..5].iter().map(|x| redis::from_redis_value(x).unwrap()).collect();
    let lease: Option<String> = redis::from_redis_value(&items[5]).unwrap();
    (n[0] == 1, n[1], n[2], n[3], n[4], lease)
}

fn acquire(c: &mut Connection, line: &str) -> (bool, i64, i64, i64, i64, Option<String>) {
    let words: Vec<&str> = line.split(' ').collect();
    fields(&raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}")))
}

fn int(c: &mut Connection, words: &[&str]) -> i64 {
    redis::from_redis_value(&raw(c, words).unwrap_or_else(|e| panic!("{words:?}: {e}"))).unwrap()
}

/// `rl_wait`'s field `name` in INFO rl.
fn wait_stat(c: &mut Connection, name: &str) -> u64 {
    let text: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    let line = text.lines().find(|l| l.starts_with("rl_wait:")).unwrap_or_else(|| panic!("no rl_wait in {text}"));
    line["rl_wait:".len()..]
        .trim_end()
        .split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(|v| v.parse().unwrap()))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// Waits (bounded) until `waiting` clients wait on the server.
fn until_waiting(c: &mut Connection, waiting: u64) {
    let deadline = Instant::now() + REPLY_BOUND;
    while wait_stat(c, "waiting") != waiting {
        assert!(Instant::now() < deadline, "never {waiting} waiting (now {})", wait_stat(c, "waiting"));
        thread::sleep(Duration::from_millis(2));
    }
}

/// Starts a waiter on its own connection: it sends `line` and sends its
/// reply (or error) back with `tag`.
fn waiter(
    s: &Server,
    line: String,
    tag: usize,
    out: mpsc::Sender<(usize, Result<Value, String>)>,
) -> thread::JoinHandle<()> {
    let mut c = s.conn();
    c.set_read_timeout(Some(REPLY_BOUND)).unwrap();
    thread::spawn(move || {
        let words: Vec<&str> = line.split(' ').collect();
        let r = raw(&mut c, &words).map_err(|e| e.to_string());
        let _ = out.send((tag, r));
    })
}

/// 200 waiters on a limit of 10, arriving in order while 10 leases are
/// held: every one is granted exactly once, in arrival order, each right
/// after the release that made room, and never more than 10 are held.
#[test]
fn two_hundred_waiters_are_granted_once_each_in_arrival_order() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let mut held: Vec<String> = (0..10).map(|_| acquire(&mut c, "RL.ACQUIRE q 10 600000").5.unwrap()).collect();
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    for i in 0..200 {
        threads.push(waiter(&s, "RL.ACQUIRE q 10 600000 WAIT 600000".into(), i, tx.clone()));
        until_waiting(&mut c, i as u64 + 1);
    }
    let mut next = 0;
    while next < 200 {
        // Make room for one: the next waiter in line gets it.
        let lease = held.remove(0);
        assert_eq!(int(&mut c, &["RL.RELEASE", "q", &lease]), 1);
        let (tag, r) = rx.recv_timeout(REPLY_BOUND).expect("no grant after a release");
        assert_eq!(tag, next, "granted out of order");
        let (allowed, limit, remaining, _, _, lease) = fields(&r.unwrap());
        assert!(allowed && limit == 10 && remaining == 0, "grant {next}");
        held.push(lease.unwrap());
        // Exactly the limit is held: 10 leases, no more.
        assert_eq!(acquire(&mut c, "RL.ACQUIRE q 10 600000 COST 0").2, 0);
        next += 1;
    }
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "a waiter answered twice");
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(wait_stat(&mut c, "waiting"), 0);
    assert_eq!((wait_stat(&mut c, "waits"), wait_stat(&mut c, "grants")), (200, 200));
    for lease in &held {
        assert_eq!(int(&mut c, &["RL.RELEASE", "q", lease]), 1);
    }
    assert!(!exists(&mut c, "q"));
}

/// A holder that never releases (its client crashed): the waiter gets the
/// slot when the lease's deadline passes on the server's clock, with no
/// other call, and its lease runs from the grant.
#[test]
fn a_waiter_is_granted_when_a_crashed_holders_lease_expires() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE x 1 1000").0);
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE x 1 5000 WAIT 60000".into(), 0, tx);
    until_waiting(&mut c, 1);
    s.clock.as_ref().unwrap().advance_ms(999);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "granted before the lease expired");
    s.clock.as_ref().unwrap().advance_ms(1);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("no grant at the deadline");
    let (allowed, _, remaining, _, reset, lease) = fields(&r.unwrap());
    assert!(allowed && lease.is_some());
    assert_eq!((remaining, reset), (0, 5000), "the lease runs from the grant");
    t.join().unwrap();
}

/// A timeout is on the server's clock, exact to the ms, and answered as the
/// denial an acquire made then would get; the waiter leaves nothing behind.
#[test]
fn a_timeout_answers_the_denial_of_that_instant() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE t 1 10000").0);
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE t 1 10000 WAIT 500".into(), 0, tx);
    until_waiting(&mut c, 1);
    // As BLPOP's: the timeout has passed once more than 500 ms have.
    s.clock.as_ref().unwrap().advance_ms(500);
    assert!(rx.recv_timeout(Duration::from_millis(150)).is_err(), "answered before its timeout");
    s.clock.as_ref().unwrap().advance_ms(1);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("no answer once the timeout passed");
    let (allowed, limit, remaining, retry, reset, lease) = fields(&r.unwrap());
    assert_eq!((allowed, limit, remaining, retry, reset, lease), (false, 1, 0, 9499, 9499, None));
    t.join().unwrap();
    assert_eq!((wait_stat(&mut c, "waiting"), wait_stat(&mut c, "timeouts")), (0, 1));
}

/// A waiter whose connection closes never receives a lease: after the
/// holder releases, the key is empty (deleted), and a new acquire fits.
#[test]
fn a_closed_connection_leaves_the_queue_clean() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (_, _, _, _, _, lease) = acquire(&mut c, "RL.ACQUIRE d 1 60000");
    {
        let mut gone = s.conn();
        gone.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        let r: redis::RedisResult<Value> =
            redis::cmd("RL.ACQUIRE").arg("d").arg(1).arg(60000).arg("WAIT").arg(60000).query(&mut gone);
        assert!(r.is_err(), "it blocks, and the read times out: {r:?}");
        assert_eq!(wait_stat(&mut c, "waiting"), 1);
    }
    // The connection is closed (dropped): the server notices.
    let deadline = Instant::now() + REPLY_BOUND;
    while wait_stat(&mut c, "waiting") != 0 {
        assert!(Instant::now() < deadline, "the closed waiter still waits");
        thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(int(&mut c, &["RL.RELEASE", "d", &lease.unwrap()]), 1);
    assert!(!exists(&mut c, "d"), "a lease was left for the closed waiter");
    assert!(acquire(&mut c, "RL.ACQUIRE d 1 60000").0);
}

/// A wait that ends by its timeout, or by its client closing the
/// connection, frees what the server allocated to block the client (the
/// blocked-client handle and its reply client, about 23 KB): the module
/// unblocks it (RedisModule_UnblockClient), as the module API requires for
/// every blocked client however it ends. Found by scripts/memcheck.sh
/// (valgrind: "definitely lost ... by RM_BlockClient"); before, each such
/// wait leaked it, and `used_memory` grew by megabytes here.
#[test]
fn timed_out_and_disconnected_waiters_leave_no_memory_behind() {
    let s = Server::start();
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE m 1 600000").0);
    let used = |c: &mut Connection| info_u64(c, "memory", "used_memory");
    let clients = |c: &mut Connection| info_u64(c, "clients", "connected_clients");
    // Each wait: one that times out (after 1 ms), and one whose client
    // closes while it waits.
    let waits = |c: &mut Connection, n: usize| {
        for _ in 0..n {
            let (allowed, ..) = acquire(c, "RL.ACQUIRE m 1 600000 WAIT 1");
            assert!(!allowed, "the holder keeps its lease");
            let mut gone = s.conn();
            gone.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
            let r: redis::RedisResult<Value> =
                redis::cmd("RL.ACQUIRE").arg("m").arg(1).arg(600000).arg("WAIT").arg(60000).query(&mut gone);
            assert!(r.is_err(), "it blocks, and the read times out: {r:?}");
            until_waiting(c, 1);
            drop(gone);
            until_waiting(c, 0);
        }
        let deadline = Instant::now() + REPLY_BOUND;
        while clients(c) != 1 {
            assert!(Instant::now() < deadline, "the closed connections are still open");
            thread::sleep(Duration::from_millis(2));
        }
    };
    waits(&mut c, 5);
    let before = used(&mut c);
    waits(&mut c, 50);
    let after = used(&mut c);
    assert_eq!(wait_stat(&mut c, "timeouts"), 55);
    // 100 waits leaked 2.3 MB; allow the allocator's noise.
    assert!(after < before + 200_000, "used_memory {before} before 100 ended waits, {after} after");
}

/// No barging: while a waiter waits, an acquire without WAIT that would
/// fit is denied, so the waiter's turn comes first; a renewal by ID is not
/// held back. A raised limit makes room for the waiter.
#[test]
fn acquires_without_wait_never_take_units_ahead_of_a_waiter() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE b 2 60000 ID holder").0);
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE b 2 60000 COST 2 WAIT 60000".into(), 0, tx);
    until_waiting(&mut c, 1);
    let (allowed, _, remaining, retry, _, lease) = acquire(&mut c, "RL.ACQUIRE b 2 60000");
    assert!(!allowed && lease.is_none() && retry >= 1, "barged ahead of the waiter");
    assert_eq!(remaining, 1);
    let all: Value =
        redis::cmd("RL.ALL").arg(1).arg("b").arg(&["CONCURRENCY", "2", "60000"][..]).query(&mut c).unwrap();
    assert!(matches!(&all, Value::Array(v) if v[0] == Value::Int(0)), "RL.ALL barged: {all:?}");
    // Renewing the live lease takes no units.
    assert!(acquire(&mut c, "RL.ACQUIRE b 2 60000 ID holder").0);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    // A call with a higher limit makes room (it is itself denied: the waiter is first).
    assert!(!acquire(&mut c, "RL.ACQUIRE b 3 60000").0);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("a raised limit did not wake the waiter");
    let (allowed, limit, remaining, ..) = fields(&r.unwrap());
    assert_eq!((allowed, limit, remaining), (true, 3, 0));
    t.join().unwrap();
}

/// A PEEK answers what the acquire would while a waiter waits (denied, the
/// waiter first), RL.PEEK as RL.ACQUIRE ... PEEK does, and changes
/// nothing: a PEEK with a higher limit neither becomes the waiters' limit
/// nor wakes them.
#[test]
fn a_peek_behind_a_waiter_answers_as_the_acquire_and_wakes_no_one() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE p 2 60000 ID holder").0);
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE p 2 60000 COST 2 WAIT 60000".into(), 0, tx);
    until_waiting(&mut c, 1);
    let denied = (false, 2, 1, 60000, 60000, None);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE p 2 60000 PEEK"), denied);
    assert_eq!(acquire(&mut c, "RL.PEEK CONCURRENCY p 2 60000"), denied);
    for line in ["RL.ACQUIRE p 3 60000 PEEK", "RL.PEEK CONCURRENCY p 3 60000"] {
        let (allowed, limit, ..) = acquire(&mut c, line);
        assert_eq!((allowed, limit), (false, 3), "{line}");
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "{line} woke the waiter");
        // Nor did it become the waiters' limit for the next call.
        assert_eq!(acquire(&mut c, "RL.ACQUIRE p 2 60000"), denied, "after {line}");
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "after {line}");
    }
    // A real call with the higher limit still makes room.
    assert!(!acquire(&mut c, "RL.ACQUIRE p 3 60000").0);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("a raised limit did not wake the waiter");
    assert!(fields(&r.unwrap()).0, "the waiter was not granted");
    t.join().unwrap();
}

/// Inside MULTI (and scripts) WAIT does not block: the call answers as
/// without it. Where nothing waits, WAIT is an error; its timeout is 1 to
/// 600,000 ms.
#[test]
fn wait_never_blocks_inside_multi_and_is_refused_where_nothing_waits() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(acquire(&mut c, "RL.ACQUIRE m 1 60000").0);
    let replies: Vec<Value> =
        redis::pipe().atomic().cmd("RL.ACQUIRE").arg(&["m", "1", "60000", "WAIT", "1000"][..]).query(&mut c).unwrap();
    assert!(!fields(&replies[0]).0);
    let script: Value = redis::cmd("EVAL")
        .arg("return redis.call('RL.ACQUIRE', KEYS[1], 1, 60000, 'WAIT', 1000)")
        .arg(1)
        .arg("m")
        .query(&mut c)
        .unwrap();
    assert!(!fields(&script).0);
    assert_eq!(wait_stat(&mut c, "waits"), 0);
    for (words, want) in [
        (&["RL.ACQUIRE", "m", "1", "1000", "WAIT", "0"][..], "ERR timeout_ms is out of range (must be 1 to 600000)"),
        (&["RL.ACQUIRE", "m", "1", "1000", "WAIT", "600001"], "ERR timeout_ms is out of range (must be 1 to 600000)"),
        (&["RL.ACQUIRE", "m", "1", "1000", "WAIT"], "ERR syntax error: WAIT needs a value"),
        (&["RL.ACQUIRE", "m", "1", "1000", "WAIT", "5", "WAIT", "5"], "ERR syntax error: WAIT given more than once"),
        (&["RL.ACQUIRE", "m", "1", "1000", "WAIT", "5", "PEEK"], "ERR syntax error: WAIT cannot be combined with PEEK"),
        (
            &["RL.ALL", "1", "m", "CONCURRENCY", "1", "1000", "WAIT", "5"],
            "ERR syntax error: WAIT is not accepted here: RL.ALL does not wait (spec 1)",
        ),
        (
            &["RL.PEEK", "CONCURRENCY", "m", "1", "1000", "WAIT", "5"],
            "ERR syntax error: WAIT is not accepted here: RL.PEEK does not wait",
        ),
    ] {
        assert_eq!(err_of(&mut c, words), want, "{words:?}");
    }
}

/// Only a grant writes, and it reaches a replica as any acquire's effect:
/// the replica holds the master's set after the wait.
#[test]
fn a_replica_sees_only_the_grant() {
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions::default());
    let mut m = master.conn();
    let (_, _, _, _, _, lease) = acquire(&mut m, "RL.ACQUIRE r 1 60000");
    let (tx, rx) = mpsc::channel();
    let t = waiter(&master, "RL.ACQUIRE r 1 60000 WAIT 60000".into(), 0, tx);
    until_waiting(&mut m, 1);
    assert_eq!(int(&mut m, &["RL.RELEASE", "r", &lease.unwrap()]), 1);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("no grant");
    assert!(fields(&r.unwrap()).0);
    t.join().unwrap();
    wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r, "r"), digest(&mut m, "r"));
    assert!(exists(&mut r, "r"));
}

/// A key deleted, renamed away or moved to another database under its
/// waiters answers them with an error that says so (before, a missing key
/// read as empty and they were granted a fresh lease set); the module's own
/// deletion of a key (its last lease released) grants them as before.
#[test]
fn waiters_of_a_key_deleted_renamed_or_moved_are_told_so() {
    let gone = "the key was deleted, renamed or moved while the client waited (its slot may have migrated): retry";
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (how, words) in [
        ("DEL", vec!["DEL", "q"]),
        ("UNLINK", vec!["UNLINK", "q"]),
        ("RENAME", vec!["RENAME", "q", "q2"]),
        ("MOVE", vec!["MOVE", "q", "1"]),
    ] {
        assert!(acquire(&mut c, "RL.ACQUIRE q 1 60000").0, "{how}");
        let (tx, rx) = mpsc::channel();
        let threads: Vec<_> =
            (0..3).map(|i| waiter(&s, "RL.ACQUIRE q 1 60000 WAIT 60000".to_string(), i, tx.clone())).collect();
        until_waiting(&mut c, 3);
        let _: Value = raw(&mut c, &words).unwrap();
        for _ in 0..3 {
            let (tag, r) = rx.recv_timeout(REPLY_BOUND).expect("a waiter was not answered");
            let e = r.unwrap_err();
            assert!(e.ends_with(gone), "{how}, waiter {tag}: {e}");
        }
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(wait_stat(&mut c, "waiting"), 0, "{how}");
        assert!(!exists(&mut c, "q"), "{how}: a waiter took a lease on the gone key");
        let _: Value = raw(&mut c, &["FLUSHALL"]).unwrap();
    }
    // The module deleting the key itself (the last lease released) grants.
    let (_, _, _, _, _, lease) = acquire(&mut c, "RL.ACQUIRE q 1 60000");
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE q 1 60000 WAIT 60000".to_string(), 0, tx);
    until_waiting(&mut c, 1);
    assert_eq!(int(&mut c, &["RL.RELEASE", "q", &lease.unwrap()]), 1);
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("the waiter was not answered");
    assert!(fields(&r.unwrap()).0, "granted after the release that deleted the key");
    t.join().unwrap();
}

/// Writes of every kind that fire generic keyspace events.
fn generic_writes(c: &mut Connection) {
    for words in [
        &["SET", "a", "v", "PX", "60000"][..],
        &["EXPIRE", "a", "100"],
        &["RENAME", "a", "b"],
        &["DEL", "b"],
        &["SET", "c", "v", "EX", "10"],
        &["UNLINK", "c"],
    ] {
        let _: Value = raw(c, words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    }
}

/// Nobody waiting costs the server's other writes nothing: the module is
/// not called for their keyspace events. (Before, it subscribed at load,
/// so every DEL, EXPIRE or SET with a TTL on the server made and freed a
/// module context for it, about a tenth of a SET PX.) It subscribes with
/// its first waiter and, where the server can end a subscription (Redis
/// 8.2 on), ends it once the last waiter has left.
#[test]
fn the_module_hears_keyspace_events_only_while_clients_wait() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    generic_writes(&mut c);
    assert_eq!(wait_stat(&mut c, "watching_keys"), 0, "subscribed with nobody waiting");
    assert_eq!(wait_stat(&mut c, "key_events"), 0, "called for others' keyspace events with nobody waiting");

    // A waiter: its key's deletion is heard, and answers it.
    assert!(acquire(&mut c, "RL.ACQUIRE q 1 60000").0);
    let (tx, rx) = mpsc::channel();
    let t = waiter(&s, "RL.ACQUIRE q 1 60000 WAIT 60000".to_string(), 0, tx);
    until_waiting(&mut c, 1);
    assert_eq!(wait_stat(&mut c, "watching_keys"), 1, "not subscribed while a client waits");
    let _: Value = raw(&mut c, &["DEL", "q"]).unwrap();
    let (_, r) = rx.recv_timeout(REPLY_BOUND).expect("the waiter was not answered");
    assert!(r.unwrap_err().contains("the key was deleted"), "the DEL was not heard");
    t.join().unwrap();
    assert!(wait_stat(&mut c, "key_events") >= 1);

    // The last waiter gone: the next tick of the waiters' timer ends the
    // subscription where the server can.
    let v = s.version();
    let can_end = !v.is_valkey() && v.at_least(8, 2, 0);
    s.clock.as_ref().unwrap().advance_ms(10);
    if can_end {
        let deadline = Instant::now() + REPLY_BOUND;
        while wait_stat(&mut c, "watching_keys") != 0 {
            assert!(Instant::now() < deadline, "{v}: still subscribed with nobody waiting");
            s.clock.as_ref().unwrap().advance_ms(10);
            thread::sleep(Duration::from_millis(2));
        }
    }
    let watching = wait_stat(&mut c, "watching_keys");
    let before = wait_stat(&mut c, "key_events");
    generic_writes(&mut c);
    let heard = wait_stat(&mut c, "key_events") - before;
    if watching == 0 {
        assert_eq!(heard, 0, "{v}: called for keyspace events after the subscription ended");
    } else {
        assert!(!can_end, "{v} can end the subscription");
        assert!(heard > 0, "{v}: subscribed, yet no event was heard");
    }
}
