//! Concurrency leases (`RL.ACQUIRE`, `RL.RELEASE`, `RL.RENEW`): the pure core.
//!
//! A key holds a set of leases, each `(id, deadline, units, own lease_ms)`.
//! A lease is live while `now < deadline`; a request of `cost` units is
//! allowed when the live units plus `cost` are at most `limit`.
//!
//! The set lives in storage the caller owns (the module's word block,
//! [`LeaseBlock`]; a sorted `Vec` in tests, [`LeaseVec`]), behind
//! [`LeaseStore`]. A call only reads it: [`Leases::acquire`],
//! [`Leases::release`] and [`Leases::renew`] answer and, when the call
//! writes, give a [`LeaseChange`] of constant size (the time of a clock
//! repair, how many expired leases to drop, one lease added, renewed or
//! ended, the new header and expiry). The caller applies it with
//! [`LeaseChange::apply`] (not for PEEK) and propagates it as it is: never
//! the whole set, never a command that reads the clock.
//!
//! Order. Leases are ordered by `(deadline, id bytes)`, a total order (ids
//! are unique in a set), so "the `k` first leases" names the same leases on
//! every copy of a set, whatever its layout: expired leases are exactly the
//! first ones (deadline <= now), and a change drops them by count.
//!
//! Work per call, in [`LeaseBlock`]: an AVL tree of the slots in that order,
//! each node keeping the units of its subtree, so the live units (a prefix
//! sum), the retry time (the first deadline by which enough units have
//! expired: a weighted order statistic) and the reset time (the last
//! deadline) are each one descent, O(log n); an id is found through an
//! open-addressing hash index. A write costs O(log n) plus O(log n) per
//! expired lease it drops. Nothing here allocates.
//!
//! Clock jumps. Each lease keeps its own `lease_ms`, so its start is
//! `deadline - lease_ms`. A lease is never live longer than its own
//! `lease_ms` from the time a call reads it: a lease whose start is after
//! now (the clock went back) reads with the deadline `now + lease_ms`. The
//! header keeps the latest start any write has set (`last_ns`), so while
//! `now >= last_ns` (always, unless the clock went back) no lease can be
//! affected and the reading is the stored set. Otherwise the call reads by
//! a scan, O(n) (O(n log T) for a denial's retry time); a call that writes
//! anyway, and a call other than PEEK that finds a lease to shorten, stores
//! the shortened set (a repair, `clamp_at_ns`), after which the fast path
//! holds again. Only a backward clock jump pays for the scan.
//!
//! Generated ids. Without `ID`, the lease is named `<now in ms>-<seq>`
//! (ASCII decimal, at most 41 bytes), where `seq` is the key's sequence
//! number, kept in the header and incremented by every generated id. A new
//! key's sequence starts at the caller's `seed`. Within a key's life, ids
//! never repeat (the sequence only grows, and a generated id that happens to
//! equal a live client-named lease's id is skipped). Across a key's lives
//! (the key is deleted when its last lease ends, and created again later),
//! the time and the seed keep them apart: the module passes a node-wide
//! counter of created lease keys as the seed, so a key deleted and created
//! again in the same millisecond (or in one MULTI, where time stands still)
//! still starts a new sequence.

use std::cmp::Ordering;
use std::ops::{Deref, DerefMut};

use super::decision::{Decision, ParamError};

/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// The largest `limit` (units held at once); also the most leases a set holds.
pub const MAX_LEASE_LIMIT: u64 = 100_000;
/// The longest `lease_ms` (10^12 ms, as for every window and period).
pub const MAX_LEASE_MS: u64 = 1_000_000_000_000;
/// The longest lease id, in bytes (ids are 1 to 128 bytes).
pub const MAX_ID_LEN: usize = 128;
/// The words of the longest id.
pub const MAX_ID_WORDS: usize = MAX_ID_LEN / 8;

/// A lease id: 1 to 128 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseId {
    len: u8,
    bytes: [u8; MAX_ID_LEN],
}

impl LeaseId {
    /// `None` unless `bytes` is 1 to 128 bytes long.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        if bytes.is_empty() || bytes.len() > MAX_ID_LEN {
            return None;
        }
        let mut id = Self { len: bytes.len() as u8, bytes: [0; MAX_ID_LEN] };
        id.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(id)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The id's length in bytes (1 to 128).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// The words the id takes in a slot or a payload.
    pub fn words_needed(&self) -> usize {
        self.len().div_ceil(8)
    }

    /// The id packed big-endian into words, zero-padded: comparing these
    /// words, then the length, orders ids as their bytes do.
    fn words(&self) -> [u64; MAX_ID_WORDS] {
        let mut w = [0u64; MAX_ID_WORDS];
        // The bytes past the length are zero: so are the words past them.
        for (k, chunk) in self.bytes[..8 * self.words_needed()].chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            w[k] = u64::from_be_bytes(b);
        }
        w
    }

    /// An id from its length and packed words; `None` if the length is out
    /// of range or a byte past it is not zero (so every id has one encoding).
    fn from_words(len: u64, words: &[u64]) -> Option<Self> {
        let len = usize::try_from(len).ok().filter(|n| (1..=MAX_ID_LEN).contains(n))?;
        if words.len() > MAX_ID_WORDS || len > 8 * words.len() {
            return None;
        }
        let mut id = Self { len: len as u8, bytes: [0; MAX_ID_LEN] };
        for (k, &w) in words.iter().enumerate() {
            id.bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_be_bytes());
        }
        // The bytes past the words are zero by construction: only the last
        // word's padding needs a look.
        id.bytes[len..8 * words.len()].iter().all(|&b| b == 0).then_some(id)
    }
}

impl PartialOrd for LeaseId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LeaseId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl std::fmt::Debug for LeaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// One lease: its id, its deadline (ns since the epoch; live while
/// `now < deadline`), its units (1 to 100,000) and the `lease_ms` it was
/// last given (so its start is `deadline - lease_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub id: LeaseId,
    pub deadline_ns: u64,
    pub lease_ms: u64,
    pub units: u64,
}

impl Lease {
    /// When its deadline was set.
    pub fn start_ns(&self) -> u64 {
        self.deadline_ns.saturating_sub(self.lease_ms.saturating_mul(NS_PER_MS))
    }

    /// Its deadline as read at `now`: never more than its own `lease_ms`
    /// after now.
    pub fn deadline_at(&self, now_ns: u64) -> u64 {
        self.deadline_ns.min(now_ns.saturating_add(self.lease_ms.saturating_mul(NS_PER_MS)))
    }

    /// Whether its fields are in range: units 1..=100,000, lease_ms
    /// 1..=10^12, a deadline no earlier than its own lease_ms.
    pub fn in_range(&self) -> bool {
        (1..=MAX_LEASE_LIMIT).contains(&self.units)
            && (1..=MAX_LEASE_MS).contains(&self.lease_ms)
            && self.deadline_ns >= self.lease_ms * NS_PER_MS
    }

    fn order(&self, other: &Lease) -> Ordering {
        (self.deadline_ns, self.id.as_bytes()).cmp(&(other.deadline_ns, other.id.as_bytes()))
    }
}

/// The fixed part of a set's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseHeader {
    /// The sequence number of the next generated id.
    pub next_seq: u64,
    /// No lease's start is later than this (the latest `now` that set a
    /// deadline, or the time of the last clock repair).
    pub last_ns: u64,
}

