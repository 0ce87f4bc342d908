//! Nanoseconds per decision of the pure core, on the allow and deny paths.
//! Run with `make bench-core` (or `cargo bench --bench core`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
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
    for limit in [10u64, 1_000] {
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

criterion_group!(benches, gcra, token_bucket, sliding_window, quota, sliding_log);
criterion_main!(benches);
