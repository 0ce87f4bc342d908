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
//! where the server emits PEXPIREAT itself). The tag names the type and the
//! unit of its times: `g` and `t` (GCRA, token bucket) carry ns; `G` and `T`,
//! which 0.1.0 wrote (old AOF files, an 0.1.0 master's stream), carry µs and
//! are still read; `S` (sliding window, in ms) is unchanged.

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};

use crate::core::{GcraState, SlidingWindowState, TokenBucketState};

use super::clock;
use super::ffi::{api, has, reply_error, Argv, OpenKey};
use super::types::{self, Stored, MAX_WORDS};

pub const COMMAND: &CStr = c"RL.APPLY";

/// The longest payload of any type.
pub const MAX_PAYLOAD: usize = 1 + 8 * MAX_WORDS + 8;

/// Writes the payload for `state` into `buf` and returns it.
pub fn encode<'b, S: Stored>(state: &S, expire_at_ms: u64, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8] {
    buf[0] = S::TAG;
    let words = state.to_words();
    let mut at = 1;
    for w in words.iter().take(S::WORDS) {
        buf[at..at + 8].copy_from_slice(&w.to_le_bytes());
        at += 8;
    }
    buf[at..at + 8].copy_from_slice(&expire_at_ms.to_le_bytes());
    &buf[..at + 8]
}

/// The state and expiry in a payload of type `S`, if it is well formed.
pub fn decode<S: Stored>(payload: &[u8]) -> Option<(S, u64)> {
    if payload.len() != 1 + 8 * S::WORDS + 8 {
        return None;
    }
    let from_words: fn([u64; MAX_WORDS]) -> Option<S> = match payload[0] {
        t if t == S::TAG => S::from_words,
        t if t == S::V0_TAG => S::from_v0_words,
        _ => return None,
    };
    let word = |i: usize| u64::from_le_bytes(payload[1 + 8 * i..9 + 8 * i].try_into().unwrap_or([0; 8]));
    let mut words = [0u64; MAX_WORDS];
    for (i, w) in words.iter_mut().enumerate().take(S::WORDS) {
        *w = word(i);
    }
    Some((from_words(words)?, word(S::WORDS)))
}

/// What became of a write's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagated {
    /// Handed to the server for the AOF and replicas.
    Sent,
    /// Nothing would consume it: no AOF and no replication (see [`needed`]).
    NotNeeded,
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

/// Propagates a write of `state` to `key` (`flags`: the command's context flags).
pub fn propagate<S: Stored>(
    ctx: *mut RedisModuleCtx,
    key: *mut RedisModuleString,
    state: &S,
    expire_at_ms: u64,
    flags: u32,
) -> Propagated {
    if !needed(flags) {
        return Propagated::NotNeeded;
    }
    let mut buf = [0u8; MAX_PAYLOAD];
    let payload = encode(state, expire_at_ms, &mut buf);
    let status =
        api!(RedisModule_Replicate(ctx, COMMAND.as_ptr(), c"sb".as_ptr(), key, payload.as_ptr(), payload.len()));
    if status == raw::REDISMODULE_OK as c_int {
        Propagated::Sent
    } else {
        Propagated::Refused
    }
}

/// Decides [`REPLICATION`] at load and watches for what sets it later.
pub fn watch_replication(ctx: *mut RedisModuleCtx) {
    let subscribed = has!(RedisModule_SubscribeToServerEvent)
        && subscribe(ctx, raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED, on_role_changed)
        && subscribe(ctx, raw::REDISMODULE_EVENT_FORK_CHILD, on_fork)
        && subscribe(ctx, raw::REDISMODULE_EVENT_LOADING, on_loading)
        && subscribe(ctx, raw::REDISMODULE_EVENT_REPLICA_CHANGE, on_role_changed);
    // Without the events, or if the server already replicates, always propagate.
    let replicating = !subscribed || replication_active(ctx);
    REPLICATION.store(replicating, Ordering::Relaxed);
}

type ServerEventHandler = unsafe extern "C" fn(*mut RedisModuleCtx, raw::RedisModuleEvent, u64, *mut c_void);

fn subscribe(ctx: *mut RedisModuleCtx, id: u64, callback: ServerEventHandler) -> bool {
    let event = raw::RedisModuleEvent { id, dataver: 1 };
    api!(RedisModule_SubscribeToServerEvent(ctx, event, Some(callback))) == raw::REDISMODULE_OK as c_int
}