/// Caller-owned storage of a lease set. The core reads it in
/// [`Leases::acquire`], [`Leases::release`] and [`Leases::renew`] and
/// changes it only through [`LeaseChange::apply`], with the writes below.
/// "Order" is the order by `(deadline, id)`.
/// A lease set as a call reads it. [`Leases`] only reads; [`LeaseStore`]
/// adds the edits [`LeaseChange::apply`] makes.
pub trait LeaseRead {
    /// The number of leases (live or not).
    fn len(&self) -> usize;
    fn header(&self) -> LeaseHeader;
    /// Lease `i`, in the store's own order (`i < len()`).
    fn get(&self, i: usize) -> Lease;
    /// The lease with this id.
    fn find(&self, id: &LeaseId) -> Option<Lease>;
    /// The deadline of the lease with this id (what [`find`](Self::find)
    /// answers, without reading the rest of the lease).
    fn deadline_of(&self, id: &LeaseId) -> Option<u64> {
        self.find(id).map(|l| l.deadline_ns)
    }
    /// The units of every lease with a deadline at or before `t`.
    fn units_through(&self, t_ns: u64) -> u64;
    /// The units of every lease.
    fn units(&self) -> u64;
    /// How many leases have a deadline at or before `t`.
    fn count_through(&self, t_ns: u64) -> usize;
    /// The least deadline `d` such that the leases with a deadline at or
    /// before `d` hold at least `units` units (`None` if all hold fewer).
    fn reaching(&self, units: u64) -> Option<u64>;
    /// The latest deadline of a lease other than `except`.
    fn last_deadline(&self, except: Option<&LeaseId>) -> Option<u64>;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Caller-owned storage of a lease set: a [`LeaseRead`] that
/// [`LeaseChange::apply`] can change.
pub trait LeaseStore: LeaseRead {
    fn set_header(&mut self, header: LeaseHeader);
    /// Removes the `k` first leases in order.
    fn drop_first(&mut self, k: usize);
    /// Removes the lease with this id, if any.
    fn remove(&mut self, id: &LeaseId);
    /// Adds a lease whose id the store does not hold (the caller has made room).
    fn insert(&mut self, lease: &Lease);
    /// Sets the deadline and lease_ms of the lease with this id, if any.
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64);
    /// Every lease whose start is after `t` gets the deadline `t + lease_ms`.
    fn clamp(&mut self, t_ns: u64);
}

/// Why a change is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseChangeKind {
    /// An allowed `RL.ACQUIRE` (a new lease, or the renewal of a live lease
    /// named by `ID`).
    Acquire,
    /// `RL.RENEW` answering 1.
    Renew,
    /// `RL.RELEASE` answering 1.
    Release,
    /// Nothing consumed, but a lease's deadline lay further than its own
    /// `lease_ms` from now (the clock went back): the shortened set is stored.
    Repair,
}

/// The one lease a change adds, renews or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseOp {
    None,
    Add(Lease),
    Renew { id: LeaseId, deadline_ns: u64, lease_ms: u64 },
    Release(LeaseId),
}

/// The change a call makes to the stored set: constant size (at most one
/// 128-byte id), whatever the set holds. Applied in this order by
/// [`apply`](Self::apply):
/// 1. `clamp_at_ns = Some(t)`: every lease whose start is after `t` gets the
///    deadline `t + lease_ms` (a clock repair);
/// 2. drop the `drop` first leases in order (the expired ones: deadline at or
///    before now, the earliest of the order);
/// 3. `op`: add a lease (replacing one with its id, if any), renew or end one;
/// 4. store `header`.
///
/// When `delete` is set the set holds nothing after the call and the key is
/// deleted instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseChange {
    pub kind: LeaseChangeKind,
    pub clamp_at_ns: Option<u64>,
    pub drop: usize,
    pub op: LeaseOp,
    pub header: LeaseHeader,
    /// The absolute time (ms since the epoch, rounded up) the last lease
    /// expires: the key's expiry. 0 when `delete`.
    pub expire_at_ms: u64,
    pub delete: bool,
}

/// The words of an encoded [`LeaseChange`].
pub const LEASE_CHANGE_WORDS: usize = 13 + MAX_ID_WORDS;

impl LeaseChange {
    /// How many leases a store of `before` leases holds after the change,
    /// at most (an added lease that replaces one of its id counts as one more).
    pub fn len_after(&self, before: usize) -> usize {
        let left = before.saturating_sub(self.drop);
        match self.op {
            LeaseOp::Add(_) => left + 1,
            LeaseOp::Release(_) => left.saturating_sub(1),
            _ => left,
        }
    }

    /// The words of the longest id the change writes into a slot (0: none).
    pub fn id_words(&self) -> usize {
        match self.op {
            LeaseOp::Add(l) => l.id.words_needed(),
            _ => 0,
        }
    }

    /// Whether the change can apply to `store`: what a replica checks before
    /// applying a change it received. (A [`LeaseBlock`] must also have room:
    /// [`LeaseBlock::needs_room`].)
    pub fn fits<S: LeaseRead>(&self, store: &S) -> bool {
        let n = store.len();
        let present = |id: &LeaseId| store.deadline_of(id).is_some();
        self.drop <= n
            && self.len_after(n) as u64 <= MAX_LEASE_LIMIT
            && match self.op {
                LeaseOp::Renew { ref id, .. } | LeaseOp::Release(ref id) => present(id),
                _ => true,
            }
    }

    /// The change as [`LEASE_CHANGE_WORDS`] words, for an effect payload:
    /// `kind, clamp (0/1), clamp_at_ns, drop, op (0 none, 1 add, 2 renew,
    /// 3 release), deadline_ns, lease_ms, units, id_len, id words (16),
    /// next_seq, last_ns, expire_at_ms, delete`.
    pub fn to_words(&self) -> [u64; LEASE_CHANGE_WORDS] {
        let kind = match self.kind {
            LeaseChangeKind::Acquire => 0,
            LeaseChangeKind::Renew => 1,
            LeaseChangeKind::Release => 2,
            LeaseChangeKind::Repair => 3,
        };
        let (op, deadline, lease_ms, units, id) = match self.op {
            LeaseOp::None => (0, 0, 0, 0, None),
            LeaseOp::Add(l) => (1, l.deadline_ns, l.lease_ms, l.units, Some(l.id)),
            LeaseOp::Renew { id, deadline_ns, lease_ms } => (2, deadline_ns, lease_ms, 0, Some(id)),
            LeaseOp::Release(id) => (3, 0, 0, 0, Some(id)),
        };
        let mut w = [0u64; LEASE_CHANGE_WORDS];
        w[..9].copy_from_slice(&[
            kind,
            u64::from(self.clamp_at_ns.is_some()),
            self.clamp_at_ns.unwrap_or(0),
            self.drop as u64,
            op,
            deadline,
            lease_ms,
            units,
            id.map_or(0, |i| i.len() as u64),
        ]);
        if let Some(id) = id {
            w[9..9 + MAX_ID_WORDS].copy_from_slice(&id.words());
        }
        let t = 9 + MAX_ID_WORDS;
        w[t..].copy_from_slice(&[self.header.next_seq, self.header.last_ns, self.expire_at_ms, u64::from(self.delete)]);
        w
    }

    /// A change read back from [`to_words`](Self::to_words); `None` if a
    /// word is out of its range (a lease out of range, an id of a bad length
    /// or with bytes past its length, a drop count above the limit cap, a
    /// deadline set later than the header's `last_ns`).
    pub fn from_words(w: &[u64; LEASE_CHANGE_WORDS]) -> Option<Self> {
        let kind = match w[0] {
            0 => LeaseChangeKind::Acquire,
            1 => LeaseChangeKind::Renew,
            2 => LeaseChangeKind::Release,
            3 => LeaseChangeKind::Repair,
            _ => return None,
        };
        let clamp_at_ns = match (w[1], w[2]) {
            (0, 0) => None,
            (1, t) => Some(t),
            _ => return None,
        };
        let drop = usize::try_from(w[3]).ok().filter(|&d| d as u64 <= MAX_LEASE_LIMIT)?;
        let t = 9 + MAX_ID_WORDS;
        let header = LeaseHeader { next_seq: w[t], last_ns: w[t + 1] };
        let id = || LeaseId::from_words(w[8], &w[9..9 + MAX_ID_WORDS]);
        let started_by = |deadline_ns: u64, lease_ms: u64| {
            let l = Lease { id: LeaseId { len: 1, bytes: [0; MAX_ID_LEN] }, deadline_ns, lease_ms, units: 1 };
            l.in_range() && l.start_ns() <= header.last_ns
        };
        let op = match w[4] {
            0 if w[5..9 + MAX_ID_WORDS].iter().all(|&x| x == 0) => LeaseOp::None,
            1 => {
                let l = Lease { id: id()?, deadline_ns: w[5], lease_ms: w[6], units: w[7] };
                if !l.in_range() || l.start_ns() > header.last_ns {
                    return None;
                }
                LeaseOp::Add(l)
            }
            2 if w[7] == 0 && started_by(w[5], w[6]) => LeaseOp::Renew { id: id()?, deadline_ns: w[5], lease_ms: w[6] },
            3 if w[5..8].iter().all(|&x| x == 0) => LeaseOp::Release(id()?),
            _ => return None,
        };
        if clamp_at_ns.is_some_and(|c| c > header.last_ns) {
            return None;
        }
        Some(Self {
            kind,
            clamp_at_ns,
            drop,
            op,
            header,
            expire_at_ms: w[t + 2],
            delete: match w[t + 3] {
                0 => false,
                1 => true,
                _ => return None,
            },
        })
    }

