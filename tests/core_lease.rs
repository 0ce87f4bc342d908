//! Tests of the concurrency lease set (`redis_rl::core::Leases`), the pure
//! core of RL.ACQUIRE / RL.RELEASE / RL.RENEW.
//!
//! The property test runs random acquires (weighted, named or not, PEEK),
//! releases, renews, limit and lease_ms changes and clock moves (back as well
//! as forward, to the ns) against a naive model: a `Vec` of leases read by
//! filtering, with retry and reset found by searching over whole
//! milliseconds, never by a formula. Every reply field, the lease id, the
//! expiry and the stored set are checked on every call, in the reference
//! store, in the word block the module keeps (grown by doubling), and in a
//! replica's block that only receives each change as words.

#[path = "common/model.rs"]
mod model;

use model::{config, least};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use redis_rl::core::lease::{
    LEASE_BLOCK_HEADER_WORDS as H, LEASE_CHANGE_WORDS, MAX_DROP, MAX_LEASE_LIMIT, MAX_LEASE_MS,
};
use redis_rl::core::{
    Lease, LeaseBlock, LeaseChange, LeaseChangeKind, LeaseHeader, LeaseId, LeaseOp, LeaseRead, LeaseVec, Leases,
};

const MS: u64 = 1_000_000;
/// 2027-01-15 in ns.
const T0: u64 = 1_800_000_000_000 * MS;

fn id(s: &str) -> LeaseId {
    LeaseId::new(s.as_bytes()).unwrap()
}

// ---------------------------------------------------------------------------
// The model.

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct M {
    d: u64,
    id: Vec<u8>,
    units: u64,
    lease_ms: u64,
}

#[derive(Debug, Clone, PartialEq)]
struct Key {
    leases: Vec<M>,
    next_seq: u64,
    /// The latest time a call that set a deadline read (no lease starts
    /// after it): the set's own time.
    last_ns: u64,
}

/// The live leases as read at `now`: the set read at its own time (`now`,
/// or its `last_ns` if later), every deadline moved back by the difference
/// (the shift, also returned).
fn reading(key: Option<&Key>, now: u64) -> (Vec<M>, u64) {
    let at = key.map_or(now, |k| k.last_ns.max(now));
    let mut live = Vec::new();
    for l in key.map_or(&[][..], |k| &k.leases) {
        if l.d > at {
            live.push(M { d: l.d - (at - now), ..l.clone() });
        }
    }
    live.sort();
    (live, at - now)
}

/// The set's time after a write at `now` that sets a deadline (`set`) or not.
fn last_after(key: Option<&Key>, now: u64, shift: u64, set: bool) -> u64 {
    let last = key.map_or(0, |k| k.last_ns);
    if shift > 0 {
        now
    } else if set {
        last.max(now)
    } else {
        last
    }
}

fn units_live_at(v: &[M], t: u64) -> u64 {
    v.iter().filter(|l| l.d > t).map(|l| l.units).sum()
}

#[derive(Debug)]
struct Expected {
    allowed: bool,
    remaining: u64,
    retry_after_ms: i64,
    reset_after_ms: u64,
    lease: Option<Vec<u8>>,
    /// Whether the call writes: `Some(None)` deletes the key.
    write: Option<Option<Key>>,
    expire_at_ms: Option<u64>,
}

#[allow(clippy::too_many_arguments)]
fn finish(
    limit: u64,
    now: u64,
    allowed: bool,
    retry: i64,
    after: Vec<M>,
    next_seq: u64,
    last_ns: u64,
    writes: bool,
    lease: Option<Vec<u8>>,
) -> Expected {
    let units: u64 = after.iter().map(|l| l.units).sum();
    let last = after.iter().map(|l| l.d).max();
    let reset = last.map_or(0, |d| least((d - now) / MS + 1, |r| units_live_at(&after, now + r * MS) == 0));
    let expire_at_ms = last.map(|d| least(d / MS + 1, |m| units_live_at(&after, m * MS) == 0));
    Expected {
        allowed,
        remaining: limit.saturating_sub(units),
        retry_after_ms: retry,
        reset_after_ms: reset,
        lease,
        write: writes.then(|| {
            let mut leases = after.clone();
            leases.sort();
            (!leases.is_empty()).then_some(Key { leases, next_seq, last_ns })
        }),
        expire_at_ms: if writes { expire_at_ms } else { None },
    }
}

fn model_acquire(
    key: Option<&Key>,
    now: u64,
    limit: u64,
    lease_ms: u64,
    cost: u64,
    name: Option<&[u8]>,
    seed: u64,
) -> Expected {
    let (mut live, shift) = reading(key, now);
    // A repair when the set's time is ahead and a lease is live.
    let shortened = shift > 0 && !live.is_empty();
    let next_seq = key.map_or(seed, |k| k.next_seq);
    let (unset, set) = (last_after(key, now, shift, false), last_after(key, now, shift, true));
    let units: u64 = live.iter().map(|l| l.units).sum();
    if cost == 0 {
        return finish(limit, now, true, 0, live, next_seq, unset, shortened, None);
    }
    if let Some(n) = name {
        if let Some(l) = live.iter_mut().find(|l| l.id == n) {
            l.d = now + lease_ms * MS;
            l.lease_ms = lease_ms;
            return finish(limit, now, true, 0, live, next_seq, set, true, Some(n.to_vec()));
        }
    }
    if cost > limit {
        return finish(limit, now, false, -1, live, next_seq, unset, shortened, None);
    }
    if units + cost > limit {
        let need = units + cost - limit;
        let r = least(MAX_LEASE_MS, |r| units - units_live_at(&live, now + r * MS) >= need);
        return finish(limit, now, false, r as i64, live, next_seq, unset, shortened, None);
    }
    let (new, next_seq) = match name {
        Some(n) => (n.to_vec(), next_seq),
        None => {
            let mut seq = next_seq;
            loop {
                let g = format!("{}-{}", now / MS, seq).into_bytes();
                if !live.iter().any(|l| l.id == g) {
                    break (g, seq + 1);
                }
                seq += 1;
            }
        }
    };
    live.push(M { d: now + lease_ms * MS, id: new.clone(), units: cost, lease_ms });
    finish(limit, now, true, 0, live, next_seq, set, true, Some(new))
}

/// RL.RELEASE (`lease_ms` None) or RL.RENEW.
fn model_end_or_renew(key: Option<&Key>, now: u64, name: &[u8], lease_ms: Option<u64>) -> (bool, Option<Option<Key>>) {
    let (mut live, shift) = reading(key, now);
    let last_ns = last_after(key, now, shift, lease_ms.is_some());
    let Some(at) = live.iter().position(|l| l.id == name) else { return (false, None) };
    match lease_ms {
        None => {
            live.remove(at);
        }
        Some(ms) => {
            live[at].d = now + ms * MS;
            live[at].lease_ms = ms;
        }
    }
    live.sort();
    let next_seq = key.map_or(0, |k| k.next_seq);
    (true, Some((!live.is_empty()).then_some(Key { leases: live, next_seq, last_ns })))
}

// ---------------------------------------------------------------------------
// Stores.

fn stored<S: LeaseRead>(s: &S) -> Vec<M> {
    let mut v: Vec<M> = (0..s.len())
        .map(|i| s.get(i))
        .map(|l| M { d: l.deadline_ns, id: l.id.as_bytes().to_vec(), units: l.units, lease_ms: l.lease_ms })
        .collect();
    v.sort();
    v
}

