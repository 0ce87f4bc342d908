//! Exact sliding log (`RL.LOG`).
//!
//! The log keeps one entry per admitted instant: its time (ns since the
//! epoch) and the cost admitted then, oldest first, with entries of the same
//! instant merged. An entry is live at `now` while `t + window > now`, so the
//! live cost is exactly the cost admitted in `(now - window, now]`, and a
//! request of cost `c` is allowed when `live + c <= limit`: in every interval
//! of `window_ms`, whatever its placement, the admitted cost never exceeds
//! `limit` (no boundary burst, no estimate).
//!
//! The entries live in storage the caller owns (the module's word block, a
//! `VecDeque` in tests), behind [`LogStore`]. A call only reads it:
//! [`SlidingLog::check`] answers the [`Decision`] and, when the call writes,
//! a [`LogChange`] of constant size (entries dropped from the front, a cost
//! trimmed on the oldest or the newest entry, entries cut from the back, an
//! entry appended, the new header and expiry). The caller applies it with
//! [`LogChange::apply`] (not for PEEK) and propagates it as it is: never the
//! whole log.
//!
//! Work per call: two binary searches (the first live entry, the first entry
//! stamped after now) plus what the call drops, trims or, for a denial, the
//! oldest entries that must age out for the cost to fit (at most `cost`
//! entries). The header keeps the total cost of the stored entries, so the
//! live cost is the total minus what ages out. Nothing here allocates.
//!
//! How a stored log is read (SPEC `RL.LOG` and the conventions):
//! - entries stamped later than now (a backward clock jump) read as made now,
//!   merged into one entry at now;
//! - entries are live under the window of this call; a log written with
//!   another `window_ms` is re-read under the new one (it may count entries
//!   the old window had aged out but no write had dropped yet);
//! - a live cost above `limit` (a lowered limit) reads as the newest `limit`
//!   units: the oldest units beyond them are dropped, so the log reads as
//!   drained, never idle, and never holds more than `limit` entries.
//!
//! Each of those differences from the stored log is a repair: the result is
//! stored (unless PEEK) even by a call that consumes nothing.

use super::decision::{Decision, ParamError};
pub use super::log_ring::{LogBuf, LogRing, LOG_RING_HEADER_WORDS};
use super::time::expiry_ms;

pub use super::time::NS_PER_MS;

/// The largest `limit` of a log: memory grows with it (one entry per
/// admitted instant, at most `limit` live).
pub const MAX_LOG_LIMIT: u64 = 10_000;

/// The longest `window_ms` (10^12 ms, as for every window and period).
pub const MAX_LOG_WINDOW_MS: u64 = super::time::MAX_PERIOD_MS;

/// One admitted instant: its time in ns since the epoch and the cost
/// admitted then (>= 1). Two words when stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    pub t_ns: u64,
    pub cost: u64,
}

/// The fixed part of a log's state. Two words when stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHeader {
    /// The window the entries were last written with.
    pub window_ms: u64,
    /// The sum of the stored entries' costs.
    pub total: u64,
}

/// A log as a call reads it: a sequence of entries, oldest first, and a
/// header. [`SlidingLog::check`] only reads; [`LogStore`] adds the edits
/// [`LogChange::apply`] makes.
pub trait LogRead {
    /// The number of entries.
    fn len(&self) -> usize;
    /// Entry `i` (0 is the oldest); `i < len()`.
    fn get(&self, i: usize) -> LogEntry;
    fn header(&self) -> LogHeader;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Caller-owned storage of a log. The core only reads it in
/// [`SlidingLog::check`] and only changes it through [`LogChange::apply`],
/// with the operations below.
///
/// A ring of fixed-size entries (two words each) supports all of them in
/// O(1) per entry touched; `pop_front` must not move the entries that stay.
pub trait LogStore: LogRead {
    fn set_header(&mut self, header: LogHeader);
    /// Removes the `k` oldest entries (`k <= len()`).
    fn pop_front(&mut self, k: usize);
    /// Keeps the `len` oldest entries, removing the newer ones.
    fn truncate(&mut self, len: usize);
    /// Replaces entry `i`'s cost (`i < len()`).
    fn set_cost(&mut self, i: usize, cost: u64);
    /// Appends a newest entry (the core never appends past `limit` entries).
    fn push_back(&mut self, entry: LogEntry);
}

/// What a call asks of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogOp {
    /// `COST n` (0: a status query).
    Consume(u64),
    /// `REFUND n`: gives back the newest `n` units.
    Refund(u64),
}

/// Why a change is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// An allowed call consumed its cost.
    Consume,
    /// A refund.
    Refund,
    /// Nothing consumed, but the stored log differs from its reading (a
    /// clock jump, a changed window, a lowered limit): the reading is stored.
    Repair,
}

/// The change a call makes to the stored log: constant size, whatever the
/// log holds. Applied in this order by [`apply`](Self::apply):
/// 1. drop the `drop_front` oldest entries;
/// 2. set the (new) oldest entry's cost to `front_cost`;
/// 3. keep only the `keep` oldest entries of what is left;
/// 4. set the (new) newest entry's cost to `back_cost`;
/// 5. append `push`;
/// 6. store `header`.
///
/// When `delete` is set the log holds nothing after the call and the key is
/// deleted instead (steps 1 to 6 then leave an empty log). A missing key is
/// an empty store with any header: `drop_front` and `keep` are then 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogChange {
    pub kind: ChangeKind,
    pub drop_front: usize,
    pub front_cost: Option<u64>,
    pub keep: usize,
    pub back_cost: Option<u64>,
    pub push: Option<LogEntry>,
    pub header: LogHeader,
    /// The absolute time (ms since the epoch) the newest entry ages out: the
    /// key's expiry. 0 when `delete`.
    pub expire_at_ms: u64,
    pub delete: bool,
}