    /// Applies the change to the store it was computed from (or to a copy of
    /// the same set). A lease the change names but the store lacks is
    /// skipped, never a panic.
    pub fn apply<S: LeaseStore>(&self, store: &mut S) {
        if let Some(t) = self.clamp_at_ns {
            store.clamp(t);
        }
        store.drop_first(self.drop.min(store.len()));
        match self.op {
            LeaseOp::None => {}
            LeaseOp::Add(ref l) => {
                store.remove(&l.id);
                store.insert(l);
            }
            LeaseOp::Renew { ref id, deadline_ns, lease_ms } => store.renew(id, deadline_ns, lease_ms),
            LeaseOp::Release(ref id) => store.remove(id),
        }
        store.set_header(self.header);
    }
}

/// The reply to `RL.ACQUIRE` and the change to store if the call writes
/// (`None`: it writes nothing). A PEEK computes the same and applies nothing
/// (and answers the lease nil).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireOutcome {
    pub decision: Decision,
    /// The lease id to answer: the new lease's, or the renewed one's; `None`
    /// when not allowed and for COST 0.
    pub lease: Option<LeaseId>,
    pub change: Option<LeaseChange>,
}

/// The reply to `RL.RELEASE` / `RL.RENEW` (1 or 0) and the change to store
/// (`Some` exactly when it answers 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseReply {
    pub ok: bool,
    pub change: Option<LeaseChange>,
}

/// `RL.ACQUIRE key limit lease_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leases {
    limit: u64,
    lease_ms: u64,
}

/// A stored set as a call reads it at `now`.
struct Reading<'a, S: LeaseRead> {
    store: Option<&'a S>,
    now: u64,
    header: LeaseHeader,
    /// The units of the expired leases (deadline <= now) and of the live ones.
    expired: u64,
    live: u64,
    /// Some lease may start after now: read by a scan.
    jumped: bool,
}

impl<'a, S: LeaseRead> Reading<'a, S> {
    fn of(store: Option<&'a S>, now: u64, seed: u64) -> Self {
        match store {
            None => Self {
                store,
                now,
                header: LeaseHeader { next_seq: seed, last_ns: 0 },
                expired: 0,
                live: 0,
                jumped: false,
            },
            Some(s) => {
                let total = s.units();
                let expired = s.units_through(now).min(total);
                let header = s.header();
                Self { store, now, header, expired, live: total - expired, jumped: header.last_ns > now }
            }
        }
    }

    /// Whether a live lease has this id.
    fn live(&self, id: &LeaseId) -> bool {
        self.store.and_then(|s| s.deadline_of(id)).is_some_and(|d| d > self.now)
    }

    /// Scans the live leases (for a jumped store).
    fn scan(&self, mut f: impl FnMut(&Lease)) {
        if let Some(s) = self.store {
            for i in 0..s.len() {
                let l = s.get(i);
                if l.deadline_ns > self.now {
                    f(&l);
                }
            }
        }
    }

    /// Whether a live lease reads shorter than stored (a repair to store).
    fn shortens(&self) -> bool {
        let mut any = false;
        if self.jumped {
            self.scan(|l| any |= l.start_ns() > self.now);
        }
        any
    }

    /// The last deadline, as read, of the live leases other than `except`.
    fn last(&self, except: Option<&LeaseId>) -> Option<u64> {
        let s = self.store?;
        if !self.jumped {
            return s.last_deadline(except).filter(|&d| d > self.now);
        }
        let mut last = None;
        self.scan(|l| {
            if except != Some(&l.id) {
                last = last.max(Some(l.deadline_at(self.now)));
            }
        });
        last
    }

    /// The least whole ms after which `need` (>= 1, at most the live units)
    /// live units have expired, as read.
    fn wait_ms(&self, need: u64) -> i64 {
        let ms = |d: u64| i64::try_from((d.saturating_sub(self.now)).div_ceil(NS_PER_MS)).unwrap_or(i64::MAX);
        let Some(s) = self.store else { return 0 };
        if !self.jumped {
            return s.reaching(self.expired + need).map_or(0, ms);
        }
        // Read by a scan: the least r with `need` units expired at now + r ms,
        // by bisection over r (every live lease expires within 10^12 ms).
        let freed = |r: u64| {
            let t = self.now.saturating_add(r * NS_PER_MS);
            let mut u = 0u64;
            self.scan(|l| {
                if l.deadline_at(self.now) <= t {
                    u += l.units;
                }
            });
            u >= need
        };
        let (mut lo, mut hi) = (1u64, MAX_LEASE_MS);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if freed(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo as i64
    }

    /// The change that drops the expired leases, repairs a jump, does `op`
    /// (setting a deadline at now when it adds or renews); `reset` gets the
    /// reply's reset time after it. (Inlined, and the reset an out
    /// parameter, so the change is built where the caller keeps it rather
    /// than copied there: it holds an id of up to 128 bytes.)
    #[inline(always)]
    fn write(&self, kind: LeaseChangeKind, op: LeaseOp, next_seq: u64, reset: &mut u64) -> LeaseChange {
        let (except, set) = match op {
            LeaseOp::None => (None, None),
            LeaseOp::Add(ref l) => (Some(&l.id), Some(l.deadline_ns)),
            LeaseOp::Renew { ref id, deadline_ns, .. } => (Some(id), Some(deadline_ns)),
            LeaseOp::Release(ref id) => (Some(id), None),
        };
        let mut c = self.write_around(kind, except, set, next_seq, reset);
        c.op = op;
        c
    }

    /// [`write`](Self::write) with the op left `None`, for an op on the
    /// lease `except` that sets the deadline `set` (if any): the caller sets
    /// the op in place (an added lease is copied once, into the change).
    #[inline(always)]
    fn write_around(
        &self,
        kind: LeaseChangeKind,
        except: Option<&LeaseId>,
        set: Option<u64>,
        next_seq: u64,
        reset: &mut u64,
    ) -> LeaseChange {
        let now = self.now;
        // Every lease holds at least one unit: no expired units, no walk.
        let drop = match self.store {
            Some(s) if self.expired > 0 => s.count_through(now),
            _ => 0,
        };
        let last = self.last(except).max(set);
        let last_ns = if self.jumped {
            now
        } else if set.is_some() {
            self.header.last_ns.max(now)
        } else {
            self.header.last_ns
        };
        *reset = reset_ms(last, now);
        LeaseChange {
            kind,
            clamp_at_ns: self.jumped.then_some(now),
            drop,
            op: LeaseOp::None,
            header: LeaseHeader { next_seq, last_ns },
            expire_at_ms: last.map_or(0, |d| d.div_ceil(NS_PER_MS)),
            delete: last.is_none(),
        }
    }
}

fn reset_ms(last: Option<u64>, now: u64) -> u64 {
    last.map_or(0, |d| d.saturating_sub(now).div_ceil(NS_PER_MS))
}

/// Writes `<now_ms>-<seq>` in ASCII decimal (at most 41 bytes).
fn generated_id(now_ns: u64, seq: u64) -> LeaseId {
    let mut id = LeaseId { len: 0, bytes: [0; MAX_ID_LEN] };
    let mut at = 0;
    for (k, mut x) in [now_ns / NS_PER_MS, seq].into_iter().enumerate() {
        if k == 1 {
            id.bytes[at] = b'-';
            at += 1;
        }
        let n = decimal_len(x);
        for j in (0..n).rev() {
            id.bytes[at + j] = b'0' + (x % 10) as u8;
            x /= 10;
        }
        at += n;
    }
    id.len = at as u8;
    id
}

fn decimal_len(mut x: u64) -> usize {
    let mut n = 1;
    while x >= 10 {
        x /= 10;
        n += 1;
    }
    n
}

impl Leases {
    /// `limit` in 1..=100,000, `lease_ms` in 1..=10^12.
    pub fn new(limit: u64, lease_ms: u64) -> Result<Self, ParamError> {
        if !(1..=MAX_LEASE_LIMIT).contains(&limit) {
            return Err(ParamError { arg: "limit", reason: "out of range" });
        }
        check_lease_ms(lease_ms)?;
        Ok(Self { limit, lease_ms })
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// `RL.ACQUIRE key limit lease_ms [COST cost] [ID id]` at `now_ns` on
    /// `store` (`None`: the key is missing). `seed` starts the sequence of
    /// generated ids when this call creates the key (see the module docs).
    pub fn acquire<S: LeaseRead>(
        &self,
        store: Option<&S>,
        now_ns: u64,
        cost: u64,
        id: Option<&LeaseId>,
        seed: u64,
    ) -> AcquireOutcome {
        let r = Reading::of(store, now_ns, seed);
        let limit = self.limit;
        let deadline = now_ns.saturating_add(self.lease_ms * NS_PER_MS);
        let decision = |allowed: bool, live: u64, retry: i64, reset: u64| Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(live),
            retry_after_ms: retry,
            reset_after_ms: reset,
        };
        // A call that writes nothing of its own: a repair at most.
        let read_only = |allowed: bool, retry: i64| {
            let mut reset = 0;
            let change = if r.shortens() {
                Some(r.write(LeaseChangeKind::Repair, LeaseOp::None, r.header.next_seq, &mut reset))
            } else {
                reset = reset_ms(r.last(None), now_ns);
                None
            };
            AcquireOutcome { decision: decision(allowed, r.live, retry, reset), lease: None, change }
        };
        if cost == 0 {
            return read_only(true, 0);
        }
        if let Some(id) = id.filter(|id| r.live(id)) {
            let op = LeaseOp::Renew { id: *id, deadline_ns: deadline, lease_ms: self.lease_ms };
            let mut reset = 0;
            let change = Some(r.write(LeaseChangeKind::Acquire, op, r.header.next_seq, &mut reset));
            return AcquireOutcome { decision: decision(true, r.live, 0, reset), lease: Some(*id), change };
        }
        if cost > limit {
            return read_only(false, -1);
        }
        if r.live + cost > limit {
            return read_only(false, r.wait_ms(r.live + cost - limit));
        }
        let generated;
        let (new_id, next_seq) = match id {
            Some(id) => (id, r.header.next_seq),
            None => {
                // Skips a sequence number whose id a live client-named lease
                // holds: at most one step per live lease.
                let mut seq = r.header.next_seq;
                let mut id = generated_id(now_ns, seq);
                for _ in 0..=store.map_or(0, |s| s.len()) {
                    if !r.live(&id) {
                        break;
                    }
                    seq = seq.wrapping_add(1);
                    id = generated_id(now_ns, seq);
                }
                generated = id;
                (&generated, seq.wrapping_add(1))
            }
        };
        let mut reset = 0;
        let mut change =
            Some(r.write_around(LeaseChangeKind::Acquire, Some(new_id), Some(deadline), next_seq, &mut reset));
        if let Some(c) = &mut change {
            c.op = LeaseOp::Add(Lease { id: *new_id, deadline_ns: deadline, lease_ms: self.lease_ms, units: cost });
        }
        AcquireOutcome { decision: decision(true, r.live + cost, 0, reset), lease: Some(*new_id), change }
    }

