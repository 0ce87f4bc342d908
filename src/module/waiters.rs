//! The queues of clients that wait for a lease (`RL.ACQUIRE ... WAIT`):
//! who waits on which key, in arrival order, with running totals, and the
//! counters `INFO rl` shows. The kinds and the key-state layer read it here
//! (no barging: [`behind_waiters`]; the module's own deletions:
//! [`own_delete`]); the waiting command itself, its callbacks and its timer
//! are `commands::wait`, which stands above both.
//!
//! The queues live in the module's memory on the server's main thread, the
//! only one that runs commands and their callbacks.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

use redis_module::raw::RedisModuleBlockedClient;

use crate::core::lease::{LeaseBlock, LeaseChange, LeaseId, LeaseOp};
use crate::core::time::Nanos;
use crate::core::{Algorithm, Change, Decision, Verdict};
use crate::module::ffi::{api, Ctx};

/// The most clients that wait on one key.
pub const MAX_WAITERS_PER_KEY: usize = 10_000;

/// Clients waiting now, on any key (the fast check of every acquire).
pub static WAITING: AtomicUsize = AtomicUsize::new(0);
/// Calls that blocked; waiters granted; waiters whose timeout passed.
pub static WAITS: AtomicU64 = AtomicU64::new(0);
pub static GRANTS: AtomicU64 = AtomicU64::new(0);
pub static TIMEOUTS: AtomicU64 = AtomicU64::new(0);
/// Whether the module is subscribed to generic keyspace events now (only
/// while, or since, clients wait: `commands::wait::watch_keys`).
pub static WATCHING: AtomicBool = AtomicBool::new(false);
/// Generic keyspace events the server has called the module for.
pub static KEY_EVENTS: AtomicU64 = AtomicU64::new(0);

/// `INFO rl`'s `rl_wait` line.
pub fn stats() -> [(&'static std::ffi::CStr, u64); 6] {
    [
        (c"waits", WAITS.load(Relaxed)),
        (c"grants", GRANTS.load(Relaxed)),
        (c"timeouts", TIMEOUTS.load(Relaxed)),
        (c"waiting", WAITING.load(Relaxed) as u64),
        (c"watching_keys", u64::from(WATCHING.load(Relaxed))),
        (c"key_events", KEY_EVENTS.load(Relaxed)),
    ]
}

pub struct Waiter {
    pub seq: u64,
    pub bc: *mut RedisModuleBlockedClient,
    pub cost: u64,
    pub id: Option<LeaseId>,
    /// Unblocked to be granted; its units are spoken for until it is.
    pub chosen: bool,
}

/// A key's waiters, in arrival order (`seq` ascending), and running totals,
/// so that no call walks the whole queue: waking N waiters one at a time
/// costs O(N) overall, not O(N^2).
#[derive(Default)]
pub struct Queue {
    pub waiters: VecDeque<Waiter>,
    /// The latest limit any call on the key gave.
    pub limit: u64,
    /// The units every waiter asks for.
    pub units: u64,
    /// The units of the chosen waiters, not yet answered: spoken for.
    pub chosen_units: u64,
}

impl Queue {
    pub fn push(&mut self, w: Waiter) {
        self.units = self.units.saturating_add(w.cost);
        self.waiters.push_back(w);
    }

    /// Where waiter `seq` is (arrival order is `seq` order).
    pub fn find(&self, seq: u64) -> Option<usize> {
        self.waiters.binary_search_by_key(&seq, |w| w.seq).ok()
    }

    /// Takes waiter `seq` out of the queue.
    pub fn remove(&mut self, seq: u64) -> Option<Waiter> {
        let w = self.waiters.remove(self.find(seq)?)?;
        self.units = self.units.saturating_sub(w.cost);
        if w.chosen {
            self.chosen_units = self.chosen_units.saturating_sub(w.cost);
        }
        Some(w)
    }

    /// Unblocks waiter `i` of the queue at `at` unless it was chosen
    /// already: granted (`error: None`), or answered `error`.
    pub fn choose(&mut self, at: &QueueKey, i: usize, error: Option<&'static str>) {
        let Some(w) = self.waiters.get_mut(i).filter(|w| !w.chosen) else { return };
        w.chosen = true;
        self.chosen_units = self.chosen_units.saturating_add(w.cost);
        let data = Box::into_raw(Box::new(Unblocked { at: at.clone(), seq: w.seq, error }));
        // SAFETY: `w.bc` is a blocked client not yet unblocked (`chosen` is set once);
        // the server hands `data` back to `granted`, which frees it.
        unsafe { api!(RedisModule_UnblockClient(w.bc, data.cast())) };
    }

    /// Answers every waiter not yet chosen `error`.
    pub fn answer_all(&mut self, at: &QueueKey, error: &'static str) {
        for i in 0..self.waiters.len() {
            self.choose(at, i, Some(error));
        }
    }
}

/// A queue's key: the database and the key's name.
pub type QueueKey = (c_int, Vec<u8>);

/// What a waiter is unblocked with (its private data).
pub struct Unblocked {
    pub at: QueueKey,
    pub seq: u64,
    /// `None`: granted; else the error to answer.
    pub error: Option<&'static str>,
}

thread_local! {
    pub static QUEUES: RefCell<HashMap<QueueKey, Queue>> = RefCell::new(HashMap::new());
    /// Which queue each blocked client waits in (for its timeout and disconnection).
    pub static BLOCKED: RefCell<HashMap<usize, (QueueKey, u64)>> = RefCell::new(HashMap::new());
    pub static NEXT_SEQ: Cell<u64> = const { Cell::new(0) };
    pub static TICKING: Cell<bool> = const { Cell::new(false) };
    /// Set while a chosen waiter's own acquire runs: it is not held back.
    pub static GRANTING: Cell<bool> = const { Cell::new(false) };
    /// A call raised the limit of a key with waiters (see [`after_call`]).
    pub static RAISED: Cell<bool> = const { Cell::new(false) };
}

pub fn selected_db(ctx: Ctx<'_>) -> c_int {
    // SAFETY: the running callback's context (a `Ctx`).
    unsafe { api!(RedisModule_GetSelectedDb(ctx.raw())) }
}

/// Whether clients wait on `key` of the selected database.
pub fn has_waiters(ctx: Ctx<'_>, key: &[u8]) -> bool {
    WAITING.load(Relaxed) > 0 && QUEUES.with(|q| q.borrow().contains_key(&(selected_db(ctx), key.to_vec())))
}

/// No barging: an allowed acquire of a new lease on a key that clients wait
/// on is answered as denied, with the wait until the units the live leases
/// hold, plus those of the waiters, plus its cost fit (if nothing else
/// happens; each waiter's lease then runs from its grant, so this is a
/// least wait). The call's limit becomes the key's, for the waiters,
/// unless it is a PEEK (`peek`), which changes nothing. Inlined: on every
/// acquire it only reads the waiter count (nobody waits in steady
/// operation); the queue is looked at out of line.
#[inline(always)]
pub fn behind_waiters<A: for<'s> Algorithm<State<'s> = LeaseBlock<&'s [u64]>, Write = LeaseChange>>(
    ctx: Ctx<'_>,
    limiter: &A,
    state: Option<LeaseBlock<&[u64]>>,
    now: Nanos,
    key: &[u8],
    peek: bool,
    verdict: &mut Verdict<LeaseChange>,
) {
    if WAITING.load(Relaxed) > 0 {
        behind_queued_waiters(ctx, limiter, state, now, key, peek, verdict);
    }
}

