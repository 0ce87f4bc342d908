//! Concurrency limits end to end (RL.ACQUIRE, RL.RELEASE, RL.RENEW, the
//! CONCURRENCY spec of RL.ALL, RL.PEEK CONCURRENCY), on the fake clock:
//! weighted leases, the six-field reply, exact retry and reset, leases that
//! expire by themselves to the millisecond (a crashed holder), idempotent
//! named leases, errors that write nothing, 16 clients on one key, clock
//! jumps, memory, and replicas, AOF (and its rewrite), RDB, DUMP, RESTORE
//! and COPY holding exactly the master's set.

mod common;

use common::limiter::{allowed_by_concurrent_clients, dump, err_of, exists, pttl, r, raw, Reply};
use common::replication::{assert_reload_restore_and_copy_keep, replica_and_aof_replay, snapshot, start_replica};
use common::{freeze, frozen_server, Server, ServerOptions, T0_MS};
use redis::{Connection, Value};

/// The six fields of an RL.ACQUIRE reply (RESP2): the five, and the lease.
fn parse(v: &Value) -> (Reply, Option<String>) {
    let Value::Array(items) = v else { panic!("reply {v:?}") };
    assert_eq!(items.len(), 6, "{v:?}");
    let n: Vec<i64> = items[..5].iter().map(|x| redis::from_redis_value(x).unwrap()).collect();
    let lease: Option<String> = redis::from_redis_value(&items[5]).unwrap();
    (Reply::new(n[0] == 1, n[1], n[2], n[3], n[4]), lease)
}

fn acquire(c: &mut Connection, line: &str) -> (Reply, Option<String>) {
    let words: Vec<&str> = line.split(' ').collect();
    parse(&raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}")))
}

fn int(c: &mut Connection, words: &[&str]) -> i64 {
    redis::from_redis_value(&raw(c, words).unwrap_or_else(|e| panic!("{words:?}: {e}"))).unwrap()
}

#[test]
fn weighted_leases_answer_six_fields_with_exact_retry_and_reset() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (reply, a) = acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 2");
    assert_eq!(reply, r(true, 5, 3, 0, 10000));
    // A generated id: the acquire time in ms and a sequence number.
    let a = a.unwrap();
    assert!(a.starts_with(&format!("{T0_MS}-")), "{a}");
    assert_eq!(pttl(&mut c, "pool"), 10000);
    freeze(&s, T0_MS + 4000);
    let (reply, b) = acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 3");
    assert_eq!(reply, r(true, 5, 0, 0, 10000));
    assert_ne!(b.as_deref(), Some(a.as_str()));
    // Full: cost 1 waits for the first lease (2 units, until T0 + 10 s);
    // cost 4 for the second too (until T0 + 14 s); 6 can never fit.
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000"), (r(false, 5, 0, 6000, 10000), None));
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 4"), (r(false, 5, 0, 10000, 10000), None));
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 6"), (r(false, 5, 0, -1, 10000), None));
    // PEEK and COST 0 answer, with no lease, and write nothing.
    let before = dump(&mut c, "pool");
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 0"), (r(true, 5, 0, 0, 10000), None));
    assert_eq!(dump(&mut c, "pool"), before);
    // A holder that never releases frees its units at its deadline, to the ms.
    freeze(&s, T0_MS + 9999);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000").0, r(false, 5, 0, 1, 4001));
    freeze(&s, T0_MS + 10000);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000 PEEK"), (r(true, 5, 1, 0, 10000), None));
    assert_eq!(dump(&mut c, "pool"), before, "PEEK wrote nothing");
    assert_eq!(acquire(&mut c, "RL.ACQUIRE pool 5 10000 COST 2").0, r(true, 5, 0, 0, 10000));
    // Idle: the key vanishes when the last lease expires.
    freeze(&s, T0_MS + 20001);
    assert!(!exists(&mut c, "pool"));
}