    /// `RL.RELEASE key id`: ends a live lease (1), else 0 and no write.
    /// Ending the last live lease deletes the key (`change.delete`).
    pub fn release<S: LeaseRead>(store: Option<&S>, now_ns: u64, id: &LeaseId) -> LeaseReply {
        let r = Reading::of(store, now_ns, 0);
        match r.live(id) {
            false => LeaseReply { ok: false, change: None },
            true => {
                let change = Some(r.write(LeaseChangeKind::Release, LeaseOp::Release(*id), r.header.next_seq, &mut 0));
                LeaseReply { ok: true, change }
            }
        }
    }

    /// `RL.RENEW key id lease_ms`: a live lease gets the deadline
    /// `now + lease_ms` (1), else 0 and no write. `lease_ms` in 1..=10^12.
    pub fn renew<S: LeaseRead>(
        store: Option<&S>,
        now_ns: u64,
        id: &LeaseId,
        lease_ms: u64,
    ) -> Result<LeaseReply, ParamError> {
        check_lease_ms(lease_ms)?;
        let r = Reading::of(store, now_ns, 0);
        Ok(match r.live(id) {
            false => LeaseReply { ok: false, change: None },
            true => {
                let deadline_ns = now_ns.saturating_add(lease_ms * NS_PER_MS);
                let op = LeaseOp::Renew { id: *id, deadline_ns, lease_ms };
                let change = Some(r.write(LeaseChangeKind::Renew, op, r.header.next_seq, &mut 0));
                LeaseReply { ok: true, change }
            }
        })
    }
}

fn check_lease_ms(lease_ms: u64) -> Result<(), ParamError> {
    if (1..=MAX_LEASE_MS).contains(&lease_ms) {
        Ok(())
    } else {
        Err(ParamError { arg: "lease_ms", reason: "out of range" })
    }
}

// ---------------------------------------------------------------------------
// The reference store.

/// A set in a `Vec` sorted by `(deadline, id)`: the reference
/// [`LeaseStore`], for tests and benchmarks. O(n) writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseVec {
    header: LeaseHeader,
    leases: Vec<Lease>,
}

impl LeaseVec {
    pub fn new() -> Self {
        Self { header: LeaseHeader { next_seq: 0, last_ns: 0 }, leases: Vec::new() }
    }

    /// The leases in order.
    pub fn leases(&self) -> &[Lease] {
        &self.leases
    }

    fn place(&self, l: &Lease) -> usize {
        self.leases.partition_point(|x| x.order(l) == Ordering::Less)
    }
}

impl Default for LeaseVec {
    fn default() -> Self {
        Self::new()
    }
}

impl LeaseRead for LeaseVec {
    fn len(&self) -> usize {
        self.leases.len()
    }
    fn header(&self) -> LeaseHeader {
        self.header
    }
    fn get(&self, i: usize) -> Lease {
        self.leases[i]
    }
    fn find(&self, id: &LeaseId) -> Option<Lease> {
        self.leases.iter().find(|l| l.id == *id).copied()
    }
    fn units_through(&self, t_ns: u64) -> u64 {
        self.leases.iter().filter(|l| l.deadline_ns <= t_ns).map(|l| l.units).sum()
    }
    fn units(&self) -> u64 {
        self.leases.iter().map(|l| l.units).sum()
    }
    fn count_through(&self, t_ns: u64) -> usize {
        self.leases.iter().filter(|l| l.deadline_ns <= t_ns).count()
    }
    fn reaching(&self, units: u64) -> Option<u64> {
        let mut sum = 0;
        self.leases
            .iter()
            .find(|l| {
                sum += l.units;
                sum >= units
            })
            .map(|l| l.deadline_ns)
    }
    fn last_deadline(&self, except: Option<&LeaseId>) -> Option<u64> {
        self.leases.iter().rev().find(|l| Some(&l.id) != except).map(|l| l.deadline_ns)
    }
}

impl LeaseStore for LeaseVec {
    fn set_header(&mut self, header: LeaseHeader) {
        self.header = header;
    }
    fn drop_first(&mut self, k: usize) {
        self.leases.drain(..k.min(self.leases.len()));
    }
    fn remove(&mut self, id: &LeaseId) {
        self.leases.retain(|l| l.id != *id);
    }
    fn insert(&mut self, lease: &Lease) {
        let at = self.place(lease);
        self.leases.insert(at, *lease);
    }
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64) {
        if let Some(mut l) = self.find(id) {
            self.remove(id);
            l.deadline_ns = deadline_ns;
            l.lease_ms = lease_ms;
            self.insert(&l);
        }
    }
    fn clamp(&mut self, t_ns: u64) {
        for l in &mut self.leases {
            if l.start_ns() > t_ns {
                l.deadline_ns = l.deadline_at(t_ns);
            }
        }
        self.leases.sort_by(|a, b| a.order(b));
    }
}