fn in_order(words: &mut [u64]) -> Vec<M> {
    let b = LeaseBlock::open(&mut words[..]).unwrap();
    b.iter()
        .map(|l| M { d: l.deadline_ns, id: l.id.as_bytes().to_vec(), units: l.units, lease_ms: l.lease_ms })
        .collect()
}

/// Applies a change to a key kept as a block of words, as the module does:
/// a new key gets the first layout, a block without room is grown first.
fn apply_to_block(words: &mut Option<Vec<u64>>, c: &LeaseChange) {
    apply_checked(words, c, true);
}

/// `apply_to_block`, checking the whole block after the change when `check`.
/// Each new block's index has its own seed, as in the module (so a key and
/// its replica hash ids differently).
fn apply_checked(words: &mut Option<Vec<u64>>, c: &LeaseChange, check: bool) {
    static SEEDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let w = words.get_or_insert_with(|| {
        let (cap, idw) = LeaseBlock::first_layout(c);
        let mut v = vec![0; LeaseBlock::words_for(cap, idw)];
        let seed = SEEDS.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
        LeaseBlock::init(&mut v, idw, LeaseHeader { next_seq: 0, last_ns: 0 }, seed).unwrap();
        v
    });
    let b = LeaseBlock::open(&mut w[..]).unwrap();
    assert!(c.fits(&b), "{c:?}");
    if let Some((cap, idw)) = b.needs_room(c) {
        let mut bigger = vec![0; LeaseBlock::words_for(cap, idw)];
        b.grow_into(&mut bigger, idw).unwrap();
        *w = bigger;
    }
    let mut b = LeaseBlock::open(&mut w[..]).unwrap();
    c.apply(&mut b);
    assert!(!check || b.valid(), "invalid after {c:?}");
    if c.delete {
        assert!(b.is_empty());
        *words = None;
    }
}

// ---------------------------------------------------------------------------
// Traffic.

#[derive(Debug, Clone)]
enum Step {
    Clock(i64),
    Params {
        limit: u64,
        lease_ms: u64,
    },
    Acquire {
        cost: u64,
        name: Option<u8>,
        peek: bool,
    },
    /// Of a client name (`Ok`) or of the n-th id generated so far (`Err`).
    Release(Result<u8, usize>),
    Renew(Result<u8, usize>, u64),
}

const NAMES: [&str; 4] = ["a", "b", "a-much-longer-client-named-lease-id-of-more-than-forty-bytes", "1800000000000-3"];

fn step() -> impl Strategy<Value = Step> {
    let ms = MS as i64;
    let who = prop_oneof![(0..4u8).prop_map(Ok), (0..40usize).prop_map(Err)];
    prop_oneof![
        6 => (0..=60i64).prop_map(move |n| Step::Clock(n * ms)),
        3 => (0..=60 * ms).prop_map(Step::Clock),
        1 => (0..=3000 * ms).prop_map(Step::Clock),
        1 => (-3000 * ms..0).prop_map(Step::Clock),
        1 => (prop_oneof![1..=6u64, Just(40u64)], prop_oneof![1..=5u64, 1..=300u64, Just(2000u64)])
            .prop_map(|(limit, lease_ms)| Step::Params { limit, lease_ms }),
        8 => (prop_oneof![6 => 0..=3u64, 1 => 0..=45u64], prop::option::weighted(0.4, 0..4u8), 0..6u8)
            .prop_map(|(cost, name, p)| Step::Acquire { cost, name, peek: p == 0 }),
        3 => who.clone().prop_map(Step::Release),
        2 => (who, prop_oneof![1..=5u64, 1..=500u64]).prop_map(|(w, ms)| Step::Renew(w, ms)),
    ]
}

struct World {
    now: u64,
    key: Option<Key>,
    vec: Option<LeaseVec>,
    block: Option<Vec<u64>>,
    replica: Option<Vec<u64>>,
    generated: Vec<Vec<u8>>,
}

impl World {
    /// Checks and applies a change (unless PEEK) to every copy.
    fn write(&mut self, c: LeaseChange, want: Option<Key>, ctx: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(c.delete, want.is_none(), "delete: {}", ctx);
        let words = c.to_words();
        let back = LeaseChange::from_words(&words);
        prop_assert_eq!(back, Some(c), "words: {}", ctx);
        let v = self.vec.get_or_insert_with(LeaseVec::new);
        prop_assert!(c.fits(v), "fits: {}", ctx);
        c.apply(v);
        apply_to_block(&mut self.block, &c);
        apply_to_block(&mut self.replica, &back.unwrap());
        match want {
            None => {
                prop_assert!(self.vec.take().unwrap().is_empty());
                prop_assert!(self.block.is_none() && self.replica.is_none());
                self.key = None;
            }
            Some(k) => {
                let v = self.vec.as_ref().unwrap();
                prop_assert_eq!(&stored(v), &k.leases, "stored: {}", ctx);
                prop_assert_eq!(v.header().next_seq, k.next_seq, "next_seq: {}", ctx);
                prop_assert_eq!(v.header().last_ns, k.last_ns, "last_ns: {}", ctx);
                let b = self.block.as_mut().unwrap();
                prop_assert_eq!(&in_order(b), &k.leases, "block: {}", ctx);
                let r = self.replica.as_mut().unwrap();
                prop_assert_eq!(&in_order(r), &k.leases, "replica: {}", ctx);
                prop_assert_eq!(
                    LeaseBlock::open(&mut b[..]).unwrap().header(),
                    LeaseBlock::open(&mut r[..]).unwrap().header(),
                    "replica header: {}",
                    ctx
                );
                // The whole set as words (RDB, AOF rewrite) loads back the same.
                let all: Vec<u64> = LeaseBlock::open(&mut b[..]).unwrap().to_words().collect();
                let (cap, idw) = LeaseBlock::layout_of_words(&all).unwrap();
                let mut fresh = vec![0; LeaseBlock::words_for(cap, idw)];
                let loaded = LeaseBlock::from_words(&mut fresh, &all, 7);
                prop_assert!(loaded.is_some(), "reload: {}", ctx);
                prop_assert_eq!(&in_order(&mut fresh), &k.leases, "reloaded: {}", ctx);
                self.key = Some(k);
            }
        }
        Ok(())
    }
}

