//! RL.LOG end to end, on the fake clock: every reply field and PTTL against
//! an exact model (a list of entries) over random traffic; the boundary
//! burst RL.SLIDE lets through and RL.LOG does not; refunds; errors that
//! write nothing; RL.ALL and RL.PEEK; MEMORY USAGE per entry; RDB, DUMP,
//! RESTORE and COPY; and replicas and AOF replay (before and after a
//! rewrite) holding exactly the master's logs.

mod common;

use common::limiter::{all_ints, dump, err_of, exists, pttl, r, rl, Reply};
use common::replication::{assert_reload_restore_and_copy_keep, digest, replica_and_aof_replay, snapshot};
use common::{freeze, frozen_server, Server, T0_MS};
use proptest::prelude::*;
use redis::Connection;

/// The exact log, as SPEC describes it: entries `(t_ms, cost)`, oldest
/// first, one per admitted instant. Fixed `limit` and `window`; time only
/// moves forward.
#[derive(Debug, Clone, Default)]
struct Model {
    entries: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Cost(u64),
    Peek(u64),
    Refund(u64),
}

impl Model {
    fn live(&self, now: u64, window: u64) -> impl Iterator<Item = &(u64, u64)> {
        self.entries.iter().filter(move |(t, _)| t + window > now)
    }

    fn reply(&self, now: u64, limit: u64, window: u64, allowed: bool, retry: i64) -> Reply {
        let total: u64 = self.live(now, window).map(|e| e.1).sum();
        let reset = self.live(now, window).last().map_or(0, |(t, _)| t + window - now);
        r(allowed, limit as i64, (limit - total) as i64, retry, reset as i64)
    }

    /// The reply to `op` at `now`, applying what the server stores.
    fn call(&mut self, now: u64, limit: u64, window: u64, op: Op) -> Reply {
        let total: u64 = self.live(now, window).map(|e| e.1).sum();
        match op {
            Op::Cost(c) | Op::Peek(c) if c > limit => self.reply(now, limit, window, false, -1),
            Op::Cost(0) | Op::Peek(0) => self.reply(now, limit, window, true, 0),
            Op::Cost(c) | Op::Peek(c) if total + c <= limit => {
                let mut after = self.clone();
                after.entries.retain(|(t, _)| t + window > now);
                match after.entries.last_mut() {
                    Some((t, cost)) if *t == now => *cost += c,
                    _ => after.entries.push((now, c)),
                }
                let reply = after.reply(now, limit, window, true, 0);
                if matches!(op, Op::Cost(_)) {
                    *self = after;
                }
                reply
            }
            Op::Cost(c) | Op::Peek(c) => {
                let mut need = total + c - limit;
                let mut at = now;
                for &(t, cost) in self.live(now, window) {
                    if need == 0 {
                        break;
                    }
                    need = need.saturating_sub(cost);
                    at = t;
                }
                self.reply(now, limit, window, false, (at + window - now) as i64)
            }
            Op::Refund(n) => {
                self.entries.retain(|(t, _)| t + window > now);
                let mut left = n;
                while left > 0 {
                    let Some((_, cost)) = self.entries.last_mut() else { break };
                    let take = left.min(*cost);
                    *cost -= take;
                    left -= take;
                    if *cost == 0 {
                        self.entries.pop();
                    }
                }
                self.reply(now, limit, window, true, 0)
            }
        }
    }
}

fn line(key: &str, limit: u64, window: u64, op: Op) -> String {
    match op {
        Op::Cost(c) => format!("RL.LOG {key} {limit} {window} COST {c}"),
        Op::Peek(c) => format!("RL.LOG {key} {limit} {window} COST {c} PEEK"),
        Op::Refund(n) => format!("RL.LOG {key} {limit} {window} REFUND {n}"),
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..=4).prop_map(Op::Cost),
        1 => (0u64..=12).prop_map(Op::Cost),
        1 => (0u64..=4).prop_map(Op::Peek),
        1 => (1u64..=6).prop_map(Op::Refund),
    ]
}