// ---------------------------------------------------------------------------
// The block of words.

/// Header words of a [`LeaseBlock`]: `len, id_words, root, next_seq, last_ns`.
pub const LEASE_BLOCK_HEADER_WORDS: usize = 5;
/// Fixed words per slot before its id.
const SLOT_FIXED: usize = 4;
/// No slot (a missing child, an empty tree).
const NIL: u32 = u32::MAX;
/// The most slots a block has (the first power of two above the limit cap).
pub const MAX_LEASE_CAPACITY: usize = 131_072;
/// The deepest an AVL tree of at most 131,072 nodes can be is 24; every
/// walk stops here, so a corrupted block can never loop or recurse deeply.
const MAX_DEPTH: usize = 64;

const LEASE_MS_BITS: u32 = 40;
const UNITS_BITS: u32 = 17;
const SUM_MASK: u64 = (1 << 56) - 1;

/// A lease set in a block of words the caller owns (the module's value
/// block), `words_for(capacity, id_words)` long:
///
/// - header: `len, id_words, root, next_seq, last_ns`;
/// - `capacity` slots of `4 + id_words` words, slots `0..len` in use:
///   `deadline_ns`; `lease_ms | units << 40 | (id_len - 1) << 57`;
///   `left | right << 32` (children in the tree, `u32::MAX` for none);
///   `subtree units | height << 56`; then the id, big-endian, zero-padded;
/// - the id index: `2 * capacity` entries of 32 bits (slot + 1, 0 empty),
///   two a word, open addressing with linear probing.
///
/// The slots form an AVL tree in `(deadline, id)` order. Ending a lease
/// moves the last slot into its place, so slots stay dense. `capacity` is a
/// power of two; the caller grows the block (doubling, and widening the id
/// words when a longer id arrives) with [`grow_into`](Self::grow_into) when
/// [`needs_room`](Self::needs_room) says so.
///
/// Bytes per lease (slot and index entries), at a full block: 8 * (5 +
/// id_words): 56 with generated ids of up to 16 bytes (2 id words), 64 up
/// to 24 bytes (all generated ids before the year 2286 with a sequence below
/// 10^9), 168 with 128-byte ids.
#[derive(Debug, Clone, Copy)]
pub struct LeaseBlock<W> {
    w: W,
    /// The id words of a slot and the capacity, read once by `open` (a
    /// block's layout never changes; growing makes a new block).
    idw: usize,
    cap: usize,
}

#[derive(Clone, Copy)]
struct Key {
    d: u64,
    id: [u64; MAX_ID_WORDS],
    len: u8,
}

impl Key {
    fn of(l: &Lease) -> Self {
        Self { d: l.deadline_ns, id: l.id.words(), len: l.id.len }
    }
}