impl LogChange {
    /// How many entries the store holds after the change, if it held
    /// `before` entries (what the change was computed from): the room a
    /// fixed-capacity store must have before [`apply`](Self::apply).
    pub fn len_after(&self, before: usize) -> usize {
        before.saturating_sub(self.drop_front).min(self.keep) + usize::from(self.push.is_some())
    }

    /// Whether the change can apply to a store of `len` entries: what a
    /// replica checks before applying a change it received.
    pub fn fits(&self, len: usize) -> bool {
        self.drop_front <= len
            && self.keep <= len - self.drop_front
            && self.len_after(len) as u64 <= MAX_LOG_LIMIT
            && (self.front_cost.is_none() || len > self.drop_front)
            && (self.back_cost.is_none() || self.keep > 0)
    }

    /// Whether the change, applied to `store` (a log this core could have
    /// written), leaves one too: what a replica checks of a change from its
    /// master (or the AOF) before it applies it. The master computed it from
    /// its own log; a replica's log can differ (a local write on a writable
    /// replica, a clock of its own, a forged stream), and a change that does
    /// not fit it would leave a log its own loader refuses (entries out of
    /// order, a total other than their sum). O(entries removed).
    pub fn valid_on<S: LogRead>(&self, store: &S) -> bool {
        let n = store.len();
        if !self.fits(n) || !(1..=MAX_LOG_WINDOW_MS).contains(&self.header.window_ms) {
            return false;
        }
        let (first, end) = (self.drop_front, self.drop_front + self.keep);
        let cost_at = |i: usize| match self.front_cost {
            Some(c) if i == first => c,
            _ => store.get(i).cost,
        };
        // The stored total is the sum of its entries (the store is valid).
        let mut total = store.header().total;
        for i in 0..first {
            total = total.saturating_sub(store.get(i).cost);
        }
        if n > first {
            total = total.saturating_sub(store.get(first).cost).saturating_add(cost_at(first));
        }
        for i in end..n {
            total = total.saturating_sub(cost_at(i));
        }
        if let (Some(c), true) = (self.back_cost, end > first) {
            total = total.saturating_sub(cost_at(end - 1)).saturating_add(c);
        }
        if let Some(e) = self.push {
            if end > first && store.get(end - 1).t_ns >= e.t_ns {
                return false;
            }
            total = total.saturating_add(e.cost);
        }
        total == self.header.total && total <= MAX_LOG_LIMIT
    }

    /// The change as [`LOG_CHANGE_WORDS`] words, for an effect payload:
    /// `kind, drop_front, front_cost, keep, back_cost, push_t_ns, push_cost,
    /// window_ms, total, expire_at_ms, delete`, a cost of 0 meaning none
    /// (every cost the core writes is at least 1).
    pub fn to_words(&self) -> [u64; LOG_CHANGE_WORDS] {
        let kind = match self.kind {
            ChangeKind::Consume => 0,
            ChangeKind::Refund => 1,
            ChangeKind::Repair => 2,
        };
        let push = self.push.unwrap_or(LogEntry { t_ns: 0, cost: 0 });
        [
            kind,
            self.drop_front as u64,
            self.front_cost.unwrap_or(0),
            self.keep as u64,
            self.back_cost.unwrap_or(0),
            push.t_ns,
            push.cost,
            self.header.window_ms,
            self.header.total,
            self.expire_at_ms,
            u64::from(self.delete),
        ]
    }

    /// A change read back from [`to_words`](Self::to_words); `None` if a
    /// word is out of its range.
    pub fn from_words(w: &[u64; LOG_CHANGE_WORDS]) -> Option<Self> {
        let kind = match w[0] {
            0 => ChangeKind::Consume,
            1 => ChangeKind::Refund,
            2 => ChangeKind::Repair,
            _ => return None,
        };
        let count = |x: u64| usize::try_from(x).ok().filter(|&n| n as u64 <= MAX_LOG_LIMIT);
        let cost = |x: u64| (x != 0).then_some(x);
        Some(Self {
            kind,
            drop_front: count(w[1])?,
            front_cost: cost(w[2]),
            keep: count(w[3])?,
            back_cost: cost(w[4]),
            push: cost(w[6]).map(|cost| LogEntry { t_ns: w[5], cost }),
            header: LogHeader { window_ms: w[7], total: w[8] },
            expire_at_ms: w[9],
            delete: match w[10] {
                0 => false,
                1 => true,
                _ => return None,
            },
        })
    }

    /// Applies the change to the store it was computed from.
    pub fn apply<S: LogStore>(&self, store: &mut S) {
        store.pop_front(self.drop_front.min(store.len()));
        if let Some(c) = self.front_cost {
            if !store.is_empty() {
                store.set_cost(0, c);
            }
        }
        store.truncate(self.keep);
        if let Some(c) = self.back_cost {
            if let Some(last) = store.len().checked_sub(1) {
                store.set_cost(last, c);
            }
        }
        if let Some(e) = self.push {
            store.push_back(e);
        }
        store.set_header(self.header);
    }
}

