//! A replica never keeps a log or a lease set its own loader would refuse
//! (issue 32.1), whatever its set holds beside its master's: random traffic
//! on a master, each change it writes sent to a replica as the module sends
//! it, and random local writes on the replica in between (a writable
//! replica), on a replica clock up to 10 s ahead of or behind the master's.
//! The replica applies a change as `RL.APPLY` does: a log only when the
//! change leaves a log the loader accepts (`LogChange::valid_on`), a lease
//! set when the change fits it (`LeaseChange::fits`); a deleting change
//! deletes the key. After every step each store is checked with what RDB
//! load and RESTORE check (`SlidingLog::valid`, `LeaseBlock::valid`).

#[path = "common/model.rs"]
mod model;

use model::config;
use proptest::prelude::*;
use redis_rl::core::{
    LeaseBlock, LeaseChange, LeaseHeader, LeaseId, LeaseRead, Leases, LogBuf, LogChange, LogOp, LogRead, SlidingLog,
};

const MS: u64 = 1_000_000;
/// 2027-01-15 in ns, on a whole hour.
const T0: u64 = 1_800_000_000_000 * MS;

/// Who writes a step, and how far that node's clock moves first (ms).
#[derive(Debug, Clone)]
enum Step {
    Master { dt_ms: u64, op: u8, cost: u64, param: u64 },
    Replica { op: u8, cost: u64, param: u64 },
}

fn steps() -> impl Strategy<Value = (i64, Vec<Step>)> {
    let step = prop_oneof![
        3 => (0u64..1500, 0u8..4, 0u64..4, 0u64..4).prop_map(|(dt_ms, op, cost, param)| Step::Master { dt_ms, op, cost, param }),
        1 => (0u8..4, 0u64..4, 0u64..4).prop_map(|(op, cost, param)| Step::Replica { op, cost, param }),
    ];
    (prop_oneof![Just(0i64), Just(10_000), Just(-10_000), -10_000i64..10_000], prop::collection::vec(step, 1..80))
}

// ---------------------------------------------------------------------------
// Logs.

fn log_of(param: u64) -> SlidingLog {
    let (limit, window_ms) = [(3, 1000), (5, 2000), (2, 500), (4, 10_000)][param as usize];
    SlidingLog::new(limit, window_ms).unwrap()
}

fn log_op(op: u8, cost: u64) -> LogOp {
    match op {
        0 | 1 => LogOp::Consume(cost),
        _ => LogOp::Refund(cost.max(1)),
    }
}

/// Writes `c` to `store` as a node that computed it does.
fn log_write(store: &mut Option<LogBuf>, c: &LogChange) {
    if c.delete {
        *store = None;
        return;
    }
    let s = store.get_or_insert_with(|| LogBuf::new(c.header));
    c.apply(s);
}

/// Applies `c` from the master as `RL.APPLY` does: a deleting change is a
/// DEL; any other only when it leaves a valid log. True if applied.
fn log_apply_from_master(store: &mut Option<LogBuf>, c: &LogChange) -> bool {
    if c.delete {
        *store = None;
        return true;
    }
    let empty = LogBuf::new(redis_rl::core::LogHeader { window_ms: c.header.window_ms, total: 0 });
    let ok = match store.as_ref() {
        Some(s) => c.valid_on(s),
        None => c.valid_on(&empty),
    };
    if ok {
        log_write(store, c);
    }
    ok
}