fn run(limit0: u64, lease0: u64, steps: &[Step]) -> Result<(), TestCaseError> {
    let (mut limit, mut lease_ms) = (limit0, lease0);
    let mut w = World { now: T0, key: None, vec: None, block: None, replica: None, generated: Vec::new() };
    for (i, step) in steps.iter().enumerate() {
        let now = w.now;
        let ctx = format!(
            "step {i} {step:?} at T0 {:+} ns, limit {limit}, lease_ms {lease_ms}",
            i128::from(now) - i128::from(T0)
        );
        let name_of = |who: &Result<u8, usize>, generated: &[Vec<u8>]| match *who {
            Ok(n) => NAMES[n as usize].as_bytes().to_vec(),
            Err(k) => generated.get(k).cloned().unwrap_or_else(|| b"none".to_vec()),
        };
        match step {
            Step::Clock(d) => w.now = now.checked_add_signed(*d).unwrap(),
            Step::Params { limit: l, lease_ms: m } => (limit, lease_ms) = (*l, *m),
            Step::Acquire { cost, name, peek } => {
                let leases = Leases::new(limit, lease_ms).unwrap();
                let name = name.map(|n| NAMES[n as usize].as_bytes());
                let lid = name.map(|n| LeaseId::new(n).unwrap());
                let seed = 7;
                let o = leases.acquire(w.vec.as_ref(), now, *cost, lid.as_ref(), seed);
                if let Some(b) = w.block.as_mut() {
                    let b = LeaseBlock::open(&mut b[..]).unwrap();
                    prop_assert_eq!(
                        leases.acquire(Some(&b), now, *cost, lid.as_ref(), seed),
                        o,
                        "block answers: {}",
                        &ctx
                    );
                }
                let want = model_acquire(w.key.as_ref(), now, limit, lease_ms, *cost, name, seed);
                let d = o.decision;
                prop_assert_eq!(
                    (d.allowed, d.limit, d.remaining, d.retry_after_ms, d.reset_after_ms),
                    (want.allowed, limit, want.remaining, want.retry_after_ms, want.reset_after_ms),
                    "{} {:?} vs {:?}",
                    &ctx,
                    o,
                    want
                );
                prop_assert_eq!(o.lease().map(|l| l.as_bytes().to_vec()), want.lease.clone(), "lease: {}", &ctx);
                prop_assert_eq!(o.change.is_some(), want.write.is_some(), "writes: {} {:?}", &ctx, o);
                let Some(c) = o.change else { continue };
                let kind_ok = if d.allowed && *cost > 0 { LeaseChangeKind::Acquire } else { LeaseChangeKind::Repair };
                prop_assert_eq!(c.kind, kind_ok, "kind: {}", &ctx);
                if let Some(e) = want.expire_at_ms {
                    prop_assert_eq!(c.expire_at_ms, e, "expiry: {}", &ctx);
                }
                if *peek {
                    continue;
                }
                if let (Some(l), None) = (o.lease(), name) {
                    w.generated.push(l.as_bytes().to_vec());
                }
                w.write(c, want.write.unwrap(), &ctx)?;
            }
            Step::Release(who) | Step::Renew(who, _) => {
                let name = name_of(who, &w.generated);
                let lid = LeaseId::new(&name).unwrap();
                let renew_ms = if let Step::Renew(_, ms) = step { Some(*ms) } else { None };
                let reply = match renew_ms {
                    None => Leases::release(w.vec.as_ref(), now, &lid),
                    Some(ms) => Leases::renew(w.vec.as_ref(), now, &lid, ms).unwrap(),
                };
                if let Some(b) = w.block.as_mut() {
                    let b = LeaseBlock::open(&mut b[..]).unwrap();
                    let again = match renew_ms {
                        None => Leases::release(Some(&b), now, &lid),
                        Some(ms) => Leases::renew(Some(&b), now, &lid, ms).unwrap(),
                    };
                    prop_assert_eq!(again, reply, "block answers: {}", &ctx);
                }
                let (ok, want) = model_end_or_renew(w.key.as_ref(), now, &name, renew_ms);
                prop_assert_eq!(reply.ok, ok, "{}", &ctx);
                prop_assert_eq!(reply.change.is_some(), ok, "writes only when 1: {}", &ctx);
                if let (Some(c), Some(k)) = (reply.change, want) {
                    let kind = if renew_ms.is_some() { LeaseChangeKind::Renew } else { LeaseChangeKind::Release };
                    prop_assert_eq!(c.kind, kind);
                    let last = k.as_ref().and_then(|k| k.leases.iter().map(|l| l.d).max());
                    prop_assert_eq!(c.expire_at_ms, last.map_or(0, |d| d.div_ceil(MS)), "expiry: {}", &ctx);
                    w.write(c, k, &ctx)?;
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(384))]

    #[test]
    fn the_lease_set_answers_and_stores_what_the_model_does(
        limit in prop_oneof![1..=6u64, Just(40u64)],
        lease_ms in prop_oneof![1..=5u64, 1..=300u64, Just(2000u64)],
        steps in prop::collection::vec(step(), 1..120),
    ) {
        run(limit, lease_ms, &steps)?;
    }

    /// Random words never make `open`, `valid` or an operation on a block
    /// that passed `valid` panic.
    #[test]
    fn random_words_never_panic(words in prop::collection::vec(prop_oneof![any::<u64>(), 0..4u64, Just(u64::from(u32::MAX))], 0..120)) {
        let mut words = words;
        poke(&mut words);
    }

    /// A valid block with one word changed is refused by `valid`, or still
    /// one whose operations never panic.
    #[test]
    fn a_corrupted_block_is_refused_or_harmless(n in 1..12usize, at in any::<prop::sample::Index>(), bits in any::<u64>()) {
        let mut words = filled(n);
        let i = at.index(words.len());
        words[i] ^= bits;
        poke(&mut words);
    }
}

/// A block of `n` leases of mixed ids and deadlines.
fn filled(n: usize) -> Vec<u64> {
    let leases = Leases::new(100, 1000).unwrap();
    let mut block = None;
    let mut vec = LeaseVec::new();
    for k in 0..n {
        let name = format!("lease-{k}");
        let lid = LeaseId::new(name.as_bytes()).unwrap();
        let named = (k % 2 == 0).then_some(&lid);
        let c = leases.acquire(Some(&vec), T0 + (k as u64 % 3) * MS, 1 + k as u64 % 3, named, 0).change.unwrap();
        c.apply(&mut vec);
        apply_to_block(&mut block, &c);
    }
    block.unwrap()
}

/// Opens, validates and, if valid, runs every operation on the words.
fn poke(words: &mut [u64]) {
    let Some(b) = LeaseBlock::open(&mut words[..]) else { return };
    if !b.valid() {
        return;
    }
    let _ = b.to_words().count();
    let leases = Leases::new(3, 100).unwrap();
    let any = b.get(0).id;
    for now in [0, T0, T0 + 5000 * MS, u64::MAX / 2] {
        let b = LeaseBlock::open(&mut words[..]).unwrap();
        let outcomes = [
            leases.acquire(Some(&b), now, 1, None, 0).change,
            leases.acquire(Some(&b), now, 2, Some(&any), 0).change,
            Leases::release(Some(&b), now, &any).change,
            Leases::renew(Some(&b), now, &any, 10).unwrap().change,
        ];
        for c in outcomes.into_iter().flatten() {
            let mut copy = words.to_vec();
            let mut block = Some(std::mem::take(&mut copy));
            apply_to_block(&mut block, &c);
        }
    }
}

// ---------------------------------------------------------------------------
// Named behaviours.

fn apply(block: &mut Option<Vec<u64>>, c: Option<LeaseChange>) {
    apply_to_block(block, &c.expect("a write"));
}

fn open(block: &mut Option<Vec<u64>>) -> LeaseBlock<&mut [u64]> {
    LeaseBlock::open(&mut block.as_mut().unwrap()[..]).unwrap()
}

/// An acquire on a key kept as a block (`None`: missing).
fn acq(
    leases: &Leases,
    block: &mut Option<Vec<u64>>,
    now: u64,
    cost: u64,
    name: Option<&LeaseId>,
) -> redis_rl::core::AcquireOutcome {
    match block.as_mut() {
        None => leases.acquire(None::<&LeaseVec>, now, cost, name, 0),
        Some(w) => leases.acquire(Some(&LeaseBlock::open(&mut w[..]).unwrap()), now, cost, name, 0),
    }
}

#[test]
fn retry_after_is_exact_denied_at_r_minus_1_allowed_at_r() {
    let leases = Leases::new(5, 1000).unwrap();
    let mut block = None;
    // Units 2 at 0 ms (till 1000), 2 at 300.5 ms (till 1300.5), 1 at 700 (till 1700).
    for (at, cost) in [(0, 2), (300 * MS + MS / 2, 2), (700 * MS, 1)] {
        let o = acq(&leases, &mut block, T0 + at, cost, None);
        apply(&mut block, o.change);
    }
    let now = T0 + 800 * MS;
    let check = |block: &mut Option<Vec<u64>>, t: u64, cost: u64| acq(&leases, block, t, cost, None);
    // Cost 3 needs 3 units freed: the 2 of 0 and the 2 of 300.5: at 1300.5 ms.
    let d = check(&mut block, now, 3).decision;
    assert_eq!((d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms), (false, 0, 501, 900));
    assert!(!check(&mut block, now + 500 * MS, 3).decision.allowed);
    assert!(check(&mut block, now + 501 * MS, 3).decision.allowed);
    // Cost 1 waits for the first lease (at 1000).
    let d = check(&mut block, now, 1).decision;
    assert_eq!(d.retry_after_ms, 200);
    assert!(!check(&mut block, now + 199 * MS, 1).decision.allowed);
    assert!(check(&mut block, now + 200 * MS, 1).decision.allowed);
    // Cost above the limit never fits.
    assert_eq!(check(&mut block, now, 6).decision.retry_after_ms, -1);
    // Reset: at now + 900 ms everything has expired, and the key's expiry is then.
    let d = check(&mut block, now + 900 * MS, 0).decision;
    assert_eq!((d.remaining, d.reset_after_ms), (5, 0));
    let c = check(&mut block, now, 0);
    assert_eq!(c.change, None, "COST 0 writes nothing");
    let b = open(&mut block);
    let c = Leases::renew(Some(&b), now, &b.get(0).id, 1).unwrap().change.unwrap();
    assert_eq!(c.expire_at_ms, (T0 + 1700 * MS) / MS);
}

#[test]
fn an_id_acquire_renews_and_never_takes_a_second_slot() {
    let leases = Leases::new(2, 1000).unwrap();
    let job = id("job-42");
    let mut block = None;
    let o = leases.acquire(None::<&LeaseVec>, T0, 2, Some(&job), 0);
    assert_eq!(o.lease(), Some(job));
    apply(&mut block, o.change);
    for k in 1..5u64 {
        let now = T0 + k * 100 * MS;
        // Full, yet a retried acquire with the same id is allowed, whatever
        // its cost, and renews; it keeps its units.
        let o = leases.acquire(Some(&open(&mut block)), now, 5, Some(&job), 0);
        let d = o.decision;
        assert_eq!((d.allowed, d.remaining, d.reset_after_ms, o.lease()), (true, 0, 1000, Some(job)));
        assert!(matches!(o.change.unwrap().op, LeaseOp::Renew { .. }));
        apply(&mut block, o.change);
        let b = open(&mut block);
        assert_eq!((b.len(), b.get(0).units, b.get(0).deadline_ns), (1, 2, now + 1000 * MS));
    }
    // Another id is denied; COST 0 with the id reads and never renews.
    assert!(!leases.acquire(Some(&open(&mut block)), T0 + 500 * MS, 1, Some(&id("other")), 0).decision.allowed);
    let o = leases.acquire(Some(&open(&mut block)), T0 + 500 * MS, 0, Some(&job), 0);
    assert_eq!((o.decision.allowed, o.lease(), o.change), (true, None, None));
    // Once expired, the same id takes a new lease (the old one is dropped).
    let o = leases.acquire(Some(&open(&mut block)), T0 + 1400 * MS, 1, Some(&job), 0);
    let c = o.change.unwrap();
    assert_eq!((c.drop, o.decision.remaining), (1, 1));
    apply(&mut block, Some(c));
    assert_eq!(open(&mut block).len(), 1);
}

#[test]
fn generated_ids_never_repeat_on_a_key() {
    let leases = Leases::new(1000, 10).unwrap();
    let mut vec = LeaseVec::new();
    let mut seen = std::collections::HashSet::new();
    // A client-named lease holds the id the sequence would give next.
    let c = leases.acquire(Some(&vec), T0, 1, Some(&id("1800000000000-5")), 5).change.unwrap();
    c.apply(&mut vec);
    for k in 0..300u64 {
        // The same ms over and over (the client-named id's), and times
        // going back within it.
        let now = T0 + (k % 3) * MS / 3;
        let o = leases.acquire(Some(&vec), now, 1, None, 5);
        let l = o.lease().unwrap();
        assert!(seen.insert(l.as_bytes().to_vec()), "{l:?} repeated");
        assert_ne!(l.as_bytes(), b"1800000000000-5");
        o.change.unwrap().apply(&mut vec);
    }
    // A new key starts its sequence at the seed.
    let o = leases.acquire(None::<&LeaseVec>, T0, 1, None, 12);
    assert_eq!(o.lease().unwrap().as_bytes(), b"1800000000000-12");
}

#[test]
fn release_ends_a_live_lease_and_the_last_one_deletes_the_key() {
    let leases = Leases::new(3, 1000).unwrap();
    let mut block = None;
    let a = leases.acquire(None::<&LeaseVec>, T0, 1, None, 0);
    apply(&mut block, a.change);
    let b = leases.acquire(Some(&open(&mut block)), T0 + MS, 1, None, 0);
    apply(&mut block, b.change);
    let (a, b) = (a.lease().unwrap(), b.lease().unwrap());
    let r = Leases::release(Some(&open(&mut block)), T0 + 2 * MS, &a);
    assert!(r.ok);
    let c = r.change.unwrap();
    assert_eq!((c.delete, c.expire_at_ms), (false, (T0 + 1001 * MS) / MS));
    apply(&mut block, Some(c));
    // Released, unknown and expired leases answer 0 and write nothing.
    assert_eq!(
        Leases::release(Some(&open(&mut block)), T0 + 3 * MS, &a),
        redis_rl::core::LeaseReply { ok: false, change: None }
    );
    assert!(!Leases::release(Some(&open(&mut block)), T0 + 3 * MS, &id("x")).ok);
    assert!(!Leases::release(Some(&open(&mut block)), T0 + 1001 * MS, &b).ok);
    assert!(!Leases::renew(Some(&open(&mut block)), T0 + 1001 * MS, &b, 5).unwrap().ok);
    assert!(!Leases::release(None::<&LeaseVec>, T0, &b).ok);
    let c = Leases::release(Some(&open(&mut block)), T0 + 3 * MS, &b).change.unwrap();
    assert!(c.delete);
    apply(&mut block, Some(c));
    assert!(block.is_none());
}

#[test]
fn renew_moves_the_deadline_and_the_expiry() {
    let leases = Leases::new(3, 1000).unwrap();
    let mut block = None;
    let o = leases.acquire(None::<&LeaseVec>, T0, 1, None, 0);
    apply(&mut block, o.change);
    let l = o.lease().unwrap();
    let r = Leases::renew(Some(&open(&mut block)), T0 + 900 * MS, &l, 5000).unwrap();
    let c = r.change.unwrap();
    assert_eq!((r.ok, c.kind, c.expire_at_ms), (true, LeaseChangeKind::Renew, (T0 + 5900 * MS) / MS));
    apply(&mut block, Some(c));
    let d = leases.acquire(Some(&open(&mut block)), T0 + 1500 * MS, 0, None, 0).decision;
    assert_eq!((d.remaining, d.reset_after_ms), (2, 4400));
    // Renewing may shorten, too.
    let c = Leases::renew(Some(&open(&mut block)), T0 + 1500 * MS, &l, 1).unwrap().change.unwrap();
    assert_eq!(c.expire_at_ms, (T0 + 1501 * MS) / MS);
    assert_eq!(Leases::renew(Some(&open(&mut block)), T0, &l, 0).unwrap_err().arg, "lease_ms");
    assert_eq!(Leases::renew(Some(&open(&mut block)), T0, &l, MAX_LEASE_MS + 1).unwrap_err().arg, "lease_ms");
}

#[test]
fn after_a_backward_jump_the_set_reads_at_its_own_time_and_the_repair_moves_it_back() {
    let leases = Leases::new(4, 1000).unwrap();
    let mut block = None;
    // Leases taken an hour ahead (the clock then went back an hour): one
    // 500 ms old at the last write, and two taken last (1000 and 200 ms).
    let hour = 3_600_000 * MS;
    let take = |block: &mut Option<Vec<u64>>, at: u64, lease_ms: u64| {
        let o = acq(&Leases::new(4, lease_ms).unwrap(), block, at, 1, None);
        apply(block, o.change);
    };
    take(&mut block, T0 + hour - 500 * MS, 1000);
    take(&mut block, T0 + hour, 1000);
    take(&mut block, T0 + hour, 200);
    let now = T0 + 50 * MS;
    // A PEEK-able read: the set at its own time, moved onto the clock: the
    // leases end 500, 1000 and 200 ms from now (none longer than its own
    // lease_ms, none longer than it was at the last write).
    let o = leases.acquire(Some(&open(&mut block)), now, 0, None, 0);
    assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (1, 1000));
    let c = o.change.expect("a repair");
    assert_eq!((c.kind, c.shift_ns), (LeaseChangeKind::Repair, Some(hour - 50 * MS)));
    assert_eq!((c.header.last_ns, c.drop, c.expire_at_ms), (now, 0, (now + 1000 * MS) / MS));
    // Denials wait for the moved deadlines.
    for (cost, retry) in [(2, 200), (3, 500), (4, 1000), (5, -1)] {
        let d = leases.acquire(Some(&open(&mut block)), now, cost, None, 0).decision;
        assert_eq!((d.allowed, d.retry_after_ms), (false, retry), "cost {cost}");
    }
    apply(&mut block, Some(c));
    let b = open(&mut block);
    assert!(b.valid());
    let mut deadlines: Vec<u64> = (0..b.len()).map(|i| b.get(i).deadline_ns - now).collect();
    deadlines.sort();
    assert_eq!(deadlines, [200 * MS, 500 * MS, 1000 * MS]);
    // Once repaired, a read writes nothing and answers the same.
    let o = leases.acquire(Some(&b), now, 0, None, 0);
    assert_eq!((o.decision.reset_after_ms, o.change), (1000, None));
    assert_eq!(leases.acquire(Some(&b), now, 3, None, 0).decision.retry_after_ms, 500);
}

#[test]
fn a_lowered_limit_denies_until_enough_leases_expire() {
    let mut vec = LeaseVec::new();
    for k in 0..4 {
        Leases::new(4, 1000).unwrap().acquire(Some(&vec), T0 + k * MS, 1, None, 0).change.unwrap().apply(&mut vec);
    }
    let two = Leases::new(2, 1000).unwrap();
    let d = two.acquire(Some(&vec), T0 + 10 * MS, 1, None, 0).decision;
    // 4 live over a limit of 2: 3 must expire (the third at 1002 ms).
    assert_eq!((d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms), (false, 0, 992, 993));
}

#[test]
fn parameters_out_of_range_are_refused() {
    assert_eq!(Leases::new(0, 1000).unwrap_err().arg, "limit");
    assert_eq!(Leases::new(MAX_LEASE_LIMIT + 1, 1000).unwrap_err().arg, "limit");
    assert_eq!(Leases::new(1, 0).unwrap_err().arg, "lease_ms");
    assert_eq!(Leases::new(1, MAX_LEASE_MS + 1).unwrap_err().arg, "lease_ms");
    assert!(Leases::new(MAX_LEASE_LIMIT, MAX_LEASE_MS).is_ok());
    assert!(LeaseId::new(b"").is_none());
    assert!(LeaseId::new(&[b'x'; 129]).is_none());
    assert!(LeaseId::new(&[0xff; 128]).is_some());
}

#[test]
fn the_largest_lease_at_a_late_clock_does_not_overflow() {
    let leases = Leases::new(1, MAX_LEASE_MS).unwrap();
    let now = 7_258_118_400_000_000_000; // 2200-01-01
    let mut block = None;
    apply(&mut block, leases.acquire(None::<&LeaseVec>, now, 1, None, u64::MAX).change);
    let d = leases.acquire(Some(&open(&mut block)), now, 1, None, 0).decision;
    assert_eq!((d.retry_after_ms, d.reset_after_ms), (MAX_LEASE_MS as i64, MAX_LEASE_MS));
    // The sequence wraps to 2^63, not 0, and stays at or above it, where
    // each generated id is looked up.
    assert_eq!(open(&mut block).header().next_seq, 1 << 63);
}

/// A client-named id of the generated form with a huge `seq` cannot push a
/// key's sequence to where ids are reused: the sequence stays put, and a
/// generated id at or above 2^63 skips a live lease that holds it.
#[test]
fn a_named_id_with_a_huge_sequence_moves_nothing_and_is_never_generated_again() {
    let leases = Leases::new(10, 60_000).unwrap();
    let ms = T0 / MS;
    let mut block = None;
    // A new key's sequence starts at its seed, 7.
    apply(&mut block, leases.acquire(None::<&LeaseVec>, T0, 1, Some(&id("first")), 7).change);
    for name in [format!("{ms}-{}", u64::MAX), format!("{ms}-{}", 1u64 << 63)] {
        let o = acq(&leases, &mut block, T0, 1, Some(&id(&name)));
        apply(&mut block, o.change);
        assert_eq!(open(&mut block).header().next_seq, 7, "{name}");
    }
    // Generated ids go on from 7, below both.
    let o = acq(&leases, &mut block, T0, 1, None);
    assert_eq!(o.lease().unwrap().as_bytes(), format!("{ms}-7").as_bytes());
    // A key whose sequence starts at 2^63 (its seed) looks its ids up: the
    // live named lease of that sequence number is skipped.
    let mut block = None;
    let named = id(&format!("{ms}-{}", 1u64 << 63));
    apply(&mut block, leases.acquire(None::<&LeaseVec>, T0, 1, Some(&named), 1 << 63).change);
    assert_eq!(open(&mut block).header().next_seq, 1 << 63);
    let o = leases.acquire(Some(&open(&mut block)), T0, 1, None, 0);
    assert_eq!(o.lease().unwrap().as_bytes(), format!("{ms}-{}", (1u64 << 63) + 1).as_bytes());
    apply(&mut block, o.change);
    assert_eq!(open(&mut block).header().next_seq, (1 << 63) + 2);
}

#[test]
fn change_words_out_of_range_are_refused() {
    let leases = Leases::new(10, 1000).unwrap();
    let c = leases.acquire(None::<&LeaseVec>, T0, 1, Some(&id("abc")), 0).change.unwrap();
    let w = c.to_words();
    assert_eq!(LeaseChange::from_words(&w), Some(c));
    let bad: [(usize, u64); 10] = [
        (0, 4),                      // kind
        (1, 2),                      // clamp flag
        (3, MAX_LEASE_LIMIT + 1),    // drop
        (4, 4),                      // op
        (6, 0),                      // lease_ms
        (7, 0),                      // units
        (7, MAX_LEASE_LIMIT + 1),    // units
        (8, 129),                    // id length
        (9, 0x6162_6364_0000_0000),  // a byte past the id's length
        (LEASE_CHANGE_WORDS - 1, 2), // delete
    ];
    for (i, v) in bad {
        let mut b = w;
        b[i] = v;
        assert_eq!(LeaseChange::from_words(&b), None, "word {i} = {v}");
    }
    // A deadline set after the header's last_ns (no call can make it).
    let mut b = w;
    b[LEASE_CHANGE_WORDS - 3] = T0 - 1;
    assert_eq!(LeaseChange::from_words(&b), None);
    // A release or renew of a lease the store lacks does not fit.
    let r = LeaseChange { op: LeaseOp::Release(id("zz")), kind: LeaseChangeKind::Release, ..c };
    assert!(!r.fits(&LeaseVec::new()));
}

#[test]
fn a_whole_set_above_the_cap_is_refused_before_reading_it() {
    assert_eq!(LeaseBlock::layout_of_words(&[MAX_LEASE_LIMIT + 1, 0, 0]), None);
    assert_eq!(LeaseBlock::layout_of_words(&[1, 0, 0]), None, "a count without leases");
    assert_eq!(LeaseBlock::layout_of_words(&[0, 0, 0]), Some((1, 1)));
    // Two leases with one id are refused.
    let one = [T0 + MS, 1, 1, 1, 0x6100_0000_0000_0000];
    let mut words = vec![2, 0, T0];
    words.extend(one);
    words.extend(one);
    let (cap, idw) = LeaseBlock::layout_of_words(&words).unwrap();
    let mut dst = vec![0; LeaseBlock::words_for(cap, idw)];
    assert!(LeaseBlock::from_words(&mut dst, &words, 0).is_none());
    // A start after last_ns is refused.
    let mut words = vec![1, 0, 0];
    words.extend(one);
    let mut dst = vec![0; LeaseBlock::words_for(1, 1)];
    assert!(LeaseBlock::from_words(&mut dst, &words, 0).is_none());
}

#[test]
fn invalid_blocks_are_recognised() {
    let good = filled(9);
    assert!(LeaseBlock::open(&mut good.clone()[..]).unwrap().valid());
    let n = LeaseBlock::open(&mut good.clone()[..]).unwrap().len();
    assert_eq!(n, 9);
    // Word 1: the slots' id words, and above 8 bits how many ids need them all.
    let idw = (good[1] & 0xff) as usize;
    let slot = |s: usize| H + s * (4 + idw);
    let refused = |mutate: &dyn Fn(&mut Vec<u64>), why: &str| {
        let mut w = good.clone();
        mutate(&mut w);
        assert!(LeaseBlock::open(&mut w[..]).is_none_or(|b| !b.valid()), "{why}");
    };
    refused(&|w| w[0] += 1, "len");
    refused(&|w| w[1] = 17, "id words");
    refused(&|w| w[1] += 1 << 8, "the count of ids at the slots' width");
    refused(&|w| w[1] -= 1 << 8, "the count of ids at the slots' width");
    refused(&|w| w[2] = (w[2] + 1) % 9, "root");
    refused(&|w| w[4] = 0, "a start after last_ns");
    // The header's first and last deadline (words 5 and 6) are the tree's;
    // word 7 keys the index's hash; word 8 offsets every slot's deadline.
    assert_eq!(H, 9);
    refused(&|w| w[7] ^= 1, "the index's seed: entries no longer at their homes");
    refused(&|w| w[8] += 1, "the offset: every deadline moves, the header's ends do not");
    refused(&|w| w[5] += 1, "first deadline");
    refused(&|w| w[5] -= 1, "first deadline");
    refused(&|w| w[6] -= 1, "last deadline");
    refused(&|w| w[6] = 0, "last deadline");
    refused(&|w| w[slot(3)] += 5000 * MS, "tree order (or sums)");
    refused(&|w| w[slot(3) + 1] &= !(((1u64 << 17) - 1) << 40), "units 0");
    refused(&|w| w[slot(3) + 2] = 0, "children");
    refused(&|w| w[slot(3) + 3] += 1, "subtree sum");
    // Slot 3 given slot 1's id (both generated, of one length): two leases
    // of one id. (An id merely changed can still be found from its new home
    // when the probe reaches it: a valid block then, whatever the seed.)
    refused(
        &|w| {
            let (a, b) = (slot(1) + 4, slot(3) + 4);
            w.copy_within(a..a + idw, b);
        },
        "two leases of one id",
    );
    refused(&|w| *w.last_mut().unwrap() = u64::MAX, "index entries");
    refused(&|w| w.push(0), "block length");
    // Two slots swapped in the tree but not in the index.
    refused(
        &|w| {
            let (a, b) = (slot(1) + 4, slot(2) + 4);
            w.swap(a, b);
        },
        "index",
    );
}

#[test]
fn ids_of_128_bytes_widen_the_slots_and_the_bytes_per_lease_are_as_documented() {
    let leases = Leases::new(100_000, 60_000).unwrap();
    let mut block = None;
    for k in 0..1000u64 {
        let o = acq(&leases, &mut block, T0 + k * 1000, 1, None);
        apply(&mut block, o.change);
    }
    // 1,000 generated ids of 15 to 17 bytes ("1800000000000-999"): 3 id words,
    // 1,024 slots of 7 words plus 2 index entries (one word): 64 bytes a slot.
    let words = block.as_ref().unwrap().len();
    assert_eq!(words, H + 1024 * 8);
    assert_eq!((words - H) * 8 / 1024, 64);
    let long = LeaseId::new(&[b'z'; 128]).unwrap();
    let o = leases.acquire(Some(&open(&mut block)), T0 + MS, 1, Some(&long), 0);
    apply(&mut block, o.change);
    let b = open(&mut block);
    assert_eq!((b.len(), b.id_words(), b.capacity()), (1001, 16, 1024));
    assert_eq!((block.as_ref().unwrap().len() - H) * 8 / 1024, 168);
    assert!(open(&mut block).find(&long).is_some());
}

/// The block's walks are O(log n): the tree of 100,000 leases is no deeper
/// than an AVL tree allows (1.44 log2 n, about 24), and a call on it answers
/// what the reference store does.
#[test]
fn a_hundred_thousand_leases_answer_through_a_shallow_tree() {
    let leases = Leases::new(100_000, 60_000).unwrap();
    let mut block = None;
    let mut rng = 0x1234_5678u64;
    for k in 0..100_000u64 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let c = acq(&leases, &mut block, T0 + k * 100, 1, None).change.unwrap();
        // Renew some at random times, to mix the deadlines.
        apply_checked(&mut block, &c, false);
        if k % 3 == 0 {
            let b = open(&mut block);
            let l = b.get((rng >> 33) as usize % b.len());
            let c = Leases::renew(Some(&b), T0 + k * 100, &l.id, 1000 + (rng >> 40) % 50_000).unwrap().change.unwrap();
            apply_checked(&mut block, &c, false);
        }
    }
    let b = open(&mut block);
    assert_eq!(b.len(), 100_000);
    assert!(b.tree_height() <= 24, "height {}", b.tree_height());
    assert!(b.valid());
    let vec = LeaseVec::from_leases(b.header(), b.iter().collect());
    for (t, cost) in [(T0 + 10_000 * MS, 1), (T0 + 10_000 * MS, 0), (T0 + 30_000 * MS, 500), (T0 + 61_000 * MS, 1)] {
        assert_eq!(leases.acquire(Some(&b), t, cost, None, 0), leases.acquire(Some(&vec), t, cost, None, 0));
    }
}