/// The words of an encoded [`LogChange`].
pub const LOG_CHANGE_WORDS: usize = 11;

/// The reply, and the change to store if the call writes (`None`: it writes
/// nothing). A PEEK computes the same and applies nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOutcome {
    pub decision: Decision,
    pub change: Option<LogChange>,
}

/// `RL.LOG key limit window_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidingLog {
    limit: u64,
    window_ms: u64,
    window_ns: u64,
}

/// A stored log as this call reads it, described as edits of the store
/// (the same edits a [`LogChange`] carries), so reading copies nothing.
struct View<'a, S: LogRead> {
    store: Option<&'a S>,
    /// Stored entries `lo..hi` are kept.
    lo: usize,
    hi: usize,
    /// Overrides of the cost of entry `lo` and of entry `hi - 1` (the
    /// latter wins when they are one entry).
    front_cost: Option<u64>,
    back_cost: Option<u64>,
    /// An entry after the stored ones, the newest.
    pushed: Option<LogEntry>,
    /// The cost of everything the view holds.
    total: u64,
}

impl<S: LogRead> View<'_, S> {
    fn stored(&self, i: usize) -> LogEntry {
        match self.store {
            Some(s) => s.get(i),
            None => LogEntry { t_ns: 0, cost: 0 },
        }
    }

    fn kept(&self) -> usize {
        self.hi - self.lo
    }

    fn len(&self) -> usize {
        self.kept() + usize::from(self.pushed.is_some())
    }

    /// Entry `j` of the view (0 is the oldest).
    fn get(&self, j: usize) -> LogEntry {
        if j == self.kept() {
            if let Some(p) = self.pushed {
                return p;
            }
        }
        let i = self.lo + j;
        let mut e = self.stored(i);
        if i + 1 == self.hi && self.back_cost.is_some() {
            e.cost = self.back_cost.unwrap_or(e.cost);
        } else if i == self.lo && self.front_cost.is_some() {
            e.cost = self.front_cost.unwrap_or(e.cost);
        }
        e
    }

    fn newest(&self) -> Option<LogEntry> {
        self.len().checked_sub(1).map(|j| self.get(j))
    }

    /// Adds `cost` at `t` (no earlier than the newest entry), merged into
    /// the newest entry when it is of the same instant.
    fn add(&mut self, t_ns: u64, cost: u64) {
        self.total = self.total.saturating_add(cost);
        match self.pushed {
            Some(ref mut p) if p.t_ns == t_ns => p.cost = p.cost.saturating_add(cost),
            Some(_) => unreachable_push(),
            None if self.kept() > 0 && self.get(self.kept() - 1).t_ns == t_ns => {
                self.back_cost = Some(self.get(self.kept() - 1).cost.saturating_add(cost));
            }
            None => self.pushed = Some(LogEntry { t_ns, cost }),
        }
    }

    /// Removes the `units` oldest units (at most all).
    fn drop_oldest(&mut self, mut units: u64) {
        while units > 0 && self.len() > 0 {
            let oldest = self.get(0);
            if oldest.cost <= units {
                units -= oldest.cost;
                self.total = self.total.saturating_sub(oldest.cost);
                if self.kept() > 0 {
                    self.lo += 1;
                    self.front_cost = None;
                    if self.lo == self.hi {
                        self.back_cost = None;
                    }
                } else {
                    self.pushed = None;
                }
            } else {
                let cost = oldest.cost - units;
                self.total = self.total.saturating_sub(units);
                units = 0;
                if self.kept() == 0 {
                    self.pushed = Some(LogEntry { cost, ..oldest });
                } else if self.lo + 1 == self.hi && self.back_cost.is_some() {
                    self.back_cost = Some(cost);
                } else {
                    self.front_cost = Some(cost);
                }
            }
        }
    }

    /// Removes the `units` newest units (at most all).
    fn drop_newest(&mut self, mut units: u64) {
        while units > 0 && self.len() > 0 {
            let newest = self.get(self.len() - 1);
            let cut = newest.cost.min(units);
            units -= cut;
            self.total = self.total.saturating_sub(cut);
            let cost = newest.cost - cut;
            if let Some(ref mut p) = self.pushed {
                if cost == 0 {
                    self.pushed = None;
                } else {
                    p.cost = cost;
                }
            } else if cost == 0 {
                self.hi -= 1;
                self.back_cost = None;
                if self.hi == self.lo {
                    self.front_cost = None;
                }
            } else {
                self.back_cost = Some(cost);
            }
        }
    }
}

/// `View::add` is only called with a time no earlier than the newest entry,
/// and after the only other append (the clamp at `now`) with the same time.
#[cold]
fn unreachable_push() {
    debug_assert!(false, "a log entry appended out of order");
}

