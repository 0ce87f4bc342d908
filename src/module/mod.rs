//! The thin Redis layer: the command table, the load hook and the one entry
//! point every command goes through (which turns any panic into an error
//! reply, so a bug can never take redis-server down).

pub mod args;
pub mod clock;
pub mod command_info;
pub mod commands;
pub mod effect;
pub mod ffi;
pub mod reply;
pub mod stats;
pub mod types;

use std::ffi::CStr;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};
use redis_module::{redis_module, Context, RedisString, Status};

use crate::core::{Gcra, GcraState, SlidingWindow, SlidingWindowState, TokenBucket, TokenBucketState};

use command_info::Info;
use ffi::{api, Argv};

/// The crate version, `major.minor.patch` from Cargo.toml.
const PKG_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The module version as Redis reports it (`MODULE LIST`): major*10000 + minor*100 + patch.
pub const MODULE_VERSION: c_int = module_version(PKG_VERSION.as_bytes());
/// The same, as `INFO rl` shows it.
pub const VERSION_TEXT: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(text) => text,
    Err(_) => panic!("CARGO_PKG_VERSION holds a NUL"),
};

/// `major*10000 + minor*100 + patch` of a `major.minor.patch[-pre]`
/// version, at compile time (a malformed version fails the build).
const fn module_version(v: &[u8]) -> c_int {
    let mut parts = [0 as c_int; 3];
    let (mut part, mut i) = (0, 0);
    while i < v.len() && v[i] != b'-' && v[i] != b'+' {
        match v[i] {
            b'.' if part < 2 => part += 1,
            d @ b'0'..=b'9' => parts[part] = parts[part] * 10 + (d - b'0') as c_int,
            _ => panic!("CARGO_PKG_VERSION is not major.minor.patch"),
        }
        i += 1;
    }
    assert!(part == 2 && parts[1] < 100 && parts[2] < 100, "CARGO_PKG_VERSION is not major.minor.patch");
    parts[0] * 10000 + parts[1] * 100 + parts[2]
}

type Handler = fn(*mut RedisModuleCtx, Argv<'_>);
type RawHandler = unsafe extern "C" fn(*mut RedisModuleCtx, *mut *mut RedisModuleString, c_int) -> c_int;

/// One row of the command table.
struct Command {
    name: &'static CStr,
    handler: RawHandler,
    flags: &'static CStr,
    /// Legacy key positions (what `COMMAND` reports as first/last/step).
    first_key: c_int,
    last_key: c_int,
    key_step: c_int,
    /// Arity, key specs and docs (see `command_info`).
    info: &'static Info,
}

/// Every command the module registers.
const COMMANDS: &[Command] = &[
    Command {
        name: c"RL.GCRA",
        handler: rl_gcra,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: &command_info::GCRA,
    },
    Command {
        name: c"RL.TOKENBUCKET",
        handler: rl_tokenbucket,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: &command_info::TOKENBUCKET,
    },
    Command {
        name: c"RL.SLIDE",
        handler: rl_slide,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: &command_info::SLIDE,
    },
    // O(N), so not fast. The keys follow numkeys, which no first/last/step
    // can express: Redis 7.0 finds them only through the getkeys-api
    // callback (`commands::all::report_keys`), later servers also from the
    // key spec.
    Command {
        name: c"RL.ALL",
        handler: rl_all,
        flags: c"write deny-oom getkeys-api",
        first_key: 0,
        last_key: 0,
        key_step: 0,
        info: &command_info::ALL,
    },
    // redis-cell's command and reply on RL.GCRA's core and data type (see
    // `commands::throttle`).
    Command {
        name: c"CL.THROTTLE",
        handler: cl_throttle,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: &command_info::THROTTLE,
    },
    // Internal: carries a propagated effect (see `effect`). Not deny-oom:
    // a replica must apply what its master did.
    Command {
        name: effect::COMMAND,
        handler: rl_apply,
        flags: c"write fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: &command_info::APPLY,
    },
];

unsafe extern "C" fn rl_gcra(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, commands::run::<Gcra>)
}

unsafe extern "C" fn rl_tokenbucket(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, commands::run::<TokenBucket>)
}

unsafe extern "C" fn rl_slide(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, commands::run::<SlidingWindow>)
}

unsafe extern "C" fn rl_all(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, commands::all::command)
}

unsafe extern "C" fn cl_throttle(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, commands::throttle::command)
}

unsafe extern "C" fn rl_apply(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, effect::apply_command)
}

/// Runs a handler; a panic becomes an error reply instead of crossing into C.
/// Handlers compute everything before they start replying, so a panic
/// leaves no half-written reply behind.
fn entry(ctx: *mut RedisModuleCtx, args: Argv<'_>, handler: Handler) -> c_int {
    if catch_unwind(AssertUnwindSafe(|| handler(ctx, args))).is_err() {
        stats::count(&stats::PANICS);
        ffi::reply_error(ctx, "ERR internal error in redis-rl (the request was not applied; see the server log)");
    }
    raw::REDISMODULE_OK as c_int
}