#[test]
fn resp3_adds_the_lease_to_the_map() {
    let s = frozen_server(&[]);
    let mut c = s.conn_resp3();
    let v = raw(&mut c, &["RL.ACQUIRE", "k", "1", "1000", "ID", "job-7"]).unwrap();
    let Value::Map(fields) = v else { panic!("{v:?}") };
    let names: Vec<String> = fields.iter().map(|(k, _)| redis::from_redis_value(k).unwrap()).collect();
    assert_eq!(names, ["allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "lease"]);
    let lease: String = redis::from_redis_value(&fields[5].1).unwrap();
    assert_eq!(lease, "job-7");
    let v = raw(&mut c, &["RL.ACQUIRE", "k", "1", "1000"]).unwrap();
    let Value::Map(fields) = v else { panic!("{v:?}") };
    assert_eq!(fields[5].1, Value::Nil);
}

#[test]
fn a_named_lease_is_renewed_by_a_retried_acquire_never_taken_twice() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-1 COST 2"), (r(true, 2, 0, 0, 1000), Some("job-1".into())));
    freeze(&s, T0_MS + 600);
    // The retry renews (deadline now + 1000), whatever COST or the limit say.
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-1 COST 2"), (r(true, 2, 0, 0, 1000), Some("job-1".into())));
    assert_eq!(pttl(&mut c, "k"), 1000);
    assert!(acquire(&mut c, "RL.ACQUIRE k 1 1000 ID job-1 COST 5").0.allowed);
    // Another id finds no room; PEEK of the named lease answers the renewal, lease nil.
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-2").0, r(false, 2, 0, 1000, 1000));
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-1 PEEK"), (r(true, 2, 0, 0, 1000), None));
    // COST 0 never renews.
    freeze(&s, T0_MS + 900);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-1 COST 0"), (r(true, 2, 0, 0, 700), None));
    assert_eq!(pttl(&mut c, "k"), 700);
    // Released, the id can be acquired again as a new lease.
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", "job-1"]), 1);
    assert!(!exists(&mut c, "k"), "the last lease ended: the key is gone");
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 1000 ID job-1").0, r(true, 2, 1, 0, 1000));
}

#[test]
fn release_and_renew_answer_1_for_a_live_lease_and_write_only_then() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (_, a) = acquire(&mut c, "RL.ACQUIRE k 3 1000");
    let (_, b) = acquire(&mut c, "RL.ACQUIRE k 3 5000");
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", "nobody"]), 0);
    let before = (dump(&mut c, "k"), pttl(&mut c, "k"));
    assert_eq!(int(&mut c, &["RL.RENEW", "k", "nobody", "1000"]), 0);
    assert_eq!((dump(&mut c, "k"), pttl(&mut c, "k")), before, "a 0 writes nothing");
    // Renew extends to now + lease_ms; the key lives until the last deadline.
    freeze(&s, T0_MS + 500);
    assert_eq!(int(&mut c, &["RL.RENEW", "k", &a, "9000"]), 1);
    assert_eq!(pttl(&mut c, "k"), 9000);
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", &a]), 1);
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", &a]), 0, "already released");
    assert_eq!(pttl(&mut c, "k"), 4500);
    // An expired lease is gone: release and renew answer 0.
    freeze(&s, T0_MS + 5000);
    assert_eq!(int(&mut c, &["RL.RENEW", "k", &b, "1000"]), 0);
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", &b]), 0);
    let info: String = redis::cmd("INFO").arg("rl").query(&mut c).unwrap();
    assert!(info.contains("rl_release:calls=4,allowed=1,"), "{info}");
    assert!(info.contains("rl_renew:calls=3,allowed=1,"), "{info}");
}

