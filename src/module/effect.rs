//! Propagating effects, never commands that read the clock.
//!
//! A write is replicated (and appended to the AOF) as
//! `RL.APPLY key <payload>`, where the payload is the new state and its
//! absolute expiry, so replicas and AOF replay store exactly the master's
//! state without looking at any clock. Two arguments keep the replication
//! stream short. RL.APPLY is refused unless it comes over the master link or
//! from AOF loading, so no client can forge limiter state. A replica
//! propagates each RL.APPLY it runs verbatim, into its own AOF.
//!
//! Payload (little-endian): `tag:u8  word:u64 × WORDS  expire_at_ms:u64`,
//! where `expire_at_ms == 0` means "leave the expiry alone" (AOF rewrite,
//! where the server emits PEXPIREAT itself).

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use redis_module::raw::{self, RedisModuleCtx};

use super::entry;
use super::ffi::{api, has, Ctx, KeyName};
use super::names;

/// What became of a write's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagated {
    /// Handed to the server for the AOF and replicas.
    Sent,
    /// The server refused it.
    Refused,
}

/// Set once this server may feed replicas: it has or had a replica (a sync
/// forked), a replication backlog, or another role than a plain master.
/// Never cleared. Starts set, until the load hook has looked.
static REPLICATION: AtomicBool = AtomicBool::new(true);

/// Whether anything consumes propagated effects. The server itself drops a
/// propagated command when there is no AOF, no replica and no replication
/// backlog; deciding that here first skips building the command, which is
/// most of what a write costs beyond SET PX (the command lookup inside
/// RedisModule_Replicate alone). A replica that connects later gets the
/// state through its full sync (a fork, which sets [`REPLICATION`] before
/// any later write), so it never misses an effect.
pub fn needed(flags: u32) -> bool {
    flags & (raw::REDISMODULE_CTX_FLAGS_AOF | raw::REDISMODULE_CTX_FLAGS_CLUSTER) != 0
        || REPLICATION.load(Ordering::Relaxed)
}

/// Hands the effect `payload` for `key` to the server, for the AOF and
/// replicas. Call only when [`needed`].
pub fn replicate(ctx: Ctx<'_>, key: KeyName<'_>, payload: &[u8]) -> Propagated {
    // SAFETY: the command's context and key name (their types); the payload is live
    // for the call, its length passed with it.
    let status = unsafe {
        api!(RedisModule_Replicate(
            ctx.raw(),
            names::apply().as_ptr(),
            c"sb".as_ptr(),
            key.raw(),
            payload.as_ptr(),
            payload.len()
        ))
    };
    sent(status)
}

/// Propagates the deletion of `key`, as `DEL key`. Call only when [`needed`].
pub fn replicate_delete(ctx: Ctx<'_>, key: KeyName<'_>) -> Propagated {
    // SAFETY: the command's context and key name (their types); the payload is live
    // for the call, its length passed with it.
    sent(unsafe { api!(RedisModule_Replicate(ctx.raw(), c"DEL".as_ptr(), c"s".as_ptr(), key.raw())) })
}

fn sent(status: c_int) -> Propagated {
    if status == raw::REDISMODULE_OK as c_int {
        Propagated::Sent
    } else {
        Propagated::Refused
    }
}

/// Counts a write nobody consumes as a change to the dataset
/// (`rdb_changes_since_last_save`), so RDB save points fire for limiter
/// traffic. Only the propagating calls (`RedisModule_Replicate`,
/// `ReplicateVerbatim`, `Call`) bump the server's dirty counter, and
/// `ReplicateVerbatim` is the cheapest of them by far: it copies nothing and
/// looks nothing up, where `RedisModule_Replicate` looks the command name up
/// (on Redis 7.0 that splits and allocates, about 2,000 instructions: 40% of
/// a whole decision).
///
/// It never propagates the clock-reading command. `alsoPropagate` drops it at
/// once unless the server has an AOF, or is a master with a replication
/// backlog or replicas (`shouldPropagate`, Redis 7.0+, Redis 8, Valkey 9),
/// and this is called only when [`needed`] says none of those can be:
/// - the AOF: `needed` reads the same server state (the context's AOF flag
///   is `aof_state != AOF_OFF`), at the same moment, so a `CONFIG SET
///   appendonly yes` later in the same MULTI finds nothing queued;
/// - a backlog or replicas: [`REPLICATION`] is set by the load, the fork
///   of every full sync, role changes, replica changes and the end of
///   loading. The one moment a backlog exists before any of those is
///   between a replica's SYNC and the fork of its full sync (a diskless sync
///   delay): what is fed to the backlog then lies before the offset that
///   sync starts from, under a replication id made at that SYNC, so no
///   replica is ever sent it; the write itself is in the snapshot.
///
/// `tests/propagation.rs` checks the second: the replica runs no limiter
/// command, only `RL.APPLY`.
pub fn count_change(ctx: Ctx<'_>) {
    // SAFETY: the command's context (a `Ctx`).
    unsafe { api!(RedisModule_ReplicateVerbatim(ctx.raw())) };
}

/// For the fuzzing harness, whose stand-in server has no replica, backlog
/// or AOF: nothing consumes effects.
#[cfg(feature = "fuzzing")]
pub fn assume_no_consumers() {
    REPLICATION.store(false, Ordering::Relaxed);
}

