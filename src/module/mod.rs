//! The thin Redis layer: the command table and the load hook. Every kind's
//! command, data type, INFO line and keywords come from the registry
//! (`kinds`); every entry from the server comes through `entry`.

pub mod acquire;
pub mod args;
pub mod block;
pub mod clock;
pub mod command_info;
pub mod commands;
pub mod data_type;
pub mod effect;
pub mod entry;
pub mod ffi;
pub mod fixed;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
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

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};
use redis_module::{redis_module, Context, RedisString, Status};

use command_info::Info;
use entry::RawHandler;
use ffi::{api, log_warning, Ctx};
use kinds::{EachKind, Kind};
use version::MODULE_VERSION;

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
    info: fn() -> &'static Info,
}

/// The row of a kind's own command.
fn kind_row<K: Kind>() -> Command {
    Command {
        name: K::COMMAND,
        handler: on_kind_command::<K>,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: || K::DOCS,
    }
}

/// Every command that is not one kind's own, registered after those.
const COMMANDS: &[Command] = &[
    // O(N), so not fast. The keys follow numkeys, which no first/last/step
    // can express: Redis 7.0 finds them only through the getkeys-api
    // callback (`commands::all::report_keys`), later servers also from the
    // key spec.
    Command {
        name: c"RL.ALL",
        handler: on_all,
        flags: c"write deny-oom getkeys-api",
        first_key: 0,
        last_key: 0,
        key_step: 0,
        info: all_docs,
    },
    // redis-cell's command and reply on RL.GCRA's core and data type (see
    // `commands::throttle`).
    Command {
        name: c"CL.THROTTLE",
        handler: on_throttle,
        flags: c"write deny-oom fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: || &command_info::THROTTLE,
    },
    // Internal: carries a propagated effect (see `effect`). Not deny-oom:
    // a replica must apply what its master did.
    Command {
        name: stored::APPLY,
        handler: on_apply,
        flags: c"write fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: || &command_info::APPLY,
    },
    // A concurrency limit's leases end or are extended on the key
    // RL.ACQUIRE keeps. Not `deny-oom`: ending a lease frees memory, and a
    // renewal takes none.
    Command {
        name: c"RL.RELEASE",
        handler: on_release,
        flags: c"write fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: || &command_info::RELEASE,
    },
    Command {
        name: c"RL.RENEW",
        handler: on_renew,
        flags: c"write fast",
        first_key: 1,
        last_key: 1,
        key_step: 1,
        info: || &command_info::RENEW,
    },
    // The read-only form of every kind: not `write`, not `deny-oom`, so it
    // runs on read-only replicas, in read-only scripts and under OOM.
    Command {
        name: c"RL.PEEK",
        handler: on_peek,
        flags: c"readonly fast",
        first_key: 2,
        last_key: 2,
        key_step: 1,
        info: || &command_info::PEEK_COMMAND,
    },
];

/// `RL.TOP`: a container (no handler, no flags of its own) whose
/// subcommands carry their own flags, as SLOWLOG's do: reading the board
/// touches no key and runs anywhere, RESET is an admin action. None is
/// `fast` (DENIED and CONSUMED sort up to top-capacity entries).
const TOP: &CStr = c"RL.TOP";
const TOP_SUBCOMMANDS: &[(Command, Option<&CStr>)] = &[
    (top_row(c"DENIED", on_top_denied, c"readonly allow-loading allow-stale", || &command_info::TOP_DENIED), None),
    (
        top_row(c"CONSUMED", on_top_consumed, c"readonly allow-loading allow-stale", || &command_info::TOP_CONSUMED),
        None,
    ),
    (
        top_row(c"RESET", on_top_reset, c"admin allow-loading allow-stale", || &command_info::TOP_RESET),
        Some(command_info::TOP_RESET_TIPS),
    ),
    (top_row(c"HELP", on_top_help, c"allow-loading allow-stale", || &command_info::TOP_HELP), None),
];

/// One RL.TOP subcommand: no key.
const fn top_row(
    name: &'static CStr,
    handler: RawHandler,
    flags: &'static CStr,
    info: fn() -> &'static Info,
) -> Command {
    Command { name, handler, flags, first_key: 0, last_key: 0, key_step: 0, info }
}