impl SlidingLog {
    /// `limit` in 1..=10,000, `window_ms` in 1..=10^12.
    pub fn new(limit: u64, window_ms: u64) -> Result<Self, ParamError> {
        if !(1..=MAX_LOG_LIMIT).contains(&limit) {
            return Err(ParamError { arg: "limit", reason: "out of range" });
        }
        if !(1..=MAX_LOG_WINDOW_MS).contains(&window_ms) {
            return Err(ParamError { arg: "window_ms", reason: "out of range" });
        }
        Ok(Self { limit, window_ms, window_ns: window_ms * NS_PER_MS })
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// The header of a new key's (empty) store.
    pub fn empty_header(&self) -> LogHeader {
        LogHeader { window_ms: self.window_ms, total: 0 }
    }

    /// The reply to `op` at `now_ns` on `store` (`None`: the key is missing),
    /// and the change to store if the call writes. Reads the store only.
    pub fn check<S: LogRead>(&self, store: Option<&S>, now_ns: u64, op: LogOp) -> LogOutcome {
        let (mut view, repaired) = self.read(store, now_ns);
        let limit = self.limit;
        match op {
            LogOp::Consume(cost) if cost > limit => {
                self.outcome(&view, now_ns, false, -1, repaired, ChangeKind::Repair)
            }
            LogOp::Consume(0) => self.outcome(&view, now_ns, true, 0, repaired, ChangeKind::Repair),
            LogOp::Consume(cost) if view.total + cost <= limit => {
                view.add(now_ns, cost);
                self.outcome(&view, now_ns, true, 0, true, ChangeKind::Consume)
            }
            LogOp::Consume(cost) => {
                // Denied: the oldest entries whose ageing out makes room.
                let mut need = view.total + cost - limit;
                let mut j = 0;
                let mut at = now_ns;
                while need > 0 && j < view.len() {
                    let e = view.get(j);
                    need = need.saturating_sub(e.cost);
                    at = e.t_ns;
                    j += 1;
                }
                // Every entry of the view is live (t + window > now) and no
                // later than now, so the wait is in 1 ns..=window.
                let wait = at.saturating_add(self.window_ns).saturating_sub(now_ns);
                let retry = i64::try_from(wait.div_ceil(NS_PER_MS)).unwrap_or(i64::MAX);
                self.outcome(&view, now_ns, false, retry, repaired, ChangeKind::Repair)
            }
            LogOp::Refund(_) if store.is_none() => self.outcome(&view, now_ns, true, 0, false, ChangeKind::Refund),
            LogOp::Refund(n) => {
                view.drop_newest(n);
                self.outcome(&view, now_ns, true, 0, true, ChangeKind::Refund)
            }
        }
    }

    /// Whether a call that consumes nothing at `now_ns` may store a change
    /// to `store` (false only if it surely does not), in O(1): the log was
    /// kept with another window, an entry is stamped after now, or its total
    /// exceeds the limit (which [`read`](Self::read) would trim).
    #[inline]
    pub fn repairs<S: LogRead>(&self, store: Option<&S>, now_ns: u64) -> bool {
        store.is_some_and(|s| {
            let header = s.header();
            header.window_ms != self.window_ms
                || header.total > self.limit
                || (!s.is_empty() && s.get(s.len() - 1).t_ns > now_ns)
        })
    }

    /// The stored log as read at `now_ns` under these parameters, and
    /// whether that reading differs from it by more than aged-out entries.
    fn read<'a, S: LogRead>(&self, store: Option<&'a S>, now_ns: u64) -> (View<'a, S>, bool) {
        let Some(s) = store else {
            return (View { store, lo: 0, hi: 0, front_cost: None, back_cost: None, pushed: None, total: 0 }, false);
        };
        let n = s.len();
        let w = self.window_ns;
        // Aged out: t + window <= now (a future entry never is).
        let lo = partition_point(n, |i| s.get(i).t_ns.saturating_add(w) <= now_ns);
        // Stamped after now: read as made now.
        // (Usually none is: then one look at the newest entry suffices.)
        let hi = if n == 0 || s.get(n - 1).t_ns <= now_ns {
            n
        } else {
            lo + partition_point(n - lo, |i| s.get(lo + i).t_ns <= now_ns)
        };
        let header = s.header();
        let aged: u64 = (0..lo).map(|i| s.get(i).cost).sum();
        let future: u64 = (hi..n).map(|i| s.get(i).cost).sum();
        let mut view = View {
            store,
            lo,
            hi,
            front_cost: None,
            back_cost: None,
            pushed: None,
            total: header.total.saturating_sub(aged).saturating_sub(future),
        };
        let mut repaired = header.window_ms != self.window_ms;
        if hi < n {
            if future > 0 {
                view.add(now_ns, future);
            }
            repaired = true;
        }
        if view.total > self.limit {
            view.drop_oldest(view.total - self.limit);
            repaired = true;
        }
        (view, repaired)
    }

    fn outcome<S: LogRead>(
        &self,
        view: &View<'_, S>,
        now_ns: u64,
        allowed: bool,
        retry_after_ms: i64,
        writes: bool,
        kind: ChangeKind,
    ) -> LogOutcome {
        let ages_out = view.newest().map(|e| e.t_ns.saturating_add(self.window_ns));
        let reset_ns = ages_out.map_or(0, |t| t.saturating_sub(now_ns));
        let decision = Decision {
            allowed,
            limit: self.limit,
            remaining: self.limit.saturating_sub(view.total),
            retry_after_ms,
            reset_after_ms: reset_ns.div_ceil(NS_PER_MS),
            wait_ms: 0,
        };
        let change = writes.then(|| LogChange {
            kind,
            drop_front: view.lo,
            front_cost: view.front_cost,
            keep: view.kept(),
            back_cost: view.back_cost,
            push: view.pushed,
            header: LogHeader { window_ms: self.window_ms, total: view.total },
            expire_at_ms: ages_out.map_or(0, expiry_ms),
            delete: view.len() == 0,
        });
        LogOutcome { decision, change }
    }

