//! Invariant 5 for the key-copying commands: DUMP/RESTORE, COPY and MIGRATE
//! give identical state (DEBUG DIGEST-VALUE) and expiry, and the copy goes
//! on deciding exactly like the original. And RESTORE of a damaged payload
//! (truncated, garbled, with a valid checksum over a bad module value, or
//! of an unknown encoding version) is an error that creates nothing and
//! leaves the server up.

mod common;

use common::limiter::{dump, err_of, exists, pttl, raw, rl, try_rl};
use common::replication::{
    assert_no_crash_in_log, assert_same_state, digest, is_missing_digest, key_state, mixed_workload, pexpiretime,
    snapshot,
};
use common::{frozen_server, Server, T0_MS};

/// One limiter key of each algorithm, part-way drained.
const LIMITERS: [(&str, &str); 3] =
    [("g", "RL.GCRA g 10 60000 BURST 5"), ("t", "RL.TOKENBUCKET t 5 1 12000"), ("s", "RL.SLIDE s 5 60000")];

fn write_limiters(c: &mut redis::Connection) {
    for (_, line) in LIMITERS {
        for _ in 0..2 {
            assert!(rl(c, line).allowed, "{line}");
        }
    }
}

/// The same command on another key.
fn on_key(line: &str, key: &str) -> String {
    let mut words: Vec<&str> = line.split_whitespace().collect();
    words[1] = key;
    words.join(" ")
}

#[test]
fn dump_and_restore_give_identical_state_and_expiry() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    write_limiters(&mut c);
    mixed_workload(&mut c, s.clock.as_ref().unwrap(), "w:", 10, 3);
    let original = snapshot(&mut c);

    for key in original.keys() {
        let payload = dump(&mut c, key).expect("DUMP of a live key");
        // To another key, with the relative TTL (exact: the clock is frozen)
        // and with the absolute one.
        let ttl = pttl(&mut c, key);
        let _: String = redis::cmd("RESTORE").arg(format!("{key}:rel")).arg(ttl).arg(&payload).query(&mut c).unwrap();
        let at = pexpiretime(&mut c, key);
        let _: String =
            redis::cmd("RESTORE").arg(format!("{key}:abs")).arg(at).arg(&payload).arg("ABSTTL").query(&mut c).unwrap();
        // Over itself after a DEL.
        let _: i64 = redis::cmd("DEL").arg(key).query(&mut c).unwrap();
        let _: String = redis::cmd("RESTORE").arg(key).arg(ttl).arg(&payload).query(&mut c).unwrap();
        for copy in [format!("{key}:rel"), format!("{key}:abs"), key.clone()] {
            assert_eq!(key_state(&mut c, &copy), original[key], "{copy}");
        }
    }

    // The restored limiters go on exactly like the originals.
    for (key, line) in LIMITERS {
        let copy = on_key(line, &format!("{key}:rel"));
        for _ in 0..5 {
            assert_eq!(rl(&mut c, line), rl(&mut c, &copy), "{copy}");
        }
    }
}

#[test]
fn copy_gives_identical_state_and_an_independent_key() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    write_limiters(&mut c);
    for (key, line) in LIMITERS {
        let copy = format!("{key}:copy");
        let copied: i64 = redis::cmd("COPY").arg(key).arg(&copy).query(&mut c).unwrap();
        assert_eq!(copied, 1);
        let original = key_state(&mut c, key);
        assert_eq!(key_state(&mut c, &copy), original, "{copy}");
        // Writing the copy leaves the original alone (the value is not shared).
        assert!(rl(&mut c, &on_key(line, &copy)).allowed);
        assert_ne!(digest(&mut c, &copy), original.digest, "{copy} did not change");
        assert_eq!(key_state(&mut c, key), original, "writing {copy} changed {key}");
        // Both now hold the same state again and answer alike.
        assert!(rl(&mut c, line).allowed);
        assert_eq!(key_state(&mut c, &copy), key_state(&mut c, key));
        assert_eq!(rl(&mut c, line), rl(&mut c, &on_key(line, &copy)));
    }
}