#[inline(never)]
fn behind_queued_waiters<A: for<'s> Algorithm<State<'s> = LeaseBlock<&'s [u64]>, Write = LeaseChange>>(
    ctx: Ctx<'_>,
    limiter: &A,
    state: Option<LeaseBlock<&[u64]>>,
    now: Nanos,
    key: &[u8],
    peek: bool,
    verdict: &mut Verdict<LeaseChange>,
) {
    if GRANTING.get() {
        return;
    }
    let queued = QUEUES.with(|q| {
        let mut q = q.borrow_mut();
        let queue = q.get_mut(&(selected_db(ctx), key.to_vec()))?;
        if !peek {
            if limiter.limit() > queue.limit {
                RAISED.set(true);
            }
            queue.limit = limiter.limit();
        }
        Some(queue.units)
    });
    let Some(queued) = queued else { return };
    let cost = match &verdict.change {
        Some(Change::Consume(w)) if verdict.decision.allowed => match &w.state.op {
            LeaseOp::Add(l) => l.units,
            _ => return,
        },
        _ => return,
    };
    let want = queued.saturating_add(cost).min(limiter.limit());
    let held = limiter.decide(state, now, want).decision;
    verdict.decision = Decision {
        allowed: false,
        limit: verdict.decision.limit,
        remaining: verdict.decision.remaining.saturating_add(cost),
        retry_after_ms: if held.allowed { 1 } else { held.retry_after_ms.max(1) },
        reset_after_ms: limiter.decide(state, now, 0).decision.reset_after_ms,
        wait_ms: 0,
    };
    verdict.change = None;
}

thread_local! {
    /// Set while the module itself deletes a key (a lease set whose last
    /// lease ended): its own `del` event, after which waiters are granted.
    pub static OWN_DELETE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, the module's own deletion of a key and its `del` event.
pub fn own_delete<T>(f: impl FnOnce() -> T) -> T {
    OWN_DELETE.set(true);
    let out = f();
    OWN_DELETE.set(false);
    out
}

/// Removes waiter `seq` from the queue at `at` (if it is still there);
/// the key's limit then, if it was.
pub fn leave(at: &QueueKey, seq: u64) -> Option<u64> {
    QUEUES.with(|q| {
        let mut q = q.borrow_mut();
        let queue = q.get_mut(at)?;
        let w = queue.remove(seq)?;
        BLOCKED.with(|b| b.borrow_mut().remove(&(w.bc as usize)));
        WAITING.fetch_sub(1, Relaxed);
        let limit = queue.limit;
        if queue.waiters.is_empty() {
            q.remove(at);
        }
        Some(limit)
    })
}

/// Whether the module itself is deleting a key now (see [`own_delete`]).
pub fn deleting_own() -> bool {
    OWN_DELETE.get()
}