#[test]
fn bad_input_is_an_error_that_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    acquire(&mut c, "RL.ACQUIRE k 3 1000 ID x");
    let before = (dump(&mut c, "k"), pttl(&mut c, "k"));
    let long = "x".repeat(129);
    for (words, want) in [
        (vec!["RL.ACQUIRE", "k", "0", "1000"], "ERR limit is out of range (must be 1 to 100000)"),
        (vec!["RL.ACQUIRE", "k", "100001", "1000"], "ERR limit is out of range (must be 1 to 100000)"),
        (vec!["RL.ACQUIRE", "k", "3", "0"], "ERR lease_ms is out of range (must be 1 to 1000000000000)"),
        (vec!["RL.ACQUIRE", "k", "3", "1000000000001"], "ERR lease_ms is out of range"),
        (vec!["RL.ACQUIRE", "k", "3", "1000", "ID", ""], "ERR ID must be 1 to 128 bytes"),
        (vec!["RL.ACQUIRE", "k", "3", "1000", "ID", &long], "ERR ID must be 1 to 128 bytes"),
        (vec!["RL.ACQUIRE", "k", "3", "1000", "ID", "a", "ID", "b"], "ERR syntax error: ID given more than once"),
        (vec!["RL.ACQUIRE", "k", "3", "1000", "COST", "1", "COST", "1"], "ERR syntax error: COST given more than once"),
        (vec!["RL.ACQUIRE", "k", "3", "1000", "REFUND", "1"], "ERR syntax error: unknown option 'REFUND'"),
        (vec!["RL.ACQUIRE", "k", "3"], "ERR wrong number of arguments"),
        (vec!["RL.RELEASE", "k", ""], "ERR id must be 1 to 128 bytes"),
        (vec!["RL.RELEASE", "k"], "ERR wrong number of arguments"),
        (vec!["RL.RENEW", "k", "x", "0"], "ERR lease_ms is out of range"),
        (vec!["RL.RENEW", "k", "x", "01"], "ERR lease_ms is not an integer"),
        (vec!["RL.RENEW", "k", &long, "10"], "ERR id must be 1 to 128 bytes"),
    ] {
        let e = err_of(&mut c, &words);
        assert!(e.starts_with(want), "{words:?}: {e}");
    }
    assert_eq!((dump(&mut c, "k"), pttl(&mut c, "k")), before);
    let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
    let _: Vec<i64> = redis::cmd("RL.GCRA").arg("g").arg(1).arg(1000).query(&mut c).unwrap();
    for key in ["s", "g"] {
        for words in
            [vec!["RL.ACQUIRE", key, "1", "1000"], vec!["RL.RELEASE", key, "x"], vec!["RL.RENEW", key, "x", "1"]]
        {
            assert!(err_of(&mut c, &words).starts_with("WRONGTYPE"), "{words:?}");
        }
    }
    assert!(err_of(&mut c, &["RL.GCRA", "k", "1", "1000"]).starts_with("WRONGTYPE"));
    let t: String = redis::cmd("TYPE").arg("k").query(&mut c).unwrap();
    assert_eq!(t, "rl-lease-");
}

#[test]
fn sixteen_clients_get_exactly_the_limit_every_time() {
    let s = Server::start();
    for round in 0..20 {
        let key = format!("pool:{round}");
        let granted = allowed_by_concurrent_clients(&s.url(), 16, 10, move |c| {
            let v = raw(c, &["RL.ACQUIRE", &key, "7", "1000000"]).unwrap();
            parse(&v).0.allowed
        });
        assert_eq!(granted, 7, "round {round}");
    }
}

#[test]
fn a_lease_is_never_live_longer_than_its_own_lease_ms_after_the_clock_goes_back() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    acquire(&mut c, "RL.ACQUIRE k 1 10000");
    // The clock goes back an hour: the lease reads as ending 10 s from now,
    // not an hour and 10 s from now, and the first call stores that.
    freeze(&s, T0_MS - 3_600_000);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 1 10000").0, r(false, 1, 0, 10000, 10000));
    assert_eq!(pttl(&mut c, "k"), 10000);
    freeze(&s, T0_MS - 3_600_000 + 10000);
    assert!(acquire(&mut c, "RL.ACQUIRE k 1 10000").0.allowed);
}

/// After a backward jump a lease set reads at its own time, the last write's:
/// a lease keeps what it had left then (not a whole lease_ms from now), and
/// the first call stores the set moved back onto the clock.
#[test]
fn after_the_clock_goes_back_each_lease_keeps_what_it_had_left_at_the_last_write() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    acquire(&mut c, "RL.ACQUIRE k 2 10000 ID old");
    freeze(&s, T0_MS + 4000);
    acquire(&mut c, "RL.ACQUIRE k 2 10000 ID new");
    // An hour back: "old" had 6 s left at the last write, "new" 10 s.
    let now = T0_MS + 4000 - 3_600_000;
    freeze(&s, now);
    let peek = raw(&mut c, &["RL.PEEK", "CONCURRENCY", "k", "2", "10000"]).unwrap();
    assert_eq!(parse(&peek).0, r(false, 2, 0, 6000, 10000));
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 10000").0, r(false, 2, 0, 6000, 10000));
    assert_eq!(pttl(&mut c, "k"), 10000);
    freeze(&s, now + 5999);
    assert!(!acquire(&mut c, "RL.ACQUIRE k 2 10000").0.allowed);
    freeze(&s, now + 6000);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 2 10000").0, r(true, 2, 0, 0, 10000));
}