#[test]
fn migrate_to_another_server_gives_identical_state_and_expiry() {
    let (src, dst) = (frozen_server(&[]), frozen_server(&[]));
    let (mut a, mut b) = (src.conn(), dst.conn());
    write_limiters(&mut a);
    mixed_workload(&mut a, src.clock.as_ref().unwrap(), "w:", 10, 3);
    // The variable-size states go too: a log, and a set of two leases.
    for line in ["RL.LOG l 5 60000 COST 2", "RL.LOG l 5 60000"] {
        assert!(rl(&mut a, line).allowed, "{line}");
    }
    for id in ["x", "y"] {
        let _: redis::Value =
            redis::cmd("RL.ACQUIRE").arg("c").arg(3).arg(60000).arg("ID").arg(id).query(&mut a).unwrap();
    }
    // Keep a copy on the source to compare the migrated limiters with.
    for (key, _) in LIMITERS {
        let _: i64 = redis::cmd("COPY").arg(key).arg(format!("{key}:stay")).query(&mut a).unwrap();
    }
    // Both clocks stand at the same instant.
    let now = src.clock.as_ref().unwrap().now_us().unwrap();
    dst.clock.as_ref().unwrap().freeze_at_us(now);
    let mut before = snapshot(&mut a);
    before.retain(|k, _| !k.ends_with(":stay"));

    let keys: Vec<String> = before.keys().cloned().collect();
    let (one, rest) = keys.split_first().unwrap();
    // One key alone, the others in one batch.
    let ok: String =
        redis::cmd("MIGRATE").arg("127.0.0.1").arg(dst.port).arg(one).arg(0).arg(5000).query(&mut a).unwrap();
    assert_eq!(ok, "OK");
    let ok: String = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(dst.port)
        .arg("")
        .arg(0)
        .arg(5000)
        .arg("KEYS")
        .arg(rest)
        .query(&mut a)
        .unwrap();
    assert_eq!(ok, "OK");

    // Both clocks stand still at the same instant, so even the relative TTL
    // MIGRATE carries gives exactly the same absolute expiry.
    assert!(before.contains_key("l") && before.contains_key("c"));
    assert_same_state("migrated keys", &before, &snapshot(&mut b));
    for key in &keys {
        assert!(!exists(&mut a, key), "{key} is still on the source");
    }
    for (key, line) in LIMITERS {
        let stay = on_key(line, &format!("{key}:stay"));
        for _ in 0..5 {
            assert_eq!(rl(&mut b, line), rl(&mut a, &stay), "{line} after MIGRATE");
        }
    }
}

// ---------------------------------------------------------------------------
// Damaged RESTORE payloads
// ---------------------------------------------------------------------------

/// CRC-64/Jones as Redis computes it over DUMP payloads (`crc64.c`):
/// reflected, polynomial 0xad93d23594c935a9, initial value 0, no final xor.
fn crc64(data: &[u8]) -> u64 {
    const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9, bit-reversed
    let mut crc = 0u64;
    for &b in data {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ POLY_REFLECTED } else { crc >> 1 };
        }
    }
    crc
}

