//! Property tests of the exact sliding log (`redis_rl::core::SlidingLog`)
//! against a naive model: a plain `Vec` of the admitted `(t, cost)`, read by
//! filtering and summing, with retry and reset found by searching over whole
//! milliseconds, never by a formula. Random traffic, random clock moves (back
//! as well as forward, to the ns), random window and limit changes, refunds
//! and PEEKs; every reply field, the expiry, and the stored log are checked
//! on every call.
//!
//! Then the boundary burst: greedy traffic at the end of one window and the
//! start of the next never gets more than `limit` into any interval
//! `(t - window, t]` from the log, where the sliding window counter
//! (`RL.SLIDE`'s core) admits more on the same traffic.

#[path = "common/model.rs"]
mod model;

use model::{config, least};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use redis_rl::core::{LogBuf, LogChange, LogOp, LogRead, LogRing, SlidingLog, SlidingWindow};

const MS: u64 = 1_000_000;
/// 2027-01-15 in ns, on a whole hour.
const T0: u64 = 1_800_000_000_000 * MS;

// ---------------------------------------------------------------------------
// The model.

/// What the model holds for one key: the admitted `(t_ns, cost)`, in order,
/// and the window they were written with. `None`: no key.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    window_ms: u64,
    entries: Vec<(u64, u64)>,
}

/// The entries of `key` as read at `now` with `limit` and `window_ms`:
/// stamps after now read as now, only those within the window count, at
/// most the newest `limit` units of them, same instants together.
fn reading(key: &Key, now: u64, limit: u64, window_ms: u64) -> Vec<(u64, u64)> {
    let w = window_ms * MS;
    let mut live: Vec<(u64, u64)> = Vec::new();
    for &(t, c) in &key.entries {
        let t = t.min(now);
        if t + w > now {
            push(&mut live, t, c);
        }
    }
    // The newest `limit` units.
    let mut keep = limit;
    let mut out = Vec::new();
    for &(t, c) in live.iter().rev() {
        if keep == 0 {
            break;
        }
        out.push((t, c.min(keep)));
        keep -= c.min(keep);
    }
    out.reverse();
    out
}

fn push(v: &mut Vec<(u64, u64)>, t: u64, c: u64) {
    match v.last_mut() {
        Some(last) if last.0 == t => last.1 += c,
        _ => v.push((t, c)),
    }
}

fn sum(v: &[(u64, u64)]) -> u64 {
    v.iter().map(|e| e.1).sum()
}

/// The cost of `v` still live at `t` under `window_ms`.
fn live_at(v: &[(u64, u64)], t: u64, window_ms: u64) -> u64 {
    v.iter().filter(|e| e.0 + window_ms * MS > t).map(|e| e.1).sum()
}

/// What the model answers and stores for one call.
#[derive(Debug)]
struct Expected {
    allowed: bool,
    remaining: u64,
    retry_after_ms: i64,
    reset_after_ms: u64,
    /// Whether the call writes: `Some(None)` deletes the key.
    write: Option<Option<Key>>,
    /// The key's expiry, ms, when it writes a log.
    expire_at_ms: Option<u64>,
}

fn model(key: Option<&Key>, now: u64, limit: u64, window_ms: u64, op: LogOp) -> Expected {
    let read = key.map(|k| reading(k, now, limit, window_ms)).unwrap_or_default();
    // The stored log differs from its reading by more than aged-out entries.
    let repair = key.is_some_and(|k| {
        k.window_ms != window_ms || k.entries.iter().any(|e| e.0 > now) || {
            let w = window_ms * MS;
            k.entries.iter().filter(|e| e.0 + w > now).map(|e| e.1).sum::<u64>() > limit
        }
    });
    let live = sum(&read);
    let (allowed, after, retry, writes) = match op {
        LogOp::Consume(c) if c > limit => (false, read, -1, repair),
        LogOp::Consume(0) => (true, read, 0, repair),
        LogOp::Consume(c) if live + c <= limit => {
            let mut after = read;
            push(&mut after, now, c);
            (true, after, 0, true)
        }
        LogOp::Consume(c) => {
            let r = least(window_ms + 1, |r| live_at(&read, now + r * MS, window_ms) + c <= limit);
            (false, read, r as i64, repair)
        }
        LogOp::Refund(_) if key.is_none() => (true, read, 0, false),
        LogOp::Refund(n) => {
            let mut after = read;
            let mut n = n;
            while n > 0 {
                let Some(last) = after.last_mut() else { break };
                let cut = last.1.min(n);
                last.1 -= cut;
                n -= cut;
                if last.1 == 0 {
                    after.pop();
                }
            }
            (true, after, 0, true)
        }
    };
    let reset = least(window_ms + 1, |r| live_at(&after, now + r * MS, window_ms) == 0);
    let expire_at_ms = after.last().map(|_| least(u64::MAX / MS, |m| live_at(&after, m * MS, window_ms) == 0));
    Expected {
        allowed,
        remaining: limit - sum(&after),
        retry_after_ms: retry,
        reset_after_ms: reset,
        write: writes.then(|| (!after.is_empty()).then_some(Key { window_ms, entries: after })),
        expire_at_ms: if writes { expire_at_ms } else { None },
    }
}