/// A master that becomes a replica (or the reverse) keeps a backlog its
/// former siblings may resume from: propagate from now on. Also used for a
/// replica coming online or going offline, a backstop: any replica at all
/// means the stream matters.
unsafe extern "C" fn on_role_changed(_: *mut RedisModuleCtx, _: raw::RedisModuleEvent, _: u64, _: *mut c_void) {
    REPLICATION.store(true, Ordering::Relaxed);
}

/// A full sync to a replica always forks (disk or diskless). The event fires
/// in the parent right after the fork, before any other command runs, so
/// every write before it is in the replica's snapshot and every write after
/// it is propagated.
unsafe extern "C" fn on_fork(ctx: *mut RedisModuleCtx, _: raw::RedisModuleEvent, sub: u64, _: *mut c_void) {
    if sub == raw::REDISMODULE_SUBEVENT_FORK_CHILD_BORN {
        look_again(ctx);
    }
}

/// Loading an RDB file restores the replication id and creates a backlog, so
/// replicas of the server before its restart resume with a partial sync: no
/// fork, no role change. The module loads before the data does, so look
/// again once loading ends (a DEBUG RELOAD or an AOF load as well).
unsafe extern "C" fn on_loading(ctx: *mut RedisModuleCtx, _: raw::RedisModuleEvent, sub: u64, _: *mut c_void) {
    if sub == raw::REDISMODULE_SUBEVENT_LOADING_ENDED {
        look_again(ctx);
    }
}

/// Sets [`REPLICATION`] if the server now replicates (asking INFO only
/// while it is still unset).
fn look_again(ctx: *mut RedisModuleCtx) {
    if !REPLICATION.load(Ordering::Relaxed) && replication_active(ctx) {
        REPLICATION.store(true, Ordering::Relaxed);
    }
}

/// Whether the server has replicas, a replication backlog, or is not a
/// plain master (INFO replication). True if it cannot tell.
fn replication_active(ctx: *mut RedisModuleCtx) -> bool {
    if !(has!(RedisModule_GetServerInfo)
        && has!(RedisModule_ServerInfoGetFieldSigned)
        && has!(RedisModule_ServerInfoGetFieldC)
        && has!(RedisModule_FreeServerInfo))
    {
        return true;
    }
    let info = api!(RedisModule_GetServerInfo(ctx, c"replication".as_ptr()));
    if info.is_null() {
        return true;
    }
    let signed = |field: &CStr| -> Option<i64> {
        let mut err: c_int = 0;
        let v = api!(RedisModule_ServerInfoGetFieldSigned(info, field.as_ptr(), &mut err));
        (err == 0).then_some(v)
    };
    let role = api!(RedisModule_ServerInfoGetFieldC(info, c"role".as_ptr()));
    // SAFETY: a NUL-terminated string owned by `info`, read before it is freed.
    let master = !role.is_null() && unsafe { CStr::from_ptr(role) }.to_bytes() == b"master";
    let active = !master
        || signed(c"connected_slaves").is_none_or(|n| n > 0)
        || signed(c"repl_backlog_active").is_none_or(|n| n != 0);
    api!(RedisModule_FreeServerInfo(ctx, info));
    active
}

/// `RL.APPLY key payload`: store a propagated effect. Internal.
pub fn apply_command(ctx: *mut RedisModuleCtx, args: Argv<'_>) {
    let flags = super::ffi::context_flags(ctx);
    if flags & (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) == 0 {
        reply_error(ctx, "ERR RL.APPLY is internal: it is accepted only from the master link or while loading the AOF");
        return;
    }
    if args.len() != 3 {
        super::ffi::reply_wrong_arity(ctx);
        return;
    }
    let payload = args.bytes(2);
    let applied = match payload.first() {
        Some(&GcraState::TAG | &GcraState::V0_TAG) => store::<GcraState>(ctx, args.string(1), payload),
        Some(&TokenBucketState::TAG | &TokenBucketState::V0_TAG) => {
            store::<TokenBucketState>(ctx, args.string(1), payload)
        }
        Some(&SlidingWindowState::TAG) => store::<SlidingWindowState>(ctx, args.string(1), payload),
        _ => false,
    };
    if applied {
        // The server propagates no module command by itself, so without this
        // a replica's own AOF would never hold the effects it applied, and
        // the replica would restart from that AOF (after a failover, say)
        // with every limiter full again. Propagating the effect verbatim
        // feeds the replica's AOF; it reaches nothing else: a replica passes
        // its master's stream on to its own replicas unchanged, and nothing
        // is propagated while the AOF is loading.
        if has!(RedisModule_ReplicateVerbatim) {
            api!(RedisModule_ReplicateVerbatim(ctx));
        }
        api!(RedisModule_ReplyWithSimpleString(ctx, c"OK".as_ptr()));
    } else {
        reply_error(ctx, "ERR RL.APPLY: malformed payload");
    }
}

