//! `RL.ACQUIRE key limit lease_ms [COST n] [ID id] WAIT timeout_ms`: wait
//! for a lease on the server, first in, first out per key.
//!
//! - If the cost fits now and nobody waits on the key, the call answers at
//!   once, as without `WAIT` (so does a cost above the limit, which can
//!   never fit, `COST 0`, and any call inside MULTI, a script or a function,
//!   where a client cannot block). Otherwise the client blocks
//!   (`RedisModule_BlockClient`, with `timeout_ms` as its timeout) and joins
//!   the key's queue.
//! - [`wake`] grants waiters in queue order while the head's cost fits: the
//!   units the live leases hold, plus those of the waiters already chosen
//!   and not yet answered, plus the head's cost, at most the key's limit (the
//!   latest limit any call on the key gave, so a raised limit makes room).
//!   A waiter whose `ID` names a live lease renews it and always fits. It
//!   runs after a release (at once, in the releasing command), and on a
//!   server timer every [`TICK_MS`] ms while anyone waits, which sees lease
//!   expiry on the server's own clock, a key deleted or of another type, and
//!   a raised limit. A chosen waiter is unblocked; its reply callback makes
//!   the acquire then, through the one key-state path (the lease runs from
//!   the grant; only the grant writes and propagates).
//! - No barging: an acquire without `WAIT` (and a `CONCURRENCY` spec of
//!   `RL.ALL`) that would take units while the key has waiters is answered
//!   as denied (`behind_waiters`). Renewing a live lease by `ID` takes no
//!   units and is not held back.
//! - A waiter whose timeout passes (or that `CLIENT UNBLOCK` ends) leaves
//!   the queue and gets the reply an acquire made then would get; one whose
//!   connection closes leaves the queue. Nothing of either stays on the key.
//! - At most [`MAX_WAITERS_PER_KEY`] waiters per key (then `ERR`).
//!
//! The queues live in the module's memory on the server's main thread, the
//! only one that runs commands and their callbacks.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::Ordering::Relaxed;

use redis_module::raw::{self, RedisModuleBlockedClient, RedisModuleCtx, RedisModuleString};

use crate::core::lease::Leases;
use crate::core::Algorithm;
use crate::module::acquire::Acquire;
use crate::module::args::{ArgError, Options};
use crate::module::clock;
use crate::module::entry;
use crate::module::ffi::{api, has, reply_error, reply_wrong_arity, Argv, Ctx, OwnedString};
use crate::module::kinds::Kind;
use crate::module::state::KeyState;
use crate::module::waiters::{
    deleting_own, has_waiters, leave, selected_db, QueueKey, Unblocked, Waiter, BLOCKED, GRANTING, GRANTS, KEY_EVENTS,
    MAX_WAITERS_PER_KEY, NEXT_SEQ, QUEUES, RAISED, TICKING, TIMEOUTS, WAITING, WAITS, WATCHING,
};

/// How often (real ms) the server looks at every key with waiters.
const TICK_MS: i64 = 5;

/// After a call on `key` closed it: if the call raised the key's limit,
/// the waiters that now fit are granted at once.
pub fn after_call(ctx: Ctx<'_>, key: &[u8]) {
    // The flag is only ever set while someone waits: no thread-local
    // lookup on an acquire's usual path.
    if WAITING.load(Relaxed) > 0 && RAISED.replace(false) {
        wake(ctx, key);
    }
}

/// How an `RL.ACQUIRE ... WAIT` call runs, decided before its key is read.
pub enum WaitPath {
    /// As without `WAIT`: it cannot block (inside MULTI, a script or a
    /// function, on a replica's stream, loading), or has nothing to wait
    /// for (`COST 0`, `PEEK`).
    Now,
    /// Nobody waits on the key: decided as without `WAIT`, in the one
    /// pass; only a denial that a later release can turn into a grant
    /// blocks ([`block`]). A wait granted at once costs what an acquire does.
    Decide,
    /// Clients wait on the key: it joins the queue ([`command`]), first in,
    /// first out, even if it would fit now (no barging).
    Queue,
}