// ---------------------------------------------------------------------------
// Traffic.

#[derive(Debug, Clone)]
enum Step {
    /// Moves the clock by this many ns (negative: back).
    Clock(i64),
    /// Changes the parameters of later calls.
    Params {
        limit: u64,
        window_ms: u64,
    },
    Call {
        op: LogOp,
        peek: bool,
    },
}

fn limit() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 1..=6u64, 1 => 1..=40u64, 1 => Just(10_000u64)]
}

fn window_ms() -> impl Strategy<Value = u64> {
    prop_oneof![1..=3u64, 1..=50u64, Just(1000u64)]
}

fn step() -> impl Strategy<Value = Step> {
    let ms = MS as i64;
    prop_oneof![
        // Mostly small steps forward, some to the ns, some whole ms.
        6 => (0..=60i64).prop_map(move |n| Step::Clock(n * ms)),
        3 => (0..=60 * ms).prop_map(Step::Clock),
        1 => (0..=3000 * ms).prop_map(Step::Clock),
        // Backward jumps.
        1 => (-3000 * ms..0).prop_map(Step::Clock),
        1 => (limit(), window_ms()).prop_map(|(limit, window_ms)| Step::Params { limit, window_ms }),
        8 => (prop_oneof![6 => 0..=4u64, 1 => 0..=50u64], any::<bool>(), 0..10u8).prop_map(|(n, peek, refund)| {
            if refund == 0 {
                Step::Call { op: LogOp::Refund(n.max(1)), peek: false }
            } else {
                Step::Call { op: LogOp::Consume(n), peek: peek && refund < 3 }
            }
        }),
    ]
}

fn stored(s: &impl LogRead) -> Key {
    Key { window_ms: s.header().window_ms, entries: (0..s.len()).map(|i| s.get(i)).map(|e| (e.t_ns, e.cost)).collect() }
}

