//! Decision -> reply: a RESP2 array of five integers, or a RESP3 map with
//! the five names and a boolean `allowed`; `RL.ACQUIRE` adds a sixth field,
//! `lease`, and a call with `MAXWAIT` one named `wait_ms`.

use redis_module::raw;

use crate::core::lease::LeaseId;
use crate::core::{Change, Decision};

use super::ffi::{api, cstr, has, reply_array, reply_i64, Ctx};
use super::kinds::Kind;

/// Whether the calling client speaks RESP3 (and the server can build maps),
/// given the command's [`context_flags`](super::ffi::context_flags).
pub fn wants_map(flags: u32) -> bool {
    let can = has!(RedisModule_ReplyWithMap) && has!(RedisModule_ReplyWithBool);
    can && flags & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0
}

/// A map key, as a bulk string like the keys of Redis's own maps (a Lua
/// script under `redis.setresp(3)` reads fields by name only then).
pub fn key(ctx: Ctx<'_>, name: &'static std::ffi::CStr) {
    let bytes = name.to_bytes();
    // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
    // length passed with it.
    unsafe { api!(RedisModule_ReplyWithStringBuffer(ctx.raw(), cstr(name), bytes.len())) };
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// RL.ALL's reply around `parts` per-key replies (`part(i)` answers key
/// `i` as its single command would). RESP2: `[allowed, retry_after_ms, [5 integers] per
/// key]`; RESP3: a map with `allowed` (a boolean), `retry_after_ms` and
/// `limits`.
pub fn all(ctx: Ctx<'_>, allowed: bool, retry_after_ms: i64, parts: usize, map: bool, mut part: impl FnMut(usize)) {
    if map {
        // SAFETY: the command's context (a `Ctx`).
        unsafe { api!(RedisModule_ReplyWithMap(ctx.raw(), 3)) };
        key(ctx, c"allowed");
        // SAFETY: the command's context (a `Ctx`).
        unsafe { api!(RedisModule_ReplyWithBool(ctx.raw(), allowed as std::os::raw::c_int)) };
        key(ctx, c"retry_after_ms");
        reply_i64(ctx, retry_after_ms);
        key(ctx, c"limits");
        reply_array(ctx, parts);
    } else {
        reply_array(ctx, 2 + parts);
        reply_i64(ctx, allowed as i64);
        reply_i64(ctx, retry_after_ms);
    }
    (0..parts).for_each(&mut part);
}

/// Replies with kind `K`'s answer: its decision, and for `RL.ACQUIRE` the
/// lease the written `change` holds (nil when nothing was written: a
/// denial, a PEEK, COST 0); with `MAXWAIT` (`booking`), `wait_ms`.
#[inline]
pub fn kind<K: Kind>(ctx: Ctx<'_>, d: &Decision, change: Option<&Change<K::Write>>, booking: bool, map: bool) {
    if K::LEASE_REPLY {
        with_lease(ctx, d, K::lease(change).map(LeaseId::as_bytes), map);
    } else if booking {
        with_wait(ctx, d, map);
    } else {
        decision(ctx, d, map);
    }
}

/// The five fields and a sixth, `wait_ms` (`MAXWAIT`).
pub fn with_wait(ctx: Ctx<'_>, d: &Decision, map: bool) {
    fields(ctx, d, map, 6);
    if map {
        key(ctx, c"wait_ms");
    }
    reply_i64(ctx, clamp(d.wait_ms));
}

/// The five fields and a sixth, `lease`: a bulk string, or nil.
pub fn with_lease(ctx: Ctx<'_>, d: &Decision, lease: Option<&[u8]>, map: bool) {
    fields(ctx, d, map, 6);
    if map {
        key(ctx, c"lease");
    }
    match lease {
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        Some(id) => unsafe { api!(RedisModule_ReplyWithStringBuffer(ctx.raw(), id.as_ptr().cast(), id.len())) },
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        None => unsafe { api!(RedisModule_ReplyWithNull(ctx.raw())) },
    };
}

/// Replies with one decision.
#[inline]
pub fn decision(ctx: Ctx<'_>, d: &Decision, map: bool) {
    fields(ctx, d, map, 5);
}

/// The five fields of a decision, in a map or array of `len` (more follow).
#[inline]
fn fields(ctx: Ctx<'_>, d: &Decision, map: bool, len: usize) {
    if map {
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        unsafe { api!(RedisModule_ReplyWithMap(ctx.raw(), len as _)) };
        key(ctx, c"allowed");
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        unsafe { api!(RedisModule_ReplyWithBool(ctx.raw(), d.allowed as i32)) };
        key(ctx, c"limit");
        reply_i64(ctx, clamp(d.limit));
        key(ctx, c"remaining");
        reply_i64(ctx, clamp(d.remaining));
        key(ctx, c"retry_after_ms");
        reply_i64(ctx, d.retry_after_ms);
        key(ctx, c"reset_after_ms");
        reply_i64(ctx, clamp(d.reset_after_ms));
    } else {
        reply_array(ctx, len);
        reply_i64(ctx, d.allowed as i64);
        reply_i64(ctx, clamp(d.limit));
        reply_i64(ctx, clamp(d.remaining));
        reply_i64(ctx, d.retry_after_ms);
        reply_i64(ctx, clamp(d.reset_after_ms));
    }
}