/// Decides [`REPLICATION`] at load and watches for what sets it later.
pub fn watch_replication(ctx: Ctx<'_>) {
    let ctx = ctx.raw();
    // SAFETY (the five calls): the load's context, from a `Ctx`.
    let subscribed = has!(RedisModule_SubscribeToServerEvent)
        && unsafe { subscribe(ctx, raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED, on_role_changed) }
        && unsafe { subscribe(ctx, raw::REDISMODULE_EVENT_FORK_CHILD, on_fork) }
        && unsafe { subscribe(ctx, raw::REDISMODULE_EVENT_LOADING, on_loading) }
        && unsafe { subscribe(ctx, raw::REDISMODULE_EVENT_REPLICA_CHANGE, on_role_changed) };
    // Without the events, or if the server already replicates, always propagate.
    let replicating = !subscribed || unsafe { replication_active(ctx) };
    REPLICATION.store(replicating, Ordering::Relaxed);
}

type ServerEventHandler = unsafe extern "C" fn(*mut RedisModuleCtx, raw::RedisModuleEvent, u64, *mut c_void);

/// # Safety
/// `ctx` is the context of the running load (or callback).
unsafe fn subscribe(ctx: *mut RedisModuleCtx, id: u64, callback: ServerEventHandler) -> bool {
    let event = raw::RedisModuleEvent { id, dataver: 1 };
    // SAFETY: `ctx` is the load's (the contract).
    unsafe { api!(RedisModule_SubscribeToServerEvent(ctx, event, Some(callback))) == raw::REDISMODULE_OK as c_int }
}

/// A master that becomes a replica (or the reverse) keeps a backlog its
/// former siblings may resume from: propagate from now on. Also used for a
/// replica coming online or going offline, a backstop: any replica at all
/// means the stream matters.
unsafe extern "C" fn on_role_changed(_: *mut RedisModuleCtx, _: raw::RedisModuleEvent, _: u64, _: *mut c_void) {
    entry::guard("a replication event", (), || REPLICATION.store(true, Ordering::Relaxed));
}

/// A full sync to a replica always forks (disk or diskless). The event fires
/// in the parent right after the fork, before any other command runs, so
/// every write before it is in the replica's snapshot and every write after
/// it is propagated.
unsafe extern "C" fn on_fork(ctx: *mut RedisModuleCtx, _: raw::RedisModuleEvent, sub: u64, _: *mut c_void) {
    if sub == raw::REDISMODULE_SUBEVENT_FORK_CHILD_BORN {
        // SAFETY: the server's context for this event.
        unsafe { entry::with_ctx(ctx, "the fork event", (), look_again) };
    }
}

/// Loading an RDB file restores the replication id and creates a backlog, so
/// replicas of the server before its restart resume with a partial sync: no
/// fork, no role change. The module loads before the data does, so look
/// again once loading ends (a DEBUG RELOAD or an AOF load as well).
unsafe extern "C" fn on_loading(ctx: *mut RedisModuleCtx, _: raw::RedisModuleEvent, sub: u64, _: *mut c_void) {
    if sub == raw::REDISMODULE_SUBEVENT_LOADING_ENDED {
        // SAFETY: the server's context for this event.
        unsafe { entry::with_ctx(ctx, "the loading event", (), look_again) };
    }
}

/// Sets [`REPLICATION`] if the server now replicates (asking INFO only
/// while it is still unset).
fn look_again(ctx: Ctx<'_>) {
    // SAFETY: the callback's context, from a `Ctx`.
    if !REPLICATION.load(Ordering::Relaxed) && unsafe { replication_active(ctx.raw()) } {
        REPLICATION.store(true, Ordering::Relaxed);
    }
}

/// Whether the server has replicas, a replication backlog, or is not a
/// plain master (INFO replication). True if it cannot tell.
/// # Safety
/// `ctx` is the context of the running load or callback.
unsafe fn replication_active(ctx: *mut RedisModuleCtx) -> bool {
    if !(has!(RedisModule_GetServerInfo)
        && has!(RedisModule_ServerInfoGetFieldSigned)
        && has!(RedisModule_ServerInfoGetFieldC)
        && has!(RedisModule_FreeServerInfo))
    {
        return true;
    }
    // SAFETY: `ctx` is a live context (the contract); the section name is a C string.
    let info = unsafe { api!(RedisModule_GetServerInfo(ctx, c"replication".as_ptr())) };
    if info.is_null() {
        return true;
    }
    let signed = |field: &CStr| -> Option<i64> {
        let mut err: c_int = 0;
        // SAFETY: `info` was just returned by GetServerInfo, not yet freed; the field
        // name is a C string.
        let v = unsafe { api!(RedisModule_ServerInfoGetFieldSigned(info, field.as_ptr(), &mut err)) };
        (err == 0).then_some(v)
    };
    // SAFETY: `info` was just returned by GetServerInfo, not yet freed; the field
    // name is a C string.
    let role = unsafe { api!(RedisModule_ServerInfoGetFieldC(info, c"role".as_ptr())) };
    // SAFETY: a NUL-terminated string owned by `info`, read before it is freed.
    let master = !role.is_null() && unsafe { CStr::from_ptr(role) }.to_bytes() == b"master";
    let active = !master
        || signed(c"connected_slaves").is_none_or(|n| n > 0)
        || signed(c"repl_backlog_active").is_none_or(|n| n != 0);
    // SAFETY: `info` came from GetServerInfo with this context, freed once.
    unsafe { api!(RedisModule_FreeServerInfo(ctx, info)) };
    active
}