    /// Whether a stored log (read back from RDB, or applied from an effect)
    /// is one this core can have written: entries strictly in time order,
    /// each of cost 1..=10,000, at most 10,000 of them, the header's total
    /// their sum and at most 10,000, its window in range. O(n).
    pub fn valid<S: LogRead>(store: &S) -> bool {
        Self::fault(store).is_none()
    }

    /// What makes a stored log one this core cannot have written (see
    /// [`valid`](Self::valid)), for the server log when a load refuses it;
    /// `None` if it is valid.
    pub fn fault<S: LogRead>(store: &S) -> Option<&'static str> {
        let h = store.header();
        let n = store.len();
        let mut sum = 0u64;
        let mut prev: Option<u64> = None;
        for i in 0..n {
            let e = store.get(i);
            if e.cost == 0 || e.cost > MAX_LOG_LIMIT {
                return Some("an entry's cost is not 1 to 10000");
            }
            if prev.is_some_and(|p| p >= e.t_ns) {
                return Some("entries not in time order");
            }
            prev = Some(e.t_ns);
            sum += e.cost;
        }
        if n as u64 > MAX_LOG_LIMIT {
            Some("more than 10000 entries")
        } else if sum != h.total {
            Some("the total is not the entries' sum")
        } else if sum > MAX_LOG_LIMIT {
            Some("the total is above 10000")
        } else if !(1..=MAX_LOG_WINDOW_MS).contains(&h.window_ms) {
            Some("the window is out of range")
        } else {
            None
        }
    }
}

