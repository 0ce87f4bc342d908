//! Out of memory: with `maxmemory` exceeded and `noeviction`, a call that
//! would create a limiter key is refused with Redis's OOM error and creates
//! nothing, for every command (every kind, RL.ACQUIRE with and without `ID`,
//! every spec of RL.ALL, CL.THROTTLE); once memory is freed, they work
//! again. RL.RELEASE and RL.RENEW are not `deny-oom` (ending a lease frees
//! memory, renewing takes none): over `maxmemory` they still end and extend
//! live leases, and answer 0 for an unknown id.

mod common;

use common::limiter::{dump, exists, pttl, raw, try_rl, Reply};
use common::replication::info_u64;
use common::{frozen_server, T0_MS};
use redis::{Connection, Value};

/// 16 MB of string, then a limit of 8 MB with `noeviction`: from here on
/// the server refuses every `deny-oom` command.
fn go_over_maxmemory(c: &mut Connection) {
    let _: i64 = redis::cmd("SETRANGE").arg("ballast").arg(16 << 20).arg("x").query(c).unwrap();
    for (name, value) in [("maxmemory-policy", "noeviction"), ("maxmemory", "8mb")] {
        let _: () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(c).unwrap();
    }
    let used = info_u64(c, "memory", "used_memory");
    let max = info_u64(c, "memory", "maxmemory");
    assert!(used > max, "used_memory {used} is not above maxmemory {max}");
}

/// Deletes the ballast: memory is back under `maxmemory`.
fn free_memory(c: &mut Connection) {
    let _: i64 = redis::cmd("DEL").arg("ballast").query(c).unwrap();
    let used = info_u64(c, "memory", "used_memory");
    let max = info_u64(c, "memory", "maxmemory");
    assert!(used < max, "used_memory {used} is still above maxmemory {max}");
}

/// Runs a command given as one string (words split on spaces).
fn call(c: &mut Connection, line: &str) -> redis::RedisResult<Value> {
    let words: Vec<&str> = line.split(' ').collect();
    raw(c, &words)
}

/// Asserts `line` is refused with Redis's OOM error.
fn assert_oom(c: &mut Connection, line: &str) {
    match call(c, line) {
        Ok(v) => panic!("{line}: answered {v:?} over maxmemory"),
        Err(e) => assert_eq!(e.code(), Some("OOM"), "{line}: {e}"),
    }
}

/// The six fields of an RL.ACQUIRE reply (RESP2): the five, and the lease.
fn acquire(c: &mut Connection, line: &str) -> (Reply, Option<String>) {
    let v = call(c, line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let Value::Array(items) = &v else { panic!("{line}: reply {v:?}") };
    assert_eq!(items.len(), 6, "{line}: {v:?}");
    let n: Vec<i64> = items[..5].iter().map(|x| redis::from_redis_value(x).unwrap()).collect();
    let lease: Option<String> = redis::from_redis_value(&items[5]).unwrap();
    (Reply::new(n[0] == 1, n[1], n[2], n[3], n[4]), lease)
}

fn int(c: &mut Connection, line: &str) -> i64 {
    let v = call(c, line).unwrap_or_else(|e| panic!("{line}: {e}"));
    redis::from_redis_value(&v).unwrap_or_else(|e| panic!("{line}: {v:?}: {e}"))
}

/// What a key holds, for "nothing was written": its DUMP and its PTTL.
fn held(c: &mut Connection, key: &str) -> (Option<Vec<u8>>, i64) {
    (dump(c, key), pttl(c, key))
}

#[test]
fn a_new_limiter_key_is_refused_with_oom_and_nothing_is_created() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    go_over_maxmemory(&mut c);

    // Each command with the options that change what it would store.
    let cases: &[(&str, &[&str])] = &[
        ("RL.GCRA new:g 10 1000", &["", " COST 3", " BURST 20"]),
        ("RL.TOKENBUCKET new:t 10 1 1000", &["", " COST 3"]),
        ("RL.SLIDE new:s 10 1000", &["", " COST 3"]),
        ("RL.LOG new:l 10 1000", &["", " COST 3"]),
        ("RL.QUOTA new:q 10 DAY", &["", " COST 3", " TZ Europe/Berlin"]),
        ("RL.QUOTA new:qms 10 60000", &["", " COST 3"]),
        ("CL.THROTTLE new:cl 15 30 60", &["", " 3"]),
    ];
    for (line, options) in cases {
        let key = line.split(' ').nth(1).unwrap();
        for opts in *options {
            let line = format!("{line}{opts}");
            assert_oom(&mut c, &line);
            assert!(!exists(&mut c, key), "{line} created {key} over maxmemory");
        }
    }
    let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(keys, 1, "only the ballast");

    // With the memory back, the same calls create their keys.
    free_memory(&mut c);
    for (line, _) in cases {
        let key = line.split(' ').nth(1).unwrap();
        let reply = try_rl(&mut c, line).unwrap_or_else(|e| panic!("{line}: {e}"));
        // CL.THROTTLE answers `limited` where the RL commands answer `allowed`.
        assert_eq!(reply.allowed, !line.starts_with("CL."), "{line}: {reply:?}");
        assert!(exists(&mut c, key), "{line}");
    }
}