fn log_valid(store: &Option<LogBuf>) -> bool {
    store.as_ref().is_none_or(SlidingLog::valid)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn a_replica_log_stays_loadable_with_local_writes_and_its_own_clock((skew_ms, steps) in steps()) {
        let (mut master, mut replica): (Option<LogBuf>, Option<LogBuf>) = (None, None);
        let mut now = T0;
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Master { dt_ms, op, cost, param } => {
                    now += dt_ms * MS;
                    let o = log_of(param).check(master.as_ref(), now, log_op(op, cost));
                    if let Some(c) = o.change {
                        log_write(&mut master, &c);
                        // A change the master computed always applies to its own log.
                        prop_assert!(log_valid(&master), "step {}: master invalid", i);
                        log_apply_from_master(&mut replica, &c);
                    }
                }
                Step::Replica { op, cost, param } => {
                    let at = now.saturating_add_signed(skew_ms * MS as i64);
                    if let Some(c) = log_of(param).check(replica.as_ref(), at, log_op(op, cost)).change {
                        log_write(&mut replica, &c);
                    }
                }
            }
            prop_assert!(log_valid(&replica), "step {}: the replica's log would not load: {:?}", i, replica);
        }
    }

    /// Without local writes the replica holds exactly the master's log.
    #[test]
    fn a_replica_log_without_local_writes_is_the_masters(
        steps in prop::collection::vec((0u64..1500, 0u8..4, 0u64..4, 0u64..4), 1..80)
    ) {
        let (mut master, mut replica): (Option<LogBuf>, Option<LogBuf>) = (None, None);
        let mut now = T0;
        for (dt_ms, op, cost, param) in steps {
            now += dt_ms * MS;
            if let Some(c) = log_of(param).check(master.as_ref(), now, log_op(op, cost)).change {
                log_write(&mut master, &c);
                prop_assert!(log_apply_from_master(&mut replica, &c), "refused {:?}", c);
            }
            let entries = |s: &Option<LogBuf>| s.as_ref().map(|s| (s.header(), s.entries().collect::<Vec<_>>()));
            prop_assert_eq!(entries(&master), entries(&replica));
        }
    }
}

/// The smallest case the property finds with the old check (`fits`, counts
/// only): the master counts 1 at T0; the replica, writing locally at the
/// same instant, makes that entry's cost 2; the master's next change, 1 ms
/// later, keeps the entry and pushes one, and carries its total, 2, where
/// the replica's entries now sum to 3: a log its loader refuses.
#[test]
fn a_change_that_would_break_the_replica_log_is_refused() {
    let log = SlidingLog::new(3, 1000).unwrap();
    let mut master = None;
    let c = log.check(None::<&LogBuf>, T0, LogOp::Consume(1)).change.unwrap();
    log_write(&mut master, &c);
    let mut replica = None;
    assert!(log_apply_from_master(&mut replica, &c));
    let local = log.check(replica.as_ref(), T0, LogOp::Consume(1)).change.unwrap();
    log_write(&mut replica, &local);
    let next = log.check(master.as_ref(), T0 + MS, LogOp::Consume(1)).change.unwrap();
    assert!(next.fits(replica.as_ref().unwrap().len()), "the old check let it through");
    assert!(!next.valid_on(replica.as_ref().unwrap()));
    assert!(!log_apply_from_master(&mut replica, &next));
    assert!(log_valid(&replica));
    // Applied anyway (the old way), the log would not load.
    let mut forced = replica.clone();
    log_write(&mut forced, &next);
    assert!(!log_valid(&forced));
}

// ---------------------------------------------------------------------------
// Lease sets.

fn leases_of(param: u64) -> Leases {
    let (limit, lease_ms) = [(10, 600_000), (3, 1000), (5, 20_000), (2, 500)][param as usize];
    Leases::new(limit, lease_ms).unwrap()
}

/// Ids: four names the master and the replica both use, so each releases,
/// renews and replaces the other's leases.
fn id(n: u64) -> LeaseId {
    LeaseId::new(format!("id{n}").as_bytes()).unwrap()
}

/// A key's set, kept as a block of words, written as the module writes:
/// grown when the change needs room, deleted by a deleting change.
fn lease_write(words: &mut Option<Vec<u64>>, c: &LeaseChange) {
    if c.delete {
        *words = None;
        return;
    }
    let w = words.get_or_insert_with(|| {
        let (cap, idw) = LeaseBlock::first_layout(c);
        let mut v = vec![0; LeaseBlock::words_for(cap, idw)];
        LeaseBlock::init(&mut v, idw, LeaseHeader { next_seq: 0, last_ns: 0 }, 0x5eed).unwrap();
        v
    });
    let b = LeaseBlock::open(&mut w[..]).unwrap();
    if let Some((cap, idw)) = b.needs_room(c) {
        let mut bigger = vec![0; LeaseBlock::words_for(cap, idw)];
        b.grow_into(&mut bigger, idw).unwrap();
        *w = bigger;
    }
    let mut b = LeaseBlock::open(&mut w[..]).unwrap();
    c.apply(&mut b);
}