#[test]
fn every_reply_field_and_pttl_match_an_exact_model() {
    let s = frozen_server(&[]);
    let c = std::cell::RefCell::new(s.conn());
    let case = std::cell::Cell::new(0u64);
    let config = ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() };
    proptest!(config, |(limit in 1u64..=10, window in 1u64..=2000,
                        steps in prop::collection::vec((0u64..=700, op()), 1..60))| {
        case.set(case.get() + 1);
        let key = format!("log:{}", case.get());
        let c = &mut *c.borrow_mut();
        let mut model = Model::default();
        let mut now = T0_MS + 1_000_000 * case.get();
        for (i, &(dt, op)) in steps.iter().enumerate() {
            // Several calls at one instant now and then, to merge entries.
            now += if i % 4 == 0 { 0 } else { dt };
            freeze(&s, now);
            let l = line(&key, limit, window, op);
            let want = model.call(now, limit, window, op);
            prop_assert_eq!(rl(c, &l), want, "step {}: {} (log {:?})", i, l, model.entries);
            // The key's PTTL is the stored log's reset (an allowed PEEK
            // answers as if consumed, and stores nothing).
            let stored = model.reply(now, limit, window, true, 0).reset_after_ms;
            let p = pttl(c, &key);
            if stored > 0 {
                prop_assert_eq!(p, stored, "PTTL after {}", l);
            } else {
                // Gone, or (the server deletes a key once its expiry
                // millisecond has passed) in its last millisecond.
                prop_assert!(p == -2 || p == 0, "PTTL {} after {}", p, l);
            }
        }
    });
}

#[test]
fn a_burst_at_a_window_boundary_never_gets_past_the_log_but_gets_past_the_window_counter() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // Windows of 1 s, aligned to the epoch (T0 is a whole second).
    let t = |ms: u64| T0_MS + ms;
    freeze(&s, t(900));
    for _ in 0..10 {
        assert!(rl(&mut c, "RL.LOG log 10 1000").allowed);
        assert!(rl(&mut c, "RL.SLIDE slide 10 1000").allowed);
    }
    let (mut log, mut slide) = (0, 0);
    // One request every 100 ms through the next window.
    for ms in (1000..1900).step_by(100) {
        freeze(&s, t(ms));
        log += rl(&mut c, "RL.LOG log 10 1000").allowed as u32;
        slide += rl(&mut c, "RL.SLIDE slide 10 1000").allowed as u32;
    }
    // In (0.6 s, 1.6 s] the window counter admitted more than 10; the log
    // admitted none until the burst aged out at 1.9 s.
    assert_eq!(log, 0);
    assert!(slide >= 5, "the window counter admitted {slide} more within a second of the burst");
    assert_eq!(rl(&mut c, "RL.LOG log 10 1000 PEEK"), r(false, 10, 0, 100, 100));
    freeze(&s, t(1899));
    assert_eq!(rl(&mut c, "RL.LOG log 10 1000"), r(false, 10, 0, 1, 1));
    freeze(&s, t(1900));
    assert_eq!(rl(&mut c, "RL.LOG log 10 1000"), r(true, 10, 9, 0, 1000));
}

#[test]
fn retry_and_reset_are_exact_to_the_millisecond() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 2"), r(true, 5, 3, 0, 10000));
    freeze(&s, T0_MS + 3000);
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 3"), r(true, 5, 0, 0, 10000));
    assert_eq!(pttl(&mut c, "k"), 10000);
    // Cost 2 must wait for the first entry (2 units, at T0) to age out.
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 2"), r(false, 5, 0, 7000, 10000));
    // Cost 4 needs the second (3 units, at T0 + 3 s) too.
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 4"), r(false, 5, 0, 10000, 10000));
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 6"), r(false, 5, 0, -1, 10000));
    freeze(&s, T0_MS + 9999);
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 2"), r(false, 5, 0, 1, 3001));
    freeze(&s, T0_MS + 10000);
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 2"), r(true, 5, 0, 0, 10000));
    // Idle: the key vanishes when the newest entry ages out (the server
    // deletes it once its expiry millisecond has passed).
    freeze(&s, T0_MS + 20001);
    assert!(!exists(&mut c, "k"));
    assert_eq!(rl(&mut c, "RL.LOG k 5 10000 COST 0"), r(true, 5, 5, 0, 0));
    assert!(!exists(&mut c, "k"), "a status query writes nothing");
}