/// An added lease whose id the set already holds (only a crafted RL.APPLY
/// payload carries one) takes that lease's place in both stores: one lease
/// of the id, at the new deadline, the block still valid.
#[test]
fn an_added_lease_replaces_the_lease_of_its_id() {
    let leases = Leases::new(10, 1000).unwrap();
    let mut block = None;
    let mut vec = LeaseVec::new();
    for (k, name) in ["x", "y", "z"].into_iter().enumerate() {
        let c = acq(&leases, &mut block, T0 + k as u64 * MS, 1, Some(&id(name))).change.unwrap();
        c.apply(&mut vec);
        apply_to_block(&mut block, &c);
    }
    let mut c = acq(&leases, &mut block, T0 + 5 * MS, 2, Some(&id("w"))).change.unwrap();
    let LeaseOp::Add(ref mut l) = c.op else { panic!("{c:?}") };
    l.id = id("x");
    c.apply(&mut vec);
    apply_to_block(&mut block, &c);
    let b = open(&mut block);
    assert!(b.valid());
    let got: Vec<Lease> = b.iter().collect();
    assert_eq!(got, vec.leases());
    assert_eq!(
        got.iter().map(|l| (l.id.as_bytes(), l.units)).collect::<Vec<_>>(),
        [(&b"y"[..], 1), (b"z", 1), (b"x", 2)]
    );
}

