//! `INFO rl`: the module's version and clock, one line of counters per
//! command that declares one (each kind's from the registry, then those of
//! `commands::TABLE`, in its order), the retry-after histogram of denials,
//! and the module-wide counters (see `stats`).

use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::Ordering::Relaxed;

use redis_module::raw::RedisModuleInfoCtx;

use super::commands;
use super::declaration::Declaration;
use super::entry::guard;
use super::ffi::{api, has};
use super::kinds::{self, EachKind, Kind};
use super::stats;

/// The `INFO rl` callback (replaces the crate's default, which shows
/// nothing useful). Guarded: a panic leaves the section short, no more.
pub unsafe extern "C" fn callback(ctx: *mut RedisModuleInfoCtx, _for_crash_report: c_int) {
    // SAFETY: the context the server passed to this callback.
    guard("the INFO callback", (), || unsafe { section(ctx) });
}

/// # Safety
/// `ctx` is the running INFO callback's context.
unsafe fn section(ctx: *mut RedisModuleInfoCtx) {
    #[cfg(feature = "test-hooks")]
    super::hooks::info_panic_point();
    if !has!(RedisModule_InfoAddSection) || !has!(RedisModule_InfoAddFieldULongLong) {
        return;
    }
    // Field names are prefixed with the module name by the server: `rl_…`.
    // SAFETY: `ctx` is the running INFO callback's; the names and values are static
    // C strings.
    unsafe { api!(RedisModule_InfoAddSection(ctx, c"".as_ptr())) };
    if has!(RedisModule_InfoAddFieldCString) {
        // SAFETY: `ctx` is the running INFO callback's; the names and values are static
        // C strings.
        unsafe {
            api!(RedisModule_InfoAddFieldCString(ctx, c"version".as_ptr(), super::version::VERSION_TEXT.as_ptr()))
        };
        // SAFETY: `ctx` is the running INFO callback's; the names and values are static
        // C strings.
        unsafe { api!(RedisModule_InfoAddFieldCString(ctx, c"clock".as_ptr(), super::clock::source().as_ptr())) };
        // SAFETY: `ctx` is the running INFO callback's; the names and values are static
        // C strings.
        unsafe { api!(RedisModule_InfoAddFieldCString(ctx, c"tzdata".as_ptr(), tzdata().as_ptr())) };
    }
    let mut lines = Lines(ctx);
    kinds::each(&mut lines);
    for c in commands::TABLE {
        lines.declared(c);
    }
    lines.dict(c"retry_after", stats::retry_histogram());
    lines.dict(c"retry_after_cumulative", stats::retry_histogram_cumulative());
    lines.dict(c"wait", super::waiters::stats().into_iter());
    let field = |name: &CStr, v: u64| {
        // SAFETY: `ctx` is the running INFO callback's; the names and values are static
        // C strings.
        unsafe { api!(RedisModule_InfoAddFieldULongLong(ctx, name.as_ptr(), v as _)) };
    };
    field(c"effects_propagated", stats::EFFECTS.load(Relaxed));
    field(c"keys_created", stats::KEYS_CREATED.load(Relaxed));
    field(c"repairs", stats::REPAIRS.load(Relaxed));
    field(c"panics", stats::PANICS.load(Relaxed));
}

/// The IANA tz database release compiled in (`RL.QUOTA`'s zones), e.g. `2026f`.
fn tzdata() -> &'static CStr {
    static TEXT: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| std::ffi::CString::new(crate::core::tzdata_release()).unwrap_or_default())
}

/// One line per command, like `cmdstat_*`: `rl_gcra:calls=..,allowed=..`.
struct Lines(*mut RedisModuleInfoCtx);

impl Lines {
    /// A command's line, if it declares one, then its subcommands'.
    fn declared(&mut self, c: &Declaration) {
        if let Some((name, counters)) = c.info_line {
            self.dict(name, counters.snapshot().into_iter());
        }
        for sub in c.subcommands {
            self.declared(sub);
        }
    }

    /// `rl_<name>:field=value,...`.
    fn dict(&mut self, name: &CStr, fields: impl Iterator<Item = (&'static CStr, u64)>) {
        let ctx = self.0;
        if has!(RedisModule_InfoBeginDictField) && has!(RedisModule_InfoEndDictField) {
            // SAFETY: `ctx` is the running INFO callback's; the names and values are static
            // C strings.
            unsafe { api!(RedisModule_InfoBeginDictField(ctx, name.as_ptr())) };
            for (field, v) in fields {
                // SAFETY: `ctx` is the running INFO callback's; the names and values are static
                // C strings.
                unsafe { api!(RedisModule_InfoAddFieldULongLong(ctx, field.as_ptr(), v as _)) };
            }
            // SAFETY: `ctx` is the running INFO callback's; the names and values are static
            // C strings.
            unsafe { api!(RedisModule_InfoEndDictField(ctx)) };
        }
    }
}

impl EachKind for Lines {
    fn kind<K: Kind>(&mut self) {
        self.declared(&commands::of_kind::<K>());
    }
}