fn store<S: Stored>(ctx: *mut RedisModuleCtx, name: *mut RedisModuleString, payload: &[u8]) -> bool {
    let Some((state, expire_at_ms)) = decode::<S>(payload) else {
        return false;
    };
    let key = OpenKey::write(ctx, name);
    match key.slot() {
        // SAFETY: the value is of `S`'s registered type.
        super::ffi::Slot::Module(ty, value) if ty == S::redis_type() => {
            if !unsafe { types::update(&key, value, state) } {
                return false;
            }
        }
        _ => {
            if !key.set_value(S::redis_type(), types::new_value(state)) {
                return false;
            }
        }
    }
    if expire_at_ms != 0 {
        key.set_expire_at(expire_at_ms, clock::now_us() / 1000);
    }
    drop(key);
    api!(RedisModule_SignalModifiedKey(ctx, name));
    // The same event the write fired on the master, as replicas of built-in
    // commands fire theirs: clients reading from a replica see it too.
    api!(RedisModule_NotifyKeyspaceEvent(ctx, raw::REDISMODULE_NOTIFY_MODULE, S::EVENT.as_ptr(), name));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        let mut buf = [0u8; MAX_PAYLOAD];
        let g = GcraState { tat_ns: 1_800_000_000_123_456_789 };
        let p = encode(&g, 1_800_000_000_124, &mut buf).to_vec();
        assert_eq!(p.len(), 17);
        assert_eq!(decode::<GcraState>(&p), Some((g, 1_800_000_000_124)));
        assert_eq!(decode::<TokenBucketState>(&p), None, "tags differ");

        let s = SlidingWindowState { window_start_ms: 1_800_000_000_000, window_ms: 60_000, cur: 7, prev: u32::MAX };
        let p = encode(&s, 0, &mut buf).to_vec();
        assert_eq!(p.len(), 33);
        assert_eq!(decode::<SlidingWindowState>(&p), Some((s, 0)));
    }

    #[test]
    fn payloads_of_0_1_0_carry_microseconds() {
        // 0.1.0's GCRA payload: tag G, the TAT in µs, the expiry.
        let mut p = vec![b'G'];
        p.extend_from_slice(&1_800_000_000_123_456u64.to_le_bytes());
        p.extend_from_slice(&1_800_000_000_124u64.to_le_bytes());
        let want = GcraState { tat_ns: 1_800_000_000_123_456_000 };
        assert_eq!(decode::<GcraState>(&p), Some((want, 1_800_000_000_124)));
        assert_eq!(decode::<TokenBucketState>(&p), None, "tags differ");
        p[0] = b'T';
        let want = TokenBucketState { full_at_ns: 1_800_000_000_123_456_000 };
        assert_eq!(decode::<TokenBucketState>(&p), Some((want, 1_800_000_000_124)));
        // A new payload is never read as an old one, nor the other way round.
        let mut buf = [0u8; MAX_PAYLOAD];
        assert_eq!(encode(&want, 0, &mut buf)[0], b't');
        assert_ne!(GcraState::TAG, GcraState::V0_TAG);
        // 0.1.0 accepted refills up to 10^15 ms: a time past 2^63 ns is
        // kept as the largest valid one (read as drained, then repaired).
        p[1..9].copy_from_slice(&(u64::MAX / 1000).to_le_bytes());
        assert_eq!(decode::<TokenBucketState>(&p).map(|s| s.0.full_at_ns), Some((1 << 63) - 1));
        p[1..9].copy_from_slice(&(1u64 << 63).to_le_bytes());
        assert_eq!(decode::<TokenBucketState>(&p), None);
    }

    #[test]
    fn malformed_payloads_are_refused() {
        assert_eq!(decode::<GcraState>(b""), None);
        assert_eq!(decode::<GcraState>(b"G1234567"), None);
        let mut p = vec![b'S'];
        p.extend_from_slice(&[0u8; 8]);
        p.extend_from_slice(&0u64.to_le_bytes()); // window_ms 0: no valid state has it
        p.extend_from_slice(&[0u8; 16]);
        assert_eq!(decode::<SlidingWindowState>(&p), None);
    }
}