/// A set of `n` leases over `spread` ms, of three lease_ms and mixed ids,
/// kept as a block and as the model store.
fn mixed_set(n: u64, spread: u64) -> (Option<Vec<u64>>, LeaseVec) {
    set_of(n, spread, &[60_000, 5_000, 61_000])
}

/// The same with the lease_ms taken in turn from `lease_ms`.
fn set_of(n: u64, spread: u64, lease_ms: &[u64]) -> (Option<Vec<u64>>, LeaseVec) {
    let mut block = None;
    let mut vec = LeaseVec::new();
    for k in 0..n {
        let leases = Leases::new(MAX_LEASE_LIMIT, lease_ms[k as usize % lease_ms.len()]).unwrap();
        let name = format!("w-{}", k * 7919 % n);
        let lid = LeaseId::new(name.as_bytes()).unwrap();
        let c = leases.acquire(Some(&vec), T0 + k * spread * MS / n, 1 + k % 2, (k % 4 != 0).then_some(&lid), 0);
        let c = c.change.unwrap();
        c.apply(&mut vec);
        apply_checked(&mut block, &c, false);
    }
    (block, vec)
}

fn in_stored_order(b: &LeaseBlock<&mut [u64]>) -> Vec<(u64, Vec<u8>, u64, u64)> {
    b.iter().map(|l| (l.deadline_ns, l.id.as_bytes().to_vec(), l.lease_ms, l.units)).collect()
}