fn hash_words(words: &[u64], len: u64) -> u64 {
    let mut h = len ^ 0x243f_6a88_85a3_08d3;
    for &w in words {
        h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    h ^ (h >> 32)
}

impl<W: Deref<Target = [u64]>> LeaseBlock<W> {
    /// The set already in `words`, if its layout fits the block (its length
    /// matches a power-of-two capacity, the length and root are in range).
    /// Check it with [`valid`](Self::valid) if it came from outside.
    pub fn open(words: W) -> Option<Self> {
        if words.len() < LEASE_BLOCK_HEADER_WORDS {
            return None;
        }
        let idw = usize::try_from(words[1]).ok().filter(|n| (1..=MAX_ID_WORDS).contains(n))?;
        let body = words.len() - LEASE_BLOCK_HEADER_WORDS;
        let per = SLOT_FIXED + idw + 1;
        let cap = body / per;
        let len = usize::try_from(words[0]).ok()?;
        let root = words[2];
        let fits = body % per == 0
            && cap.is_power_of_two()
            && cap <= MAX_LEASE_CAPACITY
            && len <= cap
            && if len == 0 { root == u64::from(NIL) } else { root < len as u64 };
        fits.then_some(Self { w: words, idw, cap })
    }

    /// Slots the block has room for.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The id words of a slot.
    pub fn id_words(&self) -> usize {
        self.idw
    }

    /// The layout a block needs before `change` applies to it, if it has
    /// not room enough: `(capacity, id_words)`, the capacity doubled (or
    /// more) and the id words widened to the new lease's id.
    pub fn needs_room(&self, change: &LeaseChange) -> Option<(usize, usize)> {
        let cap = self.capacity();
        let len = change.len_after(self.len());
        let idw = self.id_words().max(change.id_words());
        (len > cap || idw > self.id_words())
            .then(|| (if len > cap { (cap * 2).max(len.next_power_of_two()) } else { cap }, idw))
    }

    /// Copies the set into `dst`, of `words_for(capacity, id_words)` words
    /// with at least this block's capacity and id words, slots and tree as
    /// they are; the index is rebuilt. `None` (with `dst` unspecified) if
    /// `dst` does not fit.
    pub fn grow_into<'b>(&self, dst: &'b mut [u64], id_words: usize) -> Option<LeaseBlock<&'b mut [u64]>> {
        if id_words < self.id_words() {
            return None;
        }
        let mut to = LeaseBlock::init(dst, id_words, self.header())?;
        let n = self.len();
        if to.capacity() < n {
            return None;
        }
        for s in 0..n {
            let (from, at) = (self.base(s as u32), to.base(s as u32));
            to.w[at..at + SLOT_FIXED + self.id_words()]
                .copy_from_slice(&self.w[from..from + SLOT_FIXED + self.id_words()]);
        }
        to.w[0] = n as u64;
        to.w[2] = self.w[2];
        for s in 0..n as u32 {
            to.index_insert(s);
        }
        Some(to)
    }

    // -- Slots.

    fn root(&self) -> u32 {
        self.w[2] as u32
    }
    fn set_root(&mut self, r: u32)
    where
        W: DerefMut,
    {
        self.w[2] = u64::from(r);
    }
    fn base(&self, s: u32) -> usize {
        LEASE_BLOCK_HEADER_WORDS + s as usize * (SLOT_FIXED + self.id_words())
    }
    fn deadline(&self, s: u32) -> u64 {
        self.w[self.base(s)]
    }
    fn meta(&self, s: u32) -> u64 {
        self.w[self.base(s) + 1]
    }
    fn units_of(&self, s: u32) -> u64 {
        (self.meta(s) >> LEASE_MS_BITS) & ((1 << UNITS_BITS) - 1)
    }
    fn lease_ms_of(&self, s: u32) -> u64 {
        self.meta(s) & ((1 << LEASE_MS_BITS) - 1)
    }
    fn id_len(&self, s: u32) -> u64 {
        (self.meta(s) >> (LEASE_MS_BITS + UNITS_BITS)) + 1
    }
    fn id_slice(&self, s: u32) -> &[u64] {
        let at = self.base(s) + SLOT_FIXED;
        &self.w[at..at + self.id_words()]
    }
    fn kids(&self, s: u32) -> (u32, u32) {
        let k = self.w[self.base(s) + 2];
        (k as u32, (k >> 32) as u32)
    }
    fn set_kids(&mut self, s: u32, l: u32, r: u32)
    where
        W: DerefMut,
    {
        let at = self.base(s) + 2;
        self.w[at] = u64::from(l) | u64::from(r) << 32;
    }
    fn sum(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] & SUM_MASK
        }
    }
    fn height(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3] >> 56
        }
    }
    /// The word `subtree units | height << 56` of `s` (0 for no node).
    fn aug(&self, s: u32) -> u64 {
        if s == NIL {
            0
        } else {
            self.w[self.base(s) + 3]
        }
    }
    /// Sets the height and subtree units of `s` from its children's (`al`,
    /// `ar`: their [`aug`](Self::aug) words).
    fn fix_with(&mut self, s: u32, al: u64, ar: u64)
    where
        W: DerefMut,
    {
        let at = self.base(s);
        let h = 1 + (al >> 56).max(ar >> 56);
        let units = (self.w[at + 1] >> LEASE_MS_BITS) & ((1 << UNITS_BITS) - 1);
        let sum = units + (al & SUM_MASK) + (ar & SUM_MASK);
        self.w[at + 3] = (sum & SUM_MASK) | h << 56;
    }
    fn fix(&mut self, s: u32)
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(s);
        let (al, ar) = (self.aug(l), self.aug(r));
        self.fix_with(s, al, ar);
    }
    fn lease(&self, s: u32) -> Lease {
        let len = self.id_len(s);
        let id = LeaseId::from_words(len, self.id_slice(s)).unwrap_or(LeaseId { len: 1, bytes: [0; MAX_ID_LEN] });
        Lease { id, deadline_ns: self.deadline(s), lease_ms: self.lease_ms_of(s), units: self.units_of(s) }
    }
    fn key(&self, s: u32) -> Key {
        let mut id = [0u64; MAX_ID_WORDS];
        id[..self.id_words()].copy_from_slice(self.id_slice(s));
        Key { d: self.deadline(s), id, len: self.id_len(s) as u8 }
    }
    /// Slot `s`'s key against `k`.
    fn cmp(&self, s: u32, k: &Key) -> Ordering {
        self.deadline(s).cmp(&k.d).then_with(|| {
            let ids = self.id_slice(s);
            // Past both the slot's words and the key's id, every word is zero.
            let n = ids.len().max(usize::from(k.len).div_ceil(8)).min(MAX_ID_WORDS);
            for (j, &b) in k.id[..n].iter().enumerate() {
                let a = ids.get(j).copied().unwrap_or(0);
                if a != b {
                    return a.cmp(&b);
                }
            }
            self.id_len(s).cmp(&u64::from(k.len))
        })
    }
    fn same_id(&self, s: u32, k: &Key) -> bool {
        let ids = self.id_slice(s);
        // Past both the slot's words and the key's id, every word is zero.
        let n = ids.len().max(usize::from(k.len).div_ceil(8)).min(MAX_ID_WORDS);
        self.id_len(s) == u64::from(k.len)
            && k.id[..n].iter().enumerate().all(|(j, &b)| ids.get(j).copied().unwrap_or(0) == b)
    }
    /// Writes `l` into slot `s` (`words`: its id's, [`LeaseId::words`]).
    fn write_slot(&mut self, s: u32, l: &Lease, words: &[u64; MAX_ID_WORDS])
    where
        W: DerefMut,
    {
        let at = self.base(s);
        let idw = self.id_words();
        self.w[at] = l.deadline_ns;
        self.w[at + 1] = l.lease_ms | l.units << LEASE_MS_BITS | (l.id.len as u64 - 1) << (LEASE_MS_BITS + UNITS_BITS);
        self.w[at + SLOT_FIXED..at + SLOT_FIXED + idw].copy_from_slice(&words[..idw]);
    }

    // -- The tree (AVL, by key). Each recursion stops at MAX_DEPTH.

    fn rot_right(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if l == NIL {
            return n;
        }
        let (ll, lr) = self.kids(l);
        self.set_kids(n, lr, r);
        self.fix(n);
        self.set_kids(l, ll, n);
        self.fix(l);
        l
    }
    fn rot_left(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if r == NIL {
            return n;
        }
        let (rl, rr) = self.kids(r);
        self.set_kids(n, l, rl);
        self.fix(n);
        self.set_kids(r, n, rr);
        self.fix(r);
        r
    }
    /// `n` with its height and units set, rotated if its subtrees' heights
    /// differ by 2. (Inlined, the rotations apart: most calls on a walk
    /// find the node balanced.)
    #[inline(always)]
    fn balance(&mut self, n: u32) -> u32
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        let (al, ar) = (self.aug(l), self.aug(r));
        let (hl, hr) = (al >> 56, ar >> 56);
        if hl <= hr + 1 && hr <= hl + 1 {
            self.fix_with(n, al, ar);
            return n;
        }
        self.rotate(n, l, r, hl, hr)
    }
    /// `balance` for a node whose subtrees (`l`, `r`, of heights `hl`, `hr`)
    /// differ in height by 2.
    #[inline(never)]
    fn rotate(&mut self, n: u32, l: u32, r: u32, hl: u64, hr: u64) -> u32
    where
        W: DerefMut,
    {
        if hl > hr + 1 {
            let (ll, lr) = self.kids(l);
            if self.height(ll) < self.height(lr) {
                let l2 = self.rot_left(l);
                self.set_kids(n, l2, r);
            }
            return self.rot_right(n);
        }
        if hr > hl + 1 {
            let (rl, rr) = self.kids(r);
            if self.height(rr) < self.height(rl) {
                let r2 = self.rot_right(r);
                self.set_kids(n, l, r2);
            }
            return self.rot_left(n);
        }
        n
    }
    fn tree_insert(&mut self, n: u32, s: u32, k: &Key, depth: usize) -> u32
    where
        W: DerefMut,
    {
        if n == NIL {
            self.set_kids(s, NIL, NIL);
            self.fix(s);
            return s;
        }
        if depth > MAX_DEPTH {
            return n;
        }
        let (l, r) = self.kids(n);
        if self.cmp(n, k) == Ordering::Greater {
            let l2 = self.tree_insert(l, s, k, depth + 1);
            self.set_kids(n, l2, r);
        } else {
            let r2 = self.tree_insert(r, s, k, depth + 1);
            self.set_kids(n, l, r2);
        }
        self.balance(n)
    }
    /// Unlinks the first node of the subtree: (new subtree, the node).
    fn tree_remove_first(&mut self, n: u32, depth: usize) -> (u32, u32)
    where
        W: DerefMut,
    {
        let (l, r) = self.kids(n);
        if l == NIL || depth > MAX_DEPTH {
            return (r, n);
        }
        let (l2, m) = self.tree_remove_first(l, depth + 1);
        self.set_kids(n, l2, r);
        (self.balance(n), m)
    }
    /// Unlinks the node with key `k`.
    fn tree_remove(&mut self, n: u32, k: &Key, depth: usize) -> u32
    where
        W: DerefMut,
    {
        if n == NIL || depth > MAX_DEPTH {
            return n;
        }
        let (l, r) = self.kids(n);
        match self.cmp(n, k) {
            Ordering::Greater => {
                let l2 = self.tree_remove(l, k, depth + 1);
                self.set_kids(n, l2, r);
            }
            Ordering::Less => {
                let r2 = self.tree_remove(r, k, depth + 1);
                self.set_kids(n, l, r2);
            }
            Ordering::Equal => {
                if l == NIL {
                    return r;
                }
                if r == NIL {
                    return l;
                }
                let (r2, m) = self.tree_remove_first(r, depth + 1);
                self.set_kids(m, l, r2);
                return self.balance(m);
            }
        }
        self.balance(n)
    }
    /// The nodes of the subtree with a deadline at or before `t`.
    fn tree_count(&self, n: u32, t: u64, all: bool, depth: usize) -> usize {
        if n == NIL || depth > MAX_DEPTH {
            return 0;
        }
        let (l, r) = self.kids(n);
        if all || self.deadline(n) <= t {
            self.tree_count(l, t, true, depth + 1) + 1 + self.tree_count(r, t, all, depth + 1)
        } else {
            self.tree_count(l, t, false, depth + 1)
        }
    }

    // -- The id index.

    fn table(&self) -> usize {
        2 * self.capacity()
    }
    fn index_base(&self) -> usize {
        LEASE_BLOCK_HEADER_WORDS + self.capacity() * (SLOT_FIXED + self.id_words())
    }
    fn entry(&self, j: usize) -> u32 {
        (self.w[self.index_base() + j / 2] >> (32 * (j % 2))) as u32
    }
    fn set_entry(&mut self, j: usize, v: u32)
    where
        W: DerefMut,
    {
        let at = self.index_base() + j / 2;
        let shift = 32 * (j % 2);
        self.w[at] = (self.w[at] & !(0xffff_ffffu64 << shift)) | u64::from(v) << shift;
    }
    fn home_of(&self, s: u32) -> usize {
        let len = self.id_len(s);
        let n = (len as usize).div_ceil(8).min(self.id_words());
        hash_words(&self.id_slice(s)[..n], len) as usize & (self.table() - 1)
    }
    /// The index entry and slot of the id of `k`.
    fn index_find(&self, k: &Key) -> Option<(usize, u32)> {
        let mask = self.table() - 1;
        let n = (k.len as usize).div_ceil(8);
        let mut j = hash_words(&k.id[..n], u64::from(k.len)) as usize & mask;
        for _ in 0..self.table() {
            let v = self.entry(j);
            if v == 0 {
                return None;
            }
            let s = v - 1;
            if (s as usize) < self.len() && self.same_id(s, k) {
                return Some((j, s));
            }
            j = (j + 1) & mask;
        }
        None
    }
    fn index_insert(&mut self, s: u32)
    where
        W: DerefMut,
    {
        let mask = self.table() - 1;
        let mut j = self.home_of(s);
        for _ in 0..self.table() {
            if self.entry(j) == 0 {
                self.set_entry(j, s + 1);
                return;
            }
            j = (j + 1) & mask;
        }
    }
    /// Empties entry `j`, shifting back the entries after it that would no
    /// longer be found (linear probing needs no tombstones).
    fn index_remove(&mut self, j: usize)
    where
        W: DerefMut,
    {
        let mask = self.table() - 1;
        self.set_entry(j, 0);
        let mut hole = j;
        let mut k = (j + 1) & mask;
        for _ in 0..self.table() {
            let v = self.entry(k);
            if v == 0 || v as usize > self.len() {
                return;
            }
            let home = self.home_of(v - 1);
            if (k.wrapping_sub(home) & mask) >= (k.wrapping_sub(hole) & mask) {
                self.set_entry(hole, v);
                self.set_entry(k, 0);
                hole = k;
            }
            k = (k + 1) & mask;
        }
    }

    /// Removes slot `s`, already unlinked from the tree and the index: the
    /// last slot moves into its place.
    fn free_slot(&mut self, s: u32)
    where
        W: DerefMut,
    {
        let last = (self.len() - 1) as u32;
        if s != last {
            let k = self.key(last);
            let (from, to) = (self.base(last), self.base(s));
            let n = SLOT_FIXED + self.id_words();
            self.w.copy_within(from..from + n, to);
            // Its parent in the tree, then its index entry.
            if self.root() == last {
                self.set_root(s);
            } else {
                let mut n = self.root();
                for _ in 0..MAX_DEPTH {
                    if n == NIL {
                        break;
                    }
                    let (l, r) = self.kids(n);
                    let go_left = self.cmp(n, &k) == Ordering::Greater;
                    let next = if go_left { l } else { r };
                    if next == last {
                        if go_left {
                            self.set_kids(n, s, r);
                        } else {
                            self.set_kids(n, l, s);
                        }
                        break;
                    }
                    n = next;
                }
            }
            if let Some((j, _)) = self.index_find(&k) {
                self.set_entry(j, s + 1);
            }
        }
        self.w[0] -= 1;
    }

    /// Whether the block holds a set this core can have written: ids of 1
    /// to 128 bytes that fit the slots, zero-padded, distinct and found
    /// through the index; units, lease_ms and deadlines in range, no start
    /// after the header's `last_ns`; the tree holding every slot exactly
    /// once, in strictly increasing order, balanced, with correct heights
    /// and sums; the index holding exactly one entry per slot. O(n); never
    /// panics, whatever the words.
    pub fn valid(&self) -> bool {
        let n = self.len();
        if n as u64 > MAX_LEASE_LIMIT {
            return false;
        }
        let last_ns = self.w[4];
        for s in 0..n as u32 {
            let len = self.id_len(s) as usize;
            if len > 8 * self.id_words() {
                return false;
            }
            let l = self.lease(s);
            // `lease` reads a bad padding as another id: compare back.
            if l.id.len() != len || l.id.words()[..self.id_words()] != *self.id_slice(s) {
                return false;
            }
            if !l.in_range() || l.start_ns() > last_ns {
                return false;
            }
        }
        // The tree, in order.
        let mut seen = 0usize;
        let mut prev: Option<Key> = None;
        if self.valid_tree(self.root(), 0, &mut seen, &mut prev).is_none_or(|_| seen != n) {
            return false;
        }
        // The index: one entry per slot, each found from its home.
        let mut entries = 0;
        for j in 0..self.table() {
            let v = self.entry(j);
            if v != 0 {
                if v as usize > n {
                    return false;
                }
                entries += 1;
            }
        }
        entries == n && (0..n as u32).all(|s| self.index_find(&self.key(s)).is_some_and(|(_, t)| t == s))
    }

    /// Checks the subtree at `n` in order; its (height, sum) if sound.
    fn valid_tree(&self, n: u32, depth: usize, seen: &mut usize, prev: &mut Option<Key>) -> Option<(u64, u64)> {
        if n == NIL {
            return Some((0, 0));
        }
        if depth > MAX_DEPTH || n as usize >= self.len() || *seen >= self.len() {
            return None;
        }
        let (l, r) = self.kids(n);
        let (hl, sl) = self.valid_tree(l, depth + 1, seen, prev)?;
        if prev.is_some_and(|p| self.cmp(n, &p) != Ordering::Greater) {
            return None;
        }
        *prev = Some(self.key(n));
        *seen += 1;
        let (hr, sr) = self.valid_tree(r, depth + 1, seen, prev)?;
        let h = 1 + hl.max(hr);
        let sum = sl + sr + self.units_of(n);
        (hl.abs_diff(hr) <= 1 && self.height(n) == h && self.sum(n) == sum).then_some((h, sum))
    }

    /// The height of the tree (0 when empty): at most 1.44 log2(n + 2).
    pub fn tree_height(&self) -> u64 {
        self.height(self.root())
    }

    /// The leases in order.
    pub fn iter(&self) -> impl Iterator<Item = Lease> + '_ {
        InOrder { block: self, stack: [NIL; MAX_DEPTH], depth: 0, next: self.root() }
    }

    /// The whole set as words, for RDB and AOF rewrite: `len, next_seq,
    /// last_ns`, then per lease in order `deadline_ns, lease_ms, units,
    /// id_len` and its id words (big-endian, zero-padded, `ceil(id_len / 8)`).
    pub fn to_words(&self) -> impl Iterator<Item = u64> + '_ {
        let h = self.header();
        [self.len() as u64, h.next_seq, h.last_ns].into_iter().chain(self.iter().flat_map(|l| {
            let mut w = [0u64; 4 + MAX_ID_WORDS];
            w[..4].copy_from_slice(&[l.deadline_ns, l.lease_ms, l.units, l.id.len() as u64]);
            w[4..].copy_from_slice(&l.id.words());
            w.into_iter().take(4 + l.id.words_needed())
        }))
    }
}

