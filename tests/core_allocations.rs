//! The pure core allocates nothing per decision: a regression guard that
//! times nothing. The crate's global allocator counts each thread's
//! allocations (`redis_rl::alloc_count`); every algorithm decides thousands
//! of requests (allow, deny, never, repair, a changed window) and the count
//! must not move.

use redis_rl::alloc_count::allocations;
use redis_rl::core::{Gcra, SlidingWindow, TokenBucket};

const T0: u64 = 1_800_000_000_000_000;

#[test]
fn deciding_allocates_nothing() {
    let gcra = Gcra::new(10, 1000, 6).unwrap();
    let bucket = TokenBucket::new(5, 2, 1000).unwrap();
    let windows = [SlidingWindow::new(5, 1000), SlidingWindow::new(5, 3000)];
    let (mut g, mut b, mut s) = (None, None, None);
    // Which paths the run took: allowed, denied, never (cost > limit), and
    // repairs (a write without consuming), so the guard covers each.
    let mut paths = [0u64; 4];
    let mut tally = |d: &redis_rl::core::Decision, cost: u64, wrote: bool| {
        let path = match (d.allowed, d.retry_after_ms) {
            (true, _) if wrote && cost == 0 => 3,
            (true, _) => 0,
            (false, -1) => 2,
            (false, _) if wrote => 3,
            (false, _) => 1,
        };
        paths[path] += 1;
    };

    let before = allocations();
    for i in 0..10_000u64 {
        // Mostly forward in time, with a backward jump now and then.
        let now = if i % 97 == 0 { T0 } else { T0 + i * 37_000 };
        let cost = i % 8;
        let o = gcra.check(g, now, cost);
        tally(&o.decision, cost, o.write.is_some());
        g = o.write.map(|w| w.state).or(g);
        let o = bucket.check(b, now, cost);
        tally(&o.decision, cost, o.write.is_some());
        b = o.write.map(|w| w.state).or(b);
        let o = windows[(i / 500) as usize % 2].check(s, now, cost);
        tally(&o.decision, cost, o.write.is_some());
        s = o.write.map(|w| w.state).or(s);
    }
    let after = allocations();

    let decided: u64 = paths.iter().sum();
    assert_eq!(decided, 30_000);
    for (path, name) in ["allowed", "denied", "never", "repaired"].iter().enumerate() {
        assert!(paths[path] > 0, "no decision took the {name} path: {paths:?}");
    }
    assert_eq!(after - before, 0, "the core allocated {} times in {decided} decisions", after - before);
    // The counter works: a Vec does allocate.
    let v = std::hint::black_box(vec![1u8; 64]);
    assert_eq!(allocations() - after, 1);
    drop(v);
}

/// Quotas: the decision, and the window from a warm calendar cache, whether
/// now stays in the cached window or moves on to the next ones (computed
/// again from the zone's rules), allocate nothing. Only a cache miss (a
/// zone parsed from the database) may.
#[test]
fn quota_decisions_and_cached_windows_allocate_nothing() {
    use redis_rl::core::{CalendarCache, Period, Quota, Unit};
    const NS: u64 = 1_000;
    let periods = [
        (Period::Calendar(Unit::Day), Some(&b"Europe/Berlin"[..])),
        (Period::Calendar(Unit::Hour), Some(b"Australia/Lord_Howe")),
        (Period::Calendar(Unit::Month), None),
        (Period::Fixed(60_000), None),
    ];
    let mut cache: CalendarCache<8> = CalendarCache::new();
    for (p, tz) in periods {
        cache.window(p, tz, T0 * NS).unwrap();
    }
    let quota = Quota::new(50);
    let mut state = None;
    let mut denied = 0;
    let before = allocations();
    for i in 0..10_000u64 {
        // 10,000 calls over about 116 days from 2027-01-15, each period in
        // turn, across Berlin's (March 28) and Lord Howe's (April 4) DST changes.
        let now = T0 * NS + i * 1_000_000_000_000;
        let (p, tz) = periods[(i % 4) as usize];
        let w = cache.window(p, tz, now).unwrap();
        let o = quota.check(state, w, now, i % 7);
        denied += u64::from(!o.decision.allowed);
        state = o.write.map(|w| w.state).or(state);
    }
    let after = allocations();
    assert!(denied > 0);
    assert_eq!(after - before, 0, "quota decisions allocated {} times", after - before);
}