/// A backward jump of a few ms, past most leases' starts and past all of
/// them: the block reads, repairs (every deadline moved back, the tree kept)
/// and stores what the model store does, and stays a valid tree.
#[test]
fn a_repair_moves_every_deadline_back_as_the_model_does() {
    for (n, back_ms) in [(3000u64, 20), (3000, 2500), (3000, 4000), (600, 700)] {
        let (mut block, mut vec) = mixed_set(n, 3000);
        let now = T0 + 3000 * MS - back_ms * MS;
        let leases = Leases::new(MAX_LEASE_LIMIT, 1000).unwrap();
        for cost in [0, 1, MAX_LEASE_LIMIT] {
            let b = open(&mut block);
            assert_eq!(
                leases.acquire(Some(&b), now, cost, None, 0),
                leases.acquire(Some(&vec), now, cost, None, 0),
                "n {n} back {back_ms} cost {cost}"
            );
        }
        let c = leases.acquire(Some(&open(&mut block)), now, 1, None, 0).change.unwrap();
        assert_eq!(c.shift_ns, Some(vec.header().last_ns - now));
        c.apply(&mut vec);
        apply_checked(&mut block, &c, false);
        let b = open(&mut block);
        assert!(b.valid(), "n {n} back {back_ms}");
        let model: Vec<_> =
            vec.leases().iter().map(|l| (l.deadline_ns, l.id.as_bytes().to_vec(), l.lease_ms, l.units)).collect();
        assert_eq!(in_stored_order(&b), model);
        for cost in [0, 1, MAX_LEASE_LIMIT] {
            assert_eq!(leases.acquire(Some(&b), now, cost, None, 0), leases.acquire(Some(&vec), now, cost, None, 0));
        }
    }
}

