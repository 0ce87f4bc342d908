//! Invariant 8 on a real Redis Cluster (3 masters, 3 replicas): commands are
//! routed by key, RL.ALL decides over hash-tagged keys and refuses keys in
//! different slots, and a limiter's state, TTL and limit survive moving its
//! slot to another master and failing its master over to the replica.
//!
//! Each test forms its own cluster (a few seconds), since resharding and
//! failover change the topology the other tests would rely on. Limits use
//! the longest period the commands accept, so nothing refills and no
//! sliding window rolls over while a test runs on the real clock (a
//! cluster cannot run on a frozen one: failure detection and failover need
//! time to pass).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use redis::cluster::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Connection, Value};

use common::cluster::{cmd, slot_of, Cluster, MASTERS};
use common::limiter::{err_of, exists, Reply};

/// 10^12 ms (about 31 years): the longest period or window there is.
const LONG_MS: u64 = 1_000_000_000_000;

/// A limiter call through the cluster client, routed by its key.
fn call(c: &mut ClusterConnection, line: &str) -> Reply {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut command = redis::cmd(words[0]);
    for w in &words[1..] {
        command.arg(*w);
    }
    let v: Vec<i64> = command.query(c).unwrap_or_else(|e| panic!("{line}: {e}"));
    Reply::new(v[0] == 1, v[1], v[2], v[3], v[4])
}

/// RL.ALL's RESP2 reply: (allowed, retry_after_ms, one reply per key).
fn parse_all(v: Value) -> (bool, i64, Vec<Reply>) {
    let Value::Array(items) = v else { panic!("RL.ALL reply {v:?}") };
    let allowed: i64 = redis::from_redis_value(&items[0]).expect("allowed");
    let retry: i64 = redis::from_redis_value(&items[1]).expect("retry_after_ms");
    let per_key = items[2..]
        .iter()
        .map(|r| {
            let v: Vec<i64> = redis::from_redis_value(r).expect("per-key reply");
            Reply::new(v[0] == 1, v[1], v[2], v[3], v[4])
        })
        .collect();
    (allowed == 1, retry, per_key)
}

/// RL.ALL through the cluster client, sent to the master of the first
/// key's slot. (The client cannot know where RL.ALL's keys are, so it is
/// told; a wrong guess would still be corrected by MOVED.)
fn call_all(c: &mut ClusterConnection, line: &str) -> (bool, i64, Vec<Reply>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut command = redis::cmd(words[0]);
    for w in &words[1..] {
        command.arg(*w);
    }
    let route =
        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::new(slot_of(words[2]), SlotAddr::Master)));
    parse_all(c.route_command(&command, route).unwrap_or_else(|e| panic!("{line}: {e}")))
}

fn digest(con: &mut Connection, key: &str) -> String {
    let one: Vec<String> = cmd(con, &["DEBUG", "DIGEST-VALUE", key]);
    one.concat()
}

fn pexpiretime(con: &mut Connection, key: &str) -> i64 {
    cmd(con, &["PEXPIRETIME", key])
}

#[test]
fn the_cluster_client_routes_every_command_by_key_and_another_node_answers_moved() {
    let cluster = Cluster::start();
    let mut client = cluster.client();

    for i in 0..30 {
        for (command, args) in [("RL.GCRA", "5 60000"), ("RL.TOKENBUCKET", "5 5 60000"), ("RL.SLIDE", "5 60000")] {
            let key = format!("user:{i}:{command}");
            let r = call(&mut client, &format!("{command} {key} {args}"));
            assert!(r.allowed && r.remaining == 4, "{command} {key}: {r:?}");
            // The state lives on the master that serves the key's slot.
            let owner = cluster.owner(slot_of(&key));
            assert!(exists(&mut cluster.nodes[owner].conn(), &key), "{key} not on node {owner}");
        }
    }

    // A plain connection to a master that does not serve the key is
    // redirected, for every command, RL.ALL (keys after numkeys) included.
    let key = "moved:probe";
    let slot = slot_of(key);
    let owner = cluster.owner(slot);
    let other = (owner + 1) % MASTERS;
    let mut wrong = cluster.nodes[other].conn();
    let want = format!("MOVED {slot} 127.0.0.1:{}", cluster.nodes[owner].port);
    for line in [
        format!("RL.GCRA {key} 5 60000"),
        format!("RL.TOKENBUCKET {key} 5 5 60000"),
        format!("RL.SLIDE {key} 5 60000"),
        format!("RL.ALL 1 {key} GCRA 5 60000"),
        format!("RL.APPLY {key} x"),
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(err_of(&mut wrong, &words), want, "{line}");
    }
    assert!(!exists(&mut cluster.nodes[owner].conn(), key), "a redirected call wrote nothing");
}