/// The exact sliding log (tests/core_log.rs has its model test) decides
/// into a caller-owned store: once the store has held its `limit` entries,
/// no call allocates.
#[test]
fn the_sliding_log_allocates_nothing_once_it_has_reached_its_size() {
    use redis_rl::core::{ChangeKind, LogBuf, LogOp, SlidingLog};
    // The log's core works in ns.
    const T0_NS: u64 = T0 * 1000;
    const MS: u64 = 1_000_000;
    let log = SlidingLog::new(50, 100).unwrap();
    let mut store = LogBuf::new(log.empty_header());
    // Fill it to its size once (the VecDeque grows then), then run traffic
    // of every kind: allowed, denied, refunds, repairs after backward jumps
    // and a changed window.
    for i in 0..50 {
        log.check(Some(&store), T0_NS + i, LogOp::Consume(1)).change.unwrap().apply(&mut store);
    }
    // Allowed, denied, refunded, repaired.
    let mut paths = [0u64; 4];
    let before = allocations();
    let mut now = T0_NS + 50;
    for i in 0..20_000u64 {
        now = if i % 101 == 0 { now - 30 * MS } else { now + (i % 7) * 300_000 };
        let window = if i % 997 == 0 { 50 } else { 100 };
        let log = SlidingLog::new(50, window).unwrap();
        let op = if i % 13 == 0 { LogOp::Refund(i % 5 + 1) } else { LogOp::Consume(i % 4 * 5) };
        let o = log.check(Some(&store), now, op);
        paths[usize::from(!o.decision.allowed)] += 1;
        // A deleting change leaves the buffer empty, as a missing key would be.
        if let Some(c) = o.change {
            match c.kind {
                ChangeKind::Refund => paths[2] += 1,
                ChangeKind::Repair => paths[3] += 1,
                ChangeKind::Consume => {}
            }
            c.apply(&mut store);
        }
    }
    let after = allocations();
    for (path, name) in ["allowed", "denied", "refunded", "repaired"].iter().enumerate() {
        assert!(paths[path] > 0, "no call took the {name} path: {paths:?}");
    }
    assert_eq!(after - before, 0, "the log allocated {} times", after - before);
}

/// RL.TOP's summaries (src/heavy_hitters.rs) take their memory when they
/// are made: counting a key, a new one evicting another (a flood of
/// distinct keys), a long key held by its prefix, or a reset allocates
/// nothing, in either ranking.
#[test]
fn heavy_hitters_summaries_allocate_nothing_once_made() {
    use redis_rl::heavy_hitters::{Buckets, Heap, SpaceSaving, SystemMemory, KEY_BYTES};
    let mut denied = SpaceSaving::<SystemMemory, Buckets<SystemMemory>>::new(256, 7).unwrap();
    let mut consumed = SpaceSaving::<SystemMemory, Heap<SystemMemory>>::new(256, 9).unwrap();
    // The keys exist before counting starts: 5,000 short ones and a few
    // longer than a slot holds.
    let mut keys: Vec<Vec<u8>> = (0..5_000).map(|i| format!("user:{i}").into_bytes()).collect();
    keys.extend((0..8).map(|i| format!("{}{i}", "x".repeat(KEY_BYTES)).into_bytes()));
    let before = allocations();
    for i in 0..50_000usize {
        // Mostly new keys (every one evicts), now and then a heavy one.
        let key = if i % 5 == 0 { &keys[i % 7] } else { &keys[i % keys.len()] };
        denied.add(key, 1);
        consumed.add(key, 1 + (i % 40) as u64);
        if i % 20_000 == 19_999 {
            denied.clear();
            consumed.clear();
        }
    }
    let after = allocations();
    assert_eq!(denied.len(), 256);
    assert!(denied.floor() > 0 && consumed.floor() > 0, "no eviction happened");
    assert_eq!(after - before, 0, "the summaries allocated {} times", after - before);
}
