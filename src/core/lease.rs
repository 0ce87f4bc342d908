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
//! expired lease it drops, and drops at most [`MAX_DROP`] (64): a mass
//! expiry is dropped by the calls that follow, 64 at a time, while the
//! expired leases left count nothing (the live units are the tree's sums
//! past now). Nothing here allocates.
//!
//! Clock jumps. A set has its own time: the header keeps the latest time
//! a call that set a deadline has read (`last_ns`: no lease starts after
//! it), and the set's time never goes back. A call at `now` before it (the
//! clock went back, or this node's clock is behind the one that wrote) reads
//! the set at `last_ns`, by the same descents, O(log n), and answers in
//! durations from there; on its own clock every deadline lies `shift =
//! last_ns - now` earlier. So no lease is live longer than its own
//! `lease_ms` from any call's reading (its start, moved back by the shift,
//! is at or before now), none is longer than it was when the set was last
//! written, and a lease that had expired by then stays expired. A call that
//! writes anyway, and a call other than PEEK that finds a live lease, stores
//! the set moved back onto its clock (a repair, `shift_ns`: one pass over
//! the slots' deadlines, which keeps their order, O(n) and no walk), after
//! which `last_ns` is now again.

//! Generated ids. Without `ID`, the lease is named `<now in ms>-<seq>`
//! (ASCII decimal, at most 41 bytes), where `seq` is the key's sequence
//! number, kept in the header and incremented by every generated id. A
//! generated id's sequence number is at least the caller's `floor`. Within a
//! key's life, ids never repeat (the sequence only grows, and a generated id
//! that happens to equal a live client-named lease's id is skipped). Across
//! a key's lives (the key is deleted when its last lease ends, and created
//! again later, or an older copy of it is restored) the floor keeps them
//! apart: the module passes the node's, which lies above every sequence
//! number any lease set on the node has reached (stored, applied from the
//! master, loaded, and kept across restarts in the RDB), so a key deleted
//! and created again in the same millisecond (or in one MULTI, where time
//! stands still) never hands out an id of its earlier life.

use std::cmp::Ordering;

use super::decision::{Decision, ParamError};
use super::time::expiry_ms;

pub use super::time::NS_PER_MS;
/// The largest `limit` (units held at once); also the most leases a set holds.
pub const MAX_LEASE_LIMIT: u64 = 100_000;
/// The longest `lease_ms` (10^12 ms, as for every window and period).
pub const MAX_LEASE_MS: u64 = super::time::MAX_PERIOD_MS;
/// The longest lease id, in bytes (ids are 1 to 128 bytes).
pub const MAX_ID_LEN: usize = 128;
/// The words of the longest id.
pub const MAX_ID_WORDS: usize = MAX_ID_LEN / 8;

/// A lease id: 1 to 128 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseId {
    pub(super) len: u8,
    pub(super) bytes: [u8; MAX_ID_LEN],
}