fn all(c: &mut Connection, line: &str) -> Value {
    let words: Vec<&str> = line.split(' ').collect();
    raw(c, &words).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn rl_all_takes_a_slot_and_a_rate_together_or_neither() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let line = "RL.ALL 2 {api}:db {api}:rate CONCURRENCY 1 30000 ID req-1 GCRA 1 1000";
    let Value::Array(items) = all(&mut c, line) else { panic!() };
    assert_eq!(parse(&items[2]), (r(true, 1, 0, 0, 30000), Some("req-1".into())));
    // The rate denies: no slot is taken, the lease is nil.
    let line2 = "RL.ALL 2 {api}:db2 {api}:rate CONCURRENCY 1 30000 GCRA 1 1000";
    let Value::Array(items) = all(&mut c, line2) else { panic!() };
    assert_eq!(redis::from_redis_value::<i64>(&items[0]).unwrap(), 0);
    assert_eq!(parse(&items[2]), (r(true, 1, 0, 0, 30000), None));
    assert!(!exists(&mut c, "{api}:db2"));
    // The slot denies: the rate is not consumed.
    freeze(&s, T0_MS + 1000);
    let rate = dump(&mut c, "{api}:rate");
    let line3 = "RL.ALL 2 {api}:db {api}:rate CONCURRENCY 1 30000 ID req-2 GCRA 1 1000";
    let Value::Array(items) = all(&mut c, line3) else { panic!() };
    assert_eq!(redis::from_redis_value::<i64>(&items[1]).unwrap(), 29000);
    assert_eq!(parse(&items[2]), (r(false, 1, 0, 29000, 29000), None));
    assert_eq!(dump(&mut c, "{api}:rate"), rate);
    // RL.PEEK CONCURRENCY answers what RL.ACQUIRE ... PEEK would.
    let v = raw(&mut c, &["RL.PEEK", "CONCURRENCY", "{api}:db", "1", "30000"]).unwrap();
    assert_eq!(parse(&v), (r(false, 1, 0, 29000, 29000), None));
    assert_eq!(int(&mut c, &["RL.RELEASE", "{api}:db", "req-1"]), 1);
}

#[test]
fn memory_usage_grows_with_the_leases_held_and_shrinks_back() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let usage = |c: &mut Connection| -> i64 { redis::cmd("MEMORY").arg("USAGE").arg("k").query(c).unwrap() };
    let mut ids = Vec::new();
    for _ in 0..100 {
        ids.push(acquire(&mut c, "RL.ACQUIRE k 100 60000").1.unwrap());
    }
    let full = usage(&mut c);
    // About 72 bytes a lease, in the allocator's size class (8 KiB here;
    // tests/memory_usage.rs checks MEMORY USAGE against what deleting frees).
    assert!(full <= 100 * 96, "MEMORY USAGE {full} for 100 leases");
    for id in &ids[..98] {
        assert_eq!(int(&mut c, &["RL.RELEASE", "k", id]), 1);
    }
    let two = usage(&mut c);
    assert!(two < full / 8, "{two} after 98 releases, from {full}");
    eprintln!("MEMORY USAGE: 100 leases {full} bytes, 2 leases {two} bytes");
}

/// Acquires, releases and renewals on `keys` sets, with named and
/// generated ids, weights, PEEKs and time moving.
fn workload(s: &Server, c: &mut Connection, keys: usize, calls: u64) {
    let mut now = T0_MS;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut held: Vec<(String, String)> = Vec::new();
    for i in 0..calls {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        now += x % 30;
        freeze(s, now);
        let key = format!("{{set}}:{}", (x >> 8) as usize % keys);
        match (x >> 20) % 8 {
            0 | 1 if !held.is_empty() => {
                let (k, id) = held.swap_remove((x >> 30) as usize % held.len());
                int(c, &["RL.RELEASE", &k, &id]);
            }
            2 if !held.is_empty() => {
                let (k, id) = &held[(x >> 30) as usize % held.len()];
                int(c, &["RL.RENEW", k, id, &(500 + x % 3000).to_string()]);
            }
            3 => {
                let id = format!("job-{}", i % 17);
                if let (reply, Some(id)) = acquire(c, &format!("RL.ACQUIRE {key} 12 2000 ID {id} COST 2")) {
                    assert!(reply.allowed);
                    held.push((key, id));
                }
            }
            4 => {
                acquire(c, &format!("RL.ACQUIRE {key} 12 2000 PEEK"));
            }
            _ => {
                if let (_, Some(id)) =
                    acquire(c, &format!("RL.ACQUIRE {key} 12 {} COST {}", 1000 + x % 2000, 1 + x % 3))
                {
                    held.push((key, id));
                }
            }
        }
    }
}

