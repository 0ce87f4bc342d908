//! Nanoseconds per decision of the pure core, on the allow and deny paths.
//! Run with `make bench-core` (or `cargo bench --bench core`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use redis_rl::core::{AcquireOutcome, LeaseBlock, LeaseChange, LeaseHeader, LeaseRead, Leases};
use redis_rl::core::{
    Calendar, CalendarCache, Gcra, LogBuf, LogOp, LogRead, Period, Quota, SlidingLog, SlidingWindow, TokenBucket, Unit,
    Zone,
};

/// A realistic "now", µs since the epoch (the sliding window's unit).
const NOW: u64 = 1_800_000_000_000_000;
/// The same in ns (GCRA's and the token bucket's unit).
const NOW_NS: u64 = NOW * 1000;

fn gcra(c: &mut Criterion) {
    let mut g = c.benchmark_group("gcra");
    let lim = Gcra::new(100, 60_000, 100).unwrap();
    let idle = lim.check(None, NOW_NS, 1).write.unwrap().state;
    let drained = lim.check(None, NOW_NS, 100).write.unwrap().state;
    assert!(lim.check(Some(idle), NOW_NS, 1).decision.allowed && !lim.check(Some(drained), NOW_NS, 1).decision.allowed);
    g.bench_function("allow", |b| b.iter(|| lim.check(black_box(Some(idle)), black_box(NOW_NS), black_box(1))));
    g.bench_function("deny", |b| b.iter(|| lim.check(black_box(Some(drained)), black_box(NOW_NS), black_box(1))));
    g.finish();
}

fn token_bucket(c: &mut Criterion) {
    let mut g = c.benchmark_group("token_bucket");
    let lim = TokenBucket::new(100, 10, 1_000).unwrap();
    let idle = lim.check(None, NOW_NS, 1).write.unwrap().state;
    let drained = lim.check(None, NOW_NS, 100).write.unwrap().state;
    assert!(lim.check(Some(idle), NOW_NS, 1).decision.allowed && !lim.check(Some(drained), NOW_NS, 1).decision.allowed);
    g.bench_function("allow", |b| b.iter(|| lim.check(black_box(Some(idle)), black_box(NOW_NS), black_box(1))));
    g.bench_function("deny", |b| b.iter(|| lim.check(black_box(Some(drained)), black_box(NOW_NS), black_box(1))));
    g.finish();
}

fn sliding_window(c: &mut Criterion) {
    let mut g = c.benchmark_group("sliding_window");
    let lim = SlidingWindow::new(100, 60_000);
    let some = lim.check(None, NOW, 1).write.unwrap().state;
    let full = lim.check(None, NOW, 100).write.unwrap().state;
    // Half a second into the next window: the full previous window still
    // weighs 99.2 of 100, so one more is denied.
    let later = NOW + 60_500_000;
    assert!(lim.check(Some(some), NOW, 1).decision.allowed, "the allow case must allow");
    assert!(!lim.check(Some(full), later, 1).decision.allowed, "the deny case must deny");
    g.bench_function("allow", |b| b.iter(|| lim.check(black_box(Some(some)), black_box(NOW), black_box(1))));
    g.bench_function("deny", |b| b.iter(|| lim.check(black_box(Some(full)), black_box(later), black_box(1))));
    g.finish();
}

/// `RL.QUOTA ... DAY TZ Europe/Berlin`: the decision, the window from the
/// module's cache (the call path), and what the cache saves: the window
/// computed from scratch and the zone looked up.
fn quota(c: &mut Criterion) {
    let mut g = c.benchmark_group("quota");
    let now_ns = NOW * 1_000;
    let day = Period::Calendar(Unit::Day);
    let berlin = Some(&b"Europe/Berlin"[..]);
    let mut cache: CalendarCache<16> = CalendarCache::new();
    let w = cache.window(day, berlin, now_ns).unwrap();
    let lim = Quota::new(100);
    let some = lim.check(None, w, now_ns, 1).write.unwrap().state;
    let full = lim.check(None, w, now_ns, 100).write.unwrap().state;
    assert!(!lim.check(Some(full), w, now_ns, 1).decision.allowed, "the deny case must deny");
    g.bench_function("allow", |b| {
        b.iter(|| lim.check(black_box(Some(some)), black_box(w), black_box(now_ns), black_box(1)))
    });
    g.bench_function("deny", |b| {
        b.iter(|| lim.check(black_box(Some(full)), black_box(w), black_box(now_ns), black_box(1)))
    });
    g.bench_function("window_cached", |b| {
        b.iter(|| cache.window(black_box(day), black_box(berlin), black_box(now_ns)))
    });
    let cal = Calendar::new(day, Zone::lookup(b"Europe/Berlin").ok()).unwrap();
    g.bench_function("window_computed", |b| b.iter(|| black_box(&cal).compute(black_box(now_ns))));
    g.bench_function("zone_lookup", |b| b.iter(|| Zone::lookup(black_box(b"Europe/Berlin"))));
    g.finish();
}