#[test]
fn crc64_is_redis_crc64_jones() {
    // The check value from Redis's own crc64 self-test.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// `RDB_TYPE_MODULE_2`: a module value whose every field is preceded by an
/// opcode, ended by `RDB_MODULE_OPCODE_EOF`.
const RDB_TYPE_MODULE_2: u8 = 7;
const OPCODE_EOF: u64 = 0;
const OPCODE_SINT: u64 = 1;
const OPCODE_UINT: u64 = 2;

/// A DUMP payload of one of our values, taken apart:
/// `type, module id (name and encoding version), (opcode, value)*, EOF,
/// RDB version (u16 LE), CRC64 (u64 LE)`.
#[derive(Clone, Debug, PartialEq)]
struct ModuleDump {
    module_id: u64,
    fields: Vec<(u64, u64)>,
    eof: bool,
    rdb_version: u16,
}

/// RDB length encoding (`rdbSaveLen`).
fn save_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// `rdbLoadLen`; advances `at`.
fn load_len(p: &[u8], at: &mut usize) -> u64 {
    let b = p[*at];
    *at += 1;
    match b >> 6 {
        0 => u64::from(b & 0x3f),
        1 => {
            *at += 1;
            u64::from(b & 0x3f) << 8 | u64::from(p[*at - 1])
        }
        _ if b == 0x80 => {
            *at += 4;
            u64::from(u32::from_be_bytes(p[*at - 4..*at].try_into().unwrap()))
        }
        _ if b == 0x81 => {
            *at += 8;
            u64::from_be_bytes(p[*at - 8..*at].try_into().unwrap())
        }
        _ => panic!("not a length: {b:#x}"),
    }
}

impl ModuleDump {
    fn parse(p: &[u8]) -> ModuleDump {
        assert_eq!(p[0], RDB_TYPE_MODULE_2, "not a module value: {p:?}");
        let mut at = 1;
        let module_id = load_len(p, &mut at);
        let mut fields = Vec::new();
        loop {
            let opcode = load_len(p, &mut at);
            if opcode == OPCODE_EOF {
                break;
            }
            assert_eq!(opcode, OPCODE_UINT, "our types store unsigned words only");
            fields.push((opcode, load_len(p, &mut at)));
        }
        let rdb_version = u16::from_le_bytes([p[at], p[at + 1]]);
        assert_eq!(at + 2 + 8, p.len(), "trailing bytes in {p:?}");
        assert_eq!(crc64(&p[..p.len() - 8]), u64::from_le_bytes(p[p.len() - 8..].try_into().unwrap()), "CRC");
        ModuleDump { module_id, fields, eof: true, rdb_version }
    }

    /// The payload, with a valid CRC64 over whatever it holds.
    fn build(&self) -> Vec<u8> {
        let mut p = vec![RDB_TYPE_MODULE_2];
        save_len(&mut p, self.module_id);
        for &(opcode, value) in &self.fields {
            save_len(&mut p, opcode);
            save_len(&mut p, value);
        }
        if self.eof {
            save_len(&mut p, OPCODE_EOF);
        }
        p.extend_from_slice(&self.rdb_version.to_le_bytes());
        let crc = crc64(&p);
        p.extend_from_slice(&crc.to_le_bytes());
        p
    }

    fn encoding_version(&self) -> u64 {
        self.module_id & 1023
    }

    fn with(&self, f: impl FnOnce(&mut ModuleDump)) -> ModuleDump {
        let mut d = self.clone();
        f(&mut d);
        d
    }
}

/// Redis's answer to a payload whose checksum or RDB version is wrong.
const BAD_CHECKSUM: &str = "ERR DUMP payload version or checksum are wrong";
/// Its answer to a payload that passed those checks but did not load.
const BAD_DATA: &str = "ERR Bad data format";

/// RESTORE of `payload` to a fresh key fails with one of `errors`, creates
/// nothing, and the server answers PING.
fn assert_refused(s: &Server, c: &mut redis::Connection, what: &str, payload: &[u8], errors: &[&str]) {
    let key = "restored";
    let e = err_of(c, &[b"RESTORE".as_slice(), key.as_bytes(), b"0", payload]);
    assert!(errors.contains(&e.as_str()), "{what}: RESTORE answered {e:?}, expected one of {errors:?}");
    assert!(!exists(c, key), "{what}: RESTORE created the key");
    assert!(s.alive(), "{what}: the server died\n{}", s.log_tail());
}

/// The DUMP of each of our types, parsed (and checked to rebuild byte for
/// byte, so the payloads built below differ from real ones only where a
/// test changes them).
fn real_dumps(c: &mut redis::Connection) -> Vec<(&'static str, Vec<u8>, ModuleDump)> {
    write_limiters(c);
    LIMITERS
        .iter()
        .map(|&(key, _)| {
            let payload = dump(c, key).expect("DUMP");
            let parsed = ModuleDump::parse(&payload);
            assert_eq!(parsed.build(), payload, "{key}: the payload builder disagrees with Redis");
            assert_eq!(parsed.encoding_version(), 1, "{key}: encoding version");
            (key, payload, parsed)
        })
        .collect()
}

#[test]
fn truncated_or_garbled_restore_payloads_are_refused_and_the_server_stays_up() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (key, payload, _) in real_dumps(&mut c) {
        let mut cases: Vec<(String, Vec<u8>)> = vec![
            ("empty".into(), vec![]),
            ("first half".into(), payload[..payload.len() / 2].to_vec()),
            ("all but the last byte".into(), payload[..payload.len() - 1].to_vec()),
            ("without the checksum".into(), payload[..payload.len() - 8].to_vec()),
            ("with a byte appended".into(), [&payload[..], &[0]].concat()),
        ];
        // Every single byte flipped in turn (the checksum left as it was).
        for i in 0..payload.len() {
            let mut p = payload.clone();
            p[i] ^= 0x5a;
            cases.push((format!("byte {i} flipped"), p));
        }
        for (what, p) in cases {
            assert_refused(&s, &mut c, &format!("{key}: {what}"), &p, &[BAD_CHECKSUM, BAD_DATA]);
        }
        // The intact payload still restores. (The digest also covers whether
        // the key has an expiry, so restore it with one.)
        let ttl = pttl(&mut c, key);
        let _: String = redis::cmd("RESTORE").arg("restored").arg(ttl).arg(&payload).query(&mut c).unwrap();
        assert_eq!(digest(&mut c, "restored"), digest(&mut c, key));
        let _: i64 = redis::cmd("DEL").arg("restored").query(&mut c).unwrap();
    }
    assert_no_crash_in_log(&s);
}