impl<'a> LeaseBlock<&'a mut [u64]> {
    /// The words of a block of `capacity` slots (a power of two) for ids of
    /// up to `id_words` words.
    pub const fn words_for(capacity: usize, id_words: usize) -> usize {
        LEASE_BLOCK_HEADER_WORDS + capacity * (SLOT_FIXED + id_words + 1)
    }

    /// The layout of a new key's block for `change`: one slot, the id's words.
    pub fn first_layout(change: &LeaseChange) -> (usize, usize) {
        (change.len_after(0).max(1).next_power_of_two(), change.id_words().max(1))
    }

    /// The layout, `(capacity, id_words)`, of the block that
    /// [`from_words`](Self::from_words) fills from `words`; `None` if the
    /// count is above the limit cap (checked first: read the count and refuse
    /// it before collecting the rest) or the words are not one whole set.
    pub fn layout_of_words(words: &[u64]) -> Option<(usize, usize)> {
        let n = *words.first()?;
        if n > MAX_LEASE_LIMIT {
            return None;
        }
        let mut at = 3;
        let mut idw = 1;
        for _ in 0..n {
            let len = usize::try_from(*words.get(at + 3)?).ok().filter(|l| (1..=MAX_ID_LEN).contains(l))?;
            idw = idw.max(len.div_ceil(8));
            at += 4 + len.div_ceil(8);
        }
        (at == words.len()).then_some(((n as usize).max(1).next_power_of_two(), idw))
    }

    /// An empty set with `header` in `words` (of `words_for(capacity,
    /// id_words)` words, `capacity` a power of two, `id_words` 1 to 16).
    /// `None` if the length does not fit.
    pub fn init(words: &'a mut [u64], id_words: usize, header: LeaseHeader) -> Option<Self> {
        if words.len() < LEASE_BLOCK_HEADER_WORDS || !(1..=MAX_ID_WORDS).contains(&id_words) {
            return None;
        }
        words.fill(0);
        words[..LEASE_BLOCK_HEADER_WORDS].copy_from_slice(&[
            0,
            id_words as u64,
            u64::from(NIL),
            header.next_seq,
            header.last_ns,
        ]);
        Self::open(words)
    }