/// Which [`WaitPath`] an acquire with `opts` (its `WAIT` given) takes.
pub fn path(ctx: Ctx<'_>, args: &Argv<'_>, opts: &Options, flags: u32) -> WaitPath {
    let cannot_block = raw::REDISMODULE_CTX_FLAGS_MULTI
        | raw::REDISMODULE_CTX_FLAGS_LUA
        | raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING
        | raw::REDISMODULE_CTX_FLAGS_REPLICATED
        | raw::REDISMODULE_CTX_FLAGS_LOADING;
    if flags & cannot_block != 0 || opts.cost == 0 || opts.peek {
        WaitPath::Now
    } else if has_waiters(ctx, args.bytes(1)) {
        WaitPath::Queue
    } else {
        WaitPath::Decide
    }
}

/// `RL.ACQUIRE ... WAIT timeout_ms` that waits: on a key that clients wait
/// on ([`WaitPath::Queue`]), or denied now on one nobody waits on
/// ([`WaitPath::Decide`]). Blocks the client and joins the key's queue.
pub fn command(ctx: Ctx<'_>, args: Argv<'_>, wait_ms: u64) {
    let parsed = Acquire::parse_command(&args);
    let (limiter, opts) = match &parsed {
        Ok(p) => p,
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let key = args.bytes(1);
    let at = (selected_db(ctx), key.to_vec());
    let full = QUEUES.with(|q| q.borrow().get(&at).is_some_and(|queue| queue.waiters.len() >= MAX_WAITERS_PER_KEY));
    if full {
        return reply_error(ctx, &format!("ERR too many clients wait on this key (at most {MAX_WAITERS_PER_KEY})"));
    }
    // SAFETY: the command's context (a `Ctx`); the callbacks are ours, with the
    // signatures the server calls them with.
    let bc = unsafe {
        api!(RedisModule_BlockClient(
            ctx.raw(),
            Some(on_reply),
            Some(on_timeout),
            Some(on_free),
            i64::try_from(wait_ms).unwrap_or(i64::MAX)
        ))
    };
    if bc.is_null() {
        return acquire_now(ctx, args);
    }
    watch_keys(ctx);
    if has!(RedisModule_SetDisconnectCallback) {
        // SAFETY: `bc` was just returned by BlockClient (checked `has!`).
        unsafe { api!(RedisModule_SetDisconnectCallback(bc, Some(on_disconnect))) };
    }
    let seq = NEXT_SEQ.get();
    NEXT_SEQ.set(seq + 1);
    let id = limiter.id().copied();
    QUEUES.with(|q| {
        let mut q = q.borrow_mut();
        let queue = q.entry(at.clone()).or_default();
        queue.limit = limiter.limit();
        queue.push(Waiter { seq, bc, cost: opts.cost, id, chosen: false });
    });
    BLOCKED.with(|b| b.borrow_mut().insert(bc as usize, (at, seq)));
    WAITING.fetch_add(1, Relaxed);
    WAITS.fetch_add(1, Relaxed);
    if !TICKING.get() {
        TICKING.set(true);
        // SAFETY: the command's context, from a `Ctx`.
        unsafe { arm(ctx.raw(), Some(TICK_MS as u64)) };
    }
}

/// The acquire as without `WAIT`, answered now.
fn acquire_now(ctx: Ctx<'_>, args: Argv<'_>) {
    super::kind_command_with::<Acquire>(ctx, args, parse_without_wait);
}

fn parse_without_wait(args: &Argv<'_>) -> Result<(Acquire, Options), ArgError> {
    let (limiter, mut opts) = Acquire::parse_command(args)?;
    opts.wait_ms = None;
    Ok((limiter, opts))
}

/// Grants the waiters at the head of the key's queue that fit now (see the
/// module docs). `ctx` has the queue's database selected. The least ms
/// until the first waiter left may fit by lease expiry alone, if any waits.
fn wake_queue(ctx: Ctx<'_>, at: &QueueKey) -> Option<u64> {
    let name = OwnedString::new(ctx, &at.1);
    let now = clock::now();
    let next = QUEUES.with(|q| {
        let mut q = q.borrow_mut();
        let queue = q.get_mut(at)?;
        let Ok(key) = KeyState::<Acquire>::open_read(ctx, name.key()) else {
            // Another type in the key: nothing can be granted there.
            queue.answer_all(at, "WRONGTYPE the key no longer holds a lease set");
            return None;
        };
        let state = key.state();
        let (live, _) = Leases::live(state.as_ref(), now.0, None);
        let mut spoken = queue.chosen_units;
        let limit = queue.limit;
        let mut next = None;
        // The chosen waiters are a prefix of the queue (waiters are chosen
        // in order, or all at once), answered by the next event-loop turn.
        let first = queue.waiters.iter().position(|w| !w.chosen).unwrap_or(queue.waiters.len());
        for i in first..queue.waiters.len() {
            let w = &queue.waiters[i];
            if w.chosen {
                continue;
            }
            let renews = w.id.is_some() && Leases::live(state.as_ref(), now.0, w.id.as_ref()).1;
            if !renews && live.saturating_add(spoken).saturating_add(w.cost) > limit {
                // When the leases held now leave room for it (if ever).
                let want = spoken.saturating_add(w.cost).min(limit);
                next = Leases::new(limit, 1)
                    .ok()
                    .map(|l| l.acquire(state.as_ref(), now.0, want, None, 0).decision.retry_after_ms)
                    .and_then(|ms| u64::try_from(ms).ok());
                break;
            }
            if !renews {
                spoken += w.cost;
            }
            queue.choose(at, i, None);
        }
        drop(key);
        next
    });
    drop(name);
    next
}

/// What a waiter whose key went away under it is answered.
pub const KEY_GONE: &str =
    "ERR the key was deleted, renamed or moved while the client waited (its slot may have migrated): retry";

/// Watches for keys that leave under their waiters: `DEL`, `UNLINK`,
/// `RENAME`, `MOVE`, and `MIGRATE` or a slot that leaves the node in a
/// cluster (each fires a generic `del` or `*_from` event). Without it a
/// missing key reads as empty, and its waiters would be granted a new
/// lease set, on a node that may no longer serve the key.
///
/// Called when a client is about to wait, never at load. A subscriber
/// costs every generic event on the server (`DEL`, `EXPIRE`, a `SET` with
/// a TTL, ...) a module context made and freed, about 600 instructions, a
/// tenth of a `SET PX`, whether or not anyone waits. So the module
/// subscribes with its first waiter, and [`unwatch_keys`] ends the
/// subscription when the last one has left, where the server can end one
/// (`RedisModule_UnsubscribeFromKeyspaceEvents`, Redis 8.2 on); elsewhere it
/// stays until the server restarts.
pub fn watch_keys(ctx: Ctx<'_>) {
    if WATCHING.load(Relaxed) || !has!(RedisModule_SubscribeToKeyspaceEvents) {
        return;
    }
    // SAFETY: a command's context (a `Ctx`); `on_key_event` has the signature
    // the server calls it with.
    let ok = unsafe {
        api!(RedisModule_SubscribeToKeyspaceEvents(
            ctx.raw(),
            raw::REDISMODULE_NOTIFY_GENERIC as c_int,
            Some(on_key_event)
        ))
    } == raw::REDISMODULE_OK as c_int;
    WATCHING.store(ok, Relaxed);
}

/// Ends the subscription of [`watch_keys`] once nobody waits, where the
/// server can. Called from the waiters' timer, never from inside a
/// keyspace event (the server still reads the subscriber after its
/// callback returns).
///
/// # Safety
/// `ctx` is the context of a timer callback.
unsafe fn unwatch_keys(ctx: *mut RedisModuleCtx) {
    if !WATCHING.load(Relaxed) || WAITING.load(Relaxed) != 0 || !has!(RedisModule_UnsubscribeFromKeyspaceEvents) {
        return;
    }
    // SAFETY: a timer's context (the contract), with the mask and callback
    // `watch_keys` subscribed.
    let ok = unsafe {
        api!(RedisModule_UnsubscribeFromKeyspaceEvents(
            ctx,
            raw::REDISMODULE_NOTIFY_GENERIC as c_int,
            Some(on_key_event)
        ))
    } == raw::REDISMODULE_OK as c_int;
    if ok {
        WATCHING.store(false, Relaxed);
    }
}

/// A generic keyspace event: a key with waiters that was deleted, renamed
/// away or moved answers them [`KEY_GONE`].
unsafe extern "C" fn on_key_event(
    ctx: *mut RedisModuleCtx,
    _type: c_int,
    event: *const std::os::raw::c_char,
    key: *mut RedisModuleString,
) -> c_int {
    KEY_EVENTS.fetch_add(1, Relaxed);
    // The fast path of every DEL on the server: nobody waits.
    if WAITING.load(Relaxed) == 0 || deleting_own() || event.is_null() {
        return 0;
    }
    // SAFETY: the server passes a NUL-terminated event name.
    let event = unsafe { std::ffi::CStr::from_ptr(event) }.to_bytes();
    if !matches!(event, b"del" | b"rename_from" | b"move_from") {
        return 0;
    }
    // SAFETY: the server's context for this event; `key` its key, live for it.
    unsafe {
        entry::with_ctx(ctx, "the waiters' key events", 0, |ctx| {
            key_gone(ctx, key);
            0
        })
    }
}

/// Answers the waiters of `key` (in the selected database) [`KEY_GONE`].
///
/// # Safety
/// `key` is a live string for the call.
unsafe fn key_gone(ctx: Ctx<'_>, key: *mut RedisModuleString) {
    let mut len = 0usize;
    // SAFETY: a live string (the contract).
    let ptr = unsafe { api!(RedisModule_StringPtrLen(key, &mut len)) };
    if ptr.is_null() {
        return;
    }
    // SAFETY: StringPtrLen gives the string's buffer and length.
    let name = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    // SAFETY: the event's context (a `Ctx`).
    let at: QueueKey = (unsafe { api!(RedisModule_GetSelectedDb(ctx.raw())) }, name.to_vec());
    QUEUES.with(|q| {
        if let Some(queue) = q.borrow_mut().get_mut(&at) {
            queue.answer_all(&at, KEY_GONE);
        }
    });
}

/// Arms the timer that looks at the queues again in `ms` (at most
/// [`TICK_MS`], at least 1). The server runs module timers on its own
/// clock; a wait that ends by lease expiry is seen at its deadline.
///
/// # Safety
/// `ctx` is the context of the running command or timer callback.
unsafe fn arm(ctx: *mut RedisModuleCtx, ms: Option<u64>) {
    let ms = ms.map_or(TICK_MS, |m| (m as i64).clamp(1, TICK_MS));
    // SAFETY: `ctx` is a live context (the contract); `on_tick` has the signature
    // the server calls it with.
    unsafe { api!(RedisModule_CreateTimer(ctx, ms, Some(on_tick), std::ptr::null_mut())) };
}

/// After a write that may have made room on `key` (a release): grants the
/// waiters that fit, at once.
pub fn wake(ctx: Ctx<'_>, key: &[u8]) {
    if WAITING.load(Relaxed) == 0 {
        return;
    }
    let at = (selected_db(ctx), key.to_vec());
    if QUEUES.with(|q| q.borrow().contains_key(&at)) {
        wake_queue(ctx, &at);
    }
}

/// A chosen waiter's reply: the acquire, made now, against the key's limit.
fn granted(ctx: Ctx<'_>, args: Argv<'_>) {
    // SAFETY: the reply callback's context (a `Ctx`).
    let data = unsafe { api!(RedisModule_GetBlockedClientPrivateData(ctx.raw())) } as *mut Unblocked;
    if data.is_null() {
        return reply_error(ctx, "ERR the wait ended without a lease");
    }
    // SAFETY: made by `wake_queue` with Box::into_raw; freed only by `on_free`.
    let (at, seq, error) = unsafe { ((*data).at.clone(), (*data).seq, (*data).error) };
    let limit = leave(&at, seq);
    if let Some(e) = error {
        return reply_error(ctx, e);
    }
    GRANTS.fetch_add(1, Relaxed);
    GRANTING.set(true);
    super::kind_command_with::<Acquire>(ctx, args, |a| {
        let (limiter, opts) = parse_without_wait(a)?;
        Ok((limit.map_or(Ok(limiter), |l| limiter.with_limit(l))?, opts))
    });
    GRANTING.set(false);
}

/// A waiter whose timeout passed (or `CLIENT UNBLOCK`): it leaves the
/// queue, and gets what an acquire made now gets; the next waiters may fit.
fn timed_out(ctx: Ctx<'_>, args: Argv<'_>) {
    // SAFETY: the timeout callback's context (a `Ctx`).
    let bc = unsafe { api!(RedisModule_GetBlockedClientHandle(ctx.raw())) };
    let found = BLOCKED.with(|b| b.borrow().get(&(bc as usize)).cloned());
    if let Some((at, seq)) = found {
        leave(&at, seq);
        TIMEOUTS.fetch_add(1, Relaxed);
        acquire_now(ctx, args);
        if QUEUES.with(|q| q.borrow().contains_key(&at)) {
            wake_queue(ctx, &at);
        }
    } else {
        acquire_now(ctx, args);
    }
    // The server frees a blocked client's handle (and its reply client)
    // only once the module unblocks it, however the wait ended: a timeout
    // here is never chosen (the server times out no client already
    // unblocked), so this is its one unblock.
    // SAFETY: `bc` is this waiter's blocked client, not unblocked before
    // (see above); no private data.
    unsafe { api!(RedisModule_UnblockClient(bc, std::ptr::null_mut())) };
}

unsafe extern "C" fn on_reply(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's context and argv for this callback.
    unsafe { entry::command(ctx, argv, argc, granted) }
}

unsafe extern "C" fn on_timeout(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: as above.
    unsafe { entry::command(ctx, argv, argc, timed_out) }
}

/// The private data of an unblocked waiter, once its reply is made (or its
/// client gone): a chosen waiter whose client closed first leaves the queue.
unsafe extern "C" fn on_free(_ctx: *mut RedisModuleCtx, data: *mut c_void) {
    entry::guard("a waiter's release", (), || {
        if data.is_null() {
            return;
        }
        // SAFETY: made by `wake_queue` with Box::into_raw, freed once, here.
        let data = unsafe { Box::from_raw(data.cast::<Unblocked>()) };
        leave(&data.at, data.seq);
    })
}

/// A waiter's connection closed: it leaves the queue (the next tick wakes
/// the waiters behind it), and is unblocked unless it was chosen (then
/// `wake_queue` unblocked it already): the server frees a blocked client's
/// handle only once the module unblocks it, even when its client is gone.
unsafe extern "C" fn on_disconnect(_ctx: *mut RedisModuleCtx, bc: *mut RedisModuleBlockedClient) {
    entry::guard("a waiter's disconnection", (), || {
        if let Some((at, seq)) = BLOCKED.with(|b| b.borrow().get(&(bc as usize)).cloned()) {
            let chosen = QUEUES.with(|q| {
                q.borrow().get(&at).and_then(|queue| queue.find(seq).map(|i| queue.waiters[i].chosen)).unwrap_or(false)
            });
            leave(&at, seq);
            if !chosen {
                api!(RedisModule_UnblockClient(bc, std::ptr::null_mut()));
            }
        }
    })
}

/// Every [`TICK_MS`] ms while anyone waits: each key with waiters is looked
/// at (lease expiry on the server's clock, a deleted or replaced key, a
/// raised limit).
unsafe extern "C" fn on_tick(ctx: *mut RedisModuleCtx, _data: *mut c_void) {
    // SAFETY: the server's context for this timer.
    let next = unsafe {
        entry::with_ctx(ctx, "the waiters' timer", None, |ctx| {
            let keys: Vec<QueueKey> = QUEUES.with(|q| q.borrow().keys().cloned().collect());
            let mut next: Option<u64> = None;
            for at in &keys {
                // SAFETY: the timer callback's context (a `Ctx`); `at.0` is
                // a database a command ran in. (Inside `with_ctx`'s unsafe
                // block, but said here, where the call is.)
                #[allow(unused_unsafe)]
                let selected = unsafe { api!(RedisModule_SelectDb(ctx.raw(), at.0)) };
                if selected == raw::REDISMODULE_OK as c_int {
                    if let Some(ms) = wake_queue(ctx, at) {
                        next = Some(next.map_or(ms, |n| n.min(ms)));
                    }
                }
            }
            next
        })
    };
    if QUEUES.with(|q| q.borrow().is_empty()) {
        TICKING.set(false);
        // SAFETY: the server's context for this timer.
        unsafe { unwatch_keys(ctx) };
    } else {
        // SAFETY: the server's context for this timer.
        unsafe { arm(ctx, next) };
    }
}