#[test]
fn restore_with_a_valid_checksum_but_a_bad_module_value_is_refused() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (key, _, real) in real_dumps(&mut c) {
        let n = real.fields.len();
        let mut cases = vec![
            ("no fields", real.with(|d| d.fields.clear())),
            ("one field too few", real.with(|d| d.fields.truncate(n - 1))),
            ("one field too many", real.with(|d| d.fields.push((OPCODE_UINT, 7)))),
            ("a signed field", real.with(|d| d.fields[0].0 = OPCODE_SINT)),
            ("a string field", real.with(|d| d.fields[0].0 = 5)),
            ("no EOF marker", real.with(|d| d.eof = false)),
            ("another module's id", real.with(|d| d.module_id ^= 1 << 40)),
            ("a newer RDB version", real.with(|d| d.rdb_version = 999)),
        ];
        if key == "s" {
            // The sliding window's second word is window_ms: 1 to 10^12.
            cases.push(("a zero window", real.with(|d| d.fields[1].1 = 0)));
            cases.push(("a window over 10^12 ms", real.with(|d| d.fields[1].1 = 1_000_000_000_001)));
            cases.push(("a window of 2^64-1 ms", real.with(|d| d.fields[1].1 = u64::MAX)));
        }
        for (what, d) in cases {
            let p = d.build();
            assert_eq!(crc64(&p[..p.len() - 8]).to_le_bytes(), p[p.len() - 8..], "{what}: CRC");
            // Past the checksum, so it is the loader that refuses it.
            let expected = if d.rdb_version == real.rdb_version { BAD_DATA } else { BAD_CHECKSUM };
            assert_refused(&s, &mut c, &format!("{key}: {what}"), &p, &[expected]);
        }
    }
    assert_no_crash_in_log(&s);
}

#[test]
fn restore_of_an_unknown_encoding_version_is_refused() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    for (key, _, real) in real_dumps(&mut c) {
        // 0 is 0.1.0's (tests/compat_0_1_0.rs restores real ones), 1 today's.
        for encver in [2, 3, 1023] {
            let d = real.with(|d| d.module_id = d.module_id & !1023 | encver);
            assert_eq!(d.encoding_version(), encver);
            assert_refused(&s, &mut c, &format!("{key}: encoding version {encver}"), &d.build(), &[BAD_DATA]);
        }
    }
    assert_no_crash_in_log(&s);
}