/// The exact sliding log with limits 10 and 1,000 (ns time): a decision on
/// a log one short of full (allow) and full (deny), and the steady state of
/// check + apply where each call ages out the oldest entry and appends one.
fn sliding_log(c: &mut Criterion) {
    const NOW_NS: u64 = NOW * 1_000;
    const MS: u64 = 1_000_000;
    for limit in [10u64, 1_000, 10_000] {
        let mut g = c.benchmark_group(format!("sliding_log_{limit}"));
        let window_ms = 60_000;
        let lim = SlidingLog::new(limit, window_ms).unwrap();
        // One entry per `step` ns over the last window: full at NOW_NS.
        let step = window_ms * MS / limit;
        let mut full = LogBuf::new(lim.empty_header());
        for i in 0..limit {
            let at = NOW_NS - window_ms * MS + (i + 1) * step;
            lim.check(Some(&full), at, LogOp::Consume(1)).change.unwrap().apply(&mut full);
        }
        assert_eq!(full.len() as u64, limit);
        let mut short = full.clone();
        lim.check(Some(&short), NOW_NS, LogOp::Refund(1)).change.unwrap().apply(&mut short);
        assert!(lim.check(Some(&short), NOW_NS, LogOp::Consume(1)).decision.allowed, "the allow case must allow");
        assert!(!lim.check(Some(&full), NOW_NS, LogOp::Consume(1)).decision.allowed, "the deny case must deny");
        g.bench_function("allow", |b| {
            b.iter(|| lim.check(black_box(Some(&short)), black_box(NOW_NS), black_box(LogOp::Consume(1))))
        });
        g.bench_function("deny", |b| {
            b.iter(|| lim.check(black_box(Some(&full)), black_box(NOW_NS), black_box(LogOp::Consume(1))))
        });
        let mut rolling = full.clone();
        let mut now = NOW_NS;
        g.bench_function("check_apply_rolling", |b| {
            b.iter(|| {
                now += step;
                let o = lim.check(Some(&rolling), black_box(now), LogOp::Consume(1));
                if let Some(ch) = o.change {
                    ch.apply(&mut rolling);
                }
                o.decision
            })
        });
        assert!(rolling.len() as u64 <= limit);
        g.finish();
    }
}

/// Applies a change to a lease set kept as a block of words, growing it first
/// when it has no room (as the module does).
fn apply_lease(words: &mut Vec<u64>, c: &LeaseChange) {
    let b = LeaseBlock::open(&mut words[..]).unwrap();
    if let Some((cap, idw)) = b.needs_room(c) {
        let mut bigger = vec![0; LeaseBlock::words_for(cap, idw)];
        b.grow_into(&mut bigger, idw).unwrap();
        *words = bigger;
    }
    c.apply(&mut LeaseBlock::open(&mut words[..]).unwrap());
}

/// The concurrency lease set with 100, 10,000 and 100,000 live leases of
/// mixed deadlines (generated ids): a denial on a full set (its retry time is
/// a weighted order statistic), an allowed acquire on a set one short of
/// full, and acquire + apply + release + apply. Flat from 100 to 100,000:
/// the work is O(log n).
fn lease(c: &mut Criterion) {
    const MS: u64 = 1_000_000;
    for n in [100u64, 10_000, 100_000] {
        let mut g = c.benchmark_group(format!("lease_{n}"));
        let leases = Leases::new(n, 60_000).unwrap();
        let mut words = vec![0; LeaseBlock::words_for(1, 2)];
        LeaseBlock::init(&mut words, 2, LeaseHeader { next_seq: 0, last_ns: 0 }, 0x5eed).unwrap();
        for i in 0..n {
            // Deadlines spread over a minute, not in acquire order.
            let ms = 1 + (i * 7919) % 59_000;
            let at = NOW_NS - 60_000 * MS + i;
            let o =
                Leases::new(n, ms).unwrap().acquire(Some(&LeaseBlock::open(&mut words[..]).unwrap()), at, 1, None, 0);
            apply_lease(&mut words, &o.change.unwrap());
        }
        let now = NOW_NS - 60_000 * MS + n;
        let mut short = words.clone();
        let first = LeaseBlock::open(&mut short[..]).unwrap().get(0).id;
        let c0 = Leases::release(Some(&LeaseBlock::open(&mut short[..]).unwrap()), now, &first).change.unwrap();
        apply_lease(&mut short, &c0);
        let full = LeaseBlock::open(&mut words[..]).unwrap();
        assert_eq!(full.len() as u64, n);
        let short_b = LeaseBlock::open(&mut short[..]).unwrap();
        assert!(!leases.acquire(Some(&full), now, 1, None, 0).decision.allowed, "the deny case must deny");
        assert!(leases.acquire(Some(&short_b), now, 1, None, 0).decision.allowed, "the allow case must allow");
        g.bench_function("deny", |b| {
            b.iter(|| -> AcquireOutcome { leases.acquire(black_box(Some(&full)), black_box(now), 1, None, 0) })
        });
        g.bench_function("allow", |b| {
            b.iter(|| -> AcquireOutcome { leases.acquire(black_box(Some(&short_b)), black_box(now), 1, None, 0) })
        });
        let mut rolling = short.clone();
        g.bench_function("acquire_apply_release_apply", |b| {
            b.iter(|| {
                let o = leases.acquire(Some(&LeaseBlock::open(&mut rolling[..]).unwrap()), black_box(now), 1, None, 0);
                let c = o.change.unwrap();
                apply_lease(&mut rolling, &c);
                let id = o.lease().unwrap();
                let r = Leases::release(Some(&LeaseBlock::open(&mut rolling[..]).unwrap()), now, &id);
                apply_lease(&mut rolling, &r.change.unwrap());
            })
        });
        assert_eq!(LeaseBlock::open(&mut rolling[..]).unwrap().len() as u64, n - 1);
        g.finish();
    }
}

criterion_group!(benches, gcra, token_bucket, sliding_window, quota, sliding_log, lease);
criterion_main!(benches);