/// Registers `RL.TOP` and its subcommands, with their docs.
fn create_top(ctx: Ctx<'_>) -> Result<(), String> {
    let top = names::registered(TOP);
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings.
    let status = unsafe { api!(RedisModule_CreateCommand(ctx.raw(), top.as_ptr(), None, c"".as_ptr(), 0, 0, 0)) };
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings.
    let parent = unsafe { api!(RedisModule_GetCommand(ctx.raw(), top.as_ptr())) };
    if status != raw::REDISMODULE_OK as c_int || parent.is_null() {
        return Err(format!("could not register command {top:?}"));
    }
    if let Err(why) = command_info::set(ctx, top, &command_info::TOP) {
        log_warning(&format!("command info for {top:?} not set: {why}"));
    }
    for (c, tips) in TOP_SUBCOMMANDS {
        // SAFETY: `parent` is the container just made; names and flags are static C
        // strings, the handler ours.
        let status = unsafe {
            api!(RedisModule_CreateSubcommand(
                parent,
                c.name.as_ptr(),
                Some(c.handler),
                c.flags.as_ptr(),
                c.first_key,
                c.last_key,
                c.key_step
            ))
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("could not register subcommand {top:?} {:?}", c.name));
        }
        // The server finds a subcommand as `container|subcommand`.
        let full = CString::new([top.to_bytes(), b"|", c.name.to_bytes()].concat()).unwrap_or_default();
        if let Err(why) = command_info::set_with_tips(ctx, &full, (c.info)(), *tips) {
            log_warning(&format!("command info for {full:?} not set: {why}"));
        }
    }
    Ok(())
}

/// RL.ALL's docs, with one spec form per kind.
fn all_docs() -> &'static Info {
    struct Forms(Vec<(&'static CStr, &'static CStr, &'static Info)>);
    impl EachKind for Forms {
        fn kind<K: Kind>(&mut self) {
            // Once per load: the docs are handed to the server for good.
            let keyword = std::ffi::CString::new(K::KEYWORD).unwrap_or_default();
            self.0.push((K::INFO_NAME, Box::leak(keyword.into_boxed_c_str()), K::DOCS));
        }
    }
    let mut forms = Forms(Vec::new());
    kinds::each(&mut forms);
    command_info::all(&forms.0)
}

unsafe extern "C" fn on_kind_command<K: Kind>(
    ctx: *mut RedisModuleCtx,
    argv: *mut *mut RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: the server's own arguments for this call.
    unsafe { entry::command(ctx, argv, argc, commands::kind_command::<K>) }
}

/// The trampolines of [`COMMANDS`], each through the guarded door.
macro_rules! trampoline {
    ($($name:ident => $handler:path,)*) => {$(
        unsafe extern "C" fn $name(ctx: *mut RedisModuleCtx, argv: *mut *mut RedisModuleString, argc: c_int) -> c_int {
            // SAFETY: the server's own arguments for this call.
            unsafe { entry::command(ctx, argv, argc, $handler) }
        }
    )*};
}
trampoline! {
    on_all => commands::all::command,
    on_throttle => commands::throttle::command,
    on_apply => commands::apply::command,
    on_peek => commands::peek::command,
    on_release => commands::release_renew::release,
    on_renew => commands::release_renew::renew,
    on_top_denied => commands::top::denied,
    on_top_consumed => commands::top::consumed,
    on_top_reset => commands::top::reset,
    on_top_help => commands::top::help,
}
#[cfg(feature = "test-hooks")]
trampoline! {
    on_panictest => hooks::panic_test,
}

/// Registers a command and its docs.
fn create(ctx: Ctx<'_>, c: &Command) -> Result<(), String> {
    if c.name == c"CL.THROTTLE" && !names::cl_throttle() {
        return Ok(());
    }
    let name = names::registered(c.name);
    // SAFETY: the load's context (a `Ctx`); names and flags are static C strings,
    // the handler ours.
    let status = unsafe {
        api!(RedisModule_CreateCommand(
            ctx.raw(),
            name.as_ptr(),
            Some(c.handler),
            c.flags.as_ptr(),
            c.first_key,
            c.last_key,
            c.key_step
        ))
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(format!(
            "could not register command {name:?} (is the name taken? the module arguments command-prefix and \
             cl-throttle rename or leave out the module's commands)"
        ));
    }
    // Not fatal: without it the command still works and its keys are
    // still found (first/last/step, RL.ALL's getkeys-api callback);
    // only COMMAND DOCS and the finer key flags are missing.
    if let Err(why) = command_info::set(ctx, name, (c.info)()) {
        log_warning(&format!("command info for {name:?} not set: {why}"));
    }
    Ok(())
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
                .and_then(|()| create(self.ctx, &kind_row::<K>()));
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
            Some(on_panictest),
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
    let registered =
        kinds.result.and_then(|()| COMMANDS.iter().try_for_each(|c| create(ctx, c))).and_then(|()| create_top(ctx));
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
    // Waiters whose key is deleted, renamed or migrated are answered.
    commands::wait::watch_keys(ctx);

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