/// A repair writes only the block's header (its deadline offset), never a
/// slot; every write after it (an acquire, a renewal, a release, a longer id
/// that widens the block, more repairs, one that floors deadlines at 0)
/// stores what the model store does.
#[test]
fn a_repair_writes_only_the_header_and_later_writes_go_through_its_offset() {
    let (mut block, mut vec) = mixed_set(3000, 3000);
    let mut now = T0 + 3000 * MS;
    let leases = Leases::new(MAX_LEASE_LIMIT, 1000).unwrap();
    let ids: Vec<LeaseId> = vec.leases().iter().step_by(211).map(|l| l.id).collect();
    let model = |vec: &LeaseVec| -> Vec<_> {
        vec.leases().iter().map(|l| (l.deadline_ns, l.id.as_bytes().to_vec(), l.lease_ms, l.units)).collect()
    };
    for (round, back_ms) in [700u64, 1, 2500, 40_000].into_iter().enumerate() {
        now -= back_ms * MS;
        let c = leases.acquire(Some(&open(&mut block)), now, 1, None, 0).change.unwrap();
        assert_eq!(c.shift_ns, Some(vec.header().last_ns - now), "round {round}");
        let slots_before = block.as_ref().unwrap()[H..].to_vec();
        let floors = vec.leases().iter().any(|l| l.deadline_ns <= c.shift_ns.unwrap());
        c.apply(&mut vec);
        // The shift alone, then the acquire's insert.
        let mut shifted = c;
        shifted.op = redis_rl::core::LeaseOp::None;
        shifted.drop = 0;
        apply_checked(&mut block, &shifted, true);
        if !floors {
            assert_eq!(block.as_ref().unwrap()[H..], slots_before[..], "round {round}: a slot word was written");
        }
        let mut only_op = c;
        only_op.shift_ns = None;
        apply_checked(&mut block, &only_op, true);
        assert_eq!(in_stored_order(&open(&mut block)), model(&vec), "round {round}");
        // Writes after the repair: a renewal, a release, a named acquire
        // with a 128-byte id (the block widens, its offset copied).
        let long = LeaseId::new(&[b'a' + round as u8; 128]).unwrap();
        let writes = [
            Leases::renew(Some(&open(&mut block)), now, &ids[round], 9_000).unwrap().change,
            Leases::release(Some(&open(&mut block)), now, &ids[round + 5]).change,
            Leases::new(MAX_LEASE_LIMIT, 2_000)
                .unwrap()
                .acquire(Some(&open(&mut block)), now, 2, Some(&long), 0)
                .change,
        ];
        for c in writes.into_iter().flatten() {
            c.apply(&mut vec);
            apply_checked(&mut block, &c, true);
            assert_eq!(in_stored_order(&open(&mut block)), model(&vec), "round {round}");
        }
        let b = open(&mut block);
        for cost in [0, 1, MAX_LEASE_LIMIT] {
            assert_eq!(leases.acquire(Some(&b), now, cost, None, 0), leases.acquire(Some(&vec), now, cost, None, 0));
        }
        for id in &ids {
            assert_eq!(Leases::release(Some(&b), now, id), Leases::release(Some(&vec), now, id));
        }
    }
}

