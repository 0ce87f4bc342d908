//! The thin Redis layer: the load hook. Every command is registered from
//! its declaration (`declaration`; the table is `commands::TABLE`, after
//! every kind's from the registry, `kinds`, with its data type); every entry
//! from the server comes through `entry`.

pub mod acquire;
pub mod args;
pub mod block;
pub mod clock;
pub mod command_info;
pub mod commands;
pub mod data_type;
pub mod declaration;
pub mod effect;
pub mod entry;
pub mod ffi;
pub mod fixed;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
#[cfg(test)]
mod grammar_docs;
#[cfg(feature = "test-hooks")]
pub mod hooks;
pub mod info;
pub mod kinds;
pub mod lease_value;
mod load_options;
pub mod log_value;
pub mod names;
pub mod part;
pub mod quota_calendar;
pub mod reply;
mod server_alloc;
pub mod state;
pub mod stats;
pub mod stored;
pub mod top_summary;
pub mod var_value;
pub mod version;
pub mod waiters;
pub mod wire;

use std::ffi::{CStr, CString};
use std::os::raw::c_int;

use redis_module::raw;
use redis_module::{redis_module, Context, RedisString, Status};

use command_info::Info;
use declaration::Declaration;
use ffi::{api, log_warning, Ctx};
use kinds::{EachKind, Kind};
use version::MODULE_VERSION;

/// Registers a declared command (a container with its subcommands) and
/// its docs, unless this load leaves it out.
fn create(ctx: Ctx<'_>, c: &Declaration) -> Result<(), String> {
    if !(c.enabled)() {
        return Ok(());
    }
    let name = names::registered(c.name);
    let info = c.docs.get();
    let (first, last, step) = info.keys.legacy_positions();
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings,
    // the handler ours.
    let status = unsafe {
        api!(RedisModule_CreateCommand(ctx.raw(), name.as_ptr(), c.handler, c.flags.as_ptr(), first, last, step))
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(format!(
            "could not register command {name:?} (is the name taken? the module arguments command-prefix and \
             cl-throttle rename or leave out the module's commands)"
        ));
    }
    set_docs(ctx, name, info);
    if c.subcommands.is_empty() {
        return Ok(());
    }
    // SAFETY: the load's context (a `Ctx`); the name is a static C string.
    let parent = unsafe { api!(RedisModule_GetCommand(ctx.raw(), name.as_ptr())) };
    if parent.is_null() {
        return Err(format!("could not register command {name:?}"));
    }
    for sub in c.subcommands.iter().filter(|sub| (sub.enabled)()) {
        let info = sub.docs.get();
        let (first, last, step) = info.keys.legacy_positions();
        // SAFETY: `parent` is the container just made; names and flags are static C
        // strings, the handler ours.
        let status = unsafe {
            api!(RedisModule_CreateSubcommand(
                parent,
                sub.name.as_ptr(),
                sub.handler,
                sub.flags.as_ptr(),
                first,
                last,
                step
            ))
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("could not register subcommand {name:?} {:?}", sub.name));
        }
        // The server finds a subcommand as `container|subcommand`.
        let full = CString::new([name.to_bytes(), b"|", sub.name.to_bytes()].concat()).unwrap_or_default();
        set_docs(ctx, &full, info);
    }
    Ok(())
}

/// Not fatal: without its docs a command still works and its keys are
/// still found (first/last/step, RL.ALL's getkeys-api callback); only
/// COMMAND DOCS and the finer key flags are missing.
fn set_docs(ctx: Ctx<'_>, name: &CStr, info: &Info) {
    if let Err(why) = command_info::set(ctx, name, info) {
        log_warning(&format!("command info for {name:?} not set: {why}"));
    }
}

/// Registers every kind's data type and command.
struct RegisterKinds<'c> {
    ctx: Ctx<'c>,
    result: Result<(), String>,
}

impl EachKind for RegisterKinds<'_> {
    fn kind<K: Kind>(&mut self) {
        if self.result.is_ok() {
            self.result = data_type::register::<K>(self.ctx)
                .map_err(|name| format!("could not register data type {name:?}"))
                .and_then(|()| create(self.ctx, &commands::of_kind::<K>()));
        }
    }
}

/// Registers `RL.PANICTEST` (see `hooks`).
#[cfg(feature = "test-hooks")]
fn register_panic_test(ctx: Ctx<'_>) -> bool {
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings,
    // the handler ours.
    let status = unsafe {
        api!(RedisModule_CreateCommand(
            ctx.raw(),
            c"RL.PANICTEST".as_ptr(),
            Some(entry::entry_point!(hooks::panic_test)),
            c"readonly fast".as_ptr(),
            0,
            0,
            0
        ))
    };
    if status == raw::REDISMODULE_OK as c_int {
        log_warning("RL.PANICTEST is enabled (module argument enable-panic-test-command): for tests only");
    }
    status == raw::REDISMODULE_OK as c_int
}

/// Without the test hooks, the module argument is refused before this.
#[cfg(not(feature = "test-hooks"))]
fn register_panic_test(_: Ctx<'_>) -> bool {
    false
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    // SAFETY: the context the server passed to the load hook, used only during it.
    unsafe { entry::with_ctx(ctx.ctx, "module load", Status::Err, |ctx| load(ctx, args)) }
}

fn load(ctx: Ctx<'_>, args: &[RedisString]) -> Status {
    let load = match load_options::LoadOptions::parse(args) {
        Ok(load) => load,
        Err(why) => {
            log_warning(&format!("{why}; {}", load_options::LOAD_OPTIONS));
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
    // SAFETY: the load's context (a `Ctx`).
    unsafe {
        api!(RedisModule_SetModuleOptions(
            ctx.raw(),
            (raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS | raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED) as c_int
        ))
    };

    names::configure(&load.command_prefix, load.cl_throttle);
    let mut kinds = RegisterKinds { ctx, result: Ok(()) };
    kinds::each(&mut kinds);
    let registered = kinds.result.and_then(|()| commands::TABLE.iter().try_for_each(|c| create(ctx, c)));
    if let Err(why) = registered {
        log_warning(&why);
        return Status::Err;
    }

    // RL.TOP's summaries, allocated now and never again; their hash is
    // keyed by something no client sees (ASLR and the time of load).
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings.
    let seed =
        (init as *const () as usize as u64) ^ (unsafe { api!(RedisModule_Milliseconds()) } as u64).rotate_left(32);
    if let Err(why) = top_summary::configure(load.top_capacity, load.top_sample, seed) {
        log_warning(&why);
        return Status::Err;
    }

    // Propagate effects only when something consumes them (see `effect`).
    effect::watch_replication(ctx);
    // Waiters whose key is deleted, renamed or migrated are answered: the
    // module subscribes to keyspace events with its first waiter, not now
    // (`commands::wait::watch_keys`).

    // INFO rl.
    if ffi::has!(RedisModule_RegisterInfoFunc) {
        // SAFETY: the load's context (a `Ctx`); names and flags are static C strings.
        unsafe { api!(RedisModule_RegisterInfoFunc(ctx.raw(), Some(info::callback))) };
    }

    if load.panic_test_command && !register_panic_test(ctx) {
        return Status::Err;
    }
    Status::Ok
}

/// Rust's own allocator: the server's once the module API is initialised,
/// the system's without a server (see `server_alloc`).
type Allocator = server_alloc::ServerAlloc;
const ALLOCATOR: Allocator = server_alloc::ServerAlloc;

redis_module! {
    name: "rl",
    version: MODULE_VERSION,
    allocator: (Allocator, ALLOCATOR),
    data_types: [],
    init: init,
}