#[test]
fn rl_all_decides_over_hash_tagged_keys_and_refuses_keys_in_different_slots() {
    let cluster = Cluster::start();
    let mut client = cluster.client();

    let line = format!(
        "RL.ALL 3 {{tenant:7}}:user:1 {{tenant:7}}:tenant {{tenant:7}}:calls \
         GCRA 2 {LONG_MS} SLIDE 3 {LONG_MS} TOKENBUCKET 10 10 {LONG_MS} COST 4"
    );
    let line = line.as_str();
    let (allowed, retry, per_key) = call_all(&mut client, line);
    assert!(allowed && retry == 0, "{per_key:?}");
    assert_eq!(per_key.iter().map(|r| r.remaining).collect::<Vec<_>>(), [1, 2, 6]);
    let (allowed, _, _) = call_all(&mut client, line);
    assert!(allowed);
    // The user's GCRA is drained and the calls bucket holds 2 of 4: the
    // whole call is denied, and the tenant's window consumed nothing.
    let (allowed, retry, per_key) = call_all(&mut client, line);
    assert!(!allowed && retry > 0);
    let seen: Vec<(bool, i64)> = per_key.iter().map(|r| (r.allowed, r.remaining)).collect();
    assert_eq!(seen, [(false, 0), (true, 0), (false, 2)]);
    let owner = cluster.owner(slot_of("{tenant:7}"));
    let mut con = cluster.nodes[owner].conn();
    let tenant: Vec<i64> = cmd(&mut con, &["RL.SLIDE", "{tenant:7}:tenant", "3", &LONG_MS.to_string(), "PEEK"]);
    assert_eq!((tenant[0], tenant[2]), (1, 0), "the tenant window still admits exactly one");

    // Keys in different slots: refused before anything runs, on any node,
    // by the server itself (the key callback declared them).
    let (a, b) = ("{a}:limit", "{b}:limit");
    assert_ne!(slot_of(a), slot_of(b));
    for node in &cluster.nodes[..MASTERS] {
        let words = ["RL.ALL", "2", a, b, "GCRA", "1", "1000", "GCRA", "1", "1000"];
        let e = err_of(&mut node.conn(), &words);
        assert!(e.starts_with("CROSSSLOT"), "node :{}: {e}", node.port);
    }
    for key in [a, b] {
        assert!(!exists(&mut cluster.nodes[cluster.owner(slot_of(key))].conn(), key));
    }
}