/// A jumped set of several lease_ms reads by descents and answers exactly
/// what the model store does: denials' retry times, resets, PEEK, releases
/// and renewals, at clocks behind every lease's start, behind some, and at
/// the last start.
#[test]
fn a_jumped_set_reads_as_the_model_store_does() {
    let (mut block, vec) = set_of(3000, 3000, &[5_000, 800, 60_000]);
    let ids: Vec<LeaseId> = vec.leases().iter().step_by(97).map(|l| l.id).collect();
    for back_ms in [0u64, 1, 700, 2999, 3000, 4000, 60_000] {
        let now = T0 + 3000 * MS - back_ms * MS;
        for (limit, lease_ms) in [(MAX_LEASE_LIMIT, 5_000), (4500, 5_000), (4500, 800), (10, 1)] {
            let leases = Leases::new(limit, lease_ms).unwrap();
            let b = open(&mut block);
            for cost in [0, 1, 2, 1500, MAX_LEASE_LIMIT] {
                assert_eq!(
                    leases.acquire(Some(&b), now, cost, None, 0),
                    leases.acquire(Some(&vec), now, cost, None, 0),
                    "back {back_ms} limit {limit} lease_ms {lease_ms} cost {cost}"
                );
                for id in &ids[..3] {
                    assert_eq!(
                        leases.acquire(Some(&b), now, cost, Some(id), 0),
                        leases.acquire(Some(&vec), now, cost, Some(id), 0),
                        "back {back_ms} cost {cost} id {id:?}"
                    );
                }
            }
            for id in &ids {
                assert_eq!(Leases::release(Some(&b), now, id), Leases::release(Some(&vec), now, id));
                assert_eq!(
                    Leases::renew(Some(&b), now, id, lease_ms).unwrap(),
                    Leases::renew(Some(&vec), now, id, lease_ms).unwrap()
                );
            }
        }
    }
    // The latest lease ended: the set's time stays that of its last write,
    // ahead of the latest start left, so a call at that start (even COST 0)
    // reads the set at its own time and stores it moved back.
    let mut vec = vec;
    let latest = *vec.leases().iter().max_by_key(|l| l.start_ns()).unwrap();
    let c = Leases::release(Some(&open(&mut block)), latest.start_ns(), &latest.id).change.unwrap();
    c.apply(&mut vec);
    apply(&mut block, Some(c));
    let now = vec.leases().iter().map(|l| l.start_ns()).max().unwrap();
    let last_ns = vec.header().last_ns;
    assert!(last_ns > now);
    let leases = Leases::new(MAX_LEASE_LIMIT, 5_000).unwrap();
    let b = open(&mut block);
    for cost in [0, 1] {
        let o = leases.acquire(Some(&b), now, cost, None, 0);
        assert_eq!(o, leases.acquire(Some(&vec), now, cost, None, 0));
        assert_eq!(o.change.map(|c| (c.shift_ns, c.header.last_ns)), Some((Some(last_ns - now), now)));
    }
}

/// A clock gone back further than a deadline lies after the epoch (a fake
/// clock near 0): the deadlines that would fall below 0 stay at 0, ordered
/// by id, and the tree is built again in that order.
#[test]
fn a_repair_that_floors_deadlines_at_zero_rebuilds_the_order() {
    let mut block = None;
    let mut vec = LeaseVec::new();
    // 300 short leases in the first 100 ms, then one at 3 s that drops only
    // MAX_DROP of the expired ones.
    for k in 0..301u64 {
        let (at, lease_ms) = if k < 300 { ((1 + k / 3) * MS, 50) } else { (3000 * MS, 1000) };
        let leases = Leases::new(MAX_LEASE_LIMIT, lease_ms).unwrap();
        let name = format!("z-{}", k * 7919 % 301);
        let lid = LeaseId::new(name.as_bytes()).unwrap();
        let c = leases.acquire(Some(&vec), at, 1, (k % 2 == 0).then_some(&lid), 0).change.unwrap();
        c.apply(&mut vec);
        apply_checked(&mut block, &c, true);
    }
    let now = 2 * MS;
    let leases = Leases::new(MAX_LEASE_LIMIT, 1000).unwrap();
    let c = leases.acquire(Some(&open(&mut block)), now, 1, None, 0).change.unwrap();
    assert_eq!(c.shift_ns, Some(3000 * MS - now));
    c.apply(&mut vec);
    apply_checked(&mut block, &c, true);
    let b = open(&mut block);
    let model: Vec<_> =
        vec.leases().iter().map(|l| (l.deadline_ns, l.id.as_bytes().to_vec(), l.lease_ms, l.units)).collect();
    assert!(model.iter().any(|l| l.0 == 0), "some deadline floored");
    assert_eq!(in_stored_order(&b), model);
    for cost in [0, 1, MAX_LEASE_LIMIT] {
        assert_eq!(leases.acquire(Some(&b), now, cost, None, 0), leases.acquire(Some(&vec), now, cost, None, 0));
    }
}

/// A mass expiry is dropped MAX_DROP leases per call; what is left expired
/// counts nothing and the answers are those of a set without it.
#[test]
fn expired_leases_are_dropped_in_bounded_batches() {
    let (mut block, _) = mixed_set(1000, 10);
    let keeper = LeaseId::new(b"keeper").unwrap();
    let long = Leases::new(MAX_LEASE_LIMIT, 3_600_000).unwrap();
    let c = long.acquire(Some(&open(&mut block)), T0 + 10 * MS, 1, Some(&keeper), 0).change;
    apply(&mut block, c);
    let now = T0 + 100_000 * MS;
    let leases = Leases::new(5, 1000).unwrap();
    let mut left = 1001;
    for k in 1..=4 {
        let o = acq(&leases, &mut block, now, 1, None);
        assert_eq!(o.change.unwrap().drop, MAX_DROP.min(left - 1), "call {k}");
        assert_eq!(o.decision.remaining, 5 - 1 - k as u64);
        if k < 4 {
            apply(&mut block, o.change);
            left -= MAX_DROP;
            left += 1;
            assert_eq!(open(&mut block).len(), left);
            assert!(open(&mut block).valid());
        }
    }
    // Ending the last live one deletes the key, expired leases and all.
    let b = open(&mut block);
    let ids: Vec<LeaseId> = b.iter().filter(|l| l.deadline_ns > now).map(|l| l.id).collect();
    assert_eq!(ids.len(), 4);
    for (k, id) in ids.iter().enumerate() {
        let c = Leases::release(Some(&open(&mut block)), now, id).change.unwrap();
        assert_eq!(c.delete, k == 3);
        if !c.delete {
            apply(&mut block, Some(c));
        }
    }
}