/// As `RL.APPLY`: a deleting change is a DEL; any other applies if it fits.
fn lease_apply_from_master(words: &mut Option<Vec<u64>>, c: &LeaseChange) {
    if let Some(w) = words.as_mut() {
        if !c.delete && !c.fits(&LeaseBlock::open(&mut w[..]).unwrap()) {
            return;
        }
    }
    lease_write(words, c);
}

fn lease_valid(words: &mut Option<Vec<u64>>) -> bool {
    words.as_mut().is_none_or(|w| LeaseBlock::open(&mut w[..]).is_some_and(|b| b.valid()))
}

fn lease_change(set: &mut Option<Vec<u64>>, now: u64, op: u8, cost: u64, param: u64) -> Option<LeaseChange> {
    let store = master_store(set);
    let store = store.as_ref();
    let leases = leases_of(param);
    match op {
        0 => leases.acquire(store, now, cost.max(1), Some(&id(cost)), 0).change,
        1 => leases.acquire(store, now, cost.max(1), None, 0).change,
        2 => Leases::release(store, now, &id(cost)).change,
        _ => Leases::renew(store, now, &id(cost), leases.lease_ms()).unwrap().change,
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn a_replica_lease_set_stays_loadable_with_local_writes_and_its_own_clock((skew_ms, steps) in steps()) {
        let (mut master, mut replica): (Option<Vec<u64>>, Option<Vec<u64>>) = (None, None);
        let mut now = T0;
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Master { dt_ms, op, cost, param } => {
                    now += dt_ms * MS;
                    if let Some(c) = lease_change(&mut master, now, op, cost, param) {
                        lease_write(&mut master, &c);
                        prop_assert!(lease_valid(&mut master), "step {}: master invalid", i);
                        lease_apply_from_master(&mut replica, &c);
                    }
                }
                Step::Replica { op, cost, param } => {
                    let at = now.saturating_add_signed(skew_ms * MS as i64);
                    if let Some(c) = lease_change(&mut replica, at, op, cost, param) {
                        lease_write(&mut replica, &c);
                    }
                }
            }
            prop_assert!(lease_valid(&mut replica), "step {}: the replica's set would not load", i);
        }
    }
}

/// The repro: master m1, m0; a local r1 on the replica; the master
/// releases m0. The change's `last_ns` (the master's) lies before r1's
/// start, which the loader refused; the replica keeps a `last_ns` at or
/// after every start.
#[test]
fn a_masters_release_keeps_the_replicas_own_lease_loadable() {
    let l = Leases::new(10, 600_000).unwrap();
    let (mut master, mut replica) = (None, None);
    for (n, at) in [("m1", T0), ("m0", T0 + MS)] {
        let c = l.acquire(master_store(&mut master).as_ref(), at, 1, Some(&name(n)), 0).change.unwrap();
        lease_write(&mut master, &c);
        lease_apply_from_master(&mut replica, &c);
    }
    let local =
        l.acquire(master_store(&mut replica).as_ref(), T0 + 10_000 * MS, 1, Some(&name("r1")), 0).change.unwrap();
    lease_write(&mut replica, &local);
    let release = Leases::release(master_store(&mut master).as_ref(), T0 + 2 * MS, &name("m0")).change.unwrap();
    assert!(release.header.last_ns < T0 + 10_000 * MS);
    lease_apply_from_master(&mut replica, &release);
    assert!(lease_valid(&mut replica));
    let w = replica.as_mut().unwrap();
    let b = LeaseBlock::open(&mut w[..]).unwrap();
    assert_eq!(b.len(), 2);
    assert!(b.header().last_ns >= T0 + 10_000 * MS);
}

fn name(s: &str) -> LeaseId {
    LeaseId::new(s.as_bytes()).unwrap()
}

fn master_store(w: &mut Option<Vec<u64>>) -> Option<LeaseBlock<&[u64]>> {
    w.as_ref().map(|w| LeaseBlock::open(&w[..]).unwrap())
}