#[test]
fn replicas_and_aof_replay_hold_the_masters_sets() {
    let copies = replica_and_aof_replay(T0_MS + 333, |master, m| workload(master, m, 5, 3000));
    assert!(copies.expected.len() >= 3, "{:?}", copies.expected);
    // What was propagated: each write's change (233 bytes, room for a
    // 128-byte id), never a whole set.
    let payloads = &copies.propagated;
    assert!(payloads.len() > 1000, "{} effects", payloads.len());
    assert!(payloads.iter().all(|p| p.len() == 233 && p[0] == b'c'), "{:?}", payloads.iter().find(|p| p.len() != 233));
    // After a rewrite the AOF holds each whole set once.
    assert!(copies.rewritten.iter().all(|p| p[0] == b'C'));
}

#[test]
fn rdb_reload_dump_restore_and_copy_keep_the_set() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    workload(&s, &mut c, 3, 400);
    let expected = snapshot(&mut c);
    assert!(!expected.is_empty());
    assert_reload_restore_and_copy_keep(&mut c, &expected);
}

#[test]
fn a_replica_fires_the_masters_events_for_acquire_renew_and_release() {
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions::default());
    let mut r = replica.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("notify-keyspace-events").arg("Kg$d").query(&mut r).unwrap();
    let mut sub = replica.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:ev").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    let mut m = master.conn();
    acquire(&mut m, "RL.ACQUIRE ev 2 60000 ID a");
    acquire(&mut m, "RL.ACQUIRE ev 2 60000 ID b");
    assert_eq!(int(&mut m, &["RL.RENEW", "ev", "a", "90000"]), 1);
    assert_eq!(int(&mut m, &["RL.RELEASE", "ev", "a"]), 1);
    // The last lease: the key is deleted (DEL is propagated).
    assert_eq!(int(&mut m, &["RL.RELEASE", "ev", "b"]), 1);
    let events: Vec<String> = (0..5).map(|_| pubsub.get_message().unwrap().get_payload().unwrap()).collect();
    assert_eq!(events, ["rl.acquire", "rl.acquire", "rl.renew", "rl.release", "del"]);
}

/// Generated ids are never handed out again on a key, across its lives
/// (issue 32.6): with the clock frozen, `RL.ACQUIRE k 2 1000` gave `T-0`
/// and `T-1`, both were released (the key deleted), and the next acquire
/// gave `T-1` again, so the first holder's retried release ended the new
/// holder's lease. One life: two ids made on `k`, then released (the key is
/// deleted); their ids.
fn a_life_of_k(c: &mut Connection) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (d, lease) = acquire(c, "RL.ACQUIRE k 2 1000");
        assert!(d.allowed);
        ids.push(lease.unwrap());
    }
    for id in &ids {
        assert_eq!(int(c, &["RL.RELEASE", "k", id]), 1);
    }
    assert!(!exists(c, "k"));
    ids
}

/// The next life of `k`, in the same millisecond: no id of `earlier` comes
/// back, and their holders' retried releases end nothing.
fn next_life_gives_new_ids(c: &mut Connection, earlier: &[String]) {
    let mut later = Vec::new();
    for _ in 0..2 {
        let (d, lease) = acquire(c, "RL.ACQUIRE k 2 1000");
        assert!(d.allowed);
        let lease = lease.unwrap();
        assert!(!earlier.contains(&lease), "{lease} handed out again (earlier: {earlier:?})");
        later.push(lease);
    }
    for id in earlier {
        assert_eq!(int(c, &["RL.RELEASE", "k", id]), 0, "an earlier holder's release of {id} ended a lease");
    }
    assert_eq!(acquire(c, "RL.ACQUIRE k 2 1000 COST 0").0.remaining, 0, "{later:?}");
}

#[test]
fn generated_ids_never_come_back_when_the_key_is_created_again() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let mut earlier = a_life_of_k(&mut c);
    earlier.extend(a_life_of_k(&mut c));
    next_life_gives_new_ids(&mut c, &earlier);
}

