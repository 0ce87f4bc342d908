//! The limiter commands. Each one is: parse -> read the key -> decide in the
//! pure core -> (if it consumed) write, expire, signal, notify, propagate ->
//! reply. Nothing is read or written before the arguments are valid, and
//! nothing is written or propagated for a denial, a PEEK or COST 0.

pub mod gcra;
pub mod slide;
pub mod token_bucket;

use std::ffi::CStr;

use redis_module::raw::{self, RedisModuleCtx};

use crate::core::Outcome;

use super::args::{ArgError, Options};
use super::clock;
use super::effect;
use super::ffi::{api, reply_error, reply_wrong_arity, Argv, OpenKey, Slot};
use super::reply;
use super::types::{self, Stored};

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// One limiter command: how to parse it and how to decide.
pub trait Limiter: Sized {
    type State: Stored;
    /// The keyspace event fired on each write (class `d`, module events).
    const EVENT: &'static CStr;
    /// Parses everything after the key name. `args[0]` is the command, `args[1]` the key.
    fn parse(args: &Argv<'_>) -> Result<(Self, Options), ArgError>;
    fn check(&self, state: Option<Self::State>, now_us: u64, cost: u64) -> Outcome<Self::State>;
}

/// Runs one limiter command end to end.
pub fn run<L: Limiter>(ctx: *mut RedisModuleCtx, args: Argv<'_>) {
    let (limiter, opts) = match L::parse(&args) {
        Ok(parsed) => parsed,
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let name = args.string(1);
    let key = OpenKey::write(ctx, name);
    let (state, value) = match key.slot() {
        Slot::Empty => (None, None),
        // SAFETY: the value belongs to `L::State`'s registered type.
        Slot::Module(ty, value) if ty == L::State::redis_type() => (Some(unsafe { types::read(value) }), Some(value)),
        _ => {
            drop(key);
            return reply_error(ctx, WRONGTYPE);
        }
    };

    let now_us = clock::now_us();
    let outcome = limiter.check(state, now_us, opts.cost);

    if let (false, Some(write)) = (opts.peek, outcome.write) {
        let stored = match value {
            // SAFETY: as above; the key is open for writing.
            Some(value) => {
                unsafe { types::overwrite(value, write.state) };
                true
            }
            None => key.set_value(L::State::redis_type(), types::alloc(write.state)),
        };
        if stored {
            key.set_expire_at(write.expire_at_ms, now_us / 1000);
            drop(key);
            api!(RedisModule_SignalModifiedKey(ctx, name));
            api!(RedisModule_NotifyKeyspaceEvent(ctx, raw::REDISMODULE_NOTIFY_MODULE, L::EVENT.as_ptr(), name));
            if !effect::replicate(ctx, name, &write.state, write.expire_at_ms) {
                super::log_warning("RL.APPLY could not be propagated; replicas and the AOF may miss a write");
            }
        } else {
            drop(key);
            return reply_error(ctx, "ERR could not store the limiter state");
        }
    } else {
        drop(key);
    }
    reply::decision(ctx, &outcome.decision, reply::wants_map(ctx));
}
