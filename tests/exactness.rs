//! Invariants 2 and 3 end to end, on a frozen fake clock:
//! - exact retry: a request denied with retry_after_ms = r > 0 is still
//!   denied at now + r - 1 and allowed at now + r;
//! - exact reset: at now + reset_after_ms remaining == limit (and not one
//!   millisecond before), and the key's PTTL equals reset_after_ms.
//!
//! PEEK and COST 0 write nothing, so the test can look ahead in time and
//! then move the clock back to where the sequence was.

mod common;

use common::limiter::{exists, pttl, rl, try_rl};
use common::{FakeClock, Server, ServerOptions, T0_MS};

/// A small deterministic generator, so a failure reproduces.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn check_sequence(s: &Server, clock: &FakeClock, cmd: &str, args: &str, limit: u64, seed: u64) -> (usize, usize) {
    let mut c = s.conn();
    let key = format!("x:{cmd}:{args}:{seed}").replace(' ', "_");
    let mut rng = Lcg(seed);
    let mut t = T0_MS + rng.next(10_000);
    let (mut retries, mut resets) = (0, 0);
    for step in 0..120 {
        clock.freeze_at_ms(t);
        let cost = match rng.next(6) {
            0 => 0,
            1 => 1 + rng.next(limit + 1),
            _ => 1,
        };
        let line = format!("{cmd} {key} {args} COST {cost}");
        let r = rl(&mut c, &line);
        let ctx = format!("{line} at t0+{} (step {step}): {r:?}", t - T0_MS);

        if !r.allowed && r.retry_after_ms > 0 {
            let wait = r.retry_after_ms as u64;
            clock.freeze_at_ms(t + wait - 1);
            assert!(!rl(&mut c, &line).allowed, "allowed 1 ms before retry_after: {ctx}");
            clock.freeze_at_ms(t + wait);
            assert!(rl(&mut c, &format!("{line} PEEK")).allowed, "denied at retry_after: {ctx}");
            retries += 1;
        }
        if r.reset_after_ms > 0 {
            clock.freeze_at_ms(t);
            assert!(exists(&mut c, &key), "no key while not full: {ctx}");
            assert_eq!(pttl(&mut c, &key), r.reset_after_ms, "PTTL != reset_after_ms: {ctx}");
            let status = format!("{cmd} {key} {args} COST 0");
            clock.freeze_at_ms(t + r.reset_after_ms as u64 - 1);
            let before = try_rl(&mut c, &status).unwrap();
            assert!(before.remaining < before.limit, "full 1 ms before reset_after: {ctx} then {before:?}");
            clock.freeze_at_ms(t + r.reset_after_ms as u64);
            let at = try_rl(&mut c, &status).unwrap();
            assert_eq!((at.remaining, at.reset_after_ms), (at.limit, 0), "not full at reset_after: {ctx}");
            resets += 1;
        } else {
            assert_eq!(r.remaining, r.limit, "reset 0 but not full: {ctx}");
        }
        t += rng.next(3) * rng.next(limit_step_ms(args));
    }
    (retries, resets)
}

#[test]
fn retry_after_and_reset_after_are_exact_to_the_millisecond() {
    let s = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    let clock = s.clock.as_ref().unwrap();
    // The look-ahead stops the clock exactly at a key's expiry time and then
    // moves it back. Lazy expiry keeps a key there (`now > expire_at`) on
    // every server, but Redis 8's active expiry deletes it (`now >=
    // expire_at`) whenever its cycle runs in that moment, so the key would
    // be gone when the clock comes back. What is checked here is the
    // module's arithmetic, not the server's expiry cycle: switch it off.
    let _: () = redis::cmd("DEBUG").arg("SET-ACTIVE-EXPIRE").arg(0).query(&mut s.conn()).unwrap();
    let cases: &[(&str, &str, u64)] = &[
        ("RL.GCRA", "10 1000 BURST 6", 6),
        ("RL.GCRA", "7 1000 BURST 3", 3),
        ("RL.GCRA", "3 10000", 3),
        ("RL.TOKENBUCKET", "5 2 1000", 5),
        ("RL.TOKENBUCKET", "4 3 1000", 4),
        ("RL.SLIDE", "5 1000", 5),
        ("RL.SLIDE", "4 700", 4),
        ("RL.SLIDE", "10 3000", 10),
    ];
    for &(cmd, args, limit) in cases {
        let mut total = (0, 0);
        for seed in 1..=3 {
            let (retries, resets) = check_sequence(&s, clock, cmd, args, limit, seed);
            total = (total.0 + retries, total.1 + resets);
        }
        // The sequences must actually exercise both invariants.
        assert!(total.0 >= 10 && total.1 >= 10, "{cmd} {args}: only {total:?} retries/resets checked");
    }
}

/// A time step that lets a limiter refill about one unit on average, so
/// sequences see both denials and refills: the period over the limit.
fn limit_step_ms(args: &str) -> u64 {
    let n: Vec<u64> = args.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    // GCRA "limit period", token bucket "capacity refill period", slide "limit window".
    let (count, period) = match n.len() {
        3 if args.contains("BURST") => (n[0], n[1]),
        3 => (n[1], n[2]),
        _ => (n[0], n[1]),
    };
    (period / count).max(2)
}