#[test]
fn generated_ids_never_come_back_after_a_restart() {
    let mut s = frozen_server(&[]);
    let mut c = s.conn();
    let mut earlier = a_life_of_k(&mut c);
    // The node's floor is kept in the RDB (an aux field), with no key left.
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).unwrap();
    earlier.extend(a_life_of_k(&mut c));
    let _: () = redis::cmd("SAVE").query(&mut c).unwrap();
    s.restart();
    let mut c = s.conn();
    next_life_gives_new_ids(&mut c, &earlier);
}

#[test]
fn generated_ids_never_come_back_on_a_promoted_replica() {
    let master = frozen_server(&[]);
    let replica = start_replica(&master, ServerOptions { fake_clock: true, ..Default::default() });
    replica.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let mut m = master.conn();
    let earlier = a_life_of_k(&mut m);
    common::replication::wait_for_replica_offset(&mut m);
    let mut r = replica.conn();
    let _: () = redis::cmd("REPLICAOF").arg("NO").arg("ONE").query(&mut r).unwrap();
    next_life_gives_new_ids(&mut r, &earlier);
}

#[test]
fn generated_ids_never_come_back_after_an_older_copy_is_restored() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (_, first) = acquire(&mut c, "RL.ACQUIRE k 2 1000");
    let first = first.unwrap();
    let old = dump(&mut c, "k").unwrap();
    let (_, second) = acquire(&mut c, "RL.ACQUIRE k 2 1000");
    let second = second.unwrap();
    for id in [&first, &second] {
        assert_eq!(int(&mut c, &["RL.RELEASE", "k", id]), 1);
    }
    // The older copy holds `first` live, and a sequence from before `second`.
    let _: () = redis::cmd("RESTORE").arg("k").arg(0).arg(&old).query(&mut c).unwrap();
    let (d, lease) = acquire(&mut c, "RL.ACQUIRE k 2 1000");
    assert!(d.allowed);
    let lease = lease.unwrap();
    assert!(lease != first && lease != second, "{lease} handed out again");
    assert_eq!(int(&mut c, &["RL.RELEASE", "k", &second]), 0);
}

/// One long id does not widen a lease set for good (issue 32.4): 65,000
/// leases with generated ids took 4,194,408 bytes, one acquire with a
/// 128-byte id made it 11,010,152, and it stayed so after that lease was
/// released, after churn, shrinking and growing back. The block returns to
/// the width its live ids need once the longest id has left.
#[test]
fn a_long_id_widens_the_block_only_while_it_is_held() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let usage = |c: &mut Connection| -> i64 { redis::cmd("MEMORY").arg("USAGE").arg("w").query(c).unwrap() };
    let mut ids = Vec::new();
    for _ in 0..1000 {
        ids.push(acquire(&mut c, "RL.ACQUIRE w 100000 600000").1.unwrap());
    }
    let narrow = usage(&mut c);
    let long = "z".repeat(128);
    assert!(acquire(&mut c, &format!("RL.ACQUIRE w 100000 600000 ID {long}")).0.allowed);
    let wide = usage(&mut c);
    assert!(wide > 2 * narrow, "{narrow} -> {wide}");
    assert_eq!(int(&mut c, &["RL.RELEASE", "w", &long]), 1);
    assert_eq!(usage(&mut c), narrow, "still wide after the long id left");
    // Held again, then churn: released, shrunk to an eighth, grown back.
    assert!(acquire(&mut c, &format!("RL.ACQUIRE w 100000 600000 ID {long}")).0.allowed);
    assert_eq!(int(&mut c, &["RL.RELEASE", "w", &long]), 1);
    for id in ids.drain(125..) {
        assert_eq!(int(&mut c, &["RL.RELEASE", "w", &id]), 1);
    }
    for _ in 125..1000 {
        ids.push(acquire(&mut c, "RL.ACQUIRE w 100000 600000").1.unwrap());
    }
    assert_eq!(usage(&mut c), narrow, "not back to its width after churn");
    // A medium id keeps the width it needs, no more.
    let medium = "m".repeat(40);
    assert!(acquire(&mut c, &format!("RL.ACQUIRE w 100000 600000 ID {medium}")).0.allowed);
    let mid = usage(&mut c);
    assert!(mid > narrow && mid < wide, "{narrow} < {mid} < {wide}");
    let before = dump(&mut c, "w");
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut c).unwrap();
    assert_eq!(dump(&mut c, "w"), before);
}