impl LeaseId {
    /// No id (length 0): a placeholder, overwritten before any use.
    pub(super) const EMPTY: Self = Self { len: 0, bytes: [0; MAX_ID_LEN] };

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
    pub(super) fn words(&self) -> [u64; MAX_ID_WORDS] {
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
    pub(super) fn from_words(len: u64, words: &[u64]) -> Option<Self> {
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

    /// Whether its fields are in range: units 1..=100,000, lease_ms
    /// 1..=10^12. (A stored deadline can lie before its own lease_ms: a
    /// repair moved it back, and its start reads as 0.)
    pub fn in_range(&self) -> bool {
        (1..=MAX_LEASE_LIMIT).contains(&self.units) && (1..=MAX_LEASE_MS).contains(&self.lease_ms)
    }

    /// Whether it is in range as a call sets it: also a deadline no earlier
    /// than its own lease_ms (set at a time `now >= 0`).
    pub fn set_in_range(&self) -> bool {
        self.in_range() && self.deadline_ns >= self.lease_ms * NS_PER_MS
    }

    pub(super) fn order(&self, other: &Lease) -> Ordering {
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
    /// How many leases have a deadline at or before `t`, counting no
    /// further than `at_most` (the work is bounded by it).
    fn count_through(&self, t_ns: u64, at_most: usize) -> usize;
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
    /// Adds a lease, in place of the lease of the same id if the store holds
    /// one (the caller has made room).
    fn insert(&mut self, lease: &Lease);
    /// Sets the deadline and lease_ms of the lease with this id, if any.
    fn renew(&mut self, id: &LeaseId, deadline_ns: u64, lease_ms: u64);
    /// Moves every deadline `d` back to `d - shift` (0 if that is below 0),
    /// keeping the order (leases that reach 0 order by id among themselves).
    fn shift_back(&mut self, shift_ns: u64);
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
    /// Nothing consumed, but the set's time was ahead of now (the clock went
    /// back): the set moved back onto the clock is stored.
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
/// 1. `shift_ns = Some(s)`: every deadline moves back by `s` (a clock
///    repair: the set's time was `s` ahead of now);
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
    pub shift_ns: Option<u64>,
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
    /// `kind, shift (0/1), shift_ns, drop, op (0 none, 1 add, 2 renew,
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
            u64::from(self.shift_ns.is_some()),
            self.shift_ns.unwrap_or(0),
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
        let shift_ns = match (w[1], w[2]) {
            (0, 0) => None,
            (1, s) if s > 0 => Some(s),
            _ => return None,
        };
        let drop = usize::try_from(w[3]).ok().filter(|&d| d as u64 <= MAX_LEASE_LIMIT)?;
        let t = 9 + MAX_ID_WORDS;
        let header = LeaseHeader { next_seq: w[t], last_ns: w[t + 1] };
        let id = || LeaseId::from_words(w[8], &w[9..9 + MAX_ID_WORDS]);
        let started_by = |deadline_ns: u64, lease_ms: u64| {
            let l = Lease { id: LeaseId { len: 1, bytes: [0; MAX_ID_LEN] }, deadline_ns, lease_ms, units: 1 };
            l.set_in_range() && l.start_ns() <= header.last_ns
        };
        let op = match w[4] {
            0 if w[5..9 + MAX_ID_WORDS].iter().all(|&x| x == 0) => LeaseOp::None,
            1 => {
                let l = Lease { id: id()?, deadline_ns: w[5], lease_ms: w[6], units: w[7] };
                if !l.set_in_range() || l.start_ns() > header.last_ns {
                    return None;
                }
                LeaseOp::Add(l)
            }
            2 if w[7] == 0 && started_by(w[5], w[6]) => LeaseOp::Renew { id: id()?, deadline_ns: w[5], lease_ms: w[6] },
            3 if w[5..8].iter().all(|&x| x == 0) => LeaseOp::Release(id()?),
            _ => return None,
        };
        Some(Self {
            kind,
            shift_ns,
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
    ///
    /// The header is the change's, but never below the store's where it
    /// bounds what the store holds: a replica whose set differs from its
    /// master's (a local write on a writable replica, a clock of its own, a
    /// forged stream) keeps `last_ns` at or after every lease's start (so
    /// its own loader accepts the set) and a sequence above its own ids. On
    /// the master, where the change was computed from this store, both are
    /// the change's: its `last_ns` only falls with a shift, by the shift
    /// (every start falls as much), and its sequence never falls.
    pub fn apply<S: LeaseStore>(&self, store: &mut S) {
        let before = store.header();
        let header = LeaseHeader {
            next_seq: self.header.next_seq.max(before.next_seq),
            last_ns: self.header.last_ns.max(before.last_ns.saturating_sub(self.shift_ns.unwrap_or(0))),
        };
        if let Some(s) = self.shift_ns {
            store.shift_back(s);
        }
        store.drop_first(self.drop.min(store.len()));
        match self.op {
            LeaseOp::None => {}
            LeaseOp::Add(ref l) => store.insert(l),
            LeaseOp::Renew { ref id, deadline_ns, lease_ms } => store.renew(id, deadline_ns, lease_ms),
            LeaseOp::Release(ref id) => store.remove(id),
        }
        store.set_header(header);
    }
}

/// The reply to `RL.ACQUIRE` and the change to store if the call writes
/// (`None`: it writes nothing). A PEEK computes the same and applies nothing
/// (and answers the lease nil).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireOutcome {
    pub decision: Decision,
    pub change: Option<LeaseChange>,
}

impl AcquireOutcome {
    /// The lease id to answer: the new lease's, or the renewed one's; `None`
    /// when not allowed and for COST 0 (the change adds or renews nothing).
    pub fn lease(&self) -> Option<LeaseId> {
        match self.change.as_ref()?.op {
            LeaseOp::Add(ref l) => Some(l.id),
            LeaseOp::Renew { id, .. } => Some(id),
            LeaseOp::None | LeaseOp::Release(_) => None,
        }
    }
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
    /// The set's own time: `now`, or the header's `last_ns` if that is later
    /// (the clock went back, or this node's clock is behind the one that
    /// wrote). The set is read at `at`, and its deadlines are moved back by
    /// `shift = at - now` onto the caller's clock.
    at: u64,
    shift: u64,
    header: LeaseHeader,
    /// The units of the expired leases (deadline <= at) and of the live ones.
    expired: u64,
    live: u64,
}

impl<'a, S: LeaseRead> Reading<'a, S> {
    fn of(store: Option<&'a S>, now: u64, seed: u64) -> Self {
        match store {
            None => Self {
                store,
                now,
                at: now,
                shift: 0,
                header: LeaseHeader { next_seq: seed, last_ns: 0 },
                expired: 0,
                live: 0,
            },
            Some(s) => {
                let header = s.header();
                let at = now.max(header.last_ns);
                let total = s.units();
                let expired = s.units_through(at).min(total);
                Self { store, now, at, shift: at - now, header, expired, live: total - expired }
            }
        }
    }

    /// Whether a live lease has this id.
    fn live(&self, id: &LeaseId) -> bool {
        self.store.and_then(|s| s.deadline_of(id)).is_some_and(|d| d > self.at)
    }

    /// Whether the set's time is ahead of now, with a live lease: its
    /// deadlines are to be moved back (a repair to store).
    fn shortens(&self) -> bool {
        self.shift > 0 && self.live > 0
    }

    /// The last deadline, on the caller's clock, of the live leases other
    /// than `except`.
    fn last(&self, except: Option<&LeaseId>) -> Option<u64> {
        let s = self.store?;
        s.last_deadline(except).filter(|&d| d > self.at).map(|d| d - self.shift)
    }

    /// The least whole ms after which `need` (>= 1, at most the live units)
    /// live units have expired.
    fn wait_ms(&self, need: u64) -> i64 {
        let ms = |d: u64| i64::try_from((d.saturating_sub(self.at)).div_ceil(NS_PER_MS)).unwrap_or(i64::MAX);
        let Some(s) = self.store else { return 0 };
        s.reaching(self.expired + need).map_or(0, ms)
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
        // At most MAX_DROP of them per call: a mass expiry is dropped by the
        // calls that follow, each bounded (the expired ones left count
        // nothing: live units are the tree's sums past now). Counted before
        // the shift, at `at`: the same leases as after it, at now.
        let drop = match self.store {
            Some(s) if self.expired > 0 => s.count_through(self.at, MAX_DROP),
            _ => 0,
        };
        let last = self.last(except).max(set);
        // After a shift every start is at or before now.
        let last_ns = if self.shift > 0 {
            now
        } else if set.is_some() {
            self.header.last_ns.max(now)
        } else {
            self.header.last_ns
        };
        *reset = reset_ms(last, now);
        LeaseChange {
            kind,
            shift_ns: (self.shift > 0).then_some(self.shift),
            drop,
            op: LeaseOp::None,
            header: LeaseHeader { next_seq, last_ns },
            expire_at_ms: last.map_or(0, expiry_ms),
            delete: last.is_none(),
        }
    }
}

/// The most expired leases one call drops.
pub const MAX_DROP: usize = 64;

fn reset_ms(last: Option<u64>, now: u64) -> u64 {
    last.map_or(0, |d| d.saturating_sub(now).div_ceil(NS_PER_MS))
}

/// Writes `<now_ms>-<seq>` in ASCII decimal (at most 41 bytes) into `id`,
/// two digits at a time from the end.
fn generated_id(id: &mut LeaseId, now_ns: u64, seq: u64) {
    let mut buf = [0u8; 41];
    let mut at = put_decimal(&mut buf, 41, seq);
    at -= 1;
    buf[at] = b'-';
    let at = put_decimal(&mut buf, at, now_ns / NS_PER_MS);
    // Past the new length, zero (every id has one encoding).
    id.bytes[..usize::from(id.len).max(48)].fill(0);
    id.bytes[..buf.len() - at].copy_from_slice(&buf[at..]);
    id.len = (buf.len() - at) as u8;
}

/// Writes `x` in decimal to end at `buf[end]` (exclusive); where it starts.
/// (`buf` has room: 20 digits before `end`.)
fn put_decimal(buf: &mut [u8; 41], end: usize, mut x: u64) -> usize {
    let mut at = end;
    while x >= 100 {
        let d = 2 * (x % 100) as usize;
        x /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if x >= 10 {
        let d = 2 * x as usize;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + x as u8;
    }
    at
}

/// The sequence numbers from which a generated id is looked up among the
/// live leases: a client-named id cannot move a key's sequence there.
const LOOKED_UP_FROM: u64 = 1 << 63;

/// The `seq` of an id of the form a generated one takes, `<digits>-<digits>`
/// (the second part at most `u64::MAX`); `None` for any other id.
fn generated_seq(id: &LeaseId) -> Option<u64> {
    let b = id.as_bytes();
    let dash = b.iter().position(|&c| c == b'-')?;
    let (ms, seq) = (&b[..dash], &b[dash + 1..]);
    if ms.is_empty() || !ms.iter().all(u8::is_ascii_digit) || seq.is_empty() || seq.len() > 20 {
        return None;
    }
    seq.iter().try_fold(0u64, |n, &c| {
        if c.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(c - b'0'))
        } else {
            None
        }
    })
}

/// "00" to "99".
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

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
    /// `store` (`None`: the key is missing). A generated id's sequence
    /// number is at least `floor` (see the module docs).
    pub fn acquire<S: LeaseRead>(
        &self,
        store: Option<&S>,
        now_ns: u64,
        cost: u64,
        id: Option<&LeaseId>,
        floor: u64,
    ) -> AcquireOutcome {
        let r = Reading::of(store, now_ns, floor);
        let limit = self.limit;
        let deadline = now_ns.saturating_add(self.lease_ms * NS_PER_MS);
        let decision = |allowed: bool, live: u64, retry: i64, reset: u64| Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(live),
            retry_after_ms: retry,
            reset_after_ms: reset,
            wait_ms: 0,
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
            AcquireOutcome { decision: decision(allowed, r.live, retry, reset), change }
        };
        if cost == 0 {
            return read_only(true, 0);
        }
        if let Some(id) = id.filter(|id| r.live(id)) {
            let op = LeaseOp::Renew { id: *id, deadline_ns: deadline, lease_ms: self.lease_ms };
            let mut reset = 0;
            let change = Some(r.write(LeaseChangeKind::Acquire, op, r.header.next_seq, &mut reset));
            return AcquireOutcome { decision: decision(true, r.live, 0, reset), change };
        }
        if cost > limit {
            return read_only(false, -1);
        }
        if r.live + cost > limit {
            return read_only(false, r.wait_ms(r.live + cost - limit));
        }
        let mut reset = 0;
        // The new id is not live (a live one renews, above), so no live
        // lease has it: the last deadline need not leave one out.
        let mut c = r.write_around(LeaseChangeKind::Acquire, None, Some(deadline), r.header.next_seq, &mut reset);
        // The lease is made where the change keeps it (an id is 129 bytes).
        c.op = LeaseOp::Add(Lease { id: LeaseId::EMPTY, deadline_ns: deadline, lease_ms: self.lease_ms, units: cost });
        if let LeaseOp::Add(l) = &mut c.op {
            match id {
                Some(id) => {
                    l.id = *id;
                    // An id of the generated form `<ms>-<seq>` moves the
                    // sequence past `seq`: no id generated later on this key
                    // can equal it (see below). A `seq` from LOOKED_UP_FROM
                    // on moves nothing: ids generated there are looked up.
                    if let Some(seq) = generated_seq(id).filter(|&s| s < LOOKED_UP_FROM) {
                        c.header.next_seq = c.header.next_seq.max(seq + 1);
                    }
                }
                None => {
                    // The floor moves no sequence into LOOKED_UP_FROM.
                    let mut seq = r.header.next_seq.max(floor.min(LOOKED_UP_FROM - 1));
                    generated_id(&mut l.id, now_ns, seq);
                    // Below LOOKED_UP_FROM no live lease has this id: each
                    // generated one had a smaller sequence number, and so has
                    // each client-named one of the generated form (above),
                    // so nothing is looked up. A sequence that has reached it
                    // (2^63 acquires, or a loaded set) stays there and looks
                    // instead: it skips a sequence number whose id a live
                    // lease holds, at most one step per live lease.
                    if seq < LOOKED_UP_FROM {
                        c.header.next_seq = seq + 1;
                    } else {
                        for _ in 0..=store.map_or(0, |s| s.len()) {
                            if !r.live(&l.id) {
                                break;
                            }
                            seq = seq.wrapping_add(1);
                            generated_id(&mut l.id, now_ns, seq);
                        }
                        c.header.next_seq = seq.wrapping_add(1).max(LOOKED_UP_FROM);
                    }
                }
            }
        }
        AcquireOutcome { decision: decision(true, r.live + cost, 0, reset), change: Some(c) }
    }

    /// The live units of `store` at `now` (read at the set's own time, as
    /// every call reads it), and whether a live lease has `id`.
    pub fn live<S: LeaseRead>(store: Option<&S>, now_ns: u64, id: Option<&LeaseId>) -> (u64, bool) {
        let r = Reading::of(store, now_ns, 0);
        (r.live, id.is_some_and(|id| r.live(id)))
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

pub use super::lease_block::{LeaseBlock, LEASE_BLOCK_HEADER_WORDS, MAX_LEASE_CAPACITY};
pub use super::lease_vec::LeaseVec;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_the_generated_form_give_their_sequence() {
        let seq = |s: &str| generated_seq(&LeaseId::new(s.as_bytes()).unwrap());
        assert_eq!(seq("1800000000000-5"), Some(5));
        assert_eq!(seq("0-0"), Some(0));
        assert_eq!(seq("1-007"), Some(7));
        assert_eq!(seq("1-18446744073709551615"), Some(u64::MAX));
        for other in ["1-18446744073709551616", "-5", "5-", "a-5", "1-5x", "1-5-6", "x", "15", "1--5", "1-+5"] {
            assert_eq!(seq(other), None, "{other}");
        }
    }

    #[test]
    fn generated_ids_are_ms_dash_seq_in_decimal() {
        let ms = [0, 1, 9, 10, 99, 100, 101, 999, 1000, 1_796_041_348_922, 9_999_999_999_999, u64::MAX / NS_PER_MS];
        let seqs = [0, 1, 9, 10, 11, 99, 100, 12_345, 999_999_999, 1_000_000_000, u64::MAX];
        for &m in &ms {
            for &q in &seqs {
                // Over a longer id, to see the bytes past the new one zeroed.
                let mut id = LeaseId::new(&[b'z'; 128]).unwrap();
                generated_id(&mut id, (m * NS_PER_MS).saturating_add(999_999), q);
                assert_eq!(id.as_bytes(), format!("{m}-{q}").as_bytes());
                assert!(id.bytes[id.len()..].iter().all(|&b| b == 0));
            }
        }
    }
}