#[test]
fn refunds_take_the_newest_units_first_and_an_emptied_log_is_deleted() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    // A refund on a missing key writes nothing.
    assert_eq!(rl(&mut c, "RL.LOG k 10 1000 REFUND 3"), r(true, 10, 10, 0, 0));
    assert!(!exists(&mut c, "k"));
    assert!(rl(&mut c, "RL.LOG k 10 1000 COST 4").allowed);
    freeze(&s, T0_MS + 400);
    assert!(rl(&mut c, "RL.LOG k 10 1000 COST 5").allowed);
    // The newest entry (5 at +400) goes first: the log ages out at +1000.
    assert_eq!(rl(&mut c, "RL.LOG k 10 1000 REFUND 6"), r(true, 10, 7, 0, 600));
    assert_eq!(pttl(&mut c, "k"), 600);
    // Reserve 4, refund 4 equals consuming nothing: the key is gone.
    assert_eq!(rl(&mut c, "RL.LOG k 10 1000 REFUND 100"), r(true, 10, 10, 0, 0));
    assert!(!exists(&mut c, "k"));
    // Reserve c, refund r equals consuming c - r.
    assert!(rl(&mut c, "RL.LOG a 10 1000 COST 7").allowed);
    let refunded = rl(&mut c, "RL.LOG a 10 1000 REFUND 3");
    assert_eq!(refunded, rl(&mut c, "RL.LOG b 10 1000 COST 4"));
    assert_eq!((digest(&mut c, "a"), pttl(&mut c, "a")), (digest(&mut c, "b"), pttl(&mut c, "b")));
    // Every refund call counts, the one on a missing key too.
    assert_eq!(info_refunds(&mut c), 4);
}

fn info_refunds(c: &mut Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("rl").query(c).unwrap();
    let line = info.lines().find(|l| l.starts_with("rl_log:")).expect("rl_log in INFO rl");
    let field = line.split([':', ',']).find_map(|f| f.strip_prefix("refunds=")).expect("refunds=");
    field.parse().unwrap()
}

#[test]
fn bad_input_is_an_error_that_writes_nothing() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    assert!(rl(&mut c, "RL.LOG k 3 1000").allowed);
    let before = (dump(&mut c, "k"), pttl(&mut c, "k"));
    for (args, want) in [
        ("k 0 1000", "ERR limit is out of range (must be 1 to 10000)"),
        ("k 10001 1000", "ERR limit is out of range (must be 1 to 10000)"),
        ("k 3 0", "ERR window_ms is out of range"),
        ("k 3 1000000000001", "ERR window_ms is out of range"),
        ("k 3 1000 COST 1 COST 1", "ERR syntax error"),
        ("k 3 1000 REFUND 0", "ERR REFUND is out of range"),
        ("k 3 1000 REFUND 1 COST 1", "ERR syntax error"),
        ("k 3 1000 REFUND 1 PEEK", "ERR syntax error"),
        ("k 3 01000", "ERR window_ms"),
        ("k 3", "ERR wrong number of arguments"),
    ] {
        let mut words = vec!["RL.LOG"];
        words.extend(args.split(' '));
        let e = err_of(&mut c, &words);
        assert!(e.starts_with(want), "RL.LOG {args}: {e}");
    }
    assert_eq!((dump(&mut c, "k"), pttl(&mut c, "k")), before);
    // Another type, and another kind, are WRONGTYPE.
    let _: () = redis::cmd("SET").arg("s").arg("x").query(&mut c).unwrap();
    assert!(rl(&mut c, "RL.GCRA g 3 1000").allowed);
    for key in ["s", "g"] {
        assert!(err_of(&mut c, &["RL.LOG", key, "3", "1000"]).starts_with("WRONGTYPE"));
    }
    assert!(err_of(&mut c, &["RL.GCRA", "k", "3", "1000"]).starts_with("WRONGTYPE"));
    let t: String = redis::cmd("TYPE").arg("k").query(&mut c).unwrap();
    assert_eq!(t, "rl-log---");
}