#[test]
fn moving_a_slot_to_another_master_keeps_state_ttl_and_the_limit() {
    const LIMIT: usize = 4;
    const HOT: usize = 6;
    let cluster = Cluster::start();
    let slot = slot_of("{rs}");
    let src = cluster.owner(slot);
    let dst = (src + 1) % MASTERS;
    let (src_id, dst_id) = (cluster.ids[src].clone(), cluster.ids[dst].clone());
    let mut client = cluster.client();

    // Keys that the move must carry untouched: drained, half used, one per algorithm.
    let still = [
        format!("RL.GCRA {{rs}}:still:gcra {LIMIT} {LONG_MS}"),
        format!("RL.TOKENBUCKET {{rs}}:still:tb {LIMIT} {LIMIT} {LONG_MS}"),
        format!("RL.SLIDE {{rs}}:still:slide {LIMIT} {LONG_MS}"),
    ];
    for line in &still {
        for _ in 0..LIMIT {
            assert!(call(&mut client, line).allowed, "{line}");
        }
    }
    let half = format!("RL.GCRA {{rs}}:still:half {LIMIT} {LONG_MS}");
    for _ in 0..LIMIT / 2 {
        assert!(call(&mut client, &half).allowed);
    }
    let still_keys = ["{rs}:still:gcra", "{rs}:still:tb", "{rs}:still:slide", "{rs}:still:half"];
    let mut src_con = cluster.nodes[src].conn();
    let before: Vec<(String, i64)> =
        still_keys.iter().map(|k| (digest(&mut src_con, k), pexpiretime(&mut src_con, k))).collect();

    // Meanwhile a client hammers other keys of the slot (half of them exist
    // before the move), following ASK and MOVED as the slot moves.
    let hot_line = |i: usize| format!("RL.GCRA {{rs}}:hot:{i} {LIMIT} {LONG_MS}");
    for i in 0..HOT / 2 {
        assert!(call(&mut client, &hot_line(i)).allowed);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let hammer = {
        let (stop, calls, mut client) = (stop.clone(), calls.clone(), cluster.client());
        thread::spawn(move || {
            let mut allowed = [0usize; HOT];
            allowed[..HOT / 2].fill(1);
            while !stop.load(Ordering::Relaxed) {
                for (i, n) in allowed.iter_mut().enumerate() {
                    *n += call(&mut client, &hot_line(i)).allowed as usize;
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            }
            allowed
        })
    };
    let wait_for_calls = |n: usize| {
        let (start, deadline) = (calls.load(Ordering::Relaxed), Instant::now() + Duration::from_secs(20));
        while calls.load(Ordering::Relaxed) < start + n {
            assert!(Instant::now() < deadline, "the hammering client made no progress");
            assert!(!hammer.is_finished(), "the hammering client died");
            thread::sleep(Duration::from_millis(1));
        }
    };

    let mut dst_con = cluster.nodes[dst].conn();
    let slot_arg = slot.to_string();
    let _: String = cmd(&mut dst_con, &["CLUSTER", "SETSLOT", &slot_arg, "IMPORTING", &src_id]);
    let _: String = cmd(&mut src_con, &["CLUSTER", "SETSLOT", &slot_arg, "MIGRATING", &dst_id]);
    wait_for_calls(20);
    let dst_port = cluster.nodes[dst].port.to_string();
    loop {
        // One key at a time, with traffic in between: some calls find their
        // key still on the source, others are sent to the target with ASK.
        let keys: Vec<String> = cmd(&mut src_con, &["CLUSTER", "GETKEYSINSLOT", &slot_arg, "1"]);
        let Some(key) = keys.first() else { break };
        let _: String = cmd(&mut src_con, &["MIGRATE", "127.0.0.1", &dst_port, "", "0", "5000", "KEYS", key]);
        wait_for_calls(10);
    }
    // The target first, so the source can never redirect to a node that
    // does not yet know it owns the slot.
    for node in std::iter::once(dst).chain(std::iter::once(src)).chain((0..MASTERS).filter(|&n| n != src && n != dst)) {
        let _: String = cmd(&mut cluster.nodes[node].conn(), &["CLUSTER", "SETSLOT", &slot_arg, "NODE", &dst_id]);
    }
    assert_eq!(cluster.owner(slot), dst);
    wait_for_calls(20);
    stop.store(true, Ordering::Relaxed);
    let allowed = hammer.join().expect("hammering client");

    assert_eq!(allowed, [LIMIT; HOT], "every hot key admitted exactly its burst across the move");
    assert_eq!(cmd::<i64>(&mut src_con, &["CLUSTER", "COUNTKEYSINSLOT", &slot_arg]), 0);
    for (key, (digest_before, expire_before)) in still_keys.iter().zip(&before) {
        assert_eq!(&digest(&mut dst_con, key), digest_before, "{key}: state changed in the move");
        // MIGRATE carries a relative TTL: Redis's own drift is the time
        // between the source reading its clock and the target reading its own.
        let drift = pexpiretime(&mut dst_con, key) - expire_before;
        assert!((0..=20).contains(&drift), "{key}: expiry moved by {drift} ms");
    }
    // Still drained after the move; the half-used one has exactly its rest.
    for line in &still {
        assert!(!call(&mut client, line).allowed, "{line}");
    }
    for i in 0..LIMIT {
        assert_eq!(call(&mut client, &half).allowed, i < LIMIT - LIMIT / 2, "call {i} after the move");
    }
    // RL.ALL over the moved keys runs on the new owner.
    let (allowed, retry, _) =
        call_all(&mut client, &format!("RL.ALL 2 {{rs}}:hot:0 {{rs}}:new GCRA {LIMIT} {LONG_MS} SLIDE 1 {LONG_MS}"));
    assert!(!allowed && retry > 0);
}

#[test]
fn failing_over_to_the_replica_keeps_state_and_the_limit() {
    const LIMIT: usize = 4;
    let cluster = Cluster::start();
    let slot = slot_of("{fo}");
    let master = cluster.owner(slot);
    let replica = cluster.replica_of(master);
    let mut client = cluster.client();

    let drained = format!("RL.TOKENBUCKET {{fo}}:drained {LIMIT} {LIMIT} {LONG_MS}");
    let half = format!("RL.GCRA {{fo}}:half {LIMIT} {LONG_MS}");
    let slide = format!("RL.SLIDE {{fo}}:slide {LIMIT} {LONG_MS}");
    for _ in 0..LIMIT {
        assert!(call(&mut client, &drained).allowed);
    }
    for _ in 0..LIMIT / 2 {
        assert!(call(&mut client, &half).allowed);
        assert!(call(&mut client, &slide).allowed);
    }
    let all =
        format!("RL.ALL 2 {{fo}}:all:a {{fo}}:all:b GCRA {LIMIT} {LONG_MS} COST 3 SLIDE {LIMIT} {LONG_MS} COST 3");
    assert!(call_all(&mut client, &all).0);

    let keys = ["{fo}:drained", "{fo}:half", "{fo}:slide", "{fo}:all:a", "{fo}:all:b"];
    let mut master_con = cluster.nodes[master].conn();
    // Every write has reached the replica before it takes over.
    let acked: i64 = cmd(&mut master_con, &["WAIT", "1", "5000"]);
    assert_eq!(acked, 1);
    let before: Vec<(String, i64)> =
        keys.iter().map(|k| (digest(&mut master_con, k), pexpiretime(&mut master_con, k))).collect();

    // A client waits on the master for a lease another holds.
    let pool = "{fo}:pool";
    let held: Value = cmd(&mut master_con, &["RL.ACQUIRE", pool, "1", "600000", "ID", "holder"]);
    assert!(matches!(&held, Value::Array(items) if items[0] == Value::Int(1)), "{held:?}");
    let mut waiter = cluster.nodes[master].conn();
    waiter.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let waiting = thread::spawn(move || -> redis::RedisResult<Value> {
        redis::cmd("RL.ACQUIRE").arg(pool).arg(1).arg(600000).arg("WAIT").arg(600000).query(&mut waiter)
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cmd::<String>(&mut master_con, &["INFO", "rl"]).contains("waiting=1") {
        assert!(Instant::now() < deadline, "the waiter never blocked");
        thread::sleep(Duration::from_millis(2));
    }
    let acked: i64 = cmd(&mut master_con, &["WAIT", "1", "5000"]);
    assert_eq!(acked, 1);

    let _: String = cmd(&mut cluster.nodes[replica].conn(), &["CLUSTER", "FAILOVER"]);
    cluster.wait_until("the replica has taken over", |c| c.owner_seen_by(replica, slot) == Some(replica));
    assert_eq!(cluster.owner(slot), replica);
    cluster.wait_until_settled();

    // The failover answers the waiter (the server unblocks it as its node
    // turns replica), and leaves no waiter behind on the old master.
    let answer = waiting.join().unwrap();
    assert!(answer.is_err(), "a waiter on a node that turned replica was granted: {answer:?}");
    let mut old_master = cluster.nodes[master].conn();
    let info: String = cmd(&mut old_master, &["INFO", "rl"]);
    assert!(info.contains("waiting=0"), "{info}");

    let mut new_master = cluster.nodes[replica].conn();
    for (key, (digest_before, expire_before)) in keys.iter().zip(&before) {
        assert_eq!(&digest(&mut new_master, key), digest_before, "{key}: state differs after failover");
        // The replica stored the master's absolute expiry (RL.APPLY); on
        // Redis 7.0 it is set as a relative TTL against the replica's clock
        // read a moment earlier, so a millisecond tick may fall in between.
        let drift = pexpiretime(&mut new_master, key) - expire_before;
        assert!((0..=5).contains(&drift), "{key}: expiry moved by {drift} ms");
    }

    // The client follows MOVED from the old master; the limits hold.
    assert!(!call(&mut client, &drained).allowed);
    for i in 0..LIMIT {
        assert_eq!(call(&mut client, &half).allowed, i < LIMIT - LIMIT / 2, "{half}: call {i}");
        assert_eq!(call(&mut client, &slide).allowed, i < LIMIT - LIMIT / 2, "{slide}: call {i}");
    }
    let (allowed, _, per_key) = call_all(&mut client, &all);
    assert!(!allowed, "3 + 3 exceeds both limits of 4: {per_key:?}");
    assert_eq!(per_key.iter().map(|r| r.remaining).collect::<Vec<_>>(), [1, 1]);
}

#[test]
fn leases_route_by_key_and_rl_all_takes_a_slot_with_a_rate_in_one_hash_slot() {
    let cluster = Cluster::start();
    let mut client = cluster.client();
    // RL.ACQUIRE, RL.RENEW and RL.RELEASE go where their key lives.
    let lease = |v: &Value| -> Option<String> {
        let Value::Array(items) = v else { panic!("{v:?}") };
        redis::from_redis_value(&items[5]).unwrap()
    };
    let v: Value = redis::cmd("RL.ACQUIRE").arg("{svc}:db").arg(1).arg(LONG_MS).query(&mut client).unwrap();
    let id = lease(&v).expect("a lease");
    let v: Value = redis::cmd("RL.ACQUIRE").arg("{svc}:db").arg(1).arg(LONG_MS).query(&mut client).unwrap();
    assert_eq!(lease(&v), None, "the one slot is held");
    let renewed: i64 = redis::cmd("RL.RENEW").arg("{svc}:db").arg(&id).arg(LONG_MS).query(&mut client).unwrap();
    assert_eq!(renewed, 1);
    // One RL.ALL over hash-tagged keys: a slot on the dependency and a rate.
    let words = ["RL.ALL", "2", "{svc}:api", "{svc}:rate", "CONCURRENCY", "2", "60000", "GCRA", "10", "1000"];
    let mut command = redis::cmd(words[0]);
    for w in &words[1..] {
        command.arg(*w);
    }
    let route =
        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::new(slot_of("{svc}"), SlotAddr::Master)));
    let Value::Array(items) = client.route_command(&command, route).unwrap() else { panic!() };
    assert_eq!(redis::from_redis_value::<i64>(&items[0]).unwrap(), 1);
    let api_lease = lease(&items[2]).expect("RL.ALL answers the lease");
    let released: i64 = redis::cmd("RL.RELEASE").arg("{svc}:api").arg(&api_lease).query(&mut client).unwrap();
    assert_eq!(released, 1);
    let released: i64 = redis::cmd("RL.RELEASE").arg("{svc}:db").arg(&id).query(&mut client).unwrap();
    assert_eq!(released, 1);
    let owner = cluster.owner(slot_of("{svc}"));
    assert!(!exists(&mut cluster.nodes[owner].conn(), "{svc}:db"), "the last lease ended: the key is gone");
    // Keys in different slots are refused, as for every RL.ALL.
    let e = err_of(
        &mut cluster.nodes[0].conn(),
        &["RL.ALL", "2", "{a}:x", "{b}:y", "CONCURRENCY", "1", "1000", "GCRA", "1", "1000"],
    );
    assert!(e.starts_with("CROSSSLOT") || e.starts_with("MOVED"), "{e}");
}

/// A waiter whose key's slot moves to another master is answered (an
/// error that says why) the moment MIGRATE takes the key away, never
/// granted a lease set on the node that no longer serves it; the lease
/// held arrives intact on the new owner.
#[test]
fn waiters_of_a_key_whose_slot_migrates_are_answered() {
    let cluster = Cluster::start();
    let key = "{wq}:pool";
    let slot = slot_of(key);
    let src = cluster.owner(slot);
    let dst = (src + 1) % MASTERS;
    let (src_id, dst_id) = (cluster.ids[src].clone(), cluster.ids[dst].clone());
    let mut src_con = cluster.nodes[src].conn();
    let held: Value = cmd(&mut src_con, &["RL.ACQUIRE", key, "1", &LONG_MS.to_string(), "ID", "holder"]);
    let Value::Array(items) = held else { panic!("{held:?}") };
    assert_eq!(items[0], Value::Int(1));

    let mut waiter = cluster.nodes[src].conn();
    waiter.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let line = ["RL.ACQUIRE", key, "1", "60000", "ID", "waiter", "WAIT", "60000"].map(str::to_string);
    let t = thread::spawn(move || {
        let r: redis::RedisResult<Value> = redis::cmd(&line[0]).arg(&line[1..]).query(&mut waiter);
        r
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info: String = cmd(&mut src_con, &["INFO", "rl"]);
        if info.contains("waiting=1") {
            break;
        }
        assert!(Instant::now() < deadline, "the waiter never blocked: {info}");
        thread::sleep(Duration::from_millis(2));
    }

    let slot_arg = slot.to_string();
    let mut dst_con = cluster.nodes[dst].conn();
    let _: String = cmd(&mut dst_con, &["CLUSTER", "SETSLOT", &slot_arg, "IMPORTING", &src_id]);
    let _: String = cmd(&mut src_con, &["CLUSTER", "SETSLOT", &slot_arg, "MIGRATING", &dst_id]);
    let dst_port = cluster.nodes[dst].port.to_string();
    let _: String = cmd(&mut src_con, &["MIGRATE", "127.0.0.1", &dst_port, "", "0", "5000", "KEYS", key]);
    let answer = t.join().unwrap();
    let e = answer.expect_err("the waiter was granted on a node that gave its key away");
    assert!(e.to_string().contains("the key was deleted, renamed or moved while the client waited"), "{e}");
    for node in std::iter::once(dst).chain(std::iter::once(src)).chain((0..MASTERS).filter(|&n| n != src && n != dst)) {
        let _: String = cmd(&mut cluster.nodes[node].conn(), &["CLUSTER", "SETSLOT", &slot_arg, "NODE", &dst_id]);
    }
    // Nothing was left behind on the source; the holder's lease moved.
    assert_eq!(cmd::<i64>(&mut src_con, &["CLUSTER", "COUNTKEYSINSLOT", &slot_arg]), 0);
    let peek: Value = cmd(&mut dst_con, &["RL.PEEK", "CONCURRENCY", key, "1", "60000"]);
    let Value::Array(items) = peek else { panic!("{peek:?}") };
    assert_eq!(
        (items[0].clone(), items[2].clone()),
        (Value::Int(0), Value::Int(0)),
        "the holder's lease is on the new owner"
    );
}