    /// The set in `words` (from [`to_words`](Self::to_words)) loaded into
    /// `dst`, of `words_for(layout_of_words(words))` words. `None` if
    /// anything is out of range, an id repeats, or the result is not
    /// [`valid`](Self::valid).
    pub fn from_words(dst: &'a mut [u64], words: &[u64]) -> Option<Self> {
        let (cap, idw) = LeaseBlock::layout_of_words(words)?;
        if dst.len() != LeaseBlock::words_for(cap, idw) {
            return None;
        }
        let header = LeaseHeader { next_seq: *words.get(1)?, last_ns: *words.get(2)? };
        let mut b = Self::init(dst, idw, header)?;
        let mut at = 3;
        for _ in 0..words[0] {
            let len = words[at + 3];
            let nw = (len as usize).div_ceil(8);
            let id = LeaseId::from_words(len, &words[at + 4..at + 4 + nw])?;
            let l = Lease { id, deadline_ns: words[at], lease_ms: words[at + 1], units: words[at + 2] };
            if !l.in_range() || b.find(&id).is_some() || b.len() >= b.capacity() {
                return None;
            }
            b.insert(&l);
            at += 4 + nw;
        }
        b.valid().then_some(b)
    }
}

struct InOrder<'b, W> {
    block: &'b LeaseBlock<W>,
    stack: [u32; MAX_DEPTH],
    depth: usize,
    next: u32,
}

impl<W: Deref<Target = [u64]>> Iterator for InOrder<'_, W> {
    type Item = Lease;
    fn next(&mut self) -> Option<Lease> {
        while self.next != NIL && self.depth < MAX_DEPTH {
            self.stack[self.depth] = self.next;
            self.depth += 1;
            self.next = self.block.kids(self.next).0;
        }
        if self.depth == 0 {
            return None;
        }
        self.depth -= 1;
        let n = self.stack[self.depth];
        self.next = self.block.kids(n).1;
        Some(self.block.lease(n))
    }
}

impl<W: Deref<Target = [u64]>> LeaseRead for LeaseBlock<W> {
    fn len(&self) -> usize {
        self.w[0] as usize
    }
    fn header(&self) -> LeaseHeader {
        LeaseHeader { next_seq: self.w[3], last_ns: self.w[4] }
    }
    fn get(&self, i: usize) -> Lease {
        self.lease(i as u32)
    }
    fn find(&self, id: &LeaseId) -> Option<Lease> {
        let k = Key { d: 0, id: id.words(), len: id.len };
        self.index_find(&k).map(|(_, s)| self.lease(s))
    }
    fn deadline_of(&self, id: &LeaseId) -> Option<u64> {
        let k = Key { d: 0, id: id.words(), len: id.len };
        self.index_find(&k).map(|(_, s)| self.deadline(s))
    }
    fn units_through(&self, t_ns: u64) -> u64 {
        let (mut n, mut acc) = (self.root(), 0);
        for _ in 0..MAX_DEPTH {
            if n == NIL {
                break;
            }
            let (l, r) = self.kids(n);
            if self.deadline(n) <= t_ns {
                acc += self.sum(l) + self.units_of(n);
                n = r;
            } else {
                n = l;
            }
        }
        acc
    }
    fn units(&self) -> u64 {
        self.sum(self.root())
    }
    fn count_through(&self, t_ns: u64) -> usize {
        self.tree_count(self.root(), t_ns, false, 0)
    }
    fn reaching(&self, mut units: u64) -> Option<u64> {
        let mut n = self.root();
        for _ in 0..MAX_DEPTH {
            if n == NIL {
                break;
            }
            let (l, r) = self.kids(n);
            let left = self.sum(l);
            if left >= units {
                n = l;
            } else if left + self.units_of(n) >= units {
                return Some(self.deadline(n));
            } else {
                units -= left + self.units_of(n);
                n = r;
            }
        }
        None
    }
    fn last_deadline(&self, except: Option<&LeaseId>) -> Option<u64> {
        // The last node, and the node before it on the way down (where the
        // walk last went right).
        let (mut n, mut above) = (self.root(), NIL);
        if n == NIL {
            return None;
        }
        for _ in 0..MAX_DEPTH {
            let r = self.kids(n).1;
            if r == NIL {
                break;
            }
            above = n;
            n = r;
        }
        let is_except = except.is_some_and(|id| self.same_id(n, &Key { d: 0, id: id.words(), len: id.len }));
        if !is_except {
            return Some(self.deadline(n));
        }
        // The one before the last: the last of its left subtree, else `above`.
        let mut m = self.kids(n).0;
        if m == NIL {
            return (above != NIL).then(|| self.deadline(above));
        }
        for _ in 0..MAX_DEPTH {
            let r = self.kids(m).1;
            if r == NIL {
                break;
            }
            m = r;
        }
        Some(self.deadline(m))
    }
}

impl<W: DerefMut<Target = [u64]>> LeaseStore for LeaseBlock<W> {
    fn set_header(&mut self, header: LeaseHeader) {
        self.w[3] = header.next_seq;
        self.w[4] = header.last_ns;
    }
    fn drop_first(&mut self, k: usize) {
        for _ in 0..k {
            let root = self.root();
            if root == NIL {
                return;
            }
            let (root, s) = self.tree_remove_first(root, 0);
            self.set_root(root);
            if let Some((j, _)) = self.index_find(&self.key(s)) {
                self.index_remove(j);
            }
            self.free_slot(s);
        }
    }
    fn remove(&mut self, id: &LeaseId) {
        let probe = Key { d: 0, id: id.words(), len: id.len };
        let Some((j, s)) = self.index_find(&probe) else { return };
        // The slot's id is the probe's (the index found it by that id).
        let k = Key { d: self.deadline(s), ..probe };
        let root = self.tree_remove(self.root(), &k, 0);
        self.set_root(root);
        self.index_remove(j);
        self.free_slot(s);
    }
    /// The caller has made room ([`LeaseBlock::needs_room`]); a lease that
    /// does not fit is dropped, never written out of bounds.
    fn insert(&mut self, lease: &Lease) {
        let s = self.len();
        if s >= self.capacity() || lease.id.words_needed() > self.id_words() || !lease.in_range() {
            debug_assert!(false, "a lease inserted without room");
            return;
        }
        let s = s as u32;
        let k = Key::of(lease);
        self.write_slot(s, lease, &k.id);
        self.w[0] += 1;
        let root = self.tree_insert(self.root(), s, &k, 0);
        self.set_root(root);
        self.index_insert(s);
    }
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64) {
        let probe = Key { d: 0, id: id.words(), len: id.len };
        let Some((_, s)) = self.index_find(&probe) else { return };
        // What `Lease::in_range` checks of the new fields (the units are the
        // slot's own).
        let units = self.units_of(s);
        if !(1..=MAX_LEASE_LIMIT).contains(&units)
            || !(1..=MAX_LEASE_MS).contains(&lease_ms)
            || deadline_ns < lease_ms * NS_PER_MS
        {
            return;
        }
        // The slot's id is the probe's (the index found it by that id).
        let mut k = Key { d: self.deadline(s), ..probe };
        let root = self.tree_remove(self.root(), &k, 0);
        let at = self.base(s);
        self.w[at] = deadline_ns;
        self.w[at + 1] = (self.w[at + 1] & !((1 << LEASE_MS_BITS) - 1)) | lease_ms;
        k.d = deadline_ns;
        let root = self.tree_insert(root, s, &k, 0);
        self.set_root(root);
    }
    fn clamp(&mut self, t_ns: u64) {
        for s in 0..self.len() as u32 {
            let mut l = self.lease(s);
            if l.start_ns() > t_ns {
                let root = self.tree_remove(self.root(), &self.key(s), 0);
                l.deadline_ns = l.deadline_at(t_ns);
                self.write_slot(s, &l, &l.id.words());
                let root = self.tree_insert(root, s, &Key::of(&l), 0);
                self.set_root(root);
            }
        }
    }
}
