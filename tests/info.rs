//! `INFO rl`: every counter checked against a known workload.

mod common;

use std::collections::HashMap;

use common::limiter::{err_of, rl};
use common::{Server, ServerOptions, T0_MS};

/// `INFO rl` as field -> value, with `k=v,k=v` values split out as `field.k`.
fn info_rl(c: &mut redis::Connection) -> HashMap<String, String> {
    let text: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    let mut fields = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && l.contains(':')) {
        let (name, value) = line.split_once(':').unwrap();
        if value.contains('=') {
            for kv in value.split(',') {
                let (k, v) = kv.split_once('=').unwrap();
                fields.insert(format!("{name}.{k}"), v.to_string());
            }
        } else {
            fields.insert(name.to_string(), value.to_string());
        }
    }
    fields
}

/// `rl_retry_after`'s buckets, in order.
fn retry_histogram(info: &HashMap<String, String>) -> [u64; 8] {
    ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "longer", "never"]
        .map(|b| n(info, &format!("rl_retry_after.{b}")))
}

fn n(info: &HashMap<String, String>, field: &str) -> u64 {
    info.get(field).unwrap_or_else(|| panic!("INFO rl has no {field}: {info:?}")).parse().unwrap()
}

#[test]
fn counters_match_a_known_workload() {
    // With an AOF, so that every write's effect is propagated (without AOF
    // or replicas there is nothing to propagate to: see tests/propagation.rs).
    let s = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: vec!["--appendonly".into(), "yes".into()],
        ..Default::default()
    });
    let clock = s.clock.as_ref().unwrap();
    clock.freeze_at_ms(T0_MS);
    let mut c = s.conn();
    let _: () = redis::cmd("SET").arg("string").arg("v").query(&mut c).unwrap();

    // GCRA: 3 allowed (one a PEEK, one COST 0), 2 denied, 1 never, 3 errors.
    rl(&mut c, "RL.GCRA g 2 60000");
    rl(&mut c, "RL.GCRA g 2 60000 PEEK");
    rl(&mut c, "RL.GCRA g 2 60000 COST 0");
    rl(&mut c, "RL.GCRA g 2 60000 COST 2");
    rl(&mut c, "RL.GCRA g 2 60000 COST 2");
    rl(&mut c, "RL.GCRA g 2 60000 COST 3");
    err_of(&mut c, &["RL.GCRA", "g", "x", "60000"]);
    err_of(&mut c, &["RL.GCRA", "string", "2", "60000"]);
    err_of(&mut c, &["RL.GCRA", "g", "2", "60000", "BURST"]);
    // Token bucket: 2 allowed (new keys), 1 denied.
    rl(&mut c, "RL.TOKENBUCKET t1 1 1 1000");
    rl(&mut c, "RL.TOKENBUCKET t2 1 1 1000");
    rl(&mut c, "RL.TOKENBUCKET t1 1 1 1000");
    // Sliding window: 1 allowed, 1 never, 1 error.
    rl(&mut c, "RL.SLIDE s 3 1000 COST 3");
    rl(&mut c, "RL.SLIDE s 3 1000 COST 4");
    err_of(&mut c, &["RL.SLIDE", "g", "3", "1000"]);
    // RL.ALL: 1 allowed (creates a and b), 1 denied, 1 error.
    let all = |c: &mut redis::Connection, cost: &str| -> redis::RedisResult<redis::Value> {
        redis::cmd("RL.ALL")
            .arg(2)
            .arg("a")
            .arg("b")
            .arg("GCRA")
            .arg(9)
            .arg(60000)
            .arg("COST")
            .arg(cost)
            .arg("TOKENBUCKET")
            .arg(1)
            .arg(1)
            .arg(1000)
            .query(c)
    };
    all(&mut c, "1").unwrap();
    all(&mut c, "1").unwrap(); // b is empty: denied
    assert!(all(&mut c, "-1").is_err());

    let info = info_rl(&mut c);
    let row = |cmd: &str| -> [u64; 6] {
        ["calls", "allowed", "denied", "never", "refunds", "errors"].map(|k| n(&info, &format!("rl_{cmd}.{k}")))
    };
    assert_eq!(row("gcra"), [9, 3, 2, 1, 0, 3]);
    assert_eq!(row("tokenbucket"), [3, 2, 1, 0, 0, 0]);
    assert_eq!(row("slide"), [3, 1, 0, 1, 0, 1]);
    assert_eq!(row("all"), [3, 1, 1, 0, 0, 1]);
    assert_eq!(row("throttle"), [0; 6]);
    // The retry-after of each denial: g's two (30 s each: one unit of 2 per
    // minute), t1's and RL.ALL's (b refills in 1 s), and the two nevers.
    assert_eq!(retry_histogram(&info), [0, 0, 2, 0, 2, 0, 0, 2]);
    // Writes (PEEK, COST 0 and denials write nothing): g, t1, t2, s, and
    // RL.ALL's a and b.
    assert_eq!(n(&info, "rl_effects_propagated"), 6);
    // New keys: g, t1, t2, s, a, b.
    assert_eq!(n(&info, "rl_keys_created"), 6);
    assert_eq!(n(&info, "rl_repairs"), 0);
    assert_eq!(n(&info, "rl_panics"), 0);
    assert_eq!(info["rl_version"], env!("CARGO_PKG_VERSION"));
    // RedisModule_CachedMicroseconds: Redis 7.2 and later, every Valkey.
    let v = s.version();
    let expected_clock = if v.is_valkey() || v.at_least(7, 2, 0) { "cached_us" } else { "ms" };
    assert_eq!(info["rl_clock"], expected_clock);
    // The tz database RL.QUOTA's zones come from, compiled in.
    assert_eq!(info["rl_tzdata"], redis_rl::core::tzdata_release());
    assert_eq!(row("quota"), [0, 0, 0, 0, 0, 0]);

    // A backward clock jump: the first call on the drained key repairs it.
    clock.freeze_at_ms(T0_MS - 3_600_000);
    assert!(!rl(&mut c, "RL.GCRA g 2 60000").allowed);
    assert!(!rl(&mut c, "RL.GCRA g 2 60000").allowed);
    let info = info_rl(&mut c);
    assert_eq!(n(&info, "rl_repairs"), 1);
    assert_eq!(n(&info, "rl_effects_propagated"), 7);

    // The section is part of INFO everything, and not of the default INFO.
    let everything: String = redis::cmd("INFO").arg("everything").query(&mut c).unwrap();
    assert!(everything.contains("# rl\r\n") && everything.contains("rl_gcra:calls=11"), "{everything}");
}

