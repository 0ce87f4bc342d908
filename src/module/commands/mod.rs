//! The limiter commands. Each one is: parse -> read the key -> decide in the
//! pure core -> (if it consumed) write, expire, signal, notify, propagate ->
//! reply. Nothing is read or written before the arguments are valid, and
//! nothing is written or propagated for a denial, a PEEK or COST 0, except
//! a repair: a stored state further ahead than the parameters allow (a
//! backward clock jump, a tightened limit) is stored as drained by the first
//! call that sees it, other than a PEEK (see the core).

pub mod all;
pub mod gcra;
pub mod slide;
pub mod throttle;
pub mod token_bucket;

use std::ffi::c_void;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};

use crate::core::{Decision, Outcome, Write};

use super::args::{ArgError, Options};
use super::clock;
use super::effect;
use super::ffi::{api, context_flags, reply_error, reply_wrong_arity, Argv, OpenKey, Slot};
use super::reply;
use super::stats::{self, Counters};
use super::types::{self, Stored};

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// One limiter command: how to parse it and how to decide.
pub trait Limiter: Sized {
    /// The state it keeps (which also names the keyspace event a write fires).
    type State: Stored;
    /// Its `INFO rl` counters.
    const STATS: &'static Counters;
    /// Parses everything after the key name. `args[0]` is the command, `args[1]` the key.
    fn parse(args: &Argv<'_>) -> Result<(Self, Options), ArgError>;
    fn check(&self, state: Option<Self::State>, now_us: u64, cost: u64) -> Outcome<Self::State>;
    /// Whether a call that stores nothing must delete the key instead: its
    /// stored state no longer counts anything under these parameters but
    /// would keep an expiry that no longer matches (a repair).
    fn forgets(&self, _state: &Self::State, _now_us: u64) -> bool {
        false
    }
    /// Replies with a decision (`flags`: the command's context flags): the
    /// five fields, an array or a RESP3 map.
    fn reply(ctx: *mut RedisModuleCtx, decision: &Decision, flags: u32) {
        reply::decision(ctx, decision, reply::wants_map(flags));
    }
}

/// Runs one limiter command end to end.
pub fn run<L: Limiter>(ctx: *mut RedisModuleCtx, args: Argv<'_>) {
    let mut tally = L::STATS.tally();
    let (limiter, opts) = match L::parse(&args) {
        Ok(parsed) => parsed,
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let name = args.string(1);
    let key = OpenKey::write(ctx, name);
    let Ok(held) = read_state::<L::State>(&key) else {
        drop(key);
        return reply_error(ctx, WRONGTYPE);
    };

    let now_us = clock::now_us();
    let outcome = limiter.check(held.map(|(state, _)| state), now_us, opts.cost);
    let flags = context_flags(ctx);

    if let (false, Some(write)) = (opts.peek, outcome.write) {
        let repair = opts.cost == 0 || !outcome.decision.allowed;
        let stored = store(&key, held.map(|(_, value)| value), &write, now_us, repair);
        drop(key);
        if !stored {
            return reply_error(ctx, "ERR could not store the limiter state");
        }
        announce::<L>(ctx, name, &write, flags);
    } else if let (false, None, Some((state, _))) = (opts.peek, outcome.write, held) {
        if limiter.forgets(&state, now_us) {
            let deleted = key.delete();
            drop(key);
            if !deleted {
                return reply_error(ctx, "ERR could not store the limiter state");
            }
            announce_deleted(ctx, name);
        }
    } else {
        drop(key);
    }
    tally.decision(&outcome.decision);
    L::reply(ctx, &outcome.decision, flags);
}

/// The key holds another Redis type or another algorithm's state.
pub struct WrongType;

/// The state in a key open for writing, and its value pointer: `None` for
/// an empty key.
#[inline]
pub fn read_state<S: Stored>(key: &OpenKey) -> Result<Option<(S, *mut c_void)>, WrongType> {
    match key.slot() {
        Slot::Empty => Ok(None),
        // SAFETY: the value belongs to `S`'s registered type.
        Slot::Module(ty, value) if ty == S::redis_type() => Ok(Some((unsafe { types::read(value) }, value))),
        _ => Err(WrongType),
    }
}

/// Stores `write` in a key open for writing (in place over `value`, the
/// value [`read_state`] found, else as a new value) and sets its expiry.
/// `repair`: the write consumes nothing (a drained reading made permanent).
/// False if the server refused the new value.
#[inline]
pub fn store<S: Stored>(
    key: &OpenKey,
    value: Option<*mut c_void>,
    write: &Write<S>,
    now_us: u64,
    repair: bool,
) -> bool {
    let stored = match value {
        // SAFETY: as in `read_state`; the key is open for writing.
        Some(value) => unsafe { types::update(key, value, write.state) },
        None => {
            let created = key.set_value(S::redis_type(), types::new_value(write.state));
            if created {
                stats::count(&stats::KEYS_CREATED);
            }
            created
        }
    };
    // An expiry the server refused is a failed store: PTTL must equal reset.
    let stored = stored && key.set_expire_at(write.expire_at_ms, now_us / 1000);
    if stored && repair {
        stats::count(&stats::REPAIRS);
    }
    stored
}

/// Tells the server about a stored write: WATCH, keyspace event, and
/// propagation of its effect (`flags`: the command's context flags). Call
/// once the key is closed.
#[inline]
pub fn announce<L: Limiter>(
    ctx: *mut RedisModuleCtx,
    name: *mut RedisModuleString,
    write: &Write<L::State>,
    flags: u32,
) {
    api!(RedisModule_SignalModifiedKey(ctx, name));
    api!(RedisModule_NotifyKeyspaceEvent(ctx, raw::REDISMODULE_NOTIFY_MODULE, L::State::EVENT.as_ptr(), name));
    match effect::propagate(ctx, name, &write.state, write.expire_at_ms, flags) {
        effect::Propagated::Sent => stats::count(&stats::EFFECTS),
        effect::Propagated::NotNeeded => {}
        effect::Propagated::Refused => {
            super::log_warning("RL.APPLY could not be propagated; replicas and the AOF may miss a write")
        }
    }
}

/// Tells the server about a key deleted as a repair, as DEL would: WATCH,
/// the `del` keyspace event, and `DEL key` propagated (it reads no clock,
/// so it is safe to hand to any consumer, and it counts as a change).
pub fn announce_deleted(ctx: *mut RedisModuleCtx, name: *mut RedisModuleString) {
    stats::count(&stats::REPAIRS);
    api!(RedisModule_SignalModifiedKey(ctx, name));
    api!(RedisModule_NotifyKeyspaceEvent(ctx, raw::REDISMODULE_NOTIFY_GENERIC, c"del".as_ptr(), name));
    if api!(RedisModule_Replicate(ctx, c"DEL".as_ptr(), c"s".as_ptr(), name))
        != raw::REDISMODULE_OK as std::os::raw::c_int
    {
        super::log_warning("DEL could not be propagated; replicas and the AOF may miss a write");
    }
}