#[test]
fn extreme_but_well_formed_restored_states_read_as_drained_or_idle_never_crash() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let real = real_dumps(&mut c);
    let now_ns = T0_MS * 1_000_000;
    const FULL: Option<bool> = Some(true);
    const DRAINED: Option<bool> = Some(false);
    // (key of the real dump to start from, the words to put in, the command,
    // whether it must read as full or drained, if the contract says)
    let states: Vec<(&str, Vec<u64>, &str, Option<bool>)> = vec![
        // The largest time a one-word state can hold (2^63 - 1 ns).
        ("g", vec![(1 << 63) - 1], "RL.GCRA x 10 60000 BURST 5", DRAINED),
        ("g", vec![now_ns + 3_600_000_000_000], "RL.GCRA x 10 60000 BURST 5", DRAINED),
        ("g", vec![0], "RL.GCRA x 10 60000 BURST 5", FULL),
        ("t", vec![(1 << 63) - 1], "RL.TOKENBUCKET x 5 1 12000", DRAINED),
        ("t", vec![now_ns + 3_600_000_000_000], "RL.TOKENBUCKET x 5 1 12000", DRAINED),
        ("t", vec![0], "RL.TOKENBUCKET x 5 1 12000", FULL),
        ("s", vec![u64::MAX - 59_999, 60_000, u64::MAX], "RL.SLIDE x 5 60000", DRAINED),
        ("s", vec![T0_MS + 3_600_000, 60_000, 3 | 3 << 32], "RL.SLIDE x 5 60000", DRAINED),
        ("s", vec![T0_MS - 60_000, 60_000, u64::MAX], "RL.SLIDE x 5 60000", DRAINED),
        ("s", vec![T0_MS, 1_000_000_000_000, u64::MAX], "RL.SLIDE x 5 60000", None),
        ("s", vec![0, 1, u64::MAX], "RL.SLIDE x 5 60000", FULL),
        ("s", vec![123, 7, 5 << 32], "RL.SLIDE x 5 60000", FULL),
    ];
    // One-word states live in the value pointer and must stay below 2^63:
    // a larger time (after 2262) is no valid state, refused like one.
    for from in ["g", "t"] {
        let (_, _, d) = real.iter().find(|(k, _, _)| *k == from).unwrap();
        for word in [1 << 63, u64::MAX] {
            let d = d.with(|d| d.fields = vec![(OPCODE_UINT, word)]);
            assert_refused(&s, &mut c, &format!("{from}: time {word}"), &d.build(), &[BAD_DATA]);
        }
    }
    for (from, words, line, full) in states {
        let (_, _, d) = real.iter().find(|(k, _, _)| *k == from).unwrap();
        let d = d.with(|d| d.fields = words.iter().map(|&w| (OPCODE_UINT, w)).collect());
        let _: i64 = redis::cmd("DEL").arg("x").query(&mut c).unwrap();
        let restored: redis::RedisResult<String> = redis::cmd("RESTORE").arg("x").arg(0).arg(d.build()).query(&mut c);
        assert_eq!(restored.as_deref(), Ok("OK"), "{line} from {words:?}");
        let what = format!("{line} on {words:?}");
        let status = rl(&mut c, &format!("{line} COST 0"));
        match full {
            Some(true) => {
                assert_eq!((status.remaining, status.reset_after_ms), (status.limit, 0), "{what}: {status:?}")
            }
            Some(false) => assert_eq!(status.remaining, 0, "{what}: {status:?}"),
            None => {}
        }
        // More status reads, then real requests.
        for opts in [" PEEK", " COST 5 PEEK", "", "", " COST 5"] {
            let r = try_rl(&mut c, &format!("{line}{opts}"))
                .unwrap_or_else(|e| panic!("{what}{opts}: {e}\n{}", s.log_tail()));
            assert!(r.remaining >= 0 && r.remaining <= r.limit, "{what}{opts}: {r:?}");
            assert!(r.reset_after_ms >= 0 && r.retry_after_ms >= -1, "{what}{opts}: {r:?}");
            // Nothing ever blocks longer than one full refill (SLIDE: two windows).
            assert!(r.reset_after_ms <= 120_000, "{what}{opts}: {r:?}");
            if full == DRAINED {
                assert!(!r.allowed, "{what}{opts}: a drained limiter admitted {r:?}");
            }
        }
        let ttl = pttl(&mut c, "x");
        assert!(ttl == -1 || (0..=120_000).contains(&ttl), "{what}: PTTL {ttl}");
    }
    assert!(!is_missing_digest(&digest(&mut c, "g")));
    let _ = raw(&mut c, &["PING"]).expect("PING");
    assert_no_crash_in_log(&s);
}

/// The lines of the server log from byte `from` on that name a refused load.
fn refusals_since(s: &Server, from: usize) -> Vec<String> {
    let log = std::fs::read_to_string(s.log_path()).unwrap_or_default();
    log.get(from..).unwrap_or("").lines().filter(|l| l.contains("rl: refusing")).map(str::to_owned).collect()
}