#[test]
fn the_retry_after_histogram_moves_with_denials_and_counts_an_rl_all_once() {
    let s = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let mut c = s.conn();
    assert_eq!(retry_histogram(&info_rl(&mut c)), [0; 8]);
    // One unit per 5 ms, then 5 denials at 5 ms each; 1 per 50 ms (a
    // sliding window); 1 per hour; 1 per two hours; and a cost above the limit.
    rl(&mut c, "RL.GCRA a 200 1000 BURST 1");
    for _ in 0..5 {
        assert_eq!(rl(&mut c, "RL.GCRA a 200 1000 BURST 1").retry_after_ms, 5);
    }
    rl(&mut c, "RL.SLIDE b 1 50");
    // The window's count weighs until the next window ends: up to 100 ms.
    let slide = rl(&mut c, "RL.SLIDE b 1 50").retry_after_ms;
    assert!((11..=100).contains(&slide));
    rl(&mut c, "RL.TOKENBUCKET h 1 1 3600000");
    let hour = rl(&mut c, "RL.TOKENBUCKET h 1 1 3600000");
    assert!(!hour.allowed);
    rl(&mut c, "RL.GCRA l 1 7200000");
    let two_hours = rl(&mut c, "RL.GCRA l 1 7200000");
    assert!(!two_hours.allowed);
    assert_eq!(rl(&mut c, "RL.GCRA n 1 1000 COST 2").retry_after_ms, -1);
    assert_eq!(retry_histogram(&info_rl(&mut c)), [5, 1, 0, 0, 0, 1, 1, 1]);
    // An RL.ALL denied by two keys counts once, with its combined retry
    // (the longer of 5 ms and one hour).
    let denied: redis::Value = redis::cmd("RL.ALL")
        .arg(2)
        .arg("a")
        .arg("h")
        .arg(&["GCRA", "200", "1000", "BURST", "1"][..])
        .arg(&["TOKENBUCKET", "1", "1", "3600000"][..])
        .query(&mut c)
        .unwrap();
    assert!(matches!(&denied, redis::Value::Array(v) if v[0] == redis::Value::Int(0)), "{denied:?}");
    assert_eq!(retry_histogram(&info_rl(&mut c)), [5, 1, 0, 0, 0, 2, 1, 1]);
    // The same, cumulative, with the sum of the finite retries, for a
    // Prometheus histogram (`le` buckets, `_count`, `_sum`).
    let info = info_rl(&mut c);
    let cumulative = ["le_10ms", "le_100ms", "le_1s", "le_10s", "le_1min", "le_1h", "le_inf", "never"]
        .map(|b| n(&info, &format!("rl_retry_after_cumulative.{b}")));
    assert_eq!(cumulative, [5, 6, 6, 6, 6, 8, 9, 1]);
    let sum = 5 * 5 + slide + 2 * hour.retry_after_ms + two_hours.retry_after_ms;
    assert_eq!(n(&info, "rl_retry_after_cumulative.sum_ms"), sum as u64);
}