/// Writes a warning to the server log.
pub fn log_warning(msg: &str) {
    let text = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
    // SAFETY: RedisModule_Log accepts a NULL context; "%s" with one C string.
    unsafe {
        let log = raw::RedisModule_Log;
        if let Some(log) = log {
            log(std::ptr::null_mut(), c"warning".as_ptr(), c"rl: %s".as_ptr(), text.as_ptr());
        }
    }
}

/// Module arguments (`MODULE LOAD path ARG...`, `loadmodule path ARG...`).
#[derive(Default)]
struct LoadOptions {
    /// Registers `RL.PANICTEST`, which panics on purpose, so tests can show
    /// that a panic becomes an error reply and the server stays up.
    panic_test_command: bool,
}

impl LoadOptions {
    fn parse(args: &[RedisString]) -> Result<Self, String> {
        let mut opts = Self::default();
        for arg in args {
            match arg.as_slice() {
                a if a.eq_ignore_ascii_case(b"enable-panic-test-command") => opts.panic_test_command = true,
                other => return Err(format!("unknown module argument {:?}", String::from_utf8_lossy(other))),
            }
        }
        Ok(opts)
    }
}

unsafe extern "C" fn rl_panictest(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
    // SAFETY: the server's own argv for this call.
    entry(ctx, unsafe { Argv::new(argv, argc) }, |_, _| panic!("RL.PANICTEST: a deliberate panic"))
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let ctx = ctx.ctx;
    let load = match LoadOptions::parse(args) {
        Ok(load) => load,
        Err(why) => {
            log_warning(&format!("{why}; the only one is enable-panic-test-command (for tests)"));
            return Status::Err;
        }
    };
    if let Err(missing) = ffi::api_available() {
        log_warning(&format!("this server lacks RedisModule_{missing}; redis-rl needs Redis 7.0 or later"));
        return Status::Err;
    }
    // Panics are caught at every entry point; make them visible in the
    // server log too (the default hook writes only to stderr).
    std::panic::set_hook(Box::new(|info| log_warning(&format!("panic: {info}"))));

    // Handle RDB/RESTORE read errors ourselves (a corrupt payload is an
    // error, not a crash), and signal modified keys only on real writes.
    api!(RedisModule_SetModuleOptions(
        ctx,
        (raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS | raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED) as c_int
    ));

    let registered = types::register::<GcraState>(ctx)
        .and_then(|()| types::register::<TokenBucketState>(ctx))
        .and_then(|()| types::register::<SlidingWindowState>(ctx));
    if let Err(name) = registered {
        log_warning(&format!("could not register data type {name:?}"));
        return Status::Err;
    }

    // Propagate effects only when something consumes them (see `effect`).
    effect::watch_replication(ctx);

    // INFO rl (replaces the crate's default, which shows nothing useful).
    if ffi::has!(RedisModule_RegisterInfoFunc) {
        api!(RedisModule_RegisterInfoFunc(ctx, Some(stats::info)));
    }

    for c in COMMANDS {
        let status = api!(RedisModule_CreateCommand(
            ctx,
            c.name.as_ptr(),
            Some(c.handler),
            c.flags.as_ptr(),
            c.first_key,
            c.last_key,
            c.key_step
        ));
        if status != raw::REDISMODULE_OK as c_int {
            log_warning(&format!("could not register command {:?}", c.name));
            return Status::Err;
        }
        // Not fatal: without it the command still works and its keys are
        // still found (first/last/step, RL.ALL's getkeys-api callback);
        // only COMMAND DOCS and the finer key flags are missing.
        if let Err(why) = command_info::set(ctx, c.name, c.info) {
            log_warning(&format!("command info for {:?} not set: {why}", c.name));
        }
    }
    if load.panic_test_command {
        let status = api!(RedisModule_CreateCommand(
            ctx,
            c"RL.PANICTEST".as_ptr(),
            Some(rl_panictest),
            c"readonly fast".as_ptr(),
            0,
            0,
            0
        ));
        if status != raw::REDISMODULE_OK as c_int {
            return Status::Err;
        }
        log_warning("RL.PANICTEST is enabled (module argument enable-panic-test-command): for tests only");
    }
    Status::Ok
}

redis_module! {
    name: "rl",
    version: MODULE_VERSION,
    // The module's own values are allocated with RedisModule_Alloc (see
    // `types`); Rust's transient allocations stay on the system allocator
    // (counted, see `alloc_count`), so the same crate also links into tests
    // and benchmarks.
    allocator: (crate::alloc_count::CountingSystem, crate::alloc_count::CountingSystem),
    data_types: [],
    init: init,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_version_comes_from_cargo_toml() {
        assert_eq!(module_version(b"0.1.0"), 100);
        assert_eq!(module_version(b"1.2.3"), 10203);
        assert_eq!(module_version(b"12.34.56-rc.1"), 123456);
        assert_eq!(VERSION_TEXT.to_str(), Ok(env!("CARGO_PKG_VERSION")));
        assert_eq!(MODULE_VERSION, module_version(env!("CARGO_PKG_VERSION").as_bytes()));
    }
}