/// The least `i` in `0..n` for which `pred` is false (`n` if none), for a
/// predicate that is true then false: a binary search by index, so it works
/// over any [`LogRead`].
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::table::Row;

    const MS: u64 = NS_PER_MS;
    /// The tables' T0 (2027-01-15, epoch-aligned), in ns.
    const T0: u64 = crate::core::table::T0 * 1_000;

    /// Runs the rows in order against one key, starting missing, applying
    /// every change; checks every reply field, that a request writes exactly
    /// when it consumed (the tables hold no repairs), and the expiry.
    fn run(log: &SlidingLog, rows: &[Row]) -> Option<LogBuf> {
        let mut store: Option<LogBuf> = None;
        for (i, &(at, cost, allowed, remaining, retry, reset)) in rows.iter().enumerate() {
            let now = T0 + at * MS;
            let o = log.check(store.as_ref(), now, LogOp::Consume(cost));
            let d = o.decision;
            assert_eq!(
                (d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms),
                (allowed, remaining, retry, reset),
                "row {i}: {:?}",
                rows[i]
            );
            assert_eq!(d.limit, log.limit(), "row {i}: limit");
            assert_eq!(o.change.is_some(), allowed && cost > 0, "row {i}: write");
            if let Some(c) = o.change {
                assert_eq!(c.expire_at_ms, now / MS + d.reset_after_ms, "row {i}: expiry is the reset");
                c.apply(store.get_or_insert_with(|| LogBuf::new(log.empty_header())));
            }
        }
        store
    }

    fn entries(s: &LogBuf) -> Vec<(u64, u64)> {
        s.entries().map(|e| ((e.t_ns - T0) / MS, e.cost)).collect()
    }

    fn buf(window_ms: u64, entries: &[(u64, u64)]) -> LogBuf {
        let mut b = LogBuf::new(LogHeader { window_ms, total: entries.iter().map(|e| e.1).sum() });
        for &(at, cost) in entries {
            b.push_back(LogEntry { t_ns: T0 + at * MS, cost });
        }
        b
    }

    #[test]
    fn limit_per_trailing_window_with_exact_retry() {
        let log = SlidingLog::new(3, 1000).unwrap();
        let s = run(
            &log,
            &[
                (0, 1, true, 2, 0, 1000),
                (100, 1, true, 1, 0, 1000),
                (200, 1, true, 0, 0, 1000),
                // The oldest ages out at 1000: wait 700; the newest at 1200.
                (300, 1, false, 0, 700, 900),
                (999, 1, false, 0, 1, 201),
                // At 1000 the entry of 0 is out: (0, 1000] holds two.
                (1000, 1, true, 0, 0, 1000),
                // Two units need the entries of 100 and 200 gone.
                (1050, 2, false, 0, 150, 950),
                (1200, 2, true, 0, 0, 1000),
            ],
        )
        .unwrap();
        // Aged-out entries are dropped by the writes, same instants merged.
        assert_eq!(entries(&s), [(1000, 1), (1200, 2)]);
        assert_eq!(s.header(), LogHeader { window_ms: 1000, total: 3 });
    }

    #[test]
    fn same_instant_requests_merge_into_one_entry() {
        let log = SlidingLog::new(10, 1000).unwrap();
        let s = run(&log, &[(5, 2, true, 8, 0, 1000), (5, 3, true, 5, 0, 1000), (6, 1, true, 4, 0, 1000)]).unwrap();
        assert_eq!(entries(&s), [(5, 5), (6, 1)]);
    }

    #[test]
    fn cost_above_limit_never_fits_and_cost_0_only_reads() {
        let log = SlidingLog::new(4, 1000).unwrap();
        run(
            &log,
            &[(0, 5, false, 4, -1, 0), (0, 0, true, 4, 0, 0), (10, 4, true, 0, 0, 1000), (20, 0, true, 0, 0, 990)],
        );
    }

    #[test]
    fn a_cost_equal_to_the_limit_waits_for_the_newest_entry() {
        let log = SlidingLog::new(4, 1000).unwrap();
        run(&log, &[(0, 1, true, 3, 0, 1000), (300, 1, true, 2, 0, 1000), (400, 4, false, 2, 900, 900)]);
    }

    #[test]
    fn retry_and_reset_round_partial_milliseconds_up() {
        let log = SlidingLog::new(1, 10).unwrap();
        let o = log.check(None::<&LogBuf>, T0 + 1, LogOp::Consume(1));
        let mut s = LogBuf::new(log.empty_header());
        o.change.unwrap().apply(&mut s);
        assert_eq!(o.change.unwrap().expire_at_ms, T0 / MS + 11);
        // Ages out at T0 + 10 ms + 1 ns.
        let d = log.check(Some(&s), T0 + 5 * MS, LogOp::Consume(1)).decision;
        assert_eq!((d.allowed, d.retry_after_ms, d.reset_after_ms), (false, 6, 6));
        assert!(!log.check(Some(&s), T0 + 10 * MS, LogOp::Consume(1)).decision.allowed);
        assert!(log.check(Some(&s), T0 + 10 * MS + 1, LogOp::Consume(1)).decision.allowed);
    }

    #[test]
    fn a_refund_removes_the_newest_units_first() {
        let log = SlidingLog::new(10, 1000).unwrap();
        let s = buf(1000, &[(0, 2), (100, 3), (200, 1)]);
        let o = log.check(Some(&s), T0 + 300 * MS, LogOp::Refund(2));
        let d = o.decision;
        assert_eq!((d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms), (true, 6, 0, 800));
        let c = o.change.unwrap();
        assert_eq!((c.kind, c.keep, c.back_cost, c.push, c.delete), (ChangeKind::Refund, 2, Some(2), None, false));
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(0, 2), (100, 2)]);
        assert_eq!(c.expire_at_ms, T0 / MS + 1100);
        assert!(SlidingLog::valid(&after));
    }

    #[test]
    fn a_refund_never_goes_below_empty_and_an_empty_log_is_deleted() {
        let log = SlidingLog::new(10, 1000).unwrap();
        let s = buf(1000, &[(0, 2), (100, 3)]);
        let o = log.check(Some(&s), T0 + 300 * MS, LogOp::Refund(4_000_000_000));
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (10, 0));
        let c = o.change.unwrap();
        assert!(c.delete);
        let mut after = s.clone();
        c.apply(&mut after);
        assert!(after.is_empty());
        // On a missing key: full, and nothing written.
        let o = log.check(None::<&LogBuf>, T0, LogOp::Refund(1));
        assert_eq!((o.decision.allowed, o.decision.remaining, o.change), (true, 10, None));
    }

    #[test]
    fn a_refund_applies_to_the_log_as_read() {
        // The entry of 0 has aged out at 1000; the refund takes from the rest.
        let log = SlidingLog::new(10, 1000).unwrap();
        let s = buf(1000, &[(0, 2), (900, 3)]);
        let c = log.check(Some(&s), T0 + 1000 * MS, LogOp::Refund(1)).change.unwrap();
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(900, 2)]);
        assert_eq!(after.header().total, 2);
    }

    #[test]
    fn entries_stamped_after_now_read_as_made_now_and_are_repaired() {
        let log = SlidingLog::new(5, 1000).unwrap();
        // Written an hour ahead, then the clock went back.
        let s = buf(1000, &[(100, 1), (3_600_000, 2), (3_600_500, 1)]);
        let now = T0 + 200 * MS;
        let o = log.check(Some(&s), now, LogOp::Consume(0));
        let d = o.decision;
        // 4 live; the newest ages out a window from now, not an hour on.
        assert_eq!((d.allowed, d.remaining, d.reset_after_ms), (true, 1, 1000));
        let c = o.change.expect("a repair");
        assert_eq!(c.kind, ChangeKind::Repair);
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(100, 1), (200, 3)]);
        assert!(SlidingLog::valid(&after));
        // Once repaired, a read writes nothing.
        assert_eq!(log.check(Some(&after), now, LogOp::Consume(0)).change, None);
        // A denial repairs too, and an allowed request merges with the clamp.
        let o = log.check(Some(&s), now, LogOp::Consume(2));
        assert_eq!((o.decision.allowed, o.decision.retry_after_ms), (false, 900));
        assert!(o.change.is_some());
        let c = log.check(Some(&s), now, LogOp::Consume(1)).change.unwrap();
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(100, 1), (200, 4)]);
        // A clamp onto an entry made at now merges with it.
        let s = buf(1000, &[(200, 1), (5000, 2)]);
        let c = log.check(Some(&s), now, LogOp::Consume(1)).change.unwrap();
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(200, 4)]);
    }

    #[test]
    fn a_changed_window_rereads_the_entries_and_stores_the_result() {
        let s = buf(1000, &[(0, 1), (500, 1), (900, 1)]);
        let now = T0 + 950 * MS;
        // Shrunk to 100 ms: only the entry of 900 is live.
        let small = SlidingLog::new(3, 100).unwrap();
        let o = small.check(Some(&s), now, LogOp::Consume(0));
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (2, 50));
        let c = o.change.expect("a repair");
        assert_eq!((c.header.window_ms, c.expire_at_ms, c.delete), (100, T0 / MS + 1000, false));
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(900, 1)]);
        assert_eq!(small.check(Some(&after), now, LogOp::Consume(0)).change, None);
        // Shrunk to 10 ms: nothing is live, and the key is deleted.
        let c = SlidingLog::new(3, 10).unwrap().check(Some(&s), now, LogOp::Consume(0)).change.unwrap();
        assert!(c.delete);
        // Grown to a minute: everything the log holds counts.
        let d = SlidingLog::new(3, 60_000).unwrap().check(Some(&s), T0 + 5000 * MS, LogOp::Consume(1)).decision;
        assert_eq!((d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms), (false, 0, 55_000, 55_900));
    }

    #[test]
    fn a_lowered_limit_keeps_the_newest_units_and_reads_as_drained() {
        let s = buf(1000, &[(0, 3), (100, 2), (200, 1)]);
        let log = SlidingLog::new(2, 1000).unwrap();
        let now = T0 + 300 * MS;
        let o = log.check(Some(&s), now, LogOp::Consume(0));
        assert_eq!((o.decision.remaining, o.decision.reset_after_ms), (0, 900));
        let c = o.change.expect("a repair");
        let mut after = s.clone();
        c.apply(&mut after);
        assert_eq!(entries(&after), [(100, 1), (200, 1)]);
        assert!(SlidingLog::valid(&after));
        // One unit fits when the entry of 100 ages out.
        let d = log.check(Some(&s), now, LogOp::Consume(1)).decision;
        assert_eq!((d.allowed, d.retry_after_ms), (false, 800));
        assert_eq!(log.check(Some(&after), now, LogOp::Consume(1)).decision, d);
        // A cap that trims the only entry.
        let s = buf(1000, &[(0, 9)]);
        let mut after = s.clone();
        log.check(Some(&s), now, LogOp::Consume(0)).change.unwrap().apply(&mut after);
        assert_eq!(entries(&after), [(0, 2)]);
        // A cap and a refund in one call: the refund takes from the capped log.
        let s = buf(1000, &[(0, 3), (100, 2), (200, 1)]);
        let mut after = s.clone();
        log.check(Some(&s), now, LogOp::Refund(1)).change.unwrap().apply(&mut after);
        assert_eq!(entries(&after), [(100, 1)]);
    }

    #[test]
    fn parameters_out_of_range_are_refused() {
        assert_eq!(SlidingLog::new(0, 1000).unwrap_err().arg, "limit");
        assert_eq!(SlidingLog::new(10_001, 1000).unwrap_err().arg, "limit");
        assert_eq!(SlidingLog::new(1, 0).unwrap_err().arg, "window_ms");
        assert_eq!(SlidingLog::new(1, MAX_LOG_WINDOW_MS + 1).unwrap_err().arg, "window_ms");
        assert!(SlidingLog::new(MAX_LOG_LIMIT, MAX_LOG_WINDOW_MS).is_ok());
    }

    #[test]
    fn the_largest_window_at_a_late_clock_does_not_overflow() {
        let log = SlidingLog::new(1, MAX_LOG_WINDOW_MS).unwrap();
        // 2200-01-01 in ns.
        let now = 7_258_118_400_000_000_000;
        let c = log.check(None::<&LogBuf>, now, LogOp::Consume(1)).change.unwrap();
        let mut s = LogBuf::new(log.empty_header());
        c.apply(&mut s);
        let d = log.check(Some(&s), now, LogOp::Consume(1)).decision;
        assert_eq!((d.retry_after_ms, d.reset_after_ms), (MAX_LOG_WINDOW_MS as i64, MAX_LOG_WINDOW_MS));
    }

    #[test]
    fn a_ring_of_words_wraps_grows_and_matches_the_buffer() {
        let log = SlidingLog::new(3, 100).unwrap();
        let mut words = vec![0u64; LogRing::words_for(1)];
        LogRing::init(&mut words, log.empty_header());
        let mut reference = LogBuf::new(log.empty_header());
        let mut now = T0;
        for i in 0..200u64 {
            now += (i % 5) * 20 * MS + i % 3;
            let op = if i % 11 == 0 { LogOp::Refund(1) } else { LogOp::Consume(i % 3) };
            let ring = LogRing::open(&mut words[..]).unwrap();
            let o = log.check(Some(&ring), now, op);
            assert_eq!(o, log.check(Some(&reference), now, op), "call {i}");
            let Some(c) = o.change else { continue };
            let grown = (c.len_after(ring.len()) > ring.capacity()).then(|| {
                let mut bigger = vec![0u64; LogRing::words_for(2 * ring.capacity())];
                assert!(ring.grow_into(&mut bigger));
                bigger
            });
            if let Some(bigger) = grown {
                words = bigger;
            }
            let mut ring = LogRing::open(&mut words[..]).unwrap();
            // What a replica receives: the change's words, checked against its log.
            assert_eq!(LogChange::from_words(&c.to_words()), Some(c));
            assert!(c.fits(ring.len()), "call {i}: {c:?}");
            c.apply(&mut ring);
            c.apply(&mut reference);
            assert_eq!(ring.len(), reference.len());
            assert!((0..ring.len()).all(|j| ring.get(j) == reference.get(j)), "call {i}");
            assert_eq!(ring.header(), reference.header());
            assert!(SlidingLog::valid(&ring));
        }
        // Three entries at most, so the block never grew past four.
        assert_eq!(words.len(), LogRing::words_for(4));
        // A head or length that does not fit the block is refused.
        let mut bad = [1000, 0, 9, 0, 0, 0];
        assert!(LogRing::open(&mut bad[..]).is_none());
        let mut bad = [1000, 0, 0, 2, 0, 0];
        assert!(LogRing::open(&mut bad[..]).is_none());
    }

    #[test]
    fn an_inconsistent_header_never_panics() {
        // What `valid` refuses at load; should one get through, no call panics.
        let log = SlidingLog::new(5, 1000).unwrap();
        for total in [0, 1, u64::MAX] {
            let mut s = buf(1000, &[(0, 2), (100, 3), (5000, 4)]);
            s.set_header(LogHeader { window_ms: 1000, total });
            for now in [T0 + 50 * MS, T0 + 1050 * MS] {
                for op in [LogOp::Consume(0), LogOp::Consume(1), LogOp::Consume(5), LogOp::Refund(u64::MAX)] {
                    if let Some(c) = log.check(Some(&s), now, op).change {
                        c.apply(&mut s.clone());
                    }
                }
            }
        }
    }

    #[test]
    fn change_words_out_of_range_and_changes_that_do_not_fit_are_refused() {
        let log = SlidingLog::new(10, 1000).unwrap();
        let s = buf(1000, &[(0, 2), (100, 3)]);
        let c = log.check(Some(&s), T0 + 1050 * MS, LogOp::Consume(1)).change.unwrap();
        assert_eq!((c.drop_front, c.keep, c.push.is_some()), (1, 1, true));
        assert!(c.fits(2));
        assert!(!c.fits(1), "keeps one after dropping one: needs two");
        assert!(!c.fits(0));
        let w = c.to_words();
        for (i, bad) in [(0, 3), (1, MAX_LOG_LIMIT + 1), (3, u64::MAX), (10, 2)] {
            let mut b = w;
            b[i] = bad;
            assert_eq!(LogChange::from_words(&b), None, "word {i} = {bad}");
        }
    }

    #[test]
    fn two_thousand_entries_take_about_16_bytes_each_in_a_doubled_ring() {
        let log = SlidingLog::new(2000, 60_000).unwrap();
        let mut words = vec![0u64; LogRing::words_for(1)];
        LogRing::init(&mut words, log.empty_header());
        for i in 0..2000u64 {
            let ring = LogRing::open(&mut words[..]).unwrap();
            let c = log.check(Some(&ring), T0 + i * MS, LogOp::Consume(1)).change.unwrap();
            let grown = (c.len_after(ring.len()) > ring.capacity()).then(|| {
                let mut bigger = vec![0u64; LogRing::words_for(2 * ring.capacity())];
                assert!(ring.grow_into(&mut bigger));
                bigger
            });
            if let Some(bigger) = grown {
                words = bigger;
            }
            c.apply(&mut LogRing::open(&mut words[..]).unwrap());
        }
        assert_eq!(LogRing::open(&mut words[..]).unwrap().len(), 2000);
        // 2,048 entries of 16 bytes and the header: 32,800 bytes, 16.4 a
        // entry (the issue allows 48), before the key's own overhead.
        assert_eq!(words.len() * 8, 32_800);
        assert!(words.len() * 8 <= 48 * 2000);
    }

    #[test]
    fn invalid_stores_are_recognised() {
        assert!(SlidingLog::valid(&buf(1000, &[(0, 1), (1, 2)])));
        assert!(!SlidingLog::valid(&buf(1000, &[(1, 1), (1, 2)])), "same instant twice");
        assert!(!SlidingLog::valid(&buf(1000, &[(2, 1), (1, 2)])), "out of order");
        assert!(!SlidingLog::valid(&buf(1000, &[(0, 0)])), "cost 0");
        assert!(!SlidingLog::valid(&buf(0, &[(0, 1)])), "window 0");
        let mut b = buf(1000, &[(0, 1)]);
        b.set_header(LogHeader { window_ms: 1000, total: 2 });
        assert!(!SlidingLog::valid(&b), "total");
    }

    #[test]
    fn repairs_says_false_only_where_a_status_query_writes_nothing() {
        // Logs kept with this window and another, with entries aged out,
        // live, stamped after now, under and over the limit.
        let log = SlidingLog::new(3, 1000).unwrap();
        let now = T0 + 2_000 * MS;
        let shapes: &[&[(u64, u64)]] = &[
            &[],
            &[(1500, 1)],
            &[(500, 1), (1500, 2)],
            &[(500, 3), (1500, 1)],
            &[(1200, 2), (1900, 2)],
            &[(1500, 1), (2500, 1)],
            &[(3000, 1)],
        ];
        let (mut repairs, mut writes) = (0, 0);
        for window_ms in [1000, 2000, 100] {
            for entries in shapes {
                let s = buf(window_ms, entries);
                let wrote = log.check(Some(&s), now, LogOp::Consume(0)).change.is_some();
                let said = log.repairs(Some(&s), now);
                assert!(said || !wrote, "{window_ms} {entries:?}");
                repairs += usize::from(said);
                writes += usize::from(wrote);
            }
        }
        assert!(!log.repairs(None::<&LogBuf>, now));
        assert!(writes > 0 && repairs < 21, "{repairs} {writes}");
        // Aged-out entries alone are no repair, and need no second look.
        assert!(!log.repairs(Some(&buf(1000, &[(500, 1), (1500, 2)])), now));
    }
}