fn run(limit0: u64, window0: u64, steps: &[Step]) -> Result<(), TestCaseError> {
    let (mut limit, mut window_ms) = (limit0, window0);
    let mut now = T0;
    let mut store: Option<LogBuf> = None;
    // The same log in a ring of words (as the module keeps it), grown by doubling.
    let mut ring: Option<Vec<u64>> = None;
    let mut key: Option<Key> = None;
    for (i, step) in steps.iter().enumerate() {
        match *step {
            Step::Clock(d) => now = now.checked_add_signed(d).unwrap(),
            Step::Params { limit: l, window_ms: w } => (limit, window_ms) = (l, w),
            Step::Call { op, peek } => {
                let log = SlidingLog::new(limit, window_ms).unwrap();
                let o = log.check(store.as_ref(), now, op);
                if let Some(words) = ring.as_mut() {
                    let r = LogRing::open(&mut words[..]).unwrap();
                    prop_assert_eq!(log.check(Some(&r), now, op), o, "the ring answers as the buffer");
                }
                let want = model(key.as_ref(), now, limit, window_ms, op);
                let d = o.decision;
                let ctx = || {
                    format!(
                        "step {i} ({op:?} at T0 {:+} ns, limit {limit}, window {window_ms}): {o:?} vs {want:?}",
                        i128::from(now) - i128::from(T0)
                    )
                };
                prop_assert_eq!(
                    (d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms),
                    (want.allowed, limit, want.remaining, want.retry_after_ms, want.reset_after_ms),
                    "{}",
                    ctx()
                );
                prop_assert_eq!(o.change.is_some(), want.write.is_some(), "writes: {}", ctx());
                let (Some(change), Some(new_key)) = (o.change, want.write.clone()) else { continue };
                prop_assert_eq!(change.delete, new_key.is_none(), "delete: {}", ctx());
                if peek {
                    continue;
                }
                // What a replica receives: the change's words, checked against its log.
                prop_assert_eq!(LogChange::from_words(&change.to_words()), Some(change));
                prop_assert!(change.fits(store.as_ref().map_or(0, |s| s.len())), "fits: {}", ctx());
                if let Some(k) = new_key {
                    prop_assert_eq!(Some(change.expire_at_ms), want.expire_at_ms, "expiry: {}", ctx());
                    let s = store.get_or_insert_with(|| LogBuf::new(log.empty_header()));
                    change.apply(s);
                    let words = ring.get_or_insert_with(|| {
                        let mut w = vec![0; LogRing::words_for(1)];
                        LogRing::init(&mut w, log.empty_header());
                        w
                    });
                    let r = LogRing::open(&mut words[..]).unwrap();
                    let before = r.len();
                    let grown = (change.len_after(before) > r.capacity()).then(|| {
                        let mut bigger = vec![0; LogRing::words_for(2 * r.capacity())];
                        assert!(r.grow_into(&mut bigger));
                        bigger
                    });
                    if let Some(bigger) = grown {
                        *words = bigger;
                    }
                    let mut r = LogRing::open(&mut words[..]).unwrap();
                    change.apply(&mut r);
                    prop_assert_eq!(&stored(&r), &k, "ring: {}", ctx());
                    prop_assert_eq!(&stored(s), &k, "stored log: {}", ctx());
                    prop_assert!(SlidingLog::valid(s), "valid: {}", ctx());
                    prop_assert!(s.len() as u64 <= limit, "bounded: {}", ctx());
                    prop_assert_eq!(s.header().total, sum(&k.entries));
                    key = Some(k);
                } else {
                    let mut s = store.take().unwrap();
                    change.apply(&mut s);
                    prop_assert!(s.is_empty(), "a deleted log is empty after the change: {}", ctx());
                    key = None;
                    ring = None;
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn the_log_answers_and_stores_what_the_model_does(
        limit in limit(),
        window_ms in window_ms(),
        steps in prop::collection::vec(step(), 1..120),
    ) {
        run(limit, window_ms, &steps)?;
    }

    /// With fixed parameters and a clock that only moves forward, no
    /// interval `(t - window, t]` ever holds more than `limit` admitted.
    #[test]
    fn no_interval_of_a_window_admits_more_than_the_limit(
        limit in 1..=8u64,
        window_ms in 1..=20u64,
        steps in prop::collection::vec((0..=5 * MS, 1..=4u64), 1..300),
    ) {
        let log = SlidingLog::new(limit, window_ms).unwrap();
        let mut store = LogBuf::new(log.empty_header());
        let mut admitted: Vec<(u64, u64)> = Vec::new();
        let mut now = T0;
        for &(dt, cost) in &steps {
            now += dt;
            let o = log.check(Some(&store), now, LogOp::Consume(cost));
            if o.decision.allowed {
                admitted.push((now, cost));
            }
            if let Some(c) = o.change {
                c.apply(&mut store);
            }
        }
        prop_assert!(worst_interval(&admitted, window_ms) <= limit);
    }
}

/// The most cost admitted in any interval `(t - window, t]`: the worst
/// interval ends at an admission.
fn worst_interval(admitted: &[(u64, u64)], window_ms: u64) -> u64 {
    let w = window_ms * MS;
    admitted
        .iter()
        .map(|&(end, _)| admitted.iter().filter(|e| e.0 <= end && e.0 + w > end).map(|e| e.1).sum())
        .max()
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------
// The boundary burst.

/// Greedy unit requests, one per ms from `from_ms` to `to_ms` after T0, each
/// repeated until denied, against a limiter given as `try_admit(now_ns)`.
fn greedy(from_ms: u64, to_ms: u64, mut try_admit: impl FnMut(u64) -> bool) -> Vec<(u64, u64)> {
    let mut admitted = Vec::new();
    for ms in from_ms..=to_ms {
        let now = T0 + ms * MS;
        while try_admit(now) {
            admitted.push((now, 1));
        }
    }
    admitted
}

#[test]
fn a_boundary_burst_never_beats_the_log_but_beats_the_window_counter() {
    let (limit, window_ms) = (10, 1000);
    // Quiet until 900 ms into the window [T0, T0 + 1 s), then greedy up to
    // the middle of the next.
    let log = SlidingLog::new(limit, window_ms).unwrap();
    let mut store = LogBuf::new(log.empty_header());
    let by_log = greedy(900, 1600, |now| {
        let o = log.check(Some(&store), now, LogOp::Consume(1));
        if let Some(c) = o.change {
            c.apply(&mut store);
        }
        o.decision.allowed
    });

    let slide = SlidingWindow::new(limit, window_ms);
    let mut state = None;
    let by_slide = greedy(900, 1600, |now| {
        // The window counter's core works in µs.
        let o = slide.check(state, now / 1000, 1);
        if let Some(w) = o.write {
            state = Some(w.state);
        }
        o.decision.allowed
    });

    // The log: the burst at 900 fills the limit, and nothing more is
    // admitted until it ages out at 1900.
    assert_eq!(by_log, [(T0 + 900 * MS, 1); 10]);
    assert_eq!(worst_interval(&by_log, window_ms), limit);
    // The counter: the burst of 900 weighs less and less in the next window,
    // so by 1600 ms more is admitted while those 10 are still within the
    // trailing second.
    let worst = worst_interval(&by_slide, window_ms);
    assert!(worst > limit, "the window counter admitted at most {worst} in a second");
    // Shown: one more at each tenth of the next window (1100, 1200, ...
    // 1600 ms), so (600 ms, 1600 ms] holds 16 (the README's example).
    let after_burst: Vec<u64> = by_slide.iter().skip(10).map(|e| (e.0 - T0) / MS).collect();
    assert_eq!(by_slide[..10], [(T0 + 900 * MS, 1); 10]);
    assert_eq!(after_burst, [1100, 1200, 1300, 1400, 1500, 1600]);
    assert_eq!(worst, 16);
}
