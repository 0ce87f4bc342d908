//! The one guarded door: every call from the server into Rust comes in here.
//!
//! Since Rust 1.81 a panic that unwinds out of an `extern "C"` function
//! aborts the process, so a bug anywhere below an entry point would take
//! redis-server down with it. Every entry point the module hands the server
//! (commands, the data-type callbacks, server-event handlers, the INFO
//! callback, module load) runs its body through [`command`] or [`guard`]:
//! a panic becomes an error reply (commands) or a logged no-op with a
//! harmless result (callbacks), and is counted in `INFO rl` as `rl_panics`.
//!
//! The raw context pointers the server passes are wrapped here, once, in
//! [`Ctx`] and [`Argv`]: their lifetime is the callback's, so no code below
//! can keep one beyond the call it was given for, and making one is
//! `unsafe` (only this file does). The data-type callbacks get no context,
//! only their value and I/O handle, and run their bodies through [`guard`].

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};

use super::ffi::{self, log_warning, Argv, Ctx};
use super::stats;

/// A command's body: it may reply as it likes; it must not unwind.
pub type Handler = for<'c> fn(Ctx<'c>, Argv<'c>);

/// The signature the server calls a command with.
pub type RawHandler = unsafe extern "C" fn(*mut RedisModuleCtx, *mut *mut RedisModuleString, c_int) -> c_int;

/// The answer to a command whose handler panicked.
pub const PANIC_REPLY: &str = "ERR internal error in redis-rl (the request was not applied; see the server log)";

/// Runs a command handler; a panic becomes an error reply instead of
/// crossing into C. Handlers compute everything before they start replying,
/// so a panic leaves no half-written reply behind.
///
/// # Safety
/// `ctx`, `argv` and `argc` must be what the server passed to the command.
#[inline]
pub unsafe fn command(
    ctx: *mut RedisModuleCtx,
    argv: *mut *mut RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    // SAFETY: the server's own context and argv for this call, per the contract.
    let (c, args) = unsafe { (Ctx::new(ctx), Argv::new(argv, argc)) };
    if catch_unwind(AssertUnwindSafe(|| handler(c, args))).is_err() {
        stats::count(&stats::PANICS);
        ffi::reply_error(c, PANIC_REPLY);
    }
    raw::REDISMODULE_OK as c_int
}

/// Runs the body of a callback that is not a command (a data-type callback,
/// a server event, INFO, load): a panic is logged (by the panic hook set at
/// load) and counted, and the callback answers `fallback`, the harmless
/// result for its kind (no value, no memory, nothing done). What the body
/// touched is not looked at again after a panic, hence `AssertUnwindSafe`.
#[inline]
pub fn guard<T>(what: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(_) => {
            stats::count(&stats::PANICS);
            log_warning(&format!("a panic in {what} was caught; it did nothing"));
            fallback
        }
    }
}

/// [`guard`] for a callback the server passes a context to.
///
/// # Safety
/// `ctx` must be the context the server passed to this callback.
#[inline]
pub unsafe fn with_ctx<T>(ctx: *mut RedisModuleCtx, what: &str, fallback: T, body: impl FnOnce(Ctx<'_>) -> T) -> T {
    // SAFETY: the server's own context for this callback, per the contract.
    let c = unsafe { Ctx::new(ctx) };
    guard(what, fallback, || body(c))
}

/// A command's entry point: an `extern "C"` function the server calls,
/// which runs `handler` (a [`Handler`]) through [`command`]. An expression
/// (a [`RawHandler`]), so a command's declaration can name it in place.
macro_rules! entry_point {
    ($handler:path) => {{
        unsafe extern "C" fn entry_point(
            ctx: *mut ::redis_module::raw::RedisModuleCtx,
            argv: *mut *mut ::redis_module::raw::RedisModuleString,
            argc: ::std::os::raw::c_int,
        ) -> ::std::os::raw::c_int {
            // SAFETY: the server's own arguments for this call.
            unsafe { $crate::module::entry::command(ctx, argv, argc, $handler) }
        }
        entry_point as $crate::module::entry::RawHandler
    }};
}
pub(crate) use entry_point;
