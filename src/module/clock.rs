//! The only place that reads the time: the server's clock for the running
//! command, never std's clock and never a time the client sends.

use redis_module::raw;

use crate::core::time::Nanos;

/// The time the running command runs at, in ns since the Unix epoch, as
/// the server sees it (whole µs or ms: the server keeps no finer time).
///
/// Redis 7.2+ (and Valkey) offer `RedisModule_CachedMicroseconds`: the time
/// cached when the command started, the same for every call inside one
/// MULTI/EXEC or script, as key expiry sees it. Redis 7.0 has only
/// `RedisModule_Milliseconds`, whole milliseconds read at the call.
#[inline]
pub fn now() -> Nanos {
    // SAFETY: reading function pointers from the module API table; both
    // functions take no arguments and only read the server's time.
    unsafe {
        let (cached, millis) = (raw::RedisModule_CachedMicroseconds, raw::RedisModule_Milliseconds);
        if let Some(cached) = cached {
            return Nanos(u64::try_from(cached()).unwrap_or(0).saturating_mul(1_000));
        }
        match millis {
            Some(ms) => Nanos(u64::try_from(ms()).unwrap_or(0).saturating_mul(1_000_000)),
            None => Nanos(0),
        }
    }
}

/// Which clock [`now`] reads, for INFO: `cached_us` (one time per
/// command, MULTI/EXEC and script, in µs) or `ms` (read per call, whole ms).
pub fn source() -> &'static std::ffi::CStr {
    // SAFETY: copying a function pointer out of the module API table.
    let cached = unsafe { raw::RedisModule_CachedMicroseconds };
    if cached.is_some() {
        c"cached_us"
    } else {
        c"ms"
    }
}