#[test]
fn rl_all_and_rl_peek_take_a_log_spec() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let line = "RL.ALL 2 {u}:rate {u}:login GCRA 100 1000 LOG 2 60000";
    assert_eq!(all_ints(&mut c, line), (true, 0, vec![vec![1, 100, 99, 0, 10], vec![1, 2, 1, 0, 60000]]));
    freeze(&s, T0_MS + 1000);
    assert!(all_ints(&mut c, line).0);
    // The log denies: nothing is consumed from the rate limit either.
    let rate = dump(&mut c, "{u}:rate");
    // (Each limit answers as its PEEK would: GCRA as if it consumed.)
    assert_eq!(all_ints(&mut c, line), (false, 59000, vec![vec![1, 100, 98, 0, 20], vec![0, 2, 0, 59000, 60000]]));
    assert_eq!(dump(&mut c, "{u}:rate"), rate);
    assert_eq!(rl(&mut c, "RL.PEEK LOG {u}:login 2 60000"), r(false, 2, 0, 59000, 60000));
    // A refund spec gives the newest unit back.
    let (ok, _, limits) = all_ints(&mut c, "RL.ALL 1 {u}:login LOG 2 60000 REFUND 1");
    assert!(ok);
    assert_eq!(limits[0], vec![1, 2, 1, 0, 59000]);
}

#[test]
fn memory_usage_counts_each_entry_and_stays_within_48_bytes_per_entry() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let usage = |c: &mut Connection| -> i64 { redis::cmd("MEMORY").arg("USAGE").arg("k").query(c).unwrap() };
    for i in 0..2000u64 {
        freeze(&s, T0_MS + i);
        assert!(rl(&mut c, "RL.LOG k 10000 3600000").allowed);
    }
    let big = usage(&mut c);
    assert!(big <= 48 * 2000, "MEMORY USAGE {big} for 2,000 entries");
    assert!(big >= 16 * 2000, "MEMORY USAGE {big} counts the entries");
    // Once they age out, the next write leaves one entry and shrinks the block.
    freeze(&s, T0_MS + 3_600_000 + 1998);
    assert_eq!(rl(&mut c, "RL.LOG k 10000 3600000"), r(true, 10000, 9998, 0, 3_600_000));
    let small = usage(&mut c);
    assert!(small < big / 16, "{small} after shrinking from {big}");
    eprintln!("MEMORY USAGE: 2,000 entries {big} bytes ({} per entry), 1 entry {small} bytes", big as f64 / 2000.0);
}

/// Random traffic on `keys` logs (limits 3 to 40, so blocks grow and
/// shrink), with refunds, PEEKs, window changes and a lowered limit.
fn workload(s: &Server, c: &mut Connection, keys: usize, calls: u64) {
    let mut now = T0_MS;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..calls {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        now += x % 40;
        freeze(s, now);
        let k = (x >> 8) as usize % keys;
        let limit = 3 + 37 * (k as u64 % 2);
        let window = if i % 97 == 0 { 3000 } else { 2000 };
        let limit = if i % 89 == 0 { limit / 2 } else { limit };
        let tail = match (x >> 20) % 10 {
            0 => format!("REFUND {}", 1 + (x >> 30) % 5),
            1 => "PEEK".to_string(),
            _ => format!("COST {}", (x >> 30) % 4),
        };
        rl(c, &format!("RL.LOG {{log}}:{k} {limit} {window} {tail}"));
    }
}

#[test]
fn replicas_and_aof_replay_hold_the_masters_logs() {
    // The replica's own clock is elsewhere: it stores what the master decided.
    let copies = replica_and_aof_replay(T0_MS + 777, |master, m| workload(master, m, 6, 3000));
    assert!(copies.expected.len() >= 4, "{:?}", copies.expected);
    // What was propagated: each write's change (89 bytes), never a whole
    // log, though the logs held up to 40 entries.
    let payloads = &copies.propagated;
    assert!(payloads.len() > 1000, "{} effects", payloads.len());
    assert!(payloads.iter().all(|p| p.len() == 89 && p[0] == b'l'), "{:?}", payloads.iter().find(|p| p.len() != 89));
    // After a rewrite the AOF holds each whole log once.
    assert!(copies.rewritten.iter().all(|p| p[0] == b'L'));
}

#[test]
fn rdb_reload_dump_restore_and_copy_keep_the_log() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    workload(&s, &mut c, 3, 600);
    let expected = snapshot(&mut c);
    assert!(!expected.is_empty());
    assert_reload_restore_and_copy_keep(&mut c, &expected);
    // A DUMP payload whose log is corrupt is refused, not loaded.
    let mut payload = dump(&mut c, expected.keys().next().unwrap()).unwrap();
    let at = payload.len() / 2;
    payload[at] ^= 0x55;
    assert!(redis::cmd("RESTORE").arg("bad").arg(0).arg(payload).query::<()>(&mut c).is_err());
    assert!(!exists(&mut c, "bad"));
}