#[test]
fn a_new_lease_or_rl_all_spec_is_refused_with_oom_and_nothing_is_created() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    go_over_maxmemory(&mut c);

    let acquires = [
        ("RL.ACQUIRE new:c 3 60000", "new:c"),
        ("RL.ACQUIRE new:c 3 60000 COST 2", "new:c"),
        ("RL.ACQUIRE new:cid 3 60000 ID job-1", "new:cid"),
        ("RL.ACQUIRE new:cid 3 60000 ID job-1 COST 2", "new:cid"),
    ];
    // One spec of each kind alone, then a lease and a log beside a rate.
    let alls: &[(&str, &[&str])] = &[
        ("RL.ALL 1 all:c CONCURRENCY 3 60000", &["all:c"]),
        ("RL.ALL 1 all:cid CONCURRENCY 3 60000 ID job-1 COST 2", &["all:cid"]),
        ("RL.ALL 1 all:l LOG 5 60000", &["all:l"]),
        ("RL.ALL 1 all:l LOG 5 60000 COST 3", &["all:l"]),
        ("RL.ALL 1 all:g GCRA 10 1000 BURST 20", &["all:g"]),
        ("RL.ALL 1 all:t TOKENBUCKET 10 1 1000", &["all:t"]),
        ("RL.ALL 1 all:s SLIDE 10 1000", &["all:s"]),
        ("RL.ALL 1 all:q QUOTA 10 DAY TZ Europe/Berlin", &["all:q"]),
        (
            "RL.ALL 3 {u}:db {u}:login {u}:rate CONCURRENCY 2 30000 ID req-1 LOG 5 60000 GCRA 100 1000",
            &["{u}:db", "{u}:login", "{u}:rate"],
        ),
    ];
    for (line, key) in acquires {
        assert_oom(&mut c, line);
        assert!(!exists(&mut c, key), "{line} created {key} over maxmemory");
    }
    for (line, keys) in alls {
        assert_oom(&mut c, line);
        for key in *keys {
            assert!(!exists(&mut c, key), "{line} created {key} over maxmemory");
        }
    }
    let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(keys, 1, "only the ballast");

    // With the memory back, the same calls create their keys.
    free_memory(&mut c);
    for (line, key) in acquires {
        let (reply, lease) = acquire(&mut c, line);
        assert!(reply.allowed && lease.is_some(), "{line}: {reply:?} {lease:?}");
        assert!(exists(&mut c, key), "{line}");
    }
    for (line, keys) in alls {
        let v = call(&mut c, line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let Value::Array(items) = &v else { panic!("{line}: reply {v:?}") };
        assert_eq!(redis::from_redis_value::<i64>(&items[0]).unwrap(), 1, "{line}: {v:?}");
        for key in *keys {
            assert!(exists(&mut c, key), "{line} did not create {key}");
        }
    }
}

#[test]
fn release_and_renew_still_end_and_extend_leases_over_maxmemory() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let (_, a) = acquire(&mut c, "RL.ACQUIRE k 4 10000 ID a");
    let (_, b) = acquire(&mut c, "RL.ACQUIRE k 4 20000 COST 2");
    let (_, last) = acquire(&mut c, "RL.ACQUIRE last 4 10000 ID only");
    let (a, b, last) = (a.unwrap(), b.unwrap(), last.unwrap());
    assert_eq!(pttl(&mut c, "k"), 20000);
    go_over_maxmemory(&mut c);
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS + 1000);

    // RL.ACQUIRE is deny-oom: refused even on an existing key, even as the
    // retry of a live lease that would only renew it. Nothing changes.
    let before = held(&mut c, "k");
    for line in ["RL.ACQUIRE k 4 10000", "RL.ACQUIRE k 4 10000 ID a", "RL.ALL 1 k CONCURRENCY 4 10000 ID a"] {
        assert_oom(&mut c, line);
        assert_eq!(held(&mut c, "k"), before, "{line} wrote over maxmemory");
    }

    // An unknown id: 0, and nothing written (nor created).
    for line in ["RL.RENEW k nobody 90000", "RL.RELEASE k nobody", "RL.RENEW missing x 1000", "RL.RELEASE missing x"] {
        assert_eq!(int(&mut c, line), 0, "{line}");
        assert_eq!(held(&mut c, "k"), before, "{line} wrote");
    }
    assert!(!exists(&mut c, "missing"));

    // A renewal moves the deadline to now + lease_ms, and the key's PTTL
    // with it when it becomes the last deadline.
    assert_eq!(int(&mut c, &format!("RL.RENEW k {a} 30000")), 1);
    assert_eq!(pttl(&mut c, "k"), 30000);
    // A release ends the lease: its unit is free again (RL.PEEK runs under
    // OOM too), and the key lives until the deadline of the other one.
    assert_eq!(int(&mut c, &format!("RL.RELEASE k {a}")), 1);
    assert_eq!(int(&mut c, &format!("RL.RELEASE k {a}")), 0, "already released");
    assert_eq!(int(&mut c, &format!("RL.RENEW k {a} 30000")), 0, "released");
    assert_eq!(pttl(&mut c, "k"), 19000);
    let (peek, _) = acquire(&mut c, "RL.PEEK CONCURRENCY k 4 10000");
    assert_eq!(peek, Reply::new(true, 4, 1, 0, 19000));
    assert_eq!(int(&mut c, &format!("RL.RENEW k {b} 5000")), 1);
    assert_eq!(pttl(&mut c, "k"), 5000);
    // Ending the last live lease deletes the key.
    assert_eq!(int(&mut c, &format!("RL.RELEASE last {last}")), 1);
    assert!(!exists(&mut c, "last"));

    // Still over maxmemory throughout: new keys are still refused.
    assert_oom(&mut c, "RL.ACQUIRE new 4 10000");
    assert!(!exists(&mut c, "new"));
    free_memory(&mut c);
    assert_eq!(acquire(&mut c, "RL.ACQUIRE k 4 10000").0, Reply::new(true, 4, 1, 0, 10000));
}