#[test]
fn a_refused_restore_says_in_the_log_which_kind_which_version_and_why() {
    let s = frozen_server(&[]);
    let mut c = s.conn();
    let clock = s.clock.as_ref().unwrap();
    write_limiters(&mut c);
    // A log of two entries (at two instants), a set of two leases.
    for (i, line) in ["RL.LOG l 5 60000 COST 2", "RL.LOG l 5 60000"].into_iter().enumerate() {
        clock.freeze_at_ms(T0_MS + 10 * i as u64);
        assert!(rl(&mut c, line).allowed, "{line}");
    }
    for id in ["x", "y"] {
        let _: redis::Value =
            redis::cmd("RL.ACQUIRE").arg("c").arg(3).arg(60000).arg("ID").arg(id).query(&mut c).unwrap();
    }
    let real = |c: &mut redis::Connection, key: &str| ModuleDump::parse(&dump(c, key).expect("DUMP"));
    let (g, sw, l, set) = (real(&mut c, "g"), real(&mut c, "s"), real(&mut c, "l"), real(&mut c, "c"));
    // The log's words: window_ms, total, count, (t_ns, cost) x count.
    assert_eq!(l.fields.len(), 3 + 2 * 2, "{l:?}");
    // The set's: count, next_seq, last_ns, then per lease deadline_ns,
    // lease_ms, units, id_len and the id's one word.
    assert_eq!(set.fields.len(), 3 + 2 * 5, "{set:?}");

    let cases: Vec<(&str, ModuleDump, &str)> = vec![
        (
            "a GCRA state of encoding version 3",
            g.with(|d| d.module_id = d.module_id & !1023 | 3),
            "refusing an RL.GCRA state (encoding 3): an encoding version this build does not know",
        ),
        (
            "a GCRA state without its word",
            g.with(|d| d.fields.clear()),
            "refusing an RL.GCRA state (encoding 1): the payload ends early or could not be read",
        ),
        (
            "a sliding window of 0 ms",
            sw.with(|d| d.fields[1].1 = 0),
            "refusing an RL.SLIDE state (encoding 1): a window not 1 ms to 10^12 ms",
        ),
        (
            "a log of encoding version 2",
            l.with(|d| d.module_id = d.module_id & !1023 | 2),
            "refusing an RL.LOG log (encoding 2): an encoding version this build does not know",
        ),
        (
            "a log with its entries out of order",
            l.with(|d| d.fields.swap(3, 5)),
            "refusing an RL.LOG log (encoding 1): entries not in time order",
        ),
        (
            "a log whose total is not its entries' sum",
            l.with(|d| d.fields[1].1 += 1),
            "refusing an RL.LOG log (encoding 1): the total is not the entries' sum",
        ),
        (
            "a log of more entries than any limit",
            l.with(|d| d.fields[2].1 = 10_001),
            "refusing an RL.LOG log (encoding 1): more than 10000 entries",
        ),
        (
            "a lease set of encoding version 3",
            set.with(|d| d.module_id = d.module_id & !1023 | 3),
            "refusing an RL.ACQUIRE lease set (encoding 3): an encoding version this build does not know",
        ),
        (
            "a lease set holding one id twice",
            set.with(|d| d.fields[12].1 = d.fields[7].1),
            "refusing an RL.ACQUIRE lease set (encoding 1): an id held twice",
        ),
        (
            "a lease set whose leases start after its last call",
            set.with(|d| d.fields[2].1 = 0),
            "refusing an RL.ACQUIRE lease set (encoding 1): a lease started after the set's last call",
        ),
        (
            "a lease set of more leases than any limit",
            set.with(|d| d.fields[0].1 = 100_001),
            "refusing an RL.ACQUIRE lease set (encoding 1): more than 100000 leases",
        ),
        (
            "a lease set cut short",
            set.with(|d| d.fields.truncate(10)),
            "refusing an RL.ACQUIRE lease set (encoding 1): the payload ends early or could not be read",
        ),
    ];
    for (what, d, line) in cases {
        let from = std::fs::metadata(s.log_path()).map_or(0, |m| m.len() as usize);
        assert_refused(&s, &mut c, what, &d.build(), &[BAD_DATA]);
        let said = refusals_since(&s, from);
        assert_eq!(said.len(), 1, "{what}: one log line, not {said:?}\n{}", s.log_tail());
        assert!(said[0].contains(line), "{what}: the log says {:?}, not {line:?}", said[0]);
    }
    // The intact payloads still restore, and say nothing.
    let from = std::fs::metadata(s.log_path()).map_or(0, |m| m.len() as usize);
    for (key, d) in [("g", &g), ("s", &sw), ("l", &l), ("c", &set)] {
        let _: String = redis::cmd("RESTORE").arg(format!("{key}:copy")).arg(0).arg(d.build()).query(&mut c).unwrap();
    }
    assert_eq!(refusals_since(&s, from), Vec::<String>::new());
    assert_no_crash_in_log(&s);
}
